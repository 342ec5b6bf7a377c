"""Stochastic oracles: unbiasedness, configured variance, shapes, counting, seeding, and client
sampling.  Statistical tolerances are ``Z = 6`` standard errors of the sampling distribution
(two-sided false-alarm probability ≈ 2·10⁻⁹ per comparison), with fixed seeds; chi-square
tests use ``p > 1e-4`` (seeded, so the outcome is fixed)."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from bilevel_theory.problems import (
    Oracle,
    QuadraticBilevel,
    QuadraticCompositional,
    QuadraticMinimax,
)

Z = 6.0
SIGMA, HSIGMA = 0.7, 0.3
GRADS = ("grad_x_f", "grad_y_f", "grad_y_g", "grad_x_g")


def problem(kind="bilevel", **kw):
    base = dict(clients=5, dim_x=3, dim_y=4, noise=SIGMA, hessian_noise=HSIGMA, seed=0)
    base.update(kw)
    if kind == "minimax":
        return QuadraticMinimax.random(**base)
    if kind == "compositional":
        return QuadraticCompositional.random(**base)
    return QuadraticBilevel.random(**base)


def points(backend, R, dx, dy, seed=0):
    rng = np.random.default_rng(seed)
    return (backend.asarray(rng.standard_normal((R, 1, dx))),
            backend.asarray(rng.standard_normal((R, 1, dy))))


def assert_mean_zero(noise, what):
    """Each coordinate's sample mean within Z standard errors (empirical std / √N) of 0."""
    flat = noise.reshape(-1, noise.shape[-1])
    se = flat.std(axis=0, ddof=1) / np.sqrt(flat.shape[0])
    assert (np.abs(flat.mean(axis=0)) <= Z * se).all(), f"{what}: biased"


def assert_mean_is(samples, expected, what):
    """The sample mean of scalar draws within Z standard errors of ``expected``."""
    samples = samples.ravel()
    se = samples.std(ddof=1) / np.sqrt(samples.size)
    assert abs(samples.mean() - expected) <= Z * se, (
        f"{what}: mean {samples.mean():.5g}, expected {expected:.5g} ± {Z * se:.2g}")


# ---------------------------------------------------------------- first order
@pytest.mark.parametrize("kind", ["bilevel", "minimax", "compositional"])
@pytest.mark.parametrize("samples", [1, 4])
def test_gradients_unbiased_with_configured_variance(backend, kind, samples):
    """``E[ξ] = 0`` and ``E‖ξ‖² = noise²/samples`` for every gradient oracle, the noise isotropic
    (each coordinate's variance ``noise²/(samples·d)``)."""
    o = Oracle(problem(kind), backend, seed=1)
    R, n = 4000, 5
    idx = o.sample_clients(R, n)
    x, y = points(backend, R, o.problem.dim_x, o.problem.dim_y)
    for name in GRADS:
        out = getattr(o, name)(idx, x, y, samples=samples)
        exact = getattr(o.problem, "exact_" + name)(idx, x, y)
        assert out.shape == exact.shape == (R, n, exact.shape[-1])
        noise = backend.to_numpy(out - exact)
        d = noise.shape[-1]
        assert_mean_zero(noise, name)
        assert_mean_is((noise ** 2).sum(-1), SIGMA ** 2 / samples, name)
        for j in range(d):
            assert_mean_is(noise[..., j] ** 2, SIGMA ** 2 / (samples * d), f"{name}[{j}]")


def test_pair_shares_its_noise(backend):
    """``pair`` evaluates one sample at two points: equal noise, unbiased, variance noise²."""
    o = Oracle(problem(), backend, seed=2)
    R, n = 4000, 5
    idx = o.sample_clients(R, n)
    x1, y1 = points(backend, R, 3, 4, seed=1)
    x2, y2 = points(backend, R, 3, 4, seed=2)
    for name in GRADS:
        a, b = o.pair(name, idx, x1, y1, x2, y2)
        exact = getattr(o.problem, "exact_" + name)
        na = backend.to_numpy(a - exact(idx, x1, y1))
        nb = backend.to_numpy(b - exact(idx, x2, y2))
        assert np.allclose(na, nb, rtol=0, atol=1e-12)
        assert_mean_zero(na, name)
        assert_mean_is((na ** 2).sum(-1), SIGMA ** 2, name)
    with pytest.raises(ValueError, match="`kind`"):
        o.pair("hvp_yy_g", idx, x1, y1, x2, y2)


