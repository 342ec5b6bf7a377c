"""What a plug-in author relies on: a catalogue imported per paper, baselines of one's own
claims, the public ``run_algorithm``/``as_schedule``, readings registered with the paper, one
grid for every budget, and the code of ``docs/extending.md`` running as written."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import bilevel_theory as bt
from bilevel_theory import rates
from bilevel_theory.problems import QuadraticBilevel
from bilevel_theory.reports.cli import main as cli_main
from bilevel_theory.verify import CLAIMS, baseline, check, kit, register_claims
from bilevel_theory.verify import claims as claims_pkg
from bilevel_theory.verify.claim import BUDGETS, Law
from bilevel_theory.verify.claims import (
    PREFIX_MODULES,
    Catalogue,
    _module_claims,
    _module_names,
    collect,
    pattern_prefixes,
    select,
)
from bilevel_theory.verify.claims.demo import DEMO_CLAIMS

ROOT = Path(__file__).resolve().parents[1]
TOY_SRC = ROOT / "examples" / "toy_plugin" / "src"
TOY_IDS = ["toy.neumann_bias_vs_N", "toy.rounds_per_iteration"]


# ---------------------------------------------------------------- 1. claims imported per paper


def test_the_prefix_map_names_the_modules_of_every_prefix():
    mapped = {m for mods in PREFIX_MODULES.values() for m in mods}
    for name in _module_names():
        claims = _module_claims(name) or {}
        if name not in mapped:
            continue
        allowed = {p for p, mods in PREFIX_MODULES.items() if name in mods}
        found = {cid.split(".")[0] for cid in claims}
        assert found <= allowed, f"module {name}: prefixes {found - allowed} not mapped to it"


def test_the_lazy_catalogue_gives_the_eager_ids_in_the_same_order():
    eager = collect()
    lazy = Catalogue()
    patterns = ([f"{p}.*" for p in PREFIX_MODULES] + list(eager)
                + [f"{cid}@{m.name}" for cid in list(eager)[:3] for m in eager[cid].mutants])
    for pattern in patterns:
        try:
            want = [c.id for c in select(pattern, eager)]
        except ValueError as err:
            with pytest.raises(ValueError, match=re.escape(str(err))):
                select(pattern, Catalogue())
            continue
        got = select(pattern, Catalogue())
        assert [c.id for c in got] == want, pattern
        assert all(c is eager[c.id] for c in got)  # the same objects (workers resolve by id)
    for cid in eager:  # lookups by id, also from a catalogue not loaded yet
        assert Catalogue()[cid] is eager[cid]
    assert list(lazy) == list(eager)
    assert "afbo.no_such_claim" not in Catalogue()
    assert pattern_prefixes("afbo.*") == {"afbo"}
    assert pattern_prefixes("fednest.bilevel_rate") == {"fednest", "lfednest"}
    assert pattern_prefixes("Thm 4.1") is None and pattern_prefixes("*.rate") is None


def _claims_modules_imported(code: str) -> set[str]:
    """The modules of ``verify.claims`` a fresh interpreter imports to run ``code`` (a paper's
    package counts once, by its name, whatever submodules it imports)."""
    script = (f"import sys\n{code}\n"
              "print(sorted({m.split('.')[3] for m in sys.modules\n"
              "              if m.startswith('bilevel_theory.verify.claims.')}))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return set(eval(out.stdout.strip().splitlines()[-1]))


def _cli_imports(args: list[str]) -> set[str]:
    """The claims modules ``bilevel-theory ARGS`` imports (in a fresh interpreter)."""
    return _claims_modules_imported(
        "from click.testing import CliRunner\n"
        "from bilevel_theory.reports.cli import main\n"
        f"r = CliRunner().invoke(main, {args!r})\n"
        "assert r.exit_code == 0, r.output\n")


def test_a_pattern_naming_a_paper_imports_only_its_modules(tmp_path):
    assert _cli_imports(["list", "afbo.*"]) == set()  # read from the catalogue index
    assert _cli_imports(["list", "afbo.*", "--json"]) == {"afbo"}
    assert _cli_imports(["show", _an_id("memfbo")]) == {"memfbo"}
    assert _cli_imports(["verify", _an_id("gao"), "--dry-run", "--out", str(tmp_path)]
                        ) == set(claims_pkg.PREFIX_MODULES["gao"]) == {"gao"}


def _an_id(prefix: str) -> str:
    return next(cid for cid in CLAIMS if cid.startswith(prefix + "."))


# ---------------------------------------------------------------- 2. baselines


@pytest.fixture
def toy_plugin(monkeypatch):
    """The toy plug-in's claims found through its entry point, plus one claim registered at
    run time; everything is undone afterwards."""
    monkeypatch.syspath_prepend(str(TOY_SRC))
    ep = EntryPoint("toy", "toy_plugin.claims:CLAIMS", claims_pkg.ENTRY_POINT_GROUP)
    monkeypatch.setattr(claims_pkg, "entry_points",
                        lambda group: [ep] if group == claims_pkg.ENTRY_POINT_GROUP else [])
    CLAIMS.reload()
    extra = dataclasses.replace(DEMO_CLAIMS[0], id="plugtest.registered")
    try:
        register_claims(extra)
        yield
    finally:
        claims_pkg._REGISTERED.pop(extra.id, None)
        monkeypatch.undo()
        CLAIMS.reload()
        for name in [m for m in sys.modules if m.startswith("toy_plugin")]:
            sys.modules.pop(name)
        kit.register_paper("toy", "Toy plug-in", "bilevel-theory example plug-in")
        kit.PAPERS.pop("toy", None)


def test_the_toolkits_baseline_ignores_plugin_and_registered_claims(tmp_path, request, capsys):
    path = tmp_path / "baseline.json"
    assert baseline.main(["write", "--out", str(path)]) == 0  # no plug-in installed
    request.getfixturevalue("toy_plugin")  # now one is, and a claim is registered
    assert set(TOY_IDS) | {"plugtest.registered"} <= set(CLAIMS)
    assert baseline.main(["check", "--out", str(path)]) == 0, capsys.readouterr().err
    assert baseline.main(["--check", "--path", str(path)]) == 0
    assert not set(baseline.expected_verdicts()) & {*TOY_IDS, "plugtest.registered"}


def test_a_plugin_writes_and_checks_a_baseline_of_its_own(toy_plugin, tmp_path, capsys):
    path = tmp_path / "toy_baseline.json"
    assert baseline.main(["write", "--out", str(path), "toy.*"]) == 0
    assert json.loads(path.read_text()) == dict.fromkeys(TOY_IDS, "holds")
    assert baseline.main(["check", "toy.*", "--out", str(path)]) == 0
    path.write_text(json.dumps({TOY_IDS[0]: "holds"}))
    capsys.readouterr()
    assert baseline.main(["check", "--out", str(path), "toy.*"]) == 1
    assert "write --out" in capsys.readouterr().err  # says how to regenerate it
    assert baseline.main(["check", "toy.*"]) == 2  # never the toolkit's file
    assert "--out" in capsys.readouterr().err
    assert baseline.main(["check", "--out", str(path), "nosuch.*"]) == 2
    assert "no claim matches" in capsys.readouterr().err


# ---------------------------------------------------------------- 3. public run_algorithm


def test_run_algorithm_and_as_schedule_are_public():
    from bilevel_theory import as_schedule, run_algorithm

    assert {"as_schedule", "run_algorithm"} <= set(bt.__all__)
    assert as_schedule.__doc__ and run_algorithm.__doc__
    assert as_schedule("outer_step", 0.25)(7) == 0.25
    schedule = lambda k: 1.0 / (k + 1)  # noqa: E731
    checked = as_schedule("outer_step", schedule)
    assert checked(3) == schedule(3) == 0.25 and checked.__wrapped__ is schedule
    with pytest.raises(ValueError, match="`outer_step` must give a positive finite step"):
        as_schedule("outer_step", lambda k: -1.0)(0)
    with pytest.raises(ValueError, match="outer_step"):
        as_schedule("outer_step", 0.0)
    prob = QuadraticBilevel.random(clients=4, dim_x=2, dim_y=2, kappa=4, noise=0.0, seed=0)
    direct = run_algorithm(bt.ALGORITHMS["fedmbo"](prob), 3, 2, 0)
    assert np.array_equal(direct.stationarity, bt.run("fedmbo", prob, 3, 2, 0).stationarity)


# ---------------------------------------------------------------- 4. readings and bounds


@pytest.fixture
def plug_paper(monkeypatch, tmp_path):
    (tmp_path / "plugtest_bounds.py").write_text("def bounds():\n    return []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    modules = list(rates.PAPER_MODULES)
    yield
    for key in ("plugtest", "plugother"):
        kit.register_paper(key, "x", "x")  # drops its readings
        kit.PAPERS.pop(key)
    rates.PAPER_MODULES[:] = modules
    sys.modules.pop("plugtest_bounds", None)


def test_register_paper_keeps_readings_and_bounds_for_show(plug_paper):
    paper = kit.register_paper("plugtest", "Plug test", "Doe & Roe, Test Conf 2025",
                               readings={"PLUGTEST-R1": "step read as 1/L, not 1/(2L)"},
                               bounds="plugtest_bounds")
    assert kit.PAPERS["plugtest"] is paper
    assert kit.READINGS["PLUGTEST-R1"] == "step read as 1/L, not 1/(2L)"
    assert "plugtest_bounds" in rates.PAPER_MODULES
    claim = dataclasses.replace(DEMO_CLAIMS[0], id="plugtest.touching", paper=paper.name,
                                touches=("PLUGTEST-R1", "PLUGTEST-R9"))
    try:
        register_claims(claim)
        runner = CliRunner()
        r = runner.invoke(cli_main, ["show", "plugtest.touching"])
        assert r.exit_code == 0, r.output
        assert "  PLUGTEST-R1: step read as 1/L, not 1/(2L)" in r.output
        r = runner.invoke(cli_main, ["show", "plugtest.touching", "--json"])
        assert json.loads(r.output)["readings"] == {
            "PLUGTEST-R1": "step read as 1/L, not 1/(2L)"}
    finally:
        claims_pkg._REGISTERED.pop(claim.id, None)
        CLAIMS.reload()
    with pytest.raises(ValueError, match="already registered by paper 'plugtest'"):
        kit.register_paper("plugother", "Other", "Doe, 2025", readings={"PLUGTEST-R1": "x"})
    with pytest.raises(ValueError, match="`readings`"):
        kit.register_paper("plugother", "Other", "Doe, 2025", readings={"PLUGOTHER-R1": ""})
    with pytest.raises(ValueError, match="`bounds`"):
        kit.register_paper("plugother", "Other", "Doe, 2025", bounds=["not", "a", "module"])
    kit.register_paper("plugtest", "Plug test", "Doe & Roe, Test Conf 2025")  # replaced
    assert "PLUGTEST-R1" not in kit.READINGS


# ---------------------------------------------------------------- 5. one grid for every budget


def test_one_grid_and_one_replicate_count_serve_every_budget():
    base = DEMO_CLAIMS[0]
    grid = [1.0, 2.0, 4.0, 8.0]
    claim = dataclasses.replace(base, id="plugtest.one_grid", grid=grid, replicates=8)
    assert all(claim.grid[b] == tuple(grid) and claim.replicates[b] == 8 for b in BUDGETS)
    assert claim.under(claim.mutants[0].name).grid == claim.grid
    with pytest.raises(ValueError, match="`grid` must be a sequence"):
        dataclasses.replace(base, grid=4.0)
    with pytest.raises(ValueError, match="`replicates` an integer"):
        dataclasses.replace(base, grid=grid, replicates="8")
    smoke, full = check(claim, budget="smoke"), check(claim, budget="full")
    assert smoke.points == full.points == len(grid)
    assert claim.law == base.law and isinstance(claim.law, Law)


# ---------------------------------------------------------------- 6. the docs' code runs


def test_the_extending_page_runs_as_written():
    """Every ``python`` block of ``docs/extending.md``, in order, in one fresh interpreter at
    the repository root (as the page says); the ``Damped`` example runs with a schedule."""
    page = ROOT / "docs" / "extending.md"
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    assert any("class Damped" in b and "lambda k:" in b for b in blocks)
    script = ("import re, pathlib\n"
              f"text = pathlib.Path({str(page)!r}).read_text(encoding='utf-8')\n"
              "ns = {'__name__': 'docs_example'}\n"
              "for i, code in enumerate(re.findall(r'```python\\n(.*?)```', text, re.S)):\n"
              "    exec(compile(code, f'extending.md block {i}', 'exec'), ns)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]


def test_list_reads_the_index_and_agrees_with_the_claims():
    """``list`` without plug-ins reads ``verify/catalogue_index.json`` (in sync with the
    claims modules) and selects the same claims, in the same order, as the claims do."""
    from bilevel_theory.verify import catalogue_doc
    from bilevel_theory.verify.cli import _indexed_catalogue, _select

    assert catalogue_doc.main(["docs/claims.md", "--check"]) == 0
    indexed = _indexed_catalogue()
    assert indexed is not None and list(indexed) == list(catalogue_doc.package_claims())
    for args in ((("afbo.*",), (), (), (), ()), (("bias",), (), (), ("finding",), ()),
                 ((), ("gao",), ("at_most",), (), ("holds",)), ((), (), (), (), ())):
        got = [c.id for c in _select(*args, None, indexed=indexed)]
        want = [c.id for c in _select(*args, None)]
        assert got == want and got, args


def test_list_imports_the_claims_when_a_plugin_is_installed(monkeypatch):
    from bilevel_theory.verify import cli

    monkeypatch.setattr("bilevel_theory.verify.claims.entry_points",
                        lambda group: [object()])
    assert cli._indexed_catalogue() is None
