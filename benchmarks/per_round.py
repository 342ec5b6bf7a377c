"""CPU seconds of one round of every algorithm, this tree against earlier commits.

``python -m benchmarks.per_round --version now=. --version start=PATH --version ref=PATH``
times ``algorithm.step`` (one outer round, ``k = 0``, on a fresh context) of every registered
algorithm at ``n`` clients, all of them taking part (``sampled_clients = n`` where the
algorithm samples), for each source tree given (a checkout of another commit, e.g. made with
``git worktree add``).  Each (algorithm, ``n``, tree) runs in a fresh process whose
``bilevel_theory`` is imported from that tree alone (``python -S`` with the tree first on
``PYTHONPATH``; the process reports the file it imported and the driver checks it), and the
trees alternate: case ``k`` runs them in an order rotated by ``k``, so a change of the
machine's load hits every tree alike.  Time is CPU time of the process
(``time.process_time``; the machine is shared, wall time is not), BLAS pinned to one thread
once around the timed rounds (as ``run_algorithm`` does), the best of at least
:data:`MIN_REPEATS` rounds and :data:`MIN_CPU` seconds.

The exponent in ``n`` is the least-squares slope of ``log t`` on ``log n`` over the sizes
``n ≥ FIT_FROM`` (below it a round's fixed per-call cost dominates), fixed before measuring.
Writes ``benchmarks/results/per_round.json`` and prints the Markdown table of
``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import site
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .common import cpu_model

SIZES = (10, 100, 1_000, 10_000)
#: the largest size, run only for the algorithms whose round at 10⁴ predicts (× 10) < 10 s
LARGEST = 100_000
LARGEST_LIMIT = 10.0
FIT_FROM = 1_000
MIN_REPEATS, MIN_CPU, MAX_REPEATS = 3, 0.5, 200
#: algorithms timed at ``n ≥ 10³`` in the first tree only: the older trees' APHE is quadratic
#: to cubic in ``m`` (minutes per round); the first tree's is linear (``benchmarks.afbo_scale``)
FIRST_TREE_ONLY = ("afbo", "afbo_naive", "afbo_sync")
#: fixed hyperparameters (the rest are each algorithm's defaults); only those it accepts
HYPERPARAMETERS: dict[str, Any] = dict(inner_steps=5, local_steps=2, neumann_steps=10)

WORKER = r"""
import json, sys, time, dataclasses
import numpy as np
import bilevel_theory as bt
try:
    from bilevel_theory.problems import QuadraticBilevel, QuadraticMinimax, backend
    from bilevel_theory.problems.families import Shared
except ImportError:  # older trees: the layers are top-level packages
    from problems import QuadraticBilevel, QuadraticMinimax, backend
    from problems.families import Shared
import contextlib
single_thread_blas = getattr(backend, "single_thread_blas", contextlib.nullcontext())
name, n, fixed, min_repeats, min_cpu, max_repeats = json.loads(sys.argv[1])
out = dict(file=bt.__file__)
if name not in bt.ALGORITHMS:
    print(json.dumps(dict(out, missing=True))); sys.exit(0)
cls = bt.ALGORITHMS[name]
kind = "bilevel" if "bilevel" in cls.kinds else cls.kinds[0]
size = dict(clients=n, dim_x=10, dim_y=10, kappa=10.0, noise=0.1, seed=0)
if kind == "minimax":
    prob = QuadraticMinimax.random(**size)
else:
    prob = QuadraticBilevel.random(heterogeneity=0.5, **size)
if name == "fedsvrg":  # single level: an upper level independent of y
    prob = dataclasses.replace(prob, R=Shared(np.zeros((10, 10)), n),
                               S=Shared(np.zeros((10, 10)), n), q=np.zeros((n, 10)))
prob.constants
hp = {k: v for k, v in fixed.items() if k in cls.defaults}
if "sampled_clients" in cls.defaults:
    hp["sampled_clients"] = n
algorithm = cls(prob, **hp)
times = []
with np.errstate(all="ignore"), single_thread_blas:
    while len(times) < max_repeats and (len(times) < min_repeats or sum(times) < min_cpu):
        ctx = bt.make_context(prob, 1, len(times))
        state = algorithm.init(ctx)
        start = time.process_time()
        algorithm.step(ctx, state, 0)
        times.append(time.process_time() - start)
print(json.dumps(dict(out, kind=kind, seconds=min(times), median=float(np.median(times)),
                      repeats=len(times), hyperparameters=hp)))
