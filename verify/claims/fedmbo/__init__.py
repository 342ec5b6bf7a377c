"""FedMBO claims — Huang, Zhang & Ji, ICML 2023 (arXiv:2302.05412).

Every prediction is derived with ``bilevel_theory.rates`` from the paper's bounds (registered
ones, or sympy expressions built below from ``rates`` symbols); every run uses the schedule
the result prescribes, with the constants chosen here and stated in each claim's ``schedule``.
Readings of the paper's ambiguities are cited by their ids (``FEDMBO-R…``, ``FEDMBO-I…``,
``docs/papers/fedmbo.md``).

Instances (closed form, small):

* PHE claims: ``QuadraticBilevel.random(clients=100, dim_x=2, dim_y=2, kappa=2, coupling=0.5,
  heterogeneity=0.5, storage="structured", seed=1)`` (shared eigenbasis, so ``λ_min(Ā) = μ_g``
  exactly and the Neumann ratio is exactly ``(κ_g−1)/κ_g``), at the point ``x = 1, y = 0``;
  the estimator's conditional mean ``H̄`` is in closed form (:func:`phe_mean`):
  ``H̄ = ∇ₓf̄ + B̄ᵀĀ⁻¹(I − (I − Ā/ℓ)^N)∇_y f̄`` (independent factors, clients sampled with
  replacement, ``∇²_{xy}g = −Bᵀ``).
* Scalar instances (:func:`scalar_problem`): one dimension, identical clients, noise-free,
  ``g = ½ay² − bxy``, linear upper level ``f = qy`` (``ℓ_{f,1} = 0`` and ``ℓ_{f,0} = |q|``
  globally, so Assumption 1 holds on the whole space).  They are the worst cases of Prop. 1 and
  Prop. 2 (:func:`bias_bound_search`, :func:`prop2_ratio`; derivations in
  ``docs/papers/fedmbo.md``).
* Theorem 1 / Corollary 1 claims: ``kappa=1.25, coupling=0.2, upper_mu=20`` (``κ_g ≈ 1.32``,
  ``Φ`` well conditioned so that the runs reach the asymptotic regime in a few hundred rounds),
  gradient noise ``σ_f = σ_{g,1} = 10``, Hessian noise ``0.3``.  Step sizes from the proof's
  constants (:func:`thm1_constants`): ``α_k = min{α̂₁, α̂₂, √(n/K)·α̂₃}``,
  ``β = β̄α_k/T``; the ``√(n/K)`` branch is active on every grid point.  Fig. 2's fixed
  sampling ratio runs copies of that instance (:func:`ratio_problem`, ``M`` clients, ``n = M/10``
  sampled without replacement); Remark 4's full participation runs copies of a 4-client
  population drawn with the same knobs (:func:`full_problem`, its own proof constants), every
  client in every round.
* Inner-loop claims: ``kappa=10, heterogeneity=1, dim_y=2`` (dense per-client Hessians), at a
  far point (``‖y*(x)‖`` large), where FedAvg's client drift is visible.

Mutants are implemented here, as keywords of the measures (e.g. ``fixed`` for a deterministic
Neumann truncation, ``shared`` for PHE chains that share their truncation and clients,
``indirect=False`` for FedMBO without PHE's indirect term, :class:`FedMBODirectOnly`: on the
Theorem-1 instance it stops at ``‖∇Φ‖² ≈ 1.1``, above every average the runs reach;
``fixed=True`` for FedMBO with PHE truncated deterministically, :class:`FedMBOFixedTruncation`;
both override ``FedMBO.hypergradients`` alone).

Modules, one per family of results (the catalogue keeps this order): :mod:`.bias` (Prop. 1,
in N and κ_g), :mod:`.variance` (Props. 2–3, the FedNest contrast), :mod:`.stationarity` (Thm 1
in K, n and N, Cor. 1), :mod:`.inner_loop` (Lemma 5 in n, T, β and S; Remark 5 in S, m and the heterogeneity
h), :mod:`.kappa` (Cor. 1's κ_g-dependence), :mod:`.constants` (Lemma 2's Lipschitz constants
against the instance's exact ones); the instances and helpers they share are in :mod:`.common`.
"""

from . import bias, constants, inner_loop, kappa, stationarity, variance
from .bias import (
    BIAS_MC_REL,
    BOUND_INSTANCE,
    TIGHT,
    bias_bound_point,
    bias_bound_ratio,
    bias_bound_search,
    bias_relative_error,
    phe_bias,
    phe_moments,
)
from .common import (
    B2_FACTOR,
    EPS_N,
    GPU_CLIENTS,
    GPU_SAMPLED,
    PHE_POINT,
    P,
    phe_mean,
    phe_problem,
    scalar_problem,
)
from .inner_loop import inner_drift
from .stationarity import (
    EPS_C,
    SPEEDUP_NK,
    STAT_K_N,
    STAT_N_K,
    direct_only_floor,
    iterations_for,
    stationarity_at_epsilon,
    stationarity_at_speedup,
    stationarity_vs_K,
    stationarity_vs_n,
    thm1_constants,
    thm1_problem,
    thm1_steps,
)
from .variance import (
    PROP2,
    VAR_N,
    ihgp_hypergradient,
    phe_vs_ihgp_variance,
    prop2_crossing,
    prop2_d_tilde2,
    prop2_explicit,
    prop2_ratio,
    prop2_second_moment,
    prop2_second_moment_closed,
    prop2_second_moment_crossing,
    prop2_sigma_tilde2,
    truncation_moment,
)

CLAIMS = [*bias.CLAIMS, *variance.CLAIMS, *stationarity.CLAIMS, *inner_loop.CLAIMS, *kappa.CLAIMS,
          *constants.CLAIMS]

#: the names imported from this package outside it (re-exported from its modules)
__all__ = [
    "CLAIMS", "B2_FACTOR", "BIAS_MC_REL", "BOUND_INSTANCE", "EPS_C", "EPS_N", "GPU_CLIENTS",
    "GPU_SAMPLED", "P", "PHE_POINT", "PROP2", "SPEEDUP_NK", "STAT_K_N", "STAT_N_K", "TIGHT",
    "VAR_N", "bias_bound_point", "bias_bound_ratio", "bias_bound_search", "bias_relative_error",
    "direct_only_floor", "ihgp_hypergradient", "inner_drift", "iterations_for", "phe_bias",
    "phe_mean", "phe_moments", "phe_problem", "phe_vs_ihgp_variance", "prop2_crossing",
    "prop2_d_tilde2", "prop2_explicit", "prop2_ratio", "prop2_second_moment",
    "prop2_second_moment_closed", "prop2_second_moment_crossing", "prop2_sigma_tilde2", "scalar_problem",
    "stationarity_at_epsilon", "stationarity_at_speedup", "stationarity_vs_K",
    "stationarity_vs_n", "thm1_constants", "thm1_problem", "thm1_steps", "truncation_moment",
]
