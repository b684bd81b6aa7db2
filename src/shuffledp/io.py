"""Budgets files: the parsers of their contents and the package's only file-reading adapter.

The library proper is pure; :func:`load_budgets` reads a file (for the CLI and for users) and
hands its content to the parsers :func:`parse_budgets_csv` and :func:`parse_budgets_npy`,
which take text and bytes and never touch the file system.

Formats.  CSV with a header naming exactly the columns ``eps`` (required), ``delta`` and
``count`` (optional), case-insensitive, quoted or not, with or without a UTF-8 byte-order mark;
lines starting with ``#`` are comments.  Without ``count`` a row is a user; with it a row is a
budget held by ``count`` users (a whole number >= 0; repeated budgets are added up), so 10^9
users in five tiers are a five-row file.  Any other column, a duplicated column or a
non-numeric cell is an error.  ``.npy``: a 1-D integer or float array of eps, an (n, 2) array
of (eps, delta), or a structured array with fields ``eps`` (and optionally ``delta`` and
``count``).
"""

from __future__ import annotations

import array
import csv
import io
import itertools
import math
import os
import tokenize
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from shuffledp.budgets import BudgetProfile
from shuffledp.errors import short_path, short_repr
from shuffledp.limits import BUDGET_COLUMNS, N_MAX
from shuffledp.validation import check_str, describe

__all__ = ["load_budgets", "parse_budgets_csv", "parse_budgets_npy"]


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


