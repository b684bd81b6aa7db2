"""Mechanism-aware clone reduction for personalized budgets: the ``mechanism`` option of
``clones``.

The generic ``clones`` gives user j one clone mass r_j for every victim and takes the
conservative victim of Theorem 2 (docs/theory.md, Section 4).  That is valid only when every
user dominates r_j against every other user as victim, which fails for most randomizers with
personalized budgets (Laplace, piecewise, k-RR, Gaussian: a user with a larger budget has
lighter tails than a victim with a smaller one).  Here the masses are the randomizer's own,
*per victim*::

    m_j(v) = (1 - delta_j) r_F(eps_v, eps_j)              (pure families, Section 6)
    m_j(v) = (1 - delta'_v) e^{-eps_v} rho_T(sigma_v, sigma_j) min(1, (1 - delta_j)/M_j)
                                                          (Gaussian, Section 8, Lemma 6, 7)

and the bound is the maximum over victims.  Victims are handled in *groups* (contiguous ranges
of budget tiers): for a group the victim's budget is the group's largest eps (and delta), the
masses are lower bounds over every victim of the group, and one user of the group with the
largest mass is left out of the pool (docs/theory.md, "Mechanism-aware clones", Theorem 3).
Every group bound is at least the bound of each of its victims, so the maximum over groups is
a valid bound for every victim.  Groups are equal-count ranges of the tiers, refined
geometrically at both ends (where the worst victims sit: the smallest budgets have the fewest
clones, the largest the strongest reports).

Tail cuts (Gaussian and Laplace victims).  The victim's pure part can be cut to ``|y| <= T``, the
mass beyond T (at most ``eta``) joining the victim's delta (Lemmas 7, 8).  Users with lighter
tails then dominate a positive mass.  Every T is valid; for each group the code tries
T = infinity and a grid of eta (quarter decades from 1e-2 to 1e-16, ``TAIL_GRID``) and keeps
the smallest delta it finds ("Search" below).

Bins (profiles with more than ``BIN_MIN_TIERS`` distinct budgets).  For the families with
``binnable`` (``krr``, ``laplace``, ``piecewise``, ``gaussian`` and ``oue``), contiguous ranges
of at most ``ceil(tiers / 65536)`` tiers inside a group form one user class, given the smaller
of the masses of its two end budgets (OUE, whose mass is not monotone in either budget:
the box bound over the group's victims and the bin's users, :func:`shuffledp.families.oue.oue_box`).
That is a lower bound over the range (rounding down, valid by Theorem 3): at a fixed victim,
the log-mass is concave in the user's budget (Laplace:
log eps_j - c eps_j, also with the cut; piecewise: log((t - 1) / (t (t + 1))),
t = e^{eps_j / 2}; Gaussian: -w - u^2 e^{-2w} / 2 in w = log sigma_j) or monotone (k-RR),
times an indicator of an interval (zero below), so its minimum over a range is at an end.
Gaussian with one delta: sigma_j decreases in eps_j and is computed only where the bins start
(a bin's scales lie between those of its first tier and of the next bin's first tier), widened
by a relative 1e-9 (the calibration returns sigma within a relative 1e-10 of its monotone
optimum); kappa_j (decreasing in sigma_j) at the larger end.  Each group's first tier is a bin
of its own.  Measured at n = 10^6 (uniform [0.5, 2]): eps(1e-6) up by 0.02% (Laplace), 0.04%
(Gaussian), 2e-6 (10-RR).

Screening.  Before a clone-count pmf is built for a group and a cut, a cheap valid bound is
tried: with F(k) = Pr[C <= k] and H_c non-increasing in c (docs/theory.md 3.4), Abel
summation over blocks [k_i, k_{i+1}) of clone counts 0 = k_0 < ... < k_M = floor(mu) gives

    sum_c Pr[C = c] H_c <= U_0 H_{k_0} + sum_{i=1}^{M-1} (U_i - U_{i-1}) H_{k_i}
                           + (1 - U_{M-1}) H_{k_M}

for any non-decreasing U_i >= F(k_{i+1} - 1) in [0, 1] (the terms with k >= k_M are at most
H_{k_M} in total).  Here U is the smaller of Hoeffding's binomial comparison (docs/theory.md
Lemma 4, valid for k <= mu - 1) and Bernstein's lower tail exp(-t^2 / (2 (V + t/3))),
t = mu - k, V = sum m_j (1 - m_j), with a relative 1e-6 of slack (Boost's binomial cdf, as in
``scipy.stats``, is accurate to about 5e-11 up to 10^9 users; cephes' ``bdtr`` is not),
mu rounded down and V up; the H_k are bounded above by ``h + rho`` of
``clones.divergence._divergence_terms``.  Only the mean, variance and size of the pool and
about 40 divergences are needed.  Measured: within a factor 1.3 of the exact bound.  A group
whose screening bound is at most the running maximum cannot raise it and is not evaluated
further.

Search (per eps; no state is carried between calls, the caches only memoize).  Groups in the
order 0, last, 1, 2, ...  Without cuts: the screening bound, then, if it exceeds the running
maximum, the exact bound (``clones``' error accounting on a clone-count pmf).  With cuts: the
screening bound at no cut and at the grid cut nearest below a quarter of the running maximum,
then a discrete ternary search of the screening bound over the grid (no cut last); if no
screened value is at most the running maximum, the exact bound at the best screened position
and then at ever smaller cuts while it drops by more than a relative 1e-6 (positions whose
victim delta alone is not below the best value are skipped).  The screening bound overstates
the divergence part, not the cut tail, so larger cuts than the screened best do not help.
The group's value is the smallest of its valid values.  The exact bound is refined (smaller
truncation, direct convolutions) only while the charged approximation error exceeds 1e-3 of
the whole delta, the cut tail included (``_evaluate_total``).

The family-specific parts (the pool masses of a group, the tail cuts, the noise scales) are
the family's own (:class:`shuffledp.families.base.Family`: :meth:`pool_masses`,
:meth:`tail_cut`, :meth:`noise_scales`, ``binnable``, ``cuts_tails``, ``noise_scaled``); this
module only asks for them.

Code names: ``eps_v``, ``delta_v`` the group's victim; ``sigma`` the users' noise scales
(:func:`shuffledp.families.gaussian.analytic_gaussian_sigma`, sensitivity 2, inputs [-1, 1],
exactly as :class:`~shuffledp.mechanisms.mean.GaussianMechanism`); ``eta`` the victim's cut
tail; ``kappa`` = min(1, (1 - delta_j) / M_j), M_j = 2 Phi(-1/sigma_j) the mass of
inf_x N(x, sigma_j^2).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from shuffledp.binomial import MIN_COMPLEMENT as _MIN_COMPLEMENT
from shuffledp.binomial import binom_cdf
from shuffledp.bounds.clones.count import _build_count
from shuffledp.bounds.clones.divergence import _divergence_terms, _evaluate, _finish
from shuffledp.budgets import BudgetProfile, profile_digest
from shuffledp.caching import lru_get, lru_put, register_mapping
from shuffledp.families import Family, family_names, get_family

__all__ = [
    "UserBins",
    "VICTIM_GROUPS",
    "TAIL_GRID",
    "BIN_MIN_TIERS",
    "VictimGroup",
    "runs_in_groups",
    "victim_groups",
    "group_pool",
    "aware_delta",
    "aware_group_delta",
    "clear_cache",
]

#: Default number of equal-count victim groups (before the refinement at both ends).
VICTIM_GROUPS = 16
#: Fractions of the users at which the end groups are refined (and their mirror images).
_END_FRACTIONS = (2.0**-10, 2.0**-8, 2.0**-6, 2.0**-4)
#: Candidate cut tails eta of a victim (quarter decades, 1e-2 .. 1e-16).
TAIL_GRID = 10.0 ** (-np.arange(8, 65) / 4.0)
#: Masses are multiplied by 1 - 1e-13 (rounding of their closed forms, always downwards).
_MASS_SHRINK = 1.0 - 1e-13
#: Smallest mass kept in a pool (smaller ones are rounded down to 0).
_MIN_MASS = 1e-200
#: Share of the expected clone count that may be dropped from the smallest masses (at most
#: one expected clone; rounding down, conservative).
_DROP_SHARE = 1e-3
#: Profiles with more distinct budgets than this are binned (module docstring, "Bins").
BIN_MIN_TIERS = 131_072
#: Number of bins aimed at when binning.
_BINS = 65_536
#: Relative widening of the noise scales of a bin computed apart from the tiers.
_SIGMA_SLACK = 1e-9
#: Steps, in standard deviations below the mean, of the screening's clone counts.
_SCREEN_Z = np.concatenate([np.arange(0.0, 4.0, 0.25), np.arange(4.0, 10.0, 0.5),
                            [11.0, 12.0, 14.0, 16.0, 20.0, 25.0, 30.0, 40.0, 60.0]])
#: Relative slack of the screening's cdf bounds (Boost's binomial cdf, exp).
_SCREEN_RTOL = 1e-6


# --------------------------------------------------------------------------- tiers and groups
@dataclass(frozen=True)
class _Tiers:
    """Distinct users (eps, delta) with multiplicities, in victim order (Gaussian: sigma
    decreasing; others: eps increasing), plus the Gaussian scales (``None`` for a binned
    Gaussian plan with one delta, whose scales are computed per bin, see :class:`UserBins`)."""

    eps: NDArray[np.float64]
    delta: NDArray[np.float64]
    counts: NDArray[np.int64]
    sigma: NDArray[np.float64] | None
    log_kappa: NDArray[np.float64] | None


@dataclass(frozen=True)
class VictimGroup:
    """A contiguous range ``[start, stop)`` of tiers treated as one victim: its largest eps and
    delta, smallest eps, and (Gaussian) the range of sigma."""

    start: int
    stop: int
    users: int
    eps_lo: float
    eps_hi: float
    delta_hi: float
    sigma_lo: float = math.nan
    sigma_hi: float = math.nan


@dataclass(frozen=True)
class UserBins:
    """The user classes of the pools: contiguous ranges of tiers (victim order), each given a
    lower bound of its users' masses (module docstring, "Bins").  ``exact``: one tier per bin.

    ``eps_a``, ``eps_b``: the budgets of the first and last tier of each bin; ``delta``: the
    largest delta_j of the bin; Gaussian: ``sigma_a >= sigma_b`` bound the bin's sigma_j
    (module docstring, "Bins") and ``log_kappa`` is at most every log kappa_j of the bin.
    The bins of group g are ``[edges[g], edges[g + 1])``; every group starts with a bin of
    its first tier alone.  The ``blanket`` bound's user classes are the same type
    (:func:`shuffledp.bounds.blanket.bound.blanket_plan`)."""

    counts: NDArray[np.int64]
    eps_a: NDArray[np.float64]
    eps_b: NDArray[np.float64]
    delta: NDArray[np.float64]
    edges: NDArray[np.int64]
    exact: bool
    sigma_a: NDArray[np.float64] | None = None
    sigma_b: NDArray[np.float64] | None = None
    log_kappa: NDArray[np.float64] | None = None


@dataclass(frozen=True)
class _Plan:
    tiers: _Tiers
    groups: tuple[VictimGroup, ...]
    bins: UserBins


def _binned_gaussian(profile: BudgetProfile, family: Family, n_tiers: int) -> bool:
    """Binned plan of a noise-scaled family (the Gaussian) with one delta: sigma is computed
    per bin, not per tier."""
    return (family.noise_scaled and n_tiers > BIN_MIN_TIERS
            and profile.delta_min == profile.delta_max)


def _tiers(profile: BudgetProfile, family: Family) -> _Tiers:
    t = profile.tiers  # the distinct (eps_i, delta_i) pairs, sorted, with their counts
    eps, delta, counts = t.eps.copy(), t.delta.copy(), t.counts.copy()
    sigma = log_kappa = None
    if family.noise_scaled and not _binned_gaussian(profile, family, eps.size):
        sigma = family.noise_scales(eps, delta)
        order = np.argsort(-sigma, kind="stable")
        eps, delta, counts, sigma = eps[order], delta[order], counts[order], sigma[order]
        log_kappa = family.log_kappa(sigma, delta)
    # (binned, one delta: sigma decreases in eps, so the eps order is already the victim order)
    return _Tiers(eps, delta, counts, sigma, log_kappa)


def group_edges(counts: NDArray[np.int64], groups: int) -> NDArray[np.int64]:
    """Edges of about ``groups`` equal-count ranges of the tiers, refined geometrically at
    both ends (the module docstring)."""
    cum = np.cumsum(counts)
    total = int(cum[-1])
    fr = set(k / groups for k in range(1, groups))
    for f in _END_FRACTIONS:
        fr.update((f, 1.0 - f))
    cuts = np.searchsorted(cum, np.array(sorted(fr)) * total, side="left") + 1
    cuts = cuts[(cuts > 0) & (cuts < counts.size)]
    return np.unique(np.concatenate([[0], cuts, [counts.size]])).astype(np.int64)


def runs_in_groups(edges: NDArray[np.int64], size: int, width: int
                   ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Each group's range ``[edges[k], edges[k+1])`` of ``size`` tiers or classes cut into
    runs of at most ``width``, the group's first alone: the runs' first and last indices and
    the edges of the groups over the runs (the classes of :class:`UserBins`).

    >>> [a.tolist() for a in runs_in_groups(np.array([0, 1, 6]), 6, 2)]
    [[0, 1, 2, 4], [0, 1, 3, 5], [0, 1, 4]]
    """
    starts, run_edges = [], [0]
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        starts.append(np.concatenate([[a], np.arange(a + 1, b, width)]) if b > a + 1
                      else np.array([a]))
        run_edges.append(run_edges[-1] + starts[-1].size)
    first = np.concatenate(starts).astype(np.int64)
    last = np.append(first[1:], size) - 1
    return first, last, np.array(run_edges, dtype=np.int64)


