"""The coverage map of the papers' stated results (``verify.coverage``): the inventories name
only claims of the catalogue, every status is computed from the claims' swept variables,
``docs/coverage.md`` is in sync with its generator, the ``coverage`` command's JSON is strict,
and a plug-in's inventory is found through the ``bilevel_theory.inventory`` entry points."""

from __future__ import annotations

import dataclasses
import importlib
import json
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from click.testing import CliRunner

from bilevel_theory.reports.cli import main as CLI
from bilevel_theory.verify.catalogue_doc import package_claims
from bilevel_theory.verify.coverage import (
    CANONICAL,
    GAPS,
    Inventory,
    Result,
    assess,
    check_gaps,
    coverage,
    inventories,
    mapping,
    package_inventories,
    status_of,
)
from bilevel_theory.verify.coverage.__main__ import main as page_main
from bilevel_theory.verify.coverage.__main__ import page
from bilevel_theory.verify.coverage.render import report_lines

ROOT = Path(__file__).resolve().parents[1]
PAPER_KEYS = {"afbo", "fedmbo", "fednest", "gao", "memfbo"}


@pytest.fixture(scope="module")
def assessed():
    return coverage(package_claims(), package_inventories())


def test_the_five_papers_have_an_inventory():
    assert {inv.key for inv in package_inventories()} == PAPER_KEYS


def test_every_named_claim_is_in_the_catalogue_and_every_claim_is_named(assessed):
    claims = package_claims()
    named = {cid for a in assessed for cid in a.result.claims}
    assert named <= set(claims), sorted(named - set(claims))
    assert set(claims) <= named, f"claims no result names: {sorted(set(claims) - named)}"


def test_result_ids_are_unique_and_carry_their_paper(assessed):
    ids = [a.result.id for a in assessed]
    assert len(ids) == len(set(ids))
    for a in assessed:
        assert a.result.id.startswith(a.inventory.key + ".")
        assert a.source.startswith(a.inventory.citation + ", ")


def test_every_swept_symbol_maps_to_a_canonical_variable(assessed):
    for a in assessed:
        for use in a.uses:
            assert use.sweeps in CANONICAL, (a.result.id, use)


def test_the_status_is_not_a_field_and_follows_the_claims(assessed):
    """No stored status: dropping a result's claims from the catalogue changes it."""
    fields = {f.name for f in dataclasses.fields(Result)}
    assert not fields & {"status", "missing", "swept"}
    claims = package_claims()
    full = [a for a in assessed if a.status == "full" and a.result.claims]
    assert full
    for a in full:
        # the same claims, now sweeping a variable the statement does not give
        other = next(v for v in CANONICAL if v not in a.result.variables)
        blind = {cid: dataclasses.replace(claims[cid], variable="?") for cid in a.result.claims}
        inv = dataclasses.replace(a.inventory, notation={"?": other}, claim_sweeps={},
                                  inner_sweeps={},
                                  results=(dataclasses.replace(a.result, sweeps={}),))
        (again,) = assess(inv, blind)
        assert again.status == "none" and again.missing == a.result.variables, a.result.id


def test_status_of_and_the_roles_that_count():
    assert status_of(("T", "m"), {"T", "m", "κ"}) == "full"
    assert status_of(("T", "m"), {"T"}) == "partial"
    assert status_of(("T", "m"), set()) == "none"
    claims = package_claims()
    control = claims["fednest.ihgp_bias_vs_N"]
    assert control.role == "control"
    inv = Inventory("x", "X", "Someone, venue 2000", {"N": "N"}, (
        Result("x.lemma", "lemma", "Lemma 1", "bias ≤ ρ^N", ("N",),
               claims=("fednest.ihgp_bias_vs_N",)),))
    (a,) = assess(inv, claims)
    assert a.status == "none" and a.missing == ("N",)  # a control never counts
    inv = dataclasses.replace(inv, results=(dataclasses.replace(
        inv.results[0], claims=("fednest.released_bias_vs_N",)),))
    assert claims["fednest.released_bias_vs_N"].role == "defect"
    assert assess(inv, claims)[0].status == "none"  # nor a defect of the released code
    inv = dataclasses.replace(inv, results=(dataclasses.replace(
        inv.results[0], claims=("fednest.ihgp_bias_vs_N", "fedmbo.phe_bias_bound_stated")),))
    assert claims["fedmbo.phe_bias_bound_stated"].role == "finding"
    assert assess(inv, claims)[0].status == "full"  # a finding does


