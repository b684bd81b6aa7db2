"""Personalized baseline: the HPS bound of Liu et al. 2024 for the Laplace mechanism
(registered ``liu24``, kind ``approximate``).

Source: Y. Liu, Y. Liu, L. Xiong, Y. Gu, H. Chen, "Enhanced Privacy Bound for Shuffle Model
with Personalized Privacy", arXiv 2407.18157 (v1): clone probabilities "by hypothesis testing"
and an f-DP analysis of the clone counts, delta(eps) of their Corollary 4.3.  The statement
could not be retrieved here; the formulas below are those of the authors' code (GitHub
yixuanLL/HPS, commit ddd02eb, ``computeamplification_HP_fDP.py``), rederived and restated.

Setting (our convention, docs/theory.md 6.4): user i runs ``M_i(x) = x + Lap(2/eps_i)`` on
[-1, 1].  The victim v is a user with the largest budget, ``eps_v = max_i eps_i``, with the
neighbouring inputs ``x^0 = -1`` and ``x^1 = +1``; every other user holds ``x_i = -1`` (the
authors' choice: the victim's first input).  With f_0, f_1 the densities of M_v(x^0), M_v(x^1)
and f_i that of M_i(x_i):

    p_{i,b} = Pr[M_i(x_i) in R_b],   R_b = {y : f_b(y) > f_{1-b}(y) and f_b(y) > f_i(y)},
    p_i     = 2 min(p_{i,0}, p_{i,1}),      S = sum_{i != v} p_i,
    w       = Pr[M_v(x^1) < 0] = exp(-eps_v / 2) / 2.

Laplace crossings give the regions in closed form (rho = eps_i / eps_v < 1, L = log(1/rho)):
R_0 = (-1 - r, min(-1 + r, 0)) with r = 2 L / (eps_v - eps_i), and
R_1 = (max(0, (eps_v - eps_i - 2L) / (eps_v + eps_i)), (2L + eps_v + eps_i) / (eps_v - eps_i)).
For eps_i = eps_v, R_0 is empty (f_0 = f_i); the authors then let p_{i,0} = 1 (the side does
not constrain), so p_i = 2 p_{i,1} = exp(-eps_v / 2); we keep that convention.

Privacy profile.  The clone count C (a Poisson-binomial of the p_i) is replaced by
``Bin(n, S/n)``; given C = c, A ~ Bin(c, 1/2) and the count K of "x^1-like" reports is A + 1
under Q and A + Bernoulli(2w) under P.  The per-c likelihood ratio
``2w + (1 - 2w)(c + 1 - k)/k`` is decreasing in k, so the optimal region is
``{k <= m_c}`` with ``m_c = floor((c + 1)/(1 + tau))``, ``tau = (e^eps - 2w)/(1 - 2w)``, and

    delta(eps) = (1 - 2w) sum_c Pr[C = c] ( F_c(m_c) - tau F_c(m_c - 1) ),

``F_c`` the cdf of Bin(c, 1/2), ``F_c(-1) = 0``.  This is the authors' expression
``(2w - e^eps) F_left + (1 - 2w) F_right`` with their threshold ``t = 1/tau``.

Differences from the authors' code, measured on the reference profiles of
tests/bounds/test_liu24.py (n = 10^3 to 10^5): our eps is 0.11% to 0.35% below theirs.

* They locate R_0, R_1 on a grid of 10^4 cells on [-20, 20.1] for data in [0, C] with C = 0.1
  and scale C/eps_i (the affine image of our domain and scale, y -> 2y/C - 1), which lowers S
  by 0.4% to 0.7%; we use the exact crossings.  This is the whole gap: fed their S, our eps is
  0.01% above theirs.
* Their ``t`` solves an aggregated equation by bisection; ``1/tau`` is the exact per-c
  optimum, so at equal S our delta is at least theirs.
* They sum c over 0..n-2 and read ``F_c(m - 1)`` at ``max(m - 1, 0)`` (``2^{-c}`` instead of
  0 when m = 0, which makes terms negative when e^eps is large against c); we use the whole
  support, cut where each tail is below 1e-40, and add the cut mass times (1 - 2w) to delta.
* Their eps search runs on [0, eps_v]; we likewise return delta = 0 for eps >= eps_v (the
  victim's pure local guarantee), so eps(delta) <= max eps_i.

Why ``approximate``.  No proof is available to us; the clone decomposition is heuristic (the
mixture weight 2w = e^{-eps_v/2} exceeds the e^{-eps_v} that the pure-DP decomposition of
M_v(x^0) into M_v(x^1) allows), the other users' inputs are fixed at x^0 rather than chosen
adversarially, and the Poisson-binomial clone count is replaced by a binomial of equal mean.

Code names: ``eps_user`` = eps_i, ``eps_victim`` = eps_v, ``clone_sum`` = S,
``victim_weight`` = w, ``tau`` = 1/t.  Pure LDP only (``approx_ldp=False``); covers no
randomizer as a guarantee.  O(n log n) for the budget tiers, then O(sqrt(S)) per delta(eps).

>>> from shuffledp import BudgetProfile
>>> p = BudgetProfile.identical(n=1000, eps0=1.0)
>>> round(clone_sum(p) / 999, 6) == round(math.exp(-0.5), 6)
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from shuffledp._lazy import lazy_module
from shuffledp.bounds.base import INVERSION_ATOL, INVERSION_RTOL, Bound, BoundInfo, Coverage
from shuffledp.bounds.registry import register_bound
from shuffledp.budgets import BudgetProfile
from shuffledp.families import Family, Laplace, budget_tiers
from shuffledp.limits import EPS_LOCAL_MAX, LOCAL_EPS_RULE
from shuffledp.numerics import eps_from_delta
from shuffledp.poisson_binomial import binom_cdf, binomial_window
from shuffledp.validation import as_real_array, check_array_range, check_real

special = lazy_module("scipy.special")

__all__ = [
    "region_masses",
    "clone_probability",
    "victim_weight",
    "clone_sum",
    "liu24_delta",
    "liu24_eps",
    "BOUND",
]

#: Each tail of Bin(n, S/n) left out of the sum is below TOL / 2 (its mass is added back).
TOL = 1e-40
#: Windows longer than BLOCK_MIN counts are summed on about BLOCKS blocks (:func:`_window_sum`).
BLOCK_MIN = 65_536
BLOCKS = 16_384
BLOCK_RTOL = 1e-6
#: Smallest positive float: a delta that underflows is reported as this, never as 0.
_TINY = math.ulp(0.0)


def region_masses(
    eps_user: ArrayLike, eps_victim: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(p_{i,0}, p_{i,1})``: the masses of M_i(-1) on R_0 and R_1 (module docstring), for
    each eps_i of ``eps_user`` (each <= ``eps_victim``); vectorised.

    With g = eps_i L / (eps_v - eps_i) (= eps_i r / 2):
    ``p_{i,0} = (1 - e^{-g})/2 + (1 - e^{-min(g, eps_i/2)})/2`` and
    ``p_{i,1} = (e^{-alpha} - e^{-beta})/2`` with ``alpha = max(eps_i/2, eps_i (eps_v - L) /
    (eps_v + eps_i))``, ``beta = eps_i (eps_v + L) / (eps_v - eps_i)``.  A user with eps_i = 0
    has masses 0 (the limit); eps_i = eps_v gives ``(1, e^{-eps_v/2}/2)`` (module docstring).

    >>> p0, p1 = region_masses([1.0], 1.0)
    >>> float(p0[0]), round(float(p1[0]), 12) == round(math.exp(-0.5) / 2, 12)
    (1.0, True)
    >>> region_masses([2.0], 1.0)
    Traceback (most recent call last):
    ...
    ValueError: eps_user must be in [0, 1] (at most eps_victim), got 2.0
    """
    a = _check_victim(eps_victim)
    b = as_real_array(eps_user, "eps_user")
    check_array_range(b, "eps_user", low=0.0, high=a,
                      rule=f"in [0, {a:g}] (at most eps_victim)")
    d = a - b
    equal = (b > 0.0) & (d == 0.0)
    p0 = np.where(equal, 1.0, 0.0)  # eps_i = eps_v: R_0 is empty, the side does not constrain
    p1 = np.where(equal, 0.5 * math.exp(-0.5 * a), 0.0)  # eps_i = 0: the limit 0
    strict = (b > 0.0) & (d > 0.0)
    if not strict.any():  # also eps_v = 0
        return p0, p1
    bs, ds = b[strict], d[strict]
    # L = log(eps_v / eps_i), accurate both near 0 and for a ratio beyond the float range
    with np.errstate(divide="ignore", over="ignore"):  # the branch not taken
        log_ratio = np.where(ds < 0.5 * bs, np.log1p(ds / bs), math.log(a) - np.log(bs))
    g = bs * log_ratio / ds
    p0[strict] = -0.5 * (np.expm1(-g) + np.expm1(-np.minimum(g, 0.5 * bs)))
    alpha = np.maximum(0.5 * bs, bs * (a - log_ratio) / (a + bs))
    beta = bs * (a + log_ratio) / ds
    p1[strict] = -0.5 * np.exp(-alpha) * np.expm1(alpha - beta)
    return p0, p1


