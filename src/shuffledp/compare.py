"""Evaluate several registered bounds side by side, with the validity cross-check.

:func:`compare_bounds` evaluates each requested bound on one profile and target, records the
reason for every bound that does not apply (:class:`~shuffledp.errors.ParameterRegimeError`),
and flags approximate results that claim *less* privacy loss than an exact lower bound
(``below_lower``): such a number is certainly not a valid guarantee for the randomizer behind
that lower bound.

>>> from shuffledp import BudgetProfile
>>> rows = compare_bounds(BudgetProfile.identical(n=1000, eps0=4.0), delta=1e-6,
...                       methods=["gdp"])
>>> rows[0].result.method, rows[0].ok
('gdp', True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shuffledp.bounds import BoundResult, get_bound, list_bounds
from shuffledp.errors import ParameterRegimeError
from shuffledp.params import BudgetProfile

__all__ = ["Evaluation", "compare_bounds"]


@dataclass(frozen=True)
class Evaluation:
    """A bound's result, or the reason it does not apply."""

    method: str
    kind: str
    result: BoundResult | None
    reason: str = ""
    below_lower: bool = False

    @property
    def ok(self) -> bool:
        return self.result is not None


def compare_bounds(
    profile: BudgetProfile,
    *,
    delta: float | None = None,
    eps: float | None = None,
    methods: Sequence[str] | None = None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Evaluation]:
    """Evaluate ``methods`` (default: every registered bound) at ``delta`` or ``eps``.

    ``options`` maps a method name to its keyword options (e.g.
    ``{"clones": {"clone": "standard"}}``).  Unknown names raise ``ValueError`` before
    anything is computed.  A bound outside its validity region gives an :class:`Evaluation`
    with ``result=None`` and the reason.
    """
    names = list(methods) if methods is not None else list_bounds()
    bounds = [get_bound(m) for m in names]  # fail fast on unknown names
    opts = dict(options or {})
    for m in opts:
        get_bound(m)
    out: list[Evaluation] = []
    for b in bounds:
        try:
            res = b.evaluate(profile=profile, delta=delta, eps=eps, **opts.get(b.name, {}))
        except ParameterRegimeError as err:
            out.append(Evaluation(method=b.name, kind=b.info.kind, result=None, reason=str(err)))
            continue
        out.append(Evaluation(method=b.name, kind=b.info.kind, result=res))
    lowers = [e.result for e in out if e.ok and e.kind == "lower"]
    if not lowers:
        return out
    flagged = []
    for e in out:
        if e.ok and e.kind == "approximate":
            assert e.result is not None
            if delta is not None:
                below = any(e.result.eps < lo.eps for lo in lowers)
            else:
                below = any(e.result.delta < lo.delta for lo in lowers)
            e = Evaluation(e.method, e.kind, e.result, e.reason, below_lower=below)
        flagged.append(e)
    return flagged
