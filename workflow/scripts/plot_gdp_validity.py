"""Experiment 3 (figure): the paper's eps over the exact lower bound, on a grid of (n, eps0).

Reads the table of ``compute_gdp_validity.py``.  One heat map per upper bound in the table (the
paper's ``gdp`` first, then the project's rigorous ``clones`` for contrast), each cell coloured
by eps(bound) / eps(rr_exact) on a diverging scale centred at 1 with ticks 1/8 ... 8 (ratios
beyond are clipped and the colour bar is extended):

- red, hatched, ratio followed by "!": the bound is *below* the exact lower bound, so the
  claimed guarantee is false for shuffled binary randomized response;
- blue: above it (conservative by that factor);
- light grey "vacuous": the bound is at least eps0 (it shows no amplification at all), so its
  ratio is not a statement about validity;
- a thick black outline encloses the cells where the expected number of clones is below the
  CLT threshold of ``shuffledp.bounds.gdp_paper.clt_threshold`` (the approximation's own
  regime condition fails).

Snakemake interface: ``input.table``; ``output.png``, ``output.pdf``.
"""


import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from figstyle import FONT_SIZE, TEXT_WIDTH, apply_style, finish, style_of
from wfutils import get_logger, read_table, run_main, save_figure

#: Colour-bar limits and ticks (ratios).
RATIO_TICKS = (1 / 8, 1 / 4, 1 / 2, 1, 2, 4, 8)
_TICK_TEXT = ("1/8", "1/4", "1/2", "1", "2", "4", "8")


def _grid(sub, ns, eps0s, column, fill):
    import numpy as np

    out = np.full((len(ns), len(eps0s)), fill, dtype=object)
    for _, r in sub.iterrows():
        out[ns.index(r["n"]), eps0s.index(r["eps0"])] = r[column]
    return out


def _outline(ax, mask, **kw):
    """Draw the boundary of the True cells of ``mask`` (cells centred on integer coords)."""
    rows, cols = mask.shape
    for i in range(rows):
        for j in range(cols):
            if not mask[i, j]:
                continue
            for di, dj, seg in ((-1, 0, ((j - .5, j + .5), (i - .5, i - .5))),
                                (1, 0, ((j - .5, j + .5), (i + .5, i + .5))),
                                (0, -1, ((j - .5, j - .5), (i - .5, i + .5))),
                                (0, 1, ((j + .5, j + .5), (i - .5, i + .5)))):
                a, b = i + di, j + dj
                if not (0 <= a < rows and 0 <= b < cols) or not mask[a, b]:
                    ax.plot(*seg, color="black", linewidth=1.6, solid_capstyle="projecting",
                            zorder=5, **kw)


