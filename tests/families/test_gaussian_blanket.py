"""Gaussian blankets (shuffledp.families.gaussian_blanket; docs/theory.md 15.4, Claim "Gaussian
blankets"): the masses against brute-force infima, the class minima, the cells (total, mean,
range of l), the kernel reduction of (ii) by stop-loss transforms computed by quadrature
independently of the cells, and the bound against the certified lower bounds on random
profiles.  The exact shuffled divergences at n = 2, 3: tests/bounds/test_blanket_truth.py
(``test_gaussian_identical``, ``test_gaussian_personalized``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from shuffledp import BudgetProfile, clear_caches, get_bound
from shuffledp.families.gaussian_blanket import (
    CUT_Z,
    HALF_WIDTHS,
    gaussian_cases,
    gaussian_masses,
    gaussian_pair_cells,
    gaussian_pair_cells_many,
    kappas,
)


def test_cells_of_many_half_widths_are_those_of_each():
    """The cases of a choice take their coarse cells from one batched call: every row is
    the cells of its half-width alone, to the bit (masses, ranges, means, error bounds, cut
    mass), so the batching changes nothing but time."""
    rng = np.random.default_rng(5)
    for _ in range(12):
        sigma = float(rng.uniform(0.5, 40.0))
        tau = sigma * float(rng.uniform(0.3, 0.99))
        eps = float(rng.choice([0.0, 0.003, 0.4, 2.5]))
        pieces = int(rng.choice([64, 256, 1000]))
        many = gaussian_pair_cells_many(sigma, tau, eps, HALF_WIDTHS[:-1], pieces)
        for a, (cells, cut) in zip(HALF_WIDTHS[:-1], many, strict=True):
            one, cut1 = gaussian_pair_cells(sigma, tau, eps, a, pieces)
            assert cut == cut1
            for f in ("mass", "lo", "hi", "mean"):
                assert np.array_equal(getattr(cells, f), getattr(one, f))
            assert (cells.rel_error, cells.abs_error, cells.mean_error) == (
                one.rel_error, one.abs_error, one.mean_error)
    with pytest.raises(ValueError, match="a must be in"):
        gaussian_pair_cells_many(5.0, 4.0, 0.1, [0.5, 1.5], 64)


def _mass(sig_j: float, c: float, s: float) -> float:
    return (s / sig_j) * math.exp(-(1.0 + abs(c)) ** 2 / (2.0 * (sig_j**2 - s**2)))


def test_mass_formula_is_the_infimum():
    """(i): the mass is at most inf over outputs and inputs of N(x, sigma_j^2) / N(c, s^2)
    (inputs on a grid of [-1, 1], outputs on a fine grid holding the minimiser), and within
    1e-9 of it; none for s >= sigma_j (the ratio falls below any positive mass far out)."""
    rng = np.random.default_rng(11)
    xs = np.linspace(-1.0, 1.0, 41)
    for _ in range(20):
        sig_j = float(rng.uniform(0.5, 30.0))
        s = float(rng.uniform(0.2, 0.999)) * sig_j
        c = float(rng.uniform(-1.5, 1.5))
        ystar = (abs(c) / s**2 + 1.0 / sig_j**2) / (1.0 / s**2 - 1.0 / sig_j**2)
        ys = np.unique(np.concatenate([np.linspace(-60 * sig_j, 60 * sig_j, 60_001),
                                       [ystar * np.sign(c or 1.0)]]))
        log_ratio = (stats.norm.logpdf(ys[None, :], xs[:, None], sig_j)
                     - stats.norm.logpdf(ys, c, s)[None, :])
        brute = math.exp(float(log_ratio.min()))
        got = _mass(sig_j, c, s)
        assert got <= brute * (1.0 + 1e-12), (sig_j, s, c, got, brute)
        assert got >= brute * (1.0 - 1e-9), (sig_j, s, c, got, brute)
        mass = gaussian_masses(s, s, abs(c), np.array([sig_j]), np.array([sig_j]))[0]
        assert mass <= got and mass >= got * (1.0 - 1e-12)
    # s >= sigma_j: the ratio at y = 1000 sigma_j is already below 1e-30
    for sig_j, s in ((2.0, 2.0), (2.0, 2.5)):
        y = 1000.0 * sig_j
        r = math.exp(float(stats.norm.logpdf(y, -1.0, sig_j) - stats.norm.logpdf(y, 0.0, s)))
        assert r < 1e-30
        assert gaussian_masses(s, s, 0.0, np.array([sig_j]), np.array([sig_j]))[0] == 0.0


def test_class_masses_are_below_every_member():
    """The class mass is at most the mass of every member scale, blanket width and shift of
    the case (the concavity in s and the worst ends of the class, (i))."""
    rng = np.random.default_rng(12)
    for _ in range(200):
        sig_b = float(rng.uniform(1.0, 25.0))
        sig_a = sig_b * float(rng.uniform(1.0, 1.3))
        s_lo = sig_b * float(rng.uniform(0.3, 0.95))
        s_hi = min(s_lo * float(rng.uniform(1.0, 1.2)), sig_b * 0.999)
        c_max = float(rng.uniform(0.0, 1.0))
        m = gaussian_masses(s_lo, s_hi, c_max, np.array([sig_a]), np.array([sig_b]))[0]
        for sig_j in np.linspace(sig_b, sig_a, 7):
            for s in np.linspace(s_lo, s_hi, 9):
                for c in (0.0, 0.5 * c_max, c_max):
                    assert m <= _mass(float(sig_j), c, float(s)) * (1.0 + 1e-13)


@pytest.mark.parametrize("sigma,ratio,eps,a", [(5.0, 0.9, 0.1, 1.0), (1.3, 0.95, 1.0, 0.5),
                                                (40.0, 0.97, 0.01, 0.02), (3.0, 0.8, 0.0, 1.0)])
def test_cells(sigma, ratio, eps, a):
    """The cells' omega-masses sum to 1; their mean is P_a(|w| <= K) - e^eps P_-a(|w| <= K)
    (the cut law's mean, to 1e-12); l sampled inside each cell lies in [lo, hi]; the cut mass
    is P_a(|w| > K)."""
    tau = ratio * sigma
    e = math.exp(eps)
    cells, cut = gaussian_pair_cells(sigma, tau, eps, a, 512)
    assert abs(cells.total - 1.0) < 1e-12
    k = a + CUT_Z * sigma
    inside = [stats.norm.cdf(k, x, sigma) - stats.norm.cdf(-k, x, sigma) for x in (a, -a)]
    assert abs(float(np.dot(cells.mass, cells.mean)) - (inside[0] - e * inside[1])) < 1e-12
    assert cut >= stats.norm.sf(k, a, sigma) + stats.norm.cdf(-k, a, sigma)
    edges = np.linspace(-k, k, 513)
    for i in range(512):
        ys = np.linspace(edges[i], edges[i + 1], 9)
        ell = (stats.norm.pdf(ys, a, sigma) - e * stats.norm.pdf(ys, -a, sigma)) / \
            stats.norm.pdf(ys, 0.0, tau)
        assert cells.lo[i] <= ell.min() + 1e-12 * abs(ell.min())
        assert cells.hi[i] >= ell.max() - 1e-12 * abs(ell.max())


def _stop_loss(ell: np.ndarray, w: np.ndarray, ts: np.ndarray) -> np.ndarray:
    return np.array([float(np.dot(w, np.maximum(ell - t, 0.0))) for t in ts])


@pytest.mark.parametrize("sigma_u,x0,x1,ratio,eps", [
    (5.0, 1.0, -1.0, 0.9, 0.2), (6.0, 0.3, -0.5, 0.9, 0.1), (5.0, 1.0, 0.6, 0.85, 0.3),
    (8.0, -0.2, 0.7, 0.95, 0.05), (5.0, 0.05, -0.05, 0.9, 0.0)])
def test_kernel_reduction_in_convex_order(sigma_u, x0, x1, ratio, eps):
    """(ii): the victim's l against N(c, s_u^2) is below F_a' in the convex order: equal means
    and no larger stop-loss transforms (both by quadrature on a fine grid, independently of
    the cells), for the reference sigma = 5 and the grid's a' just above a."""
    sigma = 5.0
    tau = ratio * sigma
    e = math.exp(eps)
    c, h = 0.5 * (x0 + x1), 0.5 * abs(x0 - x1)
    a = sigma / sigma_u * h
    a_ref = min(w for w in HALF_WIDTHS if w >= a)
    rho = a / a_ref
    s_u = sigma_u * math.sqrt(1.0 - rho**2 * (1.0 - tau**2 / sigma**2))
    # the victim's l under N(c, s_u^2), and l_a' under N(0, tau^2): quantile grids
    q = (np.arange(400_000) + 0.5) / 400_000
    wv = c + s_u * special.ndtri(q)
    lv = (stats.norm.pdf(wv, x0, sigma_u) - e * stats.norm.pdf(wv, x1, sigma_u)) / \
        stats.norm.pdf(wv, c, s_u)
    wr = tau * special.ndtri(q)
    lr = (stats.norm.pdf(wr, a_ref, sigma) - e * stats.norm.pdf(wr, -a_ref, sigma)) / \
        stats.norm.pdf(wr, 0.0, tau)
    wt = np.full(q.size, 1.0 / q.size)
    assert abs(lv.mean() - lr.mean()) < 2e-3 * (1.0 + e)
    ts = np.quantile(np.concatenate([lv, lr]), np.linspace(0.01, 0.99, 41))
    sv, sr = _stop_loss(lv, wt, ts), _stop_loss(lr, wt, ts)
    assert np.all(sv <= sr + 3e-3 * (1.0 + e)), (np.max(sv - sr))


def test_cases_cover_the_grid():
    """One case per half-width of the grid but the last and one local case per choice; the
    charges are tiny except the local one, which equals the Gaussian divergence at the last
    width."""
    from shuffledp.families.gaussian import gaussian_delta

    sig = np.array([30.0, 12.0, 6.0])
    local = float(gaussian_delta(0.05, 6.0, sensitivity=2.0 * HALF_WIDTHS[-1]))
    cases = gaussian_cases(0.05, 6.0, 6.2, lambda lo, hi, c: gaussian_masses(lo, hi, c, sig, sig),
                           local * (1.0 + 1e-9), sig.size)
    per = len(HALF_WIDTHS)
    assert len(cases) == per * len(kappas(6.0))
    for k in range(len(kappas(6.0))):
        mine = cases[k * per:(k + 1) * per]
        assert all(cs.choice == k for cs in mine)
        assert all(cs.charge < 1e-14 for cs in mine[:-1])
        assert mine[-1].charge >= local and mine[-1].charge <= local * (1 + 1e-8) + 1e-300
        # wider pairs, users with scales above the blanket: positive masses, falling as the
        # pairs narrow (|c| grows)
        assert mine[0].masses[0] > mine[-2].masses[0] > 0.0


def test_shared_mass_formula_is_the_infimum():
    """The shared-noise Gaussian's masses (docs/theory.md 15.7, "Blanket"): at most the
    infimum over inputs |m| <= r and outputs of N(m, sigma^2) / N(c, s^2), and within 1e-9."""
    from shuffledp.families.gaussian_blanket import shared_masses

    rng = np.random.default_rng(13)
    for _ in range(20):
        sigma = float(rng.uniform(0.5, 30.0))
        s = float(rng.uniform(0.2, 0.999)) * sigma
        r = float(rng.uniform(0.05, 3.0))
        c = float(rng.uniform(-1.0, 1.0))
        ms = np.linspace(-r, r, 41)
        ystar = (abs(c) / s**2 + r / sigma**2) / (1.0 / s**2 - 1.0 / sigma**2)
        ys = np.unique(np.concatenate([np.linspace(-60 * sigma, 60 * sigma, 60_001),
                                       [ystar * np.sign(c or 1.0)]]))
        log_ratio = (stats.norm.logpdf(ys[None, :], ms[:, None], sigma)
                     - stats.norm.logpdf(ys, c, s)[None, :])
        brute = math.exp(float(log_ratio.min()))
        got = float(shared_masses(s, s, abs(c), sigma, np.array([r]))[0])
        assert got <= brute * (1.0 + 1e-12) and got >= brute * (1.0 - 1e-9), (got, brute)


#: (mechanism, seed) of the random profiles; the long ones under the slow marker (the
#: shared-noise Gaussian's default check is tests/families/test_gaussian_shared.py's
#: ``test_certified_lower_bounds_stay_below_the_rigorous_ones``, whose tightest bound is the
#: blanket).
RANDOM_PROFILES = [("gaussian", 1), ("gaussian", 3)] + [
    pytest.param(m, k, marks=pytest.mark.slow)
    for m, k in (("gaussian", 0), ("gaussian", 2), ("gaussian_shared", 0),
                 ("gaussian_shared", 1), ("gaussian_shared", 2))]


@pytest.mark.parametrize("mechanism,seed", RANDOM_PROFILES)
def test_never_below_the_lower_bounds(mechanism, seed):
    """On random profiles (20-400 users, 2-4 tiers or continuous budgets, local delta 1e-6 to
    1e-10), blanket >= tier_sum_lower and window_lower at delta = 1e-6, and below clones
    (measured: 3-20x tighter than the clone reduction)."""
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(20, 400))
    if seed % 2:
        eps = rng.choice(rng.uniform(0.3, 4.0, size=int(rng.integers(2, 5))), size=n)
    else:
        eps = rng.uniform(0.3, 3.0, size=n)
    prof = BudgetProfile(eps=eps, delta=float(10.0 ** -rng.uniform(6, 10)))
    clear_caches()
    up = get_bound("blanket").eps(profile=prof, delta=1e-6, mechanism=mechanism)
    for low in ("tier_sum_lower", "window_lower"):
        lo = get_bound(low).eps(profile=prof, delta=1e-6, mechanism=mechanism)
        assert up >= lo * (1.0 - 1e-9), (low, up, lo)
    clones = get_bound("clones").eps(profile=prof, delta=1e-6, mechanism=mechanism)
    assert up < clones, (up, clones)


def test_large_budgets_take_the_second_cap():
    """The caps of kappa (``PSI_LOG_MAXES``): at eps0 = 3 (sigma = 3.64) the first cap binds
    every factor and alone left the bound 5.0 times the certified lower bound (0.0957 against
    0.0190 at n = 10^4); with the second it is 1.59 times.  Checked at n = 3000: above
    ``tier_sum_lower``, within 1.8 times it, and at most half the bound with the first cap
    alone."""
    import shuffledp.families.gaussian_blanket as gb

    prof = BudgetProfile(eps=np.full(3000, 3.0), delta=1e-8)
    # the second cap where the first binds every factor, not where it does not (eps0 = 0.5)
    assert len(kappas(3.637)) == 3 and len(kappas(19.73)) == 3
    assert len(kappas(200.0, wide=True)) > len(kappas(200.0))
    clear_caches()
    up = get_bound("blanket").eps(profile=prof, delta=1e-6, mechanism="gaussian")
    lo = get_bound("tier_sum_lower").eps(profile=prof, delta=1e-6, mechanism="gaussian")
    assert lo * (1.0 - 1e-9) <= up <= 1.8 * lo, (up, lo)
    first = gb.PSI_LOG_MAXES[:1]
    try:
        gb.PSI_LOG_MAXES = first
        clear_caches()
        alone = get_bound("blanket").eps(profile=prof, delta=1e-6, mechanism="gaussian")
    finally:
        gb.PSI_LOG_MAXES = (4.0, 8.0)
        clear_caches()
    assert up <= 0.5 * alone, (up, alone)


def test_users_of_larger_budgets_count_through_narrower_blankets():
    """``WIDE_FACTORS``: with budgets in U[0.05, 1] the victims of the smallest budgets are
    decided by the users just above them, who cover only blankets narrower than their own
    noise; the narrower blankets lower the bound (measured at n = 10^4: 0.01481 -> 0.00874,
    the certified lower bound 0.00560; here, n = 2000: 0.02715 -> 0.02239), by more than 15%,
    and it stays above the lower bounds."""
    import shuffledp.families.gaussian_blanket as gb

    eps = np.random.default_rng(5).uniform(0.05, 1.0, size=2000)
    prof = BudgetProfile(eps=eps, delta=1e-8)
    clear_caches()
    up = get_bound("blanket").eps(profile=prof, delta=1e-6, mechanism="gaussian")
    for low in ("tier_sum_lower", "window_lower"):
        lo = get_bound(low).eps(profile=prof, delta=1e-6, mechanism="gaussian")
        assert up >= lo * (1.0 - 1e-9), (low, up, lo)
    saved = gb.WIDE_FACTORS
    try:
        gb.WIDE_FACTORS = ()
        clear_caches()
        narrow_off = get_bound("blanket").eps(profile=prof, delta=1e-6, mechanism="gaussian")
    finally:
        gb.WIDE_FACTORS = saved
        clear_caches()
    assert up <= 0.85 * narrow_off, (up, narrow_off)
