"""The results store: atomic per-point appends, resume, corrupt and partial files."""

from __future__ import annotations

import dataclasses
import json
import os

import numpy as np
import pytest

import bilevel_theory.verify.store as store_mod
from bilevel_theory.verify import CorruptStore, ResultsStore, check, summarize
from bilevel_theory.verify.claims.demo import DEMO_CLAIMS, average_noise
from bilevel_theory.verify.runner import _tasks, config_hash, point_seed, run_task

VARIANCE = next(c for c in DEMO_CLAIMS if c.id == "demo.variance_vs_n")


def rows_for(point, replicates=3, claim="c.x", budget="smoke", cfg="h"):
    return [{"claim": claim, "budget": budget, "point": point, "value": float(point + 1),
             "replicate": r, "replicates": replicates, "metrics": {"value": 1.0 / (point + 1)},
             "config_hash": cfg, "seed": 7, "base_seed": 0, "backend": "numpy", "seconds": 0.1}
            for r in range(replicates)]


def counting(claim):
    """The claim with a measure that records the points it is asked for."""
    calls = []

    def measure(x, replicates, seed, backend):
        calls.append(x)
        return average_noise(x, replicates, seed, backend)

    return dataclasses.replace(claim, measure=measure), calls


def test_each_point_is_one_append_write(tmp_path, monkeypatch):
    writes, flags = [], []
    real_write, real_open = os.write, os.open

    def spy_write(fd, data):
        writes.append(bytes(data))
        return real_write(fd, data)

    def spy_open(path, flag, *a):
        if str(path).endswith("results.jsonl"):
            flags.append(flag)
        return real_open(path, flag, *a)

    monkeypatch.setattr(store_mod.os, "write", spy_write)
    monkeypatch.setattr(store_mod.os, "open", spy_open)
    store = ResultsStore(tmp_path)
    store.append_point(rows_for(0))
    store.append_point(rows_for(1))
    assert len(writes) == 2 and all(f & os.O_APPEND for f in flags)
    assert [len(w.splitlines()) for w in writes] == [3, 3]
    assert store.completed("c.x", "smoke", "h") == {0, 1}
    with pytest.raises(ValueError, match="one sweep point"):
        store.append_point(rows_for(0) + rows_for(1))


def test_rows_carry_the_documented_fields(tmp_path):
    claim = VARIANCE
    check(claim, "smoke", seed=3, store=tmp_path)
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert len(lines) == len(claim.grid["smoke"]) * claim.replicates["smoke"]
    row = json.loads(lines[-1])
    for key in ("claim", "budget", "point", "value", "replicate", "metrics", "backend",
                "versions", "config_hash", "seed", "seconds", "base_seed", "replicates"):
        assert key in row
    assert set(row["versions"]) == {"bilevel-theory", "numpy", "scipy", "python"}
    assert row["seed"] == point_seed(3, claim.id, row["point"])
    assert row["config_hash"] == config_hash(claim, "smoke")


def test_resume_skips_stored_points(tmp_path):
    claim, calls = counting(VARIANCE)
    store = ResultsStore(tmp_path)
    store.append_point(run_task(_tasks(claim, "smoke", 0, "numpy", None, ())[2]))
    calls.clear()  # point 2 is stored
    first = check(claim, "smoke", seed=0, store=store)
    assert sorted(calls) == sorted(x for i, x in enumerate(claim.grid["smoke"]) if i != 2)
    calls.clear()
    second = check(claim, "smoke", seed=0, store=store)
    assert calls == []  # everything is stored
    assert (second.verdict, second.measured, second.interval) == \
        (first.verdict, first.measured, first.interval)
    fresh = check(VARIANCE, "smoke", seed=0)  # in memory, nothing reused
    assert (fresh.measured, fresh.interval) == (first.measured, first.interval)
    # another base seed or another claim definition does not reuse these rows
    check(claim, "smoke", seed=1, store=store)
    assert len(calls) == len(claim.grid["smoke"])
    calls.clear()
    changed = dataclasses.replace(claim, tolerance=0.2)
    check(changed, "smoke", seed=0, store=store)
    assert len(calls) == len(claim.grid["smoke"])


