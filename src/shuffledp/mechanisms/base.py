"""Shared pieces of the local randomizers: budget validation, the permutation variance, and
the base classes of the mean and frequency mechanisms.

Every mechanism is a frozen dataclass holding the per-user budgets ``eps`` (epsilon_i, one
entry per user i = 0..n-1) and, for approximate-LDP mechanisms, ``delta`` (delta_i).  User i's
input is row ``x[i]``; :meth:`randomize` draws every random number from the ``rng`` passed in.

The estimator side and the shuffle model (docs/theory.md, section 1).  After shuffling, the analyst
sees the multiset of reports and the *multiset* of budgets (the profile), but not which report
carries which budget.  The estimators here use only those two objects.  They are unbiased when
the budgets are independent of the values: formally, when the assignment of the profile's
budgets to the users is a uniformly random permutation ``pi`` independent of the data (this
holds for i.i.d. budgets drawn independently of the values, the model of every sampler in
:mod:`shuffledp.limits`).  Mechanisms whose report is unbiased for its own input (Laplace,
piecewise, Gaussian) are unbiased for *every* assignment.  Users may instead opt to attach
their budget to the report (``labels``: the attached eps_i, shuffled together with the
report); the labelled estimators debias each report with its own budget and are unbiased for
every assignment.

The closed-form variances use one identity (Wald and Wolfowitz 1944; Hoeffding 1951, "A
combinatorial central limit theorem", Ann. Math. Statist. 22, Theorem 2's moments): for a
uniformly random permutation pi of n items,

    Var( sum_i a_i b_{pi(i)} ) = (1/(n-1)) sum_i (a_i - mean a)^2 sum_j (b_j - mean b)^2,

implemented by :func:`permutation_variance`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from shuffledp.budgets import BudgetProfile
from shuffledp.errors import short_repr
from shuffledp.limits import EPS_LOCAL_MAX
from shuffledp.validation import (
    as_real_array,
    check_array_range,
    check_bool,
    check_int,
    check_rng,
    check_str,
    describe,
)

__all__ = [
    "as_budgets",
    "as_reports",
    "check_rng",
    "permutation_variance",
    "Mechanism",
    "MeanMechanism",
    "FrequencyMechanism",
]

_EPS_RULE = f"finite and in (0, {EPS_LOCAL_MAX:g}] (the accepted local budgets)"
#: Largest number of categories d (categories are stored as int64).
_D_MAX = int(np.iinfo(np.int64).max)


def as_budgets(values: ArrayLike, name: str, *, positive: bool = True) -> NDArray[np.float64]:
    """A read-only 1-D float copy of per-user budgets, validated.

    ``positive=True`` requires every entry in (0, EPS_LOCAL_MAX] (epsilon_i of a mechanism
    whose noise scale is ~1/epsilon_i, within the accepted local budgets of
    :mod:`shuffledp.limits`); otherwise entries must lie in (0, 1) (delta_i).  ``TypeError``
    for anything but real numbers.

    >>> as_budgets([1.0, 2.0], "eps").tolist()
    [1.0, 2.0]
    >>> as_budgets([1.0, 0.0], "eps")
    Traceback (most recent call last):
    ...
    ValueError: eps must be finite and in (0, 50] (the accepted local budgets), got eps[1] = 0.0
    """
    arr = as_real_array(values, name)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {arr.shape}")
    if positive:
        check_array_range(
            arr, name, low=0.0, high=EPS_LOCAL_MAX, low_open=True, rule=_EPS_RULE, index=True
        )
    else:
        check_array_range(arr, name, low=0.0, high=1.0, low_open=True, high_open=True, index=True)
    arr.setflags(write=False)
    return arr


def permutation_variance(a: ArrayLike, b: ArrayLike) -> float:
    """``Var(sum_i a_i b_{pi(i)})`` for a uniformly random permutation ``pi`` (module doc).

    >>> permutation_variance([0.0, 1.0], [0.0, 1.0])  # sum is 1 or 0, each w.p. 1/2
    0.25
    """
    a = as_real_array(a, "a").ravel()
    b = as_real_array(b, "b").ravel()
    check_array_range(a, "a")
    check_array_range(b, "b")
    n = a.size
    if b.size != n:
        raise ValueError(f"a and b must have the same length, got {n} and {b.size}")
    if n < 2:
        return 0.0
    return float(((a - a.mean()) ** 2).sum() * ((b - b.mean()) ** 2).sum() / (n - 1))


def as_reports(reports: object, name: str = "reports") -> NDArray:
    """``reports`` as an array of numbers (bool, integer or float) with at least one
    dimension (one row per user); ``TypeError`` for anything else."""
    bad_type = reports is None or isinstance(reports, (str, bytes, dict, set))
    rep = None if bad_type else np.asarray(reports)
    if rep is None or rep.dtype.kind not in "biuf":
        is_arr = isinstance(reports, np.ndarray) and rep is not None
        got = f"ndarray of dtype {rep.dtype}" if is_arr else describe(reports)  # type: ignore[union-attr]
        raise TypeError(f"{name} must be an array of numbers, got {got}")
    if rep.ndim == 0:
        raise ValueError(f"{name} must have at least one dimension (one row per user)")
    return rep


def _values_array(values: object, name: str) -> NDArray[np.float64]:
    """Points at which a density or pmf is evaluated: real numbers, finite (any shape)."""
    arr = as_real_array(values, name)
    check_array_range(arr, name)
    return arr


@dataclass(frozen=True, eq=False)
class Mechanism(ABC):
    """Base of every local randomizer: per-user budgets and the quantities bounds need.

    Attributes (class level): ``name`` (registry key), ``citation``, ``pure`` (delta_i = 0).
    Which shuffle bounds hold for a mechanism is decided by its randomizer family
    (:meth:`randomizer`, :mod:`shuffledp.families`: clone masses against every victim) and
    :meth:`shuffledp.bounds.base.Bound.covers`, never by the mechanism itself.
    """

    eps: NDArray[np.float64]

    name: ClassVar[str] = ""
    #: The randomizer family (a spec name of :mod:`shuffledp.families`) of the mechanism.
    family: ClassVar[str] = ""
    citation: ClassVar[str] = ""
    pure: ClassVar[bool] = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", as_budgets(self.eps, "eps"))

    @classmethod
    def from_profile(cls, profile, **kwargs):
        """The mechanism for a :class:`~shuffledp.budgets.BudgetProfile`'s eps_i.

        Pure mechanisms ignore the profile's delta_i (they are (eps_i, 0)-LDP, which is
        stronger); approximate ones (the Gaussian) use them.  ``kwargs`` go to the class
        (e.g. ``d`` for frequency oracles).
        """
        if not isinstance(profile, BudgetProfile):
            raise TypeError(f"profile must be a BudgetProfile, got {type(profile).__name__}")
        if cls.pure:
            return cls(eps=profile.eps, **kwargs)
        return cls(eps=profile.eps, delta=profile.delta, **kwargs)

    @property
    def n(self) -> int:
        """Number of users n."""
        return int(self.eps.size)

    @property
    def delta(self) -> NDArray[np.float64]:
        """Per-user delta_i (zeros for pure mechanisms)."""
        return np.zeros(self.n)

    def profile(self, label: str = ""):
        """The budgets as a :class:`~shuffledp.budgets.BudgetProfile` (what bounds take)."""
        check_str(label, "label")
        return BudgetProfile(eps=self.eps, delta=self.delta, label=label or self.name)

    def randomizer(self):
        """The :class:`~shuffledp.families.base.Family` of this mechanism (declared by the
        class attribute ``family``; what :meth:`~shuffledp.bounds.base.Bound.covers` takes)."""
        from shuffledp.families import get_family

        return get_family(self)

    @abstractmethod
    def blanket_mass(self) -> NDArray[np.float64]:
        """Per-user privacy-blanket mass gamma_i = integral of inf_x f_x(y) dy (Balle, Bell,
        Gascon, Nissim, CRYPTO 2019, Section 3, "the blanket" of a randomizer)."""

    @abstractmethod
    def randomize(self, x: ArrayLike, rng: np.random.Generator) -> NDArray:
        """One report per user; row i is user i's report of ``x[i]`` under ``eps[i]``."""

    def _check_labels(self, labels: ArrayLike | None, size: int) -> NDArray[np.float64] | None:
        if labels is None:
            return None
        lab = as_budgets(labels, "labels")
        if lab.size != size:
            raise ValueError(
                f"labels must have one entry per report ({size}), got length {lab.size}"
            )
        return lab


