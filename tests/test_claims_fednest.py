"""Claim-specific checks of ``verify/claims/fednest/``: the closed forms the measures rely
on, the schedules, the derived predictions, the windows and the statements' mathtext."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from bilevel_theory import rates
from bilevel_theory.estimators import neumann_bias_matrix
from bilevel_theory.verify.claim import BUDGETS
from bilevel_theory.verify.claims import fednest as F
from bilevel_theory.verify.claims.fednest import (
    client_drift,
    convergence,
    estimator,
    linear_minimax,
    special_cases,
    truncation_floor,
)
from bilevel_theory.verify.fit import in_window

BY_ID = {c.id: c for c in F.CLAIMS}


def test_ids_sources_and_budgets():
    assert len(BY_ID) == len(F.CLAIMS)
    for c in F.CLAIMS:
        assert c.id.split(".")[0] in ("fednest", "lfednest")
        assert c.paper == "FedNest 2022"
        assert c.source.startswith("Tarzanagh, Li, Thrampoulidis & Oymak, ICML 2022")
        assert "[TEXT]" in c.source or "[INFERRED]" in c.source
        assert c.schedule
        assert c.role in ("confirmation", "finding", "defect", "control")
        assert all(m.kind for m in c.mutants), c.id
        assert (len(c.mutants) >= 1) == (c.role != "control"), c.id
        assert all(t.startswith(("FEDNEST-R", "FEDNEST-I")) for t in c.touches), c.id
        if c.window is not None:
            assert c.window_reason, c.id
        for text in (c.source, c.reason, c.schedule, *c.touches):
            assert "PAPERS" not in text and ".txt" not in text and "[NOTE]" not in text
        for b in BUDGETS:
            inside = in_window(np.asarray(c.grid[b], float), c.window)
            assert inside.sum() >= (2 if c.kind == "exact" else 3), (c.id, b)


def test_statements_render():
    mathtext = pytest.importorskip("matplotlib.mathtext")
    parser = mathtext.MathTextParser("agg")
    for c in F.CLAIMS:
        for tex in (c.statement, c.quantity):
            assert r"\text" not in tex and r"\tfrac" not in tex, c.id
        for tex in (c.statement, c.quantity, c.law.latex):
            parser.parse(f"${tex}$", dpi=72)


def test_ihgp_point_and_exact_bias():
    """At (0, y_w) the global ∇_y f is the bottom eigenvector w of Ā, λ_min(Ā) = μ_g, and the
    exact bias ‖Ā⁻¹ − E Ĥ‖ equals Lemma 2.2's bound ((κ_g−1)/κ_g)^N/μ_g."""
    prob, w, y_w, w_ainv_w, lam_min = estimator._ihgp_problem()
    c = prob.constants
    idx = np.arange(prob.clients)[None]
    g = prob.exact_grad_y_f(idx, np.zeros((1, 1, prob.dim_x)), y_w[None, None]).mean(axis=1)[0]
    np.testing.assert_allclose(g, w, atol=1e-12)
    assert lam_min == pytest.approx(c["mu_g"], rel=1e-12)
    assert w_ainv_w == pytest.approx(1 / c["mu_g"], rel=1e-12)
    for N in (1, 5, 9):
        exact = np.linalg.norm(neumann_bias_matrix(prob, N, c["ell_g1"]), 2)
        assert exact == pytest.approx(((c["kappa_g"] - 1) / c["kappa_g"]) ** N / c["mu_g"],
                                      rel=1e-9)


def test_ihgp_measure_is_unbiased():
    """The measure's mean is the exact bias within 4.5 Monte-Carlo standard errors."""
    out = F.ihgp_bias(5, 16, seed=3)
    v = out["value"]
    assert abs(v.mean() - out["lemma_bound"][0]) < 4.5 * v.std() / math.sqrt(v.size)


