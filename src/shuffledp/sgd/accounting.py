"""Central privacy of T rounds of shuffled PLDP-SGD, and calibration of the local budgets.

One round: every user i (one training record) reports ``R_i(clip(grad_i))``, an
``(eps_i, delta_i)``-LDP randomization of its clipped gradient at the current model; the
shuffler permutes the n reports and the server averages them.  Neighbouring datasets differ
by *replacing* one record (the victim).  The model of round t depends on the earlier rounds'
outputs, so the rounds compose *adaptively*.  Three accountings (``method``):

``gdp`` (kind ``approximate``) -- the paper's bound, Chen, Cao, Ge, AAAI 2024 (arXiv
    2312.14388), main theorem: one round is (approximately) ``mu``-GDP with ``mu`` =
    :func:`shuffledp.bounds.gdp_paper.paper_mu` of the round's budget profile; T rounds are
    ``sqrt(T) mu``-GDP by the GDP composition theorem (Dong, Roth, Su, JRSS-B 2022, Cor. 3.3,
    which holds adaptively).  ``eps`` from :func:`shuffledp.gdp.gdp_eps`.  It inherits the
    central-limit approximation of the per-round formula: *not* a guarantee.

``clones`` (kind ``upper``) -- rigorous (docs/theory.md 14).  For a fixed model, the round is
    a shuffled protocol whose output, for a victim in budget tier k, is a post-processing of
    the clone-reduction pair (P, Q) of the ``n_k`` users of that tier
    (:func:`shuffledp.bounds.clones.clone_pair` of ``n_k`` identical users at
    ``(eps_k, delta_k)``, standard clones: Feldman, McMillan, Talwar, FOCS 2021, arXiv
    2012.12803, Theorem 3.2 and Appendix E; the victim's delta as a leak, docs/theory.md 8).
    Only the victim's own tier provides clones (Duchi: spheres of budget-dependent radii;
    d-dimensional Gaussians of different scales barely overlap; other users are post-
    processing); for ``duchi_sphere`` every user does, the pair being binary RR's blanket
    pair of the round (docs/theory.md 15.5, Theorem 8).  (P, Q) dominates the round in the
    sense of trade-off functions for *every* model, so by adaptive f-DP composition (Dong,
    Roth, Su, JRSS-B 2022, Thm 3.2) T rounds are dominated by (P^T, Q^T): the PLD of (P, Q)
    composed T times (dp_accounting ``self_compose``).  The guarantee is the maximum over
    the victim tiers (:func:`victim_tiers`, merged and pruned by Lemma 9); the pair is
    mirror symmetric, so one PLD serves both directions.

    Gaussian randomizer (approximate LDP): the other users of the tier do not dominate the
    victim's mixture exactly; their deficit is at most ``e^{-eps_k} delta_k`` each in total
    variation (Lemma 10), so T rounds add ``(1 + e^eps) T (n_k - 1) e^{-eps_k} delta_k`` to the
    PLD's delta.  Each Gaussian is ``(e, gdp_delta(e, mu_k))``-LDP for every e, and
    :class:`RoundsAccount` keeps the best of several such points.

    Discretisation is *pessimistic*: every loss ``L = log(p/q)`` is rounded **up** to the grid
    ``k * discretization``; what the pair leaves out (``tail_mass``: truncated counts, the
    victim's delta_v, round-off) and the composition's truncated tails go to loss ``+inf``
    (dp_accounting's pessimistic mode): an upper bound, at most ``T * discretization`` above
    in eps.  Gaussian: also capped by the ``local`` guarantee (a minimum of valid bounds).

    Validity: the standard clones, every SGD randomizer, any profile (distinct budgets get no
    amplification with duchi and gaussian: round the profile to a few levels first,
    :meth:`~shuffledp.budgets.BudgetProfile.rounded_down`).  duchi/gaussian with "stronger" raise
    :class:`~shuffledp.errors.ParameterRegimeError` (FMT23 with Errata: randomized response
    only).  No per-round subsampling of users (docs/theory.md 14, "Subsampling").

``local`` (kind ``upper``) -- the local-only reference, no amplification: the victim's own T
    reports, a post-processing-free view of the protocol (the others' reports are
    independent of the victim's record).  Pure eps_0-LDP rounds are each dominated by binary
    randomized response with parameter eps_0 (Kairouz, Oh, Viswanath, ICML 2015, Thm 2.1),
    composed by PLD (T-fold, exact up to pessimistic discretisation); Gaussian rounds are
    exactly ``mu_0``-GDP (``mu_0 = 2C/sigma``), T rounds ``sqrt(T) mu_0``-GDP.  The worst user
    (largest eps_i, delta_i) is the victim.

Calibration (:func:`calibrate_scale`): the per-round profile is ``base.scaled(s)``
(``eps_i = s * base_eps_i``, deltas fixed); the largest ``s`` whose T-round delta at the
target eps is at most the target delta is found by the search shared with the estimation
calibration, :func:`shuffledp.calibration.search_scale` (one :func:`rounds_delta` per
candidate scale; the returned s satisfies the target), and the result is the shared
:class:`shuffledp.calibration.Calibration` record, whose achieved eps is evaluated once.

>>> from shuffledp import BudgetProfile
>>> prof = BudgetProfile.identical(n=1000, eps0=2.0)
>>> e1 = rounds_epsilon(method="gdp", profile=prof, rounds=1, delta=1e-5, randomizer="duchi")
>>> e4 = rounds_epsilon(method="gdp", profile=prof, rounds=4, delta=1e-5, randomizer="duchi")
>>> e1 < e4 < 4 * e1
True
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from shuffledp.accounting import check_discretization as _check_discretization
from shuffledp.accounting import pld_from_pair  # noqa: F401  (re-exported)
from shuffledp.budgets import BudgetProfile
from shuffledp.calibration import Calibration, ScaleCheck, delta_score, search_scale
from shuffledp.errors import ParameterRegimeError, short_repr
from shuffledp.gdp import gdp_delta, gdp_eps
from shuffledp.limits import EPS_LOCAL_MAX
from shuffledp.sgd.randomizers import RANDOMIZERS, GaussianRandomizer, nested_pool_sizes
from shuffledp.validation import (
    check_int,
    check_real,
    check_str,
    check_target_delta,
    check_target_eps,
    describe,
)

__all__ = [
    "SGD_METHODS",
    "METHOD_KIND",
    "Calibration",
    "VictimTier",
    "RoundsAccount",
    "victim_tiers",
    "round_clone_pair",
    "pld_from_pair",
    "rounds_accounts",
    "rounds_pld",
    "rounds_epsilon",
    "rounds_delta",
    "check_applicable",
    "calibrate_scale",
]

SGD_METHODS = ("gdp", "clones", "local")
METHOD_KIND: Mapping[str, str] = {"gdp": "approximate", "clones": "upper", "local": "upper"}
#: Default PLD grid of privacy losses (pessimistic rounding; eps excess <= T * this).
DISCRETIZATION = 1e-4
#: Default truncation of the clone pair (its mass is charged at loss +inf).
PAIR_TOL = 1e-12


def _check_method(method: str) -> None:
    check_str(method, "method")
    if method not in SGD_METHODS:
        raise ValueError(f"method must be one of {list(SGD_METHODS)}, got {short_repr(method)}")


#: Most rounds the accountants take (the workflow's schema says the same): at 10^5 rounds one
#: composed PLD needs more than the 24 GB of the project's reference machine (killed there).
ROUNDS_MAX = 10_000


def _check_rounds(rounds: int) -> int:
    return check_int(rounds, "rounds", low=1, high=ROUNDS_MAX)


def _check_randomizer(randomizer: str) -> type:
    check_str(randomizer, "randomizer")
    try:
        return RANDOMIZERS[randomizer]
    except KeyError:
        raise ValueError(
            f"randomizer must be one of {sorted(RANDOMIZERS)}, got {short_repr(randomizer)}"
        ) from None


def _check_common(profile: object, clone: object, discretization: object) -> None:
    """Arguments every accounting entry takes, checked whatever the method."""
    if not isinstance(profile, BudgetProfile):
        raise TypeError(f"profile must be a BudgetProfile, got {describe(profile)}")
    check_str(clone, "clone")
    if clone not in ("standard", "stronger"):
        raise ValueError(f"clone must be 'standard' or 'stronger', got {short_repr(clone)}")
    _check_discretization(discretization)


def check_applicable(
    *, method: str, profile: BudgetProfile, randomizer: str, clone: str = "standard"
) -> None:
    """Raise :class:`ParameterRegimeError` when ``method`` is not proven for this setting
    (see the module docstring), ``ValueError`` for bad names."""
    _check_method(method)
    _check_common(profile, clone, DISCRETIZATION)
    cls = _check_randomizer(randomizer)
    if cls.pure and not profile.is_pure:
        raise ValueError(
            f"randomizer {randomizer!r} is pure LDP: every delta_i must be 0, got max "
            f"{profile.delta_max:g}"
        )
    if not cls.pure and not profile.delta_min > 0:
        raise ValueError(f"randomizer {randomizer!r} needs every delta_i > 0")
    if method == "clones" and clone != "standard" and not getattr(cls, "cross_tier", False):
        # FMT23's stronger clones need the randomizer to be in their restricted class
        # (randomized response); neither SGD randomizer is.
        raise ParameterRegimeError(
            f"clones ({clone}) is not proven for the {randomizer} randomizer of SGD: the "
            "stronger clones of FMT23 hold for randomized response only; use "
            "clone='standard'"
        )


# --------------------------------------------------------------------------- PLD pieces
class VictimTier(NamedTuple):
    """One per-round dominating pair of the ``clones`` accounting (module docstring).

    ``n`` users run the victim's randomizer at ``(eps, delta)`` (the pair of ``n`` identical
    users; shared noise: all whose scale is at least the victim's, docs/theory.md 14); ``leak``
    the per-round total-variation charge of the Gaussian route (Lemma 10; 0 for Duchi);
    ``tiers`` how many budget tiers of the profile this pair covers (it dominates each);
    ``mu`` the largest Gaussian ``mu_i = 2C / sigma_i`` of those tiers (NaN for pure
    randomizers): every one of them is also ``(e, gdp_delta(e, mu))``-LDP for every e."""

    n: int
    eps: float
    delta: float
    leak: float
    tiers: int
    mu: float = math.nan
    #: Cross-tier randomizers (``duchi_sphere``): the round's profile (every user in the pool)
    #: and the victim's tier in it (-1: the conservative victim); None for one-tier pools.
    pool: BudgetProfile | None = None
    index: int = -1


def victim_tiers(profile: BudgetProfile, randomizer: str) -> list[VictimTier]:
    """The victim pairs whose maximum bounds every user of ``profile`` (docs/theory.md 14).

    Users with different budgets run randomizers whose outputs do not overlap (Duchi: spheres
    of different radii) or overlap too little to clone in high dimension (Gaussian), so a
    victim is amplified by the users of its own budget tier only: the pair of its tier is the
    identical-budget pair of ``n_k`` users at ``(eps_k, delta_k)``.  The pair of ``(n, eps,
    delta)`` is a post-processing of the pair of ``(n', eps', delta')`` when ``n' <= n``,
    ``eps' >= eps``, ``delta' >= delta`` (Lemma 9), so tiers are first merged by user count
    (largest eps and delta of the tiers of one count) and then the dominated ones dropped;
    each kept pair carries the largest ``leak`` and ``mu`` of the tiers it covers.  A profile
    of n distinct budgets thus gives one pair: ``(1, max eps, max delta)``, no amplification.
    """
    cls = _check_randomizer(randomizer)
    if not isinstance(profile, BudgetProfile):
        raise TypeError(f"profile must be a BudgetProfile, got {describe(profile)}")
    t = profile.tiers
    counts = t.counts.astype(np.int64)
    if getattr(cls, "cross_tier", False):  # docs/theory.md 15.5: one pair per tier
        if t.eps.size > CROSS_TIER_PAIRS:
            return [VictimTier(int(profile.n), float(t.eps[-1]), float(t.delta.max()), 0.0,
                               int(t.eps.size), math.nan, profile, -1)]
        return [VictimTier(int(c), float(e), float(d), 0.0, 1, math.nan, profile, k)
                for k, (c, e, d) in enumerate(zip(counts, t.eps, t.delta, strict=True))]
    if cls.pure:
        leak = np.zeros(counts.size)
        mu = np.full(counts.size, math.nan)
    else:  # Lemma 10: (n_k - 1) e^{-eps_k} delta_k per round, rounded up by a relative 1e-12
        mu = GaussianRandomizer(clip=1.0).local_mu(t.eps, t.delta)
        if getattr(cls, "nested_pools", False):  # every user with mu_j <= mu_k (14, shared)
            counts = nested_pool_sizes(mu, counts)
        leak = (counts - 1) * np.exp(-t.eps) * t.delta * (1.0 + 1e-12)
    merged: list[list[float]] = []
    for m in np.unique(counts):
        sel = counts == m
        merged.append([float(m), float(t.eps[sel].max()), float(t.delta[sel].max()),
                       float(leak[sel].max()), float(sel.sum()), float(np.max(mu[sel]))])
    merged.sort(key=lambda r: (-r[1], -r[2], r[0]))
    kept: list[list[float]] = []
    for row in merged:  # by eps descending: a dominator comes before what it dominates
        for k in kept:
            if k[0] <= row[0] and k[1] >= row[1] and k[2] >= row[2]:
                k[3] = max(k[3], row[3])
                k[4] += row[4]
                k[5] = max(k[5], row[5])
                break
        else:
            kept.append(row)
    return [VictimTier(int(r[0]), r[1], r[2], r[3], int(r[4]), r[5]) for r in kept]


def round_clone_pair(
    tier: VictimTier | BudgetProfile, *, clone: str = "standard", tol: float = PAIR_TOL
) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """The per-round dominating pair ``(p, q, tail_mass)`` of one victim tier.

    ``p``, ``q`` are non-negative sub-probability vectors on a common finite support (the
    victim on x^0 / x^1), both missing the mass ``tail_mass`` (the victim's local delta,
    truncation), which the caller charges at privacy loss +inf.  ``n`` >= 2 users:
    :func:`shuffledp.bounds.clones.clone_pair` of ``n`` identical users at ``(eps, delta)``
    (FMT21 Thm 3.2; the victim's delta by Section 8's mixture reading).  A victim alone in
    its tier (``n`` = 1): its own binary randomized response pair at eps (Kairouz, Oh,
    Viswanath 2015) with the leak delta.  A one-tier :class:`BudgetProfile` is accepted too.
    """
    from shuffledp.bounds.clones import clone_pair

    if isinstance(tier, VictimTier) and tier.pool is not None:
        # binary RR's blanket pair of the round (Theorem 8): "stronger" masses are the blanket's
        return clone_pair(tier.pool, clone="stronger", tol=tol,
                          victim_tier=None if tier.index < 0 else tier.index)
    if isinstance(tier, BudgetProfile):
        t = tier.tiers
        if t.eps.size != 1:
            raise ParameterRegimeError(
                "round_clone_pair: a personalized profile has one pair per victim tier; use "
                "victim_tiers(profile, randomizer)"
            )
        tier = VictimTier(int(tier.n), float(t.eps[0]), float(t.delta[0]), 0.0, 1)
    if tier.n >= 2:
        return clone_pair(BudgetProfile.identical(n=tier.n, eps0=tier.eps, delta0=tier.delta),
                          clone=clone, tol=tol)
    p, q = _rr_pair(tier.eps)
    return p * (1.0 - tier.delta), q * (1.0 - tier.delta), tier.delta


#: Cross-tier randomizers: one victim pair per tier up to this many tiers, else the
#: conservative victim alone (valid for every tier).
CROSS_TIER_PAIRS = 64


def _rr_pair(eps0: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    e = 1.0 / (1.0 + math.exp(-eps0))  # e^eps0 / (1 + e^eps0)
    return np.array([e, 1.0 - e]), np.array([1.0 - e, e])


#: Gaussian tiers: the (eps', delta') points of the tier's GDP profile tried, eps' = eps +
#: j mu / 8 for j < GAUSSIAN_POINTS (j = 0: the tier's nominal (eps, delta)).
GAUSSIAN_POINTS = 41
#: Gaussian tiers: certificates are also tried at eps (1 - k / 32), k <= ENVELOPE_STEPS (a
#: certificate at a smaller eps proves the larger one; the leak grows with eps).
ENVELOPE_STEPS = 16


class RoundsAccount:
    """T composed rounds for one victim pair (:class:`VictimTier`).

    Pure randomizers: one pessimistic PLD of the pair, composed T times.  Gaussian: the
    tier's users are ``(e, gdp_delta(e, mu))``-LDP for *every* e, and each such point gives
    a valid pair with its own leak (Lemma 10); the account tries ``e = eps + j mu / 8``,
    j = 0, 1, ..., in order (lazily, caching each composed PLD) while the leak term is more
    than 1 % of the total and the total still drops, and keeps the smallest delta (a minimum
    of valid bounds for the same victim).  For one point the certificate at eps' is
    PLD's delta(eps') + (1 + e^eps') T leak, and delta(eps) is the smallest certificate at
    eps' = eps (1 - k/32), k = 0..16 (any eps' <= eps proves eps); eps(delta) is the
    smallest eps with a certificate <= delta (:meth:`epsilon`).
    """

    def __init__(self, tier: VictimTier, *, rounds: int, clone: str = "standard",
                 discretization: float = DISCRETIZATION, tol: float = PAIR_TOL) -> None:
        self.tier = tier
        self.rounds = _check_rounds(rounds)
        self._settings = (clone, discretization, tol)
        self._points: dict[int, tuple[Any, float]] = {}

    @property
    def gaussian(self) -> bool:
        return not math.isnan(self.tier.mu)

    def point(self, j: int) -> tuple[VictimTier, Any, float]:
        """The j-th (pair, composed PLD, T x leak) of this account."""
        tier = self.tier
        if j > 0:
            e = tier.eps + 0.125 * j * tier.mu
            d = min(float(gdp_delta(e, tier.mu)) * (1.0 + 1e-9) + 1e-300, 1.0)
            tier = tier._replace(eps=e, delta=d,
                                 leak=(tier.n - 1) * math.exp(-e) * d * (1.0 + 1e-12))
        if j not in self._points:
            clone, disc, tol = self._settings
            p, q, tail = round_clone_pair(tier, clone=clone, tol=tol)
            pld = pld_from_pair(p, q, tail, discretization=disc)
            self._points[j] = (pld if self.rounds == 1 else pld.self_compose(self.rounds),
                               self.rounds * tier.leak)
        pld, leak = self._points[j]
        return tier, pld, leak

    @property
    def pld(self):
        """The composed PLD of the nominal point (j = 0)."""
        return self.point(0)[1]

    def _points_in_order(self):
        """j = 0 and, for a Gaussian tier, the further points with eps' <= EPS_LOCAL_MAX."""
        yield 0
        if self.gaussian:
            for j in range(1, GAUSSIAN_POINTS):
                if self.tier.eps + 0.125 * j * self.tier.mu > EPS_LOCAL_MAX:
                    return
                yield j

    def delta(self, eps: float) -> float:
        best = prev = math.inf
        for j in self._points_in_order():
            _, pld, leak = self.point(j)
            total, extra = _certificate(pld, leak, eps)
            best = min(best, total)
            if extra <= 0.01 * total or total > prev:
                break
            prev = total
        return best

    def epsilon(self, delta: float) -> float:
        """Smallest certified eps at ``delta`` (inf when none) over the points tried."""
        best = prev = math.inf
        for j in self._points_in_order():
            _, pld, leak = self.point(j)
            e = _point_epsilon(pld, leak, delta)
            best = min(best, e)
            if leak == 0 or _charge(e, leak) <= 0.01 * delta:
                break
            if e > prev:
                break
            prev = e
        return best


