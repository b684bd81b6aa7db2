"""The API page of the randomizer families, generated from the package's files so that a new
family module is listed without an edit here (docs/adding_a_family.md).  ``conf.py`` writes
``families.rst`` with :func:`render` before Sphinx reads the sources; tests/test_api_docs.py
reads :func:`modules`."""

from __future__ import annotations

from pathlib import Path

FAMILIES = Path(__file__).resolve().parents[2] / "src" / "shuffledp" / "families"
#: The package's modules that define no family, listed first (the rest alphabetically).
INFRASTRUCTURE = ("base", "registry", "domination", "windows", "blanket")


def modules() -> list[str]:
    """``shuffledp.families`` and its modules: the infrastructure, then every family module."""
    names = sorted(p.stem for p in FAMILIES.glob("*.py") if not p.stem.startswith("_"))
    order = [n for n in INFRASTRUCTURE if n in names]
    order += [n for n in names if n not in INFRASTRUCTURE]
    return ["shuffledp.families"] + [f"shuffledp.families.{n}" for n in order]


def render() -> str:
    """The reStructuredText of the page."""
    out = ["Randomizer families", "===================", ""]
    for mod in modules():
        title = f"``{mod}``"
        out += [title, "-" * len(title), "", f".. automodule:: {mod}", ""]
    return "\n".join(out).rstrip() + "\n"
