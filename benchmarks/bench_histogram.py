"""Benchmark: budget histograms, 10^9 users in a few tiers (issue 18, item 1).

Part 1: the histogram "10^9 users in five tiers" (eps 0.5, 1, 2, 4, 8 held by 40 %, 30 %,
20 %, 9 % and 1 % of the users; delta_i = 0).  Every registered bound (default options) is
evaluated from cold caches (:func:`shuffledp.clear_caches`) at the target delta; the script
prints the eps, the seconds and the process's peak resident memory.

Part 2: the same five tiers at ``--n-expanded`` users (default 10^6), once as a histogram
and once as shuffled per-user arrays: the two must give identical numbers for every bound
(the script stops with an error otherwise); both timings are printed.

Run:  python benchmarks/bench_histogram.py [--delta 1e-9] [--n-expanded 1000000]
      [--bounds gdp clones ...] [--skip-expanded]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from shuffledp import BudgetProfile, ParameterRegimeError, clear_caches, get_bound, list_bounds

TIERS_EPS = (0.5, 1.0, 2.0, 4.0, 8.0)
SHARES = (0.40, 0.30, 0.20, 0.09, 0.01)


def _counts(n: int) -> np.ndarray:
    counts = np.floor(np.array(SHARES) * n).astype(np.int64)
    counts[0] += n - int(counts.sum())
    return counts


def _eval(name: str, profile: BudgetProfile, delta: float) -> tuple[float | str, float]:
    clear_caches()
    t0 = time.perf_counter()
    try:
        value: float | str = get_bound(name).eps(profile=profile, delta=delta)
    except ParameterRegimeError as err:
        value = f"n/a ({str(err)[:60]})"
    return value, time.perf_counter() - t0


def _peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delta", type=float, default=1e-9)
    ap.add_argument("--n-expanded", type=int, default=10**6)
    ap.add_argument("--bounds", nargs="*", default=None)
    ap.add_argument("--skip-expanded", action="store_true")
    args = ap.parse_args()
    names = args.bounds or list_bounds()

    hist = BudgetProfile.from_histogram(TIERS_EPS, counts=_counts(10**9))
    print(f"Part 1: {hist!r}, delta = {args.delta:g}")
    print(f"{'bound':<25} {'eps':>14} {'seconds':>9}")
    total = 0.0
    for name in names:
        value, sec = _eval(name, hist, args.delta)
        total += sec
        shown = f"{value:.6g}" if isinstance(value, float) else value
        print(f"{name:<25} {shown:>14} {sec:9.2f}", flush=True)
    print(f"all bounds: {total:.1f} s; peak RSS {_peak_gb():.2f} GB")
    if args.skip_expanded:
        return

    n = args.n_expanded
    counts = _counts(n)
    hist_n = BudgetProfile.from_histogram(TIERS_EPS, counts=counts)
    users = np.repeat(TIERS_EPS, counts)
    np.random.default_rng(0).shuffle(users)
    expanded = BudgetProfile.from_arrays(users)
    print(f"\nPart 2: {n} users in the same tiers, histogram vs per-user arrays "
          f"(delta = {args.delta:g})")
    print(f"{'bound':<25} {'eps':>14} {'hist s':>9} {'arrays s':>9}  equal")
    for name in names:
        a, ta = _eval(name, hist_n, args.delta)
        b, tb = _eval(name, expanded, args.delta)
        same = a == b
        shown = f"{a:.6g}" if isinstance(a, float) else a
        print(f"{name:<25} {shown:>14} {ta:9.2f} {tb:9.2f}  {same}", flush=True)
        if not same:
            raise SystemExit(f"{name}: histogram {a!r} != expanded {b!r}")


if __name__ == "__main__":
    main()
