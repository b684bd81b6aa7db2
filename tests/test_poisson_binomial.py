"""Tests of shuffledp.poisson_binomial: exactness, truncation accounting, rounding down."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from shuffledp.poisson_binomial import (
    binomial_window,
    convolve_pmfs,
    group_probabilities,
    poisson_binomial_pmf,
    poisson_binomial_pmf_exact,
    poisson_binomial_pmf_tree,
)


def _slice(ref: np.ndarray, r) -> np.ndarray:
    return ref[r.offset : r.offset + r.pmf.size]


# ----------------------------------------------------------------------------- (a) references
def test_exact_recursion_equals_binomial():
    # reference: identical probabilities give Bin(n, p) (scipy.stats.binom)
    pmf = poisson_binomial_pmf_exact(np.full(40, 0.3))
    np.testing.assert_allclose(pmf, stats.binom.pmf(np.arange(41), 40, 0.3), rtol=1e-12)


def test_exact_recursion_small_by_hand():
    # (1/2, 1/3): Pr[0] = 1/3, Pr[1] = 1/2, Pr[2] = 1/6
    np.testing.assert_allclose(poisson_binomial_pmf_exact([0.5, 1 / 3]), [1 / 3, 1 / 2, 1 / 6])


def test_tree_matches_exact_recursion():
    rng = np.random.default_rng(1)
    p = rng.uniform(0.0, 1.0, 1500)
    ref = poisson_binomial_pmf_exact(p)
    r = poisson_binomial_pmf_tree(p, tol=1e-14)
    err = np.abs(r.pmf - _slice(ref, r)).sum()
    assert err <= r.error_l1 + 1e-15
    assert r.dropped_mass <= 1.01e-14
    # the dropped mass is (an upper bound on) what is missing from the window
    assert 1.0 - _slice(ref, r).sum() <= r.dropped_mass + 1e-15


def test_grouped_without_rounding_matches_exact():
    rng = np.random.default_rng(2)
    p = rng.uniform(0.0, 1.0, 300)
    ref = poisson_binomial_pmf_exact(p)
    r = poisson_binomial_pmf(p, rel_step=0.0, tol=1e-14)
    # direct convolutions of non-negative vectors: a small relative error per entry (the
    # bounds charge 1e-10 relative for it); FFT round-off would be in error_l1
    # bounds charge 1e-10 relative for it); truncations only remove mass, at most dropped_mass
    ref_w = _slice(ref, r)
    assert np.all(r.pmf <= ref_w * (1 + 1e-12) + 1e-300)
    assert np.maximum(ref_w - r.pmf, 0.0).sum() <= r.dropped_mass + 1e-12 * ref_w.sum()
    assert 1.0 - _slice(ref, r).sum() <= r.dropped_mass + 1e-14


def test_binomial_window_dropped_mass_is_exact():
    w = binomial_window(10_000, 0.3, tol=1e-10)
    full = stats.binom.pmf(np.arange(10_001), 10_000, 0.3)
    outside = full.sum() - full[w.offset : w.offset + w.pmf.size].sum()
    assert w.dropped_mass <= 1e-10
    assert abs(outside - w.dropped_mass) < 1e-14


def test_convolve_direct_and_fft_agree():
    rng = np.random.default_rng(3)
    a, b = rng.uniform(size=3000), rng.uniform(size=2000)
    a, b = a / a.sum(), b / b.sum()
    c, err = convolve_pmfs(a, b)
    ref = np.convolve(a, b)
    assert err > 0  # FFT path
    assert np.linalg.norm(c - ref) <= err


# ----------------------------------------------------------------------------- (b) invariants
def test_group_probabilities_round_down():
    rng = np.random.default_rng(4)
    p = rng.uniform(0.01, 0.9, 5000)
    values, counts = group_probabilities(p, rel_step=1e-3)
    assert counts.sum() == p.size
    assert values.size <= np.log(0.9 / 0.01) / np.log1p(1e-3) + 2  # grid points in range
    # every p maps to the largest grid value <= p, within one relative step
    idx = np.searchsorted(values, p, side="right") - 1
    assert np.all(values[idx] <= p)
    assert np.all(p / values[idx] < 1.0 + 1e-3 + 1e-12)


def test_rounding_down_is_stochastically_smaller():
    rng = np.random.default_rng(5)
    p = rng.uniform(0.05, 0.95, 2000)
    exact = poisson_binomial_pmf(p, rel_step=0.0, tol=0.0)
    rounded = poisson_binomial_pmf(p, rel_step=1e-2, max_exact_groups=1, tol=0.0)
    n = p.size + 1
    f_exact = np.zeros(n)
    f_round = np.zeros(n)
    f_exact[exact.support] = exact.pmf
    f_round[rounded.support] = rounded.pmf
    assert np.all(np.cumsum(f_round) >= np.cumsum(f_exact) - 1e-12)


def test_mass_conservation():
    rng = np.random.default_rng(6)
    p = rng.uniform(0.1, 0.6, 200_000)
    r = poisson_binomial_pmf(p, tol=1e-15)
    assert abs(r.pmf.sum() + r.dropped_mass - 1.0) < 1e-12 + r.error_l1
    t = poisson_binomial_pmf_tree(p, tol=1e-15)
    assert abs(t.pmf.sum() + t.dropped_mass - 1.0) < 1e-12 + t.error_l1


def test_zero_and_one_probabilities():
    r = poisson_binomial_pmf([1.0, 1.0, 0.0], tol=0.0)
    assert r.offset + int(np.argmax(r.pmf)) == 2
    assert poisson_binomial_pmf([], tol=0.0).pmf.tolist() == [1.0]
    t = poisson_binomial_pmf_tree(np.ones(100), tol=1e-15)
    assert t.offset + int(np.argmax(t.pmf)) == 100


# ----------------------------------------------------------------------------- (c) bad input
@pytest.mark.parametrize("bad", [[0.5, 1.5], [-0.1], [np.nan]])
def test_bad_probabilities(bad):
    with pytest.raises(ValueError, match=r"probs must lie in \[0, 1\]"):
        poisson_binomial_pmf(bad)


def test_bad_tol_and_step():
    with pytest.raises(ValueError, match="tol must be in"):
        poisson_binomial_pmf([0.5], tol=-1.0)
    with pytest.raises(ValueError, match="rel_step must be finite and >= 0"):
        group_probabilities([0.5], rel_step=-1e-3)
    with pytest.raises(ValueError, match="probs must be one-dimensional"):
        poisson_binomial_pmf_exact([[0.5]])


def test_binomial_law_without_scipy_stats_is_scipy_stats():
    """binom_pmf/cdf/sf call the ufuncs scipy.stats.binom calls (so the CLI does not import
    scipy.stats); they must give its numbers exactly, edges included."""
    from scipy import stats

    from shuffledp.binomial import binom_cdf, binom_pmf, binom_sf

    n = np.array([0, 1, 2, 10, 100, 1000, 10**6])
    for p in (0.0, 1e-300, 1e-200, 1e-17, 1e-10, 0.3, 0.5, 1 - 1e-16, 1.0):
        for m in n:
            k = np.unique(np.clip(np.array([-2, -1, 0, 1, m // 3, m // 2, m - 1, m, m + 1]),
                                  -2, m + 1))
            assert np.array_equal(binom_pmf(k, m, p), stats.binom.pmf(k, m, p)), (m, p)
            assert np.array_equal(binom_cdf(k, m, p), stats.binom.cdf(k, m, p)), (m, p)
            assert np.array_equal(binom_sf(k, m, p), stats.binom.sf(k, m, p)), (m, p)
