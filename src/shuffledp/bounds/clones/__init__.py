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

The fast evaluation (verified in tests/bounds/test_clones.py against direct summation).  With
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
  victim's Q^0 = delta_0, Q^1 = delta_1; the brute force in tests/bounds/test_bruteforce.py
  checks it.
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
  (:mod:`shuffledp.bounds.clones.aware`, docs/theory.md 4.1); ``clone`` is then not used.

The package, one module per part of the reduction:

* :mod:`~shuffledp.bounds.clones.masses`: the generic clone masses and the conservative victim;
* :mod:`~shuffledp.bounds.clones.count`: the law of the clone count (rounded down, truncated);
* :mod:`~shuffledp.bounds.clones.divergence`: H_c and the error accounting of the sum;
* :mod:`~shuffledp.bounds.clones.aware`: the mechanism-aware masses per victim group;
* :mod:`~shuffledp.bounds.clones.pair`: the dominating pair as vectors (PLD export);
* :mod:`~shuffledp.bounds.clones.guide`: the calibration guide;
* :mod:`~shuffledp.bounds.clones.bound`: delta(eps), the checks and the coverage; this
  ``__init__`` registers the bound.

>>> from shuffledp import BudgetProfile
>>> p = BudgetProfile.identical(n=10_000, eps0=2.0)
>>> d = clones_delta(profile=p, eps=0.2)
>>> 0.0 < d < 1e-3
True
"""

from __future__ import annotations

from shuffledp.bounds.base import Bound, BoundInfo
from shuffledp.bounds.clones.aware import VICTIM_GROUPS
from shuffledp.bounds.clones.bound import (
    _check,
    _diagnostics,
    clone_reduction_delta,
    clones_coverage,
    clones_delta,
)
from shuffledp.bounds.clones.count import (
    REL_STEP,
    TOL,
    CloneCount,
    clear_cache,
    clone_count,
    clone_count_pmf,
)
from shuffledp.bounds.clones.divergence import conditional_divergence
from shuffledp.bounds.clones.guide import clones_guide
from shuffledp.bounds.clones.masses import CLONE_KINDS, clone_probabilities, worst_victim
from shuffledp.bounds.clones.pair import clone_pair, clone_pair_chunks
from shuffledp.bounds.registry import register_bound
from shuffledp.budgets import profile_digest

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
    "clone_pair_chunks",
    "clones_coverage",
    "clear_cache",
    "TOL",
    "REL_STEP",
    "BOUND",
]

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
        guide_fn=clones_guide,
    )
)
