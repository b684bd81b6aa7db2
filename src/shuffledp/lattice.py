"""Laws of sums of independent lattice variables: convolution powers per tier.

``S = X_1 + ... + X_n`` with independent ``X_j`` on ``0, ..., s - 1`` (a kernel per user or per
tier of identical users).  :func:`lattice_sum_pmf` returns its :class:`~shuffledp.
poisson_binomial.TruncatedPMF` (truncation and FFT round-off accounted as in
:mod:`shuffledp.poisson_binomial`); :func:`lattice_sum_pmf_rtol` also bounds the relative
error of the direct convolutions (what a certified lower bound subtracts; ``window_lower``).
Convolution powers are formed by repeated squaring; distinct kernels, one per user, go to the
batched tree :func:`shuffledp.poisson_binomial.lattice_sum_pmf_tree`.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from shuffledp.poisson_binomial import (
    _DIRECT_WORK,
    _U,
    TruncatedPMF,
    _check_kernels,
    _check_tol,
    _trim,
    convolve_pmfs,
    lattice_sum_pmf_tree,
    short_counts,
)

__all__ = ["lattice_sum_pmf", "lattice_sum_pmf_rtol"]


def _kernel_moments(kernel: NDArray[np.float64]) -> tuple[float, float]:
    vals = np.arange(kernel.size, dtype=np.float64)
    var = 0.0
    for k in range(kernel.size):  # sum_{k < l} K_k K_l (l - k)^2: no cancellation
        for m in range(k + 1, kernel.size):
            var += float(kernel[k] * kernel[m]) * (m - k) ** 2
    return float((kernel * vals).sum()), var


def _combine(a: tuple, b: tuple, budget: float, span: int, direct_work: int) -> tuple:
    """Convolve two pieces ``(offset, pmf, dropped, err_l1, mean, var, rel)`` and trim
    (directly, without round-off beyond a small relative error, when ``len(a) len(b) <=
    direct_work``).  ``rel`` bounds the relative error of every entry against the exact
    convolution of the (trimmed) factors: relative errors of non-negative factors add under
    convolution, and a direct convolution adds gamma_m = m u / (1 - m u), m the largest
    number of products summed into one entry (the shorter length); an FFT adds none (its
    round-off is the absolute ``err_l1``)."""
    (oa, pa, da, ea, ma, va, ra), (ob, pb, db, eb, mb, vb, rb) = a, b
    if pa.size * pb.size <= direct_work:
        c, e2 = np.convolve(pa, pb), 0.0
        m = min(pa.size, pb.size)
        gamma = m * _U / (1.0 - m * _U)
    else:
        c, e2 = convolve_pmfs(pa, pb)
        gamma = 0.0
    rel = (1.0 + ra) * (1.0 + rb) * (1.0 + gamma) - 1.0
    off, c, trimmed = _trim(c, oa + ob, ma + mb, va + vb, budget, span)
    err = ea + eb + ea * eb + e2 * math.sqrt(c.size)
    return (off, c, da + db - da * db + trimmed, err, ma + mb, va + vb, rel)


def lattice_sum_pmf(
    kernels: ArrayLike, counts: ArrayLike, *, tol: float = 1e-15,
    max_expanded: int = 4_000_000, direct_work: int = _DIRECT_WORK,
) -> TruncatedPMF:
    """:func:`lattice_sum_pmf_rtol` without the relative error bound.

    >>> r = lattice_sum_pmf([[0.5, 0.5]], [4], tol=0.0)
    >>> np.round(r.pmf * 16, 9).tolist()
    [1.0, 4.0, 6.0, 4.0, 1.0]
    """
    return lattice_sum_pmf_rtol(kernels, counts, tol=tol, max_expanded=max_expanded,
                                direct_work=direct_work)[0]


def lattice_sum_pmf_rtol(
    kernels: ArrayLike, counts: ArrayLike, *, tol: float = 1e-15,
    max_expanded: int = 4_000_000, direct_work: int = _DIRECT_WORK,
) -> tuple[TruncatedPMF, float]:
    """Pmf of ``sum_g sum_{i < counts[g]} X_{g,i}`` with ``X_{g,i}`` independent on
    ``0, ..., s - 1`` and law ``kernels[g]`` (grouped :func:`lattice_sum_pmf_tree`).

    Up to 64 groups: each group's ``counts[g]``-fold convolution power by binary
    exponentiation (so 10^9 identical users cost about 30 convolutions), then a pairwise tree
    over the groups; every intermediate pmf is cut by Bernstein's inequality (range ``s - 1``
    per variable), each cut side charging ``tol / (2 * cuts)``.  More groups: the users are
    expanded and summed by :func:`lattice_sum_pmf_tree` (at most ``max_expanded`` users, else
    ``ValueError``).  Convolutions with ``len(a) len(b) <= direct_work`` are direct (no FFT
    round-off).  ``error_l1`` bounds the FFT round-off as in the module docstring.  The
    second value bounds the relative error of every entry from the direct convolutions:
    propagated through the convolution powers (:func:`_combine`; a squaring doubles its
    operand's error, so it grows about linearly in the counts, measured 8e-9 at 10^9 users
    with short kernels), or, when the users are expanded, the generous
    ``20 n (log2(n + 1) + 66) u`` of the one-by-one recursion (kernels of at most 5 entries).

    >>> r, rel = lattice_sum_pmf_rtol([[0.5, 0.5]], [4], tol=0.0)
    >>> np.round(r.pmf * 16, 9).tolist(), rel < 1e-14
    ([1.0, 4.0, 6.0, 4.0, 1.0], True)
    """
    kern = _check_kernels(kernels)
    tol = _check_tol(tol)
    cnt = np.asarray(counts)
    if cnt.shape != (kern.shape[0],) or not np.issubdtype(cnt.dtype, np.integer) or (
        cnt < 0
    ).any():
        raise ValueError(f"counts must be non-negative integers, one per kernel "
                         f"({kern.shape[0]}), got {short_counts(cnt)}")
    keep = cnt > 0
    kern, cnt = kern[keep], cnt[keep].astype(np.int64)
    span = kern.shape[1] - 1
    if kern.shape[0] == 0:
        return TruncatedPMF(0, np.ones(1), 0.0, 0.0), 0.0
    if kern.shape[0] > 64:
        total = int(cnt.sum())
        if total > max_expanded:
            raise ValueError(f"lattice_sum_pmf: {kern.shape[0]} distinct kernels over {total} "
                             f"variables exceed max_expanded = {max_expanded}")
        rel = 20.0 * total * (math.log2(total + 1) + 66.0) * _U
        return lattice_sum_pmf_tree(np.repeat(kern, cnt, axis=0), tol=tol), rel
    # cuts: at most 2 log2(m) + 2 per group plus G - 1 combinations
    cuts = int(sum(2 * int(m).bit_length() + 2 for m in cnt)) + kern.shape[0]
    budget = tol / (2.0 * cuts)
    pieces = []
    for kernel, m in zip(kern, cnt, strict=True):
        mean1, var1 = _kernel_moments(kernel)
        base = (0, kernel.copy(), 0.0, 0.0, mean1, var1, 0.0)
        acc = None
        mm = int(m)
        while True:  # binary exponentiation: acc = base^(bits seen so far)
            if mm & 1:
                acc = base if acc is None else _combine(acc, base, budget, span, direct_work)
            mm >>= 1
            if not mm:
                break
            base = _combine(base, base, budget, span, direct_work)
        pieces.append(acc)
    while len(pieces) > 1:
        nxt = [_combine(pieces[i], pieces[i + 1], budget, span, direct_work)
               for i in range(0, len(pieces) - 1, 2)]
        if len(pieces) % 2:
            nxt.append(pieces[-1])
        pieces = nxt
    off, pmf, dropped, err, _, _, rel = pieces[0]
    return TruncatedPMF(int(off), pmf, float(dropped), float(err)), float(rel)
