"""Tests of the `rr_exact` lower bound (shuffledp.bounds.rr_exact)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffledp import BudgetProfile, get_bound
from shuffledp.bounds.rr_exact import (
    _exhaustive_pairs,
    pair_delta,
    rr_exact_delta,
    rr_pairs,
)

BOUND = get_bound("rr_exact")


# ----------------------------------------------------------------------------- (a) references
def test_design_reference_n1000_eps4():
    # README table: identical eps0 = 4, n = 1000, delta = 1e-6: exact shuffled RR
    # already has eps >= 1.69 (the paper's formula gives 1.45).
    eps = BOUND.eps(profile=BudgetProfile.identical(n=1000, eps0=4.0), delta=1e-6)
    assert eps >= 1.69


def test_design_reference_n1e4_eps8():
    # the project brief (README table): n = 1e4, eps0 = 8: shuffled randomized response is ~8.0
    eps = BOUND.eps(profile=BudgetProfile.identical(n=10_000, eps0=8.0), delta=1e-6)
    assert 7.99 <= eps <= 8.0


def test_hand_computed_n3():
    # eps0 = log 3 (q = 3/4), n = 3: pair k = 1 has total variation 20/64 (k = 0: 18/64)
    prof = BudgetProfile.identical(n=3, eps0=math.log(3.0))
    assert rr_exact_delta(profile=prof, eps=0.0) == pytest.approx(20 / 64, abs=1e-14)


def test_n2_closed_form():
    # n = 2, q = truth probability, p = 1 - q; the other user's bit is 0, so s = (q, p):
    # P = (q^2, 2pq, p^2), Q = (pq, p^2 + q^2, pq), total variation q^2 - pq = q (2q - 1).
    eps0 = 1.0
    q = math.exp(eps0) / (1 + math.exp(eps0))
    prof = BudgetProfile.identical(n=2, eps0=eps0)
    assert rr_exact_delta(profile=prof, eps=0.0) == pytest.approx(q * (2 * q - 1), abs=1e-14)


# ----------------------------------------------------------------------------- (b) invariants
def test_identical_k_family_equals_exhaustive_bit_vectors():
    eps = np.full(7, 1.3)
    prof = BudgetProfile.from_arrays(eps)
    pairs = _exhaustive_pairs(eps)
    for e in [0.0, 0.4, 1.0]:
        ex = max(pair_delta(p, e) for p in pairs)
        assert rr_exact_delta(profile=prof, eps=e) == pytest.approx(ex, abs=1e-13)


def test_non_increasing_in_n_and_capped():
    out = []
    for n in [10, 100, 1000, 10_000]:
        e = BOUND.eps(profile=BudgetProfile.identical(n=n, eps0=2.0), delta=1e-6)
        assert e <= 2.0
        out.append(e)
    assert all(b <= a + 1e-6 for a, b in zip(out[:-1], out[1:], strict=True))


def test_truncation_keeps_a_lower_bound():
    # windows cut at tol = 1e-12 versus the untruncated computation
    prof = BudgetProfile.identical(n=3000, eps0=2.0)
    for e in [0.2, 0.5, 1.0]:
        cut = rr_exact_delta(profile=prof, eps=e, tol=1e-12)
        full = rr_exact_delta(profile=prof, eps=e, tol=0.0)
        assert cut <= full + 1e-15
        assert cut >= full - 1e-9


def test_personalized_family_large_n_is_fast_and_below_clones():
    rng = np.random.default_rng(3)
    prof = BudgetProfile.uniform(n=50_000, low=0.5, high=2.0, rng=rng)
    lo = BOUND.eps(profile=prof, delta=1e-6)
    hi = get_bound("clones").eps(profile=prof, delta=1e-6)
    assert 0.0 < lo <= hi


def test_victim_with_largest_eps_is_searched():
    # users are positions in the order of decreasing eps: the largest budget is position 0
    prof = BudgetProfile.from_arrays(np.r_[np.full(99, 0.5), 3.0])
    labels = {" ".join(p.label.split()[:2]) for p in rr_pairs(prof)}
    assert labels == {"v=0 eps_v=3", "v=1 eps_v=0.5"}  # one victim per distinct budget


def test_local_delta_is_ignored_and_recorded():
    a = BudgetProfile.identical(n=200, eps0=1.0)
    b = BudgetProfile.identical(n=200, eps0=1.0, delta0=1e-10)
    assert BOUND.delta(profile=a, eps=0.3) == BOUND.delta(profile=b, eps=0.3)
    res = BOUND.evaluate(profile=b, delta=1e-6)
    assert res.diagnostics["local_delta_ignored"] is True
    assert res.kind == "lower"


# ----------------------------------------------------------------------------- (c) bad input
def test_bad_options():
    prof = BudgetProfile.identical(n=10, eps0=1.0)
    with pytest.raises(ValueError, match="exhaustive_n must be an integer in"):
        BOUND.delta(profile=prof, eps=0.5, exhaustive_n=100)
    with pytest.raises(ValueError, match="max_flips must be an integer in"):
        BOUND.delta(profile=prof, eps=0.5, max_flips=-1)
    with pytest.raises(ValueError, match="eps must be finite and >= 0"):
        rr_exact_delta(profile=prof, eps=float("nan"))
    with pytest.raises(ValueError, match="unknown option"):
        BOUND.delta(profile=prof, eps=0.5, k=3)


@pytest.mark.parametrize("delta", [1e-12, 1e-6, 1e-3])
def test_geometric_flip_subset_above_1e6_users(monkeypatch, delta):
    # above 10^6 users the flip sets take j in {0, 1, 2, 4, ..., |U| - 1}: a subset of the
    # pairs, so never above the full family, and equal to it to 1e-6 here
    from shuffledp.bounds import rr_exact as module

    prof = BudgetProfile.from_histogram([0.5, 1.0, 2.0, 4.0], counts=[120_000, 60_000,
                                                                      15_000, 5_000])
    with monkeypatch.context() as m:
        m.setattr(module, "_ALL_FLIPS_N", 10**5)
        module._CACHE.clear()
        subset = BOUND.eps(profile=prof, delta=delta)
        n_subset = len(module.rr_pairs(prof))
    module._CACHE.clear()
    full = BOUND.eps(profile=prof, delta=delta)
    assert n_subset < len(module.rr_pairs(prof))
    assert full * (1 - 1e-6) <= subset <= full
