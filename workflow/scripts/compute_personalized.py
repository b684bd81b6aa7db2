"""Experiment 2: central eps of personalized budget profiles vs n, for every selected bound.

A thin adapter of :func:`shuffledp.experiments.personalized_rows`: one row per (profile, n,
delta0, method): kind, eps at the target delta, seconds, the seed, status ("ok" or
"not_applicable") and the reason a bound does not apply (its ParameterRegimeError message; eps
is then empty).  Budgets are drawn from the stream ``("budgets", profile, n)`` of the master
seed (:mod:`shuffledp.experiments`): the same users for every delta0 and method, and the same
users in every experiment and job that names the profile.

Snakemake interface (rule ``compute_personalized``): output ``table``; params ``profiles``
(names), ``profile_specs`` (name -> spec for
:func:`shuffledp.experiments.profiles.profile_from_spec`),
``n``, ``delta``, ``delta0`` (list), ``methods``, ``seed``.
"""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import get_logger, progress_bar, snakemake_kwargs, write_table

from shuffledp.experiments import PERSONALIZED_COLUMNS as COLUMNS
from shuffledp.experiments import personalized_rows


def main(*, inputs, outputs, params, log=None):
    import pandas as pd

    get_logger(log)
    with progress_bar(f"personalized {','.join(params['profiles'])}") as bar:
        rows = personalized_rows(profiles=params["profiles"], specs=params["profile_specs"],
                                 n=params["n"], delta=float(params["delta"]),
                                 delta0=params["delta0"], methods=params["methods"],
                                 seed=params["seed"], progress=bar)
    write_table(pd.DataFrame(rows, columns=COLUMNS), outputs["table"])


if "snakemake" in globals():
    main(**snakemake_kwargs(snakemake))  # noqa: F821
