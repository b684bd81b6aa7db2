"""Time of one calibration (issue 17): ``calibrate_scale`` for ``clones`` on 10^6 distinct
uniform[0.5, 2] budgets at central eps = 1, delta = 1e-6, next to the search it replaced.

Run: ``python benchmarks/bench_calibration.py [--n 1000000] [--repeats 1] [--seed 0]``.

One core: BLAS/OpenMP threads are set to 1 before numpy is imported and the process is pinned
to one CPU (``--cpu``, Linux).  Each timed call starts cold (``shuffledp.clear_caches()``).
Prints the best time, the scale and the number of bound evaluations of the new search
(:func:`shuffledp.calibration.calibrate_scale`, also without its guide, ``guide=False``) and
of the REFERENCE (the search of ``shuffledp.calibration`` before issue 17, copied below);
then the ratio, whether the new scale is within ``rtol`` of the reference, and an independent
check, from cold caches, that the new scale certifies the target (``delta(eps) <= delta`` and
``eps(delta) <= eps`` of the bound on the scaled profile).  Exit status 1 when a check fails
(the time target is reported, not enforced).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from shuffledp import BudgetProfile, ParameterRegimeError, clear_caches, get_bound  # noqa: E402
from shuffledp.calibration import calibrate_scale, local_only_scale  # noqa: E402
from shuffledp.numerics import invert_monotone  # noqa: E402

TARGET_SECONDS = 2.0


# ----------------------------------------------------------------------------------------
# REFERENCE IMPLEMENTATION (not used by the library): the search of shuffledp.calibration
# before issue 17 (commit 60dfaf4), copied with its argument validation left out.  At every
# candidate scale it inverts eps(delta) (many delta evaluations), then bisects on log s.
# ----------------------------------------------------------------------------------------
def reference_calibrate_scale(*, method, profile, eps, delta, options=None, rtol=1e-3,
                              max_local_eps=30.0, local_floor=False):
    """Returns ``(scale, bound_eps, evaluations)`` as the old ``calibrate_scale`` did."""
    opts = dict(options or {})
    bound = get_bound(method)
    lower = bound.info.kind == "lower"
    memo: dict[float, float] = {}
    reasons: list[str] = []

    def f(s: float) -> float:
        if s not in memo:
            try:
                memo[s] = bound.eps(profile=profile.scaled(s), delta=delta, **opts)
            except ParameterRegimeError as err:
                memo[s] = math.inf
                reasons.append(str(err))
        return memo[s]

    s_max = max_local_eps / profile.eps_max
    try:
        s_local = min(local_only_scale(profile, eps=eps, delta=delta), s_max)
    except ParameterRegimeError:
        s_local = None
    start = s_local if s_local is not None else min(eps / profile.eps_max, s_max)

    def result(s):
        return s, f(s), len(memo)

    a = start
    if f(a) >= eps:
        if local_floor and s_local is not None and not lower:
            return result(s_local)
        a_min = start / 1024.0
        while f(a) >= eps and a > a_min:
            a /= 2.0
        if f(a) >= eps:
            raise ParameterRegimeError(f"{method} cannot certify eps = {eps:g}")
    b = min(a * 2.0, s_max)
    while f(b) < eps:
        if b >= s_max:
            return result(s_max)
        a, b = b, min(b * 2.0, s_max)
    s = invert_monotone(f, eps, lo=a, hi=b, decreasing=False,
                        side="upper" if lower else "lower", rtol=rtol, atol=0.0, hi_max=b,
                        log_space=True)
    if local_floor and not lower and s_local is not None and s < s_local:
        return result(s_local)
    return result(s)
# ------------------------------------------------------------------ end of the reference


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--cpu", type=int, default=None,
                    help="CPU to pin to (default: the first one this process may use)")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        cpu = args.cpu if args.cpu is not None else min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        where = f"pinned to CPU {cpu}"
    else:
        where = "not pinned (no sched_setaffinity)"
    shape = BudgetProfile.uniform(n=args.n, low=0.5, high=2.0,
                                  rng=np.random.default_rng(args.seed))
    kw = {"method": "clones", "profile": shape, "eps": args.eps, "delta": args.delta,
          "rtol": args.rtol}
    print(f"calibrate_scale(clones), n = {args.n} distinct uniform[0.5, 2] budgets "
          f"(seed {args.seed}), central eps = {args.eps:g}, delta = {args.delta:g}, "
          f"rtol = {args.rtol:g}; one core ({where}), cold caches, best of {args.repeats}")

    new_t, direct_t, old_t = math.inf, math.inf, math.inf
    for _ in range(args.repeats):
        clear_caches()
        t0 = time.perf_counter()
        cal = calibrate_scale(**kw)
        new_t = min(new_t, time.perf_counter() - t0)
        clear_caches()
        t0 = time.perf_counter()
        direct = calibrate_scale(**kw, guide=False)
        direct_t = min(direct_t, time.perf_counter() - t0)
        clear_caches()
        t0 = time.perf_counter()
        old_scale, old_eps, old_evals = reference_calibrate_scale(**kw)
        old_t = min(old_t, time.perf_counter() - t0)

    guide = cal.diagnostics.get("guide_evaluations", 0)
    print(f"  new          : {new_t:7.3f} s  scale {cal.scale:.6f}  bound_eps {cal.bound_eps:.6f}  "
          f"bound_delta {cal.bound_delta:.4g}  ({cal.evaluations} bound evaluations + "
          f"{guide} guide evaluations)")
    print(f"  new, no guide: {direct_t:7.3f} s  scale {direct.scale:.6f}  ({direct.evaluations} "
          f"bound evaluations; the same search without the quantized guide)")
    print(f"  reference    : {old_t:7.3f} s  scale {old_scale:.6f}  bound_eps {old_eps:.6f}  "
          f"({old_evals} eps(delta) inversions)")
    print(f"  ratio reference / new: {old_t / new_t:.1f}x; target <= {TARGET_SECONDS:g} s: "
          f"{'met' if new_t <= TARGET_SECONDS else 'MISSED'}")

    rel = abs(cal.scale - old_scale) / max(cal.scale, old_scale)
    within = rel <= args.rtol
    clear_caches()
    bound = get_bound("clones")
    scaled = shape.scaled(cal.scale)
    d = bound.delta(profile=scaled, eps=args.eps)
    e = bound.eps(profile=scaled, delta=args.delta)
    certifies = d <= args.delta and e <= args.eps
    print(f"  |new - reference| / scale = {rel:.2e} (<= rtol {args.rtol:g}: "
          f"{'yes' if within else 'NO'})")
    print(f"  independent check at the new scale: delta({args.eps:g}) = {d:.4g}, "
          f"eps({args.delta:g}) = {e:.6f} (certifies the target: {'yes' if certifies else 'NO'})")
    return 0 if within and certifies else 1


if __name__ == "__main__":
    sys.exit(main())
