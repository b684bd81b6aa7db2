"""Unit tests of the config validation module (workflow/scripts/wfconfig.py), without
Snakemake: each stage (schema, defaults, cross-checks), the exact one-line messages, the cap on
their number, and the report's check that a configuration produced the results.

The same messages through ``snakemake -n --config ...`` are pinned by test_workflow_config.py."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import jsonschema
import pytest
import wfconfig  # workflow/scripts (on sys.path via conftest)
import wfmanifest
import yaml
from _extras import need
from wfconfig import (
    MAX_CONFIG_PROBLEMS,
    ConfigError,
    coerce_numbers,
    config_problems,
    cross_check_problems,
    defaults_problems,
    fill_defaults,
    first_difference,
    format_config_problems,
    key_path,
    prepare_config,
    report_problems,
    schema_error_lines,
    unknown_key_message,
    validate_config,
)

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_PATH = ROOT / "config" / "schema.yaml"
SCHEMA = wfconfig.load_schema(SCHEMA_PATH)


def _merge(base: dict, over: dict) -> dict:
    """A --config override merged into the config files, as Snakemake does (recursively)."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _config(**over) -> dict:
    base = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    return _merge(base, over)


def _problems(**over) -> list[str]:
    return validate_config(_config(**over), SCHEMA)


# --- (a) the shipped configurations are valid, and the defaults are Snakemake's ------------


@pytest.mark.parametrize("extra", [None, "config/paper.yaml", "config/paper_full.yaml",
                                   ".test/config/config.yaml"])
def test_shipped_configurations_pass_every_stage(extra):
    cfg = _config(**(yaml.safe_load((ROOT / extra).read_text()) if extra else {}))
    assert config_problems(cfg, SCHEMA) == []
    assert "main_mechanism" not in cfg["mean_estimation"]
    assert validate_config(cfg, SCHEMA) == []
    assert cfg["mean_estimation"]["main_mechanism"] == ""  # a default filled in


def test_fill_defaults_is_snakemakes_validate():
    need("snakemake")
    from snakemake.utils import validate

    ours, theirs = _config(), _config()
    del ours["sgd"], theirs["sgd"], ours["bounds_vs_n"]["delta"], theirs["bounds_vs_n"]["delta"]
    fill_defaults(ours, SCHEMA)
    validate(theirs, str(SCHEMA_PATH), set_default=True)
    assert ours == theirs
    assert ours["sgd"]["rounds"] == SCHEMA["properties"]["sgd"]["properties"]["rounds"]["default"]


def test_prepare_config_coerces_command_line_strings():
    cfg = {"seed": "3", "run": 2024, "x": {"a": ["1.5", "true", "abc", "False"]}}
    prepare_config(cfg)
    assert cfg == {"seed": 3, "run": "2024", "x": {"a": [1.5, True, "abc", False]}}
    assert coerce_numbers("1e-6") == 1e-6 and coerce_numbers("inf") == float("inf")


def test_key_path():
    assert key_path([]) == ""
    assert key_path(["bounds_vs_n", "n", 0]) == "bounds_vs_n.n[0]"
    assert key_path(["profiles", "uniform_0.5_2", "low"]) == "profiles['uniform_0.5_2'].low"


