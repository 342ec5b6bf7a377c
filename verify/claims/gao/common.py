"""Gao 2022 (Gao, arXiv preprint 2022, arXiv:2204.13299), what several families of claims
share: the constants and instances (homogeneous devices tiled from one client, heterogeneous
devices and their shared-Hessian repair of GAO-R3), Cor 1 / Cor 2's schedules
(:class:`Cor1Design`, :class:`Cor2Design`) and their sweep grids, one run at a schedule
(:func:`run_schedule`), Thm 1 / Thm 2's hypotheses as conditions, and the texts the claims
share.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from bilevel_theory import run
from bilevel_theory.gao import (
    gao_constants,
    theorem1_limits,
    theorem1_schedule,
    theorem2_schedule,
)
from bilevel_theory.problems import QuadraticBilevel
from bilevel_theory.problems.families import Dense, Shared

from ...claim import Condition
from ...kit import PaperClaims, lower_level_conditions, per_budget, per_replicate

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


def identical_devices(b: QuadraticBilevel, devices: int) -> QuadraticBilevel:
    """``devices`` identical copies of the one-client instance ``b`` (``h = 0``), its upper-level
    blocks ``R, S`` stored once (:class:`Shared`)."""
    def tiled(F):
        return Dense(np.repeat(np.asarray(F.dense_range(0, 1)), devices, axis=0))

    return replace(b, A=tiled(b.A), B=tiled(b.B), R=Shared(b.R.dense(0), devices),
                   S=Shared(b.S.dense(0), devices), c=np.repeat(np.asarray(b.c), devices, 0),
                   p=np.repeat(np.asarray(b.p), devices, 0),
                   q=np.repeat(np.asarray(b.q), devices, 0),
                   spec={**b.spec, "clients": devices, "tiled": True})


@functools.lru_cache(maxsize=16)
def homogeneous(devices: int, noise: float = NOISE) -> QuadraticBilevel:
    """``devices`` identical copies of one client (``h = 0``): the same Φ, ``x*`` and constants
    for every ``K`` (``QuadraticBilevel.random(h=0)`` would draw a different instance per K)."""
    return identical_devices(_one_client(noise), devices)


@functools.lru_cache(maxsize=16)
def heterogeneous(devices: int = DEVICES, heterogeneity: float = HETEROGENEITY
                  ) -> QuadraticBilevel:
    """Heterogeneous devices (A4 holds with the measured ``δ²``), exact oracles: the floor,
    not the noise, is what the heterogeneous claims test (every replicate is the same run).
    ``heterogeneity``: the instance's ``h`` (the same draws at every ``h``, the devices'
    deviations scaled by it)."""
    return QuadraticBilevel.random(clients=devices, dim_x=DIM, dim_y=DIM, kappa=KAPPA,
                                   heterogeneity=heterogeneity, noise=0.0, hessian_noise=0.0,
                                   seed=HET_SEED, upper_mu=UPPER_MU, storage="dense")


@functools.lru_cache(maxsize=16)
def shared_hessians(devices: int = DEVICES, heterogeneity: float = HETEROGENEITY
                    ) -> QuadraticBilevel:
    """The repair of GAO-R3: :func:`heterogeneous` with every device's ``∇²_{yy}g^{(k)}`` and
    ``∇²_{xy}g^{(k)}`` replaced by the devices' mean (the gradients' linear terms stay
    heterogeneous), so the device average of eq. (3.1) is ``∇Φ`` and ``x̃`` is ``x*`` up to the
    truncation bias."""
    P = heterogeneous(devices, heterogeneity)
    K = P.clients
    A = np.asarray(P.A.dense_range(0, K)).mean(axis=0)
    B = np.asarray(P.B.dense_range(0, K)).mean(axis=0)
    return replace(P, A=Shared(A, K), B=Shared(B, K),
                   spec={**P.spec, "shared_hessians": True})


def _theta(problem) -> float:
    return THETA_L1 / gao_constants(problem)["L1"]


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


def _grid_T(design, periods):
    return _grid(periods, lambda p: design.T_ref * (p / 2) ** (4 if design is M_DESIGN else 3))


# ================================================================================ runs

def _achieved(trace, L_tilde: float) -> tuple[np.ndarray, np.ndarray]:
    """Per replicate: ``(1/T) Σ_t ‖∇Φ(x̄_t)‖²`` and ``(1/T) Σ_t L̃²‖ȳ_t − y*(x̄_t)‖²`` over the
    ``T`` iterates the theorems average (the last iterate ``x̄_T`` excluded)."""
    stat = trace.stationarity[:, :-1].mean(axis=1)
    inner = (L_tilde ** 2 * trace.inner_error[:, :-1]).mean(axis=1)
    return stat, inner


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


# ================================================================================ conditions

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


# ================================================================================ texts

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

_INDEPENDENT = ("the two points of eq. (3.8) get independent samples instead of the same "
                "ξ̂_t: the correction no longer cancels the noise, the momentum's error keeps a "
                "variance of order σ²/(αη²), which grows as η shrinks along the schedule")
