"""Experiment 4 (mean estimation): utility of each bound's calibrated local budgets.

For one method (a registered bound, or a reference: ``local_only`` = no amplification, local
eps = central eps; ``central_laplace`` = the trusted-curator Laplace mechanism on the mean,
sensitivity 2/n) and every (profile, n, target eps) point of the two sweeps (vs n at
``fixed_eps``, vs target eps at ``fixed_n``): calibrate the common scale s of the profile's
budgets with :func:`shuffledp.calibration.calibrate_scale`, then run randomize -> shuffle ->
estimate ``reps`` times per mechanism and record the MSE against the sample mean, its
Student-t confidence interval and the closed-form variance (``mse_theory``).  A bound that
cannot reach the target gives a row with ``status = not_applicable`` and the reason.

Seeds (written into the table): budgets from ``default_rng([seed, key(profile), n, 1])`` (the
same users for every method and target), data of repetition r from
``default_rng([seed, key(profile), n, 2, r])`` and the mechanism's noise from
``default_rng([seed, key(profile), n, 3, r, key(mechanism)])``: common random numbers, so
methods differ only through their local budgets.  The stream tags 1, 2, 3 keep the three
streams apart (a ``SeedSequence`` ignores trailing zeros: ``[s, k, n, 0]`` is the same stream
as ``[s, k, n]``).  So budgets are drawn independently of the values, the condition under
which the shuffled estimators are unbiased.

``covered``: whether the bound's guarantee holds for this mechanism with these calibrated local
budgets, as answered by :meth:`shuffledp.bounds.base.Bound.covers` (the one place that decides
it: e.g. personalized Laplace or piecewise budgets are not covered by the generic clone masses,
and the Gaussian mechanism is covered only by FMT21's (eps0, delta0) extension with identical
budgets).  Rows with ``covered = False`` are a what-if, not a guarantee.

Snakemake interface (rule ``simulate_mean``): output ``table``; params ``method``,
``section`` (the config's ``mean_estimation`` mapping), ``profiles`` (name -> spec), ``seed``;
optional input ``data`` (CSV with the column ``section["data"]["column"]``).
"""

import hashlib
import sys
import time

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import get_logger, snakemake_kwargs, write_table

REFERENCES = ("local_only", "central_laplace")

COLUMNS = [
    "method", "kind", "sweep", "target_eps", "delta", "profile", "n", "mechanism", "scale",
    "eps0", "eps_local_mean", "bound_eps", "capped", "covered", "mse", "mse_ci_low",
    "mse_ci_high", "mse_theory", "reps", "seed", "status", "reason", "seconds",
]


def stable_key(name):
    """A stable 32-bit integer for a name (part of generator seeds)."""
    return int.from_bytes(hashlib.sha256(str(name).encode()).digest()[:4], "little")


def sweep_points(section):
    """(sweep, n, target_eps) triples: vs n at fixed_eps, then vs eps at fixed_n."""
    pts = [("n", int(n), float(section["fixed_eps"])) for n in section["n"]]
    pts += [("eps", int(section["fixed_n"]), float(e)) for e in section["target_eps"]]
    return pts


def budget_shape(profile_name, spec, *, n, seed, delta0):
    """The profile's budgets (shape before scaling) for n users, seeded by profile and n."""
    import numpy as np

    from shuffledp.params import BudgetProfile, profile_from_spec

    if spec is None:  # identical users: shape eps_i = 1, so the scale is eps0
        return BudgetProfile.identical(n=n, eps0=1.0, delta0=delta0, label="identical")
    rng = np.random.default_rng([int(seed), stable_key(profile_name), int(n), 1])
    return profile_from_spec(spec, n=n, rng=rng, delta0=delta0, label=profile_name)


def covered(method, mechanism, profile, options):
    """Whether the bound is a guarantee for ``mechanism`` with ``profile`` (module docstring)."""
    from shuffledp import get_bound

    return get_bound(method).covers(randomizer=mechanism, profile=profile, **options).covered


