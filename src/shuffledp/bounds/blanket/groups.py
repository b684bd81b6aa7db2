"""The ``blanket`` bound's victim groups: the cuts of the plan below heavy tiers, at budget
ratios and inside the noise-scaled families' wide groups, the order in which the groups are
evaluated, and unions of adjacent groups.

Any partition of the victims is valid, and a group's bound covers every victim of the group
whatever the other groups are (docs/theory.md 15.1, Theorem 6 (iii)): the functions here only
decide the values' tightness and the time (:mod:`shuffledp.bounds.blanket.bound` uses them).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from shuffledp.bounds.clones.aware import UserBins, VictimGroup

__all__: list[str] = []

#: Largest budget ratio within one victim group (beyond the equal-count groups), among the
#: lowest ``Family.blanket_ratio_share`` of the users (``_ratio_cuts``).
GROUP_RATIO = 1.05
#: Tiers holding at least this share of the users are *heavy*: the victims just below one get
#: groups ending at the budgets eps_t (1 - r), r in HEAVY_STEPS (``_heavy_cuts``).  Measured
#: (Laplace, delta = 1e-6, normal_0.75_0.5 with 30% of the users at its top budget 1):
#: eps 0.05203 -> 0.04919 at n = 10^4, 0.01649 -> 0.01552 at 10^5.
HEAVY_SHARE = 0.05
HEAVY_STEPS = (0.1, 0.05, 0.025, 0.0125, 0.00625, 0.003125)
#: The most adjacent groups checked as one (``_union_run``; time only).
UNION_MAX = 8
#: The noise-scaled families' victim groups (the mechanism-aware clones' equal-count groups):
#: one that spans a budget ratio above NOISE_WIDE_RATIO is cut where the budget crosses its
#: smallest times ``NOISE_GROUP_RATIO**k`` (:func:`_wide_group_cuts`; 0 for no cuts, as
#: ``bound.NOISE_WIDE_RATIO`` reads it).
NOISE_WIDE_RATIO = 1.2
NOISE_GROUP_RATIO = 1.05
NOISE_MAX_PIECES = 10


def _heavy_cuts(eps: NDArray[np.float64], counts: NDArray[np.int64]) -> NDArray[np.int64]:
    """Tier indices where the budget crosses ``eps_t (1 - r)`` for ``r`` in ``HEAVY_STEPS``,
    below every tier ``t`` holding at least ``HEAVY_SHARE`` of the users: the victims just
    below a heavy tier get narrow groups of their own (docs/theory.md 15.4, "What limits the
    Laplace ratio now", (i)).  Any partition of the victims is valid; a narrower group's
    victims are a subset of a wider one's, with masses taken over fewer corners."""
    total = float(counts.sum())
    out: set[int] = set()
    for t in np.flatnonzero(counts >= HEAVY_SHARE * total):
        if t == 0 or not eps[t] > 0.0:
            continue
        for r in HEAVY_STEPS:
            c = int(np.searchsorted(eps, eps[t] * (1.0 - r), side="left"))
            if 0 < c < eps.size:
                out.add(c)
    return np.asarray(sorted(out), dtype=np.int64)


def _ratio_cuts(eps: NDArray[np.float64], counts: NDArray[np.int64],
                share: float) -> NDArray[np.int64]:
    """Tier indices where the budget crosses ``eps_min * GROUP_RATIO**k`` (k = 1, 2, ...)
    among the lowest ``share`` of the users, so that no victim group there spans a
    larger budget ratio: a group's own users get no mass against its victims in the
    families whose users cover only the victims above their budget, and every victim is
    taken at the group's largest budget; above, the users below a group outnumber those in
    it and equal-count groups lose little.  Budgets <= 0 stay with the first group."""
    pos = eps > 0
    if not np.any(pos):
        return np.zeros(0, dtype=np.int64)
    base = float(eps[pos].min())
    # (a difference of logs: eps / base overflows for base near the smallest float)
    level = np.where(pos, np.floor((np.log(np.maximum(eps, base)) - math.log(base))
                                   / math.log(GROUP_RATIO)), 0.0)
    cuts = np.flatnonzero(np.diff(level)) + 1
    below = np.cumsum(counts)[cuts - 1]  # users below each cut
    return cuts[below < share * float(counts.sum())].astype(np.int64)


def _visit_order(size: int, top_first: bool = False) -> list[int]:
    """The victim groups in the order they are evaluated: the smallest budgets, the largest,
    then the rest (the worst group is usually at an end, and it prunes the others early);
    the largest first for the families where it is usually the worst
    (``Family.blanket_top_first``).  The order only changes the time."""
    ends = [size - 1, 0] if top_first else [0, size - 1]
    return list(dict.fromkeys(i for i in [*ends, *range(1, size - 1)] if i >= 0))


def _union(groups: list[VictimGroup], classes: UserBins, i: int, j: int
           ) -> tuple[list[VictimGroup], UserBins]:
    """The victim groups ``i..j`` (adjacent) as one group, on the same user classes: its
    bound covers every victim of each of them (Theorem 6 (iii) holds for any set of users;
    docs/theory.md 15.1, "Unions of groups")."""
    gs = groups[i:j + 1]

    def ends(f: Any, vals: list[float]) -> float:
        vals = [v for v in vals if not math.isnan(v)]
        return f(vals) if vals else math.nan

    g = VictimGroup(gs[0].start, gs[-1].stop, sum(x.users for x in gs),
                    min(x.eps_lo for x in gs), max(x.eps_hi for x in gs),
                    max(x.delta_hi for x in gs), ends(min, [x.sigma_lo for x in gs]),
                    ends(max, [x.sigma_hi for x in gs]))
    edges = np.asarray([classes.edges[i], classes.edges[j + 1]], dtype=np.int64)
    return [g], dataclasses.replace(classes, edges=edges)


def _union_run(groups: list[VictimGroup], gi: int, pending: set[int], eps: float,
               ratio: float) -> list[int]:
    """``gi`` and the groups ``gi + 1, gi + 2, ...`` while they are pending and above ``eps``,
    the run's budgets within ``ratio`` of each other, at most ``UNION_MAX`` groups."""
    run = [gi]
    while (len(run) < UNION_MAX and run[-1] + 1 in pending and run[-1] + 1 < len(groups)
           and eps < groups[run[-1] + 1].eps_hi
           and groups[run[-1] + 1].eps_hi <= ratio * groups[gi].eps_lo):
        run.append(run[-1] + 1)
    return run


def _wide_group_cuts(eps: NDArray[np.float64], edges: NDArray[np.int64]) -> NDArray[np.int64]:
    """Tier indices inside each equal-count victim group (tiers ``edges[g]:edges[g + 1]``,
    :func:`group_edges`) whose budgets
    span a ratio above ``NOISE_WIDE_RATIO``, where the budget crosses the group's smallest
    times ``NOISE_GROUP_RATIO**k``: a sparse range of budgets (a clipped profile's tail) then
    gets narrow groups, whose victims are taken at a budget near their own.  Any partition of
    the victims is valid (Theorem 6 (iii)); the order of the tiers need not be that of eps
    (each group's cuts come from its own budgets)."""
    out: list[NDArray[np.int64]] = []
    step = math.log(NOISE_GROUP_RATIO)
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        e = eps[a:b]
        lo, hi = float(e.min()), float(e.max())
        if not (lo > 0.0 and hi > NOISE_WIDE_RATIO * lo) or b - a < 2:
            continue
        # at most NOISE_MAX_PIECES pieces (equal in log budget) per group
        level = np.floor((np.log(e) - math.log(lo))
                         / max(step, math.log(hi / lo) / NOISE_MAX_PIECES))
        out.append(a + np.flatnonzero(np.diff(level)) + 1)
    return (np.concatenate(out) if out else np.zeros(0)).astype(np.int64)
