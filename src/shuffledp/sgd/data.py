"""Data for the SGD experiment: scikit-learn's embedded digits, or the user's own MNIST files.

Two sources, both returning a :class:`Dataset` of standardised float32 features:

* :func:`load_digits_dataset` (default): the 8x8 handwritten digits that ship *inside*
  scikit-learn (``sklearn.datasets.load_digits``; 1797 images, 64 features, 10 classes; no
  download).  A stratified train/test split drawn from a passed-in ``numpy`` Generator.
* MNIST from files the user supplies (LeCun, Cortes, Burges; the four IDX files
  ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte``,
  ``t10k-labels-idx1-ubyte``, optionally ``.gz``; or a Keras-style ``mnist.npz`` with arrays
  ``x_train``, ``y_train``, ``x_test``, ``y_test``).  MNIST keeps its own train/test split.

File I/O.  The library is pure (STYLE 1) except for input adapters.  Parsing works on bytes
(:func:`parse_idx`, :func:`parse_mnist_npz`) and does no I/O; the *only* functions here that
touch the file system are the two loaders :func:`read_mnist_idx_dir` and
:func:`read_mnist_npz`, which read bytes and hand them to the parsers.  They raise
``FileNotFoundError`` naming the missing path, and ``ValueError`` naming the file for
malformed content.

IDX format (LeCun et al., http://yann.lecun.com/exdb/mnist/, "FILE FORMATS"): a big-endian
magic number ``0x0000 TT DD`` (``TT`` = 0x08 for unsigned bytes, ``DD`` = number of
dimensions), then ``DD`` big-endian uint32 sizes, then the data in C order.

Standardisation: ``(x - mean) / std`` per feature with mean and std fitted on the training
part only; features with ``std = 0`` (constant pixels) get ``std = 1``.

>>> import numpy as np
>>> ds = load_digits_dataset(rng=np.random.default_rng(0), test_fraction=0.25)
>>> ds.x_train.shape[1], ds.n_classes, ds.x_train.shape[0] + ds.x_test.shape[0]
(64, 10, 1797)
>>> bool(abs(ds.x_train.mean()) < 1e-5)
True
"""

from __future__ import annotations

import gzip
import io
import math
import os
import tokenize
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from shuffledp.errors import short_path, short_repr
from shuffledp.validation import (
    as_real_array,
    check_array_range,
    check_int,
    check_real,
    check_rng,
    check_str,
    describe,
)

__all__ = [
    "Dataset",
    "standardise",
    "load_digits_dataset",
    "parse_idx",
    "parse_mnist_npz",
    "mnist_from_arrays",
    "read_mnist_idx_dir",
    "read_mnist_npz",
    "load_mnist",
    "MNIST_IDX_FILES",
]

#: The four standard IDX file names (each may also end in ``.gz``).
MNIST_IDX_FILES = {
    "x_train": "train-images-idx3-ubyte",
    "y_train": "train-labels-idx1-ubyte",
    "x_test": "t10k-images-idx3-ubyte",
    "y_test": "t10k-labels-idx1-ubyte",
}

