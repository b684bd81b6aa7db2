# Config validation (before any job runs), the lists derived from the experiment manifest,
# and the input functions shared by the rules of several experiments.
import os
import sys

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

import shuffledp
from shuffledp.experiments.grids import GDP_VALIDITY_METHODS

# workflow/scripts holds the config checks (wfconfig) and the manifest (wfmanifest)
sys.path.insert(0, os.path.join(workflow.basedir, "workflow", "scripts"))
import wfmanifest
from wfconfig import fmt_num as wfconfig_fmt_num
from wfconfig import (
    ConfigError,
    override_run,
    underscore_problems,
    format_config_problems,
    load_schema,
    report_problems,
    validate_config,
)

# --- the configuration: checked against config/schema.yaml, defaults filled ---------------
# Raised here, at module level: Snakemake then prints the message and a single traceback line.
_problems = validate_config(
    config,
    load_schema(os.path.join(workflow.basedir, "config", "schema.yaml")),
    fill=lambda cfg: validate(cfg, "../../config/schema.yaml", set_default=True),
    fill_errors=(WorkflowError,),
)
_problems += underscore_problems(sys.argv[1:])  # seed=1_000: Snakemake reads it as 1000
if _problems:
    raise ConfigError(format_config_problems(_problems))


def bound_methods():
    """Registered bound names selected by config['methods'] (all by default)."""
    methods = config["methods"]
    return shuffledp.list_bounds() if methods == "all" else list(methods)


def fmt_num(x):
    """Stable, lossless wildcard text for a number (1.0 -> '1', 0.25 -> '0.25', 0.1234567 ->
    '0.1234567'): two values give the same file name only if they are equal (the config
    refuses repeated grid entries)."""
    return wfconfig_fmt_num(x)


def profile_specs(names):
    return {name: config["profiles"][name] for name in names}


# --- the results folder of this configuration ----------------------------------------------
# Every output, log and benchmark of a configuration lies under results/<run>/ (config key
# `run`: quick, paper, test, ...), so the quick default, the paper profile and CI never
# overwrite each other's results.
# A --config override that does not set `run` gets its own folder (wfconfig.override_run:
# results/<run>-<keys>-<hash>/), so it never overwrites the configuration's own results;
# `--config ... run=quick` overwrites on purpose.
_override_run = override_run(
    config["run"], dict(getattr(workflow.config_settings, "config", None) or {})
)
if _override_run is not None:
    print(
        f"note: --config override without run=: its results go to results/{_override_run}/ "
        f"(add run=NAME to name the folder, run={config['run']} to overwrite "
        f"results/{config['run']}/)",
        file=sys.stderr,
    )
    config["run"] = _override_run
RUN = config["run"]
RESULTS = f"results/{RUN}"
# Runs whose figures `snakemake gallery` refuses to publish into docs/figures (CI's tiny grids).
GALLERY_REFUSED_RUNS = ("test",)


def results_path(path):
    """A path in this configuration's results folder: results/<run>/<path>."""
    return f"{RESULTS}/{path}"


def log_path(path):
    """A job's log (follow a running job with `tail -f results/<run>/logs/...`)."""
    return f"{RESULTS}/logs/{path}"


def benchmark_path(path):
    """A job's benchmark (wall time, peak memory) in results/<run>/benchmarks/."""
    return f"{RESULTS}/benchmarks/{path}"


# --- the lists derived from the manifest (workflow/scripts/wfmanifest.py) ------------------
#: Experiment name -> its outputs under results/<run>/ (one named target each, in the
#: experiment's rules file); each experiment also writes the configuration that produced them
#: (config_path, rule dump_config) and its table as HTML (rule render_table).
EXPERIMENTS = {e.name: wfmanifest.outputs(e) for e in wfmanifest.EXPERIMENTS}
#: The tidy table of each experiment (also rendered as HTML for the report: rule render_table).
TABLE_FILES = wfmanifest.table_files()
#: The main figure of each experiment, in the order of the landing page and of the gallery.
GALLERY = [e.gallery.figure for e in wfmanifest.gallery()]
#: (figure, title) of each section of the report's landing page (rule report_landing).
LANDING = [(e.gallery.figure, e.gallery.title) for e in wfmanifest.gallery()]


def config_path(experiment):
    """The effective configuration that produced an experiment's outputs."""
    return results_path(f"config_used/{experiment}.yaml")


def experiment_outputs(experiment):
    """The input of an experiment's target rule."""
    return [results_path(p) for p in EXPERIMENTS[experiment]] + [
        results_path(f"tables/{experiment}.html"),
        config_path(experiment),
    ]


def all_outputs():
    """Every experiment's outputs and the report's landing page (rule report_landing)."""
    return [p for name in EXPERIMENTS for p in experiment_outputs(name)] + [
        results_path("report/landing.rst")
    ]


def experiment_config(experiment):
    """The part of the effective configuration (files, --config overrides, schema defaults)
    that an experiment reads: run, seed, its own section, the bound selection `methods`
    where it uses it, and the budget profiles it names.  Rule dump_config writes it with
    these values as params, so Snakemake's params trigger rewrites the file (and redraws the
    experiment's figures, which take it as input) whenever one of them changes, and only
    then."""
    return wfmanifest.experiment_config(wfmanifest.get(experiment), config, run=RUN)


def _report_requested():
    # Snakemake gives a Snakefile no flag for report mode: read the command line.
    return any(a == "--report" or a.startswith("--report=") for a in sys.argv[1:])


if _report_requested():
    _problems = report_problems(config, run=RUN, results=RESULTS)
    if _problems:
        raise ConfigError("\n".join(_problems))