def _charge(eps: float, leak: float) -> float:
    """(1 + e^eps) leak, the total-variation charge of Lemma 10 (inf on overflow)."""
    if leak <= 0:
        return 0.0
    if not math.isfinite(eps):
        return math.inf
    return (1.0 + math.exp(eps)) * leak if eps < 700.0 else math.inf


def _certificate(pld: Any, leak: float, eps: float) -> tuple[float, float]:
    """(smallest certificate at eps' = eps (1 - k/32), k <= ENVELOPE_STEPS, its leak term);
    without leak the PLD's delta at eps itself (non-increasing in eps)."""
    best, best_extra = math.inf, 0.0
    for k in range(ENVELOPE_STEPS + 1 if leak > 0 else 1):
        e = eps * (1.0 - k / 32.0)
        extra = _charge(e, leak)
        total = min(float(pld.get_delta_for_epsilon(e)) + extra, 1.0)
        if total < best:
            best, best_extra = total, extra
        elif k > 0 and total > best:
            break
    return best, best_extra


def _point_epsilon(pld: Any, leak: float, delta: float) -> float:
    """Smallest eps with pld's delta(eps) + (1 + e^eps) leak <= delta (inf when none): the
    fixed point of eps -> pld's eps at ``delta - (1 + e^eps) leak`` from 0; every iterate is
    at most the smallest solution (the map is non-decreasing), then checked."""
    if leak == 0:
        return max(float(pld.get_epsilon_for_delta(delta)), 0.0)
    eps = 0.0
    for _ in range(200):
        room = delta - _charge(eps, leak)
        if room <= 0:
            return math.inf
        nxt = max(float(pld.get_epsilon_for_delta(room)), 0.0)
        if nxt <= eps * (1.0 + 1e-9) + 1e-12:
            cand = eps * (1.0 + 1e-9) + 1e-12
            if float(pld.get_delta_for_epsilon(cand)) + _charge(cand, leak) <= delta:
                return cand
            nxt = cand * (1.0 + 1e-6) + 1e-9
        eps = nxt
    return math.inf


