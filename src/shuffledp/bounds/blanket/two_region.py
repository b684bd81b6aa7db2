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
The FFT's cost grows like the number of users; beyond ``MAX_WORK_2R`` (``MAX_WORK_2R_BIG`` for
pools of at most ``BIG_FFT_MAX_REPORTS`` reports) :func:`d_chernoff` is used.

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
from shuffledp.bounds.blanket.binomial import (  # noqa: F401 (tests import them from here)
    BETA_SKIP,
    K_WINDOW,
    RATIO_REL,
    _beta,
    _half_binomial,
    _half_binomial_window,
    _weights,
)
from shuffledp.bounds.blanket.cells import lattice_law
from shuffledp.bounds.blanket.pool import _merged
from shuffledp.bounds.clones.aware import UserBins
from shuffledp.caching import lru_get, lru_put, register_mapping

sfft = lazy_module("scipy.fft")
special = lazy_module("scipy.special")
stats = lazy_module("scipy.stats")

__all__ = ["d_upper", "d_chernoff", "centre_law", "two_region_value", "two_region_choice",
           "pb_lower_tail", "LEVELS", "MAX_FFT_2R"]

_U = float(np.finfo(float).eps) / 2.0
#: Probability levels of the strata of (N_H, N_L): at level p each count is at or above its
#: level except with probability at most p / 2 (Chernoff).  24 log-spaced levels: with the
#: six of an earlier version (1e-15, 1e-10, 1e-6, 1e-3, 0.05, 0.4) the integer levels of small
#: pools jumped between strata of very different D (Laplace, delta = 1e-6, normal_1.5_0.5,
#: n = 300: eps 0.735 against 0.604 now; 12 levels 0.622, 48 levels 0.604).
LEVELS = tuple(float(x) for x in np.geomspace(1e-16, 0.5, 24))
#: ... and these for pools of more than ``LEVELS_MANY_USERS`` users (time only: at 10^6 users
#: the strata's FFTs double the time of ``blanket``; there the counts are large and the
#: levels' integer jumps small).
LEVELS_MANY = (1e-15, 1e-10, 1e-6, 1e-3, 0.05, 0.4)
LEVELS_MANY_USERS = 200_000
#: Mass of S_1 (untilted) left above or below the FFT window (Bernstein's bound).
WINDOW_TAIL = 1e-16
#: Pools with (n_H + 1) (n_L + 1) at most this get the exact mixture over the two counts.
EXACT_MIXTURE = 64
#: Largest FFT size of one D(h, l); beyond, Chernoff's bound (:func:`d_chernoff`).
MAX_FFT_2R = 1 << 17
#: The terms of D left to Chernoff's bound by :func:`d_upper` hold at most this share of
#: the sum of their Chernoff bounds (time only).
FFT_REST = 1e-5
#: Rows (values of c2) per batch of inverse FFTs.
CHUNK = 32
#: A row of c1 centre summands takes the FFT of a base row of c summands, c <= c1 <= c (1 +
#: THIN_RTOL) (leave-one-out thinning, docs/theory.md 15.4 "Thinned rows"; 0: every row its
#: own).  Measured (Laplace, delta = 1e-6): normal_0.75_0.5 at 10^5 users 50.6 s -> 12.2 s for
#: an eps 0.025% larger, at 10^4 17.7 s -> 10.9 s for 0.019% (1e-2: 9.2 s for 0.24%).
THIN_RTOL = 1e-3
#: Largest FFT points times values of c2 of one D(h, l) (about 0.025 s per 1e6 on one core);
#: beyond, each D is bounded by :func:`d_chernoff` (its cost grows like the number of users).
MAX_WORK_2R = 1 << 20
#: ... and for pools of at most ``BIG_FFT_MAX_REPORTS`` reports (h + l) these larger limits
#: (measured, Laplace, delta = 1e-6, normal_0.75_0.5 at n = 10^5: eps 0.01552 -> 0.01403, where
#: Chernoff's terms had decided; the larger pools of 10^6 users keep the time of the small ones).
MAX_FFT_2R_BIG = 1 << 18
MAX_WORK_2R_BIG = 1 << 22
BIG_FFT_MAX_REPORTS = 200_000
#: A stratum gets the FFT bound of its D when its Chernoff term is at least this share of
#: the sum (time only: every term is an upper bound).
REFINE_SHARE = 0.01
#: Lattice steps per standard deviation of the centre variable.
SD_STEPS_2R = 6


