"""One registry of the library's caches: every module-level cache registers here, and
:func:`clear_caches` (exported as ``shuffledp.clear_caches``) empties all of them.

Why: a few bounds keep per-profile work between calls (the clone-count pmfs of ``clones``,
the prepared pairs of ``rr_exact``, the histogram laws of ``krr_exact``, the budget tiers of
:mod:`shuffledp.families`, ...).  The runtime experiment promises cold timings
(docs/workflow.md, "Reproducing the figures": ``runtime``), so it must be able to empty every one of
them, and a test (tests/test_caches.py) checks that every module-level cache of the package is
registered.

A module registers its cache where it defines it, with one line::

    _CACHE: OrderedDict[tuple, list] = OrderedDict()
    register_mapping("rr_exact.pairs", _CACHE)

(:func:`register_mapping` for a dict, ``OrderedDict``, ``WeakKeyDictionary``; any other cache
with :func:`register_cache` and its own clear and size functions).  This module imports
nothing from the package, so any module may import it.

>>> memo = {}
>>> _ = register_mapping("doctest.memo", memo)
>>> memo["k"] = 1
>>> cache_sizes()["doctest.memo"]
1
>>> clear_caches()
>>> memo
{}
>>> unregister_cache("doctest.memo")
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = [
    "CacheEntry",
    "cache_sizes",
    "clear_caches",
    "register_cache",
    "register_mapping",
    "registered_caches",
    "unregister_cache",
]

M = TypeVar("M", bound=MutableMapping)


@dataclass(frozen=True)
class CacheEntry:
    """A registered cache: ``name`` (``"module.what"``), ``clear()`` empties it, ``size()``
    (or ``None``) counts its entries, ``target`` is the cached object itself (the mapping or
    function; used by the audit test)."""

    name: str
    clear: Callable[[], None]
    size: Callable[[], int] | None = None
    target: Any = None


_CACHES: dict[str, CacheEntry] = {}

def _check_name(name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__} {name!r}")
    if not name or name != name.strip():
        raise ValueError(f"name must be a non-empty str without surrounding spaces, got "
                         f"{name!r}")
    return name


def register_cache(
    name: str,
    clear: Callable[[], None],
    *,
    size: Callable[[], int] | None = None,
    target: Any = None,
) -> CacheEntry:
    """Register a cache under ``name`` (re-registering a name replaces the entry).

    >>> e = register_cache("doctest.fn", lambda: None, size=lambda: 0)
    >>> e.name, "doctest.fn" in registered_caches()
    ('doctest.fn', True)
    >>> unregister_cache("doctest.fn")
    >>> register_cache("doctest.bad", clear="no")
    Traceback (most recent call last):
    ...
    TypeError: clear must be callable, got str 'no'
    """
    _check_name(name)
    if not callable(clear):
        raise TypeError(f"clear must be callable, got {type(clear).__name__} {clear!r}")
    if size is not None and not callable(size):
        raise TypeError(f"size must be callable or None, got {type(size).__name__} {size!r}")
    entry = CacheEntry(name, clear, size, target)
    _CACHES[name] = entry
    return entry


def register_mapping(name: str, mapping: M) -> M:
    """Register a mapping used as a cache (cleared with ``.clear()``, sized with ``len``);
    returns the mapping.

    >>> register_mapping("doctest.bad", [1, 2])
    Traceback (most recent call last):
    ...
    TypeError: mapping must be a mutable mapping (dict, OrderedDict, WeakKeyDictionary), got list
    """
    if not isinstance(mapping, MutableMapping):
        raise TypeError("mapping must be a mutable mapping (dict, OrderedDict, "
                        f"WeakKeyDictionary), got {type(mapping).__name__}")
    register_cache(name, mapping.clear, size=mapping.__len__, target=mapping)
    return mapping


def unregister_cache(name: str) -> None:
    """Remove a registered cache (for tests); ``ValueError`` for an unknown name."""
    _check_name(name)
    if name not in _CACHES:
        raise ValueError(f"no cache registered as {name!r}")
    del _CACHES[name]


def registered_caches() -> dict[str, CacheEntry]:
    """Every registered cache by name (of the modules imported so far)."""
    return dict(_CACHES)


def cache_sizes() -> dict[str, int | None]:
    """Number of entries of every registered cache (``None`` when it has no size)."""
    return {name: (e.size() if e.size is not None else None)
            for name, e in registered_caches().items()}


def clear_caches() -> None:
    """Empty every registered cache, so the next evaluation of any bound starts cold."""
    for entry in registered_caches().values():
        entry.clear()
