"""The ``blanket`` bound's delta(eps): victim groups, the users' classes, the family's cases.

For a profile and a randomizer family F (option ``mechanism``): the profile's budget tiers are
put into victim groups (contiguous ranges of tiers, as ``clones``' mechanism-aware groups, cut
further to a budget ratio ``GROUP_RATIO`` among the lowest budgets for the families that ask,
``Family.blanket_ratio_groups``, and below every tier holding ``HEAVY_SHARE`` of the users on
profiles of more than ``HEAVY_MIN_TIERS`` budgets (:mod:`~shuffledp.bounds.blanket.groups`),
or one tier per group
for the families that need it or prefer it up to ``MAX_TIER_GROUPS`` tiers,
``Family.blanket_groups``) and user classes
(one per tier, or contiguous ranges of tiers inside a group above ``BIN_MIN_TIERS`` tiers).
For each group the family gives its cases (:meth:`~shuffledp.families.base.Family.
blanket_cases`), each a law of the privacy amplification variable and the classes' blanket
masses; one user of the group with the largest mass is taken out of the pool (the victim).
The group's bound is

    delta_G(eps) = delta_v + (1 - delta_v) min(1, min_choices max_cases A_case),

delta_v the group's largest local delta (docs/theory.md 15, Theorem 6 with the mixture
reading of local delta, section 8), and the bound is the largest group bound.  A case's A is
:func:`~shuffledp.bounds.blanket.amplification.amplification_bound` of its lattice law
(:func:`~shuffledp.bounds.blanket.cells.lattice_law`, step ``SD_STEPS`` per standard
deviation); before it, cheaper upper bounds of the same case are tried (its Chernoff bound,
the sum with ``SCREEN_CLASSES`` classes, a coarser lattice): a case (or a group) whose bound
is at most the running maximum cannot raise it.  Every choice is considered, the most
promising first (branch and bound on an estimate of each; docs/theory.md 15.1, "The code's
evaluation order is sound").

Masses: equal masses are merged and, above ``MAX_CLASSES`` distinct values, rounded down to the
smallest of contiguous classes of the sorted masses (fewer blanket reports: a larger bound,
docs/theory.md 15.3).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any

import numpy as np
from numpy.typing import NDArray

from shuffledp.bounds.blanket.amplification import amplification_bound, chernoff_bound
from shuffledp.bounds.blanket.cells import lattice_law
from shuffledp.bounds.blanket.groups import (  # noqa: F401 (tests import them from here)
    GROUP_RATIO,
    HEAVY_SHARE,
    NOISE_GROUP_RATIO,
    NOISE_MAX_PIECES,
    NOISE_WIDE_RATIO,
    _heavy_cuts,
    _ratio_cuts,
    _union,
    _union_run,
    _visit_order,
    _wide_group_cuts,
)
from shuffledp.bounds.blanket.pool import (  # noqa: F401 (tests import them from here)
    MAX_CLASSES,
    _class_starts,
    _coarsened,
    _floored,
    _merged,
    _merged_pool,
)
from shuffledp.bounds.blanket.solve import _solve_group
from shuffledp.bounds.blanket.two_region import two_region_choice
from shuffledp.bounds.clones.aware import (
    VICTIM_GROUPS,
    UserBins,
    VictimGroup,
    _plan_of,
    group_edges,
    runs_in_groups,
)
from shuffledp.budgets import BudgetProfile, profile_digest
from shuffledp.caching import frozen_value, lru_get, lru_put, register_mapping
from shuffledp.errors import ParameterRegimeError
from shuffledp.families import Family, get_family

__all__ = ["blanket_delta", "blanket_eps", "blanket_plan", "blanket_group_delta", "SD_STEPS",
           "MAX_TIER_GROUPS"]

#: Lattice steps per standard deviation of the privacy amplification variable.
SD_STEPS = 16
#: Largest number of lattice points of X's law (a coarser step beyond).
MAX_POINTS = 1 << 13
#: The screen before a case's evaluation: the amplification sum with the pool's masses rounded
#: down onto SCREEN_CLASSES classes (``_class_starts``), an upper bound of the case (fewer
#: blanket reports) about 3% above the full one at a third of its cost; a case whose screen is
#: at most the running maximum (or what the group needs) is not evaluated with the MAX_CLASSES
#: classes.  Only laws of more than SCREEN_MIN_POINTS points and pools of at most
#: SCREEN_MAX_REPORTS expected blanket reports are screened (larger pools take the product's
#: series, whose cost hardly depends on the classes: at 10^5 and 10^6 users the screen cost as
#: much as the evaluation), for the families with ``Family.blanket_screen`` (the Gaussian
#: ones).  Time only.  The same value estimates each choice before the choices are ranked
#: (the full value, kept, beyond SCREEN_MAX_REPORTS).
SCREEN_CLASSES, SCREEN_MIN_POINTS, SCREEN_MAX_REPORTS = 16, 1024, 1000.0
#: A check of a group against the running maximum (``worst > 0``) first tries one choice, its
#: cases' Chernoff bounds and, where they are above what the group needs, the amplification sum
#: on a lattice CHECK_COARSEN times coarser (an upper bound of the case, as the screen's), then
#: on the case's fine cells (or its own lattice): when all are at most what the group needs,
#: the group cannot raise the maximum (time only).
CHECK_COARSEN = 16
#: ... evaluated in full only when the pieces of the deciding wide group are all below it by
#: this share (of eps for eps(delta), of delta for delta(eps)); time only.
NOISE_PROBE_GAIN = 0.05
#: The two-region choice is evaluated only when its high users' expected blanket reports are
#: at least this share of the low users', for at least this many users, and when its additive
#: charge is below the best value so far (it only costs time otherwise).
TWO_REGION_MIN_HIGH = 0.25
TWO_REGION_MIN_USERS = 20
#: The cuts below heavy tiers (``groups._heavy_cuts``) are made on profiles with more
#: distinct budgets than this (a few tiers keep their groups).
HEAVY_MIN_TIERS = 64
#: Families computed per budget tier accept at most this many tiers (``"tiers_then_ranges"``:
#: one group per tier up to this many, ranges of tiers beyond).
MAX_TIER_GROUPS = 256
#: Profiles with more distinct budgets are binned (ranges of tiers per user class).
BIN_MIN_TIERS = 32_768
_BINS = 8_192
#: Within this relative distance of the eps where a group's two-region choices were all
#: evaluated, only the winner is (blanket_eps; time only).
MEMO_RTOL = 0.1
#: A deep truncation of the two-region blanket (``TwoRegionCase.deep``) is evaluated only when
#: a nearer truncation's value came within this factor of its own charge, or its charge alone
#: exceeded the best value so far (the truncation's floor binds: time only).
DEEP_RATIO = 10.0
#: Relative tolerance of a group's solve (every group is certified where its bound <= delta).
GROUP_RTOL = 1e-6
#: A probe of a group's solve in :func:`_blanket_eps` may stop at a value this share of the
#: way from the group's local delta to the target (time only: the solve needs its sign
#: against the target; near the crossing the values are full evaluations).
SOLVE_FAR = 1e-3
#: A probe of a group's solve stops each choice at a value above PROBE_CAP times the target
#: (of the amplification sum): it cannot certify, and its exact value only guides the probes
#: far above the target (time only: the sign of every probe is exact).
PROBE_CAP = 4.0
#: A pass of group checks in :func:`_blanket_eps` stops at the ``FAR_FAILS``-th group whose
#: value exceeds ``FAR_VALUE`` times delta, and the largest failure is solved (time only: a
#: failing check is the costly kind, every choice of blanket must be evaluated to show it).
#: Measured (Laplace, delta = 1e-6, n = 10^4, paper profiles): with 10 and 4, normal_1.5_0.5
#: checked all 29 groups below the top one at the first crossing, every one failing by less
#: than 10 times (25.9 s); with 2 and 1 the top group is solved at once (12.2 s).
FAR_VALUE = 2.0
FAR_FAILS = 1
#: After a group check whose value was at most ``UNION_BELOW`` times delta,
#: :func:`_blanket_eps` checks the next pending group and the pending groups adjacent to it
#: whose budgets span at most ``Family.blanket_union_ratio`` (at most ``UNION_MAX`` groups)
#: as one group first (``groups._union_run``, ``groups._union``; time only).
UNION_BELOW = 0.5
#: Values of the latest evaluations, by (profile digest, eps, family, groups): the eps
#: inversions of ``blanket`` and of ``tightest`` (which takes it as a member) share them.
_VALUES: OrderedDict[tuple, float] = OrderedDict()
_VALUES_SIZE = 4096
register_mapping("blanket.values", _VALUES)
#: eps(delta) of the latest inversions, by (profile digest, delta, family, groups): a
#: ``Bound.evaluate`` at a delta and ``Bound.eps`` at the same delta share one solve.
_EPS: OrderedDict[tuple, float] = OrderedDict()
_EPS_SIZE = 1024
register_mapping("blanket.eps", _EPS)


def blanket_plan(profile: BudgetProfile, family: Family, groups: int = VICTIM_GROUPS,
                 refined: bool = False) -> tuple[list[VictimGroup], UserBins]:
    """The victim groups and user classes of ``profile`` for ``family`` (module docstring);
    ``refined``: the noise-scaled families' groups that span a wide budget ratio cut further
    (:func:`_wide_group_cuts`)."""
    if family.noise_scaled:
        # the noise-scaled families (the Gaussian): the victim groups and classes of the
        # mechanism-aware clones, with their ranges of sigma (victims in the order of sigma)
        if refined and NOISE_WIDE_RATIO > 0.0:
            plan = _plan_of(profile, family, groups,
                            _wide_group_cuts,
                            ("wide", NOISE_WIDE_RATIO, NOISE_GROUP_RATIO, NOISE_MAX_PIECES))
        else:
            plan = _plan_of(profile, family, groups)
        bins = plan.bins
        if bins.counts.size > BIN_MIN_TIERS:  # (time only: coarser classes, smaller masses)
            bins = _coarsened(bins, -(-bins.counts.size // _BINS))
        return list(plan.groups), frozen_value(bins)
    t = profile.tiers  # sorted by eps, then delta
    eps, delta, counts = t.eps, t.delta, t.counts
    size = eps.size
    per_tier = family.blanket_groups == "tiers" or (
        family.blanket_groups == "tiers_then_ranges" and size <= MAX_TIER_GROUPS)
    if per_tier:
        if size > MAX_TIER_GROUPS:
            raise ParameterRegimeError(
                f"the blanket of {family} is computed per budget tier: at most "
                f"{MAX_TIER_GROUPS} distinct budgets, got {size}")
        edges = np.arange(size + 1, dtype=np.int64)
    else:
        edges = group_edges(counts, groups)
        levels = family.blanket_group_levels(eps)
        if levels is not None:  # the family's own scale: a cut where its integer part moves
            edges = np.union1d(edges, np.flatnonzero(np.diff(np.floor(levels))) + 1)
        elif family.blanket_ratio_groups:
            edges = np.union1d(edges, _ratio_cuts(eps, counts, family.blanket_ratio_share))
        if size > HEAVY_MIN_TIERS:
            edges = np.union1d(edges, _heavy_cuts(eps, counts))
    out = [VictimGroup(int(a), int(b), int(counts[a:b].sum()), float(eps[a:b].min()),
                       float(eps[a:b].max()), float(delta[a:b].max()))
           for a, b in zip(edges[:-1], edges[1:], strict=True)]
    if size <= BIN_MIN_TIERS:
        classes = UserBins(counts.astype(np.int64), eps, eps, delta, edges, True)
        return out, frozen_value(classes)
    first, last, cls_edges = runs_in_groups(edges, size, -(-size // _BINS))
    classes = UserBins(np.add.reduceat(counts, first).astype(np.int64), eps[first], eps[last],
                      np.maximum.reduceat(delta, first), cls_edges, False)
    # (read-only: the pools' cache knows them by identity)
    return out, frozen_value(classes)


def _case_law(cells: Any, coarsen: float = 1.0):
    mean, var = cells.moments()
    sd = math.sqrt(var) if var > 0 else 1.0
    width = float(cells.hi.max() - cells.lo.min())
    step = max(sd / SD_STEPS, width / MAX_POINTS, 1e-12) * coarsen
    return lattice_law(cells, step)


def _few_classes_value(law: Any, gam: NDArray, cnt: NDArray, charge: float) -> float:
    """The case's amplification bound with its pool rounded down onto at most
    ``SCREEN_CLASSES`` classes, plus its charge: an upper bound of the case (Theorem 6 (ii)),
    cheaper than the one with all the pool's classes."""
    if gam.size > SCREEN_CLASSES:
        st = _class_starts(gam, cnt, SCREEN_CLASSES)
        gam, cnt = gam[st], np.add.reduceat(cnt, st)
    return amplification_bound(law, gam, cnt).value + charge