def rounds_accounts(
    *,
    profile: BudgetProfile,
    rounds: int,
    randomizer: str,
    clone: str = "standard",
    discretization: float = DISCRETIZATION,
    tol: float = PAIR_TOL,
) -> list[RoundsAccount]:
    """The ``clones`` accounting of T rounds: one :class:`RoundsAccount` per victim pair of
    :func:`victim_tiers`; the guarantee is the maximum of their deltas."""
    t = _check_rounds(rounds)
    check_applicable(method="clones", profile=profile, randomizer=randomizer, clone=clone)
    return [RoundsAccount(tier, rounds=t, clone=clone, discretization=discretization, tol=tol)
            for tier in victim_tiers(profile, randomizer)]


def rounds_pld(
    *,
    method: str,
    profile: BudgetProfile,
    rounds: int,
    randomizer: str,
    clone: str = "standard",
    discretization: float = DISCRETIZATION,
    tol: float = PAIR_TOL,
):
    """The T-fold composed pessimistic PLD for pure ``local``, or for ``clones`` when the
    profile has one victim pair and no Gaussian leak (otherwise use
    :func:`rounds_accounts`)."""
    t = _check_rounds(rounds)
    check_applicable(method=method, profile=profile, randomizer=randomizer, clone=clone)
    if method == "clones":
        acc = rounds_accounts(profile=profile, rounds=t, randomizer=randomizer, clone=clone,
                              discretization=discretization, tol=tol)
        if len(acc) != 1 or acc[0].gaussian:
            raise ParameterRegimeError(
                "rounds_pld: this setting is a maximum over victim pairs or has a leak term; "
                "use rounds_accounts"
            )
        return acc[0].pld
    if method == "local" and RANDOMIZERS[randomizer].pure:
        p, q = _rr_pair(profile.eps_max)
        pld = pld_from_pair(p, q, 0.0, discretization=discretization)
        return pld if t == 1 else pld.self_compose(t)
    raise ValueError(f"no PLD for method {method!r} with randomizer {randomizer!r}")


