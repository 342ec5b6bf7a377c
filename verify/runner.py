"""Sweeps: run claims point by point, store rows, resume, evaluate, summarize.

* :func:`check` runs one claim (object or id) and returns a :class:`Result`.
* :func:`run_suite` runs every claim matching a pattern into a results directory, skipping
  the points already stored there (resume), and writes ``summary.json`` and ``run.json``.
* :func:`summarize` rebuilds the summary entries from the store alone (what reports read).

**Seeds.**  Point ``i`` of claim ``c`` gets ``measure(..., seed=s)`` with
``s = SeedSequence([seed, crc32(c), i]).generate_state(1)[0]``; the bootstrap of the fit is
seeded from ``(seed, crc32(c))`` likewise.  Hence the numbers depend on the base seed, the
claim and the point only, not on the executor, the number of workers or the order in which
points finish.  Verdicts are always computed from the stored rows (JSON round-trips floats
exactly), so a resumed run and an uninterrupted one give identical summaries.

**Executors.**  Points are ``(claim, point)`` tasks handed to an :class:`Executor`:
:class:`SerialExecutor` (``workers=1``, in process) or :class:`ProcessPoolExecutor`
(``workers>1``, a ``concurrent.futures`` process pool, ``spawn`` context).  The parent process
is the only writer of the store (and holds its writer lock, see :mod:`verify.store`): each
finished point is appended as it arrives.  The pool's workers die with the parent and ignore
Ctrl-C; a worker that dies breaks the pool, which is restarted with the unfinished points (a
point in flight through more than ``retries`` deaths ends the run with :class:`WorkersLost`).
A point running on a worker for more than the point timeout (``--point-timeout``, by default
the budget's :data:`verify.executor.POINT_TIMEOUT`) ends the run with :class:`PointTimeout`
and kills the pool's workers (``SIGKILL`` also ends a stopped, ``SIGSTOP``-ed, worker, which
``SIGTERM`` would not).  An interruption (``KeyboardInterrupt``) stops the workers at once,
keeps every stored point and marks ``run.json`` ``"status": "interrupted"`` (so does a lost
worker, point or scheduler, with the ``"reason"``); ``summary.json`` is removed when a run
starts and written when it completes, so it is never stale.
:func:`make_executor` is the single place where an executor is chosen; with a ``scheduler``
(``--scheduler tcp://HOST:PORT``) it is :class:`verify.distributed.DaskExecutor`, which submits
the tasks to an existing Dask cluster (the optional extra ``distributed``, imported lazily).
"""

from __future__ import annotations

import ast
import concurrent.futures as cf
import contextlib
import functools
import hashlib
import json
import multiprocessing
import os
import platform
import sys
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from bilevel_theory.problems.backend import peak_rss_bytes
from bilevel_theory.problems.oracle import (
    NOISE_DISTRIBUTIONS,
    check_noise_distribution,
    default_noise_distribution,
)

from .claim import BUDGETS, MUTANT_SEP, Claim
from .claims import is_registered_at_runtime, load, select
from .executor import (
    Executor,
    PointTimeout,
    Task,
    WorkersLost,
    check_point_timeout,
    timeout_message,
)
from .fit import N_BOOT, Fit
from .store import ResultsStore, versions
from .verdict import assess

SUMMARY = "summary.json"
RUN = "run.json"
#: the store's run log: one line per ``run_suite`` call that got to run its points (a
#: resumed run's segments add up; see :func:`read_runs`)
RUNS = "runs.jsonl"


# ------------------------------------------------------------------------------------ helpers

def _check_budget(budget: str) -> str:
    if budget not in BUDGETS:
        raise ValueError(f"`budget` must be one of {BUDGETS}, got {budget!r}")
    return budget


def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"`seed` must be a non-negative integer, got {seed!r}")
    return int(seed)


def _check_backend(backend: str) -> str:
    from bilevel_theory.problems import BackendUnavailable, get_backend  # noqa: PLC0415

    try:
        get_backend(backend)
    except BackendUnavailable as err:
        raise ValueError(str(err)) from None
    return backend


def point_seed(seed: int, claim_id: str, index: int) -> int:
    """The seed passed to ``measure`` at point ``index`` of ``claim_id``."""
    ss = np.random.SeedSequence([int(seed), zlib.crc32(claim_id.encode()), int(index)])
    return int(ss.generate_state(1)[0])


def fit_seed(seed: int, claim_id: str) -> int:
    """The seed of the bootstrap of ``claim_id``'s fit."""
    ss = np.random.SeedSequence([int(seed), zlib.crc32(claim_id.encode()), 2**32 - 1])
    return int(ss.generate_state(1)[0])


def _measure_name(m: Any) -> str:
    """``module.qualname`` of a measure; a ``functools.partial`` adds its keywords (never an
    address, so the name is the same in every process)."""
    if isinstance(m, functools.partial):
        kw = ", ".join(f"{k}={v!r}" for k, v in sorted(m.keywords.items()))
        return f"{_measure_name(m.func)}({kw})"
    return f"{getattr(m, '__module__', '?')}.{getattr(m, '__qualname__', repr(m))}"


def _code_of(path: Path) -> bytes:
    """A module's code without its docstrings and comments (its AST), so that editing the
    documentation does not invalidate stored results; the raw bytes if it does not parse.
    Each distinct source is parsed once per process: every measure's digest reads the same
    hundred modules."""
    return _code_of_source(path.read_bytes())


