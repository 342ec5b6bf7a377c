"""``python -m benchmarks.budgets LABEL=RESULTS_DIR ...``: what a verification budget cost.

Reads each results directory's run log (``runs.jsonl``, one line per call of ``verify``,
written by :func:`verify.runner.run_suite`; a budget resumed over several calls is several
segments) and records, per store, the budget's wall and CPU seconds summed over its segments,
the points finished, and whether its last call completed.  Writes
``benchmarks/results/budgets.json`` and the table between ``<!-- budgets:start -->`` and
``<!-- budgets:end -->`` in ``benchmarks/README.md``; ``--from-json`` redraws the table from
the committed document alone.  ``LABEL`` names the run in the table (e.g. the commit).

The CPU seconds are the main process's and its local workers' user + system time
(``getrusage``), so they do not grow when other processes share the machine; the wall time
does, so each segment's wall time is kept as measured and the 2-core lower bound
``CPU / 2`` is printed beside it.  Only what the run log says is used: nothing is typed in.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bilevel_theory.verify.runner import read_run, read_runs, runs_cost
from bilevel_theory.verify.store import ResultsStore

from .table import update_readme

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "budgets.json"
README = HERE / "README.md"
START, END = "<!-- budgets:start -->", "<!-- budgets:end -->"
#: the claim ids' first parts, in the table's order
PAPERS = ("afbo", "gao", "fedmbo", "fednest", "lfednest", "memfbo", "costs")


def measure(label: str, results_dir: str | Path) -> dict[str, Any]:
    """The cost of the budget of the last call stored in ``results_dir``, from its
    run log; a one-line error when the directory has no run log."""
    log = read_runs(results_dir)
    if not log:
        raise SystemExit(f"{results_dir}: no run log (runs.jsonl); run `bilevel-theory "
                         "verify --out` there with this version first")
    run = read_run(results_dir)
    keys = ("budget", "seed", "backend", "noise_distribution", "mutants")
    last = log[-1]
    match = {k: last[k] for k in keys}
    cost = runs_cost(log, **match)
    segments = [e for e in log if all(e.get(k) == v for k, v in match.items())]
    return {"label": label, **match, "workers": sorted({e["workers"] for e in segments}),
            "claims": last["claims"], "complete": last["status"] == "complete",
            "first_started": segments[0]["date"], "last_ended": segments[-1]["ended"],
            "machine": run.get("machine"), "package_version": run.get("package_version"),
            **cost, "point_seconds_by_paper": point_seconds(results_dir, match)}


def point_seconds(results_dir: str | Path, match: dict[str, Any]) -> dict[str, float]:
    """Seconds the stored points of the budget took on their workers (wall, one row per
    point), summed per paper (the claim id's first part; ``costs`` for the cost comparison),
    largest first: where a budget's time goes (every stored point of the budget: a store kept
    across code changes also counts the points no longer reused)."""
    rows = ResultsStore(results_dir).rows(budget=match["budget"], base_seed=match["seed"],
                                          backend=match["backend"])
    per_point = {(r["claim"], r["config_hash"], r["point"]): float(r["seconds"]) for r in rows}
    total: dict[str, float] = {}
    for (claim, _, _), sec in per_point.items():
        paper = claim.split(".", 1)[0]
        total[paper] = total.get(paper, 0.0) + sec
    return dict(sorted(total.items(), key=lambda kv: -kv[1]))


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    minutes, sec = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {sec:02d} s"


def table(doc: dict[str, Any]) -> str:
    """The README table of a budgets document."""
    lines = ["| run | budget | claims and mutants | points | segments | wall time (as measured) "
             "| CPU time | CPU / 2 | complete |", "|---|---|---|---|---|---|---|---|---|"]
    for r in doc["runs"]:
        cpu = r["cpu_seconds"]
        lines.append(
            f"| {r['label']} | {r['budget']}{' + mutants' if r['mutants'] else ''} "
            f"| {r['claims']} | {r['points_finished']} | {r['segments']} "
            f"| {_duration(r['runtime_seconds'])} | {_duration(cpu)} "
            f"| {_duration(None if cpu is None else cpu / 2)} "
            f"| {'yes' if r['complete'] else 'no (resumable)'} |")
    lines += ["", "Where the time goes: the points' seconds on the workers (wall, so they grow "
              "when the host is shared), per paper:", "",
              "| run | " + " | ".join(PAPERS) + " |", "|---|" + "---|" * len(PAPERS)]
    for r in doc["runs"]:
        by = r.get("point_seconds_by_paper", {})
        total = sum(by.values()) or 1.0
        lines.append(f"| {r['label']} | " + " | ".join(
            f"{by[p]:.0f} s ({100 * by[p] / total:.0f} %)" if p in by else "—" for p in PAPERS)
            + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.budgets",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("stores", nargs="*", metavar="LABEL=RESULTS_DIR")
    parser.add_argument("--json", default=str(RESULTS), help="document to write (or read)")
    parser.add_argument("--readme", default=str(README))
    parser.add_argument("--from-json", action="store_true",
                        help="redraw the table from the document instead of measuring")
    args = parser.parse_args(argv)
    if args.from_json:
        doc = json.loads(Path(args.json).read_text())
    else:
        if not args.stores:
            parser.error("give at least one LABEL=RESULTS_DIR (or --from-json)")
        runs = []
        for spec in args.stores:
            label, sep, path = spec.partition("=")
            if not sep or not label or not path:
                parser.error(f"expected LABEL=RESULTS_DIR, got {spec!r}")
            runs.append(measure(label, path))
        doc = {"schema": 1, "runs": runs}
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")
    text = table(doc)
    update_readme(text, Path(args.readme), START, END)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
