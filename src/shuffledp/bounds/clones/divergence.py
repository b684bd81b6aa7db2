"""The divergence of the clone pair given the clone count, and the error accounting of the
whole bound (docs/theory.md 3.4, "The divergence given c", and section 5, "Error accounting").

Given C = c the analyst sees the number A of type-0 reports among the c + 1 informative ones:

    P_c(a) = q Bin(a-1; c, 1/2) + (1-q) Bin(a; c, 1/2)       (victim on x^0)
    Q_c(a) = (1-q) Bin(a-1; c, 1/2) + q Bin(a; c, 1/2)       (victim on x^1)
    q = e^{eps_v} / (1 + e^{eps_v}),

and delta(eps) = delta_v + (1 - delta_v) sum_c Pr[C = c] H_{e^eps}(P_c || Q_c).  With
``m = c + 1``, ``P_c(a) / Q_c(a) = (q a + (1-q)(m-a)) / ((1-q) a + q (m-a))`` increases in a,
so ``P_c - E Q_c > 0`` exactly on a tail ``a >= t(c)`` and, with ``S(k) = Pr[Bin(c, 1/2) >= k]``
(:func:`shuffledp.binomial.binom_half_sf`),

    H_c = (q - E (1-q)) S(t-1) + ((1-q) - E q) S(t),

O(1) per c (:func:`conditional_divergence`).  :func:`_evaluate` sums it against the count's
pmf with every approximation charged on the safe side, refining the count on demand.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from shuffledp._lazy import lazy_module
from shuffledp.binomial import PMF_RTOL as _PMF_RTOL
from shuffledp.binomial import SF_ATOL as _SF_ATOL
from shuffledp.binomial import SF_RTOL as _SF_RTOL
from shuffledp.binomial import binom_half_sf as _binom_half_sf
from shuffledp.bounds.clones.count import CloneCount

special = lazy_module("scipy.special")

__all__ = ["conditional_divergence", "BLOCK_MIN", "BLOCKS", "BLOCK_RTOL"]

#: Above this many clone counts (the window and the left tail), H_c is evaluated on blocks
#: (:func:`_inner_bound_blocked`): about BLOCKS of them, refined while the block bound is
#: more than BLOCK_RTOL (relative) above the lower estimate of the same blocks.
BLOCK_MIN = 65_536
BLOCKS = 16_384
BLOCK_RTOL = 1e-6
#: Refine the count (smaller truncation, direct convolutions) while the charged
#: approximation error exceeds this fraction of the bound.
_REFINE_RATIO = 1e-3
#: Truncation tolerances of the successive refinements.
_REFINED_TOLS = (1e-15, 1e-40, 1e-80, 1e-150)
#: Direct (FFT-free) convolutions are used in a refinement only below this pmf width.
_DIRECT_MAX_WIDTH = 40_000


def _divergence_terms(
    c: NDArray[np.int64], eps: float, eps_v: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(H_c, rho_c) for the victim with budget eps_v (0 <= eps < eps_v <= 50): the divergence
    as computed and a bound rho_c on its floating-point error.

    Stable forms (docs/theory.md, "The divergence given c"): with L = e^{eps_v}, E = e^eps,
    alpha = q - E (1-q) = -q expm1(eps - eps_v) > 0, beta = (1-q) - E q < 0, and the
    threshold from m - a0 = m (L - E) / ((L - 1)(E + 1)) = m expm1(eps - eps_v) /
    (expm1(-eps_v) (E + 1)), so nothing cancels even when eps is within 1e-12 of eps_v or
    q rounds to 1.  Each partial sum sum_{a >= t'} (P_c(a) - E Q_c(a)) is at most H_c, with
    equality at the true threshold; where m g lies within 1e-9 (relative) of an integer the
    maximum over t' in {t - 1, t, t + 1} is taken, so a rounding error of the threshold is
    harmless (elsewhere the few-ulp error of m g cannot cross an integer).
    rho_c = 1e-10 (|alpha| S(t*-1) + |beta| S(t*)) + 1e-300.
    """
    q = float(special.expit(eps_v))
    q1 = float(special.expit(-eps_v))  # 1 - q, accurately
    big_e = math.exp(eps)
    alpha = -q * math.expm1(eps - eps_v)
    beta = q1 - big_e * q
    g = math.expm1(eps - eps_v) / (math.expm1(-eps_v) * (1.0 + big_e))  # (m - a0) / m
    m = c + 1
    mg = m * g
    t = m - np.ceil(mg).astype(np.int64) + 1
    s_prev, s_t = _binom_half_sf(t - 1, c), _binom_half_sf(t, c)
    best = alpha * s_prev + beta * s_t
    mag = abs(alpha) * s_prev + abs(beta) * s_t
    # where m g is within rounding reach of an integer the threshold may be off by one:
    # there, also take the partial sums at t - 1 and t + 1 (each is <= H_c)
    near = np.abs(mg - np.round(mg)) <= 1e-9 * np.maximum(mg, 1.0)
    if near.any():
        cn, tn = c[near], t[near]
        for lo_k, hi_k in ((tn - 2, tn - 1), (tn, tn + 1)):
            sa, sb = _binom_half_sf(lo_k, cn), _binom_half_sf(hi_k, cn)
            h = alpha * sa + beta * sb
            better = h > best[near]
            idx = np.flatnonzero(near)[better]
            best[idx] = h[better]
            mag[idx] = (abs(alpha) * sa + abs(beta) * sb)[better]
    return np.clip(best, 0.0, 1.0), _SF_RTOL * mag + _SF_ATOL


