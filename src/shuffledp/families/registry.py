"""The registry of randomizer families: :func:`register_family`, :func:`get_family`.

Specs are strings: the family's name, with ``:k`` for the families with categories
(``"binary_rr"``, ``"krr:10"``, ``"oue:100"``, ``"laplace"``, ...; ``"krr:2"`` is
``"binary_rr"``).  :func:`get_family` also accepts a family object, or a mechanism (class or
instance) that declares its family with a class attribute ``family`` (the mechanisms of
:mod:`shuffledp.mechanisms` and :mod:`shuffledp.sgd`; frequency oracles give their ``d``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from shuffledp.errors import short_repr
from shuffledp.families.base import Family

__all__ = ["register_family", "get_family", "family_names", "family_class", "spec_includes"]

_FAMILIES: dict[str, type[Family]] = {}
F = TypeVar("F", bound=type)


def register_family(cls: F) -> F:
    """Class decorator: register a :class:`~shuffledp.families.base.Family` subclass under
    its ``name`` (``ValueError`` for a name taken by another class)."""
    if not (isinstance(cls, type) and issubclass(cls, Family)) or not cls.name:
        raise TypeError(f"register_family takes a Family subclass with a name, got {cls!r}")
    other = _FAMILIES.get(cls.name)
    if other is not None and other is not cls:
        raise ValueError(f"randomizer family {cls.name!r} is already registered "
                         f"({other.__module__}.{other.__qualname__})")
    _FAMILIES[cls.name] = cls
    return cls


def family_names(where: Callable[[type[Family]], bool] | None = None) -> list[str]:
    """The registered names (sorted), optionally only those whose class satisfies ``where``.

    >>> family_names(lambda f: f.cuts_tails)
    ['gaussian', 'gaussian_shared', 'laplace']
    """
    return sorted(n for n, c in _FAMILIES.items() if where is None or where(c))


def family_class(name: str) -> type[Family]:
    """The family class registered as ``name`` (``ValueError`` listing the names)."""
    cls = _FAMILIES.get(name)
    if cls is None:
        raise ValueError(f"randomizer family must be one of {family_names()}, got "
                         f"{short_repr(name)}")
    return cls


def spec_includes(spec: str, family: Family) -> bool:
    """Whether the family named by ``spec`` includes ``family`` (a bare name of a family with
    categories, such as ``"krr"``, stands for every k).

    >>> spec_includes("krr", get_family("krr:10")), spec_includes("any", get_family("laplace"))
    (True, True)
    """
    name, sep, _ = spec.strip().lower().partition(":")
    cls = family_class(name)
    if cls.needs_k and not sep:
        return isinstance(family, cls)
    return get_family(spec).includes(family)


def _make(name: str, k: int | None) -> Family:
    cls = family_class(name)
    if name == "krr" and k == 2:  # two categories: binary randomized response
        return family_class("binary_rr")()
    return cls(k) if cls.needs_k else cls()


def _parse(spec: str) -> Family:
    text = spec.strip().lower()
    name, sep, arg = text.partition(":")
    if name not in _FAMILIES:
        raise ValueError(
            f"randomizer must be one of {family_names()} (with ':k' for krr and oue, e.g. "
            f"'krr:10'), got {short_repr(spec)}"
        )
    if _FAMILIES[name].needs_k:
        if not sep:
            raise ValueError(f"randomizer {name!r} needs its number of categories, e.g. "
                             f"'{name}:10', got {short_repr(spec)}")
        if not re.fullmatch(r"[0-9]+", arg):  # ASCII digits: no '1_0', '+5', ' 7' or '1e3'
            raise ValueError(f"randomizer {short_repr(spec)}: k must be an integer written "
                             "in digits 0-9")
        if len(arg.lstrip("0")) > 30:  # far beyond every k_max, short of int()'s digit limit
            raise ValueError(f"randomizer {short_repr(spec)}: k (categories) must be at most "
                             "1e+12")
        return _make(name, int(arg))
    if sep:
        raise ValueError(f"randomizer {name!r} takes no ':k', got {short_repr(spec)}")
    return _make(name, None)


def get_family(obj: Any) -> Family:
    """The :class:`~shuffledp.families.base.Family` of a spec string, a family, or a
    mechanism class or instance that declares its family (class attribute ``family``).

    >>> get_family("KRR:2").spec
    'binary_rr'
    >>> get_family("krr")
    Traceback (most recent call last):
    ...
    ValueError: randomizer 'krr' needs its number of categories, e.g. 'krr:10', got 'krr'
    """
    if isinstance(obj, Family):
        return obj
    if isinstance(obj, str):
        return _parse(obj)
    cls = obj if isinstance(obj, type) else type(obj)
    name = getattr(cls, "family", None)
    if not isinstance(name, str) or name not in _FAMILIES:
        raise TypeError(
            "randomizer must be a spec string (e.g. 'krr:10'), a randomizer family or a "
            "mechanism of shuffledp.mechanisms / shuffledp.sgd, got "
            f"{type(obj).__name__} {short_repr(obj)}"
        )
    if _FAMILIES[name].needs_k:
        d = getattr(obj, "d", None)
        if isinstance(obj, type) or d is None:
            raise ValueError(
                f"{cls.__name__} needs its number of categories: pass an instance or a spec "
                f"such as '{name}:10'"
            )
        return _make(name, int(d))
    return _make(name, None)
