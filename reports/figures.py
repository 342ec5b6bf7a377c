"""Report figures: one per claim and an overview forest plot (matplotlib, Agg, no pyplot).

Figures are built on :class:`matplotlib.figure.Figure` directly, so rendering never touches
pyplot's global state or the user's interactive backend. Every function takes plain data
(summary entries and store rows, see :mod:`reports.render`) and writes one PNG.

Conventions for the ``fit`` block of a summary entry (``x, mean, lo, hi, slope, intercept,
interval``): ``x`` are sweep values, ``mean``/``lo``/``hi`` the replicate mean and its
bootstrap band in the measured quantity's own units (not logged). The fitted line is drawn
with ``slope`` through the fit's anchor: ``intercept`` read as a natural-log (or, if that
matches the data far better, base-10) intercept, else the centroid of the fitted points.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.ticker import MaxNLocator

from .markdown import as_float

VERDICT_COLORS = {"holds": "#1a9850", "violated": "#d73027", "inconclusive": "#7f7f7f"}
MISSING_COLOR = "#b0b0b0"
SERIES_A = "#2166ac"
SERIES_B = "#e08214"
PREDICTED = "#000000"
DPI = 110
FONT = 10.0


def _rc() -> dict[str, Any]:
    return {
        "font.size": FONT,
        "axes.titlesize": FONT + 1,
        "axes.labelsize": FONT + 1,
        "xtick.labelsize": FONT - 0.5,
        "ytick.labelsize": FONT - 0.5,
        "legend.fontsize": FONT - 1,
        "savefig.dpi": DPI,
    }


def _new_figure(width: float, height: float):
    from matplotlib.figure import Figure  # noqa: PLC0415

    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    return fig


def _save(fig, path: Path) -> Path:
    """Write ``fig`` as a 256-colour PNG (a third of the size, same look: plots have few
    colours), which keeps the self-contained HTML small."""
    from PIL import Image  # noqa: PLC0415  (a matplotlib dependency)

    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, facecolor="white")
    buf.seek(0)
    with Image.open(buf) as img:
        small = img.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT,
                                            dither=Image.Dither.NONE)
        small.save(path, format="PNG", optimize=True)
    return path


# ----------------------------------------------------------------------------- mathtext


def mathtext_ok(text: str) -> bool:
    """Whether matplotlib's mathtext can parse ``text`` (a string with ``$...$`` parts)."""
    from matplotlib.mathtext import MathTextParser  # noqa: PLC0415

    if text.count("$") % 2:
        return False
    parser = MathTextParser("path")
    parts = text.split("$")
    try:
        for inner in parts[1::2]:
            if inner.strip():
                parser.parse(f"${inner}$", dpi=72)
    except Exception:  # noqa: BLE001 — any parse failure means "render as plain text"
        return False
    return True


def math_label(text: str | None) -> str:
    """A label in the paper's notation: LaTeX-looking text as mathtext, else plain text."""
    if not text:
        return ""
    text = str(text)
    if "$" in text:
        candidate = text
    elif any(ch in text for ch in "\\^_{}"):
        candidate = f"${mathtext_source(text)}$"
    elif len(text) <= 3 and text.isalpha():
        candidate = f"${text}$"  # a single symbol such as n, K, N, tau
    else:
        return text
    if mathtext_ok(candidate):
        return candidate
    return text.replace("$", r"\$")


# LaTeX that mathtext lacks, rewritten to what it has (display only; the source is kept).
_MATHTEXT_SUBS = (
    (r"\\le(?![A-Za-z])", r"\\leq"),
    (r"\\ge(?![A-Za-z])", r"\\geq"),
    (r"\\[td]frac(?![A-Za-z])", r"\\frac"),
    (r"\\[lr]Vert(?![A-Za-z])", r"\\Vert"),
    (r"\\[lr]vert(?![A-Za-z])", "|"),
    (r"\\(?:big|Big|bigg|Bigg)[lrm]?(?![A-Za-z])", ""),
    (r"\\displaystyle(?![A-Za-z])", ""),
    (r"\\!", ""),
    (r"\\frac\s*([A-Za-z0-9])\s*([A-Za-z0-9])", r"\\frac{\1}{\2}"),  # \frac1n
)


