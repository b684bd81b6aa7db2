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
    assert lines[0] == ("method,kind,eps,delta,status,covered,guarantee_for,options,vacuous,"
                        "below_lower,note")
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
    assert stronger["guarantee_for"] == ["binary_rr", "duchi", "krr:3", "krr:10"]
    assert "a guarantee for: binary_rr" in stronger["note"] and "laplace" not in stronger["note"]
    assert "laplace" in res["clones"]["guarantee_for"]  # standard: any randomizer (identical)
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
    assert row["covered"] is True and "binary_rr" in row["guarantee_for"]
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


# --- the answer a practitioner can quote (issue 29) ------------------------------------------

ONE_HIGH = "docs/example_one_high.csv"
BOUND_SCHEMA = "docs/schemas/bound.schema.json"
CHECK_SCHEMA = "docs/schemas/check.schema.json"


def _validate(doc: dict, schema_file: str) -> None:
    import jsonschema

    with open(schema_file, encoding="utf-8") as f:
        jsonschema.validate(doc, json.load(f))


def test_named_randomizer_uses_its_own_masses_and_quotes_a_guarantee(capsys):
    """One user at 4 among 999 at 0.5, Laplace: the answer is a guarantee for Laplace (1.028 or
    tighter); the generic clones value 0.2735 (not a guarantee for Laplace) is nowhere in the
    rigorous rows of the main table, only in the section apart."""
    assert main(["bound", "--budgets", ONE_HIGH, "--delta", "1e-6", "--randomizer",
                 "laplace"]) == 0
    out = capsys.readouterr().out
    main_table, _, rest = out.partition("\nNot guarantees for laplace")
    answer = [ln for ln in out.splitlines() if ln.startswith("answer: ")]
    assert len(answer) == 1 and "proven by" in answer[0] and "no valid bound below" in answer[0]
    value = float(answer[0].split("(")[1].split(",")[0])
    assert 0.40 < value <= 1.0279
    assert "0.273475" not in main_table
    assert "NOT a guarantee" not in main_table
    # the generic masses on request: then clones' 0.2735 is a row apart, never the answer
    assert main(["bound", "--budgets", ONE_HIGH, "--delta", "1e-6", "--randomizer", "laplace",
                 "--method", "clones,window_lower", "--generic-masses", "--format",
                 "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    _validate(doc, BOUND_SCHEMA)
    (clones,) = [r for r in doc["results"] if r["method"] == "clones"]
    assert clones["covered"] is False and clones["eps"] == pytest.approx(0.273475, rel=1e-4)
    assert doc["answer"]["upper_method"] is None
    assert doc["answer"]["lower_method"] == "window_lower"


def test_json_and_csv_carry_covered_guarantee_for_and_options(capsys):
    assert main(["bound", "--budgets", ONE_HIGH, "--delta", "1e-6", "--randomizer", "laplace",
                 "--method", "gdp,clones,blanket,rr_exact,tier_sum_lower", "--format",
                 "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    _validate(doc, BOUND_SCHEMA)
    rows = {r["method"]: r for r in doc["results"]}
    assert rows["clones"]["options"]["mechanism"] == "laplace" and rows["clones"]["covered"]
    assert "laplace" in rows["clones"]["guarantee_for"]
    assert rows["gdp"]["covered"] is False  # an approximation is a guarantee for nothing
    assert rows["rr_exact"]["covered"] is False  # binary RR's curve: no lower bound for Laplace
    a = doc["answer"]
    assert a["upper_method"] in ("blanket", "clones") and a["lower_method"] == "tier_sum_lower"
    assert a["lower_value"] <= a["upper_value"]
    # no randomizer: covered is null, the answer too, and the schema still holds
    assert main(["bound", "--n", "1000", "--eps0", "1", "--delta", "1e-6", "--method",
                 "gdp,clones", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    _validate(doc, BOUND_SCHEMA)
    assert doc["answer"] is None and all(r["covered"] is None for r in doc["results"])
    assert main(["bound", "--budgets", ONE_HIGH, "--delta", "1e-6", "--randomizer", "laplace",
                 "--method", "clones", "--format", "csv"]) == 0
    import csv
    import io

    (row,) = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert row["covered"] == "True" and json.loads(row["options"])["mechanism"] == "laplace"
    assert "laplace" in row["guarantee_for"].split(";")


def test_the_schema_refuses_a_malformed_document():
    import jsonschema

    doc = {"schema_version": 1, "n": 10, "delta": 1e-6, "eps": None, "eps_min": 1.0,
           "eps_max": 1.0, "delta_max": 0.0, "randomizer": None, "results": [], "answer": None}
    _validate(doc, BOUND_SCHEMA)
    for bad in ({**doc, "schema_version": 2}, {**doc, "n": 0},
                {**doc, "results": [{"method": "gdp"}]}, {k: v for k, v in doc.items()
                                                          if k != "answer"}):
        with pytest.raises(jsonschema.ValidationError):
            _validate(bad, BOUND_SCHEMA)


def test_check_answers_proven_refuted_undetermined_with_exit_codes(capsys):
    """The paper's formula at n = 1000, eps0 = 4 (binary RR) is refuted; on the Laplace example
    a claim above the covering upper bound is proven, one between the two undetermined, one
    below the certified lower bound refuted."""
    gdp = get_bound("gdp").eps(profile=BudgetProfile.identical(n=1000, eps0=4.0), delta=1e-6)
    code = main(["check", "--n", "1000", "--eps0", "4", "--randomizer", "binary_rr", "--eps",
                 repr(gdp), "--delta", "1e-6", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    _validate(doc, CHECK_SCHEMA)
    assert code == 4 and doc["verdict"] == "refuted" and doc["lower_method"] == "rr_exact"
    assert doc["lower_delta"] > 1e-6
    base = ["check", "--budgets", ONE_HIGH, "--randomizer", "laplace", "--delta", "1e-6"]
    for eps, want, code_want in (("0.5", "proven", 0), ("0.42", "undetermined", 5),
                                 ("0.3", "refuted", 4)):
        assert main([*base, "--eps", eps, "--format", "json"]) == code_want
        doc = json.loads(capsys.readouterr().out)
        _validate(doc, CHECK_SCHEMA)
        assert doc["verdict"] == want, doc
        if want == "proven":
            assert doc["upper_delta"] <= 1e-6
        if want == "refuted":
            assert doc["lower_delta"] > 1e-6
    assert main([*base, "--eps", "0.42"]) == 5
    assert "undetermined" in capsys.readouterr().out


def test_check_and_masses_refuse_bad_input():
    r = run_cli("check", "--n", "100", "--eps0", "1", "--eps", "0.5", "--delta", "1e-6")
    assert r.returncode == 2 and "--randomizer" in r.stderr
    r = run_cli("check", "--n", "100", "--eps0", "1", "--eps", "-1", "--delta", "1e-6",
                "--randomizer", "laplace")
    assert r.returncode == 2 and "eps" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("bound", "--n", "100", "--eps0", "1", "--delta", "1e-6", "--generic-masses")
    assert r.returncode == 2 and "--generic-masses needs --randomizer" in r.stderr
    r = run_cli("bound", "--budgets", ONE_HIGH, "--delta0", "1e-8", "--delta", "1e-6")
    assert r.returncode == 2 and "--delta0 applies to --n/--eps0 only" in r.stderr
    r = run_cli("bound", "--n", "100", "--eps0", "1", "--delta", "1e-6", "--randomizer",
                "laplace", "--generic-masses", "--mechanism-aware")
    assert r.returncode == 2 and "not allowed with" in r.stderr


# --- hostile use of the command line (issue 30) -----------------------------------------------

def test_repeated_options_and_the_integer_range_are_refused_in_one_line():
    r = run_cli("bound", "--n", "10", "--n", "1000", "--eps0", "1", "--delta", "1e-6")
    assert r.returncode == 2 and "--n given more than once" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = run_cli("bound", "--n", "100", "--eps0", "1", "--delta=1e-6", "--delta", "1e-5")
    assert r.returncode == 2 and "--delta given more than once" in r.stderr
    r = run_cli("bound", "--n", "1e18", "--eps0", "1", "--delta", "1e-6")
    assert r.returncode == 2 and "integer below 1e18" in r.stderr


def test_ctrl_c_and_a_closed_pipe():
    import signal
    import time

    # the child gets Ctrl-C's default action whatever this process inherited (a shell's
    # background job ignores SIGINT, and Python then installs no handler in the child)
    proc = subprocess.Popen(
        [sys.executable, "-m", "shuffledp.cli", "bound", "--n", "300000000", "--eps0", "1",
         "--delta", "1e-6", "--method", "all"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(3.0)  # past the imports, inside the bounds (all of them take about 10 s)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (proc.returncode, err)
    assert err.strip() == "shuffledp: interrupted"
    # the reader goes away after one line: no complaint, the closed-pipe code (not bad input)
    r = subprocess.run(
        ["sh", "-c", f"'{sys.executable}' -m shuffledp.cli bound --n 1000 --eps0 1 --delta 1e-6 "
                     "--method gdp,clones --format json | head -c 10 > /dev/null; "
                     "echo ${PIPESTATUS:-}"], capture_output=True, text=True, timeout=300)
    assert "Broken pipe" not in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_closed_pipe_exit_code_in_process(monkeypatch, capsys):
    import shuffledp.cli as cli

    def boom(args):
        raise BrokenPipeError(32, "Broken pipe")
    monkeypatch.setattr(cli, "_cmd_list", lambda fmt: boom(None))
    monkeypatch.setattr(cli, "_closed_pipe", lambda: cli.EXIT_CLOSED_PIPE)
    assert cli.main(["list"]) == 141
    assert capsys.readouterr().err == ""


def test_memory_error_gives_one_line(monkeypatch, capsys):
    import shuffledp.cli as cli

    def boom(args):
        raise MemoryError()
    monkeypatch.setattr(cli, "_cmd_bound", boom)
    assert cli.main(["bound", "--n", "10", "--eps0", "1", "--delta", "1e-6"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("shuffledp: error: out of memory") and err.count("\n") == 1
