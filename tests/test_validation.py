"""Bad input is rejected with ValueError/TypeError whose message names the parameter (and the
allowed values, where there is a list)."""

from __future__ import annotations

import numpy as np
import pytest

from bilevel_theory.problems import (
    Oracle,
    QuadraticBilevel,
    QuadraticCompositional,
    QuadraticMinimax,
    get_backend,
)
from bilevel_theory.problems.validation import check_choice, unknown_names

FACTORIES = {
    "bilevel": QuadraticBilevel.random,
    "minimax": QuadraticMinimax.random,
    "compositional": QuadraticCompositional.random,
}


@pytest.mark.parametrize("kind", list(FACTORIES))
@pytest.mark.parametrize(("kwargs", "error", "name"), [
    (dict(kappa=0.5), ValueError, "kappa"),
    (dict(clients=0), ValueError, "clients"),
    (dict(clients=-3), ValueError, "clients"),
    (dict(clients=2.5), TypeError, "clients"),
    (dict(clients=True), TypeError, "clients"),
    (dict(dim_x=0), ValueError, "dim_x"),
    (dict(dim_y=0), ValueError, "dim_y"),
    (dict(noise=-0.1), ValueError, "noise"),
    (dict(hessian_noise=-1.0), ValueError, "hessian_noise"),
    (dict(heterogeneity=-0.5), ValueError, "heterogeneity"),
    (dict(kappa=float("nan")), ValueError, "kappa"),
    (dict(kappa=float("inf")), ValueError, "kappa"),
    (dict(noise=float("inf")), ValueError, "noise"),
    (dict(heterogeneity=float("nan")), ValueError, "heterogeneity"),
    (dict(hessian_noise=float("nan")), ValueError, "hessian_noise"),
    (dict(radius=0.0), ValueError, "radius"),
    (dict(radius=float("inf")), ValueError, "radius"),
    (dict(seed=-1), ValueError, "seed"),
    (dict(seed=1.5), TypeError, "seed"),
    (dict(kappa="10"), TypeError, "kappa"),
    (dict(storage="sparse"), ValueError, "storage"),
])
def test_bad_knobs(kind, kwargs, error, name):
    base = {} if kind != "compositional" or "kappa" in kwargs else {"kappa": 1.0}
    with pytest.raises(error, match=f"`{name}`"):
        FACTORIES[kind](**{**base, **kwargs})


def test_messages_list_allowed_values():
    with pytest.raises(ValueError, match=r"`storage` must be one of \['auto', 'dense', "
                                         r"'structured'\], got 'dens' \(did you mean 'dense'"):
        QuadraticBilevel.random(storage="dens")
    with pytest.raises(ValueError, match=r"`kappa` must be ≥ 1.0, got 0.5"):
        QuadraticBilevel.random(kappa=0.5)
    with pytest.raises(ValueError, match=r"`backend` must be one of \('numpy', 'cupy'\), "
                                         r"got 'jax'"):
        get_backend("jax")


@pytest.mark.parametrize("cls", [QuadraticBilevel, QuadraticMinimax])
def test_mu_must_be_positive(cls):
    with pytest.raises(ValueError, match="`mu`"):
        cls.random(mu=0.0)


def test_compositional_kappa_is_one():
    with pytest.raises(ValueError, match="`kappa` must be 1"):
        QuadraticCompositional.random(kappa=2.0)


@pytest.mark.parametrize(("kwargs", "error", "name"), [
    (dict(clients=0), ValueError, "clients"), (dict(dim=0), ValueError, "dim"),
    (dict(lam=-1.0), ValueError, "lam"), (dict(spread=float("nan")), ValueError, "spread"),
    (dict(noise=-1.0), ValueError, "noise"), (dict(seed="0"), TypeError, "seed"),
])
def test_bad_fednest_knobs(kwargs, error, name):
    with pytest.raises(error, match=f"`{name}`"):
        QuadraticMinimax.fednest_instance(**kwargs)


# ---------------------------------------------------------------- x / y arguments
@pytest.fixture(scope="module")
def prob():
    return QuadraticBilevel.random(clients=4, dim_x=3, dim_y=2, seed=0)


