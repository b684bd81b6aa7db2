"""The calibration memo: each calibration of an experiment run computed once.

A utility experiment needs the calibrated scale of a budget shape at a central target for many
(mechanism, sweep point) combinations, and the same calibration recurs: mechanisms with the
same local delta0 share it (unless the bound's options depend on the mechanism), and the point
``(fixed_n, fixed_eps)`` belongs to both sweeps.  :class:`CalibrationMemo` keys a calibration
by *everything it depends on*: the method, its options (including the mechanism's
randomizer spec when the bound takes such an option, see
:func:`shuffledp.experiments.estimation.bound_options`), the budget shape (the content digest
of its eps_i and delta_i arrays, :func:`shuffledp.budgets.profile_digest`, so n, the
profile's draws and delta0 are in it), the target eps and delta, and the search settings
(``rtol``, ``max_local_eps``, ``local_floor``).  A
:class:`~shuffledp.errors.ParameterRegimeError` (the bound cannot reach the target) is
memoized too and raised again on every hit.

The memo is an explicit object of one run (not a module-level cache): it holds no state
beyond the run that created it, so nothing needs clearing between runs.

``local_only`` (the reference without amplification) is calibrated by
:func:`shuffledp.calibration.local_only_scale`: local eps = central eps.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from shuffledp.budgets import BudgetProfile, profile_digest
from shuffledp.calibration import calibrate_scale, local_only_scale
from shuffledp.errors import ParameterRegimeError
from shuffledp.experiments.references import LOCAL_ONLY
from shuffledp.validation import describe

__all__ = ["Calibrated", "CalibrationMemo"]


@dataclass(frozen=True)
class Calibrated:
    """What a utility row needs of a calibration: the scale s of the shape, the central eps the
    method certifies at it (the target itself for ``local_only``), and whether the local cap
    was hit."""

    scale: float
    bound_eps: float
    capped: bool


def _options_key(options: Mapping[str, Any]) -> str:
    if not isinstance(options, Mapping):
        raise TypeError(f"options must be a mapping, got {describe(options)}")
    return json.dumps({str(k): options[k] for k in options}, sort_keys=True, default=repr)


class CalibrationMemo:
    """Memo of :func:`shuffledp.calibration.calibrate_scale` results (module docstring).

    ``hits`` and ``misses`` count lookups; ``len(memo)`` is the number of calibrations held.
    """

    def __init__(self) -> None:
        self._store: dict[tuple, Calibrated | ParameterRegimeError] = {}
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._store)

    @staticmethod
    def key(method: str, shape: BudgetProfile, *, eps: float, delta: float,
            options: Mapping[str, Any], rtol: float, max_local_eps: float,
            local_floor: bool) -> tuple:
        """The memo key of a calibration (everything its result depends on)."""
        if not isinstance(shape, BudgetProfile):
            raise TypeError(f"shape must be a BudgetProfile, got {describe(shape)}")
        return (str(method), _options_key(options), profile_digest(shape), shape.n,
                float(shape.delta_max), float(eps), float(delta), float(rtol),
                float(max_local_eps), bool(local_floor))

    def calibrate(self, method: str, shape: BudgetProfile, *, eps: float, delta: float,
                  options: Mapping[str, Any] | None = None, rtol: float = 1e-3,
                  max_local_eps: float = 30.0, local_floor: bool = False) -> Calibrated:
        """The calibration of ``shape`` for ``method`` at the central ``(eps, delta)``,
        computed on the first call and looked up after; raises the memoized
        :class:`~shuffledp.errors.ParameterRegimeError` when the target is out of reach."""
        opts = dict(options or {})
        k = self.key(method, shape, eps=eps, delta=delta, options=opts, rtol=rtol,
                     max_local_eps=max_local_eps, local_floor=local_floor)
        if k in self._store:
            self.hits += 1
        else:
            self.misses += 1
            self._store[k] = self._compute(method, shape, eps=eps, delta=delta, options=opts,
                                           rtol=rtol, max_local_eps=max_local_eps,
                                           local_floor=local_floor)
        out = self._store[k]
        if isinstance(out, ParameterRegimeError):
            raise out
        return out

    @staticmethod
    def _compute(method, shape, *, eps, delta, options, rtol, max_local_eps, local_floor):
        try:
            if method == LOCAL_ONLY:
                return Calibrated(local_only_scale(shape, eps=eps, delta=delta), float(eps),
                                  False)
            cal = calibrate_scale(method=method, profile=shape, eps=eps, delta=delta,
                                  options=options, rtol=rtol, max_local_eps=max_local_eps,
                                  local_floor=local_floor)
            return Calibrated(float(cal.scale), float(cal.bound_eps), bool(cal.capped))
        except ParameterRegimeError as err:
            return err
