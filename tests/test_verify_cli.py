"""``list`` / ``verify`` / ``compare``: exit codes 0/1/2, one-line errors, no tracebacks."""

from __future__ import annotations

import dataclasses
import json

import click
import pytest
from click.testing import CliRunner

from bilevel_theory.verify.claims.demo import CATALOGUE, DEMO_CLAIMS
from bilevel_theory.verify.cli import make_commands
from bilevel_theory.verify.store import ResultsStore

WRONG = next(c for c in DEMO_CLAIMS if c.id == "demo.wrong_exponent")
# a catalogue whose claim misses its expected verdict (the law is wrong, expected "holds")
MISMATCH = [dataclasses.replace(WRONG, id="demo.mismatch", expected="holds", reason="",
                                role="confirmation")]
REPORTS: list = []


def _group():
    @click.group()
    def cli():
        pass

    for cmd in make_commands(after_verify=lambda out, rep, **kw: REPORTS.append((out, rep))):
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
    assert "CPU-s: main process" in r.stdout and run["cpu_seconds"]["workers"] is not None
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


# ----------------------------------------------------------------- strict JSON, selection


def strict_loads(text):
    """``json.loads`` that refuses the NaN/Infinity tokens strict JSON does not have."""
    def refuse(token):
        raise ValueError(f"not strict JSON: {token}")

    return json.loads(text, parse_constant=refuse)


def test_strict_parser_refuses_nan():
    with pytest.raises(ValueError, match="not strict JSON"):
        strict_loads('{"law": NaN}')


def test_json_output_is_strict(tmp_path):
    from bilevel_theory.verify.claims import load  # noqa: PLC0415

    papers = load(None)  # the papers' catalogue: its bounded_by claims have no exponent (NaN)
    assert any(c.law.value != c.law.value for c in papers.values())
    r = invoke("list", "--json")
    assert r.exit_code == 0
    infos = strict_loads(r.stdout)
    assert len(infos) == len(papers) and any(i["law"] is None for i in infos)
    bounded = next(cid for cid, c in papers.items() if c.law.value != c.law.value)
    r = invoke("show", bounded, "--json")
    assert r.exit_code == 0 and strict_loads(r.stdout)["law"] is None
    r = invoke("verify", "demo.diverging", "demo.variance_bounded", "--catalogue", CATALOGUE,
               "--out", str(tmp_path), "--quiet", "--json")
    assert r.exit_code in (0, 1), r.output
    assert {e["id"] for e in strict_loads(r.stdout)} == {"demo.diverging",
                                                          "demo.variance_bounded"}
    text = (tmp_path / "results.jsonl").read_text()
    assert '"nonfinite"' in text  # the diverging claim stores non-finite metrics
    for line in text.splitlines():
        strict_loads(line)
    for name in ("summary.json", "run.json"):
        strict_loads((tmp_path / name).read_text())


@pytest.mark.parametrize("args, fragments", [
    (["--paper", "afbx"], ["`--paper` 'afbx' matches no paper", "did you mean 'afbo'",
                           "FedNest 2022"]),
    (["--kind", "bonded"], ["`--kind` must be one of", "did you mean 'bounded_by'"]),
    (["--role", "contrl"], ["`--role` must be one of", "did you mean 'control'"]),
    (["--verdict", "hold"], ["`--verdict` must be one of", "did you mean 'holds'"]),
    (["--paper", "afbo", "--kind", "exact", "--role", "control"],
     ["no claim matches all of --paper afbo --kind exact --role control"]),
])
@pytest.mark.parametrize("dry", [[], ["--dry-run"]])
def test_bad_filters_are_refused_before_anything_runs(tmp_path, args, fragments, dry):
    out = tmp_path / "out"
    one_line_error(invoke("verify", *args, *dry, "--out", str(out)), *fragments)
    assert not out.exists()  # nothing ran, not even the cost comparison


