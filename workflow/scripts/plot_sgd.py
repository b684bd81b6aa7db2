"""Figures of experiment 6: SGD test accuracy vs central eps per accounting and budget profile.

``sgd.png`` (:func:`draw`): one panel per (randomizer, model) row and budget profile column;
in each, test accuracy (mean, bars = standard deviation over seeds) against the central
target eps, one line per accounting (``gdp`` approximate dashed, ``clones`` rigorous solid,
the local-only reference), the non-private run of that model (clipped SGD without noise) and
the chance line (always predicting the most frequent test class).  A target an accounting
cannot reach (no local budget meets it, e.g. the paper's formula has a floor) is marked with
an "x" on the chance line and a note.

``sgd_budgets.png`` (:func:`draw_budgets`): the per-round local budgets each accounting
allows, one panel per randomizer and profile: the largest local eps (solid markers) and the
mean over users (open markers), against the central target (the calibration does not depend
on the model, so the first model's rows are drawn).

One legend per figure, below the panels.
Snakemake interface (rule ``plot_sgd``): input ``table``; outputs ``png``, ``pdf``,
``budgets_png``, ``budgets_pdf``.
"""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from figstyle import (
    TEXT_WIDTH,
    apply_style,
    collect_legend,
    finish,
    method_label,
    method_style,
    note_missing,
    panel_groups,
)
from wfutils import get_logger, read_table, run_main, save_figure


def _in_order(values):
    return list(dict.fromkeys(values))


def _grid(rows, n_cols, height):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(rows), n_cols, figsize=(TEXT_WIDTH, height * len(rows)),
                             squeeze=False, sharex=True)
    return fig, axes


def _log_targets(ax, targets):
    from matplotlib.ticker import FixedLocator, FormatStrFormatter, NullLocator

    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(targets))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))


def _label_panel(ax, targets, *, title, ylabel, bottom):
    """Log x axis at the targets; the column title on the first row, the row label on the
    first column, the x label on the last row."""
    _log_targets(ax, targets)
    if title:
        ax.set_title(title)
    if ylabel:
        ax.set_ylabel(ylabel)
    if bottom:
        ax.set_xlabel("central eps (target)")


def _private(df):
    return df[df["kind"] != "nonprivate"]


def draw(df):
    """Accuracy against the central target: rows (randomizer, model), columns profile."""
    private = _private(df)
    randomizers = _in_order(private["randomizer"])
    models = _in_order(private["model"])
    profiles = _in_order(private["profile"])
    methods = _in_order(private["method"])
    rows = [(r, m) for r in randomizers for m in models]
    fig, axes = _grid(rows, len(profiles), 1.55)
    targets = sorted(private["target_eps"].dropna().unique())
    chance = (float(df["chance"].dropna().iloc[0])
              if "chance" in df and df["chance"].notna().any() else None)
    ok_all = df[df["status"] == "ok"]
    floor_y = chance if chance is not None else float(ok_all["accuracy"].min())
    unreachable = {}
    for i, (rand, model) in enumerate(rows):
        for j, prof in enumerate(profiles):
            ax = axes[i][j]
            cell = private[(private["randomizer"] == rand) & (private["model"] == model)
                           & (private["profile"] == prof)]
            for method in methods:
                mrows = cell[cell["method"] == method]
                if mrows.empty:
                    continue
                st = method_style(method, mrows["kind"].iloc[0])
                good = mrows[mrows["status"] == "ok"]
                if not good.empty:
                    stats = (good.groupby("target_eps")
                             .agg(acc=("accuracy", "mean"), sd=("accuracy", "std"))
                             .reset_index().sort_values("target_eps"))
                    ax.errorbar(stats["target_eps"], stats["acc"],
                                yerr=stats["sd"].fillna(0.0), capsize=2,
                                **{**st, "markersize": 3})
                for _, r in mrows[mrows["status"] != "ok"].drop_duplicates(
                        "target_eps").iterrows():
                    note_missing(ax, r["target_eps"], floor_y, "", color=st["color"])
                    unreachable.setdefault(method, set()).add(float(r["target_eps"]))
            free = ok_all[(ok_all["kind"] == "nonprivate") & (ok_all["model"] == model)]
            if not free.empty:
                ax.axhline(free["accuracy"].mean(),
                           **{**method_style("nonprivate"), "marker": "None", "lw": 0.9,
                              "label": "non-private (clipped, no noise)"})
            if chance is not None:
                ax.axhline(chance, color="0.55", lw=0.8, ls=(0, (4, 2, 1, 2)),
                           label=f"chance (most frequent class, {chance:.2f})")
                ax.set_ylim(max(0.0, chance - 0.05), 1.0)
            _label_panel(ax, targets, title=f"profile {prof}" if i == 0 else "",
                         ylabel=f"{rand}, {model}\ntest accuracy" if j == 0 else "",
                         bottom=i == len(rows) - 1)
    first = df.iloc[0]
    handles, labels = collect_legend(fig)
    notes = [f"{first['dataset']}, T = {first['rounds']} rounds, delta = {first['delta']:g}; "
             "mean over seeds, bars: sd; x on the chance line: target not reachable"]
    notes += [f"{m}: not reachable at central eps "
              f"{', '.join(f'{e:g}' for e in sorted(es))} where marked (no local budget meets "
              "the target)"
              for m, es in unreachable.items()]
    finish(fig, handles, labels, ncol=2, notes=notes)
    return fig


