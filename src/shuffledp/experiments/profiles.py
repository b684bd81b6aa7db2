"""Budget profiles of the workflow's config: :func:`profile_from_spec`.

A profile spec is a config dict (the ``profiles`` entries of config/config.yaml): a ``kind``
and that kind's keys.  The experiments build every profile through this one function, from a
seeded generator.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from shuffledp.budgets import BudgetProfile
from shuffledp.errors import short_repr
from shuffledp.validation import (
    check_groups,
    check_local_delta,
    check_n,
    check_rng,
    check_str,
    describe,
)

__all__ = ["SPEC_KEYS", "profile_from_spec"]


#: The keys of each kind of profile spec (besides ``kind``).
SPEC_KEYS = {
    "clipped_normal": ("mean", "std", "low", "high"),
    "identical": ("eps0",),
    "mixture": ("groups",),
    "uniform": ("low", "high"),
}


def profile_from_spec(
    spec: Mapping, *, n: int, rng: np.random.Generator, delta0: float = 0.0, label: str = ""
) -> BudgetProfile:
    """Build a profile of ``n`` users from a config dict (the workflow's ``profiles`` entries).

    ``spec["kind"]`` is one of ``identical`` (``eps0``), ``uniform`` (``low``, ``high``),
    ``clipped_normal`` (``mean``, ``std``, ``low``, ``high``) or ``mixture`` (``groups``: a list
    of ``[share, eps]`` or ``[share, eps, delta]``); no other key is accepted.  ``delta0`` is
    every user's local delta (a mixture group's own delta, when given, wins).

    >>> profile_from_spec({"kind": "uniform", "low": 0.5, "high": 2.0}, n=5,
    ...                   rng=np.random.default_rng(0)).n
    5
    >>> profile_from_spec({"kind": "beta"}, n=5, rng=np.random.default_rng(0))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: profile kind must be one of [...], got 'beta'
    """
    if not isinstance(spec, Mapping):
        raise TypeError(f"spec must be a mapping (dict), got {describe(spec)}")
    n = check_n(n)
    check_rng(rng)
    d0 = check_local_delta(delta0, "delta0")
    check_str(label, "label")
    kinds = sorted(SPEC_KEYS)
    kind = spec.get("kind")
    if kind is not None and not isinstance(kind, str):
        raise TypeError(f"spec['kind'] must be a str, got {describe(kind)}")
    if kind not in SPEC_KEYS:
        raise ValueError(f"profile kind must be one of {kinds}, got {short_repr(kind)}")
    keys = SPEC_KEYS[kind]
    missing = [k for k in keys if k not in spec]
    if missing:
        raise ValueError(f"profile spec of kind {kind!r} needs key(s) {missing}")
    extra = [str(k) for k in spec if k != "kind" and k not in keys]
    if extra:
        raise ValueError(
            f"profile spec of kind {kind!r} has unknown key(s) {short_repr(extra)}; "
            f"accepted: {['kind', *keys]}"
        )
    if kind == "identical":
        prof = BudgetProfile.identical(n=n, eps0=spec["eps0"], delta0=d0)
    elif kind == "uniform":
        prof = BudgetProfile.uniform(n=n, low=spec["low"], high=spec["high"], rng=rng, delta0=d0)
    elif kind == "clipped_normal":
        prof = BudgetProfile.clipped_normal(
            n=n,
            mean=spec["mean"],
            std=spec["std"],
            low=spec["low"],
            high=spec["high"],
            rng=rng,
            delta0=d0,
        )
    else:
        groups = check_groups(spec["groups"], d0)
        prof = BudgetProfile.mixture(n=n, groups=groups, rng=rng, shuffle=True)
    if label:
        prof = BudgetProfile(eps=prof.eps, delta=prof.delta, label=label)
    return prof
