"""The ``full`` budget's GPU plan: with ``--backend cupy`` the n-claims run on
``m = 10⁶`` clients with ``n`` up to ``10⁵``; every other budget and backend is unchanged.

The plumbing is tested on the CPU by letting the runner accept ``backend="cupy"`` for a
synthetic claim whose measure ignores the backend; the large measures themselves run on numpy
at a reduced number of replicates.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from bilevel_theory.verify import CLAIMS
from bilevel_theory.verify import runner as runner_module
from bilevel_theory.verify.claim import Claim, GpuScale, Law
from bilevel_theory.verify.claims import fedmbo
from bilevel_theory.verify.runner import _tasks, check, config_hash, summarize

GPU_CLAIMS = ("fedmbo.phe_variance_vs_clients", "fedmbo.ihgp_variance_contrast",
              "fedmbo.inner_loop_drift")


def scaled_noise(n, replicates, seed, backend="numpy", spread=1.0):
    """``‖mean of n N(0, spread²) draws‖²`` in R²: mean ``2 spread²/n``."""
    rng = np.random.default_rng(seed)
    draws = spread * rng.standard_normal((replicates, int(n), 2))
    return {"value": (draws.mean(axis=1) ** 2).sum(axis=-1)}


def _claim(**kw) -> Claim:
    return Claim(
        id="test.gpu_scale", paper="test", source="synthetic", statement="E = 2s^2/n",
        kind="matches", variable="n", quantity="q", measure=scaled_noise,
        grid={"smoke": (1, 2, 4, 8), "standard": (1, 2, 4, 8, 16), "full": (1, 4, 16)},
        replicates={"smoke": 64, "standard": 64, "full": 64},
        law=Law(-1.0, "n^{-1}", "exact"), tolerance=0.15, **kw)


def test_catalogue_gpu_plans_use_a_million_clients_and_up_to_1e5_sampled():
    planned = {cid for cid, c in CLAIMS.items() if c.gpu_scale is not None}
    assert planned == set(GPU_CLAIMS)
    for cid in GPU_CLAIMS:
        claim = CLAIMS[cid]
        plan = claim.for_backend("cupy")
        assert plan.on_gpu and plan is claim.for_backend("cupy")  # one object: sent by id
        assert claim.for_backend("numpy") is claim
        assert max(plan.grid["full"]) == 100_000 and min(plan.grid["full"]) == 1
        assert plan.measure_for("full").keywords == {"clients": 1_000_000}
        for budget in ("smoke", "standard"):  # unchanged, same rows on either backend
            assert plan.grid[budget] == claim.grid[budget]
            assert plan.measure_for(budget) is claim.measure
            assert config_hash(plan, budget) == config_hash(claim, budget)
        assert config_hash(plan, "full") != config_hash(claim, "full")


def test_gpu_config_hash_is_the_same_in_another_process():
    """A ``functools.partial`` measure must not put an address into the hash (resume)."""
    cid = GPU_CLAIMS[0]
    here = config_hash(CLAIMS[cid].for_backend("cupy"), "full")
    code = ("from bilevel_theory.verify import CLAIMS; "
                "from bilevel_theory.verify.runner import config_hash; "
            f"print(config_hash(CLAIMS[{cid!r}].for_backend('cupy'), 'full'))")
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout.strip()
    assert here == there


def test_tasks_of_the_gpu_plan_are_sent_by_id_with_the_large_grid():
    plan = CLAIMS[GPU_CLAIMS[0]].for_backend("cupy")
    tasks = _tasks(plan, "full", 0, "cupy", None, ())
    assert [t.x for t in tasks] == [float(v) for v in fedmbo.GPU_SAMPLED]
    assert all(t.claim is None for t in tasks)  # workers resolve the id ...
    assert runner_module._resolve(tasks[0]) is plan  # ... to the same GPU plan


def test_runner_runs_the_gpu_plan_and_summarize_finds_it(tmp_path, monkeypatch):
    monkeypatch.setattr(runner_module, "_check_backend", lambda b: b)  # no GPU needed here
    claim = _claim(gpu_scale=GpuScale((1, 2, 4, 8, 16, 32), 96, {"spread": 3.0}))
    result = check(claim, "full", backend="cupy", store=tmp_path)
    assert result.points == 6 and result.verdict == "holds"
    rows = [r for r in runner_module.ResultsStore(tmp_path).rows(claim.id, "full")]
    assert {r["replicate"] for r in rows} == set(range(96))
    assert {r["value"] for r in rows} == {1.0, 2.0, 4.0, 8.0, 16.0, 32.0}
    # the spread keyword reached the measure: n·value averages 2·3² = 18, not 2
    at_one = np.array([r["metrics"]["value"] for r in rows if r["value"] == 1.0])
    assert 12 < at_one.mean() < 24
    (entry,) = summarize(tmp_path, [claim], "full")
    assert entry["points"] == 6 and entry["grid"][-1] == 32.0 and entry["replicates"] == 96
    # numpy's full budget is the claim's own grid, stored apart
    plain = check(claim, "full", backend="numpy", store=tmp_path)
    assert plain.points == 3


def test_gpu_scale_validates():
    with pytest.raises(ValueError, match="GpuScale.grid"):
        GpuScale((1,), 8)
    with pytest.raises(ValueError, match="GpuScale.replicates"):
        GpuScale((1, 2), 0)
    with pytest.raises(ValueError, match="on_gpu"):
        _claim(on_gpu=True)


def test_large_phe_measures_run_at_a_million_clients_on_numpy():
    """One point of the GPU plan at its largest n, 4 replicates: finite, ≈ σ̃²/n in size."""
    out = fedmbo.phe_vs_ihgp_variance(100_000, 4, 0, "numpy", clients=fedmbo.GPU_CLIENTS)
    small = fedmbo.phe_vs_ihgp_variance(100, 64, 0, "numpy")
    assert np.all(np.isfinite(out["value"])) and np.all(np.isfinite(out["contrast"]))
    ratio = out["value"].mean() * 100_000 / (small["value"].mean() * 100)
    assert 0.1 < ratio < 10  # same σ̃² (sampling error of 4 replicates allowed for)
    assert fedmbo.phe_problem(noise=1.0, hessian_noise=0.5,
                              clients=fedmbo.GPU_CLIENTS).clients == 1_000_000


def test_large_inner_drift_runs_at_a_million_clients_on_numpy():
    out = fedmbo.inner_drift(1000, 2, 0, "numpy", clients=fedmbo.GPU_CLIENTS)
    assert np.all(np.isfinite(out["value"])) and np.all(out["value"] > 0)
    assert np.all(out["contrast"] > out["value"])  # FedAvg's drift floor vs 1/n variance
