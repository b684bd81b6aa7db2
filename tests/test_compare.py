"""Side-by-side evaluation and the validity flag of approximate bounds."""

from __future__ import annotations

import pytest

from shuffledp import BudgetProfile, list_bounds
from shuffledp.compare import best_answer, check_claim, compare_bounds


def test_paper_formula_flagged_below_exact_lower_bound():
    # README table: n = 1000, eps0 = 4, delta = 1e-6: formula 1.45, exact RR >= 1.69.
    rows = {
        r.method: r
        for r in compare_bounds(
            BudgetProfile.identical(n=1000, eps0=4.0),
            delta=1e-6,
            methods=["gdp", "rr_exact", "clones"],
        )
    }
    assert rows["gdp"].below_lower is True
    assert rows["rr_exact"].result.eps >= 1.69
    assert rows["clones"].result.eps >= rows["rr_exact"].result.eps
    assert rows["clones"].below_lower is None  # only approximations are checked


def test_not_flagged_with_many_clones():
    rows = {
        r.method: r
        for r in compare_bounds(
            BudgetProfile.identical(n=100_000, eps0=1.0), delta=1e-6, methods=["gdp", "rr_exact"]
        )
    }
    assert rows["gdp"].below_lower is False


def test_flag_also_in_delta_direction():
    prof = BudgetProfile.identical(n=1000, eps0=4.0)
    rows = {r.method: r for r in compare_bounds(prof, eps=1.5, methods=["gdp", "rr_exact"])}
    assert rows["gdp"].result.delta < rows["rr_exact"].result.delta
    assert rows["gdp"].below_lower is True


def test_default_is_every_registered_bound_and_unknown_fails_fast():
    rows = compare_bounds(BudgetProfile.identical(n=10_000, eps0=1.0), delta=1e-6)
    assert [r.method for r in rows] == list_bounds()
    with pytest.raises(ValueError, match="unknown bound 'nope'"):
        compare_bounds(
            BudgetProfile.identical(n=100, eps0=1.0), delta=1e-6, methods=["gdp", "nope"]
        )
    with pytest.raises(ValueError, match="exactly one of delta"):
        compare_bounds(BudgetProfile.identical(n=100, eps0=1.0), methods=["gdp"])


def test_per_method_options_and_unknown_option_target():
    prof = BudgetProfile.identical(n=10_000, eps0=2.0)
    std = compare_bounds(prof, delta=1e-6, methods=["clones"],
                         options={"clones": {"clone": "standard"}})[0]
    strong = compare_bounds(prof, delta=1e-6, methods=["clones"])[0]
    assert std.result.eps > strong.result.eps
    assert std.result.diagnostics["clone"] == "standard"
    with pytest.raises(ValueError, match="unknown bound 'nope'"):
        compare_bounds(prof, delta=1e-6, methods=["gdp"], options={"nope": {}})


def test_lower_bound_check_only_for_the_randomizers_an_approximation_is_stated_for():
    """gdp (any randomizer) below rr_exact is flagged; liu24 (Laplace only) is not compared
    with the exact curve of binary RR, nor is variation_ratio_claimed with the Laplace row."""
    p = BudgetProfile.identical(n=1000, eps0=4.0)
    rows = {e.method: e for e in compare_bounds(
        p, delta=1e-6, methods=["gdp", "liu24", "variation_ratio_claimed", "rr_exact"],
        options={"variation_ratio_claimed": {"mechanism": "laplace"}})}
    assert rows["gdp"].below_lower is True
    for m in ("liu24", "variation_ratio_claimed"):
        assert rows[m].ok and rows[m].below_lower is None
        assert "skipped" in rows[m].lower_reason
    assert rows["liu24"].result.eps < rows["rr_exact"].result.eps  # below, yet not flagged


# --- a named randomizer: mechanism-aware by default, covered, the answer, the claim checker ----

ONE_HIGH = BudgetProfile.from_histogram([0.5, 4.0], [999, 1])


