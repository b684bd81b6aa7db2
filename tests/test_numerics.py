"""The shared monotone inversion and log-space helpers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffledp.numerics import (
    delta_from_eps,
    eps_from_delta,
    hockey_stick,
    invert_monotone,
    log_sub_exp,
)


def test_inversion_sides_bracket_the_root():
    f = lambda x: math.exp(-x)  # noqa: E731
    up = invert_monotone(f, 1e-3, lo=0.0, hi=1.0, side="upper", rtol=1e-6)
    lo = invert_monotone(f, 1e-3, lo=0.0, hi=1.0, side="lower", rtol=1e-6)
    root = math.log(1e3)
    assert lo <= root <= up
    assert f(up) <= 1e-3 < f(lo)
    assert up - lo <= 1e-6 * up + 1e-12


def test_increasing_function_and_log_space():
    g = lambda x: x**2  # noqa: E731
    x = invert_monotone(
        g, 1e-20, lo=1e-30, hi=1.0, decreasing=False, log_space=True, rtol=1e-12, atol=0.0
    )
    assert math.isclose(x, 1e-10, rel_tol=1e-10)
    assert g(x) >= 1e-20  # "upper": the crossing has been reached


def test_eps_from_delta_returns_zero_when_already_below():
    assert eps_from_delta(lambda e: 1e-9, 1e-6) == 0.0


def test_eps_from_delta_expands_bracket():
    e = eps_from_delta(lambda e: math.exp(-e), 1e-200, eps_hi=1.0)
    assert math.isclose(e, 200 * math.log(10), rel_tol=1e-9)


def test_delta_from_eps_round_trip():
    eps_fn = lambda d: math.sqrt(math.log(1.0 / d))  # noqa: E731
    d = delta_from_eps(eps_fn, 3.0)
    assert eps_fn(d) <= 3.0
    assert math.isclose(d, math.exp(-9.0), rel_tol=1e-8)


def test_hockey_stick_reference_and_overflow():
    p = np.array([0.2, 0.3, 0.5])
    q = np.array([0.5, 0.3, 0.2])
    # by hand: eps = log 2 -> max(0.2-1,0)+max(0.3-0.6,0)+max(0.5-0.4,0) = 0.1
    assert math.isclose(hockey_stick(p, q, math.log(2.0)), 0.1, rel_tol=1e-12)
    assert hockey_stick(p, q, 800.0) == 0.0
    assert hockey_stick(p, np.array([0.0, 0.5, 0.5]), 800.0) == pytest.approx(0.2)


def test_log_sub_exp():
    assert math.isclose(float(log_sub_exp(math.log(3.0), math.log(1.0))), math.log(2.0))
    assert float(log_sub_exp(1.0, 1.0)) == -math.inf


def test_bad_inversion_input():
    with pytest.raises(ValueError, match="delta must be in"):
        eps_from_delta(lambda e: 0.0, 0.0)
    with pytest.raises(ValueError, match="no solution below"):
        eps_from_delta(lambda e: 0.5, 1e-6, eps_max=10.0)
    with pytest.raises(ValueError, match="side must be"):
        invert_monotone(lambda x: -x, -0.5, lo=0.0, hi=1.0, side="middle")  # type: ignore
    with pytest.raises(ValueError, match="lo must be > 0"):
        invert_monotone(lambda x: -x, -0.5, lo=0.0, hi=1.0, log_space=True)
