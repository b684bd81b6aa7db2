"""Mechanism-aware clone reduction for personalized budgets: the ``mechanism`` option of
``clones``.

The generic ``clones`` gives user j one clone mass r_j for every victim and takes the
conservative victim of Theorem 2 (docs/theory.md, Section 4).  That is valid only when every
user dominates r_j against every other user as victim, which fails for most randomizers with
personalized budgets (Laplace, piecewise, k-RR, Gaussian: a user with a larger budget has
lighter tails than a victim with a smaller one).  Here the masses are the randomizer's own,
*per victim*:

    m_j(v) = (1 - delta_j) r_F(eps_v, eps_j)              (pure families, Section 6)
    m_j(v) = (1 - delta'_v) e^{-eps_v} rho_T(sigma_v, sigma_j) min(1, (1 - delta_j)/M_j)
                                                          (Gaussian, Section 8, Lemma 6, 7)

and the bound is the maximum over victims.  Victims are handled in *groups* (contiguous ranges
of budget tiers): for a group the victim's budget is the group's largest eps (and delta), the
masses are lower bounds over every victim of the group, and one user of the group with the
largest mass is left out of the pool (docs/theory.md, "Mechanism-aware clones", Theorem 3).
Every group bound is at least the bound of each of its victims, so the maximum over groups is
a valid bound for every victim.  Groups are equal-count ranges of the tiers, refined
geometrically at both ends (where the worst victims sit: the smallest budgets have the fewest
clones, the largest the strongest reports).

Gaussian victims: the tail cut.  The victim's pure part can be cut to |y| <= T, the mass
beyond T (at most ``eta``) joining the victim's delta (Lemma 7).  Users with less noise then
dominate a positive mass.  Every T is valid; for each group the code tries T = infinity and a
grid of eta (quarter decades from 1e-2 to 1e-16, a discrete ternary search) and keeps the
smallest delta.

Code names: ``eps_v``, ``delta_v`` the group's victim; ``sigma`` the users' noise scales
(:func:`shuffledp.mechanisms.mean.analytic_gaussian_sigma`, sensitivity 2, inputs [-1, 1],
exactly as :class:`~shuffledp.mechanisms.mean.GaussianMechanism`); ``eta`` the victim's cut
tail; ``kappa`` = min(1, (1 - delta_j) / M_j), M_j = 2 Phi(-1/sigma_j) the mass of
inf_x N(x, sigma_j^2).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special

from shuffledp.caching import register_mapping
from shuffledp.errors import ParameterRegimeError
from shuffledp.params import BudgetProfile
from shuffledp.randomizers import MAX_DISTINCT_GENERAL, Randomizer, get_randomizer

__all__ = [
    "AWARE_FAMILIES",
    "VICTIM_GROUPS",
    "TAIL_GRID",
    "CUT_FAMILIES",
    "VictimGroup",
    "victim_groups",
    "group_pool",
    "aware_delta",
    "gaussian_mixture_excess",
    "gaussian_sigmas",
    "clear_cache",
]

#: Families the mechanism-aware reduction handles (every family of shuffledp.randomizers
#: except the L2 Gaussian of SGD, whose mixture form is not established).
AWARE_FAMILIES = ("binary_rr", "krr", "duchi", "laplace", "piecewise", "oue", "duchi_l2",
                  "gaussian", "any")
#: Families whose victims' tails can be cut (the cut mass joins the victim's delta).
CUT_FAMILIES = ("gaussian", "laplace")
#: Default number of equal-count victim groups (before the refinement at both ends).
VICTIM_GROUPS = 16
#: Fractions of the users at which the end groups are refined (and their mirror images).
_END_FRACTIONS = (2.0**-10, 2.0**-8, 2.0**-6, 2.0**-4)
#: Candidate cut tails eta of a victim (quarter decades, 1e-2 .. 1e-16).
TAIL_GRID = 10.0 ** (-np.arange(8, 65) / 4.0)
#: Masses are multiplied by 1 - 1e-13 (rounding of their closed forms, always downwards).
_MASS_SHRINK = 1.0 - 1e-13
#: Smallest mass kept in a pool (smaller ones are rounded down to 0).
_MIN_MASS = 1e-200
#: Share of the expected clone count that may be dropped from the smallest masses (at most
#: one expected clone; rounding down, conservative).
_DROP_SHARE = 1e-3
#: Smallest complement 1 - m used.
_MIN_COMPLEMENT = 1e-200


# --------------------------------------------------------------------------- Gaussian pieces
def gaussian_sigmas(eps: NDArray[np.float64], delta: NDArray[np.float64]) -> NDArray[np.float64]:
    """sigma_i of :class:`~shuffledp.mechanisms.mean.GaussianMechanism` for (eps_i, delta_i);
    every delta_i must be > 0."""
    from shuffledp.mechanisms.mean import analytic_gaussian_sigma

    if np.any(np.asarray(delta) <= 0.0):
        raise ValueError("the gaussian randomizer needs delta_i > 0 for every user, got "
                         f"delta_i = {float(np.min(delta))!r}")
    return np.asarray(analytic_gaussian_sigma(eps, delta), dtype=np.float64)


def gaussian_mixture_excess(x: float, eps: float, sigma: float) -> float:
    """``integral (N(x, sigma^2)(y) - e^eps m(y))^+ dy`` with ``m(y) = phi_sigma(|y| + 1)`` the
    infimum of the Gaussian mechanism's densities over inputs in [-1, 1] (Lemma 5's criterion,
    docs/theory.md Section 8), in closed form: ``g(x) + g(-x)`` with
    ``g(s) = Phi((s - t_s)/sigma) - e^eps Phi(-(t_s + 1)/sigma)``,
    ``t_s = max(0, sigma^2 eps / (1 + s) - (1 - s)/2)`` (``g(-1) = 0``).

    Lemma 6 proves the maximum over x is at x = +-1, where it equals the analytic Gaussian
    delta (Balle & Wang 2018, Thm 8) with sensitivity 2.

    >>> from shuffledp.mechanisms.mean import gaussian_delta
    >>> abs(gaussian_mixture_excess(1.0, 1.0, 3.0) - float(gaussian_delta(1.0, 3.0))) < 1e-15
    True
    """
    def g(s: float) -> float:
        if s <= -1.0:
            return 0.0
        t = max(0.0, sigma * sigma * eps / (1.0 + s) - (1.0 - s) / 2.0)
        return float(special.ndtr((s - t) / sigma)
                     - math.exp(eps) * special.ndtr(-(t + 1.0) / sigma))

    return max(0.0, g(x)) + max(0.0, g(-x))


def _log_h(s: NDArray[np.float64] | float, u: float,
           sig_j: NDArray[np.float64]) -> NDArray[np.float64]:
    """log of phi_{sig_j}(u) / phi_s(u) = log(s / sig_j) + u^2 (1/s^2 - 1/sig_j^2) / 2."""
    return np.log(s) - np.log(sig_j) + 0.5 * u * u * (1.0 / np.square(s) - 1.0 / np.square(sig_j))


def _gaussian_log_rho(sig_lo: float, sig_hi: float, cut: float,
                      sig_j: NDArray[np.float64]) -> NDArray[np.float64]:
    """log of min over victims sigma_v in [sig_lo, sig_hi] and |y| <= cut of
    m_j(y) / m_v(y) = phi_{sig_j}(|y|+1) / phi_{sigma_v}(|y|+1) (Lemma 7): the exponent is
    linear in u^2 = (|y|+1)^2, so the minimum over u is at u = 1 or u = cut + 1, and for fixed
    u, log s + u^2 / (2 s^2) is smallest at s = u (clipped to the interval)."""
    a = _log_h(min(max(1.0, sig_lo), sig_hi), 1.0, sig_j)
    if math.isinf(cut):  # u -> infinity: 0 unless sigma_j >= every sigma_v
        return np.where(sig_j >= sig_hi, np.minimum(a, 0.0), -np.inf)
    u = cut + 1.0
    b = _log_h(min(max(u, sig_lo), sig_hi), u, sig_j)
    return np.minimum(np.minimum(a, b), 0.0)


def _tail_cut(eta: float, sig_hi: float) -> tuple[float, float]:
    """(T, tail): T = 1 + sigma isf(eta / 2) and the victim's largest mass beyond T,
    sup_{|x| <= 1} Pr[|N(x, sigma^2)| > T] = Phi(-(T-1)/sigma) + Phi(-(T+1)/sigma) (at x = +-1,
    and increasing in sigma), which is at most eta."""
    if eta <= 0.0:
        return math.inf, 0.0
    z = -float(special.ndtri(eta / 2.0))
    cut = 1.0 + sig_hi * z
    tail = float(special.ndtr(-(cut - 1.0) / sig_hi) + special.ndtr(-(cut + 1.0) / sig_hi))
    return cut, tail


# --------------------------------------------------------------------------- Laplace pieces
def _laplace_tail_cut(eta: float, eps_lo: float) -> tuple[float, float]:
    """(T, tail) for Laplace victims with budgets >= eps_lo: sup over |x| <= 1 of
    Pr[|x + Lap(2/eps)| > T] = (1 + e^{-eps}) e^{-(T-1) eps / 2} / 2 (at x = +-1, largest at
    the smallest eps); T solves tail = eta (T >= 1)."""
    if eta <= 0.0:
        return math.inf, 0.0
    if eps_lo <= 0.0:
        return math.inf, 0.0
    a = math.log1p(math.exp(-eps_lo)) - math.log(2.0 * eta)
    cut = 1.0 + 2.0 * max(a, 0.0) / eps_lo
    tail = 0.5 * (1.0 + math.exp(-eps_lo)) * math.exp(-(cut - 1.0) * eps_lo / 2.0)
    return cut, min(tail, 1.0)


def _laplace_log_mass(eps_lo: float, eps_hi: float, cut: float,
                      eps_j: NDArray[np.float64]) -> NDArray[np.float64]:
    """log of min over victims eps_v in [eps_lo, eps_hi] and |y| <= cut of
    inf_x R_j(x)(y) / sup_x R_v(x)(y) = (eps_j/eps_v) exp(-eps_j(|y|+1)/2 + eps_v(|y|-1)^+/2)
    (Laplace on [-1, 1], scale 2/eps; Lemma 8): the exponent is piecewise linear in |y|, so the
    minimum is at |y| = 1 or |y| = cut; in eps_v, -log eps_v - eps_j is smallest at eps_hi and
    -log eps_v + eps_v (cut-1)/2 at eps_v = 2/(cut-1) clipped to the group."""
    with np.errstate(divide="ignore"):
        log_j = np.log(eps_j)
    a = log_j - math.log(eps_hi) - eps_j
    if math.isinf(cut):
        return np.where(eps_j <= eps_lo, a, -np.inf)
    v = min(max(2.0 / (cut - 1.0), eps_lo), eps_hi)
    b = log_j - math.log(v) - eps_j * (cut + 1.0) / 2.0 + v * (cut - 1.0) / 2.0
    return np.minimum(np.minimum(a, b), 0.0)


# --------------------------------------------------------------------------- tiers and groups
@dataclass(frozen=True)
class _Tiers:
    """Distinct users (eps, delta) with multiplicities, in victim order (Gaussian: sigma
    decreasing; others: eps increasing), plus the Gaussian scales."""

    eps: NDArray[np.float64]
    delta: NDArray[np.float64]
    counts: NDArray[np.int64]
    sigma: NDArray[np.float64] | None
    log_kappa: NDArray[np.float64] | None


@dataclass(frozen=True)
class VictimGroup:
    """A contiguous range ``[start, stop)`` of tiers treated as one victim: its largest eps and
    delta, smallest eps, and (Gaussian) the range of sigma."""

    start: int
    stop: int
    users: int
    eps_lo: float
    eps_hi: float
    delta_hi: float
    sigma_lo: float = math.nan
    sigma_hi: float = math.nan


def _tiers(profile: BudgetProfile, family: Randomizer) -> _Tiers:
    if profile.is_identical:
        eps, delta = profile.eps[:1].copy(), profile.delta[:1].copy()
        counts = np.array([profile.n], dtype=np.int64)
    else:
        order = np.lexsort((profile.delta, profile.eps))
        e, d = profile.eps[order], profile.delta[order]
        new = np.ones(e.size, dtype=bool)
        new[1:] = (e[1:] != e[:-1]) | (d[1:] != d[:-1])
        first = np.flatnonzero(new)
        eps, delta = e[first], d[first]
        counts = np.diff(np.append(first, e.size)).astype(np.int64)
    sigma = log_kappa = None
    if family.family == "gaussian":
        sigma = gaussian_sigmas(eps, delta)
        order = np.argsort(-sigma, kind="stable")
        eps, delta, counts, sigma = eps[order], delta[order], counts[order], sigma[order]
        mass = 2.0 * special.ndtr(-1.0 / sigma)  # M_j = integral of inf_x N(x, sigma_j^2)
        log_kappa = np.minimum(0.0, np.log1p(-delta) - np.log(mass))
    return _Tiers(eps, delta, counts, sigma, log_kappa)


def _edges(counts: NDArray[np.int64], groups: int) -> NDArray[np.int64]:
    cum = np.cumsum(counts)
    total = int(cum[-1])
    fr = set(k / groups for k in range(1, groups))
    for f in _END_FRACTIONS:
        fr.update((f, 1.0 - f))
    cuts = np.searchsorted(cum, np.array(sorted(fr)) * total, side="left") + 1
    cuts = cuts[(cuts > 0) & (cuts < counts.size)]
    return np.unique(np.concatenate([[0], cuts, [counts.size]])).astype(np.int64)


def victim_groups(profile: BudgetProfile, family: Any, *,
                  groups: int = VICTIM_GROUPS) -> list[VictimGroup]:
    """The victim groups of ``profile`` for ``family`` (see the module docstring); the plan
    is the cached one of :func:`aware_delta`."""
    return list(_plan_of(profile, get_randomizer(family), groups)[1])


def _plan(profile: BudgetProfile, family: Randomizer,
          groups: int) -> tuple[_Tiers, tuple[VictimGroup, ...]]:
    tiers = _tiers(profile, family)
    if family.victim_order == "constant":  # the masses do not depend on the victim
        edges = np.array([0, tiers.counts.size], dtype=np.int64)
    else:
        edges = _edges(tiers.counts, groups)
    out = []
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        a, b = int(a), int(b)
        g = VictimGroup(
            a, b, int(tiers.counts[a:b].sum()), float(tiers.eps[a:b].min()),
            float(tiers.eps[a:b].max()), float(tiers.delta[a:b].max()),
            float(tiers.sigma[a:b].min()) if tiers.sigma is not None else math.nan,
            float(tiers.sigma[a:b].max()) if tiers.sigma is not None else math.nan,
        )
        out.append(g)
    return tiers, tuple(out)


# --------------------------------------------------------------------------- pool of a group
def _pure_masses(family: Randomizer, tiers: _Tiers, g: VictimGroup) -> NDArray[np.float64]:
    if family.victim_order != "general":
        r = family.group_clone_mass(g.eps_lo, g.eps_hi, tiers.eps)
    else:  # not monotone (OUE): every distinct victim budget of the group
        victims = np.unique(tiers.eps[g.start:g.stop])
        if victims.size * tiers.eps.size > MAX_DISTINCT_GENERAL**2:
            raise ParameterRegimeError(
                f"clones (mechanism {family.spec}): the clone mass is not monotone in the "
                f"victim's budget and the profile has {tiers.eps.size} distinct budgets; "
                "group the budgets into tiers")
        r = family.clone_mass(victims[:, None], tiers.eps[None, :]).min(axis=0)
    return (1.0 - tiers.delta) * r


def group_pool(profile: BudgetProfile, family: Any, group: VictimGroup, *, eta: float = 0.0,
               groups: int = VICTIM_GROUPS) -> tuple[float, float, NDArray[np.float64],
                                                     NDArray[np.int64], NDArray[np.float64]]:
    """``(eps_v, delta_v, masses, counts, complements)`` of one victim group: the pool is
    every tier with its multiplicity, one user of the group with the largest mass left out.
    ``eta`` > 0 cuts a Gaussian victim's tails (Lemma 7)."""
    fam = get_randomizer(family)
    tiers, _ = _plan_of(profile, fam, groups)
    return _group_pool(fam, tiers, group, eta)


