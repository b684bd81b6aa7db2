"""The bound interface: metadata, the :class:`Bound` wrapper, and result records.

A bound is described by a :class:`BoundInfo` (what it is, what it covers) and by one or two
pure, keyword-only functions of a :class:`~shuffledp.budgets.BudgetProfile`:

* ``delta_fn(*, profile, eps, **options) -> float``: the privacy profile ``delta(eps)``;
* ``eps_fn(*, profile, delta, **options) -> float``: ``eps(delta)``, for bounds stated in
  closed form that way.

Whichever is missing is derived through the shared inversion in :mod:`shuffledp.numerics`,
rounded to the bound's safe side (``upper`` for upper bounds and approximations, ``lower``
for lower bounds).

An *upper* bound that holds only for identical budgets (``personalized=False``) is evaluated
on a personalized profile through the worst user, ``eps0 = max_i eps_i`` and
``delta0 = max_i delta_i``; the result record says so (``diagnostics["reduced_to_identical"]``).
Whether that number is a guarantee depends on the randomizer: the identical-budget theorems
are about *one* randomizer shared by all users, and users with different budgets run different
randomizers.  For clone-based theorems (``BoundInfo.clone_mass``) the reduction is valid when
every user dominates the theorem's clone mass at eps0 against every victim (docs/theory.md,
"Identical-budget theorems on personalized profiles"); :meth:`Bound.covers` answers it for a
randomizer family and a profile, and every place that decides "covered" asks it.  A lower
bound is never reduced this way (that would not be a lower bound): it raises
``ParameterRegimeError`` instead.

Result records: ``eps`` / ``delta`` on the bound's safe side, capped by the local guarantee
(``eps <= max eps_i`` when every user is pure or the target delta is at least max delta_i),
and ``vacuous`` when the value carries no information: an upper bound or approximation no
better than the local guarantee alone (eps >= max eps_i, or delta at least the local-only
delta at that eps), a lower bound of 0.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from shuffledp._lazy import lazy_module
from shuffledp.budgets import BudgetProfile
from shuffledp.errors import ParameterRegimeError, short_repr
from shuffledp.families import Family, budget_tiers, domination, get_family
from shuffledp.families.registry import spec_includes
from shuffledp.numerics import delta_from_eps, eps_from_delta
from shuffledp.validation import check_one_target, check_target_delta, check_target_eps

special = lazy_module("scipy.special")

__all__ = [
    "Kind",
    "BoundInfo",
    "Bound",
    "BoundResult",
    "Coverage",
    "KIND_LABELS",
    "CLONE_MASSES",
    "local_only_delta",
]

#: ``approximate``: no guarantee (e.g. a central-limit approximation);
#: ``upper``: a rigorous upper bound on the central delta(eps) / eps(delta);
#: ``lower``: an exact value for one specific randomizer, hence a lower bound on the worst
#: case over all randomizers with those budgets.
Kind = Literal["approximate", "upper", "lower"]

#: Tolerances of the eps(delta) inversion of every bound (``side`` as in
#: :func:`shuffledp.numerics.invert_monotone`): eps is returned within
#: max(1e-10, 1e-8 eps) of the crossing, on the bound's safe side.
INVERSION_RTOL = 1e-8
INVERSION_ATOL = 1e-10

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
    randomizers: upper bounds: the randomizer families (:mod:`shuffledp.families` specs) the
        theorem covers with identical budgets (``"any"`` = every pure eps0-LDP randomizer);
        lower bounds: the randomizer whose exact curve it computes.  What a bound covers for
        a given profile is :meth:`Bound.covers`.
    options: the keyword options its functions accept, with their defaults.
    clone_mass: for identical-budget theorems proven through the clone reduction, the clone
        probability they use at eps0 (``"standard"`` e^{-eps0}, ``"stronger"``
        2/(1+e^{eps0})): the coverage of a family is then decided by domination (module
        docstring); ``None`` for other theorems.
    coverage_note: one line for ``shuffledp list``: what the bound covers, in words.
    """

    name: str
    kind: Kind
    title: str
    citation: str
    personalized: bool
    approx_ldp: bool
    randomizers: tuple[str, ...] = ("any",)
    options: Mapping[str, Any] = field(default_factory=dict)
    clone_mass: str | None = None
    coverage_note: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KIND_LABELS:
            raise ValueError(f"kind must be one of {sorted(KIND_LABELS)}, got {self.kind!r}")
        plain = self.name.replace("_", "")
        if not plain or not plain.isalnum() or self.name.lower() != self.name:
            raise ValueError(f"name must be lower-case snake_case, got {self.name!r}")
        if self.clone_mass is not None and self.clone_mass not in CLONE_MASSES:
            raise ValueError(
                f"clone_mass must be one of {sorted(CLONE_MASSES)} or None, got "
                f"{self.clone_mass!r}"
            )

    @property
    def kind_label(self) -> str:
        return KIND_LABELS[self.kind]