@dataclass(frozen=True, eq=False)
class MeanMechanism(Mechanism):
    """A randomizer of values in [-1, 1] with an estimator of their mean (module doc)."""

    def check_values(self, x: ArrayLike) -> NDArray[np.float64]:
        """``x`` as a float array of length n with entries in [-1, 1]; ``TypeError`` unless
        ``x`` is an array of real numbers, ``ValueError`` for a bad shape or value."""
        arr = as_real_array(x, "x", scalar=False)
        if arr.ndim != 1 or arr.size != self.n:
            raise ValueError(
                f"x must be a 1-D array with one value per user ({self.n}), got shape {arr.shape}"
            )
        bad = ~np.isfinite(arr) | (arr < -1.0) | (arr > 1.0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"x must lie in [-1, 1], got x[{i}] = {float(arr[i])!r}")
        return arr

    @abstractmethod
    def estimate(self, reports: ArrayLike, *, labels: ArrayLike | None = None) -> float:
        """Estimate of mean(x) from the shuffled reports (and the attached eps, if any)."""

    @abstractmethod
    def variance(self, x: ArrayLike, *, labelled: bool = False) -> float:
        """Closed-form variance of :meth:`estimate` when the users hold ``x``.

        Unlabelled: over the mechanism and a uniformly random assignment of the budgets to the
        users (the model under which the estimator is unbiased).  Labelled: over the mechanism,
        for the assignment ``eps[i]`` <-> ``x[i]``.
        """


