"""FedNest / LFedNest — Tarzanagh, Li, Thrampoulidis & Oymak, ICML 2022 (arXiv:2205.02215).

Problem:
    ``min_x f(x) = (1/m) Σ_i f_i(x, y*(x))``, ``y*(x) = argmin_y (1/m) Σ_i g_i(x, y)``
    (bilevel); ``g_i = −f_i`` (minimax, Cor. 3.2); ``g_i = ½‖y − r_i(x)‖²`` (compositional,
    Cor. 3.3); ``min_x (1/m) Σ f_i(x)`` (single level, Thm. 3.2).  ``|S|`` of the ``m`` clients
    take part in each stage, sampled without replacement (``replace=False``, as the official
    code's ``np.random.choice(..., replace=False)``).

Algorithm (Alg. 1–4, App. A):
    FedNest epoch ``k``: ``T`` calls of FedInn (Alg. 4, :func:`~bilevel_theory.inner.fedsvrg`):
    ``q = mean_S ∇_y g_i(y)`` (round 1), ``τ`` local steps
    ``y_{i,ν+1} = y_{i,ν} − (β_k/τ)(∇_y g_i(y_{i,ν}; ζ) − ∇_y g_i(y; ζ) + q)``, ``y⁺ = mean``
    (round 2).  Then FedOut (Alg. 2, :func:`fed_out`): ``p = FedIHGP(x, y⁺, N)`` (Alg. 3,
    :func:`~bilevel_theory.estimators.ihgp`), ``h_i = ∇ₓf_i(x, y⁺; ξ_i) − ∇²_{xy}g_i(ζ_i) p``,
    ``h = mean_S h_i`` (one round), ``τ`` local steps
    ``x_{i,ν+1} = x_{i,ν} − (α_k/τ)(∇ₓf_i(x_{i,ν}; ξ) − ∇ₓf_i(x; ξ) + h)`` (same sample ξ at
    both points), ``x⁺ = mean_S x_{i,τ}`` (one round).
    LFedNest: FedInn with SGD-type local steps (:func:`~bilevel_theory.inner.fedavg`: ``τ``
    local steps of ``β_k/τ``, then averaging; one round per inner step), then LFedOut
    (:func:`lfed_out`): at every local step each client computes its own IHGP
    (:func:`~bilevel_theory.estimators.local_ihgp`, only its own Hessians),
    ``h_{i,ν} = ∇ₓf_i(x_{i,ν}, y) − ∇²_{xy}g_i p_i`` and ``x_{i,ν+1} = x_{i,ν} − (α_k/τ) h_{i,ν}``;
    ``x⁺ = mean`` (one round).

    Registered names (the official README's variant table, ``--hvp_method`` × ``--optim``, plus
    the official code's estimator).  Rounds are the synchronisations executed, counted from
    ``Context.broadcast``/``Context.aggregate`` (FEDNEST-R1); ``N'`` is FedIHGP's truncation:

    ================ ============================= ========================= ==================
    name             FedOut                        FedInn                    rounds / epoch
    ================ ============================= ========================= ==================
    fednest          FedIHGP + SVRG local steps    FedSVRG (2 rounds/call)   2T + N' + 3
    fednest_released official code's estimator     FedSVRG (2 rounds/call)   2T + N + 3
    lfednest         local IHGP + SGD local steps  FedAvg  (1 round/call)    T + 1
    fednest_sgd      FedIHGP + SVRG local steps    FedAvg  (1 round/call)    T + N' + 3
    lfednest_svrg    local IHGP + SGD local steps  FedSVRG (2 rounds/call)   2T + 1
    fedsvrg          FedOut with ∇^I = 0 (Thm 3.2) none                      2
    fedavg_s         simultaneous local GDA (§4.3) (same round)              1
    ================ ============================= ========================= ==================

    ``N' ~ U{0..N−1}`` per replicate, so ``fednest`` executes ``2T + (N − 1)/2 + 3`` rounds on
    average; §2.6's ``2T + N + 3`` is the official code's fixed schedule, which
    ``fednest_released`` executes (its estimator always runs ``N`` Neumann steps).
    Problem kinds are handled automatically from ``problem.kind`` (no separate names):
    minimax: FedInn uses ``G_i = −∇_y f_i = ∇_y g_i`` and FedOut uses ``h_i = ∇ₓf_i`` only
    (eq. 12, no IHGP): ``fednest`` then costs ``2T + 2`` rounds, ``lfednest`` ``T + 1``;
    compositional: ``∇²_{yy}g_i = I`` is known, so the IHGP is exact and trivial,
    ``p = mean_{S₀} ∇_y f_i`` (one round; FEDNEST-R8), ``fednest`` costs ``2T + 3`` rounds and
    ``neumann_steps``/``neumann_scale`` are unused.

Theoretical guarantee (upper bounds):
    Thm. 3.1 (bilevel) with ``α_i = α_k/τ``, ``β_i = β_k/τ``, ``β_k = β̄α_k/T``,
    ``α_k = min{ᾱ₁, ᾱ₂, ᾱ₃, ᾱ/√K}``: ``(1/K) Σ E‖∇f(x^k)‖² = O(ᾱσ²/√K + 1/(min ᾱ_j K) + b²)``,
    ``b = κ_g ℓ_{f,1}((κ_g−1)/κ_g)^N``; Cor. 3.1 (``N ∝ κ_g log K``, ``T ∝ κ_g⁴``):
    ``O(κ_g⁴/K + κ_g^{2.5}/√K)``; Cor. 3.2 (minimax, ``T ∝ κ_f``): ``O(κ_f²/K + κ_f/√K)``;
    Cor. 3.3 (compositional, ``T = 1``): ``O(1/√K)``; Thm. 3.2 (single level, ``α_k =
    min{ᾱ₁, ᾱ/√K}``): ``O(Δ_f/(ᾱ₁K) + (Δ_f/ᾱ + ᾱσ_f²)/√K)``.  The helpers
    :func:`theorem_schedule`, :func:`corollary_3_1_schedule`, :func:`corollary_3_2_schedule`,
    :func:`corollary_3_3_schedule` and :func:`theorem_3_2_schedule` give these step sizes and
    parameters with the constants chosen by the caller.  LFedNest has no guarantee: its local
    IHGP estimates ``mean_i B_iᵀA_i⁻¹∇_y f_i`` instead of ``B̄ᵀĀ⁻¹∇_y f`` and its FedAvg inner
    loop drifts, so it stops at a biased point under heterogeneity (tested).
    Measured (``tests/test_fednest.py``, claims ``fednest.variance_floor*``): at a constant
    step, FedNest stalls at a floor ``∝ αN`` set by the variance of FedIHGP's random truncation
    ``N'`` (``Θ(N)`` even with exact oracles, FEDNEST-R6), where Thm. 3.1 read with ``σ = 0``
    has only ``O(1/K + b²)``; the official code's estimator has no random truncation but a
    bias (its series is weighted by ``1/k``, FEDNEST-R7).  On the §4.3 minimax instance FedNest
    and LFedNest give the same iterates (every client has the same Hessian in its local
    variable, so there is no drift to correct) and with partial participation both stop at a
    floor from the sampled mean ``b̄_S ≠ 0`` (FEDNEST-R5).

Readings (``docs/papers/fednest.md``):
    * FEDNEST-R1 (ledger): rounds are the aggregations executed; FedIHGP's Neumann stage runs
      ``N'`` synchronisations per replicate (``active=``), so a bilevel epoch executes
      ``2T + N' + 3``; Hessian-vector calls count the ``N'·|S|`` products evaluated (``N'`` per
      replicate in ``trace.extras["truncation"]``, shape ``(rounds, R)``).
    * FEDNEST-R9: ``FedNest_SGD`` / ``LFedNest_SVRG``: "SGD"/"SVRG" name the FedInn optimizer
      (``--optim`` in the official README), not the outer local steps; the FedOut of the
      global variants always uses the SVRG correction, LFedOut never.
    * FEDNEST-R10: ``τ``: one ``local_steps`` for FedOut and (by default) FedInn, as Thm. 3.1's
      single ``τ_i``; ``inner_local_steps`` sets FedInn's separately.
    * FEDNEST-I2: LFedNest's local IHGP (App. A is truncated): a fresh random-truncation local
      IHGP at every local step, at ``(x_{i,ν}, y)``.
    * FEDNEST-R2: the IHGP uses the paper's random truncation ``N' ~ U{0..N−1}`` and scaling
      ``N/ℓ_{g,1}``; ``neumann_series="full"`` gives the deterministic series (its
      expectation; for the local IHGP of the L-variants too), a comparison only;
      ``fednest_released`` the official code's (FEDNEST-R7).
    * Single-level ``fedsvrg`` runs on a bilevel instance whose upper level does not depend on
      ``y`` (``R_i = S_i = 0``, ``q_i = 0``, so ``Φ(x) = ½xᵀPx + p̄ᵀx``); other instances are
      refused.
    * FEDNEST-I3: ``fedavg_s`` (§4.3, Hou et al. 2021): each client runs ``τ`` simultaneous
      steps ``x ← x − (α/τ)∇ₓf_i(x, y)``, ``y ← y + (β/τ)∇_y f_i(x, y)`` from the global
      ``(x, y)``, then the server averages both (one round per epoch).

Args (hyperparameters):
    inner_steps (T), neumann_steps (N), local_steps (τ), inner_local_steps (FedInn's τ,
    default ``local_steps``), sampled_clients (|S|), outer_step (α, float or callable of k),
    inner_step (β, float or callable of k), neumann_scale (ℓ_{g,1}), neumann_series
    (``"random"``, Alg. 3, or ``"full"``), replace (bool), x0, y0.
    Defaults: ``T = 10``, ``N = ⌈κ_g log 10³⌉``, ``τ = 5``, ``|S| = min(m, 10)``,
    ``α = 0.5/L_Φ``, ``β = 1/(2ℓ_{g,1})``, ``neumann_scale = ℓ_{g,1}``,
    ``neumann_series = "random"``, ``replace = False``.

Returns:
    a :class:`~bilevel_theory.trace.Trace`; ``y`` is ``y^{k}`` (``None`` for ``fedsvrg``);
    ``extras["truncation"]`` holds the FedIHGP truncations ``N'`` of the global variants on
    bilevel problems.

Example:
    >>> from bilevel_theory.problems import QuadraticBilevel
    >>> from bilevel_theory import run
    >>> prob = QuadraticBilevel.random(clients=20, dim_x=3, dim_y=3, kappa=5, seed=0)
    >>> trace = run("fednest", prob, rounds=100, replicates=4, seed=0)
    >>> bool(trace.stationarity[:, -20:].mean() < 0.5 * trace.stationarity[:, 0].mean())
    True
    >>> T, N = 10, trace.hyperparameters["neumann_steps"]
    >>> executed = 2 * T + 3 + trace.extras["truncation"].mean(axis=1)
    >>> bool(abs(trace.ledger.per_round("rounds") - executed).max() < 1e-9)
    True
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from bilevel_theory.problems.validation import check_int, check_real

from .algorithm import Algorithm, Context, as_schedule
from .estimators import ihgp, local_ihgp, released_ihgp
from .fedmbo import default_neumann_steps
from .inner import fedavg, fedsvrg

#: How the indirect part of the hypergradient is formed, by problem kind.
INDIRECT = {"bilevel": "ihgp", "minimax": "none", "compositional": "identity"}


# ---------------------------------------------------------------------------- schedules
def theorem_schedule(rounds: int, inner_steps: int, alpha_bar: float, beta_bar: float,
                     alpha_caps: tuple[float, ...] = ()) -> tuple[float, float]:
    """Thm. 3.1, eq. (16): ``α_k = min{ᾱ₁, ᾱ₂, ᾱ₃, ᾱ/√K}`` and ``β_k = β̄ α_k / T``.

    ``alpha_caps`` are the ``K``-independent caps ``ᾱ₁, ᾱ₂, ᾱ₃`` (none: the ``ᾱ/√K`` branch is
    active).  Returns ``(outer_step, inner_step)``, the server-level ``α_k, β_k``; the local
    steps ``α_k/τ, β_k/τ`` are applied inside the algorithm.
    """
    K = check_int("rounds", rounds, minimum=1)
    T = check_int("inner_steps", inner_steps, minimum=1)
    a = check_real("alpha_bar", alpha_bar, minimum=0.0, strict_minimum=True)
    b = check_real("beta_bar", beta_bar, minimum=0.0, strict_minimum=True)
    caps = [check_real("alpha_caps", c, minimum=0.0, strict_minimum=True) for c in alpha_caps]
    alpha = min([*caps, a / math.sqrt(K)])
    return alpha, b * alpha / T


def corollary_3_1_schedule(problem, rounds: int, alpha_bar: float, beta_bar: float,
                           alpha_caps: tuple[float, ...] = (), inner_factor: float = 1.0,
                           neumann_factor: float = 1.0) -> dict[str, Any]:
    """Cor. 3.1 (bilevel): ``N = ⌈c_N κ_g log K⌉``, ``T = ⌈c_T κ_g⁴⌉`` and Thm. 3.1's steps.

    The corollary's ``O(·)`` on ``N`` and ``T`` are lower bounds (FEDNEST-R3); the factors
    ``neumann_factor = c_N`` and ``inner_factor = c_T`` are the chosen constants.  Returns
    hyperparameters for :func:`bilevel_theory.run`.
    """
    K = check_int("rounds", rounds, minimum=2)
    kg = problem.constants["kappa_g"]
    T = max(1, math.ceil(check_real("inner_factor", inner_factor, minimum=0.0,
                                    strict_minimum=True) * kg ** 4))
    N = max(1, math.ceil(check_real("neumann_factor", neumann_factor, minimum=0.0,
                                    strict_minimum=True) * kg * math.log(K)))
    alpha, beta = theorem_schedule(K, T, alpha_bar, beta_bar, alpha_caps)
    return dict(inner_steps=T, neumann_steps=N, outer_step=alpha, inner_step=beta)


def corollary_3_2_schedule(problem, rounds: int, alpha_bar: float, beta_bar: float,
                           alpha_caps: tuple[float, ...] = (),
                           inner_factor: float = 1.0) -> dict[str, Any]:
    """Cor. 3.2 (minimax, ``b = 0``): ``T = ⌈c_T κ_f⌉`` with ``κ_f = ℓ_{f,1}/μ_f`` (``= κ_g`` of
    the bilevel form ``g = −f``) and Thm. 3.1's steps."""
    if problem.kind != "minimax":
        raise ValueError(f"`problem` must be a minimax problem for Cor. 3.2, got {problem.kind!r}")
    kf = problem.constants["kappa_g"]
    T = max(1, math.ceil(check_real("inner_factor", inner_factor, minimum=0.0,
                                    strict_minimum=True) * kf))
    alpha, beta = theorem_schedule(rounds, T, alpha_bar, beta_bar, alpha_caps)
    return dict(inner_steps=T, outer_step=alpha, inner_step=beta)