#: The thetas of the strata's Chernoff bounds (log-spaced, ratio 1.015).
LEVEL_GRID = np.geomspace(1e-7, 64.0, 1400)


def _log_pgf(g: NDArray, c: NDArray) -> NDArray[np.float64]:
    """``K(theta) = sum_j c_j log(1 - g_j + g_j e^{-theta})`` at the thetas of ``LEVEL_GRID``."""
    return np.asarray(c, dtype=np.float64) @ np.log1p(
        np.asarray(g, dtype=np.float64)[:, None] * np.expm1(-LEVEL_GRID)[None, :])


def _grid_tail(k_theta: NDArray, mean: float, a: int) -> float:
    """Chernoff's bound on ``Pr[N < a]`` (``N <= a - 1``), the best theta of ``LEVEL_GRID``
    (any theta >= 0 gives a bound), rounded up; 0 for ``a <= 0``."""
    if a <= 0:
        return 0.0
    if a - 1 >= mean:
        return 1.0
    log_b = float(np.min(LEVEL_GRID * (a - 1.0) + k_theta))
    return min(1.0, math.exp(log_b) * (1.0 + 1e-9))


def _grid_level(k_theta: NDArray, mean: float, p: float) -> int:
    """The largest integer a in [0, mean] with ``_grid_tail(k_theta, mean, a) <= p``:
    ``theta (a - 1) + K(theta) <= log p`` for some theta of the grid, checked after the
    rounding of the closed form."""
    top = int(math.floor(mean))
    if top <= 0:
        return 0
    log_p = math.log(p / (1.0 + 1e-9))
    best = float(np.max(1.0 + (log_p - k_theta) / LEVEL_GRID))
    a = int(min(max(math.floor(best), 0), top))
    while a > 0 and _grid_tail(k_theta, mean, a) > p:
        a -= 1
    while a < top and _grid_tail(k_theta, mean, a + 1) <= p:
        a += 1
    return a


def pb_lower_tail(g, c, a: float) -> float:
    """An upper bound on ``Pr[N < a]`` for ``N`` a sum of ``c_j`` Bernoulli(g_j): Chernoff's
    ``min_theta exp(theta (ceil(a) - 1) + sum_j c_j log(1 - g_j + g_j e^{-theta}))`` over the
    thetas of ``LEVEL_GRID``, rounded up (the bound of the strata).

    >>> from scipy import stats
    >>> exact = stats.binom.cdf(29, 100, 0.5)  # Pr[N < 30] for Bin(100, 1/2)
    >>> bool(exact <= pb_lower_tail([0.5], [100], 30) < 20 * exact)
    True
    """
    g = np.atleast_1d(np.asarray(g, dtype=np.float64))
    c = np.atleast_1d(np.asarray(c, dtype=np.float64))
    if a <= 0:
        return 0.0
    return _grid_tail(_log_pgf(g, c), float(np.dot(g, c)), int(math.ceil(a)))


def _levels(gh, ch, gl, cl) -> list[tuple[int, int, float]]:
    key = (gh.tobytes(), ch.tobytes(), gl.tobytes(), cl.tobytes())
    got = lru_get(_LEVEL_CACHE, key)
    if got is None:
        got = lru_put(_LEVEL_CACHE, key, _levels_uncached(gh, ch, gl, cl), 256)
    return got


_LEVEL_CACHE: OrderedDict[tuple, list] = OrderedDict()
register_mapping("two_region.levels", _LEVEL_CACHE)


def _levels_uncached(gh, ch, gl, cl) -> list[tuple[int, int, float]]:
    """``(h_k, l_k, e_k)`` for the strata: ``e_k <= Pr[N_H >= h_k, N_L >= l_k]`` (the union
    bound on Chernoff's two lower tails), both levels and ``e_k`` made monotone (levels
    non-decreasing, e_k non-increasing)."""
    out: list[tuple[int, int, float]] = []
    prev_h = prev_l = 0
    prev_e = 1.0
    many = float(np.sum(ch)) + float(np.sum(cl)) > LEVELS_MANY_USERS
    kh = _log_pgf(gh, ch) if gh.size else None
    kl = _log_pgf(gl, cl) if gl.size else None
    mh = float(np.dot(gh, ch)) if gh.size else 0.0
    ml = float(np.dot(gl, cl)) if gl.size else 0.0
    for p in LEVELS_MANY if many else LEVELS:
        h = max(_grid_level(kh, mh, p / 2.0), prev_h) if kh is not None else 0
        lv = max(_grid_level(kl, ml, p / 2.0), prev_l) if kl is not None else 0
        e = 1.0 - (_grid_tail(kh, mh, h) if kh is not None else 0.0) - (
            _grid_tail(kl, ml, lv) if kl is not None else 0.0)
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


