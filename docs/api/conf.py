"""Sphinx configuration of the API reference (built from the docstrings).

Build: ``python -m sphinx -W --keep-going -b html docs/api docs/api/_build`` (CI does, with
warnings as errors); open ``docs/api/_build/index.html``.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bounds_page import render as render_bounds  # noqa: E402
from _families_page import render  # noqa: E402

# the families page and the page of further bound modules are generated from the package's
# files (a new family or baseline needs no edit here)
(Path(__file__).resolve().parent / "families.rst").write_text(render())
(Path(__file__).resolve().parent / "bounds_more.rst").write_text(render_bounds())

project = "shuffledp"
author = "shuffledp developers"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.viewcode"]
autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_default_options = {"members": True, "ignore-module-all": True}
napoleon_numpy_docstring = True
napoleon_google_docstring = False
html_theme = "alabaster"
exclude_patterns = ["_build"]
