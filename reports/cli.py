"""The ``bilevel-theory`` command line (one entry point; subcommands from each layer).

Exit codes: 0 all claims at their expected verdict; 1 a verdict differs; 2 bad input or usage
(a one-line message, no traceback); see ``bilevel_theory.verify.cli`` for the full list.
"""

from __future__ import annotations

import sys

import click

#: Exit codes of every command.
EXIT = {"ok": 0, "differs": 1, "bad_input": 2, "internal": 3, "interrupted": 130}


class Group(click.Group):
    """Every command's failure is one line on stderr: bad input (``ValueError``,
    ``TypeError``, ``OSError``) exits 2; an unexpected internal error exits 3 with a hint to
    rerun with ``--debug`` for the traceback; Ctrl-C exits 130 (results so far are kept)."""

    def invoke(self, ctx: click.Context):
        debug = bool(ctx.params.get("debug"))
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except KeyboardInterrupt:
            click.echo("interrupted: the results stored so far are kept; rerun the same "
                       "command to resume", err=True)
            sys.exit(EXIT["interrupted"])
        except click.Abort:
            click.echo("interrupted", err=True)
            sys.exit(EXIT["interrupted"])
        except (ValueError, TypeError, OSError) as err:
            if debug:
                raise
            click.echo(f"error: {' '.join(str(err).split())}", err=True)
            sys.exit(EXIT["bad_input"])
        except Exception as err:  # noqa: BLE001 - the one place internal errors are reported
            if debug:
                raise
            click.echo(f"internal error: {type(err).__name__}: {' '.join(str(err).split())} "
                       "(rerun with --debug for the traceback)", err=True)
            sys.exit(EXIT["internal"])


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="bilevel-theory")
@click.option("--debug", is_flag=True, help="show the traceback of any error")
def main(debug: bool) -> None:
    """Check the convergence claims of federated bilevel optimization papers.

    Exit codes: 0 every claim at its expected verdict; 1 a verdict differs (or a mutant was not
    caught, or `compare` found a changed verdict); 2 bad input or usage; 3 an internal error;
    130 interrupted (Ctrl-C; results so far are kept)."""


def _register() -> None:
    from bilevel_theory.commands import algorithms  # noqa: PLC0415
    from bilevel_theory.problems.cli import problem  # noqa: PLC0415
    from bilevel_theory.verify.cli import make_commands  # noqa: PLC0415
    from bilevel_theory.verify.coverage.cli import coverage  # noqa: PLC0415
    from bilevel_theory.verify.scaffold import new_plugin  # noqa: PLC0415

    from .commands import COMMANDS, render_hook  # noqa: PLC0415

    main.add_command(problem)
    main.add_command(algorithms)
    main.add_command(coverage)
    main.add_command(new_plugin)
    for command in make_commands(after_verify=render_hook) + list(COMMANDS):
        main.add_command(command)


_register()


if __name__ == "__main__":  # ``python -m bilevel_theory.reports.cli`` where the console script is not installed
    main()
