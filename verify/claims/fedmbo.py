"""FedMBO claims — Huang, Zhang, Ji (ICML 2023), seed ``001_2f8be2fcf2864762.txt``.

Every prediction is derived with ``bilevel_theory.rates`` from the paper's bounds (registered
ones, or sympy expressions built below from ``rates`` symbols); every run uses the schedule
the result prescribes, with the constants chosen here and stated in each claim's ``schedule``.

Instances (closed form, small):

* PHE claims: ``QuadraticBilevel.random(clients=100, dim_x=2, dim_y=2, kappa=2, coupling=0.5,
  heterogeneity=0.5, storage="structured", seed=1)`` (shared eigenbasis, so ``λ_min(Ā) = μ_g``
  exactly and the Neumann ratio is exactly ``(κ_g−1)/κ_g``), at the point ``x = 1, y = 0``;
  the estimator's conditional mean ``H̄`` is in closed form (:func:`phe_mean`):
  ``H̄ = ∇ₓf̄ + B̄ᵀĀ⁻¹(I − (I − Ā/ℓ)^N)∇_y f̄`` (independent factors, clients sampled with
  replacement, ``∇²_{xy}g = −Bᵀ``).  Prop. 1's explicit bounds are checked on a second
  instance (``coupling=2, seed=2``) at a point on the boundary of the radius-10 domain
  (:func:`bias_bound_point`).
* Theorem 1 / Corollary 1 claims: ``kappa=1.25, coupling=0.2, upper_mu=20`` (``κ_g ≈ 1.32``,
  ``Φ`` well conditioned so that the runs reach the asymptotic regime in a few hundred rounds),
  gradient noise ``σ_f = σ_{g,1} = 10``, Hessian noise ``0.3``.  Step sizes from the proof's
  constants (:func:`thm1_constants`): ``α_k = min{α̂₁, α̂₂, √(n/K)·α̂₃}``,
  ``β = β̄α_k/T``; the ``√(n/K)`` branch is active on every grid point.
* Inner-loop claims: ``kappa=10, heterogeneity=1, dim_y=2`` (dense per-client Hessians), at a
  far point (``‖y*(x)‖`` large), where FedAvg's client drift is visible.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
import sympy as sp
from bilevel_theory.problems import QuadraticBilevel

from bilevel_theory import make_context, rates, run
from bilevel_theory.estimators import ihgp, neumann_bias_matrix, phe
from bilevel_theory.inner import fedavg, minibatch_sgd

from ..claim import Claim, GpuScale, Law, per_budget

PAPER = rates.PAPERS["fedmbo"]
SEED = rates.SEEDS["fedmbo"]
CHUNK = 16  # replicates per estimator call (bounds memory at large chain counts)


_budgets = per_budget


_reps = per_budget

#: Client count of the ``full`` budget on a GPU (issue #6: ``m = 10⁶``, ``n`` up to ``10⁵``).
GPU_CLIENTS = 10 ** 6
#: Sampled clients ``n`` swept by the n-claims' ``full`` budget on a GPU: 4 per decade to 10⁵.
GPU_SAMPLED = tuple(sorted({round(10 ** (k / 4)) for k in range(21)}))


def _gpu(replicates: int) -> GpuScale:
    """The n-claims' GPU plan: ``m = 10⁶`` clients, ``n`` over :data:`GPU_SAMPLED`."""
    return GpuScale(GPU_SAMPLED, replicates, {"clients": GPU_CLIENTS})


def _child_seed(seed: int, *keys: int) -> int:
    return int(np.random.SeedSequence([int(seed), *keys]).generate_state(1)[0])


def _host(ctx, a) -> np.ndarray:
    return np.asarray(ctx.oracle.backend.to_numpy(a), dtype=float)


def _batch(ctx, v: np.ndarray):
    """``v`` broadcast over the context's replicates, on its backend."""
    return ctx.xp.asarray(np.broadcast_to(np.asarray(v, dtype=float),
                                          (ctx.replicates, v.shape[-1])).copy())


# =============================================================================================
# PHE (Algorithm 2): bias, variance
# =============================================================================================

PHE_POINT = (np.ones(2), np.zeros(2))


@functools.cache
def phe_problem(noise: float = 0.0, hessian_noise: float = 0.0, coupling: float = 0.5,
                seed: int = 1, clients: int = 100) -> QuadraticBilevel:
    """The PHE instance (module docstring); ``noise`` / ``hessian_noise`` as in the claims;
    ``clients = 10⁶`` on a GPU (:data:`GPU_CLIENTS`)."""
    return QuadraticBilevel.random(clients=clients, dim_x=2, dim_y=2, kappa=2.0, heterogeneity=0.5,
                                   noise=noise, hessian_noise=hessian_noise, seed=seed,
                                   coupling=coupling, storage="structured")


BOUND_INSTANCE = dict(coupling=2.0, seed=2)  # Prop. 1 bound claims (see their schedule)


def _grads_f(problem, x, y):
    """``(∇ₓf̄(x, y), ∇_y f̄(x, y))`` of the global upper level (closed form)."""
    C = problem.host._closed
    return x @ C["P"] + y @ C["R"].T + C["p"], x @ C["R"] + y @ C["S"] + C["q"]


