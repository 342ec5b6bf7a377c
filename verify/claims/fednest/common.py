"""Code shared by the FedNest claim families (Tarzanagh, Li, Thrampoulidis & Oymak, ICML
2022): the claim factories, the rate claims' instance sizes, step ᾱ, grids and step mutant,
the indirect-term mutant, and the hypotheses (Thm 3.1's steps, Assumption A2, Lemma 2.2) that
several families check."""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from bilevel_theory.algorithm import as_schedule
from bilevel_theory.fednest import FedNest, fed_out
from bilevel_theory.inner import fedsvrg

from ...claim import Condition, Mutant
from ...kit import PaperClaims, ledger_totals, lower_level_conditions

P = PaperClaims("fednest")
PL = PaperClaims("lfednest", P.paper)  # LFedNest claims: same paper, their own id prefix
PAPER = P.paper.name
INF = 1e12  # an open upper end of a fitting window

T_sym, N_sym, Np_sym = sp.Symbol("T", positive=True), sp.Symbol("N", positive=True), \
    sp.Symbol("N'", nonnegative=True)

RATE_TAU, RATE_CLIENTS, RATE_NOISE = 2, 5, 0.3


def _alpha_bar(prob, K: int = 16, step_power: float = 0.5) -> float:
    """ᾱ with ᾱ/√16 = 0.5/L_Φ: the ᾱ/√K branch from K = 16 on, stable for every K ≥ 16.

    ``step_power`` ≠ ½ (a mutant): the ``ᾱ`` that makes the schedules' ``ᾱ/√K`` equal
    ``(0.5/L_Φ)(16/K)^{step_power}``, i.e. a step off by ``K^{½ − step_power}``."""
    return 0.5 / prob.constants["L_phi"] * math.sqrt(16.0) * (16.0 / K) ** (step_power - 0.5)


def _average_stationarity(trace) -> dict[str, np.ndarray]:
    return {"value": trace.average_stationarity(), "diverged": trace.diverged,
            **ledger_totals(trace)}


class FedNestDirectOnly(FedNest):
    """FedNest with FedOut's indirect term dropped, ``h_i = ∇ₓf_i`` (the hypergradient
    without ``−∇²_{xy}g[∇²_{yy}g]⁻¹∇_y f``, Lemma 2.1): an implementation bug, a mutant."""

    name = "fednest_direct_only"

    def step(self, ctx, state, k: int):
        hp, x = self.hp, state["x"]
        beta = as_schedule("inner_step", hp["inner_step"])
        y = fedsvrg(ctx, x, state["y"], hp["inner_steps"], lambda t: beta(k),
                    hp["sampled_clients"], hp["inner_local_steps"], hp["replace"])
        x_new, _ = fed_out(ctx, x, y, as_schedule("outer_step", hp["outer_step"])(k),
                           hp["local_steps"], hp["sampled_clients"], hp["neumann_steps"],
                           hp["neumann_scale"], hp["replace"], indirect="none")
        return dict(x=x_new, y=y)


def _step_conditions(prob, hp, beta_bar=None) -> list[Condition]:
    """Thm 3.1's (and Thm 3.2's) step hypotheses for the schedule ``hp(K)`` on ``prob``."""
    c = prob.constants
    conds = [
        Condition("α_k = ᾱ/√K with ᾱ independent of K (eqs. 16, 18)",
                  lambda K: hp(int(K))["outer_step"] * math.sqrt(K), 2.0 / c["L_phi"],
                  relation="=="),
        Condition("α_k ≤ 1/(2L_Φ) (the caps ᾱ₁, ᾱ₂, ᾱ₃ of eq. 16 are not given numerically; "
                  "the descent cap stands for them)", lambda K: hp(int(K))["outer_step"],
                  0.5 / c["L_phi"]),
    ]
    if beta_bar is not None:
        conds.append(Condition("β_k = β̄α_k/T (Thm 3.1, eq. 16)",
                               lambda K: hp(int(K))["inner_step"],
                               lambda K: beta_bar * hp(int(K))["outer_step"]
                               / hp(int(K))["inner_steps"], relation="=="))
    return conds


def _strong_convexity(prob_of, what: str = "g_i(x, ·) is μ_g-strongly convex, μ_g > 0 "
                      "(Assumption A2)") -> Condition:
    """A2 on the instance ``prob_of(x)``: ``μ_g = min_i λ_min(∇²_{yy}g_i) > 0``."""
    return Condition(what, lambda x: prob_of(x).constants["mu_g"], 0.0, relation=">",
                     note="μ_g = min_i λ_min(∇²_{yy}g_i) on the claim's instance")


def _lemma22_conditions(prob_of, scale_of=lambda p: p.constants["ell_g1"],
                        scale_note: str = "") -> tuple[Condition, ...]:
    """Lemma 2.2's hypotheses (Assumptions A and B) on the instance ``prob_of(x)`` and the
    Neumann scale ``scale_of(prob)`` of its estimator: ``μ_g > 0`` (A2) and every client's
    ``‖∇²_{yy}g_i‖ ≤ ℓ`` (A1 with ``ℓ = ℓ_{g,1}``, the scale of eq. 13b), so that ``0 ⪯ I −
    ∇²_{yy}g_i/ℓ ≺ I``.  Assumption B holds trivially with exact oracles."""
    return lower_level_conditions(
        prob_of, "g_i(x, ·) is μ_g-strongly convex, μ_g > 0 (Assumption A2)",
        "‖∇²_{yy}g_i‖ ≤ ℓ for every i, ℓ the Neumann scale of Ĥ_y (eq. 13b: ℓ = ℓ_{g,1}, "
        "which bounds it by Assumption A1)", lambda x: scale_of(prob_of(x)),
        scale_note or "max_i λ_max(∇²_{yy}g_i) against the scale the estimator uses, ℓ_{g,1} "
                      "of the instance")


K_SMOKE = (16, 32, 64, 128, 256)
K_STANDARD = (16, 32, 64, 128, 256, 512, 1024)
K_FULL = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096)

#: the step-schedule mutant of the rate claims: α_k ∝ 1/K, off by a power K^{1/2}
STEP_OVER_K = Mutant(
    "step_over_K", "α_k = (0.5/L_Φ)(16/K) instead of ᾱ/√K (the schedule off by K^{−1/2}): "
    "α_kK stays constant, so the optimisation term 1/(α_kK) no longer decays and the "
    "average stationarity stays O(1)",
    {"step_power": 1.0}, kind="step_exponent")
