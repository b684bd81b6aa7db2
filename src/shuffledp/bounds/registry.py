"""Registry of named bounds.

>>> from shuffledp.bounds import get_bound
>>> get_bound("gdp").info.kind
'approximate'
>>> get_bound("nope")
Traceback (most recent call last):
...
ValueError: unknown bound 'nope'; known bounds: ...

A new bound is one module that builds a :class:`~shuffledp.bounds.base.Bound` and calls
:func:`register_bound`, plus one import line in ``shuffledp/bounds/__init__.py``.
"""

from __future__ import annotations

from shuffledp.bounds.base import Bound
from shuffledp.errors import short_repr

__all__ = ["register_bound", "unregister_bound", "get_bound", "list_bounds",
           "unknown_bound_message"]

_REGISTRY: dict[str, Bound] = {}


def register_bound(bound: Bound, *, replace: bool = False) -> Bound:
    """Add ``bound`` under ``bound.info.name``; refuses to overwrite unless ``replace``."""
    if not isinstance(bound, Bound):
        raise TypeError(f"bound must be a Bound, got {type(bound).__name__}")
    name = bound.info.name
    if name in _REGISTRY and not replace:
        raise ValueError(f"a bound named {name!r} is already registered")
    _REGISTRY[name] = bound
    return bound


def _check_name(name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"bound name must be a str, got {type(name).__name__} {short_repr(name)}")
    if name not in _REGISTRY:
        raise ValueError(unknown_bound_message(name))
    return name


#: Longest message for an unknown bound name (the list of names is cut to fit).
_MESSAGE_LIMIT = 280


def unknown_bound_message(name: object) -> str:
    """``unknown bound 'x'; known bounds: a, b, ...``: the closest names first, the list cut
    to keep the message short however many bounds are registered.

    >>> unknown_bound_message("clone")[:48]
    "unknown bound 'clone'; known bounds: clones, ..."
    """
    import difflib

    names = list_bounds()
    text = name if isinstance(name, str) else ""
    close = difflib.get_close_matches(text, names, n=3, cutoff=0.6)
    ordered = close + [m for m in names if m not in close]
    head = f"unknown bound {short_repr(name, limit=32)}; known bounds: "
    tail = f" ... ({len(names)} in all: shuffledp.list_bounds())"
    shown: list[str] = []
    for m in ordered:
        if len(head) + len(", ".join([*shown, m])) + len(tail) > _MESSAGE_LIMIT:
            return head + ", ".join(shown) + tail
        shown.append(m)
    return head + ", ".join(shown)


def unregister_bound(name: str) -> None:
    """Remove a bound (used by tests that register toy bounds)."""
    del _REGISTRY[_check_name(name)]


def get_bound(name: str) -> Bound:
    """The bound registered as ``name``; ``ValueError`` listing the known names otherwise."""
    return _REGISTRY[_check_name(name)]


_KIND_ORDER = {"approximate": 0, "upper": 1, "lower": 2}


def list_bounds() -> list[str]:
    """Names of all registered bounds: approximations first, then rigorous upper bounds,
    then exact lower bounds; registration order within each kind."""
    names = list(_REGISTRY)
    return sorted(names, key=lambda m: (_KIND_ORDER[_REGISTRY[m].info.kind], names.index(m)))
