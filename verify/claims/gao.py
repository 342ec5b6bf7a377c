"""Gao 2022 claims: "On the Convergence of Momentum-Based Algorithms for Federated Stochastic
Bilevel Optimization Problems" (Gao, arXiv preprint 2022, arXiv:2204.13299; LocalBSGM,
LocalBSGVRM in ``bilevel_theory/gao.py``; readings ``GAO-R*``/``GAO-I*`` in
``docs/papers/gao.md``).

**What the corollaries say, as measurable statements.**  Cor. 1 (LocalBSGM) and Cor. 2
(LocalBSGVRM) give a schedule ``T(ε), p(ε), η(ε), Q(ε)`` under which the achieved average

    ``A = (1/T) Σ_t ‖∇Φ(x̄_t)‖² + L̃²‖ȳ_t − y*(x̄_t)‖²``

is ``≤ ε`` (up to the constants of the O(·)).  "``T(ε)`` iterations suffice" is checked as
"at the schedule, ``A`` decays at least as fast as the schedule's cost grows": the sweep runs
the schedule at a grid of accuracies ``ε`` and ``A`` is fitted (log–log) against the iterations
``T(ε)`` (Cor. 1: ``A = O(T^{-1/2})`` ⟺ ``T = O(ε^{-2})``; Cor. 2: ``O(T^{-2/3})``) or against the
communication rounds ``T/p`` (``O((T/p)^{-2/3})``; Cor. 2: ``O((T/p)^{-1})``), kind ``at_most``.
The exponents are derived with ``bilevel_theory.rates`` from the bounds registered by
``bilevel_theory.gao.bounds`` (the bound of Thm. 1/2 at the corollary's schedule, ``ε``
eliminated through the corollary's cost).  Linear speedup (Cor. 1, Cor. 2) is ``A`` flat in
the number of devices ``K`` at the schedule ``T ∝ 1/K``.  Sweep points sit where the period
``p = c_p/(Kε^{1/2})`` is an integer ≥ 2, so the schedule is exactly the corollary's.

**Heterogeneous devices (findings).**  Eq. (3.1) gives device ``k`` its own Hessians (GAO-R3),
so both methods converge to the zero ``x̃`` of the device-averaged local estimator, in closed form
(:func:`bilevel_theory.gao.biased_stationary_point`): ``A ≥ ‖∇Φ(x̃)‖² − o(1)`` along the
schedule, a floor that no term of Thm. 1/2 carries.  The claims assert Cor. 1/2's ``A ≤ ε``
itself (``bounded_by``, bound ``ε``) at sweep points whose ``ε`` lies below that floor; the
repair (every device given the devices' mean Hessians, gradients still heterogeneous) must
make it hold.

**Truncation bias.**  ``Δ_Q = (1−θμ)^{Q+1}L₀L₁/μ`` is checked where it is tightest: on the
instance and at the point of the domain where the bias is largest relative to ``Δ_Q``
(scipy.optimize over the instance knobs, :func:`search_worst_neumann_instance`, and over the
domain, :func:`worst_truncation_bias`), with the smallest admissible constants of A1–A2 on the
domain (:func:`exact_constants`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np
import sympy as sp

from bilevel_theory import make_context, run
from bilevel_theory import rates as R_
from bilevel_theory.estimators import theta_q
from bilevel_theory.gao import (
    biased_stationary_point,
    default_theta,
    gao_constants,
    theorem1_limits,
    theorem1_schedule,
    theorem2_eta,
    theorem2_momentum,
    theorem2_schedule,
)
from bilevel_theory.law_cache import cached_derivation
from bilevel_theory.problems import QuadraticBilevel
from bilevel_theory.problems.families import Dense, Shared

from ..claim import Condition, Law, Mutant
from ..kit import PaperClaims, law, lower_level_conditions, per_budget, per_replicate

P_ = PaperClaims("gao")

DIM = 2                 # dim_x = dim_y of the rate instances
KAPPA = 2.0             # condition number of every ∇²_yy g_k
UPPER_MU = 0.5          # strong convexity of f (Φ strongly convex)
NOISE = 4.0             # gradient noise std σ
SPEEDUP_NOISE = 8.0     # σ of the K-sweep (the noise term, where the 1/K is, dominates)
HESSIAN_NOISE = 0.3     # Hessian/Jacobian noise std
HETEROGENEITY = 1.0     # h of the heterogeneous instance
HET_SEED = 1
DEVICES = 8             # K of the ε-sweeps
THETA_L1 = 0.8          # θ = 0.8/L₁ < 1/L₁
C_Q = 1.0               # (1 − θμ)^{2(Q+1)} ≤ ε^{c_Q}: 4Δ_Q² = O(ε), as Cor 1/2 need
FIXED_PERIOD = 2        # the period of the "period_fixed" mutants


# ================================================================================ instances

@functools.lru_cache(maxsize=4)
def _one_client(noise: float = NOISE) -> QuadraticBilevel:
    return QuadraticBilevel.random(clients=1, dim_x=DIM, dim_y=DIM, kappa=KAPPA,
                                   heterogeneity=0.0, noise=noise, hessian_noise=HESSIAN_NOISE,
                                   seed=0, upper_mu=UPPER_MU, storage="dense")


@functools.lru_cache(maxsize=16)
def homogeneous(devices: int, noise: float = NOISE) -> QuadraticBilevel:
    """``devices`` identical copies of one client (``h = 0``): the same Φ, ``x*`` and constants
    for every ``K`` (``QuadraticBilevel.random(h=0)`` would draw a different instance per K)."""
    b = _one_client(noise)

    def tiled(F):
        return Dense(np.repeat(np.asarray(F.dense_range(0, 1)), devices, axis=0))

    return replace(b, A=tiled(b.A), B=tiled(b.B), R=Shared(b.R.dense(0), devices),
                   S=Shared(b.S.dense(0), devices),
                   c=np.repeat(np.asarray(b.c), devices, 0),
                   p=np.repeat(np.asarray(b.p), devices, 0),
                   q=np.repeat(np.asarray(b.q), devices, 0),
                   spec={**b.spec, "clients": devices, "tiled": True})


@functools.lru_cache(maxsize=4)
def heterogeneous(devices: int = DEVICES) -> QuadraticBilevel:
    """Heterogeneous devices (A4 holds with the measured ``δ²``), exact oracles: the floor,
    not the noise, is what the heterogeneous claims test (every replicate is the same run)."""
    return QuadraticBilevel.random(clients=devices, dim_x=DIM, dim_y=DIM, kappa=KAPPA,
                                   heterogeneity=HETEROGENEITY, noise=0.0, hessian_noise=0.0,
                                   seed=HET_SEED, upper_mu=UPPER_MU, storage="dense")


@functools.lru_cache(maxsize=4)
def shared_hessians(devices: int = DEVICES) -> QuadraticBilevel:
    """The repair of GAO-R3: :func:`heterogeneous` with every device's ``∇²_{yy}g^{(k)}`` and
    ``∇²_{xy}g^{(k)}`` replaced by the devices' mean (the gradients' linear terms stay
    heterogeneous), so the device average of eq. (3.1) is ``∇Φ`` and ``x̃`` is ``x*`` up to the
    truncation bias."""
    P = heterogeneous(devices)
    K = P.clients
    A = np.asarray(P.A.dense_range(0, K)).mean(axis=0)
    B = np.asarray(P.B.dense_range(0, K)).mean(axis=0)
    return replace(P, A=Shared(A, K), B=Shared(B, K),
                   spec={**P.spec, "shared_hessians": True})


@functools.lru_cache(maxsize=4)
def neumann_instance() -> QuadraticBilevel:
    """Noise-free heterogeneous instance for the θ/Q decay (dims 3, κ = 5: several modes)."""
    return QuadraticBilevel.random(clients=8, dim_x=3, dim_y=3, kappa=5.0, heterogeneity=0.5,
                                   noise=0.0, seed=0)


def _theta(problem) -> float:
    return THETA_L1 / gao_constants(problem)["L1"]


# ---------------------------------------------------------------- the truncation bias, tightest

def _ball_max(M: np.ndarray, b: np.ndarray, dx: int, r: float, starts: int = 8,
              seed: int = 0) -> float:
    """``max ‖M z + b‖`` over ``z = (x, y)``, ``‖x‖ ≤ r``, ``‖y‖ ≤ r`` (the domain of ``L₀``):
    SLSQP from the top right singular vector (both signs) and ``starts`` random points; the
    solutions are projected onto the domain before they are evaluated (a lower bound of the
    maximum, so a bias found here is attained)."""
    from scipy.optimize import minimize  # noqa: PLC0415

    d = M.shape[1]
    rng = np.random.default_rng(seed)

    def proj(z):
        z = z.copy()
        for part in (slice(0, dx), slice(dx, d)):
            n = np.linalg.norm(z[part])
            if n > r:
                z[part] *= r / n
        return z

    def obj(z):
        e = M @ z + b
        return -float(e @ e), -2.0 * (M.T @ e)

    in_x = np.arange(d) < dx
    cons = [{"type": "ineq", "fun": lambda z: r * r - z[in_x] @ z[in_x],
             "jac": lambda z: -2.0 * z * in_x},
            {"type": "ineq", "fun": lambda z: r * r - z[~in_x] @ z[~in_x],
             "jac": lambda z: -2.0 * z * ~in_x}]
    v = np.linalg.svd(M)[2][0]
    best = float(np.linalg.norm(b))
    for z0 in [v, -v, *rng.standard_normal((starts, d))]:
        z0 = proj(z0 * 10 * r)
        res = minimize(obj, z0, jac=True, constraints=cons, method="SLSQP")
        best = max(best, float(np.linalg.norm(M @ proj(res.x) + b)))
    return best


def exact_constants(problem) -> dict[str, float]:
    """The smallest constants of A1–A2 on the domain ``‖x‖, ‖y‖ ≤ radius``: ``L0 = max_k
    max ‖∇f^{(k)}‖`` (scipy.optimize, :func:`_ball_max`), ``L1 = max_k max(‖∇²f^{(k)}‖,
    ‖∇²g^{(k)}‖)`` (exact spectral norms), ``mu = min_k λ_min(∇²_{yy}g^{(k)})``; GAO-R8."""
    h = problem.host
    dx, r = h.dim_x, h.radius
    L0 = L1 = 0.0
    mu = math.inf
    for k in range(h.clients):  # constants of a small instance, once (not a hot path)
        c = h.client(k)
        Hf = np.block([[c["P"], c["R"]], [c["R"].T, c["S"]]])
        Hg = np.block([[c["Gxx"], -c["B"].T], [-c["B"], c["A"]]])
        L1 = max(L1, float(np.linalg.norm(Hf, 2)), float(np.linalg.norm(Hg, 2)))
        mu = min(mu, float(np.linalg.eigvalsh(c["A"])[0]))
        L0 = max(L0, _ball_max(Hf, np.concatenate([c["p"], c["q"]]), dx, r, seed=k))
    return dict(L0=L0, L1=L1, mu=mu)


def worst_truncation_bias(problem, theta: float, Q: int) -> float:
    """``max_k max_{‖x‖, ‖y‖ ≤ r} ‖∇²_{xy}g^{(k)}(Ĥ_k − [∇²_{yy}g^{(k)}]⁻¹)∇_y f^{(k)}(x, y)‖``:
    ``Ĥ_k`` from the implemented series (:func:`~bilevel_theory.estimators.theta_q` on the
    basis vectors, exact oracles), the maximum over the domain by :func:`_ball_max` (the map
    is affine in ``(x, y)``)."""
    h = problem.host
    K, dx, dy, r = h.clients, h.dim_x, h.dim_y, h.radius
    ctx = make_context(h, 1, 0)
    idx = np.repeat(np.arange(K), dy)[None, :]                     # (1, K·dy): basis columns
    E = np.tile(np.eye(dy), (K, 1))[None]                          # (1, K·dy, dy)
    zeros_x, zeros_y = np.zeros((1, K * dy, dx)), np.zeros((1, K * dy, dy))
    Hhat = np.asarray(theta_q(ctx, idx, zeros_x, zeros_y, E, theta, int(Q)))[0]
    worst = 0.0
    for k in range(K):
        c = h.client(k)
        Hk = Hhat[k * dy:(k + 1) * dy].T                           # columns Ĥ_k e_j
        W = -c["B"].T @ (Hk - np.linalg.inv(c["A"]))
        worst = max(worst, _ball_max(W @ np.hstack([c["R"].T, c["S"]]), W @ c["q"], dx, r,
                                     seed=k))
    return worst


def truncation_bias_ratio(problem, theta: float, Q: int) -> float:
    """Worst bias / ``Δ_Q`` with the constants of :func:`exact_constants` (≤ 1 if Δ_Q holds)."""
    c = exact_constants(problem)
    bound = (1 - theta * c["mu"]) ** (Q + 1) * c["L0"] * c["L1"] / c["mu"]
    return worst_truncation_bias(problem, theta, Q) / bound


def _neumann_candidate(coupling: float, upper_mu: float, kappa: float,
                       seed: int) -> QuadraticBilevel:
    return QuadraticBilevel.random(clients=2, dim_x=1, dim_y=1, kappa=kappa, heterogeneity=0.1,
                                   noise=0.0, seed=seed, coupling=coupling, upper_mu=upper_mu,
                                   storage="dense")


#: the worst instance found by :func:`search_worst_neumann_instance` (seeds 0–7, Q = 20): at the
#: edge of the search box (coupling → ∞, upper_mu → 0 make the bound tight in the limit: then
#: ``‖∇²_{xy}g‖ → L₁`` and ``∇_y f`` carries all of ``L₀``); the tests re-run the search
NEUMANN_KNOBS = dict(coupling=100.0, upper_mu=0.01, kappa=1.0926, seed=3)


def search_worst_neumann_instance(seeds=range(8), Q: int = 20, maxfev: int = 80) -> dict:
    """Nelder–Mead over the instance knobs ``(log coupling, log upper_mu, log(κ − 1))`` in the
    box ``[0.1, 100] × [0.01, 10] × [0.01, 20]`` (inside the knobs' valid ranges), per seed, maximizing :func:`truncation_bias_ratio` (1-D devices:
    the bound is tight only when ``∇_y f`` meets the slowest mode at ``‖∇f‖ = L₀`` and
    ``‖∇²_{xy}g‖ = L₁``).  Returns the best knobs and ratio."""
    from scipy.optimize import minimize  # noqa: PLC0415

    def neg(z, seed):
        cp, um, km1 = np.exp(z)
        P = _neumann_candidate(cp, um, 1.0 + km1, seed)
        v = truncation_bias_ratio(P, default_theta(P), Q)
        return -v if np.isfinite(v) else 0.0

    bounds = [(math.log(0.1), math.log(100.0)), (math.log(1e-2), math.log(10.0)),
              (math.log(1e-2), math.log(20.0))]
    best = dict(ratio=-1.0)
    for seed in seeds:
        res = minimize(neg, np.log([10.0, 0.1, 1.0]), args=(seed,), method="Nelder-Mead",
                       bounds=bounds, options=dict(maxfev=maxfev, xatol=1e-2, fatol=1e-4))
        if -res.fun > best["ratio"]:
            cp, um, km1 = np.exp(res.x)
            best = dict(coupling=float(cp), upper_mu=float(um), kappa=1.0 + float(km1),
                        seed=int(seed), ratio=float(-res.fun))
    return best


@functools.lru_cache(maxsize=1)
def worst_neumann_instance() -> QuadraticBilevel:
    return _neumann_candidate(**NEUMANN_KNOBS)


@functools.lru_cache(maxsize=1)
def _worst_constants() -> dict[str, float]:
    return exact_constants(worst_neumann_instance())


# ================================================================================ schedules

@dataclass(frozen=True)
class Cor1Design:
    """Cor. 1's schedule ``T = c_T κ⁵/(Kε²)``, ``p = c_p/(Kε^{1/2})``, ``η = c_η Kε``,
    ``Q = O(log 1/ε)``, with ``c_T, c_p, c_η`` fixed by one reference point: at ``K = K_ref``,
    ``ε = eps_ref`` the schedule gives ``p = p_ref``, ``η = eta_ref``, ``T = T_ref``."""

    K_ref: int
    eps_ref: float
    p_ref: int
    eta_ref: float
    T_ref: float
    alpha: float = 1.0
    beta: float = 1.0
    rho1_L1: float = 0.5
    rho2_L1: float = 1.0

    def constants(self, problem) -> dict:
        kap = gao_constants(problem)["kappa"]
        return dict(c_p=self.p_ref * self.K_ref * math.sqrt(self.eps_ref),
                    c_eta=self.eta_ref / (self.K_ref * self.eps_ref),
                    c_T=self.T_ref * (1 - 1e-9) * self.K_ref * self.eps_ref ** 2 / kap ** 5)

    def epsilon_at_iterations(self, T: float) -> float:
        """Cor. 1 inverted at ``K = K_ref``: ``T = T_ref(ε_ref/ε)²``."""
        return self.eps_ref * math.sqrt(self.T_ref / T)

    def epsilon_at_rounds(self, C: float) -> float:
        """``T/p = (T_ref/p_ref)(ε_ref/ε)^{3/2}`` inverted."""
        return self.eps_ref * (self.T_ref / self.p_ref / C) ** (2 / 3)

    def hyperparameters(self, problem, eps: float) -> tuple[int, dict, dict]:
        g = gao_constants(problem)
        s = theorem1_schedule(problem, eps, c_Q=C_Q, theta=_theta(problem),
                              **self.constants(problem))
        if s["notes"]:
            raise ValueError(f"Cor. 1 schedule infeasible at ε = {eps:.4g}: {s['notes']}")
        hp = dict(period=s["period"], eta=s["eta"], neumann_steps=s["neumann_steps"],
                  theta=s["theta"], alpha=self.alpha, beta=self.beta,
                  rho1=self.rho1_L1 / g["L1"], rho2=self.rho2_L1 / g["L1"])
        return s["rounds"], hp, s


@dataclass(frozen=True)
class Cor2Design:
    """Cor. 2's schedule ``T = c_T κ³/(Kε^{3/2})``, ``p = c_p/(Kε^{1/2})``, ``S = p``,
    ``Q = O(log 1/ε)``, Thm. 2's ``α = β`` and ``η_t``; ``c_T, c_p`` fixed by the reference point
    (``K_ref``, ``eps_ref``) ↦ (``p_ref``, ``T_ref``)."""

    K_ref: int
    eps_ref: float
    p_ref: int
    T_ref: float
    rho: float = 1.0

    def constants(self, problem) -> dict:
        kap = gao_constants(problem)["kappa"]
        return dict(c_p=self.p_ref * self.K_ref * math.sqrt(self.eps_ref),
                    c_T=self.T_ref * (1 - 1e-9) * self.K_ref * self.eps_ref ** 1.5 / kap ** 3)

    def epsilon_at_iterations(self, T: float) -> float:
        return self.eps_ref * (self.T_ref / T) ** (2 / 3)

    def epsilon_at_rounds(self, C: float) -> float:
        return self.eps_ref * (self.T_ref / self.p_ref) / C

    def hyperparameters(self, problem, eps: float) -> tuple[int, dict, dict]:
        s = theorem2_schedule(problem, eps, c_Q=C_Q, rho1=self.rho, theta=_theta(problem),
                              **self.constants(problem))
        if s["notes"]:
            raise ValueError(f"Cor. 2 schedule infeasible at ε = {eps:.4g}: {s['notes']}")
        hp = {k: s[k] for k in ("period", "minibatch", "alpha", "beta", "eta", "rho1",
                                "neumann_steps", "theta")}
        hp["rho2"] = self.rho
        return s["rounds"], hp, s


#: ε-sweeps of LocalBSGM: at ε_ref = 0.01, K = 8: p = 2, η = 0.125, T = 320 (ηT = 40)
M_DESIGN = Cor1Design(K_ref=DEVICES, eps_ref=0.01, p_ref=2, eta_ref=0.125, T_ref=320)
#: K-sweep of LocalBSGM at ε = 0.01: K = 16 ↦ p = 2, η = 0.125, T = 320 (p = 32/K, T = 5120/K)
K_DESIGN = Cor1Design(K_ref=16, eps_ref=0.01, p_ref=2, eta_ref=0.125, T_ref=320)
#: ε-sweeps of LocalBSGVRM: at ε_ref = 0.01, K = 8: p = S = 2, T = 120 (η_t ≈ 1/(L̂p))
V_DESIGN = Cor2Design(K_ref=DEVICES, eps_ref=0.01, p_ref=2, T_ref=120)
#: K-sweep of LocalBSGVRM at ε = 0.01: K = 16 ↦ p = S = 2, T = 120 (p = 32/K, T = 1920/K)
KV_DESIGN = Cor2Design(K_ref=16, eps_ref=0.01, p_ref=2, T_ref=120)

# periods of the sweep points (p integer ⇒ the schedule is exactly the corollary's)
PERIODS = {"smoke": (2, 3, 4), "standard": (2, 3, 4, 5, 6), "full": (2, 3, 4, 5, 6, 7, 8)}
V_PERIODS = {"smoke": (2, 3, 4, 5), "standard": (2, 3, 4, 5, 6, 7, 8),
             "full": (2, 3, 4, 5, 6, 7, 8, 10, 12)}


def _grid(periods: dict, f) -> dict:
    return per_budget(*(tuple(f(p) for p in periods[b]) for b in ("smoke", "standard", "full")))


def _eps_of_period(design, p: int) -> float:
    """``ε`` at which ``p = c_p/(K_ref ε^{1/2})`` equals ``p`` exactly."""
    return design.eps_ref * (design.p_ref / p) ** 2


# ================================================================================ runs

def _achieved(trace, L_tilde: float) -> tuple[np.ndarray, np.ndarray]:
    """Per replicate: ``(1/T) Σ_t ‖∇Φ(x̄_t)‖²`` and ``(1/T) Σ_t L̃²‖ȳ_t − y*(x̄_t)‖²`` over the
    ``T`` iterates the theorems average (the last iterate ``x̄_T`` excluded)."""
    stat = trace.stationarity[:, :-1].mean(axis=1)
    inner = (L_tilde ** 2 * trace.inner_error[:, :-1]).mean(axis=1)
    return stat, inner


def _at_solution(problem) -> dict:
    """``x₀ = x*`` (the stationary point of Φ) and ``y₀ = y*(x*)``: the bound's transient terms
    vanish and only the floor (and the ε-terms) remain."""
    x = np.asarray(problem.x_star, dtype=float)
    return dict(x0=x, y0=np.asarray(problem.y_star(x), dtype=float))


def run_schedule(algorithm: str, design, problem, eps: float, replicates: int, seed: int,
                 backend: str = "numpy", override: dict | None = None,
                 run_on=None) -> dict:
    """Run ``algorithm`` with ``design``'s corollary schedule at accuracy ``eps`` (for
    ``problem``'s ``K``); ``override`` replaces hyperparameters (start points, mutants);
    ``run_on`` runs the schedule on another instance (a mutant).  Returns the achieved average,
    its parts, the ledger's totals and the schedule, per replicate."""
    T, hp, s = design.hyperparameters(problem, eps)
    hp.update(override or {})
    target = problem if run_on is None else run_on
    tr = run(algorithm, target, rounds=T, replicates=replicates, seed=seed, backend=backend,
             **hp)
    stat, inner = _achieved(tr, gao_constants(target)["L_tilde"])
    led = tr.ledger.totals()
    R = replicates
    return {"value": stat + inner, "stationarity_part": stat, "inner_part": inner,
            "diverged": tr.diverged.astype(float), "epsilon": per_replicate(eps, R),
            "iterations": per_replicate(T, R), "period": per_replicate(hp["period"], R),
            "neumann_steps": per_replicate(hp["neumann_steps"], R),
            "rounds": per_replicate(led["rounds"], R),
            "hvp_calls": per_replicate(led["hvp_calls"], R),
            "grad_calls": per_replicate(led["grad_calls"], R)}


