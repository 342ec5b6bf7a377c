"""``index.html``: one page (inline CSS) beside its ``figures/`` folder, which it links (each
figure once, by a relative path: the report folder is what to copy or archive).

The verdicts come first: headline counts by role, then a compact summary grouped by paper
(``claim | paper, result | verdict | measured [interval] vs predicted``) that fits a
1280 px window without horizontal scrolling; the run's metadata comes last.

Nothing is fetched from anywhere: no scripts, fonts or stylesheets from the network. LaTeX is
shown as MathML text (``latex2mathml``; browsers typeset it natively), or as an embedded
matplotlib mathtext image where the converter fails, always with the LaTeX source as code text
next to it. The markup is XHTML-compatible (every element closed,
attributes quoted, only XML's predefined entities) so it also parses as XML.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from . import markdown as md
from .figures import VERDICT_COLORS, latex_png, looks_like_prose

SUMMARY_COLUMNS = ("Claim", "Paper, result", "Verdict", "Measured [interval] vs predicted")

CSS = """
body { font-family: -apple-system, "Segoe UI", "DejaVu Sans", Helvetica, Arial, sans-serif;
       margin: 0 auto; max-width: 1180px; padding: 1em 1.5em 4em; color: #1b1b1b;
       line-height: 1.45; font-size: 15px; }
