"""The package's layout rules, checked on the source: imports go one way (no circle, also
through imports inside functions), no module grows past 700 lines, and no code outside
``shuffledp.families`` branches on a randomizer family's name (bounds ask the family object).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "shuffledp"
MAX_LINES = 700


def _modules() -> dict[str, Path]:
    out = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def import_graph() -> dict[str, set[str]]:
    """module -> the package modules it imports anywhere in its text (module level, inside
    functions, and ``lazy_module("shuffledp....")``); ``from pkg import name`` counts as an
    import of ``pkg.name`` when that is a module, else of ``pkg``."""
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                           for a in node.names]
            elif (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "lazy_module"
                  and node.args and isinstance(node.args[0], ast.Constant)):
                targets = [str(node.args[0].value)]
            for t in targets:
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != mod and t.startswith("shuffledp"):
                    graph[mod].add(t)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle_in_the_package():
    graph = import_graph()
    assert len(graph) > 40 and "shuffledp.families.base" in graph
    assert graph["shuffledp.bounds.clones.bound"] >= {"shuffledp.bounds.clones.aware"}
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_circle():
    # the check above could not fail if the finder missed circles
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_limits_imports_nothing_and_the_library_never_imports_workflow_code():
    graph = import_graph()
    assert graph["shuffledp.limits"] == set()
    for path in SRC.rglob("*.py"):
        text = path.read_text()
        assert not re.search(r"^\s*(from|import) (workflow|wfutils|figstyle)\b", text, re.M), path


@pytest.mark.parametrize("path", sorted(SRC.rglob("*.py")), ids=lambda p: str(p.relative_to(SRC)))
def test_no_module_over_700_lines(path):
    assert len(path.read_text().splitlines()) <= MAX_LINES


#: A branch on a family's name: ``x.family == "..."``, ``fam.family in (...)``, ``family !=``,
#: ``family in ("laplace", ...)``.
_NAME_BRANCH = re.compile(
    r"\.family\s*(==|!=|not\s+in\b|in\b)"
    r"|\bfamily\s*(==|!=)"
    r"|\bfamily\s+(not\s+)?in\s*[\(\[\{\"']"
)


def test_no_branch_on_a_family_name_outside_families():
    offenders = []
    for path in SRC.rglob("*.py"):
        if "families" in path.relative_to(SRC).parts:
            continue
        for no, line in enumerate(path.read_text().splitlines(), start=1):
            code = line.split("#")[0]
            if _NAME_BRANCH.search(code) and not code.strip().startswith(('"', "'", ">>>")):
                offenders.append(f"{path.relative_to(SRC)}:{no}: {line.strip()}")
    assert offenders == []


def test_the_branch_pattern_sees_name_branches():
    for bad in ('if fam.family == "gaussian":', "ok = r.family in CUT_FAMILIES",
                'if family == "laplace":', 'if family in ("krr", "oue"):',
                "if grp.family.family not in CUT_FAMILIES:"):
        assert _NAME_BRANCH.search(bad), bad
    for fine in ("for family in families:", "fam = get_family(spec)", "if family.cuts_tails:"):
        assert not _NAME_BRANCH.search(fine), fine
