"""gao.localbsgm_heterogeneous_limit: Thm 1 inside its step conditions, as T → ∞ in closed
form (the period map built from the instance's exact derivatives)."""

from __future__ import annotations

import numpy as np
import pytest

from bilevel_theory import run
from bilevel_theory.gao import biased_stationary_point
from bilevel_theory.verify.claims.gao import limit as L
from bilevel_theory.verify.verdict import assess

CLAIM = L.CLAIMS[0]


def test_period_map_is_the_librarys_localbsgm_step_by_step():
    """The independent affine step equals the library's LocalBSGM (exact oracles), including
    the t = 0 step (u = the estimate: (1 − a)·est + a·est) and the averaging every p steps."""
    P = L.heterogeneous()
    hp = dict(alpha=0.7, beta=0.9, period=2, eta=0.5, rho1=0.3, rho2=0.4, theta=0.2,
              neumann_steps=5)
    rng = np.random.default_rng(0)
    x0, y0 = rng.standard_normal(P.dim_x), rng.standard_normal(P.dim_y)
    tr = run("localbsgm", P, rounds=6, replicates=1, seed=0, x0=x0, y0=y0,
             **{k: hp[k] for k in ("alpha", "beta", "period", "eta", "rho1", "rho2", "theta",
                                   "neumann_steps")})
    step = L._local_step(P, hp)
    K, n = P.clients, 2 * (P.dim_x + P.dim_y)
    first = step(np.concatenate([np.broadcast_to(np.r_[x0, y0], (1, K, 4)),
                                 np.zeros((1, K, 4))], axis=-1))  # from u = v = 0: a·est, b·∇_y g
    z = np.concatenate([np.broadcast_to(np.r_[x0, y0], (1, K, 4)),
                        (first[..., 4:] - 0) / np.r_[[hp["alpha"] * hp["eta"]] * 2,
                                                      [hp["beta"] * hp["eta"]] * 2]], axis=-1)
    assert z.shape == (1, K, n)
    for k in range(6):
        z = step(z)
        if (k + 1) % hp["period"] == 0:
            z = np.broadcast_to(z.mean(axis=1, keepdims=True), z.shape)
        np.testing.assert_allclose(z.mean(axis=1)[0, :2], tr.x[0, k + 1], rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(z.mean(axis=1)[0, 2:4], tr.y[0, k + 1], rtol=1e-12,
                                   atol=1e-13)


def test_the_limit_is_the_floor_and_the_bound_falls_as_eta_squared():
    P = L.heterogeneous()
    hp = L.hyperparameters(P, 1e-4)
    value, radius = L.limit_average(P, hp)
    _, floor = biased_stationary_point(P, hp["theta"], hp["neumann_steps"])
    assert radius < 1.0
    assert value == pytest.approx(floor, rel=1e-6)
    ratio = L.limit_bound(P, hp) / L.limit_bound(P, L.hyperparameters(P, 1e-5))
    assert ratio == pytest.approx(100.0, rel=1e-3)


def test_delta2_and_g_bounds_cover_the_domain():
    """≥ sampled: at random points of ‖x‖, ‖y‖ ≤ r (y on the boundary) both of A4's spreads
    (the surrogate ∇̂Φ^{(k)} and the whole ∇g^{(k)}) stay below δ², and ‖∇f^{(k)}‖,
    ‖∇̂Φ^{(k)}‖ below G; computed from the host's exact derivatives."""
    P = L.heterogeneous()
    h, K = P.host, P.clients
    hp = L.hyperparameters(P, 1.0)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4000, 2))
    x *= P.radius * rng.uniform(0, 1, (4000, 1)) ** 0.5 / np.linalg.norm(x, axis=1, keepdims=True)
    y = rng.standard_normal((4000, 2))
    y *= P.radius / np.linalg.norm(y, axis=1, keepdims=True)
    xk, yk = (np.broadcast_to(a[:, None, :], (4000, K, 2)) for a in (x, y))
    idx = np.broadcast_to(np.arange(K), (4000, K))
    r = w = h.exact_grad_y_f(idx, xk, yk)
    for _ in range(hp["neumann_steps"]):
        r = r - hp["theta"] * h.exact_hvp_yy_g(idx, r)
        w = w + r
    est = h.exact_grad_x_f(idx, xk, yk) - h.exact_jvp_xy_g(idx, hp["theta"] * w)
    grad_g = np.concatenate([h.exact_grad_x_g(idx, xk, yk), h.exact_grad_y_g(idx, xk, yk)], -1)
    grad_f = np.concatenate([h.exact_grad_x_f(idx, xk, yk), h.exact_grad_y_f(idx, xk, yk)], -1)

    def spread(a):
        return ((a - a.mean(axis=1, keepdims=True)) ** 2).sum(-1).mean(1).max()
    d2, G = L.delta2_bound(P), L.gradient_bound(P)
    worst = max(spread(est), spread(grad_g))
    assert worst <= d2 and worst > 0.1 * d2
    norms = max(np.linalg.norm(est, axis=-1).max(), np.linalg.norm(grad_f, axis=-1).max())
    assert norms <= G and norms > 0.5 * G and G >= P.constants["ell_f0"]


