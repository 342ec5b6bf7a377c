"""AFBO claims — Li, Zhu, Gong, Mao & Zhou, "Anarchic Federated Bilevel Optimization",
WiOpt 2024 (the algorithm is ``bilevel_theory/afbo.py``; readings ``AFBO-R…``/``AFBO-I…`` in
``docs/papers/afbo.md``).

**Instances.**  The rate claims run on :func:`rate_problem` (4 clients, κ = 1, coupling 1,
``upper_mu = 4``: κ_g ≈ 2.34, strong coupling) inside Thm 4.1's step conditions: ``η ≤ a_1``
with ``a_1 = 1/(2L_f + 4M_fL_y + 2M_f)`` ≈ 0.0027 (AFBO-R6), the ``β`` condition and
``a_2`` read as in AFBO-R12, Cor. 4.1's ``K^tβ² ≤ 1/T`` and ``N = O(log T)``; every claim
declares them as ``conditions`` (:func:`theorem_conditions`).  The estimator and speedup claims
use a population of 4 heterogeneous clients (``QuadraticBilevel.random``: dims 3, κ = 2,
heterogeneity 1, ``upper_mu = 1``, structured storage, seed 1), **tiled**: ``m`` clients are
``m/4`` copies of the population, so Φ, ``x*`` and every constant are the same for every ``m``.
Gradient noise is additive with ``E‖ξ‖² = σ² = 1`` on every stochastic gradient;
Hessian/Jacobian products are exact (``σ_{g,2} = 0``, allowed by Assumption 4.4).  The
staleness claims (Thm 4.1(b) and (a) in the delay) and the step claim (Remark 1's floor at a
constant ``η``) have their own instance (:func:`floor_problem`).

**Schedules** (Cor. 4.1; rates as stated, constants fixed by the conditions;
:func:`bilevel_theory.afbo.theorem_schedule`): ``η = c/√T`` (strongly convex) or ``η =
c√(m/T)`` (nonconvex) with ``η(T_MIN) = a_1`` (:func:`rate_eta_scale`), ``β = min(1/(2ℓ_{g,1}),
1/√(KT))``, ``K = 5``, delays ``BoundedDelay(3)`` (Assumption 4.6 with ``τ_M = 3``) unless a
claim says otherwise.  The speedup claims and ``no_bias_bounded_delays``,
``heterogeneous_local_iterations`` leave ``η ≤ a_1`` on purpose (their conditions say why).

**Neumann truncation.**  APHE *as written* fixes ``U = m``: ``(U/ℓ)(I − Ĥ/ℓ)^U`` is not an
inverse-Hessian estimate (lemma AFBO-L1 in ``docs/papers/afbo.md``: in every eigendirection it
is at most ``1/e`` of the inverse).  ``afbo.aphe_bias`` checks the lemma's consequence against
Thm 4.1's ``b`` in ``m`` and ``afbo.aphe_bias_vs_kappa`` in ``κ_g`` (``m = U = 16``, the
population's knob solved for ``κ_g``); ``afbo.strongly_convex_rate`` shows the resulting wrong
limit point.  So that the rates are tested apart from that bias, the other claims run
FedNest/FedMBO's random truncation (``"random"``) or its expectation, the truncated series
(``"series"``), with ``N ≥ ⌈κ_g log T⌉`` (AFBO-R9).

**Noise floors.**  The strongly convex claims start at ``(x*, y*(x*))`` and estimate
``E‖x^T − x*‖²`` by the mean of ``‖x^t − x*‖²`` over ``t ≥ T/2``, where the law of ``x^t`` is
that of ``x^T`` (on :func:`rate_problem`, ``μ_Φη(T/2) ≥ 2.3`` at every ``T ≥ T_MIN``, so the
build-up ``1 − e^{−2μ_Φηt}`` exceeds 0.99 there).

Mutants are keywords of the measures (``truncation``, ``step``, ``steps``, ``indirect``, ``naive``,
``aligned``, ``stale_weighting``…), each with its ``kind``.

**Modules.**  :mod:`.common` (constants, instances, schedules, shared runs, laws, Thm 4.1's
conditions), :mod:`.bias` (APHE's bias, Thm 4.1's ``b``), :mod:`.rates` (Cor. 4.1's rates in
``T``, Thm 4.1(a), the noise floor), :mod:`.speedup` (the m-independent part, Cor. 4.1 /
Remark 4), :mod:`.anarchy` (staleness in both cases, most recent updates and their floor at a
constant step, heterogeneous local iterations), :mod:`.inner_loop` (Lemma 4.2's tracking
inequality in ``K`` and ``β`` under the inner delays, and in the inner delay bound ``ρ_M``;
Thm 4.1(a)'s inner-loop variance term in ``m`` and ``E^t``, and in ``K`` at Cor. 4.1's coupling:
Remark 2), :mod:`.terms` (Thm 4.1's
non-vanishing terms one variable at a time: ``N`` with exact oracles, Thm 4.1(b)'s synchronous
floor in ``η`` and ``m``).
"""

