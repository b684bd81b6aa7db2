"""UNCERTIFIED estimate: the two-region blanket for the Laplace victims of the smallest budgets.

docs/theory.md 15.4, "A path, not yet a bound".  The victim-shaped blanket ``omega = Lap(0, b_v)``
is split into its centre ``[-T, T]`` (``nu_1``) and its tails (``nu_2``), ``q = omega(tails)``.
The *low* users (budgets at most the victim's) cover ``omega``; the *high* users cover only
``nu_1``.  With ``h`` high and ``l`` low blanket reports, the divergence of the victim's report
among them is exactly

    sum_{c2} E[(beta(c2) / c1 * S_1 + beta(c2 - 1) / c2 * S_2)_+],   beta = Bin(l, q),

``c1 + c2 = h + l + 1``, ``S_1`` a sum of ``c1`` i.i.d. ``l_1 = (p_0 - E p_1) / nu_1`` under
``nu_1``, ``S_2`` of ``c2`` i.i.d. ``l_2`` under ``nu_2`` (two atoms: ``l_2`` is constant on each
tail).  ``--check`` verifies that identity against brute-force enumeration of the multisets on
random discrete laws.  The estimate takes the pair (1, -1) only (the pair reduction is not
proven), ``h`` and ``l`` six standard deviations below their means, and a nearest-point lattice
for ``l_1`` (not a dominating one): evidence of what the construction could give, NOT a bound
(it is registered nowhere and used nowhere).

Run:  python benchmarks/laplace_two_region_estimate.py [--check] [--profile normal_1.5_0.5]
      [--n 10000] [--t-scales 1 2 3] [--eps 0.06 0.07 0.08 0.09]
"""

from __future__ import annotations

import argparse
import itertools
import math
from collections import defaultdict

import numpy as np
from bench_blanket import paper_config
from scipy import stats

from shuffledp.experiments.sweeps import draw_budgets

FFT_SIZE = 1 << 19
GRID = 200_001


def _multiset_law(p, centre, omega, h: int, l_: int) -> dict:
    """Law of the sorted outputs: one report of ``p``, ``h`` of ``centre``, ``l_`` of ``omega``."""
    out: dict = defaultdict(float)
    for seq in itertools.product(range(4), repeat=1 + h + l_):
        pr = p[seq[0]] * np.prod(centre[list(seq[1:1 + h])]) * np.prod(omega[list(seq[1 + h:])])
        if pr > 0:
            out[tuple(sorted(seq))] += pr
    return out


def check_identity(trials: int = 200, seed: int = 1) -> float:
    """Largest relative difference between the two-region formula and the exact multiset
    divergence (enumerated) on random discrete instances: outputs 0, 1 in the centre and 2, 3 in
    the tails, ``h <= 2`` centre-only blanket reports, ``l <= 3`` reports of ``omega``."""
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(trials):
        nu1, nu2 = rng.dirichlet([1, 1]), rng.dirichlet([1, 1])
        q = rng.uniform(0.05, 0.9)
        omega = np.concatenate([(1 - q) * nu1, q * nu2])
        centre = np.concatenate([nu1, [0.0, 0.0]])
        p0, p1 = rng.dirichlet([1] * 4), rng.dirichlet([1] * 4)
        big_e = math.exp(rng.uniform(0, 1))
        h, l_ = int(rng.integers(0, 3)), int(rng.integers(0, 4))

        a = _multiset_law(p0, centre, omega, h, l_)
        b = _multiset_law(p1, centre, omega, h, l_)
        exact = sum(max(a.get(k, 0.0) - big_e * b.get(k, 0.0), 0.0) for k in set(a) | set(b))
        l1 = (p0[:2] - big_e * p1[:2]) / nu1
        l2 = (p0[2:] - big_e * p1[2:]) / nu2
        total = 0.0
        for c2 in range(h + l_ + 2):
            c1 = h + l_ + 1 - c2
            w1 = stats.binom.pmf(c2, l_, q) / c1 if c1 > 0 else 0.0
            w2 = stats.binom.pmf(c2 - 1, l_, q) / c2 if c2 > 0 else 0.0
            for s1 in itertools.product(range(2), repeat=c1):
                for s2 in itertools.product(range(2), repeat=c2):
                    pr = np.prod(nu1[list(s1)]) * np.prod(nu2[list(s2)])
                    total += pr * max(w1 * l1[list(s1)].sum() + w2 * l2[list(s2)].sum(), 0.0)
        worst = max(worst, abs(total - exact) / max(exact, 1e-12))
    return worst


