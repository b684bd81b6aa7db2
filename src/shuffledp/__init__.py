"""shuffledp: privacy amplification by shuffling with personalized local differential privacy.

The library is pure: no file I/O (except the adapter :mod:`shuffledp.io`, used by the CLI),
no plotting, no printing, no global state beyond the bound registry.
"""

from __future__ import annotations

from shuffledp.bounds import BoundResult, get_bound, list_bounds, register_bound
from shuffledp.budgets import BudgetProfile, PrivacyTarget
from shuffledp.caching import clear_caches
from shuffledp.errors import ParameterRegimeError
from shuffledp.gdp import compose_gdp, gdp_delta, gdp_eps

__version__ = "0.1.0"

__all__ = [
    "BudgetProfile",
    "PrivacyTarget",
    "ParameterRegimeError",
    "BoundResult",
    "get_bound",
    "list_bounds",
    "register_bound",
    "gdp_delta",
    "gdp_eps",
    "compose_gdp",
    "clear_caches",
    "__version__",
]