def test_predictions_are_derived_from_rates():
    assert BY_ID["fednest.bilevel_rate"].law.value == pytest.approx(
        float(rates.leading_exponent(rates.BOUNDS["fednest.cor31"], "K")))
    assert BY_ID["fednest.ihgp_bias_vs_N"].law.value == pytest.approx(
        math.log(1 - 1 / estimator._ihgp_problem()[0].constants["kappa_g"]))
    assert BY_ID["fednest.variance_floor"].law.value == -1.0
    assert BY_ID["fednest.variance_floor_vs_step"].law.value == 0.0
    assert BY_ID["fednest.variance_floor_vs_N"].law.value == 0.0  # b² is Thm 3.1's only N-term
    assert BY_ID["lfednest.bias_under_heterogeneity"].law.value == 4.0
    assert BY_ID["fednest.fedinn_vs_fedavg"].law.value == 0.0
    # the Cor. 3.1 window starts at the crossover κ_g³
    lo = BY_ID["fednest.bilevel_rate"].window[0]
    assert lo == pytest.approx(convergence._bilevel_rate_problem().constants["kappa_g"] ** 3)


def test_rounds_predictions():
    """§2.6's 2T + N + 3 is executed by the fixed-N FedNest; Alg. 3's FedNest executes
    2T + N' + 3 at the drawn N' (mean 2T + (N−1)/2 + 3 by sympy), never §2.6's count; the
    extra-aggregation mutant adds one; the random-truncation mutant falls short."""
    out = F.fednest_rounds(5, 2, seed=0)
    assert out["predicted"][0] == 2 * F.ROUNDS_T + 5 + 3 == out["value"][0]
    assert out["alg3_executed"][0] == pytest.approx(out["alg3"][0], abs=1e-12)
    assert 2 * F.ROUNDS_T + 3 <= out["alg3"][0] <= 2 * F.ROUNDS_T + 5 + 2
    assert out["alg3_mean"][0] == 2 * F.ROUNDS_T + (5 - 1) / 2 + 3
    assert sp.simplify(F.ROUNDS_MEAN - (2 * F.T_sym + (F.N_sym - 1) / 2 + 3)) == 0
    bad = F.fednest_rounds(5, 2, seed=0, extra_aggregation=True)
    assert bad["value"][0] == pytest.approx(bad["predicted"][0] + 1, abs=1e-12)
    short = F.fednest_rounds(5, 2, seed=0, algorithm="fednest")
    assert short["value"][0] < short["predicted"][0]
    out = F.lfednest_rounds(4, 2, seed=0)
    assert out["predicted"][0] == 4 + 1 == out["value"][0]
    assert F.lfednest_rounds(4, 2, seed=0, extra_aggregation=True)["value"][0] == 6


@pytest.mark.parametrize("setting", ["paper", "notebook"])
def test_minimax_instance_and_contraction(setting):
    """Every client's x-Hessian is λI and y-Hessian I (so FedOut's τ local steps are one step
    of γ); the predicted slope is log((1 − γμ_Φ)²) with μ_Φ = λ + ‖Ā‖²."""
    prob = linear_minimax._mm_problem(setting)
    lam = F.MM_SETTINGS[setting]["lam"]
    for i in (0, 7):
        m = prob.client(i)
        np.testing.assert_allclose(m["P"], lam * np.eye(F.MM_DIM))
        np.testing.assert_allclose(m["A"], np.eye(F.MM_DIM))
    c = prob.constants
    alpha = 0.5 / c["L_phi"]
    gamma = (1 - (1 - alpha * lam / F.MM_TAU) ** F.MM_TAU) / lam
    assert linear_minimax._mm_law(setting).value == pytest.approx(
        2 * math.log(1 - gamma * c["mu_phi"]))
    np.testing.assert_allclose(prob.x_star, 0.0, atol=1e-12)


