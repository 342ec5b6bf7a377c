"""LocalBSGM / LocalBSGVRM (Gao, arXiv preprint 2022, Alg. 1 and 2): convergence, the biases
that stop them, the ledger from communication events.

Tolerances say which kind they are: ``≤`` for the paper's upper bounds, ``≈`` (tight, with the
reason) for exact closed-form fixed points.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from bilevel_theory import run
from bilevel_theory.algorithm import make_context
from bilevel_theory.gao import (
    biased_stationary_point,
    default_theta,
    device_hypergradient,
    gao_constants,
    gao_estimate_pair,
    neumann_steps_for,
    theorem1_limits,
    theorem1_schedule,
    theorem2_eta,
    theorem2_momentum,
    theorem2_schedule,
    truncation_bias_bound,
)
from bilevel_theory.problems import QuadraticBilevel

NAMES = ("localbsgm", "localbsgvrm")


def make(h=0.1, noise=0.0, clients=20, seed=0):
    return QuadraticBilevel.random(clients=clients, dim_x=5, dim_y=5, kappa=5, heterogeneity=h,
                                   noise=noise, seed=seed)


@pytest.fixture(scope="module")
def prob():
    return make()


# ------------------------------------------------------------------------------ convergence


@pytest.mark.parametrize("name", NAMES)
def test_defaults_reduce_stationarity_100x_in_500_iterations(prob, name):
    tr = run(name, prob, rounds=500, replicates=2, seed=0)
    assert not tr.diverged.any()
    ratio = tr.stationarity[:, -1].mean() / tr.stationarity[:, 0].mean()
    assert ratio <= 1e-2, f"{name}: ‖∇Φ(x̄_500)‖²/‖∇Φ(x̄_0)‖² = {ratio:.3g}"


def test_localbsgvrm_starts_at_lower_level_solution(prob):
    """Alg. 2's input ``y_1 = y*(x_1)`` (closed form)."""
    tr = run("localbsgvrm", prob, rounds=1, replicates=1, seed=0)
    assert tr.inner_error[0, 0] < 1e-25
    tr = run("localbsgvrm", prob, rounds=1, replicates=1, seed=0, y0=np.zeros(5))
    assert tr.inner_error[0, 0] > 1e-2


@pytest.mark.parametrize("name,rounds,tol", [("localbsgvrm", 1000, 1e-9),
                                              ("localbsgm", 2500, 1e-4)])
def test_stops_at_closed_form_biased_point(prob, name, rounds, tol):
    """≈ (exact fixed point): with ``p = 1`` and exact oracles both methods converge to the zero
    ``x̃`` of the device-averaged local estimator, where ``‖∇Φ(x̃)‖² > 0`` (heterogeneity plus
    truncation bias), not to a stationary point of ``Φ``."""
    tr = run(name, prob, rounds=rounds, replicates=1, seed=0, period=1)
    hp = tr.hyperparameters
    x_tilde, floor = biased_stationary_point(prob, hp["theta"], hp["neumann_steps"])
    err = np.abs(tr.x[0, -1] - x_tilde).max()
    assert err < tol, f"{name}: ‖x̄_T − x̃‖∞ = {err:.3g}"
    assert floor > 1e-6
    assert tr.stationarity[0, -1] == pytest.approx(floor, rel=1e-2)


def test_heterogeneity_floor_is_independent_of_step_and_shrinks_like_h4():
    """The floor comes from eq. (3.1)'s local Hessians: ``(1/K)Σ_k B_kᵀA_k⁻¹∇_y f_k ≠
    BᵀA⁻¹∇_y f``.  It is O(h²) in the gradient (first-order terms average out), so
    ``‖∇Φ(x̃)‖² ∝ h⁴``; it vanishes at ``h = 0``; no step size removes it."""
    hs = np.array([0.1, 0.05, 0.025])
    floors = np.array([biased_stationary_point(make(h), neumann_steps=None)[1] for h in hs])
    slope = np.polyfit(np.log(hs), np.log(floors), 1)[0]
    assert 3.5 < slope < 4.5, f"floor ∝ h^{slope:.2f}, expected h⁴"
    assert biased_stationary_point(make(0.0), neumann_steps=None)[1] < 1e-20
    # the run's limit does not depend on η (it is a fixed point of the averaged map)
    p = make(0.1)
    ends = [run("localbsgvrm", p, rounds=1500, replicates=1, seed=0, period=1, eta=eta).x[0, -1]
            for eta in (0.15, 0.05)]
    assert np.abs(ends[0] - ends[1]).max() < 1e-8


