"""The Chernoff tilt of the ``blanket`` bound's amplification sum (docs/theory.md 15.3 (N3)).

For a lattice law of X and a pool of blanket masses, ``log M_R(theta) + log E[X_+ e^{theta
X}]`` is convex in theta (a sum of cumulant generating functions); its minimum over ``[0,
theta_max]`` gives the Chernoff bound of A and the tilt of the FFT (:mod:`.amplification`).
Laws of at most ``GRID_MAX_POINTS`` points of positive mass take a grid, larger ones a
safeguarded Newton search; the sums run over the points of positive mass only (a lattice law
of a few hundred cells often spans thousands of points).  Any theta gives a bound: the search
only aims.

Code names: ``gammas``/``counts`` the distinct blanket probabilities of the other users and
how many hold each, ``theta`` the tilt, ``M_X`` and ``M_R`` the moment generating functions
of one blanket term and of their sum R.
"""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

__all__ = ["GRID_MAX_POINTS", "NEWTON_FTOL"]


class LatticeLaw(Protocol):
    """What the search reads of :class:`shuffledp.bounds.blanket.amplification.LatticeLaw`."""

    pmf: NDArray[np.float64]
    step: float

    @property
    def values(self) -> NDArray[np.float64]: ...

    @property
    def log_pmf(self) -> NDArray[np.float64]: ...

    @property
    def positive_part(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]: ...

    @property
    def support(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]: ...


def _lse(a: NDArray[np.float64]) -> float:
    """log sum exp(a) (-inf for an empty or all -inf array)."""
    if a.size == 0:
        return -math.inf
    m = float(a.max())
    if not math.isfinite(m):
        return m
    return m + math.log(float(np.exp(a - m).sum()))


def _log_mgf(law: LatticeLaw, theta: float) -> float:
    x, lp = law.support  # (the points of positive mass: the others add exactly 0)
    return _lse(lp + theta * x)


def _log_mgf_r(law: LatticeLaw, gammas: NDArray, counts: NDArray, theta: float) -> float:
    """log E[e^{theta R}] = sum_k n_k log(1 - gamma_k + gamma_k M_X(theta)), accurately for
    M_X(theta) near 1 (log1p of gamma (M_X - 1))."""
    lm = _log_mgf(law, theta)
    em1 = math.expm1(lm) if lm < 700 else math.inf
    if math.isinf(em1):
        return float(np.dot(counts, np.log(gammas) + lm + np.log1p((1 - gammas) * math.exp(-lm)
                                                                      / gammas)))
    return float(np.dot(counts, np.log1p(gammas * em1)))


def _log_pos_moment(law: LatticeLaw, theta: float) -> float:
    """log E[X_+ e^{theta X}] (-inf when X <= 0)."""
    log_w, x_pos = law.positive_part
    if x_pos.size == 0:
        return -math.inf
    return _lse(log_w + theta * x_pos)



def _coarse_arrays(law: LatticeLaw, k: int) -> tuple[NDArray, ...]:
    """``(x, log pmf, log of x_+ pmf, x_+)`` of the law with blocks of ``k`` adjacent points
    of positive mass merged at their mean (for the first pass of :func:`_newton_theta`: an
    aim only)."""
    x, lp = law.support
    p = np.exp(lp)
    starts = np.arange(0, p.size, k)
    mass = np.add.reduceat(p, starts)
    keep = mass > 0.0
    xm = np.add.reduceat(p * x, starts)[keep] / mass[keep]
    mass = mass[keep]
    pos = xm > 0.0
    with np.errstate(divide="ignore"):
        return xm, np.log(mass), np.log(mass[pos] * xm[pos]), xm[pos]


