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
instance's ``σ_g²`` (heterogeneity over the radius-10 ball; for the delay claim, whose stale
steps overshoot, over the ball that holds its round), ``σ_{g,1}² = σ²``, ``μ_g``.  The
lemma has no delay term; the claims check it under the delays AFBO runs with.  Along ``w`` the
squared error contracts by about ``(1 − βμ_g)^{2K}`` against the lemma's ``(1 − βμ_g)^K``, so
the ratio is tightest at ``K = 1`` (≈ 0.84 at ``β = 0.99/(2ℓ_{g,1})``) and at small ``β``
(≈ 0.96 at ``β_max/16``, ``K = 4``).

**In the inner delay** (``afbo.inner_loop_lemma42_vs_delay``, a finding, AFBO-L4).  With every
client uploading every ``ρ`` inner steps together (``Periodic``: Assumption 4.6 with
``ρ_M = ρ``), the server applies one stored gradient ``ρ`` times, and along the top eigenvector
``v`` of the mean ``∇²_{yy}g`` (eigenvalue ``λ_max``) the error is multiplied by
``1 − ρβλ_max`` per upload: at ``β = 0.99/(2ℓ_{g,1})`` it grows once ``ρβλ_max > 2``.  The
round starts at ``y* + 50v``.

**The variance part** (``afbo.inner_noise_vs_*``): one synchronous round from ``y^t = y*(x^t)``,
where the contraction part is zero and the value is Thm 4.1(a)'s first term of ``C`` (AFBO-R16),
in ``m``, in ``E^t`` and, at Cor. 4.1's coupling ``Kβ²`` fixed, in ``K`` (Remark 2, AFBO-R18).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp

from bilevel_theory import rates, run
from bilevel_theory.afbo import BoundedDelay, Periodic
from bilevel_theory.law_cache import cached_derivation

from ...claim import Condition, Law, Mutant, per_budget
from ...kit import (
    fast_direction,
    law,
    ledger_totals,
    lower_level_conditions,
    per_replicate,
    slow_direction,
)
from .common import DELAY, P, problem

OFFSET = 50.0       # ‖y^t − y*(x^t)‖ along the slowest direction: the contraction term leads
STEP_FRACTION = 0.99  # β = 0.99/(2ℓ_{g,1}): Lemma 4.2's cap β < 1/(2ℓ_{g,1}) is strict
K_STEP = 4          # inner steps of the β-sweep (K ≥ 2: the delays act from the second step)
OUTER_STEP = 1e-3   # the round's outer step (y^{t+1} is computed before it)
LEMMA42 = rates.BOUNDS["afbo.lemma42"]


K_DELAY = 8         # inner steps of the delay sweep: ρ ≤ K, so every period acts in the round
K_NOISE = 5         # inner steps of the noise sweeps in m and E^t (the rate claims' K)


