"""Bad input and faults: one writer per results directory, lost, stopped and orphaned workers,
a Dask cluster without workers, symbolic links and FIFOs, full disks, malformed rows and baselines,
seeds, output directories and Ctrl-C.

Runs the synthetic demo claims (fast); processes are started per test and killed in
``finally``; every wait has an explicit timeout.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import importlib.util
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

import bilevel_theory.verify.store as store_mod
from bilevel_theory.reports.cli import main as cli_main
from bilevel_theory.verify import CorruptStore, ResultsStore, check, run_suite, summarize
from bilevel_theory.verify.claims.demo import CATALOGUE, DEMO_CLAIMS
from bilevel_theory.verify.runner import WorkersLost, _write_json
from bilevel_theory.verify.store import LOCKNAME, StoreInUse

# dask is imported by its test only: pool workers unpickling ``_die`` import this module
HAS_DASK = importlib.util.find_spec("distributed") is not None

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

ENTRY = "from bilevel_theory.reports.cli import main; main()"  # the `bilevel-theory` console script
SLOW = "demo.slow_variance"
FAST = "demo.variance_vs_n"
SLOW_CLAIM = next(c for c in DEMO_CLAIMS if c.id == SLOW)
REPS = SLOW_CLAIM.replicates["smoke"]
POINTS = len(SLOW_CLAIM.grid["smoke"])


def cli(out, *extra, claim=SLOW):
    return [sys.executable, "-c", ENTRY, "verify", claim, "--catalogue", CATALOGUE, "--out",
            str(out), "--quiet", *extra]


def without_timing(entries):
    return [{k: v for k, v in e.items() if k != "seconds"} for e in entries]


def stored_lines(out) -> int:
    store = Path(out) / "results.jsonl"
    return store.read_bytes().count(b"\n") if store.exists() else 0


def wait_for(predicate, seconds, what, proc=None):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the process ended before {what}: {proc.stderr.read()}")
        time.sleep(0.02)
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")


def children(pid: int) -> list[int]:
    """Live (not zombie) processes whose parent is ``pid``."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == pid and state != "Z":
            out.append(int(entry.name))
    return out


