"""Local randomizers and the shuffled SGD protocol."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="the SGD extra is not installed (pip install -e '.[sgd]')"
)

from shuffledp.gdp import gdp_delta
from shuffledp.sgd.data import load_digits_dataset
from shuffledp.sgd.randomizers import (
    DuchiRandomizer,
    GaussianRandomizer,
    clip_rows,
    make_randomizer,
)
from shuffledp.sgd.train import SGDConfig, train_shuffled_sgd

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def digits():
    return load_digits_dataset(rng=np.random.default_rng(0))


# (a) reference values -------------------------------------------------------------------
def test_gaussian_sigma_is_the_analytic_calibration():
    # Balle & Wang (ICML 2018) Thm 8: (eps, delta)-DP iff
    # Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D) <= delta, D = 2C.
    from scipy.stats import norm

    r = GaussianRandomizer(clip=0.5)
    for eps, delta in [(0.5, 1e-5), (2.0, 1e-8), (8.0, 1e-6)]:
        s = float(r.sigma(eps, delta)[0])
        big_d = 1.0
        val = norm.cdf(big_d / (2 * s) - eps * s / big_d) - math.exp(eps) * norm.cdf(
            -big_d / (2 * s) - eps * s / big_d
        )
        assert val <= delta * (1 + 1e-9)
        assert val >= delta * (1 - 1e-6)  # tight: not over-noised
        assert abs(float(gdp_delta(eps, big_d / s)) - val) < 1e-12
    # Classic Gaussian mechanism is looser than the analytic one (Balle & Wang, Fig. 1).
    eps, delta = 0.5, 1e-5
    classic = 1.0 * math.sqrt(2 * math.log(1.25 / delta)) / eps
    assert float(r.sigma(eps, delta)[0]) < classic


def test_gaussian_noise_scale_matches_calibration():
    r = GaussianRandomizer(clip=1.0)
    g = torch.Generator().manual_seed(0)
    eps = np.array([1.0] * 2000 + [4.0] * 2000)
    out = r.randomize(torch.zeros(4000, 50), eps=eps, delta=1e-6, generator=g)
    sig = r.sigma(np.array([1.0, 4.0]), 1e-6)
    emp = [float(out[:2000].std()), float(out[2000:].std())]
    assert np.allclose(emp, sig, rtol=0.01)


def test_duchi_reports_have_norm_b_and_are_unbiased():
    r = DuchiRandomizer(clip=2.0)
    d, n = 6, 200_000
    x = torch.tensor([1.0, -0.5, 0.0, 0.3, 0.0, 0.2])
    g = torch.Generator().manual_seed(1)
    out = r.randomize(x.repeat(n, 1), eps=1.5, generator=g)
    b = r.radius(eps=1.5, d=d)
    assert torch.allclose(out.norm(dim=1), torch.full((n,), b), rtol=1e-5)
    se = b / math.sqrt(d * n)  # per-coordinate standard error
    assert torch.all((out.mean(dim=0) - x).abs() < 5 * se)


# (b) invariants -------------------------------------------------------------------------
def test_duchi_density_ratio_is_bounded_by_e_eps():
    # The report's direction density is pi or 1 - pi (times 2/|S|) on a half sphere; the
    # mass of the half {<z, w> > 0} for a fixed w differs by at most e^eps between inputs.
    r = DuchiRandomizer(clip=1.0)
    eps = 1.0
    w = torch.tensor([1.0, 0.0, 0.0])
    freq = []
    for x in (torch.tensor([1.0, 0.0, 0.0]), torch.tensor([-1.0, 0.0, 0.0])):
        out = r.randomize(x.repeat(100_000, 1), eps=eps, generator=torch.Generator().manual_seed(2))
        freq.append(float(((out @ w) > 0).float().mean()))
    assert freq[0] / freq[1] <= math.exp(eps) * 1.05
    assert freq[0] / freq[1] > 1.5  # and the mechanism is informative


def test_duchi_keeps_the_opposite_hemisphere_possible_at_large_eps(monkeypatch):
    """At eps = 40, e^eps/(1+e^eps) rounds to 1 in float32: a sampler comparing the uniform
    draw with it would never report the opposite hemisphere (deterministic, not eps-LDP).
    The smallest draw (u = 0) must give the opposite hemisphere, the largest the same one."""
    r = DuchiRandomizer(clip=1.0)
    x = torch.tensor([[1.0, 0.0, 0.0]] * 4)
    rand = torch.rand
    for value, sign in ((0.0, -1.0), (1.0 - 2.0**-24, 1.0)):
        def fake(*args, value=value, **kwargs):
            return torch.full_like(rand(*args, **kwargs), value)

        monkeypatch.setattr(torch, "rand", fake)
        out = r.randomize(x, eps=40.0, generator=torch.Generator().manual_seed(0))
        monkeypatch.setattr(torch, "rand", rand)
        assert (torch.sign(out[:, 0]) == sign).all()


def test_training_is_reproducible_by_seed(digits):
    cfg = SGDConfig(rounds=3, lr=0.3, clip=1.0)
    rnd = make_randomizer("duchi", clip=1.0)
    runs = [
        train_shuffled_sgd(
            digits, config=cfg, randomizer=rnd, eps=2.0, generator=torch.Generator().manual_seed(7)
        ).accuracy
        for _ in range(2)
    ]
    assert runs[0] == runs[1]


def test_nonprivate_training_reaches_stated_accuracy(digits):
    # Regression value at this seed: 0.933 (logreg, 100 full-batch rounds, lr 2, C = 1,
    # digits split seed 0); tolerance 0.02.
    cfg = SGDConfig(rounds=100, lr=2.0, clip=1.0)
    res = train_shuffled_sgd(
        digits, config=cfg, model="logreg", generator=torch.Generator().manual_seed(0)
    )
    assert res.accuracy == pytest.approx(0.933, abs=0.02)
    assert res.n_params == 650 and res.n_users == digits.n_train


def test_private_training_learns(digits):
    cfg = SGDConfig(rounds=30, lr=0.3, clip=1.0)
    res = train_shuffled_sgd(
        digits,
        config=cfg,
        randomizer=make_randomizer("gaussian", clip=1.0),
        eps=4.0,
        delta=1e-6,
        generator=torch.Generator().manual_seed(0),
    )
    assert res.accuracy > 0.5  # far above chance (0.1)


# (c) bad input --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"rounds": 0, "lr": 0.1, "clip": 1.0}, "rounds must be >= 1, got 0"),
        ({"rounds": 5, "lr": 0.1, "clip": 0.0}, "clip must be finite and > 0"),
        ({"rounds": 5, "lr": 0.1, "clip": -1.0}, "clip must be finite and > 0"),
        ({"rounds": 5, "lr": 0.0, "clip": 1.0}, "lr must be"),
        ({"rounds": 5, "lr": 0.1, "clip": 1.0, "momentum": 1.0}, "momentum"),
    ],
)
def test_bad_sgd_config(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SGDConfig(**kwargs)


def test_bad_randomizer_inputs(digits):
    with pytest.raises(ValueError, match="randomizer must be one of"):
        make_randomizer("laplace_vector", clip=1.0)
    with pytest.raises(ValueError, match="clip must be finite and > 0"):
        GaussianRandomizer(clip=0.0)
    with pytest.raises(ValueError, match="delta must be in"):
        GaussianRandomizer(clip=1.0).sigma(1.0, 0.0)
    with pytest.raises(ValueError, match=r"eps must be finite and in \(0, 50\]"):
        DuchiRandomizer(clip=1.0).radius(eps=0.0, d=3)
    with pytest.raises(TypeError, match="d must be an integer"):
        DuchiRandomizer(clip=1.0).radius(eps=1.0, d="3")
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        DuchiRandomizer(clip=1.0).randomize(torch.zeros(2, 3), eps=1.0, generator=None)
    with pytest.raises(TypeError, match="clip must be a real number"):
        GaussianRandomizer(clip=True)
    with pytest.raises(TypeError, match="g must be a torch.Tensor"):
        clip_rows(None, 1.0)
    with pytest.raises(ValueError, match="eps must be given"):
        train_shuffled_sgd(
            digits,
            config=SGDConfig(rounds=1, lr=0.1, clip=1.0),
            randomizer=DuchiRandomizer(clip=1.0),
            generator=torch.Generator().manual_seed(0),
        )


# workflow adapter (thin script) and config schema --------------------------------------
def test_train_sgd_script_writes_a_tidy_table(tmp_path):
    import pandas as pd
    import train_sgd  # workflow/scripts (on sys.path via conftest)

    # the workflow's sgd section: grid lists; the job's values come in params["job"]
    cfg = {
        "dataset": "digits",
        "mnist_path": "",
        "max_train": 0,
        "test_fraction": 0.2,
        "models": ["logreg", "mlp"],
        "hidden": 8,
        "randomizers": ["duchi", "gaussian"],
        "delta0": 1e-12,
        "profiles": ["identical", "g"],
        "tiers": 4,
        "clone": "standard",
        "delta": 1e-5,
        "rounds": 2,
        "lr": 0.3,
        "momentum": 0.0,
        "clip": 1.0,
        "seeds": 1,
        "discretization": 1e-3,
        "chunk": 0,
    }
    specs = {"g": {"kind": "mixture", "groups": [[0.5, 0.5], [0.5, 2.0]]}}
    out = tmp_path / "run.csv"
    job = {"randomizer": "gaussian", "profile": "g", "model": "logreg"}
    for method, targets in (("clones", [4.0, 8.0]), ("nonprivate", [None])):
        train_sgd.main(
            inputs={},
            outputs={"table": str(out)},
            params={"method": method, "target_eps": targets, "job": job, "sgd": cfg,
                    "profiles": specs, "seed": 3},
        )
        df = pd.read_csv(out)
        need = {
            "method",
            "kind",
            "target_eps",
            "delta",
            "rounds",
            "local_eps_scale",
            "accuracy",
            "seed",
            "status",
            "reason",
        }
        assert need <= set(df.columns) and (df["status"] == "ok").all()
        assert (df["randomizer"] == "gaussian").all() and (df["profile"] == "g").all()
        if method == "clones":  # one job, every target eps
            assert df["target_eps"].tolist() == [4.0, 8.0]
            assert (df["budget_levels"] == 2).all()
    bad = dict(cfg, dataset="mnist", mnist_path=str(tmp_path / "missing.npz"))
    with pytest.raises(FileNotFoundError, match="missing.npz"):
        train_sgd.main(
            inputs={},
            outputs={"table": str(out)},
            params={"method": "gdp", "target_eps": [1.0], "job": job, "sgd": bad,
                    "profiles": specs, "seed": 3},
        )


@pytest.mark.parametrize(
    ("sgd", "match"),
    [
        ({"clip": 0.0}, "clip"),
        ({"rounds": 0}, "rounds"),
        ({"methods": ["rdp"]}, "rdp"),
        ({"target_eps": []}, "target_eps"),
    ],
)
def test_schema_rejects_bad_sgd_config(sgd, match):
    from pathlib import Path

    import jsonschema
    import yaml

    root = Path(__file__).resolve().parents[2]
    schema = yaml.safe_load((root / "config" / "schema.yaml").read_text())
    cfg = yaml.safe_load((root / "config" / "config.yaml").read_text())
    cfg["sgd"].update(sgd)
    with pytest.raises(jsonschema.ValidationError) as info:
        jsonschema.validate(cfg, schema)
    assert match in str(info.value.path) + str(info.value.message)
