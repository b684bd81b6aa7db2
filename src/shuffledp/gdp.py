"""Gaussian differential privacy (GDP) tools.

Reference: J. Dong, A. Roth, W. J. Su, "Gaussian differential privacy", JRSS-B 84(1), 2022
(arXiv 1905.02383).  A mechanism is mu-GDP when its trade-off function is at least
``G_mu(a) = Phi(Phi^{-1}(1 - a) - mu)``.  Corollary 2.13: mu-GDP holds iff it is
``(eps, delta(eps))``-DP for every ``eps >= 0`` with

    delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).

Composition (Corollary 3.3): the composition of mu_1-, ..., mu_T-GDP mechanisms is
``sqrt(mu_1^2 + ... + mu_T^2)``-GDP.

Numerics.  With ``t = eps/mu``, ``a = mu/2 - t`` and ``b = -mu/2 - t``, the identity
``e^eps phi(b) = phi(a)`` gives ``delta = phi(a) * (M(-a) - M(-b))`` where
``M(x) = (1 - Phi(x)) / phi(x)`` is Mills' ratio, computed from ``scipy.special.erfcx``.
For ``a <= 0`` both arguments of ``M`` are >= 0, so nothing overflows and no tiny number is
subtracted from a large one; for ``a > 0`` we use ``delta = Phi(a) - phi(a) M(-b)``.
Measured against mpmath at 50 digits (tests/test_gdp.py) the relative error is below 1e-9 for
mu in [1e-4, 50] and delta down to 1e-30.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from shuffledp._lazy import lazy_module
from shuffledp.errors import short_repr
from shuffledp.numerics import Side, eps_from_delta, invert_monotone
from shuffledp.validation import (
    as_real_array,
    check_array_range,
    check_real,
    check_str,
    check_target_delta,
    check_target_eps,
)

special = lazy_module("scipy.special")

__all__ = ["gdp_delta", "gdp_eps", "compose_gdp", "gdp_mu_from_eps_delta"]

_SQRT_HALF_PI = math.sqrt(math.pi / 2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


_SIDES = ("upper", "lower", "nearest")


def _check_mu(mu: object) -> float:
    return check_real(mu, "mu", low=0.0, low_open=True)


def _mills(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Mills' ratio (1 - Phi(x)) / phi(x) for x >= 0 (no overflow)."""
    return _SQRT_HALF_PI * special.erfcx(x / math.sqrt(2.0))


def gdp_delta(eps: ArrayLike, mu: float) -> NDArray[np.float64] | float:
    """Privacy profile of mu-GDP: ``delta(eps)`` of Dong, Roth, Su (2022), Corollary 2.13.

    Code names: ``eps`` = epsilon, ``mu`` = mu.  Vectorised over ``eps``.

    >>> round(float(gdp_delta(1.0, 1.0)), 10)
    0.1269367375
    """
    mu = _check_mu(mu)
    e = as_real_array(eps, "eps")
    check_array_range(e, "eps", low=0.0)
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        t = e / mu
        a = mu / 2.0 - t
        b = -mu / 2.0 - t
        log_phi_a = -0.5 * a * a - _LOG_SQRT_2PI
        phi_a = np.exp(log_phi_a)
        neg = phi_a * (_mills(np.maximum(-a, 0.0)) - _mills(-b))
        pos = special.ndtr(a) - phi_a * _mills(-b)
    out = np.where(a <= 0.0, neg, pos)
    out = np.clip(out, 0.0, 1.0)
    return float(out) if out.ndim == 0 else out


def gdp_eps(delta: float, mu: float, *, side: Side = "nearest", rtol: float = 1e-13) -> float:
    """Smallest ``eps >= 0`` with ``gdp_delta(eps, mu) <= delta`` (inverse of Cor. 2.13).

    Uses the shared inversion :func:`shuffledp.numerics.eps_from_delta`; the profile is
    evaluated to about 1e-12 relative accuracy, so ``side`` matters only at that level.
    ``delta`` is a central target (:func:`shuffledp.validation.check_target_delta`); ``rtol`` in
    (0, 1).

    >>> round(gdp_eps(float(gdp_delta(1.0, 1.0)), 1.0), 9)
    1.0
    """
    delta = check_target_delta(delta)
    mu = _check_mu(mu)
    check_str(side, "side")
    if side not in _SIDES:
        raise ValueError(f"side must be one of {list(_SIDES)}, got {short_repr(side)}")
    rtol = check_real(rtol, "rtol", low=0.0, high=1.0, low_open=True, high_open=True)
    # delta(eps) <= Phi(mu/2 - eps/mu), so eps = mu (mu/2 - Phi^{-1}(delta)) brackets the root.
    hi = max(mu * (mu / 2.0 - float(special.ndtri(delta))), 1e-12)
    if not math.isfinite(hi * 2.0):
        raise ValueError(
            f"mu must be small enough for eps(delta) to be a finite float, got {mu!r}"
        )
    return eps_from_delta(
        lambda e: float(gdp_delta(e, mu)),
        delta,
        side=side,
        eps_hi=hi,
        eps_max=hi * 2.0,
        rtol=rtol,
        atol=1e-300,
    )


def compose_gdp(mus: ArrayLike) -> float:
    """Composition of mu_t-GDP mechanisms: ``sqrt(sum_t mu_t^2)`` (Dong et al., Cor. 3.3).

    ``mus``: one mu or an array of them, each finite and > 0.

    >>> compose_gdp([3.0, 4.0])
    5.0
    """
    m = as_real_array(mus, "mus")
    if m.ndim > 1:
        raise ValueError(f"mus must be one mu or a 1-D array of them, got shape {m.shape}")
    m = m.ravel()
    if m.size == 0:
        raise ValueError("mus must contain at least one mu")
    check_array_range(
        m, "mus", low=0.0, low_open=True, rule="finite and > 0 (every mu)", index=True
    )
    with np.errstate(over="ignore"):
        out = float(math.sqrt(float(np.sum(m * m))))
    if not math.isfinite(out):  # the squares overflow: scale by the largest mu
        top = float(m.max())
        out = top * float(math.sqrt(float(np.sum((m / top) ** 2))))
    if not math.isfinite(out):
        raise ValueError(f"mus compose to a mu beyond the float range (largest mu {top!r})")
    return out


def gdp_mu_from_eps_delta(eps: float, delta: float) -> float:
    """The mu such that mu-GDP gives exactly ``(eps, delta)`` (inverse in mu).

    ``delta(eps; mu)`` increases with mu, so this is the largest mu whose profile meets the
    target at ``eps``; used to calibrate GDP-accounted mechanisms.  ``eps`` and ``delta`` are
    a central target (:func:`shuffledp.validation.check_target_eps`, ``check_target_delta``);
    ``ValueError`` when no mu up to 1e4 reaches ``delta`` at ``eps``.

    >>> round(gdp_mu_from_eps_delta(1.0, float(gdp_delta(1.0, 0.5))), 9)
    0.5
    """
    eps = check_target_eps(eps)
    delta = check_target_delta(delta)
    hi_max = 1e4
    try:
        return invert_monotone(
            lambda m: float(gdp_delta(eps, m)),
            delta,
            lo=1e-8,
            hi=1.0,
            decreasing=False,
            side="lower",
            rtol=1e-13,
            atol=1e-300,
            hi_max=hi_max,
            log_space=True,
        )
    except ValueError:
        raise ValueError(
            f"no mu <= {hi_max:g} gives delta = {delta:g} at eps = {eps:g} (eps too large "
            f"for that delta)"
        ) from None
