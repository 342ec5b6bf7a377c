"""Sweeps on a Dask cluster (``--scheduler``): identical to a serial run, even when a worker
is killed mid-run (its tasks are recomputed, every point is stored exactly once); a stopped
worker ends the run at the point timeout and a lost scheduler with exit code 3; one-line
errors for an unreachable scheduler and for a missing dask.

The clusters are local (``127.0.0.1``), started per test and closed in ``finally``; every
wait has an explicit timeout.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter

import pytest

from bilevel_theory.verify import check, run_suite
from bilevel_theory.verify.claims.demo import CATALOGUE, DEMO_CLAIMS
from bilevel_theory.verify.distributed import check_address
from bilevel_theory.verify.runner import MeasureError, make_executor

try:
    import distributed
except ImportError:  # pragma: no cover - the extra is not installed
    distributed = None

needs_dask = pytest.mark.skipif(
    distributed is None,
    reason="dask.distributed is not installed (pip install 'bilevel-theory[distributed]')")

ENTRY = "from bilevel_theory.reports.cli import main; main()"  # the `bilevel-theory` console script
PATTERN = "demo.[sv]*"  # slow_variance, stationarity_at_most, variance_{vs_n,contrast,bounded}
SLOW = "demo.slow_variance"
SLOW_CLAIM = next(c for c in DEMO_CLAIMS if c.id == SLOW)
REPS = SLOW_CLAIM.replicates["smoke"]


def without_timing(entries):
    return [{k: v for k, v in e.items() if k != "seconds"} for e in entries]


def store_rows(out):
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return rows, Counter((r["claim"], r["point"], r["replicate"]) for r in rows)


def metrics_by_key(rows):
    return {(r["claim"], r["point"], r["replicate"]): (r["seed"], json.dumps(r["metrics"]))
            for r in rows}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def cluster(request):
    """A local cluster of 2 one-thread worker processes and a client to watch it; the
    scheduler's ``allowed-failures`` can be set by indirect parametrization."""
    import dask  # noqa: PLC0415

    config = {}
    if getattr(request, "param", None) is not None:
        config["distributed.scheduler.allowed-failures"] = request.param
    with dask.config.set(config):  # read when the (in-process) scheduler starts
        cl = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      host="127.0.0.1", dashboard_address=None,
                                      silence_logs=logging.ERROR)
    client = distributed.Client(cl, set_as_default=False, timeout=30)
    try:
        yield cl, client
    finally:
        client.close(timeout=20)
        cl.close(timeout=30)


@needs_dask
@pytest.mark.parametrize("cluster", [None, 0], indirect=True,
                         ids=["rescheduled", "killedworker-resubmitted"])
def test_killed_worker_mid_run_gives_the_serial_results(tmp_path, cluster, request):
    """Default: the scheduler reschedules the killed worker's tasks.  With
    ``allowed-failures=0`` they fail with ``KilledWorker`` and the executor resubmits them."""
    cl, client = cluster
    serial = run_suite(PATTERN, "smoke", tmp_path / "serial", progress=False,
                       catalogue=CATALOGUE, seed=3)

    out = tmp_path / "dask"
    done: dict = {}

    def target():
        try:
            done["results"] = run_suite(PATTERN, "smoke", out, progress=False,
                                        catalogue=CATALOGUE, seed=3,
                                        scheduler=cl.scheduler_address)
        except BaseException as err:  # noqa: BLE001 - reported by the main thread
            done["error"] = err

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    killed = None
    deadline = time.monotonic() + 25
    while killed is None and thread.is_alive() and time.monotonic() < deadline:
        # a worker running a slow point (assigned to it), once some points are stored
        stored = (out / "results.jsonl").exists() and \
            (out / "results.jsonl").read_bytes().count(b"\n") >= 2 * REPS
        if stored:
            running = client.processing()
            victim = next((w for w, keys in running.items()
                           if any(SLOW in k for k in keys)), None)
            if victim is not None:
                pid = client.run(os.getpid, workers=[victim])[victim]
                os.kill(pid, signal.SIGKILL)
                killed = (victim, pid, [str(k) for k in running[victim]])
                break
        time.sleep(0.02)
    thread.join(timeout=30)
    assert not thread.is_alive(), "the distributed run did not finish within 30 s"
    assert killed is not None, "no worker could be killed while running a slow point"
    assert "error" not in done, repr(done.get("error"))
    # the killed worker is gone (the nanny may have started a new one)
    assert killed[1] not in client.run(os.getpid).values()

    # same verdicts, measured values and intervals as the serial run
    assert without_timing([r.to_dict() for r in done["results"]]) == \
        without_timing([r.to_dict() for r in serial])
    assert json.loads((out / "summary.json").read_text()) == \
        [r.to_dict() for r in done["results"]]
    assert json.loads((out / "run.json").read_text())["scheduler"] == cl.scheduler_address
    # every (claim, point, replicate) stored exactly once, with the serial run's numbers
    rows, counts = store_rows(out)
    ref_rows, ref_counts = store_rows(tmp_path / "serial")
    assert max(counts.values()) == 1, [k for k, n in counts.items() if n > 1][:5]
    assert set(counts) == set(ref_counts)
    assert len(rows) % REPS == 0
    assert metrics_by_key(rows) == metrics_by_key(ref_rows)
    if request.node.callspec.id == "killedworker-resubmitted":
        # the lost points failed with KilledWorker and were resubmitted (attempt 1)
        log = getattr(cl.scheduler, "transition_log", None)
        if log is not None:
            assert any(str(t[0]).endswith("-1") and SLOW in str(t[0]) for t in log)


