"""How many budget levels (``sgd.tiers``) the rigorous SGD accounting should use.

Run: ``python benchmarks/sgd_tiers.py [--seeds 3] [--rounds 50]``.  For the uniform [0.5, 2]
profile shape on digits (logistic regression), both randomizers and central eps 1 and 4
(delta 1e-5), the rigorous ``clones`` accounting with the profile rounded down to k levels
(k = 1, 2, 4, 8, 16): test accuracy (mean over seeds) and the calibrated per-round local eps
(largest, mean).  Quoted in docs/theory.md 14 ("Why tiers"); minutes on one core.
"""

from __future__ import annotations

import argparse

import pandas as pd
import torch

from shuffledp.experiments.sgd import run_sgd

SEED = 20240101
PROFILES = {"uniform_0.5_2": {"kind": "uniform", "low": 0.5, "high": 2.0}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=50)
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows = []
    for k in (1, 2, 4, 8, 16):
        for eps in (1.0, 4.0):
            for rand in ("duchi", "gaussian"):
                cfg = {"randomizer": rand, "profile": "uniform_0.5_2", "seeds": args.seeds,
                       "model": "logreg", "tiers": k, "rounds": args.rounds}
                for row in run_sgd(method="clones", target_eps=eps, config=cfg,
                                   profiles=PROFILES, seed=SEED):
                    rows.append(dict(row, tiers=k))
    table = (pd.DataFrame(rows).groupby(["randomizer", "target_eps", "tiers"])
             .agg(accuracy=("accuracy", "mean"), local_eps_max=("local_eps_max", "first"),
                  local_eps_mean=("local_eps_mean", "first")))
    print(f"seed {SEED}, {args.seeds} seeds, T = {args.rounds}")
    print(table.to_string(float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
