"""Exact lower bound: the privacy curve of shuffled binary randomized response
(registered ``rr_exact``, kind ``lower``).

Mechanism.  User i holds a bit x_i and reports it truthfully with probability
``q_i = e^{eps_i} / (1 + e^{eps_i})`` (Warner's randomized response; eps_i-LDP).  The shuffled
multiset of bits is equivalent to the number K of reported ones.  For a neighbouring pair
(victim v with x_v = 0 versus x_v = 1, the others' bits fixed) let ``S`` be the others' count,
a Poisson-binomial with probabilities ``1 - q_j`` (x_j = 0) or ``q_j`` (x_j = 1).  Then exactly

    P(k) = q_v s(k) + (1 - q_v) s(k-1),     Q(k) = (1 - q_v) s(k) + q_v s(k-1),

``s`` the pmf of S, and ``max(H_{e^eps}(P||Q), H_{e^eps}(Q||P))`` is the true delta(eps) of
that pair (the hockey-stick characterisation of (eps, delta)-DP, e.g. Balle, Barthe,
Gaboardi, NeurIPS 2018, Section 2).  Any pair gives a valid **lower bound** on the worst
case, for binary randomized response and hence for the class of all eps_i-LDP randomizers
(docs/theory.md, section 9; this is the comparison used to show that a claimed upper bound is too
small).

Code names: ``q_v`` = q_v, ``s`` = pmf of S, ``E`` = e^eps, ``k`` = number of others' ones.

Search over pairs (the bound is the maximum over the family):

* identical budgets: the pair reduces to k = number of others with x_j = 1,
  ``S_k = Bin(n-1-k, 1-q) + Bin(k, q)``; by the mirror ``K -> n - K`` the pair (k, P->Q) is the
  pair (n-1-k, Q->P), so ``k <= (n-1)/2`` with both directions covers every pair.  All such k
  when ``n <= 2001`` (exact supremum), else k = 0..64 and a geometric grid (ratio 1.25) up to
  (n-1)/2 (the maximiser is at or near k = 0 in every case we checked).
* personalized, ``n <= exhaustive_n`` (default 10): every distinct victim and every bit vector
  of the others (deduplicated by the multiset of (eps_j, x_j)); exact supremum.
* personalized, larger n: victims = the three largest-eps users, the smallest-eps user and a
  median user (every user when n <= 32); the others all 0 except a set F set to 1, F = the j
  largest-eps or the j smallest-eps among a candidate set U (the victims and the
  ``max_flips + 1`` users with the largest and with the smallest eps), j = 0..|U| - 1 (above
  10^6 users j in {0, 1, 2, 4, 8, 16, 32} and the size of U minus one: flipping a few of 10^9
  users moves the count by a few against a standard deviation of 10^4, and every j gave the
  same delta to four digits at 10^6 users; fewer pairs keep 10^9 users at 70 exact pairs
  instead of 204).  The
  pmf T of everyone outside U is computed once on the budget tiers (exact recursion for up to
  2000 users; with more than 4096 distinct budgets the batched FFT tree of
  :func:`shuffledp.poisson_binomial.poisson_binomial_pmf_tree` over the users; otherwise one
  binomial window per distinct budget, combined pairwise, so 10^9 users in a few tiers cost a
  few windows), probabilities kept exactly; each pair convolves T with the exact pmf of U
  minus v.  Users are positions in the order of decreasing eps, so a histogram and its
  expansion give the same pairs.

Keeping a lower bound under truncation and round-off.  The computed ``s`` differs from the
true pmf by the truncated mass ``dropped`` (>= 0 entrywise) and the round-off ``error_l1``
(see :mod:`shuffledp.poisson_binomial`); P and Q then move by at most that much in l1 and H by
at most ``(1 + E)`` times it, which is subtracted.  Only k whose two entries s(k), s(k-1) are
both in the window are summed (the omitted terms are >= 0).  The hockey-stick sums are
evaluated as prefix sums over the pair's outcomes sorted by likelihood ratio (so one delta(eps)
costs a binary search per pair); their floating-point error, bounded by
``2 len u (sum P + E sum Q)``, is subtracted as well.  The shared inversion returns eps on the
lower side (``side="lower"``).

Local delta_i: ignored by convention.  Pure eps_i randomized response is also
(eps_i, delta_i)-LDP, so its curve is a valid lower bound for (eps_i, delta_i)-LDP randomizers;
it is not the exact curve of any approximate-DP randomizer.  The result records
``local_delta_ignored``.  k-ary randomized response is not implemented.

>>> from shuffledp import BudgetProfile
>>> p = BudgetProfile.identical(n=3, eps0=math.log(3.0))
>>> round(rr_exact_delta(profile=p, eps=0.0), 10)  # total variation, worst pair k = 1
0.3125
"""

