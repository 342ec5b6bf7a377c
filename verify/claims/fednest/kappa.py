"""FedNest's Lemma 2.2 in κ_g (Tarzanagh, Li, Thrampoulidis & Oymak, ICML 2022, Lemma 2.2,
eqs. 14–15): the deviation bound ``2/μ_g`` and the indirect term's bias bound
``b = κ_g ℓ_{f,1}((κ_g − 1)/κ_g)^N`` at a fixed ``N``, with ``κ_g`` swept.

**Instances.**  ``fedmbo.common.kappa_scalar``: the scalar instance ``g = ½ay² − bxy``, ``f = qy`` of the Lemma's ``N``-sweeps
(``fednest.ihgp_deviation_bound``, ``fednest.indirect_bias_bound``), with ``a = μ_g = 1`` and
``b = √(κ_g² − κ_g)``: then ``ℓ_{g,1} = (a + √(a² + 4b²))/2 = κ_g`` exactly, so one knob
sets the condition number and ``μ_g``, ``ℓ_{f,0} = |q| = 1`` and ``ℓ_{f,1} = 0`` stay put.
The estimator's factor per Neumann step is ``ρ = 1 − μ_g/ℓ_{g,1} = (κ_g − 1)/κ_g``.

**Where the bounds are tightest.**  Along an eigen-direction the deviation is
``(1/N)Σ_{k<N}|1/μ_g − (N/ℓ)ρ^k|`` (``deviation_closed_form``); its ratio to ``2/μ_g`` is
largest at ``κ_g = 1`` (``1 − 1/N``), which is the grid's first point.  The indirect bias is
``bρ^N|q|/a = √(1 − 1/κ_g)·κ_gρ^N`` against eq. (15)'s ``κ_gℓ_{f,1}ρ^N = 0``: the finding holds
at every ``κ_g > 1``, and the repair's bound ``κ_gℓ_{f,0}ρ^N`` is approached as ``κ_g`` grows
(ratio ``√(1 − 1/κ_g)``).
"""

from __future__ import annotations

from bilevel_theory import rates

from ...claim import Mutant, per_budget
from ...kit import law
from ..fedmbo.common import kappa_scalar
from .common import P, _lemma22_conditions
from .estimator import _deviation, _indirect_bias, _indirect_conditions

DEV_N = 16   # Neumann terms of the deviation sweep (ratio 1 − 1/N at κ_g = 1)
BIAS_N = 4   # Neumann terms of the indirect-bias sweep


def ihgp_deviation_vs_kappa(kappa_g, replicates, seed, backend="numpy", *, scale_factor=1.0,
                            constant=2.0):
    """``E_W|H⁻¹ − Ĥ_y|`` (Lemma 2.2, eq. 14, second bound) of FedIHGP (Alg. 3, random ``N'``,
    ``N = 16``) on :func:`kappa_scalar`, averaged over ``DEV_DRAWS`` calls per replicate;
    ``bound``: ``constant/μ_g``; ``closed_form``: the exact mean.  Mutants: ``scale_factor``
    multiplies the Neumann scale, ``constant`` replaces the 2."""
    return _deviation(kappa_scalar(float(kappa_g)), DEV_N, replicates, seed, backend,
                      scale_factor, constant, 0.0)


def indirect_bias_vs_kappa(kappa_g, replicates, seed, backend="numpy", *, lip="ell_f1"):
    """``‖E_W[h^I] − ∇̄^I f‖`` (Lemma 2.2, eq. 15) at ``N = 4`` on :func:`kappa_scalar`,
    deterministic; ``bound``: ``κ_g ℓ_{f,1}((κ_g − 1)/κ_g)^N`` (``lip="ell_f0"``: with
    ``ℓ_{f,0}``, the repair, a mutant)."""
    return _indirect_bias(kappa_scalar(float(kappa_g)), BIAS_N, replicates, seed, backend,
                          lip)


KAPPA_GRID = per_budget((1.0, 1.5, 2.0, 4.0, 8.0, 16.0),
                        (1.0, 1.25, 1.5, 2.0, 4.0, 8.0, 16.0, 32.0),
                        (1.0, 1.25, 1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0))
BIAS_GRID = per_budget((1.5, 2.0, 4.0, 8.0, 16.0), (1.25, 1.5, 2.0, 4.0, 8.0, 16.0, 32.0),
                       (1.25, 1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0))
