"""Gao 2022 claims: "On the Convergence of Momentum-Based Algorithms for Federated Stochastic
Bilevel Optimization Problems" (Gao, arXiv preprint 2022, arXiv:2204.13299; LocalBSGM,
LocalBSGVRM in ``bilevel_theory/gao.py``; readings ``GAO-R*``/``GAO-I*`` in
``docs/papers/gao.md``).

One module per family of results, in the catalogue's order:

* :mod:`.truncation`: the truncation bias ``Δ_Q`` of the Neumann series (Sec. 3, eq. 3.2);
* :mod:`.complexity`: Cor 1 / Cor 2's iteration and communication complexities and their
  linear speedup in ``K`` (Remarks 2, 4);
* :mod:`.floor`: Cor 1 / Cor 2 on heterogeneous devices (findings, GAO-R3);
* :mod:`.comparison`: Remark 4, LocalBSGVRM's communication against LocalBSGM's;
* :mod:`.kappa`: the κ-dependence of Cor 1 / Cor 2;
* :mod:`.oracle`: the Hessian-vector complexity of Remarks 2 and 4 in κ;
* :mod:`.limit`: Thm 1 inside its own step conditions on heterogeneous devices, as T → ∞;
* :mod:`.thm1_variables`: the same Thm 1 in T, σ, K and p (closed forms);

and :mod:`.common` for the instances, schedules, runs and hypotheses they share.
"""

from . import comparison, complexity, floor, kappa, limit, oracle, thm1_variables, truncation
from .common import (
    DEVICES,
    K_DESIGN,
    KV_DESIGN,
    M_DESIGN,
    PERIODS,
    SPEEDUP_NOISE,
    V_DESIGN,
    V_PERIODS,
    heterogeneous,
    homogeneous,
    run_schedule,
    shared_hessians,
)
from .comparison import LAW_PRODUCT, PRODUCT_EXPONENT_M, VRM_RUNS, vrm_vs_m
from .complexity import (
    LAW_M_C,
    LAW_M_T,
    LAW_SPEEDUP,
    LAW_V_C,
    LAW_V_SPEEDUP,
    LAW_V_T,
    localbsgm_vs_rounds,
    localbsgvrm_vs_devices,
)
from .floor import localbsgm_heterogeneous, localbsgvrm_heterogeneous
from .truncation import (
    LAW_NEUMANN,
    NEUMANN_KNOBS,
    neumann_bias,
    neumann_bias_with_bound,
    neumann_instance,
    search_worst_neumann_instance,
    truncation_bias_ratio,
    worst_neumann_instance,
)

CLAIMS = [*truncation.CLAIMS, *complexity.CLAIMS, *floor.CLAIMS, *comparison.CLAIMS,
          *kappa.CLAIMS, *oracle.CLAIMS, *limit.CLAIMS, *thm1_variables.CLAIMS]

__all__ = [
    "CLAIMS", "DEVICES", "KV_DESIGN", "K_DESIGN", "LAW_M_C", "LAW_M_T", "LAW_NEUMANN",
    "LAW_PRODUCT", "LAW_SPEEDUP", "LAW_V_C", "LAW_V_SPEEDUP", "LAW_V_T", "M_DESIGN",
    "NEUMANN_KNOBS", "PERIODS", "PRODUCT_EXPONENT_M", "SPEEDUP_NOISE", "VRM_RUNS", "V_DESIGN",
    "V_PERIODS", "comparison", "complexity", "floor", "heterogeneous", "homogeneous", "kappa",
    "limit", "localbsgm_heterogeneous", "localbsgm_vs_rounds", "localbsgvrm_heterogeneous",
    "localbsgvrm_vs_devices", "neumann_bias", "neumann_bias_with_bound", "neumann_instance",
    "run_schedule", "search_worst_neumann_instance", "shared_hessians", "thm1_variables",
    "truncation",
    "truncation_bias_ratio", "vrm_vs_m", "worst_neumann_instance",
]