def test_floor_exceeds_theorem_limit_so_small_epsilon_is_unreachable(prob):
    """Thm. 1 / Thm. 2 put only ``4Δ_Q²`` in their ``T → ∞, η → 0`` limit (``δ²`` enters
    multiplied by ``p²η²``).  With Q = 200, ``4Δ_Q² ≈ 10⁻¹²`` yet the iterates' limit has
    ``‖∇Φ‖² ≈ 10⁻⁵``: every ε between them is unreachable, contradicting Cor. 1/2."""
    theta, Q = default_theta(prob), 200
    _, floor = biased_stationary_point(prob, theta, Q)
    limit = 4 * truncation_bias_bound(prob, theta, Q) ** 2
    assert floor > 1e3 * limit, (floor, limit)


def test_truncation_bias_bounded_by_delta_q_and_decays_at_rate(prob):
    """≤ (Δ_Q is an upper bound) and the semilog slope in Q ≈ log(1 − θμ) (tight for the
    slowest mode, here within 3%)."""
    theta = default_theta(prob)
    x = np.random.default_rng(1).uniform(-1, 1, (4, 5))
    exact = device_hypergradient(prob, x, neumann_steps=None)
    Qs = np.array([20, 40, 80, 160])
    bias = np.array([np.linalg.norm(device_hypergradient(prob, x, theta, Q) - exact, axis=-1).max()
                     for Q in Qs])
    for Q, b in zip(Qs, bias):
        assert b <= truncation_bias_bound(prob, theta, Q)
    slope = np.polyfit(Qs, np.log(bias), 1)[0]
    rate = math.log(1 - theta * prob.constants["mu_g"])
    assert slope == pytest.approx(rate, rel=0.03), (slope, rate)
    # at h = 0 only truncation remains, and the floor shrinks with Q
    p0 = make(0.0)
    floors = [biased_stationary_point(p0, theta, Q)[1] for Q in (5, 10, 20, 40)]
    assert all(a > b for a, b in zip(floors, floors[1:]))


def test_local_steps_add_drift_only_under_heterogeneity():
    """p > 1: devices drift apart between averages (recorded in ``extras['drift']``); at h = 0
    they stay together."""
    for h, expect in ((0.1, True), (0.0, False)):
        tr = run("localbsgm", make(h), rounds=50, replicates=1, seed=0, neumann_steps=10)
        drift = tr.extras["drift"][:, 0]
        assert drift.shape == (50,)
        assert (drift[4::5] < 1e-25).all()  # right after each averaging
        assert bool(drift.max() > 1e-8) is expect


# ------------------------------------------------------------------------------ ledger


def test_localbsgm_ledger_exact(prob):
    K, Q, p, T = prob.clients, 7, 3, 12
    tr = run("localbsgm", prob, rounds=T, replicates=2, seed=0, period=p, neumann_steps=Q)
    led = tr.ledger
    k = np.arange(T)
    np.testing.assert_array_equal(led.per_round("rounds"), ((k + 1) % p == 0).astype(float))
    np.testing.assert_array_equal(led.per_round("uplink"), 4.0 * ((k + 1) % p == 0))
    np.testing.assert_array_equal(led.per_round("hvp_calls"), np.full(T, K * Q))
    np.testing.assert_array_equal(led.per_round("jvp_calls"), np.full(T, K))
    np.testing.assert_array_equal(led.per_round("grad_calls"), np.full(T, 3 * K))
    assert led.totals()["rounds"] == T // p


