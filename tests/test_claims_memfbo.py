"""Claim-specific checks of ``verify/claims/memfbo/``: the derived schedules and predictions,
the closed forms the measures rely on, the measures' outputs, and the statements' mathtext."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bilevel_theory import rates as R_
from bilevel_theory import run
from bilevel_theory.memfbo import (
    inferred_penalty,
    penalty_gradient,
    penalty_stationary_point,
    penalty_y,
)
from bilevel_theory.verify.claim import BUDGETS
from bilevel_theory.verify.claims import memfbo as M
from bilevel_theory.verify.claims.memfbo import common as MC


def test_schedules_are_derived_from_the_balance():
    """λ ∝ (PT)^{1/7} / T^{1/3} and γ_x = (Pτ/(λT))^{1/2} come out of ``rates.minimize_rate``."""
    assert M.LAM_EXP_PARTIAL == pytest.approx(1 / 7) and M.LAM_EXP_FULL == pytest.approx(1 / 3)
    lam, P, tau, T = 13.0, 4, 2, 800
    assert MC._GAMMA_X(lam, P, tau, T) == pytest.approx(math.sqrt(P * tau / (lam * T)))
    # the toolkit's helper (hard-coded exponents) agrees with the derivation
    assert M.schedule(128, 4, False)["penalty"] == pytest.approx(
        inferred_penalty(128, 4, False, c_lam=M.C_LAM))
    assert M.schedule(128, 16, True)["penalty"] == pytest.approx(
        inferred_penalty(128, 16, True, c_lam=M.C_LAM))
    sp_ = M.schedule(800, 4, full=False)
    assert sp_["penalty"] == pytest.approx(M.C_LAM * 3200 ** (1 / 7))
    assert sp_["local_steps"] == M.TAU_PARTIAL and sp_["sampled_clients"] == 4
    sf = M.schedule(256, M.N_CLIENTS, full=True)
    assert sf["penalty"] == pytest.approx(M.C_LAM * 256 ** (1 / 3))
    assert sf["local_steps"] == math.ceil(M.C_TAU * 256 ** (4 / 3) / M.N_CLIENTS)


def test_penalty_is_asymptotic_on_every_grid():
    """The a-priori rule for c_λ: λ ≥ 3ℓ_{f,1}/μ_g at every grid point of the rate claims."""
    c = M.problem().constants
    floor = 3 * c["ell_f1"] / c["mu_g"]
    claims = {cl.id: cl for cl in M.CLAIMS}
    for b in BUDGETS:
        for T in claims["memfbo.rounds_partial_participation"].grid[b]:
            assert M.schedule(T, M.P_PARTIAL, False)["penalty"] >= floor
        for P in claims["memfbo.linear_speedup_partial"].grid[b]:
            assert P < M.N_CLIENTS
            assert M.schedule(M.T_SPEEDUP, P, False)["penalty"] >= floor
        for T in claims["memfbo.rounds_full_participation"].grid[b]:
            assert M.schedule(T, M.N_CLIENTS, True)["penalty"] >= floor


def test_laws_are_derived():
    laws = {c.id: c.law.value for c in M.CLAIMS}
    assert laws["memfbo.penalty_gap"] == -1.0
    assert laws["memfbo.plateau_vs_penalty"] == -2.0
    assert laws["memfbo.linear_speedup_partial"] == pytest.approx(-2 / 7)
    assert laws["memfbo.rounds_partial_participation"] == pytest.approx(-2 / 7)
    assert laws["memfbo.rounds_full_participation"] == pytest.approx(-2 / 3)
    # MEMFBO-R7: the full-participation rate less its T^{−2/3} floor, in τ and in P
    assert laws["memfbo.rate_full_vs_local_steps"] == pytest.approx(-2 / 7)
    assert laws["memfbo.rate_full_vs_clients"] == pytest.approx(-2 / 7)
    assert laws["memfbo.client_drift_fixed_eta"] == 1.0      # Prop. 5.8 as stated, fixed η
    assert laws["memfbo.client_drift_gamma_over_tau"] == -1.0  # η = γ/τ substituted
    assert laws["memfbo.drift_stationarity_vs_tau"] == -1.0
    # Cor. 5.12 [TEXT]: T = O(ε^{−3/2}) / O(P^{−1}ε^{−7/2}) inverted give the same exponents
    for name, cid in (("memfbo.cor512_full_rounds", "memfbo.rounds_full_participation"),
                      ("memfbo.cor512_partial_rounds", "memfbo.rounds_partial_participation")):
        a = float(R_.leading_exponent(R_.BOUNDS[name].expr, "epsilon", at=0))
        assert 1.0 / a == pytest.approx(laws[cid])
    p = M.problem()
    assert laws["memfbo.memory_independent_of_tau"] == 8 * (2 * p.dim_x + 4 * p.dim_y)
    assert laws["memfbo.first_order_only"] == 0.0


def test_plateau_is_the_penalty_point():
    """τ = 1, P = n, exact gradients: the iterates stop at x_λ, where ‖∇Φ‖ is the gap."""
    out = M.plateau(32.0, 2, seed=3)
    x_lam, floor = penalty_stationary_point(M.problem(0.0), 32.0)
    assert np.all(out["dist_to_x_lambda"] < 1e-16)
    np.testing.assert_allclose(out["value"], floor, rtol=1e-8)
    p = M.problem(0.0)
    gap = np.linalg.norm(penalty_gradient(p, x_lam, 32.0) - p.hypergradient(x_lam))
    assert gap ** 2 == pytest.approx(floor, rel=1e-8)


def test_client_drift_is_the_recorded_definition():
    """Δ_y is what Prop. 5.8 defines, recomputed here from the local iterates by hand: one
    round of τ local steps from the penalty point, exact gradients, P = n."""
    p, lam, tau = M.problem(0.0), M.DRIFT_LAMBDA, 6
    x_lam, _ = penalty_stationary_point(p, lam)
    y0, z0 = penalty_y(p, x_lam, lam), p.y_star(x_lam)
    g = MC._gammas(lam, p)
    eta = g["gamma_y"] / tau
    tr = run("memfbo", p, rounds=1, replicates=1, seed=0, penalty=lam, local_steps=tau,
             sampled_clients=M.N_CLIENTS, x0=x_lam, y0=y0, z0=z0, **g)
    h = p.host
    idx = np.arange(M.N_CLIENTS)[None, :]
    x = np.broadcast_to(x_lam, (1, M.N_CLIENTS, M.DIM_X)).copy()
    y = np.broadcast_to(y0, (1, M.N_CLIENTS, M.DIM_Y)).copy()
    z = np.broadcast_to(z0, (1, M.N_CLIENTS, M.DIM_Y)).copy()
    total = np.zeros((1, M.N_CLIENTS))
    for _ in range(tau):
        total += ((y - y0) ** 2).sum(-1)
        dz = h.exact_grad_y_g(idx, x, z)
        dy = h.exact_grad_y_f(idx, x, y) + lam * h.exact_grad_y_g(idx, x, y)
        dx = h.exact_grad_x_f(idx, x, y) + lam * (h.exact_grad_x_g(idx, x, y)
                                                  - h.exact_grad_x_g(idx, x, z))
        x, y, z = x - g["gamma_x"] / tau * dx, y - eta * dy, z - g["gamma_z"] / tau * dz
    assert total.max() > 0
    np.testing.assert_allclose(tr.extras["drift_y"][0, 0], total.mean() / tau, rtol=1e-10)


def test_drift_measures():
    """Δ_y grows like τ² at fixed η on heterogeneous clients, like τ on identical noisy ones."""
    a, b = (M.drift_fixed_eta(t, 2, seed=0)["value"] for t in (8, 16))
    assert np.log2(b.mean() / a.mean()) > 1.8
    a, b = (M.drift_fixed_eta(t, 4, seed=0, identical_clients=True)["value"] for t in (8, 16))
    assert 0.8 < np.log2(b.mean() / a.mean()) < 1.3
    out = M.drift_stationarity(8, 2, seed=0)
    assert out["value"].shape == (2,) and np.all(out["value"] > 0)
    assert not out["diverged"].any()


def test_rate_measure_outputs():
    out = M.rate_partial_T(40, 3, seed=0)
    assert out["value"].shape == (3,) and np.all(out["value"] > 0)
    assert not out["diverged"].any()
    assert np.all(out["hvp_calls"] == 0) and np.all(out["rounds"] == 40)
    tr = run("memfbo", M.problem(), rounds=40, replicates=3, seed=0,
             **M.schedule(40, M.P_PARTIAL, False))
    np.testing.assert_allclose(out["value"], tr.stationarity[:, 21:].mean(axis=1))


def test_counts_and_their_mutants():
    assert M.memory(7, 1, seed=0)["value"][0] == M.LAW_MEMORY.value
    stored = M.memory(7, 1, seed=0, mutant="stored_directions")["value"][0]
    assert stored == 8 * (1 + 7) * (M.DIM_X + 2 * M.DIM_Y)  # x, y, z + 7 stored triples
    so = M.second_order_calls(3, 1, seed=0)
    assert so["value"][0] == 0.0
    assert so["grad_calls_per_round"][0] == 6 * M.P_PARTIAL * 3
    assert M.second_order_calls(3, 1, seed=0, mutant="second_order")["value"][0] == (
        M.P_PARTIAL * 3)
    with pytest.raises(ValueError, match="mutant"):
        M.memory(2, 1, seed=0, mutant="nope")


def test_roles_mutants_and_sources():
    for c in M.CLAIMS:
        assert c.role in ("confirmation", "finding", "control"), c.id
        if c.role == "control":
            assert not c.mutants
        else:
            assert c.mutants and all(m.kind for m in c.mutants), c.id
        if c.window is not None:
            assert c.window_reason, c.id
        assert all(t.startswith("MEMFBO-") for t in c.touches), c.id
        text = " ".join((c.source, c.reason, c.schedule, *c.touches))
        for banned in ("PAPERS", ".txt", "[NOTE]", "DESIGN"):
            assert banned not in text, (c.id, banned)


def test_statements_parse_as_mathtext():
    from bilevel_theory.reports.figures import mathtext_ok

    for c in M.CLAIMS:
        assert mathtext_ok(f"${c.statement}$"), c.id
        assert mathtext_ok(f"${c.quantity}$"), c.id
        assert c.source.startswith("Yang, Xiao, Ma & Ji, AAAI 2025")
        assert "[TEXT" in c.source or "[INFERRED]" in c.source
        assert c.schedule, c.id
        assert c.paper == "MemFBO 2025"


def test_penalty_gap_is_an_upper_bound_from_section_5_2():
    """§5.2's O(1/λ) is an upper bound (at_most); the drift consequence is a control."""
    by = {c.id: c for c in M.CLAIMS}
    assert by["memfbo.penalty_gap"].kind == "at_most"
    assert "§5.2" in by["memfbo.penalty_gap"].source
    assert by["memfbo.plateau_vs_penalty"].kind == "at_most"
    assert by["memfbo.drift_stationarity_vs_tau"].role == "control"
    out = M.penalty_gap(64, 3, 0)["value"]
    assert np.all(out == out[0]) and out[0] > 0


