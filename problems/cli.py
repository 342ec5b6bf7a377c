"""``bilevel-theory problem``: build an instance, print its constants and a self-check."""

from __future__ import annotations

import click


@click.command()
def problem() -> None:
    """Build a problem instance and print its constants (placeholder)."""
    click.echo("not yet implemented")
