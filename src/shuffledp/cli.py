"""Command line interface: ``shuffledp bound`` and ``shuffledp list``.

Examples::

    shuffledp bound --n 100000 --eps0 4 --delta 1e-6
    shuffledp bound --budgets budgets.csv --delta 1e-6 --method gdp,clones --format csv
    shuffledp list

Bad input gives one readable line on stderr and exit code 2 (never a traceback).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from typing import NoReturn

from shuffledp.bounds import KIND_LABELS, get_bound, list_bounds
from shuffledp.compare import Evaluation, compare_bounds
from shuffledp.params import BudgetProfile

__all__ = ["main"]

EXIT_USAGE = 2


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
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{name} must be finite, got {text!r}")
        return value

    return parse


def _int(name: str):
    def parse(text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}") from None

    return parse


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
        "--budgets", metavar="FILE", help="CSV with column eps (and optional delta), or .npy"
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
                   help="clone probabilities of the clones bound: stronger (default; proven "
                        "for binary/k-ary randomized response) or standard (any eps_i-LDP "
                        "randomizer)")
    b.add_argument("--format", choices=["table", "csv", "json"], default="table")

    sub.add_parser("list", help="list the registered bounds and what they cover")
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


def _rows(evals: Sequence[Evaluation]) -> list[dict]:
    rows = []
    for e in evals:
        row: dict = {"method": e.method, "kind": KIND_LABELS[e.kind]}
        if e.result is None:
            row.update(eps=None, delta=None, status="not applicable", note=e.reason)
        else:
            row.update(eps=e.result.eps, delta=e.result.delta, status="ok", note="")
            d = e.result.diagnostics
            notes = []
            if e.below_lower:
                notes.append("WARNING: below the exact lower bound rr_exact, not a valid guarantee")
            if d.get("clt_ok") is False:
                notes.append(
                    f"few clones ({d['expected_clones']:.3g} < {d['clt_threshold']:.3g}): "
                    "CLT approximation unreliable"
                )
            if e.method == "clones" and d.get("clone") == "stronger":
                notes.append("stronger clones: proven for binary/k-ary RR; --clone standard "
                             "for any randomizer")
            if d.get("reduced_to_identical"):
                notes.append("identical-budget bound applied with eps0 = max eps_i")
            row["note"] = "; ".join(notes)
            row["below_lower"] = e.below_lower
        rows.append(row)
    return rows


def _print_table(rows: list[dict], profile: BudgetProfile, args: argparse.Namespace) -> None:
    given = f"delta = {args.delta:g}" if args.delta is not None else f"eps = {args.eps:g}"
    print(
        f"n = {profile.n}, eps_i in [{profile.eps.min():g}, {profile.eps_max:g}], "
        f"max delta_i = {profile.delta_max:g}, {given}"
    )
    col = "eps" if args.delta is not None else "delta"
    header = f"{'method':<20} {'kind':<15} {col:>12}  note"
    print(header)
    print("-" * len(header))
    for r in rows:
        val = r[col]
        shown = "-" if val is None else (f"{val:.6g}")
        flag = "!" if r.get("below_lower") else " "
        print(f"{r['method']:<20} {r['kind']:<15} {shown:>12}{flag} {r['note']}")


def _cmd_bound(args: argparse.Namespace) -> int:
    profile = _profile(args)
    methods = _methods(args.method)
    options = {"clones": {"clone": args.clone}} if "clones" in methods else {}
    evals = compare_bounds(profile, delta=args.delta, eps=args.eps, methods=methods,
                           options=options)
    rows = _rows(evals)
    if args.format == "json":
        print(
            json.dumps(
                {"n": profile.n, "delta": args.delta, "eps": args.eps, "results": rows}, indent=2
            )
        )
    elif args.format == "csv":
        import csv

        fields = ["method", "kind", "eps", "delta", "status", "note"]
        w = csv.DictWriter(
            sys.stdout, fieldnames=fields, extrasaction="ignore", lineterminator="\n"
        )
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in fields})
    else:
        _print_table(rows, profile, args)
    return 0


def _cmd_list() -> int:
    print(f"{'method':<20} {'kind':<15} {'personalized':<13} {'local delta':<12} randomizers")
    for name in list_bounds():
        i = get_bound(name).info
        print(
            f"{name:<20} {i.kind_label:<15} {'yes' if i.personalized else 'no':<13} "
            f"{'yes' if i.approx_ldp else 'no':<12} {','.join(i.randomizers)}"
        )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad input)."""
    try:
        args = _build_parser().parse_args(argv)
        if args.command == "list":
            return _cmd_list()
        return _cmd_bound(args)
    except (_UsageError, ValueError, TypeError, OSError) as err:
        print(f"shuffledp: error: {err}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
