"""The coverage map as text: the ``docs/coverage.md`` page, the ``bilevel-theory coverage``
tables, strict JSON, and the short section of a rate-check report."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from .mapping import NOT_CHECKABLE, STATUSES, Assessed, as_dict, counts
from .model import CANONICAL, GAPS

COMMAND = "python3 -m bilevel_theory.verify.coverage --write"


def _cell(text: object) -> str:
    """One table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", r"\|")


def _math(latex: str) -> str:
    """A statement for a Markdown cell: LaTeX inside ``$…$`` when it has a backslash."""
    text = " ".join(latex.split())
    if "\\" not in text:
        return _cell(text)
    return "$" + text.replace(r"\|", r"\Vert ").replace("|", r"\vert ") + "$"


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(_cell(c) for c in row) + " |" for row in rows)]


def _variables(a: Assessed) -> str:
    """``T ✓, κ ✗``: each variable, swept or not."""
    if not a.result.checkable:
        return ", ".join(a.result.variables)
    return ", ".join(f"{v} {'✓' if v in a.swept else '✗'}" for v in a.result.variables)


def _claims(a: Assessed) -> str:
    """``id (role, sweeps T)`` per claim (``sweeps T, and n at each T`` for a two-way
    experiment); controls and defects marked as not counted."""
    if not a.uses:
        return "—"
    return "; ".join(f"{u.id} ({u.role}, sweeps {u.sweeps}"
                     + (f", and {u.inner} at each {u.sweeps}" if u.inner else "")
                     + ("" if u.counted else ", not counted") + ")" for u in a.uses)


def _status(a: Assessed) -> str:
    if a.status == NOT_CHECKABLE:
        return f"n/a: {a.result.why_not}"
    if a.status == "full":
        return f"full: {a.result.reason}" if a.result.reason else "full"
    text = f"{a.status} (missing {', '.join(a.missing)}; {a.result.gap})"
    return f"{text}: {a.result.reason}" if a.result.reason else text


def _count_row(name: str, c: dict) -> list[object]:
    h = c["headline"]
    return [name, c["results"], c["checkable"], *(c[s] for s in STATUSES), h["checkable"],
            *(h[s] for s in STATUSES)]


COUNT_HEADER = ("paper", "results", "checkable", "full", "partial", "none",
                "headline checkable", "headline full", "headline partial", "headline none")


def count_rows(assessed: Sequence[Assessed]) -> list[list[object]]:
    """Per paper, then ``overall``."""
    c = counts(assessed)
    return ([_count_row(p["paper"], p) for p in c["papers"].values()]
            + [_count_row("overall", c["overall"])])


def gap_rows(assessed: Sequence[Assessed]) -> list[list[object]]:
    """Per ``gap``: what it means, how many open results (headline ones) and which."""
    rows = []
    for gap, meaning in GAPS.items():
        ids = [a.result.id for a in assessed if a.result.gap == gap]
        heads = sum(a.result.headline for a in assessed if a.result.gap == gap)
        rows.append([gap, meaning, len(ids), heads, ", ".join(ids) or "—"])
    return rows


GAP_HEADER = ("why open", "meaning", "results", "headline", "which")


def markdown(assessed: Sequence[Assessed], command: str = COMMAND) -> str:
    """The ``docs/coverage.md`` page."""
    lines = [
        "# Coverage of the papers' results",
        "",
        f"Generated from the inventories (`verify/coverage/inventory/`) and the claims "
        f"catalogue by `{command}`; do not edit by hand (`--check` fails when it is out of "
        "sync).",
        "",
        "Each paper's stated quantitative results — every theorem, corollary, proposition and "
        "lemma with a rate, bound, complexity or constant, and every remark, figure or table "
        "that states a rate, speedup, complexity, communication count or comparison — with "
        "the claims that test it.  A claim sweeps one variable (a two-way experiment also "
        "walks a second one at every point of its grid, e.g. AFBO's clients at each T); a "
        "result is **full** when every "
        "variable of its statement is swept by a confirmation or finding naming it, "
        "**partial** when some are, **none** when none are (controls, which check this "
        "toolkit's code, and defects, which test the authors' released code, are listed but "
        "never counted); **n/a** when quadratic instances cannot test it.  The status is computed, "
        "never typed.  In the tables ✓ marks a swept variable, ✗ a missing one.",
        "",
        "Variables: " + "; ".join(f"`{k}` {v}" for k, v in CANONICAL.items()) + ".",
        "",
        "## Counts",
        "",
        *_table(COUNT_HEADER, count_rows(assessed)),
        "",
        "## Why the rest is open",
        "",
        "Every checkable result that is not covered in full names why, and its status says "
        "the details.  Only the last three kinds could still become full here: a result "
        "whose missing variables no claim could test on quadratics stays partial or none "
        "rather than being given a claim that cannot fail.",
        "",
        *_table(GAP_HEADER, gap_rows(assessed)),
        "",
        "## Headline results",
        "",
        *_table(("result", "source", "variables", "status"),
                ([a.result.id, a.source, _variables(a), _status(a)]
                 for a in assessed if a.result.headline)),
    ]
    papers: dict[str, list[Assessed]] = {}
    for a in assessed:
        papers.setdefault(a.inventory.key, []).append(a)
    for group in papers.values():
        inv = group[0].inventory
        lines += ["", f"## {inv.paper} — {inv.citation}", ""]
        lines += ["| result | source | statement | headline | variables | claims | status |",
                  "|---|---|---|---|---|---|---|"]
        for a in group:
            lines.append("| " + " | ".join([
                f"`{a.result.id}`", _cell(a.result.where), _math(a.result.statement),
                "yes" if a.result.headline else "", _cell(_variables(a)), _cell(_claims(a)),
                _cell(_status(a))]) + " |")
    return "\n".join(lines).rstrip() + "\n"


def text(assessed: Sequence[Assessed]) -> str:
    """The ``bilevel-theory coverage`` output: counts, headline status, then every result."""
    def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
        rows = [[str(c) for c in r] for r in rows]
        widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(header)]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        return [fmt.format(*header).rstrip(), *(fmt.format(*r).rstrip() for r in rows)]

    out = table(("paper", "results", "checkable", "full", "partial", "none", "headline",
                 "h-full", "h-partial", "h-none"), count_rows(assessed))
    out += ["", "why open:"]
    out += table(("gap", "results", "headline"),
                 [[g, n, h] for g, _, n, h, _ in gap_rows(assessed)])
    out += ["", "headline results:"]
    out += table(("result", "status", "variables"),
                 [[a.result.id, a.status, _variables(a)] for a in assessed
                  if a.result.headline])
    out += ["", "all results:"]
    out += table(("result", "status", "variables", "claims"),
                 [[a.result.id, a.status, _variables(a),
                   ", ".join(u.id + ("" if u.counted else f" ({u.role})") for u in a.uses) or "—"]
                  for a in assessed])
    return "\n".join(out) + "\n"


def to_json(assessed: Sequence[Assessed]) -> str:
    """Strict JSON (no NaN): the counts and every result's row."""
    payload = {**counts(assessed), "results": [as_dict(a) for a in assessed]}
    return json.dumps(payload, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def report_lines(assessed: Sequence[Assessed]) -> list[str]:
    """A rate-check report's section: the counts per paper and overall (Markdown lines)."""
    if not assessed:
        return []
    return ["## Coverage of the papers' results", "",
            "How many of each paper's stated results the catalogue's claims test (every "
            "variable of the statement swept: full; some: partial); see `docs/coverage.md` or "
            "`bilevel-theory coverage`.", "",
            *_table(COUNT_HEADER, count_rows(assessed)), ""]