def test_client_sampling_spread_grows_at_most_like_kappa():
    """The coverage map's reason for not sweeping κ in Props. 5.8/5.10: with μ ⪯ A_i ⪯ L the
    κ-part of the clients' spread at y_λ, mean_i ‖(A_i − Ā)Ā⁻¹v‖², is at most
    ‖v‖²(κ − 1)²/(4κ), attained (two clients at μ and L along an eigenvector of Ā at 2Lμ/(L+μ));
    random spectra in [μ, L] stay below it."""
    rng = np.random.default_rng(0)
    mu = 1.0
    for kappa in (2.0, 10.0, 100.0):
        L = kappa * mu
        cap = (kappa - 1) ** 2 / (4 * kappa)
        s = 2 * L * mu / (L + mu)
        w = (s - mu) / (L - mu)  # weight of the clients at L in the worst case
        worst = w * (L - s) ** 2 / s ** 2 + (1 - w) * (mu - s) ** 2 / s ** 2
        assert worst == pytest.approx(cap, rel=1e-12)
        for _ in range(20):
            n, d = 6, 3
            Q, _ = np.linalg.qr(rng.standard_normal((n, d, d)))
            A = np.einsum("nij,nj,nkj->nik", Q, rng.uniform(mu, L, (n, d)), Q)
            v = rng.standard_normal(d)
            u = np.linalg.solve(A.mean(0), v)
            spread = np.mean(np.sum((np.einsum("nij,j->ni", A - A.mean(0), u)) ** 2, -1))
            assert spread <= cap * (v @ v) * (1 + 1e-12)


