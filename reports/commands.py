"""Placeholder: the ``report`` command (reports issue)."""

from __future__ import annotations

from pathlib import Path


def render_hook(results_dir: Path, report_dir: Path) -> None:
    """Render a report for ``verify --report`` (placeholder)."""


COMMANDS: list = []