def _check_mutant(mutant, allowed: tuple[str, ...]) -> None:
    if mutant is not None and mutant not in allowed:
        raise ValueError(f"`mutant` must be None or one of {list(allowed)}, got {mutant!r}")


def _fixed_period_vrm(problem, period: int, rho1: float) -> dict:
    """Thm. 2's ``S = p``, ``α = β`` and ``η_t`` at a fixed period (the period_fixed mutant)."""
    g = gao_constants(problem)
    K = problem.clients
    a = theorem2_momentum(K, period, g["L_hat"])
    return dict(period=period, minibatch=period, alpha=a, beta=a,
                eta=theorem2_eta(K, period, g["L_hat"], rho1, g["L_Phi"]))


# ------------------------------------------------------------------------ measures (one each)

def localbsgm_vs_iterations(T, replicates, seed, backend="numpy", *, mutant=None):
    """LocalBSGM at Cor. 1's schedule with ``T(ε) = T``, homogeneous devices.  Mutant
    ``eta_fixed``: ``η`` held at the reference ``c_η Kε_ref`` instead of ``O(Kε)``."""
    _check_mutant(mutant, ("eta_fixed",))
    eps = M_DESIGN.epsilon_at_iterations(float(T))
    over = {"eta": M_DESIGN.eta_ref} if mutant == "eta_fixed" else None
    return run_schedule("localbsgm", M_DESIGN, homogeneous(DEVICES), eps, replicates, seed,
                        backend, override=over)


