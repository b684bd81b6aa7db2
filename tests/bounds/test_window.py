"""Tests of the certified lower bound ``window_lower`` (shuffledp.bounds.window).

The references are computed here independently of the engine: brute-force enumeration of the
three cells for tiny n, finer post-processings (many bins, exact law of the multiset of bins)
built from the mechanisms' CDFs, closed-form binomial laws for randomized response, and the
registered rigorous upper bounds that cover the mechanism.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import defaultdict

import numpy as np
import pytest
from scipy import stats
from scipy.special import ndtr

from shuffledp import BudgetProfile, clear_caches, get_bound
from shuffledp.bounds import list_bounds
from shuffledp.bounds.window import (
    _victim_tiers,
    cell_masses,
    window_lower_delta,
    window_pairs,
)
from shuffledp.errors import ParameterRegimeError
from shuffledp.families import get_family
from shuffledp.hockey_stick import prepared_delta
from shuffledp.mechanisms.mean import analytic_gaussian_sigma

BOUND = get_bound("window_lower")

MECHANISMS = ["laplace", "piecewise", "gaussian", "duchi", "binary_rr", "krr:3", "krr:5"]
CONTINUOUS = ["laplace", "piecewise", "gaussian"]
EPS_GRID = (0.0, 0.1, 0.5, 1.0, 2.0)



def _victims(e_arr, d_arr):
    """The candidate victims as user indices (the first user of each selected budget tier)."""
    prof = BudgetProfile.from_arrays(e_arr, d_arr)
    t = prof.tiers
    return sorted(int(np.flatnonzero((e_arr == t.eps[k]) & (d_arr == t.delta[k]))[0])
                  for k in _victim_tiers(t.counts, prof.n))


# ----------------------------------------------------------------------------- helpers
def _profile(eps, mechanism, gauss_delta=1e-6):
    eps = np.asarray(eps, dtype=np.float64)
    delta = gauss_delta if mechanism == "gaussian" else 0.0
    return BudgetProfile.from_arrays(eps, delta=delta)


def _hockey(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    """Exact delta(eps) of a pair of laws on one finite set, both directions."""
    e = math.exp(eps)
    return float(max(np.maximum(p - e * q, 0.0).sum(), np.maximum(q - e * p, 0.0).sum()))


def _law_from_dict(dp: dict, dq: dict) -> tuple[np.ndarray, np.ndarray]:
    keys = sorted(set(dp) | set(dq))
    return (np.array([dp.get(k, 0.0) for k in keys]), np.array([dq.get(k, 0.0) for k in keys]))


def _masses3(fam, x, eps_j, delta_j, window):
    a, o, b, *_ = cell_masses(fam, x, np.array([eps_j]), np.array([delta_j]), window)
    return np.array([float(a[0]), float(o[0]), float(b[0])])


def _brute_pair(fam, eps, delta, v, cfg):
    """Exact laws of S = lam_R N_R - lam_L N_L, victim v at x0 (P) and x1 (Q), the others at
    x*, by enumeration of the 3^n cell assignments."""
    n = eps.size
    rows = []
    for j in range(n):
        if j == v:
            rows.append(None)
        else:
            rows.append(_masses3(fam, cfg.x_star, eps[j], delta[j], cfg.window))
    vic = {x: _masses3(fam, x, eps[v], delta[v], cfg.window) for x in (cfg.x0, cfg.x1)}
    lam_l, lam_r = cfg.lam
    score_of = (-lam_l, 0, lam_r)
    out = []
    for x in (cfg.x0, cfg.x1):
        law: dict[int, float] = defaultdict(float)
        for cells in itertools.product(range(3), repeat=n):
            prob = 1.0
            for j, c in enumerate(cells):
                prob *= (vic[x] if j == v else rows[j])[c]
            law[sum(score_of[c] for c in cells)] += prob
        out.append(dict(law))
    return _law_from_dict(*out)


def _configs(fam, eps, delta, v):
    """The grid of victim ``v``: the family's windows and those of the others' budgets."""
    key = (float(eps[v]), float(delta[v]))
    return fam.window_configs(*key) + fam.profile_windows(*key, np.delete(eps, v))


# ----------------------------------------------------------------------------- 1. brute force
@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("n", [2, 3, 4])
def test_engine_matches_bruteforce(mechanism, n):
    rng = np.random.default_rng(1000 * n + MECHANISMS.index(mechanism))
    eps = rng.uniform(0.2, 3.0, size=n)
    prof = _profile(eps, mechanism)
    fam = get_family(mechanism)
    e_arr = np.asarray(prof.eps, dtype=np.float64)
    d_arr = np.asarray(prof.delta, dtype=np.float64) * np.ones_like(e_arr)
    brute_pairs = {}
    for v in _victims(e_arr, d_arr):
        for cfg in _configs(fam, e_arr, d_arr, v):
            label = f"victim eps={e_arr[v]:g} {cfg.label}"
            assert label not in brute_pairs
            brute_pairs[label] = _brute_pair(fam, e_arr, d_arr, v, cfg)
    assert brute_pairs
    # pair by pair (a wrong configuration cannot hide behind the maximum)
    engine = {pr.label: pr for pr in window_pairs(prof, mechanism)}
    assert set(engine) == set(brute_pairs)
    for e in EPS_GRID:
        for label, (p, q) in brute_pairs.items():
            ref = _hockey(p, q, e)
            val = prepared_delta(engine[label], e)
            assert ref - 1e-9 <= val <= ref + 1e-12, (mechanism, n, e, label, val, ref)
        brute = max(_hockey(p, q, e) for p, q in brute_pairs.values())
        got = window_lower_delta(profile=prof, eps=e, mechanism=mechanism)
        assert got <= brute + 1e-12, (mechanism, n, e, got, brute)
        assert got >= brute - 1e-9, (mechanism, n, e, got, brute)


def _direct_pairs(fam, e_arr, d_arr):
    """Per label, the laws of the score sum by plain user-by-user np.convolve (offset
    -sum lam_L), the victim at x0 (P) and x1 (Q), every other user at x*."""
    out = {}
    n = e_arr.size
    for v in _victims(e_arr, d_arr):
        for cfg in _configs(fam, e_arr, d_arr, v):
            lam_l, lam_r = cfg.lam

            def kernels(x, cfg=cfg, lam_l=lam_l, lam_r=lam_r):  # one row per user
                a, o, b, *_ = cell_masses(fam, x, e_arr, d_arr, cfg.window)
                k = np.zeros((n, lam_l + lam_r + 1))
                k[:, 0], k[:, lam_l], k[:, -1] = a, o, b
                return k

            others = kernels(cfg.x_star)
            f = np.ones(1)
            for j in range(n):
                if j != v:
                    f = np.convolve(f, others[j])
            out[f"victim eps={e_arr[v]:g} {cfg.label}"] = tuple(
                np.convolve(f, kernels(x)[v]) for x in (cfg.x0, cfg.x1))
    return out


@pytest.mark.parametrize("mechanism", ["laplace", "piecewise", "gaussian", "krr:5", "duchi"])
@pytest.mark.parametrize("kind", ["three_tiers", "many_distinct"])
def test_engine_matches_direct_convolution(mechanism, kind):
    # moderate n: tiers summed by convolution powers (three tiers) or, above 64 distinct
    # budgets, the batched tree; compared pair by pair with a plain convolution loop
    if kind == "three_tiers":
        eps = np.array([2.0] * 20 + [0.7] * 30 + [1.5] * 10)
    else:
        eps = np.random.default_rng(5).uniform(0.3, 2.5, size=120)
    prof = _profile(eps, mechanism)
    fam = get_family(mechanism)
    e_arr = np.asarray(prof.eps, dtype=np.float64)
    d_arr = np.asarray(prof.delta, dtype=np.float64) * np.ones_like(e_arr)
    ref = _direct_pairs(fam, e_arr, d_arr)
    engine = {pr.label: pr for pr in window_pairs(prof, mechanism)}
    assert set(engine) == set(ref)
    for e in EPS_GRID:
        for label, (p, q) in ref.items():
            r = _hockey(p, q, e)
            val = prepared_delta(engine[label], e)
            assert r - 1e-9 <= val <= r + 1e-12, (mechanism, kind, e, label, val, r)


def test_victims_selection():
    # at most three distinct (eps, delta): one index per distinct budget (its first user)
    eps = np.array([1.0, 2.0, 1.0, 3.0, 2.0])
    assert _victims(eps, np.zeros(5)) == [0, 1, 3]
    # the Gaussian's delta_i distinguishes budgets too
    assert _victims(np.ones(3), np.array([1e-6, 1e-7, 1e-6])) == [0, 1]
    # more: the largest, the smallest and a median budget
    eps = np.array([0.7, 3.0, 0.2, 1.1, 2.0])
    assert _victims(eps, np.zeros(5)) == [1, 2, 3]


def test_bruteforce_identical_budgets_single_victim():
    # identical budgets: one candidate victim, and the other users form one tier
    prof = BudgetProfile.identical(n=4, eps0=1.3)
    fam = get_family("laplace")
    e_arr = np.full(4, 1.3)
    d_arr = np.zeros(4)
    assert _victims(e_arr, d_arr) == [0]
    pairs = [_brute_pair(fam, e_arr, d_arr, 0, cfg) for cfg in fam.window_configs(1.3, 0.0)]
    for e in EPS_GRID:
        brute = max(_hockey(p, q, e) for p, q in pairs)
        got = window_lower_delta(profile=prof, eps=e, mechanism="laplace")
        assert brute - 1e-9 <= got <= brute + 1e-12


# ----------------------------------------------------------------------------- 2. finer bins
def _bin_masses(mechanism: str, x: float, eps: float, delta: float,
                edges: np.ndarray) -> np.ndarray:
    """Exact masses of the bins [edges[i], edges[i+1]] under R(x) with budget eps (own CDFs)."""
    lo, hi = edges[:-1], edges[1:]
    if mechanism == "laplace":
        b = 2.0 / eps

        def cdf(t):
            z = (t - x) / b
            with np.errstate(over="ignore"):
                return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0.0)),
                                1.0 - 0.5 * np.exp(-np.maximum(z, 0.0)))

        def sf(t):
            z = (t - x) / b
            with np.errstate(over="ignore"):
                return np.where(z > 0, 0.5 * np.exp(-np.maximum(z, 0.0)),
                                1.0 - 0.5 * np.exp(np.minimum(z, 0.0)))

        # right of x use survival differences, left of x CDF differences (no cancellation)
        left = cdf(hi) - cdf(lo)
        right = sf(lo) - sf(hi)
        m = np.where(lo >= x, right, np.where(hi <= x, left, 1.0 - cdf(lo) - sf(hi)))
    elif mechanism == "gaussian":
        s = float(analytic_gaussian_sigma(np.array([eps]), np.array([delta]))[0])
        zl, zh = (lo - x) / s, (hi - x) / s
        m = np.where(lo >= x, ndtr(-zl) - ndtr(-zh), ndtr(zh) - ndtr(zl))
    else:  # piecewise, from Wang et al.'s definition (PiecewiseMechanism docstring)
        t = math.exp(eps / 2.0)
        c = (t + 1.0) / (t - 1.0)
        p = (math.exp(eps) - t) / (2.0 * t + 2.0)
        left_end = (c + 1.0) / 2.0 * x - (c - 1.0) / 2.0
        right_end = left_end + c - 1.0

        def overlap(a, b):
            return np.maximum(np.minimum(hi, b) - np.maximum(lo, a), 0.0)

        m = (p * overlap(left_end, right_end)
             + p * math.exp(-eps) * (overlap(-c, left_end) + overlap(right_end, c)))
    return np.maximum(m, 0.0)


def _multiset_law(rows: list[np.ndarray]) -> np.ndarray:
    """Law of the multiset (sorted tuple) of bins of independent reports, as a dense vector
    indexed by the sorted tuple (all vectors of one call share the indexing)."""
    nb = rows[0].size
    n = len(rows)
    grids = np.meshgrid(*[np.arange(nb)] * n, indexing="ij")
    idx = np.stack([g.ravel() for g in grids], axis=1)
    prob = np.ones(idx.shape[0])
    for j, r in enumerate(rows):
        prob *= r[idx[:, j]]
    key = np.sort(idx, axis=1) @ (nb ** np.arange(n))
    return np.bincount(key, weights=prob, minlength=nb**n)


def _edges(mechanism, eps, delta, fam, victims, extra):
    edges = {-math.inf, math.inf}
    for v in victims:
        for cfg in _configs(fam, eps, delta, v):
            w = cfg.window
            edges |= {w.lo, w.hi, -w.hi, -w.lo}
    edges |= set(float(t) for t in extra)
    return np.array(sorted(edges))


@pytest.mark.parametrize("mechanism", CONTINUOUS)
@pytest.mark.parametrize("n", [2, 3])
def test_never_exceeds_finer_binning(mechanism, n):
    rng = np.random.default_rng(77 + 10 * n + CONTINUOUS.index(mechanism))
    eps = np.sort(rng.uniform(0.3, 3.0, size=n))
    prof = _profile(eps, mechanism)
    fam = get_family(mechanism)
    e_arr = np.asarray(prof.eps, dtype=np.float64)
    d_arr = np.asarray(prof.delta, dtype=np.float64) * np.ones_like(e_arr)
    victims = _victims(e_arr, d_arr)
    if mechanism == "piecewise":
        reach = float(max((math.exp(e / 2) + 1) / (math.exp(e / 2) - 1) for e in eps))
    elif mechanism == "laplace":
        reach = 1.0 + 8.0 / float(eps.min())
    else:
        reach = 1.0 + 6.0 * float(analytic_gaussian_sigma(e_arr, d_arr).max())
    n_grid = 60 if n == 2 else 36
    edges = _edges(mechanism, e_arr, d_arr, fam, victims, np.linspace(-reach, reach, n_grid))
    assert edges.size <= 110
    pairs = window_pairs(prof, mechanism)
    strictly_larger = False
    for v in victims:
        tag = f"victim eps={e_arr[v]:g} "
        stars = sorted({c.x_star for c in _configs(fam, e_arr, d_arr, v)})
        for x_star in stars:
            group = [pr for pr in pairs if pr.label.startswith(tag + f"x*={x_star:g} ")]
            assert group, (tag, x_star)
            others = [_bin_masses(mechanism, x_star, e_arr[j], d_arr[j], edges)
                      for j in range(n) if j != v]
            for r in others:
                assert abs(r.sum() - 1.0) < 1e-12
            laws = []
            for x in (-1.0, 1.0):
                vic = _bin_masses(mechanism, x, e_arr[v], d_arr[v], edges)
                laws.append(_multiset_law([vic] + others))
            for e in (0.0, 0.25, 0.5, 1.0, 2.0):
                fine = _hockey(laws[0], laws[1], e)
                win = max(prepared_delta(pr, e) for pr in group)
                assert win <= fine + 1e-12, (mechanism, n, e, float(e_arr[v]), x_star, win, fine)
                if fine > win + 1e-6:
                    strictly_larger = True
    assert strictly_larger


@pytest.mark.parametrize("mechanism", CONTINUOUS)
def test_cell_masses_match_own_cdfs(mechanism):
    fam = get_family(mechanism)
    for eps_v in (0.05, 0.7, 2.5, 9.0):
        delta_v = 1e-6 if mechanism == "gaussian" else 0.0
        for cfg in fam.window_configs(eps_v, delta_v):
            w = cfg.window
            edges = np.array(sorted({-math.inf, -w.hi, -w.lo, w.lo, w.hi, math.inf}))
            for x in (-1.0, 0.0, 1.0, cfg.x_star):
                a, o, b, ea, eo, eb = (float(t[0]) for t in cell_masses(
                    fam, x, np.array([eps_v]), np.array([delta_v]), w))
                m = _bin_masses(mechanism, x, eps_v, delta_v, edges)
                ref_a = m[edges[:-1] == -w.hi].sum()
                ref_b = m[edges[:-1] == w.lo].sum()
                ref_o = 1.0 - ref_a - ref_b
                assert a == pytest.approx(ref_a, abs=1e-13), (cfg.label, x)
                assert b == pytest.approx(ref_b, abs=1e-13), (cfg.label, x)
                assert o == pytest.approx(ref_o, abs=1e-13), (cfg.label, x)
                assert a + o + b == pytest.approx(1.0, abs=1e-13)
                assert min(ea, eo, eb) >= 0.0


# ----------------------------------------------------------------------------- 3. RR
def _rr_reference(n: int, eps0: float, eps: float) -> float:
    q = 1.0 / (1.0 + math.exp(eps0))  # Pr[report 1 | input 0]
    k = np.arange(n + 1)
    base = stats.binom.pmf(k, n - 1, q)  # the others, all holding 0
    shifted = np.concatenate([[0.0], base[:-1]])
    p = (1.0 - q) * base + q * shifted  # victim holds 0
    qq = q * base + (1.0 - q) * shifted  # victim holds 1
    return _hockey(p, qq, eps)


@pytest.mark.parametrize("n", [5, 50, 1000])
@pytest.mark.parametrize("eps0", [0.5, 2.0, 6.0])
def test_binary_rr_equals_count_law(n, eps0):
    prof = BudgetProfile.identical(n=n, eps0=eps0)
    # the bound deducts its documented rounding allowance (relative rtol of P + e^eps Q,
    # absolute slack times 1 + e^eps) and never more
    allow = max(pr.rtol + pr.slack for pr in window_pairs(prof, "binary_rr"))
    for e in (0.0, 0.1, 0.5, 1.0, 2.0, 4.0):
        ref = _rr_reference(n, eps0, e)
        got = window_lower_delta(profile=prof, eps=e, mechanism="binary_rr")
        assert got <= ref + 1e-13, (n, eps0, e, got, ref)
        assert got >= ref - (1.0 + math.exp(e)) * allow - 1e-13, (n, eps0, e, got, ref)


@pytest.mark.parametrize("mechanism", ["binary_rr", "duchi"])
@pytest.mark.parametrize("profile", [
    BudgetProfile.identical(n=200, eps0=2.0),
    BudgetProfile.identical(n=20, eps0=0.5),
    BudgetProfile.from_arrays([4.0] + [0.5] * 99),
])
def test_not_above_rr_exact(mechanism, profile):
    rr = get_bound("rr_exact")
    for d in (1e-6, 1e-3):
        win = BOUND.evaluate(profile=profile, delta=d, mechanism=mechanism).eps
        ref = rr.evaluate(profile=profile, delta=d).eps
        # the same count law; rr_exact charges 1e-9 relative for Boost's binomial pmf
        assert win <= ref * (1 + 2e-8) + 1e-12, (mechanism, d, win, ref)
        assert win > 0.0


@pytest.mark.parametrize("n", [2, 5, 10])
@pytest.mark.parametrize("eps0", [0.5, 2.0])
def test_krr3_not_above_krr_exact(n, eps0):
    prof = BudgetProfile.identical(n=n, eps0=eps0)
    kx = get_bound("krr_exact")
    for d in (1e-6, 1e-3):
        win = BOUND.evaluate(profile=prof, delta=d, mechanism="krr:3").eps
        ref = kx.evaluate(profile=prof, delta=d, k=3).eps
        assert win <= ref * (1 + 2e-8) + 1e-12, (n, eps0, d, win, ref)
    for e in (0.0, 0.5, 1.0):
        assert window_lower_delta(profile=prof, eps=e, mechanism="krr:3") <= kx.delta(
            profile=prof, eps=e, k=3) + 1e-12


# ----------------------------------------------------------------------------- 4. soundness
def _upper_variants(name: str, spec: str):
    b = get_bound(name)
    out = [{}]
    if "mechanism" in b.info.options:
        out.append({"mechanism": spec})
    if name == "clones":
        out += [{"clone": "standard"}, {"clone": "stronger"}]
    return out


def _check_soundness(profile_eps, mechanism, deltas=(1e-6, 1e-3)):
    gdelta = 1e-7 if mechanism == "gaussian" else 0.0
    prof = BudgetProfile.from_arrays(np.asarray(profile_eps, dtype=float), delta=gdelta)
    lower = {d: BOUND.evaluate(profile=prof, delta=d, mechanism=mechanism).eps for d in deltas}
    for d in deltas:
        assert 0.0 <= lower[d] <= prof.eps_max
    checked = 0
    for name in list_bounds():
        bound = get_bound(name)
        if bound.info.kind != "upper":
            continue
        for opts in _upper_variants(name, mechanism):
            if not bound.covers(randomizer=mechanism, profile=prof, **opts).covered:
                continue
            for d in deltas:
                try:
                    up = bound.evaluate(profile=prof, delta=d, **opts).eps
                except (ParameterRegimeError, ValueError):
                    continue
                checked += 1
                assert up >= lower[d] * (1.0 - 1e-9), (name, opts, mechanism, d, up, lower[d])
    return checked


@pytest.mark.parametrize("profile_eps, mechanism", [
    ([1.0] * 100, "binary_rr"),
    ([1.0] * 100, "laplace"),
    ([1.0] * 100, "krr:3"),
    ([1.0] * 100, "gaussian"),
    ([4.0] + [0.5] * 99, "binary_rr"),
    ([4.0] + [0.5] * 99, "laplace"),
], ids=["id100-rr", "id100-laplace", "id100-krr3", "id100-gauss", "4+99x0.5-rr",
        "4+99x0.5-laplace"])
def test_soundness_fast_subset(profile_eps, mechanism):
    # at least one covering upper bound (clones with the mechanism's own masses covers every
    # supported mechanism) is actually compared
    assert _check_soundness(profile_eps, mechanism, deltas=(1e-6,)) >= 1


_SLOW_PROFILES = {
    "identical_100_eps1": [1.0] * 100,
    "4_plus_299x0.5": [4.0] + [0.5] * 299,
    "uniform_0.5_2_n500": list(np.random.default_rng(2024).uniform(0.5, 2.0, size=500)),
    "3x30_plus_97x1": [30.0] * 3 + [1.0] * 97,
}


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ["laplace", "piecewise", "duchi", "binary_rr", "krr:3",
                                       "gaussian", "oue:4"])
@pytest.mark.parametrize("profile_name", list(_SLOW_PROFILES))
def test_soundness_grid(profile_name, mechanism):
    assert _check_soundness(_SLOW_PROFILES[profile_name], mechanism) >= 2


# ----------------------------------------------------------------------------- 5. the finding
FINDING = [4.0] + [0.5] * 999


def test_finding_gdp_below_window():
    prof = BudgetProfile.from_arrays(FINDING)
    win = BOUND.evaluate(profile=prof, delta=1e-6, mechanism="laplace").eps
    gdp = get_bound("gdp").evaluate(profile=prof, delta=1e-6).eps
    assert win >= 0.36
    assert gdp == pytest.approx(0.283, abs=0.005)
    assert gdp < win


def test_finding_cli(tmp_path, capsys):
    from shuffledp.cli import main

    path = tmp_path / "budgets.csv"
    path.write_text("eps\n" + "".join(f"{e}\n" for e in FINDING))
    code = main(["bound", "--budgets", str(path), "--delta", "1e-6", "--randomizer", "laplace"])
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    win_lines = [ln for ln in lines if ln.startswith("window_lower ")]
    assert len(win_lines) == 1, out
    m = re.match(r"^window_lower\s+exact lower\s+([0-9.eE+-]+)", win_lines[0])
    assert m, win_lines[0]
    assert float(m.group(1)) >= 0.36
    gdp_lines = [ln for ln in lines if ln.startswith("gdp ")]
    assert len(gdp_lines) == 1, out
    assert "WARNING" in gdp_lines[0] or "below" in gdp_lines[0]


# ----------------------------------------------------------------------------- 6. range
@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("eps_list", [
    [50.0, 50.0],
    [1e-3, 1e-3],
    [50.0, 1e-3],
    [50.0] + [1e-3] * 9,
    [1e-3] * 1 + [50.0] * 9,
], ids=["2x50", "2x1e-3", "50_1e-3", "50_9x1e-3", "1e-3_9x50"])
def test_extreme_budgets(mechanism, eps_list):
    prof = _profile(eps_list, mechanism)
    for d in (1e-6, 1e-3):
        eps = BOUND.evaluate(profile=prof, delta=d, mechanism=mechanism).eps
        assert math.isfinite(eps)
        assert 0.0 <= eps <= max(eps_list)
    for e in (0.0, 1.0, 60.0):
        val = window_lower_delta(profile=prof, eps=e, mechanism=mechanism)
        assert math.isfinite(val) and 0.0 <= val <= 1.0


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("eps0", [1e-3, 1.0, 50.0])
def test_large_n_one_tier(mechanism, eps0):
    prof = _profile(np.full(100_000, eps0), mechanism)
    eps = BOUND.evaluate(profile=prof, delta=1e-6, mechanism=mechanism).eps
    assert math.isfinite(eps)
    assert 0.0 <= eps <= eps0


def test_large_n_one_tier_binary_rr_value():
    # n = 10^5 at eps0 = 1 with binary RR: the count-of-ones law (references above) gives a
    # small but positive eps; window_lower must be positive and below the exact rr curve.
    prof = BudgetProfile.identical(n=100_000, eps0=1.0)
    win = BOUND.evaluate(profile=prof, delta=1e-6, mechanism="binary_rr").eps
    ref = get_bound("rr_exact").evaluate(profile=prof, delta=1e-6).eps
    assert 0.0 < win <= ref * (1 + 2e-8) + 1e-12


def test_ten_users_at_eps50_leak_almost_everything():
    prof = BudgetProfile.identical(n=10, eps0=50.0)
    eps = BOUND.evaluate(profile=prof, delta=1e-6, mechanism="binary_rr").eps
    assert 45.0 < eps <= 50.0


# ----------------------------------------------------------------------------- 7. bad input
@pytest.mark.parametrize("mechanism", ["olh:10", "any", "duchi_l2"])
def test_unsupported_mechanism(mechanism):
    """A randomizer without window masses is "not applicable" (ParameterRegimeError, so
    compare_bounds and the CLI show a reason instead of failing); a spec naming no randomizer
    is bad input (ValueError)."""
    prof = BudgetProfile.identical(n=10, eps0=1.0)
    with pytest.raises(ParameterRegimeError, match="mechanism"):
        BOUND.evaluate(profile=prof, delta=1e-6, mechanism=mechanism)
    with pytest.raises(ValueError, match="randomizer must be one of"):
        BOUND.evaluate(profile=prof, delta=1e-6, mechanism="lapalce")
    with pytest.raises(ValueError, match="mechanism"):
        BOUND.evaluate(profile=prof, delta=1e-6, mechanism=mechanism)
    with pytest.raises(ValueError, match="mechanism"):
        window_lower_delta(profile=prof, eps=0.5, mechanism=mechanism)
    with pytest.raises(ValueError, match="mechanism"):
        window_pairs(prof, mechanism)


def test_gaussian_needs_local_delta():
    prof = BudgetProfile.identical(n=10, eps0=1.0)
    with pytest.raises(ParameterRegimeError, match="needs delta_i > 0"):
        BOUND.evaluate(profile=prof, delta=1e-6, mechanism="gaussian")
    with pytest.raises(ParameterRegimeError, match="delta"):
        window_lower_delta(profile=prof, eps=0.5, mechanism="gaussian")
    mixed = BudgetProfile.from_arrays([1.0] * 10, delta=[1e-6] * 9 + [0.0])
    with pytest.raises(ParameterRegimeError):
        window_lower_delta(profile=mixed, eps=0.5, mechanism="gaussian")


@pytest.mark.parametrize("tol", [-1, 1.0])
def test_bad_tol(tol):
    prof = BudgetProfile.identical(n=10, eps0=1.0)
    with pytest.raises(ValueError, match="tol"):
        BOUND.evaluate(profile=prof, delta=1e-6, mechanism="laplace", tol=tol)
    with pytest.raises(ValueError, match="tol"):
        window_lower_delta(profile=prof, eps=0.5, mechanism="laplace", tol=tol)


@pytest.mark.parametrize("eps", [-1.0, -1e-12, math.nan, math.inf])
def test_bad_eps(eps):
    prof = BudgetProfile.identical(n=10, eps0=1.0)
    with pytest.raises(ValueError):
        window_lower_delta(profile=prof, eps=eps, mechanism="laplace")
    with pytest.raises(ValueError):
        BOUND.evaluate(profile=prof, eps=eps, mechanism="laplace")


def test_huge_eps_targets_do_not_overflow():
    """e^eps overflows above 700: pure mechanisms return the exact 0 beyond max eps_i, the
    Gaussian only counts outcomes one law gives and the other does not (none here: 0)."""
    prof = BudgetProfile.from_arrays([3.0, 0.2, 1.0], delta=1e-7)
    for e in (699.0, 701.0, 1e300):
        d = window_lower_delta(profile=prof, eps=e, mechanism="gaussian")
        assert d == 0.0
        assert window_lower_delta(profile=prof, eps=e, mechanism="laplace") == 0.0
    assert window_lower_delta(profile=prof, eps=0.0, mechanism="gaussian") > 0.0


def test_underflow_never_rounds_up_at_huge_eps():
    """Products below the smallest double are flushed to 0; at eps ~ 700 e^eps multiplies
    that, so the bound charges it (review finding: 4e-300 reported where the truth is
    below 1e-897).  The victim's own Gaussian curve (Balle-Wang, post-processing) bounds the
    truth from above."""
    from shuffledp.mechanisms.mean import gaussian_delta

    for eps_i, d_i, e in ((50.0, 0.5, 699.0), (50.0, 1e-3, 400.0), (50.0, 1 - 1e-16, 1000.0)):
        prof = BudgetProfile.from_arrays([eps_i] * 12, delta=d_i)
        got = window_lower_delta(profile=prof, eps=e, mechanism="gaussian")
        sigma = float(_sigma_of(eps_i, d_i))
        alone = float(gaussian_delta(e, sigma)) if e < 700 else 0.0
        assert got <= alone + 1e-300, (eps_i, d_i, e, got, alone)


def _sigma_of(eps_i, d_i):
    from shuffledp.mechanisms.mean import analytic_gaussian_sigma

    return analytic_gaussian_sigma(np.array([eps_i]), np.array([d_i]))[0]


@pytest.mark.parametrize("k", [4, 5, 10, 1000])
@pytest.mark.parametrize("eps_i", [34.5, 36.0, 37.0, 38.5, 43.0])
def test_krr_masses_stay_probabilities_at_large_budgets(k, eps_i):
    """truth + (k - 3) other rounds above 1 for budgets near 35-44 (review finding): the
    masses are clipped to [0, 1] and the bound evaluates."""
    prof = BudgetProfile.from_arrays([eps_i] * 3)
    d = window_lower_delta(profile=prof, eps=1.0, mechanism=f"krr:{k}")
    assert 0.0 <= d <= 1.0
    e = BOUND.evaluate(profile=prof, delta=1e-6, mechanism=f"krr:{k}").eps
    assert 0.0 <= e <= eps_i


@pytest.mark.parametrize("p", [1e-3, 0.25, 0.5])
@pytest.mark.parametrize("m", [10**5, 10**7, 10**9])
def test_propagated_relative_error_covers_the_convolution_powers(p, m):
    # the law of Bin(m, p) by convolution powers against Boost's pmf (accurate to 5e-11): the
    # entries' relative error stays within the bound lattice_sum_pmf_rtol propagates (which
    # grows about linearly in m; a count of combinations times gamma_8192 did not cover it)
    from shuffledp.binomial import binom_pmf
    from shuffledp.bounds.window import DIRECT_WORK
    from shuffledp.lattice import lattice_sum_pmf_rtol

    law, rel = lattice_sum_pmf_rtol(np.array([[1 - p, p]]), np.array([m]), tol=1e-15,
                                    direct_work=DIRECT_WORK)
    k = law.offset + np.arange(law.pmf.size)
    ref = binom_pmf(k, m, p)
    bulk = ref > 1e-6 * ref.max()  # the FFT's absolute error (error_l1) is elsewhere
    err = float(np.max(np.abs(law.pmf[bulk] / ref[bulk] - 1.0)))
    assert err <= rel + 1e-10 + law.error_l1 / float(ref[bulk].min()), (err, rel)
    assert rel < 1e-6  # informative at 10^9 users (the one-by-one allowance is 2e-4)
    if m == 10**9 and p == 1e-3:
        assert err > 1e-9  # the error does grow with m: a bound without m would be wrong


def test_piecewise_smallest_budget_is_barely_amplified(monkeypatch):
    """The piecewise output range shrinks as the budget grows, so the user of the smallest
    budget has an output region no one else reaches (docs/theory.md 15.4): with distinct
    budgets its window certifies nearly its local budget, far above the standard grid's."""
    eps = np.random.default_rng(7).uniform(0.5, 2.0, size=2000)
    prof = BudgetProfile.from_arrays(eps)
    res = BOUND.evaluate(profile=prof, delta=1e-6, mechanism="piecewise")
    assert res.eps >= 0.4 and "[C(" in res.diagnostics["best_pair"], res
    up = get_bound("blanket").evaluate(profile=prof, delta=1e-6, mechanism="piecewise").eps
    assert res.eps <= up <= float(eps.min()) * 1.1
    clear_caches()
    monkeypatch.setattr(type(get_family("piecewise")), "profile_windows",
                        lambda self, *a: [])
    without = BOUND.evaluate(profile=BudgetProfile.from_arrays(eps), delta=1e-6,
                             mechanism="piecewise").eps
    assert without < 0.5 * res.eps, (without, res.eps)