# --- (c) bad values and unknown keys: the exact messages ------------------------------------


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ({"bounds_vs_n": {"delta": 2}},
         ["config bounds_vs_n.delta = 2: must be <= 0.99 (schema: maximum 0.99)"]),
        ({"bounds_vs_n": {"n": [1]}},
         ["config bounds_vs_n.n[0] = 1: must be >= 2 (schema: minimum 2)"]),
        ({"seed": -1}, ["config seed = -1: must be >= 0 (schema: minimum 0)"]),
        ({"metods": ["gdp"]}, ["config: unknown key 'metods'; did you mean 'methods'?"]),
        ({"bounds_vs_n": {"epss0": [1.0]}},
         ["config bounds_vs_n: unknown key 'epss0'; did you mean 'eps0'?"]),
        ({"profiles": {"x": {"kind": "uniform", "lo": 0.5, "high": 2.0}}},
         ["config profiles.x: unknown key 'lo'; did you mean 'low'?"]),
        ({"methods": "gdp"}, ["config methods = 'gdp': must be 'all' or a list of strings"]),
        ({"sgd": {"rounds": "abc"}}, ["config sgd.rounds = 'abc': must be of type integer"]),
        ({"sgd": {"methods": ["gdp", "zz"]}},
         ["config sgd.methods[1] = 'zz': must be one of 'gdp', 'clones', 'clones_tiers'"]),
        ({"run": "../quick"},
         ["config run = '../quick': must be a folder name: 1 to 64 letters, digits, '_' or "
          "'-', first a letter or digit (no '/', '.', spaces) (schema: pattern)"]),
        ({"personalized_validity": {"randomizers": ["nosuch"]}},
         ["config personalized_validity.randomizers[0] = 'nosuch': must be one of laplace, "
          "piecewise, gaussian, duchi, binary_rr, laplace_shared, gaussian_shared, krr:k "
          "(schema: pattern)"]),
        ({"sgd": {"clip": 0}},
         ["config sgd.clip = 0: must be > 0 (schema: exclusiveMinimum 0)"]),
        # issue 30: numbers no key accepts, integral floats, repeated grid entries
        ({"bounds_vs_n": {"delta": float("nan")}},
         ["config bounds_vs_n.delta = nan: must be a finite number"]),
        ({"gdp_validity": {"eps0": [1.0, float("inf")]}},
         ["config gdp_validity.eps0[1] = inf: must be a finite number"]),
        ({"seed": 1000.0}, ["config seed = 1000.0: must be of type integer"]),
        ({"bounds_vs_n": {"n": [1000.0]}},
         ["config bounds_vs_n.n[0] = 1000.0: must be of type integer"]),
        ({"bounds_vs_n": {"n": [1000, 10000, 1000]}},
         ["config bounds_vs_n.n = [1000, 10000, 1000]: must not repeat an entry (repeated: "
          "1000)"]),
        ({"bounds_vs_n": {"eps0": [1.0, 1]}},
         ["config bounds_vs_n.eps0 = [1.0, 1]: must not repeat an entry (repeated: 1)"]),
        ({"methods": ["gdp", "clones", "gdp"]},
         ["config methods = ['gdp', 'clones', 'gdp']: must not repeat an entry (repeated: "
          "'gdp')"]),
    ],
)
def test_schema_messages(override, expected):
    assert _problems(**override) == expected


def test_schema_message_of_a_long_value_is_shortened():
    (line,) = _problems(seed=list(range(500)))
    assert line.startswith("config seed = [0, 1, 2, 3") and "(2390 characters)" in line
    assert line.endswith(": must be of type integer") and len(line) < 200


def test_schema_messages_are_sorted_by_key_and_not_repeated():
    lines = _problems(sgd={"rounds": "abc", "lr": -1, "seeds": 0, "model": "cnn", "clip": 0,
                           "chunk": -1, "hidden": 0})
    assert lines[0] == "config sgd: unknown key 'model'; did you mean 'models'?"
    assert len(lines) == 7 == len(set(lines))
    text = format_config_problems(lines)
    assert text.splitlines()[MAX_CONFIG_PROBLEMS:] == [
        "... and 2 more", "(every key is documented in config/schema.yaml)"]


def test_unknown_key_message_without_a_close_match_lists_the_valid_keys():
    assert unknown_key_message(["x"], "zzz", {"b": 1, "a": 2}) == (
        "config x: unknown key 'zzz'; valid keys: a, b")


def test_schema_error_lines_of_other_keywords():
    schema = {"type": "object", "required": ["a"],
              "properties": {"b": {"type": "array", "minItems": 2, "maxItems": 2},
                             "c": {"const": 1}, "d": {"multipleOf": 3}}}
    errors = jsonschema.Draft202012Validator(schema).iter_errors({"b": [1], "c": 2, "d": 4})
    lines = sorted(ln for e in errors for ln in schema_error_lines(e))
    assert lines == ["config b = [1]: must have at least 2 item(s)",
                     "config c = 2: must be 1",
                     "config d = 4: must satisfy multipleOf 3",
                     "config: missing required key(s) a"]


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ({"methods": ["gdp", "clone"]},
         ["config methods: unknown bound 'clone'; did you mean 'clones'?"]),
        ({"mean_estimation": {"bound_options": {"clones": {"clon": "standard"}}}},
         ["config mean_estimation.bound_options.clones: unknown option 'clon'; did you mean "
          "'clone'?"]),
        ({"runtime": {"profile": "uniform_0.5"}},
         ["config runtime.profile: undefined profile 'uniform_0.5'; did you mean "
          "'uniform_0.5_2'?"]),
        ({"sgd": {"profiles": ["identical", "uniform_0.5"]}},
         ["config sgd.profiles: undefined profile 'uniform_0.5'; did you mean "
          "'uniform_0.5_2'?"]),
        ({"personalized": {"table_n": [7]}},
         ["config personalized.table_n [7] not in personalized.n"]),
        ({"mean_estimation": {"main_mechanism": "grr"}},
         ["config mean_estimation.main_mechanism 'grr' not in mean_estimation.mechanisms"]),
        ({"profiles": {"bad": {"kind": "uniform", "low": 3.0, "high": 2.0}}},
         ["config profiles.bad: low must be <= high, got low=3.0, high=2.0"]),
        ({"profiles": {"g0": {"kind": "mixture", "groups": [[0.5, 0.5, 0.0], [0.5, 2.0]]}},
          "sgd": {"profiles": ["g0"]}},
         ["config profiles.g0: a group with delta 0 cannot run the sgd gaussian randomizer (it "
          "needs every delta_i > 0; omit the group's delta to use sgd.delta0)"]),
    ],
)
def test_cross_check_messages(override, expected):
    assert _problems(**override) == expected


