"""``tier_sum_lower``: the exact law of a per-report score sum for the pairs "others at -1" and
"others at 0", personalized budgets in tiers, rounded down.

Checked against (1) a two-dimensional quadrature of the shuffled pair's densities at n = 2 with
two different budgets, written here (no shared code): the bound is a post-processing of one of
the pairs, so never above the largest of their divergences; (2) every covering rigorous upper
bound on seeded random tiered profiles; (3) ``lr_sum_lower`` on identical budgets (the same
statistic, quantized); (4) monotonicity in eps; (5) its regime errors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from shuffledp import BudgetProfile, ParameterRegimeError, get_bound
from shuffledp.bounds import tier_sum as TS
from shuffledp.families import get_family
from shuffledp.families.gaussian import analytic_gaussian_sigma

LOWER = get_bound("tier_sum_lower")


def _density(mechanism: str, eps: float, delta: float):
    """The report density of one user with budget (eps, delta) at input x, written from the
    mechanisms' definitions (Laplace scale 2/eps; Gaussian with the analytic sigma; piecewise
    of Wang et al. with C = (e^{eps/2} + 1) / (e^{eps/2} - 1))."""
    if mechanism == "laplace":
        b = 2.0 / eps
        return lambda y, x: np.exp(-np.abs(y - x) / b) / (2.0 * b)
    if mechanism == "gaussian":
        s = float(analytic_gaussian_sigma(np.array([eps]), np.array([delta]))[0])
        return lambda y, x: stats.norm.pdf(y, loc=x, scale=s)
    t = math.exp(eps / 2.0)
    c = (t + 1.0) / (t - 1.0)
    p = (math.exp(eps) - t) / (2.0 * t + 2.0)

    def f(y, x):
        left = (c + 1.0) / 2.0 * x - (c - 1.0) / 2.0
        right = left + c - 1.0
        inside = (y >= left) & (y <= right)
        return np.where(np.abs(y) <= c, np.where(inside, p, p / math.exp(eps)), 0.0)
    return f


def pair_truth_n2(mechanism: str, eps_v: float, eps_o: float, x_star: float, eps: float,
                  delta_i: float = 0.0, points: int = 1601) -> float:
    """max(H_E(P||Q), H_E(Q||P)) of the shuffled pair at n = 2 (victim +1 vs -1, the other
    user at x_star) by a midpoint rule on a square grid covering both densities."""
    fv, fo = _density(mechanism, eps_v, delta_i), _density(mechanism, eps_o, delta_i)
    if mechanism == "piecewise":
        w = max((math.exp(e / 2.0) + 1.0) / (math.exp(e / 2.0) - 1.0) for e in (eps_v, eps_o))
    elif mechanism == "gaussian":
        w = 1.0 + 12.0 * max(float(analytic_gaussian_sigma(np.array([e]), np.array([delta_i]))[0])
                             for e in (eps_v, eps_o))
    else:
        w = 1.0 + 40.0 * 2.0 / min(eps_v, eps_o)
    y = np.linspace(-w, w, points)
    h = y[1] - y[0]
    o = fo(y, x_star)
    pv, qv = fv(y, 1.0), fv(y, -1.0)
    big_p = 0.5 * (np.outer(pv, o) + np.outer(o, pv))
    big_q = 0.5 * (np.outer(qv, o) + np.outer(o, qv))
    big_e = math.exp(eps)
    return max(float(np.maximum(big_p - big_e * big_q, 0.0).sum()) * h * h,
               float(np.maximum(big_q - big_e * big_p, 0.0).sum()) * h * h)


@pytest.mark.parametrize("mechanism,eps_a,eps_b", [("laplace", 0.5, 2.0), ("laplace", 1.0, 4.0),
                                                   ("piecewise", 1.0, 3.0),
                                                   ("gaussian", 1.0, 3.0)])
def test_n2_never_above_the_pairs(mechanism, eps_a, eps_b):
    check_n2(mechanism, eps_a, eps_b,
             lambda prof, eps: LOWER.delta(profile=prof, eps=eps, mechanism=mechanism))


def check_n2(mechanism, eps_a, eps_b, lower):
    """``lower(profile, eps)`` never above the n = 2 quadrature truths, and not vacuous."""
    delta_i = 1e-6 if mechanism == "gaussian" else 0.0
    prof = BudgetProfile.from_histogram([eps_a, eps_b], [1, 1], [delta_i, delta_i])
    for eps in (0.0, 0.3, 0.8 * eps_b):
        low = lower(prof, eps)
        truths = [pair_truth_n2(mechanism, ev, eo, xs, eps, delta_i)
                  for ev, eo in ((eps_a, eps_b), (eps_b, eps_a)) for xs in (-1.0, 0.0)]
        # the quadrature's error is below 3e-3 here (1601^2 points; the piecewise densities jump)
        assert low <= max(truths) + 3e-3, (mechanism, eps, low, truths)
        assert low > 0.0 or max(truths) < 1e-3


def _random_tiered(rng: np.random.Generator, delta_i: float) -> BudgetProfile:
    k = int(rng.integers(1, 5))
    eps = np.sort(rng.uniform(0.3, 3.0, size=k))
    counts = rng.integers(1, 200, size=k)
    return BudgetProfile.from_histogram(eps, counts, np.full(k, delta_i))


@pytest.mark.parametrize("mechanism", ["laplace", "piecewise", "gaussian"])
def test_never_above_the_covering_upper_bounds(mechanism):
    rng = np.random.default_rng([20240101, 7])
    delta_i = 1e-8 if mechanism == "gaussian" else 0.0
    for _ in range(2):
        prof = _random_tiered(rng, delta_i)
        low = LOWER.eps(profile=prof, delta=1e-6, mechanism=mechanism)
        checked = 0
        for name in ("clones", "blanket", "tightest"):
            up_bound = get_bound(name)
            if not up_bound.covers(randomizer=mechanism, profile=prof,
                                   mechanism=mechanism).covered:
                continue
            try:
                up = up_bound.eps(profile=prof, delta=1e-6, mechanism=mechanism)
            except ParameterRegimeError:
                continue
            checked += 1
            assert low <= up * (1 + 1e-9), (mechanism, prof, name, low, up)
        assert checked >= 1


def test_distinct_budgets_one_score():
    """Beyond 64 tiers every user is its own tier (one score, one victim): never above the
    covering upper bounds, above window_lower on this profile (0.144 against 0.126)."""
    rng = np.random.default_rng([20240101, 9])
    prof = BudgetProfile.uniform(n=2000, low=0.5, high=2.0, rng=rng)
    low = LOWER.eps(profile=prof, delta=1e-6, mechanism="laplace")
    win = get_bound("window_lower").eps(profile=prof, delta=1e-6, mechanism="laplace")
    up = get_bound("clones").eps(profile=prof, delta=1e-6, mechanism="laplace")
    assert win <= low <= up


def test_identical_budgets_match_lr_sum():
    """Equal budgets: the score p/w is Su et al.'s r, quantized to 1024 levels; within 3% of
    lr_sum_lower's exact lattice labels (measured: 0.03128 against 0.03098)."""
    prof = BudgetProfile.identical(n=10_000, eps0=1.0)
    a = LOWER.eps(profile=prof, delta=1e-6, mechanism="laplace")
    b = get_bound("lr_sum_lower").eps(profile=prof, delta=1e-6, mechanism="laplace")
    assert a >= 0.97 * b
    assert a <= get_bound("tightest").eps(profile=prof, delta=1e-6, mechanism="laplace")


