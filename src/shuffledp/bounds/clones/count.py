"""The clone count C ~ PoissonBinomial(r_j, j != v): its rounded-down, truncated pmf and the
bounds on what was cut (docs/theory.md, "Error accounting").

The pool is grouped and rounded down onto a geometric grid (fewer clones: the delta can only
grow, so the bound stays an upper bound), each binomial cut to a window, the part of the pmf
cut off (``dropped_mass``) and the FFT round-off estimate (``error_l1``) charged at divergence 1
by :mod:`shuffledp.bounds.clones.divergence`.  Left of the computed window, Hoeffding's
comparison (1956, Theorem 4; docs/theory.md Lemma 4) bounds Pr[C <= k].
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from shuffledp._lazy import lazy_module
from shuffledp.bounds.clones.masses import _check_clone, _grouped_pool, check_victim_tier
from shuffledp.budgets import BudgetProfile, profile_digest
from shuffledp.caching import lru_get, lru_put, register_mapping
from shuffledp.poisson_binomial import (
    TruncatedPMF,
    group_probabilities,
    poisson_binomial_pmf_grouped,
)

stats = lazy_module("scipy.stats")

__all__ = ["TOL", "REL_STEP", "CloneCount", "clone_count", "clone_count_pmf", "clear_cache"]

#: Default truncation of the clone-count pmf (the first evaluation; refined on demand).
TOL = 1e-15
#: Default relative step of the rounding-down grid for the clone probabilities.
REL_STEP = 1e-3
#: Relative slack of the binomial cdf in Hoeffding's left-tail bound (measured error of Boost's
#: cdf: up to 5e-8 at n = 10^9, p = 1e-8; 1e-11 near p = 1/2).
_CDF_RTOL = 1e-6
#: Mass of the far left tail of the clone count charged at divergence 1 (Hoeffding bound);
#: far below the smallest accepted target delta (1e-30).
_FAR_TAIL = 1e-50


def _check_tol_step(tol: float, rel_step: float) -> None:
    if isinstance(tol, bool) or not (isinstance(tol, (int, float)) and 0.0 <= tol < 1e-3):
        raise ValueError(f"tol must be in [0, 1e-3), got {tol!r}")
    if isinstance(rel_step, bool) or not (
        isinstance(rel_step, (int, float)) and 0.0 <= rel_step <= 0.1
    ):
        raise ValueError(f"rel_step must be in [0, 0.1], got {rel_step!r}")


# --------------------------------------------------------------------------- the count pmf
@dataclass(frozen=True)
class CloneCount:
    """The (truncated, rounded-down) pmf of the clone count C and what the error accounting
    needs.

    ``count``: the computed window of the pmf of C (grouped pool); ``pool_size``,
    ``pool_mean``: number of users in the grouped pool and its mean (for Hoeffding's bound on
    the left tail); ``left_start``: k_min, ``left_cdf``: U(k) = min(D, Pr[Bin(N, mu/N) <= k])
    for k = k_min .. lo - 1; ``far_mass``: U(k_min - 1) (<= 1e-50), charged at divergence 1.
    """

    count: TruncatedPMF
    eps_v: float
    delta_v: float
    expected_clones: float
    n_groups: int
    pool_size: int = 0
    pool_mean: float = 0.0
    left_start: int = 0
    left_cdf: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    far_mass: float = 0.0
    tol: float = TOL
    direct: bool = False


_COUNT_CACHE: OrderedDict[tuple, CloneCount] = OrderedDict()
_CACHE_SIZE = 32
register_mapping("clones.counts", _COUNT_CACHE)


def clear_cache() -> None:
    """Empty the clone-count cache (for cold-start timings)."""
    _COUNT_CACHE.clear()


def clone_count_pmf(
    pool: ArrayLike, *, tol: float = TOL, rel_step: float = REL_STEP
) -> tuple[TruncatedPMF, int]:
    """Pmf of C ~ PoissonBinomial(pool), rounded down and truncated; also the group count.

    >>> r, g = clone_count_pmf([0.5, 0.5], tol=0.0)
    >>> np.round(r.pmf, 12).tolist(), g
    ([0.25, 0.5, 0.25], 1)
    """
    values, counts = group_probabilities(pool, rel_step=rel_step)
    return poisson_binomial_pmf_grouped(values, counts, tol=tol), int(values.size)


def _left_tail(
    count: TruncatedPMF, pool_size: int, pool_mean: float
) -> tuple[int, NDArray[np.float64], float]:
    """``(k_min, U(k_min..lo-1), U(k_min - 1))`` for the left of the computed window.

    F(k) = Pr[C <= k] <= D (everything below the window was dropped), and, by Hoeffding
    (1956, Theorem 4), F(k) <= Pr[Bin(N, mu/N) <= k] for k <= mu - 1 (N users of total mean
    mu).  k_min is the largest k <= lo with that binomial bound at k - 1 below 1e-50.
    """
    lo = int(count.offset)
    d = float(count.dropped_mass)
    if lo <= 0:
        return 0, np.zeros(0), 0.0
    p_bar = min(pool_mean / pool_size, 1.0) if pool_size > 0 else 0.0

    def bound(k: NDArray[np.int64]) -> NDArray[np.float64]:
        # Boost's cdf is accurate to about 5e-8 (relative) at tiny p and 10^9 users: 1e-6 slack
        b = np.minimum(1.0, stats.binom.cdf(k, pool_size, p_bar) * (1.0 + _CDF_RTOL))
        return np.where(k <= pool_mean - 1.0, b, 1.0)

    def far(k: int) -> float:  # U(k - 1)
        return 0.0 if k <= 0 else float(min(d, bound(np.array([k - 1]))[0]))

    if far(lo) <= _FAR_TAIL:
        k_min = lo
    else:  # largest k in [0, lo) with far(k) <= _FAR_TAIL (far is non-decreasing in k)
        a, b = 0, lo  # far(a) <= tail < far(b)
        while b - a > 1:
            m = (a + b) // 2
            if far(m) <= _FAR_TAIL:
                a = m
            else:
                b = m
        k_min = a
    ks = np.arange(k_min, lo, dtype=np.int64)
    return k_min, np.minimum(d, bound(ks)), far(k_min)


def _build_count(
    eps_v: float, delta_v: float, values: NDArray[np.float64], counts: NDArray[np.int64],
    *, tol: float, direct: bool, complements: NDArray[np.float64] | None = None,
) -> CloneCount:
    count = poisson_binomial_pmf_grouped(values, counts, tol=tol, direct=direct,
                                         complements=complements)
    count.pmf.setflags(write=False)
    size = int(counts[values > 0].sum())
    if complements is None:
        mean = float(np.dot(values, counts))
    else:  # the mean of the probabilities actually used (1 - complement), never above
        mean = float(np.dot(np.minimum(values, 1.0 - np.asarray(complements)), counts))
    k_min, left_cdf, far = _left_tail(count, size, mean)
    left_cdf.setflags(write=False)
    return CloneCount(count, float(eps_v), float(delta_v), mean, int(values.size), size, mean,
                      k_min, left_cdf, far, float(tol), bool(direct))


def clone_count(
    profile: BudgetProfile, *, clone: str = "stronger", tol: float = TOL,
    rel_step: float = REL_STEP, direct: bool = False, victim_tier: int | None = None,
) -> CloneCount:
    """The conservative victim and the pmf of its clone count, cached per (profile, options).

    The cache holds the last 32 results, keyed by a content hash of the profile's arrays
    (computed once per profile object), so one eps(delta) inversion builds the pmf once.
    ``direct=True`` convolves without FFT (no round-off estimate needed).  ``victim_tier``:
    the victim of one budget tier (:func:`~shuffledp.bounds.clones.masses._grouped_pool`).

    >>> from shuffledp import BudgetProfile
    >>> cc = clone_count(BudgetProfile.identical(n=101, eps0=0.0))
    >>> float(cc.count.pmf[-1]), bool(cc.count.pmf[:-1].sum() < 1e-190), cc.expected_clones
    (1.0, True, 100.0)
    """
    _check_clone(clone)
    _check_tol_step(tol, rel_step)
    victim_tier = check_victim_tier(profile, victim_tier)
    key = (profile_digest(profile), clone, float(tol), float(rel_step), bool(direct),
           victim_tier)
    hit = lru_get(_COUNT_CACHE, key)
    if hit is not None:
        return hit
    eps_v, delta_v, values, counts, comps = _grouped_pool(profile, clone, rel_step,
                                                          victim_tier)
    out = _build_count(eps_v, delta_v, values, counts, tol=tol, direct=direct,
                       complements=comps)
    return lru_put(_COUNT_CACHE, key, out, _CACHE_SIZE)
