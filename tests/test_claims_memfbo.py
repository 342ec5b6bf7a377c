"""Claim-specific checks of ``verify/claims/memfbo.py``: the derived schedules and predictions,
the closed forms the measures rely on, the measures' outputs, and the statements' mathtext."""

from __future__ import annotations

import math

import numpy as np
import pytest
from bilevel_theory.verify.claim import BUDGETS
from bilevel_theory.verify.claims import memfbo as M

from bilevel_theory import rates as R_
from bilevel_theory import run
from bilevel_theory.memfbo import inferred_penalty, penalty_gradient, penalty_stationary_point


def test_schedules_are_derived_from_the_balance():
    """λ ∝ (PT)^{1/7} / T^{1/3} and γ_x = (Pτ/(λT))^{1/2} come out of ``rates.minimize_rate``."""
    assert M.LAM_EXP_PARTIAL == pytest.approx(1 / 7) and M.LAM_EXP_FULL == pytest.approx(1 / 3)
    lam, P, tau, T = 13.0, 4, 2, 800
    assert M._GAMMA_X(lam, P, tau, T) == pytest.approx(math.sqrt(P * tau / (lam * T)))
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
    assert laws["memfbo.client_drift_vs_tau"] == -1.0
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


def test_client_drift_is_zero_with_one_local_step():
    out = M.client_drift(1, 1, seed=0)
    assert out["value"][0] < 1e-20
    assert M.client_drift(4, 1, seed=0)["value"][0] > 1e-3


def test_rate_measure_outputs():
    out = M.rate_partial_T(40, 3, seed=0)
    assert out["value"].shape == (3,) and np.all(out["value"] > 0)
    assert not out["diverged"].any()
    assert np.all(out["hvp_calls"] == 0) and np.all(out["rounds"] == 40)
    tr = run("memfbo", M.problem(), rounds=40, replicates=3, seed=0,
             **M.schedule(40, M.P_PARTIAL, False))
    np.testing.assert_allclose(out["value"], tr.stationarity[:, 21:].mean(axis=1))


def test_counts():
    mem = M.memory(7, 1, seed=0)
    assert mem["value"][0] == mem["predicted"][0] == M.LAW_MEMORY.value
    so = M.second_order_calls(3, 1, seed=0)
    assert so["value"][0] == 0.0
    assert so["grad_calls_per_round"][0] == 6 * M.P_PARTIAL * 3


def test_statements_parse_as_mathtext():
    from bilevel_theory.reports.figures import mathtext_ok

    for c in M.CLAIMS:
        assert mathtext_ok(f"${c.statement}$"), c.id
        assert mathtext_ok(f"${c.quantity}$"), c.id
        assert c.source.startswith(M.SEED_FILE)
        assert "[TEXT" in c.source or "[INFERRED]" in c.source
        assert c.schedule, c.id
        assert c.paper == "MemFBO 2025"
