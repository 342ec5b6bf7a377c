"""Sweeps on a Dask cluster: ``verify --scheduler tcp://HOST:PORT`` (the extra ``distributed``).

:class:`DaskExecutor` connects a ``dask.distributed.Client`` to an existing scheduler and
submits the ``(claim, point)`` tasks of :mod:`verify.runner` to it; the parent process gathers
them with ``as_completed`` and stays the only writer of the store (each finished point is
appended as it arrives, so an interruption loses nothing already finished).  Tasks carry claim
ids and the catalogue spec, so the workers need this package installed (the claims' measures
are imported there, as in the local process pool); results do not depend on the executor
because every point's seed is derived from the base seed, the claim and the point.

**Lost workers.**  A worker that dies (killed, out of memory) closes its connection to the
scheduler, which then reschedules the tasks that were running or stored there on the other
workers (a hung worker is detected by the scheduler's heartbeat timeout,
``distributed.scheduler.worker-ttl``).  A task that was on
``distributed.scheduler.allowed-failures`` dying workers fails with ``KilledWorker``; such a
task, or one whose future was cancelled by the cluster, is resubmitted under a fresh key up
to ``resubmits`` times.  A task whose measure *raised* is retried ``retries`` times by Dask,
then the error is raised in the parent (naming the claim, the point and the seed).  Every
point is yielded, hence written, exactly once.  A client that loses its scheduler tries to
reconnect for the connection timeout, then the run ends with
:class:`verify.executor.SchedulerLost` (the
points already stored are kept; rerunning resumes) and exit code 3 on the command line.  A
task that the scheduler reports running on a worker for more than ``point_timeout`` seconds
(a worker stopped by ``SIGSTOP`` or hung, which the scheduler notices only after
``worker-ttl``, 5 minutes by default) ends the run with :class:`verify.executor.PointTimeout`
naming the claim, the point and the worker (whose process belongs to the cluster: it is not
killed, the run's tasks are cancelled).  A cluster that has no worker at all
(every worker lost, none ever joined) for ``no_workers_timeout`` seconds ends the run with
:class:`verify.executor.WorkersLost` (default 60 s; environment
``BILEVEL_THEORY_NO_WORKERS_TIMEOUT``); a worker that joins within that time resumes the run.

dask is imported lazily: without it, asking for a scheduler raises
:class:`DistributedUnavailable` (a ``ValueError`` and an ``ImportError``) naming the extra.
The connection timeout is ``timeout`` seconds, by default Dask's
``distributed.comm.timeouts.connect`` (environment: ``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT``).
"""

from __future__ import annotations

import os
import re
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from .executor import (
    Executor,
    PointTimeout,
    SchedulerLost,
    Task,
    WorkersLost,
    check_point_timeout,
    timeout_message,
)

EXTRA = "pip install 'bilevel-theory[distributed]'"
POLL_SECONDS = 0.05
#: how often the cluster's workers are counted while waiting for results
WORKER_CHECK_SECONDS = 0.5
NO_WORKERS_ENV = "BILEVEL_THEORY_NO_WORKERS_TIMEOUT"
NO_WORKERS_TIMEOUT = 60.0
PROTOCOLS = ("tcp", "tls", "ucx", "ws", "wss", "inproc")
_ADDRESS = re.compile(r"^(?P<proto>[A-Za-z][A-Za-z0-9+.-]*)://(?P<location>\S+)$")
_HOST_PORT = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[^\s:/\[\]]+):(?P<port>\d{1,5})$")


class DistributedUnavailable(ImportError, ValueError):
    """``dask.distributed`` is not installed (the optional extra ``distributed``)."""


def _import_distributed():
    try:
        import distributed  # noqa: PLC0415
    except ImportError as err:
        raise DistributedUnavailable(
            f"`scheduler`: dask.distributed is not installed ({err}); install the "
            f"'distributed' extra: {EXTRA}", name="distributed") from None
    return distributed


