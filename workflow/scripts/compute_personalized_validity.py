"""Experiment 8: every bound against the best certified lower bound of the randomizer the users
run, per budget profile and n (personalized validity study).

A thin adapter of :func:`shuffledp.experiments.validity.validity_rows` (the columns of
:data:`~shuffledp.experiments.validity.VALIDITY_COLUMNS`): one job per randomizer.  A rigorous
upper bound that covers the randomizer and falls below the certified lower bound raises
:class:`~shuffledp.compare.InconsistentBoundsError`: the job fails loudly and writes nothing.
Budgets are drawn from the stream ``("budgets", profile, n)`` of the master seed (the same
users as in every experiment naming the profile).

Snakemake interface (rule ``compute_personalized_validity``): output ``table``; params
``profiles`` (names), ``profile_specs``, ``randomizers`` (specs, one per job), ``n``,
``delta``, ``gaussian_delta0``, ``methods``, ``seed``.
"""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import get_logger, progress_bar, run_main, write_table

from shuffledp.experiments.validity import VALIDITY_COLUMNS, validity_rows


def main(*, inputs, outputs, params, log=None):
    import pandas as pd

    get_logger(log)
    with progress_bar(f"validity {','.join(params['randomizers'])}") as bar:
        rows = validity_rows(profiles=params["profiles"], specs=params["profile_specs"],
                             randomizers=params["randomizers"], n=params["n"],
                             delta=float(params["delta"]),
                             gaussian_delta0=float(params["gaussian_delta0"]),
                             methods=params["methods"], seed=params["seed"], progress=bar)
    write_table(pd.DataFrame(rows, columns=VALIDITY_COLUMNS), outputs["table"])


if "snakemake" in globals():
    run_main(main, snakemake)  # noqa: F821
