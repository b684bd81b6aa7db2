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

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from shuffledp.bounds import BoundResult, get_bound, list_bounds
from shuffledp.budgets import BudgetProfile
from shuffledp.errors import ParameterRegimeError, short_repr
from shuffledp.families import family_class, family_names, get_family
from shuffledp.validation import check_one_target

__all__ = [
    "Answer",
    "ClaimCheck",
    "best_answer",
    "check_claim",
    "randomizer_options",
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

    ``covered``: when a randomizer was named (``compare_bounds(randomizer=...)``), whether the
    value is a guarantee for it (upper bounds) or a valid lower bound for it (lower bounds) on
    this profile (:meth:`~shuffledp.bounds.base.Bound.covers`; an approximation is never
    covered), ``None`` when none was named; ``coverage`` says why.  ``options``: the options
    the bound was evaluated with (enough to recompute the row).
    """

    method: str
    kind: str
    result: BoundResult | None
    reason: str = ""
    below_lower: bool | None = None
    lower_method: str | None = None
    lower_value: float | None = None
    lower_reason: str = ""
    covered: bool | None = None
    coverage: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)
    #: "delta" (the result's eps answers a target delta) or "eps" (its delta answers an eps)
    target: str = ""

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
    if not isinstance(profile, BudgetProfile):
        raise TypeError(f"profile must be a BudgetProfile, got {type(profile).__name__}")
    delta, eps = check_one_target(delta, eps)
    from shuffledp.validation import check_real

    value = check_real(value, "value", low=0.0, high=None if delta is not None else 1.0)
    if lowers is not None and (isinstance(lowers, (str, bytes)) or not all(
            isinstance(e, Evaluation) for e in lowers)):
        raise TypeError(f"lowers must be a list of Evaluation, got {short_repr(lowers)}")
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
    randomizer: Any = None,
    generic_masses: bool = False,
) -> list[Evaluation]:
    """Evaluate ``methods`` (default: every registered bound) at ``delta`` or ``eps``.

    ``options`` maps a method name to its keyword options (e.g.
    ``{"clones": {"clone": "standard"}}``).  Unknown names raise ``ValueError`` before
    anything is computed.  A bound outside its validity region gives an :class:`Evaluation`
    with ``result=None`` and the reason.  Raises :class:`InconsistentBoundsError` when a
    rigorous upper bound is below an exact lower bound of a randomizer it covers; runs the
    lower-bound check of every approximation unless ``check_lower=False`` (module docstring).

    ``randomizer`` (a family spec such as ``"laplace"``): the randomizer every user runs.  Every
    bound with a ``mechanism`` option is then evaluated for it (its mechanism-aware form;
    ``clones`` with that randomizer's own clone masses unless ``generic_masses=True``;
    :func:`randomizer_options`; options given in ``options`` win), and each evaluation says
    whether it is a guarantee (a valid lower bound) for that randomizer (``covered``).
    :func:`best_answer` then picks the tightest covering upper bound and the best covering
    lower bound.
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
    if not names:
        raise ValueError("methods must name at least one bound, got an empty list")
    repeated = sorted({m for m in names if names.count(m) > 1})
    if repeated:
        raise ValueError(f"methods must name each bound once, got {repeated} more than once")
    bounds = [get_bound(m) for m in names]  # fail fast on unknown names
    if options is not None and not isinstance(options, Mapping):
        raise TypeError(f"options must be a mapping of bound name to options, got "
                        f"{type(options).__name__}")
    if not isinstance(generic_masses, bool):
        raise TypeError(f"generic_masses must be True or False, got {short_repr(generic_masses)}")
    if not isinstance(check_lower, bool):
        raise TypeError(f"check_lower must be True or False, got {short_repr(check_lower)}")
    for k, v in (options or {}).items():
        if not isinstance(k, str) or not isinstance(v, Mapping):
            raise TypeError(f"options must map bound names (str) to option mappings, got "
                            f"{short_repr(k)}: {short_repr(v)}")
    opts = {k: dict(v) for k, v in (options or {}).items()}
    for m in opts:
        get_bound(m)
    unused = sorted(set(opts) - set(names))
    if unused:
        raise ValueError(f"options name bound(s) {unused} that methods does not evaluate "
                         f"(methods: {names})")
    fam = None
    if randomizer is not None:
        fam = get_family(randomizer)
        auto = randomizer_options(names, fam, generic_masses=generic_masses)
        opts = {m: {**auto.get(m, {}), **opts.get(m, {})} for m in set(auto) | set(opts)}
    target = "delta" if delta is not None else "eps"
    out: list[Evaluation] = []
    for b in bounds:
        own = opts.get(b.name, {})
        covered, coverage = None, ""
        try:
            if fam is not None:
                if b.info.kind == "approximate":
                    covered, coverage = False, "an approximation: a guarantee for nothing"
                else:
                    cov = b.covers(randomizer=fam, profile=profile, **own)
                    covered, coverage = bool(cov.covered), cov.reason
            res = b.evaluate(profile=profile, delta=delta, eps=eps, **own)
        except ParameterRegimeError as err:
            out.append(Evaluation(method=b.name, kind=b.info.kind, result=None, reason=str(err),
                                  covered=covered, coverage=coverage, options=dict(own),
                                  target=target))
            continue
        out.append(Evaluation(method=b.name, kind=b.info.kind, result=res, covered=covered,
                              coverage=coverage, options=dict(own), target=target))
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


def randomizer_options(methods: Sequence[str], randomizer: Any, *,
                       generic_masses: bool = False) -> dict[str, dict[str, Any]]:
    """The options of each of ``methods`` when every user runs ``randomizer``: every bound with a
    ``mechanism`` option gets the randomizer's spec (its mechanism-aware form), ``clones``
    included unless ``generic_masses`` (then its generic clone masses, which cover only the
    randomizers they dominate).  A lower bound that has no statistic of its own for the
    randomizer (no cell masses) but whose default randomizer is one of the family's members
    keeps its default: a lower bound for one member of a family is one for the family.

    >>> randomizer_options(["clones", "gdp", "window_lower"], "laplace")
    {'clones': {'mechanism': 'laplace'}, 'window_lower': {'mechanism': 'laplace'}}
    >>> randomizer_options(["clones"], "laplace", generic_masses=True)
    {}
    """
    fam = get_family(randomizer)
    out: dict[str, dict[str, Any]] = {}
    for name in methods:
        bound = get_bound(name)
        if "mechanism" not in bound.info.options:
            continue
        if name == "clones" and (generic_masses or not fam.aware):
            continue  # the generic clone masses (covers says whether they hold for fam)
        default = bound.info.options["mechanism"]
        if (bound.info.kind == "lower" and not fam.provides("cell_masses")
                and default is not None and fam.includes(get_family(default))):
            continue
        out[name] = {"mechanism": fam.spec}
    return out


@dataclass(frozen=True)
class Answer:
    """The quotable answer of a comparison for a named randomizer: the tightest covering
    rigorous upper bound (``upper``) and the best covering certified lower bound (``lower``),
    each an :class:`Evaluation` or ``None``; ``target`` is ``"delta"`` (the values are eps) or
    ``"eps"`` (the values are delta)."""

    target: Literal["delta", "eps"]
    upper: Evaluation | None
    lower: Evaluation | None

    def value(self, e: Evaluation | None) -> float | None:
        if e is None or e.result is None:
            return None
        return float(e.result.eps if self.target == "delta" else e.result.delta)

    @property
    def upper_value(self) -> float | None:
        return self.value(self.upper)

    @property
    def lower_value(self) -> float | None:
        return self.value(self.lower)


def best_answer(evals: Sequence[Evaluation]) -> Answer:
    """The tightest covering upper bound and the best covering lower bound of ``evals`` (from
    :func:`compare_bounds` with ``randomizer=``; rows with ``covered`` not True are ignored).

    >>> from shuffledp import BudgetProfile
    >>> ev = compare_bounds(BudgetProfile.identical(n=1000, eps0=1.0), delta=1e-6,
    ...                     methods=["clones", "rr_exact"], randomizer="binary_rr")
    >>> a = best_answer(ev)
    >>> a.upper.method, a.lower.method, bool(a.lower_value <= a.upper_value)
    ('clones', 'rr_exact', True)
    """
    if isinstance(evals, str | bytes) or not isinstance(evals, Iterable):
        raise TypeError(f"evals must be the list compare_bounds returns, got "
                        f"{type(evals).__name__}")
    evals = list(evals)
    bad = [e for e in evals if not isinstance(e, Evaluation)]
    if bad:
        raise TypeError(f"evals must hold Evaluation records (from compare_bounds), got "
                        f"{short_repr(bad[0])}")
    if not evals:
        raise ValueError("evals must hold at least one evaluation")
    targets = {e.target for e in evals}
    if len(targets) != 1 or targets <= {""}:
        raise ValueError("evals must come from one compare_bounds call (one target, delta or "
                         f"eps), got targets {sorted(targets)}")
    target: Literal["delta", "eps"] = "delta" if targets == {"delta"} else "eps"
    ok = [e for e in evals if e.ok and e.covered]
    key = (lambda e: e.result.eps) if target == "delta" else (lambda e: e.result.delta)
    ups = [e for e in ok if e.kind == "upper"]
    lows = [e for e in ok if e.kind == "lower"]
    return Answer(target, min(ups, key=key) if ups else None,
                  max(lows, key=key) if lows else None)


@dataclass(frozen=True)
class ClaimCheck:
    """The verdict on a claim "(eps, delta)-DP" (:func:`check_claim`).

    ``verdict``: ``"proven"`` (``upper_method``'s delta at eps, ``upper_delta``, is at most the
    claimed delta: a covering rigorous upper bound proves it), ``"refuted"`` (``lower_method``'s
    certified delta at eps, ``lower_delta``, is above the claimed delta: the shuffled randomizer
    certainly leaks more; ``lower_pair`` names the dataset pair when the bound says), or
    ``"undetermined"`` (between the two; both numbers given when they exist)."""

    verdict: Literal["proven", "refuted", "undetermined"]
    eps: float
    delta: float
    randomizer: str
    n: int
    upper_method: str | None
    upper_delta: float | None
    upper_options: Mapping[str, Any]
    lower_method: str | None
    lower_delta: float | None
    lower_pair: str | None

    @property
    def sentence(self) -> str:
        """One line to quote."""
        head = (f"({self.eps:g}, {self.delta:g})-DP for {self.randomizer}, {self.n} users: "
                f"{self.verdict}")
        parts = []
        if self.upper_method is not None:
            parts.append(f"{self.upper_method} proves delta <= {self.upper_delta:.6g} at this eps")
        else:
            parts.append("no covering rigorous upper bound applies")
        if self.lower_method is not None:
            pair = f", pair: {self.lower_pair}" if self.lower_pair else ""
            parts.append(f"{self.lower_method} certifies delta >= {self.lower_delta:.6g}{pair}")
        else:
            parts.append("no certified lower bound applies")
        return f"{head} ({'; '.join(parts)})"


def check_claim(profile: BudgetProfile, *, eps: float, delta: float, randomizer: Any,
                methods: Sequence[str] | None = None,
                generic_masses: bool = False) -> ClaimCheck:
    """Is "(eps, delta)-DP" a valid guarantee of the shuffled ``randomizer`` on ``profile``?

    Every bound of ``methods`` (default: all registered) is evaluated at ``eps`` for the named
    randomizer (:func:`compare_bounds` with ``randomizer=``, so mechanism-aware): the claim is
    *proven* when a covering rigorous upper bound's delta(eps) is at most ``delta``,
    *refuted* when a covering certified lower bound's delta(eps) is above it, else
    *undetermined*.  Both cannot happen (that would be a soundness failure, which raises
    :class:`InconsistentBoundsError`).

    >>> from shuffledp import BudgetProfile
    >>> c = check_claim(BudgetProfile.identical(n=1000, eps0=4.0), eps=0.42, delta=1e-6,
    ...                 randomizer="binary_rr", methods=["clones", "rr_exact"])
    >>> c.verdict, c.lower_method
    ('refuted', 'rr_exact')
    """
    from shuffledp.validation import check_target_delta, check_target_eps

    eps = check_target_eps(eps)
    delta = check_target_delta(delta)
    if randomizer is None:
        raise ValueError("randomizer must name the randomizer the users run (a family spec "
                         "such as 'laplace'), got None")
    fam = get_family(randomizer)
    evals = compare_bounds(profile, eps=eps, methods=methods, randomizer=fam,
                           generic_masses=generic_masses, check_lower=False)
    ans = best_answer(evals)
    up, lo = ans.upper, ans.lower
    up_d = None if up is None or up.result is None else float(up.result.delta)
    lo_d = None if lo is None or lo.result is None else float(lo.result.delta)
    if up_d is not None and up_d <= delta:
        verdict: Literal["proven", "refuted", "undetermined"] = "proven"
    elif lo_d is not None and lo_d > delta:
        verdict = "refuted"
    else:
        verdict = "undetermined"
    pair = None
    if lo is not None and lo.result is not None:
        d = lo.result.diagnostics
        pair = d.get("pair") or d.get("config") or None
        pair = None if pair is None else str(pair)
    return ClaimCheck(verdict, eps, delta, str(fam), profile.n,
                      None if up is None else up.method, up_d,
                      {} if up is None else dict(up.options),
                      None if lo is None else lo.method, lo_d, pair)