def _screen_case(case: Any, classes: UserBins, a: int, b: int, n_others: float,
                 victims: dict, merges: dict, by_choice: dict, floors: dict) -> None:
    """One case of :func:`_group_value` screened: its floored cells, lattice law, merged pool
    and Chernoff bound (plus charge) appended to ``by_choice[case.choice]``, or its charge to
    ``floors`` when ``l <= 0`` everywhere (A = 0)."""
    cells = _floored(case.law_cells, n_others)
    if cells is None:  # l <= 0 everywhere: A = 0, the case's value its charge
        by_choice.setdefault(case.choice, [])
        floors[case.choice] = max(floors.get(case.choice, 0.0), case.charge)
        return
    law = _case_law(cells)
    if case.scaled is not None:
        # masses = base * factor elementwise: merging base once gives these masses'
        # classes times the factor (float multiplication by factor > 0 is monotone, so
        # a value rounded down for base stays below the scaled one)
        base, factor = case.scaled
        key = (id(base), case.choice)
        if key not in merges:  # (the cases of a choice share a base: merged once a call)
            merges[key] = _merged_pool(np.asarray(base, dtype=np.float64), classes.counts,
                                       victims[case.choice])
        gam, cnt = merges[key][0] * factor, merges[key][1]
    else:
        # masses not proportional to the choice's others: this case's own victim (the
        # user of the group with the largest mass in it) leaves the pool
        own = np.asarray(case.masses, dtype=np.float64)
        gam, cnt = _merged_pool(own, classes.counts, a + int(np.argmax(own[a:b])))
    by_choice.setdefault(case.choice, []).append(
        (law, gam, cnt, chernoff_bound(law, gam, cnt) + case.charge, case, cells))