@needs_dask
def test_check_and_cli_on_a_cluster_match_serial(tmp_path, cluster):
    cl, client = cluster
    claim = "demo.variance_contrast"
    serial = check(claim, catalogue=CATALOGUE, seed=1)
    by_address = check(claim, catalogue=CATALOGUE, seed=1, scheduler=cl.scheduler_address)
    by_client = check(claim, catalogue=CATALOGUE, seed=1, scheduler=client,
                      store=tmp_path / "store")
    assert client.status == "running"  # a Client passed in is left open
    for r in (by_address, by_client):
        assert without_timing([r.to_dict()]) == without_timing([serial.to_dict()])

    # a claim outside any catalogue travels with its tasks (its measure pickled by value);
    # a measure that raises is retried by dask, then its MeasureError reaches the caller
    broken = dataclasses.replace(SLOW_CLAIM, id="demo.broken",
                                 measure=lambda x, replicates, seed, backend: 1 / 0)
    with pytest.raises(MeasureError, match="demo.broken.*ZeroDivisionError"):
        check(broken, catalogue=CATALOGUE, scheduler=client)

    out = tmp_path / "cli"
    address = cl.scheduler_address.removeprefix("tcp://")  # HOST:PORT means tcp://
    proc = subprocess.run([sys.executable, "-c", ENTRY, "verify", "demo.variance_*",
                           "--catalogue", CATALOGUE, "--out", str(out), "--quiet",
                           "--scheduler", address],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    ref = run_suite("demo.variance_*", "smoke", tmp_path / "ref", progress=False,
                    catalogue=CATALOGUE)
    assert without_timing(json.loads((out / "summary.json").read_text())) == \
        without_timing([r.to_dict() for r in ref])
    _, counts = store_rows(out)
    assert set(counts.values()) == {1}


@needs_dask
def test_stopped_worker_ends_the_run_at_the_point_timeout(tmp_path, cluster):
    """A SIGSTOP-ed Dask worker keeps its heartbeat silent for ``worker-ttl`` (5 min): the
    point timeout ends the run first (exit 3, naming the claim, the point, the worker)."""
    cl, client = cluster
    out = tmp_path / "out"
    store = out / "results.jsonl"
    pids = list(client.run(os.getpid).values())
    proc = subprocess.Popen([sys.executable, "-c", ENTRY, "verify", SLOW, "--catalogue",
                             CATALOGUE, "--out", str(out), "--quiet", "--scheduler",
                             cl.scheduler_address, "--point-timeout", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stopped: list[int] = []
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None:
            if store.exists() and store.read_bytes().count(b"\n") >= REPS:
                break
            time.sleep(0.02)
        assert proc.poll() is None, f"run ended before the stop: {proc.stderr.read()}"
        for pid in pids:  # every worker: the points left can never finish
            os.kill(pid, signal.SIGSTOP)
            stopped.append(pid)
        before = store.read_bytes().count(b"\n")
        start = time.monotonic()
        _, stderr = proc.communicate(timeout=30)
        elapsed = time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        for pid in stopped:  # let the cluster close normally
            os.kill(pid, signal.SIGCONT)
    assert proc.returncode == 3, stderr
    assert elapsed < 20, elapsed
    last = stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: claim {SLOW}: point "), stderr
    assert "did not finish within the point timeout of 2 s" in last
    assert "on the dask worker" in last and cl.scheduler_address in last
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == "interrupted" and info["reason"].startswith("PointTimeout")
    rows, counts = store_rows(out)  # the points finished before the stop are kept, whole
    assert set(counts.values()) == {1} and len(rows) % REPS == 0
    assert before <= len(rows) < len(SLOW_CLAIM.grid["smoke"]) * REPS


def wait_listening(port, proc, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the scheduler exited"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on port {port} after {seconds} s")


@needs_dask
def test_killed_scheduler_ends_the_run_and_the_store_resumes(tmp_path):
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    out = tmp_path / "out"
    store = out / "results.jsonl"
    procs = []
    try:
        scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler",
                                      "--host", "127.0.0.1", "--port", str(port),
                                      "--no-dashboard"], **quiet)
        procs.append(scheduler)
        wait_listening(port, scheduler)
        procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker",
                                       address, "--nthreads", "1", "--no-nanny",
                                       "--no-dashboard", "--host", "127.0.0.1"], **quiet))
        run = subprocess.Popen([sys.executable, "-c", ENTRY, "verify", SLOW, "--catalogue",
                                CATALOGUE, "--out", str(out), "--quiet", "--scheduler",
                                address], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, env=env)
        procs.append(run)
        deadline = time.monotonic() + 25
        while time.monotonic() < deadline and run.poll() is None:
            if store.exists() and store.read_bytes().count(b"\n") >= 2 * REPS:
                break
            time.sleep(0.02)
        assert run.poll() is None, f"run ended before the kill: {run.stderr.read()}"
        scheduler.kill()
        _, stderr = run.communicate(timeout=25)
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=30)
    # a run ended early (exit 3, as a lost worker), not bad input (2): the points are stored
    assert run.returncode == 3, stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("error: lost the connection to the dask scheduler at " + address)
    rows, counts = store_rows(out)
    assert set(counts.values()) == {1} and len(rows) % REPS == 0  # whole points, once each
    total = len(SLOW_CLAIM.grid["smoke"])
    assert 2 <= len(rows) // REPS < total
    assert f"after {len(rows) // REPS} of {total} points" in last and "rerun to resume" in last
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == "interrupted", info
    assert info["reason"].startswith("SchedulerLost: lost the connection to the dask scheduler")
    # the store resumes (locally) to the results of an uninterrupted serial run
    resumed = run_suite(SLOW, "smoke", out, progress=False, catalogue=CATALOGUE)
    serial = run_suite(SLOW, "smoke", tmp_path / "serial", progress=False, catalogue=CATALOGUE)
    assert without_timing([r.to_dict() for r in resumed]) == \
        without_timing([r.to_dict() for r in serial])
    assert metrics_by_key(store_rows(out)[0]) == metrics_by_key(store_rows(tmp_path / "serial")[0])


