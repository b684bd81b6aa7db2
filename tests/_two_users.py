"""The exact shuffled divergence of two users on a grid, for the shared-noise families' tests
(independent of the bounds' code)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def shuffled_pair_deltas(f0: np.ndarray, f1: np.ndarray, g: np.ndarray,
                         eps_list: Sequence[float], h: float, block: int = 300) -> np.ndarray:
    """Hockey-stick divergences ``H_{e^eps}`` of the shuffled pair {victim, other} at each eps:
    the victim's density is ``f0`` or ``f1``, the other's ``g``, all on the midpoints of one
    grid of step ``h``.  The unordered pair {a, c} has density ``f_b(a) g(c) + f_b(c) g(a)``;
    midpoint rule over a < c, the diagonal's cells counted half (they straddle a = c), which
    makes the rule second order in h."""
    es = np.exp(np.asarray(eps_list, dtype=float))
    total = np.zeros(es.size)
    cols = np.arange(g.size)[None, :]
    for i in range(0, g.size, block):
        a = slice(i, i + block)
        h0 = f0[a, None] * g[None, :] + g[a, None] * f0[None, :]
        h1 = f1[a, None] * g[None, :] + g[a, None] * f1[None, :]
        rows = np.arange(i, min(i + block, g.size))[:, None]
        weight = (rows < cols) + 0.5 * (rows == cols)
        for k, e in enumerate(es):
            total[k] += float(np.sum(np.maximum(h0 - e * h1, 0.0) * weight))
    return total * h * h