def looks_like_prose(text: str) -> bool:
    """Whether ``text`` is a sentence rather than a formula (then it is not typeset)."""
    import re  # noqa: PLC0415

    stripped = re.sub(r"\\(?:text|mathrm|operatorname|mathit|textrm)\s*\{[^}]*\}", " ", text)
    stripped = re.sub(r"\\[A-Za-z]+", " ", stripped)
    words = re.findall(r"(?<![A-Za-z_^])[A-Za-z]{4,}(?![A-Za-z])", stripped)
    return len(words) >= 3


def mathtext_source(latex: str) -> str:
    """``latex`` rewritten for mathtext (``\\le`` → ``\\leq``, ``\\bigl`` dropped …)."""
    import re  # noqa: PLC0415

    for pattern, repl in _MATHTEXT_SUBS:
        latex = re.sub(pattern, repl, latex)
    # plain words (4+ letters, not a command or an argument) upright with their spaces
    return re.sub(r"(?<![\\A-Za-z{])([A-Za-z]{4,}(?:[ ]+[A-Za-z]+)*)(?![A-Za-z}])",
                  r"\\text{\1}", latex)


def latex_png(latex: str, fontsize: float = 13.0) -> bytes | None:
    """``latex`` (no ``$``) rendered as a mathtext PNG, or ``None`` when mathtext cannot."""
    from matplotlib.font_manager import FontProperties  # noqa: PLC0415
    from matplotlib.mathtext import math_to_image  # noqa: PLC0415

    if not latex or not latex.strip() or looks_like_prose(latex):
        return None
    body = latex.strip().strip("$")
    body = mathtext_source(" ".join(body.split()))  # mathtext is single-line
    text = f"${body}$"
    if not mathtext_ok(text):
        return None
    buf = io.BytesIO()
    try:
        math_to_image(text, buf, prop=FontProperties(size=fontsize), dpi=120, format="png")
    except Exception:  # noqa: BLE001
        return None
    return buf.getvalue()


# ----------------------------------------------------------------------------- data helpers


def _finite(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)




def _tx(x: np.ndarray, scale: str) -> np.ndarray:
    """Transform of the swept variable for fitting: log for log-log, identity otherwise."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x) if scale == "loglog" else np.asarray(x, float)


def _ty(y: np.ndarray, scale: str) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(y, float) if scale == "linear" else np.log(y)


def _inv_ty(t: np.ndarray, scale: str) -> np.ndarray:
    return np.asarray(t, float) if scale == "linear" else np.exp(t)


def series(rows: Sequence[Mapping[str, Any]], metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Replicate scatter ``(sweep value, metrics[metric])`` from store rows."""
    xs, ys = [], []
    for row in rows:
        metrics = row.get("metrics") or {}
        if metric in metrics:
            xs.append(as_float(row.get("value")))
            ys.append(as_float(metrics[metric]))
    return np.asarray(xs, float), np.asarray(ys, float)


def _plottable(x: np.ndarray, y: np.ndarray, scale: str) -> np.ndarray:
    ok = np.isfinite(x) & np.isfinite(y)
    if scale == "loglog":
        ok &= (x > 0) & (y > 0)
    elif scale == "semilog":
        ok &= y > 0
    return ok


def _fit_arrays(fit: Mapping[str, Any] | None) -> dict[str, np.ndarray] | None:
    if not fit:
        return None
    out = {}
    for key in ("x", "mean", "lo", "hi"):
        vals = fit.get(key)
        out[key] = np.asarray([as_float(v) for v in vals], float) if vals is not None else None
    if out["x"] is None or out["mean"] is None or len(out["x"]) != len(out["mean"]):
        return None
    return out


def _in_window(x: np.ndarray, window: Sequence[float] | None) -> np.ndarray:
    if not window:
        return np.ones_like(x, dtype=bool)
    lo, hi = as_float(window[0]), as_float(window[1])
    lo = -np.inf if not math.isfinite(lo) else lo
    hi = np.inf if not math.isfinite(hi) else hi
    return (x >= lo * (1 - 1e-12)) & (x <= hi * (1 + 1e-12))


