"""Local randomizers for clipped gradients (one report per user per round).

Every user clips its gradient to L2 norm ``clip`` = C, so its input lies in the ball
``B(0, C)``; under *replacement* of the user's record two inputs differ by at most ``2C`` in
L2 norm (the sensitivity).  Budgets are per user: ``eps[i]`` (and ``delta[i]``) for row i.

:class:`GaussianRandomizer` -- ``(eps_i, delta_i)``-LDP, delta_i > 0.
    Adds ``N(0, sigma_i^2 I)``.  Calibration: the analytic Gaussian mechanism of Balle & Wang,
    "Improving the Gaussian Mechanism for Differential Privacy", ICML 2018, Theorem 8: with L2
    sensitivity Delta it is (eps, delta)-DP iff
    ``Phi(Delta/(2 sigma) - eps sigma/Delta) - e^eps Phi(-Delta/(2 sigma) - eps sigma/Delta)
    <= delta``.  That left side is the mu-GDP profile (Dong, Roth, Su 2022, Cor. 2.13) at
    ``mu = Delta / sigma``, so ``sigma_i = 2C / mu_i`` with ``1 / mu_i`` =
    :func:`shuffledp.families.gaussian.analytic_gaussian_sigma` ``(eps_i, delta_i)`` at unit
    sensitivity (rounded to the side that keeps delta(eps) <= delta_i, i.e. sigma up).
    The mechanism is *exactly* ``mu_i``-GDP for the user's own data (used by the local-only
    reference accounting).

:class:`DuchiRandomizer` -- pure ``eps_i``-LDP, eps_i > 0.
    The L2-ball mechanism of Duchi, Jordan, Wainwright, "Minimax Optimal Procedures for
    Locally Private Estimation", JASA 113 (2018), Section 4.2.3 (arXiv 1604.02390):
    with ``u = x/||x||`` (a uniformly random direction if x = 0), set ``v = +u`` with
    probability ``1/2 + ||x||/(2C)`` else ``-u``; draw ``z`` uniformly on the unit sphere, in
    the half ``<z, v> > 0`` with probability ``pi = e^eps/(1+e^eps)``, else in the other half;
    report ``B z`` with

        B = C (e^eps + 1)/(e^eps - 1) * sqrt(pi) Gamma((d+1)/2) / Gamma(d/2).

    Unbiased: ``E[z | v] = (2 pi - 1) c_d v`` with ``c_d = E|z_1| = Gamma(d/2) /
    (sqrt(pi) Gamma((d+1)/2))`` and ``E[v] = x/C``, so ``E[B z] = x``.  Privacy: the output
    density on the sphere of radius B is a mixture over the sign of terms
    ``pi * 2/|S|`` or ``(1-pi) * 2/|S|``, so it lies in ``[(1-pi), pi] * 2/|S|`` for *every*
    input in the ball: the ratio for any two inputs is at most ``e^eps``.

Which shuffle analyses hold (see :mod:`shuffledp.sgd.accounting`): both are valid inputs for
the paper's GDP approximation.  The rigorous clone accounting amplifies a user only by the
users of the same budget: the L2-ball Duchi randomizer reports on a sphere of radius
B(eps_i), so users with different budgets share no outputs (clone mass e^{-eps} within a
budget, 0 across), and d-dimensional Gaussians are handled within a budget by charging the
other users' non-overlapping mass as total variation (docs/theory.md 14, Lemma 10).

>>> import torch
>>> r = DuchiRandomizer(clip=1.0)
>>> round(r.radius(eps=1.0, d=2), 4)
3.3991
>>> g = torch.Generator().manual_seed(0)
>>> out = r.randomize(torch.zeros(3, 2), eps=torch.ones(3), generator=g)
>>> torch.allclose(out.norm(dim=1), torch.full((3,), 3.3991), atol=1e-4)
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray

from shuffledp.errors import short_repr
from shuffledp.families.gaussian import analytic_gaussian_sigma
from shuffledp.limits import EPS_LOCAL_MAX
from shuffledp.sgd.models import check_tensor
from shuffledp.validation import as_real_array, check_int, check_real, check_str, describe

__all__ = [
    "clip_rows",
    "GaussianRandomizer",
    "DuchiRandomizer",
    "DuchiSphereRandomizer",
    "GaussianSharedRandomizer",
    "nested_pool_sizes",
    "reference_eps",
    "RANDOMIZERS",
    "make_randomizer",
]


def clip_rows(g: torch.Tensor, clip: float, *, inplace: bool = False) -> torch.Tensor:
    """Scale each row to L2 norm at most ``clip``: ``g_i * min(1, clip / ||g_i||)``.

    A row that is scaled gets a factor smaller by a relative ``8 u`` (u the unit round-off
    of ``g``'s dtype), so that its computed norm stays at most ``clip`` despite round-off
    (the sensitivity the randomizers are calibrated for).  ``inplace=True`` overwrites
    ``g`` (saves one (n, d) allocation)."""
    _check_rows(g, "g")
    clip = _check_clip(clip)
    norms = g.norm(dim=1, keepdim=True)
    factor = clip / torch.clamp(norms, min=1e-30)
    shrink = 1.0 - 8.0 * torch.finfo(g.dtype).eps
    factor = torch.where(factor < 1.0, factor * shrink, torch.ones_like(factor))
    return g.mul_(factor) if inplace else g * factor


def _rounded_up(values: NDArray[np.float64], dtype: torch.dtype) -> torch.Tensor:
    """``values`` in ``dtype``, each rounded up (never below the float64 value): a noise
    scale must not shrink when the computation runs in float32."""
    t = torch.as_tensor(values, dtype=dtype)
    low = t.double() < torch.as_tensor(values, dtype=torch.float64)
    if bool(low.any()):
        t = torch.where(low, torch.nextafter(t, torch.full_like(t, math.inf)), t)
    return t


def _check_clip(clip: object) -> float:
    return check_real(clip, "clip", low=0.0, low_open=True)


def _check_rows(g: object, name: str) -> torch.Tensor:
    return check_tensor(g, name, ndim=2, floating=True)  # one row per user


def _check_generator(generator: object) -> torch.Generator:
    if not isinstance(generator, torch.Generator):
        raise TypeError("generator must be a torch.Generator (every draw comes from a seeded "
                        f"generator passed in), got {describe(generator)}")
    return generator


def _as_rows(values: torch.Tensor | ArrayLike, n: int, name: str) -> NDArray[np.float64]:
    arr = np.asarray(values.cpu() if isinstance(values, torch.Tensor) else values, dtype=float)
    arr = np.broadcast_to(arr, (n,)) if arr.ndim == 0 or arr.size == 1 else arr
    if arr.shape != (n,):
        raise ValueError(
            f"{name} must be a scalar or have one entry per row ({n}), got {arr.shape}"
        )
    return np.ascontiguousarray(arr)


@dataclass(frozen=True)
class GaussianRandomizer:
    """``g + N(0, sigma_i^2 I)`` with analytic calibration (Balle & Wang 2018, Thm 8)."""

    clip: float
    name: ClassVar[str] = "gaussian"
    #: The randomizer family (shuffledp.families) this mechanism belongs to.
    family: ClassVar[str] = "gaussian_l2"
    pure: ClassVar[bool] = False
    citation: ClassVar[str] = "Balle, Wang, ICML 2018, Theorem 8 (analytic Gaussian mechanism)"

    def __post_init__(self) -> None:
        object.__setattr__(self, "clip", _check_clip(self.clip))

    @property
    def sensitivity(self) -> float:
        """L2 sensitivity under replacement of the clipped gradient: 2C."""
        return 2.0 * self.clip

    def local_mu(self, eps: ArrayLike, delta: ArrayLike) -> NDArray[np.float64]:
        """mu_i with Delta/sigma_i = mu_i: the user's report is exactly mu_i-GDP."""
        e = np.atleast_1d(as_real_array(eps, "eps"))
        d = as_real_array(delta, "delta")
        try:
            d = np.broadcast_to(d, e.shape)
        except ValueError:
            raise ValueError(f"delta must be a scalar or have one entry per eps ({e.size}), got "
                             f"shape {d.shape}") from None
        bad = (d <= 0) | (d >= 1) | ~np.isfinite(d)
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            raise ValueError("delta must be in (0, 1) for the Gaussian randomizer, got "
                             f"delta[{i}] = {float(d.flat[i])!r}")
        bad = ~np.isfinite(e) | (e < 0) | (e > EPS_LOCAL_MAX)
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"eps must be finite and in [0, {EPS_LOCAL_MAX:g}], got "
                             f"eps[{i}] = {float(e[i])!r}")
        # One calibration for the whole project: the vectorised Balle-Wang root search of
        # shuffledp.mechanisms (sigma rounded up, so mu = 1/sigma at sensitivity 1 rounds down).
        return 1.0 / analytic_gaussian_sigma(e, d, sensitivity=1.0)

    def sigma(self, eps: ArrayLike, delta: ArrayLike) -> NDArray[np.float64]:
        """Per-user noise standard deviation sigma_i = 2C / mu_i."""
        return self.sensitivity / self.local_mu(eps, delta)

    def randomize(
        self,
        g: torch.Tensor,
        *,
        eps: torch.Tensor | ArrayLike,
        delta: torch.Tensor | ArrayLike,
        generator: torch.Generator,
    ) -> torch.Tensor:
        """Reports ``g_i + sigma_i N(0, I)``; ``g`` must already be clipped to ``clip``."""
        _check_rows(g, "g")
        generator = _check_generator(generator)
        n = g.shape[0]
        sig = self.sigma(_as_rows(eps, n, "eps"), _as_rows(delta, n, "delta"))
        noise = torch.randn(g.shape, generator=generator, dtype=g.dtype)
        return noise.mul_(_rounded_up(sig, g.dtype).unsqueeze(1)).add_(g)


