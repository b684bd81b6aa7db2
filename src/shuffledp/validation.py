"""Argument checkers shared by every public entry point.

Public entry points check their arguments before doing any work, with these helpers: a wrong
*type* raises ``TypeError`` naming the parameter and the type (``bool`` is not a number; numpy
scalars are), a bad *value* raises ``ValueError`` naming the parameter and its value, shortened
with :func:`shuffledp.errors.short_repr`.  The accepted range is :mod:`shuffledp.limits`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray

from shuffledp.errors import short_repr
from shuffledp.limits import (
    DELTA_MAX,
    DELTA_MIN,
    EPS_LOCAL_MAX,
    LOCAL_EPS_RULE,
    N_MAX,
    N_MAX_ARRAYS,
)

__all__ = [
    "describe",
    "shown",
    "check_real",
    "check_int",
    "check_bool",
    "check_str",
    "check_rng",
    "as_real_array",
    "check_array_range",
    "check_target_delta",
    "check_target_eps",
    "check_one_target",
    "check_local_eps",
    "check_local_delta",
    "check_eps_array",
    "check_delta_array",
    "check_eps_range",
    "check_n",
    "check_n_drawn",
    "check_groups",
    "NOT_ARRAYS",
]


def describe(value: object) -> str:
    """``"<type name> <short repr>"``, how a rejected argument is echoed in a message.

    >>> describe("1.0")
    "str '1.0'"
    """
    return f"{type(value).__name__} {short_repr(value)}"


def _is_real(value: object) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


def shown(value: object) -> str:
    """A rejected value in a message: floats as ``repr(float)``, anything else shortened."""
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (int, np.integer)):
        return short_repr(int(value))
    return short_repr(value)


def _rule(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"finite and {'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"finite and {'<' if high_open else '<='} {high:g}"
    return "finite"


def _outside(
    x: float, low: float | None, high: float | None, low_open: bool, high_open: bool
) -> bool:
    if not math.isfinite(x):
        return True
    if low is not None and (x <= low if low_open else x < low):
        return True
    return high is not None and (x >= high if high_open else x > high)


def check_real(
    value: object,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    rule: str | None = None,
) -> float:
    """``value`` as a finite float within the given limits.

    ``TypeError`` unless ``value`` is a real number (``bool`` is not; numpy scalars are),
    ``ValueError`` (naming ``name`` and the value) unless it is finite and within
    ``[low, high]`` (``low_open``/``high_open``: strict).  ``rule`` replaces the generated
    wording of the accepted range.

    >>> check_real(2, "std", low=0)
    2.0
    >>> check_real(float("nan"), "std", low=0)
    Traceback (most recent call last):
    ...
    ValueError: std must be finite and >= 0, got nan
    >>> check_real(True, "std")
    Traceback (most recent call last):
    ...
    TypeError: std must be a real number, got bool True
    """
    if not _is_real(value):
        raise TypeError(f"{name} must be a real number, got {describe(value)}")
    try:
        x = float(value)  # type: ignore[arg-type]
    except OverflowError:  # an int beyond the float range
        x = math.inf
    if _outside(x, low, high, low_open, high_open):
        text = rule or _rule(low, high, low_open, high_open)
        raise ValueError(f"{name} must be {text}, got {shown(value)}")
    return x


def check_int(
    value: object,
    name: str,
    *,
    low: int | None = None,
    high: int | None = None,
    what: str | None = None,
) -> int:
    """``value`` as an ``int`` in ``[low, high]``; ``TypeError`` unless it is an integer
    (``bool`` is not; numpy integers are).  ``what`` is how the value is named in the range
    message (default ``name``).

    >>> check_int(3, "d", low=2)
    3
    >>> check_int(2.0, "d")
    Traceback (most recent call last):
    ...
    TypeError: d must be an integer, got float 2.0
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {describe(value)}")
    v = int(value)
    label = what or name
    if low is not None and v < low:
        raise ValueError(f"{label} must be >= {low}, got {short_repr(v)}")
    if high is not None and v > high:
        limit = f"{high:.0e}" if high >= 10**6 else str(high)
        raise ValueError(f"{label} must be <= {limit}, got {short_repr(v)}")
    return v


