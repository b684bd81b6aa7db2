"""Experiment 2: central eps of personalized budget profiles vs n, for every selected bound.

One row per (profile, n, delta0, method): kind, eps at the target delta, seconds, the seed,
status ("ok" or "not_applicable") and the reason a bound does not apply (its
ParameterRegimeError message; eps is then empty).  Budgets are drawn with
``np.random.default_rng([seed, profile_key, n])``: the same users for every delta0 and method,
and the same users whichever job computes the profile (``profile_key`` is a stable hash of the
profile name).

Snakemake interface (rule ``compute_personalized``): output ``table``; params ``profiles``
(names), ``profile_specs`` (name -> spec for :func:`shuffledp.params.profile_from_spec`),
``n``, ``delta``, ``delta0`` (list), ``methods``, ``seed``.
"""


import hashlib
import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import get_logger, snakemake_kwargs, write_table

from shuffledp.compare import compare_bounds
from shuffledp.params import profile_from_spec

COLUMNS = ["profile", "n", "delta0", "delta", "method", "kind", "eps", "seconds", "seed",
           "status", "reason"]


def profile_key(name):
    """A stable 32-bit integer for a profile name (part of the generator's seed)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little")


def rows_for(profile_name, spec, *, n, delta0, delta, methods, seed):
    """Tidy rows for one profile, n and delta0 (every method)."""
    import numpy as np

    rng = np.random.default_rng([int(seed), profile_key(profile_name), int(n)])
    profile = profile_from_spec(spec, n=int(n), rng=rng, delta0=float(delta0),
                                label=profile_name)
    rows = []
    for e in compare_bounds(profile, delta=float(delta), methods=list(methods)):
        row = {"profile": profile_name, "n": int(n), "delta0": float(delta0),
               "delta": float(delta), "method": e.method, "kind": e.kind, "seed": int(seed)}
        if e.result is None:
            row.update(eps=None, seconds=None, status="not_applicable", reason=e.reason,
                       vacuous=None)
        else:
            row.update(eps=e.result.eps, seconds=e.result.seconds, status="ok", reason="",
                       vacuous=e.result.vacuous)
        row["below_lower"] = e.below_lower
        rows.append(row)
    return rows


def main(*, inputs, outputs, params, log=None):
    import pandas as pd

    logger = get_logger(log)
    specs = params["profile_specs"]
    rows = []
    for name in params["profiles"]:
        for n in params["n"]:
            for delta0 in params["delta0"]:
                new = rows_for(name, specs[name], n=n, delta0=delta0, delta=params["delta"],
                               methods=params["methods"], seed=params["seed"])
                rows += new
                logger.info("%s n=%d delta0=%g: %s", name, int(n), float(delta0),
                            ", ".join(f"{r['method']}={r['eps']:.4g}" if r["status"] == "ok"
                                      else f"{r['method']}=n/a" for r in new))
    write_table(pd.DataFrame(rows, columns=COLUMNS), outputs["table"])


if "snakemake" in globals():
    main(**snakemake_kwargs(snakemake))  # noqa: F821
