"""What the proven Gaussian route costs in utility (issue 13).

For the quick profile uniform_0.5_2 (the users of the experiments: ``draw_budgets`` with the
config's seed) and local delta_i = 1e-8, calibrate the common scale of the local budgets for
``clones`` at central (eps, 1e-6) twice: with the generic standard masses (not a guarantee for
personalized Gaussian budgets) and with ``mechanism="gaussian"`` (proven: docs/theory.md,
Section 8, Lemmas 6 and 7).  Prints the scale ratio and the ratio of the mean Gaussian noise
variance (the MSE of the shuffled mean is proportional to it).

    python benchmarks/gaussian_route_cost.py
"""

import numpy as np

from shuffledp.calibration import calibrate_scale
from shuffledp.experiments import draw_budgets
from shuffledp.mechanisms.mean import GaussianMechanism

SPEC = {"kind": "uniform", "low": 0.5, "high": 2.0}
POINTS = [(1000, 1.0), (10000, 1.0), (100000, 1.0), (10000, 0.5), (10000, 2.0), (10000, 4.0)]


def main() -> None:
    print("n       target  scale generic  scale proven  ratio  variance ratio")
    for n, eps in POINTS:
        shape = draw_budgets("uniform_0.5_2", SPEC, n=n, seed=20240101, delta0=1e-8)
        common = dict(method="clones", profile=shape, eps=eps, delta=1e-6, rtol=1e-3,
                      max_local_eps=30.0, local_floor=False)
        generic = calibrate_scale(options={"clone": "standard"}, **common)
        proven = calibrate_scale(options={"clone": "standard", "mechanism": "gaussian"},
                                 **common)
        var = [np.mean(GaussianMechanism(eps=shape.eps * c.scale, delta=shape.delta).sigma()
                       ** 2) for c in (generic, proven)]
        print(f"{n:<7d} {eps:<7g} {generic.scale:<14.4f} {proven.scale:<13.4f} "
              f"{proven.scale / generic.scale:<6.3f} {var[1] / var[0]:.3f}")


if __name__ == "__main__":
    main()
