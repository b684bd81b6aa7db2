"""Two-region blankets for the Laplace victims of the smallest budgets (docs/theory.md 15.4,
"Two coverage regions").

The victim-shaped blanket ``omega = Lap(0, b)``, truncated to ``[-K, K]`` (``K = k b``,
``k = K_FAR``; the victim's mass beyond, at most ``e^{-k + eps_u/2}``, is charged), is split into
its centre ``[-T, T]`` and its tails (Laplace masses ``Q_1 = 1 - e^{-t}``, ``Q_2 = e^{-t} -
e^{-k}``; ``q = Q_2 / (1 - e^{-k})``).  Users whose budgets are at most the group's smallest
(or at most ``LOW_RATIO`` times it when those are few, ``LOW_ENOUGH``) cover the whole
truncated blanket (the *low* users); every other user covers the centre only (the *high*
users), which a Laplace user of any budget can, while no user above the victim's budget
covers an untruncated tail as heavy as the victim's.  In the units of the group's largest
budget ``eps_hi`` (``b = 2 / eps_hi``, the victim ``u`` scaled by ``s_u = eps_u / eps_hi``,
``T = t b`` with ``t = T_SCALE`` or ``eps_hi`` if larger, so that ``T >= 2``):

* every ordered pair is, up to the mirror ``w -> -w``, the translate by its midpoint ``c``
  (``|c| <= 1 - s``) of the symmetric pair ``(s, -s)``; the case of half-widths
  ``s in (s_lo, s_hi]`` (consecutive edges of ``HALF_WIDTH_EDGES``) takes the centre law of
  ``(s_hi, -s_hi)`` (it dominates by the claim "two regions, the centre", valid for
  ``s <= T / 2``) and the tail atoms ``Q_2 R_{s_hi}`` and ``Q_2 (2 cosh(s_lo / b) (1 - e^eps)
  - R_{s_hi})``, ``R_s =
  e^{s/b} - e^eps e^{-s/b}`` (two equal-weight atoms dominate two others when the larger atom
  and the sum are no smaller);
* a user j against the victim u's blanket translated by c has, with ``r = eps_j / eps_u`` and
  ``C = (1 - s_lo) / b`` (``eps_u |c| / 2 <= C``), the mass
  ``(1 - e^{-k}) r e^{-eps_j/2} e^{-r C - k (r - 1)_+}`` against the truncated blanket (low
  users) and ``Q_1 r e^{-eps_j/2} e^{-r C - t (r - 1)_+}`` against nu_1 (high users): the
  infimum of ``Lap(x, 2/eps_j)`` over the inputs, divided by the blanket's density, is smallest
  at ``y = c`` or at the far end of the support; the logarithm is concave in r and in eps_j, so
  its minimum over the group's victims and the class's budgets is at a corner
  (:func:`two_region_masses`).

Code names -> symbols: ``b`` = b (canonical units), ``t`` = T / b, ``k_far`` = K / b, ``s_hi``
and ``s_lo`` = the case's edges, ``q2`` = Q_2, ``q`` = q, ``big_e`` = e^eps.
"""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
from numpy.typing import NDArray

from shuffledp.caching import frozen_value, lru_get, lru_put, register_mapping
from shuffledp.families.blanket import Cells, TwoRegionCase, mean_error
from shuffledp.families.laplace_blanket import _side_mass

__all__ = ["centre_cells", "two_region_masses", "two_region_cases", "T_SCALE", "T_SCALES",
           "T_SCALES_MAX_USERS", "K_FARS", "K_DEEP", "CENTRE_PIECES", "HALF_WIDTH_EDGES",
           "HALF_WIDTH_EDGES_MANY"]

