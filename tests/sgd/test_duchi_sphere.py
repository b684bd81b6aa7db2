"""The L2-ball Duchi randomizer on one sphere (``duchi_sphere``) and its per-tier accounting:
Lemma 16 and Theorem 8 of docs/theory.md 15.5 against exact enumerations, the randomizer by
simulation, ``tier_guarantees`` and ``calibrate_tiers``."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

pytest.importorskip("torch", reason="the SGD extra is not installed (pip install -e '.[sgd]')")
import torch
from scipy import special, stats

from shuffledp import BudgetProfile
from shuffledp.bounds import get_bound
from shuffledp.bounds.blanket.bound import _group_value, blanket_plan
from shuffledp.bounds.clones import clone_pair
from shuffledp.errors import ParameterRegimeError
from shuffledp.families import get_family
from shuffledp.numerics import hockey_stick
from shuffledp.sgd.accounting import (
    CROSS_TIER_PAIRS,
    VictimTier,
    calibrate_scale,
    round_clone_pair,
    rounds_epsilon,
    victim_tiers,
)
from shuffledp.sgd.randomizers import (
    DuchiRandomizer,
    DuchiSphereRandomizer,
    make_randomizer,
    reference_eps,
)
from shuffledp.sgd.tiers import calibrate_tiers, tier_guarantees
from shuffledp.sgd.train import private_mean_gradient

RNG_SEED = 20261205


# (a) Lemma 16: exact h(m) over the four regions ----------------------------------------------
def _h(values, probs, m: int) -> float:
    """E[(X_0 + ... + X_m)_+] / (m + 1) for i.i.d. X on ``values`` with ``probs``, by summing
    over the multinomial counts (independent of the bound's code)."""
    k = len(values)
    total = 0.0
    for counts in itertools.product(range(m + 2), repeat=k):
        if sum(counts) != m + 1:
            continue
        logp = math.lgamma(m + 2) + sum(
            c * math.log(p) - math.lgamma(c + 1) if p > 0 else (0.0 if c == 0 else -math.inf)
            for c, p in zip(counts, probs, strict=True))
        if logp == -math.inf:
            continue
        s = sum(c * v for c, v in zip(counts, values, strict=True))
        total += math.exp(logp) * max(s, 0.0)
    return total / (m + 1)


def _cap_law(pi: float, big_e: float, a: float):
    """Values and omega-masses of l = dC_u/d omega - E dC_w/d omega (regions B, N, u-only,
    w-only) for caps at the angle 360 a degrees."""
    values = [2 * pi * (1 - big_e), 2 * (1 - pi) * (1 - big_e), 2 * pi - 2 * big_e * (1 - pi),
              2 * (1 - pi) - 2 * big_e * pi]
    return values, [0.5 - a, 0.5 - a, a, a]


def test_lemma14_cap_pairs_below_the_antipodal_pair():
    rng = np.random.default_rng(RNG_SEED)
    worst = -math.inf
    for _ in range(120):
        pi = float(special.expit(rng.uniform(0.05, 4.0)))
        big_e = float(math.exp(rng.uniform(-0.5, 2.0)))
        a = float(rng.uniform(0.0, 0.5))
        m = int(rng.integers(0, 9))
        vals, probs = _cap_law(pi, big_e, a)
        anti_vals, anti_probs = _cap_law(pi, big_e, 0.5)
        h_pair, h_anti = _h(vals, probs, m), _h(anti_vals, anti_probs, m)
        # the antipodal law is binary RR's l (15.4)
        rr = [2 * (pi - big_e * (1 - pi)), 2 * ((1 - pi) - big_e * pi)]
        assert h_anti == pytest.approx(_h(rr, [0.5, 0.5], m), rel=1e-12, abs=1e-15)
        assert h_pair <= h_anti * (1 + 1e-12) + 1e-15
        worst = max(worst, h_pair - h_anti)
    assert worst <= 1e-15


def test_lemma14_holds_for_the_mixture_over_blanket_counts():
    # A = sum_m Pr[M = m] h(m) with a random Poisson-binomial pool
    rng = np.random.default_rng(RNG_SEED + 1)
    for _ in range(20):
        pi = float(special.expit(rng.uniform(0.2, 3.0)))
        big_e = float(math.exp(rng.uniform(0.0, 1.5)))
        gam = rng.uniform(0.05, 1.0, size=int(rng.integers(1, 6)))
        pm = np.array([1.0])
        for g in gam:
            pm = np.convolve(pm, [1 - g, g])
        a = float(rng.uniform(0.0, 0.5))
        vals, probs = _cap_law(pi, big_e, a)
        anti = _cap_law(pi, big_e, 0.5)
        big_a = sum(w * _h(vals, probs, m) for m, w in enumerate(pm))
        big_a_anti = sum(w * _h(*anti, m) for m, w in enumerate(pm))
        assert big_a <= big_a_anti * (1 + 1e-12) + 1e-15


# (b) Theorem 8 against the exact shuffled protocol (d = 2, axis directions) ----------------
def _quadrant_law(pi: float, angle: int, r: float) -> np.ndarray:
    """Law of the quadrant of a report (quadrant q = [90q, 90q + 90) degrees) for the input
    of norm r C along ``angle`` (a multiple of 90): the sign step, then the cap (docs/theory.md
    6.7); every cap of an axis direction is a union of two quadrants, and the report is
    uniform inside its quadrant, so the multiset of quadrants is sufficient."""
    def cap(direction: int) -> np.ndarray:
        facing = {direction // 90 % 4, (direction // 90 - 1) % 4}  # (-90, 90) around it
        return np.array([pi / 2 if q in facing else (1 - pi) / 2 for q in range(4)])
    a = 0.5 + r / 2
    return a * cap(angle) + (1 - a) * cap(angle + 180)


def _multiset_law(laws) -> dict:
    out = {(0, 0, 0, 0): 1.0}
    for law in laws:
        nxt: dict = {}
        for key, p in out.items():
            for q in range(4):
                k = list(key)
                k[q] += 1
                t = tuple(k)
                nxt[t] = nxt.get(t, 0.0) + p * law[q]
        out = nxt
    return out


def _exact_delta(others, victim0, victim1, eps: float) -> float:
    d0 = _multiset_law([*others, victim0])
    d1 = _multiset_law([*others, victim1])
    e = math.exp(eps)
    return sum(max(p - e * d1.get(k, 0.0), 0.0) for k, p in d0.items())


def test_theorem8_pair_is_above_the_exact_shuffled_round():
    rng = np.random.default_rng(RNG_SEED + 2)
    ratios = []
    for _ in range(60):
        n = int(rng.integers(2, 6))
        eps_users = np.round(rng.uniform(0.2, 3.0, size=n), 3)
        v = int(rng.integers(0, n))
        pis = special.expit(eps_users)
        others = [_quadrant_law(float(pis[j]), int(rng.integers(0, 4)) * 90,
                                float(rng.choice([1.0, rng.uniform(0, 1)])))
                  for j in range(n) if j != v]
        angle1 = int(rng.choice([90, 180, 270]))
        r0, r1 = (1.0, 1.0) if rng.uniform() < 0.7 else tuple(rng.uniform(0, 1, 2))
        v0 = _quadrant_law(float(pis[v]), 0, float(r0))
        v1 = _quadrant_law(float(pis[v]), angle1, float(r1))
        prof = BudgetProfile.from_arrays(eps_users)
        k = int(np.flatnonzero(prof.tiers.eps == eps_users[v])[0])
        p, q, tail = clone_pair(prof, clone="stronger", victim_tier=k)
        for eps in (0.0, 0.1, 0.3, 0.7, 1.5):
            exact = _exact_delta(others, v0, v1, eps)
            exact_rev = _exact_delta(others, v1, v0, eps)
            bound = hockey_stick(p, q, eps) + tail
            assert exact <= bound + 1e-12
            assert exact_rev <= bound + 1e-12
            if exact > 1e-3:
                ratios.append(bound / exact)
    assert ratios and min(ratios) >= 1.0 - 1e-9


# (c) the per-tier pair is the binary RR blanket per victim group --------------------------
def test_per_tier_pair_matches_the_binary_blanket_per_group():
    prof = BudgetProfile.from_histogram([0.5, 1.0, 2.0], [300, 200, 100])
    fam = get_family("binary_rr")
    groups, classes = blanket_plan(prof, fam, 3)
    assert [(g.start, g.stop) for g in groups] == [(0, 1), (1, 2), (2, 3)]
    for k in range(3):
        p, q, tail = clone_pair(prof, clone="stronger", victim_tier=k)
        for eps in (0.05, 0.1, 0.2, 0.4):
            pair = hockey_stick(p, q, eps) + tail
            blanket = _group_value(fam, groups, classes, k, eps, 0.0)
            # both compute the same blanket formula; each charges its own numerical error
            assert pair == pytest.approx(blanket, rel=0.02, abs=3e-9)


def test_victim_tier_argument_is_checked():
    prof = BudgetProfile.from_histogram([0.5, 1.0], [10, 10])
    with pytest.raises(ValueError, match=r"victim_tier must be in \[0, 1\].*got 2"):
        clone_pair(prof, clone="stronger", victim_tier=2)
    with pytest.raises(TypeError, match="victim_tier must be None or a tier index"):
        clone_pair(prof, clone="stronger", victim_tier=1.0)
    with pytest.raises(TypeError, match="victim_tier"):
        clone_pair(prof, clone="stronger", victim_tier=True)


def test_conservative_victim_bounds_every_tier():
    prof = BudgetProfile.from_histogram([0.3, 0.8, 1.6, 2.5], [50, 120, 80, 30])
    p, q, tail = round_clone_pair(VictimTier(int(prof.n), 2.5, 0.0, 0.0, 4, math.nan, prof, -1))
    for k in range(4):
        pk, qk, tk = round_clone_pair(VictimTier(1, 0.0, 0.0, 0.0, 1, math.nan, prof, k))
        for eps in (0.0, 0.2, 0.5, 1.0):
            assert hockey_stick(pk, qk, eps) + tk <= hockey_stick(p, q, eps) + tail + 1e-12


# (d) the randomizer -----------------------------------------------------------------------
def test_common_radius_and_weights():
    r = DuchiSphereRandomizer(clip=1.0)
    eps = np.array([0.5, 1.0, 2.0, 4.0])
    w = r.signal_weights(eps)
    assert w.mean() == pytest.approx(1.0, rel=1e-12)
    assert np.all(np.diff(w) > 0)
    ref = reference_eps(eps)
    assert math.tanh(ref / 2) == pytest.approx(np.tanh(eps / 2).mean(), rel=1e-12)
    # the common radius is the per-budget radius at the reference budget
    assert r.radius(eps=eps, d=5) == pytest.approx(
        float(DuchiRandomizer(clip=1.0).radius(eps=ref, d=5)), rel=1e-12)
    g = torch.Generator().manual_seed(RNG_SEED)
    out = r.randomize(torch.randn(4, 5, generator=g, dtype=torch.float64) * 0.1, eps=eps,
                      generator=g)
    assert torch.allclose(out.norm(dim=1), torch.full((4,), r.radius(eps=eps, d=5),
                                                      dtype=torch.float64))


def test_randomizer_is_unbiased_for_the_weighted_gradient():
    r = DuchiSphereRandomizer(clip=1.0)
    eps = np.array([0.4, 1.0, 2.5])
    x = torch.tensor([[0.6, 0.0, 0.0], [0.0, -1.0, 0.0], [0.3, 0.3, 0.3]],
                     dtype=torch.float64)
    reps = 60_000
    g = torch.Generator().manual_seed(RNG_SEED + 3)
    out = r.randomize(x.repeat(reps, 1), eps=np.tile(eps, reps), generator=g)
    mean = out.reshape(reps, 3, 3).mean(dim=0).numpy()
    want = r.signal_weights(eps)[:, None] * x.numpy()
    se = r.radius(eps=eps, d=3) / math.sqrt(reps)  # each coordinate's sd is at most B0
    assert np.all(np.abs(mean - want) <= 5 * se)


def test_hemisphere_probability_is_pi():
    r = DuchiSphereRandomizer(clip=1.0)
    eps = np.array([0.5, 2.0])
    x = torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]], dtype=torch.float64)
    reps = 40_000
    g = torch.Generator().manual_seed(RNG_SEED + 4)
    out = r.randomize(x.repeat(reps, 1), eps=np.tile(eps, reps), generator=g)
    facing = ((out.reshape(reps, 2, 4) * x).sum(dim=2) > 0).double().mean(dim=0).numpy()
    pi = special.expit(eps)
    assert np.all(np.abs(facing - pi) <= 5 * np.sqrt(pi * (1 - pi) / reps))


