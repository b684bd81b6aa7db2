"""Column declarations of the experiment tables: pure data, no I/O.

Each function of :mod:`shuffledp.experiments` that returns table rows declares the columns
of its table beside it (``BOUNDS_VS_N_TABLE`` in :mod:`~shuffledp.experiments.grids`,
``ESTIMATION_TABLE`` in :mod:`~shuffledp.experiments.estimation`, ...) as a :class:`Columns`:
every column with its type, whether it may be absent (``optional``) and whether its cells may
be empty (``nullable``).  The workflow validates every table it reads against these
declarations (``workflow/scripts/table_schemas.py``); the library itself never reads a table.

Column types: ``number`` (a float; empty or nan is null), ``integer``, ``boolean``,
``string``, ``identifier`` (a method or mechanism name, ``[a-z][a-z0-9_]*``) and ``choice``
(one of ``values``).

>>> t = Columns((Column("method", IDENTIFIER), Column("eps", NUMBER, nullable=True)))
>>> t.names, t.required
(['method', 'eps'], ['method', 'eps'])
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["NUMBER", "INTEGER", "BOOLEAN", "STRING", "IDENTIFIER", "CHOICE", "TYPES",
           "STATUS", "BOUND_KINDS", "RANGES", "POSITIVE", "Column", "Columns", "col"]

NUMBER = "number"  # a float: 1, 1.5, 1e-06, inf; empty (or nan) is null
INTEGER = "integer"  # 1000 (or 1000.0, as pandas writes an integer column holding empties)
BOOLEAN = "boolean"  # True / False (any case)
STRING = "string"  # any text
IDENTIFIER = "identifier"  # a method / mechanism name: [a-z][a-z0-9_]*
CHOICE = "choice"  # one of Column.values
#: Every column type.
TYPES = (NUMBER, INTEGER, BOOLEAN, STRING, IDENTIFIER, CHOICE)

#: Values of every table's ``status`` column.
STATUS = ("ok", "not_applicable")
#: Values of a bound's ``kind`` (:class:`shuffledp.bounds.BoundInfo`).
BOUND_KINDS = ("approximate", "upper", "lower")


#: Value ranges of the numeric columns by name (every table that has such a column): a value
#: outside, or not finite, is refused when the table is read (a corrupted or hand-edited row,
#: e.g. an ``ok`` row with eps = -1 or 1e300, never reaches a figure).  ``None``: no limit.
RANGES: dict[str, tuple[float | None, float | None]] = {
    "eps": (0.0, 1e4), "lower_eps": (0.0, 1e4), "upper_eps": (0.0, 1e4),
    "bound_eps": (0.0, 1e4), "target_eps": (0.0, 1e4), "eps0": (0.0, 1e4),
    "eps_local_mean": (0.0, 1e4), "delta": (0.0, 1.0), "delta0": (0.0, 1.0),
    "seconds": (0.0, None), "n": (2, None), "ratio_to_lower": (0.0, None),
    "upper_to_lower": (0.0, None), "expected_clones": (0.0, None), "mse": (0.0, None),
    "mse_ci_low": (0.0, None), "mse_ci_high": (0.0, None), "mse_theory": (0.0, None),
    "scale": (0.0, None), "reps": (1, None), "seed": (0, None),
    "accuracy": (0.0, 1.0), "train_accuracy": (0.0, 1.0), "chance": (0.0, 1.0),
    "rounds": (1, None), "n_users": (1, None), "n_params": (1, None), "lr": (0.0, None),
    "clip": (0.0, None), "local_eps_scale": (0.0, 1e4), "local_eps_max": (0.0, 1e4),
}
#: Columns of :data:`RANGES` whose values must also be > 0 (a step size, a clipping norm).
POSITIVE = frozenset({"lr", "clip"})


@dataclass(frozen=True)
class Column:
    """A declared column: ``optional`` = may be absent, ``nullable`` = cells may be empty;
    numeric columns named in :data:`RANGES` hold finite values in that range."""

    name: str
    type: str
    nullable: bool = False
    optional: bool = False
    values: tuple[str, ...] = ()

    @property
    def range(self) -> tuple[float | None, float | None] | None:
        """``(low, high)`` of a numeric column named in :data:`RANGES`, else None."""
        if self.type not in (NUMBER, INTEGER):
            return None
        return RANGES.get(self.name)

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"column {self.name!r}: unknown type {self.type!r}")
        if (self.type == CHOICE) != bool(self.values):
            raise ValueError(f"column {self.name!r}: values go with (only) type {CHOICE!r}")


def col(name: str, type: str, *, nullable: bool = False, optional: bool = False,
        values: Iterable[str] = ()) -> Column:
    """Shorthand for a :class:`Column` in the declarations."""
    return Column(name, type, nullable=nullable, optional=optional, values=tuple(values))


@dataclass(frozen=True)
class Columns:
    """The columns of one table, in order; ``ok_requires``: columns that must not be empty on
    rows with ``status == "ok"``; ``keys``: columns whose values identify a row (no two rows
    may share them)."""

    columns: tuple[Column, ...]
    ok_requires: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        names = [c.name for c in self.columns]
        dup = sorted({n for n in names if names.count(n) > 1})
        unknown = sorted((set(self.ok_requires) | set(self.keys)) - set(names))
        if dup or unknown:
            raise ValueError(f"columns: duplicate {dup} / undeclared {unknown}")

    @property
    def names(self) -> list[str]:
        """Every column name, in order."""
        return [c.name for c in self.columns]

    @property
    def required(self) -> list[str]:
        """The names of the columns that must be present (not ``optional``)."""
        return [c.name for c in self.columns if not c.optional]

    def column(self, name: str) -> Column:
        """The column ``name``."""
        return next(c for c in self.columns if c.name == name)
