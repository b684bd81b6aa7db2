"""Personalized baseline: "Echo of Neighbors" (registered ``liu23_personalized``, kind
``approximate``).

Source: Y. Liu, S. Zhao, L. Xiong, Y. Liu, H. Chen, "Echo of Neighbors: Privacy Amplification
for Personalized Private Federated Learning with Shuffle Model", AAAI 2023, arXiv 2304.05516
(v2), the closed-form amplification bound of their APES framework.  It transfers the FMT21
closed form (arXiv 2012.12803, Thm 3.1) to personalized budgets by replacing the expected clone
count n e^{-eps0} with the sum of per-user "echo" probabilities:

    eps = log( 1 + (e^{eps_1} - 1)/(e^{eps_1} + 1) ( 8 sqrt(log(4/delta) / S) + 8 / S ) ),
    valid for S >= 16 log(4/delta),

with the victim 1 the user with the largest eps_i and S = sum_{i != 1} p_i, where

    p_i = (1/n) sum_j (eps_i / eps_j) (1 - e^{-eps_j}) / (1 - e^{-eps_i}) e^{-max(eps_i, eps_j)}.

How the statement was pinned down.  The theorem's text could not be retrieved here.  The
formula above is the authors' own implementation of the AAAI bound (Y. Liu's public code for
arXiv 2407.18157, ``closedformanalysis_perS`` with ``probEoN``, marked "aaai version"), and it
reduces to FMT21's closed form with n - 1 users when all budgets are equal (p_i = e^{-eps0};
verified in tests/bounds/test_baselines.py).  The per-pair term comes from their "Neighbor
Divergence" of the Clip-Laplace mechanism (the (eps_i / eps_j) factor is the ratio of Laplace
scales), so it is specific to that randomizer.

Why kind ``approximate``.  (1) p_i averages the echo probability over all users j instead of
using the victim's own budget, which for heterogeneous budgets counts more clones than a worst
victim has; (2) the clone probability is derived for the Clip-Laplace mechanism only; (3) the
authors' follow-up (arXiv 2407.18157 v1, abstract) states that existing personalized analyses
"inaccurately capture the probability" of generating clones.  We therefore do not present it as
a guarantee; the result record carries ``echo_sum`` = S and ``fmt21_identical_s`` =
(n - 1) e^{-max eps_i}, the clone count a rigorous identical-budget reduction would use.

Code names: ``eps`` = eps_i (local), ``s`` = S, ``eps_v`` = eps_1 = max_i eps_i.  Pure LDP only
(``approx_ldp=False``; the authors' code ignores local deltas); O(n log n) by sorting.
Outside ``S >= 16 log(4/delta)`` the bound raises
:class:`~shuffledp.errors.ParameterRegimeError`; results are capped at max eps_i.

>>> from shuffledp import BudgetProfile
>>> p = BudgetProfile.identical(n=100_000, eps0=4.0)
>>> round(echo_sum(p), 3) == round(99_999 * math.exp(-4.0), 3)
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from shuffledp.bounds.base import Bound, BoundInfo
from shuffledp.bounds.registry import register_bound
from shuffledp.budgets import BudgetProfile
from shuffledp.errors import ParameterRegimeError
from shuffledp.families import budget_tiers

__all__ = ["echo_probabilities", "echo_sum", "liu23_eps", "liu23_delta", "BOUND"]

#: Smallest positive float: a delta that underflows is reported as this, never as 0.
_TINY = math.ulp(0.0)


def _g(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """(1 - e^{-x}) / x, with the limit 1 at x = 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        out = -np.expm1(-x) / x
    return np.where(x == 0.0, 1.0, out)


def _echo_tiers(e: NDArray[np.float64], c: NDArray[np.float64], n: int) -> NDArray[np.float64]:
    """p of each distinct budget ``e`` (increasing) held by ``c`` users: with the budgets
    sorted, the sum over j splits into the users with eps_j <= eps_i (factor e^{-eps_i}) and
    those with eps_j > eps_i (factor e^{-eps_j})."""
    g = _g(e)
    cum_g, cum_ge = np.cumsum(c * g), np.cumsum(c * g * np.exp(-e))
    above = cum_ge[-1] - cum_ge
    return (np.exp(-e) * cum_g + above) / (g * n)


