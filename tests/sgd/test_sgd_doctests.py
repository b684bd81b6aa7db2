"""The doctests of the ``shuffledp.sgd`` package (they need torch; the repository's
conftest.py keeps them out of the plain ``--doctest-modules`` collection)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

pytest.importorskip("torch", reason="the SGD extra is not installed (pip install -e '.[sgd]')")

import shuffledp.sgd

MODULES = ["shuffledp.sgd"] + [f"shuffledp.sgd.{m.name}"
                               for m in pkgutil.iter_modules(shuffledp.sgd.__path__)]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = [t for t in finder.find(module, name) if t.examples]
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} doctest example(s) failed in {name}"


def test_every_module_has_examples():
    counted = sum(len(t.examples) for name in MODULES
                  for t in doctest.DocTestFinder().find(importlib.import_module(name), name))
    assert counted >= 5