def _group_pool(family: Randomizer, tiers: _Tiers, g: VictimGroup, eta: float):
    delta_v = g.delta_hi
    if family.family == "gaussian":
        assert tiers.sigma is not None and tiers.log_kappa is not None
        cut, tail = _tail_cut(eta, g.sigma_hi)
        delta_v = min(1.0, g.delta_hi + tail)
        log_m = (tiers.log_kappa + math.log1p(-delta_v) - g.eps_hi
                 + _gaussian_log_rho(g.sigma_lo, g.sigma_hi, cut, tiers.sigma))
        m = np.exp(log_m)
        if math.isinf(cut) and g.stop - g.start == 1:
            # one tier: its users run the victim's own randomizer, r = e^{-eps} (FMT21 Lemma 3.3
            # for the common pure part), times 1 - delta_j
            same = np.zeros(m.shape, dtype=bool)
            same[g.start] = True
            m = np.where(same, np.maximum(m, (1.0 - tiers.delta) * math.exp(-g.eps_hi)), m)
    elif family.family == "laplace" and eta > 0.0:
        cut, tail = _laplace_tail_cut(eta, g.eps_lo)
        delta_v = min(1.0, g.delta_hi + tail)
        m = (1.0 - tiers.delta) * (1.0 - tail) * np.exp(
            _laplace_log_mass(g.eps_lo, g.eps_hi, cut, tiers.eps))
    else:
        if eta > 0.0:
            raise ValueError(f"eta (tail cut) applies to the {list(CUT_FAMILIES)} randomizers "
                             f"only, got eta = {eta!r} for {family.spec}")
        m = _pure_masses(family, tiers, g)
    m = np.minimum(m * _MASS_SHRINK, 1.0)
    counts = tiers.counts.copy()
    drop = g.start + int(np.argmax(m[g.start:g.stop]))
    counts[drop] -= 1
    comp = np.maximum(1.0 - m, _MIN_COMPLEMENT)
    return g.eps_hi, delta_v, m, counts, comp