#: The clone probabilities of the clone-based theorems, as functions of the budget.
CLONE_MASSES: Mapping[str, Callable[[float], float]] = {
    "standard": lambda e: math.exp(-e),  # FMT21, Theorem 3.2
    "stronger": lambda e: 2.0 / (1.0 + math.exp(e)),  # FMT23 (with Errata)
}


def local_only_delta(profile: BudgetProfile, eps: float) -> float:
    """The delta(eps) that the local guarantee alone gives, without shuffling: every user is
    (eps_max, delta_max)-LDP, and the largest hockey-stick divergence of an eps_max-DP pair is
    that of randomized response, (e^{eps_max} - e^{eps}) / (1 + e^{eps_max}) for eps < eps_max
    (Kairouz, Oh, Viswanath, ICML 2015, Theorem 2.1).

    >>> from shuffledp import BudgetProfile
    >>> round(local_only_delta(BudgetProfile.identical(n=2, eps0=math.log(3.0)), 0.0), 12)
    0.5
    """
    return ldp_delta(profile.eps_max, profile.delta_max, eps)


def ldp_delta(eps_v: float, delta_v: float, eps: float) -> float:
    """The largest delta(eps) of an (eps_v, delta_v)-DP pair: that of (eps_v, delta_v)-
    randomized response, ``delta_v + (1 - delta_v) (e^{eps_v} - e^eps) / (1 + e^{eps_v})``
    for eps < eps_v, ``delta_v`` above (Kairouz, Oh, Viswanath, ICML 2015, Theorem 2.1).

    >>> round(ldp_delta(math.log(3.0), 0.0, 0.0), 12)
    0.5
    """
    if eps >= eps_v:
        return delta_v
    pure = -float(special.expit(eps_v)) * math.expm1(eps - eps_v)
    return delta_v + (1.0 - delta_v) * pure


@dataclass(frozen=True)
class Coverage:
    """Whether a bound's guarantee holds for a randomizer family and a profile, and why."""

    covered: bool
    reason: str

    def __bool__(self) -> bool:
        return self.covered


def _check_option_type(bound: str, key: str, value: Any, default: Any) -> None:
    """A TypeError naming the bound and the option when ``value`` is not of the type of the
    option's default (a str option takes a str, ``mechanism`` also a family; a bool a bool; an
    int an integer; a float a real number); options whose default is None are checked by the
    bound."""
    if default is None:
        return
    what = None
    if isinstance(default, bool):
        ok, what = isinstance(value, (bool, np.bool_)), "True or False"
    elif isinstance(default, str):
        ok = isinstance(value, str) or (key == "mechanism" and isinstance(value, Family))
        what = "a string (a randomizer spec or a family)" if key == "mechanism" else "a string"
    elif isinstance(default, (int, np.integer)):
        ok = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
        what = "an integer"
    elif isinstance(default, (float, np.floating)):
        ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
            value, (bool, np.bool_))
        what = "a real number"
    else:
        return
    if not ok:
        raise TypeError(f"option {key} of bound {bound!r} must be {what}, got "
                        f"{type(value).__name__} {short_repr(value)}")


def mechanism_lower_coverage(name: str, supported: tuple[str, ...], own: Any,
                             family: Any, missing: str) -> Coverage:
    """Coverage of a lower bound computed for one pair of its own mechanism ``own`` (a
    family): a lower bound for every protocol family that includes it; ``missing`` completes
    "``name`` has no ..." when ``own`` is not among ``supported``."""
    if own.name not in supported:
        return Coverage(False, f"{name} has no {missing} for {own}")
    if family.includes(own):
        return Coverage(True, f"one pair of shuffled {own}, one of the {family} protocols: a "
                              "lower bound for it")
    return Coverage(False, f"{name} (mechanism {own}) is a lower bound for {own} protocols, "
                           f"not for {family}")