def _single_term(mutant) -> dict | None:
    """Mutant ``single_term``: the Neumann series of eq. (3.2)–(3.3) cut to ``Q = 1`` at every
    ``ε`` (one Hessian-vector product per hypergradient)."""
    return {"neumann_steps": 1} if mutant == "single_term" else None


def localbsgm_vs_rounds(C, replicates, seed, backend="numpy", *, mutant=None):
    """LocalBSGM at Cor. 1's schedule with ``T(ε)/p(ε) = C``, homogeneous devices.  Mutant
    ``period_fixed``: ``p = 2`` at every ``ε``, so ``C`` rounds buy ``T = 2C`` iterations, run
    at Cor. 1's ``η(ε), Q(ε)`` for that ``T``; ``single_term``: :func:`_single_term`."""
    _check_mutant(mutant, ("period_fixed", "single_term"))
    if mutant == "period_fixed":
        eps = M_DESIGN.epsilon_at_iterations(FIXED_PERIOD * float(C))
        over = {"period": FIXED_PERIOD}
    else:
        eps, over = M_DESIGN.epsilon_at_rounds(float(C)), _single_term(mutant)
    return run_schedule("localbsgm", M_DESIGN, homogeneous(DEVICES), eps, replicates, seed,
                        backend, override=over)


def localbsgm_vs_devices(K, replicates, seed, backend="numpy", *, mutant=None):
    """LocalBSGM at Cor. 1's schedule at fixed ε = 0.01 with ``K`` homogeneous devices.  Mutant
    ``same_sample``: every device draws the same sample, so the device average carries one
    device's noise (run exactly as one device with the ``K``-device schedule)."""
    _check_mutant(mutant, ("same_sample",))
    P = homogeneous(int(K), SPEEDUP_NOISE)
    on = homogeneous(1, SPEEDUP_NOISE) if mutant == "same_sample" else None
    return run_schedule("localbsgm", K_DESIGN, P, K_DESIGN.eps_ref, replicates, seed, backend,
                        run_on=on)


def localbsgvrm_vs_iterations(T, replicates, seed, backend="numpy", *, mutant=None):
    """LocalBSGVRM at Cor. 2's schedule with ``T(ε) = T``, homogeneous devices.  Mutant
    ``independent_samples``: the two points of eq. (3.8) get independent samples."""
    _check_mutant(mutant, ("independent_samples",))
    eps = V_DESIGN.epsilon_at_iterations(float(T))
    over = {"same_sample": False} if mutant == "independent_samples" else None
    return run_schedule("localbsgvrm", V_DESIGN, homogeneous(DEVICES), eps, replicates, seed,
                        backend, override=over)


def localbsgvrm_vs_rounds(C, replicates, seed, backend="numpy", *, mutant=None):
    """LocalBSGVRM at Cor. 2's schedule with ``T(ε)/p(ε) = C``, homogeneous devices.  Mutant
    ``period_fixed``: ``p = S = 2`` (Thm. 2's ``α``, ``η_t`` at ``p = 2``), ``T = 2C``;
    ``single_term``: :func:`_single_term`."""
    _check_mutant(mutant, ("period_fixed", "single_term"))
    P = homogeneous(DEVICES)
    if mutant == "period_fixed":
        eps = V_DESIGN.epsilon_at_iterations(FIXED_PERIOD * float(C))
        over = _fixed_period_vrm(P, FIXED_PERIOD, V_DESIGN.rho)
    else:
        eps, over = V_DESIGN.epsilon_at_rounds(float(C)), _single_term(mutant)
    return run_schedule("localbsgvrm", V_DESIGN, P, eps, replicates, seed, backend,
                        override=over)


def localbsgvrm_vs_devices(K, replicates, seed, backend="numpy", *, mutant=None):
    """LocalBSGVRM at Cor. 2's schedule at fixed ε = 0.01 with ``K`` homogeneous devices.
    Mutant ``same_sample``: every device draws the same sample, so the device average carries
    one device's noise (run exactly as one device with the ``K``-device schedule)."""
    _check_mutant(mutant, ("same_sample",))
    P = homogeneous(int(K), SPEEDUP_NOISE)
    on = homogeneous(1, SPEEDUP_NOISE) if mutant == "same_sample" else None
    return run_schedule("localbsgvrm", KV_DESIGN, P, KV_DESIGN.eps_ref, replicates, seed,
                        backend, run_on=on)


