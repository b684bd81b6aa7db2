"""Test collection for the whole repository (tests/ and the doctests of src/shuffledp).

The doctests of ``shuffledp.sgd`` need the SGD extra (torch); they are collected by
tests/sgd/test_sgd_doctests.py, which skips with a reason when torch is missing, so the plain
``--doctest-modules`` collection leaves that package out.
"""

from __future__ import annotations

import os
from pathlib import Path

# One BLAS/OpenMP thread per test process: the suite runs on two xdist workers (pyproject's
# addopts) on two cores, and the BLAS threads of one worker competing with the other worker
# made a test 7x slower in the full run (39 s alone on one thread, 264 s in the suite).
# The workers are started after this file is read, so they inherit the setting; a value the
# caller set wins.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

SGD_PACKAGE = Path(__file__).resolve().parent / "src" / "shuffledp" / "sgd"


def pytest_ignore_collect(collection_path, config):
    """Leave ``src/shuffledp/sgd`` to tests/sgd/test_sgd_doctests.py."""
    path = Path(collection_path).resolve()
    if path == SGD_PACKAGE or SGD_PACKAGE in path.parents:
        return True
    return None


#: Library modules whose doctests need an optional extra (module file -> the modules it needs).
DOCTEST_NEEDS = {"accounting.py": ("dp_accounting",)}


def pytest_collection_modifyitems(config, items):
    """Skip, with the reason, the doctests of modules whose optional extra is missing."""
    import importlib.util

    import pytest

    for item in items:
        path = Path(str(item.fspath)).resolve()
        if path.parent != SGD_PACKAGE.parent or path.name not in DOCTEST_NEEDS:
            continue
        gone = [m for m in DOCTEST_NEEDS[path.name] if importlib.util.find_spec(m) is None]
        if gone:
            item.add_marker(pytest.mark.skip(
                reason=f"needs {', '.join(gone)} (pip install -e '.[sgd]')"))
