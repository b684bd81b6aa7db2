"""The schema of every table the workflow writes, and the one validating reader.

Every table has a *kind*: the name of its experiment in the manifest (:mod:`wfmanifest`:
``bounds_vs_n``, ``gdp_validity``, ``personalized``, ``personalized_validity``, ``runtime``,
``mean_estimation``, ``frequency_estimation``, ``sgd``; the tidy tables the figures are drawn
from) and ``<kind>.piece`` (the per-job tables a ``collect_*`` rule concatenates into
``<kind>``).  The columns of a kind are declared once, beside the code that writes its rows
(``Experiment.columns`` of the manifest names the declaration: ``BOUNDS_VS_N_TABLE`` in
``shuffledp.experiments.grids``, ``RUNTIME_TABLE`` in ``time_bounds.py``, ...): every column
with its type (number, integer, boolean, string, identifier or one of a fixed set of values),
whether it must be present (``optional=False``) and whether its cells may be empty
(``nullable=True``); :data:`TABLES` gathers them (imported when first used).

:func:`read_table` is the only way workflow scripts read a table.  It raises
:class:`TableError` (a ``ValueError``) with one line naming the file, the column and the first
bad line when the file is empty or truncated, a line is not a well-formed CSV record of the
header's width, a required column is missing, an undeclared column appears, or a value does not
parse as its column's type.  :func:`concat` reads the pieces of one kind and concatenates them.

**Adding a column** (e.g. a new diagnostic written by a ``compute_*`` script): add a
``col(name, type, ...)`` to the declaration of its kind, beside the code that writes it (a
diagnostic of the bound evaluations written by ``evaluation_rows``, like ``vacuous``, goes into
``_BOUND_DIAGNOSTICS`` of ``shuffledp.experiments.grids``, shared by bounds_vs_n and
personalized; gdp_validity lists its own).  Use ``optional=True`` when some jobs (or tables
written before the change) do not have the column at all, ``nullable=True`` when its cells may
be empty; allowed values go into ``values=`` of a ``CHOICE`` column.  Pieces share the columns
of their kind; the columns constant within a piece are ``Experiment.pieces``.

Scripts run under Snakemake's ``script:`` directive, so no ``from __future__`` import here.
"""

import csv
import importlib
import io
import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import wfmanifest

from shuffledp.experiments._columns import (
    BOOLEAN,
    CHOICE,
    IDENTIFIER,
    INTEGER,
    NUMBER,
    POSITIVE,
    Column,
    Columns,
)
from shuffledp.experiments._columns import TYPES as _TYPES  # noqa: F401  (the column types)

__all__ = [
    "Column",
    "TableSchema",
    "TableError",
    "TABLES",
    "schema",
    "piece_kind",
    "read_table",
    "concat",
]

_IDENTIFIER = re.compile(r"[a-z][a-z0-9_]*")


@dataclass(frozen=True)
class TableSchema:
    """Columns of one table kind.

    ``ok_requires``: columns that must not be empty on rows with ``status == "ok"``;
    ``constant``: columns holding a single value in the whole table (a job's piece);
    ``min_rows``: fewer data rows is an error (a job always writes rows);
    ``declared_in``: where the columns are declared (``module.NAME``).
    """

    kind: str
    columns: tuple[Column, ...]
    ok_requires: tuple[str, ...] = ()
    constant: tuple[str, ...] = ()
    min_rows: int = 1
    declared_in: str = ""
    keys: tuple[str, ...] = ()

    def __post_init__(self):
        names = [c.name for c in self.columns]
        dup = sorted({n for n in names if names.count(n) > 1})
        unknown = sorted((set(self.ok_requires) | set(self.constant)) - set(names))
        if dup or unknown:
            raise ValueError(f"table kind {self.kind!r}: duplicate {dup} / undeclared {unknown}")

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def required(self) -> list[str]:
        return [c.name for c in self.columns if not c.optional]

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)


class TableError(ValueError):
    """A table does not match its declared schema (one line, naming the file)."""


def declared_columns(reference: str) -> Columns:
    """The :class:`~shuffledp.experiments._columns.Columns` named by ``"module:NAME"``."""
    module, _, name = reference.partition(":")
    decl = getattr(importlib.import_module(module), name)
    if not isinstance(decl, Columns):
        raise TypeError(f"{reference} is not a Columns declaration")
    return decl