def estimate_delta(eps_v: float, others: np.ndarray, t_cut: float, eps: float) -> float:
    """The uncertified two-region value at ``eps`` for a victim of budget ``eps_v``."""
    b = 2.0 / eps_v
    q = math.exp(-t_cut / b)
    low, high = others[others <= eps_v], others[others > eps_v]
    g_low = (low / eps_v) * np.exp(-low / 2.0)
    g_high = (high / eps_v) * np.exp(-high / 2.0 - t_cut * (high - eps_v) / 2.0) / (1.0 - q)

    def quantile(g):
        return max(0, int(g.sum() - 6.0 * math.sqrt(float((g * (1.0 - g)).sum()))))

    l0, h0 = quantile(g_low), quantile(g_high)
    big_e = math.exp(eps)
    w = np.linspace(-t_cut, t_cut, GRID)
    nu1 = np.exp(-np.abs(w) / b)
    m1 = nu1 / nu1.sum()
    nu1 = nu1 / (2.0 * b * (1.0 - q))  # the density of omega restricted to the centre
    lap = lambda x: np.exp(-np.abs(w - x) / b) / (2.0 * b)  # noqa: E731
    l1 = (lap(1.0) - big_e * lap(-1.0)) / nu1
    u = math.exp(1.0 / b)
    right, left = q * (u - big_e / u), q * (1.0 / u - big_e * u)  # l_2 on each tail
    step = math.sqrt(float(np.dot(m1, l1 ** 2) - np.dot(m1, l1) ** 2)) / 24.0
    k = np.rint(l1 / step).astype(np.int64)
    k0 = int(k.min())
    spec = np.fft.rfft(np.bincount(k - k0, weights=m1), FFT_SIZE)
    idx = np.arange(FFT_SIZE)
    total = 0.0
    spread = 8.0 * math.sqrt(l0 * q) + 3.0
    for c2 in range(max(0, int(l0 * q - spread)), min(l0 + 1, int(l0 * q + spread)) + 1):
        c1 = h0 + l0 + 1 - c2
        w1 = stats.binom.pmf(c2, l0, q) / c1
        w2 = stats.binom.pmf(c2 - 1, l0, q) / c2 if c2 else 0.0
        pmf = np.maximum(np.fft.irfft(spec ** c1, FFT_SIZE), 0.0)
        mean = c1 * float(np.dot(m1, k - k0))
        vals = (idx + np.floor((mean - idx + FFT_SIZE / 2) / FFT_SIZE) * FFT_SIZE
                + c1 * k0) * step  # unwrapped around the mean
        for kr in range(c2 + 1):
            pk = stats.binom.pmf(kr, c2, 0.5)
            if pk > 1e-15:
                s2 = kr * right + (c2 - kr) * left
                total += pk * float(np.dot(pmf, np.maximum(w1 * vals + w2 * s2, 0.0)))
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="verify the identity and stop")
    ap.add_argument("--profile", default="normal_1.5_0.5")
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--t-scales", type=float, nargs="+", default=[1.0, 2.0, 3.0],
                    help="T in units of the victim's Laplace scale")
    ap.add_argument("--eps", type=float, nargs="+", default=[0.06, 0.07, 0.08, 0.09])
    args = ap.parse_args()
    if args.check:
        print(f"identity vs enumeration, largest relative difference: {check_identity():.2e}")
        return
    cfg = paper_config()
    prof = draw_budgets(args.profile, cfg["profiles"][args.profile], n=args.n,
                        seed=int(cfg["seed"]))
    budgets = np.sort(np.repeat(prof.tiers.eps, prof.tiers.counts))
    eps_v, others = float(budgets[0]), budgets[1:]
    print(f"UNCERTIFIED two-region estimate, {args.profile} n = {args.n}, lowest victim "
          f"eps_v = {eps_v:.4f}, pair (1, -1); delta(eps) per T:")
    for scale in args.t_scales:
        row = [f"{estimate_delta(eps_v, others, scale * 2.0 / eps_v, e):.2e}" for e in args.eps]
        print(f"  T = {scale:g} b_v: " + "  ".join(f"eps {e:g}: {r}" for e, r in
                                                   zip(args.eps, row, strict=True)))


if __name__ == "__main__":
    main()
