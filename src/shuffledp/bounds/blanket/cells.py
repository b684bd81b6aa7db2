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

Floating point (docs/theory.md 15.3 (N7)): the masses carry a relative error ``rel_error``
(the family's; masses below ``TINY`` are raised to it, an upper bound of their true values),
an absolute remainder ``abs_error``, and the rounding of the split, of its sums (``(k + 3) u``
of the mass of a lattice point where k cells' terms land) and of the normalization: so the law
p' the pmf stands for lies below ``(1 + rho) pmf + e`` entrywise (``LatticeLaw.rel_error``,
``tv_error``), which is all an upper bound needs.  The split points' rounding (a relative
``8 u`` of the values) and the families' mean errors are moves, charged as a Wasserstein-1
distance.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp.bounds.blanket.amplification import LatticeLaw
from shuffledp.families.blanket import TINY, Cells

__all__ = ["lattice_law"]

_U = float(np.finfo(float).eps) / 2.0
#: Lattice indices stay below this (exact in float64 and int64).
_MAX_INDEX = 2.0**52


def lattice_law(cells: Cells, step: float) -> LatticeLaw:
    """The lattice law on ``step * k`` dominating the cells' law in the increasing convex
    order (module docstring), with its errors for upper bounds only: the true law p' lies
    below ``(1 + rel_error) pmf + e`` entrywise, e of mass at most ``tv_error``."""
    if not (math.isfinite(step) and step > 0):
        raise ValueError(f"step must be finite and > 0, got {step!r}")
    # a computed mass below TINY stands for a true mass of at most TINY: raised to it
    m = np.maximum(cells.mass, TINY)
    lo, hi, mu = cells.lo, cells.hi, cells.mean
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
    # masses: relative errors, the family's (rel) and, per lattice point, 1 - frac, the
    # product, the quotient (3 u) and the sequential sums of np.add.at ((k - 1) u for k terms
    # on one point); the normalization: the true masses sum to 1, the computed ones to within
    # rel + abs_error + (raised masses) of it, and fsum rounds once
    k = np.bincount(ka - k0, minlength=size) + np.bincount(kb - k0, minlength=size)
    k_max = float(k.max())
    raised = TINY * float(np.count_nonzero(cells.mass < TINY))
    norm = cells.rel_error + cells.abs_error + raised + _U
    rho = ((1.0 + cells.rel_error) * (1.0 + 2.0 * _U) ** (k_max + 2.0) / (1.0 - norm)
           - 1.0) * (1.0 + 1e-9)
    tv = cells.abs_error * (1.0 + rho) / (1.0 - norm) * (1.0 + 1e-9)
    # split points: a relative 8 u of the values, and 4 u of the fractions, moves of at most
    # (b - a) step; the family's mean errors
    w1 = float(np.dot(m, 8.0 * _U * np.maximum(np.abs(lo), np.abs(hi))
                      + 4.0 * _U * width * step)) + cells.mean_error
    return LatticeLaw(offset=k0, pmf=pmf / total if total > 0 else pmf, step=float(step),
                      tv_error=float(tv), w1_error=float(w1) * (1.0 + 1e-9),
                      rel_error=float(rho))
