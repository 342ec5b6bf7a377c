"""Claim-specific checks of ``verify/claims/gao/`` (Gao, arXiv preprint 2022; the families
``truncation``, ``complexity``, ``floor``, ``comparison``): roles, mutants and readings are
declared; the sweep points sit exactly on the corollaries' schedules; the heterogeneous floors
are the closed-form ones and lie above every ε of the grids; ``Δ_Q`` is evaluated at its
tightest (a valid, nearly attained bound); the laws are the derived ones."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from bilevel_theory import run
from bilevel_theory.gao import biased_stationary_point, default_theta, gao_constants
from bilevel_theory.verify.claim import BUDGETS
from bilevel_theory.verify.claims import gao as G
from bilevel_theory.verify.claims.gao import common, comparison, complexity, floor, truncation
from bilevel_theory.verify.kit import PAPERS

#: the claims of Cor 1 / Cor 2, Remark 4 and Δ_Q (the κ-sweeps and the limit of Thm 1 are
#: checked in their own test modules)
GAO_CLAIMS = [*truncation.CLAIMS, *complexity.CLAIMS, *floor.CLAIMS, *comparison.CLAIMS]
CLAIMS = {c.id: c for c in GAO_CLAIMS}
HET = ("gao.localbsgm_heterogeneous_floor", "gao.localbsgvrm_heterogeneous_floor")


def test_roles_mutants_sources_and_readings():
    assert all(cid.startswith("gao.") for cid in CLAIMS) and len(CLAIMS) == len(GAO_CLAIMS)
    cite = PAPERS["gao"].cite("")
    for c in GAO_CLAIMS:
        assert c.role in ("confirmation", "finding", "control")
        assert c.source.startswith(cite.rsplit(",", 1)[0]), c.source
        assert c.touches and all(re.fullmatch(r"GAO-[RI]\d+", t) for t in c.touches), c.touches
        for text in (c.source, c.schedule, c.reason, *c.touches, *(m.change for m in c.mutants)):
            for banned in ("PAPERS" + ".md", "[NOTE]", "DESIGN", "000_", ".txt"):
                assert banned not in text, (c.id, banned)
        if c.role == "control":
            assert not c.mutants
        else:
            assert c.mutants, f"{c.id}: a {c.role} needs a mutant"
            assert all(m.kind for m in c.mutants), c.id
        if c.role == "finding":
            assert c.expected == "violated" and "floor" in c.reason
            assert not re.search(r"\bMeasured\b", c.reason)  # no measured numbers
        if c.window is not None:
            assert c.window_reason
    assert CLAIMS["gao.neumann_bias_vs_Q"].role == "control"
    for cid in HET:
        assert CLAIMS[cid].kind == "bounded_by" and CLAIMS[cid].role == "finding"


def test_text_renders_in_mathtext():
    mathtext = pytest.importorskip("matplotlib.mathtext")
    parser = mathtext.MathTextParser("path")
    for c in GAO_CLAIMS:
        for text in (c.statement, c.quantity, c.variable, c.law.latex):
            parser.parse(f"${text}$")


def test_laws_are_the_derived_exponents():
    """≈ exact: the sympy derivations give the corollaries' rates."""
    assert G.LAW_M_T.value == pytest.approx(-1 / 2)
    assert G.LAW_M_C.value == pytest.approx(-2 / 3)
    assert G.LAW_V_T.value == pytest.approx(-2 / 3)
    assert G.LAW_V_C.value == pytest.approx(-1)
    assert G.LAW_SPEEDUP.value == 0 and G.LAW_V_SPEEDUP.value == 0
    assert G.LAW_PRODUCT.value == 0 and G.PRODUCT_EXPONENT_M == pytest.approx(1 / 2)
    P = G.neumann_instance()
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
        T, hp, _ = G.V_DESIGN.hyperparameters(P, common._eps_of_period(G.V_DESIGN, p))
        assert T < G.DEVICES ** 2 * p ** 3
        assert hp["eta"](1) == pytest.approx(1 / (L_hat * p))
        assert hp["eta"](T) == pytest.approx(1 / (L_hat * p))
        assert hp["alpha"] * hp["eta"](1) ** 2 < 1


def test_localbsgvrm_k_sweep_scales_as_corollary_2():
    """gao.localbsgvrm_linear_speedup: at ε = 0.01 every K of every budget gets the exact
    schedule T = 1920/K, p = S = 32/K (an integer ≥ 2, T/p = 60), Thm 2's α ∝ 1/K and
    η_t = 1/(L̂p) ∝ K at every t ≤ T (T < K²p³), αη_t² < 1; no schedule note."""
    claim = CLAIMS["gao.localbsgvrm_linear_speedup"]
    assert claim.kind == "at_most" and claim.law is G.LAW_V_SPEEDUP
    for budget in BUDGETS:
        for K in claim.grid[budget]:
            P = G.homogeneous(int(K), G.SPEEDUP_NOISE)
            T, hp, s = G.KV_DESIGN.hyperparameters(P, G.KV_DESIGN.eps_ref)
            L_hat = gao_constants(P)["L_hat"]
            p = hp["period"]
            assert not s["notes"] and p >= 2 and p == hp["minibatch"] == 32 / K
            assert T == 1920 / K and T // p == 60 and T < K * K * p ** 3
            assert hp["eta"](1) == pytest.approx(1 / (L_hat * p))
            assert hp["eta"](T) == pytest.approx(K / 32 / L_hat)
            assert hp["alpha"] * K == pytest.approx(L_hat ** 2 * (1 + 1 / (3 * 32)))
            assert hp["alpha"] * hp["eta"](1) ** 2 < 1


