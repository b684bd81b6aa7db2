"""Parameters: per-user local budgets and the central target.

A :class:`BudgetProfile` holds the personalized local budgets ``(eps_i, delta_i)`` of the
``n`` users of one shuffled protocol (personalized LDP, Chen, Cao, Ge, AAAI 2024, arXiv
2312.14388, Section 3: user ``i`` runs an ``(epsilon_i, delta_i)``-LDP randomizer).

Code names and paper notation: ``eps[i]`` = epsilon_i, ``delta[i]`` = delta_i, ``n`` = n.

Broadcasting: ``delta`` may be a scalar, which is broadcast to every user.  Arrays are copied
and made read-only, so a profile is immutable.

The accepted range (stated here, once; enforced by :class:`BudgetProfile`, by every bound's
``eps``/``delta``/``evaluate``, by the CLI and by the workflow's config schema, which a test
checks against these constants):

* local budgets ``eps_i`` in ``[0, EPS_LOCAL_MAX]`` = [0, 50] and ``delta_i`` in [0, 1);
* ``n`` from 2 to ``N_MAX`` = 10^9 users held as a budget histogram (identical users are a
  histogram of one tier; tested with 10^9 users in five tiers), and up to ``N_MAX_ARRAYS`` =
  10^8 users given as per-user arrays (distinct budgets are tested up to 10^7);
* a central target ``delta`` in ``[DELTA_MIN, DELTA_MAX]`` = [1e-30, 0.99];
* a central target ``eps``: any finite float >= 0.

Every rigorous bound is sound, and checked against exact computations, over this whole range
(docs/theory.md, "Numerics over the accepted range").

Validation.  Public entry points check their arguments before doing any work, with the
helpers below (:func:`check_real`, :func:`check_int`, :func:`check_rng`,
:func:`as_real_array`, ...): a wrong *type* raises ``TypeError`` naming the parameter and the
type (``bool`` is not a number; numpy scalars are), a bad *value* raises ``ValueError`` naming
the parameter and its value, shortened with :func:`shuffledp.errors.short_repr`.

Budgets files (:meth:`BudgetProfile.from_csv_text`, :meth:`BudgetProfile.from_npy_bytes`,
:func:`shuffledp.io.load_budgets`): CSV with a header naming exactly the columns ``eps``
(required), ``delta`` and ``count`` (optional), case-insensitive, quoted or not, with or without
a UTF-8 byte-order mark; lines starting with ``#`` are comments.  Without ``count`` a row is a
user; with it a row is a budget held by ``count`` users (a whole number >= 0; repeated budgets
are added up), so 10^9 users in five tiers are a five-row file.  Any other column, a
duplicated column or a non-numeric cell is an error.  ``.npy``: a 1-D integer or float array of
eps, an (n, 2) array of (eps, delta), or a structured array with fields ``eps`` (and
optionally ``delta`` and ``count``).
"""

from __future__ import annotations

import csv
import io
import math
import tokenize
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from shuffledp.errors import short_repr

__all__ = [
    "EPS_LOCAL_MAX",
    "N_MAX",
    "N_MAX_ARRAYS",
    "DELTA_MIN",
    "DELTA_MAX",
    "BUDGET_COLUMNS",
    "check_target_delta",
    "check_target_eps",
    "check_one_target",
    "BudgetProfile",
    "Tiers",
    "PrivacyTarget",
    "profile_from_spec",
]

#: Largest accepted local budget eps_i.
EPS_LOCAL_MAX = 50.0
#: Largest accepted number of users (a budget histogram; identical users are one).
N_MAX = 10**9
#: Largest number of users given (or expanded) as per-user arrays.
N_MAX_ARRAYS = 10**8
#: Smallest accepted central target delta.
DELTA_MIN = 1e-30
#: Largest accepted central target delta.
DELTA_MAX = 0.99
#: The columns of a budgets file (CSV header names, .npy field names): ``eps`` is required;
#: ``count`` makes the file a budget histogram (users per row).
BUDGET_COLUMNS = ("eps", "delta", "count")

#: Local budgets rule, as written in messages.
LOCAL_EPS_RULE = f"finite and in [0, {EPS_LOCAL_MAX:g}] (the accepted local budgets)"


# ---------------------------------------------------------------------- validation helpers
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


def _shown(value: object) -> str:
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
        raise ValueError(f"{name} must be {text}, got {_shown(value)}")
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


_NOT_ARRAYS = (str, bytes, bytearray, memoryview, Mapping, set, frozenset)


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
    if values is None or isinstance(values, _NOT_ARRAYS) or isinstance(values, (bool, np.bool_)):
        raise TypeError(f"{name} must be {what}, got {describe(values)}")
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


def _check_local_eps(value: object, name: str) -> float:
    return check_real(value, name, low=0.0, high=EPS_LOCAL_MAX, rule=LOCAL_EPS_RULE)


def _check_local_delta(value: object, name: str) -> float:
    return check_real(value, name, low=0.0, high=1.0, high_open=True)


def _check_n(n: object) -> int:
    return check_int(n, "n", low=2, high=N_MAX, what="n (number of users)")


