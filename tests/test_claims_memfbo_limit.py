"""MemFBO's rates as T → ∞ (MEMFBO-L1): the exact round map is the algorithm's own round (and,
with client sampling, its expectation), its path is a lower bound of the noisy runs' mean, the
closed-form walk finds the path's minimum, and the claims' findings and repairs come out of
it."""

from __future__ import annotations

import numpy as np
import pytest

from bilevel_theory.algorithm import run_algorithm
from bilevel_theory.memfbo import MemFBO
from bilevel_theory.verify.claims.memfbo import limit as L
from bilevel_theory.verify.claims.memfbo.common import (
    N_CLIENTS,
    P_PARTIAL,
    problem,
    schedule,
)


def _alg(T: int, heterogeneity: float = 1.0, **hp) -> MemFBO:
    return MemFBO(problem(0.0, heterogeneity), **{**schedule(T, N_CLIENTS, True), **hp})


@pytest.mark.parametrize("T", [64, 128])
def test_the_round_map_is_the_algorithms_round(T):
    """One exact round of MemFBO from w = 0 and from each unit vector gives (M, b)."""
    alg = _alg(T)
    M, b = L.round_map(alg)
    p = alg.problem
    dx, dy = p.dim_x, p.dim_y
    D = M.shape[0]
    ends = []
    for j in range(D + 1):
        w = np.zeros(D) if j == 0 else np.eye(D)[j - 1]
        tr = run_algorithm(_alg(T, x0=w[:dx], y0=w[dx:dx + dy], z0=w[dx + dy:]), 1, 1, 0)
        ends.append(np.r_[tr.x[0, 1], tr.y[0, 1], tr.extras["z"][0, 0]])
    ends = np.array(ends)
    np.testing.assert_allclose(ends[0], b, atol=1e-13)
    np.testing.assert_allclose((ends[1:] - ends[0]).T, M, atol=1e-13)


def test_the_exact_path_is_the_noisy_runs_mean_and_settles_at_the_fixed_point():
    """With noise the iterates' mean follows the exact recursion (Jensen then bounds E‖∇Φ‖²
    from below); without, a run ends at the round map's fixed point."""
    alg = _alg(64)
    xs = L.exact_path(alg, 30)
    exact = run_algorithm(alg, 30, 2, 0)
    np.testing.assert_allclose(exact.x[0], xs, atol=1e-12)
    noisy = run_algorithm(MemFBO(problem(), **schedule(64, N_CLIENTS, True)), 30, 400, 1)
    se = noisy.x[:, -1].std(axis=0, ddof=1) / np.sqrt(400)
    assert np.all(np.abs(noisy.x[:, -1].mean(axis=0) - xs[-1]) < 5 * se + 1e-12)
    M, b = L.round_map(alg)
    w_fix = np.linalg.solve(np.eye(M.shape[0]) - M, b)
    np.testing.assert_allclose(L.exact_path(alg, 120)[-1], w_fix[:alg.problem.dim_x],
                               atol=1e-10)


def test_the_finding_has_a_floor_and_identical_clients_remove_it():
    out = L.full_limit(4096, 3, seed=0)
    assert out["value"].shape == (3,) and np.all(out["value"] == out["value"][0])
    assert 0.004 < out["value"][0] < out["floor"][0]          # the path dips, then settles
    assert out["floor"][0] > 5 * out["penalty_floor"][0]        # the drift, not the penalty
    a, b = (L.full_limit(T, 1, 0)["value"][0] for T in (1024, 2 ** 16))
    assert np.log(b / a) / np.log(64) > -0.2                    # far from T^{-2/3}
    a, b = (L.full_limit(T, 1, 0, identical=True)["value"][0] for T in (1024, 2 ** 16))
    assert np.log(b / a) / np.log(64) == pytest.approx(-2 / 3, abs=0.05)


def test_a_step_schedule_is_refused():
    with pytest.raises(ValueError, match="must be a constant step"):
        L.round_map(_alg(64, gamma_x=lambda k: 0.1))


def test_client_sampling_averages_to_the_round_map():
    """Partial participation (P = 4 of 16 without replacement), noise-free: the mean over
    replicates of one round, each with its own sampled clients, is the round map's image
    within six standard errors, and its spread is not zero (the sampling matters)."""
    alg = MemFBO(problem(0.0, 1.0), **schedule(4096, P_PARTIAL, False))
    M, b = L.round_map(alg)
    R = 4000
    tr = run_algorithm(alg, 1, R, 3)
    end = np.concatenate([tr.x[:, 1], tr.y[:, 1], tr.extras["z"][0]], axis=1)
    want = M @ L._start(alg) + b
    se = end.std(axis=0, ddof=1) / np.sqrt(R)
    assert np.all(se > 0)
    assert np.all(np.abs(end.mean(axis=0) - want) < 6 * se)


@pytest.mark.parametrize("full, T", [(True, 1024), (False, 2 ** 16)])
def test_the_closed_form_walk_finds_the_paths_minimum(full, T):
    """:func:`path_minimum` (powers of the round map by chunks, stopped once the rest cannot
    come below the fixed point's value) equals the minimum over the step-by-step path; at
    T = 2^16 with partial participation it stops early (the path settles after ≈ 10⁴ rounds)."""
    alg = MemFBO(problem(0.0, 1.0), **schedule(T, N_CLIENTS if full else P_PARTIAL, full))
    affine = L.round_map(alg)
    values = L._stationarity(alg.problem, L.exact_path(alg, T, affine))
    value, at = L.path_minimum(alg, T, affine)
    assert value == pytest.approx(values.min(), rel=1e-9)
    assert at == int(values.argmin())


def test_the_partial_finding_levels_off_and_identical_clients_fall_as_the_rate():
    out = L.partial_limit(2 ** 32, 2, 0)
    assert np.all(out["value"] == out["value"][0])
    assert out["value"][0] > 5 * out["penalty_floor"][0]      # the drift, not the penalty gap
    a, b = (L.partial_limit(2 ** k, 1, 0)["value"][0] for k in (8, 32))
    assert np.log(b / a) / np.log(2 ** 24) > -0.2              # far from (PT)^{-2/7}
    a, b = (L.partial_limit(2 ** k, 1, 0, identical=True)["value"][0] for k in (8, 32))
    assert np.log(b / a) / np.log(2 ** 24) == pytest.approx(-2 / 7, abs=0.03)
