"""Exact lower bound from shuffled k-ary randomized response (registered ``krr_exact``).

The k-ary randomized response (GRR) of Warner (1965) / Kairouz, Oh, Viswanath (ICML 2014)
with budget eps0 reports the true value in {0, ..., k-1} with probability
``p = e^{eps0} / (e^{eps0} + k - 1)`` and each other value with ``q = 1 / (e^{eps0} + k - 1)``.
After shuffling, the analyst's view is equivalent to the histogram of the n reports.  For a
fixed neighbouring pair (the victim holds value 0 or 1; the others' values fixed) the two
histogram laws are exact, so their hockey-stick divergence is the exact delta(eps) of that
pair: a lower bound on the worst case of every (eps0)-LDP randomizer, since k-RR is one.
docs/theory.md, section 9 (the same construction for k-ary randomized response through the
histogram of the reports, small k and small n).

Code names: ``k`` = k, ``eps0`` = eps0, ``p``, ``q`` as above; the histogram is stored on its
first k-1 coordinates (the last count is n minus their sum).

Search over pairs (identical budgets; by symmetry only how many others hold each value
matters):

* ``n - 1 <= exhaustive_n``: every composition of the n - 1 others over the k values;
* otherwise the k-RR analogue of the binary extreme pairs: all others hold value 0, all hold
  value 1, or all hold value 2 (each a multinomial in closed form).

Both directions H(P||Q) and H(Q||P) are taken.  Identical budgets only (a personalized
profile raises :class:`~shuffledp.errors.ParameterRegimeError`), and only while the histogram
grid ``(n + 1)^(k - 1)`` has at most ``max_cells`` cells.  Local delta_i are ignored: pure
k-RR is also (eps0, delta0)-LDP, so the curve is still a valid lower bound.

>>> from shuffledp import BudgetProfile
>>> d2 = krr_exact_delta(profile=BudgetProfile.identical(n=6, eps0=1.0), eps=0.2, k=3)
>>> 0.0 < d2 < 1.0
True
"""

from __future__ import annotations

import itertools
import math
from collections import OrderedDict
from typing import Any

import numpy as np
from numpy.typing import NDArray

from shuffledp._lazy import lazy_module
from shuffledp.bounds.base import Bound, BoundInfo, Coverage
from shuffledp.bounds.registry import register_bound
from shuffledp.budgets import BudgetProfile
from shuffledp.caching import lru_get, lru_put, register_mapping
from shuffledp.errors import ParameterRegimeError
from shuffledp.families import Family, get_family

special = lazy_module("scipy.special")

__all__ = ["krr_exact_delta", "krr_histogram_pair"]

K = 3
EXHAUSTIVE_N = 12
MAX_CELLS = 4_000_000
_U = float(np.finfo(float).eps) / 2.0


def _law_rtol(n: int, eps0: float, k: int) -> float:
    """Relative error allowed for each histogram-law entry: it is exp of a log-multinomial
    whose terms (gammaln of up to n + 1, counts times log-probabilities down to
    -(eps0 + log k)) each carry a few ulps of their magnitude, M <= (n + 1)(log(n + 1) +
    eps0 + 2 log k) + 10; 16 u M bounds the relative error of the exponential and of the
    direct convolutions.  Subtracted from every sum so that the result stays a lower bound
    (checked against exhaustive enumeration in tests/bounds/test_krr_exact.py)."""
    mag = (n + 1) * (math.log(n + 1) + eps0 + 2.0 * math.log(k)) + 10.0
    return 16.0 * _U * mag


def _probs(eps0: float, k: int) -> tuple[float, float]:
    """(p, q) of k-RR: p = e^eps0/(e^eps0+k-1), q = 1/(e^eps0+k-1), computed stably."""
    q = math.exp(-math.log(math.exp(eps0) + k - 1)) if eps0 < 700 else 0.0
    p = 1.0 - (k - 1) * q
    return p, q


def _multinomial_grid(m: int, probs: NDArray[np.float64], size: int) -> NDArray[np.float64]:
    """Pmf of Multinomial(m, probs) on the grid of its first k-1 counts, each in [0, size)."""
    k = probs.size
    axes = np.meshgrid(*[np.arange(size)] * (k - 1), indexing="ij", sparse=True)
    partial = sum(axes)
    last = m - partial
    ok = last >= 0
    logp = special.gammaln(m + 1) - special.gammaln(np.where(ok, last, 0) + 1)
    with np.errstate(divide="ignore"):
        logs = np.log(probs)
    logp = logp + np.where(ok, last, 0) * logs[-1]
    for i, ax in enumerate(axes):
        logp = logp - special.gammaln(ax + 1) + np.where(ax > 0, ax * logs[i], 0.0)
    out = np.where(ok & np.isfinite(logp), np.exp(logp), 0.0)
    return out


def _others_law(counts: tuple[int, ...], p: float, q: float, k: int, size: int):
    """Law of the others' histogram when counts[v] others hold value v: one multinomial in
    closed form, or a *direct* convolution of several (non-negative terms only, so every entry
    keeps a small relative error; no FFT round-off, which a lower bound would have to pay)."""
    from scipy.signal import convolve

    law = None
    for v, m in enumerate(counts):
        if m == 0:
            continue
        probs = np.full(k, q)
        probs[v] = p
        part = _multinomial_grid(m, probs, size)
        if law is None:
            law = part
        else:
            law = convolve(law, part, method="direct")[tuple(slice(0, size) for _ in range(k - 1))]
    if law is None:
        law = np.zeros((size,) * (k - 1))
        law[(0,) * (k - 1)] = 1.0
    return law