def test_delta_is_non_increasing_in_eps():
    prof = BudgetProfile.from_histogram([0.5, 2.0], [300, 30])
    vals = [LOWER.delta(profile=prof, eps=e, mechanism="laplace") for e in
            np.linspace(0.0, 2.0, 21)]
    assert all(b <= a for a, b in zip(vals, vals[1:], strict=False))
    assert vals[0] > 0.0 and vals[-1] == 0.0


def test_regime_errors():
    many = BudgetProfile.from_histogram(np.linspace(0.5, 1.0, TS.MAX_TIERS + 1),
                                        np.ones(TS.MAX_TIERS + 1, dtype=int))
    with pytest.raises(ParameterRegimeError, match=f"at most {TS.MAX_TIERS} distinct budgets"):
        LOWER.eps(profile=many, delta=1e-6, mechanism="laplace")
    with pytest.raises(ParameterRegimeError, match="every eps_i >= 1e-06"):
        LOWER.eps(profile=BudgetProfile.from_arrays([1e-9, 1.0]), delta=1e-6)
    # eps beyond e^700 or at the largest pure budget: 0, a valid lower bound
    ident = BudgetProfile.identical(n=10, eps0=1.0)
    assert LOWER.delta(profile=ident, eps=800.0) == 0.0
    assert LOWER.delta(profile=ident, eps=1.0) == 0.0
    with pytest.raises(ParameterRegimeError, match="no interval masses"):
        LOWER.eps(profile=BudgetProfile.identical(n=10, eps0=1.0), delta=1e-6,
                  mechanism="binary_rr")
    with pytest.raises(ParameterRegimeError, match="delta_i > 0"):
        LOWER.eps(profile=BudgetProfile.identical(n=10, eps0=1.0), delta=1e-6,
                  mechanism="gaussian")
    p = BudgetProfile.identical(n=10, eps0=1.0)
    assert LOWER.covers(randomizer="laplace", profile=p, mechanism="laplace").covered
    assert not LOWER.covers(randomizer="piecewise", profile=p, mechanism="laplace").covered