from __future__ import annotations

import itertools
import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from shuffledp._lazy import lazy_module
from shuffledp.bounds.base import Bound, BoundInfo
from shuffledp.bounds.registry import register_bound
from shuffledp.budgets import BudgetProfile, profile_digest
from shuffledp.caching import lru_get, lru_put, register_mapping
from shuffledp.families import budget_tiers
from shuffledp.hockey_stick import PreparedPair, prepare_pair, prepared_delta
from shuffledp.poisson_binomial import (
    TruncatedPMF,
    binomial_windows,
    convolve_pmfs,
    poisson_binomial_pmf_exact,
    poisson_binomial_pmf_grouped,
    poisson_binomial_pmf_tree,
)

special = lazy_module("scipy.special")

__all__ = ["RRPair", "rr_pairs", "pair_delta", "rr_exact_delta", "BOUND"]

_U = float(np.finfo(float).eps) / 2.0
#: Truncation of the count windows.  A lower bound must subtract (1 + e^eps) times the
#: truncated mass (it may sit inside the summed window after a convolution), so it is kept far
#: below the smallest accepted target delta even at e^eps = e^50: 5e21 * 1e-60 < 1e-38.
TOL = 1e-60
#: Relative error allowed for pmf entries from scipy's binomial pmf (Boost's; and their direct
#: convolutions), subtracted from every hockey-stick sum (measured: at most about 5e-11 for
#: n up to 10^9, tests/test_accepted_range.py); entries of the exact recursion use
#: :func:`_recursion_rtol`.
_PMF_RTOL = 1e-9
#: Identical budgets up to this n use the exact recursion for every pair (tiny relative error).
_EXACT_IDENTICAL_N = 64


def _recursion_rtol(m: int) -> float:
    """Relative error of the exact Poisson-binomial recursion over m Bernoullis (each step
    adds two non-negative products: at most 4 rounding errors), with a factor 2 to spare."""
    return 8.0 * (m + 2) * _U
EXHAUSTIVE_N = 10
MAX_FLIPS = 16
_ALL_K_N = 2001
_EXACT_T_N = 2000
#: Outside U, more than 4096 distinct budgets are summed user by user (the batched tree) up to
#: this many users; beyond it (a large histogram) by one binomial window per budget.
_MAX_PAIRWISE_GROUPS = 4096
_MAX_TREE_USERS = 10**8
#: Above this many users the flip sets F take j in {0, 1, 2, 4, 8, 16, 32, |U| - 1} only.
_ALL_FLIPS_N = 10**6


@dataclass(frozen=True)
class RRPair:
    """One neighbouring pair: the others' count pmf ``s`` and the victim's truth prob q_v.

    ``n_others`` is the number of other users, so the true support of S is 0..n_others and
    s(-1) = s(n_others + 1) = 0 exactly (used at the window's ends when they reach them).
    """

    s: TruncatedPMF
    q_v: float
    label: str
    n_others: int
    q1_v: float = -1.0  # 1 - q_v computed accurately (expit(-eps_v)); -1 = derive from q_v
    pmf_rtol: float = 0.0  # relative error of the pmf entries (beyond error_l1); 0 = default

    def __post_init__(self) -> None:
        if self.q1_v < 0.0:
            object.__setattr__(self, "q1_v", 1.0 - self.q_v)
        if self.pmf_rtol <= 0.0:
            object.__setattr__(self, "pmf_rtol", _PMF_RTOL)


def _pair_from_probs(one_probs: NDArray[np.float64], q_v: float, q1_v: float,
                     label: str, complements: NDArray[np.float64]) -> RRPair:
    pmf = poisson_binomial_pmf_exact(one_probs, complements)
    rtol = _recursion_rtol(one_probs.size)
    return RRPair(TruncatedPMF(0, pmf, 0.0, 0.0), q_v, label, int(one_probs.size), q1_v, rtol)


