"""Baseline: Erlingsson et al., amplification by shuffling (``efmrtt19``, kind ``upper``).

Source: U. Erlingsson, V. Feldman, I. Mironov, A. Raghunathan, K. Talwar, A. Thakurta,
"Amplification by Shuffling: From Local to Central Differential Privacy via Anonymity",
SODA 2019, arXiv 1811.12469 (v2), the main amplification theorem for shuffled eps0-LDP
randomizers (an adaptive sequence of eps0-LDP local randomizers, each applied to one element of
a uniformly shuffled dataset):

    eps = 12 eps0 sqrt( log(1/delta) / n ),   for  eps0 <= 1/2,  n >= 1000,  delta <= 1/100.

Code names: ``eps0`` = eps_0 (the largest local budget, see below), ``n`` = n, ``delta`` = the
central delta.  The three conditions are the theorem's; we could not retrieve the full text of
the theorem here, so its statement and conditions are cross-checked against the reference
implementation of Balle, Bell, Gascon, Nissim (their ``Erlingsson`` class checks exactly
eps0 <= 0.5, n >= 1000, delta <= 0.01).

Validity region.  Pure LDP only (``approx_ldp=False``); identical budgets
(``personalized=False``: a personalized profile is evaluated with ``eps0 = max_i eps_i``, which
is valid since every user is then eps0-LDP).  Outside ``eps0 <= 1/2`` or ``n >= 1000`` the bound
raises :class:`~shuffledp.errors.ParameterRegimeError`.

Two refinements that only use facts, not new theory:

* a target ``delta > 1/100`` is answered with the certificate at ``delta = 1/100`` (an
  (eps, 1/100)-DP mechanism is (eps, delta)-DP for every larger delta);
* the result is capped at ``eps0``: the shuffled output is a post-processing of the n local
  reports, so changing one user's input is eps0-DP (``delta(eps) = 0`` for eps >= eps0).

The privacy profile is the closed-form inverse ``delta(eps) = exp(-n (eps / (12 eps0))^2)``,
returned as 1 (no guarantee) where it exceeds 1/100.

>>> from shuffledp import BudgetProfile
>>> p = BudgetProfile.identical(n=100_000, eps0=0.5)
>>> round(efmrtt19_eps(profile=p, delta=1e-6), 6)
0.070524
"""

from __future__ import annotations

import math
from typing import Any

from shuffledp.bounds.base import Bound, BoundInfo
from shuffledp.bounds.registry import register_bound
from shuffledp.budgets import BudgetProfile
from shuffledp.errors import ParameterRegimeError

__all__ = ["EPS0_MAX", "N_MIN", "DELTA_MAX", "efmrtt19_eps", "efmrtt19_delta", "BOUND"]

#: Smallest positive float: a delta that underflows is reported as this, never as 0.
_TINY = math.ulp(0.0)

#: The theorem's conditions: eps0 <= 1/2, n >= 1000, delta <= 1/100.
EPS0_MAX = 0.5
N_MIN = 1000
DELTA_MAX = 0.01


def _check(*, profile: BudgetProfile) -> None:
    eps0 = profile.eps_max
    if eps0 > EPS0_MAX:
        raise ParameterRegimeError(
            f"efmrtt19 requires eps0 <= {EPS0_MAX:g}, got eps0 = max eps_i = {eps0:g}"
        )
    if profile.n < N_MIN:
        raise ParameterRegimeError(f"efmrtt19 requires n >= {N_MIN}, got n = {profile.n}")


def efmrtt19_eps(*, profile: BudgetProfile, delta: float) -> float:
    """eps(delta) = min(12 eps0 sqrt(log(1/delta')/n), eps0), delta' = min(delta, 1/100)."""
    _check(profile=profile)
    if not (0.0 < delta < 1.0):
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    eps0, n = profile.eps_max, profile.n
    d = min(float(delta), DELTA_MAX)
    return min(12.0 * eps0 * math.sqrt(math.log(1.0 / d) / n), eps0)


def efmrtt19_delta(*, profile: BudgetProfile, eps: float) -> float:
    """delta(eps) = exp(-n (eps / (12 eps0))^2) where <= 1/100; 0 for eps >= eps0; else 1."""
    _check(profile=profile)
    if not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    eps0, n = profile.eps_max, profile.n
    if eps >= eps0:
        return 0.0
    d = math.exp(-n * (eps / (12.0 * eps0)) ** 2)
    return max(d, _TINY) if d <= DELTA_MAX else 1.0


def _diagnostics(*, profile: BudgetProfile, eps: float, delta: float) -> dict[str, Any]:
    return {"capped_at_eps0": bool(eps >= profile.eps_max)}


BOUND = register_bound(
    Bound(
        info=BoundInfo(
            name="efmrtt19",
            kind="upper",
            title="Erlingsson et al. 2019 closed form (eps0 <= 1/2)",
            citation=(
                "Erlingsson, Feldman, Mironov, Raghunathan, Talwar, Thakurta, SODA 2019, "
                "arXiv 1811.12469, amplification-by-shuffling theorem"
            ),
            personalized=False,
            approx_ldp=False,
            randomizers=("any",),
            options={},
            coverage_note="any eps0-LDP randomizer, identical budgets only (not a clone proof)",
        ),
        delta_fn=efmrtt19_delta,
        eps_fn=efmrtt19_eps,
        check_fn=_check,
        diagnostics_fn=_diagnostics,
    )
)
