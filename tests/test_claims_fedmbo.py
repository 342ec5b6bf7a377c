"""Claim-specific checks of ``verify/claims/fedmbo/``: the closed forms the measures rely on,
the schedules (Theorem 1's caps, Lemma 5's step condition, the Neumann truncation), the
derived predictions, and the statements' mathtext."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bilevel_theory import make_context
from bilevel_theory.estimators import neumann_bias_matrix
from bilevel_theory.trace import LEDGER_FIELDS
from bilevel_theory.verify.claim import BUDGETS
from bilevel_theory.verify.claims import fedmbo as F
from bilevel_theory.verify.claims.fedmbo import common, stationarity


def _z(samples: np.ndarray, target: np.ndarray) -> np.ndarray:
    """z-scores of the sample mean of ``samples (M, d)`` against ``target (d,)``."""
    se = samples.std(axis=0) / math.sqrt(samples.shape[0])
    return (samples.mean(axis=0) - target) / se


@pytest.mark.parametrize("noise,hessian_noise", [(0.0, 0.0), (1.0, 0.5)])
def test_phe_mean_closed_form_matches_monte_carlo(noise, hessian_noise):
    """``H̄ = ∇ₓf̄ + B̄ᵀĀ⁻¹(I − (I − Ā/ℓ)^N)∇_y f̄`` is the mean of PHE's output (with
    replacement): the claims' variance measures are centred on it."""
    p = F.phe_problem(noise=noise, hessian_noise=hessian_noise)
    x, y = F.PHE_POINT
    H = common._phe_outputs(p, x, y, F.VAR_N, 1 << 14, 32, seed=11, backend="numpy")
    z = _z(H.reshape(-1, p.dim_x), F.phe_mean(p, x, y, F.VAR_N, p.constants["ell_g1"]))
    assert np.all(np.abs(z) < 4.5), z


def test_ihgp_has_the_same_conditional_mean():
    """FedNest's ``h`` (shared chain) has the same mean ``H̄``: the contrast compares spreads."""
    p = F.phe_problem(noise=1.0, hessian_noise=0.5)
    x, y = F.PHE_POINT
    ctx = make_context(p, 1 << 15, seed=5)
    h = F.ihgp_hypergradient(ctx, x, y, F.VAR_N, 4, p.constants["ell_g1"])
    z = _z(h, F.phe_mean(p, x, y, F.VAR_N, p.constants["ell_g1"]))
    assert np.all(np.abs(z) < 4.5), z


def test_bias_estimator_is_unbiased_for_the_exact_bias():
    """The U-statistic of ``phe_bias`` estimates ``‖B̄ᵀ(−Ā⁻¹(I − Ā/ℓ)^N)∇_y f̄‖²``."""
    out = F.phe_bias(3, 16, seed=2)
    exact = out["exact"][0]
    v = out["value"]
    assert abs(v.mean() - exact) < 4.5 * v.std() / math.sqrt(v.size) + 1e-12
    p = F.phe_problem()
    ell, mu = p.constants["ell_g1"], p.constants["mu_g"]
    # eq. (5): ‖E[Ĥ] − Ā⁻¹‖ = (1 − λ_min/ℓ)^N/λ_min with λ_min(Ā) = μ_g (structured storage)
    assert np.linalg.norm(neumann_bias_matrix(p, 6, ell), 2) == pytest.approx(
        (1 - mu / ell) ** 6 / mu, rel=1e-9)


def test_bias_window_is_asymptotic():
    """In the window the exact local semilog slope of ‖b_N‖² is within 1% of 2 log ρ."""
    claim = next(c for c in F.CLAIMS if c.id == "fedmbo.phe_bias_vs_N")
    p = F.phe_problem()
    x, y = F.PHE_POINT
    ell = p.constants["ell_g1"]
    sur = p.surrogate_hypergradient(x, y)
    lo, hi = claim.window
    b2 = [np.sum((F.phe_mean(p, x, y, N, ell) - sur) ** 2) for N in range(int(lo), int(hi) + 1)]
    slopes = np.diff(np.log(b2))
    assert np.allclose(slopes, claim.law.value, rtol=0.01)


