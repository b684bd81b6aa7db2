"""Figures of experiment 8 (personalized validity), drawn only from its table.

Every value is plotted as its ratio to the cell's best certified lower bound (``lower_eps``:
``window_lower`` or ``rr_exact``, the true central eps of the shuffled randomizer is at least
that), on a log2 axis; the region below 1 is shaded: a value there claims less privacy loss
than the shuffled randomizer really has.

*Main figure* (``png``, ``pdf``): one panel per main randomizer (``params.main_randomizers``,
default the first three of the table), x = n, one line per budget profile: the paper's ``gdp``
(dashed, filled red markers where it is below 1: invalid) and, thin solid, the best rigorous
bound that covers the randomizer on the profile (must stay at or above 1; the job computing
the table fails otherwise).

*Appendix figure* (``all_png``, ``all_pdf``): rows = randomizers, columns = profiles; every
approximation and every rigorous variant that covers the randomizer (named ``method
[variant]``), in the styles of :mod:`figstyle`.

Snakemake interface (rule ``plot_personalized_validity``): input ``table``; outputs ``png``,
``pdf``, ``all_png``, ``all_pdf``; params ``main_randomizers`` (optional).
"""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from figstyle import TEXT_WIDTH, apply_style, collect_legend, finish, method_style
from wfutils import get_logger, read_table, run_main, save_figure

#: One colour per profile (Okabe-Ito), in the table's order.
PROFILE_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00",
                   "#000000", "#999999")
INVALID = "below the certified lower bound: invalid"


def _ratio_axis(ax, lo, hi):
    import math

    from matplotlib.ticker import FixedLocator, NullLocator

    ax.set_xscale("log")
    ax.set_yscale("log", base=2)
    lo = min(lo, 0.5)
    hi = max(hi, 2.0)
    a, b = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
    ticks = [2.0**k for k in range(a, b + 1)]
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_yticklabels([f"{t:g}" if t >= 1 else f"1/{1 / t:g}" for t in ticks])
    ax.set_ylim(2.0**a / 1.15, 2.0**b * 1.15)
    ax.axhspan(2.0**a / 2, 1.0, color="#F2C4C4", alpha=0.45, lw=0, zorder=0, label=INVALID)
    ax.axhline(1.0, color="black", lw=0.8, zorder=1)


def _best_rigorous(cell):
    rig = cell[(cell["kind"] == "upper") & cell["covered"].astype(bool)]
    if rig.empty:
        return None
    return rig.loc[rig.groupby("n")["ratio_to_lower"].idxmin()].set_index("n").sort_index()


def draw_main(df, main_randomizers=()):
    import matplotlib.pyplot as plt

    ok = df[(df["status"] == "ok") & df["ratio_to_lower"].notna()]
    present = list(dict.fromkeys(df["randomizer"]))
    rands = [r for r in main_randomizers if r in present] or present[:3]
    profiles = list(dict.fromkeys(df["profile"]))
    colours = {p: PROFILE_COLOURS[i % len(PROFILE_COLOURS)] for i, p in enumerate(profiles)}
    fig, axes = plt.subplots(1, len(rands), figsize=(TEXT_WIDTH, 2.3), squeeze=False,
                             sharey=True)
    vals = ok[ok["randomizer"].isin(rands) & ((ok["method"] == "gdp") | (
        (ok["kind"] == "upper") & ok["covered"].astype(bool)))]["ratio_to_lower"]
    lo, hi = (float(vals.min()), float(vals.max())) if len(vals) else (0.5, 2.0)
    for k, (r, ax) in enumerate(zip(rands, axes[0], strict=True)):
        _ratio_axis(ax, lo, hi)
        for p in profiles:
            cell = ok[(ok["randomizer"] == r) & (ok["profile"] == p)]
            g = cell[cell["method"] == "gdp"].set_index("n").sort_index()
            if not g.empty:
                y = g["ratio_to_lower"]
                ax.plot(g.index, y, color=colours[p], ls="--", marker="o", ms=3.5,
                        mfc="white", label=f"gdp (paper), {p}")
                bad = y[y < 1.0]
                ax.scatter(bad.index, bad.to_numpy(), s=16, color="#C00000", zorder=5,
                           label="gdp below the certified lower bound")
            best = _best_rigorous(cell)
            if best is not None:
                ax.plot(best.index, best["ratio_to_lower"], color=colours[p], ls="-", lw=1.0,
                        marker="s", ms=2.5, label=f"best rigorous bound covering it, {p}")
        ax.set_title(f"{r}")
        ax.set_xlabel("number of users n")
        if k == 0:
            ax.set_ylabel("eps / certified lower bound")
    handles, labels = collect_legend(fig)
    delta = df["delta"].iloc[0]
    finish(fig, handles, labels, ncol=2, notes=[
        f"delta = {delta:g}; certified lower bound = window_lower or rr_exact (the true "
        "central eps of the shuffled randomizer is at least that); every row of the table "
        "is in the appendix figure."])
    return fig


