"""Calibrate the verdict procedure: its false-violation rate on claims that hold, and its power
against wrong laws.

    python -m bilevel_theory.verify.false_violation --seeds 200 --claim demo.variance_vs_n \\
        --catalogue verify.claims.demo:DEMO_CLAIMS [--budget smoke] [--first-seed 0]

    python -m bilevel_theory.verify.false_violation --table docs/calibration.md --seeds 100 \\
        --calibrate fedmbo.phe_variance_vs_clients=0.2,0.4 \\
        --calibrate fedmbo.phe_bias_bound_proof=0.9,0.8 ...

A claim is checked with ``seeds`` independent base seeds (every sweep point gets fresh
randomness from each).  The report gives the counts of each verdict, the violated rate with its
Clopper–Pearson 95% interval (``scipy.stats.binomtest``) and, for slope kinds, how often the
slope's bootstrap interval covers the predicted value (before the tolerance is added).  On a
claim whose law is true the violated rate is the procedure's false-violation rate.

**Power** (``--calibrate ID=δ₁,δ₂``): the same measurements (one run per seed) are judged again
against a wrong law, :func:`perturbed`: for the exponent kinds (``matches``, ``geometric``,
``contrast``, ``at_most``) the predicted slope is shifted by ``δ`` (for ``at_most`` a negative
``δ`` is the useful one: a claimed decay faster than the truth); for ``bounded_by`` the bound
is multiplied by the factor ``δ < 1`` (a constant too small).  The power at ``δ`` is the
fraction of seeds whose verdict is then ``violated``.  ``--table PATH`` writes the Markdown
table of every ``--calibrate`` claim.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from scipy.stats import binomtest

from .claim import Claim, Law
from .claims import load
from .runner import _claim_of, _execute, _tasks, check, evaluate, make_executor

SLOPE_KINDS = ("matches", "at_most", "geometric", "contrast")
PERTURBABLE = (*SLOPE_KINDS, "bounded_by")


def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    """The exact (Clopper–Pearson) 95% interval of a binomial rate ``k/n``."""
    ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=0.95, method="exact")
    return float(ci.low), float(ci.high)


def false_violation_rate(claim: Claim | str, seeds: int = 200, budget: str = "smoke",
                         first_seed: int = 0, catalogue: str | None = None,
                         backend: str = "numpy") -> Mapping:
    """Check ``claim`` under ``seeds`` base seeds; return verdict counts, the violated rate
    with its 95% interval, and the slope interval's coverage of the prediction."""
    _check_seeds(seeds)
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
    return {
        "claim": claim.id, "expected": claim.expected, "budget": budget, "seeds": seeds,
        "first_seed": first_seed, "verdicts": dict(verdicts),
        "violated_rate": k / seeds, "violated_rate_ci95": list(clopper_pearson(k, seeds)),
        "coverage": covered / fitted if fitted else None, "fitted": fitted,
        "slope_mean": float(np.mean(slopes)) if slopes else None,
        "slope_sd": float(np.std(slopes, ddof=1)) if len(slopes) > 1 else None,
        "predicted": claim.law.value, "tolerance": claim.tolerance,
    }


def _check_seeds(seeds) -> None:
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"`seeds` must be a positive integer, got {seeds!r}")


def perturbed(claim: Claim, delta: float) -> Claim:
    """``claim`` with a wrong law: the slope shifted by ``delta`` (exponent kinds) or the bound
    multiplied by ``delta`` (``bounded_by``; applied to the stored rows by :func:`_rescaled`)."""
    if claim.kind not in PERTURBABLE:
        raise ValueError(f"claim {claim.id}: kind {claim.kind!r} has no wrong-law perturbation "
                         f"(kinds: {PERTURBABLE})")
    delta = float(delta)
    if claim.kind == "bounded_by":
        if not 0 < delta:
            raise ValueError(f"claim {claim.id}: a bound factor must be > 0, got {delta}")
        return dataclasses.replace(claim, reason=f"bound × {delta:g}")
    law = claim.law
    return dataclasses.replace(claim, law=Law(law.value + delta, law.latex,
                                              f"{law.derivation} (shifted by {delta:+g})"))


def _rescaled(points: Mapping[int, list[dict]], factor: float) -> dict[int, list[dict]]:
    """Stored rows with every ``bound`` metric multiplied by ``factor``."""
    out = {}
    for i, rows in points.items():
        out[i] = [{**r, "metrics": {**r["metrics"], "bound": r["metrics"]["bound"] * factor}}
                  for r in rows]
    return out


def _measure(claim: Claim, budget: str, seed: int, backend: str,
             catalogue: str | None) -> dict[int, list[dict]]:
    """One run of ``claim`` at ``seed``: its stored rows (point index → rows), in process."""
    stored: dict[int, list[dict]] = {}

    def sink(rows):
        stored[rows[0]["point"]] = json.loads(json.dumps(rows))

    _execute(_tasks(claim, budget, seed, backend, catalogue, ()), make_executor(1), sink, False,
             claim.id)
    return stored


