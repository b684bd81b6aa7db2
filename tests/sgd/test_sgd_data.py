"""Data for the SGD experiment: embedded digits and user-supplied MNIST files."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

pytest.importorskip("torch", reason="the SGD extra is not installed (pip install -e '.[sgd]')")

from shuffledp.sgd.data import (
    MNIST_IDX_FILES,
    load_digits_dataset,
    load_mnist,
    parse_idx,
    standardise,
)


def _idx_bytes(arr: np.ndarray) -> bytes:
    """Encode a uint8 array in the IDX format (LeCun et al., MNIST page, 'FILE FORMATS')."""
    header = bytes([0, 0, 0x08, arr.ndim]) + np.array(arr.shape, dtype=">u4").tobytes()
    return header + arr.astype(np.uint8).tobytes()


def _fake_mnist(rng: np.random.Generator, n_train: int = 30, n_test: int = 10):
    return {
        "x_train": rng.integers(0, 256, size=(n_train, 28, 28), dtype=np.uint8),
        "y_train": rng.integers(0, 10, size=n_train, dtype=np.uint8),
        "x_test": rng.integers(0, 256, size=(n_test, 28, 28), dtype=np.uint8),
        "y_test": rng.integers(0, 10, size=n_test, dtype=np.uint8),
    }


# (a) reference values -------------------------------------------------------------------
def test_digits_shapes_and_standardisation():
    ds = load_digits_dataset(rng=np.random.default_rng(0), test_fraction=0.2)
    # sklearn's digits: 1797 images of 8x8 pixels, 10 classes (sklearn docs, load_digits).
    assert ds.n_features == 64 and ds.n_classes == 10
    assert ds.n_train + ds.x_test.shape[0] == 1797
    assert abs(ds.x_test.shape[0] - 0.2 * 1797) <= 10  # stratified rounding per class
    assert np.allclose(ds.x_train.mean(axis=0), 0.0, atol=1e-5)
    std = ds.x_train.std(axis=0)
    assert np.all((np.abs(std - 1) < 1e-4) | (std == 0))
    assert ds.x_train.dtype == np.float32 and ds.y_train.dtype == np.int64


def test_standardise_fits_on_train_only():
    tr, te = standardise(np.array([[0.0], [2.0]]), np.array([[10.0]]))
    assert tr.ravel().tolist() == [-1.0, 1.0] and te.ravel().tolist() == [9.0]


# (b) invariants -------------------------------------------------------------------------
def test_split_is_fixed_by_seed():
    a = load_digits_dataset(rng=np.random.default_rng(5))
    b = load_digits_dataset(rng=np.random.default_rng(5))
    c = load_digits_dataset(rng=np.random.default_rng(6))
    assert np.array_equal(a.y_train, b.y_train) and np.array_equal(a.x_test, b.x_test)
    assert not np.array_equal(a.y_train, c.y_train)


def test_idx_round_trip_plain_and_gzip():
    arr = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    raw = _idx_bytes(arr)
    assert np.array_equal(parse_idx(raw), arr)
    assert np.array_equal(parse_idx(gzip.compress(raw)), arr)


@pytest.mark.parametrize("compress", [False, True])
def test_mnist_idx_directory(tmp_path, compress):
    arrays = _fake_mnist(np.random.default_rng(1))
    for key, stem in MNIST_IDX_FILES.items():
        raw = _idx_bytes(arrays[key])
        if compress:
            (tmp_path / f"{stem}.gz").write_bytes(gzip.compress(raw))
        else:
            (tmp_path / stem).write_bytes(raw)
    ds = load_mnist(tmp_path)
    assert ds.n_train == 30 and ds.n_features == 784 and ds.x_test.shape == (10, 784)
    assert np.array_equal(ds.y_train, arrays["y_train"].astype(np.int64))


def test_mnist_npz_and_subsampling(tmp_path):
    arrays = _fake_mnist(np.random.default_rng(2))
    path = tmp_path / "mnist.npz"
    np.savez(path, **arrays)
    ds = load_mnist(path, max_train=12, rng=np.random.default_rng(0))
    assert ds.n_train == 12 and ds.x_test.shape[0] == 10


# (c) bad input --------------------------------------------------------------------------
def test_missing_mnist_file_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="mnist.npz"):
        load_mnist(tmp_path / "mnist.npz")
    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte"):
        load_mnist(tmp_path)
    with pytest.raises(FileNotFoundError, match="nowhere"):
        load_mnist(tmp_path / "nowhere")


def test_malformed_files_fail_clearly(tmp_path):
    bad = tmp_path / "mnist.npz"
    bad.write_bytes(b"not a zip file")
    with pytest.raises(ValueError, match="mnist.npz"):
        load_mnist(bad)
    partial = tmp_path / "partial.npz"
    np.savez(partial, x_train=np.zeros((2, 28, 28), np.uint8))
    with pytest.raises(ValueError, match="missing array"):
        load_mnist(partial)
    arr = np.zeros((2, 3), dtype=np.uint8)
    with pytest.raises(ValueError, match="needs 6 data bytes"):
        parse_idx(_idx_bytes(arr)[:-1], name="x.idx")
    with pytest.raises(ValueError, match="x.idx: not an IDX file"):
        parse_idx(b"\x01\x02\x03\x04\x05", name="x.idx")
    with pytest.raises(ValueError, match="corrupt gzip"):
        parse_idx(b"\x1f\x8b garbage")


def test_bad_test_fraction():
    with pytest.raises(ValueError, match="test_fraction"):
        load_digits_dataset(rng=np.random.default_rng(0), test_fraction=1.5)


def test_sgd_experiment_on_small_mnist_idx_files(tmp_path):
    # The MNIST path end to end on IDX files made here: a personalized profile with the
    # Gaussian randomizer under the rigorous per-tier accounting trains and is labelled ok.
    from shuffledp.experiments import run_sgd

    arrays = _fake_mnist(np.random.default_rng(3), n_train=60, n_test=20)
    for key, stem in MNIST_IDX_FILES.items():
        (tmp_path / stem).write_bytes(_idx_bytes(arrays[key]))
    cfg = {"dataset": "mnist", "mnist_path": str(tmp_path), "rounds": 2, "seeds": 1,
           "randomizer": "gaussian", "profile": "g", "delta": 1e-5, "discretization": 1e-3}
    specs = {"g": {"kind": "mixture", "groups": [[0.5, 0.5], [0.5, 2.0]]}}
    (row,) = run_sgd(method="clones", target_eps=8.0, config=cfg, profiles=specs, seed=2)
    assert row["status"] == "ok" and row["dataset"] == "mnist" and row["n_users"] == 60
    assert row["eps_achieved"] <= 8.0 and row["budget_levels"] == 2
    assert 0.0 <= row["accuracy"] <= 1.0