def _total_mu(method: str, profile: BudgetProfile, rounds: int) -> float:
    from shuffledp.bounds.gdp_paper import paper_mu

    if method == "gdp":
        mu = paper_mu(profile)
    else:  # local, Gaussian: the worst user's own exact GDP
        t = profile.tiers
        mu = float(np.max(GaussianRandomizer(clip=1.0).local_mu(t.eps, t.delta)))
    return math.sqrt(rounds) * mu


def _with_local(method: str, randomizer: str) -> bool:
    """``clones`` with the Gaussian randomizer is also bounded by the local-only guarantee
    (each victim's own T reports are ``sqrt(T) mu``-GDP; the others' reports are independent
    of its record), which wins when the tiers are small.  For the pure Duchi randomizer
    ``clones`` is never above ``local`` (Lemma 9 with n' = 1), so it is not evaluated."""
    return method == "clones" and not RANDOMIZERS[randomizer].pure


def _uses_gdp(method: str, randomizer: str) -> bool:
    return method == "gdp" or (method == "local" and not RANDOMIZERS[randomizer].pure)


def _accountant(method, profile, rounds, randomizer, clone, discretization):
    """The T-round accountant shared by :func:`rounds_epsilon` and :func:`rounds_delta`:
    ``(mu, None)`` for GDP accounting, ``(None, accounts)`` for composed PLDs."""
    t = _check_rounds(rounds)
    _check_common(profile, clone, discretization)
    check_applicable(method=method, profile=profile, randomizer=randomizer, clone=clone)
    if _uses_gdp(method, randomizer):
        return _total_mu(method, profile, t), None
    if method == "clones":
        return None, rounds_accounts(profile=profile, rounds=t, randomizer=randomizer,
                                     clone=clone, discretization=discretization)
    pld = rounds_pld(method=method, profile=profile, rounds=t, randomizer=randomizer,
                     clone=clone, discretization=discretization)
    return None, [_Fixed(pld)]


