"""Command line interface: ``shuffledp bound`` and ``shuffledp list``.

Examples::

    shuffledp bound --n 100000 --eps0 4 --delta 1e-6
    shuffledp bound --budgets budgets.csv --delta 1e-6 --method gdp,clones --format csv
    shuffledp bound --budgets tiers.csv --delta 1e-9   # columns eps,count: 10^9 users
    shuffledp list
    shuffledp list --format markdown   # the README's table of bounds

Bad input gives one readable line on stderr and exit code 2 (never a traceback); a soundness
failure (a rigorous upper bound below an exact lower bound it should dominate) gives one line
and exit code 3.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

from shuffledp.bounds import KIND_LABELS, get_bound, list_bounds
from shuffledp.budgets import BudgetProfile
from shuffledp.compare import Evaluation, InconsistentBoundsError, compare_bounds
from shuffledp.errors import short_repr
from shuffledp.families import get_family

__all__ = ["main"]

EXIT_USAGE = 2
#: Exit code of a soundness failure (a rigorous upper bound below an exact lower bound).
EXIT_SOUNDNESS = 3
#: Width of the method column of the printed tables (the longest registered name fits).
_W = 24

#: Randomizer families whose coverage each line reports (``--randomizer`` picks one).
COVERAGE_CATALOG = ("binary_rr", "duchi", "krr:3", "krr:10", "oue:10", "laplace", "piecewise",
                    "gaussian")
#: Options that take a number, so that "--delta -1e-6" is read as a (bad) value, not a flag.
_NUMERIC_OPTIONS = ("--n", "--eps0", "--delta0", "--delta", "--eps")
_NUMBER = re.compile(r"^-(\d|\.\d|inf|nan)", re.IGNORECASE)


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, no usage dump
        raise _UsageError(message)


def _float(name: str):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{name} must be a number, got {short_repr(text)}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{name} must be finite, got {short_repr(text)}")
        return value

    return parse


def _int(name: str):
    def parse(text: str) -> int:
        try:
            return int(text)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                value = math.nan
            if math.isfinite(value) and value == int(value) and abs(value) < 1e18:
                return int(value)  # "1e5" is an integer too
            raise argparse.ArgumentTypeError(
                f"{name} must be an integer, got {short_repr(text)}") from None

    return parse


def _join_negative_values(argv: Sequence[str]) -> list[str]:
    """``--delta -1e-6`` -> ``--delta=-1e-6``: argparse reads a token like ``-1e-6`` as an
    unknown flag, so a negative number would be reported as a missing value."""
    out: list[str] = []
    i = 0
    args = list(argv)
    while i < len(args):
        tok = args[i]
        if tok in _NUMERIC_OPTIONS and i + 1 < len(args) and _NUMBER.match(args[i + 1]):
            out.append(f"{tok}={args[i + 1]}")
            i += 2
            continue
        out.append(tok)
        i += 1
    return out


def _build_parser() -> _Parser:
    parser = _Parser(prog="shuffledp", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    b = sub.add_parser("bound", help="central (eps, delta) of a shuffled deployment")
    who = b.add_argument_group("users (either --n/--eps0 or --budgets)")
    who.add_argument("--n", type=_int("--n"), help="number of users")
    who.add_argument("--eps0", type=_float("--eps0"), help="local epsilon of every user")
    who.add_argument(
        "--delta0",
        type=_float("--delta0"),
        default=0.0,
        help="local delta of every user (default 0)",
    )
    who.add_argument(
        "--budgets", metavar="FILE",
        help="CSV with column eps (optional delta; optional count: users per row, a budget "
             "histogram of up to 1e9 users), or .npy"
    )
    target = b.add_mutually_exclusive_group(required=True)
    target.add_argument("--delta", type=_float("--delta"), help="central delta (gives eps)")
    target.add_argument("--eps", type=_float("--eps"), help="central eps (gives delta)")
    b.add_argument(
        "--method",
        default="all",
        help="comma-separated bound names, or 'all' (default); see 'shuffledp list'",
    )
    b.add_argument("--clone", choices=["stronger", "standard"], default="stronger",
                   help="clone probabilities of the clones bound: stronger (default) or "
                        "standard; which randomizers each covers on your profile is printed")
    b.add_argument("--randomizer", metavar="SPEC",
                   help="the local randomizer every user runs (binary_rr, duchi, krr:K, oue:D, "
                        "laplace, piecewise, gaussian, gaussian_l2, duchi_l2, any): each line "
                        "then says "
                        "whether the bound is a guarantee for it; variation_ratio uses its "
                        "variation-ratio parameters")
    b.add_argument("--mechanism-aware", action="store_true",
                   help="clones uses the --randomizer's own clone masses per victim group "
                        "(personalized Laplace, k-RR, OUE, Gaussian, ...; docs/theory.md 4.1) "
                        "instead of the generic --clone masses")
    b.add_argument("--format", choices=["table", "csv", "json"], default="table")

    ls = sub.add_parser("list", help="list the registered bounds and what they cover")
    ls.add_argument("--format", choices=["text", "markdown"], default="text",
                    help="text (default) or markdown: a GitHub table, the one in the README")
    return parser


def _profile(args: argparse.Namespace) -> BudgetProfile:
    if args.budgets is not None:
        if args.n is not None or args.eps0 is not None:
            raise ValueError("give either --budgets or --n/--eps0, not both")
        from shuffledp.io import load_budgets

        return load_budgets(args.budgets)
    if args.n is None or args.eps0 is None:
        raise ValueError("give --n and --eps0 (identical users) or --budgets FILE")
    return BudgetProfile.identical(n=args.n, eps0=args.eps0, delta0=args.delta0)


def _methods(text: str) -> list[str]:
    if text.strip() == "all":
        return list_bounds()
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise ValueError(f"--method must name at least one bound, got {text!r}")
    for m in names:
        get_bound(m)  # raises ValueError listing the known names
    return names


def _coverage(e: Evaluation, profile: BudgetProfile, options: dict, randomizer) -> dict:
    """Which randomizer families the bound's value holds for (upper bounds), or is a lower
    bound for (lower bounds), on this profile."""
    bound = get_bound(e.method)
    opts = options.get(e.method, {})
    if randomizer is not None:
        cov = bound.covers(randomizer=randomizer, profile=profile, **opts)
        return {"covers": [str(randomizer)] if cov.covered else [], "coverage": cov.reason}
    covered = [spec for spec in COVERAGE_CATALOG
               if bound.covers(randomizer=spec, profile=profile, **opts).covered]
    return {"covers": covered, "coverage": ""}


def _rows(evals: Sequence[Evaluation], profile: BudgetProfile, options: dict,
          randomizer) -> list[dict]:
    rows = []
    for e in evals:
        row: dict = {"method": e.method, "kind": KIND_LABELS[e.kind]}
        if e.result is None:
            row.update(eps=None, delta=None, status="not applicable", vacuous=None,
                       below_lower=None, covers=[], note=e.reason)
            rows.append(row)
            continue
        row.update(eps=e.result.eps, delta=e.result.delta, status="ok",
                   vacuous=e.result.vacuous)
        d = e.result.diagnostics
        notes = []
        if e.kind == "approximate":
            row.update(below_lower=e.below_lower, lower_method=e.lower_method,
                       lower_value=e.lower_value)
            if e.below_lower:
                notes.append(f"WARNING: below the exact lower bound {e.lower_method} "
                             f"({e.lower_value:.6g}), not a valid guarantee")
            elif e.below_lower is None:
                notes.append(f"lower-bound check {e.lower_reason}")
        else:
            row["below_lower"] = None
        if d.get("clt_ok") is False:
            notes.append(
                f"few clones ({d['expected_clones']:.3g} < {d['clt_threshold']:.3g}): "
                "CLT approximation unreliable"
            )
        if e.result.vacuous:
            notes.append("vacuous: no better than the local guarantee" if e.kind != "lower"
                         else "vacuous: a lower bound of 0")
        if d.get("winner"):
            notes.append(f"the smaller here: {d['winner']}")
        if d.get("reduced_to_identical"):
            notes.append("identical-budget bound applied with eps0 = max eps_i")
        if e.kind != "approximate":
            cov = _coverage(e, profile, options, randomizer)
            row.update(cov)
            if randomizer is not None:
                if e.kind == "upper":
                    verdict = "a guarantee for" if cov["covers"] else "NOT a guarantee for"
                else:
                    verdict = "a lower bound for" if cov["covers"] else "not a lower bound for"
                notes.append(f"{verdict} {randomizer}: {cov['coverage']}")
            else:
                word = "a guarantee for" if e.kind == "upper" else "a lower bound for"
                fams = ", ".join(cov["covers"]) if cov["covers"] else "none of " + ", ".join(
                    COVERAGE_CATALOG)
                notes.append(f"{word}: {fams}")
        else:
            row["covers"] = []
        row["note"] = "; ".join(notes)
        rows.append(row)
    return rows


def _print_table(rows: list[dict], profile: BudgetProfile, args: argparse.Namespace) -> None:
    given = f"delta = {args.delta:g}" if args.delta is not None else f"eps = {args.eps:g}"
    print(
        f"n = {profile.n}"
        + (f" (budget histogram, {profile.tiers.eps.size} tiers)" if profile.is_histogram
           and profile.tiers.eps.size > 1 else "")
        + f", eps_i in [{profile.eps_min:g}, {profile.eps_max:g}], "
        f"max delta_i = {profile.delta_max:g}, {given}"
    )
    col = "eps" if args.delta is not None else "delta"
    header = f"{'method':<{_W}} {'kind':<15} {col:>12}  note"
    print(header)
    print("-" * len(header))
    for r in rows:
        val = r[col]
        shown = "-" if val is None else (f"{val:.6g}")
        flag = "!" if r.get("below_lower") else " "
        print(f"{r['method']:<{_W}} {r['kind']:<15} {shown:>12}{flag} {r['note']}")


def _cmd_bound(args: argparse.Namespace) -> int:
    profile = _profile(args)
    methods = _methods(args.method)
    randomizer = get_family(args.randomizer) if args.randomizer is not None else None
    if args.mechanism_aware and randomizer is None:
        raise ValueError("--mechanism-aware needs --randomizer SPEC (the masses of which "
                         "randomizer)")
    clones_opts: dict = {"clone": args.clone}
    if args.mechanism_aware:
        clones_opts["mechanism"] = randomizer.spec
    options = {"clones": clones_opts} if "clones" in methods else {}
    if randomizer is not None:
        # bounds with a `mechanism` option other than clones (whose mechanism-aware masses are
        # asked for by --mechanism-aware) use the randomizer's own parameters: variation_ratio
        # (only the general row, gamma = 0, is proven: docs/theory.md 11.4; other rows are
        # reported as not applicable) and variation_ratio_claimed (the published rows)
        # and window_lower the windows of that randomizer (for `any`, its default binary RR
        # windows: a lower bound for one member of a family is one for the family)
        for name in methods:
            bound = get_bound(name)
            if name != "clones" and "mechanism" in bound.info.options:
                default = bound.info.options["mechanism"]
                if (bound.info.kind == "lower" and not randomizer.provides("cell_masses")
                        and default is not None and randomizer.includes(get_family(default))):
                    continue
                options[name] = {"mechanism": randomizer.spec}
    evals = compare_bounds(profile, delta=args.delta, eps=args.eps, methods=methods,
                           options=options)
    rows = _rows(evals, profile, options, randomizer)
    if args.format == "json":
        print(
            json.dumps(
                {"n": profile.n, "delta": args.delta, "eps": args.eps,
                 "randomizer": None if randomizer is None else str(randomizer),
                 "results": rows},
                indent=2,
            )
        )
    elif args.format == "csv":
        import csv

        fields = ["method", "kind", "eps", "delta", "status", "vacuous", "below_lower", "note"]
        w = csv.DictWriter(
            sys.stdout, fieldnames=fields, extrasaction="ignore", lineterminator="\n"
        )
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in fields})
    else:
        _print_table(rows, profile, args)
    return 0


def _markdown_cell(text: str) -> str:
    """One table cell: a literal ``|`` would end the cell, a newline the row."""
    return " ".join(text.split()).replace("|", "\\|")


def _list_markdown() -> str:
    """Every registered bound as a GitHub table (``shuffledp list --format markdown``), the same
    facts as the text table plus each bound's citation.  The README holds exactly this table
    (tests/test_docs_examples.py)."""
    lines = [
        "| bound | kind | personalized | local delta | covers | source |",
        "|---|---|---|---|---|---|",
    ]
    for name in list_bounds():
        i = get_bound(name).info
        cells = [
            f"`{name}`",
            i.kind_label,
            "yes" if i.personalized else "no",
            "yes" if i.approx_ldp else "no",
            _markdown_cell(i.coverage_note or ", ".join(i.randomizers)),
            _markdown_cell(i.citation),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _cmd_list(fmt: str = "text") -> int:
    if fmt == "markdown":
        print(_list_markdown())
        return 0
    print(f"{'method':<{_W}} {'kind':<15} {'personalized':<13} {'local delta':<12} covers")
    for name in list_bounds():
        i = get_bound(name).info
        print(
            f"{name:<{_W}} {i.kind_label:<15} {'yes' if i.personalized else 'no':<13} "
            f"{'yes' if i.approx_ldp else 'no':<12} {i.coverage_note or ','.join(i.randomizers)}"
        )
    print("\nWhat a bound covers on your own profile: shuffledp bound ... --randomizer SPEC")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad input, 3 soundness failure)."""
    try:
        raw = sys.argv[1:] if argv is None else list(argv)
        args = _build_parser().parse_args(_join_negative_values(raw))
        if args.command == "list":
            return _cmd_list(args.format)
        return _cmd_bound(args)
    except InconsistentBoundsError as err:
        print(f"shuffledp: {err}", file=sys.stderr)
        return EXIT_SOUNDNESS
    except (_UsageError, ValueError, TypeError, OSError, OverflowError) as err:
        text = " ".join(str(err).split())  # one line
        if len(text) > 300:
            text = f"{text[:280]}... ({len(text)} characters)"
        print(f"shuffledp: error: {text}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
