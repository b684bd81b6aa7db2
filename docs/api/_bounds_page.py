"""The API page of the bound modules not yet on the curated ``bounds.rst``: generated from the
package's files, so that a new baseline (one module and one import line,
docs/adding_a_baseline.md) is in the API reference without an edit here.  ``conf.py`` writes
``bounds_more.rst`` with :func:`render` before Sphinx reads the sources;
tests/test_api_docs.py reads :func:`modules`."""

from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
BOUNDS = HERE.parents[1] / "src" / "shuffledp" / "bounds"


def _module_names() -> list[str]:
    out = []
    for p in sorted(BOUNDS.rglob("*.py")):
        parts = p.relative_to(BOUNDS).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if any(part.startswith("_") for part in parts):
            continue
        out.append(".".join(("shuffledp", "bounds", *parts)))
    return out


def modules() -> list[str]:
    """The public modules of ``shuffledp.bounds`` that ``bounds.rst`` does not document."""
    curated = set(re.findall(r"^\.\. automodule:: (\S+)$", (HERE / "bounds.rst").read_text(),
                             flags=re.M))
    return [m for m in _module_names() if m not in curated]


def render() -> str:
    """The reStructuredText of the page."""
    out = ["Further bound modules", "=====================", "",
           "Bound modules added since the page *Bounds* was last curated (generated from the "
           "package's files).", ""]
    mods = modules()
    if not mods:
        out += ["None: every bound module is on the page *Bounds*.", ""]
    for mod in mods:
        title = f"``{mod}``"
        out += [title, "-" * len(title), "", f".. automodule:: {mod}", ""]
    return "\n".join(out).rstrip() + "\n"
