"""The ``blanket`` bound's fast paths give what the plain computations give
(docs/theory.md 15.3 (N3), (N6), (N8)).

* :func:`_log_product` by power sums (pools of many classes, low frequencies) against the
  logarithms class by class, computed here with numpy: the difference within the charge it
  returns (``extra``) plus the rounding of the plain sum; its ``mod`` and ``sens`` at least the
  plain sums; the class-by-class path taken where the series is not (``extra`` 0).
* The Newton search of the Chernoff tilt on a coarse copy first (laws of more than
  ``COARSE_FACTOR * NEWTON_COARSE_POINTS`` points): the exponent it returns is the exponent at
  its theta, and within 1e-9 of the search on the law alone and of scipy's bounded
  minimization; a law whose coarse blocks all have mean <= 0 (no aim) still works.
* Sparse laws (points of positive mass spread over a long lattice): the searches run over the
  points of positive mass only, with the same sums and a tilt as good.
* The caches keyed by read-only arrays (:func:`shuffledp.caching.lru_by_arrays`): the merged
  pool equals :func:`_merged` of the masses less the victim, is taken again for the same
  read-only arrays and never stored for writeable ones; the Gaussian and OUE cases built with
  the cached masses equal the plain functions'.
"""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
import pytest

from shuffledp import BudgetProfile, clear_caches
from shuffledp.bounds.blanket import tilt
from shuffledp.bounds.blanket.amplification import (
    SERIES_TERMS,
    LatticeLaw,
    _best_theta,
    _log_mgf_r,
    _log_pos_moment,
    _log_product,
)
from shuffledp.bounds.blanket.bound import VICTIM_GROUPS, blanket_plan
from shuffledp.bounds.blanket.pool import _POOLS, _merged, _merged_pool
from shuffledp.caching import frozen_array, lru_by_arrays
from shuffledp.families import get_family
from shuffledp.families.gaussian_blanket import gaussian_masses, masses_of

_U = float(np.finfo(float).eps) / 2.0


def _plain(pk, w1, counts):
    """The sums class by class, each logarithm accurate to a few u of itself (log(1 + u) =
    log1p(2 Re u + |u|^2) / 2 + i atan2(Im u, 1 + Re u): no cancellation for small u)."""
    u = w1[:, None] * (pk[None, :] - 1.0)
    lg = 0.5 * np.log1p(2.0 * u.real + np.abs(u) ** 2) + 1j * np.arctan2(u.imag, 1.0 + u.real)
    return counts @ lg, counts @ np.abs(lg), (counts * w1) @ (1.0 / np.abs(1.0 + u))


@pytest.mark.parametrize("seed", range(6))
def test_log_product_by_power_sums_is_within_its_charge(seed):
    rng = np.random.default_rng([20261207, seed])
    k = int(rng.integers(SERIES_TERMS + 1, 400))
    w1 = rng.uniform(0.0, rng.uniform(0.3, 1.0), k)
    counts = rng.integers(1, 10 ** int(rng.integers(1, 6)), k).astype(float)
    # frequencies near 0 (|phi - 1| small) and some far ones (phases anywhere)
    near = 1.0 + rng.uniform(1e-6, 0.3, 300) * np.exp(1j * rng.uniform(0, 2 * math.pi, 300))
    far = rng.uniform(0.0, 1.0, 50) * np.exp(1j * rng.uniform(0, 2 * math.pi, 50))
    pk = np.concatenate([near, far])
    log_r, mod, sens, extra = _log_product(pk, w1, counts)
    ref, ref_mod, ref_sens = _plain(pk, w1, counts)
    series = extra > 0.0
    assert series.any() and not series.all()
    # the plain sum's own rounding: a few u per term and the sum
    slack = (k + 8.0) * _U * ref_mod + 1e-300
    err = np.abs(log_r - ref)
    assert np.all(err <= extra + slack), float(np.max(err - extra - slack))
    assert np.all(mod >= ref_mod * (1.0 - 1e-12))
    assert np.all(sens >= ref_sens * (1.0 - 1e-12))
    # where the series is not taken the logarithms are, class by class (of the rounded 1 + u:
    # u of each logarithm, absolute)
    assert np.all(err[~series] <= slack[~series] + 4.0 * _U * counts.sum())


