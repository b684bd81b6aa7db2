"""Certified lower bound: the exact divergence of the dataset pair "every other user holds x1"
(and, for OUE, "every other user holds a third category"), through the law of a sum of n
i.i.d. terms (registered ``lr_sum_lower``, kind ``lower``).

The pair.  Identical budgets; every user runs the randomizer R of the family ``mechanism`` with
budget eps0.  The victim holds x0 (P) or x1 (Q); the n - 1 others all hold x1.  Under Q the n
reports are i.i.d. ``R(x1)``; under P one uniformly random report is ``R(x0)``.  So the
likelihood ratio of the shuffled multiset is ``(1/n) sum_i r(y_i)``, ``r = dR(x0) / dR(x1)``
(Su, Cheng, Wang, IEEE S&P 2026, arXiv 2504.07414, take their lower bounds from this
statistic), and exactly, with ``E = e^eps`` and ``S = sum_i r(Y_i)``, Y_i i.i.d. ``R(x1)``,

    H_E(P || Q) = E[(S/n - E)_+],         H_E(Q || P) = E[(1 - E S/n)_+].

Any post-processing of a neighbouring pair gives a lower bound on the worst case, and the
divergence is non-increasing in E: both are used below (docs/theory.md 13.5).

Exact lattice laws (Laplace).  The analyst is given only a *label* per report (a coarsening
of the output space: a post-processing, so its divergence is still a lower bound); the labels'
likelihood ratios ``r_c`` are chosen on the lattice ``phi + d Z`` with ``phi = E mod d``, so
``X = r_c - E`` lies on ``d Z`` exactly and

    H_E(P' || Q') = E[(X_1 + ... + X_n)_+] / n = A,

the amplification sum of the blanket module with every other user a blanket report (masses 1,
count n - 1), computed by :func:`~shuffledp.bounds.blanket.amplification.amplification_lower`
with every FFT, window and round-off error on the lower side; ``H(Q' || P') = E A'`` with
``X' = 1/E - r_c`` on the lattice through 1/E.  Laplace on [-1, 1] (inputs +1 and -1,
``r(y) = exp(eps0 clip(y, -1, 1))`` under ``Lap(-1, 2/eps0)``): labels are intervals of y.
Over ``[a, c]`` in [-1, 1] a label's ratio is exactly ``exp(eps0 (a + c) / 2)`` (the Q-density
is proportional to ``e^{-eps0 y / 2}`` there), so each interval's right end is solved in closed
form to put its ratio on the lattice.  The first label is ``y <= y*`` with y* solved so that its
ratio is the first lattice point at or above ``max(d, e^-eps0)`` (the reports that favour x1
most, merged), the last is ``y >= a_last`` with its ratio rounded down (up for
``H(Q'||P')``), a move of one label by less than d.

OUE (categories x0 and x1): only the two bits of x0 and x1 matter, ``r in {e^eps0, 1,
e^-eps0}`` with Q-probabilities ``(q/2, 1/2, (1 - q)/2)``, q = 1/(1 + e^eps0); the sum is a
multinomial and both divergences are summed exactly over the counts (a window of the counts;
only non-negative terms are dropped), scipy's binomial pmf with its relative error subtracted;
``n <= N_MAX_OUE``.  Binary RR and k-RR: the same pair is one of ``rr_exact``'s and
``krr_exact``'s.

The pair "others at a third value" (OUE with d >= 3: the others hold a third category x2, law
w).  With the victim's report at a uniformly random position, ``P(y) - E Q(y) = (1/n) sum_i
l(y_i) prod_j w(y_j)``, ``l = (p - E q) / w``, so exactly ``H_E(P||Q) = E[(l(Y_1) + ... +
l(Y_n))_+] / n`` with the Y_i i.i.d. w: again a sum of n i.i.d. terms (docs/theory.md 13.5).  For
OUE, l takes 7 values (bits of x0, x1, x2; :func:`oue_third_atoms`), not on any lattice: the law
is *contracted* onto one (:func:`contract_to_lattice`: pools of mass replaced by their means,
smaller in the convex order, so the sum's stop-loss value can only fall) and the amplification
sum computed with every error on the lower side (:func:`pair_sum_lower`).  The pair is
symmetric (swap the bits of x0 and x1), so ``H(Q||P)`` is the same.  For d >= 3 the bound is the
larger of the two pairs (the x1 pair then also by the contracted law, which is faster).

Code names -> symbols: ``r`` = the likelihood ratio of one report (label), ``d`` = lattice step
(``sd(r) / SD_STEPS``), ``phi`` = lattice shift, ``E'`` = e^eps raised to the lattice; third
value: ``p, q, w`` = the report laws of the victim at x0, at x1 and of the others, ``l`` = the
amplification variable, ``(a, b, c)`` = the bits of x0, x1, x2, ``u, v`` = ``p / w``, ``q / w``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from shuffledp._lazy import lazy_module
from shuffledp.binomial import binom_pmf
from shuffledp.bounds.base import (
    INVERSION_ATOL,
    INVERSION_RTOL,
    Bound,
    BoundInfo,
    Coverage,
    mechanism_lower_coverage,
)
from shuffledp.bounds.blanket.amplification import (
    WINDOW_TAIL,
    LatticeLaw,
    _halfwidth,
    amplification_lower,
)
from shuffledp.bounds.registry import register_bound
from shuffledp.budgets import BudgetProfile
from shuffledp.errors import ParameterRegimeError
from shuffledp.families import Family, get_family

special = lazy_module("scipy.special")

__all__ = ["LR_FAMILIES", "SD_STEPS", "N_MAX_OUE", "PAIR_STEPS", "lr_sum_delta", "laplace_labels",
           "contract_to_lattice", "pair_sum_lower", "oue_third_atoms", "lr_sum_eps",
           "verified_lower_eps", "BOUND"]

_U = float(np.finfo(float).eps) / 2.0
#: Lattice steps per standard deviation of r under Q.
SD_STEPS = 64
#: Largest number of lattice points of one report's law (a coarser step beyond).
MAX_POINTS = 1 << 13
#: Largest lattice index (ratios / step); smaller budgets are refused (integer indices).
_MAX_INDEX = 2.0**50
#: The families with a pair here.
LR_FAMILIES = ("laplace", "oue")
#: OUE's exact multinomial sum ("others at x1") is done for at most this many users (the
#: contracted lattice law beyond).
N_MAX_OUE = 20_000
#: Lattice steps per standard deviation of a contracted pair law (:func:`contract_to_lattice`).
PAIR_STEPS = 128
#: Largest amplification window (lattice points) a contracted pair law is given.
PAIR_MAX_WINDOW = float(1 << 20)
#: Beyond this many users the Laplace step also widens so that the sum's amplification window
#: keeps at most ``w`` points, for each ``w`` in ``LAPLACE_WINDOWS`` (each a valid bound; the
#: larger is kept).  Measured: at 10^6 users the finest steps lose more to the window's error
#: charges than they gain and cost 4x, and which window is best varies erratically with n and
#: eps0 (at 3e5 users 2^20 is better for eps0 = 4, 2^18 for eps0 = 1).
LAPLACE_N_WINDOW = 100_000
LAPLACE_WINDOWS = (float(1 << 20), float(1 << 18))
#: Relative error of scipy's binomial pmf (as in rr_exact).
_PMF_RTOL = 1e-9
#: Tail mass left out of each count window of OUE's sum (only non-negative terms are dropped).
_OUE_TAIL = 1e-40


# --------------------------------------------------------------------------- lattice laws
def _sd_r(name: str, eps0: float) -> float:
    """Standard deviation of r under Q for Laplace (it only sets the lattice step):
    ``E_Q r^2 = lo^2 / 2 + int_{-1}^{1} e^{2 eps0 y} dQ + hi^2 e^{-eps0} / 2``."""
    lo, hi = math.exp(-eps0), math.exp(eps0)
    b = 2.0 / eps0
    k = 2.0 * eps0 - 1.0 / b
    mid = (math.exp(-1.0 / b) / (2.0 * b)) * (math.exp(k) - math.exp(-k)) / k
    m2 = 0.5 * lo * lo + mid + 0.5 * math.exp(-eps0) * hi * hi
    return math.sqrt(max(m2 - 1.0, 1e-300))


def laplace_labels(eps0: float, d: float, phi: float) -> tuple[NDArray[np.float64],
                                                              NDArray[np.float64], float, float]:
    """Labels of the Laplace pair (module docstring) with ratios on ``phi + d Z``:
    ``(ratios, masses, last_ratio, last_mass)``; every ratio is within a few ulps of its lattice
    point except the last label's, which the caller rounds.  Masses are Q-probabilities with a
    relative error of a few ulps each (``sf(a) (1 - e^{-(c - a)/b})``, no cancellation).

    The first label ``y <= y*`` (the atom y <= -1 and ``(-1, y*]``) has ratio
    ``(lo / 2 + m e^{eps0 (y* - 1) / 2}) / (1/2 + m)``, m = Q((-1, y*]), increasing in y*: y* is
    solved (bisection to the last bit) for the first lattice point at or above ``max(d, lo)``.
    """
    b = 2.0 / eps0
    half = eps0 / 2.0
    lo, hi = math.exp(-eps0), math.exp(eps0)

    def sf(y: float) -> float:  # Q(Y > y) for y >= -1, Q = Lap(-1, b)
        return 0.5 * math.exp(-(y + 1.0) / b)

    def mass(a: float, c: float) -> float:
        return sf(a) * -math.expm1(-(c - a) / b)

    def first_ratio(y: float) -> float:
        m = mass(-1.0, y)
        return (0.5 * lo + m * math.exp(half * (y - 1.0))) / (0.5 + m)

    target = phi + d * math.ceil((max(d, lo) - phi) / d)
    if target <= lo * (1.0 + 4.0 * _U):  # lo itself is on the lattice: the atom alone
        y_star, first = -1.0, lo
    else:
        y_lo, y_hi = -1.0, 1.0
        if first_ratio(y_hi) < target:
            raise ParameterRegimeError("lr_sum_lower: lattice step too coarse for the Laplace "
                                       f"pair at eps0 = {eps0:g}")
        for _ in range(200):
            mid = 0.5 * (y_lo + y_hi)
            if mid <= y_lo or mid >= y_hi:
                break
            if first_ratio(mid) < target:
                y_lo = mid
            else:
                y_hi = mid
        y_star, first = y_hi, first_ratio(y_hi)
    ratios, masses = [first], [0.5 + mass(-1.0, y_star)]
    a = y_star
    while a < 1.0:
        # the next lattice point above r(a), then the interval [a, c] whose ratio it is
        r_a = math.exp(eps0 * a)
        k = math.floor((r_a - phi) / d) + 1.0
        while phi + k * d <= r_a * (1.0 + 1e-12):  # strictly above r(a): c > a
            k += 1.0
        t = phi + k * d
        c = 2.0 * math.log(t) / eps0 - a
        if c >= 1.0:
            break
        if len(ratios) > 4 * MAX_POINTS:  # cannot happen: every label ends a step higher
            raise ParameterRegimeError(f"lr_sum_lower: the Laplace labels at eps0 = {eps0:g} "
                                       "do not advance (floating point)")
        ratios.append(t)
        masses.append(mass(a, c))
        a = c
    m_int = mass(a, 1.0) if a < 1.0 else 0.0
    m_atom = 0.5 * math.exp(-2.0 / b)
    last = (m_int * math.exp(half * (a + 1.0)) + m_atom * hi) / (m_int + m_atom)
    return np.array(ratios), np.array(masses), last, m_int + m_atom


def _lattice(ratios, masses, phi, last, m_last, d: float, shift_idx: int, sign: int,
             scale: float) -> LatticeLaw:
    """The law of ``sign * (r_c - phi) / d - shift_idx`` (integers) times d: each ratio's
    lattice index, the last label's rounded so that the value can only fall."""
    idx = np.rint((np.asarray(ratios) - phi) / d).astype(np.int64)
    k_last = math.floor((last - phi) / d) if sign > 0 else math.ceil((last - phi) / d)
    idx = np.append(idx, k_last)
    masses = np.append(masses, m_last)
    vals = sign * idx - shift_idx
    off = int(vals.min())
    pmf = np.zeros(int(vals.max()) - off + 1)
    np.add.at(pmf, vals - off, masses)
    # masses: a relative error of at most 32 u each (an exponential of an argument of at most
    # eps0 <= 7 in size, expm1, products and sums of positive terms), and (k - 1) u of the
    # sequential sums of np.add.at where k labels share a lattice point: a relative error of
    # every lattice point, both ways (docs/theory.md 15.3 (N7)); ratios: each label's true
    # ratio is within a few ulps of its lattice point, a move charged as Wasserstein-1
    k_max = int(np.bincount(vals - off).max())
    return LatticeLaw(off, pmf, d, rel_error=(32.0 + k_max) * _U * 1.01,
                      w1_error=16.0 * _U * scale)


