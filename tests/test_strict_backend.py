"""The CuPy code path on the CPU: every algorithm and a sample of claims on a strict backend.

``strict_backend`` (tests only) registers ``backend="strict"``, whose arrays behave like CuPy
arrays that refuse every implicit device → host conversion (``np.asarray``, ``float``,
``bool``, ``int``, ``.item()``, a host array mixed into a device operation): library code
must bring values to the host through ``backend.to_numpy``.  Being a wrapper rather than an
``np.ndarray``, a strict array also sends the library down its device branches (the plain
vectorized expressions, not the fused host kernels), so a run checks the CuPy path's
arithmetic against the numpy path: its generator is numpy's, seeded like the numpy backend,
so wherever both paths draw the same way the numbers agree to round-off.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest
import strict_backend as sb
from array_api_compat import array_namespace

import bilevel_theory as bt
from bilevel_theory.problems import (
    Oracle,
    QuadraticBilevel,
    QuadraticCompositional,
    QuadraticMinimax,
    get_backend,
)
from bilevel_theory.problems.oracle import with_noise_distribution
from bilevel_theory.problems.quadratic import shared
from bilevel_theory.trace import LEDGER_FIELDS
from bilevel_theory.verify import CLAIMS

STRICT = get_backend(sb.NAME)


# ------------------------------------------------------------------------ the strict array

REFUSED = {
    "np.asarray": lambda a, xp: np.asarray(a),
    "np.array": lambda a, xp: np.array(a),
    "float": lambda a, xp: float(a[0]),
    "int": lambda a, xp: int(a[0]),
    "bool": lambda a, xp: bool(xp.all(a > 0)),
    "if": lambda a, xp: 1 if a[0] > 0 else 0,
    "operator.index": lambda a, xp: operator.index(xp.astype(a, xp.int64)[0]),
    "item": lambda a, xp: a[0].item(),
    "tolist": lambda a, xp: a.tolist(),
    "host + device": lambda a, xp: np.ones(3) + a,
    "device + host": lambda a, xp: a + np.ones(3),
    "host[device mask]": lambda a, xp: np.ones(3)[a > 1],
    "xp function on a host array": lambda a, xp: xp.where(a > 1, np.zeros(3), a),
    "np function mixing host and device": lambda a, xp: np.stack([a, np.ones(3)]),
}


@pytest.mark.parametrize("what", sorted(REFUSED))
def test_strict_array_refuses_implicit_host_conversion(what):
    a = STRICT.asarray([1.0, 2.0, 3.0])
    with pytest.raises(TypeError):
        REFUSED[what](a, STRICT.xp)


def test_strict_array_allows_what_cupy_allows():
    xp = STRICT.xp
    a = STRICT.asarray(np.arange(4.0))  # host → device: allowed
    assert not isinstance(a, np.ndarray) and array_namespace(a) is xp
    b = np.sqrt(a) + 2.0 * a @ a  # numpy ufuncs dispatch to the device, results stay there
    assert isinstance(b, sb.StrictArray) and isinstance(np.sum(a), sb.StrictArray)
    a[a > 1] = np.array([7.0, 8.0])  # host values written into a device array: allowed
    before = sb.SYNCS["count"]
    host = STRICT.to_numpy(a)  # the sanctioned path, counted as one synchronisation
    assert isinstance(host, np.ndarray) and host.tolist() == [0.0, 1.0, 7.0, 8.0]
    assert sb.SYNCS["count"] == before + 1
    assert not hasattr(STRICT.rng(0), "bytes")  # a CuPy Generator has no raw bytes


# ------------------------------------------------------------------------ every algorithm

def instance(kind: str, algorithm: str, storage: str = "dense"):
    """A small noisy instance of ``kind`` (for ``fedsvrg`` an upper level free of ``y``)."""
    size = dict(clients=6, dim_x=3, dim_y=4, noise=0.1, seed=1)
    if kind == "bilevel":
        prob = QuadraticBilevel.random(kappa=3.0, storage=storage, **size)
        if algorithm == "fedsvrg":
            m, dx, dy = prob.clients, prob.dim_x, prob.dim_y
            import dataclasses  # noqa: PLC0415

            prob = dataclasses.replace(prob, R=shared(np.zeros((dx, dy)), m),
                                       S=shared(np.zeros((dy, dy)), m), q=np.zeros((m, dy)))
        return prob
    if kind == "minimax":
        return QuadraticMinimax.random(kappa=3.0, **size)
    return QuadraticCompositional.random(kappa=1.0, **size)


CASES = [pytest.param(name, kind, storage, id=f"{name}-{kind}-{storage}")
         for name in sorted(bt.ALGORITHMS) for kind in bt.ALGORITHMS[name].kinds
         for storage in (("dense", "structured") if kind == "bilevel" else ("dense",))]


def _assert_same_trace(host, dev):
    np.testing.assert_allclose(dev.x, host.x, rtol=1e-9, atol=1e-12)
    if host.y is not None:
        np.testing.assert_allclose(dev.y, host.y, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(dev.stationarity, host.stationarity, rtol=1e-8, atol=1e-12)
    for f in LEDGER_FIELDS:
        np.testing.assert_allclose(getattr(dev.ledger, f), getattr(host.ledger, f),
                                   rtol=1e-12, err_msg=f"ledger.{f}")
    np.testing.assert_array_equal(dev.diverged, host.diverged)
    assert sorted(dev.extras) == sorted(host.extras)
    for k in host.extras:
        np.testing.assert_allclose(dev.extras[k], host.extras[k], rtol=1e-9, atol=1e-12,
                                   err_msg=f"extras[{k!r}]")


@pytest.mark.parametrize(("name", "kind", "storage"), CASES)
def test_algorithm_runs_on_the_strict_backend_with_the_numpy_numbers(name, kind, storage):
    prob = instance(kind, name, storage)
    host = bt.run(name, prob, rounds=4, replicates=3, seed=5, backend="numpy")
    before = sb.SYNCS["count"]
    dev = bt.run(name, prob, rounds=4, replicates=3, seed=5, backend=sb.NAME)
    assert dev.backend == sb.NAME and sb.SYNCS["count"] > before
    _assert_same_trace(host, dev)


@pytest.mark.parametrize(("name", "kind"), [c.values[:2] for c in CASES if c.values[2] == "dense"],
                         ids=[c.id.rsplit("-", 1)[0] for c in CASES if c.values[2] == "dense"])
def test_synchronisations_do_not_grow_with_replicates(name, kind):
    """The explicit device → host transfers of a run (ledger counts, control flow) are per
    round or per step, never per replicate: the same count for 2 and for 7 replicates."""
    prob = instance(kind, name)
    counts = []
    for replicates in (2, 7):
        before = sb.SYNCS["count"]
        bt.run(name, prob, rounds=2, replicates=replicates, seed=3, backend=sb.NAME)
        counts.append(sb.SYNCS["count"] - before)
    assert counts[0] == counts[1], f"{name}: {counts[0]} syncs with 2 replicates, {counts[1]} with 7"


#: options that take their own device branches (delay processes, per-client local iterations,
#: Neumann truncations, stale weighting, sampling schemes)
VARIANTS = [
    ("afbo", dict(delay="sync")),
    ("afbo", dict(delay="heavy:1.5:20", inner_delay="stragglers:0.25:3")),
    ("afbo", dict(local_iterations="uniform:1-3", aligned=False, stale_weighting="age")),
    ("afbo", dict(local_iterations=np.array([1, 2, 3, 1, 2, 3]), truncation="random")),
    ("afbo", dict(truncation="series")),
    ("fedmbo", dict(replace=False, sampled_clients=2)),
    ("fednest", dict(replace=True, sampled_clients=3)),
    ("memfbo", dict(sampled_clients=2)),
]


@pytest.mark.parametrize(("name", "hp"), VARIANTS,
                         ids=[f"{n}-{'-'.join(map(str, h))}" for n, h in VARIANTS])
def test_algorithm_options_on_the_strict_backend(name, hp):
    prob = instance("bilevel", name)
    host = bt.run(name, prob, rounds=4, replicates=3, seed=2, backend="numpy", **hp)
    _assert_same_trace(host, bt.run(name, prob, rounds=4, replicates=3, seed=2,
                                    backend=sb.NAME, **hp))


@pytest.mark.parametrize("truncation", ["random", "series"])
def test_afbo_exact_chains_on_the_strict_backend(truncation):
    """Without Hessian noise APHE's chains share one trajectory (``afbo._shared_trajectory``):
    the device path takes no implicit transfer and gives the numpy numbers and ledger."""
    prob = QuadraticBilevel.random(clients=6, dim_x=3, dim_y=4, kappa=3.0, noise=0.0, seed=1)
    hp = dict(truncation=truncation, neumann_steps=5)
    host = bt.run("afbo", prob, rounds=4, replicates=3, seed=2, backend="numpy", **hp)
    _assert_same_trace(host, bt.run("afbo", prob, rounds=4, replicates=3, seed=2,
                                    backend=sb.NAME, **hp))


@pytest.mark.parametrize("n", [2, 5])
def test_sampling_without_replacement_on_the_device_path(n):
    """Both without-replacement samplers (argsort of keys for ``n ≥ m/8``, rejection of
    duplicates below) on the device path: the numpy path's subsets, each row distinct."""
    prob = QuadraticBilevel.random(clients=24, dim_x=2, dim_y=2, seed=3)
    host = Oracle(prob, "numpy", seed=7).sample_clients(50, n, replace=False)
    dev = STRICT.to_numpy(Oracle(prob, sb.NAME, seed=7).sample_clients(50, n, replace=False))
    np.testing.assert_array_equal(dev, host)
    assert all(len(set(row)) == n for row in dev.tolist())


