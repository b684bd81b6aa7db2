"""Benchmark: eps(delta = 1e-6) for n = 1e4, 1e5, 1e6 users with distinct budgets.

Budgets eps_i ~ Uniform[0.5, 2] (seeded), local delta_i = 0 (``variation_ratio`` is an
identical-budget bound: it runs at the worst user, eps0 = max eps_i).  For each bound the
script prints the wall time of one full ``Bound.evaluate`` (a fresh profile object per call,
so the clone count cache starts cold) and its ratio to the time of ``gdp``.

Run:  python benchmarks/bench_bounds.py [--n 10000 100000 1000000] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from shuffledp import BudgetProfile, get_bound

METHODS = [("gdp", {}), ("clones", {"clone": "stronger"}), ("clones", {"clone": "standard"}),
           ("rr_exact", {}), ("variation_ratio", {})]


def run(ns: list[int], seed: int, delta: float = 1e-6) -> list[dict]:
    rows = []
    for n in ns:
        rng = np.random.default_rng(seed)
        eps = rng.uniform(0.5, 2.0, size=n)
        base = None
        for name, opts in METHODS:
            profile = BudgetProfile.from_arrays(eps.copy())  # cold cache
            t0 = time.perf_counter()
            res = get_bound(name).evaluate(profile=profile, delta=delta, **opts)
            sec = time.perf_counter() - t0
            if name == "gdp":
                base = sec
            label = name + (f"[{opts['clone']}]" if "clone" in opts else "")
            rows.append({"n": n, "method": label, "eps": res.eps, "seconds": sec,
                         "ratio_to_gdp": sec / base if base else float("nan")})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    get_bound("gdp").evaluate(profile=BudgetProfile.identical(n=10, eps0=1.0), delta=1e-6)
    rows = run(args.n, args.seed)
    print(f"{'n':>9} {'method':<20} {'eps':>10} {'seconds':>9} {'x gdp':>9}")
    for r in rows:
        print(f"{r['n']:>9} {r['method']:<20} {r['eps']:>10.5f} {r['seconds']:>9.3f} "
              f"{r['ratio_to_gdp']:>9.1f}")


if __name__ == "__main__":
    main()
