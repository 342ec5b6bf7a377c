"""The claim data model (DESIGN §7): a paper's stated result as data that can be checked.

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

KINDS = ("matches", "at_most", "geometric", "bounded_by", "exact", "contrast")
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
    """The ``full`` budget of a claim when a GPU runs it (DESIGN §7: "full: large client counts,
    GPU or a cluster"; issue #6: ``m = 10⁶`` clients, ``n`` up to ``10⁵``).

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
class Law:
    """What the theorem predicts for one claim, derived from a ``rates.py`` expression.

    Attributes:
        value: the predicted slope (``matches``/``at_most``/``contrast``: log–log exponent in
            the swept variable; ``geometric``: the log of the ratio per unit of the variable,
            i.e. the semilog slope; ``exact``: the count; ``bounded_by``: unused, ``nan``).
        latex: LaTeX of the bound (rendered in reports).
        derivation: one sentence on how ``value`` was derived (e.g. "leading exponent in K").
    """

    value: float
    latex: str
    derivation: str


@dataclass(frozen=True)
class Claim:
    """One executable claim (see the module docstring for ``measure``).

    Attributes:
        id: ``"<paper>.<name>"``, e.g. ``"fedmbo.phe_variance_vs_clients"``.
        paper: short paper name (``"FedMBO 2023"``).
        source: seed file and result, with its tag: ``"001_2f8be2fcf2864762.txt, Prop. 3 [TEXT]"``.
        statement: the result in LaTeX.
        kind: one of :data:`KINDS`.
        variable: the swept variable's name in the paper's notation (``"n"``, ``"K"``, ``"N"``).
        quantity: what is measured, in the paper's notation (a figure's y label).
        measure: the experiment at one sweep point.
        grid: sweep values per budget (``{"smoke": (...), "standard": (...), "full": (...)}``).
        replicates: independent runs per sweep point, per budget.
        law: the prediction.
        tolerance: allowed distance between measured slope and ``law.value`` (exponent units;
            for ``geometric``, in units of the log-ratio; ``0`` for ``exact``).
        expected: the verdict the toolkit expects; not ``holds`` only with ``reason``.
        reason: evidence and the mathematical reason when ``expected`` is not ``holds``.
        scale: ``loglog`` (power laws), ``semilog`` (geometric laws) or ``linear``.
        window: fit only sweep values in ``[lo, hi]`` (the asymptotic window), or ``None``.
        schedule: the hyperparameter schedule used, as the theorem prescribes it.
        touches: the ``[NOTE]``/``[INFERRED]`` items of PAPERS.md this claim depends on.
        max_width: widest confidence interval that still allows a verdict of ``holds``.
        gpu_scale: the ``full`` budget's larger plan on a GPU (:class:`GpuScale`), or ``None``;
            :meth:`for_backend` applies it.
        on_gpu: whether this is the GPU plan (set by :meth:`for_backend`, not by hand).
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

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id}: `kind` must be one of {KINDS}, got {self.kind!r}")
        if self.expected not in VERDICTS:
            raise ValueError(f"claim {self.id}: `expected` must be one of {VERDICTS}")
        if self.expected != "holds" and not self.reason:
            raise ValueError(f"claim {self.id}: an expected verdict other than 'holds' needs "
                             "a `reason` with the evidence")
        if self.scale not in SCALES:
            raise ValueError(f"claim {self.id}: `scale` must be one of {SCALES}")
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
