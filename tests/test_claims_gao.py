"""Claim-specific checks of ``verify/claims/gao.py``: the sweep points sit exactly on the
corollaries' schedules (integer periods, inside the [NOTE] ranges), the laws are the derived
ones, the instances are what the claims say, and the text renders."""

from __future__ import annotations

import math

import numpy as np
import pytest
from bilevel_theory.verify.claim import BUDGETS
from bilevel_theory.verify.claims import gao as G

from bilevel_theory import run
from bilevel_theory.gao import biased_stationary_point, gao_constants

CLAIMS = {c.id: c for c in G.CLAIMS}


def test_ids_and_expected():
    assert all(cid.startswith("gao.") for cid in CLAIMS)
    assert len(CLAIMS) == len(G.CLAIMS)
    for c in G.CLAIMS:
        assert c.expected in ("holds", "violated")
        if c.expected != "holds":
            assert "floor" in c.reason and "TBD" not in c.reason


def test_text_renders_in_mathtext():
    mathtext = pytest.importorskip("matplotlib.mathtext")
    parser = mathtext.MathTextParser("path")
    for c in G.CLAIMS:
        for text in (c.statement, c.quantity, c.variable, c.law.latex):
            parser.parse(f"${text}$")


def test_laws_are_the_derived_exponents():
    """≈ exact: the sympy derivations give the corollaries' rates."""
    assert G.LAW_M_T.value == pytest.approx(-1 / 2)
    assert G.LAW_M_C.value == pytest.approx(-2 / 3)
    assert G.LAW_V_T.value == pytest.approx(-2 / 3)
    assert G.LAW_V_C.value == pytest.approx(-1)
    assert G.LAW_SPEEDUP.value == 0
    assert G.LAW_PRODUCT.value == 0 and G.PRODUCT_EXPONENT_M == pytest.approx(1 / 2)
    P = G.neumann_instance()
    from bilevel_theory.gao import default_theta
    assert G.LAW_NEUMANN.value == pytest.approx(
        math.log(1 - default_theta(P) * P.constants["mu_g"]))


@pytest.mark.parametrize("cid,design,inverse", [
    ("gao.localbsgm_iterations_vs_epsilon", G.M_DESIGN, "epsilon_at_iterations"),
    ("gao.localbsgm_communication_vs_epsilon", G.M_DESIGN, "epsilon_at_rounds"),
    ("gao.localbsgm_heterogeneous_floor", G.M_DESIGN, "epsilon_at_iterations"),
    ("gao.localbsgvrm_iterations_vs_epsilon", G.V_DESIGN, "epsilon_at_iterations"),
    ("gao.localbsgvrm_communication_vs_epsilon", G.V_DESIGN, "epsilon_at_rounds"),
    ("gao.localbsgvrm_heterogeneous_floor", G.V_DESIGN, "epsilon_at_iterations"),
])
def test_sweep_points_are_exactly_on_the_schedule(cid, design, inverse):
    """Every grid value maps to an ε where p = c_p/(Kε^{1/2}) is an integer ≥ 2 and the
    schedule's T (or T/p) equals the grid value: no rounding of the corollary's schedule."""
    claim = CLAIMS[cid]
    P = G.heterogeneous() if "heterogeneous" in cid else G.homogeneous(G.DEVICES)
    for budget in BUDGETS:
        for x in claim.grid[budget]:
            eps = getattr(design, inverse)(x)
            T, hp, s = design.hyperparameters(P, eps)
            raw_p = design.constants(P)["c_p"] / (P.clients * math.sqrt(eps))
            assert raw_p == pytest.approx(hp["period"], rel=1e-9) and hp["period"] >= 2
            cost = T if inverse == "epsilon_at_iterations" else T / hp["period"]
            assert cost == pytest.approx(x, rel=1e-9)
            assert not s["notes"]


