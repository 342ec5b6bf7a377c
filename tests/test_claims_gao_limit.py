"""gao.localbsgm_heterogeneous_limit: Thm 1 inside its step conditions, as T → ∞ in closed
form (the period map built from the instance's exact derivatives)."""

from __future__ import annotations

import numpy as np
import pytest

from bilevel_theory import run
from bilevel_theory.gao import biased_stationary_point
from bilevel_theory.verify.claims import gao_limit as L
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


def test_delta2_bound_covers_both_spreads_on_the_domain():
    """≥ sampled: at random points of ‖x‖, ‖y‖ ≤ r (and on the boundary) both of A4's spreads
    stay below the bound used in B_∞."""
    P = L.heterogeneous()
    d2 = L.delta2_bound(P)
    hp = L.hyperparameters(P, 1.0)
    step = L._local_step(P, {**hp, "alpha": 1.0, "beta": 1.0, "eta": 1.0})
    rng = np.random.default_rng(1)
    v = rng.standard_normal((4000, 4))
    v[:, :2] *= P.radius * rng.uniform(0, 1, (4000, 1)) ** 0.5 / np.linalg.norm(v[:, :2], axis=1,
                                                                              keepdims=True)
    v[:, 2:] *= P.radius / np.linalg.norm(v[:, 2:], axis=1, keepdims=True)
    z = np.concatenate([np.broadcast_to(v[:, None, :], (4000, P.clients, 4)),
                        np.zeros((4000, P.clients, 4))], axis=-1)
    est = step(z)[..., 4:]
    spread = est - est.mean(axis=1, keepdims=True)
    worst = max((spread[..., :2] ** 2).sum(-1).mean(1).max(),
                (spread[..., 2:] ** 2).sum(-1).mean(1).max())
    assert worst <= d2 and worst > 0.1 * d2


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
