"""The API reference (docs/api, Sphinx, built by CI with warnings as errors) lists every
public module of the package, so a new module cannot be left out of it."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs" / "api"
SRC = Path(__file__).resolve().parents[1] / "src"


def _documented() -> set[str]:
    import sys

    sys.path.insert(0, str(DOCS))
    from _bounds_page import modules as more_bounds  # the generated pages (docs/api/conf.py)
    from _families_page import modules

    names: set[str] = set(modules()) | set(more_bounds())
    for rst in DOCS.glob("*.rst"):
        if rst.name in ("families.rst", "bounds_more.rst"):  # generated at build time
            continue
        names |= set(re.findall(r"^\.\. automodule:: (\S+)$", rst.read_text(), flags=re.M))
    return names


def test_every_public_module_is_in_the_api_reference():
    # the package's modules from its files (importing them would need every optional extra)
    modules = {".".join(p.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
               for p in (SRC / "shuffledp").rglob("*.py")}
    public = {m for m in modules if not any(part.startswith("_") for part in m.split("."))}
    documented = _documented()
    assert public - documented == set(), sorted(public - documented)
    assert documented - public == set(), sorted(documented - public)


def test_the_index_links_every_page():
    index = (DOCS / "index.rst").read_text()
    pages = ({p.stem for p in DOCS.glob("*.rst")} | {"families", "bounds_more"}) - {"index"}
    assert pages and all(re.search(rf"^   {p}$", index, flags=re.M) for p in pages)
