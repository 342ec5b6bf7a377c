"""FedMBO, Lemma 5 (Huang, Zhang & Ji, ICML 2023): the inner loop (Alg. 1 lines 4–12),
minibatch SGD against FedAvg's client drift, and Lemma 5's bound."""

from __future__ import annotations

import functools
import math

import numpy as np

from bilevel_theory import make_context, rates
from bilevel_theory.inner import fedavg, minibatch_sgd
from bilevel_theory.problems import QuadraticBilevel

from ...claim import Condition, Mutant, per_budget
from ...kit import law, per_replicate
from .common import (
    REPLACE,
    P,
    _batch,
    _child_seed,
    _curvature_conditions,
    _gpu,
    _host,
    _pow2,
    _replacement_condition,
)

INNER_TAU = 10  # FedAvg local steps


def inner_step(problem) -> float:
    """The inner loops' step ``β = 1/(2ℓ_{g,1})``: Lemma 5's largest."""
    return 1.0 / (2.0 * problem.constants["ell_g1"])


@functools.cache
def inner_problem(noise: float = 0.0, clients: int = 100) -> QuadraticBilevel:
    """The inner-loop instance (dense 2×2 blocks); ``clients = 10⁶`` on a GPU (:data:`GPU_CLIENTS`)."""
    return QuadraticBilevel.random(clients=clients, dim_x=2, dim_y=2, kappa=10.0, heterogeneity=1.0,
                                   noise=noise, seed=0, storage="dense")


def inner_point(problem: QuadraticBilevel | None = None) -> np.ndarray:
    """``x = 7v`` with ``v`` the top right-singular vector of ``J = Ā⁻¹B̄`` of ``problem``
    (default :func:`inner_problem`) (``‖y*(x)‖`` large: there the Hessian heterogeneity
    dominates the client gradients at ``y*``)."""
    J = (problem or inner_problem()).host.closed_form.J
    return 7.0 * np.linalg.svd(J)[2][0]


def _inner_mse(solver, problem, n, replicates, seed, backend, burn=100, steps=200, **kw):
    """Time average over ``steps`` rounds (after ``burn``) of ``‖y_t − y*(x)‖²``, from
    ``y₀ = y*(x)``, step ``β = 1/(2ℓ_{g,1})`` (Lemma 5's largest)."""
    x = inner_point(problem)
    ys = np.asarray(problem.y_star(x), float)
    beta = inner_step(problem)
    ctx = make_context(problem, replicates, seed, backend)
    X, y = _batch(ctx, x), _batch(ctx, ys)
    y = solver(ctx, X, y, burn, lambda t: beta, int(n), replace=REPLACE, **kw)
    acc = np.zeros(replicates)
    for _ in range(steps):
        y = solver(ctx, X, y, 1, lambda t: beta, int(n), replace=REPLACE, **kw)
        acc += ((_host(ctx, y) - ys) ** 2).sum(axis=-1)
    return acc / steps


def inner_drift(n, replicates, seed, backend="numpy", clients=100, *, fedavg_inner=False):
    """``value``: minibatch SGD's stationary ``E‖y − y*(x)‖²``; ``contrast``: FedAvg's
    (``τ = 10`` local steps of ``β/τ``), both with ``n`` clients sampled with replacement.
    ``fedavg_inner``: mutant, FedMBO's inner loop replaced by FedAvg."""
    problem = inner_problem(clients=clients)
    kw = {"local_steps": INNER_TAU} if fedavg_inner else {}
    solver = fedavg if fedavg_inner else minibatch_sgd
    return {"value": _inner_mse(solver, problem, n, replicates, seed, backend, **kw),
            "contrast": _inner_mse(fedavg, problem, n, replicates, _child_seed(seed, 1), backend,
                                   local_steps=INNER_TAU)}


LEMMA5_T = 8