def _group_value(family: Family, groups: list[VictimGroup], classes: UserBins, gi: int, eps: float,
                 worst: float, memo: dict | None = None, probe: bool = False,
                 quick: bool = False, cap: float = math.inf) -> float:
    g = groups[gi]
    if eps >= g.eps_hi:  # every victim of the group is (eps, delta_v)-LDP: post-processing
        return g.delta_hi
    if g.eps_hi < family.blanket_eps_floor:
        # budgets below the family's blanket numerics: the victims' local guarantee alone
        # (post-processing), that of (eps_hi, delta_hi)-randomized response
        from shuffledp.bounds.base import ldp_delta

        return float(min(1.0, ldp_delta(g.eps_hi, g.delta_hi, eps)))
    cases = family.blanket_cases(eps, g, classes)
    # within MEMO_RTOL of the eps where the group's choices were all evaluated, only the one
    # that won there is (any subset of the choices gives a valid bound: time only)
    hit = memo.get(("choice", gi)) if memo is not None else None
    lone = (hit is not None and abs(eps - hit[0]) <= MEMO_RTOL * hit[0]
            and any(c.choice == hit[1] for c in cases))
    if lone:
        cases = [c for c in cases if c.choice == hit[1]]
    if not cases:
        # (the two-region choices are used from TWO_REGION_MIN_USERS users on: not built
        # below; built here only when there is no other case, else after a check)
        two = _two_region_cases(family, eps, g, classes)
        if not two:
            return 1.0
    # the victim: one user of the group leaves the pool, per choice of blanket the one with
    # the largest mass in it (any victim of the group then sees a pool at least as large)
    a, b = int(classes.edges[gi]), int(classes.edges[gi + 1])
    top: dict[int, NDArray[np.float64]] = {}
    for c in cases:
        m = np.asarray(c.masses, dtype=np.float64)[a:b]
        top[c.choice] = m if c.choice not in top else np.maximum(top[c.choice], m)
    # each choice's victim (its pool: every user but it)
    victims = {ch: a + int(np.argmax(m)) for ch, m in top.items()}
    d_v = g.delta_hi
    if d_v >= 1.0:
        return 1.0
    need = (worst - d_v) / (1.0 - d_v)  # an A at most this cannot raise the maximum
    n_others = float(classes.counts.sum()) - 1.0
    by_choice: dict[int, list] = {}
    floors: dict[int, float] = {}  # per choice, the largest value of its cases with A = 0
    merges: dict[tuple[int, int], tuple[NDArray, NDArray]] = {}
    for c in cases:  # (the choices' order, which breaks ties of the ranking below)
        by_choice.setdefault(c.choice, [])
    done: set[int] = set()

    def screen(idx: list[int]) -> None:
        for i in idx:
            if i not in done:
                done.add(i)
                _screen_case(cases[i], classes, a, b, n_others, victims, merges, by_choice,
                             floors)

    known: dict[int, float] = {}  # the cases evaluated in full
    fine_of: dict[int, tuple] = {}  # per case: its law for the exact phase, its best bound

    def exact_law(t: tuple) -> tuple:
        """(law, bound): the case's law for the exact phase (of its fine cells, if it has
        any; None when they give A = 0) and the smallest bound known so far."""
        if id(t) not in fine_of:
            law, gam, cnt, ch, case, _ = t
            if case.refine is not None:  # the fine cells for the exact evaluation
                fine = _floored(case.refine(0), n_others)
                if fine is None:
                    law, ch = None, case.charge
                else:
                    law = _case_law(fine)
                    ch = min(ch, chernoff_bound(law, gam, cnt) + case.charge)
            fine_of[id(t)] = (law, ch)
        return fine_of[id(t)]

    def case_value(t: tuple, skip: float, estimate: bool = False) -> float:
        """The case's value, the smallest of its bounds (Chernoff, the fine cells' Chernoff,
        the screen, the amplification sum), or one <= skip as soon as a bound is; with
        ``estimate``, the smallest of its bounds up to the screen (the full value for pools
        beyond SCREEN_MAX_REPORTS, where the screen costs as much)."""
        if id(t) in known:
            return known[id(t)]
        if t[3] <= skip:
            return t[3]
        gam, cnt, case = t[1], t[2], t[4]
        law, ch = exact_law(t)
        if law is None or ch <= skip:
            return ch
        few = gam.size > SCREEN_CLASSES and float(np.dot(gam, cnt)) <= SCREEN_MAX_REPORTS
        if (estimate and (few or gam.size <= SCREEN_CLASSES)) or (
                few and family.blanket_screen and law.pmf.size > SCREEN_MIN_POINTS):
            ch = min(ch, _few_classes_value(law, gam, cnt, case.charge))
            fine_of[id(t)] = (law, ch)
            if ch <= skip or estimate:
                return ch
        known[id(t)] = min(ch, amplification_bound(law, gam, cnt).value + case.charge)
        return known[id(t)]

    if need > 0.0 and cases:
        # a check: when every case of one choice is at most need, the group cannot raise the
        # maximum and the other choices need no screening (time only: the value returned is
        # then at most ``worst``, as the full evaluation's would be).  The choice tried is
        # the one whose first case (the family's widest pairs) has the smallest Chernoff
        # bound; its cases above need, the largest Chernoff bound first (a failing choice
        # fails early), are bounded on a lattice CHECK_COARSEN times coarser, then on their
        # fine cells if they have any (the exact phase's law and bounds, kept for it), else
        # on their own lattice (upper bounds of the case, as any step gives)
        of: dict[int, list[int]] = {}
        for i, c in enumerate(cases):
            of.setdefault(c.choice, []).append(i)
        screen([idx[0] for idx in of.values()])
        leads = [min(of, key=lambda ch: max([t[3] for t in by_choice[ch]]
                                            + [floors.get(ch, 0.0)]))]
        last = memo.get(("choice", "last")) if memo is not None else None
        if last is not None and last != leads[0] and last in of and not (probe or quick):
            leads.append(last)  # (the choice of the latest full evaluation, second)
        for lead in leads:
            screen(of[lead])
            top = floors.get(lead, 0.0)
            for t in sorted(by_choice[lead], key=lambda t: -t[3]):
                v = t[3]
                law, gam, cnt, _, case, cells = t
                for step in ("coarse", "fine" if case.refine is not None else "own"):
                    if v <= need or probe:  # (a solve's probe: the Chernoff bounds only)
                        break
                    if step == "fine":
                        v = min(v, case_value(t, need))
                    else:  # (the coarse lattice built only when needed)
                        lat = _case_law(cells, CHECK_COARSEN) if step == "coarse" else law
                        v = min(v, amplification_bound(lat, gam, cnt).value + case.charge)
                top = max(top, v)
                if top > need:
                    break
            if top <= need:
                return float(min(1.0, d_v + (1.0 - d_v) * top))
    if quick:  # (a check of a union of groups: its lead choice alone, else 1, a valid bound)
        return 1.0
    if cases:
        two = _two_region_cases(family, eps, g, classes)
    screen(list(range(len(cases))))
    # every choice (of more than one) gets an estimate of its value: its case of largest
    # Chernoff bound on its exact phase's law with few classes (:func:`_few_classes_value`,
    # itself a bound of the case, kept); the choices are evaluated in the order of these,
    # each stopping as soon as one of its cases reaches the best value so far, and none whose
    # estimate does (any subset of the choices gives a valid bound: the estimates only
    # decide which are evaluated, docs/theory.md 15.1)
    ranked = []
    for choice, laws in by_choice.items():
        est = floors.get(choice, 0.0)
        if laws and len(by_choice) > 1:
            est = max(est, case_value(max(laws, key=lambda t: t[3]), -math.inf, True))
        ranked.append((est, choice, laws))
    # (``cap``, a solve's probe: a choice stops at a value above it, which it cannot certify;
    # the group's value is then some value above cap, its sign against the target exact)
    best, best_choice, capped = math.inf, None, math.inf
    for est, choice, laws in sorted(ranked, key=lambda z: z[0]):
        if est >= best or best <= need:
            break
        value = floors.get(choice, 0.0)
        for t in sorted(laws, key=lambda t: -t[3]):
            skip = max(value, need)
            v = case_value(t, skip)
            if v > skip:
                value = v
            if value >= best or value > cap:
                break
        if value > cap:
            capped = min(capped, value)
        elif value < best:
            best, best_choice = value, choice
    if (memo is not None and not lone and best_choice is not None and len(by_choice) > 1
            and capped == math.inf):
        memo[("choice", gi)] = (eps, best_choice)
        memo[("choice", "last")] = best_choice
    best = min(best, capped)
    if two:
        by_two: dict[int, list] = {}
        for case in two:
            by_two.setdefault(case.choice, []).append(case)
        order, full = _two_region_order(list(by_two), memo, gi, eps)
        # the deep truncations last, and only where a nearer one came within DEEP_RATIO of
        # its charge (the truncation's floor binds; time only); a memo's lone choice is run
        if len(order) > 1:
            order = sorted(order, key=lambda ch: by_two[ch][0].deep)
        won, binds = None, len(order) == 1
        for ch in order:  # (one choice per centre)
            cases_t = by_two[ch]
            if best <= need:
                continue
            if cases_t[0].charge >= min(best, 1.0):
                binds = binds or not cases_t[0].deep  # (its truncation alone is too costly)
                continue
            if cases_t[0].deep and not binds:
                continue
            v = two_region_choice(cases_t, classes, a, b, min(best, 1.0), need,
                                  TWO_REGION_MIN_HIGH)
            if v <= DEEP_RATIO * cases_t[0].charge:
                binds = True
            if v < best:
                best, won = v, ch
        if memo is not None and full and won is not None:
            memo[gi] = (eps, won)
            memo["last"] = won
    return float(min(1.0, d_v + (1.0 - d_v) * min(best, 1.0)))


