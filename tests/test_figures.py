"""Report figures: mutants drawn beside their claim, the ``paper`` style, the overview's
panels by kind of assertion, labelled log axes, and the mathtext rewrite of statements.

Figures are checked through their matplotlib objects (lines, legend texts, axes, tick
labels, font sizes), never by comparing pixels. The data are synthetic: power laws with
lognormal noise whose slopes are known.
"""

from __future__ import annotations

import json
import math
import re
import zlib

import numpy as np
import pytest
from click.testing import CliRunner

from bilevel_theory.reports import figures, render_entries
from bilevel_theory.reports.figures import (
    MUTANT_LOOKS,
    PANELS,
    STYLES,
    VERDICT_COLORS,
    claim_fig,
    claim_figure,
    mathtext_ok,
    mathtext_source,
    overview_fig,
    panel_of,
    plot_claim,
    visible_tick_labels,
)
from bilevel_theory.reports.render import mutant_rows

XS = [2, 4, 8, 16, 32]


def _rows(claim, xs, slope, scale=1.0, bound=False):
    """Six replicates per sweep value of ``scale * x**slope`` with lognormal noise."""
    rng = np.random.default_rng(zlib.crc32(claim.encode()))
    rows = []
    for p, x in enumerate(xs):
        ys = scale * x ** slope * np.exp(rng.normal(0, 0.1, 6))
        for r, y in enumerate(ys):
            metrics = {"value": float(y)}
            if bound:
                metrics["bound"] = 3 * scale * x ** slope
            rows.append({"claim": claim, "budget": "smoke", "point": p, "value": float(x),
                         "replicate": r, "metrics": metrics, "config_hash": "h"})
    return rows


def _entry(cid, rows, slope, predicted, verdict, kind="matches", **extra):
    """A summary entry whose fit is the least-squares line through the log means."""
    xs = sorted({r["value"] for r in rows})
    mean = [float(np.mean([r["metrics"]["value"] for r in rows if r["value"] == x]))
            for x in xs]
    fitted = np.polyfit(np.log(xs), np.log(mean), 1)
    fit = {"x": xs, "mean": mean, "lo": [m * 0.9 for m in mean],
           "hi": [m * 1.1 for m in mean], "slope": float(fitted[0]),
           "intercept": float(fitted[1]), "interval": [slope - 0.1, slope + 0.1]}
    entry = {"id": cid, "kind": kind, "verdict": verdict, "expected": "holds",
             "measured": fit["slope"], "interval": fit["interval"], "predicted": predicted,
             "scale": "loglog", "window": None, "variable": "n", "quantity": "error",
             "status": "complete", "fit": fit, "tolerance": 0.15, "budget": "smoke"}
    entry.update(extra)
    return entry


def _two_mutants():
    """``syn.speedup`` (slope −1, holds) and its two mutants: ``shared`` (slope 0, violated)
    and ``sqrt`` (slope −0.5, violated); the mutants' slopes are measured from their rows."""
    rows = _rows("syn.speedup", XS, -1.0)
    mutants = {"shared": _rows("syn.speedup@shared", XS, 0.0, 0.5),
               "sqrt": _rows("syn.speedup@sqrt", XS, -0.5, 2.0)}
    power = []
    for name, mrows in mutants.items():
        slope = _entry("m", mrows, 0, 0, "violated")["measured"]
        power.append({"mutant": name, "change": f"{name} noise", "verdict": "violated",
                      "required": "violated", "caught": True, "measured": slope,
                      "interval": [slope - 0.1, slope + 0.1], "reason": ""})
    entry = _entry("syn.speedup", rows, -1.0, -1.0, "holds", power=power,
                   mutants=[{"name": n, "change": f"{n} noise"} for n in mutants])
    return entry, rows, mutants


def _new_axes():
    from matplotlib.figure import Figure  # noqa: PLC0415

    return Figure(figsize=(6.4, 4.6)).subplots()


def _legend_texts(ax):
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend else []


def _loglog_slope(line) -> float:
    x, y = (np.asarray(v, float) for v in line.get_data())
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


# ----------------------------------------------------------------------------- mutants


def test_mutants_drawn_beside_the_claim_with_verdict_and_slope():
    entry, rows, mutants = _two_mutants()
    ax = plot_claim(entry, ax=_new_axes(), rows=rows, mutants=mutants)
    texts = _legend_texts(ax)
    by_label = {line.get_label(): line for line in ax.get_lines()}
    for item, (color, _) in zip(entry["power"], MUTANT_LOOKS):
        label = f"mutant {item['mutant']}: violated, slope {figures._fmt(item['measured'])}"
        assert label in texts, texts
        line = by_label[label]
        assert line.get_color() == color and line.get_linestyle() == "-."
        # the drawn line has the mutant's measured slope (not the claim's, not the law's)
        assert _loglog_slope(line) == pytest.approx(item["measured"], abs=1e-9)
    slopes = [p["measured"] for p in entry["power"]]
    assert slopes[0] == pytest.approx(0.0, abs=0.15)
    assert slopes[1] == pytest.approx(-0.5, abs=0.15)
    # the claim's own series as before: its fit and the predicted law
    assert f"fit: slope {figures._fmt(entry['fit']['slope'])} [−1.1, −0.9]" in texts, texts
    assert any(t.startswith("predicted: slope −1") for t in texts), texts
    colors = {c for c, _ in MUTANT_LOOKS}
    assert not colors & {figures.SERIES_A, figures.SERIES_B, figures.PREDICTED}