def conditional_divergence(c: ArrayLike, eps: float, eps_v: float) -> NDArray[np.float64]:
    """H_{e^eps}(P_c || Q_c) for clone counts ``c`` (vectorised; closed form above).

    >>> float(conditional_divergence(0, 0.0, math.log(3.0))[0])  # P_0 = (3/4, 1/4)
    0.5
    """
    c = np.atleast_1d(np.asarray(c, dtype=np.int64))
    if np.any(c < 0):
        raise ValueError(f"c must be >= 0, got {c!r}")
    if not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    if eps >= eps_v:
        return np.zeros(c.shape)
    return _divergence_terms(c, eps, eps_v)[0]


@dataclass(frozen=True)
class _Parts:
    """The pieces of one evaluation (docs/theory.md, "Error accounting")."""

    window: float  # sum over the window of t_c (H_c + rho_c), pmf round-off included
    slack: float  # (D + E) H_lo + the left tail where U(k) = D: what refinement can reduce
    left: float  # the left tail below the window (Hoeffding part and D part)
    total: float  # the bound on sum_c Pr[C = c] H_c (before min(1, .))


def _inner_bound(cc: CloneCount, eps: float) -> _Parts:
    """Upper bound on sum_c Pr[C = c] H_c for eps < eps_v (docs/theory.md, error accounting):

        window + (D + E) H+_lo + U(k_min - 1) + sum_{k=k_min}^{lo-2} U(k) dH+_k + U(lo-1) H+_{lo-1}

    with H+ = H + rho, dH+_k = (H_k - H_{k+1})^+ + rho_k + rho_{k+1} and U(k) = min(D, Hoeffding)
    the bound on Pr[C <= k] left of the window.  Above :data:`BLOCK_MIN` clone counts the
    same sum is bounded block by block (:func:`_inner_bound_blocked`).
    """
    count = cc.count
    lo = int(count.offset)
    w = count.pmf
    if lo + w.size - cc.left_start > BLOCK_MIN:
        stride = -(-(lo + w.size - cc.left_start) // BLOCKS)
        while stride > 1:
            parts = _inner_bound_blocked(cc, eps, stride)
            if parts is not None:
                return parts
            stride //= 4
    ks = np.arange(cc.left_start, lo + w.size, dtype=np.int64)
    h, rho = _divergence_terms(ks, eps, cc.eps_v)
    hp = h + rho
    i_lo = lo - cc.left_start
    window = float(np.dot(w, hp[i_lo:])) * (1.0 + _PMF_RTOL)
    h_lo = float(hp[i_lo]) if w.size else 0.0
    charged = (count.dropped_mass + count.error_l1) * h_lo
    left = cc.far_mass
    left_d = 0.0
    if i_lo > 0:
        u = cc.left_cdf
        dh = np.maximum(h[: i_lo - 1] - h[1:i_lo], 0.0) + rho[: i_lo - 1] + rho[1:i_lo]
        terms = np.concatenate([u[:-1] * dh, [u[-1] * hp[i_lo - 1]]])
        left += float(terms.sum())
        at_d = u >= count.dropped_mass
        left_d = float(terms[at_d].sum())
    total = window + charged + left
    return _Parts(window=window, slack=charged + left_d, left=left, total=total)


def _inner_bound_blocked(cc: CloneCount, eps: float, stride: int) -> _Parts | None:
    """:func:`_inner_bound` with H evaluated every ``stride`` clone counts (docs/theory.md,
    "Blocks of clone counts").  H_c is non-increasing in c (module docstring), so over a block
    [a, b) of the window sum_c Pr[C = c] H_c <= (sum_c Pr[C = c]) H+_a, and left of the window
    sum_{k=a}^{b-1} U(k) (H_k - H_{k+1}) <= U(b - 1) (H+_a - H-_b) (U non-decreasing), with
    H+- = h +- rho.  The same blocks with the other ends (H+ at b, U(a)) estimate what the
    per-c sum loses to the blocks; when that is more than :data:`BLOCK_RTOL` of the bound,
    None (the caller takes a finer stride).  The test only decides tightness: either way the
    result is an upper bound."""
    count = cc.count
    lo = int(count.offset)
    w = count.pmf
    i_lo = lo - cc.left_start
    w_starts = np.arange(0, w.size, stride)
    l_starts = np.arange(0, i_lo, stride) if i_lo > 0 else np.zeros(0, dtype=np.int64)
    # evaluation points (offsets from left_start): left block starts, lo - 1, window block
    # starts, and the window's end (the last block's right end)
    pts = np.unique(np.concatenate([l_starts, [i_lo - 1] if i_lo > 0 else [],
                                    i_lo + w_starts, [i_lo + w.size - 1]]).astype(np.int64))
    h, rho = _divergence_terms(cc.left_start + pts, eps, cc.eps_v)
    hp, hm = h + rho, np.maximum(h - rho, 0.0)
    def at(offsets):  # positions of evaluation points in pts
        return np.searchsorted(pts, offsets)

    mass = np.add.reduceat(w, w_starts)
    first = at(i_lo + w_starts)
    ends = np.append(w_starts[1:], w.size - 1)  # right ends (H at the next start is <= H_c)
    last = at(i_lo + ends)
    window = float(np.dot(mass, hp[first])) * (1.0 + _PMF_RTOL)
    window_low = float(np.dot(mass, hp[last]))
    h_lo = float(hp[at(i_lo)]) if w.size else 0.0
    charged = (count.dropped_mass + count.error_l1) * h_lo
    left = left_low = cc.far_mass
    left_d = 0.0
    if i_lo > 0:
        u = cc.left_cdf  # U(k) for k = left_start .. lo - 1
        bounds = np.append(l_starts, i_lo - 1)  # block [bounds[j], bounds[j+1])
        a, b = bounds[:-1], bounds[1:]
        keep = b > a
        a, b = a[keep], b[keep]
        ia, ib, i_last = at(a), at(b), int(at(i_lo - 1))
        drop = np.maximum(hp[ia] - hm[ib], 0.0)
        terms = np.append(u[b - 1] * drop, u[-1] * hp[i_last])
        left += float(terms.sum())
        left_low += float(np.sum(u[a] * np.maximum(hp[ia] - hp[ib], 0.0))
                          + u[-1] * hp[i_last])
        at_d = np.append(u[b - 1], u[-1]) >= count.dropped_mass
        left_d = float(terms[at_d].sum())
    total = window + charged + left
    if total - (window_low + charged + left_low) > BLOCK_RTOL * total:
        return None
    return _Parts(window=window, slack=charged + left_d, left=left, total=total)


def _finish(delta_v: float, inner: float) -> float:
    return float(min(1.0, delta_v + (1.0 - delta_v) * min(1.0, inner)))


def _evaluate(get_count, eps: float, tol: float, *, whole: bool = False) -> float:
    """delta(eps) with on-demand refinement.

    ``get_count(tol, direct)`` returns the :class:`CloneCount` built with that truncation and
    convolution mode.  While the charged approximation error (truncation D and FFT round-off E,
    at the divergence where they may sit, see :func:`_inner_bound`) is more than 1e-3 of the
    bound, the count is rebuilt with the next smaller truncation of ``_REFINED_TOLS`` and, when
    the pmf is short enough, with direct convolutions.  Every stage is a valid upper bound; the
    smallest is returned.  This keeps the bound meaningful down to delta = 1e-30 and eps
    monotone in n there.  ``whole``: measure the error against the whole returned delta,
    ``delta_v / (1 - delta_v)`` plus the divergence part (the mechanism-aware groups, whose
    cut victims often have delta_v far above the divergence part; refining that part then
    changes nothing visible).
    """
    cc = get_count(tol, False)
    if eps >= cc.eps_v:  # every H_c is 0 (also covers eps_v = 0, q = 1/2)
        return float(cc.delta_v)
    parts = _inner_bound(cc, eps)
    best = parts.total
    floor = cc.delta_v / max(1.0 - cc.delta_v, 1e-300) if whole else 0.0
    while parts.slack > _REFINE_RATIO * (parts.total + floor) and parts.total < 1.0:
        smaller = [t for t in _REFINED_TOLS if t < cc.tol]
        direct = cc.direct or (
            cc.count.error_l1 > 0.0 and cc.count.pmf.size <= _DIRECT_MAX_WIDTH
        )
        if not smaller and direct == cc.direct:
            break
        cc = get_count(smaller[0] if smaller else cc.tol, direct)
        parts = _inner_bound(cc, eps)
        best = min(best, parts.total)
    return _finish(cc.delta_v, best)