def _two_region_cases(family: Family, eps: float, g: VictimGroup, classes: UserBins) -> list:
    """The group's two-region cases (none below ``TWO_REGION_MIN_USERS`` users)."""
    if float(classes.counts.sum()) < TWO_REGION_MIN_USERS:
        return []
    return family.blanket_two_region_cases(eps, g, classes)


def _two_region_order(choices: list[int], memo: dict | None, gi: int, eps: float
                      ) -> tuple[list[int], bool]:
    """The two-region choices to evaluate, in order, and whether that is all of them: only
    the one that won the group's last evaluation of all of them when ``eps`` is within
    ``MEMO_RTOL`` of its eps (the solve's later steps: any subset of the choices gives a
    valid bound, this only saves time), else all, the latest winner of any group first."""
    if memo is None:
        return choices, True
    hit = memo.get(gi)
    if hit is not None and hit[1] in choices and abs(eps - hit[0]) <= MEMO_RTOL * hit[0]:
        return [hit[1]], False
    last = memo.get("last")
    if last in choices:
        return [last] + [c for c in choices if c != last], True
    return choices, True


def blanket_delta(*, profile: BudgetProfile, eps: float, mechanism: Any = "binary_rr",
                  victim_groups: int = VICTIM_GROUPS) -> float:
    """delta(eps) of the blanket decomposition for ``profile`` and the randomizer family
    ``mechanism`` (module docstring).

    >>> from shuffledp import BudgetProfile
    >>> d = blanket_delta(profile=BudgetProfile.identical(n=10_000, eps0=1.0), eps=0.05,
    ...                   mechanism="laplace")
    >>> 0.0 < d < 1e-6
    True
    """
    family = get_family(mechanism)
    key = (profile_digest(profile), float(eps), family.spec, int(victim_groups))
    got = lru_get(_VALUES, key)
    if got is not None:
        return got
    return lru_put(_VALUES, key, _blanket_delta(profile, family, float(eps), victim_groups),
                   _VALUES_SIZE)


