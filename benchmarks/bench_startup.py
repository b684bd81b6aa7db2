"""Benchmark: wall time of light CLI calls (the start-up cost of ``shuffledp``).

Runs each command ``--repeat`` times in a fresh interpreter and prints the median and the
minimum wall time, next to where the time goes in one interpreter (import of the CLI, of
scipy.special, and the run).  Issue 18's target: ``shuffledp list`` and ``shuffledp bound
--n 100000 --eps0 4 --delta 1e-6 --method gdp`` under 0.5 s on an idle 2-core machine.  The
heavy scipy modules are imported on first use (:mod:`shuffledp._lazy`); the binomial laws use
the ufuncs scipy.stats itself calls, without importing scipy.stats.

Run:  python benchmarks/bench_startup.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "list": ["list"],
    "bound gdp": ["bound", "--n", "100000", "--eps0", "4", "--delta", "1e-6", "--method",
                  "gdp"],
}
_SPLIT = """
import time
t0 = time.perf_counter()
from shuffledp.cli import main
t1 = time.perf_counter()
import scipy.special  # noqa: F401
t2 = time.perf_counter()
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    main({args!r})
t3 = time.perf_counter()
print(f"{{t1 - t0:.3f}} {{t2 - t1:.3f}} {{t3 - t2:.3f}}")
"""


def wall(args: list[str], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "shuffledp.cli", *args], check=True,
                       stdout=subprocess.DEVNULL)
        out.append(time.perf_counter() - t0)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    print(f"{'command':<12} {'median s':>9} {'min s':>7}   import cli / scipy.special / run")
    for name, cmd in COMMANDS.items():
        times = wall(cmd, args.repeat)
        split = subprocess.run([sys.executable, "-c", _SPLIT.format(args=cmd)], check=True,
                               capture_output=True, text=True).stdout.split()
        print(f"{name:<12} {statistics.median(times):>9.3f} {min(times):>7.3f}   "
              f"{' / '.join(split)}")


if __name__ == "__main__":
    main()
