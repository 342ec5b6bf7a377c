"""Gao 2022, the κ-dependence of the corollaries (Gao, arXiv preprint 2022, arXiv:2204.13299,
Cor 1 / Remark 2: LocalBSGM reaches ``A ≤ ε`` in ``T = O(κ⁵/(Kε²))`` iterations; Cor 2 /
Remark 4: LocalBSGVRM in ``T = O(κ³/(Kε^{3/2}))``).

**The statements as κ-sweeps.**  At fixed ``ε`` and ``K`` the corollary's schedule grows with
``κ = L₁/μ`` in ``T`` (``∝ κ⁵``, resp. ``κ³``), in ``Q`` (``(1 − θμ)^{2(Q+1)} ≤ ε`` with
``θ = 0.8/L₁``, so ``Q ∝ κ log 1/ε``) and in the steps (Remark 1: ``ρ₁ = O(1/κ⁵)``,
``ρ₂ = O(1/κ²)``; Remark 3: ``ρ₁ = O(1/κ²)``; Thm 2's ``α, β ∝ L̂²`` and ``η_t ∝ 1/L̂``).
"``T(κ)`` iterations suffice for every ``κ``" is checked as "the achieved average ``A`` at that
schedule does not grow with ``κ``": ``A|_{T ∝ κ^p} = O(κ⁰)``, kind ``at_most`` with law 0 (the
κ-exponent ``p`` of the corollary's ``T``, spent by the schedule).  The ``O``-constants are
fixed once, at the reference point ``κ₀ = 2.5``.

**What is covered, and what is not.**  Thm 1/2's own step constants put one sweep point at
10⁵–10⁶ iterations (GAO-R7), so the steps follow the remarks' κ-rates with their constants
fixed at ``κ₀`` by the practical values of the ε-sweeps (GAO-R7).  Started at ``x₀ = x*``,
``y₀ = y*(x*)``, the transient terms of Thm 1/2 vanish, and what the sweep tests is the
κ-dependence of the remaining terms at the κ-scaled schedule: the noise terms and ``4Δ_Q²``.
Whether ``κ⁵`` (``κ³``) iterations suffice from a far start is not tested: on these instances
``Φ``'s conditioning barely changes with ``κ`` (``L_Φ`` falls from 1.5 to 1.2 over the grid),
so that transient says little about ``κ``.

**Instances.**  ``κ`` is the theorem's ``L₁/μ`` (``gao_constants``): for each sweep value the
``kappa`` knob of one ``QuadraticBilevel.random`` client (dims 2, seed 0, ``upper_mu = 0.5``)
is solved for it (``brentq``), and the client is tiled over ``K = 8`` homogeneous devices.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from bilevel_theory import rates as R_
from bilevel_theory import run
from bilevel_theory.gao import (
    gao_constants,
    theorem1_limits,
    theorem1_schedule,
    theorem2_momentum,
    theorem2_schedule,
)
from bilevel_theory.problems import QuadraticBilevel

from ...claim import Condition, Law, Mutant
from ...kit import PaperClaims, knob_for, per_budget, per_replicate
from .common import C_Q, THETA_L1, _achieved, identical_devices

P_ = PaperClaims("gao")

DEVICES = 8            # K
EPSILON = 0.01         # the fixed accuracy ε of the sweep
KAPPA_REF = 2.5        # κ₀: the reference point that fixes c_T, c_p, c_η
T_REF = 320            # T at κ₀ (the ε-sweeps' reference: K = 8, ε = 0.01 ↦ p = 2, η = 0.125)
T_REF_VRM = 120        # LocalBSGVRM's T at κ₀ (the ε-sweeps' reference: p = S = 2)
P_REF, ETA_REF = 2, 0.125
NOISE, HESSIAN_NOISE = 1.0, 0.3
RHO1_L1, RHO2_L1 = 0.5, 1.0


@functools.lru_cache(maxsize=32)
def _client(knob: float) -> QuadraticBilevel:
    return QuadraticBilevel.random(clients=1, dim_x=2, dim_y=2, kappa=knob, heterogeneity=0.0,
                                   noise=NOISE, hessian_noise=HESSIAN_NOISE, seed=0,
                                   upper_mu=0.5, storage="dense")



@functools.lru_cache(maxsize=32)
def instance(kappa: float, devices: int = DEVICES) -> QuadraticBilevel:
    """``devices`` copies of the client whose ``L₁/μ`` (``gao_constants``) equals ``kappa``."""
    knob = knob_for(lambda k: gao_constants(_client(k))["kappa"], kappa,
                    what="L₁/μ of the instance at knob 1")
    return identical_devices(_client(knob), devices)


def schedule(kappa: float) -> dict:
    """Cor 1's schedule at ``κ``: ``c_T, c_p, c_η`` fixed at ``κ₀`` (``T_REF``, ``P_REF``,
    ``ETA_REF``), so ``T = T_REF(κ/κ₀)⁵`` up to rounding; ``θ = 0.8/L₁``; ``Q`` from
    ``(1 − θμ)^{2(Q+1)} ≤ ε``; Remark 1's ``ρ₁ = O(1/κ⁵)``, ``ρ₂ = O(1/κ²)`` with the constants
    fixed at ``κ₀`` by ``ρ₁ = 0.5/L₁``, ``ρ₂ = 1/L₁`` there (GAO-R7); ``α = β = 1``."""
    P = instance(kappa)
    g = gao_constants(P)
    g0 = gao_constants(instance(KAPPA_REF))
    k0, r = g0["kappa"], g0["kappa"] / g["kappa"]
    K, eps = DEVICES, EPSILON
    s = theorem1_schedule(P, eps, c_T=T_REF * (1 - 1e-9) * K * eps ** 2 / k0 ** 5,
                          c_p=P_REF * K * math.sqrt(eps), c_eta=ETA_REF / (K * eps), c_Q=C_Q,
                          theta=THETA_L1 / g["L1"])
    if s["notes"]:
        raise ValueError(f"Cor 1 schedule infeasible at κ = {kappa:.4g}: {s['notes']}")
    return dict(rounds=s["rounds"], period=s["period"], eta=s["eta"],
                neumann_steps=s["neumann_steps"], theta=s["theta"], alpha=1.0, beta=1.0,
                rho1=RHO1_L1 / g0["L1"] * r ** 5, rho2=RHO2_L1 / g0["L1"] * r ** 2)


def schedule_vrm(kappa: float) -> dict:
    """Cor 2's schedule at ``κ``: ``c_T, c_p`` fixed at ``κ₀`` (``T_REF_VRM``, ``P_REF``), so
    ``T = T_REF_VRM(κ/κ₀)³`` up to rounding; ``S = p``; Thm 2's ``α = β`` and ``η_t`` (both
    scale with ``L̂``); ``θ = 0.8/L₁``; ``Q`` from ``(1 − θμ)^{2(Q+1)} ≤ ε``; Remark 3's
    ``ρ₁ = O(1/κ²)`` with the constant fixed at ``κ₀`` by Thm 2's cap ``ρ₁ = 1`` there, and
    ``ρ₂ = 1`` (Thm 2's limit ``μ/19720`` is κ-free; GAO-R7)."""
    P = instance(kappa)
    g = gao_constants(P)
    k0 = gao_constants(instance(KAPPA_REF))["kappa"]
    K, eps = DEVICES, EPSILON
    s = theorem2_schedule(P, eps, c_T=T_REF_VRM * (1 - 1e-9) * K * eps ** 1.5 / k0 ** 3,
                          c_p=P_REF * K * math.sqrt(eps), c_Q=C_Q, rho1=(k0 / g["kappa"]) ** 2,
                          theta=THETA_L1 / g["L1"])
    if s["notes"]:
        raise ValueError(f"Cor 2 schedule infeasible at κ = {kappa:.4g}: {s['notes']}")
    out = {k: s[k] for k in ("rounds", "period", "minibatch", "alpha", "beta", "eta", "rho1",
                             "neumann_steps", "theta")}
    return {**out, "rho2": 1.0}


SCHEDULES = {"localbsgm": schedule, "localbsgvrm": schedule_vrm}


def _vs_kappa(algorithm: str, kappa, replicates, seed, backend, mutant) -> dict:
    """``algorithm`` at its corollary's schedule at ``κ`` (fixed ``ε``, ``K``), started at the
    solution ``x₀ = x*``, ``y₀ = y*(x*)``: the achieved average ``A`` and its parts.  Mutant
    ``q_fixed``: the Neumann truncation held at its ``κ₀`` value."""
    if mutant not in (None, "q_fixed"):
        raise ValueError(f"`mutant` must be None or 'q_fixed', got {mutant!r}")
    kappa = float(kappa)
    P = instance(kappa)
    hp = SCHEDULES[algorithm](kappa)
    if mutant == "q_fixed":
        hp["neumann_steps"] = SCHEDULES[algorithm](KAPPA_REF)["neumann_steps"]
    x0 = np.asarray(P.x_star, dtype=float)
    T = hp.pop("rounds")
    tr = run(algorithm, P, rounds=T, replicates=replicates, seed=seed, backend=backend,
             x0=x0, y0=np.asarray(P.y_star(x0), dtype=float), **hp)
    g = gao_constants(P)
    stat, inner = _achieved(tr, g["L_tilde"])
    R = replicates
    return {"value": stat + inner, "stationarity_part": stat, "inner_part": inner,
            "diverged": tr.diverged.astype(float), "kappa": per_replicate(g["kappa"], R),
            "iterations": per_replicate(T, R),
            "neumann_steps": per_replicate(hp["neumann_steps"], R),
            "rounds": per_replicate(tr.ledger.totals()["rounds"], R)}


def localbsgm_vs_kappa(kappa, replicates, seed, backend="numpy", *, mutant=None):
    """LocalBSGM at Cor 1's schedule at ``κ`` (:func:`_vs_kappa`)."""
    return _vs_kappa("localbsgm", kappa, replicates, seed, backend, mutant)


def localbsgvrm_vs_kappa(kappa, replicates, seed, backend="numpy", *, mutant=None):
    """LocalBSGVRM at Cor 2's schedule at ``κ`` (:func:`_vs_kappa`)."""
    return _vs_kappa("localbsgvrm", kappa, replicates, seed, backend, mutant)


def _law(bound: str, corollary: str) -> Law:
    """Law 0 for ``A`` at the corollary's ``T``: its κ-exponent is spent by the schedule."""
    b = R_.BOUNDS[bound]
    p = R_.leading_exponent(b.expr, R_.kappa)
    return Law(0.0, rf"A|_{{T \propto \kappa^{{{p}}}}} = \mathcal{{O}}(\kappa^0)",
               f"{b.source}: T = {b.expr} has κ-exponent {p} (leading_exponent); at T ∝ κ^{p} "
               f"{corollary} gives A ≤ ε for every κ, so A at the schedule is O(κ⁰)")


LAW = _law("gao.cor1_iterations", "Cor 1")
LAW_VRM = _law("gao.cor2_iterations", "Cor 2")


def _theta_l1(kappa: float) -> float:
    return schedule(kappa)["theta"] * gao_constants(instance(kappa))["L1"]


def _limit(kappa: float, name: str) -> float:
    """Thm 1's limit ``name`` (``rho1_max``, ``rho2_max``) at the schedule of ``κ``."""
    s = schedule(kappa)
    return theorem1_limits(instance(kappa), s["alpha"], s["beta"], s["period"], s["rho2"])[name]


CONDITIONS = (
    Condition("θ < 1/L₁ (Thm 1)", _theta_l1, 1.0, note="θL₁ = 0.8"),
    Condition("η < 1 and η ≤ 1/α, 1/β (Thm 1)", lambda k: schedule(k)["eta"], 1.0,
              note="η = c_η Kε = 0.125 at every κ (ε, K fixed)"),
    Condition("p > 1 (Cor 1: p = O(1/(Kε^{1/2})))", lambda k: schedule(k)["period"], 2,
              relation=">=", note="p = 2 at every κ"),
    Condition("T = c_T κ⁵/(Kε²) (Cor 1), c_T fixed at κ₀",
              lambda k: schedule(k)["rounds"],
              lambda k: math.ceil(T_REF * (1 - 1e-9) * (
                  gao_constants(instance(k))["kappa"]
                  / gao_constants(instance(KAPPA_REF))["kappa"]) ** 5), relation="=="),
    Condition("ρ₁ ≤ Thm 1's limit (O(1/κ⁵), Remark 1)", lambda k: schedule(k)["rho1"],
              lambda k: _limit(k, "rho1_max"), inside=False,
              note="GAO-R7: at Thm 1's ρ₁ one sweep point needs 10⁵–10⁶ iterations; the run "
                   "keeps Remark 1's rate ρ₁ ∝ κ⁻⁵ with the constant fixed at κ₀ by "
                   "ρ₁ = 0.5/L₁, and starts at the solution, where ρ₁ enters only the noise "
                   "terms"),
    Condition("ρ₂ ≤ Thm 1's limit (O(1/κ²), Remark 1)", lambda k: schedule(k)["rho2"],
              lambda k: _limit(k, "rho2_max"), inside=False,
              note="GAO-R7: the run keeps Remark 1's rate ρ₂ ∝ κ⁻² with the constant fixed at "
                   "κ₀ by ρ₂ = 1/L₁"),
)


def _gao_kappa(kappa: float) -> float:
    return gao_constants(instance(kappa))["kappa"]


CONDITIONS_VRM = (
    Condition("θ < 1/L₁ (Thm 2)", lambda k: schedule_vrm(k)["theta"] * gao_constants(
        instance(k))["L1"], 1.0, note="θL₁ = 0.8"),
    Condition("α = β = L̂²/(3pK²) + L̂²/K (Thm 2; GAO-R4)", lambda k: schedule_vrm(k)["alpha"],
              lambda k: theorem2_momentum(DEVICES, schedule_vrm(k)["period"],
                                          gao_constants(instance(k))["L_hat"]), relation="=="),
    Condition("S = p > 1 (Thm 2, Cor 2: p = O(1/(Kε^{1/2})))",
              lambda k: min(schedule_vrm(k)["period"], schedule_vrm(k)["minibatch"]), 2,
              relation=">=", note="p = S = 2 at every κ"),
    Condition("T = c_T κ³/(Kε^{3/2}) (Cor 2), c_T fixed at κ₀",
              lambda k: schedule_vrm(k)["rounds"],
              lambda k: math.ceil(T_REF_VRM * (1 - 1e-9)
                                  * (_gao_kappa(k) / _gao_kappa(KAPPA_REF)) ** 3),
              relation="=="),
    Condition("ρ₁ ≤ ρ₂/(20κ²), ρ₂ ≤ μ/19720 (Thm 2; ρ₁ = O(1/κ²), Remark 3)",
              lambda k: schedule_vrm(k)["rho1"],
              lambda k: (gao_constants(instance(k))["mu"] / 19720) / (20 * _gao_kappa(k) ** 2),
              inside=False,
              note="GAO-R7: at Thm 2's ρ₂ ≤ μ/19720 one sweep point needs 10⁵–10⁶ iterations; "
                   "the run keeps Remark 3's rate ρ₁ ∝ κ⁻² with the constant fixed at κ₀ by "
                   "Thm 2's cap ρ₁ = 1, and ρ₂ = 1 (κ-free, as μ/19720 is)"),
    Condition("p ≤ 1/√(288(2 + 4L̂²/K)(ρ₁² + ρ₂²)) (Thm 2)", lambda k: schedule_vrm(k)["period"],
              lambda k: 1 / math.sqrt(288 * (2 + 4 * gao_constants(instance(k))["L_hat"] ** 2
                                             / DEVICES)
                                      * (schedule_vrm(k)["rho1"] ** 2 + 1.0)),
              inside=False, note="GAO-R5: Cor 2's p = O(1/(Kε^{1/2})) is used; at ρ₂ = 1 "
                                 "Thm 2's bound on p is below 1/24"),
)

_SCHED = (f"Cor 1 at fixed ε = {EPSILON:g}, K = {DEVICES} (constants chosen at κ₀ = "
          f"{KAPPA_REF:g}, rates not): T = c_T κ⁵/(Kε²) = {T_REF}(κ/κ₀)⁵, p = {P_REF}, η = "
          f"{ETA_REF:g}, Q from (1−θμ)^{{2(Q+1)}} ≤ ε (Q ∝ κ log 1/ε), θ = 0.8/L₁, α = β = 1, "
          "Remark 1's ρ₁ = O(1/κ⁵), ρ₂ = O(1/κ²) with the constants fixed at κ₀ by ρ₁ = "
          "0.5/L₁, ρ₂ = 1/L₁ (GAO-R7: not Thm 1's worst-case constants); κ = L₁/μ of "
          "gao_constants, the instance knob solved for it; "
          f"homogeneous devices (one client of QuadraticBilevel.random(dim 2, seed 0, upper_mu "
          f"0.5) tiled), gradient noise σ = {NOISE:g}, Hessian noise {HESSIAN_NOISE:g}; started "
          "at x₀ = x*, y₀ = y*(x*): Thm 1's transient terms vanish, so the sweep tests the "
          "κ-growth of the noise and truncation terms at Cor 1's κ-scaled schedule, not whether "
          "κ⁵ iterations suffice from a far start (out of reach, GAO-R7); tolerance 0.1 in A's "
          "κ-exponent (at A ∝ T^{-1/2}, Cor 1's rate, a fifth of a power of κ in T: a κ^{5.2} "
          "iteration need is caught), resolution ≤ 0.2 from the replicates")

_SCHED_VRM = (
    f"Cor 2 / Thm 2 at fixed ε = {EPSILON:g}, K = {DEVICES} (constants chosen at κ₀ = "
    f"{KAPPA_REF:g}, rates not): T = c_T κ³/(Kε^{{3/2}}) = {T_REF_VRM}(κ/κ₀)³, p = S = {P_REF}, "
    "Thm 2's α = β = L̂²/(3pK²) + L̂²/K and η_t = (K^{2/3}/L̂)/(w_t + t)^{1/3} (both scale with "
    "L̂ = L₁), Q from (1−θμ)^{2(Q+1)} ≤ ε, θ = 0.8/L₁, Remark 3's ρ₁ = O(1/κ²) with the "
    "constant fixed at κ₀ by Thm 2's cap ρ₁ = 1, ρ₂ = 1 (GAO-R7); κ = L₁/μ of gao_constants, "
    "the instance knob solved for it; the instance of the LocalBSGM κ-sweep; started at "
    "x₁ = x*, y₁ = y*(x*): Thm 2's transient terms vanish, so the sweep tests the κ-growth of "
    "the noise and truncation terms at Cor 2's κ-scaled schedule, not whether κ³ iterations "
    "suffice from a far start (out of reach, GAO-R7); tolerance 0.1 in A's κ-exponent (at "
    "A ∝ T^{-2/3}, Cor 2's rate, 0.15 of a power of κ in T: a κ^{3.15} iteration need is "
    "caught), resolution ≤ 0.2 from the replicates")

_Q_FIXED = ("the Neumann truncation Q held at its κ₀ value instead of the corollary's "
            "Q = O(log 1/ε) at θ = 0.8/L₁ (which grows as κ log 1/ε): the truncation bias "
            "(1 − 0.8/κ)^{Q+1}L₀L₁/μ grows with κ, and so does the floor ‖∇Φ(x̃)‖² that A "
            "converges to")

CLAIMS = [
    P_.claim(
        "kappa_localbsgm_iterations", role="confirmation",
        source=P_.cite("Cor 1 / Remark 2 (iteration complexity O(κ⁵/(Kε²)), κ-dependence)"),
        statement=r"T = \mathcal{O}(\kappa^5/(K\epsilon^2)) \Rightarrow A \leq \epsilon\ "
                  r"\mathrm{for\ every}\ \kappa:\quad A|_{T \propto \kappa^5} = "
                  r"\mathcal{O}(\kappa^0)",
        kind="at_most", variable=r"\kappa",
        quantity=r"\frac{1}{T}\sum_t \|\nabla\Phi(\bar x_t)\|^2 + \tilde L^2\|\bar y_t - "
                 r"y^*(\bar x_t)\|^2",
        measure=localbsgm_vs_kappa,
        grid=per_budget((2.5, 3.0, 3.5, 4.0), (2.5, 3.0, 3.5, 4.0, 4.5, 5.0),
                        (2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0)),
        replicates={"smoke": 384, "standard": 384, "full": 512}, law=LAW, tolerance=0.1,
        schedule=_SCHED, conditions=CONDITIONS,
        mutants=(Mutant("q_fixed", _Q_FIXED, {"mutant": "q_fixed"}, kind="truncation"),),
        touches=("GAO-R1", "GAO-R2", "GAO-R6", "GAO-R7", "GAO-R9")),
    P_.claim(
        "kappa_localbsgvrm_iterations", role="confirmation",
        source=P_.cite("Cor 2 / Remark 4 (iteration complexity O(κ³/(Kε^{3/2})), "
                       "κ-dependence)"),
        statement=r"T = \mathcal{O}(\kappa^3/(K\epsilon^{3/2})) \Rightarrow A \leq \epsilon\ "
                  r"\mathrm{for\ every}\ \kappa:\quad A|_{T \propto \kappa^3} = "
                  r"\mathcal{O}(\kappa^0)",
        kind="at_most", variable=r"\kappa",
        quantity=r"\frac{1}{T}\sum_t \|\nabla\Phi(\bar x_t)\|^2 + \tilde L^2\|\bar y_t - "
                 r"y^*(\bar x_t)\|^2",
        measure=localbsgvrm_vs_kappa,
        grid=per_budget((2.5, 3.0, 3.5, 4.0, 5.0), (2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0),
                        (2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0)),
        replicates={"smoke": 1280, "standard": 1280, "full": 1536}, law=LAW_VRM,
        tolerance=0.1, schedule=_SCHED_VRM, conditions=CONDITIONS_VRM,
        mutants=(Mutant("q_fixed", _Q_FIXED, {"mutant": "q_fixed"}, kind="truncation"),),
        touches=("GAO-R1", "GAO-R2", "GAO-R4", "GAO-R5", "GAO-R6", "GAO-R7", "GAO-R9",
                 "GAO-I1", "GAO-I2", "GAO-I3")),
]