def test_cross_checks_follow_the_manifest_and_keep_their_order():
    """Every profile an experiment names (wfmanifest: Experiment.profiles) is checked, in
    manifest order; the builtin profile 'identical' only where the manifest allows it."""
    over = {e.name: {e.profiles: "nope" if e.profiles == "profile" else ["nope"]}
            for e in wfmanifest.EXPERIMENTS if e.profiles}
    lines = _problems(**over)
    where = [ln.split(":")[0] for ln in lines]
    assert where == [f"config {e.name}.{e.profiles}" for e in wfmanifest.EXPERIMENTS
                     if e.profiles]
    assert all("undefined profile 'nope'; known: few_high," in ln for ln in lines)
    assert _problems(sgd={"profiles": ["identical"]}) == []
    assert _problems(personalized={"profiles": ["identical"]}) == [
        "config personalized.profiles: undefined profile 'identical'; known: few_high, "
        "normal_0.75_0.5, normal_1.5_0.5, three_groups, two_groups, uniform_0.05_1, "
         "uniform_0.5_2"]


def test_cross_checks_of_randomizers_and_main_profiles():
    cfg = _config(personalized_validity={"main_randomizers": ["zzz"]},
                  personalized={"main_profiles": ["nope"]})
    fill_defaults(cfg, SCHEMA)
    lines = cross_check_problems(cfg)
    assert lines[0].startswith("config personalized_validity.main_randomizers[0] = 'zzz': "
                               "randomizer must be one of [")
    assert lines[1].startswith("config personalized.main_profiles: undefined profile 'nope';")


def test_stages_stop_at_the_first_with_a_problem():
    # a schema problem hides the cross-check problems (the bound name is not checked)
    assert _problems(seed=-1, methods=["gdp", "not_a_bound"]) == [
        "config seed = -1: must be >= 0 (schema: minimum 0)"]
    cfg = _config(methods=["gdp", "not_a_bound"])
    assert validate_config(cfg, SCHEMA)[0].startswith(
        "config methods: unknown bound 'not_a_bound'; known: blanket, blanket_bennett,")
    assert "main_mechanism" in cfg["mean_estimation"]  # defaults were filled first


def test_a_failing_default_fill_is_one_short_line():
    def fill(cfg):
        raise RuntimeError("Error validating config file.\nFailed validating 'minimum'\nmore")

    assert validate_config(_config(), SCHEMA, fill=fill, fill_errors=(RuntimeError,)) == [
        "Error validating config file.", "Failed validating 'minimum'"]
    err = jsonschema.ValidationError("bad", validator="minimum", validator_value=2,
                                     instance=1, path=["bounds_vs_n", "n", 0])
    wrapped = RuntimeError("Error validating config file.")
    wrapped.__cause__ = err
    assert defaults_problems(wrapped) == defaults_problems(err) == [
        "config bounds_vs_n.n[0] = 1: must be >= 2 (schema: minimum 2)"]
    with pytest.raises(KeyError):  # errors not named by fill_errors propagate
        validate_config(_config(), SCHEMA, fill=lambda cfg: {}["x"],
                        fill_errors=(RuntimeError,))


def test_format_config_problems():
    assert format_config_problems(["a"]) == "a\n(every key is documented in config/schema.yaml)"
    assert issubclass(ConfigError, ValueError)


# --- the report's check: the configuration given produced the results ----------------------


def test_first_difference():
    assert first_difference({"a": 1, "b": {"c": 2}}, {"a": 1, "b": {"c": 2}}) is None
    assert first_difference({"a": {"d": 1e-6}}, {"a": {"d": 1e-5}}) == "a.d: 1e-06 there, 1e-05 now"
    assert first_difference({"a": 1}, {"a": 1, "b": 2}) == "b missing there"
    assert first_difference({"a": 1, "b": 2}, {"a": 1}) == "b missing now"


