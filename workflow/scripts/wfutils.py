"""Shared helpers of the workflow scripts: atomic tables and figures, style, logging.

Scripts are thin adapters: they read inputs and params, call :mod:`shuffledp`, and write tidy
tables through :func:`write_table` (atomic: a temporary file renamed into place, so a killed
job never leaves a partial output).  Every table a later rule reads goes through
:func:`read_table` (from :mod:`tables`, where the columns and types of every table kind are
declared), which fails with one line naming the file when a table is corrupted.  Figures are
drawn only from tables, with :func:`apply_style` and saved by :func:`save_figure` (also
atomic).

Scripts run under Snakemake's ``script:`` directive, which prepends a preamble, so they must
not use ``from __future__`` imports.
"""

import logging
import os
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from table_schemas import TableError, read_table

__all__ = [
    "write_table",
    "read_table",
    "TableError",
    "save_figure",
    "apply_style",
    "method_label",
    "method_style",
    "get_logger",
    "snakemake_kwargs",
    "run_main",
]


def _atomic_target(path: str | os.PathLike) -> tuple[Path, str]:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; outputs get the usual mode
    return path, tmp


def write_table(df, path: str | os.PathLike) -> None:
    """Write a pandas DataFrame as CSV atomically (temporary name, then rename)."""
    path, tmp = _atomic_target(path)
    try:
        df.to_csv(tmp, index=False)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def write_text(text: str, path: str | os.PathLike) -> None:
    """Write text atomically."""
    path, tmp = _atomic_target(path)
    try:
        Path(tmp).write_text(text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def save_figure(fig, paths: Iterable[str | os.PathLike]) -> None:
    """Save ``fig`` to every path (format from the suffix), each atomically."""
    import matplotlib.pyplot as plt

    for p in paths:
        target, tmp = _atomic_target(p)
        try:
            fig.savefig(tmp, format=target.suffix.lstrip("."), bbox_inches="tight")
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
    plt.close(fig)


def apply_style() -> None:
    """One matplotlib style for every figure of the workflow."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "figure.dpi": 110,
            "savefig.dpi": 150,
            "font.size": 9,
            "axes.titlesize": 9,
            "axes.labelsize": 9,
            "legend.fontsize": 7,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "lines.linewidth": 1.4,
            "lines.markersize": 3.5,
        }
    )


_KIND_SUFFIX = {"approximate": " (approx.)", "upper": "", "lower": " (exact lower)"}
_KIND_LINESTYLE = {"approximate": "--", "upper": "-", "lower": ":"}


def method_label(method: str, kind: str) -> str:
    """Legend label: approximate bounds and lower bounds say what they are."""
    return f"{method}{_KIND_SUFFIX.get(kind, '')}"


def method_style(method: str, kind: str, methods: list[str] | None = None) -> dict[str, Any]:
    """Consistent colour per method (by its position in ``methods``) and line style per kind."""
    import matplotlib.pyplot as plt

    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    order = methods or [method]
    idx = order.index(method) if method in order else abs(hash(method))
    extra = ["#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#000000"]
    colours = cycle + extra
    return {
        "color": colours[idx % len(colours)],
        "linestyle": _KIND_LINESTYLE.get(kind, "-"),
        "label": method_label(method, kind),
        "marker": "o" if kind != "lower" else "s",
    }


def get_logger(log_path: str | os.PathLike | None, name: str = "shuffledp") -> logging.Logger:
    """A logger writing to the rule's log file (and stderr when there is none)."""
    logger = logging.getLogger(name)
    logger.handlers.clear()
    logger.setLevel(logging.INFO)
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(log_path, mode="w")
        # Uncaught errors and progress bars (stderr) go to the rule's log too.
        sys.stderr = open(log_path, "a", buffering=1)  # noqa: SIM115
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    return logger


def snakemake_kwargs(smk) -> dict[str, Any]:
    """The keyword arguments of a script's ``main`` from the ``snakemake`` object."""
    params: Mapping[str, Any] = dict(smk.params.items())
    return {
        "inputs": dict(smk.input.items()),
        "outputs": dict(smk.output.items()),
        "params": dict(params),
        "log": smk.log[0] if len(smk.log) else None,
    }


def run_main(main, smk) -> None:
    """Run a script's ``main`` with the ``snakemake`` object's arguments.

    A :class:`TableError` (a corrupted input table) is also printed, as its one line, to the
    console Snakemake runs in: the rule's stderr goes to its log (:func:`get_logger`).
    """
    try:
        main(**snakemake_kwargs(smk))
    except TableError as err:
        print(f"TableError: {err}", file=sys.__stderr__, flush=True)
        raise