def test_rate_apart_from_T_is_the_excess_over_the_penalty_floor():
    """The τ- and P-sweeps at T = 400 store the tail average less ‖∇Φ(x_λ)‖² (λ = c_λT^{1/3}
    at every point), on copies of the instance for P; the grids stay within Cor 5.12's
    τ ≤ c_τT^{4/3}/P; bad sweep values are refused."""
    from bilevel_theory.verify.claims.memfbo import rates as MR

    out = MR.full_excess_P(32, 2, seed=1)
    sc = M.schedule(MR.T_APART, 32, True, tau=MR.TAU_APART)
    tr = run("memfbo", M.problem().tiled(2), rounds=MR.T_APART, replicates=2, seed=1, **sc)
    floor = penalty_stationary_point(M.problem(), sc["penalty"])[1]
    np.testing.assert_allclose(out["value"], MR._tail(tr) - floor)
    assert out["penalty_floor"][0] == pytest.approx(floor) and floor > 0
    for cid in ("memfbo.rate_full_vs_local_steps", "memfbo.rate_full_vs_clients"):
        claim = next(c for c in M.CLAIMS if c.id == cid)
        assert all(c["holds"] for c in claim.check_conditions("full")), cid
    with pytest.raises(ValueError, match="multiple of 16"):
        MR.full_excess_P(24, 2, seed=0)
    with pytest.raises(ValueError, match="mutant"):
        MR.full_excess_tau(2, 2, seed=0, mutant="one_client")


