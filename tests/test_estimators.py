"""Shuffler and shuffled estimators: permutation, unbiasedness within the closed-form standard
error, empirical vs closed-form variance, the labelled mode, and bad input."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from shuffledp.estimators import mse_summary, run_protocol, shuffle
from shuffledp.mechanisms import (
    DuchiMechanism,
    GaussianMechanism,
    GRRMechanism,
    LaplaceMechanism,
    OUEMechanism,
    PiecewiseMechanism,
    permutation_variance,
)

N = 200
REPS = 4000
# heterogeneous budgets (one multiset), and values that are not symmetric around 0
EPS = np.random.default_rng(1).uniform(0.3, 2.0, N)
X = np.clip(np.random.default_rng(2).beta(2.0, 5.0, N) * 2 - 1, -1, 1)

MEAN_MECHS = {
    "laplace": LaplaceMechanism(eps=EPS),
    "duchi": DuchiMechanism(eps=EPS),
    "piecewise": PiecewiseMechanism(eps=EPS),
    "gaussian": GaussianMechanism(eps=EPS, delta=1e-6),
}


def _repeat(mech, x, *, reps, seed, labelled=False, random_assignment=True):
    """Estimates over ``reps`` runs; each run assigns the budgets to users at random (the
    model under which the unlabelled estimators are unbiased) unless told otherwise."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(reps):
        xs = x[rng.permutation(x.shape[0])] if random_assignment else x
        out.append(run_protocol(mech, xs, rng, labelled=labelled))
    return np.array(out)


# (a) reference values ---------------------------------------------------------------------
def test_permutation_variance_by_enumeration():
    import itertools

    a, b = np.array([0.0, 1.0, 3.0]), np.array([2.0, -1.0, 0.5])
    sums = [float(a @ b[list(p)]) for p in itertools.permutations(range(3))]
    assert permutation_variance(a, b) == pytest.approx(np.var(sums))


def test_grr_variance_with_identical_budgets_is_wang_et_al():
    # Wang, Blocki, Li, Jha 2017, Eq. (3) for counts: n q(1-q)/(p-q)^2 + n f (1-p-q)/(p-q)
    n, d, e = 1000, 4, 1.3
    x = np.repeat(np.arange(d), [100, 200, 300, 400])
    m = GRRMechanism(eps=np.full(n, e), d=d)
    p, q = (float(v[0]) for v in m.support_probabilities())
    f = np.array([0.1, 0.2, 0.3, 0.4])
    wang = (n * q * (1 - q) / (p - q) ** 2 + n * f * (1 - p - q) / (p - q)) / n**2
    assert np.allclose(m.variance(x), wang)
    assert np.allclose(m.variance(x, labelled=True), wang)


