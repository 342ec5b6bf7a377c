"""The clients' gradient offsets ``c_i, p_i, q_i`` (the non-IID part of the data at a fixed
curvature) on quadratic instances: they cancel in AFBO's tables (AFBO-L5), and FedMBO is affine
in them (FEDMBO-L1).  The coverage map rests its reasons for the heterogeneity statements of
AFBO (Remark 2, Fig. 5) and FedMBO (Fig. 2) on these two facts.

Tolerances: the identities hold in exact arithmetic; 1e-12 absolute is float64 round-off over
the runs' few hundred products (the trajectories are O(1)).  The contrasts are O(0.1–1).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from bilevel_theory import run
from bilevel_theory.problems import QuadraticBilevel

ROUNDOFF = 1e-12


def _instance(storage: str = "structured", hessian_noise: float | None = None):
    return QuadraticBilevel.random(clients=8, dim_x=3, dim_y=3, kappa=3, heterogeneity=1.0,
                                   noise=1.0, hessian_noise=hessian_noise, seed=2,
                                   upper_mu=1.0, storage=storage)


def spread_offsets(problem: QuadraticBilevel, s: float) -> QuadraticBilevel:
    """``problem`` with its clients' offsets ``c_i, p_i, q_i`` spread ``s`` times around their
    means: the same ``x*``, ``y*``, ``Φ`` and curvature matrices."""
    out = {}
    for name in ("c", "p", "q"):
        a = np.asarray(getattr(problem, name), float)
        mean = a.mean(axis=0)
        out[name] = mean + s * (a - mean)
    return replace(problem, **out)


def _start(problem):
    return dict(x0=problem.x_star, y0=problem.y_star(problem.x_star))


def test_spreading_the_offsets_keeps_the_solution_and_widens_the_heterogeneity():
    base = _instance()
    wide = spread_offsets(base, 10.0)
    assert np.allclose(wide.x_star, base.x_star, rtol=0, atol=ROUNDOFF)
    assert wide.constants["sigma_g2"] > 2 * base.constants["sigma_g2"]


@pytest.mark.parametrize("storage", ["structured", "dense"])
def test_afbo_trajectory_does_not_depend_on_the_offsets(storage):
    """AFBO-L5: under BoundedDelay(3) inner and outer, gradient and Hessian noise and random
    truncations, the ten-fold spread leaves every iterate where it was; the naive aggregation
    over the arrived clients, and local SGD, do depend on the offsets."""
    base = _instance(storage)
    wide = spread_offsets(base, 10.0)
    kw = dict(rounds=60, replicates=16, seed=3, delay="bounded:3", truncation="random",
              neumann_steps=20, **_start(base))
    a, b = run("afbo", base, **kw), run("afbo", wide, **kw)
    assert a.extras["tau_mean"].mean() > 1.5  # the delays act
    assert np.abs(a.x - b.x).max() < ROUNDOFF
    assert np.abs(a.y - b.y).max() < ROUNDOFF
    assert np.abs(a.x - base.x_star).max() > 0.05  # the noise moves the iterates
    naive = np.abs(run("afbo_naive", base, **kw).x - run("afbo_naive", wide, **kw).x).max()
    assert naive > 0.1, naive
    local = dict(kw, local_step=0.05, local_iterations=3)
    moved = np.abs(run("afbo", base, **local).x - run("afbo", wide, **local).x).max()
    assert moved > 0.01, moved


def test_fedmbo_trajectory_is_affine_in_the_offsets():
    """FEDMBO-L1: with additive noises (no Hessian noise) the iterates at spread s are
    x(0) + s(x(1) − x(0)) per replicate; the offsets do not cancel, even with every client
    taking part once per step."""
    base = _instance(hessian_noise=0.0)
    kw = dict(rounds=40, replicates=8, seed=3, sampled_clients=3, **_start(base))
    x = {s: run("fedmbo", spread_offsets(base, s), **kw).x for s in (0.0, 1.0, 3.0)}
    step = x[1.0] - x[0.0]
    assert np.abs(x[3.0] - x[0.0] - 3.0 * step).max() < ROUNDOFF
    assert np.abs(step).max() > 0.1
    full = dict(kw, sampled_clients=base.clients, replace=False)
    moved = np.abs(run("fedmbo", spread_offsets(base, 3.0), **full).x
                   - run("fedmbo", base, **full).x).max()
    assert moved > 0.1, moved


def test_fedmbo_is_not_affine_with_the_oracle_s_hessian_noise():
    """The library's Hessian-vector noise scales with ‖v‖: why FEDMBO-L1 asks for additive
    noises (the control that the affine test can fail)."""
    base = _instance()
    kw = dict(rounds=40, replicates=8, seed=3, sampled_clients=3, **_start(base))
    x = {s: run("fedmbo", spread_offsets(base, s), **kw).x for s in (0.0, 1.0, 3.0)}
    assert np.abs(x[3.0] - x[0.0] - 3.0 * (x[1.0] - x[0.0])).max() > 0.1