@pytest.mark.parametrize("K", [1, 2, 4, 8, 16])
def test_localbsgm_steps_inside_theorem1_eta_conditions(K):
    """Cor 1's η = c_η Kε with the chosen constants satisfies Thm 1's η < min{1/α, 1/β,
    1/(2ρ₁L_Φ), 1/(3p(α²+β²)^{1/4}(ρ₁²+ρ₂²)^{1/4}L̂^{1/2}), 1} (for the ρ's used)."""
    cases = [(G.K_DESIGN, G.homogeneous(K), G.K_DESIGN.eps_ref)]
    if K == G.DEVICES:
        cases += [(G.M_DESIGN, G.homogeneous(K), G.M_DESIGN.eps_ref * (2 / p) ** 2)
                  for p in G.PERIODS["full"]]
    for design, P, eps in cases:
        g = gao_constants(P)
        T, hp, _ = design.hyperparameters(P, eps)
        a, b, r1, r2, p = hp["alpha"], hp["beta"], hp["rho1"], hp["rho2"], hp["period"]
        limit = min(1 / a, 1 / b, 1 / (2 * r1 * g["L_Phi"]),
                    1 / (3 * p * (a * a + b * b) ** 0.25 * (r1 * r1 + r2 * r2) ** 0.25
                         * g["L_hat"] ** 0.5), 1.0)
        assert hp["eta"] < limit and p >= 2
        assert hp["theta"] < 1 / g["L1"]


def test_localbsgvrm_step_is_constant_over_the_run():
    """At every sweep point T < K²p³, so Thm 2's η_t = 1/(L̂p) for t ≤ T (schedule text)."""
    P = G.homogeneous(G.DEVICES)
    L_hat = gao_constants(P)["L_hat"]
    for p in G.V_PERIODS["full"]:
        T, hp, _ = G.V_DESIGN.hyperparameters(P, G._eps_of_period(G.V_DESIGN, p))
        assert T < G.DEVICES ** 2 * p ** 3
        assert hp["eta"](1) == pytest.approx(1 / (L_hat * p))
        assert hp["eta"](T) == pytest.approx(1 / (L_hat * p))
        assert hp["alpha"] * hp["eta"](1) ** 2 < 1


def test_homogeneous_instances_share_phi_and_have_no_floor():
    x = np.array([[0.3, -1.2], [2.0, 0.5]])
    ref = G.homogeneous(1)
    for K in (2, 8, 16):
        P = G.homogeneous(K)
        assert P.clients == K and P.constants["sigma_g2"] == pytest.approx(0.0, abs=1e-20)
        np.testing.assert_allclose(P.hypergradient(x), ref.hypergradient(x), rtol=1e-14)
    assert biased_stationary_point(G.homogeneous(8), neumann_steps=None)[1] < 1e-20


def test_heterogeneous_floor_is_positive_and_epsilon_independent():
    """The floor the heterogeneous claims rely on: ‖∇Φ(x̃)‖² > 0 with exact local inverses."""
    P = G.heterogeneous()
    _, floor = biased_stationary_point(P, neumann_steps=None)
    assert 0.03 < floor < 0.1
    assert P.constants["sigma_g2"] > 1.0


def test_localbsgm_ledger_rounds_equal_t_over_p():
    """≈ exact: the communication rounds the claims use are ⌊T/p⌋ of the schedule."""
    P = G.homogeneous(G.DEVICES)
    T, hp, s = G.M_DESIGN.hyperparameters(P, G.M_DESIGN.eps_ref)
    tr = run("localbsgm", P, rounds=T, replicates=1, seed=0, **hp)
    assert tr.ledger.totals()["rounds"] == T // hp["period"] == s["communication"]


def test_neumann_bias_measure_is_exact_and_below_delta_q():
    out = G.neumann_bias_with_bound(10, 3, seed=0)
    assert out["value"].shape == (3,) and np.all(out["value"] < out["bound"])
    again = G.neumann_bias(10, 3, seed=0)["value"]
    np.testing.assert_array_equal(again, out["value"])  # noise-free oracle: deterministic
