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

from shuffledp.errors import ParameterRegimeError
from shuffledp.families.base import (
    Family,
    UserClasses,
    VariationRatio,
    VictimRange,
    vr_half_exponent,
)
from shuffledp.families.blanket import BlanketCase, Cells
from shuffledp.families.laplace_blanket import (
    BLANKET_CELLS,
    SAME_SIGN_STEPS,
    BlanketShape,
    narrow,
    pair_cases,
    shaped_masses,
    shaped_pair_cells,
    two_slope_shapes,
)
from shuffledp.families.laplace_two_region import (
    HALF_WIDTH_EDGES,
    HALF_WIDTH_EDGES_MANY,
    K_DEEP,
    K_FARS,
    T_SCALES,
    T_SCALES_MAX_USERS,
    two_region_cases,
)
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

#: The two-slope blankets tried for a heterogeneous pool (:func:`two_slope_shapes`;
#: docs/theory.md 15.4): (knee in units of the victim's scale b_hi, centre slope in units of
#: 1 / b_hi given as the mean or the smallest budget of the users below the group, over
#: eps_hi).  Measured on two_groups, three_groups and 16 tiers in [0.5, 2] (n = 10^4), this
#: pair was at or within 0.4% of the best of 8 designs everywhere.
SHAPE_PLAN = ((1.5, "mean"), (3.0, "low"))
#: Narrow blankets (docs/theory.md 15.4, Lemma 14) for the users with budgets above a victim
#: group's smallest, up to NARROW_MAX times it: the blanket Lap(0, 2 s_lo / u) for the
#: largest such budget u, and the first two-slope design with its tails (a blanket whose
#: tails users up to u cover).  Their laws have long tails (wide lattices), so in pools of
#: more than NARROW_ALL_USERS users the first replaces the victim's own blanket where no
#: two-slope design applies (else it is left out), and the second replaces the first design
#: with its own tails: they beat those on every group of the benchmark's 10^6 users (time
#: only).  Their same-sign grids have NARROW_STEPS steps (those cases were at most 1e-3 of
#: the pair's where measured).  Measured (delta = 1e-6, the paper's personalized_validity profiles;
#: docs/theory.md 15.4 (c)): normal_1.5_0.5 at 10^4 0.0929 -> 0.0865, normal_0.75_0.5 at
#: 10^6 0.00447 -> 0.00385.
NARROW_MAX = 1.35
NARROW_ALL_USERS = 200_000
NARROW_STEPS = 2
#: A pool is heterogeneous (the shaped blankets are tried) when users with budgets at most
#: this fraction of the victim group's smallest budget are in it.
SHAPE_BELOW = 0.75

_U = U
#: Smallest budget whose cell masses are computed (``window_lower``): 2 / eps overflows
#: below about 1.1e-308.
MIN_CELL_EPS = 1e-300


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


