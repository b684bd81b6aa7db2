"""The randomizer vocabulary: families of local randomizers indexed by the user's budget.

A shuffled protocol with personalized budgets is described by a *family* F (which mechanism
every user runs) and a :class:`~shuffledp.budgets.BudgetProfile` (user i runs F with budget
eps_i).  Whether a bound's guarantee holds for such a protocol depends on F: the clone
reduction behind ``clones``, ``fmt21_*``, ``fmt23_*`` and the generic privacy blanket needs
every user j to *dominate* a share of the victim v's report (docs/theory.md, "The general clone
reduction"):

    R_j(x)(y) >= (r / 2) (P0(y) + P1(y))   for every input x of user j and every output y,

for every input pair (x^0, x^1) of the victim, P_b = R_v(x^b).  :meth:`Randomizer.clone_mass`
returns the largest such r, ``r(eps_v, eps_j)``, derived per family in docs/theory.md
("Clone masses of the randomizers") and checked numerically in tests/test_randomizers.py
(exhaustive enumeration for the discrete families, dense grids for the continuous ones):

===========  ============================================================  ======================
family       r(eps_v, eps_j)                                               in eps_v (fixed eps_j)
===========  ============================================================  ======================
binary_rr    2 / (1 + e^{eps_j})                                           constant
krr:k        2 (e^{eps_v} + k - 1) / ((e^{eps_j} + k - 1)(e^{eps_v} + 1))  non-increasing
duchi        2 / (1 + e^{eps_j}) (one-bit Duchi = binary RR on a           constant
             randomized rounding: its profile is at most binary RR's)
laplace      (eps_j / eps_v) e^{-eps_j} if eps_j <= eps_v, else 0          0 below eps_j, then
                                                                           non-increasing
piecewise    p_low(eps_j) / p_high(eps_v) if eps_j <= eps_v, else 0        0 below eps_j, then
                                                                           non-increasing
oue:d        minimum over output patterns (see :func:`_oue_mass`)          not monotone
duchi_l2     e^{-eps} if eps_v = eps_j, else 0 (disjoint radii)            equal budgets only
gaussian     0 between pure pairs (not pure LDP); its mixture form         --
             and per-victim masses: clones' ``mechanism`` option
gaussian_l2  0 (the d-dimensional Gaussian of SGD; no mixture form         --
             established)
any          e^{-eps} if eps_v = eps_j, else 0 (one arbitrary              equal budgets only
             eps-LDP randomizer per budget, unrelated across budgets)
===========  ============================================================  ======================

Each pure family also declares its *variation-ratio* parameters (p, beta, q) of Wang et al.
(PVLDB 2024, arXiv 2304.05007, Definition of a (p, beta, q)-variation-ratio randomizer and the
parameter table of their Section 4; derivations in docs/theory.md, section 11):
:meth:`Randomizer.variation_ratio` returns a :class:`VariationRatio` or ``None`` (not pure).

Specs: a string (``"binary_rr"``, ``"krr:10"``, ``"oue:100"``, ``"laplace"``, ``"duchi"``,
``"piecewise"``, ``"gaussian"``, ``"gaussian_l2"``, ``"duchi_l2"``, ``"any"``; ``"krr:2"`` is
``"binary_rr"``),
a :class:`Randomizer`, or a mechanism of :mod:`shuffledp.mechanisms` / :mod:`shuffledp.sgd`
(class or instance; frequency oracles need their ``d``).

>>> r = get_randomizer("krr:3")
>>> r.spec, r.pure
('krr:3', True)
>>> round(float(r.clone_mass(1.0, 1.0)), 6) == round(2 / (1 + math.e), 6)
True
>>> domination(get_randomizer("binary_rr"), eps=[0.5, 2.0, 4.0], required=[0.03] * 3).holds
True
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from shuffledp._lazy import lazy_module
from shuffledp.caching import register_mapping
from shuffledp.errors import short_repr

special = lazy_module("scipy.special")

__all__ = [
    "FAMILIES",
    "Randomizer",
    "get_randomizer",
    "Domination",
    "domination",
    "budget_tiers",
    "MAX_DISTINCT_GENERAL",
    "VariationRatio",
]

#: family -> (pure, needs a parameter k, how r varies with the victim's budget, description)
FAMILIES: dict[str, tuple[bool, bool, str, str]] = {
    "binary_rr": (True, False, "constant", "binary randomized response (Warner 1965)"),
    "krr": (True, True, "decreasing", "k-ary randomized response (GRR), k categories"),
    "duchi": (True, False, "constant", "Duchi et al.'s one-bit mechanism for means"),
    "laplace": (True, False, "zero_below", "Laplace mechanism on [-1, 1], scale 2/eps"),
    "piecewise": (True, False, "zero_below", "Wang et al.'s piecewise mechanism (ICDE 2019)"),
    "oue": (True, True, "general", "optimized unary encoding, d categories"),
    "duchi_l2": (True, False, "equal_only", "Duchi et al.'s L2-ball randomizer (SGD)"),
    "gaussian": (False, False, "zero", "Gaussian mechanism on [-1, 1] (approximate LDP)"),
    "gaussian_l2": (False, False, "zero",
                    "Gaussian randomizer of SGD, L2 ball in d dimensions (approximate LDP)"),
    "any": (True, False, "equal_only", "an arbitrary eps-LDP randomizer per budget"),
}
#: Largest number of distinct budgets for the full victim-by-user check of a family whose
#: clone mass is not monotone in the victim's budget (OUE).
MAX_DISTINCT_GENERAL = 2000
#: Relative slack of the domination comparisons (floating point of the closed forms).
_RTOL = 1e-12


@dataclass(frozen=True)
class Randomizer:
    """A family of local randomizers indexed by the budget (see the module docstring).

    ``family`` is a key of :data:`FAMILIES`; ``k`` the number of categories (``krr``, ``oue``).
    """

    family: str
    k: int | None = None

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(
                f"randomizer family must be one of {sorted(FAMILIES)}, got "
                f"{short_repr(self.family)}"
            )
        needs_k = FAMILIES[self.family][1]
        if needs_k:
            if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)):
                raise TypeError(f"k must be an integer for {self.family}, got {short_repr(self.k)}")
            if self.k < 2:
                raise ValueError(f"k (categories) must be >= 2 for {self.family}, got {self.k}")
            object.__setattr__(self, "k", int(self.k))
            if self.family == "krr" and self.k == 2:
                object.__setattr__(self, "family", "binary_rr")
                object.__setattr__(self, "k", None)
        elif self.k is not None:
            raise ValueError(f"{self.family} takes no k, got k = {short_repr(self.k)}")

    # ------------------------------------------------------------------ description
    @property
    def spec(self) -> str:
        """The string form, e.g. ``"krr:10"``."""
        return f"{self.family}:{self.k}" if self.k is not None else self.family

    @property
    def pure(self) -> bool:
        """True for pure eps-LDP families (all but ``gaussian`` and ``gaussian_l2``)."""
        return FAMILIES[self.family][0]

    @property
    def victim_order(self) -> str:
        """How ``clone_mass(eps_v, eps_j)`` varies with eps_v at fixed eps_j."""
        return FAMILIES[self.family][2]

    @property
    def description(self) -> str:
        return FAMILIES[self.family][3] + (f" (k = {self.k})" if self.k is not None else "")

    def __str__(self) -> str:
        return self.spec

    def includes(self, other: Randomizer) -> bool:
        """True when every protocol of ``other`` is one of this family's protocols with the
        same budgets (so an exact curve of ``other`` is a lower bound for this family):
        ``any`` includes every pure family, ``duchi`` includes ``binary_rr`` (inputs +-1)."""
        if self == other:
            return True
        if self.family == "any":
            return other.pure
        return self.family == "duchi" and other.family == "binary_rr"

    # ------------------------------------------------------------------ clone mass
    def clone_mass(self, eps_victim: ArrayLike, eps_user: ArrayLike) -> NDArray[np.float64]:
        """The largest r with R_j(x) >= (r/2)(P0 + P1) for every input x of user j (budget
        eps_user) and every input pair of the victim (budget eps_victim); vectorised.

        >>> float(get_randomizer("laplace").clone_mass(2.0, 0.5))  # (0.5/2) e^{-0.5}
        0.15163266492815836
        >>> float(get_randomizer("laplace").clone_mass(0.5, 2.0))  # lighter tails: none
        0.0
        """
        a = np.asarray(eps_victim, dtype=np.float64)
        b = np.asarray(eps_user, dtype=np.float64)
        a, b = np.broadcast_arrays(a, b)
        fam = self.family
        if fam in ("binary_rr", "duchi"):
            out = 2.0 * special.expit(-b)
        elif fam == "krr":
            k = float(self.k)  # type: ignore[arg-type]
            ea = np.exp(-a)
            out = 2.0 * (1.0 + (k - 1.0) * ea) / (1.0 + ea) / (np.exp(b) + k - 1.0)
        elif fam == "laplace":
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(a == b, 1.0, b / a)
            out = np.where(b <= a, ratio * np.exp(-b), 0.0)
        elif fam == "piecewise":
            out = np.where(b <= a, _piecewise_mass(a, b), 0.0)
        elif fam == "oue":
            out = _oue_mass(a, b, int(self.k))  # type: ignore[arg-type]
        elif fam in ("duchi_l2", "any"):
            out = np.where(a == b, np.exp(-b), 0.0)
        else:  # gaussian, gaussian_l2: not pure
            out = np.zeros(a.shape)
        return np.asarray(out, dtype=np.float64)


    def group_clone_mass(self, eps_lo: float, eps_hi: float, eps_user: ArrayLike, *,
                         eps_user_hi: ArrayLike | None = None) -> NDArray[np.float64]:
        """A lower bound on ``clone_mass(eps_v, eps_j)`` over every victim budget eps_v in
        ``[eps_lo, eps_hi]``, for each user budget eps_j of ``eps_user`` (pure families).

        Uses how the mass varies with the victim's budget (module docstring): constant;
        non-increasing (the victim at ``eps_hi``); zero below eps_j, then non-increasing (0 when
        eps_j > eps_lo, else the victim at ``eps_hi``); equal budgets only (nonzero only when
        ``eps_lo == eps_hi == eps_j``).  Not monotone (OUE): the box bound of
        :func:`_oue_box` (q_v at eps_lo, 1 - q_v at eps_hi), smaller than the minimum over
        the interval; with ``eps_user_hi`` also over every user budget in
        ``[eps_user, eps_user_hi]`` (OUE only).  docs/theory.md, "Mechanism-aware clones"
        and 6.6.

        >>> r = get_randomizer("laplace")
        >>> r.group_clone_mass(1.0, 2.0, [0.5, 1.5]).tolist() == [
        ...     float(r.clone_mass(2.0, 0.5)), 0.0]
        True
        """
        lo, hi = float(eps_lo), float(eps_hi)
        if not (0.0 <= lo <= hi):
            raise ValueError(f"need 0 <= eps_lo <= eps_hi, got eps_lo = {lo!r}, eps_hi = {hi!r}")
        b = np.asarray(eps_user, dtype=np.float64)
        how = self.victim_order
        if eps_user_hi is not None and not (how == "general" and self.family == "oue"):
            raise ValueError(f"{self.spec}: eps_user_hi (a range of user budgets) is "
                             "supported for oue only")
        if how == "constant":
            return self.clone_mass(b, b)
        if how == "decreasing":
            return self.clone_mass(np.full(b.shape, hi), b)
        if how == "zero_below":
            return np.where(b <= lo, self.clone_mass(np.full(b.shape, hi), b), 0.0)
        if how == "equal_only":
            same = (lo == hi) & (b == lo)
            return np.where(same, self.clone_mass(b, b), 0.0)
        if how == "general" and self.family == "oue":  # the box bound of _oue_box
            b_hi = b if eps_user_hi is None else np.asarray(eps_user_hi, dtype=np.float64)
            if b_hi.shape != b.shape or (b_hi < b).any():
                raise ValueError("eps_user_hi must have the shape of eps_user and be >= it")
            return _oue_box(lo, hi, b, b_hi, int(self.k))  # type: ignore[arg-type]
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

        >>> get_randomizer("krr:10").variation_ratio(1.0).gamma > 0.0
        True
        >>> get_randomizer("binary_rr").variation_ratio(1.0).gamma
        0.0
        >>> get_randomizer("gaussian").variation_ratio(1.0) is None
        True
        """
        eps0 = float(eps0)
        if not (math.isfinite(eps0) and eps0 >= 0.0):
            raise ValueError(f"eps0 must be finite and >= 0, got {eps0!r}")
        make = _VARIATION_RATIO[self.family]
        return None if make is None else make(eps0, self.k)



