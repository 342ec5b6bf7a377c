"""Report figures: one per claim and an overview forest plot (matplotlib, no pyplot state).

Figures are built on :class:`matplotlib.figure.Figure` directly, inside :func:`style` (an rc
context, never a global change), so rendering never touches pyplot's state or the user's
interactive backend. Every function takes plain data (summary entries and store rows, see
:mod:`reports.render`). :func:`save` writes a figure as PNG (for the HTML and Markdown) and,
beside it, any of PDF and SVG (vector, for a paper).

:func:`plot_claim` draws one claim into a user's own :class:`~matplotlib.axes.Axes`.

Conventions for the ``fit`` block of a summary entry (``x, mean, lo, hi, slope, intercept,
interval``): ``x`` are sweep values, ``mean``/``lo``/``hi`` the replicate mean and its
bootstrap band in the measured quantity's own units (not logged). The fitted line is drawn
with ``slope`` through the fit's anchor: ``intercept`` read as a natural-log (or, if that
matches the data far better, base-10) intercept, else the centroid of the fitted points.

Series names: a claim's ``extra["series"]`` (``{"value": "PHE (FedMBO)", "contrast": "shared
IHGP (FedNest)"}``) names the measured series and the contrast series in legends; without it
they are "measured" and "contrast".
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.ticker import MaxNLocator

from .markdown import as_float
from .text import looks_like_prose

VERDICT_COLORS = {"holds": "#1a9850", "violated": "#d73027", "inconclusive": "#7f7f7f"}
MISSING_COLOR = "#b0b0b0"
SERIES_A = "#2166ac"
SERIES_B = "#e08214"
FULL_GRID = "#6a3d9a"
PREDICTED = "#000000"
DPI = 150
FONT = 10.0
FORMATS = ("png", "pdf", "svg")
SIZE = (6.4, 4.6)

#: The one style of every report figure (applied with :func:`style`, never globally).
STYLE: dict[str, Any] = {
    "font.size": FONT,
    "axes.titlesize": FONT + 1,
    "axes.labelsize": FONT + 1,
    "xtick.labelsize": FONT - 0.5,
    "ytick.labelsize": FONT - 0.5,
    "legend.fontsize": FONT - 1,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": False,
    "lines.solid_capstyle": "round",
    "savefig.dpi": DPI,
    "savefig.facecolor": "white",
    "pdf.fonttype": 42,  # TrueType in the PDF: text stays text (editable, searchable)
    "ps.fonttype": 42,
    "svg.fonttype": "none",  # text stays text in the SVG (editable in a vector editor)
    "svg.hashsalt": "bilevel-theory",  # deterministic ids in the SVG
    "pdf.compression": 6,
}

PAPER_FONT = 7.5
PAPER_WIDTH = 3.3
#: A paper's single column: 3.3 in wide, fonts of 7 pt and more at that width, no titles and
#: no verdict colours in the figures (the text says the verdict), editable SVG text.
PAPER_STYLE: dict[str, Any] = {
    **STYLE,
    "font.size": PAPER_FONT,
    "axes.titlesize": PAPER_FONT + 0.5,
    "axes.labelsize": PAPER_FONT + 0.5,
    "xtick.labelsize": PAPER_FONT - 0.5,
    "ytick.labelsize": PAPER_FONT - 0.5,
    "legend.fontsize": PAPER_FONT - 0.5,
    "lines.linewidth": 1.2,
    "lines.markersize": 4.0,
    "axes.linewidth": 0.6,
}

#: The figure styles by name: rc parameters, a claim figure's size, titles, verdict colours.
STYLES: dict[str, dict[str, Any]] = {
    "default": {"rc": STYLE, "size": SIZE, "overview_width": 8.0, "row": 0.3,
                "titles": True, "colours": True},
    "paper": {"rc": PAPER_STYLE, "size": (PAPER_WIDTH, 3.9), "overview_width": PAPER_WIDTH,
              "row": 0.17, "titles": False, "colours": False},
}


#: matplotlib's default line width, that of the default style: the unit of :func:`_w`
BASE_LINEWIDTH = 1.5


def _w(width: float) -> float:
    """A line width or marker size of the default style in the current one: scaled by the
    style's ``lines.linewidth`` (thinner lines in the ``paper`` style's narrow column)."""
    from matplotlib import rcParams  # noqa: PLC0415

    return width * float(rcParams["lines.linewidth"]) / BASE_LINEWIDTH


def _area(size: float) -> float:
    """A scatter marker's area (points²) of the default style in the current one."""
    return size * (_w(1.0) ** 2)


def check_style(name: Any) -> str:
    """``name`` as a figure style of :data:`STYLES` (``ValueError`` naming ``style``)."""
    if not isinstance(name, str) or name not in STYLES:
        raise ValueError(f"`style` must be one of {', '.join(STYLES)}, got {name!r}")
    return name


def _rc() -> dict[str, Any]:
    return dict(STYLE)


@contextlib.contextmanager
def style(name: str = "default", **overrides: Any) -> Iterator[None]:
    """A report figure style as an rc context (``with style(): ...``, ``with style("paper")``);
    ``name``: one of :data:`STYLES`; ``overrides`` are extra rc parameters. Leaves
    matplotlib's global rc parameters as they were."""
    from matplotlib import rc_context  # noqa: PLC0415

    with rc_context({**STYLES[check_style(name)]["rc"], **overrides}):
        yield


