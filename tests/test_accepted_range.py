"""Soundness over the whole accepted range (shuffledp.limits: eps_i in [0, 50], n in [2, 1e9],
target delta in [1e-30, 0.99], any finite target eps), the vacuous flag, the consistency alarm
and the lower-bound check of the paper's formula.

The independent high-precision oracle of shuffled randomized response lives in
tests/_oracle.py (tests/bounds/test_soundness.py runs it under hypothesis); here: reference values,
regressions of the audited defects, monotonicity in n down to delta = 1e-30, and the numerical
facts the error accounting relies on (scipy's binomial accuracy, Hoeffding's theorem).
"""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys

import mpmath as mp
import numpy as np
import pytest
from scipy import special, stats

from shuffledp import BudgetProfile, ParameterRegimeError, get_bound, list_bounds
from shuffledp.binomial import binom_pmf, binom_sf
from shuffledp.bounds import Bound, BoundInfo, register_bound, unregister_bound
from shuffledp.compare import (
    InconsistentBoundsError,
    compare_bounds,
    lower_bound_check,
)
from shuffledp.limits import DELTA_MAX, DELTA_MIN, EPS_LOCAL_MAX, N_MAX, N_MAX_ARRAYS
from shuffledp.poisson_binomial import poisson_binomial_pmf_exact

UPPERS = [m for m in list_bounds() if get_bound(m).info.kind == "upper"]


def _variants(name):
    if name == "clones":
        return [{"clone": "stronger"}, {"clone": "standard"}]
    if name in ("blanket_hoeffding", "blanket_bennett"):
        return [{"blanket": "generic"}, {"blanket": "krr", "k": 2}]
    if name == "blanket":
        return [{}, {"mechanism": "krr:2"}]
    return [{}]


# ----------------------------------------------------------------------------- (a) references
# True eps at delta = 1e-6 of shuffled binary RR with these budgets, from a 60-digit
# enumeration (../shared design notes, section 8; reproduced by tests/_oracle.py).
EXTREME = [((50.0, 50.0, 50.0), 49.999999), ((36.0, 36.0), 35.999999), ((1.0, 50.0), 49.999999),
           ((0.5, 2.0, 45.0), 44.999998)]


@pytest.mark.parametrize(("eps", "truth"), EXTREME)
def test_extreme_budgets_reference_values(eps, truth):
    prof = BudgetProfile.from_arrays(eps)
    low = get_bound("rr_exact").eps(profile=prof, delta=1e-6)
    assert truth - 1e-6 <= low <= truth + 1e-6
    for name in UPPERS:
        for opts in _variants(name):
            bound = get_bound(name)
            if not bound.covers(randomizer="binary_rr", profile=prof, **opts):
                continue
            try:
                e = bound.eps(profile=prof, delta=1e-6, **opts)
            except ParameterRegimeError:
                continue
            assert truth - 1e-6 <= e <= max(eps) + 1e-12, (name, opts, e)


def test_the_audited_large_budget_cases():
    # shuffledp bound --n 3 --eps0 50 --eps 45: the truth is 0.9933 (not 0)
    prof = BudgetProfile.identical(n=3, eps0=50.0)
    truth = 1 - math.exp(45 - 50)  # k = 0 pair: s(0) (q - e^45 (1 - q)) with s(0) ~ 1
    for name in ("clones", "fmt21_numerical", "fmt23_numerical"):
        assert get_bound(name).delta(profile=prof, eps=45.0) >= truth * (1 - 1e-12) - 1e-15
    for name in ("rr_exact", "krr_exact"):
        d = get_bound(name).delta(profile=prof, eps=45.0)
        assert truth * (1 - 1e-9) <= d <= truth + 1e-12 or name == "krr_exact"
    # rr_exact: no overflow, never above eps0, delta(eps0) = 0
    for eps0 in (30.0, 37.0, 40.0, 50.0):
        p = BudgetProfile.identical(n=1000, eps0=eps0)
        e = get_bound("rr_exact").eps(profile=p, delta=1e-6)
        assert eps0 - 1e-3 < e <= eps0  # one user reports ~ truthfully: eps ~ eps0
        assert get_bound("rr_exact").delta(profile=p, eps=eps0) == 0.0
        assert get_bound("rr_exact").delta(profile=p, eps=1e300) == 0.0