@functools.lru_cache(maxsize=4096)
def _code_of_source(source: bytes) -> bytes:
    """:func:`_code_of` of a module's ``source``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return source
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            body[0] = ast.Pass()
    return ast.dump(tree).encode()


#: The layers whose code can change a stored metric or a verdict: the library, its problems and
#: the whole verification package (claims, kit, runner, fit, verdict …); reports only render.
DIGESTED = ("bilevel_theory", "bilevel_theory.problems", "bilevel_theory.verify")
#: Subpackages of those that read the catalogue and never compute a row or a verdict: the
#: coverage map (the papers' inventory of results), whose edits must not invalidate a store.
NOT_DIGESTED = ("bilevel_theory.verify.coverage",)
#: Packages whose versions can change a stored metric: rows are reused only under the same.
VERSIONED = ("numpy", "scipy")


def code_digest(paths: Iterable[Path], roots: Sequence[Path] = ()) -> str:
    """SHA-256 (16 hex digits) of the code of ``paths`` (docstrings and comments excluded,
    :func:`_code_of`), each named by its path relative to the first of ``roots`` containing
    it, so that moving the checkout does not change the digest."""
    def name(p: Path) -> str:
        for r in roots:
            with contextlib.suppress(ValueError):
                return str(p.relative_to(r))
        return p.name
    h = hashlib.sha256()
    for path in sorted(paths, key=lambda q: (name(q), str(q))):
        try:
            h.update(name(path).encode() + b"\0" + _code_of(path))
        except OSError:
            continue
    return h.hexdigest()[:16]


def digested_paths() -> tuple[list[Path], set[Path]]:
    """``(roots, paths)``: the modules of the :data:`DIGESTED` packages (subpackages included)
    but those of :data:`NOT_DIGESTED`, and the folders their names are relative to."""
    import importlib.util  # noqa: PLC0415

    def folder(name: str) -> Path:  # found, not imported (the coverage map is not needed here)
        return Path(importlib.util.find_spec(name).origin).parent

    roots, paths = [], set()
    for name in DIGESTED:
        root = folder(name)
        roots.append(root.parent)
        paths |= set(root.rglob("*.py")) if name != "bilevel_theory" else set(root.glob("*.py"))
    for name in NOT_DIGESTED:
        paths -= set(folder(name).rglob("*.py"))
    return roots, paths


@functools.cache
def _source_digest(*files: str) -> str:
    """Digest (:func:`code_digest`) of :func:`digested_paths` and of ``files``, with the
    :data:`VERSIONED` packages' versions: stored points are reused only by the same code under
    the same numerical libraries."""
    roots, paths = digested_paths()
    paths |= {Path(f) for f in files if f}
    now = versions()
    stamp = ";".join(f"{n}={now[n]}" for n in VERSIONED)
    return code_digest(paths, roots) + hashlib.sha256(stamp.encode()).hexdigest()[:8]


def stale_claims(store: ResultsStore, hashes: Mapping[str, str], budget: str, seed: int,
                 backend: str) -> dict[str, str]:
    """``claim id -> why`` for the claims of ``hashes`` (``id -> current config hash``) whose
    store holds points at ``budget``/``seed``/``backend`` under another configuration: those
    points are not reused (their code, grid, law or numerical libraries differ), and the run
    says so."""
    why: dict[str, str] = {}
    for r in store.rows(budget=budget, base_seed=seed, backend=backend):
        cid = r["claim"]
        if cid not in hashes or cid in why or r["config_hash"] == hashes[cid]:
            continue
        why[cid] = _stale_reason(r)
    return why


def _stale_reason(row: Mapping[str, Any]) -> str:
    """Why a stored row's configuration is not the current one: the versions that differ
    (Python too: the code digest is taken of each module's syntax tree, whose form changes
    between Python versions), else other code, grid, replicates or law."""
    now, old = versions(), row.get("versions") or {}
    changed = [f"{k} {old[k]} → {now[k]}" for k in now
               if k in old and k != "bilevel-theory" and old[k] != now[k]]
    return ("computed under " + ", ".join(changed) if changed else
            "computed by other code, grid, replicates or law")


def _measure_file(m: Any) -> str:
    while isinstance(m, functools.partial):
        m = m.func
    module = sys.modules.get(getattr(m, "__module__", "") or "")
    return getattr(module, "__file__", "") or ""


def config_hash(claim: Claim, budget: str, noise_distribution: str = "gaussian") -> str:
    """Hash of what determines a claim's stored rows at ``budget``: id, grid, replicates,
    tolerance, law value, the measure's module and qualified name, a digest of the code that
    computes it, and the oracles' default noise law when it is not Gaussian (16 hex digits)."""
    measure = claim.measure_for(budget)
    spec = {
        "code": _source_digest(_measure_file(measure)),
        "id": claim.id, "budget": budget,
        "grid": [float(v) for v in claim.grid[budget]],
        "replicates": int(claim.replicates[budget]),
        "tolerance": float(claim.tolerance), "law": repr(float(claim.law.value)),
        "measure": _measure_name(measure),
    }
    if noise_distribution != "gaussian":
        spec["noise_distribution"] = check_noise_distribution(noise_distribution)
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def _metrics_from(claim: Claim, out: Any, replicates: int) -> dict[str, list[float]]:
    """Validate ``measure``'s output and turn it into per-replicate float lists."""
    if not isinstance(out, Mapping):
        raise TypeError(f"claim {claim.id}: `measure` must return a mapping of arrays, got "
                        f"{type(out).__name__}")
    if "value" not in out:
        raise ValueError(f"claim {claim.id}: `measure` returned no 'value' (got {sorted(out)})")
    metrics = {}
    for name, arr in out.items():
        if hasattr(arr, "get") and not isinstance(arr, Mapping | np.ndarray):
            arr = arr.get()  # a CuPy array
        try:
            a = np.asarray(arr, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"claim {claim.id}: metric {name!r} is not numeric") from None
        if a.ndim == 0:
            a = np.full(replicates, float(a))
        if a.shape != (replicates,):
            raise ValueError(f"claim {claim.id}: metric {name!r} has shape {a.shape}, "
                             f"expected ({replicates},)")
        metrics[str(name)] = [float(v) for v in a]
    return metrics


# ---------------------------------------------------------------------------------- tasks

class MeasureError(RuntimeError):
    """A claim's ``measure`` raised (a bug in the claim or the algorithm, not bad input:
    reported with its traceback, naming the claim, the point and the seed)."""


def _resolve(task: Task) -> Claim:
    if task.claim is not None:
        return task.claim
    return load(task.catalogue)[task.claim_id].for_backend(task.backend)


def run_point(task: Task) -> list[dict]:
    """Run one task: a claim's sweep point (:func:`run_task`) or one algorithm of the cost
    comparison (``costs.<algorithm>``, :func:`verify.costs.run_cost_task`)."""
    from . import costs  # noqa: PLC0415

    if task.claim_id.startswith(costs.PREFIX):
        return costs.run_cost_task(task)
    return run_task(task)


