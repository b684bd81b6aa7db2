"""Shuffled rounds as dp_accounting privacy loss distributions (interoperability).

A shuffled round of n users with budgets ``profile`` is dominated by the dominating pair
(P, Q) of the clone reduction (:func:`shuffledp.bounds.clones.clone_pair`; Feldman,
McMillan, Talwar, FOCS 2021, arXiv 2012.12803, Theorem 3.2 and Appendix E, with the stronger
masses of their SODA 2023 paper; docs/theory.md sections 3-4): the shuffled output on two
neighbouring datasets is one common randomized map applied to P, resp. Q.  So the privacy
loss distribution (PLD) of (P, Q) is a valid accounting object for the round, and composing
it (adaptively, f-DP composition: Dong, Roth, Su, JRSS-B 2022, Theorem 3.2) with the PLDs of
other mechanisms in Google's ``dp_accounting`` library gives a valid guarantee for the whole
pipeline.  This is the object the project's own SGD accounting composes
(:mod:`shuffledp.sgd.accounting`, method ``clones``).

:func:`shuffled_round_pld` exports it: *pessimistic* (every privacy loss rounded **up** to
the grid ``k * discretization``; the mass the pair leaves out, ``tail_mass`` = truncated
clone counts, the victim's local delta and round-off, at loss +inf), *symmetric* (the pair is
mirror symmetric, ``Q_c(a) = P_c(c + 1 - a)``, so one PLD serves both directions).  For every
eps its ``get_delta_for_epsilon`` is at least the ``clones`` bound's delta(eps), and its eps
exceeds the bound's by at most about one ``discretization`` per composed round.

The export is a guarantee for the randomizers the ``clones`` pair covers on the profile
(:meth:`shuffledp.bounds.base.Bound.covers`): give ``randomizer`` to have it checked
(:class:`~shuffledp.errors.ParameterRegimeError` otherwise).

*Any covering bound, mechanism-aware ones included* (:func:`bound_round_pld`; docs/theory.md
16): the mechanism-aware bounds (``clones`` with ``mechanism``, ``blanket``, ``tightest``) are
maxima over victim groups, not one pair, but each gives a *privacy profile* delta(eps) valid for
every neighbouring pair and both orders.  A privacy profile bounded above at a grid of eps,
extended to negative eps by the identity ``H_E(A||B) = 1 - E + E H_{1/E}(B||A)`` and replaced by
its lower convex envelope in ``E = e^eps``, is turned into a pessimistic PLD by the
connect-the-dots construction of Doroshenko, Ghazi, Kamath, Kumar, Manurangsi (PETS 2022,
arXiv 2207.04380, Algorithm 1; ``dp_accounting.pld.pld_pmf.create_pmf_pessimistic_connect_dots``)
whose hockey-stick curve is the linear interpolation in ``E`` of the grid values: above the
true curve, which is convex in ``E``.  :class:`ShuffledRoundDpEvent` carries one round into
dp_accounting and :class:`ShufflePLDAccountant` (a ``PLDAccountant``) composes it with
Gaussian, Laplace, Poisson-subsampled and every other event dp_accounting knows, under the
replace-one neighbouring relation of the shuffle model.

>>> from shuffledp import BudgetProfile
>>> pld = shuffled_round_pld(BudgetProfile.identical(n=10_000, eps0=1.0), randomizer="krr:4")
>>> 0.03 < pld.get_epsilon_for_delta(1e-6) < 0.06
True
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from shuffledp.budgets import BudgetProfile
from shuffledp.errors import ParameterRegimeError, short_repr
from shuffledp.validation import as_real_array, check_int, check_real

__all__ = ["DISCRETIZATION", "pld_from_pair", "pld_from_pieces", "shuffled_round_pld",
           "profile_pld", "bound_round_pld", "ShuffledRoundDpEvent", "ShufflePLDAccountant",
           "PROFILE_POINTS"]

#: Largest number of eps values at which a bound's privacy profile is evaluated for
#: :func:`bound_round_pld` (each side of 0: the negative side follows from the positive one).
PROFILE_POINTS = 160
#: The eps grid is refined until consecutive deltas differ by at most this factor (or the
#: points run out, or a gap is one grid step, or delta is below PROFILE_FLOOR).
PROFILE_RATIO = 1.25
PROFILE_FLOOR = 1e-14

#: Default width of the privacy-loss grid (dp_accounting's ``value_discretization_interval``).
DISCRETIZATION = 1e-4


#: Smallest accepted grid width of privacy losses: finer grids cost memory in proportion
#: (a loss of 10 on a 1e-9 grid is 10^10 points) and gain nothing a user could see.
MIN_DISCRETIZATION = 1e-6
#: Largest number of grid points a privacy loss may span (losses / discretization).
MAX_LOSS_POINTS = 10**7


def check_discretization(discretization: object) -> float:
    """A grid width in [1e-6, 0.1] (``ValueError``/``TypeError`` naming it).

    >>> check_discretization(1e-9)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: discretization must be in [1e-06, 0.1] (finer grids ...), got 1e-09
    """
    value = check_real(discretization, "discretization", low=0.0, high=0.1, low_open=True)
    if value < MIN_DISCRETIZATION:
        raise ValueError(f"discretization must be in [{MIN_DISCRETIZATION:g}, 0.1] (finer "
                         "grids of privacy losses need memory in proportion and gain nothing "
                         f"visible), got {value!r}")
    return value


def check_loss_grid(loss: float, discretization: float) -> None:
    """Refuse, before allocating, a grid of privacy losses up to ``loss`` with more than
    ``MAX_LOSS_POINTS`` points."""
    if loss / discretization > MAX_LOSS_POINTS:
        raise ValueError(f"a privacy loss of {loss:g} on a grid of {discretization:g} needs "
                         f"{loss / discretization:.3g} points, more than {MAX_LOSS_POINTS:.0e}: "
                         "use a coarser discretization")


def pld_from_pair(
    p: NDArray[np.float64],
    q: NDArray[np.float64],
    tail_mass: float,
    *,
    discretization: float = DISCRETIZATION,
):
    """Pessimistic, symmetric dp_accounting PLD of the pair (P, Q) (losses rounded up).

    ``infinity_mass = max(tail_mass, 1 - sum(p))`` plus the mass of outcomes with q = 0.

    >>> pld = pld_from_pair(np.array([0.75, 0.25]), np.array([0.25, 0.75]), 0.0)
    >>> d = float(pld.get_delta_for_epsilon(0.0))  # TV = 0.5, rounded up (pessimistic)
    >>> 0.5 <= d < 0.5001
    True
    """
    return pld_from_pieces([(p, q)], tail_mass, discretization=discretization)


def pld_from_pieces(
    pieces: Iterable[tuple[NDArray[np.float64], NDArray[np.float64]]],
    tail_mass: float,
    *,
    discretization: float = DISCRETIZATION,
):
    """:func:`pld_from_pair` of the concatenation of ``pieces`` (pairs of 1-D arrays), built
    one piece at a time: only the histogram of the rounded losses is kept, so pairs with
    10^8 outcomes fit in memory."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    discretization = check_discretization(discretization)
    tail_mass = check_real(tail_mass, "tail_mass", low=0.0, high=1.0)
    hist: dict[int, float] = {}
    p_total = q_total = 0.0
    only_p_mass = 0.0
    seen = 0
    for p, q in pieces:
        p, q = as_real_array(p, "p"), as_real_array(q, "q")
        if p.shape != q.shape or p.ndim != 1:
            raise ValueError(f"p and q must be 1-D of equal length, got {p.shape} and "
                             f"{q.shape}")
        if not (np.all(np.isfinite(p)) and np.all(np.isfinite(q))):
            raise ValueError("p and q must be finite (probabilities)")
        if np.any(p < 0) or np.any(q < 0):
            raise ValueError("p and q must be non-negative")
        seen += p.size
        q_total += float(q.sum())
        live = p > 0
        both = live & (q > 0)
        only_p_mass += float(p[live & (q <= 0)].sum())
        p_total += float(p.sum())
        loss = np.log(p[both]) - np.log(q[both])
        k = np.ceil(loss / discretization - 1e-12).astype(np.int64)  # round up (pessimistic)
        if not k.size:
            continue
        k0 = int(k.min())
        mass = np.bincount(k - k0, weights=p[both])
        for i in np.flatnonzero(mass > 0):
            key = int(i) + k0
            hist[key] = hist.get(key, 0.0) + float(mass[i])
    if seen == 0:
        raise ValueError("p and q must hold at least one outcome")
    for name, total in (("p", p_total), ("q", q_total)):
        if total > 1.0 + 1e-9:
            raise ValueError(f"{name} must be a (sub-)probability vector, got total mass "
                             f"{total!r} > 1")
    inf_mass = only_p_mass + max(float(tail_mass), 1.0 - p_total)
    inf_mass = min(max(inf_mass, 0.0), 1.0)
    return pld_lib.PrivacyLossDistribution.create_from_rounded_probability(
        hist, inf_mass, discretization, pessimistic_estimate=True
    )