def test_prop1_point_is_in_the_domain():
    p = F.phe_problem(**F.BOUND_INSTANCE)
    x, y = F.bias_bound_point()
    assert np.linalg.norm(x) <= p.radius + 1e-9 and np.linalg.norm(y) <= p.radius + 1e-9
    assert np.allclose(y, p.y_star(x))


def _thm1_points():
    """``(claim id, n, K)`` of every Theorem-1 grid point of every budget."""
    for c in F.CLAIMS:
        if c.measure is F.stationarity_vs_n:
            f = lambda v: (int(v), F.STAT_N_K)  # noqa: E731
        elif c.measure is F.stationarity_vs_K:
            f = lambda v: (F.STAT_K_N, int(v))  # noqa: E731
        elif c.measure is F.stationarity_at_speedup:
            f = lambda v: (int(v), F.iterations_for(1.0, int(v), F.SPEEDUP_NK))  # noqa: E731
        elif c.measure is F.stationarity_at_epsilon:
            f = lambda v: (F.EPS_N, F.iterations_for(1 / v, F.EPS_N, F.EPS_C))  # noqa: E731
        else:
            continue
        for budget in BUDGETS:
            for v in c.grid[budget]:
                yield (c.id, *f(v))


def test_theorem1_schedule_on_every_grid_point():
    """α = √(n/K)·α̂₃ exactly (the branch the rate comes from), α ≤ min(α̂₁, α̂₂), β within
    Lemma 5's 1/(2ℓ_{g,1}), b² ≤ 10⁻³/√(nK), and ST ≥ κ_g⁴ (Cor. 1)."""
    c = F.thm1_constants()
    k = F.thm1_problem().constants
    assert c["S"] * c["T"] >= k["kappa_g"] ** 4
    assert c["alpha_hat2"] >= c["alpha_hat1"]
    for cid, n, K in _thm1_points():
        alpha, beta = F.thm1_steps(n, K)
        assert alpha == pytest.approx(math.sqrt(n / K) * c["alpha_hat3"]), (cid, n, K)
        assert alpha <= min(c["alpha_hat1"], c["alpha_hat2"]) * (1 + 1e-12), (cid, n, K)
        assert beta <= 1 / (2 * k["ell_g1"]) * (1 + 1e-12)
        assert c["b2"] <= F.B2_FACTOR / math.sqrt(n * K)
        # the transient of the slowest direction of Φ has died out: α μ_Φ K ≥ 8
        assert alpha * k["mu_phi"] * K >= 8, (cid, n, K)


def test_iteration_exponents_from_corollary_1():
    assert stationarity._iteration_exponents() == (-2.0, -1.0)
    assert F.iterations_for(1.0, 8, F.EPS_C) == 200
    assert F.iterations_for(0.5, 8, F.EPS_C) == 800
    assert F.iterations_for(2 ** -0.5, 8, F.EPS_C) == 400


def test_laws_are_derived():
    laws = {c.id: c.law.value for c in F.CLAIMS}
    kg = F.phe_problem().constants["kappa_g"]
    assert laws["fedmbo.phe_bias_vs_N"] == pytest.approx(2 * math.log((kg - 1) / kg))
    assert laws["fedmbo.phe_variance_vs_clients"] == -1.0
    assert laws["fedmbo.stationarity_vs_n"] == -0.5
    assert laws["fedmbo.stationarity_vs_K"] == -0.5
    assert laws["fedmbo.linear_speedup"] == 0.0
    assert laws["fedmbo.complexity_vs_epsilon"] == -1.0
    assert laws["fedmbo.phe_variance_vs_N"] == 0.0
    assert laws["fedmbo.inner_loop_drift"] == -1.0


def test_statements_parse_as_mathtext():
    from bilevel_theory.reports.figures import mathtext_ok

    for c in F.CLAIMS:
        assert mathtext_ok(f"${c.statement}$"), c.id
        assert mathtext_ok(f"${c.quantity}$"), c.id
        assert c.source.startswith(F.P.paper.citation)
        assert "[TEXT]" in c.source or "[INFERRED]" in c.source
        assert c.schedule and c.touches, c.id


