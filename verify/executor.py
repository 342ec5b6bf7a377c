"""The executor protocol shared by the runner and the distributed executors (a leaf module).

:class:`Task` is one sweep point of one claim, :class:`Executor` runs tasks and yields their
store rows, :class:`WorkersLost` reports workers that died, :class:`PointTimeout` a point
that outran ``--point-timeout`` (a stopped or hung worker) and :class:`SchedulerLost` a Dask
scheduler lost mid-run; :func:`check_point_timeout` gives a budget's point timeout.  The
implementations live in :mod:`bilevel_theory.verify.runner` (serial, local processes) and
:mod:`bilevel_theory.verify.distributed` (a Dask cluster); both import this module, neither the
other at import time.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .claim import Claim


@dataclass(frozen=True)
class Task:
    """One sweep point of one claim."""

    claim_id: str
    catalogue: str | None
    claim: Claim | None  # sent only when the claim is not in the named catalogue
    budget: str
    index: int
    x: float
    replicates: int
    seed: int
    base_seed: int
    backend: str
    config_hash: str
    noise_distribution: str = "gaussian"  # the oracles' default law (verify --noise-distribution)


class WorkersLost(RuntimeError):
    """Worker processes died (killed, out of memory) while running the same points more
    than the retries allow, or a cluster kept no worker; names the points.  The points
    finished so far are stored: rerunning resumes."""


class PointTimeout(WorkersLost):
    """A point ran longer than the point timeout (its worker stopped, e.g. by ``SIGSTOP``,
    or hung); the run ends, the local workers are killed, the points finished are stored."""


class SchedulerLost(WorkersLost):
    """The Dask scheduler was lost mid-run (the client could not reconnect); the points
    finished are stored: rerunning resumes."""


#: Default seconds a point may run before the run ends with :class:`PointTimeout`, by budget:
#: the slowest smoke point of the papers' catalogue takes about 20 s, and every algorithm run
#: is refused above about an hour of one core (``hyperparameters.MAX_WORK``), so these leave
#: a point many runs' worth of time; ``--point-timeout 0`` lifts the limit.
POINT_TIMEOUT = {"smoke": 1800.0, "standard": 7200.0, "full": 28800.0}


def check_point_timeout(value: Any, budget: str) -> float | None:
    """Seconds a point may run: ``None`` means the budget's default (:data:`POINT_TIMEOUT`),
    ``0`` no limit (returned as ``None``); ``ValueError`` naming ``point_timeout`` unless a
    finite number ≥ 0."""
    if value is None:
        return POINT_TIMEOUT.get(budget, max(POINT_TIMEOUT.values()))
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not math.isfinite(value) or value < 0:
        raise ValueError(f"`point_timeout` must be a finite number of seconds ≥ 0 (0: no "
                         f"limit), got {value!r}")
    return float(value) or None  # 0: no limit


def timeout_message(task: Task, limit: float, detail: str) -> str:
    """The :class:`PointTimeout` message: the claim, the point, the seconds (``detail``: how
    long it ran, where, what was done)."""
    return (f"claim {task.claim_id}: point {task.index} (x={task.x:g}, seed {task.seed}) did "
            f"not finish within the point timeout of {limit:g} s ({detail}; a stopped or hung "
            "worker?); the points finished so far are stored, rerun to resume (a longer "
            "limit: --point-timeout SECONDS, 0 for none)")


class Executor:
    """Runs tasks, yielding ``(task, rows)`` as they finish (any order)."""

    def run(self, fn: Callable[[Task], list[dict]], tasks: Sequence[Task]
            ) -> Iterator[tuple[Task, list[dict]]]:
        raise NotImplementedError

    def close(self) -> None:
        """Release workers (stopping those still running after an interruption)."""
