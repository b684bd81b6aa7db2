"""The documentation's own examples and tables: every ``shuffledp ...`` command line and every
Python block of the README and of the guides in docs/ runs as written; the README's table of
bounds is the output of ``shuffledp list --format markdown``; every Snakemake target the guides
name is a rule; every relative link resolves; docs/theory.md numbers its results once and lists
them all in its index."""

from __future__ import annotations

import re
import shlex
from collections import Counter
from pathlib import Path

import pytest

from shuffledp.cli import main

ROOT = Path(__file__).resolve().parents[1]
#: The pages whose examples are run (docs/adding_a_baseline.md holds a template, not an example;
#: docs/theory.md holds no command blocks).
GUIDES = ("README.md", "docs/cli.md", "docs/library.md", "docs/workflow.md", "docs/validity.md",
          "docs/deployment.md")
#: Every page whose links are checked.
PAGES = (*GUIDES, "docs/theory.md", "docs/adding_a_baseline.md")
SHELL = {"", "bash", "sh", "console"}


def _fences(text: str) -> list[tuple[str, str]]:
    """(info string, body) of every fenced code block, in order."""
    blocks: list[tuple[str, str]] = []
    info: str | None = None
    body: list[str] = []
    for line in text.splitlines():
        if line.startswith("```"):
            if info is None:
                info, body = line[3:].strip(), []
            else:
                blocks.append((info, "\n".join(body) + "\n"))
                info = None
        elif info is not None:
            body.append(line)
    assert info is None, "unclosed code block"
    return blocks


def _commands() -> list[tuple[str, str]]:
    out = []
    for page in GUIDES:
        for info, body in _fences((ROOT / page).read_text()):
            if info in SHELL:
                out += [(page, ln.strip()) for ln in body.splitlines()
                        if ln.strip().startswith("shuffledp ")]
    return out


def _python_blocks() -> list[tuple[str, int, str]]:
    out = []
    for page in GUIDES:
        blocks = [body for info, body in _fences((ROOT / page).read_text()) if info == "python"]
        out += [(page, i, body) for i, body in enumerate(blocks)]
    return out


COMMANDS = _commands()
PYTHON_BLOCKS = _python_blocks()


def test_the_guides_have_examples():
    pages = {page for page, _ in COMMANDS}
    assert {"README.md", "docs/cli.md"} <= pages, pages
    assert {"README.md", "docs/library.md"} <= {page for page, _, _ in PYTHON_BLOCKS}


@pytest.mark.parametrize(("page", "command"), COMMANDS,
                         ids=[f"{p}:{c[10:60]}" for p, c in COMMANDS])
def test_command_runs(page, command, monkeypatch, capsys):
    """Every example runs; ``shuffledp check`` examples end with a comment naming the verdict
    they show, and give it with its exit code (proven 0, refuted 4, undetermined 5)."""
    monkeypatch.chdir(ROOT)  # the examples name files as docs/...
    args = shlex.split(command.split("#")[0])[1:]
    code = main(args)
    captured = capsys.readouterr()
    want = 0
    if args[0] == "check":
        verdict = command.partition("#")[2].strip().split(":")[0].split(" ")[0]
        assert verdict in ("proven", "refuted", "undetermined"), (page, command)
        want = {"proven": 0, "refuted": 4, "undetermined": 5}[verdict]
        assert f": {verdict} (" in captured.out, (page, command, captured.out)
    assert code == want, (page, command, captured.err)
    assert captured.out.strip(), (page, command)


@pytest.mark.parametrize(("page", "index", "block"), PYTHON_BLOCKS,
                         ids=[f"{p}:python{i}" for p, i, _ in PYTHON_BLOCKS])
