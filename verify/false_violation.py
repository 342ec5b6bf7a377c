"""Measure the verdict procedure's false-violation rate on a claim that truly holds.

    python -m bilevel_theory.verify.false_violation --seeds 200 --claim demo.variance_vs_n \\
        --catalogue verify.claims.demo:DEMO_CLAIMS [--budget smoke] [--first-seed 0]

The claim is checked with ``seeds`` independent base seeds (every sweep point gets fresh
randomness from each); the report gives the counts of each verdict, the violated rate with its
Clopper–Pearson 95% interval (``scipy.stats.binomtest``) and, for slope kinds, how often the
slope's bootstrap interval covers the predicted value (the interval's coverage, before the
tolerance is added).  On a claim whose law is exactly true the violated rate is the procedure's
false-violation rate.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Mapping

import numpy as np
from scipy.stats import binomtest

from .claim import Claim
from .claims import load
from .runner import _claim_of, check

SLOPE_KINDS = ("matches", "at_most", "geometric", "contrast")


def false_violation_rate(claim: Claim | str, seeds: int = 200, budget: str = "smoke",
                         first_seed: int = 0, catalogue: str | None = None,
                         backend: str = "numpy") -> Mapping:
    """Check ``claim`` under ``seeds`` base seeds; return verdict counts, the violated rate
    with its 95% interval, and the slope interval's coverage of the prediction."""
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"`seeds` must be a positive integer, got {seeds!r}")
    claim = _claim_of(claim, catalogue)
    verdicts: Counter[str] = Counter()
    covered = fitted = 0
    slopes = []
    for s in range(first_seed, first_seed + seeds):
        r = check(claim, budget=budget, seed=s, backend=backend)
        verdicts[r.verdict] += 1
        if claim.kind in SLOPE_KINDS and np.isfinite(r.interval[0]):
            fitted += 1
            slopes.append(r.measured)
            covered += int(r.interval[0] <= claim.law.value <= r.interval[1])
    k = verdicts["violated"]
    ci = binomtest(k, seeds).proportion_ci(confidence_level=0.95, method="exact")
    return {
        "claim": claim.id, "expected": claim.expected, "budget": budget, "seeds": seeds,
        "first_seed": first_seed, "verdicts": dict(verdicts),
        "violated_rate": k / seeds, "violated_rate_ci95": [ci.low, ci.high],
        "coverage": covered / fitted if fitted else None, "fitted": fitted,
        "slope_mean": float(np.mean(slopes)) if slopes else None,
        "slope_sd": float(np.std(slopes, ddof=1)) if len(slopes) > 1 else None,
        "predicted": claim.law.value, "tolerance": claim.tolerance,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bilevel_theory.verify.false_violation",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--claim", required=True, help="claim id")
    parser.add_argument("--seeds", type=int, default=200, help="independent base seeds")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--budget", default="smoke")
    parser.add_argument("--backend", default="numpy")
    parser.add_argument("--catalogue", default=None,
                        help="MODULE:ATTRIBUTE (e.g. verify.claims.demo:DEMO_CLAIMS)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    try:
        load(args.catalogue)
        report = false_violation_rate(args.claim, args.seeds, args.budget, args.first_seed,
                                      args.catalogue, args.backend)
    except (ValueError, TypeError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    if report["expected"] != "holds":
        print(f"note: {report['claim']} is expected {report['expected']!r}; the violated "
              "rate is a false-violation rate only for a claim that truly holds")
    lo, hi = report["violated_rate_ci95"]
    print(f"{report['claim']} ({report['budget']}, {report['seeds']} seeds): verdicts "
          f"{report['verdicts']}")
    print(f"violated rate {report['violated_rate']:.3f} (95% CI [{lo:.3f}, {hi:.3f}])")
    if report["coverage"] is not None:
        print(f"slope {report['slope_mean']:.4g} ± {report['slope_sd']:.2g} (sd over seeds) vs "
              f"predicted {report['predicted']:.4g} ± tol {report['tolerance']:.3g}; bootstrap "
              f"interval covers the prediction in {100 * report['coverage']:.1f}% of "
              f"{report['fitted']} fits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