def draw(df):
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.colors import LogNorm
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from shuffledp.bounds.gdp_paper import clt_threshold

    uppers = [m for m in dict.fromkeys(df["method"]) if m != "rr_exact"]
    uppers.sort(key=lambda m: (m != "gdp", m != "clones", m))
    ns = sorted(df["n"].unique())
    eps0s = sorted(df["eps0"].unique())
    delta = float(df["delta"].iloc[0])
    # side by side while every cell can hold "0.00!" (about 0.3 in at 7 pt), else one panel
    # per row at the full width
    stacked = len(uppers) * len(eps0s) * 0.3 > TEXT_WIDTH - 1.3
    if stacked:
        fig = plt.figure(figsize=(TEXT_WIDTH, len(uppers) * (0.24 * len(ns) + 0.75) + 0.3))
        grid = fig.add_gridspec(len(uppers), 2, width_ratios=[1.0, 0.025], hspace=0.45,
                                wspace=0.04)
        axes = [[fig.add_subplot(grid[k, 0]) for k in range(len(uppers))]]
        cax = fig.add_subplot(grid[:, 1])
    else:
        fig = plt.figure(figsize=(TEXT_WIDTH, 0.3 * len(ns) + 1.0))
        grid = fig.add_gridspec(1, len(uppers) + 1,
                                width_ratios=[1.0] * len(uppers) + [0.035], wspace=0.08)
        axes = [[fig.add_subplot(grid[0, k]) for k in range(len(uppers))]]
        cax = fig.add_subplot(grid[0, len(uppers)])
    norm = LogNorm(vmin=RATIO_TICKS[0], vmax=RATIO_TICKS[-1])
    cmap = plt.get_cmap("RdBu").copy()
    im = None
    gdp_rows = df[df["method"] == "gdp"]
    clt_bad = None
    if not gdp_rows.empty and gdp_rows["clt_ok"].notna().any():
        clt_bad = _grid(gdp_rows, ns, eps0s, "clt_ok", True).astype(bool) == False  # noqa: E712
    for ax, method in zip(axes[0], uppers, strict=True):
        sub = df[(df["method"] == method) & (df["status"] == "ok")]
        ratio = _grid(sub, ns, eps0s, "ratio_to_lower", np.nan).astype(float)
        below = _grid(sub.fillna({"below_lower": False}), ns, eps0s, "below_lower",
                      False).astype(bool)
        vacuous = _grid(sub.fillna({"vacuous": False}), ns, eps0s, "vacuous", False).astype(bool)
        shown = np.where(vacuous, np.nan, np.clip(ratio, RATIO_TICKS[0], RATIO_TICKS[-1]))
        # pcolormesh, not imshow: the PDF stays vector
        im = ax.pcolormesh(np.arange(len(eps0s) + 1) - 0.5, np.arange(len(ns) + 1) - 0.5,
                           np.ma.masked_invalid(shown), cmap=cmap, norm=norm)
        ax.set_xlim(-0.5, len(eps0s) - 0.5)
        ax.set_ylim(-0.5, len(ns) - 0.5)
        ax.set_xticks(range(len(eps0s)), [f"{e:g}" for e in eps0s])
        first = stacked or method == uppers[0]
        ax.tick_params(left=first)
        ax.set_yticks(range(len(ns)), [f"{int(n):,}" for n in ns] if first else [])
        if stacked:
            ax.set_ylabel("number of users n")
        ax.set_xlabel("local eps0")
        ax.grid(False)
        for spine in ax.spines.values():
            spine.set_visible(False)
        for i in range(len(ns)):
            for j in range(len(eps0s)):
                if vacuous[i, j]:
                    ax.add_patch(plt.Rectangle((j - .5, i - .5), 1, 1, facecolor="0.9",
                                               edgecolor="white", linewidth=0.5))
                    ax.text(j, i, "vac.", ha="center", va="center", fontsize=FONT_SIZE,
                            color="0.35")
                    continue
                if not np.isfinite(ratio[i, j]):
                    ax.text(j, i, "n/a", ha="center", va="center", fontsize=FONT_SIZE)
                    continue
                if below[i, j]:
                    ax.add_patch(plt.Rectangle((j - .5, i - .5), 1, 1, fill=False, hatch="///",
                                               edgecolor="0.25", linewidth=0))
                r = ratio[i, j]
                text = f"{r:.2f}" if r < 10 else f"{r:.0f}"
                if stacked and len(eps0s) > 12:
                    text = f"{r:.1f}" if r < 10 else f"{r:.0f}"
                ax.text(j, i, text + ("!" if below[i, j] else ""), ha="center", va="center",
                        fontsize=FONT_SIZE, color="black",
                        bbox={"boxstyle": "round,pad=0.12", "facecolor": "white", "alpha": 0.8,
                              "linewidth": 0})
        if clt_bad is not None and method == "gdp":
            _outline(ax, clt_bad)
        kind = sub["kind"].iloc[0] if len(sub) else ""
        what = "approximation" if kind == "approximate" else "rigorous"
        ax.set_title(f"{style_of(method).label}, {what}")
    axes[0][0].set_ylabel("number of users n")
    for ax in axes[0][:-1] if stacked else []:
        ax.set_xlabel("")
    cbar = fig.colorbar(im, cax=cax, extend="both")
    cbar.solids.set_rasterized(False)  # keep the PDF all vector
    cbar.set_ticks(list(RATIO_TICKS), labels=list(_TICK_TEXT))
    cbar.minorticks_off()
    cbar.set_label("eps(bound) / eps(rr_exact)")
    handles = [Patch(facecolor=cmap(0.1), hatch="///", edgecolor="0.25"),
               Patch(facecolor=cmap(0.85)),
               Patch(facecolor="0.9", edgecolor="0.6"),
               Line2D([], [], color="black", linewidth=1.6)]
    labels = ["red, hatched, '!': below the exact lower bound, the claimed eps is false",
              "blue: above it (a valid-looking bound, conservative by that factor)",
              "vac. (vacuous): the bound is >= eps0, no amplification claimed",
              f"outlined: expected clones < CLT threshold {clt_threshold(delta):.3g} "
              "(gdp's own regime condition fails)"]
    fig.suptitle("Each bound over the exact central eps of shuffled binary randomized response "
                 f"(rr_exact), delta = {delta:g}")
    finish(fig, handles, labels, ncol=2, tight=False)
    return fig


def main(*, inputs, outputs, params=None, log=None):
    logger = get_logger(log)
    apply_style()
    df = read_table(inputs["table"], "gdp_validity")
    if "gdp" not in set(df["method"]):
        raise ValueError(f"method 'gdp' not in table {inputs['table']!r}")
    save_figure(draw(df), [outputs["png"], outputs["pdf"]])
    g = df[df["method"] == "gdp"]
    logger.info("%d of %d gdp cells below the exact lower bound",
                int(g["below_lower"].fillna(False).astype(bool).sum()), len(g))


if "snakemake" in globals():
    run_main(main, snakemake)  # noqa: F821
