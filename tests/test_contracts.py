"""Contracts every registered algorithm and every catalogued claim must keep (CPU, small).

Algorithms (``bilevel_theory.ALGORITHMS``), for each problem kind they declare
(``cls.kinds``): a few rounds with 2 replicates run; the same seed gives bitwise-identical
traces; a different seed gives a different trace on a noisy instance; an unknown
hyperparameter is refused with an error naming it; the cumulative ledger never decreases;
every default hyperparameter passes its schema declaration
(:mod:`bilevel_theory.hyperparameters`); the class has a docstring.

Claims (``bilevel_theory.verify.CLAIMS`` and every ``claim.mutated()``): the metadata is
complete (source cited as "Authors, venue year", no file names of the working notes; a
statement that mathtext can typeset; a role; ≥ 1 mutant for a confirmation or a finding and
none for a control; a ``window`` has its ``window_reason``; ``touches`` ids are
``KEY-R<n>``/``KEY-I<n>`` readings that exist in ``docs/papers/<key>.md``), and the measure, run
at its first smoke grid point with 2 replicates, returns per-replicate arrays of shape ``(2,)``
with ``"value"`` and the keys its kind needs (``"contrast"``, ``"bound"``; ``exact`` claims a
``"predicted"`` count).  Claims whose first smoke point takes more than about 5 s on one core
are marked ``slow`` (:data:`SLOW_CLAIMS`).  Run time of the file: about 75 s on one core.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

import bilevel_theory as bt
from bilevel_theory.hyperparameters import SCHEMA
from bilevel_theory.hyperparameters import validate as validate_hyperparameters
from bilevel_theory.problems import QuadraticBilevel, QuadraticCompositional, QuadraticMinimax
from bilevel_theory.problems.quadratic import shared
from bilevel_theory.trace import LEDGER_FIELDS
from bilevel_theory.verify import CLAIMS
from bilevel_theory.verify.kit import READINGS

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 3


# ------------------------------------------------------------------------------ instances

def instance(kind: str, algorithm: str = "", noise: float = 0.1, seed: int = 1):
    """A small instance of ``kind``; for ``fedsvrg`` a bilevel one whose upper level does
    not depend on ``y`` (``R_i = S_i = 0``, ``q_i = 0``), as its error message asks."""
    size = dict(clients=4, dim_x=3, dim_y=3, noise=noise, seed=seed)
    if kind == "bilevel":
        prob = QuadraticBilevel.random(kappa=3.0, **size)
        if algorithm == "fedsvrg":
            m, dx, dy = prob.clients, prob.dim_x, prob.dim_y
            prob = dataclasses.replace(prob, R=shared(np.zeros((dx, dy)), m),
                                       S=shared(np.zeros((dy, dy)), m), q=np.zeros((m, dy)))
        return prob
    if kind == "minimax":
        return QuadraticMinimax.random(kappa=3.0, **size)
    if kind == "compositional":
        return QuadraticCompositional.random(kappa=1.0, **size)
    raise AssertionError(f"unknown problem kind {kind!r}")


ALGORITHM_NAMES = sorted(bt.ALGORITHMS)
CASES = [pytest.param(name, kind, id=f"{name}-{kind}")
         for name in ALGORITHM_NAMES for kind in bt.ALGORITHMS[name].kinds]


def _arrays(trace) -> dict[str, np.ndarray]:
    out = {"x": trace.x, "stationarity": trace.stationarity, "diverged": trace.diverged,
           "diverged_at": trace.diverged_at}
    if trace.y is not None:
        out["y"] = trace.y
    if trace.inner_error is not None:
        out["inner_error"] = trace.inner_error
    out.update({f"ledger.{f}": getattr(trace.ledger, f) for f in LEDGER_FIELDS})
    out.update({f"extras.{k}": np.asarray(v) for k, v in trace.extras.items()})
    return out


# ------------------------------------------------------------------------------ algorithms

@pytest.mark.parametrize(("name", "kind"), CASES)
def test_algorithm_runs_and_is_reproducible(name, kind, monkeypatch):
    prob = instance(kind, name)
    a = bt.run(name, prob, rounds=ROUNDS, replicates=2, seed=3)
    # the second run measures its paths one replicate at a time: the same bytes
    monkeypatch.setattr("bilevel_theory.algorithm._PATH_CHUNK", 1)
    b = bt.run(name, prob, rounds=ROUNDS, replicates=2, seed=3)
    assert np.allclose(a.stationarity, (prob.host.hypergradient(a.x) ** 2).sum(-1),
                       rtol=1e-12, atol=0)
    assert a.x.shape == (2, ROUNDS + 1, prob.dim_x)
    assert a.stationarity.shape == (2, ROUNDS + 1)
    assert a.diverged.shape == (2,) and a.diverged.dtype == bool
    assert not a.diverged.any(), f"{name} diverged at its defaults on a small {kind} instance"
    assert np.isfinite(a.stationarity).all()
    arrays_a, arrays_b = _arrays(a), _arrays(b)
    assert arrays_a.keys() == arrays_b.keys()
    for key, value in arrays_a.items():
        other = arrays_b[key]
        assert value.shape == other.shape, key
        # bitwise: compare the bytes, so that -0.0 vs 0.0 or two NaN payloads would differ too
        assert np.ascontiguousarray(value).tobytes() == np.ascontiguousarray(other).tobytes(), (
            f"{name} on {kind}: `{key}` differs between two runs with the same seed")


@pytest.mark.parametrize(("name", "kind"), CASES)
def test_different_seed_differs_on_noisy_instance(name, kind):
    prob = instance(kind, name, noise=0.1)
    a = bt.run(name, prob, rounds=ROUNDS, replicates=2, seed=0)
    b = bt.run(name, prob, rounds=ROUNDS, replicates=2, seed=1)
    assert not np.array_equal(a.x, b.x), f"{name} on {kind}: seeds 0 and 1 gave the same x"
    # the two replicates of one run are independent runs, so they differ too
    assert not np.array_equal(a.x[0], a.x[1]), f"{name} on {kind}: replicates are identical"


@pytest.mark.parametrize(("name", "kind"), CASES)
def test_unknown_hyperparameter_is_named(name, kind):
    prob = instance(kind, name)
    with pytest.raises(ValueError, match="no_such_knob"):
        bt.run(name, prob, rounds=1, replicates=2, no_such_knob=1)


@pytest.mark.parametrize(("name", "kind"), CASES)
def test_ledger_is_cumulative(name, kind):
    trace = bt.run(name, instance(kind, name), rounds=ROUNDS, replicates=2, seed=0)
    for field in LEDGER_FIELDS:
        values = np.asarray(getattr(trace.ledger, field), dtype=float)
        assert values.shape == (ROUNDS + 1,), field
        assert np.isfinite(values).all(), field
        assert (values >= 0).all(), field
        assert (np.diff(values) >= 0).all(), f"{name} on {kind}: ledger `{field}` decreases"
    # the oracle's work is counted (communication may wait for a period longer than the run)
    assert trace.ledger.grad_calls[-1] > 0, f"{name} on {kind}: no gradient call counted"


@pytest.mark.parametrize("name", ALGORITHM_NAMES)
def test_defaults_pass_the_schema(name):
    cls = bt.ALGORITHMS[name]
    schema = {**SCHEMA, **cls.schema}
    for kind in cls.kinds:
        prob = instance(kind, name)
        algorithm = cls(prob)  # validates the resolved defaults
        resolved = algorithm.resolved_defaults(prob)
        declared = {k: v for k, v in resolved.items() if k in schema}
        assert declared, f"{name}: none of its hyperparameters is declared in the schema"
        checked = validate_hyperparameters(name, declared, schema)
        assert checked.keys() == declared.keys()
        # every hyperparameter the class accepts is reported with its resolved value
        assert set(algorithm.hp) == set(cls.defaults), name


@pytest.mark.parametrize("name", ALGORITHM_NAMES)
def test_algorithm_has_docstring(name):
    cls = bt.ALGORITHMS[name]
    doc = cls.__doc__ or ""
    assert doc.strip(), f"{name} ({cls.__module__}.{cls.__qualname__}) has no docstring"


# ------------------------------------------------------------------------------ claims

def _all_claims():
    out = []
    for cid in sorted(CLAIMS):
        claim = CLAIMS[cid]
        out.append(claim)
        out.extend(claim.mutated())
    return out


ALL_CLAIMS = {c.id: c for c in _all_claims()}
#: claims (with their mutants) whose first smoke point takes about 5 s or more on one (shared)
#: core: fedmbo.linear_speedup about 6 s, afbo.staleness_floor_vs_delay about 5 s; every other
#: claim's first point takes under 2 s (all measure tests together: about a minute)
SLOW_CLAIMS = frozenset({"afbo.staleness_floor_vs_delay", "fedmbo.linear_speedup"})

SOURCE = re.compile(r"^[A-Z][^,]*(?:,[^,]*)*?,\s*[^,]*?\b(?:19|20)\d\d\b")
FORBIDDEN_IN_TEXT = (re.compile(r"\b\d{3}_[0-9a-f]{8,}\.txt\b"), re.compile(r"\.txt\b"),
                     re.compile(r"PAPERS\.md"), re.compile(r"\bDESIGN\b"))
READING = re.compile(r"^([A-Z]+)-([RI])(\d+)$")


def _claim_params(slow_ok: bool = True):
    params = []
    for cid, claim in ALL_CLAIMS.items():
        base = claim.mutant_of or cid
        marks = [pytest.mark.slow] if slow_ok and base in SLOW_CLAIMS else []
        params.append(pytest.param(cid, id=cid, marks=marks))
    return params


def test_catalogue_is_not_empty():
    assert CLAIMS, "the claims catalogue is empty"
    assert any(c.mutant_of for c in ALL_CLAIMS.values()), "no mutated claim"


@pytest.mark.parametrize("cid", _claim_params(slow_ok=False))
def test_claim_metadata(cid):
    claim = ALL_CLAIMS[cid]
    from bilevel_theory.reports.figures import mathtext_ok, mathtext_source

    assert SOURCE.match(claim.source), (
        f"{cid}: source {claim.source!r} does not cite 'Authors, venue year, result'")
    for text_name in ("source", "statement", "reason", "schedule", "window_reason"):
        text = str(getattr(claim, text_name))
        for pattern in FORBIDDEN_IN_TEXT:
            assert not pattern.search(text), (
                f"{cid}: `{text_name}` cites a working file ({pattern.pattern}): {text!r}")
    assert claim.statement.strip(), f"{cid}: empty statement"
    assert mathtext_ok(f"${mathtext_source(claim.statement)}$"), (
        f"{cid}: statement is not valid mathtext: {claim.statement!r}")
    assert claim.role in ("confirmation", "finding", "defect", "control"), cid
    if claim.mutant_of is None:
        if claim.role in ("confirmation", "finding", "defect"):
            assert claim.mutants, f"{cid}: a {claim.role} needs at least one mutant"
        else:
            assert not claim.mutants, f"{cid}: a control has no mutants"
    else:
        parent = CLAIMS[claim.mutant_of]
        assert cid.split("@", 1)[0] == parent.id
        assert claim.role == parent.role
        assert claim.expected == {"confirmation": "violated", "finding": "holds",
                                  "defect": "holds"}[parent.role]
    if claim.window is not None:
        assert claim.window_reason.strip(), f"{cid}: `window` without `window_reason`"
        lo, hi = claim.window
        assert lo <= hi, cid
    if claim.expected != "holds":
        assert claim.reason.strip(), cid
    assert claim.conditions or claim.conditions_note.strip(), (
        f"{cid}: declare the cited result's hypotheses as `conditions`, or say in "
        "`conditions_note` why it has none")
    for text in (claim.conditions_note, *(c.statement for c in claim.conditions)):
        for pattern in FORBIDDEN_IN_TEXT:
            assert not pattern.search(text), f"{cid}: cites a working file: {text!r}"


def _reading_ids(key: str) -> set[str]:
    texts = []
    assembled = ROOT / "docs" / "papers.md"
    if assembled.is_file():
        texts.append(assembled.read_text(encoding="utf-8"))
    per_paper = ROOT / "docs" / "papers" / f"{key.lower()}.md"
    if per_paper.is_file():
        texts.append(per_paper.read_text(encoding="utf-8"))
    return set(re.findall(r"\b[A-Z]+-[RIL]\d+\b", "\n".join(texts)))


@pytest.mark.parametrize("cid", sorted(CLAIMS))
def test_claim_touches_documented_readings(cid):
    claim = CLAIMS[cid]
    for reading in claim.touches:
        m = READING.match(reading)
        assert m, f"{cid}: `touches` id {reading!r} is not KEY-R<n> or KEY-I<n>"
        if reading in READINGS:  # a plug-in's reading, registered with register_paper
            continue
        known = _reading_ids(m.group(1))
        assert reading in known, (
            f"{cid}: reading {reading} is not in docs/papers/{m.group(1).lower()}.md "
            "(nor docs/papers.md), nor registered by a plug-in (register_paper(readings=))")


#: keys a claim's measure must return, per assertion kind
KIND_KEYS = {"contrast": ("contrast",), "bounded_by": ("bound",), "exact": ("predicted",)}


@pytest.mark.parametrize("cid", _claim_params())
def test_claim_measure_shapes(cid):
    claim = ALL_CLAIMS[cid]
    point = claim.grid["smoke"][0]
    out = claim.measure_for("smoke")(point, 2, 0, "numpy")
    assert "value" in out, f"{cid}: measure returned no 'value' ({sorted(out)})"
    for key in KIND_KEYS.get(claim.kind, ()):
        assert key in out, f"{cid}: a `{claim.kind}` claim's measure must return {key!r}"
    for key, value in out.items():
        arr = np.asarray(value)
        assert arr.shape == (2,), f"{cid}: metric {key!r} has shape {arr.shape}, not (2,)"
    assert np.issubdtype(np.asarray(out["value"]).dtype, np.number), cid


@pytest.mark.parametrize("cid", sorted(CLAIMS))
def test_claim_runs_inside_the_conditions_it_declares(cid):
    """Every condition a claim declares holds at every grid point of every budget, unless
    the claim leaves it on purpose (``inside=False``, with a note saying why)."""
    claim = CLAIMS[cid]
    for budget in ("smoke", "standard", "full"):
        for row in claim.check_conditions(budget):
            assert row["holds"] or not row["inside"], (cid, budget, row["statement"],
                                                       row["failing_x"])


def test_a_given_hyperparameter_skips_its_default():
    """A default is computed only when the caller does not give the value: FedMBO's default
    step 0.5/L_Φ has no value where Φ is linear (L_Φ = 0), and a given step must not need it."""
    from bilevel_theory.fedmbo import FedMBO
    from bilevel_theory.verify.claims.fedmbo.common import scalar_problem

    P = scalar_problem(5.0, 6.0)
    assert P.constants["L_phi"] == 0.0
    assert FedMBO(P, outer_step=0.1).hp["outer_step"] == 0.1
    assert "outer_step" not in FedMBO(P, outer_step=0.1).resolved_defaults(P, skip={"outer_step"})


def test_a_default_that_cannot_be_computed_names_the_parameter():
    from bilevel_theory.fedmbo import FedMBO
    from bilevel_theory.verify.claims.fedmbo.common import scalar_problem

    with pytest.raises(ValueError, match="`outer_step` of `fedmbo`.*give `outer_step`"):
        FedMBO(scalar_problem(5.0, 6.0))