def _new_figure(width: float, height: float, dpi: float = DPI):
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415
    from matplotlib.figure import Figure  # noqa: PLC0415

    fig = Figure(figsize=(width, height), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def parse_formats(formats: str | Sequence[str] | None) -> tuple[str, ...]:
    """``"png,pdf,svg"`` (or a sequence) as a tuple of formats, PNG always first (the HTML and
    Markdown show the PNG). Raises ``ValueError`` naming ``formats`` for an unknown one."""
    if formats is None:
        return ("png",)
    items = formats.split(",") if isinstance(formats, str) else list(formats)
    out = ["png"]
    for item in items:
        f = str(item).strip().lower().lstrip(".")
        if not f:
            continue
        if f not in FORMATS:
            raise ValueError(f"`formats`: unknown figure format {item!r} "
                             f"(choose from {', '.join(FORMATS)})")
        if f not in out:
            out.append(f)
    return tuple(out)


def check_dpi(dpi: Any) -> float:
    """``dpi`` as a positive number (``ValueError`` naming ``dpi`` otherwise)."""
    value = as_float(dpi)
    if isinstance(dpi, bool) or not math.isfinite(value) or not 20 <= value <= 1200:
        raise ValueError(f"`dpi` must be a number in [20, 1200], got {dpi!r}")
    return value


#: white margin around a saved figure's tight box
PAD_INCHES = 0.06


def save(fig, path: Path, formats: Sequence[str] = ("png",), dpi: float = DPI) -> Path:
    """Write ``fig`` to ``path`` (a ``.png``) and, beside it, every other format in ``formats``
    (``pdf``, ``svg``: vector). Nothing is clipped: the layout is computed once (constrained
    layout), frozen, and every file is cut to the tight bounding box of everything drawn
    (legends and titles outside the axes included). Returns the PNG's path.

    Layout, bounding box and PNG share one renderer, so each label's mathtext is parsed once
    (parsing is most of a figure's cost); the PNG is the drawn canvas cut to the box (a
    ``savefig`` redraws at a new size only when the box leaves the canvas)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415

    path = Path(path).with_suffix(".png")
    path.parent.mkdir(parents=True, exist_ok=True)
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    fig.set_dpi(dpi)
    renderer = fig.canvas.get_renderer()
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.execute(fig)  # the constrained layout, once, on this renderer
    fig.set_layout_engine("none")  # frozen: the draws below do not redo it
    fig.canvas.draw()
    tight = fig.get_tightbbox(renderer)
    bbox = tight.padded(PAD_INCHES)
    with _quiet_fonttools():
        for fmt in parse_formats(formats):
            if fmt != "png" or not _write_cropped_png(fig, path, tight, dpi):
                _save_one(fig, path, fmt, bbox, dpi)
    return path


def _write_cropped_png(fig, path: Path, tight, dpi: float) -> bool:
    """The drawn canvas cut to ``tight`` (the figure's tight box, inches) padded by
    :data:`PAD_INCHES` on white, as ``path``; ``False`` (nothing written) when something drawn
    lies off the canvas."""
    from PIL import Image  # noqa: PLC0415

    rgba = np.asarray(fig.canvas.buffer_rgba())
    height, width = rgba.shape[:2]
    x0, y0, x1, y1 = (np.asarray(tight.extents) * fig.dpi).tolist()
    left, right = math.floor(x0), math.ceil(x1)
    top, bottom = height - math.ceil(y1), height - math.floor(y0)
    if left < 0 or top < 0 or right > width or bottom > height:
        return False
    cut = rgba[top:bottom, left:right].astype(np.float32)
    alpha = cut[..., 3:] / 255.0
    rgb = np.rint(cut[..., :3] * alpha + 255.0 * (1.0 - alpha)).astype(np.uint8)
    pad = round(PAD_INCHES * fig.dpi)
    rgb = np.pad(rgb, ((pad, pad), (pad, pad), (0, 0)), constant_values=255)
    Image.fromarray(rgb).save(path, format="png", dpi=(dpi, dpi), compress_level=6)
    return True


@contextlib.contextmanager
def _quiet_fonttools() -> Iterator[None]:
    """fontTools (the PDF's TrueType subsetting) warns about the fonts' old timestamps."""
    import logging  # noqa: PLC0415

    log = logging.getLogger("fontTools")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def _save_one(fig, path: Path, fmt: str, bbox, dpi: float) -> None:
    """One file; PDF and SVG without dates (same figure, same bytes)."""
    kwargs: dict[str, Any] = {"format": fmt, "bbox_inches": bbox, "facecolor": "white"}
    if fmt == "png":
        kwargs.update(dpi=dpi, pil_kwargs={"compress_level": 6})
    elif fmt == "pdf":
        kwargs["metadata"] = {"Creator": "bilevel-theory report", "CreationDate": None}
    elif fmt == "svg":
        kwargs["metadata"] = {"Date": None, "Creator": "bilevel-theory report"}
    fig.savefig(path.with_suffix(f".{fmt}"), **kwargs)


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


#: an upright argument (``\text{rounds to reach}``): its words are not wrapped again
_UPRIGHT = re.compile(r"(\\(?:text|mathrm|textrm|mathsf|mathtt|operatorname|mbox)\s*\{[^{}]*\})")
_WORDS = re.compile(r"(?<![\\A-Za-z{])([A-Za-z]{4,}(?:[ ]+[A-Za-z]+)*)(?![A-Za-z}])")


def mathtext_source(latex: str) -> str:
    """``latex`` rewritten for mathtext (``\\le`` → ``\\leq``, ``\\bigl`` dropped …)."""
    for pattern, repl in _MATHTEXT_SUBS:
        latex = re.sub(pattern, repl, latex)
    # plain words (4+ letters, not a command or an argument) upright with their spaces; the
    # arguments of \text, \mathrm … are upright already and kept as they are
    parts = _UPRIGHT.split(latex)
    parts[::2] = [_WORDS.sub(r"\\text{\1}", p) for p in parts[::2]]
    return "".join(parts)


#: resolution of the equations' PNGs (HTML report)
EQUATION_DPI = 120

#: equations typeset elsewhere (report worker processes): ``(latex, fontsize) -> PNG``
PRERENDERED: dict[tuple[str, float], bytes | None] = {}


def latex_png(latex: str, fontsize: float = 13.0) -> bytes | None:
    """``latex`` (no ``$``) rendered as a mathtext PNG, or ``None`` when mathtext cannot."""
    key = (latex, float(fontsize))
    if key in PRERENDERED:
        return PRERENDERED[key]
    return _latex_png(latex, float(fontsize))


@functools.lru_cache(maxsize=512)
def _latex_png(latex: str, fontsize: float = 13.0) -> bytes | None:
    """``latex`` (no ``$``) rendered as a mathtext PNG, or ``None`` when mathtext cannot.

    One parse straight to pixels (the Agg mathtext raster, black on white, 0.1 in of margin
    as ``math_to_image``'s tight box): parsing is most of an equation's cost, and
    ``math_to_image`` parses twice, ``mathtext_ok`` once more."""
    from matplotlib.font_manager import FontProperties  # noqa: PLC0415
    from matplotlib.mathtext import MathTextParser  # noqa: PLC0415
    from PIL import Image  # noqa: PLC0415

    if not latex or not latex.strip() or looks_like_prose(latex):
        return None
    body = latex.strip().strip("$")
    body = mathtext_source(" ".join(body.split()))  # mathtext is single-line
    if not body.strip():
        return None
    try:
        raster = MathTextParser("agg").parse(f"${body}$", dpi=EQUATION_DPI,
                                             prop=FontProperties(size=fontsize))
    except Exception:  # noqa: BLE001 — any parse failure means "render as plain text"
        return None
    ink = np.asarray(raster.image, dtype=np.uint8)
    pixels = np.pad(255 - ink, round(0.1 * EQUATION_DPI), constant_values=255)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="png", compress_level=6)
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


def series_names(entry: Mapping[str, Any]) -> tuple[str, str]:
    """Legend names of the measured and the contrast series: the claim's ``extra["series"]``
    (``{"value": ..., "contrast": ...}``, also read from the entry's ``series``), else
    ``("measured", "contrast")``."""
    names: Any = entry.get("series")
    if not isinstance(names, Mapping):
        extra = entry.get("extra")
        names = extra.get("series") if isinstance(extra, Mapping) else None
    if isinstance(names, Sequence) and not isinstance(names, str) and len(names) >= 2:
        names = {"value": names[0], "contrast": names[1]}
    if not isinstance(names, Mapping):
        names = {}
    value = str(names.get("value") or "").strip() or "measured"
    contrast = str(names.get("contrast") or "").strip() or "contrast"
    return value, contrast


def title_text(entry: Mapping[str, Any]) -> str:
    """``id`` and the verdict (``HOLDS (as expected)``) on two lines."""
    verdict = entry.get("verdict") or "missing"
    status = entry.get("status") or "complete"
    label = verdict.upper()
    if status != "complete":
        label += f" ({status})"
    expected = entry.get("expected")
    if expected and status != "missing":
        label += f" (expected {expected})" if expected != verdict else " (as expected)"
    role = entry.get("role")
    if role:
        label += f" · {role}"
    return f"{entry.get('id', '?')}\n{label}"


def _title(ax, entry: Mapping[str, Any]) -> None:
    verdict = entry.get("verdict") or "missing"
    color = VERDICT_COLORS.get(verdict, MISSING_COLOR)
    ax.set_title(title_text(entry), color=color, fontweight="bold", loc="left")


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
        ax.scatter(x[ok], y[ok], s=_area(12), color=color, alpha=0.30, linewidths=0, zorder=2)
    arrays = _fit_arrays(fit)
    if arrays is not None:
        fx, fm, flo, fhi = arrays["x"], arrays["mean"], arrays["lo"], arrays["hi"]
        if flo is not None and fhi is not None and len(flo) == len(fx) == len(fhi):
            band = _plottable(fx, flo, scale) & _plottable(fx, fhi, scale)
            if band.sum() >= 2:
                ax.fill_between(fx[band], flo[band], fhi[band], color=color, alpha=0.18,
                                linewidth=0, zorder=1)
            elif band.any():
                ax.errorbar(fx[band], fm[band], yerr=[fm[band] - flo[band], fhi[band] - fm[band]],
                            fmt="none", ecolor=color, alpha=0.6)
        mk = _plottable(fx, fm, scale)
        if mk.any():
            ax.plot(fx[mk], fm[mk], "o", color=color, markeredgecolor="black",
                    markeredgewidth=_w(0.6), markersize=_w(5.5), zorder=4,
                    label=lab("mean of replicates (dots), bootstrap band"))
    excluded = (fit or {}).get("excluded") or {}
    if excluded.get("x") and excluded.get("mean"):
        ex = np.asarray([as_float(v) for v in excluded["x"]], float)
        em = np.asarray([as_float(v) for v in excluded["mean"]], float)
        keep = _plottable(ex, em, scale) if ex.size == em.size else np.zeros(0, bool)
        if keep.any():
            ax.plot(ex[keep], em[keep], "o", markerfacecolor="white", markeredgecolor=color,
                    markeredgewidth=_w(1.4), markersize=_w(5.5), zorder=4,
                    label=lab("mean outside the fit window"))
    anchor = None
    if fit:
        line = fitted_line(fit, scale, window)
        if line is not None:
            xs, ys, anchor = line
            interval = fit.get("interval")
            what = "window fit" if window else "fit"
            ax.plot(xs, ys, "-", color=color, linewidth=_w(2.0), zorder=3,
                    label=lab(f"{what}: {slope_name} {_fmt(fit.get('slope'))}")
                    + _interval_text(interval))
    return anchor, dropped


def _full_grid_line(ax, entry: Mapping[str, Any], scale: str, slope_name: str) -> None:
    """The full grid's fit beside the window's (``details["full_grid"]``): a dotted line with
    the full grid's slope through the centroid of every point's mean (the least-squares line
    through the transformed means passes through their centroid)."""
    full = (entry.get("details") or {}).get("full_grid")
    fit = entry.get("fit")
    if not entry.get("window") or not isinstance(full, Mapping) or not fit:
        return
    slope = as_float(full.get("measured"))
    arrays = _fit_arrays(fit)
    if arrays is None or not math.isfinite(slope):
        return
    x, mean = arrays["x"], arrays["mean"]
    excluded = fit.get("excluded") or {}
    if excluded.get("x") and excluded.get("mean") and \
            len(excluded["x"]) == len(excluded["mean"]):
        x = np.concatenate([x, [as_float(v) for v in excluded["x"]]])
        mean = np.concatenate([mean, [as_float(v) for v in excluded["mean"]]])
    ok = _plottable(x, mean, scale)
    if ok.sum() < 2:
        return
    tx, ty = _tx(x[ok], scale), _ty(mean[ok], scale)
    t_grid = np.linspace(float(tx.min()), float(tx.max()), 50)
    ys = _inv_ty(float(np.mean(ty)) + slope * (t_grid - float(np.mean(tx))), scale)
    xs = np.exp(t_grid) if scale == "loglog" else t_grid
    verdict = full.get("verdict")
    ax.plot(xs, ys, ":", color=FULL_GRID, linewidth=_w(1.8), zorder=3,
            label=f"full-grid fit: {slope_name} {_fmt(slope)}"
            + _interval_text(full.get("interval")) + (f" ({verdict})" if verdict else ""))


def _window_span(ax, window: Sequence[float] | None) -> None:
    if not window:
        return
    lo, hi = as_float(window[0]), as_float(window[1])
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return
    x_lo, x_hi = ax.dataLim.intervalx
    if math.isfinite(x_lo) and math.isfinite(x_hi) and x_hi >= x_lo:
        # an open-ended window (hi = 1e12) is drawn to the data's edge, not the axis' end
        pad = (x_hi / x_lo) ** 0.04 if ax.get_xscale() == "log" and x_lo > 0 else None
        lo = max(lo, x_lo / pad if pad else x_lo - 0.04 * (x_hi - x_lo))
        hi = min(hi, x_hi * pad if pad else x_hi + 0.04 * (x_hi - x_lo))
    if hi < lo:
        return
    ax.axvspan(lo, hi, color="#fff3b0", alpha=0.45, zorder=0, linewidth=0, label="fit window")


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

    text = "\n".join("\n".join(textwrap.wrap(part, 70, max_lines=3, placeholder=" …"))
                     for part in text.split("\n"))
    ax.text(0.01, 0.01, text, transform=ax.transAxes, ha="left", va="bottom", fontsize=8.5,
            color="#7a3b00", zorder=10,
            bbox={"facecolor": "white", "edgecolor": "#d9a066", "alpha": 0.92,
                  "boxstyle": "round,pad=0.3"})


def _placeholder(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize=11,
            color="#555555", wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def _legend(ax, where: str | None) -> None:
    """The legend: ``"figure"`` below the axes (never over the data, for the report's own
    figures), ``"axes"`` inside the user's axes at the best place, ``None`` none."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles or where is None:
        return
    if where == "figure":
        narrow = ax.figure.get_figwidth() < 4  # a paper's column: one entry a line
        ncol = 1 if narrow or max(len(s) for s in labels) > 44 else 2
        ax.figure.legend(handles, labels, loc="outside lower center", ncol=ncol,
                         handlelength=2.2, columnspacing=1.5)
    else:
        ax.legend(handles, labels, loc="best", fontsize="small")


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def decade_label(v: float, _pos: Any = None) -> str:
    """A log-axis tick label as text (``10⁻⁴``; a plain number off the decades): the same look
    as matplotlib's ``10^{-4}`` without a mathtext parse per tick (the slow part of a
    figure)."""
    if not (isinstance(v, int | float) and math.isfinite(v) and v > 0):
        return ""
    k = math.log10(v)
    if abs(k - round(k)) < 1e-9:
        k = int(round(k))
        if -2 <= k <= 3:
            return _fmt(v, 4)
        return "10" + str(k).translate(_SUPERSCRIPT)
    return _fmt(v, 3)


def visible_tick_labels(axis) -> list[str]:
    """The non-empty tick labels (major and minor) that ``axis`` shows inside its view."""
    lo, hi = sorted(axis.get_view_interval())
    out = []
    for locs, fmt in ((axis.get_majorticklocs(), axis.get_major_formatter()),
                      (axis.get_minorticklocs(), axis.get_minor_formatter())):
        locs = np.asarray(locs, float)
        inside = locs[(locs >= lo - 1e-9 * abs(lo)) & (locs <= hi + 1e-9 * abs(hi))]
        out += [t for t in fmt.format_ticks(list(inside)) if t.strip()]
    return out


def two_log_labels(axis) -> None:
    """A log ``axis`` with at least two labelled ticks in view: where a single decade (or
    none) is labelled, ticks at 1, 2, 5 (then 1 … 9, then evenly spaced) times the decades."""
    from matplotlib import ticker  # noqa: PLC0415

    if axis.get_scale() != "log" or len(visible_tick_labels(axis)) >= 2:
        return
    axis.set_minor_formatter(ticker.NullFormatter())
    axis.set_major_formatter(ticker.FuncFormatter(decade_label))
    for locator in (ticker.LogLocator(subs=(1.0, 2.0, 5.0), numticks=12),
                    ticker.LogLocator(subs=tuple(range(1, 10)), numticks=12),
                    ticker.MaxNLocator(nbins=4)):
        axis.set_major_locator(locator)
        if len(visible_tick_labels(axis)) >= 2:
            return


def _ticks(ax, x: np.ndarray, scale: str) -> None:
    """Plain-number ticks: the sweep values on a log x axis, no 10^k clutter on short log axes;
    decades as ``10⁻⁴`` text elsewhere; at least two labels on every log axis."""
    from matplotlib import ticker  # noqa: PLC0415

    plain = ticker.FuncFormatter(lambda v, _pos: _fmt(v, 4))
    decades = ticker.FuncFormatter(decade_label)
    if scale == "loglog":
        ux = np.unique(x[np.isfinite(x) & (x > 0)])
        if 1 <= ux.size <= 8:
            ax.xaxis.set_major_locator(ticker.FixedLocator(ux))
            ax.xaxis.set_major_formatter(plain)
            ax.xaxis.set_minor_locator(ticker.NullLocator())
        elif ux.size and ux.max() / ux.min() < 1e5:
            ax.xaxis.set_major_formatter(plain)
            ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        else:
            ax.xaxis.set_major_formatter(decades)
            ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    if scale in ("loglog", "semilog"):
        lo, hi = ax.get_ylim()
        if lo > 0 and hi / lo < 3:  # under half a decade: evenly spaced plain numbers
            ax.yaxis.set_major_locator(ticker.MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]))
            ax.yaxis.set_minor_locator(ticker.NullLocator())
            ax.yaxis.set_major_formatter(plain)
        elif lo > 0 and hi / lo < 30 and 1e-4 <= lo and hi <= 1e5:
            subs = (1.0, 2.0, 3.0, 5.0) if hi / lo < 10 else (1.0, 2.0, 5.0)
            ax.yaxis.set_major_locator(ticker.LogLocator(subs=subs))
            ax.yaxis.set_major_formatter(plain)
            ax.yaxis.set_minor_formatter(ticker.NullFormatter())
        else:
            ax.yaxis.set_major_formatter(decades)
            ax.yaxis.set_minor_formatter(ticker.NullFormatter())
    two_log_labels(ax.xaxis)
    two_log_labels(ax.yaxis)


def draw_claim(ax, entry: Mapping[str, Any], rows: Sequence[Mapping[str, Any]] = (), *,
               legend: str | None = "axes", title: bool = True,
               mutants: Mapping[str, Sequence[Mapping[str, Any]]] | None = None) -> None:
    """Draw one claim (scatter, band, fit, full-grid fit, predicted law) into ``ax``.

    ``entry``: a summary entry; ``rows``: its store rows (the replicate scatter; without them
    only the replicate means and their band are drawn). ``legend``: ``"axes"``, ``"figure"``
    (below the axes) or ``None``. ``mutants``: ``{mutant name: its store rows}`` (rows of
    ``CLAIM@MUTANT``), drawn beside the claim's series with their verdicts from the entry's
    ``power``: the flip the mutant must cause, made visible.
    """
    mutants = {str(k): list(v) for k, v in (mutants or {}).items() if v}
    kind = entry.get("kind")
    status = entry.get("status") or "complete"
    if status == "missing" and not rows:
        _placeholder(ax, "no data: this claim has no rows in the store\n"
                     "(the run was interrupted before it)")
    elif kind == "exact":
        _exact(ax, entry, rows, legend, mutants)
    else:
        _rate(ax, entry, rows, legend, mutants)
    if title:
        _title(ax, entry)


def _as_entry(result: Any) -> tuple[dict[str, Any], Sequence[Mapping[str, Any]]]:
    """A summary entry from a ``verify.Result`` (its claim's ``extra["series"]`` kept) or a
    summary entry dict."""
    if hasattr(result, "to_dict") and callable(result.to_dict):
        entry = dict(result.to_dict())
        claim = getattr(result, "claim", None)
        extra = getattr(claim, "extra", None)
        if isinstance(extra, Mapping) and extra.get("series") and not entry.get("series"):
            entry["series"] = dict(extra["series"])
        return entry, ()
    if isinstance(result, Mapping):
        return dict(result), ()
    raise TypeError(f"`result` must be a verify.Result or a summary entry dict, "
                    f"got {type(result).__name__}")


def plot_claim(result: Any, ax=None, rows: Sequence[Mapping[str, Any]] | None = None, *,
               legend: bool | str = True, title: bool = True,
               mutants: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
               style_name: str = "default"):
    """Draw one claim into a matplotlib ``Axes`` (yours, or ``pyplot``'s current axes when
    ``ax`` is ``None``) in the report's style; returns the ``Axes``.

    ``result``: a :class:`verify.Result` (from ``verify.run`` / ``verify.evaluate``) or a
    summary entry dict (``summary.json``, ``report.json``); ``rows``: the claim's store rows
    (``verify.ResultsStore(dir).rows(claim_id)``) for the replicate scatter, optional.
    ``legend``: ``True`` (inside the axes), ``"figure"`` (below, on the figure) or ``False``;
    ``mutants``: ``{mutant name: store rows of CLAIM@MUTANT}``, drawn beside the claim's series;
    ``style_name``: one of :data:`STYLES`. Example::

        fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
        plot_claim(result_a, ax=a)
        plot_claim(entry_b, ax=b, rows=store.rows(entry_b["id"]))
    """
    entry, _ = _as_entry(result)
    if not entry.get("id"):
        raise ValueError("`result` has no `id`: pass a verify.Result or a summary entry dict")
    if ax is None:
        import matplotlib.pyplot as plt  # noqa: PLC0415

        ax = plt.gca()
    where = "axes" if legend is True else ("figure" if legend == "figure" else None)
    with style(style_name):
        draw_claim(ax, entry, list(rows or ()), legend=where, title=title, mutants=mutants)
    return ax


def claim_figure(entry: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], path: Path,
                 formats: Sequence[str] = ("png",), dpi: float = DPI, *,
                 mutants: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
                 style_name: str = "default") -> Path:
    """The figure of one claim written to ``path`` (PNG) and beside it in ``formats``
    (``mutants`` and ``style_name`` as for :func:`plot_claim`)."""
    fig = claim_fig(entry, rows, mutants=mutants, style_name=style_name, dpi=dpi)
    with style(style_name):
        return save(fig, path, formats, dpi)


def claim_fig(entry: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], *,
              mutants: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
              style_name: str = "default", dpi: float = DPI):
    """The :class:`~matplotlib.figure.Figure` of one claim (legend below the axes; a title
    with the verdict in the default style, none in the ``paper`` style)."""
    look = STYLES[check_style(style_name)]
    with style(style_name):
        fig = _new_figure(*look["size"], dpi=dpi)
        ax = fig.subplots()
        draw_claim(ax, entry, rows, legend="figure", title=look["titles"], mutants=mutants)
    return fig


#: colour-blind-safe colours (Okabe & Ito) and markers of the mutants' series
MUTANT_LOOKS = (("#009E73", "s"), ("#CC79A7", "^"), ("#56B4E9", "D"), ("#D55E00", "v"))


def _mutant_label(name: str, power: Mapping[str, Any], kind: Any, slope_name: str) -> str:
    """``mutant NAME: VERDICT, slope X`` (the number is the mutant's measured value)."""
    verdict = power.get("verdict") or "not judged"
    what = {"bounded_by": "max mean/bound", "exact": "count"}.get(kind, slope_name)
    measured = as_float(power.get("measured"))
    return f"mutant {name}: {verdict}" + (f", {what} {_fmt(measured)}"
                                          if math.isfinite(measured) else "")


def _draw_mutants(ax, entry: Mapping[str, Any], mutants: Mapping[str, Sequence[Any]],
                  scale: str, slope_name: str = "slope") -> None:
    """Each mutant's replicates, replicate means and fitted line beside the claim's series.

    The line has the mutant's measured slope (its ``power`` item) and passes through the
    centroid of its transformed means in the window, as the least-squares fit does
    (:class:`verify.fit.Fit`); a ``bounded_by`` or ``exact`` mutant's means are joined."""
    power = {str(p.get("mutant")): p for p in entry.get("power") or ()
             if isinstance(p, Mapping)}
    kind = entry.get("kind")
    for i, (name, rows) in enumerate(mutants.items()):
        color, marker = MUTANT_LOOKS[i % len(MUTANT_LOOKS)]
        x, y = series(rows, "value")
        ok = _plottable(x, y, scale)
        if not ok.any():
            continue
        x, y = x[ok], y[ok]
        ux = np.unique(x)
        means = np.array([y[x == u].mean() for u in ux])
        item = power.get(name, {})
        label: str | None = _mutant_label(name, item, kind, slope_name)
        ax.scatter(x, y, s=_area(10), marker=marker, color=color, alpha=0.25, linewidths=0, zorder=2)
        slope = as_float(item.get("measured"))
        keep = _in_window(ux, entry.get("window"))
        if keep.sum() < 2:
            keep = np.ones_like(ux, dtype=bool)
        if kind in ("bounded_by", "exact") or not math.isfinite(slope) or keep.sum() < 2:
            ax.plot(ux, means, "-.", marker=marker, color=color, markeredgecolor="black",
                    markeredgewidth=_w(0.6), markersize=_w(5), linewidth=_w(1.4), zorder=4, label=label)
            continue
        tx, ty = _tx(ux[keep], scale), _ty(means[keep], scale)
        t_grid = np.linspace(float(tx.min()), float(tx.max()), 50)
        xs = np.exp(t_grid) if scale == "loglog" else t_grid
        ys = _inv_ty(float(np.mean(ty)) + slope * (t_grid - float(np.mean(tx))), scale)
        ax.plot(xs, ys, "-.", color=color, linewidth=_w(1.8), zorder=3, label=label)
        ax.plot(ux, means, marker, color=color, markeredgecolor="black", markeredgewidth=_w(0.6),
                markersize=_w(5), zorder=4)


def _rate(ax, entry: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
          legend: str | None, mutants: Mapping[str, Sequence[Any]]) -> None:
    scale = entry.get("scale") or "loglog"
    kind = entry.get("kind")
    window = entry.get("window")
    _setup_axes(ax, entry, scale)
    slope_name = "log-ratio" if scale == "semilog" else "slope"
    x, y = series(rows, "value")
    name_a, name_b = series_names(entry)
    named = kind == "contrast" or bool(entry.get("series"))
    anchor, dropped = _scatter_fit(ax, x, y, entry.get("fit"), scale, window, SERIES_A,
                                   name_a if named else "", slope_name)
    if kind == "contrast":
        xb, yb = series(rows, "contrast")
        _, dropped_b = _scatter_fit(ax, xb, yb, entry.get("contrast_fit"), scale, window,
                                    SERIES_B, name_b, slope_name)
        dropped += dropped_b
    _full_grid_line(ax, entry, scale, slope_name)
    _draw_mutants(ax, entry, mutants, scale, slope_name)
    if kind == "bounded_by":
        xb, yb = series(rows, "bound")
        ok = _plottable(xb, yb, scale)
        if ok.any():
            ux = np.unique(xb[ok])
            med = np.array([np.median(yb[ok][xb[ok] == u]) for u in ux])
            ax.plot(ux, med, "--", color=VERDICT_COLORS["violated"], linewidth=_w(2.0),
                    marker="s", markersize=_w(4), label="theorem's bound", zorder=5)
    predicted = as_float(entry.get("predicted"))
    if anchor is not None and math.isfinite(predicted) and kind != "bounded_by":
        xs, ys = _law_line(anchor, predicted, scale)
        ax.plot(xs, ys, "--", color=PREDICTED, linewidth=_w(1.6), zorder=5,
                label=_predicted_label(entry, predicted))
    if not x.size and not entry.get("fit"):
        _placeholder(ax, "no replicate data in the store for this claim")
        return
    _window_span(ax, window)
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
    _legend(ax, legend)


def _exact(ax, entry: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
           legend: str | None, mutants: Mapping[str, Sequence[Any]]) -> None:
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
    name, _ = series_names(entry)
    if np.unique(x[ok]).size >= 2:
        scale = entry.get("scale") or "linear"
        _setup_axes(ax, entry, "linear" if scale == "semilog" else scale)
        ux = np.unique(x[ok])
        med = np.array([np.median(y[ok][x[ok] == u]) for u in ux])
        ax.scatter(x[ok], y[ok], s=_area(12), color=SERIES_A, alpha=0.3, linewidths=0,
                   label="replicates")
        ax.plot(ux, med, "o", color=SERIES_A, markeredgecolor="black", markersize=_w(6.5),
                label=f"{name} count (median)")
        okp = np.isfinite(xp) & np.isfinite(yp)
        if okp.any():
            upx = np.unique(xp[okp])
            pmed = np.array([np.median(yp[okp][xp[okp] == u]) for u in upx])
            ax.plot(upx, pmed, "x--", color=PREDICTED, markersize=_w(8), markeredgewidth=_w(2),
                    label="predicted count")
        elif math.isfinite(predicted):
            ax.axhline(predicted, color=PREDICTED, linestyle="--", linewidth=_w(1.6),
                       label=f"predicted count {_fmt(predicted, 6)}")
        _draw_mutants(ax, entry, mutants, "loglog" if ax.get_xscale() == "log" else "linear")
        if ax.get_xscale() == "linear" and np.allclose(ux, np.round(ux)):
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # counts of steps
        if np.allclose(med, np.round(med)):
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        _legend(ax, legend)
        return
    # one sweep point (or none): bars of measured against predicted
    if not math.isfinite(measured) and ok.any():
        measured = float(np.median(y[ok]))
    names, vals, colors = [], [], []
    if math.isfinite(measured):
        names.append(name)
        vals.append(measured)
        colors.append(SERIES_A)
    if math.isfinite(predicted):
        names.append("predicted")
        vals.append(predicted)
        colors.append("#999999")
    power = {str(p.get("mutant")): p for p in entry.get("power") or ()
             if isinstance(p, Mapping)}
    for i, (mname, mrows) in enumerate(mutants.items()):  # each mutant's count, its verdict
        _, my = series(mrows, "value")
        my = my[np.isfinite(my)]
        if my.size:
            verdict = power.get(mname, {}).get("verdict")
            names.append(f"mutant {mname}" + (f"\n({verdict})" if verdict else ""))
            vals.append(float(np.median(my)))
            colors.append(MUTANT_LOOKS[i % len(MUTANT_LOOKS)][0])
    if not vals:
        _placeholder(ax, "no count measured")
        return
    bars = ax.bar(names, vals, color=colors, width=0.55, edgecolor="black")
    for bar, v in zip(bars, vals):
        ax.annotate(_fmt(v, 8), (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center", va="bottom", fontsize=10, xytext=(0, 3),
                    textcoords="offset points")
    if ok.sum() > 1:
        ax.scatter(np.zeros(int(ok.sum())), y[ok], s=_area(12), color="black", alpha=0.5, zorder=3,
                   label="replicates")
        _legend(ax, legend)
    ax.set_ylabel(math_label(entry.get("quantity")) or "count")
    ax.set_ylim(0, max(vals) * 1.18 if max(vals) > 0 else 1)
    ax.grid(True, axis="y", alpha=0.35)


# ----------------------------------------------------------------------------- overview


#: The overview's panels, one per kind of assertion so that each axis has one unit:
#: ``key: (title, x label)``.
PANELS: dict[str, tuple[str, str]] = {
    "slope": ("Rate exponents (matches, at_most, contrast)",
              "measured − predicted log–log slope"),
    "log-ratio": ("Geometric rates", "measured − predicted log-ratio per step"),
    "ratio": ("Bounds (bounded_by)", "max mean / theorem's bound over the sweep"),
    "count": ("Exact counts", "measured − predicted count"),
    "other": ("Other claims", "measured − predicted"),
}
#: verdict markers (the overview tells verdicts apart without colour too)
VERDICT_MARKERS = {"holds": "o", "violated": "X", "inconclusive": "D"}


def panel_of(entry: Mapping[str, Any]) -> str:
    """The overview panel (a key of :data:`PANELS`) of a summary entry."""
    kind = entry.get("kind")
    if kind == "exact":
        return "count"
    if kind == "bounded_by":
        return "ratio"
    if kind == "geometric" or entry.get("scale") == "semilog":
        return "log-ratio"
    if kind in ("matches", "at_most", "contrast"):
        return "slope"
    return "other"


def _verdict_look(verdict: Any, colours: bool) -> tuple[str, str, str]:
    """``(colour, marker, face colour)`` of a verdict in the overview."""
    marker = VERDICT_MARKERS.get(verdict, ".")
    if colours:
        color = VERDICT_COLORS.get(verdict, MISSING_COLOR)
        return color, marker, color
    color = "black" if verdict in VERDICT_MARKERS else MISSING_COLOR
    return color, marker, "white" if verdict == "inconclusive" else color


def _deviations(entries: Sequence[Mapping[str, Any]], ratio: bool) -> np.ndarray:
    """``(n, 3)``: measured − predicted and its interval (the measured ratio itself and its
    interval for a ``ratio`` panel); NaN where not measured."""
    out = np.full((len(entries), 3), np.nan)
    for i, e in enumerate(entries):
        m, p = as_float(e.get("measured")), as_float(e.get("predicted"))
        iv = e.get("interval") or ()
        lo, hi = (as_float(iv[0]), as_float(iv[1])) if len(iv) == 2 else (math.nan, math.nan)
        ref = 0.0 if ratio else p
        if math.isfinite(m) and math.isfinite(ref):
            out[i] = (m - ref, lo - ref, hi - ref)
    return out


def _panel_limits(vals: np.ndarray, tols: np.ndarray, ratio: bool) -> tuple[float, float]:
    """The x range of a panel: symmetric about 0 (deviations), or on a log axis about the
    bound's 1 (ratios, every positive value in view)."""
    if ratio:
        pos = vals[np.isfinite(vals) & (vals > 0)]
        pos = np.concatenate([pos, [1.0], 1 + tols[np.isfinite(tols)]])
        return float(pos.min()) / 1.6, float(pos.max()) * 1.6
    devs, ends = vals[:, 0], np.abs(vals[:, 1:])
    spread = np.concatenate([np.abs(devs[np.isfinite(devs)]),
                             np.abs(tols[np.isfinite(tols)]) * 1.5])
    ends = ends[np.isfinite(ends)]
    lim = float(np.max(spread)) * 1.25 if spread.size else 1.0
    if ends.size:
        lim = max(lim, min(float(np.max(ends)) * 1.05, 3 * lim))
    lim = max(lim, 0.05)
    return -lim, lim


def _overview_panel(ax, entries: Sequence[Mapping[str, Any]], tols: np.ndarray, panel: str,
                    look: Mapping[str, Any]) -> None:
    """One panel of the overview: a row per claim, its value and interval against the
    reference (0, or the bound's 1 on a log axis) and its tolerance band."""
    from matplotlib import rcParams  # noqa: PLC0415

    ratio = panel == "ratio"
    vals = _deviations(entries, ratio)
    left, right = _panel_limits(vals, tols, ratio)
    ref = 1.0 if ratio else 0.0
    if ratio:
        ax.set_xscale("log")
    ys = np.arange(len(entries))[::-1]
    for yi, e, (d, lo, hi), tol in zip(ys, entries, vals, tols):
        kind = e.get("kind")
        if math.isfinite(tol):
            band = (left, 1 + tol) if ratio else (left if kind == "at_most" else -tol, tol)
            ax.fill_betweenx([yi - 0.4, yi + 0.4], *band, color="#a6dba0", alpha=0.55,
                             linewidth=0, zorder=0)
        color, marker, face = _verdict_look(e.get("verdict") or "missing", look["colours"])
        if math.isfinite(d) and (d > 0 or not ratio):
            if math.isfinite(lo) and math.isfinite(hi) and (lo > 0 or not ratio):
                ax.plot([max(lo, left), min(hi, right)], [yi, yi], color=color,
                        linewidth=2.2 * look["row"] / 0.3, zorder=2)
                if lo < left:
                    ax.plot(left, yi, marker="<", color=color, zorder=3)
                if hi > right:
                    ax.plot(right, yi, marker=">", color=color, zorder=3)
            ax.plot(min(max(d, left), right), yi, marker, color=color, markerfacecolor=face,
                    markeredgecolor="black", markeredgewidth=_w(0.6),
                    markersize=7 * look["row"] / 0.3 + 1, zorder=4)
            continue
        status = e.get("status") or "complete"
        verdict = e.get("verdict") or "missing"
        why = ("missing: not run" if status == "missing" else
               f"ratio ≤ 0: {verdict}" if ratio and math.isfinite(d) else
               f"no measurement: {verdict}")
        ax.text(ref, yi, why, ha="left" if ratio else "center", va="center",
                fontsize=max(7.0, rcParams["font.size"] - 1), style="italic",
                color=color, zorder=5,
                bbox={"facecolor": "white", "edgecolor": color, "alpha": 1.0,
                      "boxstyle": "round,pad=0.2"})
    ax.axvline(ref, color="black", linewidth=_w(0.8), zorder=1)
    ax.set_yticks(ys)
    ax.set_yticklabels([str(e.get("id", "?")) for e in entries])
    if look["colours"]:
        for lbl, e in zip(ax.get_yticklabels(), entries):
            lbl.set_color(VERDICT_COLORS.get(e.get("verdict") or "missing", MISSING_COLOR))
    ax.set_ylim(-0.7, max(len(entries), 1) - 0.3)
    ax.set_xlim(left, right)
    ax.set_xlabel(PANELS[panel][1])
    if look["titles"]:
        ax.set_title(PANELS[panel][0], loc="left", fontweight="bold")
    ax.grid(True, axis="x", alpha=0.35)
    if ratio:
        from matplotlib import ticker  # noqa: PLC0415

        ax.xaxis.set_major_formatter(ticker.FuncFormatter(decade_label))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        two_log_labels(ax.xaxis)


def overview_fig(entries: Sequence[Mapping[str, Any]],
                 tolerances: Mapping[str, float | None] | None = None,
                 style_name: str = "default", dpi: float = DPI):
    """The overview :class:`~matplotlib.figure.Figure`: one forest-plot panel per kind of
    assertion present (:data:`PANELS`, each with its own unit), one row per claim.

    Rows are claims (top to bottom in ``entries`` order within a panel); the green band is
    each claim's tolerance (for ``at_most``, everything up to +tolerance; for ``bounded_by``,
    every ratio up to 1 + tolerance). The figure grows with the number of rows.
    """
    from matplotlib.lines import Line2D  # noqa: PLC0415
    from matplotlib.patches import Patch  # noqa: PLC0415

    look = STYLES[check_style(style_name)]
    tolerances = tolerances or {}
    groups = {k: [e for e in entries if panel_of(e) == k] for k in PANELS}
    groups = {k: g for k, g in groups.items() if g} or {"slope": []}
    rows = [max(len(g), 1) for g in groups.values()]
    extra = 0.9 if look["titles"] else 0.55
    height = 0.6 + sum(look["row"] * r + extra for r in rows)
    with style(style_name):
        fig = _new_figure(look["overview_width"], height, dpi=dpi)
        axes = fig.subplots(len(groups), 1, squeeze=False,
                            gridspec_kw={"height_ratios": rows})[:, 0]
        for ax, (panel, group) in zip(axes, groups.items()):
            tols = np.array([as_float(tolerances.get(e.get("id"))) for e in group])
            _overview_panel(ax, group, tols, panel, look)
        if look["titles"]:
            fig.suptitle("All claims against the theorems' predictions, by kind of assertion",
                         x=0.01, ha="left", fontweight="bold")
        handles = []
        for v in VERDICT_MARKERS:
            color, marker, face = _verdict_look(v, look["colours"])
            handles.append(Line2D([], [], marker=marker, color=color, markerfacecolor=face,
                                  markeredgecolor="black", linewidth=_w(2), label=v))
        handles.append(Patch(color="#a6dba0", alpha=0.55, label="tolerance"))
        fig.legend(handles=handles, loc="outside lower center",
                   ncol=4 if look["overview_width"] >= 4 else 2)
    return fig


def overview_figure(entries: Sequence[Mapping[str, Any]], path: Path,
                    tolerances: Mapping[str, float | None] | None = None,
                    formats: Sequence[str] = ("png",), dpi: float = DPI,
                    style_name: str = "default") -> Path:
    """The overview (:func:`overview_fig`) written to ``path`` (PNG) and beside it in
    ``formats``."""
    fig = overview_fig(entries, tolerances, style_name, dpi)
    with style(style_name):
        return save(fig, path, formats, dpi)


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
