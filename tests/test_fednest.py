"""FedNest / LFedNest family (Tarzanagh et al. 2022): convergence, bias, drift, ledger, §4.3.

Tight statements use ``==`` (ledger counts) and upper/lower bounds use ``<``/``>``; every
tolerance below is stated with where it comes from.  Findings that contradict the paper or the
usual expectation are tested as what they are (``test_fednest_variance_floor``,
``test_minimax_partial_participation_floor``, ``test_fedavg_s_stall_depends_on_lambda``).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from bilevel_theory import ALGORITHMS, make_context, run
from bilevel_theory.fednest import (
    corollary_3_1_schedule,
    corollary_3_2_schedule,
    corollary_3_3_schedule,
    theorem_3_2_schedule,
    theorem_schedule,
)
from bilevel_theory.inner import fedavg, fedsvrg
from bilevel_theory.problems import QuadraticBilevel, QuadraticCompositional, QuadraticMinimax
from bilevel_theory.problems.quadratic import shared

FAMILY = ("fednest", "lfednest", "fednest_sgd", "lfednest_svrg")


def bilevel(h=0.1, noise=0.0, clients=20):
    return QuadraticBilevel.random(clients=clients, dim_x=5, dim_y=5, kappa=5, heterogeneity=h,
                                   noise=noise, seed=0)


def single_level(prob):
    """The same instance with an upper level independent of y: Φ(x) = ½xᵀPx + p̄ᵀx."""
    m, dx, dy = prob.clients, prob.dim_x, prob.dim_y
    return dataclasses.replace(prob, R=shared(np.zeros((dx, dy)), m),
                               S=shared(np.zeros((dy, dy)), m), q=np.zeros((m, dy)))


def tail_bias(prob, trace, tail):
    """Bias of the stationary regime: ``(‖ḡ‖² − noise, noise)`` with ``ḡ`` the mean of
    ``∇Φ(x_k)`` over the last ``tail`` iterates and all replicates (∇Φ is affine, so ``ḡ`` is
    ∇Φ at the averaged iterate) and ``noise = tr Cov(ḡ)`` estimated from the spread of the
    per-replicate tail means; ``‖ḡ‖² − noise`` is an unbiased estimate of ``‖E ∇Φ(x_k)‖²``."""
    g = prob.hypergradient(trace.x[:, -tail:]).mean(axis=1)  # (R, dim_x)
    noise = float(g.var(axis=0, ddof=1).sum() / g.shape[0])
    return float((g.mean(axis=0) ** 2).sum()) - noise, noise


# ---------------------------------------------------------------------------- registry
def test_registered_names():
    for name in (*FAMILY, "fedsvrg", "fedavg_s"):
        assert name in ALGORITHMS


# ---------------------------------------------------------------------------- convergence
@pytest.mark.parametrize("name", ["lfednest", "lfednest_svrg"])
def test_default_convergence_local_variants(name):
    """Defaults, noise-free, h = 0.1, κ = 5: ‖∇Φ‖² drops ≥ 100× within 500 rounds."""
    prob = bilevel(0.1)
    tr = run(name, prob, rounds=500, replicates=2, seed=0)
    s = tr.stationarity.mean(0)
    assert not tr.diverged.any()
    assert s[-50:].mean() < 1e-2 * s[0], f"{name}: {s[0]:.3g} -> {s[-50:].mean():.3g}"


@pytest.mark.parametrize("name", ["fednest", "fednest_sgd"])
def test_fednest_variance_floor(name):
    """FINDING: at a constant step FedNest stalls at a floor set by the variance of FedIHGP's
    random truncation N' (Θ(N), FEDNEST-R6), not at a biased point.

    Noise-free, so Thm. 3.1 with σ = 0 reads O(1/(min ᾱ_j K) + b²) (b² ≈ 1e-6 here) for a
    K-independent step; measured: the per-iterate floor is ~7% of the start (< 100×
    reduction), it scales with α (÷4 step ⇒ floor ÷ ~4), and the bias of the tail-averaged
    iterate is below a tenth of the floor (3-σ upper bound)."""
    prob = bilevel(0.1)
    a0 = 0.5 / prob.constants["L_phi"]
    tr = run(name, prob, rounds=400, replicates=8, seed=0)
    tr4 = run(name, prob, rounds=400, replicates=8, seed=0, outer_step=a0 / 4)
    s0 = tr.stationarity[:, 0].mean()
    floor, floor4 = tr.stationarity[:, -200:].mean(), tr4.stationarity[:, -200:].mean()
    assert floor > 1e-2 * s0, f"{name}: no floor ({s0:.3g} -> {floor:.3g})"
    assert 2.5 < floor / floor4 < 6.0, f"floor ratio {floor / floor4:.3g} (∝ α predicts 4)"
    bias, noise = tail_bias(prob, tr, 200)
    assert bias + 3 * noise < 0.1 * floor, (bias, noise, floor)  # the floor is not bias


def test_fedsvrg_single_level_converges():
    """Thm. 3.2's FedSVRG on Φ(x) = ½xᵀPx + p̄ᵀx (upper level zeroed in y): ≥ 100×."""
    prob = single_level(bilevel(0.1))
    tr = run("fedsvrg", prob, rounds=500, replicates=2, seed=0)
    s = tr.stationarity.mean(0)
    assert tr.y is None
    assert s[-1] < 1e-2 * s[0]
    with pytest.raises(ValueError, match="independent of y"):
        run("fedsvrg", bilevel(0.1), rounds=1)


