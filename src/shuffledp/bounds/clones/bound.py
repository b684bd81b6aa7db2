"""The ``clones`` bound's entry points: delta(eps) of the reduction (generic masses or the
mechanism-aware ones), its checks, its coverage and its diagnostics."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from shuffledp.bounds.base import Coverage
from shuffledp.bounds.clones.aware import VICTIM_GROUPS, aware_delta
from shuffledp.bounds.clones.aware import victim_groups as groups_of
from shuffledp.bounds.clones.count import (
    REL_STEP,
    TOL,
    CloneCount,
    _build_count,
    _check_tol_step,
    clone_count,
)
from shuffledp.bounds.clones.divergence import _evaluate
from shuffledp.bounds.clones.masses import _check_clone, _mass
from shuffledp.budgets import BudgetProfile
from shuffledp.errors import ParameterRegimeError
from shuffledp.families import Family, budget_tiers, domination, family_names, get_family
from shuffledp.poisson_binomial import group_probabilities

__all__ = ["clone_reduction_delta", "clones_delta", "clones_coverage", "check_victim_groups"]


def check_victim_groups(groups: Any) -> int:
    """The ``victim_groups`` option, checked: an integer in [1, 1024]."""
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)):
        raise TypeError(f"victim_groups must be an integer, got {groups!r}")
    if not 1 <= int(groups) <= 1024:
        raise ValueError(f"victim_groups must be in [1, 1024], got {groups!r}")
    return int(groups)


def _check_mechanism(mechanism: Any, profile: BudgetProfile | None = None) -> Family | None:
    """The family of the ``mechanism`` option (None: the generic masses)."""
    if mechanism is None:
        return None
    fam = get_family(mechanism)
    if not fam.aware:
        raise ValueError(f"mechanism must be a randomizer of the families "
                         f"{family_names(lambda f: f.aware)}, got {fam.spec!r}")
    if profile is not None and fam.needs_delta and profile.delta_min <= 0.0:
        raise ParameterRegimeError(
            f"clones with mechanism {fam.spec!r} needs delta_i > 0 for every user (the "
            f"{fam.display_name} mechanism's calibration), got min delta_i = "
            f"{profile.delta_min!r}")
    return fam


def clone_reduction_delta(
    *, pool: ArrayLike, eps_v: float, delta_v: float, eps: float, tol: float = TOL,
    rel_step: float = REL_STEP, counts: ArrayLike | None = None,
) -> float:
    """delta(eps) of the clone reduction for an explicit victim ``(eps_v, delta_v)`` and pool
    (``counts``: ``pool[i]`` is the clone mass of ``counts[i]`` users).

    Not cached; the registered bound uses :func:`clone_count` and the conservative victim.

    >>> d = clone_reduction_delta(pool=[1.0] * 99, eps_v=2.0, delta_v=0.0, eps=1.0)
    >>> 0.0 < d < 0.1
    True
    """
    _check_tol_step(tol, rel_step)
    if not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    values, counts = group_probabilities(pool, rel_step=rel_step, counts=counts)
    built: dict[tuple, CloneCount] = {}

    def get(t: float, direct: bool) -> CloneCount:
        if (t, direct) not in built:
            built[t, direct] = _build_count(float(eps_v), float(delta_v), values, counts,
                                            tol=t, direct=direct)
        return built[t, direct]

    return _evaluate(get, float(eps), float(tol))


def clones_delta(
    *, profile: BudgetProfile, eps: float, clone: str = "stronger", tol: float = TOL,
    rel_step: float = REL_STEP, mechanism: Any = None, victim_groups: int = VICTIM_GROUPS,
) -> float:
    """The registered ``delta(eps)``: conservative victim, cached clone-count pmf.

    ``tol`` is the truncation of the first evaluation; it is refined automatically where the
    charged error would matter (see :func:`_evaluate`).  With ``mechanism`` (a randomizer
    spec such as ``"laplace"`` or ``"gaussian"``, or a mechanism) the masses are that
    randomizer's own, per victim group (:mod:`shuffledp.bounds.aware`; ``clone`` is then
    not used).

    >>> from shuffledp import BudgetProfile
    >>> clones_delta(profile=BudgetProfile.identical(n=50, eps0=1.0), eps=1.0)
    0.0
    """
    if not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    _check_clone(clone)
    _check_tol_step(tol, rel_step)
    if mechanism is not None:
        return aware_delta(profile=profile, eps=float(eps), mechanism=mechanism, tol=float(tol),
                           rel_step=float(rel_step), groups=check_victim_groups(victim_groups))

    def get(t: float, direct: bool) -> CloneCount:
        return clone_count(profile, clone=clone, tol=t, rel_step=rel_step, direct=direct)

    return _evaluate(get, float(eps), float(tol))


def _check(*, profile: BudgetProfile, clone: str = "stronger", tol: float = TOL,
           rel_step: float = REL_STEP, mechanism: Any = None,
           victim_groups: int = VICTIM_GROUPS) -> None:
    _check_clone(clone)
    _check_tol_step(tol, rel_step)
    check_victim_groups(victim_groups)
    _check_mechanism(mechanism, profile)


def clones_coverage(
    *, family: Family, profile: BudgetProfile, clone: str = "stronger",
    tol: float = TOL, rel_step: float = REL_STEP, mechanism: Any = None,
    victim_groups: int = VICTIM_GROUPS,
) -> Coverage:
    """Whether ``clones`` is a guarantee when every user i runs ``family`` with budget eps_i.

    The reduction needs every user j to dominate the clone mass r_j it is given against every
    other user as victim (docs/theory.md, "The general clone reduction"):
    ``randomizer.clone_mass(eps_u, eps_j) >= r_j`` for all u != j, checked by
    :func:`shuffledp.families.domination`.  Local delta_i > 0 with a pure randomizer only
    makes the bound more conservative (smaller r_j, the victim's delta_v charged).  The
    Gaussian mechanism has the mixture form (docs/theory.md, Lemma 6): with identical budgets
    its pure parts are one eps-LDP randomizer, so ``standard`` covers it; with personalized
    budgets a less noisy user gives no clones of a noisier victim under the generic masses, so
    only ``mechanism="gaussian"`` covers it.  Other non-pure families (``gaussian_l2``) are
    not covered.  With ``mechanism=F``: covered iff F includes the family run.

    >>> from shuffledp import BudgetProfile
    >>> from shuffledp.families import get_family
    >>> p = BudgetProfile.from_arrays([0.5, 4.0])
    >>> clones_coverage(family=get_family("krr:3"), profile=p).covered
    False
    """
    _check_clone(clone)
    check_victim_groups(victim_groups)
    r = family
    if mechanism is not None:
        try:
            fam = _check_mechanism(mechanism, profile)
        except ParameterRegimeError as err:
            return Coverage(False, str(err))
        assert fam is not None
        if fam.includes(r):
            return Coverage(True, f"clones (mechanism {fam}): the masses of {fam} per victim "
                                  "group (docs/theory.md, 'Mechanism-aware clones')")
        return Coverage(False, f"clones (mechanism {fam}): computed for {fam}, which does not "
                               f"include {r} protocols")
    if r.mixture_form:  # (1 - delta) one eps-LDP randomizer + delta leak (Lemmas 5, 6)
        name = r.display_name or str(r)
        if profile.is_identical and clone == "standard" and profile.delta_max > 0.0:
            return Coverage(True, f"clones (standard): the {name} mechanism is (1 - delta) an "
                                  "eps-LDP randomizer + delta leak (docs/theory.md, Lemma 6)")
        return Coverage(False, (
            f"clones (generic masses) covers the {name} mechanism with identical budgets and "
            f"clone = 'standard' only; use the option mechanism = {r.spec!r} for personalized "
            "budgets (docs/theory.md, 'Local delta')"))
    if not r.pure:
        return Coverage(False, (
            f"{r} is not pure LDP: clones reads local delta_i as the mixture (1 - delta_i) "
            "pure + delta_i leak, a form not established for this randomizer "
            "(docs/theory.md, 'Local delta')"
        ))
    values, counts, min_delta = budget_tiers(profile)
    need = _mass(values, min_delta, clone)  # the largest r_j used at each budget
    dom = domination(r, eps=values, required=need, counts=counts)
    if dom.holds:
        return Coverage(True, f"clones ({clone}): every user dominates its clone mass ({r})")
    return Coverage(False, f"clones ({clone}): {dom.reason}")


def _diagnostics(
    *, profile: BudgetProfile, eps: float, delta: float, clone: str = "stronger",
    tol: float = TOL, rel_step: float = REL_STEP, mechanism: Any = None,
    victim_groups: int = VICTIM_GROUPS,
) -> dict[str, Any]:
    if mechanism is not None:
        return {"mechanism": get_family(mechanism).spec,
                "victim_groups": len(groups_of(profile, mechanism, groups=victim_groups))}
    cc = clone_count(profile, clone=clone, tol=tol, rel_step=rel_step)
    return {
        "clone": clone,
        "expected_clones": cc.expected_clones,
        "dropped_mass": cc.count.dropped_mass,
        "roundoff_l1": cc.count.error_l1,
        "clone_groups": cc.n_groups,
        "eps_victim": cc.eps_v,
    }