_IDX_DTYPES = {
    0x08: np.dtype(">u1"),
    0x09: np.dtype(">i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


@dataclass(frozen=True, eq=False)
class Dataset:
    """Standardised features and integer labels, split into train and test.

    ``x_*`` are float32 of shape (n, d) (real arrays are converted; every entry finite);
    ``y_*`` int64 of shape (n,) (integer-valued arrays are converted); ``name`` goes into
    result tables.
    """

    x_train: NDArray[np.float32]
    y_train: NDArray[np.int64]
    x_test: NDArray[np.float32]
    y_test: NDArray[np.int64]
    n_classes: int
    name: str = ""

    def __post_init__(self) -> None:
        n_classes = check_int(self.n_classes, "n_classes", low=2)
        object.__setattr__(self, "n_classes", n_classes)
        check_str(self.name, "name")
        for part in ("train", "test"):
            x = _features(getattr(self, f"x_{part}"), f"x_{part}")
            y = _labels(getattr(self, f"y_{part}"), f"y_{part}")
            object.__setattr__(self, f"x_{part}", x)
            object.__setattr__(self, f"y_{part}", y)
            if x.ndim != 2 or y.ndim != 1 or x.shape[0] != y.shape[0]:
                raise ValueError(
                    f"x_{part} must be (n, d) and y_{part} (n,), got {x.shape} and {y.shape}"
                )
            if x.shape[0] < 2:
                raise ValueError(
                    f"x_{part} must have at least 2 rows ({part} examples), got {x.shape[0]}"
                )
        if self.x_train.shape[1] != self.x_test.shape[1]:
            raise ValueError(
                f"x_train and x_test must have the same number of columns (features), got "
                f"{self.x_train.shape[1]} and {self.x_test.shape[1]}"
            )
        labels = np.concatenate([self.y_train, self.y_test])
        if labels.min() < 0 or labels.max() >= self.n_classes:
            raise ValueError(
                f"labels y_train and y_test must be in [0, n_classes = {self.n_classes}), got "
                f"range [{labels.min()}, {labels.max()}]"
            )

    @property
    def n_train(self) -> int:
        return int(self.x_train.shape[0])


    @property
    def n_features(self) -> int:
        return int(self.x_train.shape[1])


def standardise(
    x_train: NDArray, x_test: NDArray
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """Per-feature ``(x - mean) / std`` fitted on ``x_train`` (std 0 -> 1), as float32.

    >>> a, b = standardise(np.array([[0.0, 1.0], [2.0, 1.0]]), np.array([[1.0, 3.0]]))
    >>> a.tolist(), b.tolist()
    ([[-1.0, 0.0], [1.0, 0.0]], [[0.0, 2.0]])
    """
    x_train = _matrix(x_train, "x_train")
    x_test = _matrix(x_test, "x_test")
    if x_train.shape[0] < 1:
        raise ValueError("x_train must have at least one row, got 0")
    if x_test.shape[1] != x_train.shape[1]:
        raise ValueError(
            f"x_test must have as many columns as x_train ({x_train.shape[1]}), got "
            f"{x_test.shape[1]}"
        )
    mean = x_train.mean(axis=0)
    std = x_train.std(axis=0)
    std = np.where(std > 0, std, 1.0)
    return (
        ((x_train - mean) / std).astype(np.float32),
        ((x_test - mean) / std).astype(np.float32),
    )


def _matrix(values: object, name: str) -> NDArray[np.float64]:
    """A finite real 2-D array (float64)."""
    arr = as_real_array(values, name, scalar=False)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n, d), got shape {arr.shape}")
    check_array_range(arr, name)
    return arr


def _features(values: object, name: str) -> NDArray[np.float32]:
    """Dataset features: a finite real 2-D array, as float32."""
    if isinstance(values, np.ndarray) and values.dtype == np.float32:
        arr = values
    else:
        arr = as_real_array(values, name, scalar=False).astype(np.float32)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n, d), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        check_array_range(arr, name)
    return arr


def _labels(values: object, name: str) -> NDArray[np.int64]:
    """Class labels: an integer (or integer-valued) 1-D array, as int64."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        arr = values
    else:
        arr = as_real_array(values, name, scalar=False)
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            i = int(np.flatnonzero(bad.ravel())[0])
            raise ValueError(
                f"{name} must hold integer class labels, got {name}[{i}] = "
                f"{float(arr.ravel()[i])!r}"
            )
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array (n,), got shape {arr.shape}")
    return arr.astype(np.int64, copy=False)


def _check_fraction(test_fraction: object) -> float:
    return check_real(
        test_fraction, "test_fraction", low=0.0, high=1.0, low_open=True, high_open=True
    )


def _shown_name(name: str) -> str:
    """A file name or path in a message prefix: as is when short, else its last 57
    characters (the file name is the informative end of a path)."""
    return name if len(name) <= 60 else f"...{name[-57:]}"


def _check_bytes(data: object, name: str = "data") -> bytes:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"{name} must be bytes, got {describe(data)}")
    return bytes(data)


def _check_path(path: object, name: str) -> Path:
    """A ``str`` or ``os.PathLike`` path, not empty, as a ``Path``."""
    if isinstance(path, (bytes, bytearray)) or not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or os.PathLike, got {describe(path)}")
    try:
        p = Path(path)
    except TypeError:
        raise TypeError(f"{name} must be a str or os.PathLike, got {describe(path)}") from None
    if not str(path).strip():
        raise ValueError(f"{name} must not be empty, got {short_repr(str(path))}")
    return p


def _probe(p: Path, test: str) -> bool:
    """``p.is_dir()`` / ``p.is_file()`` / ``p.exists()``; ``ValueError`` naming the path when
    it cannot even be looked up (name too long, NUL byte)."""
    try:
        return bool(getattr(p, test)())
    except (OSError, ValueError) as err:
        why = getattr(err, "strerror", None) or str(err)
        raise ValueError(f"MNIST path {short_path(p)} cannot be accessed: {why}") from None


def _stratified_split(
    y: NDArray[np.int64], test_fraction: float, rng: np.random.Generator
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    test_idx = []
    for label in np.unique(y):
        idx = np.flatnonzero(y == label)
        idx = idx[rng.permutation(idx.size)]
        k = int(round(test_fraction * idx.size))
        test_idx.append(idx[:k])
    test = np.sort(np.concatenate(test_idx))
    train = np.setdiff1d(np.arange(y.size), test)
    return train[rng.permutation(train.size)], test


def load_digits_dataset(*, rng: np.random.Generator, test_fraction: float = 0.2) -> Dataset:
    """scikit-learn's embedded 8x8 digits (no download), stratified split, standardised.

    The split (and the order of the training records) is drawn from ``rng``; the caller
    writes the seed that made ``rng`` next to the results.  ``test_fraction`` in (0, 1), such
    that both parts keep at least 2 images.
    """
    from sklearn.datasets import load_digits

    check_rng(rng)
    fraction = _check_fraction(test_fraction)
    x, y = load_digits(return_X_y=True)
    train, test = _stratified_split(y.astype(np.int64), fraction, rng)
    if min(train.size, test.size) < 2:
        raise ValueError(
            f"test_fraction must leave at least 2 images in each part, got {fraction!r} "
            f"({train.size} train, {test.size} test)"
        )
    x_tr, x_te = standardise(x[train], x[test])
    return Dataset(
        x_tr, y[train].astype(np.int64), x_te, y[test].astype(np.int64), 10, name="digits"
    )


# --------------------------------------------------------------------------- MNIST parsing
def parse_idx(data: bytes, *, name: str = "IDX data") -> NDArray:
    """Parse the bytes of an IDX file (gzip-compressed or not) into a numpy array.

    ``name`` (usually the file path) is used in error messages.  ``TypeError`` unless
    ``data`` is bytes; ``ValueError`` for anything malformed.

    >>> raw = bytes([0, 0, 0x08, 1, 0, 0, 0, 3, 7, 8, 9])
    >>> parse_idx(raw).tolist()
    [7, 8, 9]
    >>> parse_idx(b"nonsense")
    Traceback (most recent call last):
    ...
    ValueError: IDX data: not an IDX file (magic bytes b'nons')
    """
    data = _check_bytes(data)
    name = _shown_name(check_str(name, "name"))
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as err:
            raise ValueError(f"{name}: corrupt gzip data ({_cut(str(err))})") from None
    if len(data) < 4:
        raise ValueError(f"{name}: too short for an IDX header ({len(data)} bytes)")
    if data[0] != 0 or data[1] != 0 or data[2] not in _IDX_DTYPES:
        raise ValueError(f"{name}: not an IDX file (magic bytes {bytes(data[:4])!r})")
    dtype = _IDX_DTYPES[data[2]]
    ndim = data[3]
    if ndim < 1:
        raise ValueError(f"{name}: IDX header declares {ndim} dimensions")
    header = 4 + 4 * ndim
    if len(data) < header:
        raise ValueError(f"{name}: truncated IDX header")
    shape = tuple(int(s) for s in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    expected = math.prod(shape) * dtype.itemsize
    if len(data) - header != expected:
        raise ValueError(
            f"{name}: IDX shape {shape} needs {expected} data bytes, file has {len(data) - header}"
        )
    arr = np.frombuffer(data, dtype=dtype, offset=header).reshape(shape)
    return arr.astype(dtype.newbyteorder("="))


def parse_mnist_npz(data: bytes, *, name: str = "mnist.npz") -> dict[str, NDArray]:
    """Parse the bytes of a Keras-style ``mnist.npz`` (x_train, y_train, x_test, y_test).

    ``TypeError`` unless ``data`` is bytes; ``ValueError`` naming ``name`` for anything
    malformed (not an archive, missing or unreadable arrays, object arrays)."""
    data = _check_bytes(data)
    name = _shown_name(check_str(name, "name"))
    try:
        npz = np.load(io.BytesIO(data), allow_pickle=False)
    except _LOAD_ERRORS as err:  # not a zip / npz
        raise ValueError(f"{name}: not a readable .npz file ({_cut(str(err))})") from None
    if not isinstance(npz, np.lib.npyio.NpzFile):
        raise ValueError(f"{name}: a single .npy array, expected an .npz archive")
    with npz:
        missing = [k for k in MNIST_IDX_FILES if k not in npz.files]
        if missing:
            found = short_repr(sorted(npz.files))
            raise ValueError(f"{name}: missing array(s) {missing}; found {found}")
        try:
            return {k: np.asarray(npz[k]) for k in MNIST_IDX_FILES}
        except _LOAD_ERRORS as err:
            raise ValueError(f"{name}: an array could not be read ({_cut(str(err))})") from None


def mnist_from_arrays(
    arrays: dict[str, NDArray],
    *,
    max_train: int = 0,
    rng: np.random.Generator | None = None,
    name: str = "mnist",
) -> Dataset:
    """Flatten, scale to [0, 1], optionally subsample the training part, standardise.

    ``arrays``: a mapping with the arrays ``x_train``, ``y_train``, ``x_test``, ``y_test``
    (images of shape (n, ...) with real pixel values, integer labels).  ``max_train > 0``
    keeps a uniformly random subset of that many training records, drawn from ``rng``
    (required then).
    """
    if not isinstance(arrays, Mapping):
        raise TypeError(f"arrays must be a mapping (dict) of arrays, got {describe(arrays)}")
    max_train = check_int(max_train, "max_train", low=0)
    if rng is not None:
        check_rng(rng)
    name = check_str(name, "name")
    missing = [k for k in MNIST_IDX_FILES if k not in arrays]
    if missing:
        raise ValueError(f"arrays is missing the array(s) {missing}")
    x_tr = _images(arrays["x_train"], "x_train") / 255.0
    x_te = _images(arrays["x_test"], "x_test") / 255.0
    y_tr = _labels(np.asarray(arrays["y_train"]).ravel(), "y_train")
    y_te = _labels(np.asarray(arrays["y_test"]).ravel(), "y_test")
    if x_tr.shape[0] != y_tr.size or x_te.shape[0] != y_te.size:
        raise ValueError(
            f"{_shown_name(name)}: image and label counts differ: train {x_tr.shape[0]} vs "
            f"{y_tr.size}, test {x_te.shape[0]} vs {y_te.size}"
        )
    if 0 < max_train < y_tr.size:
        check_rng(rng, when="when max_train subsamples the training set")
        keep = np.sort(rng.choice(y_tr.size, size=int(max_train), replace=False))
        x_tr, y_tr = x_tr[keep], y_tr[keep]
    x_tr, x_te = standardise(x_tr, x_te)
    n_classes = int(max(y_tr.max(), y_te.max())) + 1
    return Dataset(x_tr, y_tr, x_te, y_te, max(n_classes, 2), name=name)


def _images(values: object, name: str) -> NDArray[np.float64]:
    """Images (n, ...) of real pixel values, flattened to (n, pixels)."""
    if values is None or isinstance(values, (str, bytes, Mapping)):
        raise TypeError(f"{name} must be an array of images, got {describe(values)}")
    arr = as_real_array(values, name, scalar=False)
    if arr.ndim < 2:
        raise ValueError(f"{name} must have shape (n, ...) (one image per row), got {arr.shape}")
    return arr.reshape(arr.shape[0], -1)


_LOAD_ERRORS = (
    OSError,
    EOFError,
    ValueError,
    SyntaxError,
    zipfile.BadZipFile,
    zlib.error,
    tokenize.TokenError,
)


def _cut(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else f"{text[: limit - 25]}... ({len(text)} characters)"


# --------------------------------------------------------------------------- file adapters
def _read_bytes(path: Path) -> bytes:
    if not _probe(path, "is_file"):
        raise FileNotFoundError(
            f"MNIST file {short_repr(path.name)} not found in {short_path(path.parent)}"
        )
    return path.read_bytes()


def read_mnist_idx_dir(directory: str | os.PathLike) -> dict[str, NDArray]:
    """**File I/O adapter.** Read the four IDX files (plain or ``.gz``) from ``directory``."""
    directory = _check_path(directory, "directory")
    if not _probe(directory, "is_dir"):
        raise FileNotFoundError(f"MNIST directory not found: {short_path(directory)}")
    out = {}
    for key, stem in MNIST_IDX_FILES.items():
        candidates = [directory / stem, directory / f"{stem}.gz"]
        found = next((p for p in candidates if _probe(p, "is_file")), None)
        if found is None:
            raise FileNotFoundError(
                f"MNIST file {stem!r} (or {candidates[1].name!r}) not found in "
                f"{short_path(directory)}"
            )
        out[key] = parse_idx(_read_bytes(found), name=str(found))
    return out


def read_mnist_npz(path: str | os.PathLike) -> dict[str, NDArray]:
    """**File I/O adapter.** Read a Keras-style ``mnist.npz``."""
    path = _check_path(path, "path")
    return parse_mnist_npz(_read_bytes(path), name=str(path))


def load_mnist(
    path: str | os.PathLike, *, max_train: int = 0, rng: np.random.Generator | None = None
) -> Dataset:
    """**File I/O adapter.** MNIST from ``path``: an ``.npz`` file or a directory of IDX files.

    ``max_train`` and ``rng`` as in :func:`mnist_from_arrays` (checked before any file is
    read)."""
    if isinstance(path, str) and not path.strip():
        raise ValueError("mnist path is empty; set sgd.mnist_path in the config")
    p = _check_path(path, "path")
    check_int(max_train, "max_train", low=0)
    if rng is not None:
        check_rng(rng)
    if p.suffix == ".npz":
        arrays = read_mnist_npz(p)
    elif _probe(p, "is_dir"):
        arrays = read_mnist_idx_dir(p)
    elif not _probe(p, "exists"):
        raise FileNotFoundError(
            f"MNIST path {short_repr(p.name)} not found in {short_path(p.parent)}"
        )
    else:
        raise ValueError(
            f"MNIST path {short_path(p)} must be an .npz file or a directory of IDX files"
        )
    return mnist_from_arrays(arrays, max_train=max_train, rng=rng, name="mnist")
