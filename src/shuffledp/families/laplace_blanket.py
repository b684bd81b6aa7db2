"""Shaped blankets for the Laplace mechanism (docs/theory.md 15.4, Lemmas 11, 12, 13 and 14).

A *shape* is a symmetric log-piecewise-linear density on the output line::

    omega(y) = exp(-Lambda(|y|)) / Z,

``Lambda(0) = 0`` and ``Lambda`` linear between the knots ``0 < k_1 < ... < k_m`` with slopes
``sigma_1, ..., sigma_{m+1} >= 0`` (the last > 0).  The Laplace blanket ``Lap(0, b_r)`` of
docs/theory.md 15.4 is the shape with no knot and slope ``1 / b_r``.  Shapes are given in the
*canonical units* of a victim group: the group's victims scaled to its largest budget
``eps_hi`` (scale ``b_hi = 2 / eps_hi``), every slope at most ``1 / b_hi``.  Under that
condition (Lemma 13):

* the law of ``l = (P_{x0} - e^eps P_{x1}) / omega`` of a Laplace victim of scale ``b_hi``
  grows in the convex order as either input moves away from 0 (Lemma 11 holds for shapes),
  so the pairs (1, -1) and the same-sign grid of Lemma 12 cover every pair; on each piece
  between the knots, 0 and the inputs, l is monotone, which gives the cells
  (:func:`shaped_pair_cells`);
* a user j with budget eps_j has mass against the victim u's blanket (the shape widened by
  ``eps_hi / eps_u``) ``(Z eps_j / (4 s)) e^{-eps_j/2} min_i exp(L_i - k_i eps_j / (2 s))``,
  ``s = eps_u / eps_hi``, ``L_i = Lambda(k_i)``, when ``eps_j <= 2 s sigma_{m+1}`` (else 0):
  :func:`shaped_masses` takes its minimum over the group's victims and the class's budgets
  at the corners (it is concave in ``1/s`` and in ``eps_j``).

Steeper shapes (Lemma 14): for ``eps <= 1 / b_hi`` (half the group's largest budget) the pairs
(1, -1) and the same-sign grid cover every pair whatever the shape, so a shape may have a slope
above ``1 / b_hi``.  A *narrow* shape (last slope above it: lighter tails than the victim's,
which users with budgets above the victim's cover) makes l unbounded in its tails: they are cut
(:func:`reach`) and the cut charged (:func:`narrow_charge`); on a steep piece l is bounded
through each psi's monotonicity instead of its own.  The masses above hold for any shape.

Code names -> symbols: ``knots`` = k_i, ``slopes`` = sigma_i, ``lam`` = Lambda, ``log_z`` =
log Z, ``b_v`` = the victim's scale in canonical units (b_hi).
"""

from __future__ import annotations

import functools
import math
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from shuffledp.caching import lru_get, lru_put, register_mapping
from shuffledp.families.blanket import BlanketCase, Cells, mean_error

__all__ = ["BlanketShape", "cell_edges", "shaped_pair_cells", "shaped_masses", "two_slope_shapes",
           "pair_cases", "narrow", "narrow_charge", "reach", "BLANKET_CELLS",
           "BLANKET_CELLS_COARSE", "SAME_SIGN_STEPS", "NARROW_REACH", "NARROW_SPAN"]

#: Cells per monotone piece of l in the blanket's cells (docs/theory.md 15.4); the
#: screening uses the coarse ones.
BLANKET_CELLS = 1 << 12
BLANKET_CELLS_COARSE = 1 << 7
#: Steps of the grid of same-sign pairs (translated, docs/theory.md 15.4, Lemma 12).
SAME_SIGN_STEPS = 4
#: Narrow blankets (a slope above ``1 / b_v``: lighter tails than the victim's, which users
#: with larger budgets than the victim's cover; docs/theory.md 15.4, Lemma 14): l is unbounded
#: in their tails, which are cut at ``NARROW_REACH`` victim scales beyond the inputs (the
#: victim's mass beyond, ``e^{-NARROW_REACH} / 2``, charged), or nearer, where psi has grown
#: by the factor ``NARROW_SPAN`` over the reach (the lattice's span; the charge then larger).
NARROW_REACH = 34.5
NARROW_SPAN = 256.0

_U = float(np.finfo(float).eps) / 2.0