"""


def measure(tree: Path, name: str, n: int) -> dict[str, Any]:
    """One fresh process on ``tree``: the best CPU seconds of ``name``'s round at ``n``."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tree), *site.getsitepackages()]),
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    args = json.dumps([name, n, HYPERPARAMETERS, MIN_REPEATS, MIN_CPU, MAX_REPEATS])
    done = subprocess.run([sys.executable, "-S", "-c", WORKER, args], cwd=tree, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return dict(error=done.stderr.strip().splitlines()[-1] if done.stderr else "failed")
    row = json.loads(done.stdout.strip().splitlines()[-1])
    imported = Path(row.pop("file")).resolve()
    if tree.resolve() not in imported.parents:
        raise RuntimeError(f"{name} at n={n}: imported {imported}, not from {tree}")
    return row


def exponent(sizes: list[int], seconds: list[float]) -> float | None:
    """Least-squares slope of ``log t`` on ``log n`` over ``n ≥ FIT_FROM`` (two sizes at least)."""
    pts = [(math.log(n), math.log(t)) for n, t in zip(sizes, seconds)
           if n >= FIT_FROM and t and t > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    return (sum((a - mx) * (b - my) for a, b in pts) / sum((a - mx) ** 2 for a, _ in pts))


def run(trees: dict[str, Path], algorithms: list[str], sizes: tuple[int, ...],
        largest: bool, log=print) -> dict[str, Any]:
    """Every case, trees alternating; returns the results document."""
    labels = list(trees)
    rows: dict[str, dict[str, dict[int, Any]]] = {a: {v: {} for v in labels} for a in algorithms}
    case = 0

    def time_case(name: str, n: int) -> None:
        """One (algorithm, ``n``) case in every tree, the trees' order rotated case by case
        (the first tree alone for :data:`FIRST_TREE_ONLY` at ``n ≥ 10³``)."""
        nonlocal case
        k = case % len(labels)
        order = (labels[:1] if n >= 1_000 and name in FIRST_TREE_ONLY
                 else labels[k:] + labels[:k])
        case += 1
        for label in order:
            rows[name][label][n] = measure(trees[label], name, n)
        log(f"  {name:18s} n={n:>6d}  " + "  ".join(
            f"{v}={_fmt(rows[name][v][n])}" for v in order))

    for name in algorithms:
        for n in sorted(set(sizes)):
            time_case(name, n)
        at = rows[name][labels[0]].get(10_000, {}).get("seconds")
        if largest and at is not None and 10 * at < LARGEST_LIMIT:
            time_case(name, LARGEST)
    table = {}
    for name in algorithms:
        table[name] = {}
        for label in labels:
            ns = sorted(rows[name][label])
            secs = [rows[name][label][n].get("seconds") for n in ns]
            table[name][label] = dict(
                seconds={str(n): s for n, s in zip(ns, secs)},
                cases={str(n): rows[name][label][n] for n in ns},
                exponent=exponent(ns, secs))
    return dict(trees={k: describe(v) for k, v in trees.items()}, sizes=list(sizes),
                cpu_model=cpu_model(), cores=os.cpu_count(),
                largest=LARGEST if largest else None, fit_from=FIT_FROM,
                hyperparameters=HYPERPARAMETERS, min_repeats=MIN_REPEATS, min_cpu=MIN_CPU,
                timer="time.process_time, best round",
                first_tree_only_at_large_n=list(FIRST_TREE_ONLY),
                algorithms=table)


def describe(tree: Path) -> str:
    """``tree``'s commit (short hash), ``+ uncommitted changes`` when its files differ."""
    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True,
                              check=False)
        return done.stdout.strip() if done.returncode == 0 else ""
    head = git("rev-parse", "--short", "HEAD") or "unknown commit"
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return head + (" + uncommitted changes" if dirty else "")


def _fmt(row: dict[str, Any]) -> str:
    if "seconds" in row:
        return f"{row['seconds'] * 1e3:.3g} ms"
    return "missing" if row.get("missing") else "error"


def markdown(doc: dict[str, Any]) -> str:
    """The table: per algorithm and ``n``, ms per round for each tree, and the exponents."""
    labels = list(doc["trees"])
    sizes = sorted({int(n) for a in doc["algorithms"].values() for v in a.values()
                    for n in v["seconds"]})
    head = "| algorithm | tree | " + " | ".join(f"n = {n:,}" for n in sizes) + " | exponent |"
    lines = [head, "|" + "---|" * (len(sizes) + 3)]
    for name, per in doc["algorithms"].items():
        for label in labels:
            secs = per[label]["seconds"]
            cells = []
            for n in sizes:
                s = secs.get(str(n))
                cells.append("—" if s is None else f"{s * 1e3:.3g} ms")
            e = per[label]["exponent"]
            lines.append(f"| {name} | {label} | " + " | ".join(cells)
                         + f" | {'—' if e is None else f'{e:.2f}'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="append", required=True, metavar="LABEL=TREE",
                        help="a source tree to time (repeatable; the first is the reference "
                             "of the n = 10⁵ rule)")
    parser.add_argument("--algorithms", nargs="*", default=None)
    parser.add_argument("--sizes", nargs="*", type=int, default=list(SIZES))
    parser.add_argument("--no-largest", action="store_true", help="skip n = 10⁵")
    parser.add_argument("--json", default="benchmarks/results/per_round.json")
    args = parser.parse_args(argv)
    trees = {}
    for item in args.version:
        label, _, path = item.partition("=")
        if not label or not path or not Path(path, "bilevel_theory").is_dir():
            parser.error(f"--version must be LABEL=TREE with TREE a source tree, got {item!r}")
        trees[label] = Path(path).resolve()
    if any(n < 1 for n in args.sizes):
        parser.error("--sizes must be positive integers")
    if args.algorithms is None:
        listed = subprocess.run([sys.executable, "-S", "-c",
                                 "import bilevel_theory as bt; print(' '.join(bt.ALGORITHMS))"],
                                cwd=trees[next(iter(trees))], capture_output=True, text=True,
                                env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                                    [str(trees[next(iter(trees))]), *site.getsitepackages()])),
                                check=True)
        args.algorithms = listed.stdout.split()
    start = time.time()
    doc = run(trees, args.algorithms, tuple(args.sizes), not args.no_largest)
    doc["wall_seconds"] = time.time() - start
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")
    print(markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
