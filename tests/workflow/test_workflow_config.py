"""Workflow configuration: schema validation before any job, registry cross-checks,
thin scripts, and the README's own commands."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from _extras import need

import shuffledp

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = yaml.safe_load((ROOT / "config" / "schema.yaml").read_text())


def _merged(*paths: str) -> dict:
    cfg: dict = {}
    for p in paths:
        cfg.update(yaml.safe_load((ROOT / p).read_text()))
    return cfg


@pytest.mark.parametrize(
    "files",
    [
        ("config/config.yaml",),
        ("config/config.yaml", "config/paper.yaml"),
        ("config/config.yaml", ".test/config/config.yaml"),
    ],
)
def test_shipped_configs_are_valid(files):
    jsonschema.validate(_merged(*files), SCHEMA)


def test_registered_names_fit_the_schema_pattern():
    pattern = SCHEMA["properties"]["methods"]["oneOf"][1]["items"]["pattern"]
    for name in shuffledp.list_bounds():
        assert re.fullmatch(pattern, name), name


def test_every_schema_key_is_documented():
    def walk(node, path):
        for key, sub in node.get("properties", {}).items():
            assert "description" in sub or "$ref" in sub, f"{path}.{key} has no description"
            assert "default" in sub, f"{path}.{key} has no default"
            if isinstance(sub, dict):
                walk(sub, f"{path}.{key}")

    walk(SCHEMA, "config")


def _dry_run(*config: str) -> subprocess.CompletedProcess:
    need("snakemake")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-n",
            "--cores",
            "1",
            "bounds_vs_n",
            "--config",
            *config,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    ("config", "match"),
    [
        (["bounds_vs_n={delta: 2}"], "delta"),
        (["bounds_vs_n={n: [1]}"], "minimum"),
        (["methods=[gdp,not_a_bound]"], "unknown bound"),
        (["personalized={profiles: [no_such_profile]}"], "undefined profile"),
        (["seed=-3"], "seed"),
    ],
)
def test_bad_config_fails_before_any_job(config, match, tmp_path):
    r = _dry_run(*config)
    assert r.returncode != 0
    text = r.stdout + r.stderr
    assert match in text, text[-2000:]
    assert "Job stats" not in text  # nothing was planned, let alone run


def test_config_override_is_coerced_and_accepted():
    r = _dry_run("bounds_vs_n={n: [1000, 2000], eps0: [1.0]}")
    assert r.returncode == 0, r.stderr[-2000:]


def test_bounds_vs_n_script_writes_a_tidy_table(tmp_path):
    import pandas as pd
    from compute_bounds_vs_n import main

    out = tmp_path / "t.csv"
    main(
        inputs={},
        outputs={"table": str(out)},
        params={"n": [100, 1000], "eps0": 1.0, "delta": 1e-6, "methods": ["gdp"]},
    )
    df = pd.read_csv(out)
    assert list(df["n"]) == [100, 1000]
    assert set(df["kind"]) == {"approximate"} and (df["status"] == "ok").all()
    assert df["eps"].is_monotonic_decreasing
    assert not list(tmp_path.glob(".*.tmp"))  # atomic write leaves no temporary file


def test_readme_cli_examples_run():
    """Every `shuffledp ...` line in the README's code blocks runs and exits 0."""
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```(?:bash|sh|console)?\n(.*?)```", readme, flags=re.S)
    commands = [
        ln.strip()
        for b in blocks
        for ln in b.splitlines()
        if ln.strip().startswith("shuffledp ") and "FILE" not in ln
    ]
    assert commands, "README shows no shuffledp command"
    for cmd in commands:
        args = shlex.split(cmd.split("#")[0])[1:]
        args = [str(ROOT / a) if a.startswith("docs/") else a for a in args]
        r = subprocess.run(
            [sys.executable, "-m", "shuffledp.cli", *args],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=ROOT,
        )
        assert r.returncode == 0, (cmd, r.stderr)


def test_readme_names_the_test_command():
    readme = (ROOT / "README.md").read_text()
    assert "pytest" in readme
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python -m pytest" in ci


def test_readme_python_examples_run(capsys):
    """The README's Python blocks run as written (the quick start is itself tested)."""
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    assert len(blocks) >= 2
    for block in blocks:
        namespace: dict = {}
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102
    assert "clones upper" in capsys.readouterr().out


# --- short config messages (a misspelled key printed 1,475 lines) -----------------------------

