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
    SAME_SIGN_STEPS,
    BlanketShape,
    narrow,
    narrow_charge,
    pair_cases,
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


def test_steep_shapes_cover_the_pairs_only_for_small_eps():
    """A shape with a slope above 1/b_v covers the pairs for eps <= 1/b_v only (Lemma 14):
    pair_cases refuses a larger eps, naming it; its cells are built for any eps."""
    sh = BlanketShape((1.0,), (0.5, 1.2))
    with pytest.raises(ValueError, match="eps <= 1/b_v"):
        pair_cases(1.0, sh, 1.01, np.ones(2), "x", 0)
    assert len(pair_cases(1.0, sh, 1.0, np.ones(2), "x", 0)) == 1 + 2 * SAME_SIGN_STEPS
    c = shaped_pair_cells(1.0, sh, 3.0, 1.0, -1.0, 8)
    assert abs(c.total - 1.0) < 1e-13


# --------------------------------------------------------------------------- narrow shapes
#: Shapes with lighter tails than the victim's (b_v = 1): pure Laplace and a two-slope shape
#: whose tails are narrow, and a steep centre with the victim's own tails.
NARROW = [BlanketShape.laplace(0.95), BlanketShape.laplace(0.8), BlanketShape.laplace(0.5),
          BlanketShape((1.5,), (0.55, 1.05)), BlanketShape((0.5, 2.0), (1.3, 0.2, 1.1)),
          BlanketShape((1.0,), (1.4, 1.0))]


def _exact_stop_loss(b_v, shape, eps, x0, x1, ts, half=120.0, points=2_000_001):
    """E (l - t)_+ under omega by the midpoint rule on [-half, half] (the rest of omega's
    mass and of P_{x0}'s below 1e-40 here), independent of the cells' code."""
    edges = np.linspace(-half, half, points)
    w = 0.5 * (edges[1:] + edges[:-1])
    dw = edges[1] - edges[0]
    o = np.exp(-shape.lam(np.abs(w)) - shape.log_z)
    p0 = np.exp(-np.abs(w - x0) / b_v) / (2 * b_v)
    p1 = np.exp(-np.abs(w - x1) / b_v) / (2 * b_v)
    d = p0 - math.exp(eps) * p1
    return np.array([float(np.sum(np.maximum(d - t * o, 0.0)) * dw) for t in ts])


def _dominating_stop_loss(cells, ts):
    """E (X - t)_+ of the two-point law of every cell (its ends, its mean): the largest
    stop-loss transform of any law on [lo, hi] with that mean (what the lattice takes)."""
    lo, hi, mu, m = cells.lo, cells.hi, cells.mean, cells.mass
    span = np.where(hi > lo, hi - lo, 1.0)
    up = np.where(hi > lo, (mu - lo) / span, 1.0)
    out = []
    for t in ts:
        out.append(float(np.dot(m, up * np.maximum(hi - t, 0.0)
                                + (1.0 - up) * np.maximum(lo - t, 0.0))))
    return np.array(out)


@pytest.mark.parametrize("shape", NARROW, ids=str)
@pytest.mark.parametrize("eps", [0.0, 0.2, 1.0])
@pytest.mark.parametrize("pair", [(1.0, -1.0), (0.5, 0.0), (0.0, -0.5), (0.1, 0.0)])
def test_narrow_cells_dominate_the_exact_law(shape, eps, pair):
    """Lemma 14 (iii): the cells of a steep or narrow shape, their tails cut and the cut
    charged (``narrow_charge``), have a stop-loss transform at least the exact one (midpoint
    rule on 2 million points) at every t; the masses sum to 1."""
    b_v = 1.0
    c = shaped_pair_cells(b_v, shape, eps, *pair, 4096)
    assert abs(c.total - 1.0) < 1e-12
    charge = narrow_charge(b_v, shape, eps, *pair)
    assert (charge > 0) == (narrow(b_v, shape) and pair[0] - pair[1] > eps * b_v)
    top = float(c.hi.max())
    ts = np.concatenate([np.linspace(float(c.lo.min()), 0.0, 30), np.linspace(0.0, top, 60)])
    exact = _exact_stop_loss(b_v, shape, eps, *pair, ts)
    got = _dominating_stop_loss(c, ts) + charge
    assert np.all(got >= exact - 1e-9), float(np.max(exact - got))
    # and close (the cells are fine): the cells' own transform (the charge aside) within 2%
    # of the exact one, or 1e-4 of its largest value
    assert np.all(got - charge <= exact * 1.02 + 1e-4 * float(exact.max()))


