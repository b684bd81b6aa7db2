"""The tightest rigorous bound for the randomizer the users run (registered ``tightest``, kind
``upper``): the smallest of ``clones`` (mechanism-aware masses), ``blanket`` and, for binary
randomized response and one-bit Duchi with identical budgets, ``rr_upper`` (the exact worst
case, rounded up).

All are valid upper bounds on the same quantity (the hockey-stick divergence of the shuffled
output of the protocols of the family F named by ``mechanism``, for every pair of
neighbouring datasets), so their minimum is one too: ``delta(eps) = min(delta_clones(eps),
delta_blanket(eps))`` and ``eps(delta) = min(eps_clones(delta), eps_blanket(delta))`` (each
pair (eps, delta) certified by one member is certified).  A member that does not cover F, or
raises :class:`~shuffledp.errors.ParameterRegimeError` for the profile (e.g. ``blanket`` for
the L2 randomizers of SGD, which have no blanket, or a per-tier family with too many tiers), is
left out; with none left the bound raises that error.  The result's diagnostics name the
member that gave the value (``winner``) and every member's value.

``mechanism=None`` (the default): only ``clones`` with its generic (``stronger``) masses
applies, a guarantee for every eps_i-LDP randomizer; name the randomizer to let the
mechanism-aware members compete.

Code names -> paper symbols: ``mechanism`` = the randomizer family F, ``members`` = the
bounds whose minimum is taken.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from shuffledp.bounds.base import Bound, BoundInfo, Coverage
from shuffledp.bounds.clones.aware import VICTIM_GROUPS
from shuffledp.bounds.clones.bound import check_victim_groups
from shuffledp.bounds.registry import get_bound, register_bound
from shuffledp.budgets import BudgetProfile, profile_digest
from shuffledp.caching import lru_put, register_mapping
from shuffledp.errors import ParameterRegimeError
from shuffledp.families import Family, get_family

__all__ = ["MEMBERS", "members", "tightest_delta", "tightest_eps", "BOUND"]

#: The bounds whose minimum is taken, in order of preference on ties.
MEMBERS = ("clones", "blanket", "rr_upper")
#: Members that take no options (they name their randomizers themselves).
_PLAIN = ("rr_upper",)
#: Diagnostics of the latest evaluations (the winner of each), a few entries.
_LAST: OrderedDict[tuple, dict[str, Any]] = OrderedDict()
_LAST_SIZE = 64
register_mapping("tightest.winners", _LAST)


def _member_options(name: str, mechanism: Any, victim_groups: int) -> dict[str, Any]:
    # clones without masses of its own for the family: its generic (stronger) masses, a
    # member only where they cover the family (coverage decides)
    if mechanism is None or (name == "clones" and not get_family(mechanism).aware):
        return {"clone": "stronger"} if name == "clones" else {}
    if name in _PLAIN:
        return {}
    return {"mechanism": get_family(mechanism).spec, "victim_groups": victim_groups}


def members(profile: BudgetProfile, mechanism: Any = None,
            victim_groups: int = VICTIM_GROUPS) -> list[tuple[str, dict[str, Any]]]:
    """The members that apply to ``profile`` for ``mechanism``: ``[(name, options)]``.

    >>> from shuffledp import BudgetProfile
    >>> [m for m, _ in members(BudgetProfile.identical(n=100, eps0=1.0), "laplace")]
    ['clones', 'blanket']
    >>> [m for m, _ in members(BudgetProfile.identical(n=100, eps0=1.0), "binary_rr")]
    ['clones', 'blanket', 'rr_upper']
    >>> [m for m, _ in members(BudgetProfile.identical(n=100, eps0=1.0))]
    ['clones']
    """
    fam = None if mechanism is None else get_family(mechanism)
    out = []
    for name in MEMBERS:
        opts = _member_options(name, mechanism, victim_groups)
        if mechanism is None and name != "clones":
            continue
        bound = get_bound(name)
        try:
            bound.prepare(profile, **opts)
            if fam is not None and not bound.covers(randomizer=fam, profile=profile,
                                                    **opts).covered:
                continue
        except ParameterRegimeError:
            continue
        out.append((name, opts))
    return out


def _remember(key: tuple, values: dict[str, float], winner: str) -> None:
    lru_put(_LAST, key, {"winner": winner, **{f"{k}_value": v for k, v in values.items()}},
            _LAST_SIZE)


def _best(profile: BudgetProfile, mechanism: Any, victim_groups: int, what: str,
          target: float) -> float:
    used = members(profile, mechanism, victim_groups)
    if not used:
        _check(profile=profile, mechanism=mechanism, victim_groups=victim_groups)
    values: dict[str, float] = {}
    reasons = []
    for name, opts in used:
        bound = get_bound(name)
        try:
            if what == "delta":
                values[name] = bound.delta(profile=profile, eps=target, **opts)
            else:
                values[name] = bound.eps(profile=profile, delta=target, **opts)
        except ParameterRegimeError as err:
            reasons.append(f"{name}: {err}")
    if not values:
        raise ParameterRegimeError("tightest: no member certifies this target ("
                                   + "; ".join(reasons) + ")")
    winner = min(values, key=lambda k: (values[k], MEMBERS.index(k)))
    _remember((profile_digest(profile), what, float(target), str(mechanism), victim_groups), values,
              winner)
    return float(values[winner])


def tightest_delta(*, profile: BudgetProfile, eps: float, mechanism: Any = None,
                   victim_groups: int = VICTIM_GROUPS) -> float:
    """``min`` over the members of their delta(eps) (module docstring)."""
    return _best(profile, mechanism, victim_groups, "delta", eps)


def tightest_eps(*, profile: BudgetProfile, delta: float, mechanism: Any = None,
                 victim_groups: int = VICTIM_GROUPS) -> float:
    """``min`` over the members of their eps(delta) (module docstring)."""
    return _best(profile, mechanism, victim_groups, "eps", delta)


def _check(*, profile: BudgetProfile, mechanism: Any = None,
           victim_groups: int = VICTIM_GROUPS) -> None:
    if mechanism is not None:
        get_family(mechanism)  # TypeError / ValueError naming the spec
    check_victim_groups(victim_groups)
    reasons = []
    for name in MEMBERS:
        if mechanism is None and name != "clones":
            continue
        opts = _member_options(name, mechanism, victim_groups)
        try:
            get_bound(name).prepare(profile, **opts)
            return
        except ParameterRegimeError as err:
            reasons.append(f"{name}: {err}")
    raise ParameterRegimeError("tightest: no member applies (" + "; ".join(reasons) + ")")


def _coverage(*, family: Family, profile: BudgetProfile, mechanism: Any = None,
              victim_groups: int = VICTIM_GROUPS) -> Coverage:
    """Covered iff every member used covers ``family`` (the minimum is then valid for it)."""
    used = members(profile, mechanism, victim_groups)
    if not used:
        return Coverage(False, f"tightest: no member applies for mechanism {mechanism}")
    for name, opts in used:
        cov = get_bound(name).covers(randomizer=family, profile=profile, **opts)
        if not cov.covered:
            return Coverage(False, f"tightest: {cov.reason}")
    names = " and ".join(n for n, _ in used)
    return Coverage(True, f"tightest: the smaller of {names}, each a guarantee for {family}")


def _diagnostics(*, profile: BudgetProfile, eps: float, delta: float, mechanism: Any = None,
                 victim_groups: int = VICTIM_GROUPS) -> dict:
    """The winner of the evaluation just made (by delta at eps, or by eps at delta)."""
    for what, target in (("eps", delta), ("delta", eps)):
        key = (profile_digest(profile), what, float(target), str(mechanism), victim_groups)
        got = _LAST.get(key)
        if got is not None:
            return dict(got)
    return {"winner": "", "members": ",".join(n for n, _ in members(profile, mechanism,
                                                                      victim_groups))}


BOUND = register_bound(
    Bound(
        info=BoundInfo(
            name="tightest",
            kind="upper",
            title="Tightest rigorous bound: min(clones, blanket, rr_upper) for the randomizer run",
            citation=("min of the rigorous clones (docs/theory.md 3-4), blanket "
                      "(docs/theory.md 15) and rr_upper (docs/theory.md 9.1) bounds"),
            personalized=True,
            approx_ldp=True,
            randomizers=("any",),
            options={"mechanism": None, "victim_groups": VICTIM_GROUPS},
            coverage_note=("what every member used covers: every eps-LDP randomizer without a "
                           "mechanism (clones alone), else its mechanism's protocols"),
        ),
        delta_fn=tightest_delta,
        eps_fn=tightest_eps,
        check_fn=_check,
        diagnostics_fn=_diagnostics,
        covers_fn=_coverage,
    )
)
