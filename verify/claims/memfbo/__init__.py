"""MemFBO claims: Yang, Xiao, Ma & Ji, "First-Order Federated Bilevel Learning", AAAI 2025
(algorithm in ``bilevel_theory/memfbo.py``; readings ``MEMFBO-R*`` / ``MEMFBO-I*`` in
``docs/papers/memfbo.md``).

The available text lost Theorem 5.11's formulas, eqs. (47)/(48) (the step sizes) and the
appendix: the penalty gap ``O(1/λ)``, Corollary 5.12's round counts, Prop. 5.8's drift bound and
the memory/first-order properties are stated; every rate is the reconstruction MEMFBO-I3 as
registered in ``bilevel_theory.rates`` (``memfbo.rate_partial``, ``memfbo.rate_full_tau_max``,
``memfbo.balance_*``).

Instance (every claim): ``QuadraticBilevel.random(clients=16, dim_x=3, dim_y=3, kappa=2,
heterogeneity=1, noise=1, seed=1, upper_mu=1)`` (dense storage): heterogeneous clients,
additive gradient noise ``E‖ξ‖² = 1`` on every stochastic gradient (the ``∇ₓg`` pair at ``y``
and ``z`` shares its sample), ``Φ`` strongly convex so that the transient from ``x⁰`` is short
against ``T``.  The noise-free copy (same matrices) serves the plateau and drift claims; the
drift claims' mutant uses identical clients (``heterogeneity=0``) with the same noise.

The claims, one module per family of results (this package's ``CLAIMS`` keeps their order):

* ``penalty``: the penalty gap ``O(1/λ)`` of §5.2 and the plateau at fixed ``λ`` (a control);
* ``rates``: Thm 5.11 / Cor. 5.12's rates and round counts, partial and full participation;
* ``limit``: the full-participation rate as ``T → ∞``, from the exact round map (MEMFBO-L1);
* ``drift``: Prop. 5.8's client drift and its consequence for ``‖∇L*_λ‖²`` (MEMFBO-I6);
* ``second_moment``: Prop. 5.10's client-sampling and data-sampling terms of ``E‖h_y‖²``;
* ``footprint``: the per-client memory (§3.1, eq. (7)) and the first-order oracle (§3.2);

with the instance, the derived schedules, the mutant algorithms and the shared hypotheses in
``common``.
"""

from __future__ import annotations

from . import drift, footprint, limit, penalty, rates, second_moment
from .common import (
    C_LAM,
    C_TAU,
    DIM_X,
    DIM_Y,
    LAM_EXP_FULL,
    LAM_EXP_PARTIAL,
    N_CLIENTS,
    P_PARTIAL,
    PAPER,
    T_SPEEDUP,
    TAU_PARTIAL,
    problem,
    schedule,
)
from .drift import DRIFT_LAMBDA, drift_fixed_eta, drift_stationarity
from .footprint import LAW_MEMORY, memory, second_order_calls
from .penalty import penalty_gap, plateau
from .rates import rate_partial_T

CLAIMS = [*penalty.CLAIMS, *rates.CLAIMS, *limit.CLAIMS, *drift.CLAIMS, *second_moment.CLAIMS,
          *footprint.CLAIMS]

__all__ = [
    "CLAIMS", "C_LAM", "C_TAU", "DIM_X", "DIM_Y", "DRIFT_LAMBDA", "LAM_EXP_FULL",
    "LAM_EXP_PARTIAL", "LAW_MEMORY", "N_CLIENTS", "PAPER", "P_PARTIAL", "TAU_PARTIAL",
    "T_SPEEDUP", "drift_fixed_eta", "drift_stationarity", "memory", "penalty_gap", "plateau",
    "problem", "rate_partial_T", "schedule", "second_order_calls",
]
