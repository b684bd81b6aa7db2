"""API audit of the SGD extra (needs torch): the SGD data, model and training modules, fed
wrong types and bad values (the rule and the machinery: tests/_audit.py)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from _audit import ACCEPTED as _ACCEPTED
from _audit import CASES as _CASES
from _audit import (
    HUGE,
    NOT_ARRAYS,
    NOT_BYTES,
    NOT_INTS,
    NOT_NUMBERS,
    NOT_PATHS,
    NOT_RNGS,
    NOT_STRS,
    Case,
    _npy,
    _npz,
    bad,
    case,
    check_accepted,
    check_bad_input,
    ids,
    ok,
)

torch = pytest.importorskip(
    "torch", reason="the SGD extra is not installed (pip install -e '.[sgd]')"
)

from shuffledp.budgets import BudgetProfile
from shuffledp.mechanisms import LaplaceMechanism
from shuffledp.sgd.data import (
    Dataset,
    load_digits_dataset,
    load_mnist,
    mnist_from_arrays,
    parse_idx,
    parse_mnist_npz,
    read_mnist_idx_dir,
    read_mnist_npz,
    standardise,
)
from shuffledp.sgd.models import (
    accuracy,
    build_model,
    flat_params,
    n_params,
    per_example_grads,
    set_flat_params,
)
from shuffledp.sgd.randomizers import DuchiRandomizer, GaussianRandomizer
from shuffledp.sgd.train import (
    SGDConfig,
    private_mean_gradient,
    train_shuffled_sgd,
)

RNG = np.random.default_rng(0)
GEN = torch.Generator().manual_seed(0)
N = 4
PROF = BudgetProfile.uniform(n=N, low=0.5, high=2.0, rng=np.random.default_rng(1))
PROF2 = BudgetProfile.identical(n=2, eps0=1.0)
LAP = LaplaceMechanism(eps=[1.0] * N)
_FIRST_CASE, _FIRST_OK = len(_CASES), len(_ACCEPTED)


def _dataset() -> Dataset:
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    y = np.array([0, 1, 0, 1])
    return Dataset(x, y, x.copy(), y.copy(), 2, name="tiny")


DATA = _dataset()
CFG = SGDConfig(rounds=1, lr=0.1, clip=1.0)
NET = build_model("logreg", n_features=3, n_classes=2, generator=torch.Generator())
XT = torch.zeros(4, 3)
YT = torch.tensor([0, 1, 0, 1])
MNIST = {
    "x_train": np.zeros((4, 2, 2), np.uint8),
    "y_train": np.array([0, 1, 0, 1]),
    "x_test": np.zeros((2, 2, 2), np.uint8),
    "y_test": np.array([0, 1]),
}


# ---- SGD data
bad("load_digits_dataset", "rng", NOT_RNGS, TypeError, lambda v, ctx: load_digits_dataset(rng=v))
bad(
    "load_digits_dataset",
    "test_fraction",
    NOT_NUMBERS,
    TypeError,
    lambda v, ctx: load_digits_dataset(rng=RNG, test_fraction=v),
)
bad(
    "load_digits_dataset",
    "test_fraction",
    [0.0, 1.0, -1.0, np.nan, 1e300, 0.999, 0.0001],
    ValueError,
    lambda v, ctx: load_digits_dataset(rng=RNG, test_fraction=v),
)
for entry, fn, pname in [
    ("load_mnist", load_mnist, "path"),
    ("read_mnist_npz", read_mnist_npz, "path"),
    ("read_mnist_idx_dir", read_mnist_idx_dir, "directory"),
]:
    bad(entry, pname, NOT_PATHS, TypeError, lambda v, ctx, fn=fn: fn(v))
    case(
        entry,
        "empty",
        ValueError,
        "path" if pname == "path" else "directory",
        lambda ctx, fn=fn: fn(""),
    )
    case(entry, "huge", ValueError, "MNIST path", lambda ctx, fn=fn: fn(HUGE))
    case(
        entry,
        "missing",
        FileNotFoundError,
        "nowhere",
        lambda ctx, fn=fn: fn(
            ctx.tmp / "nowhere" / "mnist.npz" if fn is read_mnist_npz else ctx.tmp / "nowhere"
        ),
    )
case(
    "load_mnist",
    "not_npz_file",
    ValueError,
    "MNIST path",
    lambda ctx: load_mnist(ctx.tmp / "dup.csv"),
)
case(
    "read_mnist_npz",
    "garbage_zip",
    ValueError,
    "mnist.npz",
    lambda ctx: read_mnist_npz(ctx.tmp / "mnist.npz"),
)
bad(
    "load_mnist",
    "max_train",
    NOT_INTS,
    TypeError,
    lambda v, ctx: load_mnist(ctx.tmp / "nowhere.npz", max_train=v),
)
bad(
    "load_mnist",
    "max_train",
    [-1, -(10**400)],
    ValueError,
    lambda v, ctx: load_mnist(ctx.tmp / "nowhere.npz", max_train=v),
)
bad(
    "load_mnist",
    "rng",
    [v for v in NOT_RNGS if v is not None],
    TypeError,
    lambda v, ctx: load_mnist(ctx.tmp / "nowhere.npz", rng=v),
)
bad("parse_idx", "data", NOT_BYTES, TypeError, lambda v, ctx: parse_idx(v))
bad("parse_idx", "name", NOT_STRS, TypeError, lambda v, ctx: parse_idx(b"\x00\x00\x08\x01", name=v))
for label, data in [
    ("empty", b""),
    ("garbage", b"garbage"),
    ("huge", HUGE.encode()),
    ("gzip", b"\x1f\x8b garbage"),
    ("ndim0", b"\x00\x00\x08\x00"),
    ("short_header", b"\x00\x00\x08\x03\x00\x00"),
    ("huge_shape", b"\x00\x00\x08\x02" + b"\xff" * 8 + b"\x00"),
]:
    case(
        "parse_idx",
        label,
        ValueError,
        "x.idx",
        lambda ctx, data=data: parse_idx(data, name="x.idx"),
    )
case("parse_idx", "huge_name", ValueError, "...", lambda ctx: parse_idx(b"garbage", name=HUGE))
bad("parse_mnist_npz", "data", NOT_BYTES, TypeError, lambda v, ctx: parse_mnist_npz(v))
for label, data in [
    ("empty", b""),
    ("garbage", b"garbage"),
    ("zip_garbage", b"PK\x03\x04junk"),
    ("npy", _npy(np.ones(3))),
    ("missing", _npz(x_train=np.ones(3))),
    ("object", _npz(**{**MNIST, "y_train": np.array([0, None], dtype=object)})),
]:
    case(
        "parse_mnist_npz",
        label,
        ValueError,
        "mnist.npz",
        lambda ctx, data=data: parse_mnist_npz(data),
    )
bad(
    "mnist_from_arrays",
    "arrays",
    [None, [], "x_train", HUGE, object()],
    TypeError,
    lambda v, ctx: mnist_from_arrays(v),
)
for label, arrays, exc, name in [
    ("empty", {}, ValueError, "arrays"),
    ("x_str", {**MNIST, "x_train": "abc"}, TypeError, "x_train"),
    ("x_none", {**MNIST, "x_train": None}, TypeError, "x_train"),
    ("x_1d", {**MNIST, "x_train": np.zeros(4)}, ValueError, "x_train"),
    ("x_complex", {**MNIST, "x_test": np.zeros((2, 2, 2), complex)}, TypeError, "x_test"),
    ("x_nan", {**MNIST, "x_train": np.full((4, 2, 2), np.nan)}, ValueError, "x_train"),
    ("y_fraction", {**MNIST, "y_train": np.array([0.5, 1, 0, 1])}, ValueError, "y_train"),
    ("y_str", {**MNIST, "y_test": np.array(["a", "b"])}, TypeError, "y_test"),
    ("y_count", {**MNIST, "y_test": np.array([0, 1, 1])}, ValueError, "label counts"),
    ("y_negative", {**MNIST, "y_train": np.array([-1, 1, 0, 1])}, ValueError, "labels"),
]:
    case("mnist_from_arrays", label, exc, name, lambda ctx, a=arrays: mnist_from_arrays(a))
bad(
    "mnist_from_arrays",
    "max_train",
    NOT_INTS,
    TypeError,
    lambda v, ctx: mnist_from_arrays(MNIST, max_train=v),
)
bad(
    "mnist_from_arrays",
    "max_train",
    [-1],
    ValueError,
    lambda v, ctx: mnist_from_arrays(MNIST, max_train=v),
)
bad(
    "mnist_from_arrays",
    "rng",
    NOT_RNGS,
    TypeError,
    lambda v, ctx: mnist_from_arrays(MNIST, max_train=2, rng=v),
)
bad(
    "mnist_from_arrays",
    "name",
    NOT_STRS,
    TypeError,
    lambda v, ctx: mnist_from_arrays(MNIST, name=v),
)
X4, Y4 = DATA.x_train, DATA.y_train
bad(
    "Dataset",
    "x_train",
    [None, "abc", HUGE, {"a": 1}, np.zeros((4, 3), complex)],
    TypeError,
    lambda v, ctx: Dataset(v, Y4, X4, Y4, 2),
)
bad(
    "Dataset",
    "x_train",
    [np.zeros(4), np.full((4, 3), np.nan), np.zeros((1, 3)), np.zeros((4, 2))],
    ValueError,
    lambda v, ctx: Dataset(v, np.zeros(len(v), int), X4, Y4, 2),
)
bad(
    "Dataset",
    "y_test",
    [None, "abc", np.array([True] * 4)],
    TypeError,
    lambda v, ctx: Dataset(X4, Y4, X4, v, 2),
)
bad(
    "Dataset",
    "y_test",
    [np.array([0.5, 0, 0, 0]), np.zeros((4, 1), int), np.zeros(3, int)],
    ValueError,
    lambda v, ctx: Dataset(X4, Y4, X4, v, 2),
)
bad("Dataset", "n_classes", NOT_INTS, TypeError, lambda v, ctx: Dataset(X4, Y4, X4, Y4, v))
bad("Dataset", "n_classes", [1, 0, -1], ValueError, lambda v, ctx: Dataset(X4, Y4, X4, Y4, v))
case(
    "Dataset",
    "labels_out_of_range",
    ValueError,
    "labels",
    lambda ctx: Dataset(X4, Y4 * 5, X4, Y4, 2),
)
bad("Dataset", "name", NOT_STRS, TypeError, lambda v, ctx: Dataset(X4, Y4, X4, Y4, 2, name=v))
bad(
    "standardise",
    "x_train",
    [None, "abc", HUGE, [[1j]]],
    TypeError,
    lambda v, ctx: standardise(v, X4),
)
bad(
    "standardise",
    "x_train",
    [np.zeros(3), np.zeros((0, 3)), [[np.nan] * 3]],
    ValueError,
    lambda v, ctx: standardise(v, X4),
)
bad(
    "standardise",
    "x_test",
    [np.zeros((2, 5)), np.zeros(3)],
    ValueError,
    lambda v, ctx: standardise(X4, v),
)

# ---- SGD models
bad(
    "build_model",
    "kind",
    NOT_STRS,
    TypeError,
    lambda v, ctx: build_model(v, n_features=3, n_classes=2, generator=GEN),
)
bad(
    "build_model",
    "kind",
    ["cnn", HUGE, ""],
    ValueError,
    lambda v, ctx: build_model(v, n_features=3, n_classes=2, generator=GEN),
)
for key, values in [("n_features", [0, -1]), ("n_classes", [1, 0, -1]), ("hidden", [0, -1])]:
    base = {"n_features": 3, "n_classes": 2, "hidden": 4, "generator": GEN}
    bad(
        "build_model",
        key,
        NOT_INTS,
        TypeError,
        lambda v, ctx, key=key, base=base: build_model("mlp", **{**base, key: v}),
    )
    bad(
        "build_model",
        key,
        values,
        ValueError,
        lambda v, ctx, key=key, base=base: build_model("mlp", **{**base, key: v}),
    )
bad(
    "build_model",
    "generator",
    [None, 0, RNG, "gen", object()],
    TypeError,
    lambda v, ctx: build_model("logreg", n_features=3, n_classes=2, generator=v),
)
for entry, fn in [("n_params", n_params), ("flat_params", flat_params)]:
    bad(entry, "model", [None, "logreg", object(), RNG], TypeError, lambda v, ctx, fn=fn: fn(v))
bad(
    "set_flat_params",
    "flat",
    [None, np.zeros(8), [0.0] * 8, "x", torch.zeros(8, dtype=torch.int64)],
    TypeError,
    lambda v, ctx: set_flat_params(NET, v),
)
bad(
    "set_flat_params",
    "flat",
    [torch.zeros(3), torch.zeros(2, 4)],
    ValueError,
    lambda v, ctx: set_flat_params(NET, v),
)
for entry, fn in [("per_example_grads", per_example_grads), ("accuracy", accuracy)]:
    bad(entry, "model", [None, "m", object()], TypeError, lambda v, ctx, fn=fn: fn(v, XT, YT))
    bad(
        entry,
        "x",
        [None, np.zeros((4, 3)), "x", torch.zeros(4, 3, dtype=torch.int64)],
        TypeError,
        lambda v, ctx, fn=fn: fn(NET, v, YT),
    )
    bad(
        entry,
        "x",
        [torch.zeros(4), torch.zeros(3, 3)],
        ValueError,
        lambda v, ctx, fn=fn: fn(NET, v, YT),
    )
    bad(
        entry,
        "y",
        [None, [0, 1, 0, 1], torch.zeros(4), torch.ones(4, dtype=torch.bool)],
        TypeError,
        lambda v, ctx, fn=fn: fn(NET, XT, v),
    )
bad(
    "per_example_grads",
    "chunk",
    NOT_INTS,
    TypeError,
    lambda v, ctx: per_example_grads(NET, XT, YT, chunk=v),
)
bad(
    "per_example_grads",
    "chunk",
    [-1],
    ValueError,
    lambda v, ctx: per_example_grads(NET, XT, YT, chunk=v),
)

# ---- SGD training
SGD_OK = {"rounds": 1, "lr": 0.1, "clip": 1.0}
for key, types, values in [
    ("rounds", NOT_INTS, [0, -1]),
    ("lr", NOT_NUMBERS, [0.0, -1.0, np.nan, np.inf]),
    ("clip", NOT_NUMBERS, [0.0, -1.0, np.nan, np.inf]),
    ("momentum", NOT_NUMBERS, [1.0, -0.1, np.nan, 1e300]),
    ("hidden", NOT_INTS, [0, -1]),
    ("chunk", NOT_INTS, [-1]),
]:
    bad("SGDConfig", key, types, TypeError, lambda v, ctx, key=key: SGDConfig(**{**SGD_OK, key: v}))
    bad(
        "SGDConfig",
        key,
        values,
        ValueError,
        lambda v, ctx, key=key: SGDConfig(**{**SGD_OK, key: v}),
    )
DUCHI = DuchiRandomizer(clip=1.0)
GAUSS = GaussianRandomizer(clip=1.0)


def _train(**kw):
    args = {"config": CFG, "generator": torch.Generator().manual_seed(0), **kw}
    data = args.pop("data", DATA)
    return train_shuffled_sgd(data, **args)


bad(
    "train_shuffled_sgd",
    "data",
    [None, "digits", MNIST, object()],
    TypeError,
    lambda v, ctx: _train(data=v),
)
bad(
    "train_shuffled_sgd",
    "config",
    [None, SGD_OK, "cfg", object()],
    TypeError,
    lambda v, ctx: _train(config=v),
)
bad("train_shuffled_sgd", "model", NOT_STRS, TypeError, lambda v, ctx: _train(model=v))
bad("train_shuffled_sgd", "model", ["cnn", HUGE], ValueError, lambda v, ctx: _train(model=v))
bad(
    "train_shuffled_sgd",
    "randomizer",
    ["duchi", HUGE, object(), LAP],
    TypeError,
    lambda v, ctx: _train(randomizer=v, eps=1.0),
)
bad(
    "train_shuffled_sgd",
    "generator",
    [None, RNG, 0, "g"],
    TypeError,
    lambda v, ctx: _train(generator=v),
)
bad(
    "train_shuffled_sgd",
    "eps",
    [v for v in NOT_ARRAYS if v is not None],
    TypeError,
    lambda v, ctx: _train(randomizer=DUCHI, eps=v),
)
bad(
    "train_shuffled_sgd",
    "eps",
    [np.nan, 0.0, -1.0, 1e300, np.inf, [1.0] * 3, None],
    ValueError,
    lambda v, ctx: _train(randomizer=DUCHI, eps=v),
)
bad("train_shuffled_sgd", "eps", [1.0], ValueError, lambda v, ctx: _train(eps=v))
bad(
    "train_shuffled_sgd",
    "delta",
    ["x", [None] * 4],
    TypeError,
    lambda v, ctx: _train(randomizer=GAUSS, eps=1.0, delta=v),
)
bad(
    "train_shuffled_sgd",
    "delta",
    [0.0, 1.0, np.nan, [1e-6] * 3],
    ValueError,
    lambda v, ctx: _train(randomizer=GAUSS, eps=1.0, delta=v),
)
PMG = {"clip": 1.0, "randomizer": DUCHI, "eps": np.ones(4), "delta": np.zeros(4), "generator": GEN}
for key, values, exc in [
    ("clip", NOT_NUMBERS, TypeError),
    ("clip", [0.0, -1.0, np.nan], ValueError),
    ("randomizer", ["duchi", object()], TypeError),
    ("eps", ["x", [None] * 4], TypeError),
    ("eps", [None, np.ones(3), 1.0, np.zeros(4), np.full(4, np.nan)], ValueError),
    ("generator", [None, RNG], TypeError),
    ("chunk", NOT_INTS, TypeError),
    ("chunk", [-1], ValueError),
]:
    bad(
        "private_mean_gradient",
        key,
        values,
        exc,
        lambda v, ctx, key=key: private_mean_gradient(NET, XT, YT, **{**PMG, key: v}),
    )
bad(
    "private_mean_gradient",
    "x",
    [None, np.zeros((4, 3))],
    TypeError,
    lambda v, ctx: private_mean_gradient(NET, v, YT, **PMG),
)
bad(
    "private_mean_gradient",
    "y",
    [None, torch.zeros(4)],
    TypeError,
    lambda v, ctx: private_mean_gradient(NET, XT, v, **PMG),
)
bad(
    "private_mean_gradient",
    "model",
    [None, "m"],
    TypeError,
    lambda v, ctx: private_mean_gradient(v, XT, YT, **PMG),
)



ok("Dataset from lists", lambda ctx: Dataset([[0.0], [1.0]], [0, 1], [[0.0], [1.0]], [0, 1], 2))


CASES = _CASES[_FIRST_CASE:]
ACCEPTED = _ACCEPTED[_FIRST_OK:]


@pytest.fixture(scope="module")
def ctx(tmp_path_factory) -> SimpleNamespace:
    tmp = tmp_path_factory.mktemp("audit_sgd")
    (tmp / "dir").mkdir()
    (tmp / "mnist.npz").write_bytes(b"PK\x03\x04 not really a zip")
    (tmp / "dup.csv").write_bytes(b"eps,eps\n1,1\n2,2\n")
    return SimpleNamespace(tmp=Path(tmp))


def test_case_count():
    # with the core table (tests/test_api_audit.py, at least 1550) at least 2000 cases
    assert len(CASES) >= 450, len(CASES)


@pytest.mark.parametrize("c", CASES, ids=ids(CASES))
def test_bad_input(c: Case, ctx):
    check_bad_input(c, ctx)


@pytest.mark.parametrize(("label", "call"), ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_accepted(label, call, ctx):
    check_accepted(call, ctx)
