"""The verdict procedure's false-violation rate on a claim that truly holds, and its power.

``demo.variance_vs_n`` measures ``‖(1/n)Σ ξ_i‖²`` for i.i.d. standard normal ``ξ_i ∈ R^4``:
its mean is ``4/n`` exactly (variance ∝ 1/n, as for the PHE average, FedMBO Prop. 3), so the
claim ``slope = −1 ± 0.1`` is true and every ``violated`` is a false violation.  The rate is
measured over independent base seeds at the smoke budget (16 replicates per point);
``python -m bilevel_theory.verify.false_violation --seeds 200 --claim ID`` measures it for any claim.
"""

from __future__ import annotations

import dataclasses

from bilevel_theory.verify import Law
from bilevel_theory.verify.claims.demo import CATALOGUE, DEMO_CLAIMS
from bilevel_theory.verify.false_violation import false_violation_rate, main

TRUE = next(c for c in DEMO_CLAIMS if c.id == "demo.variance_vs_n")
SEEDS = 120


def test_false_violation_rate_on_a_true_claim():
    report = false_violation_rate(TRUE, seeds=SEEDS, budget="smoke")
    assert report["seeds"] == SEEDS and sum(report["verdicts"].values()) == SEEDS
    assert report["violated_rate"] <= 0.10, report  # target ≤ 5%
    # the raw 95% bootstrap interval (no tolerance) covers the true exponent most of the time
    assert report["coverage"] >= 0.85, report
    assert abs(report["slope_mean"] + 1.0) < 0.02, report  # the fit is unbiased


def test_power_against_wrong_laws():
    """The same procedure must say ``violated`` when the law is wrong (not a test that
    cannot fail): true exponent −1, claimed −1/2 and −1.3 with tolerance 0.1."""
    for wrong in (-0.5, -1.3):
        claim = dataclasses.replace(TRUE, law=Law(wrong, "", ""))
        report = false_violation_rate(claim, seeds=40, budget="smoke", first_seed=1000)
        assert report["violated_rate"] >= 0.9, (wrong, report)


def test_script(capsys):
    code = main(["--seeds", "20", "--claim", TRUE.id, "--catalogue", CATALOGUE])
    out = capsys.readouterr().out
    assert code == 0 and "violated rate" in out and "20 seeds" in out
    assert main(["--seeds", "5", "--claim", "demo.nope", "--catalogue", CATALOGUE]) == 2
    assert "close matches" in capsys.readouterr().err
