"""The manifest of the workflow: one entry per experiment, from which the rules' lists derive.

An :class:`Experiment` says what the experiment produces (its tidy table, where that table's
columns are declared, its figures and further outputs, the figure of the report's landing
page and of the README gallery) and which configuration it reads (its config section, the
budget profiles it names, the bound selection ``methods``).  Its rules (compute, collect, plot
and the target rule named after it) are in ``workflow/rules/<name>.smk``.  From
:data:`EXPERIMENTS`, ``workflow/rules/common.smk`` derives the outputs of every target and of
``rule all``, the tables rendered for the report, the configuration each experiment writes
beside its results, the landing page and the gallery; ``table_schemas.py`` the table kinds;
``wfconfig.py`` the profile references it checks.  ``docs/adding_an_experiment.md`` lists the
steps of adding one.

The name of an experiment is also its target rule, its config section, its table kind
(``read_table(path, name)``), ``tables/<name>.html`` and ``config_used/<name>.yaml``.

Importable without Snakemake (tests, scripts); no ``from __future__`` import (scripts run
under Snakemake's ``script:`` directive share this rule).
"""

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "BOUND_EXPERIMENTS",
    "Gallery",
    "Experiment",
    "EXPERIMENTS",
    "get",
    "names",
    "outputs",
    "figures",
    "table_files",
    "gallery",
    "profiles_read",
    "profile_references",
    "experiment_config",
    "sorted_keys",
]


@dataclass(frozen=True)
class Gallery:
    """The main figure of an experiment: ``figures/<figure>.png`` is a section titled
    ``title`` of the report's landing page (rule ``report_landing``) and is copied into
    docs/figures by rule ``gallery``; ``position``: its place in both (1, 2, ...)."""

    figure: str
    title: str
    position: int


@dataclass(frozen=True)
class Experiment:
    """One experiment of the workflow.

    ``table``: its tidy table, relative to ``results/<run>/``; ``columns``: where the table's
    columns are declared, ``"module:NAME"`` (a :class:`shuffledp.experiments._columns.Columns`
    beside the code that writes the rows); ``pieces``: the columns that hold one value in
    each per-job table its collect rule concatenates (empty: the table is written by one job);
    ``figures``: ``figures/<f>.png`` and ``.pdf`` for each, the main figure first;
    ``extra_outputs``: its further outputs under ``results/<run>/``; ``gallery``: its main
    figure on the landing page.  Configuration read: its section ``config[name]``, the budget
    profiles named by the key ``profiles`` of that section (a list, or a single name for a key
    ``profile``; names in ``builtin_profiles`` are not config profiles) and the top-level
    ``methods`` when ``methods`` is True (or when its own ``methods`` is ``"all"``).
    """

    name: str
    table: str
    columns: str
    pieces: tuple[str, ...]
    figures: tuple[str, ...]
    gallery: Gallery
    profiles: str | None = None
    builtin_profiles: tuple[str, ...] = ()
    methods: bool = False
    extra_outputs: tuple[str, ...] = ()

    def __post_init__(self):
        if not self.name.isidentifier() or not self.name.islower():
            raise ValueError(f"experiment name {self.name!r}: a snake_case rule name")
        if ":" not in self.columns:
            raise ValueError(f"experiment {self.name!r}: columns must be 'module:NAME', got "
                             f"{self.columns!r}")
        if self.gallery.figure not in self.figures:
            raise ValueError(f"experiment {self.name!r}: gallery figure "
                             f"{self.gallery.figure!r} is not one of its figures")
        if self.profiles not in (None, "profiles", "profile"):
            raise ValueError(f"experiment {self.name!r}: profiles must be None, 'profiles' "
                             f"or 'profile', got {self.profiles!r}")


#: The fast target ``bounds`` (README "Set up": under two minutes on 2 cores at the quick
#: default): the identical-budget bound experiments, figures 1 and 2 (every bound against the
#: exact lower bound; where the paper's formula is invalid).  No simulation or training; the
#: personalized bound experiments are their own targets (several minutes each).
BOUND_EXPERIMENTS: tuple[str, ...] = ("bounds_vs_n", "gdp_validity")