def inner_lemma5(n, replicates, seed, backend="numpy", *, step_factor: float = 1.0,
                 summed: bool = False):
    """``‖y^{k,T} − y*(x)‖²`` after ``T = 8`` minibatch-SGD steps from ``y = 0`` against
    Lemma 5's ``(1 − βμ_g)^T‖y⁰ − y*‖² + 4(σ_{g,1}² + σ_g²)Tβ²/(nS)``.  ``step_factor``:
    mutant, the steps taken are ``step_factor·β`` while the bound is evaluated at ``β``;
    ``summed``: mutant, the server sums the ``n`` client gradients instead of averaging them
    (a step of ``nβ`` along their mean)."""
    if summed:
        step_factor = step_factor * int(n)
    problem = inner_problem(noise=0.5)
    c = problem.constants
    x = inner_point()
    ys = np.asarray(problem.y_star(x), float)
    beta, S = inner_step(problem), 1
    ctx = make_context(problem, replicates, seed, backend)
    y = minibatch_sgd(ctx, _batch(ctx, x), _batch(ctx, np.zeros_like(ys)), LEMMA5_T,
                      lambda t: step_factor * beta, int(n), S, replace=REPLACE)
    value = ((_host(ctx, y) - ys) ** 2).sum(axis=-1)
    bound = ((1 - beta * c["mu_g"]) ** LEMMA5_T * float(ys @ ys)
             + 4 * (c["sigma_g12"] + c["sigma_g2"]) * LEMMA5_T * beta ** 2 / (int(n) * S))
    return {"value": value, "bound": per_replicate(bound, replicates)}


LEMMA5 = rates.BOUNDS["fedmbo.lemma5"]
LEMMA5_STATIONARY = rates.BOUNDS["fedmbo.lemma5_stationary"]


def _lemma5_conditions(problem, x) -> tuple[Condition, ...]:
    """Lemma 5's hypotheses for the inner loop at ``x``: Assumptions 1–2, Assumption 5 at
    ``(x, y*(x))`` (where eq. (11) uses it), ``0 < β ≤ 1/(2ℓ_{g,1})`` and the sampling of
    FEDMBO-R12."""
    c, h = problem.constants, problem.host
    ys = np.asarray(problem.y_star(x), float)
    idx = np.arange(h.clients)[None]
    xb = np.broadcast_to(np.asarray(x, float), (1, h.clients, h.dim_x))
    yb = np.broadcast_to(ys, (1, h.clients, h.dim_y))
    G = np.concatenate([h.exact_grad_x_g(idx, xb, yb), h.exact_grad_y_g(idx, xb, yb)], -1)[0]
    spread = float(((G - G.mean(0)) ** 2).sum(-1).mean())
    return (*_curvature_conditions(problem, "Lemma 5's step cap"),
            Condition("0 < β_{k,t} ≤ 1/(2ℓ_{g,1}) (Lemma 5)", inner_step(problem),
                      1.0 / (2.0 * c["ell_g1"])),
            Condition("E_i‖∇g_i(z) − ∇g(z)‖² ≤ σ_g² (Assumption 5), at z = (x, y*(x)) where "
                      "eq. (11) uses it", spread, c["sigma_g2"],
                      note=f"σ_g² = {c['sigma_g2']:.4g}, the instance's maximum over ‖z‖ ≤ "
                           f"√2·{problem.radius:g} (FEDMBO-R12); ‖z‖ = "
                           f"{math.hypot(np.linalg.norm(x), np.linalg.norm(ys)):.3g} here"),
            _replacement_condition(
                "Lemma 5's proof: P(c_i = p, c_j = q) the same for every (p, q); FEDMBO-R12",
                f"i.i.d. uniform draws for every n; the grids take n past the m = "
                f"{problem.clients} clients of the CPU instance (§3.3 has n ≤ m)"))


# =============================================================================================
# Claims
# =============================================================================================

