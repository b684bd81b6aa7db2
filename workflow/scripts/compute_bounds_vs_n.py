"""Experiment 1: central eps vs n for identical local eps0, every selected bound.

A thin adapter of :func:`shuffledp.experiments.bounds_vs_n_rows`: one row per (n, eps0,
method) with kind (approximate / upper / lower), eps at the target delta, seconds, status
("ok" or "not_applicable" with the reason), vacuous, below_lower and the gdp diagnostics.
Deterministic (no random draw), so no seed column is needed.

Snakemake interface: ``output.table``; ``params.n`` (list of int), ``params.eps0`` (float),
``params.delta`` (float), ``params.methods`` (bound names).
"""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import get_logger, progress_bar, snakemake_kwargs, write_table


def main(*, inputs, outputs, params, log=None):
    import pandas as pd

    from shuffledp.experiments import bounds_vs_n_rows

    get_logger(log)
    with progress_bar(f"bounds_vs_n eps0={params['eps0']}") as bar:
        rows = bounds_vs_n_rows(n=params["n"], eps0=float(params["eps0"]),
                                delta=float(params["delta"]), methods=params["methods"],
                                progress=bar)
    write_table(pd.DataFrame(rows), outputs["table"])


if "snakemake" in globals():
    main(**snakemake_kwargs(snakemake))  # noqa: F821