def centre_law(cells, sd_steps: int = SD_STEPS_2R) -> LatticeLaw:
    """The lattice law of the centre cells (``sd_steps`` lattice steps per standard deviation)."""
    mean, var = cells.moments()
    sd = math.sqrt(var) if var > 0 else 1.0
    width = float(cells.hi.max() - cells.lo.min())
    return lattice_law(cells, max(sd / sd_steps, width / (1 << 13), 1e-12))


def _charge(law: LatticeLaw, out_mass: float, top: float, n_tot: int) -> float:
    """The skipped binomial terms (each at most beta(c2) x_+ + beta(c2 - 1) tail_+, ``top`` =
    x_+ + tail_+) and the lattice law's absolute error (15.3 (N7): total variation per
    summand, its masses at most ``c = max((1 + rho) s, 1) + tau``, and Wasserstein moves)."""
    tau = law.tv_error
    if tau > 0.0:
        c = max((1.0 + law.rel_error) * float(law.pmf.sum()) * (1.0 + 1e-12), 1.0) + tau
        tau = tau * math.exp(min(700.0, (c - 1.0) * n_tot)) * (1.0 + 1e-12)
    return 2.0 * out_mass * (1.0 + 1e-9) * top + tau * n_tot * top + law.w1_error


def _factor(law: LatticeLaw, n_tot: int) -> float:
    """The factor of the lattice law's relative error on ``D(h, l)`` (15.3 (N7)): each term
    holds at most ``n_tot`` copies of the centre variable and is an integral of a non-negative
    function, so with ``p' <= (1 + rho) p~ + e`` and s the mass of p~ it is at most
    ``(max((1 + rho) s, 1) / min(s, 1))^n_tot`` times the term computed from p~ (taken as a
    measure, or normalized where a tail bound is), plus the charge of e (:func:`_charge`)."""
    rho = law.rel_error
    if rho == 0.0:
        return 1.0
    s = law.mass  # (fsum, correctly rounded)
    up = max((1.0 + rho) * s * (1.0 + 4.0 * _U), 1.0)
    down = min(s * (1.0 - 4.0 * _U), 1.0)
    return math.exp(min(700.0, n_tot * (math.log(up) - math.log(down)) * (1.0 + 1e-12)
                        + 4.0 * _U))