def parse_budgets_csv(text: str, *, label: str = "") -> BudgetProfile:
    """Parse CSV text with a header: a column ``eps``, optional columns ``delta`` and
    ``count`` (with ``count``, each row is a budget held by that many users: a budget
    histogram, see :meth:`BudgetProfile.from_histogram`).

    Parsed with Python's :mod:`csv` (quoted fields accepted); header names are stripped
    and case-insensitive; a leading UTF-8 byte-order mark is dropped; blank lines and
    lines starting with ``#`` are skipped.  Any other column, or a repeated one, is an
    error.  The caller reads the file (see :func:`shuffledp.io.load_budgets`); this
    function only parses, so the library stays free of file I/O.

    >>> parse_budgets_csv('"EPS","delta"\\n1.0,0\\n2.0,1e-8\\n').n
    2
    >>> parse_budgets_csv("eps\\n1.0\\nabc\\n")
    Traceback (most recent call last):
    ...
    ValueError: budgets column 'eps' must be numeric, got 'abc' on data row 2
    >>> parse_budgets_csv("eps,count\\n1.0,999999990\\n4.0,10\\n").n
    1000000000
    >>> parse_budgets_csv("eps,count\\n1.0,5\\n2.0,0.5\\n")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: budgets column 'count' must be a whole number in [0, 1e+09], got '0.5' on ...
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {describe(text)}")
    check_str(label, "label")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = _data_lines(text)
    first = next(lines, None)
    if first is None:
        raise ValueError("budgets file is empty (expected a header with a column 'eps')")
    reader = csv.reader(itertools.chain([first], lines), strict=True, skipinitialspace=True)
    # one pass, values straight into typed arrays (8 bytes a value): 10^8 per-user rows need
    # the text and the arrays, not a list of rows of strings (about 300 bytes a row)
    columns: dict[str, array.array] = {}
    row_no = 0
    try:
        raw_header = next(reader)
        header = [h.strip().lower() for h in raw_header]
        _check_columns(header, "budgets file", f"header {short_repr(first)}")
        columns = {name: array.array("d") for name in header}
        for row_no, cells in enumerate(reader, start=1):
            if len(cells) != len(header):
                raise ValueError(
                    f"budgets file data row {row_no} has {len(cells)} cells, "
                    f"header has {len(header)}"
                )
            for name, cell in zip(header, cells, strict=True):
                columns[name].append(_cell_value(name, cell, row_no))
    except csv.Error as err:
        raise ValueError(
            f"budgets file is not valid CSV (line {reader.line_num}): {_cut(str(err))}"
        ) from None
    if row_no == 0:
        raise ValueError("budgets file has a header but no data rows")
    arrays = {name: np.frombuffer(col, dtype=np.float64) for name, col in columns.items()}
    delta = arrays.get("delta", 0.0)
    if "count" in arrays:
        return BudgetProfile.from_histogram(arrays["eps"], arrays["count"], delta, label=label)  # type: ignore[arg-type]
    return BudgetProfile(eps=arrays["eps"], delta=delta, label=label)  # type: ignore[arg-type]


def _data_lines(text: str):
    """The lines of ``text`` that are neither blank nor comments (``#``), one at a time
    (universal newlines, as ``str.splitlines`` for \\n, \\r\\n and \\r)."""
    for line in io.StringIO(text, newline=None):
        body = line.rstrip("\n")
        stripped = body.strip()
        if stripped and not stripped.startswith("#"):
            yield body


def _cell_value(name: str, cell: str, row_no: int) -> float:
    """One cell of column ``name`` as a finite float (``count``: a whole number in [0,
    N_MAX]); ValueError naming the column and the data row."""
    try:
        if "_" in cell:  # Python reads '1_5' as 15: a typo, not a number
            raise ValueError(cell)
        value = float(cell.strip())
    except ValueError:
        raise ValueError(
            f"budgets column {name!r} must be numeric, got {short_repr(cell.strip())} "
            f"on data row {row_no}"
        ) from None
    if not math.isfinite(value):
        raise ValueError(
            f"budgets column {name!r} must be a finite number, got "
            f"{short_repr(cell.strip())} on data row {row_no}"
        )
    if name == "count" and not (value >= 0 and value == math.floor(value) and value <= N_MAX):
        raise ValueError(
            f"budgets column 'count' must be a whole number in [0, {N_MAX:.0e}], "
            f"got {short_repr(cell.strip())} on data row {row_no}"
        )
    return value




def _check_npy_size(data: bytes) -> None:
    """Refuse, before anything is allocated, a ``.npy`` whose header promises more data than
    the file holds (a 128-byte file claiming 10^12 entries)."""
    if not data.startswith(b"\x93NUMPY"):
        return  # not a plain .npy (an .npz, or garbage): np.load says what it is
    buf = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(buf)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(buf)
        elif version in ((2, 0), (3, 0)):
            shape, _, dtype = np.lib.format.read_array_header_2_0(buf)
        else:
            return
    except (ValueError, OSError, EOFError, SyntaxError, tokenize.TokenError):
        return  # np.load reports a broken header itself
    if dtype.hasobject:
        return  # refused by np.load (allow_pickle=False)
    entries = math.prod(int(k) for k in shape)
    need = entries * dtype.itemsize
    have = len(data) - buf.tell()
    if need > have:
        raise ValueError(f"budgets .npy file is truncated or its header is wrong: the header "
                         f"promises shape {tuple(shape)} ({need} bytes of data), the file holds "
                         f"{have} bytes after the header")


def parse_budgets_npy(data: bytes, *, label: str = "") -> BudgetProfile:
    """Parse the bytes of a ``.npy`` file: a 1-D array of eps, or an (n, 2) array
    whose columns are ``eps`` and ``delta``, or a structured array with fields
    ``eps`` (and optionally ``delta`` and ``count``: a budget histogram).  The dtype must
    be integer or float (bool, complex, string and object arrays are rejected).

    >>> buf = io.BytesIO(); np.save(buf, np.array([1.0 + 0j, 2.0]))
    >>> parse_budgets_npy(buf.getvalue())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: budgets .npy must hold real numbers (...), got dtype complex128
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes, got {describe(data)}")
    check_str(label, "label")
    if not len(data):
        raise ValueError("budgets .npy file is empty")
    _check_npy_size(bytes(data))
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
            return BudgetProfile.from_histogram(arr["eps"], arr["count"], delta, label=label)
        return BudgetProfile(eps=arr["eps"], delta=delta, label=label)
    if arr.dtype.kind not in "iuf":
        raise ValueError(
            f"budgets .npy must hold real numbers (an integer or float dtype), got dtype "
            f"{arr.dtype}"
        )
    if arr.ndim == 1:
        return BudgetProfile(eps=arr, delta=0.0, label=label)
    if arr.ndim == 2 and arr.shape[1] in (1, 2):
        delta = arr[:, 1] if arr.shape[1] == 2 else 0.0
        return BudgetProfile(eps=arr[:, 0], delta=delta, label=label)
    raise ValueError(
        f"budgets .npy must have shape (n,), (n, 1) or (n, 2), got {short_repr(arr.shape)}"
    )


def load_budgets(path: str | os.PathLike) -> BudgetProfile:
    """Read per-user budgets from a ``.csv`` (columns ``eps`` and optional ``delta``; UTF-8,
    a byte-order mark is accepted) or a ``.npy`` file.

    ``TypeError`` unless ``path`` is a ``str`` or ``os.PathLike``; ``ValueError`` naming the
    file for a missing file or anything malformed; ``OSError`` (naming the file) when an
    existing file cannot be read.
    """
    if isinstance(path, (bytes, bytearray)) or not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {describe(path)}")
    try:
        p = Path(path)
    except TypeError:  # an os.PathLike whose __fspath__ does not give a str
        raise TypeError(f"path must be a str or os.PathLike, got {describe(path)}") from None
    if not str(path).strip():
        raise ValueError(f"path must not be empty, got {short_repr(str(path))}")
    shown = short_path(p)
    try:
        exists, is_file = p.exists(), p.is_file()
    except (OSError, ValueError) as err:  # name too long, embedded NUL byte, ...
        why = getattr(err, "strerror", None) or str(err)
        raise ValueError(f"budgets file {shown} cannot be accessed: {why}") from None
    if not exists:
        raise ValueError(f"budgets file {shown} does not exist")
    if not is_file:
        raise ValueError(f"budgets file {shown} is not a file")
    try:
        raw = p.read_bytes()
    except OSError as err:
        raise type(err)(err.errno, f"budgets file {shown} cannot be read: {err.strerror}") from None
    name = p.name if len(p.name) <= 60 else short_repr(p.name)
    try:
        if p.suffix.lower() == ".npy":
            return parse_budgets_npy(raw, label=p.name)
        text = raw.decode("utf-8-sig")  # drops a UTF-8 byte-order mark
        del raw  # the text is all the parser needs (memory: 10^8 rows are about 1 GB each)
        return parse_budgets_csv(text, label=p.name)
    except UnicodeDecodeError:
        raise ValueError(f"budgets file {shown} is not UTF-8 text (expected CSV)") from None
    except ValueError as err:
        raise ValueError(f"{name}: {err}") from None
