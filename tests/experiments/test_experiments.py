"""The experiment engine (shuffledp.experiments), imported directly: seeding, sweeps, the
calibration memo, common random numbers, references, bound grids, SGD driver, progress, and
bad input.  Small n: the whole file runs in seconds."""

from __future__ import annotations

import hashlib
import io
import math

import numpy as np
import pytest
from _extras import requires

from shuffledp import BudgetProfile, ParameterRegimeError
from shuffledp.bounds import Bound, BoundInfo, register_bound, unregister_bound
from shuffledp.compare import compare_bounds
from shuffledp.experiments import (
    CalibrationMemo,
    EstimationConfig,
    FrequencyTask,
    MeanTask,
    bounds_vs_n_rows,
    central_laplace,
    central_laplace_mse,
    draw_budgets,
    gdp_validity_rows,
    personalized_rows,
    rng_for,
    run_estimation,
    seed_entropy,
    seed_int,
    seed_sequence,
    sweep_points,
)
from shuffledp.experiments import estimation as engine
from shuffledp.experiments.sgd import run_seeds, run_sgd, sgd_base_profile

SPECS = {
    "u": {"kind": "uniform", "low": 0.5, "high": 2.0},
    "g": {"kind": "mixture", "groups": [[0.5, 0.5], [0.5, 2.0]]},
}


def small_config(**kw) -> EstimationConfig:
    base = dict(profiles=["u"], identical=True, n=[300], fixed_eps=1.0, target_eps=[2.0],
                fixed_n=300, reps=3, delta=1e-6)
    return EstimationConfig(**{**base, **kw})


def without_seconds(rows):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


# --------------------------------------------------------------------------- seeding
def test_same_seed_and_tags_give_the_same_stream():
    a = rng_for(7, "budgets", "u", 100).random(5)
    b = rng_for(7, "budgets", "u", 100).random(5)
    assert np.array_equal(a, b)
    assert seed_int(7, "sgd_run", 0) == seed_int(7, "sgd_run", 0)
    assert seed_sequence(7, "x").entropy == seed_entropy(7, "x")


@pytest.mark.parametrize(
    "other",
    [
        (8, "budgets", "u", 100),  # another master seed
        (7, "budgets", "u", 101),  # another n
        (7, "budgets", "v", 100),  # another profile name
        (7, "data", "u", 100),  # another stream
        (7, "budgets", "u", "100"),  # the integer 100 is not the string "100"
        (7, "budgets", "u", 100, 0),  # a trailing 0 is not dropped
        (7, "budgetsu", 100),  # tags are not concatenated
    ],
)
def test_different_seed_or_tags_give_different_streams(other):
    ref = rng_for(7, "budgets", "u", 100).random(5)
    assert not np.array_equal(ref, rng_for(*other).random(5))


def test_seed_entropy_is_a_stable_hash():
    # pinned: SHA-256 of the JSON text, first 16 bytes little endian (no salted hash())
    text = '["shuffledp", 1, "budgets", "u", 10]'
    want = int.from_bytes(hashlib.sha256(text.encode()).digest()[:16], "little")
    assert seed_entropy(1, "budgets", "u", 10) == want
    assert 0 <= seed_int(1, "x") < 2**63


@pytest.mark.parametrize(
    ("seed", "tags", "error", "match"),
    [
        (-1, (), ValueError, r"seed must be an integer in \[0, 2\^63 - 1\], got -1"),
        (1.5, (), TypeError, "seed must be an integer"),
        (True, (), TypeError, "seed must be an integer"),
        (1, (1.5,), TypeError, r"tags\[0\] must be a str or an integer"),
        (1, ("a", -2), TypeError, r"tags\[1\] must be a str or an integer >= 0"),
        (1, (None,), TypeError, r"tags\[0\]"),
    ],
)
def test_bad_seed_or_tags_are_named(seed, tags, error, match):
    with pytest.raises(error, match=match):
        rng_for(seed, *tags)


