"""The dominating pair of the clone reduction as explicit vectors, for PLD accounting
(docs/theory.md 3.5): :func:`clone_pair` and, for pairs too large to hold at once,
:func:`clone_pair_chunks`.  Used by :mod:`shuffledp.accounting` (dp_accounting export) and the
SGD accounting."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from shuffledp._lazy import lazy_module
from shuffledp.binomial import PMF_RTOL as _PMF_RTOL
from shuffledp.bounds.clones.count import REL_STEP, _check_tol_step, clone_count
from shuffledp.bounds.clones.masses import _check_clone
from shuffledp.budgets import BudgetProfile

special = lazy_module("scipy.special")
stats = lazy_module("scipy.stats")

__all__ = ["clone_pair", "clone_pair_chunks"]


def clone_pair(
    profile: BudgetProfile,
    *,
    clone: str = "stronger",
    tol: float = 1e-12,
    rel_step: float = REL_STEP,
    max_points: int = 5_000_000,
    victim_tier: int | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """The dominating pair (P, Q) of the reduction as explicit vectors, for PLD accounting.

    Returns ``(p, q, tail_mass)``: ``p[i]``, ``q[i]`` are the probabilities of the i-th
    outcome ``(c, a)`` (flattened, c increasing, then a) under the victim's input x^0 / x^1,
    already multiplied by ``(1 - delta_v)`` and by the (rounded-down, truncated) Pr[C = c];
    for each c only ``a`` in a window symmetric about ``(c+1)/2`` is kept.  Both vectors are
    sub-probabilities missing the same mass ``tail_mass`` (mirror symmetry
    ``Q_c(a) = P_c(c+1-a)``): the victim's delta_v, the cut-off part of C and of every A,
    and the round-off estimate.  Charging ``p``'s missing mass at privacy loss +infinity
    (and ``q``'s at -infinity) gives a pessimistic privacy loss distribution, e.g. for
    ``dp_accounting.pld.privacy_loss_distribution.from_two_probability_mass_functions``
    (take ``np.log`` of the entries); then for every eps,
    ``hockey_stick(p, q, eps) + tail_mass >= clones_delta(...)`` up to the round-off slack.

    Raises :class:`ParameterRegimeError` when the support exceeds ``max_points`` (raise
    ``tol`` or lower n).  ``victim_tier = k``: the pair of a victim of budget tier k (its
    own budget, the pool everyone but one user of that tier; :func:`clone_count`).

    >>> from shuffledp import BudgetProfile
    >>> from shuffledp.bounds.clones import clones_delta
    >>> from shuffledp.numerics import hockey_stick
    >>> prof = BudgetProfile.identical(n=200, eps0=1.0)
    >>> p, q, tail = clone_pair(prof)
    >>> d = clones_delta(profile=prof, eps=0.5)
    >>> bool(abs(hockey_stick(p, q, 0.5) + tail - d) < 5e-9)
    True
    """
    from shuffledp.errors import ParameterRegimeError

    plan = _pair_plan(profile, clone=clone, tol=tol, rel_step=rel_step,
                      victim_tier=victim_tier)
    total = int(plan.sizes.sum())
    if total > max_points:
        raise ParameterRegimeError(
            f"clone_pair: the support has {total} points > max_points = {max_points}; "
            f"raise tol (got {tol:g}) or max_points, or use clone_pair_chunks"
        )
    p, q = _pair_entries(plan, np.arange(plan.c.size))
    return p, q, plan.tail


@dataclass(frozen=True)
class _PairPlan:
    """The clone counts c kept (weights w), each one's window [lo, hi] of a, the victim's
    q_v = e^{eps_v}/(1+e^{eps_v}) and 1 - q_v, the weight (1 - delta_v), and the missing mass."""

    c: NDArray[np.int64]
    w: NDArray[np.float64]
    lo: NDArray[np.int64]
    hi: NDArray[np.int64]
    sizes: NDArray[np.int64]
    q_v: float
    q1: float
    keep_v: float
    tail: float


def _pair_plan(profile: BudgetProfile, *, clone: str, tol: float,
               rel_step: float, victim_tier: int | None = None) -> _PairPlan:
    _check_clone(clone)
    _check_tol_step(tol, rel_step)
    cc = clone_count(profile, clone=clone, tol=tol / 2.0, rel_step=rel_step,
                     victim_tier=victim_tier)
    w = cc.count.pmf
    c = cc.count.offset + np.arange(w.size, dtype=np.int64)
    keep = w > 0
    w, c = w[keep], c[keep]
    budget = tol / 2.0
    lo = stats.binom.ppf(budget / 2.0, c, 0.5)
    lo = np.clip(np.nan_to_num(lo, nan=0.0), 0, c).astype(np.int64)
    lo = np.where(c <= 64, 0, lo)
    hi = c + 1 - lo
    sizes = hi - lo + 1
    q_v = float(special.expit(cc.eps_v))
    q1 = float(special.expit(-cc.eps_v))
    # mass of P_c outside [lo, hi]: a <= lo - 1 or a >= hi + 1
    low_x, up_x = stats.binom.cdf, stats.binom.sf  # X ~ Bin(c, 1/2)
    out_c = (
        q_v * (low_x(lo - 2, c, 0.5) + up_x(hi - 1, c, 0.5))
        + q1 * (low_x(lo - 1, c, 0.5) + up_x(hi, c, 0.5))
    )
    # missing mass: truncation, FFT round-off, the cut A-windows, and the relative error
    # allowance of the binomial pmf entries (as in clones_delta)
    pure_tail = (cc.count.dropped_mass + cc.count.error_l1 + float(np.dot(w, out_c))
                 + _PMF_RTOL * float(w.sum()))
    tail = cc.delta_v + (1.0 - cc.delta_v) * pure_tail
    return _PairPlan(c, w, lo, hi, sizes, q_v, q1, 1.0 - cc.delta_v, float(min(tail, 1.0)))


def _pair_entries(plan: _PairPlan, idx: NDArray[np.int64]) -> tuple[NDArray, NDArray]:
    """The flattened (p, q) entries of the clone counts ``plan.c[idx]`` (c increasing, then
    a), as in :func:`clone_pair`."""
    c, lo, sizes, w = plan.c[idx], plan.lo[idx], plan.sizes[idx], plan.w[idx]
    total = int(sizes.sum())
    owner = np.repeat(np.arange(c.size), sizes)
    starts = np.cumsum(sizes) - sizes
    a = lo[owner] + np.arange(total) - starts[owner]
    mw = (c + 1)[owner]
    base = 2.0 * stats.binom.pmf(a, mw, 0.5) / mw
    scale = plan.keep_v * w[owner] * base
    p = scale * (plan.q_v * a + plan.q1 * (mw - a))
    q = scale * (plan.q1 * a + plan.q_v * (mw - a))
    return p, q


def clone_pair_chunks(
    profile: BudgetProfile,
    *,
    clone: str = "stronger",
    tol: float = 1e-12,
    rel_step: float = REL_STEP,
    chunk_points: int = 2_000_000,
    victim_tier: int | None = None,
) -> tuple[Iterator[tuple[NDArray[np.float64], NDArray[np.float64]]], float]:
    """:func:`clone_pair` in pieces of at most about ``chunk_points`` outcomes (whole clone
    counts each), for pairs too large to hold at once (n = 10^6 and more): returns
    ``(iterator of (p, q), tail_mass)``; concatenating the pieces gives :func:`clone_pair`.

    >>> from shuffledp import BudgetProfile
    >>> prof = BudgetProfile.identical(n=300, eps0=1.0)
    >>> pieces, tail = clone_pair_chunks(prof, chunk_points=1000)
    >>> p, q, t = clone_pair(prof)
    >>> parts = list(pieces)
    >>> len(parts) > 1, bool(np.array_equal(np.concatenate([x for x, _ in parts]), p)), t == tail
    (True, True, True)
    """
    if isinstance(chunk_points, bool) or not isinstance(chunk_points, (int, np.integer)) or (
        chunk_points < 1
    ):
        raise ValueError(f"chunk_points must be a positive integer, got {chunk_points!r}")
    plan = _pair_plan(profile, clone=clone, tol=tol, rel_step=rel_step,
                      victim_tier=victim_tier)
    ends = np.cumsum(plan.sizes)

    def pieces():
        start = 0
        while start < plan.c.size:
            done = int(ends[start - 1]) if start else 0
            stop = int(np.searchsorted(ends, done + chunk_points, side="right"))
            stop = max(stop, start + 1)
            yield _pair_entries(plan, np.arange(start, stop))
            start = stop

    return pieces(), plan.tail