#: Every experiment, in the order of ``rule all`` (and of the lists derived from it).
EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "bounds_vs_n",
        table="bounds/bounds_vs_n.csv",
        columns="shuffledp.experiments.grids:BOUNDS_VS_N_TABLE",
        pieces=("eps0",),  # compute_bounds_vs_n: one eps0
        figures=("bounds_vs_n", "bounds_vs_n_all"),
        gallery=Gallery("bounds_vs_n", "Identical budgets: eps vs n", 1),
        methods=True,
    ),
    Experiment(
        "gdp_validity",
        table="gdp_validity/gdp_validity.csv",
        columns="shuffledp.experiments.grids:GDP_VALIDITY_TABLE",
        pieces=("n",),  # compute_gdp_validity: one n
        figures=("gdp_validity",),
        gallery=Gallery("gdp_validity", "Validity of the paper's formula", 2),
    ),
    Experiment(
        "personalized",
        table="personalized/personalized.csv",
        columns="shuffledp.experiments.grids:PERSONALIZED_TABLE",
        pieces=("profile",),  # compute_personalized: one profile
        figures=("personalized", "personalized_all"),
        gallery=Gallery("personalized", "Personalized budgets", 3),
        profiles="profiles",
        methods=True,
        extra_outputs=("tables/personalized.tex", "tables/personalized.md"),
    ),
    Experiment(
        "personalized_validity",
        table="personalized_validity/personalized_validity.csv",
        columns="shuffledp.experiments.validity:VALIDITY_TABLE",
        pieces=("randomizer",),  # compute_personalized_validity: one randomizer
        figures=("personalized_validity", "personalized_validity_all"),
        gallery=Gallery(
            "personalized_validity",
            "Personalized validity: every bound vs a certified lower bound",
            4,
        ),
        profiles="profiles",
        methods=True,
    ),
    Experiment(
        "runtime",
        table="runtime/runtime.csv",
        columns="time_bounds:RUNTIME_TABLE",
        pieces=(),  # one job (time_bounds) writes the table
        figures=("runtime",),
        gallery=Gallery("runtime", "Runtime", 8),
        profiles="profile",
        methods=True,
    ),
    Experiment(
        "mean_estimation",
        table="mean_estimation/mean_estimation.csv",
        columns="shuffledp.experiments.estimation:ESTIMATION_TABLE",
        pieces=("method",),  # simulate_mean: one method
        figures=("mean_estimation", "mean_estimation_all"),
        gallery=Gallery("mean_estimation", "Mean estimation", 5),
        profiles="profiles",
    ),
    Experiment(
        "frequency_estimation",
        table="frequency_estimation/frequency_estimation.csv",
        columns="shuffledp.experiments.estimation:ESTIMATION_TABLE",
        pieces=("method",),  # simulate_frequency: one method
        figures=("frequency_estimation", "frequency_estimation_all"),
        gallery=Gallery("frequency_estimation", "Frequency estimation", 6),
        profiles="profiles",
    ),
    Experiment(
        "sgd",
        table="sgd/sgd.csv",
        columns="shuffledp.experiments.sgd:SGD_TABLE",
        # train_sgd: one method, randomizer, budget profile and model (every target eps)
        pieces=("method", "randomizer", "profile", "model"),
        figures=("sgd", "sgd_budgets"),
        gallery=Gallery("sgd", "SGD", 7),
        profiles="profiles",
        builtin_profiles=("identical",),  # identical users, not a config profile
    ),
)


def names() -> list[str]:
    """Every experiment name, in manifest order."""
    return [e.name for e in EXPERIMENTS]


def get(name: str) -> Experiment:
    """The experiment ``name``; ``KeyError`` naming the known ones."""
    for e in EXPERIMENTS:
        if e.name == name:
            return e
    raise KeyError(f"unknown experiment {name!r}; known: {', '.join(names())}")


def figures(experiment: Experiment) -> list[str]:
    """Its figure files (PNG then PDF of each figure), relative to ``results/<run>/``."""
    return [f"figures/{f}.{ext}" for f in experiment.figures for ext in ("png", "pdf")]


def outputs(experiment: Experiment) -> list[str]:
    """Its outputs relative to ``results/<run>/``: the table, the figures, the rest (the
    workflow adds ``tables/<name>.html`` and ``config_used/<name>.yaml``)."""
    return [experiment.table, *figures(experiment), *experiment.extra_outputs]


def table_files() -> dict[str, str]:
    """Experiment (= table kind) -> its tidy table, relative to ``results/<run>/``."""
    return {e.name: e.table for e in EXPERIMENTS}


def gallery() -> list[Experiment]:
    """The experiments in the order of the landing page and of the gallery."""
    return sorted(EXPERIMENTS, key=lambda e: e.gallery.position)


def profiles_read(experiment: Experiment, config: Mapping) -> list[str]:
    """The config profiles (keys of ``config["profiles"]``) the experiment names."""
    if experiment.profiles is None:
        return []
    value = config[experiment.name][experiment.profiles]
    listed = [value] if experiment.profiles == "profile" else list(value)
    return [p for p in listed if p not in experiment.builtin_profiles]


def profile_references(config: Mapping) -> list[tuple[str, str]]:
    """``[(where, name)]`` of every profile name an experiment section gives, e.g.
    ``("runtime.profile", "uniform_0.5_2")``, in manifest order (the config checks)."""
    return [(f"{e.name}.{e.profiles}", p) for e in EXPERIMENTS if e.profiles
            for p in profiles_read(e, config)]


def experiment_config(experiment: Experiment, config: Mapping, *, run: str) -> dict:
    """The part of the effective configuration that the experiment reads: ``run``, ``seed``,
    its own section, the bound selection ``methods`` where it uses it, and the budget
    profiles it names; keys sorted at every level (:func:`sorted_keys`)."""
    sec = config[experiment.name]
    cfg = {"run": run, "seed": config["seed"]}
    if experiment.methods or sec.get("methods") == "all":
        cfg["methods"] = config["methods"]
    profiles = {name: config["profiles"][name] for name in profiles_read(experiment, config)}
    if profiles:
        cfg["profiles"] = profiles
    cfg[experiment.name] = sec
    return sorted_keys(cfg)


def sorted_keys(node):
    """Mappings with sorted keys at every level: the params compare equal (no rerun) when
    an override only reorders keys."""
    if isinstance(node, dict):
        return {k: sorted_keys(node[k]) for k in sorted(node, key=str)}
    if isinstance(node, list):
        return [sorted_keys(v) for v in node]
    return node
