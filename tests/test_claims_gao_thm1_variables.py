"""Gao 2022, Thm 1 in T, σ, K and p (``verify/claims/gao/thm1_variables.py``): the closed forms
against the library's LocalBSGM (exact and noisy runs), and the four findings' verdicts, repairs
and conditions."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from bilevel_theory import run
from bilevel_theory.gao import gao_estimate
from bilevel_theory.problems import Oracle, get_backend
from bilevel_theory.verify.claims.gao import limit as L
from bilevel_theory.verify.claims.gao import thm1_variables as V
from bilevel_theory.verify.verdict import assess

CLAIMS = {c.id: c for c in V.CLAIMS}
#: moderate steps (spectral radius 0.77 per period) so that the library's runs mix in a test
HP = dict(alpha=0.7, beta=0.9, period=2, eta=0.5, rho1=0.3, rho2=0.4, theta=0.2,
          neumann_steps=5)


def _lhs(problem, x, y):
    W, w = V.lhs_form(problem)
    return ((np.concatenate([x, y], -1) @ W.T + w) ** 2).sum(-1)


def test_lhs_form_is_thm1s_left_hand_side():
    P = V.instance()
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((5, 2)), rng.standard_normal((5, 2))
    h = P.host
    direct = (np.asarray(h.hypergradient(x)) ** 2).sum(-1) + L.gao_constants(P)[
        "L_tilde"] ** 2 * ((y - np.asarray(h.y_star(x))) ** 2).sum(-1)
    np.testing.assert_allclose(_lhs(P, x, y), direct, rtol=1e-12)


@pytest.mark.parametrize("J", [1, 2, 7, 64, 1000])
def test_power_sums_are_the_sums(J):
    rng = np.random.default_rng(J)
    M = 0.3 * rng.standard_normal((5, 5))
    Q = rng.standard_normal((5, 5))
    Q = Q @ Q.T
    S, Qs = V.power_sums(M, Q, J)
    Mi, S0, Q0 = np.eye(5), np.zeros((5, 5)), np.zeros((5, 5))
    for _ in range(J):
        S0, Q0, Mi = S0 + Mi, Q0 + Mi.T @ Q @ Mi, M @ Mi
    np.testing.assert_allclose(S, S0, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(Qs, Q0, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("T", [2, 4, 40, 400])
def test_average_at_is_the_librarys_exact_run(T):
    """A_T in closed form equals the average over the library's LocalBSGM trace from x*,
    y*(x*), the first step (u = the estimate) included."""
    P = V.instance()
    x0 = np.asarray(P.x_star)
    tr = run("localbsgm", P, rounds=T, replicates=1, seed=0, x0=x0, y0=np.asarray(P.y_star(x0)),
             **HP)
    direct = _lhs(P, tr.x[0, :T], tr.y[0, :T]).mean()
    assert V.average_at(P, HP, T) == pytest.approx(direct, rel=1e-10)
    with pytest.raises(ValueError, match="multiple of p"):
        V.average_at(P, HP, T + 1)


def test_noisy_limit_matches_the_librarys_noisy_runs():
    """lim E A_T under the oracle noise (Lyapunov equation of the period map) against 4000
    library runs, averaged over their last 100 iterations: within 4 standard errors, and the
    noise part is about half the value here, so a wrong injection would show."""
    P = V.instance(noise=1.0)
    x0 = np.asarray(P.x_star)
    R, T = 4000, 200
    tr = run("localbsgm", P, rounds=T, replicates=R, seed=1, x0=x0,
             y0=np.asarray(P.y_star(x0)), **HP)
    per_run = _lhs(P, tr.x[:, T - 100:T], tr.y[:, T - 100:T]).mean(1)
    value, part = V.noisy_limit(P, HP)
    assert 0.3 < part / value < 0.7
    assert abs(per_run.mean() - value) < 4 * per_run.std() / np.sqrt(R)


def test_tiling_moves_only_the_noise():
    """K devices tiled from the eight: the exact limit is the same, the noise part falls as
    1/K, the stated σ does not move, and Thm 1's noise terms fall as 1/K."""
    small, big = (V.limit_vs_noise(4.0, 2, 0, devices=K) for K in (8, 64))
    assert big["floor"][0] == pytest.approx(small["floor"][0], rel=1e-9)
    assert (big["value"][0] - big["noise_part"][0]) == pytest.approx(
        small["value"][0] - small["noise_part"][0], rel=1e-4)
    assert big["noise_part"][0] == pytest.approx(small["noise_part"][0] / 8, rel=1e-6)
    assert big["sigma"][0] == pytest.approx(small["sigma"][0], rel=1e-12)
    assert big["bound"][0] < small["bound"][0] / 4


