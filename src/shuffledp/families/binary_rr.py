"""Binary randomized response (Warner 1965), family ``binary_rr``.

User j reports its bit truthfully with probability e^{eps_j} / (1 + e^{eps_j}).  Each output
has mass at least 1/(1 + e^{eps_j}) whatever the input, and the victim's P0 + P1 = (1, 1), so
the clone mass is ``r_j = 2 / (1 + e^{eps_j})`` against every victim (docs/theory.md 6.1; the
paper's p_j, doubled).  Its variation-ratio row is the general one (gamma = 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from shuffledp._lazy import lazy_module
from shuffledp.families.base import Family, UserClasses, VariationRatio, VictimRange, vr_general
from shuffledp.families.blanket import BlanketCase, atoms, difference_error
from shuffledp.families.registry import register_family
from shuffledp.families.windows import WEIGHTS_BINARY, U, Window, WindowConfig, grid

special = lazy_module("scipy.special")

_U = U

__all__ = ["BinaryRR", "binary_cell_masses", "binary_blanket"]


def binary_cell_masses(high: bool, eps: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
    """Cell masses of a truthful-with-e^eps/(1+e^eps) bit at input 1 (``high``) or 0: the
    windows are the two output values (``W_L`` = the low one), nothing else."""
    zero = np.zeros_like(eps)
    lie, truth = special.expit(-eps), special.expit(eps)
    ea, eb = 4.0 * U * lie, 4.0 * U * truth
    return ((lie, zero, truth, ea, zero, eb) if high else (truth, zero, lie, eb, zero, ea))


def binary_blanket(eps: float, group: VictimRange, users: UserClasses) -> list[BlanketCase]:
    """The blanket of binary randomized response (docs/theory.md 15.4): omega uniform on the
    two outputs, every user's mass ``2 / (1 + e^{eps_j})`` (at the largest budget of its
    class), whatever the victim; the victim's ``l = (P0 - e^eps P1) / omega`` takes
    ``2 (q - e^eps (1 - q))`` on its input's output and ``2 ((1 - q) - e^eps q)`` on the
    other, q = e^{eps_v} / (1 + e^{eps_v}), each with omega-mass 1/2.  A victim with a
    smaller budget runs binary RR at the group's largest budget followed by a symmetric flip,
    which keeps omega: its bound is at most that victim's (Lemma 15), so the group's largest
    budget is the victim."""
    e = math.exp(eps)
    hi = group.eps_hi
    top = 2.0 * (special.expit(hi) - e * special.expit(-hi))
    bottom = 2.0 * (special.expit(-hi) - e * special.expit(hi))
    masses = 2.0 * special.expit(-np.asarray(users.eps_b)) * (1.0 - np.asarray(users.delta))
    return [BlanketCase(atoms([bottom, top], [0.5, 0.5], 8.0 * _U,
                              difference_error(8.0 * _U, eps, 2.0)), masses,
                        "omega uniform on {0, 1}")]


@register_family
@dataclass(frozen=True)
class BinaryRR(Family):
    """Binary randomized response (module docstring).

    >>> round(float(BinaryRR().clone_mass(4.0, 1.0)), 6)  # 2 / (1 + e)
    0.537883
    """

    name: ClassVar[str] = "binary_rr"
    blanket_top_first: ClassVar[bool] = True
    title: ClassVar[str] = "binary randomized response (Warner 1965)"
    victim_order: ClassVar[str] = "constant"
    aware: ClassVar[bool] = True

    def _clone_mass(self, a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
        return 2.0 * special.expit(-b)

    def _variation_ratio(self, eps0: float) -> VariationRatio:
        return vr_general(eps0)

    def blanket_cases(self, eps: float, group: VictimRange,
                      users: UserClasses) -> list[BlanketCase]:
        return binary_blanket(eps, group, users)

    def window_configs(self, eps_v: float, delta_v: float) -> list[WindowConfig]:
        # reports 0 / 1, inputs 0 / 1: the others at 0
        return grid(0.0, 1.0, (0.0,), [Window("values")], WEIGHTS_BINARY)

    def cell_masses(self, x: float, eps: NDArray[np.float64], delta: NDArray[np.float64],
                    window: Window) -> tuple[NDArray[np.float64], ...]:
        return binary_cell_masses(x > 0, eps)
