"""Figures of experiment 2: central eps vs n for personalized budget profiles, drawn only from
the table.

*Main figure* (``png``, ``pdf``): the contrasting profiles (those of ``params.main_profiles``
that the table holds; if none, the first three of the table) at pure local DP, one panel each,
with the paper's ``gdp`` (approximation, dashed), the project's rigorous ``clones`` (solid,
thick), the best published rigorous bound at each point (through the worst user,
eps0 = max eps_i; named by the bounds attaining it), the highest exact lower bound (dotted)
and the region below it shaded; red rings where ``gdp`` falls below it.

*Appendix figure* (``all_png``, ``all_pdf``): every profile (columns) and local delta (rows),
every bound; coinciding curves named together, vacuous points (the bound equals max eps_i) as
hollow markers, and a note listing the points each bound does not cover and why (for example
FMT's local-delta condition n * delta0 < delta, or a theorem's eps0 range).

Styles: :mod:`figstyle`.  Snakemake interface (rule ``plot_personalized``): input ``table``;
outputs ``png``, ``pdf``, ``all_png``, ``all_pdf``; params ``main_profiles`` (optional).
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

POINT = ("profile", "delta0", "n")


def _local(delta0):
    return "pure LDP" if delta0 == 0 else f"local delta = {delta0:g}"


def draw_main(df, main_profiles=()):
    import matplotlib.pyplot as plt

    ok = df[(df["status"] == "ok") & (df["delta0"] == df["delta0"].min())]
    present = list(dict.fromkeys(ok["profile"]))
    profiles = [p for p in main_profiles if p in present] or present[:3]
    ok = ok[ok["profile"].isin(profiles)]
    delta0 = ok["delta0"].iloc[0]
    fig, axes = plt.subplots(1, len(profiles), figsize=(TEXT_WIDTH, 2.1), squeeze=False)
    panels = {(p, delta0): ax for p, ax in zip(profiles, axes[0], strict=True)}
    main_bound_panels(panels, ok, panels=("profile", "delta0"), point=POINT)
    for k, ((prof, d0), ax) in enumerate(panels.items()):
        ax.set_title(f"{prof}, {_local(d0)}")
        ax.set_xlabel("number of users n")
        if k == 0:
            ax.set_ylabel(f"central eps (delta = {df['delta'].iloc[0]:g})")
    handles, labels = collect_legend(fig)
    finish(fig, handles, labels, ncol=2)
    return fig


def draw_all(df):
    import matplotlib.pyplot as plt

    ok = df[df["status"] == "ok"]
    profiles = list(dict.fromkeys(df["profile"]))
    delta0s = sorted(df["delta0"].unique())
    fig, axes = plt.subplots(len(delta0s), len(profiles), squeeze=False, sharex=True,
                             figsize=(TEXT_WIDTH, 1.75 * len(delta0s) + 0.3))
    panels = {(p, d0): axes[i][j] for i, d0 in enumerate(delta0s)
              for j, p in enumerate(profiles)}
    every_bound_panels(panels, ok, panels=("profile", "delta0"), point=POINT)
    for (prof, d0), ax in panels.items():
        i, j = delta0s.index(d0), profiles.index(prof)
        ax.set_title(f"{prof}\n{_local(d0)}")
        if i == len(delta0s) - 1:
            ax.set_xlabel("n")
        if j == 0:
            ax.set_ylabel(f"central eps (delta = {df['delta'].iloc[0]:g})")
    handles, labels = collect_legend(fig)
    h, lab = vacuous_handles()
    notes = []
    for d0 in delta0s:
        notes += [f"{_local(d0)}: {line}" for line in
                  missing_note(df[df["delta0"] == d0], total_by=["profile", "n"])]
    finish(fig, [*handles, h], [*labels, lab], ncol=2, notes=notes)
    return fig


def main(*, inputs, outputs, params=None, log=None):
    logger = get_logger(log)
    apply_style()
    df = read_table(inputs["table"], "personalized")
    main_profiles = list((params or {}).get("main_profiles") or [])
    save_figure(draw_main(df, main_profiles), [outputs["png"], outputs["pdf"]])
    if "all_png" in outputs:
        save_figure(draw_all(df), [outputs["all_png"], outputs["all_pdf"]])
    logger.info("plotted %d profiles x %d delta0 x %d methods", df["profile"].nunique(),
                df["delta0"].nunique(), df["method"].nunique())


if "snakemake" in globals():
    run_main(main, snakemake)  # noqa: F821
