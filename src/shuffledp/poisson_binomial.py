"""Probability mass function of a sum of independent Bernoullis (Poisson-binomial law).

``S = B_1 + ... + B_n`` with independent ``B_j ~ Bernoulli(p_j)``.  Three evaluation paths:

* :func:`poisson_binomial_pmf_exact`: the direct O(n^2) recursion
  ``f_j(k) = (1 - p_j) f_{j-1}(k) + p_j f_{j-1}(k - 1)`` (all terms >= 0, so every entry is
  accurate to a relative ``O(n u)``, ``u`` the unit round-off).  The reference for tests.
* :func:`poisson_binomial_pmf_tree`: the same law for large ``n`` with the probabilities kept
  exactly: the recursion inside blocks of 64 Bernoullis (vectorised over blocks), then a
  balanced tree of batched FFT convolutions, trimming both tails of every intermediate pmf.
* :func:`poisson_binomial_pmf`: the grouped path for upper bounds.  The probabilities are
  rounded **down** onto the geometric grid ``(1 + rel_step)^k`` (:func:`group_probabilities`),
  users with the same grid value form one binomial, each binomial is cut to a central window,
  and the binomials are convolved pairwise in a tree.  Rounding down gives a stochastically
  smaller sum; a caller for which "smaller" is the conservative direction (the clone count of
  :mod:`shuffledp.bounds.clones`: fewer clones, larger delta) stays an upper bound.

Every path returns a :class:`TruncatedPMF` ``(offset, pmf, dropped_mass, error_l1)``:
``pmf[i]`` approximates ``Pr[S = offset + i]``.  ``dropped_mass`` is the probability removed by
the truncations, tracked as a number (``d = d_left + d_right - d_left d_right + trimmed`` at
every tree node, so no ``1 - sum`` cancellation).  ``error_l1`` bounds the l1 norm of the
floating-point error of the kept entries: zero for the exact recursion and for direct
convolutions (non-negative sums), and for an FFT convolution of ``a`` and ``b`` the standard
estimate ``||fl(a * b) - a * b||_2 <= 5 u log2(N) min(||a||_2, ||b||_2)`` (after
Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., Chapter 24, with
``||b||_1 <= 1``), which later convolutions with sub-probability vectors do not enlarge,
converted to l1 by ``sqrt(len)``.  It is an estimate of round-off with a generous
constant, not a proof.  Round-off negatives are clipped to 0 (this only moves an entry
towards its true value, which is >= 0).

Two facts about the truncated vector ``t`` against the true pmf ``f``: ``0 <= f - t``
entrywise (up to ``error_l1``), and ``sum(f - t) = dropped_mass``.  Upper bounds charge
``dropped_mass + error_l1`` at the largest possible loss; lower bounds subtract it times the
largest coefficient with which an entry enters their formula.

>>> pmf = poisson_binomial_pmf_exact([0.5, 0.5])
>>> pmf.tolist()
[0.25, 0.5, 0.25]
>>> r = poisson_binomial_pmf([0.2] * 10, tol=0.0)
>>> r.offset, round(float(r.pmf.sum()), 12), r.dropped_mass
(0, 1.0, 0.0)
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from shuffledp._lazy import lazy_module
from shuffledp.binomial import binom_cdf, binom_pmf, binom_sf

special = lazy_module("scipy.special")
sfft = lazy_module("scipy.fft")
stats = lazy_module("scipy.stats")

__all__ = [
    "TruncatedPMF",
    "group_probabilities",
    "group_with_complements",
    "binomial_window",
    "binomial_windows",
    "convolve_pmfs",
    "poisson_binomial_pmf",
    "poisson_binomial_pmf_grouped",
    "poisson_binomial_pmf_tree",
    "lattice_sum_pmf_tree",
    "poisson_binomial_pmf_exact",
]

_U = float(np.finfo(float).eps) / 2.0  # unit round-off
#: Convolutions with a factor shorter than this are done directly (exact up to O(u) relative).
_DIRECT_MAX = 64
#: ... or when the product of the lengths is at most this (cheap enough, and exact).
_DIRECT_WORK = 1 << 18
#: Above this many groups the grouped path switches to the batched tree.
_MAX_PAIRWISE_GROUPS = 4096


class TruncatedPMF(NamedTuple):
    """A pmf on ``offset, offset + 1, ...`` with the truncated mass and a round-off bound."""

    offset: int
    pmf: NDArray[np.float64]
    dropped_mass: float
    error_l1: float = 0.0

    @property
    def support(self) -> NDArray[np.int64]:
        """The values ``offset + i`` that ``pmf[i]`` refers to."""
        return np.arange(self.offset, self.offset + self.pmf.size, dtype=np.int64)

    @property
    def complete(self) -> bool:
        """True when nothing was truncated (the window is the whole support)."""
        return self.dropped_mass == 0.0


def _check_probs(probs: ArrayLike, name: str = "probs") -> NDArray[np.float64]:
    try:
        p = np.asarray(probs, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be numeric, got {probs!r}") from err
    p = np.atleast_1d(p)
    if p.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {p.shape}")
    bad = ~np.isfinite(p) | (p < 0) | (p > 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must lie in [0, 1], got {name}[{i}] = {p[i]!r}")
    return p


def _check_tol(tol: float) -> float:
    if not (isinstance(tol, (int, float, np.floating)) and 0.0 <= tol < 1.0):
        raise ValueError(f"tol must be in [0, 1), got {tol!r}")
    return float(tol)


# --------------------------------------------------------------------------- grouping
def group_probabilities(
    probs: ArrayLike, *, rel_step: float = 1e-3, max_exact_groups: int = 256,
    counts: ArrayLike | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Distinct values and multiplicities of ``probs``, rounded down onto a geometric grid.
    ``counts``: ``probs[i]`` stands for ``counts[i]`` Bernoullis (a budget histogram; the
    result is the one of the expanded list).

    When ``probs`` has at most ``max_exact_groups`` distinct values, or ``rel_step == 0``,
    the values are kept exactly.  Otherwise each ``p > 0`` is replaced by the largest grid
    point ``g = (1 + rel_step)^k <= p`` (``k`` integer), so ``p / (1 + rel_step) < g <= p``.
    Zeros are dropped (they add nothing to the sum).  Returns ``(values, counts)`` with
    values increasing.

    >>> v, c = group_probabilities([0.3, 0.3, 0.1, 0.0])
    >>> v.tolist(), c.tolist()
    ([0.1, 0.3], [1, 2])
    >>> v, c = group_probabilities([0.3, 0.3001], rel_step=1e-2, max_exact_groups=1)
    >>> len(v), bool(v[0] <= 0.3)
    (1, True)
    """
    p = _check_probs(probs)
    if not (math.isfinite(rel_step) and rel_step >= 0):
        raise ValueError(f"rel_step must be finite and >= 0, got {rel_step!r}")
    if max_exact_groups < 1:
        raise ValueError(f"max_exact_groups must be >= 1, got {max_exact_groups!r}")
    if counts is None:
        p = p[p > 0]
        values, counts = np.unique(p, return_counts=True)
    else:
        w = _check_counts(counts, p.size)
        keep = (p > 0) & (w > 0)
        values, inverse = np.unique(p[keep], return_inverse=True)
        counts = np.bincount(inverse.ravel(), weights=w[keep], minlength=values.size)
    if rel_step == 0 or values.size <= max_exact_groups:
        return values, np.asarray(counts).astype(np.int64)
    h = math.log1p(rel_step)
    k = np.floor(np.log(values) / h)
    g = np.exp(k * h)
    over = g > values  # floating point: make sure we rounded down
    while over.any():
        k = np.where(over, k - 1, k)
        g = np.exp(k * h)
        over = g > values
    ks, inverse = np.unique(k, return_inverse=True)
    grouped_counts = np.bincount(inverse, weights=counts).astype(np.int64)
    return np.exp(ks * h), grouped_counts


