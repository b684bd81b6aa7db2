"""The API audit's machinery, shared by tests/test_api_audit.py (the library core) and
tests/sgd/test_api_audit_sgd.py (the SGD extra, which needs torch).

Each case asserts the house rule: a wrong type raises ``TypeError``, a bad value
``ValueError`` (``FileNotFoundError`` for a missing MNIST path), never ``AttributeError``,
``IndexError``, ``KeyError`` or ``OverflowError``; the message names the parameter; and the
message stays short (< 300 characters) even when the bad value is a 100,000-character string.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pytest

HUGE = "x" * 100_000
MAX_MESSAGE = 300
FORBIDDEN = (AttributeError, IndexError, KeyError, OverflowError)

# ------------------------------------------------------------------ families of bad input
#: Not real numbers (bool is not a number).
NOT_NUMBERS = [None, "1.0", True, np.bool_(False), [1.0], {"a": 1}, 1j, object(), HUGE]
#: Not integers.
NOT_INTS = [*NOT_NUMBERS, 2.5, np.float64(3.0)]
#: Not a numpy.random.Generator.
NOT_RNGS = [None, 0, "rng", True, [], {}, 1j, object(), np.random.RandomState(0), HUGE]
#: Not a str.
NOT_STRS = [None, 1, True, [], {}, 1j, object(), b"bytes"]
#: Not an array (or scalar) of real numbers.
NOT_ARRAYS = [
    None,
    "1.0",
    True,
    {"a": 1},
    1j,
    object(),
    [1.0, None],
    ["a", "b"],
    np.array([1.0 + 1j, 2.0]),
    np.array([True, False]),
    HUGE,
]
#: Not a path.
NOT_PATHS = [None, 1, True, [], {}, 1j, object(), b"budgets.csv"]
#: Not bytes.
NOT_BYTES = [None, "text", HUGE, 1, True, [], {}, object()]
#: Not a bool.
NOT_BOOLS = [None, 1, 0.0, "yes", [], object()]



def _npy(arr: np.ndarray, allow_pickle: bool = False) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=allow_pickle)
    return buf.getvalue()


def _npz(**arrays: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


# ------------------------------------------------------------------ the table
@dataclass(frozen=True)
class Case:
    id: str
    call: Callable[[SimpleNamespace], object]
    name: str  # what the message must mention
    exc: type[Exception]


CASES: list[Case] = []
ACCEPTED: list[tuple[str, Callable[[SimpleNamespace], object]]] = []


def _label(value: object) -> str:
    if isinstance(value, str):
        return "huge_str" if len(value) > 50 else f"str:{value[:20]}"
    if isinstance(value, np.ndarray):
        return f"ndarray:{value.dtype}"
    text = repr(value) if not isinstance(value, object.__class__) else value.__name__
    if type(value) is object:
        text = "object()"
    return f"{type(value).__name__}:{text[:25]}"


def bad(entry: str, param: str, values: list, exc: type[Exception], call, name: str = ""):
    """One case per value: ``call(value, ctx)`` must raise ``exc`` naming ``name``."""
    for value in values:
        CASES.append(
            Case(
                id=f"{entry}|{param}|{_label(value)}",
                call=lambda ctx, v=value: call(v, ctx),
                name=name or param,
                exc=exc,
            )
        )


def case(entry: str, label: str, exc: type[Exception], name: str, call):
    CASES.append(Case(id=f"{entry}|{label}", call=call, name=name, exc=exc))


def ok(label: str, call) -> None:
    ACCEPTED.append((label, call))




def ids(cases: list[Case]) -> list[str]:
    """Unique test ids, without memory addresses (``<... at 0x7f...>``): the ids must be the
    same in every process that collects them (pytest-xdist's workers compare them)."""
    seen: dict[str, int] = {}
    out = []
    for c in cases:
        cid = re.sub(r" at 0x[0-9a-fA-F]+", "", c.id)
        k = seen.get(cid, 0)
        seen[cid] = k + 1
        out.append(cid if k == 0 else f"{cid}#{k}")
    return out


def check_bad_input(c: Case, ctx: SimpleNamespace) -> None:
    with pytest.raises(Exception) as info:  # noqa: B017 - the type is asserted below
        c.call(ctx)
    err = info.value
    text = str(err)
    assert not isinstance(err, FORBIDDEN), f"{type(err).__name__}: {text[:300]}"
    assert isinstance(err, c.exc), (
        f"expected {c.exc.__name__}, got {type(err).__name__}: {text[:300]}"
    )
    assert c.name.lower() in text.lower(), f"message does not name {c.name!r}: {text[:300]}"
    assert len(text) < MAX_MESSAGE, f"message of {len(text)} characters: {text[:300]}..."


def check_accepted(call: Callable[[SimpleNamespace], object], ctx: SimpleNamespace) -> None:
    out = call(ctx)
    if isinstance(out, (float, np.ndarray)):
        assert np.all(np.isfinite(out))
