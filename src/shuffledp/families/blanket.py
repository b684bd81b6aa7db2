"""The blanket decomposition as the families describe it (the ``blanket`` bound, docs/theory.md 15).

A family with a blanket answers, for a group of victims and the users' classes,
:meth:`~shuffledp.families.base.Family.blanket_cases`: a list of :class:`BlanketCase`, each a
law of the privacy amplification variable ``l = (P0 - e^eps P1) / omega`` under the blanket
omega (as :class:`Cells`) and a lower bound on every user class's blanket mass gamma_j.  The
group's bound is the largest over its cases; the cases together cover every victim of the
group and every pair of its inputs (each family's docstring says why).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["Cells", "BlanketCase", "TwoRegionCase", "atoms", "difference_error", "mean_error",
           "TINY"]

_U = float(np.finfo(float).eps) / 2.0
#: Computed masses below this are taken as standing for true masses of at most it (their
#: relative error is not bounded: underflow); every mass at or above it has a relative error
#: of at most the cells' ``rel_error``.
TINY = 1e-280


@dataclass(frozen=True)
class Cells:
    """Cells of the privacy amplification variable (module docstring).

    Floating point (docs/theory.md 15.3 (N7)): ``rel_error`` bounds the relative error of
    every mass of at least ``TINY`` (a smaller computed mass stands for a true one of at most
    ``TINY``); ``abs_error`` bounds the sum over the cells of what is left of the masses'
    errors (an absolute part, such as a quadrature's); ``mean_error`` bounds ``sum_c m_c
    |mu_c - mean_c|``, the true means below the computed ones (mean upper bounds computed from
    differences, such as ``(P0 - e^eps P1)(cell) / omega(cell)``), and the values' rounding
    beyond a relative 8 u of ``max(|lo|, |hi|)``: a Wasserstein-1 distance."""

    mass: NDArray[np.float64]
    lo: NDArray[np.float64]
    hi: NDArray[np.float64]
    mean: NDArray[np.float64]
    rel_error: float = 0.0
    abs_error: float = 0.0
    mean_error: float = 0.0

    def __post_init__(self) -> None:
        arrs = [np.atleast_1d(np.asarray(getattr(self, k), dtype=np.float64))
                for k in ("mass", "lo", "hi", "mean")]
        if len({a.shape for a in arrs}) != 1:
            raise ValueError("mass, lo, hi and mean must have the same shape")
        m, lo, hi, mu = arrs
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(m >= 0)):
            raise ValueError("cells need finite bounds and non-negative masses")
        if np.any(lo > hi):
            raise ValueError("cells need lo <= hi")
        for k in ("rel_error", "abs_error", "mean_error"):
            v = getattr(self, k)
            if not (math.isfinite(v) and v >= 0.0):
                raise ValueError(f"{k} must be finite and >= 0, got {v!r}")
        mu = np.clip(mu, lo, hi)
        for k, a in zip(("mass", "lo", "hi", "mean"), (m, lo, hi, mu), strict=True):
            object.__setattr__(self, k, a)

    @property
    def total(self) -> float:
        return float(self.mass.sum())

    def moments(self) -> tuple[float, float]:
        """(mean, an upper bound on the variance) of the cells' law."""
        m = self.mass / max(self.total, 1e-300)
        mean = float(np.dot(m, self.mean))
        second = float(np.dot(m, np.maximum(self.mean**2, np.maximum(self.lo**2, self.hi**2))))
        return mean, max(second - mean * mean, 0.0)



@dataclass(frozen=True)
class BlanketCase:
    """One law of the privacy amplification variable (``cells``) with the users' blanket
    masses (``masses``, one per user class, already times 1 - delta_j) and a ``label``.

    ``choice`` numbers alternative blankets: the bound is the largest over the cases of one
    choice (they cover every victim and pair together) and the smallest over the choices
    (each alone is a valid bound)."""

    #: The cells, or a function building them (called once, on first use: ``law_cells``;
    #: a family builds its cases' cells lazily where most are never looked at: time only).
    cells: Cells | Callable[[], Cells]
    masses: NDArray[np.float64]
    label: str = ""
    choice: int = 0
    #: Finer cells of the same law (``refine(pieces)``), for the exact evaluation; ``cells``
    #: are then a coarse version (every version dominates the law: any is valid).
    refine: Callable[[int], Cells] | None = None
    #: ``(base, factor)`` when ``masses`` was computed as ``base * factor`` (elementwise, in
    #: floating point): the bound then merges ``base`` once for all the cases that share it.
    scaled: tuple[NDArray[np.float64], float] | None = None
    #: Added to the case's value: the victim's mass cut off its laws (H_E is at most the cut
    #: pair's divergence plus that mass), or a bound on the case's divergence by other means
    #: when its cells give A = 0.
    charge: float = 0.0

    @functools.cached_property
    def law_cells(self) -> Cells:
        """The cells (built here on first use when ``cells`` is a function)."""
        return self.cells() if callable(self.cells) else self.cells


@dataclass(frozen=True)
class TwoRegionCase:
    """One law of a *two-region* blanket (docs/theory.md 15.4, "Two coverage regions"): the
    blanket omega = (1 - q) nu_1 + q nu_2 split into its centre nu_1 and its tails nu_2; the
    centre variable ``l_1 = (P0 - e^eps P1) / nu_1`` under nu_1 (``centre``, dominating in the
    increasing convex order), the tail variable ``l_2`` under nu_2 as two atoms of weight 1/2
    (``tail_hi >= tail_lo``, dominating), and per user class a mass against omega (``low``) or
    against nu_1 (``high``), each class in one of the two (the other 0), already times
    ``1 - delta_j``.  ``q`` is the probability of the tails under omega.  ``choice`` as for
    :class:`BlanketCase`."""

    centre: Cells
    tail_hi: float
    tail_lo: float
    q: float
    low: NDArray[np.float64]
    high: NDArray[np.float64]
    label: str = ""
    choice: int = 0
    #: Added to the value: the victim's mass outside the blanket's support when the blanket
    #: is truncated (H_E is at most the truncated pair's divergence plus that mass).
    charge: float = 0.0
    #: A deep truncation: evaluated only when a choice of a nearer one came within
    #: ``DEEP_RATIO`` (bound.py) of its own charge (time only: any subset of the choices is
    #: valid).
    deep: bool = False


def atoms(values, mass, rel_error: float = 0.0, value_error: float = 0.0) -> Cells:
    """Cells of a discrete law: each value an atom with its mass; ``value_error`` bounds how
    far below its true value any computed value may lie (charged as ``mean_error``, times
    the total mass)."""
    v = np.asarray(values, dtype=np.float64)
    m = np.asarray(mass, dtype=np.float64)
    return Cells(m, v, v, v, rel_error,
                 mean_error=float(value_error * float(np.sum(m)) * (1.0 + 1e-9)))


def difference_error(rel: float, eps: float, terms: float = 1.0) -> float:
    """A bound on ``sum_c m_c |mu_c - mean_c|`` for cells whose means are computed as
    ``(P0(c) - e^eps P1(c)) / omega(c)`` from masses of relative error at most ``rel``
    (each P summing to at most ``terms`` over the cells): ``(2 rel + 4 u)(1 + 2 rel)`` of
    ``terms (1 + e^eps)`` (docs/theory.md 15.3 (N7)); also a bound for atom values computed as
    such a difference of terms of relative error ``rel``, per unit of mass."""
    return float((2.0 * rel + 4.0 * _U) * (1.0 + 2.0 * rel) * terms
                 * (1.0 + math.exp(min(eps, 700.0))) * (1.0 + 1e-9))


def mean_error(rel, p0, p1, eps: float) -> float:
    """:func:`difference_error` cell by cell: ``sum_c (2 rel_c + 4 u)(1 + 2 rel_c)^2 (P0(c) +
    e^eps P1(c))`` for means computed as ``(P0(c) - e^eps P1(c)) / omega(c)`` from computed
    masses ``p0``, ``p1`` (each within a relative ``rel_c`` of the true one, as omega's)."""
    r = np.asarray(rel, dtype=np.float64)
    w = np.asarray(p0, dtype=np.float64) + math.exp(min(eps, 700.0)) * np.asarray(
        p1, dtype=np.float64)
    return float(np.sum((2.0 * r + 4.0 * _U) * (1.0 + 2.0 * r) ** 2 * w) * (1.0 + 1e-9))
