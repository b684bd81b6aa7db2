"""Budget profiles: construction, validation, samplers, file parsing."""

from __future__ import annotations

import io

import numpy as np
import pytest

from shuffledp import BudgetProfile, PrivacyTarget
from shuffledp.io import load_budgets
from shuffledp.params import profile_from_spec


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
    csv.write_text("# my deployment\nuser,eps,delta\na,1.0,0\nb,2.5,1e-9\n")
    p = load_budgets(csv)
    assert p.n == 2 and list(p.eps) == [1.0, 2.5] and p.delta[1] == 1e-9
    npy = tmp_path / "b.npy"
    np.save(npy, np.array([[1.0, 0.0], [2.0, 1e-8], [3.0, 0.0]]))
    q = load_budgets(npy)
    assert q.n == 3 and q.delta[1] == 1e-8
    buf = io.BytesIO()
    np.save(buf, np.full(4, 0.5))
    assert BudgetProfile.from_npy_bytes(buf.getvalue()).n == 4


# (c) bad input -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("eps", "delta", "match"),
    [
        ([1.0, -0.5], 0.0, r"eps must be finite and in \[0, 50\] \(the accepted local budgets\), got eps\[1\] = -0.5"),
        ([1.0, float("nan")], 0.0, r"eps must be finite.*nan"),
        ([1.0, float("inf")], 0.0, r"eps must be finite.*inf"),
        ([1.0, 1.0], 1.0, r"delta must be in \[0, 1\), got 1.0"),
        ([1.0, 1.0], -1e-3, r"delta must be in \[0, 1\)"),
        ([1.0], 0.0, r"n \(number of users\) must be >= 2, got 1"),
        ([1.0, 2.0, 3.0], [0.0, 0.0], r"delta must be a scalar or have one entry per user"),
        (["a", "b"], 0.0, r"eps must be numeric"),
    ],
)
def test_bad_arrays(eps, delta, match):
    with pytest.raises(ValueError, match=match):
        BudgetProfile.from_arrays(eps, delta)


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
        BudgetProfile.from_csv_text(text)


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
