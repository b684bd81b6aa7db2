"""One style for every figure of the workflow: per-method styles, paper sizes and fonts, and the
drawing helpers the figures share (shading below the exact lower bound, notes on missing points,
coinciding curves named together, legends outside the axes).

**Per-method style.**  :data:`METHODS` fixes, for every bound and reference the project ships,
its display name, colour and marker; the line style comes from the *kind* of the row
(approximate dashed, rigorous upper solid, exact lower dotted: :data:`KIND_LINESTYLE`), so the
three kinds are told apart at a glance.  Nothing depends on which other methods a figure holds:
a bound registered later (without an entry here) gets a colour and marker chosen from its name
alone (:func:`fallback_style`, a SHA-256 of the name into a reserve palette that no fixed entry
uses), so adding it never recolours the others.  The project's own rigorous bound (``clones``)
is drawn thicker and in front.

**Paper output.**  Every figure is sized for a two-column paper (:data:`COLUMN_WIDTH` for one
column, :data:`TEXT_WIDTH` for the full text width, in inches), uses one font size
(:data:`FONT_SIZE` points) for every text element, and is saved as vector PDF (fonts embedded
as TrueType) and 300 dpi PNG by :func:`wfutils.save_figure`.

Scripts run under Snakemake's ``script:`` directive, so no ``from __future__`` import here.
"""

import hashlib
from dataclasses import dataclass

__all__ = [
    "COLUMN_WIDTH",
    "TEXT_WIDTH",
    "FONT_SIZE",
    "PNG_DPI",
    "KIND_LINESTYLE",
    "KIND_NAME",
    "Style",
    "METHODS",
    "REFERENCES",
    "style_of",
    "fallback_style",
    "method_label",
    "method_style",
    "apply_style",
    "coincident_groups",
    "panel_groups",
    "shade_below_lower",
    "LOWER_REGION_LABEL",
    "finish",
    "note_missing",
    "short_reason",
    "missing_note",
    "group_label",
    "every_bound_panels",
    "main_bound_panels",
    "vacuous_handles",
    "collect_legend",
]

#: Width of one column of a two-column paper (AAAI, IEEE, ACM sigconf), inches.
COLUMN_WIDTH = 3.33
#: Full text width of a two-column paper, inches.
TEXT_WIDTH = 7.0
#: The one font size of every text element (titles, labels, ticks, legends, notes), points.
FONT_SIZE = 7
#: Resolution of the PNG files.
PNG_DPI = 300

#: Line style per kind of bound (the ``kind`` column of the tables).
KIND_LINESTYLE = {"approximate": "--", "upper": "-", "lower": ":"}
#: What the legend says about each kind.
KIND_NAME = {"approximate": "approximation", "upper": "rigorous", "lower": "exact lower bound"}


@dataclass(frozen=True)
class Style:
    """Display name, colour and marker of one method; ``role`` is who it comes from:
    ``paper`` (Chen, Cao, Ge 2024), ``project`` (shuffledp's own), ``published`` (a baseline
    from the literature) or ``reference`` (a utility reference, not a bound)."""

    label: str
    color: str
    marker: str
    role: str


# Colours: Okabe-Ito and Paul Tol's colour-blind-safe palettes; each used once.
METHODS: dict[str, Style] = {
    "gdp": Style("gdp (paper, Chen et al. 2024)", "#D55E00", "o", "paper"),
    "clones": Style("clones (this project)", "#0072B2", "s", "project"),
    "blanket": Style("blanket (this project, exact blanket divergence)", "#004488", "o",
                     "project"),
    "tightest": Style("tightest (min of clones, blanket, rr_upper)", "#1B9E77", "v", "project"),
    "rr_upper": Style("rr_upper (binary RR, exact worst case)", "#7F3C8D", "D", "project"),
    "rr_exact": Style("rr_exact (binary RR)", "#000000", "v", "project"),
    "krr_exact": Style("krr_exact (k-RR)", "#555555", "^", "project"),
    "window_lower": Style("window_lower (windowed counts)", "#3B3B3B", "1", "project"),
    "lr_sum_lower": Style("lr_sum_lower (pair 'others at x1')", "#6B4C2A", "2", "project"),
    "tier_sum_lower": Style("tier_sum_lower (per-tier score sum)", "#8C6D31", "3", "project"),
    "fmt21_closed": Style("fmt21_closed (FMT21 Thm 3.1)", "#E69F00", "<", "published"),
    "fmt21_numerical": Style("fmt21_numerical (FMT21 Thm 3.2)", "#CC79A7", ">", "published"),
    "fmt23_closed": Style("fmt23_closed (FMT23)", "#56B4E9", "d", "published"),
    "fmt23_numerical": Style("fmt23_numerical (FMT23)", "#009E73", "D", "published"),
    "blanket_hoeffding": Style("blanket_hoeffding (BBGN19)", "#999933", "p", "published"),
    "blanket_bennett": Style("blanket_bennett (BBGN19)", "#882255", "h", "published"),
    "efmrtt19": Style("efmrtt19 (EFMRTT19)", "#AA4499", "*", "published"),
    "liu23_personalized": Style("liu23_personalized (Liu et al. 2023)", "#44AA99", "P",
                                "published"),
    "liu24": Style("liu24 (HPS, Liu et al. 2024)", "#DDCC77", "X", "published"),
    "variation_ratio": Style("variation_ratio (Wang et al. 2024, general row)", "#117733", "8",
                             "published"),
    "variation_ratio_claimed": Style("variation_ratio_claimed (Wang et al. 2024, as published)",
                                     "#999999", "d", "published"),
}

