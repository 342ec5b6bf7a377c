"""AFBO's inner loop: Lemma 4.2's tracking inequality, in the inner steps ``K`` and the step
``β``, under the algorithm's own inner-loop delays — Li, Zhu, Gong, Mao & Zhou, WiOpt 2024,
Lemma 4.2, §IV.C.

**What is measured.**  One outer round of AFBO from ``(x^t, y^t)`` with ``x^t = x*`` and
``y^t = y*(x^t) + 50w`` (``w`` the slowest eigenvector of the mean ``∇²_{yy}g``, where the
contraction factor is tightest): ``K`` inner steps of ``β`` on the server's table of the
clients' most recent aligned gradients, each client updating under ``BoundedDelay(3)`` (the
first inner step fills the table), gradient noise ``σ = 1``.  The value is
``‖y^{t+1} − y*(x^t)‖²`` per replicate; the bound is the lemma's right-hand side
``4(σ_g² + σ_{g,1}²)Kβ² + (1 − βμ_g)^K‖y^t − y*(x^t)‖²`` (registered ``afbo.lemma42``) with the
instance's ``σ_g²`` (heterogeneity over the radius-10 ball), ``σ_{g,1}² = σ²``, ``μ_g``.  The
lemma has no delay term; the claims check it under the delays AFBO runs with.  Along ``w`` the
squared error contracts by about ``(1 − βμ_g)^{2K}`` against the lemma's ``(1 − βμ_g)^K``, so
the ratio is tightest at ``K = 1`` (≈ 0.84 at ``β = 0.99/(2ℓ_{g,1})``) and at small ``β``
(≈ 0.96 at ``β_max/16``, ``K = 4``).
"""

from __future__ import annotations

import functools

import numpy as np
import sympy as sp

from bilevel_theory import rates, run
from bilevel_theory.afbo import BoundedDelay

from ...claim import Condition, Mutant, per_budget
from ...kit import law, lower_level_conditions, per_replicate, slow_direction
from .common import DELAY, P, problem

OFFSET = 50.0       # ‖y^t − y*(x^t)‖ along the slowest direction: the contraction term leads
STEP_FRACTION = 0.99  # β = 0.99/(2ℓ_{g,1}): Lemma 4.2's cap β < 1/(2ℓ_{g,1}) is strict
K_STEP = 4          # inner steps of the β-sweep (K ≥ 2: the delays act from the second step)
OUTER_STEP = 1e-3   # the round's outer step (y^{t+1} is computed before it)
LEMMA42 = rates.BOUNDS["afbo.lemma42"]


