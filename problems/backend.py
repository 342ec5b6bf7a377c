"""Array backends: numpy (default) and CuPy, resolved once through array-api-compat.

Core code never imports CuPy: it asks :func:`get_backend` for a :class:`Backend`, then uses
``backend.xp`` (an array-api-compat namespace) and ``backend.rng(seed)`` only.
"""

from __future__ import annotations

import functools
import math
import operator
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
from array_api_compat import array_namespace

BACKENDS = ("numpy", "cupy")


class SingleThreadBLAS:
    """Re-entrant context (and decorator) running host BLAS calls on one thread.

    The batched products multiply many tiny matrices (``d ≤ 100``); a multithreaded BLAS
    splits each call between threads that, on a busy machine, wait for descheduled siblings
    (measured: ``v @ U`` 40× slower with two OpenBLAS threads on two contended cores).  The
    BLAS libraries are found once with ``threadpoolctl``; the outermost entry costs one
    ``get_num_threads`` call per library (≈ 3 µs in all) and a ``set_num_threads`` only when
    the count is not already 1; the previous count is restored on its exit.  A nested entry
    only counts its depth, so a whole run pinned once (``run_algorithm``) pays nothing per
    oracle call.  Without ``threadpoolctl`` it does nothing.
    """

    def __init__(self) -> None:
        self._libraries: list | None = None
        self._local = threading.local()
        #: set to False to measure what the pinning buys (benchmarks only)
        self.enabled = True

    def libraries(self) -> list:
        """The loaded BLAS controllers (looked up once)."""
        if self._libraries is None:
            try:
                from threadpoolctl import ThreadpoolController  # noqa: PLC0415
            except ImportError:  # pragma: no cover - declared dependency
                self._libraries = []
            else:
                self._libraries = [lib for lib in ThreadpoolController().lib_controllers
                                   if lib.user_api == "blas"]
        return self._libraries

    @property
    def active(self) -> bool:
        """Whether this thread is inside the context (BLAS already pinned)."""
        return getattr(self._local, "depth", 0) > 0

    def __enter__(self) -> SingleThreadBLAS:
        local = self._local
        depth = getattr(local, "depth", 0)
        local.depth = depth + 1
        if depth:  # already pinned by an enclosing entry
            return self
        saved = []
        for lib in self.libraries() if self.enabled else ():
            threads = lib.get_num_threads()
            if threads is not None and threads != 1:
                lib.set_num_threads(1)
                saved.append((lib, threads))
        local.saved = saved
        return self

    def __exit__(self, *exc) -> bool:
        local = self._local
        local.depth -= 1
        if local.depth == 0:
            for lib, threads in local.saved:
                lib.set_num_threads(threads)
            local.saved = []
        return False

    def __call__(self, fn):
        local = self._local

        @functools.wraps(fn)
        def pinned(*args, **kwargs):
            if getattr(local, "depth", 0):  # pinned by the caller: no context to enter
                return fn(*args, **kwargs)
            with self:
                return fn(*args, **kwargs)
        return pinned


#: The library's one instance: ``with single_thread_blas: ...`` or ``@single_thread_blas``.
single_thread_blas = SingleThreadBLAS()


def mean_over_clients(a: Any, weights: Any = None) -> Any:
    """The mean over the client axis of ``(…, n, d)`` arrays (axis ``-2``) → ``(…, d)``;
    with ``weights`` (``(…, n)``, non-negative) the weighted mean ``Σ w a / Σ w`` (``0``
    where ``Σ w = 0``).

    On host numpy it is one batched product of a row of weights (``1/n`` or ``w/Σw``) with
    ``a`` on one BLAS thread: numpy's reduction over a strided middle axis runs ≈ 8× slower
    (measured: 210 vs 27 µs for ``(1, 10⁴, 10)``).  Uniform weights give bitwise the plain
    mean (the same product).  Other namespaces reduce with their own ``mean``/``sum``."""
    if isinstance(a, np.ndarray) and a.ndim >= 2 and a.dtype.kind == "f" and a.shape[-2]:
        n = a.shape[-2]
        if weights is None:
            row = np.full((*a.shape[:-2], 1, n), 1.0 / n)
        else:
            w = np.asarray(weights, dtype=np.float64)
            total = w.sum(axis=-1, keepdims=True)
            row = (w / np.where(total > 0, total, 1.0))[..., None, :]
        with single_thread_blas:
            return np.matmul(row, a)[..., 0, :]
    xp = array_namespace(a)
    if weights is None:
        return xp.mean(a, axis=-2)
    w = xp.astype(weights, xp.float64)[..., None]
    total = xp.sum(w, axis=-2)
    return xp.sum(w * a, axis=-2) / xp.where(total > 0, total, 1.0)


#: Last-axis length → the fewest entries from which a broadcast element-wise operation on host
#: numpy runs one strided pass per coordinate instead: numpy's inner loop would run over that
#: short axis, a call per two or three numbers.  Measured break-even: about 2,000 entries at
#: d = 2 and 6,000 at d = 3 (1.4× faster at 8,000 and 12,000, 3.5× at Gao's (1536, 8, 2));
#: from d = 5 the plain broadcast is faster at every size.
COLUMN_WISE = {2: 2048, 3: 6144}


