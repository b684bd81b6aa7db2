"""Generic clone masses of the clone reduction: the ``clone`` option of ``clones``.

Every other user j is a clone with probability r_j (half "on input 0", half "on input 1"):

* ``"stronger"`` [FMT23, CCG24]: ``r_j = 2 (1 - delta_j) / (1 + e^{eps_j})``;
* ``"standard"`` [FMT21 Thm 3.2]: ``r_j = (1 - delta_j) e^{-eps_j}``.

The conservative victim for heterogeneous budgets (docs/theory.md section 4, Theorem 2):
eps_v = max eps_i, delta_v = max delta_i, and the pool "everyone but the single user with the
largest r_j" (:func:`worst_victim`).  Which randomizers these masses are a guarantee for is
:func:`shuffledp.bounds.clones.clones_coverage`'s question (domination,
:mod:`shuffledp.families.domination`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from shuffledp._lazy import lazy_module
from shuffledp.binomial import MIN_COMPLEMENT as _MIN_COMPLEMENT
from shuffledp.budgets import BudgetProfile
from shuffledp.poisson_binomial import group_with_complements

special = lazy_module("scipy.special")

__all__ = ["CLONE_KINDS", "clone_probabilities", "worst_victim", "check_victim_tier"]

CLONE_KINDS = ("stronger", "standard")


def _check_clone(clone: str) -> str:
    if clone not in CLONE_KINDS:
        raise ValueError(f"clone must be one of {list(CLONE_KINDS)}, got {clone!r}")
    return clone


def _mass(eps: NDArray[np.float64], delta: NDArray[np.float64], clone: str) -> NDArray:
    """r_j for budgets (eps_j, delta_j), vectorised; logistic forms, no overflow."""
    if clone == "stronger":
        return 2.0 * (1.0 - delta) * special.expit(-eps)
    return (1.0 - delta) * np.exp(-eps)


def _mass_complement(eps: NDArray[np.float64], delta: NDArray[np.float64],
                     clone: str) -> NDArray:
    """1 - r_j computed without cancellation (r_j is close to 1 for eps_j close to 0):
    stronger tanh(eps/2) + 2 delta expit(-eps); standard -expm1(-eps) + delta e^-eps; at
    least 1e-200 (eps_j below ~1e-200 is treated as a clone probability 1 - 1e-200)."""
    if clone == "stronger":
        out = np.tanh(eps / 2.0) + 2.0 * delta * special.expit(-eps)
    else:
        out = -np.expm1(-eps) + delta * np.exp(-eps)
    # floor: a clone probability lowered by at most 1e-200 (fewer clones, conservative); keeps
    # scipy's binomial functions out of the subnormal range (they overflow at p ~ 1e-308)
    return np.maximum(out, _MIN_COMPLEMENT)


def clone_probabilities(profile: BudgetProfile, *, clone: str = "stronger") -> NDArray:
    """Per-user clone probability r_j (see the module docstring for the two kinds); the
    per-user arrays, so up to N_MAX_ARRAYS users (the bounds read the budget tiers).

    ``stronger``: r_j = 2 (1 - delta_j) / (1 + e^{eps_j}) (twice the p_j of CCG24);
    ``standard``: r_j = (1 - delta_j) e^{-eps_j} (FMT21, Theorem 3.2).

    >>> from shuffledp import BudgetProfile
    >>> clone_probabilities(BudgetProfile.identical(n=2, eps0=0.0)).tolist()
    [1.0, 1.0]
    """
    _check_clone(clone)
    return _mass(profile.eps, profile.delta, clone)


def worst_victim(
    profile: BudgetProfile, *, clone: str = "stronger"
) -> tuple[float, float, NDArray[np.float64]]:
    """Conservative victim ``(eps_v, delta_v, pool)``: eps_v = max eps_i, delta_v = max
    delta_i, pool = every r_j except the single largest (see the module docstring); per user,
    so up to N_MAX_ARRAYS users (the bound itself groups the budget tiers).

    >>> from shuffledp import BudgetProfile
    >>> e, d, pool = worst_victim(BudgetProfile.from_arrays([1.0, 2.0, 3.0]))
    >>> e, d, pool.size
    (3.0, 0.0, 2)
    """
    r = clone_probabilities(profile, clone=clone)
    pool = np.delete(r, int(np.argmax(r)))
    return profile.eps_max, profile.delta_max, pool


def check_victim_tier(profile: BudgetProfile, victim_tier: object) -> int | None:
    """``victim_tier`` is None (the conservative victim) or the index of one budget tier of
    ``profile`` (``profile.tiers``, sorted by eps then delta)."""
    if victim_tier is None:
        return None
    if isinstance(victim_tier, bool) or not isinstance(victim_tier, (int, np.integer)):
        raise TypeError(f"victim_tier must be None or a tier index (int), got "
                        f"{type(victim_tier).__name__}")
    size = int(profile.tiers.eps.size)
    if not 0 <= int(victim_tier) < size:
        raise ValueError(f"victim_tier must be in [0, {size - 1}] (the profile's budget "
                         f"tiers), got {int(victim_tier)}")
    return int(victim_tier)


def _grouped_pool(
    profile: BudgetProfile, clone: str, rel_step: float, victim_tier: int | None = None
) -> tuple[float, float, NDArray[np.float64], NDArray[np.int64], NDArray[np.float64]]:
    """``(eps_v, delta_v, values, counts, complements)``: the worst victim and its pool,
    grouped and rounded down (:func:`shuffledp.poisson_binomial.group_with_complements`),
    with the accurate 1 - r of each group.  Identical users are one group without any
    per-user array, so n = 10^8 costs one binomial.

    ``victim_tier = k``: the victim is a user of budget tier k instead (its own budget
    ``(eps_k, delta_k)``, the pool everyone but one user of tier k): the reduction for the
    victims of that tier only, with masses that do not depend on the victim (``stronger``
    for randomizers whose blanket is common to all budgets, docs/theory.md 15.5)."""
    _check_clone(clone)
    t = profile.tiers  # the budget histogram: nothing per user
    if victim_tier is not None:
        k = check_victim_tier(profile, victim_tier)
        r = _mass(t.eps, t.delta, clone)
        comp = _mass_complement(t.eps, t.delta, clone)
        counts = t.counts.astype(np.int64).copy()
        counts[k] -= 1
        values, comps, grouped = group_with_complements(r, comp, rel_step=rel_step,
                                                        counts=counts)
        return float(t.eps[k]), float(t.delta[k]), values, grouped, comps
    if t.eps.size == 1:
        r = float(_mass(t.eps, t.delta, clone)[0])
        c = float(_mass_complement(t.eps, t.delta, clone)[0])
        return (profile.eps_max, profile.delta_max, np.array([r]),
                np.array([profile.n - 1], dtype=np.int64), np.array([c]))
    r = _mass(t.eps, t.delta, clone)
    comp = _mass_complement(t.eps, t.delta, clone)
    counts = t.counts.copy()
    counts[int(np.argmax(r))] -= 1  # the pool: everyone but one user of the largest mass
    values, comps, grouped = group_with_complements(r, comp, rel_step=rel_step, counts=counts)
    return profile.eps_max, profile.delta_max, values, grouped, comps
