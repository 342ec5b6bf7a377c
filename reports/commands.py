"""The ``report`` command and the hook that ``verify --report`` calls."""

from __future__ import annotations

import sys
from pathlib import Path

import click


def render_hook(results_dir: Path, report_dir: Path) -> Path:
    """Render the report of ``results_dir`` into ``report_dir`` (for ``verify --report``)."""
    from .render import render  # noqa: PLC0415

    return render(results_dir, report_dir)


@click.command("report")
@click.argument("results_dir", type=click.Path(path_type=Path))
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help="Report directory (default: RESULTS_DIR/report).")
def report(results_dir: Path, out: Path | None) -> None:
    """Render the rate-check report (Markdown, HTML, PNG figures, JSON) of RESULTS_DIR.

    Reads the stored results only; nothing is rerun. A partial store (interrupted run)
    renders with the missing claims marked.
    """
    out = out if out is not None else results_dir / "report"
    try:
        index = render_hook(results_dir, out)
    except (ValueError, OSError) as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(2)
    click.echo(f"report: {index} (and {index.with_suffix('.md')})")


COMMANDS: list[click.Command] = [report]
