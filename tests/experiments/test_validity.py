"""Experiment 8 (personalized validity): rows, the lower-bound comparison and the loud failure
of a rigorous bound below a certified lower bound."""

from __future__ import annotations

import pytest

from shuffledp.bounds import Bound, BoundInfo, register_bound, unregister_bound
from shuffledp.bounds.base import Coverage
from shuffledp.compare import InconsistentBoundsError
from shuffledp.experiments.validity import (
    VALIDITY_COLUMNS,
    bound_variants,
    check_randomizers,
    randomizer_tag,
    validity_rows,
)

SPECS = {
    "few_high": {"kind": "mixture", "groups": [[0.01, 4.0], [0.99, 0.5]]},
    "u": {"kind": "uniform", "low": 0.5, "high": 2.0},
}


@pytest.fixture(scope="module")
def rows():
    return validity_rows(profiles=["few_high", "u"], specs=SPECS,
                         randomizers=["laplace", "duchi"], n=[300, 1000], delta=1e-6,
                         gaussian_delta0=1e-8, seed=7)


def _find(rows, **keys):
    return [r for r in rows if all(r[k] == v for k, v in keys.items())]


def test_columns_and_cells(rows):
    assert all(list(r) == VALIDITY_COLUMNS or set(r) == set(VALIDITY_COLUMNS) for r in rows)
    cells = {(r["profile"], r["randomizer"], r["n"]) for r in rows}
    assert len(cells) == 2 * 2 * 2
    # every cell has exactly one best certified lower bound, shared by its rows
    for cell in cells:
        sub = _find(rows, profile=cell[0], randomizer=cell[1], n=cell[2])
        assert len({r["lower_eps"] for r in sub}) == 1
        assert sub[0]["lower_eps"] > 0


def test_paper_formula_below_laplace_lower_bound_on_few_high(rows):
    """The finding of issue 12: one user in a hundred at eps 4 among users at 0.5, Laplace:
    the paper's eps is below what shuffled Laplace certainly leaks, at every n."""
    for n in (300, 1000):
        (g,) = _find(rows, profile="few_high", randomizer="laplace", n=n, method="gdp")
        assert g["below_lower"] is True
        assert g["ratio_to_lower"] < 0.85
        # the best certified lower bound: tier_sum_lower's score sum (two tiers), never below
        # window_lower's windows
        assert g["lower_method"] == "tier_sum_lower"
        (w,) = _find(rows, profile="few_high", randomizer="laplace", n=n,
                     method="window_lower")
        assert g["lower_eps"] >= w["eps"]


def test_covering_rigorous_rows_are_at_or_above_the_lower_bound(rows):
    covered = [r for r in rows if r["kind"] == "upper" and r["covered"]
               and r["status"] == "ok"]
    assert covered  # at least the mechanism-aware clones
    assert all(r["ratio_to_lower"] >= 1.0 - 1e-6 for r in covered)
    aware = _find(rows, method="clones", variant="mechanism=laplace")
    assert aware and all(r["covered"] for r in aware)


def test_generic_clones_do_not_cover_personalized_laplace_and_fall_below(rows):
    """The generic clone masses are not a guarantee for personalized Laplace (the CLI and the
    table say so), and the certified lower bound shows why: they are below it."""
    sub = _find(rows, profile="few_high", randomizer="laplace", method="clones",
                variant="clone=standard")
    assert sub and not any(r["covered"] for r in sub)
    assert all(r["below_lower"] for r in sub)


def test_duchi_uses_the_best_of_rr_exact_and_window(rows):
    for r in _find(rows, randomizer="duchi", method="gdp"):
        lows = [x for x in _find(rows, randomizer="duchi", profile=r["profile"], n=r["n"])
                if x["kind"] == "lower" and x["covered"] and x["status"] == "ok"]
        assert {x["method"] for x in lows} >= {"rr_exact", "window_lower"}
        assert r["lower_eps"] == pytest.approx(max(x["eps"] for x in lows))


def test_a_covering_rigorous_bound_below_the_lower_bound_fails_loudly():
    def tiny(*, profile, delta):
        return 1e-4

    def covers_all(*, family, profile):
        return Coverage(True, "claims every randomizer")

    bound = Bound(info=BoundInfo(name="toy_unsound", kind="upper", title="toy",
                                 citation="test", personalized=True, approx_ldp=True),
                  eps_fn=tiny, covers_fn=covers_all)
    register_bound(bound)
    try:
        with pytest.raises(InconsistentBoundsError, match="toy_unsound"):
            validity_rows(profiles=["u"], specs=SPECS, randomizers=["laplace"], n=[300],
                          delta=1e-6, gaussian_delta0=1e-8, seed=1,
                          methods=["gdp", "window_lower", "toy_unsound"])
    finally:
        unregister_bound("toy_unsound")


def test_gaussian_cells_get_local_delta():
    out = validity_rows(profiles=["u"], specs=SPECS, randomizers=["gaussian"], n=[300],
                        delta=1e-6, gaussian_delta0=1e-8, seed=1,
                        methods=["gdp", "window_lower", "clones"])
    assert {r["delta0"] for r in out} == {1e-8}
    (w,) = _find(out, method="window_lower")
    assert w["status"] == "ok" and w["covered"] and w["eps"] > 0


def test_variants_and_tags():
    assert bound_variants("window_lower", "krr:10") == [("mechanism=krr:10",
                                                         {"mechanism": "krr:10"})]
    assert [v for v, _ in bound_variants("clones", "duchi")] == [
        "mechanism=duchi", "clone=standard", "clone=stronger"]
    assert randomizer_tag("krr:10") == "krr-10"


@pytest.mark.parametrize("bad, match", [
    (["olh:10"], "no certified lower bound"),
    (["lapalce"], r"randomizers\[0\]"),
    ([], "must not be empty"),
    ("laplace", "must be a list"),
])
def test_bad_randomizers(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        check_randomizers(bad)


def test_bad_arguments_name_the_parameter():
    with pytest.raises(ValueError, match="gaussian_delta0"):
        validity_rows(profiles=["u"], specs=SPECS, randomizers=["laplace"], n=[300],
                      delta=1e-6, gaussian_delta0=0.0, seed=1)
    with pytest.raises(ValueError, match="n"):
        validity_rows(profiles=["u"], specs=SPECS, randomizers=["laplace"], n=[1],
                      delta=1e-6, gaussian_delta0=1e-8, seed=1)
    with pytest.raises(ValueError, match="methods"):
        validity_rows(profiles=["u"], specs=SPECS, randomizers=["laplace"], n=[300],
                      delta=1e-6, gaussian_delta0=1e-8, seed=1, methods=["nope"])


def test_cell_gap_is_the_best_covering_upper_over_the_best_lower(rows):
    """upper_eps / upper_to_lower: the smallest covering rigorous upper bound of the cell, over
    its best certified lower bound (computed here again from the rows)."""
    cells = {(r["profile"], r["randomizer"], r["n"]) for r in rows}
    for cell in cells:
        sub = _find(rows, profile=cell[0], randomizer=cell[1], n=cell[2])
        ups = [r for r in sub if r["kind"] == "upper" and r["covered"] and r["status"] == "ok"]
        best = min(ups, key=lambda r: r["eps"])
        assert all(r["upper_eps"] == best["eps"] for r in sub)
        assert all(r["upper_method"].split(" ")[0] == best["method"] for r in sub)
        gap = sub[0]["upper_to_lower"]
        assert gap == pytest.approx(best["eps"] / sub[0]["lower_eps"], rel=1e-12)
        assert gap >= 1.0 - 1e-6
