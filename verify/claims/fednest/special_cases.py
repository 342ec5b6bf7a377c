"""FedNest's rates in the special cases (Tarzanagh, Li, Thrampoulidis & Oymak, ICML 2022,
Cor 3.3 compositional and Thm 3.2 single level): ``O(1/√K)``."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from bilevel_theory import run
from bilevel_theory.algorithm import run_algorithm
from bilevel_theory.fednest import FedNest, corollary_3_3_schedule, theorem_3_2_schedule
from bilevel_theory.problems import QuadraticBilevel, QuadraticCompositional
from bilevel_theory.problems.quadratic import shared

from ...claim import Condition, Mutant
from ...kit import law, per_budget
from .common import (
    K_FULL,
    K_SMOKE,
    K_STANDARD,
    RATE_CLIENTS,
    RATE_NOISE,
    RATE_TAU,
    STEP_OVER_K,
    FedNestDirectOnly,
    P,
    _alpha_bar,
    _average_stationarity,
    _step_conditions,
)

# =============================================================================================
# Cor. 3.3 (compositional): O(1/√K)
# =============================================================================================

@functools.cache
def _compositional_problem():
    return QuadraticCompositional.random(clients=10, dim_x=2, dim_y=2, heterogeneity=0.2,
                                         noise=RATE_NOISE, seed=0, upper_mu=0.5)


def compositional_rate(K, replicates, seed, backend="numpy", *, step_power=0.5,
                       indirect=True):
    """FedNest on ``g_i = ½‖y − r_i(x)‖²`` at Cor. 3.3's schedule (``T = 1``).
    ``indirect=False``: FedOut without the indirect term (:class:`FedNestDirectOnly`, a
    mutant); here the direct part ``∇ₓf_i`` is 0, the whole hypergradient is indirect."""
    prob = _compositional_problem()
    K = int(K)
    hp = corollary_3_3_schedule(K, _alpha_bar(prob, K, step_power), beta_bar=1.0)
    cls = FedNest if indirect else FedNestDirectOnly
    tr = run_algorithm(cls(prob, local_steps=RATE_TAU, sampled_clients=RATE_CLIENTS, **hp),
                       K, replicates, seed, backend)
    return _average_stationarity(tr)


# =============================================================================================
# Thm. 3.2 (single level FedSVRG): O(1/√K)
# =============================================================================================

@functools.cache
def _single_level_problem():
    """A bilevel instance with its upper level made independent of y (R = S = 0, q = 0):
    ``f_i(x) = ½xᵀPx + p_iᵀx``, heterogeneous ``p_i``, noisy gradients."""
    prob = QuadraticBilevel.random(clients=10, dim_x=2, dim_y=2, kappa=2.0, heterogeneity=0.2,
                                   noise=RATE_NOISE, seed=0, upper_mu=1.0)
    m, dx, dy = prob.clients, prob.dim_x, prob.dim_y
    return dataclasses.replace(prob, R=shared(np.zeros((dx, dy)), m),
                               S=shared(np.zeros((dy, dy)), m), q=np.zeros((m, dy)))


def single_level_rate(K, replicates, seed, backend="numpy", *, step_power=0.5):
    """Federated SVRG (FedOut with ∇^I = 0) at Thm. 3.2's ``α_k = ᾱ/√K``."""
    prob = _single_level_problem()
    K = int(K)
    hp = theorem_3_2_schedule(K, _alpha_bar(prob, K, step_power))
    tr = run("fedsvrg", prob, rounds=K, replicates=replicates, seed=seed, backend=backend,
             local_steps=RATE_TAU, sampled_clients=RATE_CLIENTS, **hp)
    return _average_stationarity(tr)


def _compositional_hp(K: int) -> dict:
    return corollary_3_3_schedule(K, _alpha_bar(_compositional_problem(), K), beta_bar=1.0)


def _single_level_hp(K: int) -> dict:
    return theorem_3_2_schedule(K, _alpha_bar(_single_level_problem(), K))


def _cor33_conditions() -> tuple[Condition, ...]:
    return (*_step_conditions(_compositional_problem(), _compositional_hp, 1.0),
            Condition("T = 1 (Cor 3.3)", lambda K: _compositional_hp(int(K))["inner_steps"],
                      1, relation="=="))


def _thm32_conditions() -> tuple[Condition, ...]:
    return tuple(_step_conditions(_single_level_problem(), _single_level_hp))


CLAIMS = [
    P.claim(
        "compositional_rate",
        source=P.cite("Cor 3.3 (compositional)"),
        statement=r"\frac{1}{K}\sum_k \mathbb{E}\|\nabla f(x^k)\|^2 = O\left(\frac{1}{\sqrt{K}}"
                  r"\right)",
        kind="at_most", variable="K",
        quantity=r"\frac{1}{K}\sum_{k<K}\|\nabla\Phi(x_k)\|^2",
        measure=compositional_rate, role="confirmation",
        grid=per_budget(K_SMOKE, K_STANDARD, K_FULL),
        replicates=per_budget(16, 64, 256),
        law=law("fednest.cor33", "exponent", "K"), tolerance=0.1,
        schedule="Cor. 3.3 via corollary_3_3_schedule: T = 1, α_k = ᾱ/√K (ᾱ = 2/L_Φ), "
                 "β_k = β̄α_k with β̄ = 1; τ = 2, |S| = 5 of 10, noise 0.3; FedIHGP is exact "
                 "(∇²_{yy}g = I).  Instance QuadraticCompositional, h = 0.2, upper_mu = 0.5.",
        conditions=_cor33_conditions(),
        touches=("FEDNEST-R8", "FEDNEST-R4"),
        mutants=(STEP_OVER_K,
                 Mutant("indirect_dropped", "FedOut's h_i = ∇ₓf_i without the indirect term "
                        "ℓ_{g,1}∇r_i(x)ᵀp (Lemma 2.1's hypergradient truncated to its direct "
                        "part, which is 0 for a compositional f_i(y)): x never moves, so the "
                        "average stationarity stays at ‖∇Φ(x⁰)‖² instead of decaying",
                        {"indirect": False}, kind="indirect_term"))),
    P.claim(
        "fedsvrg_single_level",
        source=P.cite("Thm 3.2 (single level)"),
        statement=r"\frac{1}{K}\sum_k \mathbb{E}\|\nabla f(x^k)\|^2 = O\left("
                  r"\frac{\Delta_f}{\bar\alpha_1 K} + \frac{\Delta_f/\bar\alpha + "
                  r"\bar\alpha\sigma_f^2}{\sqrt{K}}\right)",
        kind="at_most", variable="K",
        quantity=r"\frac{1}{K}\sum_{k<K}\|\nabla f(x_k)\|^2",
        measure=single_level_rate, role="confirmation",
        grid=per_budget(K_SMOKE, K_STANDARD, K_FULL),
        replicates=per_budget(16, 64, 256),
        law=law("fednest.thm32", "exponent", "K"), tolerance=0.1,
        schedule="Thm. 3.2 via theorem_3_2_schedule: α_k = min{ᾱ₁, ᾱ/√K} on the ᾱ/√K branch "
                 "(ᾱ = 2/L_Φ), α_i = α_k/τ, τ = 2, |S| = 5 of 10, noise 0.3.  Instance: "
                 "QuadraticBilevel κ = 2, h = 0.2 with R = S = 0, q = 0, i.e. "
                 "f_i(x) = ½xᵀPx + p_iᵀx.",
        conditions=_thm32_conditions(),
        touches=("FEDNEST-R4",),
        mutants=(STEP_OVER_K,)),
]
