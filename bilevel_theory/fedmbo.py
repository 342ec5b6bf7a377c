"""FedMBO — Huang, Zhang & Ji, ICML 2023 (arXiv:2302.05412), Alg. 1 and Alg. 2.

Problem:
    ``min_x Φ(x) = (1/m) Σ_i f_i(x, y*(x))``, ``y*(x) = argmin_y (1/m) Σ_i g_i(x, y)``, with
    ``n`` of the ``m`` clients sampled per step.

Algorithm (Alg. 1 + Alg. 2):
    ``y^{k,t+1} = y^{k,t} − β_{k,t} (1/n) Σ_i G_i^{k,t}`` for ``t < T`` (minibatch SGD, §3.1);
    ``{H_i} = PHE(x^k, y^{k+1}, N, n)``; ``x^{k+1} = x^k − α_k (1/n) Σ_i H_i``.

Theoretical guarantee (upper bounds):
    Prop. 1: ``‖H̄ − ∇̄f‖ ≤ κ_g ℓ_{f,1} ((κ_g−1)/κ_g)^N``; Prop. 3:
    ``E‖(1/n)Σ(H_i − H̄)‖² ≤ σ̃_f²/n``; Thm. 1 with ``α_k = min{α̂₁, α̂₂, √(n/K) α̂₃}``,
    ``β_{k,t} = β̄ α_k / T``: ``(1/K) Σ E‖∇Φ(x^k)‖² = O((α̂₃ + α̂₃⁻¹)/√(nK) + 1/K + b²)``;
    Cor. 1: ``K = O(κ_g⁵ ε⁻² / n)``.  :func:`theorem_schedule` gives the step sizes.

Readings (``docs/papers/fedmbo.md``):
    FEDMBO-R1: the inner update is ``y^{k,t+1} = y^{k,t} − β G`` (§3.1, not the box's typo);
    FEDMBO-R2, R3: PHE uses ``d_i = ∇ₓf`` (eq. 6) and client ``c_i^{max N_i + 1}`` for the
    Jacobian; FEDMBO-R4: sampling is with replacement by default (Prop. 3's proof),
    ``replace=False`` for the other reading; FEDMBO-R7: ``β`` follows the proof's ``β̄``
    without the ``1/(2n)`` factor of the statement.  Communication is counted by
    :func:`~bilevel_theory.estimators.phe` and :func:`~bilevel_theory.inner.minibatch_sgd`.

Args (hyperparameters):
    inner_steps (T), samples (S), sampled_clients (n), neumann_steps (N), outer_step (α, float
    or callable of k), inner_step (β, float or callable of k), neumann_scale (ℓ_{g,1}),
    replace (bool), x0, y0.

Returns:
    a :class:`~bilevel_theory.trace.Trace`; ``y`` is ``y^{k}``.

Example:
    >>> from bilevel_theory.problems import QuadraticBilevel
    >>> from bilevel_theory import run
    >>> prob = QuadraticBilevel.random(clients=20, dim_x=3, dim_y=3, kappa=5, seed=0)
    >>> trace = run("fedmbo", prob, rounds=50, replicates=4, seed=0)
    >>> bool(trace.stationarity[:, -1].mean() < trace.stationarity[:, 0].mean())
    True
"""

from __future__ import annotations

import math

from .algorithm import Algorithm, Context, as_schedule
from .estimators import phe
from .inner import minibatch_sgd


def default_neumann_steps(c, problem) -> int:
    """``N = ⌈κ_g log 10³⌉``: Neumann bias ``≈ 10⁻³`` of its ``N = 0`` value (Cor. 1's
    ``N = Ω(κ_g log K)`` at ``K = 10³``)."""
    return max(1, math.ceil(c["kappa_g"] * math.log(1e3)))


def theorem_schedule(rounds: int, sampled_clients: int, inner_steps: int, alpha_hat: float,
                     beta_bar: float):
    """Thm. 1's step sizes with the constants chosen: ``α = √(n/K)·α̂`` (the regime where the
    ``√(n/K)`` branch of the min is active) and ``β = β̄ α / T``."""
    alpha = math.sqrt(sampled_clients / rounds) * alpha_hat
    return alpha, beta_bar * alpha / inner_steps


class FedMBO(Algorithm):
    """FedMBO: minibatch-SGD inner loop + PHE (see module docstring)."""

    name = "fedmbo"
    defaults = dict(
        inner_steps=10, samples=1,
        sampled_clients=lambda c, p: min(p.clients, 10),
        neumann_steps=default_neumann_steps,
        outer_step=lambda c, p: 0.5 / c["L_phi"],
        inner_step=lambda c, p: 1.0 / (2.0 * c["ell_g1"]),
        neumann_scale=lambda c, p: c["ell_g1"],
        replace=True, x0=None, y0=None,
    )

    def init(self, ctx: Context):
        return self.starting_point(ctx)

    def step(self, ctx: Context, state, k: int):
        hp = self.hp
        alpha = as_schedule("outer_step", hp["outer_step"])
        beta = as_schedule("inner_step", hp["inner_step"])
        x = state["x"]
        y = minibatch_sgd(ctx, x, state["y"], hp["inner_steps"], lambda t: beta(k),
                          hp["sampled_clients"], hp["samples"], hp["replace"])
        H = phe(ctx, x, y, hp["neumann_steps"], hp["sampled_clients"], hp["neumann_scale"],
                hp["replace"])
        return dict(x=x - alpha(k) * H.mean(axis=1), y=y)


REGISTERED = (FedMBO,)
