"""The ``bilevel-theory`` command line (one entry point; subcommands from each layer).

Exit codes: 0 all claims at their expected verdict; 1 a verdict differs; 2 bad input or usage
(a one-line message, no traceback); see ``bilevel_theory.verify.cli`` for the full list.
"""

from __future__ import annotations

import sys

import click


class Group(click.Group):
    """Turns ValueError/TypeError/OSError from any command into one line and exit code 2."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (ValueError, TypeError, OSError) as err:
            click.echo(f"error: {err}", err=True)
            sys.exit(2)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="bilevel-theory")
def main() -> None:
    """Check the convergence claims of federated bilevel optimization papers."""


def _register() -> None:
    from bilevel_theory.commands import algorithms  # noqa: PLC0415
    from bilevel_theory.problems.cli import problem  # noqa: PLC0415
    from bilevel_theory.verify.cli import make_commands  # noqa: PLC0415

    from .commands import COMMANDS, render_hook  # noqa: PLC0415

    main.add_command(problem)
    main.add_command(algorithms)
    for command in make_commands(after_verify=render_hook) + list(COMMANDS):
        main.add_command(command)


_register()


if __name__ == "__main__":  # ``python -m bilevel_theory.reports.cli`` where the console script is not installed
    main()