@dataclass(frozen=True)
class DuchiRandomizer:
    """Duchi, Jordan, Wainwright (2018) L2-ball mechanism: pure eps-LDP, unbiased."""

    clip: float
    name: ClassVar[str] = "duchi"
    #: The randomizer family (shuffledp.families) this mechanism belongs to.
    family: ClassVar[str] = "duchi_l2"
    pure: ClassVar[bool] = True
    citation: ClassVar[str] = "Duchi, Jordan, Wainwright, JASA 2018, Sec. 4.2.3 (L2 ball)"

    def __post_init__(self) -> None:
        object.__setattr__(self, "clip", _check_clip(self.clip))

    @property
    def sensitivity(self) -> float:
        """Inputs lie in the ball of radius C; pure LDP holds for any two of them."""
        return 2.0 * self.clip

    def radius(self, *, eps: float | NDArray[np.float64], d: int) -> NDArray | float:
        """B = C (e^eps+1)/(e^eps-1) sqrt(pi) Gamma((d+1)/2)/Gamma(d/2) (norm of a report)."""
        e = as_real_array(eps, "eps")
        bad = ~np.isfinite(e) | (e <= 0) | (e > EPS_LOCAL_MAX)
        if np.any(bad):
            first = float(e.flat[int(np.flatnonzero(bad)[0])])
            raise ValueError(f"eps must be finite and in (0, {EPS_LOCAL_MAX:g}] for the Duchi "
                             f"randomizer, got {first!r}")
        d = check_int(d, "d", low=1)
        geo = math.exp(0.5 * math.log(math.pi) + math.lgamma((d + 1) / 2) - math.lgamma(d / 2))
        out = self.clip / np.tanh(e / 2.0) * geo  # (e^eps+1)/(e^eps-1) = coth(eps/2)
        return float(out) if out.ndim == 0 else out

    def randomize(
        self,
        g: torch.Tensor,
        *,
        eps: torch.Tensor | ArrayLike,
        generator: torch.Generator,
        delta: torch.Tensor | ArrayLike | None = None,
    ) -> torch.Tensor:
        """Reports ``B_i z_i`` (see the module docstring); ``g`` must be clipped to ``clip``.

        ``delta`` is ignored (pure LDP) and accepted for a common call signature.
        """
        _check_rows(g, "g")
        generator = _check_generator(generator)
        n, d = g.shape
        e = _as_rows(eps, n, "eps")
        big_b = torch.as_tensor(np.atleast_1d(self.radius(eps=e, d=d)), dtype=g.dtype)
        return _cap_reports(g, e, big_b, self.clip, generator)


