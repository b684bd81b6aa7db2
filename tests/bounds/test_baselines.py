"""Published baselines: reference values, independent recomputation, regions, bad input."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from _extras import requires
from scipy import stats

from shuffledp import BudgetProfile, ParameterRegimeError, get_bound
from shuffledp.bounds import bbgn19 as blanket
from shuffledp.bounds import fmt21, fmt23, liu23

IDENTICAL_4 = BudgetProfile.identical(n=100_000, eps0=4.0)


# ----------------------------------------------------------------------------- (a) reference
def test_fmt21_readme_reference_values():
    # Source: README of apple/ml-shuffling-amplification (the FMT21 authors' code): n = 10^5,
    # eps0 = 4, delta = 1e-6: closed form "at most 0.5378040242374512", numerical bound
    # "between 0.1675385583317841 and 0.172790550755978".
    closed = get_bound("fmt21_closed").eps(profile=IDENTICAL_4, delta=1e-6)
    numerical = get_bound("fmt21_numerical").eps(profile=IDENTICAL_4, delta=1e-6)
    assert closed <= 0.538
    assert 0.1675 <= numerical <= 0.1728


def test_fmt21_readme_closed_value_is_the_codes_intermediate_expression():
    # The README's 0.5378 comes from log(1 + (1 - e^-eps0) / (1 + e^(-eps0 - eps')) (a + c)),
    # eps' = log(1 + a + c), in the authors' code; Theorem 3.1's (e^eps0-1)/(e^eps0+1) factor
    # is smaller, so our value must lie below it.  Independent evaluation in mpmath.
    mp.mp.dps = 40
    n, e0, d = mp.mpf(100_000), mp.mpf(4), mp.mpf("1e-6")
    a = 8 * mp.sqrt(mp.e**e0 * mp.log(4 / d) / n)
    c = 8 * mp.e**e0 / n
    readme = mp.log(1 + (1 - mp.e**-e0) / (1 + mp.e ** (-e0 - mp.log(1 + a + c))) * (a + c))
    assert float(readme) == pytest.approx(0.5378040242374512, rel=1e-12)
    theorem = mp.log(1 + (mp.e**e0 - 1) / (mp.e**e0 + 1) * (a + c))
    ours = get_bound("fmt21_closed").eps(profile=IDENTICAL_4, delta=1e-6)
    assert ours == pytest.approx(float(theorem), rel=1e-12)
    assert ours < float(readme)


def test_efmrtt19_formula_in_mpmath():
    # No published number: independent evaluation of 12 eps0 sqrt(log(1/delta)/n) in mpmath.
    p = BudgetProfile.identical(n=50_000, eps0=0.4)
    expected = 12 * mp.mpf("0.4") * mp.sqrt(mp.log(mp.mpf(10) ** 7) / 50_000)
    assert get_bound("efmrtt19").eps(profile=p, delta=1e-7) == pytest.approx(float(expected),
                                                                             rel=1e-12)


def test_fmt23_closed_formula_in_mpmath():
    # No published number: independent evaluation of the FMT23 closed form in mpmath.
    mp.mp.dps = 40
    n, e0, d = mp.mpf(100_000), mp.mpf(4), mp.mpf("1e-6")
    expected = mp.log(1 + (mp.e**e0 - 1) * (4 * mp.sqrt(2 * mp.log(4 / d))
                                            / mp.sqrt((mp.e**e0 + 1) * n) + 4 / n))
    got = get_bound("fmt23_closed").eps(profile=IDENTICAL_4, delta=1e-6)
    assert got == pytest.approx(float(expected), rel=1e-12)


def test_numerical_fmt_wrappers_equal_the_clones_bound():
    clones = get_bound("clones")
    for name, clone in (("fmt21_numerical", "standard"), ("fmt23_numerical", "stronger")):
        for eps in (0.05, 0.2, 1.0):
            assert get_bound(name).delta(profile=IDENTICAL_4, eps=eps) == clones.delta(
                profile=IDENTICAL_4, eps=eps, clone=clone)


def test_stronger_clones_are_tighter_and_closed_forms_looser_than_numerical():
    e = {m: get_bound(m).eps(profile=IDENTICAL_4, delta=1e-6)
         for m in ("fmt21_closed", "fmt21_numerical", "fmt23_closed", "fmt23_numerical",
                   "rr_exact")}
    assert e["rr_exact"] <= e["fmt23_numerical"] <= e["fmt21_numerical"] <= e["fmt21_closed"]
    assert e["fmt23_numerical"] <= e["fmt23_closed"] <= e["fmt21_closed"]


# ----------------------------------------------------------------------------- blanket
def _krr_exact_blanket_delta(n: int, eps0: float, eps: float, k: int) -> float:
    """(1/(gamma n)) E_{M ~ Bin(n, gamma)} E[(L_1 + ... + L_M)_+] by exact enumeration."""
    gamma = k / (math.exp(eps0) + k - 1)
    big_e = math.exp(eps)
    rest = (1 - gamma) * k
    v = [gamma * (1 - big_e) + rest, gamma * (1 - big_e) - big_e * rest, gamma * (1 - big_e)]
    w = [1 / k, 1 / k, (k - 2) / k]
    total = 0.0
    for m in range(1, n + 1):
        inner = 0.0
        for i in range(m + 1):
            for j in range(m - i + 1):
                rest_count = m - i - j
                if k == 2 and rest_count:
                    continue
                s = i * v[0] + j * v[1] + rest_count * v[2]
                if s <= 0:
                    continue
                prob = stats.multinomial.pmf([i, j, rest_count], m, w)
                inner += prob * s
        total += stats.binom.pmf(m, n, gamma) * inner
    return total / (gamma * n)


@pytest.mark.parametrize("k", [2, 3])
def test_blanket_bounds_dominate_exact_blanket_divergence_of_krr(k):
    # Independent algorithm: the exact blanket divergence of k-RR by enumerating the law of
    # sum L_i; Hoeffding and Bennett must be above it, and for k = 2 it must be above the exact
    # curve of shuffled binary randomized response (rr_exact).
    n, eps0 = 25, 2.0
    p = BudgetProfile.identical(n=n, eps0=eps0)
    for eps in (0.3, 0.8, 1.5):
        exact = _krr_exact_blanket_delta(n, eps0, eps, k)
        for name in ("blanket_hoeffding", "blanket_bennett"):
            bound = get_bound(name).delta(profile=p, eps=eps, blanket="krr", k=k)
            assert bound >= exact * (1 - 1e-9), (name, eps)
        if k == 2:
            assert exact >= get_bound("rr_exact").delta(profile=p, eps=eps) * (1 - 1e-9)


def test_generic_blanket_is_looser_than_krr_and_above_rr_exact():
    p = BudgetProfile.identical(n=20_000, eps0=1.0)
    lower = get_bound("rr_exact").eps(profile=p, delta=1e-6)
    for name in ("blanket_hoeffding", "blanket_bennett"):
        b = get_bound(name)
        generic = b.eps(profile=p, delta=1e-6)
        krr2 = b.eps(profile=p, delta=1e-6, blanket="krr", k=2)
        assert lower <= krr2 <= generic <= 1.0


def test_bennett_closed_sum_matches_direct_binomial_sum_in_mpmath():
    # Independent algorithm for the sum over m >= 1: direct mpmath summation of the binomial
    # weights instead of the generating function used by the module.
    mp.mp.dps = 50
    n, eps0, eps = 3_000, 1.0, 0.2
    p = BudgetProfile.identical(n=n, eps0=eps0)
    got = blanket.bennett_delta(profile=p, eps=eps)
    gamma, a, _, top, second = blanket.blanket_parameters(eps0=eps0, eps=eps)
    alpha, beta = mp.mpf(second) / mp.mpf(top) ** 2, mp.mpf(a) * top / second
    t = alpha * ((1 + beta) * mp.log1p(beta) - beta)
    g = mp.mpf(gamma)
    s = mp.fsum(mp.binomial(n, m) * g**m * (1 - g) ** (n - m) * mp.e ** (-m * t)
                for m in range(1, n + 1))
    expected = top * s / (g * n * mp.log1p(beta))
    assert got == pytest.approx(float(expected), rel=1e-9)


def test_hoeffding_matches_formula_in_mpmath():
    mp.mp.dps = 50
    n, eps0, eps = 10_000, 0.8, 0.15
    p = BudgetProfile.identical(n=n, eps0=eps0)
    gamma, a, width, _, _ = blanket.blanket_parameters(eps0=eps0, eps=eps)
    expected = (mp.mpf(width) ** 2 / (4 * mp.mpf(a) * gamma * n)
                * (1 - gamma * (1 - mp.e ** (-2 * mp.mpf(a) ** 2 / mp.mpf(width) ** 2))) ** n)
    assert blanket.hoeffding_delta(profile=p, eps=eps) == pytest.approx(float(expected),
                                                                        rel=1e-10)


def test_blanket_bad_options():
    b = get_bound("blanket_bennett")
    p = BudgetProfile.identical(n=1000, eps0=1.0)
    with pytest.raises(ValueError, match="blanket must be one of"):
        b.eps(profile=p, delta=1e-6, blanket="laplace")
    with pytest.raises(ValueError, match="k must be an integer >= 2, got 1"):
        b.eps(profile=p, delta=1e-6, blanket="krr", k=1)
    with pytest.raises(ValueError, match="unknown option"):
        b.eps(profile=p, delta=1e-6, kk=3)


# ----------------------------------------------------------------------------- liu23
def test_liu23_identical_budgets_equal_fmt21_formula_with_n_minus_1():
    # Identical budgets: p_i = e^{-eps0}, S = (n - 1) e^{-eps0}, so the formula is FMT21's
    # Theorem 3.1 with n - 1 users (but with region S >= 16 log(4/delta)).
    p = BudgetProfile.identical(n=50_001, eps0=2.0)
    got = get_bound("liu23_personalized").eps(profile=p, delta=1e-6)
    assert got == pytest.approx(fmt21.closed_form_eps(eps0=2.0, n=50_000, delta=1e-6),
                                rel=1e-10)


def test_liu23_echo_probabilities_match_naive_double_sum():
    rng = np.random.default_rng(3)
    eps = np.concatenate([rng.uniform(0.0, 2.0, 40), [0.5, 0.5, 0.0, 2.0]])
    p = BudgetProfile.from_arrays(eps)
    n = eps.size
    g = np.where(eps == 0, 1.0, -np.expm1(-eps) / np.where(eps == 0, 1.0, eps))
    naive = np.array([
        sum(g[j] / g[i] * math.exp(-max(eps[i], eps[j])) for j in range(n)) / n
        for i in range(n)
    ])
    np.testing.assert_allclose(liu23.echo_probabilities(p), naive, rtol=1e-12)


def test_liu23_is_marked_approximate_and_personalized():
    info = get_bound("liu23_personalized").info
    assert info.kind == "approximate" and info.personalized and not info.approx_ldp


# ----------------------------------------------------------------------------- (eps0, delta0)
def test_fmt21_local_delta_term_theorem_3_8():
    p = BudgetProfile.identical(n=1_000, eps0=1.0, delta0=1e-9)
    b = get_bound("fmt21_closed")
    eps = b.eps(profile=p, delta=1e-4)
    pure = fmt21.closed_form_delta(eps0=1.0, n=1_000, eps=eps)
    extra = (math.exp(eps) + 1) * (1 + math.exp(-1.0) / 2) * 1_000 * 1e-9
    assert pure + extra <= 1e-4 * (1 + 1e-9)
    assert b.delta(profile=p, eps=eps) == pytest.approx(pure + extra, rel=1e-12)
    # more local delta can only cost privacy
    assert eps >= b.eps(profile=BudgetProfile.identical(n=1_000, eps0=1.0), delta=1e-4)
    num = get_bound("fmt21_numerical")
    e_num = num.eps(profile=p, delta=1e-4)
    assert num.delta(profile=p, eps=e_num) <= 1e-4 * (1 + 1e-9)
    assert e_num <= eps


def test_fmt21_local_delta_too_large_falls_back_to_trivial_or_raises():
    p = BudgetProfile.identical(n=100_000, eps0=1.0, delta0=1e-10)
    b = get_bound("fmt21_closed")
    # X(eps) >= 2 n delta0 = 2e-5 > 1e-5: only the local guarantee (1, 1e-10) certifies 1e-5
    assert b.eps(profile=p, delta=1e-5) == 1.0
    with pytest.raises(ParameterRegimeError, match="cannot certify delta"):
        b.eps(profile=p, delta=1e-11)


# ----------------------------------------------------------------------------- regions
@pytest.mark.parametrize(
    ("name", "profile", "delta", "match"),
    [
        ("efmrtt19", BudgetProfile.identical(n=10_000, eps0=0.6), 1e-6, "eps0 <= 0.5"),
        ("efmrtt19", BudgetProfile.identical(n=999, eps0=0.5), 1e-6, "n >= 1000"),
        ("fmt21_closed", BudgetProfile.identical(n=1_000, eps0=4.0), 1e-6,
         r"eps0 <= log\(n / \(16 log\(4/delta\)\)\)"),
        ("fmt21_closed", BudgetProfile.identical(n=100, eps0=4.0), 1e-6, "some delta < 1"),
        ("fmt23_closed", BudgetProfile.identical(n=1_000, eps0=5.0), 1e-6,
         r"n >= 8 log\(4/delta\)"),
        ("liu23_personalized", BudgetProfile.identical(n=1_000, eps0=4.0), 1e-6,
         r"S = sum_i p_i >= 16 log\(4/delta\)"),
        ("fmt23_closed", BudgetProfile.identical(n=10_000, eps0=1.0, delta0=1e-9), 1e-6,
         "pure LDP only"),
        ("blanket_hoeffding", BudgetProfile.identical(n=10_000, eps0=1.0, delta0=1e-9), 1e-6,
         "pure LDP only"),
    ],
)
def test_out_of_region_raises(name, profile, delta, match):
    with pytest.raises(ParameterRegimeError, match=match):
        get_bound(name).eps(profile=profile, delta=delta)


def test_efmrtt19_large_delta_uses_the_certificate_at_one_percent():
    p = BudgetProfile.identical(n=10_000, eps0=0.5)
    b = get_bound("efmrtt19")
    assert b.eps(profile=p, delta=0.5) == b.eps(profile=p, delta=0.01)


def test_fmt23_declares_the_erratum_restriction():
    for name in ("fmt23_closed", "fmt23_numerical"):
        info = get_bound(name).info
        assert "any" not in info.randomizers and "krr" in info.randomizers
        assert "Errata" in info.citation
    for name in ("fmt21_closed", "fmt21_numerical", "efmrtt19"):
        assert get_bound(name).info.randomizers == ("any",)


# ----------------------------------------------------------------------------- invariants
@pytest.mark.parametrize("name", ["efmrtt19", "fmt21_closed", "fmt23_closed", "blanket_bennett",
                                  "blanket_hoeffding", "fmt21_numerical", "fmt23_numerical"])
def test_identical_only_bounds_use_the_worst_user(name):
    rng = np.random.default_rng(1)
    het = BudgetProfile.uniform(n=5_000, low=0.1, high=0.5, rng=rng)
    worst = BudgetProfile.identical(n=5_000, eps0=het.eps_max)
    b = get_bound(name)
    r = b.evaluate(profile=het, delta=1e-6)
    assert r.eps == b.eps(profile=worst, delta=1e-6)
    assert r.diagnostics["reduced_to_identical"] is True


def test_closed_form_inverses_round_trip():
    for mod in (fmt21, fmt23):
        assert mod.closed_form_delta(eps0=3.0, n=200_000, eps=0.01) == 1.0  # nothing certified
        assert mod.closed_form_delta(eps0=3.0, n=200_000, eps=3.0) == 0.0  # local guarantee
        assert mod.closed_form_delta(eps0=3.0, n=200_000, eps=2.9) > 0.0  # underflow: not 0
        for eps in (0.1, 0.2, 0.5):
            d = mod.closed_form_delta(eps0=3.0, n=200_000, eps=eps)
            assert 0.0 < d < 1.0
            assert mod.closed_form_eps(eps0=3.0, n=200_000, delta=d) <= eps * (1 + 1e-9)


# ----------------------------------------------------------------------------- workflow scripts
@requires("pandas", "matplotlib", "yaml")
def test_personalized_scripts_end_to_end(tmp_path):
    import compute_personalized
    import make_tables
    import pandas as pd
    import plot_personalized

    params = {
        "profiles": ["u", "mix"],
        "profile_specs": {"u": {"kind": "uniform", "low": 0.5, "high": 2.0},
                          "mix": {"kind": "mixture", "groups": [[0.5, 0.5], [0.5, 2.0]]}},
        "n": [500, 2000], "delta": 1e-5, "delta0": [0.0, 1e-10],
        "methods": ["gdp", "fmt21_closed", "efmrtt19", "clones"], "seed": 7,
    }
    table = tmp_path / "pers.csv"
    compute_personalized.main(inputs={}, outputs={"table": str(table)}, params=params)
    df = pd.read_csv(table)
    assert list(df.columns) == compute_personalized.COLUMNS
    assert len(df) == 2 * 2 * 2 * 4 and (df["seed"] == 7).all()
    na = df[df["method"] == "efmrtt19"]
    assert (na["status"] == "not_applicable").all() and na["eps"].isna().all()
    assert na["reason"].str.contains("eps0 <= 0.5|pure LDP only").all()
    ok = df[df["status"] == "ok"]
    assert ok["eps"].notna().all() and (ok["kind"].isin(["upper", "approximate"])).all()
    # the same users for both local deltas: gdp moves only by the (1 - delta0) factor
    g = df[(df["method"] == "gdp") & (df["profile"] == "u")]
    assert (g.groupby("n")["eps"].agg(lambda s: s.max() / s.min() - 1) < 1e-8).all()
    compute_personalized.main(inputs={}, outputs={"table": str(tmp_path / "again.csv")},
                              params=params)
    pd.testing.assert_frame_equal(df.drop(columns="seconds"),
                                  pd.read_csv(tmp_path / "again.csv").drop(columns="seconds"))
    plot_personalized.main(inputs={"table": str(table)},
                           outputs={"png": str(tmp_path / "p.png"), "pdf": str(tmp_path / "p.pdf")})
    assert (tmp_path / "p.png").stat().st_size > 0 and (tmp_path / "p.pdf").stat().st_size > 0
    make_tables.main(inputs={"table": str(table)},
                     outputs={"latex": str(tmp_path / "t.tex"), "markdown": str(tmp_path / "t.md")},
                     params={"table_n": [2000]})
    md = (tmp_path / "t.md").read_text()
    assert "gdp\u2020" in md and "| u | 0 | 2000 |" in md and "n/a" in md
    tex = (tmp_path / "t.tex").read_text()
    assert r"\begin{tabular}" in tex and r"fmt21\_closed" in tex and "500" not in tex
