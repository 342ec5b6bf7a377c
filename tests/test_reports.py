"""Reports: Markdown/HTML/PNG/JSON from stored results (synthetic entries and a real store).

What is checked: every claim appears in the summary; every referenced figure exists and is a
valid PNG; the HTML is well formed and fetches nothing remote; a partial store renders with
its missing claims marked; empty, corrupt or absent stores raise an error naming the file (and
exit 2 on the command line); a headless browser renders a non-blank page (where Chromium is
installed).
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
import zlib
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from bilevel_theory.reports import StoreError, render, render_entries
from bilevel_theory.reports.figures import math_label, png_ok
from bilevel_theory.reports.render import cost_table
from click.testing import CliRunner

from bilevel_theory import reports

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}
DEMO = "bilevel_theory.verify.claims.demo:DEMO_CLAIMS"


# ----------------------------------------------------------------------------- synthetic data


def _row(claim, point, x, rep, metrics, budget="smoke"):
    return {"claim": claim, "budget": budget, "point": point, "value": x, "replicate": rep,
            "metrics": metrics, "backend": "numpy", "versions": {"numpy": "2"},
            "config_hash": "h", "seed": 100 + point, "seconds": 0.25}


def _rate_entry(rows, cid, kind, xs, slope, predicted, verdict, *, scale="loglog",
                contrast=None, bound=False, window=None, status="complete", **extra):
    """A summary entry and its rows for a power (or geometric) law with lognormal noise."""
    rng = np.random.default_rng(zlib.crc32(cid.encode()))
    mean, lo, hi, cmean = [], [], [], []
    for p, x in enumerate(xs):
        t = math.log(x) if scale == "loglog" else x
        ys = math.exp(slope * t) * np.exp(rng.normal(0, 0.2, 6))
        cs = 2.0 * np.exp(rng.normal(0, 0.2, 6))
        for r in range(6):
            m = {"value": float(ys[r])}
            if contrast is not None:
                m["contrast"] = float(cs[r])
            if bound:
                m["bound"] = 3 * math.exp(slope * t)
            rows.append(_row(cid, p, x, r, m))
        mean.append(float(ys.mean()))
        lo.append(float(ys.mean() * 0.9))
        hi.append(float(ys.mean() * 1.1))
        cmean.append(float(cs.mean()))
    fit = {"x": list(xs), "mean": mean, "lo": lo, "hi": hi, "slope": slope, "intercept": 0.0,
           "interval": [slope - 0.1, slope + 0.1]}
    cfit = None
    if contrast is not None:
        cfit = {"x": list(xs), "mean": cmean, "lo": [c * 0.9 for c in cmean],
                "hi": [c * 1.1 for c in cmean], "slope": contrast, "intercept": math.log(2),
                "interval": [contrast - 0.1, contrast + 0.1]}
    entry = {
        "id": cid, "paper": "FedMBO 2023", "source": "001_x.txt, Prop. 3 [TEXT]",
        "statement": r"\mathbb{E}\|\bar h - \mathbb{E}\bar h\|^2 \le \frac{C}{n}", "kind": kind,
        "verdict": verdict, "expected": "holds", "measured": slope, "interval": fit["interval"],
        "predicted": predicted, "reason": f"measured slope {slope}", "seconds": 1.5,
        "budget": "smoke", "variable": "n", "quantity": r"\mathbb{E}\|\bar h\|^2",
        "scale": scale, "window": window, "schedule": r"\alpha_k = \sqrt{n/K}",
        "touches": ["[NOTE] FedMBO Prop. 3: sampling with replacement"],
        "law_latex": r"\frac{\sigma^2}{n}", "law_derivation": "leading exponent in n",
        "status": status, "fit": fit, "contrast_fit": cfit, "tolerance": 0.15,
    }
    entry.update(extra)
    return entry


def synthetic():
    """Entries of every kind and status, their rows, cost rows and run metadata."""
    rows: list[dict] = []
    entries = [
        _rate_entry(rows, "syn.matches", "matches", [2, 4, 8, 16, 32], -1.0, -1.0, "holds"),
        _rate_entry(rows, "syn.at_most", "at_most", [10, 20, 40, 80], -0.3, -0.5, "violated",
                    expected="violated", reason="decays as K^-0.3, slower than K^-1/2"),
        _rate_entry(rows, "syn.geometric", "geometric", [1, 2, 4, 6, 8], -0.2, -0.2, "holds",
                    scale="semilog", window=[2, 8]),
        _rate_entry(rows, "syn.contrast", "contrast", [2, 4, 8, 16], -1.0, -1.0, "holds",
                    contrast=0.0),
        _rate_entry(rows, "syn.bounded", "bounded_by", [1, 10, 100], -1.0, None, "holds",
                    bound=True),
        _rate_entry(rows, "syn.partial", "matches", [2, 4], -1.0, -1.0, "inconclusive",
                    status="partial", reason="interval too wide (2 of 5 points)"),
    ]
    for p, n in enumerate([1, 2, 5]):
        for r in range(2):
            rows.append(_row("syn.exact", p, n, r, {"value": 6.0 + n + 3}))
    entries.append({"id": "syn.exact", "kind": "exact", "verdict": "holds", "measured": 10.0,
                    "interval": [10.0, 10.0], "predicted": 10.0, "scale": "linear",
                    "variable": "N", "quantity": "rounds per epoch", "statement": "2T+N+3",
                    "details": {"predicted_x": [1, 2, 5], "predicted_per_point": [10, 11, 14]},
                    "fit": None, "status": "complete"})
    entries.append({"id": "syn.missing", "kind": "matches", "verdict": "inconclusive",
                    "status": "missing", "reason": "not run", "predicted": -0.5,
                    "measured": None, "interval": [None, None], "fit": None})
    # rows of a claim the summary does not know (must still be reported)
    rows.append(_row("syn.orphan", 0, 1.0, 0, {"value": 1.0}))
    for alg, rounds, reached in [("fedmbo", 120, 4), ("fednest", 300, 2)]:
        for r in range(4):
            ok = r < reached
            rows.append(_row(f"costs.{alg}", 0, 0.0, r, {
                "rounds_to_target": float(rounds + r) if ok else math.inf,
                "grad_calls_to_target": 20.0 * rounds if ok else math.inf,
                "hvp_calls_to_target": 5.0 * rounds if ok else math.inf,
                "jvp_calls_to_target": 1.0 * rounds if ok else math.inf,
                "reached": 1.0 if ok else 0.0, "target": 1e-3}))
    meta = {"date": "2026-01-01T00:00:00+00:00", "version": "0.1.0", "backend": "numpy",
            "budget": "smoke", "seed": 0, "machine": "test", "python": "3.11", "numpy": "2",
            "runtime": 12.5, "complete": True}
    return entries, meta, rows


@pytest.fixture(scope="module")
def synthetic_report(tmp_path_factory):
    entries, meta, rows = synthetic()
    out = tmp_path_factory.mktemp("syn") / "report"
    index = render_entries(entries, meta, rows, out)
    return entries, out, index


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory):
    """A real results store: the demo claims (every kind) run at smoke budget (~4 s)."""
    from bilevel_theory import verify  # noqa: PLC0415

    out = tmp_path_factory.mktemp("demo") / "results"
    verify.run_suite("demo.*", budget="smoke", out=out, catalogue=DEMO, progress=False,
                     n_boot=200)
    return out


# ----------------------------------------------------------------------------- helpers


class _Balance(HTMLParser):
    """Checks that every non-void element is closed, in order."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.attrs: list[tuple[str, str, str | None]] = []

    def handle_starttag(self, tag, attrs):
        self.attrs += [(tag, k, v) for k, v in attrs]
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.attrs += [(tag, k, v) for k, v in attrs]

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}> "
                               f"at {self.getpos()}")
        else:
            self.stack.pop()


