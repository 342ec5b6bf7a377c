"""Achieved memory bandwidth of the batched Hessian-vector step ``∇²_{yy}g_i v = A_i v``.

Times ``problem.exact_hvp_yy_g(idx, v)`` (and ``Oracle.hvp_yy_g`` on a noise-free instance,
which adds only the ledger count) for ``R·n`` client-vectors, and divides a byte model by the
time.

Byte model (compulsory traffic, per client-vector, float64, int64 indices): read the index
(8 B), read the client's data the product needs (structured ``EigenScaled``: the spectrum
``a_i``, ``8·d`` B; ``Dense``: ``A_i``, ``8·d²`` B), read ``v`` (``8·d``), write the result
(``8·d``).  The shared eigenbasis ``U`` (``d×d``) stays in cache and is not counted, nor are
temporaries (they are the overhead being measured) nor whole cache lines of a gathered row.
The copy bandwidth uses the same read + write convention.

Also reported: the GFLOP/s (``4d²`` flops per client-vector for ``EigenScaled``, two ``d×d``
products; ``2d²`` for ``Dense``), a breakdown of the product into its stages, the earlier
candidate implementations (:mod:`benchmarks.hvp_variants`, checked against the library's
result), and, with ``contention``, the library path while busy processes occupy every core,
with the BLAS pinning on (the library's default) and off.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from typing import Any

import numpy as np

from bilevel_theory.problems import Oracle, QuadraticBilevel, get_backend
from bilevel_theory.problems.backend import single_thread_blas
from bilevel_theory.problems.families import Dense, EigenScaled

from . import hvp_variants
from .common import best_of, timed


def interleaved(fn, backend: str, copy_bytes: int, rounds: int = 5) -> tuple[float, float]:
    """Best seconds of ``fn()`` and best copy bandwidth (GB/s, read + write of a
    ``copy_bytes`` float64 array), timed alternately so that both see the same machine load."""
    be = get_backend(backend)
    src = be.asarray(np.random.default_rng(0).random(copy_bytes // 8))
    dst = be.xp.empty_like(src)

    def copy():
        dst[...] = src

    copy()
    best_fn = best_copy = np.inf
    for _ in range(rounds):
        best_fn = min(best_fn, timed(fn, backend)[0])
        best_copy = min(best_copy, timed(copy, backend)[0])
    return float(best_fn), 2 * src.nbytes / best_copy / 1e9


def byte_model(storage: str, rows: int, dim: int) -> int:
    """Compulsory bytes of ``rows`` Hessian-vector products (see the module docstring)."""
    data = 8 * dim if storage == "structured" else 8 * dim * dim
    return rows * (8 + data + 16 * dim)


def flop_model(storage: str, rows: int, dim: int) -> int:
    return rows * (4 if storage == "structured" else 2) * dim * dim


@contextlib.contextmanager
def busy_processes(count: int | None = None):
    """``count`` (default: one per core) busy-looping child processes for the block's
    duration, to measure under deliberate CPU contention; they are killed by pid on exit."""
    count = (os.cpu_count() or 1) if count is None else count
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
             for _ in range(count)]
    try:
        time.sleep(0.3)  # let them start spinning
        yield procs
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


@contextlib.contextmanager
def blas_pinning(enabled: bool):
    """The library's BLAS pinning switched on or off for the block (then restored)."""
    previous, single_thread_blas.enabled = single_thread_blas.enabled, enabled
    try:
        yield
    finally:
        single_thread_blas.enabled = previous


def peak_gflops(backend: str, size: int = 1024) -> dict[str, Any]:
    """Double-precision matmul rate of one ``size³`` product on one BLAS thread (numpy) or the
    device (CuPy): the compute roof of the roofline."""
    be = get_backend(backend)
    a = be.asarray(np.random.default_rng(0).random((size, size)))
    with single_thread_blas:
        seconds, calls = best_of(lambda: a @ a, backend, 3, 5.0)
    return dict(gflops=2 * size ** 3 / seconds / 1e9, size=size,
                method=f"float64 {size}×{size} matmul, one BLAS thread, best of {calls}")


