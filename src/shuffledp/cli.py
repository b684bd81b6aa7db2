"""Command line interface: ``shuffledp bound``, ``shuffledp check`` and ``shuffledp list``.

Examples::

    shuffledp bound --n 100000 --eps0 4 --delta 1e-6
    shuffledp bound --budgets budgets.csv --delta 1e-6 --randomizer laplace   # the answer
    shuffledp bound --budgets budgets.csv --delta 1e-6 --method gdp,clones --format csv
    shuffledp bound --budgets tiers.csv --delta 1e-9   # columns eps,count: 10^9 users
    shuffledp check --budgets budgets.csv --randomizer laplace --eps 0.5 --delta 1e-6
    shuffledp list
    shuffledp list --format markdown   # the README's table of bounds

With ``--randomizer SPEC`` every bound that has a mechanism-aware form uses it (``clones`` with
that randomizer's own masses; ``--generic-masses`` for the generic ones), rigorous values that
are not guarantees for it are listed apart, and the table ends with the answer to quote: the
tightest covering rigorous upper bound and the best certified lower bound.  ``--format json``
follows ``docs/schemas/bound.schema.json`` (``schema_version`` 1), ``check --format json``
``docs/schemas/check.schema.json``.

Exit codes: 0 ok (``check``: the claim is proven); 2 bad input (one readable line on stderr,
never a traceback); 3 a soundness failure (a rigorous upper bound below an exact lower bound it
should dominate); ``check`` only: 4 the claim is refuted, 5 undetermined.
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
from shuffledp.compare import (
    Evaluation,
    InconsistentBoundsError,
    best_answer,
    check_claim,
    compare_bounds,
)
from shuffledp.errors import short_repr
from shuffledp.families import get_family
from shuffledp.per_tier import TIER_METHODS, tier_eps

__all__ = ["main"]

EXIT_USAGE = 2
#: Exit code of a soundness failure (a rigorous upper bound below an exact lower bound).
EXIT_SOUNDNESS = 3
#: Exit codes of ``shuffledp check``: proven is 0; refuted and undetermined.
EXIT_REFUTED = 4
EXIT_UNDETERMINED = 5
#: Version of the JSON output (docs/schemas/bound.schema.json, docs/schemas/check.schema.json).
SCHEMA_VERSION = 1
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
            if "_" in text:  # Python reads '1_5' as 15: a typo, not a number
                raise ValueError(text)
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{name} must be a number, got {short_repr(text)}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{name} must be finite, got {short_repr(text)}")
        return value + 0.0  # -0.0 -> 0.0 (printed '0', not '-0')

    return parse


def _int(name: str):
    def parse(text: str) -> int:
        if "_" in text:
            raise argparse.ArgumentTypeError(
                f"{name} must be an integer (no '_'), got {short_repr(text)}")
        try:
            return int(text)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                value = math.nan
            if math.isfinite(value) and value == int(value) and abs(value) < 1e18:
                return int(value)  # "1e5" is an integer too
            if math.isfinite(value) and value == int(value):
                raise argparse.ArgumentTypeError(
                    f"{name} must be an integer below 1e18, got {short_repr(text)}") from None
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
    _add_users(b)
    target = b.add_mutually_exclusive_group(required=True)
    target.add_argument("--delta", type=_float("--delta"), help="central delta (gives eps)")
    target.add_argument("--eps", type=_float("--eps"), help="central eps (gives delta)")
    _add_method(b)
    b.add_argument("--clone", choices=["stronger", "standard"], default=None,
                   help="clone probabilities of the generic clones bound: stronger (default) or "
                        "standard; which randomizers each covers on your profile is printed "
                        "(with --randomizer: implies --generic-masses)")
    b.add_argument("--randomizer", metavar="SPEC",
                   help="the local randomizer every user runs (binary_rr, duchi, krr:K, oue:D, "
                        "laplace, piecewise, gaussian, gaussian_l2, duchi_l2, any): every "
                        "bound with a mechanism-aware form uses it, each line says whether it "
                        "is a guarantee for it, and the table ends with the answer to quote")
    _add_masses(b)
    b.add_argument("--per-tier", action="store_true",
                   help="also the central eps of the victims of each budget (with --randomizer "
                        "and --delta; at most 64 distinct budgets): users who chose a small "
                        "budget get their own, smaller, eps (csv: this table instead)")
    b.add_argument("--format", choices=["table", "csv", "json"], default="table")

    c = sub.add_parser("check", help="is a claimed (eps, delta) a valid guarantee? proven, "
                                     "refuted or undetermined")
    _add_users(c)
    c.add_argument("--eps", type=_float("--eps"), required=True, help="the claimed eps")
    c.add_argument("--delta", type=_float("--delta"), required=True, help="the claimed delta")
    c.add_argument("--randomizer", metavar="SPEC", required=True,
                   help="the local randomizer every user runs (as for 'bound')")
    _add_method(c)
    _add_masses(c)
    c.add_argument("--format", choices=["text", "json"], default="text")

    ls = sub.add_parser("list", help="list the registered bounds and what they cover")
    ls.add_argument("--format", choices=["text", "markdown"], default="text",
                    help="text (default) or markdown: a GitHub table, the one in the README")
    return parser


def _add_users(p: argparse.ArgumentParser) -> None:
    who = p.add_argument_group("users (either --n/--eps0 or --budgets)")
    who.add_argument("--n", type=_int("--n"), help="number of users")
    who.add_argument("--eps0", type=_float("--eps0"), help="local epsilon of every user")
    who.add_argument(
        "--delta0",
        type=_float("--delta0"),
        default=None,
        help="local delta of every user (default 0; with --budgets, the file's delta column)",
    )
    who.add_argument(
        "--budgets", metavar="FILE",
        help="CSV with column eps (optional delta; optional count: users per row, a budget "
             "histogram of up to 1e9 users), or .npy"
    )


def _add_method(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--method",
        default="all",
        help="comma-separated bound names, or 'all' (default); see 'shuffledp list'",
    )


def _add_masses(p: argparse.ArgumentParser) -> None:
    masses = p.add_mutually_exclusive_group()
    masses.add_argument("--generic-masses", action="store_true",
                        help="clones with its generic --clone masses even when --randomizer "
                             "is named (they cover only the randomizers they dominate)")
    masses.add_argument("--mechanism-aware", action="store_true",
                        help="the default when --randomizer is named: clones with that "
                             "randomizer's own clone masses per victim group (docs/theory.md "
                             "4.1); kept for old scripts")


def _profile(args: argparse.Namespace) -> BudgetProfile:
    if args.budgets is not None:
        if args.n is not None or args.eps0 is not None:
            raise ValueError("give either --budgets or --n/--eps0, not both")
        if args.delta0 is not None:
            raise ValueError("--delta0 applies to --n/--eps0 only; with --budgets give the "
                             "local deltas in the file's delta column")
        from shuffledp.io import load_budgets

        return load_budgets(args.budgets)
    if args.n is None or args.eps0 is None:
        raise ValueError("give --n and --eps0 (identical users) or --budgets FILE")
    return BudgetProfile.identical(n=args.n, eps0=args.eps0,
                                   delta0=0.0 if args.delta0 is None else args.delta0)


def _methods(text: str) -> list[str]:
    if text.strip() == "all":
        return list_bounds()
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise ValueError(f"--method must name at least one bound, got {text!r}")
    for m in names:
        get_bound(m)  # raises ValueError listing the known names
    repeated = sorted({m for m in names if names.count(m) > 1})
    if repeated:
        raise ValueError(f"--method names {', '.join(repeated)} more than once, got {text!r}")
    return names


def _guarantee_for(e: Evaluation, profile: BudgetProfile) -> list[str]:
    """The randomizer families of :data:`COVERAGE_CATALOG` the bound's value holds for (upper
    bounds) or is a lower bound for (lower bounds) on this profile, with its options."""
    bound = get_bound(e.method)
    return [spec for spec in COVERAGE_CATALOG
            if bound.covers(randomizer=spec, profile=profile, **e.options).covered]


def _value(e: Evaluation) -> float | None:
    if e.result is None:
        return None
    return float(e.result.eps if e.target == "delta" else e.result.delta)


def _rows(evals: Sequence[Evaluation], profile: BudgetProfile, randomizer) -> list[dict]:
    rows = []
    for e in evals:
        row: dict = {"method": e.method, "kind": KIND_LABELS[e.kind],
                     "options": dict(e.options), "covered": e.covered}
        if e.result is None:
            row.update(eps=None, delta=None, status="not applicable", vacuous=None,
                       below_lower=None, guarantee_for=[], note=e.reason)
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
            row["guarantee_for"] = _guarantee_for(e, profile)
            if randomizer is not None:
                if e.kind == "upper":
                    verdict = "a guarantee for" if e.covered else "NOT a guarantee for"
                else:
                    verdict = "a lower bound for" if e.covered else "not a lower bound for"
                notes.append(f"{verdict} {randomizer}: {e.coverage}")
            else:
                word = "a guarantee for" if e.kind == "upper" else "a lower bound for"
                fams = row["guarantee_for"]
                notes.append(f"{word}: " + (", ".join(fams) if fams else "none of "
                                            + ", ".join(COVERAGE_CATALOG)))
        else:
            row["guarantee_for"] = []
        row["note"] = "; ".join(notes)
        rows.append(row)
    return rows


def _options_text(options: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(options.items()))


def _answer(evals: Sequence[Evaluation], profile: BudgetProfile, randomizer,
            target_value: float) -> dict | None:
    """The answer to quote (tightest covering upper, best covering lower), or None when no
    randomizer was named."""
    if randomizer is None:
        return None
    ans = best_answer(evals)
    out: dict = {"randomizer": str(randomizer), "n": profile.n, "target": ans.target,
                 "target_value": target_value,
                 "upper_method": None, "upper_options": None, "upper_value": None,
                 "lower_method": None, "lower_value": None}
    if ans.upper is not None:
        out.update(upper_method=ans.upper.method, upper_options=dict(ans.upper.options),
                   upper_value=ans.upper_value)
    if ans.lower is not None:
        out.update(lower_method=ans.lower.method, lower_value=ans.lower_value)
    return out


def _sig6(value: float, side: str = "nearest") -> str:
    """``value`` with 6 significant digits, rounded ``up`` (an upper bound: the text never
    claims less than the certificate), ``down`` (a lower bound) or to the ``nearest``."""
    text = f"{value:.6g}"
    if side == "nearest" or not math.isfinite(value) or value == 0.0:
        return text
    step = 10.0 ** (math.floor(math.log10(abs(value))) - 5)
    shown = float(text)
    if side == "up" and shown < value:
        text = f"{shown + step:.6g}"
    elif side == "down" and shown > value:
        text = f"{shown - step:.6g}"
    return text


def _answer_line(a: dict) -> str:
    """E.g. "laplace, 1000 users: (1.028, 1e-06)-DP proven by clones (mechanism=laplace); no
    valid bound below eps = 0.366 (window_lower)"."""
    head = f"{a['randomizer']}, {a['n']} users: "
    what = "eps" if a["target"] == "delta" else "delta"
    if a["upper_method"] is None:
        proven = f"no covering rigorous upper bound applies at {a['target']} = " \
                 f"{a['target_value']:g}"
    else:
        pair = ((a["upper_value"], a["target_value"]) if a["target"] == "delta"
                else (a["target_value"], a["upper_value"]))
        opts = _options_text(a["upper_options"])
        shown = [_sig6(v, "up") if v == a["upper_value"] else f"{v:g}" for v in pair]
        proven = (f"({shown[0]}, {shown[1]})-DP proven by {a['upper_method']}"
                  + (f" ({opts})" if opts else ""))
    if a["lower_method"] is None:
        refuted = "no certified lower bound applies"
    else:
        refuted = (f"no valid bound below {what} = {_sig6(a['lower_value'], 'down')} "
                   f"({a['lower_method']})")
    return head + proven + "; " + refuted


