"""Bad input is rejected with ValueError/TypeError whose message names the parameter (and the
allowed values, where there is a list)."""

from __future__ import annotations

from fractions import Fraction

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


# ----------------------------------------------- beyond the float range, non-real arrays


@pytest.mark.parametrize("value", [10**400, -(10**400), Fraction(10**400), Fraction(1, 3) * 10**400])
def test_numbers_beyond_the_float_range_name_the_knob_and_its_range(value):
    with pytest.raises(ValueError, match=r"`kappa` must be a finite real number in \[1, 1e\+06\]"
                                         r".*beyond the float range"):
        QuadraticBilevel.random(clients=4, dim_x=2, dim_y=2, kappa=value)


BAD_ARRAYS = [
    (np.array([1 + 1j, 2.0]), TypeError, "array of complex"),
    (np.array(["1", "2"]), TypeError, "array of string"),
    (np.array([True, False]), TypeError, "array of bool"),
    ([1.0, "2"], TypeError, "array of string"),
    ([10**400, 1], ValueError, "beyond the float range"),
    ([1, None], TypeError, "got an entry None"),
    ("12", TypeError, "(got a string '12'|got '12')"),
]


@pytest.mark.parametrize(("value", "error", "fragment"), BAD_ARRAYS)
def test_instance_methods_take_real_arrays_only(prob, value, error, fragment):
    with pytest.raises(error, match=f"`x` must .*{fragment}"):
        prob.f(value, np.zeros(prob.dim_y))
    assert np.isfinite(prob.f(np.ones(prob.dim_x, dtype=int), np.zeros(prob.dim_y)))  # ints: ok


@pytest.mark.parametrize(("value", "error", "fragment"), BAD_ARRAYS)
def test_starting_points_take_real_arrays_only(value, error, fragment):
    from bilevel_theory import run  # noqa: PLC0415

    p = QuadraticBilevel.random(clients=4, dim_x=2, dim_y=2, kappa=2.0, seed=0)
    with pytest.raises(error, match=f"`x0` must .*{fragment}"):
        run("fednest", p, rounds=2, replicates=1, x0=value)


@pytest.mark.parametrize(("max_work", "error"), [
    (float("nan"), ValueError), (-1.0, ValueError), (0, ValueError), ("1e3", TypeError),
    (True, TypeError)])
def test_max_work_must_be_a_positive_number_or_none(max_work, error):
    from bilevel_theory import run  # noqa: PLC0415

    p = QuadraticBilevel.random(clients=4, dim_x=2, dim_y=2, kappa=2.0, seed=0)
    with pytest.raises(error, match=r"`max_work` must be None \(no limit\) or a real number > 0"):
        run("fednest", p, rounds=10**9, replicates=1, max_work=max_work)


@pytest.mark.parametrize(("hp", "fragment"), [
    (dict(local_iterations="uniform:1-1000000000"), "local_iterations up to 1000000000"),
    (dict(local_iterations=np.full(4, 10**9)), "local_iterations up to 1000000000"),
    (dict(local_iterations="uniform:1-99999999999999999999"), "≤ 1e\\+09"),
    (dict(local_iterations=10**12), "`local_iterations` must be ≤ 1000000000"),
    (dict(delay="bounded:99999999999999999999"), "`max_delay` must be ≤ 1000000000"),
    (dict(delay="heavy:1.5:99999999999999999999"), "`cap` must be ≤ 1000000000"),
    (dict(delay="stragglers:0.5:99999999999999999999"), "`slowdown` must be ≤ 1000000000"),
])
def test_the_work_budget_sees_spec_and_array_counts(hp, fragment):
    from bilevel_theory import run  # noqa: PLC0415

    p = QuadraticBilevel.random(clients=4, dim_x=2, dim_y=2, kappa=2.0, seed=0)
    with pytest.raises(ValueError, match=fragment):
        run("afbo", p, rounds=100, replicates=1, **hp)


@pytest.mark.parametrize("bad", [-0.1, float("nan"), 0.0, float("inf")])
@pytest.mark.parametrize("name", ["fednest", "fedmbo", "afbo"])
def test_a_schedule_is_checked_at_every_round_not_only_the_first(name, bad):
    """A callable step that turns to an ascent (or non-finite) step after round 0 is refused
    at that round, naming the hyperparameter, instead of running silently."""
    import bilevel_theory as bt
    from bilevel_theory.problems import QuadraticBilevel

    p = QuadraticBilevel.random(clients=4, dim_x=2, dim_y=2, seed=0)
    with pytest.raises(ValueError, match=r"`outer_step` must give a positive finite step at "
                                         r"every round; at round 2 it gave"):
        bt.run(name, p, rounds=5, replicates=1, seed=0,
               outer_step=lambda k: 0.1 if k < 2 else bad)
