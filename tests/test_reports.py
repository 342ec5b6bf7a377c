"""Reports: Markdown/HTML/figures/JSON from stored results (synthetic entries and a real store).

What is checked: every claim appears in the summary, grouped by paper and role, mutants folded
into their claim's power; every referenced figure exists and is a valid PNG, PDF figures are
vector (no embedded raster image) and SVG figures parse as XML; ``plot_claim`` draws into a
given Axes without touching global rc state; the HTML is well formed, fetches nothing remote
and its summary is not clipped at 1280 px; a partial store renders with its missing claims
marked; empty, corrupt or absent stores raise an error naming the file (and exit 2 on the
command line); a headless browser renders a non-blank page (where Chromium is installed).
"""

from __future__ import annotations

import io
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
from click.testing import CliRunner

from bilevel_theory import reports
from bilevel_theory.reports import StoreError, render, render_entries
from bilevel_theory.reports.figures import math_label, png_ok
from bilevel_theory.reports.render import cost_table

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
        "id": cid, "paper": "FedMBO 2023", "source": "Yang et al., NeurIPS 2023, Prop. 3",
        "statement": r"\mathbb{E}\|\bar h - \mathbb{E}\bar h\|^2 \le \frac{C}{n}", "kind": kind,
        "verdict": verdict, "expected": "holds", "measured": slope, "interval": fit["interval"],
        "predicted": predicted, "reason": f"measured slope {slope}", "seconds": 1.5,
        "budget": "smoke", "variable": "n", "quantity": r"\mathbb{E}\|\bar h\|^2",
        "scale": scale, "window": window, "schedule": r"\alpha_k = \sqrt{n/K}",
        "touches": ["FEDMBO-R1: sampling with replacement"],
        "law_latex": r"\frac{\sigma^2}{n}", "law_derivation": "leading exponent in n",
        "status": status, "fit": fit, "contrast_fit": cfit, "tolerance": 0.15,
    }
    entry.update(extra)
    return entry