def test_masses_are_laws():
    """Each tier's score law is a probability law up to its stated error."""
    fam_eps = np.array([0.5, 2.0])
    laws, law_p, law_q, errs, err_v = TS.tier_laws(
        get_family("laplace"), fam_eps, np.zeros(2),
        np.array([10, 3]), 1, "p/w", -1.0)
    for law, err in zip(laws, errs, strict=True):
        assert abs(law.sum() - 1.0) <= err + 1e-12
    assert abs(law_p.sum() - 1.0) <= err_v + 1e-12
    assert abs(law_q.sum() - 1.0) <= err_v + 1e-12


def test_exact_sums_bound_their_error():
    """``exact_sums`` against exact rational sums: every row within its stated l1 error, and
    that error far below a float sum's ``columns x u`` (random masses, ties, tiny entries)."""
    from fractions import Fraction

    from shuffledp.bounds.tier_sum_laws import SUM_UNIT, exact_sums

    rng = np.random.default_rng([20240101, 31])
    for size, cols in ((1, 7), (5, 300), (40, 2000)):
        m = rng.dirichlet(np.full(cols, 0.3), size=4)
        m[:, ::7] *= 1e-17  # entries below the unit
        index = rng.integers(0, size, cols)
        got, err = exact_sums(m, index, size)
        for r in range(m.shape[0]):
            exact = [sum((Fraction(float(x)) for x in m[r, index == k]), Fraction(0))
                     for k in range(size)]
            dist = sum(abs(Fraction(float(g)) - e) for g, e in zip(got[r], exact, strict=True))
            assert float(dist) <= err[r]
        assert np.all(err <= cols * SUM_UNIT + 2.0 * np.finfo(float).eps)
    with pytest.raises(ValueError, match="entries must lie in"):
        exact_sums(np.array([[0.5, -0.1]]), np.array([0, 1]), 2)


def test_charges_do_not_grow_with_a_float_sum_per_user():
    """At 10^6 identical users the laws' total charge (``tv``, an l1 bound summed over the
    users) stays below 1e-8, a hundredth of delta = 1e-6 (a float sum of 4,096 cells per user
    charged 4.6e-7, and moved eps from 0.00579 to 0.00542)."""
    prof = BudgetProfile.identical(n=1_000_000, eps0=2.0)
    TS._CACHE.clear()
    eps = LOWER.eps(profile=prof, delta=1e-6, mechanism="laplace")
    pipe = TS._pipelines(prof, get_family("laplace"))[0]
    assert pipe.tv < 1e-8
    assert eps <= get_bound("blanket").eps(profile=prof, delta=1e-6, mechanism="laplace")