def bad_vectors(d):
    nan, inf = np.ones(d), np.ones(d)
    nan[0], inf[-1] = np.nan, -np.inf
    return [(nan, ValueError, "finite"), (inf, ValueError, "finite"),
            (np.ones(d + 1), ValueError, f"last dimension {d}"), (np.float64(1.0), ValueError,
                                                                  f"last dimension {d}"),
            ("abc", TypeError, "array of floats"), (np.ones((2, d + 1)), ValueError, "shape")]


def calls_with_x(prob, x):
    y = np.zeros(prob.dim_y)
    return [lambda: prob.y_star(x), lambda: prob.phi(x), lambda: prob.hypergradient(x),
            lambda: prob.surrogate_hypergradient(x, y), lambda: prob.f(x, y),
            lambda: prob.g(x, y), lambda: prob.f_i(0, x, y), lambda: prob.g_i(0, x, y),
            lambda: prob.grad_g(x, y)]


def calls_with_y(prob, y):
    x = np.zeros(prob.dim_x)
    return [lambda: prob.surrogate_hypergradient(x, y), lambda: prob.f(x, y),
            lambda: prob.g(x, y), lambda: prob.f_i(1, x, y), lambda: prob.g_i(1, x, y),
            lambda: prob.grad_g(x, y)]


def test_bad_x(prob):
    for value, error, text in bad_vectors(prob.dim_x):
        for call in calls_with_x(prob, value):
            with pytest.raises(error) as err:
                call()
            assert "`x`" in str(err.value) and text in str(err.value)


def test_bad_y(prob):
    for value, error, text in bad_vectors(prob.dim_y):
        for call in calls_with_y(prob, value):
            with pytest.raises(error) as err:
                call()
            assert "`y`" in str(err.value) and text in str(err.value)


def test_mismatched_batch_shapes(prob):
    x, y = np.zeros((3, prob.dim_x)), np.zeros((4, prob.dim_y))
    for call in (lambda: prob.surrogate_hypergradient(x, y), lambda: prob.f(x, y),
                 lambda: prob.g(x, y), lambda: prob.f_i(0, x, y), lambda: prob.g_i(0, x, y),
                 lambda: prob.grad_g(x, y)):
        with pytest.raises(ValueError, match=r"`x` \(3, 3\) and `y` \(4, 2\)"):
            call()


def test_bad_client_index(prob):
    for i, error in ((4, ValueError), (-1, ValueError), (1.0, TypeError)):
        with pytest.raises(error, match="`i`"):
            prob.client(i)
        with pytest.raises(error, match="`i`"):
            prob.g_i(i, np.zeros(3), np.zeros(2))


# ---------------------------------------------------------------- oracle and backend
def test_oracle_inputs(prob):
    with pytest.raises(TypeError, match="`problem`"):
        Oracle("not a problem")
    with pytest.raises(ValueError, match="`backend`"):
        Oracle(prob, "jax")
    o = Oracle(prob, seed=0)
    with pytest.raises(ValueError, match="`sampled_clients` must be ≤ clients \\(4\\)"):
        o.sample_clients(2, 5, replace=False)
    with pytest.raises(ValueError, match="`sampled_clients`"):
        o.sample_clients(2, 0)
    with pytest.raises(ValueError, match="`replicates`"):
        o.sample_clients(0, 2)
    with pytest.raises(TypeError, match="`replace`"):
        o.sample_clients(2, 2, replace="no")


@pytest.mark.parametrize("name", ["jax", "torch", "", None, 3])
def test_unknown_backend(name):
    with pytest.raises(ValueError, match="`backend` must be one of"):
        get_backend(name)


def test_check_choice_and_unknown_names():
    with pytest.raises(ValueError, match=r"`kind` must be one of \['a', 'b'\], got 'c'"):
        check_choice("kind", "c", ["a", "b"])
    with pytest.raises(ValueError, match=r"unknown hyperparameter `rouns`.*did you mean 'rounds'"):
        unknown_names("hyperparameter", ["rouns"], ["rounds", "seed"])
    unknown_names("hyperparameter", ["seed"], ["rounds", "seed"])  # accepted: no error
