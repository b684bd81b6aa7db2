"""Laplace noise of one scale for every budget, the signal scaled by the budget (family
``laplace_shared``; docs/theory.md 15.6).

User j reports ``s_j x_j + Lap(b)`` with ``s_j = eps_j b / 2`` (x_j in [-1, 1]): the L1
sensitivity of ``s_j x_j`` is ``2 s_j = eps_j b``, so the report is pure eps_j-LDP (Dwork,
McSherry, Nissim, Smith, TCC 2006).  The scale b is common (the estimator divides by
``sum_j s_j``; :class:`~shuffledp.mechanisms.LaplaceSharedMechanism` takes b = 1).  Against
a victim v, in the victim's units ``y / s_v`` (its inputs in [-1, 1], scale ``2/eps_v``),
user j's report is ``(eps_j/eps_v) x_j + Lap(2/eps_v)``: every user has the victim's tails.

* Blanket: ``omega = Lap(0, 2/eps_v)``, user j's mass ``e^{-eps_j/2}`` whatever the two
  budgets (its infimum over inputs, ``Lap(0, 2/eps_v)(y) e^{-(eps_j/eps_v)(eps_v/2)}``).  The
  victim's pair is the identical-budget Laplace pair, so the Laplace cases of
  docs/theory.md 15.4 (Lemmas 11 and 12, with b_r = b_v) apply with these masses.
* Clone mass (docs/theory.md 3.2): ``r = e^{-(eps_v + eps_j)/2}`` (user j's infimum
  ``e^{-eps_j/2} omega`` against the victim's ``(P0 + P1)/2 <= e^{eps_v/2} omega``), which is
  FMT21's ``e^{-eps}`` at equal budgets and decreases with the victim's budget.

Variation-ratio row: the general one.  Window and interval masses (``window_lower``,
``tier_sum_lower``): in the common units (b = 1), the victim's reports centred at
``+-eps_v / 2`` (:func:`shared_laplace_mass`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from shuffledp.families.base import Family, UserClasses, VariationRatio, VictimRange, vr_general
from shuffledp.families.blanket import BlanketCase
from shuffledp.families.laplace_blanket import BlanketShape, pair_cases
from shuffledp.families.registry import register_family
from shuffledp.families.windows import (
    WEIGHTS,
    U,
    Window,
    WindowConfig,
    finite,
    grid,
    symmetric_cell_masses,
    symmetric_windows,
)

__all__ = ["LaplaceShared", "shared_laplace_mass"]


def shared_laplace_mass(lo: float, hi: float, centre: NDArray) -> tuple[NDArray, NDArray]:
    """``Pr[centre + Lap(1) in [lo, hi]]`` elementwise over the centres (``hi`` may be inf),
    and its error bound: ``e^{-d} (1 - e^{-(hi-lo)}) / 2`` on one side of the centre, else
    ``(1 - e^{-z1}) / 2 + (1 - e^{-z2}) / 2``, with the relative error bounds of the Laplace
    family's masses, plus ``u |centre|`` for the rounding of the centre (density at most
    1/2 at two ends).

    >>> v, e = shared_laplace_mass(0.0, np.inf, np.array([0.0, 1.0]))
    >>> v.round(6).tolist()
    [0.5, 0.81606]
    """
    c = np.asarray(centre, dtype=np.float64)
    right, left = lo >= c, hi <= c
    one_side = right | left
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.where(right, lo - c, np.where(left, c - hi, 0.0))
        z2 = np.where(one_side, hi - lo, 0.0)
        side = 0.5 * np.exp(-d) * -np.expm1(-z2)
        side_rel = (3.0 * finite(d) + 3.0 * finite(z2) + 12.0) * U
        z1 = np.where(one_side, 0.0, c - lo)
        z3 = np.where(one_side, 0.0, hi - c)
        mid = 0.5 * -np.expm1(-z1) + 0.5 * -np.expm1(-z3)
        mid_rel = (3.0 * finite(z1) + 3.0 * finite(z3) + 12.0) * U
    val = np.where(one_side, side, mid)
    err = np.where(one_side, side_rel * side, mid_rel * mid) + U * np.abs(c)
    return val, err


@register_family
@dataclass(frozen=True)
class LaplaceShared(Family):
    """Laplace noise of one common scale, signal ``eps_j b / 2`` (module docstring).

    >>> f = LaplaceShared()
    >>> round(float(f.clone_mass(1.0, 1.0)), 6) == round(float(np.exp(-1.0)), 6)
    True
    >>> float(f.clone_mass(0.5, 2.0)) > 0.0  # a larger budget still hides the victim
    True
    """

    positive_budgets = True  # the estimator divides by sum_j eps_j

    name: ClassVar[str] = "laplace_shared"
    title: ClassVar[str] = "Laplace noise of one scale, signal eps_i b / 2 (one blanket for all)"
    victim_order: ClassVar[str] = "decreasing"
    #: ``blanket``: the group of the largest budgets first (as the shared-noise Gaussian's;
    #: docs/theory.md 15.7; time only)
    blanket_top_first: ClassVar[bool] = True
    aware: ClassVar[bool] = True

    def _clone_mass(self, a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.exp(-(a + b) / 2.0)

    def _variation_ratio(self, eps0: float) -> VariationRatio:
        return vr_general(eps0)

    def blanket_cases(self, eps: float, group: VictimRange,
                      users: UserClasses) -> list[BlanketCase]:
        """The blanket ``Lap(0, 2/eps_v)`` in the units of the group's largest budget eps_v,
        every user's mass ``e^{-eps_j/2}`` (at the largest budget of its class): the pair
        (1, -1) covers the opposite-sign pairs (Lemma 11, b_r = b_v) and a grid of widths the
        same-sign ones, with the masses times ``e^{-|c|/b_v}`` for the shifted blanket (Lemma
        12).  A victim of the group with a smaller budget has the inputs ``(eps_u/eps_v) x``
        in these units, inside [-1, 1], so the same cases cover it (docs/theory.md 15.6)."""
        v = group.eps_hi
        b_v = 2.0 / v
        masses = np.exp(-np.asarray(users.eps_b, dtype=np.float64) / 2.0) * (
            1.0 - np.asarray(users.delta))
        cases = pair_cases(b_v, BlanketShape.laplace(b_v), eps, masses, "eps_r = eps_v", 0)
        return cases

    # ------------------------------------------------------------------ window_lower
    def window_configs(self, eps_v: float, delta_v: float) -> list[WindowConfig]:
        """The Laplace family's windows in the common units (victim centred at
        ``+-eps_v / 2``, unit scale)."""
        return grid(-1.0, 1.0, (-1.0, 0.0), symmetric_windows(1.0, centre=eps_v / 2.0),
                    WEIGHTS)

    def cell_masses(self, x: float, eps: NDArray[np.float64], delta: NDArray[np.float64],
                    window: Window) -> tuple[NDArray[np.float64], ...]:
        signal = np.asarray(eps, dtype=np.float64) / 2.0

        def mass(lo, hi, xx):
            return shared_laplace_mass(lo, hi, xx * signal)

        return symmetric_cell_masses(mass, x, window)