def blanket_group_delta(*, profile: BudgetProfile, eps: float, mechanism: Any, group: int,
                        victim_groups: int = VICTIM_GROUPS) -> float:
    """delta(eps) of the blanket bound for the victims of one group (index ``group`` of
    :func:`blanket_plan`): Theorem 6 (iii), the group's own bound."""
    family = get_family(mechanism)
    groups, classes = blanket_plan(profile, family, victim_groups)
    if not 0 <= int(group) < len(groups):
        raise ValueError(f"group must be in [0, {len(groups) - 1}], got {group!r}")
    return _group_value(family, groups, classes, int(group), float(eps), 0.0)


def _wide(group: VictimGroup) -> bool:
    """Whether a noise-scaled family's victim group spans a budget ratio above
    ``NOISE_WIDE_RATIO`` (the refined plan cuts it)."""
    return NOISE_WIDE_RATIO > 0.0 and group.eps_lo > 0.0 and (
        group.eps_hi > NOISE_WIDE_RATIO * group.eps_lo)


def _blanket_delta(profile: BudgetProfile, family: Family, eps: float,
                   victim_groups: int, refined: bool = False) -> float:
    groups, classes = blanket_plan(profile, family, victim_groups, refined)
    worst, top = 0.0, None
    for gi in _visit_order(len(groups), family.blanket_top_first):
        v = _group_value(family, groups, classes, gi, eps, worst)
        if v > worst:
            worst, top = v, gi
        if worst >= 1.0:
            break
    worst = float(min(worst, 1.0))
    if (family.noise_scaled and not refined and top is not None and _wide(groups[top])
            and worst > groups[top].delta_hi
            and _refinement_pays(profile, family, victim_groups, groups[top], eps,
                                 worst * (1.0 - NOISE_PROBE_GAIN))):
        # the largest group spans a wide budget ratio and its pieces are below it: the
        # refined plan, and the smaller of the two bounds (each is valid; docs/theory.md
        # 15.3 (N10))
        worst = min(worst, _blanket_delta(profile, family, eps, victim_groups, True))
    return worst


