"""Baselines from "The Privacy Blanket of the Shuffle Model" (``blanket_hoeffding``,
``blanket_bennett``; kind ``upper``).

Source: B. Balle, J. Bell, A. Gascon, K. Nissim, "The Privacy Blanket of the Shuffle Model",
CRYPTO 2019, arXiv 1903.02837 (v2), Section 5 (privacy amplification via the privacy
amplification random variable, and its Hoeffding and Bennett bounds).

The reduction.  An eps0-LDP randomizer decomposes as ``R(x) = gamma omega + (1 - gamma) nu_x``
with a blanket distribution omega independent of x.  With ``M ~ Bin(n, gamma)`` and i.i.d.
copies ``L_1, L_2, ...`` of the privacy amplification random variable

    L = (mu_0(W) - e^eps mu_1(W)) / omega(W),   W ~ omega,   mu_b = R(x^b),

the shuffled output is (eps, delta)-DP for every

    delta >= (1 / (gamma n)) E[ ( L_1 + ... + L_M )_+ ].

(The victim's report and the M - 1 ~ Bin(n - 1, gamma) blanket reports of the others form a
multiset whose density ratio is the average of the L_i; ``P(Bin(n, g) = m) = (n g / m)
P(Bin(n-1, g) = m-1)`` turns the 1/m into 1/(gamma n).)  E[L] = 1 - e^eps =: -a.

* Hoeffding (L in an interval of width b):  E[(sum_{i<=m} L_i)_+] <= b^2/(4a) e^{-2 m a^2/b^2},
  so  ``delta = b^2 / (4 a gamma n) * (1 - gamma (1 - e^{-2 a^2 / b^2}))^n``.
* Bennett (L <= b_+, E[L^2] <= c; Boucheron-Lugosi-Massart Thm 2.9):
  E[(sum_{i<=m} L_i)_+] <= b_+ e^{-m alpha h(beta)} / log(1 + beta) with alpha = c / b_+^2,
  beta = a b_+ / c, h(u) = (1 + u) log(1 + u) - u (the tail exponent is convex in the
  threshold, so its tangent at 0 bounds the integral); summed over m >= 1 in closed form with
  the binomial generating function:
  ``delta = b_+ / (gamma n log(1 + beta)) * ((1 - gamma + gamma e^{-alpha h(beta)})^n
  - (1 - gamma)^n)``.

The parameters per blanket (option ``blanket``):

* ``"generic"`` (any eps0-LDP randomizer): gamma = e^{-eps0}; mu_b / omega lies in
  [e^{-eps0}, e^{eps0}], so b = (e^eps + 1)(e^{eps0} - e^{-eps0}), b_+ = e^{eps0} - e^{eps - eps0},
  c = e^{eps0} (e^{2 eps} + 1) - 2 e^{eps - 3 eps0} (the constants of the authors' reference
  implementation; each is a valid, slightly loose bound).
* ``"krr"`` (k-ary randomized response, option ``k``): gamma = k / (e^{eps0} + k - 1), omega
  uniform; L takes the values gamma (1 - e^eps) + (1 - gamma) k, gamma (1 - e^eps) - e^eps
  (1 - gamma) k and gamma (1 - e^eps), so exactly b = (1 - gamma) k (e^eps + 1),
  b_+ = gamma (1 - e^eps) + (1 - gamma) k and E[L^2] = gamma (2 - gamma)(e^eps - 1)^2
  + (1 - gamma)^2 k (e^{2 eps} + 1).

Code names: ``gamma`` = gamma, ``a`` = e^eps - 1, ``width`` = b, ``top`` = b_+, ``second`` = c.
The theorem numbers inside Section 5 could not be checked here (the full text was not
retrievable); the reduction and both bounds are re-derived above and verified in
tests/bounds/test_baselines.py against the exact blanket divergence of k-RR and the exact curve of
shuffled randomized response.

Validity.  Pure LDP (``approx_ldp=False``), identical budgets (a personalized profile is reduced
to eps0 = max_i eps_i), every n >= 2.  ``blanket="krr"`` covers only k-ary randomized response
with that k; ``"generic"`` covers every eps0-LDP randomizer.  For eps >= eps0 the local
guarantee gives delta = 0; for eps = 0 the bounds are vacuous and delta = 1 is returned.
``eps(delta)`` comes from the shared inversion, on the safe side.

>>> from shuffledp import BudgetProfile
>>> p = BudgetProfile.identical(n=100_000, eps0=1.0)
>>> hoeffding_delta(profile=p, eps=0.1) < 1e-6
True
"""

