"""MemFBO's Prop. 5.10 (``verify/claims/memfbo/second_moment.py``): the second moment of the
server's ``h_y`` read from one round of the algorithm against the closed form of sampling
without replacement, the law derived from the registered bound, the sweep's inverse maps, and
each claim and mutant at its expected verdict on a short grid."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bilevel_theory import rates
from bilevel_theory.memfbo import penalty_y
from bilevel_theory.verify.claims import CLAIMS as CATALOGUE
from bilevel_theory.verify.claims.memfbo import second_moment as SM
from bilevel_theory.verify.claims.memfbo.common import N_CLIENTS, problem


def _spread(p) -> tuple[np.ndarray, float]:
    """The clients' exact ``∇_yL_i`` at the start point and their mean squared norm ``S²``."""
    s = SM.start(p)
    lam = SM.LAMBDA
    idx = np.arange(p.clients)[None, :]
    x = np.broadcast_to(s["x0"], (1, p.clients, p.dim_x))
    y = np.broadcast_to(s["y0"], (1, p.clients, p.dim_y))
    d = p.exact_grad_y_f(idx, x, y) + lam * p.exact_grad_y_g(idx, x, y)
    return d[0], float((d[0] ** 2).sum(-1).mean())


def test_directions_average_to_zero_at_the_penalty_point():
    p = problem(0.0)
    d, s2 = _spread(p)
    np.testing.assert_allclose(d.mean(axis=0), 0.0, atol=1e-10 * math.sqrt(s2))
    assert s2 > 0
    np.testing.assert_allclose(SM.start(p)["y0"], penalty_y(p, SM.start(p)["x0"], SM.LAMBDA))


@pytest.mark.parametrize("P", [2, 8, 15])
def test_second_moment_is_the_without_replacement_variance(P):
    p = problem(0.0)
    _, s2 = _spread(p)
    out = SM.second_moment(p, P, 1, 20, 3, "numpy", pool=1000)
    exact = s2 * (N_CLIENTS - P) / (P * (N_CLIENTS - 1))
    # the mean of 20000 replicates: relative standard error below 2 %
    assert out["value"].mean() == pytest.approx(exact, rel=0.06)
    repl = SM.second_moment(p, P, 1, 20, 3, "numpy", algorithm="with_replacement", pool=1000)
    assert repl["value"].mean() == pytest.approx(s2 / P, rel=0.06)


def test_full_participation_gives_zero_and_tiling_keeps_the_spread():
    p = problem(0.0)
    out = SM.second_moment(p, N_CLIENTS, 1, 8, 0, "numpy")
    assert out["value"].max() < 1e-20
    assert _spread(p.tiled(3))[1] == pytest.approx(_spread(p)[1], rel=1e-12)


def test_inverse_maps_and_laws():
    for P in range(1, N_CLIENTS):
        assert SM._P_of(SM.effective_draws(P, N_CLIENTS)) == P
    assert SM.effective_draws(N_CLIENTS, N_CLIENTS) == math.inf
    with pytest.raises(ValueError, match="P_eff"):
        SM.sampling_vs_P(3.3, 2, 0)
    assert SM.LAW_SAMPLING.value == -1.0 and SM.LAW_DATA.value == -1.0
    b = rates.BOUNDS["memfbo.prop510_second_moment"]
    assert {"P", "n", "tau", "lambda"} <= set(b.symbols)


def test_every_budget_runs_within_a_small_memory_estimate():
    """The largest instance of every budget's n-sweep, run in chunks of ``chunk_size``: the
    memory estimate stays far below any machine's (a run is refused above 80 % of it)."""
    from bilevel_theory.hyperparameters import estimate
    from bilevel_theory.memfbo import MemFBO

    claim = CATALOGUE["memfbo.second_moment_vs_clients"]
    for budget, grid in claim.grid.items():
        c = max(SM._inverse(v, range(1, 1025),
                            lambda c: SM.effective_draws(SM.P_TILED, N_CLIENTS * c))
                for v in grid)
        p = problem(0.0).tiled(c)
        alg = MemFBO(p, penalty=SM.LAMBDA, sampled_clients=SM.P_TILED, local_steps=1,
                     **SM.start(p))
        assert estimate(alg, 1, SM.chunk_size(p.clients))["bytes"] < 0.5 * 2 ** 30, budget