# ---------------------------------------------------------------- second order
def test_hessian_and_jacobian_products(backend):
    """``E[ξ] = 0`` and ``E‖ξ‖² = hessian_noise²·‖v‖²`` for ``hvp_yy_g`` (``A_i v``) and
    ``jvp_xy_g`` (``−B_iᵀ v``), with ``v`` of varying norms."""
    o = Oracle(problem(), backend, seed=3)
    R, n = 4000, 5
    idx = o.sample_clients(R, n)
    x, y = points(backend, R, 3, 4)
    rng = np.random.default_rng(4)
    v = rng.standard_normal((R, n, 4)) * rng.uniform(0.1, 3.0, (R, n, 1))
    vn = np.linalg.norm(v, axis=-1)
    v = backend.asarray(v)
    for name, exact in (("hvp_yy_g", o.problem.exact_hvp_yy_g(idx, v)),
                        ("jvp_xy_g", o.problem.exact_jvp_xy_g(idx, v))):
        out = getattr(o, name)(idx, x, y, v)
        assert out.shape == exact.shape
        noise = backend.to_numpy(out - exact) / vn[..., None]
        assert_mean_zero(noise, name)
        assert_mean_is((noise ** 2).sum(-1), HSIGMA ** 2, name)
    assert out.shape == (R, n, 3)


def test_noise_free_oracle_is_exact(backend):
    o = Oracle(problem(noise=0.0, hessian_noise=0.0), backend, seed=0)
    idx = o.sample_clients(3, 4)
    x, y = points(backend, 3, 3, 4)
    for name in GRADS:
        assert np.array_equal(backend.to_numpy(getattr(o, name)(idx, x, y)),
                              backend.to_numpy(getattr(o.problem, "exact_" + name)(idx, x, y)))


# ---------------------------------------------------------------- shapes, counting, seeding
def test_shapes_broadcast(backend):
    """Points of shape ``(d,)``, ``(R, 1, d)`` or ``(R, n, d)`` all give ``(R, n, d)``."""
    o = Oracle(problem(), backend, seed=0)
    R, n = 3, 4
    idx = o.sample_clients(R, n)
    for x, y in ((backend.asarray(np.ones(3)), backend.asarray(np.ones(4))),
                 points(backend, R, 3, 4),
                 (backend.asarray(np.ones((R, n, 3))), backend.asarray(np.ones((R, n, 4))))):
        for name, d in zip(GRADS, (3, 4, 4, 3)):
            assert getattr(o, name)(idx, x, y).shape == (R, n, d)
        v = backend.asarray(np.ones((R, n, 4)))
        assert o.hvp_yy_g(idx, x, y, v).shape == (R, n, 4)
        assert o.jvp_xy_g(idx, x, y, v).shape == (R, n, 3)


def test_counter(backend):
    """Counts are per replicate, summed over clients: ``samples·n`` per gradient call, ``2n`` per
    pair, ``n`` per product; ``count=`` counts only the masked entries."""
    o = Oracle(problem(), backend, seed=0)
    R, n = 3, 4
    idx = o.sample_clients(R, n)
    x, y = points(backend, R, 3, 4)
    v = backend.asarray(np.ones((R, n, 4)))
    o.grad_x_f(idx, x, y, samples=2)
    o.grad_y_g(idx, x, y)
    o.pair("grad_y_g", idx, x, y, x, y)
    assert o.counter.snapshot() == (2 * n + n + 2 * n, 0, 0)
    o.hvp_yy_g(idx, x, y, v)
    o.jvp_xy_g(idx, x, y, v)
    o.jvp_xy_g(idx, x, y, v)
    assert o.counter.snapshot() == (5 * n, n, 2 * n)
    mask = np.zeros((R, n), dtype=bool)
    mask[0, :3] = mask[2, 1] = True  # 4 evaluations over 3 replicates
    o.grad_y_f(idx, x, y, count=backend.asarray(mask, dtype=bool))
    o.hvp_yy_g(idx, x, y, v, count=backend.asarray(mask, dtype=bool))
    assert o.counter.grad == pytest.approx(5 * n + 4 / 3)
    assert o.counter.hvp == pytest.approx(n + 4 / 3)


def test_samples_must_be_positive(backend):
    o = Oracle(problem(), backend, seed=0)
    idx = o.sample_clients(2, 2)
    x, y = points(backend, 2, 3, 4)
    with pytest.raises(ValueError, match="`samples`"):
        o.grad_x_f(idx, x, y, samples=0)


def draw_sequence(backend, seed):
    o = Oracle(problem(), backend, seed=seed)
    idx = o.sample_clients(4, 3)
    x, y = points(backend, 4, 3, 4)
    v = backend.asarray(np.ones((4, 3, 4)))
    out = [idx, o.sample_clients(4, 3, replace=False), o.grad_x_f(idx, x, y),
           o.grad_y_g(idx, x, y, samples=3), *o.pair("grad_x_g", idx, x, y, x, y),
           o.hvp_yy_g(idx, x, y, v), o.jvp_xy_g(idx, x, y, v)]
    return [backend.to_numpy(a) for a in out]


def test_same_seed_same_draws(backend):
    a, b, c = draw_sequence(backend, 7), draw_sequence(backend, 7), draw_sequence(backend, 8)
    assert all(np.array_equal(u, w) for u, w in zip(a, b))
    assert not np.array_equal(a[2], c[2])


