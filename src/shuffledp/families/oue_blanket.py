"""OUE's blanket across budgets: the infimum at a reference budget, on a window of Hamming weights.

docs/theory.md 15.4, "OUE across budgets".  Notation (``d`` bits, budget e, ``q_e = 1 / (e^e +
1)``): a report y with k ones has ``R_e(x)(y) = pi_e(y) / (2 q_e^{y_x} (1 - q_e)^{1 - y_x})``,
``pi_e`` the law of d independent Bernoulli(q_e) bits, so ``g_e(y) = inf_x R_e(x)(y) = pi_e(y)
h_e(k)`` with ``h_e(k) = 1 / (2 (1 - q_e))`` for k < d and ``1 / (2 q_e)`` for k = d.

The blanket of a choice is ``omega = g_r 1{k in [k1, k2]} / Z`` for a reference budget r and a
window ``[k1, k2]`` of Hamming weights, ``Z = sum_{k1 <= |y| <= k2} g_r(y)``.  Every user at
budget e then has the mass ``gamma(e) = Z min_{k in [k1, k2]} g_e(k) / g_r(k)`` (the ratio is a
function of k only, ``rho_e(k) = (q_e / q_r)^k ((1 - q_e) / (1 - q_r))^{d - k}`` times
``h_e(k) / h_r(k)``: log-linear in k below d, so the minimum is at k1, at ``min(k2, d - 1)`` or
at d).  The victim's laws are cut to the window (the cut mass is the case's charge) and, for
the pair (0, 1) of categories at the victim's budget u,

    l(y) = Z rho_u(k) / h_r(k) (f_u(y_0) - e^eps f_u(y_1)),   f_u(1) = 1 / (2 q_u),
    f_u(0) = 1 / (2 (1 - q_u)),

whose omega-masses at (y_0, y_1, k) = (a, b, k) are ``C(d - 2, k - a - b) q_r^k (1 - q_r)^{d - k}
h_r(k) / Z``.  A victim budget anywhere in the group's range is covered by the atom values'
upper bounds over the range (``_atoms``).
"""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
from numpy.typing import NDArray

from shuffledp._lazy import lazy_module
from shuffledp.caching import lru_by_arrays, register_mapping
from shuffledp.families.blanket import Cells, atoms

special = lazy_module("scipy.special")

__all__ = ["oue_window_case", "WINDOW_TAILS"]

_U = float(np.finfo(float).eps) / 2.0
#: The choices' windows: the victim's mass cut on each side at most this (0: no cut, the
#: whole cube).  Any window is valid (its cut mass is charged); the smaller the cut, the
#: wider the window and the smaller the masses of users away from the reference budget.
#: Measured (10^6 users, budgets U[0.5, 2], delta = 1e-6, d = 100): 1e-11 gives eps 0.04302,
#: 1e-24 0.04323, both 0.0430 in 2.5 s instead of 1.7 s; one choice, valid to delta ~ 1e-22.
WINDOW_TAILS = (1e-24,)
#: Entries of the cache of the users' masses (time only).
MASS_CACHE = 1024
_MASSES: OrderedDict[tuple, NDArray] = OrderedDict()
register_mapping("oue_blanket.masses", _MASSES)


def _logs(e) -> tuple[NDArray, NDArray]:
    """(log q_e, log(1 - q_e)), q_e = 1 / (e^e + 1), without cancellation."""
    e = np.asarray(e, dtype=np.float64)
    return -np.logaddexp(0.0, e), -np.logaddexp(0.0, -e)


def _log_binom_pmf(d: int, k: NDArray, lq: float, lq1: float) -> NDArray:
    """log of C(d, k) q^k (1 - q)^(d - k) (gammaln: a few units of round-off of its size)."""
    k = np.asarray(k, dtype=np.float64)
    return (special.gammaln(d + 1.0) - special.gammaln(k + 1.0) - special.gammaln(d - k + 1.0)
            + k * lq + (d - k) * lq1)


