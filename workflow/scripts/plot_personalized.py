"""Figure of experiment 2: central eps vs n, one column per budget profile, one row per local
delta0 (pure LDP first), one line per method; drawn only from the table.

Approximate bounds are dashed and say so in the legend, exact lower bounds dotted
(:func:`wfutils.method_style`).  Points where a bound does not apply are left out.

Snakemake interface (rule ``plot_personalized``): input ``table``; outputs ``png``, ``pdf``.
"""


import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import apply_style, get_logger, method_style, read_table, run_main, save_figure


def main(*, inputs, outputs, params=None, log=None):
    import matplotlib.pyplot as plt

    logger = get_logger(log)
    apply_style()
    df = read_table(inputs["table"], "personalized")
    ok = df[df["status"] == "ok"]
    profiles = list(dict.fromkeys(df["profile"]))
    delta0s = sorted(df["delta0"].unique())
    methods = list(dict.fromkeys(df["method"]))
    fig, axes = plt.subplots(len(delta0s), len(profiles), squeeze=False,
                             figsize=(2.8 * len(profiles), 2.6 * len(delta0s)), sharex=True)
    for i, delta0 in enumerate(delta0s):
        for j, prof in enumerate(profiles):
            ax = axes[i][j]
            sub = ok[(ok["profile"] == prof) & (ok["delta0"] == delta0)]
            for method in methods:
                m = sub[sub["method"] == method].sort_values("n")
                if m.empty:
                    continue
                ax.plot(m["n"], m["eps"], **method_style(method, m["kind"].iloc[0], methods))
            ax.set_xscale("log")
            ax.set_yscale("log")
            local = "pure LDP" if delta0 == 0 else f"local delta = {delta0:g}"
            ax.set_title(f"{prof}\n{local}")
            if i == len(delta0s) - 1:
                ax.set_xlabel("number of users n")
            if j == 0:
                ax.set_ylabel(f"central eps (delta = {df['delta'].iloc[0]:g})")
    handles, labels = [], []
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    ncol = min(5, max(1, len(labels)))
    fig.legend(handles, labels, loc="lower center", ncol=ncol, bbox_to_anchor=(0.5, 0.0))
    rows = -(-len(labels) // ncol)
    fig.tight_layout(rect=(0, 0.04 + 0.035 * rows, 1, 1))
    save_figure(fig, [outputs["png"], outputs["pdf"]])
    logger.info("plotted %d profiles x %d delta0 x %d methods", len(profiles), len(delta0s),
                len(methods))


if "snakemake" in globals():
    run_main(main, snakemake)  # noqa: F821