def fitted_line(fit: Mapping[str, Any], scale: str, window: Sequence[float] | None):
    """``(xs, ys, anchor)`` of the fitted line over the fit window, or ``None``.

    ``anchor`` is ``(x0, y0)``: the point on the fitted line at the window's centre
    (geometric centre on a log axis), through which the predicted law is drawn.
    """
    arrays = _fit_arrays(fit)
    slope = as_float(fit.get("slope")) if fit else math.nan
    if arrays is None or not math.isfinite(slope):
        return None
    x, mean = arrays["x"], arrays["mean"]
    ok = _plottable(x, mean, scale) & _in_window(x, window)
    if ok.sum() < 1:
        ok = _plottable(x, mean, scale)
    if ok.sum() < 1:
        return None
    tx, ty = _tx(x[ok], scale), _ty(mean[ok], scale)
    centroid = float(np.mean(ty) - slope * np.mean(tx))
    rms_c = float(np.sqrt(np.mean((ty - (centroid + slope * tx)) ** 2)))
    intercept = centroid
    b = as_float(fit.get("intercept"))
    if math.isfinite(b):
        cands = [b] if scale == "linear" else [b, b * math.log(10)]
        rms = [float(np.sqrt(np.mean((ty - (c + slope * tx)) ** 2))) for c in cands]
        best = int(np.argmin(rms))
        if rms[best] <= rms_c + 0.25 * max(1.0, float(np.ptp(ty)) if ty.size > 1 else 1.0):
            intercept = cands[best]
    t_lo, t_hi = float(tx.min()), float(tx.max())
    if t_hi == t_lo:
        pad = 0.5 if scale != "loglog" else 0.25
        t_lo, t_hi = t_lo - pad, t_hi + pad
    t_grid = np.linspace(t_lo, t_hi, 50)
    xs = np.exp(t_grid) if scale == "loglog" else t_grid
    ys = _inv_ty(intercept + slope * t_grid, scale)
    t0 = 0.5 * (t_lo + t_hi)
    x0 = math.exp(t0) if scale == "loglog" else t0
    y0 = float(_inv_ty(np.asarray(intercept + slope * t0), scale))
    return xs, ys, (x0, y0, t_grid)


def _law_line(anchor, predicted: float, scale: str):
    x0, y0, t_grid = anchor
    t0 = math.log(x0) if scale == "loglog" else x0
    ty0 = float(_ty(np.asarray(y0), scale))
    xs = np.exp(t_grid) if scale == "loglog" else t_grid
    ys = _inv_ty(ty0 + predicted * (t_grid - t0), scale)
    return xs, ys


def _fmt(v: Any, digits: int = 3) -> str:
    v = as_float(v)
    if not math.isfinite(v):
        return "n/a"
    return f"{v:.{digits}g}".replace("-", "\u2212")


def _interval_text(interval: Any) -> str:
    if not interval or len(interval) != 2:
        return ""
    return f" [{_fmt(interval[0])}, {_fmt(interval[1])}]"


# ----------------------------------------------------------------------------- per claim


def _title(ax, entry: Mapping[str, Any]) -> None:
    verdict = entry.get("verdict") or "missing"
    status = entry.get("status") or "complete"
    color = VERDICT_COLORS.get(verdict, MISSING_COLOR)
    label = verdict.upper()
    if status != "complete":
        label += f" ({status})"
    expected = entry.get("expected")
    if expected and status != "missing":
        label += f" (expected {expected})" if expected != verdict else " (as expected)"
    ax.set_title(f"{entry.get('id', '?')}\n{label}", color=color, fontweight="bold", loc="left")


def _setup_axes(ax, entry: Mapping[str, Any], scale: str) -> None:
    if scale == "loglog":
        ax.set_xscale("log")
        ax.set_yscale("log")
    elif scale == "semilog":
        ax.set_yscale("log")
    ax.set_xlabel(math_label(entry.get("variable")) or "sweep value")
    ax.set_ylabel(math_label(entry.get("quantity")) or "measured quantity")
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)