def test_localbsgvrm_same_sample_mutant_runs_one_device_and_loses_the_averaging():
    """The same_sample mutant is the K-device schedule run on one device (identical at K = 1);
    at K = 16 its A is several times the averaged one (noise part ∝ K without averaging)."""
    one = G.localbsgvrm_vs_devices(1, 4, seed=3)
    np.testing.assert_array_equal(one["value"],
                                  G.localbsgvrm_vs_devices(1, 4, 3, mutant="same_sample")["value"])
    ok = G.localbsgvrm_vs_devices(16, 16, seed=0)
    bad = G.localbsgvrm_vs_devices(16, 16, seed=0, mutant="same_sample")
    assert ok["rounds"][0] == bad["rounds"][0] == 60 and ok["iterations"][0] == 120
    assert bad["value"].mean() > 4 * ok["value"].mean()
    assert not ok["diverged"].any() and not bad["diverged"].any()
    with pytest.raises(ValueError, match="mutant"):
        G.localbsgvrm_vs_devices(2, 1, 0, mutant="bogus")


def test_homogeneous_instances_share_phi_and_have_no_floor():
    x = np.array([[0.3, -1.2], [2.0, 0.5]])
    ref = G.homogeneous(1)
    for K in (2, 8, 16):
        P = G.homogeneous(K)
        assert P.clients == K and P.constants["sigma_g2"] == pytest.approx(0.0, abs=1e-20)
        np.testing.assert_allclose(P.hypergradient(x), ref.hypergradient(x), rtol=1e-14)
    assert biased_stationary_point(G.homogeneous(8), neumann_steps=None)[1] < 1e-20


@pytest.mark.parametrize("cid,design", [(HET[0], G.M_DESIGN), (HET[1], G.V_DESIGN)])
def test_closed_form_floor_is_above_every_epsilon_and_the_repair_removes_it(cid, design):
    """≥ (closed form): at every grid point of every budget the floor ‖∇Φ(x̃)‖² at the point's
    θ, Q exceeds ε, so A ≥ floor − o(1) makes A ≤ ε fail; with the devices' mean Hessians
    (the shared_hessians mutant) x̃ is x* up to the truncation bias, far below ε."""
    P, S = G.heterogeneous(), G.shared_hessians()
    assert P.constants["sigma_g2"] > 1.0  # A4's δ² is large
    assert S.constants["sigma_g2"] > 0.0  # the repair keeps heterogeneous gradients
    np.testing.assert_allclose(S.hypergradient(np.zeros(2)), S.hypergradient(np.zeros(2)))
    assert biased_stationary_point(S, neumann_steps=None)[1] < 1e-20
    for budget in BUDGETS:
        for T in CLAIMS[cid].grid[budget]:
            eps = design.epsilon_at_iterations(T)
            _, hp, _ = design.hyperparameters(P, eps)
            assert biased_stationary_point(P, hp["theta"], hp["neumann_steps"])[1] > 2 * eps
            _, hs, _ = design.hyperparameters(S, eps)
            assert biased_stationary_point(S, hs["theta"], hs["neumann_steps"])[1] < eps / 2


@pytest.mark.parametrize("measure", [G.localbsgm_heterogeneous, G.localbsgvrm_heterogeneous])
def test_achieved_average_tracks_the_closed_form_floor(measure):
    """≈ (fixed point): started at x*, the iterates move to x̃, so A rises to ‖∇Φ(x̃)‖²;
    A ≥ 0.9·floor already at the first grid point (the o(1) is the transient from x* to x̃)
    and A never exceeds the floor by more than 5%; the repair brings A below ε."""
    T = CLAIMS[HET[0] if measure is G.localbsgm_heterogeneous else HET[1]].grid["smoke"][0]
    out = measure(T, 2, seed=0)
    assert np.all(out["value"] >= 0.9 * out["floor"]) and np.all(out["value"] > out["bound"])
    assert np.all(out["value"] <= 1.05 * out["floor"])
    rep = measure(T, 2, seed=0, mutant="shared_hessians")
    assert np.all(rep["value"] <= rep["bound"])