def _check_html(path: Path) -> _Balance:
    text = path.read_text(encoding="utf-8")
    parser = _Balance()
    parser.feed(text)
    parser.close()
    assert not parser.errors, parser.errors[:5]
    assert not parser.stack, f"unclosed elements: {parser.stack}"
    ET.fromstring(text)  # XHTML-compatible: parses as XML too
    for tag, key, value in parser.attrs:
        if key in ("src", "href", "srcset", "poster", "action", "data"):
            v = (value or "").strip().lower()
            assert not v.startswith(("http:", "https:", "//", "ftp:", "file:")), \
                f"<{tag} {key}={value[:60]!r}> references a remote resource"
            assert v.startswith(("data:image/png;base64,", "#")), f"<{tag} {key}={value[:60]!r}>"
    lowered = text.lower()
    for forbidden in ("<script", "<link", "@import", "url(", "<iframe", "<object"):
        assert forbidden not in lowered, f"HTML contains {forbidden!r}"
    return parser


def _figure_refs(md_text: str) -> list[str]:
    return re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md_text)


def _assert_png(path: Path) -> None:
    assert path.is_file(), path
    assert path.read_bytes()[:8] == PNG_SIGNATURE, path
    assert png_ok(path), path
    from matplotlib.image import imread  # noqa: PLC0415

    img = imread(path)
    assert img.shape[0] > 100 and img.shape[1] > 100
    assert float(np.var(img)) > 0, f"{path} is blank"


