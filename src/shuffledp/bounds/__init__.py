"""Registered bounds on the central privacy of shuffled (personalized) LDP.

Importing this package registers every bound module listed below.  A new bound is one module
calling :func:`register_bound` plus one import line here.
"""

from __future__ import annotations

from shuffledp.bounds import (
    bbgn19,  # noqa: F401  (registers "blanket_hoeffding", "blanket_bennett")
    blanket,  # noqa: F401  (registers "blanket")
    clones,  # noqa: F401  (registers "clones")
    efmrtt19,  # noqa: F401  (registers "efmrtt19")
    fmt21,  # noqa: F401  (registers "fmt21_closed", "fmt21_numerical")
    fmt23,  # noqa: F401  (registers "fmt23_closed", "fmt23_numerical")
    gdp_paper,  # noqa: F401  (registers "gdp")
    krr_exact,  # noqa: F401  (registers "krr_exact")
    liu23,  # noqa: F401  (registers "liu23_personalized")
    liu24,  # noqa: F401  (registers "liu24")
    lr_sum,  # noqa: F401  (registers "lr_sum_lower")
    rr_exact,  # noqa: F401  (registers "rr_exact")
    rr_upper,  # noqa: F401  (registers "rr_upper")
    tier_sum,  # noqa: F401  (registers "tier_sum_lower")
    tightest,  # noqa: F401  (registers "tightest"; after clones and blanket)
    variation_ratio,  # noqa: F401  (registers "variation_ratio")
    window,  # noqa: F401  (registers "window_lower")
)
from shuffledp.bounds.base import KIND_LABELS, Bound, BoundInfo, BoundResult, Kind
from shuffledp.bounds.registry import get_bound, list_bounds, register_bound, unregister_bound
from shuffledp.caching import clear_caches  # every registered cache (shuffledp.caching)

__all__ = [
    "clear_caches",
    "Bound",
    "BoundInfo",
    "BoundResult",
    "Kind",
    "KIND_LABELS",
    "get_bound",
    "list_bounds",
    "register_bound",
    "unregister_bound",
]