def pool_workers(pid: int) -> list[int]:
    """``pid``'s process-pool workers (not multiprocessing's resource tracker)."""
    found = []
    for child in children(pid):
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in cmdline:
            found.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def rows_once(out):
    rows = [json.loads(line) for line in (Path(out) / "results.jsonl").read_text().splitlines()]
    return rows, Counter((r["claim"], r["point"], r["replicate"]) for r in rows)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The uninterrupted serial run of the slow claim (its summary entries)."""
    out = tmp_path_factory.mktemp("reference")
    return [r.to_dict() for r in run_suite(SLOW, "smoke", out, progress=False,
                                          catalogue=CATALOGUE)]


# ----------------------------------------------------------------------- one writer


HOLD = ("import sys, time; from bilevel_theory.verify import ResultsStore\n"
        "with ResultsStore(sys.argv[1]).writer():\n"
        "    print('locked', flush=True); time.sleep(60)\n")


def test_second_writer_is_refused_and_a_stale_lock_is_taken_over(tmp_path):
    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked", holder.stderr.read()
        second = subprocess.run(cli(out, claim=FAST), capture_output=True, text=True,
                                timeout=60)
        assert second.returncode == 2, second.stderr
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: results directory "), lines
        assert f"in use by another writer (PID {holder.pid}" in lines[0]
        assert not (out / "results.jsonl").exists()  # refused before writing anything
        with pytest.raises(StoreInUse, match=f"PID {holder.pid}"):  # direct appends too
            ResultsStore(out).append_point([{"claim": "c", "budget": "smoke", "point": 0,
                                             "value": 1.0, "replicate": 0, "metrics": {},
                                             "config_hash": "h"}])
    finally:
        holder.kill()
        holder.wait(timeout=30)
    # the holder died holding the lock: its PID is still in the file, the lock is stale
    assert (out / LOCKNAME).read_text().split() == [str(holder.pid)]
    with pytest.warns(UserWarning, match=f"took over the stale writer lock of PID {holder.pid}"):
        result = check(FAST, catalogue=CATALOGUE, store=out)
    assert result.verdict == "holds"
    assert (out / LOCKNAME).read_text() == ""  # released, no owner left behind


def test_stale_lock_without_flock_is_detected_by_its_pid(tmp_path, monkeypatch):
    monkeypatch.setattr(store_mod, "fcntl", None)  # a file system without flock
    (tmp_path / LOCKNAME).write_text(f"{os.getppid()}\n")  # a live process (pytest's parent)
    with pytest.raises(StoreInUse, match=f"PID {os.getppid()}"):
        check(FAST, catalogue=CATALOGUE, store=tmp_path)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    (tmp_path / LOCKNAME).write_text(dead.stdout)  # its process has exited: stale
    with pytest.warns(UserWarning, match=f"stale writer lock of PID {dead.stdout.strip()}"):
        assert check(FAST, catalogue=CATALOGUE, store=tmp_path).verdict == "holds"


# ------------------------------------------------------------------- local workers


@linux
def test_killed_pool_worker_is_retried_to_the_uninterrupted_summary(tmp_path, reference):
    out = tmp_path / "out"
    proc = subprocess.Popen(cli(out, "--workers", "2"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: stored_lines(out) >= 2 * REPS and pool_workers(proc.pid), 60,
                 "two stored points", proc)
        victim = pool_workers(proc.pid)[0]
        os.kill(victim, signal.SIGKILL)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == 0, stderr
    assert "worker process died" in stderr and "resubmitted" in stderr
    assert "Traceback" not in stderr
    summary = json.loads((out / "summary.json").read_text())
    assert without_timing(summary) == without_timing(reference)
    _, counts = rows_once(out)  # every point stored exactly once
    assert set(counts.values()) == {1} and len(counts) == POINTS * REPS


@linux
def test_pool_workers_die_with_their_parent(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen(cli(out, "--workers", "2"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: len(pool_workers(proc.pid)) == 2 and stored_lines(out) >= REPS, 60,
                 "two pool workers", proc)
        workers = pool_workers(proc.pid)
        proc.kill()
    finally:
        proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(w) for w in workers):
        time.sleep(0.05)
    orphans = [w for w in workers if alive(w)]
    for w in orphans:  # do not leave them behind, even when the test fails
        os.kill(w, signal.SIGKILL)
    assert not orphans, f"pool workers {orphans} outlived their parent"


@linux
def test_stopped_pool_worker_ends_the_run_at_the_point_timeout(tmp_path):
    """A SIGSTOP-ed worker never dies: the point timeout ends the run (exit 3, naming the
    claim, the point and the seconds), kills the stopped workers and keeps the stored points."""
    out = tmp_path / "out"
    proc = subprocess.Popen(cli(out, "--workers", "2", "--point-timeout", "2"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stopped: list[int] = []
    try:
        wait_for(lambda: len(pool_workers(proc.pid)) == 2 and stored_lines(out) >= REPS, 60,
                 "two pool workers and one stored point", proc)
        for w in pool_workers(proc.pid):  # every worker: the points left can never finish
            os.kill(w, signal.SIGSTOP)
            stopped.append(w)
        before = stored_lines(out)
        start = time.monotonic()
        _, stderr = proc.communicate(timeout=30)
        elapsed = time.monotonic() - start
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(alive(w) for w in stopped):
            time.sleep(0.05)
        survivors = [w for w in stopped if alive(w)]
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        for w in stopped:  # never leave a stopped process behind
            if alive(w):
                os.kill(w, signal.SIGKILL)
    assert proc.returncode == 3, stderr
    assert elapsed < 20, elapsed  # the point ran before the stop: less than 2 s is fine
    last = stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: claim {SLOW}: point "), stderr
    assert "did not finish within the point timeout of 2 s" in last and "Traceback" not in stderr
    assert not survivors, f"stopped workers {survivors} outlived the run"
    run = json.loads((out / "run.json").read_text())
    assert run["status"] == "interrupted" and run["reason"].startswith("PointTimeout: claim")
    assert not (out / "summary.json").exists()
    lines = stored_lines(out)  # the points finished before the stop are kept, whole
    assert lines % REPS == 0 and before <= lines < POINTS * REPS


def test_point_timeout_times_started_points_and_a_stalled_queue():
    """A point is timed from its start in a worker; points handed to the workers but never
    started (a worker stopped while taking one holds the queue) from the last finished
    point, and not while the workers start up."""
    from bilevel_theory.verify.runner import PointTimeout, ProcessPoolExecutor, Task  # noqa: PLC0415

    tasks = [Task(FAST, CATALOGUE, None, "smoke", i, 2.0**i, 2, 0, 0, "numpy", "h")
             for i in range(2)]
    pool = ProcessPoolExecutor(2, point_timeout=1.0)
    now = time.monotonic()
    pool._check_timeout(tasks, [0, 1], [0.0, 0.0], 0.0)  # starting up: not timed
    pool._check_timeout(tasks, [0, 1], [0.0, 0.0], now)  # a point just finished
    pool._check_timeout(tasks, [0, 1], [now - 0.5, 0.0], now - 5)  # started 0.5 s ago
    with pytest.raises(PointTimeout, match=r"point 0 \(x=1, .* started no point and "
                                           r"finished none for [5-9]\.\d s"):
        pool._check_timeout(tasks, [0, 1], [0.0, 0.0], now - 5)
    with pytest.raises(PointTimeout, match=rf"claim {FAST}: point 1 \(x=2, .*timeout of 1 s "
                                           r"\(running for [3-9]\.\d s in a local worker"):
        pool._check_timeout(tasks, [0, 1], [now - 0.5, now - 3], now)
    pool.close()


def _die(task):
    os._exit(1)  # a worker killed while running ``task``


def test_worker_lost_more_than_the_retries_is_reported():
    from bilevel_theory.verify.runner import ProcessPoolExecutor, Task  # noqa: PLC0415

    tasks = [Task(FAST, CATALOGUE, None, "smoke", 0, 1.0, 2, 0, 0, "numpy", "h")]
    pool = ProcessPoolExecutor(1, retries=1)
    with pytest.raises(WorkersLost, match=r"died \(killed, or out of memory\?\) 2 times while "
                                          r"running demo.variance_vs_n point"):
        with pytest.warns(RuntimeWarning, match="resubmitted"):
            for _ in pool.run(_die, tasks):  # every task kills its worker
                pass
    pool.close()
    assert pool.restarts == 2


# -------------------------------------------------------------------------- dask


@pytest.mark.skipif(not HAS_DASK, reason="dask.distributed is not installed")
def test_losing_every_dask_worker_ends_with_an_error(tmp_path, monkeypatch):
    import distributed  # noqa: PLC0415

    monkeypatch.setenv("BILEVEL_THEORY_NO_WORKERS_TIMEOUT", "1.5")
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                       protocol="tcp", host="127.0.0.1",
                                       dashboard_address=None, silence_logs=logging.ERROR)
    out = tmp_path / "out"
    done: dict = {}

    def target():
        try:
            done["results"] = run_suite(SLOW, "smoke", out, progress=False,
                                        catalogue=CATALOGUE,
                                        scheduler=cluster.scheduler_address)
        except BaseException as err:  # noqa: BLE001 - checked by the main thread
            done["error"] = err

    thread = threading.Thread(target=target, daemon=True)
    try:
        thread.start()
        wait_for(lambda: stored_lines(out) >= 2 * REPS, 30, "two stored points")
        cluster.scale(0)  # every worker lost
        start = time.monotonic()
        thread.join(timeout=30)
        assert not thread.is_alive(), "the run did not end after losing every worker"
        assert time.monotonic() - start < 15
    finally:
        cluster.close(timeout=30)
    err = done.get("error")
    assert isinstance(err, WorkersLost), repr(done)
    assert cluster.scheduler_address in str(err) and "no worker" in str(err)
    _, counts = rows_once(out)  # the finished points are kept, whole, once each
    assert set(counts.values()) == {1} and len(counts) % REPS == 0 and len(counts) >= 2 * REPS


# ----------------------------------------------------------------- store files


def test_symlinked_store_is_refused_and_its_target_untouched(tmp_path):
    target = tmp_path / "elsewhere.txt"
    target.write_bytes(b"precious line 1\nprecious line 2 without newline")
    before = target.read_bytes()
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.jsonl").symlink_to(target)
    proc = subprocess.run(cli(out, claim=FAST), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "symbolic link" in proc.stderr and str(out / "results.jsonl") in proc.stderr
    assert target.read_bytes() == before
    with pytest.raises(CorruptStore, match="symbolic link"):
        ResultsStore(out).rows()


def test_fifo_store_is_refused_without_hanging(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "results.jsonl")
    start = time.monotonic()
    proc = subprocess.run(cli(out, claim=FAST), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "is a FIFO, not a regular file" in proc.stderr
    assert time.monotonic() - start < 30
    with pytest.raises(CorruptStore, match="FIFO"):
        ResultsStore(out).rows()
    os.mkfifo(tmp_path / "run.json")  # other JSON files are not waited on either
    from bilevel_theory.verify.runner import read_json  # noqa: PLC0415

    with pytest.raises(ValueError, match="not a regular file"):
        read_json(tmp_path / "run.json")


def test_full_disk_names_the_path_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    store = ResultsStore(tmp_path)
    check(FAST, catalogue=CATALOGUE, store=store)
    before = store.path.read_bytes()
    real_write = os.write

    def full(fd, data):
        real_write(fd, bytes(data)[: len(data) // 2])  # a short write, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store_mod.os, "write", full)
    rows = [{**r, "point": 99} for r in store.rows(FAST)[:3]]
    with pytest.raises(OSError, match=f"cannot append to {store.path}: No space left"):
        store.append_point(rows)
    with pytest.raises(OSError, match=f"cannot write {tmp_path / 'summary.json'}: No space"):
        _write_json(tmp_path / "summary.json", [{"id": "x"}])
    monkeypatch.undo()
    assert store.path.read_bytes() == before  # rolled back to whole points
    assert not list(tmp_path.glob(".*.tmp"))


# ------------------------------------------------------------------ malformed input


def test_wrong_typed_and_nested_rows_are_reported_and_recomputed(tmp_path):
    out = tmp_path / "out"
    run_suite(FAST, "smoke", out, progress=False, catalogue=CATALOGUE)
    path = out / "results.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    wrong = json.loads(lines[2])
    wrong["value"] = "abc"
    lines[2] = json.dumps(wrong) + "\n"  # line 3: point 0
    lines[-1] = "[" * 50_000 + "]" * 50_000 + "\n"  # the last point's last replicate
    path.write_text("".join(lines))
    with pytest.warns(UserWarning) as caught:
        entries = summarize(out)
    messages = [str(w.message) for w in caught]
    assert any(f"{path}:3: skipped" in m and "'value' (str 'abc')" in m for m in messages)
    assert any(f"{path}:{len(lines)}: skipped" in m and "nested too deeply" in m
               for m in messages)
    assert entries[0]["status"] == "partial"
    # a resume recomputes exactly those two points
    with pytest.warns(UserWarning, match="skipped"):
        again = run_suite(FAST, "smoke", out, progress=False, catalogue=CATALOGUE)
    assert json.loads((out / "run.json").read_text())["points_run"] == 2
    assert again[0].status == "complete"


@pytest.mark.parametrize("text, what", [
    ("{}", "has no claims"),
    ("[]", "must be a JSON object"),
    ('{"demo.variance_vs_n": 3}', "verdicts must be one of"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
], ids=["empty", "list", "not-a-verdict", "nested"])
def test_empty_or_malformed_baseline_is_refused(tmp_path, text, what):
    out = tmp_path / "out"
    run_suite(FAST, "smoke", out, progress=False, catalogue=CATALOGUE)
    baseline = tmp_path / "baseline.json"
    baseline.write_text(text)
    res = CliRunner().invoke(cli_main, ["compare", str(out), str(baseline)])
    assert res.exit_code == 2, res.output
    assert what in res.output and str(baseline) in res.output


def compare(out, baseline, *extra):
    return CliRunner().invoke(cli_main, ["compare", str(out), str(baseline), *extra],
                              env={"BILEVEL_THEORY_CATALOGUE": None})


def test_compare_uses_the_store_rows_of_the_asked_seed(tmp_path):
    out = tmp_path / "out"
    claims = ("demo.variance_vs_n", "demo.wrong_exponent")
    for seed in (0, 1):
        run_suite(list(claims), "smoke", out, progress=False, catalogue=CATALOGUE, seed=seed)
    by_seed = {s: {e["id"]: e for e in summarize(out, seed=s)} for s in (0, 1)}
    assert {e["seed"] for e in summarize(out)} == {1}  # run.json: the seed asked for last
    assert by_seed[0]["demo.variance_vs_n"]["measured"] != \
        by_seed[1]["demo.variance_vs_n"]["measured"]
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"demo.variance_vs_n": "holds",
                                    "demo.wrong_exponent": "violated",
                                    "demo.geometric_bias": "holds"}))
    # a stale summary.json (an interrupted rerun) is never trusted
    (out / "summary.json").write_text(json.dumps([{"id": "demo.variance_vs_n",
                                                   "verdict": "violated", "reason": "stale"}]))
    res = compare(out, baseline)
    assert res.exit_code == 1 and "MISSING  demo.geometric_bias" in res.output
    assert "CHANGED" not in res.output
    res = compare(out, baseline, "--only-present")
    assert res.exit_code == 0, res.output
    assert "2 of 2 baseline verdicts unchanged (1 without all their results" in res.output
    res = compare(out, baseline, "--only-present", "--seed", "7")  # no rows of seed 7
    assert res.exit_code == 2 and "nothing to compare" in res.output
    (out / "run.json").unlink()  # which seed was asked for is unknown now
    res = compare(out, baseline, "--only-present")
    assert res.exit_code == 2 and "base seeds 0, 1" in res.output and "--seed" in res.output
    res = compare(out, baseline, "--only-present", "--seed", "0", "--catalogue", CATALOGUE)
    assert res.exit_code == 0, res.output
    # a changed verdict still fails a subset comparison
    baseline.write_text(json.dumps({"demo.variance_vs_n": "violated",
                                    "demo.geometric_bias": "holds"}))
    res = compare(out, baseline, "--only-present", "--seed", "0", "--catalogue", CATALOGUE)
    assert res.exit_code == 1 and "CHANGED  demo.variance_vs_n: violated -> holds" in res.output


def test_compare_lists_a_partly_run_claim_without_judging_it(tmp_path):
    out = tmp_path / "out"
    claims = ["demo.variance_vs_n", "demo.wrong_exponent"]
    run_suite(claims, "smoke", out, progress=False, catalogue=CATALOGUE)
    path = out / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    last = max(r["point"] for r in rows if r["claim"] == FAST)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows  # a run cut off before it
                            if not (r["claim"] == FAST and r["point"] == last)))
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({FAST: "holds", "demo.wrong_exponent": "violated"}))
    extra = ("--seed", "0", "--catalogue", CATALOGUE)
    res = compare(out, baseline, "--only-present", *extra)
    assert res.exit_code == 0, res.output
    assert f"PARTIAL  {FAST}: holds in the baseline, {last} of {last + 1} points" in res.output
    assert "CHANGED" not in res.output
    assert "1 of 1 baseline verdicts unchanged (1 without all their results" in res.output
    res = compare(out, baseline, *extra)  # a whole run must be whole
    assert res.exit_code == 1 and "PARTIAL  " in res.output and "CHANGED" not in res.output
    res = compare(out, baseline, "--only-present", "--json", *extra)
    doc = json.loads(res.output)
    assert doc["partial"] == [{"id": FAST, "points": last, "total_points": last + 1}]
    assert doc["unchanged"] == ["demo.wrong_exponent"] and not doc["changed"]


def test_compare_skips_mutants_missing_from_the_baseline(tmp_path):
    out = tmp_path / "out"
    run_suite(FAST, "smoke", out, progress=False, catalogue=CATALOGUE, mutants=True)
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({FAST: "holds"}))
    res = compare(out, baseline)
    assert res.exit_code == 0, res.output
    assert "@" not in res.output and "1 of 1 baseline verdicts unchanged" in res.output
    entries = summarize(out)
    power = entries[0]["power"]
    baseline.write_text(json.dumps({FAST: "holds", f"{FAST}@{power[0]['mutant']}":
                                    power[0]["required"]}))
    res = compare(out, baseline)  # a mutant in the baseline is compared
    assert power[0]["caught"]  # at smoke budget the demo claim catches its mutant
    assert res.exit_code == 0 and "2 of 2 baseline verdicts unchanged" in res.output
    baseline.write_text(json.dumps({FAST: "holds", f"{FAST}@{power[0]['mutant']}":
                                    power[0]["verdict"] == "holds" and "violated" or "holds"}))
    assert compare(out, baseline).exit_code == 1


def _broken_measure(x, replicates, seed, backend="numpy"):
    raise FloatingPointError("overflow")


#: a catalogue whose claim's measure raises (``--catalogue test_faults:BROKEN``)
BROKEN = [dataclasses.replace(next(c for c in DEMO_CLAIMS if c.id == FAST), id="demo.broken",
                              measure=_broken_measure, mutants=())]


def test_a_failing_measure_is_an_internal_error_exit_3(tmp_path):
    res = CliRunner().invoke(cli_main, ["verify", "demo.broken", "--catalogue",
                                        f"{__name__}:BROKEN", "--out", str(tmp_path),
                                        "--quiet"])
    assert res.exit_code == 3, res.output
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("error: claim demo.broken: `measure` failed at point 0")
    assert "FloatingPointError: overflow" in res.stderr  # with the measure's traceback
    run = json.loads((tmp_path / "run.json").read_text())  # says why the run ended
    assert run["status"] == "failed" and run["reason"].startswith("MeasureError: claim")


def test_point_timeout_is_checked_and_defaults_to_the_budgets(tmp_path):
    from bilevel_theory.verify.executor import POINT_TIMEOUT, check_point_timeout  # noqa: PLC0415

    assert check_point_timeout(None, "smoke") == POINT_TIMEOUT["smoke"]
    assert check_point_timeout(None, "full") == POINT_TIMEOUT["full"] > POINT_TIMEOUT["smoke"]
    assert check_point_timeout(0, "smoke") is None  # no limit
    assert check_point_timeout(2.5, "smoke") == 2.5
    for bad in (-1, float("nan"), float("inf"), True, "10"):
        with pytest.raises(ValueError, match="`point_timeout` must be a finite number"):
            check_point_timeout(bad, "smoke")
    res = CliRunner().invoke(cli_main, ["verify", FAST, "--catalogue", CATALOGUE,
                                        "--out", str(tmp_path), "--point-timeout", "nan",
                                        "--quiet"])
    assert res.exit_code == 2 and "point_timeout" in res.output, res.output
    assert not (tmp_path / "results.jsonl").exists()  # checked before anything runs


# ----------------------------------------------------------- directories, Ctrl-C


def test_output_directories_are_checked_before_the_run(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    out = tmp_path / "out"
    res = CliRunner().invoke(cli_main, ["verify", FAST, "--catalogue", CATALOGUE, "--out",
                                        str(out), "--quiet", "--report", str(blocker / "r")])
    assert res.exit_code == 2 and "`--report`" in res.output and "not a directory" in res.output
    assert not out.exists()  # nothing ran
    res = CliRunner().invoke(cli_main, ["verify", FAST, "--catalogue", CATALOGUE, "--out", "",
                                        "--quiet"])
    assert res.exit_code == 2 and "`--out` must name a directory" in res.output
    with pytest.raises(ValueError, match="must name a directory"):
        ResultsStore("")


@contextlib.contextmanager
def sigint_not_ignored():
    """Children started inside get SIGINT's default action even when this process runs with
    SIGINT ignored (a background job of a non-interactive shell does, and an ignored signal
    stays ignored across exec): Python then installs its Ctrl-C handler in the child."""
    previous = signal.getsignal(signal.SIGINT)
    if previous == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if previous == signal.SIG_IGN:
            signal.signal(signal.SIGINT, previous)


@linux
def test_ctrl_c_exits_130_and_keeps_the_results(tmp_path, reference):
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("[]")  # an earlier run's: stale once a run starts
    with sigint_not_ignored():
        proc = subprocess.Popen(cli(out, "--workers", "2"), stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: stored_lines(out) >= 2 * REPS, 60, "two stored points", proc)
        workers = pool_workers(proc.pid)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr and "Aborted" not in stderr
    assert json.loads((out / "run.json").read_text())["status"] == "interrupted"
    assert not (out / "summary.json").exists()
    lines = stored_lines(out)
    assert lines % REPS == 0 and 2 <= lines // REPS < POINTS  # whole points, kept
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(w) for w in workers):
        time.sleep(0.05)
    assert not [w for w in workers if alive(w)]  # the pool was stopped
    # the same command resumes (a fresh process: the code digest of its config hash is the
    # interrupted run's)
    done = subprocess.run(cli(out), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "run.json").read_text())["points_run"] == POINTS - lines // REPS
    summary = json.loads((out / "summary.json").read_text())
    assert without_timing(summary) == without_timing(reference)


def test_baseline_writer_refuses_an_empty_catalogue_and_a_fifo(tmp_path, monkeypatch, capsys):
    from bilevel_theory.verify import baseline  # noqa: PLC0415

    path = tmp_path / "baseline.json"
    monkeypatch.setattr(baseline, "expected_verdicts", lambda claims=None: {})
    assert baseline.main(["--path", str(path)]) == 2
    assert "refusing to write an empty baseline" in capsys.readouterr().err
    assert not path.exists()
    monkeypatch.setattr(baseline, "expected_verdicts", lambda claims=None: {FAST: "holds"})
    assert baseline.main(["--path", str(path)]) == 0
    assert json.loads(path.read_text()) == {FAST: "holds"}
    assert baseline.main(["--check", "--path", str(path)]) == 0
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    assert baseline.main(["--check", "--path", str(fifo)]) == 2  # not waited on
    assert "not a regular file" in capsys.readouterr().err


# ------------------------------------------------ repair, SIGTERM, report workers


def test_invalid_line_is_repaired_and_its_point_recomputed(tmp_path):
    out = tmp_path / "out"
    args = ["verify", FAST, "--catalogue", CATALOGUE, "--out", str(out), "--quiet"]
    runner = CliRunner()
    assert runner.invoke(cli_main, args).exit_code == 0
    expected = without_timing(json.loads((out / "summary.json").read_text()))
    path = out / "results.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    reps = FAST_CLAIM.replicates["smoke"]
    lines[reps + 1] = b'{"claim": "demo.vari\n'  # a damaged row of the second point
    path.write_bytes(b"".join(lines))
    for cmd in (args, ["report", str(out), "--quiet"]):
        res = runner.invoke(cli_main, cmd)
        assert res.exit_code == 2 and "not valid JSON" in res.output, res.output
        assert "verify --repair" in res.output
    res = runner.invoke(cli_main, [*args, "--repair"])
    assert res.exit_code == 0, res.output
    assert "moved 1 damaged line(s)" in res.output
    moved = list(out.glob("results.jsonl.corrupt-*"))
    assert len(moved) == 1 and moved[0].read_bytes() == b'{"claim": "demo.vari\n'
    assert json.loads((out / "run.json").read_text())["points_run"] == 1  # the damaged point
    assert without_timing(json.loads((out / "summary.json").read_text())) == expected
    res = runner.invoke(cli_main, [*args, "--repair", "--dry-run"])
    assert res.exit_code == 2 and "not with `--dry-run`" in res.output


FAST_CLAIM = next(c for c in DEMO_CLAIMS if c.id == FAST)


def signal_as_gnu_timeout(proc):
    """SIGTERM as GNU ``timeout`` sends it: to the command, then to its whole process group
    (the workers too), so the command receives it twice in quick succession."""
    os.kill(proc.pid, signal.SIGTERM)
    os.killpg(proc.pid, signal.SIGTERM)


@linux
@pytest.mark.parametrize("terminate", [subprocess.Popen.terminate, signal_as_gnu_timeout],
                         ids=["once", "process-and-group"])
def test_sigterm_marks_the_run_interrupted(tmp_path, terminate):
    out = tmp_path / "out"
    proc = subprocess.Popen(cli(out, "--workers", "2"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        wait_for(lambda: stored_lines(out) >= REPS, 60, "one stored point", proc)
        workers = pool_workers(proc.pid)
        terminate(proc)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == 143, stderr
    assert "terminated (SIGTERM)" in stderr and "Traceback" not in stderr
    assert json.loads((out / "run.json").read_text())["status"] == "interrupted"
    assert stored_lines(out) % REPS == 0
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(w) for w in workers):
        time.sleep(0.05)
    assert not [w for w in workers if alive(w)]


def test_a_second_sigterm_does_not_interrupt_the_cleanup():
    from bilevel_theory.verify.cli import Terminated, _terminate_as_interrupt

    cleaned = False
    with pytest.raises(Terminated), _terminate_as_interrupt():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises before this ends
        finally:
            os.kill(os.getpid(), signal.SIGTERM)  # e.g. GNU timeout's signal to the group
            time.sleep(0.05)
            cleaned = True
    assert cleaned
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # restored afterwards


SLOW_FIGURES = """
import importlib, time
render = importlib.import_module("bilevel_theory.reports.render")

def slow(task):
    time.sleep(120)

render._figure_task = slow  # figures that outlast the test
print("rendering", flush=True)
for _ in render._run_tasks([("a",)] * 4, 2):
    pass
"""


@linux
def test_report_workers_die_with_a_killed_parent(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", SLOW_FIGURES], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "rendering"

        def workers():
            return [c for c in children(proc.pid)
                    if b"resource_tracker" not in Path(f"/proc/{c}/cmdline").read_bytes()]

        wait_for(lambda: len(workers()) == 2, 60, "two figure workers", proc)
        found = workers()
        proc.kill()  # kill -9: no chance to stop its pool
    finally:
        proc.wait(timeout=30)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(alive(w) for w in found):
        time.sleep(0.05)
    orphans = [w for w in found if alive(w)]
    for w in orphans:  # do not leave them behind, even when the test fails
        os.kill(w, signal.SIGKILL)
    assert not orphans, f"figure workers {orphans} outlived their killed parent"
