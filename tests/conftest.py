from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
SCRIPTS = ROOT / "workflow" / "scripts"
# workflow scripts (thin adapters) and the shared test helpers (_oracle) are importable from
# every test folder (tests/<package>/ mirrors src/shuffledp/<package>/)
for path in (SCRIPTS, TESTS):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