def _heterogeneous(algorithm: str, design, T, replicates, seed, backend, mutant) -> dict:
    """``A`` at the corollary's schedule on :func:`heterogeneous` (or, mutant
    ``shared_hessians``, on :func:`shared_hessians`), started at ``x*``, against the
    corollary's ``A ≤ ε`` (``bound``); ``floor`` = ``‖∇Φ(x̃)‖²`` in closed form at the
    schedule's ``θ, Q``."""
    _check_mutant(mutant, ("shared_hessians",))
    P = shared_hessians() if mutant == "shared_hessians" else heterogeneous()
    eps = design.epsilon_at_iterations(float(T))
    out = run_schedule(algorithm, design, P, eps, replicates, seed, backend,
                       override=_at_solution(P))
    _, hp, _ = design.hyperparameters(P, eps)
    _, floor = biased_stationary_point(P, hp["theta"], hp["neumann_steps"])
    out["bound"] = per_replicate(eps, replicates)
    out["floor"] = per_replicate(floor, replicates)
    return out


def localbsgm_heterogeneous(T, replicates, seed, backend="numpy", *, mutant=None):
    """LocalBSGM at Cor. 1's schedule on heterogeneous devices: ``A`` against ``ε``."""
    return _heterogeneous("localbsgm", M_DESIGN, T, replicates, seed, backend, mutant)


def localbsgvrm_heterogeneous(T, replicates, seed, backend="numpy", *, mutant=None):
    """LocalBSGVRM at Cor. 2's schedule on heterogeneous devices: ``A`` against ``ε``."""
    return _heterogeneous("localbsgvrm", V_DESIGN, T, replicates, seed, backend, mutant)


#: LocalBSGVRM runs averaged into one replicate of gao.vrm_beats_m: its ``A·T/p`` varies
#: more (per-run CV ≈ 0.6) and costs less (T ∝ ε^{-3/2}) than LocalBSGM's (CV ≈ 0.2, T ∝ ε⁻²)
VRM_RUNS = 16


def vrm_vs_m(inv_eps, replicates, seed, backend="numpy", *, mutant=None):
    """Both methods at their corollary's schedule at the same ``ε``: ``value`` = LocalBSGVRM's
    ``A·(T/p)`` (achieved average × communication rounds from the ledger; each replicate the
    mean of ``VRM_RUNS`` independent runs), ``contrast`` = LocalBSGM's.  Mutant
    ``independent_samples``: the two points of eq. (3.8) get independent samples."""
    _check_mutant(mutant, ("independent_samples",))
    eps = 1.0 / float(inv_eps)
    P = homogeneous(DEVICES)
    ss = np.random.SeedSequence(int(seed)).generate_state(2)
    over = {"same_sample": False} if mutant == "independent_samples" else None
    v = run_schedule("localbsgvrm", V_DESIGN, P, eps, VRM_RUNS * replicates, int(ss[0]),
                     backend, override=over)
    m = run_schedule("localbsgm", M_DESIGN, P, eps, replicates, int(ss[1]), backend)

    def group(a, how="mean"):  # one replicate = VRM_RUNS independent LocalBSGVRM runs
        return getattr(np.asarray(a, float).reshape(replicates, VRM_RUNS), how)(axis=1)
    return {"value": group(v["value"] * v["rounds"]), "contrast": m["value"] * m["rounds"],
            "diverged": group(v["diverged"], "max"), "contrast_diverged": m["diverged"],
            "vrm_achieved": group(v["value"]), "vrm_rounds": group(v["rounds"]),
            "vrm_iterations": group(v["iterations"]), "m_achieved": m["value"],
            "m_rounds": m["rounds"], "m_iterations": m["iterations"]}


def _neumann_bias(Q: int, replicates: int, seed: int, backend: str) -> np.ndarray:
    """Mean over devices of ``‖∇²_{xy}g_k (Ĥ_k − [∇²_{yy}g_k]⁻¹) ∇_y f_k‖`` at ``replicates``
    random points ``x ∈ [−1, 1]^d``, ``y = y*(x)`` of :func:`neumann_instance` (exact oracle)."""
    P = neumann_instance()
    theta = default_theta(P)
    K, d = P.clients, P.dim_x
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, (replicates, d))
    y = np.asarray(P.y_star(x))
    ctx = make_context(P, replicates, seed, backend)
    xp = ctx.xp
    idx = xp.broadcast_to(xp.arange(K), (replicates, K))
    xb = xp.asarray(np.broadcast_to(x[:, None, :], (replicates, K, d)))
    yb = xp.asarray(np.broadcast_to(y[:, None, :], (replicates, K, P.dim_y)))
    v = ctx.oracle.grad_y_f(idx, xb, yb)
    w = theta_q(ctx, idx, xb, yb, v, theta, int(Q))
    A = xp.asarray(P.host.A.dense_range(0, K))
    # CuPy's solve does not broadcast batch dimensions: give A the replicates' axis explicitly
    A = xp.broadcast_to(A[None], (replicates,) + A.shape)
    exact = xp.linalg.solve(A, v[..., None])[..., 0]
    bias = ctx.oracle.jvp_xy_g(idx, xb, yb, w - exact)
    return ctx.oracle.backend.to_numpy(xp.sqrt((bias * bias).sum(axis=-1)).mean(axis=1))


def neumann_bias(Q, replicates, seed, backend="numpy"):
    """The θ/Q estimator's truncation bias at ``Q`` (noise-free, exact)."""
    return {"value": _neumann_bias(int(Q), replicates, seed, backend)}


def neumann_bias_with_bound(Q, replicates, seed, backend="numpy", *, mutant=None):
    """The worst truncation bias (:func:`worst_truncation_bias`, on the worst instance found by
    :func:`search_worst_neumann_instance`) against ``Δ_Q = (1−θμ)^{Q+1}L₀L₁/μ`` with the
    smallest admissible constants (:func:`exact_constants`).  Mutants of the bound:
    ``rate_squared`` (``(1−θμ)^{2(Q+1)}``), ``quarter`` (``Δ_Q/4``); of the estimator:
    ``theta_half`` (the series run with ``θ/2`` while the bound keeps ``θ``).  Deterministic:
    every replicate is the same number (``seed`` unused)."""
    _check_mutant(mutant, ("rate_squared", "quarter", "theta_half"))
    P, c, Q = worst_neumann_instance(), _worst_constants(), int(Q)
    theta = default_theta(P)
    rate = 1.0 - theta * c["mu"]
    power = 2 * (Q + 1) if mutant == "rate_squared" else Q + 1
    bound = rate ** power * c["L0"] * c["L1"] / c["mu"] / (4.0 if mutant == "quarter" else 1.0)
    worst = worst_truncation_bias(P, theta / 2 if mutant == "theta_half" else theta, Q)
    return {"value": per_replicate(worst, replicates), "bound": per_replicate(bound, replicates),
            "ratio": per_replicate(worst / bound, replicates),
            "L0": per_replicate(c["L0"], replicates), "L1": per_replicate(c["L1"], replicates),
            "mu": per_replicate(c["mu"], replicates)}


# ================================================================================ laws

_T, _C, _S = (sp.Symbol(n, positive=True) for n in ("T", "C", "s"))


@cached_derivation
def _law_via_cost(bound: str, cost: str, var: sp.Symbol, meaning: str) -> Law:
    """The exponent in ``var`` (the cost: iterations or rounds) of ``bound`` (Thm at the
    corollary's schedule, a function of ``ε``), with ``ε`` eliminated by ``var = cost(ε)``."""
    b, c = R_.BOUNDS[bound], R_.BOUNDS[cost]
    (eps_of,) = sp.solve(sp.Eq(c.expr, var), R_.eps)
    derived = b.derive(f"{bound}_vs_{var}", {"epsilon": eps_of},
                       f"ε eliminated through {cost}: {var} = {sp.sstr(c.expr)}",
                       variables={str(var): meaning})
    p = law(derived, "exponent", str(var))
    return Law(p.value, p.latex, p.derivation + f" (ε = {sp.sstr(eps_of)} from {cost})")


LAW_M_T = _law_via_cost("gao.cor1_schedule", "gao.cor1_iterations", _T, "iterations")
LAW_M_C = _law_via_cost("gao.cor1_schedule", "gao.cor1_communication", _C, "rounds T/p")
LAW_V_T = _law_via_cost("gao.cor2_schedule", "gao.cor2_iterations", _T, "iterations")
LAW_V_C = _law_via_cost("gao.cor2_schedule", "gao.cor2_communication", _C, "rounds T/p")


@cached_derivation
def _law_speedup() -> Law:
    b = R_.BOUNDS["gao.cor1_schedule"]
    val = R_.leading_exponent(b.expr, R_.K)
    return Law(float(val), b.latex(),
               f"{b.source}: leading exponent in K of Thm 1 at Cor 1's schedule (K cancels: "
               f"T ∝ 1/K, p ∝ 1/K, η ∝ K leave every term K-free): {val}")


@cached_derivation
def _law_product() -> tuple[Law, float]:
    """Exponent in ``1/ε`` of bound × rounds: LocalBSGVRM (the law) and LocalBSGM (reported)."""
    out = []
    for bound, cost in (("gao.cor2_schedule", "gao.cor2_communication"),
                        ("gao.cor1_schedule", "gao.cor1_communication")):
        expr = (R_.BOUNDS[bound].expr * R_.BOUNDS[cost].expr).subs(R_.eps, 1 / _S)
        out.append(R_.leading_exponent(expr, _S))
    v, m = out
    b = R_.BOUNDS["gao.cor2_schedule"]
    law = Law(float(v), r"(\epsilon\, T/p)_{\mathrm{Cor\ 2}} = \mathcal{O}(1),\quad "
                        r"(\epsilon\, T/p)_{\mathrm{Cor\ 1}} = \mathcal{O}(\epsilon^{-1/2})",
              f"{b.source}: leading exponent in s = 1/ε of gao.cor2_schedule × "
              f"gao.cor2_communication: {v} (LocalBSGM: gao.cor1_schedule × "
              f"gao.cor1_communication: {m})")
    return law, float(m)