def check_bool(value: object, name: str) -> bool:
    """``value`` when it is a ``bool`` (or ``numpy.bool_``); ``TypeError`` otherwise."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {describe(value)}")
    return bool(value)


def check_str(value: object, name: str) -> str:
    """``value`` when it is a ``str``; ``TypeError`` otherwise."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {describe(value)}")
    return value


def check_rng(rng: object, name: str = "rng", *, when: str = "") -> np.random.Generator:
    """``rng`` itself when it is a ``numpy.random.Generator``; ``TypeError`` otherwise.

    >>> check_rng(None)
    Traceback (most recent call last):
    ...
    TypeError: rng must be a numpy.random.Generator, got NoneType
    """
    if not isinstance(rng, np.random.Generator):
        cond = f" {when}" if when else ""
        raise TypeError(f"{name} must be a numpy.random.Generator{cond}, got {type(rng).__name__}")
    return rng


NOT_ARRAYS = (str, bytes, bytearray, memoryview, Mapping, set, frozenset)


def as_real_array(values: object, name: str, *, scalar: bool = True) -> NDArray[np.float64]:
    """A float64 copy of ``values``: a real number (if ``scalar``) or an array of them.

    ``TypeError`` naming ``name`` for anything else (``None``, strings, dicts, bool or complex
    or object arrays); ``ValueError`` for a ragged nested sequence.  ``scalar`` only words the
    message: shapes (a scalar where an array is needed) are the caller's ``ValueError``.
    Values are not range checked here (see :func:`check_array_range`).

    >>> as_real_array([1, 2.5], "eps").tolist()
    [1.0, 2.5]
    >>> as_real_array([1.0, None], "eps")
    Traceback (most recent call last):
    ...
    TypeError: eps must be a real number or an array of real numbers, got list [1.0, None]
    """
    what = "a real number or an array of real numbers" if scalar else "an array of real numbers"
    if values is None or isinstance(values, NOT_ARRAYS) or isinstance(values, (bool, np.bool_)):
        raise TypeError(f"{name} must be {what}, got {describe(values)}")
    if isinstance(values, np.ma.MaskedArray):  # np.asarray would drop the mask silently
        raise TypeError(f"{name} must be {what}, got a masked array (drop or fill the masked "
                        "entries first)")
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a rectangular array of real numbers, got {describe(values)}"
        ) from None
    kind = arr.dtype.kind
    if kind == "O":
        if not all(_is_real(v) for v in arr.flat):
            raise TypeError(f"{name} must be {what}, got {describe(values)}")
        try:
            return np.array(arr, dtype=np.float64)
        except OverflowError:
            raise ValueError(
                f"{name} must be finite, got an integer beyond the float range in "
                f"{short_repr(values)}"
            ) from None
    if kind not in "iuf":
        is_arr = isinstance(values, np.ndarray)
        got = f"ndarray of dtype {arr.dtype}" if is_arr else describe(values)
        raise TypeError(f"{name} must be {what}, got {got}")
    return np.array(arr, dtype=np.float64)


def check_array_range(
    arr: NDArray[np.float64],
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    rule: str | None = None,
    index: bool | None = None,
) -> None:
    """``ValueError`` naming the first entry of ``arr`` that is not finite or outside
    ``[low, high]`` (as in :func:`check_real`).  ``index``: show ``name[i] =`` (default: when
    ``arr`` has more than one entry)."""
    bad = ~np.isfinite(arr)
    if low is not None:
        bad |= (arr <= low) if low_open else (arr < low)
    if high is not None:
        bad |= (arr >= high) if high_open else (arr > high)
    if bad.any():
        flat = int(np.flatnonzero(bad)[0])
        pos = np.unravel_index(flat, arr.shape) if arr.ndim > 1 else (flat,)
        show = arr.size > 1 if index is None else index
        where = f"{name}[{', '.join(str(int(p)) for p in pos)}] = " if show else ""
        text = rule or _rule(low, high, low_open, high_open)
        raise ValueError(f"{name} must be {text}, got {where}{float(arr.flat[flat])!r}")


def check_target_delta(delta: object, name: str = "delta") -> float:
    """A central target delta as a float in ``[DELTA_MIN, DELTA_MAX]``.

    >>> check_target_delta(1e-6)
    1e-06
    >>> check_target_delta(0.0)
    Traceback (most recent call last):
    ...
    ValueError: delta must be in [1e-30, 0.99], got 0.0
    >>> check_target_delta("1e-6")
    Traceback (most recent call last):
    ...
    TypeError: delta must be a real number, got str '1e-6'
    """
    return check_real(delta, name, low=DELTA_MIN, high=DELTA_MAX)