@pytest.mark.parametrize("name", NAMES)
def test_communication_comes_from_aggregate_and_broadcast_events(prob, name, monkeypatch):
    """≈ exact: one ``Context.aggregate`` of the four vectors ``u, v, x, y`` (one round, four
    uplink vectors) and one ``Context.broadcast`` of their averages (four downlink vectors)
    every ``p`` iterations (GAO-R2); ``Context.communicate`` is never called."""
    from bilevel_theory.algorithm import Context

    events = []
    agg, bc = Context.aggregate, Context.broadcast
    monkeypatch.setattr(Context, "communicate", lambda *a, **k: events.append("communicate"))
    monkeypatch.setattr(Context, "aggregate",
                        lambda self, *a, **k: (events.append(("aggregate", len(a))),
                                               agg(self, *a, **k))[1])
    monkeypatch.setattr(Context, "broadcast",
                        lambda self, *a, **k: (events.append(("broadcast", len(a))),
                                               bc(self, *a, **k))[1])
    p, T = 3, 13
    tr = run(name, prob, rounds=T, replicates=2, seed=0, period=p, neumann_steps=3)
    first = 0 if name == "localbsgm" else 1  # Alg. 1 counts t from 0, Alg. 2 from 1
    rounds = sum((t + 1) % p == 0 for t in range(first, first + T))
    assert events == [("aggregate", 4), ("broadcast", 4)] * rounds
    totals = tr.ledger.totals()
    assert totals["rounds"] == rounds
    np.testing.assert_array_equal(tr.ledger.per_round("downlink"), tr.ledger.per_round("uplink"))
    assert tr.ledger.per_round("uplink").sum() == 4 * rounds


def test_localbsgvrm_ledger_exact(prob):
    """t = 1: S full estimates per device; t > 1: the estimator at two points (same sample)."""
    K, Q, p, S, T = prob.clients, 7, 3, 4, 11
    tr = run("localbsgvrm", prob, rounds=T, replicates=2, seed=0, period=p, neumann_steps=Q,
             minibatch=S)
    led = tr.ledger
    t = np.arange(1, T + 1)
    np.testing.assert_array_equal(led.per_round("rounds"), ((t + 1) % p == 0).astype(float))
    hvp = np.where(t == 1, S * K * Q, 2 * K * Q)
    jvp = np.where(t == 1, S * K, 2 * K)
    grad = np.where(t == 1, 3 * S * K, 6 * K)
    np.testing.assert_array_equal(led.per_round("hvp_calls"), hvp)
    np.testing.assert_array_equal(led.per_round("jvp_calls"), jvp)
    np.testing.assert_array_equal(led.per_round("grad_calls"), grad)
    assert tr.hyperparameters["minibatch"] == S
    assert run("localbsgvrm", prob, rounds=1, period=4, neumann_steps=2).hyperparameters[
        "minibatch"] == 4  # Thm. 2: S = p


# ------------------------------------------------------------------------------ randomness


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_bitwise_and_replicates_differ(name):
    p = make(noise=0.3)
    a = run(name, p, rounds=20, replicates=3, seed=5, neumann_steps=5)
    b = run(name, p, rounds=20, replicates=3, seed=5, neumann_steps=5)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.y, b.y)
    assert not np.array_equal(a.x[0], a.x[1])
    c = run(name, p, rounds=20, replicates=3, seed=6, neumann_steps=5)
    assert not np.array_equal(a.x, c.x)


def test_same_sample_pair_shares_every_draw():
    """Eq. (3.8): at identical points the two estimates coincide although noise > 0."""
    p = make(noise=0.5)
    ctx = make_context(p, replicates=3, seed=0)
    idx = ctx.xp.broadcast_to(ctx.xp.arange(p.clients), (3, p.clients))
    x = np.random.default_rng(0).standard_normal((3, p.clients, 5))
    y = np.random.default_rng(1).standard_normal((3, p.clients, 5))
    a, b = gao_estimate_pair(ctx, idx, x, y, x, y, default_theta(p), 6)
    np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)  # equal up to rounding
    fresh = gao_estimate_pair(ctx, idx, x, y, x, y, default_theta(p), 6)[0]
    assert not np.allclose(a, fresh)


