"""Shared helpers of the benchmarks: device sync, best-of timers, machine info, copy bandwidth.

Nothing here imports CuPy at module level: :func:`synchronize` imports it lazily, and only
when the backend is ``cupy``.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from bilevel_theory.problems import get_backend


def synchronize(backend: str) -> None:
    """Wait for the device to finish queued work (a no-op on numpy)."""
    if backend == "cupy":
        import cupy  # noqa: PLC0415  (optional; imported only for the cupy backend)

        cupy.cuda.Device().synchronize()


def timed(fn: Callable[[], Any], backend: str) -> tuple[float, Any]:
    """Seconds taken by ``fn()`` (device synchronized before and after), and its result."""
    synchronize(backend)
    start = time.perf_counter()
    out = fn()
    synchronize(backend)
    return time.perf_counter() - start, out


def best_of(fn: Callable[[], Any], backend: str, repeats: int = 5,
            budget: float = 2.0) -> tuple[float, int]:
    """Best wall time of ``fn()`` over up to ``repeats`` calls, stopping once ``budget``
    seconds have been spent (always at least one call).  Returns ``(best, calls)``."""
    best, spent, calls = np.inf, 0.0, 0
    while calls < max(1, repeats):
        seconds, _ = timed(fn, backend)
        best, spent, calls = min(best, seconds), spent + seconds, calls + 1
        if spent >= budget:
            break
    return float(best), calls


def cpu_model() -> str:
    """CPU model name from ``/proc/cpuinfo`` (Linux), else ``platform.processor()``."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def blas_summary() -> dict[str, Any]:
    """BLAS/LAPACK name, version and build configuration of this numpy, plus thread settings."""
    out: dict[str, Any] = {}
    try:
        config = np.show_config(mode="dicts")
        deps = config.get("Build Dependencies", {})
        for key in ("blas", "lapack"):
            dep = deps.get(key, {})
            out[key] = {k: dep.get(k) for k in ("name", "version", "openblas configuration")
                        if dep.get(k) is not None}
        simd = config.get("SIMD Extensions", {})
        out["simd_found"] = simd.get("found")
    except Exception as err:  # noqa: BLE001  (older numpy: summary is best effort)
        out["error"] = repr(err)
    out["threads_env"] = {k: os.environ[k] for k in (
        "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS") if k in os.environ}
    return out


def machine_info(backend: str) -> dict[str, Any]:
    """What the figures were measured on."""
    info: dict[str, Any] = dict(
        cpu_model=cpu_model(), cores=os.cpu_count(), platform=platform.platform(),
        python=platform.python_version(), numpy=np.__version__, blas=blas_summary(),
        backend=backend,
    )
    try:
        info["memory_bytes"] = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        pass
    try:
        info["load_average"] = os.getloadavg()
    except OSError:
        pass
    if backend == "cupy":  # pragma: no cover - needs a GPU
        import cupy  # noqa: PLC0415

        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        info["gpu"] = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        info["cupy"] = cupy.__version__
    return info


def copy_bandwidth(backend: str, nbytes: int = 1 << 28, repeats: int = 10) -> dict[str, Any]:
    """Array-copy bandwidth: ``copyto(dst, src)`` of ``nbytes`` of float64, best of ``repeats``.

    Byte model: ``2·nbytes`` per copy (``src`` read once, ``dst`` written once; the hardware's
    write-allocate read of ``dst`` is not counted).  The hvp benchmark uses the same convention.
    """
    be = get_backend(backend)
    xp = be.xp
    n = nbytes // 8
    src = be.asarray(np.random.default_rng(0).random(n))
    dst = xp.empty_like(src)
    if backend == "cupy":  # pragma: no cover - needs a GPU
        def copy():
            dst[...] = src
    else:
        def copy():
            np.copyto(dst, src)
    copy()  # fault in the pages of dst
    best, calls = best_of(copy, backend, repeats=repeats, budget=10.0)
    return dict(bytes_per_copy=2 * n * 8, seconds=best, repeats=calls,
                gbytes_per_s=2 * n * 8 / best / 1e9,
                method=f"{'numpy.copyto' if backend == 'numpy' else 'dst[...] = src'} of "
                       f"{n * 8 / 2**20:.0f} MiB float64, best of {calls}; bytes = read + write")