def _cap_reports(g: torch.Tensor, e: NDArray[np.float64], big_b: torch.Tensor, clip: float,
                 generator: torch.Generator) -> torch.Tensor:
    """Duchi et al.'s cap draw (module docstring) for rows ``g`` (clipped to ``clip``) at the
    budgets ``e``, on spheres of radii ``big_b`` (one per row, or one for all)."""
    n, d = g.shape
    norms = g.norm(dim=1)
    p_plus = torch.clamp(0.5 + norms / (2.0 * clip), 0.0, 1.0)
    s = torch.where(torch.rand(n, generator=generator, dtype=g.dtype) < p_plus, 1.0, -1.0)
    z = torch.randn(g.shape, generator=generator, dtype=g.dtype)
    z.div_(z.norm(dim=1, keepdim=True))
    # sign <z, v> with v = s u, u = g/||g||; in place, no (n, d) temporaries.
    dots = torch.einsum("ij,ij->i", z, g)
    zero = norms <= 0
    if bool(zero.any()):  # x = 0: u is a uniformly random direction
        w = torch.randn((int(zero.sum()), d), generator=generator, dtype=g.dtype)
        dots[zero] = torch.einsum("ij,ij->i", z[zero], w)
    side = torch.sign(dots) * s
    side = torch.where(side == 0, 1.0, side)
    # the opposite hemisphere w.p. 1/(1 + e^eps).  The draw is compared with this minority
    # probability, not with e^eps/(1 + e^eps), which rounds to 1 in float32 above eps ~ 17
    # (the report would then be deterministic, not eps-LDP): u < m happens with probability
    # >= m on the grid of torch.rand, which moves both sides towards 1/2.
    other = torch.as_tensor(1.0 / (1.0 + np.exp(e)), dtype=g.dtype)
    other_side = torch.rand(n, generator=generator, dtype=g.dtype) < other
    flip = torch.where(other_side, -side, side)  # sign(<z, v>) = +1 unless other_side
    return z.mul_((flip * big_b).unsqueeze(1))