_U = float(np.finfo(float).eps) / 2.0
#: The centre's half-width in units of the (canonical) victim scale b, at least eps_hi.
T_SCALE = 2.0
#: The centres tried, one choice each (the smallest value of a group wins): a wider centre
#: lets the high users cover more of the blanket, with smaller masses.
T_SCALES = (2.0, 3.0, 4.0, 5.0)
#: Above this many users only the first centre is tried (time only: at 10^6 users the others
#: took eps from 0.00725 to 0.00704 for twice the time).
T_SCALES_MAX_USERS = 200_000
#: The blanket is truncated to K = K_FAR victim scales around its centre (the victim's mass
#: beyond, at most e^{-K_FAR + eps/2}, is charged), so that users a little above the group's
#: smallest budget cover its tails.
K_FAR = 22.0
#: The truncations tried, one choice each with every centre (the smallest value of a group
#: wins): a nearer one charges more of the victim's mass (e^{-k + eps/2}) and lets the users a
#: little above the group's smallest budget cover more (e^{-k (r - 1)}); measured at delta =
#: 1e-6 on 1,000 users in U[0.5, 2], eps 0.370 with K = 22 b alone, 0.2965 with 16 b.
K_FARS = (K_FAR, 16.0)
#: ... and this deep one, whose charge (e^{-37 + eps/2}, below 1e-16 for budgets up to 2)
#: lies under the blanket's other floors (its Wasserstein charges, about 1e-14): tried only
#: where a nearer truncation's value came near its own charge (bound.DEEP_RATIO), as at
#: 10^6 users and delta = 1e-12, where K = 22 b held delta(eps) above 3.6e-10
#: (docs/theory.md 15.4, "Two coverage regions").
K_DEEP = 37.0
#: Classes with budgets at most LOW_RATIO times the group's smallest cover the (truncated)
#: blanket; the others its centre only.
LOW_RATIO = 1.12
#: ... when the users at or below it give fewer blanket reports on average than this share of
#: the centre's users.
LOW_ENOUGH = 0.25
#: Cells per half of the sloped part [-s, s] of the centre variable.
CENTRE_PIECES = 1 << 11
#: Edges of the grid of half-widths: the case of ``s in (e_i, e_{i+1}]`` takes the pair of
#: half-width ``e_{i+1}`` and the masses of midpoints ``|c| <= 1 - e_i``.  Finer near 1, where
#: the widest pairs decide and the factor ``e^{-r C}`` of the masses costs most; measured
#: (Laplace, delta = 1e-6, normal_0.75_0.5, n = 10^4): four equal steps 0.04919, eight 0.04784,
#: sixteen 0.04717, these eight 0.04668 (to 1 - 2^-8: 0.04655, for 20% more time).  Above
#: ``T_SCALES_MAX_USERS`` users the four equal steps of ``HALF_WIDTH_EDGES_MANY`` (time only:
#: every case of a finer grid costs its FFTs).
HALF_WIDTH_EDGES = (0.0, 0.25, 0.5, 0.75, 0.875, 0.9375, 0.96875, 0.984375, 1.0)
HALF_WIDTH_EDGES_MANY = (0.0, 0.25, 0.5, 0.75, 1.0)


def centre_cells(b: float, eps: float, s: float, t: float, pieces: int = CENTRE_PIECES
                 ) -> Cells:
    """Cells of the centre variable ``l_1 = (P_s - e^eps P_{-s}) / nu_1`` under ``nu_1``,
    the normalized restriction of ``Lap(0, b)`` to ``[-t b, t b]``, for Laplace reports of
    scale ``b`` (``0 < s <= t b``): the atoms ``(1 - q) R_s`` on ``[s, T]`` and ``(1 - q) L_s``
    on ``[-T, -s]``, and ``pieces`` cells on each of ``[-s, 0]``, ``[0, s]`` (l_1 is
    non-decreasing there) with exact masses and means.

    >>> c = centre_cells(2.0, 0.3, 1.0, 2.0)
    >>> q = math.exp(-2.0)  # the mean is P_s(C) - e^eps P_{-s}(C), C = [-4, 4]
    >>> mass_c = 1.0 - 0.5 * (math.exp(-1.5) + math.exp(-2.5))
    >>> abs(c.total - 1.0) < 1e-13, abs(c.moments()[0] - (1 - math.exp(0.3)) * mass_c) < 1e-13
    (True, True)
    """
    big_t = t * b
    if not (b > 0 and 0 < s <= big_t):
        raise ValueError(f"need b > 0 and 0 < s <= T = t b, got b = {b!r}, s = {s!r}, t = {t!r}")
    big_e = math.exp(eps)
    q = math.exp(-t)
    keep = -math.expm1(-t)  # 1 - q
    r_s = math.exp(s / b) - big_e * math.exp(-s / b)
    l_s = math.exp(-s / b) - big_e * math.exp(s / b)
    side = 0.5 * (math.exp(-s / b) - q) / keep  # nu_1([s, T]) = nu_1([-T, -s])
    lo_w, hi_w, om, p0, p1 = _centre_masses(float(b), float(s), int(pieces))

    def ell(w: NDArray) -> tuple[NDArray, NDArray]:
        """l_1 at w and a bound on its rounding (exponents of size at most 2 s / b)"""
        psi0 = np.exp((np.abs(w) - np.abs(w - s)) / b)
        psi1 = np.exp((np.abs(w) - np.abs(w + s)) / b)
        err = keep * (8.0 * s / b + 12.0) * _U * (psi0 + big_e * psi1)
        return keep * (psi0 - big_e * psi1), err

    (a_val, a_err), (b_val, b_err) = ell(lo_w), ell(hi_w)
    slack = np.maximum(a_err, b_err)
    # the atoms' values, rounded as the ends' (docs/theory.md 15.3 (N7))
    atom_err = keep * (4.0 * s / b + 12.0) * _U * (math.exp(s / b) * (1.0 + big_e))
    mass = np.concatenate([[side], om / keep, [side]])
    lo = np.concatenate([[keep * l_s - atom_err], np.minimum(a_val, b_val) - slack,
                         [keep * r_s - atom_err]])
    hi = np.concatenate([[keep * l_s + atom_err], np.maximum(a_val, b_val) + slack,
                         [keep * r_s + atom_err]])
    mean = np.concatenate([[keep * l_s + atom_err], keep * (p0 - big_e * p1) / om,
                           [keep * r_s + atom_err]])
    # relative errors of the masses: the cells' (exponents of size at most s / b, 2 s / b for
    # the victim's laws, then expm1 and the quotients); the side atoms' a difference
    # e^{-s/b} - q, whose rounding is relative to its terms
    es = math.exp(-s / b)
    rel_side = (((2.0 * s / b + 1.0) * es + (t + 1.0) * q) / (es - q) + 6.0) * _U
    rel_cells = (2.0 * s / b + 12.0) * _U
    rel_victim = (4.0 * s / b + 12.0) * _U
    return Cells(mass, lo, hi, mean, max(rel_side, rel_cells) * (1.0 + 1e-9),
                 mean_error=mean_error(max(rel_cells, rel_victim) + 2.0 * _U, p0, p1, eps))