def test_minimax_fednest_rate_is_the_predicted_one():
    """Deterministic run: the per-epoch ratio of ‖x_k‖² settles at the predicted contraction."""
    d, div = linear_minimax._mm_distance("fednest", linear_minimax._mm_problem("paper"), 12, 1, 0,
                                        "numpy")
    d8, _ = linear_minimax._mm_distance("fednest", linear_minimax._mm_problem("paper"), 8, 1, 0,
                                         "numpy")
    assert not div.any()
    slope = math.log(d[0] / d8[0]) / 4
    assert slope == pytest.approx(linear_minimax._mm_law("paper").value, abs=0.02)


def test_variance_floor_schedule_is_the_constant_branch():
    prob = truncation_floor._vf_problem()
    a = {K: truncation_floor._vf_schedule(prob, K) for K in (100, 1600)}
    assert a[100]["outer_step"] == a[1600]["outer_step"] == 0.5 / prob.constants["L_phi"]
    kg = prob.constants["kappa_g"]
    n_rates = sp.ceiling(math.log(1600) / (2 * math.log(kg / (kg - 1))))
    assert a[1600]["neumann_steps"] >= int(n_rates)  # b² ≤ κ_g²ℓ_{f,1}²/K as in the bound


def test_variance_floor_vs_N_starts_at_cor31_N():
    """The N-sweep starts at Cor 3.1's ⌈κ_g log K⌉ and keeps the K-sweep's step at every N."""
    claim, prob = BY_ID["fednest.variance_floor_vs_N"], truncation_floor._vf_problem()
    K = truncation_floor.VN_K
    for budget in ("smoke", "standard", "full"):
        assert claim.grid[budget][0] == math.ceil(prob.constants["kappa_g"] * math.log(K))
    assert all(c["holds"] for c in claim.check_conditions("full"))


def test_bias_at_cor31_N_is_the_series_tail_and_the_mutant_drops_kappa():
    """At N(K) = ⌈κ_g log K⌉ the measured squared bias is the series' tail (b_xy ρ^N q/a)²,
    the law is the statement's −1/2 (sympy), and the mutant's N is ⌈log K⌉."""
    claim = BY_ID["fednest.bias_at_cor31_N"]
    assert claim.law.value == -0.5
    prob = estimator.scalar_problem(**estimator.TIGHT)
    kg = prob.constants["kappa_g"]
    for K in (16, 1024):
        out = estimator.bias_at_cor31_N(K, 2, seed=0)
        N = math.ceil(kg * math.log(K))
        assert out["neumann_steps"][0] == N
        assert out["value"][0] == pytest.approx((600 / 49 * (1 - 1 / kg) ** N) ** 2, rel=1e-9)
        assert estimator.bias_at_cor31_N(K, 2, 0, kappa_factor=False)["neumann_steps"][0] == (
            math.ceil(math.log(K)))
    assert all(c["holds"] for c in claim.check_conditions("full"))


def test_lfednest_bias_vanishes_without_heterogeneity():
    """Identical clients: the fixed point is stationary up to the series' 2^{-40} bias; the
    mutant's two-term series leaves a bias that no h removes."""
    v = F.lfednest_bias(0.0, 2, seed=4)["value"]
    assert v[0] == v[1] and v[0] < 1e-16
    assert F.lfednest_bias(0.0, 2, seed=4, neumann_steps=2)["value"][0] > 1e-4


def test_lfednest_mean_recursion_is_the_random_runs_mean():
    """The measure's ``E x̄`` (one run with the local IHGPs' expectation) is the mean of the
    random-truncation runs it replaces: at h = 0.6, K = 160 and N = 12, 1500 runs' mean is
    within 4 standard errors of it in every coordinate, and the random runs do differ from it."""
    exact, _ = F.lfednest_mean_tail(0.6, neumann_steps=12)
    runs, _ = F.lfednest_mean_tail(0.6, 12, series="random", replicates=1500, seed=11)
    se = runs.std(axis=0) / math.sqrt(runs.shape[0])
    assert np.all(np.abs(runs.mean(axis=0) - exact[0]) < 4 * se), (runs.mean(0), exact, se)
    assert runs.std(axis=0).min() > 1e-6  # the runs themselves are random