# (b) shuffler -------------------------------------------------------------------------------
def test_shuffler_returns_a_uniform_permutation():
    rng = np.random.default_rng(0)
    base = np.arange(4)
    counts = Counter(tuple(shuffle(base, rng).tolist()) for _ in range(24_000))
    assert len(counts) == 24 and all(sorted(k) == [0, 1, 2, 3] for k in counts)
    # chi-square with 23 degrees of freedom: 99.9% quantile is 49.7
    chi2 = sum((c - 1000) ** 2 / 1000 for c in counts.values())
    assert chi2 < 49.7
    rows = np.arange(12).reshape(6, 2)
    out, lab = shuffle(rows, rng, labels=np.arange(1.0, 7.0))
    assert sorted(map(tuple, out.tolist())) == sorted(map(tuple, rows.tolist()))
    assert np.array_equal(out[:, 0] // 2 + 1, lab)  # labels travel with their reports


# (c) unbiasedness and variance --------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(MEAN_MECHS))
def test_mean_estimators_unbiased_and_variance_matches(name):
    m = MEAN_MECHS[name]
    est = _repeat(m, X, reps=REPS, seed=10)
    var = m.variance(X)
    se = math.sqrt(var / REPS)
    assert abs(est.mean() - X.mean()) < 4 * se
    # sample variance of REPS draws: relative sd about sqrt(2/REPS) (+ kurtosis); 12% is ~5 sd
    assert est.var(ddof=1) == pytest.approx(var, rel=0.12)


@pytest.mark.parametrize("name", ["duchi", "laplace", "piecewise"])
def test_labelled_mean_estimators_unbiased_for_a_fixed_assignment(name):
    m = MEAN_MECHS[name]
    order = np.argsort(EPS)
    x_adv = np.sort(X)[np.argsort(order)]  # values increasing with the budget: correlated
    est = _repeat(m, x_adv, reps=REPS, seed=20, labelled=True, random_assignment=False)
    var = m.variance(x_adv, labelled=True)
    assert abs(est.mean() - X.mean()) < 4 * math.sqrt(var / REPS)
    assert est.var(ddof=1) == pytest.approx(var, rel=0.12)


def test_unlabelled_duchi_is_biased_when_budgets_follow_the_values():
    """Why the docstrings state the independence condition: large budgets on large values."""
    m = DuchiMechanism(eps=EPS)
    order = np.argsort(EPS)
    x_adv = np.sort(X)[np.argsort(order)]
    est = _repeat(m, x_adv, reps=REPS, seed=21, random_assignment=False)
    c = m.bias_factor()
    expected = float((x_adv * c).sum() / c.sum())  # E[estimate | this assignment]
    se = math.sqrt(m.variance(x_adv, labelled=True) / REPS) * 2
    assert abs(est.mean() - expected) < 4 * se
    assert abs(expected - X.mean()) > 10 * se


@pytest.mark.parametrize("cls", [GRRMechanism, OUEMechanism])
def test_frequency_estimators_unbiased_and_variance_matches(cls):
    d, reps = 5, 3000
    x = np.random.default_rng(4).choice(d, size=N, p=[0.4, 0.3, 0.15, 0.1, 0.05])
    m = cls(eps=EPS, d=d)
    est = _repeat(m, x, reps=reps, seed=30)
    f = np.bincount(x, minlength=d) / N
    var = m.variance(x)
    assert np.all(np.abs(est.mean(axis=0) - f) < 4 * np.sqrt(var / reps))
    assert np.allclose(est.var(axis=0, ddof=1), var, rtol=0.15)
    # labelled mode, fixed assignment
    est_l = _repeat(m, x, reps=reps, seed=31, labelled=True, random_assignment=False)
    var_l = m.variance(x, labelled=True)
    assert np.all(np.abs(est_l.mean(axis=0) - f) < 4 * np.sqrt(var_l / reps))
    assert np.allclose(est_l.var(axis=0, ddof=1), var_l, rtol=0.15)


def test_identical_budgets_labelled_equals_unlabelled():
    rng = np.random.default_rng(8)
    eps = np.full(300, 1.1)
    for m, x in (
        (DuchiMechanism(eps=eps), np.linspace(-1, 1, 300)),
        (GRRMechanism(eps=eps, d=4), np.arange(300) % 4),
        (OUEMechanism(eps=eps, d=4), np.arange(300) % 4),
    ):
        rep = m.randomize(x, rng)
        assert np.allclose(m.estimate(rep), m.estimate(rep, labels=eps))
        assert np.allclose(m.variance(x), m.variance(x, labelled=True))


def test_mse_summary_interval_covers_the_truth():
    rng = np.random.default_rng(9)
    m = LaplaceMechanism(eps=np.full(100, 1.0))
    x = np.zeros(100)
    covered = 0
    for _ in range(200):
        sq = np.array([run_protocol(m, x, rng) ** 2 for _ in range(30)])
        s = mse_summary(sq)
        covered += s.ci_low <= m.variance(x) <= s.ci_high
        assert s.ci_low <= s.mse <= s.ci_high and s.reps == 30
    assert covered >= 170  # nominal 95%; the skewed chi-square makes t intervals a bit short


# (d) bad input ------------------------------------------------------------------------------
def test_bad_input():
    rng = np.random.default_rng(0)
    m = DuchiMechanism(eps=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="one entry per user \\(3\\)"):
        m.estimate(np.array([1, -1]))
    with pytest.raises(ValueError, match="must be -1 or \\+1"):
        m.estimate(np.array([1, 0, -1]))
    with pytest.raises(ValueError, match="labels must have one entry per report \\(3\\)"):
        m.estimate(np.array([1, 1, -1]), labels=[1.0, 2.0])
    with pytest.raises(ValueError, match="labels must have one entry per report"):
        shuffle(np.arange(3), rng, labels=[1.0])
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        shuffle(np.arange(3), None)
    g = GRRMechanism(eps=[1.0, 1.0], d=3)
    with pytest.raises(ValueError, match="categories in \\[0, 3\\)"):
        g.estimate(np.array([0, 5]))
    o = OUEMechanism(eps=[1.0, 1.0], d=3)
    with pytest.raises(ValueError, match="shape \\(n, 3\\)"):
        o.estimate(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="sq_errors"):
        mse_summary([])
