"""Figures of experiments 4 and 5 (mean / frequency estimation), drawn from their tables only.

What shows the effect of a bound on utility is how much more (or less) noise the users must add
when the local budgets are calibrated with it instead of with the paper's ``gdp``.  So the
figures draw, for each bound, **MSE(bound) / MSE(gdp)** at the same point (same mechanism,
profile, n and target central eps): above 1, calibrating with that bound costs accuracy; below
1, it gains.  ``gdp`` itself is the line at 1.  Lines are the ratio of the closed-form MSEs
(``mse_theory``, the estimator's exact variance at the calibrated budgets: no sampling noise);
markers are the measured ratio with an approximate 95% interval (the two MSE intervals combined
on the log scale by the delta method, the runs treated as independent), dodged slightly along
x so that bars do not hide each other.  Marker fill says whether the bound's theorem covers the
mechanism (``covered``): filled = covered, hollow = not covered (the run is shown for reference,
its privacy claim does not hold for this mechanism).  Points missing for a bound (it cannot
certify the target with any local budget) are listed in a note under the figure.

*Main figure* (``png``, ``pdf``): one mechanism (``params.main_mechanism``, default the first
of the table), one row per profile (the first three of the table): ratio vs n at the fixed
target eps, ratio vs target eps at the fixed n, and the absolute MSE vs n with the references
(local randomizer without shuffling, central Laplace) for scale.

*Appendix figure* (``all_png``, ``all_pdf``): every mechanism and profile, the two ratio panels
each (one row per mechanism with at most two profiles, else one row per mechanism and profile).

Snakemake interface (rules ``plot_mean_estimation``, ``plot_frequency_estimation``): input
``table``; outputs ``png``, ``pdf``, ``all_png``, ``all_pdf``; params ``kind`` (the table kind),
``title``, ``ylabel``, ``main_mechanism`` (optional).
"""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from figstyle import (
    REFERENCES,
    TEXT_WIDTH,
    apply_style,
    coincident_groups,
    collect_legend,
    finish,
    method_label,
    method_style,
    short_reason,
    style_of,
)
from wfutils import get_logger, read_table, run_main, save_figure

BASE = "gdp"
SWEEPS = (("n", "n", "number of users n"), ("eps", "target_eps", "target central eps"))


def ratios(df):
    """Rows of the bounds (not references) with ``ratio`` = mse / mse of ``gdp`` at the same
    (mechanism, profile, sweep, n, target_eps) and its approximate 95% interval
    ``ratio_low``, ``ratio_high``."""
    import numpy as np

    ok = df[(df["status"] == "ok") & ~df["method"].isin(list(REFERENCES))].copy()
    key = ["mechanism", "profile", "sweep", "n", "target_eps"]
    base = ok[ok["method"] == BASE].set_index(key)
    base = base[["mse", "mse_ci_low", "mse_ci_high", "mse_theory"]].add_suffix("_base")
    out = ok.join(base, on=key)
    out = out[out["mse_base"].notna()].copy()

    def half(mse, lo, hi):
        lo = np.maximum(lo.astype(float), mse.astype(float) / 100.0)
        return (np.log(hi.astype(float)) - np.log(lo)) / 2.0

    h = np.sqrt(half(out["mse"], out["mse_ci_low"], out["mse_ci_high"]) ** 2
                + np.where(out["method"] == BASE, 0.0,
                           half(out["mse_base"], out["mse_ci_low_base"],
                                out["mse_ci_high_base"]) ** 2))
    out["ratio"] = out["mse"] / out["mse_base"]
    out["ratio_theory"] = out["mse_theory"] / out["mse_theory_base"]
    out["ratio_low"] = out["ratio"] * np.exp(-h)
    out["ratio_high"] = out["ratio"] * np.exp(h)
    return out


def _log2_axis(ax):
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    lo, hi = ax.get_ylim()
    import math

    a, b = math.floor(math.log2(max(lo, 1e-6))), math.ceil(math.log2(hi))
    step = max(1, (b - a) // 6)
    ticks = [2.0 ** k for k in range(a, b + 1) if k % step == 0]  # 1 is always a tick
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(
        lambda v, _: f"{v:g}" if v >= 1 else f"1/{1 / v:g}"))