h1 { border-bottom: 2px solid #444; padding-bottom: .2em; }
h2 { border-bottom: 1px solid #bbb; padding-bottom: .15em; margin-top: 2em; }
h3 { margin-top: 1.6em; }
h4 { margin: .2em 0; font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace;
     font-size: 15px; overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: .6em 0 1.2em; font-size: 13px; }
.src { overflow-wrap: anywhere; }
table.wide { width: 100%; }
table.summary { width: 100%; table-layout: fixed; }
table.summary col.c-id { width: 30%; }
table.summary col.c-paper { width: 30%; }
table.summary col.c-verdict { width: 17%; }
table.summary col.c-meas { width: 23%; }
td { overflow-wrap: anywhere; }
td.id code { overflow-wrap: anywhere; }
.role { color: #555; font-style: italic; font-size: 12px; }
ul.counts { margin: .4em 0 .8em; padding-left: 1.2em; }
ul.counts li { margin: .15em 0; }
ul.mutants { margin: .2em 0; padding-left: 1.2em; }
.caught { color: #1a9850; font-weight: bold; }
.missed { color: #d73027; font-weight: bold; }
th, td { border: 1px solid #c8c8c8; padding: .3em .55em; vertical-align: top; text-align: left; }
th { background: #eef0f3; position: sticky; top: 0; }
tr:nth-child(even) td { background: #fafafa; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
code { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12.5px;
       background: #f3f3f3; padding: 0 .2em; border-radius: 3px; overflow-wrap: anywhere; }
td.stmt code { font-size: 12px; }
.verdict { font-weight: bold; padding: .1em .45em; border-radius: 4px;
           color: #fff; display: inline-block; }
.v-holds { background: #1a9850; }
.v-violated { background: #d73027; }
.v-inconclusive { background: #6f6f6f; }
.v-missing { background: #b0b0b0; color: #222; }
.v-zero { background: #e8e8e8; color: #555; }
.off { color: #b35806; font-weight: bold; font-size: 12.5px; }
.banner { padding: .6em 1em; border-radius: 6px; background: #f4f6f8; border: 1px solid #ccd;
          margin: .8em 0; }
.warn { background: #fff4e0; border-color: #e0a040; }
.claim { border-left: 5px solid #ccc; padding: .1em 1em .6em; margin: 1.5em 0; }
.claim.c-holds { border-color: #1a9850; }
.claim.c-violated { border-color: #d73027; }
.claim.c-inconclusive { border-color: #6f6f6f; }
.claim.c-missing { border-color: #b0b0b0; }
.eq { margin: .3em 0 .1em; }
.eq img { max-width: 100%; height: auto; }
.latex { display: block; margin: .1em 0 .6em; color: #555; }
dl.facts { display: grid; grid-template-columns: minmax(7em, max-content) 1fr; gap: .15em 1em;
           margin: .6em 0; }
dl.facts dt { font-weight: bold; color: #444; }
dl.facts dd { margin: 0; }
img.fig { max-width: 100%; width: 580px; height: auto; border: 1px solid #ddd; }
.claim-body { display: flex; flex-wrap: wrap; gap: 1em 2em; align-items: flex-start; }
.claim-text { flex: 1 1 420px; min-width: 0; }
.claim-fig { flex: 0 1 580px; }
img.overview { max-width: 100%; width: 880px; height: auto; border: 1px solid #ddd; }
nav a { margin-right: 1em; }
.small { color: #555; font-size: 13px; }
"""


def _e(text: Any) -> str:
    return escape("" if text is None else str(text), quote=True)


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _img(path: Path, alt: str, cls: str, out_dir: Path) -> str:
    """A figure of the report, linked by its path relative to the page (``figures/…``)."""
    rel = path.resolve().relative_to(out_dir.resolve()).as_posix()
    return f'<img class="{cls}" alt="{_e(alt)}" src="{_e(rel)}" />'


def anchor(claim_id: str) -> str:
    return "claim-" + "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in claim_id)


def _id_link(claim_id: str) -> str:
    """A link to the claim's section; the id may break after its paper prefix only."""
    text = ".<wbr />".join(_e(part) for part in claim_id.split(".", 1))
    return f'<a href="#{anchor(claim_id)}"><code>{text}</code></a>'


def _verdict(e: Mapping[str, Any]) -> str:
    v = e.get("verdict") if e.get("status") != "missing" else None
    cls = f"v-{v}" if v in VERDICT_COLORS else "v-missing"
    out = f'<span class="verdict {cls}">{_e(md.verdict_text(e))}</span>'
    if md.off_expectation(e):
        out += ' <span class="off">⚠ differs from expected</span>'
    return out


def _table(header: Sequence[str], rows: Sequence[Sequence[str]],
           num_cols: Sequence[int] = (), classes: Mapping[int, str] | None = None,
           wide: bool = False) -> str:
    """A table; cells are HTML already (escape before)."""
    classes = dict(classes or {})
    for i in num_cols:
        classes[i] = "num"
    out = ['<table class="wide">' if wide else "<table>", "<thead><tr>" + "".join(f"<th>{h}</th>" for h in header) + "</tr></thead>",
           "<tbody>"]
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            cls = f' class="{classes[i]}"' if i in classes else ""
            cells.append(f"<td{cls}>{cell}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _size(png: bytes) -> str:
    """``width``/``height`` attributes showing a mathtext PNG (made at 120 dpi) at text size."""
    if png[:8] != b"\x89PNG\r\n\x1a\n" or len(png) < 24:
        return ""
    w, h = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    scale = 96 / 120
    return f'width="{max(1, round(w * scale))}" height="{max(1, round(h * scale))}" '


def _measured_cell(e: Mapping[str, Any]) -> str:
    if e.get("measured") is None:
        return f"— vs {_e(md.predicted(e))}"
    iv = md.interval(e.get("interval"))
    out = _e(md.num(e["measured"]))
    out += f' <span class="small">{_e(iv)}</span>' if iv else ""
    return out + f"<br />vs {_e(md.predicted(e))}"


def _summary_table(entries: Sequence[Mapping[str, Any]]) -> str:
    """The compact summary of one paper's claims (fixed column widths: never wider than the
    page)."""
    h = ['<table class="summary">',
         '<colgroup><col class="c-id" /><col class="c-paper" /><col class="c-verdict" />'
         '<col class="c-meas" /></colgroup>',
         "<thead><tr>" + "".join(f"<th>{_e(c)}</th>" for c in SUMMARY_COLUMNS)
         + "</tr></thead>", "<tbody>"]
    for e in entries:
        role = e.get("role") or "confirmation"
        claim = _id_link(e["id"])
        if role != "confirmation":
            claim += f' <span class="role">{_e(role)}</span>'
        verdict = _verdict(e)
        if e.get("power"):
            verdict += f'<br /><span class="small">{_e(md.power_text(e))}</span>'
        h.append(f'<tr><td class="id">{claim}</td><td>{_e(md.paper_result(e))}</td>'
                 f"<td>{verdict}</td><td>{_measured_cell(e)}</td></tr>")
    h.append("</tbody></table>")
    return "\n".join(h)


def _latex(latex: str) -> str:
    """An equation: a mathtext image when possible, and its LaTeX source as code."""
    latex = (latex or "").strip()
    if not latex:
        return ""
    if looks_like_prose(latex):
        return f"<p>{_e(latex)}</p>"
    mathml = _mathml(latex)
    if mathml:
        return f'<div class="eq">{mathml}</div><code class="latex">{_e(latex)}</code>'
    png = latex_png(latex)
    img = (f'<div class="eq"><img {_size(png)}alt="{_e(latex)}" src="{data_uri(png)}" /></div>'
           if png else "")
    return f'{img}<code class="latex">{_e(latex)}</code>'


def _mathml(latex: str) -> str:
    """``latex`` as MathML (``""`` where ``latex2mathml`` cannot convert it)."""
    from latex2mathml.converter import convert  # noqa: PLC0415

    try:
        return convert(latex)
    except Exception:  # noqa: BLE001 - any parse failure falls back to the image
        return ""


def _headline(entries: Sequence[Mapping[str, Any]]) -> str:
    items = []
    for title, desc, c in md.headline(entries):
        badges = []
        for key, label in (("holds", "hold"), ("violated", "violated")):
            cls = f"v-{key}" if c[key] else "v-zero"
            badges.append(f'<span class="verdict {cls}">{c[key]} {label}</span>')
        if c["inconclusive"]:
            badges.append(f'<span class="verdict v-inconclusive">{c["inconclusive"]} '
                          "inconclusive</span>")
        if c["missing"]:
            badges.append(f'<span class="verdict v-missing">{c["missing"]} missing</span>')
        items.append(f"<li><b>{_e(title)}</b> <span class=\"small\">({_e(desc)})</span>: "
                     f"{c['total']} — {' '.join(badges)}; {c['off']} differ from the expected "
                     "verdict</li>")
    caught, run, unrun = md.power_counts(entries)
    if run:
        items.append(f"<li><b>Mutants</b> <span class=\"small\">(each must flip its claim's "
                     f"verdict)</span>: {caught} of {run} caught"
                     + (f"; {unrun} claim(s) without mutants run" if unrun else "") + "</li>")
    else:
        items.append("<li><b>Mutants:</b> not run (render a store run with "
                     "<code>verify --mutants</code>)</li>")
    return '<ul class="counts">' + "".join(items) + "</ul>"


def render_html(report: Mapping[str, Any], out_dir: Path) -> str:
    """The self-contained HTML page of a report dict built by ``render_entries``."""
    entries = report["entries"]
    meta = report.get("meta") or {}
    figs = report.get("figures") or {}
    c = md.counts(entries)
    h: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8" />',
        '<meta name="viewport" content="width=device-width, initial-scale=1" />',
        "<title>Rate-check report</title>",
        f"<style>{CSS}</style>",
        "</head>",
        "<body>",
        "<h1>Rate-check report</h1>",
        '<nav class="small"><a href="#summary">Summary</a><a href="#overview">Overview</a>'
        '<a href="#ledger">Discrepancy ledger</a><a href="#costs">Costs</a>'
        '<a href="#claims">Claims</a><a href="#run">Run</a></nav>',
        _headline(entries),
        f'<p class="banner"><b>{c["off"]}</b> of {len(entries)} verdict(s) differ from the '
        "expected verdict.</p>",
    ]
    if c["missing"] or c["partial"] or not meta.get("complete", True):
        h.append(f'<p class="banner warn"><b>Incomplete run:</b> {c["missing"]} claim(s) '
                 f'missing (no rows in the store), {c["partial"]} partial. They are marked '
                 "below.</p>")

    h.append('<h2 id="summary">Summary</h2>')
    for paper in md.papers_in_order(entries):
        group = [e for e in entries if str(e.get("paper") or "") == paper]
        h.append(f"<h3>{_e(paper or 'Other claims')}</h3>")
        h.append(_summary_table(group))

    h.append('<h2 id="overview">Overview</h2>')
    if figs.get("overview"):
        h.append('<p class="small">Measured minus predicted slope for every claim, with its '
                 "bootstrap interval, coloured by verdict; the green band is the claim's "
                 "tolerance (for upper bounds, everything below +tolerance).</p>")
        h.append(_img(out_dir / figs["overview"], "Overview: measured − predicted per claim",
                      "overview", out_dir))

    h.append('<h2 id="ledger">Discrepancy ledger</h2>')
    h.append('<p class="small">Every claim that is violated or inconclusive, with the '
             "evidence, the reason and the readings of the papers it touches.</p>")
    disc = md.discrepancies(entries)
    if disc:
        h.append(_table(
            ["Claim", "Verdict", "Expected", "Measured [interval] vs predicted", "Reason",
             "Touches"],
            [[_id_link(e["id"]), _verdict(e),
              _e(e.get("expected")),
              _e(md.measured_vs_predicted(e)), _e(e.get("reason") or "—"),
              "<br />".join(_e(t) for t in md.reading_labels(e)) or "—"] for e in disc],
            classes={0: "id"}, wide=True))
    else:
        h.append("<p>No claim is violated or inconclusive.</p>")
    missing = [e for e in entries if e.get("status") == "missing"]
    if missing:
        h.append("<h3>Missing claims</h3><p>No rows in the store (the run stopped before them): "
                 + ", ".join(f"<code>{_e(e['id'])}</code>" for e in missing) + ".</p>")

    h.append('<h2 id="costs">Communication and oracle cost</h2>')
    h.append(_costs(report.get("costs") or []))

    h.append('<h2 id="claims">Claims</h2>')
    for paper in md.papers_in_order(entries):
        for role in md.ROLE_ORDER:
            group = [e for e in entries if str(e.get("paper") or "") == paper
                     and (e.get("role") or "confirmation") == role]
            if not group:
                continue
            h.append(f"<h3>{_e(paper or 'Other claims')}: "
                     f"{_e(md.ROLE_TITLES[role][0].lower())}</h3>")
            for e in group:
                h.append(_claim(e, out_dir))

    h.append('<h2 id="run">Run</h2>')
    h.append(_table(["Field", "Value"], [[_e(k), _e(v)] for k, v in md.meta_rows(meta)]))
    h += ["</body>", "</html>", ""]
    return "\n".join(h)


def _costs(costs: Sequence[Mapping[str, Any]]) -> str:
    if not costs:
        return "<p>No cost measurements (<code>costs.*</code> rows) in the store.</p>"
    budgets = {c.get("budget") for c in costs}
    final = any("final_stationarity" in c for c in costs)
    header = ["Algorithm"] + (["Budget"] if len(budgets) > 1 else []) + \
        ["Reached target", "Target"] + [label for _, label in md.COST_COLUMNS] + \
        ([md.FINAL_LABEL] if final else [])
    rows = []
    for c in costs:
        row = [f"<code>{_e(c['algorithm'])}</code>"]
        row += [_e(c.get("budget") or "—")] if len(budgets) > 1 else []
        row += [_e(f"{c['reached']}/{c['replicates']}"), _e(md.num(c.get("target")))]
        row += [_e(md.count(c.get(k))) for k, _ in md.COST_COLUMNS]
        row += [_e(md.num(c.get("final_stationarity")))] if final else []
        rows.append(row)
    first = 2 if len(budgets) > 1 else 1
    return (f'<p class="small">{_e(md.COST_NOTE)}</p>'
            + _table(header, rows, num_cols=tuple(range(first, len(header)))))


def _claim(e: Mapping[str, Any], out_dir: Path) -> str:
    v = e.get("verdict") if e.get("status") != "missing" else None
    cls = f"c-{v}" if v in VERDICT_COLORS else "c-missing"
    h = [f'<section class="claim {cls}" id="{anchor(e["id"])}">',
         f"<h4>{_e(e['id'])}</h4>",
         f"<p>{_verdict(e)} <span class=\"small\">expected: {_e(e.get('expected') or 'holds')}"
         f" · {_e(e.get('role') or 'confirmation')} · {_e(md.power_text(e))}</span></p>"]
    h.append('<div class="claim-body"><div class="claim-text">')
    if e.get("paper") or e.get("source"):
        h.append(f"<p><b>{_e(e.get('paper'))}</b> — {_e(e.get('source'))}</p>")
    if e.get("statement"):
        h.append("<p><b>Statement</b></p>" + _latex(e["statement"]))
    if e.get("law_latex"):
        h.append("<p><b>Bound</b></p>" + _latex(e["law_latex"]))
    facts = [
        ("Measured [interval] vs predicted", _e(md.measured_vs_predicted(e))),
        ("Prediction derived", _e(e.get("law_derivation") or "—")),
        ("Kind", f"<code>{_e(e.get('kind'))}</code> — {_e(md.KIND_HELP.get(e.get('kind'), ''))}"),
        ("Swept variable", f"<code>{_e(e.get('variable'))}</code>" if e.get("variable") else "—"),
        ("Measured quantity", f"<code>{_e(e.get('quantity'))}</code>"
         if e.get("quantity") else "—"),
        ("Fit window", _e(md.window(e))),
    ]
    if e.get("window"):
        facts.append(("Window's reason", _e(md.window_reason(e))))
        if md.full_grid_text(e):
            facts.append(("Full grid vs window", _e(md.full_grid_text(e))))
    conditions = md.condition_lines(e)
    if conditions:
        facts.append(("Theorem's conditions", '<ul class="mutants">' + "".join(
            f"<li>{_e(line)}</li>" for line in conditions) + "</ul>"))
    power = _e(md.power_text(e).removeprefix("power: "))
    lines = md.mutant_lines(e)
    if lines:
        marks = ['<span class="caught">✓</span>' if p.get("caught") else
                 '<span class="missed">✗</span>' for p in e.get("power") or []]
        power += '<ul class="mutants">' + "".join(
            f"<li>{mark} {_e(line)}</li>" for mark, line in zip(marks, lines)) + "</ul>"
    facts += [
        ("Power", power),
        ("Schedule", _e(e.get("schedule") or "—")),
        ("Budget", _e(e.get("budget") or "—")),
        ("Status", _e(e.get("status") or "complete")),
        ("Time", _e(md.seconds(e.get("seconds")))),
        ("Reason", _e(e.get("reason") or "—")),
        ("Touches", "<br />".join(_e(t) for t in md.reading_labels(e, full=True)) or "—"),
    ]
    h.append('<dl class="facts">' + "".join(f"<dt>{k}</dt><dd>{val}</dd>" for k, val in facts)
             + "</dl></div>")
    if e.get("figure"):
        h.append('<div class="claim-fig">'
                 + _img(out_dir / e["figure"], f"figure of {e['id']}", "fig", out_dir)
                 + "</div>")
    elif e.get("status") == "missing":
        h.append('<div class="claim-fig"><p><i>No data: this claim has no rows in the store.'
                 "</i></p></div>")
    h.append("</div></section>")
    return "\n".join(h)