def test_exact_count_at_one_point_draws_each_mutant_as_a_bar():
    """A one-point ``exact`` claim (a count): the mutant's count is a bar beside the measured
    and predicted ones, labelled with its verdict."""
    def one_point(claim, value):
        return [{"claim": claim, "budget": "smoke", "point": 0, "value": 1.0, "replicate": r,
                 "metrics": {"value": value}, "config_hash": "h"} for r in range(3)]
    rows = one_point("syn.count", 5.0)
    mutants = {"extra_round": one_point("syn.count@extra_round", 6.0)}
    entry = {"id": "syn.count", "kind": "exact", "verdict": "holds", "expected": "holds",
             "measured": 5.0, "predicted": 5.0, "scale": "linear", "variable": "k",
             "quantity": "rounds", "status": "complete", "budget": "smoke",
             "power": [{"mutant": "extra_round", "verdict": "violated",
                        "required": "violated", "caught": True, "measured": 6.0}]}
    ax = plot_claim(entry, ax=_new_axes(), rows=rows, mutants=mutants)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert any(lab.startswith("mutant extra_round") and "violated" in lab for lab in labels)
    heights = sorted(p.get_height() for p in ax.patches)
    assert heights == [5.0, 5.0, 6.0]
    without = plot_claim(entry, ax=_new_axes(), rows=rows, mutants={})
    assert sorted(p.get_height() for p in without.patches) == [5.0, 5.0]


def test_no_mutants_run_figure_as_before():
    entry, rows, _ = _two_mutants()
    with_none = plot_claim(entry, ax=_new_axes(), rows=rows)
    with_empty = plot_claim(entry, ax=_new_axes(), rows=rows, mutants={"shared": []})
    for ax in (with_none, with_empty):
        assert not any(t.startswith("mutant") for t in _legend_texts(ax))
        assert len(ax.get_lines()) == 3  # means, fit, predicted law


def test_mutant_without_verdict_and_bounded_by_mutant():
    rows = _rows("syn.bound", [1, 10, 100], -1.0, bound=True)
    entry = _entry("syn.bound", rows, -1.0, 1.0, "holds", kind="bounded_by",
                   power=[{"mutant": "loose", "verdict": "violated", "measured": 4.2}])
    mutants = {"loose": _rows("syn.bound@loose", [1, 10, 100], -0.5),
               "unjudged": _rows("syn.bound@unjudged", [1, 10, 100], -0.7)}
    texts = _legend_texts(plot_claim(entry, ax=_new_axes(), rows=rows, mutants=mutants))
    assert "mutant loose: violated, max mean/bound 4.2" in texts, texts
    assert "mutant unjudged: not judged" in texts, texts


def test_report_finds_the_mutants_rows(tmp_path):
    entry, rows, mutants = _two_mutants()
    store = rows + [r for m in mutants.values() for r in m]
    by_claim = {}
    for r in store:
        by_claim.setdefault(r["claim"], []).append(r)
    found = mutant_rows(entry, by_claim)
    assert sorted(found) == ["shared", "sqrt"]
    assert all(len(v) == 6 * len(XS) for v in found.values())
    assert mutant_rows({**entry, "power": None, "mutants": []}, by_claim) == {}
    # the report's figure of the claim carries them
    index = render_entries([entry], {"complete": True}, store, tmp_path / "report", jobs=1)
    report = json.loads((index.parent / "report.json").read_text(encoding="utf-8"))
    assert report["meta"]["figure_style"] == "default"
    assert (index.parent / report["figures"]["syn.speedup"]).is_file()


# ----------------------------------------------------------------------------- paper style


