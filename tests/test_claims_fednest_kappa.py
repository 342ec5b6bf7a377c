"""FedNest's κ_g-sweep of Cor 3.1's iteration complexity (``fednest.kappa_iterations`` in
``verify/claims/fednest/kappa.py``): the law is the κ_g-exponent of ``K(ε)`` derived with sympy,
the schedule grows with κ_g as the corollary says and stays inside Thm 3.1's step conditions,
and on a short grid the claim holds while the mutant (iterations not grown with κ_g) is
caught."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bilevel_theory import rates
from bilevel_theory.verify.claims import CLAIMS as CATALOGUE
from bilevel_theory.verify.claims.fednest import kappa as NK
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
    s0, s = NK.cor31_kappa_schedule(NK.KAPPA_REF), NK.cor31_kappa_schedule(2.6)
    r = 2.6 / NK.KAPPA_REF
    assert s0["K"] == NK.K_REF and s["K"] == math.ceil(NK.K_REF * (1 - 1e-9) * r ** 5)
    # α = ᾱ/√K with ᾱ ∝ κ_g^{-5/2}: αK = ᾱ√K is the same at every κ_g (up to K's ceiling)
    ak0, ak = s0["outer_step"] * s0["K"], s["outer_step"] * s["K"]
    assert ak == pytest.approx(ak0, rel=1e-3)
    assert s["inner_steps"] == math.ceil(2.6 ** 4)
    assert s["neumann_steps"] == math.ceil(2.6 * math.log(s["K"]))
    assert s["inner_step"] == pytest.approx(NK.BETA_BAR * s["outer_step"] / s["inner_steps"])
    x_star = np.asarray(NK.instance(2.6).x_star)
    assert np.linalg.norm(s["x0"] - x_star) == pytest.approx(NK.X0_OFFSET)


def test_conditions_hold_at_every_budget():
    c = CATALOGUE[CID]
    for budget in ("smoke", "standard", "full"):
        for r in c.check_conditions(budget):
            assert r["holds"], r


def test_mutant_keeps_the_iteration_count_and_thm31s_step_at_it():
    s = NK.cor31_kappa_schedule(2.0, NK.K_REF)
    assert s["K"] == NK.K_REF
    assert s["outer_step"] == pytest.approx(NK.alpha_bar(2.0) / math.sqrt(NK.K_REF))


def test_measure_and_mutant_give_the_expected_verdicts_on_a_short_grid():
    """Three points, few replicates: the claim holds (A falls with κ_g), the mutant is caught
    (A grows as the transient's κ_g^{5/2})."""
    c = CATALOGUE[CID]
    x = (1.4, 1.6, 1.8)
    for claim, expected in ((c, "holds"), (c.under("iterations_fixed"), "violated")):
        metrics = [claim.measure(k, 12, 300 + i, "numpy") for i, k in enumerate(x)]
        assert all(np.all(m["diverged"] == 0) for m in metrics)
        assert assess(claim, x, metrics).verdict == expected, claim.id


def test_measure_is_deterministic_for_a_seed():
    a = NK.stationarity_vs_kappa(1.4, 4, 7)
    b = NK.stationarity_vs_kappa(1.4, 4, 7)
    np.testing.assert_array_equal(a["value"], b["value"])