def laplace_pair_cells(b_v: float, b_r: float, eps: float, x0: float, x1: float,
                       pieces: int = BLANKET_CELLS) -> Cells:
    """Cells of ``l = (P_{x0} - e^eps P_{x1}) / omega`` for Laplace reports of scale b_v
    (inputs x1 <= 0 <= x0) and the blanket omega = Lap(0, b_r), b_r >= b_v
    (docs/theory.md 15.4): :func:`~shuffledp.families.laplace_blanket.shaped_pair_cells` with
    the shape of Lap(0, b_r).  With ``psi_x = dP_x / domega = (b_r / b_v)
    exp(-|w - x| / b_v + |w| / b_r)``, l is monotone on each of (-inf, x1], [x1, 0], [0, x0],
    [x0, inf) (it tends to 0 in both tails when b_v < b_r, and is constant there when
    b_v = b_r).  Every piece is cut into ``pieces`` cells (the tails over 60 b_r, plus the
    rest of each tail as one cell), each with its exact omega-mass and its exact mean
    ``(P_{x0}(cell) - e^eps P_{x1}(cell)) / omega(cell)``.

    >>> c = laplace_pair_cells(2.0, 2.0, 0.1, 1.0, -1.0, pieces=64)
    >>> abs(c.total - 1.0) < 1e-14, abs(c.moments()[0] - (1.0 - math.exp(0.1))) < 1e-14
    (True, True)
    """
    if not (0.0 < b_v <= b_r):
        raise ValueError(f"need 0 < b_v <= b_r, got b_v = {b_v!r}, b_r = {b_r!r}")
    return shaped_pair_cells(b_v, BlanketShape.laplace(b_r), eps, x0, x1, pieces)


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
    blanket_ratio_groups: ClassVar[bool] = True
    blanket_union_ratio: ClassVar[float] = 1.0  # (Family.blanket_union_ratio)
    blanket_eps_floor: ClassVar[float] = 1e-6
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
        """Blankets of symmetric log-piecewise-linear shapes (docs/theory.md 15.4, Lemma 13),
        in the units of the group's largest budget eps_hi (every victim of the group is the
        victim at eps_hi with its pair scaled by ``eps_u / eps_hi``, against its blanket
        widened by ``eps_hi / eps_u``); a user's mass is the smallest over the group's
        victims and its class's budgets (:func:`shaped_masses`), 0 for users with lighter
        tails than the blanket.

        Choice 0 is the victim's own blanket Lap(0, 2/eps_hi) (the normalized infimum of its
        budget: mass ``(eps_j / eps_hi) e^{-eps_j/2}`` for a user below the group's smallest
        budget).  For a group of one budget, further choices take Lap(0, 2/eps_r) with eps_r
        below it (heavier tails that lower-budget users cover better; users above eps_r get
        0).  When users with budgets well below the group's are in the pool, the two-slope
        shapes of ``SHAPE_DESIGNS`` are tried too: flatter near 0, which those users cover
        better, and the victim's own tails, which every user up to the group's budget
        covers.  For eps at most half the group's largest budget, narrow blankets (Lemma 14:
        any shape is then valid) let the users with budgets up to ``NARROW_MAX`` times the
        group's smallest cover the victim's tails: Lap(0, 2 s_lo / u) for the largest such
        budget u, and the first two-slope design with those tails (``NARROW_ALL_USERS``).
        Each choice alone is valid (the bound takes the best); its cases are the pair
        (1, -1) and the same-sign grid (:func:`pair_cases`)."""
        v = group.eps_hi
        b_v = 2.0 / v
        s_lo = group.eps_lo / v
        a = np.asarray(users.eps_a, dtype=np.float64)
        bb = np.asarray(users.eps_b, dtype=np.float64)
        keep = 1.0 - np.asarray(users.delta)
        shapes = [(BlanketShape.laplace(b_v), f"eps_r = {v:g}")]
        # the users that may shape a choice (budgets below the floor would give scales the
        # cells cannot hold; they keep their masses against the others)
        live = (users.counts > 0) & (a >= self.blanket_eps_floor)
        if group.eps_lo == group.eps_hi:
            below = np.unique(bb[(bb < v) & live])
            if below.size:
                picks = {float(below[-1]), float(below[0]), float(below[below.size // 2])}
                shapes += [(BlanketShape.laplace(2.0 / r), f"eps_r = {r:g}")
                           for r in sorted(picks, reverse=True)]
        tails = []
        if eps <= 0.5 * v:
            # narrow blankets (Lemma 14): users with budgets just above the group's smallest
            # cover them; eps_r = u / s_lo counts every user up to u for every victim
            near = live & (bb > group.eps_lo) & (bb <= NARROW_MAX * group.eps_lo)
            if np.any(near):
                # (a hair above u / s_lo: the class at u is then inside the rounded bound)
                tails = [float(np.max(bb[near])) / s_lo * (1.0 + 1e-9)]
        low = live & (bb <= SHAPE_BELOW * group.eps_lo)
        many = float(np.sum(users.counts)) > NARROW_ALL_USERS
        if tails and not (many and np.any(low)):
            pure = [(BlanketShape.laplace(2.0 / r), f"narrow, eps_r = {r:g}") for r in tails]
            # (in large pools instead of the victim's own blanket, and only where no
            # two-slope design applies)
            shapes = pure + shapes[1:] if many else shapes + pure
        if np.any(low):
            # the centre slope of the lower users' own blankets, on average
            mid = float(np.average(0.5 * (a + bb)[low], weights=users.counts[low])) / v
            low_r = float(np.min(a[low])) / v
            pick = {"mean": mid, "low": low_r}
            designs = tuple((k, min(max(pick[w], 0.05), SHAPE_BELOW)) for k, w in SHAPE_PLAN)
            plain = [(sh, f"two slopes, knee {k:g} b, centre slope {r:.3g}/b")
                     for sh, (k, r) in zip(two_slope_shapes(b_v, designs), designs,
                                           strict=True)]
            # the first design with narrow tails (in large pools instead of its own tails)
            shapes += plain[1:] if tails and many else plain
            shapes += [(BlanketShape((k * b_v,), (r / b_v, 0.5 * t)),
                        f"two slopes, knee {k:g} b, centre slope {r:.3g}/b, narrow tails "
                        f"eps_r = {t:g}")
                       for t in tails for k, r in designs[:1]]
        cases = []
        for choice, (shape, label) in enumerate(shapes):
            masses = shaped_masses(shape, v, s_lo, a, bb) * keep
            cases += pair_cases(b_v, shape, eps, masses, label, choice,
                                NARROW_STEPS if narrow(b_v, shape) else SAME_SIGN_STEPS)
        return cases

    def blanket_two_region_cases(self, eps: float, group: VictimRange,
                                 users: UserClasses) -> list:
        """The two-region blanket (docs/theory.md 15.4, "Two coverage regions";
        :mod:`shuffledp.families.laplace_two_region`): the victim's own blanket, covered whole
        by the users at or below the group's smallest budget and in its centre by all the
        others; one choice per centre of ``T_SCALES`` and truncation of ``K_FARS`` (the
        first of each alone above ``T_SCALES_MAX_USERS`` users), and one of the deep
        truncation ``K_DEEP`` with the first centre."""
        out: list = []
        # one choice per centre T = t b (t = max(t_scale, eps_hi): the same for every scale
        # at or below eps_hi) and truncation K = k b; the defaults alone for many users (time
        # only)
        many = float(np.sum(users.counts)) > T_SCALES_MAX_USERS
        first = 1 if many else None
        # (t, k) with t = max(t0, eps_hi), k = max(k0, 2 t): each distinct pair once
        pairs = dict.fromkeys((t, max(k, 2.0 * t))
                              for t in (max(ts, group.eps_hi) for ts in T_SCALES[:first])
                              for k in K_FARS[:first])
        # and the deep truncation with the first centre (tried only where a nearer
        # truncation's charge binds: bound.DEEP_RATIO)
        t0 = max(T_SCALES[0], group.eps_hi)
        runs = [(ts, kf, False) for ts, kf in pairs] + [(t0, max(K_DEEP, 2.0 * t0), True)]
        for i, (ts, kf, deep) in enumerate(runs):
            out += two_region_cases(eps, group.eps_lo, group.eps_hi,
                                    np.asarray(users.eps_a, dtype=np.float64),
                                    np.asarray(users.eps_b, dtype=np.float64),
                                    1.0 - np.asarray(users.delta, dtype=np.float64),
                                    choice=-1 - i, counts=np.asarray(users.counts),
                                    t_scale=ts, k_far=kf,
                                    edges=HALF_WIDTH_EDGES_MANY if many else HALF_WIDTH_EDGES,
                                    deep=deep)
        return out

    def window_configs(self, eps_v: float, delta_v: float) -> list[WindowConfig]:
        # symmetric family: x* = +1 is the mirror of x* = -1 (both directions taken)
        return grid(-1.0, 1.0, (-1.0, 0.0), symmetric_windows(2.0 / eps_v), WEIGHTS)

    def cell_masses(self, x: float, eps: NDArray[np.float64], delta: NDArray[np.float64],
                    window: Window) -> tuple[NDArray[np.float64], ...]:
        if float(np.min(eps)) < MIN_CELL_EPS:
            raise ParameterRegimeError(
                f"the Laplace cell masses need every eps_i >= {MIN_CELL_EPS:g} (the scale "
                f"2 / eps_i overflows below), got eps_i = {float(np.min(eps))!r}")
        scale = 2.0 / eps

        def mass(lo, hi, xx):
            return _mass_laplace(lo, hi, xx, scale)

        return symmetric_cell_masses(mass, x, window)
