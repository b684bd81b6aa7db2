"""Shuffled personalized-LDP SGD (docs/library.md, "Mechanisms, estimation and SGD").

Needs the ``sgd`` extra.

* :mod:`~shuffledp.sgd.data`: scikit-learn's embedded digits; user-supplied MNIST files.
* :mod:`~shuffledp.sgd.models`: logistic regression, a small MLP, per-example gradients.
* :mod:`~shuffledp.sgd.randomizers`: analytic Gaussian and Duchi et al. L2-ball randomizers.
* :mod:`~shuffledp.sgd.train`: the shuffled SGD protocol.
* :mod:`~shuffledp.sgd.accounting`: T-round central privacy (GDP composition; PLD of the clone
  reduction; local only) and calibration of the local budgets to a central target.

Importing this package imports torch.
"""

from __future__ import annotations

from shuffledp.sgd.accounting import (
    METHOD_KIND,
    SGD_METHODS,
    Calibration,
    calibrate_scale,
    rounds_delta,
    rounds_epsilon,
)
from shuffledp.sgd.data import Dataset, load_digits_dataset, load_mnist
from shuffledp.sgd.models import build_model, per_example_grads
from shuffledp.sgd.randomizers import (
    RANDOMIZERS,
    DuchiRandomizer,
    GaussianRandomizer,
    clip_rows,
    make_randomizer,
)
from shuffledp.sgd.train import SGDConfig, TrainResult, train_shuffled_sgd

__all__ = [
    "Calibration",
    "Dataset",
    "DuchiRandomizer",
    "GaussianRandomizer",
    "METHOD_KIND",
    "RANDOMIZERS",
    "SGDConfig",
    "SGD_METHODS",
    "TrainResult",
    "build_model",
    "calibrate_scale",
    "clip_rows",
    "load_digits_dataset",
    "load_mnist",
    "make_randomizer",
    "per_example_grads",
    "rounds_delta",
    "rounds_epsilon",
    "train_shuffled_sgd",
]
