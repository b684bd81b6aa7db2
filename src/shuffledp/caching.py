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

import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = [
    "CacheEntry",
    "cache_sizes",
    "clear_caches",
    "frozen_array",
    "frozen_value",
    "lru_by_arrays",
    "lru_get",
    "lru_put",
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
    """Empty every registered cache, so the next evaluation of any bound starts cold.  Safe
    while other threads evaluate bounds: the least-recently-used caches are read and written
    under the same lock (:func:`lru_get`, :func:`lru_put`)."""
    with _LOCK:
        for entry in registered_caches().values():
            entry.clear()


#: One lock for every least-recently-used cache's look-ups, insertions, evictions and for
#: :func:`clear_caches` (each held for a few dictionary operations only; the values are
#: computed outside it).
_LOCK = threading.RLock()


def lru_get(cache: OrderedDict, key: Any) -> Any:
    """``cache[key]`` (marked most recently used) or ``None`` on a miss; never a ``KeyError``
    when another thread clears or evicts meanwhile.

    >>> c = OrderedDict()
    >>> lru_get(c, "a") is None, lru_put(c, "a", 1, size=1), lru_get(c, "a")
    (True, 1, 1)
    """
    with _LOCK:
        hit = cache.get(key)
        if hit is not None:
            cache.move_to_end(key)
        return hit


def lru_put(cache: OrderedDict, key: Any, value: Any, size: int) -> Any:
    """Store ``value`` (its arrays made immutable: :func:`frozen_value`) as the most recently
    used entry, evict beyond ``size`` entries; returns the stored value."""
    value = frozen_value(value)
    with _LOCK:
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > size:
            cache.popitem(last=False)
    return value


def lru_by_arrays(cache: OrderedDict, arrays: tuple, key: Any, compute: Callable[[], Any],
                  size: int) -> Any:
    """``compute()`` cached under ``key`` and the identities of ``arrays``, numpy arrays that
    nobody can write to (a profile's or a plan's :func:`frozen_value` arrays): the entry
    holds the arrays, so their identities cannot be reused while it lives, and an entry is
    only taken for the very same objects.  Keying by identity costs nothing where hashing the
    arrays' bytes would cost as much as the computation; arrays that can be written to are
    never cached (their content could change under the same identity).

    >>> import numpy as np
    >>> c = OrderedDict(); x = frozen_array(np.arange(3.0))
    >>> lru_by_arrays(c, (x,), "sum", lambda: float(x.sum()), 4), len(c)
    (3.0, 1)
    >>> y = np.arange(3.0)  # writeable: computed, not cached
    >>> lru_by_arrays(c, (y,), "sum", lambda: float(y.sum()), 4), len(c)
    (3.0, 1)
    """
    if any(a.flags.writeable for a in arrays):
        return compute()
    full = (tuple(id(a) for a in arrays), key)
    got = lru_get(cache, full)
    if got is not None and all(x is y for x, y in zip(got[0], arrays, strict=True)):
        return got[1]
    return lru_put(cache, full, (tuple(arrays), compute()), size)[1]


def frozen_array(a):
    """A read-only copy of ``a`` whose memory nobody can make writeable again: it lives in an
    immutable ``bytes`` buffer, so ``setflags(write=True)`` raises on it and on its views, and
    its base has no flags to set (a profile's arrays, and the caches keyed by them, cannot be
    changed behind their backs).

    >>> import numpy as np
    >>> x = frozen_array(np.arange(3.0))
    >>> x.setflags(write=True)
    Traceback (most recent call last):
    ...
    ValueError: cannot set WRITEABLE flag to True of this array
    """
    import numpy as np

    a = np.ascontiguousarray(a)
    out = np.frombuffer(a.tobytes(), dtype=a.dtype)
    return out if a.ndim == 1 else out.reshape(a.shape)


def frozen_value(value: Any, depth: int = 3) -> Any:
    """``value`` with its numpy arrays replaced by copies in immutable buffers (nobody can make
    them writeable again, so a caller cannot change a cached answer for every later caller):
    an array, or the arrays among the items of a tuple or list and the fields of a dataclass,
    ``depth`` levels down."""
    import numpy as np

    if isinstance(value, np.ndarray):
        base = value
        while isinstance(base, np.ndarray) and not base.flags.writeable:
            base = base.base
        if isinstance(base, bytes):
            return value  # already in an immutable buffer
        return frozen_array(value)
    if depth <= 0:
        return value
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(frozen_value(v, depth - 1) for v in value)
    if isinstance(value, tuple):  # a named tuple
        return type(value)(*(frozen_value(v, depth - 1) for v in value))
    if isinstance(value, list):
        return [frozen_value(v, depth - 1) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            old = getattr(value, f.name)
            new = frozen_value(old, depth - 1)
            if new is not old:
                object.__setattr__(value, f.name, new)
        return value
    return value