def shuffled_round_pld(
    profile: BudgetProfile,
    *,
    clone: str = "stronger",
    randomizer: Any = None,
    discretization: float = DISCRETIZATION,
    tol: float = 1e-12,
):
    """One shuffled round of ``profile`` as a pessimistic dp_accounting
    ``PrivacyLossDistribution`` (module docstring).

    ``clone``: the clone masses (``"stronger"``, FMT23: binary/k-ary RR and one-bit Duchi;
    ``"standard"``, FMT21: every eps-LDP randomizer with identical budgets).  ``randomizer``
    (a spec such as ``"krr:10"``, optional): checked with ``clones``' coverage, so the
    exported PLD is a guarantee for it on this profile.  ``tol``: the pair's truncation
    (charged at loss +inf).

    Compose it in dp_accounting like any other PLD::

        from dp_accounting.pld import privacy_loss_distribution as pld_lib
        rounds = shuffled_round_pld(profile).self_compose(50)
        release = pld_lib.from_gaussian_mechanism(standard_deviation=20.0,
                                                  value_discretization_interval=1e-4)
        rounds.compose(release).get_epsilon_for_delta(1e-6)
    """
    from shuffledp.bounds import get_bound
    from shuffledp.bounds.clones import clone_pair_chunks

    if not isinstance(profile, BudgetProfile):
        raise TypeError(f"profile must be a BudgetProfile, got {type(profile).__name__}")
    if clone not in ("standard", "stronger"):
        raise ValueError(f"clone must be 'standard' or 'stronger', got {short_repr(clone)}")
    discretization = check_discretization(discretization)
    tol = check_real(tol, "tol", low=0.0, high=1e-3, low_open=True)
    bound = get_bound("clones")
    bound.prepare(profile, clone=clone)  # the bound's own validation of the profile
    if randomizer is not None:
        cov = bound.covers(randomizer=randomizer, profile=profile, clone=clone)
        if not cov.covered:
            raise ParameterRegimeError(f"the clones pair is not a guarantee here: {cov.reason}")
    check_loss_grid(2.0 * profile.eps_max + 1.0, discretization)
    pieces, tail = clone_pair_chunks(profile, clone=clone, tol=tol)
    return pld_from_pieces(pieces, tail, discretization=discretization)


