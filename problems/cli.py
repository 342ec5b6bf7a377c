"""``bilevel-theory problem``: build an instance, print its constants and a closed-form self-check.

Exit codes: 0 every self-check passed; 1 a self-check failed; 2 bad input (one line on stderr,
from the ``bilevel-theory`` group, which turns ValueError/TypeError into ``error: ...``).
"""

from __future__ import annotations

import sys
import time

import click

from .bilevel import QuadraticBilevel
from .compositional import QuadraticCompositional
from .minimax import QuadraticMinimax
from .quadratic import KINDS, FederatedQuadratic
from .selfcheck import self_check
from .validation import check_choice

STORAGES = ("auto", "dense", "structured")

#: What each constant is (papers' notation), in the order printed.
DESCRIPTIONS = {
    "mu_g": "μ_g: strong convexity of every g_i in y (min_i λ_min(A_i))",
    "L_yy": "max_i λ_max(A_i): largest curvature of g_i in y",
    "kappa": "L_yy / μ_g: condition number of the lower level in y",
    "mu_g_global": "λ_min(A), A = mean_i A_i: strong convexity of the global g in y",
    "L_yy_global": "λ_max(A): smoothness of the global g in y",
    "ell_g1": "ℓ_{g,1}: Lipschitz constant of every ∇g_i (joint Hessian norm bound)",
    "kappa_g": "κ_g = ℓ_{g,1} / μ_g",
    "ell_g2": "ℓ_{g,2}: Lipschitz constant of ∇²g_i (0: constant Hessians)",
    "ell_f0": "ℓ_{f,0}: bound on ‖∇f_i‖ for ‖x‖, ‖y‖ ≤ radius",
    "ell_f1": "ℓ_{f,1}: Lipschitz constant of every ∇f_i",
    "L_y": "L_y = ℓ_{g,1} / μ_g: Lipschitz constant of y*(x)",
    "M_f": "M_f: Lipschitz constant of the surrogate ∇̄f(x, ·) (FedMBO Lemma 2)",
    "L_f": "L_f: Lipschitz bound on ∇Φ (FedMBO Lemma 2 / Ghadimi–Wang 2.2)",
    "L_phi": "exact ‖∇²Φ‖ (largest |eigenvalue|)",
    "mu_phi": "exact λ_min(∇²Φ) (> 0: Φ strongly convex)",
    "sigma_f2": "σ_f²: variance of the stochastic ∇f_i (noise²)",
    "sigma_g12": "σ_{g,1}²: variance of the stochastic ∇g_i (noise²)",
    "sigma_g22": "σ_{g,2}²: variance of Hessian/Jacobian samples per ‖v‖² (hessian-noise²)",
    "sigma_g2": "σ_g²: max over ‖z‖ ≤ √2·radius of mean_i ‖∇g_i(z) − ∇g(z)‖² (exact)",
    "radius": "domain ‖x‖, ‖y‖ ≤ radius of ℓ_{f,0} and σ_g²",
}