def test_report_problems(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = _config()
    assert validate_config(cfg, SCHEMA) == []
    results = "results/quick"
    assert report_problems(cfg, run="quick", results=results) == []  # nothing written yet
    exp = wfmanifest.get("gdp_validity")
    path = Path(results, "config_used", "gdp_validity.yaml")
    path.parent.mkdir(parents=True)
    path.write_text(yaml.safe_dump(wfmanifest.experiment_config(exp, cfg, run="quick")))
    assert report_problems(cfg, run="quick", results=results) == []
    other = copy.deepcopy(cfg)
    other["gdp_validity"]["delta"] = 1e-5
    assert report_problems(other, run="quick", results=results) == [
        f"{path} was written by another configuration (gdp_validity.delta: 1e-06 there, "
        "1e-05 now): rerun `snakemake --cores all gdp_validity` with this configuration "
        "first, or give --report the --configfile/--config that produced it"]
    figure = Path(results, "figures", "gdp_validity.png")
    figure.parent.mkdir()
    figure.write_bytes(b"")
    old = path.stat().st_mtime - 60
    os.utime(figure, (old, old))
    assert report_problems(cfg, run="quick", results=results) == [
        f"{figure} is older than its configuration {path}: rerun "
        "`snakemake --cores all gdp_validity` first"]



def test_wildcard_text_is_lossless():
    """Grid values become file names (fmt_num): two values share a name only if equal, and
    the name reads back to the value (0.1234567 was computed as 0.123457 with ':g')."""
    from wfconfig import fmt_num

    values = [1.0, 1.0000001, 0.1234567, 0.25, 1e-06, 4, 2.5e-300, 123456789.0, 1e300]
    names = [fmt_num(v) for v in values]
    assert len(set(names)) == len(values)
    assert all(float(t) == float(v) for t, v in zip(names, values, strict=True))
    assert fmt_num(1.0) == "1" and fmt_num(0.25) == "0.25"


# --- the second hostile pass (issue 30) -----------------------------------------------------

@pytest.mark.parametrize(("override", "fragment"), [
    ({"seed": 2**63}, "config seed = 9223372036854775808: must be <="),
    ({"profiles": {"a/b": {"kind": "uniform", "low": 0.5, "high": 2.0}}},
     "config profiles = 'a/b': must be a profile name"),
    ({"profiles": {"../../x": {"kind": "uniform", "low": 0.5, "high": 2.0}}},
     "must be a profile name"),
    ({"profiles": {"": {"kind": "uniform", "low": 0.5, "high": 2.0}}},
     "must be a profile name"),
    ({"profiles": {"identical": {"kind": "uniform", "low": 0.5, "high": 2.0}}},
     "config profiles.identical: the name 'identical' is reserved"),
    ({"mean_estimation": {"bound_options": {"clones": {"clone": "weird"}}}},
     "config mean_estimation.bound_options.clones: clone must be one of"),
    ({"mean_estimation": {"bound_options": {"clones": {"victim_groups": 0}}}},
     "config mean_estimation.bound_options.clones: victim_groups must be in [1, 1024]"),
    ({"frequency_estimation": {"bound_options": {"gdp": {"clone_mass": 5}}}},
     "config frequency_estimation.bound_options.gdp:"),
    ({"mean_estimation": {"data": {"distribution": "csv", "csv_path": "/nonexistent.csv"}}},
     "config mean_estimation.data.csv_path = '/nonexistent.csv': no such file"),
    ({"mean_estimation": {"data": {"distribution": "csv"}}},
     "config mean_estimation.data.csv_path: empty"),
    ({"frequency_estimation": {"data": {"distribution": "csv", "csv_path": "/etc/hostname"}}},
     "config frequency_estimation.data.column = 'category': not a column of /etc/hostname"),
    ({"sgd": {"dataset": "mnist"}}, "config sgd.mnist_path = '': no such file"),
    ({"sgd": {"rounds": 100000}}, "config sgd.rounds = 100000: must be <= 10000"),
    ({"personalized_validity": {"randomizers": ["krr:999999999999999999999"]}},
     "k (categories) must be in [2, 1e+12]"),
])
def test_values_that_fail_in_a_job_are_refused_before_it(override, fragment):
    problems = _problems(**override)
    assert any(fragment in p for p in problems), problems


def test_numbers_with_underscores_on_the_command_line_are_refused():
    from wfconfig import underscore_problems

    argv = ["-n", "--config", "seed=1_000", "run=2024_12", "bounds_vs_n={n: [1_000]}",
            "profiles={uniform_0.5_2: {low: 0.5}}", "--cores", "1", "x=1_0"]
    assert underscore_problems(argv) == [
        "config seed = '1_000': '1_000' is not a number (write it without underscores)",
        "config bounds_vs_n = '{n: [1_000]}': '1_000' is not a number (write it without "
        "underscores)"]
    # nested values stay text, so the schema refuses them too
    assert wfconfig.coerce_numbers({"n": ["1_000", "1000"]}) == {"n": ["1_000", 1000]}
