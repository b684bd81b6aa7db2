"""Time of one round (= one epoch: every user reports once) of shuffled PLDP-SGD, and of the
accounting plus calibration.

Run: ``python benchmarks/bench_sgd.py [--threads 1] [--repeats 3] [--skip-mnist]``.
Prints the per-round time on scikit-learn's digits (1437 x 64; logistic regression and the
MLP, both randomizers) and on MNIST-sized synthetic data (60000 x 784, 10 classes, random
features; chunked per-example gradients; logistic regression), and the time of the T-round
accounting plus the calibration of the common scale (T = 100, target (4, 1e-5)) for 10^4
users with distinct budgets (uniform [0.5, 2] shape): every accounting, both randomizers, the
profile as drawn and rounded down to 4 and 16 budget levels (what the SGD experiment's
rigorous accounting trains with).  Target of issue 15: at most 5 s each on one core.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from shuffledp import BudgetProfile
from shuffledp.sgd.accounting import calibrate_scale
from shuffledp.sgd.data import Dataset, load_digits_dataset
from shuffledp.sgd.randomizers import DuchiRandomizer, GaussianRandomizer
from shuffledp.sgd.train import SGDConfig, train_shuffled_sgd


def synthetic_mnist(rng: np.random.Generator, n: int = 60_000, d: int = 784) -> Dataset:
    x = rng.standard_normal((n, d), dtype=np.float32)
    y = rng.integers(0, 10, size=n)
    return Dataset(x, y, x[:1000], y[:1000], 10, name="synthetic-mnist")


def time_round(data: Dataset, *, chunk: int, repeats: int, randomizer: str | None,
               model: str = "logreg") -> float:
    cfg = SGDConfig(rounds=1, lr=0.1, clip=1.0, chunk=chunk)
    best = float("inf")
    for r in range(repeats):
        kwargs = {}
        if randomizer == "duchi":
            kwargs = {"randomizer": DuchiRandomizer(clip=1.0), "eps": 2.0}
        elif randomizer == "gaussian":
            kwargs = {"randomizer": GaussianRandomizer(clip=1.0), "eps": 2.0, "delta": 1e-12}
        res = train_shuffled_sgd(data, config=cfg, model=model,
                                 generator=torch.Generator().manual_seed(r), **kwargs)
        best = min(best, res.seconds)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-mnist", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}")
    digits = load_digits_dataset(rng=rng)
    for model in ("logreg", "mlp"):
        for rand in (None, "duchi", "gaussian"):
            t = time_round(digits, chunk=0, repeats=args.repeats, randomizer=rand, model=model)
            print(f"digits  n={digits.n_train:6d} d={digits.n_features:4d} {model:6s} "
                  f"{rand or 'no noise':8s}: {t * 1e3:8.1f} ms / round")
    if not args.skip_mnist:
        mnist = synthetic_mnist(rng)
        for rand in ("duchi", "gaussian"):
            t = time_round(mnist, chunk=4096, repeats=max(1, args.repeats - 2),
                           randomizer=rand)
            print(f"mnist-sized n={mnist.n_train:6d} d={mnist.n_features:4d} logreg {rand:8s}: "
                  f"{t:8.2f} s / round (= one epoch; chunk 4096)")
    shape = BudgetProfile.uniform(n=10_000, low=0.5, high=2.0, rng=np.random.default_rng(1))
    shape = shape.scaled(1.0 / shape.eps_max)
    print(f"accounting + calibration, T = 100, target (4, 1e-5), 10^4 users, "
          f"{np.unique(shape.eps).size} distinct budgets (uniform [0.5, 2] shape):")
    for rand, delta0 in (("duchi", 0.0), ("gaussian", 1e-12)):
        drawn = BudgetProfile(eps=shape.eps, delta=delta0)
        for label, base in (("as drawn", drawn), ("4 levels", drawn.rounded_down(4)),
                            ("16 levels", drawn.rounded_down(16))):
            for method in ("gdp", "clones", "local"):
                if method != "clones" and label != "as drawn":
                    continue
                t0 = time.perf_counter()
                cal = calibrate_scale(method=method, base=base, rounds=100, eps=4.0,
                                      delta=1e-5, randomizer=rand)
                dt = time.perf_counter() - t0
                print(f"  {rand:8s} {method:6s} {label:9s}: largest local eps "
                      f"{cal.profile.eps_max:.3f}, mean {cal.eps_local_mean:.3f}, "
                      f"{cal.evaluations} evaluations in {dt:.2f} s"
                      f"{'' if dt <= 5.0 else '  (above the 5 s target)'}")


if __name__ == "__main__":
    main()
