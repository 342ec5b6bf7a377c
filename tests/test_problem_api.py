"""The problem API for plug-in authors: reweighted instances, the minimax saddle point and
per-client hyperparameters, each checked against a direct numpy computation."""

from __future__ import annotations

import numpy as np
import pytest

import bilevel_theory as bt
from bilevel_theory.hyperparameters import SCHEMA, Hyper, validate
from bilevel_theory.problems import QuadraticBilevel, QuadraticCompositional, QuadraticMinimax

FIELDS = ("A", "B", "c", "R", "S", "P", "p", "q", "J", "y0", "H", "g0")
GLOBAL_CONSTANTS = ("mu_g_global", "L_yy_global", "L_phi", "mu_phi", "sigma_g2")


def _instances():
    return {
        "bilevel_dense": QuadraticBilevel.random(clients=7, dim_x=3, dim_y=4, seed=1,
                                                 storage="dense"),
        "bilevel_structured": QuadraticBilevel.random(clients=7, dim_x=3, dim_y=4, seed=2,
                                                      storage="structured"),
        "minimax": QuadraticMinimax.random(clients=6, dim_x=3, dim_y=3, seed=3),
        "minimax_fednest": QuadraticMinimax.fednest_instance(clients=9, dim=3, seed=4),
        "compositional": QuadraticCompositional.random(clients=5, dim_x=2, dim_y=3, seed=5),
    }


INSTANCES = _instances()


def _weights(m: int, seed: int = 0) -> np.ndarray:
    w = np.random.default_rng(seed).uniform(0.1, 2.0, m)
    return w / w.sum()


def _direct(prob, w):
    """The weighted closed forms from the clients' matrices (``client(i)``), in plain numpy."""
    cl = [prob.client(i) for i in range(prob.clients)]
    avg = {k: sum(wi * c[k] for wi, c in zip(w, cl)) for k in ("A", "B", "c", "R", "S", "p", "q")}
    P = cl[0]["P"]
    J = np.linalg.solve(avg["A"], avg["B"])
    y0 = np.linalg.solve(avg["A"], avg["c"])
    H = P + avg["R"] @ J + J.T @ avg["R"].T + J.T @ avg["S"] @ J
    g0 = avg["R"] @ y0 + avg["p"] + J.T @ (avg["S"] @ y0 + avg["q"])
    return avg, P, J, y0, H, g0


def test_tiled_to_a_total_count_is_tiled_by_its_quotient():
    prob = INSTANCES["bilevel_dense"]
    m = prob.clients
    t = prob.tiled_to(3 * m)
    assert t.clients == 3 * m and t.spec == prob.tiled(3).spec
    assert prob.tiled_to(m).clients == m
    with pytest.raises(ValueError, match=f"multiple of {m}"):
        prob.tiled_to(3 * m + 1)
    with pytest.raises(ValueError, match="clients"):
        prob.tiled_to(m - 1)
    with pytest.raises(TypeError, match="clients"):
        prob.tiled_to(2.0 * m)


@pytest.mark.parametrize("name", sorted(INSTANCES))
@pytest.mark.parametrize("weighted", [False, True])
def test_tiled_repeats_every_client_and_keeps_the_global_problem(name, weighted):
    prob = INSTANCES[name]
    if weighted:
        prob = prob.reweighted(_weights(prob.clients))
    t = prob.tiled(3)
    m = prob.clients
    assert t.clients == 3 * m and t.spec["clients"] == 3 * m and t.spec["tiled_from"] == m
    for i in (0, m - 1):
        for k in range(3):
            a, b = prob.client(i), t.client(i + k * m)
            for key in a:
                np.testing.assert_array_equal(b[key], a[key], err_msg=f"{key} of client {i}")
    C, Ct = prob.closed_form, t.closed_form
    for key in FIELDS:
        np.testing.assert_allclose(getattr(Ct, key), getattr(C, key), rtol=1e-12, atol=1e-13,
                                   err_msg=key)
    np.testing.assert_allclose(t.x_star, prob.x_star, rtol=1e-10, atol=1e-12)
    for key in GLOBAL_CONSTANTS:
        assert t.constants[key] == pytest.approx(prob.constants[key], rel=1e-10)


def test_tiled_rejects_a_bad_count():
    prob = INSTANCES["bilevel_dense"]
    with pytest.raises(ValueError, match="copies"):
        prob.tiled(0)
    with pytest.raises(TypeError, match="copies"):
        prob.tiled(1.5)
    with pytest.raises(ValueError, match="copies` must be ≤"):
        prob.tiled(10**7)