def _laplace_step(eps0: float, n: int = 1, window: float = math.inf) -> float:
    """The lattice step for Laplace at eps0: ``sd(r) / SD_STEPS``, finer where the first label
    could miss its lattice point (its ratio ranges over ``[e^-eps0, widest]``, widest its value
    with y* = 1, so the step is at most half that range), coarser where that needs more than
    ``MAX_POINTS`` points per report or where the sum of ``n`` terms would need an amplification
    window of more than ``window`` points (any step is valid; at most the half range
    above).  ParameterRegimeError where the labels cannot be built that way (eps0 above about 7,
    or far below 1e-4) or the lattice indices would pass 2^50."""
    lo, hi = math.exp(-eps0), math.exp(eps0)
    b = 2.0 / eps0
    m = 0.5 * -math.expm1(-2.0 / b)  # Q((-1, 1))
    room = m * -math.expm1(-eps0) / (0.5 + m)  # widest - lo, without cancellation
    sd = _sd_r("laplace", eps0)
    d = min(sd / SD_STEPS, room / 2.0)
    d = max(d, (hi - lo) / MAX_POINTS)
    if n > 1 and math.isfinite(window):  # the sum's window, as for a pair law (_pair_step)
        span = hi - lo
        half = min(_halfwidth(4.0 * n * sd * sd, span, WINDOW_TAIL), n * span)
        d = max(d, min((2.0 * (half + span) + 4.0 * span) / window, room / 2.0))
    if not (math.isfinite(d) and d > 0.0) or max(d, lo) + d > lo + room:
        raise ParameterRegimeError(
            f"lr_sum_lower: no Laplace lattice at eps0 = {eps0:g} (step {d:.3g} with at most "
            f"{MAX_POINTS} points per report; eps0 from about 1e-4 to 7)")
    if (2.0 * hi + 1.0) / d > _MAX_INDEX:
        raise ParameterRegimeError(
            f"lr_sum_lower: eps0 = {eps0:g} is too small for its lattice (step {d:.3g}, "
            "indices beyond 2^50)")
    return d