def clone_probability(eps_user: ArrayLike, eps_victim: float) -> NDArray[np.float64]:
    """p_i = 2 min(p_{i,0}, p_{i,1}) (:func:`region_masses`); vectorised.

    >>> round(float(clone_probability([2.0], 2.0)[0]), 12) == round(math.exp(-1.0), 12)
    True
    """
    p0, p1 = region_masses(eps_user, eps_victim)
    return 2.0 * np.minimum(p0, p1)


def victim_weight(eps_victim: float) -> float:
    """w = Pr[M_v(x^1) < 0] = e^{-eps_v/2} / 2."""
    return 0.5 * math.exp(-0.5 * _check_victim(eps_victim))


def _check_victim(eps_victim: object) -> float:
    return check_real(eps_victim, "eps_victim", low=0.0, high=EPS_LOCAL_MAX, rule=LOCAL_EPS_RULE)


def clone_sum(profile: BudgetProfile) -> float:
    """S = sum over every user but the victim (one user with the largest eps_i) of p_i,
    computed once per distinct budget (:func:`shuffledp.families.budget_tiers`)."""
    values, counts, _ = budget_tiers(profile)
    others = counts.astype(np.float64)
    others[-1] -= 1.0  # the victim: one user of the largest budget
    return float(np.dot(others, clone_probability(values, float(values[-1]))))


