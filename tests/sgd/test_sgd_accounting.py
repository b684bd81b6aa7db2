"""T-round accounting of shuffled SGD and calibration of the local budgets."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("torch", reason="the SGD extra is not installed (pip install -e '.[sgd]')")

from shuffledp import BudgetProfile, ParameterRegimeError, get_bound
from shuffledp.gdp import gdp_eps
from shuffledp.sgd.accounting import (
    SGD_METHODS,
    calibrate_scale,
    pld_from_pair,
    round_clone_pair,
    rounds_delta,
    rounds_epsilon,
)

DELTA = 1e-5
PROF = BudgetProfile.identical(n=1000, eps0=2.0)


# (a) reference values -------------------------------------------------------------------
def test_one_round_clones_equals_the_registered_bound():
    # T = 1: the pessimistic PLD of the clone pair is the single-round clones bound
    # (standard clones, FMT21 Thm 3.2), up to the discretisation (rounded up).
    for eps0 in (1.0, 3.0):
        prof = BudgetProfile.identical(n=1000, eps0=eps0)
        single = get_bound("clones").eps(profile=prof, delta=DELTA, clone="standard")
        composed = rounds_epsilon(
            method="clones",
            profile=prof,
            rounds=1,
            delta=DELTA,
            randomizer="duchi",
            discretization=1e-4,
        )
        assert single - 1e-6 <= composed <= single + 2e-4


def test_one_round_gdp_equals_the_registered_bound():
    single = get_bound("gdp").eps(profile=PROF, delta=DELTA)
    assert rounds_epsilon(
        method="gdp", profile=PROF, rounds=1, delta=DELTA, randomizer="duchi"
    ) == pytest.approx(single, rel=1e-9)


def test_gdp_composition_is_sqrt_t():
    from shuffledp.bounds.gdp_paper import paper_mu

    e = rounds_epsilon(method="gdp", profile=PROF, rounds=16, delta=DELTA, randomizer="duchi")
    assert e == pytest.approx(gdp_eps(DELTA, 4.0 * paper_mu(PROF)), rel=1e-9)


def test_local_pure_one_round_is_eps0_and_composition_matches_rr():
    # One eps0-LDP report: delta(eps) = 0 for eps >= eps0, so eps(delta) = eps0 (+ grid).
    assert rounds_epsilon(
        method="local", profile=PROF, rounds=1, delta=DELTA, randomizer="duchi"
    ) == pytest.approx(2.0, abs=2e-4)
    # Two rounds of RR(eps0): delta(0) = TV of the product pair, computed by hand.
    e = 1 / (1 + math.exp(-2.0))
    p = np.array([e * e, e * (1 - e), (1 - e) * e, (1 - e) ** 2])
    tv = float(np.maximum(p - p[::-1], 0).sum())
    d = rounds_delta(method="local", profile=PROF, rounds=2, eps=0.0, randomizer="duchi")
    assert tv <= d <= tv + 1e-3


def test_pld_of_a_pair_is_pessimistic():
    p, q, tail = round_clone_pair(PROF, clone="standard")
    pld = pld_from_pair(p, q, tail, discretization=1e-3)
    from shuffledp.numerics import hockey_stick

    for eps in (0.0, 0.2, 0.5):
        assert pld.get_delta_for_epsilon(eps) >= hockey_stick(p, q, eps) + tail - 1e-12


# (b) invariants -------------------------------------------------------------------------
@pytest.mark.parametrize("method", SGD_METHODS)
def test_more_rounds_never_lower_eps(method):
    eps = [
        rounds_epsilon(method=method, profile=PROF, rounds=t, delta=DELTA, randomizer="duchi")
        for t in (1, 2, 5, 20)
    ]
    assert all(a <= b + 1e-9 for a, b in zip(eps, eps[1:], strict=False))


def test_clones_below_local_only():
    for t in (1, 10):
        c = rounds_epsilon(method="clones", profile=PROF, rounds=t, delta=DELTA, randomizer="duchi")
        loc = rounds_epsilon(
            method="local", profile=PROF, rounds=t, delta=DELTA, randomizer="duchi"
        )
        assert c <= loc + 1e-9


@pytest.mark.parametrize("method", SGD_METHODS)
def test_calibration_meets_the_target(method):
    base = BudgetProfile.identical(n=1000, eps0=1.0)
    cal = calibrate_scale(
        method=method, base=base, rounds=10, eps=3.0, delta=DELTA, randomizer="duchi", rtol=1e-3
    )
    assert cal.eps_achieved <= 3.0
    assert cal.eps_achieved >= 3.0 * 0.95  # the bisection did not stop far below
    assert cal.profile.eps_max == pytest.approx(cal.scale)
    assert cal.kind == ("approximate" if method == "gdp" else "upper")


def test_calibration_orders_the_methods():
    base = BudgetProfile.identical(n=1000, eps0=1.0)
    scales = {
        m: calibrate_scale(
            method=m, base=base, rounds=20, eps=4.0, delta=DELTA, randomizer="duchi"
        ).scale
        for m in SGD_METHODS
    }
    assert scales["local"] < scales["clones"]


def test_gaussian_local_and_gdp():
    prof = BudgetProfile.identical(n=1000, eps0=2.0, delta0=1e-8)
    loc = rounds_epsilon(method="local", profile=prof, rounds=4, delta=DELTA, randomizer="gaussian")
    g = rounds_epsilon(method="gdp", profile=prof, rounds=4, delta=DELTA, randomizer="gaussian")
    assert g < loc


def test_personalized_profile_gdp_works():
    prof = BudgetProfile.uniform(n=500, low=0.5, high=2.0, rng=np.random.default_rng(0))
    assert rounds_epsilon(method="gdp", profile=prof, rounds=5, delta=DELTA, randomizer="duchi") > 0


# (c) bad input and regimes --------------------------------------------------------------
def test_clones_outside_its_validity_region():
    # FMT23's stronger clones are proven for randomized response only, not for the SGD
    # randomizers
    for rand, prof in (("duchi", PROF),
                       ("gaussian", BudgetProfile.identical(n=100, eps0=1.0, delta0=1e-8))):
        with pytest.raises(ParameterRegimeError, match=r"clones \(stronger\) is not proven"):
            rounds_epsilon(method="clones", profile=prof, rounds=2, delta=DELTA,
                           randomizer=rand, clone="stronger")


def test_personalized_and_gaussian_clones_are_per_tier():
    # docs/theory.md 14: a victim is amplified by its own budget tier only.  Three distinct
    # budgets: no tier has another user, so the bound is the worst user's local guarantee
    # (binary randomized response at the largest eps, composed): no amplification claimed.
    pers = BudgetProfile.from_arrays([1.0, 2.0, 1.5])
    got = rounds_epsilon(method="clones", profile=pers, rounds=2, delta=DELTA,
                         randomizer="duchi")
    loc = rounds_epsilon(method="local", profile=pers, rounds=2, delta=DELTA,
                         randomizer="duchi")
    assert got == pytest.approx(loc, rel=1e-6)
    # two tiers of 500: the bound is the worse tier's own identical-budget bound
    two = BudgetProfile.from_histogram([1.0, 2.0], [500, 500])
    per_tier = [rounds_epsilon(method="clones", profile=BudgetProfile.identical(n=500, eps0=e),
                               rounds=3, delta=DELTA, randomizer="duchi") for e in (1.0, 2.0)]
    got = rounds_epsilon(method="clones", profile=two, rounds=3, delta=DELTA, randomizer="duchi")
    assert got == pytest.approx(max(per_tier), rel=1e-9)
    # Gaussian: the pure bound of the same tier plus the leak, never below it, and close to
    # it when delta0 is tiny (Lemma 10's leak is (n - 1) e^-eps0 delta0 per round)
    for d0 in (1e-14, 1e-10):
        g = rounds_epsilon(method="clones", profile=BudgetProfile.identical(n=500, eps0=2.0,
                           delta0=d0), rounds=3, delta=DELTA, randomizer="gaussian")
        pure = rounds_epsilon(method="clones", profile=BudgetProfile.identical(n=500, eps0=2.0),
                              rounds=3, delta=DELTA, randomizer="duchi")
        assert pure <= g * (1 + 1e-9)
        if d0 == 1e-14:
            assert g <= pure * 1.01


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"rounds": 0}, "rounds must be >= 1"),
        ({"delta": 0.0}, "delta must be in"),
        ({"method": "rdp"}, "method must be one of"),
        ({"randomizer": "laplace"}, "randomizer must be one of"),
    ],
)
def test_bad_accounting_input(kwargs, match):
    args = {"method": "clones", "profile": PROF, "rounds": 3, "delta": DELTA, "randomizer": "duchi"}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        rounds_epsilon(**args)


def test_bad_calibration_input():
    with pytest.raises(ValueError, match="eps must be finite and > 0"):
        calibrate_scale(method="gdp", base=PROF, rounds=3, eps=0.0, delta=DELTA, randomizer="duchi")
    with pytest.raises(TypeError, match="rounds must be an integer"):
        calibrate_scale(method="gdp", base=PROF, rounds=2.5, eps=1.0, delta=DELTA,
                        randomizer="duchi")
    with pytest.raises(TypeError, match="profile must be a BudgetProfile"):
        rounds_epsilon(method="gdp", profile=None, rounds=2, delta=DELTA, randomizer="duchi")
    with pytest.raises(TypeError, match="delta must be a real number"):
        rounds_epsilon(method="gdp", profile=PROF, rounds=2, delta="x", randomizer="duchi")
    with pytest.raises(ValueError, match="discretization must be"):
        rounds_epsilon(method="gdp", profile=PROF, rounds=2, delta=DELTA, randomizer="duchi",
                       discretization=float("nan"))
    with pytest.raises(ValueError, match="every delta_i must be 0"):
        calibrate_scale(
            method="gdp",
            base=BudgetProfile.identical(n=10, eps0=1.0, delta0=1e-9),
            rounds=3,
            eps=1.0,
            delta=DELTA,
            randomizer="duchi",
        )
    with pytest.raises(ParameterRegimeError, match="not reachable"):
        calibrate_scale(
            method="local",
            base=BudgetProfile.identical(n=10, eps0=1.0),
            rounds=3,
            eps=1e-4,
            delta=DELTA,
            randomizer="duchi",
        )


# (d) the shared calibration search and record --------------------------------------------
def test_calibration_is_the_shared_search_and_record(monkeypatch):
    from shuffledp import calibration
    from shuffledp.sgd import accounting

    calls, inversions = [], []
    real_delta, real_eps = accounting.rounds_delta, accounting.rounds_epsilon

    def counting_delta(**kw):
        calls.append((kw["profile"].eps_max, kw["eps"]))
        return real_delta(**kw)

    def counting_eps(**kw):
        inversions.append(kw["profile"].eps_max)
        return real_eps(**kw)

    monkeypatch.setattr(accounting, "rounds_delta", counting_delta)
    monkeypatch.setattr(accounting, "rounds_epsilon", counting_eps)
    base = BudgetProfile.identical(n=1000, eps0=1.0)
    cal = calibrate_scale(method="clones", base=base, rounds=5, eps=2.0, delta=DELTA,
                          randomizer="duchi")
    assert isinstance(cal, calibration.Calibration) and cal.rounds == 5
    # one T-round delta per scale, at the target eps; one eps(delta) at the end
    assert all(e == 2.0 for _, e in calls) and len({m for m, _ in calls}) == len(calls)
    assert len(calls) == cal.evaluations and inversions == [pytest.approx(cal.scale)]
    assert cal.bound_delta <= DELTA and cal.eps_achieved <= 2.0
    above = real_delta(method="clones", profile=base.scaled(cal.scale * 1.002), rounds=5,
                       eps=2.0, randomizer="duchi")
    assert above > DELTA  # maximal within rtol
    assert set(cal.as_row()) == {"method", "kind", "rounds", "target_eps", "delta",
                                 "local_eps_scale", "eps_achieved", "local_eps_max",
                                 "local_eps_mean", "capped"}
    assert cal.as_row()["capped"] is False


def test_calibration_cap():
    base = BudgetProfile.identical(n=1000, eps0=1.0)
    cal = calibrate_scale(method="gdp", base=base, rounds=1, eps=50.0, delta=DELTA,
                          randomizer="duchi", eps_local_max=2.0)
    assert cal.capped and cal.scale == 2.0 and cal.eps_achieved <= 50.0
    with pytest.raises(ValueError, match="scale_min must be <= eps_local_max"):
        calibrate_scale(method="gdp", base=base, rounds=1, eps=1.0, delta=DELTA,
                        randomizer="duchi", eps_local_max=1.0, scale_min=2.0)
