"""Reports show the readings a claim touches resolved to their titles.

What is checked: ``verify/readings_index.json`` is in sync with ``docs/papers.md`` and
``docs/papers/*.md`` (and ``--check`` fails on a stale copy); every reading a catalogue claim
touches resolves; a toolkit reading resolves to its title and page, a plug-in's (registered
with ``kit.register_paper``) to its text and paper, an unknown id to nothing; the Markdown and
HTML reports show "ID — title" (plug-in: its text) in the claim's facts and the discrepancy
ledger, and an unknown id bare.
"""

from __future__ import annotations

import html
import json
import math

import pytest

from bilevel_theory.reports import readings, render_entries
from bilevel_theory.reports.markdown import reading_labels
from bilevel_theory.verify import kit

PLUGIN_TEXT = ("the fake series scale uses the largest eigenvalue. A second sentence, "
               "kept in the full text only.")


@pytest.fixture
def plugin_reading():
    """A plug-in paper registering ``ZZTEST-R1``, removed afterwards."""
    kit.register_paper("zztest", "ZZ test", "Nobody, Nowhere 2099",
                       readings={"ZZTEST-R1": PLUGIN_TEXT})
    try:
        yield "ZZTEST-R1"
    finally:
        kit.register_paper("zztest", "ZZ test", "Nobody, Nowhere 2099")  # drops its readings
        kit.PAPERS.pop("zztest", None)
        kit._READINGS_OF.pop("zztest", None)


def test_index_in_sync_with_docs(tmp_path, capsys):
    if not (readings.DOCS / "papers.md").is_file():
        pytest.skip("no docs/ (installed package)")
    assert readings.main(["--check"]) == 0, "run python3 -m bilevel_theory.reports.readings --write"
    stale = tmp_path / "readings_index.json"
    index = json.loads(readings.PATH.read_text(encoding="utf-8"))
    index.pop(next(iter(index)))
    stale.write_text(json.dumps(index), encoding="utf-8")
    assert readings.main(["--check", "--path", str(stale)]) == 1
    assert readings.main(["--check", "--docs", str(tmp_path / "nowhere")]) == 2
    assert "`--docs`" in capsys.readouterr().err


def test_index_parses_list_items_and_paragraphs(tmp_path):
    (tmp_path / "papers").mkdir()
    (tmp_path / "papers.md").write_text(
        "**Paper A** ([`papers/a.md`](papers/a.md))\n\n- `A-R1`: : first reading\n"
        "- `A-R2`: second (eq. 2)\n", encoding="utf-8")
    (tmp_path / "papers" / "a.md").write_text(
        "**A-R1 — not this title.** Body.\n**A-L1 (a lemma).** Body.\n"
        "**A-I1: an inference** [INFERRED]. Body.\n", encoding="utf-8")
    assert readings.index_from_docs(tmp_path) == {
        "A-R1": {"title": "first reading", "page": "docs/papers/a.md"},
        "A-R2": {"title": "second (eq. 2)", "page": "docs/papers/a.md"},
        "A-L1": {"title": "a lemma", "page": "docs/papers/a.md"},
        "A-I1": {"title": "an inference", "page": "docs/papers/a.md"},
    }


def test_every_touched_reading_resolves():
    from bilevel_theory.verify.claims import CLAIMS

    touched = {r for c in CLAIMS.values() for r in c.touches}
    assert touched
    missing = sorted(touched - set(readings.reading_titles(touched)))
    assert not missing, f"readings without a title in verify/readings_index.json: {missing}"


def test_reading_titles_resolves_each_kind(plugin_reading):
    found = readings.reading_titles(["FEDNEST-R12", plugin_reading, "NOPE-R99"])
    assert found["FEDNEST-R12"]["title"] == "the instance and the `N` of `fednest.bilevel_rate`"
    assert found["FEDNEST-R12"]["source"] == "docs/papers/fednest.md"
    assert found[plugin_reading] == {
        "title": "the fake series scale uses the largest eigenvalue",
        "text": PLUGIN_TEXT, "source": "Nobody, Nowhere 2099"}
    assert "NOPE-R99" not in found
    assert reading_labels({"touches": ["NOPE-R99"]}) == ["NOPE-R99"]


def _entry_and_rows(touches):
    rows = []
    for p, x in enumerate([2, 4, 8, 16]):
        for r in range(3):
            rows.append({"claim": "syn.readings", "budget": "smoke", "point": p, "value": x,
                         "replicate": r, "metrics": {"value": x ** -0.4 * (1 + 0.01 * r)},
                         "backend": "numpy", "versions": {"numpy": "2"}, "config_hash": "h",
                         "seed": p, "seconds": 0.1})
    ys = [x ** -0.4 for x in (2, 4, 8, 16)]
    entry = {"id": "syn.readings", "paper": "FedNest 2022", "kind": "matches",
             "verdict": "violated", "expected": "holds", "measured": -0.4,
             "interval": [-0.45, -0.35], "predicted": -0.5, "reason": "slower than predicted",
             "variable": "K", "quantity": "error", "scale": "loglog", "touches": touches,
             "status": "complete", "tolerance": 0.1,
             "fit": {"x": [2, 4, 8, 16], "mean": ys, "lo": [y * 0.9 for y in ys],
                     "hi": [y * 1.1 for y in ys], "slope": -0.4, "intercept": 0.0,
                     "interval": [-0.45, -0.35]}}
    assert all(math.isfinite(y) for y in ys)
    return entry, rows


def test_reports_show_reading_titles(tmp_path, plugin_reading):
    entry, rows = _entry_and_rows(["FEDNEST-R12", plugin_reading, "NOPE-R99"])
    render_entries([entry], {"budget": "smoke"}, rows, tmp_path / "r", jobs=1)
    md = (tmp_path / "r" / "index.md").read_text(encoding="utf-8")
    page = html.unescape((tmp_path / "r" / "index.html").read_text(encoding="utf-8"))
    title = "FEDNEST-R12 — the instance and the `N` of `fednest.bilevel_rate`"
    plugin_title = f"{plugin_reading} — the fake series scale uses the largest eigenvalue"
    ledger = md.split("## Discrepancy ledger", 1)[1].split("\n## ", 1)[0]
    assert title in ledger and plugin_title in ledger and "NOPE-R99" in ledger
    assert "NOPE-R99 —" not in md and "NOPE-R99 —" not in page
    for text in (md, page):
        assert f"{title} (docs/papers/fednest.md)" in text
        assert f"{plugin_reading} — {PLUGIN_TEXT} (Nobody, Nowhere 2099)" in text
    assert page.count(plugin_title) >= 2  # the ledger and the claim's facts
    report = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    got = {r["id"]: r["title"] for r in report["entries"][0]["readings"]}
    assert got == {"FEDNEST-R12": "the instance and the `N` of `fednest.bilevel_rate`",
                   plugin_reading: "the fake series scale uses the largest eigenvalue",
                   "NOPE-R99": ""}
