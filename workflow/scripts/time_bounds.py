"""Experiment 7: wall-clock time of eps(delta) for each bound vs n (in-process timing).

Budgets are drawn once per n from the configured profile with the project's one seeding
scheme (:func:`shuffledp.experiments.draw_budgets`: the same users as in every experiment); each
(method, n) is timed ``repeats`` times and the minimum and median are reported.  Every
repetition starts cold: :func:`shuffledp.clear_caches` empties every registered cache of the
library (:mod:`shuffledp.caching`: clone-count pmfs, profile digests, rr_exact pairs, budget
tiers, ...) right before the timed call.
"""

import sys
import time

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import get_logger, snakemake_kwargs, write_table

from shuffledp import ParameterRegimeError, clear_caches, get_bound
from shuffledp.experiments import draw_budgets
from shuffledp.experiments._columns import (
    BOUND_KINDS,
    CHOICE,
    IDENTIFIER,
    INTEGER,
    NUMBER,
    STATUS,
    STRING,
    Columns,
    col,
)

#: Columns of the runtime table (the rows written below), with their types (the workflow
#: validates the table against them): seconds of each bound at each n, empty when the bound
#: does not apply (status not_applicable, with the reason).
RUNTIME_TABLE = Columns(
    (
        col("method", IDENTIFIER),
        col("kind", CHOICE, values=BOUND_KINDS),
        col("n", INTEGER),
        col("profile", STRING),
        col("delta", NUMBER),
        col("eps", NUMBER, nullable=True),
        col("seconds_min", NUMBER, nullable=True),
        col("seconds_median", NUMBER, nullable=True),
        col("repeats", INTEGER),
        col("seed", INTEGER),
        col("status", CHOICE, values=STATUS),
        col("reason", STRING, nullable=True),
    ),
    ok_requires=("eps", "seconds_min", "seconds_median"),
)


def main(*, inputs, outputs, params, log=None):
    import numpy as np
    import pandas as pd

    logger = get_logger(log)
    seed = int(params["seed"])
    rows = []
    for n in params["n"]:
        base = draw_budgets(params["profile"], params["profile_spec"], n=int(n), seed=seed)
        for method in params["methods"]:
            bound = get_bound(method)
            times, eps, status, reason = [], None, "ok", ""
            for _ in range(int(params["repeats"])):
                clear_caches()  # cold: nothing computed by an earlier call is reused
                start = time.perf_counter()
                try:
                    eps = bound.eps(profile=base, delta=float(params["delta"]))
                except ParameterRegimeError as err:
                    status, reason = "not_applicable", str(err)
                    break
                times.append(time.perf_counter() - start)
            rows.append(
                {
                    "method": method,
                    "kind": bound.info.kind,
                    "n": int(n),
                    "profile": params["profile"],
                    "delta": float(params["delta"]),
                    "eps": eps,
                    "seconds_min": min(times) if times else None,
                    "seconds_median": float(np.median(times)) if times else None,
                    "repeats": len(times),
                    "seed": seed,
                    "status": status,
                    "reason": reason,
                }
            )
            logger.info(
                "n=%d %s: %s", n, method, f"{min(times):.4f}s" if times else f"n/a ({reason})"
            )
    write_table(pd.DataFrame(rows), outputs["table"])


if "snakemake" in globals():
    main(**snakemake_kwargs(snakemake))  # noqa: F821