# --------------------------------------------------------------------------- families
def _identical_pairs(n: int, eps0: float, tol: float) -> list[RRPair]:
    q = float(special.expit(eps0))
    p = float(special.expit(-eps0))
    kmax = (n - 1) // 2
    if n <= _ALL_K_N:
        ks = list(range(kmax + 1))
    else:
        ks = list(range(min(64, kmax) + 1))
        k = 64.0
        while True:
            k *= 1.25
            if int(k) > kmax:
                break
            ks.append(int(k))
        if ks[-1] != kmax:
            ks.append(kmax)
    pairs = []
    if n <= _EXACT_IDENTICAL_N:
        for k in ks:
            one = np.concatenate([np.full(n - 1 - k, p), np.full(k, q)])
            comp = np.concatenate([np.full(n - 1 - k, q), np.full(k, p)])
            pairs.append(_pair_from_probs(one, q, p, f"identical k={k}", comp))
        return pairs
    karr = np.array(ks, dtype=np.int64)
    wa = binomial_windows(n - 1 - karr, np.full(karr.size, p), tol / 2.0,
                          np.full(karr.size, q))
    wb = binomial_windows(karr, np.full(karr.size, q), tol / 2.0, np.full(karr.size, p))
    for k, a, b in zip(ks, wa, wb, strict=True):
        c, err2 = convolve_pmfs(a.pmf, b.pmf)
        dropped = a.dropped_mass + b.dropped_mass
        s = TruncatedPMF(a.offset + b.offset, c, dropped, err2 * math.sqrt(c.size))
        pairs.append(RRPair(s, q, f"identical k={k}", n - 1, p))
    return pairs


def _exhaustive_pairs(eps: NDArray[np.float64]) -> list[RRPair]:
    n = eps.size
    q_all = special.expit(eps)
    q1_all = special.expit(-eps)  # 1 - q, accurately (q rounds to 1 from eps ~ 37)
    pairs = []
    seen_victims: set[float] = set()
    for v in range(n):
        if float(eps[v]) in seen_victims:
            continue
        seen_victims.add(float(eps[v]))
        others = np.delete(np.arange(n), v)
        seen: set[tuple] = set()
        for bits in itertools.product((0, 1), repeat=n - 1):
            key = tuple(sorted(zip(eps[others].tolist(), bits, strict=True)))
            if key in seen:
                continue
            seen.add(key)
            b = np.array(bits, dtype=bool)
            one = np.where(b, q_all[others], q1_all[others])
            comp = np.where(b, q1_all[others], q_all[others])
            pairs.append(_pair_from_probs(one, float(q_all[v]), float(q1_all[v]),
                                          f"v={v} bits={bits}", comp))
    return pairs


def _rest_pmf(q1: NDArray[np.float64], q: NDArray[np.float64], counts: NDArray[np.int64],
              tol: float) -> tuple[TruncatedPMF, float]:
    """Pmf of sum_t Bin(counts[t], q1[t]) (everyone outside U reports 1 with probability
    1 - q_j) and the relative error of its entries beyond ``error_l1``: the exact recursion up
    to ``_EXACT_T_N`` users, the batched tree over the users while they are few enough to
    list, else one binomial window per tier combined pairwise (scipy's pmf: ``_PMF_RTOL``)."""
    m = int(counts.sum())
    if m <= _EXACT_T_N:
        pmf = poisson_binomial_pmf_exact(np.repeat(q1, counts), np.repeat(q, counts))
        return TruncatedPMF(0, pmf, 0.0, 0.0), _recursion_rtol(m)
    if q1.size > _MAX_PAIRWISE_GROUPS and m <= _MAX_TREE_USERS:
        t = poisson_binomial_pmf_tree(np.repeat(q1, counts), tol=tol,
                                      complements=np.repeat(q, counts))
        return t, _recursion_rtol(m)
    t = poisson_binomial_pmf_grouped(q1, counts, tol=tol, complements=q, expand=False)
    return t, _PMF_RTOL