def test_claims_have_roles_mutants_and_reading_ids():
    """Every claim states its role; confirmations and findings carry mutants; ``touches``
    names readings by their ids; a window has its reason."""
    for c in F.CLAIMS:
        assert c.role in ("confirmation", "finding"), c.id
        assert c.mutants and all(m.kind for m in c.mutants), c.id
        assert all(t.startswith(("FEDMBO-R", "FEDMBO-I")) for t in c.touches), c.id
        assert c.window is None or c.window_reason, c.id
    assert {c.id for c in F.CLAIMS if c.gpu_scale is not None} == {
        "fedmbo.phe_variance_vs_clients", "fedmbo.ihgp_variance_contrast",
        "fedmbo.inner_loop_drift"}


def test_scalar_instance_constants():
    """``g = ½ay² − bxy``, ``f = qy``: ℓ_{g,1} is the joint Hessian norm, ℓ_{f,1} = 0,
    ℓ_{f,0} = |q|, no noise and no heterogeneity."""
    c = F.scalar_problem(**F.PROP2).constants
    assert c["ell_g1"] == pytest.approx(9.0) and c["mu_g"] == 5.0
    assert c["ell_f1"] == 0.0 and c["ell_f0"] == 1.0
    assert c["sigma_f2"] == c["sigma_g22"] == c["sigma_g2"] == 0.0
    assert F.prop2_sigma_tilde2(c) == pytest.approx(6 * (9 / 5) ** 2)
    t = F.scalar_problem(**F.TIGHT).constants
    assert t["kappa_g"] == pytest.approx(625 / 49)


@pytest.mark.parametrize("N", [4, 40])
def test_prop2_variance_closed_form(N):
    """On the scalar instance ``E‖H_i − H̄‖² = (b/ℓ)²q²V_N`` (PHE's N/ℓ-weighted random
    truncation), and the deterministic truncation has no variance."""
    p = F.scalar_problem(**F.PROP2)
    out = F.prop2_explicit(N, 32, seed=3)["value"]
    exact = (6 / 9) ** 2 * F.truncation_moment(N, 4 / 9)
    assert abs(out.mean() - exact) < 4.5 * out.std() / math.sqrt(out.size), (out.mean(), exact)
    assert exact / F.prop2_sigma_tilde2(p.constants) == pytest.approx(F.prop2_ratio(5 / 9, N))
    assert F.prop2_explicit(N, 2, seed=3, fixed=True)["value"].max() < 1e-20


def test_prop2_crossing():
    """The variance exceeds σ̃_f² from N = 38 on at t = 5/9, not before; no t crosses earlier."""
    n = F.prop2_crossing(5 / 9)
    assert F.prop2_ratio(5 / 9, n) > 1 >= F.prop2_ratio(5 / 9, n - 1)
    assert F.prop2_crossing() <= n
    claim = next(c for c in F.CLAIMS if c.id == "fedmbo.phe_variance_prop2_explicit")
    assert max(claim.grid["smoke"]) > n  # the grid reaches past the crossing


@pytest.mark.parametrize("N", [4, 40])
def test_prop2_second_moment_closed_form(N):
    """On the scalar instance ``E‖H_i‖² = (b/ℓ)²q²N Σ_{j<N} ρ^{2j}`` (mean² plus variance),
    and the deterministic truncation's ``H_i = H̄`` stays under ``(b/μ_g)²q² = 1.44``."""
    p = F.scalar_problem(**F.PROP2)
    out = F.prop2_second_moment(N, 32, seed=5)
    exact = F.prop2_second_moment_closed(p, N)
    assert abs(out["value"].mean() - exact) < 4.5 * out["value"].std() / math.sqrt(32)
    hbar2 = float((F.phe_mean(p, *common.SCALAR_POINT, N, 9.0) ** 2).sum())
    assert exact == pytest.approx(hbar2 + (6 / 9) ** 2 * F.truncation_moment(N, 4 / 9))
    fixed = F.prop2_second_moment(N, 2, seed=5, fixed=True)["value"]
    np.testing.assert_allclose(fixed, hbar2, rtol=1e-12)
    assert hbar2 < 1.44


def test_prop2_second_moment_crossing():
    """``D̃_f² = (1 + 9/5)² + 6(9/5)²`` on the instance; the second moment passes it from
    N = 50 on (≈ 0.554·N), and the smoke grid reaches past that."""
    p = F.scalar_problem(**F.PROP2)
    d2 = F.prop2_d_tilde2(p.constants)
    assert d2 == pytest.approx((1 + 9 / 5) ** 2 + 6 * (9 / 5) ** 2)
    n = F.prop2_second_moment_crossing()
    assert n == 50
    assert F.prop2_second_moment_closed(p, n) > d2 >= F.prop2_second_moment_closed(p, n - 1)
    claim = next(c for c in F.CLAIMS if c.id == "fedmbo.phe_second_moment_prop2_explicit")
    assert max(claim.grid["smoke"]) > n