def _scatter_fit(ax, x, y, fit, scale, window, color, name, slope_name="slope"):
    """Replicate scatter, bootstrap band, replicate means and the fitted line of one series.

    Returns the anchor of the fitted line (for the predicted law) or ``None``.
    """
    def lab(text: str) -> str:
        return f"{name}: {text}" if name else text

    ok = _plottable(x, y, scale)
    dropped = int((~ok).sum())
    if ok.any():
        ax.scatter(x[ok], y[ok], s=14, color=color, alpha=0.30, linewidths=0,
                   label=lab("replicates"), zorder=2)
    arrays = _fit_arrays(fit)
    if arrays is not None:
        fx, fm, flo, fhi = arrays["x"], arrays["mean"], arrays["lo"], arrays["hi"]
        if flo is not None and fhi is not None and len(flo) == len(fx) == len(fhi):
            band = _plottable(fx, flo, scale) & _plottable(fx, fhi, scale)
            if band.sum() >= 2:
                ax.fill_between(fx[band], flo[band], fhi[band], color=color, alpha=0.18,
                                linewidth=0, label=lab("bootstrap band of the mean"), zorder=1)
            elif band.any():
                ax.errorbar(fx[band], fm[band], yerr=[fm[band] - flo[band], fhi[band] - fm[band]],
                            fmt="none", ecolor=color, alpha=0.6)
        mk = _plottable(fx, fm, scale)
        if mk.any():
            ax.plot(fx[mk], fm[mk], "o", color=color, markeredgecolor="black",
                    markeredgewidth=0.6, markersize=6, label=lab("replicate mean"), zorder=4)
    excluded = (fit or {}).get("excluded") or {}
    if excluded.get("x") and excluded.get("mean"):
        ex = np.asarray([as_float(v) for v in excluded["x"]], float)
        em = np.asarray([as_float(v) for v in excluded["mean"]], float)
        keep = _plottable(ex, em, scale) if ex.size == em.size else np.zeros(0, bool)
        if keep.any():
            ax.plot(ex[keep], em[keep], "o", markerfacecolor="white", markeredgecolor=color,
                    markeredgewidth=1.4, markersize=6, zorder=4,
                    label=lab("mean outside the fit window"))
    anchor = None
    if fit:
        line = fitted_line(fit, scale, window)
        if line is not None:
            xs, ys, anchor = line
            interval = fit.get("interval")
            ax.plot(xs, ys, "-", color=color, linewidth=2.0, zorder=3,
                    label=lab(f"fit: {slope_name} {_fmt(fit.get('slope'))}")
                    + _interval_text(interval))
    return anchor, dropped


def _window_span(ax, window: Sequence[float] | None) -> None:
    if not window:
        return
    lo, hi = as_float(window[0]), as_float(window[1])
    if math.isfinite(lo) and math.isfinite(hi):
        ax.axvspan(lo, hi, color="#fff3b0", alpha=0.45, zorder=0, linewidth=0,
                   label="fit window")


def _predicted_label(entry: Mapping[str, Any], predicted: float) -> str:
    kind = entry.get("kind")
    scale = entry.get("scale") or "loglog"
    if scale == "semilog" or kind == "geometric":
        return f"predicted: log-ratio {_fmt(predicted)} (ratio {_fmt(math.exp(predicted))})"
    if kind == "at_most":
        return f"predicted: slope ≤ {_fmt(predicted)}"
    return f"predicted: slope {_fmt(predicted)}"


def _note(ax, text: str) -> None:
    import textwrap  # noqa: PLC0415

    text = "\n".join("\n".join(textwrap.wrap(part, 78, max_lines=3, placeholder=" …"))
                     for part in text.split("\n"))
    ax.text(0.01, 0.01, text, transform=ax.transAxes, ha="left", va="bottom", fontsize=9,
            color="#7a3b00", zorder=10,
            bbox={"facecolor": "white", "edgecolor": "#d9a066", "alpha": 0.92,
                  "boxstyle": "round,pad=0.3"})


