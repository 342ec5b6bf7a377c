"""``verify --noise-distribution``: the claims under another law of the oracle noise with the
same mean and covariance (Rademacher, uniform), which every paper's bounded-variance
assumption covers, so every verdict must stay what it is under the Gaussian default."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bilevel_theory.problems import Oracle, QuadraticBilevel
from bilevel_theory.problems.oracle import default_noise_distribution
from bilevel_theory.reports.cli import main
from bilevel_theory.verify import CLAIMS, check
from bilevel_theory.verify.runner import config_hash, summarize

#: Claims whose measured quantity is driven by the oracles' noise, quick at the smoke budget.
NOISE_DRIVEN = ("fedmbo.phe_variance_vs_clients", "fedmbo.ihgp_variance_contrast",
                "fedmbo.inner_loop_lemma5", "fednest.fedsvrg_single_level",
                "fednest.compositional_rate", "gao.localbsgm_linear_speedup")


def test_default_noise_distribution_reaches_the_oracles():
    prob = QuadraticBilevel.random(clients=3, dim_x=2, dim_y=2, noise=0.1, seed=0)
    assert Oracle(prob).noise_distribution == "gaussian"
    with default_noise_distribution("rademacher"):
        assert Oracle(prob).noise_distribution == "rademacher"
        assert Oracle(prob, noise_distribution="uniform").noise_distribution == "uniform"
    assert Oracle(prob).noise_distribution == "gaussian"
    with pytest.raises(ValueError, match="`noise_distribution`"):
        with default_noise_distribution("cauchy"):
            pass


def test_the_noise_law_is_part_of_the_config_hash():
    claim = CLAIMS[NOISE_DRIVEN[0]]
    hashes = {d: config_hash(claim, "smoke", d) for d in ("gaussian", "rademacher", "uniform")}
    assert hashes["gaussian"] == config_hash(claim, "smoke")
    assert len(set(hashes.values())) == 3


@pytest.mark.parametrize("cid", NOISE_DRIVEN)
def test_verdicts_do_not_change_under_rademacher_noise(cid):
    """The same verdict as the claim's expected (Gaussian) one, from different numbers: the
    measured value moves, so the option did reach the measure."""
    gaussian = check(cid, "smoke")
    rademacher = check(cid, "smoke", noise_distribution="rademacher")
    assert gaussian.verdict == CLAIMS[cid].expected
    assert rademacher.verdict == CLAIMS[cid].expected, rademacher.reason
    assert rademacher.measured != gaussian.measured


def test_cli_stores_and_summarizes_the_noise_law(tmp_path):
    cid = NOISE_DRIVEN[0]
    runner = CliRunner()
    args = ["verify", cid, "--out", str(tmp_path), "--quiet", "--noise-distribution",
            "rademacher"]
    first = runner.invoke(main, args)
    assert first.exit_code == 0, first.output
    rows = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert rows and {r["noise_distribution"] for r in rows} == {"rademacher"}
    assert json.loads((tmp_path / "run.json").read_text())["noise_distribution"] == "rademacher"
    [entry] = summarize(tmp_path, [cid])
    assert entry["status"] == "complete" and entry["verdict"] == CLAIMS[cid].expected
    again = runner.invoke(main, args)  # resumed: nothing recomputed
    assert again.exit_code == 0
    assert (tmp_path / "results.jsonl").read_text().count("\n") == len(rows)
    bad = runner.invoke(main, ["verify", cid, "--out", str(tmp_path), "--noise-distribution",
                               "rademacer"])
    assert bad.exit_code == 2 and "did you mean 'rademacher'" in bad.output


@pytest.mark.slow
@pytest.mark.parametrize("dist", ["rademacher", "uniform"])
def test_every_verdict_holds_under_another_noise_law(dist, tmp_path):
    """The whole catalogue and its mutants at the smoke budget (minutes)."""
    from bilevel_theory.verify import run_suite

    results = run_suite(budget="smoke", out=tmp_path, workers=2, progress=False,
                        noise_distribution=dist, mutants=True)
    differ = [(r.id, r.verdict, r.expected) for r in results if not r.as_expected]
    assert not differ
    assert len(results) == len(CLAIMS) + sum(len(c.mutants) for c in CLAIMS.values())
