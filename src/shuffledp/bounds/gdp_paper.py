"""The paper's bound: shuffled personalized LDP is approximately mu-GDP (registered ``gdp``).

Source: E. Chen, Y. Cao, Y. Ge, "A Generalized Shuffle Framework for Privacy Amplification:
Strengthening Privacy Guarantees and Enhancing Utility", AAAI 2024, arXiv 2312.14388 (v1),
abstract and main theorem: the shuffled output of ``(eps_i, delta_i)``-PLDP randomizers
satisfies (approximately) mu-GDP with

    p_i = (1 - delta_i) / (1 + e^{eps_i}),     mu = sqrt( 2 / ( sum_i p_i - max_i p_i ) ).

Code names: ``clone_probability`` = p_i, ``mu`` = mu, ``expected_clones`` = sum_{j != v} 2 p_j
(the expected number of users that "clone" the victim, where v is the user with the largest
p_i, which is the worst victim for this formula).

Where it comes from.  Every other user j independently produces, with probability p_j, a
report distributed as the victim's report on input 0, with probability p_j as on input 1,
otherwise something uninformative.  With N0, N1 the clone counts, the analyst must tell
(N0 + 1, N1) from (N0, N1 + 1); N0 - N1 has variance 2 sum_{j != v} p_j and the hypotheses
differ by 2 in mean, so the central limit theorem gives mu = 2 / sqrt(2 sum_{j != v} p_j).

**This is an approximation, not a guarantee.**  The central-limit step has no finite-n error
term, and at few expected clones the formula claims *less* privacy loss than shuffled binary
randomized response actually has (compare with the ``rr_exact`` lower bound).  The result
record therefore carries ``expected_clones`` and ``clt_ok``.

Threshold for ``clt_ok``.  N0 - N1 is symmetric, so the first Edgeworth correction to its
Gaussian tail is the kurtosis term, of relative size about ``z^4 / (24 M)`` at ``z`` standard
deviations, with ``M`` the expected clone count (the excess kurtosis of N0 - N1 is about 1/M).
The deviations that matter at target ``delta`` are ``z = sqrt(2 log(1/delta))``.  We set
``clt_ok = M >= 10 z^4 / 24``, i.e. the leading correction is below 10%.  This is a heuristic
flag, not a proof; the definitive check is a comparison with a rigorous or exact bound.

Variant.  ``clone_mass="doubled"`` uses ``2 (1 - delta_i) / (1 + e^{eps_i})`` inside the
sum, as a third-party reimplementation does (mu smaller by about sqrt 2).  It is not the
paper's formula and is offered only for comparison; the default is ``"paper"``.

>>> from shuffledp import BudgetProfile
>>> p = BudgetProfile.identical(n=100_000, eps0=4.0)
>>> round(paper_mu(p), 6)
0.033346
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from shuffledp.bounds.base import Bound, BoundInfo
from shuffledp.bounds.registry import register_bound
from shuffledp.budgets import BudgetProfile
from shuffledp.errors import ParameterRegimeError
from shuffledp.gdp import gdp_delta, gdp_eps

__all__ = ["clone_probability", "paper_mu", "expected_clones", "clt_threshold", "BOUND"]

_MASS = {"paper": 1.0, "doubled": 2.0}


def _p(eps: np.ndarray, delta: np.ndarray) -> np.ndarray:
    from scipy.special import expit

    return (1.0 - delta) * expit(-eps)


def clone_probability(profile: BudgetProfile) -> np.ndarray:
    """Per-user p_i = (1 - delta_i) / (1 + e^{eps_i}), computed as (1 - delta_i) *
    expit(-eps_i) (the per-user arrays: up to N_MAX_ARRAYS users)."""
    return _p(profile.eps, profile.delta)


def _check_mass(clone_mass: str) -> float:
    try:
        return _MASS[clone_mass]
    except KeyError:
        raise ValueError(f"clone_mass must be one of {sorted(_MASS)}, got {clone_mass!r}") from None


def _pool_sum(profile: BudgetProfile, clone_mass: str) -> float:
    """sum_i p_i - max_i p_i over the budget tiers: one user of the largest p_i is left out
    of the sum (no cancellation), the terms count_t p_t added smallest first."""
    t = profile.tiers
    p = _p(t.eps, t.delta) * _check_mass(clone_mass)
    counts = t.counts.astype(np.float64)
    counts[int(np.argmax(p))] -= 1.0
    return float(np.sum(np.sort(counts * p)))


def paper_mu(profile: BudgetProfile, *, clone_mass: str = "paper") -> float:
    """mu = sqrt(2 / (sum_i p_i - max_i p_i)) (Chen, Cao, Ge 2024, main theorem). O(n log n)."""
    s = _pool_sum(profile, clone_mass)
    if s <= 0.0:
        raise ParameterRegimeError(
            "gdp: sum_i p_i - max_i p_i is 0 (every other user has p_i = 0), mu is infinite"
        )
    return math.sqrt(2.0 / s)


def expected_clones(profile: BudgetProfile, *, clone_mass: str = "paper") -> float:
    """M = sum_{j != v} 2 p_j, the expected number of clones of the worst victim v."""
    return 2.0 * _pool_sum(profile, clone_mass)


def clt_threshold(delta: float) -> float:
    """Clone count above which the kurtosis correction is < 10% at target ``delta``."""
    z2 = 2.0 * math.log(1.0 / delta)
    return 10.0 * z2 * z2 / 24.0


def _delta(*, profile: BudgetProfile, eps: float, clone_mass: str = "paper") -> float:
    return float(gdp_delta(eps, paper_mu(profile, clone_mass=clone_mass)))


def _eps(*, profile: BudgetProfile, delta: float, clone_mass: str = "paper") -> float:
    return gdp_eps(delta, paper_mu(profile, clone_mass=clone_mass), side="upper")


def _diagnostics(
    *, profile: BudgetProfile, eps: float, delta: float, clone_mass: str = "paper"
) -> dict[str, Any]:
    m = expected_clones(profile, clone_mass=clone_mass)
    threshold = clt_threshold(delta) if 0.0 < delta < 1.0 else math.inf
    return {
        "mu": paper_mu(profile, clone_mass=clone_mass),
        "expected_clones": m,
        "clt_threshold": threshold,
        "clt_ok": bool(m >= threshold),
    }


BOUND = register_bound(
    Bound(
        info=BoundInfo(
            name="gdp",
            kind="approximate",
            title="Chen-Cao-Ge 2024 mu-GDP (CLT approximation)",
            citation="Chen, Cao, Ge, AAAI 2024, arXiv 2312.14388, main theorem",
            personalized=True,
            approx_ldp=True,
            randomizers=("any",),
            options={"clone_mass": "paper"},
            coverage_note="approximation: no guarantee (clone masses exact for binary RR only)",
        ),
        delta_fn=_delta,
        eps_fn=_eps,
        check_fn=lambda *, profile, clone_mass="paper": _check_mass(clone_mass),
        diagnostics_fn=_diagnostics,
    )
)
