"""The d-dimensional Gaussian randomizer of SGD (family ``gaussian_l2``; :mod:`shuffledp.sgd`).

User j adds N(0, sigma_j^2 I_d) to its clipped gradient, sigma_j the analytic calibration of
(eps_j, delta_j) at L2 sensitivity 2C (Balle & Wang, ICML 2018).  Approximate LDP; no mixture
form is established for it, so no clone-based bound covers it (docs/theory.md 6.8 and 14;
the SGD accounting treats it through Lemma 10).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from shuffledp.families.base import Family
from shuffledp.families.registry import register_family

__all__ = ["GaussianL2"]


@register_family
@dataclass(frozen=True)
class GaussianL2(Family):
    """The Gaussian randomizer of SGD (module docstring).

    >>> GaussianL2().pure, GaussianL2().variation_ratio(1.0) is None
    (False, True)
    """

    name: ClassVar[str] = "gaussian_l2"
    title: ClassVar[str] = ("Gaussian randomizer of SGD, L2 ball in d dimensions "
                            "(approximate LDP)")
    pure: ClassVar[bool] = False
    victim_order: ClassVar[str] = "zero"
