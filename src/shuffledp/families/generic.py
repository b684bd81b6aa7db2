"""An arbitrary eps-LDP randomizer per budget (family ``any``).

The family of every protocol in which the users with budget eps run one eps-LDP randomizer,
unrelated across budgets.  Within a budget the clone mass is FMT21's e^{-eps} (Feldman,
McMillan, Talwar, FOCS 2021, Lemma 3.3); across budgets nothing is known, so 0.  It includes
every pure family (an exact curve of any pure randomizer is a lower bound for it).
Variation-ratio row: the general one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from shuffledp.families.base import Family, VariationRatio, vr_general
from shuffledp.families.registry import register_family

__all__ = ["AnyLDP"]


@register_family
@dataclass(frozen=True)
class AnyLDP(Family):
    """An arbitrary eps-LDP randomizer per budget (module docstring).

    >>> from shuffledp.families import get_family
    >>> AnyLDP().includes(get_family("laplace")), AnyLDP().includes(get_family("gaussian"))
    (True, False)
    """

    name: ClassVar[str] = "any"
    title: ClassVar[str] = "an arbitrary eps-LDP randomizer per budget"
    victim_order: ClassVar[str] = "equal_only"
    aware: ClassVar[bool] = True

    def includes(self, other: Family) -> bool:
        """Every pure family's protocols are among this family's."""
        return self == other or other.pure

    @classmethod
    def describes(cls, family: Family) -> bool:
        """A statement for an arbitrary eps-LDP randomizer speaks about every family."""
        return True

    def _clone_mass(self, a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.where(a == b, np.exp(-b), 0.0)

    def _variation_ratio(self, eps0: float) -> VariationRatio:
        return vr_general(eps0)