def _texts(fig):
    from matplotlib.text import Text  # noqa: PLC0415

    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def test_paper_style_single_column_no_title_no_verdict_colour(tmp_path):
    from matplotlib.colors import to_hex  # noqa: PLC0415

    entry, rows, mutants = _two_mutants()
    fig = claim_fig(entry, rows, mutants=mutants, style_name="paper")
    assert fig.get_figwidth() == pytest.approx(3.3)
    ax = fig.axes[0]
    assert not any(ax.get_title(loc=loc) for loc in ("left", "center", "right"))
    assert not fig.get_suptitle()
    texts = _texts(fig)
    assert texts and min(t.get_fontsize() for t in texts) >= 7
    verdict_colors = set(VERDICT_COLORS.values())
    assert not {to_hex(t.get_color()) for t in texts} & verdict_colors
    # the default style: a title coloured by the verdict
    default = claim_fig(entry, rows, mutants=mutants)
    assert default.get_figwidth() == pytest.approx(figures.SIZE[0])
    title = default.axes[0].get_title(loc="left")
    assert title.startswith("syn.speedup")
    assert [to_hex(t.get_color()) for t in _texts(default) if t.get_text() == title] == \
        [VERDICT_COLORS["holds"]]
    # lines and markers thinner in the column, by at least the style's line width (1.2 of
    # 1.5; markers left to the rc sizes shrink from 6 to 4)
    widths = {style: sorted((ln.get_linewidth(), ln.get_markersize())
                            for ln in f.axes[0].get_lines())
              for style, f in (("paper", fig), ("default", default))}
    assert len(widths["paper"]) == len(widths["default"]) > 0
    for (lw_p, ms_p), (lw_d, ms_d) in zip(widths["paper"], widths["default"]):
        assert lw_p <= 0.8 * lw_d * (1 + 1e-9) and ms_p <= 0.8 * ms_d * (1 + 1e-9)
    path = claim_figure(entry, rows, tmp_path / "c.png", ("png", "svg"), 80,
                        mutants=mutants, style_name="paper")
    svg = path.with_suffix(".svg").read_text(encoding="utf-8")
    assert "<text" in svg and "mutant shared: violated" in svg


def test_default_style_svg_text_is_editable(tmp_path):
    entry, rows, _ = _two_mutants()
    path = claim_figure(entry, rows, tmp_path / "d.png", ("svg",), 80)
    svg = path.with_suffix(".svg").read_text(encoding="utf-8")
    assert "<text" in svg and "fit: slope" in svg


def test_style_name_is_checked():
    with pytest.raises(ValueError, match=r"`style` must be one of default, paper, got 'poster'"):
        figures.check_style("poster")
    with pytest.raises(ValueError, match="`style`"), figures.style("poster"):
        pass
    assert set(STYLES) == {"default", "paper"}


def test_cli_report_style(tmp_path):
    from bilevel_theory.reports.cli import main  # noqa: PLC0415

    result = CliRunner().invoke(main, ["report", str(tmp_path), "--style", "poster"])
    assert result.exit_code == 2
    assert "`style`" in result.output and "default, paper" in result.output
    assert "--style" in CliRunner().invoke(main, ["report", "--help"]).output


# ----------------------------------------------------------------------------- overview


def _overview_entries():
    """Claims of four kinds; one ``bounded_by`` ratio of 10⁶ and small slope deviations."""
    entries = []
    for i, (kind, scale, measured, predicted) in enumerate([
            ("matches", "loglog", -0.98, -1.0), ("at_most", "loglog", -0.45, -0.5),
            ("contrast", "loglog", -1.03, -1.0), ("geometric", "semilog", -0.21, -0.2),
            ("bounded_by", "loglog", 1.1e6, 1.0), ("bounded_by", "loglog", 0.4, 1.0),
            ("exact", "linear", 10.0, 10.0)]):
        entries.append({"id": f"syn.c{i}", "kind": kind, "scale": scale, "measured": measured,
                        "predicted": predicted, "interval": [measured * 0.9, measured * 1.1],
                        "verdict": "violated" if measured > 1e3 else "holds",
                        "status": "complete"})
    entries.append({"id": "syn.missing", "kind": "matches", "verdict": "inconclusive",
                    "status": "missing", "measured": None, "predicted": -0.5})
    return entries


def test_overview_one_panel_per_kind_in_its_own_units():
    entries = _overview_entries()
    fig = overview_fig(entries, {e["id"]: 0.1 for e in entries})
    panels = list(dict.fromkeys(panel_of(e) for e in entries))
    assert panels == ["slope", "log-ratio", "ratio", "count"]
    assert len(fig.axes) == len(panels)
    for ax, panel in zip(fig.axes, panels):
        assert ax.get_xlabel() == PANELS[panel][1]
        rows = [e["id"] for e in entries if panel_of(e) == panel]
        assert [t.get_text() for t in ax.get_yticklabels()] == rows
    slope_ax, _, ratio_ax, _ = fig.axes
    # the ratio of 10⁶ sits on its own log axis: the slopes' deviations are not squashed
    assert ratio_ax.get_xscale() == "log" and ratio_ax.get_xlim()[1] > 1e6
    assert slope_ax.get_xscale() == "linear" and slope_ax.get_xlim()[1] < 1.0
    fig.draw_without_rendering()
    assert len(visible_tick_labels(ratio_ax.xaxis)) >= 2