def run_task(task: Task) -> list[dict]:
    """Run one sweep point; return its store rows (one per replicate)."""
    claim = _resolve(task)
    start = time.perf_counter()
    try:
        with default_noise_distribution(task.noise_distribution):
            out = claim.measure_for(task.budget)(task.x, task.replicates, task.seed, task.backend)
    except Exception as err:
        raise MeasureError(f"claim {claim.id}: `measure` failed at point {task.index} "
                           f"({claim.variable}={task.x:g}, seed {task.seed}): "
                           f"{type(err).__name__}: {err}") from err
    seconds = time.perf_counter() - start
    metrics = _metrics_from(claim, out, task.replicates)
    common = {"claim": claim.id, "budget": task.budget, "point": task.index,
              "value": float(task.x), "replicates": task.replicates, "backend": task.backend,
              "versions": versions(), "config_hash": task.config_hash, "seed": task.seed,
              "base_seed": task.base_seed, "seconds": seconds,
              "peak_rss_mib": peak_rss_bytes() / 2**20}
    if task.noise_distribution != "gaussian":
        common["noise_distribution"] = task.noise_distribution
    return [{**common, "replicate": r, "metrics": {k: v[r] for k, v in metrics.items()}}
            for r in range(task.replicates)]


# ------------------------------------------------------------------------------ executors

class SerialExecutor(Executor):
    """In-process, in order (``workers=1``)."""

    def run(self, fn, tasks):
        for task in tasks:
            yield task, fn(task)


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_parent(parent: int) -> None:
    """End this process when ``parent`` dies: ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` on Linux,
    and a thread that watches the parent PID (everywhere, and a fallback)."""
    import signal  # noqa: PLC0415
    import threading  # noqa: PLC0415

    if sys.platform.startswith("linux"):
        try:
            import ctypes  # noqa: PLC0415

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - no prctl: the watcher alone
            pass
    if os.getppid() != parent:  # the parent died before the death signal was armed
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


#: in a pool worker: the shared array where each point's start time is written
_point_starts: Any = None


def _worker_init(parent: int, starts: Any = None) -> None:
    """A pool worker: dies with its parent; ignores Ctrl-C (the parent stops the pool);
    writes when it starts each point into ``starts`` (shared with the parent)."""
    import signal  # noqa: PLC0415

    global _point_starts
    _point_starts = starts
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent)


def _timed(fn: Callable[[Task], list[dict]], i: int, task: Task) -> list[dict]:
    """Run ``fn(task)`` in a pool worker, first writing the start time of task number ``i``
    (``time.monotonic``, system-wide) for the parent's point timeout."""
    if _point_starts is not None:
        _point_starts[i] = time.monotonic()
    return fn(task)


class ProcessPoolExecutor(Executor):
    """A local ``concurrent.futures`` process pool (``spawn`` context) of ``workers``.

    Workers die with the parent process (:func:`_die_with_parent`; Linux's death signal
    follows the thread that started them, the one iterating :meth:`run`, which outlives the
    pool) and ignore Ctrl-C.  When a
    worker dies (killed, out of memory) the pool breaks: the points that finished are kept,
    the pool is restarted and the unfinished points are resubmitted; a point that was in
    flight when workers died more than ``retries`` times ends the run with
    :class:`WorkersLost` naming it.  A point running for more than ``point_timeout`` seconds
    (``None``: no limit; timed from when a worker starts it, :func:`_timed`) ends the run with
    :class:`PointTimeout` naming it, and :meth:`close` kills every worker (``SIGKILL``, which
    also ends a stopped one).
    """

    #: how often the pool's state is sampled (which points are in flight when a worker dies)
    POLL_SECONDS = 0.2

    def __init__(self, workers: int, retries: int = 2, point_timeout: float | None = None
                 ) -> None:
        self.workers = workers
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ValueError(f"`retries` must be a non-negative integer, got {retries!r}")
        self.retries = retries
        self.point_timeout = (None if point_timeout is None
                              else check_point_timeout(point_timeout, ""))
        self.restarts = 0
        self._pool: cf.ProcessPoolExecutor | None = None
        self._finished = True
        self._saved: dict[str, str | None] = {}

    #: one BLAS thread per worker: the instances are small, and several processes each
    #: running a multi-threaded BLAS on the same cores stall one another (measured up to 100×)
    BLAS_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")

    def _start(self, size: int, starts: Any) -> cf.ProcessPoolExecutor:
        if not self._saved:
            # workers start on demand, so the variables stay set until close() (the parent's
            # own BLAS is already loaded and unaffected)
            self._saved = {k: os.environ.get(k) for k in self.BLAS_ENV}
            os.environ.update({k: "1" for k in self.BLAS_ENV})
        self._pool = cf.ProcessPoolExecutor(
            max_workers=size, mp_context=multiprocessing.get_context("spawn"),
            initializer=_worker_init, initargs=(os.getpid(), starts))
        return self._pool

    def run(self, fn, tasks):
        if not tasks:
            return
        from concurrent.futures.process import BrokenProcessPool  # noqa: PLC0415

        self._finished = False
        pending = dict(enumerate(tasks))  # task number -> task, not yet yielded
        lost: dict[int, int] = {}  # task number -> times its workers died under it
        # when a worker started each task (0: not started); written by the workers only
        starts = multiprocessing.get_context("spawn").RawArray("d", len(tasks))
        while pending:
            for i in pending:
                starts[i] = 0.0
            pool = self._start(min(self.workers, len(pending)), starts)
            futures = {pool.submit(_timed, fn, i, t): i for i, t in pending.items()}
            not_done, broken, in_flight = set(futures), False, set()
            progress = 0.0  # when a point of this pool was last seen finished (0: none yet)
            while not_done:
                running = [futures[f] for f in not_done if f.running()]
                in_flight = set(running)
                if self.point_timeout is not None:
                    self._check_timeout(tasks, running, starts, progress)
                done, not_done = cf.wait(not_done, timeout=self.POLL_SECONDS,
                                         return_when=cf.FIRST_COMPLETED)
                progress = time.monotonic() if done else progress
                for fut in done:
                    err = fut.exception()
                    if isinstance(err, BrokenProcessPool):
                        broken = True
                        continue
                    if err is not None:
                        raise err
                    i = futures[fut]
                    del pending[i]
                    yield tasks[i], fut.result()
                if broken:
                    break
            if not broken:
                break
            # a worker died, and the pool with it: what finished is kept (above); the points
            # in flight are blamed (all unfinished ones if the sample missed them), the rest
            # is resubmitted to a fresh pool
            for fut in not_done:
                fut.cancel()
            self._shutdown(kill=True)
            self.restarts += 1
            blamed = (in_flight & set(pending)) or set(pending)
            for i in blamed:
                lost[i] = lost.get(i, 0) + 1
            over = sorted(i for i in blamed if lost[i] > self.retries)
            if over:
                names = ", ".join(f"{tasks[i].claim_id} point {tasks[i].index} "
                                  f"(x={tasks[i].x:g})" for i in over[:5])
                more = f" and {len(over) - 5} more" if len(over) > 5 else ""
                raise WorkersLost(
                    f"local worker processes died (killed, or out of memory?) "
                    f"{lost[over[0]]} times while running {names}{more}; the points "
                    "finished so far are stored, rerun to resume")
            import warnings  # noqa: PLC0415

            warnings.warn(f"a local worker process died (killed, or out of memory?); "
                          f"{len(pending)} unfinished point(s) resubmitted to a fresh pool "
                          f"(restart {self.restarts})", RuntimeWarning, stacklevel=2)
        self._finished = True

    def _check_timeout(self, tasks: Sequence[Task], running: list[int], starts: Any,
                       progress: float) -> None:
        """:class:`PointTimeout` when the oldest point a worker started has run longer than
        the point timeout, or when the points handed to the workers were none started and
        none finished for that long (a worker stopped while taking a point stalls the
        pool's queue; while the workers start up, ``progress`` is 0: not timed)."""
        now = time.monotonic()
        started = [i for i in running if starts[i] > 0]
        if started:
            i = min(started, key=starts.__getitem__)
            detail = f"running for {now - starts[i]:.1f} s in a local worker process"
            seconds = now - starts[i]
        elif running and progress > 0:
            i, seconds = running[0], now - progress
            detail = (f"handed to the local workers, which started no point and finished "
                      f"none for {seconds:.1f} s")
        else:
            return
        if seconds > self.point_timeout:
            raise PointTimeout(timeout_message(tasks[i], self.point_timeout,
                                               f"{detail}; every worker was killed"))

    #: seconds the workers of a finished run have to exit before they are killed (a stopped
    #: worker never reads the pool's request to exit)
    EXIT_SECONDS = 5.0

    def _shutdown(self, kill: bool) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        procs = list(getattr(pool, "_processes", {}).values())
        if not kill:  # every point is in: the workers exit, or are killed after EXIT_SECONDS
            pool.shutdown(wait=False, cancel_futures=True)
            deadline = time.monotonic() + self.EXIT_SECONDS
            for proc in procs:
                proc.join(max(0.0, deadline - time.monotonic()))
        # interrupted, broken or timed out: stop the workers now, not after their points
        # (SIGKILL, which also ends a stopped worker: SIGTERM would wait for SIGCONT)
        for proc in procs:
            try:
                if proc.is_alive():
                    proc.kill()
            except Exception:  # noqa: BLE001 - already gone
                pass
        pool.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        self._shutdown(kill=not self._finished)
        self._finished = True
        for k, v in self._saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        self._saved = {}


