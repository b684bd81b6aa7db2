"""Utility experiments: mean and frequency estimation at each bound's calibrated local budgets.

For one method (a registered bound, or a reference of :mod:`shuffledp.experiments.references`)
and every (profile, sweep point) of :class:`EstimationConfig`: calibrate the common scale s of
the profile's budgets (:class:`~shuffledp.experiments.memo.CalibrationMemo`, which calls
:func:`shuffledp.calibration.calibrate_scale`), then run randomize -> shuffle -> estimate
(:func:`shuffledp.estimators.run_protocol`) ``reps`` times per mechanism and record the MSE
against the exact statistic of the data, its Student-t confidence interval
(:func:`shuffledp.estimators.mse_summary`) and the closed-form variance (``mse_theory``).  A
bound that cannot reach the target gives a row with ``status = not_applicable`` and the reason.

Streams (package docstring of :mod:`shuffledp.experiments`): budgets from
``rng_for(seed, "budgets", profile, n)``; data of repetition r from
``rng_for(seed, "data", task, n, r)``; the noise of mechanism m (randomizer and shuffler) from
``rng_for(seed, "noise", task, n, r, m)`` (``m = "central_laplace"`` for that reference).  No
stream depends on the method: common random numbers, so methods differ only through their
local budgets; and the budgets are drawn independently of the values, the condition under
which the shuffled estimators are unbiased (:mod:`shuffledp.mechanisms.base`).

Mechanism-aware bounds: when a bound's options (``get_bound(name).info.options``, read at run
time) include ``mechanism`` (:data:`AWARE_OPTIONS`; ``clones``' mechanism-aware masses), it is
calibrated and its coverage decided for each mechanism with the options
``{**configured, "mechanism": mechanism.randomizer().spec}`` (:func:`bound_options`), so the
memo keeps one calibration per mechanism; other bounds share one calibration among the
mechanisms of the same local delta0.

``covered``: whether the bound's guarantee holds for this mechanism with these calibrated local
budgets, as answered by :meth:`shuffledp.bounds.base.Bound.covers` (the one place that decides
it).  Rows with ``covered = False`` are a what-if, not a guarantee.  ``local_only`` and
``central_laplace`` rows are always covered.  ``options``: the options the bound was
calibrated with (a JSON object, e.g. ``{"mechanism": "laplace"}`` for the mechanism-aware
masses), so that a row can be recomputed from the table alone.

Progress: :func:`run_estimation` calls ``progress(done, total)`` with ``(0, total)`` first and
after each (profile, sweep point), ``total`` = profiles x sweep points.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from shuffledp.bounds import get_bound, list_bounds
from shuffledp.budgets import BudgetProfile
from shuffledp.errors import ParameterRegimeError, short_repr
from shuffledp.estimators import mse_summary, run_protocol
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
from shuffledp.experiments.memo import CalibrationMemo
from shuffledp.experiments.references import (
    CENTRAL_LAPLACE,
    LOCAL_ONLY,
    REFERENCES,
    central_laplace,
    central_laplace_mse,
)
from shuffledp.experiments.seeding import check_seed, rng_for
from shuffledp.experiments.sweeps import (
    SweepPoint,
    as_list,
    check_names,
    draw_budgets,
    positive_eps,
    profile_list,
    sweep_points,
)
from shuffledp.limits import EPS_LOCAL_MAX
from shuffledp.validation import (
    as_real_array,
    check_bool,
    check_int,
    check_real,
    check_str,
    check_target_delta,
    describe,
)

__all__ = [
    "ESTIMATION_COLUMNS",
    "EstimationConfig",
    "MeanTask",
    "FrequencyTask",
    "AWARE_OPTIONS",
    "aware_option",
    "bound_options",
    "is_covered",
    "run_estimation",
    "check_progress",
]

log = logging.getLogger(__name__)

#: Columns of a utility table (``mean_estimation`` / ``frequency_estimation``), in order, with
#: their types (the workflow validates the tables against them); ``kind`` is a bound's kind or
#: ``reference``; empty ``scale``, ``eps0``, ... for ``central_laplace`` and for rows that are
#: not applicable.
ESTIMATION_TABLE = Columns(
    (
        col("method", IDENTIFIER),
        col("kind", CHOICE, values=(*BOUND_KINDS, "reference")),
        col("sweep", CHOICE, values=("n", "eps")),
        col("target_eps", NUMBER),
        col("delta", NUMBER),
        col("profile", STRING),
        col("n", INTEGER),
        col("mechanism", IDENTIFIER),
        col("scale", NUMBER, nullable=True),
        col("eps0", NUMBER, nullable=True),
        col("eps_local_mean", NUMBER, nullable=True),
        col("bound_eps", NUMBER, nullable=True),
        col("capped", BOOLEAN, nullable=True),
        col("covered", BOOLEAN, nullable=True),
        # the options the bound was calibrated with, a JSON object (e.g. {"mechanism": ...}:
        # the mechanism-aware masses); with method, profile, seed and target the row can be
        # recomputed from the table alone; empty for central_laplace (no bound); optional:
        # tables written before the column
        col("options", STRING, nullable=True, optional=True),
        col("mse", NUMBER, nullable=True),
        col("mse_ci_low", NUMBER, nullable=True),
        col("mse_ci_high", NUMBER, nullable=True),
        col("mse_theory", NUMBER, nullable=True),
        col("reps", INTEGER),
        col("seed", INTEGER),
        col("status", CHOICE, values=STATUS),
        col("reason", STRING, nullable=True),
        col("seconds", NUMBER, nullable=True),
    ),
    ok_requires=("mse", "mse_ci_low", "mse_ci_high"),
    keys=("method", "sweep", "mechanism", "profile", "n", "target_eps"),
)
#: Names of the :data:`ESTIMATION_TABLE` columns, in order.
ESTIMATION_COLUMNS = ESTIMATION_TABLE.names

Progress = Callable[[int, int], Any]
#: Option names that make a bound mechanism-aware (its value: the mechanism's randomizer spec).
AWARE_OPTIONS = ("mechanism",)


def check_progress(progress: object) -> Progress | None:
    """``progress`` when it is None or callable; ``TypeError`` otherwise."""
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a callable (done, total) or None, got "
                        f"{describe(progress)}")
    return progress  # type: ignore[return-value]


@dataclass(frozen=True)
class EstimationConfig:
    """The settings of a utility experiment (the config's ``mean_estimation`` /
    ``frequency_estimation`` sections; defaults as in ``config/schema.yaml``).

    ``profiles``: profile names (keys of the specs given to :func:`run_estimation`);
    ``identical``: also identical users (profile ``identical``); ``n``/``fixed_eps`` and
    ``target_eps``/``fixed_n``: the two sweeps (:func:`shuffledp.experiments.sweeps.sweep_points`);
    ``delta``: central target delta; ``gaussian_delta0``: local delta of approximate
    mechanisms (pure ones use 0); ``reps``: repetitions per point; ``bound_options``: options
    per bound name; ``max_local_eps``, ``rtol``, ``local_floor``: calibration settings
    (:func:`shuffledp.calibration.calibrate_scale`).
    """

    profiles: Sequence[str] = ("uniform_0.5_2",)
    identical: bool = True
    n: Sequence[int] = (1000, 10000, 100000)
    fixed_eps: float = 1.0
    target_eps: Sequence[float] = (0.5, 1.0, 2.0, 4.0)
    fixed_n: int = 10000
    delta: float = 1e-6
    gaussian_delta0: float = 1e-8
    reps: int = 20
    bound_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    max_local_eps: float = 30.0
    rtol: float = 1e-3
    local_floor: bool = False

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "profiles", tuple(check_str(p, f"profiles[{i}]")
                                     for i, p in enumerate(as_list(self.profiles, "profiles"))))
        check_bool(self.identical, "identical")
        pts = sweep_points(n=self.n, fixed_eps=self.fixed_eps, target_eps=self.target_eps,
                           fixed_n=self.fixed_n)
        set_(self, "n", tuple(p.n for p in pts if p.sweep == "n"))
        set_(self, "target_eps", tuple(p.target_eps for p in pts if p.sweep == "eps"))
        set_(self, "fixed_eps", positive_eps(self.fixed_eps, "fixed_eps"))
        set_(self, "delta", check_target_delta(self.delta))
        set_(self, "gaussian_delta0", check_real(self.gaussian_delta0, "gaussian_delta0",
                                                 low=0.0, high=1.0, high_open=True))
        set_(self, "reps", check_int(self.reps, "reps", low=1))
        if not isinstance(self.bound_options, Mapping):
            raise TypeError(f"bound_options must be a mapping name -> options, got "
                            f"{describe(self.bound_options)}")
        for name, opts in self.bound_options.items():
            if not isinstance(opts, Mapping):
                raise TypeError(f"bound_options[{name!r}] must be a mapping, got "
                                f"{describe(opts)}")
        set_(self, "max_local_eps", check_real(self.max_local_eps, "max_local_eps", low=0.0,
                                               high=EPS_LOCAL_MAX, low_open=True))
        set_(self, "rtol", check_real(self.rtol, "rtol", low=0.0, high=1.0, low_open=True,
                                      high_open=True))
        check_bool(self.local_floor, "local_floor")

    @classmethod
    def from_section(cls, section: Mapping[str, Any]) -> EstimationConfig:
        """The settings from a config section (other keys, e.g. ``methods``, are ignored)."""
        if not isinstance(section, Mapping):
            raise TypeError(f"section must be a mapping, got {describe(section)}")
        names = [f for f in cls.__dataclass_fields__ if f in section]
        return cls(**{f: section[f] for f in names})

    def points(self) -> list[SweepPoint]:
        """Sweep vs n, then sweep vs eps."""
        return sweep_points(n=self.n, fixed_eps=self.fixed_eps, target_eps=self.target_eps,
                            fixed_n=self.fixed_n)

    def options_for(self, method: str) -> dict[str, Any]:
        """The configured options of ``method`` (empty when none)."""
        return dict(self.bound_options.get(method, {}))


def _choice(value: object, name: str, choices: tuple[str, ...]) -> str:
    check_str(value, name)
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {short_repr(value)}")
    return value  # type: ignore[return-value]


def _pool(pool: object) -> np.ndarray | None:
    if pool is None:
        return None
    arr = as_real_array(pool, "pool", scalar=False).ravel()
    if arr.size == 0:
        raise ValueError("pool must hold at least one value, got an empty array")
    return arr


class MeanTask:
    """Mean of values in [-1, 1] (experiment 4): data model, mechanisms and error.

    ``mechanisms``: names of :data:`shuffledp.mechanisms.MEAN_MECHANISMS`.  Data:
    ``distribution = "beta"`` draws ``2 Beta(a, b) - 1``; ``"truncated_normal"`` draws
    Normal(``mean``, ``std``) truncated to [-1, 1]; ``"csv"`` resamples ``pool`` (the user's
    values, read by the workflow) with replacement.  The error of one run is
    ``(estimate - sample mean)^2``; ``mse_theory`` is the mechanism's closed-form variance.
    """

    name = "mean"

    def __init__(self, mechanisms: Sequence[str], *, distribution: str = "beta",
                 a: float = 2.0, b: float = 5.0, mean: float = 0.0, std: float = 0.5,
                 pool: object = None) -> None:
        from shuffledp.mechanisms import MEAN_MECHANISMS

        names = check_names(mechanisms, "mechanisms", sorted(MEAN_MECHANISMS))
        self.mechanisms = {m: MEAN_MECHANISMS[m] for m in names}
        self.distribution = _choice(distribution, "distribution",
                                    ("beta", "truncated_normal", "csv"))
        self.a = check_real(a, "a", low=0.0, low_open=True)
        self.b = check_real(b, "b", low=0.0, low_open=True)
        self.mean = check_real(mean, "mean", low=-1.0, high=1.0)
        self.std = check_real(std, "std", low=0.0, low_open=True)
        self.pool = _pool(pool)
        if self.distribution == "csv":
            if self.pool is None:
                raise ValueError("pool must be given for distribution 'csv'")
            bad = (self.pool < -1) | (self.pool > 1)
            if bad.any():
                raise ValueError(
                    f"pool values must lie in [-1, 1], got {float(self.pool[bad][0])!r}")

    @classmethod
    def from_section(cls, section: Mapping[str, Any], pool: object = None) -> MeanTask:
        """From the config's ``mean_estimation`` section (``mechanisms``, ``data``)."""
        data = {k: v for k, v in dict(section.get("data", {})).items()
                if k in ("distribution", "a", "b", "mean", "std")}
        return cls(section.get("mechanisms", ("laplace", "duchi", "piecewise")), **data,
                   pool=pool)

    @staticmethod
    def build(cls, profile: BudgetProfile):
        return cls.from_profile(profile)

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        if self.distribution == "beta":
            return 2.0 * rng.beta(self.a, self.b, size=n) - 1.0
        if self.distribution == "truncated_normal":
            from scipy.stats import truncnorm

            mu, sd = self.mean, self.std
            return truncnorm.rvs((-1 - mu) / sd, (1 - mu) / sd, loc=mu, scale=sd, size=n,
                                 random_state=rng)
        return rng.choice(self.pool, size=n, replace=True)

    @staticmethod
    def truth(x: np.ndarray) -> float:
        return float(x.mean())

    @staticmethod
    def sq_error(est, truth) -> float:
        return float((est - truth) ** 2)

    @staticmethod
    def theory(mech, x: np.ndarray) -> float:
        return float(mech.variance(x))


