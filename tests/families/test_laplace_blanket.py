"""Shaped blankets of the Laplace family (shuffledp.families.laplace_blanket; docs/theory.md
15.4, Lemma 13): the cells, the masses against brute-force infima, the convex order of the
pairs (Lemma 13 (i)) by stop-loss transforms, and the gain on tiered profiles.  A shaped
choice alone against exact shuffled divergences at n = 2, 3: tests/bounds/test_blanket_truth.py
(``test_shaped_choice_alone_dominates_the_truth``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffledp import BudgetProfile, clear_caches, get_bound
from shuffledp.families.laplace import laplace_pair_cells
from shuffledp.families.laplace_blanket import (
    BlanketShape,
    shaped_masses,
    shaped_pair_cells,
    two_slope_shapes,
)

SHAPES = [
    BlanketShape((1.5,), (0.3, 1.0)),
    BlanketShape((2.0,), (0.5, 1.0)),
    BlanketShape((0.5, 2.0), (0.2, 0.6, 1.0)),
    BlanketShape((1.0,), (1.0, 0.5)),  # not log-concave
    BlanketShape((1.0, 3.0), (0.0, 1.0, 0.4)),  # flat at first
    BlanketShape((), (0.7,)),  # Lap(0, 1/0.7)
]


def _density(shape: BlanketShape, y: np.ndarray) -> np.ndarray:
    return np.exp(-shape.lam(np.abs(y)) - shape.log_z)


def test_shape_normalization_and_levels():
    for sh in SHAPES:
        y = np.linspace(-400.0, 400.0, 800_001)
        total = float(np.sum(_density(sh, y)) * (y[1] - y[0]))
        assert abs(total - 1.0) < 1e-6
    assert BlanketShape((1.0,), (0.25, 0.5)).levels == (0.0, 0.25)


@pytest.mark.parametrize("bad", [((1.0,), (0.5,)), ((-1.0,), (0.5, 0.5)),
                                 ((2.0, 1.0), (0.1, 0.2, 0.3)), ((), (0.0,)),
                                 ((1.0,), (-0.1, 0.5)), ((math.inf,), (0.1, 0.2))])
def test_shape_rejects_bad_knots_and_slopes(bad):
    with pytest.raises(ValueError):
        BlanketShape(*bad)


def test_pure_shape_is_the_laplace_blanket():
    """laplace_pair_cells is the shape of Lap(0, b_r); the normalization Z = 2 b_r."""
    sh = BlanketShape.laplace(3.0)
    assert math.isclose(math.exp(sh.log_z), 6.0, rel_tol=1e-14)
    c = laplace_pair_cells(1.0, 3.0, 0.4, 1.0, -1.0, 64)
    d = shaped_pair_cells(1.0, sh, 0.4, 1.0, -1.0, 64)
    np.testing.assert_allclose(c.mass, d.mass, rtol=1e-14)
    np.testing.assert_allclose(c.mean, d.mean, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("eps", [0.0, 0.3, 1.5])
@pytest.mark.parametrize("pair", [(1.0, -1.0), (0.5, 0.0), (0.0, -0.25), (0.3, -0.8)])
def test_cells_are_exact_and_bound_l(shape, eps, pair):
    """Masses sum to 1, the mean is 1 - e^eps, and l at points inside each cell lies within
    the cell's [lo, hi] (l is monotone on the pieces)."""
    b_v = 1.0 / shape.lipschitz
    x0, x1 = pair
    c = shaped_pair_cells(b_v, shape, eps, x0, x1, 32)
    assert abs(c.total - 1.0) < 1e-13
    assert abs(c.moments()[0] - (1.0 - math.exp(eps))) < 1e-12
    e = math.exp(eps)
    rng = np.random.default_rng(7)
    finite = np.isfinite(c.lo) & (c.mass > 0)
    # sample points: rebuild the cells' edges from the masses is not possible, so sample the
    # line and check that every value of l lies within the range of all cells' bounds on
    # the cell holding it: use the fact that cells are contiguous and sorted
    ys = rng.uniform(-30.0, 30.0, 2000)
    lam = shape.lam(np.abs(ys))
    psi0 = np.exp(shape.log_z - math.log(2 * b_v) - np.abs(ys - x0) / b_v + lam)
    psi1 = np.exp(shape.log_z - math.log(2 * b_v) - np.abs(ys - x1) / b_v + lam)
    vals = psi0 - e * psi1
    assert finite.all()
    assert vals.min() >= c.lo.min() - 1e-9 and vals.max() <= c.hi.max() + 1e-9
    assert np.all(c.lo <= c.mean + 1e-12) and np.all(c.mean <= c.hi + 1e-12)


def test_cells_refuse_a_slope_above_the_victims():
    with pytest.raises(ValueError, match="at most 1/b_v"):
        shaped_pair_cells(1.0, BlanketShape((1.0,), (0.5, 1.2)), 0.1, 1.0, -1.0, 8)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("s_lo", [1.0, 0.8])