def test_replicates_and_clients_independent(backend):
    """Noise correlation across the replicate axis, across clients, and between consecutive
    calls ≈ 0: every off-diagonal sample correlation within Z/√N."""
    o = Oracle(problem(), backend, seed=5)
    T, R, n = 1500, 6, 2
    idx = backend.xp.zeros((R, n), dtype=backend.xp.int64)
    x, y = backend.asarray(np.zeros(3)), backend.asarray(np.zeros(4))
    exact = backend.to_numpy(o.problem.exact_grad_y_g(idx, x, y))
    noise = np.stack([backend.to_numpy(o.grad_y_g(idx, x, y)) - exact for _ in range(T)])
    by_rep = noise.transpose(1, 0, 2, 3).reshape(R, -1)  # (R, T·n·d)
    by_client = noise.transpose(2, 0, 1, 3).reshape(n, -1)
    for corr, N in ((np.corrcoef(by_rep), by_rep.shape[1]),
                    (np.corrcoef(by_client), by_client.shape[1]),
                    (np.corrcoef(noise[:-1].ravel(), noise[1:].ravel()), noise[1:].size)):
        off = corr[~np.eye(len(corr), dtype=bool)]
        assert np.abs(off).max() <= Z / np.sqrt(N), off


# ---------------------------------------------------------------- client sampling
def chi2_uniform(values, cells):
    counts = np.bincount(values.ravel(), minlength=cells)
    assert len(counts) == cells
    return stats.chisquare(counts).pvalue


def subset_codes(idx, m):
    """Each row's set of clients as one integer (rows sorted, base-m digits)."""
    s = np.sort(idx, axis=1)
    return (s * m ** np.arange(s.shape[1])).sum(axis=1)


def test_sampling_with_replacement_uniform(backend):
    o = Oracle(problem(clients=7), backend, seed=11)
    idx = backend.to_numpy(o.sample_clients(3000, 10, replace=True))
    assert idx.shape == (3000, 10) and idx.min() >= 0 and idx.max() < 7
    assert chi2_uniform(idx, 7) > 1e-4
    # independent positions: pairs (first, second) uniform over the 49 cells
    assert chi2_uniform(idx[:, 0] * 7 + idx[:, 1], 49) > 1e-4
    assert (np.sort(idx, 1)[:, 1:] == np.sort(idx, 1)[:, :-1]).any()  # repeats do occur


@pytest.mark.parametrize("n", [1, 4, 8])
def test_sampling_without_replacement_small(backend, n):
    """``R·m ≤ 2²⁴`` path: distinct clients per row, every ``n``-subset equally likely, and the
    order random (first position uniform)."""
    m, R = 9, 6000
    o = Oracle(problem(clients=m), backend, seed=12)
    idx = backend.to_numpy(o.sample_clients(R, n, replace=False))
    assert idx.shape == (R, n)
    assert (np.diff(np.sort(idx, 1), axis=1) > 0).all()
    _, counts = np.unique(subset_codes(idx, m), return_counts=True)
    assert len(counts) == comb(m, n) and stats.chisquare(counts).pvalue > 1e-4
    assert chi2_uniform(idx[:, 0], m) > 1e-4


@pytest.mark.parametrize("n", [3, 7])
def test_sampling_without_replacement_large_path(backend, n):
    """``R·m > 2²⁴`` path (rejection, or its complement when ``n > m/2``): distinct rows, uniform
    over all ``n``-subsets, random order."""
    m, R = 9, 2 ** 21
    assert R * m > 2 ** 24
    o = Oracle(problem(clients=m), backend, seed=13)
    idx = backend.to_numpy(o.sample_clients(R, n, replace=False))
    assert idx.shape == (R, n) and idx.min() >= 0 and idx.max() < m
    assert (np.diff(np.sort(idx, 1), axis=1) > 0).all()
    _, counts = np.unique(subset_codes(idx, m), return_counts=True)
    assert len(counts) == comb(m, n) and stats.chisquare(counts).pvalue > 1e-4
    assert chi2_uniform(idx[:, 0], m) > 1e-4


def test_sampling_without_replacement_many_clients(backend):
    """A million clients: ``n ≪ m`` (duplicates resampled) and ``n = m − 1`` (complement of one
    excluded client; plain rejection would need ~m passes) both give distinct rows."""
    prob = QuadraticCompositional.random(clients=2 ** 20 + 1, dim_x=1, dim_y=1, seed=0)
    o = Oracle(prob, backend, seed=14)
    m = prob.clients
    for R, n in ((17, 3000), (17, m - 1)):
        idx = np.sort(backend.to_numpy(o.sample_clients(R, n, replace=False)), axis=1)
        assert idx.shape == (R, n) and idx.min() >= 0 and idx.max() < m
        assert (np.diff(idx, axis=1) > 0).all()


def test_sampling_all_and_too_many(backend):
    o = Oracle(problem(clients=6), backend, seed=0)
    idx = backend.to_numpy(o.sample_clients(5, 6, replace=False))
    assert (np.sort(idx, 1) == np.arange(6)).all()
    with pytest.raises(ValueError, match="`sampled_clients`.*≤ clients \\(6\\)"):
        o.sample_clients(5, 7, replace=False)
    assert o.sample_clients(5, 7, replace=True).shape == (5, 7)


