"""The mechanism-aware clone reduction (``clones`` with ``mechanism=``) and the Gaussian
mechanism's mixture form (docs/theory.md, Section 8 Lemmas 6-8, Section 4 Theorem 3).

Checked here:
* Lemma 6: the closed-form mixture excess of the Gaussian mechanism against numerical
  integration, its maximum over inputs at x = +-1, equal to the analytic Gaussian delta;
  the explicit decomposition (pure part built with Lemma 5's tau_x) has ratios <= e^eps on a
  dense grid and leaks exactly delta at x = +-1;
* Lemmas 7 and 8: the group masses of the Gaussian and Laplace victims (with and without the
  tail cut) are below the brute-force infimum over a dense grid of outputs and victims;
* Theorem 3: the group bound is at least every single victim's reduction (small profiles,
  and binned profiles);
* soundness end to end, by enumeration of every dataset, neighbouring pair and output
  histogram: k-RR (k = 2, 3, 4), OUE (d = 2, 3) and one-bit Duchi (inputs -1, 0, 1) with
  personalized pure budgets, n = 4 (OUE d = 3: n = 3; n = 5 in the slow run), and with local
  delta_i > 0 for randomizers of the mixture form (1 - delta_i) R + delta_i (input revealed),
  n = 3 (n = 4 in the slow run);
* domination by the masses the bound uses: exhaustively for the k-RR and OUE pools of
  group_pool; on grids for Laplace (with and without the tail cut), piecewise and one-bit
  Duchi, for victims at both ends and the middle of a group, budgets up to 50, the grids
  chosen so that every cell's worst point is a grid point;
* the screening bound against exact Poisson-binomial sums; binned masses below every member's
  own mass (and the Gaussian scales of a bin around every member's); the value does not
  depend on earlier calls;
* coverage answers and bad input.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, special

from shuffledp import BudgetProfile, clear_caches, get_bound
from shuffledp.bounds.clones import aware, clone_reduction_delta, conditional_divergence
from shuffledp.errors import ParameterRegimeError
from shuffledp.families import get_family
from shuffledp.families.gaussian import _tail_cut as gaussian_tail_cut
from shuffledp.families.gaussian import gaussian_mixture_excess
from shuffledp.families.laplace import laplace_log_mass, laplace_tail_cut
from shuffledp.mechanisms.mean import (
    DuchiMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    PiecewiseMechanism,
    analytic_gaussian_sigma,
    gaussian_delta,
)
from shuffledp.poisson_binomial import poisson_binomial_pmf_exact

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
        closed = gaussian_mixture_excess(x, eps, sigma)
        assert closed == pytest.approx(num, rel=1e-6, abs=1e-13)


@pytest.mark.parametrize("eps", [0.05, 0.5, 1.0, 3.0, 8.0])
@pytest.mark.parametrize("delta", [1e-20, 1e-8, 1e-3, 0.3])
def test_gaussian_excess_is_largest_at_the_ends_and_equals_the_calibration(eps, delta):
    sigma = float(analytic_gaussian_sigma([eps], [delta])[0])
    at_end = gaussian_mixture_excess(1.0, eps, sigma)
    assert at_end == pytest.approx(float(gaussian_delta(eps, sigma)), rel=1e-9, abs=1e-300)
    assert at_end <= delta * (1 + 1e-9)  # the calibration rounds sigma up
    for x in np.linspace(-1.0, 1.0, 401):
        assert gaussian_mixture_excess(float(x), eps, sigma) <= at_end * (1 + 1e-9) + 1e-300


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
            tiers = aware._tiers(prof, get_family("gaussian"))
            members = tiers.sigma[g.start:g.stop]
            cut = gaussian_tail_cut(eta, g.sigma_hi)[0]
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
            cut, tail = laplace_tail_cut(eta, g.eps_lo)
            assert d_v == pytest.approx(tail, abs=1e-300)
            for j, ej in enumerate(np.sort(eps)):
                ref = (1 - tail) * _laplace_mass_bruteforce(vs, ej, cut)
                assert m[j] <= ref * (1 + 1e-9) + 1e-300
                assert m[j] >= ref * (1 - 2e-3) - 1e-12


def test_laplace_tail_is_the_largest_cut_mass():
    for eps_v in (0.1, 1.0, 3.0):
        for eta in (1e-3, 1e-9):
            cut, tail = laplace_tail_cut(eta, eps_v)
            b = 2 / eps_v
            exact = 0.5 * math.exp(-(cut - 1) / b) + 0.5 * math.exp(-(cut + 1) / b)  # x = 1
            assert tail == pytest.approx(exact, rel=1e-12) and tail <= eta * (1 + 1e-12)


# ----------------------------------------------------------------------------- Theorem 3
def _single_victim(prof, mech, u, eps):
    fam = get_family(mech)
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


def _duchi_pmf(eps):
    """One-bit Duchi on outputs (-1, +1), x in [-1, 1]: binary RR (truth probability
    q = e^eps / (1 + e^eps)) on a randomized rounding of x (docs/theory.md 6.3), with 1 - q
    computed as expit(-eps), accurately for every accepted eps."""
    q, q1 = float(special.expit(eps)), float(special.expit(-eps))
    return lambda x: np.array([(1 - x) / 2 * q + (1 + x) / 2 * q1,
                               (1 + x) / 2 * q + (1 - x) / 2 * q1])


def _leaky(pmf, delta, inputs):
    """(1 - delta) pmf(x) + delta (x revealed on a symbol of its own): (eps, delta)-LDP and of
    the mixture form of docs/theory.md Section 8 with pure part ``pmf``; the worst leak."""
    def out(x):
        leak = np.array([delta if x == u else 0.0 for u in inputs])
        return np.concatenate([(1.0 - delta) * pmf(x), leak])
    return out


def _exact_shuffled_deltas(pmfs, inputs, targets):
    """For each target eps: the max over neighbouring datasets (user 0 is the victim; every
    ordered pair of distinct inputs; every input of the others) of the hockey-stick divergence
    of the shuffled histograms, by enumeration (a depth-first walk over the others' inputs,
    each histogram law built once)."""
    n = len(pmfs)
    cache = {(i, x): pmfs[i](x) for i in range(n) for x in inputs}
    n_out = cache[0, inputs[0]].size
    big_e = np.exp(np.asarray(targets, dtype=float))[:, None]
    best = np.zeros(len(targets))

    def add(law, p):
        new = {}
        for h, w in law.items():
            for y in range(n_out):
                if p[y] > 0.0:
                    key = h[:y] + (h[y] + 1,) + h[y + 1:]
                    new[key] = new.get(key, 0.0) + w * p[y]
        return new

    def walk(i, law):
        if i == n:
            laws = {x: add(law, cache[0, x]) for x in inputs}
            for x0, x1 in itertools.permutations(inputs, 2):
                keys = list(laws[x0].keys() | laws[x1].keys())
                a = np.array([laws[x0].get(k, 0.0) for k in keys])
                b = np.array([laws[x1].get(k, 0.0) for k in keys])
                best[:] = np.maximum(best, np.maximum(a[None, :] - big_e * b[None, :], 0.0)
                                     .sum(axis=1))
            return
        for x in inputs:
            walk(i + 1, add(law, cache[i, x]))

    walk(1, {(0,) * n_out: 1.0})
    return best


#: (mechanism spec, pmf of a user with budget eps, inputs) for the discrete families.
DISCRETE = {
    "krr:2": (lambda e: _krr_pmf(e, 2), (0, 1)),
    "krr:3": (lambda e: _krr_pmf(e, 3), (0, 1, 2)),
    "krr:4": (lambda e: _krr_pmf(e, 4), (0, 1, 2, 3)),
    "oue:2": (lambda e: _oue_pmf(e, 2), (0, 1)),
    "oue:3": (lambda e: _oue_pmf(e, 3), (0, 1, 2)),
    # inputs at the extremes and the midpoint: the victim pair (-1, +1) among the pairs
    "duchi": (_duchi_pmf, (-1.0, 0.0, 1.0)),
}
TARGETS = (0.0, 0.1, 0.3, 1.0)


def _budgets(kind, n, seed):
    rng = np.random.default_rng([seed, 10, n, len(kind)])
    if kind == "uniform":
        return rng.uniform(0.2, 3.0, n)
    if kind == "wide":  # budgets far apart (eps_j > eps_v by a lot, and the reverse)
        return np.sort(np.exp(rng.uniform(math.log(0.05), math.log(8.0), n)))[::-1].copy()
    if kind == "ties":  # two users share a budget
        e = rng.uniform(0.2, 3.0, n)
        e[1] = e[0]
        return e
    raise ValueError(kind)


def _check_enumeration(mech, eps, delta=None):
    make, inputs = DISCRETE[mech]
    n = eps.size
    prof = BudgetProfile.from_arrays(eps, delta)
    bounds = [CLONES.delta(profile=prof, eps=t, mechanism=mech) for t in TARGETS]
    for victim in range(n):  # every user as the victim (user 0 of the enumeration)
        order = [victim] + [j for j in range(n) if j != victim]
        pmfs = [make(float(eps[j])) for j in order]
        if delta is not None:
            pmfs = [_leaky(p, float(delta[j]), inputs) for p, j in zip(pmfs, order, strict=True)]
        truth = _exact_shuffled_deltas(pmfs, inputs, TARGETS)
        for t, b, d in zip(TARGETS, bounds, truth, strict=True):
            assert b >= d * (1 - 1e-9) - 1e-15, (mech, eps.tolist(), victim, t, b, d)


@pytest.mark.parametrize("mech", sorted(DISCRETE))
@pytest.mark.parametrize("kind,seed", [("uniform", 0), ("uniform", 1), ("wide", 0),
                                       ("ties", 0)])
def test_aware_clones_dominate_the_exact_shuffled_delta(mech, kind, seed):
    """Personalized pure budgets, n = 4 (n = 3 for OUE with d = 3): the bound is at least the
    exact shuffled delta of every neighbouring pair, by enumeration."""
    n = 3 if mech == "oue:3" else 4
    _check_enumeration(mech, _budgets(kind, n, seed))


@pytest.mark.slow
@pytest.mark.parametrize("mech", sorted(DISCRETE))
@pytest.mark.parametrize("kind,seed", [("uniform", 2), ("uniform", 3), ("wide", 1),
                                       ("ties", 1)])
def test_aware_clones_dominate_the_exact_shuffled_delta_n5(mech, kind, seed):
    _check_enumeration(mech, _budgets(kind, 5, seed))


@pytest.mark.parametrize("mech", ["krr:2", "krr:3", "oue:2", "duchi"])
@pytest.mark.parametrize("seed", range(2))
def test_aware_clones_dominate_the_exact_shuffled_delta_with_local_delta(mech, seed):
    """Users run (1 - delta_i) R(eps_i) + delta_i (the input revealed): (eps_i, delta_i)-LDP
    with the mixture form the bound reads local delta as (docs/theory.md Section 8); the
    bound with the profile's delta_i dominates the exact shuffled delta."""
    rng = np.random.default_rng([seed, 13])
    n = 3
    eps = rng.uniform(0.2, 3.0, n)
    delta = rng.choice([0.0, 1e-3, 0.05], n)
    _check_enumeration(mech, eps, delta)


