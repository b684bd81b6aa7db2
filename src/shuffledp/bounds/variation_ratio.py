"""The variation-ratio pair of Wang et al.: registered ``variation_ratio`` (kind ``upper``, the
proven general row) and ``variation_ratio_claimed`` (kind ``approximate``, every mechanism's
row as published, to compare with the authors' numbers; not a bound where gamma > 0).

Source.  S. Wang et al., "Privacy Amplification via Shuffling: Unified, Simplified, and
Tightened", PVLDB 17 (2024), arXiv 2304.05007: Lemma 4.4 (decomposition of a (p, beta, q)-
variation-ratio randomizer), Theorems 4.7 and 4.8 (the dominating pair and its divergence).
The theorem numbers are those of the version the project was given; the arXiv version was not
re-checked here.  Derivations, the parameter table and counterexamples: docs/theory.md,
section 11.

The pair.  With ``alpha = beta / (p - 1)``, ``gamma = 1 - alpha - p alpha`` and
``r = alpha p / q``: ``C ~ Bin(n - 1, 2 r)``, ``A | C ~ Bin(C, 1/2)``; the victim adds
``(1, 0)`` w.p. ``p alpha``, ``(0, 1)`` w.p. ``alpha`` and nothing w.p. ``gamma`` under x^0
(``p alpha`` and ``alpha`` swapped under x^1); the analyst sees ``(A + D1, C - A + D2)``.  For a
total ``s`` the likelihood ratio increases in the first count, so ``delta(eps)`` is a sum over
``s`` of binomial tails above a threshold (docs/theory.md 11.2, :func:`pair_delta`).

What is proven, and what this bound therefore computes.

* ``gamma = 0`` (the general parameters p = q = e^eps0, beta = tanh(eps0/2), which are also
  those of binary randomized response and one-bit Duchi): the pair is, up to relabelling, the
  stronger-clone pair of FMT23 at eps0, a proven bound for every family dominating the clone
  mass 2/(1 + e^eps0) (binary RR, one-bit Duchi, k-RR; docs/theory.md 3 and 6), identical and,
  through the worst user, personalized budgets (docs/theory.md 7, Theorem 5).  This is the
  registered bound, and ``covers`` reports exactly that set (``clone_mass="stronger"``).
* ``gamma > 0`` (the rows for k-RR, Laplace, piecewise, OUE): Theorems 4.7/4.8 are false
  there in general, already with identical budgets, and unproven for each such row (the
  proof's step fails; explicit counterexamples for the k-RR and OUE rows).  3-RR, eps0 = 1,
  n = 2, victim 0 vs 1, the other user holding 0: the exact shuffled delta(0.8) is 0.0602,
  the pair gives 0.0272; OUE with d = 3 fails likewise (docs/theory.md 11.4).  The option
  ``mechanism`` with such a family raises :class:`~shuffledp.errors.ParameterRegimeError`;
  :func:`pair_delta` still evaluates the pair (to reproduce the authors' numbers and to
  exhibit the counterexamples).
* Not pure (Gaussian): not covered (``ParameterRegimeError``).

Code names -> paper symbols: ``params.log_p`` = log p, ``params.beta`` = beta,
``params.log_q`` = log q, ``alpha``, ``gamma`` = 1 - alpha - p alpha, ``r``; ``s`` = a + b (the
total of the observed pair), ``f`` = the pmf of C, ``E`` = e^eps, ``low`` = the threshold
low(c) of Theorem 4.8 (docs/theory.md 11.2).

Numerics (docs/theory.md 11.7): C is one binomial window (``binomial_windows`` with the
accurate complement ``1 - 2 r``) cut at ``1e-40`` (a first evaluation trims it to tails of
``1e-15`` and keeps that when the trimmed mass is below 1e-3 of the result); cut mass is
charged at divergence 1; each conditional sum is evaluated at the computed threshold, and at
its two neighbours where the threshold is within rounding of an integer (each partial sum is
at most the positive part, so the largest is safe), and charged the relative errors of
scipy's binomial pmf and survival function.  The shared inversion returns eps on the
upper side.

>>> round(pair_eps(n=10_000, delta=1e-6, params=parameters(None, 1.0)), 4)  # authors: 0.043206
0.0432
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from shuffledp.binomial import MIN_COMPLEMENT as _MIN_COMPLEMENT
from shuffledp.binomial import PMF_RTOL as _PMF_RTOL
from shuffledp.binomial import SF_ATOL as _SF_ATOL
from shuffledp.binomial import SF_RTOL as _SF_RTOL
from shuffledp.binomial import binom_half_sf as _binom_half_sf
from shuffledp.bounds.base import (
    INVERSION_ATOL,
    INVERSION_RTOL,
    Bound,
    BoundInfo,
    Coverage,
    default_coverage,
)
from shuffledp.bounds.registry import register_bound
from shuffledp.budgets import BudgetProfile
from shuffledp.errors import ParameterRegimeError
from shuffledp.families import Family, VariationRatio, get_family
from shuffledp.numerics import eps_from_delta
from shuffledp.poisson_binomial import TruncatedPMF, binomial_windows

__all__ = [
    "TOL",
    "pair_delta",
    "parameters",
    "variation_ratio_delta",
    "pair_eps",
    "variation_ratio_coverage",
    "claimed_delta",
    "BOUND",
    "CLAIMED",
]

#: Truncation of the window of C: 1e-10 of the smallest accepted target (1e-30), charged at
#: divergence 1.
TOL = 1e-40
#: First evaluation: the window trimmed to tails of 1e-15; the full window is used when the
#: charged trimmed mass exceeds 1e-3 of the result (as in clones' refinement).
_FIRST_TOL = 1e-15
_REFINE_RATIO = 1e-3
_U = float(np.finfo(float).eps) / 2.0
#: Relative error of each term of a conditional sum: scipy's pmf and survival function
#: (measured in tests/bounds/test_clones.py, allowances of clones.py) plus the few roundings of the
#: products and of alpha, gamma, expm1 (at most 64 u).
_TERM_RTOL = _PMF_RTOL + _SF_RTOL + 64.0 * _U

def _complement(params: VariationRatio) -> float:
    """1 - 2 r, at least 1e-200 as in clones (a clone probability lowered by at most 1e-200:
    fewer clones, a larger divergence for gamma = 0; keeps scipy's binomial functions out of
    the subnormal range, where they overflow)."""
    return max(params.r_complement, _MIN_COMPLEMENT)


def _window(n: int, params: VariationRatio) -> tuple[TruncatedPMF, TruncatedPMF]:
    """The window of C ~ Bin(n - 1, 2 r) cut at ``TOL``, and the same trimmed to tails of at
    most ``_FIRST_TOL`` (their computed mass, inflated by the pmf's relative error, is added to
    the dropped mass).  Not cached: it costs a few ms even at n = 10^8, far less than the sum
    over the window."""
    full = binomial_windows(np.array([n - 1]), np.array([min(2.0 * params.r, 1.0)]), TOL,
                            np.array([_complement(params)]))[0]
    f = full.pmf
    left, right = np.cumsum(f), np.cumsum(f[::-1])[::-1]  # non-decreasing partial sums
    i = int(np.searchsorted(left, _FIRST_TOL / 2.0, side="right"))  # sum f[:i] <= tol/2
    j = f.size - int(np.searchsorted(right[::-1], _FIRST_TOL / 2.0, side="right"))
    if i >= j or (i == 0 and j == f.size):
        return full, full
    cut = (float(left[i - 1]) if i > 0 else 0.0) + (float(right[j]) if j < f.size else 0.0)
    first = TruncatedPMF(full.offset + i, f[i:j], full.dropped_mass + cut * (1.0 + _TERM_RTOL),
                         0.0)
    return full, first


def pair_delta(*, n: int, eps: float, params: VariationRatio) -> float:
    """H_{e^eps}(P || Q) of Wang et al.'s pair (Theorems 4.7/4.8), upper side of round-off.

    Equal to H(Q || P) (mirror (a, b) -> (b, a), docs/theory.md 11.2).  A privacy bound only
    when ``params.gamma == 0`` (module docstring); for ``gamma > 0`` it is the authors' number.

    >>> from shuffledp.families import get_family
    >>> v = get_family("binary_rr").variation_ratio(math.log(3.0))
    >>> d = pair_delta(n=1, eps=0.0, params=v)  # the victim alone: 3/4 - 1/4
    >>> bool(0.5 <= d <= 0.5 + 1e-8)  # round-off is charged upwards
    True
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if not isinstance(params, VariationRatio):
        raise TypeError(f"params must be a VariationRatio, got {type(params).__name__}")
    if not (math.isfinite(eps) and eps >= 0.0):
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    if eps >= params.log_p:  # every likelihood ratio of the pair is below p
        return 0.0
    full, first = _window(int(n), params)
    value = _pair_sum(int(n), float(eps), params, first)
    if first.dropped_mass > _REFINE_RATIO * value and full is not first:
        value = min(value, _pair_sum(int(n), float(eps), params, full))
    return float(min(1.0, value))


