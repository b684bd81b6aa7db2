"""Exact lower bound from shuffled k-ary randomized response (krr_exact)."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

from shuffledp import BudgetProfile, ParameterRegimeError, get_bound
from shuffledp.bounds.clones import clones_delta
from shuffledp.bounds.krr_exact import krr_exact_delta

EPS_GRID = [0.0, 0.1, 0.3, 0.6, 1.0, 1.5, 2.5]


def _brute_force(n: int, k: int, eps0: float, eps: float) -> float:
    """max over every neighbouring pair (victim 0 vs 1, all values of the others) and both
    directions of the hockey-stick divergence of the exact histogram laws, by enumerating
    every report vector (independent of the library)."""
    p = math.exp(eps0) / (math.exp(eps0) + k - 1)
    q = 1.0 / (math.exp(eps0) + k - 1)

    def law(values):
        out: Counter = Counter()
        for reports in itertools.product(range(k), repeat=len(values)):
            w = 1.0
            for x, r in zip(values, reports, strict=True):
                w *= p if x == r else q
            out[tuple(Counter(reports).get(c, 0) for c in range(k))] += w
        return out

    best = 0.0
    for others in itertools.product(range(k), repeat=n - 1):
        a, b = law((0, *others)), law((1, *others))
        for x, y in ((a, b), (b, a)):
            hs = sum(max(x[h] - math.exp(eps) * y.get(h, 0.0), 0.0) for h in x)
            best = max(best, hs)
    return best


@pytest.mark.parametrize(("n", "k", "eps0"), [(2, 3, 1.0), (3, 3, 0.5), (4, 3, 2.0), (3, 4, 1.5)])
def test_equals_brute_force(n, k, eps0):
    prof = BudgetProfile.identical(n=n, eps0=eps0)
    for eps in EPS_GRID:
        got = krr_exact_delta(profile=prof, eps=eps, k=k)
        truth = _brute_force(n, k, eps0, eps)
        # a lower bound: never above the truth, below it by at most the subtracted round-off
        # allowance (16 u M (sum P + e^eps sum Q), about 1e-12 here)
        assert -1e-13 <= truth - got <= 1e-11, (n, k, eps0, eps, truth - got)


@pytest.mark.parametrize(("n", "eps0"), [(50, 1.0), (300, 2.0), (1000, 1.0)])
def test_below_stronger_clones(n, eps0):
    # Stronger clones cover k-RR with identical budgets (FMT 2023, Errata).
    prof = BudgetProfile.identical(n=n, eps0=eps0)
    for eps in (0.05, 0.2, 0.5):
        assert krr_exact_delta(profile=prof, eps=eps, k=3) <= clones_delta(
            profile=prof, eps=eps, clone="stronger") + 1e-12


def test_family_is_below_exhaustive_and_eps_non_increasing_in_n():
    prof = BudgetProfile.identical(n=8, eps0=1.0)
    for eps in (0.1, 0.5):
        fam = krr_exact_delta(profile=prof, eps=eps, k=3, exhaustive_n=0)
        full = krr_exact_delta(profile=prof, eps=eps, k=3)
        assert fam <= full + 1e-12
    bound = get_bound("krr_exact")
    e = [bound.eps(profile=BudgetProfile.identical(n=n, eps0=2.0), delta=1e-6)
         for n in (100, 300, 1000)]
    assert e[0] >= e[1] >= e[2]


def test_regime_and_bad_input():
    bound = get_bound("krr_exact")
    with pytest.raises(ParameterRegimeError, match="histogram cells"):
        bound.eps(profile=BudgetProfile.identical(n=5000, eps0=1.0), delta=1e-6)
    with pytest.raises(ParameterRegimeError, match="identical budgets only"):
        bound.eps(profile=BudgetProfile.from_arrays(np.linspace(0.5, 1.0, 50)), delta=1e-6)
    with pytest.raises(ValueError, match="k must be an integer in"):
        bound.eps(profile=BudgetProfile.identical(n=10, eps0=1.0), delta=1e-6, k=2)
    with pytest.raises(ValueError, match="eps must be finite"):
        krr_exact_delta(profile=BudgetProfile.identical(n=10, eps0=1.0), eps=-1.0)