def _victim_tails(d: int, lq: float, lq1: float) -> tuple[NDArray, NDArray]:
    """Per k in 0..d: Pr[|y| < k] and Pr[|y| > k] for the victim at category 0 (its bit 1
    with probability 1/2, the d - 1 others Bernoulli(q)): the law of |y| is the mixture of
    Bin(d - 1, q) and 1 + Bin(d - 1, q)."""
    j = np.arange(d, dtype=np.float64)
    base = np.exp(_log_binom_pmf(d - 1, j, lq, lq1))
    pmf = 0.5 * np.concatenate([base, [0.0]]) + 0.5 * np.concatenate([[0.0], base])
    below = np.concatenate([[0.0], np.cumsum(pmf)[:-1]])
    above = np.concatenate([np.cumsum(pmf[::-1])[::-1][1:], [0.0]])
    return below, above


def _window(d: int, tail: float, v_lo: float, v_hi: float) -> tuple[int, int, float]:
    """(k1, k2, charge): the narrowest window whose cut victim mass is at most ``tail`` on
    each side, the victim's budget anywhere in [v_lo, v_hi] (fewer ones is likelier at the
    larger budget, more ones at the smaller: the binomial is stochastically increasing in q),
    and the cut mass rounded up."""
    if tail <= 0.0:
        return 0, d, 0.0
    lq_a, lq1_a = (float(t) for t in _logs(v_hi))
    lq_b, lq1_b = (float(t) for t in _logs(v_lo))
    below, _ = _victim_tails(d, lq_a, lq1_a)  # at v_hi: the most mass at few ones
    _, above = _victim_tails(d, lq_b, lq1_b)  # at v_lo: the most at many ones
    k1 = int(np.flatnonzero(below <= tail)[-1])
    k2 = max(int(np.flatnonzero(above <= tail)[0]), k1)
    if k1 == 0 and k2 == d:
        return k1, k2, 0.0
    # sums of at most d + 1 terms, each the exp of a log to 16 u of the logs' sizes; terms
    # that underflowed stand for at most 1e-300 each
    err = 16.0 * _U * (3.0 * math.lgamma(d + 1.0) + d * (abs(lq_a) + abs(lq1_a) + abs(lq_b)
                                                         + abs(lq1_b)) + 10.0) + (d + 2.0) * _U
    return k1, k2, float(below[k1] + above[k2]) * (1.0 + 2.0 * err) + (d + 1.0) * 1e-300


def _log_q_ratios(x: float, r: float) -> tuple[float, float, float]:
    """``(log(q_x / q_r), log((1 - q_x) / (1 - q_r)), rel)`` from ``x - r``: ``q_x / q_r = 1 /
    (1 + expit(r) expm1(x - r))`` and ``(1 - q_x) / (1 - q_r) = 1 / (1 + expit(-r) expm1(r -
    x))`` (no difference of rounded logs), each to the relative ``rel``: the difference to u
    of itself, expm1 then to ``(1 + |x - r|) u`` more, expit, the product and log1p to a few u."""
    dx = x - r
    rel = (16.0 + 4.0 * abs(dx)) * _U
    return (-math.log1p(float(special.expit(r)) * math.expm1(dx)),
            -math.log1p(float(special.expit(-r)) * math.expm1(-dx)), rel)


def _log_z(d: int, k1: int, k2: int, lq_r: float, lq1_r: float) -> tuple[float, float]:
    """``(log Z, a bound on Z's relative error)``: Z is the whole cube's infimum mass
    ``(1 - q^d) / (2 (1 - q)) + q^(d-1) / 2`` (accurate to a few u) less the mass of the
    weights outside the window (tiny; its own error, through gammaln, is relative to it)."""
    whole = (-math.expm1(d * lq_r) * 0.5 * math.exp(-lq1_r) + 0.5 * math.exp((d - 1) * lq_r))
    out_k = np.concatenate([np.arange(0, k1), np.arange(k2 + 1, d + 1)]).astype(np.float64)
    out = 0.0
    if out_k.size:
        log_h = np.where(out_k < d, -math.log(2.0) - lq1_r, -math.log(2.0) - lq_r)
        out = float(np.exp(_log_binom_pmf(d, out_k, lq_r, lq1_r) + log_h).sum())
    z = whole - out
    err_out = out * (32.0 * _U * (2.0 * math.lgamma(d + 1.0) + d * (abs(lq_r) + abs(lq1_r)))
                     + (d + 2.0) * _U) + (d + 1.0) * 1e-300
    # q^d and q^(d-1) to 4 u (d |log q| + 2) of themselves, the rest to a few u
    small = math.exp((d - 1) * lq_r) * 4.0 * _U * (d * abs(lq_r) + 2.0)
    rel = (12.0 * _U * whole + small + err_out) / z / (1.0 - 12.0 * _U)
    return math.log(z), rel


