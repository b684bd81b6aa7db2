"""The SGD experiment (experiment 6): shuffled PLDP-SGD, test accuracy at a central target.

:func:`run_sgd` runs one accounting method at one target eps: it calibrates the per-round
local budgets once (:func:`shuffledp.sgd.accounting.calibrate_scale`; they do not depend on
the run), then trains ``seeds`` runs (:func:`shuffledp.sgd.train.train_shuffled_sgd`) and
returns one row per run.  ``method`` is an accounting method of
:mod:`shuffledp.sgd.accounting` (``gdp``, ``clones``, ``local``) or ``nonprivate`` (clipped
SGD without noise, no target).

Streams (package docstring of :mod:`shuffledp.experiments`): run k has the run seed
``seed_int(seed, "sgd_run", k)``, written in the row's ``seed`` column (so a row can be
reproduced from its own seed); its train/test split (digits) or training subsample (MNIST)
is drawn from ``rng_for(run_seed, "sgd_split")`` and its ``torch.Generator`` (model
initialisation and every noise draw) is seeded with ``seed_int(run_seed, "sgd_noise")``.  No
stream depends on the method or the target: every method trains on the same splits with the
same noise streams (common random numbers).  A personalized budget profile (``profile`` other
than ``identical``) is drawn from ``rng_for(seed, "budgets", profile, n_train)`` (the same
users as in every other experiment naming that profile and n) and scaled so that its largest
budget is 1 (so the calibrated scale is the largest per-round local eps).  Every user's local
delta is ``delta0`` with the Gaussian randomizer and 0 with the (pure) Duchi randomizer.

Budget levels (``tiers``).  The rigorous ``clones`` accounting amplifies a user only by the
users with the *same* budget (docs/theory.md 14: the SGD randomizers of different budgets
share no clone mass), so for it a personalized profile is first rounded down to at most
``tiers`` budget levels (:meth:`~shuffledp.budgets.BudgetProfile.rounded_down`: each user
keeps the largest level not above its own budget, so every local guarantee still holds) and
the users train with those rounded budgets; ``gdp`` and ``local`` use the profile as drawn.
The row's ``budget_levels`` is the number of distinct budgets trained with and
``local_eps_levels`` lists them (per-round local eps, ';'-separated, at most 16).

Per-tier targets (method ``clones_tiers``).  The ``clones`` accounting calibrated so that the
victims of each budget level k meet their *own* central target, ``target_eps * b_k / b_min``
(``b_k`` the level's base budget): users who chose the smallest budget get ``target_eps``,
those who chose a budget c times larger a target c times larger, as in individualized DP-SGD
(Boenisch et al., NeurIPS 2023); :func:`shuffledp.sgd.tiers.calibrate_tiers`.  The
``clones`` and ``clones_tiers`` rows carry each level's certified central eps
(``tier_eps``, ';'-separated by increasing budget, with ``tier_users`` and, for
``clones_tiers``, ``tier_eps_targets``); ``clones`` holds every level to ``target_eps``.  With
the cross-tier randomizer ``duchi_sphere`` every user amplifies every victim
(docs/theory.md 15.5).

Progress: ``progress(done, total)`` with ``(0, total)`` first and after each run,
``total = seeds``.  Importing this module does not import torch; :func:`run_sgd` does.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Mapping
from typing import Any

from shuffledp.budgets import BudgetProfile
from shuffledp.errors import ParameterRegimeError, short_repr
from shuffledp.experiments._columns import (
    BOOLEAN,
    BOUND_KINDS,
    CHOICE,
    IDENTIFIER,
    INTEGER,
    NUMBER,
    STATUS,
    STRING,
    Columns,
    col,
)
from shuffledp.experiments.estimation import Progress, check_progress
from shuffledp.experiments.seeding import check_seed, rng_for, seed_int
from shuffledp.experiments.sweeps import IDENTICAL, draw_budgets
from shuffledp.validation import check_int, check_real, check_str, describe

__all__ = ["NONPRIVATE", "TIERS_METHOD", "SGD_DEFAULTS", "GRID_KEYS", "run_seeds", "load_sgd_data",
           "sgd_base_profile", "job_config", "run_sgd"]

log = logging.getLogger(__name__)

#: The reference run without noise.
NONPRIVATE = "nonprivate"
#: The ``clones`` accounting with per-tier targets (module docstring).
TIERS_METHOD = "clones_tiers"
#: At most this many levels are listed in ``local_eps_levels`` and the ``tier_*`` columns.
LEVELS_SHOWN = 16
#: Defaults of the ``sgd`` config section (as in ``config/schema.yaml``).
SGD_DEFAULTS: Mapping[str, Any] = {
    "dataset": "digits", "mnist_path": "", "max_train": 0, "test_fraction": 0.2,
    "model": "logreg", "hidden": 64, "randomizer": "duchi", "delta0": 1e-12,
    "profile": IDENTICAL, "tiers": 4, "clone": "standard", "delta": 1e-5, "rounds": 50,
    "lr": 0.3,
    "momentum": 0.0, "clip": 1.0, "seeds": 3, "discretization": 1e-4, "chunk": 0,
}


#: The workflow's grid keys (lists in the ``sgd`` config section) and the key of one job.
GRID_KEYS: Mapping[str, str] = {"randomizers": "randomizer", "profiles": "profile",
                                "models": "model"}

#: Columns of the SGD table (the rows of :func:`run_sgd`), in the workflow's order, with their
#: types (the workflow validates the tables against them).
SGD_TABLE = Columns(
    (
        col("method", IDENTIFIER),
        col("target_eps", NUMBER, nullable=True),  # empty for the nonprivate run
        col("delta", NUMBER),
        col("rounds", INTEGER),
        col("randomizer", IDENTIFIER),
        col("dataset", IDENTIFIER),
        col("model", IDENTIFIER),
        col("clip", NUMBER),
        col("lr", NUMBER),
        col("profile", STRING),
        col("seed", INTEGER),
        col("kind", CHOICE, values=(*BOUND_KINDS, NONPRIVATE)),
        col("local_eps_scale", NUMBER, nullable=True),
        # written by runs that trained (not by a job whose calibration failed)
        col("eps_achieved", NUMBER, nullable=True, optional=True),
        col("local_eps_max", NUMBER, nullable=True, optional=True),  # not nonprivate
        col("local_eps_mean", NUMBER, nullable=True, optional=True),  # not nonprivate
        col("capped", BOOLEAN, nullable=True, optional=True),  # not nonprivate
        # distinct per-round local eps trained with, and them (';'-separated, <= 16)
        col("budget_levels", INTEGER, nullable=True, optional=True),
        col("local_eps_levels", STRING, nullable=True, optional=True),
        # clones and clones_tiers: per budget level (increasing), ';'-separated (<= 16 levels)
        col("tier_users", STRING, nullable=True, optional=True),
        col("tier_eps", STRING, nullable=True, optional=True),
        col("tier_eps_targets", STRING, nullable=True, optional=True),
        col("status", CHOICE, values=STATUS),
        col("reason", STRING, nullable=True),
        col("accuracy", NUMBER, nullable=True),
        col("train_accuracy", NUMBER, nullable=True, optional=True),
        col("n_users", INTEGER, nullable=True, optional=True),
        col("n_params", INTEGER, nullable=True, optional=True),
        col("seconds", NUMBER, nullable=True, optional=True),
        # accuracy of predicting the most frequent test class
        col("chance", NUMBER, nullable=True, optional=True),
    ),
    ok_requires=("accuracy",),
    keys=("method", "randomizer", "profile", "model", "target_eps", "seed"),
)


def job_config(section: Mapping[str, Any], *, randomizer: str, profile: str,
               model: str) -> dict[str, Any]:
    """The settings of one job of the workflow's grid: the ``sgd`` section without its grid
    lists (``randomizers``, ``profiles``, ``models``), with the job's three values."""
    if not isinstance(section, Mapping):
        raise TypeError(f"section must be a mapping (the sgd section), got {describe(section)}")
    job = {k: v for k, v in section.items() if k not in GRID_KEYS}
    job.update(randomizer=check_str(randomizer, "randomizer"),
               profile=check_str(profile, "profile"), model=check_str(model, "model"))
    return job


