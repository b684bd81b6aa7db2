"""The pools of the ``blanket`` bound: the users' blanket masses merged into classes.

Any pool whose every user has at most its own mass is valid (fewer blanket reports: a larger
bound, docs/theory.md 15, Theorem 6 (ii)); the functions here only decide how much is lost
(docs/theory.md 15.3 (N8)).  ``_floored`` raises a case's cells where that cannot change A.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
from numpy.typing import NDArray

from shuffledp.bounds.clones.aware import UserBins, runs_in_groups
from shuffledp.caching import lru_by_arrays, register_mapping
from shuffledp.families.blanket import Cells

__all__ = ["MAX_CLASSES"]

#: Largest number of distinct blanket masses given to the FFT (rounded down beyond).
MAX_CLASSES = 128
#: Entries of the cache of :func:`_merged_pool` (time only).
POOL_CACHE = 256
_POOLS: OrderedDict[tuple, tuple] = OrderedDict()
register_mapping("blanket.pools", _POOLS)


def _merged_pool(masses: NDArray[np.float64], counts: NDArray[np.int64],
                 victim: int) -> tuple[NDArray, NDArray]:
    """:func:`_merged` of ``masses`` and ``counts`` less one user of the class ``victim``,
    cached while the same two read-only array objects come back (the families' cached masses
    and a plan's counts: the probes of a solve at other eps; time only;
    :func:`shuffledp.caching.lru_by_arrays`)."""
    def compute() -> tuple[NDArray, NDArray]:
        cnt = counts.copy()
        cnt[victim] -= 1
        return _merged(masses, cnt)

    return lru_by_arrays(_POOLS, (masses, counts), int(victim), compute, POOL_CACHE)


def _merged(masses: NDArray[np.float64], counts: NDArray[np.int64]) -> tuple[NDArray, NDArray]:
    """Distinct masses with summed counts; beyond MAX_CLASSES distinct values, each rounded
    down to the smallest mass of its class, the classes contiguous ranges of the sorted
    masses chosen by :func:`_class_starts` (conservative: smaller masses, docs/theory.md
    15.3)."""
    keep = (masses > 0) & (counts > 0)
    m, c = masses[keep], counts[keep].astype(np.float64)
    if m.size == 0:
        return m, c
    uniq, inv = np.unique(m, return_inverse=True)
    c = np.bincount(inv, weights=c)
    if uniq.size <= MAX_CLASSES:
        return uniq, c
    starts = _class_starts(uniq, c, MAX_CLASSES)
    return uniq[starts], np.add.reduceat(c, starts)


def _class_starts(u: NDArray[np.float64], c: NDArray[np.float64], k: int) -> NDArray[np.int64]:
    """The first indices of at most ``k`` contiguous classes of the sorted distinct masses
    ``u`` (counts ``c``), each class's users to be given its smallest mass: the classes are
    split in rounds, each splitting every class at the index that saves the most expected
    blanket reports, ``(u_s - u_first) (count from s to the class's end)``, the largest
    savings first while fewer than ``k`` classes.  Any classes give a valid (rounded-down)
    pool; these lose 0.3-0.8% of the expected reports where a geometric grid of ``k`` values
    lost 1.3-1.6% (docs/theory.md 15.3; time only otherwise)."""
    n = u.size
    cum = np.concatenate([[0.0], np.cumsum(c)])
    pos = np.arange(n)
    starts = np.zeros(1, dtype=np.int64)
    while starts.size < k:
        cls = np.searchsorted(starts, pos, side="right") - 1
        ends = np.append(starts[1:], n)
        saved = (u - u[starts[cls]]) * (cum[ends[cls]] - cum[pos])
        top = np.maximum.reduceat(saved, starts)
        idx = np.flatnonzero((saved == top[cls]) & (saved > 0.0))
        if idx.size == 0:
            break
        first = cls[idx]
        cand = idx[np.concatenate([[True], first[1:] != first[:-1]])]  # one split per class
        room = k - starts.size
        if cand.size > room:
            cand = cand[np.argpartition(-saved[cand], room - 1)[:room]]
        starts = np.sort(np.concatenate([starts, cand]))
    return starts


def _floored(cells: Cells, n_others: float) -> Cells | None:
    """The cells with l raised to ``-2 (n_others + 1) max l``: a pointwise increase (so the law
    still dominates, docs/theory.md 15.2) that leaves A unchanged up to lattice rounding,
    because ``X + R <= 0`` below it; None when l <= 0 (A = 0)."""
    top = float(cells.hi.max())
    if top <= 0.0:
        return None
    floor = -2.0 * (n_others + 1.0) * top
    lo, hi, mu = cells.lo, cells.hi, cells.mean
    if float(lo.min()) >= floor:
        return cells
    # the new conditional mean E[max(l, floor)] is at most the chord of the convex map
    # y -> max(y, floor) over [lo, hi] at mu (a cell straddling the floor), floor below it
    with np.errstate(divide="ignore", invalid="ignore"):
        chord = np.where(hi > lo, ((hi - mu) * floor + (mu - lo) * hi) / (hi - lo), hi)
    mean = np.where(hi <= floor, floor, np.where(lo >= floor, mu, np.maximum(chord, mu)))
    return Cells(cells.mass, np.maximum(lo, floor), np.maximum(hi, floor), mean,
                 cells.rel_error, cells.abs_error, cells.mean_error)


def _coarsened(bins: UserBins, width: int) -> UserBins:
    """The noise-scaled families' classes (the clones' bins, up to 65,536, or one per tier up
    to 131,072) joined ``width`` at a time inside each group, each group's first class alone:
    a joined class's noise scales span those of its parts (``sigma_a`` the largest,
    ``sigma_b`` the smallest), so the masses of :mod:`~shuffledp.families.gaussian_blanket`,
    the smallest over a class's scales, are at most its parts' (a valid pool, docs/theory.md
    15.3).  The blanket's masses are then rounded onto at most ``MAX_CLASSES`` values, so
    finer classes buy almost nothing (measured in tests/bounds/test_blanket.py)."""
    assert bins.sigma_a is not None and bins.sigma_b is not None
    first, last, cls_edges = runs_in_groups(bins.edges, bins.counts.size, width)
    log_kappa = (None if bins.log_kappa is None
                 else np.minimum.reduceat(bins.log_kappa, first))
    return UserBins(np.add.reduceat(bins.counts, first).astype(np.int64), bins.eps_a[first],
                    bins.eps_b[last], np.maximum.reduceat(bins.delta, first),
                    cls_edges, False,
                    np.maximum.reduceat(bins.sigma_a, first),
                    np.minimum.reduceat(bins.sigma_b, first), log_kappa)
