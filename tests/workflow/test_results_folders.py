"""Results kept apart per configuration (config key ``run``): every output, log and benchmark
of a configuration lies under results/<run>/, so the quick default (results/quick/), the paper
profile (results/paper/) and CI's .test configuration (results/test/) never overwrite each
other; each experiment writes the configuration that produced it, rewritten when it changes.

Checked with ``snakemake -n --forceall`` (every job of a configuration, whatever exists on
disk) and, for the params trigger of the written configuration, with real runs of that one
tiny job in a temporary working directory."""

from __future__ import annotations

import functools
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import wfmanifest  # workflow/scripts (on sys.path via conftest)
import yaml
from _extras import need

ROOT = Path(__file__).resolve().parents[2]
CONFIG_FILES = {
    "quick": "config/config.yaml",
    "paper": "config/paper.yaml",
    "paper_full": "config/paper_full.yaml",
    "test": ".test/config/config.yaml",
}
EXPERIMENTS = wfmanifest.names()  # bounds_vs_n, gdp_validity, ..., sgd (test_wfmanifest.py)
PATH_FIELDS = ("output", "log", "benchmark")


def _snakemake(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    need("snakemake")
    cmd = [sys.executable, "-m", "snakemake", *args]
    if cwd != ROOT:
        cmd += ["--snakefile", str(ROOT / "Snakefile")]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)


def _configfile_args(run: str) -> list[str]:
    return [] if run == "quick" else ["--configfile", CONFIG_FILES[run]]


def _run_key(run: str) -> str:
    return yaml.safe_load((ROOT / CONFIG_FILES[run]).read_text())["run"]


def _parse_jobs(text: str) -> list[dict]:
    """The jobs of a dry run: rule name and the paths of input, output, log, benchmark."""
    jobs: list[dict] = []
    for line in text.splitlines():
        rule = re.fullmatch(r"(?:local)?rule (\w+):", line.strip())
        if rule:
            jobs.append({"rule": rule.group(1)})
            continue
        field = re.fullmatch(r"\s+(input|output|log|benchmark): (.*)", line)
        if field and jobs:
            jobs[-1][field.group(1)] = [p.strip() for p in field.group(2).split(", ")]
    return jobs


@functools.cache
def _plan(run: str, target: str = "") -> tuple[list[dict], str]:
    """Every job of the configuration (--forceall), parsed; cached per configuration."""
    r = _snakemake("-n", "--forceall", "--cores", "1", *([target] if target else []),
                   *_configfile_args(run))
    text = r.stdout + r.stderr
    assert r.returncode == 0, text[-3000:]
    jobs = _parse_jobs(r.stdout)
    assert jobs, f"no job parsed from the dry run of {run}:\n{text[-3000:]}"
    return jobs, text


def _planned_paths(run: str) -> list[str]:
    jobs, _ = _plan(run)
    return [p for job in jobs for field in PATH_FIELDS for p in job.get(field, [])]


def test_each_configuration_names_its_own_folder():
    assert {run: _run_key(run) for run in CONFIG_FILES} == {r: r for r in CONFIG_FILES}
    schema = yaml.safe_load((ROOT / "config" / "schema.yaml").read_text())
    assert schema["properties"]["run"]["default"] == _run_key("quick")


@pytest.mark.parametrize("run", sorted(CONFIG_FILES))
def test_every_planned_path_is_in_the_folder_of_its_configuration(run):
    jobs, text = _plan(run)
    paths = _planned_paths(run)
    outside = sorted({p for p in paths if not p.startswith(f"results/{run}/")})
    assert not outside, f"{run} plans outside results/{run}/: {outside[:10]}"
    # the dry run really planned the whole workflow: every experiment, with logs, benchmarks
    # and the configuration that produced it
    assert "Job stats" in text
    assert {job["rule"] for job in jobs} >= {"all", "dump_config", "plot_sgd"}
    for name in EXPERIMENTS:
        assert f"results/{run}/config_used/{name}.yaml" in paths, name
    assert all(job.get("log") for job in jobs if job["rule"] not in ("all", *EXPERIMENTS))
    assert any(p.startswith(f"results/{run}/logs/") for p in paths)
    assert any(p.startswith(f"results/{run}/benchmarks/") for p in paths)


@pytest.mark.parametrize("run", ["paper", "test"])
def test_paper_and_ci_plan_nothing_in_the_quick_folder(run):
    quick = {p for p in _planned_paths(run) if p.startswith("results/quick")}
    assert not quick, sorted(quick)[:10]
    assert not set(_planned_paths(run)) & set(_planned_paths("quick"))


# --- overrides never clobber (issue 32): an override without run= gets its own folder -------