def _print_table(rows: list[dict], profile: BudgetProfile, args: argparse.Namespace,
                 answer: dict | None) -> None:
    given = f"delta = {args.delta:g}" if args.delta is not None else f"eps = {args.eps:g}"
    print(
        f"n = {profile.n}"
        + (f" (budget histogram, {profile.tiers.eps.size} tiers)" if profile.is_histogram
           and profile.tiers.eps.size > 1 else "")
        + f", eps_i in [{profile.eps_min:g}, {profile.eps_max:g}], "
        f"max delta_i = {profile.delta_max:g}, {given}"
        + (f", randomizer {answer['randomizer']}" if answer else "")
    )
    col = "eps" if args.delta is not None else "delta"
    header = f"{'method':<{_W}} {'kind':<15} {col:>12}  note"

    def line(r: dict) -> str:
        val = r[col]
        side = ("up" if r["kind"] == KIND_LABELS["upper"] else
                "down" if r["kind"] == KIND_LABELS["lower"] else "nearest")
        shown = "-" if val is None else _sig6(val, side)
        flag = "!" if r.get("below_lower") else " "
        return f"{r['method']:<{_W}} {r['kind']:<15} {shown:>12}{flag} {r['note']}"

    # with a randomizer named, a rigorous or exact value that does not hold for it is listed
    # apart (it is a number for other randomizers, never the answer for this one)
    apart = [r for r in rows if answer is not None and r["status"] == "ok"
             and r["kind"] != KIND_LABELS["approximate"] and r["covered"] is False]
    print(header)
    print("-" * len(header))
    for r in rows:
        if r not in apart:
            print(line(r))
    if apart:
        print(f"\nNot guarantees for {answer['randomizer']} on this profile (values that hold "
              "for other randomizers only, for reference):")
        for r in apart:
            print(line(r))
    if answer is not None:
        print(f"\nanswer: {_answer_line(answer)}")
    else:
        print("\nname the randomizer your users run (--randomizer SPEC) for the answer to quote")