def run_seeds(seed: int, runs: int) -> list[int]:
    """The run seeds ``seed_int(seed, "sgd_run", k)``, k = 0..runs-1."""
    seed = check_seed(seed)
    return [seed_int(seed, "sgd_run", k) for k in range(check_int(runs, "seeds", low=1))]


def load_sgd_data(cfg: Mapping[str, Any], run_seed: int):
    """The data set of one run: digits split, or the user's MNIST files
    (:func:`shuffledp.sgd.data.load_mnist`, the library's file adapter), with the run's
    ``sgd_split`` stream."""
    from shuffledp.sgd.data import load_digits_dataset, load_mnist

    rng = rng_for(run_seed, "sgd_split")
    if cfg["dataset"] == "digits":
        return load_digits_dataset(rng=rng, test_fraction=float(cfg["test_fraction"]))
    if cfg["dataset"] == "mnist":
        return load_mnist(cfg["mnist_path"], max_train=int(cfg["max_train"]), rng=rng)
    raise ValueError(f"dataset must be 'digits' or 'mnist', got {short_repr(cfg['dataset'])}")


def sgd_base_profile(cfg: Mapping[str, Any], profiles: Mapping[str, Mapping], n: int,
                     seed: int) -> BudgetProfile:
    """Per-round budget shape of ``n`` users with largest budget 1 (module docstring); local
    delta ``delta0`` (or a mixture group's own delta, which must be > 0) for the Gaussian
    randomizer, 0 for the pure Duchi randomizer."""
    from shuffledp.sgd.randomizers import RANDOMIZERS

    cfg = {**SGD_DEFAULTS, **cfg}
    name = check_str(cfg["profile"], "profile")
    delta0 = check_real(cfg["delta0"], "delta0", low=0.0, high=1.0, high_open=True)
    rand = check_str(cfg["randomizer"], "randomizer")
    if rand not in RANDOMIZERS:
        raise ValueError(f"randomizer must be one of {sorted(RANDOMIZERS)}, got "
                         f"{short_repr(rand)}")
    if RANDOMIZERS[rand].pure:
        delta0 = 0.0
    elif delta0 == 0.0:
        raise ValueError(f"delta0 must be > 0 for the {rand} randomizer, got 0")
    if name == IDENTICAL:
        return draw_budgets(IDENTICAL, None, n=n, seed=seed, delta0=delta0)
    if name not in profiles:
        raise ValueError(f"profile = {name!r} is neither 'identical' nor one of the profiles "
                         f"{sorted(profiles)}")
    prof = draw_budgets(name, profiles[name], n=n, seed=seed, delta0=delta0)
    if RANDOMIZERS[rand].pure and not prof.is_pure:  # a group's own delta: Duchi is pure
        prof = BudgetProfile(eps=prof.eps, delta=0.0, label=prof.label)
    elif not RANDOMIZERS[rand].pure and not prof.delta_min > 0:
        raise ValueError(f"profile {name!r} gives some users delta_i = 0 (a group's own "
                         f"delta); the {rand} randomizer needs every delta_i > 0")
    return prof.scaled(1.0 / prof.eps_max)


