"""Figure of experiment 6: SGD test accuracy vs central eps per accounting, from the table.

Left: test accuracy (mean, bars = standard deviation over seeds) against the central target eps,
one line per accounting (``gdp`` approximate dashed, ``clones`` rigorous solid), the local-only
run (no shuffling), the non-private run (clipped SGD without noise) and the chance line (always
predicting the most frequent test class).  A target an accounting cannot reach (no local budget
meets it, e.g. the paper's formula has a floor) is marked with an "x" on the chance line and a
note.  Right: the per-round local eps each accounting allows (max over users).  One legend for
both panels, below them.

Snakemake interface (rule ``plot_sgd``): input ``table``; outputs ``png``, ``pdf``.
"""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from figstyle import (
    TEXT_WIDTH,
    apply_style,
    collect_legend,
    finish,
    method_style,
    note_missing,
    short_reason,
)
from wfutils import get_logger, read_table, run_main, save_figure


def draw(df):
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FormatStrFormatter, NullLocator

    ok = df[df["status"] == "ok"]
    private = df[df["kind"] != "nonprivate"]
    methods = list(dict.fromkeys(private["method"]))
    fig, (ax_acc, ax_loc) = plt.subplots(1, 2, figsize=(TEXT_WIDTH, 2.4))
    chance = float(df["chance"].dropna().iloc[0]) if "chance" in df and df["chance"].notna().any() \
        else None
    floor_y = chance if chance is not None else float(ok["accuracy"].min())
    notes = []
    for method in methods:
        rows = private[private["method"] == method]
        kind = rows["kind"].iloc[0]
        st = method_style(method, kind)
        good = rows[rows["status"] == "ok"]
        if not good.empty:
            stats = (good.groupby("target_eps")
                     .agg(acc=("accuracy", "mean"), sd=("accuracy", "std"),
                          local=("local_eps_max", "mean"))
                     .reset_index().sort_values("target_eps"))
            ax_acc.errorbar(stats["target_eps"], stats["acc"], yerr=stats["sd"].fillna(0.0),
                            capsize=2, **st)
            ax_loc.plot(stats["target_eps"], stats["local"], **st)
        bad = rows[rows["status"] != "ok"].drop_duplicates("target_eps")
        for _, r in bad.iterrows():
            note_missing(ax_acc, r["target_eps"], floor_y, f"{method}: not reachable",
                         color=st["color"])
            notes.append(f"{method} at central eps = {r['target_eps']:g}: "
                         f"{short_reason(method, r['reason'])}")
    nonpriv = ok[ok["kind"] == "nonprivate"]
    if not nonpriv.empty:
        ax_acc.axhline(nonpriv["accuracy"].mean(), **{**method_style("nonprivate"),
                                                       "marker": "None", "lw": 0.9,
                                                       "label": "non-private (clipped, no noise)"})
    if chance is not None:
        ax_acc.axhline(chance, color="0.55", lw=0.8, ls=(0, (4, 2, 1, 2)),
                       label=f"chance (most frequent class, {chance:.2f})")
        ax_acc.set_ylim(bottom=max(0.0, chance - 0.05))
    targets = sorted(private["target_eps"].dropna().unique())
    for ax in (ax_acc, ax_loc):
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(FixedLocator(targets))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.set_xlabel("central eps after T rounds (target)")
    first = df.iloc[0]
    ax_acc.set_ylabel("test accuracy (mean, bar: sd over seeds)")
    ax_acc.set_title(f"{first['dataset']}, {first['model']}, T = {first['rounds']}, "
                     f"delta = {first['delta']:g}, profile {first['profile']}")
    ax_loc.set_ylabel("per-round local eps (max over users)")
    ax_loc.set_yscale("log")
    ax_loc.set_title(f"calibrated local budget ({first['randomizer']} randomizer)")
    handles, labels = collect_legend(fig)
    finish(fig, handles, labels, ncol=2, notes=notes)
    return fig


def main(*, inputs, outputs, params=None, log=None):
    logger = get_logger(log)
    apply_style()
    df = read_table(inputs["table"], "sgd")
    save_figure(draw(df), [outputs["png"], outputs["pdf"]])
    logger.info("plotted %d methods from %d rows", df["method"].nunique(), len(df))


if "snakemake" in globals():
    run_main(main, snakemake)  # noqa: F821