def _refinement_pays(profile: BudgetProfile, family: Family, victim_groups: int,
                     group: VictimGroup, eps: float, below: float) -> bool:
    """Whether every victim group of the refined plan has a bound at most ``below`` at
    ``eps``: the pieces of the coarse group ``group`` first (the largest budgets first), then
    the others, stopping at the first that does not.  Only then is the refined plan evaluated
    in full (time only: either plan's bound is valid)."""
    groups, classes = blanket_plan(profile, family, victim_groups, True)
    pieces = [i for i, g in enumerate(groups) if group.start <= g.start and g.stop <= group.stop]
    rest = [i for i in _visit_order(len(groups), family.blanket_top_first) if i not in pieces]
    for i in sorted(pieces, key=lambda i: -groups[i].eps_hi) + rest:
        if _group_value(family, groups, classes, i, eps, below) > below:
            return False
    return True


def blanket_eps(*, profile: BudgetProfile, delta: float, mechanism: Any = "binary_rr",
                victim_groups: int = VICTIM_GROUPS) -> float:
    """eps(delta) of the blanket bound: ``max`` over the victim groups of each group's eps.

    ``delta(eps) = max_G delta_G(eps)``, so the smallest eps with ``delta(eps) <= delta`` is the
    largest of the groups' (each group's bound is non-increasing in eps).  The first group of
    the order of :func:`_blanket_delta` is solved (:func:`_solve_group`, to a relative
    ``GROUP_RTOL``); every other is checked at the running eps: one whose bound is at most
    ``delta`` (often settled by its Chernoff bound alone) is passed, the others are solved one
    by one from there, the largest value first, the rest checked again after each solve (a
    pass of checks stops at the ``FAR_FAILS``-th value above ``FAR_VALUE`` times delta).

    Each group is certified at some eps_G <= the returned eps (its computed bound at eps_G is
    at most delta); its victims' true divergence is non-increasing in eps, so it is at most
    delta at the returned eps as well, whether or not the computed bound is monotone.  A
    group whose local delta is at least ``delta`` cannot be certified this way: the shared
    bisection of :func:`shuffledp.numerics.eps_from_delta` on the whole bound is used.
    """
    family = get_family(mechanism)
    key = (profile_digest(profile), float(delta), family.spec, int(victim_groups))
    got = lru_get(_EPS, key)
    if got is not None:
        return got
    eps, decider = _blanket_eps(profile, family, float(delta), mechanism, int(victim_groups))
    if (family.noise_scaled and decider is not None and _wide(decider)
            and _refinement_pays(profile, family, int(victim_groups), decider,
                                 eps * (1.0 - NOISE_PROBE_GAIN), float(delta))):
        # the deciding group spans a wide budget ratio and its pieces are certified a little
        # below: the refined plan, and the smaller eps (each plan certifies its own;
        # docs/theory.md 15.3 (N10))
        eps = min(eps, _blanket_eps(profile, family, float(delta), mechanism,
                                    int(victim_groups), True)[0])
    return lru_put(_EPS, key, eps, _EPS_SIZE)