def _log_ratio(d: int, k: NDArray, lq_e, lq1_e, lq_r: float, lq1_r: float) -> NDArray:
    """log(g_e(k) / g_r(k)): ``log rho_e(k) + log h_e(k) - log h_r(k)``."""
    k = np.asarray(k, dtype=np.float64)
    lq_e = np.asarray(lq_e, dtype=np.float64)[..., None]
    lq1_e = np.asarray(lq1_e, dtype=np.float64)[..., None]
    rho = k * (lq_e - lq_r) + (d - k) * (lq1_e - lq1_r)
    # h_e / h_r = (1 - q_r) / (1 - q_e) below d, q_r / q_e at d
    h = np.where(k < d, lq1_r - lq1_e, lq_r - lq_e)
    return rho + h


def _window_masses(d: int, k1: int, k2: int, r: float, log_z: float, users_lo: NDArray,
                   users_hi: NDArray, users_delta: NDArray) -> NDArray:
    """The users' masses of :func:`oue_window_case` (they do not depend on eps: cached under
    the identities of the user classes' read-only arrays, for the probes of a solve; time
    only)."""
    return lru_by_arrays(_MASSES, (users_lo, users_hi, users_delta),
                         (d, k1, k2, float(r), float(log_z)),
                         lambda: _masses(d, k1, k2, r, log_z, users_lo, users_hi, users_delta),
                         MASS_CACHE)


def _masses(d: int, k1: int, k2: int, r: float, log_z: float, users_lo: NDArray,
            users_hi: NDArray, users_delta: NDArray) -> NDArray:
    lq_r, lq1_r = (float(t) for t in _logs(r))
    # the users' masses: the smallest ratio over the window's ends (and d), at both ends of
    # each class's budgets (log-concave in q_e: the minimum over a range is at an end)
    ends = sorted({k1, min(k2, d - 1), k2})
    kk = np.asarray(ends, dtype=np.float64)
    lo_q, lo_q1 = _logs(users_lo)
    hi_q, hi_q1 = _logs(users_hi)
    log_ratio = np.minimum(_log_ratio(d, kk, lo_q, lo_q1, lq_r, lq1_r).min(axis=-1),
                           _log_ratio(d, kk, hi_q, hi_q1, lq_r, lq1_r).min(axis=-1))
    # the exponent to 16 u of its terms' sizes (and log Z's), taken off the masses
    size = (d * (abs(lq_r) + abs(lq1_r) + np.abs(lo_q) + np.abs(hi_q) + np.abs(lo_q1)
                 + np.abs(hi_q1)) + 2.0 * abs(log_z) + 3.0 * math.lgamma(d + 1.0) + 10.0)
    masses = np.exp(np.minimum(log_z + log_ratio, 0.0) - 16.0 * _U * size)
    masses = np.minimum(masses, 1.0) * (1.0 - users_delta)
    return masses


def oue_window_case(d: int, eps: float, v_lo: float, v_hi: float, r: float, tail: float,
                    users_lo: NDArray, users_hi: NDArray,
                    users_delta: NDArray) -> tuple[Cells, NDArray, float]:
    """The cells of l, the users' masses (times 1 - delta_j) and the charge of the choice with
    reference budget ``r`` and window tail ``tail`` (module docstring), for victims with
    budgets in ``[v_lo, v_hi]`` and user classes with budgets in ``[users_lo, users_hi]``."""
    k1, k2, charge = _window(d, tail, v_lo, v_hi)
    lq_r, lq1_r = (float(t) for t in _logs(r))
    ks = np.arange(k1, k2 + 1, dtype=np.float64)
    # log g_r summed over the weight-k reports: log C(d, k) + k lq_r + (d - k) lq1_r + log h_r
    log_z, z_rel = _log_z(d, k1, k2, lq_r, lq1_r)
    masses = _window_masses(d, k1, k2, r, log_z, np.asarray(users_lo, dtype=np.float64),
                            np.asarray(users_hi, dtype=np.float64),
                            np.asarray(users_delta, dtype=np.float64))
    vals, mass, v_err = _atoms(d, eps, v_lo, v_hi, ks, r, lq_r, lq1_r, log_z, z_rel)
    # the masses' logs: gammaln (to 16 u of its size), the powers and log Z
    rel = (16.0 * _U * 2.0 * math.lgamma(d + 1.0) + 3.0 * _U * d * (abs(lq_r) + abs(lq1_r))
           + 4.0 * _U * abs(log_z) + z_rel + 20.0 * _U)
    return atoms(vals, mass, min(rel, 1e-3), v_err), masses, charge


