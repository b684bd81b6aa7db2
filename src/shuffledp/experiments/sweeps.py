"""Sweep points and the budget profiles of the experiments (drawn on the ``budgets`` stream).

A utility experiment runs two sweeps: *vs n* (every ``n`` at the central target
``fixed_eps``) and *vs eps* (every ``target_eps`` at ``fixed_n``).  The users of a profile are
drawn by :func:`draw_budgets` from the stream ``rng_for(seed, "budgets", name, n)``
(:mod:`shuffledp.experiments.seeding`): the same users for every method, target, mechanism,
local delta0 and experiment that names this profile and n.

>>> [tuple(p) for p in sweep_points(n=[100, 1000], fixed_eps=1.0, target_eps=[0.5],
...                                 fixed_n=100)]
[('n', 100, 1.0), ('n', 1000, 1.0), ('eps', 100, 0.5)]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from shuffledp.budgets import BudgetProfile
from shuffledp.errors import short_repr
from shuffledp.experiments.profiles import profile_from_spec as _from_spec
from shuffledp.experiments.seeding import check_seed, rng_for
from shuffledp.validation import check_int, check_real, check_str, describe

__all__ = ["IDENTICAL", "SweepPoint", "sweep_points", "draw_budgets", "profile_list",
           "check_names", "positive_eps", "as_list"]

#: Profile name of identical users (shape eps_i = 1, so a calibrated scale is eps0).
IDENTICAL = "identical"


class SweepPoint(NamedTuple):
    """One point of a sweep: ``sweep`` ("n" or "eps"), number of users, central target eps."""

    sweep: str
    n: int
    target_eps: float


def positive_eps(value: object, name: str) -> float:
    """A central target eps: a finite float > 0 (``ValueError``/``TypeError`` naming it)."""
    return check_real(value, name, low=0.0, low_open=True)


def as_list(values: object, name: str) -> list:
    if isinstance(values, str | bytes | Mapping) or not isinstance(values, Sequence):
        raise TypeError(f"{name} must be a list, got {describe(values)}")
    return list(values)


def sweep_points(
    *, n: Sequence[int], fixed_eps: float, target_eps: Sequence[float], fixed_n: int
) -> list[SweepPoint]:
    """The points of the sweep vs n (at ``fixed_eps``), then of the sweep vs eps (at
    ``fixed_n``), in the order given."""
    eps0 = positive_eps(fixed_eps, "fixed_eps")
    m = check_int(fixed_n, "fixed_n", low=2)
    pts = [SweepPoint("n", check_int(k, f"n[{i}]", low=2), eps0)
           for i, k in enumerate(as_list(n, "n"))]
    pts += [SweepPoint("eps", m, positive_eps(e, f"target_eps[{i}]"))
            for i, e in enumerate(as_list(target_eps, "target_eps"))]
    return pts


def draw_budgets(
    name: str, spec: Mapping | None, *, n: int, seed: int, delta0: float = 0.0
) -> BudgetProfile:
    """The budget profile ``name`` of ``n`` users
    (:func:`shuffledp.experiments.profiles.profile_from_spec` of ``spec``), drawn from
    ``rng_for(seed, "budgets", name, n)``; ``spec=None`` gives identical users with
    eps_i = 1 (label ``identical``).  Every user's local delta is ``delta0`` (a mixture
    group's own delta wins)."""
    check_str(name, "name")
    seed = check_seed(seed)
    n = check_int(n, "n", low=2)
    if spec is None:
        return BudgetProfile.identical(n=n, eps0=1.0, delta0=delta0, label=IDENTICAL)
    return _from_spec(spec, n=n, rng=rng_for(seed, "budgets", name, n), delta0=delta0,
                      label=name)


def profile_list(
    names: Sequence[str], specs: Mapping[str, Mapping], *, identical: bool = False
) -> list[tuple[str, Mapping | None]]:
    """``[(name, spec)]`` for the profile ``names`` (keys of ``specs``), with
    ``("identical", None)`` first when ``identical``; ``ValueError`` naming an unknown one."""
    if not isinstance(specs, Mapping):
        raise TypeError(f"profiles must be a mapping name -> spec, got {describe(specs)}")
    out: list[tuple[str, Mapping | None]] = [(IDENTICAL, None)] if identical else []
    for i, name in enumerate(as_list(names, "profiles")):
        check_str(name, f"profiles[{i}]")
        if name not in specs:
            raise ValueError(f"profiles[{i}] = {short_repr(name)} is not a defined profile; "
                             f"defined: {', '.join(sorted(specs)) or 'none'}")
        out.append((name, specs[name]))
    return out


def check_names(values: object, name: str, known: Sequence[str]) -> list[str]:
    """A non-empty list of names from ``known``; ``ValueError`` naming the first unknown."""
    out = as_list(values, name)
    if not out:
        raise ValueError(f"{name} must not be empty")
    for i, v in enumerate(out):
        check_str(v, f"{name}[{i}]")
        if v not in known:
            raise ValueError(f"{name}[{i}] = {short_repr(v)} is unknown; known: "
                             f"{', '.join(known)}")
    return out
