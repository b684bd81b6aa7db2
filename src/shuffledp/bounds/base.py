"""The bound interface: metadata, the :class:`Bound` wrapper, and result records.

A bound is described by a :class:`BoundInfo` (what it is, what it covers) and by one or two
pure, keyword-only functions of a :class:`~shuffledp.params.BudgetProfile`:

* ``delta_fn(*, profile, eps, **options) -> float``: the privacy profile ``delta(eps)``;
* ``eps_fn(*, profile, delta, **options) -> float``: ``eps(delta)``, for bounds stated in
  closed form that way.

Whichever is missing is derived through the shared inversion in :mod:`shuffledp.numerics`,
rounded to the bound's safe side (``upper`` for upper bounds and approximations, ``lower``
for lower bounds).

An *upper* bound that holds only for identical budgets (``personalized=False``) is applied
to a personalized profile through the worst user, ``eps0 = max_i eps_i`` and
``delta0 = max_i delta_i``: every user's randomizer is then ``(eps0, delta0)``-LDP, so the
identical-budget theorem applies and the result stays valid (only looser).  The result record
says so (``diagnostics["reduced_to_identical"]``).  A lower bound is never reduced this way
(that would not be a lower bound): it raises ``ParameterRegimeError`` instead.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from shuffledp.errors import ParameterRegimeError
from shuffledp.numerics import delta_from_eps, eps_from_delta
from shuffledp.params import BudgetProfile

__all__ = ["Kind", "BoundInfo", "Bound", "BoundResult", "KIND_LABELS"]

#: ``approximate``: no guarantee (e.g. a central-limit approximation);
#: ``upper``: a rigorous upper bound on the central delta(eps) / eps(delta);
#: ``lower``: an exact value for one specific randomizer, hence a lower bound on the worst
#: case over all randomizers with those budgets.
Kind = Literal["approximate", "upper", "lower"]

KIND_LABELS: Mapping[str, str] = {
    "approximate": "approximate",
    "upper": "rigorous upper",
    "lower": "exact lower",
}


@dataclass(frozen=True)
class BoundInfo:
    """Metadata of a registered bound.

    Attributes
    ----------
    name: short registry name (``"gdp"``).
    kind: ``"approximate"``, ``"upper"`` or ``"lower"`` (see :data:`Kind`).
    title: one line for tables and legends.
    citation: paper, theorem / equation, arXiv id.
    personalized: the theorem itself handles heterogeneous budgets.
    approx_ldp: the theorem handles local ``delta_i > 0``.
    randomizers: which local randomizers it covers (``"any"``, ``"binary_rr"``, ``"krr"``...).
    options: the keyword options its functions accept, with their defaults.
    """

    name: str
    kind: Kind
    title: str
    citation: str
    personalized: bool
    approx_ldp: bool
    randomizers: tuple[str, ...] = ("any",)
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KIND_LABELS:
            raise ValueError(f"kind must be one of {sorted(KIND_LABELS)}, got {self.kind!r}")
        plain = self.name.replace("_", "")
        if not plain or not plain.isalnum() or self.name.lower() != self.name:
            raise ValueError(f"name must be lower-case snake_case, got {self.name!r}")

    @property
    def kind_label(self) -> str:
        return KIND_LABELS[self.kind]


@dataclass(frozen=True)
class BoundResult:
    """One evaluation of a bound: the central ``(eps, delta)`` and diagnostics."""

    method: str
    kind: Kind
    eps: float
    delta: float
    n: int
    seconds: float
    diagnostics: Mapping[str, Any] = field(default_factory=dict)

    def as_row(self) -> dict[str, Any]:
        """A flat dict for a tidy table (diagnostics prefixed with nothing)."""
        row: dict[str, Any] = {
            "method": self.method,
            "kind": self.kind,
            "eps": self.eps,
            "delta": self.delta,
            "n": self.n,
            "seconds": self.seconds,
        }
        row.update(self.diagnostics)
        return row


DeltaFn = Callable[..., float]
EpsFn = Callable[..., float]
DiagFn = Callable[..., Mapping[str, Any]]
CheckFn = Callable[..., None]


@dataclass(frozen=True)
class Bound:
    """A registered bound: metadata plus its pure functions.

    ``check_fn(*, profile, **options)`` raises :class:`ParameterRegimeError` outside the
    validity region (it is called before every evaluation).  ``diagnostics_fn(*, profile,
    eps, delta, **options)`` returns extra columns for the result record.
    """

    info: BoundInfo
    delta_fn: DeltaFn | None = None
    eps_fn: EpsFn | None = None
    check_fn: CheckFn | None = None
    diagnostics_fn: DiagFn | None = None
    eps_max: float = 1e3

    def __post_init__(self) -> None:
        if self.delta_fn is None and self.eps_fn is None:
            raise ValueError(f"bound {self.info.name!r} needs delta_fn or eps_fn")

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def side(self) -> Literal["upper", "lower"]:
        return "lower" if self.info.kind == "lower" else "upper"

    # ------------------------------------------------------------------ internals
    def _options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        unknown = set(options) - set(self.info.options)
        if unknown:
            raise ValueError(
                f"unknown option(s) {sorted(unknown)} for bound {self.name!r}; "
                f"known: {sorted(self.info.options)}"
            )
        merged = dict(self.info.options)
        merged.update(options)
        return merged

    def prepare(self, profile: BudgetProfile, **options: Any) -> tuple[BudgetProfile, dict]:
        """Validate and, for identical-only bounds, reduce ``profile`` to its worst user."""
        if not isinstance(profile, BudgetProfile):
            raise TypeError(f"profile must be a BudgetProfile, got {type(profile).__name__}")
        opts = self._options(options)
        if not self.info.approx_ldp and not profile.is_pure:
            raise ParameterRegimeError(
                f"{self.name} holds for pure LDP only (delta_i = 0), got max delta_i = "
                f"{profile.delta_max:g}"
            )
        if not self.info.personalized and not profile.is_identical:
            if self.info.kind == "lower":
                # Raising every budget to the maximum is valid for an upper bound only.
                raise ParameterRegimeError(
                    f"{self.name} is a lower bound for identical budgets only; the profile "
                    f"has eps_i in [{profile.eps.min():g}, {profile.eps_max:g}]"
                )
            profile = BudgetProfile.identical(
                n=profile.n, eps0=profile.eps_max, delta0=profile.delta_max, label=profile.label
            )
        if self.check_fn is not None:
            self.check_fn(profile=profile, **opts)
        return profile, opts

    # ------------------------------------------------------------------ public API
    def delta(self, *, profile: BudgetProfile, eps: float, **options: Any) -> float:
        """Central ``delta(eps)`` for ``profile`` (safe side for the bound's kind)."""
        if not math.isfinite(eps) or eps < 0:
            raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
        prof, opts = self.prepare(profile, **options)
        return self._delta(prof, eps, opts)

    def eps(self, *, profile: BudgetProfile, delta: float, **options: Any) -> float:
        """Central ``eps(delta)`` for ``profile`` (safe side for the bound's kind)."""
        if not (0.0 < delta < 1.0):
            raise ValueError(f"delta must be in (0, 1), got {delta!r}")
        prof, opts = self.prepare(profile, **options)
        return self._eps(prof, delta, opts)

    def _delta(self, prof: BudgetProfile, eps: float, opts: dict) -> float:
        if self.delta_fn is not None:
            return float(self.delta_fn(profile=prof, eps=eps, **opts))
        assert self.eps_fn is not None
        fn = self.eps_fn
        return delta_from_eps(
            lambda d: float(fn(profile=prof, delta=d, **opts)), eps, side=self.side
        )

    def _eps(self, prof: BudgetProfile, delta: float, opts: dict) -> float:
        if self.eps_fn is not None:
            return float(self.eps_fn(profile=prof, delta=delta, **opts))
        assert self.delta_fn is not None
        fn = self.delta_fn
        try:
            return eps_from_delta(
                lambda e: float(fn(profile=prof, eps=e, **opts)),
                delta,
                side=self.side,
                eps_max=self.eps_max,
                rtol=1e-6,
                atol=1e-9,
            )
        except ValueError as err:
            raise ParameterRegimeError(
                f"{self.name} cannot certify delta = {delta:g} for any eps <= {self.eps_max:g}"
            ) from err

    def evaluate(
        self,
        *,
        profile: BudgetProfile,
        delta: float | None = None,
        eps: float | None = None,
        **options: Any,
    ) -> BoundResult:
        """Evaluate at a target ``delta`` (gives eps) or ``eps`` (gives delta)."""
        if (delta is None) == (eps is None):
            raise ValueError("give exactly one of delta (to get eps) or eps (to get delta)")
        start = time.perf_counter()
        prof, opts = self.prepare(profile, **options)
        if delta is not None:
            if not (0.0 < delta < 1.0):
                raise ValueError(f"delta must be in (0, 1), got {delta!r}")
            eps_val, delta_val = self._eps(prof, delta, opts), float(delta)
        else:
            assert eps is not None
            if not math.isfinite(eps) or eps < 0:
                raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
            eps_val, delta_val = float(eps), self._delta(prof, eps, opts)
        seconds = time.perf_counter() - start
        diag: dict[str, Any] = {}
        if prof is not profile:
            diag["reduced_to_identical"] = True
        if self.diagnostics_fn is not None:
            diag.update(self.diagnostics_fn(profile=prof, eps=eps_val, delta=delta_val, **opts))
        return BoundResult(
            method=self.name,
            kind=self.info.kind,
            eps=eps_val,
            delta=delta_val,
            n=profile.n,
            seconds=seconds,
            diagnostics=diag,
        )
