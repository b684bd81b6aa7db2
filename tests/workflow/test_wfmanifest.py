"""The experiment manifest (workflow/scripts/wfmanifest.py): every entry has what
docs/adding_an_experiment.md lists (a rules file with its target rule, included by the
Snakefile; a config section; report captions; a column declaration), and the lists derived
from it are the ones the rules use."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import wfmanifest
import yaml
from wfmanifest import EXPERIMENTS, Experiment, Gallery

from shuffledp.experiments._columns import Columns

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "workflow" / "rules"
REPORT = ROOT / "workflow" / "report"
SCHEMA = yaml.safe_load((ROOT / "config" / "schema.yaml").read_text())
NAMES = [e.name for e in EXPERIMENTS]


def _rule_blocks(text: str) -> dict[str, str]:
    return {m.group(1): block for block in re.split(r"\n(?=rule )", text)
            if (m := re.match(r"rule (\w+):", block))}


def test_the_experiments_of_the_workflow():
    # the paper's eight, in this order (a new experiment goes after them)
    assert NAMES[:8] == ["bounds_vs_n", "gdp_validity", "personalized",
                         "personalized_validity", "runtime", "mean_estimation",
                         "frequency_estimation", "sgd"]
    assert len(set(NAMES)) == len(NAMES)
    assert wfmanifest.names() == NAMES and wfmanifest.get("sgd").name == "sgd"
    with pytest.raises(KeyError, match="unknown experiment 'nope'; known: bounds_vs_n"):
        wfmanifest.get("nope")


def test_the_snakefile_holds_only_the_template_parts_and_includes_every_experiment():
    text = (ROOT / "Snakefile").read_text()
    directives = re.findall(r"^(\w+)", text, flags=re.M)
    assert set(directives) <= {"from", "min_version", "configfile", "report", "include",
                               "rule"}
    includes = re.findall(r'^include: "workflow/rules/(\w+)\.smk"$', text, flags=re.M)
    assert includes == ["common", *NAMES, "shared"]
    assert re.findall(r"^rule (\w+):", text, flags=re.M) == ["all"]
    assert sorted(p.stem for p in RULES.glob("*.smk")) == sorted(includes)


@pytest.mark.parametrize("exp", EXPERIMENTS, ids=NAMES)
def test_each_experiment_has_its_rules_file_with_its_target(exp):
    text = (RULES / f"{exp.name}.smk").read_text()
    blocks = _rule_blocks(text)
    target = blocks[exp.name]
    assert f'experiment_outputs("{exp.name}")' in target and "localrule: True" in target
    # the rules file writes the table and every figure of the manifest entry
    assert f'results_path("{exp.table}")' in text
    for fig in exp.figures:
        assert f'results_path("figures/{fig}.png")' in text, fig
        assert f'results_path("figures/{fig}.pdf")' in text, fig
    for out in exp.extra_outputs:
        assert f'results_path("{out}")' in text, out
    plot = [b for name, b in blocks.items() if name.startswith("plot_")]
    assert len(plot) == 1 and f'config_path("{exp.name}")' in plot[0]
    # no other rules file writes this experiment's table
    for other in RULES.glob("*.smk"):
        if other.stem != exp.name:
            assert f'results_path("{exp.table}")' not in other.read_text(), other.name


@pytest.mark.parametrize("exp", EXPERIMENTS, ids=NAMES)
def test_each_experiment_has_a_config_section_and_report_captions(exp):
    section = SCHEMA["properties"][exp.name]
    assert section["description"] and section.get("additionalProperties") is False
    if exp.profiles:
        assert exp.profiles in section["properties"]
    assert (REPORT / f"table_{exp.name}.rst").is_file()
    for fig in exp.figures:
        assert (REPORT / f"{fig}.rst").is_file(), fig
    assert exp.gallery.figure in exp.figures


@pytest.mark.parametrize("exp", EXPERIMENTS, ids=NAMES)
def test_each_experiment_names_its_column_declaration(exp):
    import table_schemas

    decl = table_schemas.declared_columns(exp.columns)
    assert isinstance(decl, Columns)
    assert set(exp.pieces) <= set(decl.names)
    assert {"status", "reason"} <= set(decl.names)


def test_gallery_positions_are_one_to_n():
    assert sorted(e.gallery.position for e in EXPERIMENTS) == list(range(1, len(EXPERIMENTS) + 1))
    assert [e.name for e in wfmanifest.gallery()][:8] == [
        "bounds_vs_n", "gdp_validity", "personalized", "personalized_validity",
        "mean_estimation", "frequency_estimation", "sgd", "runtime"]


def test_derived_outputs():
    exp = wfmanifest.get("personalized")
    assert wfmanifest.outputs(exp) == [
        "personalized/personalized.csv", "figures/personalized.png", "figures/personalized.pdf",
        "figures/personalized_all.png", "figures/personalized_all.pdf",
        "tables/personalized.tex", "tables/personalized.md"]
    assert wfmanifest.table_files()["bounds_vs_n"] == "bounds/bounds_vs_n.csv"


def _config() -> dict:
    import wfconfig

    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    assert wfconfig.validate_config(cfg, SCHEMA) == []
    return cfg


def test_profiles_read_and_references():
    cfg = _config()
    assert wfmanifest.profiles_read(wfmanifest.get("runtime"), cfg) == ["uniform_0.5_2"]
    assert wfmanifest.profiles_read(wfmanifest.get("sgd"), cfg) == ["uniform_0.5_2",
                                                                    "two_groups",
                                                                    "three_groups"]
    assert wfmanifest.profiles_read(wfmanifest.get("bounds_vs_n"), cfg) == []
    refs = wfmanifest.profile_references(cfg)
    assert refs[0] == ("personalized.profiles", "uniform_0.05_1")
    assert ("runtime.profile", "uniform_0.5_2") in refs
    assert all(name != "identical" for _, name in refs)


def test_experiment_config_is_what_the_experiment_reads():
    cfg = _config()
    got = wfmanifest.experiment_config(wfmanifest.get("runtime"), cfg, run="quick")
    assert list(got) == ["methods", "profiles", "run", "runtime", "seed"]  # sorted keys
    assert got["profiles"] == {"uniform_0.5_2": cfg["profiles"]["uniform_0.5_2"]}
    got = wfmanifest.experiment_config(wfmanifest.get("gdp_validity"), cfg, run="quick")
    assert got == {"gdp_validity": cfg["gdp_validity"], "run": "quick", "seed": cfg["seed"]}
    # an estimation section reads the top-level methods only when its own are "all"
    mean = wfmanifest.get("mean_estimation")
    assert "methods" not in wfmanifest.experiment_config(mean, cfg, run="quick")
    cfg["mean_estimation"]["methods"] = "all"
    assert wfmanifest.experiment_config(mean, cfg, run="quick")["methods"] == "all"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"name": "Bad-Name"}, "snake_case rule name"),
        ({"columns": "no_colon"}, "columns must be 'module:NAME'"),
        ({"gallery": Gallery("other", "T", 1)}, "gallery figure 'other' is not one of"),
        ({"profiles": "profile_list"}, "profiles must be None, 'profiles' or 'profile'"),
    ],
)
def test_bad_manifest_entries_are_rejected(kwargs, match):
    args = dict(name="toy", table="toy/toy.csv", columns="m:T", pieces=(), figures=("toy",),
                gallery=Gallery("toy", "Toy", 9))
    with pytest.raises(ValueError, match=match):
        Experiment(**{**args, **kwargs})