def _piecewise_mass(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """p_low(eps_j) / p_high(eps_v) of the piecewise mechanism (eps_j = b <= eps_v = a), with
    p_high(e) = t (t - 1) / (2 (t + 1)), t = e^{e/2}, and p_low(e) = p_high(e) e^{-e}."""
    with np.errstate(divide="ignore", invalid="ignore"):
        tb, ta = np.exp(b / 2.0), np.exp(a / 2.0)
        ratio = (tb * np.expm1(b / 2.0) / (tb + 1.0)) / (ta * np.expm1(a / 2.0) / (ta + 1.0))
        out = np.where(a == b, 1.0, ratio) * np.exp(-b)
    return np.where(np.isfinite(out), out, 0.0)


def _oue_mass(a: NDArray[np.float64], b: NDArray[np.float64], d: int) -> NDArray[np.float64]:
    """Clone mass of OUE with d bits, victim budget a, user budget b (see :func:`_oue_box`)."""
    return _oue_box(a, a, b, b, d)


def _oue_box(v_lo: ArrayLike, v_hi: ArrayLike, u_lo: ArrayLike, u_hi: ArrayLike,
             d: int) -> NDArray[np.float64]:
    """Clone mass of OUE with d bits: victim budget a (q_v = 1/(e^a+1)), user budget b.

    Victim pair (0, 1); an output y is described by its bits y_0, y_1 and the number s of
    ones among the other d - 2 bits.  inf_x R_j(x)(y) keeps the true bit (prob 1/2) at a 0 of
    y when y has one, so with f(b) = q if the bit is 1 else 1 - q and
    A(s) = (q_j/q_v)^s ((1-q_j)/(1-q_v))^{d-2-s} the ratio 2 inf_x R_j / (P0 + P1) is

        (0,0): (1-q_j)/(1-q_v) A(s);       (1,0), (0,1): 2 q_j A(s);
        (1,1), s < d-2: q_j^2 / ((1-q_j) q_v) A(s);     (1,1), s = d-2: (q_j/q_v) A(d-2),

    each monotone in s, so the minimum over patterns is at s in {0, d-3, d-2}.  Computed in
    log space (the masses underflow to 0 for large d across different budgets).

    Box bound (victim budget anywhere in [v_lo, v_hi], user budget in [u_lo, u_hi]): every
    candidate's log is  c + x log q_j + y log(1-q_j) - z log q_v - w log(1-q_v)  with x, y, z,
    w >= 0 (read off the list above: the exponents of q_j and 1 - q_j are s, 1 + s, 2 + s,
    1 + m and 1 + m - s, m - s, m - s - 1, 0; those of q_v and 1 - q_v enter with a minus
    sign).  log q falls and log(1-q) rises with the budget, so each candidate is smallest with
    q_v at v_lo, 1 - q_v at v_hi, q_j at u_hi and 1 - q_j at u_lo: evaluated there, the minimum
    over candidates is a lower bound on the mass over the whole box (docs/theory.md 6.6).  With
    v_lo = v_hi = a and u_lo = u_hi = b it is the mass itself.
    """
    lq_j = -np.logaddexp(0.0, np.asarray(u_hi, dtype=np.float64))  # log q_j, at u_hi
    lq1_j = -np.logaddexp(0.0, -np.asarray(u_lo, dtype=np.float64))  # log(1 - q_j), at u_lo
    lq_v = -np.logaddexp(0.0, np.asarray(v_lo, dtype=np.float64))  # log q_v, at v_lo
    lq1_v = -np.logaddexp(0.0, -np.asarray(v_hi, dtype=np.float64))  # log(1 - q_v), at v_hi
    m = d - 2

    def log_a(s: int) -> NDArray[np.float64]:
        return s * (lq_j - lq_v) + (m - s) * (lq1_j - lq1_v)

    ends = [0, m] if m >= 0 else []
    cands = []
    for s in ends:
        cands.append(lq1_j - lq1_v + log_a(s))  # (0, 0)
        cands.append(math.log(2.0) + lq_j + log_a(s))  # (1, 0)
    if m >= 1:  # (1, 1) with a zero among the other bits: s in [0, m - 1]
        for s in (0, m - 1):
            cands.append(2.0 * lq_j - lq1_j - lq_v + log_a(s))
    cands.append(lq_j - lq_v + log_a(m))  # (1, 1), every bit 1
    return np.minimum(np.exp(np.min(np.stack(cands), axis=0)), 1.0)


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
        """Each other user's share of Q^0 (and of Q^1): alpha p / q (Lemma 4.4)."""
        return self.alpha * math.exp(self.log_p - self.log_q)

    @property
    def r_complement(self) -> float:
        """1 - 2 r = gamma + beta + 2 alpha (1 - p/q), without cancellation."""
        return self.gamma + self.beta - 2.0 * self.alpha * math.expm1(self.log_p - self.log_q)


_WANG = "Wang et al., PVLDB 2024, arXiv 2304.05007, Section 4 parameter table"


def _vr_general(eps0: float, k: int | None) -> VariationRatio:
    """Any eps0-LDP randomizer: p = q = e^eps0, beta = tanh(eps0/2) (the largest total
    variation of an eps0-DP pair), alpha = 1/(1 + e^eps0), gamma = 0."""
    return VariationRatio(eps0, eps0, math.tanh(eps0 / 2.0), float(special.expit(-eps0)), 0.0,
                          _WANG + ", general mechanisms (= binary randomized response)")


def _vr_krr(eps0: float, k: int | None) -> VariationRatio:
    """k-RR: beta = p - pbar = (e^eps0 - 1)/(e^eps0 + k - 1), alpha = pbar = 1/(e^eps0 + k - 1),
    gamma = (k - 2) pbar."""
    assert k is not None
    a = math.exp(-np.logaddexp(eps0, math.log(k - 1.0)))
    return VariationRatio(eps0, eps0, math.expm1(eps0) * a, a, (k - 2.0) * a,
                          _WANG + ", general RR on k options")


def _vr_half_exponent(eps0: float, k: int | None) -> VariationRatio:
    """Laplace on [-1, 1] with scale 2/eps0, and the piecewise mechanism: beta = 1 -
    e^{-eps0/2}, alpha = e^{-eps0/2}/(e^{eps0/2} + 1), gamma = (1 - e^{-eps0/2})/(e^{eps0/2} + 1)
    (docs/theory.md 11.3)."""
    h = eps0 / 2.0
    s = float(special.expit(-h))
    return VariationRatio(eps0, eps0, -math.expm1(-h), math.exp(-h) * s, -math.expm1(-h) * s,
                          _WANG + " (Laplace, piecewise); rederived in docs/theory.md 11.3")


def _vr_oue(eps0: float, k: int | None) -> VariationRatio:
    """OUE (any d >= 2): beta = tanh(eps0/2)/2, alpha = 1/(2 (1 + e^eps0)), gamma = 1/2
    (derived in docs/theory.md 11.3; not in the paper's table)."""
    return VariationRatio(eps0, eps0, math.tanh(eps0 / 2.0) / 2.0,
                          float(special.expit(-eps0)) / 2.0, 0.5,
                          "derived in docs/theory.md 11.3 from the definition of OUE")


#: family -> the function declaring its (p, beta, q) parameters (None: not pure LDP).
#: ``duchi`` (one-bit) and ``duchi_l2`` use the general row (the paper lists Duchi et al.'s
#: mechanism with it); ``any`` is the general row by definition.
_VARIATION_RATIO = {
    "binary_rr": _vr_general,
    "krr": _vr_krr,
    "duchi": _vr_general,
    "laplace": _vr_half_exponent,
    "piecewise": _vr_half_exponent,
    "oue": _vr_oue,
    "duchi_l2": _vr_general,
    "gaussian": None,
    "gaussian_l2": None,
    "any": _vr_general,
}


def _parse(spec: str) -> Randomizer:
    text = spec.strip().lower()
    name, sep, arg = text.partition(":")
    if name not in FAMILIES:
        raise ValueError(
            f"randomizer must be one of {sorted(FAMILIES)} (with ':k' for krr and oue, e.g. "
            f"'krr:10'), got {short_repr(spec)}"
        )
    if FAMILIES[name][1]:
        if not sep:
            raise ValueError(f"randomizer {name!r} needs its number of categories, e.g. "
                             f"'{name}:10', got {short_repr(spec)}")
        try:
            k = int(arg)
        except ValueError:
            raise ValueError(f"randomizer {short_repr(spec)}: k must be an integer") from None
        return Randomizer(name, k)
    if sep:
        raise ValueError(f"randomizer {name!r} takes no ':k', got {short_repr(spec)}")
    return Randomizer(name)


#: Mechanism class names of shuffledp.mechanisms / shuffledp.sgd -> family (lookup only).
_MECHANISM_FAMILY = {
    "LaplaceMechanism": "laplace",
    "DuchiMechanism": "duchi",
    "PiecewiseMechanism": "piecewise",
    "GaussianMechanism": "gaussian",
    "GRRMechanism": "krr",
    "OUEMechanism": "oue",
    "DuchiRandomizer": "duchi_l2",
    "GaussianRandomizer": "gaussian_l2",
}
_MECHANISM_MODULES = ("shuffledp.mechanisms", "shuffledp.sgd")


def get_randomizer(obj: Any) -> Randomizer:
    """The :class:`Randomizer` of a spec string, a :class:`Randomizer`, or a mechanism class or
    instance of :mod:`shuffledp.mechanisms` / :mod:`shuffledp.sgd`.

    >>> get_randomizer("KRR:2").spec
    'binary_rr'
    >>> get_randomizer("krr")
    Traceback (most recent call last):
    ...
    ValueError: randomizer 'krr' needs its number of categories, e.g. 'krr:10', got 'krr'
    """
    if isinstance(obj, Randomizer):
        return obj
    if isinstance(obj, str):
        return _parse(obj)
    cls = obj if isinstance(obj, type) else type(obj)
    family = _MECHANISM_FAMILY.get(cls.__name__)
    if family is None or not cls.__module__.startswith(_MECHANISM_MODULES):
        raise TypeError(
            "randomizer must be a spec string (e.g. 'krr:10'), a Randomizer or a mechanism of "
            f"shuffledp.mechanisms / shuffledp.sgd, got {type(obj).__name__} {short_repr(obj)}"
        )
    if FAMILIES[family][1]:
        d = getattr(obj, "d", None)
        if isinstance(obj, type) or d is None:
            raise ValueError(
                f"{cls.__name__} needs its number of categories: pass an instance or a spec "
                f"such as '{family}:10'"
            )
        return Randomizer(family, int(d))
    return Randomizer(family)


# --------------------------------------------------------------------------- domination
@dataclass(frozen=True)
class Domination:
    """Outcome of :func:`domination`: ``holds``, and the worst (victim, user) budget pair with
    its clone mass and the required mass (``None`` when there is no pair or nothing to check).
    """

    holds: bool
    reason: str
    worst: tuple[float, float, float, float] | None = None

    def __bool__(self) -> bool:
        return self.holds


def _victim_extremes(
    values: NDArray[np.float64], counts: NDArray[np.int64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    """Per distinct budget b: the largest and smallest budget of the *other* users, and
    whether another user exists."""
    g = values.size
    top, bottom = values[-1], values[0]
    second_top = values[-2] if g >= 2 else np.nan
    second_bottom = values[1] if g >= 2 else np.nan
    is_top = (values == top) & (counts == 1)
    is_bottom = (values == bottom) & (counts == 1)
    hi = np.where(is_top, second_top, top)
    lo = np.where(is_bottom, second_bottom, bottom)
    exists = (counts >= 2) | (g >= 2)
    return hi, lo, exists


_TIERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
register_mapping("randomizers.tiers", _TIERS)


def budget_tiers(profile: Any) -> tuple[NDArray[np.float64], NDArray[np.int64],
                                        NDArray[np.float64]]:
    """``(values, counts, min_delta)``: the distinct eps_i of a
    :class:`~shuffledp.budgets.BudgetProfile` (increasing), their multiplicities and the
    smallest delta_i among the users of each value; cached per profile object."""
    hit = _TIERS.get(profile)
    if hit is None:
        t = profile.tiers  # sorted by eps then delta: the first of each eps has the min delta
        if t.eps.size == 1:
            hit = (t.eps.copy(), t.counts.copy(), t.delta.copy())
        else:
            values, first = np.unique(t.eps, return_index=True)
            counts = np.add.reduceat(t.counts, first).astype(np.int64)
            hit = (values, counts, t.delta[first])
        _TIERS[profile] = hit
    return hit


def domination(randomizer: Randomizer, *, eps: ArrayLike, required: ArrayLike,
               counts: ArrayLike | None = None) -> Domination:
    """Does every user j dominate mass ``required[j]`` against every other user as victim?

    Checks ``min over u != j of clone_mass(eps_u, eps_j) >= required[j]`` for all j (up to a
    relative 1e-12), using the family's monotonicity in the victim's budget (module
    docstring) so that only the extreme victims are evaluated; families without it (OUE)
    are checked on the full matrix of distinct budgets, up to ``MAX_DISTINCT_GENERAL``.
    With ``counts``, ``eps`` are the distinct budgets (increasing) with their multiplicities
    (see :func:`budget_tiers`) and ``required`` the largest requirement of each.

    >>> domination(get_randomizer("laplace"), eps=[0.5, 2.0], required=[0.01, 0.01]).holds
    False
    """
    e = np.asarray(eps, dtype=np.float64).ravel()
    req = np.broadcast_to(np.asarray(required, dtype=np.float64), e.shape)
    if counts is not None:  # eps are already the distinct budgets, with multiplicities
        values, need = e, req
        counts = np.asarray(counts, dtype=np.int64).ravel()
        if counts.shape != values.shape or np.any(np.diff(values) <= 0):
            raise ValueError("with counts, eps must be increasing distinct budgets, one count each")
        if int(counts.sum()) < 2:
            return Domination(True, "a single user has no clones to provide")
    else:
        if e.size < 2:
            return Domination(True, "a single user has no clones to provide")
        # per distinct (eps, required): the largest required mass matters
        order = np.lexsort((-req, e))
        e_s, r_s = e[order], req[order]
        values, first, counts = np.unique(e_s, return_index=True, return_counts=True)
        need = r_s[first]  # largest requirement among users with that budget
    how = randomizer.victim_order
    if how == "constant":
        mass = randomizer.clone_mass(values, values)
    elif how in ("decreasing", "zero_below"):
        hi, lo, exists = _victim_extremes(values, counts)
        mass = randomizer.clone_mass(np.where(exists, hi, values), values)
        if how == "zero_below":
            mass = np.where(lo < values, 0.0, mass)
        mass = np.where(exists, mass, np.inf)
    elif how == "equal_only":  # clones only between users with equal budgets
        mass = randomizer.clone_mass(values, values) if values.size == 1 else np.zeros(
            values.shape)
    elif how == "zero":
        mass = np.zeros(values.shape)
    else:  # general: the full matrix of distinct budgets
        if values.size > MAX_DISTINCT_GENERAL:
            return Domination(
                False,
                f"{randomizer.spec}: the clone mass is not monotone in the victim's budget, and "
                f"the profile has {values.size} distinct budgets (> {MAX_DISTINCT_GENERAL} "
                "checked exhaustively); group the budgets into tiers",
            )
        mat = randomizer.clone_mass(values[:, None], values[None, :])  # [victim, user]
        solo = counts == 1
        mat[np.arange(values.size), np.arange(values.size)] = np.where(
            solo, np.inf, np.diag(mat))
        mass = mat.min(axis=0)
    short = mass < need * (1.0 - _RTOL)
    if not short.any():
        return Domination(True, f"{randomizer.spec}: every user provides the required clone mass")
    j = int(np.argmax(short * (need - np.where(np.isfinite(mass), mass, 0.0))))
    victim = _worst_victim_for(randomizer, values, counts, j)
    worst = (victim, float(values[j]), float(mass[j]), float(need[j]))
    return Domination(
        False,
        f"{randomizer.spec}: a user with eps = {values[j]:.6g} provides clone mass "
        f"{mass[j]:.4g} against a victim with eps = {victim:.6g}, below the {need[j]:.4g} "
        "the bound uses",
        worst,
    )


def _worst_victim_for(randomizer: Randomizer, values, counts, j: int) -> float:
    others = [i for i in range(values.size) if i != j or counts[j] >= 2]
    cand = values[others] if others else values[[j]]
    if cand.size > MAX_DISTINCT_GENERAL:
        cand = np.unique(np.concatenate([cand[:1000], cand[-1000:]]))
    m = randomizer.clone_mass(cand, np.full(cand.shape, values[j]))
    return float(cand[int(np.argmin(m))])
