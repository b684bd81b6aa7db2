"""Models for the SGD experiment and vectorised per-example gradients (PyTorch, CPU).

* ``"logreg"``: multinomial logistic regression, ``logits = x W^T + b`` (cross-entropy loss).
* ``"mlp"``: one hidden layer, ``logits = W2 tanh(W1 x + b1) + b2``.

Per-example gradients are computed with ``torch.func``: ``vmap(grad(loss))`` over the batch
with the parameters held as a dict (``functional_call``), then flattened to one row per
example, shape ``(batch, n_params)``; no Python loop over users.  :func:`per_example_grads`
accepts ``chunk`` to bound memory for large ``n`` (MNIST: 60000 x 7850 floats would be 1.9 GB).

Initialisation draws from a passed-in ``torch.Generator`` (logistic regression starts at 0):
uniform on ``[-1/sqrt(fan_in), 1/sqrt(fan_in)]``, the default of ``torch.nn.Linear``.

>>> import torch
>>> g = torch.Generator().manual_seed(0)
>>> m = build_model("mlp", n_features=4, n_classes=3, hidden=5, generator=g)
>>> n_params(m)
43
>>> x, y = torch.randn(6, 4, generator=g), torch.tensor([0, 1, 2, 0, 1, 2])
>>> per_example_grads(m, x, y).shape
torch.Size([6, 43])
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.func import functional_call, grad, vmap

from shuffledp.errors import short_repr
from shuffledp.validation import check_int, describe

__all__ = [
    "MODEL_KINDS",
    "build_model",
    "n_params",
    "flat_params",
    "set_flat_params",
    "per_example_grads",
    "accuracy",
]

MODEL_KINDS = ("logreg", "mlp")


def _uniform_(t: torch.Tensor, bound: float, generator: torch.Generator) -> None:
    with torch.no_grad():
        t.copy_((torch.rand(t.shape, generator=generator, dtype=t.dtype) * 2 - 1) * bound)


def build_model(
    kind: str,
    *,
    n_features: int,
    n_classes: int,
    hidden: int = 64,
    generator: torch.Generator,
) -> nn.Module:
    """A ``logreg`` or ``mlp`` classifier with parameters drawn from ``generator``."""
    check_model_kind(kind, "kind")
    n_features = check_int(n_features, "n_features", low=1)
    n_classes = check_int(n_classes, "n_classes", low=2)
    hidden = check_int(hidden, "hidden", low=1)
    check_generator(generator)
    if kind == "logreg":
        model = nn.Linear(n_features, n_classes)
        with torch.no_grad():
            model.weight.zero_()
            model.bias.zero_()
        return model
    model = nn.Sequential(nn.Linear(n_features, hidden), nn.Tanh(), nn.Linear(hidden, n_classes))
    for layer in (model[0], model[2]):
        bound = 1.0 / math.sqrt(layer.in_features)
        _uniform_(layer.weight, bound, generator)
        _uniform_(layer.bias, bound, generator)
    return model


def check_model_kind(kind: object, name: str = "model") -> str:
    """``kind`` when it is one of :data:`MODEL_KINDS`; ``TypeError``/``ValueError`` else."""
    if not isinstance(kind, str):
        raise TypeError(f"{name} must be a str, one of {list(MODEL_KINDS)}, got {describe(kind)}")
    if kind not in MODEL_KINDS:
        raise ValueError(f"{name} must be one of {list(MODEL_KINDS)}, got {short_repr(kind)}")
    return kind


def check_generator(generator: object, name: str = "generator") -> torch.Generator:
    """``generator`` when it is a ``torch.Generator``; ``TypeError`` otherwise."""
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"{name} must be a torch.Generator, got {type(generator).__name__}")
    return generator


def check_module(model: object, name: str = "model") -> nn.Module:
    """``model`` when it is a ``torch.nn.Module``; ``TypeError`` otherwise."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"{name} must be a torch.nn.Module, got {type(model).__name__}")
    return model


def check_tensor(
    t: object, name: str, *, ndim: int, floating: bool | None = None
) -> torch.Tensor:
    """``t`` when it is a ``torch.Tensor`` with ``ndim`` dimensions (``floating``: a float
    dtype; ``False``: an integer dtype); ``TypeError``/``ValueError`` otherwise."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if floating is True and not t.dtype.is_floating_point:
        raise TypeError(f"{name} must have a floating dtype, got {t.dtype}")
    integer = not (t.dtype.is_floating_point or t.dtype.is_complex or t.dtype == torch.bool)
    if floating is False and not integer:
        raise TypeError(f"{name} must have an integer dtype, got {t.dtype}")
    if t.dim() != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {tuple(t.shape)}")
    return t


def check_batch(model: object, x: object, y: object) -> None:
    """A model, float features ``x`` (n, d) and integer labels ``y`` (n,), n > 0."""
    check_module(model)
    check_tensor(x, "x", ndim=2, floating=True)
    check_tensor(y, "y", ndim=1, floating=False)
    if x.shape[0] != y.shape[0] or x.shape[0] == 0:
        raise ValueError(
            f"x and y must have the same, non-zero length, got {x.shape[0]} and {y.shape[0]}"
        )


def n_params(model: nn.Module) -> int:
    """Number of trainable scalars (the dimension d of the clipped gradients)."""
    check_module(model)
    return sum(p.numel() for p in model.parameters())


def flat_params(model: nn.Module) -> torch.Tensor:
    """All parameters as one detached vector (the order of ``model.parameters()``)."""
    check_module(model)
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def set_flat_params(model: nn.Module, flat: torch.Tensor) -> None:
    """Write a flat vector back into the parameters (inverse of :func:`flat_params`)."""
    check_module(model)
    check_tensor(flat, "flat", ndim=1, floating=True)
    if flat.numel() != n_params(model):
        raise ValueError(f"flat must have {n_params(model)} entries, got {flat.numel()}")
    i = 0
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(flat[i : i + p.numel()].view_as(p))
            i += p.numel()


def per_example_grads(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor, *, chunk: int = 0
) -> torch.Tensor:
    """Gradients of the cross-entropy loss of each example, one flat row per example.

    ``vmap(grad(loss_of_one_example))`` (torch.func); ``chunk > 0`` processes that many
    examples at a time (same result, bounded memory).  ``x``: float (n, d), ``y``: integer
    labels (n,).
    """
    check_module(model)
    check_tensor(x, "x", ndim=2, floating=True)
    check_tensor(y, "y", ndim=1, floating=False)
    chunk = check_int(chunk, "chunk", low=0)
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"x and y must have the same length, got {x.shape[0]} and {y.shape[0]}")
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss_one(p: dict[str, torch.Tensor], xi: torch.Tensor, yi: torch.Tensor) -> torch.Tensor:
        logits = functional_call(model, p, (xi.unsqueeze(0),))
        return nn.functional.cross_entropy(logits, yi.unsqueeze(0))

    per_ex = vmap(grad(loss_one), in_dims=(None, 0, 0))
    n = x.shape[0]
    step = n if chunk <= 0 else int(chunk)
    rows = []
    for start in range(0, n, step):
        g = per_ex(params, x[start : start + step], y[start : start + step])
        rows.append(torch.cat([g[k].reshape(g[k].shape[0], -1) for k in params], dim=1))
    return rows[0] if len(rows) == 1 else torch.cat(rows, dim=0)


def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    """Fraction of correctly classified examples."""
    check_batch(model, x, y)
    with torch.no_grad():
        return float((model(x).argmax(dim=1) == y).float().mean())