# --------------------------------------------------------------------------- sweeps, budgets
def test_sweep_points_order_and_values():
    pts = sweep_points(n=[100, 1000], fixed_eps=1.0, target_eps=[0.5, 2.0], fixed_n=100)
    assert [tuple(p) for p in pts] == [("n", 100, 1.0), ("n", 1000, 1.0), ("eps", 100, 0.5),
                                       ("eps", 100, 2.0)]


@requires("torch")
def test_one_profile_name_draws_the_same_users_everywhere():
    a = draw_budgets("u", SPECS["u"], n=400, seed=3)
    assert np.array_equal(a.eps, draw_budgets("u", SPECS["u"], n=400, seed=3, delta0=1e-9).eps)
    assert not np.array_equal(a.eps, draw_budgets("u", SPECS["u"], n=400, seed=4).eps)
    assert not np.array_equal(a.eps, draw_budgets("v", SPECS["u"], n=400, seed=3).eps)
    # the personalized grid evaluates exactly these users
    rows = personalized_rows(profiles=["u"], specs=SPECS, n=[400], delta=1e-6, delta0=[0.0],
                             methods=["gdp"], seed=3)
    ref = compare_bounds(a, delta=1e-6, methods=["gdp"])[0].result.eps
    assert rows[0]["eps"] == ref and rows[0]["seed"] == 3
    # the SGD base profile is the same users, scaled to a largest budget of 1
    base = sgd_base_profile({"profile": "u", "delta0": 0.0}, SPECS, 400, 3)
    assert np.allclose(base.eps, a.eps / a.eps.max())
    # and so is the shape of the estimation experiments (local_only: scale = eps / max eps_i)
    cfg = small_config(identical=False, n=[400], fixed_n=400, target_eps=[])
    row = run_estimation(MeanTask(["laplace"]), method="local_only", config=cfg,
                         profiles=SPECS, seed=3)[0]
    assert row["eps_local_mean"] == pytest.approx(a.eps.mean() / a.eps.max(), rel=1e-12)


def test_identical_shape_has_unit_budgets():
    p = draw_budgets("identical", None, n=50, seed=0, delta0=1e-8)
    assert p.is_identical and p.eps_max == 1.0 and p.delta_max == 1e-8


# --------------------------------------------------------------------------- estimation
def test_same_seed_gives_identical_rows_and_another_seed_other_draws():
    cfg = small_config()
    task = MeanTask(["laplace", "duchi"])
    a = run_estimation(task, method="gdp", config=cfg, profiles=SPECS, seed=11)
    b = run_estimation(task, method="gdp", config=cfg, profiles=SPECS, seed=11)
    c = run_estimation(task, method="gdp", config=cfg, profiles=SPECS, seed=12)
    assert without_seconds(a) == without_seconds(b)
    assert all(r["status"] == "ok" and r["seed"] == 11 for r in a)
    assert [r["mse"] for r in a] != [r["mse"] for r in c]
    # 2 profiles (identical, u) x 2 points x 2 mechanisms
    assert len(a) == 8


def test_common_random_numbers_across_methods(monkeypatch):
    """Every method sees the same data and the same noise streams."""
    seen: dict[str, dict] = {}
    current = {}
    real = engine.run_protocol

    def spy(mech, x, rng):
        key = (mech.name, x.size, hashlib.sha256(x.tobytes()).hexdigest())
        state = rng.bit_generator.state["state"]["state"]
        seen[current["method"]].setdefault(key, []).append(state)
        return real(mech, x, rng)

    monkeypatch.setattr(engine, "run_protocol", spy)
    cfg = small_config(target_eps=[])
    for method in ("gdp", "fmt21_closed", "local_only"):
        current["method"] = method
        seen[method] = {}
        rows = run_estimation(MeanTask(["laplace", "duchi"]), method=method, config=cfg,
                              profiles=SPECS, seed=5)
        assert all(r["status"] == "ok" for r in rows)
    assert seen["gdp"] == seen["fmt21_closed"] == seen["local_only"]
    # 2 mechanisms x 3 repetitions of distinct data sets, same in every profile
    assert len(seen["gdp"]) == 6 and all(len(v) == 2 for v in seen["gdp"].values())
    # the scales differ, so the errors differ: only the budgets separate the methods
    a = run_estimation(MeanTask(["laplace"]), method="gdp", config=cfg, profiles=SPECS, seed=5)
    b = run_estimation(MeanTask(["laplace"]), method="local_only", config=cfg, profiles=SPECS,
                       seed=5)
    assert a[0]["scale"] != b[0]["scale"] and a[0]["mse"] != b[0]["mse"]


