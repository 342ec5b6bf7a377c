"""Peak resident memory of a FedMBO round on a very large instance, in a fresh subprocess.

``python -m benchmarks.memory --clients 1000000 --dim 10`` builds a structured instance,
computes its constants, runs ``run("fedmbo", ..., rounds=1)`` and prints one JSON line with the
child's peak RSS (``VmHWM``: the whole process, interpreter, instance, constants and round
included) and the stage timings.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any


def child(clients: int, dim: int, replicates: int, sampled_clients: int, backend: str) -> dict:
    """Runs inside the subprocess."""
    from bilevel_theory import run  # noqa: PLC0415
    from bilevel_theory.problems import QuadraticBilevel  # noqa: PLC0415
    from bilevel_theory.problems.backend import peak_rss_bytes  # noqa: PLC0415

    from .common import synchronize  # noqa: PLC0415
    from .rounds import HYPERPARAMETERS  # noqa: PLC0415

    out: dict[str, Any] = dict(clients=clients, dim=dim, replicates=replicates,
                               sampled_clients=sampled_clients, backend=backend,
                               rss_after_import_bytes=peak_rss_bytes())
    t0 = time.perf_counter()
    problem = QuadraticBilevel.random(clients=clients, dim_x=dim, dim_y=dim, kappa=10.0,
                                      heterogeneity=0.5, noise=0.1, seed=0,
                                      storage="structured")
    t1 = time.perf_counter()
    out["rss_after_build_bytes"] = peak_rss_bytes()
    problem.constants  # noqa: B018
    t2 = time.perf_counter()
    out["rss_after_constants_bytes"] = peak_rss_bytes()
    hp = dict(HYPERPARAMETERS["fedmbo"], sampled_clients=sampled_clients)
    trace = run("fedmbo", problem, rounds=1, replicates=replicates, seed=0, backend=backend,
                **hp)
    synchronize(backend)
    t3 = time.perf_counter()
    out.update(instance_bytes=problem.nbytes, build_seconds=t1 - t0, constants_seconds=t2 - t1,
               round_seconds=t3 - t2, diverged=bool(trace.diverged.any()),
               peak_rss_bytes=peak_rss_bytes())
    return out


def peak_rss(clients: int, dim: int, replicates: int, sampled_clients: int, backend: str,
             limit_bytes: float = 4e9, timeout: float = 900.0) -> dict[str, Any]:
    """Run :func:`child` in a fresh interpreter and report its peak RSS against ``limit``."""
    cmd = [sys.executable, "-m", "benchmarks.memory", "--clients", str(clients), "--dim",
           str(dim), "--replicates", str(replicates), "--sampled-clients", str(sampled_clients),
           "--backend", backend]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=root,
                          env=env)
    if proc.returncode != 0:
        return dict(clients=clients, dim=dim, error=proc.stderr.strip()[-2000:],
                    limit_bytes=limit_bytes, met=False)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out.update(limit_bytes=limit_bytes, met=bool(out["peak_rss_bytes"] < limit_bytes),
               method="peak RSS (VmHWM) of a fresh subprocess: interpreter + instance "
                      "build + constants + one run('fedmbo', rounds=1)")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory")
    parser.add_argument("--clients", type=int, default=1_000_000)
    parser.add_argument("--dim", type=int, default=10)
    parser.add_argument("--replicates", type=int, default=4)
    parser.add_argument("--sampled-clients", type=int, default=10_000)
    parser.add_argument("--backend", default="numpy", choices=("numpy", "cupy"))
    args = parser.parse_args(argv)
    print(json.dumps(child(args.clients, args.dim, args.replicates, args.sampled_clients,
                           args.backend)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
