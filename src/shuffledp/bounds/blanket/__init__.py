"""Rigorous numerical bound: the exact divergence of the blanket decomposition (registered
``blanket``, kind ``upper``).

Sources.
  [BBGN19] B. Balle, J. Bell, A. Gascon, K. Nissim, "The Privacy Blanket of the Shuffle Model",
  CRYPTO 2019, arXiv 1903.02837, Section 5: every user's report law is gamma omega + (1 -
  gamma) (its own part), the blanket omega common to all users; the shuffled output is a
  post-processing of the victim's report among the blanket reports, and the privacy
  amplification random variable l = (P0 - e^eps P1) / omega decides the divergence.
  [SCW26] P. Su, H. Cheng, P. Wang, "Decomposition-Based Optimal Bounds for Privacy
  Amplification via Shuffling", IEEE S&P 2026, arXiv 2504.07414: the blanket decomposition
  is the optimal one, and the divergence is computed by FFT (identical budgets).

This bound computes that divergence exactly, with certified numerics, for personalized
budgets (docs/theory.md 15): Theorem 6 (the blanket reduction with per-user masses gamma_j),
:mod:`.amplification` (the sum ``E[X 1{X + R > 0}]`` by a tilted FFT with every error charged
on the safe side), :mod:`.cells` (the lattice law, dominating in the increasing convex order),
:mod:`.bound` (victim groups), and each randomizer family's blanket
(:meth:`~shuffledp.families.base.Family.blanket_cases`; binary RR, one-bit Duchi, k-RR, OUE,
Laplace, piecewise, the Gaussian mechanism, the shared-noise Laplace and Gaussian).

Code names -> paper symbols: ``masses`` = gamma_j, ``cells`` = the law of l under omega,
``eps`` = eps, ``mechanism`` = the randomizer family F.

Validity: the protocols of the family F named by ``mechanism`` (``covers`` says so per
profile), any budgets in the accepted range; local delta_i through the mixture reading of
docs/theory.md section 8 (the victim's delta_v charged, the users' masses times 1 - delta_j);
the Gaussian mechanism through its exact report laws (its delta_v is still added: an extra).
"""

from __future__ import annotations

from typing import Any

from shuffledp.bounds.base import Bound, BoundInfo, Coverage
from shuffledp.bounds.blanket.bound import blanket_delta, blanket_eps, blanket_plan
from shuffledp.bounds.clones.aware import VICTIM_GROUPS
from shuffledp.bounds.registry import register_bound
from shuffledp.budgets import BudgetProfile
from shuffledp.errors import ParameterRegimeError
from shuffledp.families import Family, family_names, get_family

__all__ = ["blanket_delta", "blanket_eps", "blanket_coverage", "BLANKET_FAMILIES", "BOUND"]


def _blanket_families() -> tuple[str, ...]:
    return tuple(family_names(lambda f: f.provides("blanket_cases")))


#: The families with a blanket (:meth:`Family.blanket_cases`).
BLANKET_FAMILIES = _blanket_families()


def _family(mechanism: Any) -> Family:
    fam = get_family(mechanism)
    if not fam.provides("blanket_cases"):
        raise ParameterRegimeError(
            f"the blanket bound has no blanket for {fam}: its mechanism must be one of "
            f"{', '.join(BLANKET_FAMILIES)} (krr and oue as 'krr:k', 'oue:d')")
    return fam


def _check(*, profile: BudgetProfile, mechanism: Any = "binary_rr",
           victim_groups: int = VICTIM_GROUPS) -> None:
    if isinstance(victim_groups, bool) or not isinstance(victim_groups, int):
        raise TypeError(f"victim_groups must be an integer, got {victim_groups!r}")
    if not 1 <= victim_groups <= 1024:
        raise ValueError(f"victim_groups must be in [1, 1024], got {victim_groups!r}")
    fam = _family(mechanism)
    if fam.needs_delta and profile.delta_min <= 0.0:
        raise ParameterRegimeError(
            f"blanket with mechanism {fam.spec!r} needs delta_i > 0 for every user "
            f"({fam.needs_delta_reason}), got min delta_i = {profile.delta_min!r}")
    blanket_plan(profile, fam, victim_groups)  # too many tiers for a per-tier family


def blanket_coverage(*, family: Family, profile: BudgetProfile, mechanism: Any = "binary_rr",
                     victim_groups: int = VICTIM_GROUPS) -> Coverage:
    """Covered iff the family run is one of the protocols of the ``mechanism`` family (or its
    shuffled profile is at most that family's: one-bit Duchi and binary RR)."""
    try:
        own = _family(mechanism)
    except ParameterRegimeError as err:
        return Coverage(False, str(err))
    if own.includes(family) or family.profile_at_most(own):
        return Coverage(True, f"blanket (mechanism {own}): the blanket decomposition of {own} "
                              "(docs/theory.md 15)")
    return Coverage(False, f"blanket (mechanism {own}): computed for {own}, which does not "
                           f"include {family} protocols")


def _diagnostics(*, profile: BudgetProfile, eps: float, delta: float,
                 mechanism: Any = "binary_rr", victim_groups: int = VICTIM_GROUPS) -> dict:
    fam = get_family(mechanism)
    groups, _ = blanket_plan(profile, fam, victim_groups)
    return {"mechanism": fam.spec, "victim_groups": len(groups)}


BOUND = register_bound(
    Bound(
        info=BoundInfo(
            name="blanket",
            kind="upper",
            title="Blanket decomposition, exact divergence (numerical upper bound)",
            citation=(
                "Balle, Bell, Gascon, Nissim CRYPTO 2019 (arXiv 1903.02837) Sec. 5; Su, Cheng, "
                "Wang IEEE S&P 2026 (arXiv 2504.07414); personalized: docs/theory.md 15"
            ),
            personalized=True,
            approx_ldp=True,
            randomizers=("binary_rr",),
            options={"mechanism": "binary_rr", "victim_groups": VICTIM_GROUPS},
            coverage_note=(
                "its mechanism's protocols (option mechanism: binary_rr, duchi, krr:k, oue:d, "
                "laplace, piecewise, gaussian, laplace_shared, gaussian_shared), any profile"
            ),
        ),
        delta_fn=blanket_delta,
        eps_fn=blanket_eps,
        check_fn=_check,
        diagnostics_fn=_diagnostics,
        covers_fn=blanket_coverage,
    )
)