def _blanket_eps(profile: BudgetProfile, family: Family, delta: float, mechanism: Any,
                 victim_groups: int, refined: bool = False
                 ) -> tuple[float, VictimGroup | None]:
    """(eps, the group whose solve set it, None if no solve did) for the plan of
    :func:`blanket_plan` (``refined`` as there)."""
    from shuffledp.bounds.base import INVERSION_ATOL, INVERSION_RTOL
    from shuffledp.numerics import eps_from_delta

    groups, classes = blanket_plan(profile, family, victim_groups, refined)

    def shared() -> float:
        try:
            return eps_from_delta(
                lambda e: blanket_delta(profile=profile, eps=e, mechanism=mechanism,
                                        victim_groups=victim_groups),
                delta, side="upper", eps_max=1e3, rtol=INVERSION_RTOL, atol=INVERSION_ATOL)
        except ValueError as err:
            raise ParameterRegimeError(
                f"blanket cannot certify delta = {delta:g} for any eps <= 1000") from err

    if any(g.delta_hi >= delta for g in groups):
        return shared(), None  # (blanket_delta takes the refined plan where it applies)
    eps = 0.0
    decider = None
    memo: dict = {}  # the two-region choice that won each group's last full evaluation

    def value(gi: int, e: float, worst: float, probe: bool = False) -> float:
        d_g = groups[gi].delta_hi  # (a probe's choices stop above PROBE_CAP times the target)
        cap = PROBE_CAP * (delta - d_g) / (1.0 - d_g) if probe else math.inf
        return _group_value(family, groups, classes, gi, e, worst, memo, probe, cap=cap)

    def solve(gi: int, e: float, v_e: float | None = None) -> float:
        # (a probe whose value is at most SOLVE_FAR of delta's distance to the group's local
        # delta may stop there: its sign against delta is all it must give; time only)
        d_g = groups[gi].delta_hi
        far = d_g + SOLVE_FAR * (delta - d_g)
        return _solve_group(lambda x: value(gi, x, far, True), delta, e, groups[gi].eps_hi,
                            max(INVERSION_RTOL, GROUP_RTOL), INVERSION_ATOL,
                            floor=groups[gi].delta_hi, value_a=v_e)

    # the first group of the visit order is solved; every other is checked at the running
    # eps, and the one of largest value above delta is solved, the others checked again
    # after each solve.  A pass of checks stops at the FAR_FAILS-th group whose value is
    # more than FAR_VALUE times delta: far below a group's crossing every other group fails
    # too, at a full evaluation's cost, and the largest failure seen is solved at once (a
    # group's value at most delta needs no solve; the order only saves time; a worst of
    # delta in the checks: any value > delta may be returned as 1)
    order = _visit_order(len(groups), family.blanket_top_first)
    if order and eps < groups[order[0]].eps_hi:
        eps, decider = solve(order[0], eps), groups[order[0]]
    pending = order[1:]
    ratio = family.blanket_union_ratio
    unions = family.blanket_groups != "tiers" and ratio > 1.0
    while pending:
        fails, far, unchecked = [], 0, []
        # after a check whose value was at most UNION_BELOW times delta, the next group and
        # the pending groups adjacent to it are checked as one group first (a run of
        # _union_run; time only)
        settled: set[int] = set()
        streak, tried = False, -1
        for k, gj in enumerate(pending):
            if gj in settled:
                continue
            if eps < groups[gj].eps_hi:
                if unions and streak and gj > tried:
                    run = _union_run(groups, gj, set(pending[k:]) - settled, eps, ratio)
                    tried = run[-1]
                    u = math.inf
                    if len(run) > 1:
                        # (a union's bound covers each of its groups' victims, Theorem 6 (iii))
                        ug, uc = _union(groups, classes, run[0], run[-1])
                        u = _group_value(family, ug, uc, 0, eps, delta, None, quick=True)
                    if u <= delta:
                        settled.update(run)
                        streak = u <= UNION_BELOW * delta
                        continue
                v = value(gj, eps, delta)
                streak = v <= UNION_BELOW * delta
                if v > delta:
                    fails.append((v, gj))
                    far += v > FAR_VALUE * delta
                    if far >= FAR_FAILS:
                        unchecked = [g for g in pending[k + 1:] if g not in settled]
                        break
        fails.sort(key=lambda t: -t[0])
        if fails:
            eps, decider = solve(fails[0][1], eps, fails[0][0]), groups[fails[0][1]]
        pending = [gj for _, gj in fails[1:]] + unchecked
    return eps, decider
