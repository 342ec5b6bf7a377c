"""MemFBO's memory and oracle properties (Yang, Xiao, Ma & Ji, AAAI 2025, §3.1 / Alg. 1
eq. (7); abstract / §3.2): the per-client state does not grow with ``τ`` (MEMFBO-I1) and
no Hessian- or Jacobian-vector product is computed."""

from __future__ import annotations

import numpy as np

from bilevel_theory import rates as R_

from ...claim import Mutant
from ...kit import law, ledger_totals, per_budget
from .common import (
    DIM_X,
    DIM_Y,
    INSTANCE,
    P_,
    P_PARTIAL,
    _run,
    problem,
)


# ============================================================================ measures
def memory(tau, replicates, seed, backend="numpy", *, mutant=None):
    """Per-client state (bytes, ``Ledger.state_bytes``: measured by ``Context.keep`` from the
    arrays a client keeps across its ``τ`` local steps), ``P = 4``, 2 rounds;
    ``mutant="stored_directions"``: :class:`StoredDirections`."""
    if mutant not in (None, "stored_directions"):
        raise ValueError(f"`mutant` must be None or 'stored_directions', got {mutant!r}")
    tr = _run(problem(), 2, replicates, seed, backend, mutant, local_steps=int(tau),
              sampled_clients=P_PARTIAL)
    out = ledger_totals(tr, ("rounds", "grad_calls", "state_bytes"))
    out["value"] = out["state_bytes"].copy()
    out["predicted"] = np.full(replicates, float(LAW_MEMORY.value))  # the law's count
    return out


SECOND_ORDER_ROUNDS = 3


def second_order_calls(tau, replicates, seed, backend="numpy", *, mutant=None):
    """Hessian- plus Jacobian-vector products per round counted by the oracle (``P = 4``,
    ``τ`` local steps, 3 rounds), with gradient calls per round as a diagnostic;
    ``mutant="second_order"``: :class:`SecondOrderStep`."""
    if mutant not in (None, "second_order"):
        raise ValueError(f"`mutant` must be None or 'second_order', got {mutant!r}")
    tr = _run(problem(), SECOND_ORDER_ROUNDS, replicates, seed, backend, mutant,
              local_steps=int(tau), sampled_clients=P_PARTIAL)
    out = ledger_totals(tr)
    out["value"] = (out["hvp_calls"] + out["jvp_calls"]) / SECOND_ORDER_ROUNDS
    out["grad_calls_per_round"] = out["grad_calls"] / SECOND_ORDER_ROUNDS
    out["predicted"] = np.full(replicates, float(LAW_SECOND_ORDER.value))  # the law's count
    return out


# ============================================================================ laws
# Memory (Alg. 1's per-client vectors) and second-order calls (none), registered likewise
MEMORY_BOUND = R_.BOUNDS["memfbo.client_state"]
LAW_MEMORY = law(MEMORY_BOUND, "exact", subs={"d_x": DIM_X, "d_y": DIM_Y, "b": 8})
SECOND_ORDER_BOUND = R_.BOUNDS["memfbo.second_order_calls"]
LAW_SECOND_ORDER = law(SECOND_ORDER_BOUND, "exact")


# ============================================================================ claims
CLAIMS = [
    P_.claim(
        "memory_independent_of_tau", role="confirmation",
        source=P_.cite("§3.1 / Alg. 1 eq. (7) / Fig. 4; the byte count is MEMFBO-I1", "[INFERRED]"),
        statement=r"\mathrm{client\ state} = 8(2d_x + 4d_y)\ \mathrm{bytes\ for\ every}\ \tau",
        kind="exact", variable=r"\tau", quantity=r"\mathrm{state\ bytes\ per\ client}",
        measure=memory, grid=per_budget([1, 2, 5, 10, 20], [1, 2, 5, 10, 20, 50],
                                        [1, 2, 5, 10, 20, 50, 100]),
        replicates={"smoke": 2, "standard": 2, "full": 2},
        law=LAW_MEMORY, tolerance=0.0, scale="linear",
        mutants=(Mutant("stored_directions",
                        "a client stores its τ local directions and sums them at the end "
                        "(τ products kept, as a weighted local aggregation needs): the state "
                        "grows with τ",
                        {"mutant": "stored_directions"}, kind="estimator"),),
        schedule="P = 4, 2 rounds, toolkit defaults; Ledger.state_bytes measured by "
                 "Context.keep from the arrays each client keeps across its local steps "
                 "(shapes and dtypes of the actual arrays); " + INSTANCE,
        conditions_note="a count of the arrays Algorithm 1's client keeps across its local "
                        "steps (eq. (7), MEMFBO-I1): it holds for every instance and step size, "
                        "and the paper states it with no hypothesis.",
        touches=("MEMFBO-I1",),
    ),
    P_.claim(
        "first_order_only", role="confirmation",
        source=P_.cite("abstract / §3.2 'only first-order gradient information'"),
        statement=r"\mathrm{Hessian\ and\ Jacobian\ vector\ products\ per\ round} = 0",
        kind="exact", variable=r"\tau", quantity=r"\mathrm{HVP + JVP\ calls\ per\ round}",
        measure=second_order_calls, grid=per_budget([1, 2, 5, 10], [1, 2, 5, 10, 20],
                                                    [1, 2, 5, 10, 20, 50]),
        replicates={"smoke": 2, "standard": 2, "full": 2},
        law=LAW_SECOND_ORDER, tolerance=0.0, scale="linear",
        mutants=(Mutant("second_order",
                        "a Hessian-vector product ∇²_yy g_i·∇_yL_i inserted in each local "
                        "step: second-order calls per round become Pτ > 0",
                        {"mutant": "second_order"}, kind="estimator"),),
        schedule="P = 4, 3 rounds, toolkit defaults; the oracle's call counters; " + INSTANCE,
        conditions_note="a count of the oracle calls Algorithm 1 executes (eq. (6) uses "
                        "gradients only): it holds for every instance and step size, and the "
                        "paper states it with no hypothesis.",
        touches=(),
    ),
]
