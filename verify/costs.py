"""Communication and oracle cost of every bilevel algorithm on one common instance.

Users choose algorithms by what it costs to reach a target: each algorithm runs with its
default hyperparameters on the same noise-free, mildly heterogeneous instance, and for every
replicate the first round ``k`` from which ``‖∇Φ(x_j)‖² ≤ target·‖∇Φ(x_0)‖²`` for all
``j ≥ k`` gives the cumulative ledger there (communication rounds, gradient, Hessian-vector and Jacobian-vector calls).
Algorithms that stop at a biased point (see their docstrings) may never reach the target:
``reached = 0`` and the costs are NaN.  Rows go to the results store under the ids
``costs.<algorithm>`` (read by the reports); a rerun skips what is stored.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Iterable

import numpy as np

from bilevel_theory import ALGORITHMS, run
from bilevel_theory.problems import QuadraticBilevel

from .claim import BUDGETS
from .executor import Task
from .store import ResultsStore, versions

INSTANCE = dict(clients=20, dim_x=5, dim_y=5, kappa=5.0, heterogeneity=0.1, noise=0.0, seed=0)
TARGET = 1e-2
ROUNDS = {"smoke": 300, "standard": 1000, "full": 3000}
REPLICATES = {"smoke": 2, "standard": 8, "full": 32}
#: single-level FedSVRG optimizes f(x, ·) only: its stationarity is not ‖∇Φ‖²
EXCLUDED = frozenset({"fedsvrg"})
PREFIX = "costs."


def algorithms() -> list[str]:
    """The bilevel algorithms compared (every registered one that accepts a bilevel problem)."""
    return sorted(n for n, cls in ALGORITHMS.items() if "bilevel" in cls.kinds and n not in EXCLUDED)


def algorithms_of(claims: Iterable) -> list[str]:
    """The compared algorithms (:func:`algorithms`) of the papers of ``claims``: those defined
    in the module ``bilevel_theory.<paper>`` named by a claim's paper (its first word,
    e.g. ``"FedNest 2022"`` -> ``fednest``) or by its id prefix."""
    papers = set()
    for c in claims:
        papers.add(c.paper.split()[0].lower() if c.paper.split() else "")
        papers.add(c.id.split(".")[0].lower())
    return [n for n in algorithms() if ALGORITHMS[n].__module__.rsplit(".", 1)[-1] in papers]


def _config_hash(name: str, budget: str) -> str:
    spec = dict(algorithm=name, instance=INSTANCE, target=TARGET, rounds=ROUNDS[budget],
                replicates=REPLICATES[budget])
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def cost_to_target(trace, target: float = TARGET) -> dict[str, np.ndarray]:
    """Per replicate: the ledger at the first round from which ``‖∇Φ‖²`` stays at or below
    ``target·‖∇Φ(x_0)‖²`` until the end of the run (a random estimator can dip below the
    target by chance and leave it again: that does not count as reaching it)."""
    stat = trace.stationarity
    below = stat <= target * stat[:, :1]
    settled = np.flip(np.logical_and.accumulate(np.flip(below, axis=1), axis=1), axis=1)
    reached = settled[:, -1]
    first = np.where(reached, settled.argmax(axis=1), 0)
    led = trace.ledger
    out = {"reached": reached.astype(float), "target": np.full(len(stat), target),
           "final_stationarity": stat[:, -1] / stat[:, 0]}
    for name in ("rounds", "grad_calls", "hvp_calls", "jvp_calls"):
        out[f"{name}_to_target"] = np.where(reached, getattr(led, name)[first], np.nan)
    return out


def cost_tasks(out: str, budget: str, seed: int, backend: str,
               names: Iterable[str] | None = None) -> list[Task]:
    """The cost comparison of the algorithms ``names`` (default: all) not yet stored at
    ``out``, as executor tasks (one per algorithm, run by :func:`run_cost_task` on the same
    workers as the claims' points)."""
    if budget not in BUDGETS:
        raise ValueError(f"`budget` must be one of {list(BUDGETS)}, got {budget!r}")
    store = ResultsStore(out)
    names = algorithms() if names is None else list(names)
    return [Task(PREFIX + n, None, None, budget, 0, TARGET, REPLICATES[budget], seed, seed,
                 backend, _config_hash(n, budget))
            for n in names if not store.completed(PREFIX + n, budget, _config_hash(n, budget),
                                                  seed, backend)]


def run_cost_task(task: Task) -> list[dict]:
    """One algorithm's cost to the target (a task of :func:`cost_tasks`): its store rows."""
    name = task.claim_id.removeprefix(PREFIX)
    start = time.perf_counter()
    trace = run(name, QuadraticBilevel.random(**INSTANCE), rounds=ROUNDS[task.budget],
                replicates=task.replicates, seed=task.seed, backend=task.backend)
    metrics = cost_to_target(trace)
    common = dict(claim=task.claim_id, budget=task.budget, point=0, value=TARGET,
                  replicates=task.replicates, backend=task.backend, versions=versions(),
                  config_hash=task.config_hash, seed=task.seed, base_seed=task.base_seed,
                  seconds=time.perf_counter() - start)
    return [{**common, "replicate": r, "metrics": {k: float(v[r]) for k, v in metrics.items()}}
            for r in range(task.replicates)]


def measure_costs(out: str, budget: str = "smoke", seed: int = 0, backend: str = "numpy",
                  names: Iterable[str] | None = None, progress: bool = False) -> list[str]:
    """Run the cost comparison of the algorithms ``names`` (default: all) into the store at
    ``out``, in this process; returns the ids computed now (``verify`` runs the same tasks
    on its workers instead).  ``progress``: one line on stderr per algorithm run."""
    store = ResultsStore(out)
    tasks = cost_tasks(out, budget, seed, backend, names)
    started = time.perf_counter()
    for i, task in enumerate(tasks, 1):
        store.append_point(run_cost_task(task))
        if progress:
            print(f"costs: {i}/{len(tasks)} {task.claim_id} "
                  f"({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    return [t.claim_id for t in tasks]
