"""Bad input and faults: every registered algorithm's hyperparameters fed extremes.

Property (hypothesis): for every algorithm of ``bilevel_theory.ALGORITHMS`` and any of its
hyperparameters ``hp``, ``run(name, prob, rounds=2, replicates=2, **{hp: value})`` with an
extreme ``value`` (0, negatives, 1e-300, 1e300, nan, ±inf, None, bools, complex, numpy scalars
and 0-d arrays, strings, huge ints, wrong-length vectors, and schedules returning None, a
string, an array, a negative number, NaN, or taking no argument) either

* returns a trace in which every replicate is finite or flagged in ``trace.diverged``, or
* raises ``ValueError``/``TypeError`` whose message names the hyperparameter (`` `hp` ``), or
  is the work/memory budget's refusal (the estimate, before any work);

never another exception type and never a hang: each call runs in this process on a small
instance (4 clients, dimensions 3) under a work budget of ``max_work = 1e9`` operations (about
a second of one core; the library's :func:`~bilevel_theory.hyperparameters.check_budget`
refuses anything larger before it starts).

Example counts: :data:`EXAMPLES` (100) drawn examples per algorithm (14 algorithms, 1400 calls:
about 240 run, 1150 are refused naming the hyperparameter, 10 are refused by the budget;
hypothesis derandomized, no example database), about 12 s on one core; the explicit
regression tests below about 5 s.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bilevel_theory as bt
from bilevel_theory.problems import QuadraticBilevel, QuadraticCompositional, QuadraticMinimax
from bilevel_theory.problems.quadratic import shared

EXAMPLES = 100
MAX_WORK = 1e9
#: seconds one fuzzed call may take before it counts as a hang (the budget should stop it first)
HANG = 20.0


def instance(kind: str, algorithm: str = "", **kw):
    size = dict(clients=4, dim_x=3, dim_y=3, noise=0.1, seed=1)
    size.update(kw)
    if kind == "bilevel":
        prob = QuadraticBilevel.random(kappa=size.pop("kappa", 3.0), **size)
        if algorithm == "fedsvrg":  # its upper level must not depend on y
            m, dx, dy = prob.clients, prob.dim_x, prob.dim_y
            prob = dataclasses.replace(prob, R=shared(np.zeros((dx, dy)), m),
                                       S=shared(np.zeros((dy, dy)), m), q=np.zeros((m, dy)))
        return prob
    if kind == "minimax":
        return QuadraticMinimax.random(kappa=size.pop("kappa", 3.0), **size)
    return QuadraticCompositional.random(kappa=1.0, **size)


ALGORITHMS = sorted(bt.ALGORITHMS)
PROBLEMS = {name: instance(bt.ALGORITHMS[name].kinds[0], name) for name in ALGORITHMS}


def _no_argument():
    return 1.0


EXTREMES = [
    0, 0.0, -0.0, -1, -1.0, 1e-300, -1e-300, 1e300, -1e300, math.nan, math.inf, -math.inf,
    None, True, False, 1j, 1 + 0j, 10**20, -(10**20), 2**63, 10**9 + 1,
    np.float32(0.5), np.float64(2.0), np.float64(math.nan), np.int64(3), np.uint64(5),
    np.int8(-1), np.bool_(True), np.array(1.0), np.array(2), np.array([1.0]), np.ones(3),
    np.ones(4), np.array(["a"]), "abc", "", "none", "fixed", "random", b"1", [1.0, 2.0, 3.0],
    [math.nan] * 3, [1e300] * 3, (), {}, object(), 0.5, 3, 1e-12, 1e12,
    lambda k: None, lambda k: "abc", lambda k: np.ones(3), lambda k: -1.0, lambda k: math.nan,
    lambda k: 0.1, lambda k: 1.0 / (k + 1), lambda k: 1e300, lambda k: 1j, lambda k: True,
    lambda k: 1.0 - k, _no_argument, print,
]

VALUES = st.one_of(
    st.sampled_from(EXTREMES),
    st.integers(min_value=-(10**25), max_value=10**25),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=1e-14, max_value=1e14, allow_nan=False),
    st.integers(min_value=0, max_value=50),
    st.text(max_size=5),
)


def _budget_refusal(message: str) -> bool:
    return ("floating-point operations" in message and "above the limit" in message) or (
        "GiB" in message and "available" in message)


def check_outcome(name: str, prob, hp: str, value) -> str:
    """Run once and check the contract; returns ``"ran"``, ``"refused"`` or ``"budget"``."""
    start = time.perf_counter()
    try:
        trace = bt.run(name, prob, rounds=2, replicates=2, seed=0, max_work=MAX_WORK,
                       **{hp: value})
    except (ValueError, TypeError) as err:
        message = str(err)
        if _budget_refusal(message):
            return "budget"
        assert f"`{hp}`" in message, (
            f"{name}: {hp}={value!r} refused with {type(err).__name__} not naming `{hp}`: "
            f"{message}")
        return "refused"
    except Exception as err:  # noqa: BLE001 - any other type is the failure under test
        pytest.fail(f"{name}: {hp}={value!r} raised {type(err).__name__}: {err}")
    finally:
        elapsed = time.perf_counter() - start
        assert elapsed < HANG, f"{name}: {hp}={value!r} took {elapsed:.1f} s"
    assert trace.diverged.shape == (2,)
    finite = np.isfinite(trace.stationarity).all(axis=1)
    if trace.inner_error is not None:
        finite &= np.isfinite(trace.inner_error).all(axis=1)
    unflagged = ~finite & ~trace.diverged
    assert not unflagged.any(), (
        f"{name}: {hp}={value!r}: non-finite replicates {np.flatnonzero(unflagged)} not "
        "flagged in trace.diverged")
    return "ran"


@pytest.mark.parametrize("name", ALGORITHMS)
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_hyperparameter_extremes(name, data):
    hp = data.draw(st.sampled_from(sorted(bt.ALGORITHMS[name].defaults)), label="hp")
    value = data.draw(VALUES, label="value")
    check_outcome(name, PROBLEMS[name], hp, value)


@pytest.mark.parametrize("name", ALGORITHMS)
def test_every_hyperparameter_rejects_none_or_accepts_it_as_derived(name):
    """``None`` for every hyperparameter: refused naming it, or derived (optional ones)."""
    for hp in sorted(bt.ALGORITHMS[name].defaults):
        check_outcome(name, PROBLEMS[name], hp, None)


# ------------------------------------------------------------------------------ regressions

def _refused(name, prob, match, exc=(ValueError, TypeError), rounds=2, **kw):
    start = time.perf_counter()
    with pytest.raises(exc, match=match):
        bt.run(name, prob, rounds=rounds, replicates=2, seed=0, **kw)
    return time.perf_counter() - start


BILEVEL = instance("bilevel")


@pytest.mark.parametrize("value", [-1.0, math.nan, math.inf, True, 1j, np.array(1.0)],
                         ids=["negative", "nan", "inf", "bool", "complex", "0d-array"])
def test_fedmbo_neumann_scale_refused(value):
    _refused("fedmbo", BILEVEL, "`neumann_scale`", neumann_scale=value)


@pytest.mark.parametrize("hp", ["inner_steps", "local_steps", "period", "sampled_clients"])
def test_required_counts_refuse_none(hp):
    names = [n for n in ALGORITHMS if hp in bt.ALGORITHMS[n].defaults]
    assert names, hp
    for name in names:
        _refused(name, PROBLEMS[name], f"`{hp}`", exc=TypeError, **{hp: None})


@pytest.mark.parametrize(("name", "hp"), [("fedmbo", "inner_steps"), ("fedmbo", "neumann_steps"),
                                          ("fednest", "local_steps"), ("memfbo", "local_steps"),
                                          ("localbsgvrm", "minibatch")])
def test_huge_counts_refused_at_once(name, hp):
    seconds = _refused(name, PROBLEMS[name], f"`{hp}`", exc=ValueError, **{hp: 10**20})
    assert seconds < 1.0


def test_localbsgm_tiny_theta_refused_by_work_budget_quickly():
    # θ = 1e-8 makes the derived series length ~ log(…)/θ: the default budget refuses it
    seconds = _refused("localbsgm", PROBLEMS["localbsgm"], "floating-point operations",
                       exc=ValueError, theta=1e-8)
    assert seconds < 1.0


def test_localbsgm_subnormal_steps_refused():
    _refused("localbsgm", PROBLEMS["localbsgm"], "`theta`", theta=1e-300, rho2=1e-300)


def test_localbsgvrm_huge_eta_refused():
    _refused("localbsgvrm", PROBLEMS["localbsgvrm"], "`eta`", exc=ValueError, eta=1e300)


def test_localbsgvrm_momentum_weights_checked_before_work():
    # eq. 3.8 needs αη² < 1 and βη² < 1: a constant η breaking it is refused up front
    _refused("localbsgvrm", PROBLEMS["localbsgvrm"], "`eta`", exc=ValueError, rounds=0, eta=1)


@pytest.mark.parametrize(("schedule", "exc"), [(lambda k: -1.0, ValueError),
                                               (_no_argument, TypeError),
                                               (lambda k: None, TypeError)],
                         ids=["negative", "no-argument", "returns-None"])
@pytest.mark.parametrize("name", [n for n in ALGORITHMS
                                  if "outer_step" in bt.ALGORITHMS[n].defaults])
def test_bad_outer_step_schedules(name, schedule, exc):
    _refused(name, PROBLEMS[name], "`outer_step`", exc=exc, outer_step=schedule)


@pytest.mark.parametrize("value", ["", "abc", lambda k: None, [math.nan] * 3, [1e300] * 3,
                                   np.ones(4)], ids=["empty", "text", "callable", "nan",
                                                     "overflow", "wrong-length"])
def test_memfbo_bad_z0_names_z0(value):
    _refused("memfbo", PROBLEMS["memfbo"], "`z0`", z0=value)


def test_x0_string_and_nan_name_x0():
    _refused("fedmbo", BILEVEL, "`x0`", exc=TypeError, x0="abc")
    _refused("fedmbo", BILEVEL, "`x0`", exc=ValueError, x0=[math.nan] * BILEVEL.dim_x)


def test_fedavg_s_overflowing_start_refused_and_zero_rounds_run():
    prob = PROBLEMS["fedavg_s"]
    _refused("fedavg_s", prob, "`x0`", exc=ValueError, x0=[1e300] * prob.dim_x)
    trace = bt.run("fedavg_s", prob, rounds=0, replicates=2, seed=0)
    assert trace.rounds == 0 and trace.x.shape == (2, 1, prob.dim_x)
    assert np.isfinite(trace.stationarity).all() and not trace.diverged.any()
    assert trace.ledger.totals()["rounds"] == 0.0


def test_numpy_integer_dimensions_run():
    prob = QuadraticBilevel.random(clients=4, dim_x=np.int64(3), dim_y=np.uint64(5), kappa=3.0,
                                   seed=1)
    assert (prob.dim_x, prob.dim_y) == (3, 5)
    trace = bt.run("fedmbo", prob, rounds=2, replicates=2, seed=0)
    assert trace.x.shape == (2, 3, 3) and trace.y.shape == (2, 3, 5)
    assert np.isfinite(trace.stationarity).all()


def test_ill_conditioned_default_neumann_steps_refused_with_estimate():
    prob = QuadraticBilevel.random(clients=4, dim_x=3, dim_y=3, kappa=1e6, seed=1)
    start = time.perf_counter()
    with pytest.raises(ValueError) as info:
        bt.run("fedmbo", prob, rounds=100, replicates=2, seed=0)
    assert time.perf_counter() - start < 1.0  # refused, not started
    message = str(info.value)
    assert "floating-point operations" in message and "neumann_steps=" in message
    assert "derived from the instance" in message


def test_afbo_local_step_zero_is_the_documented_minibatch():
    # local_step = 0: the E_i gradients are drawn at the same y (a minibatch), as documented
    # in bilevel_theory/afbo.py; a negative step is refused naming it
    prob = PROBLEMS["afbo"]
    trace = bt.run("afbo", prob, rounds=2, replicates=2, seed=0, local_step=0.0,
                   local_iterations=3)
    assert np.isfinite(trace.stationarity).all()
    _refused("afbo", prob, "`local_step`", local_step=-0.1)