def corollary_3_3_schedule(rounds: int, alpha_bar: float, beta_bar: float,
                           alpha_caps: tuple[float, ...] = ()) -> dict[str, Any]:
    """Cor. 3.3 (compositional, ``κ_g = 1``, ``b = 0``): ``T = 1`` in eq. (16)."""
    alpha, beta = theorem_schedule(rounds, 1, alpha_bar, beta_bar, alpha_caps)
    return dict(inner_steps=1, outer_step=alpha, inner_step=beta)


def theorem_3_2_schedule(rounds: int, alpha_bar: float,
                         alpha_cap: float = math.inf) -> dict[str, Any]:
    """Thm. 3.2, eq. (18) (single-level FedSVRG): ``α_k = min{ᾱ₁, ᾱ/√K}``."""
    K = check_int("rounds", rounds, minimum=1)
    a = check_real("alpha_bar", alpha_bar, minimum=0.0, strict_minimum=True)
    cap = alpha_cap if alpha_cap == math.inf else check_real(
        "alpha_cap", alpha_cap, minimum=0.0, strict_minimum=True)
    return dict(outer_step=min(cap, a / math.sqrt(K)))


# ---------------------------------------------------------------------------- building blocks
def fed_out(ctx: Context, x, y, step: float, local_steps: int, sampled_clients: int,
            neumann_steps: int, scale: float, replace: bool = False, indirect: str = "ihgp",
            series: str = "random"):
    """FedOut (Alg. 2): ``x⁺`` from ``x (R, dim_x)`` and ``y⁺ (R, dim_y)``.

    ``indirect``: ``"ihgp"`` (bilevel: ``p`` from FedIHGP, ``1 + N'`` rounds executed),
    ``"released"`` (the official code's estimator :func:`~bilevel_theory.estimators.released_ihgp`,
    ``1 + N`` rounds, on the same client set as the rest of FedOut, as ``ClientManage.fed_out``),
    ``"identity"`` (compositional: ``∇²_{yy}g = I``, ``p = mean_{S₀}∇_y f_i``, one round),
    ``"none"`` (minimax eq. 12 and single level: ``h_i = ∇ₓf_i``).  Then one round for ``h``
    and one for ``x⁺``.  ``series``: FedIHGP's truncation (``"random"``, Alg. 3; ``"full"``, the
    deterministic series, a comparison only).  Returns ``(x⁺, N')`` with ``N' (R,)`` the
    FedIHGP truncations, or ``None``.  Rounds are counted from the exchanges executed.  The
    local steps' same-sample difference ``∇ₓf_i(x_{i,ν}; ξ) − ∇ₓf_i(x; ξ)`` is exact under
    additive noise, so no noise is drawn for it (:meth:`~bilevel_theory.problems.Oracle.difference`).
    """
    o, R, xp = ctx.oracle, ctx.replicates, ctx.xp
    xb, yb = x[:, None, :], y[:, None, :]
    trunc = None
    S = None
    if indirect == "ihgp":
        p, trunc = ihgp(ctx, x, y, neumann_steps, sampled_clients, scale, replace, series)
    elif indirect == "released":
        S = o.sample_clients(R, sampled_clients, replace)
        p = released_ihgp(ctx, S, x, y, neumann_steps, scale)
    elif indirect == "identity":
        S0 = o.sample_clients(R, sampled_clients, replace)
        ctx.broadcast(x, y)
        p = ctx.aggregate(o.grad_y_f(S0, xb, yb))
    if S is None:
        S = o.sample_clients(R, sampled_clients, replace)
    h_i = o.grad_x_f(S, xb, yb)
    if indirect != "none":
        h_i = h_i - o.jvp_xy_g(S, xb, yb, p[:, None, :])
        ctx.broadcast(x, y, p)
    else:
        ctx.broadcast(x, y)
    h = ctx.aggregate(h_i)[:, None, :]
    ctx.broadcast(h[:, 0, :])
    ref = o.exact("grad_x_f", S, xb, yb)  # the correction's second point, fixed
    lr = step / local_steps
    x_loc = xp.broadcast_to(xb, S.shape + (x.shape[-1],)) * 1.0
    for _ in range(local_steps):
        # same sample ξ at both points: its noise cancels, none is drawn (Oracle.difference)
        f = o.difference("grad_x_f", S, x_loc, yb, xb, yb, reference=ref)
        f += h
        f *= lr
        x_loc -= f
    ctx.hold(3 * x.shape[-1], y.shape[-1])
    return ctx.aggregate(x_loc), trunc


