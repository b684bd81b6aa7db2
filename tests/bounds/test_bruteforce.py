"""Brute force on tiny n: the exact law of shuffled binary randomized response.

For n <= 8 users we enumerate every dataset x in {0,1}^n, every report vector y in {0,1}^n
(probability prod_i of q_i or 1 - q_i, q_i = e^{eps_i}/(1+e^{eps_i})), and group the report
vectors by the multiset the analyst sees (the number of ones).  The true delta(eps) is the
maximum of the hockey-stick divergence over every pair of neighbouring datasets (x, x' differ
in one user).  This enumeration shares no code with the library (docs/theory.md, section 9; last
bullet): `rr_exact` must equal it and `clones` must dominate it.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from shuffledp import BudgetProfile
from shuffledp.bounds.clones import clones_delta
from shuffledp.bounds.rr_exact import rr_exact_delta


def _shuffled_laws(eps: np.ndarray) -> dict[tuple[int, ...], np.ndarray]:
    """Law of the multiset (count of ones) for every dataset, by full enumeration."""
    n = eps.size
    q = np.exp(eps) / (1.0 + np.exp(eps))
    reports = np.array(list(itertools.product((0, 1), repeat=n)), dtype=int)  # (2^n, n)
    laws = {}
    for x in itertools.product((0, 1), repeat=n):
        truthful = reports == np.array(x)[None, :]
        prob = np.prod(np.where(truthful, q[None, :], 1.0 - q[None, :]), axis=1)
        law = np.zeros(n + 1)
        np.add.at(law, reports.sum(axis=1), prob)
        laws[x] = law
    return laws


def _true_delta(eps: np.ndarray, grid: np.ndarray) -> np.ndarray:
    n = eps.size
    laws = _shuffled_laws(eps)
    best = np.zeros(grid.size)
    for x in laws:
        for v in range(n):
            xp = list(x)
            xp[v] = 1 - xp[v]
            p, q = laws[x], laws[tuple(xp)]
            h = np.maximum(p[None, :] - np.exp(grid)[:, None] * q[None, :], 0.0).sum(axis=1)
            best = np.maximum(best, h)
    return best


PROFILES = [
    [1.0, 1.0],
    [0.5] * 3,
    [2.0] * 5,
    [1.5] * 8,
    [3.0] * 6,
    [0.2, 1.7],
    [0.4, 1.0, 2.5],
    [0.3, 0.3, 1.2, 2.0],
    [0.5, 0.9, 1.3, 1.3, 2.2],
    [0.1, 0.8, 1.1, 1.6, 2.0, 3.0],
    [0.6, 0.6, 0.6, 1.8, 1.8, 2.4, 2.4],
    [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0],
]


@pytest.fixture(scope="module", params=range(len(PROFILES)), ids=lambda i: f"p{i}")
def case(request):
    eps = np.array(PROFILES[request.param])
    grid = np.linspace(0.0, eps.max() * 1.05, 15)
    return BudgetProfile.from_arrays(eps), grid, _true_delta(eps, grid)


def test_rr_exact_equals_brute_force(case):
    profile, grid, truth = case
    got = np.array([rr_exact_delta(profile=profile, eps=float(e)) for e in grid])
    np.testing.assert_allclose(got, truth, rtol=0, atol=1e-12)


@pytest.mark.parametrize("clone", ["stronger", "standard"])
def test_clones_dominate_brute_force(case, clone):
    profile, grid, truth = case
    got = np.array([clones_delta(profile=profile, eps=float(e), clone=clone) for e in grid])
    assert np.all(got >= truth - 1e-12), np.max(truth - got)


def test_rr_family_search_is_below_truth(case):
    # the documented family for larger n (forced here with exhaustive_n=0) is a lower bound
    profile, grid, truth = case
    got = np.array(
        [rr_exact_delta(profile=profile, eps=float(e), exhaustive_n=0) for e in grid]
    )
    assert np.all(got <= truth + 1e-12)
    if profile.is_identical:
        # identical budgets always use the exact k-enumeration, so the family is exhaustive
        np.testing.assert_allclose(got, truth, rtol=0, atol=1e-12)