def _pair_sum(n: int, eps: float, params: VariationRatio, win: TruncatedPMF) -> float:
    """The bound on H(P || Q) with C's pmf taken from ``win`` (its dropped mass charged at
    divergence 1, docs/theory.md 11.7)."""
    lo, f = int(win.offset), win.pmf
    hi = lo + f.size - 1
    big_e = math.exp(eps)  # eps < log p <= 700
    a, g = params.alpha, params.gamma
    ap = a * params.p
    pe = -ap * math.expm1(eps - params.log_p)  # alpha (p - E) > 0
    one_ep = -a * math.expm1(eps + params.log_p)  # alpha (1 - E p) < 0
    one_e = -g * math.expm1(eps)  # gamma (1 - E) <= 0
    # totals s with f_{s-1} in the window (s = lo has f_{lo-1} = 0 after the cut: its
    # positive part is 0); f_s is 0 for s = hi + 1 (cut, or the end of the support at n)
    s = np.arange(lo + 1, min(hi + 1, n) + 1, dtype=np.int64)
    if s.size == 0:
        return win.dropped_mass * (1.0 + _TERM_RTOL)
    f_prev = f[s - 1 - lo]
    inner = s <= hi
    f_s = np.where(inner, f[np.minimum(s, hi) - lo], 0.0)
    # s - low(s) (docs/theory.md 11.2), with the binomial ratio s f_s / f_{s-1} =
    # (n - s) 2 r / (1 - 2 r) where f_s is kept, and 0 where it is cut
    denom = (big_e + 1.0) * math.expm1(params.log_p)
    pq = math.exp(params.log_p - params.log_q)
    common = np.where(inner, (n - s) * (g * math.expm1(eps) * pq / _complement(params)), 0.0)
    term = s * (-params.p * math.expm1(eps - params.log_p))
    gap = (term - common) / denom
    t = s - np.ceil(gap).astype(np.int64) + 1
    c_prev = s - 1
    g_s = np.where(inner, f_s * one_e, 0.0)

    def partial(tt: NDArray[np.int64], i: slice | NDArray[np.int64]) -> tuple[NDArray, NDArray]:
        """sum_{a >= tt} (P - E Q)(a, s - a) and the bound on its round-off, for the totals
        s[i]; S_s(k) = (S_{s-1}(k) + S_{s-1}(k-1)) / 2 (one more fair coin)."""
        s_a = _binom_half_sf(tt - 1, c_prev[i])
        s_b = _binom_half_sf(tt, c_prev[i])
        t1, t2, t3 = f_prev[i] * pe * s_a, f_prev[i] * one_ep * s_b, g_s[i] * 0.5 * (s_a + s_b)
        return t1 + t2 + t3, _TERM_RTOL * (t1 + np.abs(t2) + np.abs(t3)) + _SF_ATOL

    h, rho = partial(t, slice(None))
    # a rounding error of gap can only cross an integer where gap is that close to one:
    # there the neighbouring thresholds are tried too (every partial sum is <= H_s)
    slack = 1e-12 * (np.abs(term) + np.abs(common)) / denom + 1e-12
    near = np.flatnonzero(np.abs(gap - np.round(gap)) <= slack)
    for shift in (-1, 1):
        if near.size:
            h2, rho2 = partial(t[near] + shift, near)
            better = h2 + rho2 > h[near] + rho[near]
            h[near[better]], rho[near[better]] = h2[better], rho2[better]
    return float(np.maximum(h, 0.0).sum() + rho.sum()) + win.dropped_mass * (1.0 + _TERM_RTOL)