# --------------------------------------------------------------------------- privacy profiles
def _lower_hull(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
    """The lower convex envelope of the points (x, y) (x increasing), at the x's."""
    hull: list[int] = []
    for i in range(x.size):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            # b is above the segment a -> i: drop it
            if (y[b] - y[a]) * (x[i] - x[a]) >= (y[i] - y[a]) * (x[b] - x[a]):
                hull.pop()
            else:
                break
        hull.append(i)
    return np.interp(x, x[hull], y[hull])


def profile_pld(delta_of_eps, eps_top: float, *, discretization: float = DISCRETIZATION,
                points: int = PROFILE_POINTS):
    """A pessimistic, symmetric dp_accounting PLD whose delta(eps) is at least ``delta_of_eps``
    (an upper bound on a symmetric privacy profile, for eps >= 0) at every eps (docs/theory.md
    16).

    ``delta_of_eps`` is evaluated at 0 and on multiples of ``discretization`` in ``(0,
    eps_top]``: a geometric start, refined where consecutive values differ by more than
    ``PROFILE_RATIO`` (at most ``points`` evaluations); above ``eps_top`` it is taken constant
    (its value at ``eps_top`` goes to loss +inf).  Negative eps from the
    identity ``delta(-e) = 1 - e^-e + e^-e delta(e)``; the values are replaced by their lower
    convex envelope in ``E = e^eps`` together with ``(E, delta) = (0, 1)`` (the true curve is
    convex in ``E`` and below every value, so below the envelope), then connect-the-dots.

    >>> pld = profile_pld(lambda e: max(0.0, 0.5 - 0.25 * e), 2.0)
    >>> d = float(pld.get_delta_for_epsilon(1.0))
    >>> 0.25 <= d < 0.26
    True
    """
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    if not callable(delta_of_eps):
        raise TypeError(f"delta_of_eps must be a function of eps, got "
                        f"{type(delta_of_eps).__name__}")
    discretization = check_discretization(discretization)
    eps_top = check_real(eps_top, "eps_top", low=0.0, low_open=True)
    points = check_int(points, "points", low=2, high=10**6)
    check_loss_grid(eps_top, discretization)
    top = max(int(math.ceil(eps_top / discretization)), 1)
    cache: dict[int, float] = {}

    def at(k: int) -> float:
        if k not in cache:
            e = k * discretization
            v = delta_of_eps(e)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise TypeError(f"delta_of_eps({e:g}) must be a number, got {short_repr(v)}")
            v = float(v)
            if not -1e-12 <= v <= 1.0 + 1e-12:  # nan fails too
                raise ValueError(f"delta_of_eps({e:g}) must be a delta in [0, 1], got {v!r}")
            cache[k] = min(max(v, 0.0), 1.0)
        return cache[k]

    start = np.unique(np.ceil(np.geomspace(1.0, float(top), min(int(points), 24))).astype(
        np.int64))
    for k in (0, *start.tolist()):
        at(int(k))
    while len(cache) < points:  # refine where delta falls by more than PROFILE_RATIO
        ks_now = sorted(cache)
        gaps = [(a, b) for a, b in zip(ks_now, ks_now[1:], strict=False)
                if b - a > 1 and cache[a] > PROFILE_FLOOR
                and cache[a] > PROFILE_RATIO * cache[b]]
        if not gaps:
            break
        a, b = max(gaps, key=lambda g: (math.log(cache[g[0]]) - math.log(max(cache[g[1]],
                                                                             1e-300))))
        at((a + b) // 2)
    ks = np.array(sorted(cache), dtype=np.int64)
    eps = ks * discretization
    d_pos = np.array([cache[int(k)] for k in ks])
    # values may rise with eps (a rigorous bound computed numerically need not be monotone):
    # each is an upper bound at its own eps and the true profile never rises, so the running
    # minimum below keeps every value valid
    # negative side (the other order of the pair): delta(-e) = 1 - e^-e + e^-e delta(e)
    d_neg = -np.expm1(-eps[1:]) + np.exp(-eps[1:]) * d_pos[1:]
    r = np.concatenate([-ks[1:][::-1], ks])
    d = np.minimum(np.concatenate([d_neg[::-1], d_pos]), 1.0)
    big_e = np.concatenate([[0.0], np.exp(r * discretization)])
    hull = _lower_hull(big_e, np.concatenate([[1.0], d]))[1:]
    hull = np.minimum.accumulate(np.clip(hull, 0.0, 1.0))
    pmf = pld_pmf.create_pmf_pessimistic_connect_dots(discretization, r, hull)
    return pld_lib.PrivacyLossDistribution(pmf)


def bound_round_pld(profile: BudgetProfile, *, randomizer: Any, method: str = "tightest",
                    generic_masses: bool = False, options: dict | None = None,
                    discretization: float = DISCRETIZATION, points: int = PROFILE_POINTS):
    """One shuffled round of ``profile`` as a pessimistic dp_accounting PLD built from the
    covering rigorous upper bound ``method`` for ``randomizer`` (mechanism-aware by default, as
    in :func:`shuffledp.compare.compare_bounds`; ``options`` are added to the bound's options,
    e.g. ``{"clone": "standard"}``), through :func:`profile_pld`.

    Raises :class:`~shuffledp.errors.ParameterRegimeError` when ``method`` is not a rigorous
    upper bound that covers ``randomizer`` on ``profile``.

    >>> from shuffledp import BudgetProfile
    >>> pld = bound_round_pld(BudgetProfile.from_histogram([0.5, 4.0], [9999, 1]),
    ...                       randomizer="laplace", method="clones")
    >>> 0.273 < pld.get_epsilon_for_delta(1e-6) < 0.274  # clones: 0.27320
    True
    """
    from shuffledp.bounds import get_bound
    from shuffledp.compare import randomizer_options
    from shuffledp.families import get_family

    if not isinstance(profile, BudgetProfile):
        raise TypeError(f"profile must be a BudgetProfile, got {type(profile).__name__}")
    if not isinstance(method, str):
        raise TypeError(f"method must be a bound name (str), got {short_repr(method)}")
    if not isinstance(generic_masses, bool):
        raise TypeError(f"generic_masses must be True or False, got {short_repr(generic_masses)}")
    fam = get_family(randomizer)
    bound = get_bound(method)
    if bound.info.kind != "upper":
        raise ValueError(f"method must be a rigorous upper bound, got {method!r} "
                         f"({bound.info.kind_label})")
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"options must be a dict of the bound's options, got "
                        f"{short_repr(options)}")
    opts = {**randomizer_options([method], fam, generic_masses=generic_masses).get(method, {}),
            **(options or {})}
    cov = bound.covers(randomizer=fam, profile=profile, **opts)
    if not cov.covered:
        raise ParameterRegimeError(f"{method} is not a guarantee for {fam} here: {cov.reason}")
    bound.prepare(profile, **opts)  # the bound's own validation of the profile
    return profile_pld(lambda e: bound.delta(profile=profile, eps=e, **opts),
                       max(profile.eps_max, discretization), discretization=discretization,
                       points=points)


def _event_base():
    from dp_accounting import dp_event

    return dp_event.DpEvent


class ShuffledRoundDpEvent(_event_base()):  # type: ignore[misc]
    """One shuffled round as a dp_accounting ``DpEvent``: users with budgets ``profile`` each run
    ``randomizer``; accounted by :class:`ShufflePLDAccountant` through the rigorous bound
    ``method`` (mechanism-aware unless ``generic_masses``), :func:`bound_round_pld`.

    >>> from shuffledp import BudgetProfile
    >>> ev = ShuffledRoundDpEvent(BudgetProfile.identical(n=1000, eps0=1.0), "binary_rr")
    >>> ev.method
    'tightest'
    """

    __slots__ = ("profile", "randomizer", "method", "generic_masses", "options", "points")

    def __init__(self, profile: BudgetProfile, randomizer: Any, method: str = "tightest",
                 generic_masses: bool = False, options: dict | None = None,
                 points: int = PROFILE_POINTS) -> None:
        from shuffledp.bounds import get_bound
        from shuffledp.families import get_family

        if not isinstance(profile, BudgetProfile):
            raise TypeError(f"profile must be a BudgetProfile, got {type(profile).__name__}")
        if not isinstance(method, str):
            raise TypeError(f"method must be a bound name (str), got {short_repr(method)}")
        bound = get_bound(method)  # ValueError naming the known bounds
        if bound.info.kind != "upper":
            raise ValueError(f"method must be a rigorous upper bound, got {method!r} "
                             f"({bound.info.kind_label})")
        if not isinstance(generic_masses, bool):
            raise TypeError(f"generic_masses must be True or False, got "
                            f"{short_repr(generic_masses)}")
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"options must be a dict of the bound's options, got "
                            f"{short_repr(options)}")
        bound._options(dict(options or {}))  # unknown names and wrong types refused now
        points = check_int(points, "points", low=2, high=10**6)
        object.__setattr__(self, "profile", profile)
        object.__setattr__(self, "randomizer", get_family(randomizer).spec)
        object.__setattr__(self, "method", method)
        object.__setattr__(self, "generic_masses", generic_masses)
        object.__setattr__(self, "options", dict(options or {}))
        object.__setattr__(self, "points", points)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("ShuffledRoundDpEvent is immutable")

    def __repr__(self) -> str:
        return (f"ShuffledRoundDpEvent(n={self.profile.n}, randomizer={self.randomizer!r}, "
                f"method={self.method!r}, generic_masses={self.generic_masses})")


