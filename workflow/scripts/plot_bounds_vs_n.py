"""Figure of experiment 1: central eps vs n, one panel per eps0, drawn from the table."""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import apply_style, get_logger, method_style, read_table, run_main, save_figure


def main(*, inputs, outputs, params, log=None):
    import matplotlib.pyplot as plt

    logger = get_logger(log)
    apply_style()
    df = read_table(inputs["table"], "bounds_vs_n")
    ok = df[df["status"] == "ok"]
    eps0s = sorted(df["eps0"].unique())
    methods = list(dict.fromkeys(df["method"]))
    fig, axes = plt.subplots(
        1, len(eps0s), figsize=(3.0 * len(eps0s), 3.0), squeeze=False, sharey=False
    )
    for ax, eps0 in zip(axes[0], eps0s, strict=False):
        sub = ok[ok["eps0"] == eps0]
        for method in methods:
            m = sub[sub["method"] == method].sort_values("n")
            if m.empty:
                continue
            style = method_style(method, m["kind"].iloc[0], methods)
            ax.plot(m["n"], m["eps"], **style)
        if sub["below_lower"].notna().any():
            bad = sub[sub["below_lower"].fillna(False).astype(bool)]
            ax.scatter(
                bad["n"],
                bad["eps"],
                s=60,
                facecolors="none",
                edgecolors="red",
                linewidths=1.2,
                zorder=5,
                label="approx. below exact lower bound",
            )
        ax.axhline(eps0, color="0.5", lw=0.8, ls="-.", label="local eps0 (no amplification)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("number of users n")
        ax.set_title(f"eps0 = {eps0:g}, delta = {df['delta'].iloc[0]:g}")
    axes[0][0].set_ylabel("central eps")
    handles, labels = axes[0][0].get_legend_handles_labels()
    for ax in axes[0][1:]:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=False):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(
        handles,
        labels,
        loc="lower center",
        ncol=min(5, len(labels)),
        bbox_to_anchor=(0.5, -0.02 - 0.04 * (len(labels) // 5)),
    )
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    save_figure(fig, [outputs["png"], outputs["pdf"]])
    logger.info("plotted %d methods x %d eps0", len(methods), len(eps0s))


if "snakemake" in globals():
    run_main(main, snakemake)  # noqa: F821
