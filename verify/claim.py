"""The claim data model: a paper's stated result as data that can be checked.

A :class:`Claim` names its source, its statement, a ``measure`` function that runs the
experiment at one sweep point, the swept variable and its grid per budget, the assertion kind,
the :class:`Law` predicted by ``bilevel_theory.rates`` and a tolerance, and the **expected
verdict** with its reason when that is not ``holds``.

``measure(value, replicates, seed, backend) -> dict`` runs ``replicates`` independent runs at
sweep value ``value`` (seeded by ``seed``, derived per sweep point by the runner) and returns
per-replicate arrays of shape ``(replicates,)``:

* ``"value"``: the measured quantity (always);
* ``"contrast"``: for ``kind="contrast"``, the second algorithm's quantity;
* ``"bound"``: for ``kind="bounded_by"``, the theorem's explicit bound at this point;
* any ledger totals (``"rounds"``, ``"hvp_calls"`` …) or other diagnostics, kept in the store.

Results-store rows (one JSON object per line of ``results.jsonl``, long format, one row per
replicate, all rows of a sweep point appended in one atomic write):
``{"claim", "budget", "point" (index), "value" (sweep value), "replicate", "metrics"
{name: float}, "backend", "versions", "config_hash", "seed", "seconds"}``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from bilevel_theory.law import Law  # what the theorem predicts (rates.Law is the same)

KINDS = ("matches", "at_most", "geometric", "bounded_by", "exact", "contrast")
#: What a claim is for: ``confirmation`` (the paper's statement, in a test that can fail),
#: ``finding`` (the paper's statement is expected ``violated``, with the evidence),
#: ``defect`` (a defect of the authors' released code, not of the paper's statement: the
#: paper's result applied to the code is expected ``violated``, and a mutant that puts the
#: paper's algorithm in its place must give ``holds``, as for a finding) or ``control`` (an
#: identity or implementation check; it says nothing about the paper).
ROLES = ("confirmation", "finding", "defect", "control")
#: Roles whose claims expect ``violated`` (the paper's statement, or its code, fails).
FAILING_ROLES = ("finding", "defect")
#: The verdict a claim of each role must reach under one of its mutants.
MUTANT_VERDICT = {"confirmation": "violated", "finding": "holds", "defect": "holds"}
MUTANT_SEP = "@"
#: What a mutant changes, so that a report can say which kind of error each claim catches:
#: ``indirect_term`` (the implicit-gradient term dropped or biased), ``step_exponent`` (a wrong
#: exponent in a step or schedule), ``truncation`` (an off-by-one or wrong Neumann truncation),
#: ``noise_averaging`` (noise not averaged over clients or samples), ``neumann_scaling`` (a
#: wrong scaling of the Neumann series), ``estimator`` (another plausible estimator bug),
#: ``schedule`` (a schedule break that is not a plain exponent error), ``communication`` (an
#: extra or missing exchange), ``bound`` (the stated bound changed, not the method),
#: ``repair`` (a finding's correction: the statement the evidence supports).
MUTANT_KINDS = ("indirect_term", "inner_loop", "step_exponent", "truncation", "noise_averaging",
                "neumann_scaling", "estimator", "schedule", "communication", "bound", "repair")
RELATIONS = ("<=", "<", ">=", ">", "==")
VERDICTS = ("holds", "violated", "inconclusive")
BUDGETS = ("smoke", "standard", "full")
SCALES = ("loglog", "semilog", "linear")

Measure = Callable[[float, int, int, str], Mapping[str, np.ndarray]]


def per_budget(smoke, standard, full) -> dict[str, Any]:
    """``{"smoke": …, "standard": …, "full": …}`` for a claim's ``grid`` (sequences become
    tuples) or ``replicates`` (numbers stay numbers)."""
    def norm(v):
        return tuple(v) if hasattr(v, "__iter__") else v
    return {"smoke": norm(smoke), "standard": norm(standard), "full": norm(full)}


#: The backend on which the ``full`` budget switches to a claim's :class:`GpuScale`.
GPU_BACKEND = "cupy"


@dataclass(frozen=True)
class GpuScale:
    """The ``full`` budget of a claim when a GPU runs it: large client counts
    (e.g. ``m = 10⁶`` clients, ``n`` up to ``10⁵``) that a CPU run cannot reach.

    Attributes:
        grid: the sweep values replacing ``grid["full"]``.
        replicates: replacing ``replicates["full"]``.
        measure_kwargs: keywords passed to the claim's ``measure`` (e.g. ``{"clients": 10**6}``).
    """

    grid: Sequence[float]
    replicates: int
    measure_kwargs: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "grid", tuple(self.grid))
        if len(self.grid) < 2:
            raise ValueError(f"`GpuScale.grid` needs at least 2 sweep values, got {self.grid}")
        if isinstance(self.replicates, bool) or not isinstance(self.replicates, int) or (
                self.replicates < 1):
            raise ValueError(f"`GpuScale.replicates` must be a positive integer, got "
                             f"{self.replicates!r}")


@dataclass(frozen=True)
class Mutant:
    """A minimal change under which a claim's verdict must flip: the claim's power.

    For a ``confirmation`` the change makes the paper's statement false (e.g. the clients'
    noises not averaged, a fixed-truncation Neumann series, an extra aggregation per round), and
    the claim must then say ``violated``; for a ``finding`` the change repairs the paper's error
    (e.g. the corrected constant), and the claim must then say ``holds``.

    Attributes:
        name: identifier (letters, digits, ``_``); the mutated claim's id is ``CLAIM@name``.
        change: one sentence: what is changed, and why the statement is then false (or true).
        measure_kwargs: keywords passed to the claim's ``measure`` to apply the change.
        kind: what the change is, one of :data:`MUTANT_KINDS` (``""``: not classified yet).
    """

    name: str
    change: str
    measure_kwargs: Mapping[str, Any] = field(default_factory=dict)
    kind: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.replace("_", "").isalnum():
            raise ValueError(f"`Mutant.name` must be letters, digits and '_', got {self.name!r}")
        if not self.change:
            raise ValueError(f"mutant {self.name}: `change` must say what is changed")
        if self.kind and self.kind not in MUTANT_KINDS:
            raise ValueError(f"mutant {self.name}: `kind` must be one of {MUTANT_KINDS}, got "
                             f"{self.kind!r}")
        object.__setattr__(self, "measure_kwargs", dict(self.measure_kwargs))


@dataclass(frozen=True)
class Condition:
    """One hypothesis of the claim's theorem on its hyperparameters or instance (a step cap
    such as η ≤ a₁, a schedule, N, τ, participation), evaluated at every sweep point.

    Attributes:
        statement: the hypothesis as the paper gives it, with its source
            (``"η ≤ a₁ (Thm 4.1)"``).
        lhs, rhs: ``f(x) -> float`` at sweep value ``x`` (the claim's instance and schedule);
            a constant side may be a number.
        relation: ``"<="``, ``"<"``, ``">="``, ``">"`` or ``"=="`` (``==`` within 1e-9
            relative; the strict ones strictly, without slack).
        inside: whether the claim runs inside the condition (the default) or deliberately
            leaves it; a claim that leaves it says why in ``note``.
        note: where the numbers come from, or why the condition is left.
    """

    statement: str
    lhs: Callable[[float], float] | float
    rhs: Callable[[float], float] | float
    relation: str = "<="
    inside: bool = True
    note: str = ""

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise ValueError(f"condition {self.statement!r}: `relation` must be one of "
                             f"{RELATIONS}, got {self.relation!r}")
        if not self.inside and not self.note:
            raise ValueError(f"condition {self.statement!r}: a condition the claim leaves "
                             "needs a `note` saying why")

    def evaluate(self, x: float) -> tuple[float, float, bool]:
        """``(lhs, rhs, satisfied)`` at sweep value ``x``."""
        lhs = float(self.lhs(x) if callable(self.lhs) else self.lhs)
        rhs = float(self.rhs(x) if callable(self.rhs) else self.rhs)
        if self.relation == "<=":
            ok = lhs <= rhs * (1 + 1e-12) + 1e-300
        elif self.relation == "<":
            ok = lhs < rhs
        elif self.relation == ">=":
            ok = lhs >= rhs * (1 - 1e-12) - 1e-300
        elif self.relation == ">":
            ok = lhs > rhs
        else:
            ok = abs(lhs - rhs) <= 1e-9 * max(abs(lhs), abs(rhs), 1e-300)
        return lhs, rhs, bool(ok)

    def check(self, grid: Sequence[float]) -> dict[str, Any]:
        """The condition over a sweep grid: its worst point and whether it holds at every
        point (``{"statement", "relation", "holds", "inside", "worst_x", "lhs", "rhs",
        "failing_x", "note"}``)."""
        rows = [(float(x), *self.evaluate(float(x))) for x in grid]
        failing = [x for x, _, _, ok in rows if not ok]

        def slack(r):  # how close to (or how far past) the edge
            _, lhs, rhs, _ = r
            return (lhs - rhs) if self.relation == "<=" else (rhs - lhs) if (
                self.relation == ">=") else abs(lhs - rhs)
        worst = max(rows, key=slack)
        return {"statement": self.statement, "relation": self.relation,
                "holds": not failing, "inside": self.inside, "worst_x": worst[0],
                "lhs": worst[1], "rhs": worst[2], "failing_x": failing, "note": self.note}


@dataclass(frozen=True)
class Claim:
    """One executable claim (see the module docstring for ``measure``).

    Attributes:
        id: ``"<paper>.<name>"``, e.g. ``"fedmbo.phe_variance_vs_clients"``.
        paper: short paper name (``"FedMBO 2023"``).
        source: paper and result, with its tag (``kit.PaperClaims.cite``):
            ``"Huang, Zhang & Ji, ICML 2023 (arXiv:2302.05412), Prop. 3 [TEXT]"``.
        statement: the result in LaTeX.
        kind: one of :data:`KINDS`.
        variable: the swept variable's name in the paper's notation (``"n"``, ``"K"``, ``"N"``).
        quantity: what is measured, in the paper's notation (a figure's y label).
        measure: the experiment at one sweep point.
        grid: sweep values per budget (``{"smoke": (...), "standard": (...), "full": (...)}``),
            or one sequence of sweep values for every budget.
        replicates: independent runs per sweep point, per budget (or one integer for all).
        law: the prediction.
        tolerance: allowed distance between measured slope and ``law.value`` (exponent units;
            for ``geometric``, in units of the log-ratio; ``0`` for ``exact``).
        expected: the verdict the toolkit expects; not ``holds`` only with ``reason``.
        reason: evidence and the mathematical reason when ``expected`` is not ``holds``.
        scale: ``loglog`` (power laws), ``semilog`` (geometric laws) or ``linear``.
        window: fit only sweep values in ``[lo, hi]`` (the asymptotic window), or ``None``.
        schedule: the hyperparameter schedule used, as the theorem prescribes it.
        touches: the ids of the readings in ``docs/papers.md`` this claim depends on.
        role: one of :data:`ROLES` (default: ``confirmation`` when ``expected`` is ``holds``,
            ``finding`` when it is ``violated``, else ``control``).
        mutants: :class:`Mutant` s that the claim must catch (:meth:`under`); every
            confirmation and finding of the papers' catalogue declares at least one.
        window_reason: why ``window`` is what it is, decided before the data: either derived
            from the law (set ``window_derived``) or a written reason.  A window that is not
            derived is checked against the full grid: if the two fits disagree the verdict is
            ``inconclusive``.
        window_derived: ``window`` comes from the law (``rates.crossovers`` and the like).
        max_width: widest confidence interval that still allows a verdict of ``holds``.
        gpu_scale: the ``full`` budget's larger plan on a GPU (:class:`GpuScale`), or ``None``;
            :meth:`for_backend` applies it.
        on_gpu: whether this is the GPU plan (set by :meth:`for_backend`, not by hand).
        conditions: the theorem's hypotheses (:class:`Condition`), checked on the claim's
            instance at every sweep point (:meth:`check_conditions`).
        conditions_note: why no condition is declared, where none is (a count of the
            exchanges an algorithm executes, an experiment the paper runs without a theorem,
            a closed-form identity); shown where the conditions would be.
    """

    id: str
    paper: str
    source: str
    statement: str
    kind: str
    variable: str
    quantity: str
    measure: Measure
    grid: Mapping[str, Sequence[float]]
    replicates: Mapping[str, int]
    law: Law
    tolerance: float
    expected: str = "holds"
    reason: str = ""
    scale: str = "loglog"
    window: tuple[float, float] | None = None
    schedule: str = ""
    touches: tuple[str, ...] = ()
    max_width: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    gpu_scale: GpuScale | None = None
    on_gpu: bool = False
    role: str = ""
    mutants: tuple[Mutant, ...] = ()
    window_reason: str = ""
    window_derived: bool = False
    mutant_of: str | None = None
    conditions: tuple[Condition, ...] = ()
    conditions_note: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id}: `kind` must be one of {KINDS}, got {self.kind!r}")
        if self.expected not in VERDICTS:
            raise ValueError(f"claim {self.id}: `expected` must be one of {VERDICTS}")
        if self.expected != "holds" and not self.reason:
            raise ValueError(f"claim {self.id}: an expected verdict other than 'holds' needs "
                             "a `reason` with the evidence")
        if not self.role:
            object.__setattr__(self, "role", {"holds": "confirmation", "violated": "finding"}
                               .get(self.expected, "control"))
        if self.role not in ROLES:
            raise ValueError(f"claim {self.id}: `role` must be one of {ROLES}, got {self.role!r}")
        if self.mutant_of is None:
            if self.role == "confirmation" and self.expected != "holds":
                raise ValueError(f"claim {self.id}: a confirmation expects 'holds' (a claim "
                                 "expected otherwise is a finding or a control)")
            if self.role in FAILING_ROLES and self.expected != "violated":
                raise ValueError(f"claim {self.id}: a {self.role} expects 'violated'")
        object.__setattr__(self, "mutants", tuple(self.mutants))
        object.__setattr__(self, "conditions", tuple(self.conditions))
        names = [m.name for m in self.mutants]
        if len(set(names)) != len(names):
            raise ValueError(f"claim {self.id}: duplicate mutant names {names}")
        if self.mutants and self.role == "control":
            raise ValueError(f"claim {self.id}: a control has no mutants (it does not test the "
                             "paper)")
        if self.scale not in SCALES:
            raise ValueError(f"claim {self.id}: `scale` must be one of {SCALES}")
        # one grid (a sequence) or one replicate count serves every budget
        if hasattr(self.grid, "__iter__") and not isinstance(self.grid, Mapping | str | bytes):
            object.__setattr__(self, "grid", per_budget(self.grid, self.grid, self.grid))
        reps = self.replicates
        if isinstance(reps, int | np.integer) and not isinstance(reps, bool):
            object.__setattr__(self, "replicates", per_budget(reps, reps, reps))
        if not isinstance(self.grid, Mapping) or not isinstance(self.replicates, Mapping):
            raise ValueError(f"claim {self.id}: `grid` must be a sequence of sweep values or a "
                             "mapping budget -> sequence, and `replicates` an integer or a "
                             "mapping budget -> integer")
        for budget in BUDGETS:
            if budget not in self.grid or budget not in self.replicates:
                raise ValueError(f"claim {self.id}: `grid` and `replicates` need budget "
                                 f"{budget!r}")
        if self.on_gpu and self.gpu_scale is None:
            raise ValueError(f"claim {self.id}: `on_gpu` needs a `gpu_scale`")
        # The GPU plan, built once so that ``for_backend`` returns the same object every time
        # (the runner sends a catalogue claim to workers by id when it is that object).
        on_gpu = self
        if self.gpu_scale is not None and not self.on_gpu:
            g = self.gpu_scale
            on_gpu = replace(self, grid={**self.grid, "full": g.grid},
                             replicates={**self.replicates, "full": g.replicates}, on_gpu=True)
        object.__setattr__(self, "_on_gpu", on_gpu)
        object.__setattr__(self, "_mutated", {})

    def under(self, name: str) -> Claim:
        """This claim with mutant ``name`` applied: id ``ID@name``, the mutant's keywords
        passed to ``measure``, and the expected verdict flipped (:data:`MUTANT_VERDICT`).
        The same object is returned every time (workers resolve it by id)."""
        cache = self._mutated  # type: ignore[attr-defined]
        if name not in cache:
            by_name = {m.name: m for m in self.mutants}
            if name not in by_name:
                raise KeyError(f"claim {self.id} has no mutant {name!r} (has {sorted(by_name)})")
            m = by_name[name]
            measure = (functools.partial(self.measure, **m.measure_kwargs) if m.measure_kwargs
                       else self.measure)
            cache[name] = replace(
                self, id=f"{self.id}{MUTANT_SEP}{name}", measure=measure,
                expected=MUTANT_VERDICT[self.role], reason=f"mutant: {m.change}", mutants=(),
                gpu_scale=None, on_gpu=False, mutant_of=self.id)
        return cache[name]

    def check_conditions(self, budget: str = "smoke") -> list[dict[str, Any]]:
        """Each of :attr:`conditions` over the ``budget`` grid (:meth:`Condition.check`); a
        condition that fails where the claim says it runs inside is reported as such, never
        hidden."""
        return [c.check(self.grid[budget]) for c in self.conditions]

    def mutated(self) -> list[Claim]:
        """Every mutant of this claim (:meth:`under`), in declaration order."""
        return [self.under(m.name) for m in self.mutants]

    def for_backend(self, backend: str) -> Claim:
        """This claim as run on ``backend``: on ``"cupy"`` its ``full`` budget is the
        :class:`GpuScale` plan (when it has one); otherwise the claim itself."""
        return self._on_gpu if backend == GPU_BACKEND else self  # type: ignore[attr-defined]

    def measure_for(self, budget: str) -> Measure:
        """The ``measure`` run at ``budget``: with the :class:`GpuScale` keywords at ``full``
        when this is the GPU plan (:meth:`for_backend`), else ``measure`` itself."""
        if self.on_gpu and budget == "full" and self.gpu_scale.measure_kwargs:
            return functools.partial(self.measure, **self.gpu_scale.measure_kwargs)
        return self.measure