def test_variance_floor_repaired_by_the_deterministic_series():
    """The full-series mutant removes the floor: deterministic, and at K = 400 far below the
    random truncation's average stationarity."""
    a = F.variance_floor(400, 4, 0)["value"].mean()
    b = F.variance_floor(400, 2, 0, series="full")["value"]
    assert b[0] == b[1] and b[0] < 0.3 * a


def test_notebook_fednest_drops_b():
    """The b-free instance of the notebook's FedNest cell keeps A_i, P and x* = 0."""
    prob, nob = linear_minimax._mm_problem("paper"), linear_minimax._mm_problem_without_b("paper")
    np.testing.assert_allclose(nob.client(3)["A"], prob.client(3)["A"])
    assert np.abs(nob.c).max() == 0 and np.abs(prob.c).max() > 0
    np.testing.assert_allclose(nob.x_star, prob.x_star, atol=1e-12)


def test_floor_grows_with_N():
    """The floor is ∝ N as well as α (FEDNEST-R6): from (x*, y*(x*)) at α = ᾱ₁/2, exact
    oracles, the tail stationarity with N = 16 is several times that with N = 4 (the sympy
    variance IHGP_VARIANCE grows ≈ 7× along the slowest direction; a shared, N-independent
    chain variance would give a ratio ≈ 1)."""
    from bilevel_theory import run

    prob = truncation_floor._vf_problem()
    cap = 0.5 / prob.constants["L_phi"]
    xs = np.asarray(prob.x_star)
    ys = np.asarray(prob.y_star(xs[None]))[0]
    tail = {}
    for N in (4, 16):
        tr = run("fednest", prob, rounds=400, replicates=16, seed=0, inner_steps=2,
                 neumann_steps=N, outer_step=cap / 2, inner_step=0.25, local_steps=2,
                 sampled_clients=10, x0=xs, y0=ys)
        tail[N] = tr.stationarity[:, 200:].mean()
    assert 3 < tail[16] / tail[4] < 12


def test_indirect_bias_bound_closed_form():
    """Eq. (15) on f = qy: the bias is b·ρ^N·q/a > 0 while the stated b (ℓ_{f,1} = 0) is 0; the
    ℓ_{f,0} bound holds with the ratio ‖B‖/ℓ_{g,1} = 24/25."""
    c = F.scalar_problem(**F.TIGHT).constants
    rho = 1 - 1 / c["kappa_g"]
    for N in (1, 4):
        out = F.indirect_bias(N, 1, 0)
        assert out["value"][0] == pytest.approx(F.TIGHT["b"] * rho ** N, rel=1e-12)
        assert out["bound"][0] == 0.0
        fixed = F.indirect_bias(N, 1, 0, lip="ell_f0")
        assert fixed["value"][0] / fixed["bound"][0] == pytest.approx(24 / 25, rel=1e-9)


def test_compositional_indirect_term_carries_the_hypergradient():
    """Without the indirect term FedNest has no drift on the compositional instance (its direct
    gradient is 0; x only moves by the oracle's zero-mean noise), so the average stationarity
    stays near its start; with it, it falls."""
    off = F.compositional_rate(16, 8, 0, indirect=False)["value"]
    on = F.compositional_rate(16, 8, 0)["value"]
    prob = special_cases._compositional_problem()
    start = float(np.sum(np.asarray(prob.hypergradient(np.ones((1, prob.dim_x)))) ** 2))
    assert 0.5 * start < off.mean() < 2 * start
    assert on.mean() < 0.5 * start