def _x_ticks(ax, values):
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    ax.xaxis.set_major_locator(FixedLocator(sorted(set(values))))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


def _groups(rows, xcol):
    """Bounds whose calibrated local budgets agree to 1e-4 (relative) at every x as groups:
    their runs are the same up to noise, and one curve would hide the other."""
    curves = {m: g.set_index(xcol)["eps0"].sort_index()
              for m, g in rows.groupby("method", sort=False)}
    return coincident_groups(curves, rtol=1e-4)


def joined_labels(panels):
    """Legend label of each bound drawn for others too: ``panels`` is a list of
    ``(rows, xcol, where)``; a bound whose calibrated budgets equal others' in some panels gets
    one label, the same in every panel (so the legend has one entry per line style), naming
    the bounds it stands for and where."""
    partners: dict = {}
    kinds: dict = {}
    for rows, xcol, where in panels:
        kinds.update(zip(rows["method"], rows["kind"], strict=False))
        for group in _groups(rows, xcol):
            if BASE in group:
                continue
            for other in group[1:]:
                wheres = partners.setdefault(group[0], {}).setdefault(other, [])
                if where not in wheres:
                    wheres.append(where)
    labels = {}
    for rep, others in partners.items():
        parts = [f"{style_of(o).label} on {', '.join(ws)}" for o, ws in others.items()]
        labels[rep] = (f"{method_label(rep, kinds[rep])}; drawn for {'; '.join(parts)} "
                       "(calibrated budgets within 0.01%)")
    return labels


def _ratio_panel(ax, rows, xcol, labels=None):
    """One ratio panel: per bound the closed-form ratio (line) and the measured ratio with its
    95% interval (marker and bar, dodged along x); hollow markers where not covered.  Bounds
    calibrated to the same local budgets are drawn once, labelled by ``labels`` (from
    :func:`joined_labels`, the same in every panel)."""
    import numpy as np

    ax.set_xscale("log")
    ax.set_yscale("log")
    base = method_style(BASE, "approximate")
    ax.axhline(1.0, color=base["color"], lw=1.0, ls="--", zorder=3, label=base["label"])
    groups = [g for g in _groups(rows, xcol) if BASE not in g]
    for j, group in enumerate(groups):
        method = group[0]
        g = rows[rows["method"] == method].sort_values(xcol)
        st = method_style(method, g["kind"].iloc[0])
        if labels and method in labels:
            st["label"] = labels[method]
        ax.plot(g[xcol], g["ratio_theory"], **{**st, "marker": "None"})
        dodge = 2.0 ** (0.06 * (j - (len(groups) - 1) / 2))
        x = g[xcol].to_numpy(float) * dodge
        y = g["ratio"].to_numpy(float)
        err = np.vstack([y - g["ratio_low"].to_numpy(float), g["ratio_high"].to_numpy(float) - y])
        ax.errorbar(x, y, yerr=err, fmt="none", ecolor=st["color"], elinewidth=0.6, capsize=0,
                    alpha=0.7, zorder=st["zorder"])
        cov = (g["covered"].fillna(False).astype(bool) | (g["kind"] != "upper")).to_numpy()
        ax.plot(x[cov], y[cov], linestyle="none", marker=st["marker"], color=st["color"],
                markersize=3, zorder=st["zorder"] + 0.1)
        ax.plot(x[~cov], y[~cov], linestyle="none", marker=st["marker"], markersize=3,
                markerfacecolor="white", markeredgecolor=st["color"], zorder=st["zorder"] + 0.1)
    _x_ticks(ax, rows[xcol])
    _log2_axis(ax)