# ----------------------------------------------------------------------------- synthetic


def test_every_claim_in_summary_and_sections(synthetic_report):
    entries, out, _ = synthetic_report
    md = (out / "index.md").read_text(encoding="utf-8")
    html = (out / "index.html").read_text(encoding="utf-8")
    summary_md = md.split("## Summary", 1)[1].split("## Discrepancy ledger", 1)[0]
    summary_html = html.split('id="summary"', 1)[1].split('id="ledger"', 1)[0]
    ids = [e["id"] for e in entries] + ["syn.orphan"]
    for cid in ids:
        assert f"[{cid}]" in summary_md, cid
        assert f"### {cid}" in md, cid
        paper, name = cid.split(".", 1)
        assert f"{paper}.<wbr />{name}" in summary_html, cid
        assert f'id="claim-{cid}"' in html, cid
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert {e["id"] for e in report["entries"]} == set(ids)


def test_figures_exist_and_are_png(synthetic_report):
    entries, out, _ = synthetic_report
    md = (out / "index.md").read_text(encoding="utf-8")
    refs = _figure_refs(md)
    assert "figures/overview.png" in refs
    # one figure per claim with data; the missing claim has none
    assert len(refs) == 1 + len(entries) + 1 - 1
    for ref in refs:
        assert not ref.startswith(("http", "/")), ref
        _assert_png(out / ref)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    for rel in report["figures"].values():
        _assert_png(out / rel)
    assert sorted(p.name for p in (out / "figures").iterdir()) == \
        sorted(Path(r).name for r in refs)


def test_html_well_formed_and_offline(synthetic_report):
    _, out, index = synthetic_report
    assert index == out / "index.html"
    parser = _check_html(index)
    images = [v for tag, k, v in parser.attrs if tag == "img" and k == "src"]
    # overview + one figure per claim with data + typeset equations
    assert len(images) >= 8
    text = index.read_text(encoding="utf-8")
    assert "syn.missing" in text and "missing (not run)" in text


def test_report_json_is_strict(synthetic_report):
    _, out, _ = synthetic_report

    def no_constants(name):
        raise AssertionError(f"non-strict JSON constant {name}")

    report = json.loads((out / "report.json").read_text(encoding="utf-8"),
                        parse_constant=no_constants)
    assert set(report) >= {"meta", "entries", "costs", "figures", "missing", "partial"}
    assert report["missing"] == ["syn.missing"]
    assert set(report["partial"]) == {"syn.partial", "syn.orphan"}
    assert report["meta"]["budget"] == "smoke"


def test_discrepancy_ledger_lists_non_holding_claims(synthetic_report):
    _, out, _ = synthetic_report
    md = (out / "index.md").read_text(encoding="utf-8")
    ledger = md.split("## Discrepancy ledger", 1)[1].split("## Communication", 1)[0]
    for cid in ("syn.at_most", "syn.partial", "syn.orphan"):
        assert f"[{cid}]" in ledger
    for cid in ("syn.matches", "syn.geometric", "syn.exact"):
        assert f"[{cid}]" not in ledger
    assert "decays as K^-0.3" in ledger
    assert "[NOTE] FedMBO Prop. 3" in ledger
    assert "### Missing claims" in ledger and "`syn.missing`" in ledger