def _settings(cfg: object) -> dict[str, Any]:
    if not isinstance(cfg, Mapping):
        raise TypeError(f"config must be a mapping (the sgd section), got {describe(cfg)}")
    unknown = sorted(set(cfg) - set(SGD_DEFAULTS) - {"methods", "references", "target_eps"})
    if unknown:
        raise ValueError(f"config has unknown key(s) {unknown}; known: {sorted(SGD_DEFAULTS)}")
    return {**SGD_DEFAULTS, **cfg}


def run_sgd(*, method: str, target_eps: float | None, config: Mapping[str, Any],
            profiles: Mapping[str, Mapping], seed: int,
            progress: Progress | None = None) -> list[dict[str, Any]]:
    """One row per run (module docstring) of ``method`` at the central ``target_eps`` (None
    for ``nonprivate``); ``config``: the ``sgd`` section (missing keys take
    :data:`SGD_DEFAULTS`); ``profiles``: name -> spec; ``seed``: the master seed."""
    from shuffledp.sgd.accounting import METHOD_KIND as ACCOUNTING_KIND
    from shuffledp.sgd.accounting import calibrate_scale
    from shuffledp.sgd.randomizers import make_randomizer
    from shuffledp.sgd.tiers import calibrate_tiers, tier_guarantees
    from shuffledp.sgd.train import SGDConfig, train_shuffled_sgd

    METHOD_KIND = {**ACCOUNTING_KIND, TIERS_METHOD: "upper"}  # noqa: N806
    cfg = _settings(config)
    check_str(method, "method")
    if method != NONPRIVATE and method not in METHOD_KIND:
        raise ValueError(f"method must be one of {[*METHOD_KIND, NONPRIVATE]}, got "
                         f"{short_repr(method)}")
    if method == NONPRIVATE:
        if target_eps is not None:
            raise ValueError(f"target_eps must be None for {NONPRIVATE!r}, got {target_eps!r}")
    else:
        target_eps = check_real(target_eps, "target_eps", low=0.0, low_open=True)
    progress = check_progress(progress)
    seeds = run_seeds(seed, cfg["seeds"])
    sgd_cfg = SGDConfig(rounds=int(cfg["rounds"]), lr=float(cfg["lr"]),
                        clip=float(cfg["clip"]), momentum=float(cfg["momentum"]),
                        hidden=int(cfg["hidden"]), chunk=int(cfg["chunk"]))
    randomizer = make_randomizer(cfg["randomizer"], clip=sgd_cfg.clip)
    common = {"method": method, "target_eps": target_eps, "delta": float(cfg["delta"]),
              "rounds": sgd_cfg.rounds, "randomizer": randomizer.name,
              "dataset": cfg["dataset"], "model": cfg["model"], "clip": sgd_cfg.clip,
              "lr": sgd_cfg.lr, "profile": cfg["profile"]}
    if progress:
        progress(0, len(seeds))
    first = load_sgd_data(cfg, seeds[0])
    # accuracy of always predicting the most frequent test class (the figure's chance line)
    import numpy as np

    common["chance"] = float(np.bincount(np.asarray(first.y_test)).max() / len(first.y_test))
    calibration, reason, tier_cols = None, "", {}
    if method != NONPRIVATE:
        base = sgd_base_profile(cfg, profiles, first.n_train, seed)
        if method in ("clones", TIERS_METHOD):
            base = base.rounded_down(check_int(cfg["tiers"], "tiers", low=1))
        settings = {"rounds": sgd_cfg.rounds, "delta": float(cfg["delta"]),
                    "randomizer": randomizer.name, "clone": cfg["clone"],
                    "discretization": float(cfg["discretization"])}
        try:
            if method == TIERS_METHOD:
                levels = base.tiers.eps
                targets = float(target_eps) * levels / levels.min()
                calibration, tiers = calibrate_tiers(method="clones", base=base,
                                                     targets=targets, **settings)
                # the row's target is the smallest budgets' one, and so is its eps_achieved
                # (each level's own eps and target are in the tier_* columns)
                calibration = dataclasses.replace(calibration, method=TIERS_METHOD,
                                                  target_eps=float(target_eps),
                                                  bound_eps=float(tiers[0].eps))
                tier_cols = _tier_columns(tiers, targets)
            else:
                calibration = calibrate_scale(method=method, base=base, eps=float(target_eps),
                                              **settings)
                if method == "clones" and calibration.profile.tiers.eps.size <= LEVELS_SHOWN:
                    tier_cols = _tier_columns(tier_guarantees(
                        method="clones", profile=calibration.profile, **settings), None)
            log.info("%s target eps %g: local eps scale %.4g", method, target_eps,
                     calibration.scale)
        except ParameterRegimeError as err:
            reason = str(err)
            log.info("%s target eps %g not applicable: %s", method, target_eps, reason)
    rows = []
    for k, run_seed in enumerate(seeds):
        row = dict(common, seed=run_seed)
        if method != NONPRIVATE and calibration is None:
            row.update(kind=METHOD_KIND[method], status="not_applicable", reason=reason,
                       accuracy=math.nan, local_eps_scale=math.nan)
        else:
            res = _train(k, run_seed, first, cfg, sgd_cfg, randomizer, calibration,
                         train_shuffled_sgd)
            if calibration is None:
                row.update(kind=NONPRIVATE, local_eps_scale=math.nan, eps_achieved=math.inf)
            else:
                row.update({c: v for c, v in calibration.as_row().items() if c not in row})
                row.update(_levels(calibration.profile))
                row.update(tier_cols)
            row.update(status="ok", reason="", accuracy=res.accuracy,
                       train_accuracy=res.train_accuracy, n_users=res.n_users,
                       n_params=res.n_params, seconds=res.seconds)
            log.info("%s eps %s run %d: accuracy %.4f (%.1fs)", method, target_eps, k,
                     res.accuracy, res.seconds)
        rows.append(row)
        if progress:
            progress(k + 1, len(seeds))
    return rows