def _point_limit(point_timeout: Any, budget: str, workers: int, scheduler: Any
                 ) -> float | None:
    """The point timeout in seconds (:func:`verify.executor.check_point_timeout`); one given
    for a run in process (``workers=1``, no ``scheduler``) is warned about: nothing times it."""
    limit = check_point_timeout(point_timeout, budget)
    if point_timeout and workers == 1 and scheduler is None:
        import warnings  # noqa: PLC0415

        warnings.warn("`point_timeout` limits the points run by worker processes (workers ≥ 2 "
                      "or a scheduler); a point run in this process is not timed",
                      RuntimeWarning, stacklevel=3)
    return limit


def make_executor(workers: int = 1, scheduler: Any = None,
                  point_timeout: float | None = None) -> Executor:
    """The executor for ``workers`` local processes, or, with ``scheduler`` (an address
    ``tcp://HOST:PORT`` or a ``distributed.Client``), a :class:`verify.distributed.DaskExecutor`
    on that Dask cluster (``workers`` must then stay 1: the cluster's workers run the points).
    Without dask installed, a ``scheduler`` raises ``DistributedUnavailable`` (a ``ValueError``
    naming the extra ``distributed``).  ``point_timeout``: seconds a point may run on a worker
    (``None``: no limit; in process, ``workers=1``, there is no worker to stop)."""
    if isinstance(workers, bool) or not isinstance(workers, int | np.integer) or workers < 1:
        raise ValueError(f"`workers` must be an integer ≥ 1, got {workers!r}")
    if scheduler is not None:
        if workers != 1:
            raise ValueError(f"`workers` ({workers}) sets the local process pool; with "
                             "`scheduler` the cluster's workers run the points (leave "
                             "`workers` at 1)")
        from .distributed import DaskExecutor  # noqa: PLC0415

        return DaskExecutor(scheduler, point_timeout=point_timeout)
    if workers == 1:
        return SerialExecutor()
    return ProcessPoolExecutor(int(workers), point_timeout=point_timeout)


def _progress(total: int, enabled: bool, desc: str):
    from tqdm.auto import tqdm  # noqa: PLC0415

    disable = not enabled or not sys.stderr.isatty()
    return tqdm(total=total, desc=desc, unit="pt", file=sys.stderr, disable=disable,
                leave=False)


# --------------------------------------------------------------------------------- results