class _Fixed(NamedTuple):
    """A composed PLD without leak (the pure local-only reference)."""

    pld: Any

    def delta(self, eps: float) -> float:
        return min(float(self.pld.get_delta_for_epsilon(eps)), 1.0)

    def epsilon(self, delta: float) -> float:
        return max(float(self.pld.get_epsilon_for_delta(delta)), 0.0)


def rounds_epsilon(
    *,
    method: str,
    profile: BudgetProfile,
    rounds: int,
    delta: float,
    randomizer: str,
    clone: str = "standard",
    discretization: float = DISCRETIZATION,
) -> float:
    """Central eps at ``delta`` after ``rounds`` rounds with per-round budgets ``profile``.

    ``clones``/``local`` are upper bounds (pessimistic PLD; the maximum over victim pairs);
    ``gdp`` is the approximation.  ``inf`` when no eps certifies ``delta`` (the Gaussian
    leak alone exceeds it).
    """
    delta = check_target_delta(delta)
    mu, accounts = _accountant(method, profile, rounds, randomizer, clone, discretization)
    if accounts is None:
        return gdp_eps(delta, mu, side="upper")
    eps = max(a.epsilon(delta) for a in accounts)
    if _with_local(method, randomizer):  # the local-only guarantee holds too
        eps = min(eps, gdp_eps(delta, _total_mu("local", profile, rounds), side="upper"))
    elif method == "clones" and not math.isfinite(eps):
        # many rounds: the composed PLD's truncated tails (its infinity mass) pass delta, but
        # the local-only guarantee holds too (each victim's own reports; docstring above)
        eps = min(eps, _Fixed(_local_pld(profile, rounds, randomizer, clone,
                                         discretization)).epsilon(delta))
    return eps


