"""Time of one round (= one epoch: every user reports once) of shuffled PLDP-SGD.

Run: ``python benchmarks/bench_sgd.py [--threads 1] [--repeats 3] [--skip-mnist]``.
Prints the per-round time on scikit-learn's digits (1437 x 64) and on MNIST-sized synthetic
data (60000 x 784, 10 classes, random features; chunked per-example gradients), for logistic
regression with the Duchi randomizer, and the calibration time of each accounting.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from shuffledp import BudgetProfile
from shuffledp.sgd.accounting import calibrate_scale
from shuffledp.sgd.data import Dataset, load_digits_dataset
from shuffledp.sgd.randomizers import DuchiRandomizer
from shuffledp.sgd.train import SGDConfig, train_shuffled_sgd


def synthetic_mnist(rng: np.random.Generator, n: int = 60_000, d: int = 784) -> Dataset:
    x = rng.standard_normal((n, d), dtype=np.float32)
    y = rng.integers(0, 10, size=n)
    return Dataset(x, y, x[:1000], y[:1000], 10, name="synthetic-mnist")


def time_round(data: Dataset, *, chunk: int, repeats: int, private: bool) -> float:
    cfg = SGDConfig(rounds=1, lr=0.1, clip=1.0, chunk=chunk)
    best = float("inf")
    for r in range(repeats):
        kwargs = {"randomizer": DuchiRandomizer(clip=1.0), "eps": 2.0} if private else {}
        res = train_shuffled_sgd(
            data, config=cfg, generator=torch.Generator().manual_seed(r), **kwargs
        )
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
    for private in (False, True):
        t = time_round(digits, chunk=0, repeats=args.repeats, private=private)
        label = "duchi" if private else "no noise"
        print(
            f"digits  n={digits.n_train:6d} d={digits.n_features:4d} logreg {label:8s}: "
            f"{t * 1e3:8.1f} ms / round"
        )
    if not args.skip_mnist:
        mnist = synthetic_mnist(rng)
        t = time_round(mnist, chunk=1024, repeats=max(1, args.repeats - 2), private=True)
        print(
            f"mnist-sized n={mnist.n_train:6d} d={mnist.n_features:4d} logreg duchi   : "
            f"{t:8.2f} s / round (chunk 1024)"
        )
    base = BudgetProfile.identical(n=digits.n_train, eps0=1.0)
    for method in ("gdp", "clones", "local"):
        t0 = time.perf_counter()
        cal = calibrate_scale(
            method=method, base=base, rounds=50, eps=4.0, delta=1e-5, randomizer="duchi"
        )
        print(
            f"calibration {method:6s} (n={base.n}, T=50, eps=4): local eps {cal.scale:.3f} "
            f"in {time.perf_counter() - t0:.2f} s"
        )


if __name__ == "__main__":
    main()
