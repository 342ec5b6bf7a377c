"""FedMBO, Lemma 2 (Huang, Zhang & Ji, ICML 2023, App.; Ghadimi & Wang 2018, Lemma 2.2): the
Lipschitz constants ``L_f`` of ``∇Φ``, ``L_y`` of ``y*`` and ``M_f`` of the surrogate
``∇̄f_i``, against the instance's exact ones, for every ``κ_g``.

On a quadratic every Hessian is constant (``ℓ_{g,2} = 0``), so the lemma's constants are
``M_f = ℓ_{f,1}(1 + κ_g)``, ``L_f = ℓ_{f,1}(1 + κ_g)²`` and ``L_y = κ_g``, and the exact ones are
norms of constant matrices: ``‖∇²Φ‖``, ``‖Ā⁻¹B̄‖`` and, per client, the Jacobians of
``∇̄f_i(x, y) = ∇ₓf_i + B̄ᵀĀ⁻¹∇_y f_i`` in ``x`` and in ``y``.  The claim's family makes them
tight as ``κ_g`` grows: ``g = ½y² − bxy`` with ``b = √(κ_g² − κ_g)`` (``μ_g = 1``, ``ℓ_{g,1} =
κ_g``) and ``f = ½(x² + y²)`` (``ℓ_{f,1} = 1``), where ``‖∇²Φ‖ = 1 + b²``, ``Lip(y*) = b`` and
``Lip_y(∇̄f) = b``: the ratios to the lemma's constants are ``(1 + κ_g² − κ_g)/(1 + κ_g)²``,
``√(1 − 1/κ_g)`` and ``√(κ_g² − κ_g)/(1 + κ_g)``, each tending to 1.
"""

from __future__ import annotations

import numpy as np

from bilevel_theory import rates
from bilevel_theory.problems import QuadraticBilevel

from ...claim import Mutant, per_budget
from ...kit import law, lower_level_conditions, per_replicate
from .common import P, kappa_scalar

LEMMA2 = {name: rates.BOUNDS[f"fedmbo.lemma2_{name}"] for name in ("L_f", "M_f", "L_y")}


def lipschitz_problem(kappa_g: float) -> QuadraticBilevel:
    """The claim's family at ``κ_g``: :func:`.common.kappa_scalar` (one client, noise-free,
    ``g = ½y² − bxy`` with ``b = √(κ_g² − κ_g)``: ``μ_g = 1``, ``ℓ_{g,1} = κ_g`` exactly) with the
    quadratic upper level ``f = ½(x² + y²)`` (``ℓ_{f,1} = 1``)."""
    return kappa_scalar(kappa_g, q=0.0, f_curvature=1.0)


def exact_lipschitz(problem: QuadraticBilevel) -> dict[str, float]:
    """The instance's exact Lipschitz constants: ``L_f`` = ``‖∇²Φ‖``, ``L_y`` = ``‖Ā⁻¹B̄‖``,
    ``M_f`` = the largest over the clients of the norms of ``∇̄f_i``'s Jacobians in ``x``
    (``P + B̄ᵀĀ⁻¹R_iᵀ``) and in ``y`` (``R_i + B̄ᵀĀ⁻¹S_i``) (dense, for small instances)."""
    h = problem.host
    C = h.closed_form
    W = np.asarray(C.J).T  # B̄ᵀĀ⁻¹ (dim_x, dim_y)
    m = h.clients
    R, S = h.R.dense_range(0, m), h.S.dense_range(0, m)  # (m, dim_x, dim_y), (m, dim_y, dim_y)
    in_x = np.asarray(h.P)[None] + W[None] @ np.swapaxes(R, 1, 2)
    in_y = R + W[None] @ S
    M_f = max(float(np.linalg.norm(in_x, 2, axis=(1, 2)).max()),
              float(np.linalg.norm(in_y, 2, axis=(1, 2)).max()))
    return {"L_f": problem.constants["L_phi"], "M_f": M_f,
            "L_y": float(np.linalg.norm(np.asarray(C.J), 2))}


def stated_lipschitz(problem: QuadraticBilevel, *, indirect: bool = True) -> dict[str, float]:
    """Lemma 2's constants (the registered ``fedmbo.lemma2_*`` bounds) at the instance's
    ``ℓ_{f,0}, ℓ_{f,1}, ℓ_{g,1}, μ_g`` and ``ℓ_{g,2} = 0``.  ``indirect=False`` (a mutant):
    ``L_f`` without its ``ℓ_{g,1}M_f/μ_g``, the variation of ``∇Φ``'s implicit part
    ``∇y*(x)ᵀ∇_y f`` through ``y*``."""
    c = problem.constants
    values = dict(ell_f0=c["ell_f0"], ell_f1=c["ell_f1"], ell_g1=c["ell_g1"], mu_g=c["mu_g"],
                  ell_g2=c["ell_g2"])
    out = {name: bound.at(**values) for name, bound in LEMMA2.items()}
    if not indirect:
        out["L_f"] -= c["ell_g1"] * out["M_f"] / c["mu_g"]
    return out


