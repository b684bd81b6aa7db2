"""The binomial law: Boost's pmf, cdf and survival function, and their measured accuracy.

``scipy.stats.binom`` evaluates its pmf, cdf and sf with Boost's binomial distribution (ufuncs
in scipy.special); :func:`binom_pmf`, :func:`binom_cdf` and :func:`binom_sf` call the same
ufuncs directly.  Every bound of the project takes its binomial numbers from here, never from
cephes' ``bdtr``/``bdtrc`` (off by 0.27 % at c = 10^7 and by 68 % at c = 10^9 near c / 2;
tests/test_accepted_range.py).

Accuracy, measured against references at 30 digits (tests/test_accepted_range.py): at most
about 5e-11 (relative) for the pmf with n up to 10^9 and p = expit(-eps), eps in [0, 50], and
3e-11 for the survival function of Bin(c, 1/2) with c up to 10^9.  The bounds charge
:data:`SF_RTOL` and :data:`PMF_RTOL` (a factor 20 above) and the absolute floor
:data:`SF_ATOL` (survival functions that underflow).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from shuffledp._lazy import lazy_module

special = lazy_module("scipy.special")
stats = lazy_module("scipy.stats")

__all__ = ["binom_pmf", "binom_cdf", "binom_sf", "binom_half_sf", "SF_RTOL", "PMF_RTOL",
           "SF_ATOL", "MIN_COMPLEMENT"]

#: Relative error allowed for the binomial survival functions and pmf entries (module
#: docstring: measured 3e-11 and 5e-11; the allowance keeps a factor 20).
SF_RTOL = 1e-9
PMF_RTOL = 1e-9
#: Absolute floor of the error bound of a survival function (values that underflow).
SF_ATOL = 1e-300
#: Smallest complement 1 - p of a success probability used by the bounds: a probability is
#: lowered by at most 1e-200 (fewer clones, conservative); keeps Boost's binomial functions
#: out of the subnormal range (they overflow at p ~ 1e-308).
MIN_COMPLEMENT = 1e-200


# scipy.stats.binom evaluates its pmf, cdf and sf with the ufuncs below (Boost's binomial
# distribution, in scipy.special); calling them directly gives the same numbers without
# importing scipy.stats (0.3 to 0.5 s, most of a CLI call).  If a scipy release drops these
# private names, scipy.stats is used instead.
def _binom_ufunc(name: str):
    ufuncs = special._ufuncs
    return getattr(ufuncs, name, None)


def _binom(kind: str, k, n, p) -> NDArray[np.float64]:
    k = np.floor(np.asarray(k, dtype=np.float64))
    n = np.asarray(n, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    k, n, p = np.broadcast_arrays(k, n, p)
    ufunc = _binom_ufunc(f"_binom_{kind}")
    if ufunc is None:  # pragma: no cover - depends on the scipy release
        return np.asarray(getattr(stats.binom, kind)(k, n, p), dtype=np.float64)
    inside = (k >= 0) & (k <= n)
    # clipped to [0, 1] as scipy.stats does (Boost's pmf can exceed 1 by ulps at tiny p)
    out = np.clip(np.asarray(ufunc(np.clip(k, 0, n), n, p), dtype=np.float64), 0.0, 1.0)
    if kind == "pmf":
        return np.where(inside, out, 0.0)
    if kind == "cdf":
        return np.where(k < 0, 0.0, np.where(k >= n, 1.0, out))
    return np.where(k < 0, 1.0, np.where(k >= n, 0.0, out))  # sf


def binom_pmf(k, n, p) -> NDArray[np.float64]:
    """``scipy.stats.binom.pmf(k, n, p)`` (the same ufunc) without importing scipy.stats.

    >>> [round(float(binom_pmf(k, 2, 0.5)), 12) for k in (-1, 0, 1, 2, 3)]
    [0.0, 0.25, 0.5, 0.25, 0.0]
    """
    return _binom("pmf", k, n, p)


def binom_cdf(k, n, p) -> NDArray[np.float64]:
    """``scipy.stats.binom.cdf(k, n, p)`` (0 below the support, 1 above it)."""
    return _binom("cdf", k, n, p)


def binom_sf(k, n, p) -> NDArray[np.float64]:
    """``scipy.stats.binom.sf(k, n, p)`` (1 below the support, 0 above it)."""
    return _binom("sf", k, n, p)


def binom_half_sf(k: NDArray[np.int64], c: NDArray[np.int64]) -> NDArray[np.float64]:
    """S(k) = Pr[Bin(c, 1/2) >= k], elementwise, for any integer k (1 for k <= 0, 0 for
    k > c).  Boost's binomial survival function (what ``scipy.stats.binom.sf`` calls), not
    cephes' ``scipy.special.bdtrc``: the latter is off by 0.27 % at c = 10^7 and by 68 % at
    c = 10^9 near c / 2 (tests/test_accepted_range.py)."""
    return binom_sf(k - 1, c, 0.5)