def test_oracle_pair_hvp_has_the_oracles_joint_law():
    """``Oracle.pair_hvp``: ``(M(ζ)v₁, M(ζ)v₂)`` with one Gaussian ``Z``: noise covariance
    ``σ²(v₁·v₂)/d · I`` and marginal ``E‖σZv‖² = σ²‖v‖²`` (the oracle's law), counted as two
    products per entry.  20 000 draws: 3σ ≈ 3% sampling error."""
    p = make(noise=0.7)
    ctx = make_context(p, replicates=20000, seed=0)
    idx = ctx.xp.zeros((20000, 1), dtype=int)
    v1 = np.broadcast_to(np.array([1.0, 2.0, 0.0, -1.0, 0.5]), (20000, 1, 5))
    v2 = np.broadcast_to(np.array([0.5, 1.0, 1.0, 0.0, -2.0]), (20000, 1, 5))
    x = y = np.zeros((20000, 1, 5))
    a, b = ctx.oracle.pair_hvp(idx, x, y, x, y, v1, v2)
    na, nb = a - p.exact_hvp_yy_g(idx, v1), b - p.exact_hvp_yy_g(idx, v2)
    s2 = 0.7 ** 2
    cross = (na * nb).sum(-1).mean()
    assert cross == pytest.approx(s2 * (v1[0, 0] @ v2[0, 0]), rel=0.05)
    assert (na ** 2).sum(-1).mean() == pytest.approx(s2 * (v1[0, 0] @ v1[0, 0]), rel=0.05)
    assert (nb ** 2).sum(-1).mean() == pytest.approx(s2 * (v2[0, 0] @ v2[0, 0]), rel=0.05)
    assert ctx.oracle.counter.hvp == 2.0
    j1, j2 = ctx.oracle.pair_jvp(idx, x, y, x, y, v1, v1)
    np.testing.assert_allclose(j1, j2, rtol=1e-12, atol=1e-12)  # same Z, same vector
    assert ctx.oracle.counter.jvp == 2.0


def test_no_correction_mutant_is_plain_momentum(prob):
    """``correction=False``: ``u_t = (1−a)u_{t−1} + a∇̂Φ(x_t)``; with exact oracles it differs
    from eq. (3.8) and still costs the same oracle calls.  (No claim uses it as a mutant: at
    Thm 2's weights the iteration is unstable, docs/papers/gao.md.)"""
    kw = dict(rounds=6, replicates=1, seed=0, neumann_steps=3, period=2)
    a = run("localbsgvrm", prob, **kw)
    b = run("localbsgvrm", prob, correction=False, **kw)
    assert not np.allclose(a.x[0, -1], b.x[0, -1])
    assert a.ledger.totals()["hvp_calls"] == b.ledger.totals()["hvp_calls"]
    with pytest.raises(TypeError, match="correction"):
        run("localbsgvrm", prob, rounds=1, correction="yes")


def test_independent_samples_mutant_breaks_the_cancellation():
    """``same_sample=False`` (a claims mutant): at identical points eq. (3.8)'s correction
    ``u_{t−1} − ∇̂Φ(x_{t−1}; ξ̂_t)`` no longer cancels the fresh noise; same oracle calls."""
    p = make(noise=0.5)
    kw = dict(rounds=4, replicates=2, seed=0, neumann_steps=3, period=2)
    a = run("localbsgvrm", p, **kw)
    b = run("localbsgvrm", p, same_sample=False, **kw)
    assert not np.allclose(a.x, b.x)
    for key in ("grad_calls", "hvp_calls", "jvp_calls"):
        assert a.ledger.totals()[key] == b.ledger.totals()[key]


# ------------------------------------------------------------------------------ schedules


def test_theorem2_eta_and_momentum_defaults(prob):
    g = gao_constants(prob)
    K, p = prob.clients, 5
    eta = theorem2_eta(K, p, g["L_hat"], 1.0, g["L_Phi"])
    for t in (1, 10, 10 ** 6):
        w = max(2, K ** 2 * p ** 3 - t, 8 * g["L_Phi"] ** 3 * K ** 2 / g["L_hat"] ** 3 - t)
        assert eta(t) == pytest.approx(K ** (2 / 3) / g["L_hat"] / (w + t) ** (1 / 3), rel=1e-12)
    a = theorem2_momentum(K, p, g["L_hat"])
    assert a == pytest.approx(g["L_hat"] ** 2 / (3 * p * K ** 2) + g["L_hat"] ** 2 / K)
    assert a * eta(1) ** 2 < 1
    hp = run("localbsgvrm", prob, rounds=0).hyperparameters
    assert hp["alpha"] == hp["beta"] == pytest.approx(a)
    assert hp["eta"](7) == pytest.approx(eta(7))


