"""OUE's blanket across budgets (shuffledp.families.oue_blanket, docs/theory.md 15.4 "OUE across
budgets"): each ingredient against a direct enumeration of the report cube, and the bound with
only these choices against the exact shuffled divergence."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from shuffledp.families import oue_blanket
from shuffledp.families.oue_blanket import oue_window_case


def _q(e: float) -> float:
    return 1.0 / (math.exp(e) + 1.0)


def _report_law(e: float, d: int, x: int) -> dict[tuple, float]:
    """R_e(x) on {0,1}^d by enumeration: the true bit 1 with probability 1/2, the others
    Bernoulli(q_e)."""
    bits = np.array(list(itertools.product((0, 1), repeat=d)))
    one = np.where(np.arange(d) == x, 0.5, _q(e))  # Pr[bit = 1] per position
    p = np.prod(np.where(bits == 1, one, 1.0 - one), axis=1)
    return {tuple(int(b) for b in y): float(v) for y, v in zip(bits, p, strict=True)}


def _case(d, eps, v_lo, v_hi, r, tail, users):
    lo = np.array([u[0] for u in users])
    hi = np.array([u[1] for u in users])
    return oue_window_case(d, eps, v_lo, v_hi, r, tail, lo, hi, np.zeros(len(users)))


def _omega(d: int, r: float, k1: int, k2: int) -> dict[tuple, float]:
    inf = {y: min(_report_law(r, d, x)[y] for x in range(d))
           for y in itertools.product((0, 1), repeat=d) if k1 <= sum(y) <= k2}
    z = sum(inf.values())
    return {y: v / z for y, v in inf.items()}


@pytest.mark.parametrize("seed", range(12))
def test_masses_charge_and_atoms_dominate_the_enumeration(seed):
    """For a random group of victim budgets, reference, window tail and user classes: every
    user of a class has at least the class's mass against omega (at every report of the
    window, every input), the charge is at least every victim's mass outside the window, and
    every victim budget of the group has l-values at most the atoms' (pointwise, by report
    pattern (y_0, y_1, weight))."""
    rng = np.random.default_rng([20261207, seed])
    d = int(rng.integers(3, 8))
    v_lo = float(rng.uniform(0.05, 3.0))
    v_hi = v_lo * float(rng.uniform(1.0, 1.3))
    r = float(rng.uniform(v_lo, v_hi))
    tail = float(rng.choice([0.3, 0.1, 0.02, 0.0]))
    eps = float(rng.uniform(0.0, 1.0))
    users = []
    for _ in range(4):
        a = float(rng.uniform(0.05, 4.0))
        users.append((a, a * float(rng.uniform(1.0, 1.2))))
    cells, masses, charge = _case(d, eps, v_lo, v_hi, r, tail, users)
    k1, k2, _ = oue_blanket._window(d, tail, v_lo, v_hi)
    omega = _omega(d, r, k1, k2)
    for (a, b), m in zip(users, masses, strict=True):
        for e in np.linspace(a, b, 5):
            laws = [_report_law(float(e), d, x) for x in range(d)]
            worst = min(law[y] / w for law in laws for y, w in omega.items())
            assert m <= worst * (1.0 + 1e-12), (e, m, worst)
    for u in np.linspace(v_lo, v_hi, 7):
        p0 = _report_law(float(u), d, 0)
        p1 = _report_law(float(u), d, 1)
        out = sum(p for y, p in p0.items() if y not in omega)
        assert charge >= out * (1.0 - 1e-12) - 1e-300, (u, charge, out)
        # l at each report of the window, the largest per pattern (y_0, y_1, weight)
        top: dict[tuple, float] = {}
        for y, w in omega.items():
            key = (y[0], y[1], sum(y))
            val = (p0[y] - math.exp(eps) * p1[y]) / w
            top[key] = max(top.get(key, -math.inf), val)
        assert max(top.values()) <= float(cells.hi.max()) + 1e-12
        # the atoms in their order: patterns (0,0), (1,0), (0,1), (1,1), weights k1..k2
        keys = [(a, b, k) for a, b in ((0, 0), (1, 0), (0, 1), (1, 1))
                for k in range(k1, k2 + 1) if 0 <= k - a - b <= d - 2]
        assert len(keys) == cells.hi.size
        for key, got, mass in zip(keys, cells.hi, cells.mass, strict=True):
            want = top.get(key)
            if want is None:  # (no report of this pattern in the window)
                assert mass == 0.0
                continue
            assert got >= want - 1e-12 * (1.0 + abs(want)), (key, u, got, want)
            w = sum(v for y, v in omega.items() if (y[0], y[1], sum(y)) == key)
            assert mass == pytest.approx(w, rel=1e-12)
    # the atoms' omega-masses are the law of the pattern under omega
    assert cells.mass.sum() == pytest.approx(1.0, rel=1e-12)


def test_window_is_whole_cube_without_a_tail_and_cut_with_one():
    assert oue_blanket._window(100, 0.0, 0.5, 0.6) == (0, 100, 0.0)
    k1, k2, charge = oue_blanket._window(100, 1e-11, 0.5, 0.6)
    assert 0 < k1 < k2 < 100
    assert 0.0 < charge <= 2.0000001e-11


@pytest.mark.parametrize("seed", range(12))
def test_atoms_and_masses_against_50_digit_arithmetic(seed):
    """The floating point of the atoms' values and the masses (docs/theory.md 15.4 "OUE across
    budgets"): at d up to 400, budgets up to 12 and narrow groups (where log rho is a small
    difference), every atom's value plus the case's value error (``mean_error`` over the mass)
    is at least the 50-digit value of every victim budget on a grid of the range, every mass
    is at most the 50-digit mass of every budget on a grid of its class, and the charge is at
    least the 50-digit cut mass; no tolerance."""
    mpmath = pytest.importorskip("mpmath")
    mp = mpmath.mp
    mp.dps = 50
    rng = np.random.default_rng([20261207, 100 + seed])
    d = int(rng.choice([8, 50, 100, 400]))
    v_lo = float(rng.uniform(0.2, 3.0) if seed % 2 else rng.uniform(5.0, 12.0))
    v_hi = v_lo * float(1.0 + 10.0 ** rng.uniform(-4, -1.5))
    r = 0.5 * (v_lo + v_hi)
    eps = float(rng.uniform(0.0, 0.5))
    users = [(a, a * 1.001) for a in rng.uniform(0.2, 3.0, 3)] + [(r, r)]
    cells, masses, charge = _case(d, eps, v_lo, v_hi, r, 1e-12, users)
    k1, k2, _ = oue_blanket._window(d, 1e-12, v_lo, v_hi)

    def q(e):
        return 1 / (mpmath.exp(mpmath.mpf(e)) + 1)

    def g(e, k):  # the infimum's mass at one report of weight k
        qe = q(e)
        h = 1 / (2 * (1 - qe)) if k < d else 1 / (2 * qe)
        return qe ** k * (1 - qe) ** (d - k) * h

    z = sum(mpmath.binomial(d, k) * g(r, k) for k in range(k1, k2 + 1))
    keys = [(a, b, k) for a, b in ((0, 0), (1, 0), (0, 1), (1, 1))
            for k in range(k1, k2 + 1) if 0 <= k - a - b <= d - 2]
    v_err = cells.mean_error / cells.mass.sum()
    big = mpmath.exp(eps)
    for u in np.linspace(v_lo, v_hi, 9):
        qu = q(u)
        for (a, b, k), got in zip(keys, cells.hi, strict=True):
            rho = (qu / q(r)) ** k * ((1 - qu) / (1 - q(r))) ** (d - k)
            h_r = g(r, k) / (q(r) ** k * (1 - q(r)) ** (d - k))
            f = {1: 1 / (2 * qu), 0: 1 / (2 * (1 - qu))}
            true = z * rho / h_r * (f[a] - big * f[b])
            assert mpmath.mpf(float(got)) + mpmath.mpf(v_err) >= true, (d, u, a, b, k)
    for (lo, hi), m in zip(users, masses, strict=True):
        for e in np.linspace(lo, hi, 5):
            true = z * min(g(float(e), k) / g(r, k) for k in {k1, min(k2, d - 1), k2})
            assert mpmath.mpf(float(m)) <= true
    cut = mpmath.mpf(0)
    for u in (v_lo, v_hi):
        qu = q(u)
        pmf = [mpmath.binomial(d - 1, j) * qu ** j * (1 - qu) ** (d - 1 - j) for j in range(d)]
        law = [(pmf[k] if k < d else 0) / 2 + (pmf[k - 1] if k >= 1 else 0) / 2
               for k in range(d + 1)]
        cut = max(cut, sum(law[:k1]) + sum(law[k2 + 1:]))
    assert mpmath.mpf(charge) >= cut


@pytest.mark.parametrize("d", [3, 4, 6])
def test_weight_windows_masses_against_the_enumerated_cube(d):
    """``window_lower``'s windows with a range of the number of ones (docs/theory.md 13.2,
    "OUE's number of ones"): the masses of W_L = bits (1, 0), W_R = (0, 1) with ``lo <= |y| <=
    hi`` and the rest, for a user at category 0, 1 or 2, equal the enumerated cube's within
    their stated error bounds (plus 1e-15 for the enumeration's own sums), and sum to 1."""
    from shuffledp.families import get_family
    from shuffledp.families.windows import Window

    fam = get_family(f"oue:{d}")
    eps = np.array([0.05, 0.5, 1.3, 4.0, 9.0])
    for lo, hi in [(1, 1), (1, d - 1), (2, d - 1), (1, 2), (d - 1, d - 1)]:
        window = Window("test", float(lo), float(hi))
        for x in (0, 1, 2):
            a, o, b, ea, eo, eb = fam.cell_masses(x, eps, np.zeros_like(eps), window)
            for i, e in enumerate(eps):
                law = _report_law(float(e), d, x)
                want_a = sum(p for y, p in law.items() if (y[0], y[1]) == (1, 0)
                             and lo <= sum(y) <= hi)
                want_b = sum(p for y, p in law.items() if (y[0], y[1]) == (0, 1)
                             and lo <= sum(y) <= hi)
                assert abs(a[i] - want_a) <= ea[i] + 1e-15, (lo, hi, x, e, a[i], want_a)
                assert abs(b[i] - want_b) <= eb[i] + 1e-15, (lo, hi, x, e, b[i], want_b)
                assert abs(o[i] - (1.0 - want_a - want_b)) <= eo[i] + 1e-15
            assert np.allclose(a + o + b, 1.0, rtol=0, atol=1e-14)


def test_weight_windows_only_where_budgets_differ():
    from shuffledp.families import get_family

    fam = get_family("oue:100")
    assert fam.profile_windows(1.0, 0.0, np.array([1.0, 1.0])) == []
    below = {c.window.label for c in fam.profile_windows(4.0, 0.0, np.array([0.5]))}
    above = {c.window.label for c in fam.profile_windows(0.5, 0.0, np.array([4.0]))}
    assert below and all("at most" in w for w in below)
    assert above and all("at least" in w for w in above)
    assert get_family("oue:2").profile_windows(4.0, 0.0, np.array([0.5])) == []


@pytest.mark.parametrize("m", [1, 7, 98, 901, 2000])
def test_binomial_range_within_its_bound_of_50_digit_sums(m, monkeypatch):
    """Both paths of ``binomial_range`` (the recurrence up to ``_RECURRENCE_MAX`` trials, the
    logs beyond; each forced at m = 98 and 901): every inside and outside sum within its
    stated relative error (plus ``RANGE_TINY``) of the 50-digit sum, at budgets from 0 to 12,
    for prefix, suffix, inner and empty ranges."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 50
    eps = np.array([0.0, 0.3, 1.0, 2.5, 6.0, 12.0])
    ranges = [(0, m // 3), (m // 2, m), (m // 4, (3 * m) // 4), (m + 5, m + 9)]
    for cap in ({98: 97, 901: 2000}.get(m), None):
        if cap is not None:
            monkeypatch.setattr(oue_blanket, "_RECURRENCE_MAX", cap)
        inside, outside, rel = oue_blanket.binomial_range(m, eps, ranges)
        for i, e in enumerate(eps):
            q = 1 / (mpmath.exp(mpmath.mpf(float(e))) + 1)
            pmf = [mpmath.binomial(m, j) * q ** j * (1 - q) ** (m - j) for j in range(m + 1)]
            for k, (lo, hi) in enumerate(ranges):
                want_in = mpmath.fsum(pmf[j] for j in range(m + 1) if lo <= j <= hi)
                want_out = mpmath.fsum(pmf[j] for j in range(m + 1) if not lo <= j <= hi)
                for got, want in ((inside[k][i], want_in), (outside[k][i], want_out)):
                    err = abs(mpmath.mpf(float(got)) - want)
                    assert err <= rel[i] * want + oue_blanket.RANGE_TINY, (m, e, lo, hi)
        monkeypatch.undo()
