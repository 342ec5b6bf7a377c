"""AFBO (Li, Zhu, Gong, Mao & Zhou, WiOpt 2024; readings AFBO-R…/I… in docs/papers/afbo.md):
delay models, APHE, most-recent-update aggregation vs the synchronous and naive asynchronous
baselines, ledger counts, the mutants' hyperparameters (``aligned``, ``stale_weighting``).

Tolerances: ``≈`` checks are exact identities (bitwise or 1e-10 relative, floating-point
round-off); convergence checks are noise-free runs whose limit is known in closed form.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from bilevel_theory import ALGORITHMS, make_context, run
from bilevel_theory.afbo import (
    AFBO,
    BoundedDelay,
    HeavyTailedDelay,
    LocalIterations,
    Periodic,
    Stragglers,
    Synchronous,
    aligned_gradients,
    aphe,
    make_delay,
    theorem_schedule,
)
from bilevel_theory.problems import QuadraticBilevel


def _prob(noise=0.0, heterogeneity=1.0, clients=8, seed=2):
    return QuadraticBilevel.random(clients=clients, dim_x=3, dim_y=3, kappa=3,
                                   heterogeneity=heterogeneity, noise=noise, seed=seed,
                                   upper_mu=1.0)


def _series_steps(prob, tol=1e-6):
    """Neumann terms making the series bias ``(1 − μ/ℓ)^N`` ≈ ``tol`` (negligible here)."""
    return math.ceil(prob.constants["kappa_g"] * math.log(1 / tol))


def _rel(trace, x_star, at=-1):
    return ((trace.x[:, at] - x_star) ** 2).sum(-1) / (x_star ** 2).sum()


# ------------------------------------------------------------------ registry
def test_registered():
    for name in ("afbo", "afbo_sync", "afbo_naive"):
        assert name in ALGORITHMS


# ------------------------------------------------------------------ delay models
def _masks(model, R, m, steps, seed=0):
    ctx = make_context(_prob(clients=m), R, seed)
    proc = model.start(ctx.xp, ctx.rng, R, m)
    return np.stack([proc() for _ in range(steps)])  # (steps, R, m)


def _max_gap(masks):
    """Largest number of steps between consecutive uploads (and after the last one)."""
    steps = masks.shape[0]
    t = np.arange(steps)[:, None, None]
    last = np.maximum.accumulate(np.where(masks, t, -1), axis=0)
    return int((t - last).max()) + 1


def test_delay_models_step_zero_all_and_shapes():
    for model in (Synchronous(), BoundedDelay(3), HeavyTailedDelay(1.5, cap=7),
                  Stragglers(0.25, 4), Periodic([1, 2, 3, 1, 1, 2, 5, 1])):
        masks = _masks(model, R=5, m=8, steps=30)
        assert masks.shape == (30, 5, 8) and masks.dtype == bool
        assert masks[0].all(), model


def test_bounded_delay_enforces_assumption_4_6():
    masks = _masks(BoundedDelay(4), R=40, m=10, steps=300)
    assert _max_gap(masks) == 4  # every client uploads at least once every τ_M = 4 steps
    rate = masks[1:].mean()
    assert abs(rate - 2 / (4 + 1)) < 0.02  # mean gap (1+τ_M)/2 for uniform gaps
    assert (_masks(BoundedDelay(1), R=3, m=4, steps=10)).all()


def test_heavy_tailed_delay_tail_and_cap():
    free = _masks(HeavyTailedDelay(1.1), R=40, m=10, steps=400)
    assert _max_gap(free) > 30  # heavy tail: some client waits long
    capped = _masks(HeavyTailedDelay(1.1, cap=6), R=40, m=10, steps=400)
    assert _max_gap(capped) <= 6


@pytest.mark.parametrize("alpha, cap", [(1.5, 2), (1.5, 8), (1.1, 16), (3.0, 5)])
def test_heavy_tailed_mean_delay_is_the_simulated_stationary_mean(alpha, cap):
    """``mean_delay`` (the renewal age's closed form) against the paper's delay ``τ = age + 1``
    averaged over a long simulated stretch after a burn-in: within 5 standard errors."""
    model = HeavyTailedDelay(alpha, cap=cap)
    ctx = make_context(_prob(clients=8), 64, 3)
    proc = model.start(ctx.xp, ctx.rng, 64, 8)
    for _ in range(200):
        proc()
    taus = []
    for _ in range(2000):
        proc()
        taus.append(proc.tau.mean(axis=1))
    per_rep = np.mean(taus, axis=0)  # (R,): independent replicates
    se = per_rep.std(ddof=1) / math.sqrt(per_rep.size)
    assert abs(per_rep.mean() - model.mean_delay()) < 5 * se + 1e-12
    assert HeavyTailedDelay(1.5, cap=1).mean_delay() == 1.0
    assert HeavyTailedDelay(1.5).mean_delay() == math.inf
    with pytest.raises(ValueError, match="cap"):
        HeavyTailedDelay(2.5).mean_delay()


def test_stragglers_and_periodic():
    masks = _masks(Stragglers(0.25, slowdown=5), R=20, m=8, steps=501)
    fast, slow = masks[1:, :, :6], masks[1:, :, 6:]
    assert fast.all()
    assert abs(slow.mean() - 1 / 5) < 1e-2 and _max_gap(masks[:, :, 6:]) <= 5
    per = _masks(Periodic([1, 2, 3]), R=2, m=3, steps=7)
    expect = np.array([[s % p == 0 for p in (1, 2, 3)] for s in range(7)])
    assert (per == expect[:, None, :]).all()


# ------------------------------------------------------------------ APHE in closed form
@pytest.mark.parametrize("truncation, U", [("fixed", None), ("fixed", 5), ("series", 12)])
def test_aphe_noise_free_equals_closed_form(truncation, U):
    prob = _prob()
    C, m = prob.closed_form, prob.clients
    ell = prob.constants["ell_g1"]
    ctx = make_context(prob, replicates=2, seed=0)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    idx = np.broadcast_to(np.arange(m), (2, m))
    fy = ctx.oracle.grad_y_f(idx, x[:, None], y[:, None])
    H = aphe(ctx, x, y, fy, scale=ell, truncation=truncation, neumann_steps=U)
    M_ = np.eye(3) - C.A / ell
    if truncation == "fixed":
        U = m if U is None else U
        inv = (U / ell) * np.linalg.matrix_power(M_, U)
    else:
        inv = sum(np.linalg.matrix_power(M_, n) for n in range(U)) / ell
    gx = prob.exact_grad_x_f(idx, x[:, None], y[:, None])
    expect = gx + (fy.mean(1) @ inv.T @ C.B)[:, None, :]
    np.testing.assert_allclose(H, expect, rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------ synchronous = afbo_sync
@pytest.mark.parametrize("truncation", ["fixed", "random"])
def test_synchronous_delay_reproduces_afbo_sync_bitwise(truncation):
    prob = _prob(noise=0.3)
    kw = dict(rounds=6, replicates=3, seed=4, truncation=truncation, neumann_steps=6,
              inner_steps=3, local_iterations="uniform:1-3")
    a = run("afbo", prob, delay=Synchronous(), **kw)
    s = run("afbo_sync", prob, **kw)
    assert np.array_equal(a.x, s.x) and np.array_equal(a.y, s.y)
    for f in ("rounds", "grad_calls", "hvp_calls", "jvp_calls", "uplink", "downlink"):
        np.testing.assert_allclose(getattr(a.ledger, f), getattr(s.ledger, f), rtol=1e-12)
    n = run("afbo_naive", prob, delay="sync", **kw)  # arrived = all: the same algorithm
    np.testing.assert_allclose(n.x, s.x, rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------------ noise-free convergence
def test_bounded_delays_converge_to_x_star():
    prob = _prob()
    N = _series_steps(prob)
    tr = run("afbo", prob, rounds=150, replicates=2, seed=0, delay="bounded:3",
             truncation="series", neumann_steps=N)
    assert tr.extras["tau_max"].max() == 3 and tr.extras["tau_mean"].mean() > 1.5
    assert tr.extras["rho_mean"].mean() > 1.5  # the inner loop is asynchronous too
    assert (_rel(tr, prob.x_star) < 1e-4).all(), _rel(tr, prob.x_star)


def test_naive_aggregation_biased_under_stragglers_afbo_not():
    prob = _prob()
    N = _series_steps(prob)
    kw = dict(replicates=2, seed=0, delay=Stragglers(0.25, slowdown=5), truncation="series",
              neumann_steps=N)
    T = 150
    good = _rel(run("afbo", prob, rounds=T, **kw), prob.x_star)
    naive = run("afbo_naive", prob, rounds=2 * T, **kw)
    plateau_T, plateau_2T = _rel(naive, prob.x_star, T), _rel(naive, prob.x_star, 2 * T)
    assert (good < 1e-4).all(), good
    assert (plateau_T > 1e-3).all() and (plateau_T > 1e6 * good).all(), (plateau_T, good)
    # not merely slower: doubling the rounds leaves the plateau where it was
    assert (plateau_2T > 0.5 * plateau_T).all(), (plateau_T, plateau_2T)
    # controls: the bias needs skewed participation AND non-IID clients
    sync = run("afbo_naive", prob, rounds=T, **{**kw, "delay": "sync"})
    assert (_rel(sync, prob.x_star) < 1e-4).all()
    iid = _prob(heterogeneity=0.0)
    naive_iid = run("afbo_naive", iid, rounds=T, **{**kw, "neumann_steps": _series_steps(iid)})
    assert (_rel(naive_iid, iid.x_star) < 1e-4).all()


@pytest.mark.parametrize("E", ["uniform:1-5", np.array([1, 5, 2, 4, 1, 3, 5, 2])])
def test_heterogeneous_local_iterations_converge(E):
    prob = _prob()
    tr = run("afbo", prob, rounds=150, replicates=1, seed=0, delay="bounded:3",
             local_iterations=E, truncation="series", neumann_steps=_series_steps(prob))
    assert (_rel(tr, prob.x_star) < 1e-4).all()


def test_local_sgd_steps_leave_a_drift_bias():
    """Finding: with real local SGD steps (``local_step > 0``) the aligned update does not
    remove client drift on non-IID clients; the bias grows with the local step."""
    prob = _prob()
    errs = [float(_rel(run("afbo", prob, rounds=200, replicates=1, seed=0, delay="sync",
                           local_iterations="uniform:1-5", local_step=s, truncation="series",
                           neumann_steps=_series_steps(prob)), prob.x_star)[0])
            for s in (0.0, 0.02, 0.1)]
    assert errs[0] < 1e-10 < 1e-7 < errs[1] < errs[2], errs


def test_fixed_truncation_as_written_converges_to_a_wrong_point():
    """Finding: APHE's deterministic ``(U/ℓ)(I − Ĥ/ℓ)^U`` (U = m) is not an inverse-Hessian
    estimate, so AFBO as written converges (noise-free, with delays) to the zero ``x̃`` of the
    biased hypergradient, far from ``x*``."""
    prob = _prob()
    C, m, ell = prob.closed_form, prob.clients, prob.constants["ell_g1"]
    Minv = (m / ell) * np.linalg.matrix_power(np.eye(3) - C.A / ell, m)
    lin = C.P + C.R @ C.J + C.B.T @ Minv @ (C.R.T + C.S @ C.J)
    const = C.R @ C.y0 + C.p + C.B.T @ Minv @ (C.S @ C.y0 + C.q)
    x_tilde = -np.linalg.solve(lin, const)
    tr = run("afbo", prob, rounds=150, replicates=2, seed=0, delay="bounded:3",
             truncation="fixed")
    assert (_rel(tr, x_tilde) < 1e-10).all(), _rel(tr, x_tilde)
    gap = ((x_tilde - prob.x_star) ** 2).sum() / (prob.x_star ** 2).sum()
    assert gap > 0.05, gap


# ------------------------------------------------------------------ ledger
def _hand_counts(m, K, U, periods, E, rounds, naive=False):
    rows = []
    for t in range(rounds):
        ins = [[(t * K + k) % p == 0 for p in periods] for k in range(K)]
        out = [t % p == 0 for p in periods]
        n = sum(out)
        mem = n if naive else m
        grad = sum(e for row in ins for e, on in zip(E, row, strict=True) if on) + 2 * n
        up = sum(sum(r) for r in ins) / m + n / m + U * n * mem / m + n * mem / m + n / m
        rows.append(dict(rounds=K + U + 2, grad_calls=grad, hvp_calls=mem * U * n,
                         jvp_calls=mem * n, uplink=up, downlink=K + 2 + (U + 1) * n * mem / m + 1))
    return rows


@pytest.mark.parametrize("name", ["afbo", "afbo_naive"])
def test_ledger_hand_counts(name):
    prob = _prob(clients=4, noise=0.1)
    periods, E, K, U, T = [1, 1, 2, 3], np.array([1, 2, 1, 3]), 2, 3, 4
    tr = run(name, prob, rounds=T, replicates=2, seed=0, delay=Periodic(periods),
             inner_steps=K, local_iterations=E, truncation="fixed", neumann_steps=U)
    expect = _hand_counts(4, K, U, periods, E, T, naive=name == "afbo_naive")
    for f in ("rounds", "grad_calls", "hvp_calls", "jvp_calls", "uplink", "downlink"):
        np.testing.assert_allclose(tr.ledger.per_round(f), [r[f] for r in expect],
                                   rtol=1e-12, err_msg=f)


def test_ledger_sync_and_random_truncation():
    prob = _prob(clients=4)
    s = run("afbo_sync", prob, rounds=2, replicates=1, seed=0, inner_steps=3,
            truncation="series", neumann_steps=5)
    np.testing.assert_allclose(s.ledger.per_round("rounds"), 3 + 4 + 2)
    np.testing.assert_allclose(s.ledger.per_round("hvp_calls"), 4 * 4 * 4)
    np.testing.assert_allclose(s.ledger.per_round("grad_calls"), 3 * 4 + 2 * 4)
    r = run("afbo_sync", prob, rounds=30, replicates=8, seed=0, truncation="random",
            neumann_steps=6)
    hvp = r.ledger.per_round("hvp_calls")
    assert np.allclose((8 * hvp) % 4, 0) and hvp.max() <= 4 * 4 * 5  # mean over 8 replicates
    # E[N_i] = (N−1)/2 products per chain, m chains of m clients: 4·4·2.5 = 40 on average
    assert abs(hvp.mean() - 40) < 6, hvp.mean()


# ------------------------------------------------------------------ determinism
def test_same_seed_identical_replicates_independent():
    prob = _prob(noise=0.2)
    kw = dict(rounds=5, replicates=3, delay="heavy:1.5:8", truncation="random",
              neumann_steps=5)
    a, b = run("afbo", prob, seed=7, **kw), run("afbo", prob, seed=7, **kw)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.extras["tau_mean"],
                                                       b.extras["tau_mean"])
    assert not np.allclose(a.x[0, -1], a.x[1, -1])
    assert not np.array_equal(run("afbo", prob, seed=8, **kw).x, a.x)


# ------------------------------------------------------------------ schedule
def test_theorem_schedule():
    sc = theorem_schedule(400, 16, 10, case="strongly_convex", kappa_g=3.0)
    assert sc["outer_step"] == pytest.approx(1 / 20)
    assert 10 * sc["inner_step"] ** 2 <= 1 / 400 * (1 + 1e-12)
    assert sc["neumann_steps"] == math.ceil(3 * math.log(400))
    nc = theorem_schedule(400, 16, 10, case="nonconvex", eta_scale=0.5, beta_max=0.01)
    assert nc["outer_step"] == pytest.approx(0.5 * math.sqrt(16 / 400))
    assert nc["inner_step"] == 0.01


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("kwargs, name", [
    (dict(delay="foo"), "delay"),
    (dict(delay="bounded:0"), "max_delay"),
    (dict(delay="bounded:x"), "delay"),
    (dict(delay="heavy:-1"), "alpha"),
    (dict(delay="stragglers:0"), "fraction"),
    (dict(inner_delay="later"), "inner_delay"),
    (dict(delay=Periodic([1, 2])), "periods"),
    (dict(local_iterations="uniform:3-1"), "local_iterations"),
    (dict(local_iterations=0), "local_iterations"),
    (dict(truncation="bogus"), "truncation"),
    (dict(local_step=-1.0), "local_step"),
    (dict(neumann_steps=0), "neumann_steps"),
    (dict(delay_model="sync"), "delay_model"),
])
def test_bad_input_names_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        AFBO(_prob(), **kwargs)


def test_bad_input_types_and_models():
    with pytest.raises(TypeError, match="delay"):
        make_delay(3)
    with pytest.raises(ValueError, match="max_delay"):
        BoundedDelay(0)
    with pytest.raises(ValueError, match="cap"):
        HeavyTailedDelay(1.5, cap=0)
    with pytest.raises(ValueError, match="slowdown"):
        Stragglers(0.1, slowdown=0)
    with pytest.raises(ValueError, match="local_iterations"):
        LocalIterations(np.array([1, 2]), 4)
    with pytest.raises(ValueError, match="case"):
        theorem_schedule(10, 4, 2, case="convex")
    with pytest.raises(ValueError, match="clients"):
        Stragglers(0.1, clients=[9]).check(4)


# ------------------------------------------------------------------ mutants' hyperparameters
def test_unaligned_sum_weights_clients_by_their_local_iterations():
    """``aligned=False`` returns ``Σ_e`` (= ``E_i`` times the aligned mean without local steps)."""
    prob = _prob(clients=4)
    ctx = make_context(prob, 2, 0)
    x = np.ones((2, prob.dim_x))
    y = np.zeros((2, prob.dim_y))
    E = np.broadcast_to(np.array([1, 2, 3, 5])[None, :], (2, 4))
    a = aligned_gradients(ctx, x, y, E, 5)
    b = aligned_gradients(ctx, x, y, E, 5, aligned=False)
    np.testing.assert_allclose(b, a * E[..., None], rtol=1e-12)


def test_age_weighting_is_the_identity_when_synchronous_and_checked():
    prob = _prob(noise=0.1, clients=4)
    kw = dict(rounds=5, replicates=2, seed=3, delay="sync", truncation="series",
              neumann_steps=4)
    a = run("afbo", prob, **kw)
    b = run("afbo", prob, stale_weighting="age", **kw)
    assert np.array_equal(a.x, b.x)
    kw["delay"] = "bounded:4"  # stale entries (τ > 1) are scaled by their age
    assert not np.allclose(run("afbo", prob, stale_weighting="age", **kw).x,
                           run("afbo", prob, **kw).x)
    with pytest.raises(ValueError, match="stale_weighting"):
        AFBO(prob, stale_weighting="oldest")
    with pytest.raises(TypeError, match="aligned"):
        AFBO(prob, aligned="no")


@pytest.mark.parametrize("aligned", [True, False])
def test_one_local_iteration_is_the_general_loop_bitwise(aligned):
    """``e_max = 1`` (every ``E_i = 1``) skips the local loop: the same gradients, the same
    draws and the same count as the loop run with a longer horizon that no client uses."""
    prob = _prob(noise=0.3, clients=4)
    x, y = np.ones((3, prob.dim_x)), np.zeros((3, prob.dim_y))
    E = np.ones((3, 4), dtype=np.int64)
    count = np.array([[True, False, True, True]] * 3)
    out = []
    for e_max in (1, 2):
        ctx = make_context(prob, 3, 7)
        g = aligned_gradients(ctx, x, y, E, e_max, count=count, aligned=aligned)
        out.append((g, ctx.oracle.counter.grad))
    assert np.array_equal(out[0][0], out[1][0])
    assert out[0][1] == out[1][1] == 3  # per replicate: three clients count