# ---------------------------------------------------------------- fused kernels & noise laws
def _reference_products(family, idx, v, transpose=False):
    """``M_i v`` (or ``M_iᵀ v``) from each client's dense matrix: the plain definition."""
    M = np.asarray(family.dense_range(0, family.clients))[np.asarray(idx)]
    if transpose:
        M = np.swapaxes(M, -1, -2)
    return np.einsum("...ij,...j->...i", M, np.broadcast_to(v, idx.shape + v.shape[-1:]))


def _families():
    from bilevel_theory.problems.families import (
        Dense,
        EigenScaled,
        RankOne,
        Scaled,
        Shared,
        Transposed,
    )
    rng = np.random.default_rng(11)
    m, d, dx = 37, 5, 3
    U = np.linalg.qr(rng.standard_normal((d, d)))[0]
    eig = EigenScaled(U, rng.uniform(0.5, 2.0, (m, d)))
    rank = RankOne(rng.standard_normal((d, dx)), rng.standard_normal((m, d)),
                   rng.standard_normal((m, dx)))
    return {"eigen": eig, "rank_one": rank, "dense": Dense(rng.standard_normal((m, d, dx))),
            "shared": Shared(rng.standard_normal((d, dx)), m), "scaled": Scaled(eig, -2.0),
            "transposed": Transposed(rank)}


@pytest.mark.parametrize("name", ["eigen", "rank_one", "dense", "shared", "scaled",
                                  "transposed"])
@pytest.mark.parametrize("block", [None, 64])
def test_fused_host_kernels_match_the_definition(monkeypatch, name, block):
    """The blocked host products equal ``M_i v`` computed from dense matrices, for per-client
    vectors, vectors shared by a replicate's clients and a single vector, with blocks that
    split the rows unevenly (``block=64``: 64-row blocks over 3·211 rows)."""
    from bilevel_theory.problems import families

    if block is not None:
        monkeypatch.setattr(families, "BLOCK_ELEMENTS", block)
    fam = _families()[name]
    d_out, d_in = np.asarray(fam.dense(0)).shape
    rng = np.random.default_rng(12)
    idx = rng.integers(0, fam.clients, (3, 211))
    for shape in ((3, 211), (3, 1), (1, 1)):
        v = rng.standard_normal(shape + (d_in,))
        np.testing.assert_allclose(fam.mv(idx, v), _reference_products(fam, idx, v),
                                   rtol=1e-12, atol=1e-12)
        u = rng.standard_normal(shape + (d_out,))
        np.testing.assert_allclose(fam.rmv(idx, u),
                                   _reference_products(fam, idx, u, transpose=True),
                                   rtol=1e-12, atol=1e-12)