def test_fedavg_s_minimax_only_and_converges_on_minimax():
    with pytest.raises(ValueError, match="minimax"):
        run("fedavg_s", bilevel(0.1), rounds=1)
    prob = QuadraticMinimax.random(clients=20, dim_x=5, dim_y=5, kappa=5, heterogeneity=0.1,
                                   seed=0)
    tr = run("fedavg_s", prob, rounds=300, replicates=2, seed=0)
    assert tr.stationarity[:, -1].mean() < 1e-2 * tr.stationarity[:, 0].mean()


@pytest.mark.parametrize("name", FAMILY)
def test_compositional_specialization(name):
    """Cor. 3.3: ∇²_{yy}g = I, trivial IHGP (no Hessian-vector products at all)."""
    prob = QuadraticCompositional.random(clients=20, heterogeneity=0.1, seed=0)
    tr = run(name, prob, rounds=300, replicates=2, seed=0)
    assert tr.stationarity[:, -1].mean() < 1e-2 * tr.stationarity[:, 0].mean()
    assert tr.ledger.hvp_calls[-1] == 0


# ---------------------------------------------------------------------------- bias & drift
def test_lfednest_bias_shrinks_with_heterogeneity():
    """LFedNest's local IHGP inverts each client's own Hessian, so its fixed point is biased
    under Hessian heterogeneity.  Full participation (no sampling noise); the bias is measured
    on the tail-averaged iterate, net of its estimated noise (``tail_bias``).  Measured:
    1.6e-2 (h = 0.6), 1.1e-3 (h = 0.3), −9e-6 ± 3e-5 (h = 0): ≈ h⁴, zero for identical clients
    (up to the 1e-3-relative Neumann bias).  Start ‖∇Φ‖² ≈ 13."""
    bias, noise, plateau = {}, {}, {}
    for h in (0.6, 0.3, 0.0):
        prob = bilevel(h)
        tr = run("lfednest", prob, rounds=220, replicates=12, seed=0, sampled_clients=20)
        bias[h], noise[h] = tail_bias(prob, tr, 100)
        plateau[h] = tr.stationarity[:, -100:].mean()
    assert bias[0.6] > 4 * bias[0.3], bias
    assert bias[0.3] > 10 * noise[0.3], (bias, noise)  # well above zero, resolved
    assert abs(bias[0.0]) < 3 * noise[0.0], (bias, noise)  # consistent with zero
    assert plateau[0.6] > plateau[0.3] > plateau[0.0], plateau


@pytest.mark.parametrize("h", [0.1, 0.4])
def test_fedinn_reaches_global_y_star_fedavg_drifts(h):
    """Fixed x, full participation, 300 rounds: FedInn (SVRG) reaches y*(x) to round-off,
    FedAvg stops at a drifted point whose distance grows with heterogeneity."""
    out = {}
    for hh in (0.0, h):
        prob = bilevel(hh)
        beta = 1.0 / (2.0 * prob.constants["ell_g1"])
        for solver in (fedsvrg, fedavg):
            ctx = make_context(prob, 2, seed=0)
            x, y = ctx.xp.ones((2, 5)), ctx.xp.zeros((2, 5))
            y = solver(ctx, x, y, 300, lambda t, b=beta: b, 20, 10)
            ys = prob.y_star(x)
            out[hh, solver.__name__] = float(((y - ys) ** 2).sum(-1).mean()
                                             / (ys ** 2).sum(-1).mean())
    assert out[h, "fedsvrg"] < 1e-20, out
    assert out[h, "fedavg"] > 1e-9, out
    assert out[0.0, "fedavg"] < 1e-20, out  # no heterogeneity, no drift


