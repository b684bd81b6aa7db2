"""The two-region blanket's amplification value (docs/theory.md 15.4, "Two coverage regions").

A :class:`~shuffledp.families.blanket.TwoRegionCase` splits the blanket omega into its centre
(``nu_1``, probability ``1 - q``) and its tails (``nu_2``, probability ``q``): the *low*
users cover omega (masses ``low``), the *high* users only ``nu_1`` (masses ``high``).  With
``h`` high and ``l`` low blanket reports, the victim's divergence is exactly (Claim "two
regions, the identity")

    D(h, l) = sum_{c2} E[(beta(c2) / c1 * S_1 + beta(c2 - 1) / c2 * S_2)_+],

``beta`` the pmf of Bin(l, q), ``c1 = h + l + 1 - c2``, ``S_1`` a sum of ``c1`` i.i.d. copies of
the centre variable ``l_1`` (law: the case's cells) and ``S_2`` of ``c2`` copies of the tail
variable ``l_2`` (two atoms of weight 1/2).  ``D`` is non-increasing in ``h`` and ``l``, and the
users' coins are independent, so with levels ``(h_k, l_k)`` non-decreasing in k and lower
bounds ``e_k`` on ``Pr[N_H >= h_k, N_L >= l_k]`` (Chernoff's bound on the two Poisson-binomial
lower tails),

    E[D(N_H, N_L)] <= sum_k (e_k - e_{k+1}) D(h_k, l_k),   e_0 = 1, e_{m+1} = 0

(:func:`two_region_value`; levels at the probabilities ``LEVELS``, or the exact mixture over
the two counts when the pools are tiny).  Each ``D(h, l)`` is bounded from above by
:func:`d_upper`: the lattice law of the centre (dominating in the increasing convex order,
:func:`~shuffledp.bounds.blanket.cells.lattice_law`), the law of ``S_1`` by one FFT per ``c1``
on a window of Bernstein half-width ``WINDOW_TAIL``, its stop-loss transform from the
pmf raised by the round-off estimate (never lowered: only upper bounds are needed), and
``S_2``'s binomial law exactly.  Charges: the window's upper tail, the terms of negligible
binomial weight, the lattice law's total variation and Wasserstein errors (as 15.3 (N7)).
The FFT round-off is an estimate with a safety factor, as in 15.3 (N6).  :func:`d_chernoff`
is a cheaper, looser bound of each ``D`` (used to skip cases that cannot raise the maximum).
The FFT's cost grows like the number of users; beyond ``MAX_WORK_2R`` :func:`d_chernoff` is used.

Code names -> symbols: ``q`` = q, ``tail_hi``/``tail_lo`` = the two atoms of l_2, ``h``/``l``
= the numbers of high and low blanket reports, ``c1``/``c2`` = the reports in the centre and in
the tails, ``beta`` = Bin(l, q).
"""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
from numpy.typing import NDArray

from shuffledp._lazy import lazy_module
from shuffledp.bounds.blanket.amplification import (
    FFT_SAFETY,
    LatticeLaw,
    _bernstein,
    _halfwidth,
)
from shuffledp.bounds.blanket.cells import lattice_law
from shuffledp.caching import lru_get, lru_put, register_mapping

sfft = lazy_module("scipy.fft")
stats = lazy_module("scipy.stats")
optimize = lazy_module("scipy.optimize")

__all__ = ["d_upper", "d_chernoff", "centre_law", "two_region_value", "pb_lower_tail",
           "LEVELS", "MAX_FFT_2R"]

_U = float(np.finfo(float).eps) / 2.0
#: Probability levels of the strata of (N_H, N_L): at level p each count is at or above its
#: level except with probability at most p / 2 (Chernoff).
LEVELS = (1e-15, 1e-10, 1e-6, 1e-3, 0.05, 0.4)
#: Mass of S_1 (untilted) left above or below the FFT window (Bernstein's bound).
WINDOW_TAIL = 1e-16
#: Binomial weights below this are not evaluated (their terms are charged).
BETA_SKIP = 1e-18
#: Pools with (n_H + 1) (n_L + 1) at most this get the exact mixture over the two counts.
EXACT_MIXTURE = 64
#: Largest FFT size of one D(h, l); beyond, the two-region value is not computed (1.0).
MAX_FFT_2R = 1 << 17
#: Rows (values of c2) per batch of inverse FFTs.
CHUNK = 32
#: Largest FFT points times values of c2 of one D(h, l) (about 0.1 s per 4e6 on one core);
#: beyond, each D is bounded by :func:`d_chernoff` (its cost grows like the number of users).
MAX_WORK_2R = 1 << 22
#: Lattice steps per standard deviation of the centre variable.
SD_STEPS_2R = 6