def test_calibration_memo_hits_within_and_across_runs():
    memo = CalibrationMemo()
    # the point (fixed_n, fixed_eps) is in both sweeps; laplace and duchi share delta0 = 0
    cfg = small_config(target_eps=[1.0, 2.0])
    task = MeanTask(["laplace", "duchi", "gaussian"])
    rows = run_estimation(task, method="gdp", config=cfg, profiles=SPECS, seed=1, memo=memo)
    # 2 profiles x 2 distinct (n, eps) x 2 delta0: 8 calibrations for 2 x 3 x 3 = 18 rows
    assert (memo.misses, memo.hits, len(memo)) == (8, 10, 8)
    again = run_estimation(task, method="gdp", config=cfg, profiles=SPECS, seed=1, memo=memo)
    assert (memo.misses, memo.hits) == (8, 28)
    assert without_seconds(rows) == without_seconds(again)
    by = {(r["profile"], r["sweep"], r["target_eps"], r["mechanism"]): r for r in rows}
    assert by[("u", "n", 1.0, "laplace")]["scale"] == by[("u", "eps", 1.0, "laplace")]["scale"]
    assert by[("u", "n", 1.0, "laplace")]["scale"] == by[("u", "n", 1.0, "duchi")]["scale"]


def test_calibration_memo_keys_and_memoized_errors():
    memo = CalibrationMemo()
    shape = draw_budgets("u", SPECS["u"], n=300, seed=0)
    a = memo.calibrate("fmt21_closed", shape, eps=1.0, delta=1e-6)
    assert memo.calibrate("fmt21_closed", shape, eps=1.0, delta=1e-6) == a
    assert (memo.hits, memo.misses) == (1, 1)
    memo.calibrate("fmt21_closed", shape, eps=1.0, delta=1e-7)  # another delta
    memo.calibrate("fmt21_closed", shape, eps=1.0, delta=1e-6, rtol=1e-2)  # another rtol
    memo.calibrate("fmt21_closed", draw_budgets("u", SPECS["u"], n=300, seed=1), eps=1.0,
                   delta=1e-6)  # other users
    memo.calibrate("clones", shape, eps=1.0, delta=1e-6, options={"clone": "standard"})
    assert (memo.hits, memo.misses) == (1, 5)
    # an unreachable target is memoized and raised on every lookup
    leaky = BudgetProfile.identical(n=300, eps0=1.0, delta0=1e-3)
    for _ in range(2):
        with pytest.raises(ParameterRegimeError, match="max delta_i <= delta"):
            memo.calibrate("local_only", leaky, eps=1.0, delta=1e-6)
    assert (memo.hits, memo.misses) == (2, 6)


@pytest.fixture
def aware_bound():
    """A toy bound with a ``mechanism`` option: eps = factor(mechanism) * max eps_i."""
    factors = {None: 0.5, "laplace": 0.25, "duchi": 0.125}
    calls = []

    def eps_fn(*, profile, delta, mechanism=None):
        calls.append(mechanism)
        return factors[mechanism] * profile.eps_max

    bound = Bound(
        info=BoundInfo(name="toy_aware", kind="upper", title="toy", citation="test",
                       personalized=True, approx_ldp=False, randomizers=("any",),
                       options={"mechanism": None}),
        eps_fn=eps_fn,
    )
    register_bound(bound)
    yield calls
    unregister_bound("toy_aware")