def _schemas(experiment: wfmanifest.Experiment) -> dict[str, TableSchema]:
    """The schema of the experiment's table, and of its pieces when it has some."""
    decl = declared_columns(experiment.columns)
    where = experiment.columns.replace(":", ".")
    out = {experiment.name: TableSchema(experiment.name, decl.columns,
                                        ok_requires=decl.ok_requires, declared_in=where,
                                        keys=decl.keys)}
    if experiment.pieces:
        kind = f"{experiment.name}.piece"
        out[kind] = TableSchema(kind, decl.columns, ok_requires=decl.ok_requires,
                                constant=experiment.pieces, declared_in=where, keys=decl.keys)
    return out


class _Tables(Mapping):
    """Every table kind -> its schema: the kinds of the manifest, then their pieces; each
    declaration is imported when first used (``time_bounds.py``, which declares the runtime
    columns, imports this module)."""

    def __init__(self) -> None:
        self._kinds = [e.name for e in wfmanifest.EXPERIMENTS]
        self._kinds += [f"{e.name}.piece" for e in wfmanifest.EXPERIMENTS if e.pieces]
        self._loaded: dict[str, TableSchema] = {}

    def __getitem__(self, kind: str) -> TableSchema:
        if kind not in self._loaded:
            if kind not in self._kinds:
                raise KeyError(kind)
            self._loaded.update(_schemas(wfmanifest.get(kind.removesuffix(".piece"))))
        return self._loaded[kind]

    def __iter__(self) -> Iterator[str]:
        return iter(self._kinds)

    def __len__(self) -> int:
        return len(self._kinds)

    def __repr__(self) -> str:
        return f"TABLES({', '.join(self._kinds)})"


#: Every declared table kind -> its schema.
TABLES: Mapping[str, TableSchema] = _Tables()


def schema(kind: str) -> TableSchema:
    try:
        return TABLES[kind]
    except KeyError:
        raise ValueError(f"unknown table kind {kind!r}; declared: {', '.join(TABLES)}") from None


def piece_kind(kind: str) -> str:
    """The kind of the per-job pieces of ``kind`` (``kind`` itself if it has none)."""
    return f"{kind}.piece" if f"{kind}.piece" in TABLES else kind


# --- reading ----------------------------------------------------------------------------------


def _short(value: object, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 5]}...{text[-1]}"


