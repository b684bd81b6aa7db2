"""UNCERTIFIED estimate: where the truth of the shuffled Gaussian mechanism lies (issue 28).

What a blanket bound (docs/theory.md 15) would give for the Gaussian mechanism with identical
budgets IF the input pair (1, -1) were the worst one (not proven: Lemma 11's proof is Laplace's
own) and the blanket's mass beyond 1 + 10 sigma were negligible (not charged): the blanket is
the normalized infimum ``phi_sigma(|y| + 1) / (2 Phi(-1/sigma))``, every other user has mass
``2 Phi(-1/sigma)``, the law of ``l = (p_1 - E p_-1) / omega`` on 20000 cells (``l`` is
monotone for this pair), the project's lattice law and amplification sum.  It is printed beside
the certified lower bound ``tier_sum_lower`` and the rigorous ``clones``: evidence of which side
of the Gaussian gap is slack, NOT a bound (it is registered nowhere and used nowhere).

Run:  python benchmarks/gaussian_blanket_estimate.py
"""
import math

import numpy as np
from scipy import stats

from shuffledp import BudgetProfile, get_bound
from shuffledp.bounds.blanket.amplification import amplification_bound
from shuffledp.bounds.blanket.cells import lattice_law
from shuffledp.families.blanket import Cells
from shuffledp.families.gaussian import analytic_gaussian_sigma
from shuffledp.numerics import eps_from_delta

CELLS = 20_000


def _cell_mass(y, cdf, sf):
    """Masses of the cells between the points y (cdf differences left of 0, sf right of it)."""
    return np.where(y[1:] <= 0, np.diff(cdf(y)), -np.diff(sf(y)))


def estimate_delta(n: int, s: float, eps: float) -> float:
    """The uncertified blanket value A at eps (module docstring)."""
    big_e = math.exp(eps)
    y = np.linspace(-1.0 - 10.0 * s, 1.0 + 10.0 * s, CELLS + 1)
    g = 2.0 * stats.norm.cdf(-1.0 / s)
    norm = stats.norm
    wm = _cell_mass(y, lambda t: norm.cdf(t - 1.0, scale=s) / g,
                    lambda t: norm.sf(t + 1.0, scale=s) / g)
    p1 = _cell_mass(y, lambda t: norm.cdf(t, loc=1.0, scale=s),
                    lambda t: norm.sf(t, loc=1.0, scale=s))
    pm = _cell_mass(y, lambda t: norm.cdf(t, loc=-1.0, scale=s),
                    lambda t: norm.sf(t, loc=-1.0, scale=s))
    keep = wm > 0
    wm, p1, pm = wm[keep], p1[keep], pm[keep]
    ya, yb = y[:-1][keep], y[1:][keep]

    def amp(t):
        om = norm.pdf(np.abs(t) + 1.0, scale=s) / g
        return (norm.pdf(t, loc=1.0, scale=s) - big_e * norm.pdf(t, loc=-1.0, scale=s)) / om

    lo, hi = amp(ya), amp(yb)
    cells = Cells(wm / wm.sum(), np.minimum(lo, hi), np.maximum(lo, hi), (p1 - big_e * pm) / wm)
    _, var = cells.moments()
    law = lattice_law(cells, math.sqrt(var) / 16.0)
    return amplification_bound(law, [g], [n - 1]).value


def main() -> None:
    print("UNCERTIFIED estimate (not a bound): identical Gaussian budgets, local delta 1e-8, "
          "delta = 1e-6")
    for n, e0 in [(10_000, 1.0), (10_000, 4.0), (100_000, 1.0)]:
        s = float(analytic_gaussian_sigma(np.array([e0]), np.array([1e-8]))[0])
        prof = BudgetProfile.identical(n=n, eps0=e0, delta0=1e-8)
        low = get_bound("tier_sum_lower").eps(profile=prof, delta=1e-6, mechanism="gaussian")
        up = get_bound("clones").eps(profile=prof, delta=1e-6, mechanism="gaussian")
        est = eps_from_delta(lambda e, n=n, s=s: estimate_delta(n, s, e), 1e-6 - 1e-8)
        print(f"n = {n}, eps0 = {e0}, sigma = {s:.3f}: tier_sum_lower {low:.5g}, clones "
              f"{up:.5g} (x{up / low:.1f}), UNCERTIFIED blanket estimate {est:.5g} "
              f"(x{est / low:.2f} the lower bound)", flush=True)


if __name__ == "__main__":
    main()