@dataclass
class Result:
    """A claim's verdict with the numbers behind it (``to_dict`` gives the summary entry)."""

    id: str
    verdict: str
    expected: str
    measured: float
    interval: tuple[float, float]
    predicted: float
    reason: str
    seconds: float
    budget: str
    status: str = "complete"
    points: int = 0
    total_points: int = 0
    seed: int | None = None
    backend: str | None = None
    fit: Fit | None = None
    contrast_fit: Fit | None = None
    details: dict[str, Any] = field(default_factory=dict)
    claim: Claim | None = field(default=None, repr=False, compare=False)
    #: for a claim run with ``mutants=True``: one entry per mutant (name, change, verdict,
    #: caught); see :func:`attach_power`
    power: list[dict[str, Any]] | None = None

    @property
    def as_expected(self) -> bool:
        """True when the verdict equals the claim's expected verdict."""
        return self.verdict == self.expected

    def to_dict(self) -> dict[str, Any]:
        """The ``summary.json`` entry (strict JSON: non-finite numbers become ``None``)."""
        c = self.claim
        d: dict[str, Any] = {
            "id": self.id, "verdict": self.verdict, "expected": self.expected,
            "as_expected": self.as_expected,
            "measured": self.measured, "interval": list(self.interval),
            "predicted": self.predicted, "reason": self.reason, "seconds": self.seconds,
            "budget": self.budget, "status": self.status, "points": self.points,
            "total_points": self.total_points, "seed": self.seed, "backend": self.backend,
        }
        if c is not None:
            d.update({
                "role": c.role, "mutant_of": c.mutant_of,
                "mutants": [{"name": m.name, "change": m.change, "kind": m.kind}
                            for m in c.mutants],
                "conditions": c.check_conditions(self.budget),
                "conditions_note": c.conditions_note,
                "window_reason": c.window_reason, "window_derived": c.window_derived,
                "paper": c.paper, "source": c.source, "statement": c.statement,
                "kind": c.kind, "variable": c.variable, "quantity": c.quantity,
                "scale": c.scale, "window": list(c.window) if c.window else None,
                "schedule": c.schedule, "touches": list(c.touches),
                "law_value": c.law.value, "law_latex": c.law.latex,
                "law_derivation": c.law.derivation, "tolerance": c.tolerance,
                "max_width": c.max_width, "expected_reason": c.reason,
                "series": dict(c.extra.get("series", {})) if c.extra else {},
                "replicates": int(c.replicates[self.budget]),
                "grid": [float(v) for v in c.grid[self.budget]],
            })
        if self.power is not None:
            d["power"] = self.power
        d["fit"] = self.fit.to_dict() if self.fit is not None else None
        if self.contrast_fit is not None:
            d["contrast_fit"] = self.contrast_fit.to_dict()
        if self.details:
            d["details"] = self.details
        return _jsonable(d)


def attach_power(results: Sequence[Result]) -> list[Result]:
    """Give every claim whose mutants are among ``results`` its ``power`` (one entry per
    mutant: did the verdict flip to what the mutant requires?); returns the claims' results
    (the mutants' own results are folded into their claim's entry)."""
    by_base: dict[str, list[Result]] = {}
    for r in results:
        if r.claim is not None and r.claim.mutant_of:
            by_base.setdefault(r.claim.mutant_of, []).append(r)
    out = []
    for r in results:
        if r.claim is not None and r.claim.mutant_of:
            continue
        if r.id in by_base:
            changes = {m.name: m.change for m in r.claim.mutants} if r.claim else {}
            kinds = {m.name: m.kind for m in r.claim.mutants} if r.claim else {}
            power = []
            for m in by_base[r.id]:
                name = m.id.partition(MUTANT_SEP)[2]
                power.append({"mutant": name, "change": changes.get(name, ""),
                          "kind": kinds.get(name, ""),
                              "verdict": m.verdict, "required": m.expected,
                              "caught": m.as_expected, "measured": m.measured,
                              "interval": list(m.interval), "reason": m.reason})
            r.power = power
        out.append(r)
    return out


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, bool | np.bool_):
        return bool(obj)
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        return float(obj) if np.isfinite(obj) else None
    return obj


def evaluate(claim: Claim, budget: str, points: Mapping[int, list[dict]], base_seed: int,
             n_boot: int = N_BOOT) -> Result:
    """A :class:`Result` from stored rows ``point index -> rows`` (complete points only)."""
    grid = list(claim.grid[budget])
    total = len(grid)
    nan = float("nan")
    common = {"id": claim.id, "expected": claim.expected, "budget": budget,
              "total_points": total, "claim": claim, "seed": base_seed}
    if not points:
        return Result(verdict="inconclusive", measured=nan, interval=(nan, nan),
                      predicted=float(claim.law.value), reason="not run", seconds=0.0,
                      status="missing", points=0, **common)
    indices = sorted(points)
    x = [float(points[i][0]["value"]) for i in indices]
    metrics = []
    for i in indices:
        rows = points[i]
        names = rows[0]["metrics"].keys()
        metrics.append({n: np.array([r["metrics"].get(n, nan) for r in rows], dtype=float)
                        for n in names})
    seconds = float(sum(points[i][0].get("seconds", 0.0) for i in indices))
    a = assess(claim, x, metrics, seed=fit_seed(base_seed, claim.id), n_boot=n_boot)
    status = "complete" if len(indices) == total else "partial"
    reason = a.reason
    if status == "partial":
        reason = f"partial run ({len(indices)} of {total} points): {reason}"
    return Result(verdict=a.verdict, measured=a.measured, interval=a.interval,
                  predicted=a.predicted, reason=reason, seconds=seconds, status=status,
                  points=len(indices), backend=points[indices[0]][0].get("backend"),
                  fit=a.fit, contrast_fit=a.contrast_fit, details=a.details, **common)


def _tasks(claim: Claim, budget: str, seed: int, backend: str, catalogue: str | None,
           done: Iterable[int], noise_distribution: str = "gaussian") -> list[Task]:
    in_catalogue = False
    try:
        listed = load(catalogue).get(claim.id)
        in_catalogue = (listed is not None and listed.for_backend(backend) is claim
                        and not (catalogue is None and is_registered_at_runtime(claim.id)))
    except Exception:  # noqa: BLE001 - an unloadable catalogue: send the claim itself
        in_catalogue = False
    cfg = config_hash(claim, budget, noise_distribution)
    done = set(done)
    R = int(claim.replicates[budget])
    return [Task(claim.id, catalogue, None if in_catalogue else claim, budget, i, float(x), R,
                 point_seed(seed, claim.id, i), seed, backend, cfg, noise_distribution)
            for i, x in enumerate(claim.grid[budget]) if i not in done]


