"""Figure of experiment 7: seconds of one eps(delta) evaluation vs n for each bound (log-log),
on a personalized profile of n distinct budgets.

Two panels with one y axis: the rigorous upper bounds, then the approximations and exact lower
bounds; each panel has its own legend below it.  Curves within a factor
:data:`SAME_TIME` of each other at every n cannot be told apart on axes spanning several
decades, so they are drawn once and named together (``a = b``): no legend entry names a line
hidden under another.  A bound that does not apply at some n has no point there (its reason is
in the table's ``reason`` column, as the caption says).  Styles: :mod:`figstyle`.

Snakemake interface (rule ``plot_runtime``): input ``table``; outputs ``png``, ``pdf``.
"""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from figstyle import (
    FONT_SIZE,
    KIND_NAME,
    TEXT_WIDTH,
    apply_style,
    coincident_groups,
    method_style,
    style_of,
)
from wfutils import get_logger, read_table, run_main, save_figure

#: Relative tolerance under which two timing curves are one line to the eye (log axes over
#: several decades: a factor 1.25 is under a marker's width).
SAME_TIME = 0.25

#: The panels: (title, kinds drawn there).
PANELS = (("rigorous upper bounds", ("upper",)),
          ("approximations and exact lower bounds", ("approximate", "lower")))


#: Who a method comes from, said after its name in the legend (published: nothing).
_ROLE = {"project": " (this project)", "paper": " (paper)"}


def _label(group, kinds, show_kind, width):
    """The registered names joined by ``=`` (the display names' citations are in the other
    figures and the caption), the kind when the panel mixes kinds, wrapped to ``width``."""
    import textwrap

    names = " = ".join(m + _ROLE.get(style_of(m).role, "") for m in group)
    text = f"{names}, {KIND_NAME[kinds[group[0]]]}" if show_kind else names
    return "\n".join(textwrap.wrap(text, width, subsequent_indent="  "))


def draw(df):
    import matplotlib.pyplot as plt

    ok = df[(df["status"] == "ok") & df["seconds_min"].notna()]
    kinds = dict(zip(ok["method"], ok["kind"], strict=False))
    methods = list(dict.fromkeys(ok["method"]))
    per_panel = []
    for _, panel_kinds in PANELS:
        ms = sorted((m for m in methods if kinds[m] in panel_kinds),
                    key=lambda m: (panel_kinds.index(kinds[m]), style_of(m).role != "project"))
        curves = {m: ok[ok["method"] == m].set_index("n")["seconds_min"].sort_index()
                  for m in ms}
        # only methods of one kind are joined (the label names the kind once)
        groups = [g for k in panel_kinds
                  for g in coincident_groups({m: c for m, c in curves.items() if kinds[m] == k},
                                             rtol=SAME_TIME)]
        per_panel.append((curves, groups))
    # characters per legend line under one panel (DejaVu Sans, about 0.56 em per character)
    width = int((TEXT_WIDTH / len(PANELS) - 0.55) / (FONT_SIZE * 0.56 / 72))
    rows = max([sum(_label(g, kinds, len(pk) > 1, width).count("\n") + 1 for g in groups)
                for (_, pk), (_, groups) in zip(PANELS, per_panel, strict=True)] + [1])
    legend_h = rows * FONT_SIZE * 1.55 / 72 + 0.15
    axes_h = 2.3
    fig, axes = plt.subplots(1, len(PANELS), figsize=(TEXT_WIDTH, axes_h + legend_h + 0.55),
                             sharey=True, squeeze=False)
    bottom = (legend_h + 0.42) / (axes_h + legend_h + 0.55)
    fig.subplots_adjust(left=0.09, right=0.99, top=1 - 0.3 / (axes_h + legend_h + 0.55),
                        bottom=bottom, wspace=0.08)
    for ax, (title, panel_kinds), (curves, groups) in zip(axes[0], PANELS, per_panel,
                                                           strict=True):
        for group in groups:
            s = curves[group[0]]
            st = method_style(group[0], kinds[group[0]],
                              label=_label(group, kinds, len(panel_kinds) > 1, width))
            ax.plot(s.index, s.to_numpy(), **st)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(title)
        ax.set_xlabel("number of users n (all budgets distinct)")
        handles, labels = ax.get_legend_handles_labels()
        if labels:
            ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(-0.02, -0.2),
                      frameon=False, ncol=1, borderaxespad=0.0)
    axes[0][0].set_ylabel(f"seconds per eps(delta) (min of {int(df['repeats'].iloc[0])})")
    fig.suptitle(f"profile {df['profile'].iloc[0]}, delta = {df['delta'].iloc[0]:g}", y=0.995)
    return fig


def main(*, inputs, outputs, params=None, log=None):
    logger = get_logger(log)
    apply_style()
    df = read_table(inputs["table"], "runtime")
    save_figure(draw(df), [outputs["png"], outputs["pdf"]])
    logger.info("plotted runtime of %d methods", df["method"].nunique())


if "snakemake" in globals():
    run_main(main, snakemake)  # noqa: F821
