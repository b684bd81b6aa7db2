"""Central guarantees per budget tier: the central eps of the victims of each budget of a
profile, for the randomizer the users run.

The mechanism-aware rigorous bounds are maxima over *victim groups* (ranges of budget tiers):
``clones`` with ``mechanism`` (docs/theory.md 4.1, Theorem 3) and ``blanket`` (docs/theory.md
15.1, Theorem 6 (iii)) bound the victims of each group by the group's own value, and the
profile's guarantee is the largest.  :func:`tier_eps` returns each group's value instead: a
user who chose a small budget is told its own, smaller, central eps.  Each tier's eps is the
smallest over the bounds that cover the randomizer of the eps of the group that holds it (a
minimum of valid bounds is valid); the eps of a group is found by the certified inversion of
the blanket bound (:func:`shuffledp.bounds.blanket.solve._solve_group`: the returned eps is
one where the group's delta was evaluated at most the target), and is at most the group's
largest budget when its local delta is at most the target (the victims are then
(eps_hi, delta)-LDP, Theorem 6 (iv)).

At most :data:`TIERS_MAX` distinct budgets (round a profile with more to fewer levels,
:meth:`~shuffledp.budgets.BudgetProfile.rounded_down`); a group may hold several tiers when a
tier is small (equal-count victim groups), and then reports the group's value for each.

>>> from shuffledp import BudgetProfile
>>> prof = BudgetProfile.from_histogram([0.5, 1.0, 2.0], [3000, 2000, 1000])
>>> [round(t.eps, 4) for t in tier_eps(prof, delta=1e-6, randomizer="laplace_shared")]
[0.0243, 0.0479, 0.0915]

:func:`calibrate_tiers` goes the other way: given one central target per budget level (the
individualized targets of Boenisch et al., NeurIPS 2023, "Have it your way"), it finds local
budgets whose per-tier guarantees meet them; :func:`raise_tiers` is its per-level step, shared
with the SGD calibration (:func:`shuffledp.sgd.tiers.calibrate_tiers`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from shuffledp.budgets import BudgetProfile
from shuffledp.calibration import ScaleCheck, eps_score, search_scale
from shuffledp.errors import ParameterRegimeError, short_repr
from shuffledp.validation import as_real_array, check_real, check_target_delta, describe

__all__ = ["TierEps", "tier_eps", "TIERS_MAX", "TIER_METHODS", "TierCalibration",
           "calibrate_tiers", "raise_tiers", "check_targets"]

#: Most distinct budgets :func:`tier_eps` reports on.
TIERS_MAX = 64
#: The bounds with per-group values, tried in this order.
TIER_METHODS = ("clones", "blanket")


class TierEps(NamedTuple):
    """The central guarantee of the victims of one budget tier: ``eps_local``/``delta_local``
    the tier's budget, ``n`` its users, ``eps`` the central eps at the target delta and
    ``method`` the bound that gives it (``inf`` and ``""`` when none covers it)."""

    tier: int
    eps_local: float
    delta_local: float
    n: int
    eps: float
    method: str


def _group_eps(delta_of, eps_hi: float, delta_hi: float, delta: float) -> float:
    """The certified eps of one group (module docstring), or inf."""
    from shuffledp.bounds.base import INVERSION_ATOL, INVERSION_RTOL
    from shuffledp.bounds.blanket.solve import _solve_group

    if delta_hi > delta:
        return math.inf
    if delta_of(0.0) <= delta:
        return 0.0

    def fn(e: float) -> float:
        return delta_hi if e >= eps_hi else delta_of(e)

    return float(_solve_group(fn, delta, 0.0, eps_hi, INVERSION_RTOL, INVERSION_ATOL))


def _method_groups(method: str, profile: BudgetProfile, fam, groups: int):
    """[(start, stop, eps_hi, delta_hi, delta_of)] of ``method``'s victim groups."""
    if method == "clones":
        from shuffledp.bounds.clones.aware import aware_group_delta, victim_groups
        from shuffledp.bounds.clones.count import REL_STEP, TOL

        out = []
        for gi, g in enumerate(victim_groups(profile, fam, groups=groups)):
            def delta_of(e, gi=gi):
                return aware_group_delta(profile=profile, eps=e, mechanism=fam, group=gi,
                                         tol=TOL, rel_step=REL_STEP, groups=groups)
            out.append((g.start, g.stop, g.eps_hi, g.delta_hi, delta_of))
        return out
    from shuffledp.bounds.blanket.bound import blanket_group_delta, blanket_plan

    plan, _ = blanket_plan(profile, fam, groups)
    out = []
    for gi, g in enumerate(plan):
        def delta_of(e, gi=gi):
            return blanket_group_delta(profile=profile, eps=e, mechanism=fam, group=gi,
                                       victim_groups=groups)
        out.append((g.start, g.stop, g.eps_hi, g.delta_hi, delta_of))
    return out