def check_address(address: Any) -> str:
    """A scheduler address ``PROTOCOL://HOST:PORT`` (``HOST:PORT`` means ``tcp://HOST:PORT``);
    ``ValueError``/``TypeError`` naming ``scheduler`` otherwise."""
    if not isinstance(address, str):
        raise TypeError(f"`scheduler` must be an address like 'tcp://HOST:PORT', got "
                        f"{type(address).__name__}")
    text = address.strip()
    if "://" not in text:
        text = f"tcp://{text}"
    m = _ADDRESS.match(text)
    if m is None or m["proto"].lower() not in PROTOCOLS:
        raise ValueError(f"`scheduler` must be an address like 'tcp://HOST:PORT' (protocols "
                         f"{', '.join(PROTOCOLS)}), got {address!r}")
    if m["proto"].lower() in ("tcp", "tls", "ws", "wss"):
        hp = _HOST_PORT.match(m["location"])
        if hp is None or not 0 < int(hp["port"]) < 65536:
            raise ValueError(f"`scheduler` must be an address like 'tcp://HOST:PORT' with a "
                             f"port in 1..65535, got {address!r}")
    return text


def _check_count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"`{name}` must be a non-negative integer, got {value!r}")
    return value


def _no_workers_timeout(value: float | None) -> float:
    source = "`no_workers_timeout`"
    if value is None:
        text = os.environ.get(NO_WORKERS_ENV, "").strip()
        if not text:
            return NO_WORKERS_TIMEOUT
        source = f"environment variable {NO_WORKERS_ENV}"
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"{source} must be a positive number of seconds, got "
                             f"{text!r}") from None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"{source} must be a positive number of seconds, got {value!r}")
    return float(value)


def _processing(client: Any) -> dict[str, str] | None:
    """``task key -> worker address`` of the tasks running on the cluster's workers (``None``
    when the scheduler cannot be asked)."""
    if client.status != "running":
        return None
    try:
        return {str(k): w for w, keys in client.processing().items() for k in keys}
    except Exception:  # noqa: BLE001 - a lost scheduler is reported by the status check
        return None


def _count_workers(client: Any) -> int | None:
    """The number of workers the scheduler knows (``None`` when it cannot be asked)."""
    if client.status != "running":  # reconnecting: nothing to ask
        return None
    try:
        return len(client.nthreads())
    except Exception:  # noqa: BLE001 - a lost scheduler is reported by the status check
        return None