def _claims() -> list:
    return [
        P.claim(
            "inner_loop_drift", role="confirmation",
            source=P.cite("Lemma 5 (eq. 14) and §3.1 / Remark 2"),
            statement=(r"\limsup_t \mathbb{E}\|y^{k,t} - y^*(x^k)\|^2 \leq "
                       r"4\beta(\sigma_{g,1}^2 + \sigma_g^2)/(\mu_g n S)"),
            kind="contrast", variable="n",
            extra={"series": {"value": "minibatch SGD inner loop (FedMBO)", "contrast": "FedAvg inner loop"}},
            quantity=r"\mathbb{E}\|y^{k,t} - y^*(x^k)\|^2",
            measure=inner_drift,
            grid=per_budget([1, 2, 4, 8, 16, 32, 64, 128], _pow2(0, 10), _pow2(0, 11)),
            replicates=per_budget(16, 64, 128),
            gpu_scale=_gpu(128),
            law=law(rates.law_for(LEMMA5_STATIONARY, "exponent", "n")), tolerance=0.1,
            mutants=(Mutant("fedavg_inner", "FedMBO's inner loop replaced by FedAvg (τ local "
                            "steps): its client-drift bias does not fall with n",
                            {"fedavg_inner": True}, kind="estimator"),),
            schedule=("inner loop alone at a fixed x (x = 7v, v the top right-singular vector "
                      "of J; ‖y*(x)‖ large), y₀ = y*(x), β = 1/(2ℓ_{g,1}) (Lemma 5's largest), "
                      "n clients with replacement, S = 1, noise-free (σ_g² only: non-IID "
                      "Hessians κ = 10, heterogeneity 1); time average of ‖y_t − y*‖² over 200 "
                      "rounds after 100; value: minibatch SGD (Alg. 1 l. 4–12); contrast: "
                      f"FedAvg, τ = {INNER_TAU} local steps of β/τ (its stationary error is its "
                      "drift bias² plus variance/n, flat in n once the bias dominates)"),
            conditions=_lemma5_conditions(inner_problem(), inner_point()),
            touches=("FEDMBO-R1", "FEDMBO-R12")),
        P.claim(
            "inner_loop_lemma5", role="confirmation", source=P.cite("Lemma 5"),
            statement=(r"\mathbb{E}\|y^{k+1} - y^*(x^k)\|^2 \leq (1 - \beta\mu_g)^T "
                       r"\|y^k - y^*(x^k)\|^2 + 4(\sigma_{g,1}^2 + \sigma_g^2) T \beta^2/(nS)"),
            kind="bounded_by", variable="n",
            quantity=r"\mathbb{E}\|y^{k+1} - y^*(x^k)\|^2",
            measure=inner_lemma5,
            grid=per_budget([1, 4, 16, 64], _pow2(0, 9), _pow2(0, 11)),
            replicates=per_budget(64, 256, 1024),
            law=law(rates.law_for(LEMMA5, "bound")), tolerance=0.0,
            mutants=(Mutant("step_quarter", "the inner loop takes steps β/4 while the bound is "
                            "evaluated at β: the contraction (1 − βμ_g)^T is not achieved",
                            {"step_factor": 0.25}, kind="schedule"),
                     Mutant("summed", "the server sums the n client gradients instead of "
                            "averaging them (a step of nβ along their mean): from n = 4 on the "
                            "step is ≥ 2/ℓ_{g,1} and the inner loop no longer contracts",
                            {"summed": True}, kind="noise_averaging")),
            schedule=(f"T = {LEMMA5_T} minibatch-SGD steps from y = 0 at x = 7v (as "
                      "fedmbo.inner_loop_drift), β = 1/(2ℓ_{g,1}), S = 1, σ_{g,1} = 0.5, n with "
                      "replacement; σ_g² = the instance's measured heterogeneity (sup over the "
                      "radius-10 ball)"),
            conditions=_lemma5_conditions(inner_problem(noise=0.5), inner_point()),
            touches=("FEDMBO-R1", "FEDMBO-R12")),
    ]


CLAIMS = _claims()