def _atoms(d: int, eps: float, v_lo: float, v_hi: float, ks: NDArray, r_budget: float,
           lq_r: float, lq1_r: float, log_z: float, z_rel: float
           ) -> tuple[NDArray, NDArray, float]:
    """The atoms of l (upper bounds of their values over victim budgets in [v_lo, v_hi]),
    their omega-masses and the values' error bound."""
    e = math.exp(eps)
    lq_a, lq1_a = (float(t) for t in _logs(v_hi))  # q at v_hi: the smallest
    lq_b, lq1_b = (float(t) for t in _logs(v_lo))  # q at v_lo: the largest
    vals, mass, errs = [], [], []
    for a, b in ((0, 0), (1, 0), (0, 1), (1, 1)):
        j = ks - a - b  # ones among the other d - 2 bits
        ok = (j >= 0) & (j <= d - 2)
        k = ks[ok]
        if k.size == 0:
            continue
        log_h_r = np.where(k < d, -math.log(2.0) - lq1_r, -math.log(2.0) - lq_r)
        jj = j[ok]
        w = (special.gammaln(d - 1.0) - special.gammaln(jj + 1.0) - special.gammaln(d - 1.0 - jj)
             + k * lq_r + (d - k) * lq1_r + log_h_r - log_z)
        # log rho_u(k) = k D1(u) + (d - k) D2(u), D1 = log(q_u / q_r), D2 = log((1 - q_u) /
        # (1 - q_r)), each from the budgets' difference (no cancellation); concave in q_u,
        # so over the range it is at most either end's value plus its tangent's rise
        # (concavity), and at least the smaller end's
        ends = []
        for x in (v_hi, v_lo):
            d1, d2, rel_d = _log_q_ratios(x, r_budget)
            lr = k * d1 + (d - k) * d2
            ends.append((lr, rel_d * (k * abs(d1) + (d - k) * abs(d2)) + 2.0 * _U * np.abs(lr)))
        (lr_a, er_a), (lr_b, er_b) = ends
        q_a, q_b = math.exp(lq_a), math.exp(lq_b)
        big_log = max(abs(lq_a), abs(lq_b), abs(lq1_a), abs(lq1_b))
        # (each q from exp of a log to 2 u of its size: (2 |log q| + 1) u relative)
        span = (max(q_b - q_a, 0.0) * (1.0 + 4.0 * _U)
                + (4.0 + 4.0 * big_log) * _U * (q_a + q_b))
        slope_a = k / q_a - (d - k) / (1.0 - q_a)  # d/dq of log rho at each end
        slope_b = k / q_b - (d - k) / (1.0 - q_b)
        slack = 1.0 + (8.0 + 4.0 * big_log) * _U
        rise_a = np.maximum(slope_a, 0.0) * span * slack
        rise_b = np.maximum(-slope_b, 0.0) * span * slack
        top_a, top_b = lr_a + er_a + rise_a, lr_b + er_b + rise_b
        lrho_max = np.minimum(top_a, top_b)
        lrho_min = np.minimum(lr_a - er_a, lr_b - er_b)
        # c_ab(u) = f_u(a) - e^eps f_u(b), monotone in q_u: its largest value at an end
        cs = []
        for lq, lq1 in ((lq_a, lq1_a), (lq_b, lq1_b)):
            f1, f0 = 0.5 * math.exp(-lq), 0.5 * math.exp(-lq1)
            fa, fb = (f1 if a else f0), (f1 if b else f0)
            cs.append((fa - e * fb, fa + e * fb))
        c_max, c_scale = max(cs)[0], max(c[1] for c in cs)
        lrho = lrho_max if c_max >= 0.0 else lrho_min
        scale = np.exp(log_z + lrho - log_h_r)  # Z rho / h_r
        v = scale * c_max
        # errors: c to (8 + 4 |log q|) u of its terms (f = 1 / (2 q) from exp of a log), at
        # the largest scale (a c computed below 0 may be above it); log rho's already in lrho
        # (moved to the safe side); the exponent's sum with log Z (z_rel) and log h_r, exp
        c_err = (8.0 + 4.0 * big_log) * _U * c_scale
        scale_hi = np.exp(log_z + np.maximum(lrho_max, lrho) - log_h_r)
        rel = 4.0 * _U * (np.abs(lrho) + abs(log_z) + abs(lq1_r) + 3.0) + 2.0 * z_rel
        errs.append(float(np.max(scale_hi * c_err + np.abs(v) * rel)))
        vals.append(v)
        mass.append(np.exp(w))
    return (np.concatenate(vals), np.concatenate(mass), max(errs) if errs else 0.0)