def test_single_thread_blas_pins_and_restores():
    """Inside the context every BLAS library runs one thread; the count is restored on exit,
    also when nested."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from bilevel_theory.problems.backend import single_thread_blas

    if not single_thread_blas.libraries():
        pytest.skip("no BLAS library found by threadpoolctl")
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        before = [lib.get_num_threads() for lib in single_thread_blas.libraries()]
        with single_thread_blas:
            with single_thread_blas:
                assert all(lib.get_num_threads() == 1
                           for lib in single_thread_blas.libraries())
            assert all(lib.get_num_threads() == 1 for lib in single_thread_blas.libraries())
        assert [lib.get_num_threads() for lib in single_thread_blas.libraries()] == before


def test_default_gaussian_stream_is_unchanged():
    """The default oracle adds ``σ/√d · standard_normal`` of the run's generator, draw for draw
    (the stream of earlier versions), bitwise."""
    prob = problem()
    o = Oracle(prob, "numpy", seed=21)
    rng = np.random.default_rng(21)
    idx = o.sample_clients(6, 4)
    assert np.array_equal(idx, rng.integers(0, prob.clients, size=(6, 4)))
    x, y = points(o.backend, 6, 3, 4)
    exact = prob.exact_grad_y_g(idx, x, y)
    out = o.grad_y_g(idx, x, y)
    assert np.array_equal(out, exact + (SIGMA / np.sqrt(4)) * rng.standard_normal(exact.shape))
    v = np.random.default_rng(99).standard_normal((6, 4, 4))
    hv = o.hvp_yy_g(idx, x, y, v)
    norm = np.sqrt(np.vecdot(v, v)[..., None])
    assert np.array_equal(hv, prob.exact_hvp_yy_g(idx, v)
                          + (HSIGMA / np.sqrt(4)) * norm * rng.standard_normal(hv.shape))


@pytest.mark.parametrize("dist", ["gaussian", "rademacher", "uniform"])
def test_noise_distributions_share_mean_and_covariance(backend, dist):
    """Every ``noise_distribution`` gives unbiased oracles with the configured covariance:
    gradient noise ``(σ²/d) I`` (each coordinate's variance and every pairwise product), and
    ``(σ_H²‖v‖²/d) I`` for Hessian-vector products; Rademacher draws are exactly ``±scale``,
    uniform ones within ``±√3·scale``.  Chosen through the instance's spec."""
    from bilevel_theory.problems.oracle import with_noise_distribution

    prob = with_noise_distribution(problem(), dist)
    assert (prob.config_hash() == problem().config_hash()) == (dist == "gaussian")
    o = Oracle(prob, backend, seed=5)
    assert o.noise_distribution == dist
    R, n = 4000, 5
    idx = o.sample_clients(R, n)
    x, y = points(backend, R, 3, 4)
    noise = backend.to_numpy(o.grad_y_g(idx, x, y) - o.problem.exact_grad_y_g(idx, x, y))
    d, scale = 4, SIGMA / 2.0
    assert_mean_zero(noise, dist)
    for j in range(d):
        if dist != "rademacher":  # Rademacher: exactly scale² (checked below)
            assert_mean_is(noise[..., j] ** 2, scale ** 2, f"{dist}[{j}]²")
        for k in range(j):
            assert_mean_is(noise[..., j] * noise[..., k], 0.0, f"{dist}[{j}]·[{k}]")
    if dist == "rademacher":
        assert np.allclose(np.abs(noise), scale, rtol=1e-12)
    if dist == "uniform":
        assert np.abs(noise).max() <= np.sqrt(3.0) * scale * (1 + 1e-12)
    rng = np.random.default_rng(6)
    v = rng.standard_normal((R, n, 4)) * rng.uniform(0.1, 3.0, (R, n, 1))
    vn2 = (v ** 2).sum(-1)
    v = backend.asarray(v)
    hn = backend.to_numpy(o.hvp_yy_g(idx, x, y, v) - o.problem.exact_hvp_yy_g(idx, v))
    assert_mean_zero(hn / np.sqrt(vn2)[..., None], f"{dist} hvp")
    if dist == "rademacher":  # every coordinate exactly ±σ_H‖v‖/√d
        assert np.allclose((hn ** 2).sum(-1) / vn2, HSIGMA ** 2, rtol=1e-10)
    else:
        assert_mean_is((hn ** 2).sum(-1) / vn2, HSIGMA ** 2, f"{dist} hvp")


def test_noise_distribution_is_validated():
    from bilevel_theory.problems.oracle import with_noise_distribution

    with pytest.raises(ValueError, match="`noise_distribution`"):
        Oracle(problem(), "numpy", noise_distribution="cauchy")
    with pytest.raises(ValueError, match="`noise_distribution`"):
        with_noise_distribution(problem(), "laplace")


# ---------------------------------------------------------------- averaged oracle calls
@pytest.mark.parametrize("name", ["eigen", "rank_one", "dense", "shared", "scaled",
                                  "transposed"])
@pytest.mark.parametrize("n", [211, 20])  # more samples than the 37 clients, and fewer
def test_client_means_of_products_match_the_definition(name, n):
    """``mean_mv``/``mean_rmv`` are the client-axis means of the plain products, for one
    vector per replicate (the structured families' averaged path: sample frequencies when
    ``n ≥ m``, gathered rows otherwise) and for per-client vectors (the generic path)."""
    fam = _families()[name]
    d_out, d_in = np.asarray(fam.dense(0)).shape
    rng = np.random.default_rng(13)
    idx = rng.integers(0, fam.clients, (3, n))
    for shape in ((3, 1), (3, n)):
        v = rng.standard_normal(shape + (d_in,))
        np.testing.assert_allclose(fam.mean_mv(idx, v),
                                   _reference_products(fam, idx, v).mean(axis=1),
                                   rtol=1e-12, atol=1e-12)
        u = rng.standard_normal(shape + (d_out,))
        np.testing.assert_allclose(fam.mean_rmv(idx, u),
                                   _reference_products(fam, idx, u, True).mean(axis=1),
                                   rtol=1e-12, atol=1e-12)


def test_mean_of_rows_both_paths():
    """The mean of sampled rows, by frequencies (``m ≤ n``) and by gathering (``m > n``)."""
    from bilevel_theory.problems.families import mean_of_rows

    rng = np.random.default_rng(14)
    table = rng.standard_normal((30, 4))
    for n in (50, 10):
        idx = rng.integers(0, 30, (2, 3, n))
        np.testing.assert_allclose(mean_of_rows(table, idx), table[idx].mean(axis=-2),
                                   rtol=1e-13, atol=1e-13)


def test_mean_over_clients():
    """Plain and weighted means over axis −2; uniform weights give bitwise the plain mean,
    all-zero weights give 0; a non-numpy namespace reduces with its own functions."""
    import strict_backend as sb

    from bilevel_theory.problems import get_backend
    from bilevel_theory.problems.backend import mean_over_clients

    rng = np.random.default_rng(15)
    a = rng.standard_normal((3, 9, 4))
    w = rng.uniform(0, 1, (3, 9)) * (rng.uniform(size=(3, 9)) < 0.6)
    w[2] = 0.0
    np.testing.assert_allclose(mean_over_clients(a), a.mean(axis=1), rtol=1e-13)
    expected = (w[..., None] * a).sum(1) / np.where(w.sum(1) > 0, w.sum(1), 1.0)[:, None]
    np.testing.assert_allclose(mean_over_clients(a, w), expected, rtol=1e-13, atol=1e-15)
    assert (mean_over_clients(a, w)[2] == 0).all()
    assert np.array_equal(mean_over_clients(a, np.ones((3, 9))), mean_over_clients(a))
    strict = get_backend(sb.NAME)
    for weights in (None, w):
        out = mean_over_clients(strict.asarray(a),
                                None if weights is None else strict.asarray(weights))
        np.testing.assert_allclose(strict.to_numpy(out), mean_over_clients(a, weights),
                                   rtol=1e-13, atol=1e-15)


@given(data=st.data(), last=st.sampled_from([1, 2, 3, 4]),
       rows=st.sampled_from([(5, 3), (700, 4), (2048, 1), (1, 4100)]),
       form=st.sampled_from(["column", "same", "strided", "row_broadcast", "scalar"]),
       op=st.sampled_from([np.add, np.subtract, np.multiply]))
@settings(max_examples=60, deadline=None)
def test_inplace_is_numpys_broadcast_operation(data, last, rows, form, op):
    """``inplace`` (column by column at a short last axis) gives exactly numpy's broadcast
    ``op(out, operand)`` for every operand form the oracle passes: a ``(…, 1)`` column, a
    contiguous or strided array of ``out``'s shape, one broadcast over the rows, a float;
    and on a non-numpy namespace the in-place operator's result."""
    import strict_backend as sb

    from bilevel_theory.problems import get_backend
    from bilevel_theory.problems.backend import inplace

    seed = data.draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    shape = (*rows, last)
    out = rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 6, shape)
    operand = {
        "column": lambda: rng.standard_normal((*rows, 1)),
        "same": lambda: rng.standard_normal(shape),
        "strided": lambda: rng.standard_normal((rows[1], rows[0], last)).swapaxes(0, 1),
        "row_broadcast": lambda: np.broadcast_to(rng.standard_normal((rows[0], 1, last)),
                                                 shape),
        "scalar": lambda: float(rng.standard_normal()),
    }[form]()
    expected = op(out, operand)
    got = out.copy()
    assert inplace(op, got, operand) is got
    assert np.array_equal(got, expected)
    strict = get_backend(sb.NAME)
    dev = strict.asarray(out)
    dev = inplace(op, dev, operand if form == "scalar" else strict.asarray(np.array(operand)))
    assert np.array_equal(strict.to_numpy(dev), expected)


