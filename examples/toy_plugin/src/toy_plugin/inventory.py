"""The toy "paper's" stated results, for ``bilevel-theory coverage``: each names the claim that
tests it, and the coverage map computes whether every variable of the statement is swept."""

from __future__ import annotations

from bilevel_theory.verify.coverage import Inventory, Result

INVENTORY = Inventory(
    key="toy", paper="Toy plug-in", citation="bilevel-theory example plug-in",
    notation={"N": "N"},  # the claims' swept symbol → the canonical variable
    results=(
        Result("toy.bias", "section", "README (bias of the N-term series)",
               r"\|\nabla\Phi(x_\infty)\|^2 \propto (1 - \mu/L)^{2N}", ("N",),
               claims=("toy.neumann_bias_vs_N",)),
        Result("toy.rounds", "section", "README (rounds per outer iteration)",
               r"T + N + 2 \text{ rounds per outer iteration}", ("K", "N"),
               claims=("toy.rounds_per_iteration",),
               # an open result says why (a key of verify.coverage.GAPS), the details in reason
               reason="N is swept at a fixed number of inner steps; a sweep in them is not "
                      "built", gap="not_built"),
    ))