def _centre_masses(b: float, s: float, pieces: int) -> tuple[NDArray, ...]:
    """The cells' edges and their masses under Lap(0, b), Lap(s, b) and Lap(-s, b) (they do
    not depend on eps: cached, read-only, for the probes of a solve; time only)."""
    key = (b, s, pieces)
    got = lru_get(_CENTRE_MASSES, key)
    if got is None:
        edges = np.concatenate([np.linspace(-s, 0.0, pieces + 1)[:-1],
                                np.linspace(0.0, s, pieces + 1)])
        lo_w, hi_w = edges[:-1], edges[1:]
        got = lru_put(_CENTRE_MASSES, key, frozen_value(
            (lo_w, hi_w, _side_mass(lo_w, hi_w, 0.0, b), _side_mass(lo_w, hi_w, s, b),
             _side_mass(lo_w, hi_w, -s, b))), 256)
    return got


_CENTRE_MASSES: OrderedDict[tuple, tuple] = OrderedDict()
register_mapping("laplace_two_region.centre_masses", _CENTRE_MASSES)
_MASSES: OrderedDict[tuple, tuple] = OrderedDict()
register_mapping("laplace_two_region.masses", _MASSES)


def two_region_masses(eps_lo: float, eps_hi: float, eps_a: NDArray, eps_b: NDArray, t: float,
                      c_k: float, k_far: float = K_FAR, low_ratio: float = LOW_RATIO
                      ) -> tuple[NDArray, NDArray]:
    """(low, high): each class's smallest mass against the blanket truncated to ``k_far``
    victim scales (classes with budgets at most ``low_ratio * eps_lo``) or against its centre
    (the others), over the victims ``eps_u in [eps_lo, eps_hi]``, the class's budgets
    ``[eps_a, eps_b]`` and the translations ``eps_u |c| / 2 <= c_k`` (module docstring);
    rounded down by a few ulps.

    >>> lo, hi = two_region_masses(0.5, 0.5, np.array([0.5, 1.0]), np.array([0.5, 1.0]), 2.0, 0.0)
    >>> lo.round(6).tolist(), hi.round(6).tolist()  # e^{-1/4}; (1 - e^-2) 2 e^{-1/2} e^{-2}
    ([0.778801, 0.0], [0.0, 0.141952])
    """
    a = np.asarray(eps_a, dtype=np.float64)
    bb = np.asarray(eps_b, dtype=np.float64)
    # (they do not depend on eps: cached for the probes of a solve, read-only; time only)
    key = (float(eps_lo), float(eps_hi), a.tobytes(), bb.tobytes(), float(t), float(c_k),
           float(k_far), float(low_ratio))
    got = lru_get(_MASSES, key)
    if got is None:
        got = lru_put(_MASSES, key, frozen_value(_two_region_masses(
            float(eps_lo), float(eps_hi), a, bb, float(t), float(c_k), float(k_far),
            float(low_ratio))), 1024)
    return got


def _two_region_masses(eps_lo: float, eps_hi: float, a: NDArray, bb: NDArray, t: float,
                       c_k: float, k_far: float, low_ratio: float) -> tuple[NDArray, NDArray]:
    low = bb <= low_ratio * eps_lo
    log_keep = math.log(-math.expm1(-t))
    log_keep_far = math.log(-math.expm1(-k_far))
    best_low = np.full(a.shape, np.inf)
    best_high = np.full(a.shape, np.inf)
    with np.errstate(divide="ignore"):
        for u in {eps_lo, eps_hi}:
            for e in (a, bb):
                r = e / u
                base = np.log(r) - e / 2.0 - r * c_k
                best_low = np.minimum(best_low, log_keep_far + base
                                      - k_far * np.maximum(r - 1.0, 0.0))
                best_high = np.minimum(best_high, log_keep + base - t * np.maximum(r - 1.0, 0.0))
    shrink = 1.0 - 64.0 * _U
    lo_m = np.where(low & (bb > 0), np.exp(np.minimum(best_low, 0.0)), 0.0) * shrink
    hi_m = np.where(~low & (bb > 0), np.exp(np.minimum(best_high, 0.0)), 0.0) * shrink
    return lo_m, hi_m


