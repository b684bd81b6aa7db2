"""Experiment 6: shuffled PLDP-SGD, test accuracy vs central eps, for one method and target.

``params["method"]`` is an accounting method of :mod:`shuffledp.sgd.accounting` (``gdp``,
``clones``, ``local``) or ``nonprivate`` (clipped SGD without noise).  The per-round local
budgets are calibrated once (they do not depend on the seed); then one training run per seed.
One row per seed: method, kind, target_eps, delta, rounds, local_eps_scale, accuracy, seed,
status ("ok" / "not_applicable"), reason, and the run's settings.  Seeds: ``seed_k`` derived
from the master seed and k (``numpy.random.SeedSequence``); each drives the data split and a
``torch.Generator`` for the initialisation and every noise draw.

Reading MNIST files (``sgd.dataset: mnist``) happens in the library's file adapter
:func:`shuffledp.sgd.data.load_mnist`.
"""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import get_logger, snakemake_kwargs, write_table

REFERENCE_NONPRIVATE = "nonprivate"


def run_seed(k, master):
    import numpy as np

    return int(np.random.SeedSequence([int(master), int(k)]).generate_state(1)[0])


def load_data(cfg, seed):
    import numpy as np

    from shuffledp.sgd.data import load_digits_dataset, load_mnist

    rng = np.random.default_rng(seed)
    if cfg["dataset"] == "digits":
        return load_digits_dataset(rng=rng, test_fraction=float(cfg["test_fraction"]))
    return load_mnist(cfg["mnist_path"], max_train=int(cfg["max_train"]), rng=rng)


def base_profile(cfg, profiles, n, master):
    import numpy as np

    from shuffledp import BudgetProfile
    from shuffledp.params import profile_from_spec

    delta0 = float(cfg["delta0"])
    name = cfg["profile"]
    if name == "identical":
        return BudgetProfile.identical(n=n, eps0=1.0, delta0=delta0, label="identical")
    if name not in profiles:
        raise ValueError(
            f"config sgd.profile = {name!r} is neither 'identical' nor one of the profiles "
            f"{sorted(profiles)}"
        )
    prof = profile_from_spec(
        profiles[name],
        n=n,
        rng=np.random.default_rng([int(master), 7]),
        delta0=delta0,
        label=name,
    )
    return prof.scaled(1.0 / prof.eps_max)  # scale factor = the largest per-round eps_i


def main(*, inputs, outputs, params, log=None):
    import math
    import time

    import pandas as pd
    import torch

    from shuffledp.errors import ParameterRegimeError
    from shuffledp.sgd.accounting import calibrate_scale
    from shuffledp.sgd.randomizers import make_randomizer
    from shuffledp.sgd.train import SGDConfig, train_shuffled_sgd

    logger = get_logger(log)
    torch.set_num_threads(int(params.get("threads", 1)))
    cfg = params["sgd"]
    method = params["method"]
    target = params["target_eps"]
    master = int(params["seed"])
    seeds = [run_seed(k, master) for k in range(int(cfg["seeds"]))]
    sgd_cfg = SGDConfig(
        rounds=int(cfg["rounds"]),
        lr=float(cfg["lr"]),
        clip=float(cfg["clip"]),
        momentum=float(cfg["momentum"]),
        hidden=int(cfg["hidden"]),
        chunk=int(cfg["chunk"]),
    )
    randomizer = make_randomizer(cfg["randomizer"], clip=sgd_cfg.clip)
    common = {
        "method": method,
        "target_eps": target,
        "delta": float(cfg["delta"]),
        "rounds": sgd_cfg.rounds,
        "randomizer": randomizer.name,
        "dataset": cfg["dataset"],
        "model": cfg["model"],
        "clip": sgd_cfg.clip,
        "lr": sgd_cfg.lr,
        "profile": cfg["profile"],
    }
    calibration, reason = None, ""
    first = load_data(cfg, seeds[0])
    if method != REFERENCE_NONPRIVATE:
        base = base_profile(cfg, params["profiles"], first.n_train, master)
        t0 = time.perf_counter()
        try:
            calibration = calibrate_scale(
                method=method,
                base=base,
                rounds=sgd_cfg.rounds,
                eps=float(target),
                delta=float(cfg["delta"]),
                randomizer=randomizer.name,
                clone=cfg["clone"],
                discretization=float(cfg["discretization"]),
            )
            logger.info(
                "%s target eps %g: local eps scale %.4g (achieved eps %.4g) in %.1fs",
                method,
                target,
                calibration.scale,
                calibration.eps_achieved,
                time.perf_counter() - t0,
            )
        except ParameterRegimeError as err:
            reason = str(err)
            logger.info("%s target eps %g not applicable: %s", method, target, reason)
    rows = []
    for seed in seeds:
        row = dict(common, seed=seed)
        if method != REFERENCE_NONPRIVATE and calibration is None:
            row.update(
                kind="upper" if method != "gdp" else "approximate",
                status="not_applicable",
                reason=reason,
                accuracy=math.nan,
                local_eps_scale=math.nan,
            )
            rows.append(row)
            continue
        data = first if seed == seeds[0] else load_data(cfg, seed)
        gen = torch.Generator().manual_seed(seed)
        if calibration is None:
            res = train_shuffled_sgd(data, config=sgd_cfg, model=cfg["model"], generator=gen)
            row.update(kind="nonprivate", local_eps_scale=math.nan, eps_achieved=math.inf)
        else:
            prof = calibration.profile
            res = train_shuffled_sgd(
                data,
                config=sgd_cfg,
                model=cfg["model"],
                randomizer=randomizer,
                eps=prof.eps,
                delta=prof.delta,
                generator=gen,
            )
            row.update({k: v for k, v in calibration.as_row().items() if k not in row})
        row.update(
            status="ok",
            reason="",
            accuracy=res.accuracy,
            train_accuracy=res.train_accuracy,
            n_users=res.n_users,
            n_params=res.n_params,
            seconds=res.seconds,
        )
        logger.info(
            "%s eps %s seed %d: accuracy %.4f (%.1fs)",
            method,
            target,
            seed,
            res.accuracy,
            res.seconds,
        )
        rows.append(row)
    write_table(pd.DataFrame(rows), outputs["table"])


if "snakemake" in globals():
    main(**snakemake_kwargs(snakemake))  # noqa: F821
