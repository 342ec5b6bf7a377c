"""The benchmarks' per-client reference loop computes the same FedMBO round as the vectorized
implementation (same recorded draws, float64 tolerance), and ``--quick`` writes a JSON document
of the documented shape.  No timing is asserted here: speed is measured in ``benchmarks/``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchmarks import hvp_variants
from benchmarks.reference import (
    ReferenceData,
    Tape,
    dense_clients,
    fedmbo_round_reference,
    record_fedmbo_round,
    touched_clients,
)
from bilevel_theory.problems import QuadraticBilevel, cupy_available

HP = dict(inner_steps=3, neumann_steps=6, sampled_clients=7, samples=1, outer_step=0.05,
          inner_step=0.1)


def _problem(storage, noise, clients=40, dim_x=3, dim_y=4):
    return QuadraticBilevel.random(clients=clients, dim_x=dim_x, dim_y=dim_y, kappa=5.0,
                                   heterogeneity=0.7, noise=noise, seed=3, storage=storage)


@pytest.mark.parametrize("storage", ["structured", "dense"])
@pytest.mark.parametrize("noise", [0.0, 0.3])
def test_reference_matches_vectorized_round(storage, noise):
    """≈ at float64 tolerance (the loop sums clients in another order)."""
    prob = _problem(storage, noise)
    rec = record_fedmbo_round(prob, replicates=3, seed=5, hp=HP)
    data = ReferenceData.build(prob, touched_clients(rec["tape"]))
    x, y = fedmbo_round_reference(prob, data, rec["tape"], rec["x0"], rec["y0"], rec["hp"])
    assert rec["tape"].done(), "the loop must consume every recorded draw"
    np.testing.assert_allclose(y, rec["y"], rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(x, rec["x"], rtol=1e-12, atol=1e-13)
    assert np.abs(x - rec["x0"]).max() > 1e-3, "the round must move x (non-trivial check)"


def test_reference_subset_of_replicates_matches():
    prob = _problem("structured", 0.2)
    rec = record_fedmbo_round(prob, replicates=4, seed=1, hp=HP)
    data = ReferenceData.build(prob)
    x, y = fedmbo_round_reference(prob, data, rec["tape"], rec["x0"], rec["y0"], rec["hp"],
                                  replicates=2)
    np.testing.assert_allclose(x, rec["x"][:2], rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(y, rec["y"][:2], rtol=1e-12, atol=1e-13)


def test_reference_detects_different_draws():
    """The comparison is sensitive: replaying another seed's draws gives other numbers."""
    prob = _problem("structured", 0.3)
    rec = record_fedmbo_round(prob, replicates=2, seed=0, hp=HP)
    other = record_fedmbo_round(prob, replicates=2, seed=1, hp=HP)
    data = ReferenceData.build(prob)
    x, _ = fedmbo_round_reference(prob, data, other["tape"], rec["x0"], rec["y0"], rec["hp"])
    assert np.abs(x - rec["x"]).max() > 1e-6


def test_tape_checks_the_draw_order():
    tape = Tape()
    tape.append("integers", np.zeros((2, 3), dtype=int))
    with pytest.raises(RuntimeError, match="draw order"):
        tape.take("standard_normal", (2, 3))


