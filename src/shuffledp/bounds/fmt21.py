"""Baselines from "Hiding Among the Clones" (registered ``fmt21_closed`` and ``fmt21_numerical``).

Source: V. Feldman, A. McMillan, K. Talwar, "Hiding Among the Clones: A Simple and Nearly
Optimal Analysis of Privacy Amplification by Shuffling", FOCS 2021, arXiv 2012.12803 (v4).

``fmt21_closed`` (kind ``upper``): Theorem 3.1.  For eps0-LDP local randomizers (any, possibly
adaptively chosen) and ``eps0 <= log(n / (16 log(4/delta)))`` (see "Validity condition" below)
the shuffled output is (eps, delta)-DP with

    eps = log( 1 + (e^{eps0} - 1) / (e^{eps0} + 1)
                   * ( 8 sqrt(e^{eps0} log(4/delta) / n) + 8 e^{eps0} / n ) ).

``fmt21_numerical`` (kind ``upper``): Theorem 3.2 evaluated numerically (their Appendix E):
C ~ Bin(n - 1, e^{-eps0}) clones and the victim mixture with q = e^{eps0}/(1 + e^{eps0}).  This
is the project's ``clones`` bound with ``clone="standard"`` and identical users; the wrapper only
calls ``get_bound("clones").delta(..., clone="standard")``.

Approximate local DP, both entries: Theorem 3.8 (the (eps0, delta0)-LDP extension).  If every
randomizer is (eps0, delta0)-LDP, the output is (eps, delta_s + X(eps))-DP, with eps the pure
guarantee at delta_s and

    X(eps) = (e^{eps} + 1) (1 + e^{-eps0} / 2) n delta0.

Its proof modifies the clone decomposition (Lemma 3.3) by terms of total variation at most
(1 + e^{-eps0}/2) delta0 per user, which the hockey-stick divergence pays with the factor
(e^eps + 1); the same argument applies to the exact divergence of the reduction, so
``fmt21_numerical`` adds X(eps) to the numerical pure profile.  We could not retrieve the text
of Theorem 3.8 here; the form of X was cross-checked against an independent implementation
(Liu et al.'s code for arXiv 2407.18157, which uses exactly this term).

Code names: ``eps0`` = eps_0 = max_i eps_i, ``delta0`` = delta_0 = max_i delta_i, ``n`` = n,
``delta_s`` = the pure part delta, ``extra`` = X(eps).

Certificates and their envelope.  Because X grows with eps, the total ``T(eps) = delta_s(eps) +
X(eps)`` is not monotone; any certificate (eps', T(eps')) also certifies every eps >= eps'.  We
return ``delta(eps) = T(min(eps, eps_star))`` with ``eps_star`` the (numerical) minimiser of T on
[0, eps0], and ``eps(delta)`` as the smallest eps on [0, eps_star] with ``T(eps) <= delta``, found
by bisection on the safe side (the returned eps satisfies ``T(eps) <= delta`` as evaluated).
For eps >= eps0 the trivial guarantee of the local randomizers, (eps0, delta0), is used too
(``delta(eps) <= delta0``; 0 for pure LDP).

Validity condition.  The paper states ``eps0 <= log(n / (16 log(2/delta)))`` (Theorem 3.1,
also Lemma 3.5, Theorem 3.8, Proposition 5.3); the authors' code checks
``log(n / (16 log(4/delta)))``, and a 2026 report on their repository
(apple/ml-shuffling-amplification) says the paper's 2/delta is a typo for 4/delta.  A rigorous
bound takes the conservative (smaller) region: ``16 log(4/delta) e^{eps0} <= n``.

Validity.  Identical budgets (a personalized profile is evaluated through its worst user,
eps0 = max eps_i, delta0 = max delta_i; a guarantee for the randomizers that dominate the
standard clone mass, :meth:`~shuffledp.bounds.base.Bound.covers`).  The closed form raises
:class:`~shuffledp.errors.ParameterRegimeError` when ``eps0 > log(n / (16 log(4/delta)))`` at
the requested delta (and when no delta < 1 satisfies it); the numerical bound holds for every
n >= 2.  With identical budgets every eps0-LDP randomizer is covered.

Reference value (the authors' README, apple/ml-shuffling-amplification): n = 10^5, eps0 = 4,
delta = 1e-6 gives a closed form of at most 0.538 (the README's 0.5378 is an intermediate
expression of their code, ``(1 - e^{-eps0}) / (1 + e^{-eps0 - eps'})`` in place of
``(e^{eps0}-1)/(e^{eps0}+1)``, which is larger; Theorem 3.1 as stated gives 0.5346) and a
numerical bound in [0.1675, 0.1728].

>>> from shuffledp import BudgetProfile
>>> p = BudgetProfile.identical(n=100_000, eps0=4.0)
>>> round(fmt21_closed_eps(profile=p, delta=1e-6), 4)
0.5346
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from shuffledp._lazy import lazy_module
from shuffledp.bounds.base import INVERSION_ATOL, INVERSION_RTOL, Bound, BoundInfo
from shuffledp.bounds.registry import get_bound, register_bound
from shuffledp.budgets import BudgetProfile
from shuffledp.errors import ParameterRegimeError
from shuffledp.numerics import eps_from_delta

optimize = lazy_module("scipy.optimize")


__all__ = [
    "closed_form_eps",
    "closed_form_delta",
    "local_delta_term",
    "certify_with_local_delta",
    "fmt21_closed_eps",
    "fmt21_closed_delta",
    "fmt21_numerical_delta",
    "fmt21_numerical_eps",
    "CLOSED",
    "NUMERICAL",
]

#: Smallest positive float: a delta that underflows is reported as this, never as 0.
_TINY = math.ulp(0.0)


# --------------------------------------------------------------------------- Theorem 3.1
def _region_ok(eps0: float, n: int, delta_s: float) -> bool:
    """eps0 <= log(n / (16 log(4/delta_s))), written as 16 log(4/delta_s) e^{eps0} <= n
    (the conservative reading of the condition, module docstring)."""
    return 16.0 * math.log(4.0 / delta_s) * math.exp(eps0) <= n


def closed_form_eps(*, eps0: float, n: int, delta: float) -> float:
    """Theorem 3.1 of FMT21 (uncapped); ParameterRegimeError outside its region.

    >>> round(closed_form_eps(eps0=4.0, n=100_000, delta=1e-6), 6)
    0.534634
    """
    if not _region_ok(eps0, n, delta):
        raise ParameterRegimeError(
            f"fmt21_closed requires eps0 <= log(n / (16 log(4/delta))) = "
            f"{math.log(n / (16.0 * math.log(4.0 / delta))):.4g}, got eps0 = {eps0:g} "
            f"(n = {n}, delta = {delta:g})"
        )
    e0 = math.exp(eps0)
    inner = 8.0 * math.sqrt(e0 * math.log(4.0 / delta) / n) + 8.0 * e0 / n
    return math.log1p(math.tanh(eps0 / 2.0) * inner)  # tanh(x/2) = (e^x - 1)/(e^x + 1)


def closed_form_delta(*, eps0: float, n: int, eps: float) -> float:
    """Smallest delta at which Theorem 3.1 certifies ``eps`` (closed-form inverse), or 1.

    Solving the formula for delta: with ``A = (e^eps - 1)/tanh(eps0/2) - 8 e^{eps0}/n``,
    ``delta = 4 exp(-n A^2 / (64 e^{eps0}))`` when A > 0, raised to the smallest delta of the
    region, ``4 exp(-n e^{-eps0} / 16)``, if below it.  Returns 0 for eps >= eps0 (the trivial
    pure guarantee).

    >>> d = closed_form_delta(eps0=4.0, n=100_000, eps=0.6)
    >>> closed_form_eps(eps0=4.0, n=100_000, delta=d) <= 0.6
    True
    """
    if eps >= eps0:
        return 0.0
    e0 = math.exp(eps0)
    a = math.expm1(eps) / math.tanh(eps0 / 2.0) - 8.0 * e0 / n
    if a <= 0.0:
        return 1.0
    d = 4.0 * math.exp(-n * a * a / (64.0 * e0))
    # The formula decreases in delta, so a delta below the region is replaced by the region's
    # smallest delta, 4 exp(-n e^{-eps0} / 16), which certifies eps as well.
    d = max(d, 4.0 * math.exp(-n / (16.0 * e0)))
    return min(max(d, _TINY), 1.0)


# --------------------------------------------------------------------------- Theorem 3.8
def local_delta_term(*, eps: float, eps0: float, n: int, delta0: float) -> float:
    """X(eps) = (e^eps + 1)(1 + e^{-eps0}/2) n delta0 of FMT21 Theorem 3.8.

    >>> local_delta_term(eps=0.0, eps0=0.0, n=10, delta0=1e-3)
    0.03
    """
    return (math.exp(eps) + 1.0) * (1.0 + 0.5 * math.exp(-eps0)) * n * delta0


def certify_with_local_delta(
    pure_delta: Callable[[float], float], *, eps0: float, n: int, delta0: float
) -> tuple[Callable[[float], float], Callable[[float], float]]:
    """``(delta_fn, eps_fn)`` of ``T(eps) = pure_delta(eps) + X(eps)`` (see module docstring).

    ``pure_delta`` is a valid pure-LDP privacy profile (non-increasing).  ``eps_fn`` raises
    :class:`ParameterRegimeError` when no eps certifies the target.
    """

    def total(e: float) -> float:
        return min(1.0, pure_delta(e) + local_delta_term(eps=e, eps0=eps0, n=n, delta0=delta0))

    if delta0 == 0.0 or eps0 == 0.0:
        star = eps0
    else:
        res = optimize.minimize_scalar(total, bounds=(0.0, eps0), method="bounded",
                              options={"xatol": 1e-6 * max(eps0, 1e-3)})
        star = float(res.x) if total(float(res.x)) < total(eps0) else eps0

    def delta_fn(e: float) -> float:
        d = total(min(e, star))
        if e >= eps0:
            d = min(d, delta0)
        return d

    def eps_fn(d: float) -> float:
        try:
            e = eps_from_delta(delta_fn, d, side="upper", eps_hi=max(star, 1e-12),
                               eps_max=max(star, 1e-12), rtol=1e-9, atol=1e-12)
        except ValueError:
            if d >= delta0:
                return eps0
            raise ParameterRegimeError(
                f"cannot certify delta = {d:g}: the smallest total delta is "
                f"{total(star):.3g} (pure part + X(eps) of FMT21 Thm 3.8 with n = {n}, "
                f"delta0 = {delta0:g})"
            ) from None
        return min(e, eps0)

    return delta_fn, eps_fn


# --------------------------------------------------------------------------- fmt21_closed
def _budget(profile: BudgetProfile) -> tuple[float, int, float]:
    return profile.eps_max, profile.n, profile.delta_max


def _check_closed(*, profile: BudgetProfile) -> None:
    eps0, n, _ = _budget(profile)
    if 16.0 * math.log(4.0) * math.exp(eps0) > n:
        raise ParameterRegimeError(
            f"fmt21_closed requires eps0 <= log(n / (16 log(4/delta))) for some delta < 1, "
            f"i.e. n >= 16 log(4) e^eps0 = {16 * math.log(4) * math.exp(eps0):.4g}, got n = {n}"
        )


def fmt21_closed_delta(*, profile: BudgetProfile, eps: float) -> float:
    """delta(eps) of Theorem 3.1 (+ Theorem 3.8 for delta0 > 0), envelope as documented."""
    eps0, n, delta0 = _budget(profile)
    pure = lambda e: closed_form_delta(eps0=eps0, n=n, eps=e)  # noqa: E731
    if delta0 == 0.0:
        return pure(eps)
    return certify_with_local_delta(pure, eps0=eps0, n=n, delta0=delta0)[0](eps)


def fmt21_closed_eps(*, profile: BudgetProfile, delta: float) -> float:
    """eps(delta) of Theorem 3.1 capped at eps0 (+ Theorem 3.8 for delta0 > 0)."""
    eps0, n, delta0 = _budget(profile)
    if delta0 == 0.0:
        return min(closed_form_eps(eps0=eps0, n=n, delta=delta), eps0)
    pure = lambda e: closed_form_delta(eps0=eps0, n=n, eps=e)  # noqa: E731
    try:
        return certify_with_local_delta(pure, eps0=eps0, n=n, delta0=delta0)[1](delta)
    except ParameterRegimeError as err:
        raise ParameterRegimeError(f"fmt21_closed: {err}") from None


def _diag_closed(*, profile: BudgetProfile, eps: float, delta: float) -> dict[str, Any]:
    eps0, n, delta0 = _budget(profile)
    return {
        "expected_clones": (n - 1) * math.exp(-eps0),
        # X at the eps used (the envelope never uses eps above eps0)
        "local_delta_term": local_delta_term(eps=min(eps, eps0), eps0=eps0, n=n, delta0=delta0),
        "capped_at_eps0": bool(eps >= eps0),
    }


CLOSED = register_bound(
    Bound(
        info=BoundInfo(
            name="fmt21_closed",
            kind="upper",
            title="Feldman-McMillan-Talwar 2021 closed form",
            citation=(
                "Feldman, McMillan, Talwar, FOCS 2021, arXiv 2012.12803, Thm 3.1 "
                "(Thm 3.8 for delta0 > 0)"
            ),
            personalized=False,
            approx_ldp=True,
            randomizers=("any",),
            options={},
            clone_mass="standard",
            coverage_note=(
                "identical: any eps0-LDP randomizer ((eps0, delta0) by Thm 3.8); personalized: "
                "randomizers dominating the e^-eps0 clone mass (binary RR, one-bit Duchi)"
            ),
        ),
        delta_fn=fmt21_closed_delta,
        eps_fn=fmt21_closed_eps,
        check_fn=_check_closed,
        diagnostics_fn=_diag_closed,
    )
)


# --------------------------------------------------------------------------- fmt21_numerical
def _clones_pure(profile: BudgetProfile, clone: str) -> Callable[[float], float]:
    """Pure-LDP profile of the clone reduction for identical users (the ``clones`` bound)."""
    bound = get_bound("clones")
    pure = BudgetProfile.identical(n=profile.n, eps0=profile.eps_max, label=profile.label)
    return lambda e: bound.delta(profile=pure, eps=e, clone=clone)


def fmt21_numerical_delta(*, profile: BudgetProfile, eps: float) -> float:
    """delta(eps) of Theorem 3.2 (exact divergence of the standard-clone reduction)."""
    eps0, n, delta0 = _budget(profile)
    pure = _clones_pure(profile, "standard")
    if delta0 == 0.0:
        return pure(eps)
    return certify_with_local_delta(pure, eps0=eps0, n=n, delta0=delta0)[0](eps)


def fmt21_numerical_eps(*, profile: BudgetProfile, delta: float) -> float:
    """eps(delta): the shared inversion on the safe side (``side="upper"``)."""
    eps0, n, delta0 = _budget(profile)
    pure = _clones_pure(profile, "standard")
    try:
        if delta0 == 0.0:
            e = eps_from_delta(pure, delta, side="upper", rtol=INVERSION_RTOL,
                               atol=INVERSION_ATOL)
            return min(e, eps0)
        return certify_with_local_delta(pure, eps0=eps0, n=n, delta0=delta0)[1](delta)
    except ParameterRegimeError as err:
        raise ParameterRegimeError(f"fmt21_numerical: {err}") from None
    except ValueError as err:
        raise ParameterRegimeError(f"fmt21_numerical cannot certify delta = {delta:g}") from err


def _diag_numerical(*, profile: BudgetProfile, eps: float, delta: float) -> dict[str, Any]:
    return {"clone": "standard", **_diag_closed(profile=profile, eps=eps, delta=delta)}


NUMERICAL = register_bound(
    Bound(
        info=BoundInfo(
            name="fmt21_numerical",
            kind="upper",
            title="Feldman-McMillan-Talwar 2021 numerical (standard clones)",
            citation=(
                "Feldman, McMillan, Talwar, FOCS 2021, arXiv 2012.12803, Thm 3.2 and App. E "
                "(Thm 3.8 for delta0 > 0); evaluated by the clones bound"
            ),
            personalized=False,
            approx_ldp=True,
            randomizers=("any",),
            options={},
            clone_mass="standard",
            coverage_note=(
                "identical: any eps0-LDP randomizer ((eps0, delta0) by Thm 3.8); personalized: "
                "randomizers dominating the e^-eps0 clone mass (binary RR, one-bit Duchi)"
            ),
        ),
        delta_fn=fmt21_numerical_delta,
        eps_fn=fmt21_numerical_eps,
        diagnostics_fn=_diag_numerical,
    )
)