def _execute(tasks: Sequence[Task], executor: Executor, sink: Callable[[list[dict]], None],
             progress: bool, desc: str) -> float:
    """Run ``tasks``, handing each point's rows to ``sink`` as it finishes; the executor is
    closed however this ends (an interruption stops its workers at once).  Returns the
    largest peak memory (MiB) a worker reported with a point (0 without tasks)."""
    bar = _progress(len(tasks), progress, desc)
    lines = progress and not sys.stderr.isatty()  # CI logs: one line per finished claim
    left = Counter(t.claim_id for t in tasks)
    claims, started, peak = len(left), time.perf_counter(), 0.0
    finished = executor.run(run_point, tasks)
    try:
        for task, rows in finished:
            sink(rows)
            peak = max(peak, rows[0].get("peak_rss_mib", 0.0) if rows else 0.0)
            bar.set_postfix_str(task.claim_id, refresh=False)
            bar.update(1)
            left[task.claim_id] -= 1
            if lines and left[task.claim_id] == 0:
                done = claims - sum(1 for v in left.values() if v)
                print(f"{desc}: {done}/{claims} {task.claim_id} "
                      f"({time.perf_counter() - started:.0f} s, worker peak {peak:.0f} MiB)",
                      file=sys.stderr, flush=True)
    finally:
        bar.close()
        try:
            close = getattr(finished, "close", None)
            if close is not None:
                close()
        finally:
            executor.close()
    return peak


def _claim_of(claim: Claim | str, catalogue: str | None) -> Claim:
    if isinstance(claim, Claim):
        return claim
    if not isinstance(claim, str):
        raise TypeError(f"`claim` must be a Claim or a claim id, got {type(claim).__name__}")
    claims = load(catalogue)
    try:
        return claims[claim]
    except KeyError:
        select(claim, claims)  # raises with close matches when nothing matches
        raise ValueError(f"no claim with id {claim!r} (did you mean one of "
                         f"{[c.id for c in select(claim, claims)][:5]}?)") from None


def check(claim: Claim | str, budget: str = "smoke", seed: int = 0, backend: str = "numpy",
          store: ResultsStore | str | os.PathLike | None = None, *, workers: int = 1,
          catalogue: str | None = None, progress: bool = False, n_boot: int = N_BOOT,
          scheduler: Any = None, noise_distribution: str = "gaussian",
          point_timeout: float | None = None) -> Result:
    """Run ``claim`` (a :class:`Claim` or an id) at ``budget`` and judge it.

    With ``store`` (a :class:`ResultsStore` or a directory), points already stored are reused
    and new points are appended; without, everything is kept in memory.  ``workers`` local
    processes, or a Dask cluster at ``scheduler`` (see :func:`make_executor`).
    ``noise_distribution``: the oracles' law where an instance chooses none
    (:func:`~bilevel_theory.problems.oracle.default_noise_distribution`; part of the config
    hash when not Gaussian).  ``point_timeout``: seconds a point may run on a worker before
    the run ends with :class:`PointTimeout` (default: the budget's,
    :data:`verify.executor.POINT_TIMEOUT`; 0: no limit).
    """
    _check_budget(budget)
    seed = _check_seed(seed)
    _check_backend(backend)
    noise = check_noise_distribution(noise_distribution)
    limit = _point_limit(point_timeout, budget, workers, scheduler)
    claim = _claim_of(claim, catalogue).for_backend(backend)
    executor = make_executor(workers, scheduler, limit)
    if store is None:
        stored: dict[int, list[dict]] = {}
        tasks = _tasks(claim, budget, seed, backend, catalogue, (), noise)

        def sink(rows):
            stored[rows[0]["point"]] = json.loads(json.dumps(rows))

        _execute(tasks, executor, sink, progress, claim.id)
        return evaluate(claim, budget, stored, seed, n_boot)
    if not isinstance(store, ResultsStore):
        store = ResultsStore(store)
    store.ensure_writable()
    cfg = config_hash(claim, budget, noise)
    with store.writer():
        done = store.completed(claim.id, budget, cfg, seed, backend)
        _execute(_tasks(claim, budget, seed, backend, catalogue, done, noise), executor,
                 store.append_point, progress, claim.id)
    return evaluate(claim, budget, store.points(claim.id, budget, cfg, seed, backend), seed,
                    n_boot)


