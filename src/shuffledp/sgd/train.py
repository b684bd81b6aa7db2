"""Shuffled PLDP-SGD: per-example clipped gradients, local randomizers, server averaging.

Protocol (docs/library.md, "Mechanisms, estimation and SGD").
For ``t = 1..T`` (``rounds``): every user i (one training
record; all n users take part in every round, no subsampling) computes the gradient
``g_i = grad loss(theta_t; x_i, y_i)``, clips it, ``g_i <- g_i min(1, C/||g_i||)``, and
reports ``R_i(g_i)``, an ``(eps_i, delta_i)``-LDP randomization
(:mod:`shuffledp.sgd.randomizers`).  The shuffler permutes the n reports; the server computes
their mean ``m_t`` and takes the step ``theta_{t+1} = theta_t - lr * v_t`` with
``v_t = momentum * v_{t-1} + m_t`` (heavy-ball; any server-side update is post-processing).
The mean is a symmetric function of the reports, so it is computed from the unpermuted
reports: the analyst's view (the multiset) is the same.  Privacy: see
:mod:`shuffledp.sgd.accounting`.

Per-example gradients are vectorised (:func:`shuffledp.sgd.models.per_example_grads`);
``chunk`` processes users in blocks to bound memory (the sum of reports is accumulated).
Every random draw comes from the passed-in ``torch.Generator``.

``randomizer=None`` gives the non-private reference (clipped gradients, no noise): the same
algorithm, so the gap to it is the cost of privacy.

>>> import numpy as np, torch
>>> from shuffledp.sgd.data import load_digits_dataset
>>> ds = load_digits_dataset(rng=np.random.default_rng(0))
>>> cfg = SGDConfig(rounds=5, lr=0.5, clip=1.0)
>>> gen = torch.Generator().manual_seed(0)
>>> res = train_shuffled_sgd(ds, config=cfg, model="logreg", generator=gen)
>>> res.accuracy > 0.5
True
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
from numpy.typing import ArrayLike

from shuffledp.limits import EPS_LOCAL_MAX, LOCAL_EPS_RULE
from shuffledp.sgd.data import Dataset
from shuffledp.sgd.models import (
    accuracy,
    build_model,
    check_batch,
    check_generator,
    check_model_kind,
    flat_params,
    n_params,
    per_example_grads,
    set_flat_params,
)
from shuffledp.sgd.randomizers import (
    DuchiRandomizer,
    DuchiSphereRandomizer,
    GaussianRandomizer,
    GaussianSharedRandomizer,
    clip_rows,
)
from shuffledp.validation import as_real_array, check_array_range, check_int, check_real

__all__ = ["SGDConfig", "TrainResult", "private_mean_gradient", "train_shuffled_sgd"]

Randomizer = GaussianRandomizer | DuchiRandomizer | DuchiSphereRandomizer


@dataclass(frozen=True)
class SGDConfig:
    """Hyper-parameters of shuffled SGD (validated).

    rounds: T >= 1 (each round: every user reports once).  lr: step size > 0.
    clip: L2 clipping norm C > 0.  momentum: heavy-ball factor in [0, 1).
    hidden: width of the MLP's hidden layer.  chunk: users per vectorised block (0 = all).
    """

    rounds: int
    lr: float
    clip: float
    momentum: float = 0.0
    hidden: int = 64
    chunk: int = 0

    def __post_init__(self) -> None:
        check_int(self.rounds, "rounds", low=1)
        check_real(self.lr, "lr", low=0.0, low_open=True)
        check_real(self.clip, "clip", low=0.0, low_open=True)
        check_real(self.momentum, "momentum", low=0.0, high=1.0, high_open=True)
        check_int(self.hidden, "hidden", low=1)
        check_int(self.chunk, "chunk", low=0)


@dataclass(frozen=True)
class TrainResult:
    """Test and train accuracy after training, wall time, and the model dimension."""

    accuracy: float
    train_accuracy: float
    rounds: int
    seconds: float
    n_params: int
    n_users: int


def private_mean_gradient(
    model: torch.nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    clip: float,
    randomizer: Randomizer | None,
    eps: np.ndarray | None,
    delta: np.ndarray | None,
    generator: torch.Generator,
    chunk: int = 0,
) -> torch.Tensor:
    """One round: the server's mean of the users' randomized clipped gradients.

    ``x``: float (n, d) features, ``y``: integer labels (n,); with a ``randomizer``, ``eps``
    and ``delta`` are arrays of one budget per user.
    """
    check_batch(model, x, y)
    check_real(clip, "clip", low=0.0, low_open=True)
    _check_randomizer(randomizer)
    check_generator(generator)
    chunk = check_int(chunk, "chunk", low=0)
    if randomizer is not None:
        if eps is None:
            raise ValueError("eps must be given with a randomizer")
        eps = _per_user(eps, x.shape[0], "eps", scalar=False)
        delta = _per_user(0.0 if delta is None else delta, x.shape[0], "delta", scalar=False)
        _check_budgets(randomizer, eps, delta)
    n = x.shape[0]
    step = n if chunk <= 0 else int(chunk)
    total = None
    for start in range(0, n, step):
        sl = slice(start, start + step)
        g = clip_rows(per_example_grads(model, x[sl], y[sl]), clip, inplace=True)
        if randomizer is not None:
            assert eps is not None and delta is not None
            if isinstance(randomizer, DuchiSphereRandomizer):  # one radius for the round
                g = randomizer.randomize(g, eps=eps[sl], generator=generator, reference=eps)
            elif isinstance(randomizer, GaussianSharedRandomizer):  # one scale for the round
                g = randomizer.randomize(g, eps=eps[sl], delta=delta[sl], generator=generator,
                                         reference=(eps, delta))
            else:
                g = randomizer.randomize(g, eps=eps[sl], delta=delta[sl], generator=generator)
        s = g.sum(dim=0)
        total = s if total is None else total + s
    assert total is not None
    return total / n


def train_shuffled_sgd(
    data: Dataset,
    *,
    config: SGDConfig,
    model: str = "logreg",
    randomizer: Randomizer | None = None,
    eps: ArrayLike | None = None,
    delta: ArrayLike | None = None,
    generator: torch.Generator,
) -> TrainResult:
    """Train ``model`` on ``data`` with T rounds of shuffled LDP-SGD; test accuracy.

    ``eps``/``delta``: per-round local budgets, a scalar or one entry per training record
    (user); required when ``randomizer`` is given.  ``generator`` drives the model
    initialisation and every noise draw.  ``eps`` in (0, EPS_LOCAL_MAX] (the accepted local
    budgets); ``delta`` in [0, 1), and > 0 for the Gaussian randomizer.  Every argument is
    checked before training starts.
    """
    if not isinstance(data, Dataset):
        raise TypeError(f"data must be a shuffledp.sgd.data.Dataset, got {type(data).__name__}")
    if not isinstance(config, SGDConfig):
        raise TypeError(f"config must be an SGDConfig, got {type(config).__name__}")
    check_model_kind(model, "model")
    _check_randomizer(randomizer)
    check_generator(generator)
    if randomizer is None and (eps is not None or delta is not None):
        given = "eps" if eps is not None else "delta"
        raise ValueError(
            f"{given} is given but randomizer is None (non-private training uses no budgets)"
        )
    if randomizer is not None:
        if eps is None:
            raise ValueError("eps must be given with a randomizer")
        _check_budgets(
            randomizer,
            _per_user(eps, data.n_train, "eps"),
            _per_user(0.0 if delta is None else delta, data.n_train, "delta"),
        )
    if randomizer is not None and randomizer.clip != config.clip:
        raise ValueError(
            f"randomizer clip {randomizer.clip!r} differs from config clip {config.clip!r}"
        )
    n = data.n_train
    eps_arr = delta_arr = None
    if randomizer is not None:
        if eps is None:
            raise ValueError("eps must be given with a randomizer")
        eps_arr = np.broadcast_to(np.asarray(eps, dtype=float), (n,)).copy()
        d = 0.0 if delta is None else delta
        delta_arr = np.broadcast_to(np.asarray(d, dtype=float), (n,)).copy()
    start = time.perf_counter()
    x = torch.as_tensor(data.x_train)
    y = torch.as_tensor(data.y_train)
    net = build_model(
        model,
        n_features=data.n_features,
        n_classes=data.n_classes,
        hidden=config.hidden,
        generator=generator,
    )
    theta = flat_params(net)
    velocity = torch.zeros_like(theta)
    for _ in range(config.rounds):
        m = private_mean_gradient(
            net,
            x,
            y,
            clip=config.clip,
            randomizer=randomizer,
            eps=eps_arr,
            delta=delta_arr,
            generator=generator,
            chunk=config.chunk,
        )
        velocity = config.momentum * velocity + m
        theta = theta - config.lr * velocity
        set_flat_params(net, theta)
    seconds = time.perf_counter() - start
    return TrainResult(
        accuracy=accuracy(net, torch.as_tensor(data.x_test), torch.as_tensor(data.y_test)),
        train_accuracy=accuracy(net, x, y),
        rounds=config.rounds,
        seconds=seconds,
        n_params=n_params(net),
        n_users=n,
    )


_POSITIVE_EPS_RULE = (
    f"finite and in (0, {EPS_LOCAL_MAX:g}] (the accepted local budgets; > 0 for the Duchi "
    "randomizer)"
)


def _check_randomizer(randomizer: object) -> None:
    if randomizer is not None and not isinstance(
            randomizer, (GaussianRandomizer, DuchiRandomizer, DuchiSphereRandomizer)):
        raise TypeError(
            f"randomizer must be a GaussianRandomizer, a DuchiRandomizer, a "
            f"DuchiSphereRandomizer or None, got {type(randomizer).__name__}"
        )


def _per_user(values: object, n: int, name: str, *, scalar: bool = True) -> np.ndarray:
    """A scalar (if ``scalar``) or one value per user, as a float array of length n."""
    arr = as_real_array(values.cpu() if isinstance(values, torch.Tensor) else values, name)
    if arr.size == 1 and (scalar or arr.ndim == 1):
        return np.full(n, float(arr.ravel()[0]))
    if arr.shape != (n,):
        what = "be a scalar or have" if scalar else "have"
        raise ValueError(f"{name} must {what} one entry per user ({n}), got shape {arr.shape}")
    return arr


def _check_budgets(randomizer: Randomizer, eps: np.ndarray, delta: np.ndarray) -> None:
    """Per-round budgets: eps in (0, EPS_LOCAL_MAX] (Gaussian: [0, EPS_LOCAL_MAX]), delta in
    [0, 1) (Gaussian: (0, 1))."""
    gaussian = isinstance(randomizer, GaussianRandomizer)
    check_array_range(
        eps,
        "eps",
        low=0.0,
        high=EPS_LOCAL_MAX,
        low_open=not gaussian,
        rule=LOCAL_EPS_RULE if gaussian else _POSITIVE_EPS_RULE,
    )
    if gaussian:
        check_array_range(
            delta,
            "delta",
            low=0.0,
            high=1.0,
            low_open=True,
            high_open=True,
            rule="in (0, 1) for the Gaussian randomizer",
        )
    else:
        check_array_range(delta, "delta", low=0.0, high=1.0, high_open=True)