def draw_budgets(df):
    """Per-round local eps (max: filled, mean over users: open) against the central target."""
    private = _private(df)
    private = private[private["status"] == "ok"]
    randomizers = _in_order(_private(df)["randomizer"])
    profiles = _in_order(_private(df)["profile"])
    model = _in_order(_private(df)["model"])[0]
    private = private[private["model"] == model]
    fig, axes = _grid(randomizers, len(profiles), 1.7)
    targets = sorted(_private(df)["target_eps"].dropna().unique())
    # methods calibrated to the same per-round budgets in a panel are drawn once there, and
    # the line's label names them (panel_groups: no line hidden under another)
    kinds = dict(zip(private["method"], private["kind"], strict=False))
    panels = []
    for rand in randomizers:
        for prof in profiles:
            cell = private[(private["randomizer"] == rand) & (private["profile"] == prof)]
            panels.append((f"{rand}/{prof}", {
                m: cell[cell["method"] == m].groupby("target_eps")[
                    ["local_eps_max", "local_eps_mean"]].mean().stack().sort_index()
                for m in _in_order(cell["method"])}))
    draw_in, label = panel_groups(panels, labels={m: method_label(m, kinds[m]) for m in kinds},
                                  rtol=1e-6)
    for i, rand in enumerate(randomizers):
        for j, prof in enumerate(profiles):
            ax = axes[i][j]
            cell = private[(private["randomizer"] == rand) & (private["profile"] == prof)]
            for method in draw_in[f"{rand}/{prof}"]:
                mrows = cell[cell["method"] == method]
                st = {**method_style(method, mrows["kind"].iloc[0]), "label": label[method]}
                stats = (mrows.groupby("target_eps")
                         .agg(top=("local_eps_max", "mean"), mean=("local_eps_mean", "mean"))
                         .reset_index().sort_values("target_eps"))
                ax.plot(stats["target_eps"], stats["top"], **{**st, "markersize": 3})
                ax.plot(stats["target_eps"], stats["mean"],
                        **{**st, "markersize": 3, "markerfacecolor": "white", "label": None})
            ax.set_yscale("log")
            _label_panel(ax, targets, title=f"profile {prof}" if i == 0 else "",
                         ylabel=f"{rand}\nper-round local eps" if j == 0 else "",
                         bottom=i == len(randomizers) - 1)
    handles, labels = collect_legend(fig)
    finish(fig, handles, labels, ncol=2,
           notes=["filled markers: largest local eps; open markers: mean over users "
                  f"(calibrated for {model}; the calibration does not depend on the model)"])
    return fig


def main(*, inputs, outputs, params=None, log=None):
    logger = get_logger(log)
    apply_style()
    df = read_table(inputs["table"], "sgd")
    save_figure(draw(df), [outputs["png"], outputs["pdf"]])
    save_figure(draw_budgets(df), [outputs["budgets_png"], outputs["budgets_pdf"]])
    logger.info("plotted %d methods from %d rows", df["method"].nunique(), len(df))


if "snakemake" in globals():
    run_main(main, snakemake)  # noqa: F821
