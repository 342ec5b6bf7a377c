"""Gao 2022, Cor 1 and Cor 2 on heterogeneous devices (Gao, arXiv preprint 2022,
arXiv:2204.13299, Cor 1 / Cor 2 under A4's heterogeneity ``δ²``).

**Heterogeneous devices (findings).**  Eq. (3.1) gives device ``k`` its own Hessians (GAO-R3),
so both methods converge to the zero ``x̃`` of the device-averaged local estimator, in closed form
(:func:`bilevel_theory.gao.biased_stationary_point`): ``A ≥ ‖∇Φ(x̃)‖² − o(1)`` along the
schedule, a floor that no term of Thm. 1/2 carries.  The claims assert Cor. 1/2's ``A ≤ ε``
itself (``bounded_by``, bound ``ε``) at sweep points whose ``ε`` lies below that floor; the
repair (every device given the devices' mean Hessians, gradients still heterogeneous) must
make it hold.
"""

from __future__ import annotations

import numpy as np

from bilevel_theory.gao import (
    biased_stationary_point,
    gao_constants,
)

from ...claim import Condition, Law, Mutant
from ...kit import per_replicate
from .common import (
    _A,
    _M_SCHED,
    _V_SCHED,
    DEVICES,
    DIM,
    HET_SEED,
    HETEROGENEITY,
    KAPPA,
    M_DESIGN,
    P_,
    PERIODS,
    V_DESIGN,
    V_PERIODS,
    _assumption_conditions,
    _check_mutant,
    _grid_T,
    _schedule_conditions,
    heterogeneous,
    run_schedule,
    shared_hessians,
)

# ================================================================================ measures

def _at_solution(problem) -> dict:
    """``x₀ = x*`` (the stationary point of Φ) and ``y₀ = y*(x*)``: the bound's transient terms
    vanish and only the floor (and the ε-terms) remain."""
    x = np.asarray(problem.x_star, dtype=float)
    return dict(x0=x, y0=np.asarray(problem.y_star(x), dtype=float))


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


# ================================================================================ laws

#: Cor. 1/2 assert ``A ≤ ε``: a bound given per point by the measure (``bound = ε``)
LAW_TARGET = Law(float("nan"), r"A \leq \epsilon",
                 "Cor 1 / Cor 2: the achieved average is at most the target accuracy ε at the "
                 "corollary's schedule; the bound at each point is that point's ε")


# ================================================================================ claims

_HETER = (f"heterogeneous devices (QuadraticBilevel.random(clients {DEVICES}, dim {DIM}, κ = "
          f"{KAPPA:g}, heterogeneity {HETEROGENEITY:g}, seed {HET_SEED}); A4 holds with the "
          "instance's δ²), exact oracles (σ = 0: the floor, not the noise, is tested; every "
          "replicate is the same run), started at x₀ = x*, y₀ = y*(x*) (the bound's transient "
          "terms vanish); value A against the bound ε of Cor 1/2 at each point (tolerance 0); "
          "metric floor = ‖∇Φ(x̃)‖² in closed form at the point's θ, Q")
_SHARED_HESSIANS = Mutant(
    "shared_hessians", "every device's ∇²_yy g^{(k)}, ∇²_xy g^{(k)} replaced by the devices' mean "
    "(gradients still heterogeneous): the device average of eq. (3.1) is then ∇Φ, x̃ = x* up to "
    "the truncation bias, and A ≤ ε holds", {"mutant": "shared_hessians"}, kind="repair")


def _floor_reason(design_name: str) -> str:
    P = heterogeneous()
    _, exact = biased_stationary_point(P, neumann_steps=None)
    return (
        f"Along {design_name}'s schedule the iterates converge to the zero x̃ of the "
        "device-averaged local estimator (eq. 3.1 gives device k its own Hessians, GAO-R3), so "
        "A ≥ ‖∇Φ(x̃)‖² − o(1) (the report's metric floor; with exact local inverses "
        f"‖∇Φ(x̃)‖² = {exact:.4g} in closed form on this instance), above every ε of the grid: "
        "A ≤ ε fails at each point. x̃ depends on neither η, p, T, ρ nor α, β, so no choice of "
        "the O-constants removes the floor once the run has converged; steps small enough "
        "(Thm 1's and 2's own ρ limits, GAO-R7) only delay it beyond any practical T (from "
        "x*, A stays below ε on this grid's T there), which is why the finding inside those "
        "limits is the T → ∞ one named at the end. Mathematical reason: (1/K)Σ_k ∇²_{xy}g^{(k)}"
        "[∇²_{yy}g^{(k)}]^{-1}∇_y f^{(k)} ≠ ∇²_{xy}g[∇²_{yy}g]^{-1}∇_y f when the Hessians "
        "differ; Thm 1/2 carry the heterogeneity δ² only multiplied by terms the schedule "
        "drives to 0 (p²η² = O(ε) in Thm 1, A·ln(T+1) = Õ(ε) in Thm 2) plus 4Δ_Q² = O(ε), so "
        "no term of the bound carries this floor. The runs use practical step constants "
        "(GAO-R7); inside every step condition of Thm 1 the same floor contradicts Thm 1's "
        "bound as T → ∞ (gao.localbsgm_heterogeneous_limit, closed form).")


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


CLAIMS = [
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
]
