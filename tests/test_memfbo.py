"""MemFBO (Yang, Xiao, Ma & Ji, AAAI 2025): penalty bias, plateau vs λ, exact ledger, memory
vs τ, client drift recording."""

from __future__ import annotations

import numpy as np
import pytest

from bilevel_theory import run
from bilevel_theory.memfbo import (
    inferred_penalty,
    penalty_gradient,
    penalty_stationary_point,
    penalty_y,
)
from bilevel_theory.problems import QuadraticBilevel


def make(h=0.1, noise=0.0, clients=20, seed=0):
    return QuadraticBilevel.random(clients=clients, dim_x=5, dim_y=5, kappa=5, heterogeneity=h,
                                   noise=noise, seed=seed)


@pytest.fixture(scope="module")
def prob():
    return make()


# ------------------------------------------------------------------------------ closed forms


def test_penalty_gradient_matches_finite_differences_of_value_function(prob):
    """``∇L*_λ`` (envelope formula) against central differences of ``L*_λ(x) = f(x, y_λ) +
    λ(g(x, y_λ) − g(x, y*))`` (exact quadratic: differences agree to rounding)."""
    lam = 7.0

    def value(x):
        y_lam, y_star = penalty_y(prob, x, lam), prob.y_star(x)
        return prob.f(x, y_lam) + lam * (prob.g(x, y_lam) - prob.g(x, y_star))

    x = np.random.default_rng(0).standard_normal(5)
    eps = 1e-5
    fd = np.array([(value(x + eps * e) - value(x - eps * e)) / (2 * eps) for e in np.eye(5)])
    np.testing.assert_allclose(penalty_gradient(prob, x, lam), fd, rtol=1e-6, atol=1e-6)
    # y_λ minimizes f + λg: its gradient vanishes
    C = prob.closed_form
    y = penalty_y(prob, x, lam)
    grad = x @ C.R + y @ C.S + C.q + lam * (C.A @ y - C.B @ x - C.c)
    assert np.abs(grad).max() < 1e-10


def test_penalty_gap_decays_like_one_over_lambda(prob):
    """[TEXT] ``‖∇L*_λ − ∇Φ‖ = O(1/λ)``: exact closed form, log–log slope ≈ −1 (tight: the
    leading term is ``c/λ``; at λ ≥ 80 the next term moves the slope by < 0.01)."""
    x = np.random.default_rng(1).standard_normal((4, 5))
    lams = np.array([80.0, 320.0, 1280.0, 5120.0])
    gaps = np.array([np.linalg.norm(penalty_gradient(prob, x, lam) - prob.hypergradient(x),
                                    axis=-1) for lam in lams])  # (λ, points)
    for j in range(x.shape[0]):
        slope = np.polyfit(np.log(lams), np.log(gaps[:, j]), 1)[0]
        assert slope == pytest.approx(-1.0, abs=0.02), f"gap ∝ λ^{slope:.3f}"
    scaled = lams[:, None] * gaps
    assert np.all(scaled[-1] > 1e-3)  # a genuine 1/λ term, not faster
    np.testing.assert_allclose(scaled[-1], scaled[-2], rtol=0.01)


def test_penalty_requires_strong_convexity():
    p = make()
    with pytest.raises(ValueError, match="lam"):
        penalty_gradient(p, np.zeros(5), 0.0)
    with pytest.raises(ValueError, match="penalty"):
        run("memfbo", p, rounds=1, penalty=-1.0)


# ------------------------------------------------------------------------------ the plateau


@pytest.fixture(scope="module")
def plateau_runs(prob):
    """Full participation, exact oracles; τ = 1 (closed-form fixed point) and τ = 5."""
    out = {}
    for lam in (5.0, 20.0, 80.0):
        for tau in (1, 5):
            out[lam, tau] = run("memfbo", prob, rounds=800, replicates=1, seed=0, penalty=lam,
                                sampled_clients=prob.clients, local_steps=tau)
    return out


