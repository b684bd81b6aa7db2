"""Benchmark: the rigorous ``blanket`` bound against ``clones``, lower bounds and Su et al.

``blanket`` is compared with ``clones`` (mechanism-aware), the best certified lower bound and
the published numbers of Su, Cheng, Wang (IEEE S&P 2026).

Every value is a central eps at a fixed delta, from ``Bound.evaluate(delta=...)`` (the shared
eps(delta) inversion of :mod:`shuffledp.numerics`, rounded to each bound's safe side), timed
with ``time.perf_counter`` from cold caches (:func:`shuffledp.clear_caches` and a fresh
profile object).  Three sections:

* ``identical``: n = 10^4 identical users, delta = 1e-6: Laplace, OUE (d = 2 and 100),
  10-RR and binary RR; ``blanket``, ``clones`` and ``tightest`` (which adds ``rr_upper`` for
  binary RR: the exact worst case rounded up) with ``mechanism`` = the family, the best
  certified lower bound of the family (the largest of ``rr_exact``, ``krr_exact`` with its k,
  ``window_lower``, ``lr_sum_lower`` and ``tier_sum_lower`` with the family, each where it
  covers the family and applies), and the published
  upper (and lower) numbers of Su, Cheng, Wang;
* ``personalized``: the budget profiles of the ``personalized_validity`` experiment
  (config/config.yaml merged with config/paper.yaml, users drawn as the experiment draws
  them, :func:`shuffledp.experiments.sweeps.draw_budgets`) and "one user at eps 4 among 999
  at 0.5"; per randomizer family the same columns;
* ``large``: n = 10^5 and 10^6 users with distinct budgets eps_i ~ Uniform[0.5, 2] (a seeded
  ``numpy`` Generator): ``blanket`` and ``clones``, the ratio of their times (wall and CPU),
  and the best certified lower bound (the soundness check at scale).

A bound outside its validity region (``ParameterRegimeError``, or a family it has no form
for) is printed ``n/a``, its reason below the table.  An upper bound below the certified lower
bound of a family it covers is a soundness failure: the row is marked ``BELOW LOWER`` and the
run ends with a list of them.

Run:  python benchmarks/bench_blanket.py [--quick] [--only identical|personalized|large]
      [--seed 0] [--profile-seed S] [--personalized-n 10000 100000]
      [--large-n 100000 1000000] [--large-delta 1e-6 1e-12] [--profiles NAME ...]
      [--no-example] [--families SPEC ...]
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from shuffledp import BudgetProfile, ParameterRegimeError, clear_caches, get_bound
from shuffledp.compare import CONSISTENCY_RTOL
from shuffledp.experiments.sweeps import draw_budgets, profile_list
from shuffledp.families import get_family

CONFIG = Path(__file__).resolve().parents[1] / "config"
DELTA = 1e-6
N_IDENTICAL = 10_000
#: Local delta of the Gaussian mechanism's users (as personalized_validity.gaussian_delta0).
GAUSSIAN_DELTA0 = 1e-8
FAMILIES = ("binary_rr", "krr:10", "oue:100", "laplace", "piecewise", "duchi", "gaussian",
            "gaussian_shared", "laplace_shared")
QUICK_FAMILIES = ("binary_rr", "krr:10", "laplace")
#: The lower bounds tried for every family, with their options for it (each is used only
#: where :meth:`Bound.covers` says it is a lower bound for the family).
LOWERS: tuple[tuple[str, Callable[[str], dict]], ...] = (
    ("rr_exact", lambda spec: {}),
    ("krr_exact", lambda spec: {"k": get_family(spec).k} if spec.startswith("krr:") else {}),
    ("window_lower", lambda spec: {"mechanism": spec}),
    ("lr_sum_lower", lambda spec: {"mechanism": spec}),
    ("tier_sum_lower", lambda spec: {"mechanism": spec}),
)
#: Su, Cheng, Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via
#: Shuffling", IEEE S&P 2026, arXiv 2504.07414: their code run on CPU at n = 10^4,
#: delta = 1e-6, identical budgets (recorded in DESIGN.md section 12, "Numbers to meet").
#: (label, spec, eps0, published upper, published lower); the 10-RR number is the exact pair
#: value (the target, which ``window_lower`` certifies), the OUE numbers do not state d.
SU = "Su, Cheng, Wang IEEE S&P 2026 (arXiv 2504.07414), DESIGN.md sec. 12"
IDENTICAL_ROWS: tuple[tuple[str, str, float, float | None, float | None], ...] = (
    ("Laplace", "laplace", 1.0, 0.03824, 0.03014),
    ("Laplace", "laplace", 4.0, 0.33064, 0.20236),
    ("OUE d=2", "oue:2", 1.0, 0.03010, 0.02651),
    ("OUE d=2", "oue:2", 4.0, 0.28863, 0.23899),
    ("OUE d=100", "oue:100", 1.0, 0.03010, 0.02651),
    ("OUE d=100", "oue:100", 4.0, 0.28863, 0.23899),
    ("10-RR", "krr:10", 1.0, 0.02325, None),
    ("binary RR", "binary_rr", 0.5, None, None),
    ("binary RR", "binary_rr", 1.0, None, None),
    ("binary RR", "binary_rr", 2.0, None, None),
    ("binary RR", "binary_rr", 4.0, None, None),
)
QUICK_IDENTICAL = (0, 2, 6, 8)  # Laplace 1, OUE d=2 1, 10-RR 1, binary RR 1
#: blanket / clones above this is listed as "blanket poor" at the end.
POOR = 1.1

SOUNDNESS: list[str] = []
POOR_ROWS: list[str] = []


# ---------------------------------------------------------------------- evaluation helpers
def _fresh(profile: BudgetProfile) -> BudgetProfile:
    """A new profile object with the same users (no per-object cache survives)."""
    if profile.is_histogram:
        t = profile.tiers
        return BudgetProfile(eps=t.eps.copy(), delta=t.delta.copy(), counts=t.counts.copy(),
                             label=profile.label)
    return BudgetProfile(eps=profile.eps.copy(), delta=profile.delta.copy(),
                         label=profile.label)


def _short(err: BaseException, limit: int = 110) -> str:
    text = f"{type(err).__name__}: {' '.join(str(err).split())}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def timed(name: str, profile: BudgetProfile, delta: float, **opts: Any) -> dict:
    """One cold evaluation: ``{"eps", "seconds", "cpu", "reason"}`` (wall seconds by
    ``time.perf_counter``, CPU seconds of this process by ``time.process_time``; eps nan and a
    reason when the bound does not apply)."""
    clear_caches()
    prof = _fresh(profile)
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        res = get_bound(name).evaluate(profile=prof, delta=delta, **opts)
        eps, reason, winner = res.eps, "", str(res.diagnostics.get("winner", ""))
    except (ParameterRegimeError, ValueError, MemoryError) as err:
        eps, reason, winner = math.nan, _short(err), ""
    return {"eps": float(eps), "seconds": time.perf_counter() - t0,
            "cpu": time.process_time() - c0, "reason": reason, "winner": winner}


def best_lower(profile: BudgetProfile, spec: str, delta: float) -> dict:
    """The largest certified lower bound for ``spec`` on ``profile``: ``{"eps", "method",
    "seconds", "reason"}`` (eps nan when none applies; reason lists why)."""
    best, total, why = {"eps": math.nan, "method": ""}, 0.0, []
    for name, options in LOWERS:
        opts = options(spec)
        try:
            cov = get_bound(name).covers(randomizer=spec, profile=profile, **opts)
        except (ParameterRegimeError, ValueError) as err:
            why.append(f"{name}: {_short(err, 90)}")
            continue
        if not cov.covered:
            continue
        r = timed(name, profile, delta, **opts)
        total += r["seconds"]
        if r["reason"]:
            why.append(f"{name}: {r['reason']}")
        elif not r["eps"] <= best["eps"]:  # also replaces nan
            best = {"eps": r["eps"], "method": name}
    reason = "" if best["method"] else ("; ".join(why) or "no lower bound covers " + spec)
    return {**best, "seconds": total, "reason": reason}


def below(upper: float, lower: float) -> bool:
    """upper < lower beyond the tolerance of the consistency alarm (shuffledp.compare)."""
    return (math.isfinite(upper) and math.isfinite(lower)
            and upper < lower * (1.0 - CONSISTENCY_RTOL) - 1e-9)


def check_row(where: str, values: Mapping[str, float], lower: dict) -> str:
    """Record soundness failures and poor blanket values; the row's flag text."""
    flags = []
    for name in ("blanket", "clones"):
        if below(values[name], lower["eps"]):
            msg = (f"{where}: {name} eps = {values[name]:.9g} < {lower['method']} eps = "
                   f"{lower['eps']:.9g}")
            SOUNDNESS.append(msg)
            flags.append(f"{name} BELOW LOWER")
    b, c = values["blanket"], values["clones"]
    if math.isfinite(b) and math.isfinite(c) and c > 0 and b / c > POOR:
        POOR_ROWS.append(f"{where}: blanket {b:.5g} vs clones {c:.5g} (x{b / c:.2f})")
    return "  ".join(flags)


