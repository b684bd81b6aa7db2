"""Per-tier central guarantees of shuffled SGD and calibration to one target per budget tier.

The victims of one budget tier (a level of the per-round profile) get their own T-round
central eps (:func:`tier_guarantees`), from the same accounts as :mod:`shuffledp.sgd.accounting`:
for the cross-tier randomizer ``duchi_sphere`` the pair of the victim's own budget with every
other user in its pool (docs/theory.md 15.5, Theorem 8), for ``duchi`` and ``gaussian`` the
pair of the tier's own users (docs/theory.md 14); each capped by the tier's local-only
guarantee.  :func:`calibrate_tiers` finds local budgets that meet one central target per tier
(users who chose a small budget get a small central eps, as in individualized DP-SGD,
Boenisch et al., NeurIPS 2023).

>>> from shuffledp import BudgetProfile
>>> prof = BudgetProfile.from_histogram([0.5, 1.0], [600, 400])
>>> [round(g.eps, 3) for g in tier_guarantees(method="clones", profile=prof, rounds=10,
...                                          delta=1e-5, randomizer="duchi_sphere")]
[0.196, 0.39]
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from shuffledp.budgets import BudgetProfile
from shuffledp.calibration import Calibration, ScaleCheck, delta_score, search_scale
from shuffledp.errors import ParameterRegimeError, short_repr
from shuffledp.gdp import gdp_delta, gdp_eps
from shuffledp.per_tier import check_targets, raise_tiers
from shuffledp.sgd.accounting import (
    CROSS_TIER_PAIRS,
    DISCRETIZATION,
    METHOD_KIND,
    RoundsAccount,
    VictimTier,
    _check_common,
    _check_randomizer,
    _check_rounds,
    _Fixed,
    _local_pld,
    _total_mu,
    check_applicable,
    check_search,
)
from shuffledp.sgd.randomizers import GaussianRandomizer, nested_pool_sizes
from shuffledp.validation import check_target_delta

__all__ = ["TierGuarantee", "tier_guarantees", "calibrate_tiers"]

#: Relative tolerance of the per-tier raises of :func:`calibrate_tiers` (coarser than the
#: common factor's: each raise only moves budget from the binding tiers' slack).
REFINE_RTOL = 1e-2


class TierGuarantee(NamedTuple):
    """The central guarantee of the victims of one budget tier (:func:`tier_guarantees`):
    ``tier`` its index in ``profile.tiers``, ``n`` its users, ``eps_local``/``delta_local``
    their per-round budget, ``eps`` the T-round central eps at the target delta (for
    ``gdp``, the paper's approximation, the same for every tier)."""

    tier: int
    n: int
    eps_local: float
    delta_local: float
    eps: float


class _TierAccount(NamedTuple):
    """One tier's T-round account: ``delta(eps)`` and ``epsilon(delta)``, each the minimum
    of the amplified account and the tier's own local-only one where that holds too."""

    amplified: Any
    local: Any

    def delta(self, eps: float) -> float:
        d = self.amplified.delta(eps) if self.amplified is not None else 1.0
        return min(d, self.local.delta(eps)) if self.local is not None else d

    def epsilon(self, delta: float) -> float:
        e = self.amplified.epsilon(delta) if self.amplified is not None else math.inf
        return min(e, self.local.epsilon(delta)) if self.local is not None else e


class _GdpAccount(NamedTuple):
    mu: float

    def delta(self, eps: float) -> float:
        return float(gdp_delta(eps, self.mu))

    def epsilon(self, delta: float) -> float:
        return gdp_eps(delta, self.mu, side="upper")


def _tier_accounts(method: str, profile: BudgetProfile, rounds: int, randomizer: str,
                   clone: str, discretization: float,
                   only: int | None = None) -> list[Any]:
    """One account per budget tier of ``profile`` (module docstring; docs/theory.md 15.5).

    ``clones``: the victims of tier k with the pair of their own budget -- for a cross-tier
    randomizer the pool of every other user (:func:`round_clone_pair` with the profile and
    k), else the tier's own users (``n_k`` identical users, Lemma 10's leak for Gaussian
    tiers); each also capped by the tier's own local-only guarantee (each victim's own T
    reports).  ``local``: that local-only guarantee.  ``gdp``: the paper's one mu for all.

    ``only = k``: tier k's account alone (a one-element list; an account of a Gaussian tier
    holds composed PLDs of hundreds of MB, so callers build them one at a time)."""
    t_rounds = _check_rounds(rounds)
    _check_common(profile, clone, discretization)
    check_applicable(method=method, profile=profile, randomizer=randomizer, clone=clone)
    cls = _check_randomizer(randomizer)
    t = profile.tiers
    if t.eps.size > CROSS_TIER_PAIRS:
        raise ParameterRegimeError(
            f"per-tier guarantees: at most {CROSS_TIER_PAIRS} budget tiers, got {t.eps.size}; "
            "round the profile to fewer levels (BudgetProfile.rounded_down)")
    if method == "gdp":
        acc = _GdpAccount(_total_mu("gdp", profile, t_rounds))
        return [acc] * int(t.eps.size)
    out: list[Any] = []
    cross = getattr(cls, "cross_tier", False)
    for k in range(int(t.eps.size)) if only is None else [int(only)]:
        e_k, d_k, n_k = float(t.eps[k]), float(t.delta[k]), int(t.counts[k])
        # the local-only accounts read the budget only (two users: the smallest profile)
        own = BudgetProfile.identical(n=2, eps0=e_k, delta0=d_k)
        local = (_Fixed(_local_pld(own, t_rounds, randomizer, clone, discretization))
                 if cls.pure else _GdpAccount(_total_mu("local", own, t_rounds)))
        if method == "local":
            out.append(local)
            continue
        if cross:
            tier = VictimTier(n_k, e_k, d_k, 0.0, 1, math.nan, profile, k)
        else:
            mu = (math.nan if cls.pure else
                  float(GaussianRandomizer(clip=1.0).local_mu(t.eps[k:k + 1],
                                                              t.delta[k:k + 1])[0]))
            pool = int(t.counts[k])
            if getattr(cls, "nested_pools", False):  # shared noise: every lower tier joins
                mus = GaussianRandomizer(clip=1.0).local_mu(t.eps, t.delta)
                pool = int(nested_pool_sizes(mus, t.counts)[k])
            leak = (0.0 if cls.pure else
                    (pool - 1) * math.exp(-t.eps[k]) * t.delta[k] * (1.0 + 1e-12))
            tier = VictimTier(pool, float(t.eps[k]), float(t.delta[k]), leak, 1, mu)
        out.append(_TierAccount(RoundsAccount(tier, rounds=t_rounds, clone=clone,
                                              discretization=discretization), local))
    return out


def tier_guarantees(
    *,
    method: str,
    profile: BudgetProfile,
    rounds: int,
    delta: float,
    randomizer: str,
    clone: str = "standard",
    discretization: float = DISCRETIZATION,
) -> list[TierGuarantee]:
    """The T-round central eps at ``delta`` of the victims of each budget tier of
    ``profile`` (one :class:`TierGuarantee` per tier, by increasing budget).  Their maximum
    is a guarantee for every user, at most :func:`rounds_epsilon`'s when that uses a
    conservative victim.

    >>> from shuffledp import BudgetProfile
    >>> prof = BudgetProfile.from_histogram([0.5, 1.0, 2.0], [300, 200, 100])
    >>> g = tier_guarantees(method="clones", profile=prof, rounds=10, delta=1e-5,
    ...                     randomizer="duchi_sphere")
    >>> [x.n for x in g], g[0].eps < g[1].eps < g[2].eps
    ([300, 200, 100], True)
    """
    delta = check_target_delta(delta)
    t = profile.tiers
    _tier_accounts(method, profile, rounds, randomizer, clone, discretization, only=0)  # checks
    return [TierGuarantee(k, int(t.counts[k]), float(t.eps[k]), float(t.delta[k]),
                          float(_tier_accounts(method, profile, rounds, randomizer, clone,
                                               discretization, only=k)[0].epsilon(delta)))
            for k in range(int(t.eps.size))]


def calibrate_tiers(
    *,
    method: str,
    base: BudgetProfile,
    rounds: int,
    targets: Any,
    delta: float,
    randomizer: str,
    clone: str = "standard",
    discretization: float = DISCRETIZATION,
    rtol: float = 1e-3,
    scale_min: float = 1e-3,
    eps_local_max: float = 30.0,
    refine: bool = True,
) -> tuple[Calibration, list[TierGuarantee]]:
    """Largest common factor s on ``base`` such that the victims of every budget tier k
    meet their own central target: T-round delta at ``targets[k]`` at most ``delta``.

    ``targets``: one central eps per tier of ``base`` (``base.tiers``, by increasing budget).
    The search is :func:`calibrate_scale`'s (:func:`shuffledp.calibration.search_scale`,
    every tier checked at every candidate scale); for randomizers whose pools are one tier
    (``duchi``, ``gaussian``: the tiers do not interact) with ``refine``, each tier's budget
    is searched on its own instead, from the largest down, starting at ``scale_min``.  For a
    cross-tier randomizer, with ``refine``, each tier's budgets are raised on their own while
    every target still holds (:func:`shuffledp.per_tier.raise_tiers`), so a tier whose
    target is not the binding one gets the budget its own target allows (the profile is then
    no longer ``base.scaled(scale)``).  Returns the shared
    :class:`~shuffledp.calibration.Calibration` record (``target_eps`` the largest target,
    ``bound_eps`` the largest of the tiers' eps, ``diagnostics`` the per-tier targets and
    whether the tiers were refined) and
    the per-tier guarantees there.

    >>> from shuffledp import BudgetProfile
    >>> base = BudgetProfile.from_histogram([1.0, 2.0, 3.0], [54, 37, 9])
    >>> cal, tiers = calibrate_tiers(method="clones", base=base, rounds=5, delta=1e-5,
    ...                              targets=[1.0, 2.0, 3.0], randomizer="duchi_sphere")
    >>> all(g.eps <= t for g, t in zip(tiers, [1.0, 2.0, 3.0]))
    True
    """

    if not isinstance(refine, bool):
        raise TypeError(f"refine must be True or False, got {short_repr(refine)}")
    t_rounds, delta, rtol, scale_min, s_max = check_search(
        method=method, base=base, rounds=rounds, delta=delta, randomizer=randomizer,
        clone=clone, discretization=discretization, rtol=rtol, scale_min=scale_min,
        eps_local_max=eps_local_max)
    size = int(base.tiers.eps.size)
    tg = check_targets(targets, size)
    settings = {"randomizer": randomizer, "clone": clone, "discretization": discretization}

    def delta_at(prof: BudgetProfile, k: int) -> float:
        """Tier k's T-round delta at its target; its account is dropped after use."""
        (acc,) = _tier_accounts(method, prof, t_rounds, randomizer, clone, discretization,
                                only=k)
        return acc.delta(float(tg[k]))

    def check_profile(prof: BudgetProfile) -> ScaleCheck:
        if prof.tiers.eps.size != size:  # two levels met: their targets no longer align
            return ScaleCheck(False, -math.inf, math.inf, "two budget levels coincide")
        try:
            ds = [delta_at(prof, k) for k in range(size)]
        except ParameterRegimeError as err:
            return ScaleCheck(False, -math.inf, math.inf, str(err))
        worst = min(delta_score(d, delta) for d in ds)
        return ScaleCheck(all(d <= delta for d in ds), worst, max(ds))

    def check(s: float) -> ScaleCheck:
        return check_profile(base.scaled(s))

    def check_tier(prof: BudgetProfile, k: int) -> ScaleCheck:
        """Tier k's target alone (its account depends on its own users only)."""
        try:
            d = delta_at(prof, k)
        except ParameterRegimeError as err:
            return ScaleCheck(False, -math.inf, math.inf, str(err))
        return ScaleCheck(d <= delta, delta_score(d, delta), d)

    cls = _check_randomizer(randomizer)
    independent = not getattr(cls, "cross_tier", False) and (
        not getattr(cls, "nested_pools", False) or base.delta_min == base.delta_max)
    if refine and independent:
        # pools of one tier (duchi, gaussian), or nested pools with one delta (each tier's
        # pool is fixed by the order of the budgets, which the raises keep): the tiers do not
        # interact, so each tier's budget is found on its own, from the smallest common scale
        # up (module docstring)
        start = base.scaled(scale_min)
        first = check_profile(start)
        if not first.certified:
            raise _unreachable(method, delta, t_rounds, scale_min * base.eps_max, first)
        profile, more, bound_delta = raise_tiers(check_tier, start, tg, rtol, eps_local_max,
                                                  first.value, own=True)
        return _tiers_result(method, profile, t_rounds, delta, settings, tg, scale_min,
                             False, 1 + more, bound_delta, refine)
    res = search_scale(check, start=min(1.0, s_max), s_min=scale_min, s_max=s_max, rtol=rtol)
    if res.lo is None:
        raise _unreachable(method, delta, t_rounds, scale_min * base.eps_max,
                           res.checks[min(res.checks)])
    s = res.lo
    profile = base.scaled(s)
    evaluations = res.evaluations
    bound_delta = float(res.checks[s].value)
    if refine and not res.capped:
        profile, more, bound_delta = raise_tiers(check_profile, profile, tg,
                                                  max(rtol, REFINE_RTOL), eps_local_max,
                                                  bound_delta)
        evaluations += more
    return _tiers_result(method, profile, t_rounds, delta, settings, tg, s, res.capped,
                         evaluations, bound_delta, refine)


def _unreachable(method: str, delta: float, rounds: int, eps_min: float,
                 last: ScaleCheck) -> ParameterRegimeError:
    return ParameterRegimeError(
        f"{method}: the per-tier central targets at delta = {delta:g} after {rounds} rounds "
        f"are not reachable with local eps >= {eps_min:g} (largest tier delta there "
        f"{last.value:.4g}{'; ' + last.reason if last.reason else ''})")


def _tiers_result(method, profile, t_rounds, delta, settings, tg, s, capped, evaluations,
                  bound_delta, refine) -> tuple[Calibration, list[TierGuarantee]]:
    tiers = tier_guarantees(method=method, profile=profile, rounds=t_rounds, delta=delta,
                            **settings)
    # the delta certificates at the targets prove eps(delta) <= target for every tier
    tiers = [g._replace(eps=min(g.eps, float(e))) for g, e in zip(tiers, tg, strict=True)]
    cal = Calibration(
        method=method, kind=METHOD_KIND[method], target_eps=float(tg.max()),
        delta=float(delta), scale=float(s), profile=profile,
        bound_eps=float(max(g.eps for g in tiers)), capped=capped,
        evaluations=evaluations, options=settings, rounds=t_rounds,
        bound_delta=bound_delta,
        diagnostics={"tier_targets": [float(v) for v in tg], "refined": bool(refine)})
    return cal, tiers
