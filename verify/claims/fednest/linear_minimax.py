"""FedNest on the minimax instance of §4.3 (Tarzanagh, Li, Thrampoulidis & Oymak, ICML
2022, Fig. 4): linear convergence, and the contrasts with FedAvg-S and LFedNest."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import sympy as sp

from bilevel_theory import rates, run
from bilevel_theory.law_cache import cached_derivation
from bilevel_theory.problems import QuadraticMinimax

from ...claim import Condition, Law, Mutant
from ...kit import per_budget
from .common import P, _strong_convexity

MM_CLIENTS, MM_DIM, MM_T, MM_TAU = 100, 10, 10, 5
a_sym, lam_sym, tau_sym = rates.alpha, rates.lam, rates.tau
muphi_sym = sp.Symbol("mu_Phi", positive=True)

#: FEDNEST-I3 [INFERRED]: the per-epoch contraction (1 − γμ_Φ)² of exact GD on Φ with FedOut's
#: effective step γ = (1 − (1 − αλ/τ)^τ)/λ (``bilevel_theory.fednest.bounds``).
MM_BOUND = rates.BOUNDS["fednest.minimax_gd_contraction"]

MM_SETTINGS = {
    "paper": dict(lam=10.0, spread=1.0),       # §4.3 as printed
    "notebook": dict(lam=0.1, spread=10.0),    # minmax_synthetic.ipynb (λ = 0.1, base_s = 10)
}


@functools.cache
def _mm_problem(setting: str):
    return QuadraticMinimax.fednest_instance(clients=MM_CLIENTS, dim=MM_DIM, seed=0,
                                             **MM_SETTINGS[setting])


def _mm_hyper(prob) -> dict:
    c = prob.constants
    return dict(sampled_clients=prob.clients, local_steps=MM_TAU, outer_step=0.5 / c["L_phi"],
                inner_step=1.0 / (2.0 * c["ell_g1"]))


def _mm_distance(name, prob, k, replicates, seed, backend, sampled=None, run_on=None):
    """``‖x_k − x*‖²/‖x_0 − x*‖²`` after ``k`` epochs of ``name`` on ``prob`` with the steps of
    :func:`_mm_hyper` (full participation unless ``sampled`` clients); ``run_on``: the
    algorithm runs on that instance instead (the one with every ``b_i = 0``, as the official
    notebook's FedNest cell updates ``y``), the distance is still to ``prob``'s ``x*`` (``0``
    for both, ``b`` being centred)."""
    hp = _mm_hyper(prob)
    if sampled is not None:
        hp["sampled_clients"] = int(sampled)
    if name != "fedavg_s":
        hp["inner_steps"] = MM_T
    tr = run(name, run_on or prob, rounds=int(k), replicates=replicates, seed=seed,
             backend=backend, **hp)
    d = tr.distance_to(prob.x_star)
    return d[:, -1] / d[:, 0], tr.diverged


@functools.cache
def _mm_problem_without_b(setting: str):
    prob = _mm_problem(setting)
    return dataclasses.replace(prob, c=np.zeros_like(prob.c), q=np.zeros_like(prob.q))


@cached_derivation
def _mm_law(setting: str) -> Law:
    prob = _mm_problem(setting)
    c = prob.constants
    subs = {a_sym: 0.5 / c["L_phi"], lam_sym: MM_SETTINGS[setting]["lam"], tau_sym: MM_TAU,
            muphi_sym: c["mu_phi"]}
    k = sp.Symbol("k", positive=True)
    log_r = rates.log_ratio(MM_BOUND.expr, k)
    value = float(log_r.subs(subs))
    return Law(value, MM_BOUND.latex(),
               f"{MM_BOUND.source}: semilog slope log(bound(k+1)/bound(k)) = {sp.sstr(log_r)} "
               f"at α = 0.5/L_Φ = {subs[a_sym]:.4g}, λ = {subs[lam_sym]:g}, τ = {MM_TAU}, "
               f"μ_Φ = {subs[muphi_sym]:.6g}: {value:.4f}")


#: K of the heterogeneity sweep: the end of fednest.minimax_linear's grid, where the relative
#: distance (≈ 1e-11) is still far above round-off
MM_K_SPREAD = 24


@functools.cache
def _mm_spread_problem(spread: float):
    """§4.3's instance as printed (λ = 10) with the spread ``s`` of the ``b_i'`` (the
    heterogeneity: ``b_i' ~ N(0, s²I)``, centred across clients) in place of ``s = 1``."""
    return QuadraticMinimax.fednest_instance(clients=MM_CLIENTS, dim=MM_DIM, seed=0,
                                             lam=MM_SETTINGS["paper"]["lam"],
                                             spread=float(spread))


def minimax_linear_vs_spread(spread, replicates, seed, backend="numpy", *, name="fednest"):
    """``‖x_K − x*‖²/‖x_0 − x*‖²`` after ``K = MM_K_SPREAD`` epochs of ``name`` on the §4.3
    instance whose ``b_i'`` have spread ``s`` (full participation, noise-free, the steps of
    :func:`_mm_hyper`); ``name="fedavg_s"``: simultaneous local updates (a mutant)."""
    d, div = _mm_distance(name, _mm_spread_problem(spread), MM_K_SPREAD, replicates, seed,
                          backend)
    return {"value": d, "diverged": div}


@cached_derivation
def _mm_spread_law() -> Law:
    """The exponent in ``s`` of FEDNEST-I3's contraction bound: it holds no ``b_i``."""
    s = sp.Symbol("s", positive=True)
    value = float(rates.leading_exponent(MM_BOUND.expr, s, sp.oo))
    return Law(value, MM_BOUND.latex(),
               f"{MM_BOUND.source}: the bound {sp.sstr(MM_BOUND.expr)} holds no b_i, so its "
               f"leading exponent in the spread s of the b_i (s → ∞, sympy) is {value:g}")


def minimax_linear(k, replicates, seed, backend="numpy", *, sampled=None):
    """FedNest's relative distance to x* after ``k`` epochs (§4.3 as printed, λ = 10);
    ``sampled``: partial participation (a mutant)."""
    d, div = _mm_distance("fednest", _mm_problem("paper"), k, replicates, seed, backend,
                          sampled)
    return {"value": d, "diverged": div}


def _mm_contrast(other, setting, k, replicates, seed, backend, sampled=None,
                 notebook_fednest=False, first="fednest"):
    prob = _mm_problem(setting)
    d, div = _mm_distance(first, prob, k, replicates, seed, backend, sampled,
                          _mm_problem_without_b(setting) if notebook_fednest else None)
    d2, div2 = _mm_distance(other, prob, k, replicates, seed, backend, sampled)
    return {"value": d, "contrast": d2, "diverged": div, "contrast_diverged": div2}


def minimax_vs_fedavg_s(k, replicates, seed, backend="numpy", *, sampled=None):
    """value: FedNest, contrast: FedAvg-S, §4.3 as printed (λ = 10, s = 1)."""
    return _mm_contrast("fedavg_s", "paper", k, replicates, seed, backend, sampled)


def lfednest_vs_fedavg_s(k, replicates, seed, backend="numpy", *, sampled=None):
    """value: LFedNest, contrast: FedAvg-S, §4.3 as printed (λ = 10, s = 1)."""
    return _mm_contrast("fedavg_s", "paper", k, replicates, seed, backend, sampled,
                        first="lfednest")


def minimax_vs_fedavg_s_notebook(k, replicates, seed, backend="numpy", *, sampled=None):
    """value: FedNest, contrast: FedAvg-S, the official notebook's λ = 0.1, s = 10."""
    return _mm_contrast("fedavg_s", "notebook", k, replicates, seed, backend, sampled)


def minimax_vs_lfednest(k, replicates, seed, backend="numpy", *, sampled=None,
                        notebook_fednest=False):
    """value: FedNest, contrast: LFedNest, §4.3 as printed (λ = 10, s = 1).
    ``notebook_fednest``: FedNest as the official notebook's cell runs it (its ``y`` update
    drops every ``b_i``; FEDNEST-R5), with ``sampled`` clients."""
    return _mm_contrast("lfednest", "paper", k, replicates, seed, backend, sampled,
                        notebook_fednest)


def _mm_conditions(setting: str, prob_of=None) -> tuple[Condition, ...]:
    """§4.3's instance as printed (``λ = 10``, ``A_i = t_iI`` with ``t_i ∈ (0, 0.1)``, ``b_i``
    centred across clients), A2 with ``g_i = −f_i``, and the hypotheses of the rate FEDNEST-I3
    (exact gradient descent on Φ: exact oracles, full participation), on ``_mm_problem(setting)``
    with the claims' hyperparameters (``_mm_hyper``); ``prob_of``: the instance at each sweep
    value instead (the ``b_i``-centring condition is then evaluated on each)."""
    prob = _mm_problem(setting)
    c, hp = prob.constants, _mm_hyper(prob)
    t = np.asarray(prob.B.client_norms(0, prob.clients))      # ‖A_i‖ = t_i
    of = prob_of or (lambda v: prob)
    paper = setting == "paper"
    return (
        Condition("λ = 10 (§4.3)", prob.spec["lam"], 10.0, relation="==", inside=paper,
                  note="" if paper else "the official notebook's λ = 0.1 (λ = 10 commented "
                                        "out; FEDNEST-R5), as the claim's schedule states"),
        Condition("A_i = t_iI, t_i drawn from (0, 0.1) (§4.3): max_i t_i < 0.1",
                  float(t.max()), 0.1, relation="<"),
        Condition("A_i = t_iI, t_i drawn from (0, 0.1) (§4.3): min_i t_i > 0",
                  float(t.min()), 0.0, relation=">"),
        Condition("b_i = b_i' − (1/m)Σ_j b_j', so (1/m)Σ_i b_i = 0 (§4.3)",
                  lambda v: float(np.linalg.norm(np.asarray(of(v).c).mean(axis=0))),
                  lambda v: 1e-12 * float(np.linalg.norm(np.asarray(of(v).c), axis=1).max()),
                  note="zero up to round-off: at most 10⁻¹² of max_i ‖b_i‖"),
        _strong_convexity(of, "f_i(x, ·) is μ_f-strongly concave, μ_f > 0 "
                                          "(Assumption A2 with g_i = −f_i)"),
        Condition("full participation |S| = m (FEDNEST-I3 [INFERRED]: exact gradient descent "
                  "on Φ, centred at b̄ = 0; §4.3 states no participation)",
                  hp["sampled_clients"], prob.clients, relation="=="),
        Condition("exact oracles σ_f = σ_{g,1} = σ_{g,2} = 0 (FEDNEST-I3 [INFERRED]: exact "
                  "gradient descent on Φ)",
                  max(c["sigma_f2"], c["sigma_g12"], c["sigma_g22"]), 0.0, relation="=="),
    )


PARTIAL_PARTICIPATION = Mutant(
    "partial_participation", "|S| = 10 of the m = 100 clients per stage: the sampled mean "
    "b̄_S ≠ 0 moves every stage's target, so FedNest stops at a floor instead of converging "
    "linearly (the §4.3 statement assumes the centred b̄ = 0 of the full mean)",
    {"sampled": 10}, kind="noise_averaging")
_MM_WINDOW_REASON = ("the whole grid: x* = 0 and the runs are noise-free, so the relative "
                     "distance stays far above round-off (≥ 1e-13) for k ≤ 24 at the predicted "
                     "contraction; the window equals the grid, decided before the data")


def _vs_fedavg_s_statement(algorithm: str) -> str:
    return (r"\|x_k - x^*\|^2 \propto (1 - \gamma\mu_\Phi)^{2k}\ \mathrm{(" + algorithm
            + r")},\ \mathrm{FedAvg\!-\!S\ stalls}")


#: what the two contrasts with FedAvg-S on §4.3's instance as printed (λ = 10) share
_VS_FEDAVG_S_PAPER = dict(
    kind="contrast", variable="k", quantity=r"\|x_k - x^*\|^2 / \|x_0 - x^*\|^2",
    role="confirmation",
    grid=per_budget(range(20, 41, 4), range(20, 41, 2), range(20, 41, 1)),
    replicates=per_budget(2, 2, 2),
    law=_mm_law("paper"), tolerance=0.1, scale="semilog", window=(20, 40),
    window_reason="the whole grid k ∈ [20, 40], decided before the data: FedAvg-S's "
                  "drift floor on λ = 10 lies below 1e-9 of the start, so the contrast "
                  "can only show after its decay; FedNest stays above round-off there",
    conditions=_mm_conditions("paper"), mutants=(PARTIAL_PARTICIPATION,))


CLAIMS = [
    P.claim(
        "minimax_linear",
        source=P.cite("§4.3, Fig. 4 (\"FedNest converges linearly despite heterogeneity\"); the "
                      "rate is FEDNEST-I3", "[INFERRED]"),
        statement=r"\|x_k - x^*\|^2 \leq (1 - \gamma\mu_\Phi)^{2k}\|x_0 - x^*\|^2,\ "
                  r"\gamma = (1 - (1 - \alpha\lambda/\tau)^\tau)/\lambda",
        kind="at_most", variable="k",
        quantity=r"\|x_k - x^*\|^2 / \|x_0 - x^*\|^2",
        measure=minimax_linear, role="confirmation",
        grid=per_budget(range(0, 25, 4), range(0, 25, 2), range(0, 25, 1)),
        replicates=per_budget(2, 2, 2),
        law=_mm_law("paper"), tolerance=0.1, scale="semilog", window=(0, 24),
        window_reason=_MM_WINDOW_REASON,
        schedule="§4.3 instance as printed: m = 100, d = 10, λ = 10, b_i' ~ N(0, I) centred "
                 "across clients, A_i = t_i I with t_i ~ U(0, 0.1); full participation, "
                 "noise-free (deterministic runs); constant steps α = 0.5/L_Φ, β = 1/(2ℓ_{g,1}), "
                 "T = 10, τ = 5 (the paper gives no schedule for §4.3; the notebook's "
                 "lr = 0.01 with τ = 500 solves λ = 10's x-step exactly in one epoch).",
        conditions=_mm_conditions("paper"),
        touches=("FEDNEST-R5", "FEDNEST-I3"),
        mutants=(PARTIAL_PARTICIPATION,)),
    P.claim(
        "minimax_linear_vs_heterogeneity",
        source=P.cite("§4.3, Fig. 4 (\"FedNest converges linearly despite heterogeneity\"), in "
                      "the heterogeneity; the rate is FEDNEST-I3", "[INFERRED]"),
        statement=r"\|x_K - x^*\|^2 \leq (1 - \gamma\mu_\Phi)^{2K}\|x_0 - x^*\|^2\ "
                  r"\mathrm{at\ every\ spread}\ s\ \mathrm{of\ the}\ b_i",
        kind="at_most", variable="s",
        quantity=r"\|x_K - x^*\|^2 / \|x_0 - x^*\|^2\ (K = 24)",
        measure=minimax_linear_vs_spread, role="confirmation",
        grid=per_budget([1, 2, 4, 8, 16], [0.5, 1, 2, 4, 8, 16, 32],
                        [0.25, 0.5, 1, 2, 4, 8, 16, 32, 64]),
        replicates=per_budget(2, 2, 2),
        law=_mm_spread_law(), tolerance=0.1,
        schedule=f"As fednest.minimax_linear (λ = 10, m = 100, d = 10, full participation, "
                 f"noise-free, α = 0.5/L_Φ, β = 1/(2ℓ_{{g,1}}), T = 10, τ = 5), K = "
                 f"{MM_K_SPREAD} epochs from the default start, on the instance whose b_i' ~ "
                 "N(0, s²I) (centred across clients) with the spread s swept; x* = 0 at every s",
        conditions=_mm_conditions("paper", _mm_spread_problem),
        touches=("FEDNEST-I3",),
        mutants=(Mutant("simultaneous_updates",
                        "x and y updated simultaneously in the local steps (FedAvg-S, α/τ and "
                        "β/τ, one round per epoch) instead of FedNest's alternating FedInn/"
                        "FedOut: the clients drift towards their own b_i, and the distance "
                        "left after K epochs grows with the spread (≈ s² once the drift "
                        "floor dominates)",
                        {"name": "fedavg_s"}, kind="estimator"),)),
    P.claim(
        "minimax_vs_fedavg_s",
        source=P.cite("§4.3, Fig. 4 (FedNest vs FedAvg-S); the rate is FEDNEST-I3", "[INFERRED]"),
        statement=_vs_fedavg_s_statement("FedNest"),
        extra={"series": {"value": "FedNest", "contrast": "FedAvg-S"}},
        measure=minimax_vs_fedavg_s,
        schedule="As fednest.minimax_linear (λ = 10, s = 1, full participation); FedAvg-S: "
                 "τ = 5 simultaneous local steps α/τ, β/τ, one round per epoch.",
        touches=("FEDNEST-R5", "FEDNEST-I3"),
        reason="Recorded: on the paper's own instance (λ = 10) FedAvg-S decays at FedNest's "
               "rate at first and only then stalls, far below anything Fig. 4 can show "
               "(the measurement's contrast slope says where); with the notebook's λ = 0.1, "
               "s = 10 it stalls at once (fednest.minimax_vs_fedavg_s_notebook).",
        **_VS_FEDAVG_S_PAPER),
    P.claim(
        "lfednest_vs_fedavg_s",
        source=P.cite("§4.3, Fig. 4 and its caption (\"LFedNest slightly outperforms "
                      "FedAvg-S\"); the rate is FEDNEST-I3", "[INFERRED]"),
        statement=_vs_fedavg_s_statement("LFedNest"),
        extra={"series": {"value": "LFedNest", "contrast": "FedAvg-S"}},
        measure=lfednest_vs_fedavg_s,
        schedule="As fednest.minimax_vs_fedavg_s, with LFedNest (FedAvg inner loop, LFedOut; "
                 "the same α, β, T, τ) in place of FedNest.",
        touches=("FEDNEST-I2", "FEDNEST-I3"), **_VS_FEDAVG_S_PAPER),
    P.claim(
        "minimax_vs_fedavg_s_notebook",
        source=P.cite("§4.3, Fig. 4 with the official notebook's λ = 0.1, s = 10; the rate is "
                      "FEDNEST-I3", "[INFERRED]"),
        statement=r"\|x_k - x^*\|^2 \propto (1 - \gamma\mu_\Phi)^{2k}\ \mathrm{(FedNest)},\ "
                  r"\mathrm{FedAvg\!-\!S\ stalls}",
        kind="contrast", variable="k",
        extra={"series": {"value": "FedNest", "contrast": "FedAvg-S"}},
        quantity=r"\|x_k - x^*\|^2 / \|x_0 - x^*\|^2",
        measure=minimax_vs_fedavg_s_notebook, role="confirmation",
        grid=per_budget(range(8, 25, 4), range(8, 25, 2), range(8, 25, 1)),
        replicates=per_budget(2, 2, 2),
        law=_mm_law("notebook"), tolerance=0.1, scale="semilog", window=(8, 24),
        window_reason="the whole grid k ∈ [8, 24], decided before the data: FedNest's "
                      "predicted contraction keeps it above round-off there",
        schedule="The notebook's λ = 0.1 and spread s = 10 (b_i' ~ N(0, 100 I), centred "
                 "across clients as the paper states), m = 100, d = 10, full participation, "
                 "α = 0.5/L_Φ, β = 1/(2ℓ_{g,1}), T = 10, τ = 5.",
        conditions=_mm_conditions("notebook"),
        touches=("FEDNEST-R5", "FEDNEST-I3"),
        mutants=(PARTIAL_PARTICIPATION,)),
    P.claim(
        "minimax_vs_lfednest",
        source=P.cite("§4.3, text of Fig. 4 (\"FedNest significantly improves the "
                      "convergence of LFedNest due to controlling client-drift\"): a claim "
                      "about a figure, not a theorem; the rate "
                      "is FEDNEST-I3", "[INFERRED]"),
        statement=r"\mathrm{Fig.\ 4:}\ \|x_k - x^*\|^2 \propto (1 - \gamma\mu_\Phi)^{2k}"
                  r"\ \mathrm{(FedNest)},\ \mathrm{LFedNest\ slower}",
        kind="contrast", variable="k",
        extra={"series": {"value": "FedNest", "contrast": "LFedNest"}},
        quantity=r"\|x_k - x^*\|^2 / \|x_0 - x^*\|^2",
        measure=minimax_vs_lfednest, role="finding", expected="violated",
        grid=per_budget(range(0, 25, 4), range(0, 25, 2), range(0, 25, 1)),
        replicates=per_budget(2, 2, 2),
        law=_mm_law("paper"), tolerance=0.1, scale="semilog", window=(0, 24),
        window_reason=_MM_WINDOW_REASON,
        schedule="As fednest.minimax_linear; LFedNest with the same α, β, T, τ (FedAvg inner "
                 "loop, LFedOut).",
        conditions=_mm_conditions("paper"),
        touches=("FEDNEST-I2", "FEDNEST-R5"),
        mutants=(Mutant("notebook_fednest", "FedNest as the official notebook's FedNest cell "
                        "runs it (its y-update drops every b_i and uses the sampled mean of "
                        "the A_i), |S| = 10 of 100: it converges linearly to the b-free "
                        "solution x* = 0 while LFedNest, which keeps the b_i, stops at the "
                        "floor of b̄_S ≠ 0 — the gap Fig. 4 shows",
                        {"notebook_fednest": True, "sampled": 10}, kind="repair"),),
        reason="A faithful FedNest equals LFedNest here: every client's Hessian in its local "
               "variable is the same (I in y, λI in x; A_i = t_i I only couples x and y), so "
               "the FedAvg/LFedOut local steps average to exactly the SVRG-corrected ones and "
               "the two produce the same iterates to round-off (both slopes in the "
               "measurement): there is no client drift for FedNest to control.  The official "
               "notebook's FedNest cell updates y with −y − ½t̄_S x, dropping every b_i "
               "(LFedNest's cell keeps them): its FedNest solves the b-free problem, which is "
               "where Fig. 4's gap comes from (mutant notebook_fednest)."),
]