def test_a_two_way_experiment_counts_the_variable_its_measure_walks():
    """``inner_sweeps``: a claim whose measure walks a second variable at every grid point
    counts for it too; the entries name catalogue claims and canonical variables."""
    claims = package_claims()
    inv = Inventory("x", "X", "Someone, venue 2000", {"T": "T"}, (
        Result("x.cor", "corollary", "Cor 1", "rate in (m, T)", ("T", "n"),
               claims=("afbo.linear_speedup_m",)),))
    assert assess(inv, claims)[0].missing == ("n",)
    (a,) = assess(dataclasses.replace(inv, inner_sweeps={"afbo.linear_speedup_m": "n"}), claims)
    assert a.status == "full" and a.uses[0].inner == "n"
    with pytest.raises(ValueError, match="canonical"):
        dataclasses.replace(inv, inner_sweeps={"afbo.linear_speedup_m": "clients"})
    for each in package_inventories():
        assert set(each.inner_sweeps) <= set(claims)


def test_an_open_result_says_why_and_a_full_one_does_not():
    """``gap`` follows the computed status: required when partial or none, stale when full."""
    claims = package_claims()
    thm = Result("x.thm", "theorem", "Thm 1", "bias ≤ b", ("N", "κ"),
                 claims=("fedmbo.phe_bias_bound_stated",))
    inv = Inventory("x", "X", "Someone, venue 2000", {"N": "N"}, (thm,))
    (a,) = assess(inv, claims)
    assert a.status == "partial" and a.missing == ("κ",)
    with pytest.raises(ValueError, match=r"x.thm is partial \(missing κ\): name why"):
        check_gaps([a])
    inv = dataclasses.replace(inv, results=(dataclasses.replace(
        thm, gap="cannot_fail", reason="the bound is attained"),))
    assert check_gaps(assess(inv, claims))[0].result.gap == "cannot_fail"
    full = dataclasses.replace(thm, variables=("N",), gap="cost", reason="slow")
    (a,) = assess(dataclasses.replace(inv, results=(full,)), claims)
    with pytest.raises(ValueError, match="its `gap` 'cost' is stale"):
        check_gaps([a])


def test_every_open_result_of_the_papers_names_why(assessed):
    c = mapping.counts(assessed)
    for block in [*c["papers"].values(), c["overall"]]:
        for part in (block, block["headline"]):
            assert set(part["gaps"]) == set(GAPS)
            assert sum(part["gaps"].values()) == part["partial"] + part["none"]
    for a in assessed:
        assert bool(a.result.gap) == (a.status in ("partial", "none")), a.result.id
    text = CliRunner().invoke(CLI, ["coverage"], catch_exceptions=False).output
    assert "why open:" in text and all(g in text for g in GAPS)


def test_counts_add_up(assessed):
    c = mapping.counts(assessed)
    for block in [*c["papers"].values(), c["overall"]]:
        for part in (block, block["headline"]):
            assert part["full"] + part["partial"] + part["none"] == part["checkable"]
            assert part["checkable"] <= part["results"]
    for key in ("results", "checkable", "full", "partial", "none"):
        assert sum(p[key] for p in c["papers"].values()) == c["overall"][key]
    assert c["overall"]["headline"]["checkable"] > 0


@pytest.mark.parametrize("bad, message", [
    (dict(variables=("T", "rounds")), "canonical"),
    (dict(variables=()), "at least one"),
    (dict(checkable=False), "why_not"),
    (dict(why_not="because"), "why_not"),
    (dict(kind="claim"), "kind"),
    (dict(checkable=False, why_not="no", claims=("a.b",)), "cannot name"),
    (dict(sweeps={"a.b": "T"}), "does not list"),
    (dict(gap="hard", reason="because"), "`gap` must be one of"),
    (dict(gap="cost"), "needs its `reason`"),
])
def test_bad_results_are_refused(bad, message):
    fields = dict(id="x.thm1", kind="theorem", where="Thm 1", statement="rate", variables=("T",))
    with pytest.raises(ValueError, match=message):
        Result(**{**fields, **bad})


def test_bad_inventories_and_unknown_claims_are_refused():
    r = Result("x.thm1", "theorem", "Thm 1", "rate", ("T",), claims=("x.nothing",))
    with pytest.raises(ValueError, match="duplicate result ids"):
        Inventory("x", "X", "Someone, venue 2000", {}, (r, r))
    with pytest.raises(ValueError, match="must start with 'y.'"):
        Inventory("y", "Y", "Someone, venue 2000", {}, (r,))
    with pytest.raises(ValueError, match="not in the catalogue"):
        assess(Inventory("x", "X", "Someone, venue 2000", {}, (r,)), package_claims())
    r = dataclasses.replace(r, claims=("afbo.aphe_bias",))
    with pytest.raises(ValueError, match="does not map"):
        assess(Inventory("x", "X", "Someone, venue 2000", {}, (r,)), package_claims())


