"""Optimal local hashing with hash range g (Wang, Blocki, Li, Jha, USENIX Security 2017,
"Locally Differentially Private Protocols for Frequency Estimation", Section 4.4), family
``olh:g``.

User j draws a hash function H uniformly from a family of functions from the input domain to
{0, ..., g - 1}, and reports ``(H, y)`` with y = H(x) with probability e^{eps_j} /
(e^{eps_j} + g - 1) and each other value with probability 1 / (e^{eps_j} + g - 1) (k-RR on the
hashed value; OLH proper takes g = e^eps + 1, here g is the family's parameter, shared by all
users).  Clone mass against a victim with budget eps_v (docs/theory.md 6.10):

    r_j = (e^{eps_v} + g - 1) / (e^{eps_v} (e^{eps_j} + g - 1)),

non-increasing in eps_v, and e^{-eps} with identical budgets (hash collisions of the victim's
two inputs make OLH no better than a generic eps-LDP randomizer).  Variation-ratio row (Wang
et al., PVLDB 2024, Section 4, local hashing with range l = g): beta = (e^eps0 - 1) /
(e^eps0 + g - 1), alpha = 1 / (e^eps0 + g - 1), gamma = (g - 2) alpha.

Code names -> paper: ``k`` = g (the hash range), ``eps`` = epsilon.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from shuffledp.families.base import WANG, Family, VariationRatio
from shuffledp.families.registry import register_family

__all__ = ["OLH"]


@register_family
@dataclass(frozen=True)
class OLH(Family):
    """Local hashing with hash range ``k`` = g (module docstring).

    >>> f = OLH(4)
    >>> f.spec, round(float(f.clone_mass(1.0, 1.0)), 12) == round(math.exp(-1.0), 12)
    ('olh:4', True)
    """

    name: ClassVar[str] = "olh"
    title: ClassVar[str] = "local hashing (OLH) with hash range g"
    victim_order: ClassVar[str] = "decreasing"
    needs_k: ClassVar[bool] = True
    aware: ClassVar[bool] = True
    # at a fixed victim the log-mass -log(e^{eps_j} + g - 1) decreases in the user's budget:
    # its minimum over a range of users is at an end (docs/theory.md 4.1, "Bins")
    binnable: ClassVar[bool] = True

    def _clone_mass(self, a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
        g = float(self.k)  # type: ignore[arg-type]
        # (e^a + g - 1) / (e^a (e^b + g - 1)) = (1 + (g - 1) e^{-a}) / (e^b + g - 1)
        return np.minimum((1.0 + (g - 1.0) * np.exp(-a)) / (np.exp(b) + g - 1.0), 1.0)

    def _variation_ratio(self, eps0: float) -> VariationRatio:
        g = self.k
        assert g is not None
        a = math.exp(-np.logaddexp(eps0, math.log(g - 1.0)))  # 1 / (e^eps0 + g - 1)
        return VariationRatio(eps0, eps0, math.expm1(eps0) * a, a, (g - 2.0) * a,
                              WANG + ", local hashing with range l")
