"""The vocabulary of ``window_lower``'s grid, shared by the families that provide window masses.

``window_lower`` (docs/theory.md 13) post-processes the shuffled multiset: two disjoint
*windows* ``W_L``, ``W_R`` around the victim's two outputs, every report scored ``-lam_L``
in ``W_L``, ``+lam_R`` in ``W_R`` and 0 elsewhere.  A :class:`WindowConfig` is one such
post-processing with the victim's inputs and the others' input; each family lists its grid
(:meth:`~shuffledp.families.base.Family.window_configs`) and computes every user's three
cell masses with a bound on their floating-point error
(:meth:`~shuffledp.families.base.Family.cell_masses`).

Error bounds (docs/theory.md 13.3): closed forms of exp / expm1 / erf / log_ndtr of
arguments z carry a relative error of at most about ``(3 |z| + 4) u`` (the three roundings of
z = (lo - x) / (2 / eps), amplified by the derivative), sums of non-negative terms add u per
term, and no mass is formed by subtracting from 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["Window", "WindowConfig", "U", "WEIGHTS", "WEIGHTS_BINARY", "finite",
           "symmetric_cell_masses", "symmetric_windows", "grid"]

#: Unit round-off of float64.
U = float(np.finfo(float).eps) / 2.0
#: Score weights (lam_L, lam_R) tried: binary outputs need only equal weights.
WEIGHTS_BINARY = ((1, 1),)
WEIGHTS = ((1, 1), (1, 2), (2, 1))


@dataclass(frozen=True)
class Window:
    """Two disjoint output sets; for [-1, 1] randomizers intervals ``W_R = [lo, hi]`` and
    its mirror ``W_L = [-hi, -lo]`` (``hi`` may be inf); for discrete outputs the values
    ``W_L = {0}`` (or -1) and ``W_R = {1}``."""

    label: str
    lo: float = 0.0
    hi: float = 0.0


@dataclass(frozen=True)
class WindowConfig:
    """One post-processing: victim inputs (x0, x1), others' input, window and weights."""

    x0: float
    x1: float
    x_star: float
    window: Window
    lam: tuple[int, int]

    @property
    def label(self) -> str:
        return (f"x*={self.x_star:g} {self.window.label} lam={self.lam[0]},{self.lam[1]}")


def grid(x0: float, x1: float, stars: tuple[float, ...], windows: list[Window],
         weights: tuple[tuple[int, int], ...]) -> list[WindowConfig]:
    """Every configuration of the others' inputs ``stars``, ``windows`` and ``weights``."""
    return [WindowConfig(x0, x1, s, w, lam) for s in stars for w in windows for lam in weights]


def finite(z: NDArray) -> NDArray:
    """z where finite, else 0 (exp(-inf) and expm1(-inf) are exact)."""
    return np.where(np.isfinite(z), z, 0.0)


MassFn = Callable[[float, float, float], tuple[NDArray, NDArray]]


def symmetric_cell_masses(mass: MassFn, x: float, window: Window) -> tuple[NDArray, ...]:
    """``(a, o, b, ea, eo, eb)`` of a family on [-1, 1] with symmetric densities, from
    ``mass(lo, hi, x)`` = (Pr[report in [lo, hi] | input x], its error bound): ``W_L`` under
    x has the mass of ``W_R`` under -x, and the rest is summed from its pieces."""
    lo, hi = window.lo, window.hi
    # W_L = [-hi, -lo] under x has the mass of W_R = [lo, hi] under -x (symmetric densities)
    a, ea = mass(lo, hi, -x)
    b, eb = mass(lo, hi, x)
    # the rest: (-inf, -hi), (-lo, lo), (hi, inf), each a non-negative mass
    o = np.zeros_like(a)
    eo = np.zeros_like(a)
    pieces = []
    if lo > 0:
        pieces.append((-lo, lo))
    if math.isfinite(hi):
        pieces += [(-math.inf, -hi), (hi, math.inf)]
    for plo, phi in pieces:
        m, e = mass(plo, phi, x)
        o, eo = o + m, eo + e + U * (o + m)
    # a true mass is in [0, 1]: clipping only moves a computed one towards it
    return np.minimum(a, 1.0), np.minimum(o, 1.0), np.minimum(b, 1.0), ea, eo, eb


def symmetric_windows(scale: float, *, centre: float = 1.0) -> list[Window]:
    """The windows of a location family whose victim's two report laws are centred at
    ``-+centre`` (1 for the randomizers on [-1, 1]) with noise scale ``scale``:
    ``|y -+ centre| <= f scale`` for a few f (disjoint while the half-width is at most
    ``centre``), and the half lines ``y >= centre / 2``, ``y >= 0``."""
    out: list[Window] = []
    seen: set[float] = set()
    for f in (0.5, 1.0, 1.25, 1.5, 2.5):
        w = min(f * scale, centre)  # |y -+ c| <= w, disjoint while w <= c
        if w not in seen:
            seen.add(w)
            label = f"|y-1|<={w:.3g}" if centre == 1.0 else f"|y-{centre:.3g}|<={w:.3g}"
            out.append(Window(label, centre - w, centre + w))
    half = "y>=0.5" if centre == 1.0 else f"y>={centre / 2.0:.3g}"
    return out + [Window(half, centre / 2.0, math.inf), Window("y>=0", 0.0, math.inf)]