def _placeholder(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize=12,
            color="#555555", wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def _legend(ax) -> None:
    """The legend below the axes (never over the data), two columns."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.figure.legend(handles, labels, loc="outside lower center", ncol=2, frameon=False,
                         handlelength=2.2, columnspacing=1.5)


def _ticks(ax, x: np.ndarray, scale: str) -> None:
    """Plain-number ticks: the sweep values on a log x axis, no 10^k clutter on short log axes."""
    from matplotlib import ticker  # noqa: PLC0415

    plain = ticker.FuncFormatter(lambda v, _pos: _fmt(v, 4))
    if scale == "loglog":
        ux = np.unique(x[np.isfinite(x) & (x > 0)])
        if 1 <= ux.size <= 10:
            ax.xaxis.set_major_locator(ticker.FixedLocator(ux))
            ax.xaxis.set_major_formatter(plain)
            ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        elif ux.size and ux.max() / ux.min() < 1e5:
            ax.xaxis.set_major_formatter(plain)
            ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    if scale in ("loglog", "semilog"):
        lo, hi = ax.get_ylim()
        if lo > 0 and hi / lo < 30 and 1e-4 <= lo and hi <= 1e5:
            subs = (1.0, 2.0, 3.0, 5.0) if hi / lo < 10 else (1.0, 2.0, 5.0)
            ax.yaxis.set_major_locator(ticker.LogLocator(subs=subs))
            ax.yaxis.set_major_formatter(plain)
            ax.yaxis.set_minor_formatter(ticker.NullFormatter())


def claim_figure(entry: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], path: Path) -> Path:
    """The figure of one claim (scatter, band, fitted line, predicted law) written to ``path``."""
    from matplotlib import rc_context  # noqa: PLC0415

    with rc_context(_rc()):
        fig = _new_figure(6.4, 5.0)
        ax = fig.subplots()
        kind = entry.get("kind")
        status = entry.get("status") or "complete"
        if status == "missing" and not rows:
            _placeholder(ax, "no data: this claim has no rows in the store\n"
                         "(the run was interrupted before it)")
        elif kind == "exact":
            _exact(ax, entry, rows)
        else:
            _rate(ax, entry, rows)
        _title(ax, entry)
        return _save(fig, path)


def _rate(ax, entry: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> None:
    scale = entry.get("scale") or "loglog"
    kind = entry.get("kind")
    window = entry.get("window")
    _setup_axes(ax, entry, scale)
    _window_span(ax, window)
    slope_name = "log-ratio" if scale == "semilog" else "slope"
    x, y = series(rows, "value")
    name_a = "A"
    labels = entry.get("labels") or entry.get("series") or []
    if kind == "contrast" and len(labels) >= 2:
        name_a = str(labels[0])
    anchor, dropped = _scatter_fit(ax, x, y, entry.get("fit"), scale, window, SERIES_A,
                                   name_a if kind == "contrast" else "", slope_name)
    if kind == "contrast":
        name_b = str(labels[1]) if len(labels) >= 2 else "B (contrast)"
        xb, yb = series(rows, "contrast")
        _, dropped_b = _scatter_fit(ax, xb, yb, entry.get("contrast_fit"), scale, window,
                                    SERIES_B, name_b, slope_name)
        dropped += dropped_b
    if kind == "bounded_by":
        xb, yb = series(rows, "bound")
        ok = _plottable(xb, yb, scale)
        if ok.any():
            ux = np.unique(xb[ok])
            med = np.array([np.median(yb[ok][xb[ok] == u]) for u in ux])
            ax.plot(ux, med, "--", color=VERDICT_COLORS["violated"], linewidth=2.0,
                    marker="s", markersize=4, label="theorem's bound", zorder=5)
    predicted = as_float(entry.get("predicted"))
    if anchor is not None and math.isfinite(predicted) and kind != "bounded_by":
        xs, ys = _law_line(anchor, predicted, scale)
        ax.plot(xs, ys, "--", color=PREDICTED, linewidth=1.8, zorder=5,
                label=_predicted_label(entry, predicted))
    if not x.size and not entry.get("fit"):
        _placeholder(ax, "no replicate data in the store for this claim")
        return
    notes = []
    if dropped:
        notes.append(f"{dropped} non-finite or non-positive value(s) not drawn")
    if entry.get("status") == "partial":
        notes.append("partial: the run was interrupted")
    fit = entry.get("fit") or {}
    if fit.get("problem"):
        problem = str(fit["problem"])
        notes.append(problem if "fitted" in problem else f"not fitted: {problem}")
    elif entry.get("fit") is None and x.size:
        notes.append("no fit (too few points)")
    if notes:
        _note(ax, ".\n".join(notes))
    fx = _fit_arrays(entry.get("fit"))
    _ticks(ax, np.concatenate([x, fx["x"]]) if fx else x, scale)
    _legend(ax)


def _exact(ax, entry: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> None:
    x, y = series(rows, "value")
    xp, yp = series(rows, "predicted")
    details = entry.get("details") or {}
    if not xp.size and details.get("predicted_x") and details.get("predicted_per_point"):
        xp = np.asarray([as_float(v) for v in details["predicted_x"]], float)
        yp = np.asarray([as_float(v) for v in details["predicted_per_point"]], float)
        if xp.size != yp.size:
            xp = yp = np.zeros(0)
    ok = np.isfinite(x) & np.isfinite(y)
    predicted = as_float(entry.get("predicted"))
    measured = as_float(entry.get("measured"))
    if np.unique(x[ok]).size >= 2:
        scale = entry.get("scale") or "linear"
        _setup_axes(ax, entry, "linear" if scale == "semilog" else scale)
        ux = np.unique(x[ok])
        med = np.array([np.median(y[ok][x[ok] == u]) for u in ux])
        ax.scatter(x[ok], y[ok], s=14, color=SERIES_A, alpha=0.3, linewidths=0,
                   label="replicates")
        ax.plot(ux, med, "o", color=SERIES_A, markeredgecolor="black", markersize=7,
                label="measured count (median)")
        okp = np.isfinite(xp) & np.isfinite(yp)
        if okp.any():
            upx = np.unique(xp[okp])
            pmed = np.array([np.median(yp[okp][xp[okp] == u]) for u in upx])
            ax.plot(upx, pmed, "x--", color=PREDICTED, markersize=9, markeredgewidth=2,
                    label="predicted count")
        elif math.isfinite(predicted):
            ax.axhline(predicted, color=PREDICTED, linestyle="--", linewidth=1.8,
                       label=f"predicted count {_fmt(predicted, 6)}")
        if ax.get_xscale() == "linear" and np.allclose(ux, np.round(ux)):
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # counts of steps
        if np.allclose(med, np.round(med)):
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        _legend(ax)
        return
    # one sweep point (or none): bars of measured against predicted
    if not math.isfinite(measured) and ok.any():
        measured = float(np.median(y[ok]))
    names, vals, colors = [], [], []
    if math.isfinite(measured):
        names.append("measured")
        vals.append(measured)
        colors.append(SERIES_A)
    if math.isfinite(predicted):
        names.append("predicted")
        vals.append(predicted)
        colors.append("#999999")
    if not vals:
        _placeholder(ax, "no count measured")
        return
    bars = ax.bar(names, vals, color=colors, width=0.55, edgecolor="black")
    for bar, v in zip(bars, vals):
        ax.annotate(_fmt(v, 8), (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center", va="bottom", fontsize=11, xytext=(0, 3),
                    textcoords="offset points")
    if ok.sum() > 1:
        ax.scatter(np.zeros(int(ok.sum())), y[ok], s=14, color="black", alpha=0.5, zorder=3,
                   label="replicates")
        _legend(ax)
    ax.set_ylabel(math_label(entry.get("quantity")) or "count")
    ax.set_ylim(0, max(vals) * 1.18 if max(vals) > 0 else 1)
    ax.grid(True, axis="y", alpha=0.35)


# ----------------------------------------------------------------------------- overview


def overview_figure(entries: Sequence[Mapping[str, Any]], path: Path,
                    tolerances: Mapping[str, float | None] | None = None) -> Path:
    """Forest plot: measured − predicted per claim with its interval, coloured by verdict.

    Rows are claims (top to bottom in ``entries`` order). The green band is each claim's
    tolerance around zero (for ``at_most``, everything up to +tolerance). Claims without a
    numeric prediction (``bounded_by``) or without a measurement are listed with a note.
    """
    from matplotlib import rc_context  # noqa: PLC0415
    from matplotlib.lines import Line2D  # noqa: PLC0415
    from matplotlib.patches import Patch  # noqa: PLC0415

    tolerances = tolerances or {}
    n = max(len(entries), 1)
    devs, los, his = [], [], []
    for e in entries:
        m, p = as_float(e.get("measured")), as_float(e.get("predicted"))
        iv = e.get("interval") or [math.nan, math.nan]
        if math.isfinite(m) and math.isfinite(p):
            devs.append(m - p)
            los.append(as_float(iv[0]) - p if len(iv) == 2 else math.nan)
            his.append(as_float(iv[1]) - p if len(iv) == 2 else math.nan)
        else:
            devs.append(math.nan)
            los.append(math.nan)
            his.append(math.nan)
    devs_a, los_a, his_a = np.array(devs), np.array(los), np.array(his)
    tols = np.array([as_float(tolerances.get(e.get("id"))) for e in entries]) if entries else np.array([])
    spread = np.concatenate([np.abs(devs_a[np.isfinite(devs_a)]),
                             np.abs(tols[np.isfinite(tols)]) * 1.5])
    ends = np.abs(np.concatenate([los_a[np.isfinite(los_a)], his_a[np.isfinite(his_a)]]))
    lim = float(np.max(spread)) * 1.25 if spread.size else 1.0
    if ends.size:
        lim = max(lim, min(float(np.max(ends)) * 1.05, 3 * lim))
    lim = max(lim, 0.05)

    with rc_context(_rc()):
        fig = _new_figure(9.0, 1.6 + 0.32 * n)
        ax = fig.subplots()
        ys = np.arange(len(entries))[::-1]
        for yi, e, d, lo, hi, tol in zip(ys, entries, devs_a, los_a, his_a, tols):
            if math.isfinite(tol):
                left = -lim if e.get("kind") in ("at_most", "bounded_by") else -tol
                ax.fill_betweenx([yi - 0.4, yi + 0.4], left, tol, color="#a6dba0",
                                 alpha=0.55, linewidth=0, zorder=0)
            verdict = e.get("verdict") or "missing"
            color = VERDICT_COLORS.get(verdict, MISSING_COLOR)
            if math.isfinite(d):
                if math.isfinite(lo) and math.isfinite(hi):
                    clo, chi = max(lo, -lim), min(hi, lim)
                    ax.plot([clo, chi], [yi, yi], color=color, linewidth=2.2, zorder=2)
                    if lo < -lim:
                        ax.plot(-lim, yi, marker="<", color=color, markersize=7, zorder=3)
                    if hi > lim:
                        ax.plot(lim, yi, marker=">", color=color, markersize=7, zorder=3)
                ax.plot(min(max(d, -lim), lim), yi, "o", color=color, markeredgecolor="black",
                        markeredgewidth=0.6, markersize=7, zorder=4)
            else:
                status = e.get("status") or "complete"
                if status == "missing":
                    why = "missing: not run"
                elif e.get("kind") == "bounded_by":
                    why = f"bound check: {verdict}"
                elif e.get("kind") == "exact":
                    why = f"count: {verdict}"
                else:
                    why = f"no measurement: {verdict}"
                ax.text(0, yi, why, ha="center", va="center", fontsize=9, style="italic",
                        color=color, zorder=5,
                        bbox={"facecolor": "white", "edgecolor": color, "alpha": 1.0,
                              "boxstyle": "round,pad=0.2"})
        ax.axvline(0, color="black", linewidth=0.8, zorder=1)
        ax.set_yticks(ys)
        ax.set_yticklabels([str(e.get("id", "?")) for e in entries], fontsize=9)
        for lbl, e in zip(ax.get_yticklabels(), entries):
            lbl.set_color(VERDICT_COLORS.get(e.get("verdict") or "missing", MISSING_COLOR))
        ax.set_ylim(-0.7, len(entries) - 0.3)
        ax.set_xlim(-lim, lim)
        ax.set_xlabel("measured − predicted\n(log–log exponent; log-ratio for geometric "
                      "claims;\ncount for exact claims; mean/bound ratio for bounded_by)")
        ax.grid(True, axis="x", alpha=0.35)
        ax.set_title("All claims: measured slope against the theorem's prediction", loc="left",
                     fontweight="bold")
        handles = [Line2D([], [], marker="o", color=c, markeredgecolor="black", linewidth=2,
                          label=v) for v, c in VERDICT_COLORS.items()]
        handles.append(Patch(color="#a6dba0", alpha=0.55, label="tolerance"))
        fig.legend(handles=handles, loc="outside lower center", ncol=4, frameon=False)
        return _save(fig, path)


def png_ok(path: Path) -> bool:
    """Whether ``path`` is a readable PNG (signature and decodable by matplotlib)."""
    from matplotlib.image import imread  # noqa: PLC0415

    try:
        with open(path, "rb") as fh:
            if fh.read(8) != b"\x89PNG\r\n\x1a\n":
                return False
        img = imread(path)
    except (OSError, ValueError, SyntaxError):
        return False
    return img.ndim in (2, 3) and img.shape[0] > 0 and img.shape[1] > 0
