"""Optional extras of the test suite: ``requires("torch")`` marks a test that needs an extra
(skipped with the reason and the install command when it is missing)."""

from __future__ import annotations

import importlib.util

import pytest

#: module -> the pip extra that brings it
EXTRAS = {"torch": "sgd", "sklearn": "sgd", "dp_accounting": "sgd", "snakemake": "workflow",
          "pandas": "workflow", "matplotlib": "workflow", "yaml": "workflow",
          "jsonschema": "workflow", "tqdm": "workflow", "docutils": "workflow"}


def missing(*modules: str) -> list[str]:
    """The modules of ``modules`` that cannot be imported."""
    return [m for m in modules if importlib.util.find_spec(m) is None]


def requires(*modules: str) -> pytest.MarkDecorator:
    """Skip unless every module of ``modules`` is installed (the reason names the extra)."""
    gone = missing(*modules)
    extras = sorted({EXTRAS.get(m, m) for m in gone})
    reason = (f"needs {', '.join(gone)} (pip install -e '.[{','.join(extras)}]')" if gone
              else "")
    return pytest.mark.skipif(bool(gone), reason=reason)


def need(module: str):
    """``pytest.importorskip(module)`` with the reason naming the extra; returns the module."""
    extra = EXTRAS.get(module, module)
    return pytest.importorskip(module, reason=f"needs {module} (pip install -e '.[{extra}]')")