def _laplace_direction(n: int, eps0: float, eps: float, direction: int,
                       window: float = math.inf) -> float:
    """One direction of the Laplace pair: ``H(P'||Q')`` (``direction = 1``) or ``H(Q'||P')``
    (``-1``), every error on the lower side; ``window`` as in :func:`_laplace_step`."""
    d = _laplace_step(eps0, n, window)
    big_e = math.exp(eps)
    scale = math.exp(eps0) + big_e + 1.0
    if direction == 1:
        # H(P'||Q'): the lattice through E, so X = r - E = d (idx - k) exactly
        phi = math.fmod(big_e, d)
        ratios, masses, last, m_last = laplace_labels(eps0, d, phi)
        k = int(round((big_e - phi) / d))
        return amplification_lower(_lattice(ratios, masses, phi, last, m_last, d, k, 1, scale),
                                   [1.0], [n - 1])
    # H(Q'||P') = E A' with X' = 1/E - r = d (j - idx): the lattice through 1/E
    inv = 1.0 / big_e
    phi2 = math.fmod(inv, d)
    ratios, masses, last, m_last = laplace_labels(eps0, d, phi2)
    j = int(round((inv - phi2) / d))
    law2 = _lattice(ratios, masses, phi2, last, m_last, d, -j, -1, scale)
    return big_e * (1.0 - 8.0 * _U) * amplification_lower(law2, [1.0], [n - 1])


