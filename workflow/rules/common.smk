# Config validation (before any job runs) and input functions shared by all rules.
import numpy as np
from snakemake.utils import validate

import shuffledp
from shuffledp.params import profile_from_spec


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


config.update(_coerce_numbers(dict(config)))
validate(config, "../../config/schema.yaml", set_default=True)


def _check_config():
    """Cross-checks the JSON schema cannot express; raises before any job runs."""
    known = shuffledp.list_bounds()
    methods = config["methods"]
    if methods != "all":
        unknown = [m for m in methods if m not in known]
        if unknown:
            raise ValueError(
                f"config methods: unknown bound(s) {unknown}; known bounds: {known}"
            )
    rng = np.random.default_rng(0)
    for name, spec in config["profiles"].items():
        try:
            profile_from_spec(spec, n=10, rng=rng)
        except (KeyError, ValueError) as err:
            raise ValueError(f"config profiles.{name}: {err!r}") from None
    used = list(config["personalized"]["profiles"]) + [config["runtime"]["profile"]]
    for section in ("mean_estimation", "frequency_estimation"):
        used += list(config.get(section, {}).get("profiles", []))
    if config["sgd"].get("profile", "identical") != "identical":
        used.append(config["sgd"]["profile"])
    missing = sorted({p for p in used if p not in config["profiles"]})
    if missing:
        raise ValueError(
            f"config refers to undefined profile(s) {missing}; defined: "
            f"{sorted(config['profiles'])}"
        )
    bad_table_n = sorted(
        set(config["personalized"]["table_n"]) - set(config["personalized"]["n"])
    )
    if bad_table_n:
        raise ValueError(
            f"config personalized.table_n {bad_table_n} not in personalized.n"
        )


_check_config()


def bound_methods():
    """Registered bound names selected by config['methods'] (all by default)."""
    methods = config["methods"]
    return shuffledp.list_bounds() if methods == "all" else list(methods)


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


# Outputs of each experiment (one named target each, see targets.smk).
EXPERIMENTS = {
    "bounds_vs_n": [
        "results/bounds/bounds_vs_n.csv",
        "results/figures/bounds_vs_n.png",
        "results/figures/bounds_vs_n.pdf",
    ],
    "gdp_validity": [
        "results/gdp_validity/gdp_validity.csv",
        "results/figures/gdp_validity.png",
        "results/figures/gdp_validity.pdf",
    ],
    "personalized": [
        "results/personalized/personalized.csv",
        "results/figures/personalized.png",
        "results/figures/personalized.pdf",
        "results/tables/personalized.tex",
        "results/tables/personalized.md",
    ],
    "runtime": [
        "results/runtime/runtime.csv",
        "results/figures/runtime.png",
        "results/figures/runtime.pdf",
    ],
    "mean_estimation": [
        "results/mean_estimation/mean_estimation.csv",
        "results/figures/mean_estimation.png",
        "results/figures/mean_estimation.pdf",
    ],
    "frequency_estimation": [
        "results/frequency_estimation/frequency_estimation.csv",
        "results/figures/frequency_estimation.png",
        "results/figures/frequency_estimation.pdf",
    ],
    "sgd": [
        "results/sgd/sgd.csv",
        "results/figures/sgd.png",
        "results/figures/sgd.pdf",
    ],
}


def all_outputs():
    return ["results/config_used.yaml"] + [
        p for paths in EXPERIMENTS.values() for p in paths
    ]