def test_mechanism_aware_bounds_calibrate_per_mechanism(aware_bound):
    memo = CalibrationMemo()
    cfg = small_config(profiles=[], target_eps=[])
    rows = run_estimation(MeanTask(["laplace", "duchi"]), method="toy_aware", config=cfg,
                          profiles=SPECS, seed=0, memo=memo)
    assert memo.misses == 2 and memo.hits == 0  # one calibration per mechanism
    assert {c for c in aware_bound} == {"laplace", "duchi"}
    scale = {r["mechanism"]: r["scale"] for r in rows}
    # eps = f * s: s = 1 / f (up to rtol, on the certified side)
    assert scale["laplace"] == pytest.approx(4.0, rel=2e-3) and scale["laplace"] <= 4.0
    assert scale["duchi"] == pytest.approx(8.0, rel=2e-3) and scale["duchi"] <= 8.0
    # a bound without the option shares one calibration among same-delta0 mechanisms
    memo2 = CalibrationMemo()
    run_estimation(MeanTask(["laplace", "duchi"]), method="gdp", config=cfg, profiles=SPECS,
                   seed=0, memo=memo2)
    assert (memo2.misses, memo2.hits) == (1, 1)
    assert engine.bound_options("gdp", {"x": 1}, None) == {"x": 1}


def test_covered_comes_from_the_bound():
    cfg = small_config(identical=False, target_eps=[])
    rows = run_estimation(MeanTask(["laplace", "duchi"]), method="fmt23_numerical",
                          config=cfg, profiles=SPECS, seed=0)
    cov = {r["mechanism"]: r["covered"] for r in rows}
    # personalized Laplace is not covered by the 2/(1+e^eps0) clone mass, one-bit Duchi is
    assert cov == {"laplace": False, "duchi": True}


# --------------------------------------------------------------------------- references
def test_reference_methods():
    cfg = small_config(profiles=["g"], identical=False, reps=200, n=[1000], fixed_n=1000,
                       target_eps=[])
    local = run_estimation(MeanTask(["duchi"]), method="local_only", config=cfg,
                           profiles=SPECS, seed=2)[0]
    assert local["kind"] == "reference" and local["covered"] is True
    assert local["eps0"] == pytest.approx(1.0) and local["bound_eps"] == 1.0
    central = run_estimation(MeanTask(["duchi"]), method="central_laplace", config=cfg,
                             profiles=SPECS, seed=2)
    assert len(central) == 1 and central[0]["mechanism"] == "central_laplace"
    c = central[0]
    assert central_laplace_mse(n=1000, eps=1.0) == 8e-6
    assert c["mse_theory"] == pytest.approx(8e-6, rel=1e-12)
    assert c["mse_ci_low"] <= 8e-6 <= c["mse_ci_high"]  # 200 repetitions, fixed seed
    assert c["mse"] < local["mse"] / 10  # the curator is far more accurate
    freq = run_estimation(FrequencyTask(["grr"], d=5), method="central_laplace", config=cfg,
                          profiles=SPECS, seed=2)[0]
    assert freq["mse_ci_low"] <= freq["mse_theory"] <= freq["mse_ci_high"]


def test_central_laplace_shapes_and_errors():
    rng = np.random.default_rng(0)
    assert isinstance(central_laplace(0.1, n=10, eps=1.0, rng=rng), float)
    assert central_laplace(np.zeros(4), n=10, eps=1.0, rng=rng).shape == (4,)
    with pytest.raises(ValueError, match="eps must be"):
        central_laplace(0.1, n=10, eps=0.0, rng=rng)
    with pytest.raises(TypeError, match="rng must be"):
        central_laplace(0.1, n=10, eps=1.0, rng=0)


def test_not_applicable_rows_keep_the_reason():
    cfg = small_config(profiles=[], n=[300], target_eps=[], fixed_eps=0.01)
    rows = run_estimation(MeanTask(["gaussian"]), method="fmt23_numerical", config=cfg,
                          profiles=SPECS, seed=0)
    assert rows[0]["status"] == "not_applicable" and "pure" in rows[0]["reason"]


