"""The shared-noise Gaussian randomizer of SGD (``gaussian_shared``; docs/theory.md 14,
"Shared noise"): the rescaled report's law by simulation, the nested pool sizes, and each
tier's rigorous guarantee against the per-budget Gaussian randomizer's."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from shuffledp import BudgetProfile
from shuffledp.bounds import get_bound
from shuffledp.sgd.accounting import rounds_delta, rounds_epsilon, victim_tiers
from shuffledp.sgd.randomizers import (
    GaussianRandomizer,
    GaussianSharedRandomizer,
    make_randomizer,
    nested_pool_sizes,
)
from shuffledp.sgd.tiers import calibrate_tiers, tier_guarantees
from shuffledp.sgd.train import private_mean_gradient

SEED = 20261207


def test_registered():
    r = make_randomizer("gaussian_shared", clip=1.0)
    assert isinstance(r, GaussianSharedRandomizer) and not r.pure and r.nested_pools


def test_report_law_is_the_rescaled_gaussian_randomizers():
    # report_i = w_i g_i + sigma_ref z_i: mean w_i g_i and standard deviation sigma_ref in
    # every coordinate, whatever the budget; sigma_i * w_i = sigma_ref (a public rescaling of
    # GaussianRandomizer's report)
    r = GaussianSharedRandomizer(clip=2.0)
    eps = np.array([0.5, 1.0, 4.0])
    delta = np.full(3, 1e-6)
    w = r.signal_weights(eps, delta)
    ref = r.reference_sigma(eps, delta)
    np.testing.assert_allclose(w * GaussianRandomizer(clip=2.0).sigma(eps, delta), ref,
                               rtol=1e-12)
    assert w.mean() == pytest.approx(1.0, rel=1e-12)
    g = torch.tensor([[2.0, 0.0], [0.0, -2.0], [1.2, 1.6]], dtype=torch.float64)
    gen = torch.Generator().manual_seed(SEED)
    reps = 20_000
    # one call with every repetition's rows; the reference (the round's budgets) sets the scale
    big = r.randomize(g.repeat(reps, 1), eps=np.tile(eps, reps), delta=np.tile(delta, reps),
                      generator=gen, reference=(eps, delta))
    draws = big.numpy().reshape(reps, 3, 2)
    mean, std = draws.mean(axis=0), draws.std(axis=0)
    np.testing.assert_allclose(mean, w[:, None] * g.numpy(), atol=5 * ref / math.sqrt(reps))
    np.testing.assert_allclose(std, ref, rtol=0.03)
    # chunks: the reference (the whole round's budgets) sets one scale
    one = r.randomize(g[:1], eps=eps[:1], delta=delta[:1], generator=gen,
                      reference=(eps, delta))
    assert one.shape == (1, 2)
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        r.randomize(g, eps=eps, delta=delta, generator=None)


def test_private_mean_gradient_uses_one_scale_for_every_chunk():
    # in chunks of 3 users the noise scale is still the whole round's sigma_ref: the mean
    # gradient's noise variance per coordinate is sigma_ref^2 / n (with a scale per chunk it
    # would be 2.6 times larger here)
    model = torch.nn.Linear(3, 2, dtype=torch.float64)
    x = torch.randn(8, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    y = torch.tensor([0, 1] * 4)
    r = GaussianSharedRandomizer(clip=1.0)
    eps, delta = np.linspace(0.5, 8.0, 8), np.full(8, 1e-6)
    gen = torch.Generator().manual_seed(SEED)
    draws = torch.stack([private_mean_gradient(model, x, y, clip=1.0, randomizer=r, eps=eps,
                                               delta=delta, generator=gen, chunk=3)
                         for _ in range(300)]).numpy()
    expected = r.reference_sigma(eps, delta) ** 2 / 8
    assert draws.var(axis=0).mean() == pytest.approx(expected, rel=0.12)


def test_nested_pool_sizes():
    mu = np.array([0.3, 0.1, 0.2, 0.1])
    assert nested_pool_sizes(mu, [1, 2, 3, 4]).tolist() == [10, 6, 9, 6]
    assert nested_pool_sizes([0.5], [7]).tolist() == [7]


def test_tiers_against_the_per_budget_randomizer():
    prof = BudgetProfile.from_histogram([0.5, 1.0, 2.0], [300, 200, 100], delta=1e-5)
    pairs = victim_tiers(prof, "gaussian_shared")
    assert sorted(p.n for p in pairs) == [300, 500, 600]  # pools of 300, 300+200, all
    shared = tier_guarantees(method="clones", profile=prof, rounds=2, delta=1e-5,
                             randomizer="gaussian_shared")
    own = tier_guarantees(method="clones", profile=prof, rounds=2, delta=1e-5,
                          randomizer="gaussian")
    assert shared[0].eps == pytest.approx(own[0].eps, rel=1e-9)  # the lowest tier: same pool
    assert shared[1].eps < own[1].eps and shared[2].eps < own[2].eps
    assert max(g.eps for g in shared) == pytest.approx(
        rounds_epsilon(method="clones", profile=prof, rounds=2, delta=1e-5,
                       randomizer="gaussian_shared"), rel=1e-6)
    # identical budgets: the same randomizer up to a public rescaling, the same account
    ident = BudgetProfile.identical(n=300, eps0=1.0, delta0=1e-5)
    a = rounds_epsilon(method="clones", profile=ident, rounds=2, delta=1e-5,
                       randomizer="gaussian_shared")
    b = rounds_epsilon(method="clones", profile=ident, rounds=2, delta=1e-5,
                       randomizer="gaussian")
    assert a == pytest.approx(b, rel=1e-12)


def test_calibrate_tiers_meets_every_target():
    base = BudgetProfile.from_histogram([1.0, 2.0, 3.0], [54, 37, 9], delta=1e-5)
    cal, tiers = calibrate_tiers(method="clones", base=base, rounds=2, delta=1e-5,
                                 targets=[1.0, 2.0, 3.0], randomizer="gaussian_shared")
    assert all(g.eps <= t for g, t in zip(tiers, [1.0, 2.0, 3.0], strict=True))
    levels = cal.profile.tiers.eps
    assert np.all(np.diff(levels) > 0)


def test_one_round_is_above_its_certified_lower_bound():
    # docs/theory.md 14, "Shared noise": the reports along u are the one-dimensional
    # gaussian_shared mechanism's (others at -1), so tier_sum_lower with that mechanism bounds
    # one round from below; the rigorous one-round account must stay above it
    prof = BudgetProfile.from_histogram([0.5, 1.0, 2.0], [30, 20, 10], delta=1e-5)
    low = get_bound("tier_sum_lower")
    for eps in (0.05, 0.2, 0.5, 1.0):
        lo = low.delta(profile=prof, eps=eps, mechanism="gaussian_shared")
        up = rounds_delta(method="clones", profile=prof, rounds=1, eps=eps,
                          randomizer="gaussian_shared")
        assert lo <= up, (eps, lo, up)
        assert lo > 0.0 or eps > 0.2  # not vacuous at small eps
