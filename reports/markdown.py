"""``index.md``: the report as GitHub-flavoured Markdown (tables, ``$…$`` math, PNG figures).

Layout: the headline counts (confirmations and findings apart from controls, and the
mutants caught), a compact summary grouped by paper (``claim | paper, result | verdict |
measured [interval] vs predicted``), the overview figure, the discrepancy ledger, costs, one
section per claim (grouped by paper, then role) and the run's metadata last.

Also holds the text formatting shared with :mod:`reports.html` (numbers, verdict labels,
power, window, metadata rows), so both outputs say the same thing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from .text import looks_like_prose

VERDICT_EMOJI = {"holds": "✅", "violated": "❌", "inconclusive": "❔", None: "⚪"}
KIND_HELP = {
    "matches": "tight law: measured exponent within tolerance of the predicted one",
    "at_most": "upper bound: measured slope at most the predicted one (+ tolerance)",
    "geometric": "geometric law: semilog slope against the log of the predicted ratio",
    "bounded_by": "explicit bound: the measured value stays below the theorem's bound",
    "exact": "count: measured equals the predicted count",
    "contrast": "contrast: the measured series shows the property and the contrast series "
                "does not",
}
ROLE_TITLES = {
    "confirmation": ("Confirmations", "the papers' statements, each in a test that can fail"),
    "finding": ("Findings", "where a paper's statement fails on its own assumptions"),
    "defect": ("Defects of released code", "where the authors' released code does not do "
                                           "what the paper's result describes"),
    "control": ("Controls", "identity and implementation checks of this code; they say "
                            "nothing about the papers"),
}
ROLE_ORDER = ("confirmation", "finding", "defect", "control")
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
    ("runtime", "Runtime (this call)"),
    ("cpu", "CPU time (this call, main process and local workers)"),
    ("cost", "Cost of the stored budget (every call)"),
    ("results_dir", "Results directory"),
    ("report_date", "Report generated"),
    ("report_version", "Package version (report)"),
    ("figure_formats", "Figure formats"),
    ("figure_dpi", "PNG resolution (dpi)"),
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


def cost_text(cost: Mapping[str, Any]) -> str:
    """``"3 calls, 1234 points: 95.0 min wall, 180.2 min CPU"`` from a budget's summed cost."""
    calls = cost.get("segments", 0)
    cpu = cost.get("cpu_seconds")
    cpu_text = "CPU not timed (a Dask cluster ran points)" if cpu is None else (
        f"{seconds(cpu)} CPU")
    return (f"{calls} call{'s' if calls != 1 else ''}, {cost.get('points_finished', 0)} points: "
            f"{seconds(cost.get('runtime_seconds'))} wall, {cpu_text}")


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
    lo, hi = as_float(w[0]), as_float(w[1])
    if hi >= 1e12 or math.isinf(hi):  # open-ended
        return f"{var} ≥ {num(lo)}"
    return f"{num(lo)} ≤ {var} ≤ {num(hi)}"


def meta_rows(meta: Mapping[str, Any]) -> list[tuple[str, str]]:
    out = []
    for key, label in META_FIELDS:
        value = meta.get(key)
        if value is None or value == "":
            continue
        if key in ("runtime", "cpu"):
            value = seconds(value)
        elif key == "cost" and isinstance(value, Mapping):
            value = cost_text(value)
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