def lfed_out(ctx: Context, x, y, step: float, local_steps: int, sampled_clients: int,
             neumann_steps: int, scale: float, replace: bool = False, indirect: str = "ihgp",
             series: str = "random"):
    """LFedOut (App. A, FEDNEST-I2): per client and local step a local hypergradient
    ``h_{i,ν} = ∇ₓf_i(x_{i,ν}, y) − ∇²_{xy}g_i p_i`` with ``p_i`` the client's own IHGP
    (``indirect="ihgp"``; ``series``: its truncation, as in :func:`fed_out`), ``∇_y f_i``
    (``"identity"``) or nothing (``"none"``), local step ``α/τ``, then ``x⁺ = mean`` (one
    round).  Returns ``x⁺ (R, dim_x)``."""
    o, R, xp = ctx.oracle, ctx.replicates, ctx.xp
    xb, yb = x[:, None, :], y[:, None, :]
    S = o.sample_clients(R, sampled_clients, replace)
    ctx.broadcast(x, y)
    x_loc = xp.broadcast_to(xb, S.shape + (x.shape[-1],)) * 1.0
    for _ in range(local_steps):
        h = o.grad_x_f(S, x_loc, yb)
        if indirect == "ihgp":
            h = h - o.jvp_xy_g(S, x_loc, yb, local_ihgp(ctx, S, x_loc, yb, neumann_steps, scale,
                                                        series))
        elif indirect == "identity":
            h = h - o.jvp_xy_g(S, x_loc, yb, o.grad_y_f(S, x_loc, yb))
        x_loc = x_loc - (step / local_steps) * h
    ctx.hold(2 * x.shape[-1], 2 * y.shape[-1])
    return ctx.aggregate(x_loc)


