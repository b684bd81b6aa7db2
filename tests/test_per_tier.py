"""Central guarantees per budget tier (``shuffledp.per_tier``, ``shuffledp bound --per-tier``):
each tier's eps is its victim group's certified value, never below the tier's own exact
lower bound, never above the profile's guarantee; and the CLI prints every upper value rounded
up and every lower value rounded down."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from shuffledp import BudgetProfile
from shuffledp.bounds import get_bound
from shuffledp.cli import _sig6, main
from shuffledp.errors import ParameterRegimeError
from shuffledp.per_tier import TIERS_MAX, calibrate_tiers, tier_eps

PROFILE = BudgetProfile.from_histogram([0.5, 1.0, 2.0], [600, 400, 200])


@pytest.mark.parametrize("randomizer", ["laplace_shared", "laplace", "binary_rr", "krr:10"])
def test_tiers_are_below_the_profile_guarantee(randomizer):
    tiers = tier_eps(PROFILE, delta=1e-6, randomizer=randomizer)
    assert [t.n for t in tiers] == [600, 400, 200]
    assert [t.eps_local for t in tiers] == [0.5, 1.0, 2.0]
    eps = [t.eps for t in tiers]
    assert all(math.isfinite(e) and e > 0 for e in eps) and eps == sorted(eps)
    # the largest budgets' group is the profile's worst group: tightest's eps
    whole = get_bound("tightest").eps(profile=PROFILE, delta=1e-6, mechanism=randomizer)
    assert eps[-1] == pytest.approx(whole, rel=1e-6)


def _rr_exact_tier_delta(budgets, victim, eps):
    """Exact delta(eps) of shuffled binary RR for the victim ``victim`` (index into budgets):
    the output is the number of ones; the victim's input 1 against 0, every assignment of the
    others' inputs tried, both orders (an enumeration independent of the bounds' code)."""
    import itertools

    def ones_law(inputs, budgets_):
        law = np.array([1.0])
        for x, e in zip(inputs, budgets_, strict=True):
            p1 = 1.0 / (1.0 + math.exp(-e)) if x == 1 else 1.0 / (1.0 + math.exp(e))
            law = np.convolve(law, [1.0 - p1, p1])
        return law

    others = [e for i, e in enumerate(budgets) if i != victim]
    big_e = math.exp(eps)
    worst = 0.0
    for xs in itertools.product((0, 1), repeat=len(others)):
        a = ones_law([*xs, 1], [*others, budgets[victim]])
        b = ones_law([*xs, 0], [*others, budgets[victim]])
        worst = max(worst, float(np.maximum(a - big_e * b, 0).sum()),
                    float(np.maximum(b - big_e * a, 0).sum()))
    return worst


@pytest.mark.parametrize("budgets", [[0.5, 0.5, 0.5, 1.0, 1.0, 2.0, 2.0, 2.0],
                                     [0.3, 0.3, 0.3, 0.3, 0.3, 3.0, 3.0],
                                     [1.0, 1.0, 1.0, 1.0, 1.5, 1.5, 4.0, 4.0, 4.0]])
@pytest.mark.parametrize("delta", [0.3, 0.05])
def test_every_tier_is_above_the_exact_shuffled_divergence(budgets, delta):
    # binary RR, small n: each tier's certified eps against the exact curve of its victims
    prof = BudgetProfile.from_arrays(budgets)
    for t in tier_eps(prof, delta=delta, randomizer="binary_rr"):
        if not math.isfinite(t.eps):
            continue
        victim = budgets.index(t.eps_local)
        assert _rr_exact_tier_delta(budgets, victim, t.eps) <= delta * (1 + 1e-9)


def test_per_tier_values_are_certificates():
    # each tier's eps is one where its group's delta was evaluated <= the target; recompute
    from shuffledp.bounds.blanket.bound import blanket_group_delta, blanket_plan
    from shuffledp.families import get_family

    fam = get_family("laplace_shared")
    tiers = tier_eps(PROFILE, delta=1e-6, randomizer=fam, methods=("blanket",))
    groups, _ = blanket_plan(PROFILE, fam, 3)
    for gi, g in enumerate(groups):
        for k in range(g.start, g.stop):
            d = blanket_group_delta(profile=PROFILE, eps=tiers[k].eps, mechanism=fam,
                                    group=gi, victim_groups=3)
            assert d <= 1e-6


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="profile must be a BudgetProfile"):
        tier_eps([1.0], delta=1e-6, randomizer="laplace")
    with pytest.raises(ValueError, match=r"methods must be among \['clones', 'blanket'\]"):
        tier_eps(PROFILE, delta=1e-6, randomizer="laplace", methods=("gdp",))
    with pytest.raises(TypeError, match="methods must be a non-empty sequence"):
        tier_eps(PROFILE, delta=1e-6, randomizer="laplace", methods="clones")
    with pytest.raises(ValueError, match="delta"):
        tier_eps(PROFILE, delta=2.0, randomizer="laplace")
    many = BudgetProfile.from_arrays(np.linspace(0.5, 2.0, TIERS_MAX + 1))
    with pytest.raises(ParameterRegimeError, match="at most 64 distinct budgets"):
        tier_eps(many, delta=1e-6, randomizer="laplace")


def test_a_randomizer_without_per_group_bounds_gets_none():
    tiers = tier_eps(PROFILE, delta=1e-6, randomizer="gaussian_l2")
    assert all(math.isinf(t.eps) and t.method == "" for t in tiers)


def test_cli_per_tier_table_json_and_csv(tmp_path, capsys):
    f = tmp_path / "b.csv"
    f.write_text("eps,count\n0.5,600\n1.0,400\n2.0,200\n")
    args = ["bound", "--budgets", str(f), "--delta", "1e-6", "--randomizer", "laplace_shared",
            "--method", "blanket", "--per-tier"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "per budget (the victims of each budget, laplace_shared" in out
    tiers = tier_eps(PROFILE, delta=1e-6, randomizer="laplace_shared")
    for t in tiers:
        assert _sig6(t.eps, "up") in out
    assert main([*args, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    import jsonschema

    with open("docs/schemas/bound.schema.json", encoding="utf-8") as fh:
        jsonschema.validate(doc, json.load(fh))
    assert [r["users"] for r in doc["per_tier"]] == [600, 400, 200]
    assert [r["eps"] for r in doc["per_tier"]] == [t.eps for t in tiers]
    assert main([*args, "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "tier,eps_local,delta_local,users,eps,method" and len(lines) == 4
    assert float(lines[3].split(",")[4]) == tiers[2].eps


def test_cli_per_tier_uses_the_methods_named(tmp_path, capsys):
    f = tmp_path / "b.csv"
    f.write_text("eps,count\n0.5,600\n1.0,400\n2.0,200\n")
    base = ["bound", "--budgets", str(f), "--delta", "1e-6", "--randomizer", "laplace_shared",
            "--per-tier", "--format", "json"]
    assert main([*base, "--method", "blanket"]) == 0
    assert {r["method"] for r in json.loads(capsys.readouterr().out)["per_tier"]} == {"blanket"}
    assert main([*base, "--method", "gdp"]) == 2
    err = capsys.readouterr().err
    assert "--per-tier takes its values from clones or blanket" in err


@pytest.mark.parametrize("extra", [["--eps", "1"], ["--delta", "1e-6", "--n", "10"]])
def test_cli_per_tier_needs_a_randomizer_and_a_delta(extra, capsys):
    args = ["bound", "--n", "1000", "--eps0", "1", "--per-tier"]
    if extra[0] == "--eps":
        args += ["--randomizer", "laplace", *extra]
    else:
        args = ["bound", "--eps0", "1", "--per-tier", *extra]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--per-tier needs --randomizer" in err


@pytest.mark.parametrize("value", [0.0914803048, 0.403103601, 1.0, 123456.7, 9.9999996e-7,
                                   0.1234565, 3.0])
def test_printed_values_round_to_the_safe_side(value):
    up, down = float(_sig6(value, "up")), float(_sig6(value, "down"))
    assert down <= value <= up
    assert up - down <= 10 ** (math.floor(math.log10(value)) - 5) * 1.000001
    assert _sig6(value, "nearest") == f"{value:.6g}"


# --------------------------------------------------------------------------- calibration
@pytest.mark.parametrize("randomizer", ["binary_rr", "krr:10"])
def test_calibrate_tiers_meets_each_target_and_raises_the_loose_levels(randomizer):
    base = BudgetProfile.from_histogram([1.0, 2.0, 3.0], [540, 370, 90])
    targets = [0.3, 0.6, 0.9]
    cal = calibrate_tiers(base, targets=targets, delta=1e-6, randomizer=randomizer)
    assert cal.targets == tuple(targets)
    # every level's certified eps, recomputed here, is at most its target
    again = tier_eps(cal.profile, delta=1e-6, randomizer=randomizer)
    assert [t.eps for t in again] == [t.eps for t in cal.tiers]
    assert all(t.eps <= g for t, g in zip(again, targets, strict=True))
    # the levels keep their users and their order; some level is binding (within the search's
    # tolerance of its target) and every level's budget is at least the common factor's
    assert [t.n for t in again] == [540, 370, 90]
    levels = cal.profile.tiers.eps
    assert np.all(np.diff(levels) > 0)
    assert np.all(levels >= base.tiers.eps * cal.scale * (1 - 1e-12))
    assert max(t.eps / g for t, g in zip(again, targets, strict=True)) > 0.9
    # per-tier targets allow more than holding everyone to the smallest target
    common = calibrate_tiers(base, targets=[0.3] * 3, delta=1e-6, randomizer=randomizer)
    assert all(t.eps <= 0.3 for t in common.tiers)
    assert cal.profile.eps.mean() > common.profile.eps.mean()


def test_calibrate_tiers_rejects_bad_input():
    base = BudgetProfile.from_histogram([1.0, 2.0], [50, 50])
    with pytest.raises(ValueError, match=r"targets must have one central eps per budget level"):
        calibrate_tiers(base, targets=[1.0], delta=1e-6, randomizer="laplace")
    with pytest.raises(ValueError, match=r"targets\[1\]"):
        calibrate_tiers(base, targets=[1.0, -1.0], delta=1e-6, randomizer="laplace")
    with pytest.raises(TypeError, match="base must be a BudgetProfile"):
        calibrate_tiers([1.0, 2.0], targets=[1.0, 1.0], delta=1e-6, randomizer="laplace")
    with pytest.raises(ParameterRegimeError, match="not reachable"):
        calibrate_tiers(base, targets=[1e-9, 1e-9], delta=1e-6, randomizer="laplace",
                        scale_min=0.5)
