"""Optimized unary encoding (Wang et al., USENIX Security 2017), family ``oue:d``.

User j one-hot encodes its category in d bits and reports each bit flipped independently: the
true 1 is kept with probability 1/2, every 0 becomes 1 with probability q_j = 1/(e^{eps_j} + 1),
which makes the report eps_j-LDP.  The clone mass against a victim with budget eps_v
(docs/theory.md 6.6) is a minimum over output patterns, :func:`oue_box`; it is not monotone in
the victim's budget (``victim_order = "general"``), so lower bounds over ranges use the box
bound.  Variation-ratio row (derived, docs/theory.md 11.3): beta = tanh(eps0/2)/2,
alpha = 1/(2 (1 + e^eps0)), gamma = 1/2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from shuffledp._lazy import lazy_module
from shuffledp.families.base import Family, UserClasses, VariationRatio, VictimRange
from shuffledp.families.blanket import BlanketCase, atoms, difference_error
from shuffledp.families.oue_blanket import (
    RANGE_TINY,
    WINDOW_TAILS,
    binomial_range,
    oue_window_case,
)
from shuffledp.families.registry import register_family
from shuffledp.families.windows import WEIGHTS, U, Window, WindowConfig, grid

special = lazy_module("scipy.special")

#: ``window_lower``'s windows on the number of ones (:meth:`OUE.profile_windows`): the
#: victim's mean count plus (or less) these many standard deviations; the first alone when
#: the others hold more than WEIGHT_SDS_MAX_TIERS distinct budgets (each window costs one
#: convolution over them).  Measured (d = 100, delta = 1e-6): 1% at 4 among 0.5, n = 10^4,
#: 1.648 with (0, 1, 2, 4), 1.646 with (0, 2), 1.550 with (0,); U[0.5, 2] at 10^5 users,
#: 0.0323 with each, in 3.0 s, 1.8 s and 1.0 s; at 10^6 users 0.00917 in 13 s with (0,).
WEIGHT_SDS = (0.0, 2.0)
WEIGHT_SDS_MAX_TIERS = 4096
#: Width of OUE's victim groups on the scale of :meth:`OUE.blanket_group_levels`.
GROUP_DZ = 0.03

__all__ = ["OUE", "oue_box"]


def oue_box(v_lo: ArrayLike, v_hi: ArrayLike, u_lo: ArrayLike, u_hi: ArrayLike,
             d: int) -> NDArray[np.float64]:
    """Clone mass of OUE with d bits: victim budget a (q_v = 1/(e^a+1)), user budget b.

    Victim pair (0, 1); an output y is described by its bits y_0, y_1 and the number s of
    ones among the other d - 2 bits.  inf_x R_j(x)(y) keeps the true bit (prob 1/2) at a 0 of
    y when y has one, so with f(b) = q if the bit is 1 else 1 - q and
    A(s) = (q_j/q_v)^s ((1-q_j)/(1-q_v))^{d-2-s} the ratio 2 inf_x R_j / (P0 + P1) is

        (0,0): (1-q_j)/(1-q_v) A(s);       (1,0), (0,1): 2 q_j A(s);
        (1,1), s < d-2: q_j^2 / ((1-q_j) q_v) A(s);     (1,1), s = d-2: (q_j/q_v) A(d-2),

    each monotone in s, so the minimum over patterns is at s in {0, d-3, d-2}.  Computed in
    log space (the masses underflow to 0 for large d across different budgets).

    Box bound (victim budget anywhere in [v_lo, v_hi], user budget in [u_lo, u_hi]): every
    candidate's log is  c + x log q_j + y log(1-q_j) - z log q_v - w log(1-q_v)  with x, y, z,
    w >= 0 (read off the list above: the exponents of q_j and 1 - q_j are s, 1 + s, 2 + s,
    1 + m and 1 + m - s, m - s, m - s - 1, 0; those of q_v and 1 - q_v enter with a minus
    sign).  log q falls and log(1-q) rises with the budget, so each candidate is smallest with
    q_v at v_lo, 1 - q_v at v_hi, q_j at u_hi and 1 - q_j at u_lo: evaluated there, the minimum
    over candidates is a lower bound on the mass over the whole box (docs/theory.md 6.6).  With
    v_lo = v_hi = a and u_lo = u_hi = b it is the mass itself.
    """
    lq_j = -np.logaddexp(0.0, np.asarray(u_hi, dtype=np.float64))  # log q_j, at u_hi
    lq1_j = -np.logaddexp(0.0, -np.asarray(u_lo, dtype=np.float64))  # log(1 - q_j), at u_lo
    lq_v = -np.logaddexp(0.0, np.asarray(v_lo, dtype=np.float64))  # log q_v, at v_lo
    lq1_v = -np.logaddexp(0.0, -np.asarray(v_hi, dtype=np.float64))  # log(1 - q_v), at v_hi
    m = d - 2

    def log_a(s: int) -> NDArray[np.float64]:
        return s * (lq_j - lq_v) + (m - s) * (lq1_j - lq1_v)

    ends = [0, m] if m >= 0 else []
    cands = []
    for s in ends:
        cands.append(lq1_j - lq1_v + log_a(s))  # (0, 0)
        cands.append(math.log(2.0) + lq_j + log_a(s))  # (1, 0)
    if m >= 1:  # (1, 1) with a zero among the other bits: s in [0, m - 1]
        for s in (0, m - 1):
            cands.append(2.0 * lq_j - lq1_j - lq_v + log_a(s))
    cands.append(lq_j - lq_v + log_a(m))  # (1, 1), every bit 1
    return np.minimum(np.exp(np.min(np.stack(cands), axis=0)), 1.0)


@register_family
@dataclass(frozen=True)
class OUE(Family):
    """Optimized unary encoding with ``k`` = d bits (module docstring).

    >>> f = OUE(10)
    >>> f.spec, f.victim_order
    ('oue:10', 'general')
    """

    name: ClassVar[str] = "oue"
    title: ClassVar[str] = "optimized unary encoding, d categories"
    victim_order: ClassVar[str] = "general"
    needs_k: ClassVar[bool] = True
    aware: ClassVar[bool] = True
    binnable: ClassVar[bool] = True
    blanket_groups: ClassVar[str] = "tiers_then_ranges"
    blanket_union_ratio: ClassVar[float] = 1.0  # (Family.blanket_union_ratio)

    def blanket_group_levels(self, eps: NDArray[np.float64]) -> NDArray[np.float64]:
        """``2 sqrt(d) arcsin(sqrt(q)) / GROUP_DZ``: the reports' number of ones has about unit
        standard deviation on the scale ``2 sqrt(d) arcsin(sqrt(q))`` (the binomial's
        variance-stabilizing map), and a group spanning ``dz`` on it costs its atoms about a
        factor ``e^{dz c / 2}`` at c standard deviations (docs/theory.md 15.4 "OUE across
        budgets")."""
        q = special.expit(-np.asarray(eps, dtype=np.float64))
        return 2.0 * math.sqrt(float(self.k)) * np.arcsin(np.sqrt(q)) / GROUP_DZ  # type: ignore[arg-type]

    def blanket_cases(self, eps: float, group: VictimRange,
                      users: UserClasses) -> list[BlanketCase]:
        """The blanket of OUE at the victim's budget (docs/theory.md 15.4): omega the
        normalized infimum ``inf_x R(x)(y) = pi(y) / (2 c(y))`` (pi the law of d independent
        Bernoulli(q) bits, q = 1 / (e^{eps_v} + 1), c(y) = 1 - q if y has a zero bit, q
        otherwise), of mass ``gamma = (1 - q^d) / (2 (1 - q)) + q^{d-1} / 2``.  With the
        victim's categories 0 and 1, ``P_b / omega`` is gamma e^{eps_v} where bit b is 1 and
        some bit is 0, and gamma elsewhere, so l takes four values whose omega-masses depend
        on (y_0, y_1) and on whether another bit is 0; every pair of categories alike by
        symmetry.  Users with the victim's budget have mass gamma; users with another budget
        are given 0 in this choice (a single-budget group's choice 0).  The other choices
        give every user a mass (:meth:`_window_cases`), and cover groups of a range of
        budgets."""
        d = int(self.k)  # type: ignore[arg-type]
        cases = self._window_cases(eps, group, users, d)
        if group.eps_lo != group.eps_hi:
            return cases
        return [self._cube_case(eps, group, users, d)] + cases

    def _window_cases(self, eps: float, group: VictimRange, users: UserClasses,
                      d: int) -> list[BlanketCase]:
        """The choices across budgets (:mod:`~shuffledp.families.oue_blanket`, docs/theory.md
        15.4 "OUE across budgets"): the reference budget at the middle of the group's q range,
        one choice per window tail of ``WINDOW_TAILS``."""
        q_mid = 0.5 * (float(special.expit(-group.eps_lo)) + float(special.expit(-group.eps_hi)))
        r = math.log1p(-q_mid) - math.log(q_mid)
        out = []
        for i, tail in enumerate(WINDOW_TAILS):
            cells, masses, charge = oue_window_case(
                d, eps, group.eps_lo, group.eps_hi, r, tail, np.asarray(users.eps_a),
                np.asarray(users.eps_b), np.asarray(users.delta))
            out.append(BlanketCase(cells, masses, f"omega the infimum at {r:.6g}, window "
                                   f"tail {tail:g}", choice=i + 1, charge=charge))
        return out

    def _cube_case(self, eps: float, group: VictimRange, users: UserClasses,
                   d: int) -> BlanketCase:
        v = group.eps_hi
        e_v, e = math.exp(v), math.exp(eps)
        q = float(special.expit(-v))
        q1 = float(special.expit(v))  # 1 - q
        qd1 = q ** (d - 1)
        gamma = -math.expm1(d * math.log(q)) / (2.0 * q1) + qd1 / 2.0
        both = q * q * -math.expm1((d - 2) * math.log(q)) / (2.0 * q1) if d > 2 else 0.0
        vals = [gamma * (1.0 - e), gamma * (e_v - e), gamma * (1.0 - e * e_v),
                gamma * e_v * (1.0 - e)]
        mass = [(q1 / 2.0 + qd1 / 2.0) / gamma, q / (2.0 * gamma), q / (2.0 * gamma),
                both / gamma]
        same = (np.asarray(users.eps_a) == v) & (np.asarray(users.eps_b) == v)
        masses = np.where(same, gamma * (1.0 - np.asarray(users.delta)), 0.0)
        return BlanketCase(atoms(vals, mass, 64.0 * d * 1.2e-16,
                                 difference_error(64.0 * d * 1.2e-16, eps, gamma * e_v)), masses,
                           "omega the normalized infimum of OUE at the victim's budget")

    def _clone_mass(self, a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
        return oue_box(a, a, b, b, int(self.k))  # type: ignore[arg-type]

    def window_configs(self, eps_v: float, delta_v: float) -> list[WindowConfig]:
        """``window_lower``'s grid (docs/theory.md 13.2): the victim at category 0 or 1, the
        others at 0 or (d >= 3) at a third category 2; the analyst keeps only bits 0 and 1 of
        each report (a post-processing), ``W_L`` = (1, 0) and ``W_R`` = (0, 1)."""
        stars = (0.0, 2.0) if int(self.k) >= 3 else (0.0,)  # type: ignore[arg-type]
        return grid(0.0, 1.0, stars, [Window("bits 0, 1")], WEIGHTS)

    def profile_windows(self, eps_v: float, delta_v: float,
                        eps_others: NDArray[np.float64]) -> list[WindowConfig]:
        """Windows that also keep the number of ones (docs/theory.md 13.2, "OUE's number of
        ones"): it does not depend on the input, but a user at budget e has about ``d q_e``
        ones, so users of budgets far from the victim's rarely reach the victim's count.
        ``W_L`` = bits (1, 0) and ``W_R`` = (0, 1) with at most ``t`` ones, ``t`` the victim's
        mean count plus ``WEIGHT_SDS`` standard deviations, when some other user has a smaller
        budget (more ones); with at least the mean less those, when some has a larger one;
        none when every other user has the victim's budget."""
        d = int(self.k)  # type: ignore[arg-type]
        others = np.asarray(eps_others, dtype=np.float64)
        if d < 3 or others.size == 0:
            return []
        q = float(special.expit(-eps_v))
        mean = 0.5 + (d - 1) * q
        sd = math.sqrt(0.25 + (d - 1) * q * (1.0 - q))
        windows = []
        sds = WEIGHT_SDS if np.unique(others).size <= WEIGHT_SDS_MAX_TIERS else WEIGHT_SDS[:1]
        if bool((others < eps_v).any()):  # more ones: counts above the victim's are theirs
            for c in sds:
                t = min(int(math.ceil(mean + c * sd)), d - 1)
                windows.append(Window(f"bits 0, 1, at most {t} ones", 1.0, float(t)))
        if bool((others > eps_v).any()):
            for c in sds:
                t = max(int(math.floor(mean - c * sd)), 2)
                windows.append(Window(f"bits 0, 1, at least {t} ones", float(t), float(d - 1)))
        windows = list(dict.fromkeys(windows))
        return grid(0.0, 1.0, (0.0, 2.0), windows, ((1, 1),))

    def cell_masses(self, x: float, eps: NDArray[np.float64], delta: NDArray[np.float64],
                    window: Window) -> tuple[NDArray[np.float64], ...]:
        if window.hi > 0.0:
            return self._weight_cell_masses(x, eps, window)
        return self._bit_cell_masses(x, eps)

    def _weight_cell_masses(self, x: float, eps: NDArray[np.float64],
                            window: Window) -> tuple[NDArray[np.float64], ...]:
        """The masses of :meth:`profile_windows`' windows: bits (1, 0) (``W_L``) and (0, 1)
        (``W_R``) with ``lo <= |y| <= hi`` ones.  Category 0: ``W_L`` has ``(1 - q) / 2``
        times ``Pr[lo - 1 <= Bin(d - 2, q) <= hi - 1]`` (the other d - 2 bits), ``W_R`` ``q / 2``
        times the same; category 1 the mirror; another category ``q (1 - q)`` times the
        chance of ``lo - 1`` to ``hi - 1`` ones among d - 2 bits one of which is 1 with
        probability 1/2, i.e. the mean of the ranges ``[lo - 1, hi - 1]`` and ``[lo - 2,
        hi - 2]`` of Bin(d - 3, q).  The rest: equal bits 0, 1 plus unequal bits outside the
        range, both sums of terms (:func:`~shuffledp.families.oue_blanket.binomial_range`)."""
        d = int(self.k)  # type: ignore[arg-type]
        lo, hi = int(window.lo), int(window.hi)
        eps = np.asarray(eps, dtype=np.float64)
        q = special.expit(-eps)
        q1 = special.expit(eps)
        if x in (0, 1):
            (inside,), (outside,), rel_r = binomial_range(d - 2, eps, [(lo - 1, hi - 1)])
            big, small = 0.5 * q1 * inside, 0.5 * q * inside
            a, b = (big, small) if x == 0 else (small, big)
            o = 0.5 + 0.5 * outside  # equal bits (1/2) and unequal ones outside the range
        else:
            (in1, in2), (out1, out2), rel_r = binomial_range(
                d - 3, eps, [(lo - 1, hi - 1), (lo - 2, hi - 2)])
            inside = 0.5 * (in1 + in2)
            a = b = q * q1 * inside
            o = q * q + q1 * q1 + 2.0 * q * q1 * 0.5 * (out1 + out2)
        rel = rel_r + 32.0 * U
        tiny = 2.0 * RANGE_TINY
        return (np.minimum(a, 1.0), np.minimum(o, 1.0), np.minimum(b, 1.0), rel * a + tiny,
                rel * o + tiny, rel * b + tiny)

    def _bit_cell_masses(self, x: float, eps: NDArray[np.float64]
                         ) -> tuple[NDArray[np.float64], ...]:
        """Masses of bits (0, 1) = (1, 0) (``W_L``), (0, 1) (``W_R``) and the rest (equal bits)
        for a user at category ``x``: the true bit is 1 with probability 1/2, every other bit
        with q = 1 / (e^eps + 1), independently.  Category 0: (1 - q)/2, 1/2, q/2; category 1:
        the mirror; any other category: q (1 - q), q^2 + (1 - q)^2, q (1 - q).  q and 1 - q
        come from ``expit`` (a few units of round-off each), the rest is products and one sum
        of non-negative terms (the error bound ``32 u`` relative covers them)."""
        q = special.expit(-eps)
        q1 = special.expit(eps)  # 1 - q, not formed by subtraction
        if x == 0:
            a, o, b = 0.5 * q1, np.full_like(q, 0.5), 0.5 * q
        elif x == 1:
            a, o, b = 0.5 * q, np.full_like(q, 0.5), 0.5 * q1
        else:
            a = b = q * q1
            o = q * q + q1 * q1
        rel = 32.0 * U
        # a true mass is at most 1: clipping only moves a computed one towards it
        return (np.minimum(a, 1.0), np.minimum(o, 1.0), np.minimum(b, 1.0), rel * a, rel * o,
                rel * b)

    def group_clone_mass(self, eps_lo: float, eps_hi: float, eps_user: ArrayLike, *,
                         eps_user_hi: ArrayLike | None = None) -> NDArray[np.float64]:
        """The box bound of :func:`oue_box`: q_v at ``eps_lo``, 1 - q_v at ``eps_hi``, and with
        ``eps_user_hi`` also over every user budget in ``[eps_user, eps_user_hi]`` (smaller
        than the minimum over the box; docs/theory.md 6.6)."""
        lo, hi = float(eps_lo), float(eps_hi)
        if not (0.0 <= lo <= hi):
            raise ValueError(f"need 0 <= eps_lo <= eps_hi, got eps_lo = {lo!r}, eps_hi = {hi!r}")
        b = np.asarray(eps_user, dtype=np.float64)
        b_hi = b if eps_user_hi is None else np.asarray(eps_user_hi, dtype=np.float64)
        if b_hi.shape != b.shape or (b_hi < b).any():
            raise ValueError("eps_user_hi must have the shape of eps_user and be >= it")
        return oue_box(lo, hi, b, b_hi, int(self.k))  # type: ignore[arg-type]

    def _variation_ratio(self, eps0: float) -> VariationRatio:
        """OUE (any d >= 2): beta = tanh(eps0/2)/2, alpha = 1/(2 (1 + e^eps0)), gamma = 1/2
        (derived in docs/theory.md 11.3; not in the paper's table)."""
        return VariationRatio(eps0, eps0, math.tanh(eps0 / 2.0) / 2.0,
                              float(special.expit(-eps0)) / 2.0, 0.5,
                              "derived in docs/theory.md 11.3 from the definition of OUE")
