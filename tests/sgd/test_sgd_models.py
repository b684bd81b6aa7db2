"""Models and per-example gradients for shuffled SGD."""

from __future__ import annotations

import pytest

torch = pytest.importorskip(
    "torch", reason="the SGD extra is not installed (pip install -e '.[sgd]')"
)

from shuffledp.sgd.models import (
    build_model,
    flat_params,
    n_params,
    per_example_grads,
    set_flat_params,
)
from shuffledp.sgd.randomizers import clip_rows

torch.set_num_threads(1)


def _batch(seed: int = 0, n: int = 7, d: int = 5, k: int = 3):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=g), torch.randint(0, k, (n,), generator=g), g


def _autograd_rows(model, x, y):
    rows = []
    for i in range(x.shape[0]):
        model.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x[i : i + 1]), y[i : i + 1])
        loss.backward()
        rows.append(torch.cat([p.grad.reshape(-1) for p in model.parameters()]))
    return torch.stack(rows)


# (a) reference: autograd, one example at a time -----------------------------------------
@pytest.mark.parametrize("kind", ["logreg", "mlp"])
def test_per_example_grads_match_autograd(kind):
    x, y, g = _batch()
    model = build_model(kind, n_features=5, n_classes=3, hidden=4, generator=g)
    if kind == "logreg":  # move away from the all-zero start
        set_flat_params(model, torch.randn(n_params(model), generator=g))
    fast = per_example_grads(model, x, y)
    slow = _autograd_rows(model, x, y)
    assert fast.shape == (7, n_params(model))
    assert torch.allclose(fast, slow, atol=1e-6)


# (b) invariants -------------------------------------------------------------------------
def test_chunking_gives_the_same_rows():
    x, y, g = _batch(n=10)
    model = build_model("mlp", n_features=5, n_classes=3, hidden=4, generator=g)
    assert torch.allclose(per_example_grads(model, x, y), per_example_grads(model, x, y, chunk=3))


def test_clipping_bounds_every_norm():
    g = torch.Generator().manual_seed(1)
    rows = torch.randn(50, 20, generator=g) * torch.linspace(0.01, 10, 50).unsqueeze(1)
    clipped = clip_rows(rows, 1.5)
    norms = clipped.norm(dim=1)
    assert torch.all(norms <= 1.5 * (1 + 1e-6))
    small = rows.norm(dim=1) <= 1.5
    assert torch.allclose(clipped[small], rows[small])  # short rows untouched


def test_flat_params_round_trip_and_seeded_init():
    g1, g2 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    a = build_model("mlp", n_features=4, n_classes=2, hidden=3, generator=g1)
    b = build_model("mlp", n_features=4, n_classes=2, hidden=3, generator=g2)
    assert torch.equal(flat_params(a), flat_params(b))
    v = torch.arange(n_params(a), dtype=torch.float32)
    set_flat_params(a, v)
    assert torch.equal(flat_params(a), v)


# (c) bad input --------------------------------------------------------------------------
def test_bad_model_inputs():
    g = torch.Generator().manual_seed(0)
    with pytest.raises(ValueError, match="kind must be one of"):
        build_model("cnn", n_features=4, n_classes=2, generator=g)
    with pytest.raises(ValueError, match="n_classes"):
        build_model("logreg", n_features=4, n_classes=1, generator=g)
    with pytest.raises(ValueError, match="clip must be finite and > 0"):
        clip_rows(torch.ones(2, 2), 0.0)
    m = build_model("logreg", n_features=4, n_classes=2, generator=g)
    with pytest.raises(ValueError, match="flat must have 10 entries"):
        set_flat_params(m, torch.zeros(3))


def test_clipped_norms_and_noise_scales_never_exceed_what_is_accounted():
    # float32 round-off must not push a clipped norm above C (the sensitivity the Gaussian is
    # calibrated for) nor a float64 noise scale below its value (docs/theory.md 14)
    import numpy as np

    from shuffledp.sgd.randomizers import _rounded_up

    gen = torch.Generator().manual_seed(3)
    rows = torch.randn(200_000, 7, generator=gen) * 5.0
    assert float(clip_rows(rows, 1.0).norm(dim=1).max()) <= 1.0
    assert float(clip_rows(rows.double(), 0.3).norm(dim=1).max()) <= 0.3
    sig = np.random.default_rng(4).uniform(0.5, 300.0, 100_000)
    up = _rounded_up(sig, torch.float32)
    assert up.dtype == torch.float32 and bool(np.all(up.double().numpy() >= sig))
    assert float(np.max(up.double().numpy() / sig - 1)) < 1.2e-7  # one float32 step at most
