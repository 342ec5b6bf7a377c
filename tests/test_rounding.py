"""The rounding audit (verify.rounding) re-decides stored claims under relative perturbations
of their measurements: it reproduces the stored verdicts, keeps them under a perturbation far
below their margins and reports a change under one that crosses them."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from bilevel_theory.reports.cli import main as cli
from bilevel_theory.verify import rounding

DEMO = "bilevel_theory.verify.claims.demo:DEMO_CLAIMS"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    out = tmp_path_factory.mktemp("rounding")
    result = CliRunner().invoke(cli, ["verify", "demo.variance_vs_n", "--budget", "smoke",
                                      "--mutants", "--seed", "0", "--out",
                                      str(out / "seed-0"), "--catalogue", DEMO])
    assert result.exit_code in (0, 1), result.output
    return out


def test_reproduces_and_keeps_the_verdicts_under_rounding(store):
    rows = rounding.audit(store, ["demo.variance_vs_n"], "smoke", seeds=(0,), rel=1e-9,
                          draws=3, catalogue=DEMO)
    assert len(rows) == 2  # the claim and its mutant
    assert all(r["reproduced"] and r["status"] == "stable" for r in rows), rows
    assert {r["verdict"] for r in rows} == {"holds", "violated"}


def test_a_perturbation_across_the_margin_is_reported(store):
    rows = rounding.audit(store, ["demo.variance_vs_n"], "smoke", seeds=(0,), rel=0.99,
                          draws=6, catalogue=DEMO)
    claim = next(r for r in rows if "@" not in r["id"])
    assert claim["reproduced"]
    assert claim["status"] == "changed", claim


def test_integer_metrics_are_not_perturbed():
    points = {0: [{"metrics": {"value": 2.5, "rounds": 7.0, "diverged": 0.0}}]}
    out = rounding.perturbed(points, 0.1, np.random.default_rng(0))[0][0]["metrics"]
    assert out["rounds"] == 7.0 and out["diverged"] == 0.0
    assert out["value"] != 2.5 and abs(out["value"] / 2.5 - 1) <= 0.1 * 2.1