class FrequencyTask:
    """Frequencies of d categories (experiment 5): data model, mechanisms and error.

    ``mechanisms``: names of :data:`shuffledp.mechanisms.FREQUENCY_MECHANISMS` (k-ary
    randomized response ``grr``, optimized unary encoding ``oue``).  Data: Zipf(``exponent``)
    over the d categories (P(k) proportional to (k+1)^-exponent, k = 0..d-1), or ``pool`` (the
    user's integer codes in [0, d)) resampled with replacement.  The error of one run is the
    mean over the d categories of the squared error of the estimated frequency.
    """

    name = "frequency"

    def __init__(self, mechanisms: Sequence[str], *, d: int, distribution: str = "zipf",
                 exponent: float = 1.1, pool: object = None) -> None:
        from shuffledp.mechanisms import FREQUENCY_MECHANISMS

        names = check_names(mechanisms, "mechanisms", sorted(FREQUENCY_MECHANISMS))
        self.mechanisms = {m: FREQUENCY_MECHANISMS[m] for m in names}
        self.d = check_int(d, "d", low=2)
        self.distribution = _choice(distribution, "distribution", ("zipf", "csv"))
        self.exponent = check_real(exponent, "exponent", low=0.0)
        vals = _pool(pool)
        self.pool = None
        if self.distribution == "csv":
            if vals is None:
                raise ValueError("pool must be given for distribution 'csv'")
            if not ((vals == np.round(vals)) & (vals >= 0) & (vals < self.d)).all():
                raise ValueError(f"pool must hold integer categories in [0, {self.d})")
            self.pool = vals.astype(np.int64)
        w = np.arange(1, self.d + 1, dtype=float) ** -self.exponent
        self.weights = w / w.sum()

    @classmethod
    def from_section(cls, section: Mapping[str, Any], pool: object = None) -> FrequencyTask:
        """From the config's ``frequency_estimation`` section (``mechanisms``, ``d``,
        ``data``)."""
        data = {k: v for k, v in dict(section.get("data", {})).items()
                if k in ("distribution", "exponent")}
        return cls(section.get("mechanisms", ("grr", "oue")), d=section.get("d", 100), **data,
                   pool=pool)

    def build(self, cls, profile: BudgetProfile):
        return cls.from_profile(profile, d=self.d)

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        if self.pool is not None:
            return rng.choice(self.pool, size=n, replace=True)
        return rng.choice(self.d, size=n, p=self.weights)

    def truth(self, x: np.ndarray) -> np.ndarray:
        return np.bincount(x, minlength=self.d) / x.size

    @staticmethod
    def sq_error(est, truth) -> float:
        return float(((est - truth) ** 2).mean())

    @staticmethod
    def theory(mech, x: np.ndarray) -> float:
        return float(mech.variance(x).mean())


