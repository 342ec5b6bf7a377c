"""Building blocks for claims modules: what every paper's claims need, written once.

A paper's claims module (a module of ``verify/claims/<paper>/``, or a third-party package's) does::

    from bilevel_theory.verify.kit import PaperClaims, law, per_replicate, ledger_totals

    P = PaperClaims("fednest")                       # id prefix, paper name, citation
    CLAIMS = [
        P.claim("bilevel_rate", source=P.cite("Cor. 3.1"), law=law("fednest.cor31", "exponent",
                "K"), mutants=(Mutant(...),), ...),
    ]

:data:`PAPERS` holds the five papers' citations ("Authors, venue year", arXiv id); a new paper
adds an entry with :func:`register_paper` (or passes ``citation=`` to :class:`PaperClaims`),
with its readings (:data:`READINGS`) and the module of its bounds when it is a plug-in.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import brentq

from .claim import Claim, Condition, Law, per_budget


@dataclass(frozen=True)
class Paper:
    """A source paper: ``key`` (the claim-id prefix), a short ``name`` for tables, the
    ``citation`` ("Authors, venue year") and its ``arxiv`` id (``""`` when none)."""

    key: str
    name: str
    citation: str
    arxiv: str = ""

    def cite(self, result: str, tag: str = "[TEXT]") -> str:
        """``"Tarzanagh et al., ICML 2022 (arXiv:2205.02215), Thm 3.1 [TEXT]"``: a claim's
        ``source``.  ``tag`` is ``[TEXT]`` (stated in the paper) or ``[INFERRED]``
        (reconstructed: see ``docs/papers.md``)."""
        where = f"{self.citation} (arXiv:{self.arxiv})" if self.arxiv else self.citation
        return f"{where}, {result} {tag}".strip()


PAPERS: dict[str, Paper] = {}
#: reading id → its text, for the papers registered with ``readings`` (a plug-in's: the
#: built-in papers' readings are in ``docs/papers/<key>.md``)
READINGS: dict[str, str] = {}
_READINGS_OF: dict[str, tuple[str, ...]] = {}  # paper key → its reading ids


def register_paper(key: str, name: str, citation: str, arxiv: str = "", *,
                   readings: Mapping[str, str] | None = None,
                   bounds: str | None = None) -> Paper:
    """Add (or replace) a paper in :data:`PAPERS`; returns it.

    ``readings``: ``{id: text}``, the readings a plug-in takes of its paper (the ids its
    claims' ``touches`` name, e.g. ``"TOY-R1"``), kept in :data:`READINGS` for ``show`` and
    the reports.  ``bounds``: the name of a module defining ``bounds() -> list[Bound]`` (its
    theorems' bounds, for ``kit.law``), added with ``rates.register_bounds`` and imported
    only when a bound is first read.  Neither imports the plug-in's modules now, so a plug-in
    can call this from its package's ``__init__`` without importing its claims."""
    for label, value in (("key", key), ("name", name), ("citation", citation)):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"`{label}` must be a non-empty string, got {value!r}")
    readings = dict(readings or {})
    bad = [k for k, v in readings.items() if not (isinstance(k, str) and k.strip()
                                                  and isinstance(v, str) and v.strip())]
    if bad:
        raise ValueError(f"`readings` must map reading ids to their texts (non-empty "
                         f"strings); got {bad[0]!r}: {readings[bad[0]]!r}")
    taken = {r: k for k, ids in _READINGS_OF.items() if k != key for r in ids}
    clash = sorted(r for r in readings if r in taken)
    if clash:
        raise ValueError(f"`readings` ids already registered by paper {taken[clash[0]]!r}: "
                         f"{clash}")
    if bounds is not None and (not isinstance(bounds, str) or not bounds.strip()):
        raise ValueError(f"`bounds` must be a module name (it defines bounds()), got "
                         f"{bounds!r}")
    if bounds is not None:
        from bilevel_theory import rates  # noqa: PLC0415

        rates.register_bounds(bounds)
    for r in _READINGS_OF.pop(key, ()):
        READINGS.pop(r, None)
    READINGS.update(readings)
    _READINGS_OF[key] = tuple(readings)
    PAPERS[key] = Paper(key, name, citation, arxiv)
    return PAPERS[key]


def reading_paper(reading_id: str) -> Paper | None:
    """The paper that registered reading ``reading_id`` (``None``: no paper did)."""
    key = next((k for k, ids in _READINGS_OF.items() if reading_id in ids), None)
    return PAPERS.get(key) if key is not None else None


register_paper("gao", "Gao 2022", "Gao, arXiv preprint 2022", "2204.13299")
register_paper("fedmbo", "FedMBO 2023", "Huang, Zhang & Ji, ICML 2023", "2302.05412")
register_paper("memfbo", "MemFBO 2025", "Yang, Xiao, Ma & Ji, AAAI 2025")
register_paper("fednest", "FedNest 2022", "Tarzanagh, Li, Thrampoulidis & Oymak, ICML 2022",
               "2205.02215")
register_paper("afbo", "AFBO", "Li, Zhu, Gong, Mao & Zhou, WiOpt 2024")


class PaperClaims:
    """A claim factory for one paper: ``claim(name, **fields)`` builds ``Claim(id=
    f"{key}.{name}", paper=<name>, **fields)``; ``cite(result, tag)`` gives a ``source``."""

    def __init__(self, key: str, paper: Paper | None = None):
        if paper is None:
            if key not in PAPERS:
                raise ValueError(f"unknown paper {key!r}: register it with "
                                 f"`register_paper` (known: {sorted(PAPERS)})")
            paper = PAPERS[key]
        self.key, self.paper = key, paper

    def cite(self, result: str, tag: str = "[TEXT]") -> str:
        return self.paper.cite(result, tag)

    def claim(self, name: str, **fields: Any) -> Claim:
        return Claim(id=f"{self.key}.{name}", paper=self.paper.name, **fields)


def law(prediction_or_bound: Any, kind: str | None = None, var: str | None = None,
        **kw: Any) -> Law:
    """A :class:`~bilevel_theory.rates.Law` (re-exported as ``verify.claim.Law``): given one,
    or derived from a registered bound name (or ``rates.Bound``) with
    ``rates.law_for(bound, kind, var, **kw)`` (cached on disk: ``bilevel_theory.law_cache.derived``)."""
    from bilevel_theory.law_cache import derived  # noqa: PLC0415

    p = prediction_or_bound
    if kind is not None:
        return derived(p, kind, var, **kw)
    return p if isinstance(p, Law) else Law(*p.as_tuple())


def per_replicate(value: float, replicates: int) -> np.ndarray:
    """``value`` repeated once per replicate (a metric that is the same for every run)."""
    return np.full(int(replicates), float(value))


LEDGER_TOTALS = ("rounds", "grad_calls", "hvp_calls", "jvp_calls")


def ledger_totals(trace: Any, fields: Iterable[str] = LEDGER_TOTALS) -> dict[str, np.ndarray]:
    """A run's ledger totals as per-replicate metrics (the ledger is a per-run mean)."""
    totals = trace.ledger.totals()
    return {k: per_replicate(totals[k], trace.replicates) for k in fields}


def lower_level_conditions(prob_of: Any, strong: str, smooth: str, ell_of: Any = None,
                           ell_note: str = "") -> tuple[Condition, Condition]:
    """The two hypotheses every Neumann-series estimator rests on, on the instance
    ``prob_of(x)`` at sweep value ``x``: ``μ_g > 0`` (``strong``, the paper's quoted assumption)
    and every client's ``‖∇²_{yy}g_i‖ ≤ ℓ`` (``smooth``), with ``ℓ = ell_of(x)`` (default
    ``ℓ_{g,1}`` of the instance).  ``prob_of`` may be an instance (the same at every ``x``)."""
    of = prob_of if callable(prob_of) else (lambda x: prob_of)
    ell = ell_of or (lambda x: of(x).constants["ell_g1"])
    return (Condition(strong, lambda x: of(x).constants["mu_g"], 0.0, relation=">",
                      note="μ_g = min_i λ_min(∇²_{yy}g_i) on the claim's instance"),
            Condition(smooth, lambda x: of(x).constants["L_yy"], ell,
                      note=ell_note or "max_i λ_max(∇²_{yy}g_i) against ℓ"))


__all__ = ["LEDGER_TOTALS", "PAPERS", "READINGS", "Paper", "PaperClaims", "law", "ledger_totals",
           "lower_level_conditions", "per_budget", "per_replicate", "reading_paper", "register_paper",
           "fast_direction", "kappa_log_condition", "kappa_log_steps", "slow_direction"]


def kappa_log_steps(K: float, kappa_g: float) -> int:
    """``N = ⌈κ_g log K⌉`` (at least 1): the Neumann truncation "N ∝ κ_g log K" with constant 1
    (FedNest Cor 3.1, FEDNEST-R3; FedMBO Cor 1's ``N = Ω(κ_g log K)``)."""
    return max(1, math.ceil(kappa_g * math.log(float(K)) - 1e-9))


def kappa_log_condition(statement: str, kappa_g: float) -> Condition:
    """The condition ``N ≥ κ_g log K`` of a claim that runs :func:`kappa_log_steps` at every
    ``K`` of its grid (``statement``: the paper's words for it), the rounded ``N`` against the
    unrounded ``κ_g log K``."""
    return Condition(statement, lambda K: kappa_log_steps(K, kappa_g),
                     lambda K: kappa_g * math.log(K), relation=">=",
                     note="the schedule's N against the unrounded κ_g log K")


def slow_direction(problem: Any) -> np.ndarray:
    """The unit bottom eigenvector of ``Ā = mean_i ∇²_{yy}g_i`` of ``problem``: the direction
    along which the lower level contracts slowest (a Neumann series' slowest mode, the tight
    direction of a tracking bound)."""
    return np.linalg.eigh(problem.host.closed_form.A)[1][:, 0]


def fast_direction(problem: Any) -> np.ndarray:
    """The unit top eigenvector of ``Ā = mean_i ∇²_{yy}g_i`` of ``problem``: the direction
    along which a lower-level step (a stale one above all) overshoots first."""
    return np.linalg.eigh(problem.host.closed_form.A)[1][:, -1]


def knob_for(value_of: Any, target: float, *, name: str = "kappa", upper: float | None = None,
             what: str = "the family's value at knob 1") -> float:
    """The instance knob ``k ∈ (1, 4·target]`` with ``value_of(k) = target`` (``brentq`` to
    ``10⁻¹²``): how a κ-sweep sets a condition number of its instance family exactly.  The
    target is checked first: a number above ``value_of(1)`` (``what``) and at most ``upper``,
    else a ``ValueError`` naming the parameter ``name`` and the range."""
    lo = value_of(1.0 + 1e-9)
    if not (isinstance(target, int | float) and not isinstance(target, bool) and lo < target
            and (upper is None or target <= upper)):
        span = f"> {lo:.4g}" if upper is None else f"in ({lo:.4g}, {upper:g}]"
        raise ValueError(f"`{name}` must be {span} ({what}), got {target!r}")
    return brentq(lambda k: value_of(k) - target, 1.0 + 1e-9, 4.0 * target, xtol=1e-12)
