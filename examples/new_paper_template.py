"""Template claims module for a new paper: copy to ``verify/claims/<key>.py`` (or to your own
package, declared as an entry point ``bilevel_theory.claims``) and fill in the TODOs.

What a claims module holds:

1. the paper's citation, registered once (:func:`register_paper`); claim ids are
   ``<key>.<name>`` and every ``source`` comes from :meth:`PaperClaims.cite`;
2. one ``measure`` function per experiment: ``measure(value, replicates, seed, backend, *,
   mutant keywords) -> {"value": array of shape (replicates,), ...}``, vectorized over the
   replicates (no Python loop over replicates or clients), deterministic in ``seed``;
3. ``CLAIMS = [...]``: the paper's statements as :class:`~bilevel_theory.verify.Claim` objects,
   each ``confirmation`` and ``finding`` with at least one :class:`~bilevel_theory.verify.Mutant`
   that it catches at the smoke budget.

Run it (from the repository root, without installing anything)::

    python -c "import sys; sys.path.insert(0, 'examples'); import new_paper_template as t; \\
from bilevel_theory.verify import check; c = t.CLAIMS[0]; \\
print(check(c).verdict, check(c.under('noise_not_averaged')).verdict)"

which prints ``holds violated``.  Once the module is in ``verify/claims/`` (or installed as a
plug-in) ``bilevel-theory verify '<key>.*' --budget smoke --mutants`` runs every claim and
mutant and exits 0 when each reaches its expected verdict.

The example claim below uses the existing algorithm ``fedmbo`` (Huang, Zhang & Ji, ICML 2023):
the noise of one outer step is an average over the ``n`` sampled clients, so its variance
decays like ``1/n`` (their Prop. 3 is the estimator-level statement).
"""

from __future__ import annotations

import numpy as np

from bilevel_theory import run
from bilevel_theory.problems import QuadraticBilevel
from bilevel_theory.verify import Law, Mutant
from bilevel_theory.verify.kit import PAPERS, PaperClaims, per_budget, register_paper

# -- 1. the paper ---------------------------------------------------------------------------
# TODO: key (the claim-id prefix, lower case), a short name for tables, "Authors, venue year"
# and the arXiv id ("" when none).  A paper already in PAPERS is used as it is.
KEY = "template"
if KEY not in PAPERS:
    register_paper(KEY, "Template 2025", "Doe & Roe, Template Conference 2025", "")
P = PaperClaims(KEY)


# -- 2. the instance and the measure --------------------------------------------------------
# Small closed-form instances keep the smoke budget to seconds.  Say in the docstring why the
# instance meets the theorem's assumptions (here: strongly convex lower level, bounded noise).
def problem(noise: float = 1.0) -> QuadraticBilevel:
    """Identical clients (``heterogeneity=0``), so sampling adds no variance: the only
    randomness of a step is the oracles' noise, independent across the sampled clients."""
    return QuadraticBilevel.random(clients=64, dim_x=2, dim_y=2, kappa=2.0, heterogeneity=0.0,
                                   noise=noise, hessian_noise=0.0, seed=0, storage="structured")


def step_variance(n, replicates, seed, backend="numpy", *, noise_scale: str = "fixed"):
    """``‖x_1 − x̄_1‖²·R/(R−1)`` per replicate: the spread of FedMBO's first outer iterate
    around the replicates' mean (an unbiased estimate of the trace of its covariance).

    Mutant keyword ``noise_scale="sqrt_n"``: each client's noise multiplied by ``√n``, as if
    the server used one client's estimate instead of the mean of ``n`` (the variance no
    longer decays)."""
    n = int(n)
    sigma = 1.0 if noise_scale == "fixed" else float(np.sqrt(n))
    trace = run("fedmbo", problem(sigma), rounds=1, replicates=replicates, seed=seed,
                backend=backend, sampled_clients=n, inner_steps=2, neumann_steps=2)
    x1 = trace.x[:, 1]
    dev = ((x1 - x1.mean(axis=0)) ** 2).sum(axis=-1) * replicates / (replicates - 1)
    return {"value": dev}


# -- 3. the claims --------------------------------------------------------------------------
CLAIMS = [
    P.claim(
        "step_variance_vs_n",
        # TODO: the result as numbered in the paper; "[TEXT]" when stated, "[INFERRED]" when
        # reconstructed (then document the reading as <KEY>-I<n> in docs/papers/<key>.md).
        source=P.cite("Prop. 3 (one outer step)"),
        role="confirmation",  # the paper's statement, expected to hold
        statement=r"\mathbb{E}\|x_1 - \mathbb{E}x_1\|^2 \propto 1/n",
        kind="matches", variable="n", quantity=r"\|x_1 - \bar{x}_1\|^2",
        measure=step_variance,
        grid=per_budget([1, 2, 4, 8, 16, 32], [1, 2, 4, 8, 16, 32, 64],
                        [1, 2, 4, 8, 16, 32, 64, 128]),
        replicates=per_budget(256, 1024, 4096),
        # The law: a slope in log–log coordinates.  When the theorem gives a formula, derive
        # it instead of typing it: register the bound in your algorithm module's ``bounds()``
        # and use e.g. ``kit.law("fedmbo.prop3_variance", "exponent", "n")`` (→ −1).
        law=Law(-1.0, r"\sigma^2 / n", "the mean of n independent noises"),
        tolerance=0.1,
        schedule="one FedMBO round, T = 2, N = 2, sampling with replacement, σ = 1",
        touches=(),  # TODO: the ids of the readings this claim depends on, e.g. "KEY-R1"
        mutants=(
            Mutant("noise_not_averaged", "each client's noise scaled by √n, as if the server "
                   "kept one client's estimate: the variance no longer decays with n",
                   {"noise_scale": "sqrt_n"}),
        ),
    ),
]

__all__ = ["CLAIMS", "P", "problem", "step_variance"]