def run_suite(pattern: str | None = None, budget: str = "smoke", out: str | os.PathLike = "results",
              backend: str = "numpy", workers: int = 1, seed: int = 0, progress: bool = True,
              *, catalogue: str | None = None, scheduler: Any = None,
              n_boot: int = N_BOOT, costs: bool | None = None,
              mutants: bool = False, claims: Sequence[Claim] | None = None,
              noise_distribution: str = "gaussian",
              point_timeout: float | None = None) -> list[Result]:
    """Run every claim matching ``pattern`` into ``out`` (resuming), judge, and write
    ``out/summary.json`` and ``out/run.json``.  Returns the results in catalogue order.
    Points run on ``workers`` local processes, or on the Dask cluster at ``scheduler``
    (``tcp://HOST:PORT`` or a ``distributed.Client``; see :func:`make_executor`).
    ``costs`` adds the per-algorithm cost comparison (:mod:`verify.costs`); by default it runs
    with the whole papers' catalogue (no pattern).  ``mutants`` also runs every selected
    claim under each of its mutants (:meth:`Claim.under`); their results are returned after
    the claims' (each mutant's ``as_expected`` says whether the claim caught it) and folded
    into the claims' ``power`` in ``summary.json``.  ``claims``: run these (already selected,
    e.g. with filters) instead of ``select(pattern)``.  ``noise_distribution``: as in
    :func:`check` (the per-algorithm costs run only with the Gaussian default).
    ``point_timeout``: as in :func:`check`.  A run that ends early (:class:`WorkersLost`,
    :class:`PointTimeout`, :class:`SchedulerLost`, Ctrl-C) keeps the points finished and marks
    ``run.json`` ``"status": "interrupted"`` with its ``"reason"``; one whose measure raised,
    ``"failed"``."""
    started, cpu0 = time.perf_counter(), cpu_clock()
    _check_budget(budget)
    seed = _check_seed(seed)
    _check_backend(backend)
    noise = check_noise_distribution(noise_distribution)
    limit = _point_limit(point_timeout, budget, workers, scheduler)
    if claims is None:
        claims = select(pattern, load(catalogue))
    claims = [c.for_backend(backend) for c in claims]
    if mutants:
        claims += [m for c in claims for m in c.mutated()]
    executor = make_executor(workers, scheduler, limit)
    store = ResultsStore(out)
    store.ensure_writable()
    # one writer per results directory (a second run there is refused: StoreInUse)
    with store.writer():
        meta = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "package_version": versions()["bilevel-theory"], "backend": backend, "budget": budget,
            "seed": seed, "pattern": pattern, "catalogue": catalogue, "workers": int(workers),
            "mutants": bool(mutants), "noise_distribution": noise, "point_timeout": limit,
            "scheduler": getattr(executor, "address", None),
            "claims": [c.id for c in claims], "status": "running",
            "machine": {"platform": platform.platform(), "processor": platform.machine(),
                        "cpu_count": os.cpu_count()},
            "python": platform.python_version(), "numpy": np.__version__, "argv": list(sys.argv),
        }
        _write_json(Path(out) / RUN, meta)  # first, so that an interrupted run keeps its catalogue
        with contextlib.suppress(FileNotFoundError):  # the summary of an earlier run: stale now
            (Path(out) / SUMMARY).unlink()
        tasks: list[Task] = []
        hashes = {c.id: config_hash(c, budget, noise) for c in claims}
        stale = stale_claims(store, hashes, budget, seed, backend)
        if stale and progress:
            first = next(iter(stale))
            print(f"verify: {len(stale)} claim(s) have stored points that are not reused and "
                  f"are recomputed: e.g. {first}: {stale[first]}", file=sys.stderr, flush=True)
        meta["recomputed_stale"] = stale
        for claim in claims:
            done = store.completed(claim.id, budget, hashes[claim.id], seed, backend)
            tasks += _tasks(claim, budget, seed, backend, catalogue, done, noise)
        if costs is None:
            costs = catalogue is None and not pattern and noise == "gaussian"
        if costs:  # the algorithms of the selected claims' papers only, on the same workers
            from .costs import algorithms_of, cost_tasks  # noqa: PLC0415

            tasks = cost_tasks(out, budget, seed, backend, algorithms_of(claims)) + tasks
        finished = [0]

        def sink(rows: list[dict]) -> None:
            store.append_point(rows)
            finished[0] += 1

        def end(status: str, **extra: Any) -> None:
            """``run.json`` and the run-log line of this call (its cost so far)."""
            cost = run_cost(started, cpu0, local=getattr(executor, "address", None) is None)
            _write_json(Path(out) / RUN, {**meta, "status": status, **extra, **cost})
            _append_run(Path(out), meta, status, len(claims), finished[0], cost)

        try:
            worker_peak = _execute(tasks, executor, sink, progress, "verify")
        except KeyboardInterrupt:
            end("interrupted", reason="interrupted (Ctrl-C or SIGTERM)")
            raise
        except Exception as err:  # run.json says why the run ended; the stored points stay
            end("interrupted" if isinstance(err, WorkersLost) else "failed",
                reason=f"{type(err).__name__}: {err}")
            raise
        results = [evaluate(c, budget, store.points(c.id, budget, config_hash(c, budget, noise), seed,
                                                    backend), seed, n_boot)
                   for c in claims]
        _write_json(Path(out) / SUMMARY, [r.to_dict() for r in attach_power(results)])
        end("complete", points_run=len(tasks), costs=bool(costs), worker_peak_rss_mib=worker_peak,
            main_peak_rss_mib=peak_rss_bytes() / 2**20)
        return results


def cpu_clock() -> tuple[float, float]:
    """User + system CPU seconds so far of this process and of its children that have been
    waited for (a local pool's workers, once it is closed)."""
    try:
        import resource  # noqa: PLC0415  (POSIX only)
    except ImportError:  # no children's clock: the process's own
        return time.process_time(), 0.0
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def run_cost(started: float, cpu0: tuple[float, float], local: bool = True) -> dict[str, Any]:
    """Wall and CPU seconds since ``started`` (``time.perf_counter``) and ``cpu0``
    (:func:`cpu_clock`): ``runtime_seconds`` and ``cpu_seconds`` ``{"main", "workers"}``
    (``workers``: the local worker processes, ``None`` when the points ran on a Dask
    cluster, whose workers' clocks are not this process's)."""
    main, kids = (now - then for now, then in zip(cpu_clock(), cpu0, strict=True))
    return {"runtime_seconds": time.perf_counter() - started,
            "cpu_seconds": {"main": main, "workers": kids if local else None}}


def _append_run(out: Path, meta: Mapping[str, Any], status: str, claims: int, points: int,
                   cost: Mapping[str, Any]) -> None:
    """One line in ``out/runs.jsonl`` for this call of :func:`run_suite`."""
    keys = ("date", "budget", "seed", "backend", "workers", "scheduler", "mutants",
            "noise_distribution")
    line = {**{k: meta[k] for k in keys}, "ended": datetime.now(UTC).isoformat(timespec="seconds"),
            "status": status, "claims": claims, "points_finished": points, **cost}
    with open(out / RUNS, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(_jsonable(line), allow_nan=False) + "\n")


def read_runs(results_dir: str | os.PathLike) -> list[dict[str, Any]]:
    """The run log of a results directory (``runs.jsonl``): one entry per call of
    :func:`run_suite` that ran its points, oldest first (``[]`` when absent); a line that is not
    valid JSON (a call killed while writing it) is skipped."""
    path = Path(results_dir) / RUNS
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    out = []
    for line in text.splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            entry = json.loads(line)
            if isinstance(entry, dict):
                out.append(entry)
    return out


def runs_cost(entries: Iterable[Mapping[str, Any]], **match: Any) -> dict[str, Any]:
    """The summed cost of the run-log entries whose fields equal ``match`` (e.g.
    ``budget="full", seed=0``): ``segments``, ``points_finished``, ``runtime_seconds`` and
    ``cpu_seconds`` (main + workers; ``None`` when a segment ran on a Dask cluster)."""
    chosen = [e for e in entries if all(e.get(k) == v for k, v in match.items())]
    cpu: float | None = 0.0
    for e in chosen:
        c = e.get("cpu_seconds") or {}
        if cpu is not None and c.get("workers") is not None:
            cpu += float(c["main"]) + float(c["workers"])
        else:
            cpu = None
    return {"segments": len(chosen),
            "points_finished": sum(int(e.get("points_finished", 0)) for e in chosen),
            "runtime_seconds": sum(float(e.get("runtime_seconds", 0.0)) for e in chosen),
            "cpu_seconds": cpu}


