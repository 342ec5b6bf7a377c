"""Rate-check reports: Markdown, self-contained HTML, figures (PNG, PDF, SVG) and JSON from a
results store.

``render(results_dir, out_dir, formats="png,pdf,svg", dpi=150)`` reads the store (never
reruns anything) and returns the path of ``index.html``; ``render_entries(entries, meta, rows,
out_dir)`` does the same from plain data. ``plot_claim(result, ax=None)`` draws one claim (a
``verify.Result`` or a summary entry dict) into your own matplotlib ``Axes``; ``style()`` is
the figures' rc context. ``StoreError`` (a ``ValueError``) names the file of a missing, empty
or corrupt store.
"""

from .render import StoreError, cost_table, load_rows, render, render_entries


def __getattr__(name: str):
    """``plot_claim`` and ``style`` on first use: matplotlib is imported only to draw."""
    if name in ("plot_claim", "style"):
        from . import figures  # noqa: PLC0415

        return getattr(figures, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["StoreError", "cost_table", "load_rows", "plot_claim", "render", "render_entries",
           "style"]