GRID_EPS0 = [0.0, 1e-9, 0.1, 4.0, 26.0, 36.7, 37.0, 40.0, 50.0]


@pytest.mark.parametrize("eps0", GRID_EPS0)
@pytest.mark.parametrize("n", [2, 3, 1000])
def test_no_bound_raises_anything_but_a_regime_error(eps0, n):
    prof = BudgetProfile.identical(n=n, eps0=eps0)
    for name in list_bounds():
        b = get_bound(name)
        for target in ({"delta": DELTA_MIN}, {"delta": 1e-6}, {"delta": DELTA_MAX},
                       {"eps": 0.0}, {"eps": 1.0}, {"eps": 45.0}, {"eps": 800.0},
                       {"eps": 1e300}):
            try:
                r = b.evaluate(profile=prof, **target)
            except ParameterRegimeError:
                continue
            assert math.isfinite(r.eps) and 0.0 <= r.delta <= 1.0
            if b.info.kind != "approximate" and "delta" in target:
                assert r.eps <= eps0 + 1e-12  # the local guarantee caps it


def test_upper_bounds_never_below_exact_lower_bounds_on_a_grid():
    # compare_bounds raises InconsistentBoundsError otherwise
    rng = np.random.default_rng(3)
    profiles = [BudgetProfile.identical(n=n, eps0=e) for n in (2, 10, 300, 5000)
                for e in (0.05, 1.0, 8.0, 30.0, 50.0)]
    profiles += [BudgetProfile.from_arrays(rng.uniform(a, b, n)) for n, a, b in
                 [(5, 0.0, 50.0), (40, 0.5, 2.0), (2000, 0.05, 1.0), (7, 20.0, 50.0)]]
    for prof in profiles:
        for target in ({"delta": 1e-30}, {"delta": 1e-6}, {"eps": 0.1}):
            compare_bounds(prof, methods=["clones", "fmt21_numerical", "fmt23_numerical",
                                          "blanket_bennett", "rr_exact"], **target)


# ----------------------------------------------------------------------------- (b) monotone in n
@pytest.mark.parametrize("clone", ["stronger", "standard"])
@pytest.mark.parametrize(("eps0", "delta"), [(0.1, 1e-30), (1.0, 1e-30), (4.0, 1e-30),
                                             (1.0, 1e-12), (10.0, 1e-6)])
def test_clones_eps_non_increasing_in_n_down_to_1e_30(clone, eps0, delta):
    # the audited case: eps0 = 0.1, delta = 1e-30 gave 0.0977 at n = 100 and 0.1 at n = 200
    ns = sorted({int(x) for x in np.geomspace(2, 300_000, 40)} | {100, 200})
    vals = [get_bound("clones").eps(profile=BudgetProfile.identical(n=n, eps0=eps0),
                                    delta=delta, clone=clone) for n in ns]
    for a, b, n in zip(vals, vals[1:], ns[1:], strict=False):
        assert b <= a * (1 + 1e-7) + 1e-12, (n, a, b)
    if eps0 == 0.1 and delta == 1e-30:
        assert vals[ns.index(200)] < vals[ns.index(100)] < 0.1


def test_personalized_eps_non_increasing_when_users_are_added():
    rng = np.random.default_rng(11)
    eps = rng.uniform(0.5, 2.0, 200_000)
    for delta in (1e-30, 1e-10):
        prev = math.inf
        for n in (300, 3000, 30_000, 200_000):
            e = get_bound("clones").eps(profile=BudgetProfile.from_arrays(eps[:n]), delta=delta)
            assert e <= prev * (1 + 1e-7)
            prev = e


