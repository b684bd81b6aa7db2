"""Figures of experiments 4 and 5 (mean / frequency estimation), drawn from their tables only.

One row of panels per mechanism; per profile two columns: MSE vs n (at the table's fixed
target eps) and MSE vs target eps (at its fixed n), log-log, with the confidence interval of
each point as a shaded band (its lower end drawn at no less than MSE / 100 on the log axis).
One colour per bound (``wfutils.method_style``: approximate bounds are dashed and marked
"(approx.)" in the legend, exact lower bounds dotted); the references local-only and central
Laplace in grey and black.  Points where the bound's theorem does not cover the mechanism
(``covered`` false) have hollow markers; rows that are not applicable are left out.

Snakemake interface (rules ``plot_mean_estimation``, ``plot_frequency_estimation``): input
``table``; outputs ``png``, ``pdf``; params ``kind`` (``mean_estimation`` or
``frequency_estimation``, the table kind of :mod:`tables`), ``title``, ``ylabel``.
"""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import apply_style, get_logger, method_style, read_table, run_main, save_figure

REFERENCE_STYLE = {
    "local_only": {"color": "#7f7f7f", "linestyle": "-.", "marker": "v",
                   "label": "local only (no shuffling)"},
    "central_laplace": {"color": "#000000", "linestyle": ":", "marker": "*",
                        "label": "central Laplace"},
}


def style_for(method, kind, methods):
    if method in REFERENCE_STYLE:
        return dict(REFERENCE_STYLE[method])
    return method_style(method, kind, methods)


def draw(df, *, title="", ylabel="MSE"):
    """The figure for a tidy utility table (see module docstring)."""
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.ticker import NullFormatter

    ok = df[df["status"] == "ok"].copy()
    if ok.empty:
        fig, ax = plt.subplots(figsize=(4, 2))
        ax.text(0.5, 0.5, "no applicable point", ha="center", va="center")
        ax.set_axis_off()
        return fig
    mechanisms = [m for m in dict.fromkeys(ok["mechanism"]) if m != "central_laplace"]
    profiles = list(dict.fromkeys(ok["profile"]))
    methods = [m for m in dict.fromkeys(df["method"]) if m not in REFERENCE_STYLE]
    ncols = 2 * len(profiles)
    fig, axes = plt.subplots(len(mechanisms), ncols, figsize=(2.6 * ncols, 2.2 * len(mechanisms)),
                             squeeze=False, sharey="row")
    handles = {}
    for i, mech in enumerate(mechanisms):
        for j, prof in enumerate(profiles):
            for k, (sweep, xcol, xlabel) in enumerate(
                [("n", "n", "n (users)"), ("eps", "target_eps", "central target eps")]
            ):
                ax = axes[i, 2 * j + k]
                sel = ok[(ok["profile"] == prof) & (ok["sweep"] == sweep)
                         & ((ok["mechanism"] == mech) | (ok["mechanism"] == "central_laplace"))]
                for method, g in sel.groupby("method", sort=False):
                    g = g.sort_values(xcol)
                    st = style_for(method, g["kind"].iloc[0], methods)
                    label = st.pop("label")
                    (line,) = ax.plot(g[xcol], g["mse"], **st)
                    low = np.maximum(g["mse_ci_low"], g["mse"] / 100.0)
                    ax.fill_between(g[xcol], low, g["mse_ci_high"], color=st["color"],
                                    alpha=0.12, linewidth=0)
                    hollow = g[~g["covered"].astype(bool)]
                    if not hollow.empty:
                        ax.plot(hollow[xcol], hollow["mse"], linestyle="none",
                                marker=st["marker"], markerfacecolor="white",
                                markeredgecolor=st["color"])
                    handles.setdefault(label, line)
                ax.set_xscale("log")
                ax.set_yscale("log")
                ticks = sorted(set(sel[xcol]))
                if ticks:
                    ax.set_xticks(ticks)
                    ax.set_xticklabels([f"{t:g}" for t in ticks], rotation=45 if k == 0 else 0)
                ax.xaxis.set_minor_formatter(NullFormatter())
                row = ok[(ok["mechanism"] == mech) | (ok["mechanism"] == "central_laplace")]
                ax.set_ylim(row["mse"].min() / 5.0, row["mse"].max() * 5.0)
                if i == len(mechanisms) - 1:
                    ax.set_xlabel(xlabel)
                if 2 * j + k == 0:
                    ax.set_ylabel(f"{mech}\n{ylabel}")
                if i == 0:
                    fixed = (f"eps = {sel['target_eps'].iloc[0]:g}" if sweep == "n" and len(sel)
                             else f"n = {sel['n'].iloc[0]:g}" if len(sel) else "")
                    ax.set_title(f"{prof}, {fixed}")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.legend(list(handles.values()), list(handles), loc="upper center",
               ncol=min(len(handles), 5), bbox_to_anchor=(0.5, 0.0), frameon=False)
    return fig


def main(*, inputs, outputs, params, log=None):
    logger = get_logger(log)
    apply_style()
    df = read_table(inputs["table"], params["kind"])
    fig = draw(df, title=params.get("title", ""), ylabel=params.get("ylabel", "MSE"))
    save_figure(fig, [outputs["png"], outputs["pdf"]])
    logger.info("plotted %d rows of %s", len(df), inputs["table"])


if "snakemake" in globals():
    run_main(main, snakemake)  # noqa: F821
