"""``bilevel-theory coverage [--json] [--paper P]``: the coverage map of the papers' results
(per paper and overall: checkable, full, partial, none; the headline results; every result)."""

from __future__ import annotations

import click


def _select(assessed, papers: tuple[str, ...]):
    """The results of the papers named (an inventory key, or a substring of its paper name,
    case-insensitive); an unknown name is a ValueError listing the known ones."""
    if not papers:
        return assessed
    known = {a.inventory.key: a.inventory.paper for a in assessed}
    chosen = set()
    for p in papers:
        hits = {k for k, name in known.items()
                if p.lower() == k.lower() or p.lower() in name.lower()}
        if not hits:
            raise ValueError(f"`--paper` must name one of {', '.join(known)}, got {p!r}")
        chosen |= hits
    return [a for a in assessed if a.inventory.key in chosen]


@click.command("coverage")
@click.option("--json", "as_json", is_flag=True, help="strict JSON on standard output")
@click.option("--paper", "papers", multiple=True, metavar="P",
              help="only this paper (key such as 'afbo', or part of its name); repeatable")
def coverage(as_json: bool, papers: tuple[str, ...]) -> None:
    """How many of the papers' stated results the claims test: per paper and overall, the
    checkable results that are fully, partly or not covered (every variable of the statement
    swept by a claim: full), the headline results' status and every result."""
    from .mapping import coverage as assess_all  # noqa: PLC0415
    from .render import text, to_json  # noqa: PLC0415

    assessed = _select(assess_all(), papers)
    click.echo(to_json(assessed) if as_json else text(assessed), nl=False)