# ---------------------------------------------------------------------------- algorithms
def _sampled(c, p) -> int:
    return min(p.clients, 10)


_COMMON: dict[str, Any] = dict(
    sampled_clients=_sampled,
    local_steps=5,
    outer_step=lambda c, p: 0.5 / c["L_phi"],
    replace=False, x0=None,
)


class _FedNestFamily(Algorithm):
    """FedNest and its variants: ``hvp`` ∈ {global, local} × ``inner_solver`` ∈ {svrg, sgd}."""

    kinds = ("bilevel", "minimax", "compositional")
    hvp: ClassVar[str] = "global"
    inner_solver: ClassVar[str] = "svrg"
    #: the FedOut hypergradient estimator of the global variants: ``"paper"`` (Alg. 3) or
    #: ``"released"`` (the official code's ``global_batch``, FEDNEST-R7)
    estimator: ClassVar[str] = "paper"
    defaults = dict(
        _COMMON,
        inner_steps=10, inner_local_steps=None,
        neumann_steps=default_neumann_steps,
        inner_step=lambda c, p: 1.0 / (2.0 * c["ell_g1"]),
        neumann_scale=lambda c, p: c["ell_g1"],
        neumann_series="random",
        y0=None,
    )

    def validate(self, hp: dict[str, Any]) -> dict[str, Any]:
        hp = _validate_flags(super().validate(hp))
        if hp["neumann_series"] not in ("random", "full"):
            raise ValueError("`neumann_series` must be 'random' (Alg. 3) or 'full' (the "
                             f"deterministic series), got {hp['neumann_series']!r}")
        if hp["inner_local_steps"] is None:
            hp["inner_local_steps"] = hp["local_steps"]
        hp["inner_local_steps"] = check_int("inner_local_steps", hp["inner_local_steps"],
                                            minimum=1)
        hp["neumann_scale"] = check_real("neumann_scale", hp["neumann_scale"], minimum=0.0,
                                         strict_minimum=True)
        return hp

    def init(self, ctx: Context):
        return self.starting_point(ctx)

    def step(self, ctx: Context, state, k: int):
        hp, kind = self.hp, INDIRECT[self.problem.kind]
        if kind == "ihgp" and self.estimator == "released":
            kind = "released"
        alpha = as_schedule("outer_step", hp["outer_step"])(k)
        beta = as_schedule("inner_step", hp["inner_step"])
        solver = fedsvrg if self.inner_solver == "svrg" else fedavg
        x = state["x"]
        y = solver(ctx, x, state["y"], hp["inner_steps"], lambda t: beta(k),
                   hp["sampled_clients"], hp["inner_local_steps"], hp["replace"])
        args = (alpha, hp["local_steps"], hp["sampled_clients"], hp["neumann_steps"],
                hp["neumann_scale"], hp["replace"], kind)
        if self.hvp == "global":
            x_new, trunc = fed_out(ctx, x, y, *args, series=hp["neumann_series"])
            if trunc is not None:
                ctx.record("truncation", trunc)
        else:
            x_new = lfed_out(ctx, x, y, *args, series=hp["neumann_series"])
        return dict(x=x_new, y=y)