def _check_n_drawn(n: object) -> int:
    """``n`` for profiles drawn user by user (per-user arrays): at most N_MAX_ARRAYS."""
    return check_int(n, "n", low=2, high=N_MAX_ARRAYS,
                     what="n (number of users drawn one by one; histograms go to 1e+09)")


def _as_budget_array(values: object, name: str) -> NDArray[np.float64]:
    arr = as_real_array(values, name)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    return arr


def _check_eps(eps: NDArray[np.float64], name: str = "eps") -> None:
    check_array_range(eps, name, low=0.0, high=EPS_LOCAL_MAX, rule=LOCAL_EPS_RULE)


def _check_delta(delta: NDArray[np.float64], name: str = "delta") -> None:
    check_array_range(delta, name, low=0.0, high=1.0, high_open=True)


def _cut(text: str, limit: int = 120) -> str:
    """Free text (e.g. a parser's own message) cut to ``limit`` characters."""
    return text if len(text) <= limit else f"{text[: limit - 25]}... ({len(text)} characters)"


def _check_columns(names: Sequence[str], what: str, header: str) -> None:
    """The column (field) names of a budgets file: ``eps``, optionally ``delta`` and
    ``count``, nothing else, none twice."""
    accepted = "'eps' (required), 'delta' and 'count' (optional)"
    seen: set[str] = set()
    for col in names:
        if col in seen:
            raise ValueError(f"{what} has a duplicated column {short_repr(col)}")
        seen.add(col)
    if "eps" not in seen:
        raise ValueError(
            f"{what} needs a column 'eps' (accepted columns: {accepted}), got {header}"
        )
    unknown = [c for c in names if c not in BUDGET_COLUMNS]
    if unknown:
        raise ValueError(
            f"{what} has unknown column(s) {short_repr(unknown)}; accepted columns: {accepted}"
        )


def _check_groups(groups: object, default_delta: float) -> list[tuple[float, float, float]]:
    """Mixture groups ``(share, eps[, delta])`` as float triples (``default_delta`` filled in)."""
    if groups is None or isinstance(groups, _NOT_ARRAYS) or not hasattr(groups, "__len__"):
        raise TypeError(
            f"groups must be a list of (share, eps) or (share, eps, delta) groups, got "
            f"{describe(groups)}"
        )
    if len(groups) == 0:  # type: ignore[arg-type]
        raise ValueError("groups must not be empty")
    out = []
    for i, g in enumerate(groups):  # type: ignore[attr-defined]
        if g is None or isinstance(g, _NOT_ARRAYS) or not hasattr(g, "__len__"):
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
        eps = _check_local_eps(g[1], f"groups[{i}] eps")
        delta = _check_local_delta(g[2], f"groups[{i}] delta") if len(g) > 2 else default_delta
        out.append((share, eps, delta))
    return out


def _group_sizes(shares: NDArray[np.float64], n: int) -> NDArray[np.int64]:
    """``round(share * n)``, the remainder given to the largest share (taken from the largest
    shares in turn when the rounding overshoots by more than that group holds)."""
    sizes = np.floor(shares * n + 0.5).astype(np.int64)
    diff = int(n) - int(sizes.sum())
    order = np.argsort(-shares, kind="stable")
    if diff >= 0:
        sizes[order[0]] += diff
    else:
        for idx in order:
            take = min(int(sizes[idx]), -diff)
            sizes[idx] -= take
            diff += take
            if diff == 0:
                break
    return sizes


class Tiers(NamedTuple):
    """A profile as a budget histogram: the distinct ``(eps_i, delta_i)`` pairs, sorted by
    eps and then delta, and how many users hold each (``counts`` >= 1, summing to ``n``).

    Every bound of the library reads a profile through this view (or through ``n`` and the
    extremes), never through per-user arrays, so a profile of 10^9 users in a few tiers costs
    what its tiers cost.
    """

    eps: NDArray[np.float64]
    delta: NDArray[np.float64]
    counts: NDArray[np.int64]


def _readonly(*arrays: NDArray) -> None:
    for a in arrays:
        a.setflags(write=False)


def _tiers_of_users(eps: NDArray[np.float64], delta: NDArray[np.float64]) -> Tiers:
    """The histogram of per-user arrays: one pass for identical users, a sort of eps when
    every delta is equal, a lexsort otherwise."""
    if bool(np.all(eps == eps[0])) and bool(np.all(delta == delta[0])):
        t = Tiers(eps[:1].copy(), delta[:1].copy(), np.array([eps.size], dtype=np.int64))
    elif bool(np.all(delta == delta[0])):
        values, counts = np.unique(eps, return_counts=True)
        t = Tiers(values, np.full(values.size, float(delta[0])), counts.astype(np.int64))
    else:
        order = np.lexsort((delta, eps))
        e, d = eps[order], delta[order]
        new = np.ones(e.size, dtype=bool)
        new[1:] = (e[1:] != e[:-1]) | (d[1:] != d[:-1])
        first = np.flatnonzero(new)
        t = Tiers(e[first], d[first], np.diff(np.append(first, e.size)).astype(np.int64))
    _readonly(*t)
    return t