def test_unnormalized_mutant_multiplies_the_direction_by_tau():
    p = problem(1.0, 0.0)
    a = SM.second_moment(p, N_CLIENTS, 4, 64, 5, "numpy")
    b = SM.second_moment(p, N_CLIENTS, 4, 64, 5, "numpy", algorithm="unnormalized")
    np.testing.assert_allclose(b["value"], 16 * a["value"], rtol=1e-9)


@pytest.mark.parametrize("cid, grid, reps", [
    ("memfbo.second_moment_vs_sampled_clients", (1.0, 5.0, 45.0, 225.0), 32),
    ("memfbo.second_moment_vs_clients", tuple(SM._grid_n((1, 2, 8))), 32),
    ("memfbo.second_moment_vs_local_steps", (1, 4, 16, 64), 16),
    ("memfbo.second_moment_partial_vs_tau", (16, 32, 64), 32),
    ("memfbo.second_moment_relaxed_participation", (2, 8, 32), 16),
    ("memfbo.sampling_floor_vs_sampled_clients", (1.0, 15.0, 225.0), 4),
])
def test_claim_and_mutants_reach_their_verdicts_on_a_short_grid(cid, grid, reps,
                                                                short_grid_verdicts):
    short_grid_verdicts(CATALOGUE[cid], grid, reps)


def test_partial_tau_sweep_starts_where_the_data_term_is_a_twentieth():
    """The τ-contrast's grid starts at the first power of 2 above τ₀ = v_L(n − 1)/(0.05(n − P)S²),
    with ``S²`` the exact spread of the directions (they average to 0 at the start) and
    ``v_L = σ²(1 + λ²)`` the variance of one sample of ``∇_yL_i``; its law is Prop. 5.10's
    τ → ∞ exponent at P < n (0), and the mutant runs every client, as the contrast does."""
    p = problem()
    v, s2 = SM._sampling_constants(p)
    assert s2 == pytest.approx(_spread(p)[1], rel=1e-9)
    assert v == pytest.approx(p.grad_noise ** 2 * (1 + SM.LAMBDA ** 2))
    t0 = v * (N_CLIENTS - 1) / (0.05 * (N_CLIENTS - SM.P_HALF) * s2)
    assert SM.tau_threshold() == pytest.approx(t0)
    claim = CATALOGUE["memfbo.second_moment_partial_vs_tau"]
    for budget in ("smoke", "standard", "full"):
        first = claim.grid[budget][0]
        assert first >= t0 > first / 2
    assert claim.law.value == 0.0
    (mutant,) = claim.mutants
    assert mutant.measure_kwargs == {"sampled": N_CLIENTS}


def test_relaxed_participation_meets_the_threshold_and_its_law():
    """P(τ) = ⌈(τ − 1)n/τ + 1⌉ makes (n − P)/(n − 1) ≤ 1/τ (the reading MEMFBO-R5), stays below
    n on the grid, and the law is Prop. 5.10's τ-exponent there: −1."""
    n = SM.RELAXED_N
    claim = CATALOGUE["memfbo.second_moment_relaxed_participation"]
    for tau in claim.grid["full"]:
        P = SM.relaxed_sampled(tau, n)
        assert P < n and (n - P) / (n - 1) <= 1 / tau
        assert SM.relaxed_sampled(tau, n) - 1 < (tau - 1) * n / tau + 1
    assert SM.relaxed_sampled(n, n) == n
    assert claim.law.value == -1.0
    assert all(c["holds"] for c in claim.check_conditions("full"))


def test_sampling_floor_runs_where_the_client_sampling_term_dominates():
    """The floor's τ is the first power of 2 above τ₀ at the sweep's largest P < n (where the
    client-sampling term is smallest), so the data-sampling term is at most 5% of it at every
    point; its law is the client-sampling term's −1 in P_eff, and its mutant draws with
    replacement."""
    t0 = SM.tau_threshold(max(SM.FLOOR_SAMPLED))
    assert SM.floor_tau() >= t0 > SM.floor_tau() / 2
    assert all(SM.tau_threshold(P) <= t0 for P in SM.FLOOR_SAMPLED)
    claim = CATALOGUE["memfbo.sampling_floor_vs_sampled_clients"]
    assert claim.law.value == -1.0
    assert all(c["holds"] for c in claim.check_conditions("full"))
    (mutant,) = claim.mutants
    assert mutant.measure_kwargs == {"algorithm": "with_replacement"}