DOCS_OVERRIDES = re.findall(r"^snakemake --cores all (\w+) --config (.*)$",
                            (ROOT / "docs" / "workflow.md").read_text(), flags=re.M)


def test_the_documented_overrides_are_found():
    assert len(DOCS_OVERRIDES) >= 2


@pytest.mark.parametrize("target, override", DOCS_OVERRIDES)
def test_each_documented_override_plans_nothing_in_the_quick_folder(target, override):
    args = shlex.split(override)
    r = _snakemake("-n", "--forceall", "--cores", "1", target, "--config", *args)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    paths = [p for job in _parse_jobs(r.stdout) for f in PATH_FIELDS for p in job.get(f, [])]
    assert paths
    assert not [p for p in paths if p.startswith("results/quick/")], paths[:5]
    named = [a.split("=", 1)[1] for a in args if a.startswith("run=")]
    folder = f"results/{named[0]}/" if named else None
    if folder is None:  # derived from the override, and said so in one line
        note = re.search(r"note: --config override without run=: its results go to "
                         r"(results/quick-[A-Za-z0-9_-]+/)", r.stderr)
        assert note, r.stderr[-2000:]
        folder = note.group(1)
    assert all(p.startswith(folder) for p in paths), [p for p in paths if
                                                      not p.startswith(folder)][:5]


def test_an_override_without_run_lands_in_the_same_folder_every_time():
    from wfconfig import override_run

    a = override_run("quick", {"bounds_vs_n": {"n": [1000, 100000], "eps0": [1.0]}})
    b = override_run("quick", {"bounds_vs_n": {"eps0": [1.0], "n": [1000, 100000]}})
    c = override_run("quick", {"bounds_vs_n": {"eps0": [2.0], "n": [1000, 100000]}})
    assert a == b != c
    assert re.fullmatch(r"quick-bounds_vs_n-[0-9a-f]{8}", a)
    assert override_run("quick", {}) is None
    assert override_run("quick", {"seed": 1, "run": "quick"}) is None  # on purpose
    long = override_run("x" * 60, {"k" * 80: 1, "seed": 2})
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}", long)


@pytest.mark.parametrize("run", sorted(CONFIG_FILES))
def test_figures_depend_on_the_configuration_that_produced_them(run):
    jobs, _ = _plan(run)
    plots = [job for job in jobs if job["rule"].startswith("plot_")]
    assert len(plots) == len(EXPERIMENTS)
    for job in plots:
        configs = [p for p in job.get("input", []) if "/config_used/" in p]
        assert len(configs) == 1, job
        assert configs[0].startswith(f"results/{run}/config_used/"), job


@pytest.mark.parametrize("run", ["quick", "paper"])
def test_gallery_copies_the_figures_of_the_configuration_in_use(run):
    jobs, _ = _plan(run, "gallery")
    (gallery,) = [job for job in jobs if job["rule"] == "gallery"]
    assert len(gallery["input"]) == len(EXPERIMENTS)
    assert all(p.startswith(f"results/{run}/figures/") for p in gallery["input"]), gallery
    assert all(p.startswith("docs/figures/") for p in gallery["output"]), gallery
    assert gallery["log"] == [f"results/{run}/logs/gallery.log"]


def test_gallery_refuses_the_ci_configuration():
    r = _snakemake("-n", "--cores", "1", "gallery", *_configfile_args("test"))
    text = r.stdout + r.stderr
    assert r.returncode != 0, text[-3000:]
    assert "config run = 'test'" in text and "docs/figures" in text, text[-3000:]
    assert "Job stats" not in text


@pytest.mark.parametrize("name", ["a/b", "..", "../quick", "/tmp/x", "x.y", "a b", "-x", "é"])
def test_a_bad_run_name_is_rejected_before_any_job(name):
    r = _snakemake("-n", "--cores", "1", "gdp_validity", "--config", f"run={name}")
    text = r.stdout + r.stderr
    assert r.returncode != 0, text[-3000:]
    lines = [ln for ln in text.splitlines() if ln.startswith("config run = ")]
    assert len(lines) == 1, text[-3000:]
    assert repr(name) in lines[0] and "folder name" in lines[0], lines[0]
    assert len(lines[0]) < 200, lines[0]
    assert "Job stats" not in text


def test_a_number_is_a_valid_run_name():
    r = _snakemake("-n", "--forceall", "--cores", "1", "gdp_validity", "--config", "run=2024")
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    paths = [p for job in _parse_jobs(r.stdout) for f in PATH_FIELDS for p in job.get(f, [])]
    assert paths and all(p.startswith("results/2024/") for p in paths), paths[:10]


# --- the effective configuration, rewritten when it changes (real runs of one tiny job) -------