def inplace(ufunc: Any, out: Any, operand: Any) -> Any:
    """``ufunc(out, operand)`` written into ``out`` (``operand`` broadcasting against it) and
    returned; bitwise numpy's broadcast operation, element by element the same IEEE operation.

    On host numpy with a short last axis (:data:`COLUMN_WISE`) and an operand that is broadcast
    or strided, it runs coordinate by coordinate: each pass is one long strided loop over the
    other axes.  Other host arrays take the plain ``ufunc(out, operand, out=out)``; other
    namespaces' arrays the in-place operator (``ufunc`` one of ``np.add``, ``np.subtract``,
    ``np.multiply``)."""
    if not isinstance(out, np.ndarray):
        return _INPLACE_OPERATORS[ufunc](out, operand)
    if (isinstance(operand, np.ndarray) and out.ndim >= 2 and operand.ndim == out.ndim
            and out.size >= COLUMN_WISE.get(out.shape[-1], math.inf)
            and not (operand.shape == out.shape and operand.flags.c_contiguous
                     and out.flags.c_contiguous)):
        last = operand.shape[-1] == 1
        for k in range(out.shape[-1]):
            column = out[..., k]
            ufunc(column, operand[..., 0 if last else k], out=column)
        return out
    ufunc(out, operand, out=out)
    return out


_INPLACE_OPERATORS = {np.add: operator.iadd, np.subtract: operator.isub,
                      np.multiply: operator.imul}


class BackendUnavailable(RuntimeError):
    """The requested backend cannot run here (CuPy not installed, or no CUDA GPU)."""


@dataclass(frozen=True)
class Backend:
    """An array namespace plus the random generator that goes with it.

    Attributes:
        name: ``"numpy"`` or ``"cupy"``.
        xp: the array-api-compat namespace (``array_api_compat.numpy`` or ``.cupy``).
        module: the raw module, used only for its random generator.
    """

    name: str
    xp: ModuleType
    module: ModuleType

    def rng(self, seed: int | np.random.SeedSequence) -> Any:
        """One explicit generator per run (numpy ``PCG64`` / CuPy ``XORWOW``), seeded."""
        if self.name == "numpy":
            return np.random.default_rng(seed)
        if isinstance(seed, np.random.SeedSequence):
            seed = int(seed.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
        return self.module.random.default_rng(seed)

    def asarray(self, a: Any, dtype: Any = None) -> Any:
        """Move ``a`` onto this backend (float64 unless ``dtype`` is given)."""
        return self.xp.asarray(a, dtype=self.xp.float64 if dtype is None else dtype)

    def to_numpy(self, a: Any) -> np.ndarray:
        """Bring an array of this backend back to host numpy."""
        if self.name == "numpy":
            return np.asarray(a)
        return self.module.asnumpy(a)


#: backends registered under names outside :data:`BACKENDS` (e.g. a test double of a device)
_REGISTERED: dict[str, Callable[[], Backend]] = {}


def register_backend(name: str, factory: Callable[[], Backend]) -> None:
    """Make ``get_backend(name)`` return ``factory()`` (called once, then cached) for a name
    outside :data:`BACKENDS`, e.g. a host double of a device backend used by tests; the
    built-in names cannot be replaced and a name cannot be given a second factory."""
    if not isinstance(name, str) or not name or name in BACKENDS:
        raise ValueError(f"`name` must be a new backend name (not one of {BACKENDS}), "
                         f"got {name!r}")
    if not callable(factory):
        raise TypeError(f"`factory` must be callable, got {factory!r}")
    if _REGISTERED.get(name, factory) is not factory:
        raise ValueError(f"backend {name!r} is already registered")
    _REGISTERED[name] = factory


@functools.cache
def get_backend(name: str = "numpy") -> Backend:
    """Resolve a backend by name; a missing CuPy or GPU is a clear error, never a fallback."""
    if isinstance(name, str) and name in _REGISTERED:
        return _REGISTERED[name]()
    if not isinstance(name, str) or name not in BACKENDS:
        raise ValueError(f"`backend` must be one of {BACKENDS}, got {name!r}")
    if name == "numpy":
        return Backend("numpy", array_namespace(np.empty(0)), np)
    try:
        import cupy  # noqa: PLC0415  (optional dependency, imported only here)
    except ImportError as err:  # pragma: no cover - depends on the machine
        raise BackendUnavailable(
            "`backend='cupy'` needs CuPy: pip install 'bilevel-theory[gpu]' (CUDA 12) or "
            "'bilevel-theory[gpu-cuda13]' (CUDA 13)"
        ) from err
    try:  # pragma: no cover - depends on the machine
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise BackendUnavailable("`backend='cupy'` needs a CUDA GPU; none was found")
    except cupy.cuda.runtime.CUDARuntimeError as err:  # pragma: no cover
        raise BackendUnavailable(f"`backend='cupy'` needs a CUDA GPU: {err}") from err
    return Backend("cupy", array_namespace(cupy.empty(0)), cupy)  # pragma: no cover


def cupy_available() -> tuple[bool, str]:
    """Whether CuPy with a GPU can be used here, and if not, why (for test skips)."""
    try:
        get_backend("cupy")
    except BackendUnavailable as err:
        return False, str(err)
    return True, ""


def peak_rss_bytes() -> int:
    """This process's peak resident memory so far, in bytes (host memory; what a sweep's
    worker reports with each point): ``VmHWM`` from ``/proc/self/status`` (Linux; reset by
    ``exec``), else ``getrusage``'s ``ru_maxrss`` (which on Linux keeps the forking parent's
    peak across ``exec``, so it over-reports in a subprocess of a large parent); 0 where
    neither exists."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        import resource  # noqa: PLC0415  (POSIX only)
    except ImportError:
        return 0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(rss if sys.platform == "darwin" else rss * 1024)
