"""Shared pieces of the MemFBO claims (Yang, Xiao, Ma & Ji, AAAI 2025): the instance, the
schedules derived from the balance bounds (MEMFBO-I3–I5), the mutant algorithms, the
citing helper and the hypotheses (Assumptions 5.3–5.4, §5.2, step caps) that several
families check (the instance: package docstring; the schedules: ``rates``)."""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
import sympy as sp

from bilevel_theory import rates as R_
from bilevel_theory.algorithm import run_algorithm
from bilevel_theory.memfbo import MemFBO, penalty_y
from bilevel_theory.problems import QuadraticBilevel

from ...claim import Condition
from ...kit import PaperClaims

P_ = PaperClaims("memfbo")
PAPER = P_.paper.name

N_CLIENTS = 16
DIM_X = DIM_Y = 3
SIGMA = 1.0
C_LAM = 5.0           # λ = c_λ (PT)^{1/7} or c_λ T^{1/3}
C_GAMMA = 1.0         # γ_x = min{γ̄_x, c_γ (Pτ/(λT))^{1/2}}
C_TAU = 0.25          # τ = ⌈c_τ T^{4/3} / P⌉ (full participation)
TAU_PARTIAL = 2       # τ = O(1) (partial participation)
P_PARTIAL = 4         # sampled clients for the sweep in T (partial participation)
T_SPEEDUP = 800       # rounds for the sweep in P (every budget)


# ============================================================================ derived schedules
def _derive_schedules():
    """The rate exponents of the schedules, from the balance bounds (never typed)."""
    T, P, tau = (R_.SYMBOLS[s] for s in ("T", "P", "tau"))
    part = R_.BOUNDS["memfbo.balance_partial"].expr
    lam_p, _ = R_.minimize_rate(part, "lambda", order="T")
    full = R_.BOUNDS["memfbo.balance_full"].expr.subs(tau, T ** sp.Rational(4, 3) / P)
    lam_f, _ = R_.minimize_rate(full, "lambda", order="T")
    lam, g = R_.SYMBOLS["lambda"], sp.Symbol("gamma_x", positive=True)
    # SGD descent on L*_λ: Δ_λ/(γT) with Δ_λ = O(λ), plus γ·(λ²σ²/(Pτ)) (Prop. 5.10)
    gamma_x, value = R_.minimize_rate(lam / (g * T) + g * lam**2 / (P * tau), g)
    return (float(R_.leading_exponent(lam_p, "T")), float(R_.leading_exponent(lam_f, "T")),
            gamma_x, value)


LAM_EXP_PARTIAL, LAM_EXP_FULL, GAMMA_X, GAMMA_VALUE = _derive_schedules()
#: γ_x(λ, P, τ, T) of the balance (``sqrt(Pτ/(λT))``), as a numeric function
_GAMMA_X = sp.lambdify([R_.SYMBOLS[s] for s in ("lambda", "P", "tau", "T")], GAMMA_X, "math")
TAU_EXP = 4.0 / 3.0   # Cor. 5.12: τ = O(P^{−1}T^{4/3})


# ============================================================================ instances
@functools.lru_cache(maxsize=4)
def problem(noise: float = SIGMA, heterogeneity: float = 1.0) -> QuadraticBilevel:
    """The instance of every claim (package docstring); ``noise=0`` for the exact plateau and
    drift, ``heterogeneity=0`` for identical clients (the drift claims' mutant)."""
    return QuadraticBilevel.random(clients=N_CLIENTS, dim_x=DIM_X, dim_y=DIM_Y, kappa=2.0,
                                   heterogeneity=heterogeneity, noise=noise, seed=1,
                                   upper_mu=1.0, storage="dense")


def _gammas(lam: float, prob: QuadraticBilevel | None = None) -> dict:
    """The toolkit's server steps at ``λ`` on ``prob`` (default: the main instance;
    MEMFBO-I2)."""
    c = (prob if prob is not None else problem()).constants
    gamma_y = 1.0 / (c["ell_f1"] + lam * c["ell_g1"])
    return dict(gamma_x=min(0.5 / c["L_phi"], 0.5 * lam * gamma_y), gamma_y=gamma_y,
                gamma_z=1.0 / c["ell_g1"])


