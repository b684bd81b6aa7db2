"""Certified lower bound for personalized budgets in tiers: the exact law of one statistic of
the shuffled output for the pair "others at x1" (registered ``tier_sum_lower``, kind ``lower``).

The pair.  Users run the randomizer R of the family ``mechanism`` with their own budgets
``(eps_i, delta_i)``; the profile has at most ``MAX_TIERS`` distinct budgets (tiers; every
eps_i at least ``EPS_FLOOR``).  A victim
``v`` of tier ``t_v`` holds x0 = +1 (P) or x1 = -1 (Q); every other user holds x1.  Any
function of the shuffled multiset is a post-processing, so its divergence is a lower bound on
the pair's, which is one neighbouring pair of the protocol (docs/theory.md 13.6).

The statistic.  ``T = sum_i g(y_i)`` over the n reports, with an integer score ``g`` of one
report: ``(p_v - q_v) / w`` on fine cells of the output line (``p_v``, ``q_v`` the victim
tier's cell masses at +1 and -1, ``w`` the average other report's), quantized linearly to
``0..LEVELS``.  For a lone victim among i.i.d. others the exact likelihood ratio of the
multiset is ``sum p_v/w / sum q_v/w``, which this score linearises; with equal budgets it is
Su, Cheng, Wang's ``r`` shifted by 1.  The cells only define g; any g is a valid statistic.
Each user's score has an exact law (the family's certified interval masses,
with their error bounds), the users are independent, so T's law under Q is the convolution of
the tiers' laws (``n_t`` users each, the victim's tier one fewer), and under P the victim's
term has the law of g under R_v(+1).  Writing ``O`` for the law of the others' sum,
``A = O * g(R_v(+1))`` and ``B = O * g(R_v(-1))`` do not depend on eps:

    H_E(P_T || Q_T) = sum_t (A_t - E B_t)_+,      H_E(Q_T || P_T) = sum_t (B_t - E A_t)_+,

computed once per (statistic, victim tier) by one FFT pipeline, then for every eps in O(N).

Rounding (everything subtracted): (1) the interval masses' own error bounds, summed over the
users (a total-variation move of T's laws by at most ``tv``, which moves H_E by at most
``(1 + E) tv``); (2) the FFT's round-off, estimated as in the blanket module (``FFT_SAFETY``
times ``u (n + 5 log2 N + 8)`` times ``2 sum_k |phi_O(k)| / N``, per entry of A and B),
charged on every entry of the positive set; (3) the mass outside the FFT's window (Bernstein's
inequality on T, each score in [0, LEVELS]), which aliases onto the window: charged as a total
variation of both laws.

Victims: the ``MAX_VICTIMS`` tiers of largest eps are tried (any victim gives a valid lower
bound; the largest budgets leak most); beyond ``FEW_TIERS`` tiers (distinct budgets: each user
its own tier) one victim and the score ``(p-q)/w`` only, the score coarsened so that tiers times
FFT points stay within ``WORK``.  Families: Laplace, the Gaussian mechanism and the
piecewise mechanism on [-1, 1], and the shared-noise Laplace and Gaussian (their certified
interval masses, those of ``window_lower``; the shared ones in their common units).

Code names -> symbols: ``g`` the score of one report, ``LEVELS`` its largest value, ``O`` the
others' sum's law, ``A``/``B`` T's law under P/Q, ``E`` = e^eps.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from shuffledp.bounds.base import Bound, BoundInfo, Coverage, mechanism_lower_coverage
from shuffledp.bounds.registry import register_bound
from shuffledp.bounds.tier_sum_laws import LEVELS, _Pipeline, tier_laws
from shuffledp.bounds.tier_sum_many import ManyPipeline, TooManyFrequencies
from shuffledp.budgets import BudgetProfile, profile_digest
from shuffledp.caching import register_mapping
from shuffledp.errors import ParameterRegimeError
from shuffledp.families import Family, get_family

__all__ = ["TIER_FAMILIES", "MAX_TIERS", "LEVELS", "tier_sum_delta", "tier_sum_eps",
           "tier_laws", "BOUND"]

#: The families with certified interval masses here.
TIER_FAMILIES = ("laplace", "gaussian", "piecewise", "laplace_shared", "gaussian_shared")
#: Most distinct budgets a profile may have (the time of the many-budgets pipeline grows
#: linearly with them).
MAX_TIERS = 10_000_000
#: Beyond this many tiers one score and one victim tier are used (the cost is per tier).
FEW_TIERS = 64
#: Beyond FEW_TIERS distinct budgets :mod:`shuffledp.bounds.tier_sum_many` is used (no FFT per
#: budget; as tight or tighter, docs/theory.md 13.7); when the laws are too lumpy for it
#: (piecewise densities), the direct pipeline (one FFT per budget) up to this many budgets.
DIRECT_MAX_TIERS = 40_000
#: Whether the many-budgets pipeline is used (tests switch it off to compare).
MANY_PIPELINE = True
#: Smallest budget handled.
EPS_FLOOR = 1e-6
#: The tiers of largest eps tried as the victim's.
MAX_VICTIMS = 2
#: The scores tried (``"p/w"``, ``"q/w"``, ``"(p-cq)/w"`` are implemented): measured on the
#: benchmark's two-tier profiles, ``(p-q)/w`` with the others at -1 was the best everywhere
#: (docs/theory.md 13.6), so it alone is used.
STATISTICS = ("(p-q)/w",)
#: Largest eps searched (e^eps stays finite).
_EPS_CAP = 700.0
#: The others' common input (0 was measured below -1 everywhere).
OTHERS_AT = (-1.0,)


_CACHE: dict[tuple, list[_Pipeline]] = {}
register_mapping("tier_sum.pipelines", _CACHE)


def _pipelines(profile: BudgetProfile, mechanism: Any) -> list[_Pipeline]:
    fam = get_family(mechanism)
    key = (profile_digest(profile), fam.spec)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    tiers = profile.tiers
    eps = np.asarray(tiers.eps, dtype=np.float64)
    delta = np.asarray(tiers.delta, dtype=np.float64)
    counts = np.asarray(tiers.counts, dtype=np.int64)
    few = eps.size <= FEW_TIERS
    order = np.argsort(-eps, kind="stable")[:MAX_VICTIMS if few else 1]
    stats = STATISTICS if few else STATISTICS[-1:]
    out: list[_Pipeline] = []
    if not few and MANY_PIPELINE:
        try:
            out = [ManyPipeline(fam, eps, delta, counts, int(order[0]), stats[-1], x_star)
                   for x_star in OTHERS_AT]
            order = order[:0]
        except TooManyFrequencies as err:
            if eps.size > DIRECT_MAX_TIERS:
                raise ParameterRegimeError(
                    f"{err}; the direct pipeline handles at most {DIRECT_MAX_TIERS} distinct "
                    f"budgets, got {eps.size}") from err
    if not out and eps.size > DIRECT_MAX_TIERS:
        raise ParameterRegimeError(f"tier_sum_lower: the direct pipeline handles at most "
                                   f"{DIRECT_MAX_TIERS} distinct budgets, got {eps.size}")
    for v in order:
        if eps[v] <= 0.0:
            continue
        for x_star in OTHERS_AT:
            for stat in stats:
                laws, law_p, law_q, errs, err_v = tier_laws(fam, eps, delta, counts, int(v),
                                                            stat, x_star)
                out.append(_Pipeline(laws, law_p, law_q, errs, err_v, counts, int(v)))
    if len(_CACHE) > 16:
        _CACHE.clear()
    _CACHE[key] = out
    return out


# --------------------------------------------------------------------------- the bound
def _check(*, profile: BudgetProfile, mechanism: Any = "laplace") -> None:
    fam = get_family(mechanism)
    if fam.name not in TIER_FAMILIES:
        raise ParameterRegimeError(
            f"tier_sum_lower has no interval masses for {fam}: its mechanism must be one of "
            f"{', '.join(TIER_FAMILIES)}")
    k = profile.tiers.eps.size
    if k > MAX_TIERS:
        raise ParameterRegimeError(
            f"tier_sum_lower needs at most {MAX_TIERS} distinct budgets (tiers), got {k}")
    if profile.eps_min < EPS_FLOOR:
        raise ParameterRegimeError(
            f"tier_sum_lower needs every eps_i >= {EPS_FLOOR:g} (the report laws of smaller "
            f"budgets are not computed here), got eps_i = {profile.eps_min!r}")
    if fam.needs_delta and profile.delta_min <= 0.0:
        raise ParameterRegimeError(f"tier_sum_lower: the {fam.name} randomizer needs delta_i "
                                   f"> 0 for every user, got delta_i = {profile.delta_min!r}")


def tier_sum_delta(*, profile: BudgetProfile, eps: float, mechanism: Any = "laplace") -> float:
    """A lower bound on the exact delta(eps) of the shuffled protocol (module docstring).

    >>> from shuffledp import BudgetProfile
    >>> p = BudgetProfile.from_histogram([0.5, 2.0], [900, 100])
    >>> bool(0.0 < tier_sum_delta(profile=p, eps=0.1) < 0.5)
    True
    """
    if not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    _check(profile=profile, mechanism=mechanism)
    if eps > _EPS_CAP or (profile.is_pure and eps >= profile.eps_max):
        return 0.0  # a valid lower bound (the exact delta is 0 or below e^-700 here)
    big_e = math.exp(eps)
    return max((pl.delta(big_e) for pl in _pipelines(profile, mechanism)), default=0.0)


def tier_sum_eps(*, profile: BudgetProfile, delta: float, mechanism: Any = "laplace") -> float:
    """The largest eps (to 1e-7 relative, rounded down) with the lower bound on delta(eps)
    above ``delta``; 0 when none is."""
    _check(profile=profile, mechanism=mechanism)
    best = 0.0
    for pl in _pipelines(profile, mechanism):
        if pl.delta(1.0) <= delta:
            continue
        lo, hi = 0.0, 1.0
        while pl.delta(math.exp(hi)) > delta:
            lo, hi = hi, min(2.0 * hi, _EPS_CAP)
            if lo >= _EPS_CAP:  # still above delta at e^700: a valid (vast) lower bound
                break
        for _ in range(200):
            if hi - lo <= 1e-7 * max(lo, 1e-12):
                break
            mid = 0.5 * (lo + hi)
            if pl.delta(math.exp(mid)) > delta:
                lo = mid
            else:
                hi = mid
        best = max(best, lo)
    return best


def _covers(*, family: Family, profile: BudgetProfile, mechanism: Any = "laplace") -> Coverage:
    return mechanism_lower_coverage("tier_sum_lower", TIER_FAMILIES, get_family(mechanism), family,
                                    "interval masses")


def _diagnostics(*, profile: BudgetProfile, eps: float, delta: float,
                 mechanism: Any = "laplace") -> dict[str, Any]:
    return {"mechanism": get_family(mechanism).spec, "pair": "others at x1 = -1",
            "statistics": ", ".join(STATISTICS), "levels": LEVELS}


BOUND = register_bound(
    Bound(
        info=BoundInfo(
            name="tier_sum_lower",
            kind="lower",
            title=("Others at x1, personalized budgets: exact law of the sum of one score "
                   "per report"),
            citation=("the pair 'others at x1' with a likelihood score against the average "
                      "other report (Su, Cheng, Wang's statistic when "
                      "budgets are equal; IEEE S&P 2026, arXiv 2504.07414), quantized; exact "
                      "per-tier convolutions (docs/theory.md 13.6), beyond 64 distinct budgets "
                      "few frequencies and a certified bound on the others (13.7)"),
            personalized=True,
            approx_ldp=True,
            randomizers=("laplace",),
            options={"mechanism": "laplace"},
            coverage_note=("a lower bound for its mechanism (option mechanism: laplace, "
                           "gaussian, piecewise, laplace_shared, gaussian_shared), at most "
                           "10^7 distinct budgets"),
        ),
        delta_fn=tier_sum_delta,
        eps_fn=tier_sum_eps,
        check_fn=_check,
        diagnostics_fn=_diagnostics,
        covers_fn=_covers,
    )
)
