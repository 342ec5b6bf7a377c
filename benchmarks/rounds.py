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
from bilevel_theory.problems import QuadraticBilevel

from .common import synchronize

#: Hyperparameters fixed for the benchmark (step sizes keep the library defaults).
HYPERPARAMETERS: dict[str, dict[str, Any]] = {
    "fedmbo": dict(inner_steps=10, neumann_steps=10, samples=1, replace=True),
    "fednest": dict(inner_steps=5, local_steps=2, neumann_steps=10, replace=False),
}

#: Arrays of shape (R, n, d) assumed alive at the peak of a round, to skip cases that would not
#: fit: the measured peak is ≈ 6 (FedMBO) to ≈ 9 (FedNest) such arrays; 12 leaves a margin.
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


class _PeakMemory:
    """Context manager: peak bytes allocated inside the block (``.peak``), and the method."""

    def __init__(self, backend: str):
        self.backend, self.peak = backend, None
        self.method = ("cupy memory pool growth over the round" if backend == "cupy" else
                       "tracemalloc peak over the round (numpy buffers + Python objects)")

    def __enter__(self):
        if self.backend == "cupy":  # pragma: no cover - needs a GPU
            import cupy  # noqa: PLC0415

            self._pool = cupy.get_default_memory_pool()
            self._pool.free_all_blocks()
            self._base = self._pool.total_bytes()
        else:
            gc.collect()
            tracemalloc.start()
            self._base = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
        return self

    def __exit__(self, *exc):
        if self.backend == "cupy":  # pragma: no cover - needs a GPU
            synchronize(self.backend)
            self.peak = int(self._pool.total_bytes() - self._base)
        else:
            self.peak = int(tracemalloc.get_traced_memory()[1] - self._base)
            tracemalloc.stop()
        return False


def round_case(problem, name: str, replicates: int, sampled_clients: int, backend: str,
               seed: int = 0, repeats: int = 3, budget: float = 3.0,
               measure_memory: bool = True, traced_timing: bool = False) -> dict[str, Any]:
    """Time one round of ``name`` (``fedmbo``: ``T`` inner steps + PHE + outer step;
    ``fednest``: one epoch) at ``(replicates, sampled_clients)``: best of up to ``repeats``
    untraced rounds within ``budget`` seconds, after one round under the memory tracer.  With
    ``traced_timing`` (large cases, where the tracer's per-allocation cost is negligible) the
    traced round is also the timed one."""
    hp = dict(HYPERPARAMETERS[name], sampled_clients=sampled_clients)
    algorithm = ALGORITHMS[name](problem, **hp)

    def one_round(tracer=None):
        ctx = make_context(problem, replicates, seed, backend)
        state = algorithm.init(ctx)
        before = ctx.snapshot()
        synchronize(backend)
        with tracer or _Null():
            start = time.perf_counter()
            algorithm.step(ctx, state, 0)
            synchronize(backend)
            seconds = time.perf_counter() - start
        return seconds, np.subtract(ctx.snapshot(), before)

    peak, method = None, "not measured"
    times = []
    if measure_memory or traced_timing:
        tracer = _PeakMemory(backend)
        seconds, ledger = one_round(tracer)
        peak, method = tracer.peak, tracer.method
        if traced_timing:
            times.append(seconds)
    spent = 0.0
    while len(times) < max(1, repeats):
        seconds, ledger = one_round()
        times.append(seconds)
        spent += seconds
        if spent >= budget:
            break
    seconds = float(min(times))
    _, _, _, grad, hvp, jvp, _ = ledger
    evals = (grad + hvp + jvp) * replicates
    return dict(
        algorithm=name, clients=problem.clients, dim=problem.dim_x,
        storage=problem.spec.get("storage"), replicates=replicates,
        sampled_clients=sampled_clients, hyperparameters={k: hp[k] for k in sorted(hp)},
        seconds_per_round=seconds, repeats=len(times), traced_timing=traced_timing,
        oracle_calls_per_replicate=dict(grad=float(grad), hvp=float(hvp), jvp=float(jvp)),
        client_oracle_evals=float(evals), evals_per_second=float(evals / seconds),
        peak_memory_bytes=peak, memory_method=method,
    )


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def estimated_bytes(replicates: int, sampled_clients: int, dim: int) -> int:
    """Rough peak working set of a round: ``LIVE_ARRAYS`` arrays of ``(R, n, d)`` float64."""
    return LIVE_ARRAYS * replicates * sampled_clients * dim * 8


def rounds_grid(instances: dict[int, Any], algorithms, replicates_list, sampled_list, backend,
                memory_cap: float, max_case_seconds: float, seed: int = 0,
                log=print) -> list[dict[str, Any]]:
    """Every case of the grid, ``n`` ascending.  A case is listed as skipped when its estimated
    memory exceeds ``memory_cap`` or its time, extrapolated linearly in ``n`` from the previous
    case of the same row, exceeds ``max_case_seconds``."""
    rows = []
    for dim, problem in instances.items():
        for name in algorithms:
            for R in replicates_list:
                previous = None
                for n in sorted(sampled_list):
                    base = dict(algorithm=name, clients=problem.clients, dim=dim,
                                storage=problem.spec.get("storage"), replicates=R,
                                sampled_clients=n)
                    need = estimated_bytes(R, n, dim)
                    skip = None
                    if n > problem.clients:
                        skip = f"n > m = {problem.clients}"
                    elif need > memory_cap:
                        skip = (f"estimated {need / 2**30:.1f} GiB > cap "
                                f"{memory_cap / 2**30:.1f} GiB")
                    elif previous is not None:
                        predicted = previous[1] * n / previous[0]
                        if predicted > max_case_seconds:
                            skip = (f"predicted {predicted:.0f} s/round > "
                                    f"{max_case_seconds:.0f} s (linear in n)")
                    if skip:
                        rows.append(dict(base, skipped=skip))
                        log(f"  {name:8s} d={dim:3d} R={R:3d} n={n:>7d}: skipped ({skip})")
                        continue
                    large = R * n * dim > 2_000_000
                    row = round_case(problem, name, R, n, backend, seed,
                                     repeats=1 if large else 5, budget=0.0 if large else 2.0,
                                     traced_timing=large)
                    previous = (n, row["seconds_per_round"])
                    rows.append(row)
                    peak = row["peak_memory_bytes"]
                    log(f"  {name:8s} d={dim:3d} R={R:3d} n={n:>7d}: "
                        f"{row['seconds_per_round']:.4f} s/round, "
                        f"{row['evals_per_second']:.3g} evals/s, "
                        f"peak {0 if peak is None else peak / 2**20:.0f} MiB")
    return rows
