"""APHE (Li, Zhu, Gong, Mao & Zhou, WiOpt 2024, Alg. 2): the factorised estimator
``afbo.aphe`` against the literal pairwise form ``afbo.aphe_pairwise``.

Noise-free the two are equal (1e-10 relative, round-off) with the same ledger; with Hessian
noise they are equal in law: over many replicates (the Monte-Carlo axis) the means and
covariances of a 6-dimensional statistic of the estimate agree within 4.5 standard errors and a
two-sample Kolmogorov–Smirnov test on two fixed projections does not reject at 10⁻³.  The same
comparison rejects a deliberately wrong factorisation (the members' noise not averaged).
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from scipy import stats

from benchmarks.afbo_scale import afbo_round_seconds, exponents
from bilevel_theory import afbo, make_context, run
from bilevel_theory.afbo import _AveragedRounds, aphe, aphe_pairwise
from bilevel_theory.problems import QuadraticBilevel
from bilevel_theory.problems.oracle import with_noise_distribution

M = 4


def _prob(hessian_noise=0.0, clients=M):
    return QuadraticBilevel.random(clients=clients, dim_x=3, dim_y=3, kappa=3,
                                   heterogeneity=1.0, noise=0.0, hessian_noise=hessian_noise,
                                   seed=2, upper_mu=1.0)


def _estimate(estimator, prob, R, seed, truncation, U, masks):
    """``H (R, m, dim_x)`` and the ledger of one APHE call at fixed points and tables."""
    m = prob.clients
    ctx = make_context(prob, replicates=R, seed=seed)
    rng = np.random.default_rng(0)  # the same inputs for every estimator and seed
    x, y = rng.standard_normal(3), rng.standard_normal(3)
    X, Y = np.broadcast_to(x, (R, 3)), np.broadcast_to(y, (R, 3))
    idx = np.broadcast_to(np.arange(m), (R, m))
    fy = prob.exact_grad_y_f(idx, X[:, None], Y[:, None])
    act = mem = None
    if masks:
        act = np.broadcast_to(rng.random(m) < 0.6, (R, m)).copy()
        mem = np.broadcast_to(rng.random(m) < 0.7, (R, m)).copy()
        act[:, 0] = mem[:, 0] = True
    H = estimator(ctx, X, Y, fy, scale=prob.constants["ell_g1"], truncation=truncation,
                  neumann_steps=U, active=act, members=mem)
    return H, ctx.snapshot(), ctx.oracle.counter.snapshot()


CASES = [("fixed", None, False), ("fixed", 5, True), ("series", 12, False),
         ("series", 6, True), ("random", 6, False), ("random", 7, True)]


@pytest.mark.parametrize("truncation, U, masks", CASES)
def test_noise_free_equals_pairwise(truncation, U, masks):
    prob = _prob(clients=8)
    a, ledger_a, calls_a = _estimate(aphe, prob, 3, 0, truncation, U, masks)
    b, ledger_b, calls_b = _estimate(aphe_pairwise, prob, 3, 0, truncation, U, masks)
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10 * np.abs(b).max())
    np.testing.assert_allclose(ledger_a, ledger_b, rtol=1e-12)
    assert calls_a == pytest.approx(calls_b, rel=1e-12)


def _statistic(H):
    """Chain 0's estimate and the chains' mean: ``(R, 6)``."""
    return np.concatenate([H[:, 0], H.mean(axis=1)], axis=1)


def _law_differences(a, b):
    """What distinguishes the samples ``a, b (n, k)`` (rows independent): means or covariance
    entries more than 4.5 standard errors apart, or a KS rejection (p < 10⁻³) on one of two
    fixed projections.  Empty if none."""
    n = a.shape[0]
    out = []
    se = np.sqrt((a.var(0, ddof=1) + b.var(0, ddof=1)) / n)
    z = np.abs(a.mean(0) - b.mean(0)) / se
    if z.max() > 4.5:
        out.append(f"means differ: z = {z.max():.1f}")

    def products(s):
        c = s - s.mean(0)
        return c[:, :, None] * c[:, None, :]  # (n, k, k): mean = covariance

    pa, pb = products(a), products(b)
    se = np.sqrt((pa.var(0, ddof=1) + pb.var(0, ddof=1)) / n)
    z = np.abs(pa.mean(0) - pb.mean(0)) / se
    if z.max() > 4.5:
        out.append(f"covariances differ: z = {z.max():.1f}")
    directions = np.random.default_rng(7).standard_normal((2, a.shape[1]))
    for w in directions:
        p = stats.ks_2samp(a @ w, b @ w).pvalue
        if p < 1e-3:
            out.append(f"KS rejects a projection: p = {p:.2g}")
    return out


LAW_CASES = [("fixed", 4, False, "gaussian"), ("random", 6, True, "gaussian"),
             ("series", 5, True, "rademacher"), ("fixed", 3, True, "uniform")]


@pytest.mark.parametrize("truncation, U, masks, law", LAW_CASES)
def test_noisy_same_law_as_pairwise(truncation, U, masks, law):
    prob = with_noise_distribution(_prob(hessian_noise=0.8), law)
    R = 4000
    a, ledger_a, _ = _estimate(aphe, prob, R, 1, truncation, U, masks)
    b, ledger_b, _ = _estimate(aphe_pairwise, prob, R, 2, truncation, U, masks)
    assert _statistic(a).std(0).min() > 1e-3  # the noise is there
    assert _law_differences(_statistic(a), _statistic(b)) == []
    if truncation != "random":  # the random truncation's ledger depends on the draws
        np.testing.assert_allclose(ledger_a, ledger_b, rtol=1e-12)


def test_law_comparison_rejects_unaveraged_noise(monkeypatch):
    """A wrong factorisation: each chain's noise drawn as one member's (not the mean of the
    ``n`` members'): its covariance is ``n`` times too large, and the comparison says so."""
    prob = _prob(hessian_noise=0.8)
    R = 4000
    b, _, _ = _estimate(aphe_pairwise, prob, R, 2, "fixed", 4, False)
    monkeypatch.setattr(_AveragedRounds, "_mean_draws",
                        lambda self, shape: self.ctx.oracle.rng.standard_normal(shape))
    wrong, _, _ = _estimate(aphe, prob, R, 1, "fixed", 4, False)
    found = _law_differences(_statistic(wrong), _statistic(b))
    assert any("covariances" in f for f in found), found


@pytest.mark.parametrize("name, truncation", [("afbo", "fixed"), ("afbo", "random"),
                                              ("afbo_naive", "series")])
def test_runs_match_the_pairwise_runs_without_hessian_noise(name, truncation):
    """Gradient noise only (as in the claims): the factorised estimator draws nothing more, so
    whole runs follow the pairwise runs' trajectories and ledgers (round-off apart)."""
    prob = QuadraticBilevel.random(clients=6, dim_x=3, dim_y=3, kappa=3, noise=0.3,
                                   hessian_noise=0.0, seed=4, upper_mu=1.0)
    kw = dict(rounds=8, replicates=3, seed=5, delay="bounded:3", truncation=truncation,
              neumann_steps=None if truncation == "fixed" else 6)
    a = run(name, prob, **kw)
    with mock.patch.object(afbo, "aphe", aphe_pairwise):
        b = run(name, prob, **kw)
    np.testing.assert_allclose(a.x, b.x, rtol=1e-10, atol=1e-12)
    for f in ("rounds", "hvp_calls", "jvp_calls", "uplink", "downlink"):
        np.testing.assert_allclose(getattr(a.ledger, f), getattr(b.ledger, f), rtol=1e-12)


def test_scale_benchmark_runs_and_fits_the_exponent():
    rows = [afbo_round_seconds(m, 1, "random", pairwise=p) for m, p in ((8, False), (8, True))]
    assert all(r["seconds_per_round"] > 0 for r in rows)
    fake = [dict(clients=m, seconds_per_round=2e-6 * m ** 1.5) for m in (10, 100, 1000)]
    e = exponents(fake)
    assert e["all"] == pytest.approx(1.5) and e["largest_two"] == pytest.approx(1.5)
