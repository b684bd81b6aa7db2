"""Benchmark: every local randomizer and its shuffled estimator, in seconds on one core.

Budgets eps_i ~ Uniform[0.5, 2] (seeded, all distinct), local delta_i = 1e-6 for the Gaussian
mechanism; mean inputs ~ 2 Beta(2, 5) - 1, frequency inputs Zipf(1.1) over d = 100
categories.  Columns: ``setup`` (building the mechanism; for the Gaussian this is the analytic
calibration of 10^6 distinct budgets), ``randomize``, ``shuffle``, ``estimate`` for one run of
``--n`` users, and ``reps x n2`` = the total time of ``--reps`` full runs (randomize + shuffle
+ estimate) of ``--n2`` users.  Pin to one core with e.g. ``taskset -c 0`` and
``OMP_NUM_THREADS=1``.

Run:  python benchmarks/bench_mechanisms.py [--n 1000000] [--n2 100000] [--reps 100]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from shuffledp.estimators import run_protocol, shuffle  # noqa: E402
from shuffledp.mechanisms import FREQUENCY_MECHANISMS, MEAN_MECHANISMS  # noqa: E402

D = 100


def _build(name: str, eps: np.ndarray):
    if name in FREQUENCY_MECHANISMS:
        return FREQUENCY_MECHANISMS[name](eps=eps, d=D)
    if MEAN_MECHANISMS[name].pure:
        return MEAN_MECHANISMS[name](eps=eps)
    return MEAN_MECHANISMS[name](eps=eps, delta=1e-6)


def _data(name: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if name in FREQUENCY_MECHANISMS:
        w = 1.0 / np.arange(1, D + 1) ** 1.1
        return rng.choice(D, size=n, p=w / w.sum())
    return 2.0 * rng.beta(2.0, 5.0, size=n) - 1.0


def run(n: int, n2: int, reps: int, seed: int) -> list[dict]:
    rows = []
    for name in [*MEAN_MECHANISMS, *FREQUENCY_MECHANISMS]:
        rng = np.random.default_rng(seed)
        eps = rng.uniform(0.5, 2.0, size=n)
        x = _data(name, n, rng)
        t0 = time.perf_counter()
        mech = _build(name, eps)
        t1 = time.perf_counter()
        reports = mech.randomize(x, rng)
        t2 = time.perf_counter()
        shuffled = shuffle(reports, rng)
        t3 = time.perf_counter()
        mech.estimate(shuffled)
        t4 = time.perf_counter()
        small = _build(name, eps[:n2])
        xs = x[:n2]
        t5 = time.perf_counter()
        for _ in range(reps):
            run_protocol(small, xs, rng)
        t6 = time.perf_counter()
        rows.append(
            {
                "mechanism": name,
                "setup": t1 - t0,
                "randomize": t2 - t1,
                "shuffle": t3 - t2,
                "estimate": t4 - t3,
                "total": t4 - t0,
                "reps": t6 - t5,
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--n2", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rows = run(args.n, args.n2, args.reps, args.seed)
    head = f"{args.reps} x {args.n2:g}"
    print(f"one run of n = {args.n:g} users (seconds); last column: {head} users")
    print(
        f"{'mechanism':<10} {'setup':>8} {'randomize':>10} {'shuffle':>8} {'estimate':>9} "
        f"{'total':>8} {head:>14}"
    )
    for r in rows:
        print(
            f"{r['mechanism']:<10} {r['setup']:>8.3f} {r['randomize']:>10.3f} "
            f"{r['shuffle']:>8.3f} {r['estimate']:>9.3f} {r['total']:>8.3f} {r['reps']:>14.2f}"
        )


if __name__ == "__main__":
    main()