def test_converges_to_penalty_stationary_point_with_one_local_step(prob, plateau_runs):
    """≈ (exact fixed point): with τ = 1, P = n and exact gradients MemFBO is gradient descent–
    ascent on L and stops at the zero ``x_λ`` of ``∇L*_λ``, with ``‖∇Φ(x_λ)‖² > 0``."""
    for lam in (5.0, 20.0, 80.0):
        tr = plateau_runs[lam, 1]
        x_lam, floor = penalty_stationary_point(prob, lam)
        err = np.abs(tr.x[0, -1] - x_lam).max()
        assert err < 1e-4, f"λ = {lam}: ‖x_T − x_λ‖∞ = {err:.3g}"
        assert tr.stationarity[0, -1] == pytest.approx(floor, rel=1e-3)
        z = tr.extras["z"][-1, 0]
        np.testing.assert_allclose(z, prob.y_star(tr.x[0, -1]), atol=1e-5)  # z → y*(x)
        np.testing.assert_allclose(tr.y[0, -1], penalty_y(prob, tr.x[0, -1], lam), atol=1e-5)


@pytest.mark.parametrize("tau", [1, 5])
def test_plateau_shrinks_like_one_over_lambda_squared(plateau_runs, tau):
    """The stationarity plateau decreases with λ, roughly as 1/λ² (the squared O(1/λ) gap;
    measured slope −1.93 at λ ∈ {5, 20, 80}, τ = 1: pre-asymptotic, window [−2.2, −1.7]).
    With τ = 5 local steps, heterogeneity adds client drift on top of the penalty bias."""
    lams = np.array([5.0, 20.0, 80.0])
    plateau = np.array([plateau_runs[lam, tau].stationarity[0, -100:].mean() for lam in lams])
    assert np.all(np.diff(plateau) < 0)
    slope = np.polyfit(np.log(lams), np.log(plateau), 1)[0]
    assert -2.2 < slope < -1.7, f"plateau ∝ λ^{slope:.2f}"
    assert plateau[-1] > 1e-5  # a real plateau, not convergence to a stationary point of Φ


# ------------------------------------------------------------------------------ ledger & memory


def test_ledger_exact(prob):
    """One round per iteration (one aggregation event), 3 vectors down and up, zero
    second-order calls, and per round
    ``P·τ·6`` gradients (∇_y g at z; ∇_y f, ∇_y g at y; ∇ₓf; the ∇ₓg pair at y and z)."""
    P, tau, T = 7, 3, 5
    tr = run("memfbo", prob, rounds=T, replicates=2, seed=0, sampled_clients=P, local_steps=tau)
    led = tr.ledger
    np.testing.assert_array_equal(led.per_round("rounds"), np.ones(T))
    np.testing.assert_array_equal(led.per_round("uplink"), np.full(T, 3.0))
    np.testing.assert_array_equal(led.per_round("downlink"), np.full(T, 3.0))
    np.testing.assert_array_equal(led.per_round("grad_calls"), np.full(T, 6.0 * P * tau))
    assert led.totals()["hvp_calls"] == 0 and led.totals()["jvp_calls"] == 0


def test_state_bytes_independent_of_local_steps(prob):
    """Measured from the arrays each client keeps (``Context.keep``): x, y, z and the three
    running sums, whatever τ."""
    sizes = {tau: run("memfbo", prob, rounds=2, replicates=1, seed=0,
                      local_steps=tau).ledger.totals()["state_bytes"] for tau in (1, 5, 20)}
    assert len(set(sizes.values())) == 1, sizes
    assert sizes[1] == 8.0 * (2 * prob.dim_x + 4 * prob.dim_y)


def test_context_keep_measures_per_client_bytes():
    from bilevel_theory import make_context

    ctx = make_context(make(), replicates=3)
    ctx.keep(np.zeros((3, 7, 5)), np.zeros((3, 7, 2), dtype=np.float32))
    assert ctx.state_bytes == 5 * 8 + 2 * 4
    ctx.keep(np.zeros((3, 7, 1)))
    assert ctx.state_bytes == 48  # the running maximum