def _check_counts(counts: ArrayLike, size: int) -> NDArray[np.int64]:
    w = np.asarray(counts)
    if w.shape != (size,) or not np.issubdtype(w.dtype, np.integer) or (w < 0).any():
        raise ValueError(f"counts must be non-negative integers, one per probability ({size}), "
                         f"got {short_counts(w)}")
    return w.astype(np.int64)


def group_with_complements(
    probs: ArrayLike, complements: ArrayLike, *, rel_step: float = 1e-3,
    max_exact_groups: int = 256, counts: ArrayLike | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """:func:`group_probabilities` that also carries each group's 1 - value accurately:
    ``(values, complements, counts)``.  Exact groups keep the caller's complement (of the
    first user with that value); a grid point g = (1 + rel_step)^k gets 1 - g =
    ``-expm1(k log1p(rel_step))``.

    >>> v, c, n = group_with_complements([1 - 1e-13, 0.5], [1e-13, 0.5])
    >>> c.tolist(), n.tolist()
    ([0.5, 1e-13], [1, 1])
    """
    p = _check_probs(probs)
    comp = _check_probs(complements, "complements")
    if comp.shape != p.shape:
        raise ValueError(f"complements must have one entry per probability ({p.size}), got "
                         f"shape {comp.shape}")
    values, grouped = group_probabilities(p, rel_step=rel_step, max_exact_groups=max_exact_groups,
                                          counts=counts)
    keep = p > 0 if counts is None else (p > 0) & (_check_counts(counts, p.size) > 0)
    pk, ck = p[keep], comp[keep]
    uniq, first = np.unique(pk, return_index=True)
    if uniq.size == values.size and np.array_equal(uniq, values):  # kept exactly
        return values, ck[first], grouped
    h = math.log1p(rel_step)
    ks = np.round(np.log(values) / h)
    return values, -np.expm1(ks * h), grouped


# --------------------------------------------------------------------------- pieces
def binomial_window(m: int, p: float, *, tol: float) -> TruncatedPMF:
    """``Bin(m, p)`` cut to the window ``[lo, hi]`` with each tail below ``tol / 2``.

    ``lo`` is the ``tol/2`` quantile and ``hi`` the mirrored one (``m - `` the quantile of
    ``Bin(m, 1 - p)``; scipy's ``isf`` is inaccurate that far out).  The dropped mass
    ``cdf(lo - 1) + sf(hi)`` is computed directly.  ``tol = 0`` keeps the whole support.

    >>> w = binomial_window(1000, 0.5, tol=1e-12)
    >>> w.offset > 0, w.dropped_mass < 1e-12
    (True, True)
    """
    tol = _check_tol(tol)
    if m < 0:
        raise ValueError(f"m must be >= 0, got {m!r}")
    return binomial_windows(np.array([m]), np.array([float(p)]), tol)[0]


def binomial_windows(
    ms: NDArray[np.int64], ps: NDArray[np.float64], tol: float,
    complements: NDArray[np.float64] | None = None,
) -> list[TruncatedPMF]:
    """Vectorised :func:`binomial_window` over groups ``Bin(ms[i], ps[i])`` (one scipy call
    per quantity), each tail of each group below ``tol / 2``.

    ``complements[i]`` = 1 - ps[i] computed accurately by the caller (e.g. ``expit(-eps)``);
    a group with p > 1/2 is evaluated as the mirror image of ``Bin(m, 1 - p)``, so that its
    small complement never goes through ``1 - p`` in floating point (which loses all relative
    accuracy of 1 - p when p is within 1e-10 of 1).

    >>> [w.offset for w in binomial_windows(np.array([10, 1000]), np.array([0.5, 0.5]), 1e-9)]
    [0, 404]
    >>> w = binomial_windows(np.array([3]), np.array([1 - 1e-13]), 0.0, np.array([1e-13]))[0]
    >>> w.offset, round(float(w.pmf[2] / 3e-13), 9)  # Pr[X = 2] = 3 p^2 (1 - p), accurate
    (0, 1.0)
    """
    ms = np.asarray(ms, dtype=np.int64)
    ps = np.asarray(ps, dtype=np.float64)
    cs = 1.0 - ps if complements is None else np.asarray(complements, dtype=np.float64)
    flip = ps > 0.5
    pp = np.where(flip, cs, ps)  # the smaller of p and 1 - p, accurate
    if tol > 0.0:
        lo, hi = _tail_cuts(ms, pp, tol / 2.0)
        small = ms <= 2 * _DIRECT_MAX
        lo = np.where(small, 0, lo)
        hi = np.where(small, ms, hi)
    else:
        lo = np.zeros_like(ms)
        hi = ms.copy()
    sizes = hi - lo + 1
    owner = np.repeat(np.arange(ms.size), sizes)
    starts = np.cumsum(sizes) - sizes
    k = lo[owner] + np.arange(int(sizes.sum())) - starts[owner]
    pmf = binom_pmf(k, ms[owner], pp[owner])
    left = np.where(lo > 0, binom_cdf(lo - 1, ms, pp), 0.0)
    right = np.where(hi < ms, binom_sf(hi, ms, pp), 0.0)
    parts = np.split(pmf, np.cumsum(sizes)[:-1])
    out = []
    for i in range(ms.size):
        if flip[i]:  # X = m - Y, Y ~ Bin(m, 1 - p): reverse the window of Y
            out.append(TruncatedPMF(int(ms[i] - hi[i]), parts[i][::-1].copy(),
                                    float(left[i] + right[i]), 0.0))
        else:
            out.append(TruncatedPMF(int(lo[i]), parts[i], float(left[i] + right[i]), 0.0))
    return out


def _tail_cuts(
    ms: NDArray[np.int64], ps: NDArray[np.float64], tail: float
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Per group, ``lo`` = the largest x with ``Pr[X <= x - 1] <= tail`` and ``hi`` = the
    smallest x with ``Pr[X > x] <= tail``, ``X ~ Bin(m, p)``, by integer bisection on scipy's
    binomial cdf and sf (accurate far into the tails, unlike ``ppf`` for p close to 0 or 1)."""
    cdf, sf = binom_cdf, binom_sf
    # lo: invariant cdf(a - 1) <= tail < cdf(b - 1), with cdf(-1) = 0
    a = np.zeros_like(ms)
    b = ms + 1
    ok_all = cdf(ms - 1, ms, ps) <= tail
    a = np.where(ok_all, ms, a)
    b = np.where(ok_all, ms + 1, b)
    while np.any(b - a > 1):
        m = (a + b) // 2
        good = cdf(m - 1, ms, ps) <= tail
        a, b = np.where(good, m, a), np.where(good, b, m)
    lo = a
    # hi: invariant sf(b) <= tail < sf(a), with sf(m) = 0; search in [lo - 1, m]
    a = np.maximum(lo - 1, -1)
    b = ms.copy()
    while np.any(b - a > 1):
        m = (a + b) // 2
        good = sf(m, ms, ps) <= tail
        a, b = np.where(good, a, m), np.where(good, m, b)
    hi = np.maximum(b, lo)
    return lo.astype(np.int64), hi.astype(np.int64)


def _fft_err_l2(a: NDArray[np.float64], b: NDArray[np.float64], nfft: int) -> float:
    return 5.0 * _U * math.log2(max(nfft, 2)) * float(
        min(np.linalg.norm(a), np.linalg.norm(b))
    )


def convolve_pmfs(
    a: NDArray[np.float64], b: NDArray[np.float64]
) -> tuple[NDArray[np.float64], float]:
    """Convolution of two non-negative vectors and an l2 bound on its round-off.

    Direct summation when the shorter factor has at most 64 entries or the product of the
    lengths is at most 2^18 (round-off bound 0: all
    terms are >= 0, so the relative error is O(u)), otherwise one real FFT of the full length
    (``scipy.fft``), with negatives clipped to 0.

    >>> c, err = convolve_pmfs(np.array([0.5, 0.5]), np.array([0.5, 0.5]))
    >>> c.tolist(), err
    ([0.25, 0.5, 0.25], 0.0)
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    short, long_ = (a, b) if a.size <= b.size else (b, a)
    if short.size <= _DIRECT_MAX or a.size * b.size <= _DIRECT_WORK:
        return np.convolve(long_, short), 0.0
    out_len = a.size + b.size - 1
    nfft = sfft.next_fast_len(out_len, real=True)
    c = sfft.irfft(sfft.rfft(a, nfft) * sfft.rfft(b, nfft), nfft)[:out_len]
    np.maximum(c, 0.0, out=c)
    return c, _fft_err_l2(a, b, nfft)


def _bernstein_halfwidth(var: float | NDArray[np.float64], budget: float, span: int = 1):
    """``t`` with ``exp(-t^2 / (2 (var + b t / 3))) = budget`` (Bernstein's inequality).

    For a sum ``S`` of independent variables with ``|X_j - E X_j| <= b`` (``b = span``) and
    variance ``var``, ``Pr[S - E S >= t] <= exp(-t^2 / (2 (var + b t / 3)))`` and the same for
    the lower tail (Bernstein; Boucheron, Lugosi, Massart, *Concentration Inequalities*, 2013,
    Theorem 2.10 and Corollary 2.11 with ``c = b / 3``), so cutting at ``E S +- t`` drops at
    most ``budget`` per side.
    """
    lg = math.log(1.0 / budget)
    c = span * lg / 3.0
    return c + np.sqrt(c**2 + 2.0 * np.asarray(var) * lg)


def _trim(
    pmf: NDArray[np.float64], offset: int, mean: float, var: float, budget: float,
    span: int = 1,
) -> tuple[int, NDArray[np.float64], float]:
    """Cut ``pmf`` (on ``offset, offset + 1, ...``) to ``mean +- t``; returns the new offset,
    the kept entries and a bound on the true mass removed (``budget / 2`` per cut side)."""
    if budget <= 0.0 or pmf.size <= 1:
        return offset, pmf, 0.0
    t = float(_bernstein_halfwidth(var, budget / 2.0, span))
    lo = max(int(math.floor(mean - t)) - offset, 0)
    hi = min(int(math.ceil(mean + t)) - offset, pmf.size - 1)
    if hi < lo:  # cannot happen for a consistent (mean, var); keep everything
        return offset, pmf, 0.0
    removed = (budget / 2.0 if lo > 0 else 0.0) + (budget / 2.0 if hi < pmf.size - 1 else 0.0)
    return offset + lo, pmf[lo : hi + 1].copy(), removed


# --------------------------------------------------------------------------- paths
def poisson_binomial_pmf_exact(
    probs: ArrayLike, complements: ArrayLike | None = None
) -> NDArray[np.float64]:
    """Pmf of ``sum_j Bernoulli(p_j)`` on ``0..n`` by the direct O(n^2) recursion.

    ``complements`` = the 1 - p_j computed accurately by the caller (e.g. ``expit(-eps)``
    next to ``expit(eps)``); without it 1 - p_j is formed in floating point, which loses the
    relative accuracy of 1 - p_j when p_j is close to 1.  All terms are non-negative, so
    every entry has a relative error of at most about 4 n u.

    >>> poisson_binomial_pmf_exact([1.0, 0.0, 0.5]).tolist()
    [0.0, 0.5, 0.5, 0.0]
    """
    p = _check_probs(probs)
    c = 1.0 - p if complements is None else _check_probs(complements, "complements")
    if c.shape != p.shape:
        raise ValueError(f"complements must have one entry per probability ({p.size}), got "
                         f"shape {c.shape}")
    f = np.zeros(p.size + 1)
    f[0] = 1.0
    for j, (pj, cj) in enumerate(zip(p, c, strict=True)):
        f[1 : j + 2] = f[1 : j + 2] * cj + f[: j + 1] * pj
        f[0] *= cj
    return f


def poisson_binomial_pmf_tree(
    probs: ArrayLike, *, tol: float = 1e-15, block: int = 64,
    complements: ArrayLike | None = None,
) -> TruncatedPMF:
    """Pmf of ``sum_j Bernoulli(p_j)`` for large ``n``, probabilities kept exactly.

    Blocks of ``block`` Bernoullis are summed by the exact recursion (vectorised over
    blocks); the block pmfs are then combined by a balanced tree of batched convolutions
    (direct while short, FFT after), every intermediate pmf trimmed at both ends by a mass of
    at most ``tol / (2 * number of tree nodes)``, so the total ``dropped_mass`` is about
    ``tol`` or less.  ``tol = 0`` trims nothing.  (The Bernoulli case of
    :func:`lattice_sum_pmf_tree`, kernels ``(1 - p_j, p_j)``.)

    >>> r = poisson_binomial_pmf_tree(np.full(1000, 0.3), tol=1e-14)
    >>> ref = stats.binom.pmf(r.support, 1000, 0.3)
    >>> bool(np.max(np.abs(r.pmf - ref)) < 1e-13), r.dropped_mass < 1e-14
    (True, True)
    """
    p = _check_probs(probs)
    c = 1.0 - p if complements is None else _check_probs(complements, "complements")
    if c.shape != p.shape:
        raise ValueError(f"complements must have one entry per probability ({p.size}), got "
                         f"shape {c.shape}")
    return lattice_sum_pmf_tree(np.stack([c, p], axis=1), tol=tol, block=block)


def _check_kernels(kernels: ArrayLike) -> NDArray[np.float64]:
    k = np.asarray(kernels, dtype=np.float64)
    if k.ndim != 2 or k.shape[1] < 1:
        raise ValueError(f"kernels must be a 2-d array (users x support), got shape {k.shape}")
    bad = ~np.isfinite(k) | (k < 0) | (k > 1)
    if bad.any():
        i, j = (int(v[0]) for v in np.nonzero(bad))
        raise ValueError(f"kernels must lie in [0, 1], got kernels[{i}, {j}] = {k[i, j]!r}")
    return k


def lattice_sum_pmf_tree(
    kernels: ArrayLike, *, tol: float = 1e-15, block: int = 64,
) -> TruncatedPMF:
    """Pmf of ``sum_j X_j`` for independent ``X_j`` on ``0, ..., s - 1`` with
    ``Pr[X_j = k] = kernels[j, k]`` (rows summing to 1), all kernels kept exactly.

    Blocks of ``block`` variables are summed by the direct recursion
    ``f_j(t) = sum_k kernels[j, k] f_{j-1}(t - k)`` (non-negative terms, vectorised over
    blocks); the block pmfs are combined by a balanced tree of batched convolutions (direct
    while short, FFT after, round-off bounded as in the module docstring), every intermediate
    pmf cut at ``mean +- t`` by Bernstein's inequality with range ``s - 1``
    (:func:`_bernstein_halfwidth`), each cut side charging ``tol / (4 * rows)`` to
    ``dropped_mass``.

    >>> r = lattice_sum_pmf_tree(np.tile([0.25, 0.5, 0.25], (3, 1)), tol=0.0)
    >>> np.round(r.pmf * 64, 9).tolist()  # Bin(6, 1/2) * 64
    [1.0, 6.0, 15.0, 20.0, 15.0, 6.0, 1.0]
    """
    kern = _check_kernels(kernels)
    tol = _check_tol(tol)
    if block < 1:
        raise ValueError(f"block must be >= 1, got {block!r}")
    n, s = kern.shape
    span = s - 1
    if n == 0:
        return TruncatedPMF(0, np.ones(1), 0.0, 0.0)
    rows = -(-n // block)
    kk = np.zeros((rows * block, s))
    kk[:, 0] = 1.0  # padding: X = 0 surely
    kk[:n] = kern
    kb = kk.reshape(rows, block, s)
    f = np.zeros((rows, block * span + 1))
    f[:, 0] = 1.0
    for j in range(block):
        top = j * span + 1  # f is supported on 0 .. j * span before this step
        g = f[:, :top + span] * kb[:, j, 0:1]
        for k in range(1, s):
            g[:, k:top + k] += f[:, :top] * kb[:, j, k:k + 1]
        f[:, :top + span] = g
    budget = tol / (2.0 * rows)
    offsets = np.zeros(rows, dtype=np.int64)
    dropped = np.zeros(rows)
    err2 = np.zeros(rows)
    vals = np.arange(s, dtype=np.float64)
    mean = (kb * vals).sum(axis=(1, 2))
    # var X = sum_{k < l} K_k K_l (l - k)^2 for a pmf K (no cancellation: for a Bernoulli it
    # is exactly (1 - p) p with the caller's accurate complement)
    var = np.zeros(rows)
    for k in range(s):
        for m in range(k + 1, s):
            var += (kb[:, :, k] * kb[:, :, m]).sum(axis=1) * float((m - k) ** 2)
    f, offsets, dropped = _trim_rows(f, offsets, dropped, mean, var, budget, span)
    while f.shape[0] > 1:
        if f.shape[0] % 2:
            ident = np.zeros((1, f.shape[1]))
            ident[0, 0] = 1.0
            f = np.vstack([f, ident])
            offsets = np.append(offsets, 0)
            dropped = np.append(dropped, 0.0)
            err2 = np.append(err2, 0.0)
            mean = np.append(mean, 0.0)
            var = np.append(var, 0.0)
        a, b = f[0::2], f[1::2]
        length = f.shape[1]
        out_len = 2 * length - 1
        if length <= 128:
            c = np.zeros((a.shape[0], out_len))
            for i in range(length):
                c[:, i : i + length] += a[:, i : i + 1] * b
            new_err = np.zeros(a.shape[0])
        else:
            nfft = sfft.next_fast_len(out_len, real=True)
            c = sfft.irfft(sfft.rfft(a, nfft, axis=1) * sfft.rfft(b, nfft, axis=1), nfft,
                           axis=1)[:, :out_len]
            np.maximum(c, 0.0, out=c)
            norms = np.minimum(np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1))
            new_err = 5.0 * _U * math.log2(nfft) * norms
        dl, dr = dropped[0::2], dropped[1::2]
        dropped = dl + dr - dl * dr
        err2 = err2[0::2] + err2[1::2] + new_err
        offsets = offsets[0::2] + offsets[1::2]
        mean = mean[0::2] + mean[1::2]
        var = var[0::2] + var[1::2]
        f, offsets, dropped = _trim_rows(c, offsets, dropped, mean, var, budget, span)
    off = int(offsets[0])
    pmf = f[0][: max(n * span - off + 1, 1)]  # entries above n span are round-off of zeros
    err_l1 = float(err2[0]) * math.sqrt(pmf.size)
    return TruncatedPMF(off, pmf, float(dropped[0]), err_l1)


def _trim_rows(
    f: NDArray[np.float64], offsets: NDArray[np.int64], dropped: NDArray[np.float64],
    mean: NDArray[np.float64], var: NDArray[np.float64], budget: float, span: int = 1,
) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.float64]]:
    """Cut every row to a common width around ``mean +- t`` (Bernstein, see
    :func:`_bernstein_halfwidth`); each cut side adds ``budget / 2`` to the row's dropped mass
    (a bound on the true mass removed)."""
    length = f.shape[1]
    if budget <= 0.0 or length <= 1:
        return f, offsets, dropped
    t = _bernstein_halfwidth(var, budget / 2.0, span)
    lo = np.clip(np.floor(mean - t).astype(np.int64) - offsets, 0, length - 1)
    hi = np.clip(np.ceil(mean + t).astype(np.int64) - offsets, lo, length - 1)
    width = int((hi - lo).max()) + 1
    if width >= length:
        return f, offsets, dropped
    start = np.minimum(lo, length - width)
    idx = start[:, None] + np.arange(width)[None, :]
    g = np.take_along_axis(f, idx, axis=1)
    cut = (start > 0).astype(float) + (start + width < length).astype(float)
    return g, offsets + start, dropped + cut * (budget / 2.0)


