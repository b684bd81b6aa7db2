"""Shuffled rounds as dp_accounting privacy loss distributions (interoperability).

A shuffled round of n users with budgets ``profile`` is dominated by the dominating pair
(P, Q) of the clone reduction (:func:`shuffledp.bounds.clones.clone_pair`; Feldman,
McMillan, Talwar, FOCS 2021, arXiv 2012.12803, Theorem 3.2 and Appendix E, with the stronger
masses of their SODA 2023 paper; docs/theory.md sections 3-4): the shuffled output on two
neighbouring datasets is one common randomized map applied to P, resp. Q.  So the privacy
loss distribution (PLD) of (P, Q) is a valid accounting object for the round, and composing
it (adaptively, f-DP composition: Dong, Roth, Su, JRSS-B 2022, Theorem 3.2) with the PLDs of
other mechanisms in Google's ``dp_accounting`` library gives a valid guarantee for the whole
pipeline.  This is the object the project's own SGD accounting composes
(:mod:`shuffledp.sgd.accounting`, method ``clones``).

:func:`shuffled_round_pld` exports it: *pessimistic* (every privacy loss rounded **up** to
the grid ``k * discretization``; the mass the pair leaves out, ``tail_mass`` = truncated
clone counts, the victim's local delta and round-off, at loss +inf), *symmetric* (the pair is
mirror symmetric, ``Q_c(a) = P_c(c + 1 - a)``, so one PLD serves both directions).  For every
eps its ``get_delta_for_epsilon`` is at least the ``clones`` bound's delta(eps), and its eps
exceeds the bound's by at most about one ``discretization`` per composed round.

The export is a guarantee for the randomizers the ``clones`` pair covers on the profile
(:meth:`shuffledp.bounds.base.Bound.covers`): give ``randomizer`` to have it checked
(:class:`~shuffledp.errors.ParameterRegimeError` otherwise).  The mechanism-aware variant of
``clones`` (option ``mechanism``) is a maximum over victim groups of several pairs, not one
pair, and is not exported.

>>> from shuffledp import BudgetProfile
>>> pld = shuffled_round_pld(BudgetProfile.identical(n=10_000, eps0=1.0), randomizer="krr:4")
>>> 0.03 < pld.get_epsilon_for_delta(1e-6) < 0.06
True
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from shuffledp.budgets import BudgetProfile
from shuffledp.errors import ParameterRegimeError, short_repr
from shuffledp.validation import check_real

__all__ = ["DISCRETIZATION", "pld_from_pair", "pld_from_pieces", "shuffled_round_pld"]

#: Default width of the privacy-loss grid (dp_accounting's ``value_discretization_interval``).
DISCRETIZATION = 1e-4


def check_discretization(discretization: object) -> float:
    """A grid width in (0, 0.1] (``ValueError``/``TypeError`` naming it)."""
    return check_real(discretization, "discretization", low=0.0, high=0.1, low_open=True)


def pld_from_pair(
    p: NDArray[np.float64],
    q: NDArray[np.float64],
    tail_mass: float,
    *,
    discretization: float = DISCRETIZATION,
):
    """Pessimistic, symmetric dp_accounting PLD of the pair (P, Q) (losses rounded up).

    ``infinity_mass = max(tail_mass, 1 - sum(p))`` plus the mass of outcomes with q = 0.

    >>> pld = pld_from_pair(np.array([0.75, 0.25]), np.array([0.25, 0.75]), 0.0)
    >>> d = float(pld.get_delta_for_epsilon(0.0))  # TV = 0.5, rounded up (pessimistic)
    >>> 0.5 <= d < 0.5001
    True
    """
    return pld_from_pieces([(p, q)], tail_mass, discretization=discretization)


def pld_from_pieces(
    pieces: Iterable[tuple[NDArray[np.float64], NDArray[np.float64]]],
    tail_mass: float,
    *,
    discretization: float = DISCRETIZATION,
):
    """:func:`pld_from_pair` of the concatenation of ``pieces`` (pairs of 1-D arrays), built
    one piece at a time: only the histogram of the rounded losses is kept, so pairs with
    10^8 outcomes fit in memory."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    discretization = check_discretization(discretization)
    hist: dict[int, float] = {}
    p_total = 0.0
    only_p_mass = 0.0
    for p, q in pieces:
        p = np.asarray(p, dtype=float)
        q = np.asarray(q, dtype=float)
        if p.shape != q.shape or p.ndim != 1:
            raise ValueError(f"p and q must be 1-D of equal length, got {p.shape} and "
                             f"{q.shape}")
        if np.any(p < 0) or np.any(q < 0):
            raise ValueError("p and q must be non-negative")
        live = p > 0
        both = live & (q > 0)
        only_p_mass += float(p[live & (q <= 0)].sum())
        p_total += float(p.sum())
        loss = np.log(p[both]) - np.log(q[both])
        k = np.ceil(loss / discretization - 1e-12).astype(np.int64)  # round up (pessimistic)
        if not k.size:
            continue
        k0 = int(k.min())
        mass = np.bincount(k - k0, weights=p[both])
        for i in np.flatnonzero(mass > 0):
            key = int(i) + k0
            hist[key] = hist.get(key, 0.0) + float(mass[i])
    inf_mass = only_p_mass + max(float(tail_mass), 1.0 - p_total)
    inf_mass = min(max(inf_mass, 0.0), 1.0)
    return pld_lib.PrivacyLossDistribution.create_from_rounded_probability(
        hist, inf_mass, discretization, pessimistic_estimate=True
    )