def _up(x: float) -> float:
    """x rounded up by a few ulps (and an absolute 1e-300)."""
    return x + 8.0 * _U * abs(x) + 1e-300


def two_region_cases(eps: float, eps_lo: float, eps_hi: float, eps_a: NDArray,
                     eps_b: NDArray, keep: NDArray, choice: int,
                     counts: NDArray | None = None, t_scale: float = T_SCALE,
                     k_far: float = K_FAR,
                     edges: tuple[float, ...] = HALF_WIDTH_EDGES,
                     deep: bool = False) -> list[TwoRegionCase]:
    """The cases of the two-region blanket for a group of Laplace victims with budgets in
    ``[eps_lo, eps_hi]`` (module docstring), its centre ``T = t b`` with ``t = max(t_scale,
    eps_hi)``, truncated to ``K = k b`` with ``k = max(k_far, 2 t)``; ``keep`` = 1 - delta_j
    per class, ``counts`` the users per class (default one each); ``edges`` the grid of
    half-widths (increasing from 0 to 1: any such grid gives a valid choice); ``deep`` marks
    the cases of a deep truncation (:data:`K_DEEP`, tried only where a nearer one's charge
    binds)."""
    if not (len(edges) >= 2 and edges[0] == 0.0 and edges[-1] == 1.0
            and all(x < y for x, y in zip(edges, edges[1:], strict=False))):
        raise ValueError(f"edges must increase from 0 to 1, got {edges!r}")
    if not (math.isfinite(t_scale) and t_scale >= T_SCALE):
        raise ValueError(f"t_scale must be finite and >= {T_SCALE:g}, got {t_scale!r}")
    if not (math.isfinite(k_far) and k_far > 0.0):
        raise ValueError(f"k_far must be finite and > 0, got {k_far!r}")
    counts = np.ones(np.shape(eps_a)) if counts is None else np.asarray(counts, dtype=float)
    b = 2.0 / eps_hi
    t = max(t_scale, eps_hi)  # T = t b >= 2 >= 2 s for every half-width s <= 1
    k_far = max(float(k_far), 2.0 * t)
    big_e = math.exp(eps)
    # omega truncated to [-K, K]: centre mass Q1, tails mass Q2 (of Lap(0, b)), and the
    # tails' probability under the truncated blanket
    q2 = math.exp(-t) - math.exp(-k_far)  # (Q_1 = 1 - e^{-t} enters through the cells)
    q = q2 / -math.expm1(-k_far)
    # the victim's mass beyond K from its translated blanket's centre: its input is within 1
    # of c, so at most e^{-(K - 1) / b_u} = e^{-k_far + eps_u / 2}
    charge = _up(math.exp(-k_far + eps_hi / 2.0))
    # the users a little above the group's smallest budget cover the truncated blanket only
    # when few users are at or below it (else they serve better in the centre)
    plain, centre = two_region_masses(eps_lo, eps_hi, eps_a, eps_b, t, 1.0 / b, k_far, 1.0)
    few = float(np.dot(plain, counts)) < LOW_ENOUGH * float(np.dot(centre, counts))
    ratio = LOW_RATIO if few else 1.0
    if not few and k_far < max(K_FAR, 2.0 * t) and not deep:
        # a nearer truncation serves the users a little above the smallest budget: without
        # them it is not tried (time only: any subset of the choices is valid)
        return []
    out = []
    for k in reversed(range(len(edges) - 1)):  # the widest first: usually the largest value
        s_lo, s_hi = edges[k], edges[k + 1]
        low, high = two_region_masses(eps_lo, eps_hi, eps_a, eps_b, t, (1.0 - s_lo) / b, k_far,
                                      ratio)
        r_hi = math.exp(s_hi / b) - big_e * math.exp(-s_hi / b)
        top = _up(q2 * r_hi)
        total = _up(q2 * 2.0 * math.cosh(s_lo / b) * (1.0 - big_e))  # the two atoms' sum
        out.append(TwoRegionCase(centre_cells(b, eps, s_hi, t), top, _up(total - top), q,
                                 low * keep, high * keep,
                                 f"two regions, T = {t:g} b, K = {k_far:g} b: half-widths "
                                 f"<= {s_hi:g}", choice, charge, deep))
    return out