def fmt(value: float | None, spec: str = ".5f") -> str:
    if value is None:
        return "-"
    return "n/a" if not math.isfinite(value) else format(value, spec)


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None:
        return None
    return a / b if math.isfinite(a) and math.isfinite(b) and b > 0 else math.nan


def local_delta(spec: str) -> float:
    return GAUSSIAN_DELTA0 if get_family(spec).needs_delta else 0.0


def print_reasons(reasons: list[str]) -> None:
    seen = []
    for r in reasons:
        if r not in seen:
            seen.append(r)
    for r in seen:
        print(f"    n/a {r}")


# ---------------------------------------------------------------------- section 1
def identical(quick: bool, delta: float = DELTA, n: int = N_IDENTICAL) -> None:
    rows = [IDENTICAL_ROWS[i] for i in QUICK_IDENTICAL] if quick else list(IDENTICAL_ROWS)
    print(f"== 1. Identical budgets: n = {n}, delta = {delta:g} (central eps) ==")
    head = (f"{'row':<10} {'eps0':>4} {'blanket':>8} {'clones':>8} {'tightest':>8} "
            f"{'(by)':<8} {'lower':>8} {'(lower by)':<13} {'Su up':>8} {'Su low':>8} "
            f"{'b/Su':>6} {'b/low':>6} {'t/low':>7} {'s blank':>8} {'s clones':>8} "
            f"{'s tight':>8}  flags")
    print(head)
    print("-" * len(head))
    reasons: list[str] = []
    for label, spec, eps0, su_up, su_low in rows:
        profile = BudgetProfile.identical(n=n, eps0=eps0)
        bl = timed("blanket", profile, delta, mechanism=spec)
        cl = timed("clones", profile, delta, mechanism=spec)
        ti = timed("tightest", profile, delta, mechanism=spec)
        lo = best_lower(profile, spec, delta)
        where = f"identical {spec} eps0={eps0:g} n={n} delta={delta:g}"
        flag = check_row(where, {"blanket": bl["eps"], "clones": cl["eps"]}, lo)
        if below(ti["eps"], lo["eps"]):
            SOUNDNESS.append(f"{where}: tightest eps = {ti['eps']:.9g} < {lo['method']} eps = "
                             f"{lo['eps']:.9g}")
            flag += "  tightest BELOW LOWER"
        if su_low is not None and below(bl["eps"], su_low):
            flag += "  blanket below Su's published lower (not certified here)"
        for name, r in (("blanket", bl), ("clones", cl), ("tightest", ti), ("lower", lo)):
            if r["reason"]:
                reasons.append(f"{label} eps0={eps0:g} {name}: {r['reason']}")
        print(f"{label:<10} {eps0:>4g} {fmt(bl['eps']):>8} {fmt(cl['eps']):>8} "
              f"{fmt(ti['eps']):>8} {ti['winner'] or '-':<8} "
              f"{fmt(lo['eps']):>8} {lo['method'] or '-':<13} {fmt(su_up):>8} "
              f"{fmt(su_low):>8} {fmt(ratio(bl['eps'], su_up), '.3f'):>6} "
              f"{fmt(ratio(bl['eps'], lo['eps']), '.3f'):>6} "
              f"{fmt(ratio(ti['eps'], lo['eps']), '.5f'):>7} {bl['seconds']:>8.3f} "
              f"{cl['seconds']:>8.3f} {ti['seconds']:>8.3f}  {flag}", flush=True)
    print(f"  Su up / Su low: {SU}; the OUE numbers do not state d (shown for both d); "
          "10-RR: the exact pair value 0.02325 (the target, window_lower's value).")
    print("  lower = the largest of rr_exact / krr_exact (k) / window_lower / lr_sum_lower / "
          "tier_sum_lower (mechanism) that covers the family; tightest = the smallest of its "
          "members for the family (by = the winner; rr_upper for binary RR: every "
          "configuration, rounded up); s = seconds per value, cold caches.")
    print_reasons(reasons)
    print()


