"""FedNest's Fig. 4 in the heterogeneity (``fednest.minimax_linear_vs_heterogeneity``) and the
LFedNest–FedAvg-S ranking (``fednest.lfednest_vs_fedavg_s``): the spread moves the b_i and
nothing else, FedNest's distance does not depend on it, FedAvg-S's drift floor does."""

from __future__ import annotations

import numpy as np
import pytest

from bilevel_theory.verify.claims import CLAIMS as CATALOGUE
from bilevel_theory.verify.claims.fednest import linear_minimax as LM


def test_the_spread_scales_the_b_i_only():
    a, b = LM._mm_spread_problem(1.0), LM._mm_spread_problem(4.0)
    np.testing.assert_allclose(b.c, 4.0 * a.c, rtol=1e-12)
    np.testing.assert_allclose(a.x_star, 0.0, atol=1e-12)
    np.testing.assert_allclose(b.x_star, 0.0, atol=1e-12)
    for key in ("mu_g", "ell_g1", "L_phi", "mu_phi"):
        assert b.constants[key] == pytest.approx(a.constants[key], rel=1e-12), key


def test_fednest_distance_is_the_same_at_every_spread_fedavg_s_is_not():
    fed = [LM.minimax_linear_vs_spread(s, 2, 0)["value"][0] for s in (1, 16)]
    avg = [LM.minimax_linear_vs_spread(s, 2, 0, name="fedavg_s")["value"][0] for s in (1, 16)]
    assert fed[1] == pytest.approx(fed[0], rel=1e-6)
    assert avg[1] > 20 * avg[0]


@pytest.mark.parametrize("cid, grid", [
    ("fednest.minimax_linear_vs_heterogeneity", (1, 4, 16)),
    ("fednest.lfednest_vs_fedavg_s", (20, 28, 36)),
])
def test_claim_and_mutants_reach_their_verdicts_on_a_short_grid(cid, grid, short_grid_verdicts):
    short_grid_verdicts(CATALOGUE[cid], grid, 2)