def poisson_binomial_pmf(
    probs: ArrayLike,
    *,
    rel_step: float = 1e-3,
    tol: float = 1e-15,
    max_exact_groups: int = 256,
) -> TruncatedPMF:
    """Pmf of ``sum_j Bernoulli(g_j)`` with ``g_j <= p_j`` the grouped (rounded-down) values.

    Groups come from :func:`group_probabilities` (exact when there are at most
    ``max_exact_groups`` distinct values; otherwise each probability is rounded down by a
    relative step of at most ``rel_step``).  Each group is a binomial cut by
    :func:`binomial_window`; the binomials are convolved pairwise in a balanced tree
    (:func:`convolve_pmfs`) with both tails of every intermediate pmf trimmed; the tolerance
    ``tol`` is split evenly over the ``2 G - 1`` truncations of ``G`` groups.  Above 4096
    groups the batched tree of :func:`poisson_binomial_pmf_tree` is used on the grouped
    values instead.

    The law computed is stochastically *smaller* than (or equal to) the one of ``probs``.

    >>> r = poisson_binomial_pmf([0.1, 0.2, 0.3], tol=0.0)
    >>> ref = poisson_binomial_pmf_exact([0.1, 0.2, 0.3])
    >>> bool(np.allclose(r.pmf, ref[r.offset:r.offset + r.pmf.size], atol=1e-16))
    True
    """
    tol = _check_tol(tol)
    values, counts = group_probabilities(
        probs, rel_step=rel_step, max_exact_groups=max_exact_groups
    )
    return poisson_binomial_pmf_grouped(values, counts, tol=tol)


