"""The mechanism-aware clone reduction (``clones`` with ``mechanism=``) and the Gaussian
mechanism's mixture form (docs/theory.md, Section 8 Lemmas 6-8, Section 4 Theorem 3).

Checked here:
* Lemma 6: the closed-form mixture excess of the Gaussian mechanism against numerical
  integration, its maximum over inputs at x = +-1, equal to the analytic Gaussian delta;
  the explicit decomposition (pure part built with Lemma 5's tau_x) has ratios <= e^eps on a
  dense grid and leaks exactly delta at x = +-1;
* Lemmas 7 and 8: the group masses of the Gaussian and Laplace victims (with and without the
  tail cut) are below the brute-force infimum over a dense grid of outputs and victims;
* Theorem 3: the group bound is at least every single victim's reduction (small profiles);
* soundness end to end: for binary RR, k-RR (k = 3) and OUE (d = 3) with personalized budgets,
  the bound dominates the exact shuffled delta computed by enumeration;
* coverage answers and bad input.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, special

from shuffledp import BudgetProfile, get_bound
from shuffledp.bounds import aware
from shuffledp.bounds.clones import clone_reduction_delta
from shuffledp.errors import ParameterRegimeError
from shuffledp.mechanisms.mean import analytic_gaussian_sigma, gaussian_delta
from shuffledp.randomizers import get_randomizer

CLONES = get_bound("clones")


def _phi(y, s):
    return np.exp(-0.5 * (y / s) ** 2) / (s * math.sqrt(2 * math.pi))


# ----------------------------------------------------------------------------- Lemma 6
@pytest.mark.parametrize("eps,sigma", [(0.1, 25.0), (1.0, 3.0), (2.0, 1.5), (4.0, 0.8),
                                       (0.5, 0.3), (8.0, 0.5)])
def test_gaussian_excess_closed_form_matches_integration(eps, sigma):
    for x in (-1.0, -0.6, 0.0, 0.3, 0.9, 1.0):
        def f(y, x=x):
            return max(0.0, _phi(y - x, sigma) - math.exp(eps) * _phi(abs(y) + 1.0, sigma))
        lim = 1.0 + 40.0 * sigma
        # break the integral where the integrand's sign changes (t_s of the closed form)
        ts = [max(0.0, sigma**2 * eps / (1 + s) - (1 - s) / 2) for s in (x, -x) if s > -1]
        pts = sorted({0.0, -lim, lim, *[t for t in ts if t < lim], *[-t for t in ts if t < lim]})
        num = sum(integrate.quad(f, a, b, limit=400, epsabs=1e-15, epsrel=1e-12)[0]
                  for a, b in zip(pts[:-1], pts[1:], strict=True) if b > a)
        closed = aware.gaussian_mixture_excess(x, eps, sigma)
        assert closed == pytest.approx(num, rel=1e-6, abs=1e-13)


@pytest.mark.parametrize("eps", [0.05, 0.5, 1.0, 3.0, 8.0])
@pytest.mark.parametrize("delta", [1e-20, 1e-8, 1e-3, 0.3])
def test_gaussian_excess_is_largest_at_the_ends_and_equals_the_calibration(eps, delta):
    sigma = float(analytic_gaussian_sigma([eps], [delta])[0])
    at_end = aware.gaussian_mixture_excess(1.0, eps, sigma)
    assert at_end == pytest.approx(float(gaussian_delta(eps, sigma)), rel=1e-9, abs=1e-300)
    assert at_end <= delta * (1 + 1e-9)  # the calibration rounds sigma up
    for x in np.linspace(-1.0, 1.0, 401):
        assert aware.gaussian_mixture_excess(float(x), eps, sigma) <= at_end * (1 + 1e-9) + 1e-300


@pytest.mark.parametrize("eps,delta", [(0.5, 1e-3), (1.0, 1e-2), (2.0, 0.05)])
def test_gaussian_explicit_decomposition(eps, delta):
    """Lemma 5's construction: R_pure(x) = min(R(x), tau_x m) / (1 - delta), tau_x in
    [1, e^eps] with mass 1 - delta; ratios of pure parts <= e^eps on a dense grid."""
    sigma = float(analytic_gaussian_sigma([eps], [delta])[0])
    ys = np.linspace(-1 - 12 * sigma, 1 + 12 * sigma, 200_001)
    dy = ys[1] - ys[0]
    m = _phi(np.abs(ys) + 1.0, sigma)
    xs = np.linspace(-1, 1, 21)
    parts = []
    for x in xs:
        r = _phi(ys - x, sigma)

        def mass(tau, r=r):
            return float(np.minimum(r, tau * m).sum() * dy)
        lo, hi = 1.0, math.exp(eps)
        assert mass(lo) <= 1 - delta + 1e-6 and mass(hi) >= 1 - delta - 1e-6
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if mass(mid) < 1 - delta else (lo, mid)
        pure = np.minimum(r, hi * m) / (1 - delta)
        assert float(np.min(r - (1 - delta) * pure)) >= -1e-15  # leak part is >= 0
        parts.append(pure)
        if abs(x) == 1.0:  # the ends leak exactly delta
            assert float(np.maximum(r - math.exp(eps) * m, 0).sum() * dy) == pytest.approx(
                float(gaussian_delta(eps, sigma)), rel=1e-4)
    parts = np.array(parts)
    ratio = parts.max(axis=0) / parts.min(axis=0)
    assert float(ratio.max()) <= math.exp(eps) * (1 + 1e-9)


# ----------------------------------------------------------------------------- Lemmas 7, 8
def _gauss_masses_bruteforce(sig_v, eps_hi, dv, sig_j, delta_j, cut):
    """min over victims sig_v (array) and |y| <= cut of the Gaussian mass of user j."""
    ys = np.linspace(0.0, min(cut, 60.0 * max(sig_v)), 4001)
    kap = min(1.0, (1 - delta_j) / (2 * special.ndtr(-1 / sig_j)))
    out = np.inf
    for s in sig_v:
        if math.isinf(cut) and sig_j < s:
            return 0.0  # lighter tails than this victim: the ratio tends to 0 (Lemma 7)
        u = ys + 1
        log_ratio = np.log(s / sig_j) + 0.5 * u * u * (1 / s**2 - 1 / sig_j**2)
        out = min(out, float(np.exp(log_ratio.min())))
    return kap * (1 - dv) * math.exp(-eps_hi) * min(out, 1.0)


@pytest.mark.parametrize("seed", range(6))
def test_gaussian_group_masses_below_bruteforce(seed):
    rng = np.random.default_rng([seed, 7])
    n = 40
    eps = rng.uniform(0.2, 3.0, n)
    delta = np.full(n, 10.0 ** rng.uniform(-9, -4))
    prof = BudgetProfile.from_arrays(eps, delta)
    for g in aware.victim_groups(prof, "gaussian", groups=4):
        for eta in (0.0, 1e-6, 1e-3):
            e_v, d_v, m, counts, comp = aware.group_pool(prof, "gaussian", g, eta=eta, groups=4)
            tiers = aware._tiers(prof, get_randomizer("gaussian"))
            members = tiers.sigma[g.start:g.stop]
            cut = aware._tail_cut(eta, g.sigma_hi)[0]
            if eta > 0:
                assert d_v >= g.delta_hi and d_v <= g.delta_hi + eta * (1 + 1e-9)
            for j in range(0, tiers.sigma.size, 5):
                ref = _gauss_masses_bruteforce(members, g.eps_hi, d_v, tiers.sigma[j],
                                               tiers.delta[j], cut)
                if g.stop - g.start == 1 and j == g.start and eta == 0:
                    ref = max(ref, (1 - tiers.delta[j]) * math.exp(-g.eps_hi))
                assert m[j] <= ref * (1 + 1e-9) + 1e-300
                assert m[j] >= ref * (1 - 1e-3) - 1e-12  # and not far below the grid value


def _laplace_mass_bruteforce(eps_vs, eps_j, cut):
    ys = np.linspace(0.0, min(cut, 400.0), 8001)
    best = np.inf
    for ev in eps_vs:
        if math.isinf(cut) and eps_j > ev:
            return 0.0  # lighter tails than this victim: the ratio tends to 0
        log_ratio = (math.log(eps_j / ev) - eps_j * (ys + 1) / 2
                     + ev * np.maximum(ys - 1, 0) / 2)  # log inf_j - log sup_v (no underflow)
        best = min(best, float(np.exp(log_ratio.min())))
    return best


@pytest.mark.parametrize("seed", range(6))
def test_laplace_group_masses_below_bruteforce(seed):
    rng = np.random.default_rng([seed, 8])
    eps = rng.uniform(0.1, 4.0, 30)
    prof = BudgetProfile.from_arrays(eps)
    for g in aware.victim_groups(prof, "laplace", groups=3):
        vs = np.sort(eps)[g.start:g.stop]
        for eta in (0.0, 1e-8, 1e-3):
            _, d_v, m, _, _ = aware.group_pool(prof, "laplace", g, eta=eta, groups=3)
            cut, tail = aware._laplace_tail_cut(eta, g.eps_lo)
            assert d_v == pytest.approx(tail, abs=1e-300)
            for j, ej in enumerate(np.sort(eps)):
                ref = (1 - tail) * _laplace_mass_bruteforce(vs, ej, cut)
                assert m[j] <= ref * (1 + 1e-9) + 1e-300
                assert m[j] >= ref * (1 - 2e-3) - 1e-12


def test_laplace_tail_is_the_largest_cut_mass():
    for eps_v in (0.1, 1.0, 3.0):
        for eta in (1e-3, 1e-9):
            cut, tail = aware._laplace_tail_cut(eta, eps_v)
            b = 2 / eps_v
            exact = 0.5 * math.exp(-(cut - 1) / b) + 0.5 * math.exp(-(cut + 1) / b)  # x = 1
            assert tail == pytest.approx(exact, rel=1e-12) and tail <= eta * (1 + 1e-12)


# ----------------------------------------------------------------------------- Theorem 3
def _single_victim(prof, mech, u, eps):
    fam = get_randomizer(mech)
    e, d = prof.eps, prof.delta
    others = [j for j in range(prof.n) if j != u]
    if fam.family == "gaussian":
        sig = analytic_gaussian_sigma(e, d)
        pool = [min(1.0, (1 - d[j]) / (2 * special.ndtr(-1 / sig[j]))) * (1 - d[u])
                * math.exp(-e[u]) * (0.0 if sig[j] < sig[u] else
                                     sig[u] / sig[j] * math.exp((1 / sig[u]**2 - 1 / sig[j]**2)
                                                                / 2)) for j in others]
    else:
        pool = [(1 - d[j]) * float(fam.clone_mass(e[u], e[j])) for j in others]
    return clone_reduction_delta(pool=pool, eps_v=float(e[u]), delta_v=float(d[u]), eps=eps,
                                 rel_step=0.0)


@pytest.mark.parametrize("mech", ["laplace", "krr:4", "piecewise", "gaussian", "oue:5"])
@pytest.mark.parametrize("seed", range(3))
def test_group_bound_dominates_every_victim(mech, seed):
    rng = np.random.default_rng([seed, 9])
    n = 25
    eps = np.round(rng.uniform(0.3, 3.0, n), 2)
    delta = np.full(n, 1e-7) if mech == "gaussian" else np.zeros(n)
    prof = BudgetProfile.from_arrays(eps, delta)
    for target in (0.2, 0.8):
        ours = CLONES.delta(profile=prof, eps=target, mechanism=mech, victim_groups=3)
        worst = max(_single_victim(prof, mech, u, target) for u in range(n))
        assert ours >= worst * (1 - 1e-9)


# ----------------------------------------------------------------------------- enumeration
def _krr_pmf(eps, k):
    e = math.exp(eps)
    return lambda x: np.array([e if y == x else 1.0 for y in range(k)]) / (e + k - 1)


def _oue_pmf(eps, d):
    q = 1.0 / (math.exp(eps) + 1.0)
    outs = list(itertools.product((0, 1), repeat=d))

    def pmf(x):
        p = []
        for o in outs:
            v = 1.0
            for i, b in enumerate(o):
                pi = 0.5 if i == x else q
                v *= pi if b else 1 - pi
            p.append(v)
        return np.array(p)
    return pmf


def _exact_shuffled_delta(pmfs, inputs, target):
    """max over neighbouring datasets (user 0 is the victim) of the hockey-stick divergence of
    the shuffled histograms, by enumeration."""
    n = len(pmfs)
    best = 0.0
    n_out = pmfs[0](0).size
    for rest in itertools.product(inputs, repeat=n - 1):
        for x0, x1 in itertools.permutations(inputs, 2):
            laws = []
            for xv in (x0, x1):
                dist = {(): 1.0}
                for i, x in enumerate((xv, *rest)):
                    p = pmfs[i](x)
                    new = {}
                    for h, w in dist.items():
                        for y in range(n_out):
                            key = tuple(sorted((*h, y)))
                            new[key] = new.get(key, 0.0) + w * p[y]
                    dist = new
                laws.append(dist)
            keys = set(laws[0]) | set(laws[1])
            e = math.exp(target)
            hs = sum(max(0.0, laws[0].get(k, 0) - e * laws[1].get(k, 0)) for k in keys)
            best = max(best, hs)
    return best


@pytest.mark.parametrize("mech,make,inputs", [
    ("binary_rr", lambda e: _krr_pmf(e, 2), (0, 1)),
    ("krr:3", lambda e: _krr_pmf(e, 3), (0, 1, 2)),
    ("oue:3", lambda e: _oue_pmf(e, 3), (0, 1, 2)),
])
@pytest.mark.parametrize("seed", range(4))
def test_aware_clones_dominate_the_exact_shuffled_delta(mech, make, inputs, seed):
    rng = np.random.default_rng([seed, 10])
    n = 3 if mech.startswith("oue") else 4
    eps = rng.uniform(0.2, 3.0, n)
    prof = BudgetProfile.from_arrays(eps)
    for victim in range(n):  # every user as the victim (user 0 of the enumeration)
        order = [victim] + [j for j in range(n) if j != victim]
        pmfs = [make(float(eps[j])) for j in order]
        for target in (0.0, 0.3, 1.0):
            truth = _exact_shuffled_delta(pmfs, inputs, target)
            bound = CLONES.delta(profile=prof, eps=target, mechanism=mech)
            assert bound >= truth * (1 - 1e-9) - 1e-15


# ----------------------------------------------------------------------------- API
def test_identical_gaussian_equals_the_generic_standard_bound():
    p = BudgetProfile.identical(n=5000, eps0=1.0, delta0=1e-8)
    a = CLONES.eps(profile=p, delta=1e-6, mechanism="gaussian")
    b = CLONES.eps(profile=p, delta=1e-6, clone="standard")
    assert a == pytest.approx(b, rel=1e-9)


def test_personalized_gaussian_is_covered_only_through_the_option():
    rng = np.random.default_rng(3)
    p = BudgetProfile.from_arrays(rng.uniform(0.5, 2.0, 200), np.full(200, 1e-8))
    assert not CLONES.covers(randomizer="gaussian", profile=p, clone="standard").covered
    assert CLONES.covers(randomizer="gaussian", profile=p, mechanism="gaussian").covered
    assert not CLONES.covers(randomizer="laplace", profile=p, mechanism="gaussian").covered
    assert not CLONES.covers(randomizer="gaussian_l2", profile=p, mechanism="gaussian").covered
    pi = BudgetProfile.identical(n=100, eps0=1.0, delta0=1e-8)
    assert CLONES.covers(randomizer="gaussian", profile=pi, clone="standard").covered
    assert not CLONES.covers(randomizer="gaussian", profile=pi, clone="stronger").covered
    assert CLONES.covers(randomizer="binary_rr", profile=p, mechanism="duchi").covered


def test_bad_mechanism_option():
    p = BudgetProfile.from_arrays([0.5, 1.0, 2.0])
    with pytest.raises(ValueError, match="randomizer must be one of"):
        CLONES.delta(profile=p, eps=0.1, mechanism="nope")
    with pytest.raises(ValueError, match="mechanism must be"):
        CLONES.delta(profile=p, eps=0.1, mechanism="gaussian_l2")
    with pytest.raises(ParameterRegimeError, match="delta_i > 0"):
        CLONES.delta(profile=p, eps=0.1, mechanism="gaussian")
    with pytest.raises(ValueError, match="victim_groups"):
        CLONES.delta(profile=p, eps=0.1, mechanism="laplace", victim_groups=0)
    with pytest.raises(TypeError, match="victim_groups"):
        CLONES.delta(profile=p, eps=0.1, mechanism="laplace", victim_groups=2.5)


def test_more_groups_never_hurt_much_and_bound_is_monotone_in_eps():
    rng = np.random.default_rng(4)
    p = BudgetProfile.from_arrays(rng.uniform(0.5, 2.0, 2000))
    ds = [CLONES.delta(profile=p, eps=e, mechanism="laplace") for e in (0.1, 0.2, 0.4, 0.8)]
    assert all(a >= b for a, b in zip(ds, ds[1:], strict=False))
    e = CLONES.eps(profile=p, delta=1e-6, mechanism="laplace")
    assert CLONES.delta(profile=p, eps=e, mechanism="laplace") <= 1e-6


# ----------------------------------------------------------------------------- whole range
@pytest.mark.parametrize("low,high", [(0.0, 0.01), (0.5, 2.0), (3.0, 12.0), (26.0, 50.0)])
def test_constant_families_equal_the_generic_stronger_bound(low, high):
    """Binary RR's masses do not depend on the victim: one group, the generic pool (up to the
    aware pool's extra rounding down, which can only raise the bound)."""
    rng = np.random.default_rng([int(high), 11])
    p = BudgetProfile.from_arrays(rng.uniform(low, high, 500))
    for target in (0.0, 0.1, 1.0, 30.0):
        a = CLONES.delta(profile=p, eps=target, mechanism="binary_rr")
        b = CLONES.delta(profile=p, eps=target, clone="stronger")
        assert b * (1 - 1e-9) <= a <= b * 1.01 + 1e-300