#: SGD accountings that are not registered bounds.
SGD_METHODS: dict[str, Style] = {
    "clones_tiers": Style("clones, per-tier targets (smallest budgets at the target)",
                          "#EE3377", "^", "project"),
}

#: Utility and SGD references (not bounds): drawn in greys and black, dash-dot.
REFERENCES: dict[str, Style] = {
    "local_only": Style("local only (no shuffling)", "#7F7F7F", "1", "reference"),
    "local": Style("local only (no shuffling)", "#7F7F7F", "1", "reference"),
    "central_laplace": Style("central Laplace", "#000000", "2", "reference"),
    "nonprivate": Style("non-private", "#404040", "", "reference"),
}

# Reserve palette for methods without a fixed entry: none of these is used above.
_RESERVE_COLOURS = ("#332288", "#88CCEE", "#661100", "#6699CC", "#AA4466", "#4B0092",
                    "#1A85FF", "#994F00", "#006CD1", "#E1BE6A", "#40B0A6", "#5D3A9B")
_RESERVE_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "<", ">", "h", "p")


def fallback_style(name: str) -> Style:
    """A stable style for a method without a fixed entry, from its name alone (SHA-256), so
    that registering it changes no other method's style."""
    digest = hashlib.sha256(name.encode()).digest()
    return Style(name, _RESERVE_COLOURS[digest[0] % len(_RESERVE_COLOURS)],
                 _RESERVE_MARKERS[digest[1] % len(_RESERVE_MARKERS)], "published")


def style_of(method: str) -> Style:
    """The fixed style of ``method`` (a bound or a reference), else :func:`fallback_style`."""
    return (METHODS.get(method) or SGD_METHODS.get(method) or REFERENCES.get(method)
            or fallback_style(method))


def method_label(method: str, kind: str | None = None) -> str:
    """Legend label: the display name and, for bounds, the kind in words."""
    st = style_of(method)
    if st.role == "reference" or kind not in KIND_NAME:
        return st.label
    return f"{st.label}, {KIND_NAME[kind]}"


def method_style(method: str, kind: str | None = None, *, label: str | None = None) -> dict:
    """Keyword arguments for ``Axes.plot``: colour, marker, line style by kind, label, and the
    project's own bound thicker and in front."""
    st = style_of(method)
    linestyle = "-." if st.role == "reference" else KIND_LINESTYLE.get(kind, "-")
    out = {"color": st.color, "marker": st.marker or "None", "linestyle": linestyle,
           "label": label if label is not None else method_label(method, kind),
           "zorder": 2.0}
    if st.role == "project" and kind == "upper":
        out.update(linewidth=2.2, zorder=4.0)
    elif st.role == "paper":
        out.update(zorder=3.5)
    return out


