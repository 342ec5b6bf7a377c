"""``index.md``: the report as GitHub-flavoured Markdown (tables, ```math blocks, PNGs).

Also holds the text formatting shared with :mod:`reports.html` (numbers, verdict labels,
metadata rows), so both outputs say the same thing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

VERDICT_EMOJI = {"holds": "✅", "violated": "❌", "inconclusive": "❔", None: "⚪"}
KIND_HELP = {
    "matches": "tight law: measured exponent within tolerance of the predicted one",
    "at_most": "upper bound: measured slope at most the predicted one (+ tolerance)",
    "geometric": "geometric law: semilog slope against the log of the predicted ratio",
    "bounded_by": "explicit bound: the measured value stays below the theorem's bound",
    "exact": "count: measured equals the predicted count",
    "contrast": "contrast: algorithm A shows the property and B does not",
}
META_FIELDS = (
    ("date", "Run date"),
    ("version", "Package version (run)"),
    ("backend", "Backend"),
    ("budget", "Budget"),
    ("seed", "Seed"),
    ("seeds", "Seeds"),
    ("machine", "Machine"),
    ("workers", "Workers"),
    ("pattern", "Claims pattern"),
    ("catalogue", "Catalogue"),
    ("python", "Python"),
    ("numpy", "NumPy"),
    ("runtime", "Runtime"),
    ("results_dir", "Results directory"),
    ("report_date", "Report generated"),
    ("report_version", "Package version (report)"),
)
COST_NOTE = ("Cost to reach the common target on the common instance: median over the "
             "replicates that reached it (— where none did).")
FINAL_LABEL = "final stationarity (median, all replicates)"
COST_COLUMNS = (
    ("rounds_to_target", "rounds"),
    ("grad_calls_to_target", "gradient calls"),
    ("hvp_calls_to_target", "HVP calls"),
    ("jvp_calls_to_target", "JVP calls"),
)


# ----------------------------------------------------------------------------- formatting


def as_float(v: Any) -> float:
    """``v`` as a float, NaN when it is not a number (stored metrics may be null or text)."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def num(v: Any, digits: int = 3) -> str:
    """A number for a table: ``digits`` significant digits, integers kept whole, '—' for none."""
    if v is None or isinstance(v, bool):
        return "—"
    try:
        x = float(v)
    except (TypeError, ValueError):
        return str(v)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if x == int(x) and abs(x) < 1e9:
        return str(int(x)).replace("-", "−")
    s = f"{x:.{digits}g}"
    return s.replace("-", "−")


def count(v: Any) -> str:
    """A cost count: whole numbers with thousands separators (``12,870``), '—' for none."""
    x = as_float(v)
    if not math.isfinite(x):
        return "—"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return num(x)


def interval(iv: Any) -> str:
    if not iv or not isinstance(iv, Sequence) or len(iv) != 2:
        return ""
    if all(num(v) in ("—", "NaN") for v in iv):
        return ""
    return f"[{num(iv[0])}, {num(iv[1])}]"


def measured(e: Mapping[str, Any]) -> str:
    if e.get("measured") is None:
        return "—"
    iv = interval(e.get("interval"))
    return f"{num(e['measured'])} {iv}".strip()


def predicted(e: Mapping[str, Any]) -> str:
    if e.get("predicted") is None:
        return "see bound" if e.get("kind") == "bounded_by" else "—"
    p = num(e["predicted"])
    if e.get("kind") == "bounded_by":
        return f"mean/bound ≤ {p}"
    return f"≤ {p}" if e.get("kind") == "at_most" else p


def seconds(v: Any) -> str:
    x = as_float(v)
    if not math.isfinite(x):
        return "—"
    if x >= 120:
        return f"{x / 60:.1f} min"
    if x < 0.05:
        return "< 0.1 s"
    return f"{x:.1f} s"


def verdict_text(e: Mapping[str, Any]) -> str:
    """Plain verdict label: ``violated``, ``holds (partial)``, ``missing``."""
    status = e.get("status") or "complete"
    v = e.get("verdict")
    if status == "missing" and v is None:
        return "missing (not run)"
    text = v or "—"
    if status != "complete":
        text += f" ({status})"
    return text


def off_expectation(e: Mapping[str, Any]) -> bool:
    """Whether the verdict differs from the expected one (a regression, not a finding)."""
    v = e.get("verdict")
    return v is not None and e.get("status") != "missing" and v != (e.get("expected") or "holds")


