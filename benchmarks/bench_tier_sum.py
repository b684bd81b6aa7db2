"""Benchmark: ``tier_sum_lower`` on distinct budgets, the direct pipeline against the
many-budgets one (docs/theory.md 13.6, 13.7).

For n users with distinct budgets eps_i ~ Uniform[low, high] (a seeded ``numpy`` Generator),
delta = 1e-6, the Laplace mechanism unless ``--mechanism`` says otherwise: the certified eps of
``tier_sum_lower`` through the pipeline it takes (many-budgets beyond 64 distinct budgets),
and, up to ``--direct-max`` users, through the direct pipeline (one FFT per budget, switched
on by ``tier_sum.MANY_PIPELINE = False``); wall seconds (``time.perf_counter``, caches
cleared) and the peak resident memory of this process so far (``resource``), the frequencies
kept (K), the coarse score's largest value (L) and the FFT size (N).

Run:  python benchmarks/bench_tier_sum.py [--n 10000 100000 1000000] [--seed 0]
      [--mechanism laplace] [--direct-max 30000] [--low 0.5] [--high 2.0]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from shuffledp import BudgetProfile, clear_caches
from shuffledp.bounds import tier_sum as TS

DELTA = 1e-6


def one(profile: BudgetProfile, mechanism: str, many: bool) -> tuple[float, float, str]:
    clear_caches()
    old = TS.MANY_PIPELINE
    TS.MANY_PIPELINE = many
    try:
        t0 = time.perf_counter()
        eps = TS.tier_sum_eps(profile=profile, delta=DELTA, mechanism=mechanism)
        sec = time.perf_counter() - t0
        pl = TS._pipelines(profile, mechanism)[0]
    finally:
        TS.MANY_PIPELINE = old
    shape = (f"K = {pl.k_max}, L = {pl.levels}, N = {pl.n_fft}" if hasattr(pl, "k_max")
             else f"direct, N = {pl.n_fft}")
    return eps, sec, shape


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mechanism", default="laplace")
    ap.add_argument("--direct-max", type=int, default=30_000)
    ap.add_argument("--low", type=float, default=0.5)
    ap.add_argument("--high", type=float, default=2.0)
    args = ap.parse_args()
    print(f"tier_sum_lower, {args.mechanism}, eps_i ~ U[{args.low:g}, {args.high:g}] "
          f"(default_rng({args.seed})), delta = {DELTA:g}")
    print(f"{'n':>9} {'pipeline':<10} {'eps':>10} {'seconds':>8} {'peak MB':>8}  shape")
    for n in args.n:
        rng = np.random.default_rng(args.seed)
        eps_i = rng.uniform(args.low, args.high, size=n)
        delta0 = 1e-8 if args.mechanism.startswith("gaussian") else 0.0
        prof = BudgetProfile.from_arrays(eps_i, np.full(n, delta0))
        runs = [("many", True)] + ([("direct", False)] if n <= args.direct_max else [])
        for label, many in runs:
            eps, sec, shape = one(prof, args.mechanism, many)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
            print(f"{n:>9} {label:<10} {eps:>10.6f} {sec:>8.2f} {peak:>8.0f}  {shape}",
                  flush=True)


if __name__ == "__main__":
    main()