from __future__ import annotations

import math
from typing import Any

from shuffledp.bounds.base import Bound, BoundInfo, Coverage
from shuffledp.bounds.registry import register_bound
from shuffledp.budgets import BudgetProfile
from shuffledp.families import Family, budget_tiers, domination, get_family

__all__ = ["RANDOMIZERS", "blanket_parameters", "hoeffding_delta", "bennett_delta",
           "blanket_coverage", "HOEFFDING", "BENNETT"]

#: Targets eps at or below this get delta = 1 (valid: no guarantee claimed).  The closed forms
#: divide by (e^eps - 1)^2, which underflows for eps below ~1e-154.
_EPS_TINY = 1e-100
#: Smallest positive float: a delta that underflows is reported as this, never as 0.
_TINY = math.ulp(0.0)

RANDOMIZERS = ("generic", "krr")


def _check(*, profile: BudgetProfile, blanket: str = "generic", k: int = 2) -> None:
    if blanket not in RANDOMIZERS:
        raise ValueError(f"blanket must be one of {list(RANDOMIZERS)}, got {blanket!r}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise ValueError(f"k must be an integer >= 2, got {k!r}")


def blanket_parameters(
    *, eps0: float, eps: float, blanket: str = "generic", k: int = 2
) -> tuple[float, float, float, float, float]:
    """``(gamma, a, width, top, second)`` for the blanket (module docstring).

    >>> g, a, w, t, c = blanket_parameters(eps0=math.log(3.0), eps=0.0, blanket="krr", k=2)
    >>> round(g, 12), round(w, 12), round(t, 12)
    (0.5, 2.0, 1.0)
    """
    _check(profile=None, blanket=blanket, k=k)  # type: ignore[arg-type]
    big_e = math.exp(eps)
    a = math.expm1(eps)
    if blanket == "generic":
        gamma = math.exp(-eps0)
        width = (big_e + 1.0) * 2.0 * math.sinh(eps0)
        top = math.exp(eps0) - math.exp(eps - eps0)
        second = math.exp(eps0) * (big_e * big_e + 1.0) - 2.0 * math.exp(eps - 3.0 * eps0)
    else:
        gamma = k / (math.exp(eps0) + k - 1.0)
        rest = (1.0 - gamma) * k  # = k (e^eps0 - 1) / (e^eps0 + k - 1)
        width = rest * (big_e + 1.0)
        top = -gamma * a + rest
        second = gamma * (2.0 - gamma) * a * a + (1.0 - gamma) * rest * (big_e * big_e + 1.0)
    return gamma, a, width, top, second


def _h_lower(u: float) -> float:
    """A lower bound on h(u) = (1 + u) log(1 + u) - u (exact up to rounding for u >= 1e-4)."""
    if u < 1e-4:
        return u * u / (2.0 * (1.0 + u / 3.0))  # h(u) >= u^2 / (2 (1 + u/3))
    return (1.0 + u) * math.log1p(u) - u


def hoeffding_delta(
    *, profile: BudgetProfile, eps: float, blanket: str = "generic", k: int = 2
) -> float:
    """delta(eps) of the Hoeffding blanket bound (module docstring)."""
    eps0, n = profile.eps_max, profile.n
    if eps >= eps0:
        return 0.0
    if eps <= _EPS_TINY:  # nothing is certified this close to 0 (and e^eps - 1 underflows)
        return 1.0
    gamma, a, width, _, _ = blanket_parameters(eps0=eps0, eps=eps, blanket=blanket, k=k)
    if not (width > 0.0 and 0.0 < gamma < 1.0 and a > 0.0):  # degenerate in floating point
        return 1.0  # (eps0 within ~1e-16 of 0): no claim, valid
    r = 2.0 * a * a / (width * width)
    log_d = (
        2.0 * math.log(width) - math.log(4.0 * a * gamma * n)
        + n * math.log1p(gamma * math.expm1(-r))
    )
    return 1.0 if log_d >= 0.0 else max(math.exp(log_d), _TINY)


def bennett_delta(
    *, profile: BudgetProfile, eps: float, blanket: str = "generic", k: int = 2
) -> float:
    """delta(eps) of the Bennett blanket bound (module docstring)."""
    eps0, n = profile.eps_max, profile.n
    if eps >= eps0:
        return 0.0
    if eps <= _EPS_TINY:  # nothing is certified this close to 0 (and e^eps - 1 underflows)
        return 1.0
    gamma, a, _, top, second = blanket_parameters(eps0=eps0, eps=eps, blanket=blanket, k=k)
    if not (second > 0.0 and 0.0 < gamma <= 1.0 and a > 0.0):  # degenerate in floating point
        return 1.0
    if top <= 0.0:  # L <= 0 almost surely: the divergence is 0
        return 0.0
    alpha = second / (top * top)
    beta = a * top / second
    t = alpha * _h_lower(beta)
    log_a = n * math.log1p(gamma * math.expm1(-t))  # log (1 - gamma + gamma e^{-t})^n
    log_b = n * math.log1p(-gamma) if gamma < 1.0 else -math.inf  # log (1 - gamma)^n
    diff_log = log_a + math.log(-math.expm1(log_b - log_a)) if log_b < log_a else -math.inf
    if diff_log == -math.inf:  # (1 - gamma + gamma e^{-t})^n == (1 - gamma)^n in floating point
        return _TINY
    log_d = math.log(top) - math.log(gamma * n * math.log1p(beta)) + diff_log
    return 1.0 if log_d >= 0.0 else max(math.exp(log_d), _TINY)


def _diag(
    *, profile: BudgetProfile, eps: float, delta: float, blanket: str = "generic", k: int = 2
) -> dict[str, Any]:
    gamma = blanket_parameters(eps0=profile.eps_max, eps=0.0, blanket=blanket, k=k)[0]
    return {"blanket": blanket, "gamma": gamma, "expected_blanket": gamma * profile.n}


def blanket_coverage(
    *, family: Family, profile: BudgetProfile, blanket: str = "generic", k: int = 2,
) -> Coverage:
    """What the blanket bound covers (docs/theory.md, "Identical-budget theorems on
    personalized profiles").

    ``generic``: the blanket of the victim's pair can be taken as omega = (P0 + P1)/2, which
    every user dominates with mass gamma = e^{-eps0} exactly when the family dominates the
    standard clone mass at eps0 (identical budgets: every pure randomizer; personalized:
    :func:`shuffledp.families.domination`); the victim's mu_b / omega then lies in
    [e^{-eps0}, e^{eps0}] as the generic constants need.  ``krr``: the parameters are the exact
    ones of k-RR with that k (k = 2 also covers one-bit Duchi, whose shuffled profile is at most
    binary RR's), identical budgets only.
    """
    r = family
    if not r.pure:
        return Coverage(False, f"the privacy blanket bound needs pure LDP; {r} is not")
    if blanket == "krr":
        own = get_family(f"krr:{k}")
        if not profile.is_identical:
            return Coverage(False, "the k-RR blanket parameters are proven for identical "
                                   "budgets only")
        if r.profile_at_most(own):
            return Coverage(True, f"exact blanket parameters of {own}")
        return Coverage(False, f"the k-RR blanket parameters (k = {k}) cover {own} only")
    eps0 = profile.eps_max
    values, counts, _ = budget_tiers(profile)
    dom = domination(r, eps=values, required=math.exp(-eps0), counts=counts)
    if dom.holds:
        return Coverage(True, f"generic blanket: every user dominates gamma = e^-eps0 ({r})")
    return Coverage(False, f"generic blanket: {dom.reason}")


def _info(name: str, which: str) -> BoundInfo:
    return BoundInfo(
        name=name,
        kind="upper",
        title=f"Balle-Bell-Gascon-Nissim 2019 privacy blanket, {which}",
        citation=(
            f"Balle, Bell, Gascon, Nissim, CRYPTO 2019, arXiv 1903.02837, Section 5 ({which} "
            "bound on the privacy amplification random variable)"
        ),
        personalized=False,
        approx_ldp=False,
        randomizers=("any", "krr"),
        options={"blanket": "generic", "k": 2},
        coverage_note=(
            "generic: any eps0-LDP randomizer (identical), binary RR and one-bit Duchi "
            "(personalized); blanket=krr: k-RR with that k, identical only"
        ),
    )


HOEFFDING = register_bound(
    Bound(info=_info("blanket_hoeffding", "Hoeffding"), delta_fn=hoeffding_delta,
          check_fn=_check, diagnostics_fn=_diag, covers_fn=blanket_coverage)
)
BENNETT = register_bound(
    Bound(info=_info("blanket_bennett", "Bennett"), delta_fn=bennett_delta,
          check_fn=_check, diagnostics_fn=_diag, covers_fn=blanket_coverage)
)
