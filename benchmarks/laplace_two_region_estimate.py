"""UNCERTIFIED estimate: the two-region blanket for the Laplace victims of the smallest budgets.

docs/theory.md 15.4, "Two coverage regions" (the certified bound is the ``blanket`` bound's
two-region choice; this script is the estimate that motivated it).  The victim-shaped
blanket ``omega = Lap(0, b_v)`` is split into its centre ``[-T, T]`` (``nu_1``) and its tails
(``nu_2``), ``q = omega(tails)``.  The *low* users (budgets at most the victim's) cover
``omega``; the *high* users cover only ``nu_1``.  With ``h`` high and ``l`` low blanket
reports, the divergence of the victim's report among them is exactly

    sum_{c2} E[(beta(c2) / c1 * S_1 + beta(c2 - 1) / c2 * S_2)_+],   beta = Bin(l, q),

``c1 + c2 = h + l + 1``, ``S_1`` a sum of ``c1`` i.i.d. ``l_1 = (p_0 - E p_1) / nu_1`` under
``nu_1``, ``S_2`` of ``c2`` i.i.d. ``l_2`` under ``nu_2`` (two atoms: ``l_2`` is constant on each
tail).  The identity is checked against brute-force enumeration of the multisets in
tests/bounds/test_blanket_two_region.py.  The estimate takes the pair (1, -1) only, ``h`` and
``l`` six standard deviations below their means, and a nearest-point lattice
for ``l_1`` (not a dominating one): evidence of what the construction could give, NOT a bound
(it is registered nowhere and used nowhere).

Run:  python benchmarks/laplace_two_region_estimate.py [--profile normal_1.5_0.5]
      [--n 10000] [--t-scales 1 2 3] [--eps 0.06 0.07 0.08 0.09]
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from bench_blanket import paper_config
from scipy import stats

from shuffledp.experiments.sweeps import draw_budgets

FFT_SIZE = 1 << 19
GRID = 200_001


def estimate_delta(eps_v: float, others: np.ndarray, t_cut: float, eps: float) -> float:
    """The uncertified two-region value at ``eps`` for a victim of budget ``eps_v``."""
    b = 2.0 / eps_v
    q = math.exp(-t_cut / b)
    low, high = others[others <= eps_v], others[others > eps_v]
    g_low = (low / eps_v) * np.exp(-low / 2.0)
    # against nu_1 = omega on the centre / (1 - q): the infimum ratio to omega times (1 - q)
    g_high = (high / eps_v) * np.exp(-high / 2.0 - t_cut * (high - eps_v) / 2.0) * (1.0 - q)

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
    ap.add_argument("--profile", default="normal_1.5_0.5")
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--t-scales", type=float, nargs="+", default=[1.0, 2.0, 3.0],
                    help="T in units of the victim's Laplace scale")
    ap.add_argument("--eps", type=float, nargs="+", default=[0.06, 0.07, 0.08, 0.09])
    args = ap.parse_args()
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
