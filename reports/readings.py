"""The readings a claim touches, resolved to their titles for the reports.

A reading id (a claim's ``touches``) is either the toolkit's (``FEDNEST-R12``, ``AFBO-L3``:
documented in ``docs/papers/<paper>.md``) or a plug-in's (registered with
``kit.register_paper(..., readings={id: text})`` into ``kit.READINGS``).  The docs are not
installed with the package, so the toolkit's titles are kept in the generated
``verify/readings_index.json``::

    python3 -m bilevel_theory.reports.readings --write    # regenerate it from docs/
    python3 -m bilevel_theory.reports.readings --check    # exit 1 if it is out of sync

The index lists the readings of ``docs/papers.md`` ("- `ID`: title", under its paper's page)
and then those of the pages' paragraphs ("**ID — title.**", "**ID: title.**" or
"**ID (title).**") that the list leaves out.  Exit codes: 0 written / in sync, 1 out of sync,
2 bad input (a path that cannot be read or written).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

#: the package's two folders (a source checkout: the repository root, which also has docs/)
_ROOT = Path(__file__).resolve().parents[1]
#: the generated index (package data of ``bilevel_theory.verify``)
PATH = _ROOT / "verify" / "readings_index.json"
#: the docs folder of a source checkout (an installed package has none: pass --docs)
DOCS = _ROOT / "docs"

_ID = r"[A-Z]+-[RIL]\d+"
_PAGE = re.compile(r"^\*\*.+\*\* \(\[`(papers/[a-z_]+\.md)`\]")
_ITEM = re.compile(rf"^- `({_ID})`: (.+)$")
_PARAGRAPH = re.compile(rf"^\*\*({_ID})(.*?)\*\*")


def _paragraph_title(rest: str) -> str:
    """``" — inner update (Alg. 1)."`` / ``": step constants."`` / ``" (the floor)."`` →
    the title alone (also cleans a list item's title, e.g. ``": step constants"``)."""
    rest = rest.strip().removeprefix("—").removeprefix(":").strip()
    if rest.startswith("(") and rest.rstrip(".").endswith(")"):
        rest = rest.rstrip(".")[1:-1]
    return rest.rstrip(".").strip()


def index_from_docs(docs: Path = DOCS) -> dict[str, dict[str, str]]:
    """``{id: {"title", "page"}}`` from ``docs/papers.md`` and the pages ``docs/papers/*.md``
    (``page``: ``"docs/papers/<paper>.md"``).  Raises ``OSError`` when ``docs`` cannot be read."""
    docs = Path(docs)
    index: dict[str, dict[str, str]] = {}
    page = ""
    for line in (docs / "papers.md").read_text(encoding="utf-8").splitlines():
        if m := _PAGE.match(line):
            page = f"docs/{m.group(1)}"
        elif (m := _ITEM.match(line)) and page:
            index.setdefault(m.group(1), {"title": _paragraph_title(m.group(2)), "page": page})
    for path in sorted((docs / "papers").glob("*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if (m := _PARAGRAPH.match(line)) and m.group(1) not in index:
                title = _paragraph_title(m.group(2))
                if title:
                    index[m.group(1)] = {"title": title, "page": f"docs/papers/{path.name}"}
    return index


def index_text(docs: Path = DOCS) -> str:
    """The exact text of ``readings_index.json`` for ``docs``."""
    return json.dumps(index_from_docs(docs), indent=1, ensure_ascii=False) + "\n"


@lru_cache(maxsize=1)
def toolkit_index() -> dict[str, dict[str, str]]:
    """The installed index (``{}`` when the file is missing)."""
    try:
        return json.loads(PATH.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (all of it when it has one), whitespace collapsed."""
    text = " ".join(str(text).split())
    m = re.match(r"(.+?[.;!?])(?:\s|$)", text)
    return (m.group(1).rstrip(".;") if m else text).strip()


def _load_plugins() -> None:
    """Import the installed plug-ins' claims so that their ``register_paper`` runs; a broken
    plug-in leaves its readings unresolved (a report is still written)."""
    from bilevel_theory.verify.claims import ENTRY_POINT_GROUP, loaded_entry_points  # noqa: PLC0415

    try:
        for _ in loaded_entry_points(ENTRY_POINT_GROUP):
            pass
    except ImportError:
        pass


def reading_titles(ids: Iterable[str]) -> dict[str, dict[str, str]]:
    """``{id: {"title", "text", "source"}}`` for the ids that resolve; unknown ids are left
    out.  A plug-in's reading (``kit.READINGS``): ``title`` its text's first sentence,
    ``text`` the registered text, ``source`` the registering paper's citation.  A toolkit
    reading: ``title`` and ``text`` its title, ``source`` its page (``docs/papers/<p>.md``).
    Installed plug-ins are imported only when an id resolves neither way."""
    from bilevel_theory.verify import kit  # noqa: PLC0415

    ids = list(dict.fromkeys(str(i) for i in ids))
    index = toolkit_index()
    if any(i not in kit.READINGS and i not in index for i in ids):
        _load_plugins()
    out: dict[str, dict[str, str]] = {}
    for rid in ids:
        if rid in kit.READINGS:
            paper = kit.reading_paper(rid)
            text = " ".join(kit.READINGS[rid].split())
            out[rid] = {"title": first_sentence(text), "text": text,
                        "source": paper.citation if paper is not None else ""}
        elif rid in index:
            out[rid] = {"title": index[rid]["title"], "text": index[rid]["title"],
                        "source": index[rid]["page"]}
    return out


def main(argv: list[str] | None = None) -> int:
    from bilevel_theory.verify.generated import parser, write_or_check  # noqa: PLC0415

    cli = parser("python3 -m bilevel_theory.reports.readings", __doc__, "index", PATH)
    cli.add_argument("--docs", type=Path, default=DOCS, help="the docs (default: %(default)s)")
    args = cli.parse_args(argv)
    try:
        text = index_text(args.docs)
    except OSError as err:
        print(f"error: `--docs` must be the docs folder (papers.md, papers/*.md): {err}",
              file=sys.stderr)
        return 2
    status = write_or_check(args.path, text, args.check, "docs/papers.md and docs/papers/*.md",
                            "python3 -m bilevel_theory.reports.readings --write")
    toolkit_index.cache_clear()  # a rewritten index is read afresh
    return status


if __name__ == "__main__":
    sys.exit(main())