def _laplace_delta(n: int, eps0: float, eps: float) -> float:
    return float(max(_laplace_direction(n, eps0, eps, 1),
                     _laplace_direction(n, eps0, eps, -1), 0.0))


# --------------------------------------------------------------------------- contraction
def contract_to_lattice(x, w, d: float) -> LatticeLaw:
    """A law on the lattice ``d Z`` that is smaller in the convex order than the discrete law
    ``sum_k w_k delta_{x_k}`` (docs/theory.md 13.5, "contraction"): every output atom is the
    exact mean of a pool of input mass (whole atoms or fractions of them, pooled in order of
    x), so the output is a mean-preserving contraction, and ``E[(X_1 + ... + X_n)_+]`` of it is
    at most that of the input (convex order is kept by sums of independent terms).  The last
    pool is brought onto the lattice with mass pulled from the lattice atoms below it; only if
    those do not suffice is its remainder moved down to the lattice (a decrease, also valid).

    Floating point: the positions carry at most a few ulps of ``span = max|x|`` per operation
    (charged as Wasserstein-1 ``16 u span (K + 2)``, K the number of atoms) and every mass a
    few ulps of the input mass it came from (total variation ``16 u``).

    >>> law = contract_to_lattice([-1.0, 0.3, 2.0], [0.25, 0.5, 0.25], 0.25)
    >>> bool(abs(law.mean - 0.4) < 1e-12 and abs(law.pmf.sum() - 1.0) < 1e-12)
    True
    """
    xs = np.asarray(x, dtype=np.float64)
    ws = np.asarray(w, dtype=np.float64)
    if xs.ndim != 1 or xs.shape != ws.shape or xs.size == 0:
        raise ValueError("x and w must be non-empty 1-d arrays of one length")
    if not (np.all(np.isfinite(xs)) and np.all(np.isfinite(ws)) and np.all(ws >= 0)):
        raise ValueError("x must be finite and w finite and >= 0")
    if not (math.isfinite(d) and d > 0):
        raise ValueError(f"d must be finite and > 0, got {d!r}")
    order = np.argsort(xs, kind="stable")
    xs, ws = xs[order], ws[order]
    keep = ws > 0
    xs, ws = xs[keep], ws[keep]
    if xs.size == 0:
        raise ValueError("w must have a positive entry")
    out: dict[int, float] = {}

    def emit(k: int, m: float) -> None:
        out[k] = out.get(k, 0.0) + m

    m, z = float(ws[0]), float(xs[0])
    i = 1
    while i < xs.size:
        k = math.ceil(z / d)
        t = k * d
        xn, wn = float(xs[i]), float(ws[i])
        if xn > t:
            s = m * max(t - z, 0.0) / (xn - t)  # (m z + s xn) / (m + s) = t
            if s <= wn:
                emit(k, m + s)
                m, z = wn - s, xn
                i += 1
                continue
        z = (m * z + wn * xn) / (m + wn)  # pool the whole next atom
        m += wn
        i += 1
    if m > 0.0:
        # the last pool: pull mass from the lattice atoms below floor(z) (nearest first)
        while m > 0.0:
            ks = math.floor(z / d)
            below = [k for k in out if k < ks and out[k] > 0.0]
            if not below:
                emit(ks, m)  # moved down by less than d: a decrease
                break
            k = max(below)
            s = m * (z - ks * d) / ((ks - k) * d)
            if s <= out[k]:
                out[k] -= s
                emit(ks, m + s)
                break
            z = (m * z + out[k] * k * d) / (m + out[k])
            m += out.pop(k)
    ks_arr = np.array(sorted(out), dtype=np.int64)
    pmf = np.zeros(int(ks_arr[-1] - ks_arr[0]) + 1)
    pmf[ks_arr - ks_arr[0]] = np.maximum([out[int(k)] for k in ks_arr], 0.0)
    span = float(np.max(np.abs(xs))) + d
    return LatticeLaw(int(ks_arr[0]), pmf, d, tv_error=16.0 * _U,
                      w1_error=16.0 * _U * span * (xs.size + 2))


