"""Side-by-side evaluation and the validity flag of approximate bounds."""

from __future__ import annotations

import pytest

from shuffledp import BudgetProfile, list_bounds
from shuffledp.compare import compare_bounds


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
