"""Mean estimation: ``laplace_shared`` (one noise scale, signal scaled by the budget) against
``laplace`` (scale 2/eps_i) under the same rigorous calibration.

Run: ``python benchmarks/mean_shared.py [--methods clones tightest] [--n 1000 10000]``.

For the ``uniform_0.5_2`` budgets (the users the experiments draw for that profile and n),
each central target eps in {0.5, 1, 2, 4} at delta 1e-6 and each calibrating bound (its
mechanism-aware form for the mechanism run), the local budgets are calibrated
(:func:`shuffledp.calibration.calibrate_scale`) and the closed-form variance of the shuffled
mean estimator (:meth:`~shuffledp.mechanisms.base.MeanMechanism.variance`, random assignment
of the budgets) is printed for both mechanisms on one data set (2 Beta(2, 5) - 1), with the
ratio shared / laplace and the seconds of each calibration.  Quoted in the closing note of
issue 31; minutes on one core (``tightest`` is the slow one).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from shuffledp.calibration import calibrate_scale
from shuffledp.errors import ParameterRegimeError
from shuffledp.experiments.sweeps import draw_budgets
from shuffledp.mechanisms import LaplaceMechanism, LaplaceSharedMechanism

SEED = 20240101
SPEC = {"kind": "uniform", "low": 0.5, "high": 2.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--methods", nargs="+", default=["clones", "tightest"])
    ap.add_argument("--n", nargs="+", type=int, default=[1000, 10000])
    ap.add_argument("--eps", nargs="+", type=float, default=[0.5, 1.0, 2.0, 4.0])
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    print(f"uniform_0.5_2, delta 1e-6, seed {SEED}; variance laplace / laplace_shared = ratio")
    for n in args.n:
        prof = draw_budgets("uniform_0.5_2", SPEC, n=n, seed=SEED, delta0=0.0)
        x = 2.0 * rng.beta(2.0, 5.0, n) - 1.0
        for eps in args.eps:
            out = []
            for method in args.methods:
                vals, secs = [], []
                for mech, cls in (("laplace", LaplaceMechanism),
                                  ("laplace_shared", LaplaceSharedMechanism)):
                    start = time.perf_counter()
                    try:
                        cal = calibrate_scale(method=method, profile=prof, eps=eps, delta=1e-6,
                                              options={"mechanism": mech}, max_local_eps=30.0)
                        vals.append(cls(eps=cal.profile.eps).variance(x))
                    except ParameterRegimeError:
                        vals.append(float("nan"))
                    secs.append(time.perf_counter() - start)
                out.append(f"{method}: {vals[0]:.3g} / {vals[1]:.3g} = {vals[1] / vals[0]:.3f} "
                           f"({secs[0]:.0f} s, {secs[1]:.0f} s)")
            print(n, eps, " | ".join(out), flush=True)


if __name__ == "__main__":
    main()