def _group_weighted(values, counts, comps, rel_step):
    """Distinct masses with summed multiplicities; more than 256 distinct values are rounded
    down onto the grid (1 + rel_step)^k (as :func:`shuffledp.poisson_binomial.
    group_probabilities`), with the grid's accurate complements."""
    # masses below 1e-200 are dropped (rounded down to 0: fewer clones, conservative); scipy's
    # binomial pmf overflows for subnormal probabilities
    keep = (values >= _MIN_MASS) & (counts > 0)
    v, c, k = values[keep], counts[keep], comps[keep]
    if v.size == 0:
        return np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0)
    exact = rel_step == 0 or v.size <= 256
    if not exact and v.size <= 4096:  # few tiers: keep the values exactly if few distinct
        exact = np.unique(v).size <= 256
    if exact:
        uniq, inv = np.unique(v, return_inverse=True)
        cnt = np.bincount(inv, weights=c).astype(np.int64)
        comp = np.zeros(uniq.size)
        np.maximum.at(comp, inv, k)  # the largest complement of equal values (conservative)
        return uniq, cnt, comp
    h = math.log1p(rel_step)
    kk = np.floor(np.log(v) / h)
    kk = np.where(np.exp(kk * h) > v, kk - 1, kk).astype(np.int64)
    base = int(kk.min())
    cnt = np.bincount(kk - base, weights=c)
    ku = np.flatnonzero(cnt) + base
    cnt = cnt[cnt > 0].astype(np.int64)
    vals = np.exp(ku * h)
    # Drop the smallest grid values while their total mass stays below _DROP_SHARE of the
    # expected count (at most one expected clone): rounding masses down to 0 is conservative,
    # and tails cut far out leave many users with negligible masses.
    mass = vals * cnt
    cum = np.cumsum(mass)
    keep = cum > min(_DROP_SHARE * float(cum[-1]), 1.0)
    return vals[keep], cnt[keep], np.maximum(-np.expm1(ku[keep] * h), _MIN_COMPLEMENT)


