"""Figures of experiment 8 (personalized validity), drawn only from its table.

Every value is plotted as its ratio to the cell's best certified lower bound (``lower_eps``:
``window_lower`` or ``rr_exact``, the true central eps of the shuffled randomizer is at least
that), on a log2 axis; the region below 1 is shaded: a value there claims less privacy loss
than the shuffled randomizer really has.

*Main figure* (``png``, ``pdf``): one panel per main randomizer (``params.main_randomizers``,
default the first three of the table), x = n, one line per budget profile: the paper's ``gdp``
(dashed, hollow markers; filled red markers where it is below 1: invalid) and, solid with
filled markers, the best rigorous bound that covers the randomizer on the profile (must stay at
or above 1; the job computing the table fails otherwise).  Each profile has one colour and
marker (:data:`PROFILE_COLOURS`, :data:`PROFILE_MARKERS`); the legend names each profile once
and each line style once.

*Appendix figure* (``all_png``, ``all_pdf``): rows = randomizers, columns = profiles; every
approximation and every rigorous variant that covers the randomizer (named ``method
[variant]``), in the styles of :mod:`figstyle`; the variants of one bound differ by marker
(:data:`VARIANT_MARKERS`, hollow after the first).

Snakemake interface (rule ``plot_personalized_validity``): input ``table``; outputs ``png``,
``pdf``, ``all_png``, ``all_pdf``; params ``main_randomizers`` (optional).
"""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from figstyle import (
    TEXT_WIDTH,
    apply_style,
    coincident_groups,
    collect_legend,
    finish,
    method_style,
)
from wfutils import get_logger, read_table, run_main, save_figure

#: One colour and marker per profile, in the table's order: Paul Tol's bright and vibrant
#: colours ordered so that neighbours differ in hue and lightness (every pair at least 29 CIELAB
#: units apart; red is left to the invalid points), then black and grey.
PROFILE_COLOURS = ("#0077BB", "#EE7733", "#228833", "#AA3377", "#CCBB44", "#33BBEE",
                   "#000000", "#999999")
PROFILE_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
#: Markers told apart for the variants of one bound in the appendix figure (the first variant
#: keeps the bound's own marker); hollow markers for the other variants.
VARIANT_MARKERS = (None, "o", "^", "x", "+", "d")
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