def test_list_refuses_an_unknown_paper_and_accepts_an_id_prefix():
    one_line_error(invoke("list", "--paper", "fedbmo"), "did you mean 'fedmbo'")
    r = invoke("list", "--paper", "lfednest")
    assert r.exit_code == 0 and r.stdout.count("lfednest.") >= 1
    assert "fednest." not in r.stdout.replace("lfednest.", "")


def test_cost_comparison_runs_the_selected_papers_algorithms_only(tmp_path, monkeypatch):
    from bilevel_theory.verify import costs, run_suite  # noqa: PLC0415
    from bilevel_theory.verify.claims import load, select  # noqa: PLC0415

    assert costs.algorithms_of(select(None, load(None), paper="afbo")) == [
        "afbo", "afbo_naive", "afbo_sync"]
    assert costs.algorithms_of(load(None).values()) == costs.algorithms()
    assert costs.algorithms_of([]) == []
    as_afbo = dataclasses.replace(next(c for c in DEMO_CLAIMS if c.id == "demo.rounds_exact"),
                                  paper="AFBO")
    run_suite(budget="smoke", out=tmp_path, progress=False, claims=[as_afbo], costs=True)
    stored = {r["claim"] for r in ResultsStore(tmp_path).rows()}
    assert {c for c in stored if c.startswith("costs.")} == {
        "costs.afbo", "costs.afbo_naive", "costs.afbo_sync"}


def test_the_cost_comparison_runs_on_the_worker_pool(tmp_path):
    """The per-algorithm costs are tasks of the same executor as the claims' points (two
    workers share them), with the same rows as the serial comparison."""
    from bilevel_theory.verify import costs, run_suite  # noqa: PLC0415

    claim = next(c for c in DEMO_CLAIMS if c.id == "demo.rounds_exact")
    as_fedmbo = dataclasses.replace(claim, paper="FedMBO")
    run_suite(budget="smoke", out=tmp_path / "pool", workers=2, progress=False,
              claims=[as_fedmbo], costs=True)
    costs.measure_costs(tmp_path / "serial", "smoke", names=["fedmbo"])

    def metrics(path):
        return [r["metrics"] for r in ResultsStore(path).rows(claim="costs.fedmbo")]
    assert metrics(tmp_path / "pool") == metrics(tmp_path / "serial") != []


@pytest.mark.parametrize("quiet", [False, True])
def test_verify_report_shows_progress_unless_quiet(tmp_path, monkeypatch, quiet):
    import importlib  # noqa: PLC0415

    from bilevel_theory.reports.cli import main  # noqa: PLC0415

    render_mod = importlib.import_module("bilevel_theory.reports.render")

    def fake_render(results_dir, out_dir, progress=None, **kwargs):
        for i in range(1, 3):
            progress(i, 2, f"fig{i}")
        return out_dir / "index.html"

    monkeypatch.setattr(render_mod, "render", fake_render)
    args = ["verify", "demo.variance_vs_n", "--catalogue", CATALOGUE, "--out",
            str(tmp_path / "out"), "--report", str(tmp_path / "rep")]
    r = CliRunner().invoke(main, args + (["--quiet"] if quiet else []))
    assert r.exit_code == 0, r.output
    lines = ["report: figure 1/2: fig1", "report: figure 2/2: fig2",
             f"report: {tmp_path / 'rep' / 'index.html'}"]
    for line in lines:
        assert (line in r.stderr) is not quiet, r.stderr


def test_show_says_why_a_claim_declares_no_condition():
    from bilevel_theory.verify.claims import load  # noqa: PLC0415

    claim = next(c for c in load(None).values() if not c.conditions and c.conditions_note)
    r = invoke("show", claim.id)
    assert r.exit_code == 0
    assert f"conditions of the theorem: none: {claim.conditions_note}" in r.stdout
    info = strict_loads(invoke("show", claim.id, "--json").stdout)
    assert info["conditions"] == {} and info["conditions_note"] == claim.conditions_note