class FedNest(_FedNestFamily):
    """FedNest: FedInn (FedSVRG) + FedOut (FedIHGP, SVRG local steps); ``2T + N + 3`` rounds."""

    name = "fednest"


class FedNestReleased(_FedNestFamily):
    """FedNest as the official code runs it (FEDNEST-R7): identical to ``fednest`` except
    FedOut's hypergradient estimator, :func:`~bilevel_theory.estimators.released_ihgp`
    (``core/ClientManage.py``, ``ClientManage.fedIHGP`` with ``hvp_method='global_batch'``, and
    ``core/Client_hr.py``, ``Client.hvp_iter`` / ``Client.hyper_grad``, repository
    ``ucr-optml/FedNest``): no random truncation, no ``N/ℓ`` scale, each client's own Hessian
    powers, the series weighted by ``1/k``; one client set for the whole FedOut.  ``2T + N + 3``
    rounds executed, the code's ``comm_round``.  ``neumann_series`` is unused."""

    name = "fednest_released"
    estimator = "released"


class LFedNest(_FedNestFamily):
    """LFedNest: FedAvg inner loop + LFedOut (local IHGP, SGD local steps); ``T + 1`` rounds."""

    name = "lfednest"
    hvp = "local"
    inner_solver = "sgd"


class FedNestSGD(_FedNestFamily):
    """FedNest_SGD: FedAvg inner loop + FedOut (FedIHGP, SVRG local steps); ``T + N + 3``."""

    name = "fednest_sgd"
    inner_solver = "sgd"


class LFedNestSVRG(_FedNestFamily):
    """LFedNest_SVRG: FedInn (FedSVRG) + LFedOut (local IHGP); ``2T + 1`` rounds."""

    name = "lfednest_svrg"
    hvp = "local"