def test_dot_of_two_coordinates_is_einsums():
    """``_dot`` sums two coordinates column by column: exactly ``einsum``'s result, over
    magnitudes from 10⁻⁸ to 10⁸, contiguous and broadcast operands alike."""
    from bilevel_theory.problems.oracle import _dot

    rng = np.random.default_rng(3)
    for shape in [(1536, 8, 2), (3, 2), (2,), (64, 1, 2)]:
        for _ in range(20):
            a, b = (rng.standard_normal(shape) * 10.0 ** rng.integers(-8, 8, shape)
                    for _ in range(2))
            assert np.array_equal(_dot(np, a, b),
                                  np.einsum("...i,...i->...", a, b)[..., None])
    a = rng.standard_normal((6, 1, 2))
    b = rng.standard_normal((6, 5, 2))
    assert np.array_equal(_dot(np, np.broadcast_to(a, b.shape), b),
                          np.einsum("...i,...i->...", np.broadcast_to(a, b.shape), b)[..., None])


@pytest.mark.parametrize("dist", ["gaussian", "rademacher", "uniform"])
@pytest.mark.parametrize("kind", GRADS)
def test_client_mean_has_the_law_of_the_average(backend, dist, kind):
    """``client_mean(kind, …)`` is distributed as the mean of ``n`` calls of ``kind``: the
    exact part is the clients' mean, the noise is zero-mean with covariance
    ``σ²/(d·S·n)·I`` (each coordinate's variance and every pairwise product; Rademacher: a
    mean of ``n`` signs, so ``±scale·(2k − n)/n``); it counts ``n·S`` calls per replicate."""
    from bilevel_theory.problems import ClientMean
    from bilevel_theory.problems.oracle import with_noise_distribution

    prob = with_noise_distribution(problem(), dist)
    o = Oracle(prob, backend, seed=7)
    R, n, S = 4000, 7, 2
    idx = o.sample_clients(R, n)
    x, y = points(backend, R, 3, 4)
    before = o.counter.grad
    out = o.client_mean(kind, idx, x, y, samples=S)
    assert isinstance(out, ClientMean) and out.clients == n
    assert o.counter.grad - before == n * S
    exact = backend.to_numpy(getattr(o.problem, "exact_" + kind)(idx, x, y)).mean(axis=1)
    noise = backend.to_numpy(out.value) - exact
    d = noise.shape[-1]
    scale = SIGMA / np.sqrt(d * S)
    assert_mean_zero(noise, f"{dist} {kind}")
    for j in range(d):
        assert_mean_is(noise[..., j] ** 2, scale ** 2 / n, f"{dist} {kind}[{j}]²")
        for k in range(j):
            assert_mean_is(noise[..., j] * noise[..., k], 0.0, f"{dist} {kind}[{j}]·[{k}]")
    if dist == "rademacher" and backend.name == "numpy":  # (2k − n)/n · scale, k binomial
        k = (noise / scale * n + n) / 2
        assert np.allclose(k, np.round(k), atol=1e-8)
        assert np.round(k).min() >= 0 and np.round(k).max() <= n
    noiseless = Oracle(problem(noise=0.0, hessian_noise=0.0), backend, seed=7)
    np.testing.assert_allclose(
        backend.to_numpy(noiseless.client_mean(kind, idx, x, y).value),
        backend.to_numpy(getattr(noiseless.problem, "exact_" + kind)(idx, x, y)).mean(axis=1),
        rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="`kind`"):
        o.client_mean("hvp_yy_g", idx, x, y)


