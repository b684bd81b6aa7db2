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
    # issue 30: inside (0, 0.1] but unrunnable (15 GiB at 1e-9, MemoryError at 1e-12)
    ({"discretization": 1e-9}, ValueError, r"in \[1e-06, 0.1\]"),
    ({"discretization": 1e-12}, ValueError, r"in \[1e-06, 0.1\]"),
    ({"discretization": 1e-20}, ValueError, r"in \[1e-06, 0.1\]"),
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


# --- any covering bound as a PLD (privacy profile -> connect-the-dots), the DpEvent ------------

def _gaussian_profile(mu: float):
    """The exact privacy profile of the mu-GDP Gaussian mechanism (Balle, Wang ICML 2018)."""
    from scipy.stats import norm

    return lambda e: float(norm.cdf(-e / mu + mu / 2) - np.exp(e) * norm.cdf(-e / mu - mu / 2))


@pytest.mark.parametrize("mu", [0.05, 0.5, 2.0])
def test_profile_pld_dominates_an_exact_profile_everywhere(mu):
    """From an exact profile (the Gaussian mechanism's), the PLD's delta(eps) is never below
    it, on and between the grid points and at negative eps (the other order), and close to it
    where it matters (eps within 1% at delta = 1e-6)."""
    from shuffledp.accounting import profile_pld

    truth = _gaussian_profile(mu)
    pld = profile_pld(truth, eps_top=mu * 12 + mu * mu)
    for e in np.concatenate([np.linspace(-3 * mu, 8 * mu, 157), [0.0]]):
        t = truth(e) if e >= 0 else 1 - np.exp(e) + np.exp(e) * truth(-e)
        assert pld.get_delta_for_epsilon(float(e)) >= t - 1e-12, (mu, e)
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    exact = pld_lib.from_gaussian_mechanism(standard_deviation=1.0 / mu,
                                            value_discretization_interval=1e-4)
    e_pld, e_ex = pld.get_epsilon_for_delta(1e-6), exact.get_epsilon_for_delta(1e-6)
    assert e_ex - 1e-3 <= e_pld <= 1.01 * e_ex + 1e-3, (mu, e_pld, e_ex)


def test_profile_pld_refuses_bad_arguments():
    from shuffledp.accounting import profile_pld

    with pytest.raises(ValueError, match="eps_top"):
        profile_pld(lambda e: 0.0, eps_top=0.0)
    with pytest.raises(ValueError, match="points"):
        profile_pld(lambda e: 0.0, eps_top=1.0, points=1)
    with pytest.raises(ValueError, match="discretization"):
        profile_pld(lambda e: 0.0, eps_top=1.0, discretization=0.5)
    with pytest.raises(ValueError, match="use a coarser discretization"):
        profile_pld(lambda e: 0.0, eps_top=1e6, discretization=1e-4)


@pytest.mark.parametrize("method,spec", [("clones", "laplace"), ("blanket", "krr:10"),
                                         ("clones", "binary_rr")])
def test_bound_round_pld_is_at_or_above_the_mechanism_aware_bound(method, spec):
    """One round, a personalized profile, the mechanism-aware bound: the PLD's eps(delta) at
    or above the bound's and within 0.5% of it at delta = 1e-3, 1e-6, 1e-9; off the PLD's grid,
    its delta(eps) at or above the best curve the bound's values at a finer grid of the test's
    own prove (their running minimum, then the lower convex envelope in e^eps: the true curve
    is non-increasing and convex in e^eps and below every value of the bound, so below that
    envelope; a numerical bound's own curve may rise slightly with eps where its error
    charges do)."""
    from shuffledp.accounting import _lower_hull, bound_round_pld

    prof = BudgetProfile.from_histogram([0.5, 1.0, 4.0], [6000, 3990, 10])
    pld = bound_round_pld(prof, randomizer=spec, method=method)
    bound, opts = get_bound(method), {"mechanism": spec}
    for delta in (1e-3, DELTA, 1e-9):
        e_b = bound.eps(profile=prof, delta=delta, **opts)
        e_p = pld.get_epsilon_for_delta(delta)
        assert e_b - 1e-9 <= e_p <= 1.005 * e_b + 2e-4, (delta, e_p, e_b)
    e_b = bound.eps(profile=prof, delta=DELTA, **opts)
    grid = np.linspace(0.0, 3.0 * e_b, 61)
    vals = np.minimum.accumulate([bound.delta(profile=prof, eps=float(e), **opts)
                                  for e in grid])
    env = _lower_hull(np.concatenate([[0.0], np.exp(grid)]), np.concatenate([[1.0], vals]))[1:]
    for e, v in zip(grid, env, strict=True):
        assert pld.get_delta_for_epsilon(float(e)) >= v * (1 - 1e-9) - 1e-15, (e, v)


