"""Evaluate several registered bounds side by side, with the validity checks.

:func:`compare_bounds` evaluates each requested bound on one profile and target and records the
reason for every bound that does not apply (:class:`~shuffledp.errors.ParameterRegimeError`).
Two checks run on the results:

* **the consistency alarm**: a rigorous upper bound below an exact lower bound of a randomizer
  it covers (:meth:`~shuffledp.bounds.base.Bound.covers`) is a soundness failure of one of the
  two, so it raises :class:`InconsistentBoundsError` naming both, never a silent row.  The
  tolerance is relative, ``CONSISTENCY_RTOL`` = 1e-6 (the inversions are accurate to 1e-8 and
  each bound's numerical slack is on its own safe side), plus 1e-9 in eps / 1e-15 in delta;
* **the lower-bound check of approximations**: every approximation (the paper's ``gdp``) is
  compared with an exact lower bound, ``below_lower`` = True when it claims less privacy loss
  than a real shuffled randomizer has.  When the caller did not ask for a lower bound,
  ``rr_exact`` is computed behind the scenes if that is cheap (:func:`lower_bound_check`:
  at most ``LOWER_CHECK_MAX_TIERS`` = 64 distinct budgets, about 1 s for 10^9 users in five
  tiers, or profiles up to ``LOWER_CHECK_MAX_N`` = 10^6 users, about 1.5 s there); otherwise
  ``below_lower`` is ``None`` (not checked), never False by default.

>>> from shuffledp import BudgetProfile
>>> rows = compare_bounds(BudgetProfile.identical(n=1000, eps0=4.0), delta=1e-6,
...                       methods=["gdp"])
>>> rows[0].result.method, rows[0].ok, rows[0].below_lower, rows[0].lower_method
('gdp', True, True, 'rr_exact')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from shuffledp.bounds import BoundResult, get_bound, list_bounds
from shuffledp.budgets import BudgetProfile
from shuffledp.errors import ParameterRegimeError, short_repr
from shuffledp.families import family_class, family_names, get_family
from shuffledp.validation import check_one_target

__all__ = [
    "CONSISTENCY_RTOL",
    "LOWER_CHECK_MAX_N",
    "LOWER_CHECK_MAX_TIERS",
    "Evaluation",
    "LowerCheck",
    "InconsistentBoundsError",
    "compare_bounds",
    "lower_bound_check",
]

#: Relative tolerance of the consistency alarm (see the module docstring).
CONSISTENCY_RTOL = 1e-6
#: ``rr_exact`` is computed behind the scenes for profiles of at most LOWER_CHECK_MAX_N users
#: or at most LOWER_CHECK_MAX_TIERS distinct budgets (10^9 users in five tiers: about 1 s).
LOWER_CHECK_MAX_N = 10**6
LOWER_CHECK_MAX_TIERS = 64


class InconsistentBoundsError(RuntimeError):
    """A rigorous upper bound is below an exact lower bound for a randomizer it covers."""


@dataclass(frozen=True)
class Evaluation:
    """A bound's result, or the reason it does not apply.

    ``below_lower``: for approximations, whether the value claims less privacy loss than the
    exact lower bound ``lower_method`` (value ``lower_value``: its eps when the target is a
    delta, its delta when the target is an eps); ``None`` when not checked (then
    ``lower_reason`` says why) and for bounds that are not approximations.
    """

    method: str
    kind: str
    result: BoundResult | None
    reason: str = ""
    below_lower: bool | None = None
    lower_method: str | None = None
    lower_value: float | None = None
    lower_reason: str = ""

    @property
    def ok(self) -> bool:
        return self.result is not None


@dataclass(frozen=True)
class LowerCheck:
    """Outcome of :func:`lower_bound_check`."""

    checked: bool
    below_lower: bool | None
    lower_method: str | None = None
    lower_value: float | None = None
    reason: str = ""


def _is_below(value: float, lower: float, target: str) -> bool:
    """value < lower beyond the consistency tolerance (eps when the target is a delta)."""
    atol = 1e-9 if target == "delta" else 1e-15
    return value < lower * (1.0 - CONSISTENCY_RTOL) - atol


def _lower_randomizer(method: str, options: Mapping[str, Any]):
    """The randomizer whose exact curve (or post-processing) the lower bound ``method`` with
    its own ``options`` computes: its ``mechanism`` option (``window_lower``), else its
    declared family (``k`` from the options for ``krr_exact``)."""
    bound = get_bound(method)
    mech = options.get("mechanism", bound.info.options.get("mechanism"))
    if mech is not None:
        return get_family(mech)
    spec = bound.info.randomizers[0]
    name = spec.split(":")[0]
    if family_class(name).needs_k:  # krr_exact: k from its options
        spec = f"{name}:{options.get('k', bound.info.options.get('k', 3))}"
    return get_family(spec)


def _describes(method: str, options: Mapping[str, Any], lower: str,
               lower_options: Mapping[str, Any] | None = None) -> bool:
    """Whether approximation ``method`` (with ``options``) is stated for the randomizer whose
    exact curve the lower bound ``lower`` (with ``lower_options``) is: only then is falling
    below that curve a contradiction (``liu24``, derived for Laplace, may legitimately be
    below shuffled binary RR's exact curve).  A ``mechanism`` option names the randomizer;
    otherwise the bound's declared families (``any`` describes every randomizer; binary RR is
    one-bit Duchi's and 2-RR's special case)."""
    mech = options.get("mechanism")
    if mech is not None:
        classes = [type(get_family(mech))]
    else:  # declared names that are no registered family describe none of them
        known = set(family_names())
        classes = [family_class(s.split(":")[0]) for s in get_bound(method).info.randomizers
                   if s.split(":")[0] in known]
    target = _lower_randomizer(lower, lower_options or {})
    return any(cls.describes(target) for cls in classes)


def lower_bound_check(
    profile: BudgetProfile,
    *,
    value: float,
    delta: float | None = None,
    eps: float | None = None,
    lowers: Sequence[Evaluation] | None = None,
) -> LowerCheck:
    """Is ``value`` (an eps at target ``delta``, or a delta at target ``eps``) below an exact
    lower bound for ``profile``?  Uses the lower bounds in ``lowers`` when given, else computes
    ``rr_exact`` when it is cheap (at most ``LOWER_CHECK_MAX_TIERS`` distinct budgets, or
    n <= ``LOWER_CHECK_MAX_N``).

    This is the check :func:`compare_bounds` runs on every approximation; use it next to a
    single bound, e.g. ``get_bound("gdp").eps(...)``:

    >>> from shuffledp import BudgetProfile, get_bound
    >>> p = BudgetProfile.identical(n=1000, eps0=4.0)
    >>> e = get_bound("gdp").eps(profile=p, delta=1e-6)
    >>> c = lower_bound_check(p, value=e, delta=1e-6)
    >>> c.checked, c.below_lower, c.lower_method, round(c.lower_value, 3)
    (True, True, 'rr_exact', 1.691)
    """
    if (delta is None) == (eps is None):
        raise ValueError("give exactly one of delta (value is an eps) or eps (value is a delta)")
    target = "delta" if delta is not None else "eps"
    candidates = [e for e in (lowers or []) if e.ok and e.kind == "lower"]
    if not candidates:
        distinct = int(np.unique(profile.tiers.eps).size)
        if distinct > LOWER_CHECK_MAX_TIERS and profile.n > LOWER_CHECK_MAX_N:
            return LowerCheck(False, None, reason=(
                f"not checked: rr_exact on {profile.n} users with "
                f"{distinct} distinct budgets is beyond the "
                f"behind-the-scenes limit of {LOWER_CHECK_MAX_N} users (request it with "
                "--method ...,rr_exact)"))
        try:
            res = get_bound("rr_exact").evaluate(profile=profile, delta=delta, eps=eps)
        except ParameterRegimeError as err:
            return LowerCheck(False, None, reason=f"not checked: rr_exact: {err}")
        candidates = [Evaluation("rr_exact", "lower", res)]
    best = max(candidates, key=lambda e: e.result.eps if target == "delta" else e.result.delta)
    assert best.result is not None
    low = best.result.eps if target == "delta" else best.result.delta
    below = _is_below(float(value), low, target)
    return LowerCheck(True, below, best.method, float(low),
                      f"{'below' if below else 'not below'} the exact lower bound "
                      f"{best.method} ({low:.6g})")


def compare_bounds(
    profile: BudgetProfile,
    *,
    delta: float | None = None,
    eps: float | None = None,
    methods: Sequence[str] | None = None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    check_lower: bool = True,
) -> list[Evaluation]:
    """Evaluate ``methods`` (default: every registered bound) at ``delta`` or ``eps``.

    ``options`` maps a method name to its keyword options (e.g.
    ``{"clones": {"clone": "standard"}}``).  Unknown names raise ``ValueError`` before
    anything is computed.  A bound outside its validity region gives an :class:`Evaluation`
    with ``result=None`` and the reason.  Raises :class:`InconsistentBoundsError` when a
    rigorous upper bound is below an exact lower bound of a randomizer it covers; runs the
    lower-bound check of every approximation unless ``check_lower=False`` (module docstring).
    """
    if not isinstance(profile, BudgetProfile):
        raise TypeError(f"profile must be a BudgetProfile, got {type(profile).__name__}")
    delta, eps = check_one_target(delta, eps)
    if isinstance(methods, str):
        raise TypeError(
            f"methods must be a list of bound names, got the string {short_repr(methods)} "
            f"(use [{short_repr(methods)}])"
        )
    names = list(methods) if methods is not None else list_bounds()
    for m in names:
        if not isinstance(m, str):
            raise TypeError(f"methods must contain bound names (str), got {short_repr(m)}")
    bounds = [get_bound(m) for m in names]  # fail fast on unknown names
    if options is not None and not isinstance(options, Mapping):
        raise TypeError(f"options must be a mapping of bound name to options, got "
                        f"{type(options).__name__}")
    opts = {k: dict(v) for k, v in (options or {}).items()}
    for m in opts:
        get_bound(m)
    out: list[Evaluation] = []
    for b in bounds:
        try:
            res = b.evaluate(profile=profile, delta=delta, eps=eps, **opts.get(b.name, {}))
        except ParameterRegimeError as err:
            out.append(Evaluation(method=b.name, kind=b.info.kind, result=None, reason=str(err)))
            continue
        out.append(Evaluation(method=b.name, kind=b.info.kind, result=res))
    target = "delta" if delta is not None else "eps"
    _consistency_alarm(out, profile, target, opts)
    if not check_lower:
        return out
    lowers = [e for e in out if e.ok and e.kind == "lower"]
    checked = []
    for e in out:
        if e.ok and e.kind == "approximate":
            assert e.result is not None
            value = e.result.eps if target == "delta" else e.result.delta
            own = opts.get(e.method, {})
            relevant = [lw for lw in lowers
                        if _describes(e.method, own, lw.method, opts.get(lw.method, {}))]
            if not _describes(e.method, own, "rr_exact") and not relevant:
                e = replace(e, lower_reason=(
                    f"skipped ({e.method} is stated for "
                    f"{', '.join(get_bound(e.method).info.randomizers)}, not for binary or "
                    "k-ary RR, whose exact curves are the lower bounds)"))
                checked.append(e)
                continue
            c = lower_bound_check(profile, value=value, delta=delta, eps=eps, lowers=relevant)
            if c.checked and not lowers and c.lower_method is not None:
                # computed behind the scenes once: reuse it for the next approximation
                res = get_bound(c.lower_method).evaluate(profile=profile, delta=delta, eps=eps)
                lowers = [Evaluation(c.lower_method, "lower", res)]
            e = replace(e, below_lower=c.below_lower, lower_method=c.lower_method,
                        lower_value=c.lower_value, lower_reason=c.reason)
        checked.append(e)
    return checked


def _consistency_alarm(
    out: Sequence[Evaluation], profile: BudgetProfile, target: str,
    opts: Mapping[str, Mapping[str, Any]],
) -> None:
    lowers = [e for e in out if e.ok and e.kind == "lower"]
    uppers = [e for e in out if e.ok and e.kind == "upper"]
    for lo in lowers:
        assert lo.result is not None
        fam = _lower_randomizer(lo.method, opts.get(lo.method, {}))
        lo_val = lo.result.eps if target == "delta" else lo.result.delta
        for up in uppers:
            assert up.result is not None
            up_val = up.result.eps if target == "delta" else up.result.delta
            if not _is_below(up_val, lo_val, target):
                continue
            cov = get_bound(up.method).covers(randomizer=fam, profile=profile,
                                              **opts.get(up.method, {}))
            if cov.covered:
                what = "eps" if target == "delta" else "delta"
                raise InconsistentBoundsError(
                    f"soundness failure: the rigorous upper bound {up.method} ({what} = "
                    f"{up_val:.9g}) is below the exact lower bound {lo.method} ({what} = "
                    f"{lo_val:.9g}) for {fam}, which {up.method} covers on this profile "
                    f"(n = {profile.n}); please report it"
                )