def _newton_search(x: NDArray, lp: NDArray, log_w: NDArray, x_pos: NDArray, gammas: NDArray,
                   counts: NDArray, hi: float, start: float | None) -> float:
    """The safeguarded Newton search of :func:`_newton_theta` on the arrays of a law (values,
    log pmf, the positive part's log weights and values), from 0 or from ``start`` (then
    without the checks of the interval's ends: the comparison with theta = 0 of
    :func:`_newton_theta` follows either way)."""
    x2, xp2 = x * x, x_pos * x_pos  # (once, not per step)

    def deriv(t: float) -> tuple[float, float]:
        z = lp + t * x
        zm = float(z.max())
        e = np.exp(z - zm)
        s0 = float(e.sum())
        m1 = float(np.dot(e, x)) / s0
        m2 = float(np.dot(e, x2)) / s0
        lm = zm + math.log(s0)  # log M_X(t)
        if lm > 700.0:  # (gamma M / (1 - gamma + gamma M) in the form that does not overflow)
            w = 1.0 / (1.0 + (1.0 - gammas) * math.exp(-lm) / gammas)
        else:
            mx = math.exp(lm)
            w = gammas * mx / (1.0 - gammas + gammas * mx)
        zp = log_w + t * x_pos
        ep = np.exp(zp - float(zp.max()))
        sp = float(ep.sum())
        p1 = float(np.dot(ep, x_pos)) / sp
        v = max(float(np.dot(ep, xp2)) / sp - p1 * p1, 0.0)
        d1 = float(np.dot(counts, w)) * m1 + p1
        d2 = float(np.dot(counts, w * (m2 - w * m1 * m1))) + v
        return d1, max(d2, 0.0)

    a, b = 0.0, hi
    if start is not None and 0.0 < start < hi:
        t = start  # (the bracket [0, hi] is narrowed by each step's sign below)
    else:
        d1, d2 = deriv(0.0)
        if d1 >= 0.0:
            return 0.0
        d1b, _ = deriv(hi)
        if d1b <= 0.0:
            return hi
        # the first step from 0 (for a convex f', at or beyond the root: the steps then
        # approach it from above)
        t = -d1 / d2 if d2 > 0.0 and -d1 / d2 < hi else 0.5 * hi
    moved = hi
    for _ in range(NEWTON_STEPS):
        d1, d2 = deriv(t)
        if d1 > 0.0:
            b = t
        else:
            a = t
        if d2 > 0.0 and d1 * d1 <= 2.0 * NEWTON_FTOL * d2:
            break  # the quadratic model's decrease left is below NEWTON_FTOL
        step = d1 / d2 if d2 > 0.0 else math.inf
        nxt = t - step
        # bisection when the step leaves the bracket or halves less than the one before it
        # (Newton's method crawls there; Numerical Recipes' rtsafe), at the geometric mean
        # of a wide bracket's ends (the root often lies decades below hi)
        if not (a < nxt < b) or abs(step) > 0.5 * moved:
            nxt = math.sqrt(a * b) if a > 0.0 and b > 4.0 * a else 0.5 * (a + b)
        moved = abs(nxt - t)
        t = nxt
        if b - a <= NEWTON_XTOL * hi:
            break
    return t