def test_fixed_truncation_has_the_same_mean():
    """The mutant ``phe_fixed`` changes the variance, not the conditional mean ``H̄``."""
    p = F.phe_problem()
    x, y = F.PHE_POINT
    H = common._phe_outputs(p, x, y, 6, 1 << 12, 16, seed=4, backend="numpy", fixed=True)
    z = _z(H.reshape(-1, p.dim_x), F.phe_mean(p, x, y, 6, p.constants["ell_g1"]))
    assert np.all(np.abs(z) < 4.5), z


def test_bias_bound_worst_case():
    """scipy's search over scalar instances and points finds (bias/bound)² = 1 − 1/κ_g, the
    closed-form supremum, attained by the TIGHT instance the claim uses."""
    kt = 625 / 49
    best, _ = F.bias_bound_search(kt, starts=6, seed=1)
    assert best == pytest.approx(1 - 1 / kt, abs=2e-3)
    a, b = F.TIGHT["a"], F.TIGHT["b"]
    assert F.bias_bound_ratio([a, b, 0, 0, 0, 0, 0, 1, 1, 0]) ** 2 == pytest.approx(1 - 1 / kt)
    assert F.bias_bound_ratio([a, b, 0, 0, 0, 0, 0, 1, 1, 0]) == pytest.approx(24 / 25)


def test_phe_moments_match_the_chains():
    """The closed-form mean and covariance of one PHE chain (which place the bias window's
    upper end) agree with 2^17 simulated chains, for a short and a long truncation."""
    p = F.phe_problem()
    x, y = F.PHE_POINT
    ell = p.constants["ell_g1"]
    for N in (2, 7):
        mean, cov = F.phe_moments(p, x, y, N, ell)
        assert np.allclose(mean, F.phe_mean(p, x, y, N, ell), rtol=1e-12, atol=1e-14)
        H = common._phe_outputs(p, x, y, N, 1 << 14, 8, seed=N, backend="numpy").reshape(-1, 2)
        se = np.sqrt(np.diag(cov) / H.shape[0])
        assert np.all(np.abs(H.mean(0) - mean) < 4.5 * se)
        assert np.allclose(np.cov(H.T), cov, atol=0.01 * np.abs(cov).max())  # ≈ 3.5 s.e.


def test_bias_window_ends_where_the_monte_carlo_error_takes_over():
    claim = next(c for c in F.CLAIMS if c.id == "fedmbo.phe_bias_vs_N")
    hi, reps = int(claim.window[1]), min(claim.replicates.values())
    assert F.bias_relative_error(hi, reps) <= F.BIAS_MC_REL < F.bias_relative_error(hi + 1, reps)
    # the error grows with N, so no later N is back under the threshold
    errors = [F.bias_relative_error(N, reps) for N in range(1, 15)]
    assert np.all(np.diff(errors) > 0)


def test_thm1_claims_declare_conditions_and_catch_a_dropped_indirect_term():
    """The Thm 1 / Cor 1 claims declare the theorem's hypotheses and run inside them; the
    direct-only floor lies above every average of the K-sweep's reference run."""
    for cid in ("fedmbo.stationarity_vs_n", "fedmbo.stationarity_vs_K",
                "fedmbo.linear_speedup", "fedmbo.complexity_vs_epsilon"):
        c = next(c for c in F.CLAIMS if c.id == cid)
        assert c.conditions, cid
        for row in c.check_conditions("smoke"):
            assert row["holds"] and row["inside"], (cid, row)
    c = next(c for c in F.CLAIMS if c.id == "fedmbo.stationarity_vs_K")
    assert {m.kind for m in c.mutants} >= {"indirect_term"}
    floor = F.direct_only_floor(F.thm1_problem())
    assert floor > 1.0
    assert F.stationarity_vs_K(200, 4, 0)["value"].mean() < floor


