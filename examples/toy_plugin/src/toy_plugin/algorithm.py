"""``toy_fullgrad``: full participation, an inner gradient loop and a fixed-N Neumann series.

Problem: any bilevel quadratic instance.  Algorithm, per outer round ``k``:

* ``T`` inner rounds ``y ← y − β ḡ_y`` with ``ḡ_y`` the clients' mean ``∇_y g_i(x, y)``;
* one round that uploads ``∇_x f_i`` and ``∇_y f_i`` together;
* ``N`` Neumann rounds building ``p = c Σ_{s<N} (I − c A)^s ∇_y f`` (``c`` the series scale,
  ``A`` the clients' mean ``∇²_{yy} g``; each step one round of Hessian-vector products);
* one round for the indirect term ``∇²_{xy} g · p``, then ``x ← x − α (∇_x f − ∇²_{xy} g p)``.

So one outer round is ``T + N + 2`` aggregations (synchronisations).

The example's own statement, used by the claims (``toy_plugin.claims``): with exact oracles the
iterates settle at a fixed point ``x_∞`` of the biased step, where
``∇Φ(x_∞) = −∇²_{xy} g (I − cA)^N A^{-1} ∇_y f``; its squared norm decays like
``ρ^{2N}`` with ``ρ = 1 − c·λ_min(A)`` (the slowest eigendirection of the series' error).
"""

from __future__ import annotations

from bilevel_theory import Algorithm


class FullGradientNeumann(Algorithm):
    """Toy: full-participation inner GD + fixed-N Neumann hypergradient (example plug-in).

    Hyperparameters (names and ranges from ``bilevel_theory.SCHEMA``): ``inner_steps`` T,
    ``neumann_steps`` N, ``outer_step`` α (default ``1/L_Φ``), ``inner_step`` β (default
    ``1/L_yy``), ``neumann_scale`` c (default ``1/λ_max(A)``), ``x0``, ``y0``.
    """

    name = "toy_fullgrad"
    kinds = ("bilevel",)
    # A callable default is evaluated on the instance's constants (``problem.constants``).
    defaults = {"inner_steps": 5, "neumann_steps": 10,
                "outer_step": lambda c, p: 1.0 / c["L_phi"],
                "inner_step": lambda c, p: 1.0 / c["L_yy"],
                "neumann_scale": lambda c, p: 1.0 / c["L_yy_global"],
                "x0": None, "y0": None}

    def init(self, ctx):
        return self.starting_point(ctx)

    # One outer round, in four parts so that a variant (a claim's mutant) overrides one part.
    def step(self, ctx, state, k):
        m = self.problem.clients
        everyone = ctx.xp.broadcast_to(ctx.xp.arange(m)[None, :], (ctx.replicates, m))
        x = state["x"]
        y = self.inner(ctx, everyone, x, state["y"])
        gx, gy = self.gradients(ctx, everyone, x, y)
        p = self.neumann(ctx, everyone, x, y, gy)
        ctx.broadcast(p)
        indirect = ctx.aggregate(ctx.oracle.jvp_xy_g(everyone, x[:, None, :], y[:, None, :],
                                                     p[:, None, :]))
        return {"x": x - self.hp["outer_step"] * (gx - indirect), "y": y}

    def inner(self, ctx, everyone, x, y):
        """``T`` rounds of gradient descent on the clients' mean lower-level objective."""
        beta = self.hp["inner_step"]
        for _ in range(self.hp["inner_steps"]):
            ctx.broadcast(x, y)
            y = y - beta * ctx.aggregate(ctx.oracle.grad_y_g(everyone, x[:, None, :],
                                                             y[:, None, :]))
        return y

    def gradients(self, ctx, everyone, x, y):
        """``∇_x f`` and ``∇_y f`` averaged over the clients, uploaded in one round."""
        ctx.broadcast(x, y)
        xb, yb = x[:, None, :], y[:, None, :]
        return ctx.aggregate(ctx.oracle.grad_x_f(everyone, xb, yb),
                             ctx.oracle.grad_y_f(everyone, xb, yb))

    def neumann(self, ctx, everyone, x, y, gy):
        """``p = c Σ_{s<N} (I − cA)^s ∇_y f``: ``N`` rounds of Hessian-vector products."""
        c = self.hp["neumann_scale"]
        term, p = gy, gy * 0.0
        for _ in range(self.hp["neumann_steps"]):
            p = p + c * term
            ctx.broadcast(term)
            term = term - c * ctx.aggregate(ctx.oracle.hvp_yy_g(
                everyone, x[:, None, :], y[:, None, :], term[:, None, :]))
        return p
