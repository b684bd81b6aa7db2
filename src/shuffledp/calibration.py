"""Calibration: the largest local budgets a central guarantee allows, found by one search.

Given a central target ``(eps, delta)``, a bound and the *shape* of a budget profile
(per-user ``eps_i``), :func:`calibrate_scale` finds the largest common factor ``s`` such that
the bound certifies the shuffled protocol with local budgets ``s * eps_i`` (deltas unchanged):

    s* = max { s in (0, s_max] : bound.delta(profile.scaled(s), eps) <= delta }.

:func:`calibrate_eps0` is the identical-users case (shape eps_i = 1, so eps0 = s); the SGD
accounting (:func:`shuffledp.sgd.accounting.calibrate_scale`) calibrates T rounds with the
same search and returns the same :class:`Calibration` record.  This is the utility experiment
of the project (docs/library.md, "Mechanisms, estimation and SGD"): a tighter valid bound allows a
larger ``s`` and so less noise.

The certificate.  At a candidate scale the bound is evaluated *once*, at the target: its
``delta(eps)`` is compared with the target delta (no eps(delta) inversion per step).  A bound
stated only as ``eps(delta)`` (no ``delta_fn``) is evaluated once the other way,
``eps(delta) <= eps`` (its secant steps then run in ``log s``).  A
:class:`~shuffledp.errors.ParameterRegimeError` at ``s`` (the bound does not hold there) counts
as "not certified".  A bound whose ``delta(eps)`` reports the local guarantee (0 for
``eps >= max_i eps_i``, e.g. ``fmt21_closed``) therefore certifies ``s_local`` even where its
``eps(delta)`` is outside its validity region.  The certified delta is non-decreasing in
``s`` for every registered bound (more local budget, less privacy; docs/theory.md, section 4
for the clone reduction), so the certified scales form an interval and one bracket suffices.

The search (:func:`search_scale`, shared with the SGD accounting).  It keeps the largest
certified scale ``lo`` and the smallest uncertified scale ``hi`` seen so far, both evaluated.
Bracketing tries the cap ``s_max`` first when the start is certified, then moves by factors
2, 4, 16, ... (or, once two informative values are known, to a little past the extrapolated
crossing); inside the bracket it takes secant steps on
``g(s) = log(-log delta(s)) - log(-log delta_target)`` (for the amplification bounds here
``log delta`` behaves like ``-C e^{-a s}``, so ``g`` is nearly linear in ``s``), each aimed a
half tolerance to the side of the estimated crossing that closes the bracket, with a
geometric bisection whenever two steps fail to halve it.  It stops when
``hi - lo <= rtol * hi``.  Which end is returned (the safe side):

* rigorous upper bounds and approximations: ``lo``, where ``delta(lo) <= delta`` was
  evaluated, so the calibrated budgets never exceed what the bound certifies (maximal within
  ``rtol``);
* exact lower bounds (kind ``lower``): ``hi``, where ``delta(hi) > delta``, the smallest scale
  at which the lower bound proves the target violated: no valid analysis of that randomizer
  can allow more.  It is a reference, not a guarantee.

``bound_eps`` (the bound's own eps(delta) at the returned scale) is computed once, at the end.
When the delta certificate holds it is reported as ``min(eps(delta), eps)``: ``delta(eps) <=
delta`` already proves that the least certified eps is at most ``eps``, so a value above
``eps`` could only be the inversion's tolerance (``shuffledp.numerics``).

Reuse across steps (the guide).  For a large profile with many distinct budgets the work of
one evaluation is dominated by the n users, not by the target.  A registered *guide* for the
bound (``Bound.guide_fn``; today ``clones``, :mod:`shuffledp.bounds.clones.guide`) runs the
same search first on a quantized copy of the shape,
computed once: every ``eps_i`` rounded *up* onto the grid ``max_i eps_i (1 + rho)^{-k}``, so
the copy has a few thousand distinct budgets whose groups are convolved directly.  Rounding
budgets up can only raise the clone-reduction bound, and by at most what scaling by
``1 + rho`` does (docs/theory.md, section 4: the bound is non-decreasing in every user's
budget), so the guide's bracket ``[a, b]`` places the true crossing in ``[a, b (1 + rho)]``
(``rho <= 3 rtol / 4`` and the guide's tolerance are chosen so that this is within ``rtol``).
The real bound is then evaluated at those two scales first (usually the only two real
evaluations); if either does not confirm, the search simply continues with the real bound.
Every returned scale is certified (or, for a lower bound, shown violated) by the real bound
on the real profile.

Cap.  ``max_local_eps`` bounds the largest local budget ``s * max_i eps_i``: if the bound still
certifies the target there, the cap is returned (``capped=True``).  Floor (``local_floor``).
Without shuffling, the reports are already ``(max_i s eps_i, max_i delta_i)``-DP (each report is
a post-processing of one user's data), so any ``s <= s_local`` is certified by the local
guarantee alone; with ``local_floor=True`` a bound that certifies less than that is raised to
``s_local`` (``used_local_floor=True``); with the default ``False`` it raises
:class:`~shuffledp.errors.ParameterRegimeError` when it cannot reach the target for any
``s >= s_local / 1024``.

Code names: ``s`` = scale, ``lo``/``hi`` = the bracket ends, ``g`` = the secant score above,
``rho`` = the guide's quantization step, ``rtol`` = relative tolerance on ``s``.

>>> from shuffledp import BudgetProfile
>>> c = calibrate_eps0(method="fmt21_closed", n=100_000, eps=1.0, delta=1e-6)
>>> c.eps0 > 1.0 and c.bound_eps <= 1.0 and c.bound_delta <= 1e-6
True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from shuffledp.bounds import Bound, get_bound, list_bounds
from shuffledp.bounds.registry import unknown_bound_message
from shuffledp.budgets import BudgetProfile
from shuffledp.errors import ParameterRegimeError
from shuffledp.limits import EPS_LOCAL_MAX
from shuffledp.validation import (
    check_bool,
    check_real,
    check_str,
    check_target_delta,
    check_target_eps,
    describe,
)

__all__ = [
    "Calibration",
    "ScaleCheck",
    "ScaleSearch",
    "calibrate_scale",
    "calibrate_eps0",
    "delta_score",
    "eps_score",
    "local_only_scale",
    "search_scale",
]

#: Default relative tolerance of the calibrated scale.
RTOL = 1e-3
#: Default cap on the largest local budget s * max_i eps_i.
MAX_LOCAL_EPS = 30.0
#: A guide is used from this many users on (below, real evaluations are cheap).
GUIDE_MIN_N = 20_000
#: Safety cap on the number of evaluations of one search.
MAX_EVALUATIONS = 200


# --------------------------------------------------------------------------- the record
@dataclass(frozen=True)
class Calibration:
    """Result of a calibration (:func:`calibrate_scale`, :func:`calibrate_eps0`, and the SGD
    accounting's :func:`shuffledp.sgd.accounting.calibrate_scale`).

    ``scale`` = s (local budgets are ``scale * eps_i``), ``profile`` = the scaled profile (users
    in the caller's order), ``bound_eps`` = the bound's central eps at ``delta`` there
    (``<= target_eps`` unless kind is ``lower`` or the local floor was used; alias
    ``eps_achieved``), ``bound_delta`` = the certificate, the bound's delta at ``target_eps``
    there (NaN for bounds checked through eps(delta)), ``evaluations`` = number of scales at
    which the bound was checked (the guide's are in ``diagnostics["guide_evaluations"]``),
    ``rounds`` = number of composed rounds (1 for a single shuffle; SGD: T).
    """

    method: str
    kind: str
    target_eps: float
    delta: float
    scale: float
    profile: BudgetProfile
    bound_eps: float
    capped: bool = False
    used_local_floor: bool = False
    evaluations: int = 0
    options: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""
    rounds: int = 1
    bound_delta: float = math.nan
    diagnostics: Mapping[str, Any] = field(default_factory=dict)

    @property
    def eps0(self) -> float:
        """Largest local budget max_i s eps_i (= eps0 for identical users)."""
        return self.profile.eps_max

    @property
    def eps_local_mean(self) -> float:
        """Mean local budget s mean_i eps_i."""
        return self.profile.eps_mean

    @property
    def eps_achieved(self) -> float:
        """The SGD accounting's name of ``bound_eps``."""
        return self.bound_eps

    def as_row(self) -> dict[str, Any]:
        """The columns of the SGD table (``local_eps_scale`` = scale)."""
        return {
            "method": self.method,
            "kind": self.kind,
            "rounds": self.rounds,
            "target_eps": self.target_eps,
            "delta": self.delta,
            "local_eps_scale": self.scale,
            "eps_achieved": self.bound_eps,
            "local_eps_max": self.profile.eps_max,
            "local_eps_mean": self.eps_local_mean,
            "capped": self.capped,
        }


# --------------------------------------------------------------------------- the search
def delta_score(value: float, target: float) -> float:
    """Secant score of a delta at the target: ``log(-log value) - log(-log target)``.

    Positive (or ``+inf`` for 0) when ``value < target``, ``-inf`` for ``value >= 1`` or NaN.

    >>> delta_score(1e-12, 1e-6) > 0 > delta_score(1e-3, 1e-6)
    True
    """
    if not value > 0.0:
        return math.inf if value == 0.0 else -math.inf
    if value >= 1.0:
        return -math.inf
    return math.log(-math.log(value)) - math.log(-math.log(target))


def eps_score(value: float, target: float) -> float:
    """Secant score of an eps at the target: ``log(target / value)`` (``+inf`` for 0).

    >>> eps_score(0.5, 1.0) > 0 > eps_score(2.0, 1.0)
    True
    """
    if not value > 0.0:
        return math.inf if value == 0.0 else -math.inf
    if math.isinf(value):
        return -math.inf
    return math.log(target) - math.log(value)


@dataclass(frozen=True)
class ScaleCheck:
    """One evaluation of a search: is the target certified at this scale; ``score`` (> 0
    certified side, for the secant steps); ``value`` (the evaluated delta or eps, ``inf``
    when the bound does not hold there); ``reason`` when it does not hold."""

    certified: bool
    score: float
    value: float
    reason: str = ""


@dataclass
class ScaleSearch:
    """State and result of :func:`search_scale`: ``lo`` = largest certified scale evaluated
    (``None``: none down to ``s_min``), ``hi`` = smallest uncertified scale evaluated
    (``None``: ``s_max`` is certified), ``checks`` = every evaluation by scale, in order."""

    s_min: float
    s_max: float
    rtol: float
    lo: float | None = None
    hi: float | None = None
    checks: dict[float, ScaleCheck] = field(default_factory=dict)
    converged: bool = False

    @property
    def evaluations(self) -> int:
        return len(self.checks)

    @property
    def capped(self) -> bool:
        """``s_max`` itself is certified."""
        return self.hi is None and self.lo is not None and self.lo >= self.s_max

    @property
    def failed(self) -> bool:
        """Not certified at ``s_min``."""
        return self.lo is None and self.hi is not None and self.hi <= self.s_min

    def done(self) -> bool:
        if self.capped or self.failed:
            return True
        return (self.lo is not None and self.hi is not None
                and self.hi - self.lo <= self.rtol * self.hi)

    def record(self, s: float, check: ScaleCheck) -> None:
        self.checks[s] = check
        if check.certified:
            if self.lo is None or s > self.lo:
                self.lo = s
            if self.hi is not None and self.hi <= self.lo:  # not monotone: keep the newer
                self.hi = None
        else:
            if self.hi is None or s < self.hi:
                self.hi = s
            if self.lo is not None and self.lo >= self.hi:
                self.lo = None

    def _secant(self, log_scale: bool) -> float | None:
        """Root of the line through the last two evaluations with a finite score, in s or in
        log s (None unless the score decreases)."""
        points = [(s, c.score) for s, c in self.checks.items() if math.isfinite(c.score)]
        if len(points) < 2:
            return None
        (s1, g1), (s2, g2) = points[-2], points[-1]
        x1, x2 = (math.log(s1), math.log(s2)) if log_scale else (s1, s2)
        if x1 == x2 or g1 == g2:
            return None
        slope = (g2 - g1) / (x2 - x1)
        if not slope < 0:
            return None
        x = x2 - g2 / slope
        if log_scale:
            return math.exp(x) if x < 700.0 else math.inf
        return x


def search_scale(
    check: Callable[[float], ScaleCheck],
    *,
    start: float,
    s_min: float,
    s_max: float,
    rtol: float,
    seeds: Sequence[float] = (),
    log_secant: bool = False,
) -> ScaleSearch:
    """Bracketing monotone search for the largest certified scale in ``[s_min, s_max]``.

    ``check(s)`` evaluates the target at scale ``s`` (certified must be monotone: true below
    the crossing, false above).  ``seeds`` are evaluated first, in order, while they lie
    inside the current bracket (e.g. a guide's bracket, see the module docstring); then the
    search starts at ``start``.  ``log_secant``: secant steps in ``log s`` instead of ``s``
    (for scores linear in log s, such as :func:`eps_score` of a bound whose eps grows like a
    power of s).  Returns the :class:`ScaleSearch` with the final bracket:
    ``hi - lo <= rtol * hi``, or ``capped`` (``s_max`` certified), or ``failed`` (``s_min``
    not certified).

    >>> res = search_scale(lambda s: ScaleCheck(s <= 2.0, math.log(2.0 / s), s),
    ...                    start=0.5, s_min=1e-3, s_max=100.0, rtol=1e-3, log_secant=True)
    >>> res.lo <= 2.0 < res.hi, res.hi - res.lo <= 1e-3 * res.hi, res.evaluations <= 6
    (True, True, True)
    """
    if not (0.0 < s_min <= s_max and math.isfinite(s_max)):
        raise ValueError(f"need 0 < s_min <= s_max < inf, got s_min = {s_min!r}, "
                         f"s_max = {s_max!r}")
    if not 0.0 < rtol < 1.0:
        raise ValueError(f"rtol must be in (0, 1), got {rtol!r}")
    res = ScaleSearch(s_min=float(s_min), s_max=float(s_max), rtol=float(rtol))
    w = 0.9 * rtol  # an aimed step closes the bracket to w < rtol when it lands as expected
    queue = [min(max(float(x), s_min), s_max) for x in seeds]
    start = min(max(float(start), s_min), s_max)
    up = down = 0  # consecutive bracketing steps (growth of the step)
    widths: list[float] = []  # log widths of the bracket before each interior step

    def evaluate(s: float) -> None:
        res.record(s, check(s))

    while not res.done() and res.evaluations < MAX_EVALUATIONS:
        inside = [s for s in queue if s not in res.checks
                  and (res.lo is None or s > res.lo) and (res.hi is None or s < res.hi)]
        queue = []
        if inside:
            evaluate(inside[0])
            queue = inside[1:]
            continue
        lo, hi = res.lo, res.hi
        if lo is None and hi is None:
            evaluate(start)
        elif hi is None:  # certified so far: move up
            assert lo is not None
            up, down = up + 1, 0
            c = lo * 2.0 ** (2 ** min(up - 1, 4))
            r = res._secant(log_secant)
            if r is not None and r > lo:
                c = min(c, max(r * 1.02, lo * (1.0 + 2.0 * w)))
            elif up == 1:  # nothing to extrapolate from yet: try the cap (often reached)
                c = s_max
            evaluate(min(c, s_max))
        elif lo is None:  # not certified so far: move down
            up, down = 0, down + 1
            c = hi / 2.0 ** (2 ** min(down - 1, 4))
            r = res._secant(log_secant)
            if r is not None and r < hi:
                c = max(c, min(r / 1.02, hi * (1.0 - 2.0 * w)))
            evaluate(max(c, s_min))
        else:
            up = down = 0
            widths.append(math.log(hi / lo))
            stalled = len(widths) >= 3 and widths[-1] > 0.5 * widths[-3]
            r = res._secant(log_secant)
            if r is None or not lo < r < hi:
                g_lo, g_hi = res.checks[lo].score, res.checks[hi].score
                r = (lo + (hi - lo) * g_lo / (g_lo - g_hi)
                     if math.isfinite(g_lo) and math.isfinite(g_hi) and g_lo > g_hi else None)
            if r is None or stalled or not lo < r < hi:
                c = math.sqrt(lo * hi)
                widths.clear()
            elif r >= hi * (1.0 - w):
                c = hi * (1.0 - w)
            elif r <= lo / (1.0 - w):
                c = lo / (1.0 - w)
            elif r - lo >= hi - r:
                c = r * (1.0 - 0.5 * w)
            else:
                c = r * (1.0 + 0.5 * w)
            if not lo < c < hi:
                c = math.sqrt(lo * hi)
            if not lo < c < hi:  # floating point exhausted
                break
            evaluate(c)
    res.converged = res.done()
    return res


# --------------------------------------------------------------------------- validation
def _check_target(eps: object, delta: object) -> tuple[float, float]:
    """The central target: ``eps`` finite and > 0 (a scale is ``eps / max_i eps_i``),
    ``delta`` in the accepted range (:func:`shuffledp.validation.check_target_delta`)."""
    e = check_target_eps(eps)
    if e == 0:
        raise ValueError(f"eps must be finite and > 0, got {e!r}")
    return e, check_target_delta(delta)


def _check_profile(profile: object) -> BudgetProfile:
    if not isinstance(profile, BudgetProfile):
        raise TypeError(f"profile must be a BudgetProfile, got {type(profile).__name__}")
    return profile


def _check_settings(
    method: object,
    options: object,
    rtol: object,
    max_local_eps: object,
    local_floor: object,
) -> dict[str, Any]:
    """Validate the arguments shared by :func:`calibrate_scale` and :func:`calibrate_eps0`;
    returns the options as a dict."""
    check_str(method, "method")
    known = list_bounds()
    if method not in known:
        raise ValueError(unknown_bound_message(method))
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise TypeError(f"options must be a mapping (dict) or None, got {describe(options)}")
    for key in options:
        if not isinstance(key, str):
            raise TypeError(f"options keys must be str, got {describe(key)}")
    check_real(rtol, "rtol", low=0.0, high=1.0, low_open=True, high_open=True)
    check_real(
        max_local_eps,
        "max_local_eps",
        low=0.0,
        high=EPS_LOCAL_MAX,
        low_open=True,
        rule=f"in (0, {EPS_LOCAL_MAX:g}] (the accepted local budgets)",
    )
    check_bool(local_floor, "local_floor")
    return dict(options)


def local_only_scale(profile: BudgetProfile, *, eps: float, delta: float) -> float:
    """The local-only reference: ``s = eps / max_i eps_i`` (local eps = central eps).

    Without amplification the released reports are ``(s max_i eps_i, max_i delta_i)``-DP, so
    the scale needs ``max_i delta_i <= delta``; otherwise
    :class:`~shuffledp.errors.ParameterRegimeError`.

    >>> local_only_scale(BudgetProfile.from_arrays([0.5, 2.0]), eps=1.0, delta=1e-6)
    0.5
    """
    _check_profile(profile)
    eps, delta = _check_target(eps, delta)
    if profile.eps_max <= 0:
        raise ValueError("profile must have max eps_i > 0 to be scaled")
    if profile.delta_max > delta:
        raise ParameterRegimeError(
            f"local-only needs max delta_i <= delta, got {profile.delta_max:g} > {delta:g}"
        )
    return float(eps / profile.eps_max)


# --------------------------------------------------------------------------- the checks
class _BoundCheck:
    """The real certificate of ``bound`` on ``shape.scaled(s)`` at the target; keeps the
    latest scaled profiles (so the final eps(delta) at a bracket end
    usually reuses the bound's per-profile caches)."""

    def __init__(self, bound: Bound, shape: BudgetProfile, opts: dict[str, Any],
                 eps: float, delta: float) -> None:
        self.bound, self.shape, self.opts = bound, shape, opts
        self.eps, self.delta = eps, delta
        self.by_delta = bound.delta_fn is not None
        self.profiles: dict[float, BudgetProfile] = {}
        self.reasons: list[str] = []

    def scaled(self, s: float) -> BudgetProfile:
        prof = self.profiles.get(s)
        if prof is None:
            prof = self.shape.scaled(s)
            self.profiles[s] = prof
        return prof

    def __call__(self, s: float) -> ScaleCheck:
        prof = self.scaled(s)
        while len(self.profiles) > 3:  # the latest few (the bracket ends, usually)
            del self.profiles[next(iter(self.profiles))]
        try:
            if self.by_delta:
                d = self.bound.delta(profile=prof, eps=self.eps, **self.opts)
                return ScaleCheck(d <= self.delta, delta_score(d, self.delta), d)
            e = self.bound.eps(profile=prof, delta=self.delta, **self.opts)
            return ScaleCheck(e <= self.eps, eps_score(e, self.eps), e)
        except ParameterRegimeError as err:
            self.reasons.append(str(err))
            return ScaleCheck(False, -math.inf, math.inf, str(err))

    def final_eps(self, s: float, check: ScaleCheck, lower: bool) -> float:
        """The bound's eps(delta) at ``s`` (see the module docstring for the min with eps)."""
        if not self.by_delta and math.isfinite(check.value):
            e = check.value
        else:
            try:
                e = self.bound.eps(profile=self.scaled(s), delta=self.delta, **self.opts)
            except ParameterRegimeError:
                e = math.inf
        if check.certified and not lower:
            e = min(e, self.eps)
        return float(e)


class _GuideCheck:
    """A bound's guide (``Bound.guide_fn``, module docstring) as a check of the scale search:
    its delta at s against the target."""

    def __init__(self, guide: Any, delta: float) -> None:
        self.guide, self.delta, self.rho = guide, delta, float(guide.rho)

    def __call__(self, s: float) -> ScaleCheck:
        d = self.guide.delta(s)
        return ScaleCheck(d <= self.delta, delta_score(d, self.delta), d)


# --------------------------------------------------------------------------- calibration
def calibrate_scale(
    *,
    method: str,
    profile: BudgetProfile,
    eps: float,
    delta: float,
    options: Mapping[str, Any] | None = None,
    rtol: float = RTOL,
    max_local_eps: float = MAX_LOCAL_EPS,
    local_floor: bool = False,
    guide: bool | None = None,
) -> Calibration:
    """Largest common factor ``s`` on ``profile``'s eps_i that ``method`` certifies at the
    central ``(eps, delta)`` (module docstring: certificate, search, safe side, guide, cap and
    floor).

    ``options`` are passed to the bound (e.g. ``{"clone": "standard"}`` for ``clones``);
    ``rtol`` in (0, 1), relative tolerance on s; ``max_local_eps`` in (0, EPS_LOCAL_MAX]
    (the accepted local budgets); ``guide``: ``None`` uses a registered guide for profiles of
    at least ``GUIDE_MIN_N`` users, ``False`` never, ``True`` whenever one applies.
    Raises :class:`~shuffledp.errors.ParameterRegimeError` when the bound cannot reach the
    target, ``ValueError`` for an unknown bound or bad target, ``TypeError`` for arguments of
    the wrong type.
    """
    _check_profile(profile)
    eps, delta = _check_target(eps, delta)
    opts = _check_settings(method, options, rtol, max_local_eps, local_floor)
    if guide is not None:
        check_bool(guide, "guide")
    rtol, max_local_eps = float(rtol), float(max_local_eps)  # type: ignore[arg-type]
    if profile.eps_max <= 0:
        raise ValueError("profile must have max eps_i > 0 to be scaled")
    bound = get_bound(method)
    try:  # unknown options fail here, before any search
        bound.prepare(profile, **opts)
    except ParameterRegimeError:
        pass  # the regime depends on s: judged at every evaluated scale
    lower = bound.info.kind == "lower"

    s_max = max_local_eps / profile.eps_max
    try:
        s_local: float | None = min(local_only_scale(profile, eps=eps, delta=delta), s_max)
    except ParameterRegimeError:
        s_local = None
    start = s_local if s_local is not None else min(eps / profile.eps_max, s_max)
    floor_applies = local_floor and s_local is not None and not lower
    s_min = s_local if floor_applies else start / 1024.0

    # the guide (module docstring), then the real bound seeded with the guide's bracket
    factory = bound.guide_fn
    use_guide = factory is not None and not profile.is_identical and (
        guide if guide is not None else profile.n >= GUIDE_MIN_N)
    merged = {**bound.info.options, **opts}  # the guide sees the bound's defaults too
    made = factory(profile, merged, eps, delta, rtol) if use_guide else None  # type: ignore[misc]
    g = _GuideCheck(made, delta) if made is not None else None
    seeds: list[float] = []
    diagnostics: dict[str, Any] = {}
    if g is not None:
        tol_g = 0.95 * (rtol - g.rho + rtol * g.rho)
        gres = search_scale(g, start=start, s_min=s_min, s_max=s_max, rtol=tol_g)
        if gres.lo is not None:
            seeds.append(gres.lo)
        if gres.hi is not None:
            seeds.append(min(gres.hi * (1.0 + g.rho), s_max))
        elif gres.lo is not None:
            seeds.append(s_max)
        diagnostics = {"guide_evaluations": gres.evaluations, "guide_rho": g.rho}
    real = _BoundCheck(bound, profile, opts, eps, delta)
    res = search_scale(real, start=start, s_min=s_min, s_max=s_max, rtol=rtol, seeds=seeds,
                       log_secant=not real.by_delta)

    def result(s: float, *, capped: bool = False, floor: bool = False,
               note: str = "") -> Calibration:
        chk = res.checks.get(s) or real(s)
        return Calibration(
            method=method,
            kind=bound.info.kind,
            target_eps=float(eps),
            delta=float(delta),
            scale=float(s),
            profile=profile.scaled(s),
            bound_eps=real.final_eps(s, chk, lower),
            capped=capped,
            used_local_floor=floor,
            evaluations=res.evaluations,
            options=opts,
            note=note,
            bound_delta=float(chk.value) if real.by_delta else math.nan,
            diagnostics=diagnostics,
        )

    if res.capped:
        return result(s_max, capped=True)
    if res.lo is None:
        if floor_applies:
            assert s_local is not None
            return result(s_local, floor=True)
        why = f"; last reason: {real.reasons[-1]}" if real.reasons else ""
        raise ParameterRegimeError(
            f"{method} cannot certify eps = {eps:g} at delta = {delta:g} for any local "
            f"budget max eps_i >= {s_min * profile.eps_max:.3g}{why}"
        )
    note = ""
    if not res.converged:  # only if the bound is not monotone in s
        note = (f"the search stopped after {res.evaluations} evaluations with the bracket "
                f"[{res.lo:.6g}, {res.hi if res.hi is not None else math.inf:.6g}] wider than "
                f"rtol; ")
    above = [t for t in res.checks if t > res.lo]
    if above and math.isinf(res.checks[min(above)].value) and real.reasons:
        note += f"limited by the bound's validity region: {res.checks[min(above)].reason}"
    s = res.hi if lower and res.hi is not None else res.lo
    return result(s, note=note)


def calibrate_eps0(
    *,
    method: str,
    n: int,
    eps: float,
    delta: float,
    delta0: float = 0.0,
    options: Mapping[str, Any] | None = None,
    rtol: float = RTOL,
    max_local_eps: float = MAX_LOCAL_EPS,
    local_floor: bool = False,
) -> Calibration:
    """Largest identical local budget eps0 of ``n`` users (local delta ``delta0``) that
    ``method`` certifies at ``(eps, delta)``; ``result.eps0`` = ``result.scale``.

    >>> c = calibrate_eps0(method="fmt21_closed", n=10_000, eps=0.5, delta=1e-6)
    >>> round(c.eps0, 2), c.bound_eps <= 0.5
    (2.0, True)
    """
    _check_target(eps, delta)  # every argument is checked before the n users are built
    _check_settings(method, options, rtol, max_local_eps, local_floor)
    shape = BudgetProfile.identical(n=n, eps0=1.0, delta0=delta0, label="identical")
    return calibrate_scale(
        method=method,
        profile=shape,
        eps=eps,
        delta=delta,
        options=options,
        rtol=rtol,
        max_local_eps=max_local_eps,
        local_floor=local_floor,
    )