def _row(fam: Family, eps0: float, name: str, why: str) -> VariationRatio:
    """The family's (p, beta, q) row at ``eps0``; ParameterRegimeError when not pure LDP."""
    params = fam.variation_ratio(eps0)
    if params is None:
        raise ParameterRegimeError(
            f"{name} with mechanism {fam.spec!r}: not pure LDP ({why})")
    return params


def parameters(mechanism: Any, eps0: float) -> VariationRatio:
    """The (p, beta, q) parameters the bound uses at ``eps0``: the general row when
    ``mechanism`` is None, else the family's own (:meth:`Family.variation_ratio`).

    Raises :class:`ParameterRegimeError` for a family that is not pure LDP, or whose
    parameters have ``gamma > 0`` (Theorems 4.7/4.8 are false there, docs/theory.md 11.4).

    >>> parameters(None, 1.0).gamma
    0.0
    >>> parameters("krr:10", 1.0)
    Traceback (most recent call last):
    ...
    shuffledp.errors.ParameterRegimeError: variation_ratio with mechanism 'krr:10': ...
    """
    fam = get_family("any" if mechanism is None else mechanism)
    params = _row(fam, eps0, "variation_ratio",
                  "no finite p; use clones with mechanism='gaussian' (docs/theory.md 8)")
    if params.gamma > 0.0:
        raise ParameterRegimeError(
            f"variation_ratio with mechanism {fam.spec!r}: its parameters have a common share "
            f"gamma = {params.gamma:.4g} > 0, where Wang et al.'s Theorems 4.7/4.8 are false "
            "in general (identical budgets: 3-RR, eps0 = 1, n = 2 has delta(0.8) = 0.0602 > "
            "0.0272 of the pair; OUE likewise) and unproven for every such row "
            "(docs/theory.md 11.4); only the general parameters (mechanism None, binary_rr, "
            "duchi, any) are proven")
    return params


