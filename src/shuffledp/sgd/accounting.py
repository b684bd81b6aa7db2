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

``clones`` (kind ``upper``) -- rigorous.  For a fixed model, the round is a shuffled protocol
    whose output is a post-processing of the clone-reduction pair (P, Q) of
    :func:`shuffledp.bounds.clones.clone_pair` (Feldman, McMillan, Talwar, FOCS 2021,
    arXiv 2012.12803, Theorem 3.2 and Appendix E: the shuffled output on the neighbouring
    datasets is obtained from P, resp. Q, by one common randomized map).  So (P, Q)
    dominates the round in the sense of trade-off functions, for *every* model; by the
    adaptive composition theorem of f-DP (Dong, Roth, Su 2022, Theorem 3.2) T rounds are
    dominated by (P^T, Q^T), whose hockey-stick divergence is computed exactly up to
    discretisation by composing the privacy loss distribution (PLD) of (P, Q) with itself
    T times (dp_accounting, ``PrivacyLossDistribution.self_compose``).  The pair is mirror
    symmetric (``Q_c(a) = P_c(c+1-a)``), so one PLD serves both directions
    (``symmetric=True``).

    Discretisation is *pessimistic*: every privacy loss ``L = log(p/q)`` is rounded **up** to
    the grid ``k * discretization`` (``k = ceil(L / discretization)``); the mass the pair
    leaves out (``tail_mass``: truncated clone counts, the victim's delta_v, round-off) is
    put at loss ``+inf``; the composition's truncated tails too (dp_accounting's pessimistic
    mode).  Rounding losses up can only raise ``E_P[(1 - e^{eps - L_1 - ... - L_T})_+]``, so
    the result is an upper bound; its excess is at most ``T * discretization`` in eps.

    Validity (which randomizers): the ``standard`` clones hold for every pure
    ``eps_0``-LDP randomizer shared by all users (FMT21 Thm 3.2): here the
    :class:`~shuffledp.sgd.randomizers.DuchiRandomizer` with *identical* budgets.  Not
    covered, so :class:`~shuffledp.errors.ParameterRegimeError` is raised:
    (i) ``clone="stronger"`` (FMT23 with Errata: a restricted class, randomized response;
    the Duchi and Gaussian randomizers are not in it); (ii) personalized budgets: different
    users then run *different* randomizers (different noise radii or scales), and the
    decomposition of user j's report into clones of the *victim's* report, which the
    reduction needs, does not hold for them (e.g. Gaussians of different variances have
    unbounded density ratio); (iii) the Gaussian randomizer (approximate LDP): the clone
    decomposition needs pure LDP; FMT21's extension to (eps_0, delta_0)-LDP randomizers
    (their Theorem 3.8, an extra term proportional to n delta_0 per round) is not implemented
    here.

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

import numpy as np
from numpy.typing import NDArray

from shuffledp.accounting import check_discretization as _check_discretization
from shuffledp.accounting import pld_from_pair  # noqa: F401  (re-exported)
from shuffledp.calibration import Calibration, ScaleCheck, delta_score, search_scale
from shuffledp.errors import ParameterRegimeError, short_repr
from shuffledp.gdp import gdp_delta, gdp_eps
from shuffledp.params import (
    EPS_LOCAL_MAX,
    BudgetProfile,
    check_int,
    check_real,
    check_str,
    check_target_delta,
    check_target_eps,
    describe,
)
from shuffledp.sgd.randomizers import RANDOMIZERS, GaussianRandomizer

