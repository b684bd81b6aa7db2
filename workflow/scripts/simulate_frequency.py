"""Experiment 5 (frequency estimation): utility of each bound's calibrated local budgets.

A thin adapter of :func:`shuffledp.experiments.run_estimation` with a
:class:`shuffledp.experiments.FrequencyTask` (Zipf or user data over d categories, k-ary
randomized response and optimized unary encoding; sweeps, calibration memo, references
``local_only`` and ``central_laplace``, common random numbers, ``covered``, and the seeding
scheme: see :mod:`shuffledp.experiments`).  One row per (profile, sweep point, mechanism);
the master seed is written in the ``seed`` column.  Progress: a bar of (profile, sweep
point) cells in the log.

Snakemake interface (rule ``simulate_frequency``): output ``table``; params ``method``,
``section`` (the config's ``frequency_estimation`` mapping), ``profiles`` (name -> spec),
``seed``; optional input ``data`` (CSV with integer codes in ``section["data"]["column"]``).
"""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import estimation_job, snakemake_kwargs


def main(*, inputs, outputs, params, log=None):
    estimation_job("frequency", "simulate_frequency", inputs=inputs, outputs=outputs, params=params,
                   log=log)


if "snakemake" in globals():
    main(**snakemake_kwargs(snakemake))  # noqa: F821