# --------------------------------------------------------------------------- the bound
_PLANS: OrderedDict[tuple, tuple[_Tiers, tuple[VictimGroup, ...]]] = OrderedDict()
_COUNTS: OrderedDict[tuple, Any] = OrderedDict()
_PLAN_CACHE_SIZE = 8
_COUNT_CACHE_SIZE = 512
register_mapping("aware.plans", _PLANS)
register_mapping("aware.counts", _COUNTS)


def clear_cache() -> None:
    """Empty the victim-group plans and clone-count pmfs of the mechanism-aware bound."""
    _PLANS.clear()
    _COUNTS.clear()


def _lru(cache: OrderedDict, key: tuple, build, size: int):
    """``cache[key]``, built by ``build()`` on a miss; least recently used entries beyond
    ``size`` are evicted."""
    hit = cache.get(key)
    if hit is None:
        hit = build()
        cache[key] = hit
        if len(cache) > size:
            cache.popitem(last=False)
    else:
        cache.move_to_end(key)
    return hit


def _cached_plan(profile: BudgetProfile, family: Randomizer, groups: int, digest: str):
    return _lru(_PLANS, (digest, family.spec, groups), lambda: _plan(profile, family, groups),
                _PLAN_CACHE_SIZE)


def _plan_of(profile: BudgetProfile, family: Randomizer, groups: int):
    """The cached plan, keyed by the profile's content digest."""
    from shuffledp.bounds.clones import profile_digest

    return _cached_plan(profile, family, groups, profile_digest(profile))


