"""Speedup of the vectorized FedMBO round over the per-client Python loop of the same math.

The loop (:func:`benchmarks.reference.fedmbo_round_reference`) replays the random draws of a
recorded vectorized round, so it computes the same numbers (checked here and in
``tests/test_benchmarks.py``).  It is exactly linear in the replicates (each is an independent
loop iteration), so for ``R`` replicates it is timed on the first ``timed_replicates`` and
extrapolated linearly; the JSON says when.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .reference import (
    ReferenceData,
    fedmbo_round_reference,
    record_fedmbo_round,
    touched_clients,
)
from .rounds import HYPERPARAMETERS, round_case


def speedup_case(problem, replicates: int, sampled_clients: int, backend: str,
                 timed_replicates: int = 2, seed: int = 0,
                 vectorized: dict[str, Any] | None = None) -> dict[str, Any]:
    """Reference seconds / vectorized seconds for one FedMBO round at ``(R, n)``.

    ``vectorized``: a :func:`benchmarks.rounds.round_case` row of the same case to reuse.
    """
    hp = dict(HYPERPARAMETERS["fedmbo"], sampled_clients=sampled_clients)
    k = min(replicates, timed_replicates)
    rec = record_fedmbo_round(problem, k, seed, hp)
    data = ReferenceData.build(problem, touched_clients(rec["tape"]))
    start = time.perf_counter()
    x, y = fedmbo_round_reference(problem, data, rec["tape"], rec["x0"], rec["y0"], rec["hp"])
    ref_seconds = time.perf_counter() - start
    err = max(float(np.abs(x - rec["x"]).max()), float(np.abs(y - rec["y"]).max()))
    scale = max(float(np.abs(rec["x"]).max()), float(np.abs(rec["y"]).max()), 1.0)
    ref_total = ref_seconds * replicates / k
    if vectorized is None:
        vectorized = round_case(problem, "fedmbo", replicates, sampled_clients, backend, seed,
                                repeats=3, budget=3.0, measure_memory=True)
    vec = vectorized["seconds_per_round"]
    return dict(
        algorithm="fedmbo", clients=problem.clients, dim=problem.dim_x,
        storage=problem.spec.get("storage"), noise=problem.grad_noise,
        noise_distribution=problem.spec.get("noise_distribution", "gaussian"),
        hessian_noise=problem.hessian_noise, replicates=replicates,
        sampled_clients=sampled_clients, vectorized_seconds=vec,
        vectorized_peak_memory_bytes=vectorized.get("peak_memory_bytes"),
        reference_seconds=ref_total, reference_timed_replicates=k,
        reference_extrapolated=k < replicates,
        reference_seconds_per_client_eval=ref_seconds / max(
            1.0, k * sum(vectorized["oracle_calls_per_replicate"].values())),
        reference_max_abs_diff=err, reference_matches=bool(err <= 1e-10 * scale),
        speedup=ref_total / vec,
    )
