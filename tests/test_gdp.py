"""GDP tools against mpmath at high precision (Dong, Roth, Su 2022, Cor. 2.13)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from shuffledp.gdp import compose_gdp, gdp_delta, gdp_eps, gdp_mu_from_eps_delta

MUS = [1e-4, 1e-3, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0]
DELTAS = [0.3, 1e-2, 1e-6, 1e-12, 1e-20, 1e-30]


def _delta_mp(eps: float, mu: float) -> mp.mpf:
    with mp.workdps(80):
        e, m = mp.mpf(eps), mp.mpf(mu)
        return mp.ncdf(-e / m + m / 2) - mp.e**e * mp.ncdf(-e / m - m / 2)


def _eps_mp(delta: float, mu: float) -> mp.mpf:
    with mp.workdps(80):
        m = mp.mpf(mu)
        f = lambda e: mp.ncdf(-e / m + m / 2) - mp.e**e * mp.ncdf(-e / m - m / 2) - delta  # noqa
        # bracket: delta(eps) <= Phi(mu/2 - eps/mu)
        hi = m * (m / 2 - mp.sqrt(2) * mp.erfinv(2 * mp.mpf(delta) - 1)) + 1
        return mp.findroot(f, (mp.mpf(0), hi), solver="bisect", tol=mp.mpf(10) ** -60, maxsteps=400)


@pytest.mark.parametrize("mu", MUS)
def test_delta_matches_mpmath(mu):
    # eps grid spanning delta from ~0.5 down to below 1e-30
    z = np.array([0.0, 0.5, 1.0, 2.0, 4.0, 7.0, 11.0])
    eps = np.maximum(mu * (mu / 2 + z), 0.0)
    got = gdp_delta(eps, mu)
    for e, g in zip(eps, got, strict=False):
        ref = float(_delta_mp(float(e), mu))
        if ref < 1e-300:
            continue
        assert abs(g / ref - 1) <= 1e-9, (mu, e, g, ref)


@pytest.mark.parametrize("mu", MUS)
@pytest.mark.parametrize("delta", DELTAS)
def test_eps_matches_mpmath(mu, delta):
    if float(_delta_mp(0.0, mu)) <= delta:
        assert gdp_eps(delta, mu) == 0.0
        return
    ref = float(_eps_mp(delta, mu))
    got = gdp_eps(delta, mu)
    assert abs(got / ref - 1) <= 1e-9, (mu, delta, got, ref)


def test_profile_is_decreasing_and_bounded():
    eps = np.linspace(0, 10, 200)
    d = gdp_delta(eps, 1.5)
    assert np.all(np.diff(d) <= 0) and d[0] <= 1 and d[-1] >= 0


def test_composition():
    assert compose_gdp([0.3]) == pytest.approx(0.3)
    assert compose_gdp([0.3] * 4) == pytest.approx(0.6)
    # composing can only lose privacy: more steps, larger eps
    assert gdp_eps(1e-6, compose_gdp([0.5] * 9)) > gdp_eps(1e-6, 0.5)


def test_mu_from_eps_delta_round_trip():
    mu = gdp_mu_from_eps_delta(1.0, 1e-6)
    assert math.isclose(float(gdp_delta(1.0, mu)), 1e-6, rel_tol=1e-8)
    assert float(gdp_delta(1.0, mu)) <= 1e-6


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: gdp_delta(1.0, 0.0), "mu must be finite and > 0, got 0.0"),
        (lambda: gdp_delta(-1.0, 1.0), "eps must be finite and >= 0"),
        (lambda: gdp_eps(0.0, 1.0), "delta must be in"),
        (lambda: gdp_eps(1e-6, float("nan")), "mu must be finite"),
        (lambda: compose_gdp([]), "at least one mu"),
        (
            lambda: compose_gdp([1.0, -1.0]),
            r"mus must be finite and > 0 \(every mu\), got mus\[1\] = -1.0",
        ),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
