"""Local randomizers for shuffled personalized LDP, with their shuffled estimators.

Mean of values in [-1, 1]: :class:`LaplaceMechanism`, :class:`DuchiMechanism`,
:class:`PiecewiseMechanism`, :class:`GaussianMechanism`, :class:`LaplaceSharedMechanism`,
:class:`GaussianSharedMechanism`.
Frequencies over d categories:
:class:`GRRMechanism`, :class:`OUEMechanism`.  Each is a frozen dataclass holding the per-user
budgets, its citation and the quantities bounds need (``eps``, ``delta``,
:meth:`~Mechanism.randomizer`, :meth:`~Mechanism.blanket_mass`); see
:mod:`shuffledp.mechanisms.base` for the estimators' unbiasedness statement.

The registries map config names to classes (lookup only; no dispatch on strings elsewhere):

>>> sorted(MEAN_MECHANISMS), sorted(FREQUENCY_MECHANISMS)
(['duchi', 'gaussian', 'gaussian_shared', 'laplace', 'laplace_shared', 'piecewise'], ['grr', 'oue'])
>>> get_mechanism("nope")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: unknown mechanism 'nope'; known mechanisms: duchi, gaussian, ...
"""

from __future__ import annotations

from shuffledp.errors import short_repr
from shuffledp.mechanisms.base import (
    FrequencyMechanism,
    MeanMechanism,
    Mechanism,
    permutation_variance,
)
from shuffledp.mechanisms.frequency import GRRMechanism, OUEMechanism
from shuffledp.mechanisms.mean import (
    DuchiMechanism,
    GaussianMechanism,
    GaussianSharedMechanism,
    LaplaceMechanism,
    LaplaceSharedMechanism,
    PiecewiseMechanism,
    analytic_gaussian_sigma,
    gaussian_delta,
)

__all__ = [
    "Mechanism",
    "MeanMechanism",
    "FrequencyMechanism",
    "LaplaceMechanism",
    "LaplaceSharedMechanism",
    "DuchiMechanism",
    "PiecewiseMechanism",
    "GaussianMechanism",
    "GaussianSharedMechanism",
    "GRRMechanism",
    "OUEMechanism",
    "MEAN_MECHANISMS",
    "FREQUENCY_MECHANISMS",
    "get_mechanism",
    "analytic_gaussian_sigma",
    "gaussian_delta",
    "permutation_variance",
]

MEAN_MECHANISMS: dict[str, type[MeanMechanism]] = {
    cls.name: cls
    for cls in (LaplaceMechanism, DuchiMechanism, PiecewiseMechanism, GaussianMechanism,
                LaplaceSharedMechanism, GaussianSharedMechanism)
}
FREQUENCY_MECHANISMS: dict[str, type[FrequencyMechanism]] = {
    cls.name: cls for cls in (GRRMechanism, OUEMechanism)
}


def get_mechanism(name: str) -> type[Mechanism]:
    """The mechanism class registered as ``name``; ``ValueError`` listing the known names."""
    known = {**MEAN_MECHANISMS, **FREQUENCY_MECHANISMS}
    if not isinstance(name, str):
        raise TypeError(f"mechanism name must be a str, got {type(name).__name__} "
                        f"{short_repr(name)}")
    try:
        return known[name]
    except KeyError:
        raise ValueError(
            f"unknown mechanism {short_repr(name)}; known mechanisms: {', '.join(sorted(known))}"
        ) from None