@functools.cache
def _start() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(x^t, y*(x^t), y^t)`` on the 4-client population: ``x^t = x*``, ``y^t = y* + 50w``."""
    prob = problem()
    x = np.asarray(prob.x_star, float)
    ys = np.asarray(prob.y_star(x), float)
    return x, ys, ys + OFFSET * slow_direction(prob)


def _beta_max() -> float:
    return 1.0 / (2.0 * problem().constants["ell_g1"])


@functools.cache
def _rhs():
    """``afbo.lemma42`` as a function of ``(K, β, μ_g, D_y, σ_g, σ_{g,1})``."""
    names = ("K", "beta", "mu", "D_y", "sigma_g", "sigma_g1")
    return sp.lambdify([LEMMA42.symbol(n) for n in names], LEMMA42.expr)


def lemma42_bound(K: int, beta: float) -> float:
    """Lemma 4.2's right-hand side at the claims' start (``afbo.lemma42`` evaluated)."""
    c = problem().constants
    x, ys, y0 = _start()
    return float(_rhs()(K, beta, c["mu_g"], float((y0 - ys) @ (y0 - ys)),
                        c["sigma_g2"] ** 0.5, c["sigma_g12"] ** 0.5))


def lemma42(K: int, beta: float, replicates: int, seed: int, backend: str, *,
            executed: int | None = None, step_factor: float = 1.0) -> dict:
    """One AFBO round with ``K`` inner steps of ``β`` from :func:`_start`: ``value`` =
    ``‖y^{t+1} − y*(x^t)‖²``, ``bound`` = :func:`lemma42_bound`.  Mutants: ``executed`` inner
    steps run instead of ``K`` (0: the loop does nothing, ``y^{t+1} = y^t``); steps
    ``step_factor·β`` taken while the bound is evaluated at ``β``."""
    x, ys, y0 = _start()
    steps = int(K) if executed is None else int(executed)
    if steps == 0:
        value = np.full(replicates, float((y0 - ys) @ (y0 - ys)))
    else:
        tr = run("afbo", problem(), rounds=1, replicates=replicates, seed=seed,
                 backend=backend, x0=x, y0=y0, inner_steps=steps,
                 inner_step=step_factor * float(beta), outer_step=OUTER_STEP,
                 delay=BoundedDelay(DELAY))
        value = ((tr.y[:, 1] - ys) ** 2).sum(axis=-1)
    return {"value": value, "bound": per_replicate(lemma42_bound(int(K), float(beta)),
                                                   replicates),
            "beta": per_replicate(float(beta), replicates)}


def lemma42_vs_K(K, replicates, seed, backend="numpy", *, off_by_one: bool = False):
    """Lemma 4.2 with ``K`` swept at ``β = 0.99/(2ℓ_{g,1})`` (``off_by_one``: ``K − 1`` steps
    executed, the bound at ``K``, a mutant)."""
    return lemma42(int(K), STEP_FRACTION * _beta_max(), replicates, seed, backend,
                   executed=int(K) - 1 if off_by_one else None)


def lemma42_vs_step(fraction, replicates, seed, backend="numpy", *, step_factor: float = 1.0):
    """Lemma 4.2 at ``K = 4`` with ``β = fraction/(2ℓ_{g,1})`` swept (``fraction < 1``)."""
    return lemma42(K_STEP, float(fraction) * _beta_max(), replicates, seed, backend,
                   step_factor=step_factor)


# ============================================================================ conditions
def _conditions(fraction_of) -> tuple[Condition, ...]:
    """Lemma 4.2's hypotheses on the population: ``μ_g > 0``, ``‖∇²_{yy}g_i‖ ≤ ℓ_{g,1}`` and
    the step cap ``β < 1/(2ℓ_{g,1})`` (AFBO-R12) with ``β = fraction_of(v)·β_max``; the delays
    are bounded by construction (``BoundedDelay(3)``, Assumption 4.6)."""
    return (
        *lower_level_conditions(problem(), "g_i μ_g-strongly convex in y, μ_g > 0 (Assumption "
                                "4.2)", "‖∇²_{yy}g_i‖ ≤ ℓ_{g,1} (Assumption 4.1)"),
        Condition("β_{t,k} < 1/(2ℓ_{g,1}) (Lemma 4.2; AFBO-R12)",
                  lambda v: fraction_of(v) * _beta_max(), lambda v: _beta_max(), relation="<"),
    )


# ============================================================================ claims
_STATEMENT = (r"\mathbb{E}\|y^{t+1} - y^*(x^t)\|^2 \leq 4(\sigma_g^2 + \sigma_{g,1}^2)"
              r"\sum_k\beta_{t,k}^2 + \prod_k(1 - \beta_{t,k}\mu_g)\mathbb{E}\|y^t - y^*(x^t)\|^2")
_QUANTITY = r"\mathbb{E}\|y^{t+1} - y^*(x^t)\|^2"
_SCHEDULE = (f"one AFBO round on the 4-client population (κ_g ≈ 3.03, σ = 1) from x^t = x*, "
             f"y^t = y*(x^t) + {OFFSET:g}w (w the slowest eigenvector of the mean ∇²_{{yy}}g), "
             f"BoundedDelay({DELAY}) inner and outer, every E_i = 1; σ_g² the instance's "
             "heterogeneity (sup over the radius-10 ball), σ_{g,1}² = σ²")

CLAIMS = [
    P.claim(
        "inner_loop_lemma42_vs_K", role="confirmation", source=P.cite("Lemma 4.2 (in K)"),
        statement=_STATEMENT, kind="bounded_by", variable="K", quantity=_QUANTITY,
        measure=lemma42_vs_K, grid=per_budget([1, 2, 4, 8, 16], [1, 2, 3, 4, 6, 8, 12, 16],
                                              [1, 2, 3, 4, 6, 8, 12, 16, 24, 32]),
        replicates=per_budget(64, 256, 1024),
        law=law(rates.law_for(LEMMA42, "bound")), tolerance=0.0,
        mutants=(Mutant("off_by_one", "the inner loop executes K − 1 steps while the bound "
                        "counts K: at K = 1 nothing moves and ‖y^t − y*‖² exceeds (1 − "
                        "βμ_g)‖y^t − y*‖² plus the variance term", {"off_by_one": True},
                        kind="inner_loop"),),
        schedule=f"{_SCHEDULE}; β = {STEP_FRACTION:g}/(2ℓ_{{g,1}}), K swept",
        conditions=_conditions(lambda v: STEP_FRACTION), touches=("AFBO-R12",)),
    P.claim(
        "inner_loop_lemma42_vs_step", role="confirmation",
        source=P.cite("Lemma 4.2 (in β)"),
        statement=_STATEMENT, kind="bounded_by", variable=r"\beta/\beta_{\max}",
        quantity=_QUANTITY, measure=lemma42_vs_step,
        grid=per_budget([1 / 16, 1 / 8, 1 / 4, 1 / 2, STEP_FRACTION],
                        [1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 3 / 4, STEP_FRACTION],
                        [1 / 64, 1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 3 / 4, STEP_FRACTION]),
        replicates=per_budget(64, 256, 1024),
        law=law(rates.law_for(LEMMA42, "bound")), tolerance=0.0,
        mutants=(Mutant("step_quarter", "the inner loop takes steps β/4 while the bound is "
                        "evaluated at β: the contraction (1 − βμ_g)^K is not achieved",
                        {"step_factor": 0.25}, kind="schedule"),),
        schedule=f"{_SCHEDULE}; K = {K_STEP}, β = fraction·β_max with β_max = 1/(2ℓ_{{g,1}})",
        conditions=_conditions(float), touches=("AFBO-R12",)),
]