def tier_eps(profile: BudgetProfile, *, delta: float, randomizer: Any,
             methods: Sequence[str] = TIER_METHODS) -> list[TierEps]:
    """The central eps at ``delta`` of the victims of each budget tier of ``profile`` when
    every user runs ``randomizer`` (module docstring), one :class:`TierEps` per tier by
    increasing budget.  ``methods``: among :data:`TIER_METHODS`; a method that does not cover
    the randomizer on this profile is skipped (``covers``).  Raises ``ParameterRegimeError``
    for more than :data:`TIERS_MAX` distinct budgets.
    """
    from shuffledp.bounds import get_bound
    from shuffledp.compare import randomizer_options
    from shuffledp.families import get_family

    if not isinstance(profile, BudgetProfile):
        raise TypeError(f"profile must be a BudgetProfile, got {describe(profile)}")
    delta = check_target_delta(delta)
    fam = get_family(randomizer)
    if isinstance(methods, str) or not isinstance(methods, Sequence) or not methods:
        raise TypeError(f"methods must be a non-empty sequence of names, got "
                        f"{short_repr(methods)}")
    for m in methods:
        if m not in TIER_METHODS:
            raise ValueError(f"methods must be among {list(TIER_METHODS)}, got {short_repr(m)}")
    t = profile.tiers
    size = int(t.eps.size)
    if size > TIERS_MAX:
        raise ParameterRegimeError(
            f"per-tier guarantees: at most {TIERS_MAX} distinct budgets, got {size}; round "
            "the budgets to fewer levels (BudgetProfile.rounded_down)")
    best = [(math.inf, "")] * size
    opts = randomizer_options(list(methods), fam)
    for m in methods:
        o = opts.get(m)
        if not o or "mechanism" not in o:
            continue  # no mechanism-aware form for this randomizer (no per-group values)
        bound = get_bound(m)
        if not bound.covers(randomizer=fam, profile=profile, **o).covered:
            continue
        bound.prepare(profile, **o)
        try:
            groups = _method_groups(m, profile, fam, size)
        except ParameterRegimeError:
            continue
        for start, stop, eps_hi, delta_hi, delta_of in groups:
            e = _group_eps(delta_of, eps_hi, delta_hi, delta)
            for k in range(int(start), int(stop)):
                if e < best[k][0]:
                    best[k] = (e, m)
    return [TierEps(k, float(t.eps[k]), float(t.delta[k]), int(t.counts[k]), e, m)
            for k, (e, m) in enumerate(best)]


