"""Calibration: the largest local budgets a registered bound allows for a central target.

Given a central target ``(eps, delta)``, a bound name and the *shape* of a budget profile
(per-user ``eps_i``), :func:`calibrate_scale` finds the largest common factor ``s`` such that
the bound certifies the shuffled protocol with local budgets ``s * eps_i`` (deltas unchanged):

    s* = max { s in (0, s_max] : bound.eps(profile.scaled(s), delta) <= eps }.

:func:`calibrate_eps0` is the identical-users case (shape eps_i = 1, so eps0 = s).  This is the
utility experiment of the project (README, "Mechanisms, estimation and SGD"): a tighter
valid bound allows a larger ``s`` and so less noise.

The search (the shared inversion :func:`shuffledp.numerics.invert_monotone`, bisection on
log s).  ``f(s) = bound.eps(profile.scaled(s), delta)`` is non-decreasing in s for every bound
here (more local budget, less privacy); a :class:`~shuffledp.errors.ParameterRegimeError` at
``s`` (the bound does not hold there) counts as ``f(s) = inf``, i.e. "not certified".  The
search starts at the local-only scale ``s_local = eps / max_i eps_i`` (:func:`local_only_scale`),
halves it if needed, doubles it to bracket the target, then bisects until the bracket
``[a, b]`` has ``b - a <= rtol * b``.  Which end is returned (the safe side):

* rigorous upper bounds and approximations: ``a``, where ``f(a) < eps`` was evaluated, so the
  calibrated budgets never exceed what the bound certifies (maximal within ``rtol``);
* exact lower bounds (kind ``lower``): ``b``, where ``f(b) >= eps``, the smallest scale at which
  the lower bound proves the target violated: no valid analysis of that randomizer can allow
  more.  It is a reference, not a guarantee.

Cap.  ``max_local_eps`` bounds the largest local budget ``s * max_i eps_i``: if the bound still
certifies the target there, the cap is returned (``capped=True``).  Floor (``local_floor``).
Without shuffling, the reports are already ``(max_i s eps_i, max_i delta_i)``-DP (each report is
a post-processing of one user's data), so any ``s <= s_local`` is certified by the local
guarantee alone; with ``local_floor=True`` a bound that certifies less than that is raised to
``s_local`` (``used_local_floor=True``); with the default ``False`` it raises
:class:`~shuffledp.errors.ParameterRegimeError` when it cannot reach the target for any
``s >= s_local / 1024``.

>>> from shuffledp import BudgetProfile
>>> c = calibrate_eps0(method="fmt21_closed", n=100_000, eps=1.0, delta=1e-6)
>>> c.eps0 > 1.0 and c.bound_eps <= 1.0
True
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from shuffledp.bounds import get_bound, list_bounds
from shuffledp.errors import ParameterRegimeError, short_repr
from shuffledp.numerics import invert_monotone
from shuffledp.params import (
    EPS_LOCAL_MAX,
    BudgetProfile,
    check_bool,
    check_real,
    check_str,
    check_target_delta,
    check_target_eps,
    describe,
)

__all__ = ["Calibration", "calibrate_scale", "calibrate_eps0", "local_only_scale"]

#: Default relative tolerance of the calibrated scale.
RTOL = 1e-3
#: Default cap on the largest local budget s * max_i eps_i.
MAX_LOCAL_EPS = 30.0


@dataclass(frozen=True)
class Calibration:
    """Result of a calibration.

    ``scale`` = s (local budgets are ``scale * eps_i``), ``profile`` = the scaled profile,
    ``bound_eps`` = the bound's central eps at it (``<= target_eps`` unless kind is ``lower``),
    ``evaluations`` = number of bound evaluations.
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

    @property
    def eps0(self) -> float:
        """Largest local budget max_i s eps_i (= eps0 for identical users)."""
        return self.profile.eps_max

    @property
    def eps_local_mean(self) -> float:
        """Mean local budget s mean_i eps_i."""
        return float(self.profile.eps.mean())