@functools.cache
def _start(fast: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(x^t, y*(x^t), y^t)`` on the 4-client population: ``x^t = x*``, ``y^t = y* + 50w``
    (``fast``: ``y* + 50v``, :func:`fast_direction`)."""
    prob = problem()
    x = np.asarray(prob.x_star, float)
    ys = np.asarray(prob.y_star(x), float)
    d = fast_direction(prob) if fast else slow_direction(prob)
    return x, ys, ys + OFFSET * d


def _beta_max() -> float:
    return 1.0 / (2.0 * problem().constants["ell_g1"])


@functools.cache
def _rhs():
    """``afbo.lemma42`` as a function of ``(K, β, μ_g, D_y, σ_g, σ_{g,1})``."""
    names = ("K", "beta", "mu", "D_y", "sigma_g", "sigma_g1")
    return sp.lambdify([LEMMA42.symbol(n) for n in names], LEMMA42.expr)


PATH_MARGIN = 1.0  # added to the delay round's path radius: its noise moves y by < 0.2


def periodic_path_radius(K: int, beta: float, period: int) -> float:
    """The radius of a ball about 0 that holds the delay claim's round: ``(x*, y*(x*) + c_kv)``
    with ``c_0 = OFFSET`` and the noise-free periodic steps ``c_{k+1} = c_k − βλ_max c_s``
    (``s`` the last upload, a multiple of ``period``; the mean gradient at ``y*`` is 0), the
    largest ``|c_k|`` over the ``K`` steps, plus :data:`PATH_MARGIN` for the noise."""
    x, ys, _ = _start(True)
    lam = _lambda_max()
    c, stored, largest = OFFSET, OFFSET, OFFSET
    for k in range(int(K)):
        if k % int(period) == 0:
            stored = c
        c -= beta * lam * stored
        largest = max(largest, abs(c))
    return float(np.linalg.norm(np.concatenate([x, ys]))) + largest + PATH_MARGIN


def lemma42_bound(K: int, beta: float, fast: bool = False, period: int | None = None
                  ) -> float:
    """Lemma 4.2's right-hand side at the claims' start (``afbo.lemma42`` evaluated).  With a
    ``period`` (the delay claim, whose stale steps overshoot far outside the instance's
    radius-10 ball) ``σ_g²`` is the clients' spread of ``∇g_i`` over the ball that holds the
    round (:func:`periodic_path_radius`), as the lemma needs it where the gradients are taken;
    without, the instance's ``σ_g²`` (the radius-10 ball: smaller than the round's region, so
    the confirmations are checked against a tighter bound than the lemma's)."""
    c = problem().constants
    x, ys, y0 = _start(fast)
    sigma_g2 = c["sigma_g2"] if period is None else problem().heterogeneity_within(
        periodic_path_radius(K, beta, period))
    return float(_rhs()(K, beta, c["mu_g"], float((y0 - ys) @ (y0 - ys)),
                        sigma_g2 ** 0.5, c["sigma_g12"] ** 0.5))


def lemma42(K: int, beta: float, replicates: int, seed: int, backend: str, *,
            executed: int | None = None, step_factor: float = 1.0, period: int | None = None
            ) -> dict:
    """One AFBO round with ``K`` inner steps of ``β`` from :func:`_start`: ``value`` =
    ``‖y^{t+1} − y*(x^t)‖²``, ``bound`` = :func:`lemma42_bound`.  Mutants: ``executed`` inner
    steps run instead of ``K`` (0: the loop does nothing, ``y^{t+1} = y^t``); steps
    ``step_factor·β`` taken while the bound is evaluated at ``β``.  ``period``: inner uploads
    ``Periodic(period)`` for every client from ``y* + 50v`` (outer loop synchronous) instead of
    ``BoundedDelay(3)`` from ``y* + 50w``."""
    fast = period is not None
    x, ys, y0 = _start(fast)
    steps = int(K) if executed is None else int(executed)
    if steps == 0:
        value = np.full(replicates, float((y0 - ys) @ (y0 - ys)))
    else:
        delays = (dict(delay="sync", inner_delay=Periodic([int(period)] * problem().clients))
                  if fast else dict(delay=BoundedDelay(DELAY)))
        tr = run("afbo", problem(), rounds=1, replicates=replicates, seed=seed,
                 backend=backend, x0=x, y0=y0, inner_steps=steps,
                 inner_step=step_factor * float(beta), outer_step=OUTER_STEP, **delays)
        value = ((tr.y[:, 1] - ys) ** 2).sum(axis=-1)
    bound = lemma42_bound(int(K), float(beta), fast, None if period is None else int(period))
    return {"value": value, "bound": per_replicate(bound, replicates),
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


def lemma42_vs_delay(period, replicates, seed, backend="numpy", *,
                     delay_scaled: bool = False):
    """Lemma 4.2 at ``K = 8``, ``β = 0.99/(2ℓ_{g,1})`` with every client uploading every
    ``period`` inner steps (``delay_scaled``: the step ``β/ρ_M`` taken and the bound evaluated
    there, the repair)."""
    rho = int(period)
    beta = STEP_FRACTION * _beta_max() / (rho if delay_scaled else 1)
    return lemma42(K_DELAY, beta, replicates, seed, backend, period=rho)


def inner_noise(clients: int, local: int, replicates: int, seed: int, backend: str, *,
                step_factor: float = 1.0, aligned: bool = True, inner_steps: int = K_NOISE,
                beta: float | None = None) -> dict:
    """One synchronous AFBO round on ``clients`` clients (copies of the population: the same
    ``y*`` and constants at every ``m``) from ``x^t = x*``, ``y^t = y*(x^t)``: ``K = 5`` inner
    steps (``inner_steps``) of ``β = 0.99/(2ℓ_{g,1})`` (``beta``), each client's ``G_i`` the
    aligned mean of ``local`` gradients drawn at ``y^{t,k}`` (AFBO-I1).  ``value`` =
    ``‖y^{t+1} − y*(x^t)‖²``: the round starts at the solution, so this is Lemma 4.2's
    variance part alone; ``term`` = that part with Thm 4.1(a)'s ``1/(mE^t)``,
    ``4(σ_g² + σ_{g,1}²)Kβ²/(mE^t)`` (recorded).  Mutants: ``step_factor = m`` (the server
    sums the ``G_i``), ``aligned=False`` (the sum ``Σ_e``)."""
    m, E, K = int(clients), int(local), int(inner_steps)
    prob = problem(m)
    x = np.asarray(prob.x_star, float)
    ys = np.asarray(prob.y_star(x), float)
    beta = STEP_FRACTION * _beta_max() if beta is None else float(beta)
    tr = run("afbo", prob, rounds=1, replicates=replicates, seed=seed, backend=backend, x0=x,
             y0=ys, inner_steps=K, inner_step=step_factor * beta, outer_step=OUTER_STEP,
             delay="sync", local_iterations=E, aligned=aligned)
    c = prob.constants
    term = 4 * (c["sigma_g2"] + c["sigma_g12"]) * K * beta**2 / (m * E)
    return {"value": ((tr.y[:, 1] - ys) ** 2).sum(axis=-1),
            "term": per_replicate(term, replicates), **ledger_totals(tr, ("grad_calls",))}


def inner_noise_vs_clients(m, replicates, seed, backend="numpy", *, summed: bool = False):
    """:func:`inner_noise` with ``m`` clients swept, ``E^t = 1`` (``summed``: the server
    steps with ``Σ_iG_i``, i.e. ``mβ``, a mutant)."""
    return inner_noise(int(m), 1, replicates, seed, backend,
                       step_factor=float(m) if summed else 1.0)


def inner_noise_vs_local(E, replicates, seed, backend="numpy", *, aligned: bool = True):
    """:func:`inner_noise` on the 4-client population with ``E^t = E`` local iterations swept
    (``aligned=False``: each client sends ``Σ_e`` instead of ``(1/E)Σ_e``, a mutant)."""
    return inner_noise(4, int(E), replicates, seed, backend, aligned=aligned)


def inner_noise_vs_steps(K, replicates, seed, backend="numpy", *, coupled: bool = True):
    """:func:`inner_noise` on the 4-client population (``E^t = 1``) with ``K`` inner steps of
    ``β = β₁/√K``, ``β₁ = 0.99/(2ℓ_{g,1})``: ``Kβ² = β₁²`` at every ``K``, Cor. 4.1's
    ``K^tβ_t² ≤ 1/T`` at equality for ``1/T = β₁²`` (AFBO-R18).  ``coupled=False`` (a mutant):
    ``β = β₁`` at every ``K``, the step not rescaled with the inner loop's length."""
    K = int(K)
    b1 = STEP_FRACTION * _beta_max()
    beta = b1 / math.sqrt(K) if coupled else b1
    out = inner_noise(4, 1, replicates, seed, backend, inner_steps=K, beta=beta)
    out["inner_step"] = per_replicate(beta, replicates)
    return out


@cached_derivation
def coupled_noise_law() -> Law:
    """The exponent in ``K`` of ``afbo.thm41a_inner_noise_term`` with ``Σ_kβ² = Kβ²`` and
    ``β = β₁/√K`` (Cor. 4.1's coupling), derived with sympy: 0 (the term does not move)."""
    b = rates.BOUNDS["afbo.thm41a_inner_noise_term"]
    K, b1 = sp.symbols("K beta_1", positive=True)
    expr = b.expr.subs(b.symbol("B_beta"), K * (b1 / sp.sqrt(K)) ** 2)
    e = rates.leading_exponent(expr, K, sp.oo)
    return Law(float(e), r"\frac{4L_fU_2(\sigma_g^2 + \sigma_{g,1}^2)}{m\mu_fE^t}K\beta^2"
               r"\quad(\beta = \beta_1/\sqrt{K})",
               f"leading exponent in K of afbo.thm41a_inner_noise_term with Σ_kβ² = Kβ² and "
               f"β = β₁/√K (Cor. 4.1's Kβ² fixed): {e}; Remark 2's 'will decrease' asks for the "
               "whole interval at or below it (tolerance 0)", symbolic=e)


def _lambda_max() -> float:
    """``λ_max`` of the mean ``∇²_{yy}g`` (its eigenvector: :func:`fast_direction`)."""
    return float(np.linalg.eigvalsh(problem().host.closed_form.A)[-1])


def overshoot(period: int, beta: float | None = None) -> float:
    """``(1 − ρβλ_max)²``: the squared factor of one stale period along :func:`fast_direction`
    (AFBO-L4), against the lemma's ``(1 − βμ_g)^ρ`` over the same ``ρ`` steps."""
    lam = _lambda_max()
    b = STEP_FRACTION * _beta_max() if beta is None else beta
    return (1.0 - int(period) * b * lam) ** 2


# ============================================================================ conditions
def _conditions(fraction_of) -> tuple[Condition, ...]:
    """Lemma 4.2's hypotheses on the population: ``μ_g > 0``, ``‖∇²_{yy}g_i‖ ≤ ℓ_{g,1}`` and
    the step cap ``β < 1/(2ℓ_{g,1})`` (AFBO-R12) with ``β = fraction_of(v)·β_max``; the delays
    are bounded by construction (``BoundedDelay(3)``, or ``Periodic(ρ)``: Assumption 4.6 with
    ``ρ_M = ρ``, which Lemma 4.2 does not even assume)."""
    return (
        *lower_level_conditions(problem(), "g_i μ_g-strongly convex in y, μ_g > 0 (Assumption "
                                "4.2)", "‖∇²_{yy}g_i‖ ≤ ℓ_{g,1} (Assumption 4.1)"),
        Condition("β_{t,k} < 1/(2ℓ_{g,1}) (Lemma 4.2; AFBO-R12)",
                  lambda v: fraction_of(v) * _beta_max(), lambda v: _beta_max(), relation="<"),
    )


def _delay_reason() -> str:
    """Why ``afbo.inner_loop_lemma42_vs_delay`` is violated, with this population's numbers."""
    c = problem().constants
    lam = _lambda_max()
    beta = STEP_FRACTION * _beta_max()
    lemma = (1 - beta * c["mu_g"]) ** K_DELAY
    radius = periodic_path_radius(K_DELAY, beta, K_DELAY)
    spread = problem().heterogeneity_within(radius)
    bound = lemma42_bound(K_DELAY, beta, True, K_DELAY)
    return (
        "AFBO's server steps with each client's most recent inner gradient, so with every "
        "client uploading every ρ inner steps (Periodic(ρ): Assumption 4.6 with ρ_M = ρ) it "
        "applies one stored gradient ρ times: after a period y − y* = (I − ρβĀ)(y_s − y*) plus "
        f"noise, Ā the mean ∇²_{{yy}}g.  Along its top eigenvector (λ_max = "
        f"{lam / c['ell_g1']:.2f}ℓ_{{g,1}} on this population) the squared error is multiplied "
        f"by (1 − ρβλ_max)², which at β = {STEP_FRACTION:g}/(2ℓ_{{g,1}}) and ρ = K = {K_DELAY} "
        f"is {overshoot(K_DELAY):.2f} (AFBO-L4), while the lemma allows (1 − βμ_g)^{K_DELAY} = "
        f"{lemma:.2f} plus its variance term.  The lemma has no ρ_M (its step cap ignores the "
        "delay): at the cap the stale steps overshoot once ρβλ_max > 2, and the lemma's "
        "contraction is lost before that.  The variance term is taken where the round's "
        "gradients are: σ_g² is the clients' spread of ∇g_i over the ball that holds the "
        f"round (at ρ = {K_DELAY} the path overshoots to radius {radius:.0f}, where σ_g² = "
        f"{spread:.0f}, against {c['sigma_g2']:.1f} on the instance's radius-10 ball; the "
        "spread grows with the region when the clients' Hessians differ), and the bound there "
        f"is {bound:.0f} against a measured ‖y^{{t+1}} − y*‖² ≈ 6.5·10³ (AFBO-L4).  Repair: "
        "the step β/ρ_M (the bound at that step), below the bound at every ρ.  The paper's "
        "introduction lists 'adjusting learning rates when the delays of inner loop and outer "
        "loop increase' among AFBO's techniques, but Alg. 1, Lemma 4.2 and Thm 4.1 state no "
        "such adjustment (the lemma's cap β < 1/(2ℓ_{g,1}) has no ρ_M): the repair is that "
        "adjustment, which the lemma as stated needs.")


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
    P.claim(
        "inner_loop_lemma42_vs_delay", role="finding", expected="violated",
        source=P.cite("Lemma 4.2 (no inner-delay term), under Assumption 4.6's ρ_M"),
        statement=_STATEMENT, kind="bounded_by", variable=r"\rho_M",
        quantity=_QUANTITY, measure=lemma42_vs_delay,
        grid=per_budget([1, 2, 4, 8], [1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6, 7, 8]),
        replicates=per_budget(64, 256, 1024),
        law=law(rates.law_for(LEMMA42, "bound")), tolerance=0.0,
        reason=_delay_reason(),
        mutants=(Mutant("delay_scaled_step", "the inner step β/ρ_M with the bound evaluated at "
                        "that step (the step cap divided by the delay bound): one period then "
                        "moves y by at most one step β along ∇g, and the lemma holds at every ρ",
                        {"delay_scaled": True}, kind="repair"),),
        schedule=(f"one AFBO round on the 4-client population (κ_g ≈ 3.03, σ = 1) from "
                  f"x^t = x*, y^t = y*(x^t) + {OFFSET:g}v (v the top eigenvector of the mean "
                  f"∇²_{{yy}}g), K = {K_DELAY} inner steps of β = {STEP_FRACTION:g}/(2ℓ_{{g,1}}), "
                  "every client uploading its inner gradient every ρ_M inner steps, all "
                  "together (Periodic), the outer loop synchronous; σ_g² the clients' "
                  "spread of ∇g_i over the ball that holds the round (radius ‖(x*, y*)‖ + "
                  "max_k |c_k| + 1, c_k the noise-free path along v), σ_{g,1}² = σ²"),
        conditions=_conditions(lambda v: STEP_FRACTION), touches=("AFBO-R12",)),
]

# The variance part in the clients and the local iterations: Thm 4.1(a)'s first term of C
_NOISE_STATEMENT = (r"\mathbb{E}\|y^{t+1} - y^*(x^t)\|^2 \propto \frac{4L_fU_2(\sigma_g^2 + "
                    r"\sigma_{g,1}^2)}{m\mu_fE^t}\sum_k\beta_{t,k}^2\quad(y^t = y^*(x^t))")
_NOISE_QUANTITY = r"\mathbb{E}\|y^{t+1} - y^*(x^t)\|^2\ \mathrm{from}\ y^t = y^*(x^t)"
_NOISE_SCHEDULE = (f"one synchronous AFBO round from x^t = x*, y^t = y*(x^t) (the contraction "
                   f"part of Lemma 4.2 is then zero: the value is its variance part), K = "
                   f"{K_NOISE} inner steps of β = {STEP_FRACTION:g}/(2ℓ_{{g,1}}), σ = 1, each "
                   "G_i the aligned mean of E^t gradients drawn at y^{t,k} (AFBO-I1)")
#: the noise claims' replicates: the value is a weighted χ² in d_y = 3 coordinates (relative
#: sd ≈ 0.8 per replicate), so 2048 give a per-point standard error ≈ 2 % and a slope's ≈ 0.02
#: over three doublings (resolution ≈ 0.16 against the tolerance 0.1)
_NOISE_REPLICATES = per_budget(2048, 4096, 8192)


def _noise_claim(name, source, variable, measure, grid, law_var, mutant, schedule, touches):
    """An inner-noise claim: :func:`inner_noise` swept in ``variable``, at most the exponent
    of ``afbo.thm41a_inner_noise_term`` in ``law_var`` (−1)."""
    return P.claim(
        name, role="confirmation", source=source, statement=_NOISE_STATEMENT, kind="at_most",
        variable=variable, quantity=_NOISE_QUANTITY, measure=measure, grid=grid,
        replicates=_NOISE_REPLICATES,
        law=law("afbo.thm41a_inner_noise_term", "exponent", law_var), tolerance=0.1,
        mutants=(mutant,), schedule=f"{_NOISE_SCHEDULE}; {schedule}",
        conditions=_conditions(lambda v: STEP_FRACTION), touches=touches)


CLAIMS += [
    _noise_claim(
        "inner_noise_vs_clients",
        P.cite("Thm 4.1(a), C's term 4L_fU_2(σ_g² + σ_{g,1}²)Σ_kβ²/(mμ_fE^t); Remark 2 "
               "('decreases as the total number of clients increases')"),
        "m", inner_noise_vs_clients,
        per_budget([4, 8, 16, 32], [4, 8, 16, 32, 64], [4, 8, 16, 32, 64, 128]), "m",
        Mutant("summed_gradients", "the server steps with the sum Σ_iG_i of the clients' inner "
               "gradients instead of their mean: the noise of m clients is added, not "
               "averaged, and the error grows with m", {"summed": True}, kind="noise_averaging"),
        "E^t = 1; m clients, m/4 copies of the 4-client population (κ_g ≈ 3.03; the same y* "
        "and constants at every m)", ("AFBO-R12", "AFBO-I1")),
    _noise_claim(
        "inner_noise_vs_local_iterations",
        P.cite("Thm 4.1(a), C's term 4L_fU_2(σ_g² + σ_{g,1}²)Σ_kβ²/(mμ_fE^t), with E^t the "
               "clients' local iteration number (AFBO-R16)", "[INFERRED]"),
        "E^t", inner_noise_vs_local, per_budget([1, 2, 4, 8], [1, 2, 4, 8, 16], [1, 2, 4, 8, 16, 32]),
        "E_t",
        Mutant("unaligned", "each client sends the sum Σ_e of its E^t local gradients instead of "
               "the aligned mean (1/E^t)Σ_e: the step is E^tβ and the noise grows with E^t",
               {"aligned": False}, kind="noise_averaging"),
        "m = 4 (the population), E^t = E swept, the same for every client",
        ("AFBO-R12", "AFBO-R16", "AFBO-I1")),
]

CLAIMS.append(P.claim(
    "inner_noise_vs_inner_steps", role="confirmation",
    source=P.cite("Remark 2 ('If we run more inner loops, then the error of the first term will "
                  "decrease'), at Cor. 4.1's K^tβ_t² ≤ 1/T (AFBO-R18)", "[INFERRED]"),
    statement=r"\mathbb{E}\|y^{t+1} - y^*(x^t)\|^2\ \mathrm{non\text{-}increasing\ in}\ K"
              r"\quad(y^t = y^*(x^t),\ K\beta^2 = \beta_1^2)",
    kind="at_most", variable="K", quantity=_NOISE_QUANTITY, measure=inner_noise_vs_steps,
    grid=per_budget([1, 2, 4, 8, 16, 32], [1, 2, 4, 8, 16, 32, 64],
                    [1, 2, 4, 8, 16, 32, 64, 128]),
    replicates=_NOISE_REPLICATES, law=coupled_noise_law(), tolerance=0.0,
    mutants=(Mutant("step_not_coupled", "the inner step is not rescaled with K (β = β₁ at "
                    "every K): Σ_kβ² = Kβ₁² grows, and the first term's error rises toward the "
                    "constant step's stationary variance", {"coupled": False},
                    kind="schedule"),),
    schedule=("one synchronous AFBO round from x^t = x*, y^t = y*(x^t) (the contraction part "
              "of Lemma 4.2 is then zero: the value is its variance part, C's first term), K "
              f"inner steps of β = β₁/√K with β₁ = {STEP_FRACTION:g}/(2ℓ_{{g,1}}) (Kβ² = β₁² at "
              "every K: Cor. 4.1's K^tβ_t² ≤ 1/T at equality), σ = 1, E^t = 1, m = 4 (the "
              "population)"),
    conditions=_conditions(lambda v: STEP_FRACTION / math.sqrt(v)),
    touches=("AFBO-R12", "AFBO-R16", "AFBO-R18")))