# ----------------------------------------------------------------------------- (b) the numerics
def test_scipy_binomial_accuracy_behind_the_round_off_allowance():
    # clones and rr_exact charge 1e-9 relative for the binomial pmf and survival function
    # (Boost's, as scipy.stats.binom calls them); measured here 20 times below it over n up to
    # 1e9, p = expit(-eps) for eps in [0, 50] and deep tails
    mp.mp.dps = 40
    worst_pmf = worst_sf = 0.0
    rng = np.random.default_rng(0)
    for n in (5, 500, 10**5, 10**8, 10**9):
        for eps in (0.01, 1.0, 4.0, 20.0, 50.0):
            for p in (float(special.expit(-eps)), float(special.expit(eps))):
                sd = math.sqrt(n * p * (1 - p)) + 1
                ks = np.clip((n * p + rng.normal(0, 8, 6) * sd).astype(int), 0, n)
                for k in map(int, ks):
                    exact = mp.binomial(n, k) * mp.mpf(p) ** k * (1 - mp.mpf(p)) ** (n - k)
                    if exact > mp.mpf("1e-300"):
                        got = binom_pmf(k, n, p)
                        worst_pmf = max(worst_pmf, float(abs(got - exact) / exact))
    for c in (1, 7, 60, 500, 3000):
        for k in np.unique(np.linspace(0, c, 25).astype(int)):
            exact = mp.fsum(mp.binomial(c, j) for j in range(int(k) + 1, c + 1)) / mp.mpf(2) ** c
            if exact > mp.mpf("1e-300"):
                got = binom_sf(int(k), c, 0.5)
                worst_sf = max(worst_sf, float(abs(got - exact) / exact))
    assert worst_pmf < 1e-10 and worst_sf < 1e-10, (worst_pmf, worst_sf)


def _half_sf_reference(k: int, c: int) -> mp.mpf:
    """Pr[Bin(c, 1/2) >= k] to about 1e-15 relative: the first term at 30 digits, the
    ratios of the following terms multiplied out in 80-bit long double (k >= c / 2)."""
    mp.mp.dps = 30
    t0 = mp.exp(mp.loggamma(c + 1) - mp.loggamma(k + 1) - mp.loggamma(c - k + 1)
                - c * mp.log(2))
    length = int(min(c - k, 60 * math.sqrt(c) + 200)) + 1
    j = np.arange(k, k + length, dtype=np.longdouble)
    ratios = (np.longdouble(c) - j) / (j + 1)
    terms = np.concatenate([[np.longdouble(1)], np.cumprod(ratios[:-1])])
    return mp.mpf(float(np.sum(terms))) * t0


def test_clone_divergence_survival_function_up_to_1e9_clones():
    # S(k) = Pr[Bin(c, 1/2) >= k] inside every H_c of clones: cephes' bdtrc, used before,
    # is off by 0.27 % at c = 1e7 and 68 % at c = 1e9 next to c / 2 (the divergence at eps
    # near 0), far beyond the 1e-9 charged; Boost's survival function is not
    from shuffledp.binomial import SF_RTOL as _SF_RTOL
    from shuffledp.binomial import binom_half_sf as _binom_half_sf

    worst = 0.0
    for c in (10**3, 10**5, 10**7, 10**8, 10**9):
        sd = math.sqrt(c) / 2
        for z in (0.0, 0.3, 1.0, 3.0, 8.0, 25.0):
            k = int(c / 2 + z * sd) + 1
            ref = _half_sf_reference(k, c)
            got = float(_binom_half_sf(np.array([k]), np.array([c]))[0])
            worst = max(worst, float(abs(got - ref) / ref))
            # the lower side by symmetry: Pr[Bin >= c + 1 - k] = 1 - Pr[Bin >= k]
            low = float(_binom_half_sf(np.array([c + 1 - k]), np.array([c]))[0])
            worst = max(worst, float(abs(low - (1 - ref)) / (1 - ref)))
    assert worst < _SF_RTOL / 10, worst


