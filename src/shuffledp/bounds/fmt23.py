"""Baselines from "Stronger Privacy Amplification by Shuffling" (``fmt23_closed``,
``fmt23_numerical``).

Source: V. Feldman, A. McMillan, K. Talwar, "Stronger Privacy Amplification by Shuffling for
Renyi and Approximate Differential Privacy", SODA 2023, arXiv 2208.04591 (the version with the
Errata).  Their approximate-DP result uses "stronger clones": every other user is a clone of the
victim with probability 2/(1 + e^{eps0}) instead of e^{-eps0} (FMT21).  Its closed form, for
``eps0 <= log(n / (8 log(4/delta)) - 1)`` (conservative reading, see below), is

    eps = log( 1 + (e^{eps0} - 1) ( 4 sqrt(2 log(4/delta)) / sqrt((e^{eps0} + 1) n) + 4/n ) ).

The region is the FMT21 one with the new clone probability: the expected clone count
n 2/(e^{eps0}+1) must be at least 16 log(4/delta).  The paper writes log(2/delta) in the
condition; its proof goes through FMT21's Lemma 3.5, whose 2/delta a 2026 report on the
authors' repository (apple/ml-shuffling-amplification) identifies as a typo for 4/delta, so a
rigorous implementation takes the smaller region with 4/delta (as for ``fmt21_closed``).

``fmt23_numerical`` is the exact divergence of the stronger-clone reduction with identical users,
the project's ``clones`` bound with ``clone="stronger"``; the wrapper only calls
``get_bound("clones").delta(..., clone="stronger")``.

**Erratum: restricted randomizers.**  The stronger-clone decomposition does not hold for every
eps0-LDP randomizer; after the authors' Errata it is proven for a restricted class, whose
important members are binary and k-ary randomized response.  Both entries therefore declare
``randomizers=("binary_rr", "krr")``: they are not guarantees for an arbitrary eps0-LDP
randomizer (use ``fmt21_closed`` / ``fmt21_numerical`` for those).

Code names: ``eps0`` = eps_0 = max_i eps_i (identical-budget theorems; a personalized profile is
reduced to its worst user), ``n`` = n, ``delta`` = the central delta.  Pure LDP only
(``approx_ldp=False``).  The closed form raises :class:`~shuffledp.errors.ParameterRegimeError`
outside its region; results are capped at eps0 (the local guarantee survives shuffling).
We could not retrieve the theorem's text here; the formula and region were cross-checked
against an independent implementation (Liu et al.'s code for arXiv 2407.18157).

>>> from shuffledp import BudgetProfile
>>> p = BudgetProfile.identical(n=100_000, eps0=4.0)
>>> round(fmt23_closed_eps(profile=p, delta=1e-6), 4)
0.4078
"""

from __future__ import annotations

import math
from typing import Any

from shuffledp.bounds.base import INVERSION_ATOL, INVERSION_RTOL, Bound, BoundInfo
from shuffledp.bounds.registry import get_bound, register_bound
from shuffledp.budgets import BudgetProfile
from shuffledp.errors import ParameterRegimeError
from shuffledp.numerics import eps_from_delta

__all__ = [
    "closed_form_eps",
    "closed_form_delta",
    "fmt23_closed_eps",
    "fmt23_closed_delta",
    "fmt23_numerical_delta",
    "fmt23_numerical_eps",
    "CLOSED",
    "NUMERICAL",
]

#: Smallest positive float: a delta that underflows is reported as this, never as 0.
_TINY = math.ulp(0.0)

RANDOMIZERS = ("binary_rr", "krr")


def _region_ok(eps0: float, n: int, delta_s: float) -> bool:
    """eps0 <= log(n / (8 log(4/delta)) - 1), i.e. 8 log(4/delta) (e^{eps0} + 1) <= n."""
    return 8.0 * math.log(4.0 / delta_s) * (math.exp(eps0) + 1.0) <= n


def closed_form_eps(*, eps0: float, n: int, delta: float) -> float:
    """The FMT23 closed form (uncapped); ParameterRegimeError outside its region.

    >>> round(closed_form_eps(eps0=1.0, n=10_000, delta=1e-6), 6)
    0.180006
    """
    if not _region_ok(eps0, n, delta):
        raise ParameterRegimeError(
            f"fmt23_closed requires eps0 <= log(n / (8 log(4/delta)) - 1), i.e. "
            f"n >= 8 log(4/delta) (e^eps0 + 1) = "
            f"{8 * math.log(4 / delta) * (math.exp(eps0) + 1):.4g}, got n = {n} "
            f"(eps0 = {eps0:g}, delta = {delta:g})"
        )
    e0 = math.exp(eps0)
    inner = 4.0 * math.sqrt(2.0 * math.log(4.0 / delta)) / math.sqrt((e0 + 1.0) * n) + 4.0 / n
    return math.log1p(math.expm1(eps0) * inner)