def test_bound_round_pld_refuses_what_is_not_a_guarantee():
    from shuffledp.accounting import bound_round_pld

    prof = BudgetProfile.from_histogram([0.5, 4.0], [999, 1])
    with pytest.raises(ParameterRegimeError, match="not a guarantee for laplace"):
        bound_round_pld(prof, randomizer="laplace", method="clones", generic_masses=True)
    with pytest.raises(ValueError, match="rigorous upper bound"):
        bound_round_pld(prof, randomizer="laplace", method="gdp")
    with pytest.raises(TypeError, match="profile"):
        bound_round_pld([0.5], randomizer="laplace")


@requires("torch")
def test_dp_event_rounds_match_the_sgd_accounting():
    """T rounds of ShuffledRoundDpEvent (generic standard clones, the pair of the SGD
    accounting) through ShufflePLDAccountant: at or above the project's own T-round accounting
    and within 1% of it."""
    from shuffledp.accounting import ShuffledRoundDpEvent, ShufflePLDAccountant
    from shuffledp.sgd.accounting import rounds_epsilon

    prof = BudgetProfile.identical(n=2000, eps0=2.0)
    ev = ShuffledRoundDpEvent(prof, "duchi", method="clones", generic_masses=True,
                              options={"clone": "standard"})
    for t in (1, 10, 50):
        ours = rounds_epsilon(method="clones", profile=prof, rounds=t, delta=1e-5,
                              randomizer="duchi", clone="standard")
        acc = ShufflePLDAccountant()
        acc.compose(ev, t)
        e = acc.get_epsilon(1e-5)
        assert ours - t * 1e-4 <= e <= 1.01 * ours + t * 1e-4, (t, e, ours)


def test_dp_event_composes_with_subsampled_gaussian_and_refuses_add_remove():
    from dp_accounting import dp_event
    from dp_accounting.privacy_accountant import NeighboringRelation, UnsupportedEventError

    from shuffledp.accounting import ShuffledRoundDpEvent, ShufflePLDAccountant

    prof = BudgetProfile.from_histogram([0.5, 4.0], [9999, 1])
    shuffled = ShuffledRoundDpEvent(prof, "laplace", method="clones")
    gauss = dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0))
    both = ShufflePLDAccountant()
    both.compose(dp_event.ComposedDpEvent([shuffled, dp_event.SelfComposedDpEvent(gauss, 100)]))
    alone = ShufflePLDAccountant()
    alone.compose(shuffled)
    g = ShufflePLDAccountant()
    g.compose(dp_event.SelfComposedDpEvent(gauss, 100))
    e_b, e_s, e_g = (a.get_epsilon(DELTA) for a in (both, alone, g))
    assert max(e_s, e_g) < e_b < e_s + e_g + 1e-3
    assert e_s >= get_bound("clones").eps(profile=prof, delta=DELTA, mechanism="laplace")
    with pytest.raises(UnsupportedEventError):
        ShufflePLDAccountant(NeighboringRelation.ADD_OR_REMOVE_ONE).compose(shuffled)
    with pytest.raises(AttributeError):
        shuffled.method = "blanket"


def test_profile_pld_curve_is_the_chord_of_the_envelope_in_e_to_the_eps():
    """The connect-the-dots PLD's delta(eps) equals the lower convex envelope of the profile's
    values at the grid points and the straight line in E = e^eps between them (the fact the
    proof of docs/theory.md 16 uses), here for a profile that is not convex in E (so the
    envelope is not the values)."""
    from shuffledp.accounting import _lower_hull, profile_pld

    seen: dict[float, float] = {}

    def bumpy(e: float) -> float:
        v = 0.3 * np.exp(-4.0 * e) * (1.0 + 0.3 * np.sin(20.0 * e) ** 2)
        seen[e] = v
        return float(v)

    pld = profile_pld(bumpy, eps_top=2.0, discretization=1e-3, points=40)
    pos = np.array(sorted(seen))
    vals = np.array([seen[e] for e in pos])
    # the other order at -eps: 1 - e^-eps + e^-eps delta(eps) (docs/theory.md 16, step (a))
    eps = np.concatenate([-pos[1:][::-1], pos])
    allv = np.concatenate([(1 - np.exp(-pos[1:]) + np.exp(-pos[1:]) * vals[1:])[::-1], vals])
    big_e = np.exp(eps)
    env = _lower_hull(np.concatenate([[0.0], big_e]), np.concatenate([[1.0], allv]))[1:]
    for e, v in zip(eps, env, strict=True):
        assert pld.get_delta_for_epsilon(float(e)) == pytest.approx(v, rel=1e-9, abs=1e-15)
    for a, b, va, vb in zip(big_e, big_e[1:], env, env[1:], strict=False):
        mid = 0.5 * (a + b)
        assert pld.get_delta_for_epsilon(float(np.log(mid))) == pytest.approx(
            0.5 * (va + vb), rel=1e-6, abs=1e-15)
    assert np.all(env <= allv + 1e-15)