def raise_tiers(check_profile, profile: BudgetProfile, targets, rtol: float,
                eps_local_max: float, bound_delta: float, *, own: bool = False):
    """Each tier's budgets raised on their own, from the largest budget down, by the largest
    factor (to ``rtol``) that keeps every tier's target met: a tier whose target is not the
    binding one gets the budget its target allows.  Every accepted factor was checked, so the
    result holds whatever the randomizer.  The check is monotone in the factor where raising
    a tier's budget never gives the other users more mass (binary RR, k-RR, the shared-noise
    randomizers, ``duchi_sphere``: Theorem 6 (ii)); where it can (a Laplace user's clone
    mass ``(eps_j / eps_v) e^{-eps_j}`` grows with eps_j below 1), the search may stop short of
    the largest factor, which costs budget, not validity.  A factor keeps the tier below the next
    one (the tiers keep their order and their targets).  ``own``: ``check_profile(profile, k)``
    checks tier k alone (pools of one tier, where the others do not move).  Returns
    (profile, evaluations, the ``value`` of the last accepted check: its largest delta, or
    whatever ``check_profile`` reports).  ``check_profile`` returns a
    :class:`~shuffledp.calibration.ScaleCheck`."""
    evaluations = 0
    last: dict[int, float] = {}
    size = int(profile.tiers.eps.size)
    for k in range(size - 1, -1, -1):
        levels = profile.tiers.eps
        e_k = float(levels[k])
        cap = eps_local_max if k == size - 1 else float(levels[k + 1]) * (1.0 - 1e-9)
        f_max = cap / e_k
        if f_max <= 1.0 + rtol:
            continue
        eps_users = np.asarray(profile.eps, dtype=np.float64)
        mask = eps_users == e_k

        def raised(f: float, eps_users=eps_users, mask=mask, now=profile) -> BudgetProfile:
            return BudgetProfile(eps=np.where(mask, eps_users * f, eps_users),
                                 delta=now.delta, label=now.label)

        def check(f: float, raised=raised, k=k):
            return check_profile(raised(f), k) if own else check_profile(raised(f))

        res = search_scale(check, start=min(1.0 + 8.0 * rtol, f_max), s_min=1.0, s_max=f_max,
                           rtol=rtol, log_secant=own)
        evaluations += res.evaluations
        if res.lo is not None and res.lo > 1.0:
            profile = raised(res.lo)
            last[k] = float(res.checks[res.lo].value)
            if not own:
                bound_delta = last[k]
    if own and last:
        bound_delta = max(bound_delta, *last.values())
    return profile, evaluations, bound_delta


def check_targets(targets: Any, size: int) -> np.ndarray:
    """``targets`` as an array of one central eps (> 0) per budget level (``size``), or a
    ``ValueError``/``TypeError`` naming the entry."""
    tg = np.atleast_1d(as_real_array(targets, "targets"))
    if tg.shape != (size,):
        raise ValueError(f"targets must have one central eps per budget level of base ({size}), "
                         f"got shape {tg.shape}")
    for k, v in enumerate(tg):
        check_real(float(v), f"targets[{k}]", low=0.0, low_open=True)
    return tg


class TierCalibration(NamedTuple):
    """Result of :func:`calibrate_tiers`: ``profile`` the calibrated local budgets (every user
    of a level moved together), ``tiers`` each level's central guarantee there
    (:func:`tier_eps`), ``targets`` the central targets, ``scale`` the common factor of the
    first stage and ``evaluations`` the number of :func:`tier_eps` calls."""

    profile: BudgetProfile
    tiers: list[TierEps]
    targets: tuple[float, ...]
    scale: float
    evaluations: int