def aware_option(method: str) -> str | None:
    """The name of ``method``'s option that makes it mechanism-aware (the first of
    :data:`AWARE_OPTIONS` among ``get_bound(method).info.options``, looked up at run time), or
    None (references and bounds without one)."""
    if method in REFERENCES:
        return None
    accepted = get_bound(method).info.options
    return next((name for name in AWARE_OPTIONS if name in accepted), None)


def bound_options(method: str, options: Mapping[str, Any], mechanism) -> dict[str, Any]:
    """The options ``method`` is calibrated with for ``mechanism``: the configured ones, plus
    ``{aware option: mechanism.randomizer().spec}`` when the bound takes such an option
    (:func:`aware_option`); the mechanism's spec replaces a configured value."""
    opts = dict(options)
    name = aware_option(method)
    if name is not None:
        opts[name] = mechanism.randomizer().spec
    return opts


def is_covered(method: str, mechanism, profile: BudgetProfile,
               options: Mapping[str, Any]) -> bool:
    """Whether ``method`` is a guarantee for ``mechanism`` on ``profile`` with ``options``
    (:meth:`shuffledp.bounds.base.Bound.covers`; references: always)."""
    if method in REFERENCES:
        return True
    return bool(get_bound(method).covers(randomizer=mechanism, profile=profile,
                                         **options).covered)


