"""Two claims about ``toy_fullgrad``, each with a mutant that it must catch.

Instance: a structured bilevel quadratic with ``dim_y = 2`` and ``κ = 4``, so the clients'
mean Hessian ``A = ∇²_{yy} g`` has exactly the eigenvalues ``μ`` and ``L = κμ`` (the extremes
are pinned).  Exact oracles (``noise = 0``): every replicate is the same run.

* ``toy.neumann_bias_vs_N`` (``geometric`` in ``N``).  With the series scale ``c = 1/L`` the
  error ``(I − A/L)^N A^{-1}∇_y f`` of the N-term series loses its top eigendirection after one
  term and keeps the bottom one times ``ρ^N``, ``ρ = 1 − μ/L``.  The run settles at the fixed
  point ``x_∞(N)`` of the biased step, where ``‖∇Φ(x_∞)‖² = C ρ^{2N} (1 + O(ρ^N))`` (the
  ``O(ρ^N)`` term: ``x_∞`` itself moves by ``O(ρ^N)``).  Predicted semilog slope
  ``2 log ρ``.  The grid starts at ``N = 8`` where ``ρ^N ≤ 0.1``, so the correction is inside
  the tolerance (decided from the law, before any run).  Mutant ``halved_scale``: the series
  scale ``1/(2L)``; the error then decays like ``(1 − μ/(2L))^N`` and the slope is
  ``2 log(1 − μ/(2L))``, outside the band.
* ``toy.rounds_per_iteration`` (``exact``): ``T + N + 2`` synchronisations per outer round,
  counted from the events of ``ctx.aggregate`` in the ledger.  Mutant ``separate_uploads``:
  ``∇_x f`` and ``∇_y f`` uploaded in two rounds instead of one (``T + N + 3``).
"""

from __future__ import annotations

import math

from bilevel_theory import run_algorithm
from bilevel_theory.problems import QuadraticBilevel
from bilevel_theory.verify import Law, Mutant
from bilevel_theory.verify.kit import PaperClaims, per_budget, per_replicate, register_paper

from .algorithm import FullGradientNeumann

# The claim-id prefix, the citation of the "paper" (here: this example's own statement) and
# the readings its claims touch (``bilevel-theory show toy.neumann_bias_vs_N`` prints them).
TOY = PaperClaims("toy", register_paper(
    "toy", "Toy plug-in", "bilevel-theory example plug-in",
    readings={"TOY-R1": "the series scale c = 1/L uses the global L (the largest eigenvalue "
                        "of the clients' mean Hessian), not a client's"}))

#: outer rounds of the bias runs: the outer map contracts by ``1 − μ_Φ/L_Φ`` per round
#: (about 0.81 on this instance), so 80 rounds leave a distance to ``x_∞`` far below the bias.
BIAS_ROUNDS = 80


def _problem() -> QuadraticBilevel:
    return QuadraticBilevel.random(clients=8, dim_x=3, dim_y=2, kappa=4.0, heterogeneity=0.3,
                                   noise=0.0, seed=0, storage="structured")


def _rho(scale: float = 1.0) -> float:
    """The contraction of the series' error along the bottom eigendirection, for the series
    scale ``scale / L``."""
    c = _problem().constants
    return 1.0 - scale * c["mu_g_global"] / c["L_yy_global"]


def bias_after_convergence(N, replicates, seed, backend="numpy", *, scale=1.0):
    """``‖∇Φ(x_K)‖²`` after ``K = BIAS_ROUNDS`` rounds with ``N`` Neumann steps.  Mutant
    ``scale``: the series scale ``scale/L`` instead of ``1/L``."""
    prob = _problem()
    algo = FullGradientNeumann(prob, neumann_steps=int(N), inner_steps=5,
                               neumann_scale=scale / prob.constants["L_yy_global"])
    trace = run_algorithm(algo, BIAS_ROUNDS, replicates, seed, backend)
    return {"value": trace.stationarity[:, -1]}


class SeparateUploads(FullGradientNeumann):
    """Mutant: ``∇_x f`` and ``∇_y f`` sent in two rounds (one more synchronisation)."""

    def gradients(self, ctx, everyone, x, y):
        ctx.broadcast(x, y)
        xb, yb = x[:, None, :], y[:, None, :]
        return (ctx.aggregate(ctx.oracle.grad_x_f(everyone, xb, yb)),
                ctx.aggregate(ctx.oracle.grad_y_f(everyone, xb, yb)))


ROUNDS_T = 3  # inner steps T of the rounds claim
ROUNDS_K = 4  # outer rounds of the rounds claim


def rounds(N, replicates, seed, backend="numpy", *, separate_uploads=False):
    """Aggregations per outer round, from the ledger (``ctx.aggregate`` events), and the
    prediction ``T + N + 2``.  Mutant ``separate_uploads``: :class:`SeparateUploads`."""
    cls = SeparateUploads if separate_uploads else FullGradientNeumann
    algo = cls(_problem(), inner_steps=ROUNDS_T, neumann_steps=int(N))
    trace = run_algorithm(algo, ROUNDS_K, replicates, seed, backend)
    return {"value": per_replicate(trace.ledger.totals()["rounds"] / ROUNDS_K, replicates),
            "predicted": per_replicate(ROUNDS_T + int(N) + 2, replicates)}


CLAIMS = [
    TOY.claim(
        "neumann_bias_vs_N", source=TOY.cite("toy_plugin.algorithm docstring"),
        role="confirmation",
        statement=r"\|\nabla\Phi(x_\infty)\|^2 \propto (1 - \mu/L)^{2N}", kind="geometric",
        variable="N", quantity=r"\|\nabla\Phi(x_K)\|^2", measure=bias_after_convergence,
        grid=per_budget([8, 10, 12, 14, 16], [8, 10, 12, 14, 16, 18],
                        [8, 10, 12, 14, 16, 18, 20]),
        replicates=per_budget(2, 2, 2), scale="semilog", tolerance=0.05, touches=("TOY-R1",),
        law=Law(2 * math.log(_rho()), r"(1-\mu/L)^{2N}",
                "squared error of the N-term series along the bottom eigenvector of A"),
        mutants=(Mutant("halved_scale", "series scale 1/(2L): the error decays like "
                        "(1 − μ/(2L))^N, slower than the predicted (1 − μ/L)^N",
                        {"scale": 0.5}),)),
    TOY.claim(
        "rounds_per_iteration", source=TOY.cite("toy_plugin.algorithm docstring"),
        role="confirmation",
        statement=r"T + N + 2 \text{ rounds per outer iteration}", kind="exact", variable="N",
        quantity="rounds per outer round", measure=rounds,
        grid=per_budget([1, 3, 5], [1, 3, 5, 10], [1, 3, 5, 10, 20]),
        replicates=per_budget(1, 1, 1), scale="linear", tolerance=0.0,
        law=Law(float("nan"), "T + N + 2", "one round per aggregation"),
        mutants=(Mutant("separate_uploads", "∇_x f and ∇_y f uploaded in two rounds: "
                        "T + N + 3 rounds per outer round", {"separate_uploads": True}),)),
]

__all__ = ["CLAIMS", "FullGradientNeumann", "SeparateUploads", "bias_after_convergence",
           "rounds"]