def reference_eps(eps: ArrayLike) -> float:
    """The budget whose signal factor is the mean one: ``tanh(e/2) = mean_i tanh(eps_i/2)``
    (:class:`DuchiSphereRandomizer`, whose reports then have signal weights of mean 1)."""
    e = np.atleast_1d(as_real_array(eps, "eps"))
    bad = ~np.isfinite(e) | (e <= 0) | (e > EPS_LOCAL_MAX)
    if e.size == 0 or np.any(bad):
        first = float(e[np.flatnonzero(bad)[0]]) if e.size else float("nan")
        raise ValueError(f"eps must be finite and in (0, {EPS_LOCAL_MAX:g}] for the "
                         f"duchi_sphere randomizer, got {first!r}")
    return float(2.0 * np.arctanh(min(float(np.mean(np.tanh(e / 2.0))), 1.0 - 1e-16)))


@dataclass(frozen=True)
class DuchiSphereRandomizer:
    """Duchi et al.'s L2-ball mechanism on one sphere for every budget (docs/theory.md 15.5).

    The same cap draw as :class:`DuchiRandomizer` (the hemisphere facing the randomized
    direction with probability ``pi_i = e^{eps_i}/(1+e^{eps_i})``, so each report is pure
    ``eps_i``-LDP), but every user reports on the sphere of the one radius ``B(e_ref)`` with
    ``tanh(e_ref/2) = mean_i tanh(eps_i/2)`` (:func:`reference_eps` of the round's budgets),
    instead of ``B(eps_i)``.  So ``E[report_i] = w_i x_i`` with the *signal weight*
    ``w_i = tanh(eps_i/2) / tanh(e_ref/2)`` (mean 1): the server's mean of the reports is an
    unbiased estimate of the ``w``-weighted mean of the clipped gradients (the weights depend
    on the public budgets only).  Its noise, ``B(e_ref)^2 / n`` per coordinate sum, is at most
    the per-budget radii's ``mean_i B(eps_i)^2 / n`` (Jensen's inequality for the convex
    ``1/t^2``).

    Why: the report laws of all users now share the uniform law on the common sphere as a
    blanket, each with mass ``2/(1+e^{eps_j})`` whatever its budget, so every user hides every
    victim; the shuffled round is bounded by the binary randomized response blanket pair of
    the same budgets (Lemma 16, docs/theory.md 15.5), per victim tier.

    >>> import torch
    >>> r = DuchiSphereRandomizer(clip=1.0)
    >>> g = torch.Generator().manual_seed(0)
    >>> out = r.randomize(torch.zeros(3, 2), eps=[0.5, 1.0, 2.0], generator=g)
    >>> bool(torch.allclose(out.norm(dim=1), out.norm(dim=1)[0]))
    True
    """

    clip: float
    name: ClassVar[str] = "duchi_sphere"
    #: The randomizer family (shuffledp.families) this mechanism belongs to.
    family: ClassVar[str] = "duchi_sphere"
    pure: ClassVar[bool] = True
    #: Reports of every budget share one blanket: the accounting amplifies across tiers.
    cross_tier: ClassVar[bool] = True
    citation: ClassVar[str] = ("Duchi, Jordan, Wainwright, JASA 2018, Sec. 4.2.3 (L2 ball), "
                               "on one common sphere (docs/theory.md 15.5)")

    def __post_init__(self) -> None:
        object.__setattr__(self, "clip", _check_clip(self.clip))

    @property
    def sensitivity(self) -> float:
        """Inputs lie in the ball of radius C; pure LDP holds for any two of them."""
        return 2.0 * self.clip

    def radius(self, *, eps: ArrayLike, d: int) -> float:
        """The common radius ``B(e_ref)`` for the budgets ``eps`` of the round."""
        return float(DuchiRandomizer(clip=self.clip).radius(eps=reference_eps(eps), d=d))

    def signal_weights(self, eps: ArrayLike, reference: ArrayLike | None = None
                       ) -> NDArray[np.float64]:
        """``w_i = tanh(eps_i/2) / tanh(e_ref/2)``: ``E[report_i] = w_i x_i``; ``e_ref`` of
        ``reference`` (the whole round's budgets; default ``eps``)."""
        e = np.atleast_1d(as_real_array(eps, "eps"))
        ref = reference_eps(e if reference is None else reference)
        reference_eps(e)  # checks every entry
        return np.tanh(e / 2.0) / math.tanh(ref / 2.0)

    def randomize(
        self,
        g: torch.Tensor,
        *,
        eps: torch.Tensor | ArrayLike,
        generator: torch.Generator,
        delta: torch.Tensor | ArrayLike | None = None,
        reference: torch.Tensor | ArrayLike | None = None,
    ) -> torch.Tensor:
        """Reports on the common sphere; ``g`` must be clipped to ``clip``.  ``reference``:
        the budgets of the whole round, which set the radius (default: ``eps``, right when
        ``g`` holds every user; a caller randomizing in chunks passes all budgets).
        ``delta`` is ignored (pure LDP)."""
        _check_rows(g, "g")
        generator = _check_generator(generator)
        n, d = g.shape
        e = _as_rows(eps, n, "eps")
        ref = e if reference is None else np.atleast_1d(np.asarray(
            reference.cpu() if isinstance(reference, torch.Tensor) else reference, dtype=float))
        big_b = torch.as_tensor(self.radius(eps=ref, d=d), dtype=g.dtype)
        reference_eps(e)  # every budget of the chunk in range
        return _cap_reports(g, e, big_b, self.clip, generator)