def apply_style() -> None:
    """Matplotlib settings of every figure: one font size, paper-ready PDF and PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "figure.dpi": 100,
            "savefig.dpi": PNG_DPI,
            "font.size": FONT_SIZE,
            "axes.titlesize": FONT_SIZE,
            "axes.labelsize": FONT_SIZE,
            "xtick.labelsize": FONT_SIZE,
            "ytick.labelsize": FONT_SIZE,
            "legend.fontsize": FONT_SIZE,
            "legend.title_fontsize": FONT_SIZE,
            "figure.titlesize": FONT_SIZE,
            "pdf.fonttype": 42,
            "ps.fonttype": 42,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "grid.linewidth": 0.5,
            "axes.linewidth": 0.6,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "lines.linewidth": 1.2,
            "lines.markersize": 3.5,
            "legend.frameon": False,
            "legend.handlelength": 2.6,
            "hatch.linewidth": 0.5,
        }
    )


def coincident_groups(curves: dict, *, rtol: float = 1e-3) -> list[list[str]]:
    """Group methods whose curves are equal to ``rtol`` (relative) at every point.

    ``curves`` maps a method to a ``pandas.Series`` of values indexed by the point (for example
    ``(eps0, n)``); two methods coincide when they have the same points and agree at each.
    Groups keep the order of ``curves``; methods equal to nothing form singleton groups.
    """
    import numpy as np

    groups: list[list[str]] = []
    for method, series in curves.items():
        for group in groups:
            other = curves[group[0]]
            if (len(series) == len(other) and set(series.index) == set(other.index)
                    and np.allclose(series.sort_index().to_numpy(float),
                                    other.sort_index().to_numpy(float), rtol=rtol, atol=0.0)):
                group.append(method)
                break
        else:
            groups.append([method])
    return groups


def panel_groups(panels, *, labels, rtol: float = 1e-3):
    """Curves that coincide within some panels: which to draw and how to name them.

    ``panels``: ``[(where, {name: pandas.Series}), ...]`` (one entry per panel, ``where`` its
    short description); ``labels``: name -> its own legend label.  In each panel the curves
    equal to ``rtol`` at every point (:func:`coincident_groups`) are drawn once, as the first
    of them; that curve's label then names the others and where it stands for them, and is the
    same in every panel (one legend entry per line style).  Returns ``(draw, label)``: ``draw``
    maps ``where`` to the names to draw there, ``label`` maps every name drawn to its label.
    """
    draw: dict = {}
    partners: dict = {}
    for where, curves in panels:
        reps = []
        for group in coincident_groups(curves, rtol=rtol):
            reps.append(group[0])
            for other in group[1:]:
                wheres = partners.setdefault(group[0], {}).setdefault(other, [])
                if where not in wheres:
                    wheres.append(where)
        draw[where] = reps
    label = {}
    for reps in draw.values():
        for name in reps:
            if name in label:
                continue
            others = partners.get(name, {})
            if not others:
                label[name] = labels[name]
                continue
            all_panels = list(dict.fromkeys(w for w, _ in panels))
            parts = [labels[o] if ws == all_panels else f"{labels[o]} on {', '.join(ws)}"
                     for o, ws in others.items()]
            label[name] = f"{labels[name]} = {'; = '.join(parts)}"
    return draw, label


LOWER_REGION_LABEL = "below an exact lower bound: no bound covering that randomizer can be here"


def shade_below_lower(ax, x, lower, *, label: str = LOWER_REGION_LABEL) -> None:
    """Shade the region below the highest exact lower bound (``lower`` at ``x``) down to the
    bottom of the axes: a valid upper bound can never be there.  Call it after everything else
    is drawn and the axis scales are set."""
    import numpy as np

    x = np.asarray(x, float)
    lower = np.asarray(lower, float)
    order = np.argsort(x)
    ax.relim()
    ax.autoscale_view()
    ymin, ymax = ax.get_ylim()
    ymin = min(ymin, float(np.min(lower)) / 1.5) if ax.get_yscale() == "log" else ymin
    ax.fill_between(x[order], np.full(len(x), ymin), lower[order], facecolor="0.88",
                    hatch="////", edgecolor="0.72", linewidth=0.0, zorder=0.5, label=label)
    ax.set_ylim(ymin, ymax)


def finish(fig, handles=(), labels=(), *, ncol: int = 2, notes=(), top_title: str = "",
           tight: bool = True) -> None:
    """Lay the figure out with one legend (and optional notes) below the axes, never over
    data: the figure grows by the height the legend and notes need."""
    import textwrap

    labels = list(labels)
    w, h = fig.get_size_inches()
    em = FONT_SIZE * 0.56 / 72  # inches per character of the font (DejaVu Sans, average)

    def chars(width: float) -> int:
        return max(20, int(width / em))

    # two columns when every label fits one, else one column with long labels wrapped, so
    # that the legend never makes the figure wider than its width
    if ncol > 1 and labels and max(len(lab) for lab in labels) > chars(w / ncol - 0.45):
        ncol = 1
    col = chars(w / max(1, ncol) - 0.45)
    labels = ["\n".join(textwrap.wrap(lab, col, subsequent_indent="    ")) or lab
              for lab in labels]
    if ncol == 1:
        nleg = sum(lab.count("\n") + 1 for lab in labels)
    else:
        nleg = -(-len(labels) // ncol) if labels else 0
    width_chars = chars(w - 0.3)
    notes = [part for note in notes
             for part in textwrap.wrap(note, width_chars, subsequent_indent="    ")]
    lines = nleg + len(notes) + (0.6 if notes else 0)
    extra = lines * FONT_SIZE * 1.5 / 72 + (0.1 if lines else 0.0)
    fig.set_size_inches(w, h + extra)
    bottom = extra / (h + extra)
    if top_title:
        fig.suptitle(top_title)
    if tight:
        fig.tight_layout(rect=(0, bottom, 1, 1))
    else:  # figures with a colour bar: fixed margins in inches
        fig.subplots_adjust(left=0.62 / w, right=1 - 0.45 / w,
                            bottom=bottom + 0.42 / (h + extra), top=1 - 0.42 / (h + extra))
    if labels:
        fig.legend(list(handles), labels, loc="upper center", ncol=max(1, min(ncol, len(labels))),
                   bbox_to_anchor=(0.5, bottom), frameon=False, columnspacing=1.5,
                   borderaxespad=0.2)
    if notes:
        y = (len(notes) + 0.2) * FONT_SIZE * 1.5 / 72 / (h + extra)
        fig.text(0.01, y, "\n".join(notes), ha="left", va="top", fontsize=FONT_SIZE,
                 color="0.25", linespacing=1.5)


def note_missing(ax, x, y, text: str, *, color: str = "0.2", marker: str = "x") -> None:
    """Mark a vacuous or missing point with a marker and a short note beside it."""
    ax.plot([x], [y], linestyle="none", marker=marker, color=color, markersize=5, zorder=6)
    ax.annotate(text, (x, y), xytext=(4, 4), textcoords="offset points", color=color,
                fontsize=FONT_SIZE)


def short_reason(method: str, reason: str) -> str:
    """The condition part of a ``not_applicable`` reason (``"<name> requires X, got Y"`` ->
    ``"requires X"``), for notes on figures."""
    text = str(reason).strip()
    if text.startswith(method):
        text = text[len(method):].lstrip(": ").strip()
    return text.split(", got")[0].split("; ")[0]


def missing_note(df, *, total_by: list[str]) -> list[str]:
    """One line per method with rows that are not ``ok``: how many points are missing and the
    first reason's condition; ``total_by`` are the columns identifying a point."""
    lines = []
    for method, g in df.groupby("method", sort=False):
        bad = g[g["status"] != "ok"]
        if bad.empty:
            continue
        points = len(g.drop_duplicates(total_by))
        missing = len(bad.drop_duplicates(total_by))
        lines.append(f"{method} not drawn at {missing} of {points} points: "
                     f"{short_reason(method, bad['reason'].iloc[0])}")
    return lines