def _method_kind(method: str) -> str:
    check_str(method, "method")
    if method in REFERENCES:
        return "reference"
    known = list_bounds()
    if method not in known:
        raise ValueError(f"method must be a registered bound or one of {list(REFERENCES)}, "
                         f"got {short_repr(method)}; bounds: {', '.join(known)}")
    return get_bound(method).info.kind


def _repetitions(task, *, seed: int, n: int, reps: int, runs: Mapping[str, Callable]):
    """Run every mechanism of ``runs`` on the same ``reps`` data sets (each drawn once) with
    its own noise stream; ``runs[tag](x, truth, noise_rng)`` returns ``(estimate, theory)``.
    Returns ``{tag: (MSESummary, mean theory, seconds)}`` (a data set's drawing time is
    shared equally among the mechanisms)."""
    sq: dict[str, list[float]] = {t: [] for t in runs}
    th: dict[str, list[float]] = {t: [] for t in runs}
    sec = dict.fromkeys(runs, 0.0)
    for r in range(reps):
        t0 = time.perf_counter()
        x = task.draw(rng_for(seed, "data", task.name, n, r), n)
        truth = task.truth(x)
        share = (time.perf_counter() - t0) / len(runs)
        for tag, run in runs.items():
            t0 = time.perf_counter()
            est, theory = run(x, truth, rng_for(seed, "noise", task.name, n, r, tag))
            sq[tag].append(task.sq_error(est, truth))
            th[tag].append(theory)
            sec[tag] += share + time.perf_counter() - t0
    return {t: (mse_summary(sq[t]), float(np.mean(th[t])), sec[t]) for t in runs}