def test_incomplete_point_is_not_completed_and_duplicates_resolve(tmp_path):
    store = ResultsStore(tmp_path)
    store.append_point(rows_for(0)[:2])  # replicate 2 missing
    assert store.completed("c.x", "smoke", "h") == set()
    store.append_point(rows_for(0))
    assert store.completed("c.x", "smoke", "h") == {0}
    assert len(store.rows("c.x")) == 3


def test_rows_of_one_claim_follow_the_file_across_appends(tmp_path):
    """``rows(claim)`` (read through the per-claim index) is the claim's part of ``rows()``, in
    file order, and sees rows appended after the index was built, by this store or another."""
    store, other = ResultsStore(tmp_path), ResultsStore(tmp_path)
    store.append_point(rows_for(0, claim="c.a"))
    store.append_point(rows_for(0, claim="c.b"))
    assert store.rows("c.a") == [r for r in store.rows() if r["claim"] == "c.a"]
    other.append_point(rows_for(1, claim="c.a"))
    other.append_point(rows_for(0, claim="c.a", cfg="h2"))
    got = store.rows("c.a")
    assert got == [r for r in store.rows() if r["claim"] == "c.a"]
    assert [(r["point"], r["config_hash"]) for r in got[::3]] == [(0, "h"), (1, "h"), (0, "h2")]
    assert store.rows("c.none") == [] and len(store.rows("c.b")) == 3


@pytest.mark.parametrize("damage, what", [
    ("not json{", "line 4 is not valid JSON"),
    ("", "line 4 is empty"),
])
def test_corrupt_line_names_path_and_line(tmp_path, damage, what):
    store = ResultsStore(tmp_path)
    store.append_point(rows_for(0))
    with open(store.path, "a") as fh:
        fh.write(damage + "\n")
    store.append_point(rows_for(1))
    with pytest.raises(CorruptStore) as err:
        store.completed("c.x", "smoke", "h")
    assert str(store.path) in str(err.value) and what in str(err.value)
    assert isinstance(err.value, ValueError)
    with pytest.raises(CorruptStore):  # never skipped by any reader
        summarize(tmp_path, claims=[VARIANCE], budget="smoke")