def synthetic():
    """Entries of every kind and status, their rows, cost rows and run metadata."""
    rows: list[dict] = []
    entries = [
        _rate_entry(rows, "syn.matches", "matches", [2, 4, 8, 16, 32], -1.0, -1.0, "holds",
                    role="confirmation",
                    mutants=[{"name": "not_averaged", "change": "noise not averaged"},
                             {"name": "sqrt_n", "change": "noise scaled by sqrt(n)"}]),
        _rate_entry(rows, "syn.at_most", "at_most", [10, 20, 40, 80], -0.3, -0.5, "violated",
                    expected="violated", reason="decays as K^-0.3, slower than K^-1/2",
                    role="finding", mutants=[{"name": "repair", "change": "averaged noise"}],
                    power=[{"mutant": "repair", "change": "averaged noise", "verdict": "holds",
                            "required": "holds", "caught": True, "measured": -0.52,
                            "interval": [-0.6, -0.45], "reason": "slope -0.52"}]),
        _rate_entry(rows, "syn.geometric", "geometric", [1, 2, 4, 6, 8], -0.2, -0.2, "holds",
                    scale="semilog", window=[2, 8], role="control",
                    window_reason="after the transient of length 2 (closed form)",
                    window_derived=True,
                    details={"full_grid": {"verdict": "inconclusive", "measured": -0.17,
                                           "interval": [-0.3, -0.05]}}),
        _rate_entry(rows, "syn.contrast", "contrast", [2, 4, 8, 16], -1.0, -1.0, "holds",
                    contrast=0.0, role="confirmation",
                    series={"value": "PHE (FedMBO)", "contrast": "shared IHGP (FedNest)"}),
        _rate_entry(rows, "syn.bounded", "bounded_by", [1, 10, 100], -1.0, None, "holds",
                    bound=True, role="control"),
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
    # the mutants of syn.matches, as a summary without attach_power lists them: folded into
    # syn.matches' power, never rows of their own
    for name, verdict in (("not_averaged", "violated"), ("sqrt_n", "holds")):
        entries.append({"id": f"syn.matches@{name}", "mutant_of": "syn.matches",
                        "kind": "matches", "verdict": verdict, "expected": "violated",
                        "measured": -0.5, "interval": [-0.6, -0.4], "predicted": -1.0,
                        "paper": "FedMBO 2023", "role": "confirmation", "status": "complete",
                        "fit": None})
    entries.append({"id": "syn.missing", "kind": "matches", "verdict": "inconclusive",
                    "status": "missing", "reason": "not run", "predicted": -0.5,
                    "measured": None, "interval": [None, None], "fit": None})
    # rows of a claim the summary does not know (must still be reported)
    rows.append(_row("syn.orphan", 0, 1.0, 0, {"value": 1.0}))
    # a mutant's rows whose verdict the summary already folded into syn.at_most's power:
    # neither a claim of its own nor a second mutant entry
    rows.append(_row("syn.at_most@repair", 0, 10.0, 0, {"value": 0.5}))
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
            if v.startswith(("data:image/png;base64,", "#")):
                continue
            # a figure of the report, linked relative to the page and inside its folder
            target = (path.parent / value).resolve()
            assert target.is_relative_to(path.parent.resolve()) and target.is_file(), \
                f"<{tag} {key}={value[:60]!r}>"
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
    ids = [e["id"] for e in entries if "@" not in e["id"]] + ["syn.orphan"]
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
    # one figure per claim with data (mutants have none); the missing claim has none
    claims = [e for e in entries if "@" not in e["id"]]
    assert len(refs) == 1 + len(claims) + 1 - 1
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
    # overview + one figure per claim with data, each linked once (not embedded)
    assert len(images) >= 4 and len(set(images)) == len(images)
    assert all(v.startswith("figures/") for v in images), images
    text = index.read_text(encoding="utf-8")
    assert "syn.missing" in text and "missing (not run)" in text
    assert "<math " in text  # formulas as MathML text, not images


def test_the_smoke_report_page_is_small():
    """The main job's page (every claim of the catalogue) stays under 2 MB: figures are
    linked, formulas are MathML text."""
    index = Path(__file__).resolve().parents[1] / "results" / "smoke" / "report" / "index.html"
    if not index.is_file():
        pytest.skip("the README's first command has not written results/smoke/report")
    assert index.stat().st_size < 2 * 2**20
    assert 'src="data:image' not in index.read_text(encoding="utf-8")


def test_report_json_is_strict(synthetic_report):
    _, out, _ = synthetic_report

    def no_constants(name):
        raise AssertionError(f"non-strict JSON constant {name}")

    report = json.loads((out / "report.json").read_text(encoding="utf-8"),
                        parse_constant=no_constants)
    assert set(report) >= {"meta", "entries", "mutants", "costs", "figures", "missing",
                           "partial"}
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
    assert "FEDMBO-R1" in ledger
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
    from bilevel_theory.reports.figures import STYLE  # noqa: PLC0415

    sizes = [v for k, v in STYLE.items() if "size" in k]
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
    assert "Runtime (this call)" in md and "Backend" in md
    # what the budget cost over every call: the run log's one segment here
    points = sum(1 for _ in {(r["claim"], r["point"]) for r in map(
        json.loads, (demo_store / "results.jsonl").read_text().splitlines())})
    assert report["meta"]["cost"]["segments"] == 1
    assert report["meta"]["cost"]["points_finished"] == points
    assert f"| Cost of the stored budget (every call) | 1 call, {points} points: " in md


def test_report_cost_adds_up_a_resumed_budgets_calls(demo_store, tmp_path):
    """A budget run in two calls: the report's cost is both calls', the runtime the last's."""
    import shutil  # noqa: PLC0415

    from bilevel_theory.reports.render import load_meta  # noqa: PLC0415

    store = tmp_path / "results"
    shutil.copytree(demo_store, store)
    ledger = (store / "runs.jsonl").read_text()
    first = json.loads(ledger)
    second = {**first, "status": "complete", "points_finished": 0, "runtime_seconds": 1.5,
              "cpu_seconds": {"main": 1.0, "workers": 0.0}}
    (store / "runs.jsonl").write_text(ledger + json.dumps(second) + "\n")
    meta = load_meta(store)
    assert meta["cost"]["segments"] == 2
    assert meta["cost"]["runtime_seconds"] == first["runtime_seconds"] + 1.5
    assert meta["cost"]["cpu_seconds"] == pytest.approx(
        first["cpu_seconds"]["main"] + first["cpu_seconds"]["workers"] + 1.0)
    # a segment of another budget is not this budget's cost
    (store / "runs.jsonl").write_text(ledger + json.dumps({**second, "budget": "full"}) + "\n")
    assert load_meta(store)["cost"]["segments"] == 1
    (store / "runs.jsonl").unlink()
    assert "cost" not in load_meta(store)


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


# ----------------------------------------------------------------------------- roles, power


def test_summary_grouped_by_paper_and_role(synthetic_report):
    _, out, _ = synthetic_report
    md = (out / "index.md").read_text(encoding="utf-8")
    head = md.split("## Summary", 1)[0]
    # confirmations and findings counted apart from controls
    # (entries without a role count as confirmations: syn.partial, syn.exact, syn.missing and
    # the orphan rows among them)
    assert re.search(r"\*\*Confirmations\*\* \([^)]*\): 6 — ✅ 3 hold · ❌ 0 violated · "
                     r"❔ 2 inconclusive · ⚪ 1 missing; 2 differ", head), head
    assert re.search(r"\*\*Findings\*\* \([^)]*\): 1 — ✅ 0 hold · ❌ 1 violated", head), head
    assert re.search(r"\*\*Controls\*\* \([^)]*\): 2 — ✅ 2 hold", head), head
    # power over confirmations and findings: syn.matches 1 of 2 + syn.at_most 1 of 1
    assert "**Mutants** (each must flip its claim's verdict): 2 of 3 caught; 5 claim(s) " \
        "without mutants run" in head
    summary = md.split("## Summary", 1)[1].split("## Overview", 1)[0]
    assert summary.index("### FedMBO 2023") < summary.index("### Other claims")
    assert "| Claim | Paper, result | Verdict | Measured [interval] vs predicted |" in summary
    # within a paper: confirmations, then findings, then controls
    order = [summary.index(f"[{cid}]") for cid in
             ("syn.matches", "syn.contrast", "syn.at_most", "syn.geometric", "syn.bounded")]
    assert order == sorted(order)
    assert "@" not in summary  # mutants are folded into their claim, not rows
    assert "*finding*" in summary and "*control*" in summary
    # claim sections grouped the same way, the run's metadata last
    assert md.index("### FedMBO 2023: confirmations") < md.index("### FedMBO 2023: findings") \
        < md.index("### FedMBO 2023: controls") < md.index("## Run")
    assert md.rstrip().endswith(md[md.index("## Run"):].rstrip())
    assert md.index("## Run") > md.index("## Claims")


def test_power_line_and_mutants_folded(synthetic_report):
    _, out, _ = synthetic_report
    md = (out / "index.md").read_text(encoding="utf-8")

    def section(cid):
        return md.split(f"#### {cid}\n", 1)[1].split("\n#### ", 1)[0]

    matches = section("syn.matches")
    assert "power: 1 of 2 mutants caught" in matches
    assert "not_averaged (noise not averaged): violated, required violated → caught" in matches
    assert "sqrt_n (noise scaled by sqrt(n)): holds, required violated → NOT caught" in matches
    assert "power: 1 of 1 mutant caught" in section("syn.at_most")
    assert "control: no mutants" in section("syn.geometric")
    assert "mutants not run" in section("syn.partial")
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert sorted(m["id"] for m in report["mutants"]) == ["syn.matches@not_averaged",
                                                          "syn.matches@sqrt_n"]
    entry = next(e for e in report["entries"] if e["id"] == "syn.matches")
    assert [p["caught"] for p in entry["power"]] == [True, False]
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "power: 1 of 2 mutants caught" in html


def test_window_reason_and_full_grid_shown(synthetic_report):
    _, out, _ = synthetic_report
    md = (out / "index.md").read_text(encoding="utf-8")
    geo = md.split("#### syn.geometric\n", 1)[1].split("\n#### ", 1)[0]
    assert "after the transient of length 2 (closed form) — derived from the law" in geo
    assert "full grid −0.17 [−0.3, −0.05] → inconclusive; window −0.2" in geo
    assert "$\\mathbb{E}\\|\\bar h - \\mathbb{E}\\bar h\\|^2 \\le \\frac{C}{n}$" in geo


def test_report_json_names_x_and_y(synthetic_report):
    _, out, _ = synthetic_report
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    entry = next(e for e in report["entries"] if e["id"] == "syn.contrast")
    data = entry["data"]
    assert data["x_name"] == "n" and len(data["x"]) == len(data["y"]) == 24
    assert sorted(set(data["x"])) == [2, 4, 8, 16]
    assert len(data["contrast"]) == 24


# ----------------------------------------------------------------------------- formats


def _pdf_streams(raw: bytes) -> list[bytes]:
    out = []
    for m in re.finditer(rb"<<(.*?)>>\s*stream\r?\n", raw, re.S):
        start = m.end()
        end = raw.index(b"endstream", start)
        data = raw[start:end]
        if b"/FlateDecode" in m.group(1):
            data = zlib.decompressobj().decompress(data)
        out.append(data)
    return out


def _assert_vector_pdf(path: Path) -> None:
    raw = path.read_bytes()
    assert raw.startswith(b"%PDF-1."), path
    assert raw.rstrip().endswith(b"%%EOF"), path
    assert b"/Type /Page" in raw
    assert b"/Subtype /Image" not in raw, f"{path} embeds a raster image"
    ops = b"\n".join(_pdf_streams(raw))
    # path construction (m, l, c, re) and painting operators: the plot is vector paths
    assert len(re.findall(rb"[\d.]+ [\d.]+ l\b", ops)) > 20, "too few path segments"
    assert re.search(rb"\b(f|S|B|f\*)\n", ops), "no painted path"


def test_cli_report_pdf_svg_and_progress(demo_store, tmp_path):
    # two claims' rows of the demo store (the others are then missing: no figure): fast
    results = tmp_path / "results"
    results.mkdir()
    shutil.copy(demo_store / "run.json", results / "run.json")
    keep = ("demo.variance_vs_n", "demo.variance_contrast")
    lines = [line for line in (demo_store / "results.jsonl").read_text().splitlines()
             if json.loads(line)["claim"] in keep]
    (results / "results.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "report"
    result = _cli(["report", str(results), "--out", str(out), "--format", "pdf,svg",
                   "--dpi", "80"])
    assert result.exit_code == 0, result.output
    # not a terminal: one progress line per figure
    lines = [ln for ln in result.output.splitlines() if ln.startswith("report: figure ")]
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert len(lines) == len(report["figures"]) == 3  # overview and the two claims
    assert lines[-1].startswith(f"report: figure {len(lines)}/{len(lines)}: ")
    for key, files in report["figure_files"].items():
        assert [Path(f).suffix for f in files] == [".png", ".pdf", ".svg"], key
        png, pdf, svg = (out / f for f in files)
        _assert_png(png)
        _assert_vector_pdf(pdf)
        root = ET.parse(svg).getroot()
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        assert root.findall(".//{http://www.w3.org/2000/svg}path")
        assert not root.findall(".//{http://www.w3.org/2000/svg}image")
    from matplotlib.image import imread  # noqa: PLC0415

    # --dpi sets the PNG's resolution: the 6.4 in wide figure is about 6.4 * 80 px
    assert 400 < imread(out / report["figures"]["demo.variance_vs_n"]).shape[1] < 700
    assert report["meta"]["figure_formats"] == "png, pdf, svg"


def test_cli_bad_format_exit_2(demo_store, tmp_path):
    result = _cli(["report", str(demo_store), "--out", str(tmp_path / "r"), "--format", "jpg"])
    assert result.exit_code == 2
    assert "`formats`" in result.output and "jpg" in result.output


# ----------------------------------------------------------------------------- plot_claim


def _legend_texts(ax) -> list[str]:
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend else []


def test_plot_claim_draws_into_given_axes():
    import matplotlib  # noqa: PLC0415
    from matplotlib.figure import Figure  # noqa: PLC0415

    entries, _, rows = synthetic()
    by_id = {e["id"]: e for e in entries}
    before = dict(matplotlib.rcParams)
    fig = Figure(figsize=(10, 4))
    a, b = fig.subplots(1, 2)
    ax = reports.plot_claim(by_id["syn.contrast"], ax=a,
                            rows=[r for r in rows if r["claim"] == "syn.contrast"])
    assert ax is a and len(fig.axes) == 2
    assert a.collections and a.lines and a.get_xscale() == "log"
    texts = _legend_texts(a)
    assert any(t.startswith("PHE (FedMBO): ") for t in texts), texts
    assert any(t.startswith("shared IHGP (FedNest): ") for t in texts), texts
    assert not b.lines and not b.collections  # the other axes untouched
    # without a series mapping: "measured" and "contrast", never A/B
    plain = {k: v for k, v in by_id["syn.contrast"].items() if k != "series"}
    reports.plot_claim(plain, ax=b, legend=True)
    texts = _legend_texts(b)
    assert any(t.startswith("measured: ") for t in texts)
    assert any(t.startswith("contrast: ") for t in texts)
    assert not any(t.startswith(("A:", "B")) for t in texts)
    assert dict(matplotlib.rcParams) == before  # style applied as a context only
    fig.savefig(io.BytesIO(), format="png")


def test_plot_claim_window_draws_full_grid_fit():
    from matplotlib.figure import Figure  # noqa: PLC0415

    entries, _, _ = synthetic()
    geo = next(e for e in entries if e["id"] == "syn.geometric")
    ax = Figure().subplots()
    reports.plot_claim(geo, ax=ax)
    texts = _legend_texts(ax)
    assert any(t.startswith("full-grid fit: log-ratio −0.17") for t in texts), texts
    assert any(t.startswith("window fit: log-ratio") for t in texts), texts
    assert "fit window" in texts


def test_plot_claim_accepts_a_verify_result():
    import dataclasses  # noqa: PLC0415

    from matplotlib.figure import Figure  # noqa: PLC0415

    from bilevel_theory import verify  # noqa: PLC0415
    from bilevel_theory.verify.claims.demo import DEMO_CLAIMS  # noqa: PLC0415

    claim = next(c for c in DEMO_CLAIMS if c.kind == "contrast")
    claim = dataclasses.replace(claim, extra={**dict(claim.extra or {}), "series": {
        "value": "averaged noise", "contrast": "shared noise"}})
    result = verify.check(claim, budget="smoke", n_boot=100)
    ax = Figure().subplots()
    reports.plot_claim(result, ax=ax)
    texts = _legend_texts(ax)
    assert any(t.startswith("averaged noise: ") for t in texts), texts
    assert any(t.startswith("shared noise: ") for t in texts), texts
    assert claim.id in ax.get_title(loc="left")
    with pytest.raises(TypeError, match="result"):
        reports.plot_claim(42, ax=ax)


# ----------------------------------------------------------------------------- 1280 px


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                    "(.ci/install-chromium.sh installs Debian's)")
def test_summary_not_clipped_at_1280px(synthetic_report, tmp_path):
    """At a 1280 px window the page does not scroll sideways and every summary table ends
    inside the window (measured in the browser), and the screenshot shows the verdicts."""
    _, out, index = synthetic_report
    probe = tmp_path / "probe.html"
    shutil.copytree(out / "figures", tmp_path / "figures")
    script = (
        "<script>window.addEventListener('load', function () {"
        "var w = window.innerWidth, r = [];"
        "document.querySelectorAll('table.summary').forEach(function (t) {"
        " r.push(Math.ceil(t.getBoundingClientRect().right)); });"
        "var d = document.createElement('pre'); d.id = 'probe';"
        "d.textContent = JSON.stringify({inner: w, scroll: document.documentElement.scrollWidth,"
        " right: r}); document.body.appendChild(d); });</script>")
    probe.write_text(index.read_text(encoding="utf-8").replace("</body>", script + "</body>"),
                     encoding="utf-8")
    common = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
              "--no-first-run", "--disable-background-networking", "--disable-component-update",
              "--disable-sync", "--hide-scrollbars", f"--user-data-dir={tmp_path / 'profile'}",
              "--window-size=1280,900"]
    proc = subprocess.run(common + ["--virtual-time-budget=3000", "--dump-dom",
                                    probe.resolve().as_uri()],
                          capture_output=True, text=True, timeout=90)
    found = re.search(r'<pre id="probe">(.*?)</pre>', proc.stdout)
    assert found, proc.stderr[-2000:]
    probe_data = json.loads(found.group(1).replace("&quot;", '"'))
    assert probe_data["inner"] == 1280, probe_data
    assert probe_data["scroll"] <= probe_data["inner"], probe_data
    assert probe_data["right"] and max(probe_data["right"]) <= probe_data["inner"], probe_data
    shot = tmp_path / "shot.png"
    subprocess.run(common + [f"--screenshot={shot}", index.resolve().as_uri()],
                   capture_output=True, text=True, timeout=90)
    from matplotlib.image import imread  # noqa: PLC0415

    img = imread(shot)[..., :3]
    assert img.shape[:2] == (900, 1280)
    # the verdict badges (green holds, red violated) are in the first screen
    green = np.all(np.abs(img - np.array([0x1a, 0x98, 0x50]) / 255) < 0.04, axis=-1)
    red = np.all(np.abs(img - np.array([0xd7, 0x30, 0x27]) / 255) < 0.04, axis=-1)
    assert green.sum() > 50 and red.sum() > 50
    # nothing drawn in the last 20 px columns: no table runs past the right edge
    assert np.all(img[:, -20:] > 0.95)