def _summary_cols(summ, theory: float) -> dict[str, Any]:
    return {"mse": summ.mse, "mse_ci_low": summ.ci_low, "mse_ci_high": summ.ci_high,
            "mse_theory": theory, "status": "ok", "reason": ""}


def run_estimation(
    task: MeanTask | FrequencyTask,
    *,
    method: str,
    config: EstimationConfig,
    profiles: Mapping[str, Mapping],
    seed: int,
    memo: CalibrationMemo | None = None,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """Rows (:data:`ESTIMATION_COLUMNS`) of ``method`` over every profile, sweep point and
    mechanism of ``task`` (module docstring).  ``profiles``: name -> spec of
    :func:`shuffledp.experiments.profiles.profile_from_spec` for the names in ``config.profiles``;
    ``seed``: the master seed; ``memo``: a :class:`CalibrationMemo` to share (default: a
    fresh one); ``progress(done, total)``: called per (profile, sweep point)."""
    if not isinstance(task, MeanTask | FrequencyTask):
        raise TypeError(f"task must be a MeanTask or FrequencyTask, got {describe(task)}")
    if not isinstance(config, EstimationConfig):
        raise TypeError(f"config must be an EstimationConfig, got {describe(config)}")
    kind = _method_kind(method)
    seed = check_seed(seed)
    memo = CalibrationMemo() if memo is None else memo
    if not isinstance(memo, CalibrationMemo):
        raise TypeError(f"memo must be a CalibrationMemo or None, got {describe(memo)}")
    progress = check_progress(progress)
    plist = profile_list(config.profiles, profiles, identical=config.identical)
    points = config.points()
    total, done = len(plist) * len(points), 0
    if progress:
        progress(0, total)
    options = config.options_for(method)
    rows: list[dict[str, Any]] = []
    for prof_name, spec in plist:
        for pt in points:
            base = {"method": method, "kind": kind, "sweep": pt.sweep,
                    "target_eps": pt.target_eps, "delta": config.delta, "profile": prof_name,
                    "n": pt.n, "reps": config.reps, "seed": seed}
            if method == CENTRAL_LAPLACE:
                new = [_central_row(task, base, pt, seed=seed, reps=config.reps)]
            else:
                new = _point_rows(task, base, pt, prof_name, spec, method=method,
                                  options=options, config=config, seed=seed, memo=memo)
            rows += new
            done += 1
            log.info("%s %s %s n=%d eps=%g: %s", method, prof_name, pt.sweep, pt.n,
                     pt.target_eps, ", ".join(
                         f"{r['mechanism']}={r['mse']:.3g}" if r["status"] == "ok"
                         else f"{r['mechanism']}=n/a" for r in new))
            if progress:
                progress(done, total)
    return rows


def _central_row(task, base, pt: SweepPoint, *, seed: int, reps: int) -> dict[str, Any]:
    theory = central_laplace_mse(n=pt.n, eps=pt.target_eps)

    def run(x, truth, noise):
        return central_laplace(truth, n=pt.n, eps=pt.target_eps, rng=noise), theory

    summ, th, sec = _repetitions(task, seed=seed, n=pt.n, reps=reps,
                                 runs={CENTRAL_LAPLACE: run})[CENTRAL_LAPLACE]
    return {**base, "mechanism": CENTRAL_LAPLACE, **_summary_cols(summ, th), "covered": True,
            "seconds": sec}


def _point_rows(task, base, pt: SweepPoint, prof_name: str, spec, *, method: str,
                options: Mapping[str, Any], config: EstimationConfig, seed: int,
                memo: CalibrationMemo) -> list[dict[str, Any]]:
    """Calibrate each mechanism (memo), then run the calibrated ones on shared data sets."""
    shapes: dict[float, BudgetProfile] = {}
    rows: dict[str, dict[str, Any]] = {}
    runs: dict[str, Callable] = {}
    for mech_name, cls in task.mechanisms.items():
        t0 = time.perf_counter()
        delta0 = 0.0 if cls.pure else config.gaussian_delta0
        if delta0 not in shapes:
            shapes[delta0] = draw_budgets(prof_name, spec, n=pt.n, seed=seed, delta0=delta0)
        shape = shapes[delta0]
        opts = bound_options(method, options, task.build(cls, shape))
        row = {**base, "mechanism": mech_name, "options": json.dumps(opts, sort_keys=True)}
        try:
            cal = memo.calibrate(method, shape, eps=pt.target_eps, delta=config.delta,
                                 options=opts, rtol=config.rtol,
                                 max_local_eps=config.max_local_eps,
                                 local_floor=config.local_floor)
        except ParameterRegimeError as err:
            rows[mech_name] = {**row, "status": "not_applicable", "reason": str(err),
                               "seconds": time.perf_counter() - t0}
            continue
        local = shape.scaled(cal.scale)
        mech = task.build(cls, local)
        rows[mech_name] = {
            **row, "scale": cal.scale, "eps0": local.eps_max,
            "eps_local_mean": float(local.eps.mean()), "bound_eps": cal.bound_eps,
            "capped": cal.capped,
            "covered": method == LOCAL_ONLY or is_covered(method, mech, local, opts),
            "seconds": time.perf_counter() - t0,
        }

        def run(x, truth, noise, mech=mech):
            return run_protocol(mech, x, noise), task.theory(mech, x)

        runs[mech_name] = run
    if runs:
        for tag, (summ, th, sec) in _repetitions(task, seed=seed, n=pt.n, reps=config.reps,
                                                 runs=runs).items():
            rows[tag].update(_summary_cols(summ, th))
            rows[tag]["seconds"] += sec
    return [rows[m] for m in task.mechanisms]