def schedule(T: int, P: int, full: bool, *, constant_step: bool = False,
             tau: int | None = None) -> dict:
    """λ, τ and γ_x of the balance at ``T`` rounds and ``P`` sampled clients.
    ``constant_step`` (a mutant): ``γ_x = γ̄_x`` instead of the schedule; ``tau``: a fixed
    number of local steps instead of ``⌈c_τT^{4/3}/P⌉`` (a mutant)."""
    if tau is None:
        tau = math.ceil(C_TAU * T ** TAU_EXP / P) if full else TAU_PARTIAL
    lam = C_LAM * (T ** LAM_EXP_FULL if full else (P * T) ** LAM_EXP_PARTIAL)
    gamma_bar = _gammas(lam)["gamma_x"]
    gamma_x = gamma_bar if constant_step else min(gamma_bar,
                                                  C_GAMMA * _GAMMA_X(lam, P, tau, T))
    return dict(penalty=lam, local_steps=int(tau), sampled_clients=int(P), gamma_x=gamma_x)


# ============================================================================ mutant algorithms
class OneClientUpload(MemFBO):
    """Mutant: the server applies one participating client's upload instead of the average of
    eq. (8) (the client updates are not averaged)."""

    def upload(self, ctx, hx, hy, hz):
        return ctx.aggregate(hx[:, :1], hy[:, :1], hz[:, :1], axis=1)


class StoredDirections(MemFBO):
    """Mutant: eq. (7) evaluated from the τ local directions each client stores (as a weighted
    local aggregation needs them) instead of running sums: the state grows with τ."""

    def client_buffers(self, k, iterates, sums, directions):
        if k == 0:
            self._stored = []
        self._stored.extend(directions)
        return (*iterates, *self._stored)


class SecondOrderStep(MemFBO):
    """Mutant: a Hessian-vector product ``∇²_{yy}g_i·∇_yL_i`` inserted in each local step (the
    kind of product a hypergradient-based method computes)."""

    def local_gradients(self, ctx, idx, x, y, z):
        dx, dy, dz = super().local_gradients(ctx, idx, x, y, z)
        ctx.oracle.hvp_yy_g(idx, x, y, dy)
        return dx, dy, dz


class DirectOnly(MemFBO):
    """Mutant: the x-direction without its penalty term, ``∇ₓf_i(x, y)`` in place of
    ``∇ₓf_i(x, y) + λ(∇ₓg_i(x, y) − ∇ₓg_i(x, z))`` (eq. (6)): the part of ``∇L*_λ`` that stands
    for the implicit gradient is dropped, so the iterates go to a stationary point of
    ``f(·, y*(·))``'s direct part, not of ``Φ``."""

    def local_gradients(self, ctx, idx, x, y, z):
        dx, dy, dz = super().local_gradients(ctx, idx, x, y, z)
        return ctx.oracle.grad_x_f(idx, x, y), dy, dz


class LastDirectionUpload(MemFBO):
    """Mutant: each client uploads the directions of its last local step instead of eq. (7)'s
    normalized aggregation over its ``τ`` steps (MEMFBO-I1), so the ``τ`` samples' noise is not
    averaged."""

    def local_gradients(self, ctx, idx, x, y, z):
        self._last = super().local_gradients(ctx, idx, x, y, z)
        return self._last

    def upload(self, ctx, hx, hy, hz):
        return super().upload(ctx, *self._last)


MUTANT_ALGORITHMS = {None: MemFBO, "one_client": OneClientUpload,
                     "last_direction": LastDirectionUpload,
                     "stored_directions": StoredDirections, "second_order": SecondOrderStep,
                     "indirect_dropped": DirectOnly}


def _run(prob, rounds, replicates, seed, backend, mutant=None, **hp):
    """MemFBO (or the mutant algorithm ``mutant`` of :data:`MUTANT_ALGORITHMS`)."""
    if mutant not in MUTANT_ALGORITHMS:
        raise ValueError(f"`mutant` must be one of {sorted(map(str, MUTANT_ALGORITHMS))}, got "
                         f"{mutant!r}")
    return run_algorithm(MUTANT_ALGORITHMS[mutant](prob, **hp), rounds, replicates, seed,
                         backend)


# ============================================================================ laws
def _cited(name: str, result: str, tag: str) -> R_.Bound:
    """A registered bound with its source cited as "Authors, venue year, result [tag]"."""
    return dataclasses.replace(R_.BOUNDS[name], source=P_.cite(result, tag))


# ============================================================================ conditions
def _penalty_large(lam, inside: bool = True, note: str = "") -> Condition:
    """§5.2's "λ sufficiently large" at the sweep value's penalty ``lam(x)`` (or a number)."""
    c = problem().constants
    return Condition("λ sufficiently large (§5.2): λ ≥ 3ℓ_{f,1}/μ_g", lam,
                     3.0 * c["ell_f1"] / c["mu_g"], relation=">=", inside=inside,
                     note=note or "the constant 3 is the project's (the paper gives none)")