def hvp_case(storage: str, dim: int, clients: int, replicates: int, sampled_clients: int,
             backend: str, copy_gbs: float, repeats: int = 5,
             variants: bool = True, contention: bool = False,
             copy_bytes: int = 1 << 28) -> dict[str, Any]:
    """Bandwidth of one configuration; the instance is built (no constants needed) and freed.

    ``fraction_of_copy`` divides by ``copy_gbs`` (the suite's copy, measured once at its
    start); ``fraction_of_adjacent_copy`` by a copy timed alternately with the product (same
    load: on a shared machine the fair comparison); both are reported."""
    be = get_backend(backend)
    problem = QuadraticBilevel.random(clients=clients, dim_x=dim, dim_y=dim, kappa=10.0,
                                      heterogeneity=0.5, noise=0.0, seed=0, storage=storage)
    prob = problem.to(be)
    rng = be.rng(1)
    idx = rng.integers(0, clients, size=(replicates, sampled_clients))
    v = rng.standard_normal((replicates, sampled_clients, dim))
    rows = replicates * sampled_clients
    nbytes, flops = byte_model(storage, rows, dim), flop_model(storage, rows, dim)

    def rate(seconds: float) -> dict[str, float]:
        gbs = nbytes / seconds / 1e9
        return dict(seconds=seconds, gbytes_per_s=gbs, fraction_of_copy=gbs / copy_gbs,
                    gflops=flops / seconds / 1e9, ns_per_row=seconds / rows * 1e9)

    expected = prob.exact_hvp_yy_g(idx, v)
    lib_t, lib_calls = best_of(lambda: prob.exact_hvp_yy_g(idx, v), backend, repeats, 10.0)
    oracle = Oracle(problem, be, 0)
    orc_t, _ = best_of(lambda: oracle.hvp_yy_g(idx, None, None, v), backend, repeats, 10.0)
    row: dict[str, Any] = dict(
        storage=storage, family=type(prob.A).__name__, dim=dim, clients=clients,
        instance_bytes=problem.nbytes, replicates=replicates, sampled_clients=sampled_clients,
        rows=rows, bytes_model=nbytes, flops_model=flops, repeats=lib_calls,
        exact_hvp_yy_g=rate(lib_t), oracle_hvp_yy_g=rate(orc_t),
    )
    row.update(rate(lib_t))

    def lib():
        return prob.exact_hvp_yy_g(idx, v)

    def adjacent(seconds, copy):
        r = rate(seconds)
        r.update(adjacent_copy_gbytes_per_s=copy,
                 fraction_of_adjacent_copy=r["gbytes_per_s"] / copy)
        return r

    quiet = adjacent(*interleaved(lib, backend, copy_bytes))
    row["adjacent"] = quiet
    row["fraction_of_adjacent_copy"] = quiet["fraction_of_adjacent_copy"]
    if contention and backend == "numpy":
        with busy_processes() as procs:
            pinned = adjacent(*interleaved(lib, backend, copy_bytes, 3))
            with blas_pinning(False):
                unpinned = adjacent(*interleaved(lib, backend, copy_bytes, 3))
            # what the pinning protects: one unblocked BLAS product over all R·n rows
            # (the shape the earlier library path used), pinned and at the BLAS default
            whole = whole_product(prob.A, v)
            if whole is not None:
                with single_thread_blas:
                    whole_pinned, _ = best_of(whole, backend, 3, 5.0)
                whole_default, _ = best_of(whole, backend, 3, 5.0)
        row["contended"] = dict(busy_processes=len(procs), pinned=pinned,
                                unpinned=unpinned, blas_threads_unpinned=_blas_threads())
        if whole is not None:
            row["contended"]["unblocked_product_ns_per_row"] = dict(
                pinned=whole_pinned / rows * 1e9, blas_default=whole_default / rows * 1e9,
                what="v @ U (EigenScaled) or v @ M0ᵀ-sized product over all rows, one call")
    if backend == "numpy":
        row["breakdown"] = {k: rate(t) for k, t in stages(prob.A, idx, v, repeats).items()}
        if variants:
            row["variants"] = {}
            for name, fn in hvp_variants.for_family(prob.A).items():
                out = fn(prob.A, idx, v)
                ok = bool(np.allclose(out, expected, rtol=1e-12, atol=1e-12))
                t, _ = best_of(lambda fn=fn: fn(prob.A, idx, v), backend, repeats, 10.0)
                row["variants"][name] = dict(rate(t), matches_library=ok)
    return row


def stages(family, idx, v, repeats: int) -> dict[str, float]:
    """Seconds of each stage of the library's product (numpy), to see what bounds it."""
    out: dict[str, float] = {}

    def t(fn):
        return best_of(fn, "numpy", repeats, 5.0)[0]

    if isinstance(family, EigenScaled):
        U, a = family.U, family.a
        w = v @ U
        g = a[idx]
        out["v @ U"] = t(lambda: v @ U)
        out["gather a[idx]"] = t(lambda: a[idx])
        out["gather a.take(idx, 0)"] = t(lambda: a.take(idx, axis=0))
        out["(v@U) * a_i"] = t(lambda: w * g)
        out["... @ U.T"] = t(lambda: w @ U.T)
    elif isinstance(family, Dense):
        M = family.M
        Mi = M[idx]
        out["gather M[idx]"] = t(lambda: M[idx])
        out["gather M.take(idx, 0)"] = t(lambda: M.take(idx, axis=0))
        out["batched M_i @ v"] = t(lambda: (Mi @ v[..., None])[..., 0])
    out["copy of v (reference)"] = t(lambda: v.copy())
    return out


def whole_product(family, v):
    """``v @ U`` over all rows in one BLAS call (``EigenScaled``), else ``None``."""
    if isinstance(family, EigenScaled):
        U = family.U
        return lambda: v @ U
    return None


def _blas_threads() -> list[int]:
    """Thread counts of the loaded BLAS libraries (what an unpinned product would use)."""
    return [lib.get_num_threads() for lib in single_thread_blas.libraries()]