@dataclass(frozen=True)
class _Prepared:
    """What delta(eps) needs of a profile: eps_v, 1 - 2w, and the truncated Bin(n, S/n)."""

    eps_v: float
    one_minus_2w: float
    counts: NDArray[np.int64]  # the values c of the window
    pmf: NDArray[np.float64]  # Pr[C = c] on the window
    dropped: float  # the mass of Bin(n, S/n) outside the window


def _prepare(profile: BudgetProfile) -> _Prepared:
    eps_v = profile.eps_max
    s = clone_sum(profile)
    n = profile.n
    window = binomial_window(n, min(s / n, 1.0), tol=TOL)
    return _Prepared(
        eps_v=eps_v,
        one_minus_2w=-math.expm1(-0.5 * eps_v),
        counts=window.support,
        pmf=window.pmf,
        dropped=float(window.dropped_mass),
    )


def _delta(prep: _Prepared, eps: float) -> float:
    if eps >= prep.eps_v:  # the victim is eps_v-LDP (also eps_v = 0)
        return 0.0
    if prep.one_minus_2w <= 0.0:  # eps_v below 2 ulp(0): delta < eps_v / 2 underflows
        return _TINY
    tau = 1.0 + math.expm1(eps) / prep.one_minus_2w

    def per_c(c: NDArray[np.int64]) -> NDArray[np.float64]:
        m = np.floor((c + 1) / (1.0 + tau)).astype(np.int64)
        f_m = binom_cdf(m, c, 0.5)  # Boost's cdf (cephes' bdtr is wrong by % at c ~ 10^7)
        f_below = binom_cdf(m - 1, c, 0.5)  # 0 for m = 0
        return np.maximum(f_m - tau * f_below, 0.0)  # >= 0: the optimal region of each c

    d = prep.one_minus_2w * (_window_sum(prep, per_c) + prep.dropped)
    return min(max(d, _TINY), 1.0)