@dataclass(frozen=True)
class GaussianSharedRandomizer(GaussianRandomizer):
    """The Gaussian randomizer with one noise scale for every budget: ``w_i g_i +
    sigma_ref N(0, I)`` with ``w_i = sigma_ref / sigma_i`` (docs/theory.md 15.7 for means;
    the SGD accounting in 14, "Shared noise").

    ``sigma_i`` is :class:`GaussianRandomizer`'s (the analytic calibration of (eps_i, delta_i)
    at sensitivity 2C) and the report is that randomizer's ``g_i + sigma_i N(0, I)`` times the
    public constant ``sigma_ref / sigma_i``: (eps_i, delta_i)-LDP, and ``mu_i``-GDP as before.
    ``sigma_ref = 1 / mean_i(1 / sigma_i)`` over the round's budgets (``reference``), so the
    signal weights ``w_i`` have mean 1: the server's mean of the reports is an unbiased
    estimate of the ``w``-weighted mean of the clipped gradients (larger budgets weigh more),
    with noise variance ``sigma_ref^2 / n`` per coordinate, at most the per-budget
    randomizer's ``mean(sigma_i^2) / n`` (Jensen, twice).

    Why: in the units of a victim of scale sigma_v, a user with ``sigma_j >= sigma_v`` (a
    budget at most the victim's, same delta) reports ``(sigma_v / sigma_j) g_j + sigma_v
    N(0, I)``: the victim's own randomizer at an input of the ball.  So the victims of a tier
    are amplified by every user of a tier below it too (nested pools, Lemma 10), where the
    per-budget randomizer's are amplified by their own tier only.

    >>> import torch
    >>> r = GaussianSharedRandomizer(clip=1.0)
    >>> w = r.signal_weights([0.5, 1.0, 2.0], [1e-6] * 3)
    >>> bool(abs(w.mean() - 1.0) < 1e-12 and w[0] < w[1] < w[2])
    True
    """

    name: ClassVar[str] = "gaussian_shared"
    #: A tier's clone pool holds every user whose scale sigma_j is at least its own.
    nested_pools: ClassVar[bool] = True
    citation: ClassVar[str] = ("Balle, Wang, ICML 2018, Theorem 8, the report rescaled to one "
                               "noise scale (docs/theory.md 14)")

    def reference_sigma(self, eps: ArrayLike, delta: ArrayLike) -> float:
        """``sigma_ref = 1 / mean_i(1 / sigma_i)`` of the round's budgets."""
        return float(1.0 / np.mean(1.0 / self.sigma(eps, delta)))

    def signal_weights(self, eps: ArrayLike, delta: ArrayLike,
                       reference: tuple[ArrayLike, ArrayLike] | None = None
                       ) -> NDArray[np.float64]:
        """``w_i = sigma_ref / sigma_i``; ``reference`` = (eps, delta) of the whole round
        (default: these)."""
        ref = self.reference_sigma(*(reference if reference is not None else (eps, delta)))
        return ref / self.sigma(eps, delta)

    def randomize(
        self,
        g: torch.Tensor,
        *,
        eps: torch.Tensor | ArrayLike,
        delta: torch.Tensor | ArrayLike,
        generator: torch.Generator,
        reference: tuple[ArrayLike, ArrayLike] | None = None,
    ) -> torch.Tensor:
        """Reports ``w_i g_i + sigma_ref N(0, I)``; ``g`` must be clipped to ``clip``.
        ``reference``: (eps, delta) of every user of the round, which set ``sigma_ref``
        (default: these rows, right when ``g`` holds every user)."""
        _check_rows(g, "g")
        generator = _check_generator(generator)
        n = g.shape[0]
        e, d = _as_rows(eps, n, "eps"), _as_rows(delta, n, "delta")
        sig = self.sigma(e, d)
        ref = self.reference_sigma(*(reference if reference is not None else (e, d)))
        # report_i = (ref / sigma_i) (g_i + sigma_i z_i) = w_i g_i + ref z_i, with sigma_i
        # rounded up as in GaussianRandomizer (the factor is public: post-processing)
        sig_t = _rounded_up(sig, g.dtype)
        noise = torch.randn(g.shape, generator=generator, dtype=g.dtype)
        report = noise.mul_(sig_t.unsqueeze(1)).add_(g)
        return report.mul_((ref / sig_t.to(torch.float64)).to(g.dtype).unsqueeze(1))