def rounds_delta(
    *,
    method: str,
    profile: BudgetProfile,
    rounds: int,
    eps: float,
    randomizer: str,
    clone: str = "standard",
    discretization: float = DISCRETIZATION,
) -> float:
    """Central delta at ``eps`` after ``rounds`` rounds (same conventions as above)."""
    eps = check_target_eps(eps)
    mu, accounts = _accountant(method, profile, rounds, randomizer, clone, discretization)
    if accounts is None:
        return float(gdp_delta(eps, mu))
    delta = max(a.delta(eps) for a in accounts)
    if _with_local(method, randomizer):  # the local-only guarantee holds too
        delta = min(delta, float(gdp_delta(eps, _total_mu("local", profile, rounds))))
    elif method == "clones" and delta > FALLBACK_DELTA:  # as in rounds_epsilon
        delta = min(delta, _Fixed(_local_pld(profile, rounds, randomizer, clone,
                                             discretization)).delta(eps))
    return delta


#: Above this delta the clones accountant (pure randomizers) also evaluates the local-only
#: guarantee and keeps the smaller: with many rounds the composed clones PLD's truncated
#: tails can pass any target (delta 0.95 at 10^4 rounds of local eps 0.001, where the local
#: guarantee gives 1e-15); below it the clones value is the one a calibration needs.
FALLBACK_DELTA = 1e-3