def _newton_theta(law: LatticeLaw, gammas: NDArray, counts: NDArray,
                  hi: float) -> tuple[float, float]:
    """:func:`_best_theta` for laws of many points: safeguarded Newton's method on ``[0, hi]``
    for the root of the convex exponent's derivative, one theta per step.  With ``w`` the
    tilted ``Pr[B = 1]`` of each class (``gamma M / (1 - gamma + gamma M)``), ``m1, m2`` the
    first two moments of X tilted by ``e^{theta x}`` and ``p1, v`` the mean and variance of X
    under the weights ``x_+ e^{theta x}``, the exponent's derivatives are
    ``f' = sum_k n_k w_k m1 + p1`` and ``f'' = sum_k n_k w_k (m2 - w_k m1^2) + v`` (>= 0).
    A step outside the bracket of the derivative's sign change, or one that does not halve the
    step before it, is a bisection (geometric in a wide bracket); the search stops as
    ``NEWTON_FTOL`` says.  The exponent is then
    recomputed at the point found by :func:`_log_mgf_r` and :func:`_log_pos_moment` and
    compared with theta = 0 (any theta gives a bound: the search only aims)."""
    log_w, x_pos = law.positive_part
    t = 0.0
    if x_pos.size:
        x, lp = law.support  # (the points of positive mass: the others add exactly 0)
        if x.size > COARSE_FACTOR * NEWTON_COARSE_POINTS:
            # first on a coarse copy of the law (blocks of adjacent points at their mean:
            # an aim only), then on the law itself from there
            coarse = _coarse_arrays(law, -(-x.size // NEWTON_COARSE_POINTS))
            t0 = (_newton_search(*coarse, gammas, counts, hi, None) if coarse[3].size
                  else None)  # (no block of positive mean: no aim)
            t = _newton_search(x, lp, log_w, x_pos, gammas, counts, hi, t0)
        else:
            t = _newton_search(x, lp, log_w, x_pos, gammas, counts, hi, None)

    def f(th: float) -> float:
        return _log_mgf_r(law, gammas, counts, th) + _log_pos_moment(law, th)

    best = min((f(0.0), 0.0), (f(t), t))
    return best[1], best[0]


#: Newton's search of :func:`_newton_theta`: at most this many steps; it stops when the
#: quadratic model's decrease left, ``f'^2 / (2 f'')``, is at most NEWTON_FTOL (a relative
#: 1e-10 of the bound) or the bracket is below NEWTON_XTOL of the search interval (time
#: only: any theta gives a bound).
NEWTON_STEPS = 60
NEWTON_FTOL = 1e-10
NEWTON_XTOL = 1e-9
#: Laws of more than COARSE_FACTOR times NEWTON_COARSE_POINTS points of positive mass are
#: first searched on a copy merged into about NEWTON_COARSE_POINTS blocks, then from there on
#: the law itself (time only: the same stopping rule decides the theta returned).
NEWTON_COARSE_POINTS = 512
COARSE_FACTOR = 4


#: Laws of more points of positive mass than this take :func:`_newton_theta` (the grid's
#: matrices would cost more than one evaluation per theta).
GRID_MAX_POINTS = 256
#: The first pass of :func:`_best_theta`: these fractions of its largest theta.
THETA_GRID = np.concatenate([[0.0], np.geomspace(1e-9, 1.0, 64)])


def _best_theta(law: LatticeLaw, gammas: NDArray, counts: NDArray) -> tuple[float, float]:
    """(theta, log of the Chernoff bound) nearly minimizing ``log M_R(theta) + log E[X_+
    e^{theta X}]`` over theta in [0, theta_max]: the best of a log-spaced grid, then three
    times of a linear grid between the best point's neighbours (a convex function; any theta
    gives a bound, the minimum is only a target).  Per theta, as :func:`_log_mgf_r` and
    :func:`_log_pos_moment` (all thetas at once; ``theta max|x| <= 700``); laws of more than
    ``GRID_MAX_POINTS`` points by :func:`_newton_theta`."""
    x, log_p = law.support  # (the points of positive mass: the others add exactly 0)
    x_abs = float(np.max(np.abs(x)))
    hi = min(1.0 / max(law.step, 1e-300), 700.0 / max(x_abs, 1e-300))
    gammas = np.asarray(gammas, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    if x.size > GRID_MAX_POINTS:
        return _newton_theta(law, gammas, counts, hi)
    pos = x > 0
    log_x = np.log(x[pos])

    def lse(z: NDArray) -> NDArray:
        zmax = z.max(axis=1)
        return zmax + np.log(np.exp(z - zmax[:, None]).sum(axis=1))

    def f(th: NDArray) -> NDArray:
        z = log_p[None, :] + th[:, None] * x[None, :]
        lm = lse(z)  # log M_X(theta)
        em1 = np.expm1(np.minimum(lm, 700.0))
        out = counts @ np.log1p(gammas[:, None] * em1[None, :])
        for i in np.flatnonzero(lm >= 700.0):  # (M_X - 1 would overflow)
            out[i] = _log_mgf_r(law, gammas, counts, float(th[i]))
        if not pos.any():
            return np.full(th.size, -math.inf)
        return out + lse(z[:, pos] + log_x[None, :])

    th = hi * THETA_GRID
    vals = f(th)
    k = int(np.argmin(vals))
    best = (float(vals[k]), float(th[k]))
    for _ in range(3):  # each pass: 33 points between the neighbours of the best so far
        th = np.linspace(th[max(k - 1, 0)], th[min(k + 1, th.size - 1)], 33)
        vals = f(th)
        k = int(np.argmin(vals))
        best = min(best, (float(vals[k]), float(th[k])))
    return best[1], best[0]