def test_aggregating_a_client_mean_counts_like_the_clients_arrays():
    """The ledger of ``aggregate(client_mean(…))`` is that of aggregating the ``n`` clients'
    arrays; weights, vectors or a mix of both kinds of argument are refused."""
    import bilevel_theory as bt

    prob = problem()
    ledgers, means = [], []
    for averaged in (False, True):
        ctx = bt.make_context(prob, 5, 3, "numpy")
        idx = ctx.oracle.sample_clients(5, 6)
        x, y = points(ctx.oracle.backend, 5, 3, 4)
        G = (ctx.oracle.client_mean("grad_y_g", idx, x, y) if averaged
             else ctx.oracle.grad_y_g(idx, x, y))
        means.append(ctx.aggregate(G))
        ledgers.append((ctx.rounds, ctx.uplink, ctx.downlink, ctx.oracle.counter.snapshot()))
        if averaged:
            with pytest.raises(ValueError, match="ClientMean"):
                ctx.aggregate(G, weights=np.ones((5, 6)))
            with pytest.raises(TypeError, match="ClientMean"):
                ctx.aggregate(G, ctx.oracle.grad_y_g(idx, x, y))
    assert ledgers[0] == ledgers[1]
    assert means[0].shape == means[1].shape == (5, 4)


# ---------------------------------------------------------------- small batches, one pinning
@pytest.mark.parametrize("name", ["eigen", "rank_one", "dense", "shared", "scaled",
                                  "transposed"])
def test_one_block_path_equals_the_blocked_path_bitwise(monkeypatch, name):
    """A batch that fits in one block (no blocking set-up; Dense: the plain gather-and-product)
    gives bitwise the numbers of the same batch split into uneven 16-row blocks."""
    from bilevel_theory.problems import families

    fam = _families()[name]
    d_out, d_in = np.asarray(fam.dense(0)).shape
    rng = np.random.default_rng(13)
    idx = rng.integers(0, fam.clients, (3, 50))
    cases = []
    for shape in ((3, 50), (3, 1)):
        cases.append((rng.standard_normal(shape + (d_in,)), rng.standard_normal(shape + (d_out,))))
    one = [(fam.mv(idx, v), fam.rmv(idx, u)) for v, u in cases]
    monkeypatch.setattr(families, "BLOCK_ELEMENTS", 1)
    split = [(fam.mv(idx, v), fam.rmv(idx, u)) for v, u in cases]
    for (a, b), (c, d) in zip(one, split):
        assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(c).tobytes(), name
        assert np.ascontiguousarray(b).tobytes() == np.ascontiguousarray(d).tobytes(), name


@pytest.mark.parametrize("name", ["eigen", "rank_one", "dense"])
@pytest.mark.parametrize("block", [None, 1])
def test_fused_kernels_refuse_out_of_range_clients(monkeypatch, name, block):
    """The kernels gather without numpy's per-call bounds check, so the indices are checked
    once: a client index ≥ m (or < −m) is an IndexError, never a wrapped row."""
    from bilevel_theory.problems import families

    if block is not None:
        monkeypatch.setattr(families, "BLOCK_ELEMENTS", block)
    fam = _families()[name]
    d_in = np.asarray(fam.dense(0)).shape[1]
    v = np.ones((1, 3, d_in))
    for bad in (fam.clients, -fam.clients - 1):
        idx = np.array([[0, bad, 1]])
        with pytest.raises(IndexError, match="out of bounds"):
            fam.mv(idx, v)
    np.testing.assert_allclose(fam.mv(np.array([[0, -1, 1]]), v),  # numpy's negative indices
                               fam.mv(np.array([[0, fam.clients - 1, 1]]), v), rtol=0, atol=0)


class _CountingLibrary:
    """A stand-in BLAS controller that counts the thread-count queries."""

    def __init__(self):
        self.threads, self.gets, self.sets = 4, 0, 0

    def get_num_threads(self):
        self.gets += 1
        return self.threads

    def set_num_threads(self, n):
        self.sets += 1
        self.threads = n