_CSV_FIELDS = ["method", "kind", "eps", "delta", "status", "covered", "guarantee_for",
               "options", "vacuous", "below_lower", "note"]


def _csv_cell(key: str, value) -> str:
    if value is None:
        return ""
    if key == "guarantee_for":
        return ";".join(value)
    if key == "options":
        return json.dumps(value, sort_keys=True)
    return value


def _cmd_bound(args: argparse.Namespace) -> int:
    profile = _profile(args)
    methods = _methods(args.method)
    randomizer = get_family(args.randomizer) if args.randomizer is not None else None
    if (args.mechanism_aware or args.generic_masses) and randomizer is None:
        flag = "--mechanism-aware" if args.mechanism_aware else "--generic-masses"
        raise ValueError(f"{flag} needs --randomizer SPEC (the masses of which randomizer)")
    # the clone masses apply to the generic clones only (the mechanism-aware ones are the
    # randomizer's own); a --clone given with a named randomizer means the generic masses
    if args.clone is not None and "clones" not in methods:
        raise ValueError(f"--clone {args.clone} sets the masses of the clones bound, which "
                         f"--method does not name (got {args.method!r})")
    generic = args.generic_masses or (randomizer is not None and args.clone is not None)
    options = ({"clones": {"clone": args.clone or "stronger"}}
               if "clones" in methods and (randomizer is None or generic) else {})
    tiers = None
    if args.per_tier:
        if randomizer is None or args.delta is None:
            raise ValueError("--per-tier needs --randomizer SPEC and --delta (the central eps "
                             "of each budget's victims at that delta)")
        by = [m for m in TIER_METHODS if m in methods]
        if not by:
            raise ValueError(f"--per-tier takes its values from {' or '.join(TIER_METHODS)}, "
                             f"which --method does not name (got {args.method!r})")
        tiers = tier_eps(profile, delta=args.delta, randomizer=randomizer, methods=by)
        if args.format == "csv":
            import csv

            w = csv.writer(sys.stdout, lineterminator="\n")
            w.writerow(["tier", "eps_local", "delta_local", "users", "eps", "method"])
            for t in tiers:
                w.writerow([t.tier, repr(t.eps_local), repr(t.delta_local), t.n,
                            repr(t.eps) if math.isfinite(t.eps) else "", t.method])
            return 0
    evals = compare_bounds(profile, delta=args.delta, eps=args.eps, methods=methods,
                           options=options, randomizer=randomizer,
                           generic_masses=generic)
    rows = _rows(evals, profile, randomizer)
    target_value = args.delta if args.delta is not None else args.eps
    answer = _answer(evals, profile, randomizer, target_value)
    if args.format == "json":
        print(
            json.dumps(
                {"schema_version": SCHEMA_VERSION, "n": profile.n, "delta": args.delta,
                 "eps": args.eps, "eps_min": profile.eps_min, "eps_max": profile.eps_max,
                 "delta_max": profile.delta_max,
                 "randomizer": None if randomizer is None else str(randomizer),
                 "results": rows, "answer": answer,
                 **({} if tiers is None else {"per_tier": [
                     {"tier": t.tier, "eps_local": t.eps_local, "delta_local": t.delta_local,
                      "users": t.n, "eps": t.eps if math.isfinite(t.eps) else None,
                      "method": t.method or None}
                     for t in tiers]})},
                indent=2,
            )
        )
    elif args.format == "csv":
        import csv

        w = csv.DictWriter(
            sys.stdout, fieldnames=_CSV_FIELDS, extrasaction="ignore", lineterminator="\n"
        )
        w.writeheader()
        for r in rows:
            w.writerow({k: _csv_cell(k, r.get(k)) for k in _CSV_FIELDS})
    else:
        _print_table(rows, profile, args, answer)
        if tiers is not None:
            _print_tiers(tiers, randomizer, args.delta)
    return 0