# --- the rows each per-job table must hold (params expect of the collect_* rules) -------------
def _grid(blocks, open_cols=("method",), repeat=1):
    return {"blocks": blocks, "open": list(open_cols), "repeat": repeat}


def _estimation_grids(section, method_dir):
    sec = config[section]
    profiles = (["identical"] if sec["identical"] else []) + list(sec["profiles"])
    blocks = [
        {"sweep": ["n"], "mechanism": sec["mechanisms"], "profile": profiles, "n": sec["n"],
         "target_eps": [sec["fixed_eps"]]},
        {"sweep": ["eps"], "mechanism": sec["mechanisms"], "profile": profiles,
         "n": [sec["fixed_n"]], "target_eps": sec["target_eps"]},
    ]
    # the central reference runs no local randomizer: its rows name it as the mechanism
    return {
        results_path(f"{method_dir}/{m}.csv"): _grid(
            [{**b, "method": [m]} | ({"mechanism": [m]} if m == "central_laplace" else {})
             for b in blocks], open_cols=())
        for m in simulation_methods(section)
    }


def piece_grids(experiment):
    """Piece path -> the rows it must hold (its grid, from the configuration): every
    combination of each block has a row, and no row lies outside them (``method`` is open
    where a job adds its reference lower bound).  The collect rules check every piece against
    it, so a deleted row or a piece left from another configuration fails the collect rule."""
    methods = bound_methods()
    if experiment == "bounds_vs_n":
        sec = config[experiment]
        return {
            results_path(f"bounds/bounds_vs_n/eps0_{fmt_num(e)}.csv"): _grid(
                [{"n": sec["n"], "eps0": [e], "method": methods}])
            for e in sec["eps0"]
        }
    if experiment == "gdp_validity":
        sec = config[experiment]
        return {
            results_path(f"gdp_validity/n_{n}.csv"): _grid(
                [{"n": [n], "eps0": sec["eps0"],
                  "method": list(GDP_VALIDITY_METHODS)}])
            for n in sec["n"]
        }
    if experiment == "personalized":
        sec = config[experiment]
        return {
            results_path(f"personalized/{p}.csv"): _grid(
                [{"profile": [p], "n": sec["n"], "delta0": sec["delta0"], "method": methods}])
            for p in sec["profiles"]
        }
    if experiment == "personalized_validity":
        sec = config[experiment]
        return {
            results_path(f"personalized_validity/{tag}.csv"): _grid(
                [{"profile": sec["profiles"], "randomizer": [spec], "n": sec["n"],
                  "method": methods}])
            for tag, spec in validity_tags().items()
        }
    if experiment == "mean_estimation":
        return _estimation_grids(experiment, "mean_estimation/runs")
    if experiment == "frequency_estimation":
        return _estimation_grids(experiment, "frequency_estimation/runs")
    if experiment == "sgd":
        sec = config["sgd"]
        return {
            path: _grid([{"target_eps": sec["target_eps"]}], open_cols=(), repeat=sec["seeds"])
            for path in SGD_RUNS if "/nonprivate/" not in path
        } | {path: _grid([], open_cols=()) for path in SGD_RUNS if "/nonprivate/" in path}
    raise ValueError(f"no piece grid for experiment {experiment!r}")


# --- input functions shared by the estimation experiments (mean_estimation.smk,
# frequency_estimation.smk) ------------------------------------------------------------------
SIMULATION_REFERENCES = ["local_only", "central_laplace"]


def simulation_methods(section):
    """Bounds of an estimation section ("all" = the lead's bound_methods()) plus its
    references; unknown names fail here, before any job runs."""
    sec = config[section]
    methods = bound_methods() if sec["methods"] == "all" else list(sec["methods"])
    known = shuffledp.list_bounds()
    unknown = [m for m in methods if m not in known]
    if unknown:
        raise ValueError(
            f"config {section}.methods: unknown bound(s) {unknown}; known bounds: {known}"
        )
    bad_opts = sorted(set(sec["bound_options"]) - set(known))
    if bad_opts:
        raise ValueError(
            f"config {section}.bound_options: unknown bound(s) {bad_opts}; known: {known}"
        )
    return methods + list(sec["references"])


def simulation_data(section):
    """Input function: the user's CSV when the section's data distribution is csv."""

    def inputs(wildcards):
        data = config[section]["data"]
        return {"data": data["csv_path"]} if data["distribution"] == "csv" else {}

    return inputs


# --- input functions of single experiments (used in its rules file) ---------------------------
# personalized_validity.smk
def validity_tags():
    """File-name tag -> randomizer spec of personalized_validity.randomizers (krr:10 ->
    krr-10: one job each)."""
    return {
        spec.replace(":", "-"): spec
        for spec in config["personalized_validity"]["randomizers"]
    }


# sgd.smk: the user's data set
def sgd_data_input(wildcards):
    """The user's MNIST file or directory (checked to exist); nothing for digits."""
    if config["sgd"]["dataset"] == "mnist":
        return {"mnist": config["sgd"]["mnist_path"]}
    return {}


# shared.smk: rule gallery
def gallery_figures(wildcards):
    """Input function of the gallery rule, this run's figures, never CI's tiny ones."""
    if RUN in GALLERY_REFUSED_RUNS:
        raise WorkflowError(
            f"snakemake gallery: config run = {RUN!r} is the CI configuration; its tiny "
            "grids are not published into docs/figures (use the quick or paper config)"
        )
    return [results_path(f"figures/{name}.png") for name in GALLERY]
