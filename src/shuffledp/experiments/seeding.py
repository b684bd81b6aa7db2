"""The one seeding function of the experiments: ``rng_for(seed, *tags)``.

The scheme (the JSON encoding of ``(seed, tags)``, its SHA-256 hash, the resulting
:class:`numpy.random.SeedSequence`, and the stream tags every experiment uses) is stated in
the package docstring of :mod:`shuffledp.experiments`.

>>> a = rng_for(1, "budgets", "uniform_0.5_2", 1000).random()
>>> b = rng_for(1, "budgets", "uniform_0.5_2", 1000).random()
>>> a == b, a == rng_for(1, "budgets", "uniform_0.5_2", 1001).random()
(True, False)
>>> seed_entropy(0, "data", 0) != seed_entropy(0, "data")
True
"""

from __future__ import annotations

import hashlib
import json
import numbers

import numpy as np

from shuffledp.errors import short_repr

__all__ = ["check_seed", "seed_entropy", "seed_sequence", "rng_for", "seed_int"]

_DOMAIN = "shuffledp"


#: Largest master seed: the tables store the seed as a 64-bit integer.
SEED_MAX = 2**63 - 1


def check_seed(seed: object, name: str = "seed") -> int:
    """The master seed as an int in [0, 2^63 - 1] (a bool or a float is refused:
    ``TypeError``)."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= 0, got {type(seed).__name__} "
                        f"{short_repr(seed)}")
    if not 0 <= int(seed) <= SEED_MAX:
        raise ValueError(f"{name} must be an integer in [0, 2^63 - 1], got {int(seed)}")
    return int(seed)


def _check_tags(tags: tuple[object, ...]) -> list[int | str]:
    out: list[int | str] = []
    for i, tag in enumerate(tags):
        if isinstance(tag, str):
            out.append(tag)
        elif isinstance(tag, numbers.Integral) and not isinstance(tag, bool) and tag >= 0:
            out.append(int(tag))
        else:
            raise TypeError(
                f"tags[{i}] must be a str or an integer >= 0, got {type(tag).__name__} "
                f"{short_repr(tag)}"
            )
    return out


def seed_entropy(seed: int, *tags: str | int) -> int:
    """The 128-bit entropy of the stream ``(seed, *tags)``: the first 16 bytes (little endian)
    of the SHA-256 of the JSON text ``["shuffledp", seed, *tags]`` (package docstring of
    :mod:`shuffledp.experiments`)."""
    text = json.dumps([_DOMAIN, check_seed(seed), *_check_tags(tags)], ensure_ascii=True)
    return int.from_bytes(hashlib.sha256(text.encode("ascii")).digest()[:16], "little")


def seed_sequence(seed: int, *tags: str | int) -> np.random.SeedSequence:
    """The :class:`numpy.random.SeedSequence` of the stream ``(seed, *tags)``."""
    return np.random.SeedSequence(seed_entropy(seed, *tags))


def rng_for(seed: int, *tags: str | int) -> np.random.Generator:
    """A fresh :class:`numpy.random.Generator` (PCG64) on the stream ``(seed, *tags)``."""
    return np.random.default_rng(seed_sequence(seed, *tags))


def seed_int(seed: int, *tags: str | int) -> int:
    """A 63-bit integer of the stream ``(seed, *tags)``: for generators that take an integer
    seed (``torch.Generator.manual_seed``) and for a per-run seed written into a table."""
    return int(seed_sequence(seed, *tags).generate_state(1, np.uint64)[0] >> np.uint64(1))
