"""The HPS approximation of Liu et al. 2024 for the Laplace mechanism (``liu24``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from shuffledp import BudgetProfile, ParameterRegimeError, get_bound, list_bounds
from shuffledp.bounds import liu24
from shuffledp.numerics import eps_from_delta, hockey_stick
from shuffledp.poisson_binomial import binomial_window

LIU24 = get_bound("liu24")


def _uniform(low: float, high: float, n: int) -> np.ndarray:
    return np.random.default_rng(1).uniform(low, high, size=n)


def _two_groups(n: int) -> np.ndarray:
    return np.concatenate([np.full(n // 2, 0.5), np.full(n - n // 2, 2.0)])


def _brute_delta(n: int, s: float, w: float, eps: float) -> float:
    """The HPS mixture by enumeration: C ~ Bin(n, s/n); given c, A ~ Bin(c, 1/2) and
    K = A + 1 under Q, K = A + Bernoulli(2w) under P; hockey-stick summed over c."""
    total = 0.0
    for c, weight in enumerate(stats.binom.pmf(np.arange(n + 1), n, s / n)):
        b = stats.binom.pmf(np.arange(c + 1), c, 0.5)
        p = np.zeros(c + 2)
        q = np.zeros(c + 2)
        p[:-1] += (1.0 - 2.0 * w) * b
        p[1:] += 2.0 * w * b
        q[1:] = b
        total += weight * hockey_stick(p, q, eps)
    return total


# ----------------------------------------------------------------------------- (a) references
# Source: the authors' code, GitHub yixuanLL/HPS @ ddd02eb, computeamplification_HP_fDP.
# numericalanalysis(n, eps, zeros, 1e-6, 10, 100, True, "laplacian", C=0.1) (C = clip_bound of
# their evaluate_bounds.py), run in /work/scratch/hps on these budget vectors (uniform ones:
# numpy.random.default_rng(1).uniform(low, high, n); two groups: half at 0.5, half at 2.0).
# Their code took 1.6 s (n = 1000), 16 s (n = 10^4) and 140 s (n = 10^5) per value.
AUTHORS = [
    (("uniform", 0.5, 2.0, 1_000), 0.23764820561520816),
    (("uniform", 0.1, 1.0, 1_000), 0.13635400273963033),
    (("two_groups", None, None, 1_000), 0.26080429553985596),
    (("uniform", 0.5, 2.0, 10_000), 0.06571619213516058),
    (("uniform", 0.1, 1.0, 10_000), 0.03671464811580439),
    (("two_groups", None, None, 10_000), 0.07167782261967659),
    (("uniform", 0.5, 2.0, 100_000), 0.018703729017435215),
    (("uniform", 0.1, 1.0, 100_000), 0.010320981678380477),
]
#: Their clone sums S (grid regions, C = 0.1) for two of the profiles above.
AUTHORS_S = {("uniform", 0.5, 2.0, 10_000): 4789.581828769823,
             ("two_groups", None, None, 10_000): 4088.777389489901}
#: sum(eps) of default_rng(1).uniform(low, high, n): the budget vectors the values refer to.
FINGERPRINTS = {(0.5, 2.0, 1_000): 1254.2069683804802, (0.1, 1.0, 1_000): 552.524181028288}


def _budgets(key) -> np.ndarray:
    kind, low, high, n = key
    return _uniform(low, high, n) if kind == "uniform" else _two_groups(n)


def test_reference_budget_vectors_are_the_ones_the_authors_code_ran_on():
    for (low, high, n), total in FINGERPRINTS.items():
        assert float(_uniform(low, high, n).sum()) == pytest.approx(total, rel=1e-15)


@pytest.mark.parametrize(("key", "theirs"), AUTHORS, ids=[str(k) for k, _ in AUTHORS])
def test_matches_the_authors_code_to_half_a_percent(key, theirs):
    got = LIU24.eps(profile=BudgetProfile.from_arrays(_budgets(key)), delta=1e-6)
    # the gap is their grid for the regions (S lower by 0.4-0.7%), see the next test
    assert got == pytest.approx(theirs, rel=5e-3)
    assert got <= theirs


@pytest.mark.parametrize("key", list(AUTHORS_S), ids=str)
def test_with_the_authors_clone_sum_the_formula_matches_to_0_05_percent(key):
    # Isolates Corollary 4.3: fed their S, the closed-form threshold gives their eps (ours is
    # the exact per-c optimum, theirs a bisection on an aggregated equation: ours >= theirs).
    eps = _budgets(key)
    n, eps_v = eps.size, float(eps.max())
    window = binomial_window(n, AUTHORS_S[key] / n, tol=liu24.TOL)
    prep = liu24._Prepared(eps_v, -math.expm1(-eps_v / 2), window.support, window.pmf,
                           window.dropped_mass)
    got = eps_from_delta(lambda e: liu24._delta(prep, e), 1e-6, eps_hi=eps_v, eps_max=eps_v)
    theirs = dict(AUTHORS)[key]
    assert theirs <= got <= theirs * (1 + 5e-4)


@pytest.mark.parametrize(("eps_v", "eps_i"), [(2.0, 0.5), (2.0, 1.9), (1.0, 0.1), (4.0, 0.5),
                                              (0.3, 0.05), (8.0, 7.0)])
def test_region_masses_match_numerical_integration(eps_v, eps_i):
    # Independent: the densities of Laplace(x, 2/eps) on a fine grid, the regions R_0, R_1 by
    # direct comparison, the masses of M_i(-1) by the trapezoidal rule.
    half = 60.0 / eps_i + 5.0
    y = np.linspace(-half, half, 4_000_001)

    def dens(loc, e):
        return e / 4.0 * np.exp(-e * np.abs(y - loc) / 2.0)

    f0, f1, fi = dens(-1.0, eps_v), dens(1.0, eps_v), dens(-1.0, eps_i)
    r0 = (f0 > f1) & (f0 > fi)
    r1 = (f1 > f0) & (f1 > fi)
    want0 = np.trapezoid(np.where(r0, fi, 0.0), y)
    want1 = np.trapezoid(np.where(r1, fi, 0.0), y)
    p0, p1 = liu24.region_masses([eps_i], eps_v)
    assert float(p0[0]) == pytest.approx(want0, rel=1e-3)
    assert float(p1[0]) == pytest.approx(want1, rel=1e-3)


@pytest.mark.parametrize("n", [2, 7, 60, 300])
def test_delta_equals_the_enumerated_mixture(n):
    rng = np.random.default_rng(n)
    prof = BudgetProfile.from_arrays(rng.uniform(0.3, 3.0, n))
    s, w = liu24.clone_sum(prof), liu24.victim_weight(prof.eps_max)
    for eps in (0.0, 0.05, 0.3, 1.0, 0.999 * prof.eps_max):
        want = _brute_delta(n, s, w, eps)
        assert LIU24.delta(profile=prof, eps=eps) == pytest.approx(want, rel=1e-9, abs=1e-300)


# ----------------------------------------------------------------------------- (b) invariants
@pytest.mark.parametrize("eps0", [0.1, 1.0, 4.0])
def test_identical_budgets_reduce_to_the_formula_there(eps0):
    # p_i = 2 p_{i,1} = e^{-eps0/2} for every other user (R_0 empty, their convention), and
    # w = e^{-eps0/2} / 2: S = (n - 1) e^{-eps0/2}.
    n = 200
    prof = BudgetProfile.identical(n=n, eps0=eps0)
    s = (n - 1) * math.exp(-eps0 / 2)
    assert liu24.clone_sum(prof) == pytest.approx(s, rel=1e-13)
    for eps in (0.0, eps0 / 10, eps0 / 2):
        want = _brute_delta(n, s, math.exp(-eps0 / 2) / 2, eps)
        assert LIU24.delta(profile=prof, eps=eps) == pytest.approx(want, rel=1e-9)


def test_personalized_equals_identical_when_all_budgets_are_equal():
    for n, eps0 in ((2, 1.0), (1_000, 0.7), (20_000, 3.0)):
        same = BudgetProfile.from_arrays([eps0] * n)
        ident = BudgetProfile.identical(n=n, eps0=eps0)
        assert LIU24.eps(profile=same, delta=1e-6) == LIU24.eps(profile=ident, delta=1e-6)


def test_eps_non_increasing_in_n():
    eps = _uniform(0.5, 2.0, 50_000)
    eps[0] = 2.0  # the victim (largest budget) is in every prefix: users are only added
    for delta in (1e-30, 1e-6):
        values = [LIU24.eps(profile=BudgetProfile.from_arrays(eps[:n]), delta=delta)
                  for n in (30, 300, 3_000, 50_000)]
        assert all(b <= a for a, b in zip(values, values[1:], strict=False)), values
    for eps0 in (0.5, 4.0):
        values = [LIU24.eps(profile=BudgetProfile.identical(n=n, eps0=eps0), delta=1e-6)
                  for n in (10, 100, 1_000, 10**4, 10**6)]
        assert all(b <= a for a, b in zip(values, values[1:], strict=False)), values


@pytest.mark.parametrize("eps", [[50.0, 50.0], [0.5, 2.0, 45.0], [8.0] * 10, [0.0, 1e-9],
                                 [5e-324, 5e-324], [0.0, 0.0, 3.0]])
def test_eps_never_above_the_largest_local_eps(eps):
    prof = BudgetProfile.from_arrays(eps)
    for delta in (1e-30, 1e-6, 0.5):
        r = LIU24.evaluate(profile=prof, delta=delta)
        assert 0.0 <= r.eps <= prof.eps_max
        assert r.vacuous == (r.eps >= prof.eps_max * (1 - 1e-9))
    assert LIU24.delta(profile=prof, eps=prof.eps_max) == 0.0


def test_delta_non_increasing_in_eps_and_round_trip():
    prof = BudgetProfile.from_arrays(_uniform(0.1, 1.0, 5_000))
    grid = np.linspace(0.0, prof.eps_max, 200)
    deltas = [LIU24.delta(profile=prof, eps=float(e)) for e in grid]
    assert all(b <= a for a, b in zip(deltas, deltas[1:], strict=False))
    for delta in (1e-30, 1e-12, 1e-6, 1e-3):
        e = LIU24.eps(profile=prof, delta=delta)
        assert 0.0 < e < prof.eps_max
        assert LIU24.delta(profile=prof, eps=e) <= delta
        assert LIU24.delta(profile=prof, eps=e * (1 - 1e-6)) >= delta * (1 - 1e-3)


def test_clone_probability_is_continuous_up_to_the_victims_budget():
    # below eps_v the min is p_{i,1} near eps_v = 2, which tends to e^{-eps_v/2}/2
    near = liu24.clone_probability([2.0 - 1e-9, 2.0 - 1e-12], 2.0)
    at = liu24.clone_probability([2.0], 2.0)
    np.testing.assert_allclose(near, at[0], rtol=1e-8)


def test_registered_as_a_personalized_pure_laplace_approximation():
    info = LIU24.info
    assert "liu24" in list_bounds()
    assert info.kind == "approximate" and info.personalized and not info.approx_ldp
    assert info.randomizers == ("laplace",) and "approximation" in info.title
    prof = BudgetProfile.from_arrays(_uniform(0.5, 2.0, 1_000))
    r = LIU24.evaluate(profile=prof, delta=1e-6)
    assert r.diagnostics["victim_weight"] == pytest.approx(math.exp(-prof.eps_max / 2) / 2)
    assert 0 < r.diagnostics["clone_sum"] < 1_000


# ----------------------------------------------------------------------------- (c) bad input
def test_local_delta_is_refused():
    prof = BudgetProfile.identical(n=1_000, eps0=1.0, delta0=1e-10)
    with pytest.raises(ParameterRegimeError, match="pure LDP only"):
        LIU24.eps(profile=prof, delta=1e-6)


def test_bad_arguments():
    prof = BudgetProfile.identical(n=100, eps0=1.0)
    with pytest.raises(ValueError, match=r"delta must be in \[1e-30, 0.99\]"):
        LIU24.eps(profile=prof, delta=0.0)
    with pytest.raises(ValueError, match="unknown option"):
        LIU24.eps(profile=prof, delta=1e-6, mechanism="laplace")
    with pytest.raises(ValueError, match=r"eps_user must be in \[0, 1\] \(at most eps_victim\)"):
        liu24.region_masses([0.5, 1.5], 1.0)
    with pytest.raises(TypeError, match="eps_user must be a real number or an array"):
        liu24.region_masses("0.5", 1.0)
    with pytest.raises(ValueError, match="eps_victim must be finite and in"):
        liu24.victim_weight(math.inf)


def test_covers_no_randomizer_as_a_guarantee():
    prof = BudgetProfile.from_arrays(_uniform(0.5, 2.0, 100))
    lap = LIU24.covers(randomizer="laplace", profile=prof)
    assert not lap.covered and "approximation for the Laplace mechanism" in lap.reason
    rr = LIU24.covers(randomizer="binary_rr", profile=prof)
    assert not rr.covered and "Laplace mechanism only" in rr.reason


@pytest.mark.parametrize("eps0", [0.5, 2.0])
def test_blocks_of_clone_counts_match_the_per_count_sum(monkeypatch, eps0):
    # blocks start at 65 536 counts (about 5e7 users); forced here at 1e6 users
    prep = liu24._prepare(BudgetProfile.identical(n=10**6, eps0=eps0))
    for eps in (1e-3, 5e-3, 2e-2):
        full = liu24._delta(prep, eps)
        for blocks, rtol in ((100, 1e-6), (100, 1e-3), (20, math.inf)):
            with monkeypatch.context() as m:
                m.setattr(liu24, "BLOCK_MIN", 500)
                m.setattr(liu24, "BLOCKS", blocks)
                m.setattr(liu24, "BLOCK_RTOL", rtol)
                blocked = liu24._delta(prep, eps)
            # read at the first count of each block: never below the per-count sum
            assert full * (1 - 1e-12) <= blocked, (eps, full, blocked)
            if math.isfinite(rtol):
                assert blocked <= full * (1 + 2 * rtol), (eps, full, blocked)
