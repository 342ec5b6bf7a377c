"""Regenerate the README's generated blocks, never typed by hand.

    python -m bilevel_theory.reports.readme RESULTS_DIR [README.md]

Replaces the text between ``<!-- BEGIN name -->`` and ``<!-- END name -->`` for

* ``verdicts``: the headline counts (confirmations and findings apart from controls, mutants
  caught) and one table per role, from the store in ``RESULTS_DIR`` (a run with ``--mutants``);
* ``findings``: every finding's statement, source and the mathematical reason (the claim's
  ``reason``), from the catalogue;
* ``hyperparameters``: the hyperparameter schema (:mod:`bilevel_theory.hyperparameters`) and
  which algorithms take each name;
* ``knobs``: the instance knobs' ranges (:mod:`bilevel_theory.problems.knobs`).

A block that is absent from the README is skipped; an unknown block name is left alone.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .markdown import ROLE_ORDER, ROLE_TITLES, headline, measured, power_counts, predicted
from .render import fold_mutants, load_meta, normalize_entries, summarize

BLOCK = re.compile(r"(<!-- BEGIN (\w+) -->\n)(.*?)(<!-- END \2 -->)", re.S)


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _verdict(e: Mapping[str, Any]) -> str:
    v = e.get("verdict") or "missing"
    mark = "" if v == e.get("expected") else " (expected " + str(e.get("expected")) + ")"
    return f"**{v}**{mark}"


def _power(e: Mapping[str, Any]) -> str:
    p = e.get("power")
    if not p:
        return "—" if e.get("role") == "control" else "not run"
    return f"{sum(bool(m.get('caught')) for m in p)}/{len(p)}"


def verdicts_block(results_dir: Path) -> str:
    """Headline counts and one table per role from the store in ``results_dir``."""
    meta = load_meta(results_dir)
    entries, _ = fold_mutants(normalize_entries(summarize(results_dir)))
    lines = []
    caught, total, unrun = power_counts(entries)
    when = meta.get("date", "?")
    lines.append(f"Budget `{meta.get('budget')}`, seed {meta.get('seed')}, backend "
                 f"`{meta.get('backend')}`, run {when}; regenerate with "
                 f"`python -m bilevel_theory.reports.readme {results_dir}`.")
    lines.append("")
    for title, description, c in headline(entries):
        lines.append(f"- **{title}** ({description}): {c['total']} — {c['holds']} hold, "
                     f"{c['violated']} violated"
                     + (f", {c['inconclusive']} inconclusive" if c["inconclusive"] else "")
                     + (f", {c['missing']} not run" if c["missing"] else ""))
    lines.append(f"- **Mutants caught**: {caught} of {total}" + (f" ({unrun} claims without a mutant run)" if unrun else "") if total
                 else "- **Mutants**: not run")
    for role in ROLE_ORDER:
        chosen = [e for e in entries if (e.get("role") or "confirmation") == role]
        if not chosen:
            continue
        lines += ["", f"**{ROLE_TITLES[role][0]}**", "",
                  "| claim | kind | predicted | measured [95% interval] | verdict | power |",
                  "|---|---|---|---|---|---|"]
        for e in chosen:
            lines.append(f"| `{e['id']}` | {e.get('kind', '')} | {_cell(predicted(e))} | "
                         f"{_cell(measured(e))} | {_verdict(e)} | {_power(e)} |")
    return "\n".join(lines) + "\n"


def findings_block(_: Path | None = None) -> str:
    """Every finding of the catalogue: statement, source, and why it fails."""
    from bilevel_theory.verify import CLAIMS  # noqa: PLC0415

    lines = []
    for cid in CLAIMS:
        c = CLAIMS[cid]
        if c.role != "finding":
            continue
        lines.append(f"- **`{cid}`** — {c.source}. {_cell(c.reason)}")
    return "\n".join(lines) + "\n"


def hyperparameters_block(_: Path | None = None) -> str:
    """The hyperparameter schema and which algorithms take each name."""
    from bilevel_theory import ALGORITHMS  # noqa: PLC0415
    from bilevel_theory.hyperparameters import SCHEMA  # noqa: PLC0415

    users: dict[str, list[str]] = {}
    for name, cls in ALGORITHMS.items():
        for hp in cls.defaults:
            users.setdefault(hp, []).append(name)
    lines = ["| hyperparameter | meaning | allowed | algorithms |", "|---|---|---|---|"]
    for hp in sorted(users):
        spec = {**SCHEMA}.get(hp)
        for cls_name in users[hp]:
            spec = ALGORITHMS[cls_name].schema.get(hp, spec)
        meaning, allowed = (spec.meaning, spec.range_text()) if spec else ("", "")
        lines.append(f"| `{hp}` | {_cell(meaning)} | {_cell(allowed)} | "
                     f"{', '.join(f'`{a}`' for a in users[hp])} |")
    return "\n".join(lines) + "\n"


def knobs_block(_: Path | None = None) -> str:
    """The instance knobs and their ranges."""
    from bilevel_theory.problems.knobs import KNOBS  # noqa: PLC0415

    lines = ["| knob | meaning | range |", "|---|---|---|"]
    lines += [f"| `{k.name}` | {_cell(k.meaning)} | {k.range_text()} |" for k in KNOBS.values()]
    return "\n".join(lines) + "\n"


BLOCKS: dict[str, Callable[[Path], str]] = {
    "verdicts": verdicts_block, "findings": findings_block,
    "hyperparameters": hyperparameters_block, "knobs": knobs_block,
}


def update(text: str, results_dir: Path, blocks: Mapping[str, Callable[[Path], str]] = BLOCKS
           ) -> str:
    """``text`` with every known generated block replaced."""
    def replace(m: re.Match) -> str:
        name = m.group(2)
        if name not in blocks:
            return m.group(0)
        return m.group(1) + blocks[name](results_dir) + m.group(4)

    return BLOCK.sub(replace, text)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bilevel_theory.reports.readme",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, help="results directory (a --mutants run)")
    parser.add_argument("readme", type=Path, nargs="?", default=Path("README.md"))
    args = parser.parse_args(argv)
    try:
        text = args.readme.read_text(encoding="utf-8")
        new = update(text, args.results)
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    args.readme.write_text(new, encoding="utf-8")
    print(f"{args.readme}: {len(BLOCK.findall(text))} generated blocks updated from "
          f"{args.results}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