def _cut_value(count_of, group: VictimGroup, gi: int, i: int, eps: float, tol: float) -> float:
    """delta of one group with cut TAIL_GRID[i] (i = -1: no cut)."""
    from shuffledp.bounds.clones import _evaluate

    eta = 0.0 if i < 0 else float(TAIL_GRID[i])
    if i >= 0 and group.delta_hi + eta >= 1.0:
        return 1.0
    return _evaluate(count_of(gi, eta), eps, tol)


def _best_cut(value_at, worst: float) -> float:
    """Smallest delta over the cuts: no cut first, then a discrete ternary search on
    TAIL_GRID (delta is usually unimodal in log eta; any cut is valid, so the search only
    affects tightness), stopped as soon as some cut is at most ``worst`` (the group cannot
    raise the maximum)."""
    values: dict[int, float] = {}

    def value(i: int) -> float:
        if i not in values:
            values[i] = value_at(i)
        return values[i]

    if value(-1) <= worst:
        return values[-1]
    lo, hi = 0, TAIL_GRID.size - 1
    while hi - lo > 2 and min(values.values()) > worst:
        m1, m2 = lo + (hi - lo) // 3, hi - (hi - lo) // 3
        if value(m1) <= value(m2):
            hi = m2
        else:
            lo = m1
    if min(values.values()) > worst:
        for i in range(lo, hi + 1):
            value(i)
    return min(values.values())


