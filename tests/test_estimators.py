"""FedMBO's PHE (Huang, Zhang & Ji, ICML 2023, Alg. 2) against the plain masked form.

:func:`bilevel_theory.estimators.phe` runs the Neumann hops on each replicate's chains sorted
longest first and computes only the chains still alive; :func:`masked_phe` below is the plain
form (every chain at every hop, the finished ones masked), drawing the clients in the same
order.  Without noise the two give the same ``H`` chain by chain and the same ledger; with
Hessian noise each draws its own noise, so the test compares their laws (two-sample
``Z = 6`` tests, seeded).
"""

from __future__ import annotations

import numpy as np
import pytest

import bilevel_theory as bt
from bilevel_theory.estimators import phe
from bilevel_theory.problems import QuadraticBilevel

Z = 6.0


def masked_phe(ctx, x, y, N, n, scale, replace=True):
    """PHE with every chain computed at every hop (inactive chains kept by a mask)."""
    R, xp = ctx.replicates, ctx.xp
    xb, yb = x[:, None, :], y[:, None, :]
    trunc = ctx.rng.integers(0, N, size=(R, n))
    C0 = ctx.oracle.sample_clients(R, n, replace)
    d = ctx.oracle.grad_x_f(C0, xb, yb)
    p = (N / scale) * ctx.oracle.grad_y_f(C0, xb, yb)
    ctx.broadcast(x, y)
    ctx.upload(p)
    longest = xp.max(trunc, axis=1)
    for level in range(1, N):
        active = trunc >= level
        hop = longest >= level
        Cl = ctx.oracle.sample_clients(R, n, replace)
        ctx.broadcast(p[:, 0, :], active=hop)
        hv = ctx.oracle.hvp_yy_g(Cl, xb, yb, p, count=active)
        p = xp.where(active[..., None], p - hv / scale, p)
        ctx.upload(p, active=hop)
    Cend = ctx.oracle.sample_clients(R, n, replace)
    ctx.broadcast(p[:, 0, :])
    H = d - ctx.oracle.jvp_xy_g(Cend, xb, yb, p)
    ctx.upload(H)
    ctx.hold(x.shape[-1], 2 * y.shape[-1])
    return H


def _instance(storage, clients=12, noise=0.0, hessian_noise=0.0):
    return QuadraticBilevel.random(clients=clients, dim_x=3, dim_y=4, kappa=6.0,
                                   heterogeneity=0.7, noise=noise, hessian_noise=hessian_noise,
                                   seed=2, storage=storage)


def _points(R, seed=1):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((R, 3)), rng.standard_normal((R, 4))


@pytest.mark.parametrize("storage", ["dense", "structured"])
@pytest.mark.parametrize("replace", [True, False])
@pytest.mark.parametrize(("R", "n", "N"), [(1, 12, 7), (5, 9, 6), (3, 1, 4), (4, 12, 1)])
def test_sorted_hops_equal_the_masked_chains(storage, replace, R, n, N):
    """Noise-free: the same ``H_i`` for every chain (with and without replacement, including
    ``n = m`` without replacement, where every hop gives chain ``i`` client ``i``) and the
    same ledger."""
    prob = _instance(storage)
    x, y = _points(R)
    scale = prob.constants["ell_g1"]
    got, ref = bt.make_context(prob, R, 4), bt.make_context(prob, R, 4)
    H = phe(got, x, y, N, n, scale, replace)
    H_ref = masked_phe(ref, x, y, N, n, scale, replace)
    np.testing.assert_allclose(H, H_ref, rtol=1e-12, atol=1e-12)
    assert got.snapshot() == pytest.approx(ref.snapshot(), rel=1e-12)


def _two_sample(a, b, what):
    se = np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    assert abs(a.mean() - b.mean()) <= Z * se, (
        f"{what}: {a.mean():.5g} vs {b.mean():.5g} (± {Z * se:.2g})")


def test_sorted_hops_keep_the_law_with_hessian_noise():
    """With Hessian and gradient noise, each coordinate of ``H_i`` has the same mean and the
    same second moment as the masked form's (chains pooled over replicates)."""
    prob = _instance("structured", noise=0.3, hessian_noise=0.4)
    R, n, N = 3000, 4, 6
    x, y = _points(1)
    x, y = np.repeat(x, R, 0), np.repeat(y, R, 0)
    scale = prob.constants["ell_g1"]
    H = phe(bt.make_context(prob, R, 8), x, y, N, n, scale).reshape(-1, 3)
    H_ref = masked_phe(bt.make_context(prob, R, 9), x, y, N, n, scale).reshape(-1, 3)
    for j in range(3):
        _two_sample(H[:, j], H_ref[:, j], f"E[H_{j}]")
        _two_sample(H[:, j] ** 2, H_ref[:, j] ** 2, f"E[H_{j}²]")
