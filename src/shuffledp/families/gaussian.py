"""The Gaussian mechanism on [-1, 1] (family ``gaussian``) and the analytic Gaussian calibration.

User i reports ``x_i + N(0, sigma_i^2)`` with sigma_i the smallest scale for which the
mechanism is (eps_i, delta_i)-DP with L2 sensitivity 2 (Balle & Wang, ICML 2018, arXiv
1805.06530, Theorem 8: :func:`analytic_gaussian_sigma`, the project's one home of that
calibration, memoised per budget array by :func:`sigmas`).  Not pure LDP, so its generic
clone mass is 0; what the project knows of it:

* the mixture form (docs/theory.md Section 8, Lemmas 5, 6): the mechanism is (1 - delta) an
  eps-LDP randomizer plus a delta leak (:func:`gaussian_mixture_excess`);
* per-victim clone masses with a tail cut for the mechanism-aware reduction (Lemma 7):
  ``m_j(v) = (1 - delta'_v) e^{-eps_v} rho_T(sigma_v, sigma_j) min(1, (1 - delta_j)/M_j)``,
  ``M_j = 2 Phi(-1/sigma_j)`` the mass of inf_x N(x, sigma_j^2) (``kappa``);
* window masses for ``window_lower`` (docs/theory.md 13), including the far tails (the
  likelihood ratio 2y / sigma^2 is unbounded).

Code names: ``sigma`` = sigma_i, ``sensitivity`` = Delta (2 for inputs in [-1, 1]), ``eta``
the victim's cut tail, ``kappa`` as above.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from shuffledp._lazy import lazy_module
from shuffledp.caching import lru_get, lru_put, register_mapping
from shuffledp.families.base import Family, UserClasses, VictimRange
from shuffledp.families.gaussian_blanket import (
    HALF_WIDTHS,
    cached_masses,
    gaussian_cases,
    masses_of,
)
from shuffledp.families.registry import register_family
from shuffledp.families.windows import (
    WEIGHTS,
    U,
    Window,
    WindowConfig,
    grid,
    symmetric_cell_masses,
    symmetric_windows,
)
from shuffledp.limits import EPS_LOCAL_MAX, LOCAL_EPS_RULE
from shuffledp.validation import as_real_array, check_array_range, check_real

special = lazy_module("scipy.special")

__all__ = ["Gaussian", "gaussian_delta", "analytic_gaussian_sigma", "sigmas",
           "gaussian_mixture_excess"]

_U = U


def gaussian_delta(
    eps: ArrayLike, sigma: ArrayLike, *, sensitivity: float = 2.0
) -> NDArray[np.float64]:
    """Exact delta of the Gaussian mechanism at ``eps`` (Balle & Wang, ICML 2018, Theorem 8):

        delta = Phi(D/(2 s) - eps s / D) - e^eps Phi(-D/(2 s) - eps s / D),

    code names ``sensitivity`` = Delta (D), ``sigma`` = s.  The second term is formed in log
    space (``log_ndtr``), so large eps does not overflow.

    ``eps`` finite and >= 0, ``sigma`` finite and > 0 (broadcast together), ``sensitivity``
    finite and > 0.

    >>> round(float(gaussian_delta(0.0, 2.0)), 6)  # eps = 0: TV of N(0,4) and N(2,4)
    0.382925
    """
    e = as_real_array(eps, "eps")
    check_array_range(e, "eps", low=0.0)
    s = as_real_array(sigma, "sigma")
    check_array_range(s, "sigma", low=0.0, low_open=True)
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_open=True)
    e, s = _broadcast(e, s, "eps", "sigma")
    return _gaussian_delta(e, s, sensitivity)


def _gaussian_delta(
    e: NDArray[np.float64], s: NDArray[np.float64], sensitivity: float
) -> NDArray[np.float64]:
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        a = sensitivity / (2.0 * s)
        b = e * s / sensitivity
        return special.ndtr(a - b) - np.exp(e + special.log_ndtr(-a - b))


def _broadcast(
    a: NDArray[np.float64], b: NDArray[np.float64], name_a: str, name_b: str
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    try:
        return np.broadcast_arrays(a, b)  # type: ignore[return-value]
    except ValueError:
        raise ValueError(
            f"{name_a} and {name_b} must have the same shape or be scalars, got shapes "
            f"{a.shape} and {b.shape}"
        ) from None


def analytic_gaussian_sigma(
    eps: ArrayLike,
    delta: ArrayLike,
    *,
    sensitivity: float = 2.0,
    rtol: float = 1e-10,
) -> NDArray[np.float64]:
    """Smallest sigma with ``gaussian_delta(eps, sigma) <= delta``, elementwise.

    ``eps`` in [0, EPS_LOCAL_MAX] (the accepted local budgets), ``delta`` in (0, 1) (broadcast
    together), ``sensitivity`` finite and > 0, ``rtol`` in (0, 1).

    Balle & Wang, ICML 2018, Theorem 8 gives the exact (eps, delta)-DP condition of
    ``N(f(x), sigma^2)`` with L2 sensitivity Delta; its left side decreases in sigma, so the
    calibration is a root search.  Done here as one vectorised bisection on log(sigma) over the
    distinct (eps, delta) pairs: bracket by doubling/halving, then bisect until
    ``hi/lo - 1 <= rtol``, and return ``hi`` (the safe end: the mechanism is always
    (eps, delta)-DP, with sigma at most a factor 1 + rtol above the optimum).  Code names:
    ``sensitivity`` = Delta, the result = sigma.

    >>> s = analytic_gaussian_sigma([1.0, 1.0], [1e-5, 1e-5])
    >>> bool(s[0] == s[1]), bool(float(gaussian_delta(1.0, s[0])) <= 1e-5)
    (True, True)
    >>> analytic_gaussian_sigma([1.0], [0.0])
    Traceback (most recent call last):
    ...
    ValueError: delta must be in (0, 1), got delta[0] = 0.0
    """
    e = as_real_array(eps, "eps")
    dl = as_real_array(delta, "delta")
    e, dl = _broadcast(e, dl, "eps", "delta")
    shape = e.shape
    e, dl = e.ravel(), dl.ravel()
    if e.size == 0:
        raise ValueError("eps and delta must not be empty")
    check_array_range(e, "eps", low=0.0, high=EPS_LOCAL_MAX, rule=LOCAL_EPS_RULE, index=True)
    check_array_range(dl, "delta", low=0.0, high=1.0, low_open=True, high_open=True, index=True)
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_open=True)
    rtol = check_real(rtol, "rtol", low=0.0, high=1.0, low_open=True, high_open=True)
    pairs, inverse = np.unique(np.stack([e, dl], axis=1), axis=0, return_inverse=True)
    ue, ud = pairs[:, 0], pairs[:, 1]

    def ok(sig: NDArray[np.float64]) -> NDArray[np.bool_]:
        return _gaussian_delta(ue, sig, sensitivity) <= ud

    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        sigma = _sigma_search(ok, ue, ud, sensitivity, rtol)
    if not (np.all(np.isfinite(sigma)) and np.all(sigma > 0)):
        raise ValueError(
            f"sensitivity must give a noise scale within the float range, got {sensitivity!r}"
        )
    return sigma[inverse.ravel()].reshape(shape)


def _sigma_search(ok, ue, ud, sensitivity, rtol):
    """The bracketing and bisection of :func:`analytic_gaussian_sigma` (distinct pairs)."""
    # classical start: sigma = D sqrt(2 log(1.25/delta)) / eps (Dwork & Roth, Thm A.1)
    hi = sensitivity * np.sqrt(2.0 * np.log(1.25 / ud)) / np.maximum(ue, 1e-3)
    for _ in range(200):
        bad_hi = ~ok(hi)
        if not bad_hi.any():
            break
        hi = np.where(bad_hi, hi * 2.0, hi)
    lo = hi / 2.0
    for _ in range(200):
        bad_lo = ok(lo)
        if not bad_lo.any():
            break
        lo = np.where(bad_lo, lo / 2.0, lo)
        hi = np.where(bad_lo, lo * 2.0, hi)
    # each pair stops as soon as it has converged, so sigma of a pair depends on that pair
    # only, never on the other budgets in the array (the window lower bound and the aware
    # masses compute sigma on budget tiers, the mechanism on its users: the same values)
    for _ in range(200):
        active = hi / lo - 1.0 > rtol
        if not active.any():
            break
        mid = np.sqrt(lo * hi)
        good = ok(mid)
        hi = np.where(active & good, mid, hi)
        lo = np.where(active & ~good, mid, lo)
    return hi


def gaussian_mixture_excess(x: float, eps: float, sigma: float) -> float:
    """``integral (N(x, sigma^2)(y) - e^eps m(y))^+ dy`` with ``m(y) = phi_sigma(|y| + 1)`` the
    infimum of the Gaussian mechanism's densities over inputs in [-1, 1] (Lemma 5's criterion,
    docs/theory.md Section 8), in closed form: ``g(x) + g(-x)`` with
    ``g(s) = Phi((s - t_s)/sigma) - e^eps Phi(-(t_s + 1)/sigma)``,
    ``t_s = max(0, sigma^2 eps / (1 + s) - (1 - s)/2)`` (``g(-1) = 0``).

    Lemma 6 proves the maximum over x is at x = +-1, where it equals the analytic Gaussian
    delta (Balle & Wang 2018, Thm 8) with sensitivity 2.

    >>> abs(gaussian_mixture_excess(1.0, 1.0, 3.0) - float(gaussian_delta(1.0, 3.0))) < 1e-15
    True
    """
    def g(s: float) -> float:
        if s <= -1.0:
            return 0.0
        t = max(0.0, sigma * sigma * eps / (1.0 + s) - (1.0 - s) / 2.0)
        return float(special.ndtr((s - t) / sigma)
                     - math.exp(eps) * special.ndtr(-(t + 1.0) / sigma))

    return max(0.0, g(x)) + max(0.0, g(-x))


def _log_h(s: NDArray[np.float64] | float, u: float,
           sig_j: NDArray[np.float64]) -> NDArray[np.float64]:
    """log of phi_{sig_j}(u) / phi_s(u) = log(s / sig_j) + u^2 (1/s^2 - 1/sig_j^2) / 2."""
    return np.log(s) - np.log(sig_j) + 0.5 * u * u * (1.0 / np.square(s) - 1.0 / np.square(sig_j))


def _gaussian_log_rho(sig_lo: float, sig_hi: float, cut: float,
                      sig_j: NDArray[np.float64]) -> NDArray[np.float64]:
    """log of min over victims sigma_v in [sig_lo, sig_hi] and |y| <= cut of
    m_j(y) / m_v(y) = phi_{sig_j}(|y|+1) / phi_{sigma_v}(|y|+1) (Lemma 7): the exponent is
    linear in u^2 = (|y|+1)^2, so the minimum over u is at u = 1 or u = cut + 1, and for fixed
    u, log s + u^2 / (2 s^2) is smallest at s = u (clipped to the interval)."""
    a = _log_h(min(max(1.0, sig_lo), sig_hi), 1.0, sig_j)
    if math.isinf(cut):  # u -> infinity: 0 unless sigma_j >= every sigma_v
        return np.where(sig_j >= sig_hi, np.minimum(a, 0.0), -np.inf)
    u = cut + 1.0
    b = _log_h(min(max(u, sig_lo), sig_hi), u, sig_j)
    return np.minimum(np.minimum(a, b), 0.0)


def _tail_cut(eta: float, sig_hi: float) -> tuple[float, float]:
    """(T, tail): T = 1 + sigma isf(eta / 2) and the victim's largest mass beyond T,
    sup_{|x| <= 1} Pr[|N(x, sigma^2)| > T] = Phi(-(T-1)/sigma) + Phi(-(T+1)/sigma) (at x = +-1,
    and increasing in sigma), which is at most eta."""
    if eta <= 0.0:
        return math.inf, 0.0
    z = -float(special.ndtri(eta / 2.0))
    cut = 1.0 + sig_hi * z
    tail = float(special.ndtr(-(cut - 1.0) / sig_hi) + special.ndtr(-(cut + 1.0) / sig_hi))
    return cut, tail


def _log_kappa(sigma: NDArray[np.float64], delta: NDArray[np.float64]) -> NDArray[np.float64]:
    """log min(1, (1 - delta_j) / M_j), M_j = 2 Phi(-1/sigma_j) the mass of inf_x
    N(x, sigma_j^2) (Lemma 7); decreasing in sigma_j and in delta_j."""
    return np.minimum(0.0, np.log1p(-delta) - np.log(2.0 * special.ndtr(-1.0 / sigma)))


def _mass_gauss(lo: float, hi: float, x: float, sigma: NDArray) -> tuple[NDArray, NDArray]:
    """Pr[x + N(0, sigma^2) in [lo, hi]] and its error bound: tails as
    ``e^{la} (1 - e^{lb - la})`` with ``la``, ``lb`` = log_ndtr of the two ends, an interval
    around x as ``(erf(z1 / sqrt 2) + erf(z2 / sqrt 2)) / 2``."""
    if lo >= x or hi <= x:
        d1 = (lo - x) if lo >= x else (x - hi)
        d2 = (hi - x) if lo >= x else (x - lo)
        la = special.log_ndtr(-d1 / sigma)
        lb = special.log_ndtr(-d2 / sigma) if math.isfinite(d2) else np.full_like(la, -np.inf)
        diff = lb - la
        val = np.exp(la) * -np.expm1(diff)
        abs_d = 8.0 * _U * (np.abs(la) + np.where(np.isfinite(lb), np.abs(lb), 0.0) + 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            amp = np.where(np.isfinite(diff), 1.0 + 1.0 / np.maximum(np.abs(diff), 1e-300), 1.0)
        rel = (8.0 + 4.0 * np.abs(la)) * _U + abs_d * amp
        return val, np.minimum(rel, 1.0) * val
    z1 = (x - lo) / sigma
    z2 = (hi - x) / sigma
    val = 0.5 * special.erf(z1 / math.sqrt(2.0)) + 0.5 * special.erf(z2 / math.sqrt(2.0))
    return val, 16.0 * _U * val


_SIGMA: OrderedDict[bytes, NDArray] = OrderedDict()
register_mapping("gaussian.sigma", _SIGMA)


def sigmas(eps: NDArray[np.float64], delta: NDArray[np.float64]) -> NDArray[np.float64]:
    """The Gaussian mechanism's sigma_i for budget arrays (:func:`analytic_gaussian_sigma`,
    sensitivity 2), memoised per (eps, delta) array (the last 64)."""
    key = eps.tobytes() + b"|" + delta.tobytes()
    hit = lru_get(_SIGMA, key)
    if hit is None:
        hit = lru_put(_SIGMA, key, analytic_gaussian_sigma(eps, delta), 64)
    return hit


@register_family
@dataclass(frozen=True)
class Gaussian(Family):
    """The Gaussian mechanism on [-1, 1] (approximate LDP; module docstring).

    >>> f = Gaussian()
    >>> f.pure, float(f.clone_mass(1.0, 1.0))
    (False, 0.0)
    """

    name: ClassVar[str] = "gaussian"
    title: ClassVar[str] = "Gaussian mechanism on [-1, 1] (approximate LDP)"
    pure: ClassVar[bool] = False
    victim_order: ClassVar[str] = "zero"
    aware: ClassVar[bool] = True
    binnable: ClassVar[bool] = True
    cuts_tails: ClassVar[bool] = True
    noise_scaled: ClassVar[bool] = True
    needs_delta: ClassVar[bool] = True
    mixture_form: ClassVar[bool] = True
    needs_delta_reason: ClassVar[str] = "its sigma_i is calibrated to (eps_i, delta_i)"
    display_name: ClassVar[str] = "Gaussian"
    window_delta: ClassVar[bool] = True
    blanket_screen: ClassVar[bool] = True  # (GaussianShared inherits it)

    # ------------------------------------------------------------------ mechanism-aware
    def noise_scales(self, eps: NDArray[np.float64],
                     delta: NDArray[np.float64]) -> NDArray[np.float64]:
        """sigma_i of :class:`~shuffledp.mechanisms.mean.GaussianMechanism` for (eps_i,
        delta_i); every delta_i must be > 0."""
        if np.any(np.asarray(delta) <= 0.0):
            raise ValueError("the gaussian randomizer needs delta_i > 0 for every user, got "
                             f"delta_i = {float(np.min(delta))!r}")
        return np.asarray(analytic_gaussian_sigma(eps, delta), dtype=np.float64)

    def log_kappa(self, sigma: NDArray[np.float64],
                  delta: NDArray[np.float64]) -> NDArray[np.float64]:
        return _log_kappa(sigma, delta)

    def tail_cut(self, eta: float, group: VictimRange) -> tuple[float, float]:
        return _tail_cut(eta, group.sigma_hi)

    def pool_masses(self, group: VictimRange, users: UserClasses, eta: float, *,
                    victim_eps: NDArray[np.float64], own_bin: int | None
                    ) -> tuple[float, NDArray[np.float64]]:
        """Lemma 7: ``(1 - delta'_v) e^{-eps_v} rho_T kappa_j`` per user class, the victim's
        delta raised by the cut tail; a one-tier group's own users (its own randomizer)
        dominate ``(1 - delta_j) e^{-eps_v}`` (FMT21 Lemma 3.3 for the common pure part)."""
        assert users.sigma_a is not None and users.sigma_b is not None
        assert users.log_kappa is not None
        g = group
        cut, tail = _tail_cut(eta, g.sigma_hi)
        delta_v = min(1.0, g.delta_hi + tail)
        rho = _gaussian_log_rho(g.sigma_lo, g.sigma_hi, cut, users.sigma_a)
        if not users.exact:
            rho = np.minimum(rho, _gaussian_log_rho(g.sigma_lo, g.sigma_hi, cut, users.sigma_b))
        m = np.exp(users.log_kappa + math.log1p(-delta_v) - g.eps_hi + rho)
        if math.isinf(cut) and own_bin is not None:
            # one tier (its own bin): its users run the victim's own randomizer, r = e^{-eps}
            # (FMT21 Lemma 3.3 for the common pure part), times 1 - delta_j
            k = own_bin
            m[k] = max(m[k], (1.0 - users.delta[k]) * math.exp(-g.eps_hi))
        return delta_v, m

    # ------------------------------------------------------------------ blanket
    def blanket_cases(self, eps: float, group: VictimRange, users: UserClasses) -> list:
        """Gaussian blankets N(c, s^2) narrower than the victims' noise
        (:mod:`shuffledp.families.gaussian_blanket`; docs/theory.md 15.4, Claim "Gaussian
        blankets"): the reference victim at the group's smallest sigma, one case per
        half-width of its pairs, one choice per width of the blanket.  The users' exact report
        laws are used (no mixture reading of delta_j is needed: the masses are not multiplied
        by 1 - delta_j)."""
        assert users.sigma_a is not None and users.sigma_b is not None
        # the narrowest pairs: the victim's local divergence (post-processing), rounded up
        narrow = float(gaussian_delta(eps, group.sigma_lo, sensitivity=2.0 * HALF_WIDTHS[-1]))
        sig_a = np.asarray(users.sigma_a, dtype=np.float64)
        sig_b = np.asarray(users.sigma_b, dtype=np.float64)

        logs: list[NDArray[np.float64]] = []  # log(sig_a), once a call, if needed

        def masses(s_lo: float, s_hi: float, c_max: float) -> NDArray[np.float64]:
            # gaussian_blanket.gaussian_masses, cached under the classes' arrays (no eps)
            def compute() -> NDArray[np.float64]:
                if not logs:
                    logs.append(np.log(sig_a))
                return masses_of(s_lo, s_hi, c_max, logs[0], sig_b)

            return cached_masses((sig_a, sig_b), ("gaussian", s_lo, s_hi, c_max), compute)

        # users with narrower noise than the reference victim's (larger budgets): narrower
        # blankets are tried too (gaussian_blanket.WIDE_FACTORS)
        wide = bool(np.any((sig_b < group.sigma_lo) & (np.asarray(users.counts) > 0)))
        return gaussian_cases(eps, group.sigma_lo, group.sigma_hi, masses,
                              min(1.0, narrow * (1.0 + 1e-9) + 1e-300), sig_a.size, wide)

    # ------------------------------------------------------------------ window_lower
    def window_configs(self, eps_v: float, delta_v: float) -> list[WindowConfig]:
        scale = float(sigmas(np.array([eps_v]), np.array([delta_v]))[0])
        windows = symmetric_windows(scale)
        # unbounded likelihood ratio 2y / sigma^2: far tails as well
        windows += [Window(f"y>=1+{k}sigma_v", 1.0 + k * scale, math.inf) for k in (1, 2, 3)]
        # symmetric family: x* = +1 is the mirror of x* = -1 (both directions taken)
        return grid(-1.0, 1.0, (-1.0, 0.0), windows, WEIGHTS)

    def cell_masses(self, x: float, eps: NDArray[np.float64], delta: NDArray[np.float64],
                    window: Window) -> tuple[NDArray[np.float64], ...]:
        sig = sigmas(eps, delta)

        def mass(lo, hi, xx):
            return _mass_gauss(lo, hi, xx, sig)

        return symmetric_cell_masses(mass, x, window)