def test_named_randomizer_evaluates_mechanism_aware_and_says_covered():
    ev = {e.method: e for e in compare_bounds(ONE_HIGH, delta=1e-6, randomizer="laplace",
                                              methods=["gdp", "clones", "window_lower",
                                                       "rr_exact"])}
    assert ev["clones"].options == {"mechanism": "laplace"} and ev["clones"].covered is True
    assert ev["clones"].result.eps == pytest.approx(1.02787, rel=1e-4)
    assert ev["gdp"].covered is False  # an approximation is a guarantee for nothing
    assert ev["window_lower"].options == {"mechanism": "laplace"} and ev["window_lower"].covered
    assert ev["rr_exact"].covered is False  # binary RR's curve is no lower bound for Laplace
    # generic masses on request; explicit options win over the randomizer's
    gen = compare_bounds(ONE_HIGH, delta=1e-6, randomizer="laplace", methods=["clones"],
                         generic_masses=True)[0]
    assert gen.options == {} and gen.covered is False
    assert gen.result.eps == pytest.approx(0.273475, rel=1e-4)
    own = compare_bounds(ONE_HIGH, delta=1e-6, randomizer="laplace", methods=["clones"],
                         options={"clones": {"mechanism": "binary_rr"}})[0]
    assert own.options == {"mechanism": "binary_rr"} and own.covered is False
    # no randomizer: covered is None, today's options
    plain = compare_bounds(ONE_HIGH, delta=1e-6, methods=["clones"])[0]
    assert plain.covered is None and plain.options == {}


def test_best_answer_is_the_tightest_covering_upper_and_the_best_covering_lower():
    ev = compare_bounds(ONE_HIGH, delta=1e-6, randomizer="laplace",
                        methods=["clones", "blanket", "window_lower", "tier_sum_lower",
                                 "rr_exact", "fmt23_numerical"])
    a = best_answer(ev)
    covered_up = [e.result.eps for e in ev if e.ok and e.kind == "upper" and e.covered]
    covered_lo = [e.result.eps for e in ev if e.ok and e.kind == "lower" and e.covered]
    assert a.target == "delta" and a.upper_value == min(covered_up)
    assert a.lower_value == max(covered_lo) and a.lower.method == "tier_sum_lower"
    assert a.lower_value <= a.upper_value
    # at a target eps the values are deltas: the smallest upper, the largest lower
    ev = compare_bounds(ONE_HIGH, eps=0.42, randomizer="laplace",
                        methods=["clones", "blanket", "window_lower", "tier_sum_lower"])
    a = best_answer(ev)
    assert a.target == "eps" and a.upper.method == "blanket"
    assert a.upper_value == min(e.result.delta for e in ev if e.kind == "upper")
    with pytest.raises(ValueError, match="at least one"):
        best_answer([])


@pytest.mark.parametrize("eps,verdict", [(0.45, "proven"), (0.42, "undetermined"),
                                         (0.3, "refuted")])
def test_check_claim_verdicts(eps, verdict):
    c = check_claim(ONE_HIGH, eps=eps, delta=1e-6, randomizer="laplace",
                    methods=["clones", "blanket", "tier_sum_lower", "window_lower"])
    assert c.verdict == verdict, c
    assert c.upper_method == "blanket" and c.lower_method == "tier_sum_lower"
    assert (c.upper_delta <= 1e-6) == (verdict == "proven")
    assert (c.lower_delta > 1e-6) == (verdict == "refuted")
    assert c.lower_delta <= c.upper_delta
    assert verdict in c.sentence and "laplace" in c.sentence


def test_check_claim_and_named_randomizer_refuse_bad_input():
    with pytest.raises(ValueError, match="randomizer"):
        check_claim(ONE_HIGH, eps=0.5, delta=1e-6, randomizer=None)
    with pytest.raises(ValueError, match="unknown randomizer|randomizer"):
        check_claim(ONE_HIGH, eps=0.5, delta=1e-6, randomizer="nope")
    with pytest.raises(ValueError, match="eps"):
        check_claim(ONE_HIGH, eps=-1.0, delta=1e-6, randomizer="laplace")
    with pytest.raises(ValueError, match="delta"):
        check_claim(ONE_HIGH, eps=0.5, delta=2.0, randomizer="laplace")
    with pytest.raises(TypeError, match="generic_masses"):
        compare_bounds(ONE_HIGH, delta=1e-6, methods=["clones"], randomizer="laplace",
                       generic_masses="yes")
    with pytest.raises(TypeError, match="options"):
        compare_bounds(ONE_HIGH, delta=1e-6, methods=["clones"], options={"clones": 1})