MAX_CONFIG_ERROR_LINES = 15


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (["metods=[gdp]"], ["config: unknown key 'metods'", "did you mean 'methods'?"]),
        (["seed=-1"], ["config seed = -1: must be >= 0", "minimum"]),
        (
            ["bounds_vs_n={n: [1000], epss0: [1.0]}"],
            ["config bounds_vs_n: unknown key 'epss0'", "did you mean 'eps0'?"],
        ),
        (
            ["profiles={x: {kind: uniform, lo: 0.5, high: 2.0}}"],
            ["config profiles.x: unknown key 'lo'", "did you mean 'low'?"],
        ),
        (
            ["mean_estimation={data: {distribtion: beta}}"],
            ["config mean_estimation.data: unknown key 'distribtion'", "'distribution'"],
        ),
        (["methods=[gdp,clone]"], ["unknown bound 'clone'", "did you mean 'clones'?"]),
        (
            ["mean_estimation={bound_options: {clones: {clon: standard}}}"],
            ["bound_options.clones: unknown option 'clon'", "did you mean 'clone'?"],
        ),
        (["runtime={profile: uniform_0.5}"], ["undefined profile", "'uniform_0.5_2'"]),
        (["methods=gdp"], ["config methods = 'gdp': must be 'all' or a list of strings"]),
        (["sgd={rounds: abc}"], ["config sgd.rounds = 'abc': must be of type integer"]),
        (["sgd={profiles: [identical, uniform_0.5]}"], ["sgd.profiles", "undefined profile"]),
        (
            ["profiles={g0: {kind: mixture, groups: [[0.5, 0.5, 0.0], [0.5, 2.0]]}}",
             "sgd={profiles: [g0]}"],
            ["config profiles.g0: a group with delta 0 cannot run the sgd gaussian"],
        ),
    ],
)
def test_config_errors_are_short(config, expected):
    r = _dry_run(*config)
    text = r.stdout + r.stderr
    assert r.returncode != 0
    for fragment in expected:
        assert fragment in text, text[-3000:]
    assert len(text.splitlines()) < MAX_CONFIG_ERROR_LINES, text[-3000:]
    assert "Failed validating" not in text and "description" not in text  # no schema dump
    assert "Job stats" not in text


def test_long_bad_config_value_is_shortened():
    r = _dry_run("seed=[" + ",".join(str(i) for i in range(500)) + "]")
    text = r.stdout + r.stderr
    assert r.returncode != 0 and "config seed = [0, 1, 2" in text, text[-3000:]
    assert "characters)" in text and max(len(ln) for ln in text.splitlines()) < 200
    assert len(text.splitlines()) < MAX_CONFIG_ERROR_LINES


def test_many_config_errors_are_capped():
    r = _dry_run("sgd={rounds: abc, lr: -1, seeds: 0, model: cnn, clip: 0, chunk: -1, hidden: 0}")
    text = r.stdout + r.stderr
    assert r.returncode != 0 and "... and 2 more" in text, text[-3000:]
    assert len(text.splitlines()) < MAX_CONFIG_ERROR_LINES


def test_schema_forbids_unknown_keys():
    """Every object with declared properties rejects other keys (additionalProperties)."""

    def walk(node, path):
        if isinstance(node, dict):
            if "properties" in node:
                assert node.get("additionalProperties") is False, path
            for key, sub in node.items():
                walk(sub, f"{path}.{key}")
        elif isinstance(node, list):
            for i, sub in enumerate(node):
                walk(sub, f"{path}[{i}]")

    walk(SCHEMA, "schema")
    with pytest.raises(jsonschema.ValidationError, match="metods"):
        jsonschema.validate(dict(_merged("config/config.yaml"), metods=["gdp"]), SCHEMA)


# --- the schema's limits are the library's accepted range (shuffledp.limits) ------------------


def test_schema_limits_are_the_library_constants():
    # the workflow draws per-user profiles: n up to N_MAX_ARRAYS (histograms go further)
    from shuffledp.limits import DELTA_MAX, DELTA_MIN, EPS_LOCAL_MAX
    from shuffledp.limits import N_MAX_ARRAYS as N_MAX

    defs = SCHEMA["definitions"]
    assert defs["delta"]["minimum"] == DELTA_MIN and defs["delta"]["maximum"] == DELTA_MAX
    assert "exclusiveMinimum" not in defs["delta"] and "exclusiveMaximum" not in defs["delta"]
    assert defs["n_grid"]["items"]["maximum"] == N_MAX
    assert defs["eps_grid"]["items"]["maximum"] == EPS_LOCAL_MAX
    profile = defs["profile"]["properties"]
    for key in ("eps0", "low", "high"):
        assert profile[key]["maximum"] == EPS_LOCAL_MAX, key
    assert profile["groups"]["items"]["prefixItems"][1]["maximum"] == EPS_LOCAL_MAX
    props = SCHEMA["properties"]
    for section in ("mean_estimation", "frequency_estimation"):
        assert props[section]["properties"]["max_local_eps"]["maximum"] <= EPS_LOCAL_MAX
        assert props[section]["properties"]["fixed_n"]["maximum"] == N_MAX
    # every central target delta uses the one definition
    for section, sub in props.items():
        if "delta" in sub.get("properties", {}):
            assert sub["properties"]["delta"]["$ref"] == "#/definitions/delta", section


