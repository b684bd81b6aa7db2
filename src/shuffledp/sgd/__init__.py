"""Shuffled personalized-LDP SGD (docs/library.md, "Mechanisms, estimation and SGD").

Needs the ``sgd`` extra.

* :mod:`~shuffledp.sgd.data`: scikit-learn's embedded digits; user-supplied MNIST files.
* :mod:`~shuffledp.sgd.models`: logistic regression, a small MLP, per-example gradients.
* :mod:`~shuffledp.sgd.randomizers`: analytic Gaussian and Duchi et al. L2-ball randomizers
  (per-budget spheres, or one sphere for every budget: ``duchi_sphere``).
* :mod:`~shuffledp.sgd.train`: the shuffled SGD protocol.
* :mod:`~shuffledp.sgd.accounting`: T-round central privacy (GDP composition; PLD of the clone
  reduction; local only) and calibration of the local budgets to a central target.
* :mod:`~shuffledp.sgd.tiers`: per-tier central guarantees and calibration to one target per
  budget tier.

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
    DuchiSphereRandomizer,
    GaussianRandomizer,
    clip_rows,
    make_randomizer,
)
from shuffledp.sgd.tiers import TierGuarantee, calibrate_tiers, tier_guarantees
from shuffledp.sgd.train import SGDConfig, TrainResult, train_shuffled_sgd

__all__ = [
    "Calibration",
    "Dataset",
    "DuchiRandomizer",
    "DuchiSphereRandomizer",
    "GaussianRandomizer",
    "METHOD_KIND",
    "RANDOMIZERS",
    "SGDConfig",
    "SGD_METHODS",
    "TierGuarantee",
    "TrainResult",
    "build_model",
    "calibrate_scale",
    "calibrate_tiers",
    "clip_rows",
    "load_digits_dataset",
    "load_mnist",
    "make_randomizer",
    "per_example_grads",
    "rounds_delta",
    "rounds_epsilon",
    "tier_guarantees",
    "train_shuffled_sgd",
]