def test_chunked_rounds_use_the_radius_of_the_whole_round():
    model = torch.nn.Linear(3, 2)
    x = torch.randn(6, 3, generator=torch.Generator().manual_seed(1))
    y = torch.tensor([0, 1, 0, 1, 1, 0])
    eps = np.array([0.5, 0.5, 1.0, 1.0, 3.0, 3.0])
    r = make_randomizer("duchi_sphere", clip=1.0)
    seen = []
    real = DuchiSphereRandomizer.randomize

    def spy(self, g, **kw):
        out = real(self, g, **kw)
        seen.append(out.norm(dim=1))
        return out

    DuchiSphereRandomizer.randomize = spy
    try:
        private_mean_gradient(model, x, y, clip=1.0, randomizer=r, eps=eps, delta=np.zeros(6),
                              generator=torch.Generator().manual_seed(2), chunk=2)
    finally:
        DuchiSphereRandomizer.randomize = real
    norms = torch.cat(seen)
    assert len(seen) == 3
    assert torch.allclose(norms, torch.full_like(norms, r.radius(eps=eps, d=8)), rtol=1e-5)


def test_randomizer_rejects_bad_budgets():
    r = DuchiSphereRandomizer(clip=1.0)
    g = torch.Generator().manual_seed(0)
    with pytest.raises(ValueError, match="duchi_sphere randomizer, got 0.0"):
        r.randomize(torch.zeros(2, 2), eps=[0.0, 1.0], generator=g)
    with pytest.raises(ValueError, match="duchi_sphere randomizer, got nan"):
        reference_eps([1.0, float("nan")])
    with pytest.raises(ValueError, match="duchi_sphere randomizer"):
        reference_eps([])


