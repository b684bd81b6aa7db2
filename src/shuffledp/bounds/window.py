"""Certified lower bound from windows of the shuffled output (registered ``window_lower``).

Any post-processing of the shuffled multiset gives a valid lower bound on the true
``delta(eps)`` of the shuffled protocol (the hockey-stick divergence cannot grow under
post-processing; Balle, Barthe, Gaboardi, NeurIPS 2018, Section 2).  This bound uses a coarse
one, computable exactly for every randomizer of :mod:`shuffledp.mechanisms` and any profile
(docs/theory.md, section 13; the design notes, 9.1, last paragraph):

* the victim ``v`` holds ``x^0`` or ``x^1`` (``-1`` / ``+1`` for the randomizers of values in
  [-1, 1], ``0`` / ``1`` for randomized response); every other user holds one input ``x*``;
* two disjoint *windows* ``W_L``, ``W_R`` are chosen around the victim's two outputs, and every
  report gets a score: ``-lam_L`` in ``W_L``, ``+lam_R`` in ``W_R``, 0 elsewhere;
* the statistic is the sum of the scores, ``S = lam_R N_R - lam_L N_L`` with ``N_L``, ``N_R``
  the numbers of reports in the windows: a function of the multiset.

User j's score is an independent variable on three values with probabilities
``(a_j, 1 - a_j - b_j, b_j)`` = the masses of ``W_L``, the rest and ``W_R`` under
``R_j(x*)``; so the law of the others' sum is a sum of independent lattice variables, computed
exactly (:func:`shuffledp.poisson_binomial.lattice_sum_pmf`: convolution powers per budget
tier, a batched FFT tree for distinct budgets), and the victim's score is convolved in with its
two window masses.  The exact hockey-stick divergence of the two laws of ``S``, both
directions, is the pair's ``delta(eps)``; the bound is the maximum over a grid of victims,
others' inputs ``x*``, windows and weights (all computed, none chosen by an approximation).
With ``lam_L = lam_R`` and binary outputs this is the exact law of the count of ones (the
extreme pairs of ``rr_exact``).

Why two windows and weights: measured on victim eps_v = 4, 999 users at 0.5, Laplace,
delta = 1e-6 (docs/theory.md 13.2): one window gives 0.305, the two-window count difference
0.350, weights (1, 2) 0.366, the exact law of the pair of counts 0.367.

Numerics (a lower bound must not round up; docs/theory.md 13.3): the law of the others' sum
is cut at both ends by Bernstein's inequality (``dropped_mass``, at most ``TOL``), its FFT
round-off is estimated as in :mod:`shuffledp.poisson_binomial` and charged **ten times**
(convolutions up to ``DIRECT_WORK`` are direct, without it); every window mass is computed
without subtracting from 1 and carries its own error bound (:func:`cell_masses`), which
becomes a relative error ``rho_j`` of user j's score law, so each term of the law of the sum
is within a relative ``expm1(sum_j rho_j)``; the direct convolutions (sums of non-negative
terms) add the relative error that :func:`~shuffledp.poisson_binomial.lattice_sum_pmf_rtol`
propagates through the convolution powers (each direct convolution adds gamma_m for m
products per entry, errors of the factors add; with more than 64 tiers the generous
``20 n (log2(n + 1) + 66) u`` of the one-by-one sums), and each victim's convolution
``6 u``.  All of it is subtracted (:func:`shuffledp.hockey_stick.prepared_delta`): the relative
parts times ``P + e^eps Q`` of the summed outcomes, the absolute ones times ``1 + e^eps``.

Code names: ``eps_v`` = the victim's budget, ``x_star`` = x*, ``lam`` = (lam_L, lam_R),
``a``, ``b`` = window masses, ``kernel`` = the score law on ``0 .. lam_L + lam_R``.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from shuffledp._lazy import lazy_module
from shuffledp.bounds.base import Bound, BoundInfo, Coverage
from shuffledp.bounds.registry import register_bound
from shuffledp.budgets import BudgetProfile, profile_digest
from shuffledp.caching import lru_get, lru_put, register_mapping
from shuffledp.errors import ParameterRegimeError, short_repr
from shuffledp.families import Family, family_names, get_family
from shuffledp.families.windows import U as _U
from shuffledp.families.windows import Window, WindowConfig
from shuffledp.hockey_stick import PreparedPair, prepare_pair, prepared_delta
from shuffledp.lattice import lattice_sum_pmf_rtol
from shuffledp.poisson_binomial import TruncatedPMF

special = lazy_module("scipy.special")

__all__ = ["window_lower_delta", "window_pairs", "WindowConfig", "SUPPORTED", "cell_masses"]

#: Truncation of the others' law (subtracted times 1 + e^eps; far below any target delta).
TOL = 1e-40
#: Families with their window masses implemented (:meth:`Family.cell_masses`).
SUPPORTED = tuple(family_names(lambda f: f.provides("cell_masses")))
#: Profiles with more distinct budgets than this are summed user by user (the FFT tree).
MAX_USERS = 2_000_000
#: Safety factor on the FFT round-off estimate (an estimate, not a proof).
FFT_SAFETY = 10.0
#: Above this many users outside the candidate victims, the configurations are chosen by a
#: central-limit stand-in before the exact computation (:func:`_select`).
PROXY_N = 20_000
PROXY_DELTAS = (1e-3, 1e-6, 1e-9, 1e-12)
PROXY_KEEP = 2
#: Convolutions up to this much work (product of the lengths) are direct: no FFT round-off,
#: which a lower bound pays times 1 + e^eps.
DIRECT_WORK = 1 << 26


# --------------------------------------------------------------------------- window masses
def cell_masses(family: Family, x: float, eps: NDArray, delta: NDArray,
                window: Window) -> tuple[NDArray, ...]:
    """``(a, o, b, ea, eo, eb)``: the masses of ``W_L``, of the rest and of ``W_R`` under
    ``R_j(x)`` for users with budgets ``eps`` (and ``delta``), vectorised over users, and
    bounds on their absolute floating-point errors (the family's own,
    :meth:`~shuffledp.families.base.Family.cell_masses`).

    >>> a, o, b, *err = cell_masses(get_family("binary_rr"), 1.0,
    ...                             np.array([math.log(3.0)]), np.zeros(1), Window("values"))
    >>> round(float(a[0]), 12), float(o[0]), round(float(b[0]), 12)
    (0.25, 0.0, 0.75)
    >>> bool(max(float(e[0]) for e in err) < 1e-15)
    True
    """
    eps = np.atleast_1d(np.asarray(eps, dtype=np.float64))
    delta = np.atleast_1d(np.asarray(delta, dtype=np.float64))
    return family.cell_masses(x, eps, delta, window)


def _errors(a, o, b, ea, eo, eb) -> tuple[NDArray, NDArray]:
    """Per user: the relative error of its positive entries and the absolute error of entries
    computed as 0 (which then count as an l1 error of the law)."""
    rho = np.zeros_like(a)
    absolute = np.zeros_like(a)
    for v, e in ((a, ea), (o, eo), (b, eb)):
        pos = v > 0
        rho = np.where(pos, np.maximum(rho, e / np.where(pos, v, 1.0)), rho)
        absolute = absolute + np.where(pos, 0.0, e)
    return rho, absolute


# --------------------------------------------------------------------------- the grid
def _kernel(a: NDArray, o: NDArray, b: NDArray, lam: tuple[int, int]) -> NDArray:
    """Score law on 0 .. lam_L + lam_R (index lam_L = score 0), one row per user."""
    lam_l, lam_r = lam
    k = np.zeros((np.size(a), lam_l + lam_r + 1))
    k[:, 0] = a
    k[:, lam_l + lam_r] = b
    k[:, lam_l] = o
    return k


def _victim_tiers(counts: NDArray[np.int64], n: int) -> list[int]:
    """Tiers (indices into the profile's sorted budget tiers) of the candidate victims: every
    distinct (eps, delta) when at most three, else the smallest, the largest and the one
    holding the median user."""
    if counts.size <= 3:
        return list(range(counts.size))
    median = int(np.searchsorted(np.cumsum(counts), (n + 1) // 2))
    return sorted({0, counts.size - 1, median})


def _check_family(mechanism: Any) -> Family:
    """The randomizer of ``mechanism``: ``ValueError``/``TypeError`` for a spec that names no
    randomizer, :class:`ParameterRegimeError` (a ``ValueError``: "not applicable") for a
    randomizer without window masses (local hashing, the SGD randomizers, ``any``)."""
    fam = get_family(mechanism)
    if not fam.provides("cell_masses"):
        raise ParameterRegimeError(
            f"window_lower has no window masses for {fam}: its mechanism must be one of "
            f"{', '.join(SUPPORTED)} (krr as 'krr:k'), got mechanism = {short_repr(mechanism)}"
        )
    return fam


def window_pairs(profile: BudgetProfile, mechanism: Any = "binary_rr",
                 tol: float = TOL) -> list[PreparedPair]:
    """Every prepared pair of the grid (module docstring) for ``profile``."""
    fam = _check_family(mechanism)
    t = profile.tiers  # every user is read through the budget tiers (a histogram is not expanded)
    if fam.needs_delta and not profile.delta_min > 0:
        raise ParameterRegimeError(f"the {fam.display_name} randomizer needs delta_i > 0 for "
                                   f"every user ({fam.needs_delta_reason}); got "
                                   f"min delta_i = {profile.delta_min:g}")
    n = profile.n
    vt = _victim_tiers(t.counts, n)
    # the candidate victims as users 0..len(vt)-1 with these budgets; everyone else in tiers
    eps, delta = t.eps[vt].copy(), t.delta[vt].copy()
    victims = list(range(len(vt)))
    rest_counts = t.counts.copy()
    rest_counts[vt] -= 1
    keep = rest_counts > 0
    tiers = np.stack([t.eps[keep], t.delta[keep]], axis=1)
    counts = rest_counts[keep].astype(np.int64)
    n_rest = int(counts.sum())
    if not fam.window_delta:  # delta does not change a pure mechanism's masses
        tiers_e, inverse = np.unique(tiers[:, 0], return_inverse=True)
        counts = np.bincount(inverse, weights=counts).astype(np.int64)
        tiers = np.stack([tiers_e, np.zeros_like(tiers_e)], axis=1)
    if tiers.shape[0] > 64 and n_rest > MAX_USERS:
        raise ParameterRegimeError(
            f"window_lower sums distinct budgets user by user: at most {MAX_USERS} users with "
            f"more than 64 distinct budgets, got n = {n} with {tiers.shape[0]}"
        )
    # relative error of the direct recursions / convolutions (non-negative terms)
    configs: dict[tuple[float, float], list[WindowConfig]] = {}
    extra: dict[tuple[float, float], list[WindowConfig]] = {}
    for v in victims:
        key = (float(eps[v]), float(delta[v]))
        if key not in configs:
            configs[key] = fam.window_configs(*key)
            # everyone but this victim: the tiers' users and the other candidate victims
            others = np.concatenate([tiers[:, 0], np.delete(eps, v)])
            extra[key] = fam.profile_windows(*key, others)
    memo: dict[tuple[float, Window], tuple] = {}

    def tier_masses(x: float, window: Window) -> tuple:
        """cell_masses of every budget tier, memoised (shared by the weights)."""
        if (x, window) not in memo:
            memo[(x, window)] = cell_masses(fam, x, tiers[:, 0], tiers[:, 1], window)
        return memo[(x, window)]

    if n_rest > PROXY_N:
        configs = _select(fam, configs, tier_masses, counts, eps, delta, victims)
    # the windows of the others' budgets are few and always computed (their counts are rare
    # events, which the central-limit stand-in of _select ranks poorly)
    configs = {key: cs + [c for c in extra[key] if c not in cs] for key, cs in configs.items()}
    out: list[PreparedPair] = []
    for cfg in dict.fromkeys(c for cs in configs.values() for c in cs):
        if tiers.shape[0]:
            ta, to, tb, *terr = tier_masses(cfg.x_star, cfg.window)
            rho, absolute = _errors(ta, to, tb, *terr)
            # users with both window masses computed as 0 only scale the law by their rest
            # mass: left out of the convolution, their product (rounded down) multiplies it
            live = (ta > 0) | (tb > 0)
            if live.all():
                law, law_rel = lattice_sum_pmf_rtol(_kernel(ta, to, tb, cfg.lam), counts,
                                                    tol=tol, max_expanded=MAX_USERS,
                                                    direct_work=DIRECT_WORK)
            elif live.any():
                law, law_rel = lattice_sum_pmf_rtol(
                    _kernel(ta[live], to[live], tb[live], cfg.lam), counts[live], tol=tol,
                    max_expanded=MAX_USERS, direct_work=DIRECT_WORK)
            else:
                law, law_rel = TruncatedPMF(0, np.ones(1), 0.0, 0.0), 0.0
            if not live.all():
                dead = ~live
                log_scale = float(np.dot(counts[dead], np.log(np.maximum(to[dead], 1e-300))))
                scale = math.exp(log_scale) * (1.0 - 1e-12)  # below the computed product
                law = TruncatedPMF(law.offset, law.pmf * scale, law.dropped_mass,
                                   law.error_l1)
            rho_rest = float((rho * counts).sum())
            abs_rest = float((absolute * counts).sum())
        else:  # every user is a candidate victim
            law, rho_rest, abs_rest = TruncatedPMF(0, np.ones(1), 0.0, 0.0), 0.0, 0.0
            law_rel = 0.0
        # the victims' short convolutions (at most 5 products per entry each)
        rtol_sum = (1.0 + law_rel) * (1.0 + 6.0 * _U) ** (len(victims) + 1) - 1.0
        for v in victims:
            if cfg not in configs[(float(eps[v]), float(delta[v]))]:
                continue
            f = law.pmf
            rho_v, abs_v = rho_rest, abs_rest
            for u in victims:  # the other candidate victims are ordinary users here
                if u == v:
                    continue
                ua, uo, ub, *uerr = cell_masses(fam, cfg.x_star, eps[u:u + 1],
                                                delta[u:u + 1], cfg.window)
                r, ab = _errors(ua, uo, ub, *uerr)
                rho_v, abs_v = rho_v + float(r[0]), abs_v + float(ab[0])
                f = np.convolve(f, _kernel(ua, uo, ub, cfg.lam)[0])
            pq = []
            for x in (cfg.x0, cfg.x1):
                va, vo, vb, *verr = cell_masses(fam, x, eps[v:v + 1], delta[v:v + 1],
                                                cfg.window)
                r, ab = _errors(va, vo, vb, *verr)
                rho_v, abs_v = rho_v + float(r[0]), abs_v + float(ab[0])
                pq.append(np.convolve(f, _kernel(va, vo, vb, cfg.lam)[0]))
            # a product of n factors each within a relative rho_j: within expm1(sum rho_j)
            rtol = math.expm1(min(rho_v, 700.0)) + rtol_sum
            slack = law.dropped_mass + FFT_SAFETY * law.error_l1 + abs_v
            out.append(prepare_pair(pq[0], pq[1], slack=slack, rtol=rtol,
                                    label=f"victim eps={eps[v]:g} {cfg.label}",
                                    ops=n * (sum(cfg.lam) + 1) + 64))
    return out


def _moments(a: NDArray, b: NDArray, lam: tuple[int, int]) -> tuple[NDArray, NDArray]:
    mean = lam[1] * b - lam[0] * a
    return mean, np.maximum(lam[1] ** 2 * b + lam[0] ** 2 * a - mean**2, 0.0)


def _select(fam: Family, configs: dict, tier_masses: Callable[..., tuple],
            counts: NDArray, eps: NDArray, delta: NDArray, victims: list[int]) -> dict:
    """Keep, per victim, the configurations that rank in the top :data:`PROXY_KEEP` at one of
    :data:`PROXY_DELTAS` under a central-limit stand-in for the others' sum (a normal law on
    the lattice with the exact mean and variance).  Only the *choice* uses the stand-in: every
    kept configuration is then computed exactly, so the bound stays a certified lower bound;
    a poor choice only makes it smaller."""
    kept: dict = {}
    for v in victims:
        key = (float(eps[v]), float(delta[v]))
        if key in kept:
            continue
        others = [u for u in victims if u != v]
        scores: list[tuple[WindowConfig, list[float]]] = []
        for cfg in configs[key]:
            ta, _, tb, *_ = tier_masses(cfg.x_star, cfg.window)
            m, var = _moments(ta, tb, cfg.lam)
            mean, variance = float((m * counts).sum()), float((var * counts).sum())
            for u in others:
                ua, _, ub, *_ = cell_masses(fam, cfg.x_star, eps[u:u + 1], delta[u:u + 1],
                                            cfg.window)
                mu, vu = _moments(ua, ub, cfg.lam)
                mean, variance = mean + float(mu[0]), variance + float(vu[0])
            sd = math.sqrt(max(variance, 1e-12))
            grid = np.arange(math.floor(mean - 12 * sd) - 1, math.ceil(mean + 12 * sd) + 2)
            g = np.diff(special.ndtr((np.append(grid, grid[-1] + 1) - 0.5 - mean) / sd))
            pq = []
            for x in (cfg.x0, cfg.x1):
                va, vo, vb, *_ = cell_masses(fam, x, eps[v:v + 1], delta[v:v + 1], cfg.window)
                pq.append(np.convolve(g, _kernel(va, vo, vb, cfg.lam)[0]))
            prep = prepare_pair(pq[0], pq[1], slack=0.0, rtol=0.0)
            vals = []
            for d in PROXY_DELTAS:
                lo, hi = 0.0, max(float(eps[v]), 1e-9) * 1.5 + 1.0
                for _ in range(40):
                    mid = 0.5 * (lo + hi)
                    lo, hi = (mid, hi) if prepared_delta(prep, mid) > d else (lo, mid)
                vals.append(lo)
            scores.append((cfg, vals))
        chosen: dict[WindowConfig, None] = {}
        for i in range(len(PROXY_DELTAS)):
            for cfg, _ in sorted(scores, key=lambda t: -t[1][i])[:PROXY_KEEP]:
                chosen[cfg] = None
        kept[key] = list(chosen)
    return kept


_CACHE: OrderedDict[tuple, list[PreparedPair]] = OrderedDict()
register_mapping("window_lower.pairs", _CACHE)
_CACHE_SIZE = 16


def _prepared(profile: BudgetProfile, mechanism: Any, tol: float) -> list[PreparedPair]:
    key = (profile_digest(profile), get_family(mechanism).spec, float(tol))
    hit = lru_get(_CACHE, key)
    if hit is not None:
        return hit
    return lru_put(_CACHE, key, window_pairs(profile, mechanism, tol), _CACHE_SIZE)


def _check(*, profile: BudgetProfile, mechanism: Any = "binary_rr", tol: float = TOL) -> None:
    fam = _check_family(mechanism)
    if fam.needs_delta and not profile.delta_min > 0.0:
        raise ParameterRegimeError(
            f"window_lower with the {fam.display_name} mechanism needs delta_i > 0 for every "
            f"user ({fam.needs_delta_reason}); got min delta_i = {profile.delta_min:g}")
    if not (isinstance(tol, (int, float)) and not isinstance(tol, bool) and 0.0 <= tol < 1e-20):
        raise ValueError(f"tol must be in [0, 1e-20), got {short_repr(tol)}")


def window_lower_delta(*, profile: BudgetProfile, eps: float, mechanism: Any = "binary_rr",
                       tol: float = TOL) -> float:
    """Max over the grid of the exact delta(eps) of the windowed statistic (a lower bound on
    the true delta(eps) of the shuffled ``mechanism`` with the profile's budgets).

    >>> from shuffledp import BudgetProfile
    >>> p = BudgetProfile.from_arrays([4.0] + [0.5] * 299)
    >>> bool(window_lower_delta(profile=p, eps=0.7, mechanism="laplace") > 1e-6)  # 0.709
    True
    """
    if not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    _check(profile=profile, mechanism=mechanism, tol=tol)
    if eps >= profile.eps_max and get_family(mechanism).pure:
        return 0.0  # every user is eps_max-LDP, so is the shuffled output: the truth is 0
    pairs = _prepared(profile, mechanism, tol)
    return max(prepared_delta(pr, float(eps)) for pr in pairs)


def best_pair(profile: BudgetProfile, eps: float, mechanism: Any = "binary_rr",
              tol: float = TOL) -> tuple[str, float]:
    """The label and value of the pair attaining :func:`window_lower_delta` at ``eps``."""
    pairs = _prepared(profile, mechanism, tol)
    vals = [prepared_delta(pr, float(eps)) for pr in pairs]
    i = int(np.argmax(vals))
    return pairs[i].label, float(vals[i])


def _diagnostics(*, profile: BudgetProfile, eps: float, delta: float,
                 mechanism: Any = "binary_rr", tol: float = TOL) -> dict[str, Any]:
    label, _ = best_pair(profile, eps, mechanism, tol)
    return {"pairs_searched": len(_prepared(profile, mechanism, tol)),
            "best_pair": label, "mechanism": get_family(mechanism).spec}


def _covers(*, family: Family, profile: BudgetProfile, mechanism: Any = "binary_rr",
            tol: float = TOL) -> Coverage:
    own = _check_family(mechanism)
    if family.includes(own):
        return Coverage(True, f"a post-processing of shuffled {own}, one of the {family} "
                              "protocols: a lower bound for it")
    return Coverage(False, f"window_lower (mechanism {own}) is a lower bound for {own} "
                           f"protocols, not for {family}")


BOUND = register_bound(
    Bound(
        info=BoundInfo(
            name="window_lower",
            kind="lower",
            title="Windowed counts of the shuffled reports, exact law (certified lower bound)",
            citation="post-processing of the shuffled multiset; docs/theory.md 13",
            personalized=True,
            approx_ldp=True,
            randomizers=("binary_rr",),
            options={"mechanism": "binary_rr", "tol": TOL},
            coverage_note="a lower bound for its mechanism (option mechanism: laplace, "
                          "gaussian, piecewise, duchi, binary_rr, krr:k, oue:d)",
        ),
        delta_fn=window_lower_delta,
        check_fn=_check,
        diagnostics_fn=_diagnostics,
        covers_fn=_covers,
    )
)
