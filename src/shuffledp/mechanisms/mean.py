"""Local randomizers of values in [-1, 1] and their shuffled mean estimators.

Every class holds per-user budgets ``eps`` (epsilon_i) and is vectorised over users: user i
reports ``randomize(x, rng)[i]`` computed from ``x[i]`` and ``eps[i]``.  The estimators use only
the multiset of reports and the profile (see :mod:`shuffledp.mechanisms.base` for when they
are unbiased, and for the optional ``labels`` = the budget each user chose to attach).

* :class:`LaplaceMechanism`: ``x_i + Lap(2/eps_i)`` (Dwork, McSherry, Nissim, Smith, TCC 2006,
  Example 1 / Proposition 1; the L1 sensitivity of x in [-1, 1] is 2).
* :class:`LaplaceSharedMechanism`: ``(eps_i / 2) x_i + Lap(1)``: one noise law for every budget,
  the signal scaled by the budget (docs/theory.md 15.6).
* :class:`DuchiMechanism`: Duchi, Jordan, Wainwright's one-bit mechanism (JASA 113, 2018,
  arXiv 1604.02390, Section 4.2.3, one-dimensional case), in the form of Wang et al., ICDE 2019
  (arXiv 1907.00782), Algorithm 1.
* :class:`PiecewiseMechanism`: Wang et al., ICDE 2019, Algorithm 2 (variance: their Lemma 1).
* :class:`GaussianMechanism`: ``x_i + N(0, sigma_i^2)`` with sigma_i the analytic calibration of
  Balle & Wang, ICML 2018 (arXiv 1805.06530), Theorem 8 (:func:`analytic_gaussian_sigma`).
* :class:`GaussianSharedMechanism`: ``x_i / sigma_i + N(0, 1)``: the same report rescaled, one
  noise law for every budget (docs/theory.md 15.7).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit, ndtr

from shuffledp.errors import short_repr
from shuffledp.families.gaussian import analytic_gaussian_sigma, gaussian_delta
from shuffledp.mechanisms.base import (
    MeanMechanism,
    _values_array,
    as_budgets,
    as_reports,
    check_rng,
    permutation_variance,
)
from shuffledp.validation import as_real_array, check_array_range, check_bool, describe

__all__ = [
    "LaplaceMechanism",
    "LaplaceSharedMechanism",
    "DuchiMechanism",
    "PiecewiseMechanism",
    "GaussianMechanism",
    "GaussianSharedMechanism",
    "gaussian_delta",
    "analytic_gaussian_sigma",
]


def _real_reports(reports: ArrayLike, n: int) -> NDArray[np.float64]:
    """Real-valued reports, one per user (``n``), finite (``TypeError``/``ValueError``)."""
    rep = as_real_array(reports, "reports", scalar=False)
    if rep.ndim != 1 or rep.size != n:
        raise ValueError(f"reports must have one entry per user ({n}), got {rep.shape}")
    check_array_range(rep, "reports")
    return rep


@dataclass(frozen=True, eq=False)
class _UnbiasedReports(MeanMechanism):
    """Reports with E[y_i] = x_i and Var[y_i] = a(eps_i) x_i^2 + b(eps_i).

    The estimator is the plain mean of the reports: unbiased for mean(x) for *every* assignment
    of budgets to users, so it needs neither the assignment nor labels (labels are accepted and
    ignored).  Variance: ``sum_i (a_i x_i^2 + b_i) / n^2``; unlabelled, averaged over a random
    assignment, ``(sum_i x_i^2 mean(a) + n mean(b)) / n^2``.
    """

    def _ab(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        raise NotImplementedError

    def estimate(self, reports: ArrayLike, *, labels: ArrayLike | None = None) -> float:
        rep = _real_reports(reports, self.n)
        self._check_labels(labels, rep.size)
        return float(rep.mean())

    def variance(self, x: ArrayLike, *, labelled: bool = False) -> float:
        labelled = check_bool(labelled, "labelled")
        xv = self.check_values(x)
        a, b = self._ab()
        if labelled:
            return float((a * xv**2 + b).sum() / self.n**2)
        return float(((xv**2).sum() * a.mean() + self.n * b.mean()) / self.n**2)


@dataclass(frozen=True, eq=False)
class LaplaceMechanism(_UnbiasedReports):
    """``y_i = x_i + Lap(2 / eps_i)``: pure eps_i-LDP on [-1, 1].

    Source: Dwork, McSherry, Nissim, Smith, TCC 2006, Proposition 1 (Laplace noise of scale
    sensitivity/eps; here the sensitivity of x in [-1, 1] is 2).  Code names: ``eps`` =
    epsilon_i, :meth:`scale` = b_i = 2/epsilon_i.  Var[y_i] = 2 b_i^2 = 8 / eps_i^2.

    Blanket mass (Balle et al. CRYPTO 2019): inf_x f_x(y) = exp(-(1+|y|)/b) / (2b), whose
    integral is exp(-1/b) = e^{-eps_i/2}.

    >>> m = LaplaceMechanism(eps=[1.0, 2.0])
    >>> m.scale().tolist(), round(m.variance([0.0, 0.0]), 6)
    ([2.0, 1.0], 2.5)
    >>> LaplaceMechanism(eps=[1.0, -1.0])
    Traceback (most recent call last):
    ...
    ValueError: eps must be finite and in (0, 50] (the accepted local budgets), got eps[1] = -1.0
    """

    name: ClassVar[str] = "laplace"
    #: The randomizer family (shuffledp.families) this mechanism belongs to.
    family: ClassVar[str] = "laplace"
    citation: ClassVar[str] = "Dwork, McSherry, Nissim, Smith, TCC 2006, Proposition 1"

    def scale(self) -> NDArray[np.float64]:
        """Laplace scale b_i = 2 / eps_i."""
        return 2.0 / self.eps

    def _ab(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return np.zeros(self.n), 2.0 * self.scale() ** 2

    def pdf(self, y: ArrayLike, x: ArrayLike) -> NDArray[np.float64]:
        """Density of the report ``y`` given input ``x`` (broadcast against ``eps``)."""
        yv, xv = _values_array(y, "y"), _values_array(x, "x")
        b = self.scale()
        return np.exp(-np.abs(yv - xv) / b) / (2.0 * b)

    def blanket_mass(self) -> NDArray[np.float64]:
        return np.exp(-self.eps / 2.0)

    def randomize(self, x: ArrayLike, rng: np.random.Generator) -> NDArray[np.float64]:
        xv = self.check_values(x)
        return xv + check_rng(rng).laplace(0.0, 1.0, size=self.n) * self.scale()


@dataclass(frozen=True, eq=False)
class _SharedNoise(MeanMechanism):
    """Reports ``y_i = s_i x_i + Z_i`` with one noise law for every user (``Var Z_i =
    noise_var``) and the signal factor ``s_i`` (:meth:`signal`) set by the budget.

    Unlabelled estimator ``sum_i y_i / sum_i s_i``: under a random assignment of the budgets
    (module :mod:`shuffledp.mechanisms.base`) ``E sum_i y_i = mean(s) sum_i x_i``, so it is
    unbiased, with variance ``(noise_var n + V) / (sum_i s_i)^2``, ``V`` =
    :func:`permutation_variance` of x and s.  Labelled: ``mean_i y_i / s(label_i)``, unbiased
    for every assignment, variance ``sum_i noise_var / s_i^2 / n^2`` (docs/theory.md 15.6).
    """

    noise_var: ClassVar[float] = 1.0

    def signal(self, eps: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
        raise NotImplementedError

    def estimate(self, reports: ArrayLike, *, labels: ArrayLike | None = None) -> float:
        rep = _real_reports(reports, self.n)
        lab = self._check_labels(labels, rep.size)
        if lab is None:
            return float(rep.sum() / self.signal().sum())
        return float((rep / self.signal(lab)).mean())

    def variance(self, x: ArrayLike, *, labelled: bool = False) -> float:
        labelled = check_bool(labelled, "labelled")
        xv = self.check_values(x)
        s = self.signal()
        if labelled:
            return float((self.noise_var / s**2).sum() / self.n**2)
        return float((self.noise_var * self.n + permutation_variance(xv, s)) / s.sum() ** 2)


@dataclass(frozen=True, eq=False)
class LaplaceSharedMechanism(_SharedNoise):
    """``y_i = s_i x_i + Lap(1)`` with ``s_i = eps_i / 2``: one noise law for every budget.

    The L1 sensitivity of ``s_i x_i`` on [-1, 1] is ``eps_i``, so the report is pure
    eps_i-LDP (Dwork, McSherry, Nissim, Smith, TCC 2006, Proposition 1).  Where
    :class:`LaplaceMechanism` gives a larger budget less noise, this one gives it more signal;
    the noise law is common, so every user's report hides every victim whatever the budgets
    (family ``laplace_shared``, docs/theory.md 15.6).  Code names: ``eps`` = epsilon_i,
    :meth:`signal` = s_i.

    Shuffled estimator (unlabelled): ``sum_i y_i / sum_i s_i``.  Under a random assignment of
    the budgets (module :mod:`shuffledp.mechanisms.base`), ``E[sum_i y_i] = mean(s) sum_i
    x_i``, so it is unbiased, with variance ``(2 n + V) / (sum_i s_i)^2``, ``V`` =
    :func:`permutation_variance` of x and s (the spread of the signals).  For identical budgets
    it is the plain mean of ``x_i + Lap(2/eps)``.  Labelled: ``mean_i y_i / s_i`` (the
    Laplace mechanism's reports), variance ``sum_i 2 / s_i^2 / n^2``.  By Jensen's inequality
    the noise part ``2 n / (sum s)^2 = 8 / (n mean(eps)^2)`` is at most the Laplace
    mechanism's ``8 mean(1/eps^2) / n``.

    Blanket mass against the common blanket ``Lap(0, 1)``: ``e^{-s_i} = e^{-eps_i/2}``.

    >>> m = LaplaceSharedMechanism(eps=[1.0, 2.0])
    >>> m.signal().tolist(), round(m.variance([0.0, 0.0]), 6)  # (2 n) / (1.5)^2
    ([0.5, 1.0], 1.777778)
    """

    name: ClassVar[str] = "laplace_shared"
    #: Variance of Lap(1).
    noise_var: ClassVar[float] = 2.0
    #: The randomizer family (shuffledp.families) this mechanism belongs to.
    family: ClassVar[str] = "laplace_shared"
    citation: ClassVar[str] = ("Dwork, McSherry, Nissim, Smith, TCC 2006, Proposition 1, with "
                               "one noise scale (docs/theory.md 15.6)")

    def signal(self, eps: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
        """s_i = eps_i / 2 (``eps``: other budgets, e.g. labels)."""
        return (self.eps if eps is None else as_budgets(eps, "eps")) / 2.0

    def pdf(self, y: ArrayLike, x: ArrayLike) -> NDArray[np.float64]:
        """Density of the report ``y`` given input ``x`` (broadcast against ``eps``)."""
        yv, xv = _values_array(y, "y"), _values_array(x, "x")
        return 0.5 * np.exp(-np.abs(yv - self.signal() * xv))

    def blanket_mass(self) -> NDArray[np.float64]:
        return np.exp(-self.eps / 2.0)

    def randomize(self, x: ArrayLike, rng: np.random.Generator) -> NDArray[np.float64]:
        xv = self.check_values(x)
        return self.signal() * xv + check_rng(rng).laplace(0.0, 1.0, size=self.n)


@dataclass(frozen=True, eq=False)
class DuchiMechanism(MeanMechanism):
    """Duchi et al.'s one-bit mechanism: report a bit ``b_i`` in {-1, +1} with

        P(b_i = +1 | x_i) = 1/2 + x_i c_i / 2,   c_i = (e^{eps_i} - 1) / (e^{eps_i} + 1).

    Source: Duchi, Jordan, Wainwright, JASA 113 (2018), arXiv 1604.02390, Section 4.2.3
    (one-dimensional case), as written by Wang et al., ICDE 2019, Algorithm 1, whose report is
    ``B_i b_i`` with ``B_i = 1 / c_i = (e^{eps_i}+1)/(e^{eps_i}-1)`` (unbiased per report, and
    Var = B_i^2 - x_i^2, their Eq. (4)).  Code names: ``eps`` = epsilon (Duchi's alpha),
    :meth:`bias_factor` = c_i.  Pure eps_i-LDP: the two output probabilities lie in
    [1/(e^eps+1), e^eps/(e^eps+1)].

    Shuffled estimator.  Only the bit is reported (the magnitude B_i would reveal the budget),
    so ``E[sum_i b_i | pi] = sum_i x_i c_{pi(i)}`` and, under a random assignment,
    ``E[sum_i b_i] = n mean(x) mean(c)``: the estimator is ``sum_i b_i / sum_i c_i``, with
    variance ``[n - sum_i x_i^2 mean(c^2) + S_xx S_cc / (n-1)] / (sum_i c_i)^2``
    (``S_xx = sum (x_i - mean x)^2``, ``S_cc`` likewise; the last term is the variance over the
    assignment).  Labelled (users attach eps_i): ``mean_i(b_i / c_i)``, Wang et al.'s
    estimator, unbiased for every assignment, variance ``sum_i (1/c_i^2 - x_i^2) / n^2``.

    The mechanism is binary randomized response on a randomized rounding of x_i, so the
    stronger clones (Feldman, McMillan, Talwar, SODA 2023 with Errata) and every binary-RR
    bound apply (joint convexity over the rounding); blanket mass 2/(e^{eps_i}+1).

    >>> m = DuchiMechanism(eps=[np.log(3.0)] * 4)
    >>> m.bias_factor().round(6).tolist()
    [0.5, 0.5, 0.5, 0.5]
    >>> b = m.randomize(np.ones(4), np.random.default_rng(0))
    >>> set(b.tolist()) <= {-1, 1}
    True
    """

    name: ClassVar[str] = "duchi"
    #: The randomizer family (shuffledp.families) this mechanism belongs to.
    family: ClassVar[str] = "duchi"
    citation: ClassVar[str] = (
        "Duchi, Jordan, Wainwright, JASA 2018, Sec. 4.2.3; Wang et al., ICDE 2019, Alg. 1"
    )

    def bias_factor(self, eps: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
        """c_i = (e^{eps_i}-1)/(e^{eps_i}+1) = tanh(eps_i / 2) (``eps``: other budgets)."""
        return np.tanh((self.eps if eps is None else as_budgets(eps, "eps")) / 2.0)

    def _minority(self, xv: NDArray[np.float64]) -> NDArray[np.float64]:
        """P(report = -sign(x) | x) = (1 - |x| c) / 2, computed without cancellation as
        ((1 - |x|) + |x| (1 - c)) / 2 with 1 - c = 2 / (e^eps + 1): exact to rounding for every
        accepted eps (tanh(eps/2) rounds to 1 above eps ~ 37, 1 - c does not)."""
        ax = np.abs(xv)
        return 0.5 * ((1.0 - ax) + ax * 2.0 * expit(-self.eps))

    def pmf(self, b: ArrayLike, x: ArrayLike) -> NDArray[np.float64]:
        """P(report = b | x) for b in {-1, +1} (broadcast against ``eps``)."""
        bv, xv = _values_array(b, "b"), _values_array(x, "x")
        if not np.isin(bv, (-1.0, 1.0)).all():
            raise ValueError(f"b must be -1 or +1, got {short_repr(b)}")
        m = self._minority(xv)
        return np.where(bv * np.where(xv < 0, -1.0, 1.0) < 0, m, 1.0 - m)

    def blanket_mass(self) -> NDArray[np.float64]:
        return 2.0 / (np.exp(self.eps) + 1.0)

    def randomize(self, x: ArrayLike, rng: np.random.Generator) -> NDArray[np.int8]:
        """One report per user.  The uniform draw is compared with the *minority* probability
        (:meth:`_minority`), so that every output keeps a positive probability at every accepted
        eps: a draw u < m happens with probability ceil(m 2^53) / 2^53 >= m, which moves both
        outputs towards 1/2 and keeps the realised randomizer eps_i-LDP (comparing with the
        majority probability, which rounds to 1 above eps ~ 37, would make it deterministic)."""
        xv = self.check_values(x)
        sign = np.where(xv < 0, -1, 1)
        flip = check_rng(rng).random(self.n) < self._minority(xv)
        return np.where(flip, -sign, sign).astype(np.int8)

    def estimate(self, reports: ArrayLike, *, labels: ArrayLike | None = None) -> float:
        rep = as_reports(reports)
        if rep.dtype.kind == "b":
            raise TypeError(f"duchi reports must be -1 or +1 numbers, got {describe(reports)}")
        if rep.ndim != 1 or rep.size != self.n:
            raise ValueError(f"reports must have one entry per user ({self.n}), got {rep.shape}")
        if not np.isin(rep, (-1, 1)).all():
            raise ValueError("duchi reports must be -1 or +1")
        lab = self._check_labels(labels, rep.size)
        if lab is None:
            return float(rep.sum(dtype=np.float64) / self.bias_factor().sum())
        return float((rep / self.bias_factor(lab)).mean())

    def variance(self, x: ArrayLike, *, labelled: bool = False) -> float:
        labelled = check_bool(labelled, "labelled")
        xv = self.check_values(x)
        c = self.bias_factor()
        if labelled:
            return float((1.0 / c**2 - xv**2).sum() / self.n**2)
        total = self.n - (xv**2).sum() * (c**2).mean() + permutation_variance(xv, c)
        return float(total / c.sum() ** 2)


@dataclass(frozen=True, eq=False)
class PiecewiseMechanism(_UnbiasedReports):
    """Wang et al.'s piecewise mechanism (ICDE 2019, arXiv 1907.00782, Algorithm 2).

    With ``t_i = e^{eps_i/2}`` and ``C_i = (t_i + 1)/(t_i - 1)``, input x in [-1, 1] gives
    ``l(x) = (C+1)/2 x - (C-1)/2`` and ``r(x) = l(x) + C - 1``; the report has density
    ``p = (e^eps - t)/(2 t + 2)`` on [l(x), r(x)] and ``p / e^eps`` on the rest of [-C, C]
    (so it lands in the centre piece with probability t/(t+1)).  Code names: ``t`` = e^{eps/2},
    ``big_c`` = C, ``p`` = p.  Unbiased; Var[y | x] = x^2/(t-1) + (t+3)/(3 (t-1)^2) (their
    Lemma 1).  Pure eps_i-LDP (density ratio at most e^eps).

    Blanket mass: every y in [-C, C] is outside the centre piece of some input (x = +-1), so
    inf_x f_x(y) = p e^{-eps} and gamma = 2 C p e^{-eps} = e^{-eps/2}.

    >>> m = PiecewiseMechanism(eps=[2 * np.log(3.0)])   # t = 3, C = 2
    >>> round(float(m.big_c()[0]), 9), round(float(m.pdf(0.0, 0.0)[0]), 6)
    (2.0, 0.75)
    """

    name: ClassVar[str] = "piecewise"
    #: The randomizer family (shuffledp.families) this mechanism belongs to.
    family: ClassVar[str] = "piecewise"
    citation: ClassVar[str] = "Wang et al., ICDE 2019, Algorithm 2 and Lemma 1"

    def _t(self) -> NDArray[np.float64]:
        return np.exp(self.eps / 2.0)

    def big_c(self) -> NDArray[np.float64]:
        """Half-width C_i = (e^{eps_i/2} + 1) / (e^{eps_i/2} - 1) of the output range."""
        t = self._t()
        return (t + 1.0) / np.expm1(self.eps / 2.0)

    def _ab(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        tm1 = np.expm1(self.eps / 2.0)
        return 1.0 / tm1, (tm1 + 4.0) / (3.0 * tm1**2)

    def pdf(self, y: ArrayLike, x: ArrayLike) -> NDArray[np.float64]:
        """Density of the report ``y`` given input ``x`` (broadcast against ``eps``)."""
        y, x = _values_array(y, "y"), _values_array(x, "x")
        t, c = self._t(), self.big_c()
        p = t * np.expm1(self.eps / 2.0) / (2.0 * t + 2.0)
        lo = (c + 1.0) / 2.0 * x - (c - 1.0) / 2.0
        hi = lo + c - 1.0
        inside = (y >= lo) & (y <= hi)
        in_range = np.abs(y) <= c
        return np.where(inside, p, np.where(in_range, p * np.exp(-self.eps), 0.0))

    def blanket_mass(self) -> NDArray[np.float64]:
        return np.exp(-self.eps / 2.0)

    def randomize(self, x: ArrayLike, rng: np.random.Generator) -> NDArray[np.float64]:
        xv = self.check_values(x)
        rng = check_rng(rng)
        t, c = self._t(), self.big_c()
        lo = (c + 1.0) / 2.0 * xv - (c - 1.0) / 2.0
        hi = lo + c - 1.0
        centre = rng.random(self.n) < t / (t + 1.0)
        u = rng.random(self.n)
        y_centre = lo + (c - 1.0) * u
        w = (c + 1.0) * u  # the outer pieces [-C, l) and (r, C] have total length C + 1
        y_outer = np.where(w < lo + c, w - c, hi + (w - (lo + c)))
        return np.where(centre, y_centre, y_outer)


class _AnalyticSigma:
    """Per-user budgets (eps_i, delta_i) and the analytic Gaussian scale sigma_i of each
    (:func:`analytic_gaussian_sigma`, sensitivity 2), computed once at construction."""

    eps: NDArray[np.float64]
    delta_i: NDArray[np.float64] | float

    def _set_budgets(self, eps: ArrayLike, delta: ArrayLike) -> None:
        e = as_budgets(eps, "eps")
        dl = as_real_array(delta, "delta")
        if dl.size == 1:
            dl = np.full(e.shape, float(dl.ravel()[0]))
        elif dl.shape != e.shape:
            raise ValueError(
                f"delta must be a scalar or have one entry per user ({e.size}), got shape "
                f"{dl.shape}"
            )
        dl = as_budgets(dl, "delta", positive=False)
        object.__setattr__(self, "eps", e)
        object.__setattr__(self, "delta_i", dl)
        sig = analytic_gaussian_sigma(e, dl)
        sig.setflags(write=False)
        object.__setattr__(self, "_sigma", sig)

    @property
    def delta(self) -> NDArray[np.float64]:
        return np.asarray(self.delta_i)

    def sigma(self) -> NDArray[np.float64]:
        """sigma_i: the analytic Gaussian scale of (eps_i, delta_i) (cached at construction)."""
        return self._sigma  # type: ignore[attr-defined]


@dataclass(frozen=True, eq=False)
class GaussianMechanism(_AnalyticSigma, _UnbiasedReports):
    """``y_i = x_i + N(0, sigma_i^2)``: (eps_i, delta_i)-LDP on [-1, 1], delta_i > 0.

    sigma_i = :func:`analytic_gaussian_sigma` (eps_i, delta_i, sensitivity 2): Balle & Wang,
    ICML 2018, Theorem 8 (exact condition), root found per distinct budget and rounded up.
    Code names: ``eps`` = epsilon_i, ``delta`` = delta_i, :meth:`sigma` = sigma_i.  Unbiased,
    Var = sigma_i^2.  Blanket mass: inf over x in [-1, 1] of the density at y is
    ``phi((|y|+1)/sigma)/sigma``, with integral 2 Phi(-1/sigma).  A bound used with this mechanism
    must accept local delta_i > 0 (``BoundInfo.approx_ldp``).

    >>> m = GaussianMechanism(eps=[1.0, 1.0], delta=[1e-6, 1e-6])
    >>> bool(m.sigma()[0] == m.sigma()[1]) and float(m.sigma()[0]) > 2
    True
    >>> GaussianMechanism(eps=[1.0, 1.0], delta=0.0)
    Traceback (most recent call last):
    ...
    ValueError: delta must be in (0, 1), got delta[0] = 0.0
    """

    delta_i: NDArray[np.float64] | float = 1e-6
    name: ClassVar[str] = "gaussian"
    #: The randomizer family (shuffledp.families) this mechanism belongs to.
    family: ClassVar[str] = "gaussian"
    citation: ClassVar[str] = "Balle & Wang, ICML 2018, Theorem 8 (analytic Gaussian mechanism)"
    pure: ClassVar[bool] = False

    def __init__(self, eps: ArrayLike, delta: ArrayLike = 1e-6) -> None:
        self._set_budgets(eps, delta)

    def _ab(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return np.zeros(self.n), self.sigma() ** 2

    def pdf(self, y: ArrayLike, x: ArrayLike) -> NDArray[np.float64]:
        """Density of the report ``y`` given input ``x`` (broadcast against ``eps``)."""
        yv, xv = _values_array(y, "y"), _values_array(x, "x")
        s = self.sigma()
        z = (yv - xv) / s
        return np.exp(-0.5 * z**2) / (s * np.sqrt(2.0 * np.pi))

    def blanket_mass(self) -> NDArray[np.float64]:
        return 2.0 * ndtr(-1.0 / self.sigma())

    def randomize(self, x: ArrayLike, rng: np.random.Generator) -> NDArray[np.float64]:
        xv = self.check_values(x)
        return xv + check_rng(rng).standard_normal(self.n) * self.sigma()


@dataclass(frozen=True, eq=False)
class GaussianSharedMechanism(_AnalyticSigma, _SharedNoise):
    """``y_i = s_i x_i + N(0, 1)`` with ``s_i = 1 / sigma_i``: one noise law for every budget.

    sigma_i is :class:`GaussianMechanism`'s (the analytic calibration of (eps_i, delta_i),
    sensitivity 2; Balle & Wang, ICML 2018, Theorem 8), and the report is that mechanism's
    report divided by sigma_i, a fixed rescaling: (eps_i, delta_i)-LDP, with the mixture form
    of docs/theory.md Lemma 6.  Where :class:`GaussianMechanism` gives a larger budget less
    noise, this one gives it more signal; the noise law is common, so every user's report
    hides every victim (family ``gaussian_shared``, docs/theory.md 15.7, Lemma 17).  Code
    names: ``eps`` = epsilon_i, ``delta`` = delta_i, :meth:`sigma` = sigma_i, :meth:`signal`
    = s_i.

    Shuffled estimator (unlabelled): ``sum_i y_i / sum_i s_i``, unbiased under a random
    assignment of the budgets (module :mod:`shuffledp.mechanisms.base`), with variance
    ``(n + V) / (sum_i s_i)^2``, ``V`` = :func:`permutation_variance` of x and s.  Its noise
    part ``n / (sum s)^2 = 1 / (n mean(1/sigma)^2)`` is at most :class:`GaussianMechanism`'s
    ``mean(sigma^2) / n`` (Jensen).  Labelled (one delta for all users): ``mean_i y_i /
    s(label_i)``, the Gaussian mechanism's reports, variance ``sum_i sigma_i^2 / n^2``.

    >>> m = GaussianSharedMechanism(eps=[1.0, 2.0], delta=1e-6)
    >>> bool(np.allclose(m.signal() * m.sigma(), 1.0)), m.family
    (True, 'gaussian_shared')
    """

    delta_i: NDArray[np.float64] | float = 1e-6
    name: ClassVar[str] = "gaussian_shared"
    #: Variance of N(0, 1).
    noise_var: ClassVar[float] = 1.0
    #: The randomizer family (shuffledp.families) this mechanism belongs to.
    family: ClassVar[str] = "gaussian_shared"
    citation: ClassVar[str] = ("Balle & Wang, ICML 2018, Theorem 8, the report divided by "
                               "sigma_i (docs/theory.md 15.7)")
    pure: ClassVar[bool] = False

    def __init__(self, eps: ArrayLike, delta: ArrayLike = 1e-6) -> None:
        self._set_budgets(eps, delta)
        signal = 1.0 / self.sigma()
        signal.setflags(write=False)
        object.__setattr__(self, "_signal", signal)

    def signal(self, eps: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
        """s_i = 1 / sigma_i (``eps``: other budgets, e.g. labels, at the users' one delta)."""
        if eps is None:
            return self._signal  # type: ignore[attr-defined]
        d = self.delta
        if d.size and d.min() != d.max():
            raise ValueError("labels give budgets eps_i only: labelled estimation of "
                             "gaussian_shared needs one delta for all users, got delta_i from "
                             f"{float(d.min())!r} to {float(d.max())!r}")
        lab = as_budgets(eps, "eps")
        return 1.0 / analytic_gaussian_sigma(lab, float(d[0]) if d.size else 1e-6)

    def pdf(self, y: ArrayLike, x: ArrayLike) -> NDArray[np.float64]:
        """Density of the report ``y`` given input ``x`` (broadcast against ``eps``)."""
        yv, xv = _values_array(y, "y"), _values_array(x, "x")
        z = yv - self.signal() * xv
        return np.exp(-0.5 * z**2) / np.sqrt(2.0 * np.pi)

    def blanket_mass(self) -> NDArray[np.float64]:
        """The Gaussian mechanism's own (a rescaling keeps the mass of inf_x)."""
        return 2.0 * ndtr(-1.0 / self.sigma())

    def randomize(self, x: ArrayLike, rng: np.random.Generator) -> NDArray[np.float64]:
        xv = self.check_values(x)
        return xv * self.signal() + check_rng(rng).standard_normal(self.n)