def check_one_target(delta: object, eps: object) -> tuple[float | None, float | None]:
    """``(delta, eps)`` checked, exactly one of them given: a target delta (the question is
    eps) or a target eps (the question is delta).

    >>> check_one_target(1e-6, None)
    (1e-06, None)
    """
    if (delta is None) == (eps is None):
        raise ValueError("give exactly one of delta (to get eps) or eps (to get delta)")
    if delta is not None:
        return check_target_delta(delta), None
    return None, check_target_eps(eps)


def check_target_eps(eps: object, name: str = "eps") -> float:
    """A central target eps as a finite float >= 0.

    >>> check_target_eps(800)
    800.0
    >>> check_target_eps(float("inf"))
    Traceback (most recent call last):
    ...
    ValueError: eps must be finite and >= 0, got inf
    """
    return check_real(eps, name, low=0.0)


def check_local_eps(value: object, name: str) -> float:
    """A local budget eps_i: a real number in [0, EPS_LOCAL_MAX]."""
    return check_real(value, name, low=0.0, high=EPS_LOCAL_MAX, rule=LOCAL_EPS_RULE)


def check_local_delta(value: object, name: str) -> float:
    """A local delta_i: a real number in [0, 1)."""
    return check_real(value, name, low=0.0, high=1.0, high_open=True)


def check_n(n: object) -> int:
    """A number of users: an integer in [2, N_MAX]."""
    return check_int(n, "n", low=2, high=N_MAX, what="n (number of users)")


def check_n_drawn(n: object) -> int:
    """``n`` for profiles drawn user by user (per-user arrays): at most N_MAX_ARRAYS."""
    return check_int(n, "n", low=2, high=N_MAX_ARRAYS,
                     what="n (number of users drawn one by one; histograms go to 1e+09)")


def check_eps_array(eps: NDArray[np.float64], name: str = "eps") -> None:
    """Every entry a local budget in [0, EPS_LOCAL_MAX] (``ValueError`` naming the first)."""
    check_array_range(eps, name, low=0.0, high=EPS_LOCAL_MAX, rule=LOCAL_EPS_RULE)


def check_delta_array(delta: NDArray[np.float64], name: str = "delta") -> None:
    """Every entry a local delta in [0, 1) (``ValueError`` naming the first)."""
    check_array_range(delta, name, low=0.0, high=1.0, high_open=True)


def check_groups(groups: object, default_delta: float) -> list[tuple[float, float, float]]:
    """Mixture groups ``(share, eps[, delta])`` as float triples (``default_delta`` filled in)."""
    if groups is None or isinstance(groups, NOT_ARRAYS) or not hasattr(groups, "__len__"):
        raise TypeError(
            f"groups must be a list of (share, eps) or (share, eps, delta) groups, got "
            f"{describe(groups)}"
        )
    if len(groups) == 0:  # type: ignore[arg-type]
        raise ValueError("groups must not be empty")
    out = []
    for i, g in enumerate(groups):  # type: ignore[attr-defined]
        if g is None or isinstance(g, NOT_ARRAYS) or not hasattr(g, "__len__"):
            raise TypeError(
                f"groups[{i}] must be a (share, eps) or (share, eps, delta) sequence, got "
                f"{describe(g)}"
            )
        if len(g) not in (2, 3):
            raise ValueError(
                f"groups[{i}] must have 2 or 3 entries (share, eps[, delta]), got {len(g)}: "
                f"{short_repr(g)}"
            )
        share = check_real(g[0], f"groups[{i}] share", low=0.0, high=1.0)
        eps = check_local_eps(g[1], f"groups[{i}] eps")
        delta = check_local_delta(g[2], f"groups[{i}] delta") if len(g) > 2 else default_delta
        out.append((share, eps, delta))
    return out


def check_eps_range(low: object, high: object) -> tuple[float, float]:
    """``(low, high)``: two local budgets with ``low <= high``."""
    lo = check_local_eps(low, "low")
    hi = check_local_eps(high, "high")
    if hi < lo:
        raise ValueError(f"low must be <= high, got low={shown(low)}, high={shown(high)}")
    return lo, hi


