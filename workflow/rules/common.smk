# Config validation (before any job runs) and input functions shared by all rules.
import difflib
import os
import sys

import jsonschema
import numpy as np
import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

import shuffledp
from shuffledp.errors import short_repr
from shuffledp.bounds.window import SUPPORTED as WINDOW_FAMILIES
from shuffledp.experiments.profiles import profile_from_spec
from shuffledp.families import get_family as get_randomizer

CONFIG_SCHEMA = os.path.join(workflow.basedir, "config", "schema.yaml")
MAX_CONFIG_PROBLEMS = 5  # config errors reported at once (one line each)


class ConfigError(ValueError):
    """An invalid configuration: a few lines, raised before any job runs."""


def _coerce_numbers(node):
    """`--config key={...}` values arrive as strings (Snakemake parses nested values with
    YAML's BaseLoader); turn numeric strings back into numbers before validation."""
    if isinstance(node, dict):
        return {k: _coerce_numbers(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_coerce_numbers(v) for v in node]
    if isinstance(node, str):
        for parse in (int, float):
            try:
                return parse(node)
            except ValueError:
                pass
        if node in ("true", "True", "false", "False"):
            return node in ("true", "True")
    return node


def _key_path(path):
    """'bounds_vs_n.n[0]', "profiles['uniform_0.5_2'].low" for a jsonschema path."""
    out = ""
    for key in path:
        if isinstance(key, int):
            out += f"[{key}]"
        elif str(key).isidentifier():
            out += f".{key}" if out else str(key)
        else:
            out += f"[{key!r}]"
    return out


def _where(path):
    return f"config {_key_path(path)}" if path else "config"


def unknown_key_message(path, key, valid):
    """One line for an unknown key, with the closest valid one (difflib)."""
    valid = sorted(valid)
    close = difflib.get_close_matches(str(key), valid, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" if close else f"valid keys: {', '.join(valid)}"
    return f"{_where(path)}: unknown key {short_repr(key)}; {hint}"


def _summary(sub):
    """A few words for a schema alternative (oneOf / anyOf)."""
    if "const" in sub:
        return repr(sub["const"])
    if "enum" in sub:
        return f"one of {short_repr(sub['enum'])}"
    kind = sub.get("type", "a value")
    if kind == "array" and isinstance(sub.get("items"), dict):
        return f"a list of {sub['items'].get('type', 'item')}s"
    return f"a {kind}" if isinstance(kind, str) else f"one of the types {kind}"


_BOUNDS = {
    "minimum": ">=",
    "maximum": "<=",
    "exclusiveMinimum": ">",
    "exclusiveMaximum": "<",
}


def schema_error_lines(error):
    """Short lines for a jsonschema ValidationError: key path, value, constraint."""
    path, value, keyword, limit = (
        list(error.absolute_path),
        error.instance,
        error.validator,
        error.validator_value,
    )
    if keyword == "additionalProperties" and limit is False and isinstance(value, dict):
        props = error.schema.get("properties", {})
        return [
            unknown_key_message(path, key, props) for key in value if key not in props
        ]
    if keyword in _BOUNDS:
        constraint = f"must be {_BOUNDS[keyword]} {limit:g}"
    elif keyword == "type":
        constraint = (
            f"must be of type {limit if isinstance(limit, str) else ' or '.join(limit)}"
        )
    elif keyword == "enum":
        constraint = f"must be one of {', '.join(repr(v) for v in limit)}"
    elif keyword == "const":
        constraint = f"must be {limit!r}"
    elif keyword in ("oneOf", "anyOf"):
        constraint = f"must be {' or '.join(_summary(sub) for sub in limit)}"
    elif keyword == "minItems":
        constraint = f"must have at least {limit} item(s)"
    elif keyword == "maxItems":
        constraint = f"must have at most {limit} item(s)"
    elif keyword == "pattern":
        # a schema may say in words what its pattern means (x-hint, e.g. the run folder)
        hint = error.schema.get("x-hint")
        constraint = (
            f"must be {hint} (schema: pattern)" if hint else f"must match {limit!r}"
        )
    elif keyword == "required":
        missing = [k for k in limit if k not in value]
        return [f"{_where(path)}: missing required key(s) {', '.join(missing)}"]
    else:
        constraint = f"must satisfy {keyword} {short_repr(limit)}"
    # name the schema keyword of a numeric limit (minimum, exclusiveMaximum, ...)
    named = f" (schema: {keyword} {limit:g})" if keyword in _BOUNDS else ""
    return [f"{_where(path)} = {short_repr(value)}: {constraint}{named}"]


def config_problems(cfg, schema):
    """Every violation of the JSON schema, one short line each."""
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(
        validator.iter_errors(cfg), key=lambda e: [str(p) for p in e.absolute_path]
    )
    lines = []
    for err in errors:
        lines += [ln for ln in schema_error_lines(err) if ln not in lines]
    return lines


def _unknown_names(where, names, known, what):
    """Lines for names not in ``known`` (bounds, profiles, options), closest match each."""
    lines = []
    for name in names:
        if name not in known:
            close = difflib.get_close_matches(str(name), list(known), n=1, cutoff=0.6)
            hint = (
                f"did you mean {close[0]!r}?"
                if close
                else f"known: {', '.join(sorted(known)) or 'none'}"
            )
            lines.append(f"config {where}: {what} {short_repr(name)}; {hint}")
    return lines


def cross_check_problems(cfg):
    """Cross-checks the JSON schema cannot express (registry names, profile references)."""
    known = shuffledp.list_bounds()
    lines = []
    if cfg["methods"] != "all":
        lines += _unknown_names("methods", cfg["methods"], known, "unknown bound")
    for section in ("mean_estimation", "frequency_estimation"):
        sec = cfg.get(section, {})
        if sec.get("methods", "all") != "all":
            lines += _unknown_names(
                f"{section}.methods", sec["methods"], known, "unknown bound"
            )
        for name, opts in sec.get("bound_options", {}).items():
            if name not in known:
                lines += _unknown_names(
                    f"{section}.bound_options", [name], known, "unknown bound"
                )
                continue
            accepted = shuffledp.get_bound(name).info.options
            lines += _unknown_names(
                f"{section}.bound_options.{name}", opts, accepted, "unknown option"
            )
    rng = np.random.default_rng(0)
    for name, spec in cfg["profiles"].items():
        try:
            profile_from_spec(spec, n=10, rng=rng)
        except (KeyError, TypeError, ValueError) as err:
            text = str(err).splitlines()[0] if str(err) else type(err).__name__
            text = text if len(text) <= 160 else f"{text[:150]}..."
            lines.append(f"config {_key_path(['profiles', name])}: {text}")
    defined = cfg["profiles"]
    refs = [("personalized.profiles", p) for p in cfg["personalized"]["profiles"]]
    refs += [
        ("personalized_validity.profiles", p)
        for p in cfg["personalized_validity"]["profiles"]
    ]
    refs.append(("runtime.profile", cfg["runtime"]["profile"]))
    for section in ("mean_estimation", "frequency_estimation"):
        refs += [
            (f"{section}.profiles", p) for p in cfg.get(section, {}).get("profiles", [])
        ]
    refs += [
        ("sgd.profiles", p) for p in cfg["sgd"].get("profiles", []) if p != "identical"
    ]
    for where, name in refs:
        lines += _unknown_names(where, [name], defined, "undefined profile")
    if "gaussian" in cfg["sgd"].get("randomizers", []):
        for name in cfg["sgd"].get("profiles", []):
            groups = cfg["profiles"].get(name, {}).get("groups", [])
            if any(len(g) > 2 and g[2] == 0 for g in groups):
                lines.append(
                    f"config profiles.{name}: a group with delta 0 cannot run the sgd "
                    "gaussian randomizer (it needs every delta_i > 0; omit the group's "
                    "delta to use sgd.delta0)"
                )
    bad_table_n = sorted(
        set(cfg["personalized"]["table_n"]) - set(cfg["personalized"]["n"])
    )
    if bad_table_n:
        lines.append(f"config personalized.table_n {bad_table_n} not in personalized.n")
    for section in ("mean_estimation", "frequency_estimation"):
        sec = cfg.get(section, {})
        main = sec.get("main_mechanism", "")
        if main and main not in sec.get("mechanisms", []):
            lines.append(
                f"config {section}.main_mechanism {main!r} not in {section}.mechanisms"
            )
    val = cfg["personalized_validity"]
    for i, spec in enumerate(val["randomizers"]):
        try:
            fam = get_randomizer(spec)
            if fam.family not in WINDOW_FAMILIES:
                raise ValueError(f"no window lower bound for {fam}")
        except (TypeError, ValueError) as err:
            lines.append(f"config personalized_validity.randomizers[{i}] = {spec!r}: {err}")
    for i, spec in enumerate(val.get("main_randomizers", [])):
        try:
            get_randomizer(spec)
        except (TypeError, ValueError) as err:
            lines.append(
                f"config personalized_validity.main_randomizers[{i}] = {spec!r}: {err}"
            )
    lines += _unknown_names(
        "personalized.main_profiles",
        cfg["personalized"].get("main_profiles", []),
        defined,
        "undefined profile",
    )
    return lines


def format_config_problems(lines):
    """The message of a ConfigError: at most MAX_CONFIG_PROBLEMS lines and a pointer."""
    shown = lines[:MAX_CONFIG_PROBLEMS]
    if len(lines) > len(shown):
        shown.append(f"... and {len(lines) - len(shown)} more")
    shown.append("(every key is documented in config/schema.yaml)")
    return "\n".join(shown)


with open(CONFIG_SCHEMA) as _fh:
    _SCHEMA = yaml.safe_load(_fh)
config.update(_coerce_numbers(dict(config)))
# A run folder named by a number (run: 2024, --config run=2024) is a name, not a number.
if type(config.get("run")) is int:
    config["run"] = str(config["run"])
# Raised here, at module level: Snakemake then prints the message and a single traceback line.
_problems = config_problems(config, _SCHEMA)
if _problems:
    raise ConfigError(format_config_problems(_problems))
# Fill in the defaults.  It fails only if a default breaks the schema: keep that short too.
try:
    validate(config, "../../config/schema.yaml", set_default=True)
except WorkflowError as _err:
    _cause = _err.__cause__ or _err.__context__
    if isinstance(_cause, jsonschema.ValidationError):
        _problems = schema_error_lines(_cause)
    else:
        _problems = [ln[:200] for ln in str(_err).splitlines()[:2]]
    raise ConfigError(format_config_problems(_problems)) from None
_problems = cross_check_problems(config)
if _problems:
    raise ConfigError(format_config_problems(_problems))


def bound_methods():
    """Registered bound names selected by config['methods'] (all by default)."""
    methods = config["methods"]
    return shuffledp.list_bounds() if methods == "all" else list(methods)


def validity_tags():
    """File-name tag -> randomizer spec of personalized_validity.randomizers (krr:10 ->
    krr-10: one job each)."""
    return {
        spec.replace(":", "-"): spec
        for spec in config["personalized_validity"]["randomizers"]
    }


def fmt_num(x):
    """Stable wildcard text for a number (1.0 -> '1', 0.25 -> '0.25')."""
    return f"{float(x):g}"


def profile_specs(names):
    return {name: config["profiles"][name] for name in names}


# Estimation experiments (simulations.smk).
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


# --- the results folder of this configuration ----------------------------------------------
# Every output, log and benchmark of a configuration lies under results/<run>/ (config key
# `run`: quick, paper, test, ...), so the quick default, the paper profile and CI never
# overwrite each other's results.
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


# Outputs of each experiment (one named target each, see targets.smk); each experiment also
# writes the configuration that produced them (config_path, rule dump_config).
#: The tidy table of each experiment (also rendered as HTML for the report: rule render_table).
TABLE_FILES = {
    "bounds_vs_n": "bounds/bounds_vs_n.csv",
    "gdp_validity": "gdp_validity/gdp_validity.csv",
    "personalized": "personalized/personalized.csv",
    "personalized_validity": "personalized_validity/personalized_validity.csv",
    "runtime": "runtime/runtime.csv",
    "mean_estimation": "mean_estimation/mean_estimation.csv",
    "frequency_estimation": "frequency_estimation/frequency_estimation.csv",
    "sgd": "sgd/sgd.csv",
}

EXPERIMENTS = {
    "bounds_vs_n": [
        "bounds/bounds_vs_n.csv",
        "figures/bounds_vs_n.png",
        "figures/bounds_vs_n.pdf",
        "figures/bounds_vs_n_all.png",
        "figures/bounds_vs_n_all.pdf",
    ],
    "gdp_validity": [
        "gdp_validity/gdp_validity.csv",
        "figures/gdp_validity.png",
        "figures/gdp_validity.pdf",
    ],
    "personalized": [
        "personalized/personalized.csv",
        "figures/personalized.png",
        "figures/personalized.pdf",
        "figures/personalized_all.png",
        "figures/personalized_all.pdf",
        "tables/personalized.tex",
        "tables/personalized.md",
    ],
    "personalized_validity": [
        "personalized_validity/personalized_validity.csv",
        "figures/personalized_validity.png",
        "figures/personalized_validity.pdf",
        "figures/personalized_validity_all.png",
        "figures/personalized_validity_all.pdf",
    ],
    "runtime": [
        "runtime/runtime.csv",
        "figures/runtime.png",
        "figures/runtime.pdf",
    ],
    "mean_estimation": [
        "mean_estimation/mean_estimation.csv",
        "figures/mean_estimation.png",
        "figures/mean_estimation.pdf",
        "figures/mean_estimation_all.png",
        "figures/mean_estimation_all.pdf",
    ],
    "frequency_estimation": [
        "frequency_estimation/frequency_estimation.csv",
        "figures/frequency_estimation.png",
        "figures/frequency_estimation.pdf",
        "figures/frequency_estimation_all.png",
        "figures/frequency_estimation_all.pdf",
    ],
    "sgd": [
        "sgd/sgd.csv",
        "figures/sgd.png",
        "figures/sgd.pdf",
        "figures/sgd_budgets.png",
        "figures/sgd_budgets.pdf",
    ],
}


def config_path(experiment):
    """The effective configuration that produced an experiment's outputs."""
    return results_path(f"config_used/{experiment}.yaml")


def experiment_outputs(experiment):
    return [results_path(p) for p in EXPERIMENTS[experiment]] + [
        results_path(f"tables/{experiment}.html"),
        config_path(experiment),
    ]


def all_outputs():
    """Every experiment's outputs and the report's landing page (rule report_landing)."""
    return [p for name in EXPERIMENTS for p in experiment_outputs(name)] + [
        results_path("report/landing.rst")
    ]


def _profiles_read_by(experiment):
    sec = config[experiment]
    if experiment in (
        "personalized",
        "personalized_validity",
        "mean_estimation",
        "frequency_estimation",
    ):
        names = list(sec["profiles"])
    elif experiment == "runtime":
        names = [sec["profile"]]
    elif experiment == "sgd":
        names = [p for p in sec["profiles"] if p != "identical"]
    else:
        names = []
    return {name: config["profiles"][name] for name in names}


def experiment_config(experiment):
    """The part of the effective configuration (files, --config overrides, schema defaults)
    that an experiment reads: run, seed, its own section, the bound selection `methods`
    where it uses it, and the budget profiles it names.  Rule dump_config writes it with
    these values as params, so Snakemake's params trigger rewrites the file (and redraws the
    experiment's figures, which take it as input) whenever one of them changes, and only
    then."""
    sec = config[experiment]
    cfg = {"run": RUN, "seed": config["seed"]}
    if (
        experiment in ("bounds_vs_n", "personalized", "personalized_validity", "runtime")
        or sec.get("methods") == "all"
    ):
        cfg["methods"] = config["methods"]
    profiles = _profiles_read_by(experiment)
    if profiles:
        cfg["profiles"] = profiles
    cfg[experiment] = sec
    return _sorted_keys(cfg)


def _sorted_keys(node):
    """Mappings with sorted keys at every level: the params compare equal (no rerun) when
    an override only reorders keys."""
    if isinstance(node, dict):
        return {k: _sorted_keys(node[k]) for k in sorted(node, key=str)}
    if isinstance(node, list):
        return [_sorted_keys(v) for v in node]
    return node


def _first_difference(old, new, where=""):
    """'bounds_vs_n.delta: 1e-06 there, 1e-05 now' for the first differing key, or None."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new), key=str):
            sub = f"{where}.{key}" if where else str(key)
            if key not in old or key not in new:
                return f"{sub} {'missing there' if key not in old else 'missing now'}"
            diff = _first_difference(old[key], new[key], sub)
            if diff:
                return diff
        return None
    if old != new:
        return f"{where}: {short_repr(old)} there, {short_repr(new)} now"
    return None


def report_problems():
    """For `snakemake --report`: the figure captions are rendered from the configuration
    given to --report, so it must be the one that produced the figures.  One line per
    experiment whose written configuration differs, or whose figures are older than it.
    """
    lines = []
    for name in EXPERIMENTS:
        path = config_path(name)
        if not os.path.exists(path):
            continue
        with open(path) as fh:
            written = yaml.safe_load(fh)
        now = yaml.safe_load(yaml.safe_dump(experiment_config(name), sort_keys=True))
        diff = _first_difference(written, now)
        if diff:
            lines.append(
                f"{path} was written by another configuration ({diff}): rerun "
                f"`snakemake --cores all {name}` with this configuration first, or give "
                "--report the --configfile/--config that produced it"
            )
            continue
        figures = [
            results_path(p) for p in EXPERIMENTS[name] if p.startswith("figures/")
        ]
        stale = [
            f
            for f in figures
            if os.path.exists(f) and os.path.getmtime(f) < os.path.getmtime(path)
        ]
        if stale:
            lines.append(
                f"{stale[0]} is older than its configuration {path}: rerun "
                f"`snakemake --cores all {name}` first"
            )
    return lines


def _report_requested():
    # Snakemake gives a Snakefile no flag for report mode: read the command line.
    return any(a == "--report" or a.startswith("--report=") for a in sys.argv[1:])


if _report_requested():
    _problems = report_problems()
    if _problems:
        raise ConfigError("\n".join(_problems))


def gallery_figures(wildcards):
    """Input function of the gallery rule, this run's figures, never CI's tiny ones."""
    if RUN in GALLERY_REFUSED_RUNS:
        raise WorkflowError(
            f"snakemake gallery: config run = {RUN!r} is the CI configuration; its tiny "
            "grids are not published into docs/figures (use the quick or paper config)"
        )
    return [results_path(f"figures/{name}.png") for name in GALLERY]


GALLERY = [
    "bounds_vs_n",
    "gdp_validity",
    "personalized",
    "personalized_validity",
    "mean_estimation",
    "frequency_estimation",
    "sgd",
    "runtime",
]


# Experiment 6 (sgd.smk): the input and resources of its training rules.
def sgd_data_input(wildcards):
    """The user's MNIST file or directory (checked to exist); nothing for digits."""
    if config["sgd"]["dataset"] == "mnist":
        return {"mnist": config["sgd"]["mnist_path"]}
    return {}


SGD_RESOURCES = dict(
    mem_mb=lambda wc: 2000 if config["sgd"]["dataset"] == "digits" else 12000,
    runtime=lambda wc: 30 if config["sgd"]["dataset"] == "digits" else 600,
)
