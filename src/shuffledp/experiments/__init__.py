"""The experiment engine: what the workflow's jobs compute, as library functions.

The workflow scripts (``workflow/scripts/*.py``) only read Snakemake's params, call one
function here and write its rows as a table.  Modules:

* :mod:`~shuffledp.experiments.seeding`: the one seeding scheme (below);
* :mod:`~shuffledp.experiments.sweeps`: sweep points, profile lists, :func:`draw_budgets`;
* :mod:`~shuffledp.experiments.memo`: :class:`CalibrationMemo`, each calibration of a run
  computed once, keyed by everything it depends on;
* :mod:`~shuffledp.experiments.references`: the reference methods ``local_only`` and
  ``central_laplace``;
* :mod:`~shuffledp.experiments.estimation`: mean and frequency estimation at calibrated local
  budgets (experiments 4 and 5), :func:`run_estimation`;
* :mod:`~shuffledp.experiments.grids`: grids of bound evaluations (experiments 1, 2, 3);
* :mod:`~shuffledp.experiments.validity`: every bound against the certified lower bound of the
  randomizer the users run (experiment 8), :func:`validity_rows`;
* :mod:`~shuffledp.experiments.sgd`: the shuffled PLDP-SGD driver (experiment 6),
  :func:`run_sgd` (imports torch when called).

Seeding scheme
--------------
Every random draw of every experiment comes from a generator built by
:func:`rng_for(seed, *tags) <shuffledp.experiments.seeding.rng_for>`: ``seed`` is the
configuration's master seed (config key ``seed``) and the *tags* name the stream.  The pair is
encoded as the JSON text ``["shuffledp", seed, *tags]``, hashed with SHA-256, and the first 16
bytes are the entropy of a :class:`numpy.random.SeedSequence` (a stable hash: the same stream
on every machine and Python version; the encoding keeps every tag, so ``("data", 1)`` and
``("data", 1, 0)`` differ).  :func:`seed_int` gives an integer of a stream for generators
that take one (``torch.Generator``).  The streams:

=============================================  ==============================================
tags                                           draws
=============================================  ==============================================
``("budgets", profile, n)``                    the n users of a budget profile: the same users
                                               in every experiment, method, target, mechanism
                                               and local delta0
``("data", task, n, r)``                       data of repetition r (task ``mean`` or
                                               ``frequency``), the same for every method
``("noise", task, n, r, mechanism)``           randomizer and shuffler of repetition r (or the
                                               central Laplace noise), the same for every method
``("sgd_run", k)``                             the seed of SGD run k (``seed_int``, written in
                                               the SGD table); under it ``("sgd_split",)``
                                               splits the data and ``("sgd_noise",)`` seeds
                                               the torch generator
=============================================  ==============================================

No stream depends on the method, so methods are compared with common random numbers: they
differ only through their calibrated local budgets.  Tables write the master seed in their
``seed`` column (the SGD table: each run's seed).  The bound grids of experiments 1 and 3 draw
nothing.

Progress: the long loops (:func:`run_estimation`, :func:`run_sgd`, the grid functions) take an
optional ``progress`` callable, called as ``progress(done, total)``: first ``(0, total)``,
then after each unit of work (a grid point or a training run).
"""

from __future__ import annotations

from shuffledp.experiments.estimation import (
    ESTIMATION_COLUMNS,
    EstimationConfig,
    FrequencyTask,
    MeanTask,
    bound_options,
    is_covered,
    run_estimation,
)
from shuffledp.experiments.grids import (
    PERSONALIZED_COLUMNS,
    bounds_vs_n_rows,
    evaluation_rows,
    gdp_validity_rows,
    personalized_rows,
)
from shuffledp.experiments.memo import Calibrated, CalibrationMemo
from shuffledp.experiments.references import (
    CENTRAL_LAPLACE,
    LOCAL_ONLY,
    REFERENCES,
    central_laplace,
    central_laplace_mse,
)
from shuffledp.experiments.seeding import rng_for, seed_entropy, seed_int, seed_sequence
from shuffledp.experiments.sgd import NONPRIVATE, run_sgd
from shuffledp.experiments.sweeps import (
    IDENTICAL,
    SweepPoint,
    draw_budgets,
    profile_list,
    sweep_points,
)
from shuffledp.experiments.validity import VALIDITY_COLUMNS, validity_rows

__all__ = [
    "CENTRAL_LAPLACE",
    "ESTIMATION_COLUMNS",
    "IDENTICAL",
    "LOCAL_ONLY",
    "NONPRIVATE",
    "PERSONALIZED_COLUMNS",
    "REFERENCES",
    "VALIDITY_COLUMNS",
    "Calibrated",
    "CalibrationMemo",
    "EstimationConfig",
    "FrequencyTask",
    "MeanTask",
    "SweepPoint",
    "bound_options",
    "bounds_vs_n_rows",
    "central_laplace",
    "central_laplace_mse",
    "draw_budgets",
    "evaluation_rows",
    "gdp_validity_rows",
    "is_covered",
    "personalized_rows",
    "profile_list",
    "rng_for",
    "run_estimation",
    "run_sgd",
    "seed_entropy",
    "seed_int",
    "seed_sequence",
    "sweep_points",
    "validity_rows",
]