def test_thm1_in_N_bound_does_not_grow_and_phe_stationarity_does():
    """fedmbo.stationarity_vs_N: Thm 1's bound (at the instance's κ_g) falls in N toward its
    N-free terms (law 0), while FedMBO's average stationarity at Thm 1's N-free steps grows
    with N under PHE's random truncation and stays put under the deterministic one."""
    ST = stationarity
    b = ST._thm1_in_N()
    at = dict(K=200, n=8, alpha_hat1=1e-3, alpha_hat2=1e-3, alpha_hat3=1e-2, ell_f1=1.0)
    vals = [float(b.expr.subs({b.symbol(k): v for k, v in {**at, "N": N}.items()}))
            for N in (8, 64, 512)]
    assert vals[0] >= vals[1] >= vals[2] > 0
    claim = next(c for c in ST.CLAIMS if c.id == "fedmbo.stationarity_vs_N")
    assert claim.law.value == 0.0
    phe = [ST.stationarity_vs_N(N, 16, 0)["value"].mean() for N in (8, 128)]
    fixed = [ST.stationarity_vs_N(N, 16, 0, fixed=True)["value"].mean() for N in (8, 128)]
    assert phe[1] > 4 * phe[0]
    assert 0.7 < fixed[1] / fixed[0] < 1.4


def test_fedmbo_hypergradients_hook_is_phe():
    """FedMBO.step takes its estimates from ``hypergradients`` (PHE): the variants override it
    alone, and the base class gives PHE's draws in PHE's order."""
    from bilevel_theory.estimators import phe
    from bilevel_theory.fedmbo import FedMBO

    P = common.scalar_problem(5.0, 6.0)
    alg = FedMBO(P, neumann_steps=6, sampled_clients=3, outer_step=0.1)
    x, y = np.ones((4, 1)), np.zeros((4, 1))
    a = alg.hypergradients(make_context(P, 4, 7, "numpy"), x, y)
    b = phe(make_context(P, 4, 7, "numpy"), x, y, 6, 3, alg.hp["neumann_scale"], True)
    np.testing.assert_array_equal(a, b)


def test_phe_full_truncation_is_the_random_truncations_mean():
    """PHE's ``truncation="full"`` (every chain sums its series) has PHE's conditional mean
    ``H̄`` on a many-client instance, and is the exact series on one client."""
    from bilevel_theory.estimators import phe

    p = F.phe_problem()
    x, y = F.PHE_POINT
    ctx = make_context(p, 64, seed=3)
    xb, yb = (np.broadcast_to(np.asarray(v, float), (64, p.dim_x)) for v in (x, y))
    H = phe(ctx, xb, yb, 6, 256, p.constants["ell_g1"], truncation="full")
    z = _z(H.reshape(-1, p.dim_x), F.phe_mean(p, x, y, 6, p.constants["ell_g1"]))
    assert np.all(np.abs(z) < 4.5), z
    hvp_calls = ctx.snapshot()[LEDGER_FIELDS.index("hvp_calls")]
    assert hvp_calls == pytest.approx(5 * 256)  # every chain runs all N − 1 hops
    with pytest.raises(ValueError, match="truncation"):
        phe(ctx, xb, yb, 6, 4, 1.0, truncation="fixed")


def test_bias_at_cor1_N_is_the_series_tail_and_the_mutant_drops_kappa():
    """At N(K) = ⌈κ_g log K⌉ the measured squared bias is the series' tail (bρ^N q/a)², the
    law is the sentence's −1/2 (b = K^{−1/4}), and the mutant's N is ⌈log K⌉."""
    from bilevel_theory.verify.claims.fedmbo import bias

    claim = next(c for c in F.CLAIMS if c.id == "fedmbo.bias_at_cor1_N")
    assert claim.law.value == -0.5
    kg = F.scalar_problem(**F.TIGHT).constants["kappa_g"]
    for K in (16, 1024):
        out = bias.bias_at_cor1_N(K, 2, seed=0)
        N = math.ceil(kg * math.log(K))
        assert out["neumann_steps"][0] == N and out["value"][0] == out["value"][1]
        assert out["value"][0] == pytest.approx((600 / 49 * (1 - 1 / kg) ** N) ** 2, rel=1e-9)
        assert bias.bias_at_cor1_N(K, 2, 0, kappa_factor=False)["neumann_steps"][0] == (
            math.ceil(math.log(K)))
    assert all(c["holds"] for c in claim.check_conditions("full"))