def aware_delta(*, profile: BudgetProfile, eps: float, mechanism: Any, tol: float,
                rel_step: float, groups: int = VICTIM_GROUPS) -> float:
    """delta(eps) of the mechanism-aware reduction: the largest group bound (module
    docstring).  Groups that cannot exceed the running maximum are cut short."""
    from shuffledp.bounds.clones import _build_count, _evaluate, profile_digest

    family = get_randomizer(mechanism)
    if family.family not in AWARE_FAMILIES:
        raise ValueError(f"mechanism must be one of the families {list(AWARE_FAMILIES)}, got "
                         f"{family.spec!r}")
    digest = profile_digest(profile)
    tiers, plan = _cached_plan(profile, family, groups, digest)

    def count_of(gi: int, eta: float):
        def get(t: float, direct: bool):
            def build():
                e_v, d_v, m, counts, comp = _group_pool(family, tiers, plan[gi], eta)
                values, cnt, comps = _group_weighted(m, counts, comp, rel_step)
                return _build_count(e_v, d_v, values, cnt, tol=t, direct=direct,
                                    complements=comps)

            key = (digest, family.spec, groups, gi, eta, float(t), float(rel_step), direct)
            return _lru(_COUNTS, key, build, _COUNT_CACHE_SIZE)
        return get

    order = [0, len(plan) - 1] + list(range(1, len(plan) - 1))
    seen: set[int] = set()
    worst = 0.0
    for gi in order:
        if gi in seen:
            continue
        seen.add(gi)
        if family.family not in CUT_FAMILIES:
            worst = max(worst, _evaluate(count_of(gi, 0.0), eps, tol))
            continue
        best = _best_cut(lambda i, gi=gi: _cut_value(count_of, plan[gi], gi, i, eps, tol),
                         worst)
        worst = max(worst, best)
    return float(min(worst, 1.0))
