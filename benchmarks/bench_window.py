"""Benchmark: the certified lower bound ``window_lower`` on personalized profiles.

Profiles: n users with distinct budgets eps_i ~ Uniform[0.5, 2] (seeded), delta_i = 0 (pure
randomizers) or 1e-8 (the Gaussian mechanism, which needs local delta), and the tiered profile
"one user at eps 4, the others at 0.5" of issue 12.  For each randomizer the script times one
full ``Bound.evaluate(delta=1e-6)`` from cold caches (:func:`shuffledp.clear_caches`, a fresh
profile object) and prints the certified eps, the seconds and the number of exactly computed
pairs.  The target of issue 12: a few seconds at n = 10^5 with distinct budgets on a 2-core
machine.

Run:  python benchmarks/bench_window.py [--n 100000] [--seed 0]
      [--mechanisms laplace piecewise ...] [--repeat 1]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from shuffledp import BudgetProfile, clear_caches, get_bound

MECHANISMS = ("laplace", "piecewise", "gaussian", "duchi", "krr:10")
GAUSSIAN_DELTA0 = 1e-8


def _timed(eps: np.ndarray, mechanism: str, repeat: int, delta: float) -> tuple[float, float,
                                                                                  int]:
    best, value, pairs = float("inf"), float("nan"), 0
    local = GAUSSIAN_DELTA0 if mechanism == "gaussian" else 0.0
    for _ in range(repeat):
        clear_caches()
        profile = BudgetProfile.from_arrays(eps.copy(), np.full(eps.size, local))
        t0 = time.perf_counter()
        res = get_bound("window_lower").evaluate(profile=profile, delta=delta,
                                                 mechanism=mechanism)
        best = min(best, time.perf_counter() - t0)
        value, pairs = res.eps, int(res.diagnostics["pairs_searched"])
    return value, best, pairs


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[100_000])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mechanisms", nargs="+", default=list(MECHANISMS))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--delta", type=float, default=1e-6)
    args = ap.parse_args(argv)
    print(f"{'profile':<22} {'n':>8} {'mechanism':<10} {'eps':>10} {'seconds':>8} {'pairs':>6}")
    for n in args.n:
        profiles = {
            "uniform[0.5,2]": np.random.default_rng(args.seed).uniform(0.5, 2.0, size=n),
            "one at 4, rest 0.5": np.concatenate([[4.0], np.full(n - 1, 0.5)]),
        }
        for name, eps in profiles.items():
            for mech in args.mechanisms:
                value, sec, pairs = _timed(eps, mech, args.repeat, args.delta)
                print(f"{name:<22} {n:>8} {mech:<10} {value:>10.5g} {sec:>8.2f} {pairs:>6}",
                      flush=True)


if __name__ == "__main__":
    main()