def d_upper(law: LatticeLaw, tail_hi: float, tail_lo: float, q: float, h: int, l_: int,
            table: NDArray[np.float64] | None = None, terms: tuple | None = None) -> float:
    """An upper bound on ``D(h, l)`` (module docstring) for the centre's lattice law ``law``
    (dominating l_1 in the increasing convex order), the tail atoms and ``q``; the looser
    :func:`d_chernoff` when the FFTs would exceed ``MAX_FFT_2R`` points or ``MAX_WORK_2R``
    points in all (``MAX_FFT_2R_BIG``, ``MAX_WORK_2R_BIG`` for pools of at most
    ``BIG_FFT_MAX_REPORTS`` reports).  ``terms``: :func:`_chernoff_terms` of the same
    arguments, if at hand."""
    h, l_ = int(h), int(l_)
    if not tail_hi >= tail_lo:  # (the window's charges take t non-increasing in k)
        raise ValueError(f"tail_hi must be >= tail_lo, got {tail_hi!r} < {tail_lo!r}")
    x = law.values
    p = law.pmf
    d = law.step
    x_max = float(x[-1])
    n_tot = h + l_ + 1
    mu = law.mean
    var = float(np.dot(p, (x - mu) ** 2))
    span = float(x[-1] - x[0])
    # every term by Chernoff first (cheap): the FFT is spent on the terms that hold all but
    # FFT_REST of their sum, the others keep Chernoff's bound
    if terms is None:
        terms = _chernoff_terms(law, tail_hi, tail_lo, q, h, l_, table)
    c2s, terms, charge, beta = terms
    terms = terms.copy()
    c1s = n_tot - c2s
    b1, b2 = _weights(beta, int(c2s[0]), c2s, l_, q)  # (the terms' c2 run from lo2)
    a_w = np.where(c1s >= 1, b1 / np.maximum(c1s, 1), 0.0)
    b_w = np.where(c2s >= 1, b2 / np.maximum(c2s, 1), 0.0)
    # the terms with the victim surely in the tails (a = 0): bb E[(S_2)_+], exact
    for i in np.flatnonzero((a_w <= 0.0) & (b_w > 0.0)):
        c2 = int(c2s[i])
        kk = np.arange(c2 + 1)
        terms[i] = min(terms[i], b_w[i] * float(np.dot(
            _half_binomial(c2), np.maximum(kk * tail_hi + (c2 - kk) * tail_lo, 0.0))))
    order = np.argsort(-terms)
    rest = np.cumsum(terms[order][::-1])[::-1]  # the sum of the terms from each on
    n_keep = int(np.count_nonzero(rest > FFT_REST * float(terms.sum())))
    chosen = np.sort(order[:n_keep])
    chosen = chosen[a_w[chosen] > 0.0]
    fac = _factor(law, n_tot)
    if chosen.size == 0:
        return float(terms.sum() * (1.0 + 1e-9) * fac + charge)
    # leave-one-out thinning (docs/theory.md 15.4, "Thinned rows"): the rows (values of c2)
    # whose c1 lies within THIN_RTOL above a base c share the base's FFT, by
    # E[(S^(c1) - t)_+] <= (c1 / c) E[(S^(c) - c t / c1)_+] for c <= c1
    order_r = np.argsort(c1s[chosen], kind="stable")
    rows_all = chosen[order_r]
    c1_sorted = c1s[rows_all]
    base_list: list[int] = []
    base_of = np.empty(rows_all.size, dtype=np.int64)
    i = 0
    while i < rows_all.size:
        c = int(c1_sorted[i])
        j = int(np.searchsorted(c1_sorted, c + int(THIN_RTOL * c), side="right"))
        base_of[i:j] = len(base_list)
        base_list.append(c)
        i = j
    bases = np.asarray(base_list, dtype=np.int64)
    c1_max = int(bases.max())
    hw_max = _halfwidth(c1_max * var, span, WINDOW_TAIL)
    k_lo, k_hi = law.offset, law.offset + p.size - 1  # S_1 / d lies in [c1 k_lo, c1 k_hi]
    width = min(int(math.ceil(2.0 * hw_max / d)) + 4, c1_max * (k_hi - k_lo) + 3)
    n_fft = int(sfft.next_fast_len(max(width, 16), real=True))  # 2^a 3^b 5^c
    big = h + l_ <= BIG_FFT_MAX_REPORTS
    max_fft, max_work = (MAX_FFT_2R_BIG, MAX_WORK_2R_BIG) if big else (MAX_FFT_2R, MAX_WORK_2R)
    # (the limit counts every row, as before the thinning: with the bases alone, the FFT
    # bound reaches the large pools of 10^6 users, 3-6% tighter there (Laplace, U[0.5, 2]
    # and normal_0.75_0.5) for 2.5 times the time of the whole bound: time only)
    if n_fft > max_fft or n_fft * chosen.size > max_work:
        return float(terms.sum() * (1.0 + 1e-9) * fac + charge)  # too costly: Chernoff's
    a0 = np.zeros(n_fft)
    a0[(law.offset + np.arange(p.size)) % n_fft] = p
    phi = sfft.rfft(a0)
    with np.errstate(divide="ignore"):
        log_phi = np.log(phi)
        log_abs = np.log(np.abs(phi))
    log_abs_f = np.where(np.isfinite(log_abs), log_abs, -1e4)  # |phi| = 0: exp(k * -1e4) = 0
    err_q = 5.0 * _U * math.log2(n_fft) * min(math.sqrt(n_fft) * float(np.linalg.norm(p)),
                                              float(p.sum()))  # (as amplification's, N6)
    log2n = math.log2(n_fft)
    log_mass = math.log(math.fsum(p) * (1.0 + 4.0 * _U)) if p.size else 0.0  # (rounded up)
    for start in range(0, bases.size, CHUNK):
        c_int = bases[start:start + CHUNK]
        c1 = c_int.astype(np.float64)
        # the law of S_1 (c1 summands: the bases) on its window, one row per base;
        # frequencies with |phi|^(c1 - 1) < e^-300 are left out (each entry of the inverse
        # moves by less than e^-300: charged), which also keeps subnormal numbers out
        cols = np.flatnonzero((float(c1.min()) - 1.0) * log_abs_f > -300.0)
        lp, la = log_phi[cols][None, :], log_abs_f[cols][None, :]
        keep = (c1[:, None] - 1.0) * la > -300.0
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            part = np.where(keep, np.exp(c1[:, None] * np.where(keep, lp, 0.0)), 0.0)
            mod = np.abs(part)
            err_phi = np.where(keep, c1[:, None] * np.exp((c1[:, None] - 1.0) * la) * err_q
                               + 4.0 * _U * (c1[:, None] * np.abs(lp) + 1.0) * mod, 0.0)
        pw = np.zeros((c_int.size, phi.size), dtype=complex)
        pw[:, cols] = part
        f = sfft.irfft(pw, n_fft, axis=1)
        # (the half spectrum of a real sequence: the other half holds the conjugates)
        err = FFT_SAFETY * (2.0 * err_phi.sum(axis=1) / n_fft + 5.0 * _U * log2n
                            * math.sqrt(2.0) * np.linalg.norm(mod, axis=1) / math.sqrt(n_fft)
                            ) + 2e-130
        mean1 = c1 * mu
        hw = np.array([_halfwidth(c * var, span, WINDOW_TAIL) for c in c1])
        # the window: around the mean, within S_1's support (no mass beyond it)
        sup_lo = c_int * k_lo
        lo_b = np.maximum(np.floor((mean1 - hw) / d).astype(np.int64) - 1, sup_lo - 1)
        top = lo_b + n_fft - 1
        eta_hi = np.array([0.0 if tp >= c * k_hi else _bernstein(tp * d - m, c * var, span)
                           for tp, m, c in zip(top, mean1, c_int, strict=True)])
        # the rows of these bases: thresholds t = -bb s2 / a (s2 over the c2 + 1 values of
        # S_2, padded with weight 0), taken to the base as c t / c1
        mem = np.flatnonzero((base_of >= start) & (base_of < start + c_int.size))
        r = rows_all[mem]
        br = base_of[mem] - start  # each row's base, as a row of f
        c2 = c2s[r]
        a, bb = a_w[r], b_w[r]
        ratio = c1[br] / c1s[r].astype(np.float64)  # c / c1 <= 1
        lo_idx = lo_b[br]
        # S_2 = k tail_hi + (c2 - k) tail_lo, k ~ Bin(c2, 1/2), on the window
        # |k - c2/2| <= K_WINDOW sqrt(c2) (Hoeffding: the mass outside at most
        # 2 exp(-2 K_WINDOW^2), charged below)
        k0, k1, pk, p_left, p_right, e_right = _half_binomial_window(c2)
        kk = k0[:, None] + np.arange(pk.shape[1])[None, :]
        valid = kk <= c2[:, None]
        s2 = np.where(valid, kk * tail_hi + (c2[:, None] - kk) * tail_lo, 0.0)
        t = -bb[:, None] * s2 / a[:, None] * ratio[:, None]
        # only the window's part at and above the lowest threshold of weight >= 1e-30 is
        # needed (offset j0; a lower threshold t takes pi(t_0) + t_0 - t, pi's slope being
        # at least -1)
        heavy = pk >= 1e-30
        pos0 = np.where(heavy, t / d - lo_idx[:, None], np.inf)
        j0 = int(np.clip(np.floor(float(pos0.min())) - 1, 0, n_fft - 2))
        width_w = n_fft - j0
        idx = lo_b[:, None] + j0 + np.arange(width_w)[None, :]
        g = np.maximum(np.take_along_axis(f, idx % n_fft, axis=1) + err[:, None], 0.0)
        # Pr[S_1 >= d j] <= G(j) (suffix sums), E[(S_1 - d j)_+] <= d sum_{m > j} G(m) + the
        # mass beyond the window (S_1 <= c1 x_max)
        gs = np.cumsum(g[:, ::-1], axis=1)[:, ::-1]
        pi = d * np.concatenate([np.cumsum(gs[:, ::-1], axis=1)[:, ::-1][:, 1:],
                                 np.zeros((c_int.size, 1))], axis=1)
        pi = pi + np.maximum(c1[:, None] * x_max - idx * d, 0.0) * eta_hi[:, None]
        # pi interpolated linearly (exact between lattice points)
        lo_idx = lo_idx + j0
        n_w = width_w
        pos = t / d - lo_idx[:, None]
        above = pos >= n_w - 1
        below = pos < 0
        j = np.clip(np.floor(pos), 0, n_w - 2).astype(np.int64)
        fr = np.clip(pos - j, 0.0, 1.0)
        flat = pi.ravel()  # (each row reads its base's row of pi)
        at = br[:, None] * n_w + j
        mid_v = flat[at] * (1.0 - fr) + flat[at + 1] * fr
        vals = np.where(above, np.maximum(c1[br][:, None] * x_max - t, 0.0)
                        * eta_hi[br][:, None],
                        np.where(below, pi[br, :1] + (lo_idx[:, None] * d - t), mid_v))
        # the k outside the window (docs/theory.md 15.4): t is non-increasing in k (s2 is
        # non-decreasing, tail_hi >= tail_lo) and pi non-increasing with slope >= -1, so
        # below the window each value is at most the first's, above at most the last's plus
        # (k - k1) |dt|, dt the step of t per k
        dt = bb / a * ratio * max(tail_hi - tail_lo, 0.0)
        out = (p_left * vals[:, 0]
               + p_right * np.take_along_axis(vals, (k1 - k0)[:, None], 1)[:, 0] + dt * e_right)
        # the base's bound times c1 / c, and s^(c1 - c) for a lattice pmf of mass s > 1 (the
        # lemma for a measure: each copy integrated out gives s); rounded up by a few ulps
        extra = (c1s[r] - c1[br]) * log_mass if log_mass > 0.0 else 0.0
        terms[r] = np.minimum(terms[r], a * (np.sum(pk * vals, axis=1) + out) / ratio
                              * np.exp(extra) * (1.0 + 16.0 * _U))
    return float(terms.sum() * (1.0 + 1e-9) * fac + charge)