from __future__ import annotations

from . import anarchy, bias, inner_loop, rates, speedup, terms
from .anarchy import (
    floor_eta_schedule,
    floor_problem,
    floor_step,
    heavy_staleness_excess,
    hetero_local,
    sc_staleness_excess,
    staleness_excess,
    staleness_theorem_bound,
    staleness_window,
    straggler_excess,
    unbiased_floor,
)
from .bias import aphe_fixed_lemma_ratio
from .common import (
    BIAS_POINTS_SEED,
    ETA_M,
    FLOOR_EXPONENT,
    LAW_APHE,
    LAW_APHE_B,
    LAW_FLOOR,
    LAW_FLOOR_ETA,
    LAW_NC_MIND,
    LAW_NC_T,
    LAW_SC_COR,
    LAW_SC_LOWER,
    LAW_SC_THM,
    LAW_STALE,
    M_DEFAULT,
    M_SPEEDUP,
    PAPER,
    SIGMA,
    T_MIN,
    THM_B_M,
    problem,
    rate_eta_scale,
    rate_problem,
    theorem_a1,
    theorem_a2_min,
)
from .rates import nc_rate_T, sc_lower_level, sc_noise_free, sc_random, sc_theorem, sgd_floor
from .speedup import birge_scaled, corollary_form_misfit, corollary_form_weights

CLAIMS = [*bias.CLAIMS, *rates.CLAIMS, *speedup.CLAIMS, *anarchy.CLAIMS, *inner_loop.CLAIMS,
          *terms.CLAIMS]

__all__ = [
    "BIAS_POINTS_SEED", "CLAIMS", "ETA_M", "FLOOR_EXPONENT", "LAW_APHE", "LAW_APHE_B",
    "LAW_FLOOR", "LAW_FLOOR_ETA", "LAW_NC_MIND", "LAW_NC_T", "LAW_SC_COR", "LAW_SC_LOWER",
    "LAW_SC_THM", "LAW_STALE", "M_DEFAULT", "M_SPEEDUP", "PAPER", "SIGMA", "THM_B_M", "T_MIN",
    "aphe_fixed_lemma_ratio", "birge_scaled", "corollary_form_misfit",
    "corollary_form_weights", "floor_eta_schedule", "floor_problem", "floor_step",
    "heavy_staleness_excess", "hetero_local", "nc_rate_T", "problem", "rate_eta_scale", "rate_problem", "sc_lower_level",
    "sc_noise_free", "sc_random", "sc_staleness_excess", "sc_theorem", "sgd_floor",
    "staleness_excess", "staleness_theorem_bound", "staleness_window", "straggler_excess",
    "theorem_a1", "theorem_a2_min", "unbiased_floor",
]