def lemma2_vs_kappa(kappa_g, replicates, seed, backend="numpy", *, indirect: bool = True):
    """``value``: the largest ratio of an exact Lipschitz constant to Lemma 2's
    (:func:`exact_lipschitz` over :func:`stated_lipschitz`) on :func:`lipschitz_problem`;
    ``bound``: 1.  Deterministic (no run: the constants are the instance's); each ratio is
    recorded (``ratio_L_f``, ``ratio_M_f``, ``ratio_L_y``)."""
    problem = lipschitz_problem(float(kappa_g))
    exact, stated = exact_lipschitz(problem), stated_lipschitz(problem, indirect=indirect)
    ratios = {f"ratio_{k}": exact[k] / stated[k] for k in LEMMA2}
    return {"value": per_replicate(max(ratios.values()), replicates),
            "bound": per_replicate(1.0, replicates),
            **{k: per_replicate(v, replicates) for k, v in ratios.items()}}


CLAIMS = [
    P.claim(
        "lemma2_constants_vs_kappa", role="confirmation",
        source=P.cite("Lemma 2 (App.), after Ghadimi & Wang 2018, Lemma 2.2"),
        statement=(r"L_f = \ell_{f,1} + \frac{\ell_{g,1}(\ell_{f,1} + M_f)}{\mu_g} + "
                   r"\frac{\ell_{f,0}}{\mu_g}(\ell_{g,2} + \frac{\ell_{g,1}\ell_{g,2}}{\mu_g}),"
                   r"\ L_y = \frac{\ell_{g,1}}{\mu_g},\ M_f = \ell_{f,1} + "
                   r"\frac{\ell_{g,1}\ell_{f,1}}{\mu_g} + \frac{\ell_{f,0}}{\mu_g}(\ell_{g,2} "
                   r"+ \frac{\ell_{g,1}\ell_{g,2}}{\mu_g})"),
        kind="bounded_by", variable=r"\kappa_g",
        quantity=(r"\max(\|\nabla^2\Phi\|/L_f,\ \mathrm{Lip}(\bar\nabla f_i)/M_f,\ "
                  r"\|\nabla y^*\|/L_y)"),
        measure=lemma2_vs_kappa,
        grid=per_budget((1.5, 2, 4, 8, 16, 32, 64), (1.5, 2, 4, 8, 16, 32, 64, 128, 256),
                        (1.25, 1.5, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)),
        replicates=per_budget(2, 2, 2), law=law(rates.law_for(LEMMA2["L_f"], "bound")),
        tolerance=0.0,
        mutants=(Mutant("indirect_dropped", "L_f without its ℓ_{g,1}M_f/μ_g, the variation of "
                        "∇Φ's implicit part ∇y*(x)ᵀ∇_y f through y*: ℓ_{f,1}(1 + κ_g) is below "
                        "‖∇²Φ‖ = ℓ_{f,1}(1 + κ_g² − κ_g) from κ_g > 2",
                        {"indirect": False}, kind="indirect_term"),),
        schedule=("no run: the exact constants of the instance against the lemma's, on the "
                  "family g = ½y² − bxy, f = ½(x² + y²) with b = √(κ_g² − κ_g) (one client, "
                  "μ_g = 1, ℓ_{g,1} = κ_g, ℓ_{f,1} = 1, ℓ_{g,2} = 0: constant Hessians); exact: "
                  "‖∇²Φ‖ = 1 + b², ‖∇y*‖ = b, the Jacobians of ∇̄f(x, y) = x + by (1 and b); "
                  "the lemma's: L_f = (1 + κ_g)², L_y = κ_g, M_f = 1 + κ_g.  The ratios "
                  "(1 + κ_g² − κ_g)/(1 + κ_g)², √(1 − 1/κ_g) and b/(1 + κ_g) rise to 1 as κ_g "
                  "grows: the grid's last points are where the constants are tightest"),
        conditions=lower_level_conditions(
            lipschitz_problem, "g μ_g-strongly convex in y, μ_g > 0 (Assumption 2)",
            "‖∇²_{yy}g‖ ≤ ℓ_{g,1} (Assumption 1)"),
        touches=("FEDMBO-R14",)),
]
