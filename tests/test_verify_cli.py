"""``list`` / ``verify`` / ``compare``: exit codes 0/1/2, one-line errors, no tracebacks."""

from __future__ import annotations

import dataclasses
import json

import click
import pytest
from click.testing import CliRunner

from bilevel_theory.verify.claims.demo import CATALOGUE, DEMO_CLAIMS
from bilevel_theory.verify.cli import make_commands

WRONG = next(c for c in DEMO_CLAIMS if c.id == "demo.wrong_exponent")
# a catalogue whose claim misses its expected verdict (the law is wrong, expected "holds")
MISMATCH = [dataclasses.replace(WRONG, id="demo.mismatch", expected="holds", reason="",
                                role="confirmation")]
REPORTS: list = []


def _group():
    @click.group()
    def cli():
        pass

    for cmd in make_commands(after_verify=lambda out, rep: REPORTS.append((out, rep))):
        cli.add_command(cmd)
    return cli


CLI = _group()


def invoke(*args, env=None):
    result = CliRunner().invoke(CLI, list(args), env=env, catch_exceptions=False)
    return result


def one_line_error(result, *fragments):
    assert result.exit_code == 2, result.output
    err = result.stderr.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    assert "Traceback" not in result.output
    for f in fragments:
        assert f in err, err


def test_list_shows_claims():
    r = invoke("list", "--catalogue", CATALOGUE)
    assert r.exit_code == 0
    assert "demo.variance_vs_n" in r.stdout and "matches" in r.stdout
    assert "synthetic [DEMO]" in r.stdout
    r = invoke("list", "geometric", env={"BILEVEL_THEORY_CATALOGUE": CATALOGUE})
    assert r.stdout.count("demo.") == 1


def test_unknown_pattern_lists_close_matches(tmp_path):
    r = invoke("verify", "demo.varance_vs_n", "--catalogue", CATALOGUE, "--out", str(tmp_path))
    one_line_error(r, "no claim matches", "close matches: demo.variance_vs_n")
    one_line_error(invoke("list", "demo.geometric_bais", "--catalogue", CATALOGUE),
                   "demo.geometric_bias")


@pytest.mark.parametrize("args, fragments", [
    (["--budget", "huge"], ["`--budget` must be one of smoke, standard, full", "'huge'"]),
    (["--budget", "smok"], ["did you mean 'smoke'"]),
    (["--backend", "torch"], ["`--backend`"]),
    (["--workers", "0"], ["--workers"]),
    (["--seed", "-1"], ["--seed"]),
    (["--nonsense"], ["--nonsense"]),
])
def test_bad_options_are_one_line(tmp_path, args, fragments):
    r = invoke("verify", "demo.variance_vs_n", "--catalogue", CATALOGUE, "--out",
               str(tmp_path), *args)
    one_line_error(r, *fragments)


