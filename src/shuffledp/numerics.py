"""Numerical helpers shared by every bound: the monotone inversion and log-space tools.

The inversion (:func:`invert_monotone`, and its two wrappers :func:`eps_from_delta` and
:func:`delta_from_eps`) is the *one* place where a privacy profile ``delta(eps)`` is turned
into ``eps(delta)`` or back.  It brackets the root, bisects to a stated tolerance, and returns
the end of the final bracket that is on the requested side:

* ``side="upper"`` (default, for rigorous upper bounds): the returned ``eps`` satisfies
  ``delta(eps) <= target`` for the bound as evaluated, so rounding never claims more privacy
  than the bound proves;
* ``side="lower"`` (for lower bounds): the returned ``eps`` satisfies ``delta(eps) > target``
  (or equals the lower end of the search range), so the true epsilon is at least that value;
* ``side="nearest"``: the midpoint of the final bracket (for approximations).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "Side",
    "invert_monotone",
    "eps_from_delta",
    "delta_from_eps",
    "log_sub_exp",
    "hockey_stick",
]

Side = Literal["upper", "lower", "nearest"]

#: Default relative tolerance of the inversion on the returned quantity.
RTOL = 1e-10
#: Default absolute tolerance of the inversion on the returned quantity.
ATOL = 1e-12


def invert_monotone(
    fn: Callable[[float], float],
    target: float,
    *,
    lo: float,
    hi: float,
    decreasing: bool = True,
    side: Side = "upper",
    rtol: float = RTOL,
    atol: float = ATOL,
    hi_max: float = 1e6,
    log_space: bool = False,
    max_iter: int = 400,
) -> float:
    """Solve ``fn(x) = target`` for a monotone ``fn`` by bracketing and bisection.

    ``fn`` is non-increasing (``decreasing=True``) or non-decreasing in ``x``.  The search
    starts on ``[lo, hi]`` and doubles ``hi`` (up to ``hi_max``) until it brackets the target.
    It returns an ``x`` within ``max(atol, rtol * x)`` of the crossing point, chosen from the
    final bracket ``[a, b]`` as documented in the module docstring.  For a non-increasing
    ``fn``, ``side="upper"`` returns ``b`` with ``fn(b) <= target``; ``side="lower"``
    returns ``a`` with ``fn(a) > target``.  For a non-decreasing ``fn`` the roles are the
    same with respect to the *returned quantity*: ``"upper"`` returns the smallest bracket
    end at which ``fn >= target`` holds.  ``log_space=True`` bisects on ``log(x)`` (``lo``
    must then be > 0), which suits quantities like ``delta`` spanning many decades.

    >>> round(invert_monotone(lambda x: 1.0 / (1.0 + x), 0.5, lo=0.0, hi=3.0), 9)
    1.0
    """
    if isinstance(target, bool) or not isinstance(target, (int, float, np.integer, np.floating)):
        raise TypeError(f"target must be a real number, got {type(target).__name__}")
    if not math.isfinite(target):
        raise ValueError(f"target must be finite, got {target!r}")
    if log_space and lo <= 0:
        raise ValueError(f"lo must be > 0 with log_space=True, got {lo!r}")
    if hi <= lo:
        raise ValueError(f"need lo < hi, got lo={lo!r}, hi={hi!r}")

    # Normalise to a non-increasing g with the event "g(x) <= target" being the safe side.
    def beyond(x: float) -> bool:  # True when x is at or past the crossing
        v = fn(x)
        return v <= target if decreasing else v >= target

    if beyond(lo):
        return lo
    while not beyond(hi):
        if hi >= hi_max:
            raise ValueError(
                f"no solution below {hi_max:g}: fn({hi:g}) = {fn(hi)!r} has not reached "
                f"target {target!r}"
            )
        hi = min(hi * 2.0 if hi > 0 else 1.0, hi_max)
    a, b = lo, hi  # invariant: not beyond(a), beyond(b)
    for _ in range(max_iter):
        if b - a <= max(atol, rtol * abs(b)):
            break
        m = math.sqrt(a * b) if log_space else 0.5 * (a + b)
        if m <= a or m >= b:  # floating point exhausted
            break
        if beyond(m):
            b = m
        else:
            a = m
    if side == "upper":
        return b
    if side == "lower":
        return a
    if side == "nearest":
        return 0.5 * (a + b)
    raise ValueError(f"side must be 'upper', 'lower' or 'nearest', got {side!r}")


def eps_from_delta(
    delta_fn: Callable[[float], float],
    delta: float,
    *,
    side: Side = "upper",
    eps_hi: float = 1.0,
    eps_max: float = 1e4,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> float:
    """``eps(delta) = min {eps >= 0 : delta_fn(eps) <= delta}`` for a non-increasing profile.

    ``side`` as in :func:`invert_monotone`.  Raises ``ValueError`` when ``delta_fn`` stays
    above ``delta`` up to ``eps_max`` (the bound cannot certify that delta).

    >>> round(eps_from_delta(lambda e: math.exp(-e), 1e-3), 6)
    6.907755
    """
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.integer, np.floating)):
        raise TypeError(f"delta must be a real number, got {type(delta).__name__}")
    if not (0.0 < delta < 1.0):
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    return invert_monotone(
        delta_fn,
        delta,
        lo=0.0,
        hi=eps_hi,
        decreasing=True,
        side=side,
        rtol=rtol,
        atol=atol,
        hi_max=eps_max,
    )


def delta_from_eps(
    eps_fn: Callable[[float], float],
    eps: float,
    *,
    side: Side = "upper",
    delta_min: float = 1e-300,
    rtol: float = 1e-9,
) -> float:
    """``delta(eps) = min {delta : eps_fn(delta) <= eps}`` for a non-increasing ``eps_fn``.

    Used for bounds that are stated in closed form as ``eps(delta)``.  The search runs on
    ``log(delta)`` over ``[delta_min, 1)``; ``side="upper"`` returns a ``delta`` at which
    ``eps_fn(delta) <= eps`` holds.  Returns 1.0 when no ``delta < 1`` certifies ``eps``.
    ``eps_fn`` may raise :class:`~shuffledp.errors.ParameterRegimeError` for a delta outside
    its region; such a delta is treated as not certifying ``eps``.

    >>> round(delta_from_eps(lambda d: -math.log(d), 2.0), 8)
    0.13533528
    """
    from shuffledp.errors import ParameterRegimeError

    if not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")

    def safe_eps(d: float) -> float:
        try:
            return eps_fn(d)
        except ParameterRegimeError:
            return math.inf

    top = 1.0 - 1e-12
    if safe_eps(top) > eps:
        return 1.0
    # eps_fn is non-increasing in delta: find the smallest delta with eps_fn(delta) <= eps.
    # Search variable: delta itself, with the target expressed on the eps scale.
    return invert_monotone(
        safe_eps,
        eps,
        lo=delta_min,
        hi=top,
        decreasing=True,
        side=side,
        rtol=rtol,
        atol=0.0,
        hi_max=top,
        log_space=True,
    )


def log_sub_exp(a: NDArray[np.float64] | float, b: NDArray[np.float64] | float):
    """``log(exp(a) - exp(b))`` for ``a >= b``, elementwise; ``-inf`` where ``a == b``."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = a + np.log(-np.expm1(b - a))
    return np.where(a == b, -np.inf, out)


def hockey_stick(p: NDArray[np.float64], q: NDArray[np.float64], eps: float) -> float:
    """Hockey-stick divergence ``H_{e^eps}(P || Q) = sum_x max(P(x) - e^eps Q(x), 0)``.

    ``p`` and ``q`` are probability vectors on a common finite support.  For large ``eps``
    the product ``e^eps * q`` is formed in log space, so it does not overflow.

    >>> hockey_stick(np.array([0.5, 0.5]), np.array([0.25, 0.75]), 0.0)
    0.25
    """
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    with np.errstate(divide="ignore", over="ignore"):
        scaled = np.exp(np.log(q) + eps) if eps > 700 else math.exp(eps) * q
    return float(np.maximum(p - scaled, 0.0).sum())
