"""Figure of experiment 7: seconds of one eps(delta) evaluation vs n for each bound (log-log),
on a personalized profile of n distinct budgets.  Styles: :mod:`figstyle`; the legend is below
the axes, and a note lists the bounds that do not apply at some n and why.

Snakemake interface (rule ``plot_runtime``): input ``table``; outputs ``png``, ``pdf``.
"""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from figstyle import TEXT_WIDTH, apply_style, finish, method_style, missing_note
from wfutils import get_logger, read_table, run_main, save_figure


def draw(df):
    import matplotlib.pyplot as plt

    ok = df[df["status"] == "ok"]
    methods = list(dict.fromkeys(df["method"]))
    fig, ax = plt.subplots(figsize=(TEXT_WIDTH * 0.6, 2.4))
    for method in methods:
        m = ok[ok["method"] == method].sort_values("n")
        if m.empty:
            continue
        ax.plot(m["n"], m["seconds_min"], **method_style(method, m["kind"].iloc[0]))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of users n (all budgets distinct)")
    ax.set_ylabel(f"seconds per eps(delta) (min of {int(df['repeats'].iloc[0])})")
    ax.set_title(f"profile {df['profile'].iloc[0]}, delta = {df['delta'].iloc[0]:g}")
    handles, labels = ax.get_legend_handles_labels()
    finish(fig, handles, labels, ncol=2, notes=missing_note(df, total_by=["n"]))
    return fig


def main(*, inputs, outputs, params=None, log=None):
    logger = get_logger(log)
    apply_style()
    df = read_table(inputs["table"], "runtime")
    save_figure(draw(df), [outputs["png"], outputs["pdf"]])
    logger.info("plotted runtime of %d methods", df["method"].nunique())


if "snakemake" in globals():
    run_main(main, snakemake)  # noqa: F821
