"""AFBO's Lemma 4.2 (``verify/claims/afbo/inner_loop.py``) and FedMBO's fixed sampling ratio
(``fedmbo.stationarity_vs_clients_at_ratio``): the bound as registered, the start, the tiled
instances' constants, and each claim and mutant at its expected verdict on a short grid."""

from __future__ import annotations

import numpy as np
import pytest

from bilevel_theory.verify.claims import CLAIMS as CATALOGUE
from bilevel_theory.verify.claims.afbo import inner_loop as IL
from bilevel_theory.verify.claims.fedmbo import stationarity as ST
from bilevel_theory.verify.claims.fedmbo.common import proof_constants


def test_lemma42_bound_is_the_stated_right_hand_side():
    c = IL.problem().constants
    x, ys, y0 = IL._start()
    d0 = float((y0 - ys) @ (y0 - ys))
    assert d0 == pytest.approx(IL.OFFSET ** 2)
    beta = 0.1
    assert IL.lemma42_bound(3, beta) == pytest.approx(
        4 * (c["sigma_g2"] + c["sigma_g12"]) * 3 * beta ** 2 + (1 - beta * c["mu_g"]) ** 3 * d0)


def test_lemma42_start_is_along_the_slowest_direction_and_off_by_one_moves_nothing():
    x, ys, y0 = IL._start()
    A = np.asarray(IL.problem().closed_form.A)
    w = (y0 - ys) / IL.OFFSET
    assert w @ A @ w == pytest.approx(np.linalg.eigvalsh(A)[0])
    out = IL.lemma42_vs_K(1, 4, 0, off_by_one=True)   # K − 1 = 0 steps: y^{t+1} = y^t
    np.testing.assert_allclose(out["value"], IL.OFFSET ** 2)
    assert out["value"][0] > out["bound"][0]


def test_periodic_uploads_overshoot_as_lemma_afbo_l4_says():
    """With every client uploading every ρ = K = 8 inner steps the round applies the step-0
    gradient K times: along the top direction v the mean error is ‖(1 − Kβλ_max)·50v‖², the
    gradient noise only adding to it (AFBO-L4); far above Lemma 4.2's bound.  The start is
    along v, and at ρ = 1 the periodic schedule is the synchronous one."""
    x, ys, y0 = IL._start(fast=True)
    A = np.asarray(IL.problem().closed_form.A)
    v = (y0 - ys) / IL.OFFSET
    assert v @ A @ v == pytest.approx(np.linalg.eigvalsh(A)[-1])
    out = IL.lemma42_vs_delay(8, 64, 1)
    floor = IL.overshoot(8) * IL.OFFSET ** 2
    assert floor > 1.5 * IL.OFFSET ** 2
    # E value = floor + the noise's variance; the sample mean's error is the cross term's
    se = out["value"].std(ddof=1) / np.sqrt(out["value"].size)
    assert floor - 4 * se < out["value"].mean() < 1.05 * floor + 4 * se
    assert out["value"].mean() > 3 * out["bound"][0]
    repaired = IL.lemma42_vs_delay(8, 64, 1, delay_scaled=True)
    beta = IL.STEP_FRACTION * IL._beta_max() / 8
    assert repaired["bound"][0] == pytest.approx(
        IL.lemma42_bound(IL.K_DELAY, beta, fast=True, period=8))
    assert repaired["value"].mean() < repaired["bound"][0]
    np.testing.assert_array_equal(IL.lemma42_vs_delay(1, 8, 2)["value"],
                                  IL.lemma42_vs_delay(1, 8, 2)["value"])


def test_the_delay_bound_takes_the_spread_over_the_region_the_round_visits():
    """The stale steps carry y far outside the instance's radius-10 ball, where the clients'
    gradients differ more: the delay claim's σ_g² is the spread over a ball that holds the
    round's start and every replicate's end point, and it is larger than the instance's."""
    prob = IL.problem()
    beta = IL.STEP_FRACTION * IL._beta_max()
    x, ys, y0 = IL._start(fast=True)
    radius = IL.periodic_path_radius(IL.K_DELAY, beta, 8)
    assert np.linalg.norm(np.concatenate([x, y0])) < radius
    tr = IL.run("afbo", prob, rounds=1, replicates=32, seed=3, x0=x, y0=y0,
                inner_steps=IL.K_DELAY, inner_step=beta, outer_step=IL.OUTER_STEP,
                delay="sync", inner_delay=IL.Periodic([8] * prob.clients))
    ends = np.concatenate([np.broadcast_to(x, (32, x.size)), tr.y[:, 1]], axis=1)
    assert np.linalg.norm(ends, axis=1).max() < radius
    spread = prob.heterogeneity_within(radius)
    assert spread > 10 * prob.constants["sigma_g2"]
    assert IL.lemma42_bound(IL.K_DELAY, beta, True, 8) == pytest.approx(
        4 * (spread + prob.constants["sigma_g12"]) * IL.K_DELAY * beta ** 2
        + (1 - beta * prob.constants["mu_g"]) ** IL.K_DELAY * IL.OFFSET ** 2)
    # the same exact maximum as the instance's own σ_g² on its ball, growing with the radius
    assert prob.heterogeneity_within(np.sqrt(2.0) * prob.radius) == prob.heterogeneity()
    assert prob.heterogeneity_within(2 * radius) > spread
    with pytest.raises(ValueError, match="radius"):
        prob.heterogeneity_within(-1.0)


def test_ratio_instances_are_copies_with_the_theorem_instance_constants():
    base = ST.thm1_problem()
    big = ST.ratio_problem(400)
    assert big.clients == 400
    np.testing.assert_allclose(big.x_star, base.x_star, rtol=1e-12)
    for key in ("mu_g", "ell_g1", "L_f", "M_f", "L_y", "kappa_g", "sigma_g2"):
        assert big.constants[key] == pytest.approx(base.constants[key], rel=1e-12), key
    a, b = proof_constants(big, ST.NK_MAX), ST.thm1_constants()
    for key in ("alpha_hat1", "alpha_hat2", "alpha_hat3", "beta_bar", "T", "S", "N"):
        assert a[key] == pytest.approx(b[key], rel=1e-12), key
    with pytest.raises(ValueError, match="multiple of 100"):
        ST.ratio_problem(150)


@pytest.mark.parametrize("cid, grid, reps", [
    ("afbo.inner_loop_lemma42_vs_K", (1, 4, 16), 32),
    ("afbo.inner_loop_lemma42_vs_step", (1 / 16, 1 / 4, 0.99), 32),
    ("afbo.inner_loop_lemma42_vs_delay", (1, 4, 8), 32),
    ("fedmbo.stationarity_vs_clients_at_ratio", (100, 200, 400), 64),
])
def test_claim_and_mutants_reach_their_verdicts_on_a_short_grid(cid, grid, reps,
                                                                short_grid_verdicts):
    short_grid_verdicts(CATALOGUE[cid], grid, reps)