def _print_tiers(tiers, randomizer, delta: float) -> None:
    print(f"\nper budget (the victims of each budget, {randomizer}, delta = {delta:g}):")
    print(f"{'eps_i':>10}  {'delta_i':>9}  {'users':>11}  {'central eps':>12}  by")
    for t in tiers:
        eps = "none" if not math.isfinite(t.eps) else _sig6(t.eps, "up")
        print(f"{t.eps_local:>10.6g}  {t.delta_local:>9.3g}  {t.n:>11,}  {eps:>12}  "
              f"{t.method or 'no covering bound'}")


def _cmd_check(args: argparse.Namespace) -> int:
    profile = _profile(args)
    methods = _methods(args.method)
    c = check_claim(profile, eps=args.eps, delta=args.delta, randomizer=args.randomizer,
                    methods=methods, generic_masses=args.generic_masses)
    if args.format == "json":
        print(json.dumps({
            "schema_version": SCHEMA_VERSION, "verdict": c.verdict, "eps": c.eps,
            "delta": c.delta, "randomizer": c.randomizer, "n": c.n,
            "upper_method": c.upper_method, "upper_options": dict(c.upper_options),
            "upper_delta": c.upper_delta, "lower_method": c.lower_method,
            "lower_delta": c.lower_delta, "lower_pair": c.lower_pair,
            "sentence": c.sentence}, indent=2))
    else:
        print(c.sentence)
    return {"proven": 0, "refuted": EXIT_REFUTED, "undetermined": EXIT_UNDETERMINED}[c.verdict]


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


