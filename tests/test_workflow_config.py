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

import shuffledp

ROOT = Path(__file__).resolve().parents[1]
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
