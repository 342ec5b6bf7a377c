"""The κ-sweep claims (``verify/claims/gao/kappa.py``): they load from the catalogue under the
paper's prefix, the instances have exactly the swept κ, the runs follow Cor 1's and Cor 2's
κ-scaled schedules, and the mutant's floor grows with κ while the schedule's does not."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bilevel_theory.gao import biased_stationary_point, gao_constants
from bilevel_theory.verify.claims import CLAIMS as CATALOGUE
from bilevel_theory.verify.claims.gao import kappa as GK
from bilevel_theory.verify.verdict import assess

CID = "gao.kappa_localbsgm_iterations"
CID_VRM = "gao.kappa_localbsgvrm_iterations"
BY_ID = {c.id: c for c in GK.CLAIMS}


@pytest.mark.parametrize("cid", [CID, CID_VRM])
def test_claims_load_from_the_catalogue_with_the_paper_prefix(cid):
    assert cid in CATALOGUE
    c = CATALOGUE[cid]
    assert c is BY_ID[cid]
    assert c.paper == "Gao 2022" and c.role == "confirmation" and c.kind == "at_most"
    assert [m.name for m in c.mutants] == ["q_fixed"] and c.mutants[0].kind == "truncation"
    for text in (c.source, c.schedule, *(m.change for m in c.mutants)):
        for banned in ("PAPERS" + ".md", "DESIGN", ".txt", "issue #"):
            assert banned not in text


@pytest.mark.parametrize("cid, power", [(CID, 5), (CID_VRM, 3)])
def test_law_is_the_corollary_kappa_exponent_spent_by_the_schedule(cid, power):
    c = BY_ID[cid]
    assert c.law.value == 0.0 and f"κ-exponent {power}" in c.law.derivation


@pytest.mark.parametrize("kappa", [2.5, 3.0, 4.0, 6.0])
def test_instance_has_exactly_the_swept_kappa(kappa):
    P = GK.instance(kappa)
    g = gao_constants(P)
    assert g["kappa"] == pytest.approx(kappa, rel=1e-9)
    assert P.clients == GK.DEVICES


def test_instance_rejects_kappa_below_the_family():
    with pytest.raises(ValueError, match="`kappa` must be >"):
        GK.instance(1.0)


def test_schedule_scales_with_kappa_as_cor1_and_remark1_say():
    s0, s = GK.schedule(GK.KAPPA_REF), GK.schedule(4.0)
    r = 4.0 / GK.KAPPA_REF
    assert s0["rounds"] == GK.T_REF
    assert s["rounds"] == math.ceil(GK.T_REF * (1 - 1e-9) * r ** 5)
    assert s["rho1"] == pytest.approx(s0["rho1"] / r ** 5)
    assert s["rho2"] == pytest.approx(s0["rho2"] / r ** 2)
    assert s["period"] == s0["period"] == GK.P_REF and s["eta"] == s0["eta"] == GK.ETA_REF
    assert s["theta"] * gao_constants(GK.instance(4.0))["L1"] == pytest.approx(0.8)
    assert s["neumann_steps"] > s0["neumann_steps"]          # Q ∝ κ log(1/ε)


def test_vrm_schedule_scales_with_kappa_as_cor2_thm2_and_remark3_say():
    s0, s = GK.schedule_vrm(GK.KAPPA_REF), GK.schedule_vrm(4.0)
    r = 4.0 / GK.KAPPA_REF
    L0, L1 = (gao_constants(GK.instance(k))["L1"] for k in (GK.KAPPA_REF, 4.0))
    assert s0["rounds"] == GK.T_REF_VRM
    assert s["rounds"] == math.ceil(GK.T_REF_VRM * (1 - 1e-9) * r ** 3)
    assert s0["rho1"] == 1.0 and s["rho1"] == pytest.approx(1 / r ** 2)
    assert s["rho2"] == s0["rho2"] == 1.0
    assert s["period"] == s["minibatch"] == GK.P_REF
    assert s["alpha"] / s0["alpha"] == pytest.approx((L1 / L0) ** 2, rel=0.05)   # α ∝ L̂²
    assert s["eta"](1) / s0["eta"](1) == pytest.approx(L0 / L1)                  # η_t ∝ 1/L̂
    assert s["neumann_steps"] > s0["neumann_steps"]


@pytest.mark.parametrize("cid", [CID, CID_VRM])
def test_conditions_inside_hold_and_the_left_ones_say_why(cid):
    c = BY_ID[cid]
    for budget in ("smoke", "full"):
        for r in c.check_conditions(budget):
            assert r["holds"] or (not r["inside"] and r["note"]), r


def test_schedule_floor_is_flat_and_the_mutant_floor_grows_with_kappa():
    """Closed form (``biased_stationary_point``): at Cor 1's Q the truncation floor stays at
    the ε scale over the grid; with Q fixed at κ₀ it grows several-fold."""
    q0 = GK.schedule(GK.KAPPA_REF)["neumann_steps"]
    floors, mutant = [], []
    for k in (GK.KAPPA_REF, 4.0):
        s, P = GK.schedule(k), GK.instance(k)
        floors.append(biased_stationary_point(P, s["theta"], s["neumann_steps"])[1])
        mutant.append(biased_stationary_point(P, s["theta"], q0)[1])
    assert max(floors) < 2 * GK.EPSILON and floors[1] < 1.5 * floors[0]
    assert mutant[1] > 5 * mutant[0]


@pytest.mark.parametrize("cid, x, reps", [(CID, (2.5, 3.0, 3.5), 8),
                                          (CID_VRM, (2.5, 3.5, 5.0), 32)])
def test_measure_and_mutant_give_the_expected_verdicts_on_a_short_grid(cid, x, reps):
    """A cheap version of the smoke sweep (three points, fewer replicates): the claim holds,
    the mutant is violated."""
    c = BY_ID[cid]
    for claim, expected in ((c, "holds"), (c.under("q_fixed"), "violated")):
        metrics = [claim.measure(k, reps, 100 + i, "numpy") for i, k in enumerate(x)]
        assert all(np.all(m["diverged"] == 0) for m in metrics)
        assert assess(claim, x, metrics).verdict == expected


def test_measure_rejects_an_unknown_mutant():
    for measure in (GK.localbsgm_vs_kappa, GK.localbsgvrm_vs_kappa):
        with pytest.raises(ValueError, match="`mutant` must be"):
            measure(3.0, 2, 0, mutant="theta_half")
