"""Parameters: per-user local budgets and the central target.

A :class:`BudgetProfile` holds the personalized local budgets ``(eps_i, delta_i)`` of the
``n`` users of one shuffled protocol (personalized LDP, Chen, Cao, Ge, AAAI 2024, arXiv
2312.14388, Section 3: user ``i`` runs an ``(epsilon_i, delta_i)``-LDP randomizer).

Code names and paper notation: ``eps[i]`` = epsilon_i, ``delta[i]`` = delta_i, ``n`` = n.

Broadcasting: ``delta`` may be a scalar, which is broadcast to every user.  Arrays are copied
and made read-only, so a profile is immutable.

The accepted range (stated here, once; enforced by :class:`BudgetProfile`, by every bound's
``eps``/``delta``/``evaluate``, by the CLI and by the workflow's config schema, which a test
checks against these constants):

* local budgets ``eps_i`` in ``[0, EPS_LOCAL_MAX]`` = [0, 50] and ``delta_i`` in [0, 1);
* ``n`` from 2 to ``N_MAX`` = 10^8 users (identical budgets; distinct budgets are supported
  and tested up to 10^7);
* a central target ``delta`` in ``[DELTA_MIN, DELTA_MAX]`` = [1e-30, 0.99];
* a central target ``eps``: any finite float >= 0.

Every rigorous bound is sound, and checked against exact computations, over this whole range
(docs/theory.md, "Numerics over the accepted range").
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "EPS_LOCAL_MAX",
    "N_MAX",
    "DELTA_MIN",
    "DELTA_MAX",
    "check_target_delta",
    "check_target_eps",
    "BudgetProfile",
    "PrivacyTarget",
    "profile_from_spec",
]

#: Largest accepted local budget eps_i.
EPS_LOCAL_MAX = 50.0
#: Largest accepted number of users.
N_MAX = 10**8
#: Smallest accepted central target delta.
DELTA_MIN = 1e-30
#: Largest accepted central target delta.
DELTA_MAX = 0.99


def _is_real(value: object) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


def check_target_delta(delta: object, name: str = "delta") -> float:
    """A central target delta as a float in ``[DELTA_MIN, DELTA_MAX]``.

    >>> check_target_delta(1e-6)
    1e-06
    >>> check_target_delta(0.0)
    Traceback (most recent call last):
    ...
    ValueError: delta must be in [1e-30, 0.99], got 0.0
    >>> check_target_delta("1e-6")
    Traceback (most recent call last):
    ...
    TypeError: delta must be a real number, got str '1e-6'
    """
    if not _is_real(delta):
        raise TypeError(f"{name} must be a real number, got {type(delta).__name__} {delta!r:.60}")
    d = float(delta)  # type: ignore[arg-type]
    if not (DELTA_MIN <= d <= DELTA_MAX):  # also rejects nan
        raise ValueError(f"{name} must be in [{DELTA_MIN:g}, {DELTA_MAX:g}], got {d!r}")
    return d


def check_target_eps(eps: object, name: str = "eps") -> float:
    """A central target eps as a finite float >= 0.

    >>> check_target_eps(800)
    800.0
    >>> check_target_eps(float("inf"))
    Traceback (most recent call last):
    ...
    ValueError: eps must be finite and >= 0, got inf
    """
    if not _is_real(eps):
        raise TypeError(f"{name} must be a real number, got {type(eps).__name__} {eps!r:.60}")
    e = float(eps)  # type: ignore[arg-type]
    if not (np.isfinite(e) and e >= 0):
        raise ValueError(f"{name} must be finite and >= 0, got {e!r}")
    return e


def _as_budget_array(values: ArrayLike, name: str) -> NDArray[np.float64]:
    try:
        arr = np.array(values, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be numeric, got {values!r}") from err
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    return arr


def _check_eps(eps: NDArray[np.float64], name: str = "eps") -> None:
    bad = ~np.isfinite(eps) | (eps < 0) | (eps > EPS_LOCAL_MAX)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        where = f"{name}[{i}] = " if eps.size > 1 else ""
        raise ValueError(
            f"{name} must be finite and in [0, {EPS_LOCAL_MAX:g}] (the accepted local budgets), got "
            f"{where}{float(eps[i])!r}"
        )


def _check_delta(delta: NDArray[np.float64], name: str = "delta") -> None:
    bad = ~np.isfinite(delta) | (delta < 0) | (delta >= 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        where = f"{name}[{i}] = " if delta.size > 1 else ""
        raise ValueError(f"{name} must be in [0, 1), got {where}{float(delta[i])!r}")


@dataclass(frozen=True, eq=False)
class BudgetProfile:
    """Per-user local budgets ``(eps_i, delta_i)`` of ``n >= 2`` users.

    Parameters
    ----------
    eps:
        Local epsilons epsilon_i >= 0, one per user.
    delta:
        Local deltas delta_i in [0, 1); a scalar is broadcast to all users.
    label:
        Free text describing where the profile came from (kept for output tables).

    >>> p = BudgetProfile.identical(n=4, eps0=1.0)
    >>> p.n, float(p.eps.max()), float(p.delta.max())
    (4, 1.0, 0.0)
    >>> BudgetProfile.from_arrays([1.0, -1.0])
    Traceback (most recent call last):
    ...
    ValueError: eps must be finite and in [0, 50] (the accepted local budgets), got eps[1] = -1.0
    """

    eps: NDArray[np.float64]
    delta: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    label: str = ""

    def __post_init__(self) -> None:
        eps = _as_budget_array(self.eps, "eps")
        delta = _as_budget_array(self.delta, "delta")
        if delta.size == 1:
            _check_delta(delta)
        if delta.size == 0 or delta.size == 1:
            fill = 0.0 if delta.size == 0 else delta[0]
            delta = np.full(eps.shape, fill, dtype=np.float64)
        if eps.size < 2:
            raise ValueError(f"n (number of users) must be >= 2, got {eps.size}")
        if eps.size > N_MAX:
            raise ValueError(f"n (number of users) must be <= {N_MAX:.0e}, got {eps.size}")
        if delta.shape != eps.shape:
            raise ValueError(
                f"delta must be a scalar or have one entry per user ({eps.size}), "
                f"got length {delta.size}"
            )
        _check_eps(eps)
        _check_delta(delta)
        eps.setflags(write=False)
        delta.setflags(write=False)
        object.__setattr__(self, "eps", eps)
        object.__setattr__(self, "delta", delta)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def identical(
        cls, *, n: int, eps0: float, delta0: float = 0.0, label: str = ""
    ) -> BudgetProfile:
        """``n`` users with the same budget ``(eps0, delta0)``."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"n must be an integer, got {n!r}")
        if n < 2:
            raise ValueError(f"n (number of users) must be >= 2, got {n!r}")
        _check_eps(np.array([float(eps0)]), "eps0")
        _check_delta(np.array([float(delta0)]), "delta0")
        return cls(
            eps=np.full(int(n), float(eps0)),
            delta=np.full(int(n), float(delta0)),
            label=label or f"identical(eps0={eps0:g})",
        )

    @classmethod
    def from_arrays(
        cls, eps: ArrayLike, delta: ArrayLike | None = None, *, label: str = ""
    ) -> BudgetProfile:
        """Profile from arrays of per-user ``eps`` and (optional, broadcast) ``delta``."""
        return cls(eps=eps, delta=0.0 if delta is None else delta, label=label)

    @classmethod
    def from_csv_text(cls, text: str, *, label: str = "") -> BudgetProfile:
        """Parse CSV text with a header: a column ``eps`` and an optional column ``delta``.

        The caller reads the file (see :func:`shuffledp.io.load_budgets`); this function only
        parses, so the library stays free of file I/O.

        >>> BudgetProfile.from_csv_text("eps,delta\\n1.0,0\\n2.0,1e-8\\n").n
        2
        >>> BudgetProfile.from_csv_text("eps\\n1.0\\nabc\\n")
        Traceback (most recent call last):
        ...
        ValueError: budgets column 'eps' must be numeric, got 'abc' on data row 2
        """
        lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        if not lines:
            raise ValueError("budgets file is empty (expected a header with a column 'eps')")
        header = [h.strip().lower() for h in lines[0].split(",")]
        if "eps" not in header:
            raise ValueError(f"budgets file needs a column 'eps', got header {lines[0]!r}")
        if len(lines) == 1:
            raise ValueError("budgets file has a header but no data rows")
        i_eps = header.index("eps")
        i_delta = header.index("delta") if "delta" in header else None
        columns: dict[str, list[float]] = {"eps": [], "delta": []}
        for row_no, line in enumerate(lines[1:], start=1):
            cells = [c.strip() for c in line.split(",")]
            if len(cells) != len(header):
                raise ValueError(
                    f"budgets file data row {row_no} has {len(cells)} cells, "
                    f"header has {len(header)}"
                )
            for name, idx in (("eps", i_eps), ("delta", i_delta)):
                if idx is None:
                    continue
                try:
                    columns[name].append(float(cells[idx]))
                except ValueError:
                    raise ValueError(
                        f"budgets column {name!r} must be numeric, got {cells[idx]!r} "
                        f"on data row {row_no}"
                    ) from None
        delta = columns["delta"] if i_delta is not None else 0.0
        return cls(eps=columns["eps"], delta=delta, label=label)

    @classmethod
    def from_npy_bytes(cls, data: bytes, *, label: str = "") -> BudgetProfile:
        """Parse the bytes of a ``.npy`` file: a 1-D array of eps, or an (n, 2) array
        whose columns are ``eps`` and ``delta``, or a structured array with fields
        ``eps`` (and optionally ``delta``)."""
        if not data:
            raise ValueError("budgets .npy file is empty")
        try:
            arr = np.load(io.BytesIO(data), allow_pickle=False)
        except ValueError as err:
            raise ValueError(f"budgets .npy file could not be read: {err}") from None
        if arr.dtype.names:
            if "eps" not in arr.dtype.names:
                raise ValueError(f"budgets .npy needs a field 'eps', got {arr.dtype.names}")
            delta = arr["delta"] if "delta" in arr.dtype.names else 0.0
            return cls(eps=arr["eps"], delta=delta, label=label)
        if not np.issubdtype(arr.dtype, np.number):
            raise ValueError(f"budgets .npy must be numeric, got dtype {arr.dtype}")
        if arr.ndim == 1:
            return cls(eps=arr, delta=0.0, label=label)
        if arr.ndim == 2 and arr.shape[1] in (1, 2):
            delta = arr[:, 1] if arr.shape[1] == 2 else 0.0
            return cls(eps=arr[:, 0], delta=delta, label=label)
        raise ValueError(f"budgets .npy must have shape (n,) or (n, 2), got {arr.shape}")

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
        _check_range(low, high)
        _check_n(n)
        eps = rng.uniform(low, high, size=int(n))
        return cls(eps=eps, delta=delta0, label=f"uniform[{low:g},{high:g}]")

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
        _check_range(low, high)
        _check_n(n)
        if not np.isfinite(std) or std < 0:
            raise ValueError(f"std must be finite and >= 0, got {std!r}")
        eps = np.clip(rng.normal(mean, std, size=int(n)), low, high)
        return cls(eps=eps, delta=delta0, label=f"normal({mean:g},{std:g})@[{low:g},{high:g}]")

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
        (deterministic, so ``rng`` is needed only when ``shuffle`` is true).

        >>> p = BudgetProfile.mixture(n=10, groups=[(0.3, 0.5), (0.7, 2.0)])
        >>> int((p.eps == 0.5).sum()), int((p.eps == 2.0).sum())
        (3, 7)
        """
        _check_n(n)
        if not groups:
            raise ValueError("groups must not be empty")
        shares = np.array([g[0] for g in groups], dtype=float)
        if (shares < 0).any() or not np.isclose(shares.sum(), 1.0, atol=1e-9):
            raise ValueError(f"group shares must be >= 0 and sum to 1, got {shares.tolist()}")
        sizes = np.floor(shares * n + 0.5).astype(int)
        sizes[int(np.argmax(shares))] += int(n) - int(sizes.sum())
        eps = np.concatenate([np.full(s, float(g[1])) for s, g in zip(sizes, groups, strict=False)])
        delta = np.concatenate(
            [
                np.full(s, float(g[2]) if len(g) > 2 else 0.0)
                for s, g in zip(sizes, groups, strict=False)
            ]
        )
        if shuffle:
            if rng is None:
                raise ValueError("rng must be given when shuffle=True")
            perm = rng.permutation(eps.size)
            eps, delta = eps[perm], delta[perm]
        label = "mix(" + ",".join(f"{g[0]:g}:{g[1]:g}" for g in groups) + ")"
        return cls(eps=eps, delta=delta, label=label)

    # ------------------------------------------------------------------ views
    @property
    def n(self) -> int:
        """Number of users n."""
        return int(self.eps.size)

    @property
    def is_identical(self) -> bool:
        """True when every user has the same (eps_i, delta_i)."""
        return bool(np.all(self.eps == self.eps[0]) and np.all(self.delta == self.delta[0]))

    @property
    def is_pure(self) -> bool:
        """True when every delta_i is 0 (pure LDP)."""
        return bool(np.all(self.delta == 0.0))

    @property
    def eps_max(self) -> float:
        return float(self.eps.max())

    @property
    def delta_max(self) -> float:
        return float(self.delta.max())

    def without(self, index: int) -> BudgetProfile:
        """The profile with user ``index`` removed (needs n >= 3)."""
        keep = np.ones(self.n, dtype=bool)
        keep[index] = False
        return BudgetProfile(eps=self.eps[keep], delta=self.delta[keep], label=self.label)

    def scaled(self, factor: float) -> BudgetProfile:
        """Every eps_i multiplied by ``factor`` >= 0 (the deltas unchanged)."""
        if not np.isfinite(factor) or factor < 0:
            raise ValueError(f"factor must be finite and >= 0, got {factor!r}")
        return BudgetProfile(eps=self.eps * factor, delta=self.delta, label=self.label)

    def with_n(self, n: int, rng: np.random.Generator | None = None) -> BudgetProfile:
        """Resample (identical: replicate) the profile to ``n`` users."""
        _check_n(n)
        if self.is_identical:
            return BudgetProfile(
                eps=np.full(n, self.eps[0]), delta=np.full(n, self.delta[0]), label=self.label
            )
        if rng is None:
            raise ValueError("rng must be given to resample a non-identical profile")
        idx = rng.integers(0, self.n, size=n)
        return BudgetProfile(eps=self.eps[idx], delta=self.delta[idx], label=self.label)

    def __repr__(self) -> str:
        return (
            f"BudgetProfile(n={self.n}, eps in [{self.eps.min():g}, {self.eps_max:g}], "
            f"delta_max={self.delta_max:g}, label={self.label!r})"
        )


@dataclass(frozen=True)
class PrivacyTarget:
    """A central ``(eps, delta)`` guarantee; either may be ``None`` when it is the unknown.

    >>> PrivacyTarget(eps=None, delta=1e-6).delta
    1e-06
    >>> PrivacyTarget(eps=None, delta=1.5)
    Traceback (most recent call last):
    ...
    ValueError: delta must be in (0, 1), got 1.5
    """

    eps: float | None = None
    delta: float | None = None

    def __post_init__(self) -> None:
        if self.eps is None and self.delta is None:
            raise ValueError("one of eps or delta must be given")
        if self.eps is not None and (not np.isfinite(self.eps) or self.eps < 0):
            raise ValueError(f"eps must be finite and >= 0, got {self.eps!r}")
        if self.delta is not None and not (0.0 < self.delta < 1.0):
            raise ValueError(f"delta must be in (0, 1), got {self.delta!r}")


def _check_n(n: int) -> None:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n must be an integer, got {n!r}")
    if n < 2:
        raise ValueError(f"n (number of users) must be >= 2, got {n!r}")


def _check_range(low: float, high: float) -> None:
    if not (np.isfinite(low) and np.isfinite(high)) or low < 0 or high < low:
        raise ValueError(f"need 0 <= low <= high < inf, got low={low!r}, high={high!r}")


def profile_from_spec(
    spec: dict, *, n: int, rng: np.random.Generator, delta0: float = 0.0, label: str = ""
) -> BudgetProfile:
    """Build a profile of ``n`` users from a config dict (the workflow's ``profiles`` entries).

    ``spec["kind"]`` is one of ``identical`` (``eps0``), ``uniform`` (``low``, ``high``),
    ``clipped_normal`` (``mean``, ``std``, ``low``, ``high``) or ``mixture`` (``groups``: a list
    of ``[share, eps]`` or ``[share, eps, delta]``).  ``delta0`` is every user's local delta
    (a mixture group's own delta, when given, wins).

    >>> profile_from_spec({"kind": "uniform", "low": 0.5, "high": 2.0}, n=5,
    ...                   rng=np.random.default_rng(0)).n
    5
    >>> profile_from_spec({"kind": "beta"}, n=5, rng=np.random.default_rng(0))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: profile kind must be one of [...], got 'beta'
    """
    kinds = ["clipped_normal", "identical", "mixture", "uniform"]
    kind = spec.get("kind")
    if kind == "identical":
        prof = BudgetProfile.identical(n=n, eps0=float(spec["eps0"]), delta0=delta0)
    elif kind == "uniform":
        prof = BudgetProfile.uniform(
            n=n, low=float(spec["low"]), high=float(spec["high"]), rng=rng, delta0=delta0
        )
    elif kind == "clipped_normal":
        prof = BudgetProfile.clipped_normal(
            n=n,
            mean=float(spec["mean"]),
            std=float(spec["std"]),
            low=float(spec["low"]),
            high=float(spec["high"]),
            rng=rng,
            delta0=delta0,
        )
    elif kind == "mixture":
        groups = [
            (float(g[0]), float(g[1]), float(g[2]) if len(g) > 2 else delta0)
            for g in spec["groups"]
        ]
        prof = BudgetProfile.mixture(n=n, groups=groups, rng=rng, shuffle=True)
    else:
        raise ValueError(f"profile kind must be one of {kinds}, got {kind!r}")
    if label:
        prof = BudgetProfile(eps=prof.eps, delta=prof.delta, label=label)
    return prof
