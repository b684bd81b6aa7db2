"""The command line: output, formats, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from shuffledp import BudgetProfile, get_bound
from shuffledp.cli import main


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "shuffledp.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_gdp_value_from_flags_and_from_budgets_file(tmp_path, capsys):
    expected = get_bound("gdp").eps(
        profile=BudgetProfile.identical(n=100_000, eps0=4.0), delta=1e-6
    )
    assert (
        main(
            [
                "bound",
                "--n",
                "100000",
                "--eps0",
                "4",
                "--delta",
                "1e-6",
                "--method",
                "gdp",
                "--format",
                "json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["results"][0]["eps"] == pytest.approx(expected, rel=1e-12)
    f = tmp_path / "budgets.csv"
    f.write_text("eps\n" + "4\n" * 100_000)
    assert (
        main(
            ["bound", "--budgets", str(f), "--delta", "1e-6", "--method", "gdp", "--format", "json"]
        )
        == 0
    )
    out2 = json.loads(capsys.readouterr().out)
    assert out2["results"][0]["eps"] == pytest.approx(expected, rel=1e-12)


def test_table_and_csv_formats(capsys):
    assert main(["bound", "--n", "1000", "--eps0", "4", "--delta", "1e-6", "--method", "gdp"]) == 0
    table = capsys.readouterr().out
    assert "gdp" in table and "approximate" in table and "CLT approximation unreliable" in table
    assert (
        main(
            [
                "bound",
                "--n",
                "1000",
                "--eps0",
                "1",
                "--eps",
                "0.5",
                "--method",
                "gdp",
                "--format",
                "csv",
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "method,kind,eps,delta,status,vacuous,below_lower,note"
    assert lines[1].startswith("gdp,approximate,0.5,")


def test_list_command(capsys):
    assert main(["list"]) == 0
    assert "gdp" in capsys.readouterr().out


def test_subprocess_success():
    r = run_cli("bound", "--n", "100000", "--eps0", "4", "--delta", "1e-6", "--method", "gdp")
    assert r.returncode == 0, r.stderr
    assert "gdp" in r.stdout


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["bound", "--n", "1000", "--eps0", "-1", "--delta", "1e-6"], "eps0 must be finite"),
        (["bound", "--n", "1000", "--eps0", "x", "--delta", "1e-6"], "--eps0 must be a number"),
        (["bound", "--n", "1", "--eps0", "1", "--delta", "1e-6"], "n (number of users)"),
        (["bound", "--n", "10", "--eps0", "1"], "one of the arguments --delta --eps"),
        (["bound", "--n", "10", "--eps0", "1", "--delta", "2"], "delta must be in"),
        (
            ["bound", "--n", "10", "--eps0", "1", "--delta", "1e-6", "--method", "nope"],
            "unknown bound 'nope'",
        ),
        (["bound", "--eps0", "1", "--delta", "1e-6"], "give --n and --eps0"),
        (["bound", "--budgets", "/no/such/file.csv", "--delta", "1e-6"], "does not exist"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_one_line_exit_2(args, match):
    r = run_cli(*args)
    assert r.returncode == 2
    err = r.stderr.strip()
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    assert match in err


def test_bad_budgets_file_text_cell(tmp_path):
    f = tmp_path / "b.csv"
    f.write_text("eps\n1.0\nhello\n")
    r = run_cli("bound", "--budgets", str(f), "--delta", "1e-6")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "must be numeric, got 'hello'" in r.stderr


def test_npy_budgets(tmp_path, capsys):
    f = tmp_path / "b.npy"
    np.save(f, np.full(5000, 1.0))
    assert main(["bound", "--budgets", str(f), "--delta", "1e-6", "--method", "gdp"]) == 0
    assert "n = 5000" in capsys.readouterr().out


def test_clone_option_selects_standard_clones(capsys):
    # With standard clones and identical budgets, clones is FMT21's numerical bound.
    assert main(["bound", "--n", "100000", "--eps0", "4", "--delta", "1e-6", "--method",
                 "clones,fmt21_numerical", "--clone", "standard", "--format", "json"]) == 0
    res = {r["method"]: r for r in json.loads(capsys.readouterr().out)["results"]}
    assert res["clones"]["eps"] == pytest.approx(res["fmt21_numerical"]["eps"], rel=1e-9)
    assert main(["bound", "--n", "100000", "--eps0", "4", "--delta", "1e-6", "--method",
                 "clones", "--format", "json"]) == 0
    stronger = json.loads(capsys.readouterr().out)["results"][0]
    assert stronger["eps"] < res["clones"]["eps"]
    # identical budgets: stronger clones are a guarantee for binary RR, Duchi and k-RR only
    assert stronger["covers"] == ["binary_rr", "duchi", "krr:3", "krr:10"]
    assert "a guarantee for: binary_rr" in stronger["note"] and "laplace" not in stronger["note"]
    assert "laplace" in res["clones"]["covers"]  # standard: any randomizer (identical)
    r = run_cli("bound", "--n", "100", "--eps0", "1", "--delta", "1e-6", "--clone", "weak")
    assert r.returncode == 2 and "invalid choice" in r.stderr


def test_randomizer_selects_variation_ratio_parameters(capsys):
    # docs/theory.md 11.4: only the general row (gamma = 0) of Wang et al.'s table is proven;
    # --randomizer binary_rr uses it (Wang et al.'s code: 0.118161 at n = 1e5, eps0 = 4),
    # --randomizer krr:10 / laplace are reported as not applicable with the reason.
    args = ["bound", "--n", "100000", "--eps0", "4", "--delta", "1e-6", "--method",
            "variation_ratio", "--format", "json", "--randomizer"]
    assert main([*args, "binary_rr"]) == 0
    row = json.loads(capsys.readouterr().out)["results"][0]
    assert row["eps"] == pytest.approx(0.118161, rel=5e-3)
    assert row["covers"] == ["binary_rr"]
    for spec in ("krr:10", "laplace"):
        assert main([*args, spec]) == 0
        row = json.loads(capsys.readouterr().out)["results"][0]
        assert row["status"] == "not applicable" and "gamma" in row["note"]


# --- shuffledp list --format ------------------------------------------------------------------


def test_list_text_is_the_default(capsys):
    assert main(["list"]) == 0
    default = capsys.readouterr().out
    assert main(["list", "--format", "text"]) == 0
    assert capsys.readouterr().out == default
    assert default.startswith("method ") and "\nWhat a bound covers on your own profile" in default


def test_list_markdown_has_one_row_per_registered_bound(capsys):
    from shuffledp.bounds import list_bounds

    assert main(["list", "--format", "markdown"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "| bound | kind | personalized | local delta | covers | source |"
    assert lines[1] == "|---|---|---|---|---|---|"
    rows = [ln.split(" | ") for ln in lines[2:]]
    assert [r[0].strip("| `") for r in rows] == list_bounds()
    for name, row in zip(list_bounds(), rows, strict=True):
        info = get_bound(name).info
        assert len(row) == 6, row  # no unescaped "|" inside a cell
        assert row[1] == info.kind_label
        assert row[2] == ("yes" if info.personalized else "no")
        assert row[3] == ("yes" if info.approx_ldp else "no")


def test_list_bad_format_one_line_exit_2():
    r = run_cli("list", "--format", "html")
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and "invalid choice: 'html'" in r.stderr
