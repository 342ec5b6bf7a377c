"""Property-based fuzz of the problem constructors: every call either builds an instance whose
constants and closed forms are finite, or raises ``ValueError``/``TypeError`` naming the
parameter; never a raw error from deep inside numpy, an overflow or a silent NaN.

Example counts: 80 per constructor (``max_examples``), dimensions and clients kept small among
the valid values so that the suite stays fast; extremes are drawn from outside every range."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bilevel_theory.problems import QuadraticBilevel, QuadraticCompositional, QuadraticMinimax
from bilevel_theory.problems.knobs import KNOBS

EXAMPLES = 80
WRONG = st.sampled_from([None, "abc", 1j, float("nan"), float("inf"), -float("inf"), [1.0],
                         np.array([1.0, 2.0]), True])
NUMPY = st.sampled_from([np.int64, np.uint64, np.float64, np.float32, np.int32])


def knob(name: str, small_high: float | None = None):
    """Values for a knob: valid (small where the cost grows), numpy scalars of valid values,
    values just outside and far outside the range, and wrong types."""
    k = KNOBS[name]
    high = small_high if small_high is not None else k.high
    valid = (st.integers(int(k.low), int(high)) if k.integer else
             st.floats(k.low, high, exclude_min=k.low_open, allow_nan=False))
    outside = st.sampled_from([k.low - 1, -1e300, 1e300, k.high * 10 + 1, 10**20, -(10**20)])
    as_numpy = st.tuples(NUMPY, valid).map(lambda tv: _cast(*tv))
    return st.one_of(valid, valid, as_numpy, outside, WRONG)


def _cast(t, v):
    try:
        return t(v)
    except (OverflowError, ValueError):
        return v


def _check(build, kwargs):
    try:
        prob = build(**kwargs)
    except (ValueError, TypeError) as err:
        message = str(err)
        assert "`" in message and any(f"`{name}`" in message for name in kwargs), message
        return
    consts = prob.constants
    assert all(np.isfinite(v) for v in consts.values()), consts
    x = np.linspace(-1, 1, prob.dim_x)
    for value in (prob.y_star(x), prob.hypergradient(x), prob.phi(x)):
        assert np.all(np.isfinite(value))


COMMON = dict(
    clients=knob("clients", 12), kappa=knob("kappa"), heterogeneity=knob("heterogeneity"),
    noise=knob("noise"), seed=knob("seed"), radius=knob("radius"),
)
SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(dim_x=knob("dim_x", 5), dim_y=knob("dim_y", 5), mu=knob("mu"),
       coupling=knob("coupling"), upper_mu=knob("upper_mu"), **COMMON)
def test_bilevel_constructor(**kwargs):
    _check(QuadraticBilevel.random, kwargs)


@SETTINGS
@given(dim_x=knob("dim_x", 5), dim_y=knob("dim_y", 5), mu=knob("mu"),
       coupling=knob("coupling"), reg=knob("reg"), **COMMON)
def test_minimax_constructor(**kwargs):
    _check(QuadraticMinimax.random, kwargs)


@SETTINGS
@given(dim_x=knob("dim_x", 5), dim_y=knob("dim_y", 5), upper_mu=knob("upper_mu"),
       clients=knob("clients", 12), heterogeneity=knob("heterogeneity"), noise=knob("noise"),
       seed=knob("seed"), radius=knob("radius"))
def test_compositional_constructor(**kwargs):
    _check(lambda **kw: QuadraticCompositional.random(kappa=1.0, **kw), kwargs)


@SETTINGS
@given(clients=knob("clients", 50), dim=knob("dim", 6), lam=knob("lam"),
       spread=knob("spread"), noise=knob("noise"), seed=knob("seed"), radius=knob("radius"))
def test_fednest_instance(**kwargs):
    _check(QuadraticMinimax.fednest_instance, kwargs)


@pytest.mark.parametrize("kwargs, name", [
    (dict(noise=1e300), "noise"), (dict(hessian_noise=1e300), "hessian_noise"),
    (dict(heterogeneity=1e300), "heterogeneity"), (dict(kappa=1e300), "kappa"),
    (dict(radius=1e-300), "radius"), (dict(kappa=1e16), "kappa"),
    (dict(clients=10**8), "clients"), (dict(dim_x=10000), "dim_x"),
])
def test_reproducers_from_the_fuzz_review(kwargs, name):
    with pytest.raises(ValueError, match=f"`{name}`"):
        QuadraticBilevel.random(**kwargs)


def test_numpy_integer_dimensions_are_accepted():
    prob = QuadraticBilevel.random(dim_x=np.int64(3), dim_y=np.uint64(5))
    assert (prob.dim_x, prob.dim_y) == (3, 5)
    assert type(prob.dim_x) is int


def test_an_instance_too_large_for_memory_is_refused_before_allocating(monkeypatch):
    from bilevel_theory.problems import knobs

    monkeypatch.setattr(knobs, "available_memory", lambda: 1e8)
    with pytest.raises(ValueError, match="`clients`=1000000 needs about"):
        QuadraticBilevel.random(clients=10**6, dim_x=10, dim_y=10)