def test_overview_grows_with_the_rows_and_paper_has_no_colour():
    from matplotlib.colors import to_hex  # noqa: PLC0415

    entries = _overview_entries()
    many = [{**e, "id": f"{e['id']}.{k}"} for k in range(10) for e in entries]
    small, big = overview_fig(entries), overview_fig(many)
    assert big.get_figheight() > small.get_figheight() + 0.25 * (len(many) - len(entries))
    paper = overview_fig(many, style_name="paper")
    assert paper.get_figwidth() == pytest.approx(3.3) and not paper.get_suptitle()
    assert not any(ax.get_title(loc="left") for ax in paper.axes)
    texts = _texts(paper)
    assert min(t.get_fontsize() for t in texts) >= 7
    assert not {to_hex(t.get_color()) for t in texts} & set(VERDICT_COLORS.values())


# ----------------------------------------------------------------------------- log axes


@pytest.mark.parametrize("lo, hi", [(2e-5, 9e-4), (1.5, 9.0), (120.0, 900.0), (0.3, 5.0)])
def test_log_axes_show_two_labels_on_a_short_range(lo, hi):
    """y spans at most about one decade (a single power of 10 in view, or none), on and off
    the plain-number ranges; x has 12 sweep values over less than a decade."""
    xs = list(np.geomspace(20, 150, 12))
    slope = math.log(hi / lo) / math.log(150 / 20)
    rows = _rows("syn.short", xs, slope, lo / 20 ** slope)
    entry = _entry("syn.short", rows, slope, slope, "holds")
    ax = plot_claim(entry, ax=_new_axes(), rows=rows)
    ax.figure.draw_without_rendering()
    assert len(visible_tick_labels(ax.yaxis)) >= 2, (ax.get_ylim(), ax.get_yticks())
    assert len(visible_tick_labels(ax.xaxis)) >= 2, (ax.get_xlim(), ax.get_xticks())


def test_two_log_labels_adds_labels_only_where_needed():
    from matplotlib import ticker  # noqa: PLC0415

    ax = _new_axes()
    ax.set_yscale("log")
    ax.set_ylim(2e-5, 9e-4)
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(figures.decade_label))
    ax.yaxis.set_minor_formatter(ticker.NullFormatter())
    assert visible_tick_labels(ax.yaxis) == ["10⁻⁴"]  # what one decade showed
    figures.two_log_labels(ax.yaxis)
    labels = visible_tick_labels(ax.yaxis)
    assert len(labels) >= 2 and "10⁻⁴" in labels
    ax.set_ylim(1e-6, 1e2)  # many decades: left as they are
    before = ax.yaxis.get_major_locator()
    figures.two_log_labels(ax.yaxis)
    assert ax.yaxis.get_major_locator() is before


# ----------------------------------------------------------------------------- mathtext


def test_mathtext_source_does_not_wrap_text_twice():
    statement = r"\text{rounds } T \text{ to reach } \epsilon"
    assert mathtext_source(statement) == statement
    assert mathtext_ok(f"${mathtext_source(statement)}$")
    assert mathtext_source(r"\mathrm{bias term} + rounds") == \
        r"\mathrm{bias term} + \text{rounds}"
    # plain words outside an upright argument are still set upright, once
    out = mathtext_source(r"rounds + \text{ to reach } \epsilon \le 1")
    assert out == r"\text{rounds} + \text{ to reach } \epsilon \leq 1"
    assert len(re.findall(r"\\text\{", out)) == 2


def _png_size(path):
    from PIL import Image

    with Image.open(path) as im:
        return im.size, im.mode


def test_saved_png_is_the_tight_box_and_nothing_is_clipped(tmp_path):
    """The PNG is the drawn canvas cut to the tight box plus the margin; an artist drawn off
    the canvas (here a text at x = 1.3) widens the file instead of being cut."""
    from matplotlib.figure import Figure

    def fig_with(text_x):
        fig = Figure(figsize=(4, 3), layout="constrained")
        ax = fig.add_subplot()
        ax.plot([1, 2], [1, 4])
        ax.set_ylabel(r"$\|\nabla\Phi(x_k)\|^2$")
        if text_x is not None:
            fig.text(text_x, 0.5, "far right")
        return fig

    dpi = 100
    inside = figures.save(fig_with(None), tmp_path / "inside.png", dpi=dpi)
    (w, h), mode = _png_size(inside)
    pad = round(figures.PAD_INCHES * dpi)
    assert mode == "RGB" and w <= 4 * dpi + 2 * pad + 1 and h <= 3 * dpi + 2 * pad + 1
    outside = figures.save(fig_with(1.3), tmp_path / "outside.png", dpi=dpi)
    (w2, _), _ = _png_size(outside)
    assert w2 > 4 * dpi * 1.25  # the text beyond the canvas is in the file
