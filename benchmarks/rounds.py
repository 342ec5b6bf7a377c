"""Throughput of one FedMBO round and one FedNest epoch over a grid of sizes.

Each case builds the algorithm once, then times ``algorithm.step`` on a fresh context
(:func:`bilevel_theory.make_context`, the building blocks of ``run``), best of a few repeats.
Client-oracle evaluations come from the ledger (``grad + hvp + jvp`` calls per replicate,
summed over clients) × replicates.  The ledger counts Hessian-vector products of *active*
Neumann chains only, while the vectorized code computes every chain and discards the inactive
ones, so evaluations/s understates the arithmetic done.
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from typing import Any

import numpy as np

from bilevel_theory import ALGORITHMS, make_context
from problems import QuadraticBilevel

from .common import best_of, synchronize

#: Hyperparameters fixed for the benchmark (step sizes keep the library defaults).
HYPERPARAMETERS: dict[str, dict[str, Any]] = {
    "fedmbo": dict(inner_steps=10, neumann_steps=10, samples=1, replace=True),
    "fednest": dict(inner_steps=5, local_steps=2, neumann_steps=10, replace=False),
}

#: Arrays of shape (R, n, d) alive at once at the peak of a round (measured, rounded up).
LIVE_ARRAYS = 12


def build_instance(clients: int, dim: int, backend: str, seed: int = 0,
                   storage: str = "structured") -> tuple[Any, dict[str, float]]:
    """A bilevel instance with ``dim_x = dim_y = dim`` (noisy oracles), its constants computed
    (cached on the instance) and moved to ``backend``; returns it with the setup timings."""
    start = time.perf_counter()
    problem = QuadraticBilevel.random(clients=clients, dim_x=dim, dim_y=dim, kappa=10.0,
                                      heterogeneity=0.5, noise=0.1, seed=seed, storage=storage)
    built = time.perf_counter()
    problem.constants  # noqa: B018  (cached; the algorithms' defaults read it)
    constants = time.perf_counter()
    problem.to(backend)
    return problem, dict(build_seconds=built - start, constants_seconds=constants - built,
                         instance_bytes=problem.nbytes)


def _peak_memory(step, backend: str) -> tuple[int | None, str]:
    """Peak bytes allocated while ``step()`` runs, and how it was measured."""
    if backend == "cupy":  # pragma: no cover - needs a GPU
        import cupy  # noqa: PLC0415

        pool = cupy.get_default_memory_pool()
        pool.free_all_blocks()
        before = pool.total_bytes()
        step()
        synchronize(backend)
        return int(pool.total_bytes() - before), "cupy memory pool growth over the round"
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        step()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return int(peak - base), "tracemalloc peak over the round (numpy buffers + Python objects)"


def round_case(problem, name: str, replicates: int, sampled_clients: int, backend: str,
               seed: int = 0, repeats: int = 3, budget: float = 3.0,
               measure_memory: bool = True) -> dict[str, Any]:
    """Time one round of ``name`` (``fedmbo``: ``T`` inner steps + PHE + outer step;
    ``fednest``: one epoch) at ``(replicates, sampled_clients)``."""
    hp = dict(HYPERPARAMETERS[name], sampled_clients=sampled_clients)
    algorithm = ALGORITHMS[name](problem, **hp)

    def fresh():
        ctx = make_context(problem, replicates, seed, backend)
        return ctx, algorithm.init(ctx)

    ledgers = []

    def one_round():
        ctx, state = fresh()
        before = ctx.snapshot()
        synchronize(backend)
        start = time.perf_counter()
        algorithm.step(ctx, state, 0)
        synchronize(backend)
        seconds = time.perf_counter() - start
        ledgers.append(np.subtract(ctx.snapshot(), before))
        return seconds

    peak, method = (None, "not measured")
    if measure_memory:
        ctx, state = fresh()
        peak, method = _peak_memory(lambda: algorithm.step(ctx, state, 0), backend)
        del ctx, state
    times = []
    spent = 0.0
    while len(times) < max(1, repeats):
        times.append(one_round())
        spent += times[-1]
        if spent >= budget:
            break
    seconds = float(min(times))
    _, _, _, grad, hvp, jvp, _ = ledgers[-1]
    evals = (grad + hvp + jvp) * replicates
    return dict(
        algorithm=name, clients=problem.clients, dim=problem.dim_x,
        storage=problem.spec.get("storage"), replicates=replicates,
        sampled_clients=sampled_clients, hyperparameters={k: hp[k] for k in sorted(hp)},
        seconds_per_round=seconds, repeats=len(times),
        oracle_calls_per_replicate=dict(grad=float(grad), hvp=float(hvp), jvp=float(jvp)),
        client_oracle_evals=float(evals), evals_per_second=float(evals / seconds),
        peak_memory_bytes=peak, memory_method=method,
    )


def estimated_bytes(replicates: int, sampled_clients: int, dim: int) -> int:
    """Rough peak working set of a round: ``LIVE_ARRAYS`` arrays of ``(R, n, d)`` float64."""
    return LIVE_ARRAYS * replicates * sampled_clients * dim * 8


def rounds_grid(instances: dict[int, Any], algorithms, replicates_list, sampled_list, backend,
                memory_cap: int, seed: int = 0, log=print) -> list[dict[str, Any]]:
    """Every case of the grid; a case over ``memory_cap`` (estimated) is listed as skipped."""
    rows = []
    for dim, problem in instances.items():
        for name in algorithms:
            for R in replicates_list:
                for n in sampled_list:
                    base = dict(algorithm=name, clients=problem.clients, dim=dim,
                                storage=problem.spec.get("storage"), replicates=R,
                                sampled_clients=n)
                    need = estimated_bytes(R, n, dim)
                    if n > problem.clients:
                        rows.append(dict(base, skipped=f"n > m = {problem.clients}"))
                        continue
                    if need > memory_cap:
                        rows.append(dict(base, skipped=f"estimated {need / 2**30:.1f} GiB > "
                                                       f"cap {memory_cap / 2**30:.1f} GiB"))
                        continue
                    large = R * n * dim > 2_000_000
                    row = round_case(problem, name, R, n, backend, seed,
                                     repeats=1 if large else 5, budget=0.0 if large else 2.0)
                    rows.append(row)
                    log(f"  {name:8s} d={dim:3d} R={R:3d} n={n:>7d}: "
                        f"{row['seconds_per_round']:.4f} s/round, "
                        f"{row['evals_per_second']:.3g} evals/s, "
                        f"peak {row['peak_memory_bytes'] / 2**20 if row['peak_memory_bytes'] else 0:.0f} MiB")
    return rows
