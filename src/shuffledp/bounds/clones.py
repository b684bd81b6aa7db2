"""Rigorous numerical bound: the exact hockey-stick divergence of the clone reduction
(registered ``clones``, kind ``upper``).

Sources.
  [FMT21] V. Feldman, A. McMillan, K. Talwar, "Hiding Among the Clones: A Simple and Nearly
  Optimal Analysis of Privacy Amplification by Shuffling", FOCS 2021, arXiv 2012.12803,
  Theorem 3.2 and the numerical method of its Appendix E (``clone="standard"``).
  [FMT23] V. Feldman, A. McMillan, K. Talwar, "Stronger Privacy Amplification by Shuffling for
  Renyi and Approximate Differential Privacy", SODA 2023, arXiv 2208.04591 (version with the
  Errata), Theorem 3.2 / Lemma 3.5 (``clone="stronger"``).
  [CCG24] E. Chen, Y. Cao, Y. Ge, AAAI 2024, arXiv 2312.14388: the personalized clone
  probabilities p_j = (1 - delta_j) / (1 + e^{eps_j}) (the ``gdp`` bound is their CLT
  approximation of the same reduction).

The reduction.  The victim v changes its input from x^0 to x^1; every other user j is,
independently, a clone of the victim's output with probability ``r_j`` (half of it a clone
"on input 0", half "on input 1"), otherwise uninformative.  With ``C`` the number of clones,
``C ~ PoissonBinomial(r_j, j != v)``, and, given ``C = c``, the analyst sees the number
``A`` of type-0 reports among the ``c + 1`` informative ones, where

    P_c(a) = q Bin(a-1; c, 1/2) + (1-q) Bin(a; c, 1/2)       (victim on x^0)
    Q_c(a) = (1-q) Bin(a-1; c, 1/2) + q Bin(a; c, 1/2)       (victim on x^1)
    q = e^{eps_v} / (1 + e^{eps_v}),

and the shuffled output is (eps, delta)-DP for

    delta(eps) = delta_v + (1 - delta_v) sum_c Pr[C = c] H_{e^eps}(P_c || Q_c).

Code names: ``eps_v``, ``delta_v`` = the victim's budget; ``q`` = q; ``pool`` = the r_j;
``E`` = e^eps; ``count`` = the pmf of C; ``clone`` = which r_j:

* ``"stronger"`` [FMT23, CCG24]: ``r_j = 2 (1 - delta_j) / (1 + e^{eps_j})``;
* ``"standard"`` [FMT21 Thm 3.2]: ``r_j = (1 - delta_j) e^{-eps_j}``.

The fast evaluation (verified in tests/test_clones.py against direct summation).  With
``m = c + 1`` and ``Bin(a-1; c, 1/2) = 2 Bin(a; m, 1/2) a / m``,
``Bin(a; c, 1/2) = 2 Bin(a; m, 1/2) (m - a) / m``:

    P_c(a) / Q_c(a) = (q a + (1-q)(m-a)) / ((1-q) a + q (m-a)),

increasing in ``a`` for q > 1/2.  So ``P_c - E Q_c > 0`` exactly on the tail ``a >= t(c)``,
``t(c) = floor(a0) + 1`` with ``a0 = m (E q - (1-q)) / ((2q-1)(1+E))``, and with
``S(k) = Pr[Bin(c, 1/2) >= k]`` (Boost's binomial survival function, as in ``scipy.stats``)

    H_c = (q - E (1-q)) S(t-1) + ((1-q) - E q) S(t),

O(1) per c, vectorised over the window of c.  ``Q_c(a) = P_c(c+1-a)``, so
``H(Q_c||P_c) = H(P_c||Q_c)`` and one direction suffices.  For ``E >= q/(1-q)`` (eps >= eps_v)
every H_c is 0 and ``delta = delta_v`` exactly; ``eps_v = 0`` (q = 1/2) is that case.

Heterogeneous budgets: conservative worst victim.  For a true victim u the reduction uses
``eps_u``, ``delta_u`` and the pool of everyone except u.  H is non-decreasing in q (P_c(q),
Q_c(q) are mixtures of P_c(q'), Q_c(q') for q' >= q with a common distribution; joint
convexity), H_c is non-increasing in c ((P_{c+1}, Q_{c+1}) is (P_c, Q_c) plus an independent
Bernoulli(1/2)), and a Poisson-binomial is monotone in each probability.  Hence
``eps_v = max eps_i``, ``delta_v = max delta_i`` and the pool "everyone but the single user with
the largest r_j" (stochastically the smallest pool of n - 1 users) bound every victim.  For
the same reason the pool may be rounded down (:func:`shuffledp.poisson_binomial.
group_probabilities`, relative step ``rel_step``), and the part of the pmf of C cut off
(``dropped_mass``, at most about ``tol``) is charged at divergence 1.  Floating point is
charged too: the FFT round-off estimate ``error_l1`` of the pmf at divergence 1, and a
relative ``1e-12`` of the magnitudes of the two terms of every H_c.  The shared inversion
then returns eps on the safe side (``side="upper"``).

Validity (which randomizers).

* ``standard``: every eps_0-LDP randomizer, identical budgets, [FMT21, Thm 3.2]; the victim
  mixture with q is the one of their numerical method (Appendix E), for every eps_0-LDP pair
  R(x^0), R(x^1) decomposes as q Q^0 + (1-q) Q^1 / (1-q) Q^0 + q Q^1.  FMT21 also allow an
  adaptive sequence of eps_0-LDP randomizers applied *after* the data are shuffled.
* ``stronger``: the restricted class of [FMT23] after their Errata (Lemma 3.5 with the modified
  decomposition); binary and k-ary randomized response are the important members.  Binary
  randomized response with personalized budgets is covered exactly: R_j(b) puts mass
  1/(1+e^{eps_j}) on each output, so R_j(b) = p_j delta_0 + p_j delta_1 + (rest), with the
  victim's Q^0 = delta_0, Q^1 = delta_1; the brute force in tests/test_bruteforce.py checks it.
* Personalized budgets beyond binary randomized response: the reduction with per-user r_j is
  the one of [CCG24]; for user-specific randomizers it needs every R_j(x_j) to contain
  ``r_j / 2`` of the *victim's* Q^0 and Q^1.  Caveat: for k-ary randomized response with k > 2
  and eps_j < eps_v that share is smaller than 1/(1+e^{eps_j}) (it is
  (e^{eps_v}+k-1) / ((e^{eps_j}+k-1)(e^{eps_v}+1))), so ``stronger`` is then *not* proven.
* Local delta_i (approximate LDP) enters as in [CCG24]: each randomizer is read as the mixture
  ``(1 - delta_i) R_i^pure + delta_i R_i^leak`` with R_i^pure an eps_i-LDP randomizer common to
  all inputs: user j is a clone with probability (1-delta_j) r_j(eps_j) and the victim leaks
  with probability delta_v (divergence 1).  That reading is an assumption about the
  randomizer, not a consequence of (eps_i, delta_i)-LDP.  It holds for pure randomizers (leak
  part = the randomizer itself), for randomizers built as such a mixture, and, proven in
  docs/theory.md Section 8 (Lemmas 5 and 6), for the Gaussian mechanism on [-1, 1] with its
  analytic calibration: covered with identical budgets and ``clone="standard"``, and with
  personalized budgets through ``mechanism="gaussian"`` (per-victim masses, Lemma 7).  It is
  not established for the d-dimensional Gaussian randomizer of SGD (family ``gaussian_l2``),
  which ``clones`` does not cover.  For general identical (eps_0, delta_0)-LDP randomizers
  FMT21's Theorem 3.8 (a term proportional to n delta_0, ``fmt21_*``) is the proven route.
* ``mechanism=F`` (a randomizer spec or mechanism): the masses are F's own, per victim group
  (:mod:`shuffledp.bounds.aware`, docs/theory.md 4.1); ``clone`` is then not used.

>>> from shuffledp import BudgetProfile
>>> p = BudgetProfile.identical(n=10_000, eps0=2.0)
>>> d = clones_delta(profile=p, eps=0.2)
>>> 0.0 < d < 1e-3
True
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from shuffledp._lazy import lazy_module
from shuffledp.bounds.aware import AWARE_FAMILIES, VICTIM_GROUPS, aware_delta
from shuffledp.bounds.base import Bound, BoundInfo, Coverage
from shuffledp.bounds.registry import register_bound
from shuffledp.budgets import BudgetProfile, profile_digest
from shuffledp.caching import register_mapping
from shuffledp.poisson_binomial import (
    TruncatedPMF,
    binom_sf,
    group_probabilities,
    group_with_complements,
    poisson_binomial_pmf_grouped,
)
from shuffledp.randomizers import Randomizer, budget_tiers, domination, get_randomizer

special = lazy_module("scipy.special")
stats = lazy_module("scipy.stats")

__all__ = [
    "CLONE_KINDS",
    "CloneCount",
    "clone_probabilities",
    "worst_victim",
    "clone_count",
    "clone_count_pmf",
    "profile_digest",
    "conditional_divergence",
    "clone_reduction_delta",
    "clones_delta",
    "clone_pair",
    "clones_coverage",
    "BOUND",
]

CLONE_KINDS = ("stronger", "standard")
#: Default truncation of the clone-count pmf (the first evaluation; refined on demand).
TOL = 1e-15
#: Default relative step of the rounding-down grid for the clone probabilities.
REL_STEP = 1e-3
#: Relative error allowed for the binomial survival functions (Boost's, as
#: ``scipy.stats.binom.sf``) in each H_c, and for the binomial pmf entries
#: (``scipy.stats.binom.pmf``) of the count's windows.  Measured against references at 30
#: digits (tests/test_accepted_range.py): at most about 5e-11 for n up to 10^9 and
#: p = expit(-eps), eps in [0, 50] (pmf), and 3e-11 for Bin(c, 1/2) with c up to 10^9 (sf);
#: the allowance keeps a factor 20.
_SF_RTOL = 1e-9
_PMF_RTOL = 1e-9
#: Above this many clone counts (the window and the left tail), H_c is evaluated on blocks
#: (:func:`_inner_bound_blocked`): about BLOCKS of them, refined while the block bound is
#: more than BLOCK_RTOL (relative) above the lower estimate of the same blocks.
BLOCK_MIN = 65_536
BLOCKS = 16_384
BLOCK_RTOL = 1e-6
#: Relative slack of the binomial cdf in Hoeffding's left-tail bound (measured error of Boost's
#: cdf: up to 5e-8 at n = 10^9, p = 1e-8; 1e-11 near p = 1/2).
_CDF_RTOL = 1e-6
#: Absolute floor of each H_c's error bound (survival functions that underflow).
_SF_ATOL = 1e-300
#: Smallest complement 1 - r_j used (see :func:`_mass_complement`).
_MIN_COMPLEMENT = 1e-200
#: Mass of the far left tail of the clone count charged at divergence 1 (Hoeffding bound);
#: far below the smallest accepted target delta (1e-30).
_FAR_TAIL = 1e-50
#: Refine the count (smaller truncation, direct convolutions) while the charged
#: approximation error exceeds this fraction of the bound.
_REFINE_RATIO = 1e-3
#: Truncation tolerances of the successive refinements.
_REFINED_TOLS = (1e-15, 1e-40, 1e-80, 1e-150)
#: Direct (FFT-free) convolutions are used in a refinement only below this pmf width.
_DIRECT_MAX_WIDTH = 40_000


def _check_clone(clone: str) -> str:
    if clone not in CLONE_KINDS:
        raise ValueError(f"clone must be one of {list(CLONE_KINDS)}, got {clone!r}")
    return clone


def _check_groups(groups: Any) -> int:
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)):
        raise TypeError(f"victim_groups must be an integer, got {groups!r}")
    if not 1 <= int(groups) <= 1024:
        raise ValueError(f"victim_groups must be in [1, 1024], got {groups!r}")
    return int(groups)


def _check_mechanism(mechanism: Any, profile: BudgetProfile | None = None) -> Randomizer | None:
    """The family of the ``mechanism`` option (None: the generic masses)."""
    from shuffledp.errors import ParameterRegimeError

    if mechanism is None:
        return None
    fam = get_randomizer(mechanism)
    if fam.family not in AWARE_FAMILIES:
        raise ValueError(f"mechanism must be a randomizer of the families "
                         f"{list(AWARE_FAMILIES)}, got {fam.spec!r}")
    if profile is not None and fam.family == "gaussian" and profile.delta_min <= 0.0:
        raise ParameterRegimeError(
            "clones with mechanism 'gaussian' needs delta_i > 0 for every user (the Gaussian "
            f"mechanism's calibration), got min delta_i = {profile.delta_min!r}")
    return fam


def _check_tol_step(tol: float, rel_step: float) -> None:
    if isinstance(tol, bool) or not (isinstance(tol, (int, float)) and 0.0 <= tol < 1e-3):
        raise ValueError(f"tol must be in [0, 1e-3), got {tol!r}")
    if isinstance(rel_step, bool) or not (
        isinstance(rel_step, (int, float)) and 0.0 <= rel_step <= 0.1
    ):
        raise ValueError(f"rel_step must be in [0, 0.1], got {rel_step!r}")


def _mass(eps: NDArray[np.float64], delta: NDArray[np.float64], clone: str) -> NDArray:
    """r_j for budgets (eps_j, delta_j), vectorised; logistic forms, no overflow."""
    if clone == "stronger":
        return 2.0 * (1.0 - delta) * special.expit(-eps)
    return (1.0 - delta) * np.exp(-eps)


def _mass_complement(eps: NDArray[np.float64], delta: NDArray[np.float64],
                     clone: str) -> NDArray:
    """1 - r_j computed without cancellation (r_j is close to 1 for eps_j close to 0):
    stronger tanh(eps/2) + 2 delta expit(-eps); standard -expm1(-eps) + delta e^-eps; at
    least 1e-200 (eps_j below ~1e-200 is treated as a clone probability 1 - 1e-200)."""
    if clone == "stronger":
        out = np.tanh(eps / 2.0) + 2.0 * delta * special.expit(-eps)
    else:
        out = -np.expm1(-eps) + delta * np.exp(-eps)
    # floor: a clone probability lowered by at most 1e-200 (fewer clones, conservative); keeps
    # scipy's binomial functions out of the subnormal range (they overflow at p ~ 1e-308)
    return np.maximum(out, _MIN_COMPLEMENT)


def clone_probabilities(profile: BudgetProfile, *, clone: str = "stronger") -> NDArray:
    """Per-user clone probability r_j (see the module docstring for the two kinds); the
    per-user arrays, so up to N_MAX_ARRAYS users (the bounds read the budget tiers).

    ``stronger``: r_j = 2 (1 - delta_j) / (1 + e^{eps_j}) (twice the p_j of CCG24);
    ``standard``: r_j = (1 - delta_j) e^{-eps_j} (FMT21, Theorem 3.2).

    >>> from shuffledp import BudgetProfile
    >>> clone_probabilities(BudgetProfile.identical(n=2, eps0=0.0)).tolist()
    [1.0, 1.0]
    """
    _check_clone(clone)
    return _mass(profile.eps, profile.delta, clone)


def worst_victim(
    profile: BudgetProfile, *, clone: str = "stronger"
) -> tuple[float, float, NDArray[np.float64]]:
    """Conservative victim ``(eps_v, delta_v, pool)``: eps_v = max eps_i, delta_v = max
    delta_i, pool = every r_j except the single largest (see the module docstring); per user,
    so up to N_MAX_ARRAYS users (the bound itself groups the budget tiers).

    >>> from shuffledp import BudgetProfile
    >>> e, d, pool = worst_victim(BudgetProfile.from_arrays([1.0, 2.0, 3.0]))
    >>> e, d, pool.size
    (3.0, 0.0, 2)
    """
    r = clone_probabilities(profile, clone=clone)
    pool = np.delete(r, int(np.argmax(r)))
    return profile.eps_max, profile.delta_max, pool


def _grouped_pool(
    profile: BudgetProfile, clone: str, rel_step: float
) -> tuple[float, float, NDArray[np.float64], NDArray[np.int64], NDArray[np.float64]]:
    """``(eps_v, delta_v, values, counts, complements)``: the worst victim and its pool,
    grouped and rounded down (:func:`shuffledp.poisson_binomial.group_with_complements`),
    with the accurate 1 - r of each group.  Identical users are one group without any
    per-user array, so n = 10^8 costs one binomial."""
    _check_clone(clone)
    t = profile.tiers  # the budget histogram: nothing per user
    if t.eps.size == 1:
        r = float(_mass(t.eps, t.delta, clone)[0])
        c = float(_mass_complement(t.eps, t.delta, clone)[0])
        return (profile.eps_max, profile.delta_max, np.array([r]),
                np.array([profile.n - 1], dtype=np.int64), np.array([c]))
    r = _mass(t.eps, t.delta, clone)
    comp = _mass_complement(t.eps, t.delta, clone)
    counts = t.counts.copy()
    counts[int(np.argmax(r))] -= 1  # the pool: everyone but one user of the largest mass
    values, comps, grouped = group_with_complements(r, comp, rel_step=rel_step, counts=counts)
    return profile.eps_max, profile.delta_max, values, grouped, comps


# --------------------------------------------------------------------------- the count pmf
@dataclass(frozen=True)
class CloneCount:
    """The (truncated, rounded-down) pmf of the clone count C and what the error accounting
    needs.

    ``count``: the computed window of the pmf of C (grouped pool); ``pool_size``,
    ``pool_mean``: number of users in the grouped pool and its mean (for Hoeffding's bound on
    the left tail); ``left_start``: k_min, ``left_cdf``: U(k) = min(D, Pr[Bin(N, mu/N) <= k])
    for k = k_min .. lo - 1; ``far_mass``: U(k_min - 1) (<= 1e-50), charged at divergence 1.
    """

    count: TruncatedPMF
    eps_v: float
    delta_v: float
    expected_clones: float
    n_groups: int
    pool_size: int = 0
    pool_mean: float = 0.0
    left_start: int = 0
    left_cdf: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    far_mass: float = 0.0
    tol: float = TOL
    direct: bool = False


_COUNT_CACHE: OrderedDict[tuple, CloneCount] = OrderedDict()
_CACHE_SIZE = 32
register_mapping("clones.counts", _COUNT_CACHE)


def clear_cache() -> None:
    """Empty the clone-count cache (for cold-start timings)."""
    _COUNT_CACHE.clear()


def clone_count_pmf(
    pool: ArrayLike, *, tol: float = TOL, rel_step: float = REL_STEP
) -> tuple[TruncatedPMF, int]:
    """Pmf of C ~ PoissonBinomial(pool), rounded down and truncated; also the group count.

    >>> r, g = clone_count_pmf([0.5, 0.5], tol=0.0)
    >>> np.round(r.pmf, 12).tolist(), g
    ([0.25, 0.5, 0.25], 1)
    """
    values, counts = group_probabilities(pool, rel_step=rel_step)
    return poisson_binomial_pmf_grouped(values, counts, tol=tol), int(values.size)


def _left_tail(
    count: TruncatedPMF, pool_size: int, pool_mean: float
) -> tuple[int, NDArray[np.float64], float]:
    """``(k_min, U(k_min..lo-1), U(k_min - 1))`` for the left of the computed window.

    F(k) = Pr[C <= k] <= D (everything below the window was dropped), and, by Hoeffding
    (1956, Theorem 4), F(k) <= Pr[Bin(N, mu/N) <= k] for k <= mu - 1 (N users of total mean
    mu).  k_min is the largest k <= lo with that binomial bound at k - 1 below 1e-50.
    """
    lo = int(count.offset)
    d = float(count.dropped_mass)
    if lo <= 0:
        return 0, np.zeros(0), 0.0
    p_bar = min(pool_mean / pool_size, 1.0) if pool_size > 0 else 0.0

    def bound(k: NDArray[np.int64]) -> NDArray[np.float64]:
        # Boost's cdf is accurate to about 5e-8 (relative) at tiny p and 10^9 users: 1e-6 slack
        b = np.minimum(1.0, stats.binom.cdf(k, pool_size, p_bar) * (1.0 + _CDF_RTOL))
        return np.where(k <= pool_mean - 1.0, b, 1.0)

    def far(k: int) -> float:  # U(k - 1)
        return 0.0 if k <= 0 else float(min(d, bound(np.array([k - 1]))[0]))

    if far(lo) <= _FAR_TAIL:
        k_min = lo
    else:  # largest k in [0, lo) with far(k) <= _FAR_TAIL (far is non-decreasing in k)
        a, b = 0, lo  # far(a) <= tail < far(b)
        while b - a > 1:
            m = (a + b) // 2
            if far(m) <= _FAR_TAIL:
                a = m
            else:
                b = m
        k_min = a
    ks = np.arange(k_min, lo, dtype=np.int64)
    return k_min, np.minimum(d, bound(ks)), far(k_min)


def _build_count(
    eps_v: float, delta_v: float, values: NDArray[np.float64], counts: NDArray[np.int64],
    *, tol: float, direct: bool, complements: NDArray[np.float64] | None = None,
) -> CloneCount:
    count = poisson_binomial_pmf_grouped(values, counts, tol=tol, direct=direct,
                                         complements=complements)
    count.pmf.setflags(write=False)
    size = int(counts[values > 0].sum())
    if complements is None:
        mean = float(np.dot(values, counts))
    else:  # the mean of the probabilities actually used (1 - complement), never above
        mean = float(np.dot(np.minimum(values, 1.0 - np.asarray(complements)), counts))
    k_min, left_cdf, far = _left_tail(count, size, mean)
    left_cdf.setflags(write=False)
    return CloneCount(count, float(eps_v), float(delta_v), mean, int(values.size), size, mean,
                      k_min, left_cdf, far, float(tol), bool(direct))


def clone_count(
    profile: BudgetProfile, *, clone: str = "stronger", tol: float = TOL,
    rel_step: float = REL_STEP, direct: bool = False,
) -> CloneCount:
    """The conservative victim and the pmf of its clone count, cached per (profile, options).

    The cache holds the last 32 results, keyed by a content hash of the profile's arrays
    (computed once per profile object), so one eps(delta) inversion builds the pmf once.
    ``direct=True`` convolves without FFT (no round-off estimate needed).

    >>> from shuffledp import BudgetProfile
    >>> cc = clone_count(BudgetProfile.identical(n=101, eps0=0.0))
    >>> float(cc.count.pmf[-1]), bool(cc.count.pmf[:-1].sum() < 1e-190), cc.expected_clones
    (1.0, True, 100.0)
    """
    _check_clone(clone)
    _check_tol_step(tol, rel_step)
    key = (profile_digest(profile), clone, float(tol), float(rel_step), bool(direct))
    hit = _COUNT_CACHE.get(key)
    if hit is not None:
        _COUNT_CACHE.move_to_end(key)
        return hit
    eps_v, delta_v, values, counts, comps = _grouped_pool(profile, clone, rel_step)
    out = _build_count(eps_v, delta_v, values, counts, tol=tol, direct=direct,
                       complements=comps)
    _COUNT_CACHE[key] = out
    if len(_COUNT_CACHE) > _CACHE_SIZE:
        _COUNT_CACHE.popitem(last=False)
    return out


# --------------------------------------------------------------------------- divergence
def _binom_half_sf(k: NDArray[np.int64], c: NDArray[np.int64]) -> NDArray[np.float64]:
    """S(k) = Pr[Bin(c, 1/2) >= k], elementwise, for any integer k (1 for k <= 0, 0 for
    k > c).  Boost's binomial survival function (what ``scipy.stats.binom.sf`` calls), not
    cephes' ``scipy.special.bdtrc``: the latter is off by 0.27 % at c = 10^7 and by 68 % at
    c = 10^9 near c / 2 (tests/test_accepted_range.py)."""
    return binom_sf(k - 1, c, 0.5)


def _divergence_terms(
    c: NDArray[np.int64], eps: float, eps_v: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(H_c, rho_c) for the victim with budget eps_v (0 <= eps < eps_v <= 50): the divergence
    as computed and a bound rho_c on its floating-point error.

    Stable forms (docs/theory.md, "The divergence given c"): with L = e^{eps_v}, E = e^eps,
    alpha = q - E (1-q) = -q expm1(eps - eps_v) > 0, beta = (1-q) - E q < 0, and the
    threshold from m - a0 = m (L - E) / ((L - 1)(E + 1)) = m expm1(eps - eps_v) /
    (expm1(-eps_v) (E + 1)), so nothing cancels even when eps is within 1e-12 of eps_v or
    q rounds to 1.  Each partial sum sum_{a >= t'} (P_c(a) - E Q_c(a)) is at most H_c, with
    equality at the true threshold; where m g lies within 1e-9 (relative) of an integer the
    maximum over t' in {t - 1, t, t + 1} is taken, so a rounding error of the threshold is
    harmless (elsewhere the few-ulp error of m g cannot cross an integer).
    rho_c = 1e-10 (|alpha| S(t*-1) + |beta| S(t*)) + 1e-300.
    """
    q = float(special.expit(eps_v))
    q1 = float(special.expit(-eps_v))  # 1 - q, accurately
    big_e = math.exp(eps)
    alpha = -q * math.expm1(eps - eps_v)
    beta = q1 - big_e * q
    g = math.expm1(eps - eps_v) / (math.expm1(-eps_v) * (1.0 + big_e))  # (m - a0) / m
    m = c + 1
    mg = m * g
    t = m - np.ceil(mg).astype(np.int64) + 1
    s_prev, s_t = _binom_half_sf(t - 1, c), _binom_half_sf(t, c)
    best = alpha * s_prev + beta * s_t
    mag = abs(alpha) * s_prev + abs(beta) * s_t
    # where m g is within rounding reach of an integer the threshold may be off by one:
    # there, also take the partial sums at t - 1 and t + 1 (each is <= H_c)
    near = np.abs(mg - np.round(mg)) <= 1e-9 * np.maximum(mg, 1.0)
    if near.any():
        cn, tn = c[near], t[near]
        for lo_k, hi_k in ((tn - 2, tn - 1), (tn, tn + 1)):
            sa, sb = _binom_half_sf(lo_k, cn), _binom_half_sf(hi_k, cn)
            h = alpha * sa + beta * sb
            better = h > best[near]
            idx = np.flatnonzero(near)[better]
            best[idx] = h[better]
            mag[idx] = (abs(alpha) * sa + abs(beta) * sb)[better]
    return np.clip(best, 0.0, 1.0), _SF_RTOL * mag + _SF_ATOL