#: theta * a * max|l_1| over the grid of :func:`d_chernoff` (log-spaced, ratio 1.025).
CHERNOFF_GRID = np.geomspace(1e-8, 1e3, 1024)
LOG_GRID = np.log(CHERNOFF_GRID)


def mgf_table(law: LatticeLaw) -> NDArray[np.float64]:
    """``log E[e^{u X}]`` of the lattice law at ``u = CHERNOFF_GRID / max|x|`` (computed once
    per law and shared by every :func:`d_chernoff` of it)."""
    x, p = law.values, law.pmf
    z = (CHERNOFF_GRID / max(float(np.abs(x).max()), 1e-300))[:, None] * x[None, :]
    zmax = z.max(axis=1)
    with np.errstate(divide="ignore", under="ignore"):
        return zmax + np.log(np.exp(z - zmax[:, None]) @ p)


def d_chernoff(law: LatticeLaw, tail_hi: float, tail_lo: float, q: float, h: int, l_: int,
               table: NDArray[np.float64] | None = None) -> float:
    """A cheaper, looser upper bound on ``D(h, l)`` than :func:`d_upper`: the sum of
    :func:`_chernoff_terms`, with the charges of :func:`d_upper`."""
    terms, charge = _chernoff_terms(law, tail_hi, tail_lo, q, h, l_, table)[1:3]
    return float(terms.sum() * (1.0 + 1e-9) * _factor(law, int(h) + int(l_) + 1) + charge)