def test_clones_near_eps_zero_at_1e8_users():
    # regression of the cephes defect: delta(eps ~ 0) at 1e8 users is the total variation
    # bound, about 2e-5 here (the exact lower bound is below it); cephes gave 0.0203
    prof = BudgetProfile.identical(n=10**8, eps0=0.5)
    up = get_bound("clones").delta(profile=prof, eps=3.5e-9)
    low = get_bound("rr_exact").delta(profile=prof, eps=3.5e-9)
    assert low <= up <= 1e-4, (low, up)


def test_hoeffding_binomial_bound_on_the_left_tail():
    # Hoeffding (1956), Theorem 4: Pr[PB <= b] <= Pr[Bin(N, mu/N) <= b] for b <= mu - 1
    rng = np.random.default_rng(2)
    for _ in range(500):
        n = int(rng.integers(2, 60))
        p = rng.beta(rng.uniform(0.2, 3), rng.uniform(0.2, 3), size=n) * rng.choice([1, 0.05])
        cdf = np.cumsum(poisson_binomial_pmf_exact(p))
        mu = float(p.sum())
        b = np.arange(0, int(math.floor(mu - 1)) + 1)
        if b.size:
            assert np.all(cdf[b] <= stats.binom.cdf(b, n, mu / n) * (1 + 1e-12) + 1e-300)


def test_rr_exact_equals_direct_enumeration_at_large_budgets():
    # independent float enumeration with q and 1 - q both from logistic forms (a recursion
    # fed 1 - q as "1 - p" loses the relative accuracy of 1 - q for eps >~ 20)
    for eps in ([26.0, 26.0, 26.0], [1.0, 37.0], [0.5, 2.0, 45.0], [50.0, 0.0, 3.0]):
        e = np.array(eps)
        q, q1 = special.expit(e), special.expit(-e)
        n = e.size
        prof = BudgetProfile.from_arrays(e)
        for target in (0.0, 0.5 * max(eps), max(eps) - 1e-3):
            best = 0.0
            for x in itertools.product((0, 1), repeat=n):
                for v in range(n):
                    laws = []
                    for bit in (0, 1):
                        xx = list(x)
                        xx[v] = bit
                        probs = np.where(np.array(xx) == 1, q, q1)
                        comps = np.where(np.array(xx) == 1, q1, q)
                        laws.append(poisson_binomial_pmf_exact(probs, comps))
                    a, b = laws
                    big_e = math.exp(target)
                    best = max(best, np.maximum(a - big_e * b, 0).sum())
            got = get_bound("rr_exact").delta(profile=prof, eps=target)
            assert best - 1e-12 <= got <= best + 1e-12, (eps, target, got, best)


# ----------------------------------------------------------------------------- vacuous
def test_vacuous_flag():
    gdp = get_bound("gdp").evaluate(profile=BudgetProfile.identical(n=3, eps0=50.0), delta=1e-6)
    assert gdp.eps > 50 and gdp.vacuous and gdp.as_row()["vacuous"]
    informative = get_bound("clones").evaluate(profile=BudgetProfile.identical(n=10**5, eps0=1.0),
                                              delta=1e-6)
    assert not informative.vacuous
    trivial = get_bound("efmrtt19").evaluate(
        profile=BudgetProfile.identical(n=1000, eps0=0.5), delta=1e-6)
    assert trivial.eps == 0.5 and trivial.vacuous  # 12 eps0 sqrt(log(1/delta)/n) > eps0
    low = get_bound("rr_exact").evaluate(profile=BudgetProfile.identical(n=100, eps0=1.0),
                                         eps=5.0)
    assert low.delta == 0.0 and low.vacuous


