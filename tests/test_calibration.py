"""Calibration of local budgets to a central target: toy bounds with known answers, safe side,
maximality, cap, floor, regime errors, and a contract over every registered bound."""

from __future__ import annotations

import math

import numpy as np
import pytest

import shuffledp
from shuffledp import BudgetProfile, ParameterRegimeError
from shuffledp.bounds import Bound, BoundInfo, register_bound, unregister_bound
from shuffledp.calibration import (
    Calibration,
    calibrate_eps0,
    calibrate_scale,
    local_only_scale,
)

RTOL = 1e-3
SHAPE = BudgetProfile.uniform(n=2000, low=0.5, high=2.0, rng=np.random.default_rng(0))


def _toy(name, eps_fn, kind="upper"):
    info = BoundInfo(
        name=name, kind=kind, title=name, citation="test", personalized=True, approx_ldp=True
    )
    return register_bound(Bound(info=info, eps_fn=eps_fn), replace=True)


@pytest.fixture
def toy_bounds():
    names = []

    def make(name, eps_fn, kind="upper"):
        names.append(name)
        return _toy(name, eps_fn, kind)

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
