"""Two claims about ``toy_fullgrad``, each with a mutant that it must catch.

* ``toy.neumann_bias_vs_N`` (geometric in ``N``): with exact oracles the iterates settle where
  the N-term series' bias is zero-mean-free; the distance of the fixed point's hypergradient
  ``‖∇Φ(x_∞)‖²`` shrinks as ``(1 − 1/κ_g)^{2N}``.  Mutant: a series whose terms are halved
  (``(1 − 1/κ_g)^N`` → ``(1 − 1/(2κ_g))^N``).
* ``toy.rounds_per_iteration`` (exact): ``T + N + 2`` synchronisations per outer round,
  counted from the events of ``ctx.aggregate``.  Mutant: one extra aggregation per round.
"""

from __future__ import annotations

import math

import numpy as np

from bilevel_theory import run
from bilevel_theory.problems import QuadraticBilevel
from bilevel_theory.verify import Law, Mutant
from bilevel_theory.verify.kit import Paper, PaperClaims, per_budget, per_replicate

TOY = PaperClaims("toy", Paper("toy", "Toy plug-in", "bilevel-theory example plug-in"))


def _problem() -> QuadraticBilevel:
    return QuadraticBilevel.random(clients=8, dim_x=3, dim_y=4, kappa=4.0, heterogeneity=0.3,
                                   noise=0.0, seed=0, storage="structured")


def bias_after_convergence(N, replicates, seed, backend="numpy", *, shrink=1.0):
    """``‖∇Φ(x_K)‖²`` after ``K = 300`` rounds of ``toy_fullgrad`` with ``N`` Neumann steps
    (exact oracles: every replicate is the same run).  Mutant ``shrink``: the Neumann step
    ``1/ℓ`` multiplied by ``shrink``."""
    prob = _problem()
    ell = prob.constants["ell_g1"]
    from toy_plugin.algorithm import FullGradientNeumann  # noqa: PLC0415

    class Shrunk(FullGradientNeumann):
        def step(self, ctx, state, k):
            ctx.constants = {**ctx.constants, "ell_g1": ell / shrink}
            return super().step(ctx, state, k)

    from bilevel_theory.algorithm import run_algorithm  # noqa: PLC0415

    algo = Shrunk(prob, neumann_steps=int(N), inner_steps=20, outer_step=0.5)
    trace = run_algorithm(algo, 300, replicates, seed, backend)
    return {"value": trace.stationarity[:, -1]}


def rounds(N, replicates, seed, backend="numpy", *, extra=0):
    """Rounds per outer iteration, from the ledger; mutant: ``extra`` more aggregations."""
    T = 3
    trace = run("toy_fullgrad", _problem(), rounds=4, replicates=replicates, seed=seed,
                backend=backend, inner_steps=T, neumann_steps=int(N))
    per_round = trace.ledger.totals()["rounds"] / 4 + extra
    return {"value": per_replicate(per_round, replicates),
            "predicted": per_replicate(T + int(N) + 2, replicates)}


_kappa = _problem().constants["kappa_g"]

CLAIMS = [
    TOY.claim(
        "neumann_bias_vs_N", source=TOY.cite("example"), role="confirmation",
        statement=r"\|\nabla\Phi(x_\infty)\|^2 \propto (1 - 1/\kappa_g)^{2N}", kind="geometric",
        variable="N", quantity=r"\|\nabla\Phi(x_K)\|^2", measure=bias_after_convergence,
        grid=per_budget([2, 4, 6, 8, 10], [2, 4, 6, 8, 10, 12], [2, 4, 6, 8, 10, 12, 14]),
        replicates=per_budget(2, 2, 2), scale="semilog", tolerance=0.05,
        law=Law(2 * math.log(1 - 1 / _kappa), r"(1-1/\kappa_g)^{2N}",
                "squared bias of the N-term series along the bottom eigenvector"),
        mutants=(Mutant("halved_step", "Neumann step 1/(2ℓ): the bias ratio becomes "
                        "1 − 1/(2κ_g)", {"shrink": 0.5}),)),
    TOY.claim(
        "rounds_per_iteration", source=TOY.cite("example"), role="confirmation",
        statement=r"T + N + 2 \text{ rounds per outer iteration}", kind="exact", variable="N",
        quantity="rounds", measure=rounds, grid=per_budget([1, 3, 5], [1, 3, 5], [1, 3, 5]),
        replicates=per_budget(1, 1, 1), scale="linear", tolerance=0.0,
        law=Law(float("nan"), "T + N + 2", "one round per aggregation"),
        mutants=(Mutant("extra_aggregation", "one more aggregation per outer round",
                        {"extra": 1}),)),
]

__all__ = ["CLAIMS", "bias_after_convergence", "np", "rounds"]