# ----------------------------------------------------------------------------- (c) the alarm
def test_consistency_alarm_names_both_bounds():
    def too_small(*, profile, delta):
        return 1e-3

    info = BoundInfo(name="toy_unsound", kind="upper", title="t", citation="test",
                     personalized=True, approx_ldp=True, clone_mass="stronger")
    register_bound(Bound(info=info, eps_fn=too_small), replace=True)
    try:
        prof = BudgetProfile.identical(n=1000, eps0=4.0)
        with pytest.raises(InconsistentBoundsError, match="toy_unsound.*below.*rr_exact"):
            compare_bounds(prof, delta=1e-6, methods=["toy_unsound", "rr_exact"])
        # a bound that does not cover the lower bound's randomizer is not an inconsistency
        info2 = BoundInfo(name="toy_krr5_only", kind="upper", title="t", citation="test",
                          personalized=False, approx_ldp=True, randomizers=("krr:5",))
        register_bound(Bound(info=info2, eps_fn=too_small), replace=True)
        rows = compare_bounds(prof, delta=1e-6, methods=["toy_krr5_only", "rr_exact"])
        assert rows[0].result.eps == 1e-3
    finally:
        unregister_bound("toy_unsound")
        unregister_bound("toy_krr5_only")


# ----------------------------------------------------------------------------- lower check
def test_gdp_lower_check_true_false_or_none(monkeypatch):
    few = BudgetProfile.identical(n=1000, eps0=4.0)
    e = get_bound("gdp").eps(profile=few, delta=1e-6)
    c = lower_bound_check(few, value=e, delta=1e-6)
    assert c.checked and c.below_lower is True and c.lower_value >= 1.69
    many = BudgetProfile.identical(n=100_000, eps0=1.0)
    c2 = lower_bound_check(many, value=get_bound("gdp").eps(profile=many, delta=1e-6),
                           delta=1e-6)
    assert c2.checked and c2.below_lower is False
    # beyond the behind-the-scenes limit: not checked (None), never False by default
    import shuffledp.compare as cmp

    monkeypatch.setattr(cmp, "LOWER_CHECK_MAX_N", 50)
    pers = BudgetProfile.from_arrays(np.linspace(0.5, 2.0, 100))
    row = cmp.compare_bounds(pers, delta=1e-6, methods=["gdp"])[0]
    assert row.below_lower is None and "not checked" in row.lower_reason


def test_compare_bounds_input_types():
    prof = BudgetProfile.identical(n=100, eps0=1.0)
    with pytest.raises(TypeError, match="methods must be a list of bound names"):
        compare_bounds(prof, delta=1e-6, methods="gdp")
    with pytest.raises(TypeError, match="delta must be a real number"):
        compare_bounds(prof, delta="1e-6", methods=["gdp"])
    with pytest.raises(ValueError, match=r"delta must be in \[1e-30, 0.99\]"):
        get_bound("clones").eps(profile=prof, delta=1e-31)
    with pytest.raises(ValueError, match="eps must be finite"):
        get_bound("clones").delta(profile=prof, eps=math.inf)


def test_accepted_range_constants():
    assert (EPS_LOCAL_MAX, N_MAX, DELTA_MIN, DELTA_MAX) == (50.0, 10**9, 1e-30, 0.99)
    assert N_MAX_ARRAYS == 10**8
    with pytest.raises(ValueError, match=r"eps0 must be finite and in \[0, 50\]"):
        BudgetProfile.identical(n=10, eps0=50.5)


# ----------------------------------------------------------------------------- the CLI
def _cli(*args):
    return subprocess.run([sys.executable, "-m", "shuffledp.cli", *args], capture_output=True,
                          text=True, timeout=600)


