"""Experiment 5 (frequency estimation): utility of each bound's calibrated local budgets.

The same design as :mod:`simulate_mean` (sweeps, calibration, seeds, ``covered``, references),
for the frequencies of d categories: data are Zipf(``exponent``) over d categories
(P(k) proportional to (k+1)^-exponent, k = 0..d-1) or a user CSV column of integer codes in
[0, d) resampled with replacement; the mechanisms are k-ary randomized response (``grr``) and
optimized unary encoding (``oue``), with the shuffled estimators of
:class:`shuffledp.mechanisms.FrequencyMechanism`.  The error of one run is the mean over the d
categories of the squared error of the estimated frequency (so ``mse`` is per category);
``central_laplace`` adds Lap(2/(n eps)) to each frequency (L1 sensitivity of the histogram of
frequencies under replacement: 2/n).

Snakemake interface (rule ``simulate_frequency``): output ``table``; params ``method``,
``section`` (the config's ``frequency_estimation`` mapping), ``profiles``, ``seed``; optional
input ``data``.
"""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from simulate_mean import COLUMNS, load_column, simulate
from wfutils import get_logger, snakemake_kwargs, write_table


class FrequencyTask:
    """Frequencies over d categories: data model, mechanisms and error of experiment 5."""

    def __init__(self, section, data_path=None):
        import numpy as np

        from shuffledp.mechanisms import FREQUENCY_MECHANISMS

        self.d = int(section["d"])
        self.data = dict(section["data"])
        self.mechanisms = {m: FREQUENCY_MECHANISMS[m] for m in section["mechanisms"]}
        self.pool = None
        if self.data["distribution"] == "csv":
            vals = load_column(data_path, self.data["column"])
            if not ((vals == np.round(vals)) & (vals >= 0) & (vals < self.d)).all():
                raise ValueError(
                    f"data column {self.data['column']!r} must hold integer categories in "
                    f"[0, {self.d})")
            self.pool = vals.astype(np.int64)
        else:
            w = np.arange(1, self.d + 1, dtype=float) ** -float(self.data["exponent"])
            self.weights = w / w.sum()

    def build(self, cls, profile):
        return cls.from_profile(profile, d=self.d)

    def draw(self, rng, n):
        if self.pool is not None:
            return rng.choice(self.pool, size=n, replace=True)
        return rng.choice(self.d, size=n, p=self.weights)

    def truth(self, x):
        import numpy as np

        return np.bincount(x, minlength=self.d) / x.size

    @staticmethod
    def sq_error(est, truth):
        return float(((est - truth) ** 2).mean())

    @staticmethod
    def theory(mech, x):
        return float(mech.variance(x).mean())

    def central(self, rng, truth, n, eps):
        return truth + rng.laplace(0.0, 2.0 / (n * eps), size=self.d)

    @staticmethod
    def central_theory(n, eps):
        return 2.0 * (2.0 / (n * eps)) ** 2


def main(*, inputs, outputs, params, log=None):
    import pandas as pd

    logger = get_logger(log)
    section = params["section"]
    task = FrequencyTask(section, inputs.get("data"))
    rows = simulate(task=task, method=params["method"], section=section,
                    profiles=params["profiles"], seed=params["seed"], logger=logger)
    write_table(pd.DataFrame(rows, columns=COLUMNS), outputs["table"])


if "snakemake" in globals():
    main(**snakemake_kwargs(snakemake))  # noqa: F821
