"""Registered bounds on the central privacy of shuffled (personalized) LDP.

Importing this package registers every bound module listed below.  A new bound is one module
calling :func:`register_bound` plus one import line here.
"""

from __future__ import annotations

from shuffledp.bounds import (
    clones,  # noqa: F401  (registers "clones")
    gdp_paper,  # noqa: F401  (registers "gdp")
    rr_exact,  # noqa: F401  (registers "rr_exact")
)
from shuffledp.bounds.base import KIND_LABELS, Bound, BoundInfo, BoundResult, Kind
from shuffledp.bounds.registry import get_bound, list_bounds, register_bound, unregister_bound


def clear_caches() -> None:
    """Empty every bound's internal cache, so the next evaluation starts cold."""
    clones.clear_cache()


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
