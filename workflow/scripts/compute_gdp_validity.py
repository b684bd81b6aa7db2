"""Experiment 3 (table): the paper's GDP eps against the exact lower bound over (n, eps0).

One row per (n, eps0, method) with identical local budgets eps0 (pure LDP) and the target
``delta``: ``method``, ``kind``, ``eps`` (NaN when the bound does not apply), ``seconds``,
``status`` ("ok" / "not_applicable") and ``reason``, ``ratio_to_lower`` = eps / the
``rr_exact`` eps of the same cell (the gdp row's value is "paper eps / exact lower bound"),
and ``below_lower`` (approximations: True when the claimed eps is smaller than what shuffled
binary randomized response provably has; empty for the other kinds, and a rigorous bound below
it fails the job).  ``vacuous``: the value carries no information.  Deterministic: no random
draw, no seed.

Snakemake interface: ``output.table``; ``params.n`` (list of int), ``params.eps0`` (list of
float), ``params.delta`` (float), optional ``params.methods`` (default gdp, rr_exact, clones).
"""


import math
import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import get_logger, snakemake_kwargs, write_table

from shuffledp import BudgetProfile
from shuffledp.compare import compare_bounds

DEFAULT_METHODS = ("gdp", "rr_exact", "clones")
LOWER = "rr_exact"


def cell_rows(n: int, eps0: float, delta: float, methods) -> list[dict]:
    """Rows of one (n, eps0) cell; ``rr_exact`` is always evaluated (it is the reference).

    Evaluated with :func:`shuffledp.compare.compare_bounds`, so a rigorous upper bound below
    the exact lower bound fails the job (``InconsistentBoundsError``) instead of becoming a row,
    and ``below_lower`` of an approximation is the library's own check (None for the others).
    """
    profile = BudgetProfile.identical(n=int(n), eps0=float(eps0))
    names = list(dict.fromkeys([*methods, LOWER]))
    rows = []
    for e in compare_bounds(profile, delta=float(delta), methods=names):
        row = {"n": int(n), "eps0": float(eps0), "delta": float(delta), "method": e.method,
               "kind": e.kind}
        if e.result is None:
            row.update(eps=math.nan, seconds=math.nan, status="not_applicable",
                       reason=e.reason, vacuous=None)
        else:
            res = e.result
            row.update(eps=res.eps, seconds=res.seconds, status="ok", reason="",
                       vacuous=res.vacuous)
            for key in ("expected_clones", "clt_ok"):
                if key in res.diagnostics:
                    row[key] = res.diagnostics[key]
        row["below_lower"] = e.below_lower
        rows.append(row)
    lower = next(r["eps"] for r in rows if r["method"] == LOWER)
    for r in rows:
        ok = r["status"] == "ok" and math.isfinite(lower) and lower > 0
        r["ratio_to_lower"] = r["eps"] / lower if ok else math.nan
    return [r for r in rows if r["method"] in methods or r["method"] == LOWER]


def main(*, inputs, outputs, params, log=None):
    import pandas as pd

    logger = get_logger(log)
    delta = float(params["delta"])
    methods = list(params.get("methods") or DEFAULT_METHODS)
    rows = []
    for n in params["n"]:
        for eps0 in params["eps0"]:
            cell = cell_rows(int(n), float(eps0), delta, methods)
            rows += cell
            logger.info(
                "n=%d eps0=%g: %s", n, eps0,
                ", ".join(f"{r['method']}={r['eps']:.4g}" for r in cell),
            )
    write_table(pd.DataFrame(rows), outputs["table"])


if "snakemake" in globals():
    main(**snakemake_kwargs(snakemake))  # noqa: F821
