"""Randomizer families as objects: one module per family, a registry by spec string.

A shuffled protocol with personalized budgets is described by a family F (which mechanism
every user runs) and a :class:`~shuffledp.budgets.BudgetProfile`.  Each family module holds
everything the project knows about its family (clone masses, window masses, tail cuts and
pool masses for the mechanism-aware reduction, its variation-ratio row, whether it is pure,
how its mass varies with the victim's budget); bounds ask the family object
(:class:`~shuffledp.families.base.Family`).  Clone masses, derived per family in
docs/theory.md section 6 and checked numerically in tests/families/:

===============  ============================================================  =====================
family           r(eps_v, eps_j)                                               in eps_v, fixed eps_j
===============  ============================================================  =====================
binary_rr        2 / (1 + e^{eps_j})                                           constant
krr:k            2 (e^{eps_v} + k - 1) / ((e^{eps_j} + k - 1)(e^{eps_v} + 1))  non-increasing
duchi            2 / (1 + e^{eps_j}) (one-bit Duchi = binary RR on a           constant
                 randomized rounding: its profile is at most binary RR's)
laplace          (eps_j / eps_v) e^{-eps_j} if eps_j <= eps_v, else 0          0 below eps_j, then
                                                                               non-increasing
laplace_shared   e^{-(eps_v + eps_j)/2} (one noise scale for all budgets:      non-increasing
                 every user has the victim's tails)
piecewise        p_low(eps_j) / p_high(eps_v) if eps_j <= eps_v, else 0        0 below eps_j, then
                                                                               non-increasing
oue:d            minimum over output patterns (:func:`~shuffledp.families.     not monotone
                 oue.oue_box`)
duchi_l2         e^{-eps} if eps_v = eps_j, else 0 (disjoint radii)            equal budgets only
gaussian         0 between pure pairs (not pure LDP); its mixture form         --
                 and per-victim masses: clones' ``mechanism`` option
gaussian_shared  0 between pure pairs; per-victim masses with a tail cut       --
                 (one noise scale for all budgets: Lemma 17)
gaussian_l2      0 (the d-dimensional Gaussian of SGD; no mixture form         --
                 established)
any              e^{-eps} if eps_v = eps_j, else 0 (one arbitrary              equal budgets only
                 eps-LDP randomizer per budget, unrelated across budgets)
===============  ============================================================  =====================

Adding a family: one module in this package with a :class:`~shuffledp.families.base.Family`
subclass decorated with :func:`register_family` (every module of the package is imported
here, so it registers itself), and its tests (docs/adding_a_family.md).

>>> import math
>>> r = get_family("krr:3")
>>> r.spec, r.pure
('krr:3', True)
>>> round(float(r.clone_mass(1.0, 1.0)), 6) == round(2 / (1 + math.e), 6)
True
>>> domination(get_family("binary_rr"), eps=[0.5, 2.0, 4.0], required=[0.03] * 3).holds
True
"""

from __future__ import annotations

import importlib
import pkgutil

from shuffledp.families.base import (
    MAX_DISTINCT_GENERAL,
    Family,
    VariationRatio,
)
from shuffledp.families.binary_rr import BinaryRR
from shuffledp.families.domination import Domination, budget_tiers, domination
from shuffledp.families.duchi import Duchi
from shuffledp.families.duchi_l2 import DuchiL2
from shuffledp.families.gaussian import Gaussian
from shuffledp.families.gaussian_l2 import GaussianL2
from shuffledp.families.generic import AnyLDP
from shuffledp.families.krr import KRR
from shuffledp.families.laplace import Laplace
from shuffledp.families.oue import OUE
from shuffledp.families.piecewise import Piecewise
from shuffledp.families.registry import family_class, family_names, get_family, register_family

__all__ = [
    "Family",
    "get_family",
    "register_family",
    "family_names",
    "family_class",
    "VariationRatio",
    "Domination",
    "domination",
    "budget_tiers",
    "MAX_DISTINCT_GENERAL",
    "BinaryRR",
    "KRR",
    "Duchi",
    "Laplace",
    "Piecewise",
    "OUE",
    "DuchiL2",
    "Gaussian",
    "GaussianL2",
    "AnyLDP",
]

#: The package's modules that define no family.
_INFRASTRUCTURE = frozenset({"base", "registry", "domination", "windows", "blanket"})
# every other module of the package defines (and registers) a family: import them all
for _module in pkgutil.iter_modules(__path__):
    if _module.name not in _INFRASTRUCTURE and not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