def _window_sum(prep: _Prepared, per_c: Callable[[NDArray[np.int64]], NDArray[np.float64]]
                ) -> float:
    """sum_c Pr[C = c] per_c(c) over the window.  Above :data:`BLOCK_MIN` counts (about
    5e7 users) on blocks of consecutive c, each read at its first count (the divergence of a
    pair with c clones does not increase with c: one more clone is independent noise on both
    sides); kept when the blocks read at their last count differ by at most
    :data:`BLOCK_RTOL` (relative), else with a finer stride, down to every c."""
    c, w = prep.counts, prep.pmf
    stride = -(-c.size // BLOCKS) if c.size > BLOCK_MIN else 1
    while stride > 1:
        starts = np.arange(0, c.size, stride)
        ends = np.append(starts[1:], c.size - 1)
        pts = np.union1d(starts, ends)
        vals = per_c(c[pts])
        mass = np.add.reduceat(w, starts)
        high = float(np.dot(mass, vals[np.searchsorted(pts, starts)]))
        low = float(np.dot(mass, vals[np.searchsorted(pts, ends)]))
        if high - low <= BLOCK_RTOL * high:
            return high
        stride //= 4
    return float(np.dot(w, per_c(c)))


def liu24_delta(*, profile: BudgetProfile, eps: float) -> float:
    """delta(eps) of the HPS profile (module docstring); 0 for eps >= max eps_i."""
    return _delta(_prepare(profile), float(eps))


def liu24_eps(*, profile: BudgetProfile, delta: float) -> float:
    """eps(delta) by the shared inversion of :func:`liu24_delta` (upper end of the final
    bracket, as every bound of the registry); at most max eps_i."""
    prep = _prepare(profile)
    if prep.eps_v <= 0.0:
        return 0.0
    return eps_from_delta(
        lambda e: _delta(prep, e),
        float(delta),
        side="upper",
        eps_hi=prep.eps_v,
        eps_max=prep.eps_v,
        rtol=INVERSION_RTOL,
        atol=INVERSION_ATOL,
    )


def _covers(*, family: Family, profile: BudgetProfile) -> Coverage:
    if isinstance(family, Laplace):
        return Coverage(False, "liu24 is an approximation for the Laplace mechanism (the family "
                               "it is derived for): not a guarantee")
    return Coverage(False, f"liu24 is derived for the Laplace mechanism only, not {family}, and "
                           "is an approximation: not a guarantee")


def _diagnostics(*, profile: BudgetProfile, eps: float, delta: float) -> dict[str, Any]:
    return {
        "clone_sum": clone_sum(profile),
        "victim_weight": victim_weight(profile.eps_max),
    }


BOUND = register_bound(
    Bound(
        info=BoundInfo(
            name="liu24",
            kind="approximate",
            title="Liu et al. 2024 HPS, Laplace (binomial clone-count approximation)",
            citation=(
                "Liu, Liu, Xiong, Gu, Chen, arXiv 2407.18157 (v1), Corollary 4.3 with the "
                "Laplace clone probabilities (as implemented by the authors)"
            ),
            personalized=True,
            approx_ldp=False,
            randomizers=("laplace",),
            options={},
            coverage_note="approximation: no guarantee (derived for the Laplace mechanism)",
        ),
        delta_fn=liu24_delta,
        eps_fn=liu24_eps,
        diagnostics_fn=_diagnostics,
        covers_fn=_covers,
    )
)
