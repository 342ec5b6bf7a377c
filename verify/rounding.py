"""Rounding audit: do stored verdicts survive a relative perturbation of their measurements?

A change to the library that alters only the rounding of what a claim measures (a product
computed with another summation order, say) changes a verdict only if some decision of that
verdict sits within the rounding of its threshold.  The audit decides this from the stored
rows, without rerunning anything: each claim is decided again (``runner.evaluate``, the same
bootstrap seed) with every measured number that is not an integer multiplied by
``(1 + r·u_p)(1 + r·u)`` (``u_p`` common to a sweep point's replicates, ``u`` per number, both
uniform on ``[−1, 1]``; ``draws`` times).  Integer-valued
metrics (counts from the ledger, divergence flags) are left alone: rounding does not reach
them.  A claim passes when the unperturbed decision reproduces the stored summary (the rows
read are the ones it was decided from) and every perturbed decision has the stored verdict.

Measure the rounding a change actually causes first (rerun the claims at one budget with both
versions and compare their rows), then audit with ``r`` well above it.  ``python -m
bilevel_theory.verify.rounding --budget standard --store DIR [--overlay DIR …] --rel 1e-9
CLAIM …`` prints one line per claim and seed (mutants included) and exits 1 on a change.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from .claim import MUTANT_SEP
from .claims import load, resolve
from .runner import evaluate
from .stability import SEEDS, read_summaries
from .store import ResultsStore

__all__ = ["audit", "perturbed", "stored_points"]


def stored_points(store: Path, claim_id: str, budget: str, seed: int) -> dict[int, list[dict]]:
    """The complete points of ``claim_id`` at ``budget`` and base seed ``seed`` in the store
    at ``store`` (rows sorted by replicate), from its most recent run: where the rows carry
    several configuration hashes (code changed between runs), the hash of the last row."""
    rows = ResultsStore(store).rows(claim_id, budget, None, seed)
    if not rows:
        return {}
    latest = rows[-1]["config_hash"]
    groups: dict[int, list[dict]] = {}
    for r in rows:
        if r["config_hash"] == latest:
            groups.setdefault(r["point"], []).append(r)
    done = {}
    for index, group in groups.items():
        group.sort(key=lambda r: r["replicate"])
        if [r["replicate"] for r in group] == list(range(group[0].get("replicates",
                                                                         len(group)))):
            done[index] = group
    return done


def _integer_metrics(points: Mapping[int, list[dict]]) -> set[str]:
    """The metrics whose every stored number is an integer (or non-finite)."""
    names: dict[str, bool] = {}
    for rows in points.values():
        for r in rows:
            for k, v in r["metrics"].items():
                whole = not isinstance(v, int | float) or not math.isfinite(v) or float(v) == int(v)
                names[k] = names.get(k, True) and whole
    return {k for k, whole in names.items() if whole}


def perturbed(points: Mapping[int, list[dict]], rel: float, rng: np.random.Generator
              ) -> dict[int, list[dict]]:
    """``points`` with every non-integer metric number ``v`` replaced by
    ``v(1 + rel·u_p)(1 + rel·u)``: ``u_p`` one draw per point (a shift common to its
    replicates, which moves a fitted slope) and ``u`` one per number, both uniform on
    ``[−1, 1]``; grid values, integer metrics and everything else unchanged."""
    exact = _integer_metrics(points)
    out = {}
    for index, rows in points.items():
        common = 1.0 + rel * rng.uniform(-1.0, 1.0)
        new = []
        for r in rows:
            metrics = {}
            for k, v in r["metrics"].items():
                if k in exact or not isinstance(v, int | float) or not math.isfinite(v):
                    metrics[k] = v
                else:
                    metrics[k] = float(v) * common * (1.0 + rel * rng.uniform(-1.0, 1.0))
            new.append({**r, "metrics": metrics})
        out[index] = new
    return out


def _same(a: float, b: float) -> bool:
    return (a == b) or (a != a and b != b)


def audit(store: Path, claim_ids: Sequence[str], budget: str, seeds: Sequence[int] = SEEDS,
          overlays: Sequence[Path] = (), rel: float = 1e-9, draws: int = 8,
          rng_seed: int = 0, catalogue: str | None = None) -> list[dict]:
    """One row per claim (mutants included) and seed: the stored verdict, whether the
    unperturbed decision reproduces the stored summary, and the verdicts of ``draws``
    perturbed decisions (:func:`perturbed` at ``rel``).  The rows of a claim are read from
    the last of ``store``, ``overlays`` that holds it (``stability.read_summaries``);
    ``catalogue``: ``MODULE:ATTRIBUTE`` of another catalogue (default the papers')."""
    claims = load(catalogue)
    summaries = read_summaries(Path(store), seeds, [Path(o) for o in overlays])
    rng = np.random.default_rng(rng_seed)
    out = []
    for base in claim_ids:
        claim = resolve(claims, base)
        ids = [claim.id] + [f"{claim.id}{MUTANT_SEP}{m.name}" for m in claim.mutants]
        for seed in seeds:
            for cid in ids:
                entry = summaries.get(seed, {}).get(cid)
                if entry is None:
                    out.append({"id": cid, "seed": seed, "status": "missing"})
                    continue
                c = resolve(claims, cid)
                home = entry["store"]
                points = stored_points(home, cid, budget, seed)
                r0 = evaluate(c, budget, points, seed)
                reproduced = (r0.verdict == entry["verdict"]
                              and _same(float(r0.measured), float(entry["measured"])))
                verdicts = [evaluate(c, budget, perturbed(points, rel, rng), seed).verdict
                            for _ in range(draws)]
                out.append({"id": cid, "seed": seed, "store": str(home),
                            "verdict": entry["verdict"], "reproduced": reproduced,
                            "perturbed": verdicts,
                            "status": "stable" if reproduced and set(verdicts) == {
                                entry["verdict"]} else "changed"})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bilevel_theory.verify.rounding",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("claims", nargs="+", help="claim ids (their mutants are included)")
    ap.add_argument("--store", required=True, type=Path, help="the stability stores (seed-S/)")
    ap.add_argument("--overlay", action="append", default=[], type=Path,
                    help="later stores whose claims replace the store's (repeatable)")
    ap.add_argument("--budget", default="standard")
    ap.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    ap.add_argument("--rel", type=float, default=1e-9, help="relative perturbation (> 0)")
    ap.add_argument("--draws", type=int, default=8, help="perturbed decisions per claim (≥ 1)")
    ap.add_argument("--json", type=Path, help="also write the rows here")
    args = ap.parse_args(argv)
    if not (args.rel > 0 and math.isfinite(args.rel)):
        ap.error(f"--rel must be a positive finite number, got {args.rel!r}")
    if args.draws < 1:
        ap.error(f"--draws must be ≥ 1, got {args.draws!r}")
    rows = audit(args.store, args.claims, args.budget, args.seeds, args.overlay, args.rel,
                 args.draws)
    for r in rows:
        print(f"{r['id']:<60} seed {r['seed']}  {r['status']:<8} "
              f"{r.get('verdict', '')} reproduced={r.get('reproduced')} "
              f"perturbed={sorted(set(r.get('perturbed', [])))}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    bad = [r for r in rows if r["status"] != "stable"]
    print(f"{len(rows) - len(bad)} of {len(rows)} stable under relative perturbations of "
          f"{args.rel:g} ({args.draws} draws each)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
