"""Local hashing (family ``olh:g``): its clone mass and variation-ratio row against the
randomizer itself, by exhaustive enumeration (docs/theory.md 6.10).

The hash family is every function from a three-value domain to {0, ..., g-1} (g^3 functions):
it holds a function mapping the victim's two inputs to one value y and the third input
elsewhere, where the bound of the derivation is attained, so the enumerated minimum must equal
the formula (not only lie above it).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from shuffledp.families import get_family

BUDGETS = [0.0, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0]


def _law(g: int, eps: float) -> np.ndarray:
    """R(x)(H, y) for every input x of {0, 1, 2}, hash H (all g^3 functions), report y:
    shape (3, g^3, g)."""
    hashes = np.array(list(itertools.product(range(g), repeat=3)))  # H(x) for x = 0, 1, 2
    e = math.exp(eps)
    out = np.empty((3, hashes.shape[0], g))
    for x in range(3):
        hit = hashes[:, x][:, None] == np.arange(g)[None, :]
        out[x] = np.where(hit, e, 1.0) / (e + g - 1.0) / hashes.shape[0]
    return out


@pytest.mark.parametrize("g", [2, 3, 4])
def test_clone_mass_is_the_enumerated_infimum(g):
    fam = get_family(f"olh:{g}")
    for eps_v, eps_j in itertools.product(BUDGETS, BUDGETS):
        victim, user = _law(g, eps_v), _law(g, eps_j)
        worst = math.inf
        for x0, x1 in itertools.permutations(range(3), 2):
            both = victim[x0] + victim[x1]
            worst = min(worst, float((2.0 * user.min(axis=0) / both).min()))
        got = float(fam.clone_mass(eps_v, eps_j))
        assert got == pytest.approx(min(worst, 1.0), rel=1e-12), (g, eps_v, eps_j)


@pytest.mark.parametrize("g", [2, 3, 4])
def test_pure_ldp_and_the_variation_ratio_row(g):
    fam = get_family(f"olh:{g}")
    for eps in BUDGETS:
        law = _law(g, eps)
        ratio = (law[:, None] / law[None, :]).max()
        assert ratio <= math.exp(eps) * (1 + 1e-12)  # eps-LDP
        row = fam.variation_ratio(eps)
        tv = max(0.5 * float(np.abs(law[a] - law[b]).sum())
                 for a, b in itertools.permutations(range(3), 2))
        assert tv <= row.beta * (1 + 1e-12) + 1e-15  # TV(P0, P1) <= beta
        assert row.log_p == eps and row.gamma == pytest.approx((g - 2) / (math.exp(eps) + g - 1))


def test_identical_budgets_give_the_standard_clone_mass():
    e = np.array(BUDGETS)
    for g in (2, 5, 100):
        np.testing.assert_allclose(get_family(f"olh:{g}").clone_mass(e, e), np.exp(-e),
                                   rtol=1e-12)


def test_bad_specs_are_named():
    with pytest.raises(ValueError, match="needs its number of categories"):
        get_family("olh")
    with pytest.raises(ValueError, match="k \\(categories\\) must be in \\[2, 1e\\+12\\] for olh"):
        get_family("olh:1")
