"""A victim group's eps(delta) for the ``blanket`` bound (docs/theory.md 15.1).

:func:`_solve_group` finds an eps where a group's computed bound is at most the target, within
a relative tolerance of the crossing, with few evaluations (each is a full evaluation of the
group); :func:`shuffledp.bounds.blanket.bound.blanket_eps` and :mod:`shuffledp.per_tier` use it.
Only the time depends on its probes: every point it returns was certified by an evaluation.
"""

from __future__ import annotations

import math

from shuffledp._lazy import lazy_module

optimize = lazy_module("scipy.optimize")

__all__: list[str] = []

#: The first upward step (relative) of a group's solve from another group's crossing, and
#: the most such steps (x4 each, up to 2.28 times the crossing); beyond them the solve probes
#: down from the group's largest budget (a crossing far below, e.g. near eps = 0, would take
#: dozens of steps up; time only).
UP_STEP = 0.02
UP_PROBES = 4
#: ... skipped when the group's value at the other crossing is more than this many times the
#: target (the crossing is then far above, and the steps would only cost evaluations; time
#: only).  Measured: Laplace, normal_0.75_0.5, n = 10^4, the top group's value 3,000 times
#: delta at the first crossing, its own 9 times higher.
UP_SKIP = 100.0
#: The upward search from the start (where no downward probe certified a point) takes at most
#: about this many steps (x2 each, larger over wider ranges; time only).
UP_SEARCH_PROBES = 16
#: Brent's method stops early at a point it certified whose bound is within a relative
#: VALUE_RTOL of the target (of the target's distance to ``floor`` when one is given), when an
#: uncertified point lies at most VALUE_NEAR (relative) below it: the crossing lies between
#: the two, so the point is at most VALUE_NEAR above it, and its bound is already the target
#: up to VALUE_RTOL (time only: every point returned is certified; measured at 10^6 users, one
#: evaluation fewer, the confirming step one tolerance below).
VALUE_RTOL = 1e-6
VALUE_NEAR = 1e-3


class _Close(Exception):
    """Raised inside Brent's method at a certified point close enough to the target."""

    def __init__(self, x: float) -> None:
        super().__init__(x)
        self.x = x


