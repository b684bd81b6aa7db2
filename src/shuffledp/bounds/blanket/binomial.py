"""The binomial weights of the two-region blanket (:mod:`.two_region`, docs/theory.md 15.4,
"Numerics of D"): ``Bin(c2, 1/2)`` of the tail atoms on a window, and ``Bin(l, q)`` of the
number of low reports in the tails, with the weights of the terms of ``D(h, l)``.

Code names -> symbols: ``beta`` the pmf of Bin(l, q), ``c2`` the number of reports in the
tails, ``lo2``, ``hi2`` the indices where beta is at least ``BETA_SKIP``.
"""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
from numpy.typing import NDArray

from shuffledp._lazy import lazy_module
from shuffledp.caching import frozen_value, lru_get, lru_put, register_mapping

special = lazy_module("scipy.special")
stats = lazy_module("scipy.stats")

__all__ = ["BETA_SKIP", "BETA_REL", "RATIO_REL", "K_WINDOW"]

_U = float(np.finfo(float).eps) / 2.0
#: Binomial weights below this are not evaluated (their terms are charged).
BETA_SKIP = 1e-18
#: The binomial pmf is raised by this relative amount (scipy's relative error: measured at
#: most 5e-11 for n <= 10^9, docs/theory.md 4, 1.1e-12 for the l <= 3 10^6 and q met here),
#: so that it is at least the true pmf; a term scales with its weight (:func:`_weights`).
BETA_REL = 1e-9
#: A bound on the relative rounding of the ratio beta(c2 - 1) / beta(c2) of :func:`_weights`.
RATIO_REL = 1e-14


def _half_binomial(c: int) -> NDArray:
    """The pmf of Bin(c, 1/2), rounded up (relative 1e-12); cached."""
    got = lru_get(_HALF_BINOMIAL, c)
    if got is None:
        got = stats.binom.pmf(np.arange(c + 1), c, 0.5) * (1.0 + 1e-12)
        got.setflags(write=False)
        lru_put(_HALF_BINOMIAL, c, got, 4096)
    return got


_HALF_BINOMIAL: OrderedDict[int, NDArray] = OrderedDict()
register_mapping("two_region.half_binomial", _HALF_BINOMIAL)

#: Half-width of the window of Bin(c2, 1/2) in :func:`_half_binomial_window`, in units of
#: sqrt(c2) (6 standard deviations; Hoeffding: at most e^{-2 K_WINDOW^2} = 1.5e-8 of its mass
#: beyond each end, charged with the values at the window's ends, docs/theory.md 15.4).
K_WINDOW = 3.0


def _half_binomial_window(c2: NDArray) -> tuple[NDArray, ...]:
    """``(k0, k1, pk, p_left, p_right, e_right)``: per row, the pmf of Bin(c2, 1/2) on ``k0 ..
    k0 + w - 1`` (a common width w; 0 beyond ``k1``), rounded up, with ``|k - c2/2| <= K_WINDOW
    sqrt(c2)``; upper bounds on ``Pr[K < k0]``, ``Pr[K > k1]`` and ``E[(K - k1)_+]`` (Hoeffding:
    ``Pr[K >= c2/2 + m] <= exp(-2 m^2 / c2)``, and ``sum_{j > k1} Pr[K >= j] <= int_m^inf
    exp(-2 y^2 / c2) dy <= exp(-2 m^2 / c2) c2 / (4 m)``, ``m = k1 - c2/2``; 0 where nothing is
    left out).  The pmf is ``exp`` of ``lgamma(c2 + 1) - lgamma(k + 1) - lgamma(c2 - k + 1) -
    c2 log 2`` (one table of ``gammaln`` over the integers involved), raised by 64 ulps of the
    sum of those terms' magnitudes (scipy's ``gammaln`` is accurate to a few ulps) and by
    1e-12."""
    c2 = np.asarray(c2, dtype=np.int64)
    half = c2 / 2.0
    m = K_WINDOW * np.sqrt(c2.astype(np.float64))
    k0 = np.maximum(np.ceil(half - m), 0.0).astype(np.int64)
    k1 = np.minimum(np.floor(half + m), c2).astype(np.int64)
    w = int((k1 - k0).max()) + 1
    kk = k0[:, None] + np.arange(w)[None, :]
    ok = kk <= k1[:, None]
    kk = np.where(ok, kk, k0[:, None])
    rest = c2[:, None] - kk
    base = int(min(int(k0.min()), int(rest.min())))
    table = special.gammaln(np.arange(base, int(c2.max()) + 1, dtype=np.float64) + 1.0)
    lg_n = table[c2 - base][:, None]
    lg_k, lg_r = table[kk - base], table[rest - base]
    two = (c2 * math.log(2.0))[:, None]
    log_p = lg_n - lg_k - lg_r - two
    # (|lgamma(k + 1)|, |lgamma(c2 - k + 1)| <= lgamma(c2 + 1) for integers: one slack per row)
    slack = 64.0 * _U * (3.0 * np.abs(lg_n) + two) + 1e-12
    pk = np.where(ok, np.exp(np.minimum(log_p + slack, 0.0)), 0.0)
    c2f = np.maximum(c2.astype(np.float64), 1.0)
    p_left = np.where(k0 > 0, np.exp(-2.0 * (half - (k0 - 1)) ** 2 / c2f), 0.0)
    p_right = np.where(k1 < c2, np.exp(-2.0 * ((k1 + 1) - half) ** 2 / c2f), 0.0)
    m_r = np.maximum(k1 - half, 1e-300)
    e_right = np.where(k1 < c2, np.exp(-2.0 * m_r ** 2 / c2f) * c2f / (4.0 * m_r), 0.0)
    up = 1.0 + 1e-12
    return (k0, k1, pk, np.minimum(p_left, 1.0) * up, np.minimum(p_right, 1.0) * up,
            e_right * up)