def role_counts(entries: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """:func:`counts` per role (``confirmation``, ``finding``, ``control``)."""
    return {role: counts([e for e in entries if (e.get("role") or "confirmation") == role])
            | {"total": sum(1 for e in entries if (e.get("role") or "confirmation") == role)}
            for role in ROLE_ORDER}


def power_counts(entries: Sequence[Mapping[str, Any]]) -> tuple[int, int, int]:
    """``(caught, run, claims without a mutant run)`` over the confirmations and findings."""
    caught = run = unrun = 0
    for e in entries:
        if (e.get("role") or "confirmation") == "control":
            continue
        power = e.get("power")
        if power:
            run += len(power)
            caught += sum(1 for p in power if p.get("caught"))
        else:
            unrun += 1
    return caught, run, unrun


def power_text(e: Mapping[str, Any]) -> str:
    """``power: 2 of 2 mutants caught``, ``mutants not run`` (or why there are none)."""
    power = e.get("power")
    if power:
        caught = sum(1 for p in power if p.get("caught"))
        return f"power: {caught} of {len(power)} mutant{'s' if len(power) != 1 else ''} caught"
    if (e.get("role") or "confirmation") == "control":
        return "control: no mutants"
    declared = len(e.get("mutants") or [])
    if declared:
        return f"mutants not run ({declared} declared; run with --mutants)"
    return "mutants not run (none declared)"


def mutant_lines(e: Mapping[str, Any]) -> list[str]:
    """One line per mutant run: name, change, verdict against the required one, caught."""
    out = []
    for p in e.get("power") or []:
        mark = "caught" if p.get("caught") else "NOT caught"
        meas = ""
        if p.get("measured") is not None:
            meas = f"; measured {num(p.get('measured'))} {interval(p.get('interval'))}".rstrip()
        change = f" ({p['change']})" if p.get("change") else ""
        kind = f" [{p['kind']}]" if p.get("kind") else ""
        out.append(f"{p.get('mutant')}{kind}{change}: {p.get('verdict') or '—'}, required "
                   f"{p.get('required') or '—'} → {mark}{meas}")
    return out


def condition_lines(e: Mapping[str, Any]) -> list[str]:
    """The theorem's conditions on the claim's instance and schedule, one line each with
    pass/fail over the run's grid (``Claim.check_conditions``)."""
    out = []
    for c in e.get("conditions") or ():
        mark = "pass" if c.get("holds") else "FAIL"
        left = "" if c.get("inside", True) else " (left on purpose)"
        worst = (f"worst {num(c.get('lhs'), 4)} {c.get('relation')} {num(c.get('rhs'), 4)} "
                 f"at x = {num(c.get('worst_x'), 4)}")
        note = f" — {c['note']}" if c.get("note") else ""
        out.append(f"{mark}{left}: {c.get('statement')}; {worst}{note}")
    if not out and e.get("conditions_note"):
        out.append(f"none: {e['conditions_note']}")
    return out


def window_reason(e: Mapping[str, Any]) -> str:
    """Why the fit window is what it is (empty without a window)."""
    if not e.get("window"):
        return ""
    reason = " ".join(str(e.get("window_reason") or "").split()).rstrip(".")
    how = ("derived from the law" if e.get("window_derived") else
           "set by hand, so cross-checked against the full grid: inconclusive when the two "
           "disagree")
    return f"{reason} — {how}" if reason else f"no reason given — {how}"


def full_grid_text(e: Mapping[str, Any]) -> str:
    """The full grid's fit beside the window's, or empty without a window."""
    full = (e.get("details") or {}).get("full_grid")
    if not e.get("window") or not isinstance(full, Mapping):
        return ""
    iv = interval(full.get("interval"))
    window_verdict = (e.get("details") or {}).get("window_verdict") or e.get("verdict")
    return (f"full grid {num(full.get('measured'))} {iv} → {full.get('verdict') or '—'}; "
            f"window {measured(e)} → {window_verdict or '—'}").replace("  ", " ")


def reading_labels(e: Mapping[str, Any], full: bool = False) -> list[str]:
    """``"ID — title"`` per reading the entry touches (``full``: the whole registered text of
    a plug-in's reading, and where it is documented); a bare ``"ID"`` when it is unknown."""
    readings = e.get("readings") or [{"id": t} for t in e.get("touches") or []]
    out = []
    for r in readings:
        title = (r.get("text") if full else None) or r.get("title") or ""
        label = f"{r['id']} — {title}" if title else str(r["id"])
        if full and title and r.get("source"):
            label += f" ({r['source']})"
        out.append(label)
    return out


def measured_vs_predicted(e: Mapping[str, Any]) -> str:
    """``−1.01 [−1.09, −0.93] vs −1`` (``—`` where nothing was measured)."""
    return f"{measured(e)} vs {predicted(e)}"


def paper_result(e: Mapping[str, Any]) -> str:
    """The result's citation (``source``), else the paper's name."""
    return " ".join(str(e.get("source") or e.get("paper") or "—").split())


def papers_in_order(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    return list(dict.fromkeys(str(e.get("paper") or "") for e in entries))


def headline(entries: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, dict[str, int]]]:
    """``(title, description, counts)`` per role present, confirmations first."""
    rc = role_counts(entries)
    return [(ROLE_TITLES[r][0], ROLE_TITLES[r][1], rc[r]) for r in ROLE_ORDER if rc[r]["total"]]


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


def _inline_math(latex: str, formula: bool = False) -> str:
    """``latex`` as GitHub inline math ``$…$`` (one line), or as text when it is prose or
    already has ``$``, or (unless ``formula``) has no LaTeX in it."""
    latex = " ".join(str(latex or "").split())
    if not latex:
        return ""
    if "$" in latex or looks_like_prose(latex):
        return latex
    if not formula and not any(ch in latex for ch in "\\^_{}") \
            and not (len(latex) <= 3 and latex.isalpha()):
        return latex  # plain text (or Unicode notation): nothing to typeset
    return f"${latex}$"


def _counts_line(c: Mapping[str, int]) -> str:
    parts = [f"✅ {c['holds']} hold", f"❌ {c['violated']} violated"]
    if c["inconclusive"]:
        parts.append(f"❔ {c['inconclusive']} inconclusive")
    if c["missing"]:
        parts.append(f"⚪ {c['missing']} missing")
    return " · ".join(parts)


def summary_rows(entries: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    rows = []
    for e in entries:
        claim = f"[{e['id']}](#{heading_slug(e['id'])})"
        if (e.get("role") or "confirmation") != "confirmation":
            claim += f" *{e.get('role')}*"
        verdict = _verdict_md(e)
        if e.get("power"):
            verdict += f" · {power_text(e).removeprefix('power: ')}"
        rows.append([claim, paper_result(e), verdict, measured_vs_predicted(e)])
    return rows


def render_markdown(report: Mapping[str, Any]) -> str:
    """The Markdown report (``index.md``) of a report dict built by ``render_entries``."""
    entries = report["entries"]
    meta = report.get("meta") or {}
    figs = report.get("figures") or {}
    c = counts(entries)
    md: list[str] = ["# Rate-check report", ""]
    for title, desc, rc in headline(entries):
        md.append(f"- **{title}** ({desc}): {rc['total']} — {_counts_line(rc)}; "
                  f"{rc['off']} differ from the expected verdict")
    caught, run, unrun = power_counts(entries)
    if run:
        md.append(f"- **Mutants** (each must flip its claim's verdict): {caught} of {run} "
                  f"caught" + (f"; {unrun} claim(s) without mutants run" if unrun else ""))
    else:
        md.append("- **Mutants:** not run (render a store run with `verify --mutants`)")
    md.append("")
    md.append(f"**{c['off']}** of {len(entries)} verdict(s) differ from the expected verdict.")
    md.append("")
    if c["missing"] or c["partial"] or not meta.get("complete", True):
        md.append(f"> **Incomplete run:** {c['missing']} claim(s) missing (no rows in the "
                  f"store), {c['partial']} partial. They are marked below.")
        md.append("")
    md += ["## Summary", ""]
    for paper in papers_in_order(entries):
        group = [e for e in entries if str(e.get("paper") or "") == paper]
        md += [f"### {paper or 'Other claims'}", ""]
        md += _table(["Claim", "Paper, result", "Verdict", "Measured [interval] vs predicted"],
                     summary_rows(group))
        md.append("")
    if figs.get("overview"):
        md += ["## Overview", "",
               "Measured minus predicted slope for every claim, with its bootstrap interval; "
               "the green band is the claim's tolerance.", "",
               f"![Overview: measured − predicted per claim]({figs['overview']})", ""]

    md += ["## Discrepancy ledger", "",
           "Every claim that is violated or inconclusive, with the evidence, the reason and the "
           "readings of the papers it touches.", ""]
    disc = discrepancies(entries)
    if disc:
        md += _table(
            ["Claim", "Verdict", "Expected", "Measured [interval] vs predicted", "Reason",
             "Touches"],
            [[f"[{e['id']}](#{heading_slug(e['id'])})", _verdict_md(e), e.get("expected"),
              measured_vs_predicted(e), e.get("reason") or "—",
              "; ".join(reading_labels(e)) or "—"] for e in disc])
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
    for paper in papers_in_order(entries):
        for role in ROLE_ORDER:
            group = [e for e in entries if str(e.get("paper") or "") == paper
                     and (e.get("role") or "confirmation") == role]
            if not group:
                continue
            md += [f"### {paper or 'Other claims'}: {ROLE_TITLES[role][0].lower()}", ""]
            for e in group:
                md += claim_markdown(e)

    md += coverage_markdown(entries)
    md += ["## Run", ""]
    md += _table(["", ""], meta_rows(meta))
    md.append("")
    return "\n".join(md).rstrip() + "\n"


def coverage_markdown(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    """The coverage counts (``verify.coverage``) of the papers in this report, if any."""
    from bilevel_theory.verify.coverage import coverage  # noqa: PLC0415
    from bilevel_theory.verify.coverage.render import report_lines  # noqa: PLC0415

    papers = {str(e.get("paper") or "") for e in entries}
    return report_lines([a for a in coverage() if a.inventory.paper in papers])


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
    md = [f"#### {e['id']}", "",
          f"{_verdict_md(e)} (expected: {e.get('expected') or 'holds'}) · "
          f"{e.get('role') or 'confirmation'} · {power_text(e)}", ""]
    if e.get("paper") or e.get("source"):
        md += [f"**{e.get('paper', '')}** — {e.get('source', '')}", ""]
    if e.get("statement"):
        md += [f"**Statement:** {_inline_math(e['statement'], formula=True)}", ""]
    if e.get("law_latex"):
        md += ["**Bound:**", ""] + _math(e["law_latex"])
    if e.get("law_derivation"):
        md += [f"*Prediction derived:* {e['law_derivation']}", ""]
    facts = [
        ("Measured [interval] vs predicted", measured_vs_predicted(e)),
        ("Kind", f"`{e.get('kind')}` — {KIND_HELP.get(e.get('kind'), '')}"),
        ("Swept variable", _inline_math(e.get("variable")) or "—"),
        ("Measured quantity", _inline_math(e.get("quantity")) or "—"),
        ("Fit window", window(e)),
    ]
    if e.get("window"):
        facts.append(("Window's reason", window_reason(e)))
        if full_grid_text(e):
            facts.append(("Full grid vs window", full_grid_text(e)))
    facts += [
        ("Schedule", _inline_math(e.get("schedule")) or "—"),
        ("Budget", e.get("budget") or "—"),
        ("Status", e.get("status") or "complete"),
        ("Time", seconds(e.get("seconds"))),
    ]
    md += [f"- **{k}:** {v}" for k, v in facts]
    conditions = condition_lines(e)
    if conditions:
        md.append("- **Theorem's conditions:**")
        md += [f"  - {line}" for line in conditions]
    md.append(f"- **Power:** {power_text(e).removeprefix('power: ')}")
    md += [f"  - {line}" for line in mutant_lines(e)]
    if e.get("touches"):
        md.append("- **Touches:**")
        md += [f"  - {label}" for label in reading_labels(e, full=True)]
    md.append("")
    if e.get("reason"):
        md += [f"**Reason:** {' '.join(str(e['reason']).split())}", ""]
    if e.get("figure"):
        md += [f"![{e['id']}]({e['figure']})", ""]
        others = [f for f in e.get("figure_files") or [] if not f.endswith(".png")]
        if others:
            md += ["Figure as " + ", ".join(f"[{f.rsplit('.', 1)[1].upper()}]({f})"
                                             for f in others) + ".", ""]
    elif e.get("status") == "missing":
        md += ["*No data: this claim has no rows in the store.*", ""]
    return md