def closed_form_delta(*, eps0: float, n: int, eps: float) -> float:
    """Smallest delta at which the closed form certifies ``eps``, or 1; 0 for eps >= eps0.

    With ``A = (e^eps - 1)/(e^{eps0} - 1) - 4/n``: ``delta = 4 exp(-A^2 (e^{eps0} + 1) n / 32)``,
    raised to the region's smallest delta ``4 exp(-n / (8 (e^{eps0} + 1)))`` if below it.
    """
    if eps >= eps0:
        return 0.0
    a = math.expm1(eps) / math.expm1(eps0) - 4.0 / n
    if a <= 0.0:
        return 1.0
    d = 4.0 * math.exp(-a * a * (math.exp(eps0) + 1.0) * n / 32.0)
    d = max(d, 4.0 * math.exp(-n / (8.0 * (math.exp(eps0) + 1.0))))  # the region's smallest delta
    return min(max(d, _TINY), 1.0)


def _check_closed(*, profile: BudgetProfile) -> None:
    eps0, n = profile.eps_max, profile.n
    if 8.0 * math.log(4.0) * (math.exp(eps0) + 1.0) > n:
        raise ParameterRegimeError(
            f"fmt23_closed requires n >= 8 log(4/delta) (e^eps0 + 1) for some delta < 1, "
            f"i.e. n >= {8 * math.log(4) * (math.exp(eps0) + 1):.4g}, got n = {n}"
        )


def fmt23_closed_eps(*, profile: BudgetProfile, delta: float) -> float:
    """eps(delta) of the closed form, capped at eps0."""
    eps0 = profile.eps_max
    return min(closed_form_eps(eps0=eps0, n=profile.n, delta=delta), eps0)


def fmt23_closed_delta(*, profile: BudgetProfile, eps: float) -> float:
    """delta(eps): the closed-form inverse (1 where the closed form certifies nothing)."""
    return closed_form_delta(eps0=profile.eps_max, n=profile.n, eps=eps)


def _pure_profile(profile: BudgetProfile) -> BudgetProfile:
    return BudgetProfile.identical(n=profile.n, eps0=profile.eps_max, label=profile.label)


def fmt23_numerical_delta(*, profile: BudgetProfile, eps: float) -> float:
    """delta(eps) of the stronger-clone reduction (``clones`` with ``clone="stronger"``)."""
    return get_bound("clones").delta(profile=_pure_profile(profile), eps=eps, clone="stronger")


def fmt23_numerical_eps(*, profile: BudgetProfile, delta: float) -> float:
    """eps(delta) by the shared inversion on the safe side, capped at eps0."""
    prof = _pure_profile(profile)
    bound = get_bound("clones")
    try:
        e = eps_from_delta(lambda x: bound.delta(profile=prof, eps=x, clone="stronger"), delta,
                           side="upper", rtol=INVERSION_RTOL, atol=INVERSION_ATOL)
    except ValueError as err:
        raise ParameterRegimeError(f"fmt23_numerical cannot certify delta = {delta:g}") from err
    return min(e, profile.eps_max)


def _diag(*, profile: BudgetProfile, eps: float, delta: float) -> dict[str, Any]:
    return {
        "clone": "stronger",
        "expected_clones": 2.0 * (profile.n - 1) / (1.0 + math.exp(profile.eps_max)),
    }


_CITATION = (
    "Feldman, McMillan, Talwar, SODA 2023, arXiv 2208.04591 (with Errata: stronger clones for "
    "binary/k-ary randomized response)"
)

CLOSED = register_bound(
    Bound(
        info=BoundInfo(
            name="fmt23_closed",
            kind="upper",
            title="Feldman-McMillan-Talwar 2023 closed form (stronger clones)",
            citation=_CITATION + ", closed form",
            personalized=False,
            approx_ldp=False,
            randomizers=RANDOMIZERS,
            options={},
            clone_mass="stronger",
            coverage_note=(
                "randomizers dominating the 2/(1+e^eps0) clone mass: binary RR and one-bit "
                "Duchi (also personalized), k-RR (identical only)"
            ),
        ),
        delta_fn=fmt23_closed_delta,
        eps_fn=fmt23_closed_eps,
        check_fn=_check_closed,
        diagnostics_fn=_diag,
    )
)

NUMERICAL = register_bound(
    Bound(
        info=BoundInfo(
            name="fmt23_numerical",
            kind="upper",
            title="Feldman-McMillan-Talwar 2023 numerical (stronger clones)",
            citation=_CITATION + ", numerical; evaluated by the clones bound",
            personalized=False,
            approx_ldp=False,
            randomizers=RANDOMIZERS,
            options={},
            clone_mass="stronger",
            coverage_note=(
                "randomizers dominating the 2/(1+e^eps0) clone mass: binary RR and one-bit "
                "Duchi (also personalized), k-RR (identical only)"
            ),
        ),
        delta_fn=fmt23_numerical_delta,
        eps_fn=fmt23_numerical_eps,
        diagnostics_fn=_diag,
    )
)
