"""The workflow's figures: one fixed style per method, the kinds told apart, paper-ready output
(width, one font size, 300 dpi PNG and vector PDF), and the content each figure must show
(the project's bound, vacuous and missing points explained, the chance line)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _extras import need

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

import figstyle  # noqa: E402
import matplotlib.colors  # noqa: E402

import shuffledp  # noqa: E402
from shuffledp.bounds import Bound, BoundInfo, register_bound, unregister_bound  # noqa: E402


# ----------------------------------------------------------------------------- styles
def _all_styles():
    return {m: figstyle.style_of(m) for m in shuffledp.list_bounds()}


def test_every_shipped_bound_has_a_fixed_style_and_any_other_its_name_derived_one():
    from _shipped import SHIPPED_BOUNDS

    missing = [m for m in SHIPPED_BOUNDS if m not in figstyle.METHODS]
    assert not missing, f"add a Style for {missing} to workflow/scripts/figstyle.py METHODS"
    assert set(SHIPPED_BOUNDS) <= set(shuffledp.list_bounds())
    assert set(figstyle.METHODS) <= set(shuffledp.list_bounds())  # no style of a gone bound
    fixed = {s.color.lower() for s in figstyle.METHODS.values()}
    for name in set(shuffledp.list_bounds()) - set(figstyle.METHODS):  # a user's baseline
        st = figstyle.style_of(name)
        assert st == figstyle.fallback_style(name) and st.color.lower() not in fixed


def test_fixed_styles_are_distinct_and_the_reserve_palette_is_unused():
    colours = [s.color.lower() for s in figstyle.METHODS.values()]
    assert len(set(colours)) == len(colours)
    pairs = [(s.color, s.marker) for s in figstyle.METHODS.values()]
    assert len(set(pairs)) == len(pairs)
    refs = {s.color.lower() for s in figstyle.REFERENCES.values()}
    reserve = {c.lower() for c in figstyle._RESERVE_COLOURS}
    assert not (reserve & (set(colours) | refs))


def test_adding_a_bound_keeps_every_other_style():
    before = _all_styles()
    gdp = shuffledp.get_bound("gdp")
    toy = Bound(info=BoundInfo(name="toy_new_bound", kind="upper", title="a toy",
                               citation="test", personalized=True, approx_ldp=False),
                delta_fn=gdp.delta_fn)
    register_bound(toy)
    try:
        after = _all_styles()
        assert {m: after[m] for m in before} == before
        st = after["toy_new_bound"]
        assert st == figstyle.fallback_style("toy_new_bound")  # from its name alone
        assert st.color.lower() not in {s.color.lower() for s in figstyle.METHODS.values()}
        # drawing kwargs do not depend on which methods a figure holds
        assert figstyle.method_style("clones", "upper") == figstyle.method_style("clones", "upper")
    finally:
        unregister_bound("toy_new_bound")


def test_kinds_are_told_apart_and_labels_say_the_kind():
    styles = {k: figstyle.method_style("fmt21_numerical", k)["linestyle"]
              for k in ("approximate", "upper", "lower")}
    assert styles == {"approximate": "--", "upper": "-", "lower": ":"}
    assert figstyle.method_label("gdp", "approximate").endswith("approximation")
    assert figstyle.method_label("rr_exact", "lower").endswith("exact lower bound")
    own = figstyle.method_style("clones", "upper")
    paper = figstyle.method_style("gdp", "approximate")
    assert own["linewidth"] > 1.5 and own["zorder"] > paper["zorder"]


def test_coincident_groups():
    idx = pd.Index([1, 2, 3])
    curves = {"clones": pd.Series([1.0, 2.0, 3.0], idx),
              "fmt23_numerical": pd.Series([1.0, 2.0 * (1 + 1e-5), 3.0], idx),
              "gdp": pd.Series([1.0, 2.5, 3.0], idx),
              "short": pd.Series([1.0, 2.0], pd.Index([1, 2]))}
    assert figstyle.coincident_groups(curves) == [["clones", "fmt23_numerical"], ["gdp"],
                                                   ["short"]]


def test_short_reason():
    r = "fmt21_closed requires eps0 <= 1.414, got eps0 = 2 (n = 1000)"
    assert figstyle.short_reason("fmt21_closed", r) == "requires eps0 <= 1.414"
    assert figstyle.short_reason("gdp", "gdp: central eps = 1 is not reachable") == \
        "central eps = 1 is not reachable"


# ----------------------------------------------------------------------------- tables
@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    import compute_bounds_vs_n
    import compute_gdp_validity
    import compute_personalized

    d = tmp_path_factory.mktemp("tables")
    parts = []
    for k, eps0 in enumerate((0.5, 4.0)):
        p = d / f"b{k}.csv"
        compute_bounds_vs_n.main(inputs={}, outputs={"table": str(p)},
                                 params={"n": [1000, 10000], "eps0": eps0, "delta": 1e-6,
                                         "methods": ["gdp", "clones", "fmt23_numerical",
                                                     "fmt21_closed", "blanket_hoeffding",
                                                     "efmrtt19", "rr_exact"]})
        parts.append(pd.read_csv(p))
    pd.concat(parts).to_csv(d / "bounds_vs_n.csv", index=False)
    compute_gdp_validity.main(inputs={}, outputs={"table": str(d / "gdp_validity.csv")},
                              params={"n": [100, 1000], "eps0": [0.25, 4.0, 10.0],
                                      "delta": 1e-6})
    compute_personalized.main(
        inputs={}, outputs={"table": str(d / "personalized.csv")},
        params={"profiles": ["u", "mix"],
                "profile_specs": {"u": {"kind": "uniform", "low": 0.5, "high": 2.0},
                                  "mix": {"kind": "mixture", "groups": [[0.5, 0.5],
                                                                          [0.5, 2.0]]}},
                "n": [1000, 100000], "delta": 1e-5, "delta0": [0.0, 1e-10],
                "methods": ["gdp", "clones", "fmt21_numerical", "fmt23_numerical", "rr_exact"],
                "seed": 3})
    _utility_table().to_csv(d / "mean_estimation.csv", index=False)
    _sgd_table().to_csv(d / "sgd.csv", index=False)
    import compute_personalized_validity
    import time_bounds

    spec_u = {"kind": "uniform", "low": 0.5, "high": 2.0}
    time_bounds.main(inputs={}, outputs={"table": str(d / "runtime.csv")},
                     params={"n": [300, 1000], "profile": "u", "profile_spec": spec_u,
                             "delta": 1e-6, "repeats": 1, "seed": 1,
                             "methods": ["gdp", "clones", "tightest", "fmt21_closed",
                                         "fmt23_closed", "fmt23_numerical", "rr_exact",
                                         "efmrtt19"]})
    compute_personalized_validity.main(
        inputs={}, outputs={"table": str(d / "personalized_validity.csv")},
        params={"profiles": ["u", "mix", "one_high"],
                "profile_specs": {"u": spec_u,
                                  "mix": {"kind": "mixture", "groups": [[0.5, 0.5],
                                                                          [0.5, 2.0]]},
                                  "one_high": {"kind": "mixture",
                                               "groups": [[0.01, 4.0], [0.99, 0.5]]}},
                "randomizers": ["duchi"], "n": [300, 1000], "delta": 1e-6,
                "gaussian_delta0": 1e-8, "seed": 2,
                "methods": ["gdp", "clones", "tightest", "fmt23_numerical",
                            "blanket_hoeffding", "blanket_bennett", "rr_exact"]})
    return d


def _utility_table():
    """A small mean-estimation table in the workflow's schema (values made up: the plot is
    under test, not the numbers)."""
    rows = []
    scale = {"gdp": 1.0, "clones": 0.8, "fmt21_numerical": 0.8, "fmt23_numerical": 0.9,
             "blanket_bennett": 0.4}
    covered = {"gdp": False, "clones": True, "fmt21_numerical": True, "fmt23_numerical": False,
               "blanket_bennett": True}
    for mech in ("laplace", "duchi"):
        for prof in ("identical", "u"):
            for sweep, points in (("n", [(1000, 1.0), (10000, 1.0)]),
                                  ("eps", [(10000, 0.5), (10000, 2.0)])):
                for n, eps in points:
                    for method, s in scale.items():
                        missing = method == "blanket_bennett" and mech == "duchi"
                        mse = 1.0 / (n * (s * eps) ** 2)
                        rows.append(dict(
                            method=method, kind="approximate" if method == "gdp" else "upper",
                            sweep=sweep, target_eps=eps, delta=1e-6, profile=prof, n=n,
                            mechanism=mech, scale=np.nan if missing else s * eps,
                            eps0=np.nan if missing else s * eps,
                            eps_local_mean=np.nan if missing else s * eps,
                            bound_eps=np.nan if missing else eps, capped=False,
                            covered=covered[method], mse=np.nan if missing else mse,
                            mse_ci_low=np.nan if missing else mse / 1.5,
                            mse_ci_high=np.nan if missing else mse * 1.5,
                            mse_theory=np.nan if missing else mse * 1.1, reps=20, seed=1,
                            status="not_applicable" if missing else "ok",
                            reason=(f"{method} cannot certify eps = {eps}; last reason: "
                                    f"{method} holds for pure LDP only") if missing else "",
                            seconds=0.1))
                    for ref, factor in (("local_only", 30.0), ("central_laplace", 0.01)):
                        if ref == "central_laplace" and mech != "laplace":
                            continue  # one job writes the central reference, once
                        mse = factor / (n * eps ** 2)
                        rows.append(dict(
                            method=ref, kind="reference", sweep=sweep, target_eps=eps,
                            delta=1e-6, profile=prof, n=n,
                            mechanism="central_laplace" if ref == "central_laplace" else mech,
                            scale=eps, eps0=eps, eps_local_mean=eps, bound_eps=eps,
                            capped=False, covered=True, mse=mse, mse_ci_low=mse / 1.5,
                            mse_ci_high=mse * 1.5, mse_theory=mse, reps=20, seed=1,
                            status="ok", reason="", seconds=0.1))
    return pd.DataFrame(rows)


def _sgd_table():
    rows = []
    common = dict(delta=1e-5, rounds=50, dataset="digits", model="logreg",
                  clip=1.0, lr=0.3, chance=0.1017)
    for method, kind, rand, prof in (
        ("gdp", "approximate", "duchi", "identical"), ("clones", "upper", "duchi", "identical"),
        ("local", "upper", "duchi", "identical"), ("clones", "upper", "gaussian", "identical"),
        ("clones", "upper", "duchi", "two_groups"),
        ("gdp", "approximate", "gaussian", "two_groups"),
    ):
        for eps in (1.0, 2.0, 4.0):
            for seed in (1, 2):
                bad = method == "gdp" and eps == 1.0
                rows.append(dict(common, method=method, target_eps=eps, seed=seed, kind=kind,
                                 randomizer=rand, profile=prof,
                                 local_eps_scale=np.nan if bad else eps / 2,
                                 eps_achieved=np.nan if bad else eps,
                                 local_eps_max=np.nan if bad else eps / 2,
                                 local_eps_mean=np.nan if bad else eps / 2, capped=False,
                                 status="not_applicable" if bad else "ok",
                                 reason=("gdp: central eps = 1 at delta = 1e-05 after 50 rounds "
                                         "is not reachable") if bad else "",
                                 accuracy=np.nan if bad else 0.5 + 0.1 * eps / 4 + 0.01 * seed,
                                 train_accuracy=np.nan, n_users=1437, n_params=650,
                                 seconds=1.0))
    for seed in (1, 2):
        rows.append(dict(common, method="nonprivate", target_eps=np.nan, seed=seed,
                         randomizer="duchi", profile="identical",
                         kind="nonprivate", local_eps_scale=np.nan, eps_achieved=np.inf,
                         local_eps_max=np.nan, local_eps_mean=np.nan, capped=False, status="ok",
                         reason="", accuracy=0.9, train_accuracy=0.95, n_users=1437,
                         n_params=650, seconds=1.0))
    return pd.DataFrame(rows)


def _texts(fig):
    import matplotlib.text

    return [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text()]


def _check_paper_ready(fig, name):
    sizes = {round(t.get_fontsize(), 3) for t in _texts(fig)}
    assert sizes == {figstyle.FONT_SIZE}, f"{name}: font sizes {sizes}"
    width = fig.get_size_inches()[0]
    assert width <= figstyle.TEXT_WIDTH + 1e-9, f"{name}: {width} in wide"
    # as saved (bbox "tight"): legends and notes never widen it beyond the text width
    import io

    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=50, bbox_inches="tight", pad_inches=0.03)
    buf.seek(0)
    with Image.open(buf) as im:
        assert im.size[0] <= 50 * (figstyle.TEXT_WIDTH + 0.1), f"{name}: {im.size[0] / 50} in"


def _legend_text(fig):
    return " | ".join(t.get_text() for t in _texts(fig))


DRAWS = {
    "bounds_vs_n": ("plot_bounds_vs_n", ["draw_main", "draw_all"]),
    "gdp_validity": ("plot_gdp_validity", ["draw"]),
    "personalized": ("plot_personalized", ["draw_main", "draw_all"]),
    "mean_estimation": ("plot_utility", ["draw_main", "draw_all"]),
    "sgd": ("plot_sgd", ["draw", "draw_budgets"]),
}


# --- readable at a glance (issue 32): distinct styles, legend entries only for visible lines ---
ALL_DRAWS = {**DRAWS, "runtime": ("plot_runtime", ["draw"]),
             "personalized_validity": ("plot_personalized_validity", ["draw_main", "draw_all"])}


def _style(line):
    return (matplotlib.colors.to_hex(line.get_color()), line.get_marker(),
            str(line.get_linestyle()), round(float(line.get_linewidth()), 2),
            str(line.get_markerfacecolor()))


def _legend_lines(fig):
    """(label, handle) of every legend entry drawn as a line (not a shaded region)."""
    from matplotlib.lines import Line2D

    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    out = []
    for leg in legends:
        for h, t in zip(leg.legend_handles, leg.get_texts(), strict=True):
            if isinstance(h, Line2D):
                out.append((t.get_text(), h))
    return out


def _drawn(fig):
    """label -> the lines drawn with that label (with at least one finite point)."""
    import numpy as np

    out = {}
    for ax in fig.axes:
        for line in ax.get_lines():
            y = np.asarray(line.get_ydata(), float)
            if len(y) and np.isfinite(y).any():
                out.setdefault(line.get_label(), []).append((ax, line))
    return out


def _check_readable(fig, name):
    entries = _legend_lines(fig)
    # distinct series, distinct styles: no two legend entries look alike
    styles = {}
    for label, h in entries:
        st = _style(h)
        assert st not in styles, f"{name}: {label!r} looks like {styles[st]!r}"
        styles[st] = label
    drawn = _drawn(fig)
    for label, _h in entries:
        if label in drawn:  # an entry naming lines drawn with that label: visible somewhere
            assert any(not _hidden(ax, line, drawn) for ax, line in drawn[label]), \
                f"{name}: legend entry {label!r} names a line hidden under another everywhere"


def _hidden(ax, line, drawn):
    """True when another labelled line of the same axes runs through every point of it."""
    import numpy as np

    x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
    for other in ax.get_lines():
        if other is line or other.get_label().startswith("_") or other.get_zorder() < \
                line.get_zorder():
            continue
        ox, oy = np.asarray(other.get_xdata(), float), np.asarray(other.get_ydata(), float)
        if len(ox) == len(x) and np.array_equal(ox, x) and np.allclose(oy, y, rtol=1e-3):
            return True
    return False


@pytest.mark.parametrize("kind", list(ALL_DRAWS))
def test_every_figure_is_paper_ready_tells_its_series_apart_and_names_only_visible_lines(
        kind, tables):
    import importlib

    import matplotlib.pyplot as plt
    from wfutils import read_table

    figstyle.apply_style()
    module, draws = ALL_DRAWS[kind]
    mod = importlib.import_module(module)
    df = read_table(tables / f"{kind}.csv", kind)
    for draw in draws:
        fig = getattr(mod, draw)(df)
        try:
            _check_paper_ready(fig, f"{module}.{draw}")
            _check_readable(fig, f"{module}.{draw}")
            if kind in DRAWS:
                assert "clones (this project)" in _legend_text(fig), \
                    f"{module}.{draw}: project bound missing"
        finally:
            plt.close(fig)


def test_runtime_joins_coinciding_curves_and_keeps_notes_out_of_the_figure(tables):
    import matplotlib.pyplot as plt
    import plot_runtime
    from wfutils import read_table

    df = read_table(tables / "runtime.csv", "runtime")
    # the measured times vary with the machine's load: make tightest take clones' times
    # exactly, so the test is about the joining, not about a timing (a curve within
    # SAME_TIME of another is drawn once, the label naming both)
    clones = df[df["method"] == "clones"].set_index("n")["seconds_min"]
    tight = df["method"] == "tightest"
    df.loc[tight, "seconds_min"] = df.loc[tight, "n"].map(clones).to_numpy()
    fig = plot_runtime.draw(df)
    try:
        labels = [lab for lab, _ in _legend_lines(fig)]
        assert any("clones (this project) = tightest" in lab for lab in labels), labels
        assert not any("not drawn" in t.get_text() for t in _texts(fig))  # notes in the caption
        # the plot takes at least half of the figure's height
        top = max(ax.get_position().y1 for ax in fig.axes)
        bottom = min(ax.get_position().y0 for ax in fig.axes)
        assert top - bottom >= 0.5
    finally:
        plt.close(fig)
    caption = (ROOT / "workflow" / "report" / "runtime.rst").read_text()
    assert "``reason`` column" in caption


def test_profile_colours_are_told_apart():
    import itertools
    import math

    import plot_personalized_validity as pv

    def lab(hex_colour):
        rgb = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
        x = (0.4124 * lin[0] + 0.3576 * lin[1] + 0.1805 * lin[2]) / 0.95047
        y = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
        z = (0.0193 * lin[0] + 0.1192 * lin[1] + 0.9505 * lin[2]) / 1.08883

        def f(t):
            return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

        return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))

    colours = pv.PROFILE_COLOURS
    gaps = [math.dist(lab(a), lab(b)) for a, b in itertools.combinations(colours, 2)]
    assert min(gaps) >= 25  # CIE76 units: distinct at a glance
    assert min(math.dist(lab(c), lab("#C00000")) for c in colours) >= 25  # not the invalid red
    styles = pv.profile_styles([f"p{i}" for i in range(20)])
    assert len(set(styles.values())) == 20


def test_personalized_validity_legend_names_each_profile_and_style_once(tables):
    import matplotlib.pyplot as plt
    import plot_personalized_validity as pv
    from wfutils import read_table

    df = read_table(tables / "personalized_validity.csv", "personalized_validity")
    fig = pv.draw_main(df)
    try:
        labels = [t.get_text() for t in fig.legends[0].get_texts()]
        assert [lab for lab in labels if lab.startswith("profile ")] == [
            "profile u", "profile mix", "profile one_high"]
        assert sum("dashed" in lab for lab in labels) == 1
        assert sum("solid" in lab for lab in labels) == 1
    finally:
        plt.close(fig)
    fig = pv.draw_all(df)
    try:
        labels = [lab for lab, _ in _legend_lines(fig)]
        clones = [lab for lab in labels if lab.startswith("clones [") or " clones [" in lab]
        assert len(clones) >= 2, labels
    finally:
        plt.close(fig)


def test_bounds_vs_n_names_coinciding_curves_and_marks_vacuous_and_missing(tables):
    import matplotlib.pyplot as plt
    import plot_bounds_vs_n
    from wfutils import read_table

    figstyle.apply_style()
    df = read_table(tables / "bounds_vs_n.csv", "bounds_vs_n")
    fig = plot_bounds_vs_n.draw_main(df)
    text = _legend_text(fig)
    # at identical budgets clones equals FMT23's numerical bound: named together, once
    assert "clones (this project) = best published (fmt23_numerical)" in text
    assert figstyle.LOWER_REGION_LABEL in text
    assert "gdp below the exact lower bound" in text  # eps0 = 4, n = 1000
    plt.close(fig)
    fig = plot_bounds_vs_n.draw_all(df)
    text = _legend_text(fig)
    assert "clones (this project) = fmt23_numerical (FMT23), rigorous" in text
    assert "vacuous" in text and "efmrtt19 not drawn" in text
    plt.close(fig)


def test_gdp_validity_shows_vacuous_cells_readable_ticks_and_the_clt_contour(tables):
    import matplotlib.pyplot as plt
    import plot_gdp_validity
    from wfutils import read_table

    figstyle.apply_style()
    df = read_table(tables / "gdp_validity.csv", "gdp_validity")
    assert df[df["method"] == "gdp"]["vacuous"].any()
    fig = plot_gdp_validity.draw(df)
    text = _legend_text(fig)
    assert "vac." in text and "CLT threshold" in text and "below the exact lower bound" in text
    cbar = fig.axes[-1]
    labels = [t.get_text() for t in cbar.get_yticklabels()]
    assert labels == ["1/8", "1/4", "1/2", "1", "2", "4", "8"]
    plt.close(fig)


def test_utility_figure_draws_ratios_to_gdp_and_lists_missing_points(tables):
    import matplotlib.pyplot as plt
    import plot_utility
    from wfutils import read_table

    df = read_table(tables / "mean_estimation.csv", "mean_estimation")
    r = plot_utility.ratios(df)
    g = r[(r["method"] == "clones") & (r["mechanism"] == "laplace")]
    assert np.allclose(g["ratio"], 1 / 0.8 ** 2) and np.allclose(g["ratio_theory"], 1 / 0.8 ** 2)
    assert (g["ratio_low"] < g["ratio"]).all() and (g["ratio"] < g["ratio_high"]).all()
    assert np.allclose(r[r["method"] == "gdp"]["ratio"], 1.0)
    figstyle.apply_style()
    fig = plot_utility.draw_main(df, mechanism="laplace", title="Mean", ylabel="MSE")
    text = _legend_text(fig)
    # clones and fmt21_numerical are calibrated to the same budgets: drawn once, named together
    assert "clones (this project), rigorous; drawn for fmt21_numerical (FMT21 Thm 3.2) on " in text
    assert "hollow marker" in text
    plt.close(fig)
    fig = plot_utility.draw_all(df, title="Mean", ylabel="MSE")
    assert "duchi, blanket_bennett: no run at" in _legend_text(fig)
    plt.close(fig)
    with pytest.raises(ValueError, match="main_mechanism 'oue'"):
        plot_utility.draw_main(df, mechanism="oue")


def test_sgd_figure_marks_unreachable_targets_and_draws_chance(tables):
    import matplotlib.pyplot as plt
    import plot_sgd
    from wfutils import read_table

    figstyle.apply_style()
    fig = plot_sgd.draw(read_table(tables / "sgd.csv", "sgd"))
    text = _legend_text(fig)
    assert "gdp: not reachable" in text and "chance (most frequent class, 0.10)" in text
    assert not any(ax.get_legend() for ax in fig.axes)  # the legend is outside the axes
    plt.close(fig)


def test_saved_files_are_vector_pdf_and_300_dpi_png(tables, tmp_path):
    import plot_gdp_validity
    from PIL import Image

    out = {"png": str(tmp_path / "g.png"), "pdf": str(tmp_path / "g.pdf")}
    plot_gdp_validity.main(inputs={"table": str(tables / "gdp_validity.csv")}, outputs=out)
    with Image.open(out["png"]) as im:
        dpi = im.info["dpi"]
        assert abs(dpi[0] - 300) < 1 and im.size[0] <= 300 * (figstyle.TEXT_WIDTH + 0.1)
    first = Path(out["pdf"]).read_bytes()
    assert first.startswith(b"%PDF") and b"/Subtype /Image" not in first  # vector, no raster
    plot_gdp_validity.main(inputs={"table": str(tables / "gdp_validity.csv")}, outputs=out)
    assert Path(out["pdf"]).read_bytes() == first  # no creation date: same bytes


# ----------------------------------------------------------------------------- report
def test_render_table_keeps_every_row_and_greys_rows_that_are_not_ok(tables, tmp_path):
    import render_table

    out = tmp_path / "t.html"
    render_table.main(inputs={"table": str(tables / "bounds_vs_n.csv")},
                      outputs={"html": str(out)}, params={"kind": "bounds_vs_n"})
    text = out.read_text()
    df = pd.read_csv(tables / "bounds_vs_n.csv")
    assert text.count("<tr") == len(df) + 1  # the header and every row
    assert text.count('<tr class="na">') == int((df["status"] != "ok").sum()) > 0
    assert "nan" not in text and "&lt;NA&gt;" not in text


def test_report_landing_embeds_every_main_figure_with_its_rendered_caption(tables, tmp_path):
    need("docutils")
    import plot_gdp_validity
    import report_landing
    from docutils.core import publish_parts

    png = tmp_path / "g.png"
    plot_gdp_validity.main(inputs={"table": str(tables / "gdp_validity.csv")},
                           outputs={"png": str(png), "pdf": str(tmp_path / "g.pdf")})
    caption = tmp_path / "c.rst"
    caption.write_text('Delta = {{ snakemake.config["gdp_validity"]["delta"] }}.\n\n'
                       "Produced with the configuration `x.yaml`_ (file "
                       "``{{ snakemake.input.config }}``).\n")
    out = tmp_path / "landing.rst"
    report_landing.main(inputs={"figures": [str(png)] * 2, "captions": [str(caption)] * 2},
                        outputs={"landing": str(out)},
                        params={"titles": ["A", "B"], "configs": ["a.yaml", "b.yaml"],
                                "config": {"gdp_validity": {"delta": 1e-6}}})
    text = out.read_text()
    assert max(len(line) for line in text.splitlines()) < 200  # below docutils' line limit
    assert "Delta = 1e-06." in text and "Produced with" not in text and "``b.yaml``" in text
    html = publish_parts(text, writer="html")["html_body"]
    assert html.count('<img') == 2 and html.count('src="data:image/png;base64,') == 2
    assert "System Message" not in html and "Problems with" not in html
    with pytest.raises(ValueError, match="differ in length"):
        report_landing.main(inputs={"figures": [str(png)], "captions": []},
                            outputs={"landing": str(out)},
                            params={"titles": ["A"], "configs": ["a"], "config": {}})


def test_the_report_description_includes_the_landing_page_and_scales_figures():
    text = (ROOT / "workflow" / "report" / "workflow.rst").read_text()
    assert ".. include:: results/{{ snakemake.config[\"run\"] }}/report/landing.rst" in text
    assert "max-width: 100%" in text
    smk = (ROOT / "workflow" / "scripts" / "wfmanifest.py").read_text()
    for name in ("bounds_vs_n", "gdp_validity", "personalized", "mean_estimation",
                 "frequency_estimation", "sgd", "runtime"):
        assert f'("{name}", ' in smk  # every main figure is on the landing page


def test_panel_groups_draw_coinciding_curves_once_and_say_where():
    idx = pd.Index([1, 2])
    a, b = pd.Series([1.0, 2.0], idx), pd.Series([3.0, 4.0], idx)
    panels = [("p1", {"clones": a, "local": a.copy(), "gdp": b}),
              ("p2", {"clones": a, "local": b.copy(), "gdp": b}),
              ("p3", {"clones": b, "gdp": a})]
    draw, label = figstyle.panel_groups(panels, labels={"clones": "C", "local": "L", "gdp": "G"})
    assert draw == {"p1": ["clones", "gdp"], "p2": ["clones", "local"], "p3": ["clones", "gdp"]}
    assert label == {"clones": "C = L on p1", "gdp": "G", "local": "L = G on p2"}
    # equal in every panel: no "on ..."
    draw, label = figstyle.panel_groups([("p1", {"x": a, "y": a.copy()}),
                                         ("p2", {"x": b, "y": b.copy()})],
                                        labels={"x": "X", "y": "Y"})
    assert draw == {"p1": ["x"], "p2": ["x"]} and label == {"x": "X = Y"}


def test_a_new_baseline_reaches_the_figures_and_the_api_reference_without_other_edits(
        tmp_path, monkeypatch):
    """docs/adding_a_baseline.md end to end, as far as one process can: a module shaped like
    the guide's (registered on import), then the bounds_vs_n job and figure with it; its style
    comes from its name alone and the API reference lists its module without an edit."""
    import importlib.util

    import compute_bounds_vs_n
    import matplotlib.pyplot as plt
    import plot_bounds_vs_n
    from wfutils import read_table

    src = tmp_path / "zz_test_toy_bound.py"
    src.write_text('''"""A toy baseline (registered ``zz_test_toy_bound``, kind ``upper``): eps =
