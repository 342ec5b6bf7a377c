"""Write the claims catalogue as Markdown: ``python -m bilevel_theory.verify.catalogue_doc
docs/claims.md`` (``--check``: exit 1 if the page or the index is out of sync).

One section per paper, one table per role (confirmation, finding, defect, control):
id, kind, statement, source, expected verdict, mutants (``name: change``), the readings the
claim touches.  The page is generated from the claims themselves, never typed; regenerate it
after changing a claims module.  ``--catalogue module:ATTRIBUTE`` documents another collection
(e.g. a plug-in's); by default the papers' claims modules of this package (installed plug-ins
and run-time registrations are left out, so the page does not depend on the environment).

The same command writes ``verify/catalogue_index.json``: each claim's id, paper, source, role,
kind, expected verdict, mutants and statement, which ``bilevel-theory list`` reads instead of
importing the claims modules (and deriving their laws) when no plug-in is installed.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from .claim import ROLES, Claim
from .claims import EXCLUDED, load
from .kit import PAPERS

COMMAND = "python -m bilevel_theory.verify.catalogue_doc docs/claims.md"
#: The metadata ``list`` reads without importing the claims (written beside the page).
INDEX = Path(__file__).resolve().parent / "catalogue_index.json"
INDEX_FIELDS = ("id", "paper", "source", "role", "kind", "expected", "statement")


def index_text(claims: Mapping[str, Claim]) -> str:
    """The exact text of :data:`INDEX` for ``claims``."""
    rows = [{**{f: getattr(c, f) for f in INDEX_FIELDS}, "mutants": [m.name for m in c.mutants]}
            for c in claims.values()]
    return json.dumps(rows, ensure_ascii=False, indent=0) + "\n"


def read_index() -> list[dict] | None:
    """The rows of :data:`INDEX` (``None`` when it is missing or unreadable)."""
    try:
        rows = json.loads(INDEX.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return rows if isinstance(rows, list) else None


def package_claims() -> dict[str, Claim]:
    """The claims of this package's paper modules (``verify/claims/<paper>/``), in the
    catalogue's order (modules sorted by name, claims in declaration order)."""
    from . import claims as package  # noqa: PLC0415

    out: dict[str, Claim] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.name in EXCLUDED:
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for claim in getattr(module, "CLAIMS", None) or ():
            out[claim.id] = claim
    return out


def _cell(text: str) -> str:
    """Text for one table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", r"\|")


def _math(latex: str) -> str:
    r"""LaTeX for ``$…$`` inside a table cell: ``\|`` and ``|`` written as ``\Vert`` and
    ``\vert`` (a table would split at a pipe)."""
    latex = " ".join(latex.split()).replace(r"\|", r"\Vert ").replace("|", r"\vert ")
    return f"${latex}$" if latex else ""


def _mutants(claim: Claim) -> str:
    return "<br>".join(f"`{m.name}`: {_cell(m.change)}" for m in claim.mutants) or "—"


def _row(claim: Claim) -> str:
    touches = ", ".join(claim.touches) or "—"
    cells = [f"`{claim.id}`", claim.kind, _math(claim.statement), _cell(claim.source),
             claim.expected, _mutants(claim), _cell(touches)]
    return "| " + " | ".join(cells) + " |"


HEADER = ("| id | kind | statement | source | expected | mutants (name: change) | touches |\n"
          "|---|---|---|---|---|---|---|")


def render(claims: Mapping[str, Claim] | Iterable[Claim], command: str = COMMAND) -> str:
    """The Markdown page for ``claims``."""
    items = list(claims.values()) if isinstance(claims, Mapping) else list(claims)
    papers: dict[str, list[Claim]] = {}  # by paper name (several id prefixes may share one)
    for c in items:
        papers.setdefault(c.paper or c.id.split(".", 1)[0], []).append(c)
    by_name = {p.name: p for p in PAPERS.values()}
    counts = {r: sum(c.role == r for c in items) for r in ROLES}
    lines = [
        "# Claims catalogue",
        "",
        f"Generated from the claims modules by `{command}`; do not edit by hand.",
        "",
        f"{len(items)} claims ({', '.join(f'{n} {r}s' for r, n in counts.items())}), "
        f"{sum(len(c.mutants) for c in items)} mutants.  Roles: a *confirmation* is the "
        "paper's statement, expected to hold; a *finding* is a statement expected to be "
        "violated (the reason is in the claim); a *defect* is the paper's result applied to "
        "the authors' released code, expected to be violated because of the code; a "
        "*control* checks this toolkit's own code and says nothing about the paper.  A "
        "confirmation must be `violated` under each of its mutants, a finding or a defect "
        "must `hold` under each (the mutant repairs the error).  "
        "*touches*: the readings (`docs/papers.md`) the claim depends on.  Run one with "
        "`bilevel-theory verify ID --mutants`.",
    ]
    for key, group in papers.items():
        paper = by_name.get(key) or PAPERS.get(key)
        title = f"{paper.name} — {paper.citation}" if paper else key
        lines += ["", f"## {title}", ""]
        for role in ROLES:
            rows = [c for c in group if c.role == role]
            if not rows:
                continue
            lines += [f"### {role.capitalize()}s ({len(rows)})", "", HEADER,
                      *(_row(c) for c in rows), ""]
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bilevel_theory.verify.catalogue_doc",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", default="-",
                        help="Markdown file to write ('-': standard output)")
    parser.add_argument("--catalogue", default=None,
                        help="'module:ATTRIBUTE' of another collection of claims")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if OUT or verify/catalogue_index.json is out of sync")
    args = parser.parse_args(argv)
    claims = load(args.catalogue) if args.catalogue else package_claims()
    text = render(claims)
    if args.check:
        from .generated import check_in_sync  # noqa: PLC0415

        codes = [check_in_sync(Path(args.out), text, "the claims modules", COMMAND)]
        if not args.catalogue:
            codes.append(check_in_sync(INDEX, index_text(claims), "the claims modules",
                                       COMMAND))
        return max(codes)
    if not args.catalogue and args.out != "-":
        INDEX.write_text(index_text(claims), encoding="utf-8")
    if args.out == "-":
        sys.stdout.write(text)
    else:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {args.out}: {len(claims)} claims", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
