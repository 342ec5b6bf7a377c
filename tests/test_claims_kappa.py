"""The κ-sweep claims (``verify/claims/gao_kappa.py``): they load from the catalogue under the
paper's prefix, the instances have exactly the swept κ, the runs follow Cor 1's κ-scaled
schedule, and the mutant's floor grows with κ while the schedule's does not."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bilevel_theory.gao import biased_stationary_point, gao_constants
from bilevel_theory.verify.claims import CLAIMS as CATALOGUE
from bilevel_theory.verify.claims import gao_kappa as GK
from bilevel_theory.verify.verdict import assess

CID = "gao.kappa_localbsgm_iterations"


def test_claims_load_from_the_catalogue_with_the_paper_prefix():
    assert CID in CATALOGUE
    c = CATALOGUE[CID]
    assert c is next(c for c in GK.CLAIMS if c.id == CID)
    assert c.paper == "Gao 2022" and c.role == "confirmation" and c.kind == "at_most"
    assert [m.name for m in c.mutants] == ["q_fixed"] and c.mutants[0].kind == "truncation"
    for text in (c.source, c.schedule, *(m.change for m in c.mutants)):
        for banned in ("PAPERS" + ".md", "DESIGN", ".txt", "issue #"):
            assert banned not in text


def test_law_is_cor1_kappa_exponent_spent_by_the_schedule():
    c = next(c for c in GK.CLAIMS if c.id == CID)
    assert c.law.value == 0.0 and "κ-exponent 5" in c.law.derivation


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


def test_conditions_inside_hold_and_the_left_ones_say_why():
    c = next(c for c in GK.CLAIMS if c.id == CID)
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


def test_measure_and_mutant_give_the_expected_verdicts_on_a_short_grid():
    """A cheap version of the smoke sweep (κ ≤ 3.5, 8 replicates): the claim holds, the
    mutant is violated."""
    c = next(c for c in GK.CLAIMS if c.id == CID)
    x = (2.5, 3.0, 3.5)
    for claim, expected in ((c, "holds"), (c.under("q_fixed"), "violated")):
        metrics = [claim.measure(k, 8, 100 + i, "numpy") for i, k in enumerate(x)]
        assert all(np.all(m["diverged"] == 0) for m in metrics)
        assert assess(claim, x, metrics).verdict == expected


def test_measure_rejects_an_unknown_mutant():
    with pytest.raises(ValueError, match="`mutant` must be"):
        GK.localbsgm_vs_kappa(3.0, 2, 0, mutant="theta_half")
