"""The paper's mu-GDP bound (Chen, Cao, Ge, AAAI 2024, arXiv 2312.14388)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from shuffledp import BudgetProfile, get_bound
from shuffledp.bounds.gdp_paper import clt_threshold, expected_clones, paper_mu
from shuffledp.gdp import gdp_delta

GDP = get_bound("gdp")


# (a) reference values -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("n", "eps0", "expected"),
    # README table (identical eps0, delta = 1e-6): 1.45 and 3.65 from the formula.
    [(1000, 4.0, 1.45), (10_000, 8.0, 3.65)],
)
def test_design_reference_values(n, eps0, expected):
    eps = GDP.eps(profile=BudgetProfile.identical(n=n, eps0=eps0), delta=1e-6)
    assert round(eps, 2) == expected


def test_mu_matches_mpmath_sum_for_personalized_budgets():
    rng = np.random.default_rng(7)
    eps = rng.uniform(0.5, 2.0, size=200)
    delta = rng.uniform(0, 1e-6, size=200)
    prof = BudgetProfile.from_arrays(eps, delta)
    with mp.workdps(50):
        p = [(1 - mp.mpf(d)) / (1 + mp.e ** mp.mpf(e)) for e, d in zip(eps, delta, strict=False)]
        ref = mp.sqrt(2 / (mp.fsum(p) - max(p)))
    assert math.isclose(paper_mu(prof), float(ref), rel_tol=1e-12)


def test_eps_is_gdp_inverse():
    prof = BudgetProfile.identical(n=5000, eps0=1.0)
    eps = GDP.eps(profile=prof, delta=1e-6)
    assert float(gdp_delta(eps, paper_mu(prof))) <= 1e-6
    assert GDP.delta(profile=prof, eps=eps) == pytest.approx(1e-6, rel=1e-8)


# (b) invariants ----------------------------------------------------------------------------------
def test_identical_budgets_closed_form():
    for n, eps0 in [(10, 0.5), (1000, 2.0), (10**6, 6.0)]:
        p = 1.0 / (1.0 + math.exp(eps0))
        mu = paper_mu(BudgetProfile.identical(n=n, eps0=eps0))
        assert math.isclose(mu, math.sqrt(2.0 / ((n - 1) * p)), rel_tol=1e-12)


def test_mu_non_increasing_in_n():
    mus = [paper_mu(BudgetProfile.identical(n=n, eps0=2.0)) for n in (10, 100, 10**3, 10**5)]
    assert all(a >= b for a, b in zip(mus, mus[1:], strict=False))


def test_permutation_invariance():
    rng = np.random.default_rng(3)
    eps = rng.uniform(0.05, 1.0, size=1000)
    a = GDP.eps(profile=BudgetProfile.from_arrays(eps), delta=1e-5)
    b = GDP.eps(profile=BudgetProfile.from_arrays(rng.permutation(eps)), delta=1e-5)
    assert a == b


def test_adding_a_user_never_raises_eps():
    rng = np.random.default_rng(4)
    eps = rng.uniform(0.5, 2.0, size=300)
    base = GDP.eps(profile=BudgetProfile.from_arrays(eps), delta=1e-6)
    for extra in (0.0, 0.5, 3.0, 10.0):
        more = GDP.eps(profile=BudgetProfile.from_arrays(np.append(eps, extra)), delta=1e-6)
        assert more <= base + 1e-12


def test_doubled_variant_is_sqrt2_smaller():
    prof = BudgetProfile.identical(n=1000, eps0=1.0)
    assert math.isclose(
        paper_mu(prof, clone_mass="doubled") * math.sqrt(2.0), paper_mu(prof), rel_tol=1e-12
    )
    assert GDP.eps(profile=prof, delta=1e-6, clone_mass="doubled") < GDP.eps(
        profile=prof, delta=1e-6
    )


def test_diagnostics_flag_few_clones():
    few = GDP.evaluate(profile=BudgetProfile.identical(n=1000, eps0=4.0), delta=1e-6)
    many = GDP.evaluate(profile=BudgetProfile.identical(n=10**5, eps0=1.0), delta=1e-6)
    assert few.kind == "approximate"
    assert few.diagnostics["clt_ok"] is False
    assert many.diagnostics["clt_ok"] is True
    assert few.diagnostics["expected_clones"] == pytest.approx(2 * 999 / (1 + math.exp(4.0)))
    assert clt_threshold(1e-6) == pytest.approx(10 * (2 * math.log(1e6)) ** 2 / 24)


def test_expected_clones_excludes_largest_p():
    prof = BudgetProfile.from_arrays([0.0, 10.0, 10.0])
    # p = [1/2, 1/(1+e^10), 1/(1+e^10)]: the eps = 0 user is the worst victim, excluded
    assert expected_clones(prof) == pytest.approx(4.0 / (1.0 + math.exp(10.0)))


# (c) bad input ---------------------------------------------------------------------------
def test_bad_input():
    prof = BudgetProfile.identical(n=100, eps0=1.0)
    with pytest.raises(ValueError, match="delta must be in"):
        GDP.eps(profile=prof, delta=0.0)
    with pytest.raises(ValueError, match="eps must be finite and >= 0"):
        GDP.delta(profile=prof, eps=-1.0)
    with pytest.raises(ValueError, match="clone_mass must be one of"):
        GDP.eps(profile=prof, delta=1e-6, clone_mass="triple")
    with pytest.raises(ValueError, match="unknown option"):
        GDP.eps(profile=prof, delta=1e-6, colour="red")
    with pytest.raises(TypeError, match="profile must be a BudgetProfile"):
        GDP.eps(profile=[1.0, 2.0], delta=1e-6)  # type: ignore[arg-type]


def test_largest_accepted_budgets_give_a_finite_vacuous_mu():
    # eps_i <= 50 keeps every p_i = expit(-eps_i) > 0, so mu stays finite (about 7e10 here);
    # the formula's eps is then far above max eps_i and the result is marked vacuous
    prof = BudgetProfile.from_arrays([50.0, 50.0, 50.0])
    mu = paper_mu(prof)
    assert math.isfinite(mu) and mu > 1e10
    res = get_bound("gdp").evaluate(profile=prof, delta=1e-6)
    assert res.eps > 50.0 and res.vacuous