def test_parallel_figures_same_report(tmp_path):
    """``jobs=2`` (worker processes) writes the same figures and Markdown as ``jobs=1``."""
    entries, meta, rows = synthetic()
    keep = {"syn.matches", "syn.contrast", "syn.exact"}
    entries = [e for e in entries if e["id"] in keep]
    rows = [r for r in rows if r["claim"] in keep]
    meta = {**meta, "report_date": "fixed"}
    outs = []
    for jobs in (1, 2):
        out = tmp_path / f"j{jobs}"
        seen = []
        render_entries(entries, meta, rows, out, jobs=jobs,
                       progress=lambda done, total, name, seen=seen: seen.append((done, total)))
        assert [d for d, _ in seen] == [1, 2, 3, 4] and {t for _, t in seen} == {4}
        outs.append(out)
    a, b = outs
    assert (a / "index.md").read_text() == (b / "index.md").read_text()
    names = sorted(p.name for p in (a / "figures").iterdir())
    assert names == sorted(p.name for p in (b / "figures").iterdir()) and len(names) == 4
    for name in names:
        assert (a / "figures" / name).read_bytes() == (b / "figures" / name).read_bytes(), name
    with pytest.raises(ValueError, match="`jobs`"):
        render_entries(entries, meta, rows, tmp_path / "bad", jobs=-1)