def test_stated_sigma_bounds_every_sample_of_the_librarys_estimator():
    """Rademacher noise: every ∇g sample is off by exactly s (Assumption 3 almost surely), and
    σ is the largest norm of the upper-level estimator's noise, attained by some sample: the
    library's own estimates at one point, 4000 draws per device."""
    P = V.instance(noise=2.0)
    hp = L.hyperparameters(P, L.ETA_FIXED)
    sigma = V.stated_sigma(P, hp)
    assert sigma > 2.0
    assert V.stated_sigma(V.instance(noise=4.0), hp) == pytest.approx(2 * sigma, rel=1e-12)
    ctx = SimpleNamespace(oracle=Oracle(P, get_backend("numpy"), seed=0))
    idx = np.broadcast_to(np.arange(P.clients), (4000, P.clients))
    x = np.broadcast_to(np.asarray(P.x_star), (4000, P.clients, 2))
    y = np.broadcast_to(np.asarray(P.y_star(P.x_star)), (4000, P.clients, 2))
    noise = (gao_estimate(ctx, idx, x, y, hp["theta"], hp["neumann_steps"])
             - L._estimates(P.host, idx, x, y, hp))
    norms = np.linalg.norm(noise, axis=-1)
    assert norms.max() <= sigma * (1 + 1e-9) and norms.max() > sigma * (1 - 1e-9)
    gy = ctx.oracle.grad_y_g(idx, x, y) - P.host.exact_grad_y_g(idx, x, y)
    np.testing.assert_allclose(np.linalg.norm(gy, axis=-1), 2.0, rtol=1e-12)
    with pytest.raises(ValueError, match="Rademacher"):
        V.stated_sigma(L.heterogeneous(), hp)


def _verdict(cid: str, budget: str, mutant=None):
    claim = CLAIMS[cid]
    x = np.asarray(claim.grid[budget], float)
    return assess(claim, x, [claim.measure(v, 2, 0, mutant=mutant) for v in x])


@pytest.mark.parametrize("cid", sorted(CLAIMS))
@pytest.mark.parametrize("budget", ["smoke", "standard"])
def test_findings_are_violated_and_the_repair_holds(cid, budget):
    """Each sweep fails at some points and holds at others (the bound is tested where it turns),
    and with the devices' mean Hessians it holds at every point."""
    a = _verdict(cid, budget)
    assert a.verdict == "violated", a.reason
    claim = CLAIMS[cid]
    ms = [claim.measure(v, 2, 0) for v in claim.grid[budget]]
    held = [m["value"][0] <= m["bound"][0] for m in ms]
    assert any(held) and not all(held), held
    m = _verdict(cid, budget, "shared_hessians")
    assert m.verdict == "holds", m.reason


@pytest.mark.parametrize("cid", sorted(CLAIMS))
def test_every_condition_holds_on_the_grid(cid):
    claim = CLAIMS[cid]
    for x in claim.grid["full"]:
        for c in claim.conditions:
            lhs, rhs, ok = c.evaluate(x)
            assert ok, (c.statement, x, lhs, rhs)