@pytest.mark.parametrize("shape", NARROW, ids=str)
@pytest.mark.parametrize("eps_frac", [0.0, 0.5, 1.0])
def test_narrow_pairs_are_covered_for_small_eps(shape, eps_frac):
    """Lemma 14 (i), (ii): for eps <= 1/b_v, (1, -1) dominates every opposite-sign pair in
    the convex order whatever the blanket's shape, (0, -s) grows with s, and (s, 0) grows
    with s from s = b_v eps on (below, l <= 0: no divergence); stop-loss transforms at 41
    points, exact midpoint rule."""
    b_v = 1.0
    eps = eps_frac / b_v
    ts = np.concatenate([-np.logspace(-2, 2, 20), [0.0], np.logspace(-2, 2, 20)])
    top = _exact_stop_loss(b_v, shape, eps, 1.0, -1.0, ts, points=400_001)
    scale = float(top.max())
    for x0 in (0.0, 0.3, 0.7):
        for x1 in (0.0, -0.4, -1.0):
            cur = _exact_stop_loss(b_v, shape, eps, x0, x1, ts, points=400_001)
            assert np.all(cur <= top + 1e-9 * scale), (x0, x1, float(np.max(cur - top)))
    for kind in ("x0", "x1"):
        prev = None
        for s in (0.0, 0.25, 0.5, 0.75, 1.0):
            if kind == "x0" and s < b_v * eps:
                continue
            pair = (s, 0.0) if kind == "x0" else (0.0, -s)
            cur = _exact_stop_loss(b_v, shape, eps, *pair, ts, points=400_001)
            if prev is not None:
                assert np.all(cur >= prev - 1e-9 * scale), (kind, s)
            prev = cur


def test_narrow_pairs_need_the_eps_condition():
    """The condition eps <= 1/b_v is not idle: with the blanket Lap(0, 0.8) (b_v = 4, eps =
    1 > 1/4) the pair (0.6, -1) lies above (1, -1) at some t (docs/theory.md 15.4)."""
    b_v, shape, eps = 4.0, BlanketShape.laplace(0.8), 1.0
    ts = np.linspace(-3.0, 0.0, 301)
    top = _exact_stop_loss(b_v, shape, eps, 1.0, -1.0, ts, half=200.0, points=800_001)
    cur = _exact_stop_loss(b_v, shape, eps, 0.6, -1.0, ts, half=200.0, points=800_001)
    assert float(np.max(cur - top)) > 1e-5


@pytest.mark.parametrize("shape", NARROW[:5], ids=str)
def test_narrow_masses_are_below_the_brute_force_infimum(shape):
    """Lemma 13 (iii) holds for any shape: the masses of classes of users against a narrow
    shape (victims in [0.9, 1] of the group's top, widened as there) are at most the
    brute-force infimum over inputs and outputs, and 0 above ``2 s_lo tail``."""
    eps_hi = 1.6  # canonical units: victim scale 1.25, every shape's tail slope above 0.8
    s_lo = 0.9
    cap = 2.0 * s_lo * shape.tail
    a = np.array([0.3, 0.8, 0.97]) * cap
    _check_masses(shape, eps_hi, s_lo, a, np.minimum(a * 1.03, cap), cap)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("s_lo", [1.0, 0.8])
def test_masses_are_below_the_brute_force_infimum(shape, s_lo):
    """The mass of a class against every victim's blanket (the shape widened by 1/s, s in
    [s_lo, 1]) is at most the infimum over inputs x in [-1, 1] and outputs y of
    Lap(x, 2/eps_j)(y) / omega_s(y), on grids of budgets, victims, inputs and outputs."""
    eps_hi = 2.0 * shape.tail  # the largest budget whose users can cover the tails: 1
    a = np.array([0.2, 0.5, 0.9]) * eps_hi * s_lo
    _check_masses(shape, eps_hi, s_lo, a, a * 1.05, eps_hi * s_lo)


def _check_masses(shape, eps_hi, s_lo, a, b, cap):
    """shaped_masses of the classes [a, b] at most the brute-force infimum over budgets in
    the class, victims s in [s_lo, 1], inputs in [-1, 1] and outputs of Lap(x, 2/eps_j)(y) /
    omega_s(y), positive; and 0 for a class just above ``cap`` (lighter tails than every
    victim's blanket)."""
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
    assert shaped_masses(shape, eps_hi, s_lo, np.array([1.01 * cap]),
                         np.array([1.02 * cap]))[0] == 0.0


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