@cached_derivation
def _law_speedup_vrm() -> Law:
    b = R_.BOUNDS["gao.cor2_schedule"]
    val = R_.leading_exponent(b.expr, R_.K, at=0)
    return Law(float(val), b.latex(),
               f"{b.source}: exponent in K of Thm 2 at Cor 2's schedule where T ≫ 1 (K → 0 in "
               f"T = c_T κ³/(Kε^{{3/2}})): the factor p/T + (KT)^{{-2/3}} is K-free (T, p ∝ 1/K), "
               f"the ln(T+1) terms fall with K and 4Δ_Q²(K(T+1))^{{2/3}} is K-free up to "
               f"(1 + 1/T)^{{2/3}}: {val} (as K → ∞ that term reads K^{{2/3}}, but only once "
               f"T < 1, outside Cor 2's range: T = p·(T/p) ≥ 2c_Tκ³/(c_pε))")


LAW_SPEEDUP = _law_speedup()
LAW_V_SPEEDUP = _law_speedup_vrm()
LAW_PRODUCT, PRODUCT_EXPONENT_M = _law_product()


@cached_derivation
def _law_neumann() -> Law:
    P = neumann_instance()
    return law("gao.neumann_bias", "log_ratio", "Q",
               subs={"theta": default_theta(P), "mu": P.constants["mu_g"]})


LAW_NEUMANN = _law_neumann()
LAW_NEUMANN_BOUND = law("gao.neumann_bias", "bound")
#: Cor. 1/2 assert ``A ≤ ε``: a bound given per point by the measure (``bound = ε``)
LAW_TARGET = Law(float("nan"), r"A \leq \epsilon",
                 "Cor 1 / Cor 2: the achieved average is at most the target accuracy ε at the "
                 "corollary's schedule; the bound at each point is that point's ε")



REPS_M = {"smoke": 16, "standard": 32, "full": 64}
REPS_V = {"smoke": 64, "standard": 192, "full": 512}


# ================================================================================ claims

_A = (r"\frac{1}{T}\sum_t \|\nabla\Phi(\bar x_t)\|^2 + \tilde L^2\|\bar y_t - y^*(\bar x_t)\|^2")

_M_SCHED = ("Cor 1 (constants chosen, rates not): T = c_T κ⁵/(Kε²), p = c_p/(Kε^{1/2}), η = c_η "
            "Kε, Q from (1−θμ)^{2(Q+1)} ≤ ε, θ = 0.8/L₁, α = β = 1, ρ₁ = 0.5/L₁, ρ₂ = 1/L₁; "
            "c_T, c_p, c_η fixed by K = 8, ε = 0.01 ↦ p = 2, η = 0.125, T = 320 (so T = "
            "320(0.01/ε)², p = 2(0.01/ε)^{1/2}, T/p = 160(0.01/ε)^{3/2}); sweep points ε = "
            "0.01(2/p)², p = 2, 3, 4 (smoke), …6 (standard), …8 (full); K = 8 devices")
_V_SCHED = ("Cor 2 / Thm 2 (constants chosen, rates not): T = c_T κ³/(Kε^{3/2}), p = S = "
            "c_p/(Kε^{1/2}), Q from (1−θμ)^{2(Q+1)} ≤ ε, θ = 0.8/L₁, Thm 2's α = β = "
            "L̂²/(3pK²) + L̂²/K and η_t = (K^{2/3}/L̂)/(w_t + t)^{1/3} (here η_t = 1/(L̂p) for "
            "every t ≤ T, since T < K²p³), ρ₁ = ρ₂ = 1; c_T, c_p fixed by K = 8, ε = 0.01 ↦ p = 2, "
            "T = 120 (so T = 120(0.01/ε)^{3/2}, T/p = 60(0.01/ε)); sweep points ε = 0.01(2/p)², "
            "p = 2…5 (smoke), …8 (standard), …12 (full); K = 8 devices")
_HOMOG = (f"homogeneous devices (h = 0: one client of QuadraticBilevel.random(dim {DIM}, κ = "
          f"{KAPPA:g}, upper_mu = {UPPER_MU:g}) tiled), gradient noise σ = {NOISE:g}, "
          f"Hessian noise {HESSIAN_NOISE:g}, x₀ = 1, y₀ = 0 (LocalBSGM) / y*(x₀) (LocalBSGVRM)")
_HETER = (f"heterogeneous devices (QuadraticBilevel.random(clients {DEVICES}, dim {DIM}, κ = "
          f"{KAPPA:g}, heterogeneity {HETEROGENEITY:g}, seed {HET_SEED}); A4 holds with the "
          "instance's δ²), exact oracles (σ = 0: the floor, not the noise, is tested; every "
          "replicate is the same run), started at x₀ = x*, y₀ = y*(x*) (the bound's transient "
          "terms vanish); value A against the bound ε of Cor 1/2 at each point (tolerance 0); "
          "metric floor = ‖∇Φ(x̃)‖² in closed form at the point's θ, Q")
_PERIOD_FIXED = (f"period held at p = {FIXED_PERIOD} instead of the corollary's p ∝ ε^{{-1/2}}: "
                 f"C rounds buy T = {FIXED_PERIOD}C iterations, run at the corollary's "
                 "η, Q for that T, so the rounds to reach ε grow as the iterations do")
_SINGLE_TERM = ("the Neumann series cut to Q = 1 (one Hessian-vector product per "
                "hypergradient) at every ε instead of the corollary's Q = O(log 1/ε): its "
                "truncation bias (1 − θμ)²L₀L₁/μ is a floor that A cannot go below")
_SHARED_HESSIANS = Mutant(
    "shared_hessians", "every device's ∇²_yy g^{(k)}, ∇²_xy g^{(k)} replaced by the devices' mean "
    "(gradients still heterogeneous): the device average of eq. (3.1) is then ∇Φ, x̃ = x* up to "
    "the truncation bias, and A ≤ ε holds", {"mutant": "shared_hessians"}, kind="repair")
_INDEPENDENT = ("the two points of eq. (3.8) get independent samples instead of the same "
                "ξ̂_t: the correction no longer cancels the noise, the momentum's error keeps a "
                "variance of order σ²/(αη²), which grows as η shrinks along the schedule")


def _floor_reason(design_name: str) -> str:
    P = heterogeneous()
    _, exact = biased_stationary_point(P, neumann_steps=None)
    return (
        f"Along {design_name}'s schedule the iterates converge to the zero x̃ of the "
        "device-averaged local estimator (eq. 3.1 gives device k its own Hessians, GAO-R3), so "
        "A ≥ ‖∇Φ(x̃)‖² − o(1) (the report's metric floor; with exact local inverses "
        f"‖∇Φ(x̃)‖² = {exact:.4g} in closed form on this instance), above every ε of the grid: "
        "A ≤ ε fails at each point. x̃ depends on neither η, p, T, ρ nor α, β, so no choice of "
        "the O-constants removes the floor. Mathematical reason: (1/K)Σ_k ∇²_{xy}g^{(k)}"
        "[∇²_{yy}g^{(k)}]^{-1}∇_y f^{(k)} ≠ ∇²_{xy}g[∇²_{yy}g]^{-1}∇_y f when the Hessians "
        "differ; Thm 1/2 carry the heterogeneity δ² only multiplied by terms the schedule "
        "drives to 0 (p²η² = O(ε) in Thm 1, A·ln(T+1) = Õ(ε) in Thm 2) plus 4Δ_Q² = O(ε), so "
        "no term of the bound carries this floor. The runs use practical step constants "
        "(GAO-R7); inside every step condition of Thm 1 the same floor contradicts Thm 1's "
        "bound as T → ∞ (gao.localbsgm_heterogeneous_limit, closed form).")


def _conditions(design, prob_of, eps_of, thm: int) -> tuple[Condition, ...]:
    """Thm 1 (``thm=1``) or Thm 2's hypotheses at the sweep point ``x`` of a claim whose
    instance is ``prob_of(x)`` and accuracy ``eps_of(x)``; the step constants ``ρ`` are left
    on purpose (GAO-R7) and, for Thm 2, the period cap (GAO-R5)."""
    def hp(x):
        return design.hyperparameters(prob_of(x), eps_of(x))[1]

    def L1(x):
        return gao_constants(prob_of(x))["L1"]
    conds = [Condition("θ < 1/L₁ (Thms 1, 2)", lambda x: hp(x)["theta"] * L1(x), 1.0,
                       relation="<"),
             Condition("p > 1 (Cor 1, 2: p = O(1/(Kε^{1/2})) > 1)", lambda x: hp(x)["period"],
                       1, relation=">")]
    if thm == 1:
        def lim(x):
            h = hp(x)
            return theorem1_limits(prob_of(x), h["alpha"], h["beta"], h["period"], h["rho2"])

        def eta_cap(x):
            h, g = hp(x), gao_constants(prob_of(x))
            a, b, r = h["alpha"], h["beta"], h["rho1"] ** 2 + h["rho2"] ** 2
            return min(1 / a, 1 / b, 1 / (2 * h["rho1"] * g["L_Phi"]),
                       1 / (3 * h["period"] * (a * a + b * b) ** 0.25 * r ** 0.25
                            * g["L_hat"] ** 0.5), 1.0)
        conds += [
            Condition("η < min{1/α, 1/β, 1/(2ρ₁L_Φ), 1/(3p(α² + β²)^{1/4}(ρ₁² + ρ₂²)^{1/4}"
                      "L̂^{1/2}), 1} (Thm 1)", lambda x: hp(x)["eta"], eta_cap, relation="<",
                      note="at the run's α, β, ρ₁, ρ₂ (GAO-R7) and L_Φ, L̂ of GAO-R1"),
            Condition("ρ₂ ≤ Thm 1's limit", lambda x: hp(x)["rho2"],
                      lambda x: lim(x)["rho2_max"], inside=False,
                      note="GAO-R7: the theorem's ρ limits would need 10⁵–10⁶ iterations per "
                           "point; practical ρ change the constants of the bound, not its rates"),
            Condition("ρ₁ ≤ Thm 1's limit (O(1/κ⁵))", lambda x: hp(x)["rho1"],
                      lambda x: lim(x)["rho1_max"], inside=False, note="GAO-R7, as for ρ₂")]
    else:
        def cap(x):
            h, g, K = hp(x), gao_constants(prob_of(x)), prob_of(x).clients
            return 1 / math.sqrt(288 * (2 + 4 * g["L_hat"] ** 2 / K)
                                 * (h["rho1"] ** 2 + h["rho2"] ** 2))

        def rho1_cap(x):
            g = gao_constants(prob_of(x))
            return min(hp(x)["rho2"] / (20 * g["kappa"] ** 2), g["mu"] / (1540 * g["L_hat"]), 1.0)
        conds += [
            Condition("S = p (Thm 2)", lambda x: hp(x)["minibatch"], lambda x: hp(x)["period"],
                      relation="=="),
            Condition("p ≤ 1/√(288(2 + 4L̂²/K)(ρ₁² + ρ₂²)) (Thm 2)", lambda x: hp(x)["period"],
                      cap, inside=False,
                      note="GAO-R5: Cor 2's p = O(1/(Kε^{1/2})) grows past any constant cap as "
                           "ε → 0; at ρ₁ = ρ₂ = 1 (GAO-R7) the cap is below 1/24"),
            Condition("ρ₂ ≤ min{μ/19720, 1/(6L₁), 1} (Thm 2)", lambda x: hp(x)["rho2"],
                      lambda x: min(gao_constants(prob_of(x))["mu"] / 19720, 1 / (6 * L1(x)),
                                    1.0), inside=False,
                      note="GAO-R7: practical ρ₁ = ρ₂ = 1"),
            Condition("ρ₁ ≤ min{ρ₂/(20κ²), μ/(1540L̂), 1} (Thm 2)", lambda x: hp(x)["rho1"],
                      rho1_cap, inside=False, note="GAO-R7: practical ρ₁ = ρ₂ = 1")]
    return tuple(conds)


