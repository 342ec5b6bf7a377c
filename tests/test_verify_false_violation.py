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


def _demo(cid):
    return next(c for c in DEMO_CLAIMS if c.id == cid)


def test_calibrate_power_from_one_run_per_seed():
    """``calibrate`` judges the same measurements against the true law and against wrong
    laws: a shifted exponent (matches) and a bound multiplied by a factor < 1 (bounded_by)."""
    from bilevel_theory.verify.false_violation import calibrate

    r = calibrate(TRUE, deltas=(0.4, -0.4, 0.0), seeds=20, budget="smoke")
    assert r["seeds"] == 20 and sum(r["verdicts"].values()) == 20
    power = {p["delta"]: p["rate"] for p in r["power"]}
    assert power[0.4] == 1.0 and power[-0.4] == 1.0
    assert power[0.0] == r["violated_rate"] <= 0.1  # δ = 0 is the claim itself
    b = calibrate(_demo("demo.variance_bounded"), deltas=(1.0, 0.2), seeds=20)
    bp = {p["delta"]: p["rate"] for p in b["power"]}
    assert bp[1.0] == b["violated_rate"] == 0.0  # true mean d/n, bound 2d/n
    assert bp[0.2] == 1.0  # bound 0.4d/n < d/n: always caught
    lo, hi = b["violated_rate_ci95"]
    assert lo == 0.0 and 0.1 < hi < 0.2  # Clopper–Pearson upper limit for 0/20


def test_calibration_table(tmp_path):
    from bilevel_theory.verify.false_violation import main as fv_main

    out = tmp_path / "calibration.md"
    code = fv_main(["--catalogue", CATALOGUE, "--seeds", "5", "--calibrate",
                    "demo.variance_vs_n=0.3", "--calibrate", "demo.variance_bounded=0.3",
                    "--table", str(out)])
    text = out.read_text()
    assert code == 0 and "`demo.variance_vs_n` | matches | 5" in text
    assert "× 0.3" in text and "δ = +0.3" in text and "--table" in text
    assert fv_main(["--catalogue", CATALOGUE, "--seeds", "5", "--calibrate",
                    "demo.rounds_exact=1"]) == 2  # exact counts have no wrong-law perturbation
