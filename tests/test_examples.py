"""The examples import and declare valid claims (cheap: nothing is run here; the toy plug-in's
claims are run by its own tests, installed, in ``test_packaging.py``)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from bilevel_theory.verify import Claim, Mutant
from bilevel_theory.verify.claim import BUDGETS

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture
def on_path(monkeypatch):
    def add(path: Path):
        monkeypatch.syspath_prepend(str(path))
    return add


def _valid(claims, prefix: str) -> None:
    assert claims, "no claims"
    for c in claims:
        assert isinstance(c, Claim)
        assert c.id.startswith(prefix + ".")
        assert c.role in ("confirmation", "finding", "control")
        assert c.source and c.statement and callable(c.measure)
        for b in BUDGETS:
            assert len(c.grid[b]) >= 2 and c.replicates[b] >= 1
        if c.role != "control":
            assert c.mutants and all(isinstance(m, Mutant) for m in c.mutants)
            for m in c.mutants:
                mutated = c.under(m.name)
                assert mutated.id == f"{c.id}@{m.name}"
                assert mutated.expected == ("violated" if c.role == "confirmation" else "holds")


def test_the_new_paper_template_declares_valid_claims(on_path):
    on_path(EXAMPLES)
    template = importlib.import_module("new_paper_template")
    _valid(template.CLAIMS, template.KEY)
    assert [c.role for c in template.CLAIMS] == ["confirmation"]
    out = template.step_variance(2, replicates=4, seed=0)  # one tiny point runs
    assert out["value"].shape == (4,)


def test_the_toy_plugin_declares_valid_claims(on_path):
    on_path(EXAMPLES / "toy_plugin" / "src")
    claims = importlib.import_module("toy_plugin.claims")
    _valid(claims.CLAIMS, "toy")
    assert {c.id for c in claims.CLAIMS} == {"toy.neumann_bias_vs_N", "toy.rounds_per_iteration"}


def teardown_module():
    for name in [m for m in sys.modules if m == "new_paper_template" or m.startswith("toy_plugin")]:
        sys.modules.pop(name)


def test_the_catalogue_page_is_generated_from_claims(tmp_path):
    """``python -m bilevel_theory.verify.catalogue_doc``: one row per claim, grouped by paper
    and role, with its mutants; a pipe in a statement does not split the table."""
    from bilevel_theory.verify.catalogue_doc import main, render
    from bilevel_theory.verify.claims.demo import DEMO_CLAIMS

    text = render(DEMO_CLAIMS)
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert len(rows) == len(DEMO_CLAIMS)
    for c in DEMO_CLAIMS:
        (row,) = [r for r in rows if r.startswith(f"| `{c.id}`")]
        assert row.replace(r"\|", "").count("|") == 8, row  # 7 cells
        assert all(f"`{m.name}`" in row for m in c.mutants)
    out = tmp_path / "claims.md"
    assert main([str(out), "--catalogue",
                 "bilevel_theory.verify.claims.demo:DEMO_CLAIMS"]) == 0
    assert out.read_text() == text