@pytest.mark.slow
@pytest.mark.parametrize("mech", ["krr:2", "krr:3", "krr:4", "oue:2", "oue:3", "duchi"])
@pytest.mark.parametrize("seed", range(2, 5))
def test_aware_clones_dominate_the_exact_shuffled_delta_with_local_delta_n4(mech, seed):
    rng = np.random.default_rng([seed, 13])
    n = 4
    eps = rng.uniform(0.1, 4.0, n)
    delta = rng.choice([0.0, 1e-6, 1e-3, 0.1], n)
    _check_enumeration(mech, eps, delta)


def test_enumeration_reference_values():
    # by hand: binary RR, two users at eps = ln 3 (truth w.p. 3/4), user 1 on input 0; the
    # number of ones has law (3/16, 10/16, 3/16) with the victim on 1 and (9/16, 6/16, 1/16)
    # on 0, so at eps = 0 the divergence is 4/16 + 2/16 = 3/8 (every other pair: the same)
    pmfs = [_krr_pmf(math.log(3.0), 2)] * 2
    assert _exact_shuffled_deltas(pmfs, (0, 1), [0.0])[0] == pytest.approx(3 / 8, rel=1e-12)


# ----------------------------------------------------------------------------- domination
def _log_ratio_laplace(eps_v, eps_j, ys):
    """log(inf_x R_j(x)(y) / sup_x' R_v(x')(y)) at the points ``ys`` from LaplaceMechanism's
    densities (in log space, no underflow far out), inf and sup over a dense grid of inputs
    in [-1, 1] plus, for the sup, the input clip(y, -1, 1) (the density is unimodal in x with
    its mode at y, so the inf over [-1, 1] is at an end, in the grid, and the sup at
    clip(y, -1, 1))."""
    xs = np.linspace(-1.0, 1.0, 201)
    bj = float(LaplaceMechanism(eps=[eps_j]).scale()[0])
    bv = float(LaplaceMechanism(eps=[eps_v]).scale()[0])
    low = np.min(-np.abs(ys[:, None] - xs[None, :]), axis=1) / bj - math.log(2 * bj)
    near = np.maximum(np.max(-np.abs(ys[:, None] - xs[None, :]), axis=1),
                      -np.abs(ys - np.clip(ys, -1.0, 1.0)))
    high = near / bv - math.log(2 * bv)
    return low - high