def pair_truth_n3_laplace(eps_v: float, eps_others: tuple[float, float], x_star: float,
                          eps_list: tuple[float, ...], points: int) -> list[float]:
    """max(H_E(P||Q), H_E(Q||P)) of the shuffled Laplace pair at n = 3 (victim at +1 vs -1
    with budget eps_v, the two others at x_star with their budgets), for each eps: a midpoint
    rule on a cube holding all but about 1e-4 of each density, written from the definition
    (the multiset density is the average over the 3! ways to place the three reports)."""
    b1, b2, bv = (2.0 / e for e in (*eps_others, eps_v))
    w = 1.0 + 9.0 * max(bv, b1, b2)
    h = 2.0 * w / points
    y = -w + h * (np.arange(points) + 0.5)

    def lap(x, b):
        return np.exp(-np.abs(y - x) / b) / (2.0 * b) * h

    pv, qv, o1, o2 = lap(1.0, bv), lap(-1.0, bv), lap(x_star, b1), lap(x_star, b2)
    oo = np.outer(o1, o2) + np.outer(o2, o1)
    out = np.zeros((len(eps_list), 2))
    for i in range(points):  # slice by the first coordinate: arrays of points^2
        sym_p1 = np.outer(pv, o2) + np.outer(o2, pv)
        sym_p2 = np.outer(pv, o1) + np.outer(o1, pv)
        big_p = (pv[i] * oo + o1[i] * sym_p1 + o2[i] * sym_p2) / 6.0
        sym_q1 = np.outer(qv, o2) + np.outer(o2, qv)
        sym_q2 = np.outer(qv, o1) + np.outer(o1, qv)
        big_q = (qv[i] * oo + o1[i] * sym_q1 + o2[i] * sym_q2) / 6.0
        for k, eps in enumerate(eps_list):
            big_e = math.exp(eps)
            out[k, 0] += float(np.maximum(big_p - big_e * big_q, 0.0).sum())
            out[k, 1] += float(np.maximum(big_q - big_e * big_p, 0.0).sum())
    return [float(v) for v in out.max(axis=1)]


@pytest.mark.parametrize("eps_a,eps_b", [(1.0, 1.0), (0.7, 2.0)])
def test_n3_laplace_never_above_a_cube_quadrature(eps_a, eps_b):
    """Three users (budgets eps_a, eps_b, eps_b): tier_sum_lower (and, for identical budgets,
    lr_sum_lower) never above the largest divergence of the pairs it can be a post-processing
    of (the victim in either tier, the others at -1 or 0), by a 3-D quadrature.  Convergence:
    the midpoint rule's error falls 4x per halving of the step (measured: 150 against 300
    points per axis differ by up to 5e-3, 200 against 400 by up to 3e-3); the truth is taken as
    the Richardson value fine + (fine - coarse) / 3 with the whole gap as tolerance."""
    budgets = [eps_a, eps_b, eps_b]
    prof = BudgetProfile.from_arrays(budgets)
    eps_list = (0.1, 0.5)
    lows = {e: [LOWER.delta(profile=prof, eps=e, mechanism="laplace")] for e in eps_list}
    if eps_a == eps_b:
        for e in eps_list:
            lows[e].append(get_bound("lr_sum_lower").delta(profile=prof, eps=e,
                                                           mechanism="laplace"))
    victims = {(budgets[i], tuple(budgets[:i] + budgets[i + 1:])) for i in range(3)}
    coarse, fine = [], []
    for ev, others in victims:
        for xs in (-1.0, 0.0):
            coarse.append(pair_truth_n3_laplace(ev, others, xs, eps_list, 200))
            fine.append(pair_truth_n3_laplace(ev, others, xs, eps_list, 400))
    for k, e in enumerate(eps_list):
        gap = max(abs(c[k] - f[k]) for c, f in zip(coarse, fine, strict=True))
        assert gap < 5e-3, (e, gap)
        truth = max(f[k] + (f[k] - c[k]) / 3.0 for c, f in zip(coarse, fine, strict=True))
        assert max(lows[e]) <= truth + gap, (e, lows[e], truth, gap)
        assert min(lows[e]) > 0.5 * truth, (e, lows[e], truth)  # and not vacuous