def draw_all(df):
    import matplotlib.pyplot as plt

    ok = df[(df["status"] == "ok") & df["ratio_to_lower"].notna()]
    rands = list(dict.fromkeys(df["randomizer"]))
    profiles = list(dict.fromkeys(df["profile"]))
    fig, axes = plt.subplots(len(rands), len(profiles), squeeze=False, sharex=True,
                             figsize=(TEXT_WIDTH, 1.45 * len(rands) + 0.4))
    keep = ok[(ok["kind"] == "approximate") | ((ok["kind"] == "upper")
                                                & ok["covered"].astype(bool))]
    vals = keep["ratio_to_lower"]
    lo, hi = (float(vals.min()), float(vals.max())) if len(vals) else (0.5, 2.0)
    hi = min(hi, 2.0**12)
    for i, r in enumerate(rands):
        for j, p in enumerate(profiles):
            ax = axes[i][j]
            _ratio_axis(ax, lo, hi)
            cell = keep[(keep["randomizer"] == r) & (keep["profile"] == p)]
            for (m, v), rows in cell.groupby(["method", "variant"], sort=False, dropna=False):
                rows = rows.set_index("n").sort_index()
                kind = rows["kind"].iloc[0]
                aware = "mechanism=" in str(v)
                shown = "mechanism-aware" if aware else v
                name = m if not isinstance(v, str) or not v else f"{m} [{shown}]"
                st = method_style(m, kind, label=name)
                if aware:
                    st["linewidth"] = st.get("linewidth", 1.0) * 1.6
                ax.plot(rows.index, rows["ratio_to_lower"].clip(upper=2.0**12), **st)
            if i == 0:
                ax.set_title(p)
            if j == 0:
                ax.set_ylabel(f"{r}\neps / lower")
            if i == len(rands) - 1:
                ax.set_xlabel("n")
    handles, labels = collect_legend(fig)
    finish(fig, handles, labels, ncol=2, notes=[
        "Approximations dashed (no guarantee; liu24 is derived for Laplace only), rigorous "
        "bounds solid and only where they cover the randomizer on the profile; "
        "[mechanism-aware] = the bound with the randomizer's own clone masses or parameters "
        "(option mechanism). Values above 4096 are drawn at 4096."])
    return fig


def main(*, inputs, outputs, params=None, log=None):
    logger = get_logger(log)
    apply_style()
    df = read_table(inputs["table"], "personalized_validity")
    main_r = list((params or {}).get("main_randomizers") or [])
    save_figure(draw_main(df, main_r), [outputs["png"], outputs["pdf"]])
    save_figure(draw_all(df), [outputs["all_png"], outputs["all_pdf"]])
    bad = df[(df["method"] == "gdp") & (df["below_lower"] == True)]  # noqa: E712
    logger.info("gdp below the certified lower bound in %d of %d cells", len(bad),
                int((df["method"] == "gdp").sum()))


if "snakemake" in globals():
    run_main(main, snakemake)  # noqa: F821