def calibrate(claim: Claim | str, deltas: Sequence[float] = (), seeds: int = 100,
              budget: str = "smoke", first_seed: int = 0, catalogue: str | None = None,
              backend: str = "numpy") -> dict:
    """The false-violation rate of ``claim`` (expected ``holds``) and the power against each
    wrong law of ``deltas`` (:func:`perturbed`), from one run per seed."""
    _check_seeds(seeds)
    claim = _claim_of(claim, catalogue).for_backend(backend)
    if claim.kind not in PERTURBABLE:
        raise ValueError(f"claim {claim.id}: kind {claim.kind!r} cannot be calibrated "
                         f"(kinds: {PERTURBABLE})")
    wrong = [(float(d), perturbed(claim, d)) for d in deltas]
    verdicts: Counter[str] = Counter()
    caught = Counter()
    start = time.perf_counter()
    for s in range(first_seed, first_seed + seeds):
        points = _measure(claim, budget, s, backend, catalogue)
        verdicts[evaluate(claim, budget, points, s).verdict] += 1
        for d, c in wrong:
            pts = _rescaled(points, d) if claim.kind == "bounded_by" else points
            caught[d] += evaluate(c, budget, pts, s).verdict == "violated"
    k = verdicts["violated"]
    return {
        "claim": claim.id, "kind": claim.kind, "expected": claim.expected, "budget": budget,
        "seeds": seeds, "first_seed": first_seed, "verdicts": dict(verdicts),
        "violated_rate": k / seeds, "violated_rate_ci95": list(clopper_pearson(k, seeds)),
        "power": [{"delta": d, "rate": caught[d] / seeds,
                   "ci95": list(clopper_pearson(caught[d], seeds))} for d, _ in wrong],
        "predicted": claim.law.value, "tolerance": claim.tolerance,
        "seconds": time.perf_counter() - start,
    }


def _pct(rate: float, ci: Sequence[float]) -> str:
    return f"{100 * rate:.1f}% [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def markdown_table(reports: Sequence[Mapping], command: str = "") -> str:
    """The calibration table (one row per claim) as Markdown, with the command that made it."""
    lines = ["# Calibration of the verdict procedure", ""]
    if command:
        lines += ["Generated by", "", "```", command, "```", ""]
    lines += [
        "Each claim is run at its smoke budget under `seeds` independent base seeds.  "
        "*False violations*: seeds whose verdict on the claim as stated (a claim expected to "
        "hold) is `violated`, with the exact 95% Clopper–Pearson interval.  *Power at δ*: "
        "seeds whose verdict is `violated` when the same measurements are judged against a "
        "wrong law — the predicted slope shifted by δ (matches, geometric, contrast, at_most), "
        "or the bound multiplied by δ (bounded_by).  Target: false violations ≤ 5%.  A shift "
        "inside the tolerance band (|δ| ≤ tol) is not a wrong law, so power is only expected "
        "beyond it; for at_most only δ < 0 (a claimed decay faster than the truth) can be "
        "caught, and only once the claimed exponent falls below the true one; for bounded_by a "
        "factor is caught only when it is smaller than the claim's measured ratio "
        "(mean/bound) at its tightest point.", "",
        "| claim | kind | seeds | verdicts | false violations [95% CI] | power at δ | "
        "seconds |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in reports:
        verdicts = ", ".join(f"{k} {v}" for k, v in sorted(r["verdicts"].items()))
        power = "; ".join(f"δ = {p['delta']:+g}: {_pct(p['rate'], p['ci95'])}"
                          if r["kind"] != "bounded_by" else
                          f"× {p['delta']:g}: {_pct(p['rate'], p['ci95'])}" for p in r["power"])
        lines.append(f"| `{r['claim']}` | {r['kind']} | {r['seeds']} | {verdicts} | "
                     f"{_pct(r['violated_rate'], r['violated_rate_ci95'])} | {power or '—'} | "
                     f"{r['seconds']:.0f} |")
    return "\n".join(lines) + "\n"


def _parse_spec(spec: str) -> tuple[str, list[float]]:
    cid, _, ds = spec.partition("=")
    try:
        deltas = [float(d) for d in ds.split(",") if d.strip()]
    except ValueError:
        raise ValueError(f"--calibrate {spec!r}: expected ID=δ1,δ2,… with numbers") from None
    if not cid or not all(math.isfinite(d) for d in deltas):
        raise ValueError(f"--calibrate {spec!r}: expected ID=δ1,δ2,…")
    return cid, deltas


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bilevel_theory.verify.false_violation",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--claim", help="claim id (false-violation rate only)")
    parser.add_argument("--calibrate", action="append", default=[], metavar="ID=δ1,δ2",
                        help="claim id and the wrong-law perturbations to measure power at")
    parser.add_argument("--table", default=None, help="write the --calibrate table here")
    parser.add_argument("--seeds", type=int, default=200, help="independent base seeds")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--budget", default="smoke")
    parser.add_argument("--backend", default="numpy")
    parser.add_argument("--catalogue", default=None,
                        help="MODULE:ATTRIBUTE (e.g. verify.claims.demo:DEMO_CLAIMS)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    if not args.claim and not args.calibrate:
        parser.error("give --claim ID or at least one --calibrate ID=δ1,δ2")
    try:
        load(args.catalogue)
        if args.calibrate:
            reports = []
            for spec in args.calibrate:
                cid, deltas = _parse_spec(spec)
                reports.append(calibrate(cid, deltas, args.seeds, args.budget, args.first_seed,
                                         args.catalogue, args.backend))
                print(json.dumps(reports[-1]), flush=True)
            if args.table:
                cmd = "python -m bilevel_theory.verify.false_violation " + " ".join(
                    argv if argv is not None else sys.argv[1:])
                Path(args.table).write_text(markdown_table(reports, cmd))
            return 0
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
