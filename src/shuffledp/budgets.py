"""Per-user local budgets: :class:`BudgetProfile`, its budget histogram, the central target.

A :class:`BudgetProfile` holds the personalized local budgets ``(eps_i, delta_i)`` of the
``n`` users of one shuffled protocol (personalized LDP, Chen, Cao, Ge, AAAI 2024, arXiv
2312.14388, Section 3: user ``i`` runs an ``(epsilon_i, delta_i)``-LDP randomizer).

Code names and paper notation: ``eps[i]`` = epsilon_i, ``delta[i]`` = delta_i, ``n`` = n.

Broadcasting: ``delta`` may be a scalar, which is broadcast to every user.  Arrays are copied
and made read-only, so a profile is immutable.  The accepted range is
:mod:`shuffledp.limits`; budgets files are read by :mod:`shuffledp.io`.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from shuffledp.caching import frozen_array, register_mapping
from shuffledp.errors import short_repr
from shuffledp.limits import EPS_LOCAL_MAX, N_MAX, N_MAX_ARRAYS
from shuffledp.validation import (
    as_real_array,
    check_bool,
    check_delta_array,
    check_eps_array,
    check_eps_range,
    check_groups,
    check_int,
    check_local_delta,
    check_local_eps,
    check_n,
    check_n_drawn,
    check_real,
    check_rng,
    check_str,
    check_target_delta,
    check_target_eps,
    describe,
    shown,
)

__all__ = ["BudgetProfile", "Tiers", "PrivacyTarget", "profile_digest"]


def _as_budget_array(values: object, name: str) -> NDArray[np.float64]:
    arr = as_real_array(values, name)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    return arr


def _group_sizes(shares: NDArray[np.float64], n: int) -> NDArray[np.int64]:
    """``round(share * n)``, the remainder given to the largest share (taken from the largest
    shares in turn when the rounding overshoots by more than that group holds)."""
    sizes = np.floor(shares * n + 0.5).astype(np.int64)
    diff = int(n) - int(sizes.sum())
    order = np.argsort(-shares, kind="stable")
    if diff >= 0:
        sizes[order[0]] += diff
    else:
        for idx in order:
            take = min(int(sizes[idx]), -diff)
            sizes[idx] -= take
            diff += take
            if diff == 0:
                break
    return sizes


class Tiers(NamedTuple):
    """A profile as a budget histogram: the distinct ``(eps_i, delta_i)`` pairs, sorted by
    eps and then delta, and how many users hold each (``counts`` >= 1, summing to ``n``).

    Every bound of the library reads a profile through this view (or through ``n`` and the
    extremes), never through per-user arrays, so a profile of 10^9 users in a few tiers costs
    what its tiers cost.
    """

    eps: NDArray[np.float64]
    delta: NDArray[np.float64]
    counts: NDArray[np.int64]


def _frozen_tiers(t: Tiers) -> Tiers:
    return Tiers(*(frozen_array(x) for x in t))


def _tiers_of_users(eps: NDArray[np.float64], delta: NDArray[np.float64]) -> Tiers:
    """The histogram of per-user arrays: one pass for identical users, a sort of eps when
    every delta is equal, a lexsort otherwise."""
    if bool(np.all(eps == eps[0])) and bool(np.all(delta == delta[0])):
        t = Tiers(eps[:1].copy(), delta[:1].copy(), np.array([eps.size], dtype=np.int64))
    elif bool(np.all(delta == delta[0])):
        values, counts = np.unique(eps, return_counts=True)
        t = Tiers(values, np.full(values.size, float(delta[0])), counts.astype(np.int64))
    else:
        order = np.lexsort((delta, eps))
        e, d = eps[order], delta[order]
        new = np.ones(e.size, dtype=bool)
        new[1:] = (e[1:] != e[:-1]) | (d[1:] != d[:-1])
        first = np.flatnonzero(new)
        t = Tiers(e[first], d[first], np.diff(np.append(first, e.size)).astype(np.int64))
    return _frozen_tiers(t)


def _merge_tiers(eps: NDArray[np.float64], delta: NDArray[np.float64],
                 counts: NDArray[np.int64]) -> Tiers:
    """Sorted distinct pairs with summed counts; zero counts dropped."""
    keep = counts > 0
    eps, delta, counts = eps[keep], delta[keep], counts[keep]
    order = np.lexsort((delta, eps))
    e, d, c = eps[order], delta[order], counts[order]
    new = np.ones(e.size, dtype=bool)
    new[1:] = (e[1:] != e[:-1]) | (d[1:] != d[:-1])
    first = np.flatnonzero(new)
    t = Tiers(e[first], d[first], np.add.reduceat(c, first).astype(np.int64))
    return _frozen_tiers(t)


def _as_counts(values: object, size: int) -> NDArray[np.int64]:
    """``counts`` as an int64 array, one whole number >= 0 per tier."""
    arr = as_real_array(values, "counts")
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"counts must be one-dimensional, got shape {arr.shape}")
    if arr.size != size:
        raise ValueError(
            f"counts must have one entry per budget value ({size}), got length {arr.size}"
        )
    bad = ~np.isfinite(arr) | (arr < 0) | (arr != np.floor(arr)) | (arr > 2.0**62)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"counts must be whole numbers >= 0 (users per budget), got counts[{i}] = "
            f"{float(arr[i])!r}"
        )
    return arr.astype(np.int64)


class BudgetProfile:
    """The local budgets ``(eps_i, delta_i)`` of ``n >= 2`` users: per-user arrays, or a
    budget histogram (distinct budgets and how many users hold each).

    Every bound reads :attr:`tiers` (the histogram), :attr:`n` and the extremes;
    :attr:`eps` and :attr:`delta` are the per-user arrays (a histogram profile expands them on
    first use, in tier order, and refuses beyond ``N_MAX_ARRAYS`` users).  Arrays are copied
    and read-only, so a profile is immutable.

    Parameters
    ----------
    eps:
        Local epsilons epsilon_i in [0, EPS_LOCAL_MAX]: one per user, or (with ``counts``)
        one per budget tier.
    delta:
        Local deltas delta_i in [0, 1), aligned with ``eps``; a scalar is broadcast.
    label:
        Free text describing where the profile came from (kept for output tables).
    counts:
        Keyword only, optional.  How many users hold ``(eps[t], delta[t])``.  With it the
        profile is a *histogram* of ``n = sum(counts)`` users (up to ``N_MAX`` = 10^9) and no
        per-user array is ever built by the bounds; without it ``eps`` lists every user (up to
        ``N_MAX_ARRAYS`` = 10^8).

    Examples
    --------
    >>> p = BudgetProfile.identical(n=4, eps0=1.0)
    >>> p.n, float(p.eps.max()), float(p.delta.max())
    (4, 1.0, 0.0)
    >>> BudgetProfile.from_histogram(eps=[0.5, 4.0], counts=[999_000_000, 1_000_000]).n
    1000000000
    >>> BudgetProfile.from_arrays([1.0, -1.0])
    Traceback (most recent call last):
    ...
    ValueError: eps must be finite and in [0, 50] (the accepted local budgets), got eps[1] = -1.0
    """

    def __init__(self, eps: ArrayLike, delta: ArrayLike | float = 0.0, label: str = "", *,
                 counts: ArrayLike | None = None) -> None:
        check_str(label, "label")
        e = _as_budget_array(eps, "eps")
        d = _as_budget_array(delta, "delta")
        what = "budget value" if counts is not None else "user"
        if d.size == 1:
            check_delta_array(d)
            d = np.full(e.shape, d[0], dtype=np.float64)
        if d.shape != e.shape:
            raise ValueError(
                f"delta must be a scalar or have one entry per {what} ({e.size}), "
                f"got length {d.size}"
            )
        if counts is None:
            if e.size < 2:
                raise ValueError(
                    f"n (number of users) must be >= 2, got {e.size} (the length of eps)"
                )
            if e.size > N_MAX_ARRAYS:
                raise ValueError(
                    f"n (number of users) given as per-user arrays must be <= "
                    f"{N_MAX_ARRAYS:.0e}, got {e.size} (the length of eps); give larger "
                    f"populations as a budget histogram (counts)"
                )
            check_eps_array(e)
            check_delta_array(d)
            e, d = frozen_array(e + 0.0), frozen_array(d + 0.0)  # -0.0 -> 0.0
            self._users: tuple[NDArray[np.float64], NDArray[np.float64]] | None = (e, d)
            self._tiers: Tiers | None = None
            self._n = int(e.size)
        else:
            c = _as_counts(counts, e.size)
            check_eps_array(e)
            check_delta_array(d)
            # an int64 sum of counts up to 2^62 can overflow: the float sum says when
            approx = float(c.sum(dtype=np.float64)) if c.size else 0.0
            if approx > 2.0 * N_MAX:
                raise ValueError(f"n (number of users) must be <= {N_MAX:.0e}, got about "
                                 f"{approx:.3g} (the sum of counts)")
            n = int(c.sum()) if c.size else 0
            if n < 2:
                raise ValueError(f"n (number of users) must be >= 2, got {n} (the sum of counts)")
            if n > N_MAX:
                raise ValueError(
                    f"n (number of users) must be <= {N_MAX:.0e}, got {n} (the sum of counts)"
                )
            self._users = None
            self._tiers = _merge_tiers(e + 0.0, d + 0.0, c)  # -0.0 -> 0.0
            self._n = n
        self._histogram = counts is not None
        self.label = label
        self._frozen = True

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_frozen", False):
            raise AttributeError(f"BudgetProfile is immutable (cannot set {name!r})")
        object.__setattr__(self, name, value)

    # ------------------------------------------------------------------ views
    @property
    def tiers(self) -> Tiers:
        """The budget histogram (:class:`Tiers`), computed once."""
        if self._tiers is None:
            object.__setattr__(self, "_tiers", _tiers_of_users(*self._users))  # type: ignore[misc]
        return self._tiers  # type: ignore[return-value]

    @property
    def is_histogram(self) -> bool:
        """True when the profile was given as a budget histogram (``counts``)."""
        return self._histogram

    def _user_arrays(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        if self._users is None:
            if self._n > N_MAX_ARRAYS:
                raise ValueError(
                    f"this profile of n = {self._n} users is a budget histogram "
                    f"({self.tiers.eps.size} tiers); per-user arrays exist only up to "
                    f"{N_MAX_ARRAYS:.0e} users: read profile.tiers instead"
                )
            t = self.tiers
            e, d = frozen_array(np.repeat(t.eps, t.counts)), frozen_array(
                np.repeat(t.delta, t.counts))
            object.__setattr__(self, "_users", (e, d))
        return self._users  # type: ignore[return-value]

    @property
    def eps(self) -> NDArray[np.float64]:
        """Per-user epsilon_i (a histogram profile: expanded in tier order on first use)."""
        return self._user_arrays()[0]

    @property
    def delta(self) -> NDArray[np.float64]:
        """Per-user delta_i (a histogram profile: expanded in tier order on first use)."""
        return self._user_arrays()[1]

    @property
    def n(self) -> int:
        """Number of users n."""
        return self._n

    @property
    def is_identical(self) -> bool:
        """True when every user has the same (eps_i, delta_i)."""
        if self._tiers is not None:
            return self._tiers.eps.size == 1
        e, d = self._users  # type: ignore[misc]
        return bool(np.all(e == e[0]) and np.all(d == d[0]))

    @property
    def is_pure(self) -> bool:
        """True when every delta_i is 0 (pure LDP)."""
        return self.delta_max == 0.0

    @property
    def eps_max(self) -> float:
        """max_i epsilon_i."""
        return float(self.tiers.eps[-1] if self._tiers is not None else self._users[0].max())

    @property
    def eps_min(self) -> float:
        """min_i epsilon_i."""
        return float(self.tiers.eps[0] if self._tiers is not None else self._users[0].min())

    @property
    def delta_max(self) -> float:
        """max_i delta_i."""
        return float((self._tiers.delta if self._tiers is not None else self._users[1]).max())

    @property
    def delta_min(self) -> float:
        """min_i delta_i."""
        return float((self._tiers.delta if self._tiers is not None else self._users[1]).min())

    @property
    def eps_mean(self) -> float:
        """The mean local epsilon (1/n) sum_i epsilon_i."""
        if self._users is not None:
            return float(self._users[0].mean())
        t = self.tiers
        return float(np.dot(t.eps, t.counts.astype(np.float64)) / self._n)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def identical(
        cls, *, n: int, eps0: float, delta0: float = 0.0, label: str = ""
    ) -> BudgetProfile:
        """``n`` users with the same budget ``(eps0, delta0)`` (a one-tier histogram, so
        ``n`` may be up to ``N_MAX`` = 10^9).

        >>> BudgetProfile.identical(n=10, eps0="1.0")
        Traceback (most recent call last):
        ...
        TypeError: eps0 must be a real number, got str '1.0'
        """
        n = check_n(n)
        e = check_local_eps(eps0, "eps0")
        d = check_local_delta(delta0, "delta0")
        check_str(label, "label")
        return cls(eps=[e], delta=[d], counts=[n], label=label or f"identical(eps0={e:g})")

    @classmethod
    def from_histogram(
        cls, eps: ArrayLike, counts: ArrayLike, delta: ArrayLike | None = None, *,
        label: str = ""
    ) -> BudgetProfile:
        """A budget histogram: ``counts[t]`` users hold ``(eps[t], delta[t])`` (``delta``
        optional, a scalar is broadcast).  Repeated budgets are merged and zero counts
        dropped; ``n = sum(counts)`` must be in [2, N_MAX].  Nothing is expanded: every bound
        reads :attr:`tiers`.

        >>> p = BudgetProfile.from_histogram([2.0, 0.5, 2.0], counts=[3, 10, 2])
        >>> p.tiers.eps.tolist(), p.tiers.counts.tolist(), p.n
        ([0.5, 2.0], [10, 5], 15)
        >>> BudgetProfile.from_histogram([1.0], counts=[2.5])
        Traceback (most recent call last):
        ...
        ValueError: counts must be whole numbers >= 0 (users per budget), got counts[0] = 2.5
        """
        if counts is None:
            raise TypeError(f"counts must be an array of whole numbers, got {describe(counts)}")
        return cls(eps=eps, delta=0.0 if delta is None else delta, counts=counts, label=label)

    @classmethod
    def from_arrays(
        cls, eps: ArrayLike, delta: ArrayLike | None = None, *, label: str = ""
    ) -> BudgetProfile:
        """Profile from arrays of per-user ``eps`` and (optional, broadcast) ``delta``."""
        return cls(eps=eps, delta=0.0 if delta is None else delta, label=label)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ seeded samplers
    @classmethod
    def uniform(
        cls,
        *,
        n: int,
        low: float,
        high: float,
        rng: np.random.Generator,
        delta0: float = 0.0,
    ) -> BudgetProfile:
        """eps_i ~ Uniform[low, high] i.i.d., drawn from ``rng``."""
        n = check_n_drawn(n)
        lo, hi = check_eps_range(low, high)
        check_rng(rng)
        d = check_local_delta(delta0, "delta0")
        eps = rng.uniform(lo, hi, size=n)
        return cls(eps=eps, delta=d, label=f"uniform[{lo:g},{hi:g}]")

    @classmethod
    def clipped_normal(
        cls,
        *,
        n: int,
        mean: float,
        std: float,
        low: float,
        high: float,
        rng: np.random.Generator,
        delta0: float = 0.0,
    ) -> BudgetProfile:
        """eps_i ~ Normal(mean, std) clipped to [low, high], i.i.d., drawn from ``rng``."""
        n = check_n_drawn(n)
        mu = check_real(mean, "mean")
        sd = check_real(std, "std", low=0.0)
        lo, hi = check_eps_range(low, high)
        check_rng(rng)
        d = check_local_delta(delta0, "delta0")
        eps = np.clip(rng.normal(mu, sd, size=n), lo, hi)
        return cls(eps=eps, delta=d, label=f"normal({mu:g},{sd:g})@[{lo:g},{hi:g}]")

    @classmethod
    def mixture(
        cls,
        *,
        n: int,
        groups: Sequence[tuple[float, float]] | Sequence[tuple[float, float, float]],
        rng: np.random.Generator | None = None,
        shuffle: bool = False,
    ) -> BudgetProfile:
        """A mixture of budget groups ``(share, eps, [delta])``.

        Group sizes are ``round(share * n)`` with the remainder given to the largest share
        (deterministic, so ``rng`` is needed only when ``shuffle`` is true).  Without
        ``shuffle`` the profile is a budget histogram (n up to ``N_MAX``; its per-user arrays
        list the groups in increasing eps); with it, per-user arrays in a random order (n up
        to ``N_MAX_ARRAYS``).

        >>> p = BudgetProfile.mixture(n=10, groups=[(0.3, 0.5), (0.7, 2.0)])
        >>> int((p.eps == 0.5).sum()), int((p.eps == 2.0).sum())
        (3, 7)
        """
        n = check_n(n)
        norm = check_groups(groups, 0.0)
        shuffle = check_bool(shuffle, "shuffle")
        if shuffle:
            check_rng(rng, when="when shuffle=True")
        elif rng is not None:
            check_rng(rng)
        shares = np.array([g[0] for g in norm], dtype=float)
        if not np.isclose(shares.sum(), 1.0, rtol=0.0, atol=1e-9):
            raise ValueError(
                f"groups shares must sum to 1, got {short_repr(shares.tolist())} "
                f"(sum {float(shares.sum())!r})"
            )
        sizes = _group_sizes(shares, n)
        label = "mix(" + ",".join(f"{g[0]:g}:{g[1]:g}" for g in norm) + ")"
        if not shuffle:  # a budget histogram: nothing per user (n up to N_MAX)
            return cls.from_histogram([g[1] for g in norm], sizes, [g[2] for g in norm],
                                      label=label)
        n = check_n_drawn(n)
        eps = np.concatenate([np.full(s, g[1]) for s, g in zip(sizes, norm, strict=True)])
        delta = np.concatenate([np.full(s, g[2]) for s, g in zip(sizes, norm, strict=True)])
        if shuffle:
            perm = rng.permutation(eps.size)  # type: ignore[union-attr]
            eps, delta = eps[perm], delta[perm]
        return cls(eps=eps, delta=delta, label=label)

    def _same_kind(self, eps: NDArray[np.float64], delta: NDArray[np.float64],
                   counts: NDArray[np.int64] | None = None) -> BudgetProfile:
        return BudgetProfile(eps=eps, delta=delta, counts=counts, label=self.label)

    def without(self, index: int) -> BudgetProfile:
        """The profile with user ``index`` removed (needs n >= 3); a histogram profile
        counts users in tier order and stays a histogram."""
        i = check_int(index, "index")
        if not -self.n <= i < self.n:
            raise ValueError(f"index must be in [-{self.n}, {self.n}), got {short_repr(i)}")
        if self.n < 3:
            raise ValueError(f"without needs n >= 3 users (2 must remain), got n = {self.n}")
        if self.is_histogram:
            t = self.tiers
            tier = int(np.searchsorted(np.cumsum(t.counts), i % self.n, side="right"))
            counts = t.counts.copy()
            counts[tier] -= 1
            return self._same_kind(t.eps, t.delta, counts)
        keep = np.ones(self.n, dtype=bool)
        keep[i] = False
        return self._same_kind(self.eps[keep], self.delta[keep])

    def scaled(self, factor: float) -> BudgetProfile:
        """Every eps_i multiplied by ``factor`` >= 0 (the deltas unchanged); the result must
        stay within the accepted local budgets (max eps_i <= EPS_LOCAL_MAX).  A histogram
        stays a histogram."""
        f = check_real(factor, "factor", low=0.0)
        if f * self.eps_max > EPS_LOCAL_MAX:
            raise ValueError(
                f"factor must keep every eps_i <= {EPS_LOCAL_MAX:g} (the accepted local "
                f"budgets), got {shown(factor)} (max eps_i would be {f * self.eps_max:.6g})"
            )
        if self.is_histogram:
            t = self.tiers
            return self._same_kind(t.eps * f, t.delta, t.counts)
        return self._same_kind(self.eps * f, self.delta)

    def rounded_down(self, levels: int) -> BudgetProfile:
        """Every eps_i rounded *down* to one of at most ``levels`` values (deltas unchanged).

        The values are the budgets at the quantiles ``j / levels``, j = 0..levels-1, of the
        users' eps (counting users, the smallest budget first, so the smallest budget is one
        of them); each user keeps the largest value not above its own budget.  A user then
        runs with a budget at most its own: its local guarantee still holds.  Why: randomizers
        whose outputs for different budgets do not overlap (the L2-ball Duchi and the
        d-dimensional Gaussian randomizers of SGD) are amplified only by users with the
        *same* budget (docs/theory.md 14), so a profile of
        distinct budgets is rounded to a few tiers first.  Profiles with at most ``levels``
        distinct budgets are returned unchanged; the user order (and a histogram) is kept.

        >>> p = BudgetProfile(eps=[2.0, 0.5, 1.0, 1.5, 0.7, 1.9])
        >>> p.rounded_down(2).eps.tolist()
        [1.5, 0.5, 0.5, 1.5, 0.5, 1.5]
        """
        k = check_int(levels, "levels", low=1)
        t = self.tiers
        if np.unique(t.eps).size <= k:
            return self
        cum = np.cumsum(t.counts)
        # the tier holding the user of rank floor(j n / k) (0-based), j = 0..k-1
        ranks = (np.arange(k, dtype=np.float64) * self.n / k).astype(np.int64)
        values = np.unique(t.eps[np.searchsorted(cum, ranks, side="right")])
        if self.is_histogram:
            new = values[np.searchsorted(values, t.eps, side="right") - 1]
            return self._same_kind(new, t.delta, t.counts)
        new = values[np.searchsorted(values, self.eps, side="right") - 1]
        return self._same_kind(new, self.delta)

    def with_n(self, n: int, rng: np.random.Generator | None = None) -> BudgetProfile:
        """Resample (identical: replicate) the profile to ``n`` users.

        Identical budgets give a one-tier histogram.  Otherwise each new user draws a budget
        from the profile's users uniformly at random from ``rng``: per-user arrays by drawing
        indices (up to ``N_MAX_ARRAYS`` users), a histogram profile (or ``n`` above
        ``N_MAX_ARRAYS``) by one multinomial draw of the tier counts (the same law).
        """
        n = check_n(n)
        if rng is not None:
            check_rng(rng)
        t = self.tiers if self.is_histogram or self.is_identical else None
        if t is not None and t.eps.size == 1:
            return self._same_kind(t.eps, t.delta, np.array([n], dtype=np.int64))
        check_rng(rng, when="to resample a non-identical profile")
        if self.is_histogram or n > N_MAX_ARRAYS:
            t = self.tiers
            share = t.counts / float(self.n)
            counts = rng.multinomial(n, share / share.sum())  # type: ignore[union-attr]
            return self._same_kind(t.eps, t.delta, counts.astype(np.int64))
        idx = rng.integers(0, self.n, size=n)  # type: ignore[union-attr]
        return self._same_kind(self.eps[idx], self.delta[idx])

    def __repr__(self) -> str:
        kind = f", {self.tiers.eps.size} tiers" if self.is_histogram else ""
        return (
            f"BudgetProfile(n={self.n}{kind}, eps in [{self.eps_min:g}, {self.eps_max:g}], "
            f"delta_max={self.delta_max:g}, label={short_repr(self.label)})"
        )


@dataclass(frozen=True)
class PrivacyTarget:
    """A central ``(eps, delta)`` guarantee; either may be ``None`` when it is the unknown.

    ``eps`` as :func:`check_target_eps`, ``delta`` as :func:`check_target_delta` (the
    accepted range); both are stored as floats.

    >>> PrivacyTarget(eps=None, delta=1e-6).delta
    1e-06
    >>> PrivacyTarget(eps=None, delta=1.5)
    Traceback (most recent call last):
    ...
    ValueError: delta must be in [1e-30, 0.99], got 1.5
    """

    eps: float | None = None
    delta: float | None = None

    def __post_init__(self) -> None:
        if self.eps is None and self.delta is None:
            raise ValueError("one of eps or delta must be given")
        if self.eps is not None:
            object.__setattr__(self, "eps", check_target_eps(self.eps))
        if self.delta is not None:
            object.__setattr__(self, "delta", check_target_delta(self.delta))



_DIGESTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
register_mapping("budgets.digests", _DIGESTS)


def profile_digest(profile: BudgetProfile) -> str:
    """Content hash of a profile's budget histogram (cache key; a histogram and its expansion
    hash alike, the bounds being functions of the multiset of budgets), computed once per
    profile object."""
    d = _DIGESTS.get(profile)
    if d is None:
        h = hashlib.blake2b(digest_size=16)
        t = profile.tiers
        for a in (t.eps, t.delta, t.counts):
            h.update(np.ascontiguousarray(a).tobytes())
        d = h.hexdigest()
        _DIGESTS[profile] = d
    return d
