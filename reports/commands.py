"""The ``report`` command and the hook that ``verify --report`` calls."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click


def render_hook(results_dir: Path, report_dir: Path, *, quiet: bool = False,
                **kwargs: Any) -> Path:
    """Render the report of ``results_dir`` into ``report_dir`` (for ``verify --report``);
    ``kwargs`` go to :func:`reports.render` (``formats``, ``dpi``, ``progress``, ``jobs``,
    ``style``).
    Without ``progress``, a :class:`Progress` on stderr unless ``quiet``."""
    from .render import render  # noqa: PLC0415

    own = kwargs.get("progress") is None
    if own:
        kwargs["progress"] = Progress(enabled=not quiet)
        if not quiet:
            print(f"report: summarizing {results_dir} into {report_dir}", file=sys.stderr,
                  flush=True)
    try:
        return render(results_dir, report_dir, **kwargs)
    finally:
        if own:
            kwargs["progress"].close()


class Progress:
    """``progress(done, total, name)`` for :func:`reports.render`: a tqdm bar on a terminal,
    else one line per figure on stderr (so that CI logs show the report moving)."""

    def __init__(self, enabled: bool = True, stream: Any = None) -> None:
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.bar: Any = None

    def __call__(self, done: int, total: int, name: str) -> None:
        if not self.enabled:
            return
        if self.stream.isatty():
            if self.bar is None:
                from tqdm.auto import tqdm  # noqa: PLC0415

                self.bar = tqdm(total=total, desc="report figures", unit="fig",
                                file=self.stream, leave=False)
            self.bar.set_postfix_str(name, refresh=False)
            self.bar.update(1)
        else:
            print(f"report: figure {done}/{total}: {name}", file=self.stream, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


@click.command("report")
@click.argument("results_dir", type=click.Path(path_type=Path))
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help="Report directory (default: RESULTS_DIR/report).")
@click.option("--format", "formats", default="png", show_default=True, metavar="LIST",
              help="Figure formats, comma-separated, of png, pdf, svg. The PNG is always "
                   "written (the HTML and Markdown show it); PDF and SVG (vector) beside it.")
@click.option("--dpi", type=click.FloatRange(20, 1200), default=None,
              help="Resolution of the PNG figures (default 150).")
@click.option("--jobs", type=click.IntRange(0, 64), default=0, show_default=True,
              help="Processes drawing the figures (0: one per CPU, at most 8).")
@click.option("--style", "style", default="default", show_default=True, metavar="NAME",
              help="Figure style: default, or paper (3.3 in single column, no titles, no "
                   "verdict colours, fonts of 7 pt and more, editable SVG text).")
@click.option("--quiet", is_flag=True, help="No progress (a bar on a terminal, else one line "
                                            "per figure on stderr).")
def report(results_dir: Path, out: Path | None, formats: str, dpi: float | None, jobs: int,
           style: str, quiet: bool) -> None:
    """Render the rate-check report (Markdown, HTML, figures, JSON) of RESULTS_DIR.

    Reads the stored results only; nothing is rerun. A partial store (interrupted run)
    renders with the missing claims marked.
    """
    out = out if out is not None else results_dir / "report"
    progress = Progress(enabled=not quiet)
    try:
        index = render_hook(results_dir, out, formats=formats, dpi=dpi, progress=progress,
                            jobs=jobs, style=style)
    except (ValueError, OSError) as err:
        progress.close()
        click.echo(f"error: {err}", err=True)
        sys.exit(2)
    progress.close()
    click.echo(f"report: {index} (and {index.with_suffix('.md')})")


COMMANDS: list[click.Command] = [report]
