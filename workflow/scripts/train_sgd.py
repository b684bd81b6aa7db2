"""Experiment 6: shuffled PLDP-SGD, test accuracy vs central eps, for one job of the grid.

A thin adapter of :func:`shuffledp.experiments.run_sgd`: ``params["method"]`` is an
accounting method of :mod:`shuffledp.sgd.accounting` (``gdp``, ``clones``, ``local``) or
``nonprivate`` (clipped SGD without noise); ``params["job"]`` the job's randomizer, budget
profile and model (:func:`shuffledp.experiments.sgd.job_config`); ``params["target_eps"]``
the central targets (``[None]`` for ``nonprivate``).  For each target the per-round local
budgets are calibrated once, then one training run per seed; one row per run (method, kind,
target_eps, delta, rounds, local_eps_scale, budget levels, accuracy, seed, status, reason and
the run's settings).  Seeds: run k's seed
is derived from the master seed by the one seeding scheme of :mod:`shuffledp.experiments`
and written in the ``seed`` column; it drives the data split and the ``torch.Generator`` of
the initialisation and every noise draw.  Progress: a bar of training runs in the log.

Reading MNIST files (``sgd.dataset: mnist``) happens in the library's file adapter
:func:`shuffledp.sgd.data.load_mnist`.
"""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import get_logger, progress_bar, snakemake_kwargs, write_table


def main(*, inputs, outputs, params, log=None):
    import pandas as pd
    import torch

    from shuffledp.experiments import run_sgd
    from shuffledp.experiments.sgd import job_config

    get_logger(log)
    torch.set_num_threads(int(params.get("threads", 1)))
    job = job_config(params["sgd"], **params["job"])
    rows = []
    for eps in params["target_eps"]:
        name = (f"train_sgd {job['randomizer']} {job['profile']} {job['model']} "
                f"{params['method']} eps {eps}")
        with progress_bar(name) as bar:
            rows += run_sgd(method=params["method"], target_eps=eps, config=job,
                            profiles=params["profiles"], seed=params["seed"], progress=bar)
    write_table(pd.DataFrame(rows), outputs["table"])


if "snakemake" in globals():
    main(**snakemake_kwargs(snakemake))  # noqa: F821