def test_laplace_log_ratio_uses_the_mechanism_density():
    mj, mv = LaplaceMechanism(eps=[0.7]), LaplaceMechanism(eps=[1.9])
    ys = np.linspace(-5.0, 5.0, 41)
    xs = np.linspace(-1.0, 1.0, 2001)
    ref = (np.min(mj.pdf(ys[:, None], xs[None, :]), axis=1)
           / np.max(mv.pdf(ys[:, None], xs[None, :]), axis=1))
    assert np.allclose(np.exp(_log_ratio_laplace(1.9, 0.7, ys)), ref, rtol=1e-9)


@pytest.mark.parametrize("lo,hi", [(0.05, 0.05), (0.3, 0.5), (1.0, 2.0), (0.5, 4.0),
                                   (10.0, 12.0), (45.0, 50.0)])
def test_laplace_domination_on_a_grid(lo, hi):
    """R_j(x)(y) >= (r_j / 2)(P0(y) + P1(y)) for every victim of the group [lo, hi] (its ends
    and midpoint), every input pair and x, for the group masses the bound uses, with and
    without the tail cut (Lemma 8: the cut pure part is at most sup_x' R_v(x')(y) / (1 - tail)
    on |y| <= T and 0 beyond).  Since P0 + P1 <= 2 sup_x' R_v(x'), it suffices that
    r_j <= inf_x R_j(x)(y) / sup_x' R_v(x')(y).  On every cell between consecutive grid points
    (the grid contains 0, +-1, +-T) both log-densities are linear in y, so the log-ratio is
    linear and its minimum over the cell is at a grid point: the grid check is exact (checked
    at the midpoints too).  Beyond the grid the log-ratio is linear with slope
    (eps_v - eps_j) / 2 >= 0 wherever the mass is positive, so it only grows."""
    fam = get_family("laplace")
    users = sorted({lo * 0.5, lo, 0.5 * (lo + hi), hi, hi * 1.5, 0.01, 50.0, 3.0})
    users = [u for u in users if 0.0 < u <= 50.0]
    for eta in (0.0, 1e-3, 1e-12):
        cut, tail = laplace_tail_cut(eta, lo)
        for ev in (lo, 0.5 * (lo + hi), hi):
            top = cut if math.isfinite(cut) else 1.0 + 60.0 / ev
            ys = np.linspace(0.0, top, 1501)
            ys = np.unique(np.concatenate([-ys, ys, [1.0, -1.0, 0.0]]))
            mids = 0.5 * (ys[1:] + ys[:-1])
            for ej in users:
                if eta == 0.0:
                    m = float(fam.group_clone_mass(lo, hi, [ej])[0])
                else:
                    m = float((1 - tail) * np.exp(laplace_log_mass(lo, hi, cut,
                                                                          np.array([ej])))[0])
                if m == 0.0:
                    continue
                assert ej <= ev or math.isfinite(cut)  # lighter tails: no mass without a cut
                ratio = _log_ratio_laplace(ev, ej, ys) + math.log1p(-tail)
                assert math.log(m) <= float(ratio.min()) + 1e-12, (lo, hi, ev, ej, eta)
                at_mid = _log_ratio_laplace(ev, ej, mids) + math.log1p(-tail)
                assert np.allclose(at_mid, 0.5 * (ratio[1:] + ratio[:-1]), rtol=0, atol=1e-9)
                if not math.isfinite(cut):
                    assert ev >= ej  # the slope beyond the grid is (ev - ej) / 2 >= 0


