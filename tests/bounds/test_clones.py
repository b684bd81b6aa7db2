"""Tests of the `clones` bound (shuffledp.bounds.clones)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from shuffledp import BudgetProfile, ParameterRegimeError, get_bound, list_bounds
from shuffledp.bounds.base import KIND_LABELS
from shuffledp.bounds.clones import (
    clone_count,
    clone_pair,
    clone_probabilities,
    clone_reduction_delta,
    clones_delta,
    conditional_divergence,
)
from shuffledp.bounds.clones.divergence import _divergence_terms
from shuffledp.numerics import hockey_stick

BOUND = get_bound("clones")


def _direct_pair(c: int, eps_v: float) -> tuple[np.ndarray, np.ndarray]:
    """P_c, Q_c on a = 0..c+1 straight from the definition (docs/theory.md, section 3.4)."""
    q = math.exp(eps_v) / (1.0 + math.exp(eps_v))
    a = np.arange(c + 2)
    b_prev = stats.binom.pmf(a - 1, c, 0.5)
    b_here = stats.binom.pmf(a, c, 0.5)
    return q * b_prev + (1 - q) * b_here, (1 - q) * b_prev + q * b_here


# ----------------------------------------------------------------------------- (a) references
def test_fmt21_readme_reference_standard_clones():
    # FMT21 authors' README (apple/ml-shuffling-amplification): n = 1e5, eps0 = 4,
    # delta = 1e-6, numerical bound in [0.1675385583317841, 0.172790550755978].
    prof = BudgetProfile.identical(n=100_000, eps0=4.0)
    eps = BOUND.eps(profile=prof, delta=1e-6, clone="standard")
    assert 0.1675 <= eps <= 0.1728


def _mp_divergence(c: int, eps: float, eps_v: float) -> float:
    """H_{e^eps}(P_c || Q_c) in 50-digit arithmetic, straight from the definition."""
    import mpmath as mp

    with mp.workdps(50):
        big_l, big_e = mp.exp(mp.mpf(eps_v)), mp.exp(mp.mpf(eps))
        q, q1 = big_l / (1 + big_l), 1 / (1 + big_l)
        total = mp.mpf(0)
        for a in range(c + 2):
            b_prev = mp.binomial(c, a - 1) / mp.mpf(2) ** c if a >= 1 else 0
            b_here = mp.binomial(c, a) / mp.mpf(2) ** c if a <= c else 0
            p_a, q_a = q * b_prev + q1 * b_here, q1 * b_prev + q * b_here
            total += max(p_a - big_e * q_a, 0)
        return float(total)


@pytest.mark.parametrize("c", [0, 1, 2, 7, 50, 501])
@pytest.mark.parametrize("eps_v", [0.3, 1.0, 4.0, 26.0, 37.0, 50.0])
def test_closed_form_equals_high_precision_definition(c, eps_v):
    # the threshold / survival-function form of H_c against a 50-digit evaluation of the
    # definition, including eps within 1e-9 of eps_v and budgets where q rounds to 1; the
    # computed value is within its own stated round-off bound rho_c (+1e-15) of the truth
    grid = list(np.linspace(0.0, eps_v * 1.1, 9)) + [eps_v * (1 - 1e-9), eps_v - 1e-6]
    for eps in grid:
        if eps >= eps_v:
            assert conditional_divergence(c, float(eps), eps_v)[0] == 0.0
            continue
        h, rho = _divergence_terms(np.array([c]), float(eps), eps_v)
        ref = _mp_divergence(c, float(eps), eps_v)
        assert abs(h[0] - ref) <= rho[0] + 1e-15 + 1e-13 * ref, (eps, h[0], ref, rho[0])


def test_direct_pair_is_symmetric():
    # Q_c(a) = P_c(c + 1 - a), so H(Q||P) = H(P||Q): one direction suffices
    for c in (0, 3, 40):
        p, q = _direct_pair(c, 2.0)
        for eps in (0.0, 0.5, 1.5):
            assert hockey_stick(q, p, eps) == pytest.approx(hockey_stick(p, q, eps), abs=1e-15)


def test_identical_budgets_equal_direct_binomial_computation():
    # independent implementation: C ~ Bin(n - 1, 2p), sum over c of Pr[C = c] H_c
    n, eps0 = 60, 1.2
    prof = BudgetProfile.identical(n=n, eps0=eps0)
    r = 2.0 / (1.0 + math.exp(eps0))
    for eps in [0.0, 0.3, 0.7, 1.1]:
        ref = sum(
            stats.binom.pmf(c, n - 1, r) * hockey_stick(*_direct_pair(c, eps0), eps)
            for c in range(n)
        )
        got = clones_delta(profile=prof, eps=eps)
        # an upper bound, above the exact value by at most its charged round-off allowance
        # (1e-9 of the magnitudes of the survival-function terms and of the pmf entries)
        assert ref - 1e-15 <= got <= ref * (1 + 1e-7) + 1e-14


# ----------------------------------------------------------------------------- (b) invariants
def test_personalized_with_equal_budgets_reduces_to_identical():
    a = BudgetProfile.identical(n=500, eps0=1.5)
    b = BudgetProfile.from_arrays(np.full(500, 1.5))
    for eps in [0.1, 0.4]:
        assert clones_delta(profile=a, eps=eps) == clones_delta(profile=b, eps=eps)


def test_delta_monotone_and_capped():
    prof = BudgetProfile.from_arrays(np.linspace(0.5, 2.0, 300), delta=1e-9)
    grid = np.linspace(0.0, 2.5, 40)
    d = np.array([clones_delta(profile=prof, eps=float(e)) for e in grid])
    assert np.all(np.diff(d) <= 1e-15)
    assert np.all(d >= prof.delta_max)
    assert d[-1] == prof.delta_max  # eps >= eps_v: delta = delta_v exactly


def test_eps_zero_victim():
    prof = BudgetProfile.identical(n=10, eps0=0.0, delta0=1e-7)
    assert clones_delta(profile=prof, eps=0.0) == 1e-7


def test_eps_not_above_max_local_eps_and_non_increasing_in_n():
    out = []
    for n in [100, 1000, 10_000, 100_000]:
        prof = BudgetProfile.identical(n=n, eps0=2.0)
        e = BOUND.eps(profile=prof, delta=1e-6)
        assert e <= 2.0
        out.append(e)
    assert all(b <= a for a, b in zip(out[:-1], out[1:], strict=True))


def test_removing_a_user_never_lowers_eps():
    rng = np.random.default_rng(7)
    prof = BudgetProfile.uniform(n=400, low=0.5, high=2.0, rng=rng)
    base = BOUND.eps(profile=prof, delta=1e-6)
    for i in [0, int(np.argmax(prof.eps)), int(np.argmin(prof.eps))]:
        assert BOUND.eps(profile=prof.without(i), delta=1e-6) >= base - 1e-9


def test_standard_dominates_stronger():
    rng = np.random.default_rng(8)
    prof = BudgetProfile.uniform(n=2000, low=0.5, high=3.0, rng=rng)
    for eps in np.linspace(0.0, 1.0, 11):
        std = clones_delta(profile=prof, eps=float(eps), clone="standard")
        strong = clones_delta(profile=prof, eps=float(eps), clone="stronger")
        assert std >= strong


def test_rounding_down_never_lowers_delta():
    # The exact divergence can only grow when clone probabilities are rounded down.  The
    # computed values carry their own charged slack (at most 1e-3 of the value after
    # refinement, and a 1e-50 far-tail charge), so they are compared within that slack and
    # only where the bound is in the accepted range (>= 1e-30).
    rng = np.random.default_rng(9)
    prof = BudgetProfile.uniform(n=3000, low=0.5, high=2.0, rng=rng)
    checked = 0
    for eps in np.linspace(0.0, 0.8, 9):
        exact = clones_delta(profile=prof, eps=float(eps), rel_step=0.0)
        if exact < 1e-30:
            continue
        for step in [1e-3, 1e-2, 0.1]:
            rounded = clones_delta(profile=prof, eps=float(eps), rel_step=step)
            assert rounded >= exact * (1 - 2e-3)
            checked += 1
    assert checked >= 15


def test_conservative_victim_dominates_every_explicit_victim():
    rng = np.random.default_rng(10)
    eps_i = rng.uniform(0.3, 2.5, 40)
    delta_i = rng.choice([0.0, 1e-8, 1e-7], 40)
    prof = BudgetProfile.from_arrays(eps_i, delta_i)
    for clone in ["stronger", "standard"]:
        r = clone_probabilities(prof, clone=clone)
        for eps in [0.0, 0.5, 1.0, 2.0]:
            registered = clones_delta(profile=prof, eps=eps, clone=clone)
            for u in range(prof.n):
                mine = clone_reduction_delta(
                    pool=np.delete(r, u), eps_v=eps_i[u], delta_v=delta_i[u], eps=eps
                )
                assert registered >= mine


def test_rr_exact_below_clones():
    rr = get_bound("rr_exact")
    rng = np.random.default_rng(11)
    for prof in [
        BudgetProfile.identical(n=1000, eps0=3.0),
        BudgetProfile.uniform(n=2000, low=0.5, high=2.0, rng=rng),
    ]:
        for eps in [0.1, 0.5, 1.0]:
            assert rr.delta(profile=prof, eps=eps) <= BOUND.delta(profile=prof, eps=eps)


def test_local_delta_enters_and_regime_error():
    prof = BudgetProfile.identical(n=1000, eps0=1.0, delta0=1e-5)
    assert BOUND.delta(profile=prof, eps=0.9) >= 1e-5
    with pytest.raises(ParameterRegimeError, match="cannot certify"):
        BOUND.eps(profile=prof, delta=1e-6)


def test_cache_reuses_the_count_pmf():
    prof = BudgetProfile.identical(n=5000, eps0=1.0)
    assert clone_count(prof) is clone_count(prof)
    assert clone_count(prof, clone="standard") is not clone_count(prof)


def test_clone_pair_reproduces_delta_and_is_symmetric():
    rng = np.random.default_rng(12)
    prof = BudgetProfile.uniform(n=300, low=0.5, high=2.0, rng=rng, delta0=1e-9)
    p, q, tail = clone_pair(prof, tol=1e-13)
    assert tail >= 1e-9
    assert abs(p.sum() + tail - 1.0) < 1e-8 and abs(q.sum() + tail - 1.0) < 1e-8
    np.testing.assert_allclose(np.sort(p), np.sort(q), rtol=1e-12)
    for eps in [0.0, 0.3, 0.8]:
        d = clones_delta(profile=prof, eps=eps)
        # the same divergence up to the round-off allowances each side charges (1e-9 relative)
        assert hockey_stick(p, q, eps) + tail >= d * (1 - 1e-8) - 1e-12
        assert hockey_stick(p, q, eps) + tail <= d + 5e-9


@pytest.mark.slow
def test_one_million_distinct_budgets_is_ordered():
    # the cost target scale (n = 10^6 distinct budgets). Speed is measured by
    # benchmarks/bench_bounds.py, not asserted here: this checks the values at that scale.
    rng = np.random.default_rng(0)
    prof = BudgetProfile.uniform(n=1_000_000, low=0.5, high=2.0, rng=rng)
    stronger = BOUND.eps(profile=prof, delta=1e-6)
    standard = BOUND.eps(profile=prof, delta=1e-6, clone="standard")
    lower = get_bound("rr_exact").eps(profile=prof, delta=1e-6)
    assert 0.0 < lower <= stronger <= standard < 0.02


# ----------------------------------------------------------------------------- (c) bad input
def test_bad_options():
    prof = BudgetProfile.identical(n=10, eps0=1.0)
    with pytest.raises(ValueError, match="clone must be one of"):
        BOUND.eps(profile=prof, delta=1e-6, clone="weird")
    with pytest.raises(ValueError, match="tol must be in"):
        BOUND.delta(profile=prof, eps=0.5, tol=-1.0)
    with pytest.raises(ValueError, match="rel_step must be in"):
        BOUND.delta(profile=prof, eps=0.5, rel_step=0.5)
    with pytest.raises(ValueError, match="eps must be finite and >= 0"):
        clones_delta(profile=prof, eps=-1.0)
    with pytest.raises(ParameterRegimeError, match="max_points"):
        clone_pair(BudgetProfile.identical(n=10_000, eps0=1.0), max_points=100)


# ----------------------------------------------------------------------------- (d) contract
@pytest.mark.parametrize("name", list_bounds())
def test_contract_every_registered_bound(name):
    bound = get_bound(name)
    prof = BudgetProfile.identical(n=2000, eps0=1.0)
    assert bound.info.kind in KIND_LABELS
    try:
        res = bound.evaluate(profile=prof, delta=1e-6)
    except ParameterRegimeError:
        return
    assert 0.0 <= res.eps <= 1.0 + 1e-9 or bound.info.kind == "approximate"
    assert res.method == name
    d1 = bound.delta(profile=prof, eps=0.2)
    d2 = bound.delta(profile=prof, eps=0.4)
    assert 0.0 <= d2 <= d1 <= 1.0


# ----------------------------------------------------------------------------- blocks of counts
def _delta_with(monkeypatch, prof, eps, **settings):
    from shuffledp.bounds import clones
    from shuffledp.bounds.clones import divergence as module

    with monkeypatch.context() as m:
        for key, value in settings.items():
            m.setattr(module, key, value)
        clones.clear_cache()
        out = clones_delta(profile=prof, eps=eps)
    clones.clear_cache()
    return out


@pytest.mark.parametrize("eps0", [0.5, 3.0])
def test_blocks_of_clone_counts_bound_the_per_count_sum(monkeypatch, eps0):
    # blocks are used above BLOCK_MIN clone counts (about 5e7 users); forced here at 1e6
    prof = BudgetProfile.identical(n=10**6, eps0=eps0)
    for eps in (1e-4, 1e-3, 5e-3):
        full = _delta_with(monkeypatch, prof, eps, BLOCK_MIN=10**12)
        for blocks, rtol in ((64, 1e-6), (2000, 1e-5), (500, 1e-4)):
            blocked = _delta_with(monkeypatch, prof, eps, BLOCK_MIN=1000, BLOCKS=blocks,
                                  BLOCK_RTOL=rtol)
            assert full * (1 - 1e-12) <= blocked <= full * (1 + 2 * rtol), (eps, full, blocked)
        # any stride is an upper bound (H_c non-increasing in c): accept the coarsest blocks
        coarse = _delta_with(monkeypatch, prof, eps, BLOCK_MIN=1000, BLOCKS=8,
                             BLOCK_RTOL=math.inf)
        assert coarse >= full * (1 - 1e-12), (eps, full, coarse)


@pytest.mark.slow
def test_blocks_at_1e8_users_within_the_stated_tolerance(monkeypatch):
    prof = BudgetProfile.identical(n=10**8, eps0=0.5)
    for eps in (1e-5, 1e-4):
        full = _delta_with(monkeypatch, prof, eps, BLOCK_MIN=10**12)
        blocked = _delta_with(monkeypatch, prof, eps)
        assert full * (1 - 1e-12) <= blocked <= full * (1 + 1e-6), (eps, full, blocked)