@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_reweighted_closed_forms_match_a_direct_computation(name):
    prob = INSTANCES[name]
    w = _weights(prob.clients)
    rw = prob.reweighted(w)
    avg, P, J, y0, H, g0 = _direct(prob, w)
    C = rw.closed_form
    for k, v in avg.items():
        np.testing.assert_allclose(getattr(C, k), v, rtol=1e-12, atol=1e-12, err_msg=k)
    np.testing.assert_allclose(C.J, J, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(C.H, 0.5 * (H + H.T), rtol=1e-10, atol=1e-12)
    x = np.random.default_rng(7).standard_normal((4, prob.dim_x))
    ys = x @ J.T + y0
    np.testing.assert_allclose(rw.y_star(x), ys, rtol=1e-10, atol=1e-12)
    # Φ(x) = Σ_i w_i f_i(x, y*(x)), evaluated client by client
    phi = sum(wi * prob.f_i(i, x, ys) for i, wi in enumerate(w))
    np.testing.assert_allclose(rw.phi(x), phi, rtol=1e-10, atol=1e-12)
    # ∇Φ = ∇ₓf + Jᵀ∇_y f at y*(x), gradients of the weighted f from the clients
    gx = sum(wi * (x @ c["P"] + ys @ c["R"].T + c["p"]) for wi, c in
             zip(w, (prob.client(i) for i in range(prob.clients))))
    gy = sum(wi * (x @ c["R"] + ys @ c["S"] + c["q"]) for wi, c in
             zip(w, (prob.client(i) for i in range(prob.clients))))
    np.testing.assert_allclose(rw.hypergradient(x), gx + gy @ J, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(rw.x_star, -np.linalg.solve(H, g0), rtol=1e-9, atol=1e-10)
    ev_A, ev_H = np.linalg.eigvalsh(avg["A"]), np.linalg.eigvalsh(0.5 * (H + H.T))
    c = rw.constants
    assert c["mu_g_global"] == pytest.approx(ev_A[0], rel=1e-12)
    assert c["L_yy_global"] == pytest.approx(ev_A[-1], rel=1e-12)
    assert c["mu_phi"] == pytest.approx(ev_H[0], rel=1e-9)
    assert c["L_phi"] == pytest.approx(np.abs(ev_H).max(), rel=1e-9)
    # g and ∇g: the weighted sums of the clients' values (no closed form involved)
    g = sum(wi * prob.g_i(i, x, ys) for i, wi in enumerate(w))
    np.testing.assert_allclose(rw.g(x, ys), g, rtol=1e-12, atol=1e-12)
    gxg, gyg = rw.grad_g(x, ys)
    np.testing.assert_allclose(gyg, 0.0, atol=1e-10)  # y*(x) minimizes the weighted g
    assert np.abs(gxg).max() > 0  # not trivially zero


@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_uniform_weights_give_back_the_original_numbers(name):
    prob = INSTANCES[name]
    m = prob.clients
    rw = prob.reweighted(np.full(m, 1.0 / m))
    for k in FIELDS:
        a, b = getattr(prob.closed_form, k), getattr(rw.closed_form, k)
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12, err_msg=k)
    for k, v in prob.constants.items():
        assert rw.constants[k] == pytest.approx(v, rel=1e-12, abs=1e-12), k
    x = np.random.default_rng(3).standard_normal((3, prob.dim_x))
    y = np.random.default_rng(4).standard_normal((3, prob.dim_y))
    for fn in ("y_star", "phi", "hypergradient"):
        np.testing.assert_allclose(getattr(rw, fn)(x), getattr(prob, fn)(x), rtol=1e-12,
                                   atol=1e-12, err_msg=fn)
    np.testing.assert_allclose(rw.g(x, y), prob.g(x, y), rtol=1e-12, atol=1e-12)
    for a, b in zip(rw.grad_g(x, y), prob.grad_g(x, y), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rw.x_star, prob.x_star, rtol=1e-12, atol=1e-12)
    assert rw.config_hash() != prob.config_hash() and type(rw) is type(prob)


def test_all_weight_on_one_client_is_that_client_alone():
    prob = INSTANCES["bilevel_dense"]
    w = np.zeros(prob.clients)
    w[2] = 1.0
    rw = prob.reweighted(w)
    c = prob.client(2)
    x = np.arange(1.0, prob.dim_x + 1)
    np.testing.assert_allclose(rw.y_star(x), np.linalg.solve(c["A"], c["B"] @ x + c["c"]),
                               rtol=1e-12)
    assert rw.constants["sigma_g2"] == pytest.approx(0.0, abs=1e-9)  # no spread around it
    assert prob.constants["sigma_g2"] > 1e-3  # while the clients do differ
    assert rw.constants["mu_g"] == prob.constants["mu_g"]  # per-client constants unchanged


def test_weighted_heterogeneity_is_the_weighted_spread():
    """Two clients with weights (t, 1 − t): the spread of ``∇g_i`` around ``∇g`` is
    ``t(1 − t)‖∇g_1 − ∇g_2‖²``, maximal over the ball at the same point for every ``t``."""
    prob = QuadraticBilevel.random(clients=2, dim_x=2, dim_y=2, seed=8, storage="dense")
    half = prob.reweighted(np.array([0.5, 0.5])).constants["sigma_g2"]
    for t in (0.1, 0.3):
        value = prob.reweighted(np.array([t, 1.0 - t])).constants["sigma_g2"]
        assert value == pytest.approx(half * t * (1 - t) / 0.25, rel=1e-6)


def test_reweighting_replaces_earlier_weights():
    prob = INSTANCES["minimax"]
    w1, w2 = _weights(prob.clients, 1), _weights(prob.clients, 2)
    a = prob.reweighted(w1).reweighted(w2).closed_form
    b = prob.reweighted(w2).closed_form
    for k in FIELDS:
        np.testing.assert_array_equal(getattr(a, k), getattr(b, k))


def test_a_run_measures_stationarity_of_the_weighted_objective():
    prob = QuadraticBilevel.random(clients=4, dim_x=2, dim_y=2, seed=9)
    rw = prob.reweighted(np.array([0.7, 0.1, 0.1, 0.1]))
    trace = bt.run("afbo_sync", rw, rounds=1, replicates=1, seed=0)
    x0 = trace.x[0, 0]
    assert trace.stationarity[0, 0] == pytest.approx(float((rw.hypergradient(x0) ** 2).sum()),
                                                     rel=1e-12)
    assert trace.stationarity[0, 0] != pytest.approx(
        float((prob.hypergradient(x0) ** 2).sum()), rel=1e-3)


@pytest.mark.parametrize("weights, match", [
    (np.full(6, 1 / 6), r"shape \(m,\) = \(7,\)"),
    (np.full((7, 1), 1 / 7), r"shape \(m,\) = \(7,\)"),
    (np.array([0.5, -0.1, 0.2, 0.1, 0.1, 0.1, 0.1]), "negative entry -0.1 at client 1"),
    (np.full(7, 0.2), "summing to 1"),
    (np.array([np.nan] + [1 / 6] * 6), "non-finite"),
])
def test_bad_weights_are_refused_naming_the_parameter(weights, match):
    with pytest.raises(ValueError, match=r"`weights`.*" + match):
        INSTANCES["bilevel_dense"].reweighted(weights)


@pytest.mark.parametrize("weights", [[True] * 7, np.full(7, 1 / 7 + 0j), "uniform"])
def test_weights_of_the_wrong_type_are_refused(weights):
    with pytest.raises(TypeError, match="`weights`"):
        INSTANCES["bilevel_dense"].reweighted(weights)


# ------------------------------------------------------------------------------ saddle point
def _weighted_f(prob, w, x, y):
    return sum(wi * prob.f_i(i, x, y) for i, wi in enumerate(w))


@pytest.mark.parametrize("name", ["minimax", "minimax_fednest"])
@pytest.mark.parametrize("weighted", [False, True])
def test_saddle_has_zero_gradient_and_is_a_saddle(name, weighted):
    prob = INSTANCES[name]
    w = _weights(prob.clients) if weighted else np.full(prob.clients, 1.0 / prob.clients)
    inst = prob.reweighted(w) if weighted else prob
    xs, ys = inst.saddle()
    # ∇f of Σ_i w_i f_i from the client matrices directly
    cl = [prob.client(i) for i in range(prob.clients)]
    gx = sum(wi * (c["P"] @ xs + c["R"] @ ys + c["p"]) for wi, c in zip(w, cl))
    gy = sum(wi * (c["R"].T @ xs + c["S"] @ ys + c["q"]) for wi, c in zip(w, cl))
    np.testing.assert_allclose(gx, 0.0, atol=1e-10)
    np.testing.assert_allclose(gy, 0.0, atol=1e-10)
    # min over x, max over y: f(x*, y) ≤ f(x*, y*) ≤ f(x, y*)
    rng = np.random.default_rng(11)
    dx, dy = rng.standard_normal((8, prob.dim_x)), rng.standard_normal((8, prob.dim_y))
    f0 = _weighted_f(prob, w, xs, ys)
    assert np.all(_weighted_f(prob, w, xs + 0 * dx, ys + dy) < f0)
    assert np.all(_weighted_f(prob, w, xs + dx, ys + 0 * dy) > f0)


def test_fednest_instance_saddle_is_the_origin():
    """FedNest §4.3's instance has ``x* = 0`` (centred ``b_i``) and ``y* = b̄ = 0``."""
    xs, ys = INSTANCES["minimax_fednest"].saddle()
    np.testing.assert_allclose(xs, 0.0, atol=1e-12)
    np.testing.assert_allclose(ys, 0.0, atol=1e-12)


def test_no_unique_saddle_is_an_error():
    prob = QuadraticMinimax.random(clients=4, dim_x=4, dim_y=2, reg=0.0, seed=0)
    with pytest.raises(ValueError, match="no unique saddle point.*`reg` > 0"):
        prob.saddle()


# ---------------------------------------------------------------- per-client hyperparameters
SCHEMA_PC = {"E": SCHEMA["local_iterations"],
             "step": Hyper("per_client_nonnegative", "a client's step"),
             "scale": Hyper("per_client_positive", "a client's scale", optional=True)}


def test_per_client_values_are_scalars_or_one_per_client():
    hp = validate("alg", {"E": np.int64(3), "step": [0.0, 0.5, 2], "scale": None}, SCHEMA_PC,
                  clients=3)
    assert hp["E"] == 3 and type(hp["E"]) is int and hp["scale"] is None
    assert hp["step"].dtype == np.float64 and hp["step"].tolist() == [0.0, 0.5, 2.0]
    assert not hp["step"].flags.writeable
    arr = validate("alg", {"E": [1, 4, 2]}, SCHEMA_PC, clients=3)["E"]
    assert arr.dtype == np.int64 and arr.tolist() == [1, 4, 2]
    assert SCHEMA["local_iterations"].kind == "per_client_count"


@pytest.mark.parametrize("hp, error, match", [
    ({"E": [1, 2]}, ValueError, r"`E` of `alg` must be an integer in \[1, 1e\+09\], or an "
                                r"array of m = 3 .*shape \(2,\)"),
    ({"E": [1, 0, 2]}, ValueError, "m = 3 .*got 0 for client 1"),
    ({"E": [1.0, 2.0, 3.0]}, TypeError, "float64 .not integers"),
    ({"E": 0}, ValueError, "got 0$"),
    ({"E": "3"}, TypeError, "`E` of `alg`"),
    ({"step": [0.0, -1.0, 1.0]}, ValueError, r"`step`.*0 or a real.*m = 3.*client 1"),
    ({"step": [0.0, np.inf, 1.0]}, ValueError, "got inf for client 1"),
    ({"scale": [1.0, 0.0, 1.0]}, ValueError, r"real in \[1e-12, 1e\+12\].*client 1"),
    ({"step": [True, False, True]}, TypeError, "bool"),
    ({"step": [[1.0, 1.0, 1.0]]}, ValueError, r"shape \(1, 3\)"),
])
def test_bad_per_client_values_name_the_parameter_range_and_m(hp, error, match):
    with pytest.raises(error, match=match):
        validate("alg", hp, SCHEMA_PC, clients=3)


def test_an_array_needs_the_number_of_clients():
    with pytest.raises(ValueError, match="needs the number of clients"):
        validate("alg", {"E": [1, 2, 3]}, SCHEMA_PC)


def test_an_algorithm_validates_per_client_hyperparameters_against_its_instance():
    class PerClient(bt.Algorithm):
        name = "test_per_client"
        defaults = {"client_step": 0.1}
        schema = {"client_step": Hyper("per_client_positive", "a client's step")}

    prob = QuadraticBilevel.random(clients=5, dim_x=2, dim_y=2, seed=0)
    alg = PerClient(prob, client_step=np.linspace(0.1, 0.5, 5))
    assert alg.hp["client_step"].shape == (5,)
    assert PerClient(prob).hp["client_step"] == 0.1
    with pytest.raises(ValueError, match=r"`client_step` of `test_per_client`.*m = 5"):
        PerClient(prob, client_step=np.ones(4))
    # AFBO keeps its own declaration of local_iterations (an int, "uniform:a-b" or an array)
    afbo = bt.ALGORITHMS["afbo_sync"]
    assert afbo(prob, local_iterations="uniform:1-3").hp["local_iterations"] == "uniform:1-3"
