"""The official FedNest code as a second subject (FEDNEST-R7): its FedIHGP
(``ClientManage.fedIHGP``, ``hvp_method='global_batch'``, with ``Client.hvp_iter``) in closed
form, a loop-by-loop transliteration against the vectorized ``fednest_released``, and the
contrast with the paper's estimator (variance floor ∝ α vs a bias independent of α)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from bilevel_theory import make_context, run
from bilevel_theory.estimators import ihgp, released_ihgp
from bilevel_theory.problems import QuadraticBilevel
from bilevel_theory.verify.claims import fednest as F
from bilevel_theory.verify.claims.fednest import estimator, truncation_floor


def _instance(h=0.3):
    return QuadraticBilevel.random(clients=6, dim_x=2, dim_y=3, kappa=4.0, heterogeneity=h,
                                   noise=0.0, seed=2, storage="dense")


def _transliteration(prob, x, y, N, lr):
    """The official code's loops, client by client (Client.hvp_iter: a private counter,
    ``p + counter`` returned; the server's ``p_locals`` list never cleared; FedAvgP the plain
    mean of the list), then ``hlr·p`` as ``Client_hr.hyper_grad`` scales it."""
    mats = [prob.client(i) for i in range(prob.clients)]
    gy = [m["S"] @ y + m["R"].T @ x + m["q"] for m in mats]  # ∇_y f_i
    p = np.mean(gy, axis=0)
    counters = [None] * len(mats)
    p_locals = []
    for _ in range(N):
        for j, m in enumerate(mats):
            if counters[j] is None:
                counters[j] = p.copy()
            counters[j] = counters[j] - lr * (m["A"] @ counters[j])
            p_locals.append(p + counters[j])
        p = np.mean(p_locals, axis=0)
    return lr * p


def _released(prob, x, y, N, scale):
    ctx = make_context(prob, 1, 0)
    idx = np.arange(prob.clients)[None]
    return released_ihgp(ctx, idx, x[None], y[None], N, scale)[0], ctx


@pytest.mark.parametrize("N", [1, 2, 5, 9])
def test_released_matches_transliteration_and_closed_form(N):
    prob = _instance()
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(prob.dim_x), rng.standard_normal(prob.dim_y)
    ell = prob.constants["ell_g1"]
    p, ctx = _released(prob, x, y, N, ell)
    np.testing.assert_allclose(p, _transliteration(prob, x, y, N, 1 / ell), rtol=1e-12,
                               atol=1e-14)
    ctx0 = make_context(prob, 1, 0)
    v = np.asarray(ctx0.oracle.grad_y_f(np.arange(prob.clients)[None], x[None, None],
                                        y[None, None])).mean(axis=1)[0]
    np.testing.assert_allclose(p, F.released_closed_form(prob, v, N, ell), rtol=1e-12,
                               atol=1e-14)
    assert ctx.rounds == 1 + N  # the code's comm_round = 1 + neumann


def test_released_one_over_k_weighting_scalar():
    """One client, scalar Hessian a, scale ℓ = 4a (ρ = 3/4): p_N = (1/ℓ)(1 + Σ_{k≤N} ρ^k/k) v,
    whose limit (1/ℓ)(1 − log(a/ℓ)) v = (1 + log 4)v/ℓ (sympy) recovers the fraction
    (1 + log 4)/4 ≈ 0.60 of a⁻¹v: the 1/k weighting, not the Neumann series."""
    k = sp.Symbol("k", integer=True, positive=True)
    rho = sp.Rational(3, 4)
    assert sp.simplify(sp.summation(rho ** k / k, (k, 1, sp.oo)) - sp.log(4)) == 0
    prob = QuadraticBilevel.random(clients=1, dim_x=1, dim_y=1, kappa=1.0, seed=0)
    A = float(prob.client(0)["A"][0, 0])
    idx = np.zeros((1, 1), dtype=int)
    for n in (1, 3, 60):
        ctx = make_context(prob, 1, 0)
        got = released_ihgp(ctx, idx, np.zeros((1, 1)), np.zeros((1, 1)), n, 4 * A)[0, 0]
        v = float(np.asarray(ctx.oracle.grad_y_f(idx, np.zeros((1, 1, 1)),
                                                 np.zeros((1, 1, 1))))[0, 0, 0])
        closed = (1 + sum(0.75 ** j / j for j in range(1, n + 1))) * v / (4 * A)
        assert got == pytest.approx(closed, rel=1e-12)
    assert got / (v / A) == pytest.approx((1 + math.log(4)) / 4, rel=1e-6)


def test_released_bias_is_a_constant_not_geometric():
    """Lemma 2.2's point: the released bias tends to a non-zero constant (the 1/k weights),
    the paper's series decays as ((κ_g−1)/κ_g)^{N+1}."""
    out = {N: F.released_bias(N, 1, 0) for N in (5, 20, 40)}
    assert out[40]["value"][0] == pytest.approx(out[20]["value"][0], rel=0.05)
    assert out[40]["value"][0] > 0.2 * estimator._ihgp_problem()[3]
    for N in (5, 20):
        assert out[N]["value"][0] == pytest.approx(out[N]["closed_form"][0], rel=1e-10)
    paper = F.released_bias(20, 1, 0, estimator="paper_series")["value"][0]
    c = estimator._ihgp_problem()[0].constants
    assert paper == pytest.approx(((c["kappa_g"] - 1) / c["kappa_g"]) ** 21 / c["mu_g"], rel=1e-8)