@pytest.mark.parametrize("damage, what", [
    ('{"claim": "c.x"}', "lacks required keys"),
    ("[1, 2]", "is not a JSON object"),
    ("WRONG_TYPE", "wrong type or value in 'point'"),
    ("WRONG_METRIC", "wrong type or value in 'metrics'"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"claim": "c.x", "metrics": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
], ids=["no-keys", "list", "wrong-type", "wrong-metric", "nested", "nested-metrics"])
def test_a_line_that_is_no_row_is_reported_with_path_line_and_skipped(tmp_path, damage, what):
    store = ResultsStore(tmp_path)
    store.append_point(rows_for(0))
    store.append_point(rows_for(1))
    row = rows_for(1)[1]  # the second replicate of point 1, stored again, damaged
    if damage == "WRONG_TYPE":
        damage = json.dumps({**row, "point": "abc"})
    elif damage == "WRONG_METRIC":
        damage = json.dumps({**row, "metrics": {"value": "abc"}})
    lines = store.path.read_text().splitlines(keepends=True)
    lines[4] = damage + "\n"  # line 5: replicate 1 of point 1
    store.path.write_text("".join(lines))
    reader = ResultsStore(tmp_path)
    with pytest.warns(UserWarning, match=rf"{tmp_path}/results.jsonl:5: skipped.*{what}"):
        assert reader.completed("c.x", "smoke", "h") == {0}  # point 1 is recomputed
    assert [n for n, _ in reader.skipped] == [5]
    with pytest.warns(UserWarning, match="results.jsonl:5: skipped"):
        reader.append_point(rows_for(1))  # what a resume does
        assert reader.completed("c.x", "smoke", "h") == {0, 1}


def test_trailing_partial_line_is_ignored_with_a_warning_and_repaired(tmp_path):
    store = ResultsStore(tmp_path)
    store.append_point(rows_for(0))
    store.append_point(rows_for(1))
    data = store.path.read_bytes()
    cut = data[: len(data) - 25]  # the last row of point 1 was cut short, no newline
    store.path.write_bytes(cut)
    reader = ResultsStore(tmp_path)
    with pytest.warns(UserWarning, match=f"{tmp_path}.*partial last line.*line 6"):
        assert reader.completed("c.x", "smoke", "h") == {0}  # point 1 will be recomputed
    writer = ResultsStore(tmp_path)
    with pytest.warns(UserWarning, match="removed a partial last line"):
        writer.append_point(rows_for(1))
    text = store.path.read_text()
    assert text.endswith("\n") and all(json.loads(line) for line in text.splitlines())
    assert ResultsStore(tmp_path).completed("c.x", "smoke", "h") == {0, 1}


def test_partial_line_in_the_middle_is_corruption(tmp_path):
    store = ResultsStore(tmp_path)
    store.append_point(rows_for(0))
    with open(store.path, "a") as fh:
        fh.write('{"claim": "c.x", "bud')  # cut short, then more data was appended
    with open(store.path, "a") as fh:
        fh.write(json.dumps(rows_for(1)[0]) + "\n")
    with pytest.raises(CorruptStore, match="line 4 is not valid JSON"):
        ResultsStore(tmp_path).rows()


def test_non_finite_metrics_round_trip(tmp_path):
    store = ResultsStore(tmp_path)
    rows = rows_for(0)
    rows[1]["metrics"]["value"] = float("nan")
    rows[2]["metrics"]["value"] = float("inf")
    store.append_point(rows)
    got = [r["metrics"]["value"] for r in ResultsStore(tmp_path).rows()]
    assert got[0] == 1.0 and np.isnan(got[1]) and got[2] == np.inf


def test_summarize_statuses_from_the_store_alone(tmp_path):
    claim, calls = counting(VARIANCE)
    store = ResultsStore(tmp_path)
    tasks = _tasks(claim, "smoke", 0, "numpy", None, ())
    for t in tasks[:2]:
        store.append_point(run_task(t))
    other = next(c for c in DEMO_CLAIMS if c.id == "demo.geometric_bias")
    entries = {e["id"]: e for e in summarize(tmp_path, claims=[claim, other], budget="smoke")}
    assert entries[other.id]["status"] == "missing"
    assert entries[other.id]["verdict"] == "inconclusive"
    assert entries[other.id]["reason"] == "not run"
    part = entries[claim.id]
    assert part["status"] == "partial" and part["points"] == 2
    assert part["verdict"] == "inconclusive" and "only 2 point" in part["reason"]
    for t in tasks[2:5]:
        store.append_point(run_task(t))
    part = summarize(tmp_path, claims=[claim], budget="smoke")[0]
    assert part["status"] == "partial" and part["points"] == 5 and part["fit"]["slope"]
    calls.clear()
    full = check(claim, "smoke", seed=0, store=store)
    assert len(calls) == 3  # only the missing points ran
    entry = summarize(tmp_path, claims=[claim], budget="smoke")[0]
    assert entry["status"] == "complete" and entry["measured"] == full.measured
    assert json.dumps(entry, allow_nan=False)  # strict JSON


def test_unwritable_directory_is_reported(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OSError, match="cannot write results"):
        ResultsStore(blocker / "sub").ensure_writable()
    with pytest.raises(NotADirectoryError):
        ResultsStore(blocker)


def test_failing_measure_names_the_point_and_keeps_earlier_points(tmp_path):
    from bilevel_theory.verify.runner import MeasureError  # noqa: PLC0415

    def measure(x, replicates, seed, backend):
        if x >= 8:
            raise FloatingPointError("overflow")
        return average_noise(x, replicates, seed, backend)

    claim = dataclasses.replace(VARIANCE, measure=measure)
    with pytest.raises(MeasureError, match=r"demo.variance_vs_n.*point 3 \(n=8, seed \d+\).*"
                                           r"FloatingPointError: overflow"):
        check(claim, "smoke", seed=0, store=tmp_path)
    assert ResultsStore(tmp_path).completed(claim.id, "smoke", config_hash(claim, "smoke"),
                                            0, "numpy") == {0, 1, 2}


def test_stored_points_follow_the_code_not_its_documentation(tmp_path):
    """The config hash's code digest ignores docstrings and comments but not code."""
    from bilevel_theory.verify.runner import _code_of

    a, b, c = (tmp_path / n for n in ("a.py", "b.py", "c.py"))
    a.write_text('"""Doc."""\ndef f(x):\n    """One."""\n    return x + 1  # note\n')
    b.write_text('"""Other doc."""\ndef f(x):\n    """Two."""\n    return x + 1\n')
    c.write_text('"""Doc."""\ndef f(x):\n    """One."""\n    return x + 2\n')
    assert _code_of(a) == _code_of(b)
    assert _code_of(a) != _code_of(c)
    before = _code_of(a)   # parsed once per source: an edit of the same size is still seen
    a.write_text(a.read_text().replace("x + 1", "x + 2"))
    assert _code_of(a) != before and _code_of(a) == _code_of(c)


# ------------------------------------------------- strict JSON, hard links, repair


def _refuse(token):
    raise ValueError(f"not strict JSON: {token}")


def test_non_finite_metrics_are_strict_json_and_read_back(tmp_path):
    store = ResultsStore(tmp_path)
    rows = rows_for(0)
    for r, v in zip(rows, (float("nan"), float("inf"), -float("inf")), strict=True):
        r["metrics"] = {"value": v, "finite": 2.0}
    store.append_point(rows)
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    parsed = [json.loads(line, parse_constant=_refuse) for line in lines]
    assert [p["nonfinite"] for p in parsed] == [{"value": t} for t in ("nan", "inf", "-inf")]
    assert all(p["metrics"] == {"value": None, "finite": 2.0} for p in parsed)
    back = [r["metrics"]["value"] for r in ResultsStore(tmp_path).rows()]
    assert np.isnan(back[0]) and back[1:] == [np.inf, -np.inf]
    assert all("nonfinite" not in r for r in ResultsStore(tmp_path).rows())
    # a row written with the NaN token of older versions is still read
    old = dict(rows_for(1, replicates=1)[0], metrics={"value": float("nan")})
    with open(tmp_path / "results.jsonl", "a") as fh:
        fh.write(json.dumps(old) + "\n")
    assert ResultsStore(tmp_path).completed("c.x", "smoke", "h") == {0, 1}
    with pytest.raises(ValueError, match="only metrics may be non-finite"):
        store.append_point([dict(rows_for(2, replicates=1)[0], seconds=float("nan"))])


def test_hard_linked_store_and_lock_are_not_written_through(tmp_path):
    original, snapshot = tmp_path / "orig", tmp_path / "snap"
    ResultsStore(original).append_point(rows_for(0))
    (original / store_mod.LOCKNAME).write_text("12345\n")  # a lock left with a PID
    snapshot.mkdir()
    for name in ("results.jsonl", store_mod.LOCKNAME):  # what `cp -al` does
        os.link(original / name, snapshot / name)
    before = (original / "results.jsonl").read_bytes()
    with pytest.warns(UserWarning, match="hard links"):
        ResultsStore(snapshot).append_point(rows_for(1))
    assert (original / "results.jsonl").read_bytes() == before
    assert (original / store_mod.LOCKNAME).read_text() == "12345\n"
    assert ResultsStore(snapshot).completed("c.x", "smoke", "h") == {0, 1}
    assert ResultsStore(original).completed("c.x", "smoke", "h") == {0}
    for name in ("results.jsonl", store_mod.LOCKNAME):
        assert os.stat(snapshot / name).st_nlink == 1 == os.stat(original / name).st_nlink


def test_repair_moves_invalid_lines_aside_and_keeps_the_rest(tmp_path):
    store = ResultsStore(tmp_path)
    for p in range(3):
        store.append_point(rows_for(p))
    path = tmp_path / "results.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[4] = b'{"claim": "c.x", "budg'  # point 1, replicate 1: cut in the middle
    path.write_bytes(b"\n".join(lines) + b"{partial")
    with pytest.raises(CorruptStore, match="line 5 is not valid JSON.*--repair"):
        ResultsStore(tmp_path).rows()
    moved, where = ResultsStore(tmp_path).repair()
    assert moved == 2 and where.name.startswith("results.jsonl.corrupt-")
    assert where.read_bytes() == b'{"claim": "c.x", "budg\n{partial\n'
    assert ResultsStore(tmp_path).completed("c.x", "smoke", "h") == {0, 2}
    assert len(path.read_bytes().splitlines()) == 8
    assert ResultsStore(tmp_path).repair() == (0, None)  # nothing left to repair
