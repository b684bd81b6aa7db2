"""Workflow integrity: every intermediate table is validated against its declared columns and
types (workflow/scripts/table_schemas.py) when a later rule reads it, and a corrupted table
fails that rule with one line naming the file, the column and the line."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd
import pytest
import table_schemas as tables  # workflow/scripts (on sys.path via conftest)
from table_schemas import TABLES, TableError, read_table

from shuffledp import get_bound
from shuffledp.bounds import Bound, BoundInfo, register_bound, unregister_bound

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "workflow" / "scripts"
RULES = ROOT / "workflow" / "rules"

# Valid tables, as the workflow's jobs write them (rows taken from a run of the .test config,
# with one row of every status and the empty cells of each).
_BOUNDS_VS_N = """\
n,eps0,delta,method,kind,eps,seconds,status,reason,expected_clones,clt_ok,below_lower
1000,4.0,1e-06,gdp,approximate,1.449377060821375,0.0055,ok,,35.93644750425893,False,True
1000,4.0,1e-06,liu23_personalized,approximate,,,not_applicable,"requires S >= 243.2, got 18.3",,,
1000,4.0,1e-06,rr_exact,lower,0.691,0.2,ok,,,,False
"""
_GDP_VALIDITY = """\
n,eps0,delta,method,kind,eps,seconds,status,reason,expected_clones,clt_ok,ratio_to_lower,below_lower
1000,0.5,1e-06,gdp,approximate,0.2827563930771301,0.0051,ok,,754.3262562586947,True,4.97339,False
1000,0.5,1e-06,rr_exact,lower,0.05685,0.02,ok,,,,1.0,False
1000,8.0,1e-06,clones,upper,,,not_applicable,"outside the region",,,,False
"""
_PERSONALIZED = """\
profile,n,delta0,delta,method,kind,eps,seconds,seed,status,reason
two_groups,1000,0.0,1e-05,gdp,approximate,0.3030132787542444,0.00104,20240101,ok,
two_groups,1000,0.0,1e-05,efmrtt19,upper,,,20240101,not_applicable,"requires eps0 <= 0.5, got 2"
two_groups,1000,1e-10,1e-05,clones,upper,0.21,0.01,20240101,ok,
"""
_RUNTIME = """\
method,kind,n,profile,delta,eps,seconds_min,seconds_median,repeats,seed,status,reason
gdp,approximate,1000,uniform_0.5_2,1e-06,0.367,0.00096,0.00096,1,20240101,ok,
efmrtt19,upper,1000,uniform_0.5_2,1e-06,,,,0,20240101,not_applicable,"requires eps0 <= 0.5"
"""
_UTILITY_HEADER = (
    "method,kind,sweep,target_eps,delta,profile,n,mechanism,scale,eps0,eps_local_mean,"
    "bound_eps,capped,covered,mse,mse_ci_low,mse_ci_high,mse_theory,reps,seed,status,reason,"
    "seconds\n"
)
_MEAN = _UTILITY_HEADER + (
    "gdp,approximate,n,1.0,1e-06,identical,1000,laplace,3.29,3.29,3.29,0.999,False,True,"
    "2.6e-05,0.0,9.9e-05,0.00073,3,20240101,ok,,0.0496\n"
    "gdp,approximate,eps,4.0,1e-06,uniform_0.5_2,1000,duchi,,,,,,,,,,,3,20240101,"
    "not_applicable,cannot reach the target,0.01\n"
)
_MEAN_REFERENCE = _UTILITY_HEADER + (
    "central_laplace,reference,n,1.0,1e-06,identical,1000,central_laplace,,,,,,True,"
    "7.6e-06,0.0,3.4e-05,8e-06,3,20240101,ok,,0.0009\n"
)
_FREQUENCY = _UTILITY_HEADER + (
    "gdp,approximate,n,1.0,1e-06,identical,1000,grr,3.29,3.29,3.29,0.999,False,True,"
    "0.000104,1.0e-05,0.000199,0.000101,3,20240101,ok,,0.0255\n"
    "gdp,approximate,n,1.0,1e-06,identical,1000,oue,3.29,3.29,3.29,0.999,True,False,"
    "0.00028,0.00013,0.00043,0.00021,3,20240101,ok,,0.0057\n"
)
_SGD_RUN = """\
method,target_eps,delta,rounds,randomizer,dataset,model,clip,lr,profile,seed,kind,\
local_eps_scale,eps_achieved,local_eps_max,local_eps_mean,capped,budget_levels,local_eps_levels,\
tier_users,tier_eps,tier_eps_targets,status,reason,accuracy,\
train_accuracy,n_users,n_params,seconds,chance
gdp,2.0,1e-05,10,duchi,digits,logreg,1.0,0.3,identical,498351109,approximate,2.836,1.9986,\
2.836,2.836,False,1,2.836,,,,ok,,0.7577,0.7921,1438,650,3.71,0.1017
gdp,2.0,1e-05,10,duchi,digits,logreg,1.0,0.3,identical,77,approximate,2.836,1.9986,\
2.836,2.836,False,1,2.836,,,,ok,,0.7601,0.7930,1438,650,3.52,0.1017
"""
_SGD_NONPRIVATE = """\
method,target_eps,delta,rounds,randomizer,dataset,model,clip,lr,profile,seed,kind,\
local_eps_scale,eps_achieved,status,reason,accuracy,train_accuracy,n_users,n_params,seconds
nonprivate,,1e-05,10,duchi,digits,logreg,1.0,0.3,identical,498351109,nonprivate,,inf,ok,,\
0.8524,0.8783,1438,650,3.35
"""
_SGD_NOT_APPLICABLE = """\
method,target_eps,delta,rounds,randomizer,dataset,model,clip,lr,profile,seed,kind,status,\
reason,accuracy,local_eps_scale
clones,0.1,1e-05,10,duchi,digits,logreg,1.0,0.3,identical,5,upper,not_applicable,too small,,
"""

_VALIDITY = """\
profile,randomizer,n,delta,delta0,method,variant,kind,covered,eps,lower_eps,lower_method,\
ratio_to_lower,below_lower,status,reason,coverage,seconds,seed
few_high,laplace,1000,1e-06,0.0,gdp,,approximate,False,0.2842,0.3669,window_lower,0.7745979831016626,True,\
ok,,an approximation,0.0008,20240101
few_high,laplace,1000,1e-06,0.0,clones,mechanism=laplace,upper,True,1.0279,0.3669,window_lower,\
2.8015808122104118,False,ok,,the masses of laplace,0.31,20240101
few_high,laplace,1000,1e-06,0.0,efmrtt19,,upper,False,,0.3669,window_lower,,,not_applicable,\
requires eps0 <= 0.5,not proven through clones,,20240101
few_high,laplace,1000,1e-06,0.0,window_lower,mechanism=laplace,lower,True,0.3669,0.3669,\
window_lower,1.0,False,ok,,a post-processing of shuffled laplace,0.03,20240101
"""

VALID = {
    "bounds_vs_n": _BOUNDS_VS_N,
    "gdp_validity": _GDP_VALIDITY,
    "personalized": _PERSONALIZED,
    "personalized_validity": _VALIDITY,
    "runtime": _RUNTIME,
    "mean_estimation": _MEAN,
    "frequency_estimation": _FREQUENCY,
    "sgd": _SGD_RUN,
}
# Pieces: one job's table (its coordinate is constant: eps0, n, profile, method, ...).
VALID_PIECES = {
    "bounds_vs_n.piece": _BOUNDS_VS_N,
    "gdp_validity.piece": _GDP_VALIDITY.replace("1000,8.0,", "1000,0.5,"),
    "personalized.piece": _PERSONALIZED,
    "personalized_validity.piece": _VALIDITY,
    "mean_estimation.piece": _MEAN,
    "frequency_estimation.piece": _FREQUENCY,
    "sgd.piece": _SGD_RUN,
}
ALL_VALID = {**VALID, **VALID_PIECES}


def _write(tmp_path, text, name="table.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _fails(path, kind, *fragments):
    """read_table raises a one-line TableError naming the file and every fragment."""
    with pytest.raises(TableError) as info:
        read_table(path, kind)
    msg = str(info.value)
    assert isinstance(info.value, ValueError)
    assert "\n" not in msg, msg
    assert str(path) in msg, msg
    for frag in fragments:
        assert frag in msg, msg
    return msg


def _frame(text):
    """The table as text cells (empty cells stay empty)."""
    return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)


def _drop_column(text, name):
    return _frame(text).drop(columns=[name]).to_csv(index=False)


def _set_cell(text, name, value, row=0):
    df = _frame(text)
    df.loc[row, name] = value
    return df.to_csv(index=False)


def _n_rows(text):
    return len(text.strip().splitlines()) - 1


def _first_typed_column(kind, types=("number", "integer")):
    return next(c.name for c in TABLES[kind].columns if c.type in types and not c.optional)


def test_every_table_kind_has_a_valid_example():
    assert set(ALL_VALID) == set(TABLES)


@pytest.mark.parametrize("kind", sorted(ALL_VALID))
def test_valid_table_passes(kind, tmp_path):
    text = ALL_VALID[kind]
    df = read_table(_write(tmp_path, text), kind)
    assert len(df) == _n_rows(text)
    assert list(df.columns) == TABLES[kind].names  # declared order, optional ones filled
    for col in TABLES[kind].columns:
        if col.type == "number":
            assert df[col.name].dtype == float, col.name
        if col.type == "integer" and not col.nullable:
            assert df[col.name].dtype == "int64", col.name


@pytest.mark.parametrize("kind", sorted(ALL_VALID))
def test_garbage_appended_fails(kind, tmp_path):
    path = _write(tmp_path, ALL_VALID[kind] + "lorem ipsum dolor sit amet\n")
    _fails(path, kind, "garbage", f"line {_n_rows(ALL_VALID[kind]) + 2}:")


@pytest.mark.parametrize("kind", sorted(ALL_VALID))
def test_garbage_with_more_fields_fails(kind, tmp_path):
    """A line wider than the header (a tokenizer error for pandas) names file and line."""
    path = _write(tmp_path, ALL_VALID[kind] + "," * 40 + "x\n")
    _fails(path, kind, "41 fields")


@pytest.mark.parametrize("kind", sorted(ALL_VALID))
def test_missing_column_fails(kind, tmp_path):
    name = TABLES[kind].required[-1]
    path = _write(tmp_path, _drop_column(ALL_VALID[kind], name))
    _fails(path, kind, "missing column", repr(name))


@pytest.mark.parametrize("kind", sorted(ALL_VALID))
def test_non_numeric_cell_fails(kind, tmp_path):
    name = _first_typed_column(kind)
    path = _write(tmp_path, _set_cell(ALL_VALID[kind], name, "12abc", row=1))
    _fails(path, kind, f"column {name!r}, line 3", "'12abc'", "not a")


@pytest.mark.parametrize("kind", sorted(ALL_VALID))
def test_bogus_extra_column_fails(kind, tmp_path):
    df = _frame(ALL_VALID[kind])
    df["Unnamed: 13"] = "x"
    path = _write(tmp_path, df.to_csv(index=False))
    _fails(path, kind, "unexpected column", "'Unnamed: 13'", "table_schemas.py")


@pytest.mark.parametrize("kind", sorted(ALL_VALID))
@pytest.mark.parametrize("text", ["", "\n", "  \n\n"])
def test_empty_file_fails(kind, text, tmp_path):
    _fails(_write(tmp_path, text), kind, "empty file")


@pytest.mark.parametrize("kind", sorted(ALL_VALID))
def test_header_only_fails(kind, tmp_path):
    _fails(_write(tmp_path, ALL_VALID[kind].splitlines()[0] + "\n"), kind, "no data rows")


@pytest.mark.parametrize("kind", sorted(ALL_VALID))
def test_truncated_file_fails(kind, tmp_path):
    text = ALL_VALID[kind]
    _fails(_write(tmp_path, text[: len(text) - 7]), kind, "truncated")


def test_short_row_names_its_line(tmp_path):
    lines = _BOUNDS_VS_N.splitlines()
    text = "\n".join([*lines[:2], lines[2][:20], *lines[3:]]) + "\n"
    _fails(_write(tmp_path, text), "bounds_vs_n", "line 3", "fields where the header has 12")


@pytest.mark.parametrize(
    ("kind", "column", "value", "fragment"),
    [
        ("bounds_vs_n", "kind", "exact", "approximate, upper, lower"),
        ("bounds_vs_n", "status", "error", "ok, not_applicable"),
        ("bounds_vs_n", "below_lower", "maybe", "True/False"),
        ("bounds_vs_n", "n", "1000.5", "not an integer"),
        ("bounds_vs_n", "method", "Not A Name!", "not a name"),
        ("bounds_vs_n", "delta", "", "must have a value"),
        ("bounds_vs_n", "eps", "", "status 'ok'"),  # ok rows carry eps
        ("mean_estimation", "sweep", "both", "n, eps"),
        ("mean_estimation", "kind", "lower_bound", "reference"),
        ("sgd", "kind", "reference", "nonprivate"),
    ],
)
def test_bad_value_fails(kind, column, value, fragment, tmp_path):
    path = _write(tmp_path, _set_cell(ALL_VALID[kind], column, value, row=0))
    _fails(path, kind, f"column {column!r}", "line 2", fragment)


def test_first_bad_row_is_reported(tmp_path):
    text = _set_cell(_set_cell(_PERSONALIZED, "seed", "x", row=2), "eps", "y", row=1)
    _fails(_write(tmp_path, text), "personalized", "column 'eps', line 3", "'y'")


def test_piece_holds_one_coordinate(tmp_path):
    path = _write(tmp_path, _set_cell(_BOUNDS_VS_N, "eps0", "1.0", row=2))
    _fails(path, "bounds_vs_n.piece", "column 'eps0', line 4", "single eps0")
    read_table(path, "bounds_vs_n")  # the concatenated table holds every eps0


def test_table_of_another_kind_is_named(tmp_path):
    msg = _fails(_write(tmp_path, _PERSONALIZED), "bounds_vs_n", "missing column")
    assert "'personalized' table" in msg


def test_binary_garbage_fails(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(_GDP_VALIDITY.encode() + b"\xff\xfe\x00\x01garbage\n")
    _fails(path, "gdp_validity", "not UTF-8")


def test_unterminated_quote_fails(tmp_path):
    _fails(_write(tmp_path, _RUNTIME + 'gdp,approximate,"unterminated\n'), "runtime", "line")


def test_duplicate_column_fails(tmp_path):
    text = _RUNTIME.replace("seed,status", "seed,seed", 1)
    _fails(_write(tmp_path, text), "runtime", "duplicate column", "'seed'")


def test_optional_and_nullable_columns(tmp_path):
    """Optional columns may be absent (filled empty); nullable ones may hold empty cells."""
    text = _drop_column(_drop_column(_BOUNDS_VS_N, "below_lower"), "clt_ok")
    df = read_table(_write(tmp_path, text), "bounds_vs_n")
    assert df["below_lower"].isna().all() and df["clt_ok"].isna().all()
    assert "vacuous" in df.columns and df["vacuous"].isna().all()
    df = read_table(_write(tmp_path, text), "bounds_vs_n", fill_optional=False)
    assert "below_lower" not in df.columns and "vacuous" not in df.columns
    # below_lower true / false / empty (not checked); a vacuous column is accepted
    text = _set_cell(_BOUNDS_VS_N, "below_lower", "", row=0)
    df = _frame(text)
    df["vacuous"] = ["False", "", "True"]
    df = read_table(_write(tmp_path, df.to_csv(index=False)), "bounds_vs_n")
    assert df["below_lower"].isna().tolist() == [True, True, False]
    assert df["vacuous"].tolist()[::2] == [False, True]


def test_schema_declarations_are_consistent():
    for kind, sch in TABLES.items():
        assert sch.kind == kind
        if kind.endswith(".piece"):
            base = TABLES[kind.removesuffix(".piece")]
            assert sch.columns == base.columns and sch.constant
        for col in sch.columns:
            assert col.type in tables._TYPES
            if col.optional:
                assert col.nullable, f"{kind}.{col.name}: optional columns are filled empty"
    assert "status" in TABLES["bounds_vs_n"].required
    assert TABLES["bounds_vs_n"].column("kind").values == ("approximate", "upper", "lower")
    assert TABLES["gdp_validity"].column("status").values == ("ok", "not_applicable")
    assert "reference" in TABLES["mean_estimation"].column("kind").values


# --- concatenation (concat_tables.py) -------------------------------------------------------


def test_concat_tables_main_rejects_a_corrupted_piece(tmp_path):
    """The issue: text garbage in one per-n piece was concatenated silently and drawn."""
    import concat_tables

    good = _write(tmp_path, _GDP_VALIDITY.replace("1000,8.0,", "1000,0.5,"), "n_1000.csv")
    bad_text = _GDP_VALIDITY.replace("1000,", "100,").replace("100,8.0,", "100,0.5,")
    bad = _write(tmp_path, bad_text + "Traceback (most recent call last):\n  garbage, more\n",
                 "n_100.csv")
    out = tmp_path / "gdp_validity.csv"
    with pytest.raises(TableError) as info:
        concat_tables.main(inputs={"tables": [str(good), str(bad)]},
                           outputs={"table": str(out)}, params={"kind": "gdp_validity"})
    msg = str(info.value)
    assert str(bad) in msg and "line 5" in msg and "\n" not in msg, msg
    assert not out.exists()
    # the same pieces, uncorrupted, concatenate
    bad.write_text(bad_text)
    concat_tables.main(inputs={"tables": [str(good), str(bad)]}, outputs={"table": str(out)},
                       params={"kind": "gdp_validity"})
    df = read_table(out, "gdp_validity")
    assert len(df) == 6 and sorted(set(df["n"])) == [100, 1000]


def test_concat_requires_pieces_of_one_kind(tmp_path):
    from table_schemas import concat

    a = _write(tmp_path, _BOUNDS_VS_N, "eps0_4.csv")
    b = _write(tmp_path, _PERSONALIZED, "two_groups.csv")
    with pytest.raises(TableError, match=re.escape(str(b)) + ".*'personalized' table"):
        concat([a, b], "bounds_vs_n")


def test_concat_needs_a_kind(tmp_path):
    import concat_tables

    with pytest.raises(ValueError, match="kind"):
        concat_tables.main(inputs={"tables": [str(_write(tmp_path, _BOUNDS_VS_N))]},
                           outputs={"table": str(tmp_path / "o.csv")}, params={})


def test_concat_of_pieces_with_different_optional_columns(tmp_path):
    """The nonprivate and not-applicable SGD runs lack some optional columns: empty there."""
    from table_schemas import concat

    paths = [
        _write(tmp_path, _SGD_RUN, "gdp.csv"),
        _write(tmp_path, _SGD_NONPRIVATE, "nonprivate.csv"),
        _write(tmp_path, _SGD_NOT_APPLICABLE, "clones.csv"),
    ]
    df = concat(paths, "sgd")
    assert list(df.columns) == TABLES["sgd"].names
    assert len(df) == 4
    assert df["local_eps_max"].isna().tolist() == [False, False, True, True]
    assert df["n_users"].dtype == "Int64"
    out = tmp_path / "sgd.csv"
    df.to_csv(out, index=False)
    assert read_table(out, "sgd")["accuracy"].notna().sum() == 3
    # columns that no piece has are not added
    df = concat([paths[1]], "sgd")
    assert "local_eps_max" not in df.columns


def test_concat_output_round_trips(tmp_path):
    """Concatenating validated pieces writes the same text pandas would (no format drift)."""
    from table_schemas import concat

    a = _write(tmp_path, _BOUNDS_VS_N, "a.csv")
    b = _write(tmp_path, _BOUNDS_VS_N.replace(",4.0,", ",1.0,"), "b.csv")
    expected = pd.concat([pd.read_csv(a), pd.read_csv(b)], ignore_index=True).to_csv(index=False)
    assert concat([a, b], "bounds_vs_n").to_csv(index=False) == expected


# --- every table reader goes through read_table ---------------------------------------------

READERS = ["concat_tables.py", "make_tables.py", *sorted(p.name for p in SCRIPTS.glob("plot_*.py"))]


@pytest.mark.parametrize("script", READERS)
def test_table_readers_use_read_table(script):
    text = (SCRIPTS / script).read_text()
    assert "read_csv" not in text, f"{script} reads a table without validating it"
    assert "read_table(" in text or "concat(" in text, script


def test_rules_name_the_kind_of_the_tables_they_read():
    for smk in RULES.glob("*.smk"):
        for block in re.split(r"\n(?=rule )", smk.read_text()):
            if "concat_tables.py" in block or "plot_utility.py" in block:
                kind = re.search(r'kind="([a-z_]+)"', block)
                assert kind, f"{smk.name}: {block.splitlines()[0]} has no kind param"
                assert kind.group(1) in TABLES, kind.group(1)


@pytest.mark.parametrize("script", ["plot_bounds_vs_n", "plot_gdp_validity", "plot_runtime"])
def test_plot_scripts_reject_a_corrupted_table(script, tmp_path):
    import importlib

    kind = script.removeprefix("plot_")
    path = _write(tmp_path, _set_cell(VALID[kind], "eps", "1.2.3", row=0), f"{kind}.csv")
    main = importlib.import_module(script).main
    with pytest.raises(TableError, match=re.escape(str(path)) + ".*column 'eps', line 2"):
        main(inputs={"table": str(path)},
             outputs={"png": str(tmp_path / "f.png"), "pdf": str(tmp_path / "f.pdf")},
             params={})


# --- the writers write what the schema declares ---------------------------------------------


def test_bound_scripts_write_their_declared_tables(tmp_path):
    import compute_bounds_vs_n
    import compute_gdp_validity
    import compute_personalized
    import time_bounds

    methods = ["gdp", "clones", "rr_exact", "efmrtt19", "fmt21_closed"]
    out = tmp_path / "a.csv"
    compute_bounds_vs_n.main(inputs={}, outputs={"table": str(out)},
                             params={"n": [100, 1000], "eps0": 4.0, "delta": 1e-6,
                                     "methods": methods})
    assert len(read_table(out, "bounds_vs_n.piece")) == 10
    compute_gdp_validity.main(inputs={}, outputs={"table": str(out)},
                              params={"n": [100], "eps0": [0.5, 8.0], "delta": 1e-6})
    assert len(read_table(out, "gdp_validity.piece")) == 6
    spec = {"kind": "uniform", "low": 0.5, "high": 2.0}
    compute_personalized.main(
        inputs={}, outputs={"table": str(out)},
        params={"profiles": ["u"], "profile_specs": {"u": spec}, "n": [100],
                "delta": 1e-5, "delta0": [0.0], "methods": methods, "seed": 1})
    assert len(read_table(out, "personalized.piece")) == 5
    time_bounds.main(inputs={}, outputs={"table": str(out)},
                     params={"n": [100], "profile": "u", "profile_spec": spec, "delta": 1e-6,
                             "repeats": 1, "methods": ["gdp", "efmrtt19"], "seed": 1})
    assert read_table(out, "runtime")["status"].tolist() == ["ok", "not_applicable"]


# --- corrupted rows that parse (issue 30): values out of range, repeated rows ----------------

_WITH_EPS = [k for k in ALL_VALID if "eps" in TABLES[k].names]


@pytest.mark.parametrize("kind", _WITH_EPS)
@pytest.mark.parametrize("value", ["-1", "1e300", "inf"])
def test_an_ok_row_with_an_impossible_eps_fails(kind, value, tmp_path):
    text = ALL_VALID[kind]
    df = _frame(text)
    row = int(next(i for i, s in enumerate(df["status"]) if s == "ok" and df["eps"][i] != ""))
    path = _write(tmp_path, _set_cell(text, "eps", value, row=row))
    _fails(path, kind, "column 'eps'", f"line {row + 2}", "to regenerate it")


@pytest.mark.parametrize("kind", [k for k in ALL_VALID if TABLES[k].keys])
def test_a_repeated_row_fails_naming_both_lines(kind, tmp_path):
    text = ALL_VALID[kind]
    lines = text.strip().splitlines()
    path = _write(tmp_path, "\n".join([*lines, lines[1]]) + "\n")
    _fails(path, kind, f"line {len(lines) + 1} repeats the row of line 2")


def test_every_table_with_a_row_identity_declares_its_keys():
    # (the utility tables repeat their central_laplace reference rows once per job: no keys)
    for kind in ("bounds_vs_n", "gdp_validity", "personalized", "personalized_validity"):
        assert TABLES[kind].keys, kind
        assert set(TABLES[kind].keys) <= set(TABLES[kind].names)


def test_delta_outside_zero_one_fails(tmp_path):
    text = ALL_VALID["bounds_vs_n"]
    path = _write(tmp_path, _set_cell(text, "delta", "1.5"))
    _fails(path, "bounds_vs_n", "column 'delta'", "outside the column's range [0, 1]")


# --- the rows each piece must hold (issue 30): its grid from the configuration --------------

_METHODS = ["gdp", "clones", "efmrtt19"]


def _bounds_piece(tmp_path):
    import compute_bounds_vs_n

    out = tmp_path / "eps0_4.csv"
    compute_bounds_vs_n.main(inputs={}, outputs={"table": str(out)},
                             params={"n": [100, 1000], "eps0": 4.0, "delta": 1e-6,
                                     "methods": _METHODS})
    grid = {"blocks": [{"n": [100, 1000.0], "eps0": [4.0], "method": _METHODS}],
            "open": ["method"]}
    return out, grid


def test_a_piece_holding_its_grid_passes(tmp_path):
    out, grid = _bounds_piece(tmp_path)
    df = tables.concat([out], "bounds_vs_n", expect={str(out): grid})
    assert set(df["method"]) == set(_METHODS)
    # rows of methods beyond the grid's are allowed in an open column (a job's reference
    # lower bound), refused otherwise
    fewer = {"blocks": [{**grid["blocks"][0], "method": ["gdp"]}], "open": ["method"]}
    assert len(read_table(out, "bounds_vs_n.piece", expect=fewer)) == 6
    with pytest.raises(TableError, match="method='clones'.* is outside the grid"):
        read_table(out, "bounds_vs_n.piece", expect={**fewer, "open": []})


@pytest.mark.parametrize("method", _METHODS)
def test_a_deleted_row_fails_naming_the_missing_combination(tmp_path, method):
    out, grid = _bounds_piece(tmp_path)
    lines = out.read_text().splitlines(keepends=True)
    victim = next(i for i, ln in enumerate(lines) if ln.startswith("1000,") and f",{method}," in ln)
    out.write_text("".join(lines[:victim] + lines[victim + 1:]))
    with pytest.raises(TableError, match=rf"no row for n=1000, eps0=4.0, method='{method}'.*"
                                         "to regenerate it"):
        tables.concat([out], "bounds_vs_n", expect={str(out): grid})


def test_a_row_outside_the_grid_fails_naming_its_line(tmp_path):
    out, grid = _bounds_piece(tmp_path)
    lines = out.read_text().splitlines(keepends=True)
    stale = lines[1].replace("100,", "5000,", 1)
    out.write_text("".join([*lines, stale]))
    with pytest.raises(TableError, match=rf"line {len(lines) + 1} \(n=5000, eps0=4.0\) is "
                                         "outside the grid"):
        tables.concat([out], "bounds_vs_n", expect={str(out): grid})


def test_a_grid_must_cover_every_piece_and_name_declared_columns(tmp_path):
    out, grid = _bounds_piece(tmp_path)
    with pytest.raises(ValueError, match="expect has no grid for"):
        tables.concat([out], "bounds_vs_n", expect={"other.csv": grid})
    with pytest.raises(ValueError, match="'nope', not a column"):
        read_table(out, "bounds_vs_n.piece", expect={"nope": [1]})
    with pytest.raises(TypeError, match="expect must be a mapping"):
        read_table(out, "bounds_vs_n.piece", expect=[1])


def test_several_blocks_each_need_every_combination(tmp_path):
    # the estimation pieces: a sweep over n at one eps and a sweep over eps at one n
    out, _ = _bounds_piece(tmp_path)
    two = {"blocks": [{"n": [100], "eps0": [4.0]}, {"n": [1000], "eps0": [4.0, 8.0]}],
           "open": ["method"]}
    with pytest.raises(TableError, match="no row for n=1000, eps0=8.0"):
        read_table(out, "bounds_vs_n.piece", expect=two)


def test_every_collect_rule_checks_its_pieces_against_the_grid():
    rules = ROOT / "workflow" / "rules"
    found = 0
    for smk in sorted(rules.glob("*.smk")):
        for block in re.split(r"\nrule ", smk.read_text()):
            if '"../scripts/concat_tables.py"' not in block:
                continue
            found += 1
            kind = re.search(r'kind="([a-z_]+)"', block).group(1)
            assert f'expect=piece_grids("{kind}")' in block, (smk.name, kind)
    assert found == 7


# --- rows whose columns contradict each other (issue 30, second hostile pass) ---------------

@pytest.mark.parametrize("kind, column, value, row, fragments", [
    ("bounds_vs_n", "delta", "1", 0, ("column 'delta', line 2", "not a target delta in (0, 1)")),
    ("bounds_vs_n", "delta", "0", 0, ("not a target delta",)),
    ("bounds_vs_n", "n", "1_000", 0, ("column 'n', line 2", "underscores")),
    ("bounds_vs_n", "eps", "1_0", 0, ("column 'eps'", "underscores")),
    ("bounds_vs_n", "expected_clones", "nan", 0, ("is 'nan'",)),
    ("bounds_vs_n", "method", "not_a_bound", 0,
     ("column 'method', line 2", "neither a registered bound nor a reference")),
    ("bounds_vs_n", "kind", "upper", 0, ("column 'kind', line 2", "gdp is approximate")),
    ("bounds_vs_n", "status", "not_applicable", 0,
     ("column 'eps', line 2", "status 'not_applicable'")),
    ("bounds_vs_n", "eps", "5.0", 2, ("column 'eps', line 4", "above the local budget")),
    ("personalized_validity", "ratio_to_lower", "1e300", 1,
     ("column 'ratio_to_lower', line 3", "is not eps / lower_eps")),
    ("personalized_validity", "eps", "3.0", 1, ("column 'ratio_to_lower', line 3",)),
    ("mean_estimation", "mse_ci_low", "1.0", 0, ("column 'mse', line 2", "outside its interval")),
    ("mean_estimation", "mse", "1e300", 0, ("column 'mse', line 2", "outside its interval")),
    ("frequency_estimation", "bound_eps", "99", 0,
     ("column 'bound_eps', line 2", "above the target")),
    ("sgd", "accuracy", "2", 0, ("column 'accuracy'", "outside the column's range")),
    ("sgd", "accuracy", "-1", 0, ("column 'accuracy'",)),
    ("sgd", "accuracy", "inf", 0, ("column 'accuracy'", "not a finite number")),
    ("sgd", "rounds", "-5", 0, ("column 'rounds'",)),
    ("sgd", "lr", "-1", 0, ("column 'lr'",)),
    ("sgd", "clip", "0", 0, ("column 'clip'", "is not > 0")),
    ("sgd", "local_eps_scale", "-3", 0, ("column 'local_eps_scale'",)),
    ("sgd", "n_users", "-1", 0, ("column 'n_users'",)),
    ("sgd", "eps_achieved", "9.9", 0, ("column 'eps_achieved', line 2", "above the target")),
])
def test_a_row_contradicting_itself_fails_naming_line_and_column(kind, column, value, row,
                                                                 fragments, tmp_path):
    path = _write(tmp_path, _set_cell(VALID[kind], column, value, row=row))
    _fails(path, kind, *fragments, "to regenerate it")


@pytest.mark.parametrize("kind", ["mean_estimation", "sgd"])
def test_the_utility_and_sgd_tables_have_row_keys_too(kind, tmp_path):
    text = VALID[kind]
    lines = text.strip().splitlines()
    path = _write(tmp_path, "\n".join([*lines, lines[1]]) + "\n")
    _fails(path, kind, f"line {len(lines) + 1} repeats the row of line 2")


def test_a_users_new_bound_is_a_known_method(tmp_path):
    """A bound registered by a user's module is a valid method of the tables (the rule reads
    the registry, not a fixed list)."""
    gdp = get_bound("gdp")
    register_bound(Bound(info=BoundInfo(name="toy_rows", kind="upper", title="toy",
                                        citation="test", personalized=True,
                                        approx_ldp=False), delta_fn=gdp.delta_fn))
    try:
        text = _set_cell(_set_cell(VALID["bounds_vs_n"], "method", "toy_rows", row=0), "kind",
                         "upper", row=0)
        text = _set_cell(text, "eps", "1.0", row=0)
        assert len(read_table(_write(tmp_path, text), "bounds_vs_n")) == 3
    finally:
        unregister_bound("toy_rows")


def test_an_sgd_piece_holds_one_row_per_seed(tmp_path):
    path = _write(tmp_path, VALID["sgd"])
    grid = {"blocks": [{"target_eps": [2.0]}], "open": [], "repeat": 2}
    assert len(read_table(path, "sgd.piece", expect=grid)) == 2
    lines = VALID["sgd"].strip().splitlines()
    short = _write(tmp_path, "\n".join(lines[:-1]) + "\n", "short.csv")
    with pytest.raises(TableError, match=r"1 rows for target_eps=2.0, where its grid asks "
                                          r"for 2 \(one per seed"):
        read_table(short, "sgd.piece", expect=grid)
