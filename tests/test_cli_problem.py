"""``bilevel-theory problem``: the report it prints, and one-line errors with exit code 2."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from bilevel_theory.problems import QuadraticBilevel
from bilevel_theory.problems.cli import DESCRIPTIONS, build
from bilevel_theory.reports.cli import main


def invoke(*args):
    return CliRunner().invoke(main, ["problem", *args])


def value_of(output, name):
    """The number printed after ``name`` at the start of a table row."""
    match = re.search(rf"^\s*{re.escape(name)}\s+(\S+)", output, flags=re.M)
    assert match, f"{name} not in output"
    return float(match.group(1))


@pytest.mark.parametrize("args", [
    [],
    ["--kind", "minimax", "--clients", "30", "--storage", "dense"],
    ["--kind", "compositional", "--dim-x", "2", "--dim-y", "3", "--storage", "structured"],
    ["--kind", "minimax", "--fednest", "--clients", "50", "--dim-x", "4", "--lam", "0.1"],
    ["--clients", "20", "--kappa", "100", "--heterogeneity", "0", "--noise", "0.2",
     "--hessian-noise", "0.1", "--seed", "3"],
])
def test_report(args):
    result = invoke(*args)
    assert result.exit_code == 0, result.output + result.stderr
    out = result.output
    assert result.stderr == ""
    for key in ("clients", "storage", "bytes", "build", "constants"):
        assert re.search(rf"^{key}\s", out, flags=re.M), key
    rows = [line for line in out.splitlines() if line.startswith("  ")
            and line.split()[0] in DESCRIPTIONS]
    assert [r.split()[0] for r in rows] == list(DESCRIPTIONS)  # every constant, in order
    assert len({r.index(r.split()[1]) + len(r.split()[1]) for r in rows}) == 1  # aligned column
    checks = [line for line in out.splitlines() if re.match(r"\s+(fd_|grad_y_g|surrogate|x_star)",
                                                            line)]
    assert len(checks) >= 3 and all(" ok " in line for line in checks)
    assert value_of(out, "fd_hypergradient") < 1e-6
    assert value_of(out, "surrogate_at_y_star") < 1e-10


def test_report_values_match_the_instance():
    result = invoke("--clients", "40", "--kappa", "25", "--dim-x", "3", "--dim-y", "4",
                    "--heterogeneity", "0.3", "--noise", "0.5", "--seed", "2")
    assert result.exit_code == 0
    prob = QuadraticBilevel.random(clients=40, dim_x=3, dim_y=4, kappa=25.0, heterogeneity=0.3,
                                   noise=0.5, seed=2)
    for name in ("mu_g", "kappa", "ell_g1", "sigma_f2", "sigma_g2", "L_phi"):
        assert value_of(result.output, name) == pytest.approx(prob.constants[name], rel=1e-6)
    assert f"{prob.nbytes:,}" in result.output and "dense" in result.output
    assert "noise=0.5" in result.output and "kappa=25.0" in result.output


def test_defaults_per_kind():
    assert build("compositional", 10, 2, None, None, 0.5, 0.0, None, 0, "auto").spec[
        "kappa"] == 1.0
    prob = build("bilevel", 10, 2, None, None, 0.5, 0.0, None, 0, "auto")
    assert prob.spec["kappa"] == 10.0 and prob.dim_y == 2


@pytest.mark.parametrize(("args", "name"), [
    (["--kappa", "0.5"], "`kappa`"),
    (["--clients", "0"], "`clients`"),
    (["--kind", "foo"], "`kind`"),
    (["--kind", "minmax"], "did you mean 'minimax'"),
    (["--clients", "abc"], "--clients"),
    (["--dim-x", "0"], "`dim_x`"),
    (["--dim-y", "-2"], "`dim_y`"),
    (["--noise", "-1"], "`noise`"),
    (["--hessian-noise", "inf"], "`hessian_noise`"),
    (["--heterogeneity", "nan"], "`heterogeneity`"),
    (["--heterogeneity", "-0.1"], "`heterogeneity`"),
    (["--kappa", "nan"], "`kappa`"),
    (["--seed", "-1"], "`seed`"),
    (["--storage", "sparse"], "`storage`"),
    (["--kind", "compositional", "--kappa", "3"], "`kappa`"),
    (["--fednest"], "`fednest`"),
    (["--kind", "minimax", "--fednest", "--storage", "dense"], "`storage`"),
    (["--kind", "minimax", "--fednest", "--dim-y", "3"], "`dim_y`"),
    (["--kind", "minimax", "--fednest", "--kappa", "5"], "`kappa`"),
    (["--kind", "minimax", "--fednest", "--lam", "-1"], "`lam`"),
    (["--lam", "1"], "`lam`"),
    (["--bogus"], "--bogus"),
])
def test_bad_input_one_line_exit_2(args, name):
    result = invoke(*args)
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert name in lines[0]
    assert "Traceback" not in result.stderr


def test_help():
    result = invoke("--help")
    assert result.exit_code == 0
    for option in ("--kind", "--clients", "--kappa", "--dim-x", "--dim-y", "--heterogeneity",
                   "--noise", "--hessian-noise", "--seed", "--storage", "--fednest"):
        assert option in result.output