def _pair_step(x, w, n: int) -> float:
    """The lattice step of a contracted pair law: ``min(sd, smallest gap between atoms, largest
    atom) / PAIR_STEPS`` (a contraction moves each atom by less than a step, and pools
    neighbours whose gap is below it; with few users the largest atom's distance from 0 is what
    the positive part sees), coarser where the amplification window (the sum's Bernstein half-width
    at ``WINDOW_TAIL`` and the range of one term, both ways) would pass ``PAIR_MAX_WINDOW``
    points."""
    xs, ws = np.asarray(x, dtype=np.float64), np.asarray(w, dtype=np.float64)
    mean = float(np.dot(ws, xs)) / float(ws.sum())
    sd = math.sqrt(max(float(np.dot(ws, (xs - mean) ** 2)) / float(ws.sum()), 1e-300))
    span = float(xs.max() - xs.min())
    gaps = np.diff(np.unique(xs))
    scale = min(sd, float(gaps.min())) if gaps.size else sd
    if xs.max() > 0.0:  # few users: the largest atom's own distance from the kink at 0 counts
        scale = min(scale, float(xs.max()))
    # the tilt can widen the law; the sum never leaves n times the range
    half = min(_halfwidth(4.0 * n * sd * sd, span, WINDOW_TAIL), n * span)
    width = 2.0 * (half + span) + 4.0 * span
    return max(scale / PAIR_STEPS, width / PAIR_MAX_WINDOW)


