"""FedMBO's Lemma 5 and Remark 5 in their other variables (``verify/claims/fedmbo/inner_loop.py``):
the bound's three forms, the starts, and each claim and mutant at its expected verdict on a short
grid; the batch finding's mechanism (the client-sampling variance does not fall with S)."""

from __future__ import annotations

import numpy as np
import pytest

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


@pytest.mark.parametrize("cid, grid, reps", [
    ("fedmbo.inner_loop_lemma5_vs_T", (1, 4, 16), 32),
    ("fedmbo.inner_loop_lemma5_vs_step", (1 / 16, 1 / 4, 1), 32),
    ("fedmbo.inner_loop_lemma5_vs_S", (1, 64, 1024), 256),
    ("fedmbo.inner_loop_remark5_vs_S", (1, 16, 256), 32),
    ("fedmbo.inner_loop_remark5_vs_m", (5, 25, 100), 32),
])
def test_claim_and_mutants_reach_their_verdicts_on_a_short_grid(cid, grid, reps, short_grid_verdicts):
    short_grid_verdicts(CATALOGUE[cid], grid, reps)