def _absolute_panel(ax, df, mech, prof, ylabel, labels=None):
    """Absolute MSE vs n at the fixed target eps, every bound and the references; bounds
    calibrated to the same local budgets are drawn once (as in the ratio panels, ``labels``)."""
    sel = df[(df["status"] == "ok") & (df["sweep"] == "n")
             & (((df["mechanism"] == mech) & (df["profile"] == prof))
                | (df["method"] == "central_laplace"))]
    import pandas as pd

    # central Laplace does not depend on the profile: one curve
    cl = sel[sel["method"] == "central_laplace"].drop_duplicates(["n"])
    sel = pd.concat([sel[sel["method"] != "central_laplace"], cl])
    ax.set_xscale("log")
    ax.set_yscale("log")
    bounds = sel[sel["eps0"].notna()]
    hidden = {m for g in _groups(bounds, "n") for m in g[1:]} if len(bounds) else set()
    for method, g in sel.groupby("method", sort=False):
        if method in hidden:  # its runs are another bound's (same local budgets)
            continue
        g = g.sort_values("n")
        st = method_style(method, g["kind"].iloc[0])
        if labels and method in labels:
            st["label"] = labels[method]
        ax.plot(g["n"], g["mse"], **{**st, "markersize": 2.5})
    _x_ticks(ax, sel["n"])
    ax.set_ylabel(ylabel)
    ax.set_xlabel("number of users n")


def _missing_lines(df, mechanisms):
    lines = []
    bad = df[(df["status"] != "ok") & df["mechanism"].isin(mechanisms)]
    for (mech, method), g in bad.groupby(["mechanism", "method"], sort=False):
        total = len(df[(df["mechanism"] == mech) & (df["method"] == method)]
                    .drop_duplicates(["profile", "sweep", "n", "target_eps"]))
        miss = len(g.drop_duplicates(["profile", "sweep", "n", "target_eps"]))
        text = str(g["reason"].iloc[0])
        reason = short_reason(method, text.split("last reason: ")[-1])
        lines.append(f"{mech}, {method}: no run at {miss} of {total} points; {reason}")
    return lines


def _marker_legend():
    from matplotlib.lines import Line2D

    return ([Line2D([], [], linestyle="none", marker="o", color="0.3"),
             Line2D([], [], linestyle="none", marker="o", markerfacecolor="white",
                    markeredgecolor="0.3")],
            ["filled marker: the bound covers the mechanism (line: closed-form ratio; "
             "marker and bar: measured, 95%)",
             "hollow marker: the bound does not cover it (privacy claim not valid here)"])


def _fixed(rows, sweep):
    if rows.empty:
        return ""
    return (f"eps = {rows['target_eps'].iloc[0]:g}" if sweep == "n"
            else f"n = {int(rows['n'].iloc[0]):,}")


def draw_main(df, *, mechanism=None, title="", ylabel="MSE"):
    import matplotlib.pyplot as plt

    r = ratios(df)
    mechanisms = [m for m in dict.fromkeys(df["mechanism"]) if m != "central_laplace"]
    mech = mechanism or mechanisms[0]
    if mech not in mechanisms:
        raise ValueError(f"main_mechanism {mech!r} is not in the table (it has {mechanisms})")
    profiles = list(dict.fromkeys(df[df["mechanism"] == mech]["profile"]))[:3]
    fig, axes = plt.subplots(len(profiles), 3, squeeze=False,
                             figsize=(TEXT_WIDTH, 1.85 * len(profiles) + 0.2))
    def sel(prof, sweep):
        return r[(r["mechanism"] == mech) & (r["profile"] == prof) & (r["sweep"] == sweep)]

    def absolute(prof):  # the rows of the absolute panel (sweep over n, every bound)
        a = df[(df["status"] == "ok") & (df["sweep"] == "n") & (df["mechanism"] == mech)
               & (df["profile"] == prof) & df["eps0"].notna()]
        return a

    labels = joined_labels([(sel(prof, sweep), xcol, prof) for prof in profiles
                            for sweep, xcol, _ in SWEEPS]
                           + [(absolute(prof), "n", prof) for prof in profiles])
    for i, prof in enumerate(profiles):
        for k, (sweep, xcol, xlabel) in enumerate(SWEEPS):
            ax = axes[i][k]
            rows = sel(prof, sweep)
            _ratio_panel(ax, rows, xcol, labels)
            ax.set_title(f"{prof}, {_fixed(rows, sweep)}")
            ax.set_xlabel(xlabel)
            if k == 0:
                ax.set_ylabel(f"{ylabel.split()[0]} ratio to gdp")
        _absolute_panel(axes[i][2], df, mech, prof, ylabel, labels)
        axes[i][2].set_title(f"{prof}: absolute {ylabel}")
    handles, labels = collect_legend(fig)
    mh, ml = _marker_legend()
    finish(fig, [*handles, *mh], [*labels, *ml], ncol=2,
           notes=_missing_lines(df, [mech]), top_title=f"{title} ({mech})" if title else mech)
    return fig