def _repeated(raw: Sequence[str]) -> str | None:
    """The first option given twice (``--n 10 --n 1000``: argparse would keep the last)."""
    seen: set[str] = set()
    for tok in raw:
        if tok == "--":
            break
        if tok.startswith("--"):
            name = tok.split("=", 1)[0]
            if name in seen:
                return name
            seen.add(name)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad input, 3 soundness failure; ``check``:
    0 proven, 4 refuted, 5 undetermined; 1 standard output closed; 130 interrupted, 141
    output pipe closed)."""
    if sys.stdout is None:  # started with its standard output closed (``>&-``): print would
        print("shuffledp: error: standard output is closed; nothing can be written",  # drop
              file=sys.stderr)                                                    # everything
        return EXIT_NO_OUTPUT
    try:
        raw = sys.argv[1:] if argv is None else list(argv)
        again = _repeated(raw)
        if again is not None:
            raise _UsageError(f"option {again} given more than once (give each option once)")
        args = _build_parser().parse_args(_join_negative_values(raw))
        if args.command == "list":
            return _cmd_list(args.format)
        if args.command == "check":
            return _cmd_check(args)
        return _cmd_bound(args)
    except InconsistentBoundsError as err:
        print(f"shuffledp: {err}", file=sys.stderr)
        return EXIT_SOUNDNESS
    except (_UsageError, ValueError, TypeError, OSError, OverflowError) as err:
        if isinstance(err, BrokenPipeError):
            return _closed_pipe()
        text = " ".join(str(err).split())  # one line
        if len(text) > 300:
            text = f"{text[:280]}... ({len(text)} characters)"
        print(f"shuffledp: error: {text}", file=sys.stderr)
        return EXIT_USAGE
    except MemoryError:
        print("shuffledp: error: out of memory: the input (users, budget tiers or grid) is too "
              "large for this machine's memory; a budgets file with a count column (a "
              "histogram) needs far less", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("shuffledp: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


#: Exit code after Ctrl-C (128 + SIGINT) and after the reader of the output went away (128 +
#: SIGPIPE), as a shell reports them.
EXIT_INTERRUPTED = 130
EXIT_CLOSED_PIPE = 141
#: Exit code when started with standard output closed: the answer could not be written.
EXIT_NO_OUTPUT = 1


def _closed_pipe() -> int:
    """The reader of our output is gone (``shuffledp list | head -1``): nothing more to say, and
    Python must not complain when it flushes stdout at exit."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # pragma: no cover - no real stdout
        pass
    return EXIT_CLOSED_PIPE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