# ---------------------------------------------------------------------------- ledger
T, N, TAU, NS = 3, 4, 2, 5
HP = dict(inner_steps=T, neumann_steps=N, local_steps=TAU, sampled_clients=NS)


@pytest.mark.parametrize("replicates", [1, 3])
def test_ledger_fednest_exact(replicates):
    """2T + N'_k + 3 rounds executed per epoch (mean over replicates, FEDNEST-R1); grads
    T|S|(1 + 2τ) + 2|S| + 2τ|S|; jvp |S|; hvp |S|·N'_k from the recorded truncations."""
    tr = run("fednest", bilevel(0.1), rounds=6, replicates=replicates, seed=3, **HP)
    led = tr.ledger
    trunc = tr.extras["truncation"]
    np.testing.assert_allclose(led.per_round("rounds"), 2 * T + 3 + trunc.mean(axis=1),
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(led.per_round("uplink"), led.per_round("rounds"), atol=1e-12)
    assert np.all(led.per_round("grad_calls") == T * NS * (1 + 2 * TAU) + 2 * NS + 2 * TAU * NS)
    assert np.all(led.per_round("jvp_calls") == NS)
    trunc = tr.extras["truncation"]
    assert trunc.shape == (6, replicates)
    # exact for R = 1; for R > 1 the ledger's per-replicate mean carries float round-off
    np.testing.assert_allclose(led.per_round("hvp_calls"), NS * trunc.mean(axis=1),
                               rtol=1e-12, atol=1e-12)


def test_ledger_other_variants_exact():
    prob = bilevel(0.1)
    tr = run("fednest_sgd", prob, rounds=4, replicates=1, seed=0, **HP)
    np.testing.assert_array_equal(tr.ledger.per_round("rounds"),
                                  T + 3 + tr.extras["truncation"][:, 0])
    assert np.all(tr.ledger.per_round("grad_calls") == T * TAU * NS + 2 * NS + 2 * TAU * NS)
    np.testing.assert_array_equal(tr.ledger.per_round("hvp_calls"),
                                  NS * tr.extras["truncation"][:, 0])
    tr = run("fednest_released", prob, rounds=4, replicates=1, seed=0, **HP)
    assert np.all(tr.ledger.per_round("rounds") == 2 * T + N + 3)  # the code's comm_round
    assert np.all(tr.ledger.per_round("hvp_calls") == N * NS)
    tr = run("lfednest", prob, rounds=4, replicates=1, seed=0, **HP)
    assert np.all(tr.ledger.per_round("rounds") == T + 1)
    assert np.all(tr.ledger.per_round("grad_calls") == T * TAU * NS + 2 * TAU * NS)
    assert np.all(tr.ledger.per_round("jvp_calls") == TAU * NS)
    tr = run("lfednest_svrg", prob, rounds=4, replicates=1, seed=0, **HP)
    assert np.all(tr.ledger.per_round("rounds") == 2 * T + 1)
    assert np.all(tr.ledger.per_round("grad_calls") == T * NS * (1 + 2 * TAU) + 2 * TAU * NS)
    tr = run("fedsvrg", single_level(prob), rounds=4, replicates=1, seed=0, local_steps=TAU,
             sampled_clients=NS)
    assert np.all(tr.ledger.per_round("rounds") == 2)
    assert np.all(tr.ledger.per_round("grad_calls") == NS + 2 * TAU * NS)
    assert tr.ledger.hvp_calls[-1] == tr.ledger.jvp_calls[-1] == 0


def test_mean_executed_rounds():
    """FedNest's executed rounds per epoch have mean 2T + (N − 1)/2 + 3 (N' ~ U{0..N−1}):
    over R·K = 2560 draws the per-epoch mean lies within 5 standard errors."""
    R, K = 128, 20
    tr = run("fednest", bilevel(0.1), rounds=K, replicates=R, seed=1, **HP)
    mean = tr.ledger.totals()["rounds"] / K
    se = math.sqrt((N * N - 1) / 12 / (R * K))
    assert abs(mean - (2 * T + (N - 1) / 2 + 3)) < 5 * se


@pytest.mark.parametrize("name", ["fednest", "lfednest"])
def test_extra_aggregation_changes_round_count(name):
    """A stray aggregation per epoch adds exactly one round per epoch to the ledger."""
    from bilevel_theory.algorithm import run_algorithm
    from bilevel_theory.verify.claims.fednest.communication import with_extra_aggregation

    prob = bilevel(0.1)
    plain = run(name, prob, rounds=3, replicates=1, seed=0, **HP)
    cls = with_extra_aggregation(ALGORITHMS[name])
    extra = run_algorithm(cls(prob, **HP), 3, 1, 0)
    base = plain.ledger.per_round("rounds")
    if name == "fednest":  # the truncations differ (the stray exchange draws clients)
        base = 2 * T + 3 + extra.extras["truncation"][:, 0]
    np.testing.assert_array_equal(extra.ledger.per_round("rounds"), base + 1)


def test_ledger_lfednest_hvp_mean():
    """Local IHGP: each client and local step draws N' ~ U{0..N−1}, so hvp per epoch has mean
    τ|S|(N−1)/2; over R·K·τ·|S| = 12800 draws the total lies within 5 standard errors."""
    R, K = 64, 20
    tr = run("lfednest", bilevel(0.1), rounds=K, replicates=R, seed=0, **HP)
    draws = R * K * TAU * NS
    expected = K * TAU * NS * (N - 1) / 2
    se = math.sqrt(draws * (N * N - 1) / 12) / R
    assert abs(tr.ledger.hvp_calls[-1] - expected) < 5 * se, (tr.ledger.hvp_calls[-1], expected)


def test_ledger_specializations():
    """Minimax: no IHGP (eq. 12), 2T + 2; compositional: p = mean ∇_y f, 2T + 3, jvp |S|."""
    mm = QuadraticMinimax.fednest_instance(clients=30, dim=4, seed=0)
    tr = run("fednest", mm, rounds=3, replicates=1, seed=0, **HP)
    assert np.all(tr.ledger.per_round("rounds") == 2 * T + 2)
    assert tr.ledger.hvp_calls[-1] == tr.ledger.jvp_calls[-1] == 0
    assert "truncation" not in tr.extras
    tr = run("lfednest", mm, rounds=3, replicates=1, seed=0, **HP)
    assert np.all(tr.ledger.per_round("rounds") == T + 1)
    tr = run("fedavg_s", mm, rounds=3, replicates=1, seed=0, local_steps=TAU,
             sampled_clients=NS)
    assert np.all(tr.ledger.per_round("rounds") == 1)
    assert np.all(tr.ledger.per_round("grad_calls") == 2 * TAU * NS)
    comp = QuadraticCompositional.random(clients=20, seed=0)
    tr = run("fednest", comp, rounds=3, replicates=1, seed=0, **HP)
    assert np.all(tr.ledger.per_round("rounds") == 2 * T + 3)
    assert np.all(tr.ledger.per_round("jvp_calls") == NS)


# ---------------------------------------------------------------------------- FedNest §4.3
def rel_dist(trace, prob):
    d = trace.distance_to(prob.x_star)[0]
    return d / d[0]


def test_minimax_fednest_linear_fedavg_s_stalls():
    """§4.3 on the paper's instance (λ = 10, m = 100, full participation): FedNest converges
    linearly (semilog fit slope < 0, R² > 0.99, < 1e-8 relative); FedAvg-S stalls at a
    constant plateau far above FedNest."""
    prob = QuadraticMinimax.fednest_instance(clients=100, dim=10, seed=0)
    fn = run("fednest", prob, rounds=200, replicates=1, seed=0, sampled_clients=100)
    fs = run("fedavg_s", prob, rounds=200, replicates=1, seed=0, sampled_clients=100)
    d = rel_dist(fn, prob)
    k = np.arange(1, 31)  # before round-off (d reaches 1e-24 by epoch 50)
    slope, icpt = np.polyfit(k, np.log(d[k]), 1)
    resid = np.log(d[k]) - (slope * k + icpt)
    r2 = 1 - resid.var() / np.log(d[k]).var()
    assert slope < 0 and r2 > 0.99, (slope, r2)
    assert d[-1] < 1e-8
    ds = rel_dist(fs, prob)
    assert np.ptp(np.log(ds[100:])) < 0.05, "FedAvg-S has not reached its plateau"
    assert ds[-1] > 1e6 * max(d[-1], 1e-30)


def test_fedavg_s_stall_depends_on_lambda():
    """FINDING: the plateau of FedAvg-S is 6e-11 (relative to ‖x₀ − x*‖²) with the paper's
    λ = 10, and exceeds 1e-3 only with the official notebook's λ = 0.1 and spread s = 10."""
    paper = QuadraticMinimax.fednest_instance(clients=100, dim=10, seed=0)
    notebook = QuadraticMinimax.fednest_instance(clients=100, dim=10, seed=0, lam=0.1,
                                                 spread=10.0)
    plateau = {}
    for key, prob in (("paper", paper), ("notebook", notebook)):
        tr = run("fedavg_s", prob, rounds=150, replicates=1, seed=0, sampled_clients=100)
        plateau[key] = rel_dist(tr, prob)[-1]
        fn = run("fednest", prob, rounds=150, replicates=1, seed=0, sampled_clients=100)
        assert rel_dist(fn, prob)[-1] < 1e-20
    assert 1e-12 < plateau["paper"] < 1e-8, plateau
    assert plateau["notebook"] > 1e-3, plateau


def test_minimax_partial_participation_floor():
    """FINDING: with |S| = 10 of 100 the sampled mean b̄_S ≠ 0, so FedNest's FedInn targets
    b̄_S − t̄_S x and FedNest stops at a sampling-noise floor (~1e-8 relative), not 1e-20.
    (The official notebook's FedNest cell drops b_i from the updates, which hides this.)"""
    prob = QuadraticMinimax.fednest_instance(clients=100, dim=10, seed=0)
    tr = run("fednest", prob, rounds=150, replicates=4, seed=0, sampled_clients=10)
    floor = (tr.distance_to(prob.x_star)[:, -50:] / tr.distance_to(prob.x_star)[:, :1]).mean()
    assert 1e-10 < floor < 1e-6, floor


def test_minimax_fednest_equals_lfednest_on_paper_instance():
    """FINDING: on the §4.3 instance FedNest and LFedNest produce the same iterates (to
    round-off), with full or partial participation: every client has the same Hessian in its
    local variable (I in y, λI in x; A_i = t_i I only couples x and y), so FedAvg/LFedOut
    local steps average to exactly the SVRG-corrected ones.  Fig. 4's gap between them
    ("FedNest ... controlling client-drift") cannot come from this instance; the official
    notebook's FedNest cell drops b_i from its updates."""
    prob = QuadraticMinimax.fednest_instance(clients=100, dim=10, seed=0)
    for part in (100, 10):
        a = run("fednest", prob, rounds=40, replicates=2, seed=0, sampled_clients=part)
        b = run("lfednest", prob, rounds=40, replicates=2, seed=0, sampled_clients=part)
        np.testing.assert_allclose(a.x, b.x, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(a.y, b.y, rtol=1e-9, atol=1e-12)


def test_benchmark_curves_smoke():
    from benchmarks.fednest_minimax import curves

    data = curves(clients=20, epochs=3, sampled=5)
    assert len(data) == 12
    assert all(dx.shape == (4,) and np.all(np.isfinite(dy)) for dx, dy in data.values())


# ---------------------------------------------------------------------------- reproducibility
@pytest.mark.parametrize("name", [*FAMILY, "fedsvrg", "fedavg_s"])
def test_replicates_independent_and_reruns_identical(name):
    if name == "fedavg_s":
        prob = QuadraticMinimax.random(clients=12, dim_x=3, dim_y=3, kappa=3, noise=0.1, seed=1)
    elif name == "fedsvrg":
        prob = single_level(bilevel(0.1, noise=0.1, clients=12))
    else:
        prob = bilevel(0.1, noise=0.1, clients=12)
    hp = dict(inner_steps=2, neumann_steps=3, local_steps=2) if name in FAMILY else {}
    a = run(name, prob, rounds=5, replicates=3, seed=7, **hp)
    b = run(name, prob, rounds=5, replicates=3, seed=7, **hp)
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.stationarity, b.stationarity)
    assert not np.allclose(a.x[0, -1], a.x[1, -1])
    assert not np.allclose(a.x[1, -1], a.x[2, -1])


# ---------------------------------------------------------------------------- inputs
def test_bad_hyperparameters():
    prob = bilevel(0.1)
    with pytest.raises(ValueError, match="inner_local_steps"):
        run("fednest", prob, rounds=1, inner_local_steps=0)
    with pytest.raises(TypeError, match="replace"):
        run("lfednest", prob, rounds=1, replace="no")
    with pytest.raises(ValueError, match="neumann_scale"):
        run("fednest", prob, rounds=1, neumann_scale=0.0)
    with pytest.raises(ValueError, match="sampled_clients"):
        run("fednest", prob, rounds=1, sampled_clients=21)
    with pytest.raises(ValueError, match="outer_step"):
        run("fednest_sgd", prob, rounds=1, outer_step=-1.0)
    with pytest.raises(ValueError, match="hyperparameter"):
        run("fednest", prob, rounds=1, alpha=0.1)


# ---------------------------------------------------------------------------- schedules
def test_theorem_schedules():
    assert theorem_schedule(100, 4, 1.0, 2.0) == pytest.approx((0.1, 0.05))
    assert theorem_schedule(100, 4, 1.0, 2.0, alpha_caps=(0.05, 0.2)) == pytest.approx(
        (0.05, 0.025))
    prob = bilevel(0.1)
    kg = prob.constants["kappa_g"]
    hp = corollary_3_1_schedule(prob, 100, 1.0, 1.0, inner_factor=0.01)
    assert hp["inner_steps"] == math.ceil(0.01 * kg ** 4)
    assert hp["neumann_steps"] == math.ceil(kg * math.log(100))
    assert hp["inner_step"] == pytest.approx(0.1 / hp["inner_steps"])
    with pytest.raises(ValueError, match="minimax"):
        corollary_3_2_schedule(prob, 100, 1.0, 1.0)
    mm = QuadraticMinimax.fednest_instance(clients=10, dim=3, seed=0)
    assert corollary_3_2_schedule(mm, 100, 1.0, 1.0)["inner_steps"] == math.ceil(
        mm.constants["kappa_g"])
    assert corollary_3_3_schedule(400, 1.0, 1.0) == pytest.approx(
        dict(inner_steps=1, outer_step=0.05, inner_step=0.05))
    assert theorem_3_2_schedule(400, 1.0, alpha_cap=0.01) == dict(outer_step=0.01)
    with pytest.raises(ValueError, match="alpha_bar"):
        theorem_schedule(10, 1, 0.0, 1.0)


def test_compositional_theorem_schedule_runs():
    """Cor. 3.3's schedule (T = 1, α = ᾱ/√K, β = β̄α) on a noisy compositional instance."""
    prob = QuadraticCompositional.random(clients=20, heterogeneity=0.1, noise=0.1, seed=0)
    K = 300
    hp = corollary_3_3_schedule(K, alpha_bar=0.5 / prob.constants["L_phi"] * math.sqrt(K) / 4,
                                beta_bar=10.0)
    tr = run("fednest", prob, rounds=K, replicates=4, seed=0, **hp)
    assert tr.average_stationarity().mean() < 0.2 * tr.stationarity[:, 0].mean()


# ------------------------------------------------------------ same-sample differences (law)
def _fedsvrg_with_pairs(ctx, x, y, steps, step, sampled_clients, local_steps, replace=False):
    """FedInn as written before ``Oracle.difference``: the correction's two evaluations from
    ``Oracle.pair`` (the same noise vector added to both points, then subtracted)."""
    o, xb = ctx.oracle, x[:, None, :]
    for t in range(steps):
        idx = o.sample_clients(ctx.replicates, sampled_clients, replace)
        yb = y[:, None, :]
        ctx.broadcast(x, y)
        q = ctx.aggregate(o.grad_y_g(idx, xb, yb))[:, None, :]
        ctx.broadcast(q[:, 0, :])
        y_loc = np.broadcast_to(yb, idx.shape + (y.shape[-1],)) * 1.0
        for _ in range(local_steps):
            g_loc, g_ref = o.pair("grad_y_g", idx, xb, y_loc, xb, yb)
            y_loc = y_loc - (step(t) / local_steps) * (g_loc - g_ref + q)
        y = ctx.aggregate(y_loc)
    return y


def _fed_out_with_pairs(ctx, x, y, step, local_steps, sampled_clients):
    """FedOut's minimax form (``h_i = ∇ₓf_i``) with ``Oracle.pair`` in the local steps."""
    o, xb, yb = ctx.oracle, x[:, None, :], y[:, None, :]
    S = o.sample_clients(ctx.replicates, sampled_clients, False)
    ctx.broadcast(x, y)
    h = ctx.aggregate(o.grad_x_f(S, xb, yb))[:, None, :]
    ctx.broadcast(h[:, 0, :])
    x_loc = np.broadcast_to(xb, S.shape + (x.shape[-1],)) * 1.0
    for _ in range(local_steps):
        f_loc, f_ref = o.pair("grad_x_f", S, x_loc, yb, xb, yb)
        x_loc = x_loc - (step / local_steps) * (f_loc - f_ref + h)
    return ctx.aggregate(x_loc)


def _both_local_loops(noise, replicates, seeds):
    """``(new, with pairs)`` outputs of FedInn (``y``) and FedOut (``x``) from the same start,
    each with the ledger's snapshot."""
    from bilevel_theory.fednest import fed_out

    prob = QuadraticBilevel.random(clients=6, dim_x=3, dim_y=3, kappa=4, heterogeneity=0.5,
                                   noise=noise, seed=2)
    rng = np.random.default_rng(0)
    x0, y0 = rng.standard_normal((1, 3)), rng.standard_normal((1, 3))
    x0, y0 = np.repeat(x0, replicates, 0), np.repeat(y0, replicates, 0)
    beta = 1.0 / (2.0 * prob.constants["ell_g1"])
    out = []
    for seed, (inner, outer) in zip(seeds, (
            (fedsvrg, lambda c, x, y: fed_out(c, x, y, 0.2, 3, 4, 1, 1.0, False, "none")[0]),
            (_fedsvrg_with_pairs, lambda c, x, y: _fed_out_with_pairs(c, x, y, 0.2, 3, 4)))):
        ctx = make_context(prob, replicates, seed=seed)
        y = inner(ctx, x0, y0, 3, lambda t: beta, 4, 3)
        x = outer(ctx, x0, y)
        out.append((np.asarray(y), np.asarray(x), ctx.snapshot()[:6]))  # not state bytes
    return out


def test_same_sample_differences_exact_without_noise():
    """Noise-free oracles, one seed: FedInn and FedOut with ``Oracle.difference`` give the
    iterates of the ``Oracle.pair`` form up to round-off (the difference is the same algebra),
    with the same ledger."""
    (y1, x1, led1), (y2, x2, led2) = _both_local_loops(0.0, 3, (7, 7))
    np.testing.assert_allclose(y1, y2, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(x1, x2, rtol=1e-12, atol=1e-12)
    assert led1 == led2


def test_same_sample_differences_same_law_with_noise():
    """Noisy oracles: the outputs of the form that draws nothing for the same-sample
    differences and of the ``Oracle.pair`` form (which draws and cancels a noise vector) have
    the same law.  Over 4000 replicates (independent seeds) each coordinate's mean agrees
    within 6 standard errors of the difference, and each variance within 6 standard errors
    (``≈ √(2/R)·σ²`` for near-Gaussian outputs, of the difference of the two estimates)."""
    R = 4000
    (y1, x1, led1), (y2, x2, led2) = _both_local_loops(0.5, R, (11, 12))
    assert led1 == led2
    for a, b, what in ((y1, y2, "FedInn y"), (x1, x2, "FedOut x")):
        se = np.sqrt((a.var(0, ddof=1) + b.var(0, ddof=1)) / R)
        assert (np.abs(a.mean(0) - b.mean(0)) <= 6 * se).all(), what
        va, vb = a.var(0, ddof=1), b.var(0, ddof=1)
        assert (np.abs(va - vb) <= 6 * np.sqrt(2.0 / (R - 1)) * np.hypot(va, vb)).all(), what
        assert (va > 0).all(), what  # noisy: a degenerate output would make the test vacuous