def _merge_tiers(eps: NDArray[np.float64], delta: NDArray[np.float64],
                 counts: NDArray[np.int64]) -> Tiers:
    """Sorted distinct pairs with summed counts; zero counts dropped."""
    keep = counts > 0
    eps, delta, counts = eps[keep], delta[keep], counts[keep]
    order = np.lexsort((delta, eps))
    e, d, c = eps[order], delta[order], counts[order]
    new = np.ones(e.size, dtype=bool)
    new[1:] = (e[1:] != e[:-1]) | (d[1:] != d[:-1])
    first = np.flatnonzero(new)
    t = Tiers(e[first].copy(), d[first].copy(), np.add.reduceat(c, first).astype(np.int64))
    _readonly(*t)
    return t


def _as_counts(values: object, size: int) -> NDArray[np.int64]:
    """``counts`` as an int64 array, one whole number >= 0 per tier."""
    arr = as_real_array(values, "counts")
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"counts must be one-dimensional, got shape {arr.shape}")
    if arr.size != size:
        raise ValueError(
            f"counts must have one entry per budget value ({size}), got length {arr.size}"
        )
    bad = ~np.isfinite(arr) | (arr < 0) | (arr != np.floor(arr)) | (arr > 2.0**62)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"counts must be whole numbers >= 0 (users per budget), got counts[{i}] = "
            f"{float(arr[i])!r}"
        )
    return arr.astype(np.int64)


