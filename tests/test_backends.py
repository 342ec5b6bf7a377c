"""numpy ↔ CuPy equivalence (skipped with the reason where CuPy or a GPU is absent).

Deterministic parts (exact per-client derivatives, closed forms) must agree to float64
round-off; stochastic runs draw from different generators, so they are compared in
distribution: every algorithm runs on CuPy, stays finite, counts the same communication, and
reaches a final stationarity whose replicate mean matches numpy's within sampling error.
"""

from __future__ import annotations

import numpy as np
import pytest

from bilevel_theory import ALGORITHMS, run
from bilevel_theory.problems import (
    QuadraticBilevel,
    QuadraticCompositional,
    QuadraticMinimax,
    cupy_available,
    get_backend,
)

OK, WHY = cupy_available()
pytestmark = pytest.mark.skipif(not OK, reason=f"CuPy backend unavailable: {WHY}")

PROBLEMS = {
    "bilevel-dense": lambda: QuadraticBilevel.random(clients=12, dim_x=3, dim_y=4, kappa=5,
                                                     heterogeneity=0.3, seed=1, storage="dense"),
    "bilevel-structured": lambda: QuadraticBilevel.random(clients=12, dim_x=3, dim_y=4, kappa=5,
                                                          heterogeneity=0.3, seed=1,
                                                          storage="structured"),
    "minimax": lambda: QuadraticMinimax.random(clients=12, dim_x=3, dim_y=4, seed=1),
    "compositional": lambda: QuadraticCompositional.random(clients=12, dim_x=3, dim_y=4, seed=1),
}


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_exact_derivatives_agree(name):
    prob = PROBLEMS[name]()
    gpu = prob.to("cupy")
    cp = get_backend("cupy")
    rng = np.random.default_rng(0)
    idx = rng.integers(0, prob.clients, size=(3, 5))
    x = rng.standard_normal((3, 5, prob.dim_x))
    y = rng.standard_normal((3, 5, prob.dim_y))
    for fn in ("exact_grad_x_f", "exact_grad_y_f", "exact_grad_y_g", "exact_grad_x_g"):
        host = getattr(prob, fn)(idx, x, y)
        dev = getattr(gpu, fn)(cp.asarray(idx, dtype=cp.xp.int64), cp.asarray(x), cp.asarray(y))
        np.testing.assert_allclose(cp.to_numpy(dev), host, rtol=1e-12, atol=1e-12)
    v = rng.standard_normal((3, 5, prob.dim_y))
    np.testing.assert_allclose(cp.to_numpy(gpu.exact_hvp_yy_g(cp.asarray(idx, dtype=cp.xp.int64),
                                                              cp.asarray(v))),
                               prob.exact_hvp_yy_g(idx, v), rtol=1e-12, atol=1e-12)
    xs = rng.standard_normal((4, prob.dim_x))
    np.testing.assert_allclose(cp.to_numpy(gpu.hypergradient(cp.asarray(xs))),
                               prob.hypergradient(xs), rtol=1e-12, atol=1e-12)


def _problem_for(cls):
    if "bilevel" in cls.kinds and cls.name != "fedsvrg":
        return PROBLEMS["bilevel-structured"]()
    if "minimax" in cls.kinds:
        return PROBLEMS["minimax"]()
    return None


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_every_algorithm_runs_on_cupy_and_matches_numpy_in_distribution(name):
    prob = _problem_for(ALGORITHMS[name])
    if prob is None:
        pytest.skip(f"{name} needs a special instance (covered by its own tests)")
    R = 16
    host = run(name, prob, rounds=30, replicates=R, seed=0, backend="numpy")
    dev = run(name, prob, rounds=30, replicates=R, seed=0, backend="cupy")
    assert dev.backend == "cupy" and dev.x.shape == host.x.shape
    assert np.isfinite(dev.x).all() and not dev.diverged.any()
    assert dev.ledger.grad_calls[-1] == pytest.approx(host.ledger.grad_calls[-1], rel=0.2)
    a, b = host.stationarity[:, -1], dev.stationarity[:, -1]
    spread = np.sqrt(a.var(ddof=1) / R + b.var(ddof=1) / R) + 1e-12 * (1 + abs(a.mean()))
    assert abs(a.mean() - b.mean()) <= 6 * spread, (a.mean(), b.mean(), spread)
