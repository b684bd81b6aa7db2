"""Experiment 3 (table): the paper's GDP eps against the exact lower bound over (n, eps0).

A thin adapter of :func:`shuffledp.experiments.gdp_validity_rows`: one row per (n, eps0,
method) with identical local budgets eps0 (pure LDP) and the target ``delta``: ``method``,
``kind``, ``eps`` (NaN when the bound does not apply), ``seconds``, ``status`` ("ok" /
"not_applicable") and ``reason``, ``ratio_to_lower`` = eps / the ``rr_exact`` eps of the same
cell (the gdp row's value is "paper eps / exact lower bound"), and ``below_lower``
(approximations: True when the claimed eps is smaller than what shuffled binary randomized
response provably has; empty for the other kinds, and a rigorous bound below it fails the
job).  ``vacuous``: the value carries no information.  Deterministic: no random draw, no seed.

Snakemake interface: ``output.table``; ``params.n`` (list of int), ``params.eps0`` (list of
float), ``params.delta`` (float), optional ``params.methods`` (default gdp, rr_exact, clones).
"""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import get_logger, progress_bar, snakemake_kwargs, write_table


def main(*, inputs, outputs, params, log=None):
    import pandas as pd

    from shuffledp.experiments import gdp_validity_rows

    get_logger(log)
    with progress_bar(f"gdp_validity n={params['n']}") as bar:
        rows = gdp_validity_rows(n=params["n"], eps0=params["eps0"],
                                 delta=float(params["delta"]), methods=params.get("methods"),
                                 progress=bar)
    write_table(pd.DataFrame(rows), outputs["table"])


if "snakemake" in globals():
    main(**snakemake_kwargs(snakemake))  # noqa: F821
