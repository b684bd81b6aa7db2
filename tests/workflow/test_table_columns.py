"""Each table's columns are declared once, beside the code that writes its rows
(shuffledp.experiments.* for library rows, time_bounds.py for the runtime table), and the
workflow's table checks (workflow/scripts/table_schemas.py) read them from there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import table_schemas
import wfmanifest
from table_schemas import TABLES

from shuffledp.experiments import ESTIMATION_COLUMNS, PERSONALIZED_COLUMNS, VALIDITY_COLUMNS
from shuffledp.experiments._columns import CHOICE, NUMBER, Column, Columns, col
from shuffledp.experiments.estimation import ESTIMATION_TABLE
from shuffledp.experiments.grids import PERSONALIZED_TABLE
from shuffledp.experiments.validity import VALIDITY_TABLE

ROOT = Path(__file__).resolve().parents[2]


def test_table_kinds_are_the_manifest_experiments_and_their_pieces():
    names = [e.name for e in wfmanifest.EXPERIMENTS]
    assert list(TABLES) == names + [f"{e.name}.piece" for e in wfmanifest.EXPERIMENTS
                                    if e.pieces]
    assert "runtime.piece" not in TABLES  # one job writes the runtime table


@pytest.mark.parametrize("exp", wfmanifest.EXPERIMENTS, ids=lambda e: e.name)
def test_each_kind_reads_the_declaration_beside_its_writer(exp):
    decl = table_schemas.declared_columns(exp.columns)
    sch = TABLES[exp.name]
    assert sch.columns == decl.columns and sch.ok_requires == decl.ok_requires
    assert sch.declared_in == exp.columns.replace(":", ".")
    if exp.pieces:
        assert TABLES[f"{exp.name}.piece"].constant == exp.pieces


def test_the_workflow_declares_no_columns_of_its_own():
    text = (ROOT / "workflow" / "scripts" / "table_schemas.py").read_text()
    assert not re.search(r'\b(C|col|Column)\("', text)
    assert "_TABLES" not in text and "_UTILITY" not in text


def test_the_library_name_lists_come_from_the_declarations():
    assert ESTIMATION_COLUMNS == ESTIMATION_TABLE.names
    assert VALIDITY_COLUMNS == VALIDITY_TABLE.names
    # a personalized job writes these columns (in this order), all declared
    assert set(PERSONALIZED_COLUMNS) <= set(PERSONALIZED_TABLE.names)
    assert set(PERSONALIZED_TABLE.required) <= set(PERSONALIZED_COLUMNS)


def test_undeclared_column_names_its_declaration(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("method,kind,n,profile,delta,eps,seconds_min,seconds_median,repeats,seed,"
                    "status,reason,extra\ngdp,approximate,10,u,1e-06,1.0,0.1,0.1,1,1,ok,,x\n")
    with pytest.raises(table_schemas.TableError) as info:
        table_schemas.read_table(path, "runtime")
    assert ("unexpected column(s) 'extra'; new columns are declared in "
            "time_bounds.RUNTIME_TABLE (read by workflow/scripts/table_schemas.py)"
            in str(info.value))


def test_unknown_kind():
    with pytest.raises(ValueError, match="unknown table kind 'nope'; declared: bounds_vs_n, "):
        table_schemas.schema("nope")
    with pytest.raises(TypeError, match="is not a Columns declaration"):
        table_schemas.declared_columns("shuffledp.experiments.grids:PERSONALIZED_COLUMNS")


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: Column("x", "float"), "column 'x': unknown type 'float'"),
        (lambda: Column("x", CHOICE), "values go with \\(only\\) type 'choice'"),
        (lambda: col("x", NUMBER, values=["a"]), "values go with \\(only\\) type 'choice'"),
        (lambda: Columns((col("a", NUMBER), col("a", NUMBER))), "duplicate \\['a'\\]"),
        (lambda: Columns((col("a", NUMBER),), ok_requires=("b",)), "undeclared \\['b'\\]"),
    ],
)
def test_bad_declarations_are_rejected(make, match):
    with pytest.raises(ValueError, match=match):
        make()