@pytest.mark.parametrize("storage", ["structured", "dense"])
def test_dense_clients_match_client_matrices(storage):
    prob = _problem(storage, 0.0, clients=12)
    ids = np.array([0, 5, 11])
    A = dense_clients(prob.A, ids, prob.dim_y)
    B = dense_clients(prob.B, ids, prob.dim_x)
    for k, i in enumerate(ids):
        np.testing.assert_allclose(A[k], prob.client(int(i))["A"], rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(B[k], prob.client(int(i))["B"], rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("storage", ["structured", "dense"])
def test_hvp_variants_match_library(storage):
    prob = _problem(storage, 0.0, clients=50, dim_x=5, dim_y=6)
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 50, size=(3, 5000))  # > one block of rows
    v = rng.standard_normal((3, 5000, 6))
    expected = prob.exact_hvp_yy_g(idx, v)
    variants = hvp_variants.for_family(prob.A)
    assert variants
    for name, fn in variants.items():
        np.testing.assert_allclose(fn(prob.A, idx, v), expected, rtol=1e-12, atol=1e-12,
                                   err_msg=name)


def test_quick_json_schema(tmp_path):
    """Shape of the ``--quick`` document only (no timing is asserted)."""
    from benchmarks.__main__ import main

    out = tmp_path / "bench.json"
    assert main(["--quick", "--no-contention", "--speedup-sampled", "1000", "--json",
                 str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["schema"] == "bilevel-theory-benchmarks/1"
    assert doc["backend"] == "numpy" and doc["quick"] is True
    for key in ("cpu_model", "cores", "numpy", "blas", "backend"):
        assert key in doc["machine"]
    assert doc["copy_bandwidth"]["gbytes_per_s"] > 0
    rows = [r for r in doc["rounds"] if "skipped" not in r]
    assert {r["algorithm"] for r in rows} == {"fedmbo", "fednest"}
    for r in rows:
        for key in ("dim", "replicates", "sampled_clients", "seconds_per_round",
                    "evals_per_second", "peak_memory_bytes", "memory_method",
                    "oracle_calls_per_replicate"):
            assert key in r, key
        assert r["seconds_per_round"] > 0 and r["evals_per_second"] > 0
    for c in doc["speedup"]:
        assert c["reference_matches"] is True
        for key in ("speedup", "reference_seconds", "vectorized_seconds", "met", "target"):
            assert key in c
    for c in doc["bandwidth"]:
        for key in ("bytes_model", "gbytes_per_s", "fraction_of_copy", "breakdown", "met"):
            assert key in c
        assert all(v["matches_library"] for v in c["variants"].values())
    assert doc["memory"]["peak_rss_bytes"] > 0 and "met" in doc["memory"]
    assert set(doc["summary"]) == {"speedup", "bandwidth", "memory"}
    assert {c.get("noise_distribution") for c in doc["speedup"]} >= {"gaussian", "rademacher"}
    assert doc["peak_flops"]["gflops"] > 0
    assert [r["clients"] for r in doc["fednest_loop"]] == [100, 1000]
    assert all(r["loop_seconds"] > 0 and r["toolkit_seconds"] > 0 for r in doc["fednest_loop"])

    from benchmarks import table

    text = table.tables(doc)
    assert "library s/round" in text and "loop s/epoch" in text
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{table.START}\nold\n{table.END}\noutro\n")
    table.update_readme(text, readme)
    body = readme.read_text()
    assert body.startswith("intro\n") and body.endswith("outro\n") and "old" not in body
    short = table.summary(doc)  # the project README's block
    assert "speedup" in short and "benchmarks/figures/throughput.png" in short
    assert short.count("| R = ") == len(doc["speedup"])
    main_readme = tmp_path / "MAIN.md"
    main_readme.write_text(f"top\n{table.MAIN_START}\n{table.MAIN_END}\nend\n")
    table.update_readme(short, main_readme, table.MAIN_START, table.MAIN_END)
    assert short in main_readme.read_text() and main_readme.read_text().endswith("end\n")
    written = table.figures(doc, tmp_path / "figures")
    assert {p.name for p in written} == {"throughput.png", "roofline.png"}


def test_busy_processes_are_stopped():
    """The contention helper's children are gone after the block."""
    from benchmarks.bandwidth import busy_processes

    with busy_processes(1) as procs:
        assert len(procs) == 1 and procs[0].poll() is None
    assert all(p.poll() is not None for p in procs)


def test_cupy_backend_missing_is_a_one_line_error(capsys):
    ok, _ = cupy_available()
    if ok:
        pytest.skip("CuPy is available here; the error path cannot be exercised")
    from benchmarks.__main__ import main

    assert main(["--quick", "--backend", "cupy"]) == 2
    assert "CuPy" in capsys.readouterr().err


def _doc(backend, rows, **machine):
    return dict(backend=backend, machine=dict(cpu_model="cpu", **machine),
                rounds=[dict(algorithm=a, dim=d, replicates=R, sampled_clients=n,
                             seconds_per_round=s) for a, d, R, n, s in rows])


def test_gpu_cpu_comparison_matches_cases_and_judges_the_target(tmp_path, capsys):
    from benchmarks import compare  # noqa: PLC0415

    cpu = _doc("numpy", [("fedmbo", 10, 32, 100_000, 21.0), ("fedmbo", 10, 32, 10_000, 1.6),
                         ("fednest", 10, 1, 100_000, 0.5)])
    gpu = _doc("cupy", [("fedmbo", 10, 32, 100_000, 0.5), ("fedmbo", 10, 32, 10_000, 0.4),
                        ("fednest", 10, 1, 100_000, 0.05), ("fednest", 32, 1, 10, 0.1)],
               gpu="H100")
    rows = compare.compare(cpu, gpu)
    assert [(r["algorithm"], r["sampled_clients"]) for r in rows] == [
        ("fedmbo", 10_000), ("fedmbo", 100_000), ("fednest", 100_000)]
    assert rows[1]["speedup"] == pytest.approx(42.0) and rows[1]["met"] is True
    assert rows[2]["speedup"] == pytest.approx(10.0) and rows[2]["met"] is False
    assert rows[0]["met"] is None  # not at the target's n
    paths = []
    for name, doc in (("cpu", cpu), ("gpu", gpu)):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(doc))
    assert compare.main([str(p) for p in paths]) == 1  # one case misses the target
    out = capsys.readouterr().out
    assert "| fednest | 10 | 1 | 100000 | 0.5 | 0.05 | 10.0× | no |" in out and "H100" in out
    assert compare.main([str(paths[0])]) == 2


@pytest.mark.parametrize("dist", ["rademacher", "uniform"])
def test_reference_replays_other_noise_distributions(dist):
    """The loop replays Rademacher (raw bytes) and uniform draws as the oracle converts them."""
    from bilevel_theory.problems.oracle import with_noise_distribution

    prob = with_noise_distribution(_problem("structured", 0.3), dist)
    rec = record_fedmbo_round(prob, replicates=2, seed=4, hp=HP)
    data = ReferenceData.build(prob, touched_clients(rec["tape"]))
    x, y = fedmbo_round_reference(prob, data, rec["tape"], rec["x0"], rec["y0"], rec["hp"])
    assert rec["tape"].done()
    np.testing.assert_allclose(y, rec["y"], rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(x, rec["x"], rtol=1e-12, atol=1e-13)


def test_fednest_style_loop_matches_the_toolkit_epoch():
    """The per-client FedNest loop (objects per client) computes the toolkit's epoch noise-free
    (same truncation), and moves the iterate (non-trivial)."""
    from benchmarks.fednest_loop import fednest_epoch_loop, make_clients, record_epoch

    prob = _problem("structured", 0.0, clients=30)
    rec = record_epoch(prob, seed=2)
    x, y = fednest_epoch_loop(make_clients(prob), rec["x0"], rec["y0"], rec["hp"],
                              rec["truncation"])
    np.testing.assert_allclose(y, rec["y"], rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(x, rec["x"], rtol=1e-11, atol=1e-12)
    assert np.abs(x - rec["x0"]).max() > 1e-3


def test_torch_style_loop_matches_the_toolkit_epoch():
    """The same loop with torch tensors and autograd derivatives (the released code's way)
    computes the toolkit's epoch noise-free; skipped where torch is not installed."""
    pytest.importorskip("torch", reason="torch is not installed (an optional benchmark)")
    from benchmarks.fednest_loop import _torch_case, record_epoch

    prob = _problem("structured", 0.0, clients=30)
    out = _torch_case(prob, record_epoch(prob, seed=2), 2, repeats=1)
    assert out["loop_matches_toolkit"] and out["loop_seconds"] > 0


def test_budget_cost_is_summed_from_the_ledger_segments(tmp_path):
    """``benchmarks.budgets`` adds up the segments of the stored budget (that of the last
    call) and nothing else: an earlier smoke call in the same directory is left out."""
    from benchmarks import budgets

    def line(budget, status, wall, main, workers, points):
        return {"date": "2026-01-01T00:00:00+00:00", "ended": "2026-01-01T01:00:00+00:00",
                "budget": budget, "seed": 0, "backend": "numpy", "workers": 2,
                "scheduler": None, "mutants": True, "noise_distribution": "gaussian",
                "status": status, "claims": 9, "points_finished": points,
                "runtime_seconds": wall, "cpu_seconds": {"main": main, "workers": workers}}

    ledger = [line("smoke", "complete", 50.0, 1.0, 90.0, 7),
              line("full", "interrupted", 600.0, 10.0, 1000.0, 30),
              line("full", "complete", 300.0, 5.0, 500.0, 12)]
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(e) + "\n" for e in ledger))
    (tmp_path / "run.json").write_text(json.dumps({"budget": "full", "seed": 0}))
    got = budgets.measure("abc1234", tmp_path)
    assert (got["budget"], got["segments"], got["points_finished"]) == ("full", 2, 42)
    assert got["runtime_seconds"] == 900.0 and got["cpu_seconds"] == 1515.0 and got["complete"]
    readme = tmp_path / "README.md"
    readme.write_text("head\n<!-- budgets:start -->\nold\n<!-- budgets:end -->\ntail\n")
    out = tmp_path / "budgets.json"
    assert budgets.main([f"abc1234={tmp_path}", "--json", str(out), "--readme", str(readme)]) == 0
    text = readme.read_text()
    assert "old" not in text and text.startswith("head\n") and text.endswith("tail\n")
    assert "| abc1234 | full + mutants | 9 | 42 | 2 | 15 min 00 s | 25 min 15 s | 12 min 38 s |" \
        in text
    with pytest.raises(SystemExit, match="no run log"):
        budgets.measure("x", tmp_path / "absent")
    # where the time goes: one row per point (the replicates of a point share its seconds)
    from bilevel_theory.verify.store import ResultsStore, versions

    def rows(claim, point, seconds, budget="full"):
        return [{"claim": claim, "budget": budget, "point": point, "value": 1.0,
                 "replicate": r, "metrics": {"value": 0.5}, "backend": "numpy",
                 "versions": versions(), "config_hash": "0" * 16, "seed": 7, "base_seed": 0,
                 "seconds": seconds} for r in range(3)]
    store = ResultsStore(tmp_path)
    with store.writer():
        for chunk in (rows("afbo.a", 0, 2.0), rows("afbo.a", 1, 3.0), rows("gao.b", 0, 5.0),
                      rows("gao.b", 0, 9.0, budget="smoke")):
            store.append_point(chunk)
    assert budgets.measure("y", tmp_path)["point_seconds_by_paper"] == {"afbo": 5.0, "gao": 5.0}


def test_committed_budget_table_is_the_documents():
    from benchmarks import budgets

    doc = json.loads(budgets.RESULTS.read_text())
    assert budgets.table(doc) in budgets.README.read_text()