@pytest.mark.parametrize("lo,hi", [(0.05, 0.05), (0.3, 0.5), (1.0, 2.0), (0.5, 4.0),
                                   (10.0, 12.0), (45.0, 50.0)])
def test_piecewise_domination_on_a_grid(lo, hi):
    """As for Laplace, with PiecewiseMechanism's densities: they are constant on every cell
    between consecutive points of a grid that contains +-C_j and +-C_v (inf over x of
    R_j(x)(y) is p_low(eps_j) on (-C_j, C_j), attained at x = +-1, and 0 outside; sup over x'
    of R_v(x')(y) is at most p_high(eps_v), the largest value of the density, on
    (-C_v, C_v) and 0 outside), so evaluating at the cell midpoints is exact."""
    fam = get_family("piecewise")
    users = [u for u in sorted({lo * 0.5, lo, 0.5 * (lo + hi), hi, hi * 1.5, 0.01, 50.0, 3.0})
             if 0.0 < u <= 50.0]
    xs = np.linspace(-1.0, 1.0, 401)
    for ev in (lo, 0.5 * (lo + hi), hi):
        mv = PiecewiseMechanism(eps=[ev])
        cv = float(mv.big_c()[0])
        p_high = float(mv.pdf(0.0, 0.0)[0])
        for ej in users:
            mj = PiecewiseMechanism(eps=[ej])
            cj = float(mj.big_c()[0])
            m = float(fam.group_clone_mass(lo, hi, [ej])[0])
            edge = max(cv, cj) * 1.5
            ys = np.unique(np.concatenate([np.linspace(-edge, edge, 2001), [cj, -cj, cv, -cv]]))
            mid = 0.5 * (ys[1:] + ys[:-1])
            low = np.min(mj.pdf(mid[:, None], xs[None, :]), axis=1)  # inf over x at the cell
            high = np.where(np.abs(mid) < cv, p_high, 0.0)  # sup over x' on the cell
            assert np.all(low >= m * high * (1 - 1e-12)), (lo, hi, ev, ej, m)
            if ej > lo:
                assert m == 0.0  # a user with a smaller range gives no clones of this group