def test_corollary_schedules_and_notes(prob):
    s = theorem1_schedule(prob, 1e-2)
    K, kap = prob.clients, gao_constants(prob)["kappa"]
    assert s["rounds"] == math.ceil(kap ** 5 / (K * 1e-4))
    assert s["eta"] == pytest.approx(K * 1e-2)
    assert s["period"] == 1 and any("p > 1" in n for n in s["notes"])  # K = 20 > ε^{-1/2} = 10
    assert not any("η <" in n for n in s["notes"])  # η = Kε = 0.2 < 1
    big = theorem1_schedule(make(clients=200), 1e-2)
    assert big["eta"] == pytest.approx(2.0) and any("η < 1" in n for n in big["notes"])
    small = theorem1_schedule(make(clients=4), 1e-4)
    assert small["period"] == 25 and small["communication"] == small["rounds"] // 25
    # Q = O(log 1/ε): 4Δ_Q²'s relative factor (1−θμ)^{2(Q+1)} ≤ ε
    rate = 1 - small["theta"] * make(clients=4).constants["mu_g"]
    assert rate ** (2 * (small["neumann_steps"] + 1)) <= 1e-4
    v = theorem2_schedule(make(clients=4), 1e-4)
    assert v["minibatch"] == v["period"] == 25
    assert v["rounds"] == math.ceil(gao_constants(make(clients=4))["kappa"] ** 3 / (4 * 1e-6))
    c = theorem2_schedule(make(clients=4), 1e-4, momentum="corollary")
    assert c["alpha"] == pytest.approx(gao_constants(make(clients=4))["L_hat"] ** 2 / 16)


def test_theorem1_limits_are_worst_case_tiny(prob):
    """Remark 1: ρ₁ = O(1/κ⁵) — far below the practical default (documented)."""
    lim = theorem1_limits(prob, alpha=1.0, beta=1.0, period=5, rho2=1 / (6 * 5.21))
    assert 0 < lim["rho1_max"] < 1e-3 < run("localbsgm", prob, rounds=0).hyperparameters["rho1"]
    assert 0 < lim["eta_max"] <= 1


def test_default_q_targets_relative_truncation(prob):
    hp = run("localbsgm", prob, rounds=0).hyperparameters
    Q, theta = hp["neumann_steps"], hp["theta"]
    assert Q == neumann_steps_for(prob, theta)
    r = 1 - theta * prob.constants["mu_g"]
    assert r ** (Q + 1) <= 1e-3 < r ** Q
    assert theta < 1 / gao_constants(prob)["L1"]


# ------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kw,exc,word", [
    (dict(theta=1.0), ValueError, "theta"),
    (dict(theta=-0.1), ValueError, "theta"),
    (dict(rho1=0.0), ValueError, "rho1"),
    (dict(period=0), ValueError, "period"),
    (dict(neumann_steps=1.5), TypeError, "neumann_steps"),
    (dict(alpah=1.0), ValueError, "alpha"),
    (dict(x0=np.ones(3)), ValueError, "x0"),
])
def test_bad_input(prob, name, kw, exc, word):
    with pytest.raises(exc, match=word):
        run(name, prob, rounds=2, **kw)


def test_momentum_weight_must_be_below_one(prob):
    with pytest.raises(ValueError, match="alpha"):
        run("localbsgm", prob, rounds=2, alpha=3.0, eta=0.5)
    with pytest.raises(ValueError, match="eta"):
        run("localbsgm", prob, rounds=2, eta=lambda t: 0.5 if t == 0 else 2.0, neumann_steps=2)
    with pytest.raises(ValueError, match="alpha"):
        run("localbsgvrm", prob, rounds=3, eta=2.0, neumann_steps=2)
    with pytest.raises(ValueError, match="minibatch"):
        run("localbsgvrm", prob, rounds=2, minibatch=0)
