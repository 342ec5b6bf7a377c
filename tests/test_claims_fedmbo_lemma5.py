"""FedMBO's Lemma 5 and Remark 5 in their other variables (``verify/claims/fedmbo/inner_loop.py``):
the bound's three forms, the starts, and each claim and mutant at its expected verdict on a short
grid; the batch finding's mechanism (the client-sampling variance does not fall with S)."""

from __future__ import annotations

import numpy as np
import pytest

from bilevel_theory import rates
from bilevel_theory.verify.claims import CLAIMS as CATALOGUE
from bilevel_theory.verify.claims.fedmbo import inner_loop as IL


def test_bound_forms():
    p = IL.inner_problem(noise=IL.LEMMA5_NOISE)
    c, beta = p.constants, IL.inner_step(p)
    s1, sg = c["sigma_g12"], c["sigma_g2"]
    assert IL.lemma5_bound(p, 2.0, 4, 8, beta, 16) == pytest.approx(
        (1 - beta * c["mu_g"]) ** 8 * 2.0 + 4 * (s1 + sg) * 8 * beta ** 2 / (4 * 16))
    assert IL.lemma5_bound(p, 0.0, 4, 8, beta, 16, "per_client") == pytest.approx(
        4 * (s1 / 16 + sg) * 8 * beta ** 2 / 4)
    assert IL.lemma5_bound(p, 0.0, 4, 8, beta, 16, "none") == pytest.approx(
        4 * s1 * 8 * beta ** 2 / (4 * 16))


def test_slow_start_is_along_the_bottom_eigenvector():
    p = IL.inner_problem(noise=IL.LEMMA5_NOISE)
    w = IL.slow_direction(p)
    A = p.host.closed_form.A
    assert w @ A @ w == pytest.approx(np.linalg.eigvalsh(A)[0])
    out = IL.inner_lemma5_vs_T(1, 4, 0, off_by_one=True)   # T − 1 = 0 steps: nothing moves
    np.testing.assert_allclose(out["value"], IL.SLOW_OFFSET ** 2)


def test_batch_does_not_reduce_the_client_sampling_variance():
    small = IL.inner_lemma5_vs_S(1, 512, 0)
    large = IL.inner_lemma5_vs_S(1024, 512, 0)
    assert large["value"].mean() == pytest.approx(small["value"].mean(), rel=0.15)
    assert large["bound"][0] == pytest.approx(small["bound"][0] / 1024)
    assert large["value"].mean() > 3 * large["bound"][0]


def test_heterogeneity_sweep_holds_every_remark5_constant_fixed():
    """Remark 5's bound has no heterogeneity constant, and the h-sweep keeps the others fixed:
    one step under Lemma 5's cap at every h, the same μ_g, σ_{g,1}, m and S."""
    assert IL._heterogeneity_law().value == 0.0
    assert rates.sigma_g not in IL.REMARK5_STATIONARY.expr.free_symbols
    grid = sorted({h for b in ("smoke", "standard", "full") for h in IL.HET_GRID[b]})
    beta = IL.heterogeneity_step()
    consts = [IL.heterogeneity_problem(h).constants for h in grid]
    assert all(beta <= 1 / (2 * c["ell_g1"]) for c in consts)
    assert beta == pytest.approx(min(1 / (2 * c["ell_g1"]) for c in consts))
    assert len({round(c["mu_g"], 12) for c in consts}) == 1
    assert {IL.heterogeneity_problem(h).clients for h in grid} == {20}


def test_heterogeneity_mutant_shows_the_client_sampling_term():
    """With replacement the client-sampling variance E_i‖∇_y g_i(x, y*)‖²/m appears: it is
    ∝ h², so from h = 0.1 to 0.8 the stationary error grows by far more than without."""
    lo = IL.remark5_vs_heterogeneity(0.1, 64, 0, replace=True)["value"].mean()
    hi = IL.remark5_vs_heterogeneity(0.8, 64, 0, replace=True)["value"].mean()
    lo0 = IL.remark5_vs_heterogeneity(0.1, 64, 0)["value"].mean()
    hi0 = IL.remark5_vs_heterogeneity(0.8, 64, 0)["value"].mean()
    assert hi / lo > 30
    assert hi0 / lo0 == pytest.approx(1.0, abs=0.2)


@pytest.mark.parametrize("cid, grid, reps", [
    ("fedmbo.inner_loop_lemma5_vs_T", (1, 4, 16), 32),
    ("fedmbo.inner_loop_lemma5_vs_step", (1 / 16, 1 / 4, 1), 32),
    ("fedmbo.inner_loop_lemma5_vs_S", (1, 64, 1024), 256),
    ("fedmbo.inner_loop_remark5_vs_S", (1, 16, 256), 32),
    ("fedmbo.inner_loop_remark5_vs_m", (5, 25, 100), 32),
    ("fedmbo.inner_loop_remark5_vs_heterogeneity", (0.05, 0.2, 0.8), 32),
])
def test_claim_and_mutants_reach_their_verdicts_on_a_short_grid(cid, grid, reps, short_grid_verdicts):
    short_grid_verdicts(CATALOGUE[cid], grid, reps)