def test_cli_done_when_commands():
    r = _cli("bound", "--n", "3", "--eps0", "50", "--delta", "1e-6", "--format", "json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["results"]
    uppers = [x for x in rows if x["kind"] == "rigorous upper" and x["status"] == "ok"]
    assert uppers and all(x["eps"] >= 49.99 for x in uppers)
    for args in (["--n", "2", "--eps0", "50", "--delta", "1e-6"],
                 ["--n", "100", "--eps0", "1", "--eps", "800"]):
        r = _cli("bound", *args)
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    r = _cli("bound", "--n", "1000", "--eps0", "4", "--delta", "1e-6", "--method", "gdp",
             "--format", "json")
    row = json.loads(r.stdout)["results"][0]
    assert row["below_lower"] is True and row["lower_method"] == "rr_exact"


@pytest.mark.parametrize(("args", "message"), [
    (["--n", "100", "--eps0", "1", "--delta", "-1e-6"], r"delta must be in \[1e-30, 0.99\]"),
    (["--n", "100", "--eps0", "1", "--eps", "-1"], "eps must be finite and >= 0"),
    (["--n", "100", "--eps0", "1e300", "--delta", "1e-6"], r"eps0 must be finite and in"),
    (["--n", "100", "--eps0", "1", "--delta", "x" * 100_000], "characters"),
    (["--n", "100", "--eps0", "1", "--delta", "1e-6", "--randomizer", "krr"],
     "needs its number of categories"),
])
def test_cli_bad_input_is_one_short_line(args, message):
    r = _cli("bound", *args)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and len(lines[0]) < 400, r.stderr[:500]
    assert __import__("re").search(message, lines[0]), lines[0]


def test_cli_randomizer_option_and_personalized_coverage(tmp_path):
    f = tmp_path / "b.csv"
    f.write_text("eps\n4\n" + "0.5\n" * 999)
    r = _cli("bound", "--budgets", str(f), "--delta", "1e-6", "--method", "clones",
             "--clone", "standard", "--format", "json")
    row = json.loads(r.stdout)["results"][0]
    assert "binary_rr" in row["guarantee_for"] and "laplace" not in row["guarantee_for"]
    assert "a guarantee for: binary_rr" in row["note"] and "any randomizer" not in row["note"]
    # naming the randomizer: its own masses by default (a guarantee), the generic ones on
    # request (not one for 3-RR on this profile: listed apart, never the answer)
    r = _cli("bound", "--budgets", str(f), "--delta", "1e-6", "--method", "clones",
             "--randomizer", "krr:3")
    assert r.returncode == 0 and "a guarantee for krr:3" in r.stdout
    assert "proven by clones (mechanism=krr:3" in r.stdout
    r = _cli("bound", "--budgets", str(f), "--delta", "1e-6", "--method", "clones",
             "--randomizer", "krr:3", "--generic-masses")
    assert r.returncode == 0 and "NOT a guarantee for krr:3" in r.stdout
    assert "Not guarantees for krr:3" in r.stdout


@pytest.mark.parametrize("eps", [[2.2250738585072014e-308] * 3, [0.0, 2.225073858507e-311],
                                 [36.7, 2.225073858507e-311], [7.26e-85, 7.26e-85],
                                 [1e-9, 1e-9], [0.0, 0.0, 50.0], [5e-324, 5e-324]])
def test_tiny_and_subnormal_budgets(eps):
    # regression: scipy's binomial functions overflowed for complements ~1e-308 (clones,
    # fmt21/23 numerical), the blanket formulas divided by an underflowed (e^eps - 1)^2
    prof = BudgetProfile.from_arrays(eps)
    for name in list_bounds():
        for opts in _variants(name):
            for target in ({"eps": 0.0}, {"eps": 2.2e-322}, {"eps": 1e-5}, {"delta": 1e-30},
                           {"delta": 0.5}):
                try:
                    r = get_bound(name).evaluate(profile=prof, **target, **opts)
                except ParameterRegimeError:
                    continue
                assert 0.0 <= r.delta <= 1.0 and math.isfinite(r.eps)
