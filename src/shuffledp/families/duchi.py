"""Duchi et al.'s one-bit mechanism for means (family ``duchi``).

Duchi, Jordan, Wainwright (JASA 2018) in the form of Wang et al. (ICDE 2019, Algorithm 1):
user j reports -1 or +1, binary randomized response applied to a randomized rounding of its
value x in [-1, 1].  Its output law at any input is a mixture of binary RR's, so its clone
mass is binary RR's, ``2 / (1 + e^{eps_j})`` (docs/theory.md 6.3), and the family includes
binary RR (inputs +-1).  Variation-ratio row: the general one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from shuffledp._lazy import lazy_module
from shuffledp.families.base import Family, UserClasses, VariationRatio, VictimRange, vr_general
from shuffledp.families.binary_rr import BinaryRR, binary_blanket, binary_cell_masses
from shuffledp.families.blanket import BlanketCase
from shuffledp.families.registry import register_family
from shuffledp.families.windows import WEIGHTS_BINARY, Window, WindowConfig, grid

special = lazy_module("scipy.special")

__all__ = ["Duchi"]


@register_family
@dataclass(frozen=True)
class Duchi(Family):
    """Duchi et al.'s one-bit mechanism (module docstring).

    >>> Duchi().includes(BinaryRR())
    True
    """

    name: ClassVar[str] = "duchi"
    blanket_top_first: ClassVar[bool] = True
    title: ClassVar[str] = "Duchi et al.'s one-bit mechanism for means"
    victim_order: ClassVar[str] = "constant"
    aware: ClassVar[bool] = True

    def includes(self, other: Family) -> bool:
        """Duchi with inputs +-1 is binary randomized response."""
        return self == other or isinstance(other, BinaryRR)

    def profile_at_most(self, other: Family) -> bool:
        """One-bit Duchi's shuffled profile is at most binary RR's (docs/theory.md 6.3)."""
        return self == other or isinstance(other, BinaryRR)

    @classmethod
    def describes(cls, family: Family) -> bool:
        """Binary RR is one-bit Duchi with inputs +-1."""
        return isinstance(family, (cls, BinaryRR))

    def _clone_mass(self, a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
        return 2.0 * special.expit(-b)

    def _variation_ratio(self, eps0: float) -> VariationRatio:
        return vr_general(eps0)

    def blanket_cases(self, eps: float, group: VictimRange,
                      users: UserClasses) -> list[BlanketCase]:
        """Binary RR's blanket: every report of a user is +-1 with probability at least
        1 / (1 + e^{eps_j}) each, and the victim's bound is jointly convex in its pair of
        report laws, which lie between binary RR's (inputs -1 and +1), so that pair is the
        worst (docs/theory.md 15.4)."""
        return binary_blanket(eps, group, users)

    def window_configs(self, eps_v: float, delta_v: float) -> list[WindowConfig]:
        # reports -1 / +1; the victim at -1 / +1, the others at -1 or 0
        return grid(-1.0, 1.0, (-1.0, 0.0), [Window("values")], WEIGHTS_BINARY)

    def cell_masses(self, x: float, eps: NDArray[np.float64], delta: NDArray[np.float64],
                    window: Window) -> tuple[NDArray[np.float64], ...]:
        if x == 0.0:  # input 0: a fair coin
            zero = np.zeros_like(eps)
            half = np.full_like(eps, 0.5)
            return half, zero, half.copy(), zero, zero, zero
        return binary_cell_masses(x > 0, eps)  # |x| = 1: binary randomized response
