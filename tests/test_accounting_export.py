"""Shuffled rounds exported as dp_accounting PLDs (shuffledp.accounting)."""

from __future__ import annotations

import numpy as np
import pytest
from _extras import requires

pytest.importorskip(
    "dp_accounting", reason="the dp_accounting export needs dp-accounting (pip install -e '.[sgd]')"
)

from shuffledp import BudgetProfile, ParameterRegimeError, get_bound
from shuffledp.accounting import shuffled_round_pld

DELTA = 1e-6


@pytest.mark.parametrize("clone", ["standard", "stronger"])
@pytest.mark.parametrize("n, eps0", [(1000, 1.0), (10_000, 4.0), (100_000, 0.5)])
def test_one_round_is_pessimistic_and_close_to_the_clones_bound(n, eps0, clone):
    prof = BudgetProfile.identical(n=n, eps0=eps0)
    pld = shuffled_round_pld(prof, clone=clone, discretization=1e-4)
    bound = get_bound("clones")
    e_bound = bound.eps(profile=prof, delta=DELTA, clone=clone)
    e_pld = pld.get_epsilon_for_delta(DELTA)
    assert e_bound - 1e-9 <= e_pld <= e_bound + 3e-4
    for e in (0.5 * e_bound, e_bound, 2.0 * e_bound):
        assert pld.get_delta_for_epsilon(e) >= bound.delta(profile=prof, eps=e,
                                                           clone=clone) - 1e-12


@requires("torch")
def test_self_composition_is_the_sgd_accounting():
    """T self-compositions of the exported round are the project's own SGD accounting of
    T shuffled rounds (method clones), to the discretization tolerance."""
    from shuffledp.sgd.accounting import rounds_epsilon

    prof = BudgetProfile.identical(n=2000, eps0=2.0)
    for t in (1, 10, 50):
        ours = rounds_epsilon(method="clones", profile=prof, rounds=t, delta=1e-5,
                              randomizer="duchi", clone="standard")
        exported = shuffled_round_pld(prof, clone="standard", randomizer="duchi")
        e = exported.self_compose(t).get_epsilon_for_delta(1e-5) if t > 1 else \
            exported.get_epsilon_for_delta(1e-5)
        assert e == pytest.approx(ours, rel=1e-6, abs=t * 1e-4)


def test_composes_with_dp_accounting_mechanisms():
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    prof = BudgetProfile.identical(n=10_000, eps0=1.0)
    rounds = shuffled_round_pld(prof).self_compose(20)
    gauss = pld_lib.from_gaussian_mechanism(standard_deviation=20.0,
                                            value_discretization_interval=1e-4)
    both = rounds.compose(gauss)
    e_r = rounds.get_epsilon_for_delta(DELTA)
    e_g = gauss.get_epsilon_for_delta(DELTA)
    e_b = both.get_epsilon_for_delta(DELTA)
    assert max(e_r, e_g) < e_b < e_r + e_g + 1e-3


def test_personalized_binary_rr_is_covered_laplace_is_not():
    rng = np.random.default_rng(0)
    prof = BudgetProfile.uniform(n=2000, low=0.5, high=2.0, rng=rng)
    pld = shuffled_round_pld(prof, randomizer="binary_rr")
    e = pld.get_epsilon_for_delta(DELTA)
    assert e >= get_bound("clones").eps(profile=prof, delta=DELTA) - 1e-9
    assert e >= get_bound("rr_exact").eps(profile=prof, delta=DELTA)  # never below the truth
    with pytest.raises(ParameterRegimeError, match="not a guarantee"):
        shuffled_round_pld(prof, randomizer="laplace")


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"clone": "weak"}, ValueError, "clone"),
    ({"discretization": 0.0}, ValueError, "discretization"),
    ({"discretization": "x"}, TypeError, "discretization"),
    ({"tol": 0.5}, ValueError, "tol"),
    ({"randomizer": "nope"}, ValueError, "randomizer"),
])
def test_bad_arguments(kwargs, exc, match):
    prof = BudgetProfile.identical(n=100, eps0=1.0)
    with pytest.raises(exc, match=match):
        shuffled_round_pld(prof, **kwargs)
    with pytest.raises(TypeError, match="profile"):
        shuffled_round_pld([1.0, 2.0])


def test_pieces_give_the_same_pld_as_the_whole_pair():
    from shuffledp.accounting import pld_from_pair, pld_from_pieces
    from shuffledp.bounds.clones import clone_pair

    prof = BudgetProfile.identical(n=3000, eps0=2.0)
    p, q, tail = clone_pair(prof)
    cuts = [0, 7, 500, 501, p.size // 2, p.size]
    pieces = [(p[a:b], q[a:b]) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
    whole = pld_from_pair(p, q, tail)
    split = pld_from_pieces(pieces, tail)
    for e in (0.0, 0.1, 0.3, 1.0):
        assert split.get_delta_for_epsilon(e) == pytest.approx(
            whole.get_delta_for_epsilon(e), rel=1e-12, abs=1e-15)


def test_a_million_users_fit_by_pieces():
    """The whole pair of 10^6 users has about 4*10^7 outcomes (clone_pair refuses it); the
    export builds the loss histogram piece by piece."""
    prof = BudgetProfile.identical(n=1_000_000, eps0=1.0)
    e_pld = shuffled_round_pld(prof).get_epsilon_for_delta(DELTA)
    e_bound = get_bound("clones").eps(profile=prof, delta=DELTA)
    assert e_bound - 1e-9 <= e_pld <= e_bound + 3e-4
