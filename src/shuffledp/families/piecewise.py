"""Wang et al.'s piecewise mechanism (ICDE 2019, arXiv 1907.00782, Algorithm 2), family
``piecewise``.

With t = e^{eps/2} the report lies in [-C, C], C = (t + 1)/(t - 1); the centre piece of input
x has density p_high(eps) = t (t - 1) / (2 (t + 1)), the rest p_low(eps) = p_high(eps) e^{-eps}.
Clone mass against a victim with budget eps_v (docs/theory.md 6.5):

    r_j = p_low(eps_j) / p_high(eps_v)  if eps_j <= eps_v,  else 0.

Variation-ratio row: Laplace's, beta = 1 - e^{-eps0/2} (Wang et al., PVLDB 2024).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from shuffledp.families.base import (
    Family,
    UserClasses,
    VariationRatio,
    VictimRange,
    vr_half_exponent,
)
from shuffledp.families.blanket import BlanketCase, atoms, difference_error
from shuffledp.families.registry import register_family
from shuffledp.families.windows import (
    WEIGHTS,
    U,
    Window,
    WindowConfig,
    grid,
    symmetric_cell_masses,
)

__all__ = ["Piecewise"]

_U = U


def _piecewise_mass(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """p_low(eps_j) / p_high(eps_v) of the piecewise mechanism (eps_j = b <= eps_v = a), with
    p_high(e) = t (t - 1) / (2 (t + 1)), t = e^{e/2}, and p_low(e) = p_high(e) e^{-e}."""
    with np.errstate(divide="ignore", invalid="ignore"):
        tb, ta = np.exp(b / 2.0), np.exp(a / 2.0)
        ratio = (tb * np.expm1(b / 2.0) / (tb + 1.0)) / (ta * np.expm1(a / 2.0) / (ta + 1.0))
        out = np.where(a == b, 1.0, ratio) * np.exp(-b)
    return np.where(np.isfinite(out), out, 0.0)


def _mass_piecewise(lo: float, hi: float, x: float, eps: NDArray) -> tuple[NDArray, NDArray]:
    """Mass of [lo, hi] under Wang et al.'s piecewise mechanism and its error bound.

    With ``h = (C - 1) / 2 = 1 / (e^{eps/2} - 1)`` the output range is [-C, C], C = 1 + 2h,
    and the centre piece of input x is ``[l, r] = [x - (1 - x) h, x + (1 + x) h]`` with
    density ``p = e^{eps/2} (e^{eps/2} - 1) / (2 e^{eps/2} + 2)``, the rest density
    ``p e^{-eps}`` (:class:`~shuffledp.mechanisms.PiecewiseMechanism`).  A length
    ``min(hi, B) - max(lo, A)`` is a correctly rounded difference of floats (error u times
    itself) plus the representation errors of the computed end points A, B where they bind
    (the window ends are exact by definition)."""
    h = 1.0 / np.expm1(eps / 2.0)
    t = np.exp(eps / 2.0)
    c = 1.0 + 2.0 * h
    p = t / (2.0 * (t + 1.0) * h)
    low = p * np.exp(-eps)
    e_c = 2.0 * _U * c + 10.0 * _U * h
    left = x - (1.0 - x) * h
    right = x + (1.0 + x) * h
    e_l = (_U * np.abs(left) + 5.0 * _U * (1.0 - x) * h) if x != 1.0 else np.zeros_like(h)
    e_r = (_U * np.abs(right) + 5.0 * _U * (1.0 + x) * h) if x != -1.0 else np.zeros_like(h)

    def length(a, ea, b, eb):
        top = np.minimum(hi, b)
        bot = np.maximum(lo, a)
        val = np.maximum(top - bot, 0.0)
        err = _U * val + np.where(b < hi, eb, 0.0) + np.where(a > lo, ea, 0.0)
        return val, err

    lc, elc = length(left, e_l, right, e_r)
    l1, el1 = length(-c, e_c, left, e_l)
    l2, el2 = length(right, e_r, c, e_c)
    lo_len = l1 + l2
    val = p * lc + low * lo_len
    err = (p * elc + low * (el1 + el2) + 8.0 * _U * p * lc
           + (10.0 + np.abs(eps)) * _U * low * lo_len + _U * val)
    return np.minimum(val, 1.0), err


@register_family
@dataclass(frozen=True)
class Piecewise(Family):
    """The piecewise mechanism (module docstring).

    >>> float(Piecewise().clone_mass(1.0, 2.0))  # lighter tails: none
    0.0
    """

    positive_budgets = True  # noise scale proportional to 1 / eps_i

    name: ClassVar[str] = "piecewise"
    title: ClassVar[str] = "Wang et al.'s piecewise mechanism (ICDE 2019)"
    victim_order: ClassVar[str] = "zero_below"
    aware: ClassVar[bool] = True
    binnable: ClassVar[bool] = True
    blanket_ratio_groups: ClassVar[bool] = True
    blanket_ratio_share: ClassVar[float] = 1.0
    blanket_groups: ClassVar[str] = "tiers_then_ranges"

    def blanket_cases(self, eps: float, group: VictimRange,
                      users: UserClasses) -> list[BlanketCase]:
        """The blanket of the victims with budgets in ``[eps_lo, eps_hi]`` (docs/theory.md
        15.4): every input's density is at least p_low on the output range [-C, C], so omega
        is uniform there, of mass 2 C p_low; a user with budget eps_j <= eps_v (a wider range
        C_j >= C) has mass 2 C p_low(eps_j), the others 0.  l takes
        ``2 C (p_high - e^eps p_low)`` on the centre piece of x0 only,
        ``2 C (p_low - e^eps p_high)`` on that of x1 only, and ``2 C p (1 - e^eps)``
        (p = p_high or p_low) where both or neither: the omega-masses depend only on the
        overlap of the two centre pieces, and the disjoint pieces of x0 = 1, x1 = -1 are a
        mean-preserving spread of any overlap, so that pair is the worst.

        A group of budgets is covered by its victim at eps_hi: that victim's law of l is the
        largest in the convex order (it depends on ``t = e^{eps_v/2}`` only and grows with t),
        and every class whose budgets are at most eps_lo covers each victim's range with at
        least the mass ``2 C(eps_hi) p_low(eps_j)`` (C decreases in the budget); classes
        reaching above eps_lo get 0."""
        v = group.eps_hi
        e = math.exp(eps)
        t = math.exp(v / 2.0)
        h = 1.0 / math.expm1(v / 2.0)
        c = 1.0 + 2.0 * h
        p_high = t * math.expm1(v / 2.0) / (2.0 * (t + 1.0))
        p_low = p_high * math.exp(-v)
        vals = [2.0 * c * (p_high - e * p_low), 2.0 * c * (p_low - e * p_high),
                2.0 * c * p_low * (1.0 - e)]
        mass = [h / c, h / c, 1.0 / c]
        a = np.asarray(users.eps_a, dtype=np.float64)
        b = np.asarray(users.eps_b, dtype=np.float64)

        def low(x: NDArray[np.float64]) -> NDArray[np.float64]:
            tx = np.exp(x / 2.0)
            return tx * np.expm1(x / 2.0) / (2.0 * (tx + 1.0)) * np.exp(-x)

        with np.errstate(divide="ignore", invalid="ignore"):
            g = 2.0 * c * np.minimum(low(a), low(b))  # p_low is unimodal: its minimum at an end
        masses = np.where(b <= group.eps_lo, np.minimum(g, 1.0), 0.0)
        masses = masses * (1.0 - np.asarray(users.delta))
        return [BlanketCase(atoms(vals, mass, 64.0 * 1.2e-16,
                                  difference_error(64.0 * 1.2e-16, eps, 2.0 * c * p_high)), masses,
                            "omega uniform on the output range of the group's largest budget")]

    def _clone_mass(self, a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.where(b <= a, _piecewise_mass(a, b), 0.0)

    def _variation_ratio(self, eps0: float) -> VariationRatio:
        return vr_half_exponent(eps0)

    def window_configs(self, eps_v: float, delta_v: float) -> list[WindowConfig]:
        h_v = 1.0 / math.expm1(eps_v / 2.0)  # (C_v - 1) / 2
        windows = [Window(f"[1, 1+{f:g}(C_v-1)]", 1.0, 1.0 + f * 2.0 * h_v)
                   for f in (0.125, 0.25, 0.5, 0.95)]
        windows.append(Window("[0, C]", 0.0, math.inf))
        # symmetric family: x* = +1 is the mirror of x* = -1 (both directions taken)
        return grid(-1.0, 1.0, (-1.0, 0.0), windows, WEIGHTS)

    def profile_windows(self, eps_v: float, delta_v: float,
                        eps_others: NDArray[np.float64]) -> list[WindowConfig]:
        """Windows on the region few other users reach (docs/theory.md 15.4, "the user of the
        smallest budget"): the output range [-C, C] shrinks as the budget grows, so beyond
        C_(k), the range of the k-th smallest budget above the victim's, only the users below
        it report.  ``[C_(k) (1 + 1e-9), inf)`` for k = 1, 2, 4, ..., 32 (as far as there are
        such users) and ``[(C_(1) + C_v) / 2, inf)``; none when no other user has a larger
        budget.  The margin keeps the window clear of C_(k)'s rounding, so that user's
        mass is an exact zero, not round-off with a large relative error."""
        above = np.asarray(eps_others, dtype=np.float64)
        above = np.unique(above[above > eps_v])
        if above.size == 0:
            return []
        c_v = 1.0 + 2.0 / math.expm1(eps_v / 2.0)
        windows = []
        for k in (1, 2, 4, 8, 16, 32):
            if k > above.size:
                break
            e_k = float(above[k - 1])
            c_k = 1.0 + 2.0 / math.expm1(e_k / 2.0)
            windows.append(Window(f"[C({e_k:.6g}), inf)", c_k * (1.0 + 1e-9), math.inf))
            if k == 1:
                windows.append(Window(f"[(C({e_k:.6g})+C_v)/2, inf)", 0.5 * (c_k + c_v),
                                      math.inf))
        return grid(-1.0, 1.0, (-1.0, 0.0), windows, ((1, 1),))

    def cell_masses(self, x: float, eps: NDArray[np.float64], delta: NDArray[np.float64],
                    window: Window) -> tuple[NDArray[np.float64], ...]:
        def mass(lo, hi, xx):
            return _mass_piecewise(lo, hi, xx, eps)

        return symmetric_cell_masses(mass, x, window)