@dataclass(frozen=True)
class BoundResult:
    """One evaluation of a bound: the central ``(eps, delta)``, whether the value is vacuous
    (carries no information, see the module docstring), and diagnostics."""

    method: str
    kind: Kind
    eps: float
    delta: float
    n: int
    seconds: float
    diagnostics: Mapping[str, Any] = field(default_factory=dict)
    vacuous: bool = False

    def as_row(self) -> dict[str, Any]:
        """A flat dict for a tidy table (diagnostics prefixed with nothing)."""
        row: dict[str, Any] = {
            "method": self.method,
            "kind": self.kind,
            "eps": self.eps,
            "delta": self.delta,
            "n": self.n,
            "seconds": self.seconds,
            "vacuous": self.vacuous,
        }
        row.update(self.diagnostics)
        return row


DeltaFn = Callable[..., float]
EpsFn = Callable[..., float]
DiagFn = Callable[..., Mapping[str, Any]]
CheckFn = Callable[..., None]
CoversFn = Callable[..., Coverage]


def default_coverage(info: BoundInfo, randomizer: Family, profile: BudgetProfile) -> Coverage:
    """What a bound covers from its declarations (see :class:`BoundInfo` and the module
    docstring); bounds whose coverage depends on their options supply ``covers_fn``."""
    r = randomizer
    name = info.name
    if info.kind == "approximate":
        return Coverage(False, f"{name} is an approximation: not a guarantee for any randomizer")
    if info.kind == "lower":
        own = [get_family(s) for s in info.randomizers]
        if any(r.includes(o) for o in own):
            return Coverage(True, f"exact curve of {own[0]}, one of the {r} protocols: a lower "
                                  "bound for it")
        return Coverage(False, f"{name} is the exact curve of {', '.join(map(str, own))}, which "
                               f"is not a {r} protocol")
    if not profile.is_pure and not info.approx_ldp:
        return Coverage(False, f"{name} holds for pure local DP only (the profile has "
                               "delta_i > 0)")
    if not r.pure:
        if info.approx_ldp and not info.personalized and profile.is_identical:
            return Coverage(True, f"{name}: identical (eps0, delta0)-LDP randomizers "
                                  "(FMT21 Theorem 3.8)")
        return Coverage(False, f"{r} is not pure LDP; {name} covers it only with identical "
                               "budgets through its (eps0, delta0) extension, if it has one")
    if info.clone_mass is not None:
        eps0 = profile.eps_max
        need = CLONE_MASSES[info.clone_mass](eps0)
        values, counts, _ = budget_tiers(profile)
        dom = domination(r, eps=values, required=need, counts=counts)
        where = "identical budgets" if profile.is_identical else (
            "personalized profile through the worst user (eps0 = max eps_i)")
        if dom.holds:
            return Coverage(True, f"{name} ({info.clone_mass} clones) on {where}: every user "
                                  f"dominates the clone mass {need:.4g} of eps0 = {eps0:g}")
        return Coverage(False, f"{name} ({info.clone_mass} clones) on {where}: {dom.reason}")
    if not profile.is_identical:
        return Coverage(False, f"{name} is an identical-budget theorem not proven through "
                               "clones: its worst-user reduction is not proven for personalized "
                               "budgets")
    families = [s for s in info.randomizers]
    if any(spec_includes(s, r) for s in families):
        return Coverage(True, f"{name} covers {r} with identical budgets")
    return Coverage(False, f"{name} covers {', '.join(families)} only")


