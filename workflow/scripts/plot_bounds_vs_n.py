"""Figures of experiment 1: central eps vs n for identical budgets, one panel per eps0, drawn
only from the table.

*Main figure* (``png``, ``pdf``): the paper's ``gdp`` (approximation, dashed), the project's
rigorous ``clones`` (solid, thick), the best published rigorous bound at each point (the
pointwise minimum over the published rigorous upper bounds; its line names the bounds that
attain it) and the highest exact lower bound (dotted), with the region below that lower bound
shaded ("no valid bound can be here") and red rings where ``gdp`` falls into it.  Curves that
coincide at every point are drawn once and named together in the legend (at identical budgets
``clones`` equals ``fmt23_numerical``).

*Appendix figure* (``all_png``, ``all_pdf``): every bound of the table, 2 x 2 panels, coinciding
curves named together; vacuous points (the bound equals eps0: no amplification shown) as hollow
markers; a note under the figure lists the points a bound does not cover and why.

Styles: :mod:`figstyle` (one per method).  Snakemake interface (rule ``plot_bounds_vs_n``):
input ``table``; outputs ``png``, ``pdf``, ``all_png``, ``all_pdf``.
"""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from figstyle import (
    TEXT_WIDTH,
    apply_style,
    collect_legend,
    every_bound_panels,
    finish,
    main_bound_panels,
    missing_note,
    vacuous_handles,
)
from wfutils import get_logger, read_table, run_main, save_figure

POINT = ("eps0", "n")


def _decor(ax, eps0, delta, *, ylabel):
    ax.axhline(eps0, color="0.5", lw=0.7, ls=(0, (1, 3)), zorder=1)
    ax.set_xlabel("number of users n")
    ax.set_title(f"eps0 = {eps0:g}, delta = {delta:g}")
    if ylabel:
        ax.set_ylabel("central eps")


def _eps0_legend():
    from matplotlib.lines import Line2D

    return Line2D([], [], color="0.5", lw=0.7, ls=(0, (1, 3))), "eps0 (the local budget)"


def draw_main(df):
    """The main figure (see module docstring)."""
    import matplotlib.pyplot as plt

    ok = df[df["status"] == "ok"]
    eps0s = sorted(df["eps0"].unique())
    delta = df["delta"].iloc[0]
    fig, axes = plt.subplots(1, len(eps0s), figsize=(TEXT_WIDTH, 2.1), squeeze=False)
    panels = {(e,): ax for e, ax in zip(eps0s, axes[0], strict=True)}
    main_bound_panels(panels, ok, panels=("eps0",), point=POINT)
    for k, ((eps0,), ax) in enumerate(panels.items()):
        _decor(ax, eps0, delta, ylabel=k == 0)
    handles, labels = collect_legend(fig)
    h, lab = _eps0_legend()
    finish(fig, [*handles, h], [*labels, lab], ncol=2)
    return fig


def draw_all(df):
    """The appendix figure: every bound (see module docstring)."""
    import matplotlib.pyplot as plt

    ok = df[df["status"] == "ok"]
    eps0s = sorted(df["eps0"].unique())
    delta = df["delta"].iloc[0]
    ncols = 2
    nrows = -(-len(eps0s) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(TEXT_WIDTH, 2.0 * nrows + 0.2),
                             squeeze=False)
    panels = {(e,): ax for e, ax in zip(eps0s, axes.flat, strict=False)}
    every_bound_panels(panels, ok, panels=("eps0",), point=POINT)
    for k, ((eps0,), ax) in enumerate(panels.items()):
        _decor(ax, eps0, delta, ylabel=k % ncols == 0)
    for ax in axes.flat[len(eps0s):]:
        ax.set_axis_off()
    handles, labels = collect_legend(fig)
    for h, lab in (vacuous_handles(), _eps0_legend()):
        handles.append(h)
        labels.append(lab.replace("max eps_i", "eps0"))
    finish(fig, handles, labels, ncol=2, notes=missing_note(df, total_by=list(POINT)))
    return fig


def main(*, inputs, outputs, params=None, log=None):
    logger = get_logger(log)
    apply_style()
    df = read_table(inputs["table"], "bounds_vs_n")
    save_figure(draw_main(df), [outputs["png"], outputs["pdf"]])
    save_figure(draw_all(df), [outputs["all_png"], outputs["all_pdf"]])
    logger.info("plotted %d methods x %d eps0", df["method"].nunique(), df["eps0"].nunique())


if "snakemake" in globals():
    run_main(main, snakemake)  # noqa: F821
