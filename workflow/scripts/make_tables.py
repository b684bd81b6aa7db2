"""Tables of experiment 2: central eps at selected n for each profile, local delta0 and method,
as LaTeX and Markdown, drawn only from the personalized table.

Rows: (profile, delta0, n) for n in ``params["table_n"]``; columns: methods (in table order),
approximate bounds marked with a dagger and exact lower bounds with an asterisk; a bound that
does not apply is shown as "n/a".

Snakemake interface (rule ``make_tables``): input ``table``; outputs ``latex``, ``markdown``;
params ``table_n``.
"""


import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import get_logger, read_table, run_main, write_text

_MARK = {"approximate": "\u2020", "lower": "*", "upper": ""}
_MARK_TEX = {"approximate": r"$^\dagger$", "lower": r"$^*$", "upper": ""}


def eps_grid(df, table_n):
    """(header methods with kinds, rows of (profile, delta0, n, {method: eps or None}))."""
    methods = list(dict.fromkeys(df["method"]))
    kinds = {m: df.loc[df["method"] == m, "kind"].iloc[0] for m in methods}
    rows = []
    sel = df[df["n"].isin([int(n) for n in table_n])]
    for (prof, delta0, n), g in sel.groupby(["profile", "delta0", "n"], sort=False):
        vals = {}
        for _, r in g.iterrows():
            vals[r["method"]] = float(r["eps"]) if r["status"] == "ok" else None
        rows.append((prof, float(delta0), int(n), vals))
    rows.sort(key=lambda t: (list(dict.fromkeys(df["profile"])).index(t[0]), t[1], t[2]))
    return methods, kinds, rows


def _fmt(v):
    return "n/a" if v is None else f"{v:.3g}"


def to_markdown(methods, kinds, rows, delta):
    head = ["profile", "local delta", "n"] + [m + _MARK[kinds[m]] for m in methods]
    out = [f"Central eps at delta = {delta:g}. \u2020 approximate (no guarantee); "
           "* exact lower bound; n/a: outside the bound's validity region.", "",
           "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for prof, delta0, n, vals in rows:
        cells = [prof, f"{delta0:g}", str(n)] + [_fmt(vals.get(m)) for m in methods]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def _tex_escape(text):
    return text.replace("_", r"\_")


def to_latex(methods, kinds, rows, delta):
    cols = "ll r" + " r" * len(methods)
    head = ["profile", r"$\delta_0$", "$n$"] + [
        _tex_escape(m) + _MARK_TEX[kinds[m]] for m in methods]
    out = [r"\begin{tabular}{" + cols + "}", r"\toprule", " & ".join(head) + r" \\", r"\midrule"]
    for prof, delta0, n, vals in rows:
        cells = [_tex_escape(prof), f"{delta0:g}", str(n)] + [
            "--" if vals.get(m) is None else f"{vals[m]:.3g}" for m in methods]
        out.append(" & ".join(cells) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}",
            f"% central eps at delta = {delta:g}; $^\\dagger$ approximate, $^*$ exact lower "
            "bound, -- outside the validity region"]
    return "\n".join(out) + "\n"


def main(*, inputs, outputs, params, log=None):
    logger = get_logger(log)
    df = read_table(inputs["table"], "personalized")
    delta = float(df["delta"].iloc[0])
    methods, kinds, rows = eps_grid(df, params["table_n"])
    write_text(to_latex(methods, kinds, rows, delta), outputs["latex"])
    write_text(to_markdown(methods, kinds, rows, delta), outputs["markdown"])
    logger.info("tables with %d rows x %d methods", len(rows), len(methods))


if "snakemake" in globals():
    run_main(main, snakemake)  # noqa: F821
