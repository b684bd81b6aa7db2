"""Figure of experiment 7: seconds of eps(delta) vs n for each bound (log-log)."""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import apply_style, get_logger, method_style, read_table, run_main, save_figure


def main(*, inputs, outputs, params, log=None):
    import matplotlib.pyplot as plt

    logger = get_logger(log)
    apply_style()
    df = read_table(inputs["table"], "runtime")
    ok = df[df["status"] == "ok"]
    methods = list(dict.fromkeys(df["method"]))
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    for method in methods:
        m = ok[ok["method"] == method].sort_values("n")
        if m.empty:
            continue
        ax.plot(m["n"], m["seconds_min"], **method_style(method, m["kind"].iloc[0], methods))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of users n")
    ax.set_ylabel("seconds for eps(delta) (min of repeats)")
    ax.set_title(f"profile {df['profile'].iloc[0]}, delta = {df['delta'].iloc[0]:g}")
    ax.legend(loc="best", ncol=2)
    save_figure(fig, [outputs["png"], outputs["pdf"]])
    logger.info("plotted runtime of %d methods", len(methods))


if "snakemake" in globals():
    run_main(main, snakemake)  # noqa: F821