def _local_pld(profile, rounds, randomizer, clone, discretization):
    """The composed local-only PLD (pure randomizers): every victim's own T reports."""
    return rounds_pld(method="local", profile=profile, rounds=rounds, randomizer=randomizer,
                      clone=clone, discretization=discretization)


# --------------------------------------------------------------------------- calibration
def check_search(*, method, base, rounds, delta, randomizer, clone, discretization, rtol,
                 scale_min, eps_local_max) -> tuple[int, float, float, float, float]:
    """Checked search arguments ``(rounds, delta, rtol, scale_min, eps_local_max / max eps_i)``
    (:func:`calibrate_scale`, :func:`shuffledp.sgd.tiers.calibrate_tiers`)."""
    t = _check_rounds(rounds)
    delta = check_target_delta(delta)
    _check_common(base, clone, discretization)
    rtol = check_real(rtol, "rtol", low=0.0, high=0.5, low_open=True)
    scale_min = check_real(scale_min, "scale_min", low=0.0, low_open=True)
    eps_local_max = check_real(eps_local_max, "eps_local_max", low=0.0, high=EPS_LOCAL_MAX,
                               low_open=True)
    if base.eps_max <= 0:
        raise ValueError("base profile must have some eps_i > 0")
    check_applicable(method=method, profile=base, randomizer=randomizer, clone=clone)
    s_max = eps_local_max / base.eps_max
    if scale_min > s_max:
        raise ValueError(
            f"scale_min must be <= eps_local_max / max eps_i = {s_max:g}, got {scale_min!r}"
        )
    return t, delta, rtol, scale_min, s_max