def _chernoff_terms(law: LatticeLaw, tail_hi: float, tail_lo: float, q: float, h: int,
                    l_: int, table: NDArray[np.float64] | None = None
                    ) -> tuple[NDArray[np.int64], NDArray[np.float64], float, NDArray]:
    """The values of c2 whose terms are evaluated, an upper bound on each term, the charge of
    the others and of the lattice law (:func:`_charge`), and the binomial weights
    (:func:`_beta`): :func:`_chernoff_batch` of the one pair ``(h, l)``."""
    return _chernoff_batch(law, tail_hi, tail_lo, q, [(h, l_)], table)[0]


def _chernoff_batch(law: LatticeLaw, tail_hi: float, tail_lo: float, q: float,
                    pairs: list[tuple[int, int]], table: NDArray[np.float64] | None = None
                    ) -> list[tuple[NDArray[np.int64], NDArray[np.float64], float, NDArray]]:
    """:func:`_chernoff_terms` of every pair ``(h, l)`` of ``pairs``, in one search.  Every term
    by Chernoff's bound ``E[Y_+] <= E[e^{theta Y}] / (e theta)`` (``y_+ <= e^{theta y - 1} /
    theta``).  Per term, theta runs over ``CHERNOFF_GRID / (a max|x|)`` (``a`` the weight of
    S_1), so that ``log E[e^{theta a l_1}]`` is one entry of :func:`mgf_table` (``table``,
    computed here if not given); the bound is convex in theta, so its smallest value on the
    grid is found by bisection on the sign of its differences (any theta gives a bound).  A
    term is also at most ``beta(c2) x_+ + beta(c2 - 1) tail_+`` (the only bound of a term
    with ``a = 0``)."""
    x = law.values
    x_pos, t_pos = max(float(x[-1]), 0.0), max(tail_hi, 0.0)
    out, cols = [], []
    for h, l_ in pairs:
        h, l_ = int(h), int(l_)
        n_tot = h + l_ + 1
        beta, lo2, hi2, out_mass = _beta(l_, q)
        c2 = np.arange(lo2, hi2 + 2)
        c1 = n_tot - c2
        b1, b2 = _weights(beta, lo2, c2, l_, q)
        a = np.where(c1 >= 1, b1 / np.maximum(c1, 1), 0.0)
        bb = np.where(c2 >= 1, b2 / np.maximum(c2, 1), 0.0)
        rows = np.flatnonzero(a > 0.0)
        # (+ the ratio's rounding: at most RATIO_REL b2 E|Y| a term, b2 summing to <= 2)
        charge = (_charge(law, out_mass, x_pos + t_pos, n_tot)
                  + 2.0 * RATIO_REL * max(abs(tail_hi), abs(tail_lo)))
        out.append((c2, b1 * x_pos + b2 * t_pos, charge, beta, rows))
        cols.append((c1[rows], c2[rows], a[rows], bb[rows]))
    c1r, c2r, ar, br = (np.concatenate([c[i] for c in cols]).astype(np.float64)
                        for i in range(4))
    if c1r.size:
        tab = mgf_table(law) if table is None else table
        xm = max(float(np.abs(x).max()), 1e-300)

        scale = (br / (ar * xm))[:, None]  # u2 = theta bb = grid value * scale
        log_scale = np.log(ar * xm)[:, None]
        t_max, t_gap = max(tail_hi, tail_lo), abs(tail_hi - tail_lo)

        def f(k: NDArray[np.int64]) -> NDArray[np.float64]:  # k: one row of indices per term
            u2 = CHERNOFF_GRID[k] * scale
            # log E[e^{u2 l_2}] for the two atoms of weight 1/2
            lm2 = u2 * t_max + np.log1p(np.exp(-u2 * t_gap)) - math.log(2.0)
            log_th = LOG_GRID[k] - log_scale
            t1, t2 = c1r[:, None] * tab[k], c2r[:, None] * lm2
            # + the floating point of the sum (relative 1e-12 of its parts)
            return t1 + t2 - 1.0 - log_th + 1e-12 * (np.abs(t1) + np.abs(t2)
                                                     + np.abs(log_th) + 1.0)

        # bisection on the sign of the differences (a convex function sampled along
        # increasing thetas decreases, then increases)
        top = CHERNOFF_GRID.size - 1
        lo = np.zeros(c1r.size, dtype=np.int64)
        hi = np.full(c1r.size, top, dtype=np.int64)
        while np.any(hi > lo):
            mid = (lo + hi) // 2
            pair = f(np.stack([mid, np.minimum(mid + 1, top)], axis=1))
            up = pair[:, 1] >= pair[:, 0]
            hi = np.where(up, mid, hi)
            lo = np.where(up, lo, mid + 1)
        with np.errstate(over="ignore"):
            chern = np.exp(np.minimum(f(lo[:, None])[:, 0], 700.0))
        start = 0
        for _, best, _, _, rows in out:
            best[rows] = np.minimum(best[rows], chern[start:start + rows.size])
            start += rows.size
    return [(c2, best, charge, beta) for c2, best, charge, beta, _ in out]