@pytest.mark.parametrize("d", [2, 3, 5])
def test_oue_cell_masses_match_the_reports(d):
    """OUE's window masses (bits 0 and 1 of each report, docs/theory.md 13.2) against the
    enumeration of the 2^d reports, for the victim's two categories and a third one; the
    error bounds are relative and never negative."""
    import itertools

    fam = get_family(f"oue:{d}")
    (cfg, *_) = fam.window_configs(1.0, 0.0)
    for eps in (1e-3, 0.5, 2.0, 9.0, 40.0):
        q = 1.0 / (math.exp(eps) + 1.0)
        for x in ((0, 1, 2) if d >= 3 else (0, 1)):
            law = {(1, 0): 0.0, (0, 1): 0.0, "rest": 0.0}
            for bits in itertools.product((0, 1), repeat=d):
                pr = 1.0
                for i, bit in enumerate(bits):
                    one = 0.5 if i == x else q
                    pr *= one if bit else 1.0 - one
                key = (bits[0], bits[1]) if bits[0] != bits[1] else "rest"
                law[key] += pr
            a, o, b, ea, eo, eb = cell_masses(fam, float(x), np.array([eps]), np.array([0.0]),
                                              cfg.window)
            for got, want, err in ((a, law[(1, 0)], ea), (o, law["rest"], eo),
                                   (b, law[(0, 1)], eb)):
                assert abs(float(got[0]) - want) <= 1e-15 * max(want, 1e-300) + 1e-17
                assert 0.0 <= float(err[0]) <= 1e-13 * max(float(got[0]), 1e-300)


def test_oue_personalized_lower_below_the_upper_bounds():
    """With personalized budgets ``window_lower`` is OUE's certified lower bound (no other
    applies); it stays below ``clones`` and ``blanket`` for OUE."""
    rng = np.random.default_rng(11)
    prof = BudgetProfile.from_arrays(np.round(rng.uniform(0.5, 2.0, size=300), 1))
    low = BOUND.evaluate(profile=prof, delta=1e-6, mechanism="oue:10").eps
    for name in ("clones", "blanket"):
        up = get_bound(name).evaluate(profile=prof, delta=1e-6, mechanism="oue:10").eps
        assert 0.0 < low <= up, (name, low, up)