# (e) per-tier accounting and calibration --------------------------------------------------
PROFILE = BudgetProfile.from_histogram([0.4, 0.8, 1.6], [400, 300, 100])


def test_cross_tier_amplification_beats_tier_pools():
    sphere = tier_guarantees(method="clones", profile=PROFILE, rounds=20, delta=1e-5,
                             randomizer="duchi_sphere")
    pools = tier_guarantees(method="clones", profile=PROFILE, rounds=20, delta=1e-5,
                            randomizer="duchi")
    local = tier_guarantees(method="local", profile=PROFILE, rounds=20, delta=1e-5,
                            randomizer="duchi_sphere")
    assert [g.n for g in sphere] == [400, 300, 100]
    for s, p, lo in zip(sphere, pools, local, strict=True):
        assert s.eps < p.eps <= lo.eps * (1 + 1e-9)
    assert sphere[0].eps < sphere[1].eps < sphere[2].eps
    # the guarantee for everyone is the largest tier's
    whole = rounds_epsilon(method="clones", profile=PROFILE, rounds=20, delta=1e-5,
                           randomizer="duchi_sphere")
    assert whole == pytest.approx(max(g.eps for g in sphere), rel=1e-9)


def test_clone_option_does_not_change_the_cross_tier_pair():
    # duchi_sphere's pair is its blanket pair (Theorem 8) whatever the clone option says
    a = rounds_epsilon(method="clones", profile=PROFILE, rounds=3, delta=1e-5,
                       randomizer="duchi_sphere", clone="standard")
    b = rounds_epsilon(method="clones", profile=PROFILE, rounds=3, delta=1e-5,
                       randomizer="duchi_sphere", clone="stronger")
    assert a == b
    with pytest.raises(ParameterRegimeError, match="randomized response only"):
        rounds_epsilon(method="clones", profile=PROFILE, rounds=3, delta=1e-5,
                       randomizer="duchi", clone="stronger")