def krr_histogram_pair(
    counts: tuple[int, ...], *, eps0: float, k: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Exact histogram laws (P, Q) of n = sum(counts) + 1 shuffled k-RR reports, the victim
    holding 0 (P) or 1 (Q) and ``counts[v]`` others holding value v."""
    p, q = _probs(eps0, k)
    n = sum(counts) + 1
    size = n + 1
    others = _others_law(counts, p, q, k, size)

    def with_victim(value: int) -> NDArray[np.float64]:
        out = np.zeros_like(others)
        for r in range(k):
            w = p if r == value else q
            if r == k - 1:  # the last category is not on the grid: no shift
                out += w * others
            else:
                shifted = np.zeros_like(others)
                src = [slice(None)] * (k - 1)
                dst = [slice(None)] * (k - 1)
                src[r] = slice(0, size - 1)
                dst[r] = slice(1, size)
                shifted[tuple(dst)] = others[tuple(src)]
                out += w * shifted
        return out

    return with_victim(0), with_victim(1)


def _pairs(n: int, k: int, exhaustive_n: int) -> list[tuple[int, ...]]:
    m = n - 1
    if m <= exhaustive_n:
        return [c for c in itertools.product(range(m + 1), repeat=k) if sum(c) == m]
    return [tuple(m if i == v else 0 for i in range(k)) for v in range(min(k, 3))]


def _check(*, profile: BudgetProfile, k: int = K, exhaustive_n: int = EXHAUSTIVE_N,
           max_cells: int = MAX_CELLS) -> None:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 3 <= k <= 6:
        raise ValueError(f"k must be an integer in [3, 6] (k = 2 is rr_exact), got {k!r}")
    if isinstance(exhaustive_n, bool) or not isinstance(exhaustive_n, (int, np.integer)) or (
        not 0 <= exhaustive_n <= 30
    ):
        raise ValueError(f"exhaustive_n must be an integer in [0, 30], got {exhaustive_n!r}")
    if not isinstance(max_cells, (int, np.integer)) or max_cells < 1:
        raise ValueError(f"max_cells must be a positive integer, got {max_cells!r}")
    cells = (profile.n + 1) ** (k - 1)
    if cells > max_cells:
        raise ParameterRegimeError(
            f"krr_exact needs (n+1)^(k-1) <= {max_cells} histogram cells, got n = {profile.n}, "
            f"k = {k} ({cells:.3g} cells)"
        )


_CACHE: OrderedDict[tuple, list[tuple[NDArray, NDArray]]] = OrderedDict()
register_mapping("krr_exact.laws", _CACHE)


def _laws(profile: BudgetProfile, k: int, exhaustive_n: int):
    key = (profile.n, float(profile.tiers.eps[0]), k, exhaustive_n)
    hit = lru_get(_CACHE, key)
    if hit is None:
        hit = lru_put(_CACHE, key, [
            krr_histogram_pair(c, eps0=float(profile.tiers.eps[0]), k=k)
            for c in _pairs(profile.n, k, exhaustive_n)
        ], 16)
    return hit


def krr_exact_delta(
    *, profile: BudgetProfile, eps: float, k: int = K, exhaustive_n: int = EXHAUSTIVE_N,
    max_cells: int = MAX_CELLS,
) -> float:
    """max over the searched pairs and both directions of the exact delta(eps)."""
    if not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    if not profile.is_identical:
        raise ParameterRegimeError("krr_exact is implemented for identical budgets only")
    _check(profile=profile, k=k, exhaustive_n=exhaustive_n, max_cells=max_cells)
    if eps >= float(profile.tiers.eps[0]):  # pure eps0-LDP already: the true delta is 0
        return 0.0
    e = math.exp(eps)  # eps < eps0 <= 50
    rtol = _law_rtol(profile.n, float(profile.tiers.eps[0]), k)
    best = 0.0
    for P, Q in _laws(profile, k, exhaustive_n):
        for a, b in ((P, Q), (Q, P)):
            diff = a - e * b
            pos = diff > 0.0
            # entries carry a relative error <= _LAW_RTOL: subtract what it can add
            value = float(diff[pos].sum()) - rtol * float((a[pos] + e * b[pos]).sum())
            best = max(best, value)
    return min(max(best, 0.0), 1.0)


def _diagnostics(*, profile: BudgetProfile, eps: float, delta: float, k: int = K,
                 exhaustive_n: int = EXHAUSTIVE_N, max_cells: int = MAX_CELLS) -> dict[str, Any]:
    return {"pairs_searched": len(_pairs(profile.n, k, exhaustive_n)),
            "exhaustive": profile.n - 1 <= exhaustive_n, "k": k}


def _covers(*, family: Family, profile: BudgetProfile, k: int = K,
            exhaustive_n: int = EXHAUSTIVE_N, max_cells: int = MAX_CELLS) -> Coverage:
    own = get_family(f"krr:{k}")
    if family.includes(own):
        return Coverage(True, f"exact curve of {own}, one of the {family} protocols")
    return Coverage(False, f"krr_exact is the exact curve of {own}, not a {family} protocol")


BOUND = register_bound(
    Bound(
        info=BoundInfo(
            name="krr_exact",
            kind="lower",
            title="Shuffled k-ary randomized response, exact histogram law (lower bound)",
            citation="k-RR (Kairouz, Oh, Viswanath 2014); exact histogram laws; docs/theory.md 9",
            personalized=False,
            approx_ldp=True,
            randomizers=("krr:3",),
            options={"k": K, "exhaustive_n": EXHAUSTIVE_N, "max_cells": MAX_CELLS},
            coverage_note="a lower bound for k-RR with its k (option k) and for any randomizer",
        ),
        delta_fn=krr_exact_delta,
        check_fn=_check,
        diagnostics_fn=_diagnostics,
        covers_fn=_covers,
    )
)
