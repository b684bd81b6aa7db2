"""From cells of the blanket to a lattice law that dominates the privacy amplification variable.

A family describes the law of ``X = l(W)``, ``W ~ omega``, as *cells*: disjoint parts of the
output space with their omega-mass ``m_c``, bounds ``lo_c <= l <= hi_c`` on the part, and an
upper bound ``mu_c`` of the conditional mean of l on it (``lo_c <= mu_c <= hi_c``; exact when
the family can integrate l, as it can for atoms and the exponential pieces of the Laplace
mechanism).  :func:`lattice_law` moves each cell's mass onto the two lattice points
``A = floor(lo_c / D) D`` and ``B = ceil(hi_c / D) D`` with mean ``mu_c``: any law on
``[lo_c, hi_c]`` with mean at most ``mu_c`` is below that two-point law in the increasing
convex order, so the lattice law dominates Law(X) in that order, which is all the blanket
bound needs (docs/theory.md 15.2).  A cell within one lattice interval costs only the
variance of the two-point split, at most ``D^2 / 4`` of its mass.

Floating point: the masses carry a relative error ``rel_error`` (the family's) and the
rounding of the split and of its sums (``(k + 3) u`` of the mass of a lattice point where k
cells' terms land), charged as an L1 distance (``LatticeLaw.tv_error``, docs/theory.md 15.3
(N7)); the split points a relative ``8 u`` of the values, charged as a Wasserstein-1 distance.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp.bounds.blanket.amplification import LatticeLaw
from shuffledp.families.blanket import Cells

__all__ = ["lattice_law"]

_U = float(np.finfo(float).eps) / 2.0
#: Lattice indices stay below this (exact in float64 and int64).
_MAX_INDEX = 2.0**52


def lattice_law(cells: Cells, step: float) -> LatticeLaw:
    """The lattice law on ``step * k`` dominating the cells' law in the increasing convex
    order (module docstring)."""
    if not (math.isfinite(step) and step > 0):
        raise ValueError(f"step must be finite and > 0, got {step!r}")
    keep = cells.mass > 0
    m, lo, hi, mu = cells.mass[keep], cells.lo[keep], cells.hi[keep], cells.mean[keep]
    with np.errstate(over="ignore"):  # an overflow is an infinite index: refused below
        a = np.floor(lo / step)
        b = np.ceil(hi / step)
    if not (np.all(np.abs(a) < _MAX_INDEX) and np.all(np.abs(b) < _MAX_INDEX)):
        raise ValueError(f"cells span more than {_MAX_INDEX:.0e} lattice steps of {step!r}: "
                         "raise the step or clip the cells")
    same = b == a
    width = np.where(same, 1.0, b - a)
    frac = np.where(same, 0.0, (mu / step - a) / width)  # weight of the upper point
    frac = np.clip(frac, 0.0, 1.0)
    ka, kb = a.astype(np.int64), b.astype(np.int64)
    k0 = int(ka.min())
    size = int(kb.max()) - k0 + 1
    pmf = np.zeros(size)
    np.add.at(pmf, ka - k0, m * (1.0 - frac))
    np.add.at(pmf, kb - k0, m * frac)
    total = math.fsum(m)  # (correctly rounded)
    # masses: relative errors (the family's; 1 - frac, the products and the quotient, 4 u;
    # the sequential sums of np.add.at, (k - 1) u for k terms on one point); split points: a
    # relative 8 u of the values, as moves of at most (b - a) step
    k = np.bincount(ka - k0, minlength=size) + np.bincount(kb - k0, minlength=size)
    sums = _U * float(np.dot(k + 3.0, pmf))  # (k - 1) u per point, and 4 u
    tv = (cells.rel_error * total + sums + abs(total - 1.0)) * (1.0 + 1e-12)
    w1 = float(np.dot(m, 8.0 * _U * np.maximum(np.abs(lo), np.abs(hi)) + _U * width * step))
    return LatticeLaw(offset=k0, pmf=pmf / total if total > 0 else pmf, step=float(step),
                      tv_error=float(tv), w1_error=w1)
