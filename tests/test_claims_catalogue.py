"""The catalogue as tests: ``pytest verify/`` checks every claim at the smoke budget.

One test per claim of ``verify.CLAIMS`` (the claim id is the test id); a test fails when the
verdict differs from the claim's expected verdict, showing measured against predicted and the
reason.  An empty catalogue is one cleanly skipped test.  ``test_baseline_in_sync`` checks that
``verify/baseline.json`` matches the catalogue (regenerate with ``python -m bilevel_theory.verify.baseline``).
"""

from __future__ import annotations

import json

import pytest
from bilevel_theory.verify import CLAIMS, check
from bilevel_theory.verify.baseline import PATH, expected_verdicts

IDS = sorted(CLAIMS)
PARAMS = IDS or [pytest.param(None, marks=pytest.mark.skip(reason="the claims catalogue is empty"))]


@pytest.mark.parametrize("claim_id", PARAMS)
def test_claim(claim_id):
    claim = CLAIMS[claim_id]
    r = check(claim, budget="smoke", seed=0)
    assert r.verdict == claim.expected, (
        f"{claim_id} ({claim.source}): verdict {r.verdict}, expected {claim.expected}; "
        f"measured {r.measured:.4g} {[round(v, 4) for v in r.interval]} vs predicted "
        f"{r.predicted:.4g} ± {claim.tolerance:.3g}; reason: {r.reason}"
        + (f"; expected because: {claim.reason}" if claim.reason else ""))


def test_baseline_in_sync():
    on_disk = json.loads(PATH.read_text())
    assert on_disk == expected_verdicts(), (
        f"{PATH} is out of sync with verify.CLAIMS; regenerate with `python -m bilevel_theory.verify.baseline`")
