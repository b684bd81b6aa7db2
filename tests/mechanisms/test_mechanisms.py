"""Local randomizers: reference values, exact LDP (discrete) / density-grid LDP (continuous),
the report laws, blanket masses, bad input, and a contract over every registered mechanism."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate

from shuffledp import BudgetProfile
from shuffledp.gdp import gdp_mu_from_eps_delta
from shuffledp.mechanisms import (
    FREQUENCY_MECHANISMS,
    MEAN_MECHANISMS,
    DuchiMechanism,
    GaussianMechanism,
    GRRMechanism,
    LaplaceMechanism,
    OUEMechanism,
    PiecewiseMechanism,
    analytic_gaussian_sigma,
    gaussian_delta,
    get_mechanism,
)

EPS = np.array([0.1, 0.5, 1.0, 2.0, 5.0])
GRID = np.linspace(-1.0, 1.0, 21)


# (a) reference values ---------------------------------------------------------------------
def test_analytic_gaussian_reference_values():
    # Balle & Wang (ICML 2018), Section 5: eps = 1, delta = 1e-5, sensitivity 1 needs
    # sigma ~ 3.73 (the classical sqrt(2 log(1.25/delta))/eps = 4.84).
    s = analytic_gaussian_sigma([1.0], [1e-5], sensitivity=1.0)[0]
    assert s == pytest.approx(3.7306, abs=1e-4)
    # independent route: mu-GDP equivalence (Dong, Roth, Su 2022, Cor. 2.13), sigma = D / mu
    for eps, delta in [(0.5, 1e-6), (4.0, 1e-10), (0.05, 1e-3), (10.0, 1e-6)]:
        mu = gdp_mu_from_eps_delta(eps, delta)
        got = analytic_gaussian_sigma([eps], [delta], sensitivity=2.0)[0]
        assert got == pytest.approx(2.0 / mu, rel=1e-8)
    # classical calibration (valid for eps < 1) is never tighter
    for eps in (0.1, 0.5, 0.9):
        classical = 2.0 * math.sqrt(2 * math.log(1.25 / 1e-6)) / eps
        assert analytic_gaussian_sigma([eps], [1e-6])[0] < classical


def test_grr_and_oue_probabilities():
    # Wang et al. 2017 Eq. (5) and Eq. (12)
    g = GRRMechanism(eps=[1.0, 2.0], d=10)
    p, q = g.support_probabilities()
    assert np.allclose(p, np.exp([1.0, 2.0]) / (np.exp([1.0, 2.0]) + 9))
    assert np.allclose(p + 9 * q, 1.0)
    o = OUEMechanism(eps=[1.0, 2.0], d=10)
    p, q = o.support_probabilities()
    assert np.allclose(p, 0.5) and np.allclose(q, 1 / (np.exp([1.0, 2.0]) + 1))


def test_piecewise_variance_matches_integral_of_density():
    m = PiecewiseMechanism(eps=[0.7])
    c = float(m.big_c()[0])
    for x in (-1.0, -0.3, 0.0, 0.8):
        lo = (c + 1) / 2 * x - (c - 1) / 2
        pts = sorted({-c, lo, lo + c - 1, c})

        def mom(k, x=x, pts=pts):
            return sum(
                integrate.quad(lambda y: y**k * float(m.pdf(y, x)[0]), a, b)[0]
                for a, b in itertools.pairwise(pts)
            )

        assert mom(0) == pytest.approx(1.0, abs=1e-10)
        assert mom(1) == pytest.approx(x, abs=1e-10)
        assert mom(2) - x**2 == pytest.approx(m.variance([x] * 1, labelled=True), rel=1e-9)


def test_duchi_scale_and_laplace_variance():
    d = DuchiMechanism(eps=[math.log(3.0)] * 2)
    assert np.allclose(d.pmf(1, 1.0), 0.75) and np.allclose(d.pmf(-1, 1.0), 0.25)
    lap = LaplaceMechanism(eps=[0.5, 2.0])
    assert lap.variance([0.3, -0.2], labelled=True) == pytest.approx((32 + 2) / 4)


# (b) LDP and report laws ------------------------------------------------------------------
def test_duchi_is_exactly_eps_ldp():
    m = DuchiMechanism(eps=EPS)
    for b in (-1, 1):
        p = m.pmf(b, GRID[:, None])  # (grid, users)
        ratio = p.max(axis=0) / p.min(axis=0)
        assert np.allclose(ratio, np.exp(EPS), rtol=1e-12)  # attained at x = +-1


@pytest.mark.parametrize("d", [2, 3, 7])
def test_grr_is_exactly_eps_ldp(d):
    m = GRRMechanism(eps=EPS, d=d)
    worst = np.zeros(EPS.size)
    for y, x, x2 in itertools.product(range(d), repeat=3):
        worst = np.maximum(worst, m.pmf(y, x) / m.pmf(y, x2))
    assert np.allclose(worst, np.exp(EPS), rtol=1e-12)
    assert np.allclose(sum(m.pmf(y, 0) for y in range(d)), 1.0)


def test_oue_is_exactly_eps_ldp_and_blanket_by_brute_force():
    d = 4
    m = OUEMechanism(eps=EPS, d=d)
    vectors = list(itertools.product((0, 1), repeat=d))
    for i, e in enumerate(EPS):
        probs = np.array([[m.pmf(y, x, i) for x in range(d)] for y in vectors])
        assert probs.sum(axis=0) == pytest.approx(np.ones(d))
        assert (probs.max(axis=1) / probs.min(axis=1)).max() == pytest.approx(math.exp(e))
        assert probs.min(axis=1).sum() == pytest.approx(m.blanket_mass()[i], rel=1e-12)


def test_grr_blanket_by_brute_force():
    m = GRRMechanism(eps=EPS, d=5)
    mins = np.min([[m.pmf(y, x) for x in range(5)] for y in range(5)], axis=1).sum(axis=0)
    assert np.allclose(mins, m.blanket_mass())
    assert np.allclose(DuchiMechanism(eps=EPS).blanket_mass(), 2 / (np.exp(EPS) + 1))


@pytest.mark.parametrize("cls", [LaplaceMechanism, PiecewiseMechanism])
def test_continuous_density_ratio_on_a_grid(cls):
    m = cls(eps=EPS)
    top = float(np.max(getattr(m, "big_c", lambda: np.array([6.0]))()))
    ys = np.linspace(-top - 1, top + 1, 801)
    dens = np.stack([m.pdf(ys[:, None], x) for x in GRID])  # (x, y, users)
    support = dens.min(axis=0) > 0
    ratio = np.where(support, dens.max(axis=0) / np.where(support, dens.min(axis=0), 1.0), 1.0)
    assert np.all(ratio <= np.exp(EPS) * (1 + 1e-12))
    assert np.allclose(ratio.max(axis=0), np.exp(EPS), rtol=1e-2)  # nearly attained
    # the support does not depend on x (no infinite ratio)
    assert np.array_equal(dens.min(axis=0) > 0, dens.max(axis=0) > 0)


def test_continuous_blanket_mass_by_quadrature():
    for m in (LaplaceMechanism(eps=[0.8]), PiecewiseMechanism(eps=[0.8])):
        c = float(m.big_c()[0]) if isinstance(m, PiecewiseMechanism) else 40.0
        inf_density = lambda y, m=m: min(float(m.pdf(y, x)[0]) for x in GRID)  # noqa: E731
        val = integrate.quad(inf_density, -c, c, limit=400, points=[-1.0, 1.0])[0]
        assert val == pytest.approx(float(m.blanket_mass()[0]), rel=1e-3)


def test_gaussian_meets_its_delta_exactly():
    eps = np.array([0.3, 1.0, 3.0])
    delta = np.array([1e-3, 1e-6, 1e-9])
    m = GaussianMechanism(eps=eps, delta=delta)
    for i in range(eps.size):
        s = float(m.sigma()[i])
        ys = np.linspace(-1 - 12 * s, 1 + 12 * s, 400_001)
        p0 = m.pdf(ys[:, None], -1.0)[:, i]
        p1 = m.pdf(ys[:, None], 1.0)[:, i]
        hs = np.trapezoid(np.maximum(p0 - math.exp(eps[i]) * p1, 0.0), ys)
        assert hs == pytest.approx(delta[i], rel=1e-3)  # numerical hockey-stick divergence
        assert gaussian_delta(eps[i], s) <= delta[i]
        assert gaussian_delta(eps[i], s * (1 - 1e-7)) > delta[i]  # minimal (rounded up)


def test_reports_have_the_stated_moments():
    rng = np.random.default_rng(11)
    n = 200_000
    eps = np.full(n, 0.9)
    x = np.full(n, 0.4)
    for m in (
        LaplaceMechanism(eps=eps),
        PiecewiseMechanism(eps=eps),
        GaussianMechanism(eps=eps, delta=1e-6),
    ):
        y = m.randomize(x, rng)
        v = m.variance(x, labelled=True) * n  # per-report variance
        assert abs(y.mean() - 0.4) < 5 * math.sqrt(v / n)
        assert y.var() == pytest.approx(v, rel=0.03)
    d = DuchiMechanism(eps=eps)
    b = d.randomize(x, rng)
    assert abs((b == 1).mean() - float(d.pmf(1, 0.4)[0])) < 5 * math.sqrt(0.25 / n)


def test_grr_and_oue_report_frequencies():
    rng = np.random.default_rng(3)
    n, d = 100_000, 5
    x = np.full(n, 2)
    g = GRRMechanism(eps=np.full(n, 1.0), d=d)
    counts = np.bincount(g.randomize(x, rng), minlength=d) / n
    p, q = (float(v[0]) for v in g.support_probabilities())
    assert np.allclose(counts, [q, q, p, q, q], atol=5 * math.sqrt(0.25 / n))
    o = OUEMechanism(eps=np.full(n, 1.0), d=d)
    bits = o.randomize(x, rng).mean(axis=0)
    q = 1 / (math.e + 1)
    assert np.allclose(bits, [q, q, 0.5, q, q], atol=5 * math.sqrt(0.25 / n))


def test_piecewise_histogram_matches_density():
    rng = np.random.default_rng(5)
    m1 = PiecewiseMechanism(eps=[1.5])
    m = PiecewiseMechanism(eps=np.full(200_000, 1.5))
    y = m.randomize(np.full(200_000, -0.6), rng)
    c = float(m1.big_c()[0])
    assert np.abs(y).max() <= c
    hist, edges = np.histogram(y, bins=40, range=(-c, c), density=True)
    mids = (edges[:-1] + edges[1:]) / 2
    expected = np.array(
        [
            integrate.quad(lambda t: float(m1.pdf(t, -0.6)[0]), a, b)[0]
            for a, b in itertools.pairwise(edges)
        ]
    ) / np.diff(edges)
    assert np.allclose(hist, expected, atol=0.02), (mids, hist - expected)


# (c) bad input ------------------------------------------------------------------------------
def test_bad_input_raises_clear_errors():
    rng = np.random.default_rng(0)
    lap = LaplaceMechanism(eps=[1.0, 1.0])
    with pytest.raises(ValueError, match=r"x must lie in \[-1, 1\], got x\[1\] = 1.5"):
        lap.randomize([0.0, 1.5], rng)
    with pytest.raises(ValueError, match="one value per user"):
        lap.randomize([0.0, 0.1, 0.2], rng)
    with pytest.raises(ValueError, match=r"must be finite and in \(0, 50\].*, got eps\[0\] = nan"):
        DuchiMechanism(eps=[float("nan"), 1.0])
    with pytest.raises(ValueError, match="d \\(number of categories\\) must be >= 2, got 1"):
        OUEMechanism(eps=[1.0, 1.0], d=1)
    with pytest.raises(TypeError, match="d must be an integer"):
        GRRMechanism(eps=[1.0, 1.0], d=2.5)
    g = GRRMechanism(eps=[1.0, 1.0], d=3)
    with pytest.raises(ValueError, match=r"x must lie in \{0, ..., 2\}, got x\[0\] = 3"):
        g.randomize([3, 0], rng)
    with pytest.raises(ValueError, match="integer categories"):
        g.randomize([0.5, 1.0], rng)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        g.randomize([0, 1], 42)
    with pytest.raises(ValueError, match="delta must be in \\(0, 1\\)"):
        GaussianMechanism(eps=[1.0, 1.0], delta=[1e-6, 0.0])
    with pytest.raises(ValueError, match="unknown mechanism 'rappor'; known mechanisms: duchi"):
        get_mechanism("rappor")


# (d) contract over every registered mechanism -----------------------------------------------
ALL = {**MEAN_MECHANISMS, **FREQUENCY_MECHANISMS}


@pytest.mark.parametrize("name", sorted(ALL))
def test_mechanism_contract(name):
    cls = get_mechanism(name)
    assert cls is ALL[name] and cls.name == name and cls.citation
    prof = BudgetProfile.uniform(n=50, low=0.5, high=2.0, rng=np.random.default_rng(0), delta0=1e-8)
    kwargs = {"d": 6} if name in FREQUENCY_MECHANISMS else {}
    m = cls.from_profile(prof, **kwargs)
    assert m.n == 50 and np.array_equal(m.eps, prof.eps)
    assert np.all(m.delta == (0.0 if cls.pure else 1e-8))
    assert m.profile().n == 50
    x = (np.arange(50) % 6) if kwargs else np.linspace(-1, 1, 50)
    a = m.randomize(x, np.random.default_rng(7))
    b = m.randomize(x, np.random.default_rng(7))
    assert np.array_equal(a, b) and a.shape[0] == 50  # every draw from the passed-in rng
    assert np.all((m.blanket_mass() > 0) & (m.blanket_mass() <= 1))
    fam = m.randomizer()
    assert fam.pure == cls.pure and fam.family in ("laplace", "duchi", "piecewise", "gaussian",
                                                   "krr", "binary_rr", "oue", "laplace_shared",
                                                   "gaussian_shared")
    with pytest.raises(AttributeError):
        m.eps = np.ones(50)  # frozen


class _ExtremeDraws(np.random.Generator):
    """A generator whose uniform draws are all ``value`` (0 or just below 1): the sampler's
    comparison is then decided at the edge of the 2^-53 grid of ``Generator.random``."""

    def __init__(self, value: float) -> None:
        super().__init__(np.random.PCG64(0))
        self.value = value

    def random(self, size=None, dtype=np.float64, out=None):  # noqa: ARG002
        return np.full(size, self.value)


def test_samplers_keep_every_output_possible_at_the_largest_accepted_eps():
    """At eps = 45 the minority probability 1/(e^45+1) ~ 3e-20 is below 2^-53: a sampler that
    compares a uniform draw with the *majority* probability (which rounds to 1) would never
    produce the minority report, i.e. be deterministic and not eps-LDP.  The smallest draw
    (u = 0) must give the minority report and the largest (u = 1 - 2^-53) the majority."""
    eps = [45.0, 45.0, 1.0]
    x = np.array([1.0, -1.0, 1.0])
    duchi = DuchiMechanism(eps=eps)
    assert duchi.randomize(x, _ExtremeDraws(0.0)).tolist() == [-1, 1, -1]
    assert duchi.randomize(x, _ExtremeDraws(1.0 - 2.0**-53)).tolist() == [1, -1, 1]
    # the pmf is exact where tanh(eps/2) rounds to 1
    assert math.isclose(float(duchi.pmf(-1, 1.0)[0]), 1.0 / (math.exp(45.0) + 1.0), rel_tol=1e-12)
    assert float(duchi.pmf(1, 1.0)[0]) == 1.0 - 1.0 / (math.exp(45.0) + 1.0)
    grr = GRRMechanism(eps=eps, d=5)
    xs = np.array([2, 3, 0])
    flipped = grr.randomize(xs, _ExtremeDraws(0.0))
    assert (flipped != xs).all()  # u = 0: the report differs from the input
    assert (grr.randomize(xs, _ExtremeDraws(1.0 - 2.0**-53)) == xs).all()


def test_gaussian_sigma_of_a_budget_does_not_depend_on_the_other_budgets():
    """The bounds compute sigma on budget tiers, the mechanism on its users: a pair's sigma
    must be the same number in both (each pair's bisection stops on its own)."""
    from shuffledp.mechanisms.mean import analytic_gaussian_sigma

    alone = analytic_gaussian_sigma(np.array([1.0]), np.array([1e-6]))[0]
    mixed = analytic_gaussian_sigma(np.array([0.01, 1.0, 37.0, 1.0]),
                                    np.array([1e-12, 1e-6, 0.3, 1e-6]))
    assert mixed[1] == alone and mixed[3] == alone