def _verdict(budget: str, mutant=None):
    x = np.asarray(CLAIM.grid[budget], float)
    metrics = [L.localbsgm_limit(e, 2, 0, mutant=mutant) for e in x]
    return assess(CLAIM, x, metrics)


@pytest.mark.parametrize("budget", ["smoke", "standard", "full"])
def test_finding_is_violated_and_the_repair_holds(budget):
    a = _verdict(budget)
    assert a.verdict == "violated", a.reason
    m = _verdict(budget, "shared_hessians")
    assert m.verdict == "holds", m.reason


def test_the_bound_holds_at_the_largest_step_of_the_grid():
    """The grid starts where Thm 1's limit still holds: the finding is where it is tightest."""
    P = L.heterogeneous()
    hp = L.hyperparameters(P, max(CLAIM.grid["smoke"]))
    assert L.limit_average(P, hp)[0] < L.limit_bound(P, hp)


def test_every_condition_holds_on_the_grid():
    for budget in ("smoke", "full"):
        for x in CLAIM.grid[budget]:
            for c in CLAIM.conditions:
                lhs, rhs, ok = c.evaluate(x)
                assert ok, (c.statement, x, lhs, rhs)


# ================================================================ Thm 2 (LocalBSGVRM), T → ∞
VR = {c.id: c for c in L.CLAIMS if "localbsgvrm" in c.id}
SWEEPS = {c.id: c for c in L.CLAIMS[1:]}  # Q and h, both theorems


def test_thm2_right_hand_side_tends_to_four_delta_q_squared():
    """sympy's limit of the registered Thm 2 bound: only 4Δ_Q² is left, no σ, δ, K, p or ρ."""
    from bilevel_theory import rates

    b = rates.BOUNDS["gao.thm2_limit"]
    assert {s.name for s in b.expr.free_symbols} == {"Delta_Q"}
    assert b.at(Delta_Q=0.5) == pytest.approx(1.0)
    finite = rates.BOUNDS["gao.thm2"].at(T=1e12, K=8, p=2, Delta=1.0, rho_1=1e-3, rho_2=1e-3,
                                        G=1.0, sigma=1.0, delta=1.0, mu=1.0, L_tilde=1.0,
                                        Delta_Q=0.5)
    assert finite == pytest.approx(1.0, rel=1e-3)  # 4Δ_Q² = 1, approached from above
    assert finite > 1.0


def test_localbsgvrm_converges_to_the_zero_of_the_device_averaged_estimator():
    """The library's exact LocalBSGVRM (Thm 2's α, β, η_t, p = S = 2, larger ρ so that it moves
    within a test) goes to x̃, not to x*: the limit the claims take."""
    P = L.heterogeneous()
    theta, Q = L.THETA_L1 / L.gao_constants(P)["L1"], 16
    x_tilde, _ = biased_stationary_point(P, theta, Q)
    x0 = np.asarray(P.x_star)
    dist = []
    for T in (500, 2000):
        tr = run("localbsgvrm", P, rounds=T, replicates=1, seed=0, period=2, rho1=0.2,
                 rho2=1.0, neumann_steps=Q, theta=theta, x0=x0, y0=P.y_star(x0))
        dist.append(np.linalg.norm(tr.x[0, -1] - x_tilde))
        np.testing.assert_allclose(tr.y[0, -1], P.y_star(tr.x[0, -1]), atol=0.05)
    start = np.linalg.norm(x0 - x_tilde)
    assert start > 0.1 and dist[1] < dist[0] < 0.02 * start


