"""Packaging: one import package in the wheel, works from a directory that has its own
``problems.py``, ``verify/`` and ``reports/``, and the example plug-in is found through its
entry points (builds two wheels and a virtual environment: about half a minute)."""

from __future__ import annotations

import os
import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(cmd, cwd, env=None, timeout=600):
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, f"{cmd} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def build_wheel(out: Path) -> Path:
    """The checkout's wheel (no dependencies), built into ``out``."""
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
         cwd=out)
    (path,) = out.glob("bilevel_theory-*.whl")
    return path


def virtual_env(home: Path, *packages: Path) -> dict:
    """A fresh virtual environment in ``home`` with ``packages`` (wheels or project folders)
    installed (the dependencies come from the running interpreter's site-packages, so nothing
    is downloaded: when the tests themselves run in a virtual environment,
    ``system_site_packages`` would see only the *base* interpreter's packages, so those
    directories are added by a ``.pth`` file; a path line in a ``.pth`` file does not run that
    directory's own ``.pth`` hooks, so an editable install of the checkout there stays
    invisible and the wheel is what imports)."""
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(home)
    py = str(home / "bin" / "python")
    purelib = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    parents = [*site.getsitepackages(), site.getusersitepackages()]
    Path(purelib, "_bilevel_theory_test_parent.pth").write_text(
        "".join(f"{d}\n" for d in parents if os.path.isdir(d)))
    pip = [sys.executable, "-m", "pip", "--python", py, "install", "-q", "--no-deps"]
    for package in packages:
        _run([*pip, str(package)], cwd=home)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("BILEVEL_THEORY")}
    environ["PATH"] = f"{home / 'bin'}{os.pathsep}{environ.get('PATH', '')}"
    environ.pop("PYTHONPATH", None)
    return {"python": py, "home": home, "env": environ}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def env(tmp_path_factory, wheel) -> dict:
    """A fresh virtual environment with the wheel and the example plug-in installed."""
    return virtual_env(tmp_path_factory.mktemp("venv"), wheel,
                       ROOT / "examples" / "toy_plugin")


def test_the_wheel_installs_one_top_level_package(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names}
    assert tops == {"bilevel_theory", f"{wheel.name.split('-')[0]}-"
                    f"{wheel.name.split('-')[1]}.dist-info"}, tops
    for sub in ("problems", "verify", "reports", "verify/claims"):
        assert f"bilevel_theory/{sub}/__init__.py" in names
    assert "bilevel_theory/py.typed" in names
    assert "bilevel_theory/verify/baseline.json" in names
    assert "bilevel_theory/verify/readings_index.json" in names  # the report's reading titles
    assert any(n.startswith("bilevel_theory/verify/scaffold_templates/") for n in names)
    assert not any(n.rsplit("/", 1)[-1].startswith("test_") for n in names), "tests ship"
    assert not any(n.startswith("bilevel_theory/benchmarks") for n in names)


def test_installed_wheel_runs_a_claim_among_clashing_names(env, tmp_path):
    """A project with its own ``problems.py``, ``verify/`` and ``reports/`` still imports
    ``bilevel_theory`` (and runs a claim) from the installed wheel."""
    (tmp_path / "problems.py").write_text("raise ImportError('the user project problems')\n")
    for pkg in ("verify", "reports"):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("raise ImportError('user package')\n")
    code = ("import bilevel_theory, bilevel_theory.verify as v; "
            "print(bilevel_theory.__version__, bilevel_theory.__file__); "
            "r = v.check('demo.variance_vs_n', catalogue="
            "'bilevel_theory.verify.claims.demo:DEMO_CLAIMS'); print(r.verdict)")
    out = _run([env["python"], "-c", code], cwd=tmp_path, env=env["env"]).stdout.split()
    assert out[1].startswith(str(env["home"])), out  # the wheel, not the checkout
    assert out[-1] == "holds"


def test_the_example_plugin_appears_in_the_cli_and_passes_its_tests(env, tmp_path):
    cli = [env["python"], "-m", "bilevel_theory.reports.cli"]
    listed = _run([*cli, "list", "toy"], cwd=tmp_path, env=env["env"]).stdout
    assert "toy.neumann_bias_vs_N" in listed and "toy.rounds_per_iteration" in listed
    assert "toy_fullgrad" in _run([*cli, "algorithms"], cwd=tmp_path, env=env["env"]).stdout
    out = tmp_path / "results"
    _run([*cli, "verify", "toy", "--mutants", "--out", str(out), "--quiet", "--report",
          str(tmp_path / "report")], cwd=tmp_path, env=env["env"])
    assert (tmp_path / "report" / "index.html").is_file()
    _run([env["python"], "-m", "pytest", "-q", "-p", "no:cacheprovider",
          str(ROOT / "examples" / "toy_plugin" / "tests")], cwd=tmp_path, env=env["env"])


def test_the_pytest_fixture_is_installed(env, tmp_path):
    (tmp_path / "test_user.py").write_text(
        "import numpy as np\n"
        "def test_rate(assert_rate):\n"
        "    n = np.array([1, 2, 4, 8, 16])\n"
        "    assert_rate(n, [3.0 / n * np.ones(4) for n in n], law=-1.0)\n")
    _run([env["python"], "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_user.py"],
         cwd=tmp_path, env=env["env"])