@needs_dask
def test_unreachable_scheduler_is_a_one_line_error(tmp_path):
    address = f"tcp://127.0.0.1:{free_port()}"  # nothing listens there
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", ENTRY, "verify", "demo.variance_vs_n",
                           "--catalogue", CATALOGUE, "--out", str(tmp_path / "out"),
                           "--quiet", "--scheduler", address],
                          capture_output=True, text=True, timeout=60, env=env)
    elapsed = time.monotonic() - start
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert address in lines[0] and "scheduler" in lines[0]
    assert elapsed < 30
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_missing_dask_is_a_one_line_error_naming_the_extra(tmp_path):
    hide = "import sys; sys.modules['distributed'] = None; "  # as if dask were not installed
    proc = subprocess.run([sys.executable, "-c", hide + ENTRY, "verify", "demo.variance_vs_n",
                           "--catalogue", CATALOGUE, "--out", str(tmp_path / "out"),
                           "--quiet", "--scheduler", "tcp://127.0.0.1:8786"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "bilevel-theory[distributed]" in lines[0]


def test_scheduler_inputs_are_validated():
    assert check_address("127.0.0.1:8786") == "tcp://127.0.0.1:8786"
    assert check_address("tcp://localhost:8786") == "tcp://localhost:8786"
    for bad in ("", "http://127.0.0.1:8786", "tcp://127.0.0.1", "tcp://127.0.0.1:99999",
                "tcp://host:port"):
        with pytest.raises(ValueError, match="scheduler"):
            check_address(bad)
    with pytest.raises(TypeError, match="scheduler"):
        check_address(8786)
    with pytest.raises(ValueError, match="workers"):
        make_executor(2, scheduler="tcp://127.0.0.1:8786")