class DaskExecutor(Executor):
    """Runs tasks on the Dask cluster at ``scheduler`` (an address, or a connected
    ``distributed.Client``, which is then used as is and left open).

    ``retries``: Dask's retries of a task whose function raised; ``resubmits``: resubmissions
    of a task lost with its workers (``KilledWorker``) or cancelled by the cluster;
    ``timeout``: seconds to connect (default: Dask's ``distributed.comm.timeouts.connect``);
    ``no_workers_timeout``: seconds the cluster may have no worker before the run ends
    (default: environment ``BILEVEL_THEORY_NO_WORKERS_TIMEOUT``, else 60);
    ``point_timeout``: seconds a task may run on a worker (``None``: no limit).
    """

    def __init__(self, scheduler: Any, *, retries: int = 2, resubmits: int = 2,
                 timeout: float | None = None, no_workers_timeout: float | None = None,
                 point_timeout: float | None = None) -> None:
        distributed = _import_distributed()
        self.retries = _check_count("retries", retries)
        self.resubmits = _check_count("resubmits", resubmits)
        if timeout is not None and (isinstance(timeout, bool)
                                    or not isinstance(timeout, int | float) or not timeout > 0):
            raise ValueError(f"`timeout` must be a positive number of seconds, got {timeout!r}")
        self.timeout = timeout
        self.no_workers_timeout = _no_workers_timeout(no_workers_timeout)
        self.point_timeout = (None if point_timeout is None
                              else check_point_timeout(point_timeout, ""))
        if isinstance(scheduler, distributed.Client):
            self._client: Any = scheduler
            self._own = False
            self.address = scheduler.scheduler.address if scheduler.scheduler else None
        else:
            self.address = check_address(scheduler)
            self._client = None
            self._own = True

    def _connect(self):
        if self._client is not None:
            return self._client
        from distributed import Client  # noqa: PLC0415

        kwargs = {} if self.timeout is None else {"timeout": self.timeout}
        try:
            self._client = Client(self.address, set_as_default=False, **kwargs)
        except OSError as err:  # TimeoutError included
            raise OSError(f"cannot connect to the dask scheduler at {self.address}: {err}") \
                from None
        return self._client

    def run(self, fn: Callable[[Task], list[dict]], tasks: Sequence[Task]):
        if not tasks:
            return
        from concurrent.futures import CancelledError  # noqa: PLC0415

        from distributed import KilledWorker, as_completed  # noqa: PLC0415

        client = self._connect()
        run = uuid.uuid4().hex[:12]
        pending: dict[Any, tuple[int, int]] = {}  # future -> (task number, attempt)

        def submit(i: int, attempt: int):
            t = tasks[i]
            fut = client.submit(fn, t, key=f"verify-{t.claim_id}-p{t.index}-{run}-{i}-{attempt}",
                                pure=False, retries=self.retries)
            pending[fut] = (i, attempt)
            return fut

        def lost(what: str) -> SchedulerLost:
            return SchedulerLost(f"{what} the dask scheduler at {self.address} after "
                                 f"{len(written)} of {len(tasks)} points; the points finished "
                                 "so far are stored, rerun to resume")

        def check_running(now: float) -> None:  # PointTimeout for a task running too long
            running = _processing(client)
            if running is None:
                return
            keys = {fut.key: fut for fut in pending}
            for key in list(since):
                if key not in running:
                    del since[key]
            for key in running:
                if key in keys:
                    since.setdefault(key, now)
            if since:
                key = min(since, key=since.__getitem__)
                if now - since[key] > self.point_timeout:
                    raise PointTimeout(timeout_message(
                        tasks[pending[keys[key]][0]], self.point_timeout,
                        f"running for {now - since[key]:.1f} s on the dask worker "
                        f"{running[key]} of {self.address}; the run's tasks were cancelled"))

        # results are fetched by as_completed as tasks finish (a finished point's rows are in
        # the parent before anything else can lose them); polled, so that a client that lost
        # its scheduler (and closed after failing to reconnect) ends the run instead of
        # waiting forever
        futures = as_completed([submit(i, 0) for i in range(len(tasks))], loop=client.loop,
                               with_results=True, raise_errors=False)
        written: set[int] = set()
        since: dict[str, float] = {}  # running task key -> when first seen running
        next_running = 0.0  # when the running tasks are next asked for (point timeout)
        next_check, idle_since = 0.0, None  # when the cluster was first seen without workers
        try:
            while pending:
                if self.point_timeout is not None and time.monotonic() >= next_running:
                    next_running = time.monotonic() + WORKER_CHECK_SECONDS
                    check_running(time.monotonic())
                if not futures.has_ready():
                    if client.status in ("closing", "closed"):
                        raise lost("lost the connection to")
                    now = time.monotonic()
                    if now >= next_check:
                        next_check = now + WORKER_CHECK_SECONDS
                        workers = _count_workers(client)
                        if workers == 0:
                            idle_since = now if idle_since is None else idle_since
                        elif workers is not None:
                            idle_since = None
                        if idle_since is not None \
                                and now - idle_since >= self.no_workers_timeout:
                            raise WorkersLost(
                                f"the dask cluster at {self.address} has had no worker for "
                                f"{now - idle_since:.1f} s (every worker lost?) with "
                                f"{len(pending)} point(s) unfinished; the points finished so "
                                "far are stored, rerun to resume (wait longer: "
                                f"{NO_WORKERS_ENV}=SECONDS)")
                    time.sleep(POLL_SECONDS)
                    continue
                fut, result = next(futures)
                i, attempt = pending.pop(fut)
                failure = None
                if fut.status == "error":
                    _, exc, tb = result
                    if not isinstance(exc, KilledWorker):
                        raise exc.with_traceback(tb)  # e.g. MeasureError, after the retries
                    failure = exc
                elif fut.cancelled() or isinstance(result, CancelledError):
                    failure = result
                if failure is not None:  # lost with its workers, or cancelled by the cluster
                    t = tasks[i]
                    if client.status in ("closing", "closed"):
                        raise lost("lost the connection to")
                    if attempt >= self.resubmits:
                        raise RuntimeError(
                            f"claim {t.claim_id}: point {t.index} was lost {attempt + 1} times "
                            f"on the dask cluster at {self.address} ({type(failure).__name__}: "
                            f"{failure}); the points finished so far are stored, rerun to "
                            "resume") from None
                    futures.add(submit(i, attempt + 1))
                    continue
                fut.release()
                if i in written:  # cannot happen (one future per task at a time); never twice
                    continue
                written.add(i)
                yield tasks[i], result
        finally:
            if pending and client.status == "running":
                try:
                    client.cancel(list(pending))
                except Exception:  # noqa: BLE001 - best effort while unwinding
                    pass
            pending.clear()

    def close(self) -> None:
        if self._client is not None and self._own:
            self._client.close()
            self._client = None