@pytest.mark.parametrize("cid", sorted(SWEEPS))
@pytest.mark.parametrize("budget", ["smoke", "standard", "full"])
def test_q_and_h_sweeps_are_violated_and_the_repair_holds(cid, budget):
    claim = SWEEPS[cid]
    x = np.asarray(claim.grid[budget], float)
    for mutant, expected in ((None, "violated"), ("shared_hessians", "holds")):
        metrics = [claim.measure(v, 2, 0, mutant=mutant) for v in x]
        a = assess(claim, x, metrics)
        assert a.verdict == expected, (mutant, a.reason)


@pytest.mark.parametrize("cid", sorted(set(SWEEPS) - {"gao.localbsgvrm_limit_vs_heterogeneity"}))
def test_sweeps_start_where_the_bound_holds(cid):
    """At the smallest Q (h) the limit bound is above the limit: the sweep shows where the
    statement fails, not only that it fails; at the largest, it fails by a wide margin."""
    claim = SWEEPS[cid]
    for budget in ("smoke", "standard", "full"):
        m = claim.measure(min(claim.grid[budget]), 2, 0)
        assert m["value"][0] < m["bound"][0]
        m = claim.measure(max(claim.grid[budget]), 2, 0)
        assert m["value"][0] > 100 * m["bound"][0]


def test_thm2_repair_is_within_the_truncation_bias():
    """With shared Hessians ‖∇Φ(x̃)‖ ≤ Δ_Q (eq. 3.2's bias at x̃, where ∇̂Φ = 0)."""
    S = L.shared_hessians()
    theta = L.THETA_L1 / L.gao_constants(S)["L1"]
    for Q in (2, 8, 32):
        _, floor = biased_stationary_point(S, theta, Q)
        assert floor <= L.truncation_bias_bound(S, theta, Q) ** 2


def test_sweep_conditions_hold_on_every_grid():
    for claim in SWEEPS.values():
        for budget in ("smoke", "full"):
            for x in claim.grid[budget]:
                for c in claim.conditions:
                    lhs, rhs, ok = c.evaluate(x)
                    assert ok, (claim.id, c.statement, x, lhs, rhs)


def test_thm2_limit_ode_rate_is_of_order_rho1_mu():
    """The slow (x) eigenvalue of the limit ODE is ρ₁ times the device-averaged estimator's
    Jacobian on y = y*(x): positive, and of the size of ρ₁μ."""
    P = L.heterogeneous()
    theta = L.THETA_L1 / L.gao_constants(P)["L1"]
    rate = L.limit_ode_rate(P, theta, 80)
    rho1, _ = L.vr_rhos(P)
    assert 0.05 * rho1 < rate < 20 * rho1


def test_thm1_h_sweep_left_limit_grows_faster_than_the_right():
    """On the h-sweep the left-hand limit grows about as h⁴ (‖∇Φ(x̃)‖ ∝ h²: Hessian spread
    times gradient spread) while Thm 1's right-hand limit moves only through δ²·p²η²."""
    claim = SWEEPS["gao.localbsgm_limit_vs_heterogeneity"]
    lo, hi = (claim.measure(h, 2, 0) for h in (0.1, 1.0))
    assert 5e3 < hi["value"][0] / lo["value"][0] < 2e4
    assert hi["bound"][0] / lo["bound"][0] < 3


def test_thm2_h_sweep_fails_at_every_heterogeneity():
    """Thm 2's limit 4Δ_Q² carries no δ (h moves it only through the instance's L₀, L₁): at
    Q = 80 it stays below 10⁻¹⁴ on the whole grid, and the left-hand limit exceeds it at the
    smallest h of every grid (3·10⁻⁷ at h = 0.05)."""
    claim = VR["gao.localbsgvrm_limit_vs_heterogeneity"]
    ms = [claim.measure(h, 2, 0) for h in claim.grid["full"]]
    assert max(m["bound"][0] for m in ms) < 1e-14
    assert all(m["value"][0] > 1e6 * m["bound"][0] for m in ms)


def test_thm1_limit_is_sympys_limit_of_the_registered_bound():
    """gao.thm1_limit keeps Thm 1's T-free terms as written (a readable law); it is sympy's limit
    T → ∞ of gao.thm1, and at σ = 0 it depends on σ nowhere else."""
    import sympy as sp

    from bilevel_theory import rates

    full, lim = rates.BOUNDS["gao.thm1"], rates.BOUNDS["gao.thm1_limit"]
    assert sp.simplify(sp.limit(full.expr, full.symbol("T"), sp.oo) - lim.expr) == 0
