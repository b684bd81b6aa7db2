"""The Laplace mechanism on [-1, 1] with scale 2/eps (family ``laplace``).

User j reports ``x_j + Lap(2/eps_j)`` (Dwork, McSherry, Nissim, Smith, TCC 2006).  Clone mass
against a victim with budget eps_v (docs/theory.md 6.4, the infimum at y = 1, x = -1):

    r_j = (eps_j / eps_v) e^{-eps_j}  if eps_j <= eps_v,  else 0

(a user with a larger budget has lighter tails than the victim and hides none of it).  The
victim's tails can be cut at ``|y| <= T``, the mass beyond T joining its delta (Lemma 8); users
with lighter tails then dominate a positive mass (:func:`laplace_log_mass`).  Variation-ratio
row: beta = 1 - e^{-eps0/2} (Wang et al., PVLDB 2024; docs/theory.md 11.3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from shuffledp.families.base import (
    Family,
    UserClasses,
    VariationRatio,
    VictimRange,
    vr_half_exponent,
)
from shuffledp.families.blanket import BlanketCase, Cells
from shuffledp.families.registry import register_family
from shuffledp.families.windows import (
    WEIGHTS,
    U,
    Window,
    WindowConfig,
    finite,
    grid,
    symmetric_cell_masses,
    symmetric_windows,
)

__all__ = ["Laplace", "laplace_tail_cut", "laplace_log_mass", "laplace_pair_cells"]

#: Cells per monotone piece of l in the blanket's cells (docs/theory.md 15.4); the
#: screening uses the coarse ones.
BLANKET_CELLS = 1 << 12
BLANKET_CELLS_COARSE = 1 << 7
#: Steps of the grid of same-sign pairs (translated, docs/theory.md 15.4).
SAME_SIGN_STEPS = 4

_U = U


def _mass_laplace(lo: float, hi: float, x: float, scale: NDArray) -> tuple[NDArray, NDArray]:
    """Pr[x + Lap(scale) in [lo, hi]] and its error bound (``hi`` may be inf)."""
    if lo >= x or hi <= x:  # one side of the centre: 0.5 e^{-d/b} (1 - e^{-(hi-lo)/b})
        d = (lo - x) if lo >= x else (x - hi)
        z1 = d / scale
        z2 = (hi - lo) / scale
        val = 0.5 * np.exp(-z1) * -np.expm1(-z2)
        rel = (3.0 * finite(z1) + 3.0 * finite(z2) + 12.0) * _U
        return val, rel * val
    z1 = (x - lo) / scale
    z2 = (hi - x) / scale
    val = 0.5 * -np.expm1(-z1) + 0.5 * -np.expm1(-z2)
    return val, (3.0 * finite(z1) + 3.0 * finite(z2) + 12.0) * _U * val


def laplace_tail_cut(eta: float, eps_lo: float) -> tuple[float, float]:
    """(T, tail) for Laplace victims with budgets >= eps_lo: sup over ``|x| <= 1`` of
    ``Pr[|x + Lap(2/eps)| > T] = (1 + e^{-eps}) e^{-(T-1) eps / 2} / 2`` (at x = +-1, largest at
    the smallest eps); T solves tail = eta (T >= 1)."""
    if eta <= 0.0:
        return math.inf, 0.0
    if eps_lo <= 0.0:
        return math.inf, 0.0
    a = math.log1p(math.exp(-eps_lo)) - math.log(2.0 * eta)
    cut = 1.0 + 2.0 * max(a, 0.0) / eps_lo
    tail = 0.5 * (1.0 + math.exp(-eps_lo)) * math.exp(-(cut - 1.0) * eps_lo / 2.0)
    return cut, min(tail, 1.0)


def laplace_log_mass(eps_lo: float, eps_hi: float, cut: float,
                      eps_j: NDArray[np.float64]) -> NDArray[np.float64]:
    """log of min over victims eps_v in [eps_lo, eps_hi] and ``|y| <= cut`` of
    ``inf_x R_j(x)(y) / sup_x R_v(x)(y) = (eps_j/eps_v) exp(-eps_j(|y|+1)/2 + eps_v(|y|-1)^+/2)``
    (Laplace on [-1, 1], scale 2/eps; Lemma 8): the exponent is piecewise linear in ``|y|``, so
    the minimum is at ``|y| = 1`` or ``|y| = cut``; in eps_v, -log eps_v - eps_j is smallest at
    eps_hi and -log eps_v + eps_v (cut-1)/2 at eps_v = 2/(cut-1) clipped to the group."""
    with np.errstate(divide="ignore"):
        log_j = np.log(eps_j)
    a = log_j - math.log(eps_hi) - eps_j
    if math.isinf(cut):
        return np.where(eps_j <= eps_lo, a, -np.inf)
    v = min(max(2.0 / (cut - 1.0), eps_lo), eps_hi)
    b = log_j - math.log(v) - eps_j * (cut + 1.0) / 2.0 + v * (cut - 1.0) / 2.0
    return np.minimum(np.minimum(a, b), 0.0)


def _side_mass(lo: NDArray, hi: NDArray, m: float, s: float) -> NDArray:
    """Pr[Lap(m, s) in [lo, hi]] for cells on one side of m (lo may be -inf, hi +inf),
    without cancellation."""
    width = hi - lo
    with np.errstate(invalid="ignore", over="ignore"):
        left = 0.5 * np.exp((hi - m) / s) * -np.expm1(-width / s)
        right = 0.5 * np.exp(-(lo - m) / s) * -np.expm1(-width / s)
    return np.where(hi <= m, left, right)


def laplace_pair_cells(b_v: float, b_r: float, eps: float, x0: float, x1: float,
                       pieces: int = BLANKET_CELLS) -> Cells:
    """Cells of ``l = (P_{x0} - e^eps P_{x1}) / omega`` for Laplace reports of scale b_v
    (inputs x1 <= 0 <= x0) and the blanket omega = Lap(0, b_r), b_r >= b_v
    (docs/theory.md 15.4).  With ``psi_x = dP_x / domega = (b_r / b_v)
    exp(-|w - x| / b_v + |w| / b_r)``, l is monotone on each of (-inf, x1], [x1, 0], [0, x0],
    [x0, inf) (it tends to 0 in both tails when b_v < b_r, and is constant there when
    b_v = b_r).  Every piece is cut into ``pieces`` cells (the tails over 60 b_r, plus the
    rest of each tail as one cell), each with its exact omega-mass and its exact mean
    ``(P_{x0}(cell) - e^eps P_{x1}(cell)) / omega(cell)``.

    >>> c = laplace_pair_cells(2.0, 2.0, 0.1, 1.0, -1.0, pieces=64)
    >>> abs(c.total - 1.0) < 1e-14, abs(c.moments()[0] - (1.0 - math.exp(0.1))) < 1e-14
    (True, True)
    """
    if not (x1 <= 0.0 <= x0):
        raise ValueError(f"need x1 <= 0 <= x0, got x0 = {x0!r}, x1 = {x1!r}")
    if not (0.0 < b_v <= b_r):
        raise ValueError(f"need 0 < b_v <= b_r, got b_v = {b_v!r}, b_r = {b_r!r}")
    e = math.exp(eps)
    ratio = b_r / b_v

    def ell(w: NDArray) -> NDArray:
        psi0 = ratio * np.exp(-np.abs(w - x0) / b_v + np.abs(w) / b_r)
        psi1 = ratio * np.exp(-np.abs(w - x1) / b_v + np.abs(w) / b_r)
        return psi0 - e * psi1

    reach = 60.0 * b_r
    edges = [np.linspace(x1 - reach, x1, pieces + 1)]
    if x1 < 0.0:
        edges.append(np.linspace(x1, 0.0, pieces + 1))
    if x0 > 0.0:
        edges.append(np.linspace(0.0, x0, pieces + 1))
    edges.append(np.linspace(x0, x0 + reach, pieces + 1))
    lo_w = np.concatenate([[-np.inf]] + [ed[:-1] for ed in edges] + [[x0 + reach]])
    hi_w = np.concatenate([[x1 - reach]] + [ed[1:] for ed in edges] + [[np.inf]])
    mass = _side_mass(lo_w, hi_w, 0.0, b_r)
    p0 = _side_mass(lo_w, hi_w, x0, b_v)
    p1 = _side_mass(lo_w, hi_w, x1, b_v)
    with np.errstate(invalid="ignore", over="ignore"):
        a_val, b_val = ell(lo_w), ell(hi_w)
    if b_v == b_r:  # constant tails
        a_val[0], b_val[-1] = b_val[0], a_val[-1]
    else:  # l tends to 0 in both tails
        a_val[0], b_val[-1] = 0.0, 0.0
    lo = np.minimum(a_val, b_val)
    hi = np.maximum(a_val, b_val)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(mass > 0, (p0 - e * p1) / mass, lo)
    keep = mass > 0
    # masses and means carry a few ulps of relative error (exp, expm1, the quotient)
    return Cells(mass[keep], lo[keep], hi[keep], mean[keep], 32.0 * 1.2e-16)


def _case(b_v: float, b_r: float, eps: float, x0: float, x1: float, masses: NDArray,
          label: str, choice: int) -> BlanketCase:
    """A blanket case with coarse cells, refined on demand."""
    def refine(pieces: int) -> Cells:
        return laplace_pair_cells(b_v, b_r, eps, x0, x1, pieces)

    return BlanketCase(refine(BLANKET_CELLS_COARSE), masses, label, choice,
                       lambda _: refine(BLANKET_CELLS))


@register_family
@dataclass(frozen=True)
class Laplace(Family):
    """The Laplace mechanism on [-1, 1], scale 2/eps (module docstring).

    >>> float(Laplace().clone_mass(2.0, 0.5))  # (0.5/2) e^{-0.5}
    0.15163266492815836
    >>> float(Laplace().clone_mass(0.5, 2.0))  # lighter tails: none
    0.0
    """

    positive_budgets = True  # noise scale proportional to 1 / eps_i

    name: ClassVar[str] = "laplace"
    title: ClassVar[str] = "Laplace mechanism on [-1, 1], scale 2/eps"
    victim_order: ClassVar[str] = "zero_below"
    aware: ClassVar[bool] = True
    binnable: ClassVar[bool] = True
    cuts_tails: ClassVar[bool] = True

    def _clone_mass(self, a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(a == b, 1.0, b / a)
        return np.where(b <= a, ratio * np.exp(-b), 0.0)

    def _variation_ratio(self, eps0: float) -> VariationRatio:
        return vr_half_exponent(eps0)

    def tail_cut(self, eta: float, group: VictimRange) -> tuple[float, float]:
        return laplace_tail_cut(eta, group.eps_lo)

    def pool_masses(self, group: VictimRange, users: UserClasses, eta: float, *,
                    victim_eps: NDArray[np.float64], own_bin: int | None
                    ) -> tuple[float, NDArray[np.float64]]:
        """Without a cut the generic pure masses; with one (Lemma 8) the masses of
        :func:`laplace_log_mass` at both ends of each class, the victim's delta raised by
        the cut tail."""
        if not eta > 0.0:
            return super().pool_masses(group, users, eta, victim_eps=victim_eps,
                                       own_bin=own_bin)
        g = group
        cut, tail = laplace_tail_cut(eta, g.eps_lo)
        delta_v = min(1.0, g.delta_hi + tail)
        log_m = laplace_log_mass(g.eps_lo, g.eps_hi, cut, users.eps_a)
        if not users.exact:
            log_m = np.minimum(log_m, laplace_log_mass(g.eps_lo, g.eps_hi, cut, users.eps_b))
        return delta_v, (1.0 - users.delta) * (1.0 - tail) * np.exp(log_m)

    def blanket_cases(self, eps: float, group: VictimRange,
                      users: UserClasses) -> list[BlanketCase]:
        """Blankets omega = Lap(0, 2/eps_r), the normalized infimum of the densities of budget
        eps_r (mass e^{-eps_r/2} for a user with that budget); a user with eps_j <= eps_r has
        mass ``(eps_j / eps_r) e^{-eps_j/2}``, lighter-tailed users 0 (docs/theory.md 15.4).

        Choice 0 takes the victim's own blanket, eps_r = eps_v: for a group of victims the
        masses are taken at its largest budget, for users below its smallest one, and the
        victim at its largest budget (in units of the scale the victim's pair widens with
        eps_v, which can only raise the bound: Lemma 11).  For a group of one budget, choices
        1.. take eps_r below it (heavier-tailed blankets that lower-budget users cover
        better): the victim's l is then peaked, and Lemma 11 still orders the pairs.
        For each choice: pairs of inputs of opposite signs are below (1, -1) (Lemma 11); a
        pair of one sign, translated by its input nearest 0, is an opposite-sign pair of
        width s <= 1 against the blanket Lap(c, b_r), ``|c| <= 1 - s``, whose masses are at
        least ``e^{-|c|/b_r}`` times these: the cases of a grid of widths cover them (Lemma
        12)."""
        v = group.eps_hi
        a = np.asarray(users.eps_a, dtype=np.float64)
        bb = np.asarray(users.eps_b, dtype=np.float64)
        keep = 1.0 - np.asarray(users.delta)
        # (eps_j / eps_r) e^{-eps_j/2} is unimodal in eps_j (maximum at 2): its minimum over
        # a class is at an end
        low_end = np.minimum(a * np.exp(-a / 2.0), bb * np.exp(-bb / 2.0))
        refs = [(v, group.eps_lo)]  # (eps_r, largest user budget with a mass)
        if group.eps_lo == group.eps_hi:
            below = np.unique(bb[(bb < v) & (bb > 0) & (users.counts > 0)])  # eps_r > 0
            if below.size:
                picks = {float(below[-1]), float(below[0]), float(below[below.size // 2])}
                refs += [(r, r) for r in sorted(picks, reverse=True)]
        cases = []
        for choice, (ref, top) in enumerate(refs):
            b_r, b_v = 2.0 / ref, 2.0 / v
            masses = np.where(bb <= top, np.minimum(low_end / ref, 1.0), 0.0) * keep
            cases.append(_case(b_v, b_r, eps, 1.0, -1.0, masses,
                               f"eps_r = {ref:g}: pair (1, -1)", choice))
            steps = SAME_SIGN_STEPS
            for k in range(steps):
                s_hi = (k + 1) / steps
                factor = math.exp(-(1.0 - k / steps) / b_r)  # |c| = 1 - s, s >= k / steps
                for x0, x1 in ((s_hi, 0.0), (0.0, -s_hi)):
                    cases.append(_case(b_v, b_r, eps, x0, x1, masses * factor,
                                       f"eps_r = {ref:g}: same-sign pairs of width <= "
                                       f"{s_hi:g}", choice))
        return cases

    def window_configs(self, eps_v: float, delta_v: float) -> list[WindowConfig]:
        # symmetric family: x* = +1 is the mirror of x* = -1 (both directions taken)
        return grid(-1.0, 1.0, (-1.0, 0.0), symmetric_windows(2.0 / eps_v), WEIGHTS)

    def cell_masses(self, x: float, eps: NDArray[np.float64], delta: NDArray[np.float64],
                    window: Window) -> tuple[NDArray[np.float64], ...]:
        scale = 2.0 / eps

        def mass(lo, hi, xx):
            return _mass_laplace(lo, hi, xx, scale)

        return symmetric_cell_masses(mass, x, window)
