"""The package's only file-reading adapter: budget files for the CLI and for users.

The library proper is pure; this module reads a file and hands its content to the parsers
:meth:`BudgetProfile.from_csv_text` and :meth:`BudgetProfile.from_npy_bytes` (the accepted
formats are described in :mod:`shuffledp.params`).
"""

from __future__ import annotations

import os
from pathlib import Path

from shuffledp.errors import short_repr
from shuffledp.params import BudgetProfile, describe

__all__ = ["load_budgets"]


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
    shown = short_repr(str(p))
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
            return BudgetProfile.from_npy_bytes(raw, label=p.name)
        text = raw.decode("utf-8-sig")  # drops a UTF-8 byte-order mark
        return BudgetProfile.from_csv_text(text, label=p.name)
    except UnicodeDecodeError:
        raise ValueError(f"budgets file {shown} is not UTF-8 text (expected CSV)") from None
    except ValueError as err:
        raise ValueError(f"{name}: {err}") from None
