"""Bound experiments: grids of central eps evaluations (experiments 1, 2 and 3).

Every cell is evaluated with :func:`shuffledp.compare.compare_bounds`, so a rigorous upper
bound below the exact lower bound of a randomizer it covers fails the run
(:class:`~shuffledp.compare.InconsistentBoundsError`) instead of becoming a row, and
``below_lower`` of an approximation is the library's own check (None when not checked and for
the other kinds).  A bound that does not apply gives a row with ``status = not_applicable``
and its :class:`~shuffledp.errors.ParameterRegimeError` message as ``reason``.

* :func:`bounds_vs_n_rows`: identical users at one eps0, every n (deterministic, no seed);
* :func:`gdp_validity_rows`: the paper's eps against the exact lower bound ``rr_exact`` over
  (n, eps0), ``ratio_to_lower`` = eps / the ``rr_exact`` eps of the cell (deterministic);
* :func:`personalized_rows`: personalized profiles vs n and local delta0, users drawn by
  :func:`shuffledp.experiments.sweeps.draw_budgets` (stream ``("budgets", profile, n)``: the
  same users for every delta0 and method, and in every experiment naming the profile).

Progress: each function calls ``progress(done, total)`` with ``(0, total)`` first and after
each cell (one n; one (n, eps0); one (profile, n, delta0)).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

from shuffledp.budgets import BudgetProfile
from shuffledp.compare import Evaluation, compare_bounds
from shuffledp.experiments._columns import (
    BOOLEAN,
    BOUND_KINDS,
    CHOICE,
    IDENTIFIER,
    INTEGER,
    NUMBER,
    STATUS,
    STRING,
    Columns,
    col,
)
from shuffledp.experiments.estimation import Progress, check_progress
from shuffledp.experiments.seeding import check_seed
from shuffledp.experiments.sweeps import as_list, draw_budgets, profile_list
from shuffledp.validation import check_int, check_real, check_target_delta

__all__ = ["evaluation_rows", "bounds_vs_n_rows", "gdp_validity_rows", "personalized_rows",
           "PERSONALIZED_COLUMNS", "GDP_VALIDITY_METHODS"]

log = logging.getLogger(__name__)

#: Columns of the personalized table, in order.
PERSONALIZED_COLUMNS = ["profile", "n", "delta0", "delta", "method", "kind", "eps", "seconds",
                        "seed", "status", "reason", "vacuous", "below_lower"]
#: Default methods of the gdp_validity grid (``rr_exact`` is always evaluated: the reference).
GDP_VALIDITY_METHODS = ("gdp", "rr_exact", "clones")
_LOWER = "rr_exact"
_DIAGNOSTICS = ("expected_clones", "clt_ok", "reduced_to_identical")

# The tables of the bound grids, as the workflow validates them (shuffledp.experiments._columns).
# Result columns of every bound evaluation (evaluation_rows): eps and seconds are empty when
# the bound does not apply (status not_applicable, with the reason).
_BOUND_RESULT = (
    col("method", IDENTIFIER),
    col("kind", CHOICE, values=BOUND_KINDS),
    col("eps", NUMBER, nullable=True),
    col("seconds", NUMBER, nullable=True),
)
# Diagnostics of evaluation_rows: written only when some row has them (optional), empty on
# the rows without them (nullable).  below_lower: empty when not checked; vacuous: the bound
# certifies no amplification.
_BOUND_DIAGNOSTICS = (
    col("expected_clones", NUMBER, nullable=True, optional=True),
    col("clt_ok", BOOLEAN, nullable=True, optional=True),
    col("reduced_to_identical", BOOLEAN, nullable=True, optional=True),
    col("below_lower", BOOLEAN, nullable=True, optional=True),
    col("vacuous", BOOLEAN, nullable=True, optional=True),
)
#: Columns of the bounds_vs_n table (:func:`bounds_vs_n_rows`).
BOUNDS_VS_N_TABLE = Columns(
    (
        col("n", INTEGER),
        col("eps0", NUMBER),
        col("delta", NUMBER),
        *_BOUND_RESULT,
        col("status", CHOICE, values=STATUS),
        col("reason", STRING, nullable=True),
        *_BOUND_DIAGNOSTICS,
    ),
    ok_requires=("eps", "seconds"),
    keys=("n", "eps0", "method"),
)
#: Columns of the gdp_validity table (:func:`gdp_validity_rows`).
GDP_VALIDITY_TABLE = Columns(
    (
        col("n", INTEGER),
        col("eps0", NUMBER),
        col("delta", NUMBER),
        *_BOUND_RESULT,
        col("status", CHOICE, values=STATUS),
        col("reason", STRING, nullable=True),
        col("expected_clones", NUMBER, nullable=True, optional=True),
        col("clt_ok", BOOLEAN, nullable=True, optional=True),
        # eps / the rr_exact eps of the cell; empty when either is not applicable
        col("ratio_to_lower", NUMBER, nullable=True),
        col("below_lower", BOOLEAN, nullable=True),
        col("reduced_to_identical", BOOLEAN, nullable=True, optional=True),
        col("vacuous", BOOLEAN, nullable=True, optional=True),
    ),
    ok_requires=("eps", "seconds"),
    keys=("n", "eps0", "method"),
)
#: Columns of the personalized table (:func:`personalized_rows`; a job writes the
#: :data:`PERSONALIZED_COLUMNS` of them, in that order).
PERSONALIZED_TABLE = Columns(
    (
        col("profile", STRING),
        col("n", INTEGER),
        col("delta0", NUMBER),
        col("delta", NUMBER),
        *_BOUND_RESULT,
        col("seed", INTEGER),
        col("status", CHOICE, values=STATUS),
        col("reason", STRING, nullable=True),
        *_BOUND_DIAGNOSTICS,
    ),
    ok_requires=("eps", "seconds"),
    keys=("profile", "n", "delta0", "method"),
)


def evaluation_rows(evals: Sequence[Evaluation], *, missing: Any = None,
                    diagnostics: Sequence[str] = _DIAGNOSTICS, **keys: Any) -> list[dict]:
    """Tidy rows of :func:`shuffledp.compare.compare_bounds` output: ``keys``, method, kind,
    eps, seconds, status, reason, vacuous, the listed ``diagnostics`` when the result has
    them, and below_lower.  ``missing`` fills eps and seconds of a bound that does not apply."""
    rows = []
    for e in evals:
        row = {**keys, "method": e.method, "kind": e.kind}
        if e.result is None:
            row.update(eps=missing, seconds=missing, status="not_applicable", reason=e.reason,
                       vacuous=None)
        else:
            r = e.result
            row.update(eps=r.eps, seconds=r.seconds, status="ok", reason="", vacuous=r.vacuous)
            row.update({k: r.diagnostics[k] for k in diagnostics if k in r.diagnostics})
        row["below_lower"] = e.below_lower
        rows.append(row)
    return rows


def _summary(rows: Sequence[dict]) -> str:
    return ", ".join(f"{r['method']}={r['eps']:.4g}" if r["status"] == "ok"
                     else f"{r['method']}=n/a" for r in rows)


def _start(progress: object, total: int) -> Progress | None:
    progress = check_progress(progress)
    if progress:
        progress(0, total)
    return progress


def bounds_vs_n_rows(*, n: Sequence[int], eps0: float, delta: float,
                     methods: Sequence[str] | None = None,
                     progress: Progress | None = None) -> list[dict]:
    """Rows of every method at identical local ``eps0`` for each number of users in ``n``."""
    ns = [check_int(k, f"n[{i}]", low=2) for i, k in enumerate(as_list(n, "n"))]
    eps0 = check_real(eps0, "eps0", low=0.0)
    delta = check_target_delta(delta)
    progress = _start(progress, len(ns))
    rows: list[dict] = []
    for i, k in enumerate(ns):
        evals = compare_bounds(BudgetProfile.identical(n=k, eps0=eps0), delta=delta,
                               methods=None if methods is None else list(methods))
        new = evaluation_rows(evals, n=k, eps0=eps0, delta=delta)
        rows += new
        log.info("n=%d eps0=%g: %s", k, eps0, _summary(new))
        if progress:
            progress(i + 1, len(ns))
    return rows


def gdp_validity_rows(*, n: Sequence[int], eps0: Sequence[float], delta: float,
                      methods: Sequence[str] | None = None,
                      progress: Progress | None = None) -> list[dict]:
    """Rows of each (n, eps0) cell (n outer), with ``ratio_to_lower``; ``rr_exact`` is always
    evaluated and reported (default methods: :data:`GDP_VALIDITY_METHODS`)."""
    ns = [check_int(k, f"n[{i}]", low=2) for i, k in enumerate(as_list(n, "n"))]
    es = [check_real(e, f"eps0[{i}]", low=0.0) for i, e in enumerate(as_list(eps0, "eps0"))]
    delta = check_target_delta(delta)
    wanted = list(methods or GDP_VALIDITY_METHODS)
    names = list(dict.fromkeys([*wanted, _LOWER]))
    total, done = len(ns) * len(es), 0
    progress = _start(progress, total)
    rows: list[dict] = []
    for k in ns:
        for e0 in es:
            evals = compare_bounds(BudgetProfile.identical(n=k, eps0=e0), delta=delta,
                                   methods=names)
            cell = evaluation_rows(evals, missing=math.nan, diagnostics=("expected_clones",
                                                                         "clt_ok"),
                                   n=k, eps0=e0, delta=delta)
            lower = next(r["eps"] for r in cell if r["method"] == _LOWER)
            for r in cell:
                ok = r["status"] == "ok" and math.isfinite(lower) and lower > 0
                r["ratio_to_lower"] = r["eps"] / lower if ok else math.nan
            cell = [r for r in cell if r["method"] in wanted or r["method"] == _LOWER]
            rows += cell
            done += 1
            log.info("n=%d eps0=%g: %s", k, e0, _summary(cell))
            if progress:
                progress(done, total)
    return rows


def personalized_rows(*, profiles: Sequence[str], specs: Mapping[str, Mapping],
                      n: Sequence[int], delta: float, delta0: Sequence[float],
                      methods: Sequence[str] | None, seed: int,
                      progress: Progress | None = None) -> list[dict]:
    """Rows of every method for each (profile, n, delta0) (in that nesting), users drawn from
    the ``budgets`` stream of ``seed``; the columns of :data:`PERSONALIZED_COLUMNS`
    (``vacuous``: the bound is max eps_i, no amplification; ``below_lower``: an approximation
    below the profile's exact lower bound)."""
    plist = profile_list(profiles, specs)
    ns = [check_int(k, f"n[{i}]", low=2) for i, k in enumerate(as_list(n, "n"))]
    d0s = [check_real(d, f"delta0[{i}]", low=0.0, high=1.0, high_open=True)
           for i, d in enumerate(as_list(delta0, "delta0"))]
    delta = check_target_delta(delta)
    seed = check_seed(seed)
    total, done = len(plist) * len(ns) * len(d0s), 0
    progress = _start(progress, total)
    rows: list[dict] = []
    for name, spec in plist:
        for k in ns:
            for d0 in d0s:
                profile = draw_budgets(name, spec, n=k, seed=seed, delta0=d0)
                evals = compare_bounds(profile, delta=delta,
                                       methods=None if methods is None else list(methods))
                new = evaluation_rows(evals, diagnostics=(), profile=name, n=k, delta0=d0,
                                      delta=delta, seed=seed)
                rows += new
                done += 1
                log.info("%s n=%d delta0=%g: %s", name, k, d0, _summary(new))
                if progress:
                    progress(done, total)
    return rows
