"""Unions of adjacent victim groups in ``blanket_eps`` (docs/theory.md 15.1, "Unions of groups").

What is checked.

* A union of adjacent victim groups, evaluated as one group on the plan's user classes
  (``bound._union``), is an upper bound of the exact shuffled divergence of every victim in
  it: at n = 2, 3 (every victim, pair and dataset of the enumeration of
  tests/bounds/test_blanket_truth.py; binned certified lower values for the continuous
  families), for every run of adjacent groups of small personalized profiles.
* Its check form (``quick``: the lead choice alone, else 1) never certifies a
  level below that truth: asked for 0.5, 0.9 and 0.999 times the truth, it returns a value
  above the level.
* On a large profile the unions change the time, not the result: ``blanket_eps`` returns the
  same eps with ``Family.blanket_union_ratio`` at 1 (no unions) and at its value, with fewer
  group evaluations, and every group's full bound at the returned eps is at most delta unless
  a union certified it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import shuffledp.bounds.blanket.bound as bb
from shuffledp import BudgetProfile, clear_caches
from shuffledp.families import get_family

sys.path.insert(0, str(Path(__file__).parent))
import test_blanket_truth as truth  # noqa: E402

#: (mechanism, budgets): personalized profiles whose plans have 2-4 groups
CASES = [
    ("binary_rr", [4.0, 0.5, 1.0]),
    ("binary_rr", [0.5, 1.0, 2.0]),
    ("krr:3", [0.5, 4.0, 4.0]),
    ("krr:4", [4.0, 0.5, 1.0]),
    ("oue:3", [0.5, 1.0, 2.0]),
    ("duchi", [1.0, 1.0, 4.0, 4.0]),
    ("piecewise", [4.0, 0.5, 1.0]),
    ("laplace", [4.0, 0.5]),
    ("gaussian", [4.0, 0.5]),
]


def _profile(mechanism: str, budgets: list[float]) -> BudgetProfile:
    if mechanism in ("gaussian", "gaussian_shared"):
        return BudgetProfile(eps=budgets, delta=truth.GAUSS_DELTA)
    return BudgetProfile.from_arrays(budgets)


def _victims_truth(mechanism: str, budgets: list[float], victims: set[float], grid,
                   every: bool) -> np.ndarray:
    """The largest dataset truth over the victims whose budget is in ``victims``."""
    kind = mechanism.partition(":")[0]
    continuous = kind in ("laplace", "piecewise", "gaussian", "gaussian_shared")
    best = np.full(len(grid), -1.0)
    for eps_v in sorted(victims):
        others_eps = list(budgets)
        others_eps.remove(eps_v)
        pairs = truth.CONTINUOUS_PAIRS if continuous else truth.DISCRETE_PAIRS[kind]
        for pair in pairs:
            values = ([-1.0, 0.0, 1.0] + [x for x in pair if x not in (-1.0, 0.0, 1.0)]
                      if continuous else truth._others_values(mechanism))
            for xs in truth._datasets(others_eps, values, every):
                others = list(zip(others_eps, xs, strict=True))
                res = (32, 4) if continuous else (16, 2)
                best = np.maximum(best, truth.dataset_truth(mechanism, eps_v, pair, others,
                                                            grid, res))
    return best


@pytest.mark.parametrize("mechanism,budgets", CASES, ids=str)
def test_unions_of_groups_dominate_the_truth(mechanism, budgets):
    family = get_family(mechanism)
    profile = _profile(mechanism, budgets)
    clear_caches()
    groups, classes = bb.blanket_plan(profile, family)
    assert len(groups) >= 2, "the profile must give a union to check"
    grid = truth.eps_grid_for(budgets)
    every = mechanism not in ("laplace", "gaussian") or len(budgets) == 2
    seen = 0
    for i in range(len(groups)):
        for j in range(i + 1, len(groups)):
            ug, uc = bb._union(groups, classes, i, j)
            victims = {float(e) for e in budgets if ug[0].eps_lo <= e <= ug[0].eps_hi}
            t = _victims_truth(mechanism, budgets, victims, grid, every)
            for e, te in zip(grid, t, strict=True):
                full = bb._group_value(family, ug, uc, 0, float(e), 0.0)
                assert full >= te - truth.TOL, (mechanism, budgets, i, j, e, full, te)
                if te > 1e-6:
                    for f in (0.5, 0.9, 0.999):
                        level = f * te
                        got = bb._group_value(family, ug, uc, 0, float(e), level, None,
                                              quick=True)
                        assert got > level, (mechanism, budgets, i, j, e, level, got, te)
                    seen += 1
    assert seen > 0, "no informative truth above 1e-6"


@pytest.mark.parametrize("mechanism", ["gaussian", "binary_rr"])
def test_unions_change_the_time_not_the_eps(mechanism, monkeypatch):
    """2,000 users with budgets U[0.5, 2] (Gaussian: delta_i = 1e-8), delta = 1e-6."""
    rng = np.random.default_rng(20261207)
    eps = rng.uniform(0.5, 2.0, size=2000)
    profile = (BudgetProfile(eps=eps, delta=np.full(eps.size, 1e-8))
               if mechanism == "gaussian" else BudgetProfile(eps=eps))
    family = get_family(mechanism)
    assert family.blanket_union_ratio > 1.0
    calls: list[bool] = []
    orig = bb._group_value

    def counted(*args, **kwargs):
        calls.append(bool(kwargs.get("quick", False)))
        return orig(*args, **kwargs)

    monkeypatch.setattr(bb, "_group_value", counted)
    out = {}
    for ratio in (1.0, type(family).blanket_union_ratio):
        monkeypatch.setattr(type(family), "blanket_union_ratio", ratio)
        clear_caches()
        calls.clear()
        out[ratio] = (bb.blanket_eps(profile=profile, delta=1e-6, mechanism=mechanism),
                      len(calls), sum(calls))
    (e_no, n_no, q_no), (e_yes, n_yes, q_yes) = out.values()
    assert q_no == 0 and q_yes > 0
    assert n_yes < n_no
    assert e_yes == pytest.approx(e_no, rel=1e-6)
    monkeypatch.setattr(bb, "_group_value", orig)
    groups, classes = bb.blanket_plan(profile, family)
    for gi in range(len(groups)):
        assert bb._group_value(family, groups, classes, gi, e_yes, 0.0) <= 1e-6 * (1 + 1e-9)