class BudgetProfile:
    """The local budgets ``(eps_i, delta_i)`` of ``n >= 2`` users: per-user arrays, or a
    budget histogram (distinct budgets and how many users hold each).

    Every bound reads :attr:`tiers` (the histogram), :attr:`n` and the extremes;
    :attr:`eps` and :attr:`delta` are the per-user arrays (a histogram profile expands them on
    first use, in tier order, and refuses beyond ``N_MAX_ARRAYS`` users).  Arrays are copied
    and read-only, so a profile is immutable.

    Parameters
    ----------
    eps:
        Local epsilons epsilon_i in [0, EPS_LOCAL_MAX]: one per user, or (with ``counts``)
        one per budget tier.
    delta:
        Local deltas delta_i in [0, 1), aligned with ``eps``; a scalar is broadcast.
    label:
        Free text describing where the profile came from (kept for output tables).
    counts:
        Keyword only, optional.  How many users hold ``(eps[t], delta[t])``.  With it the
        profile is a *histogram* of ``n = sum(counts)`` users (up to ``N_MAX`` = 10^9) and no
        per-user array is ever built by the bounds; without it ``eps`` lists every user (up to
        ``N_MAX_ARRAYS`` = 10^8).

    Examples
    --------
    >>> p = BudgetProfile.identical(n=4, eps0=1.0)
    >>> p.n, float(p.eps.max()), float(p.delta.max())
    (4, 1.0, 0.0)
    >>> BudgetProfile.from_histogram(eps=[0.5, 4.0], counts=[999_000_000, 1_000_000]).n
    1000000000
    >>> BudgetProfile.from_arrays([1.0, -1.0])
    Traceback (most recent call last):
    ...
    ValueError: eps must be finite and in [0, 50] (the accepted local budgets), got eps[1] = -1.0
    """

    def __init__(self, eps: ArrayLike, delta: ArrayLike | float = 0.0, label: str = "", *,
                 counts: ArrayLike | None = None) -> None:
        check_str(label, "label")
        e = _as_budget_array(eps, "eps")
        d = _as_budget_array(delta, "delta")
        what = "budget value" if counts is not None else "user"
        if d.size == 1:
            _check_delta(d)
            d = np.full(e.shape, d[0], dtype=np.float64)
        if d.shape != e.shape:
            raise ValueError(
                f"delta must be a scalar or have one entry per {what} ({e.size}), "
                f"got length {d.size}"
            )
        if counts is None:
            if e.size < 2:
                raise ValueError(
                    f"n (number of users) must be >= 2, got {e.size} (the length of eps)"
                )
            if e.size > N_MAX_ARRAYS:
                raise ValueError(
                    f"n (number of users) given as per-user arrays must be <= "
                    f"{N_MAX_ARRAYS:.0e}, got {e.size} (the length of eps); give larger "
                    f"populations as a budget histogram (counts)"
                )
            _check_eps(e)
            _check_delta(d)
            _readonly(e, d)
            self._users: tuple[NDArray[np.float64], NDArray[np.float64]] | None = (e, d)
            self._tiers: Tiers | None = None
            self._n = int(e.size)
        else:
            c = _as_counts(counts, e.size)
            _check_eps(e)
            _check_delta(d)
            n = int(c.sum()) if c.size else 0
            if n < 2:
                raise ValueError(f"n (number of users) must be >= 2, got {n} (the sum of counts)")
            if n > N_MAX:
                raise ValueError(
                    f"n (number of users) must be <= {N_MAX:.0e}, got {n} (the sum of counts)"
                )
            self._users = None
            self._tiers = _merge_tiers(e, d, c)
            self._n = n
        self._histogram = counts is not None
        self.label = label
        self._frozen = True

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_frozen", False):
            raise AttributeError(f"BudgetProfile is immutable (cannot set {name!r})")
        object.__setattr__(self, name, value)

    # ------------------------------------------------------------------ views
    @property
    def tiers(self) -> Tiers:
        """The budget histogram (:class:`Tiers`), computed once."""
        if self._tiers is None:
            object.__setattr__(self, "_tiers", _tiers_of_users(*self._users))  # type: ignore[misc]
        return self._tiers  # type: ignore[return-value]

    @property
    def is_histogram(self) -> bool:
        """True when the profile was given as a budget histogram (``counts``)."""
        return self._histogram

    def _user_arrays(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        if self._users is None:
            if self._n > N_MAX_ARRAYS:
                raise ValueError(
                    f"this profile of n = {self._n} users is a budget histogram "
                    f"({self.tiers.eps.size} tiers); per-user arrays exist only up to "
                    f"{N_MAX_ARRAYS:.0e} users: read profile.tiers instead"
                )
            t = self.tiers
            e, d = np.repeat(t.eps, t.counts), np.repeat(t.delta, t.counts)
            _readonly(e, d)
            object.__setattr__(self, "_users", (e, d))
        return self._users  # type: ignore[return-value]

    @property
    def eps(self) -> NDArray[np.float64]:
        """Per-user epsilon_i (a histogram profile: expanded in tier order on first use)."""
        return self._user_arrays()[0]

    @property
    def delta(self) -> NDArray[np.float64]:
        """Per-user delta_i (a histogram profile: expanded in tier order on first use)."""
        return self._user_arrays()[1]

    @property
    def n(self) -> int:
        """Number of users n."""
        return self._n

    @property
    def is_identical(self) -> bool:
        """True when every user has the same (eps_i, delta_i)."""
        if self._tiers is not None:
            return self._tiers.eps.size == 1
        e, d = self._users  # type: ignore[misc]
        return bool(np.all(e == e[0]) and np.all(d == d[0]))

    @property
    def is_pure(self) -> bool:
        """True when every delta_i is 0 (pure LDP)."""
        return self.delta_max == 0.0

    @property
    def eps_max(self) -> float:
        """max_i epsilon_i."""
        return float(self.tiers.eps[-1] if self._tiers is not None else self._users[0].max())

    @property
    def eps_min(self) -> float:
        """min_i epsilon_i."""
        return float(self.tiers.eps[0] if self._tiers is not None else self._users[0].min())

    @property
    def delta_max(self) -> float:
        """max_i delta_i."""
        return float((self._tiers.delta if self._tiers is not None else self._users[1]).max())

    @property
    def delta_min(self) -> float:
        """min_i delta_i."""
        return float((self._tiers.delta if self._tiers is not None else self._users[1]).min())

    @property
    def eps_mean(self) -> float:
        """The mean local epsilon (1/n) sum_i epsilon_i."""
        if self._users is not None:
            return float(self._users[0].mean())
        t = self.tiers
        return float(np.dot(t.eps, t.counts.astype(np.float64)) / self._n)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def identical(
        cls, *, n: int, eps0: float, delta0: float = 0.0, label: str = ""
    ) -> BudgetProfile:
        """``n`` users with the same budget ``(eps0, delta0)`` (a one-tier histogram, so
        ``n`` may be up to ``N_MAX`` = 10^9).

        >>> BudgetProfile.identical(n=10, eps0="1.0")
        Traceback (most recent call last):
        ...
        TypeError: eps0 must be a real number, got str '1.0'
        """
        n = _check_n(n)
        e = _check_local_eps(eps0, "eps0")
        d = _check_local_delta(delta0, "delta0")
        check_str(label, "label")
        return cls(eps=[e], delta=[d], counts=[n], label=label or f"identical(eps0={e:g})")

    @classmethod
    def from_histogram(
        cls, eps: ArrayLike, counts: ArrayLike, delta: ArrayLike | None = None, *,
        label: str = ""
    ) -> BudgetProfile:
        """A budget histogram: ``counts[t]`` users hold ``(eps[t], delta[t])`` (``delta``
        optional, a scalar is broadcast).  Repeated budgets are merged and zero counts
        dropped; ``n = sum(counts)`` must be in [2, N_MAX].  Nothing is expanded: every bound
        reads :attr:`tiers`.

        >>> p = BudgetProfile.from_histogram([2.0, 0.5, 2.0], counts=[3, 10, 2])
        >>> p.tiers.eps.tolist(), p.tiers.counts.tolist(), p.n
        ([0.5, 2.0], [10, 5], 15)
        >>> BudgetProfile.from_histogram([1.0], counts=[2.5])
        Traceback (most recent call last):
        ...
        ValueError: counts must be whole numbers >= 0 (users per budget), got counts[0] = 2.5
        """
        if counts is None:
            raise TypeError(f"counts must be an array of whole numbers, got {describe(counts)}")
        return cls(eps=eps, delta=0.0 if delta is None else delta, counts=counts, label=label)

    @classmethod
    def from_arrays(
        cls, eps: ArrayLike, delta: ArrayLike | None = None, *, label: str = ""
    ) -> BudgetProfile:
        """Profile from arrays of per-user ``eps`` and (optional, broadcast) ``delta``."""
        return cls(eps=eps, delta=0.0 if delta is None else delta, label=label)  # type: ignore[arg-type]

    @classmethod
    def from_csv_text(cls, text: str, *, label: str = "") -> BudgetProfile:
        """Parse CSV text with a header: a column ``eps``, optional columns ``delta`` and
        ``count`` (with ``count``, each row is a budget held by that many users: a budget
        histogram, see :meth:`from_histogram`).

        Parsed with Python's :mod:`csv` (quoted fields accepted); header names are stripped
        and case-insensitive; a leading UTF-8 byte-order mark is dropped; blank lines and
        lines starting with ``#`` are skipped.  Any other column, or a repeated one, is an
        error.  The caller reads the file (see :func:`shuffledp.io.load_budgets`); this
        function only parses, so the library stays free of file I/O.

        >>> BudgetProfile.from_csv_text('"EPS","delta"\\n1.0,0\\n2.0,1e-8\\n').n
        2
        >>> BudgetProfile.from_csv_text("eps\\n1.0\\nabc\\n")
        Traceback (most recent call last):
        ...
        ValueError: budgets column 'eps' must be numeric, got 'abc' on data row 2
        >>> BudgetProfile.from_csv_text("eps,count\\n1.0,999999990\\n4.0,10\\n").n
        1000000000
        >>> BudgetProfile.from_csv_text("eps,count\\n1.0,5\\n2.0,0.5\\n")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: budgets column 'count' must be a whole number in [0, 1e+09], got '0.5' on ...
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {describe(text)}")
        check_str(label, "label")
        if text.startswith("\ufeff"):
            text = text[1:]
        lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        if not lines:
            raise ValueError("budgets file is empty (expected a header with a column 'eps')")
        reader = csv.reader(lines, strict=True, skipinitialspace=True)
        try:
            raw_header = next(reader)
            header = [h.strip().lower() for h in raw_header]
            _check_columns(header, "budgets file", f"header {short_repr(lines[0])}")
            rows = list(reader)
        except csv.Error as err:
            raise ValueError(
                f"budgets file is not valid CSV (line {reader.line_num}): {_cut(str(err))}"
            ) from None
        if not rows:
            raise ValueError("budgets file has a header but no data rows")
        columns: dict[str, list[float]] = {name: [] for name in header}
        for row_no, cells in enumerate(rows, start=1):
            if len(cells) != len(header):
                raise ValueError(
                    f"budgets file data row {row_no} has {len(cells)} cells, "
                    f"header has {len(header)}"
                )
            for name, cell in zip(header, cells, strict=True):
                try:
                    value = float(cell.strip())
                except ValueError:
                    raise ValueError(
                        f"budgets column {name!r} must be numeric, got {short_repr(cell.strip())} "
                        f"on data row {row_no}"
                    ) from None
                if name == "count" and not (value >= 0 and value == math.floor(value)
                                            and value <= N_MAX):
                    raise ValueError(
                        f"budgets column 'count' must be a whole number in [0, {N_MAX:.0e}], "
                        f"got {short_repr(cell.strip())} on data row {row_no}"
                    )
                columns[name].append(value)
        delta = columns.get("delta", 0.0)
        if "count" in columns:
            return cls.from_histogram(columns["eps"], columns["count"], delta, label=label)  # type: ignore[arg-type]
        return cls(eps=columns["eps"], delta=delta, label=label)  # type: ignore[arg-type]

    @classmethod
    def from_npy_bytes(cls, data: bytes, *, label: str = "") -> BudgetProfile:
        """Parse the bytes of a ``.npy`` file: a 1-D array of eps, or an (n, 2) array
        whose columns are ``eps`` and ``delta``, or a structured array with fields
        ``eps`` (and optionally ``delta`` and ``count``: a budget histogram).  The dtype must
        be integer or float (bool, complex, string and object arrays are rejected).

        >>> buf = io.BytesIO(); np.save(buf, np.array([1.0 + 0j, 2.0]))
        >>> BudgetProfile.from_npy_bytes(buf.getvalue())  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: budgets .npy must hold real numbers (...), got dtype complex128
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes, got {describe(data)}")
        check_str(label, "label")
        if not len(data):
            raise ValueError("budgets .npy file is empty")
        try:
            arr = np.load(io.BytesIO(bytes(data)), allow_pickle=False)
        except (
            ValueError,
            OSError,
            EOFError,
            SyntaxError,
            zipfile.BadZipFile,
            tokenize.TokenError,
        ) as err:
            raise ValueError(f"budgets .npy file could not be read: {_cut(str(err))}") from None
        if not isinstance(arr, np.ndarray):
            if hasattr(arr, "close"):
                arr.close()
            raise ValueError("budgets .npy file holds an .npz archive, expected a single array")
        if arr.dtype.names:
            names = list(arr.dtype.names)
            _check_columns(names, "budgets .npy", f"fields {short_repr(tuple(names))}")
            if arr.ndim != 1:
                raise ValueError(f"budgets .npy must have shape (n,), got {arr.shape}")
            for name in names:
                dt = arr.dtype.fields[name][0]  # type: ignore[index]
                if dt.kind not in "iuf" or dt.shape:
                    raise ValueError(
                        f"budgets .npy field {name!r} must hold real numbers (an integer or "
                        f"float dtype), got dtype {dt}"
                    )
            delta = arr["delta"] if "delta" in names else 0.0
            if "count" in names:
                cnt = np.asarray(arr["count"], dtype=np.float64)
                bad = ~np.isfinite(cnt) | (cnt < 0) | (cnt != np.floor(cnt))
                if bad.any():
                    i = int(np.flatnonzero(bad)[0])
                    raise ValueError(
                        f"budgets .npy field 'count' must hold whole numbers >= 0 (users per "
                        f"budget), got count[{i}] = {float(cnt[i])!r}"
                    )
                return cls.from_histogram(arr["eps"], arr["count"], delta, label=label)
            return cls(eps=arr["eps"], delta=delta, label=label)
        if arr.dtype.kind not in "iuf":
            raise ValueError(
                f"budgets .npy must hold real numbers (an integer or float dtype), got dtype "
                f"{arr.dtype}"
            )
        if arr.ndim == 1:
            return cls(eps=arr, delta=0.0, label=label)
        if arr.ndim == 2 and arr.shape[1] in (1, 2):
            delta = arr[:, 1] if arr.shape[1] == 2 else 0.0
            return cls(eps=arr[:, 0], delta=delta, label=label)
        raise ValueError(
            f"budgets .npy must have shape (n,), (n, 1) or (n, 2), got {short_repr(arr.shape)}"
        )

    # ------------------------------------------------------------------ seeded samplers
    @classmethod
    def uniform(
        cls,
        *,
        n: int,
        low: float,
        high: float,
        rng: np.random.Generator,
        delta0: float = 0.0,
    ) -> BudgetProfile:
        """eps_i ~ Uniform[low, high] i.i.d., drawn from ``rng``."""
        n = _check_n_drawn(n)
        lo, hi = _check_range(low, high)
        check_rng(rng)
        d = _check_local_delta(delta0, "delta0")
        eps = rng.uniform(lo, hi, size=n)
        return cls(eps=eps, delta=d, label=f"uniform[{lo:g},{hi:g}]")

    @classmethod
    def clipped_normal(
        cls,
        *,
        n: int,
        mean: float,
        std: float,
        low: float,
        high: float,
        rng: np.random.Generator,
        delta0: float = 0.0,
    ) -> BudgetProfile:
        """eps_i ~ Normal(mean, std) clipped to [low, high], i.i.d., drawn from ``rng``."""
        n = _check_n_drawn(n)
        mu = check_real(mean, "mean")
        sd = check_real(std, "std", low=0.0)
        lo, hi = _check_range(low, high)
        check_rng(rng)
        d = _check_local_delta(delta0, "delta0")
        eps = np.clip(rng.normal(mu, sd, size=n), lo, hi)
        return cls(eps=eps, delta=d, label=f"normal({mu:g},{sd:g})@[{lo:g},{hi:g}]")

    @classmethod
    def mixture(
        cls,
        *,
        n: int,
        groups: Sequence[tuple[float, float]] | Sequence[tuple[float, float, float]],
        rng: np.random.Generator | None = None,
        shuffle: bool = False,
    ) -> BudgetProfile:
        """A mixture of budget groups ``(share, eps, [delta])``.

        Group sizes are ``round(share * n)`` with the remainder given to the largest share
        (deterministic, so ``rng`` is needed only when ``shuffle`` is true).  Without
        ``shuffle`` the profile is a budget histogram (n up to ``N_MAX``; its per-user arrays
        list the groups in increasing eps); with it, per-user arrays in a random order (n up
        to ``N_MAX_ARRAYS``).

        >>> p = BudgetProfile.mixture(n=10, groups=[(0.3, 0.5), (0.7, 2.0)])
        >>> int((p.eps == 0.5).sum()), int((p.eps == 2.0).sum())
        (3, 7)
        """
        n = _check_n(n)
        norm = _check_groups(groups, 0.0)
        shuffle = check_bool(shuffle, "shuffle")
        if shuffle:
            check_rng(rng, when="when shuffle=True")
        elif rng is not None:
            check_rng(rng)
        shares = np.array([g[0] for g in norm], dtype=float)
        if not np.isclose(shares.sum(), 1.0, rtol=0.0, atol=1e-9):
            raise ValueError(
                f"groups shares must sum to 1, got {short_repr(shares.tolist())} "
                f"(sum {float(shares.sum())!r})"
            )
        sizes = _group_sizes(shares, n)
        label = "mix(" + ",".join(f"{g[0]:g}:{g[1]:g}" for g in norm) + ")"
        if not shuffle:  # a budget histogram: nothing per user (n up to N_MAX)
            return cls.from_histogram([g[1] for g in norm], sizes, [g[2] for g in norm],
                                      label=label)
        n = _check_n_drawn(n)
        eps = np.concatenate([np.full(s, g[1]) for s, g in zip(sizes, norm, strict=True)])
        delta = np.concatenate([np.full(s, g[2]) for s, g in zip(sizes, norm, strict=True)])
        if shuffle:
            perm = rng.permutation(eps.size)  # type: ignore[union-attr]
            eps, delta = eps[perm], delta[perm]
        return cls(eps=eps, delta=delta, label=label)

    def _same_kind(self, eps: NDArray[np.float64], delta: NDArray[np.float64],
                   counts: NDArray[np.int64] | None = None) -> BudgetProfile:
        return BudgetProfile(eps=eps, delta=delta, counts=counts, label=self.label)

    def without(self, index: int) -> BudgetProfile:
        """The profile with user ``index`` removed (needs n >= 3); a histogram profile
        counts users in tier order and stays a histogram."""
        i = check_int(index, "index")
        if not -self.n <= i < self.n:
            raise ValueError(f"index must be in [-{self.n}, {self.n}), got {short_repr(i)}")
        if self.n < 3:
            raise ValueError(f"without needs n >= 3 users (2 must remain), got n = {self.n}")
        if self.is_histogram:
            t = self.tiers
            tier = int(np.searchsorted(np.cumsum(t.counts), i % self.n, side="right"))
            counts = t.counts.copy()
            counts[tier] -= 1
            return self._same_kind(t.eps, t.delta, counts)
        keep = np.ones(self.n, dtype=bool)
        keep[i] = False
        return self._same_kind(self.eps[keep], self.delta[keep])

    def scaled(self, factor: float) -> BudgetProfile:
        """Every eps_i multiplied by ``factor`` >= 0 (the deltas unchanged); the result must
        stay within the accepted local budgets (max eps_i <= EPS_LOCAL_MAX).  A histogram
        stays a histogram."""
        f = check_real(factor, "factor", low=0.0)
        if f * self.eps_max > EPS_LOCAL_MAX:
            raise ValueError(
                f"factor must keep every eps_i <= {EPS_LOCAL_MAX:g} (the accepted local "
                f"budgets), got {_shown(factor)} (max eps_i would be {f * self.eps_max:.6g})"
            )
        if self.is_histogram:
            t = self.tiers
            return self._same_kind(t.eps * f, t.delta, t.counts)
        return self._same_kind(self.eps * f, self.delta)

    def rounded_down(self, levels: int) -> BudgetProfile:
        """Every eps_i rounded *down* to one of at most ``levels`` values (deltas unchanged).

        The values are the budgets at the quantiles ``j / levels``, j = 0..levels-1, of the
        users' eps (counting users, the smallest budget first, so the smallest budget is one
        of them); each user keeps the largest value not above its own budget.  A user then
        runs with a budget at most its own: its local guarantee still holds.  Why: randomizers
        whose outputs for different budgets do not overlap (the L2-ball Duchi and the
        d-dimensional Gaussian randomizers of SGD) are amplified only by users with the
        *same* budget (docs/theory.md 14), so a profile of
        distinct budgets is rounded to a few tiers first.  Profiles with at most ``levels``
        distinct budgets are returned unchanged; the user order (and a histogram) is kept.

        >>> p = BudgetProfile(eps=[2.0, 0.5, 1.0, 1.5, 0.7, 1.9])
        >>> p.rounded_down(2).eps.tolist()
        [1.5, 0.5, 0.5, 1.5, 0.5, 1.5]
        """
        k = check_int(levels, "levels", low=1)
        t = self.tiers
        if np.unique(t.eps).size <= k:
            return self
        cum = np.cumsum(t.counts)
        # the tier holding the user of rank floor(j n / k) (0-based), j = 0..k-1
        ranks = (np.arange(k, dtype=np.float64) * self.n / k).astype(np.int64)
        values = np.unique(t.eps[np.searchsorted(cum, ranks, side="right")])
        if self.is_histogram:
            new = values[np.searchsorted(values, t.eps, side="right") - 1]
            return self._same_kind(new, t.delta, t.counts)
        new = values[np.searchsorted(values, self.eps, side="right") - 1]
        return self._same_kind(new, self.delta)

    def with_n(self, n: int, rng: np.random.Generator | None = None) -> BudgetProfile:
        """Resample (identical: replicate) the profile to ``n`` users.

        Identical budgets give a one-tier histogram.  Otherwise each new user draws a budget
        from the profile's users uniformly at random from ``rng``: per-user arrays by drawing
        indices (up to ``N_MAX_ARRAYS`` users), a histogram profile (or ``n`` above
        ``N_MAX_ARRAYS``) by one multinomial draw of the tier counts (the same law).
        """
        n = _check_n(n)
        if rng is not None:
            check_rng(rng)
        t = self.tiers if self.is_histogram or self.is_identical else None
        if t is not None and t.eps.size == 1:
            return self._same_kind(t.eps, t.delta, np.array([n], dtype=np.int64))
        check_rng(rng, when="to resample a non-identical profile")
        if self.is_histogram or n > N_MAX_ARRAYS:
            t = self.tiers
            share = t.counts / float(self.n)
            counts = rng.multinomial(n, share / share.sum())  # type: ignore[union-attr]
            return self._same_kind(t.eps, t.delta, counts.astype(np.int64))
        idx = rng.integers(0, self.n, size=n)  # type: ignore[union-attr]
        return self._same_kind(self.eps[idx], self.delta[idx])

    def __repr__(self) -> str:
        kind = f", {self.tiers.eps.size} tiers" if self.is_histogram else ""
        return (
            f"BudgetProfile(n={self.n}{kind}, eps in [{self.eps_min:g}, {self.eps_max:g}], "
            f"delta_max={self.delta_max:g}, label={short_repr(self.label)})"
        )


@dataclass(frozen=True)
class PrivacyTarget:
    """A central ``(eps, delta)`` guarantee; either may be ``None`` when it is the unknown.

    ``eps`` as :func:`check_target_eps`, ``delta`` as :func:`check_target_delta` (the
    accepted range); both are stored as floats.

    >>> PrivacyTarget(eps=None, delta=1e-6).delta
    1e-06
    >>> PrivacyTarget(eps=None, delta=1.5)
    Traceback (most recent call last):
    ...
    ValueError: delta must be in [1e-30, 0.99], got 1.5
    """

    eps: float | None = None
    delta: float | None = None

    def __post_init__(self) -> None:
        if self.eps is None and self.delta is None:
            raise ValueError("one of eps or delta must be given")
        if self.eps is not None:
            object.__setattr__(self, "eps", check_target_eps(self.eps))
        if self.delta is not None:
            object.__setattr__(self, "delta", check_target_delta(self.delta))


def _check_range(low: object, high: object) -> tuple[float, float]:
    lo = _check_local_eps(low, "low")
    hi = _check_local_eps(high, "high")
    if hi < lo:
        raise ValueError(f"low must be <= high, got low={_shown(low)}, high={_shown(high)}")
    return lo, hi


#: The keys of each kind of profile spec (besides ``kind``).
SPEC_KEYS = {
    "clipped_normal": ("mean", "std", "low", "high"),
    "identical": ("eps0",),
    "mixture": ("groups",),
    "uniform": ("low", "high"),
}


def profile_from_spec(
    spec: Mapping, *, n: int, rng: np.random.Generator, delta0: float = 0.0, label: str = ""
) -> BudgetProfile:
    """Build a profile of ``n`` users from a config dict (the workflow's ``profiles`` entries).

    ``spec["kind"]`` is one of ``identical`` (``eps0``), ``uniform`` (``low``, ``high``),
    ``clipped_normal`` (``mean``, ``std``, ``low``, ``high``) or ``mixture`` (``groups``: a list
    of ``[share, eps]`` or ``[share, eps, delta]``); no other key is accepted.  ``delta0`` is
    every user's local delta (a mixture group's own delta, when given, wins).

    >>> profile_from_spec({"kind": "uniform", "low": 0.5, "high": 2.0}, n=5,
    ...                   rng=np.random.default_rng(0)).n
    5
    >>> profile_from_spec({"kind": "beta"}, n=5, rng=np.random.default_rng(0))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: profile kind must be one of [...], got 'beta'
    """
    if not isinstance(spec, Mapping):
        raise TypeError(f"spec must be a mapping (dict), got {describe(spec)}")
    n = _check_n(n)
    check_rng(rng)
    d0 = _check_local_delta(delta0, "delta0")
    check_str(label, "label")
    kinds = sorted(SPEC_KEYS)
    kind = spec.get("kind")
    if kind is not None and not isinstance(kind, str):
        raise TypeError(f"spec['kind'] must be a str, got {describe(kind)}")
    if kind not in SPEC_KEYS:
        raise ValueError(f"profile kind must be one of {kinds}, got {short_repr(kind)}")
    keys = SPEC_KEYS[kind]
    missing = [k for k in keys if k not in spec]
    if missing:
        raise ValueError(f"profile spec of kind {kind!r} needs key(s) {missing}")
    extra = [str(k) for k in spec if k != "kind" and k not in keys]
    if extra:
        raise ValueError(
            f"profile spec of kind {kind!r} has unknown key(s) {short_repr(extra)}; "
            f"accepted: {['kind', *keys]}"
        )
    if kind == "identical":
        prof = BudgetProfile.identical(n=n, eps0=spec["eps0"], delta0=d0)
    elif kind == "uniform":
        prof = BudgetProfile.uniform(n=n, low=spec["low"], high=spec["high"], rng=rng, delta0=d0)
    elif kind == "clipped_normal":
        prof = BudgetProfile.clipped_normal(
            n=n,
            mean=spec["mean"],
            std=spec["std"],
            low=spec["low"],
            high=spec["high"],
            rng=rng,
            delta0=d0,
        )
    else:
        groups = _check_groups(spec["groups"], d0)
        prof = BudgetProfile.mixture(n=n, groups=groups, rng=rng, shuffle=True)
    if label:
        prof = BudgetProfile(eps=prof.eps, delta=prof.delta, label=label)
    return prof
