"""Shared helpers of the workflow scripts: atomic tables and figures, logging, progress.

Scripts are thin adapters: they read inputs and params, call :mod:`shuffledp`, and write tidy
tables through :func:`write_table` (atomic: a temporary file renamed into place, so a killed
job never leaves a partial output).  Every table a later rule reads goes through
:func:`read_table` (from :mod:`tables`, where the columns and types of every table kind are
declared), which fails with one line naming the file when a table is corrupted.  Figures are
drawn only from tables, styled by :mod:`figstyle` (one style per method, paper sizes, one
font size) and saved by :func:`save_figure` (also atomic; PDF and 300 dpi PNG).

Progress (:func:`progress_bar`): a long job shows a tqdm bar (units done of total, rate, ETA)
as one line per update in its log file (follow it with
``tail -f results/<run>/logs/<rule>/<job>.log``) and, when Snakemake runs in a terminal, as a
live bar there too.

Scripts run under Snakemake's ``script:`` directive, which prepends a preamble, so they must
not use ``from __future__`` imports.
"""

import glob
import logging
import os
import shutil
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
    "get_logger",
    "snakemake_kwargs",
    "run_main",
    "progress_bar",
    "load_column",
]


def _atomic_target(path: str | os.PathLike) -> tuple[Path, str]:
    """``(path, a new temporary file beside it)``.  Temporary files of an earlier write of the
    same output that never finished (the job killed mid-write: a SIGKILL leaves no chance to
    clean up) are removed first: only one job writes an output at a time."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        try:
            stale.unlink()
        except FileNotFoundError:  # pragma: no cover - gone meanwhile
            pass
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
    """Save ``fig`` to every path (format from the suffix: vector PDF, 300 dpi PNG), each
    atomically; PDFs carry no creation date, so a rerun gives the same bytes."""
    import matplotlib.pyplot as plt

    for p in paths:
        target, tmp = _atomic_target(p)
        fmt = target.suffix.lstrip(".")
        meta = {"CreationDate": None} if fmt == "pdf" else {}
        try:
            fig.savefig(tmp, format=fmt, bbox_inches="tight", pad_inches=0.03, dpi=300,
                        metadata=meta)
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
    plt.close(fig)


def get_logger(log_path: str | os.PathLike | None, name: str = "shuffledp") -> logging.Logger:
    """A logger writing to the rule's log file (and stderr when there is none)."""
    logger = logging.getLogger(name)
    logger.handlers.clear()
    logger.setLevel(logging.INFO)
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        Path(log_path).write_text("")
        # Both writers append (O_APPEND): log records, uncaught errors and progress bars
        # (stderr) interleave in the rule's log instead of overwriting each other.
        handler: logging.Handler = logging.FileHandler(log_path, mode="a")
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

    A :class:`TableError` (a corrupted input table) or an
    :class:`~shuffledp.compare.InconsistentBoundsError` (a soundness failure) is also printed,
    as its one line, to the console Snakemake runs in: the rule's stderr goes to its log
    (:func:`get_logger`).
    """
    from shuffledp.compare import InconsistentBoundsError

    try:
        main(**snakemake_kwargs(smk))
    except (TableError, InconsistentBoundsError) as err:
        print(f"{type(err).__name__}: {err}", file=sys.__stderr__, flush=True)
        raise


class _LineFile:
    """A text file for tqdm in which each refresh of the bar becomes one line (a log file
    read with ``tail -f`` or an editor shows every update, not carriage returns)."""

    def __init__(self, stream) -> None:
        self.stream = stream

    def write(self, text: str) -> None:
        text = text.replace("\r", "").strip("\n")
        if text.strip():
            self.stream.write(text + "\n")

    def flush(self) -> None:
        self.stream.flush()


class ProgressBar:
    """A ``progress(done, total)`` callback of :mod:`shuffledp.experiments` drawing tqdm bars
    (:func:`progress_bar`); a context manager that closes them."""

    def __init__(self, desc: str, total: int | None, streams: list) -> None:
        self.desc, self.total, self.streams = desc, total, streams
        self.bars: list = []
        self.done = 0

    def _open(self, total: int) -> None:
        from tqdm import tqdm

        self.total = total
        for stream, live in self.streams:
            # position=0: each bar has its own stream (no cursor moves between them); a
            # terminal of unknown width (0 columns) gets 100
            width = shutil.get_terminal_size((100, 20)).columns if live else None
            self.bars.append(tqdm(total=total, desc=self.desc, unit="pt", ascii=not live,
                                  file=stream if live else _LineFile(stream), position=0,
                                  mininterval=0.5 if live else 0.0, ncols=width or 80,
                                  leave=live))

    def __call__(self, done: int, total: int) -> None:
        if not self.bars or total != self.total:
            self.close()
            self._open(total)
            self.done = 0
        if done != self.done:
            for bar in self.bars:
                bar.update(done - self.done)
        self.done = done

    def close(self) -> None:
        for bar in self.bars:
            bar.close()
        self.bars = []

    def __enter__(self) -> "ProgressBar":
        if self.total is not None:
            self(0, self.total)
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def progress_bar(desc: str, total: int | None = None) -> ProgressBar:
    """A progress callback ``(done, total)`` showing a tqdm bar named ``desc``.

    The bar goes to ``sys.stderr``, which :func:`get_logger` points at the rule's log file
    (one line per update there), and, when Snakemake itself runs in a terminal
    (``sys.__stderr__`` is a tty), live to that terminal too.  ``total`` may be left to the
    first call.  Use as a context manager (``with progress_bar(...) as bar:``) so the bars
    are closed.
    """
    streams = [(sys.stderr, bool(getattr(sys.stderr, "isatty", lambda: False)()))]
    term = sys.__stderr__
    if term is not None and term is not sys.stderr and term.isatty():
        streams.append((term, True))
    return ProgressBar(desc, total, streams)


def load_column(path: str | os.PathLike | None, column: str):
    """One numeric column of a user CSV file (the estimation experiments' optional data
    input), as a float array; ``ValueError`` naming the file and the column."""
    import pandas as pd

    if not path:
        raise ValueError("data distribution 'csv' needs data.csv_path")
    df = pd.read_csv(path)
    if column not in df.columns:
        raise ValueError(f"data file {path} has no column {column!r}; columns: {list(df)}")
    vals = pd.to_numeric(df[column], errors="coerce").to_numpy(dtype=float)
    if len(vals) == 0 or not (vals == vals).all():
        raise ValueError(f"data column {column!r} of {path} must be numeric and non-empty")
    return vals


def estimation_job(task_name: str, rule: str, *, inputs, outputs, params, log=None) -> None:
    """The body of the ``simulate_mean`` / ``simulate_frequency`` jobs: build the task
    (``"mean"`` or ``"frequency"``) from the section (with the optional data column), run
    :func:`shuffledp.experiments.run_estimation` with a progress bar, write the table."""
    import pandas as pd

    from shuffledp.experiments import (
        ESTIMATION_COLUMNS,
        EstimationConfig,
        FrequencyTask,
        MeanTask,
        run_estimation,
    )

    get_logger(log)
    section = params["section"]
    data = section.get("data", {})
    pool = None
    if data.get("distribution") == "csv":
        pool = load_column(inputs.get("data") or data.get("csv_path"), data["column"])
    task_cls = {"mean": MeanTask, "frequency": FrequencyTask}[task_name]
    task = task_cls.from_section(section, pool=pool)
    with progress_bar(f"{rule} {params['method']}") as bar:
        rows = run_estimation(task, method=params["method"],
                              config=EstimationConfig.from_section(section),
                              profiles=params["profiles"], seed=params["seed"], progress=bar)
    write_table(pd.DataFrame(rows, columns=ESTIMATION_COLUMNS), outputs["table"])