def two_region_value(case, low_g: NDArray, low_c: NDArray, high_g: NDArray, high_c: NDArray,
                     stop_at: float = math.inf, chernoff: bool = False,
                     law: LatticeLaw | None = None, skip_below: float = 0.0) -> float:
    """An upper bound on the victim's divergence ``E[D(N_H, N_L)]`` for the case's laws and
    the pools of low users (masses ``low_g``, counts ``low_c``) and high users; a value at or
    above ``stop_at`` may be returned as 1.0 (the evaluation stops early).  ``chernoff``:
    each ``D(h, l)`` by :func:`d_chernoff` (faster, looser); ``law``: the centre's lattice
    law if already computed (:func:`centre_law` of ``case.centre``); ``skip_below``: the
    value with every ``D`` by :func:`d_chernoff` is computed first and returned as it is
    when at most ``skip_below`` (it cannot raise a maximum that large: time only)."""
    d_fn = d_chernoff if chernoff else d_upper
    law = centre_law(case.centre) if law is None else law
    n_h, n_l = int(np.sum(high_c)), int(np.sum(low_c))
    if (n_h + 1) * (n_l + 1) <= EXACT_MIXTURE:
        if skip_below > 0.0 and not chernoff:
            got = two_region_value(case, low_g, low_c, high_g, high_c, chernoff=True, law=law)
            if got <= skip_below:
                return got
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
    table = mgf_table(law)
    args = (law, case.tail_hi, case.tail_lo, case.q)
    batch = _chernoff_batch(*args, [(h, lv) for h, lv, _ in levels], table)
    vals = [min(float(t.sum() * (1.0 + 1e-9) * _factor(law, h + lv + 1) + c), 1.0)
            for (_, t, c, _), (h, lv, _) in zip(batch, levels, strict=True)]
    es = [e for _, _, e in levels] + [0.0]
    weights = [es[k] - es[k + 1] for k in range(len(levels))]
    base = 1.0 - es[0] + case.charge  # the stratum below the first level: D <= 1

    def total() -> float:
        return base + sum(w * v for w, v in zip(weights, vals, strict=True))

    if not chernoff and total() > skip_below:
        # the strata whose Chernoff term is at least REFINE_SHARE of the sum, largest
        # first, get the FFT bound (the others keep Chernoff's: time only)
        for k in sorted(range(len(vals)), key=lambda k: -weights[k] * vals[k]):
            if weights[k] * vals[k] < REFINE_SHARE * total():
                break
            h, lv, _ = levels[k]
            vals[k] = min(vals[k], d_upper(*args, h, lv, table=table, terms=batch[k]))
            if base + weights[k] * vals[k] >= stop_at:
                return 1.0  # the sum is at least this
    return float(min(total(), 1.0))