def calibrate_scale(
    *,
    method: str,
    base: BudgetProfile,
    rounds: int,
    eps: float,
    delta: float,
    randomizer: str,
    clone: str = "standard",
    discretization: float = DISCRETIZATION,
    rtol: float = 1e-3,
    scale_min: float = 1e-3,
    eps_local_max: float = 30.0,
) -> Calibration:
    """Largest common factor s on ``base`` whose T-round delta at ``eps`` is <= ``delta``.

    The shared search of :func:`shuffledp.calibration.search_scale` (one
    :func:`rounds_delta` per candidate scale, no eps inversion; relative tolerance ``rtol`` on
    s; the returned scale satisfies the target) on ``[scale_min, eps_local_max /
    max(base.eps)]``, starting at ``min(1, s_max)``.  Returns the shared
    :class:`~shuffledp.calibration.Calibration` record: ``bound_eps`` (alias ``eps_achieved``)
    is the T-round eps at ``delta`` there, computed once, ``rounds`` = T, ``capped`` when even
    the upper end of the range meets the target.  Raises :class:`ParameterRegimeError` when
    even ``scale_min`` misses the target.

    >>> from shuffledp import BudgetProfile
    >>> base = BudgetProfile.identical(n=500, eps0=1.0)
    >>> cal = calibrate_scale(method="gdp", base=base, rounds=10, eps=2.0, delta=1e-5,
    ...                       randomizer="duchi")
    >>> cal.eps_achieved <= 2.0, round(cal.scale, 1), cal.bound_delta <= 1e-5
    (True, 1.7, True)
    """
    eps = check_real(eps, "eps", low=0.0, low_open=True)
    t, delta, rtol, scale_min, s_max = check_search(
        method=method, base=base, rounds=rounds, delta=delta, randomizer=randomizer,
        clone=clone, discretization=discretization, rtol=rtol, scale_min=scale_min,
        eps_local_max=eps_local_max)
    settings = {"randomizer": randomizer, "clone": clone, "discretization": discretization}

    def check(s: float) -> ScaleCheck:
        try:
            d = rounds_delta(method=method, profile=base.scaled(s), rounds=t, eps=eps,
                             **settings)
        except ParameterRegimeError as err:
            return ScaleCheck(False, -math.inf, math.inf, str(err))
        return ScaleCheck(d <= delta, delta_score(d, delta), d)

    res = search_scale(check, start=min(1.0, s_max), s_min=scale_min, s_max=s_max, rtol=rtol)
    if res.lo is None:
        last = res.checks[min(res.checks)]
        raise ParameterRegimeError(
            f"{method}: central eps = {eps:g} at delta = {delta:g} after {t} rounds is not "
            f"reachable with local eps >= {scale_min * base.eps_max:g} (delta there "
            f"{last.value:.4g}{'; ' + last.reason if last.reason else ''})"
        )
    s = res.lo
    profile = base.scaled(s)
    # the delta certificate at eps proves eps(delta) <= eps (calibration module docstring)
    achieved = min(rounds_epsilon(method=method, profile=profile, rounds=t, delta=delta,
                                  **settings), eps)
    return Calibration(
        method=method,
        kind=METHOD_KIND[method],
        target_eps=float(eps),
        delta=float(delta),
        scale=float(s),
        profile=profile,
        bound_eps=float(achieved),
        capped=res.capped,
        evaluations=res.evaluations,
        options=settings,
        rounds=t,
        bound_delta=float(res.checks[s].value),
    )