def calibrate_tiers(base: BudgetProfile, *, targets: Any, delta: float, randomizer: Any,
                    methods: Sequence[str] = TIER_METHODS, rtol: float = 1e-2,
                    scale_min: float = 1e-3, eps_local_max: float = 30.0,
                    refine: bool = True) -> TierCalibration:
    """Local budgets whose per-tier central guarantees meet one target per budget level.

    ``base``: the relative budgets (its distinct levels are the tiers, by increasing budget;
    at most :data:`TIERS_MAX`); ``targets``: one central eps per level, at ``delta``.  First
    the largest common factor s (to ``rtol``, :func:`shuffledp.calibration.search_scale`) with
    ``tier_eps(base.scaled(s))[k].eps <= targets[k]`` for every level; then, with ``refine``,
    each level's budget is raised on its own while every target still holds
    (:func:`raise_tiers`), so the levels whose target is not the binding one get the budget
    their own target allows.  The check is a certified one at every step: each accepted
    profile's :func:`tier_eps` are at most the targets, and they are returned (for the
    randomizers whose masses can grow with the budget the searches are not monotone and may
    stop short of the largest budgets, :func:`raise_tiers`).

    ``ParameterRegimeError`` when the targets are not met even at ``scale_min``.

    >>> from shuffledp import BudgetProfile
    >>> base = BudgetProfile.from_histogram([1.0, 2.0, 3.0], [540, 370, 90])
    >>> cal = calibrate_tiers(base, targets=[0.3, 0.6, 0.9], delta=1e-6, randomizer="binary_rr")
    >>> all(t.eps <= g for t, g in zip(cal.tiers, cal.targets))
    True
    """
    if not isinstance(base, BudgetProfile):
        raise TypeError(f"base must be a BudgetProfile, got {describe(base)}")
    if not isinstance(refine, bool):
        raise TypeError(f"refine must be True or False, got {short_repr(refine)}")
    delta = check_target_delta(delta)
    rtol = check_real(rtol, "rtol", low=0.0, high=1.0, low_open=True, high_open=True)
    scale_min = check_real(scale_min, "scale_min", low=0.0, low_open=True)
    eps_local_max = check_real(eps_local_max, "eps_local_max", low=0.0, low_open=True)
    size = int(base.tiers.eps.size)
    if size > TIERS_MAX:
        raise ParameterRegimeError(
            f"per-tier calibration: at most {TIERS_MAX} distinct budgets, got {size}")
    tg = check_targets(targets, size)
    tier_eps(base, delta=delta, randomizer=randomizer, methods=methods)  # arguments checked
    seen: dict[bytes, list[TierEps]] = {}

    def check_profile(prof: BudgetProfile) -> ScaleCheck:
        if prof.tiers.eps.size != size:  # two levels met: their targets no longer align
            return ScaleCheck(False, -math.inf, math.inf, "two budget levels coincide")
        try:
            tiers = tier_eps(prof, delta=delta, randomizer=randomizer, methods=methods)
        except ParameterRegimeError as err:
            return ScaleCheck(False, -math.inf, math.inf, str(err))
        seen[prof.eps.tobytes()] = tiers
        ok = all(t.eps <= float(g) for t, g in zip(tiers, tg, strict=True))
        score = min(eps_score(t.eps, float(g)) for t, g in zip(tiers, tg, strict=True))
        return ScaleCheck(ok, score, max(t.eps / float(g) for t, g in zip(tiers, tg,
                                                                           strict=True)))

    s_max = eps_local_max / base.eps_max
    res = search_scale(lambda s: check_profile(base.scaled(s)), start=min(1.0, s_max),
                       s_min=min(scale_min, s_max), s_max=s_max, rtol=rtol)
    if res.lo is None:
        raise ParameterRegimeError(
            f"per-tier targets {[float(v) for v in tg]} at delta = {delta:g} are not reachable "
            f"with local budgets down to {scale_min:g} times the base profile")
    profile = base.scaled(res.lo)
    evaluations = res.evaluations
    if refine and not res.capped:
        profile, more, _ = raise_tiers(check_profile, profile, tg, rtol, eps_local_max,
                                       float(res.checks[res.lo].value))
        evaluations += more
    tiers = seen.get(profile.eps.tobytes())
    if tiers is None:  # pragma: no cover - every accepted profile was checked
        tiers = tier_eps(profile, delta=delta, randomizer=randomizer, methods=methods)
    return TierCalibration(profile, tiers, tuple(float(v) for v in tg), float(res.lo),
                           evaluations)