# ---------------------------------------------------------------------- section 2
def _deep_merge(base: dict, over: Mapping) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = _deep_merge(out[k], v) if isinstance(v, Mapping) and isinstance(
            out.get(k), Mapping) else v
    return out


def paper_config() -> dict:
    """config/config.yaml updated by config/paper.yaml (as Snakemake merges them)."""
    with open(CONFIG / "config.yaml") as f:
        cfg = yaml.safe_load(f)
    with open(CONFIG / "paper.yaml") as f:
        return _deep_merge(cfg, yaml.safe_load(f))


def personalized_table(title: str, make: Callable[[float], BudgetProfile],
                       families: tuple[str, ...], delta: float) -> None:
    p0 = make(0.0)
    print(f"-- {title}: n = {p0.n}, eps_i in [{p0.eps_min:.4g}, {p0.eps_max:.4g}], "
          f"{p0.tiers.eps.size} distinct budgets, delta = {delta:g}")
    head = (f"   {'family':<10} {'blanket':>8} {'clones':>8} {'lower':>8} {'(lower by)':<13} "
            f"{'up/low':>7} {'b/clones':>8} {'s blank':>8} {'s clones':>8} {'s lower':>8}"
            f"  flags")
    print(head)
    reasons: list[str] = []
    for spec in families:
        profile = make(local_delta(spec))
        bl = timed("blanket", profile, delta, mechanism=spec)
        cl = timed("clones", profile, delta, mechanism=spec)
        lo = best_lower(profile, spec, delta)
        where = (f"{title} {spec} n={profile.n} delta={delta:g} "
                 f"delta0={local_delta(spec):g}")
        flag = check_row(where, {"blanket": bl["eps"], "clones": cl["eps"]}, lo)
        ups = [v for v in (bl["eps"], cl["eps"]) if math.isfinite(v)]
        up = min(ups) if ups else math.nan
        for name, r in (("blanket", bl), ("clones", cl), ("lower", lo)):
            if r["reason"]:
                reasons.append(f"{spec} {name}: {r['reason']}")
        print(f"   {spec:<10} {fmt(bl['eps']):>8} {fmt(cl['eps']):>8} {fmt(lo['eps']):>8} "
              f"{lo['method'] or '-':<13} {fmt(ratio(up, lo['eps']), '.3f'):>7} "
              f"{fmt(ratio(bl['eps'], cl['eps']), '.3f'):>8} {bl['seconds']:>8.2f} "
              f"{cl['seconds']:>8.2f} {lo['seconds']:>8.2f}  {flag}", flush=True)
    print_reasons(reasons)


