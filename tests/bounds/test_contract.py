"""The contract every registered bound keeps (parametrised over ``shuffledp.list_bounds()``).

A bound added by any module is picked up automatically.  No test is skipped: each bound is
evaluated in the first regime of ``REGIMES`` where it applies, and a regime where it does not
apply must raise :class:`ParameterRegimeError` (asserted).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pytest

import shuffledp
from shuffledp import BudgetProfile, ParameterRegimeError, get_bound, register_bound
from shuffledp.bounds import KIND_LABELS, Bound, BoundInfo, BoundResult, unregister_bound
from shuffledp.cli import main

NAMES = shuffledp.list_bounds()
DELTA = 1e-6
#: (eps0, n values) tried in order; the first where the bound applies at every n is used.
#: The first one satisfies every published baseline's region (EFMRTT19: eps0 <= 1/2, n >= 1000).
REGIMES = [(0.5, (2_000, 4_000, 8_000)), (1.0, (20_000, 40_000, 80_000)),
           (2.0, (200, 400, 800))]
#: Relative slack for numerically inverted quantities.
RTOL = 1e-6


def _regime(name: str) -> tuple[float, tuple[int, ...], list[BoundResult]]:
    bound = get_bound(name)
    reasons = []
    for eps0, ns in REGIMES:
        try:
            results = [bound.evaluate(profile=BudgetProfile.identical(n=n, eps0=eps0),
                                      delta=DELTA) for n in ns]
        except ParameterRegimeError as err:
            assert str(err), f"{name}: ParameterRegimeError without a reason"
            reasons.append(str(err))
            continue
        return eps0, ns, results
    raise AssertionError(f"{name} applies in none of the contract regimes: {reasons}")


@pytest.fixture(scope="module")
def regimes() -> dict:
    return {}


def _get(regimes: dict, name: str):
    if name not in regimes:
        regimes[name] = _regime(name)
    return regimes[name]


@pytest.mark.parametrize("name", NAMES)
def test_metadata_and_result_record(name, regimes):
    bound = get_bound(name)
    info = bound.info
    assert info.name == name and info.kind in KIND_LABELS
    assert info.title and info.citation
    assert isinstance(info.personalized, bool) and isinstance(info.approx_ldp, bool)
    assert isinstance(info.randomizers, tuple) and info.randomizers
    assert isinstance(info.options, Mapping)
    _, ns, results = _get(regimes, name)
    for n, r in zip(ns, results, strict=True):
        assert isinstance(r, BoundResult)
        assert r.method == name and r.kind == info.kind and r.n == n
        assert math.isfinite(r.eps) and r.eps >= 0 and r.delta == DELTA
        assert r.seconds >= 0 and isinstance(r.diagnostics, Mapping)
        row = r.as_row()
        assert row["method"] == name and row["kind"] == info.kind


@pytest.mark.parametrize("name", NAMES)
def test_eps_never_above_the_largest_local_eps(name, regimes):
    # Claimed by every rigorous (upper) and exact (lower) bound: shuffling is post-processing of
    # the local reports, so the largest local eps_i always holds.  Approximations do not claim it.
    eps0, _, results = _get(regimes, name)
    if get_bound(name).info.kind == "approximate":
        assert all(math.isfinite(r.eps) and r.eps >= 0 for r in results)  # nothing more claimed
        return
    for r in results:
        assert r.eps <= eps0 * (1 + RTOL)


@pytest.mark.parametrize("name", NAMES)
def test_non_increasing_in_n(name, regimes):
    _, _, results = _get(regimes, name)
    eps = [r.eps for r in results]
    for a, b in zip(eps, eps[1:], strict=False):
        assert b <= a * (1 + RTOL) + 1e-9, eps


@pytest.mark.parametrize("name", NAMES)
def test_delta_of_eps_round_trip_on_the_safe_side(name, regimes):
    bound = get_bound(name)
    eps0, ns, results = _get(regimes, name)
    profile = BudgetProfile.identical(n=ns[0], eps0=eps0)
    d = bound.delta(profile=profile, eps=results[0].eps)
    if bound.info.kind == "upper":
        assert d <= DELTA * (1 + RTOL)
    elif bound.info.kind == "lower":
        assert d >= DELTA * (1 - RTOL)
    else:
        assert d == pytest.approx(DELTA, rel=1e-2)
    # eps(delta) is non-increasing in delta
    e_small = bound.eps(profile=profile, delta=DELTA / 10)
    e_large = bound.eps(profile=profile, delta=DELTA * 10)
    assert e_large <= results[0].eps * (1 + RTOL) + 1e-9
    assert results[0].eps <= e_small * (1 + RTOL) + 1e-9


@pytest.mark.parametrize("name", NAMES)
def test_bad_input_raises_value_error(name, regimes):
    bound = get_bound(name)
    eps0, ns, _ = _get(regimes, name)
    profile = BudgetProfile.identical(n=ns[0], eps0=eps0)
    for bad in (0.0, 1.0, 1.5, -1e-3, float("nan")):
        with pytest.raises(ValueError, match="delta must be in"):
            bound.eps(profile=profile, delta=bad)
    for bad in (-0.1, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="eps must be finite and >= 0"):
            bound.delta(profile=profile, eps=bad)
    with pytest.raises(ValueError, match="unknown option"):
        bound.eps(profile=profile, delta=DELTA, no_such_option=1)
    with pytest.raises(ValueError, match="exactly one of delta"):
        bound.evaluate(profile=profile)
    with pytest.raises(TypeError, match="profile must be a BudgetProfile"):
        bound.eps(profile=[eps0] * 10, delta=DELTA)


@pytest.mark.parametrize("name", NAMES)
def test_local_delta_outside_pure_only_bounds_raises(name, regimes):
    bound = get_bound(name)
    eps0, ns, _ = _get(regimes, name)
    profile = BudgetProfile.identical(n=ns[0], eps0=eps0, delta0=1e-12)
    if bound.info.approx_ldp:
        r = bound.evaluate(profile=profile, delta=DELTA)
        assert math.isfinite(r.eps) and r.eps >= 0
    else:
        with pytest.raises(ParameterRegimeError, match="pure LDP only"):
            bound.eps(profile=profile, delta=DELTA)


@pytest.mark.parametrize("name", NAMES)
def test_personalized_profile_within_the_budget_range(name, regimes):
    bound = get_bound(name)
    eps0, ns, _ = _get(regimes, name)
    rng = np.random.default_rng(11)
    profile = BudgetProfile.uniform(n=ns[0], low=eps0 / 2, high=eps0, rng=rng)
    if bound.info.kind == "lower" and not bound.info.personalized:
        # a lower bound may not be reduced to the worst user: it must refuse
        with pytest.raises(ParameterRegimeError, match="identical budgets only"):
            bound.evaluate(profile=profile, delta=DELTA)
        return
    r = bound.evaluate(profile=profile, delta=DELTA)
    if bound.info.kind != "approximate":
        assert r.eps <= profile.eps_max * (1 + RTOL)
    if not bound.info.personalized:
        assert r.diagnostics.get("reduced_to_identical") is True
        worst = BudgetProfile.identical(n=ns[0], eps0=profile.eps_max)
        assert r.eps == bound.eps(profile=worst, delta=DELTA)


# ----------------------------------------------------------------------------- registry + CLI
@pytest.fixture()
def toy_bound():
    name = "toy_contract"

    def delta_fn(*, profile: BudgetProfile, eps: float) -> float:
        return 0.0 if eps >= profile.eps_max else math.exp(-eps * profile.n)

    register_bound(Bound(
        info=BoundInfo(name=name, kind="upper", title="toy", citation="test only",
                       personalized=True, approx_ldp=False),
        delta_fn=delta_fn,
    ))
    try:
        yield name
    finally:
        unregister_bound(name)


def test_registered_toy_bound_flows_into_listing_and_cli(toy_bound, capsys):
    assert toy_bound in shuffledp.list_bounds()
    assert main(["list"]) == 0
    listing = capsys.readouterr().out
    assert any(line.split()[0] == toy_bound for line in listing.splitlines() if line.strip())
    assert main(["bound", "--n", "1000", "--eps0", "1", "--delta", "1e-6", "--method",
                 toy_bound, "--format", "csv"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].split(",")[:3] == ["method", "kind", "eps"]
    method, kind, eps = lines[1].split(",")[:3]
    assert method == toy_bound and kind == KIND_LABELS["upper"]
    assert float(eps) == pytest.approx(math.log(1e6) / 1000, rel=1e-6)


def test_toy_bound_is_gone_after_unregistering(toy_bound):
    unregister_bound(toy_bound)
    assert toy_bound not in shuffledp.list_bounds()
    with pytest.raises(ValueError, match="unknown bound 'toy_contract'"):
        get_bound(toy_bound)
    register_bound(Bound(  # restore, so the fixture's unregister succeeds
        info=BoundInfo(name=toy_bound, kind="upper", title="toy", citation="test only",
                       personalized=True, approx_ldp=False),
        delta_fn=lambda *, profile, eps: 1.0,
    ))