def shuffled_round_pld(
    profile: BudgetProfile,
    *,
    clone: str = "stronger",
    randomizer: Any = None,
    discretization: float = DISCRETIZATION,
    tol: float = 1e-12,
):
    """One shuffled round of ``profile`` as a pessimistic dp_accounting
    ``PrivacyLossDistribution`` (module docstring).

    ``clone``: the clone masses (``"stronger"``, FMT23: binary/k-ary RR and one-bit Duchi;
    ``"standard"``, FMT21: every eps-LDP randomizer with identical budgets).  ``randomizer``
    (a spec such as ``"krr:10"``, optional): checked with ``clones``' coverage, so the
    exported PLD is a guarantee for it on this profile.  ``tol``: the pair's truncation
    (charged at loss +inf).

    Compose it in dp_accounting like any other PLD::

        from dp_accounting.pld import privacy_loss_distribution as pld_lib
        rounds = shuffled_round_pld(profile).self_compose(50)
        release = pld_lib.from_gaussian_mechanism(standard_deviation=20.0,
                                                  value_discretization_interval=1e-4)
        rounds.compose(release).get_epsilon_for_delta(1e-6)
    """
    from shuffledp.bounds import get_bound
    from shuffledp.bounds.clones import clone_pair_chunks

    if not isinstance(profile, BudgetProfile):
        raise TypeError(f"profile must be a BudgetProfile, got {type(profile).__name__}")
    if clone not in ("standard", "stronger"):
        raise ValueError(f"clone must be 'standard' or 'stronger', got {short_repr(clone)}")
    discretization = check_discretization(discretization)
    tol = check_real(tol, "tol", low=0.0, high=1e-3, low_open=True)
    bound = get_bound("clones")
    bound.prepare(profile, clone=clone)  # the bound's own validation of the profile
    if randomizer is not None:
        cov = bound.covers(randomizer=randomizer, profile=profile, clone=clone)
        if not cov.covered:
            raise ParameterRegimeError(f"the clones pair is not a guarantee here: {cov.reason}")
    pieces, tail = clone_pair_chunks(profile, clone=clone, tol=tol)
    return pld_from_pieces(pieces, tail, discretization=discretization)