def test_duchi_pmf_is_the_mechanism():
    for eps in (0.1, 1.0, 5.0):
        mech = DuchiMechanism(eps=[eps])
        for x in (-1.0, -0.3, 0.0, 1.0):
            ref = [float(mech.pmf(-1.0, x)[0]), float(mech.pmf(1.0, x)[0])]
            assert np.allclose(_duchi_pmf(eps)(x), ref, rtol=1e-12)


def test_duchi_domination_on_a_grid():
    """One-bit Duchi against the binary-RR pair of its victim (docs/theory.md 6.3, P0 + P1 =
    (1, 1)): R_j(x)(y) >= r_j / 2 for every x on a grid, r_j the mass the bound uses."""
    fam = get_family("duchi")
    for ej in (0.01, 0.5, 2.0, 10.0, 50.0):
        m = float(fam.group_clone_mass(0.1, 5.0, [ej])[0])
        pmf = _duchi_pmf(ej)
        for x in np.linspace(-1.0, 1.0, 101):
            p = pmf(float(x))
            assert np.all(p >= m / 2 * (1 - 1e-12))


def _pmf_table(mech, eps):
    """Rows: inputs; columns: outputs (k-RR: k x k, OUE: d x 2^d)."""
    family, _, arg = mech.partition(":")
    make = _krr_pmf if family == "krr" else _oue_pmf
    return np.array([make(eps, int(arg))(x) for x in range(int(arg))])


