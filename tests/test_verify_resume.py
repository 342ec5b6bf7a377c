"""Interrupted runs resume exactly; results do not depend on the number of workers."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

from bilevel_theory.verify import run_suite, summarize
from bilevel_theory.verify.claims.demo import CATALOGUE, DEMO_CLAIMS
from bilevel_theory.verify.runner import read_runs, runs_cost

SLOW = next(c for c in DEMO_CLAIMS if c.id == "demo.slow_variance")
POINTS = len(SLOW.grid["smoke"])
REPS = SLOW.replicates["smoke"]
ENTRY = "from bilevel_theory.reports.cli import main; main()"  # the `bilevel-theory` console script


def cli(out, *extra):
    return [sys.executable, "-c", ENTRY, "verify", SLOW.id, "--catalogue", CATALOGUE,
            "--out", str(out), "--quiet", *extra]


def without_timing(entries):
    return [{k: v for k, v in e.items() if k != "seconds"} for e in entries]


def test_killed_run_resumes_to_the_uninterrupted_summary(tmp_path):
    reference = tmp_path / "reference"
    run_suite(SLOW.id, "smoke", reference, progress=False, catalogue=CATALOGUE)
    expected = json.loads((reference / "summary.json").read_text())

    out = tmp_path / "killed"
    store = out / "results.jsonl"
    proc = subprocess.Popen(cli(out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if store.exists() and store.read_bytes().count(b"\n") >= 3 * REPS:
                break
            time.sleep(0.02)
        assert proc.poll() is None, f"run ended before it could be killed: {proc.stderr.read()}"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert not (out / "summary.json").exists()
    lines = store.read_bytes().splitlines()
    stored = len(lines) // REPS
    assert 3 <= stored < POINTS and len(lines) % REPS == 0  # whole points only

    done = subprocess.run(cli(out), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    run = json.loads((out / "run.json").read_text())
    assert run["points_run"] == POINTS - stored  # stored points were skipped
    resumed = json.loads((out / "summary.json").read_text())
    assert resumed[0]["verdict"] == "holds"
    assert without_timing(resumed) == without_timing(expected)
    # the reports layer's path: rebuilt from the store alone, identical to summary.json
    assert summarize(out) == resumed
    # a second rerun has nothing left to do
    again = run_suite(SLOW.id, "smoke", out, progress=False, catalogue=CATALOGUE)
    assert json.loads((out / "run.json").read_text())["points_run"] == 0
    assert again[0].measured == resumed[0]["measured"]
    # the run log: the killed call wrote no line; the resumed one and the empty rerun did
    runs = read_runs(out)
    assert [e["points_finished"] for e in runs] == [POINTS - stored, 0]
    assert [e["status"] for e in runs] == ["complete", "complete"]
    total = runs_cost(runs, budget="smoke", seed=0)
    assert total["segments"] == 2 and total["points_finished"] == POINTS - stored
    assert total["runtime_seconds"] == sum(e["runtime_seconds"] for e in runs)
    assert runs_cost(runs, budget="full")["segments"] == 0


def test_results_do_not_depend_on_workers(tmp_path):
    pattern = "demo.[gv]*"  # geometric_bias, variance_vs_n, variance_contrast, variance_bounded
    one = run_suite(pattern, "smoke", tmp_path / "w1", workers=1, progress=False,
                    catalogue=CATALOGUE, seed=5)
    two = run_suite(pattern, "smoke", tmp_path / "w2", workers=2, progress=False,
                    catalogue=CATALOGUE, seed=5)
    assert len(one) == 4
    assert without_timing([r.to_dict() for r in one]) == without_timing([r.to_dict() for r in two])
    rows1 = sorted((r["claim"], r["point"], r["replicate"], json.dumps(r["metrics"]))
                   for r in map(json.loads, (tmp_path / "w1/results.jsonl").read_text().splitlines()))
    rows2 = sorted((r["claim"], r["point"], r["replicate"], json.dumps(r["metrics"]))
                   for r in map(json.loads, (tmp_path / "w2/results.jsonl").read_text().splitlines()))
    assert rows1 == rows2
    # each point carries its worker's memory high-water mark; the run reports the largest
    peaks = [r["peak_rss_mib"] for r in map(json.loads, (tmp_path / "w2/results.jsonl")
                                            .read_text().splitlines())]
    run = json.loads((tmp_path / "w2/run.json").read_text())
    assert min(peaks) > 0 and run["worker_peak_rss_mib"] == max(peaks)
    assert run["main_peak_rss_mib"] > 0
    # CPU time: the workers' is counted once the pool is closed (they were reaped); a
    # serial run has no worker processes
    serial = json.loads((tmp_path / "w1/run.json").read_text())["cpu_seconds"]
    assert run["cpu_seconds"]["workers"] > 0 and run["cpu_seconds"]["main"] > 0
    assert serial["workers"] < 0.05 < serial["main"]
    assert read_runs(tmp_path / "w2")[0]["cpu_seconds"] == run["cpu_seconds"]


def test_run_log_lines_that_are_not_json_are_skipped_and_cluster_cpu_is_unknown(tmp_path):
    line = {"budget": "full", "seed": 0, "points_finished": 3, "runtime_seconds": 2.0,
            "cpu_seconds": {"main": 1.0, "workers": 3.0}}
    cluster = {**line, "cpu_seconds": {"main": 0.5, "workers": None}}
    (tmp_path / "runs.jsonl").write_text(json.dumps(line) + "\n{\"budget\": \"fu\n"
                                         + json.dumps(line) + "\n")
    entries = read_runs(tmp_path)
    assert len(entries) == 2
    assert runs_cost(entries, budget="full") == {
        "segments": 2, "points_finished": 6, "runtime_seconds": 4.0, "cpu_seconds": 8.0}
    assert runs_cost([*entries, cluster])["cpu_seconds"] is None
    assert read_runs(tmp_path / "absent") == []


def test_peak_memory_is_the_process_high_water_mark():
    """What each point reports sees a 256 MiB allocation made in a fresh process."""
    code = ("import numpy as np; from bilevel_theory.problems.backend import peak_rss_bytes; "
            "b = peak_rss_bytes(); a = np.ones(2**25); print(b, peak_rss_bytes())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    before, after = map(int, out.split())
    assert after - before >= 0.95 * 2**28


def test_costs_report_progress_and_resume(tmp_path, capsys):
    from bilevel_theory.verify.costs import measure_costs  # noqa: PLC0415

    assert measure_costs(tmp_path, "smoke", names=["fedmbo"], progress=True) == ["costs.fedmbo"]
    assert "costs: 1/1 costs.fedmbo (" in capsys.readouterr().err
    assert measure_costs(tmp_path, "smoke", names=["fedmbo"], progress=True) == []  # stored
    assert capsys.readouterr().err == ""
