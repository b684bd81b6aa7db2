"""Benchmark: every certified lower bound per randomizer, seconds per value at 10^4 to 10^6 users.

For each randomizer family and n, two profiles: identical budgets eps0 (1 and 4) and 64 budget
tiers (eps_i in [0.5, 2] on a grid of 64 values, users spread evenly; the largest number of
tiers issue 28 times).  Each covering lower bound (``rr_exact``, ``krr_exact``,
``window_lower``, ``lr_sum_lower``, ``tier_sum_lower``, whichever covers the family) is
evaluated at delta = 1e-6 from cold caches (:func:`shuffledp.clear_caches`, a fresh profile),
and the table gives its eps and CPU seconds of this process (``time.process_time``: one core),
the best of them, and, with ``--upper``, the best covering rigorous upper bound (``blanket``,
``clones`` mechanism-aware) and the ratio upper / lower.

Run:  python benchmarks/bench_lower.py [--n 10000 100000 1000000] [--families ...]
      [--upper] [--tiers 64]
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

from shuffledp import BudgetProfile, ParameterRegimeError, clear_caches, get_bound

FAMILIES = ("binary_rr", "duchi", "krr:10", "oue:100", "laplace", "piecewise", "gaussian")
LOWERS = ("rr_exact", "krr_exact", "window_lower", "lr_sum_lower", "tier_sum_lower")
UPPERS = ("blanket", "clones")
GAUSSIAN_DELTA0 = 1e-8


def _profile(kind: str, n: int, local: float, tiers: int) -> BudgetProfile:
    if kind.startswith("identical"):
        eps0 = float(kind.split("=")[1])
        return BudgetProfile.identical(n=n, eps0=eps0, delta0=local)
    eps = np.linspace(0.5, 2.0, tiers)
    counts = np.full(tiers, n // tiers, dtype=np.int64)
    counts[: n - int(counts.sum())] += 1
    return BudgetProfile.from_histogram(eps, counts, np.full(tiers, local))


def _options(name: str, family: str) -> dict:
    if name == "krr_exact":
        return {"k": int(family.split(":")[1])} if family.startswith("krr:") else {}
    if name == "rr_exact":
        return {}
    return {"mechanism": family}


def _run(name: str, family: str, kind: str, n: int, tiers: int):
    """(eps, cpu seconds) of one bound from cold caches; None when it does not cover."""
    local = GAUSSIAN_DELTA0 if family == "gaussian" else 0.0
    bound = get_bound(name)
    opts = _options(name, family)
    prof = _profile(kind, n, local, tiers)
    try:
        if not bound.covers(randomizer=family, profile=prof, **opts).covered:
            return None
    except (ParameterRegimeError, ValueError):
        return None
    clear_caches()
    prof = _profile(kind, n, local, tiers)
    t0 = time.process_time()
    try:
        eps = bound.eps(profile=prof, delta=1e-6, **opts)
    except (ParameterRegimeError, ValueError) as err:
        return (math.nan, time.process_time() - t0, " ".join(str(err).split())[:60])
    return (eps, time.process_time() - t0, "")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--families", nargs="+", default=list(FAMILIES))
    ap.add_argument("--profiles", nargs="+", default=["identical=1", "identical=4", "tiers"])
    ap.add_argument("--tiers", type=int, default=64)
    ap.add_argument("--upper", action="store_true",
                    help="also the best covering rigorous upper bound and the ratio")
    args = ap.parse_args(argv)
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("cpu s = CPU seconds of this process per value (one core), cold caches; delta = 1e-6")
    head = (f"{'n':>8} {'profile':<11} {'family':<10} {'best lower':>10} {'by':<15} "
            f"{'cpu s':>6} {'max cpu s':>9}")
    if args.upper:
        head += f" {'upper':>9} {'by':<8} {'up/low':>7}"
    print(head)
    print("  (each covering lower bound: name = eps (cpu s))")
    for n in args.n:
        for kind in args.profiles:
            for fam in args.families:
                res = {m: _run(m, fam, kind, n, args.tiers) for m in LOWERS}
                res = {m: r for m, r in res.items() if r is not None}
                ok = {m: r for m, r in res.items() if math.isfinite(r[0])}
                if ok:
                    best = max(ok, key=lambda m: ok[m][0])
                    low, sec = ok[best][0], ok[best][1]
                else:
                    best, low, sec = "-", math.nan, math.nan
                worst = max((r[1] for r in res.values()), default=math.nan)
                line = (f"{n:>8} {kind:<11} {fam:<10} {low:>10.5g} {best:<15} {sec:>6.2f} "
                        f"{worst:>9.2f}")
                if args.upper:
                    ups = {m: _run(m, fam, kind, n, args.tiers) for m in UPPERS}
                    ups = {m: r for m, r in ups.items() if r is not None and math.isfinite(r[0])}
                    if ups:
                        ub = min(ups, key=lambda m: ups[m][0])
                        up = ups[ub][0]
                        line += f" {up:>9.5g} {ub:<8} {up / low if low > 0 else math.nan:>7.3f}"
                    else:
                        line += f" {'n/a':>9} {'-':<8} {'-':>7}"
                print(line, flush=True)
                detail = ", ".join(f"{m} = {r[0]:.5g} ({r[1]:.2f} s)" if math.isfinite(r[0])
                                   else f"{m}: {r[2]} ({r[1]:.2f} s)" for m, r in res.items())
                print(f"    {detail}", flush=True)


if __name__ == "__main__":
    main()
