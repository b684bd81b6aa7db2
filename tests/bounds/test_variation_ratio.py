"""The variation-ratio pair of Wang et al. (registered ``variation_ratio``; docs/theory.md 11)."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from scipy import stats

import shuffledp
from shuffledp import BudgetProfile, ParameterRegimeError, get_bound
from shuffledp.bounds.variation_ratio import pair_delta, pair_eps, parameters
from shuffledp.families import VariationRatio, get_family

BOUND = get_bound("variation_ratio")


def _pair_laws(n: int, v: VariationRatio) -> tuple[dict, dict]:
    """The pair (P, Q) of Theorems 4.7/4.8 by enumerating C, A and the victim's addition
    (independent of the library's closed form)."""
    p, a, g, r = math.exp(v.log_p), v.alpha, v.gamma, v.r
    P: Counter = Counter()
    Q: Counter = Counter()
    for c in range(n):
        fc = stats.binom.pmf(c, n - 1, 2.0 * r)
        for k in range(c + 1):
            w = fc * stats.binom.pmf(k, c, 0.5)
            for (d1, d2), w0, w1 in (((1, 0), p * a, a), ((0, 1), a, p * a), ((0, 0), g, g)):
                P[k + d1, c - k + d2] += w * w0
                Q[k + d1, c - k + d2] += w * w1
    return P, Q


def _hs(x: dict, y: dict, eps: float) -> float:
    return sum(max(x[h] - math.exp(eps) * y.get(h, 0.0), 0.0) for h in x)


def _histogram_laws(victim0, victim1, other, n: int) -> tuple[dict, dict]:
    """Exact histogram laws of n shuffled reports: the victim's pmf and n - 1 i.i.d. others."""
    m = len(other)
    P: Counter = Counter()
    Q: Counter = Counter()
    for h in itertools.product(range(n), repeat=m):
        if sum(h) != n - 1:
            continue
        w = stats.multinomial.pmf(h, n - 1, other)
        for y in range(m):
            hh = list(h)
            hh[y] += 1
            P[tuple(hh)] += w * victim0[y]
            Q[tuple(hh)] += w * victim1[y]
    return P, Q


# --------------------------------------------------------------------------- (a) references
# Authors' code (github.com/wangsw/PrivacyAmplification, unifiedamplification.py,
# amplificationUB with computeUBParameters), delta = 1e-6: the general row, k-RR with k = 10,
# Laplace, and OUE (beta = (e^eps0 - 1)/(2 (e^eps0 + 1)), any d).  Only the general row is a
# proven bound (docs/theory.md 11.4); the other rows are reproduced through pair_eps.
REFERENCE = {
    (10_000, 1.0): (0.043206, 0.023252, 0.039617, 0.029728),
    (10_000, 4.0): (0.410815, 0.380457, 0.386053, 0.278678),
    (100_000, 1.0): (0.012431, 0.006639, 0.011388, 0.008517),
    (100_000, 4.0): (0.118161, 0.109915, 0.111443, 0.081403),
}
SPECS = ("binary_rr", "krr:10", "laplace", "oue:100")


@pytest.mark.parametrize(("n", "eps0"), list(REFERENCE))
def test_reference_values_of_the_authors(n, eps0):
    for spec, ref in zip(SPECS, REFERENCE[n, eps0], strict=True):
        got = pair_eps(n=n, delta=1e-6, params=get_family(spec).variation_ratio(eps0))
        assert got == pytest.approx(ref, rel=5e-3), spec
    prof = BudgetProfile.identical(n=n, eps0=eps0)
    assert BOUND.eps(profile=prof, delta=1e-6) == pytest.approx(REFERENCE[n, eps0][0], rel=5e-3)


def test_counterexample_krr_identical_budgets():
    # docs/theory.md 11.4: 3-RR, eps0 = 1, n = 2, victim 0 vs 1, the other user holds 0:
    # delta(0.8) = e (e - e^0.8) / (e + 2)^2 = 0.06017 exactly; the pair gives 0.02725.
    prof = BudgetProfile.identical(n=2, eps0=1.0)
    exact = get_bound("krr_exact").delta(profile=prof, eps=0.8, k=3)
    assert exact == pytest.approx(math.e * (math.e - math.exp(0.8)) / (math.e + 2) ** 2,
                                  rel=1e-9)
    pair = pair_delta(n=2, eps=0.8, params=get_family("krr:3").variation_ratio(1.0))
    assert pair == pytest.approx(0.027248, rel=1e-4)
    assert exact > 2.0 * pair  # Theorem 4.8 with the k-RR row is false
    # the registered bound (general row) stays above the exact curve
    assert BOUND.delta(profile=prof, eps=0.8) >= exact
    with pytest.raises(ParameterRegimeError, match="false"):
        BOUND.delta(profile=prof, eps=0.8, mechanism="krr:3")


def test_krr_pair_is_the_third_value_dataset_only():
    # The k-RR pair is exactly the law of the counts of 0s and 1s when every other user holds a
    # third value (why it looked tight), but the full histogram of that dataset leaks more.
    k, e0, n = 4, 1.0, 3
    pb = 1.0 / (math.exp(e0) + k - 1)
    pk = math.exp(e0) * pb
    v0 = [pk, pb, pb, pb]
    v1 = [pb, pk, pb, pb]
    other = [pb, pb, pk, pb]
    full_p, full_q = _histogram_laws(v0, v1, other, n)
    marg_p: Counter = Counter()
    marg_q: Counter = Counter()
    for h, w in full_p.items():
        marg_p[h[:2]] += w
    for h, w in full_q.items():
        marg_q[h[:2]] += w
    pair_p, pair_q = _pair_laws(n, get_family(f"krr:{k}").variation_ratio(e0))
    for key in set(marg_p) | set(pair_p):
        assert marg_p.get(key, 0.0) == pytest.approx(pair_p.get(key, 0.0), abs=1e-14)
        assert marg_q.get(key, 0.0) == pytest.approx(pair_q.get(key, 0.0), abs=1e-14)
    assert _hs(full_p, full_q, 0.5) > _hs(marg_p, marg_q, 0.5) + 1e-3


def test_counterexample_heterogeneous_form():
    # docs/theory.md 11.6: outputs {0, 1, u, w}, p = q = e, beta = 0.2.
    p, beta = math.e, 0.2
    a = beta / (p - 1.0)
    c = 1.0 - a - p * a
    v = VariationRatio(log_p=1.0, log_q=1.0, beta=beta, alpha=a, gamma=c)
    assert (round(a, 4), round(c, 4)) == (0.1164, 0.5672)
    victim0, victim1 = [p * a, a, c, 0.0], [a, p * a, c, 0.0]
    other = [a, a, c, a * (p - 1.0)]
    for n, exact, pair in ((3, 0.035029, 0.026495), (8, 0.0047246, 0.0040169)):
        P, Q = _histogram_laws(victim0, victim1, other, n)
        got = max(_hs(P, Q, 0.5), _hs(Q, P, 0.5))
        assert got == pytest.approx(exact, rel=1e-4)
        assert pair_delta(n=n, eps=0.5, params=v) == pytest.approx(pair, rel=1e-4)
        assert got > pair_delta(n=n, eps=0.5, params=v)


# --------------------------------------------------------------------------- (b) invariants
@pytest.mark.parametrize("spec", ["binary_rr", "krr:3", "krr:5", "laplace", "oue:4"])
@pytest.mark.parametrize("n", [1, 2, 3, 6, 9])
def test_pair_delta_matches_enumeration_both_directions(spec, n):
    for eps0 in (0.4, 1.0, 3.0):
        v = get_family(spec).variation_ratio(eps0)
        P, Q = _pair_laws(n, v)
        for eps in np.linspace(0.0, eps0, 6)[:-1]:
            d = pair_delta(n=n, eps=float(eps), params=v)
            forward, backward = _hs(P, Q, eps), _hs(Q, P, eps)
            assert backward == pytest.approx(forward, abs=1e-13)  # the mirror (a, b) -> (b, a)
            # charged: 1e-9 relative for the binomial pmf and its survival function, on terms
            # that partly cancel
            assert forward - 1e-14 <= d <= forward * (1 + 1e-7) + 1e-12


def test_equals_the_stronger_clone_pair():
    # gamma = 0: the general row is FMT23's pair (docs/theory.md 11.4)
    for n in (2, 10, 1000, 10**5):
        for eps0 in (0.5, 2.0, 8.0):
            prof = BudgetProfile.identical(n=n, eps0=eps0)
            for eps in (0.1 * eps0, 0.4 * eps0):
                a = BOUND.delta(profile=prof, eps=eps)
                b = get_bound("fmt23_numerical").delta(profile=prof, eps=eps)
                if max(a, b) > 1e-30:
                    assert a == pytest.approx(b, rel=2e-3)


@pytest.mark.parametrize("eps0", [0.1, 1.0, 4.0, 26.0, 36.7, 37.0, 40.0, 50.0])
@pytest.mark.parametrize("n", [2, 3, 50])
def test_never_below_rr_exact(eps0, n):
    prof = BudgetProfile.identical(n=n, eps0=eps0)
    for eps in np.linspace(0.0, eps0, 9)[:-1]:
        lower = get_bound("rr_exact").delta(profile=prof, eps=float(eps))
        assert BOUND.delta(profile=prof, eps=float(eps)) >= lower * (1.0 - 1e-9)
    assert BOUND.delta(profile=prof, eps=eps0) == 0.0
    assert BOUND.eps(profile=prof, delta=1e-6) <= eps0


@pytest.mark.parametrize(("n", "k"), [(2, 3), (3, 3), (5, 3), (3, 4), (4, 5), (2, 6)])
def test_never_below_krr_exact(n, k):
    for eps0 in (0.5, 1.0, 3.0):
        prof = BudgetProfile.identical(n=n, eps0=eps0)
        for eps in np.linspace(0.0, eps0, 7)[:-1]:
            lower = get_bound("krr_exact").delta(profile=prof, eps=float(eps), k=k)
            assert BOUND.delta(profile=prof, eps=float(eps)) >= lower * (1.0 - 1e-9)


@pytest.mark.parametrize("eps0", [0.5, 1.0, 4.0])
@pytest.mark.parametrize("delta", [1e-6, 1e-20])
def test_eps_non_increasing_in_n(eps0, delta):
    vals = [BOUND.eps(profile=BudgetProfile.identical(n=n, eps0=eps0), delta=delta)
            for n in (10, 100, 1000, 10_000, 100_000)]
    assert all(b <= a for a, b in zip(vals, vals[1:], strict=False))
    assert vals[0] <= eps0


def test_accepted_range_extremes():
    for eps0 in (0.0, 1e-9, 50.0):
        prof = BudgetProfile.identical(n=3, eps0=eps0)
        assert BOUND.delta(profile=prof, eps=800.0) == 0.0
        assert 0.0 <= BOUND.delta(profile=prof, eps=0.0) <= 1.0
        assert BOUND.eps(profile=prof, delta=1e-30) <= eps0
    # eps0 = 50: the victim alone leaks (e^50 - e^eps)/(e^50 + 1) at n = 2 up to clones
    prof = BudgetProfile.identical(n=2, eps0=50.0)
    assert BOUND.delta(profile=prof, eps=45.0) >= get_bound("rr_exact").delta(profile=prof,
                                                                               eps=45.0)


def test_personalized_through_the_worst_user():
    prof = BudgetProfile.from_arrays([0.5, 1.0, 2.0, 3.0] * 25)
    worst = BudgetProfile.identical(n=100, eps0=3.0)
    res = BOUND.evaluate(profile=prof, delta=1e-6)
    assert res.eps == pytest.approx(BOUND.eps(profile=worst, delta=1e-6), rel=1e-12)
    assert res.diagnostics["reduced_to_identical"]
    # Theorem 5 with the stronger clone mass (docs/theory.md 11.5)
    for spec in ("binary_rr", "duchi", "krr:3", "krr:10"):
        assert BOUND.covers(randomizer=spec, profile=prof).covered, spec
    for spec in ("laplace", "piecewise", "oue:10", "any", "gaussian"):
        assert not BOUND.covers(randomizer=spec, profile=prof).covered, spec


def test_coverage_identical_budgets():
    prof = BudgetProfile.identical(n=1000, eps0=1.0)
    assert BOUND.covers(randomizer="krr:10", profile=prof).covered
    assert BOUND.covers(randomizer="oue:2", profile=prof).covered  # 2/(1+e^eps) dominated
    assert not BOUND.covers(randomizer="oue:3", profile=prof).covered
    cov = BOUND.covers(randomizer="binary_rr", profile=prof, mechanism="laplace")
    assert not cov.covered and "gamma" in cov.reason


def test_parameters_of_the_families():
    e0 = 1.3
    ee = math.exp(e0)
    rows = {
        "binary_rr": (ee - 1) / (ee + 1),
        "duchi": (ee - 1) / (ee + 1),
        "krr:7": (ee - 1) / (ee + 6),
        "laplace": 1 - math.exp(-e0 / 2),
        "piecewise": (ee - 1) / (ee + math.exp(e0 / 2)),  # the authors' form, same number
        "oue:50": (ee - 1) / (2 * (ee + 1)),
    }
    for spec, beta in rows.items():
        v = get_family(spec).variation_ratio(e0)
        assert v.beta == pytest.approx(beta, rel=1e-14), spec
        assert v.alpha == pytest.approx(beta / (ee - 1), rel=1e-14), spec
        assert v.gamma == pytest.approx(1 - v.alpha * (1 + ee), abs=1e-14), spec
        assert (v.log_p, v.log_q) == (e0, e0)
    assert get_family("gaussian").variation_ratio(e0) is None


def test_oue_total_variation_by_enumeration():
    # beta of OUE from its definition (docs/theory.md 11.3), d = 3, pair (0, 1)
    for e0 in (0.3, 1.0, 4.0):
        qb = 1.0 / (math.exp(e0) + 1.0)

        def pmf(x, y, qb=qb):
            return math.prod((0.5 if i == x else qb) if b else (0.5 if i == x else 1 - qb)
                             for i, b in enumerate(y))

        outs = list(itertools.product((0, 1), repeat=3))
        tv = 0.5 * sum(abs(pmf(0, y) - pmf(1, y)) for y in outs)
        ratio = max(pmf(0, y) / pmf(1, y) for y in outs)
        v = get_family("oue:3").variation_ratio(e0)
        assert tv == pytest.approx(v.beta, rel=1e-12)
        assert ratio == pytest.approx(math.exp(e0), rel=1e-12)


# --------------------------------------------------------------------------- (c) bad input
def test_bad_input():
    prof = BudgetProfile.identical(n=100, eps0=1.0)
    for spec in ("krr:10", "laplace", "piecewise", "oue:100"):
        with pytest.raises(ParameterRegimeError, match="gamma"):
            BOUND.eps(profile=prof, delta=1e-6, mechanism=spec)
    with pytest.raises(ParameterRegimeError, match="not pure"):
        BOUND.eps(profile=prof, delta=1e-6, mechanism="gaussian")
    with pytest.raises(ValueError, match="randomizer must be one of"):
        BOUND.eps(profile=prof, delta=1e-6, mechanism="nope")
    with pytest.raises(TypeError, match="randomizer must be a spec string"):
        BOUND.eps(profile=prof, delta=1e-6, mechanism=3)
    with pytest.raises(ParameterRegimeError, match="pure LDP only"):
        BOUND.eps(profile=BudgetProfile.identical(n=100, eps0=1.0, delta0=1e-8), delta=1e-6)
    with pytest.raises(ValueError, match="unknown option"):
        BOUND.eps(profile=prof, delta=1e-6, clone="stronger")
    v = parameters(None, 1.0)
    with pytest.raises(ValueError, match="n must be an integer"):
        pair_delta(n=0, eps=0.1, params=v)
    with pytest.raises(ValueError, match="eps must be finite"):
        pair_delta(n=3, eps=-1.0, params=v)
    with pytest.raises(TypeError, match="params must be a VariationRatio"):
        pair_delta(n=3, eps=0.1, params=(1.0, 0.5, 1.0))
    with pytest.raises(ValueError, match="alpha \\(1 \\+ p\\) \\+ gamma must be 1"):
        VariationRatio(log_p=1.0, log_q=1.0, beta=0.2, alpha=0.2, gamma=0.5)
    with pytest.raises(ValueError, match="need log_q >= log_p"):
        VariationRatio(log_p=1.0, log_q=0.5, beta=v.beta, alpha=v.alpha, gamma=0.0)
    with pytest.raises(ValueError, match="eps0 must be finite"):
        get_family("krr:3").variation_ratio(-1.0)


# --------------------------------------------------------------------------- (d) contract
def test_registered_and_listed():
    assert "variation_ratio" in shuffledp.list_bounds()
    info = BOUND.info
    assert (info.kind, info.personalized, info.approx_ldp, info.clone_mass) == (
        "upper", False, False, "stronger")


# --------------------------------------------------------------------------- the published claim
@pytest.mark.parametrize(("n", "eps0"), list(REFERENCE))
def test_claimed_bound_reproduces_every_row_of_the_authors(n, eps0):
    claimed = get_bound("variation_ratio_claimed")
    assert claimed.info.kind == "approximate"
    prof = BudgetProfile.identical(n=n, eps0=eps0)
    for spec, ref in zip(SPECS, REFERENCE[n, eps0], strict=True):
        mech = None if spec == "binary_rr" else spec
        assert claimed.eps(profile=prof, delta=1e-6, mechanism=mech) == pytest.approx(
            ref, rel=5e-3), spec


def test_claimed_bound_is_below_the_exact_krr_curve_so_it_is_labelled_an_approximation():
    claimed = get_bound("variation_ratio_claimed")
    prof = BudgetProfile.identical(n=2, eps0=1.0)
    exact = get_bound("krr_exact").delta(profile=prof, eps=0.8, k=3)
    assert claimed.delta(profile=prof, eps=0.8, mechanism="krr:3") < exact / 2
    cov = claimed.covers(randomizer="krr:3", profile=prof, mechanism="krr:3")
    assert not cov.covered and "approximation" in cov.reason
    with pytest.raises(ParameterRegimeError, match="not pure LDP"):
        claimed.eps(profile=prof, delta=1e-6, mechanism="gaussian")