def test_victim_tiers_of_a_cross_tier_randomizer():
    tiers = victim_tiers(PROFILE, "duchi_sphere")
    assert [(t.n, t.eps, t.index) for t in tiers] == [(400, 0.4, 0), (300, 0.8, 1),
                                                      (100, 1.6, 2)]
    many = BudgetProfile.from_arrays(np.linspace(0.5, 2.0, CROSS_TIER_PAIRS + 1))
    (one,) = victim_tiers(many, "duchi_sphere")
    assert one.index == -1 and one.eps == 2.0 and one.tiers == CROSS_TIER_PAIRS + 1
    with pytest.raises(ParameterRegimeError, match="at most 64 budget tiers"):
        tier_guarantees(method="clones", profile=many, rounds=2, delta=1e-5,
                        randomizer="duchi_sphere")


def test_calibrate_tiers_meets_every_target():
    targets = [0.5, 1.0, 2.0]
    cal, tiers = calibrate_tiers(method="clones", base=PROFILE, rounds=3, targets=targets,
                                 delta=1e-5, randomizer="duchi_sphere")
    assert [g.eps <= t for g, t in zip(tiers, targets, strict=True)] == [True] * 3
    assert cal.bound_delta <= 1e-5 and cal.target_eps == 2.0
    assert cal.diagnostics["tier_targets"] == targets
    # recomputed independently at the returned scale
    again = tier_guarantees(method="clones", profile=cal.profile, rounds=3, delta=1e-5,
                            randomizer="duchi_sphere")
    assert all(g.eps <= t * (1 + 1e-9) for g, t in zip(again, targets, strict=True))
    # a slightly larger scale misses some target (the search is tight to rtol)
    bigger = tier_guarantees(method="clones", profile=cal.profile.scaled(1.02), rounds=3,
                             delta=1e-5, randomizer="duchi_sphere")
    assert any(g.eps > t for g, t in zip(bigger, targets, strict=True))
    # with every target equal it is the worst-victim calibration
    one = calibrate_scale(method="clones", base=PROFILE, rounds=3, eps=1.0, delta=1e-5,
                          randomizer="duchi_sphere")
    cal1, _ = calibrate_tiers(method="clones", base=PROFILE, rounds=3, targets=[1.0] * 3,
                              delta=1e-5, randomizer="duchi_sphere", refine=False)
    assert cal1.scale == pytest.approx(one.scale, rel=5e-3)


