"""``gaussian_shared`` (docs/theory.md 15.7, Lemma 17): Gaussian noise of one scale, the signal
scaled by the budget.  Its pool masses against dense grids, the closed-form minimum over
victim groups and user classes against a grid search, the LDP of each report, the estimator
by simulation, the interval masses against scipy, and the rigorous and certified bounds
against an exact two-user shuffled divergence computed here by quadrature (independent of
the bounds' code)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from _two_users import shuffled_pair_deltas
from scipy import stats

from shuffledp import BudgetProfile
from shuffledp.bounds import get_bound
from shuffledp.families import get_family
from shuffledp.families.gaussian import _log_kappa, _tail_cut, gaussian_delta, sigmas
from shuffledp.families.gaussian_shared import shared_log_rho, unit_gauss_mass
from shuffledp.families.laplace_shared import shared_laplace_mass
from shuffledp.mechanisms import GaussianMechanism, GaussianSharedMechanism, get_mechanism

SEED = 20261206
FAM = get_family("gaussian_shared")


def _sigma(eps, delta):
    return float(sigmas(np.array([eps]), np.array([delta]))[0])


def test_registered_and_mapped():
    assert get_mechanism("gaussian_shared") is GaussianSharedMechanism
    m = GaussianSharedMechanism(eps=[1.0, 2.0], delta=1e-6)
    assert m.randomizer() == FAM
    assert not FAM.pure and FAM.spec == "gaussian_shared"
    assert not FAM.includes(get_family("gaussian")) and not get_family("gaussian").includes(FAM)
    np.testing.assert_allclose(m.sigma(), GaussianMechanism([1.0, 2.0], 1e-6).sigma())


@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0, 20.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-5, 0.05])
def test_each_report_has_the_gaussian_mechanisms_privacy_curve(eps, delta):
    # reports N(+-s, 1), s = 1/sigma: hockey-stick divergence in closed form, at several E
    m = GaussianSharedMechanism(eps=[eps], delta=delta)
    s = float(m.signal()[0])
    for e in (0.0, eps / 2, eps, 2 * eps):
        hs = stats.norm.cdf(s - e / (2 * s)) - math.exp(e) * stats.norm.cdf(-s - e / (2 * s))
        bw = float(gaussian_delta(e, float(m.sigma()[0])))
        assert hs == pytest.approx(bw, rel=1e-9, abs=1e-15)
    assert float(gaussian_delta(eps, float(m.sigma()[0]))) <= delta * (1 + 1e-9)


def _users(sig_a, sig_b, delta_j):
    sig_a, sig_b = np.atleast_1d(sig_a).astype(float), np.atleast_1d(sig_b).astype(float)
    return SimpleNamespace(sigma_a=sig_a, sigma_b=sig_b, delta=np.full(sig_a.size, delta_j),
                           log_kappa=_log_kappa(sig_a, np.full(sig_a.size, delta_j)),
                           exact=bool(np.all(sig_a == sig_b)), counts=np.ones(sig_a.size),
                           edges=np.array([0, sig_a.size]))


@pytest.mark.parametrize(("eps_v", "eps_j"), [(1.0, 1.0), (0.5, 2.0), (2.0, 0.5), (0.3, 6.0)])
@pytest.mark.parametrize("eta", [0.0, 1e-4, 1e-9])
def test_pool_mass_against_dense_grids(eps_v, eps_j, eta):
    # Lemma 17 for one victim and one user, against inf over |y| <= T (victim units) of
    # kappa_j m_j(y) / (e^{eps_v} m_v(y) / (1 - delta'_v)), m the infimum over dense inputs
    dv, dj = 1e-6, 1e-7
    s_v, s_j = _sigma(eps_v, dv), _sigma(eps_j, dj)
    group = SimpleNamespace(eps_lo=eps_v, eps_hi=eps_v, delta_hi=dv, sigma_lo=s_v, sigma_hi=s_v)
    delta_v, m = FAM.pool_masses(group, _users(s_j, s_j, dj), eta, victim_eps=np.array([]),
                                 own_bin=None)
    cut, tail = _tail_cut(eta, s_v)
    assert delta_v == pytest.approx(dv + tail, rel=1e-12)
    a = s_v / s_j
    y = np.linspace(0.0, min(cut, 60.0 * s_v), 20001) if math.isfinite(cut) else \
        np.linspace(0.0, 60.0 * s_v, 20001)
    xs = np.linspace(-1.0, 1.0, 401)
    m_j = np.min(stats.norm.pdf(y[:, None], a * xs[None, :], s_v), axis=1)
    m_v = np.min(stats.norm.pdf(y[:, None], xs[None, :], s_v), axis=1)
    kappa = min(1.0, (1 - dj) / (2 * stats.norm.cdf(-1.0 / s_j)))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(m_v > 0, m_j / m_v, np.inf)
    grid = kappa * (1 - delta_v) * math.exp(-eps_v) * min(1.0, float(np.nanmin(ratio)))
    if not math.isfinite(cut) and a > 1 + 1e-12:
        assert m[0] == 0.0  # no cut and a wider range of means than the victim's: no mass
    else:
        assert m[0] <= grid * (1 + 1e-9)
        assert m[0] == pytest.approx(grid, rel=1e-6)


def test_group_and_class_minimum_against_a_grid_search():
    rng = np.random.default_rng(SEED)
    for _ in range(200):
        lo = float(rng.uniform(0.2, 20.0))
        hi = lo * float(rng.uniform(1.0, 4.0))
        sj_b = float(rng.uniform(0.1, 30.0))
        sj_a = sj_b * float(rng.uniform(1.0, 3.0))
        cut = float(rng.uniform(1.0, 200.0))
        closed = float(shared_log_rho(lo, hi, cut, np.array([sj_b]))[0])
        sv = np.linspace(lo, hi, 801)[:, None]
        sj = np.linspace(sj_b, sj_a, 81)[None, :]
        a = sv / sj
        grid = np.minimum(-(a - 1) * (2 * cut + a + 1) / (2 * sv**2), 0.0).min()
        assert closed <= grid + 1e-12 * (1 + abs(grid))
        assert closed == pytest.approx(grid, rel=1e-3, abs=1e-9)  # attained up to the grid


def test_interval_masses_against_scipy_within_their_error_bounds():
    rng = np.random.default_rng(SEED)
    centres = np.concatenate([rng.uniform(-30, 30, 200), [0.0, 1e-300, -5.0, 38.0]])
    for lo, hi in ((-1.0, 1.0), (0.5, np.inf), (-np.inf, -2.0), (3.0, 3.5), (-40.0, 40.0)):
        v, e = unit_gauss_mass(lo, hi, centres)
        truth = stats.norm.cdf(hi - centres) - stats.norm.cdf(lo - centres)
        tail = stats.norm.sf(lo - centres) - stats.norm.sf(hi - centres)
        exact = np.where(lo - centres > 0, tail, truth)
        assert np.all(np.abs(v - exact) <= e + 1e-15 * exact + 1e-300)
        vl, el = shared_laplace_mass(lo, hi, centres)
        lap = stats.laplace.cdf(hi - centres) - stats.laplace.cdf(lo - centres)
        lap_t = stats.laplace.sf(lo - centres) - stats.laplace.sf(hi - centres)
        exact_l = np.where(lo - centres > 0, lap_t, lap)
        assert np.all(np.abs(vl - exact_l) <= el + 1e-15 * exact_l + 1e-300)


def test_estimator_is_unbiased_with_the_stated_variance():
    rng = np.random.default_rng(SEED)
    n = 40
    eps = rng.uniform(0.5, 2.0, n)
    x = np.clip(rng.normal(0.3, 0.4, n), -1, 1)
    m = GaussianSharedMechanism(eps=eps, delta=1e-6)
    s = m.signal()
    # the API's reports and estimate on a few draws: the report law's mean and the formula
    draws = np.array([m.randomize(x, rng) for _ in range(4000)])
    assert np.all(np.abs(draws.mean(axis=0) - x * s) <= 5 / math.sqrt(4000))
    assert draws.std(axis=0).mean() == pytest.approx(1.0, rel=0.02)
    assert m.estimate(draws[0]) == pytest.approx(draws[0].sum() / s.sum(), rel=1e-12)
    # a random assignment of the budgets each time (vectorised): y = x s_pi + N(0, 1)
    reps = 200_000
    s_pi = rng.permuted(np.tile(s, (reps, 1)), axis=1)
    est = (x * s_pi + rng.standard_normal((reps, n))).sum(axis=1) / s.sum()
    var = m.variance(x)
    assert abs(est.mean() - x.mean()) <= 5 * math.sqrt(var / reps)
    assert est.var() == pytest.approx(var, rel=0.02)
    # the noise part is below the Gaussian mechanism's variance (Jensen)
    assert n / s.sum() ** 2 <= GaussianMechanism(eps, 1e-6).variance(np.zeros(n))
    # labelled: the labels' signals recomputed from the budgets, the Gaussian mechanism's
    # reports, unbiased for this assignment
    np.testing.assert_allclose(m.signal(eps), s, rtol=1e-12)
    assert m.estimate(draws[1], labels=eps) == pytest.approx((draws[1] / s).mean(), rel=1e-12)
    lab = (draws / s).mean(axis=1)
    assert abs(lab.mean() - x.mean()) <= 5 * math.sqrt(m.variance(x, labelled=True) / 4000)
    assert lab.var() == pytest.approx(m.variance(x, labelled=True), rel=0.1)


def test_estimator_rejects_bad_input():
    m = GaussianSharedMechanism(eps=[1.0, 2.0], delta=[1e-6, 1e-7])
    with pytest.raises(ValueError, match=r"reports must have one entry per user \(2\)"):
        m.estimate([1.0])
    with pytest.raises(ValueError, match="needs one delta for all users"):
        m.estimate([1.0, 2.0], labels=[1.0, 2.0])
    with pytest.raises(ValueError, match=r"delta must be in \(0, 1\)"):
        GaussianSharedMechanism(eps=[1.0], delta=0.0)


# --------------------------------------------------------------------------- the exact truth
def _two_user_deltas(s_v, x0, x1, s_o, x_o, eps_list, h=0.02, half=12.0):
    """Exact (up to quadrature) shuffled divergences of {victim, other} in the common units
    (victim N(x s_v, 1), other N(x_o s_o, 1)) on [-L, L], L = half + the largest centre (the
    tails beyond carry less than 1e-30); at eps = 0.1, budgets 1 and 1: 0.0717855 at h = 0.02,
    0.0717856 at h = 0.005."""
    lim = half + max(s_v, s_o)
    y = np.arange(-lim + h / 2, lim, h)
    return shuffled_pair_deltas(stats.norm.pdf(y, x0 * s_v), stats.norm.pdf(y, x1 * s_v),
                                stats.norm.pdf(y, x_o * s_o), eps_list, h)


@pytest.mark.parametrize(("eps_v", "eps_o"), [(1.0, 1.0), (0.5, 3.0)])
def test_bounds_bracket_the_exact_two_user_divergence(eps_v, eps_o):
    d0 = 1e-3
    prof = BudgetProfile.from_arrays([eps_v, eps_o], delta=d0)
    eps_list = (0.1, 0.5, 1.0)
    s = {e: 1.0 / _sigma(e, d0) for e in (eps_v, eps_o)}
    # either user as the victim, the widest pair, both extreme inputs of the other; the
    # lower bounds' own pair (others at x1 = -1) is among them
    truth = np.max([_two_user_deltas(s[ev], 1.0, -1.0, s[eo], xo, eps_list)
                    for ev, eo in ((eps_v, eps_o), (eps_o, eps_v)) for xo in (-1.0, 1.0)],
                   axis=0)
    assert truth.max() > 1e-3  # the comparison is not vacuous
    clones, tier, window = (get_bound(b) for b in ("clones", "tier_sum_lower", "window_lower"))
    for eps, t in zip(eps_list, truth, strict=True):
        c = clones.delta(profile=prof, eps=eps, mechanism="gaussian_shared")
        assert t <= c * (1 + 1e-3) + 1e-9, (eps, t, c)
        lo = tier.delta(profile=prof, eps=eps, mechanism="gaussian_shared")
        assert lo <= t * (1 + 1e-3) + 1e-9, (eps, lo, t)
        lw = window.delta(profile=prof, eps=eps, mechanism="gaussian_shared")
        assert lw <= t * (1 + 1e-3) + 1e-9, (eps, lw, t)


@pytest.mark.parametrize("mech", ["gaussian_shared", "laplace_shared"])
def test_certified_lower_bounds_stay_below_the_rigorous_ones(mech):
    rng = np.random.default_rng(SEED)
    d0 = 1e-8 if mech == "gaussian_shared" else 0.0
    for _ in range(3):
        levels = np.sort(rng.uniform(0.3, 3.0, 3))
        prof = BudgetProfile.from_histogram(levels, rng.integers(100, 2000, 3), delta=d0)
        up = get_bound("tightest").eps(profile=prof, delta=1e-6, mechanism=mech)
        for low in ("window_lower", "tier_sum_lower"):
            lo = get_bound(low).eps(profile=prof, delta=1e-6, mechanism=mech)
            assert 0.0 < lo <= up, (low, levels, lo, up)


def test_shared_noise_amplifies_across_budgets():
    # distinct budgets in [0.5, 2]: the shared noise gives clone mass across budgets with a
    # linear (not quadratic) tail exponent (Lemma 17 against Lemma 7)
    rng = np.random.default_rng(SEED)
    prof = BudgetProfile.from_arrays(rng.uniform(0.5, 2.0, 5000), delta=1e-8)
    shared = get_bound("clones").eps(profile=prof, delta=1e-6, mechanism="gaussian_shared")
    per_budget = get_bound("clones").eps(profile=prof, delta=1e-6, mechanism="gaussian")
    assert shared < 0.9 * per_budget
    # identical budgets: the same randomizer up to scaling, the same bound
    ident = BudgetProfile.identical(n=5000, eps0=1.0, delta0=1e-8)
    a = get_bound("clones").eps(profile=ident, delta=1e-6, mechanism="gaussian_shared")
    b = get_bound("clones").eps(profile=ident, delta=1e-6, mechanism="gaussian")
    assert a == pytest.approx(b, rel=1e-9)
