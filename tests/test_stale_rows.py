"""Stored rows are reused only by the code that computed them: a change to any module that can
change a metric or a verdict (here one line of ``verify/kit.py``, in a copy of the source tree)
makes a rerun on the old store recompute, say why, and give the new verdict."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from bilevel_theory.verify import runner

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("bilevel_theory", "problems", "verify", "reports")

CATALOGUE = '''
import numpy as np
from bilevel_theory.verify import kit
from bilevel_theory.verify.claim import Claim, Law, Mutant, per_budget


def measure(n, replicates, seed, backend="numpy"):
    rng = np.random.default_rng(seed)
    noise = np.exp(0.05 * rng.standard_normal(replicates))
    return {"value": float(n) ** kit._stale_probe() * noise}


CLAIMS = [Claim(
    id="probe.rate", paper="Probe", source="a probe", statement="v = O(1/n)",
    kind="matches", variable="n", quantity="v", measure=measure,
    grid=per_budget([1, 2, 4, 8, 16], [1, 2, 4, 8, 16], [1, 2, 4, 8, 16]),
    replicates=per_budget(16, 16, 16), law=Law(-1.0, "-1", "probe"), tolerance=0.1,
    mutants=(Mutant("half", "exponent halved", {}),))]
'''


def _copy_tree(dst: Path, probe: str) -> None:
    for layer in LAYERS:
        shutil.copytree(ROOT / layer, dst / layer,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    kit = dst / "verify" / "kit.py"
    kit.write_text(kit.read_text() + f"\n\ndef _stale_probe():\n    return {probe}\n")
    (dst / "probecat.py").write_text(CATALOGUE)


def _verify(src: Path, out: Path) -> tuple[str, dict, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BILEVEL_THEORY")}
    env["PYTHONPATH"] = str(src)
    code = ("import sys; from bilevel_theory.reports.cli import main; "
            "sys.exit(main(sys.argv[1:]))")
    proc = subprocess.run(
        [sys.executable, "-c", code, "verify", "probe.rate", "--out", str(out),
         "--catalogue", "probecat:CLAIMS"],
        cwd=src, env=env, capture_output=True, text=True, timeout=300)
    summary = json.loads((out / "summary.json").read_text())
    run = json.loads((out / "run.json").read_text())
    return summary[0]["verdict"], run, proc.stderr


def test_a_changed_kit_line_recomputes_the_old_store(tmp_path):
    src = tmp_path / "src"
    _copy_tree(src, "-1.0")
    out = tmp_path / "store"
    verdict, run, _ = _verify(src, out)
    assert verdict == "holds"
    assert run["recomputed_stale"] == {}
    # one line of verify/kit.py changes the metric: the old rows must not be served
    kit = src / "verify" / "kit.py"
    kit.write_text(kit.read_text().replace("return -1.0", "return -0.5"))
    verdict, run, err = _verify(src, out)
    assert verdict == "violated", err
    assert "probe.rate" in run["recomputed_stale"]
    assert "not reused" in err


def test_the_digest_covers_every_verification_module_but_not_docstrings(tmp_path):
    for layer in ("bilevel_theory", "problems", "verify"):
        shutil.copytree(ROOT / layer, tmp_path / layer,
                        ignore=shutil.ignore_patterns("__pycache__"))

    def digest():
        paths = [p for layer in ("bilevel_theory", "problems", "verify")
                 for p in (tmp_path / layer).rglob("*.py")]
        return runner.code_digest(paths, [tmp_path])

    before = digest()
    for name in ("kit.py", "claim.py", "runner.py", "rate.py", "fit.py", "verdict.py"):
        path = tmp_path / "verify" / name
        text = path.read_text()
        path.write_text(text + "\n_CHANGED = 1\n")
        assert digest() != before, name
        path.write_text(text)
    assert digest() == before
    kit = tmp_path / "verify" / "kit.py"
    text = kit.read_text()
    kit.write_text(text.replace('"""', '"""Edited documentation. ', 1))
    assert digest() == before  # documentation only


def test_the_digest_leaves_out_the_coverage_map_only():
    """The coverage map reads the catalogue and computes no row: editing its inventory keeps
    every store valid; every other verification module is digested."""
    roots, paths = runner.digested_paths()
    names = {str(p.relative_to(next(r for r in roots if p.is_relative_to(r)))) for p in paths}
    verify = Path(runner.__file__).parent
    assert not [n for n in names if "/coverage/" in n]
    assert all(str(p.relative_to(verify.parent)) in names
               for p in verify.rglob("*.py") if "coverage" not in p.relative_to(verify).parts)
    assert {"verify/runner.py", "verify/claims/afbo/anarchy.py", "problems/oracle.py",
            "bilevel_theory/afbo.py"} <= names


def test_the_config_hash_follows_the_numerical_libraries(monkeypatch):
    from bilevel_theory.verify.claims.demo import DEMO_CLAIMS

    claim = DEMO_CLAIMS[0]
    before = runner.config_hash(claim, "smoke")
    runner._source_digest.cache_clear()
    now = runner.versions()
    monkeypatch.setattr(runner, "versions", lambda: {**now, "scipy": "0.0-other"})
    try:
        assert runner.config_hash(claim, "smoke") != before
    finally:
        runner._source_digest.cache_clear()


def test_a_summary_of_rows_from_other_versions_says_why_they_are_not_used(tmp_path):
    """A store made under other library (or Python) versions, e.g. on another machine, is
    summarized as missing with the versions that differ, not as "not run"."""
    from bilevel_theory.verify.claims.demo import DEMO_CLAIMS

    claim = DEMO_CLAIMS[0]
    runner.run_suite(claims=[claim], out=tmp_path, progress=False, costs=False)
    path = tmp_path / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert runner.summarize(tmp_path, [claim])[0]["status"] == "complete"
    for r in rows:
        r["config_hash"] = "0" * 16
        r["versions"] = {**r["versions"], "numpy": "0.0-other"}
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    entry = runner.summarize(tmp_path, [claim])[0]
    assert entry["status"] == "missing" and entry["verdict"] == "inconclusive"
    assert entry["reason"].startswith(f"not run by this code: its {len(rows)} stored rows")
    assert "numpy 0.0-other →" in entry["reason"]