def victim_groups(profile: BudgetProfile, family: Any, *,
                  groups: int = VICTIM_GROUPS) -> list[VictimGroup]:
    """The victim groups of ``profile`` for ``family`` (see the module docstring); the plan
    is the cached one of :func:`aware_delta`."""
    return list(_plan_of(profile, get_family(family), groups).groups)


def _bins(profile: BudgetProfile, family: Family, tiers: _Tiers,
          edges: NDArray[np.int64]) -> UserBins:
    """One bin per tier, or, above ``BIN_MIN_TIERS`` tiers for the families whose masses are
    bounded below over a range of users by their values at its ends (``_BINNED_FAMILIES``),
    ranges of at most ``ceil(tiers / _BINS)`` tiers inside each group, the group's first tier
    alone."""
    size = tiers.eps.size
    binned = size > BIN_MIN_TIERS and family.binnable
    if not binned:
        return UserBins(tiers.counts, tiers.eps, tiers.eps, tiers.delta, edges, True,
                     tiers.sigma, tiers.sigma, tiers.log_kappa)
    first, last, bin_group_edges = runs_in_groups(edges, size, -(-size // _BINS))
    counts = np.add.reduceat(tiers.counts, first).astype(np.int64)
    delta = np.maximum.reduceat(tiers.delta, first)
    sig_a = sig_b = log_kappa = None
    if family.noise_scaled:
        if tiers.sigma is not None:  # several deltas: the tiers' own scales (sigma order)
            sig_a = np.maximum.reduceat(tiers.sigma, first)
            sig_b = np.minimum.reduceat(tiers.sigma, first)
            assert tiers.log_kappa is not None
            log_kappa = np.minimum.reduceat(tiers.log_kappa, first)
        else:  # one delta: sigma_j decreases in eps_j; computed where the bins start (and
            # at the last tier), widened: a bin's sigma_j lie between the scales of its first
            # tier and of the next bin's first tier
            ends = np.append(tiers.eps[first], tiers.eps[-1])
            sig = family.noise_scales(ends, np.full(ends.size, float(tiers.delta[0])))
            sig_a = sig[:-1] * (1.0 + _SIGMA_SLACK)
            sig_b = sig[1:] * (1.0 - _SIGMA_SLACK)
            log_kappa = family.log_kappa(sig_a, delta)
    return UserBins(counts, tiers.eps[first], tiers.eps[last], delta,
                 bin_group_edges, False, sig_a, sig_b, log_kappa)


def _plan(profile: BudgetProfile, family: Family, groups: int, cuts=None) -> _Plan:
    """The victim groups (equal counts, ``groups`` of them) and the user bins; ``cuts``
    (a function of the tiers' eps and the equal-count edges, returning tier indices) adds
    cuts between the groups (any partition of the victims is valid: the ``blanket`` bound's
    own plan)."""
    tiers = _tiers(profile, family)
    if family.victim_order == "constant":  # the masses do not depend on the victim
        edges = np.array([0, tiers.counts.size], dtype=np.int64)
    else:
        edges = group_edges(tiers.counts, groups)
        if cuts is not None:
            extra = np.asarray(cuts(tiers.eps, edges), dtype=np.int64)
            extra = extra[(extra > 0) & (extra < tiers.counts.size)]
            edges = np.union1d(edges, extra).astype(np.int64)
    bins = _bins(profile, family, tiers, edges)
    out = []
    for gi, (a, b) in enumerate(zip(edges[:-1], edges[1:], strict=True)):
        a, b = int(a), int(b)
        if tiers.sigma is not None:
            s_lo, s_hi = float(tiers.sigma[a:b].min()), float(tiers.sigma[a:b].max())
        elif bins.sigma_a is not None:  # binned Gaussian, one delta: widened ends
            assert bins.sigma_b is not None
            s_lo = float(bins.sigma_b[bins.edges[gi + 1] - 1])
            s_hi = float(bins.sigma_a[bins.edges[gi]])
        else:
            s_lo = s_hi = math.nan
        out.append(VictimGroup(
            a, b, int(tiers.counts[a:b].sum()), float(tiers.eps[a:b].min()),
            float(tiers.eps[a:b].max()), float(tiers.delta[a:b].max()), s_lo, s_hi))
    return _Plan(tiers, tuple(out), bins)


# --------------------------------------------------------------------------- pool of a group
def group_pool(profile: BudgetProfile, family: Any, group: VictimGroup, *, eta: float = 0.0,
               groups: int = VICTIM_GROUPS) -> tuple[float, float, NDArray[np.float64],
                                                     NDArray[np.int64], NDArray[np.float64]]:
    """``(eps_v, delta_v, masses, counts, complements)`` of one victim group: the pool is
    every bin of users (one tier per bin unless the profile has more than ``BIN_MIN_TIERS``
    distinct budgets) with its multiplicity, one user of the group with the largest mass
    left out.  ``eta`` > 0 cuts a Gaussian or Laplace victim's tails (Lemmas 7, 8)."""
    fam = get_family(family)
    plan = _plan_of(profile, fam, groups)
    if group not in plan.groups:
        raise ValueError(f"group must be one of victim_groups(profile, {fam.spec!r}, "
                         f"groups={groups}), got {group!r}")
    return _group_pool(fam, plan, plan.groups.index(group), eta)


def _group_pool(family: Family, plan: _Plan, gi: int, eta: float):
    g, bins = plan.groups[gi], plan.bins
    if eta > 0.0 and not family.cuts_tails:
        raise ValueError(f"eta (tail cut) applies to the {family_names(lambda f: f.cuts_tails)} "
                         f"randomizers only, got eta = {eta!r} for {family.spec}")
    own = int(bins.edges[gi]) if g.stop - g.start == 1 else None
    if family.victim_order == "general":  # the group's distinct victim budgets
        victims = np.unique(plan.tiers.eps[g.start:g.stop])
    else:
        victims = plan.tiers.eps[:0]
    delta_v, m = family.pool_masses(g, bins, eta, victim_eps=victims, own_bin=own)
    m = np.minimum(m * _MASS_SHRINK, 1.0)
    counts = bins.counts.copy()
    a, b = int(bins.edges[gi]), int(bins.edges[gi + 1])
    counts[a + int(np.argmax(m[a:b]))] -= 1
    comp = np.maximum(1.0 - m, _MIN_COMPLEMENT)
    return g.eps_hi, delta_v, m, counts, comp


def _group_weighted(values, counts, comps, rel_step):
    """Distinct masses with summed multiplicities; more than 256 distinct values are rounded
    down onto the grid (1 + rel_step)^k (as :func:`shuffledp.poisson_binomial.
    group_probabilities`), with the grid's accurate complements."""
    # masses below 1e-200 are dropped (rounded down to 0: fewer clones, conservative); scipy's
    # binomial pmf overflows for subnormal probabilities
    keep = (values >= _MIN_MASS) & (counts > 0)
    v, c, k = values[keep], counts[keep], comps[keep]
    if v.size == 0:
        return np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0)
    exact = rel_step == 0 or v.size <= 256
    if not exact and v.size <= 4096:  # few tiers: keep the values exactly if few distinct
        exact = np.unique(v).size <= 256
    if exact:
        uniq, inv = np.unique(v, return_inverse=True)
        cnt = np.bincount(inv, weights=c).astype(np.int64)
        comp = np.zeros(uniq.size)
        np.maximum.at(comp, inv, k)  # the largest complement of equal values (conservative)
        return uniq, cnt, comp
    h = math.log1p(rel_step)
    kk = np.floor(np.log(v) / h)
    kk = np.where(np.exp(kk * h) > v, kk - 1, kk).astype(np.int64)
    base = int(kk.min())
    cnt = np.bincount(kk - base, weights=c)
    ku = np.flatnonzero(cnt) + base
    cnt = cnt[cnt > 0].astype(np.int64)
    vals = np.exp(ku * h)
    # Drop the smallest grid values while their total mass stays below _DROP_SHARE of the
    # expected count (at most one expected clone): rounding masses down to 0 is conservative,
    # and tails cut far out leave many users with negligible masses.
    mass = vals * cnt
    cum = np.cumsum(mass)
    keep = cum > min(_DROP_SHARE * float(cum[-1]), 1.0)
    return vals[keep], cnt[keep], np.maximum(-np.expm1(ku[keep] * h), _MIN_COMPLEMENT)


# --------------------------------------------------------------------------- screening
@dataclass(frozen=True)
class _Screen:
    """What the screening bound of one pool needs at every eps: the victim, the clone counts
    ``ks`` (increasing, from 0 to floor(mu)) and their non-negative ``weights`` (sum 1)."""

    eps_v: float
    delta_v: float
    ks: NDArray[np.int64]
    weights: NDArray[np.float64]


def _screen_of(eps_v: float, delta_v: float, m: NDArray[np.float64],
               counts: NDArray[np.int64], comp: NDArray[np.float64]) -> _Screen:
    """The weights of the screening bound (module docstring, "Screening") for the pool
    ``(m, counts)``: U(k) >= Pr[C <= k] from Hoeffding's binomial comparison (valid for
    k <= mu - 1; docs/theory.md Lemma 4) and Bernstein's lower tail
    exp(-t^2 / (2 (V + t/3))), t = mu - k, at the ends k_{i+1} - 1 of the blocks, made
    non-decreasing; the weights are U_0, U_i - U_{i-1}, 1 - U_{M-1}."""
    pos = (m > 0.0) & (counts > 0)
    mm, cc, kk = m[pos], counts[pos].astype(np.float64), comp[pos]
    size = int(counts[pos].sum())
    mu = float(np.sum(mm * cc)) * (1.0 - 1e-12)  # rounded down: a smaller mean is safe
    top = math.floor(mu)
    if top < 1:
        return _Screen(eps_v, delta_v, np.zeros(1, dtype=np.int64), np.ones(1))
    var = float(np.sum(mm * kk * cc)) * (1.0 + 1e-9) + 1e-15 * size  # rounded up
    p_bar = min(mu / size, 1.0)
    sd = math.sqrt(max(var, size * p_bar * (1.0 - p_bar), 1.0))
    ks = np.unique(np.concatenate([[0], np.clip(top - np.round(_SCREEN_Z * sd), 0, top)]))
    ks = ks.astype(np.int64)
    ends = ks[1:] - 1  # <= floor(mu) - 1 <= mu - 1: Hoeffding's comparison applies
    t = mu - ends
    hoeffding = binom_cdf(ends, size, p_bar)
    bernstein = np.exp(-t * t / (2.0 * (var + t / 3.0)))
    u = np.minimum(1.0, (1.0 + _SCREEN_RTOL) * np.minimum(hoeffding, bernstein))
    u = np.maximum.accumulate(u)
    w = np.empty(ks.size)
    w[0] = u[0]
    w[1:-1] = np.diff(u)
    w[-1] = 1.0 - u[-1]
    return _Screen(eps_v, delta_v, ks, w)


def _screen_value(sc: _Screen, eps: float) -> float:
    """The screening bound at eps: delta_v + (1 - delta_v) sum_i w_i (h + rho)(k_i)."""
    if eps >= sc.eps_v:
        return float(sc.delta_v)
    h, rho = _divergence_terms(sc.ks, eps, sc.eps_v)
    inner = float(np.dot(sc.weights, np.minimum(h + rho, 1.0))) * (1.0 + 1e-12)
    return _finish(sc.delta_v, inner)


def _evaluate_total(get_count, eps: float, tol: float) -> float:
    """:func:`shuffledp.bounds.clones.divergence._evaluate` with the refinement measured against the
    whole delta (``whole=True``): the count is rebuilt (smaller truncation, direct
    convolutions) only while the charged approximation error exceeds ``_REFINE_RATIO`` of
    ``delta_v / (1 - delta_v)`` plus the divergence part, i.e. of the returned delta.  Every
    stage is a valid upper bound; the smallest is returned."""
    return _evaluate(get_count, eps, tol, whole=True)


# --------------------------------------------------------------------------- the bound
_PLANS: OrderedDict[tuple, _Plan] = OrderedDict()
_COUNTS: OrderedDict[tuple, Any] = OrderedDict()
_SCREENS: OrderedDict[tuple, _Screen] = OrderedDict()
_PLAN_CACHE_SIZE = 8
_COUNT_CACHE_SIZE = 512
_SCREEN_CACHE_SIZE = 8192
register_mapping("aware.plans", _PLANS)
register_mapping("aware.counts", _COUNTS)
register_mapping("aware.screens", _SCREENS)


def clear_cache() -> None:
    """Empty the victim-group plans, screening weights and clone-count pmfs of the
    mechanism-aware bound."""
    _PLANS.clear()
    _COUNTS.clear()
    _SCREENS.clear()


def _lru(cache: OrderedDict, key: tuple, build, size: int):
    """``cache[key]``, built by ``build()`` on a miss; least recently used entries beyond
    ``size`` are evicted."""
    hit = lru_get(cache, key)
    if hit is None:
        hit = lru_put(cache, key, build(), size)
    return hit


def _cached_plan(profile: BudgetProfile, family: Family, groups: int,
                 digest: str, cuts=None, cuts_key: Any = None) -> _Plan:
    return _lru(_PLANS, (digest, family.spec, groups, cuts_key),
                lambda: _plan(profile, family, groups, cuts), _PLAN_CACHE_SIZE)


def _plan_of(profile: BudgetProfile, family: Family, groups: int, cuts=None,
             cuts_key: Any = None) -> _Plan:
    """The cached plan, keyed by the profile's content digest (and ``cuts_key``, which
    names the extra ``cuts`` of :func:`_plan`)."""
    return _cached_plan(profile, family, groups, profile_digest(profile), cuts, cuts_key)


#: Relative gain below which the downhill walk over cuts stops.
_PLATEAU = 1e-6
#: Position of "no cut" after the cut tails of TAIL_GRID (eta decreasing with the position).
_NO_CUT = int(TAIL_GRID.size)


def _eta(pos: int) -> float:
    return 0.0 if pos >= _NO_CUT else float(TAIL_GRID[pos])


class _Group:
    """The evaluation of one victim group at one eps (module docstring, "Search"): screening
    bounds (cheap) and exact evaluations (a clone-count pmf) at the positions of the cut
    grid, each cached across eps by the caller's caches."""

    def __init__(self, family: Family, plan: _Plan, gi: int, key: tuple, eps: float,
                 tol: float, rel_step: float) -> None:
        self.family, self.plan, self.gi, self.key = family, plan, gi, key
        self.eps, self.tol, self.rel_step = eps, tol, rel_step
        self.group = plan.groups[gi]
        self.screened: dict[int, float] = {}
        self.exact: dict[int, float] = {}

    def _hopeless(self, pos: int) -> bool:
        return pos < _NO_CUT and self.group.delta_hi + _eta(pos) >= 1.0

    def screen(self, pos: int) -> float:
        if pos not in self.screened:
            if self._hopeless(pos):
                self.screened[pos] = 1.0
            else:
                def build() -> _Screen:
                    e_v, d_v, m, counts, comp = _group_pool(self.family, self.plan, self.gi,
                                                            _eta(pos))
                    return _screen_of(e_v, d_v, m, counts, comp)

                sc = _lru(_SCREENS, (*self.key, self.gi, pos), build, _SCREEN_CACHE_SIZE)
                self.screened[pos] = _screen_value(sc, self.eps)
        return self.screened[pos]

    def evaluate(self, pos: int) -> float:
        if pos not in self.exact:
            if self._hopeless(pos):
                self.exact[pos] = 1.0
            else:
                self.exact[pos] = _evaluate_total(self._count_getter(pos), self.eps, self.tol)
        return self.exact[pos]

    def _count_getter(self, pos: int):
        def get(t: float, direct: bool):
            def build():
                e_v, d_v, m, counts, comp = _group_pool(self.family, self.plan, self.gi,
                                                        _eta(pos))
                values, cnt, comps = _group_weighted(m, counts, comp, self.rel_step)
                return _build_count(e_v, d_v, values, cnt, tol=t, direct=direct,
                                    complements=comps)

            key = (*self.key, self.gi, pos, float(t), float(self.rel_step), direct)
            return _lru(_COUNTS, key, build, _COUNT_CACHE_SIZE)
        return get

    def best(self) -> float:
        vals = list(self.screened.values()) + list(self.exact.values())
        return min(vals) if vals else 1.0

    def lower(self, pos: int) -> float:
        """A lower bound on both values at ``pos``: the victim's delta (with the cut tail)."""
        g = self.group
        if pos >= _NO_CUT:
            return g.delta_hi
        tail = self.family.tail_cut(_eta(pos), g)[1]
        return min(1.0, g.delta_hi + tail)


def _ternary(value, lo: int, hi: int, stop: float) -> None:
    """Discrete ternary search of the smallest ``value`` on positions ``lo..hi`` (usually
    unimodal; any position is valid, so the search affects only tightness), ended as soon as
    some value is at most ``stop``; the values are recorded by ``value`` itself."""
    seen: dict[int, float] = {}

    def v(i: int) -> float:
        if i not in seen:
            seen[i] = value(i)
        return seen[i]

    while hi - lo > 2 and (not seen or min(seen.values()) > stop):
        m1, m2 = lo + (hi - lo) // 3, hi - (hi - lo) // 3
        if v(m1) <= v(m2):
            hi = m2
        else:
            lo = m1
    if not seen or min(seen.values()) > stop:
        for i in range(lo, hi + 1):
            v(i)
            if seen[i] <= stop:
                break


def _group_delta(grp: _Group, worst: float) -> float:
    """A valid bound on the group's delta, or any value <= ``worst`` once one is certified
    (the group cannot raise the maximum)."""
    if not grp.family.cuts_tails:
        if grp.screen(_NO_CUT) <= worst:
            return grp.best()
        grp.evaluate(_NO_CUT)
        return grp.best()
    # 1. screening: no cut, then the cut tail of about worst / 4, then a search over the grid
    if worst > 0.0:
        guess = int(np.clip(np.searchsorted(-TAIL_GRID, -worst / 4.0), 0, _NO_CUT - 1))
        for pos in (_NO_CUT, guess):
            if grp.screen(pos) <= worst:
                return grp.best()
    _ternary(grp.screen, 0, _NO_CUT, worst)
    if grp.best() <= worst:
        return grp.best()
    # 2. exact values from the best screened position, then downhill towards smaller cuts.
    #    The screening bound overstates the divergence part (not the cut tail), so a larger
    #    cut than the screened best can only help the exact value when it helps the screened
    #    one, which it does not; a smaller cut can (tightness only: every value is valid).
    #    Steps that gain less than a relative 1e-6 (a plateau) end the walk.
    cur = min(grp.screened, key=lambda p: (grp.screened[p], p))
    grp.evaluate(cur)
    pos = cur + 1
    while (grp.best() > worst and pos <= _NO_CUT and grp.lower(pos) < grp.best()
           and grp.evaluate(pos) < grp.exact[pos - 1] * (1.0 - _PLATEAU)):
        pos += 1
    return grp.best()


def _aware_plan(profile: BudgetProfile, mechanism: Any, groups: int):
    """(family, profile digest, cached plan) of the mechanism-aware reduction."""
    family = get_family(mechanism)
    if not family.aware:
        raise ValueError(f"mechanism must be one of the families "
                         f"{family_names(lambda f: f.aware)}, got {family.spec!r}")
    digest = profile_digest(profile)
    return family, digest, _cached_plan(profile, family, groups, digest)


def aware_group_delta(*, profile: BudgetProfile, eps: float, mechanism: Any, group: int,
                      tol: float, rel_step: float, groups: int = VICTIM_GROUPS) -> float:
    """delta(eps) of the mechanism-aware reduction for the victims of one group (index
    ``group`` of :func:`victim_groups` with ``groups``): the group's own bound, which covers
    every victim in it (docs/theory.md 4.1, Theorem 3)."""
    family, digest, plan = _aware_plan(profile, mechanism, groups)
    if not 0 <= int(group) < len(plan.groups):
        raise ValueError(f"group must be in [0, {len(plan.groups) - 1}], got {group!r}")
    grp = _Group(family, plan, int(group), (digest, family.spec, groups), float(eps),
                 float(tol), float(rel_step))
    return float(min(_group_delta(grp, 0.0), 1.0))


def aware_delta(*, profile: BudgetProfile, eps: float, mechanism: Any, tol: float,
                rel_step: float, groups: int = VICTIM_GROUPS) -> float:
    """delta(eps) of the mechanism-aware reduction: the largest group bound (module
    docstring).  Groups that cannot exceed the running maximum are cut short."""
    family, digest, plan = _aware_plan(profile, mechanism, groups)
    key = (digest, family.spec, groups)
    n_groups = len(plan.groups)
    order = [0, n_groups - 1] + list(range(1, n_groups - 1))
    seen: set[int] = set()
    worst = 0.0
    for gi in order:
        if gi in seen:
            continue
        seen.add(gi)
        grp = _Group(family, plan, gi, key, float(eps), float(tol), float(rel_step))
        worst = max(worst, _group_delta(grp, worst))
    return float(min(worst, 1.0))