class FedSVRG(Algorithm):
    """Single-level federated SVRG (Thm. 3.2): FedOut with ``∇^I = 0`` on ``f_i(x)``; 2 rounds.

    Needs a bilevel instance whose upper level does not depend on ``y`` (``R_i = S_i = 0``,
    ``q_i = 0``), e.g. ``dataclasses.replace(prob, R=zero, S=zero, q=zeros)``; then
    ``Φ(x) = ½xᵀPx + p̄ᵀx`` and ``trace.stationarity`` is ``‖∇f(x_k)‖²``.
    """

    name = "fedsvrg"
    has_y = False
    defaults = dict(_COMMON)

    def __init__(self, problem, **hyperparameters: Any):
        super().__init__(problem, **hyperparameters)
        h = problem.host
        if (h.R.max_norm() > 0 or h.S.max_norm() > 0
                or float(np.abs(np.asarray(h.q)).max()) > 0):
            raise ValueError(
                "`problem` for `fedsvrg` must have an upper level independent of y "
                "(R_i = S_i = 0, q_i = 0; build it with dataclasses.replace); for bilevel "
                "problems use 'fednest'")

    def validate(self, hp: dict[str, Any]) -> dict[str, Any]:
        return _validate_flags(super().validate(hp))

    def init(self, ctx: Context):
        state = self.starting_point(ctx)
        return dict(x=state["x"], y=None, y_ref=ctx.xp.zeros_like(state["y"]))

    def step(self, ctx: Context, state, k: int):
        hp = self.hp
        alpha = as_schedule("outer_step", hp["outer_step"])(k)
        x, _ = fed_out(ctx, state["x"], state["y_ref"], alpha, hp["local_steps"],
                       hp["sampled_clients"], 1, 1.0, hp["replace"], "none")
        return dict(x=x, y=None, y_ref=state["y_ref"])


class FedAvgS(Algorithm):
    """FedAvg-S (§4.3 baseline): simultaneous local GDA on every client, then averaging."""

    name = "fedavg_s"
    kinds = ("minimax",)
    defaults = dict(
        _COMMON,
        inner_step=lambda c, p: 1.0 / (2.0 * c["ell_g1"]),
        y0=None,
    )

    def validate(self, hp: dict[str, Any]) -> dict[str, Any]:
        return _validate_flags(super().validate(hp))

    def init(self, ctx: Context):
        return self.starting_point(ctx)

    def step(self, ctx: Context, state, k: int):
        hp, o, xp = self.hp, ctx.oracle, ctx.xp
        alpha = as_schedule("outer_step", hp["outer_step"])(k)
        beta = as_schedule("inner_step", hp["inner_step"])(k)
        tau = hp["local_steps"]
        x, y = state["x"], state["y"]
        S = o.sample_clients(ctx.replicates, hp["sampled_clients"], hp["replace"])
        ctx.broadcast(x, y)
        x_loc = xp.broadcast_to(x[:, None, :], S.shape + (x.shape[-1],)) * 1.0
        y_loc = xp.broadcast_to(y[:, None, :], S.shape + (y.shape[-1],)) * 1.0
        for _ in range(tau):
            gx = o.grad_x_f(S, x_loc, y_loc)
            gy = o.grad_y_g(S, x_loc, y_loc)  # = −∇_y f_i: descent on g is ascent on f
            x_loc, y_loc = x_loc - (alpha / tau) * gx, y_loc - (beta / tau) * gy
        ctx.hold(2 * x.shape[-1], 2 * y.shape[-1])
        x_new, y_new = ctx.aggregate(x_loc, y_loc)
        return dict(x=x_new, y=y_new)