def test_python_block_runs(page, index, block, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    exec(compile(block, f"{page} python block {index}", "exec"), {})  # noqa: S102


def _readme_bounds_table() -> str:
    lines = (ROOT / "README.md").read_text().splitlines()
    header = "| bound | kind | personalized | local delta | covers | source |"
    assert lines.count(header) == 1, "the README holds the table of bounds once"
    start = lines.index(header)
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "\n".join(lines[start:end])


def test_readme_bounds_table_is_the_list_command(capsys):
    """The README's table of bounds is ``shuffledp list --format markdown`` (after a change to
    a shipped bound, paste the command's output into the README).  A bound a user adds
    (tests/_shipped.py) may be left out of it: its row is printed by ``shuffledp list``."""
    from _shipped import SHIPPED_BOUNDS

    assert main(["list", "--format", "markdown"]) == 0
    lines = capsys.readouterr().out.rstrip("\n").splitlines()
    shipped = {f"`{name}`" for name in SHIPPED_BOUNDS}
    expected = lines[:2] + [ln for ln in lines[2:] if ln.split(" | ")[0].strip("| ") in shipped]
    assert len(expected) == len(SHIPPED_BOUNDS) + 2
    assert _readme_bounds_table() == "\n".join(expected)


def _rules() -> set[str]:
    files = [ROOT / "Snakefile", *sorted((ROOT / "workflow").rglob("*.smk"))]
    return {m for f in files for m in re.findall(r"^rule (\w+)\s*:", f.read_text(), flags=re.M)}


def test_snakemake_targets_named_in_the_guides_are_rules():
    rules = _rules()
    named = Counter()
    for page in GUIDES:
        text = (ROOT / page).read_text()
        for target in re.findall(r"snakemake --cores [^\s`]+\s+([a-z_]+)\b", text):
            named[target] += 1
    assert {"bounds_vs_n", "sgd", "gallery"} <= set(named), named
    assert set(named) - rules == set(), sorted(set(named) - rules)


def _slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    headings = re.findall(r"^#+ (.+)$", page.read_text(), flags=re.M)
    return {_slug(h) for h in headings}


@pytest.mark.parametrize("page", PAGES)
def test_relative_links_resolve(page):
    path = ROOT / page
    text = path.read_text()
    for code in re.findall(r"```.*?```", text, flags=re.S):
        text = text.replace(code, "")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        assert dest.exists(), (page, target)
        if anchor and dest.suffix == ".md":
            assert anchor in _anchors(dest), (page, target)


def _text_files() -> list[Path]:
    """The repository's hand-written text: pages, sources, tests, workflow, config."""
    out = [ROOT / "README.md", ROOT / "Snakefile"]
    for top, pattern in (("docs", "*.md"), ("src", "*.py"), ("tests", "*.py"),
                         ("workflow", "*"), ("config", "*.yaml"), ("benchmarks", "*.py")):
        out += [f for f in sorted((ROOT / top).rglob(pattern))
                if f.is_file() and f.suffix in {".md", ".py", ".smk", ".rst", ".yaml", ".yml"}
                and "_build" not in f.parts]
    return out


def test_no_control_characters_in_the_text():
    """No control character but newline in the repository's text: an unescaped backslash
    written through a Python string turns ``\\varepsilon`` or ``\\text`` into a vertical tab or
    a tab (docs/theory.md had seven), which the pages then render wrongly."""
    files = _text_files()
    assert len(files) > 50
    bad = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")
    found = [(str(f.relative_to(ROOT)), i + 1) for f in files
             for i, line in enumerate(f.read_text().splitlines()) if bad.search(line)]
    assert not found, found[:10]


# --- docs/theory.md: one numbering, every result in the index --------------------------------

THEORY = ROOT / "docs" / "theory.md"
_RESULT = re.compile(r"^\*\*(Theorem|Lemma) (\d+)\b", flags=re.M)


def test_theory_numbers_its_results_once_in_order():
    numbered = [(kind, int(n)) for kind, n in _RESULT.findall(THEORY.read_text())]
    for kind in ("Theorem", "Lemma"):
        seq = [n for k, n in numbered if k == kind]
        assert seq == list(range(1, len(seq) + 1)), (kind, seq)
    assert len(numbered) >= 15


def test_theory_index_lists_every_numbered_result():
    text = THEORY.read_text()
    index = text.split("\n## 1. ", 1)[0]
    for kind, n in _RESULT.findall(text):
        assert re.search(rf"^\| {kind} {n}\b", index, flags=re.M), f"{kind} {n} not in the index"
