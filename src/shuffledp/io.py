"""The package's only file-reading adapter: budget files for the CLI and for users.

The library proper is pure; this module reads a file and hands its content to the parsers
:meth:`BudgetProfile.from_csv_text` and :meth:`BudgetProfile.from_npy_bytes`.
"""

from __future__ import annotations

import os
from pathlib import Path

from shuffledp.params import BudgetProfile

__all__ = ["load_budgets"]


def load_budgets(path: str | os.PathLike) -> BudgetProfile:
    """Read per-user budgets from a ``.csv`` (columns ``eps`` and optional ``delta``) or a
    ``.npy`` file.  Raises ``ValueError`` naming the file for anything malformed."""
    p = Path(path)
    if not p.exists():
        raise ValueError(f"budgets file {str(p)!r} does not exist")
    if not p.is_file():
        raise ValueError(f"budgets file {str(p)!r} is not a file")
    try:
        if p.suffix.lower() == ".npy":
            return BudgetProfile.from_npy_bytes(p.read_bytes(), label=p.name)
        return BudgetProfile.from_csv_text(p.read_text(encoding="utf-8"), label=p.name)
    except UnicodeDecodeError:
        raise ValueError(f"budgets file {str(p)!r} is not UTF-8 text (expected CSV)") from None
    except ValueError as err:
        raise ValueError(f"{p.name}: {err}") from None
