"""The inventory data model: a paper's stated quantitative results, one :class:`Result` each.

An :class:`Inventory` lists every theorem, corollary, proposition and lemma of one paper that
states a rate, bound, complexity or constant, and every remark, figure or table that states a
rate, speedup, complexity, communication count or comparison.  Each result names the claims
of the catalogue that test it; whether it is covered (``full``/``partial``/``none``) is never
stored: :mod:`bilevel_theory.verify.coverage.mapping` computes it from the variables the
claims sweep.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

#: Canonical variable names, with what each stands for.  A paper's own notation (FedNest's
#: ``K`` outer iterations, FedMBO's ``n`` sampled clients, Gao's ``K`` devices …) is mapped to
#: these by its inventory's ``notation``.
CANONICAL: dict[str, str] = {
    "T": "outer iterations (communication rounds of the outer loop)",
    "m": "clients sampled per round",
    "n": "clients in total",
    "N": "Neumann-series terms (truncation of the inverse-Hessian estimate)",
    "K": "inner (lower-level) steps per outer iteration",
    "τ": "local steps between two communications",
    "delay": "staleness of a client's stored update",
    "κ": "condition number of the lower level",
    "ε": "target accuracy",
    "λ": "penalty multiplier",
    "batch": "samples per stochastic oracle call",
    "η": "step size",
    "σ": "oracle noise level",
    "δ": "client heterogeneity",
}

#: Why a checkable result is not covered in full: every ``partial`` or ``none`` result names
#: one of these as its ``gap`` (checked against the computed status), with the details in its
#: ``reason``.
GAPS: dict[str, str] = {
    "cannot_fail": "on quadratic instances no sweep of the missing variables could contradict "
                   "the statement: the measurement is forced (linear in the noise or in the "
                   "offsets, bounded where the bound grows, or equal to the bound), so a claim "
                   "could neither fail nor confirm more than the arithmetic",
    "reduces": "a step of a proof that reduces on quadratics, term by term, to results the "
               "catalogue tests: its verdicts would be theirs",
    "unspecified": "qualitative, or its terms are O(·) of constants or moments the source "
                   "leaves unspecified or lost: no law to hold a measurement to",
    "baseline": "it compares with a method the toolkit does not implement",
    "cost": "a full test is out of reach on this machine",
    "not_built": "testable here; no claim built yet",
}

#: What a result is in its paper.
KINDS = ("theorem", "corollary", "proposition", "lemma", "remark", "section", "figure",
         "table")


def _check_variables(name: str, values, unique: bool = True) -> tuple[str, ...]:
    values = tuple(values)
    bad = [v for v in values if v not in CANONICAL]
    if bad:
        raise ValueError(f"`{name}` must be canonical variables ({', '.join(CANONICAL)}), got "
                         f"{bad}")
    if unique and len(set(values)) != len(values):
        raise ValueError(f"`{name}` lists a variable twice: {values}")
    return values


@dataclass(frozen=True)
class Result:
    """One stated result of a paper.

    Attributes:
        id: stable id, ``<paper key>.<where>`` (e.g. ``"afbo.thm4.1a"``).
        kind: one of :data:`KINDS`.
        where: where the paper states it (``"Thm 4.1(a), §4"``); the source is the paper's
            citation followed by this.
        statement: the statement, quoted as the paper gives it (LaTeX/Unicode).
        variables: the canonical variables the statement gives a dependence on.
        claims: ids of the catalogue's claims that test it (confirmations and findings;
            controls and defects of the released code are listed but never count).
        headline: a main theorem, corollary, or their speedup/complexity remarks.
        checkable: whether quadratic instances can test it; when not, ``why_not`` says why.
        reason: why a full test (every variable swept) is out of reach on this machine;
            for a full one, how its variables are swept or its words read.
        sweeps: ``claim id -> canonical variable`` where a claim's grid walks this result's
            own schedule (e.g. ``T = T(ε)``), so that its sweep is one of this statement's
            variables rather than the one its notation names.
        gap: for a result not covered in full, why (a key of :data:`GAPS`); empty for a full
            one and for one that is not checkable.
    """

    id: str
    kind: str
    where: str
    statement: str
    variables: tuple[str, ...]
    claims: tuple[str, ...] = ()
    headline: bool = False
    checkable: bool = True
    why_not: str = ""
    reason: str = ""
    sweeps: Mapping[str, str] = field(default_factory=dict)
    gap: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or "." not in self.id or " " in self.id:
            raise ValueError(f"`Result.id` must look like 'paper.result' without spaces, got "
                             f"{self.id!r}")
        if self.kind not in KINDS:
            raise ValueError(f"result {self.id}: `kind` must be one of {', '.join(KINDS)}, got "
                             f"{self.kind!r}")
        if not self.where or not self.statement:
            raise ValueError(f"result {self.id}: `where` and `statement` must be non-empty")
        object.__setattr__(self, "variables", _check_variables(f"{self.id}.variables",
                                                               self.variables))
        if not self.variables:
            raise ValueError(f"result {self.id}: `variables` must name at least one variable")
        claims = (self.claims,) if isinstance(self.claims, str) else tuple(self.claims)
        if len(set(claims)) != len(claims):
            raise ValueError(f"result {self.id}: `claims` lists a claim twice: {claims}")
        object.__setattr__(self, "claims", claims)
        if self.checkable == bool(self.why_not):
            raise ValueError(f"result {self.id}: `why_not` is required exactly when "
                             "`checkable` is False")
        if not self.checkable and self.claims:
            raise ValueError(f"result {self.id}: a result that is not checkable cannot name "
                             f"claims, got {self.claims}")
        sweeps = dict(self.sweeps)
        _check_variables(f"{self.id}.sweeps", sweeps.values(), unique=False)
        stray = [c for c in sweeps if c not in self.claims]
        if stray:
            raise ValueError(f"result {self.id}: `sweeps` names claims it does not list: "
                             f"{stray}")
        object.__setattr__(self, "sweeps", sweeps)
        if self.gap and self.gap not in GAPS:
            raise ValueError(f"result {self.id}: `gap` must be one of {', '.join(GAPS)}, got "
                             f"{self.gap!r}")
        if self.gap and not self.reason:
            raise ValueError(f"result {self.id}: a `gap` needs its `reason`")


@dataclass(frozen=True)
class Inventory:
    """A paper's results.

    Attributes:
        key: the paper's id prefix (``"afbo"``); every result id starts with ``key + "."``.
        paper: the paper's short name, as the claims' ``paper`` field gives it.
        citation: ``"Authors, venue year"``.
        notation: ``claim.variable -> canonical variable`` for the claims the results name
            (the paper's own symbols: FedNest's ``K`` is ``T``).
        claim_sweeps: ``claim id -> canonical variable`` where one claim's symbol means
            something else than the notation says (AFBO's ``m`` is also its Neumann count).
        inner_sweeps: ``claim id -> canonical variable`` that a claim's measure itself walks
            at every point of its grid (a two-way experiment, such as AFBO's (m, T) one, which
            fits Cor 4.1's form over ``m`` at each ``T``); it counts as swept alongside the
            grid's own variable.
        results: the results, in the paper's order.
    """

    key: str
    paper: str
    citation: str
    notation: Mapping[str, str]
    results: tuple[Result, ...]
    claim_sweeps: Mapping[str, str] = field(default_factory=dict)
    inner_sweeps: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.key or not self.paper or not self.citation:
            raise ValueError("`Inventory.key`, `paper` and `citation` must be non-empty")
        for name in ("notation", "claim_sweeps", "inner_sweeps"):
            object.__setattr__(self, name, dict(getattr(self, name)))
            _check_variables(f"{self.key} {name}", getattr(self, name).values(), unique=False)
        results = tuple(self.results)
        object.__setattr__(self, "results", results)
        ids = [r.id for r in results]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"inventory {self.key}: duplicate result ids {dup}")
        stray = [i for i in ids if not i.startswith(self.key + ".")]
        if stray:
            raise ValueError(f"inventory {self.key}: result ids must start with "
                             f"'{self.key}.', got {stray}")

    def source(self, result: Result) -> str:
        """``"Authors, venue year, <where>"``."""
        return f"{self.citation}, {result.where}"
