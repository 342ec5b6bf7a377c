"""Lower-level (inner) solvers shared by the algorithms.

Each takes a :class:`~bilevel_theory.algorithm.Context`, the outer point ``x (R, dim_x)`` and
the current ``y (R, dim_y)``, runs ``steps`` communication rounds and returns the new ``y``.
``step`` is a schedule: a callable of the inner-step index ``t``.  Every exchange goes through
``Context.broadcast`` / ``Context.aggregate``, so the ledger counts what is executed.  Loops run over rounds and
local steps only; clients and replicates are array axes.

* :func:`minibatch_sgd` — FedMBO Alg. 1 lines 4–12: server step on the average of ``n``
  sampled clients' minibatch gradients (``S`` samples each).
* :func:`fedavg` — local SGD on every sampled client, then averaging (the drifting baseline).
* :func:`fedsvrg` — FedNest's FedInn (Alg. 4, FedSVRG/FedLin type): local steps corrected by
  ``G_i(y_{i,ν}; ζ) − G_i(y; ζ) + q`` with the global snapshot gradient ``q``; the
  same-sample difference is exact under additive noise, so no noise is drawn for it.
"""

from __future__ import annotations

from collections.abc import Callable

from .algorithm import Context


def minibatch_sgd(ctx: Context, x, y, steps: int, step: Callable[[int], float],
                  sampled_clients: int, samples: int = 1, replace: bool = True):
    """``y^{t+1} = y^t − β_t (1/n) Σ_i G_i``, ``G_i`` the mean of ``S`` stochastic ``∇_y g_i``.

    Only the average of the ``G_i`` enters, so it is one averaged oracle call
    (:meth:`~bilevel_theory.problems.Oracle.client_mean`: the same law, without an
    ``(R, n, d)`` array or ``n·d`` noise draws per replicate)."""
    xb = x[:, None, :]
    for t in range(steps):
        idx = ctx.oracle.sample_clients(ctx.replicates, sampled_clients, replace)
        ctx.broadcast(x, y)
        G = ctx.aggregate(ctx.oracle.client_mean("grad_y_g", idx, xb, y[:, None, :],
                                                 samples=samples))
        y = y - step(t) * G
    ctx.hold(x.shape[-1], 2 * y.shape[-1])
    return y


def fedavg(ctx: Context, x, y, steps: int, step: Callable[[int], float], sampled_clients: int,
           local_steps: int, replace: bool = False):
    """FedAvg inner loop: ``τ`` local SGD steps of size ``β_t/τ`` per client, then the mean.
    Under heterogeneous Hessians it converges to a biased point, not ``y*(x)``."""
    xb = x[:, None, :]
    for t in range(steps):
        idx = ctx.oracle.sample_clients(ctx.replicates, sampled_clients, replace)
        ctx.broadcast(x, y)
        y_loc = ctx.xp.broadcast_to(y[:, None, :], idx.shape + (y.shape[-1],)) * 1.0
        grad = ctx.oracle.grad_y_g_at(idx, xb)  # x and the clients fixed for the local steps
        for _ in range(local_steps):
            y_loc = y_loc - (step(t) / local_steps) * grad(y_loc)
        y = ctx.aggregate(y_loc)
    ctx.hold(x.shape[-1], 2 * y.shape[-1])
    return y


def fedsvrg(ctx: Context, x, y, steps: int, step: Callable[[int], float], sampled_clients: int,
            local_steps: int, replace: bool = False):
    """FedInn (FedNest Alg. 4): per round, ``q = mean_i G_i(y; ζ_i)`` (one round), then each
    client runs ``τ`` steps ``y_{i,ν+1} = y_{i,ν} − (β_t/τ)(G_i(y_{i,ν}; ζ) − G_i(y; ζ) + q)``
    and the server averages (second round).  Reaches ``y*(x)`` under heterogeneity."""
    o, xb = ctx.oracle, x[:, None, :]
    for t in range(steps):
        idx = o.sample_clients(ctx.replicates, sampled_clients, replace)
        yb = y[:, None, :]
        ctx.broadcast(x, y)
        q = ctx.aggregate(o.grad_y_g(idx, xb, yb))[:, None, :]
        ctx.broadcast(q[:, 0, :])
        ref = o.exact("grad_y_g", idx, xb, yb)  # the correction's second point, fixed
        lr = step(t) / local_steps
        y_loc = ctx.xp.broadcast_to(yb, idx.shape + (y.shape[-1],)) * 1.0
        for _ in range(local_steps):
            # same-sample difference: its noise cancels, so none is drawn (Oracle.difference)
            g = o.difference("grad_y_g", idx, xb, y_loc, xb, yb, reference=ref)
            g += q
            g *= lr
            y_loc -= g
        y = ctx.aggregate(y_loc)
    ctx.hold(x.shape[-1], 3 * y.shape[-1])
    return y