# --------------------------------------------------------------------------- bound figures
# Shared by the figures of central eps against n (bounds_vs_n, personalized): a *point* is the
# tuple of table columns identifying one evaluation (e.g. ("eps0", "n")), a *panel* the columns
# fixed within one axes (e.g. ("eps0",)).


def _is_vacuous(rows):
    if "vacuous" not in rows:
        return rows["eps"].isna() & False
    return rows["vacuous"].fillna(False).astype(bool)


def group_label(group, kinds) -> str:
    """Legend label of methods drawn as one curve: names joined by "=", the kind once when
    they share it, each method's kind otherwise."""
    if len({kinds[g] for g in group}) == 1:
        return " = ".join(style_of(g).label for g in group) + f", {KIND_NAME[kinds[group[0]]]}"
    return " = ".join(method_label(g, kinds[g]) for g in group)


def every_bound_panels(fig_axes, ok, *, panels, point, x="n", title=None):
    """Draw every method of ``ok`` (rows with status ok) into one axes per panel value:
    coinciding curves (over the whole figure) once with a joined label, vacuous points hollow,
    the region below the highest exact lower bound shaded.  ``fig_axes`` maps a panel key
    (tuple of the ``panels`` columns) to its axes."""
    import pandas as pd

    kinds = dict(zip(ok["method"], ok["kind"], strict=False))
    methods = list(dict.fromkeys(ok["method"]))
    order = sorted(methods, key=lambda m: (kinds[m] != "upper",
                                           {"project": 0, "paper": 1}.get(style_of(m).role, 2)))
    curves = {m: ok[ok["method"] == m].set_index(list(point))["eps"].sort_index() for m in order}
    groups = coincident_groups(curves)
    for key, ax in fig_axes.items():
        sel = ok
        for col, val in zip(panels, key, strict=True):
            sel = sel[sel[col] == val]
        ax.set_xscale("log")
        ax.set_yscale("log")
        lows = []
        for group in groups:
            rep = group[0]
            m = sel[sel["method"] == rep].sort_values(x)
            if m.empty:
                continue
            st = method_style(rep, kinds[rep], label=group_label(group, kinds))
            ax.plot(m[x], m["eps"], **st)
            vac = m[_is_vacuous(m)]
            if not vac.empty:
                ax.plot(vac[x], vac["eps"], linestyle="none", marker=st["marker"],
                        markerfacecolor="white", markeredgecolor=st["color"], zorder=7)
            if kinds[rep] == "lower":
                lows.append(m.set_index(x)["eps"])
        if lows:
            low = pd.concat(lows, axis=1).max(axis=1).sort_index()
            shade_below_lower(ax, low.index, low.to_numpy())