# --------------------------------------------------------------------------- bound grids
def test_bound_grids():
    rows = bounds_vs_n_rows(n=[100, 1000], eps0=4.0, delta=1e-6,
                            methods=["gdp", "rr_exact", "efmrtt19"])
    assert [(r["n"], r["method"], r["status"]) for r in rows] == [
        (100, "gdp", "ok"), (100, "rr_exact", "ok"), (100, "efmrtt19", "not_applicable"),
        (1000, "gdp", "ok"), (1000, "rr_exact", "ok"), (1000, "efmrtt19", "not_applicable")]
    assert rows[3]["below_lower"] is True  # the paper's formula at n = 1000, eps0 = 4
    cells = gdp_validity_rows(n=[100], eps0=[0.5, 8.0], delta=1e-6, methods=["gdp"])
    assert [r["method"] for r in cells] == ["gdp", "rr_exact"] * 2
    assert all(r["ratio_to_lower"] == 1.0 for r in cells if r["method"] == "rr_exact")


# --------------------------------------------------------------------------- progress
def test_progress_callback_counts_grid_points():
    calls = []
    cfg = small_config(target_eps=[1.0, 2.0])
    run_estimation(MeanTask(["laplace"]), method="gdp", config=cfg, profiles=SPECS, seed=0,
                   progress=lambda done, total: calls.append((done, total)))
    # 2 profiles x 3 sweep points
    assert calls == [(k, 6) for k in range(7)]
    calls.clear()
    personalized_rows(profiles=["u", "g"], specs=SPECS, n=[100], delta=1e-6,
                      delta0=[0.0, 1e-10], methods=["gdp"], seed=0,
                      progress=lambda d, t: calls.append((d, t)))
    assert calls == [(k, 4) for k in range(5)]


@requires("tqdm")
def test_workflow_progress_bar_writes_lines(monkeypatch):
    import wfutils

    log = io.StringIO()
    monkeypatch.setattr("sys.stderr", log)
    with wfutils.progress_bar("job") as bar:
        for k in range(4):
            bar(k, 3) if k else bar(0, 3)
    text = log.getvalue()
    assert "\r" not in text and "3/3" in text and text.count("\n") >= 2


# --------------------------------------------------------------------------- SGD driver
@requires("torch")
def test_tiny_sgd_run_is_reproducible():
    cfg = {"rounds": 2, "seeds": 2, "hidden": 4, "delta": 1e-5, "discretization": 1e-3}
    a = run_sgd(method="gdp", target_eps=4.0, config=cfg, profiles={}, seed=9)
    b = run_sgd(method="gdp", target_eps=4.0, config=cfg, profiles={}, seed=9)
    assert [r["accuracy"] for r in a] == [r["accuracy"] for r in b]
    assert [r["seed"] for r in a] == run_seeds(9, 2) and len(set(run_seeds(9, 2))) == 2
    assert all(r["status"] == "ok" and r["kind"] == "approximate" for r in a)
    assert all(r["eps_achieved"] <= 4.0 and r["accuracy"] > 0.2 for r in a)  # chance: 0.1
    free = run_sgd(method="nonprivate", target_eps=None, config=cfg, profiles={}, seed=9)
    assert [r["seed"] for r in free] == run_seeds(9, 2) and free[0]["kind"] == "nonprivate"
    # a method whose accounting does not cover the setting gives not_applicable rows
    # (stronger clones are proven for randomized response only)
    gauss = run_sgd(method="clones", target_eps=4.0,
                    config={**cfg, "randomizer": "gaussian", "clone": "stronger"},
                    profiles={}, seed=9)
    assert {r["status"] for r in gauss} == {"not_applicable"}
    assert all(math.isnan(r["accuracy"]) for r in gauss)
    assert "randomized response only" in gauss[0]["reason"]