def profile_list(section, profiles):
    """[(name, spec or None for identical users)] of the section."""
    out = [(name, profiles[name]) for name in section["profiles"]]
    if section.get("identical", True):
        out.insert(0, ("identical", None))
    return out


def calibrate(method, shape, *, eps, delta, section, options):
    """(scale, certified central eps, capped) for a bound or the local-only reference."""
    from shuffledp.calibration import calibrate_scale, local_only_scale

    if method == "local_only":
        return local_only_scale(shape, eps=eps, delta=delta), eps, False
    cal = calibrate_scale(method=method, profile=shape, eps=eps, delta=delta, options=options,
                          rtol=float(section["rtol"]),
                          max_local_eps=float(section["max_local_eps"]),
                          local_floor=bool(section["local_floor"]))
    return cal.scale, cal.bound_eps, cal.capped


def simulate(*, task, method, section, profiles, seed, logger):
    """Rows for one method over every profile, sweep point and mechanism of ``task``.

    ``task`` supplies ``mechanisms`` (name -> class), ``build(cls, profile)``,
    ``draw(rng, n)`` (one data set), ``truth(x)``, ``sq_error(est, truth)``,
    ``theory(mech, x)`` (closed-form MSE) and ``central(rng, truth, n, eps)``.
    """
    import numpy as np

    from shuffledp import ParameterRegimeError, get_bound
    from shuffledp.estimators import mse_summary, run_protocol

    delta = float(section["delta"])
    reps = int(section["reps"])
    options = dict(section.get("bound_options", {}).get(method, {}))
    kind = "reference" if method in REFERENCES else get_bound(method).info.kind
    rows = []
    for prof_name, spec in profile_list(section, profiles):
        for sweep, n, eps in sweep_points(section):
            base = {"method": method, "kind": kind, "sweep": sweep, "target_eps": eps,
                    "delta": delta, "profile": prof_name, "n": n, "reps": reps,
                    "seed": int(seed)}
            data_seeds = [[int(seed), stable_key(prof_name), n, 2, r] for r in range(reps)]
            if method == "central_laplace":
                t0 = time.perf_counter()
                sq, th = [], []
                for s in data_seeds:
                    rng = np.random.default_rng(s)
                    x = task.draw(rng, n)
                    truth = task.truth(x)
                    noise = np.random.default_rng([*s[:3], 3, s[4], stable_key(method)])
                    est = task.central(noise, truth, n, eps)
                    sq.append(task.sq_error(est, truth))
                    th.append(task.central_theory(n, eps))
                summ = mse_summary(sq)
                rows.append({**base, "mechanism": "central_laplace", "mse": summ.mse,
                             "mse_ci_low": summ.ci_low, "mse_ci_high": summ.ci_high,
                             "mse_theory": float(np.mean(th)), "status": "ok", "reason": "",
                             "covered": True, "seconds": time.perf_counter() - t0})
                continue
            calibrations = {}
            for mech_name, cls in task.mechanisms.items():
                t0 = time.perf_counter()
                delta0 = 0.0 if cls.pure else float(section["gaussian_delta0"])
                shape = budget_shape(prof_name, spec, n=n, seed=seed, delta0=delta0)
                row = {**base, "mechanism": mech_name}
                if delta0 not in calibrations:
                    try:
                        calibrations[delta0] = calibrate(method, shape, eps=eps, delta=delta,
                                                         section=section, options=options)
                    except ParameterRegimeError as err:
                        calibrations[delta0] = err
                cal = calibrations[delta0]
                if isinstance(cal, ParameterRegimeError):
                    rows.append({**row, "status": "not_applicable", "reason": str(cal),
                                 "seconds": time.perf_counter() - t0})
                    continue
                scale, bound_eps, capped = cal
                local = shape.scaled(scale)
                mech = task.build(cls, local)
                sq, th = [], []
                for s in data_seeds:
                    x = task.draw(np.random.default_rng(s), n)
                    truth = task.truth(x)
                    noise = np.random.default_rng([*s[:3], 3, s[4], stable_key(mech_name)])
                    est = run_protocol(mech, x, noise)
                    sq.append(task.sq_error(est, truth))
                    th.append(task.theory(mech, x))
                summ = mse_summary(sq)
                rows.append({
                    **row, "scale": scale, "eps0": local.eps_max,
                    "eps_local_mean": float(local.eps.mean()), "bound_eps": bound_eps,
                    "capped": capped,
                    "covered": True if method == "local_only" else covered(method, mech, local,
                                                                            options),
                    "mse": summ.mse, "mse_ci_low": summ.ci_low, "mse_ci_high": summ.ci_high,
                    "mse_theory": float(np.mean(th)), "status": "ok", "reason": "",
                    "seconds": time.perf_counter() - t0,
                })
            logger.info("%s %s n=%d eps=%g: %s", method, prof_name, n, eps, ", ".join(
                f"{r['mechanism']}={r['mse']:.3g}" if r["status"] == "ok" else
                f"{r['mechanism']}=n/a" for r in rows if r["profile"] == prof_name
                and r["n"] == n and r["target_eps"] == eps and r["sweep"] == sweep))
    return rows