def window(e: Mapping[str, Any]) -> str:
    w = e.get("window")
    var = e.get("variable") or "x"
    if not w:
        return "all sweep values"
    return f"{num(w[0])} ≤ {var} ≤ {num(w[1])}"


def meta_rows(meta: Mapping[str, Any]) -> list[tuple[str, str]]:
    out = []
    for key, label in META_FIELDS:
        value = meta.get(key)
        if value is None or value == "":
            continue
        if key == "runtime":
            value = seconds(value)
        elif isinstance(value, Mapping):
            value = ", ".join(f"{k} {v}" for k, v in value.items())
        out.append((label, str(value)))
    versions = meta.get("versions")
    if isinstance(versions, Mapping) and versions:
        out.append(("Versions (store)", ", ".join(f"{k} {v}" for k, v in versions.items())))
    if not meta.get("complete", True):
        out.append(("Run status", "run.json absent: interrupted or unfinished run; "
                                  "metadata derived from the store rows"))
    return out


def counts(entries: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    c = {"holds": 0, "violated": 0, "inconclusive": 0, "missing": 0, "partial": 0, "off": 0}
    for e in entries:
        if e.get("status") == "missing":
            c["missing"] += 1
        elif e.get("verdict") in c:
            c[e["verdict"]] += 1
        if e.get("status") == "partial":
            c["partial"] += 1
        if off_expectation(e):
            c["off"] += 1
    return c


def discrepancies(entries: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The discrepancy ledger: every claim that is violated or inconclusive."""
    return [e for e in entries
            if e.get("status") != "missing" and e.get("verdict") in ("violated", "inconclusive")]


def heading_slug(text: str) -> str:
    """GitHub's anchor for a heading (lower case; punctuation except '-' and '_' dropped)."""
    out = []
    for ch in text.strip().lower():
        if ch.isalnum() or ch in "-_":
            out.append(ch)
        elif ch == " ":
            out.append("-")
    return "".join(out)


# ----------------------------------------------------------------------------- markdown


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _code(text: Any) -> str:
    text = " ".join(str(text).split())
    if not text:
        return ""
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def _math(latex: str) -> list[str]:
    from .figures import looks_like_prose  # noqa: PLC0415

    latex = latex.strip()
    if not latex:
        return []
    if "$" in latex or looks_like_prose(latex):
        return [latex, ""]
    return ["```math", latex, "```", ""]


def _verdict_md(e: Mapping[str, Any]) -> str:
    emoji = VERDICT_EMOJI.get(e.get("verdict") if e.get("status") != "missing" else None, "⚪")
    text = f"{emoji} **{verdict_text(e)}**"
    if off_expectation(e):
        text += " ⚠ differs from expected"
    return text


def render_markdown(report: Mapping[str, Any]) -> str:
    """The Markdown report (``index.md``) of a report dict built by ``render_entries``."""
    entries = report["entries"]
    meta = report.get("meta") or {}
    figs = report.get("figures") or {}
    c = counts(entries)
    md: list[str] = ["# Rate-check report", ""]
    md.append(f"**{len(entries)} claims:** ✅ {c['holds']} hold · ❌ {c['violated']} violated · "
              f"❔ {c['inconclusive']} inconclusive · ⚪ {c['missing']} missing. "
              f"**{c['off']}** verdict(s) differ from the expected verdict.")
    md.append("")
    if c["missing"] or c["partial"] or not meta.get("complete", True):
        md.append(f"> **Incomplete run:** {c['missing']} claim(s) missing (no rows in the "
                  f"store), {c['partial']} partial. They are marked below.")
        md.append("")
    md += ["## Run", ""]
    md += _table(["", ""], meta_rows(meta))
    md.append("")
    if figs.get("overview"):
        md += ["## Overview", "",
               "Measured minus predicted slope for every claim, with its bootstrap interval; "
               "the green band is the claim's tolerance.", "",
               f"![Overview: measured − predicted per claim]({figs['overview']})", ""]
    md += ["## Summary", ""]
    rows = []
    for i, e in enumerate(entries, start=1):
        rows.append([
            i,
            f"[{e['id']}](#{heading_slug(e['id'])})",
            f"{e.get('paper', '')} — {e.get('source', '')}".strip(" —"),
            _code(e.get("statement", "")),
            e.get("kind", ""),
            predicted(e),
            measured(e),
            _verdict_md(e),
            e.get("expected") or "holds",
            seconds(e.get("seconds")),
        ])
    md += _table(["#", "Claim", "Paper and source", "Statement", "Kind", "Predicted",
                  "Measured [interval]", "Verdict", "Expected", "Time"], rows)
    md.append("")

    md += ["## Discrepancy ledger", "",
           "Every claim that is violated or inconclusive, with the evidence, the reason and the "
           "[NOTE]/[INFERRED] items of PAPERS.md it touches.", ""]
    disc = discrepancies(entries)
    if disc:
        md += _table(
            ["Claim", "Verdict", "Expected", "Measured vs predicted", "Interval", "Reason",
             "Touches"],
            [[f"[{e['id']}](#{heading_slug(e['id'])})", _verdict_md(e), e.get("expected"),
              f"{num(e.get('measured'))} vs {predicted(e)}", interval(e.get("interval")) or "—",
              e.get("reason") or "—", "; ".join(e.get("touches") or []) or "—"] for e in disc])
    else:
        md.append("No claim is violated or inconclusive.")
    md.append("")
    missing = [e for e in entries if e.get("status") == "missing"]
    if missing:
        md += ["### Missing claims", "",
               "No rows in the store (the run stopped before them): "
               + ", ".join(f"`{e['id']}`" for e in missing) + ".", ""]

    md += ["## Communication and oracle cost", ""]
    md += cost_markdown(report.get("costs") or [])
    md.append("")

    md += ["## Claims", ""]
    for e in entries:
        md += claim_markdown(e)
    return "\n".join(md).rstrip() + "\n"


def cost_markdown(costs: Sequence[Mapping[str, Any]]) -> list[str]:
    if not costs:
        return ["No cost measurements (`costs.*` rows) in the store."]
    budgets = {c.get("budget") for c in costs}
    final = any("final_stationarity" in c for c in costs)
    header = ["Algorithm"] + (["Budget"] if len(budgets) > 1 else []) + \
        ["Reached target", "Target"] + [label for _, label in COST_COLUMNS] + \
        ([FINAL_LABEL] if final else [])
    rows = []
    for c in costs:
        row = [c["algorithm"]] + ([c.get("budget") or "—"] if len(budgets) > 1 else [])
        row += [f"{c['reached']}/{c['replicates']}", num(c.get("target"))]
        row += [count(c.get(k)) for k, _ in COST_COLUMNS]
        row += [num(c.get("final_stationarity"))] if final else []
        rows.append(row)
    return [COST_NOTE, ""] + _table(header, rows)


def claim_markdown(e: Mapping[str, Any]) -> list[str]:
    md = [f"### {e['id']}", "", _verdict_md(e) + f" (expected: {e.get('expected') or 'holds'})",
          ""]
    if e.get("paper") or e.get("source"):
        md += [f"**{e.get('paper', '')}** — {e.get('source', '')}", ""]
    if e.get("statement"):
        md += ["**Statement:**", ""] + _math(e["statement"])
    if e.get("law_latex"):
        md += ["**Bound:**", ""] + _math(e["law_latex"])
    if e.get("law_derivation"):
        md += [f"*Prediction derived:* {e['law_derivation']}", ""]
    facts = [
        ("Kind", f"`{e.get('kind')}` — {KIND_HELP.get(e.get('kind'), '')}"),
        ("Predicted", predicted(e)),
        ("Measured [interval]", measured(e)),
        ("Swept variable", f"`{e.get('variable')}`" if e.get("variable") else "—"),
        ("Measured quantity", _code(e.get("quantity")) or "—"),
        ("Fit window", window(e)),
        ("Schedule", e.get("schedule") or "—"),
        ("Budget", e.get("budget") or "—"),
        ("Status", e.get("status") or "complete"),
        ("Time", seconds(e.get("seconds"))),
    ]
    md += [f"- **{k}:** {v}" for k, v in facts]
    if e.get("touches"):
        md.append("- **Touches:** " + "; ".join(e["touches"]))
    md.append("")
    if e.get("reason"):
        md += [f"**Reason:** {' '.join(str(e['reason']).split())}", ""]
    if e.get("figure"):
        md += [f"![{e['id']}]({e['figure']})", ""]
    elif e.get("status") == "missing":
        md += ["*No data: this claim has no rows in the store.*", ""]
    return md
