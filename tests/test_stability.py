"""Seed stability: the committed tables (docs/stability.md at the smoke budget,
docs/stability-standard.md at the standard budget) cover every claim and mutant of the catalogue
at seeds 0–4 and shows each at its expected verdict at every seed; the slow test
recomputes one seed and finds the table's verdicts."""

from __future__ import annotations

import re

import pytest

from bilevel_theory.verify import stability
from bilevel_theory.verify.claims import CLAIMS

ROW = re.compile(r"^\| `([^`]+)` \| (\w+) \| (.*) \| (yes|\*\*no\*\*) \| [^|]* \|$")


#: the budgets whose table is committed (``python -m bilevel_theory.verify.stability
#: [--budget standard]``)
BUDGETS = pytest.mark.parametrize("budget", ["smoke", "standard"])


def _rows(budget: str = "smoke") -> dict[str, tuple[str, list[str], bool]]:
    rows = {}
    for line in stability.DOCS[budget].read_text().splitlines():
        m = ROW.match(line)
        if m:
            cells = [c.strip() for c in m.group(3).split(" | ")]
            rows[m.group(1)] = (m.group(2), cells, m.group(4) == "yes")
    return rows


def _catalogue_ids() -> set[str]:
    claims = list(CLAIMS.values())
    return {c.id for c in claims} | {m.id for c in claims for m in c.mutated()}


@BUDGETS
def test_the_table_covers_the_catalogue_at_five_seeds(budget):
    rows = _rows(budget)
    assert f"# Seed stability ({budget} budget)" in stability.DOCS[budget].read_text()
    assert set(rows) == _catalogue_ids(), "regenerate: python -m bilevel_theory.verify.stability"
    for cid, (expected, cells, _) in rows.items():
        assert len(cells) == len(stability.SEEDS), cid
        claim = CLAIMS[cid]
        assert expected == claim.expected, (cid, expected, claim.expected)


@BUDGETS
def test_every_verdict_is_the_same_at_every_seed(budget):
    unstable = {cid: cells for cid, (exp, cells, ok) in _rows(budget).items()
                if not ok or any(not c.startswith(exp + " ") or "✗" in c for c in cells)}
    assert not unstable, unstable


def test_the_table_is_rendered_from_summaries():
    entry = {"id": "x.rate", "verdict": "holds", "expected": "holds", "measured": -1.0,
             "interval": [-1.05, -0.95], "details": {"resolution": 0.15},
             "power": [{"mutant": "m", "verdict": "holds", "required": "violated",
                        "measured": -0.5, "interval": [-0.6, -0.4]}]}
    text, ok = stability.table({0: {"x.rate": entry, "x.rate@m": {
        "verdict": "holds", "expected": "violated", "measured": -0.5,
        "interval": [-0.6, -0.4]}}})
    assert not ok and "| **no** |" in text and "holds ✗" in text and "0.15" in text


@pytest.mark.slow
def test_seed_1_reproduces_the_table(tmp_path):
    stability.run_seeds(tmp_path, seeds=(1,), workers=2, progress=False)
    found = stability.read_summaries(tmp_path, (1,))[1]
    rows = _rows()
    column = stability.SEEDS.index(1)
    for cid, entry in found.items():
        assert rows[cid][1][column].split()[0] == entry["verdict"], cid


def test_each_budget_has_its_own_store_and_table():
    from pathlib import Path

    assert stability.default_out("smoke") == Path("results/stability")
    assert stability.default_out("standard") == Path("results/stability-standard")
    assert stability.DOCS["standard"].name == "stability-standard.md"
    entry = {"verdict": "holds", "expected": "holds", "measured": -1.0,
             "interval": [-1.05, -0.95]}
    text, ok = stability.table({0: {"x.rate": entry}}, "standard", source="From commit abc.")
    assert ok and "# Seed stability (standard budget)" in text
    assert "verify.stability --budget standard`. From commit abc." in text


def test_an_overlay_replaces_a_claim_with_its_mutants(tmp_path):
    """A later run of a claim replaces its base entries, mutants included: a mutant that the
    later run no longer has leaves the table; the other claims' entries stay."""
    import json

    def store(root, entries):
        (root / "seed-0").mkdir(parents=True)
        (root / "seed-0" / "summary.json").write_text(json.dumps(entries))

    def entry(cid, mutant, verdict="holds"):
        return {"id": cid, "verdict": verdict, "expected": "holds", "measured": 0.0,
                "interval": [0.0, 0.0], "power": [{"mutant": mutant, "verdict": "violated",
                                                   "required": "violated"}]}
    store(tmp_path / "base", [entry("a.x", "old"), entry("b.y", "keep")])
    store(tmp_path / "later", [entry("a.x", "new", "holds")])
    found = stability.read_summaries(tmp_path / "base", (0,), [tmp_path / "later"])[0]
    assert set(found) == {"a.x", "a.x@new", "b.y", "b.y@keep"}
    # each entry names the directory its rows are in (the rounding audit reads them there)
    assert found["a.x"]["store"] == found["a.x@new"]["store"] == tmp_path / "later" / "seed-0"
    assert found["b.y@keep"]["store"] == tmp_path / "base" / "seed-0"


@BUDGETS
def test_a_committed_table_reads_back_into_the_same_rows(budget):
    """--base-doc: the committed table, read back (read_doc) and rendered again, gives the same
    rows, so a rerun of some claims can be added to it without the other claims' stores."""
    from pathlib import Path

    doc = stability.DOCS[budget]
    found = stability.read_summaries(Path("/nonexistent"), base=doc)
    text, ok = stability.table(found, budget)

    def rows(t):
        return [ln for ln in t.splitlines() if ln.startswith("| `")]
    assert ok and rows(text) == rows(doc.read_text())


def test_a_rerun_replaces_the_base_rows_of_its_claims(tmp_path):
    import json

    base = tmp_path / "base.md"
    e = {"verdict": "holds", "expected": "holds", "measured": 1.0, "interval": [0.9, 1.1]}
    base.write_text(stability.table({0: {"a.x": e, "a.x@m": {**e, "verdict": "violated",
                                                                 "expected": "violated"},
                                         "b.y": e}}, "smoke")[0])
    (tmp_path / "new" / "seed-0").mkdir(parents=True)
    (tmp_path / "new" / "seed-0" / "summary.json").write_text(json.dumps(
        [{"id": "a.x", "verdict": "holds", "expected": "holds", "measured": 2.0,
          "interval": [1.9, 2.1], "power": []}]))
    found = stability.read_summaries(tmp_path / "none", (0,), [tmp_path / "new"], base)[0]
    assert found["a.x"]["measured"] == 2.0 and "a.x@m" not in found  # the rerun has no mutant
    assert found["b.y"]["measured"] == 1.0
