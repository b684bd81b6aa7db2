"""Experiment 1: central eps vs n for identical local eps0, every selected bound.

One row per (n, eps0, method): kind (approximate / upper / lower), eps at the target delta,
seconds, status ("ok" or "not_applicable" with the reason), and the gdp diagnostics.
Deterministic (no random draw), so no seed column is needed.
"""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import get_logger, snakemake_kwargs, write_table

from shuffledp import BudgetProfile
from shuffledp.compare import compare_bounds


def evaluation_rows(evals, **keys):
    """Tidy rows from :func:`shuffledp.compare.compare_bounds` output."""
    rows = []
    for e in evals:
        row = dict(keys)
        row.update(method=e.method, kind=e.kind)
        if e.result is None:
            row.update(eps=None, seconds=None, status="not_applicable", reason=e.reason,
                       vacuous=None)
        else:
            r = e.result
            row.update(eps=r.eps, seconds=r.seconds, status="ok", reason="", vacuous=r.vacuous)
            for key in ("expected_clones", "clt_ok", "reduced_to_identical"):
                if key in r.diagnostics:
                    row[key] = r.diagnostics[key]
            row["below_lower"] = e.below_lower
        rows.append(row)
    return rows


def main(*, inputs, outputs, params, log=None):
    import pandas as pd

    logger = get_logger(log)
    eps0, delta = float(params["eps0"]), float(params["delta"])
    rows = []
    for n in params["n"]:
        profile = BudgetProfile.identical(n=int(n), eps0=eps0)
        evals = compare_bounds(profile, delta=delta, methods=params["methods"])
        rows += evaluation_rows(evals, n=int(n), eps0=eps0, delta=delta)
        logger.info(
            "n=%d eps0=%g: %s",
            n,
            eps0,
            ", ".join(
                f"{e.method}={e.result.eps:.4g}" if e.ok else f"{e.method}=n/a" for e in evals
            ),
        )
    write_table(pd.DataFrame(rows), outputs["table"])


if "snakemake" in globals():
    main(**snakemake_kwargs(snakemake))  # noqa: F821