@pytest.mark.parametrize("dist", ["uniform", "rademacher"])
def test_noise_distributions_on_the_device_path(dist):
    """Uniform noise draws as on numpy; Rademacher takes the device branch (no raw bytes):
    a different stream, so it is checked in law (``±scale``, mean ≈ 0) instead."""
    prob = with_noise_distribution(instance("bilevel", "fedmbo"), dist)
    if dist == "uniform":
        _assert_same_trace(bt.run("fedmbo", prob, rounds=3, replicates=2, seed=1),
                           bt.run("fedmbo", prob, rounds=3, replicates=2, seed=1,
                                  backend=sb.NAME))
        return
    oracle = Oracle(prob, sb.NAME, seed=2)
    z = STRICT.to_numpy(oracle._scaled_draws((4000, 8), 0.5))
    assert set(np.unique(z).tolist()) == {-0.5, 0.5}
    assert abs(z.mean()) < 4 * 0.5 / np.sqrt(z.size)
    bt.run("fedmbo", prob, rounds=3, replicates=2, seed=1, backend=sb.NAME)


# ------------------------------------------------------------------------ claims

#: one claim per paper whose first smoke point runs its algorithms in well under a second
CLAIM_SAMPLE = ("afbo.strongly_convex_rate", "fedmbo.stationarity_vs_K", "fednest.bilevel_rate",
                "gao.localbsgvrm_heterogeneous_floor", "lfednest.bias_under_heterogeneity",
                "memfbo.rounds_partial_participation")


