"""Modules imported on first use (so that ``shuffledp list`` and other light CLI calls do not
pay for scipy's import, about 0.3 to 0.7 s).

``special = lazy_module("scipy.special")`` behaves like ``from scipy import special`` except
that the import happens at the first attribute access (``special.expit``); every later access
is the module's own attribute.

>>> m = lazy_module("math")
>>> m.sqrt(4.0)
2.0
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["lazy_module"]


class _LazyModule:
    __slots__ = ("_name", "_module")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        module = self._module
        if module is None:
            module = importlib.import_module(self._name)
            self._module = module
        return getattr(module, attr)

    def __repr__(self) -> str:
        state = "loaded" if self._module is not None else "not loaded yet"
        return f"<lazy module {self._name!r} ({state})>"


def lazy_module(name: str) -> Any:
    """A stand-in for the module ``name`` that imports it at first attribute access."""
    return _LazyModule(name)