def _tier_columns(tiers, targets) -> dict[str, Any]:
    """``tier_users``, ``tier_eps`` (certified central eps per level) and
    ``tier_eps_targets`` (per-tier targets, or empty), ';'-separated, 4 significant digits
    (eps rounded up: the text never claims less than the certificate)."""
    def up(v: float) -> str:
        if not (math.isfinite(v) and v > 0):
            return f"{v:.4g}"
        step = 10.0 ** (math.floor(math.log10(v)) - 3)
        text = f"{math.ceil(v / step) * step:.4g}"
        while float(text) < v:  # round-off of the product
            text = f"{float(text) + step:.4g}"
        return text

    if len(tiers) > LEVELS_SHOWN:
        return {}
    return {"tier_users": ";".join(str(g.n) for g in tiers),
            "tier_eps": ";".join(up(g.eps) for g in tiers),
            "tier_eps_targets": "" if targets is None else ";".join(f"{v:.6g}" for v in targets)}


def _levels(profile: BudgetProfile) -> dict[str, Any]:
    """``budget_levels`` (distinct per-round local eps) and ``local_eps_levels`` (them, when
    at most 16, ';'-separated, 4 significant digits)."""
    import numpy as np

    values = np.unique(profile.tiers.eps)
    text = ";".join(f"{v:.4g}" for v in values) if values.size <= 16 else ""
    return {"budget_levels": int(values.size), "local_eps_levels": text}


def _train(k, run_seed, first, cfg, sgd_cfg, randomizer, calibration, train):
    import torch

    data = first if k == 0 else load_sgd_data(cfg, run_seed)
    gen = torch.Generator().manual_seed(seed_int(run_seed, "sgd_noise"))
    if calibration is None:
        return train(data, config=sgd_cfg, model=cfg["model"], generator=gen)
    prof = calibration.profile
    return train(data, config=sgd_cfg, model=cfg["model"], randomizer=randomizer,
                 eps=prof.eps, delta=prof.delta, generator=gen)
