"""Placeholder: ``list``, ``verify`` and ``compare`` commands (claims issue)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click


def make_commands(after_verify: Callable[[Path, Path], None] | None = None) -> list[click.Command]:
    """The verify-layer commands; ``after_verify(results_dir, report_dir)`` runs for
    ``verify --report DIR`` (the reports layer passes its renderer, keeping layers one-way)."""
    return []
