"""The catalogue as tests: every claim at its expected verdict and every mutant caught, at the
smoke budget.

The claims run once, into the README's results directory ``results/smoke`` (the store of
``bilevel-theory verify --budget smoke --mutants``): when the README's first command has run,
every point is already stored for the same code (the store's config hash includes a digest of
the library's source) and the tests only judge; otherwise the missing points are computed here
(a few minutes on two cores).  One test per claim and one per mutant (the id is the test id);
a failure shows measured against predicted and the reason.  ``test_baseline_in_sync`` checks
that ``verify/baseline.json`` matches the catalogue (regenerate with
``python -m bilevel_theory.verify.baseline``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bilevel_theory.verify import CLAIMS, run_suite
from bilevel_theory.verify.baseline import PATH, expected_verdicts

STORE = Path(__file__).resolve().parents[1] / "results" / "smoke"
IDS = sorted(CLAIMS)
MUTANTS = sorted(m.id for cid in IDS for m in CLAIMS[cid].mutated())


@pytest.fixture(scope="module")
def results():
    """Every claim and mutant at the smoke budget, resumed from ``results/smoke``."""
    out = run_suite(budget="smoke", out=STORE, workers=2, seed=0, progress=False, costs=False,
                    mutants=True)
    return {r.id: r for r in out}


def _explain(r, claim) -> str:
    return (f"{r.id} ({claim.source}): verdict {r.verdict}, expected {r.expected}; measured "
            f"{r.measured:.4g} {[round(v, 4) for v in r.interval]} vs predicted "
            f"{r.predicted:.4g} ± {claim.tolerance:.3g}; reason: {r.reason}"
            + (f"; expected because: {claim.reason}" if claim.reason else ""))


@pytest.mark.parametrize("claim_id", IDS)
def test_claim(results, claim_id):
    r = results[claim_id]
    assert r.verdict == CLAIMS[claim_id].expected, _explain(r, CLAIMS[claim_id])


@pytest.mark.parametrize("mutant_id", MUTANTS)
def test_mutant_is_caught(results, mutant_id):
    """Under the mutant, a confirmation must say ``violated`` and a finding ``holds``."""
    r, claim = results[mutant_id], CLAIMS[mutant_id]
    assert r.verdict == claim.expected, "not caught: " + _explain(r, claim)


def test_every_confirmation_and_finding_has_a_mutant():
    lacking = [cid for cid in IDS if CLAIMS[cid].role != "control" and not CLAIMS[cid].mutants]
    assert not lacking, f"claims without a mutant (no proof of power): {lacking}"


def test_baseline_in_sync():
    on_disk = json.loads(PATH.read_text())
    assert on_disk == expected_verdicts(), (
        f"{PATH} is out of sync with verify.CLAIMS; regenerate with "
        "`python -m bilevel_theory.verify.baseline`")