def phe_mean(problem, x, y, neumann_steps: int, scale: float) -> np.ndarray:
    """``H̄ = E[H_i | F^k] = ∇ₓf̄ + B̄ᵀĀ⁻¹(I − (I − Ā/ℓ)^N)∇_y f̄`` (clients with replacement):
    the surrogate ``∇̄f`` plus the exact Neumann bias ``B̄ᵀ(−Ā⁻¹(I − Ā/ℓ)^N)∇_y f̄``."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    _, gy = _grads_f(problem, x, y)
    bias = (neumann_bias_matrix(problem, neumann_steps, scale) @ gy) @ problem.host._closed["B"]
    return np.asarray(problem.surrogate_hypergradient(x, y), float) + bias


def _phe_outputs(problem, x, y, N: int, chains: int, replicates: int, seed: int, backend: str,
                 scale: float | None = None) -> np.ndarray:
    """``H (replicates, chains, dim_x)`` from :func:`phe` (with replacement), in chunks."""
    scale = problem.constants["ell_g1"] if scale is None else scale
    out = []
    for j, start in enumerate(range(0, replicates, CHUNK)):
        r = min(CHUNK, replicates - start)
        ctx = make_context(problem, r, _child_seed(seed, j), backend)
        H = phe(ctx, _batch(ctx, x), _batch(ctx, y), int(N), int(chains), scale, replace=True)
        out.append(_host(ctx, H))
    return np.concatenate(out)


def _bias_squared(problem, x, y, N, chains, replicates, seed, backend) -> np.ndarray:
    """Unbiased per-replicate estimate of ``‖E[H_i] − ∇̄f‖²``: ``⟨ē₁ − ∇̄f, ē₂ − ∇̄f⟩`` with
    ``ē₁, ē₂`` the means of two independent halves of the chains (a U-statistic: no closed-form
    ingredient besides the surrogate ``∇̄f``)."""
    H = _phe_outputs(problem, x, y, N, chains, replicates, seed, backend)
    sur = np.asarray(problem.surrogate_hypergradient(x, y), float)
    half = chains // 2
    e1, e2 = H[:, :half].mean(axis=1) - sur, H[:, half:2 * half].mean(axis=1) - sur
    return (e1 * e2).sum(axis=-1)


BIAS_CHAINS = 1 << 15


def phe_bias(N, replicates, seed, backend="numpy"):
    """Prop. 1: ``‖H̄ − ∇̄f‖²`` at ``(x, y) = (1, 0)``, noise-free, ``2^15`` chains per replicate."""
    problem = phe_problem()
    x, y = PHE_POINT
    value = _bias_squared(problem, x, y, int(N), BIAS_CHAINS, replicates, seed, backend)
    exact = np.linalg.norm(phe_mean(problem, x, y, int(N), problem.constants["ell_g1"])
                           - problem.surrogate_hypergradient(x, y)) ** 2
    return {"value": value, "exact": np.full(replicates, exact)}


# --- Prop. 1 as stated (ℓ_{f,1}) and as proved (ℓ_{f,0}), at a point of the domain ------------

@functools.cache
def bias_bound_point() -> tuple[np.ndarray, np.ndarray]:
    """``x = ρv, y = y*(x)`` on the boundary of the domain: ``v ∝ Gᵀu₁`` (``G = Rᵀ + SJ``, ``u₁``
    the slowest Neumann mode: ``∇_y f`` grows fastest along it) and ``ρ`` the largest with
    ``‖x‖, ‖y*(x)‖ ≤ radius`` (the ball on which the instance's ``ℓ_{f,0}`` holds)."""
    problem = phe_problem(**BOUND_INSTANCE)
    C = problem.host._closed
    u1 = np.linalg.eigh(C["A"])[1][:, 0]
    v = (C["R"].T + C["S"] @ C["J"]).T @ u1
    v = v / np.linalg.norm(v)
    if u1 @ (_grads_f(problem, v, problem.y_star(v))[1]) < 0:
        v = -v
    lo, hi = 0.0, problem.radius
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if np.linalg.norm(problem.y_star(mid * v)) <= problem.radius else (
            lo, mid)
    x = lo * v
    return x, np.asarray(problem.y_star(x), float)


def _bias_bound(N, replicates, seed, backend, which: str):
    problem = phe_problem(**BOUND_INSTANCE)
    c = problem.constants
    x, y = bias_bound_point()
    value = _bias_squared(problem, x, y, int(N), 1 << 13, replicates, seed, backend)
    lip = c["ell_f1"] if which == "stated" else c["ell_f0"]
    b = c["kappa_g"] * lip * ((c["kappa_g"] - 1) / c["kappa_g"]) ** int(N)
    return {"value": value, "bound": np.full(replicates, b * b)}


def phe_bias_bound_stated(N, replicates, seed, backend="numpy"):
    """``‖H̄ − ∇̄f‖²`` against Prop. 1's ``b² = (κ_g ℓ_{f,1} ρ^N)²`` (as stated)."""
    return _bias_bound(N, replicates, seed, backend, "stated")


def phe_bias_bound_proof(N, replicates, seed, backend="numpy"):
    """``‖H̄ − ∇̄f‖²`` against the proof's ``(κ_g ℓ_{f,0} ρ^N)²``."""
    return _bias_bound(N, replicates, seed, backend, "proof")


# --- Prop. 3 and the FedNest contrast -----------------------------------------------------------

VAR_N = 8  # Neumann truncation of the variance claims


def phe_variance(n, replicates, seed, backend="numpy", clients=100):
    """Prop. 3: ``‖(1/n)Σ_i H_i − H̄‖²`` per replicate (``n`` chains, with replacement)."""
    problem = phe_problem(noise=1.0, hessian_noise=0.5, clients=clients)
    x, y = PHE_POINT
    H = _phe_outputs(problem, x, y, VAR_N, int(n), replicates, seed, backend)
    Hbar = phe_mean(problem, x, y, VAR_N, problem.constants["ell_g1"])
    return {"value": ((H.mean(axis=1) - Hbar) ** 2).sum(axis=-1)}


def ihgp_hypergradient(ctx, x, y, N: int, n: int, scale: float):
    """FedNest's ``h = mean_{i∈S}(∇ₓf_i − ∇²_{xy}g_i p_{N'})`` with ``p_{N'}`` from FedIHGP
    (one chain shared by all clients, one truncation ``N'``, ``|S_l| = n``), clients with
    replacement like PHE (so only the sharing differs); as ``fednest.fed_out``."""
    o = ctx.oracle
    X, Y = _batch(ctx, x), _batch(ctx, y)
    p, _ = ihgp(ctx, X, Y, N, n, scale, replace=True)
    S = o.sample_clients(ctx.replicates, n, True)
    h = o.grad_x_f(S, X[:, None, :], Y[:, None, :]) - o.jvp_xy_g(S, X[:, None, :], Y[:, None, :],
                                                              p[:, None, :])
    return _host(ctx, h.mean(axis=1))


def phe_vs_ihgp_variance(n, replicates, seed, backend="numpy", clients=100):
    """``value``: PHE's ``‖mean_i H_i − H̄‖²``; ``contrast``: FedNest's ``‖h − H̄‖²`` (same
    ``H̄``: both estimators have the same conditional mean)."""
    out = phe_variance(n, replicates, seed, backend, clients)
    problem = phe_problem(noise=1.0, hessian_noise=0.5, clients=clients)
    x, y = PHE_POINT
    scale = problem.constants["ell_g1"]
    Hbar = phe_mean(problem, x, y, VAR_N, scale)
    hs = []
    for j, start in enumerate(range(0, replicates, CHUNK)):
        ctx = make_context(problem, min(CHUNK, replicates - start), _child_seed(seed, 7, j),
                           backend)
        hs.append(ihgp_hypergradient(ctx, x, y, VAR_N, int(n), scale))
    out["contrast"] = ((np.concatenate(hs) - Hbar) ** 2).sum(axis=-1)
    return out


# --- Prop. 2: variance of one H_i against N -----------------------------------------------------

def phe_single_variance(N, replicates, seed, backend="numpy"):
    """``E‖H_i − H̄‖²`` per replicate: the mean over 256 chains of ``‖H_i − H̄‖²``, noise-free."""
    problem = phe_problem()
    x, y = PHE_POINT
    H = _phe_outputs(problem, x, y, int(N), 256, replicates, seed, backend)
    Hbar = phe_mean(problem, x, y, int(N), problem.constants["ell_g1"])
    return {"value": ((H - Hbar) ** 2).sum(axis=-1).mean(axis=1)}


# =============================================================================================
# Theorem 1 / Corollary 1: stationarity of FedMBO runs
# =============================================================================================

@functools.cache
def thm1_problem() -> QuadraticBilevel:
    return QuadraticBilevel.random(clients=100, dim_x=2, dim_y=2, kappa=1.25, heterogeneity=0.5,
                                   noise=10.0, hessian_noise=0.3, seed=0, coupling=0.2,
                                   upper_mu=20.0)


NK_REF = 1 / 25  # the largest n/K of every Theorem-1 grid: α̂₃ puts the cap exactly there
B2_FACTOR = 1e-3  # N chosen so that b² ≤ 10⁻³/√(nK) at the largest nK of every grid
NK_MAX = 8 * 200 * 2 ** 7  # largest n·K of every Theorem-1 grid (K-sweep, full budget)
X0_OFFSET = 0.1  # ‖x⁰ − x*‖: balances the optimization and noise terms (α̂₃ vs 1/α̂₃)
S_MIN = 64  # minibatch size: ≥ κ_g⁴/T (Cor. 1) and large enough that the inner-loop noise terms
# (eq. 22c: α̂₃/(ST√(nK)) + α̂₃²/(STK) + …, O(1/K) at fixed n) stay below the 1/√(nK) term


@functools.cache
def thm1_constants() -> dict:
    """The proof's constants for :func:`thm1_problem` (eqs. 18, 20, 21; Cor. 1's ``η``).

    ``L_yx`` (Lemma 3, Chen et al. 2021a) ``= (ℓ_{g,2} + ℓ_{g,2}L_y)/μ_g + ℓ_{g,1}(ℓ_{g,2} +
    ℓ_{g,2}L_y)/μ_g² = 0`` for constant Hessians, so the η terms vanish; ``β̄`` is the proof's
    eq. (20) (the statement's ``1/(2nμ_g)`` factor multiplies ``L_yx = 0`` anyway).  ``T`` is
    the smallest with ``α̂₂ ≥ α̂₁``; ``S = max(64, ⌈κ_g⁴/T⌉)`` (Cor. 1's ``ST = Ω(κ_g⁴)`` is a
    lower bound; 64 keeps the inner-loop noise terms of eq. (22c) small); ``N`` the
    smallest with ``b² ≤ 10⁻³/√(nK)`` (``b`` of Prop. 1) on every grid point (Cor. 1's
    ``N = Ω(κ_g log K)`` with a constant large enough for the [NOTE] on ``b = K^{−1/4}``)."""
    problem = thm1_problem()
    c = problem.constants
    mu, ell, Ly, Mf, Lf = c["mu_g"], c["ell_g1"], c["L_y"], c["M_f"], c["L_f"]
    g2 = c["ell_g2"]
    L_yx = (g2 + g2 * Ly) / mu + ell * (g2 + g2 * Ly) / mu ** 2
    eta = Mf / Ly
    sf2, sg22 = c["sigma_f2"], c["sigma_g22"]
    sigma_t2 = sf2 + 3 / mu ** 2 * ((sf2 + c["ell_f0"] ** 2) * (sg22 + 2 * ell ** 2) + sf2 * ell ** 2)
    D2 = (c["ell_f0"] + c["ell_f0"] * ell / mu + c["ell_f1"] * ell / mu) ** 2 + sigma_t2
    a1 = 1 / (2 * Lf + 4 * Mf * Ly + 2 * Mf * L_yx / (Ly * eta))
    beta_bar = 5 * Mf * Ly / mu + eta * L_yx * D2 * a1 / (2 * mu)
    T = max(1, math.ceil(2 * ell * beta_bar * a1))
    a2 = T / (2 * ell * beta_bar)
    S = max(S_MIN, math.ceil(c["kappa_g"] ** 4 / T))
    a3 = min(a1, a2) / math.sqrt(NK_REF)
    kg = c["kappa_g"]
    b0 = kg * c["ell_f1"]
    N = max(1, math.ceil(math.log(b0 ** 2 * math.sqrt(NK_MAX) / B2_FACTOR)
                         / (2 * math.log(kg / (kg - 1)))))
    x0 = np.asarray(problem.x_star) + X0_OFFSET * np.ones(problem.dim_x) / math.sqrt(problem.dim_x)
    return dict(alpha_hat1=a1, alpha_hat2=a2, alpha_hat3=a3, beta_bar=beta_bar, T=T, S=S, N=N,
                L_yx=L_yx, eta=eta, b2=b0 ** 2 * ((kg - 1) / kg) ** (2 * N), x0=x0,
                y0=np.asarray(problem.y_star(x0), float))


def thm1_steps(n: int, K: int) -> tuple[float, float]:
    """Theorem 1: ``α = min{α̂₁, α̂₂, √(n/K)·α̂₃}``, ``β = β̄α/T``."""
    c = thm1_constants()
    alpha = min(c["alpha_hat1"], c["alpha_hat2"], math.sqrt(n / K) * c["alpha_hat3"])
    return alpha, c["beta_bar"] * alpha / c["T"]


def fedmbo_stationarity(n: int, K: int, replicates: int, seed: int, backend: str) -> dict:
    """``(1/K) Σ_{k<K} ‖∇Φ(x^k)‖²`` of FedMBO runs at Theorem 1's schedule."""
    c = thm1_constants()
    n, K = int(n), int(K)
    alpha, beta = thm1_steps(n, K)
    trace = run("fedmbo", thm1_problem(), rounds=K, replicates=replicates, seed=seed,
                backend=backend, inner_steps=c["T"], samples=c["S"], sampled_clients=n,
                neumann_steps=c["N"], outer_step=alpha, inner_step=beta, replace=True,
                x0=c["x0"], y0=c["y0"])
    return {"value": trace.stationarity[:, :K].mean(axis=1), "diverged": trace.diverged,
            "rounds": np.full(replicates, trace.ledger.totals()["rounds"]),
            "K": np.full(replicates, float(K)), "alpha": np.full(replicates, alpha)}


STAT_N_K = 800  # K of the n-sweep
STAT_K_N = 8  # n of the K-sweep
SPEEDUP_NK = 6400  # n·K = C ε⁻² of the linear-speedup sweep (ε fixed)
EPS_N = 8  # n of the ε-sweep
EPS_C = 1600  # K(ε) = ⌈C ε⁻²/n⌉: K = 200 at ε = 1


def _iteration_exponents() -> tuple[float, float]:
    """``K(ε) ∝ ε^a n^b`` from Cor. 1 by asymptotic inversion (``a = −2``, ``b = −1``)."""
    a = rates.law_for("fedmbo.cor1", "epsilon_exponent", "K").value
    b = rates.law_for("fedmbo.cor1", "inverse_exponent", "K", other="n").value
    return a, b


def iterations_for(eps: float, n: int, C: float) -> int:
    """Cor. 1: ``K(ε) = ⌈C·ε^a·n^b⌉`` with the exponents derived from the bound."""
    a, b = _iteration_exponents()
    return max(1, math.ceil(C * eps ** a * n ** b - 1e-9))


def stationarity_vs_n(n, replicates, seed, backend="numpy"):
    return fedmbo_stationarity(int(n), STAT_N_K, replicates, seed, backend)


def stationarity_vs_K(K, replicates, seed, backend="numpy"):
    return fedmbo_stationarity(STAT_K_N, int(K), replicates, seed, backend)


def stationarity_at_speedup(n, replicates, seed, backend="numpy"):
    """At ``K(ε, n) = ⌈C ε⁻²/n⌉`` with ``C ε⁻² = 6400`` (``ε`` fixed)."""
    return fedmbo_stationarity(int(n), iterations_for(1.0, int(n), SPEEDUP_NK), replicates,
                               seed, backend)


def stationarity_at_epsilon(inv_eps, replicates, seed, backend="numpy"):
    """At ``K(ε) = ⌈1600 ε⁻²/n⌉``, ``n = 8``; the swept variable is ``1/ε``."""
    return fedmbo_stationarity(EPS_N, iterations_for(1.0 / float(inv_eps), EPS_N, EPS_C),
                               replicates, seed, backend)


# =============================================================================================
# Inner loop (Algorithm 1 lines 4–12, Lemma 5): minibatch SGD vs FedAvg
# =============================================================================================

INNER_TAU = 10  # FedAvg local steps


@functools.cache
def inner_problem(noise: float = 0.0, clients: int = 100) -> QuadraticBilevel:
    """The inner-loop instance (dense 2×2 blocks); ``clients = 10⁶`` on a GPU (:data:`GPU_CLIENTS`)."""
    return QuadraticBilevel.random(clients=clients, dim_x=2, dim_y=2, kappa=10.0, heterogeneity=1.0,
                                   noise=noise, seed=0, storage="dense")


def inner_point(problem: QuadraticBilevel | None = None) -> np.ndarray:
    """``x = 7v`` with ``v`` the top right-singular vector of ``J = Ā⁻¹B̄`` of ``problem``
    (default :func:`inner_problem`) (``‖y*(x)‖`` large: there the Hessian heterogeneity
    dominates the client gradients at ``y*``)."""
    J = (problem or inner_problem()).host._closed["J"]
    return 7.0 * np.linalg.svd(J)[2][0]


def _inner_mse(solver, problem, n, replicates, seed, backend, burn=100, steps=200, **kw):
    """Time average over ``steps`` rounds (after ``burn``) of ``‖y_t − y*(x)‖²``, from
    ``y₀ = y*(x)``, step ``β = 1/(2ℓ_{g,1})`` (Lemma 5's largest)."""
    x = inner_point(problem)
    ys = np.asarray(problem.y_star(x), float)
    beta = 1.0 / (2.0 * problem.constants["ell_g1"])
    ctx = make_context(problem, replicates, seed, backend)
    X, y = _batch(ctx, x), _batch(ctx, ys)
    y = solver(ctx, X, y, burn, lambda t: beta, int(n), replace=True, **kw)
    acc = np.zeros(replicates)
    for _ in range(steps):
        y = solver(ctx, X, y, 1, lambda t: beta, int(n), replace=True, **kw)
        acc += ((_host(ctx, y) - ys) ** 2).sum(axis=-1)
    return acc / steps


def inner_drift(n, replicates, seed, backend="numpy", clients=100):
    """``value``: minibatch SGD's stationary ``E‖y − y*(x)‖²``; ``contrast``: FedAvg's
    (``τ = 10`` local steps of ``β/τ``), both with ``n`` clients sampled with replacement."""
    problem = inner_problem(clients=clients)
    return {"value": _inner_mse(minibatch_sgd, problem, n, replicates, seed, backend),
            "contrast": _inner_mse(fedavg, problem, n, replicates, _child_seed(seed, 1), backend,
                                   local_steps=INNER_TAU)}


LEMMA5_T = 8


def inner_lemma5(n, replicates, seed, backend="numpy"):
    """``‖y^{k,T} − y*(x)‖²`` after ``T = 8`` minibatch-SGD steps from ``y = 0`` against
    Lemma 5's ``(1 − βμ_g)^T‖y⁰ − y*‖² + 4(σ_{g,1}² + σ_g²)Tβ²/(nS)``."""
    problem = inner_problem(noise=0.5)
    c = problem.constants
    x = inner_point()
    ys = np.asarray(problem.y_star(x), float)
    beta, S = 1.0 / (2.0 * c["ell_g1"]), 1
    ctx = make_context(problem, replicates, seed, backend)
    y = minibatch_sgd(ctx, _batch(ctx, x), _batch(ctx, np.zeros_like(ys)), LEMMA5_T,
                      lambda t: beta, int(n), S, replace=True)
    value = ((_host(ctx, y) - ys) ** 2).sum(axis=-1)
    bound = ((1 - beta * c["mu_g"]) ** LEMMA5_T * float(ys @ ys)
             + 4 * (c["sigma_g12"] + c["sigma_g2"]) * LEMMA5_T * beta ** 2 / (int(n) * S))
    return {"value": value, "bound": np.full(replicates, bound)}


# =============================================================================================
# Laws (all derived with bilevel_theory.rates)
# =============================================================================================

_S = sp.Symbol("S", positive=True)
_c_b = sp.Symbol("c_b", positive=True)
_c_K = sp.Symbol("c_K", positive=True)
_u = sp.Symbol("u", positive=True)  # 1/ε
_src = f"{SEED}, %s"


def _law(p: rates.Prediction) -> Law:
    return Law(*p.as_tuple())


def _simplified(b: rates.Bound) -> rates.Bound:
    """``b`` with ``((κ−1)/κ)^{log z/log(κ/(κ−1))}`` folded to ``1/z`` (sympy ``powdenest``)."""
    return dataclasses.replace(b, expr=sp.powdenest(b.expr, force=True))


_PROP1 = rates.BOUNDS["fedmbo.prop1_bias"]
PROP1_SQ = rates.Bound(
    "fedmbo.prop1_bias_squared", PAPER, _PROP1.source, _PROP1.expr ** 2,
    r"\|\bar H - \bar\nabla f\|^2", "le", {"N": "Neumann truncation", "kappa_g": "κ_g"},
    _PROP1.assumptions, (*_PROP1.notes, "squared: the measured quantity is ‖H̄ − ∇̄f‖²"))
PROP1_PROOF_SQ = rates.Bound(
    "fedmbo.prop1_bias_proof_squared", PAPER, rates.BOUNDS["fedmbo.prop1_bias_proof"].source,
    rates.BOUNDS["fedmbo.prop1_bias_proof"].expr ** 2, r"\|\bar H - \bar\nabla f\|^2", "le",
    {"N": "Neumann truncation", "kappa_g": "κ_g"}, _PROP1.assumptions,
    rates.BOUNDS["fedmbo.prop1_bias_proof"].notes)
THM1_N = _simplified(rates.BOUNDS["fedmbo.thm1"].derive(
    "fedmbo.thm1_N_chosen",
    {"N": -sp.log(_c_b * sp.sqrt(rates.n * rates.K))
          / (2 * sp.log((rates.kappa_g - 1) / rates.kappa_g))},
    "N = log(c_b√(nK))/(2 log(κ_g/(κ_g−1))) (≈ (κ_g/2) log(nK), inside Cor. 1's "
    "N = Ω(κ_g log K)): b² = κ_g²ℓ_{f,1}²/(c_b√(nK)); the claims fix N at the largest nK of the "
    "grid with c_b = 10³, so b² ≤ 10⁻³/√(nK) on every point",
    variables={"K": "outer iterations", "n": "sampled clients"}))
_a_eps, _a_n = (sp.nsimplify(a) for a in _iteration_exponents())
THM1_EPS = _simplified(THM1_N.derive(
    "fedmbo.thm1_at_K_eps", {"K": _c_K * _u ** (-_a_eps) * rates.n ** _a_n},
    f"K = c_K ε^{{{_a_eps}}} n^{{{_a_n}}} (Cor. 1's K(ε), exponents by inversion of "
    "fedmbo.cor1), u = 1/ε", variables={"u": "1/ε", "n": "sampled clients"}))
LEMMA5 = rates.Bound(
    "fedmbo.lemma5", PAPER, _src % "Lemma 5 [TEXT]",
    (1 - rates.beta * rates.mu_g) ** rates.T * rates.D0
    + 4 * (rates.sigma_g1 ** 2 + rates.sigma_g ** 2) * rates.T * rates.beta ** 2 / (rates.n * _S),
    r"\mathbb{E}\|y^{k+1} - y^*(x^k)\|^2", "le",
    {"n": "sampled clients", "T": "inner steps"}, ("A1–A5", "β ≤ 1/(2ℓ_{g,1})"),
    ("constant β_{k,t} = β, so Σ_t β² = Tβ²; D_0 = ‖y^k − y*(x^k)‖²",))
LEMMA5_STATIONARY = rates.Bound(
    "fedmbo.lemma5_stationary", PAPER, _src % "Lemma 5, eq. (14) [TEXT]",
    4 * rates.beta * (rates.sigma_g1 ** 2 + rates.sigma_g ** 2) / (rates.mu_g * rates.n * _S),
    r"\limsup_t \mathbb{E}\|y^{k,t} - y^*(x^k)\|^2", "le", {"n": "sampled clients"},
    ("A1–A5", "β ≤ 1/(2ℓ_{g,1})"),
    ("fixed point of the per-step recursion (14): e ≤ (1 − βμ_g)e + 4β²(σ_{g,1}² + σ_g²)/(nS)",))


def _prop2_law() -> Law:
    b = rates.BOUNDS["fedmbo.prop2_variance"]
    sym = rates.leading_exponent(b.expr, rates.N)
    return Law(float(sym), b.latex(),
               f"{b.source}: leading exponent in N of σ̃_f² (N does not appear): {sym}")


def _kg(problem) -> float:
    return problem.constants["kappa_g"]


# =============================================================================================
# Claims
# =============================================================================================

_TOUCH_PHE = ("PAPERS.md §2 Alg. 2 [NOTE]: d_i = ∇ₓf (eq. 6), Jacobian client c_i^{max N_i+1}",
              "Prop. 3 [NOTE]: clients sampled with replacement")
_TOUCH_THM1 = (
    "Thm 1 [NOTE]: β̄ of the proof (eq. 20) without the statement's 1/(2n) — identical here "
    "since L_yx = 0 (constant Hessians)",
    "Cor 1 [NOTE]: b = K^{-1/4} is not enough; N chosen so b² ≤ 10⁻³/√(nK)",
    "Cor 1 [NOTE]: ST = Ω(κ_q⁴) read as κ_g⁴",
    "Thm 1 [NOTE]: analysis for n < m; here clients sampled with replacement (Prop. 3's reading)")


def _thm1_schedule(extra: str) -> str:
    c = thm1_constants()
    return (f"α_k = min{{α̂₁, α̂₂, √(n/K)·α̂₃}}, β_{{k,t}} = β̄α_k/T (Thm 1), with the proof's "
            f"α̂₁ = 1/(2L_f + 4M_fL_y) = {c['alpha_hat1']:.4g} (eq. 18, L_yx = 0), β̄ = "
            f"5M_fL_y/μ_g = {c['beta_bar']:.4g} (eq. 20), T = {c['T']} (smallest with α̂₂ = "
            f"T/(2ℓ_{{g,1}}β̄) = {c['alpha_hat2']:.4g} ≥ α̂₁), S = {c['S']} (ST ≥ κ_g⁴; large so that "
            f"the O(1/K) inner-noise terms of eq. 22c stay small), "
            f"α̂₃ = 5·min(α̂₁, α̂₂) (the √(n/K) branch is active on every grid point: n/K ≤ "
            f"1/25), N = {c['N']} (b² = {c['b2']:.2g} ≤ 10⁻³/√(nK)); x⁰ = x* + 0.1·(1,1)/√2, "
            f"y⁰ = y*(x⁰); {extra}")


def _claims() -> list[Claim]:
    prob = phe_problem()
    kg = _kg(prob)
    geo = rates.law_for(PROP1_SQ, "log_ratio", "N", subs={"kappa_g": kg})
    kg3 = _kg(phe_problem(**BOUND_INSTANCE))
    claims = [
        Claim(
            id="fedmbo.phe_bias_vs_N", paper=PAPER,
            source=f"{SEED}, Proposition 1 (eq. 5) [TEXT]",
            statement=(r"\|\bar{H}(x^k, y^{k+1}) - \bar{\nabla} f(x^k, y^{k+1})\| \leq "
                       r"\kappa_g \ell_{f,1} ((\kappa_g - 1)/\kappa_g)^N"),
            kind="geometric", variable="N",
            quantity=r"\|\mathbb{E}[H_i] - \bar{\nabla} f\|^2",
            measure=phe_bias, scale="semilog",
            grid=_budgets(range(2, 9), range(1, 12), range(1, 15)),
            replicates=_reps(16, 64, 256),
            law=_law(geo), tolerance=round(0.1 * abs(geo.value), 4), window=(4, 8),
            schedule=("PHE (Alg. 2) alone at (x, y) = (1, 0), scale ℓ = ℓ_{g,1}, N swept; "
                      f"2^15 chains per replicate (clients with replacement), noise-free "
                      f"instance with κ_g = {kg:.3f}; ‖H̄ − ∇̄f‖² estimated without bias by "
                      "⟨ē₁ − ∇̄f, ē₂ − ∇̄f⟩ over two halves of the chains"),
            touches=(*_TOUCH_PHE,
                     "Prop. 1 [NOTE]: ℓ_{f,1} (statement) vs ℓ_{f,0} (proof): same ratio in N"),
            extra={"window_why": "N ≥ 4: the faster Neumann mode (ratio 1 − κμ/ℓ) has died out "
                                 "(local semilog slope within 1% of 2 log ρ); N ≤ 8: the "
                                 "squared bias stays ≫ its Monte-Carlo error at smoke budget"}),
        Claim(
            id="fedmbo.phe_bias_bound_stated", paper=PAPER,
            source=f"{SEED}, Proposition 1 (statement, b with ℓ_{{f,1}}) [TEXT]",
            statement=(r"\|\bar{H} - \bar{\nabla} f\| \leq b = \kappa_g \ell_{f,1} "
                       r"((\kappa_g - 1)/\kappa_g)^N"),
            kind="bounded_by", variable="N", quantity=r"\|\bar{H} - \bar{\nabla} f\|^2",
            measure=phe_bias_bound_stated, scale="semilog",
            grid=_budgets(range(1, 7), range(1, 11), range(1, 15)),
            replicates=_reps(16, 64, 128),
            law=_law(rates.law_for(PROP1_SQ, "bound")), tolerance=0.0,
            expected="violated",
            reason=(
                "Measured ‖H̄ − ∇̄f‖² is ≈ 4.7× the stated b² at every N (smoke: max mean/bound "
                "4.67 [4.67, 4.68] at N=1, above the bound at N = 1..6; standard: 4.69 [4.60, "
                "4.78], above at N = 1..10) at a point of the domain (‖x‖, ‖y*(x)‖ ≤ 10, the ball "
                f"on which the instance's ℓ_{{f,0}} holds; κ_g = {kg3:.2f}, coupling 2, instance "
                "seed 2). The bias is ‖B̄ᵀĀ⁻¹(I − Ā/ℓ)^N ∇_y f‖ → ‖B̄ᵀu₁‖·|u₁ᵀ∇_y f|ρ^N/μ_g: it "
                "scales with ‖∇_y f‖ ≤ ℓ_{f,0} (Assumption 1), not with the Lipschitz constant "
                "ℓ_{f,1} of ∇f (adding a linear term to f_i raises it without changing ℓ_{f,1}). "
                "The appendix proof derives ℓ_{f,0}: fedmbo.phe_bias_bound_proof holds at the same "
                "point (mean/bound ≈ 0.011)."),
            window=None,
            schedule=("PHE at x = ρv, y = y*(x) on the boundary of the radius-10 domain "
                      "(v ∝ Gᵀu₁, G = Rᵀ + SJ: the direction in which ∇_y f grows fastest along "
                      "the slowest Neumann mode u₁), 2^13 chains per replicate, noise-free, "
                      "coupling 2, instance seed 2"),
            touches=("Prop. 1 [NOTE]: the statement's ℓ_{f,1} vs the proof's ℓ_{f,0}",
                     *_TOUCH_PHE)),
        Claim(
            id="fedmbo.phe_bias_bound_proof", paper=PAPER,
            source=f"{SEED}, Proposition 1 (appendix proof, ℓ_{{f,0}}) [TEXT]",
            statement=(r"\|\bar{H} - \bar{\nabla} f\| \leq \kappa_g \ell_{f,0} "
                       r"(1 - 1/\kappa_g)^N"),
            kind="bounded_by", variable="N", quantity=r"\|\bar{H} - \bar{\nabla} f\|^2",
            measure=phe_bias_bound_proof, scale="semilog",
            grid=_budgets(range(1, 7), range(1, 11), range(1, 15)),
            replicates=_reps(16, 64, 128),
            law=_law(rates.law_for(PROP1_PROOF_SQ, "bound")), tolerance=0.0,
            schedule="as fedmbo.phe_bias_bound_stated (same instance and point)",
            touches=("Prop. 1 [NOTE]: the statement's ℓ_{f,1} vs the proof's ℓ_{f,0}",
                     *_TOUCH_PHE)),
        Claim(
            id="fedmbo.phe_variance_vs_clients", paper=PAPER,
            source=f"{SEED}, Proposition 3 [TEXT]",
            statement=(r"\mathbb{E}\|\frac{1}{n}\sum_{i=1}^n (H_i - \bar{H})\|^2 \leq "
                       r"\tilde{\sigma}_f^2 / n"),
            kind="matches", variable="n",
            quantity=r"\|\frac{1}{n}\sum_i H_i - \bar{H}\|^2",
            measure=phe_variance,
            grid=_budgets([2 ** k for k in range(9)], [2 ** k for k in range(11)],
                          [2 ** k for k in range(13)]),
            replicates=_reps(64, 256, 1024),
            gpu_scale=_gpu(1024),
            law=_law(rates.law_for("fedmbo.prop3_variance", "exponent", "n")), tolerance=0.1,
            schedule=(f"PHE (Alg. 2) with N = {VAR_N}, ℓ = ℓ_{{g,1}}, n chains sampled with "
                      "replacement, at (x, y) = (1, 0); σ_f = σ_{g,1} = 1, Hessian noise 0.5; "
                      "H̄ in closed form"),
            touches=_TOUCH_PHE),
        Claim(
            id="fedmbo.ihgp_variance_contrast", paper=PAPER,
            source=f"{SEED}, Proposition 3 and §3.2 (FedNest's shared IHGP) [TEXT]",
            statement=(r"\mathrm{PHE:}\ \mathbb{E}\|\frac{1}{n}\sum_i H_i - \bar{H}\|^2 "
                       r"\propto n^{-1};\ \mathrm{FedNest\ shared}\ p_{N'}\mathrm{:\ no}"),
            kind="contrast", variable="n",
            quantity=r"\|h - \bar{H}\|^2",
            measure=phe_vs_ihgp_variance,
            grid=_budgets([2 ** k for k in range(9)], [2 ** k for k in range(11)],
                          [2 ** k for k in range(13)]),
            replicates=_reps(64, 256, 1024),
            gpu_scale=_gpu(1024),
            law=_law(rates.law_for("fedmbo.prop3_variance", "exponent", "n")), tolerance=0.1,
            schedule=(f"value: PHE as fedmbo.phe_variance_vs_clients; contrast: FedNest's "
                      f"FedIHGP (one chain, one truncation N' ~ U{{0..{VAR_N - 1}}}, |S_l| = n) "
                      "then h = mean_{i∈S}(∇ₓf_i − ∇²_{xy}g_i p_{N'}), |S| = n, both with "
                      "replacement; same instance, point, N and closed-form mean H̄"),
            touches=(*_TOUCH_PHE, "FedNest Alg. 3 with the paper's random truncation")),
        Claim(
            id="fedmbo.phe_variance_vs_N", paper=PAPER,
            source=f"{SEED}, Proposition 2 (σ̃_f², following Hong et al. 2020 Lemma 1) [TEXT]",
            statement=r"\mathbb{E}\|H_i - \bar{H}\|^2 \leq \tilde{\sigma}_f^2",
            kind="at_most", variable="N", quantity=r"\mathbb{E}\|H_i - \bar{H}\|^2",
            measure=phe_single_variance,
            grid=_budgets([2 ** k for k in range(2, 9)], [2 ** k for k in range(2, 11)],
                          [2 ** k for k in range(2, 13)]),
            replicates=_reps(32, 128, 512),
            law=_prop2_law(), tolerance=0.1, window=(16, 4096),
            expected="violated",
            reason=(
                "σ̃_f² does not depend on N, but the measured E‖H_i − H̄‖² grows linearly in N: "
                "log–log slope 0.91 [0.82, 0.98] over N ∈ [16, 256] (smoke), 0.97 [0.91, 1.01] "
                "over N ∈ [16, 1024] (standard), far above 0 + 0.1. With N' ~ U{0..N−1} and the "
                "N/ℓ scaling, Jensen gives E‖p_i‖² ≥ (N/ℓ²) Σ_{j<N} ‖(I − Ā/ℓ)^j ∇_y f‖² ≥ "
                "N (u₁ᵀ∇_y f)²/(ℓ²(1 − ρ²)) = Θ(N): the short chains (probability 1/N each) carry "
                "weight N/ℓ. So Prop. 2 fails once N exceeds ~σ̃_f²ℓμ_g/(‖∇²_{xy}g‖‖∇_y f‖)²; "
                "Prop. 3 and Thm 1 then carry σ̃_f² = Θ(N) = Θ(κ_g log K) under Cor. 1's N: an "
                "extra log K factor (the 1/n speedup itself is unaffected)."),
            schedule=("PHE at (x, y) = (1, 0), noise-free instance, 256 chains per replicate, "
                      "N swept; H̄ in closed form"),
            touches=(*_TOUCH_PHE,
                     "Prop. 2 is cited from Hong et al. 2020 (no proof in the paper)"),
            extra={"window_why": "N ≥ 16: the N-independent client-heterogeneity part of the "
                                 "variance is negligible"}),
    ]
    thm_n = rates.law_for(THM1_N, "exponent_at_order", "K", second="n")
    thm_K = rates.law_for(THM1_N, "exponent", "K")
    speed = rates.law_for(THM1_EPS, "exponent_at_order", "u", second="n")
    comp = rates.law_for(THM1_EPS, "exponent", "u")
    stat_q = r"\frac{1}{K}\sum_{k<K} \|\nabla \Phi(x^k)\|^2"
    claims += [
        Claim(
            id="fedmbo.stationarity_vs_n", paper=PAPER, source=f"{SEED}, Theorem 1 [TEXT]",
            statement=(r"\frac{1}{K}\sum_k \mathbb{E}\|\nabla f(x^k)\|^2 = O((\hat{\alpha}_3 + "
                       r"\hat{\alpha}_3^{-1})/\sqrt{nK} + 1/K + b^2)"),
            kind="at_most", variable="n", quantity=stat_q, measure=stationarity_vs_n,
            grid=_budgets([2, 4, 8, 16, 32], [2, 3, 4, 6, 8, 12, 16, 24, 32],
                          [2, 3, 4, 6, 8, 12, 16, 24, 32]),
            replicates=_reps(32, 128, 512),
            law=_law(thm_n), tolerance=0.1,
            schedule=_thm1_schedule(f"K = {STAT_N_K} fixed, n swept (with replacement)"),
            touches=_TOUCH_THM1,
            extra={"window_why": "whole grid: αμ_ΦK ≥ 8 at its smallest n (the transient "
                                 "(1 − αμ_Φ)^{2K} is negligible)"}),
        Claim(
            id="fedmbo.stationarity_vs_K", paper=PAPER, source=f"{SEED}, Theorem 1 [TEXT]",
            statement=(r"\frac{1}{K}\sum_k \mathbb{E}\|\nabla f(x^k)\|^2 = O((\hat{\alpha}_3 + "
                       r"\hat{\alpha}_3^{-1})/\sqrt{nK} + 1/K + b^2)"),
            kind="at_most", variable="K", quantity=stat_q, measure=stationarity_vs_K,
            grid=_budgets([200, 400, 800, 1600], [round(200 * 2 ** (j / 2)) for j in range(11)],
                          [round(200 * 2 ** (j / 2)) for j in range(15)]),
            replicates=_reps(32, 128, 512),
            law=_law(thm_K), tolerance=0.1,
            schedule=_thm1_schedule(f"n = {STAT_K_N} fixed, K swept; α depends on K"),
            touches=_TOUCH_THM1),
        Claim(
            id="fedmbo.linear_speedup", paper=PAPER,
            source=f"{SEED}, Corollary 1 (K = O(κ_g⁵ε⁻²/n)) [TEXT]",
            statement=r"K(\epsilon) = O(\kappa_g^5 \epsilon^{-2} / n)",
            kind="matches", variable="n", quantity=stat_q + r"\ \mathrm{at}\ K = C/(n\epsilon^2)",
            measure=stationarity_at_speedup,
            grid=_budgets([2, 4, 8, 16], [2, 3, 4, 6, 8, 12, 16], [2, 3, 4, 6, 8, 12, 16]),
            replicates=_reps(32, 128, 512),
            law=_law(speed), tolerance=0.1,
            schedule=_thm1_schedule(
                f"K(ε, n) = ⌈C ε⁻²/n⌉ (exponents −2, −1 by inversion of Cor. 1) with "
                f"C ε⁻² = {SPEEDUP_NK} fixed: K = {SPEEDUP_NK}/n, so α = √(n/K)α̂₃ ∝ n"),
            touches=_TOUCH_THM1),
        Claim(
            id="fedmbo.complexity_vs_epsilon", paper=PAPER,
            source=f"{SEED}, Corollary 1 (K = O(κ_g⁵ε⁻²/n)) [TEXT]",
            statement=(r"K = O(\epsilon^{-2}/n)\ \Rightarrow\ \frac{1}{K}\sum_k "
                       r"\mathbb{E}\|\nabla f(x^k)\|^2 = O(\epsilon)"),
            kind="at_most", variable="1/ε", quantity=stat_q + r"\ \mathrm{at}\ K(\epsilon)",
            measure=stationarity_at_epsilon,
            grid=_budgets([2 ** (j / 2) for j in range(5)], [2 ** (j / 4) for j in range(9)],
                          [2 ** (j / 4) for j in range(13)]),
            replicates=_reps(32, 128, 512),
            law=_law(comp), tolerance=0.1,
            schedule=_thm1_schedule(
                f"n = {EPS_N}, K(ε) = ⌈{EPS_C} ε⁻²/n⌉ (Cor. 1's exponents by inversion; "
                "ε in units where K(1) = 200); the swept variable is 1/ε"),
            touches=_TOUCH_THM1),
    ]
    claims += [
        Claim(
            id="fedmbo.inner_loop_drift", paper=PAPER,
            source=f"{SEED}, Lemma 5 (eq. 14) and §3.1 / Remark 2 [TEXT]",
            statement=(r"\limsup_t \mathbb{E}\|y^{k,t} - y^*(x^k)\|^2 \leq "
                       r"4\beta(\sigma_{g,1}^2 + \sigma_g^2)/(\mu_g n S)"),
            kind="contrast", variable="n",
            quantity=r"\mathbb{E}\|y^{k,t} - y^*(x^k)\|^2",
            measure=inner_drift,
            grid=_budgets([1, 2, 4, 8, 16, 32, 64, 128], [2 ** k for k in range(10)],
                          [2 ** k for k in range(11)]),
            replicates=_reps(16, 64, 128),
            gpu_scale=_gpu(128),
            law=_law(rates.law_for(LEMMA5_STATIONARY, "exponent", "n")), tolerance=0.1,
            schedule=("inner loop alone at a fixed x (x = 7v, v the top right-singular vector "
                      "of J; ‖y*(x)‖ large), y₀ = y*(x), β = 1/(2ℓ_{g,1}) (Lemma 5's largest), "
                      "n clients with replacement, S = 1, noise-free (σ_g² only: non-IID "
                      "Hessians κ = 10, heterogeneity 1); time average of ‖y_t − y*‖² over 200 "
                      "rounds after 100; value: minibatch SGD (Alg. 1 l. 4–12); contrast: "
                      f"FedAvg, τ = {INNER_TAU} local steps of β/τ"),
            touches=("Alg. 1 [NOTE]: inner update y^{k,t+1} = y^{k,t} − βG (§3.1, not the "
                     "box's typo)",),
            extra={"why": "minibatch SGD's stationary error is pure client-sampling variance "
                          "(∝ 1/n); FedAvg's is its drift bias² plus variance/n, flat once "
                          "n ≳ 40 on this instance"}),
        Claim(
            id="fedmbo.inner_loop_lemma5", paper=PAPER, source=f"{SEED}, Lemma 5 [TEXT]",
            statement=(r"\mathbb{E}\|y^{k+1} - y^*(x^k)\|^2 \leq (1 - \beta\mu_g)^T "
                       r"\|y^k - y^*(x^k)\|^2 + 4(\sigma_{g,1}^2 + \sigma_g^2) T \beta^2/(nS)"),
            kind="bounded_by", variable="n",
            quantity=r"\mathbb{E}\|y^{k+1} - y^*(x^k)\|^2",
            measure=inner_lemma5,
            grid=_budgets([1, 4, 16, 64], [2 ** k for k in range(9)], [2 ** k for k in range(11)]),
            replicates=_reps(64, 256, 1024),
            law=_law(rates.law_for(LEMMA5, "bound")), tolerance=0.0,
            schedule=(f"T = {LEMMA5_T} minibatch-SGD steps from y = 0 at x = 7v (as "
                      "fedmbo.inner_loop_drift), β = 1/(2ℓ_{g,1}), S = 1, σ_{g,1} = 0.5, n with "
                      "replacement; σ_g² = the instance's measured heterogeneity (sup over the "
                      "radius-10 ball)"),
            touches=("Lemma 5 is stated for partial participation (with replacement)",)),
    ]
    return claims


CLAIMS = _claims()