@dataclass(frozen=True)
class Bound:
    """A registered bound: metadata plus its pure functions.

    ``check_fn(*, profile, **options)`` raises :class:`ParameterRegimeError` outside the
    validity region (it is called before every evaluation).  ``covers_fn(*, family, profile,
    **options)`` returns the :class:`Coverage` of a :class:`~shuffledp.families.base.Family`
    when it depends on the options (default: :func:`default_coverage`).
    ``diagnostics_fn(*, profile, eps, delta, **options)`` returns extra columns for the result
    record.  ``guide_fn(shape, options, eps, delta, rtol)`` (optional) returns a *guide* for
    :func:`~shuffledp.calibration.calibrate_scale`, or ``None`` where it has none: an object
    with a quantization step ``rho`` and ``delta(s)``, a delta(eps) of the shape scaled by s
    that is at least the bound's at s and at most the bound's at s (1 + rho) (the calibration
    searches it first; e.g. :mod:`shuffledp.bounds.clones.guide`).
    """

    info: BoundInfo
    delta_fn: DeltaFn | None = None
    eps_fn: EpsFn | None = None
    check_fn: CheckFn | None = None
    diagnostics_fn: DiagFn | None = None
    covers_fn: CoversFn | None = None
    eps_max: float = 1e3
    guide_fn: Callable[..., Any] | None = None

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
        for key, value in options.items():
            _check_option_type(self.name, key, value, self.info.options[key])
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
                    f"has eps_i in [{profile.eps_min:g}, {profile.eps_max:g}]"
                )
            profile = BudgetProfile.identical(
                n=profile.n, eps0=profile.eps_max, delta0=profile.delta_max, label=profile.label
            )
        mechanism = opts.get("mechanism")
        if mechanism is not None:  # a family without a report law at some budget refuses it
            get_family(mechanism).check_budgets(profile.eps_min)
        if self.check_fn is not None:
            self.check_fn(profile=profile, **opts)
        return profile, opts

    # ------------------------------------------------------------------ public API
    def covers(self, *, randomizer: Any, profile: BudgetProfile, **options: Any) -> Coverage:
        """Whether this bound's guarantee holds when every user i runs ``randomizer`` (a family
        spec such as ``"krr:10"``, see :mod:`shuffledp.families`) with budget eps_i.

        >>> from shuffledp import BudgetProfile, get_bound
        >>> p = BudgetProfile.from_arrays([0.5, 2.0, 4.0])
        >>> get_bound("clones").covers(randomizer="binary_rr", profile=p).covered
        True
        >>> get_bound("clones").covers(randomizer="laplace", profile=p, clone="standard").covered
        False
        """
        r = get_family(randomizer)
        if not isinstance(profile, BudgetProfile):
            raise TypeError(f"profile must be a BudgetProfile, got {type(profile).__name__}")
        opts = self._options(options)
        try:  # the options' values, checked as eps/delta check them (a bad value raises)
            self.prepare(profile, **options)
        except ParameterRegimeError:
            pass  # outside the bound's regime: coverage is still answered
        if self.covers_fn is not None:
            return self.covers_fn(family=r, profile=profile, **opts)
        return default_coverage(self.info, r, profile)

    def delta(self, *, profile: BudgetProfile, eps: float, **options: Any) -> float:
        """Central ``delta(eps)`` for ``profile`` (safe side for the bound's kind)."""
        eps = check_target_eps(eps)
        prof, opts = self.prepare(profile, **options)
        return self._delta(prof, eps, opts)

    def eps(self, *, profile: BudgetProfile, delta: float, **options: Any) -> float:
        """Central ``eps(delta)`` for ``profile`` (safe side for the bound's kind)."""
        delta = check_target_delta(delta)
        prof, opts = self.prepare(profile, **options)
        return self._capped(prof, delta, self._eps(prof, delta, opts))

    def _capped(self, prof: BudgetProfile, delta: float, eps: float) -> float:
        """The local guarantee caps a rigorous or exact eps: the shuffled output is a
        post-processing of the local reports, so (eps_max, delta_max)-DP holds; when every user
        is pure or delta >= delta_max, eps <= eps_max."""
        if self.info.kind != "approximate" and (prof.is_pure or delta >= prof.delta_max):
            return min(eps, prof.eps_max)
        return eps

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
                rtol=INVERSION_RTOL,
                atol=INVERSION_ATOL,
            )
        except ParameterRegimeError:
            raise  # the bound's own reason, not "cannot certify"
        except ValueError as err:
            raise ParameterRegimeError(
                f"{self.name} cannot certify delta = {delta:g} for any eps <= {self.eps_max:g}"
            ) from err

    def _vacuous(self, prof: BudgetProfile, eps: float, delta: float, target: str) -> bool:
        if self.info.kind == "lower":
            return (eps <= 0.0) if target == "delta" else (delta <= 0.0)
        if target == "delta":
            return eps >= prof.eps_max * (1.0 - 1e-9)
        return eps >= prof.eps_max or delta >= local_only_delta(prof, eps) * (1.0 - 1e-12)

    def evaluate(
        self,
        *,
        profile: BudgetProfile,
        delta: float | None = None,
        eps: float | None = None,
        **options: Any,
    ) -> BoundResult:
        """Evaluate at a target ``delta`` (gives eps) or ``eps`` (gives delta)."""
        delta, eps = check_one_target(delta, eps)
        start = time.perf_counter()
        prof, opts = self.prepare(profile, **options)
        if delta is not None:
            eps_val = self._capped(prof, delta, self._eps(prof, delta, opts))
            delta_val = float(delta)
            target = "delta"
        else:
            assert eps is not None
            eps_val, delta_val = float(eps), self._delta(prof, eps, opts)
            target = "eps"
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
            vacuous=self._vacuous(prof, eps_val, delta_val, target),
        )