def two_region_choice(cases: list, classes: UserBins, a: int, b: int, stop: float,
                      need: float = 0.0, min_high: float = 0.25) -> float:
    """The largest two-region value over ``cases`` (one choice; docs/theory.md 15.4, "Two
    coverage regions"), or a value >= ``stop`` as soon as one case reaches it; a case whose
    cheaper bound is at most ``need`` keeps it (the group's value matters only above it).
    Per case, the user of the group with the largest low mass and the one with the largest
    high mass leave the pool: any victim's pool ("all but the victim") contains the pool so
    obtained after one user of the victim's own kind is exchanged for one of no smaller
    mass.  A choice whose centre users' expected reports are below ``min_high`` times the
    low-mass users' is not evaluated (1; :mod:`shuffledp.bounds.blanket.bound`'s
    ``TWO_REGION_MIN_HIGH``: time only)."""
    value = 0.0
    first = cases[0]
    mu_low = float(np.dot(first.low, classes.counts))
    if float(np.dot(first.high, classes.counts)) < min_high * mu_low:
        return 1.0  # few reports from the centre's users: the choice would not pay (time only)
    for case in cases:
        cnt = classes.counts.copy()
        for m in (case.low, case.high):
            part = np.asarray(m, dtype=np.float64)[a:b]
            if part.size and float(part.max()) > 0.0:
                cnt[a + int(np.argmax(part))] -= 1
        low_g, low_c = _merged(np.asarray(case.low, dtype=np.float64), cnt)
        high_g, high_c = _merged(np.asarray(case.high, dtype=np.float64), cnt)
        # a case whose Chernoff value is below the largest so far cannot raise it
        value = max(value, two_region_value(case, low_g, low_c, high_g, high_c, stop,
                                            law=centre_law(case.centre),
                                            skip_below=max(value, need)))
        if value >= stop:
            break
    return value
