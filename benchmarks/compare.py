"""``python -m benchmarks.compare CPU.json GPU.json``: the GPU's speedup over the CPU, case by case.

Matches the ``rounds`` rows of two benchmark documents (``python -m benchmarks --json``) by
algorithm, dims, replicates and sampled clients, and prints ``CPU s/round ÷ GPU s/round`` with
the target: on an H100, at ``n = 10⁵``, at least 20× faster than numpy on the CPU.
The CPU reference figures are committed in
``benchmarks/results/cpu.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .suite import TARGETS

KEY = ("algorithm", "dim", "replicates", "sampled_clients")


def _timed(doc: dict[str, Any]) -> dict[tuple, dict[str, Any]]:
    return {tuple(r[k] for k in KEY): r for r in doc.get("rounds", ())
            if "seconds_per_round" in r}


def compare(cpu: dict[str, Any], gpu: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per case timed in both documents: seconds on each and the speedup; cases at
    the target's ``n`` say whether the target is met."""
    target = TARGETS["gpu_speedup"]
    a, b = _timed(cpu), _timed(gpu)
    rows = []
    for key in sorted(set(a) & set(b)):
        speedup = a[key]["seconds_per_round"] / b[key]["seconds_per_round"]
        row = dict(zip(KEY, key), cpu_seconds=a[key]["seconds_per_round"],
                   gpu_seconds=b[key]["seconds_per_round"], speedup=speedup, met=None)
        if key[3] == target["at_sampled_clients"]:
            row["met"] = bool(speedup >= target["minimum"])
        rows.append(row)
    return rows


def markdown(rows: list[dict[str, Any]], cpu: dict[str, Any], gpu: dict[str, Any]) -> str:
    """The comparison as a Markdown table, headed by both machines."""
    def machine(doc):
        m = doc.get("machine", {})
        return f"{m.get('gpu') or m.get('cpu_model', '?')} ({doc.get('backend')})"

    lines = [f"CPU: {machine(cpu)}; GPU: {machine(gpu)}. Target: "
             f"{TARGETS['gpu_speedup']['statement']}.", "",
             "| round | d | R | n | CPU s/round | GPU s/round | speedup | target met? |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        met = "" if r["met"] is None else ("yes" if r["met"] else "no")
        lines.append(f"| {r['algorithm']} | {r['dim']} | {r['replicates']} | "
                     f"{r['sampled_clients']} | {r['cpu_seconds']:.4g} | {r['gpu_seconds']:.4g} | "
                     f"{r['speedup']:.1f}× | {met} |")
    if not rows:
        lines.append("| (no case timed in both documents) | | | | | | | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python -m benchmarks.compare CPU.json GPU.json", file=sys.stderr)
        return 2
    docs = []
    for path in argv:
        try:
            docs.append(json.loads(Path(path).read_text()))
        except (OSError, json.JSONDecodeError) as err:
            print(f"error: {path}: {err}", file=sys.stderr)
            return 2
    cpu, gpu = docs
    rows = compare(cpu, gpu)
    print(markdown(rows, cpu, gpu))
    return 0 if all(r["met"] is not False for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