def _assumption_conditions(prob_of, constants_of=None) -> tuple[Condition, ...]:
    """Assumptions 1–2 on the instance ``prob_of(x)``, as the series of eq. (3.2) uses them:
    ``μ > 0`` and ``‖∇²_{yy}g^{(k)}‖ ≤ L₁``, with :func:`gao_constants`'s ``L₁`` (or
    ``constants_of(x)["L1"]``, where the claim's bound uses other constants)."""
    consts = constants_of or (lambda x: gao_constants(prob_of(x)))
    return lower_level_conditions(
        prob_of, "g^{(k)} μ-strongly convex in y, μ > 0 (Assumption 1)",
        "∇g^{(k)} L₁-Lipschitz, so ‖∇²_{yy}g^{(k)}‖ ≤ L₁ (Assumption 2)",
        lambda x: consts(x)["L1"], "max_k λ_max(∇²_{yy}g^{(k)}) against the claim's L₁")


def _neumann_conditions(prob_of, constants_of, theta_of, q_zero: bool = False
                        ) -> tuple[Condition, ...]:
    """The hypotheses of ``Δ_Q`` (Sec. 3, eq. 3.2 and after Thm 1) at ``Q = x``: Assumptions
    1–2 (:func:`_assumption_conditions`), ``θ < 1/L₁`` (Thms 1, 2) and ``Q > 0`` (Sec. 3);
    ``q_zero``: the grid starts at ``Q = 0``, outside ``Q > 0`` on purpose."""
    note = ("the grid starts at Q = 0 (the series θI): outside the paper's Q > 0, where the "
            "bound Δ_Q = (1 − θμ)^{Q+1}L₀L₁/μ is still defined and is checked as well; every "
            "other point is inside") if q_zero else ""
    return (*_assumption_conditions(prob_of, constants_of),
            Condition("θ < 1/L₁ (Thms 1, 2, under which Δ_Q is stated)",
                      lambda x: theta_of(x) * constants_of(x)["L1"], 1.0, relation="<"),
            Condition("Q > 0 (Sec. 3, eq. 3.2: \"θ > 0 and Q > 0 are hyperparameters\")",
                      lambda x: x, 0, relation=">", inside=not q_zero, note=note))


def _schedule_conditions(design, prob_of, eps_of, thm: int,
                         label: str = "") -> tuple[Condition, ...]:
    """:func:`_conditions` plus Cor 1/2's ``Q > 0`` (Sec. 3) at the schedule's ``Q``; each
    statement prefixed with ``label`` (a claim that runs both algorithms)."""
    def q(x):
        return design.hyperparameters(prob_of(x), eps_of(x))[1]["neumann_steps"]
    conds = (*_conditions(design, prob_of, eps_of, thm),
             Condition("Q > 0 (Sec. 3, eq. 3.2; Cor 1, 2: Q = O(log 1/ε))", q, 0,
                       relation=">"))
    return tuple(replace(c, statement=label + c.statement) for c in conds)


def _floor_conditions(design, thm: int) -> tuple[Condition, ...]:
    """Thm 1/2's hypotheses on :func:`heterogeneous` at the schedule of ``design``, and
    Assumption 4 on the domain of GAO-R8: the runs start at ``x*`` and converge to ``x̃``
    (:func:`biased_stationary_point` at the point's ``θ, Q``), both inside it."""
    P = heterogeneous()

    def prob(x):
        return P

    def extent(x):
        hp = design.hyperparameters(P, design.epsilon_at_iterations(x))[1]
        x_tilde, _ = biased_stationary_point(P, hp["theta"], hp["neumann_steps"])
        return max(float(np.linalg.norm(np.asarray(z))) for z in (
            P.x_star, P.y_star(P.x_star), x_tilde, P.y_star(x_tilde)))
    g = gao_constants(P)
    a4 = Condition(
        "(1/K)Σ_k‖∇̂Φ^{(k)} − mean‖² ≤ δ², (1/K)Σ_k‖∇g^{(k)} − ∇g‖² ≤ δ² (Assumption 4), on the "
        "domain ‖x‖, ‖y‖ ≤ r of GAO-R8: max(‖x*‖, ‖y*(x*)‖, ‖x̃‖, ‖y*(x̃)‖) ≤ r", extent,
        P.radius,
        note=f"both spreads are affine in (x, y), hence bounded on the domain only; there "
             f"δ² of ∇g is {g['delta2']:.4g} and L₀ = {g['L0']:.4g}; exact oracles start at x* "
             "and converge to x̃ (closed form at the point's θ, Q)")
    return (*_assumption_conditions(prob),
            *_schedule_conditions(design, prob, design.epsilon_at_iterations, thm), a4)


def _grid_T(design, periods):
    return _grid(periods, lambda p: design.T_ref * (p / 2) ** (4 if design is M_DESIGN else 3))


