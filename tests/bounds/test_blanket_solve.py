"""A victim group's solve for ``blanket`` (docs/theory.md 15.3 (N10)): what it returns is
certified and near the crossing, whatever guides its probes.

* ``_solve_group`` on bounds of the form ``floor + (1 - floor) A(x)`` (``floor`` the group's
  local delta, ``A`` decreasing and exactly 0 beyond a point, as the amplification sums of far
  probes are): the point returned has a value at most the target, and it lies within the
  solve's tolerance of the exact crossing, for a guide on ``log(fn - floor)`` and on ``log fn``
  alike.
* A probe's choices stop above ``PROBE_CAP`` times the target: a failing probe still fails,
  and any other value is at most the full evaluation's.
* Brent's method stops early at a certified point whose bound is within ``VALUE_RTOL`` of the
  target just above an uncertified point: fewer evaluations, the same guarantees.
* The guide never certifies a point: a bound that is above the target by one rounding, whose
  guide ``log(fn - floor)`` rounds to the target's, is not returned.
* ``blanket_eps`` with the far probes' early stop (``SOLVE_FAR``) and without it: the same eps
  within the solve's tolerance, and every victim group's bound at the returned eps at most
  delta (a full evaluation).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import shuffledp.bounds.blanket.bound as bb
from shuffledp import BudgetProfile, clear_caches, get_bound
from shuffledp.bounds.blanket.solve import _solve_group
from shuffledp.families import get_family

RTOL = 1e-6
ATOL = 1e-12


def _bound(floor: float, c: float, cut: float):
    """floor + (1 - floor) A(x), A(x) = exp(-c x^2) below ``cut``, 0 from ``cut`` on."""
    calls: list[float] = []

    def fn(x: float) -> float:
        calls.append(x)
        a = math.exp(-c * x * x) if x < cut else 0.0
        return floor + (1.0 - floor) * a

    return fn, calls


@pytest.mark.parametrize("floor", [0.0, 1e-8, 5e-7])
@pytest.mark.parametrize("c", [1e2, 1e5, 3e6])
@pytest.mark.parametrize("use_floor", [False, True])
def test_solve_returns_a_certified_point_near_the_crossing(floor, c, use_floor):
    target = 1e-6
    # the exact crossing of floor + (1 - floor) exp(-c x^2) = target
    root = math.sqrt(-math.log((target - floor) / (1.0 - floor)) / c)
    cut = 3.0 * root  # A = 0 beyond: a flat stretch at the floor, as at far probes
    fn, calls = _bound(floor, c, cut)
    x = _solve_group(fn, target, 0.0, 10.0 * root, RTOL, ATOL,
                     floor=floor if use_floor else 0.0)
    assert fn(x) <= target
    assert root * (1.0 - 1e-9) <= x <= root + 9.0 * max(ATOL, RTOL * root)
    assert len(set(calls)) <= 40


@pytest.mark.parametrize("ratio", [1.01, 1.3, 9.0])
def test_up_steps_skipped_far_below_the_crossing(ratio):
    """From another group's crossing ``a`` (``a > 0``), the up-steps are taken only when the
    value there is at most ``UP_SKIP`` times the target: with a value far above, the same
    certified point within the tolerance, and no probe in ``(a, 2.28 a]`` (the steps' range)
    when the crossing lies above it."""
    from shuffledp.bounds.blanket import solve as sv

    target, c = 1e-6, 1e4
    root = math.sqrt(-math.log(target) / c)
    a = root / ratio
    out = []
    for value_a in (None, 1e3 * sv.UP_SKIP * target):
        fn, calls = _bound(0.0, c, 3.0 * root)
        x = _solve_group(fn, target, a, 10.0 * root, RTOL, ATOL, value_a=value_a)
        assert fn(x) <= target
        assert root * (1.0 - 1e-9) <= x <= root + 9.0 * max(ATOL, RTOL * root)
        out.append(calls)
    steps = [a * (1.0 + sv.UP_STEP * 4.0 ** k) for k in range(sv.UP_PROBES)]
    assert steps[0] in out[0]  # the first step is always tried without a known value
    assert not any(x in out[1] for x in steps)
    if ratio > 2.28:
        assert len(set(out[1])) < len(set(out[0]))


@pytest.mark.parametrize("floor", [0.0, 1e-8])
def test_brent_stops_at_a_certified_point_close_to_the_target(floor, monkeypatch):
    """Brent's method stops at a certified point whose bound is within ``VALUE_RTOL`` of the
    target (of its distance to the floor) with an uncertified point within ``VALUE_NEAR``
    below it: over many crossings never more evaluations than without the stop, fewer on
    some, the point certified and as near the crossing as the tolerance asks.  On a plateau
    just below the target (a bound that barely falls past a jump) the point returned is at
    most ``VALUE_NEAR`` above the jump."""
    from shuffledp.bounds.blanket import solve as sv

    target, root = 1e-6, 0.37
    fewer = 0
    for slope in (5.0, 20.0, 80.0):
        for q in np.linspace(-3.0, 3.0, 25):
            # floor + (target - floor) exp(-slope t - q t^2), t = x / root - 1: the bound's
            # shape near a crossing, its curvature varied (where the interpolation lands)
            calls: list[float] = []

            def fn(x: float, slope=slope, q=q, calls=calls) -> float:
                calls.append(x)
                t = x / root - 1.0
                return min(1.0, floor + (target - floor) * math.exp(-slope * t - q * t * t))

            counts = []
            for stop in (True, False):
                monkeypatch.setattr(sv, "VALUE_RTOL", 1e-6 if stop else -1.0)
                calls.clear()
                x = _solve_group(fn, target, 0.0, 10.0 * root, RTOL, ATOL, floor=floor)
                assert fn(x) <= target
                assert root * (1.0 - 1e-9) <= x <= root + 9.0 * max(ATOL, RTOL * root)
                counts.append(len(set(calls)))
            assert counts[0] <= counts[1]
            fewer += counts[0] < counts[1]
    assert fewer >= 10, fewer  # (22 of the 75 measured)
    monkeypatch.setattr(sv, "VALUE_RTOL", 1e-6)
    jump = 0.01

    def plateau(x: float) -> float:
        return 1e-3 if x < jump else target * (1.0 - 1e-9 * (1.0 + x))

    x = _solve_group(plateau, target, 0.0, 1.0, RTOL, ATOL, floor=floor)
    assert plateau(x) <= target
    assert jump <= x <= jump * (1.0 + sv.VALUE_NEAR) + 9.0 * max(ATOL, RTOL * jump)


def test_a_bound_that_rises_again_near_the_top_is_still_solved():
    """A computed bound need not be monotone: rounding charges that grow like e^eps put it
    above the target near the group's largest budget, and the downward probes from there
    fail too.  The solve then searches up from its start and returns a certified point near
    the crossing, not the group's largest budget."""
    target, root, b = 1e-12, 0.0094, 50.0

    def fn(x: float) -> float:
        if x < root:
            return 1e-3 * (1.0 - x / root) + 2.0 * target
        return target * min(1.0, 1e-2 * math.exp(x) / math.exp(1.0)) if x < 6.0 else 1.0

    x = _solve_group(fn, target, 7.9e-5, b, RTOL, ATOL, value_a=fn(7.9e-5))
    assert fn(x) <= target
    assert root <= x <= root + 9.0 * max(ATOL, RTOL * root)


def test_the_upward_search_from_a_tiny_start_takes_few_probes():
    """A start far below the crossing (another group's crossing near 1e-95, where a victim of
    budget 1.6e-95 puts it) and a bound above the target near the group's largest budget: the
    upward search takes about ``UP_SEARCH_PROBES`` steps (it took 300 doublings, 36 s a solve
    on the Laplace profile (47.3, 0.0211, 1.6e-95) of the long soundness run) and still
    returns a certified point near the crossing; a bound above the target everywhere below
    ``b`` gives ``b``."""
    from shuffledp.bounds.blanket.solve import UP_SEARCH_PROBES

    target, root, b = 1e-6, 0.0094, 47.3
    calls: list[float] = []

    def fn(x: float) -> float:
        calls.append(x)
        if x < root:
            return 0.5
        return target / 2.0 if x < 6.0 else 1.0

    x = _solve_group(fn, target, 1.6e-95, b, RTOL, ATOL)
    assert fn(x) <= target
    assert root <= x <= root + 9.0 * max(ATOL, RTOL * root)
    assert len(calls) <= UP_SEARCH_PROBES + 60, len(calls)

    calls.clear()
    assert _solve_group(lambda x: calls.append(x) or 1.0, target, 1.6e-95, b, RTOL,
                        ATOL) == b
    assert len(calls) <= UP_SEARCH_PROBES + 8, len(calls)


def test_the_first_group_solved_searches_up_from_zero():
    """The first group solved starts from 0: a bound above the target near the group's top
    (rounding charges like e^eps) and at the first downward probe is searched upward from
    ``atol``, not given up (binary RR, 5,000 users at 0.5 and at 1 and five at 50, delta =
    1e-12: the solve returned 50, the victims' local budget, before; 0.155 now, every group
    at most delta there, at or above the certified lower bound)."""
    target, root, b = 1e-12, 0.02, 50.0

    def fn(x: float) -> float:
        if x < root:
            return 1e-3
        return target / 10.0 if x < 1.0 else 1.0

    x = _solve_group(fn, target, 0.0, b, RTOL, ATOL)
    assert fn(x) <= target
    assert root <= x <= root + 9.0 * max(ATOL, RTOL * root)

    prof = BudgetProfile.from_histogram([0.5, 1.0, 50.0], [5000, 5000, 5])
    clear_caches()
    eps = bb.blanket_eps(profile=prof, delta=1e-12, mechanism="binary_rr")
    assert eps < 0.5
    lower = get_bound("rr_exact").eps(profile=prof, delta=1e-12)  # (0.1356)
    assert eps >= lower * (1 - 1e-9), (eps, lower)
    family = get_family("binary_rr")
    groups, classes = bb.blanket_plan(prof, family)
    for gi in range(len(groups)):
        assert bb._group_value(family, groups, classes, gi, eps, 0.0) <= 1e-12


def test_blanket_certifies_a_budget_of_50_among_many():
    """Laplace users at eps 0.5 and 1 (10^5 each) and five at eps 50, delta = 1e-12: the
    eps-50 victims' computed bound is 1 just below 50 (its charges grow like e^eps), yet the
    blanket certifies an eps far below, at or above the certified lower bound, every group
    at most delta there (before, the solve returned 50: vacuous)."""
    prof = BudgetProfile.from_histogram([0.5, 1.0, 50.0], [100_000, 100_000, 5])
    clear_caches()
    eps = bb.blanket_eps(profile=prof, delta=1e-12, mechanism="laplace")
    assert eps < 0.5
    assert eps >= get_bound("tier_sum_lower").eps(profile=prof, delta=1e-12,
                                                  mechanism="laplace") * (1 - 1e-9)
    family = get_family("laplace")
    groups, classes = bb.blanket_plan(prof, family)
    for gi in range(len(groups)):
        assert bb._group_value(family, groups, classes, gi, eps, 0.0) <= 1e-12


@pytest.mark.parametrize("mech", ["gaussian", "laplace"])
def test_a_capped_probe_keeps_its_sign_and_stays_a_bound(mech):
    """A solve's probe stops each choice at a value above ``cap`` (``PROBE_CAP`` times the
    target's amplification sum): where the full group value is above cap the capped one is
    above cap too (the probe still fails), and elsewhere the capped value is at most the full
    one (the capped choices no longer prune the others, so it may take a better choice; any
    choice's value bounds the group, Theorem 6)."""
    rng = np.random.default_rng([20261207, 5])
    n = 3000
    eps_i = rng.uniform(0.5, 2.0, n)
    prof = (BudgetProfile.from_arrays(eps_i, np.full(n, 1e-8)) if mech == "gaussian"
            else BudgetProfile.from_arrays(eps_i))
    family = get_family(mech)
    clear_caches()
    groups, classes = bb.blanket_plan(prof, family)
    delta = 1e-6
    above = below = 0
    for gi in (0, len(groups) // 2, len(groups) - 1):
        d_v = groups[gi].delta_hi
        cap = 2.0 * (delta - d_v) / (1.0 - d_v)
        cap_delta = d_v + (1.0 - d_v) * cap
        for e in np.geomspace(0.02, 0.5, 9):
            full = bb._group_value(family, groups, classes, gi, float(e), delta, None, True)
            capped = bb._group_value(family, groups, classes, gi, float(e), delta, None, True,
                                     cap=cap)
            if full > cap_delta:
                above += 1
                assert capped > cap_delta
            else:
                below += 1
                assert capped <= full
    clear_caches()
    assert above > 0 and below > 0


def test_the_guide_never_certifies_a_point_above_the_target():
    """Just below the crossing the bound is the target plus one rounding: the guide's log of
    ``fn - floor`` there equals the target's in floating point, so a sign taken from the guide
    would certify it; the comparison ``fn <= target`` does not."""
    target, floor, root = 1e-6, 1e-8, 0.37
    above = math.nextafter(target, 1.0)
    assert math.log(above - floor) == math.log(target - floor)  # the guide cannot tell

    def fn(x: float) -> float:
        if x < root:
            return above if x > 0.9 * root else 0.5
        return target

    x = _solve_group(fn, target, 0.0, 1.0, RTOL, ATOL, floor=floor)
    assert x >= root
    assert fn(x) <= target


@pytest.mark.parametrize("mech,n", [("piecewise", 600), ("binary_rr", 800), ("gaussian", 400),
                                    ("laplace", 500)])
def test_far_probes_stop_early_and_change_nothing_but_time(mech, n, monkeypatch):
    rng = np.random.default_rng(11)
    eps_i = rng.uniform(0.5, 2.0, n)
    prof = (BudgetProfile(eps=eps_i, delta=np.full(n, 1e-8)) if mech == "gaussian"
            else BudgetProfile(eps=eps_i))
    got = []
    for far in (bb.SOLVE_FAR, 0.0):
        monkeypatch.setattr(bb, "SOLVE_FAR", far)
        clear_caches()
        got.append(bb.blanket_eps(profile=prof, delta=1e-6, mechanism=mech))
    clear_caches()
    early, full = got
    assert abs(early - full) <= 2e-6 * full
    # every group is certified at the returned eps by a full evaluation
    family = get_family(mech)
    groups, classes = bb.blanket_plan(prof, family)
    for gi in range(len(groups)):
        assert bb._group_value(family, groups, classes, gi, early, 0.0) <= 1e-6


# ------------------------------------------------------------------ the refined plan (N10)
def _clipped(n: int, seed: int = 3) -> BudgetProfile:
    """A clipped normal profile (mean 1.5, sd 0.5, [0.5, 2]): a sparse low tail whose
    equal-count victim group spans a wide budget ratio, as ``normal_1.5_0.5``."""
    rng = np.random.default_rng(seed)
    eps_i = np.clip(rng.normal(1.5, 0.5, n), 0.5, 2.0)
    return BudgetProfile(eps=eps_i, delta=np.full(n, 1e-8))


def test_refined_plan_splits_only_the_wide_groups():
    """Every coarse victim group is a union of consecutive refined groups; exactly the coarse
    groups spanning a budget ratio above NOISE_WIDE_RATIO are split, into at most
    NOISE_MAX_PIECES pieces, and the user classes cover every user once in both plans."""
    prof = _clipped(3000)
    family = get_family("gaussian")
    coarse, c_cls = bb.blanket_plan(prof, family)
    fine, f_cls = bb.blanket_plan(prof, family, refined=True)
    assert [g.start for g in fine][0] == 0 and fine[-1].stop == coarse[-1].stop
    assert all(a.stop == b.start for a, b in zip(fine[:-1], fine[1:], strict=True))
    split = 0
    for g in coarse:
        pieces = [f for f in fine if g.start <= f.start and f.stop <= g.stop]
        assert sum(f.stop - f.start for f in pieces) == g.stop - g.start
        if bb._wide(g):
            assert 2 <= len(pieces) <= bb.NOISE_MAX_PIECES
            split += 1
        else:
            assert len(pieces) == 1
    assert split >= 1
    assert int(c_cls.counts.sum()) == int(f_cls.counts.sum()) == prof.n


def test_refined_plan_only_lowers_the_bound_and_stays_above_the_lower_bound(monkeypatch):
    """``blanket`` on a profile whose deciding group is wide: the refined plan is taken (a
    smaller eps than the coarse plan alone), the value is the smaller of the two plans' own,
    delta at it is at most the target, and it stays above ``tier_sum_lower``."""
    prof = _clipped(3000)
    got = {}
    for wide in (0.0, bb.NOISE_WIDE_RATIO):
        monkeypatch.setattr(bb, "NOISE_WIDE_RATIO", wide)
        clear_caches()
        got[wide] = bb.blanket_eps(profile=prof, delta=1e-6, mechanism="gaussian")
    eps_c, eps_r = got[0.0], got[bb.NOISE_WIDE_RATIO]
    assert eps_r < 0.9 * eps_c
    family = get_family("gaussian")
    alone = bb._blanket_eps(prof, family, 1e-6, "gaussian", bb.VICTIM_GROUPS, True)[0]
    assert eps_r == min(eps_c, alone)
    assert bb.blanket_delta(profile=prof, eps=eps_r, mechanism="gaussian") <= 1e-6
    # delta(eps) takes the refined plan too: the coarse plan alone is above 1e-6 there
    monkeypatch.setattr(bb, "NOISE_WIDE_RATIO", 0.0)
    clear_caches()
    assert bb.blanket_delta(profile=prof, eps=eps_r, mechanism="gaussian") > 1e-6
    monkeypatch.undo()
    lower = get_bound("tier_sum_lower").eps(profile=prof, delta=1e-6, mechanism="gaussian")
    assert eps_r >= lower
    clear_caches()
