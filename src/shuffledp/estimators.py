"""The shuffler and the shuffled protocol: randomize, permute, estimate; error summaries.

The analyst's view (docs/theory.md, section 1): the shuffler applies a uniformly random permutation
to the reports, so the analyst holds the multiset of reports and the budget profile, not which
report carries which budget.  The estimators live on the mechanisms
(:meth:`shuffledp.mechanisms.MeanMechanism.estimate`,
:meth:`shuffledp.mechanisms.FrequencyMechanism.estimate`): they use only those two objects and
are unbiased when the budgets are independent of the values (a uniformly random assignment of
the profile to the users); Laplace, piecewise and Gaussian reports are unbiased for every
assignment.  A user may opt to attach its budget eps_i to its report (``labelled=True``): the
label travels with the report through the same permutation and the estimators then debias
each report with its own budget, unbiased for every assignment.

>>> import numpy as np
>>> from shuffledp.mechanisms import LaplaceMechanism
>>> rng = np.random.default_rng(0)
>>> shuffle(np.arange(5), rng).tolist()
[2, 4, 3, 0, 1]
>>> m = LaplaceMechanism(eps=np.full(1000, 1.0))
>>> abs(run_protocol(m, np.zeros(1000), rng)) < 0.5
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from shuffledp._lazy import lazy_module
from shuffledp.mechanisms.base import Mechanism, as_budgets, as_reports, check_rng
from shuffledp.validation import as_real_array, check_array_range, check_bool, check_real

stats = lazy_module("scipy.stats")  # (its import takes about a second: only when needed)

__all__ = ["shuffle", "run_protocol", "MSESummary", "mse_summary"]


def shuffle(
    reports: ArrayLike,
    rng: np.random.Generator,
    labels: ArrayLike | None = None,
) -> NDArray | tuple[NDArray, NDArray[np.float64]]:
    """Permute the reports (rows, along axis 0) by a uniformly random permutation from ``rng``.

    With ``labels`` (the budgets users chose to attach, one per report) the same permutation
    is applied to them and ``(reports, labels)`` is returned.

    ``reports``: an array of numbers (bool, integer or float), one row per user.

    >>> r, lab = shuffle(np.array([10, 20, 30]), np.random.default_rng(1), labels=[1., 2., 3.])
    >>> (r // 10).tolist() == lab.astype(int).tolist()
    True
    """
    rep = as_reports(reports)
    check_rng(rng)
    lab = None if labels is None else as_budgets(labels, "labels")
    if lab is not None and lab.size != rep.shape[0]:
        raise ValueError(
            f"labels must have one entry per report ({rep.shape[0]}), got length {lab.size}"
        )
    perm = rng.permutation(rep.shape[0])
    if lab is None:
        return rep[perm]
    return rep[perm], lab[perm]


def run_protocol(
    mechanism: Mechanism,
    x: ArrayLike,
    rng: np.random.Generator,
    *,
    labelled: bool = False,
):
    """One run of the shuffled protocol: every user ``i`` randomizes ``x[i]`` with budget
    ``mechanism.eps[i]``, the shuffler permutes, the analyst estimates (a float for mean
    mechanisms, a length-d array for frequency oracles).  ``labelled=True``: users attach
    their eps_i (see the module docstring)."""
    if not isinstance(mechanism, Mechanism):
        raise TypeError(
            f"mechanism must be a shuffledp Mechanism, got {type(mechanism).__name__}"
        )
    check_rng(rng)
    labelled = check_bool(labelled, "labelled")
    reports = mechanism.randomize(x, rng)
    if labelled:
        shuffled, labels = shuffle(reports, rng, labels=mechanism.eps)
        return mechanism.estimate(shuffled, labels=labels)
    return mechanism.estimate(shuffle(reports, rng))


@dataclass(frozen=True)
class MSESummary:
    """Mean squared error over ``reps`` repetitions with a ``level`` confidence interval."""

    mse: float
    ci_low: float
    ci_high: float
    reps: int
    level: float


def mse_summary(sq_errors: ArrayLike, *, level: float = 0.95) -> MSESummary:
    """MSE = mean of the squared errors; CI = mse -+ t_{(1+level)/2, R-1} sd / sqrt(R)
    (Student t interval for a mean; the lower end is clipped at 0).  R = 1 gives an
    infinite interval.

    >>> s = mse_summary([1.0, 1.0, 1.0])
    >>> s.mse, s.ci_low, s.ci_high
    (1.0, 1.0, 1.0)
    """
    e = as_real_array(sq_errors, "sq_errors").ravel()
    if e.size == 0:
        raise ValueError("sq_errors must be a non-empty array of finite values >= 0, got none")
    check_array_range(e, "sq_errors", low=0.0)
    level = check_real(level, "level", low=0.0, high=1.0, low_open=True, high_open=True)
    mse = float(e.mean())
    if e.size == 1:
        return MSESummary(mse, 0.0, math.inf, 1, level)
    half = float(stats.t.ppf(0.5 + level / 2.0, e.size - 1) * e.std(ddof=1) / math.sqrt(e.size))
    return MSESummary(mse, max(mse - half, 0.0), mse + half, int(e.size), level)