def test_log_product_of_few_classes_takes_the_logarithms():
    w1 = np.array([0.2, 0.5])
    counts = np.array([3.0, 7.0])
    pk = 1.0 + 1e-3 * np.exp(1j * np.linspace(0, 6, 9))
    log_r, mod, sens, extra = _log_product(pk, w1, counts)
    assert np.all(extra == 0.0)
    ref, ref_mod, ref_sens = _plain(pk, w1, counts)
    np.testing.assert_allclose(log_r, ref, rtol=1e-9)  # (log of the rounded 1 + u)
    np.testing.assert_allclose(sens, ref_sens, rtol=1e-14)


def _wide_law(rng, size):
    off = int(rng.integers(-size, -size // 20))
    x = np.arange(off, off + size, dtype=float)
    centre = off * rng.uniform(0.3, 1.2)
    p = np.exp(-0.5 * ((x - centre) / (size * rng.uniform(0.03, 0.3))) ** 2)
    p = p * rng.uniform(0.2, 1.8, size)
    return LatticeLaw(offset=off, pmf=p / p.sum(), step=float(rng.uniform(1e-3, 0.1)))


@pytest.mark.parametrize("seed", range(8))
def test_coarse_first_newton_search_finds_the_same_exponent(seed, monkeypatch):
    from scipy import optimize

    rng = np.random.default_rng([20261207, 11, seed])
    size = int(rng.integers(tilt.COARSE_FACTOR * tilt.NEWTON_COARSE_POINTS + 1, 30000))
    law = _wide_law(rng, size)
    k = int(rng.integers(1, 200))
    g = rng.uniform(0.001, 0.6, k)
    c = rng.integers(1, 10 ** int(rng.integers(1, 7)), k).astype(float)
    theta, value = _best_theta(law, g, c)
    assert value == _log_mgf_r(law, g, c, theta) + _log_pos_moment(law, theta)
    monkeypatch.setattr(tilt, "COARSE_FACTOR", 10 ** 9)  # the search on the law alone
    _, plain = _best_theta(law, g, c)
    assert abs(value - plain) <= 1e-9 * max(1.0, abs(plain))
    top = min(1.0 / law.step, 700.0 / float(np.max(np.abs(law.values))))
    best = optimize.minimize_scalar(
        lambda t: _log_mgf_r(law, g, c, t) + _log_pos_moment(law, t), bounds=(0.0, top),
        method="bounded", options={"xatol": 1e-12 * top})
    assert value <= min(best.fun, plain) + 1e-9 * max(1.0, abs(best.fun))


@pytest.mark.parametrize("seed", range(6))
def test_a_sparse_law_is_searched_on_its_points_of_positive_mass(seed, monkeypatch):
    """A law of a few hundred points of positive mass spread over thousands of lattice
    points: ``support`` holds exactly those points, ``mass`` is the correctly rounded sum of
    the pmf, the log moment generating function over the support is the one over the whole
    lattice (computed here with numpy), and the tilt found (a grid when the support has at
    most ``GRID_MAX_POINTS`` points, whatever the lattice's size; Newton's search beyond) has
    the exponent it reports, within 1e-9 of scipy's bounded minimization."""
    from scipy import optimize

    rng = np.random.default_rng([20261207, 31, seed])
    size = int(rng.integers(3000, 30000))
    keep = int(rng.integers(50, 3 * tilt.GRID_MAX_POINTS))
    p = np.zeros(size)
    p[rng.choice(np.arange(1, size - 1), keep - 2, replace=False)] = rng.random(keep - 2)
    p[0], p[-1] = rng.uniform(1e-9, 1e-3), rng.uniform(1e-9, 1e-3)
    off = int(rng.integers(-size + 10, -size // 3))
    law = LatticeLaw(offset=off, pmf=p / p.sum(), step=float(rng.uniform(1e-3, 0.1)))
    x, lp = law.support
    pos = law.pmf > 0
    assert np.array_equal(x, law.values[pos]) and np.array_equal(lp, np.log(law.pmf[pos]))
    assert x.size == keep and law.mass == math.fsum(law.pmf)
    top = min(1.0 / law.step, 700.0 / float(np.max(np.abs(law.values))))
    for t in (0.0, 1e-3 * top, 0.3 * top, top):
        z = t * law.values
        zm = float(np.max(z[pos]))
        dense = zm + math.log(float(np.sum(law.pmf * np.exp(z - zm))))
        assert tilt._log_mgf(law, t) == pytest.approx(dense, rel=1e-13, abs=1e-13)
    k = int(rng.integers(1, 60))
    g = rng.uniform(0.001, 0.6, k)
    c = rng.integers(1, 10 ** int(rng.integers(1, 7)), k).astype(float)
    if keep <= tilt.GRID_MAX_POINTS:  # the grid, though the lattice has thousands of points
        monkeypatch.setattr(tilt, "_newton_theta", None)
    theta, value = _best_theta(law, g, c)
    assert value == _log_mgf_r(law, g, c, theta) + _log_pos_moment(law, theta)
    best = optimize.minimize_scalar(
        lambda t: _log_mgf_r(law, g, c, t) + _log_pos_moment(law, t), bounds=(0.0, top),
        method="bounded", options={"xatol": 1e-12 * top})
    assert value <= best.fun + 1e-9 * max(1.0, abs(best.fun))


def test_newton_search_without_an_aim_when_no_coarse_block_is_positive():
    # a law of 4000 points, all but the last below 0, the last of tiny mass: every block of the
    # coarse copy has a negative mean, so the search starts from 0 on the law itself
    size = 4000
    off = -size + 2
    p = np.full(size, 1.0)
    p[-1] = 1e-9
    law = LatticeLaw(offset=off, pmf=p / p.sum(), step=0.01)
    g, c = np.array([0.3]), np.array([50.0])
    coarse = tilt._coarse_arrays(law, -(-size // tilt.NEWTON_COARSE_POINTS))
    assert coarse[3].size == 0
    theta, value = _best_theta(law, g, c)
    assert math.isfinite(value)
    assert value == _log_mgf_r(law, g, c, theta) + _log_pos_moment(law, theta)


def test_merged_pool_is_the_merge_less_the_victim_and_is_cached_by_identity():
    clear_caches()
    rng = np.random.default_rng(5)
    masses = frozen_array(np.round(rng.uniform(0.0, 0.8, 500), 3))
    counts = frozen_array(rng.integers(1, 40, 500).astype(np.int64))
    cnt = counts.copy()
    cnt[17] -= 1
    want = _merged(masses, cnt)
    got = _merged_pool(masses, counts, 17)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert len(_POOLS) == 1
    again = _merged_pool(masses, counts, 17)
    assert again[0] is got[0]  # the entry itself
    # writeable arrays: the same values, nothing stored
    _merged_pool(np.array(masses), np.array(counts), 17)
    assert len(_POOLS) == 1
    other = _merged_pool(masses, counts, 3)  # another victim: another entry
    cnt = counts.copy()
    cnt[3] -= 1
    assert len(_POOLS) == 2
    np.testing.assert_array_equal(other[1], _merged(masses, cnt)[1])


def test_lru_by_arrays_takes_only_the_same_objects():
    cache: OrderedDict = OrderedDict()
    x = frozen_array(np.arange(4.0))
    y = frozen_array(np.arange(4.0))  # equal content, another object
    calls = []

    def compute(a):
        calls.append(1)
        return float(a.sum())

    assert lru_by_arrays(cache, (x,), "k", lambda: compute(x), 8) == 6.0
    assert lru_by_arrays(cache, (x,), "k", lambda: compute(x), 8) == 6.0
    assert lru_by_arrays(cache, (y,), "k", lambda: compute(y), 8) == 6.0
    assert len(calls) == 2 and len(cache) == 2


@pytest.mark.parametrize("mechanism", ["gaussian", "gaussian_shared", "oue:20"])
def test_cases_with_cached_masses_equal_the_plain_ones(mechanism, monkeypatch):
    """The cases of a group at two eps (the second with every mass from the cache) against
    the cases built with the caches switched off: the same masses, entry for entry."""
    import shuffledp.families.gaussian as gm
    import shuffledp.families.gaussian_shared as gs
    import shuffledp.families.oue_blanket as ob

    clear_caches()
    rng = np.random.default_rng(8)
    n = 3000
    prof = BudgetProfile(eps=rng.uniform(0.5, 2.0, n), delta=np.full(n, 1e-8))
    fam = get_family(mechanism)
    groups, classes = blanket_plan(prof, fam, VICTIM_GROUPS, False)
    assert not classes.counts.flags.writeable  # the plan's arrays are read-only
    g = groups[len(groups) // 2]
    fam.blanket_cases(0.05, g, classes)
    cached = fam.blanket_cases(0.07, g, classes)

    def plain(cache, arrays, key, compute, size):
        return compute()

    monkeypatch.setattr(gm, "cached_masses", lambda arrays, key, compute: compute())
    monkeypatch.setattr(gs, "cached_masses", lambda arrays, key, compute: compute())
    monkeypatch.setattr(ob, "lru_by_arrays", plain)
    clear_caches()
    fresh = fam.blanket_cases(0.07, g, classes)
    assert len(cached) == len(fresh) > 0
    for a, b in zip(cached, fresh, strict=True):
        np.testing.assert_array_equal(np.asarray(a.masses), np.asarray(b.masses))
        np.testing.assert_array_equal(a.law_cells.lo, b.law_cells.lo)
        np.testing.assert_array_equal(a.law_cells.mean, b.law_cells.mean)


def test_gaussian_masses_from_logs_equal_the_public_function():
    rng = np.random.default_rng(9)
    sig_b = rng.uniform(1.0, 20.0, 200)
    sig_a = sig_b * rng.uniform(1.0, 1.5, 200)
    for s_lo, s_hi, c_max in ((0.9, 1.1, 0.0), (3.0, 4.0, 0.5), (0.5, 12.0, 0.99)):
        np.testing.assert_array_equal(masses_of(s_lo, s_hi, c_max, np.log(sig_a), sig_b),
                                      gaussian_masses(s_lo, s_hi, c_max, sig_a, sig_b))


@pytest.mark.parametrize("l_, q", [(40, 0.3), (3000, 0.05), (200_000, 0.135), (10 ** 6, 0.0067)])
def test_two_region_weights_are_one_raised_pmf_times_the_exact_ratio(l_, q):
    """:func:`_weights`: ``b1`` at least the exact pmf of Bin(l, q) (mpmath, 40 digits) and
    within BETA_REL of it, ``b2 = b1 * beta(c2 - 1) / beta(c2)`` to a few u (so that a term,
    homogeneous in its two weights, is its true value times ``b1 / beta(c2) >= 1``)."""
    import mpmath as mp

    from shuffledp.bounds.blanket.binomial import BETA_REL, _beta, _weights

    mp.mp.dps = 40
    beta, lo2, hi2, _ = _beta(l_, q)
    c2 = np.arange(lo2, hi2 + 2)
    b1, b2 = _weights(beta, lo2, c2, l_, q)
    picks = np.unique(np.linspace(0, c2.size - 2, 9).astype(int))
    for i in picks:
        c = int(c2[i])
        exact = mp.binomial(l_, c) * mp.mpf(q) ** c * (1 - mp.mpf(q)) ** (l_ - c)
        assert b1[i] >= float(exact) * (1.0 - 1e-15)
        assert b1[i] <= float(exact) * (1.0 + 2.0 * BETA_REL)
        if c >= 1:
            ratio = mp.mpf(c) * (1 - mp.mpf(q)) / ((l_ - c + 1) * mp.mpf(q))
            assert abs(b2[i] / b1[i] - float(ratio)) <= 1e-14 * float(ratio)
    # beyond hi2 the term is linear in the last weight: the raised pmf itself
    assert b1[-1] == 0.0 and b2[-1] == beta[-2]
