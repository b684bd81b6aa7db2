"""Experiment 3 (figure): heat map of the paper's eps / the exact lower bound over (n, eps0).

Reads the table of ``compute_gdp_validity.py``; one cell per (n, eps0) coloured by
log10(eps_method / eps_rr_exact) on a diverging scale centred at ratio 1, annotated with
the ratio, and marked with hatching and an "x" after the ratio where the method's eps is
*below* the exact lower bound (the claimed guarantee is false for shuffled randomized
response).

Snakemake interface: ``input.table``; ``output.png``, ``output.pdf``; optional
``params.method`` (default "gdp").
"""


import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import apply_style, get_logger, read_table, run_main, save_figure


def main(*, inputs, outputs, params, log=None):
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd

    logger = get_logger(log)
    apply_style()
    method = (params or {}).get("method", "gdp")
    df = read_table(inputs["table"], "gdp_validity")
    sub = df[df["method"] == method]
    if sub.empty:
        raise ValueError(f"method {method!r} not in table {inputs['table']!r}")
    ns = sorted(sub["n"].unique())
    eps0s = sorted(sub["eps0"].unique())
    ratio = np.full((len(ns), len(eps0s)), np.nan)
    below = np.zeros_like(ratio, dtype=bool)
    for _, r in sub.iterrows():
        i, j = ns.index(r["n"]), eps0s.index(r["eps0"])
        ratio[i, j] = r["ratio_to_lower"]
        below[i, j] = False if pd.isna(r["below_lower"]) else bool(r["below_lower"])
    logr = np.log10(ratio)
    lim = float(np.nanmax(np.abs(logr))) if np.isfinite(logr).any() else 1.0
    lim = max(lim, 0.05)
    fig, ax = plt.subplots(figsize=(0.6 * len(eps0s) + 2.2, 0.45 * len(ns) + 1.6))
    im = ax.imshow(np.ma.masked_invalid(logr), cmap="RdBu", vmin=-lim, vmax=lim,
                   origin="lower", aspect="auto")
    ax.set_xticks(range(len(eps0s)), [f"{e:g}" for e in eps0s])
    ax.set_yticks(range(len(ns)), [f"{int(n):,}" for n in ns])
    ax.set_xlabel(r"local $\varepsilon_0$")
    ax.set_ylabel("n")
    ax.grid(False)
    for i in range(len(ns)):
        for j in range(len(eps0s)):
            if not np.isfinite(ratio[i, j]):
                ax.text(j, i, "n/a", ha="center", va="center", fontsize=6)
                continue
            if below[i, j]:
                ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="//",
                                           edgecolor="0.35", linewidth=0))
            label = f"{ratio[i, j]:.2f}" + (" x" if below[i, j] else "")
            ax.text(j, i, label, ha="center", va="center", fontsize=6, color="black",
                    bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "alpha": 0.75,
                          "linewidth": 0})
    cbar = fig.colorbar(im, ax=ax)
    ticks = np.linspace(-lim, lim, 5)
    cbar.set_ticks(ticks, labels=[f"{10 ** t:.2g}" for t in ticks])
    cbar.set_label(f"eps({method}) / eps(rr_exact)")
    ax.set_title(f"{method} vs exact lower bound (hatched, x: below it), "
                 f"delta = {sub['delta'].iloc[0]:g}")
    save_figure(fig, [outputs["png"], outputs["pdf"]])
    logger.info("%d of %d cells below the exact lower bound", int(below.sum()), below.size)


if "snakemake" in globals():
    run_main(main, snakemake)  # noqa: F821