def _assumption_conditions(p: QuadraticBilevel, points) -> tuple[Condition, ...]:
    """Assumptions 5.3 and 5.4 on the instance ``p`` where a result is evaluated:
    ``points(x) -> (xs, λ)``, the upper-level points and the penalty at sweep value ``x``.
    Constant Hessians make ``∇f_i, ∇g_i`` (ℓ_{f,1}, ℓ_{g,1}) and ``∇²f_i, ∇²g_i`` Lipschitz on
    the whole space; Assumption 5.5 holds by construction (additive noise of the configured
    variance); a quadratic ``f_i`` is Lipschitz only on a bounded set."""
    c = p.constants

    def reach(x):  # the largest ‖x‖, ‖y*(x)‖, ‖y_λ(x)‖ at the points
        xs, lam = points(x)
        xs = np.atleast_2d(xs)
        return float(max(np.linalg.norm(v, axis=-1).max()
                         for v in (xs, p.host.y_star(xs), penalty_y(p, xs, lam))))
    return (
        Condition("g_i(x, y) is μ-strongly convex w.r.t. y, μ > 0 (Assumption 5.3)",
                  c["mu_g"], 0.0, relation=">",
                  note=f"μ = min_i λ_min(∇²_{{yy}}g_i) = {c['mu_g']:.3g} on the instance"),
        Condition("f_i(x, y) is L_{f,0}-Lipschitz continuous (Assumption 5.4): ‖x‖, ‖y‖ ≤ "
                  "radius where the result is evaluated", reach, c["radius"],
                  note=f"L_{{f,0}} = ℓ_{{f,0}} = {c['ell_f0']:.3g} bounds ‖∇f_i‖ on ‖x‖, ‖y‖ ≤ "
                       f"radius = {c['radius']:g} only; lhs: the largest ‖x‖, ‖y*(x)‖, "
                       "‖y_λ(x)‖ at the points where ∇L*_λ and ∇Φ are evaluated"),
    )


def _step_conditions(p: QuadraticBilevel, hp_of, server: bool = True,
                     local: bool = False) -> tuple[Condition, ...]:
    """The steps of a MemFBO run with keywords ``hp_of(x)``, resolved by :class:`MemFBO` as
    the measure's run resolves them, against the caps of the penalty problem: the paper asks
    for "properly small" steps (Props. 5.8, 5.9) and its values, eqs. (47)/(48), are lost
    (MEMFBO-I2); ``server``: the steps γ_y, γ_x; ``local``: the local step of Prop. 5.8."""
    def hp(x):
        return MemFBO(p, **hp_of(x)).hp

    def cap(x):
        return _gammas(hp(x)["penalty"], p)
    note = ("the paper gives no value (eqs. (47)/(48) lost); 1/(ℓ_{f,1} + λℓ_{g,1}) is the "
            "descent step of the y-problem (curvature S + λA), MEMFBO-I2")
    conds = [
        Condition("γ_y properly small (Prop. 5.9): γ_y ≤ 1/(ℓ_{f,1} + λℓ_{g,1})",
                  lambda x: hp(x)["gamma_y"], lambda x: cap(x)["gamma_y"], note=note),
        Condition("γ_x ≤ γ̄_x (the step cap; toolkit γ̄_x, MEMFBO-I2)",
                  lambda x: hp(x)["gamma_x"], lambda x: cap(x)["gamma_x"]),
    ] if server else []
    if local:
        conds.append(Condition("local stepsizes properly small (Prop. 5.8): η_y ≤ 1/(ℓ_{f,1} "
                               "+ λℓ_{g,1})", lambda x: hp(x)["eta_y"],
                               lambda x: cap(x)["gamma_y"], note=note))
    return tuple(conds)


def _fixed_point_conditions(p: QuadraticBilevel, hp_of) -> tuple[Condition, ...]:
    """A fixed point of the deterministic, full-participation algorithm (MEMFBO-I6; the
    plateau's ``x_λ``): ``P = n`` and exact gradients."""
    c = p.constants
    return (Condition("P = n: full participation (MEMFBO-I6)",
                      lambda x: hp_of(x)["sampled_clients"], p.clients, relation="=="),
            Condition("σ_f² + σ_g² = 0: exact gradients (MEMFBO-I6)",
                      c["sigma_f2"] + c["sigma_g12"], 0.0, relation="=="))


# ============================================================================ claims
INSTANCE = "n = 16 heterogeneous clients (h = 1), dims 3, κ = 2, σ = 1, upper_mu = 1, seed 1"
