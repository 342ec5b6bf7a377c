"""FedNest's κ-sweeps of Cor 3.1's and Cor 3.2's iteration complexities
(``fednest.kappa_iterations``, ``fednest.minimax_kappa_iterations`` in
``verify/claims/fednest/kappa_complexity.py``): the laws are the κ-exponents of ``K(ε)`` derived
with sympy, the schedules grow with κ as the corollaries say and stay inside Thm 3.1's step
conditions, and on a short grid each claim holds while its mutant (iterations not grown with κ)
is caught."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bilevel_theory import rates
from bilevel_theory.verify.claims import CLAIMS as CATALOGUE
from bilevel_theory.verify.claims.fednest import kappa_complexity as NK
from bilevel_theory.verify.verdict import assess

CID = "fednest.kappa_iterations"


def test_claim_loads_from_the_catalogue_with_the_paper_prefix():
    c = CATALOGUE[CID]
    assert c.paper == "FedNest 2022" and c.role == "confirmation" and c.kind == "at_most"
    assert [m.name for m in c.mutants] == ["iterations_fixed"]
    assert c.mutants[0].kind == "schedule"
    for text in (c.source, c.schedule, *(m.change for m in c.mutants)):
        for banned in ("PAPERS" + ".md", "DESIGN", ".txt", "issue #"):
            assert banned not in text


def test_law_is_cor31s_kappa_exponent_spent_by_the_schedule():
    b = rates.BOUNDS["fednest.cor31_iterations"]
    assert rates.leading_exponent(b.expr, b.symbol("kappa_g")) == 5
    assert rates.leading_exponent(b.expr, b.symbol("epsilon")) == -2
    c = CATALOGUE[CID]
    assert c.law.value == 0.0 and "κ_g-exponent 5" in c.law.derivation


def test_schedule_scales_with_kappa_as_cor31_says():
    d = NK.BILEVEL
    s0, s = d.hyperparameters(d.kappa_ref), d.hyperparameters(2.6)
    r = 2.6 / d.kappa_ref
    assert s0["K"] == NK.K_REF and s["K"] == math.ceil(NK.K_REF * (1 - 1e-9) * r ** 5)
    # α = ᾱ/√K with ᾱ ∝ κ_g^{-5/2}: αK = ᾱ√K is the same at every κ_g (up to K's ceiling)
    ak0, ak = s0["outer_step"] * s0["K"], s["outer_step"] * s["K"]
    assert ak == pytest.approx(ak0, rel=1e-3)
    assert s["inner_steps"] == math.ceil(2.6 ** 4)
    assert s["neumann_steps"] == math.ceil(2.6 * math.log(s["K"]))
    assert s["inner_step"] == pytest.approx(NK.BETA_BAR * s["outer_step"] / s["inner_steps"])
    x_star = np.asarray(d.instance(2.6).x_star)
    assert np.linalg.norm(s["x0"] - x_star) == pytest.approx(NK.X0_OFFSET)


@pytest.mark.parametrize("cid", ["fednest.kappa_iterations", "fednest.minimax_kappa_iterations"])
def test_conditions_hold_at_every_budget(cid):
    c = CATALOGUE[cid]
    for budget in ("smoke", "standard", "full"):
        for r in c.check_conditions(budget):
            assert r["holds"], r


def test_mutant_keeps_the_iteration_count_and_thm31s_step_at_it():
    s = NK.BILEVEL.hyperparameters(2.0, NK.K_REF)
    assert s["K"] == NK.K_REF
    assert s["outer_step"] == pytest.approx(NK.BILEVEL.alpha_bar(2.0) / math.sqrt(NK.K_REF))


@pytest.mark.parametrize("cid, x", [("fednest.kappa_iterations", (1.4, 1.6, 1.8)),
                                     ("fednest.minimax_kappa_iterations", (2.0, 4.0, 6.0))])
def test_measure_and_mutant_give_the_expected_verdicts_on_a_short_grid(cid, x):
    """Three points, few replicates: the claim holds (A does not grow with κ), the mutant is
    caught (A grows as the transient's κ^{p/2})."""
    c = CATALOGUE[cid]
    for claim, expected in ((c, "holds"), (c.under("iterations_fixed"), "violated")):
        metrics = [claim.measure(k, 12, 300 + i, "numpy") for i, k in enumerate(x)]
        assert all(np.all(m["diverged"] == 0) for m in metrics)
        assert assess(claim, x, metrics).verdict == expected, claim.id


def test_measure_is_deterministic_for_a_seed():
    a = NK.stationarity_vs_kappa(1.4, 4, 7)
    b = NK.stationarity_vs_kappa(1.4, 4, 7)
    np.testing.assert_array_equal(a["value"], b["value"])


MM = "fednest.minimax_kappa_iterations"


def test_minimax_claim_loads_with_cor32s_law():
    c = CATALOGUE[MM]
    assert c.role == "confirmation" and c.kind == "at_most" and c.law.value == 0.0
    assert "κ_f-exponent 2" in c.law.derivation
    b = rates.BOUNDS["fednest.cor32_iterations"]
    assert rates.leading_exponent(b.expr, b.symbol("kappa_f")) == 2
    assert [m.name for m in c.mutants] == ["iterations_fixed"]


@pytest.mark.parametrize("kappa_f", [2.0, 5.0, 16.0])
def test_minimax_instance_has_exactly_the_swept_kappa_and_phi_barely_moves(kappa_f):
    P = NK.minimax_instance(kappa_f)
    assert P.constants["kappa_g"] == pytest.approx(kappa_f, rel=1e-9)
    assert P.constants["mu_g"] == pytest.approx(1.0)
    ref = NK.minimax_instance(2.0).constants
    assert P.constants["L_phi"] == pytest.approx(ref["L_phi"], rel=0.1)


def test_minimax_schedule_scales_with_kappa_as_cor32_says():
    d = NK.MINIMAX
    s0, s = d.hyperparameters(2.0), d.hyperparameters(8.0)
    assert s0["K"] == NK.K_REF and s["K"] == math.ceil(NK.K_REF * (1 - 1e-9) * 16.0)
    assert s["inner_steps"] == 8
    assert s["outer_step"] * s["K"] == pytest.approx(s0["outer_step"] * s0["K"], rel=1e-9)


@pytest.mark.parametrize("bad", [1.0, 30.0, "4"])
def test_minimax_instance_rejects_kappa_outside_the_family(bad):
    with pytest.raises(ValueError, match="`kappa_f` must be"):
        NK.minimax_instance(bad)
