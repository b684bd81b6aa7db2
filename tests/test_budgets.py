"""Budget profiles: construction, validation, samplers, file parsing."""

from __future__ import annotations

import io

import numpy as np
import pytest

from shuffledp import BudgetProfile, PrivacyTarget
from shuffledp.experiments.profiles import profile_from_spec
from shuffledp.io import load_budgets, parse_budgets_csv, parse_budgets_npy


# (a) reference values --------------------------------------------------------------------
def test_identical_profile_values():
    p = BudgetProfile.identical(n=5, eps0=2.0, delta0=1e-8)
    assert p.n == 5 and p.is_identical and not p.is_pure
    assert np.all(p.eps == 2.0) and np.all(p.delta == 1e-8)


def test_mixture_sizes_sum_to_n():
    p = BudgetProfile.mixture(n=1001, groups=[(0.25, 0.5), (0.25, 1.0), (0.5, 2.0)])
    assert p.n == 1001
    assert int((p.eps == 0.5).sum()) == 250 and int((p.eps == 2.0).sum()) == 501


# (b) invariants -----------------------------------------------------------------------------
def test_profile_is_immutable():
    p = BudgetProfile.from_arrays([1.0, 2.0])
    with pytest.raises(ValueError):
        p.eps[0] = 5.0
    with pytest.raises(AttributeError):
        p.eps = np.array([1.0, 1.0])  # type: ignore[misc]


def test_input_array_is_copied():
    raw = np.array([1.0, 2.0, 3.0])
    p = BudgetProfile.from_arrays(raw)
    raw[0] = 100.0
    assert p.eps[0] == 1.0


def test_samplers_are_seeded_and_in_range():
    a = BudgetProfile.uniform(n=1000, low=0.5, high=2.0, rng=np.random.default_rng(1))
    b = BudgetProfile.uniform(n=1000, low=0.5, high=2.0, rng=np.random.default_rng(1))
    assert np.array_equal(a.eps, b.eps)
    assert a.eps.min() >= 0.5 and a.eps.max() <= 2.0
    c = BudgetProfile.clipped_normal(
        n=1000, mean=0.75, std=0.5, low=0.05, high=1.0, rng=np.random.default_rng(2)
    )
    assert c.eps.min() >= 0.05 and c.eps.max() <= 1.0
    assert (c.eps == 1.0).any() and (c.eps == 0.05).any()  # clipping happens at both ends


def test_profile_from_spec_kinds():
    rng = np.random.default_rng(0)
    for spec in (
        {"kind": "identical", "eps0": 1.0},
        {"kind": "uniform", "low": 0.5, "high": 2.0},
        {"kind": "clipped_normal", "mean": 1.5, "std": 0.5, "low": 0.5, "high": 2.0},
        {"kind": "mixture", "groups": [[0.5, 0.5], [0.5, 2.0, 1e-10]]},
    ):
        p = profile_from_spec(spec, n=100, rng=rng, delta0=0.0)
        assert p.n == 100
    mixed = profile_from_spec(
        {"kind": "mixture", "groups": [[0.5, 0.5], [0.5, 2.0, 1e-10]]}, n=100, rng=rng
    )
    assert set(np.unique(mixed.delta)) == {0.0, 1e-10}


def test_without_and_scaled():
    p = BudgetProfile.from_arrays([1.0, 2.0, 3.0], [0.0, 1e-9, 0.0])
    q = p.without(1)
    assert q.n == 2 and list(q.eps) == [1.0, 3.0] and list(q.delta) == [0.0, 0.0]
    assert list(p.scaled(2.0).eps) == [2.0, 4.0, 6.0]