def test_localbsgm_ledger_rounds_equal_t_over_p():
    """≈ exact: the communication rounds the claims use are ⌊T/p⌋ of the schedule."""
    P = G.homogeneous(G.DEVICES)
    T, hp, s = G.M_DESIGN.hyperparameters(P, G.M_DESIGN.eps_ref)
    tr = run("localbsgm", P, rounds=T, replicates=1, seed=0, **hp)
    assert tr.ledger.totals()["rounds"] == T // hp["period"] == s["communication"]


def test_period_fixed_mutants_run_the_budget_in_rounds():
    """The period_fixed mutants spend the grid's C rounds (ledger) with p = 2, T = 2C."""
    C = CLAIMS["gao.localbsgm_communication_vs_epsilon"].grid["smoke"][0]
    out = G.localbsgm_vs_rounds(C, 1, 0, mutant="period_fixed")
    assert out["rounds"][0] == C and out["iterations"][0] == 2 * C and out["period"][0] == 2
    with pytest.raises(ValueError, match="mutant"):
        G.localbsgm_vs_rounds(C, 1, 0, mutant="bogus")


def test_ball_max_finds_the_maximum_of_an_affine_map_on_the_domain():
    """≥ (a lower bound attained on the domain) and ≈ the dense-sample maximum."""
    rng = np.random.default_rng(0)
    M, b = rng.standard_normal((1, 2)), rng.standard_normal(1)
    got = truncation._ball_max(M, b, 1, 3.0)
    xs = np.linspace(-3, 3, 601)
    X, Y = np.meshgrid(xs, xs)
    sampled = np.abs(M[0, 0] * X + M[0, 1] * Y + b[0]).max()
    assert sampled <= got + 1e-9 and got <= abs(b[0]) + 3 * np.abs(M).sum() + 1e-9
    assert got == pytest.approx(sampled, rel=1e-6)


def test_delta_q_is_valid_everywhere_and_nearly_attained_on_the_worst_instance():
    """≤ 1 (Δ_Q is a valid bound, for the smallest admissible constants) on random instances,
    and ≥ 0.9 on the worst instance found (the report's slack); a short re-run of the search
    around the recorded seed finds nothing better than the recorded knobs (within 0.01)."""
    for seed in range(3):
        P = truncation._neumann_candidate(coupling=3.0, upper_mu=0.3, kappa=2.5, seed=seed)
        for Q in (0, 7):
            assert G.truncation_bias_ratio(P, default_theta(P), Q) <= 1.0 + 1e-9
    W = G.worst_neumann_instance()
    ratio = G.truncation_bias_ratio(W, default_theta(W), 20)
    assert 0.9 <= ratio <= 1.0 + 1e-9
    found = G.search_worst_neumann_instance(seeds=(G.NEUMANN_KNOBS["seed"],), maxfev=30)
    assert found["ratio"] <= ratio + 0.01


def test_neumann_bias_measure_and_its_mutants():
    out = G.neumann_bias_with_bound(10, 3, seed=0)
    assert out["value"].shape == (3,) and np.all(out["value"] <= out["bound"])
    assert np.all(out["value"] == out["value"][0])  # deterministic
    sq = G.neumann_bias_with_bound(40, 1, 0, mutant="rate_squared")
    q = G.neumann_bias_with_bound(40, 1, 0, mutant="quarter")
    assert sq["value"][0] > sq["bound"][0] and q["value"][0] > q["bound"][0]
    again = G.neumann_bias(10, 3, seed=0)["value"]
    np.testing.assert_array_equal(again, G.neumann_bias(10, 3, seed=0)["value"])


def test_neumann_bound_claim_mutates_the_estimator_too():
    """Besides the bound's mutants, one mutant changes the estimator (θ/2) and is caught: the
    worst bias then exceeds Δ_Q at large Q."""
    c = CLAIMS["gao.neumann_bias_bounded"]
    assert "neumann_scaling" in {m.kind for m in c.mutants}
    out = G.neumann_bias_with_bound(80, 1, 0, mutant="theta_half")
    assert out["value"][0] > out["bound"][0]


def test_vrm_series_averages_vrm_runs_independent_runs_per_replicate():
    """gao.vrm_beats_m: each replicate of LocalBSGVRM's ``A·T/p`` is the mean of ``VRM_RUNS``
    runs (its run-level CV ≈ 0.6 sets the smoke power), LocalBSGM keeps one run each."""
    out = G.vrm_vs_m(100, 3, 5)
    ss = np.random.SeedSequence(5).generate_state(2)
    v = G.run_schedule("localbsgvrm", G.V_DESIGN, G.homogeneous(G.DEVICES), 0.01,
                       3 * G.VRM_RUNS, int(ss[0]))
    runs = (v["value"] * v["rounds"]).reshape(3, G.VRM_RUNS)
    assert G.VRM_RUNS >= 16 and out["value"].shape == out["contrast"].shape == (3,)
    np.testing.assert_allclose(out["value"], runs.mean(axis=1))
    assert out["vrm_rounds"][0] == v["rounds"][0]
