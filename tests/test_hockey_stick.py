"""The prepared hockey-stick sums of the exact lower bounds (shuffledp.hockey_stick)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffledp.hockey_stick import prepare_pair, prepared_delta


def _exact(p, q, eps):
    e = math.exp(eps)
    return max(np.maximum(p - e * q, 0).sum(), np.maximum(q - e * p, 0).sum())


def _pair(rng, size):
    p, q = rng.dirichlet(np.ones(size)), rng.dirichlet(np.ones(size))
    return p, q


@pytest.mark.parametrize("seed", range(5))
def test_sorted_pairs_match_the_direct_sum(seed):
    rng = np.random.default_rng(seed)
    p, q = _pair(rng, 50)
    prep = prepare_pair(p, q, slack=0.0, rtol=0.0)
    for eps in (0.0, 0.1, 0.5, 2.0):
        assert prepared_delta(prep, eps) == pytest.approx(_exact(p, q, eps), rel=1e-12,
                                                           abs=1e-15)


@pytest.mark.parametrize("seed", range(5))
def test_presorted_order_never_exceeds_the_divergence(seed):
    # any order is a family of sets: the result stays at or below the true divergence, and
    # equals it when the order is the likelihood-ratio order
    rng = np.random.default_rng(10 + seed)
    p, q = _pair(rng, 60)
    ratio_order = np.argsort(-(p / q))
    shuffled = rng.permutation(60)
    good = prepare_pair(p[ratio_order], q[ratio_order], slack=0.0, rtol=0.0, presorted=True)
    bad = prepare_pair(p[shuffled], q[shuffled], slack=0.0, rtol=0.0, presorted=True)
    for eps in (0.0, 0.2, 1.0, 3.0):
        truth = _exact(p, q, eps)
        assert prepared_delta(good, eps) == pytest.approx(truth, rel=1e-12, abs=1e-15)
        assert prepared_delta(bad, eps) <= truth * (1 + 1e-12) + 1e-15


def test_presorted_count_law_with_rounding_in_the_tails():
    # a binomial count pair P(k) = q s(k) + (1-q) s(k-1) is in ratio order by k; garbage in
    # the far tails (values that underflow differently) must not hide the bulk
    from scipy import stats

    k = np.arange(0, 401)
    s = stats.binom.pmf(k, 400, 0.3)
    s[:5] = [0.0, 1e-320, 0.0, 5e-310, 0.0]  # rounding noise in the left tail
    f = np.concatenate([[0.0], s, [0.0]])
    qv = 0.8
    p_k, q_k = qv * f[1:] + (1 - qv) * f[:-1], (1 - qv) * f[1:] + qv * f[:-1]
    fast = prepare_pair(p_k, q_k, slack=0.0, rtol=0.0, presorted=True)
    slow = prepare_pair(p_k, q_k, slack=0.0, rtol=0.0)
    for eps in (0.0, 0.05, 0.3, 1.0):
        assert prepared_delta(fast, eps) <= _exact(p_k, q_k, eps) * (1 + 1e-12) + 1e-300
        assert prepared_delta(fast, eps) == pytest.approx(prepared_delta(slow, eps), rel=1e-9)


def test_beyond_e_to_the_700_only_unreached_outcomes_count():
    # at e^eps > e^700 any absolute error (the underflow allowance is always there) makes the
    # certified value 0; never more than the mass one law puts where the other has none
    p = np.array([0.5, 0.3, 0.2, 0.0])
    q = np.array([0.0, 0.4, 0.2, 0.4])
    for order in ([0, 1, 2, 3], [1, 0, 2, 3]):
        for presorted in (False, True):
            prep = prepare_pair(p[order], q[order], slack=0.0, rtol=0.0, presorted=presorted)
            assert 0.0 <= prepared_delta(prep, 800.0) <= 0.5
