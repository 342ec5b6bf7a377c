"""FedNest's Fig. 2(c) (``fednest.rounds_vs_local_steps`` in
``verify/claims/fednest/local_steps.py``): the law is the τ-exponent of Thm 3.1's ``1/(ᾱK)``
term at ``α_k = τα_i`` derived with sympy, the runs stay inside Thm 3.1's conditions with the
target above its other terms, the rounds are the ledger's, and on a short grid the claim holds
while its mutant (the local step divided by τ) is caught."""

from __future__ import annotations

import numpy as np
import pytest

from bilevel_theory import rates
from bilevel_theory.verify.claims import CLAIMS as CATALOGUE
from bilevel_theory.verify.claims.fednest import local_steps as LS
from bilevel_theory.verify.claims.fednest.convergence import _bilevel_rate_problem
from bilevel_theory.verify.verdict import assess

CID = "fednest.rounds_vs_local_steps"


def test_claim_loads_with_the_derived_law():
    c = CATALOGUE[CID]
    assert c.role == "confirmation" and c.kind == "at_most" and c.variable == r"\tau"
    b = rates.BOUNDS["fednest.thm31_rounds_vs_tau"]
    assert rates.leading_exponent(b.expr, b.symbol("tau")) == -1
    assert rates.leading_exponent(b.expr, b.symbol("epsilon")) == -1
    assert c.law.value == -1.0 and c.tolerance == 0.1
    assert [m.name for m in c.mutants] == ["local_step_over_tau"]
    assert "Fig. 2(c)" in c.source and "FEDNEST-R13" in c.touches


@pytest.mark.parametrize("budget", ["smoke", "standard", "full"])
def test_conditions_hold_at_every_budget(budget):
    for r in CATALOGUE[CID].check_conditions(budget):
        assert r["holds"], r


def test_setting_keeps_the_bound_s_other_terms_below_the_target():
    prob, s = _bilevel_rate_problem(), LS._local_step_setting()
    g0 = np.asarray(prob.hypergradient(np.ones(prob.dim_x)))
    assert s["g0"] == pytest.approx(float(g0 @ g0))
    assert s["eps"] == pytest.approx(LS.TARGET_FRACTION * float(g0 @ g0))
    assert s["b"] ** 2 <= s["eps"] / 100
    # the round step at the largest τ is a quarter of the descent cap 1/(2L_Φ)
    hp = LS._hyperparameters(max(LS.TAU_GRID))
    assert hp["outer_step"] * prob.constants["L_phi"] == pytest.approx(0.125)
    assert hp["local_steps"] == max(LS.TAU_GRID) and hp["neumann_steps"] == s["N"]
    # the mutant holds the round step at the local step at every τ
    assert (LS._hyperparameters(8, fixed_round_step=True)["outer_step"]
            == LS._hyperparameters(1)["outer_step"])


def test_rounds_are_the_ledger_s_and_every_replicate_reaches_the_target():
    m = LS.rounds_to_target(8, 6, 3)
    assert np.all(np.isfinite(m["value"])) and not m["diverged"].any()
    s = LS._local_step_setting()
    # an epoch executes 2T + N' + 3 rounds, N' ~ U{0, …, N − 1} (FEDNEST-R1)
    per_epoch = m["value"] / m["epochs"]
    mean = 2 * LS.TAU_INNER + (s["N"] - 1) / 2 + 3
    assert np.all(np.abs(per_epoch - mean) < 1.0)
    assert np.all(m["floor_ratio"] < 0.2)
    again = LS.rounds_to_target(8, 6, 3)
    np.testing.assert_array_equal(m["value"], again["value"])


def test_claim_holds_and_mutant_is_caught_on_a_short_grid():
    c = CATALOGUE[CID]
    x = (2, 4, 8)
    for claim, expected in ((c, "holds"), (c.under("local_step_over_tau"), "violated")):
        metrics = [claim.measure(t, 12, 500 + i, "numpy") for i, t in enumerate(x)]
        assert assess(claim, x, metrics).verdict == expected, claim.id