def test_csv_and_npy_parsing(tmp_path):
    csv = tmp_path / "b.csv"
    csv.write_text("# my deployment\neps,delta\n1.0,0\n2.5,1e-9\n")
    p = load_budgets(csv)
    assert p.n == 2 and list(p.eps) == [1.0, 2.5] and p.delta[1] == 1e-9
    npy = tmp_path / "b.npy"
    np.save(npy, np.array([[1.0, 0.0], [2.0, 1e-8], [3.0, 0.0]]))
    q = load_budgets(npy)
    assert q.n == 3 and q.delta[1] == 1e-8
    buf = io.BytesIO()
    np.save(buf, np.full(4, 0.5))
    assert parse_budgets_npy(buf.getvalue()).n == 4


# (c) bad input -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("eps", "delta", "match"),
    [
        (
            [1.0, -0.5],
            0.0,
            r"eps must be finite and in \[0, 50\] \(the accepted local budgets\), "
            r"got eps\[1\] = -0.5",
        ),
        ([1.0, float("nan")], 0.0, r"eps must be finite.*nan"),
        ([1.0, float("inf")], 0.0, r"eps must be finite.*inf"),
        ([1.0, 1.0], 1.0, r"delta must be in \[0, 1\), got 1.0"),
        ([1.0, 1.0], -1e-3, r"delta must be in \[0, 1\)"),
        ([1.0], 0.0, r"n \(number of users\) must be >= 2, got 1"),
        ([1.0, 2.0, 3.0], [0.0, 0.0], r"delta must be a scalar or have one entry per user"),
    ],
)
def test_bad_arrays(eps, delta, match):
    with pytest.raises(ValueError, match=match):
        BudgetProfile.from_arrays(eps, delta)


def test_non_numeric_arrays_are_type_errors():
    with pytest.raises(TypeError, match=r"eps must be .*real numbers, got list \['a', 'b'\]"):
        BudgetProfile.from_arrays(["a", "b"])


def test_bad_identical():
    with pytest.raises(ValueError, match=r"eps0 must be finite and in \[0, 50\].*, got -1.0"):
        BudgetProfile.identical(n=10, eps0=-1.0)
    with pytest.raises(ValueError, match=r"n \(number of users\) must be >= 2, got 1"):
        BudgetProfile.identical(n=1, eps0=1.0)
    with pytest.raises(TypeError, match="n must be an integer"):
        BudgetProfile.identical(n=2.5, eps0=1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="delta0 must be in"):
        BudgetProfile.identical(n=3, eps0=1.0, delta0=1.0)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "budgets file is empty"),
        ("eps\n", "header but no data rows"),
        ("epsilon\n1\n", "needs a column 'eps'"),
        ("eps\n1.0\nabc\n", r"column 'eps' must be numeric, got 'abc' on data row 2"),
        ("eps,delta\n1.0,x\n2,0\n", r"column 'delta' must be numeric, got 'x'"),
        ("eps,delta\n1.0\n2,0\n", "data row 1 has 1 cells"),
        ("eps\n1.0\n-2\n", r"eps must be finite and in \[0, 50\]"),
    ],
)
def test_bad_csv(text, match):
    with pytest.raises(ValueError, match=match):
        parse_budgets_csv(text)


def test_bad_files(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_budgets(tmp_path / "missing.csv")
    empty = tmp_path / "empty.npy"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="empty"):
        load_budgets(empty)
    bad = tmp_path / "bad.npy"
    np.save(bad, np.zeros((2, 3, 4)))
    with pytest.raises(ValueError, match="shape"):
        load_budgets(bad)


def test_bad_samplers_and_targets():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="low"):
        BudgetProfile.uniform(n=10, low=2.0, high=1.0, rng=rng)
    with pytest.raises(ValueError, match="shares"):
        BudgetProfile.mixture(n=10, groups=[(0.3, 1.0), (0.3, 2.0)])
    with pytest.raises(ValueError, match="std must be"):
        BudgetProfile.clipped_normal(n=10, mean=1, std=-1, low=0, high=2, rng=rng)
    with pytest.raises(ValueError, match="one of eps or delta"):
        PrivacyTarget()
    with pytest.raises(ValueError, match="eps must be finite"):
        PrivacyTarget(eps=-1.0)