def _check_target(eps: object, delta: object) -> tuple[float, float]:
    """The central target: ``eps`` finite and > 0 (a scale is ``eps / max_i eps_i``),
    ``delta`` in the accepted range (:func:`shuffledp.params.check_target_delta`)."""
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
        raise ValueError(f"unknown bound {short_repr(method)}; known bounds: {', '.join(known)}")
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
) -> Calibration:
    """Largest common factor ``s`` on ``profile``'s eps_i that ``method`` certifies at the
    central ``(eps, delta)`` (module docstring: search, safe side, cap and floor).

    ``options`` are passed to the bound (e.g. ``{"clone": "standard"}`` for ``clones``);
    ``rtol`` in (0, 1); ``max_local_eps`` in (0, EPS_LOCAL_MAX] (the accepted local budgets).
    Raises :class:`~shuffledp.errors.ParameterRegimeError` when the bound cannot reach the
    target, ``ValueError`` for an unknown bound or bad target, ``TypeError`` for arguments of
    the wrong type.
    """
    _check_profile(profile)
    eps, delta = _check_target(eps, delta)
    opts = _check_settings(method, options, rtol, max_local_eps, local_floor)
    rtol, max_local_eps = float(rtol), float(max_local_eps)  # type: ignore[arg-type]
    if profile.eps_max <= 0:
        raise ValueError("profile must have max eps_i > 0 to be scaled")
    bound = get_bound(method)
    try:  # unknown options fail here, before any search
        bound.prepare(profile, **opts)
    except ParameterRegimeError:
        pass  # the regime depends on s: judged at every evaluated scale
    lower = bound.info.kind == "lower"
    memo: dict[float, float] = {}
    reasons: list[str] = []

    def f(s: float) -> float:
        if s not in memo:
            try:
                memo[s] = bound.eps(profile=profile.scaled(s), delta=delta, **opts)
            except ParameterRegimeError as err:
                memo[s] = math.inf
                reasons.append(str(err))
        return memo[s]

    s_max = max_local_eps / profile.eps_max
    try:
        s_local: float | None = min(local_only_scale(profile, eps=eps, delta=delta), s_max)
    except ParameterRegimeError:
        s_local = None
    start = s_local if s_local is not None else min(eps / profile.eps_max, s_max)

    def result(
        s: float, *, capped: bool = False, floor: bool = False, note: str = ""
    ) -> Calibration:
        val = f(s)
        return Calibration(
            method=method,
            kind=bound.info.kind,
            target_eps=float(eps),
            delta=float(delta),
            scale=float(s),
            profile=profile.scaled(s),
            bound_eps=float(val),
            capped=capped,
            used_local_floor=floor,
            evaluations=len(memo),
            options=opts,
            note=note,
        )

    # lower end a: f(a) < eps
    a = start
    if f(a) >= eps:
        if local_floor and s_local is not None and not lower:
            return result(s_local, floor=True)
        a_min = start / 1024.0
        while f(a) >= eps and a > a_min:
            a /= 2.0
        if f(a) >= eps:
            why = f"; last reason: {reasons[-1]}" if reasons else ""
            raise ParameterRegimeError(
                f"{method} cannot certify eps = {eps:g} at delta = {delta:g} for any local "
                f"budget max eps_i >= {a * profile.eps_max:.3g}{why}"
            )
    # upper end b: f(b) >= eps, or the cap
    b = min(a * 2.0, s_max)
    while f(b) < eps:
        if b >= s_max:
            return result(s_max, capped=True)
        a, b = b, min(b * 2.0, s_max)
    s = invert_monotone(
        f,
        eps,
        lo=a,
        hi=b,
        decreasing=False,
        side="upper" if lower else "lower",
        rtol=rtol,
        atol=0.0,
        hi_max=b,
        log_space=True,
    )
    if local_floor and not lower and s_local is not None and s < s_local:
        return result(s_local, floor=True)
    above = [t for t in memo if t > s]
    note = ""
    if above and math.isinf(memo[min(above)]) and reasons:
        note = f"limited by the bound's validity region: {reasons[-1]}"
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
    >>> round(c.eps0, 3), c.bound_eps <= 0.5
    (1.996, True)
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
