"""Figure of experiment 6: SGD test accuracy vs central eps per accounting, from the table."""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import apply_style, get_logger, method_style, read_table, run_main, save_figure


def main(*, inputs, outputs, params, log=None):
    import matplotlib.pyplot as plt

    logger = get_logger(log)
    apply_style()
    df = read_table(inputs["table"], "sgd")
    ok = df[df["status"] == "ok"]
    private = ok[ok["kind"] != "nonprivate"]
    methods = list(dict.fromkeys(private["method"]))
    fig, (ax_acc, ax_loc) = plt.subplots(1, 2, figsize=(7.0, 3.0))
    for method in methods:
        sub = private[private["method"] == method]
        stats = (
            sub.groupby("target_eps")
            .agg(acc=("accuracy", "mean"), sd=("accuracy", "std"), scale=("local_eps_max", "mean"))
            .reset_index()
            .sort_values("target_eps")
        )
        kind = sub["kind"].iloc[0]
        style = method_style(method, kind, methods)
        if method == "local":
            style.update(linestyle=":", label="local only (no shuffling)")
        ax_acc.errorbar(
            stats["target_eps"], stats["acc"], yerr=stats["sd"].fillna(0.0), capsize=2, **style
        )
        ax_loc.plot(stats["target_eps"], stats["scale"], **style)
    nonpriv = ok[ok["kind"] == "nonprivate"]
    if not nonpriv.empty:
        ax_acc.axhline(
            nonpriv["accuracy"].mean(),
            color="0.3",
            lw=0.9,
            ls="-.",
            label="non-private (clipped, no noise)",
        )
    from matplotlib.ticker import FormatStrFormatter, NullFormatter

    targets = sorted(private["target_eps"].dropna().unique())
    for ax in (ax_acc, ax_loc):
        ax.set_xscale("log")
        ax.set_xticks(targets)
        ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("central eps (target)")
    first = df.iloc[0]
    ax_acc.set_ylabel("test accuracy (mean +- sd over seeds)")
    ax_acc.set_title(
        f"{first['dataset']}, {first['model']}, T = {first['rounds']}, delta = {first['delta']:g}"
    )
    ax_loc.set_ylabel("per-round local eps (max over users)")
    ax_loc.set_yscale("log")
    ax_loc.set_title(f"calibrated local budget ({first['randomizer']})")
    ax_acc.legend(loc="lower right")
    fig.tight_layout()
    save_figure(fig, [outputs["png"], outputs["pdf"]])
    logger.info("plotted %d methods from %d rows", len(methods), len(df))


if "snakemake" in globals():
    run_main(main, snakemake)  # noqa: F821