def draw_all(df, *, title="", ylabel="MSE"):
    """Every mechanism: with at most two profiles one row per mechanism (two panels per
    profile); with more, one row per (mechanism, profile) so that the figure keeps the page
    width."""
    import matplotlib.pyplot as plt

    r = ratios(df)
    mechanisms = [m for m in dict.fromkeys(df["mechanism"]) if m != "central_laplace"]
    profiles = list(dict.fromkeys(df[df["mechanism"].isin(mechanisms)]["profile"]))
    if len(profiles) <= 2:
        rows_of = [(m, profiles) for m in mechanisms]
    else:
        rows_of = [(m, [p]) for m in mechanisms for p in profiles]
    ncols = 2 * max(len(ps) for _, ps in rows_of)
    fig, axes = plt.subplots(len(rows_of), ncols, squeeze=False,
                             figsize=(TEXT_WIDTH, 1.55 * len(rows_of) + 0.3))
    def sel(mech, prof, sweep):
        return r[(r["mechanism"] == mech) & (r["profile"] == prof) & (r["sweep"] == sweep)]

    labels = joined_labels([(sel(mech, prof, sweep), xcol, f"{mech}/{prof}")
                            for mech, profs in rows_of for prof in profs
                            for sweep, xcol, _ in SWEEPS])
    for i, (mech, profs) in enumerate(rows_of):
        for j, prof in enumerate(profs):
            for k, (sweep, xcol, xlabel) in enumerate(SWEEPS):
                ax = axes[i][2 * j + k]
                rows = sel(mech, prof, sweep)
                if rows.empty:
                    ax.text(0.5, 0.5, "no run", ha="center", va="center",
                            transform=ax.transAxes)
                    ax.set_axis_off()
                    continue
                _ratio_panel(ax, rows, xcol, labels)
                if i == 0 or len(profiles) > 2:
                    ax.set_title(f"{prof}, {_fixed(rows, sweep)}")
                if i == len(rows_of) - 1:
                    ax.set_xlabel(xlabel)
                if 2 * j + k == 0:
                    ax.set_ylabel(f"{mech}\nratio to gdp")
    handles, labels = collect_legend(fig)
    mh, ml = _marker_legend()
    finish(fig, [*handles, *mh], [*labels, *ml], ncol=2, notes=_missing_lines(df, mechanisms),
           top_title=f"{title} (every mechanism; ratio to gdp)")
    return fig


def main(*, inputs, outputs, params, log=None):
    logger = get_logger(log)
    apply_style()
    df = read_table(inputs["table"], params["kind"])
    title, ylabel = params.get("title", ""), params.get("ylabel", "MSE")
    if df[(df["status"] == "ok") & (df["method"] == BASE)].empty:
        raise ValueError(f"{inputs['table']}: no ok row of {BASE!r}, the reference of the ratios")
    save_figure(draw_main(df, mechanism=params.get("main_mechanism") or None, title=title,
                          ylabel=ylabel), [outputs["png"], outputs["pdf"]])
    if "all_png" in outputs:
        save_figure(draw_all(df, title=title, ylabel=ylabel),
                    [outputs["all_png"], outputs["all_pdf"]])
    logger.info("plotted %d rows of %s", len(df), inputs["table"])


if "snakemake" in globals():
    run_main(main, snakemake)  # noqa: F821
