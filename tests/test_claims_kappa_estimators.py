"""The estimator bounds swept in κ_g (FedNest Lemma 2.2, FedMBO Prop. 1, AFBO Thm 4.1's b),
Gao's Hessian-vector count per estimate, and the round counts in their second variable: the
instances have exactly the swept κ_g, the measures equal their closed forms, and each claim and
mutant reaches its expected verdict on a short grid."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bilevel_theory.verify.claims import CLAIMS as CATALOGUE
from bilevel_theory.verify.claims.afbo import bias as AB
from bilevel_theory.verify.claims.fedmbo import bias as FB
from bilevel_theory.verify.claims.fedmbo.common import kappa_scalar
from bilevel_theory.verify.claims.fednest import communication as FC
from bilevel_theory.verify.claims.fednest import kappa as FK
from bilevel_theory.verify.claims.fednest.estimator import deviation_closed_form
from bilevel_theory.verify.claims.gao import oracle as GO

NEW = ("fednest.ihgp_deviation_vs_kappa", "fednest.indirect_bias_vs_kappa",
       "fedmbo.phe_bias_bound_vs_kappa", "afbo.aphe_bias_vs_kappa",
       "gao.hvp_per_estimate_vs_kappa", "fednest.rounds_per_epoch_vs_T",
       "lfednest.rounds_per_epoch_vs_N")


@pytest.mark.parametrize("cid", NEW)
def test_claims_are_in_the_catalogue_with_a_mutant_and_clean_texts(cid):
    c = CATALOGUE[cid]
    assert c.mutants and all(m.kind for m in c.mutants)
    for text in (c.source, c.schedule, c.reason, *(m.change for m in c.mutants)):
        for banned in ("PAPERS" + ".md", "DESIGN", ".txt", "issue #"):
            assert banned not in text


@pytest.mark.parametrize("kappa_g", [1.0, 1.5, 4.0, 16.0, 64.0])
def test_scalar_family_has_exactly_the_swept_kappa(kappa_g):
    c = kappa_scalar(kappa_g).constants
    assert c["mu_g"] == 1.0
    assert c["ell_g1"] == pytest.approx(kappa_g, rel=1e-12)
    assert c["kappa_g"] == pytest.approx(kappa_g, rel=1e-12)
    assert c["ell_f1"] == 0.0 and c["ell_f0"] == 1.0


@pytest.mark.parametrize("bad", [0.5, -1.0, float("nan"), "2"])
def test_scalar_family_rejects_kappa_below_one(bad):
    with pytest.raises(ValueError, match="kappa_g"):
        kappa_scalar(bad)


@pytest.mark.parametrize("kappa_g", [1.0, 2.0, 8.0])
def test_deviation_matches_its_closed_form_and_is_largest_at_kappa_one(kappa_g):
    out = FK.ihgp_deviation_vs_kappa(kappa_g, 4, 0)
    exact = deviation_closed_form(FK.DEV_N, 1.0, kappa_g)
    assert out["closed_form"][0] == pytest.approx(exact)
    assert out["value"].mean() == pytest.approx(exact, rel=0.02)
    assert exact <= deviation_closed_form(FK.DEV_N, 1.0, 1.0) == pytest.approx(
        2 * (1 - 1 / FK.DEV_N))


@pytest.mark.parametrize("kappa_g", [1.5, 4.0, 16.0])
def test_indirect_bias_is_the_closed_form_and_above_the_stated_zero(kappa_g):
    out = FK.indirect_bias_vs_kappa(kappa_g, 2, 0)
    rho = 1 - 1 / kappa_g
    assert out["value"][0] == pytest.approx(math.sqrt(kappa_g ** 2 - kappa_g) * rho ** FK.BIAS_N)
    assert out["bound"][0] == 0.0
    repaired = FK.indirect_bias_vs_kappa(kappa_g, 2, 0, lip="ell_f0")
    assert out["value"][0] / repaired["bound"][0] == pytest.approx(math.sqrt(rho))


@pytest.mark.parametrize("kappa_g", [2.0, 8.0, 32.0])
def test_phe_worst_case_ratio_is_one_minus_one_over_kappa(kappa_g):
    out = FB.phe_bias_bound_vs_kappa(kappa_g, 16, 0)
    ratio = out["value"].mean() / out["bound"][0]          # Monte-Carlo: ~1.6% sd at κ_g = 2
    assert ratio == pytest.approx(1 - 1 / kappa_g, abs=0.05 / kappa_g)
    low = FB.phe_bias_bound_vs_kappa(kappa_g, 16, 0, constant="kappa_g_minus_1")
    assert low["value"].mean() / low["bound"][0] == pytest.approx(ratio * (kappa_g / (
        kappa_g - 1)) ** 2, rel=1e-12)
    with pytest.raises(ValueError, match="constant"):
        FB.phe_bias_bound_vs_kappa(kappa_g, 2, 0, constant="kappa")


@pytest.mark.parametrize("kappa_g", [2.5, 6.0, 16.0])
def test_afbo_kappa_family_moves_only_kappa(kappa_g):
    p = AB.kappa_problem(kappa_g)
    c, c0 = p.constants, AB.kappa_problem(3.0).constants
    assert p.clients == AB.KAPPA_M
    assert c["kappa_g"] == pytest.approx(kappa_g, rel=1e-9)
    assert c["mu_g"] == pytest.approx(c0["mu_g"]) and c["ell_f1"] == pytest.approx(c0["ell_f1"])


def test_afbo_kappa_family_rejects_kappa_below_the_family():
    with pytest.raises(ValueError, match="kappa_g"):
        AB.kappa_problem(2.0)


def test_hvp_count_is_the_smallest_q_of_the_closed_form_bias():
    kappa = 4.0
    out = GO.hvp_per_estimate(kappa, 4, 0)
    P = GO._exact_instance(kappa)
    g = GO.gao_constants(P)
    theta = GO.THETA_L1 / g["L1"]
    x, y = GO._points(P, 4)
    C = P.host.client(0)
    A, B = C["A"], C["B"]
    for r in range(4):
        v = C["R"].T @ x[r] + C["S"] @ y[r] + C["q"]          # ∇_y f at the point
        M = np.eye(len(A)) - theta * A
        q = next(q for q in range(500) if np.sum((B.T @ np.linalg.solve(
            A, np.linalg.matrix_power(M, q + 1) @ v)) ** 2) <= GO.EPSILON)
        assert out["hvp_per_estimate"][r] == q
    over = GO.hvp_per_estimate(kappa, 4, 0, per_kappa=True)
    np.testing.assert_allclose(over["value"], out["value"] / g["kappa"])


def test_rounds_vs_T_and_vs_N_are_the_section_counts_and_the_mutants_are_not():
    for T in (1, 4):
        out = FC.fednest_rounds_vs_T(T, 2, 0)
        assert out["value"][0] == out["predicted"][0] == 2 * T + FC.ROUNDS_N + 3
        assert FC.fednest_rounds_vs_T(T, 2, 0, inner_solver="sgd")["value"][0] == (
            T + FC.ROUNDS_N + 3)
    for N in (1, 6):
        out = FC.lfednest_rounds_vs_N(N, 2, 0)
        assert out["value"][0] == out["predicted"][0] == FC.ROUNDS_T + 1
    assert FC.lfednest_rounds_vs_N(6, 8, 0, algorithm="fednest_sgd")["value"][0] > FC.ROUNDS_T + 1


@pytest.mark.parametrize("cid, grid", [
    ("fednest.ihgp_deviation_vs_kappa", (1.0, 2.0, 8.0)),
    ("fednest.indirect_bias_vs_kappa", (2.0, 8.0)),
    ("fedmbo.phe_bias_bound_vs_kappa", (2.0, 16.0)),
    ("afbo.aphe_bias_vs_kappa", (2.5, 4.0, 12.0)),
    ("gao.hvp_per_estimate_vs_kappa", (8.0, 32.0, 128.0)),
])
def test_claim_and_mutants_reach_their_verdicts_on_a_short_grid(cid, grid, short_grid_verdicts):
    short_grid_verdicts(CATALOGUE[cid], grid, 8)