class MeanTask:
    """Mean of values in [-1, 1]: data model, mechanisms and error of experiment 4."""

    def __init__(self, section, data_path=None):
        from shuffledp.mechanisms import MEAN_MECHANISMS

        self.data = dict(section["data"])
        self.mechanisms = {m: MEAN_MECHANISMS[m] for m in section["mechanisms"]}
        self.pool = None
        if self.data["distribution"] == "csv":
            self.pool = load_column(data_path, self.data["column"])
            bad = (self.pool < -1) | (self.pool > 1)
            if bad.any():
                raise ValueError(
                    f"data column {self.data['column']!r} must lie in [-1, 1], got "
                    f"{float(self.pool[bad][0])!r}")

    @staticmethod
    def build(cls, profile):
        return cls.from_profile(profile)

    def draw(self, rng, n):
        dist = self.data["distribution"]
        if dist == "beta":
            return 2.0 * rng.beta(float(self.data["a"]), float(self.data["b"]), size=n) - 1.0
        if dist == "truncated_normal":
            from scipy.stats import truncnorm

            mu, sd = float(self.data["mean"]), float(self.data["std"])
            return truncnorm.rvs((-1 - mu) / sd, (1 - mu) / sd, loc=mu, scale=sd, size=n,
                                 random_state=rng)
        return rng.choice(self.pool, size=n, replace=True)

    @staticmethod
    def truth(x):
        return float(x.mean())

    @staticmethod
    def sq_error(est, truth):
        return float((est - truth) ** 2)

    @staticmethod
    def theory(mech, x):
        return mech.variance(x)

    @staticmethod
    def central(rng, truth, n, eps):
        return truth + rng.laplace(0.0, 2.0 / (n * eps))

    @staticmethod
    def central_theory(n, eps):
        return 2.0 * (2.0 / (n * eps)) ** 2


def load_column(path, column):
    """One numeric column of a user CSV file (the workflow's optional data input)."""
    import pandas as pd

    if not path:
        raise ValueError("data distribution 'csv' needs data.csv_path")
    df = pd.read_csv(path)
    if column not in df.columns:
        raise ValueError(f"data file {path} has no column {column!r}; columns: {list(df)}")
    vals = pd.to_numeric(df[column], errors="coerce").to_numpy(dtype=float)
    if len(vals) == 0 or not (vals == vals).all():
        raise ValueError(f"data column {column!r} of {path} must be numeric and non-empty")
    return vals


def main(*, inputs, outputs, params, log=None):
    import pandas as pd

    logger = get_logger(log)
    section = params["section"]
    task = MeanTask(section, inputs.get("data"))
    rows = simulate(task=task, method=params["method"], section=section,
                    profiles=params["profiles"], seed=params["seed"], logger=logger)
    write_table(pd.DataFrame(rows, columns=COLUMNS), outputs["table"])


if "snakemake" in globals():
    main(**snakemake_kwargs(snakemake))  # noqa: F821