def test_narrow_choices_appear_only_where_they_are_valid():
    """The narrow choices (Lemma 14) are offered for eps <= eps_hi / 2 only, and only when some
    user's budget lies in (eps_lo, NARROW_MAX eps_lo]; their cases carry the charge of the cut
    tail; in pools beyond NARROW_ALL_USERS they replace the victim's own blanket."""
    import shuffledp.families.laplace as lap
    from shuffledp.bounds.blanket.bound import blanket_plan
    from shuffledp.families import get_family

    fam = get_family("laplace")
    prof = BudgetProfile.from_histogram([1.0, 1.2, 3.0], [100, 100, 100])
    groups, classes = blanket_plan(prof, fam)
    g1 = next(g for g in groups if g.eps_hi == 1.0)
    g3 = next(g for g in groups if g.eps_lo == 3.0)
    for eps, want in ((0.1, True), (0.5, True), (0.51, False)):
        labels = {c.label for c in fam.blanket_cases(eps, g1, classes)}
        assert any("narrow" in lab for lab in labels) == want, (eps, labels)
    # no user within NARROW_MAX of 3: none
    assert not any("narrow" in c.label for c in fam.blanket_cases(0.1, g3, classes))
    cases = [c for c in fam.blanket_cases(0.1, g1, classes) if "narrow" in c.label]
    assert any(c.charge > 0 for c in cases) and all(c.charge < 1e-11 for c in cases)
    own = [c for c in fam.blanket_cases(0.1, g1, classes) if c.label.startswith("eps_r = 1:")]
    assert own
    lap_all = lap.NARROW_ALL_USERS
    try:
        lap.NARROW_ALL_USERS = 10
        labels = {c.label.split(":")[0] for c in fam.blanket_cases(0.1, g1, classes)}
        assert "eps_r = 1" not in labels and any("narrow" in lab for lab in labels)
    finally:
        lap.NARROW_ALL_USERS = lap_all


@pytest.mark.parametrize("seed", [0, 1, pytest.param(2, marks=pytest.mark.slow),
                                  pytest.param(3, marks=pytest.mark.slow),
                                  pytest.param(4, marks=pytest.mark.slow),
                                  pytest.param(5, marks=pytest.mark.slow)])
def test_narrow_choices_lower_clustered_profiles_and_stay_sound(seed):
    """Budgets in tight clusters (a heavy tier just above the others, as in the clipped
    profiles): the profile's bound is never below window_lower and tier_sum_lower at three
    eps; at the middle one, the bound with the narrow choices of every victim group in the
    upper half of the budgets is at most the one without, and some group's at most 0.9 of it."""
    import shuffledp.families.laplace as lap
    from shuffledp.bounds.blanket.bound import blanket_group_delta, blanket_plan
    from shuffledp.families import get_family

    rng = np.random.default_rng([2026, 12, seed])
    top = float(rng.uniform(0.5, 3.0))
    n = int(rng.integers(200, 800))
    share = float(rng.uniform(0.1, 0.4))
    eps_i = np.where(rng.random(n) < share, top,
                     np.clip(rng.normal(0.8 * top, 0.25 * top, n), 0.05, top))
    prof = BudgetProfile.from_arrays(eps_i)
    n_groups = len(blanket_plan(prof, get_family("laplace"))[0])
    blanket = get_bound("blanket")
    gained = False
    for eps in (0.02 * top, 0.08 * top, 0.2 * top):
        clear_caches()
        up = blanket.delta(profile=prof, eps=eps, mechanism="laplace")
        lows = [get_bound(m).delta(profile=prof, eps=eps, mechanism="laplace")
                for m in ("window_lower", "tier_sum_lower")]
        assert up >= max(lows) - 1e-12, (seed, eps, up, lows)
        if eps != 0.08 * top:
            continue
        groups = {}
        for name, ratio in (("with", lap.NARROW_MAX), ("without", 1.0)):
            keep = lap.NARROW_MAX
            try:
                lap.NARROW_MAX = ratio
                clear_caches()
                groups[name] = [blanket_group_delta(profile=prof, eps=eps, mechanism="laplace",
                                                    group=g)
                                for g in range(n_groups // 2, n_groups)]
            finally:
                lap.NARROW_MAX = keep
                clear_caches()
        for w, wo in zip(groups["with"], groups["without"], strict=True):
            assert w <= wo * (1 + 1e-9) + 1e-15, (seed, eps, w, wo)
            gained = gained or (wo > 1e-9 and w <= 0.9 * wo)
    assert gained