def test_released_floor_is_a_bias():
    """Identical clients (no own-vs-global Hessian difference), exact oracles: with the
    deterministic paper series FedNest converges, fednest_released stops at the bias of its
    1/k-weighted series (the runs differ only through the estimator)."""
    prob = QuadraticBilevel.random(clients=4, dim_x=2, dim_y=2, kappa=2.0, heterogeneity=0.0,
                                   noise=0.0, seed=0)
    hp = dict(inner_steps=2, neumann_steps=30, local_steps=2, sampled_clients=4)
    a = run("fednest_released", prob, rounds=40, replicates=1, seed=0, **hp)
    b = run("fednest", prob, rounds=40, replicates=1, seed=0, neumann_series="full", **hp)
    assert np.isfinite(a.x).all() and np.isfinite(b.x).all()
    assert a.stationarity[0, -1] > 10 * b.stationarity[0, -1]  # the released bias floor


def test_floor_grows_with_step_for_paper_not_released():
    """On Thm 3.1's ᾱ/√K branch at σ = 0 (started at x*): the paper's estimator's tail floor
    grows ∝ α (ratio of the largest to the smallest step ≈ 8), the released one's does not."""
    prob = truncation_floor._vf_problem()
    bars = truncation_floor._vs_alpha_bars(prob)
    paper = [F.variance_floor_vs_step(b, 16, 0)["value"].mean() for b in (bars[0], bars[-1])]
    rel = [F.variance_floor_vs_step(b, 2, 0, series="released")["value"].mean()
           for b in (bars[0], bars[-1])]
    assert 4 < paper[1] / paper[0] < 16
    assert 0.7 < rel[1] / rel[0] < 1.4


def test_ihgp_variance_is_theta_N():
    """FedIHGP with exact oracles and full participation: the Monte-Carlo variance along the
    bottom eigenvector equals IHGP_VARIANCE (sympy), which grows linearly in N."""
    prob, w, y_w, _, lam = estimator._ihgp_problem()
    c = prob.constants
    ell = c["ell_g1"]
    for N in (4, 16):
        n = 40000
        ctx = make_context(prob, n, 0)
        x = np.zeros((n, prob.dim_x))
        y = np.broadcast_to(y_w, (n, prob.dim_y)) * 1.0
        p, _ = ihgp(ctx, x, y, N, prob.clients, ell)
        got = float(np.var(p @ w))
        want = float(F.IHGP_VARIANCE.subs({F.N_sym: N, F.rho_sym: 1 - lam / ell,
                                           F.ell_sym: ell}))
        assert got == pytest.approx(want, rel=0.05)
    big = F.IHGP_VARIANCE.subs({F.rho_sym: sp.Rational(1, 2), F.ell_sym: 1})
    assert sp.limit(big / F.N_sym, F.N_sym, sp.oo) == sp.Rational(4, 3)


def test_official_epoch_transliterated_matches_fednest_released():
    """One FedNest epoch as the official code runs it (ClientManage.fed_in with SVRGClient:
    snapshot gradient q, τ corrected local steps, FedAvg; ClientManage.fed_out: fedIHGP,
    hyper_grad mean, τ hyper_svrg_update steps, mean), client by client with exact oracles,
    against the vectorized ``fednest_released``: equal to round-off.  The only difference
    from ``fednest`` is then the estimator (``released_ihgp``)."""
    prob = _instance(0.4)
    m, T, N, tau = prob.clients, 2, 4, 3
    c = prob.constants
    alpha, beta, ell = 0.5 / c["L_phi"], 1 / (2 * c["ell_g1"]), c["ell_g1"]
    x0, y0 = np.ones(prob.dim_x), np.zeros(prob.dim_y)

    def one(fn, i, x, y):
        return np.asarray(fn(np.array([[i]]), x[None, None], y[None, None]))[0, 0]

    x, y = x0.copy(), y0.copy()
    for _ in range(T):  # fed_in (svrg)
        q = np.mean([one(prob.exact_grad_y_g, i, x, y) for i in range(m)], axis=0)
        ys = []
        for i in range(m):
            yi = y.copy()
            for _ in range(tau):
                yi = yi - beta / tau * (one(prob.exact_grad_y_g, i, x, yi)
                                        - one(prob.exact_grad_y_g, i, x, y) + q)
            ys.append(yi)
        y = np.mean(ys, axis=0)
    p = _transliteration(prob, x, y, N, 1 / ell)  # fedIHGP + the hlr scale of hyper_grad
    hg = np.mean([one(prob.exact_grad_x_f, i, x, y)
                  - np.asarray(prob.exact_jvp_xy_g(np.array([[i]]), p[None, None]))[0, 0]
                  for i in range(m)], axis=0)
    xs = []
    for i in range(m):
        xi = x.copy()
        for _ in range(tau):
            xi = xi - alpha / tau * (one(prob.exact_grad_x_f, i, xi, y)
                                     - one(prob.exact_grad_x_f, i, x, y) + hg)
        xs.append(xi)
    x_new = np.mean(xs, axis=0)
    tr = run("fednest_released", prob, rounds=1, replicates=1, seed=0, inner_steps=T,
             neumann_steps=N, local_steps=tau, sampled_clients=m, outer_step=alpha,
             inner_step=beta, x0=x0, y0=y0)
    np.testing.assert_allclose(tr.y[0, 1], y, rtol=0, atol=1e-13)
    np.testing.assert_allclose(tr.x[0, 1], x_new, rtol=0, atol=1e-13)