def _eps_tiers(profile: BudgetProfile) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The distinct eps_i (increasing) and how many users hold each (as floats, a copy)."""
    values, counts, _ = budget_tiers(profile)
    return values, counts.astype(np.float64)


def echo_probabilities(profile: BudgetProfile) -> NDArray[np.float64]:
    """p_i = (1/n) sum_j (g(eps_j) / g(eps_i)) e^{-max(eps_i, eps_j)}, g(x) = (1-e^{-x})/x,
    per user (the per-user arrays: up to N_MAX_ARRAYS users).  O(n log n) (see
    :func:`_echo_tiers`).

    >>> from shuffledp import BudgetProfile
    >>> echo_probabilities(BudgetProfile.identical(n=3, eps0=0.0)).tolist()
    [1.0, 1.0, 1.0]
    """
    values, counts = _eps_tiers(profile)
    p = _echo_tiers(values, counts, profile.n)
    return p[np.searchsorted(values, profile.eps)]


def echo_sum(profile: BudgetProfile) -> float:
    """S = sum of p_i over every user except the victim (a user with the largest eps_i),
    computed on the budget tiers."""
    values, counts = _eps_tiers(profile)
    p = _echo_tiers(values, counts, profile.n)
    counts[-1] -= 1.0
    return float(np.dot(counts, p))


def _formula(eps_v: float, s: float, delta: float) -> float:
    inner = 8.0 * math.sqrt(math.log(4.0 / delta) / s) + 8.0 / s
    return math.log1p(math.tanh(eps_v / 2.0) * inner)


def liu23_eps(*, profile: BudgetProfile, delta: float) -> float:
    """eps(delta) of the Echo-of-Neighbors closed form, capped at max eps_i."""
    s = echo_sum(profile)
    if s < 16.0 * math.log(4.0 / delta):
        raise ParameterRegimeError(
            f"liu23_personalized requires S = sum_i p_i >= 16 log(4/delta) = "
            f"{16 * math.log(4 / delta):.4g}, got S = {s:.4g}"
        )
    return min(_formula(profile.eps_max, s, delta), profile.eps_max)


def liu23_delta(*, profile: BudgetProfile, eps: float) -> float:
    """delta(eps): the closed-form inverse, 1 where the formula certifies nothing."""
    eps_v = profile.eps_max
    if eps >= eps_v:
        return 0.0
    s = echo_sum(profile)
    th = math.tanh(eps_v / 2.0)
    if th <= 0.0 or s <= 0.0:  # eps_v underflows (subnormal budgets): no claim
        return 1.0
    a = math.expm1(eps) / th - 8.0 / s
    if a <= 0.0:
        return 1.0
    d = 4.0 * math.exp(-s * a * a / 64.0)
    d = max(d, 4.0 * math.exp(-s / 16.0))  # the smallest delta of the region S >= 16 log(4/delta)
    return min(max(d, _TINY), 1.0)


def _diag(*, profile: BudgetProfile, eps: float, delta: float) -> dict[str, Any]:
    return {
        "echo_sum": echo_sum(profile),
        "fmt21_identical_s": (profile.n - 1) * math.exp(-profile.eps_max),
    }


BOUND = register_bound(
    Bound(
        info=BoundInfo(
            name="liu23_personalized",
            kind="approximate",
            title="Liu et al. 2023 Echo of Neighbors (personalized clones)",
            citation=(
                "Liu, Zhao, Xiong, Liu, Chen, AAAI 2023, arXiv 2304.05516, APES closed form "
                "(as implemented by the authors)"
            ),
            personalized=True,
            approx_ldp=False,
            randomizers=("clip_laplace",),
            options={},
            coverage_note="approximation: no guarantee (derived for clipped Laplace)",
        ),
        delta_fn=liu23_delta,
        eps_fn=liu23_eps,
        diagnostics_fn=_diag,
    )
)