def _claim_measures(cid: str, backend: str) -> dict:
    claim = CLAIMS[cid]
    return claim.measure_for("smoke")(claim.grid["smoke"][0], 2, 0, backend)


def _assert_same_measures(cid, host, dev):
    assert sorted(dev) == sorted(host), cid
    for key, value in host.items():
        np.testing.assert_allclose(np.asarray(dev[key], dtype=float),
                                   np.asarray(value, dtype=float), rtol=1e-9, atol=1e-12,
                                   equal_nan=True, err_msg=f"{cid}: {key}")


@pytest.mark.parametrize("cid", CLAIM_SAMPLE)
def test_claim_measure_on_the_strict_backend(cid):
    host = _claim_measures(cid, "numpy")
    before = sb.SYNCS["count"]
    dev = _claim_measures(cid, sb.NAME)
    assert sb.SYNCS["count"] > before, f"{cid}: the measure never ran on the strict backend"
    _assert_same_measures(cid, host, dev)


def test_claim_sample_covers_every_paper():
    assert {cid.split(".")[0] for cid in CLAIM_SAMPLE} == {cid.split(".")[0] for cid in CLAIMS}


@pytest.mark.slow
@pytest.mark.parametrize("cid", sorted(CLAIMS))
def test_every_claim_measure_runs_on_the_strict_backend(cid):
    """Every claim's first smoke point (about a minute in all on one core)."""
    _claim_measures(cid, sb.NAME)
