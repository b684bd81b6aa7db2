"""Central guarantees per budget tier: the central eps of the victims of each budget of a
profile, for the randomizer the users run.

The mechanism-aware rigorous bounds are maxima over *victim groups* (ranges of budget tiers):
``clones`` with ``mechanism`` (docs/theory.md 4.1, Theorem 3) and ``blanket`` (docs/theory.md
15.1, Theorem 6 (iii)) bound the victims of each group by the group's own value, and the
profile's guarantee is the largest.  :func:`tier_eps` returns each group's value instead: a
user who chose a small budget is told its own, smaller, central eps.  Each tier's eps is the
smallest over the bounds that cover the randomizer of the eps of the group that holds it (a
minimum of valid bounds is valid); the eps of a group is found by the certified inversion of
the blanket bound (:func:`shuffledp.bounds.blanket.bound._solve_group`: the returned eps is
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
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

from shuffledp.budgets import BudgetProfile
from shuffledp.errors import ParameterRegimeError, short_repr
from shuffledp.validation import check_target_delta, describe

__all__ = ["TierEps", "tier_eps", "TIERS_MAX", "TIER_METHODS"]

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
    from shuffledp.bounds.blanket.bound import _solve_group

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
