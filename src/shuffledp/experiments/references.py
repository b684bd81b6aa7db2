"""The reference methods of the utility experiments: no shuffling, and a trusted curator.

``local_only``: no amplification, every user's local eps is the central target eps at its
largest (:func:`shuffledp.calibration.local_only_scale`, used through
:class:`~shuffledp.experiments.memo.CalibrationMemo`); its rows run the same mechanisms as the
bounds and are always a guarantee (``covered = True``).

``central_laplace``: the trusted-curator Laplace mechanism (Dwork, McSherry, Nissim, Smith,
TCC 2006) on the exact statistic: the mean of n values in [-1, 1], or the vector of the d
category frequencies.  Under replacement of one user both have L1 sensitivity 2/n, so the
noise is Lap(2 / (n eps)) on each entry (pure eps-DP, delta = 0), and the mean squared error
of each entry is ``2 (2 / (n eps))^2`` (:func:`central_laplace_mse`).

>>> import numpy as np
>>> central_laplace(0.5, n=1000, eps=1.0, rng=np.random.default_rng(0)) != 0.5
True
>>> central_laplace_mse(n=1000, eps=1.0)
8e-06
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from shuffledp.validation import check_int, check_real, check_rng

__all__ = ["REFERENCES", "LOCAL_ONLY", "CENTRAL_LAPLACE", "central_laplace",
           "central_laplace_mse"]

LOCAL_ONLY = "local_only"
CENTRAL_LAPLACE = "central_laplace"
#: The reference methods (rows of kind ``reference``).
REFERENCES = (LOCAL_ONLY, CENTRAL_LAPLACE)


def _scale(n: object, eps: object) -> float:
    n = check_int(n, "n", low=1)
    eps = check_real(eps, "eps", low=0.0, low_open=True)
    return 2.0 / (n * eps)


def central_laplace(truth: ArrayLike, *, n: int, eps: float, rng: np.random.Generator):
    """``truth`` plus independent Lap(2 / (n eps)) noise on each entry (a float for a scalar
    ``truth``, an array otherwise), drawn from ``rng``."""
    b = _scale(n, eps)
    check_rng(rng)
    t = np.asarray(truth, dtype=float)
    if t.ndim == 0:
        return float(t) + float(rng.laplace(0.0, b))
    return t + rng.laplace(0.0, b, size=t.shape)


def central_laplace_mse(*, n: int, eps: float) -> float:
    """Mean squared error of one entry of :func:`central_laplace`: ``2 (2 / (n eps))^2``."""
    return 2.0 * _scale(n, eps) ** 2