def _pb_log_lower(g: NDArray, c: NDArray, a: float) -> float:
    """log of Chernoff's bound on ``Pr[N <= a]`` for ``N`` a sum of ``c_j`` Bernoulli(g_j):
    ``min_{theta >= 0} theta a + sum_j c_j log(1 - g_j + g_j e^{-theta})``."""
    mean = float(np.dot(g, c))
    if a >= mean:
        return 0.0
    if a < 0:
        return -math.inf

    def f(th: float) -> float:
        return th * a + float(np.dot(c, np.log1p(g * math.expm1(-th))))

    def df(th: float) -> float:
        e = math.exp(-th)
        return a - float(np.dot(c, g * e / (1.0 - g + g * e)))

    hi = 1.0
    while df(hi) < 0.0 and hi < 700.0:
        hi *= 2.0
    if df(hi) < 0.0:
        return f(hi)
    th = optimize.brentq(df, 0.0, hi, xtol=1e-6, rtol=1e-6)  # any theta gives a bound
    lo = th
    return min(f(hi), f(lo), 0.0)


def pb_lower_tail(g, c, a: float) -> float:
    """An upper bound on ``Pr[N < a]`` (N as in :func:`_pb_log_lower`), rounded up.

    >>> from scipy import stats
    >>> exact = stats.binom.cdf(29, 100, 0.5)  # Pr[N < 30] for Bin(100, 1/2)
    >>> bool(exact <= pb_lower_tail([0.5], [100], 30) < 20 * exact)
    True
    """
    g = np.asarray(g, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    if a <= 0:
        return 0.0
    return min(1.0, math.exp(_pb_log_lower(g, c, math.ceil(a) - 1.0)) * (1.0 + 1e-12))


def _level(g: NDArray, c: NDArray, p: float) -> int:
    """The largest integer a in [0, mean] with ``pb_lower_tail(g, c, a) <= p`` (the bound is
    non-decreasing in a, and 0 at a = 0)."""
    lo, hi = 0, int(math.floor(float(np.dot(g, c))))
    if hi <= 0:
        return 0
    if pb_lower_tail(g, c, hi) <= p:
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pb_lower_tail(g, c, mid) <= p:
            lo = mid
        else:
            hi = mid
    return lo


def _levels(gh, ch, gl, cl) -> list[tuple[int, int, float]]:
    key = (gh.tobytes(), ch.tobytes(), gl.tobytes(), cl.tobytes())
    got = lru_get(_LEVEL_CACHE, key)
    if got is None:
        got = lru_put(_LEVEL_CACHE, key, _levels_uncached(gh, ch, gl, cl), 256)
    return got


_LEVEL_CACHE: OrderedDict[tuple, list] = OrderedDict()
register_mapping("two_region.levels", _LEVEL_CACHE)


def _levels_uncached(gh, ch, gl, cl) -> list[tuple[int, int, float]]:
    """``(h_k, l_k, e_k)`` for the strata: ``e_k <= Pr[N_H >= h_k, N_L >= l_k]``,
    both levels and ``e_k`` made monotone (levels non-decreasing, e_k non-increasing)."""
    out: list[tuple[int, int, float]] = []
    prev_h = prev_l = 0
    prev_e = 1.0
    for p in LEVELS:
        h = max(_level(gh, ch, p / 2.0), prev_h) if gh.size else 0
        lv = max(_level(gl, cl, p / 2.0), prev_l) if gl.size else 0
        e = 1.0 - (pb_lower_tail(gh, ch, h) if gh.size else 0.0) - (
            pb_lower_tail(gl, cl, lv) if gl.size else 0.0)
        e = min(max(e, 0.0), prev_e)
        if (h, lv) == (prev_h, prev_l) and out:
            out[-1] = (h, lv, min(out[-1][2], e))  # the same stratum: keep the smaller e
        elif h + lv > 0:
            out.append((h, lv, e))
        prev_h, prev_l, prev_e = h, lv, e
    return out


def _pb_pmf(g: NDArray, c: NDArray) -> NDArray:
    """The pmf of a sum of ``c_j`` Bernoulli(g_j) by direct convolution (non-negative terms:
    relative rounding of order ``u`` per step)."""
    out = np.ones(1)
    for gj, cj in zip(np.atleast_1d(g), np.atleast_1d(c), strict=True):
        for _ in range(int(cj)):
            out = np.concatenate([out * (1.0 - gj), [0.0]]) + np.concatenate([[0.0], out * gj])
    return out


def _half_binomial(c: int) -> NDArray:
    """The pmf of Bin(c, 1/2), rounded up (relative 1e-12); cached."""
    got = lru_get(_HALF_BINOMIAL, c)
    if got is None:
        got = stats.binom.pmf(np.arange(c + 1), c, 0.5) * (1.0 + 1e-12)
        got.setflags(write=False)
        lru_put(_HALF_BINOMIAL, c, got, 4096)
    return got


_HALF_BINOMIAL: OrderedDict[int, NDArray] = OrderedDict()
register_mapping("two_region.half_binomial", _HALF_BINOMIAL)


def centre_law(cells, sd_steps: int = SD_STEPS_2R) -> LatticeLaw:
    """The lattice law of the centre cells (``sd_steps`` lattice steps per standard deviation)."""
    mean, var = cells.moments()
    sd = math.sqrt(var) if var > 0 else 1.0
    width = float(cells.hi.max() - cells.lo.min())
    return lattice_law(cells, max(sd / sd_steps, width / (1 << 13), 1e-12))


def _beta(l_: int, q: float) -> tuple[NDArray, int, int, float]:
    """The pmf of Bin(l, q) (rounded up by 1e-12) on the full range 0..l, zero outside
    ``[lo2, hi2]``, the indices where it is at least ``BETA_SKIP``, and the mass outside them
    (computed from scipy's tails): only a window of about 13 standard deviations around the
    mean is evaluated (every index with pmf >= BETA_SKIP lies in it)."""
    sd = math.sqrt(max(l_ * q * (1.0 - q), 0.0))
    a = max(0, int(math.floor(l_ * q - 13.0 * sd)) - 10)
    b = min(l_, int(math.ceil(l_ * q + 13.0 * sd)) + 10)
    beta = np.zeros(l_ + 1)
    beta[a:b + 1] = stats.binom.pmf(np.arange(a, b + 1), l_, q) * (1.0 + 1e-12)
    big = np.flatnonzero(beta >= BETA_SKIP)
    lo2, hi2 = (int(big[0]), int(big[-1])) if big.size else (0, l_)
    out_mass = (float(stats.binom.cdf(lo2 - 1, l_, q)) if lo2 > 0 else 0.0) + (
        float(stats.binom.sf(hi2, l_, q)) if hi2 < l_ else 0.0)
    beta[:lo2] = 0.0
    beta[hi2 + 1:] = 0.0
    return beta, lo2, hi2, out_mass


def _charge(law: LatticeLaw, out_mass: float, top: float, n_tot: int) -> float:
    """The skipped binomial terms (each at most beta(c2) x_+ + beta(c2 - 1) tail_+, ``top`` =
    x_+ + tail_+) and the lattice law's own error (15.3 (N7): total variation per summand,
    Wasserstein moves)."""
    return 2.0 * out_mass * (1.0 + 1e-9) * top + law.tv_error * n_tot * top + law.w1_error


def d_upper(law: LatticeLaw, tail_hi: float, tail_lo: float, q: float, h: int, l_: int
            ) -> float:
    """An upper bound on ``D(h, l)`` (module docstring) for the centre's lattice law ``law``
    (dominating l_1 in the increasing convex order), the tail atoms and ``q``; the looser
    :func:`d_chernoff` when the FFTs would exceed ``MAX_FFT_2R`` points or ``MAX_WORK_2R``
    points in all."""
    h, l_ = int(h), int(l_)
    x = law.values
    p = law.pmf
    d = law.step
    x_max = float(x[-1])
    x_pos = max(x_max, 0.0)
    t_pos = max(tail_hi, 0.0)
    n_tot = h + l_ + 1
    mu = law.mean
    var = float(np.dot(p, (x - mu) ** 2))
    span = float(x[-1] - x[0])
    # the work (FFT points times values of c2), estimated before any of it: well beyond the
    # cap, the looser Chernoff bound of every term
    sd2 = math.sqrt(max(l_ * q * (1.0 - q), 0.0))
    hw0 = _halfwidth(n_tot * var, span, WINDOW_TAIL)
    if (2.0 * hw0 / d) * (2.0 * 9.5 * sd2 + 2.0) > 2.0 * MAX_WORK_2R:
        return d_chernoff(law, tail_hi, tail_lo, q, h, l_)
    # the binomial weights beta(c2') of the low reports in the tails, on a range; the rest
    # is charged: each term is at most beta(c2) x_+ + beta(c2 - 1) tail_+
    beta, lo2, hi2, out_mass = _beta(l_, q)
    charge = _charge(law, out_mass, x_pos + t_pos, n_tot)
    c1_max = n_tot - lo2
    hw_max = _halfwidth(c1_max * var, span, WINDOW_TAIL)
    k_lo, k_hi = law.offset, law.offset + p.size - 1  # S_1 / d lies in [c1 k_lo, c1 k_hi]
    width = min(int(math.ceil(2.0 * hw_max / d)) + 4, c1_max * (k_hi - k_lo) + 3)
    n_fft = 1 << max(int(math.ceil(math.log2(width))), 4)
    if n_fft > MAX_FFT_2R or n_fft * (hi2 - lo2 + 2) > MAX_WORK_2R:
        return d_chernoff(law, tail_hi, tail_lo, q, h, l_)  # too costly: the looser bound
    a0 = np.zeros(n_fft)
    a0[(law.offset + np.arange(p.size)) % n_fft] = p
    phi = sfft.rfft(a0)
    with np.errstate(divide="ignore"):
        log_phi = np.log(phi)
        log_abs = np.log(np.abs(phi))
    log_abs_f = np.where(np.isfinite(log_abs), log_abs, -1e4)  # |phi| = 0: exp(k * -1e4) = 0
    err_q = 5.0 * _U * math.log2(n_fft) * math.sqrt(n_fft) * float(np.linalg.norm(p))
    c2s = np.arange(lo2, hi2 + 2)  # beta(c2) or beta(c2 - 1) in [lo2, hi2]
    c1s = n_tot - c2s
    b1 = np.where(c2s <= l_, beta[np.minimum(c2s, l_)], 0.0)
    b2 = np.where(c2s >= 1, beta[np.maximum(c2s - 1, 0)], 0.0)
    a_w = np.where(c1s >= 1, b1 / np.maximum(c1s, 1), 0.0)
    b_w = np.where(c2s >= 1, b2 / np.maximum(c2s, 1), 0.0)
    total = 0.0
    # the terms with the victim surely in the tails (a = 0): bb E[(S_2)_+], exact
    for c2, bb in zip(c2s[a_w <= 0.0], b_w[a_w <= 0.0], strict=True):
        if bb > 0.0:
            kk = np.arange(c2 + 1)
            total += bb * float(np.dot(_half_binomial(int(c2)),
                                       np.maximum(kk * tail_hi + (c2 - kk) * tail_lo, 0.0)))
    rows = np.flatnonzero(a_w > 0.0)
    log2n = math.log2(n_fft)
    for start in range(0, rows.size, CHUNK):
        r = rows[start:start + CHUNK]
        c1 = c1s[r].astype(np.float64)
        c2 = c2s[r]
        a, bb = a_w[r], b_w[r]
        # the law of S_1 (c1 summands) on its window, one row per c2; frequencies with
        # |phi|^(c1 - 1) < e^-300 are left out (each entry of the inverse moves by less than
        # e^-300: charged), which also keeps subnormal numbers out
        cols = np.flatnonzero((float(c1.min()) - 1.0) * log_abs_f > -300.0)
        lp, la = log_phi[cols][None, :], log_abs_f[cols][None, :]
        keep = (c1[:, None] - 1.0) * la > -300.0
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            part = np.where(keep, np.exp(c1[:, None] * np.where(keep, lp, 0.0)), 0.0)
            mod = np.abs(part)
            err_phi = np.where(keep, c1[:, None] * np.exp((c1[:, None] - 1.0) * la) * err_q
                               + 4.0 * _U * (c1[:, None] * np.abs(lp) + 1.0) * mod, 0.0)
        pw = np.zeros((r.size, phi.size), dtype=complex)
        pw[:, cols] = part
        f = sfft.irfft(pw, n_fft, axis=1)
        # (the half spectrum of a real sequence: the other half holds the conjugates)
        err = FFT_SAFETY * (2.0 * err_phi.sum(axis=1) / n_fft + 5.0 * _U * log2n
                            * math.sqrt(2.0) * np.linalg.norm(mod, axis=1) / math.sqrt(n_fft)
                            ) + 2e-130
        mean1 = c1 * mu
        hw = np.array([_halfwidth(c * var, span, WINDOW_TAIL) for c in c1])
        # the window: around the mean, within S_1's support (no mass beyond it)
        sup_lo = c1s[r] * k_lo
        lo_idx = np.maximum(np.floor((mean1 - hw) / d).astype(np.int64) - 1, sup_lo - 1)
        top = lo_idx + n_fft - 1
        eta_hi = np.array([0.0 if tp >= c * k_hi else _bernstein(tp * d - m, c * var, span)
                           for tp, m, c in zip(top, mean1, c1s[r], strict=True)])
        # thresholds t = -bb s2 / a (s2 over the c2 + 1 values of S_2, padded with weight 0)
        kmax = int(c2.max())
        kk = np.arange(kmax + 1)[None, :]
        valid = kk <= c2[:, None]
        pk = np.zeros((r.size, kmax + 1))
        for i, c in enumerate(c2):
            pk[i, :c + 1] = _half_binomial(int(c)) if c >= 1 else 1.0
        s2 = np.where(valid, kk * tail_hi + (c2[:, None] - kk) * tail_lo, 0.0)
        t = -bb[:, None] * s2 / a[:, None]
        # only the window's part at and above the lowest threshold of weight >= 1e-30 is
        # needed (offset j0; a lower threshold t takes pi(t_0) + t_0 - t, pi's slope being
        # at least -1)
        heavy = pk >= 1e-30
        pos0 = np.where(heavy, t / d - lo_idx[:, None], np.inf)
        j0 = int(np.clip(np.floor(float(pos0.min())) - 1, 0, n_fft - 2))
        width_w = n_fft - j0
        idx = lo_idx[:, None] + j0 + np.arange(width_w)[None, :]
        g = np.maximum(np.take_along_axis(f, idx % n_fft, axis=1) + err[:, None], 0.0)
        # Pr[S_1 >= d j] <= G(j) (suffix sums), E[(S_1 - d j)_+] <= d sum_{m > j} G(m) + the
        # mass beyond the window (S_1 <= c1 x_max)
        gs = np.cumsum(g[:, ::-1], axis=1)[:, ::-1]
        pi = d * np.concatenate([np.cumsum(gs[:, ::-1], axis=1)[:, ::-1][:, 1:],
                                 np.zeros((r.size, 1))], axis=1)
        pi = pi + np.maximum(c1[:, None] * x_max - idx * d, 0.0) * eta_hi[:, None]
        # pi interpolated linearly (exact between lattice points)
        lo_idx = lo_idx + j0
        n_w = width_w
        pos = t / d - lo_idx[:, None]
        above = pos >= n_w - 1
        below = pos < 0
        j = np.clip(np.floor(pos), 0, n_w - 2).astype(np.int64)
        fr = np.clip(pos - j, 0.0, 1.0)
        mid_v = (np.take_along_axis(pi, j, axis=1) * (1.0 - fr)
                 + np.take_along_axis(pi, j + 1, axis=1) * fr)
        vals = np.where(above, np.maximum(c1[:, None] * x_max - t, 0.0) * eta_hi[:, None],
                        np.where(below, pi[:, :1] + (lo_idx[:, None] * d - t), mid_v))
        total += float(np.dot(a, np.sum(pk * vals, axis=1)))
    return float(total * (1.0 + 1e-9) + charge)


def d_chernoff(law: LatticeLaw, tail_hi: float, tail_lo: float, q: float, h: int, l_: int
               ) -> float:
    """A cheaper, looser upper bound on ``D(h, l)``: every term by Chernoff's bound
    ``E[Y_+] <= E[e^{theta Y}] / (e theta)`` (``y_+ <= e^{theta y - 1} / theta``), the best
    of a grid of theta per term, with the charges of :func:`d_upper`."""
    h, l_ = int(h), int(l_)
    x, p = law.values, law.pmf
    x_pos, t_pos = max(float(x[-1]), 0.0), max(tail_hi, 0.0)
    n_tot = h + l_ + 1
    beta, lo2, hi2, out_mass = _beta(l_, q)
    charge = _charge(law, out_mass, x_pos + t_pos, n_tot)
    c2 = np.arange(lo2, hi2 + 2)
    c1 = n_tot - c2
    b1 = np.where(c2 <= l_, beta[np.minimum(c2, l_)], 0.0)
    b2 = np.where(c2 >= 1, beta[np.maximum(c2 - 1, 0)], 0.0)
    a = np.where(c1 >= 1, b1 / np.maximum(c1, 1), 0.0)
    bb = np.where(c2 >= 1, b2 / np.maximum(c2, 1), 0.0)
    scale = np.maximum(a * max(float(np.abs(x).max()), 1e-300),
                       bb * max(abs(tail_hi), abs(tail_lo), 1e-300))
    thetas = np.geomspace(1e-3, 1e3, 31)[None, :] / np.maximum(scale, 1e-300)[:, None]
    u1 = thetas * a[:, None]
    u2 = thetas * bb[:, None]
    with np.errstate(over="ignore", divide="ignore"):
        lm1 = np.log(np.exp(u1[..., None] * x[None, None, :]) @ p)
        lm2 = np.logaddexp(u2 * tail_hi, u2 * tail_lo) - math.log(2.0)
        log_t = c1[:, None] * lm1 + c2[:, None] * lm2 - 1.0 - np.log(thetas)
    best = np.exp(np.minimum(np.nanmin(log_t, axis=1), 700.0))
    # a term is also at most beta(c2) x_+ + beta(c2 - 1) tail_+
    best = np.minimum(best, b1 * x_pos + b2 * t_pos)
    return float(best.sum() * (1.0 + 1e-9) + charge)


def two_region_value(case, low_g: NDArray, low_c: NDArray, high_g: NDArray, high_c: NDArray,
                     stop_at: float = math.inf, chernoff: bool = False,
                     law: LatticeLaw | None = None) -> float:
    """An upper bound on the victim's divergence ``E[D(N_H, N_L)]`` for the case's laws and
    the pools of low users (masses ``low_g``, counts ``low_c``) and high users; a value at or
    above ``stop_at`` may be returned as 1.0 (the evaluation stops early).  ``chernoff``:
    each ``D(h, l)`` by :func:`d_chernoff` (faster, looser); ``law``: the centre's lattice
    law if already computed (:func:`centre_law` of ``case.centre``)."""
    d_fn = d_chernoff if chernoff else d_upper
    law = centre_law(case.centre) if law is None else law
    n_h, n_l = int(np.sum(high_c)), int(np.sum(low_c))
    if (n_h + 1) * (n_l + 1) <= EXACT_MIXTURE:
        # few users: the exact mixture over the two counts (pmfs by convolution, rounded up)
        ph, pl = _pb_pmf(high_g, high_c), _pb_pmf(low_g, low_c)
        total = 0.0
        for h, wh in enumerate(ph):
            for lv, wl in enumerate(pl):
                if wh * wl > 0.0:
                    total += wh * wl * min(d_fn(law, case.tail_hi, case.tail_lo, case.q,
                                                h, lv), 1.0)
        return float(min(total * (1.0 + 1e-12) + case.charge, 1.0))
    levels = _levels(high_g, high_c, low_g, low_c)
    if not levels:
        return 1.0
    # the strata from the top: e_m D(h_m, l_m) is already a lower estimate of the sum
    vals: list[float] = []
    for h, lv, e in reversed(levels):
        v = d_fn(law, case.tail_hi, case.tail_lo, case.q, h, lv)
        if vals:
            v = max(v, vals[-1])  # D is non-increasing in both counts
        vals.append(min(v, 1.0))
        if e * vals[0] >= stop_at:
            return 1.0
    vals = vals[::-1]
    es = [e for _, _, e in levels] + [0.0]
    total = 1.0 - es[0]  # the stratum below the first level: D <= 1
    for k, v in enumerate(vals):
        total += (es[k] - es[k + 1]) * v
    return float(min(total + case.charge, 1.0))