def test_drift_is_recorded_per_round(prob):
    """Prop. 5.8's Δ_x, Δ_y, Δ_z, one value per round and replicate; 0 with one local step
    (k = 0 only) and positive with several (heterogeneous clients)."""
    one = run("memfbo", prob, rounds=3, replicates=2, seed=0, local_steps=1)
    many = run("memfbo", prob, rounds=3, replicates=2, seed=0, local_steps=4)
    for v in ("x", "y", "z"):
        assert one.extras[f"drift_{v}"].shape == (3, 2)
        assert np.all(one.extras[f"drift_{v}"] == 0.0)
        assert np.all(many.extras[f"drift_{v}"] > 0.0)


def test_sampling_without_replacement_is_fixed(prob):
    with pytest.raises(ValueError, match="sampled_clients"):
        run("memfbo", prob, rounds=1, sampled_clients=prob.clients + 1)
    with pytest.raises(ValueError, match="replace"):
        run("memfbo", prob, rounds=1, replace=True)


# ------------------------------------------------------------------------------ behaviour


def test_defaults_reduce_stationarity_to_the_penalty_plateau(prob):
    """Default λ = 10, P = 10 of 20 (client-sampling noise), τ = 5: ‖∇Φ‖² drops by > 100×
    and stays within a factor of the λ-plateau (it cannot go below it for long)."""
    tr = run("memfbo", prob, rounds=400, replicates=4, seed=0)
    assert not tr.diverged.any()
    final = tr.stationarity[:, -50:].mean()
    assert final < 1e-2 * tr.stationarity[:, 0].mean()
    floor = penalty_stationary_point(prob, 10.0)[1]
    assert 0.5 * floor < final < 2.0 * floor


def test_same_seed_bitwise_and_replicates_differ():
    p = make(noise=0.3)
    a = run("memfbo", p, rounds=15, replicates=3, seed=2)
    b = run("memfbo", p, rounds=15, replicates=3, seed=2)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.y, b.y)
    assert np.array_equal(a.extras["z"], b.extras["z"])
    assert not np.array_equal(a.x[0], a.x[1])
    assert not np.array_equal(a.x, run("memfbo", p, rounds=15, replicates=3, seed=3).x)


def test_x_gradient_noise_cancels_in_the_lagrangian_pair():
    """``∇ₓL_i(x, y, z; ξ)`` uses one ξ for both ``g_i`` terms: at y = z the λ-term is
    exactly zero, so the x-update's noise does not grow with λ."""
    p = make(noise=0.5)
    ends = []
    for lam in (10.0, 1000.0):
        tr = run("memfbo", p, rounds=1, replicates=64, seed=0, penalty=lam, local_steps=1,
                 gamma_x=0.1)
        ends.append(tr.x[:, 1].std(axis=0).mean())
    assert ends[1] == pytest.approx(ends[0], rel=1e-9)


def test_defaults_follow_the_documented_step_structure(prob):
    c = prob.constants
    for lam in (5.0, 50.0):
        hp = run("memfbo", prob, rounds=0, penalty=lam, local_steps=4).hyperparameters
        assert hp["gamma_y"] == pytest.approx(1 / (c["ell_f1"] + lam * c["ell_g1"]))
        assert hp["gamma_z"] == pytest.approx(1 / c["ell_g1"])
        assert hp["gamma_x"] == pytest.approx(min(0.5 / c["L_phi"], 0.5 * lam * hp["gamma_y"]))
        assert hp["eta_y"] == pytest.approx(hp["gamma_y"] / 4)


def test_inferred_penalty():
    assert inferred_penalty(1000, 10, full_participation=False) == pytest.approx(1e4 ** (1 / 7))
    assert inferred_penalty(1000, 10, full_participation=True) == pytest.approx(10.0)


@pytest.mark.parametrize("kw,exc,word", [
    (dict(local_steps=0), ValueError, "local_steps"),
    (dict(gamma_x=0.0), ValueError, "gamma_x"),
    (dict(eta_y=-1.0), ValueError, "eta_y"),
    (dict(penalty="big"), TypeError, "penalty"),
    (dict(z0=np.ones(2)), ValueError, "z0"),
    (dict(lamda=3.0), ValueError, "lamda"),
])
def test_bad_input(prob, kw, exc, word):
    with pytest.raises(exc, match=word):
        run("memfbo", prob, rounds=1, **kw)