def read_json(path: Path, label: str = "") -> Any:
    """Parse a JSON file; a missing, unreadable, non-regular (a FIFO is never waited on) or
    invalid file, or one nested too deeply, is a one-line error naming it (``label``
    prefixes the path, e.g. ``"baseline"``)."""
    import stat  # noqa: PLC0415

    name = f"{label} {path}" if label else str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise FileNotFoundError(f"{name}: no such file") from None
    except OSError as err:
        raise OSError(f"{name}: cannot be read ({err.strerror or err})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{name}: not a regular file")
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read()
    except OSError as err:
        raise OSError(f"{name}: cannot be read ({err.strerror or err})") from None
    finally:
        os.close(fd)
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise ValueError(f"{name}: not UTF-8 text ({err.reason})") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"{name}: not valid JSON ({err})") from None
    except RecursionError:
        raise ValueError(f"{name}: JSON nested too deeply to be read") from None


def _write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (temporary file, then rename); on any error the temporary file
    is removed and the ``OSError`` names ``path``."""
    path = Path(path)
    text = (json.dumps(_jsonable(data), indent=2, allow_nan=False) + "\n").encode()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o644)
        try:
            view = memoryview(text)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException as err:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(err, OSError):
            raise OSError(err.errno, f"cannot write {path}: {err.strerror or err}") from None
        raise


def _latest_run(store: ResultsStore, claim: Claim, budget: str | None, seed: int | None = None
                ) -> tuple[Claim, str, str, int | None, str | None]:
    """``(claim as run, budget, config_hash, base_seed, backend)`` of the claim's latest stored
    run of base seed ``seed`` (any seed when ``None``; the claim as run:
    :meth:`Claim.for_backend` of the run's backend)."""
    rows = store.rows(claim.id, budget, base_seed=seed)
    for r in reversed(rows):
        b, ran = r["budget"], claim.for_backend(r.get("backend"))
        noise = r.get("noise_distribution", "gaussian")
        if b in BUDGETS and noise in NOISE_DISTRIBUTIONS and (
                r["config_hash"] == config_hash(ran, b, noise)):
            return ran, b, r["config_hash"], r.get("base_seed"), r.get("backend")
    b = budget or "smoke"
    return claim, b, config_hash(claim, b), None, None


def read_run(results_dir: str | os.PathLike) -> dict[str, Any]:
    """``run.json`` of a results directory (``{}`` when absent); one-line errors naming it."""
    path = Path(results_dir) / RUN
    if not os.path.lexists(path):
        return {}
    info = read_json(path)
    if not isinstance(info, dict):
        raise ValueError(f"{path}: must be a JSON object (the run's metadata)")
    seed = info.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ValueError(f"{path}: 'seed' must be a non-negative integer, got {seed!r}")
    for key in ("budget", "catalogue"):
        if info.get(key) is not None and not isinstance(info[key], str):
            raise ValueError(f"{path}: {key!r} must be a string, got {info[key]!r}")
    if not isinstance(info.get("claims") or [], list):
        raise ValueError(f"{path}: 'claims' must be a list of claim ids")
    return info


def stored_seeds(results_dir: str | os.PathLike) -> list[int]:
    """The base seeds of the rows in ``results_dir/results.jsonl`` (sorted)."""
    return sorted({r["base_seed"] for r in ResultsStore(results_dir).rows()
                   if r.get("base_seed") is not None})


def summarize(results_dir: str | os.PathLike, claims: Iterable[Claim | str] | None = None,
              budget: str | None = None, *, catalogue: str | None = None,
              n_boot: int = N_BOOT, seed: int | None = None) -> list[dict]:
    """Summary entries rebuilt from ``results_dir/results.jsonl`` alone (no experiment rerun,
    never ``summary.json``, which an interrupted rerun leaves stale).

    ``claims``: claims or ids (default: the catalogue's claims that have rows in the store or
    were selected by the run recorded in ``run.json``, in catalogue order; pass
    ``verify.CLAIMS.values()`` for the whole catalogue).  ``catalogue``: default, the one
    recorded in ``run.json``, else the papers' catalogue.  ``budget``: default, the budget of
    ``run.json`` or else each claim's latest stored budget.  ``seed``: the base seed whose
    rows are summarized; default, the seed of ``run.json`` (the run asked for), else each
    claim's latest stored seed.  For each claim, rows of its current definition (config hash)
    from its latest stored run of that seed (and its backend) are used; a claim without rows
    is ``missing`` (verdict ``inconclusive``, reason ``not run``), one with some points
    ``partial`` (fitted on the points there are).
    """
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise FileNotFoundError(f"results directory {results_dir} does not exist")
    run_info = read_run(results_dir)
    if catalogue is None:
        catalogue = run_info.get("catalogue")
    if budget is None:
        budget = run_info.get("budget")
    if budget is not None:
        _check_budget(budget)
    if seed is None:
        seed = run_info.get("seed")
    else:
        seed = _check_seed(seed)
    store = ResultsStore(results_dir)
    if claims is None:
        stored = {r["claim"] for r in store.rows()}
        named = set(run_info.get("claims") or ())
        chosen = [c for cid, c in load(catalogue).items() if cid in stored or cid in named]
        chosen += [m for c in chosen for m in c.mutated() if m.id in stored or m.id in named]
    else:
        chosen = [_claim_of(c, catalogue) for c in claims]
    out = []
    for claim in chosen:
        ran, b, cfg, base_seed, backend = _latest_run(store, claim, budget, seed)
        points = ({} if base_seed is None and backend is None
                  else store.points(claim.id, b, cfg, base_seed, backend))
        if base_seed is None:
            base_seed = seed if seed is not None else 0
        result = evaluate(ran, b, points, base_seed, n_boot)
        if not points and (stored := store.rows(claim.id, b, base_seed=seed)):
            # rows there are, but none of the current configuration: say why, not "not run"
            result.reason = (f"not run by this code: its {len(stored)} stored rows were "
                             f"{_stale_reason(stored[-1])}; rerun to recompute them")
        out.append(result)
    return [r.to_dict() for r in attach_power(out)]