def _validate_flags(hp: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(hp.get("replace"), (bool, np.bool_)):
        raise TypeError(f"`replace` must be True or False, got {hp.get('replace')!r}")
    return hp


REGISTERED = (FedNest, FedNestReleased, LFedNest, FedNestSGD, LFedNestSVRG, FedSVRG, FedAvgS)


# =============================================================================================
# Theory: the bounds of Tarzanagh, Li, Thrampoulidis & Oymak, ICML 2022 (Lemma 2.2, Thms
# 3.1–3.2, Cors 3.1–3.3, and the readings FEDNEST-I1/I3/I4), as sympy expressions.
# ``bilevel_theory.rates.BOUNDS`` collects them by name; ``rates.law_for`` derives the claims'
# laws from them.  Built on demand, so that importing the algorithm does not import sympy.
# =============================================================================================

THEORY_PAPER = "FedNest 2022"
THEORY_CITATION = "Tarzanagh, Li, Thrampoulidis & Oymak, ICML 2022 (arXiv:2205.02215)"


def bounds() -> list:
    """The stated bounds of Tarzanagh, Li, Thrampoulidis & Oymak, ICML 2022, Lemma 2.2,
    Thms 3.1–3.2, Cors 3.1–3.3 (and the readings FEDNEST-I1/I3/I4), as
    :class:`bilevel_theory.rates.Bound` objects (names ``"fednest.<result>"``)."""
    import sympy as sp  # noqa: PLC0415

    from bilevel_theory.rates import (  # noqa: PLC0415
        Bound,
        BoundList,
        Delta_f,
        K,
        N,
        T,
        a_bar,
        a_bar1,
        a_bar2,
        a_bar3,
        alpha,
        beta,
        ell_f1,
        eps,
        kappa_f,
        kappa_g,
        lam,
        mu_g,
        neumann_N_for,
        sigma_f,
        sigma_g1,
        sigma_g2,
        tau,
    )

    out = BoundList(THEORY_CITATION)
    _add, _src = out.add, out.source

    _R = sp.Rational
    _STAT = r"\frac{1}{K}\sum_{k} \mathbb{E}\|\nabla f(x^k)\|^2"

    _geo = ((kappa_g - 1) / kappa_g) ** N
    _add(Bound(
        "fednest.lemma22_bias", THEORY_PAPER, _src("Lemma 2.2 (IHGP bias)"),
        _geo / mu_g, r"\|[\nabla^2_y g]^{-1} - \mathbb{E}_W[\hat H_y]\|", "le",
        {"N": "Neumann truncation", "kappa_g": "κ_g"}, ("A1–A2", "κ_g ≥ 1")))
    _add(Bound(
        "fednest.lemma22_b", THEORY_PAPER, _src("Lemma 2.2 (b)"),
        kappa_g * ell_f1 * _geo, r"\|\mathbb{E}_W[h_i^I] - \bar\nabla^I f_i\|", "le",
        {"N": "Neumann truncation", "kappa_g": "κ_g"}, ("A1–A2", "κ_g ≥ 1")))
    _add(Bound(
        "fednest.lemma22_second", THEORY_PAPER, _src("Lemma 2.2 (second bound)"),
        2 / mu_g, r"\mathbb{E}_W\|[\nabla^2_y g]^{-1} - \hat H_y\|", "le"))
    _add(Bound(
        "fednest.rounds_fednest", THEORY_PAPER, _src("§2.6 rounds per epoch"),
        2 * T + N + 3, r"\mathrm{rounds\ per\ epoch\ (FedNest)}", "eq",
        {"T": "inner FedInn calls", "N": "Neumann steps"},
        notes=("FEDNEST-R1: N + 3 matches the official code (fixed `neumann` iterations); the "
               "random N' ≤ N−1 would give at most N + 2",)))
    _add(Bound(
        "fednest.rounds_lfednest", THEORY_PAPER, _src("§2.6 rounds per epoch"),
        T + 1, r"\mathrm{rounds\ per\ epoch\ (LFedNest)}", "eq", {"T": "inner FedInn (SGD) calls"}))
    fednest_thm31 = _add(Bound(
        "fednest.thm31", THEORY_PAPER, _src("Thm 3.1"),
        a_bar * sp.Max(sigma_g1**2, sigma_g2**2, sigma_f**2) / sp.sqrt(K)
        + 1 / (sp.Min(a_bar1, a_bar2, a_bar3) * K) + (kappa_g * ell_f1 * _geo) ** 2,
        _STAT, "O", {"K": "outer iterations", "N": "Neumann truncation"},
        ("Assumptions A and B", "α_k = min{ᾱ_1, ᾱ_2, ᾱ_3, ᾱ/√K}, β_k = β̄α_k/T"),
        ("literal statement: no Δ/(ᾱ√K) term (FEDNEST-R3: apparently omitted; exponents unchanged)",
         "at fixed N the bound has the floor b²: exponent 0 in K")))
    _add(fednest_thm31.derive(
        "fednest.thm31_cor31_N", {"N": neumann_N_for(K, 1, kappa_g)},
        "N = log K/(2 log(κ_g/(κ_g−1))) ≈ (κ_g/2) log K so b² = κ_g²ℓ_{f,1}²/K: a constant inside "
        "Cor 3.1's N = O(κ_g log K) (FEDNEST-R3: a lower bound)",
        source=_src("Thm 3.1 with Cor 3.1's N"), variables={"K": "outer iterations"}))
    _add(Bound(
        "fednest.cor31", THEORY_PAPER, _src("Cor 3.1 (bilevel)"),
        kappa_g**4 / K + kappa_g ** _R(5, 2) / sp.sqrt(K), _STAT, "O",
        {"K": "outer iterations", "kappa_g": "κ_g"}, ("N = O(κ_g log K)", "T = O(κ_g⁴)"),
        ("FEDNEST-R3: N and T are lower bounds (N ∝ κ_g log K, T ≳ κ_g⁴)",
         "the 1/K term dominates for K < κ_g³ (crossovers)")))
    _add(Bound(
        "fednest.cor31_iterations", THEORY_PAPER, _src("Cor 3.1 (K(ε))"),
        kappa_g**5 * eps**-2, "K", "O", {"epsilon": "accuracy", "kappa_g": "κ_g"},
        notes=("stated K = O(κ_g⁵ε⁻²); fednest.cor31's κ_g^{2.5}/√K term inverted",)))
    _add(Bound(
        "fednest.cor31_bias", THEORY_PAPER, _src("§3, after Cor 3.1"),
        1 / sp.sqrt(K), r"b^2", "O", {"K": "outer iterations"},
        ("N ∝ κ_g log K (FEDNEST-R3: N = ⌈κ_g log K⌉)",),
        ("\"we choose N ∝ κ_g log K to guarantee b² ≲ 1/√K\": b is Lemma 2.2's bias bound of "
         "the indirect term",)))
    _add(Bound(
        "fednest.cor32", THEORY_PAPER, _src("Cor 3.2 (minimax)"),
        kappa_f**2 / K + kappa_f / sp.sqrt(K), _STAT, "O",
        {"K": "outer iterations", "kappa_f": "κ_f = ℓ_{f,1}/μ_f"}, ("g_i = −f_i, b = 0",
                                                                    "T = O(κ_f)")))
    _add(Bound(
        "fednest.cor32_iterations", THEORY_PAPER, _src("Cor 3.2 (K(ε))"),
        kappa_f**2 * eps**-2, "K", "O", {"epsilon": "accuracy", "kappa_f": "κ_f"},
        notes=("K = O(κ_f²ε⁻²): fednest.cor32's κ_f/√K term inverted (Table 1's samples "
               "O(κ_f³ε⁻²) are K·T with T = O(κ_f))",)))
    _add(Bound(
        "fednest.cor33", THEORY_PAPER, _src("Cor 3.3 (compositional)"),
        1 / sp.sqrt(K), _STAT, "O", {"K": "outer iterations"}, ("b = 0, κ_g = 1", "T = 1")))
    _add(Bound(
        "fednest.thm32", THEORY_PAPER, _src("Thm 3.2 (single level)"),
        Delta_f / (a_bar1 * K) + (Delta_f / a_bar + a_bar * sigma_f**2) / sp.sqrt(K), _STAT, "O",
        {"K": "outer iterations"}, ("Assumptions C, D", "α_k = min{ᾱ_1, ᾱ/√K}")))
    # FEDNEST-R13, Fig. 2(c): the experiment holds the local step α_i fixed while τ grows, so
    # a round's step is α_k = τα_i; Thm 3.1's optimisation term 1/(α_kK) ≤ ε, inverted, asks
    # for K ∝ 1/(τα_iε) epochs of τ-independent rounds (2T + N' + 3 each).
    _add(Bound(
        "fednest.thm31_rounds_vs_tau", THEORY_PAPER,
        _src("Thm 3.1's 1/(ᾱK) term at α_k = τα_i (§4.1, Fig. 2(c))", "[INFERRED]"),
        (2 * T + N + 3) / (tau * alpha * eps),
        r"\mathrm{rounds\ until}\ " + _STAT + r" \leq \epsilon", "O",
        {"tau": "local steps of FedOut", "epsilon": "target of the average stationarity"},
        ("α_i = α_k/τ fixed (Fig. 2(c)), α_k ≤ min{ᾱ_1, ᾱ_2, ᾱ_3}", "β_k = β̄α_k/T",
         "ε above the bound's noise and b² terms"),
        ("[INFERRED] Fig. 2(c) states the saving without a rate; the 1/(ᾱK) term of Thm 3.1 "
         "at α_k = τα_i gives rounds ∝ 1/τ",)))
    # Readings the claims test, where the paper states no formula ([INFERRED]).
    h = sp.Symbol("h", positive=True)  # client heterogeneity (spread of the clients' data)
    # FEDNEST-I1, §2.5: FedInn (FedLin-type SVRG) reaches the global y*(x) despite
    # heterogeneity; with unbiased gradient noise of variance σ² and a constant step β its
    # stationary mean-square error is O(βσ²/μ_g), with no heterogeneity term (FedAvg's has a
    # drift term growing with the client spread h: O(βσ²/μ_g + drift(h))).
    _add(Bound(
        "fednest.fedinn_stationary", THEORY_PAPER,
        _src("§2.5 FedInn (FedSVRG/FedLin) vs FedAvg drift", "[INFERRED]"),
        beta * sigma_g1 ** 2 / mu_g,
        r"\limsup_t \mathbb{E}\|y^t - y^*(x)\|^2", "O", {},
        ("constant β ≤ 1/ℓ_{g,1}", "full participation"),
        ("[INFERRED] no heterogeneity term: the fixed point of FedInn is y*(x) for every h",)))
    # FEDNEST-I3, §4.3: per-epoch contraction of ‖x − x*‖² on the §4.3 instance.  Every
    # client's x-Hessian is λI (f_i = … + (λ/2)‖x‖²), so FedOut's τ SVRG-corrected local steps
    # of α/τ equal one step of γ = (1 − (1 − αλ/τ)^τ)/λ along the averaged gradient; with
    # y⁺ = y*(x) (what T FedInn calls approximate) this is gradient descent on Φ(x) = ½μ_Φ‖x‖²
    # (μ_Φ = λ + ‖Ā‖², x* = 0), whose squared distance contracts by (1 − γμ_Φ)² per epoch.
    # "Linear convergence" (Fig. 4) at this rate: the semilog slope of ‖x_k − x*‖² vs k is
    # log((1 − γμ_Φ)²).
    mu_phi, k = sp.Symbol("mu_Phi", positive=True), sp.Symbol("k", positive=True)
    contraction = (1 - mu_phi * (1 - (1 - alpha * lam / tau) ** tau) / lam) ** 2
    _add(Bound(
        "fednest.minimax_gd_contraction", THEORY_PAPER,
        _src("§4.3, Fig. 4 (linear convergence)", "[INFERRED]"),
        contraction ** k,
        r"\|x_k - x^*\|^2 / \|x_0 - x^*\|^2", "le", {"k": "epoch"},
        ("§4.3 instance, full participation, constant α, β",),
        ("[INFERRED] the paper states linear convergence without a rate; the rate of exact GD "
         "on Φ with FedOut's effective step is taken as the benchmark",)))
    # FEDNEST-I4, §4.1: LFedNest's mean hypergradient field is mean_i [∇ₓf_i − B_iᵀA_i⁻¹∇_y f_i]
    # (local IHGP) at the FedAvg inner point; writing A_i, B_i, ∇f_i as means plus h-scaled
    # zero-mean deviations, first-order terms average out, so the field differs from ∇Φ by
    # c₂h² + c₃h³ + … (the FedAvg drift of y is O(h²) as well) and its fixed point x̂ has
    # ‖∇Φ(x̂)‖² = O(h⁴).
    c2, c3 = sp.Symbol("c_2", positive=True), sp.Symbol("c_3", positive=True)
    _add(Bound(
        "fednest.lfednest_bias", THEORY_PAPER,
        _src("§4.1 (LFedNest degrades under heterogeneity)", "[INFERRED]"),
        (c2 * h ** 2 + c3 * h ** 3) ** 2, r"\|\nabla\Phi(\hat x_{LFedNest})\|^2", "O",
        {"h": "client heterogeneity"}, ("full participation", "N large (Neumann bias negligible)"),
        ("[INFERRED] the paper states only the degradation; the exponent is a second-order "
         "expansion in the client spread",)))
    return out