def _accountant_base():
    from dp_accounting.pld import pld_privacy_accountant

    return pld_privacy_accountant.PLDAccountant


class ShufflePLDAccountant(_accountant_base()):  # type: ignore[misc]
    """dp_accounting's ``PLDAccountant`` that also composes :class:`ShuffledRoundDpEvent`
    (every other event as dp_accounting does).  The shuffle bounds are for neighbouring
    datasets that differ in one user's input (replace one), so the accountant must be built
    with ``NeighborRel.REPLACE_ONE`` (the default here) or ``REPLACE_SPECIAL``.

    >>> from dp_accounting import dp_event
    >>> from shuffledp import BudgetProfile
    >>> acc = ShufflePLDAccountant()
    >>> _ = acc.compose(ShuffledRoundDpEvent(BudgetProfile.identical(n=10_000, eps0=1.0),
    ...                                      "binary_rr", method="clones"), 2)
    >>> 0.0432 < acc.get_epsilon(1e-6) < 2 * 0.0433  # one round: 0.04321
    True
    """

    def __init__(self, neighboring_relation=None, value_discretization_interval: float = 1e-4):
        from dp_accounting.privacy_accountant import NeighboringRelation

        rel = NeighboringRelation.REPLACE_ONE if neighboring_relation is None \
            else neighboring_relation
        super().__init__(rel, value_discretization_interval)
        self._round_plds: dict = {}

    def get_epsilon(self, target_delta: float) -> float:
        """As dp_accounting's, with ``target_delta`` checked: a number in [0, 1]."""
        return super().get_epsilon(check_real(target_delta, "target_delta", low=0.0,
                                              high=1.0))

    def get_delta(self, target_epsilon: float) -> float:
        """As dp_accounting's, with ``target_epsilon`` checked: a finite number >= 0."""
        return super().get_delta(check_real(target_epsilon, "target_epsilon", low=0.0))

    def _maybe_compose(self, event, count: int, do_compose: bool):
        from dp_accounting.privacy_accountant import NeighboringRelation, PrivacyAccountant

        CompositionErrorDetails = PrivacyAccountant.CompositionErrorDetails  # noqa: N806

        if not isinstance(event, ShuffledRoundDpEvent):
            return super()._maybe_compose(event, count, do_compose)
        if self.neighboring_relation not in (NeighboringRelation.REPLACE_ONE,
                                             NeighboringRelation.REPLACE_SPECIAL):
            return CompositionErrorDetails(
                invalid_event=event,
                error_message=("a shuffled round is accounted for neighbouring datasets that "
                               "differ in one user's input: the accountant's "
                               "neighboring_relation must be REPLACE_ONE or REPLACE_SPECIAL, "
                               f"got {self.neighboring_relation}"))
        if do_compose:
            key = id(event)
            if key not in self._round_plds:
                self._round_plds[key] = (event, bound_round_pld(
                    event.profile, randomizer=event.randomizer, method=event.method,
                    generic_masses=event.generic_masses, options=event.options,
                    discretization=self._value_discretization_interval, points=event.points))
            pld = self._round_plds[key][1]
            self._pld = self._pld.compose(pld.self_compose(count) if count > 1 else pld)
        return None