@pytest.mark.parametrize("mech", ["krr:3", "krr:4", "krr:10", "oue:2", "oue:3", "oue:5"])
@pytest.mark.parametrize("seed", range(2))
def test_discrete_pools_are_dominated(mech, seed):
    """The pools the bound uses (group_pool, victim groups of several tiers): for every group,
    every user j of the pool and every victim u of the group (u != j), exhaustively over
    inputs x, pairs x0 != x1 of the victim and outputs y,
    R_j(x)(y) >= (m_j / 2)(R_u(x0)(y) + R_u(x1)(y))."""
    rng = np.random.default_rng([seed, 14])
    eps = np.round(rng.uniform(0.05, 6.0, 25), 2)
    prof = BudgetProfile.from_arrays(eps)
    tiers, _ = np.unique(eps, return_counts=True)
    tables = {float(e): _pmf_table(mech, float(e)) for e in tiers}
    for g in aware.victim_groups(prof, mech, groups=4):
        _, _, m, counts, _ = aware.group_pool(prof, mech, g, groups=4)
        assert m.size == tiers.size
        for u in range(g.start, g.stop):
            tu = tables[float(tiers[u])]
            pair_max = np.max([tu[a] + tu[b] for a, b in itertools.permutations(range(len(tu)), 2)],
                              axis=0)
            for j in range(tiers.size):
                if j == u and np.sum(eps == tiers[j]) == 1:
                    continue  # the victim itself
                inf_j = tables[float(tiers[j])].min(axis=0)
                assert np.all(inf_j >= m[j] / 2 * pair_max * (1 - 1e-12)), (mech, u, j)


def test_screening_bound_dominates_the_exact_sum():
    """The screening bound (module docstring of aware, "Screening") against the exact
    Poisson-binomial law of random pools and the exact divergences."""
    rng = np.random.default_rng(15)
    for trial in range(120):
        size = int(rng.integers(1, 300))
        kind = trial % 4
        if kind == 0:
            m = rng.uniform(0, 1, size)
        elif kind == 1:
            m = 10 ** rng.uniform(-6, 0, size)
        elif kind == 2:
            m = np.full(size, rng.uniform(0, 1))
        else:
            m = np.where(rng.uniform(size=size) < 0.5, 1.0, rng.uniform(0, 0.01, size))
        counts = np.ones(size, dtype=np.int64)
        eps_v, d_v = float(rng.uniform(0.05, 8)), float(rng.choice([0.0, 1e-9, 1e-3]))
        sc = aware._screen_of(eps_v, d_v, m, counts, np.maximum(1 - m, 1e-200))
        assert np.all(sc.weights >= 0) and sc.weights.sum() == pytest.approx(1.0, abs=1e-12)
        f = poisson_binomial_pmf_exact(m)
        for eps in (0.0, eps_v * 0.1, eps_v * 0.5, eps_v * 0.9, eps_v):
            h = conditional_divergence(np.arange(f.size), eps, eps_v)
            truth = d_v + (1 - d_v) * float(np.dot(f, h))
            assert aware._screen_value(sc, eps) >= truth * (1 - 1e-9) - 1e-300


@pytest.fixture
def binned(monkeypatch):
    """Bin every profile of more than 50 distinct budgets into about 40 bins."""
    monkeypatch.setattr(aware, "BIN_MIN_TIERS", 50)
    monkeypatch.setattr(aware, "_BINS", 40)
    aware.clear_cache()
    yield
    aware.clear_cache()


@pytest.mark.parametrize("mech", ["laplace", "piecewise", "krr:3", "krr:10", "gaussian",
                                  "oue:3", "oue:100"])
