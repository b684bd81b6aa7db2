"""Duchi et al.'s L2-ball randomizer of SGD (family ``duchi_l2``; :mod:`shuffledp.sgd`).

User j reports a vector on the sphere of radius B(eps_j) in d dimensions (Duchi, Jordan,
Wainwright, JASA 2018, Section 4.2.3).  Reports of different budgets lie on spheres of
different radii, so a user hides a victim only when their budgets are equal: then the clone
mass of one eps-LDP randomizer, e^{-eps} (FMT21), else 0 (docs/theory.md 6.7).
Variation-ratio row: the general one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from shuffledp.families.base import Family, VariationRatio, vr_general
from shuffledp.families.registry import register_family

__all__ = ["DuchiL2"]


@register_family
@dataclass(frozen=True)
class DuchiL2(Family):
    """The L2-ball Duchi randomizer of SGD (module docstring).

    >>> f = DuchiL2()
    >>> float(f.clone_mass(1.0, 1.0)) > 0.0, float(f.clone_mass(1.0, 2.0))
    (True, 0.0)
    """

    name: ClassVar[str] = "duchi_l2"
    title: ClassVar[str] = "Duchi et al.'s L2-ball randomizer (SGD)"
    victim_order: ClassVar[str] = "equal_only"
    aware: ClassVar[bool] = True

    def _clone_mass(self, a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.where(a == b, np.exp(-b), 0.0)

    def _variation_ratio(self, eps0: float) -> VariationRatio:
        return vr_general(eps0)