def test_rate_apart_counts_the_samples_it_draws():
    """Cor 5.12's samples PτT are counted by the ledger as the τ-sweep draws them (first-order
    calls only): the count is one multiple of PτT at every τ, never a declared number."""
    from bilevel_theory.verify.claims.memfbo import rates as MR

    counts = {tau: MR.full_excess_tau(tau, 2, seed=0) for tau in (1, 3)}
    per = {tau: o["grad_calls"][0] / (M.N_CLIENTS * tau * MR.T_APART) for tau, o in counts.items()}
    assert per[1] == per[3] and per[1] == int(per[1]) >= 1
    assert all(o["hvp_calls"][0] == o["jvp_calls"][0] == 0 for o in counts.values())


def test_last_direction_mutant_uploads_the_last_local_step():
    """With one local step the last direction is eq. (7)'s aggregate: the same run, bitwise."""
    sc = M.schedule(40, M.N_CLIENTS, True, tau=1)
    a = MC._run(M.problem(), 40, 2, 3, "numpy", **sc)
    b = MC._run(M.problem(), 40, 2, 3, "numpy", "last_direction", **sc)
    np.testing.assert_array_equal(a.x, b.x)


@pytest.mark.parametrize("cid, grid, reps", [
    ("memfbo.rate_full_vs_local_steps", (1, 4, 16), 8),
    ("memfbo.rate_full_vs_clients", (16, 64, 128), 8),
])
def test_rate_apart_claims_reach_their_verdicts_on_a_short_grid(cid, grid, reps,
                                                                short_grid_verdicts):
    short_grid_verdicts(next(c for c in M.CLAIMS if c.id == cid), grid, reps)