__all__ = [
    "SGD_METHODS",
    "METHOD_KIND",
    "Calibration",
    "round_clone_pair",
    "pld_from_pair",
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


def _check_rounds(rounds: int) -> int:
    return check_int(rounds, "rounds", low=1)


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
    if method != "clones":
        return
    from shuffledp.bounds import get_bound

    # one decision for every place that asks "covered": the clones bound's own coverage, for
    # the family of this randomizer (duchi_l2: clones only between equal budgets, mass e^-eps;
    # gaussian: not pure, not covered)
    cov = get_bound("clones").covers(randomizer=cls, profile=profile, clone=clone)
    if not cov.covered:
        raise ParameterRegimeError(f"clones is not proven for this SGD setting: {cov.reason}")


# --------------------------------------------------------------------------- PLD pieces
def round_clone_pair(
    profile: BudgetProfile, *, clone: str = "standard", tol: float = PAIR_TOL
) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """Adapter: the per-round dominating pair ``(p, q, tail_mass)`` of the clone reduction.

    Interface: ``p``, ``q`` are non-negative sub-probability vectors on a common finite
    support (the victim on x^0 / x^1), both missing the mass ``tail_mass``, which the caller
    charges at privacy loss +inf.  Implemented by :func:`shuffledp.bounds.clones.clone_pair`.
    """
    from shuffledp.bounds.clones import clone_pair

    return clone_pair(profile, clone=clone, tol=tol)


def _rr_pair(eps0: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    e = 1.0 / (1.0 + math.exp(-eps0))  # e^eps0 / (1 + e^eps0)
    return np.array([e, 1.0 - e]), np.array([1.0 - e, e])


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
    """The T-fold composed pessimistic PLD for ``clones`` or (pure) ``local``."""
    t = _check_rounds(rounds)
    check_applicable(method=method, profile=profile, randomizer=randomizer, clone=clone)
    if method == "clones":
        p, q, tail = round_clone_pair(profile, clone=clone, tol=tol)
    elif method == "local" and RANDOMIZERS[randomizer].pure:
        p, q = _rr_pair(profile.eps_max)
        tail = 0.0
    else:
        raise ValueError(f"no PLD for method {method!r} with randomizer {randomizer!r}")
    pld = pld_from_pair(p, q, tail, discretization=discretization)
    return pld if t == 1 else pld.self_compose(t)


def _total_mu(method: str, profile: BudgetProfile, rounds: int) -> float:
    from shuffledp.bounds.gdp_paper import paper_mu

    if method == "gdp":
        mu = paper_mu(profile)
    else:  # local, Gaussian: the worst user's own exact GDP
        t = profile.tiers
        mu = float(np.max(GaussianRandomizer(clip=1.0).local_mu(t.eps, t.delta)))
    return math.sqrt(rounds) * mu


def _uses_gdp(method: str, randomizer: str) -> bool:
    return method == "gdp" or (method == "local" and not RANDOMIZERS[randomizer].pure)


def _accountant(method, profile, rounds, randomizer, clone, discretization):
    """The T-round accountant shared by :func:`rounds_epsilon` and :func:`rounds_delta`:
    ``(mu, None)`` for GDP accounting, ``(None, pld)`` for a composed PLD."""
    t = _check_rounds(rounds)
    _check_common(profile, clone, discretization)
    check_applicable(method=method, profile=profile, randomizer=randomizer, clone=clone)
    if _uses_gdp(method, randomizer):
        return _total_mu(method, profile, t), None
    pld = rounds_pld(
        method=method,
        profile=profile,
        rounds=t,
        randomizer=randomizer,
        clone=clone,
        discretization=discretization,
    )
    return None, pld


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

    ``clones``/``local`` are upper bounds (pessimistic PLD); ``gdp`` is the approximation.
    """
    delta = check_target_delta(delta)
    mu, pld = _accountant(method, profile, rounds, randomizer, clone, discretization)
    if pld is None:
        return gdp_eps(delta, mu, side="upper")
    return max(float(pld.get_epsilon_for_delta(delta)), 0.0)


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
    mu, pld = _accountant(method, profile, rounds, randomizer, clone, discretization)
    if pld is None:
        return float(gdp_delta(eps, mu))
    return min(float(pld.get_delta_for_epsilon(eps)), 1.0)


# --------------------------------------------------------------------------- calibration
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
    t = _check_rounds(rounds)
    eps = check_real(eps, "eps", low=0.0, low_open=True)
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
