"""The executor protocol shared by the runner and the distributed executors (a leaf module).

:class:`Task` is one sweep point of one claim, :class:`Executor` runs tasks and yields their
store rows, :class:`WorkersLost` reports workers that died.  The implementations live in
:mod:`bilevel_theory.verify.runner` (serial, local processes) and
:mod:`bilevel_theory.verify.distributed` (a Dask cluster); both import this module, neither the
other at import time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

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


class Executor:
    """Runs tasks, yielding ``(task, rows)`` as they finish (any order)."""

    def run(self, fn: Callable[[Task], list[dict]], tasks: Sequence[Task]
            ) -> Iterator[tuple[Task, list[dict]]]:
        raise NotImplementedError

    def close(self) -> None:
        """Release workers (stopping those still running after an interruption)."""