CLAIMS = [
    P_.claim(
        "neumann_bias_vs_Q", role="control",
        source=P_.cite("Sec. 3, truncation bias Δ_Q of eq. 3.2"),
        statement=r"\|\nabla^2_{xy}g^{(k)}(\hat H - [\nabla^2_{yy}g^{(k)}]^{-1})\nabla_y "
                  r"f^{(k)}\| \propto (1-\theta\mu)^{Q+1}",
        kind="geometric", variable="Q",
        quantity=r"\frac{1}{K}\sum_k \|\nabla^2_{xy}g^{(k)}(\hat H_k - H_k^{-1})\nabla_y f^{(k)}\|",
        measure=neumann_bias,
        grid=per_budget(range(20, 121, 20), range(20, 161, 10), range(20, 201, 5)),
        replicates={"smoke": 8, "standard": 32, "full": 128}, law=LAW_NEUMANN,
        tolerance=0.1 * abs(LAW_NEUMANN.value), scale="semilog",
        schedule=("control of our implementation, not a test of the paper: the decay ratio "
                  "(1−θμ) of the implemented truncated series is an identity of the series "
                  "(its slowest mode); θ = 1/(2L₁), Q swept from 20 (the faster modes "
                  "(1−θλ)^Q, λ > μ, are below 1% there); noise-free oracle, so "
                  "estimators.theta_q is exact; 8 heterogeneous devices (dims 3, κ = 5, "
                  "h = 0.5), random x ∈ [−1, 1]³, y = y*(x) per replicate; tolerance 10% of "
                  "|log(1−θμ)|"),
        conditions=_neumann_conditions(
            lambda Q: neumann_instance(), lambda Q: gao_constants(neumann_instance()),
            lambda Q: default_theta(neumann_instance())),
        touches=("GAO-R8",)),
    P_.claim(
        "neumann_bias_bounded", role="confirmation",
        source=P_.cite("Sec. 3, truncation bias Δ_Q of eq. 3.2"),
        statement=r"\|\nabla^2_{xy}g^{(k)}(\hat H - [\nabla^2_{yy}g^{(k)}]^{-1})\nabla_y "
                  r"f^{(k)}\| \leq \Delta_Q = (1-\theta\mu)^{Q+1} L_0 L_1/\mu",
        kind="bounded_by", variable="Q",
        quantity=r"\max_{k,\,(x,y)} \|\nabla^2_{xy}g^{(k)}(\hat H_k - H_k^{-1})"
                 r"\nabla_y f^{(k)}(x,y)\|",
        measure=neumann_bias_with_bound,
        grid=per_budget((0, 5, 10, 20, 40, 80), range(0, 161, 10), range(0, 201, 5)),
        replicates={"smoke": 2, "standard": 2, "full": 2}, law=LAW_NEUMANN_BOUND,
        tolerance=0.0, scale="semilog",
        schedule=("evaluated where the bound is tightest: the worst instance of "
                  "search_worst_neumann_instance (Nelder–Mead over coupling, upper_mu, κ per "
                  f"seed; 2 devices, dims 1: {NEUMANN_KNOBS}) and, at each Q, the worst "
                  "device and point of the domain ‖x‖, ‖y‖ ≤ radius (SLSQP, multi-start); the "
                  "bound with the smallest constants A1–A2 admit there: L₀ = max ‖∇f^{(k)}‖ on "
                  "the domain, L₁ = max(‖∇²f^{(k)}‖, ‖∇²g^{(k)}‖), μ = min λ_min(∇²_yy g^{(k)}); "
                  "θ = 1/(2L₁); deterministic (replicates identical). The report's measured "
                  "ratio is the slack: a stated bound smaller than the true one by more than "
                  "that ratio is caught"),
        mutants=(
            Mutant("rate_squared", "the bound's rate squared, (1−θμ)^{2(Q+1)}L₀L₁/μ: below the "
                   "bias of the slowest mode once (1−θμ)^{Q+1} < the worst ratio",
                   {"mutant": "rate_squared"}, kind="bound"),
            Mutant("quarter", "the bound divided by 4, Δ_Q/4: below the worst bias when the "
                   "worst ratio exceeds 1/4", {"mutant": "quarter"}, kind="bound"),
            Mutant("theta_half", "the estimator's Neumann scale θ halved (the series of eq. 3.2 "
                   "run with θ/2, the bound left at θ): the bias decays as (1 − θμ/2)^{Q+1}, "
                   "slower than Δ_Q, and exceeds it once Q is large", {"mutant": "theta_half"},
                   kind="neumann_scaling")),
        conditions=_neumann_conditions(lambda Q: worst_neumann_instance(),
                                       lambda Q: _worst_constants(),
                                       lambda Q: default_theta(worst_neumann_instance()),
                                       q_zero=True),
        touches=("GAO-R1", "GAO-R8")),
    P_.claim(
        "localbsgm_iterations_vs_epsilon", role="confirmation",
        source=P_.cite("Cor 1 / Remark 2 (iteration complexity O(κ⁵/(Kε²)))"),
        statement=r"T = \mathcal{O}(\kappa^5/(K\epsilon^2)) \Rightarrow A \leq \epsilon"
                  r"\quad\Longleftrightarrow\quad A = \mathcal{O}(T^{-1/2})",
        kind="at_most", variable="T", quantity=_A, measure=localbsgm_vs_iterations,
        grid=_grid_T(M_DESIGN, PERIODS),
        # Power: the slope is −0.497 (256 replicates, the smoke points); its sd was ≈ 0.024 at
        # 16 replicates over the smoke grid (3 seeds); the upper end stays below −0.45 with
        # ≈ 3σ to spare when σ ≤ 0.0098, i.e. ≥ 16·(0.024/0.0098)² ≈ 96 replicates.  The
        # standard grid spans ln T 1.8× wider (sd ∝ 1/spread), so 32 replicates match it.
        replicates={**REPS_M, "smoke": 96}, law=LAW_M_T, tolerance=0.05,
        schedule=f"{_M_SCHED}; {_HOMOG}; x = T(ε); tolerance 10% of the exponent "
                 "(ε^{-2} vs ε^{-2.2})",
        mutants=(Mutant("eta_fixed", "η held at the reference c_η Kε_ref instead of Cor 1's "
                        "η = O(Kε): the noise term 4αησ²/K of Thm 1 stops shrinking with ε, so "
                        "A stalls as T grows", {"mutant": "eta_fixed"}, kind="step_exponent"),),
        conditions=_conditions(M_DESIGN, lambda x: homogeneous(DEVICES), M_DESIGN.epsilon_at_iterations, 1),
        touches=("GAO-R1", "GAO-R2", "GAO-R6", "GAO-R7", "GAO-R9")),
    P_.claim(
        "localbsgm_communication_vs_epsilon", role="confirmation",
        source=P_.cite("Cor 1 / Remark 2 (communication complexity T/p = O(κ⁵ε^{-3/2}))"),
        statement=r"\frac{T}{p} = \mathcal{O}(\kappa^5\epsilon^{-3/2}) \Rightarrow A \leq "
                  r"\epsilon\quad\Longleftrightarrow\quad A = \mathcal{O}((T/p)^{-2/3})",
        kind="at_most", variable="T/p", quantity=_A, measure=localbsgm_vs_rounds,
        # smoke replicates from the seeds 0–4 spread (slope sd 0.051 at 16, mean −0.672, margin
        # 0.072 to the bound): an interval wholly below it needs se ≤ margin/3.6 ≈ 0.020 → 128
        grid=_grid(PERIODS, lambda p: M_DESIGN.T_ref / 2 * (p / 2) ** 3),
        replicates={**REPS_M, "smoke": 128},
        law=LAW_M_C, tolerance=0.067,
        schedule=f"{_M_SCHED}; {_HOMOG}; x = T(ε)/p(ε) (= the ledger's rounds, counted by "
                 "Context.aggregate); tolerance 10% of the exponent",
        mutants=(Mutant("period_fixed", _PERIOD_FIXED + " (A ∝ (T/p)^{-1/2})",
                        {"mutant": "period_fixed"}, kind="schedule"),
                 Mutant("single_term", _SINGLE_TERM, {"mutant": "single_term"},
                        kind="truncation")),
        conditions=_conditions(M_DESIGN, lambda x: homogeneous(DEVICES), M_DESIGN.epsilon_at_rounds, 1),
        touches=("GAO-R1", "GAO-R2", "GAO-R6", "GAO-R7", "GAO-R9")),
    P_.claim(
        "localbsgm_linear_speedup", role="confirmation",
        source=P_.cite("Cor 1 / Remark 2 (iterations O(κ⁵/(Kε²)): linear speedup in K)"),
        statement=r"T = \mathcal{O}(\kappa^5/(K\epsilon^2)) \Rightarrow A \leq \epsilon"
                  r"\ \mathrm{for\ every}\ K:\quad A|_{T \propto 1/K} = \mathcal{O}(K^0)",
        kind="at_most", variable="K", quantity=_A, measure=localbsgm_vs_devices,
        grid=per_budget((2, 4, 8, 16), (1, 2, 4, 8, 16), (1, 2, 4, 8, 16)),
        # replicates for a resolution ≤ 0.2 (tolerance 0.1 + 2.8·se): se ≈ 0.078 at 16 needs
        # ≤ 0.036, ≈ 4.7× → 96
        replicates={"smoke": 96, "standard": 96, "full": 128}, law=LAW_SPEEDUP, tolerance=0.1,
        schedule=("Cor 1 at fixed ε = 0.01 (constants chosen, rates not): T = c_T κ⁵/(Kε²) = "
                  "5120/K, p = c_p/(Kε^{1/2}) = 32/K, η = c_η Kε = 0.125K/16, Q from "
                  "(1−θμ)^{2(Q+1)} ≤ ε, θ = 0.8/L₁, α = β = 1, ρ₁ = 0.5/L₁, ρ₂ = 1/L₁; K = 1, 2, "
                  f"4, 8, 16 (p = 32/K > 1 and η ≤ 0.125 < 1 need K ≤ 16 here); {_HOMOG} "
                  f"except σ = {SPEEDUP_NOISE:g} (the noise term, where the 1/K is, dominates); "
                  "tolerance 0.1 (no speedup would show as up to +1 in the noise term)"),
        mutants=(Mutant("same_sample", "every device draws the same sample, so the device "
                        "average is not a mean of K independent estimates: the noise term "
                        "4αησ²/K becomes 4αησ² and with η ∝ K grows linearly in K",
                        {"mutant": "same_sample"}, kind="noise_averaging"),),
        conditions=_conditions(K_DESIGN, lambda K: homogeneous(int(K), SPEEDUP_NOISE),
                               lambda K: K_DESIGN.eps_ref, 1),
        touches=("GAO-R1", "GAO-R2", "GAO-R6", "GAO-R7", "GAO-R9")),
    P_.claim(
        "localbsgvrm_iterations_vs_epsilon", role="confirmation",
        source=P_.cite("Cor 2 / Remark 4 (iteration complexity O(κ³/(Kε^{3/2})))"),
        statement=r"T = \mathcal{O}(\kappa^3/(K\epsilon^{3/2})) \Rightarrow A \leq \epsilon"
                  r"\quad\Longleftrightarrow\quad A = \mathcal{O}(T^{-2/3})",
        kind="at_most", variable="T", quantity=_A, measure=localbsgvrm_vs_iterations,
        # smoke replicates from the seeds 0–4 spread (interval se 0.035 at 64, mean −0.657,
        # margin 0.057 to the bound): se ≤ margin/3.6 ≈ 0.016 needs ≈ 5× → 320
        grid=_grid_T(V_DESIGN, V_PERIODS), replicates={**REPS_V, "smoke": 320}, law=LAW_V_T,
        tolerance=0.067,
        schedule=f"{_V_SCHED}; {_HOMOG}; x = T(ε); tolerance 10% of the exponent",
        mutants=(Mutant("independent_samples", _INDEPENDENT, {"mutant": "independent_samples"},
                        kind="estimator"),),
        conditions=_conditions(V_DESIGN, lambda x: homogeneous(DEVICES), V_DESIGN.epsilon_at_iterations, 2),
        touches=("GAO-R1", "GAO-R2", "GAO-R4", "GAO-R5", "GAO-R6", "GAO-R7", "GAO-R9",
                 "GAO-I1", "GAO-I2", "GAO-I3", "GAO-I4")),
    P_.claim(
        "localbsgvrm_communication_vs_epsilon", role="confirmation",
        source=P_.cite("Cor 2 / Remark 4 (communication complexity T/p = O(κ³/ε))"),
        statement=r"\frac{T}{p} = \mathcal{O}(\kappa^3/\epsilon) \Rightarrow A \leq \epsilon"
                  r"\quad\Longleftrightarrow\quad A = \mathcal{O}((T/p)^{-1})",
        kind="at_most", variable="T/p", quantity=_A, measure=localbsgvrm_vs_rounds,
        # smoke replicates from the seeds 0–4 spread (interval se 0.05 at 64, mean −1.003,
        # margin 0.103 to the bound): se ≤ margin/3.6 ≈ 0.029 needs ≈ 3× → 256
        grid=_grid(V_PERIODS, lambda p: V_DESIGN.T_ref / 2 * (p / 2) ** 2),
        replicates={**REPS_V, "smoke": 256},
        law=LAW_V_C, tolerance=0.1,
        schedule=f"{_V_SCHED}; {_HOMOG}; x = T(ε)/p(ε) (the ledger's rounds within one: Alg 2 "
                 "averages at (t+1) mod p = 0 from t = 1); tolerance 10% of the exponent",
        mutants=(Mutant("period_fixed", _PERIOD_FIXED + " (p = S = 2 with Thm 2's α, η_t at "
                        "p = 2)", {"mutant": "period_fixed"}, kind="schedule"),
                 Mutant("single_term", _SINGLE_TERM, {"mutant": "single_term"},
                        kind="truncation")),
        conditions=_conditions(V_DESIGN, lambda x: homogeneous(DEVICES), V_DESIGN.epsilon_at_rounds, 2),
        touches=("GAO-R1", "GAO-R2", "GAO-R4", "GAO-R5", "GAO-R6", "GAO-R7", "GAO-R9",
                 "GAO-I1", "GAO-I2", "GAO-I3", "GAO-I4")),
    P_.claim(
        "localbsgvrm_linear_speedup", role="confirmation",
        source=P_.cite("Cor 2 / Remark 4 (iterations O(κ³/(Kε^{3/2})): linear speedup in K)"),
        statement=r"T = \mathcal{O}(\kappa^3/(K\epsilon^{3/2})) \Rightarrow A \leq \epsilon"
                  r"\ \mathrm{for\ every}\ K:\quad A|_{T \propto 1/K} = \mathcal{O}(K^0)",
        kind="at_most", variable="K", quantity=_A, measure=localbsgvrm_vs_devices,
        grid=per_budget(*3 * ((1, 2, 4, 8, 16),)),
        # Power: per-replicate CV of A ≈ 0.8 at every K (pilot); the slope's se ≈ 0.8/(√R·2.19)
        # (2.19² = Σ(ln K − mean)² over the grid), so a slope 0 (margin 0.1) with se ≤ 0.1/3.6
        # needs R ≥ 173 → 192.  Seeds 0–4 at 192: slopes −0.025…0.056, mean 0.001 (margin
        # 0.099), sd 0.036 between seeds (interval se ≈ 0.028); se ≤ margin/3.6 ≈ 0.0275 with
        # the seeds' sd needs (0.036/0.0275)² ≈ 1.7× → 384
        replicates={"smoke": 384, "standard": 768, "full": 1536}, law=LAW_V_SPEEDUP,
        tolerance=0.1,
        schedule=("Cor 2 / Thm 2 at fixed ε = 0.01 (constants chosen, rates not): T = c_T "
                  "κ³/(Kε^{3/2}) = 1920/K, p = S = c_p/(Kε^{1/2}) = 32/K (T/p = 60 rounds for "
                  "every K), Thm 2's α = β = L̂²/(3pK²) + L̂²/K = (L̂²/K)(1 + ε^{1/2}/(3c_p)) ∝ "
                  "1/K and η_t = (K^{2/3}/L̂)/(w_t + t)^{1/3} = 1/(L̂p) = Kε^{1/2}/(c_p L̂) ∝ K "
                  "for t ≤ T (T < K²p³ ⇔ c_Tκ³ < c_p³, K-free), so αη_t² ∝ K stays ≤ 0.016 and "
                  "the run's length Σ_t η_t = T/(L̂p) = 60/L̂ is K-free; Thm 2's factor p/T + "
                  "(KT)^{-2/3} is then K-free, with the noise averaged over the K devices in "
                  "(KT)^{-2/3}; Q from (1−θμ)^{2(Q+1)} ≤ ε, θ = 0.8/L₁, ρ₁ = ρ₂ = 1; c_T, c_p "
                  "fixed by K = 16 ↦ p = 2, T = 120 (the ε-sweeps' c_T, c_p doubled); K = 1, 2, "
                  f"4, 8, 16 (p = 32/K ≥ 2 needs K ≤ 16 here, GAO-R6); {_HOMOG} except σ = "
                  f"{SPEEDUP_NOISE:g} (the noise term, where the 1/K is, dominates); tolerance "
                  "0.1 (no averaging would show as up to +1 in the noise term, half the speedup, "
                  "T ∝ K^{-1/2}, as +1/3 at A ∝ (KT)^{-2/3})"),
        mutants=(Mutant("same_sample", "every device draws the same sample, so the device "
                        "average is not a mean of K independent estimates: the noise fed to the "
                        "momenta per unit of Σ_t η_t, α²η_t³σ²/K, becomes α²η_t³σ² and with "
                        "α ∝ 1/K, η_t ∝ K grows linearly in K",
                        {"mutant": "same_sample"}, kind="noise_averaging"),),
        conditions=_conditions(KV_DESIGN, lambda K: homogeneous(int(K), SPEEDUP_NOISE),
                               lambda K: KV_DESIGN.eps_ref, 2),
        touches=("GAO-R1", "GAO-R2", "GAO-R4", "GAO-R5", "GAO-R6", "GAO-R7", "GAO-R9",
                 "GAO-I1", "GAO-I2", "GAO-I3", "GAO-I4")),
    P_.claim(
        "localbsgm_heterogeneous_floor", role="finding",
        source=P_.cite("Cor 1 (A ≤ ε at T = O(κ⁵/(Kε²)) under A4's heterogeneity δ²)"),
        statement=r"T = \mathcal{O}(\kappa^5/(K\epsilon^2)) \Rightarrow A \leq \epsilon"
                  r"\quad\mathrm{on\ heterogeneous\ devices}",
        kind="bounded_by", variable="T", quantity=_A, measure=localbsgm_heterogeneous,
        grid=_grid_T(M_DESIGN, PERIODS),
        replicates={"smoke": 2, "standard": 2, "full": 2}, law=LAW_TARGET, tolerance=0.0,
        expected="violated", reason=_floor_reason("Cor 1"),
        schedule=f"{_M_SCHED}; {_HETER}",
        mutants=(_SHARED_HESSIANS,),
        conditions=_floor_conditions(M_DESIGN, 1),
        touches=("GAO-R3", "GAO-R1", "GAO-R2", "GAO-R6", "GAO-R7", "GAO-R9")),
    P_.claim(
        "localbsgvrm_heterogeneous_floor", role="finding",
        source=P_.cite("Cor 2 (A ≤ ε at T = O(κ³/(Kε^{3/2})) under A4's heterogeneity δ²)"),
        statement=r"T = \mathcal{O}(\kappa^3/(K\epsilon^{3/2})) \Rightarrow A \leq \epsilon"
                  r"\quad\mathrm{on\ heterogeneous\ devices}",
        kind="bounded_by", variable="T", quantity=_A, measure=localbsgvrm_heterogeneous,
        grid=_grid_T(V_DESIGN, V_PERIODS),
        replicates={"smoke": 2, "standard": 2, "full": 2}, law=LAW_TARGET, tolerance=0.0,
        expected="violated", reason=_floor_reason("Cor 2"),
        schedule=f"{_V_SCHED}; {_HETER}",
        mutants=(_SHARED_HESSIANS,),
        conditions=_floor_conditions(V_DESIGN, 2),
        touches=("GAO-R3", "GAO-R1", "GAO-R2", "GAO-R4", "GAO-R5", "GAO-R6", "GAO-R7",
                 "GAO-R9", "GAO-I3")),
    P_.claim(
        "vrm_beats_m", role="confirmation",
        source=P_.cite("Remark 4 (T/p = O(κ³/ε) vs O(κ⁵/ε^{3/2}) of Alg 1)"),
        statement=r"(\epsilon\, T/p)_{\mathrm{LocalBSGVRM}} = \mathcal{O}(1),\quad "
                  r"(\epsilon\, T/p)_{\mathrm{LocalBSGM}} \propto \epsilon^{-1/2}",
        kind="contrast", variable=r"1/\epsilon", quantity=r"A \cdot T/p",
        extra={"series": {"value": "LocalBSGVRM", "contrast": "LocalBSGM"}},
        measure=vrm_vs_m,
        grid=_grid(PERIODS, lambda p: 1.0 / _eps_of_period(M_DESIGN, p)),
        # Power (smoke): with one LocalBSGVRM run per replicate the slope's half-width was
        # 0.18–0.22 at 32 replicates (sd ≈ 0.1: per-run CV ≈ 0.6 over ln(400/100) = 1.39);
        # inside ±0.15 with 3σ to spare needs sd ≤ 0.03, ≈ 0.6²/0.03² ≈ 400 runs per point:
        # 32 replicates × VRM_RUNS = 16 runs (sd ≈ 0.027), LocalBSGM (excluded with a margin
        # > 0.25) keeps one run per replicate.  The standard grid spans ln(1/ε) 1.8× wider:
        # 32 replicates there give sd ≈ 0.015, so the larger budgets keep 32 and 64.  A
        # resolution ≤ 0.2 (tolerance 0.15 + 2.8·se) needs se ≤ 0.018 at smoke: se ≈ 0.031 at
        # 32 → ≈ 3× → 96.
        replicates={"smoke": 96, "standard": 32, "full": 64}, law=LAW_PRODUCT, tolerance=0.15,
        schedule=(f"both at their corollary's schedule at the same ε (LocalBSGVRM: {_V_SCHED}; "
                  f"LocalBSGM: {_M_SCHED}); {_HOMOG}; value = achieved average A times the "
                  f"ledger's communication rounds (each replicate of LocalBSGVRM's the mean of "
                  f"{VRM_RUNS} independent runs): O(1) iff rounds-to-ε ∝ 1/ε; LocalBSGM's "
                  f"derived exponent is {PRODUCT_EXPONENT_M:g}; tolerance 0.15 (a third of the "
                  "gap between the two exponents)"),
        # Not the dropped correction (plain momentum at Thm 2's weights): that iteration is
        # unstable here (exact oracles: A ≈ 2·10⁵ at p = 4, 3·10⁹ at p = 6), so at the standard
        # grid's end 17–23 of 32 runs reach the divergence threshold, a count near one half
        # rather than a measurement.
        mutants=(Mutant("independent_samples", _INDEPENDENT, {"mutant": "independent_samples"},
                        kind="estimator"),),
        conditions=(*_assumption_conditions(lambda x: homogeneous(DEVICES)),
                    *_schedule_conditions(M_DESIGN, lambda x: homogeneous(DEVICES),
                                          lambda x: 1.0 / x, 1, "LocalBSGM: "),
                    *_schedule_conditions(V_DESIGN, lambda x: homogeneous(DEVICES),
                                          lambda x: 1.0 / x, 2, "LocalBSGVRM: ")),
        touches=("GAO-R1", "GAO-R2", "GAO-R4", "GAO-R5", "GAO-R6", "GAO-R7", "GAO-R9",
                 "GAO-I1", "GAO-I3")),
]