def poisson_binomial_pmf_grouped(
    values: ArrayLike, counts: ArrayLike, *, tol: float = 1e-15, direct: bool = False,
    complements: ArrayLike | None = None, expand: bool = True,
) -> TruncatedPMF:
    """Pmf of ``sum_g Bin(counts[g], values[g])`` (already grouped probabilities).

    The engine of :func:`poisson_binomial_pmf`: each group is a binomial cut by
    :func:`binomial_window`, the binomials are convolved pairwise in a balanced tree
    (:func:`convolve_pmfs`) with both tails of every intermediate pmf trimmed, the tolerance
    ``tol`` split evenly over the ``2 G - 1`` truncations of ``G`` groups; above 4096 groups
    the batched tree of :func:`poisson_binomial_pmf_tree` is used.  Identical users are one
    group (``values=[p], counts=[n]``), so 10^8 of them cost one binomial window.
    ``direct=True`` convolves every pair directly (no FFT, so ``error_l1 = 0`` and every entry
    is accurate to a small relative error; cost quadratic in the pmf length).  ``complements``
    are the accurate 1 - values (see :func:`binomial_windows`).  ``expand=False`` keeps the
    pairwise tree of binomial windows at any number of groups (a histogram of 10^9 users
    cannot be listed user by user).

    >>> r = poisson_binomial_pmf_grouped([0.5], [2], tol=0.0)
    >>> np.round(r.pmf, 12).tolist()
    [0.25, 0.5, 0.25]
    """
    tol = _check_tol(tol)
    values = _check_probs(values, "values")
    counts = np.asarray(counts, dtype=np.int64)
    if counts.shape != values.shape or np.any(counts < 0):
        raise ValueError(
            f"counts must be non-negative integers, one per value ({values.size}), got "
            f"shape {counts.shape}"
        )
    comps = 1.0 - values if complements is None else _check_probs(complements, "complements")
    keep = (values > 0) & (counts > 0)
    values, counts, comps = values[keep], counts[keep], comps[keep]
    groups = values.size
    if groups == 0:
        return TruncatedPMF(0, np.ones(1), 0.0, 0.0)
    if groups > _MAX_PAIRWISE_GROUPS and not direct and expand:
        return poisson_binomial_pmf_tree(np.repeat(values, counts), tol=tol,
                                         complements=np.repeat(comps, counts))
    budget = tol / (2.0 * groups)
    # piece: (offset, pmf, dropped, err_l2, mean, var)
    pieces: list[tuple[int, NDArray[np.float64], float, float, float, float]] = []
    windows = binomial_windows(counts, values, budget, comps)
    for w, v, cv, m in zip(windows, values, comps, counts, strict=True):
        pieces.append((w.offset, w.pmf, w.dropped_mass, 0.0, m * v, m * v * cv))
    while len(pieces) > 1:
        nxt = []
        for i in range(0, len(pieces) - 1, 2):
            (oa, a, da, ea, ma, va), (ob, b, db, eb, mb, vb) = pieces[i], pieces[i + 1]
            c, e = (np.convolve(a, b), 0.0) if direct else convolve_pmfs(a, b)
            off, c, trimmed = _trim(c, oa + ob, ma + mb, va + vb, budget)
            nxt.append((off, c, da + db - da * db + trimmed, ea + eb + e, ma + mb, va + vb))
        if len(pieces) % 2:
            nxt.append(pieces[-1])
        pieces = nxt
    off, pmf, d, e2, _, _ = pieces[0]
    return TruncatedPMF(int(off), pmf, float(d), float(e2) * math.sqrt(pmf.size))


def short_counts(cnt: NDArray) -> str:
    return f"shape {cnt.shape}, dtype {cnt.dtype}"