def conditional_divergence(c: ArrayLike, eps: float, eps_v: float) -> NDArray[np.float64]:
    """H_{e^eps}(P_c || Q_c) for clone counts ``c`` (vectorised; closed form above).

    >>> float(conditional_divergence(0, 0.0, math.log(3.0))[0])  # P_0 = (3/4, 1/4)
    0.5
    """
    c = np.atleast_1d(np.asarray(c, dtype=np.int64))
    if np.any(c < 0):
        raise ValueError(f"c must be >= 0, got {c!r}")
    if not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    if eps >= eps_v:
        return np.zeros(c.shape)
    return _divergence_terms(c, eps, eps_v)[0]


@dataclass(frozen=True)
class _Parts:
    """The pieces of one evaluation (docs/theory.md, "Error accounting")."""

    window: float  # sum over the window of t_c (H_c + rho_c), pmf round-off included
    slack: float  # (D + E) H_lo + the left tail where U(k) = D: what refinement can reduce
    left: float  # the left tail below the window (Hoeffding part and D part)
    total: float  # the bound on sum_c Pr[C = c] H_c (before min(1, .))


def _inner_bound(cc: CloneCount, eps: float) -> _Parts:
    """Upper bound on sum_c Pr[C = c] H_c for eps < eps_v (docs/theory.md, error accounting):

        window + (D + E) H+_lo + U(k_min - 1) + sum_{k=k_min}^{lo-2} U(k) dH+_k + U(lo-1) H+_{lo-1}

    with H+ = H + rho, dH+_k = (H_k - H_{k+1})^+ + rho_k + rho_{k+1} and U(k) = min(D, Hoeffding)
    the bound on Pr[C <= k] left of the window.  Above :data:`BLOCK_MIN` clone counts the
    same sum is bounded block by block (:func:`_inner_bound_blocked`).
    """
    count = cc.count
    lo = int(count.offset)
    w = count.pmf
    if lo + w.size - cc.left_start > BLOCK_MIN:
        stride = -(-(lo + w.size - cc.left_start) // BLOCKS)
        while stride > 1:
            parts = _inner_bound_blocked(cc, eps, stride)
            if parts is not None:
                return parts
            stride //= 4
    ks = np.arange(cc.left_start, lo + w.size, dtype=np.int64)
    h, rho = _divergence_terms(ks, eps, cc.eps_v)
    hp = h + rho
    i_lo = lo - cc.left_start
    window = float(np.dot(w, hp[i_lo:])) * (1.0 + _PMF_RTOL)
    h_lo = float(hp[i_lo]) if w.size else 0.0
    charged = (count.dropped_mass + count.error_l1) * h_lo
    left = cc.far_mass
    left_d = 0.0
    if i_lo > 0:
        u = cc.left_cdf
        dh = np.maximum(h[: i_lo - 1] - h[1:i_lo], 0.0) + rho[: i_lo - 1] + rho[1:i_lo]
        terms = np.concatenate([u[:-1] * dh, [u[-1] * hp[i_lo - 1]]])
        left += float(terms.sum())
        at_d = u >= count.dropped_mass
        left_d = float(terms[at_d].sum())
    total = window + charged + left
    return _Parts(window=window, slack=charged + left_d, left=left, total=total)


def _inner_bound_blocked(cc: CloneCount, eps: float, stride: int) -> _Parts | None:
    """:func:`_inner_bound` with H evaluated every ``stride`` clone counts (docs/theory.md,
    "Blocks of clone counts").  H_c is non-increasing in c (module docstring), so over a block
    [a, b) of the window sum_c Pr[C = c] H_c <= (sum_c Pr[C = c]) H+_a, and left of the window
    sum_{k=a}^{b-1} U(k) (H_k - H_{k+1}) <= U(b - 1) (H+_a - H-_b) (U non-decreasing), with
    H+- = h +- rho.  The same blocks with the other ends (H+ at b, U(a)) estimate what the
    per-c sum loses to the blocks; when that is more than :data:`BLOCK_RTOL` of the bound,
    None (the caller takes a finer stride).  The test only decides tightness: either way the
    result is an upper bound."""
    count = cc.count
    lo = int(count.offset)
    w = count.pmf
    i_lo = lo - cc.left_start
    w_starts = np.arange(0, w.size, stride)
    l_starts = np.arange(0, i_lo, stride) if i_lo > 0 else np.zeros(0, dtype=np.int64)
    # evaluation points (offsets from left_start): left block starts, lo - 1, window block
    # starts, and the window's end (the last block's right end)
    pts = np.unique(np.concatenate([l_starts, [i_lo - 1] if i_lo > 0 else [],
                                    i_lo + w_starts, [i_lo + w.size - 1]]).astype(np.int64))
    h, rho = _divergence_terms(cc.left_start + pts, eps, cc.eps_v)
    hp, hm = h + rho, np.maximum(h - rho, 0.0)
    def at(offsets):  # positions of evaluation points in pts
        return np.searchsorted(pts, offsets)

    mass = np.add.reduceat(w, w_starts)
    first = at(i_lo + w_starts)
    ends = np.append(w_starts[1:], w.size - 1)  # right ends (H at the next start is <= H_c)
    last = at(i_lo + ends)
    window = float(np.dot(mass, hp[first])) * (1.0 + _PMF_RTOL)
    window_low = float(np.dot(mass, hp[last]))
    h_lo = float(hp[at(i_lo)]) if w.size else 0.0
    charged = (count.dropped_mass + count.error_l1) * h_lo
    left = left_low = cc.far_mass
    left_d = 0.0
    if i_lo > 0:
        u = cc.left_cdf  # U(k) for k = left_start .. lo - 1
        bounds = np.append(l_starts, i_lo - 1)  # block [bounds[j], bounds[j+1])
        a, b = bounds[:-1], bounds[1:]
        keep = b > a
        a, b = a[keep], b[keep]
        ia, ib, i_last = at(a), at(b), int(at(i_lo - 1))
        drop = np.maximum(hp[ia] - hm[ib], 0.0)
        terms = np.append(u[b - 1] * drop, u[-1] * hp[i_last])
        left += float(terms.sum())
        left_low += float(np.sum(u[a] * np.maximum(hp[ia] - hp[ib], 0.0))
                          + u[-1] * hp[i_last])
        at_d = np.append(u[b - 1], u[-1]) >= count.dropped_mass
        left_d = float(terms[at_d].sum())
    total = window + charged + left
    if total - (window_low + charged + left_low) > BLOCK_RTOL * total:
        return None
    return _Parts(window=window, slack=charged + left_d, left=left, total=total)


def _finish(delta_v: float, inner: float) -> float:
    return float(min(1.0, delta_v + (1.0 - delta_v) * min(1.0, inner)))


def _evaluate(get_count, eps: float, tol: float, *, whole: bool = False) -> float:
    """delta(eps) with on-demand refinement.

    ``get_count(tol, direct)`` returns the :class:`CloneCount` built with that truncation and
    convolution mode.  While the charged approximation error (truncation D and FFT round-off E,
    at the divergence where they may sit, see :func:`_inner_bound`) is more than 1e-3 of the
    bound, the count is rebuilt with the next smaller truncation of ``_REFINED_TOLS`` and, when
    the pmf is short enough, with direct convolutions.  Every stage is a valid upper bound; the
    smallest is returned.  This keeps the bound meaningful down to delta = 1e-30 and eps
    monotone in n there.  ``whole``: measure the error against the whole returned delta,
    ``delta_v / (1 - delta_v)`` plus the divergence part (the mechanism-aware groups, whose
    cut victims often have delta_v far above the divergence part; refining that part then
    changes nothing visible).
    """
    cc = get_count(tol, False)
    if eps >= cc.eps_v:  # every H_c is 0 (also covers eps_v = 0, q = 1/2)
        return float(cc.delta_v)
    parts = _inner_bound(cc, eps)
    best = parts.total
    floor = cc.delta_v / max(1.0 - cc.delta_v, 1e-300) if whole else 0.0
    while parts.slack > _REFINE_RATIO * (parts.total + floor) and parts.total < 1.0:
        smaller = [t for t in _REFINED_TOLS if t < cc.tol]
        direct = cc.direct or (
            cc.count.error_l1 > 0.0 and cc.count.pmf.size <= _DIRECT_MAX_WIDTH
        )
        if not smaller and direct == cc.direct:
            break
        cc = get_count(smaller[0] if smaller else cc.tol, direct)
        parts = _inner_bound(cc, eps)
        best = min(best, parts.total)
    return _finish(cc.delta_v, best)


def clone_reduction_delta(
    *, pool: ArrayLike, eps_v: float, delta_v: float, eps: float, tol: float = TOL,
    rel_step: float = REL_STEP, counts: ArrayLike | None = None,
) -> float:
    """delta(eps) of the clone reduction for an explicit victim ``(eps_v, delta_v)`` and pool
    (``counts``: ``pool[i]`` is the clone mass of ``counts[i]`` users).

    Not cached; the registered bound uses :func:`clone_count` and the conservative victim.

    >>> d = clone_reduction_delta(pool=[1.0] * 99, eps_v=2.0, delta_v=0.0, eps=1.0)
    >>> 0.0 < d < 0.1
    True
    """
    _check_tol_step(tol, rel_step)
    if not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    values, counts = group_probabilities(pool, rel_step=rel_step, counts=counts)
    built: dict[tuple, CloneCount] = {}

    def get(t: float, direct: bool) -> CloneCount:
        if (t, direct) not in built:
            built[t, direct] = _build_count(float(eps_v), float(delta_v), values, counts,
                                            tol=t, direct=direct)
        return built[t, direct]

    return _evaluate(get, float(eps), float(tol))


def clones_delta(
    *, profile: BudgetProfile, eps: float, clone: str = "stronger", tol: float = TOL,
    rel_step: float = REL_STEP, mechanism: Any = None, victim_groups: int = VICTIM_GROUPS,
) -> float:
    """The registered ``delta(eps)``: conservative victim, cached clone-count pmf.

    ``tol`` is the truncation of the first evaluation; it is refined automatically where the
    charged error would matter (see :func:`_evaluate`).  With ``mechanism`` (a randomizer
    spec such as ``"laplace"`` or ``"gaussian"``, or a mechanism) the masses are that
    randomizer's own, per victim group (:mod:`shuffledp.bounds.aware`; ``clone`` is then
    not used).

    >>> from shuffledp import BudgetProfile
    >>> clones_delta(profile=BudgetProfile.identical(n=50, eps0=1.0), eps=1.0)
    0.0
    """
    if not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    _check_clone(clone)
    _check_tol_step(tol, rel_step)
    if mechanism is not None:
        return aware_delta(profile=profile, eps=float(eps), mechanism=mechanism, tol=float(tol),
                           rel_step=float(rel_step), groups=_check_groups(victim_groups))

    def get(t: float, direct: bool) -> CloneCount:
        return clone_count(profile, clone=clone, tol=t, rel_step=rel_step, direct=direct)

    return _evaluate(get, float(eps), float(tol))


# --------------------------------------------------------------------------- explicit pair
def clone_pair(
    profile: BudgetProfile,
    *,
    clone: str = "stronger",
    tol: float = 1e-12,
    rel_step: float = REL_STEP,
    max_points: int = 5_000_000,
) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """The dominating pair (P, Q) of the reduction as explicit vectors, for PLD accounting.

    Returns ``(p, q, tail_mass)``: ``p[i]``, ``q[i]`` are the probabilities of the i-th
    outcome ``(c, a)`` (flattened, c increasing, then a) under the victim's input x^0 / x^1,
    already multiplied by ``(1 - delta_v)`` and by the (rounded-down, truncated) Pr[C = c];
    for each c only ``a`` in a window symmetric about ``(c+1)/2`` is kept.  Both vectors are
    sub-probabilities missing the same mass ``tail_mass`` (mirror symmetry
    ``Q_c(a) = P_c(c+1-a)``): the victim's delta_v, the cut-off part of C and of every A,
    and the round-off estimate.  Charging ``p``'s missing mass at privacy loss +infinity
    (and ``q``'s at -infinity) gives a pessimistic privacy loss distribution, e.g. for
    ``dp_accounting.pld.privacy_loss_distribution.from_two_probability_mass_functions``
    (take ``np.log`` of the entries); then for every eps,
    ``hockey_stick(p, q, eps) + tail_mass >= clones_delta(...)`` up to the round-off slack.

    Raises :class:`ParameterRegimeError` when the support exceeds ``max_points`` (raise
    ``tol`` or lower n).

    >>> from shuffledp import BudgetProfile
    >>> from shuffledp.numerics import hockey_stick
    >>> prof = BudgetProfile.identical(n=200, eps0=1.0)
    >>> p, q, tail = clone_pair(prof)
    >>> d = clones_delta(profile=prof, eps=0.5)
    >>> bool(abs(hockey_stick(p, q, 0.5) + tail - d) < 5e-9)
    True
    """
    from shuffledp.errors import ParameterRegimeError

    plan = _pair_plan(profile, clone=clone, tol=tol, rel_step=rel_step)
    total = int(plan.sizes.sum())
    if total > max_points:
        raise ParameterRegimeError(
            f"clone_pair: the support has {total} points > max_points = {max_points}; "
            f"raise tol (got {tol:g}) or max_points, or use clone_pair_chunks"
        )
    p, q = _pair_entries(plan, np.arange(plan.c.size))
    return p, q, plan.tail


@dataclass(frozen=True)
class _PairPlan:
    """The clone counts c kept (weights w), each one's window [lo, hi] of a, the victim's
    q_v = e^{eps_v}/(1+e^{eps_v}) and 1 - q_v, the weight (1 - delta_v), and the missing mass."""

    c: NDArray[np.int64]
    w: NDArray[np.float64]
    lo: NDArray[np.int64]
    hi: NDArray[np.int64]
    sizes: NDArray[np.int64]
    q_v: float
    q1: float
    keep_v: float
    tail: float


def _pair_plan(profile: BudgetProfile, *, clone: str, tol: float,
               rel_step: float) -> _PairPlan:
    _check_clone(clone)
    _check_tol_step(tol, rel_step)
    cc = clone_count(profile, clone=clone, tol=tol / 2.0, rel_step=rel_step)
    w = cc.count.pmf
    c = cc.count.offset + np.arange(w.size, dtype=np.int64)
    keep = w > 0
    w, c = w[keep], c[keep]
    budget = tol / 2.0
    lo = stats.binom.ppf(budget / 2.0, c, 0.5)
    lo = np.clip(np.nan_to_num(lo, nan=0.0), 0, c).astype(np.int64)
    lo = np.where(c <= 64, 0, lo)
    hi = c + 1 - lo
    sizes = hi - lo + 1
    q_v = float(special.expit(cc.eps_v))
    q1 = float(special.expit(-cc.eps_v))
    # mass of P_c outside [lo, hi]: a <= lo - 1 or a >= hi + 1
    low_x, up_x = stats.binom.cdf, stats.binom.sf  # X ~ Bin(c, 1/2)
    out_c = (
        q_v * (low_x(lo - 2, c, 0.5) + up_x(hi - 1, c, 0.5))
        + q1 * (low_x(lo - 1, c, 0.5) + up_x(hi, c, 0.5))
    )
    # missing mass: truncation, FFT round-off, the cut A-windows, and the relative error
    # allowance of the binomial pmf entries (as in clones_delta)
    pure_tail = (cc.count.dropped_mass + cc.count.error_l1 + float(np.dot(w, out_c))
                 + _PMF_RTOL * float(w.sum()))
    tail = cc.delta_v + (1.0 - cc.delta_v) * pure_tail
    return _PairPlan(c, w, lo, hi, sizes, q_v, q1, 1.0 - cc.delta_v, float(min(tail, 1.0)))


def _pair_entries(plan: _PairPlan, idx: NDArray[np.int64]) -> tuple[NDArray, NDArray]:
    """The flattened (p, q) entries of the clone counts ``plan.c[idx]`` (c increasing, then
    a), as in :func:`clone_pair`."""
    c, lo, sizes, w = plan.c[idx], plan.lo[idx], plan.sizes[idx], plan.w[idx]
    total = int(sizes.sum())
    owner = np.repeat(np.arange(c.size), sizes)
    starts = np.cumsum(sizes) - sizes
    a = lo[owner] + np.arange(total) - starts[owner]
    mw = (c + 1)[owner]
    base = 2.0 * stats.binom.pmf(a, mw, 0.5) / mw
    scale = plan.keep_v * w[owner] * base
    p = scale * (plan.q_v * a + plan.q1 * (mw - a))
    q = scale * (plan.q1 * a + plan.q_v * (mw - a))
    return p, q


def clone_pair_chunks(
    profile: BudgetProfile,
    *,
    clone: str = "stronger",
    tol: float = 1e-12,
    rel_step: float = REL_STEP,
    chunk_points: int = 2_000_000,
) -> tuple[Iterator[tuple[NDArray[np.float64], NDArray[np.float64]]], float]:
    """:func:`clone_pair` in pieces of at most about ``chunk_points`` outcomes (whole clone
    counts each), for pairs too large to hold at once (n = 10^6 and more): returns
    ``(iterator of (p, q), tail_mass)``; concatenating the pieces gives :func:`clone_pair`.

    >>> from shuffledp import BudgetProfile
    >>> prof = BudgetProfile.identical(n=300, eps0=1.0)
    >>> pieces, tail = clone_pair_chunks(prof, chunk_points=1000)
    >>> p, q, t = clone_pair(prof)
    >>> parts = list(pieces)
    >>> len(parts) > 1, bool(np.array_equal(np.concatenate([x for x, _ in parts]), p)), t == tail
    (True, True, True)
    """
    if isinstance(chunk_points, bool) or not isinstance(chunk_points, (int, np.integer)) or (
        chunk_points < 1
    ):
        raise ValueError(f"chunk_points must be a positive integer, got {chunk_points!r}")
    plan = _pair_plan(profile, clone=clone, tol=tol, rel_step=rel_step)
    ends = np.cumsum(plan.sizes)

    def pieces():
        start = 0
        while start < plan.c.size:
            done = int(ends[start - 1]) if start else 0
            stop = int(np.searchsorted(ends, done + chunk_points, side="right"))
            stop = max(stop, start + 1)
            yield _pair_entries(plan, np.arange(start, stop))
            start = stop

    return pieces(), plan.tail


# --------------------------------------------------------------------------- registration
def _check(*, profile: BudgetProfile, clone: str = "stronger", tol: float = TOL,
           rel_step: float = REL_STEP, mechanism: Any = None,
           victim_groups: int = VICTIM_GROUPS) -> None:
    _check_clone(clone)
    _check_tol_step(tol, rel_step)
    _check_groups(victim_groups)
    _check_mechanism(mechanism, profile)


def clones_coverage(
    *, family: Randomizer, profile: BudgetProfile, clone: str = "stronger",
    tol: float = TOL, rel_step: float = REL_STEP, mechanism: Any = None,
    victim_groups: int = VICTIM_GROUPS,
) -> Coverage:
    """Whether ``clones`` is a guarantee when every user i runs ``family`` with budget eps_i.

    The reduction needs every user j to dominate the clone mass r_j it is given against every
    other user as victim (docs/theory.md, "The general clone reduction"):
    ``randomizer.clone_mass(eps_u, eps_j) >= r_j`` for all u != j, checked by
    :func:`shuffledp.randomizers.domination`.  Local delta_i > 0 with a pure randomizer only
    makes the bound more conservative (smaller r_j, the victim's delta_v charged).  The
    Gaussian mechanism has the mixture form (docs/theory.md, Lemma 6): with identical budgets
    its pure parts are one eps-LDP randomizer, so ``standard`` covers it; with personalized
    budgets a less noisy user gives no clones of a noisier victim under the generic masses, so
    only ``mechanism="gaussian"`` covers it.  Other non-pure families (``gaussian_l2``) are
    not covered.  With ``mechanism=F``: covered iff F includes the family run.

    >>> from shuffledp import BudgetProfile
    >>> from shuffledp.randomizers import get_randomizer
    >>> p = BudgetProfile.from_arrays([0.5, 4.0])
    >>> clones_coverage(family=get_randomizer("krr:3"), profile=p).covered
    False
    """
    from shuffledp.errors import ParameterRegimeError

    _check_clone(clone)
    _check_groups(victim_groups)
    r = family
    if mechanism is not None:
        try:
            fam = _check_mechanism(mechanism, profile)
        except ParameterRegimeError as err:
            return Coverage(False, str(err))
        assert fam is not None
        if fam.includes(r):
            return Coverage(True, f"clones (mechanism {fam}): the masses of {fam} per victim "
                                  "group (docs/theory.md, 'Mechanism-aware clones')")
        return Coverage(False, f"clones (mechanism {fam}): computed for {fam}, which does not "
                               f"include {r} protocols")
    if r.family == "gaussian":
        if profile.is_identical and clone == "standard" and profile.delta_max > 0.0:
            return Coverage(True, "clones (standard): the Gaussian mechanism is (1 - delta) an "
                                  "eps-LDP randomizer + delta leak (docs/theory.md, Lemma 6)")
        return Coverage(False, (
            "clones (generic masses) covers the Gaussian mechanism with identical budgets and "
            "clone = 'standard' only; use the option mechanism = 'gaussian' for personalized "
            "budgets (docs/theory.md, 'Local delta')"))
    if not r.pure:
        return Coverage(False, (
            f"{r} is not pure LDP: clones reads local delta_i as the mixture (1 - delta_i) "
            "pure + delta_i leak, a form not established for this randomizer "
            "(docs/theory.md, 'Local delta')"
        ))
    values, counts, min_delta = budget_tiers(profile)
    need = _mass(values, min_delta, clone)  # the largest r_j used at each budget
    dom = domination(r, eps=values, required=need, counts=counts)
    if dom.holds:
        return Coverage(True, f"clones ({clone}): every user dominates its clone mass ({r})")
    return Coverage(False, f"clones ({clone}): {dom.reason}")


def _diagnostics(
    *, profile: BudgetProfile, eps: float, delta: float, clone: str = "stronger",
    tol: float = TOL, rel_step: float = REL_STEP, mechanism: Any = None,
    victim_groups: int = VICTIM_GROUPS,
) -> dict[str, Any]:
    if mechanism is not None:
        from shuffledp.bounds.aware import victim_groups as groups_of

        return {"mechanism": get_randomizer(mechanism).spec,
                "victim_groups": len(groups_of(profile, mechanism, groups=victim_groups))}
    cc = clone_count(profile, clone=clone, tol=tol, rel_step=rel_step)
    return {
        "clone": clone,
        "expected_clones": cc.expected_clones,
        "dropped_mass": cc.count.dropped_mass,
        "roundoff_l1": cc.count.error_l1,
        "clone_groups": cc.n_groups,
        "eps_victim": cc.eps_v,
    }


BOUND = register_bound(
    Bound(
        info=BoundInfo(
            name="clones",
            kind="upper",
            title="Clone reduction, exact divergence (numerical upper bound)",
            citation=(
                "Feldman, McMillan, Talwar FOCS 2021 (arXiv 2012.12803) Thm 3.2; "
                "SODA 2023 (arXiv 2208.04591, with Errata) Thm 3.2"
            ),
            personalized=True,
            approx_ldp=True,
            randomizers=("binary_rr", "duchi", "krr", "any"),
            options={"clone": "stronger", "tol": TOL, "rel_step": REL_STEP,
                     "mechanism": None, "victim_groups": VICTIM_GROUPS},
            coverage_note=(
                "stronger: binary RR, one-bit Duchi (also personalized), k-RR (identical); "
                "standard: any eps0-LDP randomizer and the Gaussian mechanism (identical), "
                "binary RR and one-bit Duchi (personalized); others per profile by domination; "
                "mechanism=F: F's own masses per victim group (any profile, F's protocols)"
            ),
        ),
        delta_fn=clones_delta,
        check_fn=_check,
        diagnostics_fn=_diagnostics,
        covers_fn=clones_coverage,
    )
)