def personalized(quick: bool, ns: list[int], seed: int | None,
                 profiles: list[str] | None = None, families: tuple[str, ...] | None = None,
                 example: bool = True) -> None:
    cfg = paper_config()
    pv = cfg["personalized_validity"]
    delta = float(pv["delta"])
    seed = int(cfg["seed"]) if seed is None else seed
    names = profiles or (["uniform_0.5_2", "few_high"] if quick else list(pv["profiles"]))
    families = families or (QUICK_FAMILIES if quick else FAMILIES)
    ns = [10_000] if quick else ns
    print("== 2. Personalized profiles of personalized_validity (config/config.yaml + "
          f"config/paper.yaml): delta = {delta:g}, budgets from draw_budgets(seed = {seed}), "
          f"Gaussian users at delta_i = {GAUSSIAN_DELTA0:g} ==")
    print("   up/low = min(blanket, clones) / lower; b/clones = blanket / clones; "
          "s = seconds per value (s lower: all covering lower bounds)")
    specs = profile_list(names, cfg["profiles"])
    for n in ns:
        for name, spec in specs:
            personalized_table(
                f"{name} {dict(spec)}",
                lambda d0, name=name, spec=spec, n=n: draw_budgets(name, spec, n=n, seed=seed,
                                                                   delta0=d0),
                families, delta)
    if not example:
        print()
        return
    one = np.concatenate([[4.0], np.full(999, 0.5)])
    personalized_table("one user at eps 4 among 999 at 0.5",
                       lambda d0: BudgetProfile.from_arrays(one, np.full(one.size, d0)),
                       families, delta)
    print()


