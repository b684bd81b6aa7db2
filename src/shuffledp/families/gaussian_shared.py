"""Gaussian noise of one scale for every budget, the signal scaled by the budget (family
``gaussian_shared``; docs/theory.md 15.7).

User j reports ``x_j / sigma_j + N(0, 1)`` (x_j in [-1, 1]), sigma_j the analytic Gaussian
scale of its budget (eps_j, delta_j) with sensitivity 2 (Balle & Wang, ICML 2018, Theorem 8):
the report is ``(x_j + N(0, sigma_j^2)) / sigma_j``, a fixed rescaling of the Gaussian
mechanism's, so it is (eps_j, delta_j)-LDP and has the mixture form of Lemma 6 (in its own
units).  Against a victim v, in the victim's units (reports times sigma_v), user j reports
``a_j x_j + N(0, sigma_v^2)`` with ``a_j = sigma_v / sigma_j``: every user has the victim's
noise, a larger budget only a wider range of means.

Clone masses (Lemma 17, the shared analogue of Lemma 7): with the victim's tails cut at
``|y| <= T`` (victim units),

    m_j(v) = min(1, (1 - delta_j)/M_j) (1 - delta'_v) e^{-eps_v} rho,
    log rho = min(0, -(a_j - 1)(2 T + a_j + 1) / (2 sigma_v^2)),

``M_j = 2 Phi(-1/sigma_j)`` (the mass of user j's infimum density, as for the Gaussian
mechanism).  The exponent decays *linearly* in T, where the per-budget Gaussian mechanism's
decays with T^2; a user with a smaller budget (a_j <= 1) runs the victim's randomizer at a
narrower input range and has rho = 1 even without a cut.

Window and interval masses (``window_lower``, ``tier_sum_lower``) are computed in the common
units, the victim's reports centred at ``+-1/sigma_v`` with unit noise.

Code names: ``sigma`` = sigma_j (own units), ``a`` = a_j, ``cut`` = T, ``signal`` =
``1 / sigma_j``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from shuffledp._lazy import lazy_module
from shuffledp.families.base import UserClasses, VictimRange
from shuffledp.families.gaussian import Gaussian, _tail_cut, gaussian_delta, sigmas
from shuffledp.families.gaussian_blanket import (
    HALF_WIDTHS,
    cached_masses,
    gaussian_cases,
    shared_masses,
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

special = lazy_module("scipy.special")

__all__ = ["GaussianShared", "shared_log_rho", "unit_gauss_mass"]

#: Relative and absolute slack taken off the closed-form exponent (rounding, downwards).
_EXP_SLACK = 1e-12


def shared_log_rho(sig_lo: float, sig_hi: float, cut: float,
                   sig_j: NDArray[np.float64]) -> NDArray[np.float64]:
    """log of min over victims sigma_v in [sig_lo, sig_hi] and ``|y| <= cut`` (victim units)
    of ``m_j(y) / m_v(y) = phi_{sigma_v}(|y| + a) / phi_{sigma_v}(|y| + 1)``, a =
    sigma_v / sigma_j, capped at 0 (Lemma 17).

    The exponent ``-(a - 1)(2|y| + a + 1) / (2 sigma_v^2)`` is linear in ``|y|``: for a > 1 its
    minimum is at ``|y| = cut``; written in ``z = 1 / sigma_v`` it is the convex quadratic
    ``(cut + 1/2) z^2 - (cut / sigma_j) z - 1 / (2 sigma_j^2)``, smallest at
    ``sigma_v = sigma_j (2 + 1/cut)`` (clipped to the group); in ``w = 1/sigma_j`` it decreases
    (``-w^2/2 - cut z w``), so a class of users is bounded by its smallest sigma_j.
    ``cut = inf``: 0 where ``sigma_j >= sig_hi`` (a <= 1 for every victim), else -inf.

    >>> float(shared_log_rho(2.0, 2.0, 5.0, np.array([2.0]))[0])  # a = 1
    0.0
    >>> round(float(shared_log_rho(2.0, 2.0, 5.0, np.array([1.0]))[0]), 6)  # -(1)(13)/8
    -1.625
    """
    sig_j = np.asarray(sig_j, dtype=np.float64)
    if math.isinf(cut):
        return np.where(sig_j >= sig_hi, 0.0, -np.inf)
    sig_v = np.clip(sig_j * (2.0 + 1.0 / cut), sig_lo, sig_hi)
    a = sig_v / sig_j
    e = -(a - 1.0) * (2.0 * cut + a + 1.0) / (2.0 * sig_v * sig_v)
    # rounding, downwards: of a (two roundings, amplified by de/da) and of the closed form;
    # a = 1 exactly (the same scale) is the exponent 0 exactly
    err = (_EXP_SLACK * (1.0 + np.abs(e))
           + 4.0 * U * a * (2.0 * cut + 2.0 * a) / (2.0 * sig_v * sig_v))
    e = np.where(sig_v == sig_j, 0.0, e - err)
    return np.minimum(e, 0.0)


def unit_gauss_mass(lo: float, hi: float, centre: NDArray) -> tuple[NDArray, NDArray]:
    """``Pr[centre + N(0, 1) in [lo, hi]]`` elementwise over the centres, and its error
    bound: the tail form ``e^{la} (1 - e^{lb - la})`` (``la``, ``lb`` = log_ndtr of the two
    ends) when the interval lies on one side of the centre, else ``(erf(z1/sqrt 2) +
    erf(z2/sqrt 2)) / 2`` (the error bounds of :func:`~shuffledp.families.gaussian._mass_gauss`),
    plus ``0.8 u |centre|`` for the rounding of the centre (density at most 0.4 at two ends).
    """
    c = np.asarray(centre, dtype=np.float64)
    one_side = (lo >= c) | (hi <= c)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        d1 = np.where(lo >= c, lo - c, c - hi)
        d2 = np.where(lo >= c, hi - c, c - lo)
        d1 = np.where(one_side, d1, 0.0)
        d2 = np.where(one_side, d2, 1.0)
        la = special.log_ndtr(-d1)
        lb = np.where(np.isfinite(d2), special.log_ndtr(-np.where(np.isfinite(d2), d2, 0.0)),
                      -np.inf)
        diff = lb - la
        tail_val = np.exp(la) * -np.expm1(diff)
        abs_d = 8.0 * U * (np.abs(la) + np.where(np.isfinite(lb), np.abs(lb), 0.0) + 1.0)
        amp = np.where(np.isfinite(diff), 1.0 + 1.0 / np.maximum(np.abs(diff), 1e-300), 1.0)
        tail_err = np.minimum((8.0 + 4.0 * np.abs(la)) * U + abs_d * amp, 1.0) * tail_val
        z1 = np.where(one_side, 0.0, c - lo)
        z2 = np.where(one_side, 0.0, hi - c)
        mid_val = 0.5 * special.erf(z1 / math.sqrt(2.0)) + 0.5 * special.erf(z2 / math.sqrt(2.0))
    val = np.where(one_side, tail_val, mid_val)
    err = np.where(one_side, tail_err, 16.0 * U * mid_val) + 0.8 * U * np.abs(c)
    return val, err


@register_family
@dataclass(frozen=True)
class GaussianShared(Gaussian):
    """Gaussian noise of one common scale, signal ``1 / sigma_j`` (module docstring).

    >>> f = GaussianShared()
    >>> f.pure, f.spec, f.includes(Gaussian())
    (False, 'gaussian_shared', False)
    """

    name: ClassVar[str] = "gaussian_shared"
    title: ClassVar[str] = ("Gaussian noise of one scale, signal x / sigma_i (approximate LDP; "
                            "every user hides every victim)")
    display_name: ClassVar[str] = "shared-noise Gaussian"
    #: ``blanket``: the victims of the largest budgets send the largest signal in the common
    #: units, and their group was the worst on every profile measured (docs/theory.md 15.7):
    #: evaluated first, it makes the other groups' checks cheap (time only)
    blanket_top_first: ClassVar[bool] = True

    def blanket_cases(self, eps: float, group: VictimRange, users: UserClasses) -> list:
        """Gaussian blankets in the group's reference units (every report times the group's
        smallest sigma_lo: every user j reports ``(sigma_lo / sigma_j) x_j + N(0,
        sigma_lo^2)`` and every victim of the group ``x + N(0, sigma_lo^2)`` with ``|x| <=
        sigma_lo / sigma_v <= 1``): the cases of :func:`~shuffledp.families.gaussian_blanket.
        gaussian_cases` with the victims' noise sigma_lo, and every user covering them, with
        the masses of :func:`~shuffledp.families.gaussian_blanket.shared_masses` at its class's
        largest signal ``sigma_lo / sigma_b`` (docs/theory.md 15.7, "Blanket")."""
        assert users.sigma_b is not None
        sig = float(group.sigma_lo)
        sig_b = np.asarray(users.sigma_b, dtype=np.float64)
        r_max = sig / sig_b
        narrow = float(gaussian_delta(eps, sig, sensitivity=2.0 * HALF_WIDTHS[-1]))

        def masses(s_lo: float, s_hi: float, c_max: float) -> NDArray[np.float64]:
            return cached_masses((sig_b,), ("shared", s_lo, s_hi, c_max, sig),
                                 lambda: shared_masses(s_lo, s_hi, c_max, sig, r_max))

        return gaussian_cases(eps, sig, sig, masses, min(1.0, narrow * (1.0 + 1e-9) + 1e-300),
                              r_max.size)

    def pool_masses(self, group: VictimRange, users: UserClasses, eta: float, *,
                    victim_eps: NDArray[np.float64], own_bin: int | None
                    ) -> tuple[float, NDArray[np.float64]]:
        """Lemma 17: ``min(1, (1 - delta_j)/M_j) (1 - delta'_v) e^{-eps_v} rho`` per user
        class, rho of :func:`shared_log_rho` at the class's smallest sigma_j, the victim's
        delta raised by the cut tail (the cut in victim units is the Gaussian mechanism's,
        :func:`~shuffledp.families.gaussian._tail_cut`); a one-tier group's own users run the
        victim's randomizer (FMT21 Lemma 3.3), as for the Gaussian mechanism."""
        assert users.sigma_b is not None and users.log_kappa is not None
        g = group
        cut, tail = _tail_cut(eta, g.sigma_hi)
        delta_v = min(1.0, g.delta_hi + tail)
        rho = shared_log_rho(g.sigma_lo, g.sigma_hi, cut, users.sigma_b)
        m = np.exp(users.log_kappa + math.log1p(-delta_v) - g.eps_hi + rho)
        if math.isinf(cut) and own_bin is not None:
            k = own_bin
            m[k] = max(m[k], (1.0 - users.delta[k]) * math.exp(-g.eps_hi))
        return delta_v, m

    # ------------------------------------------------------------------ window_lower
    def window_configs(self, eps_v: float, delta_v: float) -> list[WindowConfig]:
        """The Gaussian mechanism's windows in the common units: the victim's reports centred
        at ``+-1/sigma_v`` with unit noise (the same post-processings, rescaled)."""
        centre = 1.0 / float(sigmas(np.array([eps_v]), np.array([delta_v]))[0])
        windows = symmetric_windows(1.0, centre=centre)
        windows += [Window(f"y>={centre:.3g}+{k}", centre + k, math.inf) for k in (1, 2, 3)]
        return grid(-1.0, 1.0, (-1.0, 0.0), windows, WEIGHTS)

    def cell_masses(self, x: float, eps: NDArray[np.float64], delta: NDArray[np.float64],
                    window: Window) -> tuple[NDArray[np.float64], ...]:
        signal = 1.0 / sigmas(eps, delta)

        def mass(lo, hi, xx):
            return unit_gauss_mass(lo, hi, xx * signal)

        return symmetric_cell_masses(mass, x, window)