def _check(*, profile: BudgetProfile, mechanism: Any = None) -> None:
    parameters(mechanism, profile.eps_max)


def variation_ratio_delta(*, profile: BudgetProfile, eps: float, mechanism: Any = None) -> float:
    """The registered ``delta(eps)``: :func:`pair_delta` with the parameters of
    :func:`parameters` at eps0 (identical budgets; a personalized profile arrives reduced to
    its worst user by :class:`~shuffledp.bounds.base.Bound`).

    >>> from shuffledp import BudgetProfile
    >>> variation_ratio_delta(profile=BudgetProfile.identical(n=50, eps0=1.0), eps=1.0)
    0.0
    """
    if not (math.isfinite(eps) and eps >= 0.0):
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    eps0 = profile.eps_max
    return pair_delta(n=profile.n, eps=float(eps), params=parameters(mechanism, eps0))


def pair_eps(*, n: int, delta: float, params: VariationRatio) -> float:
    """eps(delta) of the pair by the shared inversion (upper side of the computed pair),
    capped at log p.  For any parameter row, also ``gamma > 0`` (then the authors' number, not
    a bound); the registered bound goes through :class:`~shuffledp.bounds.base.Bound`.

    >>> from shuffledp.families import get_family
    >>> pair_eps(n=2, delta=0.5, params=get_family("binary_rr").variation_ratio(1.0)) < 1.0
    True
    """
    e = eps_from_delta(lambda x: pair_delta(n=n, eps=x, params=params), delta, side="upper",
                       rtol=INVERSION_RTOL, atol=INVERSION_ATOL)
    return min(e, params.log_p)


def variation_ratio_coverage(*, family: Family, profile: BudgetProfile,
                             mechanism: Any = None) -> Coverage:
    """Whether the bound is a guarantee when every user i runs ``family`` with budget eps_i.

    The computed pair is the stronger-clone pair at eps0 = max eps_i (``gamma = 0``), so it
    covers exactly the families that dominate the clone mass 2/(1 + e^eps0) against every
    victim (identical budgets: docs/theory.md 3, Theorem 1; personalized: Theorem 5).

    >>> from shuffledp import BudgetProfile
    >>> from shuffledp.families import get_family
    >>> p = BudgetProfile.identical(n=100, eps0=1.0)
    >>> variation_ratio_coverage(family=get_family("krr:10"), profile=p).covered
    True
    >>> variation_ratio_coverage(family=get_family("laplace"), profile=p).covered
    False
    """
    try:
        parameters(mechanism, profile.eps_max)
    except ParameterRegimeError as err:
        return Coverage(False, str(err))
    return default_coverage(BOUND.info, family, profile)