def profile_styles(profiles):
    """Profile -> (colour, marker), in order; the palette repeats its colours with the next
    marker after 8 profiles, so no two profiles share both."""
    return {p: (PROFILE_COLOURS[i % len(PROFILE_COLOURS)],
                PROFILE_MARKERS[(i + i // len(PROFILE_COLOURS)) % len(PROFILE_MARKERS)])
            for i, p in enumerate(profiles)}


def draw_main(df, main_randomizers=()):
    """One panel per main randomizer; per profile one colour and marker, the paper's ``gdp``
    dashed with hollow markers and the best covering rigorous bound solid with filled ones.
    The legend names each profile once and each line style once."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    ok = df[(df["status"] == "ok") & df["ratio_to_lower"].notna()]
    present = list(dict.fromkeys(df["randomizer"]))
    rands = [r for r in main_randomizers if r in present] or present[:3]
    profiles = list(dict.fromkeys(df["profile"]))
    styles = profile_styles(profiles)
    fig, axes = plt.subplots(1, len(rands), figsize=(TEXT_WIDTH, 2.3), squeeze=False,
                             sharey=True)
    vals = ok[ok["randomizer"].isin(rands) & ((ok["method"] == "gdp") | (
        (ok["kind"] == "upper") & ok["covered"].astype(bool)))]["ratio_to_lower"]
    lo, hi = (float(vals.min()), float(vals.max())) if len(vals) else (0.5, 2.0)
    drawn, any_gdp, any_best, any_bad = set(), False, False, False
    for k, (r, ax) in enumerate(zip(rands, axes[0], strict=True)):
        _ratio_axis(ax, lo, hi)
        for p in profiles:
            colour, marker = styles[p]
            cell = ok[(ok["randomizer"] == r) & (ok["profile"] == p)]
            g = cell[cell["method"] == "gdp"].set_index("n").sort_index()
            if not g.empty:
                y = g["ratio_to_lower"]
                ax.plot(g.index, y, color=colour, ls="--", marker=marker, ms=3.5,
                        mfc="white", lw=1.0)
                drawn.add(p)
                any_gdp = True
                bad = y[y < 1.0]
                if len(bad):
                    any_bad = True
                    ax.scatter(bad.index, bad.to_numpy(), s=18, color="#C00000", zorder=5)
            best = _best_rigorous(cell)
            if best is not None:
                ax.plot(best.index, best["ratio_to_lower"], color=colour, ls="-", lw=1.2,
                        marker=marker, ms=3.0)
                drawn.add(p)
                any_best = True
        ax.set_title(f"{r}")
        ax.set_xlabel("number of users n")
        if k == 0:
            ax.set_ylabel("eps / certified lower bound")
    handles, labels = [], []
    for p in profiles:
        if p in drawn:
            colour, marker = styles[p]
            handles.append(Line2D([], [], color=colour, marker=marker, ls="-", lw=1.2, ms=4))
            labels.append(f"profile {p}")
    if any_gdp:
        handles.append(Line2D([], [], color="0.3", ls="--", marker="o", mfc="white", ms=3.5))
        labels.append("gdp (paper), approximation: dashed, hollow")
    if any_best:
        handles.append(Line2D([], [], color="0.3", ls="-", marker="o", ms=3.0))
        labels.append("best rigorous bound covering the randomizer: solid, filled")
    if any_bad:
        handles.append(Line2D([], [], color="#C00000", ls="none", marker="o", ms=4.5))
        labels.append("gdp below the certified lower bound (invalid)")
    region = [h for h, lab in zip(*axes[0][0].get_legend_handles_labels(), strict=True)
              if lab == INVALID]
    handles += region[:1]
    labels += [INVALID] if region else []
    finish(fig, handles, labels, ncol=2)
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
    # every variant of a bound its own marker (the first keeps the bound's own), the same
    # in every panel; curves equal at every point of the figure are drawn once, named together
    variants: dict = {}
    curves: dict = {}
    meta: dict = {}
    # (the variants mechanism=<randomizer> of the rows are one variant, "mechanism-aware")
    shown = keep["variant"].map(lambda v: "" if not isinstance(v, str) else
                                "mechanism-aware" if v.startswith("mechanism=") else v)
    for (m, key), rows in keep.groupby([keep["method"], shown], sort=False):
        variants.setdefault(m, []).append(key)
        name = f"{m} [{key}]" if key else m
        curves[name] = rows.set_index(["randomizer", "profile", "n"])["ratio_to_lower"]
        meta[name] = (m, key, rows["kind"].iloc[0], key == "mechanism-aware")
    groups = coincident_groups(curves)
    for i, r in enumerate(rands):
        for j, p in enumerate(profiles):
            ax = axes[i][j]
            _ratio_axis(ax, lo, hi)
            for group in groups:
                series = curves[group[0]]
                at = (series.index.get_level_values("randomizer") == r) & (
                    series.index.get_level_values("profile") == p)
                s = series[at].droplevel(["randomizer", "profile"]).sort_index()
                if s.empty:
                    continue
                m, key, kind, aware = meta[group[0]]
                st = method_style(m, kind, label=" = ".join(group))
                index = variants[m].index(key)
                if index:
                    st["marker"] = VARIANT_MARKERS[index % len(VARIANT_MARKERS)] or st["marker"]
                    st["markerfacecolor"] = "white"
                if aware:
                    st["linewidth"] = st.get("linewidth", 1.0) * 1.6
                ax.plot(s.index, s.clip(upper=2.0**12).to_numpy(), **st)
            if i == 0:
                ax.set_title(p)
            if j == 0:
                ax.set_ylabel(f"{r}\neps / lower")
            if i == len(rands) - 1:
                ax.set_xlabel("n")
    handles, labels = collect_legend(fig)
    # what the line styles and markers mean is in the caption (personalized_validity_all.rst)
    finish(fig, handles, labels, ncol=2)
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
