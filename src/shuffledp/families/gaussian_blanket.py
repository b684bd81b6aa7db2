"""The blanket of the Gaussian mechanism (docs/theory.md 15.4, Claim "Gaussian blankets").

User j reports ``N(x_j, sigma_j^2)``, ``x_j in [-1, 1]``.  A blanket ``N(c, s^2)`` with ``s <
sigma_j`` is covered by user j with the mass (the Claim's (i))::

    gamma_j(c, s) = (s / sigma_j) exp(-(1 + |c|)^2 / (2 (sigma_j^2 - s^2))),

and not at all when ``s >= sigma_j``.  A victim group has noise scales ``[sigma_lo,
sigma_hi]``; its cases are computed for the *reference victim* ``sigma = sigma_lo`` with the
blanket ``N(0, tau^2)``, ``tau = theta sigma`` (``theta = sqrt(1 - kappa / sigma^2)``, one
choice per ``kappa`` of :func:`kappas`): the pair ``(a_k, -a_k)`` for each half-width of the grid
``HALF_WIDTHS`` (from 1 down), whose law covers (the Claim's (ii)) every pair of every victim of
the group with half-width in ``(a_{k+1}, a_k]`` in the reference units, against the victim's
blanket shifted to the pair's centre and widened by the kernel ``y -> rho y + N(0, sigma^2 (1 -
rho^2))`` (``rho = a / a_k``); the masses are the smallest over those blankets.  Pairs narrower
than the grid's last half-width are covered by the victim's own local divergence (post-
processing), a constant.  The victim's laws are cut to ``[-K, K]``, ``K = a_k + CUT_Z sigma``:
the cut mass is charged (``BlanketCase.charge``).

Cells: ``pieces`` equal cells of ``[-K, K]`` with omega-masses and the victim's masses by
five-point Gauss-Legendre quadrature (an absolute error bound from the tenth derivative of the
normal density, Cramer's bound on Hermite functions; the floating point relative to each mass,
:func:`_gauss_rel`), l between the
extremes of the two log-quadratic ratios ``psi_x = dP_x / d omega`` on the cell, and one atom
``l = 0`` for the blanket's mass outside ``[-K, K]``.

Code names -> symbols: ``sigma`` = sigma (the reference victim's scale), ``tau`` = tau,
``kappa`` = sigma^2 - tau^2, ``a`` = a_k, ``rho_min`` = a_{k+1} / a_k, ``c_max`` = the largest
``|c|`` of a case's pairs, ``sig_a >= sig_b`` the noise scales of a user class.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from shuffledp._lazy import lazy_module
from shuffledp.caching import lru_by_arrays, lru_get, lru_put, register_mapping
from shuffledp.families.blanket import BlanketCase, Cells

special = lazy_module("scipy.special")

__all__ = ["gaussian_pair_cells", "gaussian_pair_cells_many", "gaussian_masses", "shared_masses",
           "masses_of", "cached_masses",
           "gaussian_cases", "kappas", "HALF_WIDTHS", "CUT_Z", "PSI_LOG_MAXES"]

_U = float(np.finfo(float).eps) / 2.0
#: Half-widths of the reference pairs (a_0 = 1 > a_1 > ...); pairs narrower than the last are
#: covered by the victim's local divergence at that half-width.  Below 0.05 the ratio of
#: neighbours stays at least 0.7: a case's blankets reach up to sigma_hi (1 - rho^2 (1 -
#: tau^2 / sigma^2))^(1/2), rho = a_(k+1) / a_k, and wider blankets get smaller masses.
#: Measured (docs/theory.md 15.7): the shared-noise Gaussian on few_high at 10^6 users, the
#: pairs of half-width in (0.001, 0.004] had an expected 0.35 blanket reports (rho = 0.25),
#: eps 0.00910 -> 0.00211 with this grid (0.01, 0.004, 0.001 before).
HALF_WIDTHS = (1.0, 0.98, 0.95, 0.9, 0.8, 0.65, 0.5, 0.35, 0.2, 0.1, 0.05, 0.035, 0.025, 0.018,
               0.013, 0.01, 0.0075, 0.0055, 0.004, 0.003, 0.0022, 0.0016, 0.0012, 0.001)
#: The victim's laws are cut at K = a + CUT_Z sigma (the cut mass, charged, is below 2e-15).
CUT_Z = 8.0
#: Largest log psi at the cut, one cap per entry (kappa is capped so that the cells' range of l
#: stays small against its spread: the lattice step grows with the range).  The second cap
#: lets the narrow noise of large budgets take a kappa whose blanket masses are not crushed by
#: ``exp(-(1 + |c|)^2 / (2 kappa))``; measured (identical budgets, n = 10^4, delta = 1e-6,
#: delta_i = 1e-8): eps0 = 2.5, 3, 4: 0.0289, 0.0957, 0.573 -> 0.0191, 0.0303, 0.122, the
#: certified lower bound 0.0155, 0.0190, 0.0260 (docs/theory.md 15.4, "The cases").
PSI_LOG_MAXES = (4.0, 8.0)
#: kappa = f sigma for f in these, capped by each of PSI_LOG_MAXES (one choice per distinct
#: value).
KAPPA_FACTORS = (0.5, 1.0, 2.0)
#: ... and these too when users with narrower noise than the reference victim's (larger
#: budgets) are in the pool: a narrower blanket (tau^2 = sigma^2 - kappa) is covered by the
#: users whose scale is above it, and those of the larger budgets just above the victim's count
#: (Gaussian mechanism, delta = 1e-6, uniform_0.05_1 at n = 10^4: eps 0.01481 -> 0.00874,
#: the certified lower bound 0.00560).
WIDE_FACTORS = (8.0, 32.0)
#: Cells of [-K, K] (coarse for the screening, fine for the exact evaluation).
CELLS_COARSE = 256
CELLS_FINE = 4096
#: Masses below this share of the case's largest are set to 0 (:func:`gaussian_masses`).
MASS_FLOOR = 0.01
#: Entries of the caches of the eps-free parts of the cells and of the masses (time only).
GEOMETRY_CACHE = 512
MASS_CACHE = 4096
#: Nodes and weights of five-point Gauss-Legendre on [-1, 1].
_GL_T, _GL_W = np.polynomial.legendre.leggauss(5)
_GEOMETRY: OrderedDict[tuple, tuple] = OrderedDict()
register_mapping("gaussian_blanket.geometry", _GEOMETRY)
_MASSES: OrderedDict[tuple, tuple] = OrderedDict()
register_mapping("gaussian_blanket.masses", _MASSES)


def cached_masses(arrays: tuple, key: tuple, compute: Callable[[], NDArray]) -> NDArray:
    """A case's masses (they do not depend on eps), cached under the identities of the user
    classes' read-only arrays they come from (:func:`shuffledp.caching.lru_by_arrays`), for
    the probes of a solve; time only."""
    return lru_by_arrays(_MASSES, arrays, key, compute, MASS_CACHE)


def kappas(sigma: float, wide: bool = False) -> list[float]:
    """The values of kappa = sigma^2 - tau^2 tried for a reference victim of scale ``sigma``:
    ``f sigma`` for f in ``KAPPA_FACTORS``, each capped so that ``log psi`` at the cut is at
    most L (``(CUT_Z + 1)^2 kappa / (2 tau^2)``, an upper bound of it): L the first of
    ``PSI_LOG_MAXES``, and the others too where the first caps every factor (narrow noise, large
    budgets: elsewhere they add time, not tightness).  With ``wide`` (users of larger budgets in
    the pool), the factors of ``WIDE_FACTORS`` too, under every cap.  Any kappa in (0, sigma^2)
    is valid; the caps only keep the lattice fine.

    >>> [round(k, 4) for k in kappas(2.791)]  # eps = 4, delta = 1e-8: every factor capped
    [0.7002, 1.2849]
    >>> [round(k, 3) for k in kappas(19.73)]  # eps = 0.5: f sigma, the largest capped
    [9.865, 19.73, 34.991]
    """
    z = CUT_Z + 1.0
    # (z sigma)^2 kappa / (2 sigma^2 tau^2) <= L  <=>  kappa <= 2 L sigma^2 / (z^2 + 2 L)
    caps = [2.0 * c * sigma * sigma / (z * z + 2.0 * c) for c in PSI_LOG_MAXES]
    if caps[0] >= min(KAPPA_FACTORS) * sigma and not wide:
        caps = caps[:1]
    factors = KAPPA_FACTORS + (WIDE_FACTORS if wide else ())
    out: list[float] = []
    for k in sorted({min(f * sigma, cap) for cap in caps for f in factors}):
        if not out or k > 1.01 * out[-1]:  # (near-equal values: one choice, time only)
            out.append(k)
    return out


def _gauss_mass(lo: NDArray, hi: NDArray, m: NDArray | float, s: float) -> NDArray:
    """Pr[N(m, s^2) in [lo, hi]] per cell by five-point Gauss-Legendre quadrature (``lo``,
    ``hi`` of any shape; ``m`` broadcast against them)."""
    half = 0.5 * (hi - lo)
    mid = 0.5 * (hi + lo)
    z = (mid[..., None] + half[..., None] * _GL_T - np.asarray(m)[..., None]) / s
    return (np.exp(-0.5 * z * z) @ _GL_W) * half / (s * math.sqrt(2.0 * math.pi))


def _gauss_rel(lo: NDArray, hi: NDArray, m: NDArray | float, s: float) -> NDArray:
    """A bound on the relative floating-point error of :func:`_gauss_mass` per cell
    (docs/theory.md 15.3 (N7)): with ``Z = (max(|lo|, |hi|) + |m|) / s``, each node's z carries
    an absolute error of at most 5 u Z, z^2 / 2 then 5.5 u Z^2, its exponential that much
    relative plus u; the weighted sum of five positive terms and the scaling add 9 u."""
    z = (np.maximum(np.abs(lo), np.abs(hi)) + np.abs(m)) / s
    return (8.0 * z * z + 16.0) * _U


def _log_psi(y: NDArray, x: NDArray | float, sigma: float, tau: float) -> NDArray:
    """log of dN(x, sigma^2)/dN(0, tau^2) at y (a convex quadratic when tau < sigma)."""
    return math.log(tau / sigma) - 0.5 * ((y - x) / sigma) ** 2 + 0.5 * (y / tau) ** 2


def gaussian_pair_cells(sigma: float, tau: float, eps: float, a: float, pieces: int
                        ) -> tuple[Cells, float]:
    """Cells of ``l = (P_a - e^eps P_{-a}) / omega`` for ``P_x = N(x, sigma^2)`` cut to
    ``[-K, K]`` and ``omega = N(0, tau^2)`` (``tau < sigma``), and the cut mass
    ``P_a(|y| > K)`` (module docstring); :func:`gaussian_pair_cells_many` for one
    half-width.

    >>> c, cut = gaussian_pair_cells(5.0, 4.5, 0.1, 1.0, 512)
    >>> abs(c.total - 1.0) < 1e-12, cut < 1e-14
    (True, True)
    """
    return gaussian_pair_cells_many(sigma, tau, eps, [a], pieces)[0]


def gaussian_pair_cells_many(sigma: float, tau: float, eps: float, widths, pieces: int
                             ) -> list[tuple[Cells, float]]:
    """:func:`gaussian_pair_cells` at every half-width of ``widths`` (one row of cells per
    half-width, computed together: the cases of a choice; time only)."""
    if not (0.0 < tau < sigma and math.isfinite(sigma)):
        raise ValueError(f"need 0 < tau < sigma, got tau = {tau!r}, sigma = {sigma!r}")
    a = np.asarray(widths, dtype=np.float64)
    if a.ndim != 1 or a.size == 0 or not np.all((a > 0.0) & (a <= 1.0)):
        raise ValueError(f"a must be in (0, 1], got {widths!r}")
    e = math.exp(eps)
    (k, mass, p0, p1, min0, max0, min1, max1, terms, r,
     rel_top) = _pair_geometry(sigma, tau, a, pieces)
    # exp of a log with an absolute error of a few u times its terms' size
    slack = (16.0 + 4.0 * terms[:, None]) * _U * (max0 + e * max1)
    lo = min0 - e * max1 - slack
    hi = max0 - e * min1 + slack
    with np.errstate(divide="ignore", invalid="ignore"):
        # raised by the masses' relative errors, (2 r + 4 u)(1 + 2 r)^2 (P0 + e^eps P1)
        # (an upper bound of the conditional mean is what the lattice law needs; Cells clips
        # it to hi, which bounds the true mean too; docs/theory.md 15.3 (N7))
        up = (2.0 * r + 4.0 * _U) * (1.0 + 2.0 * r) ** 2 * (p0 + e * p1) * (1.0 + 1e-9)
        mean = np.where(mass > 0, (p0 - e * p1 + up) / mass, hi)
    outside = 2.0 * special.ndtr(-k / tau)
    cut = (special.ndtr(-(k - a) / sigma) + special.ndtr(-(k + a) / sigma)) * (1.0 + 1e-9)
    # the quadrature's error (Gauss-Legendre, n = 5: h^11 (5!)^4 / (11 (10!)^3) |f^(10)|, and
    # |f^(10)| <= 1.09 sqrt(10!) / (sqrt(2 pi) scale^11) by Cramer's bound), summed over the
    # cells, as a share of the total (it is charged as a total variation)
    quad = [pieces * 3.3e-10 * (float(h) / tau) ** 11 for h in 2.0 * k / pieces]
    # the masses: the floating point relative (the atom's ndtr to 64 u), the quadrature
    # absolute (of omega: quad; of the victim's laws, scales sigma > tau, at most quad each,
    # moving the means by at most quad (1 + e^eps + max |l|) in all)
    top = np.max(np.maximum(np.abs(lo), np.abs(hi)), axis=1)
    out = []
    for i in range(a.size):
        cells = Cells(np.append(mass[i], outside[i]), np.append(lo[i], 0.0),
                      np.append(hi[i], 0.0), np.append(mean[i], 0.0),
                      max(float(rel_top[i]), 64.0 * _U) * (1.0 + 1e-9),
                      abs_error=float(quad[i]) * (1.0 + 1e-9),
                      mean_error=float(quad[i]) * (1.0 + e + float(top[i])) * (1.0 + 1e-9))
        out.append((cells, float(cut[i])))
    return out


def _pair_geometry(sigma: float, tau: float, a: NDArray, pieces: int) -> tuple:
    """The parts of :func:`gaussian_pair_cells_many` that do not depend on eps: the cut ``K``
    per row, the cells' masses under omega, ``P_a`` and ``P_{-a}``, the extremes of ``psi_a``
    and ``psi_{-a}`` on each cell, the size of the exponents' terms, the masses' largest
    relative error ``r`` and per row the largest of omega's (cached, read-only, for the probes
    of a solve; time only)."""
    key = (float(sigma), float(tau), a.tobytes(), int(pieces))
    got = lru_get(_GEOMETRY, key)
    if got is not None:
        return got
    k = a + CUT_Z * sigma
    edges = np.linspace(-k, k, pieces + 1, axis=1)  # (rows, pieces + 1)
    lo_w, hi_w = edges[:, :-1], edges[:, 1:]
    col = a[:, None]
    mass = _gauss_mass(lo_w, hi_w, 0.0, tau)
    p0 = _gauss_mass(lo_w, hi_w, col, sigma)
    p1 = _gauss_mass(lo_w, hi_w, -col, sigma)
    # extremes of psi_x on each cell: the larger end value, and the value at the clipped
    # minimum point y* = -x tau^2 / kappa (psi_x is log-convex)
    kappa = sigma * sigma - tau * tau
    ext = []
    for x in (col, -col):
        ends = np.maximum(_log_psi(lo_w, x, sigma, tau), _log_psi(hi_w, x, sigma, tau))
        low = _log_psi(np.clip(-x * tau * tau / kappa, lo_w, hi_w), x, sigma, tau)
        ext.append((np.exp(low), np.exp(ends)))
    (min0, max0), (min1, max1) = ext
    terms = (k / tau) ** 2 + ((k + a) / sigma) ** 2 + abs(math.log(tau / sigma))
    # relative errors of the three masses per cell (floating point), the largest of them r
    rel_om = _gauss_rel(lo_w, hi_w, 0.0, tau)
    r = np.maximum(rel_om, np.maximum(_gauss_rel(lo_w, hi_w, col, sigma),
                                      _gauss_rel(lo_w, hi_w, -col, sigma)))
    return lru_put(_GEOMETRY, key, (k, mass, p0, p1, min0, max0, min1, max1, terms, r,
                                    np.max(rel_om, axis=1)), GEOMETRY_CACHE)


def gaussian_masses(s_lo: float, s_hi: float, c_max: float, sig_a: NDArray,
                    sig_b: NDArray) -> NDArray:
    """The smallest mass of a Gaussian user with scale in ``[sig_b, sig_a]`` against the
    blankets ``N(c, s^2)``, ``|c| <= c_max``, ``s in [s_lo, s_hi]`` (the Claim's (i); concave in
    s, so its minimum is at an end; each factor at its worst end over the class), 0 when
    ``sig_b <= s_hi``; rounded down.

    >>> m = gaussian_masses(4.0, 4.0, 0.0, np.array([5.0, 3.0]), np.array([5.0, 3.0]))
    >>> m.round(6).tolist()  # (4/5) exp(-1 / (2 (25 - 16))), and 0 (sigma_j < s)
    [0.756768, 0.0]
    """
    sa = np.asarray(sig_a, dtype=np.float64)
    sb = np.asarray(sig_b, dtype=np.float64)
    return masses_of(s_lo, s_hi, c_max, np.log(sa), sb)


def masses_of(s_lo: float, s_hi: float, c_max: float, log_sa: NDArray, sb: NDArray) -> NDArray:
    """:func:`gaussian_masses` from ``log(sig_a)`` (computed once per user classes by the
    caller)."""
    c2 = (1.0 + c_max) ** 2
    ok = sb > s_hi
    best = np.full(sb.shape, np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        for s in (s_lo, s_hi):
            gap = np.where(ok, sb * sb - s * s, 1.0)
            best = np.minimum(best, math.log(s) - log_sa - 0.5 * c2 / gap)
    # masses below MASS_FLOOR of the largest are set to 0 (a smaller mass is valid): users
    # whose scale is barely above the blanket's have masses down to 0, which add little and
    # would take classes of the pool (bound.MAX_CLASSES) from the larger masses
    return _floor(np.where(ok, np.exp(best), 0.0) * (1.0 - 64.0 * _U))


def shared_masses(s_lo: float, s_hi: float, c_max: float, sigma: float,
                  r_max: NDArray) -> NDArray:
    """The smallest mass against ``N(c, s^2)``, ``|c| <= c_max``, ``s in [s_lo, s_hi]``, of a
    user reporting ``r x + N(0, sigma^2)`` with ``|x| <= 1`` and ``r <= r_max`` (the
    shared-noise Gaussian in a victim group's reference units, docs/theory.md 15.7):
    ``(s / sigma) exp(-(r + |c|)^2 / (2 (sigma^2 - s^2)))`` at the worst end of s (concave),
    ``r = r_max``; ``s_hi < sigma`` is required; rounded down.

    >>> shared_masses(4.0, 4.0, 0.0, 5.0, np.array([1.0, 0.5])).round(6).tolist()
    [0.756768, 0.788966]
    """
    r = np.asarray(r_max, dtype=np.float64)
    if not (0.0 < s_lo <= s_hi < sigma):
        raise ValueError(f"need 0 < s_lo <= s_hi < sigma, got {s_lo!r}, {s_hi!r}, {sigma!r}")
    best = np.full(r.shape, np.inf)
    for s in (s_lo, s_hi):
        best = np.minimum(best, math.log(s / sigma) - 0.5 * (r + c_max) ** 2
                          / (sigma * sigma - s * s))
    return _floor(np.exp(best) * (1.0 - 64.0 * _U))


def _floor(out: NDArray) -> NDArray:
    """Masses below ``MASS_FLOOR`` of the largest set to 0 (see :func:`gaussian_masses`)."""
    top = float(out.max()) if out.size else 0.0
    return np.where(out >= MASS_FLOOR * top, out, 0.0)


def gaussian_cases(eps: float, sigma_lo: float, sigma_hi: float,
                   masses: Callable[[float, float, float], NDArray], narrow: float,
                   size: int, wide: bool = False) -> list[BlanketCase]:
    """The cases of a victim group whose reference victim has the noise scale ``sigma_lo``
    and whose victims' blankets are at most ``sigma_hi`` times ``sqrt(1 - rho^2 kappa /
    sigma_lo^2)`` wide (module docstring; ``sigma_hi`` the group's largest scale for the
    Gaussian mechanism, ``sigma_lo`` for the shared-noise Gaussian, whose victims all have
    the reference noise): per kappa of :func:`kappas` (a choice), one case per half-width of
    ``HALF_WIDTHS`` but the last, with ``masses(s_lo, s_hi, c_max)`` the user classes'
    smallest masses (``size`` of them) against the blankets ``N(c, s^2)`` of its pairs, and
    one for the pairs of half-width at most the last (reference units), whose value is
    ``narrow``: an upper bound on the local divergence ``H_{e^eps}(N(a, sigma_lo^2) ||
    N(-a, sigma_lo^2))`` at ``a = HALF_WIDTHS[-1]`` (the Claim's (iv)); ``wide``: the choices
    of :func:`kappas` for a pool with users of larger budgets."""
    sigma = float(sigma_lo)
    out: list[BlanketCase] = []
    widths = HALF_WIDTHS
    last = float(narrow)
    for choice, kappa in enumerate(kappas(sigma, wide)):
        tau = math.sqrt(sigma * sigma - kappa)
        theta2 = tau * tau / (sigma * sigma)
        coarse_all = gaussian_pair_cells_many(sigma, tau, eps, widths[:-1], CELLS_COARSE)
        for (a, nxt), (coarse, cut) in zip(zip(widths[:-1], widths[1:], strict=True),
                                           coarse_all, strict=True):
            # this case: half-widths in (nxt, a], so |c| <= 1 - nxt and rho >= nxt / a
            rho_min = nxt / a
            s_hi = sigma_hi * math.sqrt(1.0 - rho_min * rho_min * (1.0 - theta2))
            mass = masses(math.sqrt(theta2) * sigma_lo, s_hi, 1.0 - nxt)

            def refine(pieces: int, a=a, tau=tau) -> Cells:
                return gaussian_pair_cells(sigma, tau, eps, a, pieces)[0]

            out.append(BlanketCase(coarse, mass, f"kappa = {kappa:.4g}: pairs of half-width "
                                   f"<= {a:g}", choice, lambda _, r=refine: r(CELLS_FINE),
                                   charge=cut))
        out.append(BlanketCase(Cells(np.ones(1), np.zeros(1), np.zeros(1), np.zeros(1)),
                               np.zeros(size), f"kappa = {kappa:.4g}: pairs of "
                               f"half-width <= {widths[-1]:g} (local)", choice, charge=last))
    return out