def _diagnostics(*, profile: BudgetProfile, eps: float, delta: float,
                 mechanism: Any = None) -> dict[str, Any]:
    v = parameters(mechanism, profile.eps_max)
    win = _window(profile.n, v)[0]
    return {"mechanism": None if mechanism is None else get_family(mechanism).spec,
            "vr_beta": v.beta, "vr_alpha": v.alpha, "vr_gamma": v.gamma,
            "expected_clones": 2.0 * v.r * (profile.n - 1), "dropped_mass": win.dropped_mass}


BOUND = register_bound(
    Bound(
        info=BoundInfo(
            name="variation_ratio",
            kind="upper",
            title="Variation-ratio pair (Wang et al. 2024), general parameters",
            citation=("Wang et al., PVLDB 2024, arXiv 2304.05007, Lemma 4.4, Theorems 4.7/4.8 "
                      "(general parameters only; docs/theory.md 11)"),
            personalized=False,
            approx_ldp=False,
            randomizers=("binary_rr", "duchi", "krr"),
            options={"mechanism": None},
            clone_mass="stronger",
            coverage_note=(
                "the stronger-clone pair at eps0: binary RR, one-bit Duchi, k-RR (identical, "
                "and personalized through the worst user); family parameters with gamma > 0 "
                "are refused (the theorem is false there)"
            ),
        ),
        delta_fn=variation_ratio_delta,
        check_fn=_check,
        diagnostics_fn=_diagnostics,
        covers_fn=variation_ratio_coverage,
    )
)


# --------------------------------------------------------------------------- the published claim
def _claimed_parameters(mechanism: Any, eps0: float) -> VariationRatio:
    fam = get_family("any" if mechanism is None else mechanism)
    return _row(fam, eps0, "variation_ratio_claimed",
                "the published parameter table has no row for it")


def _claimed_check(*, profile: BudgetProfile, mechanism: Any = None) -> None:
    _claimed_parameters(mechanism, profile.eps_max)


def claimed_delta(*, profile: BudgetProfile, eps: float, mechanism: Any = None) -> float:
    """``delta(eps)`` of Wang et al.'s pair with the family's own (p, beta, q) row, as
    published (also ``gamma > 0``, where it is *not* a bound: docs/theory.md 11.4).

    >>> from shuffledp import BudgetProfile
    >>> p = BudgetProfile.identical(n=2, eps0=1.0)
    >>> round(claimed_delta(profile=p, eps=0.8, mechanism="krr:3"), 4)  # exact 3-RR: 0.0602
    0.0272
    """
    if not (math.isfinite(eps) and eps >= 0.0):
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    return pair_delta(n=profile.n, eps=float(eps),
                      params=_claimed_parameters(mechanism, profile.eps_max))


def _claimed_coverage(*, family: Family, profile: BudgetProfile,
                      mechanism: Any = None) -> Coverage:
    return Coverage(False, "variation_ratio_claimed is the published statement, an "
                    "approximation: false for parameter rows with gamma > 0 (docs/theory.md "
                    "11.4); the proven part is the rigorous variation_ratio")


CLAIMED = register_bound(
    Bound(
        info=BoundInfo(
            name="variation_ratio_claimed",
            kind="approximate",
            title="Variation-ratio pair (Wang et al. 2024) with each mechanism's row, as "
                  "published (not a bound where gamma > 0)",
            citation=("Wang et al., PVLDB 2024, arXiv 2304.05007, Theorems 4.7/4.8 with the "
                      "parameter table of Section 4; counterexamples: docs/theory.md 11.4"),
            personalized=False,
            approx_ldp=False,
            randomizers=("binary_rr", "duchi", "krr", "laplace", "piecewise", "oue"),
            options={"mechanism": None},
            coverage_note=(
                "the authors' numbers for their mechanism rows (k-RR, Laplace, OUE, ...): an "
                "approximation, false for rows with a common share gamma > 0"
            ),
        ),
        delta_fn=claimed_delta,
        check_fn=_claimed_check,
        covers_fn=_claimed_coverage,
    )
)
