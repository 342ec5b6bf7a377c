"""``python -m benchmarks [--quick] [--json OUT] [--backend numpy|cupy] ...``

Runs the performance benchmarks and prints Markdown tables; ``--json`` writes the
full document.  ``--blas-threads`` sets the BLAS thread count *before* numpy is imported (on a
machine shared with other jobs, one thread avoids OpenBLAS waiting on descheduled workers).
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true",
                        help="reduced grid (< 1 minute), for smoke tests")
    parser.add_argument("--json", metavar="OUT", help="write the results document here")
    parser.add_argument("--backend", default="numpy", choices=("numpy", "cupy"))
    parser.add_argument("--only", default="rounds,speedup,bandwidth,memory,fednest_loop",
                        help="comma-separated sections (default: all)")
    parser.add_argument("--blas-threads", type=int, default=None,
                        help="OPENBLAS/OMP/MKL thread count, set before numpy is imported")
    parser.add_argument("--full-bandwidth", action="store_true",
                        help="with --quick: the full grid's bandwidth cases (m up to 10⁶)")
    parser.add_argument("--speedup-sampled", type=int, default=None,
                        help="sampled clients of the speedup cases (default 10⁴)")
    parser.add_argument("--no-contention", action="store_true",
                        help="skip the bandwidth cases under busy processes")
    parser.add_argument("--max-case-seconds", type=float, default=None,
                        help="skip grid cases predicted to take longer (default 60; quick 10)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.blas_threads is not None:
        if "numpy" in sys.modules:
            print("warning: numpy already imported; --blas-threads may not take effect",
                  file=sys.stderr)
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(args.blas_threads)
    from dataclasses import replace  # noqa: PLC0415

    from .suite import QUICK, SECTIONS, Grid, markdown, run_suite  # noqa: PLC0415

    sections = tuple(s.strip() for s in args.only.split(",") if s.strip())
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown:
        print(f"error: unknown section(s) {unknown}; choose from {list(SECTIONS)}",
              file=sys.stderr)
        return 2
    grid = QUICK if args.quick else Grid()
    if args.full_bandwidth:
        grid = replace(grid, bandwidth_cases=Grid().bandwidth_cases, copy_bytes=Grid().copy_bytes)
    if args.speedup_sampled is not None:
        grid = replace(grid, speedup_sampled=args.speedup_sampled)
    if args.no_contention:
        grid = replace(grid, bandwidth_contention=False)
    if args.max_case_seconds is not None:
        grid = replace(grid, max_case_seconds=args.max_case_seconds)
    try:
        doc = run_suite(quick=args.quick, backend=args.backend, sections=sections, grid=grid)
    except Exception as err:  # noqa: BLE001  (a missing CuPy is a one-line error)
        from bilevel_theory.problems import BackendUnavailable  # noqa: PLC0415

        if isinstance(err, BackendUnavailable):
            print(f"error: {err}", file=sys.stderr)
            return 2
        raise
    print()
    print(markdown(doc))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(doc, fh, indent=1, default=_default)
        print(f"wrote {args.json}")
    return 0


def _default(value):
    """JSON for numpy scalars and tuples inside the document."""
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


if __name__ == "__main__":
    raise SystemExit(main())
