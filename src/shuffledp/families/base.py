"""The abstract randomizer family: what every family declares and computes.

A shuffled protocol with personalized budgets is described by a *family* F (which mechanism
every user runs) and a :class:`~shuffledp.budgets.BudgetProfile` (user i runs F with budget
eps_i).  A family object holds everything the project knows about F, so a bound asks the
family instead of branching on its name:

* what it is: ``name``, ``pure`` (pure eps-LDP), :attr:`Family.spec`, ``description``;
* the clone mass ``r(eps_v, eps_j)`` of the general clone reduction (docs/theory.md,
  "The general clone reduction" and section 6): the largest r with

      R_j(x)(y) >= (r / 2) (P0(y) + P1(y))   for every input x of user j and every output y,

  for every input pair (x^0, x^1) of the victim v, P_b = R_v(x^b)
  (:meth:`Family.clone_mass`), and how it varies with the victim's budget
  (``victim_order``), which gives a lower bound over a range of victims
  (:meth:`Family.group_clone_mass`);
* its (p, beta, q) variation-ratio row (Wang et al., PVLDB 2024, arXiv 2304.05007, Section 4;
  :meth:`Family.variation_ratio`);
* for the mechanism-aware clone reduction (``clones`` with ``mechanism=F``, docs/theory.md
  4.1): whether it applies (``aware``), whether users can be binned (``binnable``), the pool
  masses of a victim group (:meth:`Family.pool_masses`) and, for families whose victim's tails
  can be cut (``cuts_tails``), the cut (:meth:`Family.tail_cut`);
* for ``window_lower`` (docs/theory.md 13): the window masses of every user
  (:meth:`Family.cell_masses`) and the grid of dataset pairs and windows
  (:meth:`Family.window_configs`).

Methods a family does not support raise an error naming the family (``ValueError``, or
:class:`~shuffledp.errors.ParameterRegimeError` where the bound is "not applicable"), and
:meth:`Family.provides` says which ones it supports.

A family is a frozen dataclass; ``k`` (categories) is its only field, set for the families
that need it (``needs_k``: k-RR, OUE) and ``None`` otherwise.  Families are registered by
name (:func:`shuffledp.families.registry.register_family`) and looked up by spec string
(``"krr:10"``) with :func:`shuffledp.families.get_family`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from shuffledp._lazy import lazy_module
from shuffledp.errors import ParameterRegimeError, short_repr

special = lazy_module("scipy.special")

__all__ = [
    "Family",
    "VariationRatio",
    "VictimRange",
    "UserClasses",
    "VICTIM_ORDERS",
    "MAX_DISTINCT_GENERAL",
    "WANG",
    "vr_general",
    "vr_half_exponent",
]

#: How ``clone_mass(eps_v, eps_j)`` varies with the victim's budget eps_v at fixed eps_j:
#: ``constant``; ``decreasing`` (non-increasing); ``zero_below`` (0 for eps_v < eps_j, then
#: non-increasing); ``equal_only`` (nonzero only when eps_v = eps_j); ``general`` (not
#: monotone: checked on every victim budget); ``zero`` (no clone mass: not pure).
VICTIM_ORDERS = ("constant", "decreasing", "zero_below", "equal_only", "general", "zero")
#: Largest number of distinct budgets for the full victim-by-user check of a family whose
#: clone mass is not monotone in the victim's budget (OUE).
MAX_DISTINCT_GENERAL = 2000


class VictimRange(Protocol):
    """A group of victims as the families see it (``clones``' victim groups): the range of
    their budgets, their largest delta, and (noise-scaled families) the range of their noise
    scales."""

    eps_lo: float
    eps_hi: float
    delta_hi: float
    sigma_lo: float
    sigma_hi: float


class UserClasses(Protocol):
    """The user classes (bins) of a mechanism-aware pool: per class, the budgets of its first
    and last tier (``eps_a``, ``eps_b``), its largest delta, whether each class is one tier
    (``exact``), and (noise-scaled families) bounds on its noise scales and ``log_kappa``."""

    counts: NDArray[np.int64]
    eps_a: NDArray[np.float64]
    eps_b: NDArray[np.float64]
    delta: NDArray[np.float64]
    edges: NDArray[np.int64]
    exact: bool
    sigma_a: NDArray[np.float64] | None
    sigma_b: NDArray[np.float64] | None
    log_kappa: NDArray[np.float64] | None


@dataclass(frozen=True)
class Family:
    """A family of local randomizers indexed by the budget (see the module docstring).

    Subclasses set the class attributes and override what they support; ``k`` is the number
    of categories of the families with ``needs_k`` (``None`` for the others).
    """

    k: int | None = None

    #: The family's name (the spec without ``:k``).
    name: ClassVar[str] = ""
    #: One line describing the family (``description`` adds k).
    title: ClassVar[str] = ""
    #: True for pure eps-LDP families.
    pure: ClassVar[bool] = True
    #: How the clone mass varies with the victim's budget (:data:`VICTIM_ORDERS`).
    victim_order: ClassVar[str] = "zero"
    #: The family takes a number of categories k (spec ``name:k``).
    needs_k: ClassVar[bool] = False
    #: Smallest accepted k (``needs_k`` families).
    k_min: ClassVar[int] = 2
    #: Largest accepted k: beyond 10^12 double precision loses k's last digits in the
    #: families' formulas (k-RR's e^eps + k - 1 at k = 10^15 already fails).
    k_max: ClassVar[int] = 10**12
    #: The mechanism-aware clone reduction (``clones`` with ``mechanism``) applies.
    aware: ClassVar[bool] = False
    #: Above ``clones``' bin threshold, ranges of user budgets may be bounded below by their
    #: two ends (the log-mass at a fixed victim is concave or monotone in the user's budget,
    #: docs/theory.md 4.1, "Bins"; a new family needs its own argument before it joins).
    binnable: ClassVar[bool] = False
    #: The victim's tails can be cut (the cut mass joins the victim's delta, Lemmas 7, 8).
    cuts_tails: ClassVar[bool] = False
    #: The family's masses depend on a noise scale calibrated to (eps_i, delta_i) (the
    #: Gaussian): victims are ordered by decreasing scale.
    noise_scaled: ClassVar[bool] = False
    #: Every user needs delta_i > 0 (an approximate-LDP mechanism calibrated to
    #: (eps_i, delta_i)): bounds refuse profiles with a delta_i = 0.
    needs_delta: ClassVar[bool] = False
    #: Approximate LDP of the mixture form (1 - delta_i) R_pure + delta_i leak with one
    #: eps-LDP randomizer R_pure per budget (docs/theory.md, Lemmas 5, 6: the Gaussian).
    mixture_form: ClassVar[bool] = False
    #: Every user needs eps_i > 0: the report law has a noise scale proportional to 1/eps_i,
    #: so eps_i = 0 has none (Laplace, piecewise).  Every bound evaluated with this family as
    #: its ``mechanism`` raises :class:`~shuffledp.errors.ParameterRegimeError` on a profile
    #: with an eps_i = 0 (:meth:`check_budgets`, called by ``Bound.prepare``).
    positive_budgets: ClassVar[bool] = False
    #: Why (``needs_delta`` families), as the bounds' messages say it.
    needs_delta_reason: ClassVar[str] = ""
    #: The family's name in prose ("Gaussian"), for messages.
    display_name: ClassVar[str] = ""
    #: ``window_lower``: the users' window masses depend on delta_i (else on eps_i only).
    window_delta: ClassVar[bool] = False
    #: The ``blanket`` bound's victim groups: ``"ranges"`` (a range of budgets per group, the
    #: family's cases cover every victim in it), ``"tiers"`` (one budget per group) or
    #: ``"tiers_then_ranges"`` (one budget per group up to ``MAX_TIER_GROUPS`` tiers, where it
    #: is tighter, ranges beyond).
    blanket_groups: ClassVar[str] = "ranges"
    #: ``blanket``: the group of the largest budgets is usually the worst (the masses do not
    #: depend on the victim, and a smaller budget is a post-processing of the largest,
    #: docs/theory.md Lemma 15), so it is evaluated first; only the speed depends on it.
    blanket_top_first: ClassVar[bool] = False
    #: ``blanket``: after a group check well below delta, the next groups whose budgets span
    #: at most this ratio are checked as one group first (``bound._union_run``; 1: never).
    #: Time only.  Measured (10^6 users in U[0.5, 2], delta = 1e-6, one core, 1 -> 1.5):
    #: Gaussian 4.4 -> 3.1 s, binary RR 0.59 -> 0.52, 10-RR 0.64 -> 0.54, shared-noise
    #: Laplace 1.36 -> 1.04, piecewise 0.53 -> 0.46; Laplace and OUE, whose narrow groups are
    #: the point (ratio cuts, levels), lose (2.7 -> 3.0, 2.5 -> 2.8) and keep 1.
    blanket_union_ratio: ClassVar[float] = 1.5
    #: ``blanket``: victim groups also span at most the budget ratio ``GROUP_RATIO`` (for the
    #: families whose users cover only the victims above their own budget, where a wide
    #: group loses its own users' masses); only the values and the time depend on it.
    blanket_ratio_groups: ClassVar[bool] = False
    #: ... among the lowest this share of the users (the cuts cost time where the family's
    #: law of l has many cells, as Laplace's; piecewise's has three atoms).
    blanket_ratio_share: ClassVar[float] = 0.25
    #: ``blanket``: victim groups whose largest budget is below this take the victims' local
    #: guarantee alone (the family's blanket numerics need the scales it implies: Laplace's
    #: 2 / eps overflows the cells' moments near eps = 1e-200).
    blanket_eps_floor: ClassVar[float] = 0.0
    #: ``blanket``: cases of many lattice points are screened on a coarser lattice before their
    #: exact evaluation (``bound.SCREEN_COARSEN``): worth it where many cases of a choice are
    #: evaluated but few set its maximum (the Gaussian blankets' half-width grid: 0.68-0.73 of
    #: the time at n = 300 and 10^4, 1.01 at 10^6); Laplace's cases mostly set it (1.13 of
    #: the time at 10^6 users).  Time only.
    blanket_screen: ClassVar[bool] = False

    def __post_init__(self) -> None:
        if self.needs_k:
            if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)):
                raise TypeError(f"k must be an integer for {self.name}, got {short_repr(self.k)}")
            if not self.k_min <= self.k <= self.k_max:
                raise ValueError(f"k (categories) must be in [{self.k_min}, {self.k_max:.0e}] "
                                 f"for {self.name}, got {self.k}")
            object.__setattr__(self, "k", int(self.k))
        elif self.k is not None:
            raise ValueError(f"{self.name} takes no k, got k = {short_repr(self.k)}")

    def check_budgets(self, eps_min: float) -> None:
        """Raise :class:`~shuffledp.errors.ParameterRegimeError` when the family has no report
        law at the profile's smallest budget ``eps_min`` (:attr:`positive_budgets`)."""
        if self.positive_budgets and not eps_min > 0.0:
            raise ParameterRegimeError(
                f"the {self.spec} randomizer needs every eps_i > 0 (its noise scale is "
                f"proportional to 1/eps_i), got min eps_i = {eps_min:g}"
            )

    # ------------------------------------------------------------------ description
    @property
    def family(self) -> str:
        """The family's name (``"krr"`` for ``krr:10``)."""
        return self.name

    @property
    def spec(self) -> str:
        """The string form, e.g. ``"krr:10"``."""
        return f"{self.name}:{self.k}" if self.k is not None else self.name

    @property
    def description(self) -> str:
        return self.title + (f" (k = {self.k})" if self.k is not None else "")

    def __str__(self) -> str:
        return self.spec

    def includes(self, other: Family) -> bool:
        """True when every protocol of ``other`` is one of this family's protocols with the
        same budgets (so an exact curve of ``other`` is a lower bound for this family)."""
        return self == other

    def profile_at_most(self, other: Family) -> bool:
        """True when the shuffled privacy profile of this family's protocols is at most
        ``other``'s with the same budgets (so ``other``'s exact parameters bound it): the same
        family by default; one-bit Duchi is at most binary RR (docs/theory.md 6.3)."""
        return self == other

    @classmethod
    def describes(cls, family: Family) -> bool:
        """Whether a statement made for this family (every k) speaks about ``family``'s
        protocols: the same family, or one of its special cases (binary RR is one-bit Duchi's
        and 2-RR's; ``any`` describes every family)."""
        return isinstance(family, cls)

    @classmethod
    def provides(cls, method: str) -> bool:
        """Whether the family implements the optional method ``method`` (for example
        ``"cell_masses"``): overridden from :class:`Family`."""
        if not hasattr(Family, method):
            raise ValueError(f"method must be a method of Family, got {short_repr(method)}")
        return getattr(cls, method) is not getattr(Family, method)

    # ------------------------------------------------------------------ clone mass
    def clone_mass(self, eps_victim: ArrayLike, eps_user: ArrayLike) -> NDArray[np.float64]:
        """The largest r with R_j(x) >= (r/2)(P0 + P1) for every input x of user j (budget
        eps_user) and every input pair of the victim (budget eps_victim); vectorised."""
        a = np.asarray(eps_victim, dtype=np.float64)
        b = np.asarray(eps_user, dtype=np.float64)
        a, b = np.broadcast_arrays(a, b)
        return np.asarray(self._clone_mass(a, b), dtype=np.float64)

    def _clone_mass(self, a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
        """The clone mass on broadcast arrays (victim a, user b); no clones by default."""
        return np.zeros(a.shape)

    def group_clone_mass(self, eps_lo: float, eps_hi: float, eps_user: ArrayLike, *,
                         eps_user_hi: ArrayLike | None = None) -> NDArray[np.float64]:
        """A lower bound on ``clone_mass(eps_v, eps_j)`` over every victim budget eps_v in
        ``[eps_lo, eps_hi]``, for each user budget eps_j of ``eps_user`` (pure families).

        Uses ``victim_order``: constant; non-increasing (the victim at ``eps_hi``); zero
        below eps_j, then non-increasing (0 when eps_j > eps_lo, else the victim at
        ``eps_hi``); equal budgets only (nonzero only when ``eps_lo == eps_hi == eps_j``).
        Families whose mass is not monotone override this (OUE: a box bound, with
        ``eps_user_hi`` also over a range of user budgets).  docs/theory.md, "Mechanism-aware
        clones" and 6.6.
        """
        lo, hi = float(eps_lo), float(eps_hi)
        if not (0.0 <= lo <= hi):
            raise ValueError(f"need 0 <= eps_lo <= eps_hi, got eps_lo = {lo!r}, eps_hi = {hi!r}")
        b = np.asarray(eps_user, dtype=np.float64)
        if eps_user_hi is not None:
            raise ValueError(f"{self.spec}: eps_user_hi (a range of user budgets) is "
                             "supported for oue only")
        how = self.victim_order
        if how == "constant":
            return self.clone_mass(b, b)
        if how == "decreasing":
            return self.clone_mass(np.full(b.shape, hi), b)
        if how == "zero_below":
            return np.where(b <= lo, self.clone_mass(np.full(b.shape, hi), b), 0.0)
        if how == "equal_only":
            same = (lo == hi) & (b == lo)
            return np.where(same, self.clone_mass(b, b), 0.0)
        raise ValueError(
            f"{self.spec}: the clone mass is not monotone in the victim's budget (or the family "
            "is not pure); evaluate clone_mass on every victim budget instead"
        )

    # ------------------------------------------------------------------ variation ratio
    def variation_ratio(self, eps0: float) -> VariationRatio | None:
        """The (p, beta, q)-variation-ratio parameters of this family at budget ``eps0``
        (every user runs it with ``eps0``), or ``None`` when the family is not pure LDP.

        Wang et al., PVLDB 2024, arXiv 2304.05007: a randomizer is (p, beta, q)-variation-ratio
        when, for the victim's input pair, ``P0 <= p P1``, ``P1 <= p P0`` and
        ``TV(P0, P1) <= beta``, and ``R(x)(y) <= q R(x')(y)`` for all inputs (their parameter
        table; each row derived in docs/theory.md 11.3).  Declaring the parameters is not a
        claim that the variation-ratio pair bounds the shuffled protocol: that is proven only
        for rows with ``gamma == 0`` (the general row) and families that dominate the stronger
        clone mass; Wang et al.'s claim for ``gamma > 0`` is false (docs/theory.md 11.4).
        """
        eps0 = float(eps0)
        if not (math.isfinite(eps0) and eps0 >= 0.0):
            raise ValueError(f"eps0 must be finite and >= 0, got {eps0!r}")
        return self._variation_ratio(eps0)

    def _variation_ratio(self, eps0: float) -> VariationRatio | None:
        return None

    # ------------------------------------------------------------------ mechanism-aware
    def noise_scales(self, eps: NDArray[np.float64],
                     delta: NDArray[np.float64]) -> NDArray[np.float64]:
        """The users' noise scales (``noise_scaled`` families only)."""
        raise ValueError(f"{self.spec} has no noise scale")

    def log_kappa(self, sigma: NDArray[np.float64],
                  delta: NDArray[np.float64]) -> NDArray[np.float64]:
        """log of the share of a user's report that can hold clones (``noise_scaled``
        families only)."""
        raise ValueError(f"{self.spec} has no noise scale")

    def tail_cut(self, eta: float, group: VictimRange) -> tuple[float, float]:
        """``(T, tail)``: the cut ``|y| <= T`` of the group's victims and their largest mass
        beyond it, at most ``eta`` (``cuts_tails`` families only)."""
        raise ValueError(f"the victim's tails of {self.spec} cannot be cut")

    def pool_masses(self, group: VictimRange, users: UserClasses, eta: float, *,
                    victim_eps: NDArray[np.float64], own_bin: int | None
                    ) -> tuple[float, NDArray[np.float64]]:
        """``(delta_v, m)``: the victim group's delta (with the cut tail) and a lower bound
        on the clone mass of every user class against every victim of the group
        (docs/theory.md 4.1, Theorem 3), before ``clones`` rounds them down.

        Pure families: ``(1 - delta_j) r(eps_v, eps_j)`` from :meth:`group_clone_mass` at both
        ends of each class, and, when the mass is not monotone in the victim's budget
        (OUE), the minimum over the group's distinct victim budgets ``victim_eps`` (or the
        family's box bound when that is too large).  ``own_bin``: the class of the group's
        own tier when the group is one tier (else ``None``).  ``eta > 0`` (a tail cut) is
        for ``cuts_tails`` families only.
        """
        if eta > 0.0:
            raise ValueError(f"the victim's tails of {self.spec} cannot be cut, got "
                             f"eta = {eta!r}")
        return group.delta_hi, self._pure_pool_masses(group, users, victim_eps)

    def _pure_pool_masses(self, group: VictimRange, users: UserClasses,
                          victim_eps: NDArray[np.float64]) -> NDArray[np.float64]:
        if self.victim_order != "general":
            r = self.group_clone_mass(group.eps_lo, group.eps_hi, users.eps_a)
            if not users.exact:  # a range of users: its smaller end value
                r = np.minimum(r, self.group_clone_mass(group.eps_lo, group.eps_hi, users.eps_b))
        else:  # not monotone (OUE): every distinct victim budget of the group when
            # affordable, else the box bound over the group's victim budgets
            eps = users.eps_a
            if users.exact and victim_eps.size * eps.size <= MAX_DISTINCT_GENERAL**2:
                r = self.clone_mass(victim_eps[:, None], eps[None, :]).min(axis=0)
            else:  # the box over the group's victims and each class's users
                r = self.group_clone_mass(group.eps_lo, group.eps_hi, users.eps_a,
                                          eps_user_hi=users.eps_b)
        return (1.0 - users.delta) * r

    # ------------------------------------------------------------------ blanket
    def blanket_cases(self, eps: float, group: VictimRange, users: UserClasses) -> list[Any]:
        """The cases of the ``blanket`` bound (docs/theory.md 15) for the victims of ``group``
        against the user classes ``users``: a list of
        :class:`~shuffledp.families.blanket.BlanketCase` whose largest bound covers every
        victim of the group and every pair of its inputs (families with a blanket only)."""
        raise ParameterRegimeError(f"the blanket bound has no blanket for {self}")

    def blanket_two_region_cases(self, eps: float, group: VictimRange,
                                 users: UserClasses) -> list[Any]:
        """The cases of one more choice of the ``blanket`` bound, a two-region blanket
        (:class:`~shuffledp.families.blanket.TwoRegionCase`, docs/theory.md 15.4, "Two coverage
        regions"), for the families that have one; none by default."""
        return []

    def blanket_group_levels(self, eps: NDArray[np.float64]) -> NDArray[np.float64] | None:
        """``blanket``'s victim groups are also cut where the integer part of these levels
        (one per budget tier, in the tiers' order) moves, in place of the ratio cuts of
        ``blanket_ratio_groups``; None (the default) for no such scale.  Any partition of the
        victims is valid: only the values and the time depend on it."""
        return None

    # ------------------------------------------------------------------ window_lower
    def window_configs(self, eps_v: float, delta_v: float) -> list[Any]:
        """The grid of ``window_lower`` (victim inputs, others' input, windows, weights) for
        a victim with budget ``(eps_v, delta_v)`` (families with window masses only)."""
        raise ParameterRegimeError(f"window_lower has no window masses for {self}")

    def profile_windows(self, eps_v: float, delta_v: float,
                        eps_others: NDArray[np.float64]) -> list[Any]:
        """Configurations of ``window_lower`` that depend on the other users' budgets
        ``eps_others`` (added to :meth:`window_configs`); none by default."""
        return []

    def cell_masses(self, x: float, eps: NDArray[np.float64], delta: NDArray[np.float64],
                    window: Any) -> tuple[NDArray[np.float64], ...]:
        """``(a, o, b, ea, eo, eb)``: the masses of ``W_L``, of the rest and of ``W_R`` under
        ``R_j(x)`` for users with budgets ``eps`` (and ``delta``), vectorised over users, and
        bounds on their absolute floating-point errors (docs/theory.md 13.3)."""
        raise ValueError(f"window_lower has no window masses for {self}")


# --------------------------------------------------------------------------- variation ratio
@dataclass(frozen=True)
class VariationRatio:
    """(p, beta, q)-variation-ratio parameters of a randomizer at one budget (Wang et al.,
    PVLDB 2024, arXiv 2304.05007, Section 4; docs/theory.md 11).

    Stored in the forms the pair needs without cancellation: ``log_p`` = log p, ``log_q`` =
    log q (``log_q >= log_p``: for one randomizer q bounds every ratio, p only the victim's
    pair), ``beta``; ``alpha`` = beta / (p - 1) and ``gamma`` = 1 - alpha - p alpha (the
    victim's common share, ``>= 0``), both computed by the family in closed form.  Derived:
    ``r = alpha p / q`` (each other user's share of each of the victim's two parts) and
    ``r_complement`` = 1 - 2 r = gamma + beta + 2 alpha (1 - p/q) (a sum of non-negative
    terms, accurate).  ``source`` says where the row comes from.

    Code names -> paper: ``alpha`` = alpha, ``gamma`` = 1 - alpha - p alpha, ``r`` = r
    (their Lemma 4.4).

    >>> v = VariationRatio(log_p=0.0, log_q=0.0, beta=0.0, alpha=0.5, gamma=0.0, source="")
    >>> v.r, v.r_complement
    (0.5, 0.0)
    """

    log_p: float
    log_q: float
    beta: float
    alpha: float
    gamma: float
    source: str = ""

    def __post_init__(self) -> None:
        for name in ("log_p", "log_q", "beta", "alpha", "gamma"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)):
                raise TypeError(f"{name} must be a real number, got {short_repr(v)}")
            if not math.isfinite(float(v)) or float(v) < 0.0:
                raise ValueError(f"{name} must be finite and >= 0, got {v!r}")
            object.__setattr__(self, name, float(v))
        if self.log_p > 700.0:
            raise ValueError(f"log_p must be <= 700, got {self.log_p!r}")
        if self.log_q < self.log_p:
            raise ValueError(f"need log_q >= log_p (q bounds every ratio of the randomizer), "
                             f"got log_p = {self.log_p!r}, log_q = {self.log_q!r}")
        if self.beta > 1.0:
            raise ValueError(f"beta (a total variation) must be <= 1, got {self.beta!r}")
        total = self.alpha * (1.0 + math.exp(self.log_p)) + self.gamma
        if abs(total - 1.0) > 1e-12:
            raise ValueError(f"alpha (1 + p) + gamma must be 1, got {total!r}")
        if self.log_p > 0.0 and abs(self.alpha * math.expm1(self.log_p) - self.beta) > (
                1e-12 * max(self.beta, 1e-300)):
            raise ValueError(f"alpha must be beta / (p - 1), got alpha = {self.alpha!r}, "
                             f"beta = {self.beta!r}, p = exp({self.log_p!r})")

    @property
    def p(self) -> float:
        return math.exp(self.log_p)

    @property
    def q(self) -> float:
        return math.exp(self.log_q)

    @property
    def r(self) -> float:
        """Each other user's share of Q^0 (and of Q^1): alpha p / q (Wang et al.'s Lemma 4.4)."""
        return self.alpha * math.exp(self.log_p - self.log_q)

    @property
    def r_complement(self) -> float:
        """1 - 2 r = gamma + beta + 2 alpha (1 - p/q), without cancellation."""
        return self.gamma + self.beta - 2.0 * self.alpha * math.expm1(self.log_p - self.log_q)


#: The source line of the rows taken from Wang et al.'s parameter table.
WANG = "Wang et al., PVLDB 2024, arXiv 2304.05007, Section 4 parameter table"


def vr_general(eps0: float) -> VariationRatio:
    """Any eps0-LDP randomizer: p = q = e^eps0, beta = tanh(eps0/2) (the largest total
    variation of an eps0-DP pair), alpha = 1/(1 + e^eps0), gamma = 0."""
    return VariationRatio(eps0, eps0, math.tanh(eps0 / 2.0), float(special.expit(-eps0)), 0.0,
                          WANG + ", general mechanisms (= binary randomized response)")


def vr_half_exponent(eps0: float) -> VariationRatio:
    """Laplace on [-1, 1] with scale 2/eps0, and the piecewise mechanism: beta = 1 -
    e^{-eps0/2}, alpha = e^{-eps0/2}/(e^{eps0/2} + 1), gamma = (1 - e^{-eps0/2})/(e^{eps0/2} + 1)
    (docs/theory.md 11.3)."""
    h = eps0 / 2.0
    s = float(special.expit(-h))
    return VariationRatio(eps0, eps0, -math.expm1(-h), math.exp(-h) * s, -math.expm1(-h) * s,
                          WANG + " (Laplace, piecewise); rederived in docs/theory.md 11.3")