def _seg(sigma: float, length: NDArray | float) -> NDArray:
    """``int_0^length e^{-sigma t} dt`` (``length`` may be inf when sigma > 0)."""
    length = np.asarray(length, dtype=np.float64)
    if sigma == 0.0:
        return length
    with np.errstate(over="ignore"):
        return -np.expm1(-sigma * length) / sigma


@dataclass(frozen=True)
class BlanketShape:
    """A symmetric log-piecewise-linear blanket (module docstring).

    >>> s = BlanketShape.laplace(2.0)  # Lap(0, 2)
    >>> round(math.exp(s.log_z), 12), s.lipschitz
    (4.0, 0.5)
    >>> t = BlanketShape((1.0,), (0.25, 0.5))
    >>> float(t.lam(np.array([0.5, 1.0, 3.0]))[2])  # 0.25 + 0.5 * 2
    1.25
    """

    knots: tuple[float, ...]
    slopes: tuple[float, ...]
    #: Lambda at 0 and at the knots.
    levels: tuple[float, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        k = tuple(float(x) for x in self.knots)
        s = tuple(float(x) for x in self.slopes)
        if len(s) != len(k) + 1:
            raise ValueError(f"a shape needs one slope more than knots, got {len(k)} knots and "
                             f"{len(s)} slopes")
        if not all(math.isfinite(x) and x > 0 for x in k) or any(
                b <= a for a, b in zip(k[:-1], k[1:], strict=True)):
            raise ValueError(f"knots must be finite, positive and increasing, got {k!r}")
        if not all(math.isfinite(x) and x >= 0 for x in s) or not s[-1] > 0:
            raise ValueError(f"slopes must be finite and >= 0, the last > 0, got {s!r}")
        levels = [0.0]
        prev = 0.0
        for kk, ss in zip(k, s[:-1], strict=True):
            levels.append(levels[-1] + ss * (kk - prev))
            prev = kk
        object.__setattr__(self, "knots", k)
        object.__setattr__(self, "slopes", s)
        object.__setattr__(self, "levels", tuple(levels))

    @classmethod
    def laplace(cls, b_r: float) -> BlanketShape:
        """The blanket Lap(0, b_r)."""
        return cls((), (1.0 / b_r,))

    @property
    def lipschitz(self) -> float:
        """The largest slope (Lambda's Lipschitz constant)."""
        return max(self.slopes)

    @property
    def tail(self) -> float:
        """The last slope (the tails decay as ``e^{-tail |y|}``)."""
        return self.slopes[-1]

    @property
    def starts(self) -> tuple[float, ...]:
        """0 and the knots: where each slope starts."""
        return (0.0, *self.knots)

    @functools.cached_property
    def log_z(self) -> float:
        """log of ``Z = 2 int_0^inf e^{-Lambda(u)} du``."""
        ends = (*self.knots, math.inf)
        # Z / 2 = sum over the pieces of e^{-Lambda(start)} int_0^{length} e^{-slope t} dt
        parts = [math.log(float(_seg(s, b - a))) - lev
                 for a, b, s, lev in zip(self.starts, ends, self.slopes, self.levels, strict=True)]
        top = max(parts)
        return math.log(2.0) + top + math.log(sum(math.exp(p - top) for p in parts))

    def lam(self, u: NDArray) -> NDArray:
        """Lambda(u) for u >= 0 (arrays; inf allowed)."""
        u = np.asarray(u, dtype=np.float64)
        out = np.zeros_like(u)
        ends = (*self.knots, math.inf)
        for a, b, s in zip(self.starts, ends, self.slopes, strict=True):
            if s > 0.0:
                with np.errstate(invalid="ignore"):
                    out = out + s * (np.clip(u, a, b) - a)
        return out



def two_slope_shapes(b_hi: float, designs: tuple[tuple[float, float], ...]
                     ) -> list[BlanketShape]:
    """Shapes flat near 0 (slope ``r / b_hi``) up to the knee ``k b_hi``, then the victim's
    own slope ``1 / b_hi``, for the designs ``(k, r)``: a blanket that users with budgets
    below the victim's cover better near 0 while every user up to the group's budget still
    covers its tails."""
    return [BlanketShape((k * b_hi,), (r / b_hi, 1.0 / b_hi)) for k, r in designs]


def _side_mass(lo: NDArray, hi: NDArray, m: float, s: float) -> NDArray:
    """Pr[Lap(m, s) in [lo, hi]] for cells on one side of m (lo may be -inf, hi +inf)."""
    width = hi - lo
    with np.errstate(invalid="ignore", over="ignore"):
        left = 0.5 * np.exp((hi - m) / s) * -np.expm1(-width / s)
        right = 0.5 * np.exp(-(lo - m) / s) * -np.expm1(-width / s)
    return np.where(hi <= m, left, right)


def _omega_mass(shape: BlanketShape, lo: NDArray, hi: NDArray) -> NDArray:
    """omega([lo, hi]) for cells on one side of 0 inside one linear piece of Lambda
    (``hi`` may be inf, ``lo`` -inf)."""
    ua = np.where(lo >= 0.0, lo, -hi)  # the |y| range [ua, ub]
    ub = np.where(lo >= 0.0, hi, -lo)
    out = np.empty(ua.shape)
    idx = np.searchsorted(np.asarray(shape.knots), ua, side="right")
    lz = shape.log_z
    lev = shape.lam(ua)
    for i, s in enumerate(shape.slopes):
        sel = idx == i
        if np.any(sel):
            out[sel] = np.exp(-lev[sel] - lz) * _seg(s, ub[sel] - ua[sel])
    return out


def narrow(b_v: float, shape: BlanketShape) -> bool:
    """Whether the shape's tails are lighter than the victim's (last slope above ``1 /
    b_v``): l is then unbounded in them (Lemma 14)."""
    return shape.tail * b_v > 1.0 + 1e-12


def reach(b_v: float, shape: BlanketShape) -> float:
    """How far beyond the inputs the cells reach (the tails beyond are one cell each): 60
    scales, or for a narrow shape ``NARROW_REACH`` victim scales or less (``NARROW_SPAN``),
    plus the last knot."""
    last = shape.knots[-1] if shape.knots else 0.0
    if not narrow(b_v, shape):
        return 60.0 * max(b_v, 1.0 / shape.tail) + last
    growth = shape.tail * b_v - 1.0  # psi grows as e^{growth u / b_v} in the tails
    return b_v * min(NARROW_REACH, math.log(NARROW_SPAN) / growth) + last


def narrow_charge(b_v: float, shape: BlanketShape, eps: float, x0: float, x1: float) -> float:
    """What the cut right tail of a narrow shape adds to a case (Lemma 14 (iii)): the victim's
    mass ``P_{x0}(w > x0 + reach) = e^{-reach / b_v} / 2`` when l grows without bound there
    (``e^{(x0 - x1) / b_v} > e^eps``), else 0 (rounded up)."""
    if not narrow(b_v, shape) or (x0 - x1) / b_v <= eps:
        return 0.0
    return 0.5 * math.exp(-reach(b_v, shape) / b_v) * (1.0 + 1e-9)


def cell_edges(b_v: float, shape: BlanketShape, x0: float, x1: float, pieces: int
               ) -> tuple[NDArray, NDArray]:
    """The cells of :func:`shaped_pair_cells`: every piece between 0, the inputs, the knots
    and the :func:`reach` beyond the inputs cut into ``pieces`` equal cells, and the two
    tails (``lo``, ``hi`` arrays; the tails' outer ends infinite)."""
    reach_ = reach(b_v, shape)
    cuts = {x1 - reach_, x1, 0.0, x0, x0 + reach_}
    cuts |= {k for k in shape.knots if k < x0 + reach_} | {-k for k in shape.knots
                                                           if -k > x1 - reach_}
    pts = np.array(sorted(cuts))
    a_, b_ = pts[:-1], pts[1:]
    a_, b_ = a_[b_ > a_], b_[b_ > a_]
    # every piece cut as np.linspace(a, b, pieces + 1) cuts it, all at once
    edges = np.arange(pieces + 1)[None, :] * ((b_ - a_) / pieces)[:, None] + a_[:, None]
    edges[:, -1] = b_
    lo_w = np.concatenate([[-np.inf], edges[:, :-1].ravel(), [pts[-1]]])
    hi_w = np.concatenate([[pts[0]], edges[:, 1:].ravel(), [np.inf]])
    return lo_w, hi_w


def _shaped_geometry(b_v: float, shape: BlanketShape, x0: float, x1: float,
                     pieces: int) -> tuple[NDArray, ...]:
    """The parts of :func:`shaped_pair_cells` that do not depend on eps: the cells' masses
    under omega, ``P_{x0}`` and ``P_{x1}``, ``psi_{x0}`` and ``psi_{x1}`` at the cells' ends
    (the lower ends, then the upper ones), the factor of their rounding bound, and the masses'
    relative errors (cached, read-only, for the probes of a solve; time only)."""
    key = (float(b_v), shape.knots, shape.slopes, float(x0), float(x1), int(pieces))
    got = lru_get(_GEOMETRY, key)
    if got is not None:
        return got
    lz = shape.log_z
    lo_w, hi_w = cell_edges(b_v, shape, x0, x1, pieces)
    log_2b = math.log(2.0 * b_v)
    n_s = len(shape.slopes)
    # l at w is psi0 - e psi1, with a floating-point error of at most err_f (psi0 + e psi1):
    # each psi an exponential of an argument computed with an absolute error of at most a few
    # u times its terms' sizes (Lambda: (n_s + 2) u of it, a sum of non-negative terms), the
    # difference a rounding
    w = np.concatenate([lo_w, hi_w])
    with np.errstate(invalid="ignore", over="ignore"):
        lam = shape.lam(np.abs(w))
        psi0 = np.exp(lz - log_2b - np.abs(w - x0) / b_v + lam)
        psi1 = np.exp(lz - log_2b - np.abs(w - x1) / b_v + lam)
        terms = abs(lz) + abs(log_2b) + np.maximum(np.abs(w - x0), np.abs(w - x1)) / b_v + lam
        err_f = (4.0 * terms + (n_s + 2.0) * lam + 8.0) * _U
    mass = _omega_mass(shape, lo_w, hi_w)
    p0 = _side_mass(lo_w, hi_w, x0, b_v)
    p1 = _side_mass(lo_w, hi_w, x1, b_v)
    # relative errors of the masses (docs/theory.md 15.3 (N7)): omega's, an exponential of
    # -Lambda - log Z (absolute error (n_s + 3) u Lambda + 5 u |log Z|) times a segment (4 u);
    # the victim's, of (end - x) / b_v (2 u of it) times an expm1 (4 u)
    ua = np.minimum(np.abs(lo_w), np.abs(hi_w))  # (no cell straddles 0)
    with np.errstate(invalid="ignore"):
        rel_om = ((n_s + 3.0) * shape.lam(ua) + 5.0 * abs(lz) + 12.0) * _U

        def rel_side(x: float) -> NDArray:
            dist = np.maximum(np.where(hi_w <= x, x - hi_w, lo_w - x), 0.0)
            return (2.0 * dist / b_v + 12.0) * _U

    rel_all = np.maximum(rel_om, np.maximum(rel_side(x0), rel_side(x1)))
    return lru_put(_GEOMETRY, key, (mass, p0, p1, psi0, psi1, err_f, rel_om, rel_all),
                   GEOMETRY_CACHE)


_GEOMETRY: OrderedDict[tuple, tuple] = OrderedDict()
register_mapping("laplace_blanket.geometry", _GEOMETRY)
#: Entries of the cache of :func:`_shaped_geometry` (time only).
GEOMETRY_CACHE = 512


def shaped_pair_cells(b_v: float, shape: BlanketShape, eps: float, x0: float, x1: float,
                      pieces: int) -> Cells:
    """Cells of ``l = (P_{x0} - e^eps P_{x1}) / omega`` for Laplace reports of scale ``b_v``
    (inputs ``x1 <= 0 <= x0``) and the blanket ``shape``.

    Each slope's piece, cut at 0, the inputs and the knots, is cut into ``pieces`` cells with
    exact omega-masses and exact means ``(P_{x0}(cell) - e^eps P_{x1}(cell)) / omega(cell)``.
    When every slope is at most ``1 / b_v``, l is monotone on the pieces (Lemma 13 (ii)) and
    lies between a cell's end values; the tails beyond a reach of 60 scales are one cell
    each, l between its end value and its limit (0, or the end value when the last slope is
    ``1 / b_v``).  Otherwise (Lemma 14 (iii)) psi_{x0} and psi_{x1} are each monotone on a
    cell, which bounds l by ``max psi_{x0} - e^eps min psi_{x1}`` and ``min psi_{x0} - e^eps
    max psi_{x1}``; a narrow shape's tails (:func:`reach`) become one point each: the left
    one at l's value at its end (l falls away from it), the right one there too where l
    falls, and where it grows without bound at ``max(value, 0)``, the victim's mass beyond
    charged to the case (:func:`narrow_charge`).

    >>> c = shaped_pair_cells(1.0, BlanketShape((2.0,), (0.5, 1.0)), 0.1, 1.0, -1.0, 64)
    >>> abs(c.total - 1.0) < 1e-13, abs(c.moments()[0] - (1.0 - math.exp(0.1))) < 1e-13
    (True, True)
    """
    if not (x1 <= 0.0 <= x0):
        raise ValueError(f"need x1 <= 0 <= x0, got x0 = {x0!r}, x1 = {x1!r}")
    if not (math.isfinite(b_v) and b_v > 0.0):
        raise ValueError(f"b_v must be finite and > 0, got {b_v!r}")
    e = math.exp(eps)
    mass, p0, p1, psi0, psi1, err_f, rel_om, rel_all = _shaped_geometry(b_v, shape, x0, x1,
                                                                         pieces)
    with np.errstate(invalid="ignore", over="ignore"):
        both = psi0 - e * psi1
        both_err = err_f * (psi0 + e * psi1)
    a_val, b_val = np.split(both, 2)
    a_err, b_err = np.split(both_err, 2)
    a_err[0], b_err[-1] = b_err[0], a_err[-1]  # the tails: the error at their finite end
    slack = np.maximum(a_err, b_err)
    steep = shape.lipschitz * b_v > 1.0 + 1e-12  # l need not be monotone on a piece
    thin = narrow(b_v, shape)  # l unbounded in the tails
    flat = not thin and shape.tail * b_v >= 1.0 - 1e-12  # l constant in the tails
    left, right = float(b_val[0]), float(a_val[-1])  # l at the tails' finite ends
    if flat:
        a_val[0], b_val[-1] = left, right
    elif not thin:  # l tends to 0 in both tails
        a_val[0], b_val[-1] = 0.0, 0.0
    if steep:  # each psi monotone on a cell: l between these
        pa0, pb0 = np.split(psi0, 2)
        pa1, pb1 = np.split(psi1, 2)
        with np.errstate(invalid="ignore", over="ignore"):
            lo = np.minimum(pa0, pb0) - e * np.maximum(pa1, pb1) - slack
            hi = np.maximum(pa0, pb0) - e * np.minimum(pa1, pb1) + slack
        for i in (0, -1):  # tails that are not thin: l monotone there (as below)
            lo[i] = min(a_val[i], b_val[i]) - slack[i]
            hi[i] = max(a_val[i], b_val[i]) + slack[i]
    else:
        # the end values' rounding: lo and hi widened by it (the law then still dominates)
        lo = np.minimum(a_val, b_val) - slack
        hi = np.maximum(a_val, b_val) + slack
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(mass > 0, (p0 - e * p1) / mass, lo)
    if thin:
        # the left tail: l = psi_{x1} (e^{-(x0 - x1) / b_v} - e^eps) <= 0, falling outward:
        # its largest value, at the finite end (rounded up); the right tail: l = psi_{x1}
        # (e^{(x0 - x1) / b_v} - e^eps), falling outward (the same) or growing without bound
        # from a positive value (cut at it, rounded down and at least 0: narrow_charge)
        lo[0] = hi[0] = mean[0] = left + slack[0]
        grows = (x0 - x1) / b_v > eps
        lo[-1] = hi[-1] = mean[-1] = (max(right - slack[-1], 0.0) if grows
                                      else right + slack[-1])
    keep = np.isfinite(lo) & np.isfinite(hi)
    if np.any(~keep & (mass > 0)) or not np.all(np.isfinite(rel_all)):
        raise ValueError("shaped_pair_cells: a cell of positive mass has no finite bounds")
    # cells whose mass underflowed are kept (their true mass is at most TINY, charged)
    return Cells(mass[keep], lo[keep], hi[keep], mean[keep],
                 float(rel_om[keep].max()) * (1.0 + 1e-9),
                 mean_error=mean_error(rel_all, p0, p1, eps))


def shaped_masses(shape: BlanketShape, eps_hi: float, s_lo: float, eps_a: NDArray,
                  eps_b: NDArray) -> NDArray:
    """The smallest blanket mass, over the victims ``s = eps_u / eps_hi in [s_lo, 1]`` and the
    budgets ``[eps_a, eps_b]`` of each user class, of a Laplace user against the victim's
    blanket (the shape, in canonical units, widened by ``1 / s``; Lemma 13 (iii)); 0 for a
    class with a budget above ``2 s_lo tail``.  Rounded down by a few ulps.

    >>> import numpy as np
    >>> m = shaped_masses(BlanketShape.laplace(1.0), 2.0, 1.0, np.array([0.5, 3.0]),
    ...                   np.array([0.5, 3.0]))
    >>> m.round(6).tolist()  # (eps_j / eps_r) e^{-eps_j/2} for eps_j <= eps_r, else 0
    [0.1947, 0.0]
    """
    a = np.asarray(eps_a, dtype=np.float64)
    b = np.asarray(eps_b, dtype=np.float64)
    if not (0.0 < s_lo <= 1.0):
        raise ValueError(f"s_lo must be in (0, 1], got {s_lo!r}")
    starts = np.asarray(shape.starts)
    levels = np.asarray(shape.levels)
    lz = shape.log_z
    best = np.full(a.shape, np.inf)
    for s in {s_lo, 1.0}:
        for e in (a, b):
            with np.errstate(divide="ignore"):
                base = lz + np.log(e / 4.0) - e / 2.0 - math.log(s)
            inner = np.min(levels[None, :] - starts[None, :] * e[:, None] / (2.0 * s), axis=1)
            best = np.minimum(best, base + inner)
    ok = (b <= 2.0 * s_lo * shape.tail) & (a > 0.0)
    out = np.where(ok, np.exp(np.minimum(best, 0.0)), 0.0)
    return out * (1.0 - 64.0 * _U)


def _case(b_v: float, shape: BlanketShape, eps: float, x0: float, x1: float, masses: NDArray,
          factor: float, label: str, choice: int) -> BlanketCase:
    """A blanket case with coarse cells, refined on demand; its masses ``masses * factor``
    (and a narrow shape's charge)."""
    def refine(pieces: int) -> Cells:
        return shaped_pair_cells(b_v, shape, eps, x0, x1, pieces)

    # (the coarse cells built when the case is screened: many never are)
    return BlanketCase(lambda: refine(BLANKET_CELLS_COARSE), masses * factor, label, choice,
                       lambda _: refine(BLANKET_CELLS), (masses, factor),
                       charge=narrow_charge(b_v, shape, eps, x0, x1))


def pair_cases(b_v: float, shape: BlanketShape, eps: float, masses: NDArray, label: str,
               choice: int, steps: int = SAME_SIGN_STEPS) -> list[BlanketCase]:
    """The cases of one blanket for a Laplace victim of scale ``b_v`` (canonical units): the
    pair (1, -1), which covers every pair of inputs of opposite signs (Lemma 11, Lemma 13),
    and the same-sign grid of Lemma 12: a pair of one sign, of width s and nearest input c,
    translated by c, is the pair (s, 0) or (0, -s) against the blanket shifted to c, which
    every user covers with its mass times ``e^{-L |c|}`` (L the shape's largest slope),
    ``|c| <= 1 - s``; the widths ``(k + 1) / K`` cover ``s in (k / K, (k + 1) / K]``.

    A shape with a slope above ``1 / b_v`` covers the pairs only for ``eps <= 1 / b_v``
    (Lemma 14; a same-sign pair of width at most ``b_v eps`` has l <= 0)."""
    if shape.lipschitz * b_v > 1.0 + 1e-12 and not eps <= 1.0 / b_v:
        raise ValueError(f"a shape with a slope above 1/b_v = {1.0 / b_v!r} covers the pairs "
                         f"only for eps <= 1/b_v, got eps = {eps!r}")
    cases = [_case(b_v, shape, eps, 1.0, -1.0, masses, 1.0, f"{label}: pair (1, -1)", choice)]
    for k in range(steps):
        s_hi = (k + 1) / steps
        factor = math.exp(-(1.0 - k / steps) * shape.lipschitz)  # |c| = 1 - s, s >= k / steps
        for x0, x1 in ((s_hi, 0.0), (0.0, -s_hi)):
            cases.append(_case(b_v, shape, eps, x0, x1, masses, factor,
                               f"{label}: same-sign pairs of width <= {s_hi:g}", choice))
    return cases
