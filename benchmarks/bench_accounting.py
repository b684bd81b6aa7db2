"""Benchmark: 1,000 composed shuffled rounds of 10^5 users through dp_accounting (issue 29).

One round: 10^5 users with distinct budgets eps_i ~ Uniform[0.5, 2] (numpy default_rng(seed)),
each running the randomizer (default Laplace); the round's PLD is built from the
mechanism-aware rigorous bound (:func:`shuffledp.accounting.bound_round_pld`, docs/theory.md
16) through :class:`shuffledp.accounting.ShufflePLDAccountant`, then composed ``--rounds``
times together with as many Poisson-subsampled Gaussian steps (q = 0.01, noise multiplier 1).
Printed: the seconds to build the round's PLD, to compose, the eps at delta = 1e-6 of one
round (the PLD's and the bound's own), of the rounds alone and of the whole pipeline, and the
peak resident memory of the process.

Run:  python benchmarks/bench_accounting.py [--n 100000] [--rounds 1000] [--method clones]
      [--randomizer laplace] [--seed 0]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np


def main(argv: list[str] | None = None) -> None:
    from dp_accounting import dp_event

    from shuffledp import BudgetProfile, get_bound
    from shuffledp.accounting import ShuffledRoundDpEvent, ShufflePLDAccountant, bound_round_pld

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--method", default="clones")
    ap.add_argument("--randomizer", default="laplace")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    prof = BudgetProfile.from_arrays(rng.uniform(0.5, 2.0, size=args.n))
    print(f"n = {args.n}, eps_i ~ Uniform[0.5, 2] (seed {args.seed}), randomizer "
          f"{args.randomizer}, method {args.method} (mechanism-aware), {args.rounds} rounds")
    t0 = time.perf_counter()
    pld = bound_round_pld(prof, randomizer=args.randomizer, method=args.method)
    t_build = time.perf_counter() - t0
    bound_eps = get_bound(args.method).eps(profile=prof, delta=1e-6,
                                           mechanism=args.randomizer)
    e_one = pld.get_epsilon_for_delta(1e-6)
    print(f"one round: PLD built in {t_build:.2f} s; eps(1e-6) {e_one:.6g} (the bound itself: "
          f"{bound_eps:.6g})")
    shuffled = ShuffledRoundDpEvent(prof, args.randomizer, method=args.method)
    gauss = dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0))
    acc = ShufflePLDAccountant()
    t0 = time.perf_counter()
    acc.compose(dp_event.SelfComposedDpEvent(shuffled, args.rounds))
    t_rounds = time.perf_counter() - t0
    e_rounds = acc.get_epsilon(1e-6)
    t0 = time.perf_counter()
    acc.compose(dp_event.SelfComposedDpEvent(gauss, args.rounds))
    t_gauss = time.perf_counter() - t0
    e_all = acc.get_epsilon(1e-6)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(f"{args.rounds} shuffled rounds: {t_rounds:.2f} s (the round's PLD built once "
          f"inside), eps(1e-6) {e_rounds:.6g}")
    print(f"+ {args.rounds} subsampled Gaussian steps: {t_gauss:.2f} s, eps(1e-6) {e_all:.6g}")
    print(f"peak resident memory {peak:.0f} MB")


if __name__ == "__main__":
    main()
