"""Rate-check reports: Markdown, self-contained HTML, PNG figures and JSON from a results store.

``render(results_dir, out_dir)`` reads the store (never reruns anything) and returns the path
of ``index.html``; ``render_entries(entries, meta, rows, out_dir)`` does the same from plain
data. ``StoreError`` (a ``ValueError``) names the file of a missing, empty or corrupt store.
"""

from .render import StoreError, cost_table, load_rows, render, render_entries

__all__ = ["StoreError", "cost_table", "load_rows", "render", "render_entries"]
