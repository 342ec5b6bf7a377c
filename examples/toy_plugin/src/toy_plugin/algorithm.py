"""``toy_fullgrad``: full participation, an inner gradient loop and a fixed-N Neumann series.

Problem: any bilevel quadratic instance.  Algorithm, per outer round k:

* ``T`` inner rounds ``y ← y − β ḡ_y`` with ``ḡ_y`` the clients' mean ``∇_y g_i(x, y)``;
* the hypergradient ``∇_x f − ∇²_{xy} g · p`` with ``p = (1/ℓ) Σ_{s<N} (I − A/ℓ)^s ∇_y f``
  (each Neumann step one round of Hessian-vector products, averaged over the clients);
* ``x ← x − α ∇̂Φ``.

Theoretical guarantee (the example's own, for the claims): the Neumann series' bias shrinks as
``(1 − μ_g/ℓ_{g,1})^N``; with exact oracles and ``N = 0`` the indirect term is lost.
"""

from __future__ import annotations

from bilevel_theory import Algorithm


class FullGradientNeumann(Algorithm):
    """Toy: full-participation inner GD + fixed-N Neumann hypergradient (example plug-in)."""

    name = "toy_fullgrad"
    kinds = ("bilevel",)
    defaults = {"inner_steps": 5, "neumann_steps": 10, "outer_step": 0.1, "inner_step": None,
                "x0": None, "y0": None}

    def init(self, ctx):
        return self.starting_point(ctx)

    def step(self, ctx, state, k):
        xp, o, c = ctx.xp, ctx.oracle, ctx.constants
        m, ell = self.problem.clients, c["ell_g1"]
        beta = self.hp["inner_step"] or 1.0 / ell
        everyone = xp.broadcast_to(xp.arange(m)[None, :], (ctx.replicates, m))
        x, y = state["x"], state["y"]
        xb = x[:, None, :]
        for _ in range(self.hp["inner_steps"]):
            ctx.broadcast(x, y)
            y = y - beta * ctx.aggregate(o.grad_y_g(everyone, xb, y[:, None, :]))
        yb = y[:, None, :]
        ctx.broadcast(x, y)
        gx, gy = ctx.aggregate(o.grad_x_f(everyone, xb, yb), o.grad_y_f(everyone, xb, yb))
        term, p = gy, gy * 0.0
        for _ in range(self.hp["neumann_steps"]):
            p = p + term / ell
            ctx.broadcast(term)
            term = term - ctx.aggregate(o.hvp_yy_g(everyone, xb, yb, term[:, None, :])) / ell
        ctx.broadcast(p)
        indirect = ctx.aggregate(o.jvp_xy_g(everyone, xb, yb, p[:, None, :]))
        return {"x": x - self.hp["outer_step"] * (gx - indirect), "y": y}