def _beta(l_: int, q: float) -> tuple[NDArray, int, int, float]:
    """``(w, lo2, hi2, out)``: the pmf of Bin(l, q) (raised by ``BETA_REL``) at the indices
    ``lo2 - 1 .. hi2 + 1`` (``w[c - lo2 + 1]`` for the index c; 0 at both ends, and outside:
    index it with :func:`_beta_at`), ``[lo2, hi2]`` the indices where it is at least
    ``BETA_SKIP``, and the mass outside them (computed from scipy's tails): only a window of
    about 13 standard deviations around the mean is evaluated (every index with pmf >=
    BETA_SKIP lies in it; no array of length l, which at 10^6 users cost more than the
    rest).  Cached by ``(l, q)`` (read-only arrays): a solve evaluates the same strata at
    every probe (Laplace, ``normal_1.5_0.5``, 10^4 users: 7,176 calls, 1,769 distinct)."""
    key = (int(l_), float(q))
    got = lru_get(_BETA_CACHE, key)
    if got is None:
        got = lru_put(_BETA_CACHE, key, frozen_value(_beta_uncached(*key)), 4096)
    return got


_BETA_CACHE: OrderedDict[tuple, tuple] = OrderedDict()
register_mapping("two_region.beta", _BETA_CACHE)


def _beta_uncached(l_: int, q: float) -> tuple[NDArray, int, int, float]:
    sd = math.sqrt(max(l_ * q * (1.0 - q), 0.0))
    a = max(0, int(math.floor(l_ * q - 13.0 * sd)) - 10)
    b = min(l_, int(math.ceil(l_ * q + 13.0 * sd)) + 10)
    pmf = stats.binom.pmf(np.arange(a, b + 1), l_, q) * (1.0 + BETA_REL)
    big = np.flatnonzero(pmf >= BETA_SKIP)
    if big.size:
        lo2, hi2 = a + int(big[0]), a + int(big[-1])
        window = np.concatenate([[0.0], pmf[lo2 - a:hi2 - a + 1], [0.0]])
    else:  # (every term below BETA_SKIP: the whole range, as the full array had it)
        lo2, hi2 = 0, l_
        window = np.zeros(l_ + 3)
        window[a + 1:b + 2] = pmf
    out_mass = (float(stats.binom.cdf(lo2 - 1, l_, q)) if lo2 > 0 else 0.0) + (
        float(stats.binom.sf(hi2, l_, q)) if hi2 < l_ else 0.0)
    return window, lo2, hi2, out_mass


def _beta_at(window: NDArray, lo2: int, c: NDArray) -> NDArray:
    """The pmf of :func:`_beta` at the indices ``c`` (0 outside ``[lo2, hi2]``)."""
    j = np.asarray(c, dtype=np.int64) - (lo2 - 1)
    ok = (j >= 0) & (j < window.size)
    return np.where(ok, window[np.clip(j, 0, window.size - 1)], 0.0)


def _weights(beta: NDArray, lo2: int, c2: NDArray, l_: int, q: float
             ) -> tuple[NDArray, NDArray]:
    """``(beta(c2), beta(c2 - 1))`` for the terms of ``D(h, l)``, the second as ``beta(c2)``
    times the exact ratio ``beta(c2 - 1) / beta(c2) = c2 (1 - q) / ((l - c2 + 1) q)`` wherever
    ``beta(c2) > 0`` (docs/theory.md 15.4, "Numerics of D"): a term ``E[(b_1 X + b_2 Y)_+]``
    is positively homogeneous in its two weights, so with both from one raised ``beta(c2)``
    it is at least the true term, whatever scipy's relative error below ``BETA_REL``; two
    weights from two rounded pmf values would not be (the term is not monotone in each).  The
    ratio's rounding (a few u, ``RATIO_REL``) is charged by the caller.  Where ``beta(c2)``
    is 0 (c2 = hi2 + 1), the term is linear in ``beta(c2 - 1)``, raised: an upper bound."""
    c2 = np.asarray(c2, dtype=np.int64)
    b1 = np.where(c2 <= l_, _beta_at(beta, lo2, c2), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = c2 * (1.0 - q) / (np.maximum(l_ - c2 + 1, 1) * q)
    b2 = np.where(c2 >= 1, np.where(b1 > 0.0, b1 * ratio, _beta_at(beta, lo2, c2 - 1)), 0.0)
    return b1, b2