_INSTANCE = ("scalar instance g = ½y² − bxy, f = y with b = √(κ_g² − κ_g): μ_g = 1, ℓ_{g,1} = "
             "κ_g exactly, ℓ_{f,0} = 1, ℓ_{f,1} = 0 (one client, noise-free)")

CLAIMS = [
    P.claim(
        "ihgp_deviation_vs_kappa",
        source=P.cite("Lemma 2.2, eq. (14), second bound, for every κ_g"),
        statement=r"\mathbb{E}_W\|[\nabla^2_y g]^{-1} - \hat H_y\| \leq \frac{2}{\mu_g}"
                  r"\quad\mathrm{for\ every}\ \kappa_g\ (N = 16)",
        kind="bounded_by", variable=r"\kappa_g",
        quantity=r"\mathbb{E}_W|[\nabla^2_y g]^{-1} - \hat H_y|",
        measure=ihgp_deviation_vs_kappa, grid=KAPPA_GRID, replicates=per_budget(16, 64, 256),
        law=law(rates.law_for("fednest.lemma22_second", "bound")), tolerance=0.0,
        schedule=f"FedIHGP (Alg. 3) with N = {DEV_N}, N' ~ U{{0..N−1}}, scale ℓ_{{g,1}}, on the "
                 f"{_INSTANCE}; each replicate averages 2^14 independent calls.  κ_g = 1 (the "
                 "bound's worst case, ratio 1 − 1/N) is the grid's first point.",
        conditions=_lemma22_conditions(kappa_scalar),
        touches=("FEDNEST-R6", "FEDNEST-R2"),
        mutants=(
            Mutant("ell_halved", "the Neumann scale ℓ_{g,1}/2 (the constant of g = ½‖y − r‖² "
                   "used for g = ‖y − r‖²): at κ_g = 1 the factor 1 − 2μ_g/ℓ is −1 and E|H⁻¹ "
                   "− Ĥ| ≈ 2N/ℓ, above 2/μ_g", {"scale_factor": 0.5}, kind="neumann_scaling"),
        ),
        reason="Holds at every κ_g with the largest ratio at κ_g = 1 (1 − 1/N = 0.94): with "
               "exact Hessians Ĥ_y ⪰ 0 and E‖H⁻¹ − Ĥ_y‖ < 1/μ_g + (1/ℓ)Σ_{k<N}ρ^k < 2/μ_g; the "
               "deviation falls with κ_g (the closed_form metric is the exact mean)."),
    P.claim(
        "indirect_bias_vs_kappa",
        source=P.cite("Lemma 2.2, eq. (15) (b with ℓ_{f,1}), for every κ_g"),
        statement=r"\|\mathbb{E}_W[h_i^I(x, y)] - \bar\nabla^I f_i(x, y)\| \leq b := "
                  r"\kappa_g \ell_{f,1}((\kappa_g - 1)/\kappa_g)^N\quad(N = 4)",
        kind="bounded_by", variable=r"\kappa_g",
        quantity=r"\|\mathbb{E}_W[h^I] - \bar\nabla^I f\|",
        measure=indirect_bias_vs_kappa, role="finding", expected="violated",
        grid=BIAS_GRID, replicates=per_budget(2, 2, 2),
        law=law(rates.law_for("fednest.lemma22_b", "bound")), tolerance=0.0, scale="loglog",
        schedule=f"Alg. 3's E_W[p_{{N'}}] in closed form (the deterministic series) with N = "
                 f"{BIAS_N} at the point (1, 0) of the {_INSTANCE}; deterministic (replicates "
                 "identical).",
        conditions=_indirect_conditions(kappa_scalar),
        touches=("FEDNEST-R11", "FEDNEST-R2"),
        mutants=(Mutant("proof_constant", "b with ℓ_{f,0} in place of ℓ_{f,1}: b = κ_gℓ_{f,0}"
                        "ρ^N ≥ bρ^N|q|/a (ratio √(1 − 1/κ_g) < 1), and the bound holds",
                        {"lip": "ell_f0"}, kind="repair"),),
        reason="fednest.indirect_bias_bound's finding at every κ_g: the bias of the indirect "
               "term is ∇²_{xy}g[∇²_y g]⁻¹(I − ∇²_y g/ℓ)^N∇_y f, which scales with ‖∇_y f‖ ≤ "
               "ℓ_{f,0}, not with ℓ_{f,1}; with the linear f (ℓ_{f,1} = 0) eq. (15) gives b = 0 "
               "while the bias is √(κ_g² − κ_g)ρ^N > 0 for every κ_g > 1."),
]