SNAPSHOT = "results/quick/config_used/gdp_validity.yaml"


@pytest.fixture()
def workdir(tmp_path):
    """A working directory with the shipped configs and the snapshot of gdp_validity."""
    (tmp_path / "config").symlink_to(ROOT / "config")
    r = _snakemake("--cores", "1", SNAPSHOT, cwd=tmp_path)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return tmp_path


def _written_files(root: Path) -> list[str]:
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and ".snakemake" not in p.parts
    )


def test_an_override_rewrites_the_effective_configuration(workdir):
    written = yaml.safe_load((workdir / SNAPSHOT).read_text())
    default = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    assert written == {"run": "quick", "seed": default["seed"],
                       "gdp_validity": default["gdp_validity"]}
    assert _written_files(workdir) == [SNAPSHOT, "results/quick/logs/dump_config/gdp_validity.log"]
    # same configuration (keys reordered by an override): nothing to do
    # (run=quick: an override that overwrites the quick folder on purpose)
    same = "gdp_validity={delta: 1e-06, n: [100, 1000, 10000, 100000]}"
    r = _snakemake("-n", "--cores", "1", SNAPSHOT, "--config", same, "run=quick", cwd=workdir)
    assert r.returncode == 0 and "Nothing to be done" in r.stdout + r.stderr, r.stdout[-3000:]
    # a changed value: the params trigger rewrites the file with the new value
    r = _snakemake("--cores", "1", SNAPSHOT, "--config", "gdp_validity={delta: 1e-05}",
                   "run=quick", cwd=workdir)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert yaml.safe_load((workdir / SNAPSHOT).read_text())["gdp_validity"]["delta"] == 1e-5


def test_the_report_refuses_a_configuration_that_did_not_produce_the_figures(workdir):
    r = _snakemake("--report", "r.html", "--config", "gdp_validity={delta: 1e-05}",
                   "run=quick", cwd=workdir)
    text = r.stdout + r.stderr
    assert r.returncode != 0
    assert f"{SNAPSHOT} was written by another configuration" in text, text[-3000:]
    assert "gdp_validity.delta: 1e-06 there, 1e-05 now" in text, text[-3000:]
    # with the configuration that wrote it, a figure older than it is refused too
    figure = workdir / "results/quick/figures/gdp_validity.png"
    figure.parent.mkdir(parents=True)
    figure.write_bytes(b"")
    old = (workdir / SNAPSHOT).stat().st_mtime - 60
    os.utime(figure, (old, old))
    r = _snakemake("--report", "r.html", cwd=workdir)
    text = r.stdout + r.stderr
    assert r.returncode != 0
    assert "written by another configuration" not in text, text[-3000:]
    assert "gdp_validity.png is older than its configuration" in text, text[-3000:]


# --- CI writes only into the folder of the .test configuration -----------------------------


def test_ci_writes_only_into_the_test_folder():
    """Every snakemake command of .ci/run that runs jobs uses the .test configuration, its
    report goes into results/test/, and CI checks that results/quick/ is untouched."""
    text = (ROOT / ".ci" / "run").read_text()
    variables = dict(re.findall(r"^(\w+)=(\S+)", text, flags=re.M))
    assert variables["TEST_RESULTS"] == f"results/{_run_key('test')}"
    assert variables["QUICK_RESULTS"] == f"results/{_run_key('quick')}"
    commands = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("snakemake ")]
    assert commands
    running = []
    for cmd in commands:
        args = shlex.split(re.sub(r"\$\{?(\w+)\}?", lambda m: variables[m.group(1)], cmd))
        if "-n" in args or "--lint" in args:
            continue
        running.append(args)
        assert args[args.index("--configfile") + 1] == CONFIG_FILES["test"], cmd
        if "--report" in args:
            assert args[args.index("--report") + 1].startswith("results/test/"), cmd
    assert len(running) == 2 and any("--report" in a for a in running)
    removed = re.findall(r"^\s*rm -rf (\S+)", text, flags=re.M)
    assert removed == ['"$TEST_RESULTS"'], removed
    assert "quick_state" in text and "untouched" in text


def test_the_fast_target_runs_only_the_identical_budget_bound_experiments():
    jobs, _ = _plan("quick", "bounds")
    rules = {job["rule"] for job in jobs}
    assert {"compute_bounds_vs_n", "compute_gdp_validity", "plot_bounds_vs_n",
            "plot_gdp_validity"} <= rules
    heavy = {r for r in rules if r.startswith(("train_", "simulate_", "compute_personalized",
                                               "time_bounds"))}
    assert not heavy, heavy
    assert set(wfmanifest.BOUND_EXPERIMENTS) == {"bounds_vs_n", "gdp_validity"}