# (d) budgets files: CSV dialect, accepted columns, .npy dtypes --------------------------------
def test_csv_bom_quotes_and_header_case(tmp_path):
    f = tmp_path / "b.csv"
    f.write_bytes(b'\xef\xbb\xbf"EPS", "Delta"\r\n"1.5",0\r\n2.0,"1e-9"\r\n')
    p = load_budgets(f)
    assert list(p.eps) == [1.5, 2.0] and list(p.delta) == [0.0, 1e-9]
    assert parse_budgets_csv("\ufeff eps \n1\n2\n").n == 2


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("eps,count\n0.5,4\n2,6.5\n", r"column 'count' must be a whole number .* data row 2"),
        ("eps,eps\n1,1\n2,2\n", "duplicated column 'eps'"),
        ("Eps,EPS\n1,1\n2,2\n", "duplicated column 'eps'"),
        ("user,eps,delta\na,1.0,0\nb,2.5,1e-9\n", r"unknown column\(s\) \['user'\]; accepted"),
        ('"eps"x\n1\n2\n', "not valid CSV"),
    ],
)
def test_csv_columns_are_exactly_eps_delta_and_count(text, match):
    with pytest.raises(ValueError, match=match):
        parse_budgets_csv(text)


def test_budget_tiers_with_counts_are_a_histogram(tmp_path):
    f = tmp_path / "tiers.csv"
    rows = "".join(f"{e},200000000\n" for e in (0.5, 1, 2, 4, 8))  # 10^9 users in 5 tiers
    f.write_text("eps,count\n" + rows)
    p = load_budgets(f)
    assert p.n == 10**9 and p.is_histogram and p.tiers.eps.tolist() == [0.5, 1, 2, 4, 8]
    assert p.tiers.counts.tolist() == [2 * 10**8] * 5 and p.label == "tiers.csv"
    with pytest.raises(ValueError, match=r"n = 1000000000 users is a budget histogram"):
        p.eps  # noqa: B018 - per-user arrays of 10^9 users are refused, not built


@pytest.mark.parametrize(
    ("arr", "match"),
    [
        (np.array([1.0 + 0j, 2.0]), "got dtype complex128"),
        (np.array([True, False]), "got dtype bool"),
        (np.array([1.0, np.nan]), r"eps\[1\] = nan"),
        (np.zeros((3, 3)), r"shape \(n,\), \(n, 1\) or \(n, 2\)"),
        (np.array([(1.0, 3.5)], dtype=[("eps", "f8"), ("count", "f8")]),
         r"field 'count' must hold whole numbers"),
    ],
)
def test_npy_rejects_non_real_and_bad_shapes(arr, match):
    buf = io.BytesIO()
    np.save(buf, arr)
    with pytest.raises(ValueError, match=match):
        parse_budgets_npy(buf.getvalue())


def test_wrong_types_name_the_parameter():
    with pytest.raises(TypeError, match="^rng must be a numpy.random.Generator, got NoneType$"):
        BudgetProfile.uniform(n=10, low=0.5, high=2.0, rng=None)
    with pytest.raises(TypeError, match="^eps0 must be a real number, got str '1.0'$"):
        BudgetProfile.identical(n=10, eps0="1.0")
    with pytest.raises(TypeError, match="^text must be a str, got NoneType None$"):
        parse_budgets_csv(None)
    with pytest.raises(ValueError, match=r"groups\[0\] must have 2 or 3 entries"):
        BudgetProfile.mixture(n=10, groups=[(1.0,)])
    with pytest.raises(TypeError, match="high must be a real number, got str"):
        BudgetProfile.uniform(n=10, low=0.5, high="2", rng=np.random.default_rng(0))


def test_mixture_sizes_never_negative():
    p = BudgetProfile.mixture(n=3, groups=[(1 / 6, float(k)) for k in range(6)])
    assert p.n == 3
