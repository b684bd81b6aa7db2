"""The amplification sum of the blanket decomposition, with certified numerics.

Given the law of the privacy amplification variable ``X = l(W)``, ``W ~ omega``, on a lattice
(:class:`LatticeLaw`) and the blanket probabilities ``gamma_j`` of the other users, this module
bounds

    A = E[ X 1{X + R > 0} ],    R = sum_j B_j X_j,   B_j ~ Bernoulli(gamma_j),

all independent, the X_j distributed as X.  By docs/theory.md 15 (Theorem 6) A bounds the
hockey-stick divergence of the shuffled protocol (it equals
``sum_m Pr[M = m] E[(X_1 + ... + X_{m+1})_+] / (m + 1)``, M the number of blanket reports).

Computation (docs/theory.md 15.3):

* ``A = sum_x p(x) x Pr[R > -x]``: the law of R is needed only on the window of thresholds
  ``-x``.  It is computed by FFT under an exponential tilt: with ``theta >= 0`` and
  ``M_R(theta) = E[e^{theta R}]``, ``Pr[R > r] = M_R(theta) E_theta[e^{-theta R} 1{R > r}]``,
  and the tilted law is concentrated where the thresholds are, so tails far below the FFT's
  round-off are computed with relative accuracy.  ``theta`` minimizes the Chernoff bound
  ``M_R(theta) E[X_+ e^{theta X}]`` (itself an upper bound on A, :func:`chernoff_bound`).
* The FFT works on a circle of N lattice points holding the thresholds and the tilted law's
  mean +- its standard deviations, cut to R's support; the tilted mass outside it (the smaller
  of Bernstein's inequality, bounded summands, and Chernoff's bound with the tilted R's own
  moment generating function on a grid of exponents; none beyond the support) wraps around:
  it is added to the upper tail probabilities and subtracted from the lower ones.
* FFT round-off: an estimate with a safety factor (as :mod:`shuffledp.poisson_binomial`), not a
  proof: the exponent of the product of the users' factors carries a relative error of at most
  ``4 u`` per unit of its modulus, the transforms ``5 u log2 N`` of their l2 norms.
* Terms with x > 0 use an upper bound on ``Pr[R > -x]``, terms with x < 0 a lower bound.
* The lattice law's own floating-point error.  A *relative* error ``rho``
  (``LatticeLaw.rel_error``: the law p' the pmf stands for lies between ``(1 - rho) p~ - e``
  and ``(1 + rho) p~ + e`` entrywise) scales A by at most :func:`law_factor`,
  ``E[max(lambda s, 1)^(M+1)] / E[min(s, 1)^(M+1)]`` with ``lambda = 1 + rho`` and s the
  pmf's mass (Chebyshev's sum inequality, ``E[(S_{m+1})_+] / (m + 1)`` being non-increasing
  in m): a factor of about ``1 + rho E[M]``, where an L1 charge grows like ``rho E[M]``
  times E[X_+] whatever A is (docs/theory.md 15.3 (N7)).  The absolute remainder e (an L1
  distance tau, ``LatticeLaw.tv_error``; all of the error when ``rel_error`` is 0) costs at
  most ``tau c^N (max(x, 0) + E[M] E[X_+])`` (:func:`law_charge`), changing one summand at a
  time, whose change weighs the others' sum by its positive part, at most the sum of their
  positive parts; moves of mass by small distances (``LatticeLaw.w1_error``, a
  Wasserstein-1 distance) cost at most that distance, ``E[(S)_+] / (m + 1)`` being
  1/(m+1)-Lipschitz in each summand.

Code names: ``p`` the lattice pmf of X, ``step`` the lattice step, ``gammas``/``counts`` the
distinct blanket probabilities of the other users and how many hold each, ``theta`` the tilt.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from shuffledp._lazy import lazy_module
from shuffledp.bounds.blanket.tilt import (  # noqa: F401 (names re-exported for the tests)
    GRID_MAX_POINTS,
    _best_theta,
    _log_mgf,
    _log_mgf_r,
    _log_pos_moment,
    _lse,
)

sfft = lazy_module("scipy.fft")
special = lazy_module("scipy.special")

__all__ = ["LatticeLaw", "Amplification", "amplification_bound", "amplification_lower",
           "chernoff_bound", "law_charge", "law_factor"]

_U = float(np.finfo(float).eps) / 2.0
#: Safety factor on the FFT round-off estimate (an estimate, not a proof).
FFT_SAFETY = 10.0
#: Tilted mass allowed outside the FFT window, relative to the tilted law (Bernstein).
WINDOW_TAIL = 1e-15
#: Largest FFT size (2^24 points: 256 MB of complex numbers).
MAX_FFT = 1 << 24
#: Frequencies whose bound on ``|phi_R|`` is below this are skipped (and charged).
SKIP_BELOW = 1e-40
#: The product over the pool's classes by power sums where ``max_k w_k |phi_q - 1|`` is at
#: most SERIES_RHO, with SERIES_TERMS terms (:func:`_log_product`; remainder charged).
SERIES_RHO = 0.25
SERIES_TERMS = 24


@dataclass(frozen=True)
class LatticeLaw:
    """The law of X on the lattice ``step * (offset + i)``: ``pmf[i]`` (non-negative, summing to
    1 up to ``tv_error``), dominating the true law of ``l(W)`` in the increasing convex order;
    ``tv_error`` bounds the total variation between ``pmf`` and such a dominating law, and
    ``w1_error`` the Wasserstein-1 distance of the moves within it (the floating point of its
    computation; a move of mass tau by at most s changes A by at most tau s).  With
    ``rel_error`` rho > 0 the error is split: the dominating law p' satisfies ``(1 - rho) pmf
    - e <= p' <= (1 + rho) pmf + e`` entrywise, e >= 0 of total mass at most ``tv_error``
    (module docstring; docs/theory.md 15.3 (N7))."""

    offset: int
    pmf: NDArray[np.float64]
    step: float
    tv_error: float = 0.0
    w1_error: float = 0.0
    rel_error: float = 0.0

    def __post_init__(self) -> None:
        p = np.asarray(self.pmf, dtype=np.float64)
        if p.ndim != 1 or p.size == 0 or not np.all(np.isfinite(p)) or np.any(p < 0):
            raise ValueError("pmf must be a non-empty 1-d array of finite non-negative numbers")
        if not (math.isfinite(self.step) and self.step > 0):
            raise ValueError(f"step must be finite and > 0, got {self.step!r}")
        for name in ("tv_error", "w1_error"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v >= 0):
                raise ValueError(f"{name} must be finite and >= 0, got {v!r}")
        if not (math.isfinite(self.rel_error) and 0.0 <= self.rel_error <= 1e-2):
            raise ValueError(f"rel_error must be in [0, 0.01], got {self.rel_error!r}")
        nz = np.flatnonzero(p)
        if nz.size == 0:
            raise ValueError("pmf must have a positive entry")
        p = p[nz[0]:nz[-1] + 1].copy()
        p.setflags(write=False)
        object.__setattr__(self, "offset", int(self.offset) + int(nz[0]))
        object.__setattr__(self, "pmf", p)

    @cached_property
    def values(self) -> NDArray[np.float64]:
        """The lattice points ``step * (offset + i)`` (read-only, computed once)."""
        x = (self.offset + np.arange(self.pmf.size)) * self.step
        x.setflags(write=False)
        return x

    @cached_property
    def log_pmf(self) -> NDArray[np.float64]:
        """``log pmf`` (-inf where 0; read-only, computed once)."""
        with np.errstate(divide="ignore"):
            lp = np.log(self.pmf)
        lp.setflags(write=False)
        return lp

    @cached_property
    def positive_part(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(log pmf + log x, x)`` at the points ``x > 0`` of positive mass (read-only,
        computed once: the search of the Chernoff tilt asks for them at every tilt)."""
        x = self.values
        pos = (x > 0) & (self.pmf > 0)
        out = (self.log_pmf[pos] + np.log(x[pos]), x[pos])
        for a in out:
            a.setflags(write=False)
        return out

    @cached_property
    def support(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(x, log pmf)`` at the points of positive mass only (read-only, computed once):
        the sums of the Chernoff tilt's search skip the lattice's empty points, which add
        exactly 0 (a law of a few hundred cells spread over thousands of points)."""
        keep = self.pmf > 0
        out = (self.values[keep], self.log_pmf[keep])
        for a in out:
            a.setflags(write=False)
        return out

    @cached_property
    def mass(self) -> float:
        """The pmf's total mass correctly rounded (``math.fsum`` of its positive entries, the
        zeros adding exactly 0; computed once)."""
        return math.fsum(self.pmf[self.pmf > 0])

    @property
    def mean(self) -> float:
        return float(np.dot(self.pmf, self.values))


@dataclass(frozen=True)
class Amplification:
    """An upper bound on A (``value``) and its parts: the Chernoff bound, the tilt used, the
    charges for the window's tails, the FFT round-off and the lattice law's error."""

    value: float
    chernoff: float
    theta: float
    fft_size: int
    tail_charge: float
    roundoff_charge: float
    law_charge: float
    #: The relative law error's factor (:func:`law_factor`), already applied to ``value``.
    law_factor: float = 1.0


def law_charge(law: LatticeLaw, gammas, counts) -> float:
    """What the lattice law's absolute floating-point error can add to A (module docstring,
    docs/theory.md 15.3 (N7)): ``w1_error`` plus the smaller of
    ``tau c^N max(x, 0) (1 + E[M])`` and ``tau c^N (max(x, 0) + E[M] m_+)``, ``tau =
    tv_error`` (an L1 distance between ``lambda pmf``, ``lambda = 1 + rel_error``, and a law
    above or below it), ``m_+`` a bound on ``E[X_+]`` under either law (normalized), ``c`` a
    bound on either law's total mass and N the pool's size."""
    gammas, counts = _classes(gammas, counts)
    tau = law.tv_error
    if tau == 0.0:
        return law.w1_error
    lam = 1.0 + law.rel_error
    x, p = law.values, law.pmf
    x_pos_max = max(float(x[-1]), 0.0)
    em = float(np.dot(gammas, counts)) * (1.0 + 1e-12)
    # E[X_+] and the mass of the computed pmf, rounded up (dot products of at most 2^24 terms)
    err = 1e-15 + 2.0 * p.size * float(np.finfo(float).eps)
    mass = float(p.sum()) * (1.0 + err) * lam
    lo_mass = min(float(p.sum()) * (1.0 - err) - tau, 1.0)
    # c^N - 1 <= e^{(c - 1) N} - 1, c = max(mass, 1) + tau: the measures' total masses
    big = tau * math.expm1(min(700.0, max(mass + tau - 1.0, 0.0) * float(counts.sum())))
    crude = (tau + big) * x_pos_max * (1.0 + em) * (1.0 + 1e-12)
    if lo_mass <= 0.5 or big > 1e-3 * tau:
        return crude + law.w1_error
    pos = x > 0
    m_plus = (float(np.dot(p[pos], x[pos])) * (1.0 + err) * lam + tau * x_pos_max) / lo_mass
    fine = ((tau + big) * (x_pos_max + em * m_plus)) * (1.0 + 1e-12)
    return min(crude, fine) + law.w1_error


def _log_moment(kappa: float, gammas: NDArray, counts: NDArray) -> float:
    """``log E[kappa^(M+1)]``, M the Poisson-binomial count of blanket reports."""
    return math.log(kappa) + float(np.dot(counts, np.log1p(gammas * (kappa - 1.0))))


def law_factor(law: LatticeLaw, gammas, counts, lower: bool = False) -> float:
    """The factor by which the relative error ``rho = rel_error`` of the lattice law can scale
    A (docs/theory.md 15.3 (N7), Claim "the relative law error"): with s the pmf's mass,
    ``A(p') <= E[max((1 + rho) s, 1)^(M+1)] / E[min(s, 1)^(M+1)] A(pmf)`` up to the absolute
    remainder (:func:`law_charge`), and with ``lower`` the factor
    ``E[min((1 - rho) s, 1)^(M+1)] / E[max(s, 1)^(M+1)]`` of the lower bound.  1 when
    ``rel_error`` is 0 (then ``tv_error`` holds the whole error).

    >>> law = LatticeLaw(offset=-1, pmf=np.array([0.5, 0.5]), step=1.0, rel_error=1e-14)
    >>> f = law_factor(law, [0.5], [10**6])  # about 1 + 1e-14 (1 + 5e5)
    >>> bool(1.0 + 5e-9 < f < 1.0 + 6e-9), bool(law_factor(law, [0.5], [10**6], True) < 1.0)
    (True, True)
    """
    gammas, counts = _classes(gammas, counts)
    rho = law.rel_error
    if rho == 0.0:
        return 1.0
    s = law.mass  # correctly rounded (fsum): the mass lies within a relative u of it
    s_hi, s_lo = s * (1.0 + 2.0 * _U), s * (1.0 - 2.0 * _U)
    if lower:
        num = min((1.0 - rho) * s_lo * (1.0 - 2.0 * _U), 1.0)
        den = max(s_hi, 1.0)
    else:
        num = max((1.0 + rho) * s_hi * (1.0 + 2.0 * _U), 1.0)
        den = min(s_lo, 1.0)
    log_f = _log_moment(num, gammas, counts) - _log_moment(den, gammas, counts)
    # the two logs to a relative 1e-12 of their sizes, rounded to the safe side
    slack = 1e-12 * (abs(log_f) + 1e-300) + 1e-15 * abs(log_f) + 4.0 * _U
    return math.exp(log_f - slack) if lower else math.exp(min(log_f + slack, 700.0))


def chernoff_bound(law: LatticeLaw, gammas: NDArray, counts: NDArray) -> float:
    """``min_theta M_R(theta) E[X_+ e^{theta X}]`` times the lattice law's factor
    (:func:`law_factor`) plus its charge (:func:`law_charge`): an upper bound on A for the law
    the lattice law stands for (Pr[R > -x] <= M_R(theta) e^{theta x})."""
    gammas, counts = _classes(gammas, counts)
    x_pos_max = max(float(law.values[-1]), 0.0)
    if x_pos_max <= 0.0:
        return 0.0
    _, log_c = _best_theta(law, gammas, counts)
    chern = float(min(math.exp(min(log_c, 700.0)), x_pos_max))
    return chern * law_factor(law, gammas, counts) + law_charge(law, gammas, counts)


def _classes(gammas, counts) -> tuple[NDArray, NDArray]:
    g = np.atleast_1d(np.asarray(gammas, dtype=np.float64))
    c = np.atleast_1d(np.asarray(counts, dtype=np.float64))
    if g.shape != c.shape:
        raise ValueError("gammas and counts must have the same shape")
    if np.any(~np.isfinite(g)) or np.any(g < 0) or np.any(g > 1):
        raise ValueError("gammas must lie in [0, 1]")
    if np.any(c < 0) or np.any(c != np.floor(c)):
        raise ValueError("counts must be whole numbers >= 0")
    keep = (g > 0) & (c > 0)
    return g[keep], c[keep]


def _bernstein(t: float, var: float, span: float) -> float:
    """Pr[S - E S >= t] <= exp(-t^2 / (2 (V + span t / 3))) for a sum of independent
    variables with total variance V, each within ``span`` of its mean."""
    if t <= 0:
        return 1.0
    return math.exp(-t * t / (2.0 * (var + span * t / 3.0)))


def _halfwidth(var: float, span: float, eta: float) -> float:
    """The t with Bernstein's bound equal to eta."""
    a = math.log(1.0 / eta)
    return span * a / 3.0 + math.sqrt((span * a / 3.0) ** 2 + 2.0 * var * a)


#: The s of the Chernoff bounds on the tilted R's tails, in units of 1 / sd(R).
CHERNOFF_S = np.geomspace(1e-6, 1e4, 121)


def _chernoff_exponents(law: LatticeLaw, gammas: NDArray, counts: NDArray, theta: float,
                        mean: float, sd: float, sign: int) -> tuple[NDArray, NDArray]:
    """``(s, c)`` on part of the grid ``CHERNOFF_S / sd``: ``c = log E_theta[e^{sign s (R -
    mean)}]`` (the tilted law of R: its moment generating function is ``M_R(theta + u) /
    M_R(theta)``), so that ``Pr_theta[sign (R - mean) >= t] <= exp(c - s t)`` for each s.
    For laws of at most ``MANY_MAX_POINTS`` points (all tilts in one matrix), every
    ``CHERNOFF_COARSE``-th point of the grid, then every point between the two neighbours of
    the one with the smallest reach (:func:`_chernoff_reach` at ``WINDOW_TAIL``); for larger
    laws (one tilt at a time), a golden-section search of the reach over the grid's indices
    (the reach is quasi-convex in s: docs/theory.md 15.3 (N10)), about 12 points instead of
    37.  Any s gives a bound, the grid only aims (time only)."""
    s_all = CHERNOFF_S / max(sd, 1e-300)
    base = _log_mgf_r(law, gammas, counts, theta)

    def at(idx: NDArray) -> NDArray:
        u = s_all[idx]
        if law.pmf.size <= MANY_MAX_POINTS:
            return _log_mgf_r_many(law, gammas, counts, theta + sign * u) - base - sign * u * mean
        return np.array([_log_mgf_r(law, gammas, counts, theta + sign * v) - base
                         - sign * v * mean for v in u])

    if law.pmf.size <= MANY_MAX_POINTS:  # (the matrix form: many points at once are cheap)
        coarse = np.arange(0, s_all.size, CHERNOFF_COARSE)
        c0 = at(coarse)
        with np.errstate(invalid="ignore"):
            reach = (c0 - math.log(WINDOW_TAIL)) / s_all[coarse]
        ok = np.flatnonzero(np.isfinite(reach))
        if ok.size == 0:
            return s_all[coarse], c0
        k = int(ok[np.argmin(reach[ok])])
        lo, hi = coarse[max(k - 1, 0)], coarse[min(k + 1, coarse.size - 1)]
        fine = np.array([i for i in range(int(lo), int(hi) + 1) if i % CHERNOFF_COARSE],
                        dtype=np.int64)
        if fine.size == 0:
            return s_all[coarse], c0
        idx = np.concatenate([coarse, fine])
        c = np.concatenate([c0, at(fine)])
        order = np.argsort(idx)
        return s_all[idx[order]], c[order]
    # one point at a time: a golden-section search of the reach over the grid's indices.
    # The reach (c(s) - log eta) / s is the slope from (0, log eta) to the convex c(s) >= 0
    # = c(0), so it falls then rises in s; the search ends on the points around its
    # smallest, all of them evaluated
    seen: dict[int, float] = {}

    def reach_at(i: int) -> float:
        if i not in seen:
            seen[i] = float(at(np.array([i]))[0])
        with np.errstate(invalid="ignore"):
            r = (seen[i] - math.log(WINDOW_TAIL)) / s_all[i]
        return r if math.isfinite(r) else math.inf

    a, b = 0, s_all.size - 1
    golden = (math.sqrt(5.0) - 1.0) / 2.0
    x1, x2 = b - round(golden * (b - a)), a + round(golden * (b - a))
    while b - a > 3:
        if reach_at(x1) <= reach_at(x2):
            b = x2
        else:
            a = x1
        x1, x2 = b - round(golden * (b - a)), a + round(golden * (b - a))
        if x1 >= x2:
            x1, x2 = (a + b) // 2, (a + b) // 2 + 1
    for i in range(a, b + 1):
        reach_at(i)
    idx = np.array(sorted(seen), dtype=np.int64)
    return s_all[idx], np.array([seen[i] for i in idx])


#: :func:`_chernoff_exponents` evaluates every CHERNOFF_COARSE-th point of ``CHERNOFF_S``,
#: then the points around the best of them, for laws of at most MANY_MAX_POINTS points
#: (larger laws: a golden-section search; time only).
CHERNOFF_COARSE = 4


#: Laws of at most this many points take :func:`_log_mgf_r_many` in
#: :func:`_chernoff_exponents` (measured: 2.7x faster at 512 points, slower beyond 4096,
#: where the matrix costs more than the loop's overhead; time only).
MANY_MAX_POINTS = 1024
#: Matrix entries per block of :func:`_log_mgf_r_many` (memory only).
_MGF_BLOCK = 1 << 14


def _log_mgf_r_many(law: LatticeLaw, gammas: NDArray, counts: NDArray,
                    thetas: NDArray) -> NDArray[np.float64]:
    """:func:`_log_mgf_r` at every theta of ``thetas``: the same formula, the log moment
    generating functions of X computed for a block of thetas at once."""
    thetas = np.asarray(thetas, dtype=np.float64)
    x, log_p = law.support  # (the points of positive mass: the others add 0)
    lm = np.empty(thetas.size)
    rows = max(1, _MGF_BLOCK // max(x.size, 1))
    for i in range(0, thetas.size, rows):
        z = log_p[None, :] + thetas[i:i + rows, None] * x[None, :]
        zmax = z.max(axis=1)
        with np.errstate(invalid="ignore"):
            lm[i:i + rows] = zmax + np.log(np.exp(z - zmax[:, None]).sum(axis=1))
    out = np.empty(thetas.size)
    big = ~(lm < 700.0)  # (M_X - 1 would overflow; also nan / inf: the scalar form decides)
    em1 = np.expm1(np.where(big, 0.0, lm))
    out[~big] = counts @ np.log1p(gammas[:, None] * em1[None, ~big])
    for i in np.flatnonzero(big):
        out[i] = _log_mgf_r(law, gammas, counts, float(thetas[i]))
    return out


def _chernoff_reach(s: NDArray, c: NDArray, eta: float) -> float:
    """The smallest t of the grid with ``exp(c - s t) <= eta`` (Chernoff), inf if none."""
    with np.errstate(invalid="ignore"):
        t = (c - math.log(eta)) / s
    t = t[np.isfinite(t)]
    return float(t.min()) if t.size else math.inf


def _chernoff_tail(s: NDArray, c: NDArray, t: float) -> float:
    """Chernoff's bound ``min_s exp(c - s t)`` on the tail beyond t, raised by a relative
    1e-9 of the exponent's terms (their floating point); 1 when t <= 0."""
    if t <= 0.0:
        return 1.0
    e = c - s * t
    e = e + 1e-9 * (np.abs(c) + s * t + 1.0)
    return float(min(1.0, math.exp(min(float(np.min(e)), 0.0))))


@dataclass(frozen=True)
class _Tails:
    """Bounds on ``Pr[R > -x]`` at every value x of the lattice law (``upper``, ``lower``), the
    same without the round-off and window charges (``plain_up``, ``plain_lo``), and what the
    upper bound needs besides (module docstring)."""

    upper: NDArray[np.float64]
    lower: NDArray[np.float64]
    plain_up: NDArray[np.float64]
    plain_lo: NDArray[np.float64]
    chern: float
    theta: float
    n_fft: int
    top_mass: float  # w_top * eta_hi: the upper tail's window charge


def _log_product(pk: NDArray, w1: NDArray, counts: NDArray
                 ) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """``(log phi_R, mod, sens, extra)`` at the kept frequencies: ``log phi_R = sum_k n_k
    log(1 + w_k z)``, ``z = phi_q - 1``, with ``mod >= sum_k n_k |log(1 + w_k z)|`` and ``sens
    >= sum_k n_k w_k / |1 + w_k z|`` (what the round-off estimate of :func:`_tails` reads) and
    ``extra`` a bound on the error of ``log phi_R`` beyond that estimate.

    Where ``rho = max_k w_k |z| <= SERIES_RHO`` (the low frequencies of a large pool: the
    others are skipped), the series ``log(1 + u) = sum_m (-1)^(m+1) u^m / m`` summed over the
    classes first: ``sum_m (-1)^(m+1) P_m z^m / m`` with the power sums ``P_m = sum_k n_k
    w_k^m``, M terms (at most ``SERIES_TERMS``, fewer when every rho is small; only for pools
    of more classes than terms), one pass over the classes for all frequencies instead of a
    complex logarithm per class and frequency.  Its remainder is at most ``sum_k n_k sum_{m >
    M} (w_k r)^m / m <= P_{M+1} r^(M+1) / ((M + 1)(1 - rho))`` (``r = |z|``), charged in
    ``extra`` with the rounding of the power sums and of the Horner steps (``(n_classes + 3 M +
    8) u`` times the series of the moduli); ``mod`` and ``sens`` take the series of
    ``-log(1 - w_k r)`` and of ``w_k / (1 - w_k r)`` (upper bounds of the two sums, with their
    own remainders).  Elsewhere the logarithms class by class (``extra`` = 0)."""
    n = pk.size
    log_r = np.zeros(n, dtype=complex)
    mod = np.zeros(n)
    sens = np.zeros(n)
    extra = np.zeros(n)
    if n == 0:
        return log_r, mod, sens, extra
    z = pk - 1.0
    r = np.abs(z)
    w_max = float(np.max(w1)) if w1.size else 0.0
    series = r * w_max <= SERIES_RHO
    rho_top = float(np.max(r[series] * w_max)) if np.any(series) else 1.0
    # terms: enough for a remainder below 1e-18 of P_1 r at the largest rho (at least 2)
    m_terms = (SERIES_TERMS if rho_top <= 0.0 else
               min(SERIES_TERMS, max(2, math.ceil(math.log(1e-18) / math.log(rho_top)))))
    if w1.size <= m_terms:  # (fewer classes than terms: the logarithms are cheaper)
        series[:] = False
    if np.any(series):
        powers = np.empty(m_terms + 2)
        wp = np.ones_like(w1)
        for m in range(1, m_terms + 2):
            wp = wp * w1
            powers[m] = float(np.dot(counts, wp))  # P_m
        zs, rs = z[series], r[series]
        rho = rs * w_max
        acc = np.zeros(zs.size, dtype=complex)
        acc_mod = np.zeros(zs.size)
        acc_sens = np.zeros(zs.size)
        for m in range(m_terms, 0, -1):  # Horner: z (P_1 - z (P_2 / 2 - ...))
            sign = 1.0 if m % 2 else -1.0
            acc = zs * (sign * powers[m] / m + acc)
            acc_mod = rs * (powers[m] / m + acc_mod)
            acc_sens = powers[m] + rs * acc_sens  # sum_{m < M} P_{m+1} r^m
        tail = powers[m_terms + 1] * rs ** (m_terms + 1) / (1.0 - rho)
        log_r[series] = acc
        mod[series] = acc_mod + tail / (m_terms + 1)
        sens[series] = acc_sens + powers[m_terms + 1] * rs ** m_terms / (1.0 - rho)
        extra[series] = (tail / (m_terms + 1)
                         + (w1.size + 3.0 * m_terms + 8.0) * _U * mod[series])
    rest = np.flatnonzero(~series)
    step = max(1, (1 << 20) // max(counts.size, 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(0, rest.size, step):  # the users' classes at once, frequencies in chunks
            at = rest[i:i + step]
            factor = 1.0 + w1[:, None] * (pk[None, at] - 1.0)  # (1 - w) + w phi_q
            lg = np.log(factor)
            log_r[at] = counts @ lg
            mod[at] = counts @ np.abs(lg)
            sens[at] = (counts * w1) @ (1.0 / np.abs(factor))
    return log_r, mod, sens, extra


def _tails(law: LatticeLaw, gammas: NDArray, counts: NDArray) -> _Tails | None:
    """The tilted FFT of the module docstring; None when the window needs more than MAX_FFT
    points (then only the Chernoff bound is available)."""
    x = law.values
    p = law.pmf
    x_pos_max = max(float(x[-1]), 0.0)
    theta, log_c = _best_theta(law, gammas, counts)
    chern = float(min(math.exp(min(log_c, 700.0)), x_pos_max))
    d = law.step
    lm_x = _log_mgf(law, theta)
    m_x = math.exp(lm_x)
    # the tilted law of X and of each user's term B X (mean, variance, span)
    with np.errstate(divide="ignore"):
        q = np.exp(np.log(p) + theta * x - lm_x)
    mq = float(np.dot(q, x))
    vq = float(np.dot(q, (x - mq) ** 2))
    w1 = gammas * m_x / (1.0 - gammas + gammas * m_x)  # tilted Pr[B = 1]
    mean_r = float(np.dot(counts, w1 * mq))
    var_r = float(np.dot(counts, w1 * (vq + mq * mq) - (w1 * mq) ** 2))
    span = float(max(x[-1], 0.0) - min(x[0], 0.0))
    # the window's half-widths: Bernstein's (from the span) or Chernoff's on the tilted R
    # (much narrower when X's range is wide but its far values are rare), the smaller
    half = _halfwidth(var_r, span, WINDOW_TAIL)
    sd_r = math.sqrt(max(var_r, 0.0))
    ch_up = _chernoff_exponents(law, gammas, counts, theta, mean_r, sd_r, 1)
    ch_lo = _chernoff_exponents(law, gammas, counts, theta, mean_r, sd_r, -1)
    half_up = min(half, _chernoff_reach(*ch_up, WINDOW_TAIL))
    half_lo = min(half, _chernoff_reach(*ch_lo, WINDOW_TAIL))
    # R's own support: n_tot summands, each 0 or a value of X (lattice indices)
    n_tot = int(counts.sum())
    sup_lo = n_tot * min(law.offset, 0)
    sup_hi = n_tot * max(law.offset + p.size - 1, 0)
    lo_idx = min(-(law.offset + p.size - 1), max(math.floor((mean_r - half_lo) / d),
                                                  sup_lo)) - 1
    hi_idx = max(-law.offset, min(math.ceil((mean_r + half_up) / d), sup_hi)) + 1
    width = hi_idx - lo_idx + 1
    n_fft = int(sfft.next_fast_len(max(width, 16), real=True))  # 2^a 3^b 5^c
    if n_fft > MAX_FFT:
        return None
    # tilted mass beyond the window: none beyond R's support, else the smaller of
    # Bernstein's and Chernoff's bounds
    eta_hi = 0.0 if hi_idx > sup_hi else min(_bernstein(hi_idx * d - mean_r, var_r, span),
                                             _chernoff_tail(*ch_up, hi_idx * d - mean_r))
    eta_lo = 0.0 if lo_idx < sup_lo else min(_bernstein(mean_r - lo_idx * d, var_r, span),
                                             _chernoff_tail(*ch_lo, mean_r - lo_idx * d))
    # FFT of the tilted X on the circle, the users' factors, back (half spectra: the law is
    # real, the other half holds the conjugates, so sums over the whole spectrum are at
    # most twice those over the half)
    a = np.zeros(n_fft)
    a[(law.offset + np.arange(p.size)) % n_fft] = q
    phi_q = sfft.rfft(a)
    # frequencies where |phi_R| cannot matter are not computed: |1 - w + w phi| <=
    # 1 - w (1 - |phi|) gives |phi_R| <= exp(-(1 - |phi_q|) sum_k n_k w_k); the skipped
    # terms cost at most their sum / N per entry of the inverse transform
    s_w = float(np.dot(counts, w1))
    bound_mod = np.exp(-np.maximum(1.0 - np.abs(phi_q), 0.0) * s_w)
    kept = np.flatnonzero(bound_mod > SKIP_BELOW)
    skipped = 2.0 * (float(bound_mod.sum()) - float(bound_mod[kept].sum())) / n_fft
    pk = phi_q[kept]
    log_r, mod, sens, extra = _log_product(pk, w1, counts)
    phi_r = np.zeros(phi_q.size, dtype=complex)
    phi_r[kept] = np.exp(log_r)
    f = sfft.irfft(phi_r, n_fft)
    # round-off (an estimate, module docstring): the transform of q (per frequency at most
    # its l2 error), propagated through the product (d log phi_R = sum_k n_k w_k dphi_q /
    # factor_k), the exponent's own rounding, and the inverse transform
    abs_phi = np.abs(phi_r[kept])
    log2n = math.log2(n_fft)
    # (per frequency: the l2 error of the whole transform, or the componentwise form, each
    # entry a unit-modulus combination of the inputs through log2 N stages, 5 u log2 N
    # ||q||_1: the smaller, docs/theory.md 15.3 (N6))
    err_q = 5.0 * _U * log2n * min(math.sqrt(n_fft) * float(np.linalg.norm(q)),
                                   float(np.abs(q).sum()))
    with np.errstate(invalid="ignore"):
        err_phi = np.where(abs_phi > 0, abs_phi * (sens * err_q + 4.0 * _U * (mod + 1.0)
                                                   + np.expm1(extra)), 0.0)
    err_entry = FFT_SAFETY * (2.0 * float(err_phi.sum()) / n_fft
                              + 5.0 * _U * log2n * math.sqrt(2.0)
                              * float(np.linalg.norm(abs_phi)) / math.sqrt(n_fft)) + skipped
    # the window in order of the lattice index j, and the weights M_R(theta) e^{-theta d j}
    idx = np.arange(lo_idx, lo_idx + n_fft)
    fw = np.roll(f, -lo_idx)  # f[j mod n_fft] for j = lo_idx, ..., lo_idx + n_fft - 1
    log_mr = _log_mgf_r(law, gammas, counts, theta)
    wgt = np.exp(np.minimum(log_mr - theta * d * idx, 700.0))
    r_idx = -(law.offset + np.arange(p.size))  # the thresholds r = -x
    pos = np.clip(r_idx + 1 - lo_idx, 0, n_fft)  # window position of j = r + 1
    w_top = math.exp(min(log_mr - theta * d * hi_idx, 700.0))
    w_first = np.exp(np.minimum(log_mr - theta * d * (r_idx + 1), 700.0))

    # where the needed suffixes start (n_fft: the empty sum): pos falls along the law (r = -x
    # falls), so its distinct values are those where it changes, read backwards
    rev = pos[::-1]
    new = np.empty(rev.size, dtype=bool)
    new[0] = True
    np.not_equal(rev[1:], rev[:-1], out=new[1:])
    cuts = rev[new]
    at = (np.cumsum(new) - 1)[::-1]

    # the four sums sum_{j >= pos} terms_j (rows), one pass over the terms: per segment
    # [cut_m, cut_{m+1}), then accumulated from the top
    terms = np.zeros((4, n_fft + 1))
    np.multiply(np.maximum(fw + err_entry, 0.0), wgt, out=terms[0, :-1])
    np.multiply(fw - err_entry, wgt, out=terms[1, :-1])
    np.multiply(np.maximum(fw, 0.0), wgt, out=terms[2, :-1])
    np.multiply(fw, wgt, out=terms[3, :-1])
    seg = np.add.reduceat(terms, cuts, axis=1)
    up_s, lo_s, plain_up, plain_lo = np.cumsum(seg[:, ::-1], axis=1)[:, ::-1][:, at]
    # Pr[R > r] <= sum_{j > r} (f_j + err) w_j + w_top Pr_theta[R > hi]   (f_j <= f^_j + err)
    # Pr[R > r] >= sum_{j > r} (f^_j - err) w_j - (wrapped mass) w_{r+1}
    upper = np.minimum(up_s + w_top * eta_hi, 1.0)
    lower = np.maximum(lo_s - (eta_hi + eta_lo) * w_first, 0.0)
    plain_up = np.minimum(plain_up, 1.0)
    plain_lo = np.maximum(plain_lo, 0.0)
    return _Tails(upper, lower, plain_up, plain_lo, chern, float(theta), n_fft,
                  float(w_top * eta_hi))


def amplification_bound(law: LatticeLaw, gammas, counts) -> Amplification:
    """An upper bound on ``A = E[X 1{X + R > 0}]`` (module docstring).

    >>> law = LatticeLaw(offset=-3, pmf=np.array([0.25, 0.0, 0.0, 0.5, 0.0, 0.25]), step=1.0)
    >>> a = amplification_bound(law, [0.5], [4])
    >>> bool(0.0 < a.value <= a.chernoff)
    True
    """
    gammas, counts = _classes(gammas, counts)
    x = law.values
    p = law.pmf
    x_pos_max = max(float(x[-1]), 0.0)
    charge = law_charge(law, gammas, counts)
    fac = law_factor(law, gammas, counts)
    if x_pos_max <= 0.0:
        return Amplification(0.0, 0.0, 0.0, 0, 0.0, 0.0, charge, fac)
    if gammas.size == 0:  # no blanket: A = E[X_+]
        v = float(np.dot(p[x > 0], x[x > 0]))
        return Amplification(v * fac + charge, v, 0.0, 0, 0.0, 0.0, charge, fac)
    t = _tails(law, gammas, counts)
    if t is None:
        # too wide to resolve: the Chernoff bound is the answer
        theta, log_c = _best_theta(law, gammas, counts)
        chern = float(min(math.exp(min(log_c, 700.0)), x_pos_max))
        return Amplification(chern * fac + charge, chern, theta, 0, 0.0, 0.0, charge, fac)
    pos_x = x > 0

    def combine(up: NDArray, lo: NDArray) -> float:
        return float(np.dot(p * x, np.where(pos_x, up, lo)))

    value = combine(t.upper, t.lower)
    plain = combine(t.plain_up, t.plain_lo)
    tail_charge = float(np.dot(p[pos_x], x[pos_x])) * min(t.top_mass, 1.0)
    roundoff = max(value - plain - tail_charge, 0.0)
    value = float(min(max(value, 0.0), t.chern) * fac + charge)
    return Amplification(value, t.chern, t.theta, t.n_fft, tail_charge,
                         float(roundoff), charge, fac)


def amplification_lower(law: LatticeLaw, gammas, counts) -> float:
    """A *lower* bound on ``A = E[X 1{X + R > 0}]`` for a law that the lattice law stands
    *below* (its values at most the true ones, coupled; up to ``tv_error``, ``w1_error``
    and ``rel_error``): the terms with x > 0 use the lower bound on ``Pr[R > -x]``, those
    with x < 0 the upper one; the result is scaled by the lower factor of
    :func:`law_factor` and the lattice law's charge (:func:`law_charge`) is subtracted.
    0 when the window needs more than ``MAX_FFT`` points (no certificate).

    >>> law = LatticeLaw(offset=-3, pmf=np.array([0.25, 0.0, 0.0, 0.5, 0.0, 0.25]), step=1.0)
    >>> lo, up = amplification_lower(law, [0.5], [4]), amplification_bound(law, [0.5], [4])
    >>> bool(0.0 < lo <= up.value)
    True
    """
    gammas, counts = _classes(gammas, counts)
    x = law.values
    p = law.pmf
    if max(float(x[-1]), 0.0) <= 0.0:
        return 0.0
    charge = law_charge(law, gammas, counts)
    fac = law_factor(law, gammas, counts, lower=True)
    if gammas.size == 0:  # no blanket: A = E[X_+]
        return max(float(np.dot(p[x > 0], x[x > 0])) * fac - charge, 0.0)
    t = _tails(law, gammas, counts)
    if t is None:
        return 0.0
    value = float(np.dot(p * x, np.where(x > 0, t.lower, t.upper)))
    return max(value * fac - charge, 0.0)