def test_fedinn_tail_spans_many_correlation_times():
    """fednest.fedinn_vs_fedavg's power rests on the tail average: βμ = 1/(2κ) per round, so
    a 100-round tail is ≥ 10 correlation times of ‖y − y*‖² and its per-replicate CV is far
    below the ≈ 0.67 of a 10-round tail."""
    c = client_drift._inner_problem(0.2).constants
    beta_mu = c["mu_g"] / (2.0 * c["L_yy"])  # β = 1/(2L_yy): 0.1 here
    assert F.INNER_TAIL * beta_mu >= 10 - 1e-9
    v = F.fedinn_vs_fedavg(0.2, 64, 3)["value"]
    assert v.std() / v.mean() < 0.4


def test_deviation_closed_form_and_worst_case():
    """Lemma 2.2's second bound: at κ_g = 1 the ratio E|H⁻¹ − Ĥ|μ_g/2 is 1 − 1/N, and on a
    κ_g grid it is largest there for every N ≥ 2; Rademacher samples ℓ(1 ± s) give
    (1/(Nℓ))[N − 1 + Σ_{1≤k<N} max(1, Ns^k)]."""
    for N in (2, 4, 8, 32):
        assert F.deviation_closed_form(N, 1.0, 1.0) / 2 == pytest.approx(1 - 1 / N, abs=1e-12)
        worst = max(F.deviation_closed_form(N, 1.0, kg) / 2 for kg in np.linspace(1, 30, 300))
        assert worst == pytest.approx(1 - 1 / N, abs=1e-12)
        k = np.arange(1, N)
        noisy = (N - 1 + np.maximum(1.0, N * 0.5 ** k).sum()) / N
        assert F.deviation_closed_form(N, 1.0, 1.0, 0.5) == pytest.approx(noisy, rel=1e-12)
    # the proof's bound E‖H⁻¹ − Ĥ‖ < 1/μ_g + E‖Ĥ‖ < 2/μ_g at every κ_g
    assert all(F.deviation_closed_form(N, 1.0, kg) < 2.0
               for N in (1, 3, 50, 200) for kg in (1.0, 1.5, 4.0, 40.0))


@pytest.mark.parametrize(("b", "noise"), [(0.0, 0.0), (1.0, 0.0), (0.0, F.DEV_NOISE)])
def test_deviation_monte_carlo_matches_closed_form(b, noise):
    """The library's FedIHGP (vectorised over calls) against the closed form, within 5
    standard errors: κ_g = 1, κ_g = 1.618 (b = 1) and Rademacher Hessian samples."""
    import dataclasses

    from bilevel_theory import make_context
    from bilevel_theory.estimators import ihgp
    from bilevel_theory.problems.oracle import with_noise_distribution
    from bilevel_theory.verify.claims.fedmbo import scalar_problem

    prob = scalar_problem(a=1.0, b=b)
    if noise:
        prob = with_noise_distribution(dataclasses.replace(prob, hessian_noise=noise),
                                       "rademacher")
    n, N, ell = 2 ** 16, 8, prob.constants["ell_g1"]
    ctx = make_context(prob, n, 1, "numpy")
    p, _ = ihgp(ctx, np.ones((n, 1)), np.zeros((n, 1)), N, 1, ell)
    dev = np.abs(1.0 - p[:, 0])
    exact = F.deviation_closed_form(N, 1.0, ell, noise / ell)
    assert abs(dev.mean() - exact) < 5 * dev.std() / math.sqrt(n)


def test_deviation_measure_and_mutants():
    out = F.ihgp_deviation(8, 2, seed=0)
    assert out["bound"][0] == 2.0 and out["value"].shape == (2,)
    assert out["closed_form"][0] == pytest.approx(2 * (1 - 1 / 8))
    halved = F.ihgp_deviation(4, 2, seed=0, scale_factor=0.5)
    assert halved["value"].mean() > 2.0  # ≈ 2N/ℓ: the mutant ell_halved breaks the bound
    repaired = F.ihgp_deviation(32, 2, seed=0, hessian_noise=F.DEV_NOISE, scale_factor=1.5)
    assert repaired["closed_form"][0] < 2.0
