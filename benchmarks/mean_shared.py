"""Mean estimation: the shared-noise randomizers (one noise law, signal scaled by the budget)
against the per-budget ones under the same rigorous calibration: ``laplace_shared`` against
``laplace`` (scale 2/eps_i), ``gaussian_shared`` against ``gaussian`` (sigma_i of (eps_i,
delta_i), local delta 1e-8).

Run: ``python benchmarks/mean_shared.py [--pairs laplace gaussian] [--methods clones tightest]
[--n 1000 10000]``.

For the ``uniform_0.5_2`` budgets (the users the experiments draw for that profile and n),
each central target eps in {0.5, 1, 2, 4} at delta 1e-6 and each calibrating bound (its
mechanism-aware form for the mechanism run), the local budgets are calibrated
(:func:`shuffledp.calibration.calibrate_scale`) and the closed-form variance of the shuffled
mean estimator (:meth:`~shuffledp.mechanisms.base.MeanMechanism.variance`, random assignment
of the budgets) is printed for both mechanisms on one data set (2 Beta(2, 5) - 1), with the
ratio shared / per-budget and the seconds of each calibration.  Quoted in the closing notes of
issue 31; minutes on one core (``tightest`` is the slow one).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from shuffledp.calibration import calibrate_scale
from shuffledp.errors import ParameterRegimeError
from shuffledp.experiments.sweeps import draw_budgets
from shuffledp.mechanisms import get_mechanism

SEED = 20240101
SPEC = {"kind": "uniform", "low": 0.5, "high": 2.0}
#: local delta of the Gaussian mechanisms (the experiments' gaussian_delta0)
DELTA0 = 1e-8


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--pairs", nargs="+", default=["laplace", "gaussian"],
                    choices=["laplace", "gaussian"])
    ap.add_argument("--methods", nargs="+", default=["clones", "tightest"])
    ap.add_argument("--n", nargs="+", type=int, default=[1000, 10000])
    ap.add_argument("--eps", nargs="+", type=float, default=[0.5, 1.0, 2.0, 4.0])
    args = ap.parse_args()
    for base in args.pairs:
        shared = f"{base}_shared"
        d0 = DELTA0 if base == "gaussian" else 0.0
        print(f"{shared} / {base}: uniform_0.5_2, local delta {d0:g}, central delta 1e-6, "
              f"seed {SEED}; variance {base} / {shared} = ratio")
        rng = np.random.default_rng(1)
        for n in args.n:
            prof = draw_budgets("uniform_0.5_2", SPEC, n=n, seed=SEED, delta0=d0)
            x = 2.0 * rng.beta(2.0, 5.0, n) - 1.0
            for eps in args.eps:
                out = []
                for method in args.methods:
                    vals, secs = [], []
                    for mech in (base, shared):
                        cls = get_mechanism(mech)
                        start = time.perf_counter()
                        try:
                            cal = calibrate_scale(method=method, profile=prof, eps=eps,
                                                  delta=1e-6, options={"mechanism": mech},
                                                  max_local_eps=30.0)
                            m = (cls(eps=cal.profile.eps, delta=cal.profile.delta) if d0 > 0
                                 else cls(eps=cal.profile.eps))
                            vals.append(m.variance(x))
                        except ParameterRegimeError:
                            vals.append(float("nan"))
                        secs.append(time.perf_counter() - start)
                    out.append(f"{method}: {vals[0]:.3g} / {vals[1]:.3g} = "
                               f"{vals[1] / vals[0]:.3f} ({secs[0]:.0f} s, {secs[1]:.0f} s)")
                print(n, eps, " | ".join(out), flush=True)


if __name__ == "__main__":
    main()