def test_the_page_is_in_sync_with_its_generator(tmp_path, capsys):
    assert page_main(["--check"]) == 0, "run python3 -m bilevel_theory.verify.coverage --write"
    stale = tmp_path / "coverage.md"
    stale.write_text(page().replace("| full |", "| none |", 1), encoding="utf-8")
    assert page_main(["--check", "--path", str(stale)]) == 1
    assert page_main(["--write", "--path", str(stale)]) == 0
    assert stale.read_text(encoding="utf-8") == page()
    assert "[coverage.md](coverage.md)" in (ROOT / "docs" / "index.md").read_text()


def _no_nan(text: str):
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict JSON: {c}"))


def test_the_command_prints_strict_json_and_tables():
    r = CliRunner().invoke(CLI, ["coverage", "--json"], catch_exceptions=False)
    assert r.exit_code == 0
    data = _no_nan(r.output)
    assert {p for p in data["papers"]} >= PAPER_KEYS
    assert {row["status"] for row in data["results"]} <= {"full", "partial", "none", "n/a"}
    assert len(data["results"]) == data["overall"]["results"]
    r = CliRunner().invoke(CLI, ["coverage", "--paper", "afbo"], catch_exceptions=False)
    assert r.exit_code == 0 and "afbo.cor4.1.nc" in r.output and "fedmbo." not in r.output
    assert "headline results:" in r.output
    r = CliRunner().invoke(CLI, ["coverage", "--paper", "nosuch"])
    assert r.exit_code == 2 and "`--paper` must name one of" in r.output


def test_the_report_section_covers_the_report_papers(assessed):
    from bilevel_theory.reports.markdown import coverage_markdown

    lines = coverage_markdown([{"paper": "AFBO"}])
    assert lines[0] == "## Coverage of the papers' results"
    assert any(line.startswith("| AFBO |") for line in lines)
    assert not any(line.startswith("| FedMBO") for line in lines)
    assert coverage_markdown([{"paper": "demo"}]) == [] == report_lines([])


def test_a_plugin_inventory_is_found_through_its_entry_point(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "examples" / "toy_plugin" / "src"))
    import bilevel_theory.verify.claims as claims_pkg  # noqa: PLC0415

    def plugins(*eps):  # the inventory group sees ``eps``; every other group, nothing
        monkeypatch.setattr(claims_pkg, "entry_points",
                            lambda group: list(eps) if group == mapping.ENTRY_POINT_GROUP else [])

    ep = EntryPoint("toy", "toy_plugin.inventory:INVENTORY", mapping.ENTRY_POINT_GROUP)
    plugins(ep)
    try:
        invs = inventories()
        assert [inv.key for inv in invs][-1] == "toy"
        toy_claims = importlib.import_module("toy_plugin.claims").CLAIMS
        status = {a.result.id: (a.status, a.missing)
                  for a in assess(invs[-1], {c.id: c for c in toy_claims})}
        assert status == {"toy.bias": ("full", ()), "toy.rounds": ("partial", ("K",))}
        clash = EntryPoint("again", "bilevel_theory.verify.coverage.inventory.afbo:INVENTORY",
                           mapping.ENTRY_POINT_GROUP)
        plugins(clash)
        with pytest.raises(ValueError, match="share the key"):
            inventories()
        broken = EntryPoint("bad", "toy_plugin.nosuch:INVENTORY", mapping.ENTRY_POINT_GROUP)
        plugins(broken)
        with pytest.raises(ImportError, match="entry point 'bad'"):
            inventories()
    finally:
        for name in [m for m in sys.modules if m.startswith("toy_plugin")]:
            sys.modules.pop(name)


def test_the_readings_cited_exist(assessed):
    """Every note id (``GAO-R7``, ``MEMFBO-I3`` …) in an inventory is in docs/papers/."""
    import re

    for a in assessed:
        r = a.result
        for note in re.findall(r"\b([A-Z]+)-([RIL]\d+)\b", " ".join(
                [r.where, r.statement, r.why_not, r.reason])):
            page = ROOT / "docs" / "papers" / f"{note[0].lower()}.md"
            assert f"**{note[0]}-{note[1]}" in page.read_text(encoding="utf-8"), (r.id, note)


def test_the_inventories_cite_papers_not_project_files():
    # spelled in parts so that this file does not itself cite the outside documents
    words = ("PAPERS" + ".md", "DES" + "IGN", "seed", "issue" + " #", "helper", "agent",
             "session")
    for path in sorted((ROOT / "verify" / "coverage").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert not [w for w in words if w in text], path
