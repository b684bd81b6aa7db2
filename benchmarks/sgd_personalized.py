"""Does personalization pay under rigorous accounting?  Shuffled SGD at one central target.

Run: ``python benchmarks/sgd_personalized.py [--seeds 3] [--rounds 100] [--eps 1]
[--randomizers duchi duchi_sphere gaussian gaussian_shared] [--profiles identical
uniform_0.5_2 two_groups three_groups] [--methods clones clones_tiers local]``.

For each randomizer and budget profile shape (digits, logistic regression, delta 1e-5, the
profile rounded down to ``--tiers`` levels as the SGD experiment does), three accountings at
the central target ``--eps``:

* ``clones``: every user held to ``eps`` (the guarantee of the worst tier is ``eps``);
* ``clones_tiers``: one target per budget level, ``eps`` times the level's budget over the
  smallest (the users with the smallest budgets get ``eps``);
* ``local``: local-only accounting (no amplification), every user held to ``eps``;

with the test accuracy (mean over seeds), the per-round local budgets and each level's
certified central eps.  "Everyone at the smallest budget" is the ``identical`` profile: one
level, so ``clones`` there holds everyone to ``eps``.  Quoted in the closing note of issue 31
and in docs/theory.md 15.5; minutes on one core.
"""

from __future__ import annotations

import argparse
import time

import torch

from shuffledp.experiments.sgd import run_sgd

SEED = 20240101
PROFILES = {
    "uniform_0.5_2": {"kind": "uniform", "low": 0.5, "high": 2.0},
    "two_groups": {"kind": "mixture", "groups": [[0.5, 0.5], [0.5, 2.0]]},
    "three_groups": {"kind": "mixture", "groups": [[0.54, 1.0], [0.37, 2.0], [0.09, 3.0]]},
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--tiers", type=int, default=4)
    ap.add_argument("--model", default="logreg")
    ap.add_argument("--randomizers", nargs="+", default=["duchi", "duchi_sphere", "gaussian"])
    ap.add_argument("--profiles", nargs="+",
                    default=["identical", "uniform_0.5_2", "two_groups", "three_groups"])
    ap.add_argument("--methods", nargs="+", default=["clones", "clones_tiers", "local"])
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(f"digits, {args.model}, T = {args.rounds}, central eps {args.eps:g}, delta 1e-5, "
          f"{args.seeds} seeds, seed {SEED}, tiers {args.tiers}")
    print("randomizer | profile | method | accuracy | local eps per level | level users | "
          "central eps per level | per-level targets | seconds")
    for rand in args.randomizers:
        for prof in args.profiles:
            for method in args.methods:
                if method == "clones_tiers" and prof == "identical":
                    continue
                cfg = {"randomizer": rand, "profile": prof, "seeds": args.seeds,
                       "model": args.model, "tiers": args.tiers, "rounds": args.rounds}
                start = time.perf_counter()
                rows = run_sgd(method=method, target_eps=args.eps, config=cfg,
                               profiles=PROFILES, seed=SEED)
                secs = time.perf_counter() - start
                ok = [r for r in rows if r["status"] == "ok"]
                if not ok:
                    print(f"{rand} | {prof} | {method} | not reachable: {rows[0]['reason']}")
                    continue
                acc = sum(r["accuracy"] for r in ok) / len(ok)
                r = ok[0]
                print(f"{rand} | {prof} | {method} | {acc:.3f} | {r.get('local_eps_levels')} | "
                      f"{r.get('tier_users', '')} | {r.get('tier_eps', '')} | "
                      f"{r.get('tier_eps_targets', '')} | {secs:.0f}")


if __name__ == "__main__":
    main()
