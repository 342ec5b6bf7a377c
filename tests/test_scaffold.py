"""``bilevel-theory new-plugin NAME``: bad names and existing targets are refused (exit 2);
the package it writes is complete and valid; and, end to end, the scaffold of the installed
wheel writes a plug-in that installs, lists, verifies (claim held, mutant caught), reports and
passes its own tests in a throw-away virtual environment (about half a minute)."""

from __future__ import annotations

import importlib
import json
import sys
import tomllib

import pytest
from click.testing import CliRunner
from test_examples import _valid
from test_packaging import _run, build_wheel, virtual_env

from bilevel_theory.reports.cli import main
from bilevel_theory.verify.scaffold import TEMPLATES, render, scaffold

NAME = "scaffold_check"


@pytest.mark.parametrize("name", ["", "1st", "My_plugin", "my-plugin", "my plugin", "class",
                                  "_private", "x" * 41, "fedmbo", "numpy"])
def test_bad_names_are_refused(tmp_path, name):
    result = CliRunner().invoke(main, ["new-plugin", name, "--dir", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "NAME" in result.output and "Traceback" not in result.output
    assert not any(tmp_path.iterdir())


def test_an_existing_target_is_refused_and_kept(tmp_path):
    (tmp_path / NAME).mkdir()
    (tmp_path / NAME / "keep.txt").write_text("mine")
    result = CliRunner().invoke(main, ["new-plugin", NAME, "--dir", str(tmp_path)])
    assert result.exit_code == 2 and "already exists" in result.output, result.output
    assert [p.name for p in (tmp_path / NAME).iterdir()] == ["keep.txt"]


def test_the_package_is_complete_and_its_claim_is_valid(tmp_path, monkeypatch):
    result = CliRunner().invoke(main, ["new-plugin", NAME, "--dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    root = tmp_path / NAME
    assert "pip install" in result.output and "verify" in result.output
    written = {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}
    assert written == {t.format(name=NAME) for t in TEMPLATES.values()}
    for path in root.rglob("*"):
        if path.is_file():
            assert "{{" not in path.read_text(), path
            if path.suffix == ".py":
                compile(path.read_text(), str(path), "exec")
    project = tomllib.loads((root / "pyproject.toml").read_text())
    groups = project["project"]["entry-points"]
    assert groups == {
        "bilevel_theory.algorithms": {NAME: f"{NAME}.algorithm:StochasticBilevelGD"},
        "bilevel_theory.claims": {NAME: f"{NAME}.claims:CLAIMS"},
        "bilevel_theory.inventory": {NAME: f"{NAME}.inventory:INVENTORY"}}
    monkeypatch.syspath_prepend(str(root / "src"))
    try:
        claims = importlib.import_module(f"{NAME}.claims")
        _valid(claims.CLAIMS, NAME)
        assert [(c.role, [m.kind for m in c.mutants]) for c in claims.CLAIMS] == [
            ("confirmation", ["step_exponent"])]
        inventory = importlib.import_module(f"{NAME}.inventory").INVENTORY
        assert inventory.results[0].claims == (claims.CLAIMS[0].id,)
    finally:
        for module in [m for m in sys.modules if m == NAME or m.startswith(NAME + ".")]:
            sys.modules.pop(module)
        from bilevel_theory.verify.kit import PAPERS

        PAPERS.pop(NAME, None)


def test_render_and_scaffold_check_their_name(tmp_path):
    with pytest.raises(ValueError, match="NAME"):
        render("Bad-Name")
    with pytest.raises(ValueError, match="NAME"):
        scaffold("import", tmp_path)


def test_a_scaffolded_plugin_installs_verifies_reports_and_passes_its_tests(tmp_path):
    (tmp_path / "wheel").mkdir()
    env = virtual_env(tmp_path / "venv", build_wheel(tmp_path / "wheel"))
    run = {"cwd": tmp_path, "env": env["env"]}
    cli = [str(env["home"] / "bin" / "bilevel-theory")]
    _run([*cli, "new-plugin", NAME, "--dir", str(tmp_path)], **run)  # templates from the wheel
    _run([sys.executable, "-m", "pip", "--python", env["python"], "install", "-q", "--no-deps",
          str(tmp_path / NAME)], cwd=tmp_path)
    listed = _run([*cli, "list", f"{NAME}.*"], **run).stdout
    assert f"{NAME}.sgd_rate_vs_K" in listed
    results = tmp_path / "results"
    _run([*cli, "verify", f"{NAME}.*", "--budget", "smoke", "--mutants", "--out", str(results),
          "--quiet"], **run)
    (entry,) = json.loads((results / "summary.json").read_text())
    assert (entry["id"], entry["verdict"]) == (f"{NAME}.sgd_rate_vs_K", "holds"), entry
    assert [(p["mutant"], p["verdict"]) for p in entry["power"]] == [("sqrt_step", "violated")]
    _run([*cli, "report", str(results), "--out", str(tmp_path / "report"), "--quiet"], **run)
    assert (tmp_path / "report" / "index.html").is_file()
    _run([env["python"], "-m", "pytest", "-q", "-p", "no:cacheprovider",
          str(tmp_path / NAME / "tests")], **run)