def test_blas_is_pinned_once_around_many_oracle_calls(monkeypatch):
    """Inside an enclosing ``single_thread_blas`` (as ``run_algorithm`` enters once per run)
    the oracle calls query nothing; alone, each call pins and restores."""
    from bilevel_theory.problems.backend import single_thread_blas

    lib = _CountingLibrary()
    monkeypatch.setattr(single_thread_blas, "_libraries", [lib])
    o = Oracle(problem(), "numpy", seed=0)
    idx = o.sample_clients(2, 3)
    x, y = points(o.backend, 2, 3, 4)
    with single_thread_blas:
        assert (lib.gets, lib.sets, lib.threads) == (1, 1, 1)
        for _ in range(5):
            o.grad_y_g(idx, x, y)
            o.hvp_yy_g(idx, x, y, y)
        assert (lib.gets, lib.sets) == (1, 1)
    assert (lib.threads, lib.sets) == (4, 2)  # restored on exit
    o.grad_y_g(idx, x, y)  # alone: pins and restores around the call
    assert (lib.gets, lib.sets, lib.threads) == (2, 4, 4)


def test_difference_draws_nothing_and_counts_two_calls():
    """``Oracle.difference`` is the exact difference of two evaluations (the same sample's
    additive noise cancels), draws no random numbers, equals ``pair``'s difference up to
    round-off and counts two gradient calls per entry; ``reference`` reuses the second point."""
    o = Oracle(problem(), "numpy", seed=3)
    R, n = 4, 5
    idx = o.sample_clients(R, n)
    x1, y1 = points(o.backend, R, 3, 4, seed=1)
    x2, y2 = points(o.backend, R, 3, 4, seed=2)
    for name in GRADS:
        exact = getattr(o.problem, "exact_" + name)
        state = o.rng.bit_generator.state
        before = o.counter.grad
        d = o.difference(name, idx, x1, y1, x2, y2)
        assert o.rng.bit_generator.state == state, name
        assert o.counter.grad - before == 2 * n
        want = exact(idx, x1, y1) - exact(idx, x2, y2)
        assert np.ascontiguousarray(d).tobytes() == np.ascontiguousarray(want).tobytes()
        ref = o.exact(name, idx, x2, y2)
        assert o.counter.grad - before == 2 * n  # `exact` is not counted
        again = o.difference(name, idx, x1, y1, x2, y2, reference=ref)
        assert np.array_equal(again, d)
        a, b = o.pair(name, idx, x1, y1, x2, y2)
        np.testing.assert_allclose(a - b, d, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="`kind`"):
        o.difference("hvp_yy_g", idx, x1, y1, x2, y2)


@pytest.mark.parametrize("shape", [(1280, 8, 2), (5, 8, 3), (3, 8, 10)])
def test_dense_in_order_path_is_the_per_client_product(shape):
    """Every client once, in order, in each replicate (a broadcast ``arange``): the products
    run as one matrix product per client over the replicates' axis; the numbers are the
    per-(replicate, client) products up to rounding, and any other ``idx`` takes the gather."""
    from bilevel_theory.problems.families import Dense

    R, K, d = shape
    rng = np.random.default_rng(3)
    M = rng.standard_normal((K, d + 1, d))
    fam = Dense(M)
    v, u = rng.standard_normal((R, K, d)), rng.standard_normal((R, K, d + 1))
    order = np.broadcast_to(np.arange(K), (R, K))
    assert fam._in_order(order, v)
    np.testing.assert_allclose(fam.mv(order, v), (M[None] @ v[..., None])[..., 0],
                               rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(fam.rmv(order, u), (u[..., None, :] @ M[None])[..., 0, :],
                               rtol=1e-13, atol=1e-13)
    shuffled = np.broadcast_to(np.roll(np.arange(K), 1), (R, K))
    copied = np.ascontiguousarray(order)  # the same indices, not a broadcast: the gather
    for idx in (shuffled, copied):
        assert not fam._in_order(idx, v)
        np.testing.assert_allclose(fam.mv(idx, v), (M[idx] @ v[..., None])[..., 0],
                                   rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("kind", ["bilevel", "minimax", "compositional"])
@pytest.mark.parametrize("storage", ["dense", "structured"])
def test_gradient_at_a_fixed_x_is_grad_y_g_bitwise(kind, storage):
    """``Oracle.grad_y_g_at(idx, x)`` (an inner loop's ``x``-dependent part formed once) gives
    bitwise :meth:`Oracle.grad_y_g`'s numbers, draws and counts, call after call, for shared
    and per-entry ``y``, with and without a ``count`` mask."""
    p = problem(kind, clients=6, storage=storage)
    a, b = Oracle(p, "numpy", seed=11), Oracle(p, "numpy", seed=11)
    R, n = 3, 4
    idx = a.sample_clients(R, n)
    b.sample_clients(R, n)
    x, y = points(a.backend, R, 3, 4, seed=4)
    y_each = np.random.default_rng(5).standard_normal((R, n, 4))
    mask = np.random.default_rng(6).random((R, n)) < 0.5
    at = b.grad_y_g_at(idx, x)
    for yy, count in ((y, None), (y_each, None), (y_each, mask), (y, mask)):
        want, got = a.grad_y_g(idx, x, yy, count=count), at(yy, count=count)
        assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()
        assert b.counter.grad == a.counter.grad
    assert b.rng.bit_generator.state == a.rng.bit_generator.state