# ---------------------------------------------------------------------- section 3
def large(quick: bool, ns: list[int], seed: int, delta: float = DELTA,
          families: tuple[str, ...] | None = None) -> None:
    ns = [10_000] if quick else ns
    families = families or (QUICK_FAMILIES if quick else FAMILIES)
    print(f"== 3. Distinct budgets eps_i ~ Uniform[0.5, 2], numpy default_rng(seed = {seed}), "
          f"delta = {delta:g} ==")
    print("   s = wall seconds per value (perf_counter), cpu = CPU seconds of this process "
          "(process_time; lower than s when other processes share the cores)")
    print("   lower = best certified lower bound (checked against both upper bounds), "
          "s lower its seconds")
    head = (f"{'n':>9} {'family':<10} {'blanket':>8} {'clones':>8} {'b/clones':>8} "
            f"{'s blank':>8} {'s clones':>8} {'s b/c':>7} {'cpu b':>8} {'cpu c':>7} "
            f"{'cpu b/c':>7} {'lower':>8} {'(lower by)':<13} {'s lower':>7}  flags")
    print(head)
    print("-" * len(head))
    reasons: list[str] = []
    for n in ns:
        eps = np.random.default_rng(seed).uniform(0.5, 2.0, size=n)
        for spec in families:
            profile = BudgetProfile.from_arrays(eps, np.full(n, local_delta(spec)))
            bl = timed("blanket", profile, delta, mechanism=spec)
            cl = timed("clones", profile, delta, mechanism=spec)
            lo = best_lower(profile, spec, delta)
            b, c = bl["eps"], cl["eps"]
            where = (f"uniform[0.5,2] default_rng({seed}) {spec} n={n} delta={delta:g} "
                     f"delta0={local_delta(spec):g}")
            flag = check_row(where, {"blanket": b, "clones": c}, lo)
            for name, r in (("blanket", bl), ("clones", cl), ("lower", lo)):
                if r["reason"]:
                    reasons.append(f"n={n} {spec} {name}: {r['reason']}")
            s_ratio = bl["seconds"] / cl["seconds"] if not bl["reason"] else math.nan
            c_ratio = bl["cpu"] / cl["cpu"] if not bl["reason"] and cl["cpu"] > 0 else math.nan
            print(f"{n:>9} {spec:<10} {fmt(b):>8} {fmt(c):>8} {fmt(ratio(b, c), '.3f'):>8} "
                  f"{bl['seconds']:>8.2f} {cl['seconds']:>8.2f} {fmt(s_ratio, '.1f'):>7} "
                  f"{bl['cpu']:>8.2f} {cl['cpu']:>7.2f} {fmt(c_ratio, '.1f'):>7} "
                  f"{fmt(lo['eps']):>8} {lo['method'] or '-':<13} {lo['seconds']:>7.2f}  {flag}",
                  flush=True)
    print_reasons(reasons)
    print()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="a few rows, n = 10^4 only (smoke run)")
    ap.add_argument("--only", choices=["identical", "personalized", "large"])
    ap.add_argument("--seed", type=int, default=0,
                    help="seed of the distinct budgets of section 3 (numpy default_rng)")
    ap.add_argument("--profile-seed", type=int, default=None,
                    help="master seed of the section 2 budgets (default: the config's seed)")
    ap.add_argument("--personalized-n", type=int, nargs="+", default=[10_000, 100_000],
                    help="n of the section 2 profiles (default: personalized.table_n)")
    ap.add_argument("--large-n", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--large-delta", type=float, nargs="+", default=[DELTA],
                    help="central deltas of section 3 (e.g. 1e-6 1e-12: many users and a "
                         "small delta, docs/theory.md 15.3 (N7))")
    ap.add_argument("--profiles", nargs="+", default=None,
                    help="section 2 profile names (default: personalized_validity.profiles)")
    ap.add_argument("--no-example", action="store_true",
                    help="section 2 without the 'one user at 4 among 999 at 0.5' profile")
    ap.add_argument("--families", nargs="+", default=None,
                    help=f"families of sections 2 and 3 (default: {' '.join(FAMILIES)})")
    args = ap.parse_args(argv)
    for d in args.large_delta:
        if not (0.0 < d < 1.0):
            ap.error(f"--large-delta must be in (0, 1), got {d!r}")
    fams = tuple(args.families) if args.families else None
    # warm-up (imports, scipy) outside the timings
    warm = BudgetProfile.from_arrays([0.5, 1.0, 2.0])
    for name, opts in (("blanket", {}), ("clones", {"mechanism": "laplace"}),
                       ("window_lower", {"mechanism": "laplace"}), ("rr_exact", {})):
        get_bound(name).evaluate(profile=warm, delta=DELTA, **opts)
    t0 = time.perf_counter()
    print("load average at start (other processes share the cores): "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    if args.only in (None, "identical"):
        identical(args.quick)
    if args.only in (None, "personalized"):
        personalized(args.quick, args.personalized_n, args.profile_seed, args.profiles, fams,
                     not args.no_example)
    if args.only in (None, "large"):
        for d in args.large_delta:
            large(args.quick, args.large_n, args.seed, delta=d, families=fams)
    print("== Soundness: an upper bound below the certified lower bound of a family it covers ==")
    for line in SOUNDNESS or ["none"]:
        print(f"  {'SOUNDNESS FAILURE ' if SOUNDNESS else ''}{line}")
    print(f"== blanket poor: blanket / clones > {POOR} ==")
    for line in POOR_ROWS or ["none"]:
        print(f"  {line}")
    print("load average at end: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"total {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