def _family_pairs(values: NDArray[np.float64], counts: NDArray[np.int64], max_flips: int,
                  tol: float) -> list[RRPair]:
    """The personalized family (module docstring) on the budget tiers: ``values`` the
    distinct eps (decreasing), ``counts`` their users.  A user is a position in the order of
    decreasing eps; position ``i`` belongs to tier ``searchsorted(cumsum(counts), i)``."""
    n = int(counts.sum())
    ends = np.cumsum(counts)
    q_t = special.expit(values)
    q1_t = special.expit(-values)  # 1 - q, accurately (q rounds to 1 from eps ~ 37)

    def tier(pos: int) -> int:
        return int(np.searchsorted(ends, pos, side="right"))

    if n <= 32:
        victims = list(range(n))
    else:
        victims = [0, 1, 2, n - 1, n // 2]
    victims = list(dict.fromkeys(victims))
    cand = set(victims)
    cand.update(range(min(max_flips + 1, n)))
    cand.update(range(max(n - max_flips - 1, 0), n))
    u_sorted = sorted(cand)  # U by decreasing eps
    u_tier = np.array([tier(i) for i in u_sorted], dtype=np.int64)
    rest = counts - np.bincount(u_tier, minlength=counts.size)
    t, t_rtol = _rest_pmf(q1_t, q_t, rest, tol)
    # plus the exact recursion over U minus the victim and its direct convolution with T
    t_rtol += _recursion_rtol(2 * len(u_sorted) + 2)
    seen_victim_eps: set[float] = set()
    pairs = []
    for v in victims:
        tv = tier(v)
        if float(values[tv]) in seen_victim_eps:
            continue
        seen_victim_eps.add(float(values[tv]))
        o = np.array([u_tier[j] for j, i in enumerate(u_sorted) if i != v], dtype=np.int64)
        m = o.size
        if n <= _ALL_FLIPS_N:
            tops, bottoms = range(m + 1), range(1, m)
        else:  # flipping j of n > 10^6 users barely moves the count: a geometric subset
            tops = sorted({j for j in (0, 1, 2, 4, 8, 16, 32, m) if j <= m})
            bottoms = [j for j in tops if 1 <= j < m]
        configs = [(np.arange(m) < j, f"top{j}") for j in tops]
        configs += [(np.arange(m) >= m - j, f"bottom{j}") for j in bottoms]
        for bits, name in configs:
            one = np.where(bits, q_t[o], q1_t[o])
            kernel = poisson_binomial_pmf_exact(one, np.where(bits, q1_t[o], q_t[o]))
            s_ = np.convolve(t.pmf, kernel)  # kernel <= 2 max_flips + 5 entries: direct, exact
            pairs.append(
                RRPair(TruncatedPMF(t.offset, s_, t.dropped_mass, t.error_l1), float(q_t[tv]),
                       f"v={v} eps_v={values[tv]:g} {name}", n - 1, float(q1_t[tv]),
                       t_rtol)
            )
    return pairs


def rr_pairs(
    profile: BudgetProfile, *, exhaustive_n: int = EXHAUSTIVE_N, max_flips: int = MAX_FLIPS,
    tol: float = TOL,
) -> list[RRPair]:
    """The searched family of neighbouring pairs (see the module docstring).

    >>> from shuffledp import BudgetProfile
    >>> len(rr_pairs(BudgetProfile.identical(n=5, eps0=1.0)))  # k = 0, 1, 2
    3
    """
    values, counts, _ = budget_tiers(profile)  # binary RR ignores delta_i
    if values.size == 1:
        return _identical_pairs(profile.n, float(values[0]), tol)
    if profile.n <= exhaustive_n:
        return _exhaustive_pairs(np.repeat(values, counts))
    return _family_pairs(values[::-1].copy(), counts[::-1].copy(), max_flips, tol)


# --------------------------------------------------------------------------- divergence
def _prepare(pair: RRPair) -> PreparedPair:
    s = pair.s
    f = np.maximum(s.pmf, 0.0)
    if s.offset == 0:  # s(-1) = 0 exactly
        f = np.concatenate([[0.0], f])
    if s.offset + s.pmf.size - 1 >= pair.n_others:  # s(n_others + 1) = 0 exactly
        f = np.concatenate([f, [0.0]])
    q = pair.q_v
    q1 = pair.q1_v
    p_k = q * f[1:] + q1 * f[:-1]
    q_k = q1 * f[1:] + q * f[:-1]
    # S is a Poisson binomial, log-concave, so P(k)/Q(k) decreases in k (q_v >= 1/2): the
    # outcomes are already in likelihood-ratio order (presorted; any order stays a lower bound)
    return prepare_pair(p_k, q_k, slack=float(s.dropped_mass + s.error_l1),
                        rtol=float(pair.pmf_rtol), label=pair.label,
                        ops=4 * (pair.n_others + 2), presorted=True)


_prepared_delta = prepared_delta


def pair_delta(pair: RRPair, eps: float) -> float:
    """Lower bound on (exact value of, when untruncated) the pair's delta(eps).

    >>> pr = RRPair(TruncatedPMF(0, np.array([1.0]), 0.0), 0.75, "n=1", 0)
    >>> round(pair_delta(pr, 0.0), 8)  # P = (3/4, 1/4), Q = (1/4, 3/4); minus 1e-9 rtol
    0.5
    """
    if not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    return _prepared_delta(_prepare(pair), eps)


_CACHE: OrderedDict[tuple, list[PreparedPair]] = OrderedDict()
register_mapping("rr_exact.pairs", _CACHE)
_CACHE_SIZE = 16


def _prepared_pairs(profile: BudgetProfile, exhaustive_n: int, max_flips: int,
                    tol: float) -> list[PreparedPair]:
    key = (profile_digest(profile), int(exhaustive_n), int(max_flips), float(tol))
    hit = lru_get(_CACHE, key)
    if hit is not None:
        return hit
    prepared = [
        _prepare(pr)
        for pr in rr_pairs(profile, exhaustive_n=exhaustive_n, max_flips=max_flips, tol=tol)
    ]
    return lru_put(_CACHE, key, prepared, _CACHE_SIZE)


def _check(*, profile: BudgetProfile, exhaustive_n: int = EXHAUSTIVE_N,
           max_flips: int = MAX_FLIPS, tol: float = TOL) -> None:
    if isinstance(exhaustive_n, bool) or not isinstance(exhaustive_n, (int, np.integer)) or not (
        0 <= exhaustive_n <= 14
    ):
        raise ValueError(f"exhaustive_n must be an integer in [0, 14], got {exhaustive_n!r}")
    if isinstance(max_flips, bool) or not isinstance(max_flips, (int, np.integer)) or not (
        0 <= max_flips <= 64
    ):
        raise ValueError(f"max_flips must be an integer in [0, 64], got {max_flips!r}")
    if not (isinstance(tol, (int, float)) and 0.0 <= tol < 1e-3):
        raise ValueError(f"tol must be in [0, 1e-3), got {tol!r}")


def rr_exact_delta(
    *, profile: BudgetProfile, eps: float, exhaustive_n: int = EXHAUSTIVE_N,
    max_flips: int = MAX_FLIPS, tol: float = TOL,
) -> float:
    """max over the searched pairs of the exact delta(eps) (a lower bound on the worst case).

    >>> from shuffledp import BudgetProfile
    >>> d = rr_exact_delta(profile=BudgetProfile.identical(n=1000, eps0=4.0), eps=1.69)
    >>> bool(d > 1e-6)
    True
    """
    if not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    _check(profile=profile, exhaustive_n=exhaustive_n, max_flips=max_flips, tol=tol)
    if eps >= profile.eps_max:  # pure eps_max-LDP already: the true delta is 0
        return 0.0
    prepared = _prepared_pairs(profile, exhaustive_n, max_flips, tol)
    return max(_prepared_delta(pr, float(eps)) for pr in prepared)


def _diagnostics(*, profile: BudgetProfile, eps: float, delta: float,
                 exhaustive_n: int = EXHAUSTIVE_N, max_flips: int = MAX_FLIPS,
                 tol: float = TOL) -> dict[str, Any]:
    prepared = _prepared_pairs(profile, exhaustive_n, max_flips, tol)
    return {
        "pairs_searched": len(prepared),
        "exhaustive": bool(profile.is_identical and profile.n <= _ALL_K_N)
        or bool(not profile.is_identical and profile.n <= exhaustive_n),
        "local_delta_ignored": not profile.is_pure,
    }


BOUND = register_bound(
    Bound(
        info=BoundInfo(
            name="rr_exact",
            kind="lower",
            title="Shuffled binary randomized response, exact curve (lower bound)",
            citation="Exact Poisson-binomial count laws (Warner 1965 RR); docs/theory.md s. 9",
            personalized=True,
            approx_ldp=True,
            randomizers=("binary_rr",),
            options={"exhaustive_n": EXHAUSTIVE_N, "max_flips": MAX_FLIPS, "tol": TOL},
            coverage_note="a lower bound for binary RR, one-bit Duchi and any randomizer",
        ),
        delta_fn=rr_exact_delta,
        check_fn=_check,
        diagnostics_fn=_diagnostics,
    )
)