eps0, the local budget, a valid central bound for any eps0-LDP randomizer (post-processing)."""

from shuffledp.bounds.base import Bound, BoundInfo
from shuffledp.bounds.registry import register_bound


def toy_eps(*, profile, delta):
    return float(max(profile.eps_max, 0.0))


BOUND = register_bound(Bound(
    info=BoundInfo(name="zz_test_toy_bound", kind="upper", title="toy: the local budget",
                   citation="post-processing", personalized=False, approx_ldp=False,
                   randomizers=("any",), options={}),
    eps_fn=toy_eps))
''')
    spec = importlib.util.spec_from_file_location("zz_test_toy_bound_module", src)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        assert "zz_test_toy_bound" in shuffledp.list_bounds()
        out = tmp_path / "eps0_4.csv"
        compute_bounds_vs_n.main(inputs={}, outputs={"table": str(out)},
                                 params={"n": [1000, 10000], "eps0": 4.0, "delta": 1e-6,
                                         "methods": ["gdp", "clones", "zz_test_toy_bound",
                                                     "rr_exact"]})
        df = read_table(out, "bounds_vs_n")
        assert (df[df["method"] == "zz_test_toy_bound"]["status"] == "ok").all()
        figstyle.apply_style()
        fig = plot_bounds_vs_n.draw_all(df)
        try:
            entries = dict(_legend_lines(fig))
            toy = [h for lab, h in entries.items() if lab.startswith("zz_test_toy_bound")]
            assert toy, list(entries)
            assert matplotlib.colors.to_hex(toy[0].get_color()) == \
                figstyle.fallback_style("zz_test_toy_bound").color.lower()
            _check_readable(fig, "bounds_vs_n_all with a new baseline")
        finally:
            plt.close(fig)
    finally:
        unregister_bound("zz_test_toy_bound")
    # the API reference's generated page picks up a new module file
    sys.path.insert(0, str(ROOT / "docs" / "api"))
    import _bounds_page

    fake = tmp_path / "bounds"
    (fake / "clones").mkdir(parents=True)
    for name in ("__init__.py", "base.py", "toy_baseline.py", "_private.py"):
        (fake / name).write_text("")
    (fake / "clones" / "__init__.py").write_text("")
    monkeypatch.setattr(_bounds_page, "BOUNDS", fake)
    assert _bounds_page.modules() == ["shuffledp.bounds.toy_baseline"]
    assert ".. automodule:: shuffledp.bounds.toy_baseline" in _bounds_page.render()


def test_the_report_css_targets_snakemakes_content_pane():
    """workflow.rst starts Snakemake's content pane at the top (its flex container centres a
    page taller than the window out of reach): the selector must name the classes of the
    installed Snakemake's pane (.ci/report_browser_check.py checks the effect in Chromium)."""
    import snakemake

    js = (Path(snakemake.__file__).parent / "report" / "html_reporter" / "template" /
          "components" / "content.js").read_text()
    pane = re.search(r'className: "(grow flex items-center[^"]*)"', js)
    assert pane, "Snakemake's content pane changed: rerun .ci/report-check"
    css = (ROOT / "workflow" / "report" / "workflow.rst").read_text()
    rule = re.search(r"^\s*(\.[\w.-]+)\s*\{\s*align-items:\s*flex-start", css, flags=re.M)
    assert rule, "workflow.rst lost the rule that starts the content pane at the top"
    assert set(rule.group(1).strip(".").split(".")) <= set(pane.group(1).split())