def test_unwritable_out_dir(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    r = invoke("verify", "demo.variance_vs_n", "--catalogue", CATALOGUE, "--out",
               str(blocker / "results"), "--quiet")
    one_line_error(r, "cannot write results to", str(blocker))


def test_verify_exit_codes_summary_and_report(tmp_path):
    out = tmp_path / "res"
    REPORTS.clear()
    r = invoke("verify", "demo.*_exponent", "--catalogue", CATALOGUE, "--out", str(out),
               "--quiet", "--report", str(tmp_path / "rep"))
    assert r.exit_code == 0, r.output
    assert "demo.wrong_exponent" in r.stdout and "violated" in r.stdout
    assert "1 of 1 claims at their expected verdict" in r.stdout
    assert REPORTS == [(out, tmp_path / "rep")]
    summary = json.loads((out / "summary.json").read_text())
    entry = summary[0]
    for key in ("id", "paper", "source", "statement", "kind", "verdict", "expected", "measured",
                "interval", "predicted", "reason", "seconds", "budget", "variable", "quantity",
                "scale", "window", "schedule", "touches", "law_latex", "law_derivation",
                "status", "fit"):
        assert key in entry, key
    assert set(entry["fit"]) >= {"x", "mean", "lo", "hi", "slope", "intercept", "interval"}
    run = json.loads((out / "run.json").read_text())
    for key in ("date", "package_version", "backend", "budget", "seed", "machine", "python",
                "numpy", "runtime_seconds", "argv", "worker_peak_rss_mib", "main_peak_rss_mib"):
        assert key in run, key
    # one process: the worker's peak is the main process's peak when the last point finished
    assert 0 < run["worker_peak_rss_mib"] <= run["main_peak_rss_mib"]
    assert f"{run['points_run']} points in " in r.stdout and "MiB per worker" in r.stdout
    # a claim whose verdict differs from its expected one: exit 1, with the reason
    r = invoke("verify", "--catalogue", f"{__name__}:MISMATCH", "--out", str(out),
               "--quiet")
    assert r.exit_code == 1, r.output
    assert "demo.mismatch: violated (expected holds)" in r.stdout
    assert "excludes predicted -0.5" in r.stdout


def test_report_without_renderer_is_bad_input(tmp_path):
    @click.group()
    def bare():
        pass

    for cmd in make_commands(after_verify=None):
        bare.add_command(cmd)
    r = CliRunner().invoke(bare, ["verify", "demo.variance_vs_n", "--catalogue", CATALOGUE,
                                  "--out", str(tmp_path), "--report", str(tmp_path / "r")])
    one_line_error(r, "--report")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("results")
    r = invoke("verify", "demo.*_exponent", "--catalogue", CATALOGUE, "--out", str(out),
               "--quiet")
    assert r.exit_code == 0, r.output
    return out


def test_compare_exit_codes(results, tmp_path):
    base = tmp_path / "baseline.json"
    base.write_text(json.dumps({"demo.wrong_exponent": "violated"}))
    r = invoke("compare", str(results), str(base))
    assert r.exit_code == 0 and "1 of 1 baseline verdicts unchanged" in r.stdout
    base.write_text(json.dumps({"demo.wrong_exponent": "holds", "demo.gone": "holds"}))
    r = invoke("compare", str(results), str(base))
    assert r.exit_code == 1
    assert "CHANGED  demo.wrong_exponent: holds -> violated" in r.stdout
    assert "MISSING  demo.gone" in r.stdout
    # without summary.json, the summary is rebuilt from the store
    (results / "summary.json").rename(tmp_path / "moved.json")
    try:
        base.write_text(json.dumps({"demo.wrong_exponent": "violated"}))
        assert invoke("compare", str(results), str(base)).exit_code == 0
    finally:
        (tmp_path / "moved.json").rename(results / "summary.json")


def test_compare_json(results, tmp_path):
    base = tmp_path / "baseline.json"
    base.write_text(json.dumps({"demo.wrong_exponent": "holds", "demo.gone": "holds"}))
    r = invoke("compare", str(results), str(base), "--json", "--catalogue", CATALOGUE)
    assert r.exit_code == 1
    out = json.loads(r.stdout)
    assert [c["id"] for c in out["changed"]] == ["demo.wrong_exponent"]
    assert out["changed"][0]["verdict"] == "violated" and out["missing"] == ["demo.gone"]


@pytest.mark.parametrize("content, fragment", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "must be a JSON object"),
    ('{"demo.wrong_exponent": "maybe"}', "verdicts must be one of"),
    (None, "no such file"),
])
def test_compare_bad_baseline(results, tmp_path, content, fragment):
    base = tmp_path / "baseline.json"
    if content is not None:
        base.write_text(content)
    one_line_error(invoke("compare", str(results), str(base)), str(base), fragment)


def test_compare_without_results(tmp_path):
    base = tmp_path / "b.json"
    base.write_text('{"demo.variance_vs_n": "holds"}')  # an empty baseline is an error itself
    one_line_error(invoke("compare", str(tmp_path / "nothing"), str(base)),
                   str(tmp_path / "nothing"), "does not exist")
    (tmp_path / "empty").mkdir()
    one_line_error(invoke("compare", str(tmp_path / "empty"), str(base)), "no results.jsonl")


def test_real_entry_point_registers_the_commands():
    from bilevel_theory.reports.cli import main  # noqa: PLC0415

    assert {"list", "verify", "compare"} <= set(main.commands)
    r = CliRunner().invoke(main, ["verify", "--budget", "huge"])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert r.stderr.strip().count("\n") == 0


def test_select_and_catalogue():
    from bilevel_theory.verify import CLAIMS, load, select  # noqa: PLC0415

    assert not any(cid.startswith("demo.") for cid in CLAIMS)  # demos stay out
    demo = load(CATALOGUE)
    assert [c.id for c in select("demo.variance_*", demo)] == [
        "demo.variance_vs_n", "demo.variance_contrast", "demo.variance_bounded"]
    assert [c.id for c in select("geometric", demo)] == ["demo.geometric_bias"]
    assert len(select(None, demo)) == len(DEMO_CLAIMS)
    with pytest.raises(ValueError, match="close matches: demo.rounds_exact"):
        select("demo.rounds_exat", demo)
    with pytest.raises(ValueError, match="MODULE:ATTRIBUTE|module:ATTRIBUTE"):
        load("bilevel_theory.verify.claims.demo")
    with pytest.raises(ValueError, match="has no 'NOPE'"):
        load("bilevel_theory.verify.claims.demo:NOPE")