@pytest.mark.parametrize("k", [3, 5])
@pytest.mark.parametrize("eps0", [0.5, 4.0, 26.0, 40.0])
def test_aware_krr_is_above_the_exact_krr_curve(k, eps0):
    """Identical k-RR over the accepted range: at least the exact shuffled delta (krr_exact,
    an exact lower bound for k-RR with that k)."""
    p = BudgetProfile.identical(n=20, eps0=eps0)
    exact = get_bound("krr_exact")
    for target in (0.0, eps0 / 4, eps0 / 2, eps0 * 0.9):
        ours = CLONES.delta(profile=p, eps=target, mechanism=f"krr:{k}")
        truth = exact.delta(profile=p, eps=target, k=k)
        assert ours >= truth * (1 - 1e-9) - 1e-300


@pytest.mark.parametrize("mech", ["gaussian", "laplace", "krr:5", "piecewise", "oue:4",
                                  "duchi_l2", "any"])
@pytest.mark.parametrize("low,high", [(0.0, 0.01), (0.0, 50.0), (40.0, 50.0)])
def test_aware_bound_is_a_probability_and_monotone_over_the_range(mech, low, high):
    rng = np.random.default_rng([int(high), 12])
    e = rng.uniform(low, high, 300)
    d = np.full(300, 1e-30 if mech == "gaussian" else 0.0)
    p = BudgetProfile.from_arrays(e, d)
    ds = [CLONES.delta(profile=p, eps=x, mechanism=mech) for x in (0.0, 0.5, 5.0, 49.9)]
    assert all(0.0 <= x <= 1.0 for x in ds)
    assert all(a >= b for a, b in zip(ds, ds[1:], strict=False))
    assert ds[-1] <= float(p.delta.max()) or high > 49.9  # nothing above the largest budget