def _solve_group(fn, target: float, a: float, b: float, rtol: float, atol: float,
                 floor: float = 0.0, value_a: float | None = None) -> float:
    """An ``x`` in ``(a, b]`` with ``fn(x) <= target`` computed, within about
    ``max(atol, rtol x)`` of the crossing, for ``fn(a) > target >= fn(b)``: the bracket is
    narrowed by the points ``a (1 + UP_STEP 4^k)``, ``k < UP_PROBES``, when ``a > 0`` (another
    group's crossing) and ``value_a`` (``fn(a)``, if known) is at most ``UP_SKIP`` times the
    target, then by ``near / 8^k`` above ``a`` (``near`` one tolerance below ``b``);
    when none has ``fn <= target`` and ``fn(near)`` is above it too (a bound that is not
    monotone: rounding charges growing like e^eps), the points ``f^k`` times the start (``atol``
    if the start is 0) up to the first failing probe (``f = 2``, or larger so that about
    ``UP_SEARCH_PROBES`` steps reach it), ``b`` itself if none of them is certified;
    else Brent's method on ``log fn`` (on ``log(fn - floor)`` when ``0 <= floor < target``:
    ``floor`` is the value where the group's amplification bound is 0, a plateau of ``log fn``
    far above the crossing) locates the crossing r (``scipy.optimize.brentq``; it stops early
    at a certified point within ``VALUE_RTOL`` of the target at most ``VALUE_NEAR`` above an
    uncertified one, returned), then the smallest point it evaluated within one tolerance above
    r with ``fn <= target``, else the first of r plus 1, 2, 4, 8 tolerances where
    ``fn <= target`` is returned; if
    none is, bisection on the bracket ``[a, b]`` as in
    :func:`shuffledp.numerics.invert_monotone`.  Whatever guides the probes, a point is
    certified by the comparison ``fn(x) <= target`` alone."""
    above = 0.0 <= floor < target
    log_t = math.log(target - floor) if above else math.log(target)

    def g(x: float) -> float:
        if x not in seen:  # (Brent's method starts at the ends, one of them already seen)
            v = fn(x)
            if above:
                r = math.log(max(v - floor, 1e-300)) - log_t
                # the sign is the comparison v <= target itself (certification), the size
                # the guide
                seen[x] = min(r, 0.0) if v <= target else max(r, 1e-300)
            else:
                seen[x] = math.log(max(v, 1e-300)) - log_t
            if brent and -VALUE_RTOL <= seen[x] <= 0.0 and v <= target:
                below = [y for y, gy in seen.items() if y < x and gy > 0.0]
                if below and x - max(below) <= VALUE_NEAR * x:
                    raise _Close(x)
        return seen[x]

    seen: dict[float, float] = {}
    brent = False

    near = b - max(atol, rtol * abs(b))
    if near <= a:
        return b
    certified = None  # the smallest probe with fn <= target
    start = a
    if a > 0.0 and not (value_a is not None and value_a > UP_SKIP * target):
        # from another group's crossing: this one is usually a little above it
        step = UP_STEP
        for _ in range(UP_PROBES):
            if a * (1.0 + step) >= near:
                break
            x = a * (1.0 + step)
            if g(x) <= 0.0:
                certified = x
                break
            a, step = x, 4.0 * step
    if certified is None:
        # the crossing is often far below b (a group's bound flattens at its charges above
        # it, where Brent's method would only bisect): near / 8, near / 64, ...
        x = near / 8.0
        while x > a and x > atol:
            if g(x) > 0.0:
                a = x
                break
            certified, x = x, x / 8.0
    if certified is None and g(near) > 0.0:
        # nothing certified from near b down to the failing probe: either the crossing is
        # within the tolerance of b (often a jump at the group's largest budget, where
        # delta_G falls), or the computed bound is not monotone (its rounding charges grow
        # like e^eps: Laplace victims at eps 50 are charged 1 near it): from the start up,
        # doubling (only where the probes above failed; every point returned is certified)
        # (x2 steps, or larger ones over a range wider than 2^UP_SEARCH_PROBES: a start
        # near 1e-95, another group's crossing, took 300 steps of doubling)
        # (from atol when the start is 0: the first group solved, whose bound may rise again
        # near its top, e.g. binary RR victims at eps 50 among 10^8 users)
        base = start if start > 0.0 else atol
        factor = 2.0 if not 0.0 < base < a else max(
            2.0, math.exp(math.log(a / base) / UP_SEARCH_PROBES))
        prev, x = start, factor * base
        while 0.0 < x < a:
            if g(x) <= 0.0:
                certified, a = x, prev
                break
            prev, x = x, factor * x
        if certified is None:
            return b
    if certified is None:
        certified = near
    b = certified
    brent = True
    try:
        r = optimize.brentq(g, a, b, xtol=atol / 4.0, rtol=max(rtol / 4.0, 1e-14))
    except _Close as close:  # (a certified point close to the target: VALUE_RTOL)
        return close.x
    except ValueError:  # no sign change seen (a group bound that is not monotone)
        r = a
    brent = False
    # a point Brent's method already certified just above r is the answer
    done = [x for x, v in seen.items() if r <= x <= r + max(atol, rtol * abs(r)) and v <= 0.0]
    if done:
        return min(done)
    for k in (1.0, 2.0, 4.0, 8.0):
        x = min(b, r + k * max(atol, rtol * abs(r)))
        if g(x) <= 0.0:
            return x
        a = max(a, x)
    while b - a > max(atol, rtol * abs(b)):
        m = 0.5 * (a + b)
        if m <= a or m >= b:
            break
        if g(m) <= 0.0:
            b = m
        else:
            a = m
    return b
