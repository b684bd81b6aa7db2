"""Personalized validity study: every bound against the best certified lower bound of the
randomizer the users actually run (experiment 8, ``personalized_validity``).

For each budget profile, randomizer and n (users drawn from the ``("budgets", profile, n)``
stream of the master seed, as in every experiment naming the profile), every registered bound
is evaluated at the target delta in each of its *variants*:

* a bound with a ``mechanism`` option is evaluated with the randomizer's spec (its
  mechanism-aware form; ``window_lower``: the windowed statistic of that randomizer);
* ``clones`` also in its two generic forms (``clone = standard`` and ``stronger``), which are
  guarantees only where the randomizer dominates their clone masses;
* every other bound with its defaults.

Each row says whether the variant *covers* the randomizer on the profile
(:meth:`shuffledp.bounds.base.Bound.covers`: a guarantee for an upper bound, a valid lower bound
for a lower bound; approximations cover nothing).  ``lower_eps`` is the best certified lower
bound of the cell, the largest eps among the covering lower-bound rows (``window_lower``,
and ``rr_exact`` for binary RR and one-bit Duchi), and ``ratio_to_lower`` = eps / lower_eps.
``upper_eps`` is the cell's best covering rigorous upper bound (the smallest eps among the
covering upper-bound rows; ``upper_method`` names it with its variant) and ``upper_to_lower`` =
upper_eps / lower_eps: how far the truth can still be from what is proven.
``below_lower`` marks a value below it: for an approximation, a claim of less privacy loss than
the shuffled randomizer really has (the paper's ``gdp`` is *invalid* there); for a rigorous
upper bound that covers the randomizer, a soundness failure, which raises
:class:`~shuffledp.compare.InconsistentBoundsError` (the job fails loudly, no table is
written).  A rigorous bound evaluated where it does *not* cover the randomizer may fall below
it; the row then says so (``covered`` False) and nothing fails.

The Gaussian randomizer needs local delta_i > 0: its cells give every user
``gaussian_delta0``; the other randomizers are pure (delta_i = 0).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

from shuffledp.bounds import get_bound, list_bounds
from shuffledp.compare import InconsistentBoundsError
from shuffledp.errors import ParameterRegimeError, short_repr
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
from shuffledp.experiments.sweeps import as_list, check_names, draw_budgets, profile_list
from shuffledp.families import get_family
from shuffledp.validation import check_int, check_real, check_target_delta

__all__ = ["VALIDITY_COLUMNS", "validity_rows", "bound_variants", "randomizer_tag",
           "check_randomizers", "RTOL"]

log = logging.getLogger(__name__)

#: Columns of the personalized validity table, in order, with their types (the workflow
#: validates the table against them).
VALIDITY_TABLE = Columns(
    (
        col("profile", STRING),
        col("randomizer", STRING),
        col("n", INTEGER),
        col("delta", NUMBER),
        col("delta0", NUMBER),
        col("method", IDENTIFIER),
        col("variant", STRING, nullable=True),  # empty: the bound's defaults
        col("kind", CHOICE, values=BOUND_KINDS),
        col("covered", BOOLEAN),
        col("eps", NUMBER, nullable=True),
        # the best certified lower bound of the cell (empty when none applies)
        col("lower_eps", NUMBER, nullable=True),
        col("lower_method", STRING, nullable=True),
        col("ratio_to_lower", NUMBER, nullable=True),
        col("below_lower", BOOLEAN, nullable=True),
        col("status", CHOICE, values=STATUS),
        col("reason", STRING, nullable=True),
        col("coverage", STRING, nullable=True),
        col("seconds", NUMBER, nullable=True),
        col("seed", INTEGER),
        # the best covering rigorous upper bound of the cell and its ratio to lower_eps (the
        # gap between what is proven and what is certainly leaked; empty when either is
        # missing); optional: tables written before these columns
        col("upper_eps", NUMBER, nullable=True, optional=True),
        col("upper_method", STRING, nullable=True, optional=True),
        col("upper_to_lower", NUMBER, nullable=True, optional=True),
    ),
    ok_requires=("eps", "seconds"),
    keys=("profile", "randomizer", "n", "method", "variant"),
)
#: Names of the :data:`VALIDITY_TABLE` columns, in order.
VALIDITY_COLUMNS = VALIDITY_TABLE.names
#: Relative tolerance of "below the lower bound" (both are rounded to their safe sides).
RTOL = 1e-6


def randomizer_tag(spec: str) -> str:
    """A file-name-safe form of a randomizer spec (``krr:10`` -> ``krr-10``).

    >>> randomizer_tag("krr:10")
    'krr-10'
    """
    return get_family(spec).spec.replace(":", "-")


def bound_variants(method: str, randomizer: str) -> list[tuple[str, dict[str, Any]]]:
    """``[(variant label, options)]`` of ``method`` for ``randomizer`` (module docstring).

    >>> [v for v, _ in bound_variants("clones", "laplace")]
    ['mechanism=laplace', 'clone=standard', 'clone=stronger']
    >>> bound_variants("gdp", "laplace")
    [('', {})]
    """
    accepted = get_bound(method).info.options
    spec = get_family(randomizer).spec
    out: list[tuple[str, dict[str, Any]]] = []
    if "mechanism" in accepted:
        out.append((f"mechanism={spec}", {"mechanism": spec}))
    if "clone" in accepted:
        out += [(f"clone={c}", {"clone": c}) for c in ("standard", "stronger")]
    return out or [("", {})]


def _evaluate(method: str, options: dict, profile, delta: float, spec: str) -> dict:
    bound = get_bound(method)
    row: dict[str, Any] = {"kind": bound.info.kind}
    try:
        cov = bound.covers(randomizer=spec, profile=profile, **options)
        row["covered"] = bool(cov.covered) if bound.info.kind != "approximate" else False
        row["coverage"] = cov.reason
        res = bound.evaluate(profile=profile, delta=delta, **options)
    except (ParameterRegimeError, ValueError) as err:
        row.update(eps=math.nan, seconds=math.nan, status="not_applicable",
                   reason=" ".join(str(err).split()))
        row.setdefault("covered", False)
        row.setdefault("coverage", "")
        return row
    row.update(eps=float(res.eps), seconds=float(res.seconds), status="ok", reason="")
    return row


def validity_rows(*, profiles: Sequence[str], specs: Mapping[str, Mapping],
                  randomizers: Sequence[str], n: Sequence[int], delta: float,
                  gaussian_delta0: float, seed: int, methods: Sequence[str] | None = None,
                  progress: Progress | None = None) -> list[dict]:
    """Rows of :data:`VALIDITY_COLUMNS` for every (profile, randomizer, n) cell, in that
    nesting; raises :class:`~shuffledp.compare.InconsistentBoundsError` when a rigorous upper
    bound that covers the randomizer is below the cell's certified lower bound."""
    plist = profile_list(profiles, specs)
    specs_r = check_randomizers(randomizers)
    ns = [check_int(k, f"n[{i}]", low=2) for i, k in enumerate(as_list(n, "n"))]
    delta = check_target_delta(delta)
    gd0 = check_real(gaussian_delta0, "gaussian_delta0", low=0.0, high=1.0, low_open=True,
                     high_open=True)
    seed = check_seed(seed)
    names = list_bounds() if methods is None else check_names(methods, "methods",
                                                                list_bounds())
    total, done = len(plist) * len(specs_r) * len(ns), 0
    progress = check_progress(progress)
    if progress:
        progress(0, total)
    rows: list[dict] = []
    for pname, spec in plist:
        for r in specs_r:
            d0 = gd0 if get_family(r).needs_delta else 0.0
            for k in ns:
                profile = draw_budgets(pname, spec, n=k, seed=seed, delta0=d0)
                cell = []
                for m in names:
                    for variant, opts in bound_variants(m, r):
                        row = {"profile": pname, "randomizer": r, "n": k, "delta": delta,
                               "delta0": d0, "method": m, "variant": variant, "seed": seed}
                        row.update(_evaluate(m, opts, profile, delta, r))
                        cell.append(row)
                lowers = [x for x in cell if x["kind"] == "lower" and x["covered"]
                          and x["status"] == "ok"]
                best = max(lowers, key=lambda x: x["eps"]) if lowers else None
                lo = best["eps"] if best else math.nan
                uppers = [x for x in cell if x["kind"] == "upper" and x["covered"]
                          and x["status"] == "ok"]
                top = min(uppers, key=lambda x: x["eps"]) if uppers else None
                up = top["eps"] if top else math.nan
                up_name = (f"{top['method']} ({top['variant']})" if top and top["variant"]
                           else top["method"] if top else "")
                gap = up / lo if top is not None and best is not None and lo > 0 else math.nan
                for x in cell:
                    x["lower_eps"] = lo
                    x["lower_method"] = best["method"] if best else ""
                    x["upper_eps"] = up
                    x["upper_method"] = up_name
                    x["upper_to_lower"] = gap
                    ok = x["status"] == "ok" and best is not None and lo > 0
                    x["ratio_to_lower"] = x["eps"] / lo if ok else math.nan
                    below = ok and x["eps"] < lo * (1.0 - RTOL) - 1e-12
                    x["below_lower"] = bool(below) if ok else None
                    if below and x["kind"] == "upper" and x["covered"]:
                        raise InconsistentBoundsError(
                            f"soundness failure: the rigorous upper bound {x['method']} "
                            f"({x['variant'] or 'defaults'}) gives eps = {x['eps']:.9g} for "
                            f"{r} on profile {pname} (n = {k}), below the certified lower "
                            f"bound {best['method']} eps = {lo:.9g}; please report it"
                        )
                rows += cell
                done += 1
                bad = [x["method"] for x in cell if x["kind"] == "approximate"
                       and x["below_lower"]]
                log.info("%s %s n=%d: lower %.4g (%s), best covering upper %.4g (%s), ratio "
                         "%.3f; approximations below the lower bound: %s", pname, r, k, lo,
                         best["method"] if best else "-", up, up_name or "-", gap,
                         ", ".join(bad) or "none")
                if progress:
                    progress(done, total)
    return rows


def check_randomizers(values: object) -> list[str]:
    """Randomizer specs for the study, each with a certified lower bound
    (``window_lower``'s families); ``ValueError`` naming the first bad one.

    >>> check_randomizers(["laplace", "KRR:10"])
    ['laplace', 'krr:10']
    >>> check_randomizers(["olh:10"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: randomizers[0] = 'olh:10': no certified lower bound (window_lower) for ...
    """
    from shuffledp.bounds.window import SUPPORTED

    out = []
    for i, v in enumerate(as_list(values, "randomizers")):
        try:
            fam = get_family(v)
        except (TypeError, ValueError) as err:
            raise ValueError(f"randomizers[{i}] = {short_repr(v)}: {err}") from None
        if not fam.provides("cell_masses"):
            raise ValueError(f"randomizers[{i}] = {short_repr(v)}: no certified lower bound "
                             f"(window_lower) for {fam}; supported: {', '.join(SUPPORTED)}")
        out.append(fam.spec)
    if not out:
        raise ValueError("randomizers must not be empty")
    return out