def _with(cfg, path, value):
    import copy

    cfg = copy.deepcopy(cfg)
    node = cfg
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    return cfg


def _valid(cfg):
    return not list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(cfg))


def test_schema_accepts_exactly_the_accepted_range():
    from shuffledp.limits import DELTA_MAX, DELTA_MIN, EPS_LOCAL_MAX
    from shuffledp.limits import N_MAX_ARRAYS as N_MAX

    base = _merged("config/config.yaml")
    assert _valid(base)
    sections = ["bounds_vs_n", "gdp_validity", "personalized", "runtime", "mean_estimation",
                "frequency_estimation", "sgd"]
    for section in sections:  # central target delta in [DELTA_MIN, DELTA_MAX]
        for value, ok in ((DELTA_MIN, True), (DELTA_MAX, True), (DELTA_MIN / 2, False),
                          (0.995, False), (1.0, False)):
            assert _valid(_with(base, [section, "delta"], value)) is ok, (section, value)
    n_keys = [[s, "n"] for s in sections[:-1]]
    n_keys += [["mean_estimation", "fixed_n"], ["frequency_estimation", "fixed_n"]]
    for key in n_keys:  # n in [2, N_MAX]
        for n, ok in ((2, True), (N_MAX, True), (N_MAX + 1, False), (1, False)):
            value = n if key[-1] == "fixed_n" else [n]
            if key[0] == "personalized":
                base_n = _with(base, ["personalized", "table_n"], [n])
                assert _valid(_with(base_n, key, value)) is ok, (key, n)
            else:
                assert _valid(_with(base, key, value)) is ok, (key, n)
    over = EPS_LOCAL_MAX * 1.01
    local_eps = [  # (path, valid value at the limit, value above it)
        (["bounds_vs_n", "eps0"], [EPS_LOCAL_MAX], [over]),
        (["gdp_validity", "eps0"], [EPS_LOCAL_MAX], [over]),
        (["profiles", "p"], {"kind": "identical", "eps0": EPS_LOCAL_MAX},
         {"kind": "identical", "eps0": over}),
        (["profiles", "p"], {"kind": "uniform", "low": 1.0, "high": EPS_LOCAL_MAX},
         {"kind": "uniform", "low": 1.0, "high": over}),
        (["profiles", "p"], {"kind": "mixture", "groups": [[1.0, EPS_LOCAL_MAX]]},
         {"kind": "mixture", "groups": [[1.0, over]]}),
        (["mean_estimation", "max_local_eps"], EPS_LOCAL_MAX, over),
        (["frequency_estimation", "max_local_eps"], EPS_LOCAL_MAX, over),
    ]
    for path, good, bad in local_eps:
        assert _valid(_with(base, path, good)), path
        assert not _valid(_with(base, path, bad)), path


def test_the_next_write_removes_what_an_interrupted_write_left(tmp_path):
    """A job killed mid-write (SIGKILL: no cleanup) leaves '.<name>.<random>.tmp' beside the
    output; the next write of the same output removes it, and leaves other files alone."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd
    from wfutils import save_figure, write_table

    out = tmp_path / "fig.png"
    (tmp_path / ".fig.png.abc123.tmp").write_bytes(b"")  # the zero-byte leftover
    (tmp_path / ".other.png.zzz.tmp").write_bytes(b"")   # another output's: kept
    fig = plt.figure()
    save_figure(fig, [out])
    plt.close(fig)
    assert out.stat().st_size > 0
    assert sorted(p.name for p in tmp_path.glob(".*.tmp")) == [".other.png.zzz.tmp"]
    (tmp_path / ".t.csv.q1.tmp").write_bytes(b"x")
    write_table(pd.DataFrame({"a": [1]}), tmp_path / "t.csv")
    assert not (tmp_path / ".t.csv.q1.tmp").exists()