@pytest.mark.parametrize(("targets", "err", "match"), [
    ([1.0, 2.0], ValueError, r"targets must have one central eps per budget level of base \(3\)"),
    ([1.0, 0.0, 2.0], ValueError, r"targets\[1\] must be finite and > 0, got 0.0"),
    ([1.0, float("nan"), 2.0], ValueError, r"targets\[1\]"),
    ("abc", TypeError, "targets"),
])
def test_calibrate_tiers_rejects_bad_targets(targets, err, match):
    with pytest.raises(err, match=match):
        calibrate_tiers(method="clones", base=PROFILE, rounds=2, targets=targets, delta=1e-5,
                        randomizer="duchi_sphere")


def test_binomial_pair_law_matches_theorem8_statement():
    # the pair (M, K_b): K_0 = Bin(M, 1/2) + Bern(pi_v) under x^0
    prof = BudgetProfile.from_histogram([1.0, 2.0], [3, 2])
    p, q, tail = clone_pair(prof, clone="stronger", victim_tier=1, tol=0.0)
    gam = special.expit(-np.array([1.0, 1.0, 1.0, 2.0])) * 2
    pm = np.array([1.0])
    for g in gam:
        pm = np.convolve(pm, [1 - g, g])
    pi_v = float(special.expit(2.0))
    want_p, want_q = [], []
    for m, wm in enumerate(pm):
        for k in range(m + 2):
            b = stats.binom.pmf(k, m, 0.5), stats.binom.pmf(k - 1, m, 0.5)
            want_p.append(wm * ((1 - pi_v) * b[0] + pi_v * b[1]))
            want_q.append(wm * (pi_v * b[0] + (1 - pi_v) * b[1]))
    for eps in (0.0, 0.3, 1.0):
        assert hockey_stick(p, q, eps) == pytest.approx(
            hockey_stick(np.array(want_p), np.array(want_q), eps), rel=1e-9, abs=1e-12)
    assert tail <= 2e-9


def test_one_round_is_near_the_binary_rr_lower_bound():
    # docs/theory.md 15.5, "One round against a certified lower bound": the signs of the
    # reports along u are shuffled binary RR with the same budgets (others at 0), so
    # window_lower(binary_rr) is a certified lower bound of one round; the per-tier pairs'
    # maximum is the upper bound.  Compared in eps at delta = 1e-6 (bisection on the pairs).
    prof = BudgetProfile.from_histogram([0.5, 1.0, 2.0], [300, 200, 100])
    pairs = [clone_pair(prof, clone="stronger", victim_tier=k) for k in range(3)]

    def upper_delta(eps):
        return max(hockey_stick(p, q, eps) + tail for p, q, tail in pairs)

    lo, hi = 0.0, 2.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if upper_delta(mid) > 1e-6 else (lo, mid)
    upper = hi
    low = get_bound("window_lower").eps(profile=prof, delta=1e-6, mechanism="binary_rr")
    assert 0.0 < low <= upper <= 1.15 * low, (low, upper)  # measured: 0.2824, 0.317
    for eps in (0.05, 0.1, 0.2):
        assert get_bound("window_lower").delta(profile=prof, eps=eps,
                                               mechanism="binary_rr") <= upper_delta(eps)
