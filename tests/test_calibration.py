"""Calibration of local budgets to a central target: toy bounds with known answers, safe side,
maximality, cap, floor, regime errors, and a contract over every registered bound."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _extras import requires

import shuffledp
from shuffledp import BudgetProfile, ParameterRegimeError
from shuffledp.bounds import Bound, BoundInfo, register_bound, unregister_bound
from shuffledp.calibration import (
    Calibration,
    ScaleCheck,
    calibrate_eps0,
    calibrate_scale,
    delta_score,
    eps_score,
    local_only_scale,
    search_scale,
)

RTOL = 1e-3
SHAPE = BudgetProfile.uniform(n=2000, low=0.5, high=2.0, rng=np.random.default_rng(0))


def _toy(name, fn, kind="upper", *, by="eps"):
    """A registered toy bound whose ``eps_fn`` (``by="eps"``) or ``delta_fn`` is ``fn``."""
    info = BoundInfo(
        name=name, kind=kind, title=name, citation="test", personalized=True, approx_ldp=True
    )
    return register_bound(Bound(info=info, **{f"{by}_fn": fn}), replace=True)


@pytest.fixture
def toy_bounds():
    """``make(name, fn, kind, by="eps" | "delta")`` registers a toy bound, removed after."""
    names = []

    def make(name, fn, kind="upper", by="eps"):
        names.append(name)
        return _toy(name, fn, kind, by=by)

    yield make
    for n in names:
        unregister_bound(n)


# (a) reference values: toy bounds with closed-form answers -------------------------------
def test_linear_toy_bound_gives_the_exact_scale(toy_bounds):
    # eps(profile) = max eps_i / (4 sqrt(n / 2000)): s* = 4 eps / max eps_i
    toy_bounds("toy_linear", lambda *, profile, delta: profile.eps_max / 4.0)
    c = calibrate_scale(method="toy_linear", profile=SHAPE, eps=1.0, delta=1e-6)
    exact = 4.0 / SHAPE.eps_max
    assert c.scale <= exact and c.scale == pytest.approx(exact, rel=RTOL)
    assert c.bound_eps <= 1.0 and not c.capped and isinstance(c, Calibration)
    assert c.eps0 == pytest.approx(4.0, rel=RTOL)
    assert np.allclose(c.profile.eps, SHAPE.eps * c.scale)


def test_lower_kind_returns_the_violating_end(toy_bounds):
    toy_bounds("toy_lower", lambda *, profile, delta: profile.eps_max / 4.0, kind="lower")
    c = calibrate_scale(method="toy_lower", profile=SHAPE, eps=1.0, delta=1e-6)
    assert c.bound_eps >= 1.0 and c.scale == pytest.approx(4.0 / SHAPE.eps_max, rel=RTOL)


def test_fmt21_closed_form_inverts_by_hand():
    # FMT21 Thm 3.1: eps = log(1 + (e^a - 1)/(e^a + 1) (8 sqrt(e^a log(4/d)/n) + 8 e^a / n))
    n, delta = 100_000, 1e-6
    c = calibrate_eps0(method="fmt21_closed", n=n, eps=0.5, delta=delta)

    def fmt(a):
        return math.log1p(
            (math.exp(a) - 1)
            / (math.exp(a) + 1)
            * (8 * math.sqrt(math.exp(a) * math.log(4 / delta) / n) + 8 * math.exp(a) / n)
        )

    assert fmt(c.eps0) <= 0.5 + 1e-9 < fmt(c.eps0 * (1 + 2 * RTOL))


# (b) invariants -----------------------------------------------------------------------------
def test_cap_is_respected(toy_bounds):
    toy_bounds("toy_flat", lambda *, profile, delta: 0.01)
    c = calibrate_scale(method="toy_flat", profile=SHAPE, eps=1.0, delta=1e-6, max_local_eps=8.0)
    assert c.capped and c.eps0 == pytest.approx(8.0)


def test_floor_and_regime_error(toy_bounds):
    # kind approximate: rigorous and exact bounds are capped at max eps_i by the base class
    toy_bounds("toy_bad", lambda *, profile, delta: 3.0 * profile.eps_max, kind="approximate")
    # certifies less than the local guarantee; without the floor the search goes below s_local
    c = calibrate_scale(method="toy_bad", profile=SHAPE, eps=1.0, delta=1e-6)
    assert c.scale == pytest.approx(1 / (3 * SHAPE.eps_max), rel=RTOL)
    f = calibrate_scale(method="toy_bad", profile=SHAPE, eps=1.0, delta=1e-6, local_floor=True)
    assert f.used_local_floor and f.scale == local_only_scale(SHAPE, eps=1.0, delta=1e-6)

    def never(*, profile, delta):
        raise ParameterRegimeError("toy_never holds nowhere")

    toy_bounds("toy_never", never)
    with pytest.raises(ParameterRegimeError, match="toy_never cannot certify eps = 1.*nowhere"):
        calibrate_scale(method="toy_never", profile=SHAPE, eps=1.0, delta=1e-6)


def test_identical_equals_scale_on_identical_shape():
    a = calibrate_eps0(method="gdp", n=5000, eps=1.0, delta=1e-6)
    b = calibrate_scale(
        method="gdp", profile=BudgetProfile.identical(n=5000, eps0=1.0), eps=1.0, delta=1e-6
    )
    assert a.eps0 == b.scale


def test_calibrated_budget_grows_with_target_and_n():
    e = [
        calibrate_eps0(method="fmt21_numerical", n=5000, eps=t, delta=1e-6).eps0
        for t in (0.25, 0.5, 1.0)
    ]
    assert e[0] < e[1] < e[2]
    m = [
        calibrate_eps0(method="fmt21_numerical", n=n, eps=0.5, delta=1e-6).eps0
        for n in (1000, 10_000)
    ]
    assert m[0] < m[1]


def test_local_only_reference():
    assert local_only_scale(SHAPE, eps=1.0, delta=1e-6) == pytest.approx(1 / SHAPE.eps_max)
    approx = BudgetProfile.identical(n=10, eps0=1.0, delta0=1e-5)
    with pytest.raises(ParameterRegimeError, match="max delta_i <= delta"):
        local_only_scale(approx, eps=1.0, delta=1e-6)


# (c) bad input ------------------------------------------------------------------------------
def test_bad_input():
    with pytest.raises(ValueError, match="unknown bound 'nope'; known bounds: "):
        calibrate_scale(method="nope", profile=SHAPE, eps=1.0, delta=1e-6)
    with pytest.raises(ValueError, match="eps must be finite and > 0, got 0.0"):
        calibrate_scale(method="gdp", profile=SHAPE, eps=0.0, delta=1e-6)
    with pytest.raises(ValueError, match=r"delta must be in \[1e-30, 0.99\], got 1.0"):
        calibrate_scale(method="gdp", profile=SHAPE, eps=1.0, delta=1.0)
    with pytest.raises(TypeError, match="profile must be a BudgetProfile"):
        calibrate_scale(method="gdp", profile=[1.0, 2.0], eps=1.0, delta=1e-6)
    with pytest.raises(ValueError, match="unknown option"):
        calibrate_scale(method="gdp", profile=SHAPE, eps=1.0, delta=1e-6, options={"nonsense": 1})


# (d) contract over every registered bound ---------------------------------------------------
@pytest.mark.parametrize("method", shuffledp.list_bounds())
def test_calibration_contract(method):
    bound = shuffledp.get_bound(method)
    target, delta = 1.0, 1e-6
    try:
        c = calibrate_scale(method=method, profile=SHAPE, eps=target, delta=delta)
    except ParameterRegimeError as err:
        assert method in str(err)
        return

    def f(s):
        try:
            return bound.eps(profile=SHAPE.scaled(s), delta=delta)
        except ParameterRegimeError:
            return math.inf

    assert c.kind == bound.info.kind and c.method == method
    if c.kind == "lower":
        assert f(c.scale) >= target > f(c.scale / (1 + 2 * RTOL))
    else:
        assert f(c.scale) <= target  # never more local budget than the bound certifies
        if not c.capped:
            assert f(c.scale * (1 + 2 * RTOL)) > target  # maximal within the tolerance


# (e) the shared search: certificate, one evaluation per scale, guide ---------------------
def test_one_delta_evaluation_per_scale_and_one_inversion_at_the_end(toy_bounds):
    # delta(eps) = exp(-200 e^{-m} - eps), m = max eps_i: certified iff
    # 200 e^{-m} + eps >= log(1/delta), i.e. m <= log(200 / (log(1/delta) - eps))
    calls = []

    def delta_fn(*, profile, eps):
        calls.append((profile.eps_max, eps))
        return math.exp(-200.0 * math.exp(-profile.eps_max) - eps)

    toy_bounds("toy_delta", delta_fn, by="delta")
    target, delta = 1.0, 1e-6
    c = calibrate_scale(method="toy_delta", profile=SHAPE, eps=target, delta=delta)
    exact = math.log(200.0 / (math.log(1.0 / delta) - target)) / SHAPE.eps_max
    assert c.scale <= exact and c.scale == pytest.approx(exact, rel=RTOL)
    assert c.bound_delta <= delta and c.bound_eps <= target
    final = [(m, e) for m, e in calls if m == pytest.approx(c.eps0)]
    steps = [(m, e) for m, e in calls if m != pytest.approx(c.eps0)]
    # every other scale: one evaluation, at the target eps (no eps(delta) inversion)
    assert all(e == target for _, e in steps) and len({m for m, _ in steps}) == len(steps)
    assert len(steps) + 1 == c.evaluations  # plus the returned scale
    assert (c.eps0, target) in [(pytest.approx(m), e) for m, e in final]
    assert c.evaluations <= 12


def test_validity_region_note(toy_bounds):
    def delta_fn(*, profile, eps):
        if profile.eps_max > 3.0:
            raise ParameterRegimeError("toy_region holds for max eps_i <= 3 only")
        return 1e-9

    toy_bounds("toy_region", delta_fn, by="delta")
    c = calibrate_scale(method="toy_region", profile=SHAPE, eps=1.0, delta=1e-6)
    assert c.eps0 <= 3.0 and c.eps0 == pytest.approx(3.0, rel=RTOL)
    assert "limited by the bound's validity region" in c.note and "<= 3 only" in c.note


def test_search_scale_brackets_caps_and_fails():
    def check(s, crossing=2.0):
        return ScaleCheck(s <= crossing, math.log(crossing / s), s)

    res = search_scale(check, start=0.01, s_min=1e-4, s_max=1e3, rtol=1e-4)
    assert res.lo <= 2.0 < res.hi and res.hi - res.lo <= 1e-4 * res.hi and res.converged
    capped = search_scale(check, start=0.5, s_min=1e-4, s_max=1.5, rtol=1e-3)
    assert capped.capped and capped.lo == 1.5 and capped.hi is None
    failed = search_scale(lambda s: check(s, 1e-6), start=0.5, s_min=1e-3, s_max=10.0, rtol=1e-3)
    assert failed.failed and failed.lo is None and failed.hi == 1e-3
    # seeds that bracket the crossing within the tolerance end the search at once
    seeded = search_scale(check, start=0.5, s_min=1e-3, s_max=10.0, rtol=1e-3,
                          seeds=[1.9995, 2.0005])
    assert seeded.evaluations == 2 and (seeded.lo, seeded.hi) == (1.9995, 2.0005)
    with pytest.raises(ValueError, match="need 0 < s_min <= s_max"):
        search_scale(check, start=1.0, s_min=2.0, s_max=1.0, rtol=1e-3)
    with pytest.raises(ValueError, match="rtol must be in"):
        search_scale(check, start=1.0, s_min=0.1, s_max=1.0, rtol=0.0)


def test_scores():
    assert delta_score(0.0, 1e-6) == math.inf and delta_score(1.0, 1e-6) == -math.inf
    assert delta_score(1e-6, 1e-6) == 0.0 and delta_score(math.nan, 1e-6) == -math.inf
    assert eps_score(0.0, 1.0) == math.inf and eps_score(math.inf, 1.0) == -math.inf


def test_quantized_shape_rounds_up_within_rho():
    from shuffledp.bounds.clones.guide import quantized_up as _quantized_up

    eps = np.concatenate([SHAPE.eps, [0.0, 1e-9]])
    rho = 5e-4
    values, counts = _quantized_up(eps, rho)
    assert counts.sum() == eps.size and np.all(np.diff(values) > 0)
    assert values[-1] == eps.max()
    # each budget's grid point: the smallest value >= it, at most (1 + rho) above it
    idx = np.searchsorted(values, eps, side="left")
    q = values[idx]
    assert np.all(q >= eps)
    big = eps >= eps.max() * 1e-6
    assert np.all(q[big] <= eps[big] * (1 + rho) * (1 + 1e-12))


GUIDE_SHAPE = BudgetProfile.uniform(n=30_000, low=0.5, high=2.0, rng=np.random.default_rng(5))


@pytest.mark.parametrize(("clone", "scales"), [("stronger", (6.0, 7.0, 8.0)),
                                               ("standard", (5.0, 6.0, 7.0))])
def test_clones_guide_is_sandwiched_by_the_bound(clone, scales):
    # the guide rounds budgets up by at most rho: bound(s) <= guide(s) <= bound(s (1 + rho))
    # (docs/theory.md, section 4); checks that the guide follows the registered bound
    from shuffledp.bounds.clones.guide import clones_guide as _clones_guide

    bound = shuffledp.get_bound("clones")
    g = _clones_guide(GUIDE_SHAPE, {"clone": clone}, 1.0, 1e-6, RTOL)
    assert g is not None and 0 < g.rho <= 0.75 * RTOL
    for s in scales:  # delta from about 1e-18 to 1e-4, above the bound's 1e-50 floor
        guide = g.delta(s)
        below = bound.delta(profile=GUIDE_SHAPE.scaled(s), eps=1.0, clone=clone)
        above = bound.delta(profile=GUIDE_SHAPE.scaled(s * (1 + g.rho)), eps=1.0, clone=clone)
        assert below * (1 - 1e-6) <= guide <= above * (1 + 1e-6)


def test_guided_search_matches_the_direct_one():
    kw = {"method": "clones", "profile": GUIDE_SHAPE, "eps": 1.0, "delta": 1e-6}
    guided = calibrate_scale(**kw, guide=True)
    direct = calibrate_scale(**kw, guide=False)
    assert guided.diagnostics["guide_evaluations"] > 0 and "guide_evaluations" not in (
        direct.diagnostics)
    assert guided.scale == pytest.approx(direct.scale, rel=RTOL)
    assert guided.evaluations < direct.evaluations
    bound = shuffledp.get_bound("clones")
    for c in (guided, direct):
        assert bound.delta(profile=c.profile, eps=1.0) <= 1e-6  # certified
        assert bound.delta(profile=GUIDE_SHAPE.scaled(c.scale * (1 + 2 * RTOL)), eps=1.0) > 1e-6
    with pytest.raises(TypeError, match="guide must be a bool"):
        calibrate_scale(**kw, guide="yes")


def test_no_guide_for_mechanism_aware_or_mixed_delta():
    from shuffledp.bounds.clones.guide import clones_guide as _clones_guide

    assert _clones_guide(GUIDE_SHAPE, {"mechanism": "laplace"}, 1.0, 1e-6, RTOL) is None
    mixed = BudgetProfile(eps=GUIDE_SHAPE.eps, delta=np.where(GUIDE_SHAPE.eps > 1, 1e-9, 0.0))
    assert _clones_guide(mixed, {}, 1.0, 1e-6, RTOL) is None


@requires("torch")
def test_record_is_shared_with_sgd():
    from shuffledp.sgd import accounting

    assert accounting.Calibration is Calibration
    c = calibrate_eps0(method="gdp", n=5000, eps=1.0, delta=1e-6)
    assert c.eps_achieved == c.bound_eps and c.rounds == 1
    assert set(c.as_row()) == {"method", "kind", "rounds", "target_eps", "delta",
                               "local_eps_scale", "eps_achieved", "local_eps_max",
                               "local_eps_mean", "capped"}