class OneLineCommand(click.Command):
    """Turns click's usage errors (a non-number, an unknown option) into a ValueError, so that
    the group prints them as one ``error: ...`` line with exit code 2, like every bad input."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as err:
            raise ValueError(err.format_message()) from None


def build(kind: str, clients: int, dim_x: int, dim_y: int | None, kappa: float | None,
          heterogeneity: float, noise: float, hessian_noise: float | None, seed: int,
          storage: str, fednest: bool = False, lam: float | None = None) -> FederatedQuadratic:
    """The instance the command describes (validation is the factories', plus the flags')."""
    kind = check_choice("kind", kind, KINDS)
    storage = check_choice("storage", storage, STORAGES)
    if fednest:
        if kind != "minimax":
            raise ValueError(f"`fednest` applies to `kind` 'minimax' only, got {kind!r}")
        if dim_y is not None and dim_y != dim_x:
            raise ValueError(f"`dim_y` must equal `dim_x` ({dim_x}) for the FedNest §4.3 "
                             f"instance, got {dim_y}")
        if kappa is not None and kappa != 1.0:
            raise ValueError(f"`kappa` is 1 in the FedNest §4.3 instance (A = I), got {kappa}")
        if storage == "dense":
            raise ValueError("`storage` must be 'auto' or 'structured' for the FedNest §4.3 "
                             "instance, got 'dense'")
        return QuadraticMinimax.fednest_instance(
            clients=clients, dim=dim_x, lam=10.0 if lam is None else lam, spread=heterogeneity,
            noise=noise, seed=seed, hessian_noise=hessian_noise)
    if lam is not None:
        raise ValueError("`lam` applies to the FedNest §4.3 instance only (add --fednest)")
    cls = {"bilevel": QuadraticBilevel, "minimax": QuadraticMinimax,
           "compositional": QuadraticCompositional}[kind]
    if kappa is None:
        kappa = 1.0 if kind == "compositional" else 10.0
    return cls.random(clients=clients, dim_x=dim_x, dim_y=dim_x if dim_y is None else dim_y,
                      kappa=kappa, heterogeneity=heterogeneity, noise=noise, seed=seed,
                      hessian_noise=hessian_noise, storage=storage)


def human_bytes(n: int) -> str:
    """``1234567`` → ``'1.2 MB'`` (decimal units)."""
    value = float(n)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def render(prob: FederatedQuadratic, build_s: float, constants_s: float, checks) -> str:
    """The printed report: instance, storage, timings, constants table, self-check table."""
    lines = [repr(prob), ""]
    info = [("clients", f"{prob.clients:,}"), ("dim_x, dim_y", f"{prob.dim_x}, {prob.dim_y}"),
            ("storage", str(prob.spec.get("storage", "structured"))),
            ("bytes", f"{prob.nbytes:,} ({human_bytes(prob.nbytes)}, per-client data)"),
            ("build", f"{build_s:.3f} s"), ("constants", f"{constants_s:.3f} s")]
    width = max(len(k) for k, _ in info)
    lines += [f"{k:<{width}}  {v}" for k, v in info] + ["", "constants"]
    const = prob.constants
    width = max(len(k) for k in const)
    lines += [f"  {k:<{width}}  {v:>13.6e}  {DESCRIPTIONS.get(k, '')}".rstrip()
              for k, v in const.items()]
    lines += ["", "self-check (at a seeded x with ‖x‖ = 1)"]
    width = max(len(c.name) for c in checks)
    lines += [f"  {c.name:<{width}}  {c.value:>9.2e}  {'ok  ' if c.ok else 'FAIL'} "
              f"(≤ {c.tolerance:.0e})  {c.description}" for c in checks]
    return "\n".join(lines)


@click.command(cls=OneLineCommand)
@click.option("--kind", default="bilevel", show_default=True,
              help="Problem family: bilevel, minimax or compositional.")
@click.option("--clients", default=100, show_default=True, type=int, help="Number of clients m.")
@click.option("--dim-x", default=5, show_default=True, type=int, help="Dimension of x.")
@click.option("--dim-y", default=None, type=int, help="Dimension of y  [default: dim-x]")
@click.option("--kappa", default=None, type=float,
              help="Condition number of every A_i  [default: 10; 1 for compositional]")
@click.option("--heterogeneity", default=0.5, show_default=True, type=float,
              help="Spread of the clients around their mean (0: identical clients); with "
                   "--fednest, the spread s of the b_i.")
@click.option("--noise", default=0.0, show_default=True, type=float,
              help="Std of the stochastic gradients, E‖ξ‖² = noise².")
@click.option("--hessian-noise", default=None, type=float,
              help="Std of Hessian/Jacobian samples  [default: noise]")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the instance.")
@click.option("--storage", default="auto", show_default=True,
              help="auto, dense (per-client matrices) or structured (scales to 10⁶ clients).")
@click.option("--fednest", is_flag=True, help="With --kind minimax: the FedNest §4.3 instance.")
@click.option("--lam", default=None, type=float,
              help="λ of the FedNest §4.3 instance  [default: 10]")
def problem(kind, clients, dim_x, dim_y, kappa, heterogeneity, noise, hessian_noise, seed,
            storage, fednest, lam) -> None:
    """Build a problem instance, print its constants and a closed-form self-check.

    Exit code 1 when a self-check fails.
    """
    t0 = time.perf_counter()
    prob = build(kind, clients, dim_x, dim_y, kappa, heterogeneity, noise, hessian_noise, seed,
                 storage, fednest, lam)
    t1 = time.perf_counter()
    prob.constants  # noqa: B018 (computed here to time it)
    t2 = time.perf_counter()
    checks = self_check(prob, seed=seed)
    click.echo(render(prob, t1 - t0, t2 - t1, checks))
    if not all(c.ok for c in checks):
        sys.exit(1)