def pair_sum_lower(x, w, n: int) -> float:
    """A lower bound on ``E[(X_1 + ... + X_n)_+] / n``, X_i i.i.d. with the discrete law
    ``(x, w)``: the law contracted onto a lattice (:func:`contract_to_lattice`), then
    :func:`~shuffledp.bounds.blanket.amplification.amplification_lower` (every FFT, window and
    round-off error on the lower side)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n!r}")
    law = contract_to_lattice(x, w, _pair_step(x, w, n))
    return amplification_lower(law, [1.0], [n - 1])


# --------------------------------------------------------------------------- OUE
def oue_third_atoms(eps0: float, big_e: float) -> tuple[NDArray[np.float64],
                                                       NDArray[np.float64]]:
    """The law of ``l = (p - E q) / w`` under w for OUE's pair "others at a third category"
    (docs/theory.md 13.5): victim at category x0 (law p) or x1 (q), every other user at x2 (w).
    Only the bits ``(a, b, c)`` of x0, x1, x2 matter; with ``t = 1 - c``, ``l = u - E v``,
    ``u = e^{eps0 (t + a - 1)}``, ``v = e^{eps0 (t + b - 1)}`` and w-probability
    ``(1/2) P(a) P(b)``, a and b Bernoulli(q), q = 1/(1 + e^eps0).  Equal values are merged."""
    q0 = float(special.expit(-eps0))  # q
    q1 = float(special.expit(eps0))  # 1 - q
    acc: dict[float, float] = {}
    for t in (0, 1):
        for a in (0, 1):
            for b in (0, 1):
                u = math.exp(eps0 * (t + a - 1))
                v = math.exp(eps0 * (t + b - 1))
                pr = 0.5 * (q0 if a else q1) * (q0 if b else q1)
                val = u - big_e * v
                acc[val] = acc.get(val, 0.0) + pr
    xs = np.array(sorted(acc))
    return xs, np.array([acc[v] for v in xs])


def _oue_third_delta(n: int, eps0: float, eps: float) -> float:
    """The pair "others at a third category" (d >= 3): ``H_E(P||Q)``, equal to ``H_E(Q||P)``
    (the pair is symmetric under swapping the bits of x0 and x1)."""
    x, w = oue_third_atoms(eps0, math.exp(eps))
    return pair_sum_lower(x, w, n)


def _oue_x1_delta(n: int, eps0: float, eps: float, exact: bool = True) -> float:
    """The pair "others at x1": the exact multinomial sums when ``exact`` and n <= N_MAX_OUE,
    else the contracted lattice law of ``r - E`` (both directions; faster)."""
    if exact and n <= N_MAX_OUE:
        return _oue_delta(n, eps0, eps)
    q0 = float(special.expit(-eps0))
    q1 = float(special.expit(eps0))
    big_e = math.exp(eps)
    r = np.array([math.exp(eps0), 1.0, math.exp(-eps0)])
    w = np.array([q0 / 2.0, 0.5, q1 / 2.0])
    h_pq = pair_sum_lower(r - big_e, w, n)
    h_qp = big_e * (1.0 - 8.0 * _U) * pair_sum_lower(1.0 / big_e - r, w, n)
    return max(h_pq, h_qp, 0.0)


def _oue_delta(n: int, eps0: float, eps: float) -> float:
    """Exact multinomial sums of the OUE pair (module docstring), rounded down."""
    q0 = float(special.expit(-eps0))  # Pr[bit of a category the user does not hold]
    q1 = float(special.expit(eps0))
    lo, hi = math.exp(-eps0), math.exp(eps0)
    p_hi, p_lo = q0 / 2.0, q1 / 2.0  # Q-probabilities of r = e^eps0 and r = e^-eps0
    big_e = math.exp(eps)
    c_hi = _window(n, p_hi)
    w_hi = binom_pmf(c_hi, n, p_hi)
    total_pq, total_qp, ops = 0.0, 0.0, 0
    p_cond = p_lo / (1.0 - p_hi)  # Pr[r = e^-eps0 | r != e^eps0]
    for c, w in zip(c_hi, w_hi, strict=True):
        m = n - int(c)
        c_lo = _window(m, p_cond)
        w_lo = binom_pmf(c_lo, m, p_cond)
        s = (c * hi + c_lo * lo + (m - c_lo)) / n  # S / n
        total_pq += float(w) * float(np.dot(w_lo, np.maximum(s - big_e, 0.0)))
        total_qp += float(w) * float(np.dot(w_lo, np.maximum(1.0 - big_e * s, 0.0)))
        ops = max(ops, c_lo.size)
    # every term >= 0 with a relative error of at most 2 _PMF_RTOL + (ops + 8) u (products
    # of two pmfs and a difference computed once); the sums add (n_terms) u
    rel = 2.0 * _PMF_RTOL + (2.0 * ops + c_hi.size + 16.0) * _U
    return max(total_pq, total_qp, 0.0) * (1.0 - rel)


def _window(m: int, p: float) -> NDArray[np.int64]:
    """Counts of ``Bin(m, p)`` outside of which the mass is below ``_OUE_TAIL`` (a
    Bernstein-type cut; only non-negative terms are dropped, so no charge is needed)."""
    if m <= 2000:
        return np.arange(m + 1, dtype=np.int64)
    sd = math.sqrt(m * p * (1.0 - p))
    t = math.log(2.0 / _OUE_TAIL)
    half = math.sqrt(2.0 * sd * sd * t) + t / 1.5 + 2.0
    a = max(0, math.floor(m * p - half))
    b = min(m, math.ceil(m * p + half))
    return np.arange(a, b + 1, dtype=np.int64)


# --------------------------------------------------------------------------- the bound
def _check(*, profile: BudgetProfile, mechanism: Any = "laplace") -> None:
    fam = get_family(mechanism)
    if fam.name not in LR_FAMILIES:
        raise ParameterRegimeError(
            f"lr_sum_lower has no pair for {fam}: its mechanism must be one of "
            f"{', '.join(LR_FAMILIES)} (oue as 'oue:d'; binary RR: rr_exact; k-RR: "
            "krr_exact)")
    if fam.name == "laplace" and profile.eps_max > 0.0:
        _laplace_step(profile.eps_max)


def _pieces(profile: BudgetProfile, mechanism: Any) -> list[Callable[[float], float]]:
    """The lower bounds on delta(eps) whose maximum is the bound: the pairs (and, for
    Laplace, the two directions of its pair), each a function of eps."""
    n, eps0 = profile.n, profile.eps_max
    fam = get_family(mechanism)
    if fam.name == "oue":
        if fam.k is None or fam.k < 3:
            return [lambda e: _oue_x1_delta(n, eps0, e)]
        # d >= 3: the third-category pair, and the x1 pair by the faster contracted law
        return [lambda e: _oue_third_delta(n, eps0, e),
                lambda e: _oue_x1_delta(n, eps0, e, exact=False)]
    windows = LAPLACE_WINDOWS if n > LAPLACE_N_WINDOW else (math.inf,)
    return [lambda e, s=s, w=w: _laplace_direction(n, eps0, e, s, w)
            for w in windows for s in (1, -1)]


def lr_sum_delta(*, profile: BudgetProfile, eps: float, mechanism: Any = "laplace") -> float:
    """A lower bound on the exact delta(eps) of the pair "others at x1" (module docstring).

    >>> from shuffledp import BudgetProfile
    >>> d = lr_sum_delta(profile=BudgetProfile.identical(n=1000, eps0=1.0), eps=0.1)
    >>> bool(0.0 < d < 0.01)
    True
    """
    if not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    _check(profile=profile, mechanism=mechanism)
    eps0 = profile.eps_max
    if eps >= eps0 or eps0 <= 0.0:
        return 0.0
    return float(max(max(f(eps) for f in _pieces(profile, mechanism)), 0.0))


def verified_lower_eps(fn: Callable[[float], float], target: float, eps_top: float,
                       floor: float = 0.0, *, rtol: float = INVERSION_RTOL,
                       atol: float = INVERSION_ATOL) -> float:
    """A lower bound on ``eps(target)`` from a lower bound ``fn`` on a non-increasing delta(eps)
    that is 0 from ``eps_top`` on: the largest eps the search finds with ``fn(eps) > target``
    *evaluated* (then the true delta(eps) > target, so the true eps(target) is above it),
    within ``max(atol, rtol eps)`` of the crossing where ``fn`` is monotone, else ``floor``.

    ``fn`` need not be monotone (a certified lower bound can lose more to its error charges
    at some eps than at others): only evaluated points are returned, so the answer is valid
    whatever ``fn`` does.  ``floor`` is a value the caller already holds (another pair's
    answer); if ``fn(floor) <= target`` this pair cannot raise it and nothing more is done.
    The search: from ``floor`` or halving down from ``eps_top`` to a point above the target,
    then the Illinois regula falsi on ``log fn - log target`` inside the bracket (a bisection
    step when an end has ``fn = 0`` or the bracket stalls).

    >>> round(verified_lower_eps(lambda e: max(0.5 - e, 0.0), 0.25, 1.0), 6)
    0.25
    """
    log_t = math.log(target)

    def g(e: float) -> float:
        v = float(fn(e))
        return math.log(v) - log_t if v > 0.0 else -math.inf

    hi, g_hi = eps_top, -math.inf
    if floor > 0.0:
        lo, g_lo = floor, g(floor)
        if not g_lo > 0.0:
            return floor
    else:
        lo, g_lo = eps_top, -math.inf
        for _ in range(200):
            lo = lo / 2.0
            if lo < atol:
                return 0.0
            g_lo = g(lo)
            if g_lo > 0.0:
                break
            hi, g_hi = lo, g_lo
        else:  # pragma: no cover - 200 halvings pass atol first
            return 0.0
    last = 0  # +1: lo moved last, -1: hi moved last
    for it in range(400):
        width = hi - lo
        if width <= max(atol, rtol * lo):
            break
        if math.isfinite(g_hi) and it < 100:
            x = hi - g_hi * width / (g_hi - g_lo)
            x = min(max(x, lo + 1e-3 * width), hi - 1e-3 * width)
        else:
            x = lo + 0.5 * width
        gx = g(x)
        if gx > 0.0:
            if last == 1:
                g_hi /= 2.0  # Illinois: the end that stayed put loses half its weight
            lo, g_lo, last = x, gx, 1
        else:
            if last == -1:
                g_lo /= 2.0
            hi, g_hi, last = x, gx, -1
    return lo


def lr_sum_eps(*, profile: BudgetProfile, delta: float, mechanism: Any = "laplace") -> float:
    """A lower bound on eps(delta): the largest of the pieces' verified answers
    (:func:`verified_lower_eps`; a piece that cannot pass the answer so far is evaluated once)."""
    _check(profile=profile, mechanism=mechanism)
    eps0 = profile.eps_max
    if eps0 <= 0.0:
        return 0.0
    best = 0.0
    for f in _pieces(profile, mechanism):
        best = max(best, verified_lower_eps(f, float(delta), eps0, best))
    return best


def _covers(*, family: Family, profile: BudgetProfile, mechanism: Any = "laplace") -> Coverage:
    return mechanism_lower_coverage("lr_sum_lower", LR_FAMILIES, get_family(mechanism), family,
                                    "pair")


def _diagnostics(*, profile: BudgetProfile, eps: float, delta: float,
                 mechanism: Any = "laplace") -> dict[str, Any]:
    fam = get_family(mechanism)
    if fam.name == "oue" and fam.k is not None and fam.k >= 3:
        pair = "the larger of others at x1 and others at a third category"
    else:
        pair = "others at x1"
    return {"mechanism": fam.spec, "pair": pair}


BOUND = register_bound(
    Bound(
        info=BoundInfo(
            name="lr_sum_lower",
            kind="lower",
            title=("Others at x1 (or, OUE, at a third category): exact divergence of one pair "
                   "via a sum of i.i.d. terms"),
            citation=("the pairs 'others at x1' and (OUE) 'others at a third category' (Su, "
                      "Cheng, Wang IEEE S&P 2026, arXiv 2504.07414); exact lattice labels and "
                      "lattice contractions: docs/theory.md 13.5"),
            personalized=False,
            approx_ldp=False,
            randomizers=("laplace",),
            options={"mechanism": "laplace"},
            coverage_note=("a lower bound for its mechanism (option mechanism: laplace, "
                           "oue:d), identical budgets"),
        ),
        delta_fn=lr_sum_delta,
        eps_fn=lr_sum_eps,
        check_fn=_check,
        diagnostics_fn=_diagnostics,
        covers_fn=_covers,
    )
)