def _names(names: Iterable[str], limit: int = 6) -> str:
    names = list(names)
    shown = ", ".join(repr(n) for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _parse(text: str, col: Column):
    """(value, None) or (None, reason); an empty cell parses to None."""
    raw, text = text, text.strip()
    if text == "":
        return None, None
    if col.type in (NUMBER, INTEGER):
        if "_" in text:  # Python reads '1_5' as 15: a typo or an edit, never a writer's number
            return None, "is not a number (underscores are refused)"
        if text.lower() in ("nan", "+nan", "-nan"):  # the writers leave a missing value empty
            return None, "is 'nan' (a missing value is an empty cell)"
    if col.type == NUMBER:
        try:
            v = float(text)
        except ValueError:
            return None, "is not a number"
        return v, None
    if col.type == INTEGER:
        try:
            return int(text), None
        except ValueError:
            pass
        try:
            v = float(text)
        except ValueError:
            return None, "is not an integer"
        if not math.isfinite(v) or v != int(v):
            return None, "is not an integer"
        return int(v), None
    if col.type == BOOLEAN:
        low = text.lower()
        if low in ("true", "false"):
            return low == "true", None
        return None, "is not True/False"
    if col.type == IDENTIFIER:
        if _IDENTIFIER.fullmatch(text):
            return text, None
        return None, "is not a name ([a-z][a-z0-9_]*)"
    if col.type == CHOICE:
        if text in col.values:
            return text, None
        return None, f"is not one of {', '.join(col.values)}"
    return raw, None


def _matching_kinds(header: Sequence[str]) -> list[str]:
    present = set(header)
    return [
        k
        for k, t in TABLES.items()
        if not k.endswith(".piece") and set(t.required) <= present <= set(t.names)
    ]


def _records(path, fail):
    """(header, [(line number, fields)]) of a CSV file; structural errors call ``fail``."""
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError as err:
        fail(f"not UTF-8 text (byte {err.start}): garbage or a binary file")
    if not text.strip():
        fail("empty file (no header): the job that writes it did not finish")
    if not text.endswith("\n"):
        last = text.rsplit("\n", 1)[-1]
        fail(
            f"line {text.count(chr(10)) + 1}: no newline at the end of the file, "
            f"truncated write? (last line {_short(last)})"
        )
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header, rows = None, []
    try:
        for fields in reader:
            if not fields or (len(fields) == 1 and not fields[0].strip()):
                continue  # blank line
            if header is None:
                header = [f.strip() for f in fields]
                dup = sorted({h for h in header if header.count(h) > 1})
                if dup:
                    fail(f"line {reader.line_num}: duplicate column(s) {_names(dup)}")
                if "" in header:
                    fail(f"line {reader.line_num}: a column has no name (garbage header?)")
                continue
            if len(fields) != len(header):
                fail(
                    f"line {reader.line_num}: {len(fields)} fields where the header has "
                    f"{len(header)}, truncated or garbage line {_short(','.join(fields))}"
                )
            rows.append((reader.line_num, fields))
    except csv.Error as err:
        fail(f"line {reader.line_num}: malformed CSV ({err})")
    return header, rows


def read_table(path: str | os.PathLike, kind: str, *, fill_optional: bool = True,
               expect: Mapping | None = None):
    """Read and validate a workflow table of ``kind``; a pandas DataFrame with typed columns.

    Columns come in the declared order: numbers as float (NaN = empty), integers as int64
    ("Int64" with <NA> when nullable), booleans as bool ("boolean" with <NA> when nullable),
    text as str (NaN = empty).  ``fill_optional``: add the declared optional columns the file
    does not have (empty).  ``expect``: the rows the table must hold (its grid; see
    :func:`check_expect`): a missing combination or a row outside the grid is an error.
    Raises :class:`TableError` (see the module docstring) on any mismatch.
    """
    import numpy as np
    import pandas as pd

    sch = schema(kind)

    def fail(msg):
        raise TableError(f"{os.fspath(path)}: {msg} [table kind {kind!r}; to regenerate it, "
                         f"delete the file and rerun: snakemake --cores all {os.fspath(path)}]")

    header, rows = _records(path, fail)
    missing = [n for n in sch.required if n not in header]
    extra = [h for h in header if h not in sch.names]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing column(s) {_names(missing)}")
        if extra:
            parts.append(f"unexpected column(s) {_names(extra)}")
        other = [k for k in _matching_kinds(header) if k != kind.removesuffix(".piece")]
        hint = (
            f"; its columns are those of a {_names(other)} table"
            if other
            else f"; new columns are declared in {sch.declared_in} (read by "
            "workflow/scripts/table_schemas.py)"
            if extra
            else ""
        )
        fail(" and ".join(parts) + hint)
    if len(rows) < sch.min_rows:
        fail("no data rows (header only): the job that writes it did not finish")

    index = {h: i for i, h in enumerate(header)}
    present = [c for c in sch.columns if c.name in index]
    values: dict[str, list] = {}
    first_bad = None  # (line, column order, message)
    for order, col in enumerate(present):
        out, i = [], index[col.name]
        for line, fields in rows:
            v, why = _parse(fields[i], col)
            if why is None and v is None and not col.nullable:
                why = "is empty, but the column must have a value"
            rng = col.range
            if why is None and v is not None and rng is not None:
                lo, hi = rng
                if not math.isfinite(v):
                    why = "is not a finite number"
                elif col.name in POSITIVE and not v > 0:
                    why = "is not > 0"
                elif (lo is not None and v < lo) or (hi is not None and v > hi):
                    why = (f"is outside the column's range [{lo:g}, "
                           f"{'inf' if hi is None else format(hi, 'g')}]")
            if why is not None:
                if first_bad is None or (line, order) < first_bad[:2]:
                    first_bad = (
                        line,
                        order,
                        f"column {col.name!r}, line {line}: {_short(fields[i])} {why}",
                    )
                break
            out.append(v)
        values[col.name] = out
    if first_bad is not None:
        fail(first_bad[2])
    if "status" in values:
        for name in sch.ok_requires:
            if name not in values:
                continue
            for (line, _), status, v in zip(rows, values["status"], values[name], strict=True):
                if status == "ok" and v is None:
                    fail(f"column {name!r}, line {line}: empty on a row with status 'ok'")
    if sch.keys and all(k in values for k in sch.keys):
        seen: dict[tuple, int] = {}
        for r, (line, _) in enumerate(rows):
            key = tuple(values[k][r] for k in sch.keys)
            if key in seen:
                fail(f"line {line} repeats the row of line {seen[key]} (the same "
                     f"{', '.join(sch.keys)}: {_short(key)})")
            seen[key] = line
    problem = _row_problem(rows, values)
    if problem:
        fail(problem)
    if expect is not None:
        problem = _grid_problem(sch, rows, values, check_expect(expect, sch))
        if problem:
            fail(problem)
    for name in sch.constant:
        vals = values[name]
        for (line, _), v in zip(rows, vals, strict=True):
            if v != vals[0] and not (v is None and vals[0] is None):
                fail(
                    f"column {name!r}, line {line}: {_short(v)} differs from {_short(vals[0])} "
                    f"on line {rows[0][0]}; one job's table holds a single {name}"
                )

    data = {}
    for col in sch.columns:
        if col.name not in values:
            if fill_optional:
                data[col.name] = _column(pd, np, col, [None] * len(rows))
            continue
        data[col.name] = _column(pd, np, col, values[col.name])
    return pd.DataFrame(data, index=pd.RangeIndex(len(rows)))


#: Methods of the tables that are not registered bounds, with the kinds their rows may have.
NON_BOUND_METHODS = {"local_only": ("reference",), "central_laplace": ("reference",),
                     "local": ("upper",), "nonprivate": ("nonprivate",),
                     "clones_tiers": ("upper",)}
#: Columns that hold a result: empty on every row whose status is not ``ok``.
RESULT_COLUMNS = ("eps", "mse", "accuracy")
#: Relative slack of the cross-column checks (values written with 17 significant digits).
_RTOL = 1e-9


def _row_problem(rows: list, values: dict) -> str | None:
    """The first row that breaks a rule linking its columns (one line), else None.

    Rules, each applied when its columns are present: the target ``delta`` in (0, 1); no
    result (``eps``, ``mse``, ``accuracy``) on a row that is not ``ok``; a method is a
    registered bound of the row's ``kind`` or a reference of :data:`NON_BOUND_METHODS`;
    rigorous and exact-lower rows never above the local budget (``eps <= eps0``: every bound
    is at most max eps_i); ``ratio_to_lower = eps / lower_eps`` and ``upper_to_lower =
    upper_eps / lower_eps``; ``mse_ci_low <= mse <= mse_ci_high``; a calibrated run never
    above its target (``bound_eps``, ``eps_achieved`` at most ``target_eps``).
    """
    import shuffledp

    kinds = {name: shuffledp.get_bound(name).info.kind for name in shuffledp.list_bounds()}

    def get(name, r):
        col = values.get(name)
        return None if col is None else col[r]

    def above(a, b):
        return a is not None and b is not None and a > b * (1.0 + _RTOL) + 1e-300

    def off(a, b):
        return a is not None and b is not None and abs(a - b) > _RTOL * max(abs(b), 1e-300)

    for r, (line, _) in enumerate(rows):
        status = get("status", r)
        d = get("delta", r)
        if d is not None and not 0.0 < d < 1.0:
            return f"column 'delta', line {line}: {d!r} is not a target delta in (0, 1)"
        if status is not None and status != "ok":
            for name in RESULT_COLUMNS:
                if get(name, r) is not None:
                    return (f"column {name!r}, line {line}: a value on a row with status "
                            f"{status!r} (a result belongs to ok rows only)")
            continue
        method, kind = get("method", r), get("kind", r)
        if method is not None and kind is not None:
            allowed = (kinds[method],) if method in kinds else NON_BOUND_METHODS.get(method)
            if allowed is None:
                return (f"column 'method', line {line}: {method!r} is neither a registered "
                        "bound nor a reference")
            if kind not in allowed:
                return (f"column 'kind', line {line}: {kind!r}, but {method} is "
                        f"{' or '.join(allowed)}")
        if kind in ("upper", "lower") and above(get("eps", r), get("eps0", r)):
            return (f"column 'eps', line {line}: {get('eps', r)!r} above the local budget eps0 "
                    f"= {get('eps0', r)!r} (no bound is above max eps_i)")
        for ratio, num in (("ratio_to_lower", "eps"), ("upper_to_lower", "upper_eps")):
            lo, top, rat = get("lower_eps", r), get(num, r), get(ratio, r)
            if rat is not None and lo is not None and top is not None and lo > 0 and \
                    off(rat, top / lo):
                return (f"column {ratio!r}, line {line}: {rat!r} is not {num} / lower_eps = "
                        f"{top / lo!r}")
        lo, mse, hi = get("mse_ci_low", r), get("mse", r), get("mse_ci_high", r)
        if mse is not None and (above(lo, mse) or above(mse, hi)):
            return (f"column 'mse', line {line}: {mse!r} outside its interval "
                    f"[{lo!r}, {hi!r}]")
        for name in ("bound_eps", "eps_achieved"):
            if kind not in ("reference", "nonprivate") and above(get(name, r),
                                                                  get("target_eps", r)):
                return (f"column {name!r}, line {line}: {get(name, r)!r} above the target "
                        f"eps {get('target_eps', r)!r} (a calibrated run meets its target)")
        problem = _tier_problem(get("tier_eps", r), get("tier_eps_targets", r),
                                get("tier_users", r), get("target_eps", r))
        if problem:
            return f"column 'tier_eps', line {line}: {problem}"
    return None


def _tier_problem(eps, targets, users, target) -> str | None:
    """The per-level columns of an SGD row (';'-separated): as many levels in each, numbers,
    every level's eps at most its own target (or the row's target when no per-level target
    is given)."""
    if eps is None or eps == "":
        return None
    try:
        e = [float(v) for v in str(eps).split(";")]
        t = [float(v) for v in str(targets).split(";")] if targets not in (None, "") else []
        u = [int(v) for v in str(users).split(";")] if users not in (None, "") else []
    except ValueError:
        return f"{eps!r} / {targets!r} / {users!r} are not ';'-separated numbers"
    if (t and len(t) != len(e)) or (u and len(u) != len(e)):
        return f"{len(e)} levels, but {len(t)} targets and {len(u)} user counts"
    caps = t if t else [target] * len(e)
    for k, (a, b) in enumerate(zip(e, caps, strict=True)):
        if b is not None and a > b * (1.0 + 1e-3):  # 4 significant digits, rounded up
            return f"level {k}: eps {a!r} above its target {b!r}"
    return None


def _grid_value(col: Column, v: object):
    """A grid value in the type its column parses to (1000.0 -> 1000 for an integer column)."""
    if v is None:
        return None
    if col.type == NUMBER:
        return float(v)
    if col.type == INTEGER:
        if isinstance(v, float) and not v.is_integer():
            raise ValueError(f"grid value {v!r} of integer column {col.name!r}")
        return int(v)
    if col.type == BOOLEAN:
        return bool(v)
    return str(v)


def check_expect(expect: object, sch: TableSchema) -> dict:
    """Normalise the rows a table must hold.

    ``expect`` is ``{"blocks": [block, ...], "open": [column, ...]}``: each block maps columns
    to lists of values, and the table must hold at least one row for every combination of
    each block (their Cartesian product), and exactly ``repeat`` rows (default 1: not
    checked beyond one) when given (e.g. one row per training seed); every row must also fall
    inside some block, except in the ``open`` columns (e.g. ``method``, where a job adds its
    reference lower bound).
    A bare mapping is one block with no open column.  Columns must be declared.
    """
    repeat = 1
    if isinstance(expect, Mapping) and "blocks" in expect:
        blocks, open_cols = expect["blocks"], list(expect.get("open", ()))
        repeat = expect.get("repeat", 1)
        if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
            raise ValueError(f"expect repeat must be an integer >= 1, got {repeat!r}")
    elif isinstance(expect, Mapping):
        blocks, open_cols = [expect], []
    else:
        raise TypeError(f"expect must be a mapping, not {type(expect).__name__}")
    out = []
    for block in blocks:
        norm = {}
        for name, vals in block.items():
            if name not in sch.names:
                raise ValueError(f"expect names column {name!r}, not a column of {sch.kind!r}")
            col = sch.column(name)
            norm[name] = [_grid_value(col, v) for v in vals]
        out.append(norm)
    return {"blocks": out, "open": open_cols, "repeat": repeat}


def _grid_problem(sch: TableSchema, rows: list, values: dict, expect: dict) -> str | None:
    """The first row outside the grid, or the first combination of it with no row (one line)."""
    import itertools

    blocks, open_cols = expect["blocks"], set(expect["open"])
    for block in blocks:
        absent = [c for c in block if c not in values]
        if absent:
            return f"column(s) {_names(absent)} missing, but the grid of this table needs them"

    def fmt(combo):
        return ", ".join(f"{k}={v!r}" for k, v in combo)

    def inside(r, block):
        return all(values[c][r] in vals for c, vals in block.items() if c not in open_cols)

    for r, (line, _) in enumerate(rows):
        if blocks and not any(inside(r, b) for b in blocks):
            cols = list(dict.fromkeys(c for b in blocks for c in b if c not in open_cols))
            got = fmt((c, values[c][r]) for c in cols)
            return (f"line {line} ({got}) is outside the grid this table was asked for "
                    "(left from an earlier configuration, or edited)")
    import collections

    repeat = expect.get("repeat", 1)
    for block in blocks:
        names = list(block)
        have = collections.Counter(tuple(values[c][r] for c in names) for r in range(len(rows)))
        for combo in itertools.product(*(block[c] for c in names)):
            if combo not in have:
                return (f"no row for {fmt(zip(names, combo, strict=True))}, which its grid "
                        "asks for (a row was deleted or the job did not finish)")
            if repeat > 1 and have[combo] != repeat:
                return (f"{have[combo]} rows for {fmt(zip(names, combo, strict=True))}, where "
                        f"its grid asks for {repeat} (one per seed; a row was deleted or "
                        "repeated)")
    return None


def _column(pd, np, col: Column, vals: list):
    """Typed column from parsed values (None = empty)."""
    if col.type == NUMBER:
        return np.array([np.nan if v is None else v for v in vals], dtype=float)
    if col.type == INTEGER:
        return pd.array(vals, dtype="Int64") if col.nullable else np.array(vals, dtype=np.int64)
    if col.type == BOOLEAN:
        return pd.array(vals, dtype="boolean") if col.nullable else np.array(vals, dtype=bool)
    return pd.Series(vals)  # text: str dtype (pandas >= 3) or object, NaN/None when empty


def concat(paths: Iterable[str | os.PathLike], kind: str, expect: Mapping | None = None):
    """Read every piece of ``kind`` (as :func:`piece_kind`, so all pieces are validated
    against the same declared columns and types) and concatenate them.

    ``expect``: piece path -> the rows it must hold (``expect`` of :func:`read_table`); every
    path must have an entry when given.

    Pieces may differ only in optional columns (e.g. the nonprivate SGD run has no
    ``local_eps_max``): those are empty on the rows of the pieces without them, and columns no
    piece has are left out.  Returns the DataFrame in declared column order.
    """
    import numpy as np
    import pandas as pd

    paths = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    if not paths:
        raise ValueError(f"no {kind!r} tables to concatenate")
    sch = schema(kind)
    if expect is not None:
        lacking = [os.fspath(p) for p in paths if os.fspath(p) not in expect]
        if lacking:
            raise ValueError(f"expect has no grid for {_names(lacking)}")
    frames = [read_table(p, piece_kind(kind), fill_optional=False,
                         expect=None if expect is None else expect[os.fspath(p)])
              for p in paths]
    present = [n for n in sch.names if any(n in f.columns for f in frames)]
    filled = []
    for f in frames:
        f = f.copy()
        for name in present:
            if name not in f.columns:  # an optional column: empty, of its declared type
                col = sch.column(name)
                f[name] = _column(pd, np, Column(name, col.type, True, True, col.values),
                                  [None] * len(f))
        filled.append(f[present])
    return pd.concat(filled, ignore_index=True, sort=False)