#: What the terms of :func:`binomial_range` that underflow can add (absolute, per sum).
RANGE_TINY = 1e-290
#: Users per block of :func:`binomial_range` (memory only).
_RANGE_BLOCK = 1 << 14
#: Up to this many trials the terms come from a recurrence (the first, (1 - q)^m >= 2^-m, stays
#: a normal float), beyond from their logs.
_RECURRENCE_MAX = 900


def binomial_range(m: int, eps: NDArray, ranges: list[tuple[int, int]]
                   ) -> tuple[list[NDArray], list[NDArray], NDArray]:
    """``(inside, outside, rel)`` per budget of ``eps``: for each ``(lo, hi)`` of ``ranges``,
    ``Pr[lo <= Bin(m, q) <= hi]`` and its complement, ``q = 1 / (e^eps + 1)``, each a sum of
    pmf terms (never 1 minus a sum), and a bound on every sum's relative error; terms that
    underflow add at most ``RANGE_TINY`` in all (absolute).  Up to ``_RECURRENCE_MAX``
    trials the terms are ``(1 - q)^m`` times the ratios ``(m - j) / (j + 1) e^-eps`` (three
    roundings each, besides the first term's ``2 u (m |log(1 - q)| + 1)``); beyond, each term's
    log to 16 u of its parts' sizes (gammaln, the powers); u per term of the sums."""
    eps = np.asarray(eps, dtype=np.float64)
    lq, lq1 = _logs(eps)
    inside = [np.zeros(eps.size) for _ in ranges]
    outside = [np.zeros(eps.size) for _ in ranges]
    if m <= _RECURRENCE_MAX:
        term = np.exp(m * lq1)
        ratio = np.exp(-eps)  # q / (1 - q)
        for j in range(m + 1):
            for k, (lo, hi) in enumerate(ranges):
                if lo <= j <= hi:
                    inside[k] += term
                else:
                    outside[k] += term
            if j < m:
                term = term * (float(m - j) / float(j + 1)) * ratio
        rel = (2.0 * (m * np.abs(lq1) + 1.0) + 4.0 * m + m + 4.0) * _U
        return inside, outside, rel
    j = np.arange(m + 1, dtype=np.float64)
    lc = special.gammaln(m + 1.0) - special.gammaln(j + 1.0) - special.gammaln(m - j + 1.0)
    masks = [(j >= lo) & (j <= hi) for lo, hi in ranges]
    for s in range(0, eps.size, _RANGE_BLOCK):
        a, b = lq[s:s + _RANGE_BLOCK, None], lq1[s:s + _RANGE_BLOCK, None]
        terms = np.exp(lc[None, :] + j[None, :] * a + (m - j[None, :]) * b)
        for k, mask in enumerate(masks):
            inside[k][s:s + _RANGE_BLOCK] = terms[:, mask].sum(axis=1)
            outside[k][s:s + _RANGE_BLOCK] = terms[:, ~mask].sum(axis=1)
    rel = (16.0 * _U * (2.0 * math.lgamma(m + 1.0) + m * (np.abs(lq) + np.abs(lq1)) + 4.0)
           + (m + 3.0) * _U)
    return inside, outside, rel