@pytest.mark.parametrize("kind", ["narrow", "wide", "mixed_delta"])
def test_binned_masses_are_below_every_member(binned, mech, kind, monkeypatch):
    rng = np.random.default_rng([len(mech), len(kind), 16])
    n = 600
    eps = rng.uniform(0.5, 2.0, n) if kind == "narrow" else rng.uniform(0.05, 6.0, n)
    if mech == "gaussian":
        delta = 10 ** rng.uniform(-9, -5, n) if kind == "mixed_delta" else np.full(n, 1e-7)
    else:
        delta = np.where(rng.uniform(size=n) < 0.3, 1e-4, 0.0) if kind == "mixed_delta" else 0.0
    prof = BudgetProfile.from_arrays(eps, delta)
    fam = get_family(mech)
    plan_b = aware._plan(prof, fam, 8)
    monkeypatch.setattr(aware, "BIN_MIN_TIERS", 10**9)
    plan_e = aware._plan(prof, fam, 8)
    assert not plan_b.bins.exact and plan_e.bins.exact
    assert [(g.start, g.stop) for g in plan_b.groups] == [(g.start, g.stop)
                                                         for g in plan_e.groups]
    owner = np.repeat(np.arange(plan_b.bins.counts.size),
                      np.diff(np.searchsorted(np.cumsum(plan_e.tiers.counts),
                                              np.cumsum(plan_b.bins.counts), side="right"),
                              prepend=0))
    assert owner.size == plan_e.tiers.eps.size
    if mech == "gaussian":  # every user's sigma, as the mechanism computes it, in its bin
        tier_of = {(float(e), float(d)): i for i, (e, d) in
                   enumerate(zip(plan_e.tiers.eps, plan_e.tiers.delta, strict=True))}
        users = np.array([tier_of[float(e), float(d)] for e, d in
                          zip(prof.eps, prof.delta, strict=True)])
        sig = GaussianMechanism(eps=prof.eps, delta=prof.delta).sigma()
        for s_tier in (plan_e.tiers.sigma[users], sig):
            assert np.all(plan_b.bins.sigma_a[owner[users]] >= s_tier)
            assert np.all(plan_b.bins.sigma_b[owner[users]] <= s_tier)
    etas = (0.0, 1e-3, 1e-9) if fam.cuts_tails else (0.0,)
    for gi in range(len(plan_b.groups)):
        for eta in etas:
            e_b, d_b, m_b, c_b, _ = aware._group_pool(fam, plan_b, gi, eta)
            e_e, d_e, m_e, c_e, _ = aware._group_pool(fam, plan_e, gi, eta)
            assert e_b == e_e and d_b >= d_e and c_b.sum() == c_e.sum()
            assert np.all(m_b[owner] <= m_e * (1 + 1e-12) + 1e-300), (mech, kind, gi, eta)


@pytest.mark.parametrize("mech", ["laplace", "krr:4", "piecewise", "gaussian", "oue:3"])
def test_binned_bound_dominates_every_victim(binned, mech):
    rng = np.random.default_rng([len(mech), 17])
    n = 120
    eps = rng.uniform(0.3, 3.0, n)
    delta = np.full(n, 1e-7) if mech == "gaussian" else np.zeros(n)
    prof = BudgetProfile.from_arrays(eps, delta)
    assert not aware._plan_of(prof, get_family(mech), 3).bins.exact
    for target in (0.2, 0.8):
        ours = CLONES.delta(profile=prof, eps=target, mechanism=mech, victim_groups=3)
        worst = max(_single_victim(prof, mech, u, target) for u in range(n))
        assert ours >= worst * (1 - 1e-9)


@pytest.mark.parametrize("mech", ["laplace", "gaussian", "krr:10"])
def test_bound_does_not_depend_on_earlier_calls(mech):
    """Caches only memoize: delta(eps) is the same cold, warm and in any call order."""
    rng = np.random.default_rng(18)
    n = 3000
    prof = BudgetProfile.from_arrays(rng.uniform(0.5, 2.0, n),
                                     np.full(n, 1e-8 if mech == "gaussian" else 0.0))
    grid = [0.0, 0.05, 0.1, 0.2, 0.4]
    clear_caches()
    first = [CLONES.delta(profile=prof, eps=e, mechanism=mech) for e in grid]
    clear_caches()
    second = [CLONES.delta(profile=prof, eps=e, mechanism=mech) for e in grid[::-1]][::-1]
    third = [CLONES.delta(profile=prof, eps=e, mechanism=mech) for e in grid]  # warm
    assert first == second == third


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