def nested_pool_sizes(mu: ArrayLike, counts: ArrayLike) -> NDArray[np.int64]:
    """Pool size of each tier of :class:`GaussianSharedRandomizer` (docs/theory.md 14,
    "Shared noise"): the users of every tier whose ``mu_j = 2C / sigma_j`` is at most the
    tier's own (their scale is at least the victim's, so they run the victim's randomizer at
    an input of the ball), the tier itself included.

    >>> nested_pool_sizes([0.2, 0.1, 0.3], [5, 7, 2]).tolist()
    [12, 7, 14]
    """
    m = np.asarray(mu, dtype=np.float64)
    c = np.asarray(counts, dtype=np.int64)
    order = np.argsort(m, kind="stable")
    cum = np.cumsum(c[order])
    last = np.searchsorted(m[order], m[order], side="right") - 1  # ties share one pool
    out = np.empty_like(c)
    out[order] = cum[last]
    return out


#: Randomizers by config name.
RANDOMIZERS: dict[str, type] = {"gaussian": GaussianRandomizer, "duchi": DuchiRandomizer,
                                "duchi_sphere": DuchiSphereRandomizer,
                                "gaussian_shared": GaussianSharedRandomizer}


def make_randomizer(name: str, *, clip: float
                    ) -> GaussianRandomizer | DuchiRandomizer | DuchiSphereRandomizer:
    """The randomizer registered as ``name`` with clipping norm ``clip``."""
    check_str(name, "name")
    try:
        cls = RANDOMIZERS[name]
    except KeyError:
        raise ValueError(
            f"randomizer must be one of {sorted(RANDOMIZERS)}, got {short_repr(name)}"
        ) from None
    return cls(clip=clip)
