"""The blanket of the piecewise mechanism for groups of budgets (docs/theory.md 15.4,
"Groups of budgets"): the pair law grows in the convex order with the victim's budget, the
group masses are never above brute-force infima over the group's victims, inputs and outputs,
and whole-bound checks on profiles with many distinct budgets.  The exclusive output region of
the smallest budget (``Piecewise.profile_windows``): tests/bounds/test_window.py."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from shuffledp import BudgetProfile, clear_caches, get_bound
from shuffledp.bounds.blanket.bound import blanket_plan
from shuffledp.families import get_family
from shuffledp.mechanisms import PiecewiseMechanism

FAM = get_family("piecewise")


@dataclass
class _Group:
    eps_lo: float
    eps_hi: float
    delta_hi: float = 0.0
    sigma_lo: float = math.nan
    sigma_hi: float = math.nan


@dataclass
class _Users:
    counts: np.ndarray
    eps_a: np.ndarray
    eps_b: np.ndarray
    delta: np.ndarray
    edges: np.ndarray
    exact: bool = False
    sigma_a: None = None
    sigma_b: None = None
    log_kappa: None = None


def _users(eps_a, eps_b) -> _Users:
    a = np.asarray(eps_a, dtype=np.float64)
    b = np.asarray(eps_b, dtype=np.float64)
    return _Users(np.ones(a.size, dtype=np.int64), a, b, np.zeros(a.size),
                  np.array([0, a.size]), bool(np.all(a == b)))


def _case(eps: float, eps_lo: float, eps_hi: float, users: _Users):
    cases = FAM.blanket_cases(eps, _Group(eps_lo, eps_hi), users)
    assert len(cases) == 1
    return cases[0]


def _stop_loss(values: np.ndarray, probs: np.ndarray, k: np.ndarray) -> np.ndarray:
    return np.maximum(values[None, :] - k[:, None], 0.0) @ probs


BUDGETS = [0.05, 0.3, 0.7, 1.0, 1.5, 2.0, 3.0, 4.0, 8.0]


@pytest.mark.parametrize("eps", [0.0, 0.1, 1.0, 5.0])
def test_pair_law_grows_with_the_victims_budget(eps):
    """F_t <=_cx F_t' for t <= t' (the claim of "Groups of budgets"): equal means and every
    stop-loss value of the smaller budget at most the larger's, on the atoms of both laws and
    a fine grid."""
    users = _users([0.1], [0.1])
    laws = []
    for v in BUDGETS:
        c = _case(eps, v, v, users).cells
        laws.append((c.mean, c.mass))
        assert math.isclose(float(c.mass @ c.mean), 1.0 - math.exp(eps), rel_tol=1e-12,
                            abs_tol=1e-14)
    for (v0, p0), (v1, p1) in zip(laws[:-1], laws[1:], strict=True):
        k = np.unique(np.concatenate([v0, v1, np.linspace(min(v0.min(), v1.min()) - 1.0,
                                                          max(v0.max(), v1.max()) + 1.0,
                                                          4001)]))
        small, large = _stop_loss(v0, p0, k), _stop_loss(v1, p1, k)
        assert np.all(small <= large + 1e-12 * (1.0 + np.abs(k))), float(np.max(small - large))
    # and it is strict somewhere (the claim is not vacuous)
    assert float(np.max(large - small)) > 1e-3


def _brute_mass(eps_u: float, eps_j: float) -> float:
    """inf over inputs x and outputs |y| <= C_u of user j's density, times 2 C_u (the mass
    of user j against the uniform blanket on [-C_u, C_u]), from the mechanism's own pdf."""
    c_u = 1.0 + 2.0 / math.expm1(eps_u / 2.0)
    c_j = 1.0 + 2.0 / math.expm1(eps_j / 2.0)
    if c_j < c_u * (1.0 - 1e-12):
        return 0.0
    mech = PiecewiseMechanism(eps=[eps_j])
    ys = np.linspace(-c_u, c_u, 2001) * (1.0 - 1e-12)  # the range's ends: inside
    low = min(float(np.min(mech.pdf(ys, x))) for x in np.linspace(-1.0, 1.0, 41))
    return 2.0 * c_u * low


@pytest.mark.parametrize("group", [(0.5, 0.6), (1.0, 2.0), (0.2, 0.21), (3.0, 5.0)])
def test_group_masses_never_above_the_infimum_for_every_victim(group):
    lo, hi = group
    classes = [(0.05, 0.1), (0.6 * lo, lo), (lo * 0.5, lo * 0.9), (lo, lo), (lo, hi), (hi, hi * 2),
               (0.9 * lo, 1.1 * lo)]
    users = _users([a for a, _ in classes], [b for _, b in classes])
    masses = _case(0.3, lo, hi, users).masses
    for m, (a, b) in zip(masses, classes, strict=True):
        for eps_u in np.linspace(lo, hi, 5):
            for eps_j in np.linspace(a, b, 5):
                assert m <= _brute_mass(float(eps_u), float(eps_j)) * (1.0 + 1e-9) + 1e-15, (
                    group, (a, b), eps_u, eps_j, m)
    # the classes wholly below the group cover it; the others get nothing
    assert np.all(masses[[0, 1, 2, 3]] > 0) and np.all(masses[[4, 5, 6]] == 0)


def test_many_distinct_budgets_get_a_blanket():
    """More than 256 distinct budgets: victim groups are ranges (before, no piecewise
    blanket), never below the certified lower bound and below ``clones``."""
    rng = np.random.default_rng(11)
    prof = BudgetProfile.from_arrays(rng.uniform(0.05, 1.0, size=3000))
    groups, _ = blanket_plan(prof, FAM)
    assert any(g.eps_lo < g.eps_hi for g in groups)
    clear_caches()
    up = get_bound("blanket").evaluate(profile=prof, delta=1e-6, mechanism="piecewise").eps
    cl = get_bound("clones").evaluate(profile=prof, delta=1e-6, mechanism="piecewise").eps
    lo = get_bound("window_lower").evaluate(profile=prof, delta=1e-6,
                                            mechanism="piecewise").eps
    assert lo <= up < cl, (lo, up, cl)