def test_log_tick_labels_are_text():
    from bilevel_theory.reports.figures import decade_label  # noqa: PLC0415

    assert decade_label(1e-4) == "10⁻⁴" and decade_label(1e6) == "10⁶"
    assert decade_label(100.0) == "100" and decade_label(0.01) == "0.01"
    assert decade_label(0.0) == "" and decade_label(float("nan")) == ""


def test_the_theorems_conditions_are_reported_with_pass_or_fail():
    from bilevel_theory.reports.markdown import condition_lines  # noqa: PLC0415
    from bilevel_theory.verify.claims import CLAIMS  # noqa: PLC0415
    from bilevel_theory.verify.runner import Result  # noqa: PLC0415

    claim = CLAIMS["afbo.strongly_convex_rate_theorem"]
    entry = Result(id=claim.id, verdict="holds", expected="holds", measured=-0.5,
                   interval=(-0.52, -0.48), predicted=-0.5, reason="", seconds=1.0,
                   budget="smoke", claim=claim).to_dict()
    lines = condition_lines(entry)
    assert len(lines) == len(claim.conditions) >= 1
    assert any("a_1" in line and line.startswith("pass") for line in lines), lines
    failing = {**entry, "conditions": [{**entry["conditions"][0], "holds": False}]}
    assert condition_lines(failing)[0].startswith("FAIL")
    assert condition_lines({**entry, "conditions": [], "conditions_note": "a count"}) == [
        "none: a count"]