def vacuous_handles():
    """Legend entry explaining hollow markers."""
    from matplotlib.lines import Line2D

    return (Line2D([], [], linestyle="none", marker="o", markerfacecolor="white",
                   markeredgecolor="0.3"),
            "hollow marker: vacuous (bound = max eps_i, no amplification shown)")


def collect_legend(fig):
    """Handles and labels of every axes of ``fig``, each label once."""
    handles, labels = [], []
    for ax in fig.axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels and not lab.startswith("_"):
                handles.append(h)
                labels.append(lab)
    return handles, labels


def main_bound_panels(fig_axes, ok, *, panels, point, x="n", project="clones",
                      approximation="gdp"):
    """The main-figure curves: the paper's approximation, the project's rigorous bound, the
    best published rigorous bound at each point (pointwise minimum over non-vacuous rows of
    role ``published`` and kind ``upper``; named by the bounds attaining it) and the highest
    exact lower bound with the region below it shaded; red rings where the approximation is
    below that lower bound.  Curves equal at every point of the figure are drawn once and
    named together."""
    pub = ok[(ok["kind"] == "upper") & ok["method"].map(lambda m: style_of(m).role == "published")
             & ~_is_vacuous(ok)]
    series, winners = {}, []
    for name in (approximation, project):
        rows = ok[ok["method"] == name]
        if not rows.empty:
            series[name] = rows.set_index(list(point))["eps"].sort_index()
    if not pub.empty:
        best = pub.loc[pub.groupby(list(point))["eps"].idxmin()].set_index(list(point))
        series["best"] = best["eps"].sort_index()
        winners = list(dict.fromkeys(best["method"]))
    low_rows = ok[ok["kind"] == "lower"]
    lower = low_rows.groupby(list(point))["eps"].max().sort_index() if len(low_rows) else None
    if lower is not None:  # name only the lower bounds that attain the maximum somewhere
        best_low = low_rows.loc[low_rows.groupby(list(point))["eps"].idxmax()]
        low_rows = low_rows[low_rows["method"].isin(set(best_low["method"]))]
    groups = coincident_groups(series)

    def label(group):
        names = [f"best published ({' / '.join(winners)})" if k == "best" else style_of(k).label
                 for k in group]
        kind = "approximation" if group[0] == approximation else "rigorous"
        if len(group) > 1 and kind == "rigorous" and all(k != approximation for k in group):
            return " = ".join(names) + ", rigorous (equal on this grid)"
        return " = ".join(names) + f", {kind}"

    for key, ax in fig_axes.items():
        ax.set_xscale("log")
        ax.set_yscale("log")

        def pick(s, key=key):
            out = s
            for col, val in zip(panels, key, strict=True):
                out = out[out.index.get_level_values(col) == val]
            return out.droplevel(list(panels)) if len(point) > len(panels) else out

        for group in groups:
            rep = group[0]
            s = pick(series[rep]).sort_index()
            if s.empty:
                continue
            if rep == "best":
                st = method_style(winners[0], "upper") if len(winners) == 1 else \
                    {**method_style("best", "upper"), "color": "0.35", "marker": "None"}
            else:
                st = method_style(rep, "approximate" if rep == approximation else "upper")
            st["label"] = label(group)
            ax.plot(s.index, s.to_numpy(), **st)
        if lower is not None:
            low = pick(lower).sort_index()
            if not low.empty:
                names = " / ".join(dict.fromkeys(low_rows["method"]))
                ax.plot(low.index, low.to_numpy(), color="black", linestyle=":", marker="v",
                        label=f"highest exact lower bound ({names})", zorder=3)
                if approximation in series:
                    g = pick(series[approximation])
                    common = g.index.intersection(low.index)
                    bad = common[g[common].to_numpy() < low[common].to_numpy()]
                    if len(bad):
                        ax.scatter(bad, g[bad], s=55, facecolors="none", edgecolors="red",
                                   linewidths=1.0, zorder=6,
                                   label=f"{approximation} below the exact lower bound (invalid)")
                shade_below_lower(ax, low.index, low.to_numpy())