@dataclass(frozen=True, eq=False)
class FrequencyMechanism(Mechanism):
    """A randomizer of categories {0, ..., d-1} whose report *supports* some categories.

    User i's report supports its own category with probability ``p_i`` and any other given
    category with probability ``q_i`` (:meth:`support_probabilities`).  With ``N_k`` the
    number of reports supporting k and ``r_i = p_i - q_i``,

        E[N_k | pi] = sum_i q_i + sum_i r_i 1{x_i = k},

    so under a random assignment ``E[N_k] = sum_i q_i + n_k mean(r)`` and the estimator of the
    frequency f_k = n_k / n is ``(N_k - sum_i q_i) / sum_i r_i`` (Wang, Blocki, Li, Jha, USENIX
    Security 2017, Section 3, Eq. (2): the "pure" protocol estimator ``(c_k - n q)/(p - q)``,
    here with the population's sums in place of n p and n q).  Its variance (random assignment)
    is

        [ n_k mean(p(1-p)) + (n - n_k) mean(q(1-q)) + S_aa S_rr / (n-1) ] / (sum_i r_i)^2,

    with ``S_aa = n_k (n - n_k) / n`` and ``S_rr = sum_j (r_j - mean r)^2`` (the last term is
    :func:`permutation_variance`; it vanishes for identical budgets, where the formula is Wang
    et al.'s Eq. (3)).  Labelled: ``f_k = (1/n) sum_i (1{report i supports k} - q_i) / r_i``
    with variance ``(1/n^2) sum_i P_ik (1 - P_ik) / r_i^2``, ``P_ik = p_i`` if x_i = k else
    ``q_i``.
    """

    d: int

    def __post_init__(self) -> None:
        super().__post_init__()
        d = check_int(self.d, "d", low=2, high=_D_MAX, what="d (number of categories)")
        object.__setattr__(self, "d", d)

    def check_values(self, x: ArrayLike) -> NDArray[np.int64]:
        """``x`` as an integer array of length n with entries in {0, ..., d-1} (integer-valued
        floats are accepted); ``TypeError`` unless ``x`` is an array of real numbers."""
        return self._categories(x, "x", "one category per user")

    def _categories(self, values: object, name: str, what: str) -> NDArray[np.int64]:
        if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
            arr = values
        else:
            arr = as_real_array(values, name, scalar=False)
        if arr.ndim != 1 or arr.size != self.n:
            raise ValueError(
                f"{name} must be a 1-D array with {what} ({self.n}), got shape {arr.shape}"
            )
        if arr.dtype.kind == "f":
            bad = ~np.isfinite(arr) | (arr != np.round(arr))
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(
                    f"{name} must hold integer categories, got {name}[{i}] = {float(arr[i])!r}"
                )
        bad = (arr < 0) | (arr >= self.d)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{name} must lie in {{0, ..., {self.d - 1}}}, got {name}[{i}] = "
                f"{short_repr(int(arr[i]))}"
            )
        return arr.astype(np.int64)

    @abstractmethod
    def _pq(self, eps: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Support probabilities (p_i, q_i) for budgets ``eps``."""

    @abstractmethod
    def support_counts(
        self, reports: NDArray, weights: NDArray[np.float64] | None = None
    ) -> NDArray[np.float64]:
        """Length-d vector: (weighted) number of reports supporting each category."""

    def support_probabilities(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Per-user ``(p_i, q_i)`` (class docstring)."""
        return self._pq(self.eps)

    def estimate(
        self, reports: ArrayLike, *, labels: ArrayLike | None = None
    ) -> NDArray[np.float64]:
        """Estimated frequencies f_k, k = 0..d-1 (class docstring; they sum to 1 only in
        expectation)."""
        rep = as_reports(reports)
        if rep.ndim == 0 or rep.shape[0] != self.n:
            raise ValueError(
                f"reports must have one row per user ({self.n}), got shape {rep.shape}"
            )
        lab = self._check_labels(labels, rep.shape[0])
        if lab is None:
            p, q = self.support_probabilities()
            return (self.support_counts(rep) - q.sum()) / (p - q).sum()
        p, q = self._pq(lab)
        r = p - q
        return (self.support_counts(rep, 1.0 / r) - (q / r).sum()) / self.n

    def variance(self, x: ArrayLike, *, labelled: bool = False) -> NDArray[np.float64]:
        """Per-category variance of :meth:`estimate` for true categories ``x`` (class doc)."""
        labelled = check_bool(labelled, "labelled")
        xv = self.check_values(x)
        n = self.n
        p, q = self.support_probabilities()
        r = p - q
        if labelled:
            base = (q * (1 - q) / r**2).sum()
            extra = np.bincount(xv, weights=(p * (1 - p) - q * (1 - q)) / r**2, minlength=self.d)
            return (base + extra) / n**2
        nk = np.bincount(xv, minlength=self.d).astype(float)
        s_rr = float(((r - r.mean()) ** 2).sum())
        perm = nk * (n - nk) / n * s_rr / (n - 1)
        num = nk * (p * (1 - p)).mean() + (n - nk) * (q * (1 - q)).mean() + perm
        return num / r.sum() ** 2
