"""Domination: does every user provide the clone mass a bound gives it, against every victim?

The clone reduction behind ``clones``, ``fmt21_*``, ``fmt23_*`` and the generic privacy
blanket gives user j a clone mass r_j; it is a guarantee for a family F only when every user j
*dominates* that share of every other user v's report (docs/theory.md, "The general clone
reduction"): ``F.clone_mass(eps_v, eps_j) >= r_j`` for all v != j.  :func:`domination` checks
it on a profile's budget tiers (:func:`budget_tiers`), using how the mass varies with the
victim's budget so that only the extreme victims are evaluated.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from shuffledp.caching import register_mapping
from shuffledp.families.base import MAX_DISTINCT_GENERAL, Family

__all__ = ["Domination", "domination", "budget_tiers"]

#: Relative slack of the domination comparisons (floating point of the closed forms).
_RTOL = 1e-12


@dataclass(frozen=True)
class Domination:
    """Outcome of :func:`domination`: ``holds``, and the worst (victim, user) budget pair with
    its clone mass and the required mass (``None`` when there is no pair or nothing to check).
    """

    holds: bool
    reason: str
    worst: tuple[float, float, float, float] | None = None

    def __bool__(self) -> bool:
        return self.holds


def _victim_extremes(
    values: NDArray[np.float64], counts: NDArray[np.int64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    """Per distinct budget b: the largest and smallest budget of the *other* users, and
    whether another user exists."""
    g = values.size
    top, bottom = values[-1], values[0]
    second_top = values[-2] if g >= 2 else np.nan
    second_bottom = values[1] if g >= 2 else np.nan
    is_top = (values == top) & (counts == 1)
    is_bottom = (values == bottom) & (counts == 1)
    hi = np.where(is_top, second_top, top)
    lo = np.where(is_bottom, second_bottom, bottom)
    exists = (counts >= 2) | (g >= 2)
    return hi, lo, exists


_TIERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
register_mapping("families.tiers", _TIERS)


def budget_tiers(profile: Any) -> tuple[NDArray[np.float64], NDArray[np.int64],
                                        NDArray[np.float64]]:
    """``(values, counts, min_delta)``: the distinct eps_i of a
    :class:`~shuffledp.budgets.BudgetProfile` (increasing), their multiplicities and the
    smallest delta_i among the users of each value; cached per profile object."""
    hit = _TIERS.get(profile)
    if hit is None:
        t = profile.tiers  # sorted by eps then delta: the first of each eps has the min delta
        if t.eps.size == 1:
            hit = (t.eps.copy(), t.counts.copy(), t.delta.copy())
        else:
            values, first = np.unique(t.eps, return_index=True)
            counts = np.add.reduceat(t.counts, first).astype(np.int64)
            hit = (values, counts, t.delta[first])
        _TIERS[profile] = hit
    return hit


def domination(randomizer: Family, *, eps: ArrayLike, required: ArrayLike,
               counts: ArrayLike | None = None) -> Domination:
    """Does every user j dominate mass ``required[j]`` against every other user as victim?

    Checks ``min over u != j of clone_mass(eps_u, eps_j) >= required[j]`` for all j (up to a
    relative 1e-12), using the family's monotonicity in the victim's budget (module
    docstring) so that only the extreme victims are evaluated; families without it (OUE)
    are checked on the full matrix of distinct budgets, up to ``MAX_DISTINCT_GENERAL``.
    With ``counts``, ``eps`` are the distinct budgets (increasing) with their multiplicities
    (see :func:`budget_tiers`) and ``required`` the largest requirement of each.

    >>> from shuffledp.families import get_family
    >>> domination(get_family("laplace"), eps=[0.5, 2.0], required=[0.01, 0.01]).holds
    False
    """
    e = np.asarray(eps, dtype=np.float64).ravel()
    req = np.broadcast_to(np.asarray(required, dtype=np.float64), e.shape)
    if counts is not None:  # eps are already the distinct budgets, with multiplicities
        values, need = e, req
        counts = np.asarray(counts, dtype=np.int64).ravel()
        if counts.shape != values.shape or np.any(np.diff(values) <= 0):
            raise ValueError("with counts, eps must be increasing distinct budgets, one count each")
        if int(counts.sum()) < 2:
            return Domination(True, "a single user has no clones to provide")
    else:
        if e.size < 2:
            return Domination(True, "a single user has no clones to provide")
        # per distinct (eps, required): the largest required mass matters
        order = np.lexsort((-req, e))
        e_s, r_s = e[order], req[order]
        values, first, counts = np.unique(e_s, return_index=True, return_counts=True)
        need = r_s[first]  # largest requirement among users with that budget
    how = randomizer.victim_order
    if how == "constant":
        mass = randomizer.clone_mass(values, values)
    elif how in ("decreasing", "zero_below"):
        hi, lo, exists = _victim_extremes(values, counts)
        mass = randomizer.clone_mass(np.where(exists, hi, values), values)
        if how == "zero_below":
            mass = np.where(lo < values, 0.0, mass)
        mass = np.where(exists, mass, np.inf)
    elif how == "equal_only":  # clones only between users with equal budgets
        mass = randomizer.clone_mass(values, values) if values.size == 1 else np.zeros(
            values.shape)
    elif how == "zero":
        mass = np.zeros(values.shape)
    else:  # general: the full matrix of distinct budgets
        if values.size > MAX_DISTINCT_GENERAL:
            return Domination(
                False,
                f"{randomizer.spec}: the clone mass is not monotone in the victim's budget, and "
                f"the profile has {values.size} distinct budgets (> {MAX_DISTINCT_GENERAL} "
                "checked exhaustively); group the budgets into tiers",
            )
        mat = randomizer.clone_mass(values[:, None], values[None, :])  # [victim, user]
        solo = counts == 1
        mat[np.arange(values.size), np.arange(values.size)] = np.where(
            solo, np.inf, np.diag(mat))
        mass = mat.min(axis=0)
    short = mass < need * (1.0 - _RTOL)
    if not short.any():
        return Domination(True, f"{randomizer.spec}: every user provides the required clone mass")
    j = int(np.argmax(short * (need - np.where(np.isfinite(mass), mass, 0.0))))
    victim = _worst_victim_for(randomizer, values, counts, j)
    worst = (victim, float(values[j]), float(mass[j]), float(need[j]))
    return Domination(
        False,
        f"{randomizer.spec}: a user with eps = {values[j]:.6g} provides clone mass "
        f"{mass[j]:.4g} against a victim with eps = {victim:.6g}, below the {need[j]:.4g} "
        "the bound uses",
        worst,
    )


def _worst_victim_for(randomizer: Family, values, counts, j: int) -> float:
    others = [i for i in range(values.size) if i != j or counts[j] >= 2]
    cand = values[others] if others else values[[j]]
    if cand.size > MAX_DISTINCT_GENERAL:
        cand = np.unique(np.concatenate([cand[:1000], cand[-1000:]]))
    m = randomizer.clone_mass(cand, np.full(cand.shape, values[j]))
    return float(cand[int(np.argmin(m))])
