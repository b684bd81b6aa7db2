"""k-ary randomized response (generalized randomized response, GRR), family ``krr:k``.

User j reports its category with probability e^{eps_j} / (e^{eps_j} + k - 1) and each other
one with 1 / (e^{eps_j} + k - 1).  Against a victim with budget eps_v (inputs 0 and 1) the
clone mass is (docs/theory.md 6.2)

    r_j = 2 (e^{eps_v} + k - 1) / ((e^{eps_j} + k - 1)(e^{eps_v} + 1)),

non-increasing in eps_v; with identical budgets 2 / (1 + e^eps), the stronger clones (FMT,
SODA 2023).  Variation-ratio row (Wang et al., PVLDB 2024, Section 4): beta = (e^eps0 - 1) /
(e^eps0 + k - 1), alpha = 1 / (e^eps0 + k - 1), gamma = (k - 2) alpha.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from shuffledp.families.base import WANG, Family, UserClasses, VariationRatio, VictimRange
from shuffledp.families.binary_rr import BinaryRR
from shuffledp.families.blanket import BlanketCase, atoms, difference_error
from shuffledp.families.registry import register_family
from shuffledp.families.windows import WEIGHTS, U, Window, WindowConfig, grid

__all__ = ["KRR"]


@register_family
@dataclass(frozen=True)
class KRR(Family):
    """k-ary randomized response with ``k`` categories (module docstring).

    >>> f = KRR(3)
    >>> f.spec, round(float(f.clone_mass(1.0, 1.0)), 6) == round(2 / (1 + math.e), 6)
    ('krr:3', True)
    """

    name: ClassVar[str] = "krr"
    blanket_top_first: ClassVar[bool] = True
    title: ClassVar[str] = "k-ary randomized response (GRR), k categories"
    victim_order: ClassVar[str] = "decreasing"
    needs_k: ClassVar[bool] = True
    aware: ClassVar[bool] = True
    binnable: ClassVar[bool] = True

    @classmethod
    def describes(cls, family: Family) -> bool:
        """Binary RR is k-RR with k = 2."""
        return isinstance(family, (cls, BinaryRR))

    def _clone_mass(self, a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
        k = float(self.k)  # type: ignore[arg-type]
        ea = np.exp(-a)
        return 2.0 * (1.0 + (k - 1.0) * ea) / (1.0 + ea) / (np.exp(b) + k - 1.0)

    def _variation_ratio(self, eps0: float) -> VariationRatio:
        """beta = p - pbar = (e^eps0 - 1)/(e^eps0 + k - 1), alpha = pbar = 1/(e^eps0 + k - 1),
        gamma = (k - 2) pbar."""
        k = self.k
        assert k is not None
        a = math.exp(-np.logaddexp(eps0, math.log(k - 1.0)))
        return VariationRatio(eps0, eps0, math.expm1(eps0) * a, a, (k - 2.0) * a,
                              WANG + ", general RR on k options")

    def blanket_cases(self, eps: float, group: VictimRange,
                      users: UserClasses) -> list[BlanketCase]:
        """omega uniform on the k values (the normalized infimum of every user's report law),
        user j's mass ``k / (e^{eps_j} + k - 1)``; the victim's l is
        ``k (e^{eps_v} - e^eps) / (e^{eps_v} + k - 1)`` on its input x0 (increasing in eps_v),
        ``k (1 - e^eps e^{eps_v}) / (e^{eps_v} + k - 1)`` on x1 (decreasing) and
        ``k (1 - e^eps) / (e^{eps_v} + k - 1)`` elsewhere; every pair of inputs alike by
        symmetry.  A victim with a smaller budget runs k-RR at the group's largest budget
        followed by a symmetric k-ary channel, which keeps omega: its bound is at most that
        victim's (Lemma 15), so the group's largest budget is the victim
        (docs/theory.md 15.4)."""
        k = float(self.k)  # type: ignore[arg-type]
        e = math.exp(eps)
        log_k1 = math.log(k - 1.0)

        def share(v: float) -> float:  # k / (e^v + k - 1)
            return k * math.exp(-float(np.logaddexp(v, log_k1)))

        hi = group.eps_hi
        vals = [share(hi) * (math.exp(hi) - e), share(hi) * (1.0 - e * math.exp(hi)),
                share(hi) * (1.0 - e)]
        mass = [1.0 / k, 1.0 / k, (k - 2.0) / k]
        b = np.asarray(users.eps_b, dtype=np.float64)
        masses = k * np.exp(-np.logaddexp(b, log_k1)) * (1.0 - np.asarray(users.delta))
        return [BlanketCase(atoms(vals, mass, 16.0 * U,
                                  difference_error(16.0 * U, eps, share(hi) * math.exp(hi))),
                            masses, "omega uniform on k values")]

    def window_configs(self, eps_v: float, delta_v: float) -> list[WindowConfig]:
        # values 0..k-1: the victim at 0 / 1, the others at 0 or (k >= 3) at a third value
        stars = (0.0, 2.0) if (self.k or 0) >= 3 else (0.0,)
        return grid(0.0, 1.0, stars, [Window("values")], WEIGHTS)

    def cell_masses(self, x: float, eps: NDArray[np.float64], delta: NDArray[np.float64],
                    window: Window) -> tuple[NDArray[np.float64], ...]:
        k = int(self.k or 0)  # values 0..k-1, truthful with e^eps / (e^eps + k - 1)
        log_norm = np.logaddexp(eps, math.log(k - 1))
        other = np.exp(-log_norm)  # 1 / (e^eps + k - 1)
        truth = np.exp(eps - log_norm)
        a = truth if x == 0 else other
        b = truth if x == 1 else other
        o = (k - 2) * other if x in (0, 1) else truth + (k - 3) * other
        rel = (8.0 + 4.0 * (np.abs(eps) + np.abs(log_norm))) * U
        # a true mass is at most 1: clipping only moves a computed one towards it
        return (np.minimum(a, 1.0), np.minimum(o, 1.0), np.minimum(b, 1.0), rel * a, rel * o,
                rel * b)