@requires("torch")
def test_sgd_clones_rounds_personalized_budgets_down_to_levels():
    # clones trains with the profile rounded down to `tiers` levels (module docstring);
    # gdp with the profile as drawn; the Duchi randomizer is pure whatever delta0 says
    cfg = {"rounds": 2, "seeds": 1, "hidden": 4, "delta": 1e-5, "discretization": 1e-3,
           "profile": "u", "tiers": 3, "delta0": 1e-9}
    rows = run_sgd(method="clones", target_eps=8.0, config=cfg, profiles=SPECS, seed=4)
    assert rows[0]["status"] == "ok" and rows[0]["budget_levels"] == 3
    levels = [float(v) for v in rows[0]["local_eps_levels"].split(";")]
    assert len(levels) == 3 and levels == sorted(levels)
    assert math.isclose(levels[-1], rows[0]["local_eps_max"], rel_tol=1e-3)
    drawn = run_sgd(method="gdp", target_eps=8.0, config=cfg, profiles=SPECS, seed=4)
    assert drawn[0]["budget_levels"] > 3 and drawn[0]["local_eps_levels"] == ""
    g = run_sgd(method="clones", target_eps=8.0, config={**cfg, "randomizer": "gaussian"},
                profiles=SPECS, seed=4)
    assert g[0]["status"] == "ok" and g[0]["eps_achieved"] <= 8.0
    with pytest.raises(ValueError, match="delta0 must be > 0 for the gaussian randomizer"):
        run_sgd(method="gdp", target_eps=8.0,
                config={**cfg, "randomizer": "gaussian", "delta0": 0.0}, profiles=SPECS, seed=4)


@requires("torch")
def test_sgd_per_tier_targets_give_each_level_its_own_guarantee():
    # clones_tiers: level k's target is target_eps * b_k / b_min; the rows list each level's
    # users, certified central eps and target; clones lists the levels too (all at target)
    cfg = {"rounds": 3, "seeds": 1, "hidden": 4, "delta": 1e-5, "discretization": 1e-3,
           "profile": "u", "tiers": 3, "randomizer": "duchi_sphere"}
    rows = run_sgd(method="clones_tiers", target_eps=1.0, config=cfg, profiles=SPECS, seed=4)
    r = rows[0]
    assert r["status"] == "ok" and r["method"] == "clones_tiers" and r["kind"] == "upper"
    assert r["target_eps"] == 1.0
    users = [int(v) for v in r["tier_users"].split(";")]
    got = [float(v) for v in r["tier_eps"].split(";")]
    targets = [float(v) for v in r["tier_eps_targets"].split(";")]
    levels = [float(v) for v in r["local_eps_levels"].split(";")]
    assert len(users) == len(got) == len(targets) == 3 and sum(users) == r["n_users"]
    assert targets[0] == 1.0 and targets == sorted(targets) and targets[-1] > 1.0
    assert all(g <= t for g, t in zip(got, targets, strict=True))
    assert r["eps_achieved"] == pytest.approx(got[0], rel=1e-3)  # the smallest budgets
    assert levels == sorted(levels)
    held = run_sgd(method="clones", target_eps=1.0, config=cfg, profiles=SPECS, seed=4)[0]
    assert held["tier_eps_targets"] == "" and held["tier_users"] == r["tier_users"]
    assert max(float(v) for v in held["tier_eps"].split(";")) <= 1.0
    # the smallest budgets' users get the same target; the others get more budget
    assert held["local_eps_max"] < r["local_eps_max"]


