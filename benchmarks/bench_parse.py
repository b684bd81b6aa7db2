"""Benchmark: reading a per-user budgets CSV of 10^7 (or more) rows, time and peak memory.

Writes ``--rows`` rows (``eps,delta``, eps ~ Uniform[0.5, 2] from numpy default_rng(seed),
delta 0) to a temporary file, then, in a fresh child process each time, runs
:func:`shuffledp.io.load_budgets` on it and prints the wall seconds, the peak resident memory
of the child (``ru_maxrss`` of the finished child) and the bytes per row.

Run:  python benchmarks/bench_parse.py [--rows 10000000 100000000] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

CHILD = ("import sys, time; from shuffledp.io import load_budgets; t = time.perf_counter(); "
         "p = load_budgets(sys.argv[1]); print(p.n, time.perf_counter() - t)")


def _write(path: str, rows: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    with open(path, "w") as fh:
        fh.write("eps,delta\n")
        for start in range(0, rows, 1_000_000):
            eps = rng.uniform(0.5, 2.0, size=min(1_000_000, rows - start))
            fh.write("".join(f"{e:.6f},0\n" for e in eps))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[10_000_000])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    for rows in args.rows:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "budgets.csv")
            _write(path, rows, args.seed)
            size = os.path.getsize(path)
            before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            t0 = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", CHILD, path], capture_output=True,
                                 text=True, check=True).stdout.split()
            wall = time.perf_counter() - t0
            peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            peak = max(peak_kb, before) / 1024.0
            print(f"{rows} rows ({size / 1e6:.0f} MB of CSV): n = {out[0]}, parse "
                  f"{float(out[1]):.1f} s (child wall {wall:.1f} s with start-up), peak "
                  f"{peak:.0f} MB, {peak * 1024 * 1024 / rows:.0f} bytes per row")


if __name__ == "__main__":
    main()
