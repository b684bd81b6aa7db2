"""The ``clones`` calibration guide: the generic clone reduction on a quantized copy of the shape.

:func:`shuffledp.calibration.calibrate_scale` searches the scale s of a budget profile at which
a bound certifies a target; for a large profile with many distinct budgets each evaluation is
dominated by the n users.  The guide (registered as the ``clones`` bound's ``guide_fn``) runs
the search first on a copy of the shape with every eps_i rounded *up* onto the grid
``max_i eps_i (1 + rho)^{-k}`` (a few thousand distinct budgets, convolved directly).  Rounding
budgets up can only raise the clone-reduction bound, and by at most what scaling by ``1 + rho``
does (docs/theory.md, section 4: the bound is non-decreasing in every user's budget), so for
every s

    delta_bound(s) <= guide.delta(s) <= delta_bound(s (1 + rho)).

It evaluates the conservative victim of docs/theory.md section 4 (eps_v = max eps_i,
delta_v = max delta_i, the pool without one user of largest mass) through
:func:`~shuffledp.bounds.clones.bound.clone_reduction_delta`.  No guide for the
mechanism-aware masses or for profiles with several deltas.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from shuffledp.bounds.clones.bound import clone_reduction_delta
from shuffledp.bounds.clones.masses import clone_probabilities
from shuffledp.budgets import BudgetProfile

__all__ = ["Guide", "clones_guide", "GUIDE_MAX_GROUPS", "GUIDE_FLOOR"]

#: Largest number of distinct budgets of the guide's quantized shape (the clone-count pmf
#: then stays on the pairwise path of shuffledp.poisson_binomial, up to 4096 groups).
GUIDE_MAX_GROUPS = 4000
#: Budgets below max_i eps_i times this are rounded up to it in the guide's shape.
GUIDE_FLOOR = 1e-6


class Guide:
    """The quantized shape (``values`` increasing with ``counts`` users each, local delta
    ``delta0``) and the bound's options; :meth:`delta` is the guide's delta(eps) at scale s,
    ``rho`` its quantization step (module docstring)."""

    def __init__(self, values: np.ndarray, counts: np.ndarray, delta0: float, rho: float,
                 opts: Mapping[str, Any], eps: float) -> None:
        self.values, self.delta0, self.rho = values, delta0, rho
        self.clone = opts.get("clone", "stronger")
        self.tol = opts.get("tol")
        self.rel_step = opts.get("rel_step")
        # pool: everyone but one user of the smallest budget (largest mass), masses increasing
        pool_counts = counts.copy()
        pool_counts[0] -= 1
        self.pool_counts = pool_counts[::-1].copy()
        self.eps = eps

    def delta(self, s: float) -> float:
        tiny = BudgetProfile(eps=self.values * s, delta=self.delta0)  # one user per value
        r = clone_probabilities(tiny, clone=self.clone)[::-1]
        extra = {k: v for k, v in (("tol", self.tol), ("rel_step", self.rel_step))
                 if v is not None}
        return clone_reduction_delta(pool=r, counts=self.pool_counts,
                                     eps_v=s * float(self.values[-1]), delta_v=self.delta0,
                                     eps=self.eps, **extra)


def quantized_up(eps: np.ndarray, rho: float,
                  weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values and counts of every eps_i rounded up onto ``top (1+rho)^{-k}``, k >= 0
    (``top`` = max eps_i; budgets below ``top * GUIDE_FLOOR`` go to the grid point above it);
    ``weights``: users per entry of ``eps`` (a budget histogram)."""
    top = float(eps.max())
    h = math.log1p(rho)
    k_max = math.floor(math.log(1.0 / GUIDE_FLOOR) / h)
    ratio = np.maximum(eps, top * GUIDE_FLOOR)
    k = np.minimum(np.floor(np.log(top / ratio) / h), k_max)
    q = top * np.exp(-k * h)
    low = q < eps  # floating point: round up, never down
    while low.any():
        k = np.where(low, k - 1, k)
        q = top * np.exp(-k * h)
        low = q < eps
    counts = np.bincount(k.astype(np.int64), weights=weights)
    ks = np.flatnonzero(counts)
    values = top * np.exp(-ks * h)
    values[ks == 0] = top
    return values[::-1].copy(), counts[ks][::-1].astype(np.int64)


def clones_guide(shape: BudgetProfile, opts: Mapping[str, Any], eps: float, delta: float,
                  rtol: float) -> Guide | None:
    if opts.get("mechanism") is not None:  # mechanism-aware masses: no guide
        return None
    if shape.delta_min != shape.delta_max:
        return None
    t = shape.tiers
    e = t.eps
    top, bottom = float(e.max()), max(float(e.min()), float(e.max()) * GUIDE_FLOOR)
    spread = math.log(top / bottom)
    rho = max(0.5 * rtol, spread / (GUIDE_MAX_GROUPS - 1))
    if rho > 0.75 * rtol:  # too spread out: the guide's bracket could not be confirmed
        return None
    values, counts = quantized_up(e, rho, t.counts)
    if values.size < 2:
        return None
    return Guide(values, counts, shape.delta_max, rho, opts, eps)