def test_cost_table_medians_over_reached_replicates(synthetic_report):
    _, out, _ = synthetic_report
    _, _, rows = synthetic()
    table = {c["algorithm"]: c for c in cost_table(rows)}
    assert set(table) == {"fedmbo", "fednest"}
    assert table["fedmbo"]["reached"] == 4 and table["fedmbo"]["replicates"] == 4
    assert table["fedmbo"]["rounds_to_target"] == pytest.approx(121.5)
    assert table["fednest"]["reached"] == 2
    assert table["fednest"]["rounds_to_target"] == pytest.approx(300.5)  # inf excluded
    md = (out / "index.md").read_text(encoding="utf-8")
    costs = md.split("## Communication and oracle cost", 1)[1].split("## Claims", 1)[0]
    assert "| fednest |" in costs and "2/4" in costs and "4/4" in costs


def test_no_costs_says_so(tmp_path):
    entries, meta, rows = synthetic()
    rows = [r for r in rows if not r["claim"].startswith("costs.")]
    render_entries(entries[:1], meta, [r for r in rows if r["claim"] == "syn.matches"],
                   tmp_path / "r")
    md = (tmp_path / "r" / "index.md").read_text(encoding="utf-8")
    assert "No cost measurements" in md


def test_generated_files_never_inside_a_package(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    entries, meta, rows = synthetic()
    with pytest.raises(ValueError, match="package"):
        render_entries(entries[:1], meta, rows, tmp_path / "pkg" / "report")


def test_math_label_falls_back_to_plain_text():
    assert math_label("n") == "$n$"
    assert math_label(r"\bar\tau") == r"$\bar\tau$"
    assert math_label(r"\|x\| \le 1") == r"$\|x\| \leq 1$"  # \le rewritten for mathtext
    bad = r"\notacommand{x}"
    assert "$" not in math_label(bad).replace(r"\$", "")
    assert math_label("rounds per epoch") == "rounds per epoch"


def test_figure_fonts_readable():
    from bilevel_theory.reports.figures import _rc  # noqa: PLC0415

    sizes = [v for k, v in _rc().items() if "size" in k]
    assert min(sizes) >= 9


# ----------------------------------------------------------------------------- real store


def test_end_to_end_store_to_report(demo_store, tmp_path):
    """``bilevel-theory report RESULTS --out DIR`` on a real store."""
    from bilevel_theory import verify  # noqa: PLC0415

    result = _cli(["report", str(demo_store), "--out", str(tmp_path / "report")])
    assert result.exit_code == 0, result.output
    out = tmp_path / "report"
    index = out / "index.html"
    assert str(index) in result.output
    _check_html(index)
    md = (out / "index.md").read_text(encoding="utf-8")
    ids = {e["id"] for e in verify.summarize(demo_store, catalogue=DEMO, n_boot=100)}
    assert len(ids) >= 6
    for cid in ids:
        assert f"[{cid}]" in md, cid
    for ref in _figure_refs(md):
        _assert_png(out / ref)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["meta"]["complete"] is True
    assert report["meta"]["version"]  # package_version mapped
    assert "Runtime" in md and "Backend" in md


def test_partial_store_marks_missing_claims(demo_store, tmp_path):
    """An interrupted run: one claim has no rows, another only its first points."""
    results = tmp_path / "results"
    results.mkdir()
    shutil.copy(demo_store / "run.json", results / "run.json")  # catalogue, as at start
    kept = []
    for line in (demo_store / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["claim"] == "demo.geometric_bias":
            continue
        if row["claim"] == "demo.variance_vs_n" and row["point"] >= 3:
            continue
        kept.append(line)
    (results / "results.jsonl").write_text("\n".join(kept) + "\n")
    from bilevel_theory.reports.commands import render_hook  # noqa: PLC0415  (what `verify --report` calls)

    index = render_hook(results, tmp_path / "report")
    report = json.loads((index.parent / "report.json").read_text(encoding="utf-8"))
    assert "demo.geometric_bias" in report["missing"]
    assert "demo.variance_vs_n" in report["partial"]
    md = (index.parent / "index.md").read_text(encoding="utf-8")
    assert "Incomplete run" in md
    assert "missing (not run)" in md
    row = next(line for line in md.splitlines() if line.startswith("| ") and
               "[demo.geometric_bias]" in line)
    assert "missing" in row
    _check_html(index)


@pytest.mark.parametrize("case", ["absent", "empty", "blank", "corrupt", "not_rows"])
def test_bad_store_error_names_the_file(tmp_path, case):
    results = tmp_path / "results"
    results.mkdir()
    store = results / "results.jsonl"
    if case == "empty":
        store.write_text("")
    elif case == "blank":
        store.write_text("\n")
    elif case == "corrupt":
        store.write_text(json.dumps(_row("a.b", 0, 1.0, 0, {"value": 1.0})) + "\n{oops\n")
    elif case == "not_rows":
        store.write_text("[1, 2]\n")
    with pytest.raises(StoreError) as info:
        render(results, tmp_path / "report")
    assert isinstance(info.value, ValueError)
    assert str(store) in str(info.value)
    assert not (tmp_path / "report" / "index.html").exists()


def test_missing_results_dir(tmp_path):
    with pytest.raises(StoreError, match="not found"):
        render(tmp_path / "nope", tmp_path / "report")


# ----------------------------------------------------------------------------- CLI


def _cli(args):
    from bilevel_theory.reports.cli import main  # noqa: PLC0415

    return CliRunner().invoke(main, args)


@pytest.mark.parametrize("case", ["absent", "empty", "corrupt"])
def test_cli_bad_store_exit_2(tmp_path, case):
    results = tmp_path / "results"
    results.mkdir()
    if case == "empty":
        (results / "results.jsonl").write_text("")
    elif case == "corrupt":
        (results / "results.jsonl").write_text("not json\n")
    result = _cli(["report", str(results), "--out", str(tmp_path / "rep")])
    assert result.exit_code == 2
    out = result.output.strip()
    assert len(out.splitlines()) == 1, out
    assert out.startswith("error:") and "results.jsonl" in out
    assert "Traceback" not in out


def test_public_api():
    assert callable(reports.render) and callable(reports.render_entries)
    assert issubclass(reports.StoreError, ValueError)


# ----------------------------------------------------------------------------- browser


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                    "(.ci/install-chromium.sh installs Debian's)")
def test_headless_browser_renders_page(synthetic_report, tmp_path):
    _, _, index = synthetic_report
    shot = tmp_path / "shot.png"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}",
           f"--screenshot={shot}", "--window-size=1280,2000", index.resolve().as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
    assert shot.is_file(), proc.stderr[-2000:]
    _assert_png(shot)
    from matplotlib.image import imread  # noqa: PLC0415

    img = imread(shot)[..., :3]
    assert img.shape[:2] == (2000, 1280)
    nonwhite = np.any(img < 0.95, axis=-1)
    assert nonwhite.mean() > 0.02, "page is (nearly) blank"
    # the inline CSS applied: the green verdict badges are drawn
    green = np.all(np.abs(img - np.array([0x1a, 0x98, 0x50]) / 255) < 0.04, axis=-1)
    assert green.sum() > 50, "no verdict badge pixels: CSS not applied?"
    # the lower half (summary table, overview figure) is not empty either
    assert nonwhite[1000:].mean() > 0.02


def test_cost_table_uses_latest_run_only():
    rows = []
    for base_seed, rounds in ((0, 100.0), (1, 200.0)):
        for r in range(3):
            row = _row("costs.memfbo", 0, 0.01, r, {"rounds_to_target": rounds + r,
                                                     "reached": 1.0, "target": 0.01,
                                                     "final_stationarity": 1e-3})
            row["base_seed"] = base_seed
            rows.append(row)
    (item,) = cost_table(rows)
    assert item["replicates"] == 3 and item["reached"] == 3
    assert item["rounds_to_target"] == 201.0
    assert item["grad_calls_to_target"] is None  # not measured: '—' in the table
    assert item["final_stationarity"] == pytest.approx(1e-3)