def test_masses_are_below_the_brute_force_infimum(shape, s_lo):
    """The mass of a class against every victim's blanket (the shape widened by 1/s, s in
    [s_lo, 1]) is at most the infimum over inputs x in [-1, 1] and outputs y of
    Lap(x, 2/eps_j)(y) / omega_s(y), on grids of budgets, victims, inputs and outputs."""
    eps_hi = 2.0 * shape.tail  # the largest budget whose users can cover the tails: 1
    a = np.array([0.2, 0.5, 0.9]) * eps_hi * s_lo
    b = a * 1.05
    m = shaped_masses(shape, eps_hi, s_lo, a, b)
    y = np.linspace(-80.0, 80.0, 16_001)
    xs = np.linspace(-1.0, 1.0, 41)
    for i in range(a.size):
        for ej in np.linspace(a[i], b[i], 4):
            inf_j = np.min(ej / 4 * np.exp(-ej * np.abs(y[None, :] - xs[:, None]) / 2), axis=0)
            for s in np.linspace(s_lo, 1.0, 5):
                omega = s * _density(shape, s * y)
                assert m[i] <= float(np.min(inf_j / omega)) * (1 + 1e-9)
        assert m[i] > 0.0
    # a class with lighter tails than every victim's blanket gets nothing
    assert shaped_masses(shape, eps_hi, s_lo, np.array([1.01 * eps_hi * s_lo]),
                         np.array([1.02 * eps_hi * s_lo]))[0] == 0.0


def _stop_loss(cells, ts):
    """E (l - t)_+ of the cells' law, with l at its cell means (exact for the comparison of
    fine cells: the means are exact and the cells tiny)."""
    return np.array([float(np.dot(cells.mass, np.maximum(cells.mean - t, 0.0))) for t in ts])


@pytest.mark.parametrize("shape", SHAPES[:5], ids=str)
@pytest.mark.parametrize("eps_frac", [0.0, 0.5, 0.9])
def test_wider_pairs_dominate_in_the_convex_order(shape, eps_frac):
    """Lemma 13 (i): as either input moves away from 0 the law of l grows in the convex
    order (stop-loss transforms at 41 points, fine cells); (1, -1) is above every pair."""
    b_v = 1.0 / shape.lipschitz
    eps_v = 2.0 / b_v
    eps = eps_frac * eps_v
    ts = np.concatenate([-np.logspace(-2, 2, 20), [0.0], np.logspace(-2, 2, 20)])
    top = _stop_loss(shaped_pair_cells(b_v, shape, eps, 1.0, -1.0, 2048), ts)
    prev = None
    for x0 in (0.0, 0.25, 0.5, 0.75, 1.0):
        cur = _stop_loss(shaped_pair_cells(b_v, shape, eps, x0, -0.5, 2048), ts)
        if prev is not None:
            assert np.all(cur >= prev - 1e-7)
        prev = cur
        assert np.all(cur <= top + 1e-7)
    prev = None
    for x1 in (0.0, -0.25, -0.5, -1.0):
        cur = _stop_loss(shaped_pair_cells(b_v, shape, eps, 0.5, x1, 2048), ts)
        if prev is not None:
            assert np.all(cur >= prev - 1e-7)
        prev = cur


def test_two_slope_shapes_keep_the_victims_tails():
    sh = two_slope_shapes(2.0, ((1.5, 0.3),))[0]
    assert sh.knots == (3.0,) and sh.slopes == (0.15, 0.5)


def test_shapes_tighten_tiered_profiles():
    """The two-slope blankets lower the bound where a pool has users well below the victim:
    two groups at 0.5 and 2 (n = 1000) from 0.3633 (the Laplace blankets alone) to below
    0.32, and never below the certified lower bound."""
    prof = BudgetProfile.from_histogram([0.5, 2.0], [500, 500])
    clear_caches()
    blanket = get_bound("blanket").eps(profile=prof, delta=1e-6, mechanism="laplace")
    lower = get_bound("tier_sum_lower").eps(profile=prof, delta=1e-6, mechanism="laplace")
    assert lower <= blanket < 0.32
    assert blanket / lower < 1.4


def _centre_stop_loss(b: float, t_cut: float, s: float, big_e: float, ts: np.ndarray) -> np.ndarray:
    """Stop-loss transforms E(l_s - t)_+ of the symmetric pair (s, -s) against Lap(0, b)
    restricted to [-t_cut, t_cut] (docs/theory.md 15.4, the claim "two regions, the centre"):
    l_s is constant on many midpoint cells, which carry their exact omega-masses."""
    edges = np.linspace(-t_cut, t_cut, 40_001)
    cdf = np.where(edges < 0, 0.5 * np.exp(edges / b), 1.0 - 0.5 * np.exp(-edges / b))
    mass = np.diff(cdf) / (cdf[-1] - cdf[0])
    w = 0.5 * (edges[1:] + edges[:-1])

    def psi(x):
        return np.exp(np.clip(2.0 * x - s, -s, s) / b)

    vals = psi(w) - big_e * psi(-w)
    return np.array([np.dot(mass, np.maximum(vals - t, 0.0)) for t in ts])


@pytest.mark.parametrize("b", [0.5, 2.0, 8.0])
def test_two_region_centre_law_grows_with_the_width(b):
    """The centre's law of the symmetric pair grows in the increasing convex order with the
    pair's width s while T >= 2 s'' (proved in docs/theory.md 15.4); with T = 1 and b = 0.5
    the centre is too short and the order fails, so the condition is not idle."""
    for big_e in (1.0, 1.05, 1.5, 4.0):
        for s_top in (0.4, 1.0):
            t_cut = 2.0 * s_top
            ts = np.linspace(-big_e * math.exp(s_top / b), math.exp(s_top / b), 160)
            top = _centre_stop_loss(b, t_cut, s_top, big_e, ts)
            for s in (0.1 * s_top, 0.5 * s_top, 0.9 * s_top):
                low = _centre_stop_loss(b, t_cut, s, big_e, ts)
                assert np.all(low <= top + 1e-10), (b, big_e, s_top, s, float(np.max(low - top)))
    if b == 0.5:
        ts = np.linspace(-3.0, 3.0, 121)
        gap = _centre_stop_loss(b, 1.0, 0.5, 1.0, ts) - _centre_stop_loss(b, 1.0, 1.0, 1.0, ts)
        assert gap.max() > 0.05