@requires("torch")
@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"method": "rdp"}, ValueError, "method must be one of"),
        ({"method": "nonprivate", "target_eps": 1.0}, ValueError, "target_eps must be None"),
        ({"target_eps": -1.0}, ValueError, "target_eps must be"),
        ({"seed": -2}, ValueError, "seed must be"),
        ({"config": {"rounds": 1, "seeds": 0}}, ValueError, "seeds must be >= 1"),
        ({"config": {"round": 1}}, ValueError, r"unknown key\(s\) \['round'\]"),
        ({"progress": 3}, TypeError, "progress must be a callable"),
    ],
)
def test_sgd_bad_input_is_named(kwargs, error, match):
    args = {"method": "gdp", "target_eps": 1.0, "config": {"rounds": 1, "seeds": 1},
            "profiles": {}, "seed": 0, **kwargs}
    with pytest.raises(error, match=match):
        run_sgd(**args)


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("build", "error", "match"),
    [
        (lambda: small_config(reps=0), ValueError, "reps must be >= 1, got 0"),
        (lambda: small_config(n=[1]), ValueError, r"n\[0\] must be >= 2, got 1"),
        (lambda: small_config(target_eps=[0.0]), ValueError, r"target_eps\[0\] must be"),
        (lambda: small_config(fixed_eps=float("inf")), ValueError, "fixed_eps must be"),
        (lambda: small_config(delta=0.5 + 0.5), ValueError, "delta must be in"),
        (lambda: small_config(n=1000), TypeError, "n must be a list"),
        (lambda: small_config(rtol=2.0), ValueError, "rtol must be"),
        (lambda: small_config(bound_options={"clones": 1}), TypeError, "bound_options"),
        (lambda: MeanTask(["nope"]), ValueError, r"mechanisms\[0\] = 'nope' is unknown"),
        (lambda: MeanTask([]), ValueError, "mechanisms must not be empty"),
        (lambda: MeanTask(["laplace"], distribution="csv"), ValueError, "pool must be given"),
        (lambda: MeanTask(["laplace"], distribution="csv", pool=[0.0, 3.0]), ValueError,
         r"pool values must lie in \[-1, 1\], got 3.0"),
        (lambda: MeanTask(["laplace"], distribution="gamma"), ValueError,
         "distribution must be one of"),
        (lambda: FrequencyTask(["grr"], d=1), ValueError, "d must be >= 2, got 1"),
        (lambda: FrequencyTask(["grr"], d=4, distribution="csv", pool=[0, 4]), ValueError,
         r"pool must hold integer categories in \[0, 4\)"),
        (lambda: run_estimation(MeanTask(["laplace"]), method="nope", config=small_config(),
                                profiles=SPECS, seed=0), ValueError, "method must be a "
                                                                      "registered bound"),
        (lambda: run_estimation(MeanTask(["laplace"]), method="gdp",
                                config=small_config(profiles=["zz"]), profiles=SPECS, seed=0),
         ValueError, r"profiles\[0\] = 'zz' is not a defined profile"),
        (lambda: run_estimation(MeanTask(["laplace"]), method="gdp", config=small_config(),
                                profiles=SPECS, seed=-1), ValueError, "seed must be"),
        (lambda: run_estimation(MeanTask(["laplace"]), method="gdp", config={},
                                profiles=SPECS, seed=0), TypeError, "config must be an "
                                                                    "EstimationConfig"),
        (lambda: run_estimation(MeanTask(["laplace"]), method="gdp", config=small_config(),
                                profiles=SPECS, seed=0, progress="bar"), TypeError,
         "progress must be a callable"),
        (lambda: personalized_rows(profiles=["u"], specs=SPECS, n=[100], delta=1e-6,
                                   delta0=[1.0], methods=["gdp"], seed=0), ValueError,
         r"delta0\[0\] must be in \[0, 1\)"),
        (lambda: bounds_vs_n_rows(n=[100], eps0=-1.0, delta=1e-6), ValueError,
         "eps0 must be finite and >= 0"),
    ],
)
def test_bad_input_names_the_parameter(build, error, match):
    with pytest.raises(error, match=match):
        build()


def test_estimation_config_from_section_ignores_other_keys():
    cfg = EstimationConfig.from_section({"methods": "all", "mechanisms": ["laplace"],
                                         "reps": 2, "n": [100], "fixed_n": 100})
    assert cfg.reps == 2 and cfg.n == (100,) and cfg.profiles == ("uniform_0.5_2",)
    task = MeanTask.from_section({"mechanisms": ["duchi"], "data": {
        "distribution": "truncated_normal", "mean": 0.2, "std": 0.3, "csv_path": "",
        "column": "value"}})
    x = task.draw(np.random.default_rng(0), 1000)
    assert x.min() >= -1 and x.max() <= 1 and abs(x.mean() - 0.2) < 0.05
