"""Gao 2022, Thms 1 and 2 inside their own step conditions on heterogeneous devices (Gao, arXiv
preprint 2022, arXiv:2204.13299, Thm 1 for LocalBSGM, Thm 2 for LocalBSGVRM: the average
``A_T = (1/T)Σ_t ‖∇Φ(x̄_t)‖² + L̃²‖ȳ_t − y*(x̄_t)‖²`` is bounded for every ``T`` by an explicit
right-hand side ``B(T)``).

**Why a limit.**  ``gao.localbsgm_heterogeneous_floor`` runs Cor 1's schedule with practical
step constants: Thm 1's ``ρ₁ ≤ O(1/κ⁵)`` would put one point at 10⁸–10⁹ iterations (GAO-R7).
Here nothing is left: ``α = β = 1``, ``p = 2``, ``θ = 0.8/L₁``, ``Q = 80``, ``ρ₂`` and ``ρ₁``
at Thm 1's limits (``theorem1_limits``) and ``η`` below its cap.  With exact oracles
LocalBSGM is an affine iteration: one period maps the devices' common state
``s = (x̄, ȳ, ū, v̄)`` (they agree after each averaging) to ``M̄s + c̄``.  When the spectral
radius of ``M̄`` is below 1, ``s_t`` converges to the fixed point ``s*`` and the Cesàro average
``A_T`` to ``A_∞``, the mean of ``A`` over the periodic orbit from ``s*``, computed here in
closed form.  Started at ``x*``, ``y*(x*)`` with exact oracles (``σ = 0``), ``B(T)`` tends to
``B_∞ = 4Δ_Q² + 24p²η²(ρ₁² + ρ₂²)[…] + 24p⁴η⁴(ρ₁² + ρ₂²)[…]`` (its ``1/T`` terms vanish).
``A_∞ > B_∞`` means that Thm 1's inequality fails for every ``T`` beyond some ``T₀``.

**Conservative constants.**  Every constant in ``B_∞`` is as large as a reading allows:
``L̂ = L̃ = L₁`` (GAO-R1), Gao's ``Δ_Q``, ``δ²`` an upper bound over the whole domain
(``‖x‖, ‖y‖ ≤ r``, GAO-R8) of A4's two spreads (``∇̂Φ^{(k)}`` and both blocks of ``∇g^{(k)}``),
and ``G``, which Gao never defines, the largest of ``L₀`` and upper bounds over the domain of
``‖∇f^{(k)}‖`` and ``‖∇̂Φ^{(k)}‖``: larger constants only make ``B_∞`` larger.

The period map is built here from the instance's exact derivatives (not from the library's
LocalBSGM); a test checks it against the library's run step by step.

**Thm 2 (LocalBSGVRM).**  Its right-hand side tends to ``B_∞ = 4Δ_Q²`` as ``T → ∞`` (sympy,
``gao.thm2_limit``): every other term carries ``p/T``, ``(KT)^{−2/3}`` or
``(KT)^{−2/3}ln(T + 1)``, whatever ``K``, ``p``, ``σ``, ``δ`` and the steps.  With exact
oracles and same-sample pairs, the device mean of eq. (3.8)'s tracking errors ``u − ∇̂Φ^{(k)}``,
``v − ∇_y g^{(k)}`` contracts by ``1 − αη_t²`` per step (``Σ_t αη_t² = ∞`` at Thm 2's
``η_t ∝ t^{−1/3}``) and the local drift within a period is ``O(pη_t) → 0``, so ``(x̄_t, ȳ_t)`` is
an Euler scheme with steps ``ρη_t → 0``, ``Σ_t η_t = ∞``, of the linear ODE
``ẋ = −ρ₁(1/K)Σ_k∇̂Φ^{(k)}(x, y)``, ``ẏ = −ρ₂∇_y g(x, y)`` plus vanishing perturbations, and
converges to its equilibrium ``(x̃, y*(x̃))`` when the ODE's matrix has eigenvalues of positive
real part (checked at Thm 2's ``ρ``: ``limit_ode_rate``).  Hence ``A_T → A_∞ = ‖∇Φ(x̃)‖²``, the
floor of :func:`bilevel_theory.gao.biased_stationary_point`, and the bound fails for every
``T`` beyond some ``T₀`` where ``A_∞ > 4Δ_Q²``.  A test runs the library's LocalBSGVRM and
watches it converge to ``x̃``.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from bilevel_theory import rates
from bilevel_theory.gao import (
    biased_stationary_point,
    exact_series,
    gao_constants,
    theorem1_limits,
    theorem2_eta,
    theorem2_limits,
    theorem2_momentum,
    truncation_bias_bound,
)

from ...claim import Condition, Mutant
from ...kit import PaperClaims, law, lower_level_conditions, per_budget, per_replicate
from .common import HETEROGENEITY, heterogeneous, shared_hessians

P_ = PaperClaims("gao")

ALPHA = BETA = 1.0       # Cor 1's reference α = β = 1 (the ε-sweeps' schedule)
PERIOD = 2               # p > 1, the smallest
THETA_L1 = 0.8           # θ = 0.8/L₁ < 1/L₁
NEUMANN = 80             # Q: 4Δ_Q² ≈ 4·10⁻¹⁸ on the instance, far below the floor
#: η from where the bound holds (1e-3) down to where it fails by 10³; below 10⁻⁵ the fixed point's
#: solve loses digits (1 − spectral radius ≈ 6·10⁻¹⁰ at η = 10⁻⁶)
ETAS = per_budget((1e-3, 1e-4, 1e-5), (1e-3, 3e-4, 1e-4, 3e-5, 1e-5),
                  (1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5))
ETA_FIXED = 1e-5         # η of the Q- and h-sweeps: the η grid's smallest point
#: Q of the Q-sweeps (Thms 1 and 2): from where 4Δ_Q² is far above the floor to far below it
QS = per_budget((4, 8, 16, 32, 64), (4, 8, 12, 16, 24, 32, 48, 64),
                (2, 4, 8, 12, 16, 20, 24, 32, 48, 64, 80))
#: h of the heterogeneity sweeps (Thms 1 and 2), at Q = 80: the devices' spread
HS = per_budget((0.1, 0.3, 1.0), (0.05, 0.1, 0.2, 0.4, 0.7, 1.0),
                (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0, 1.5))


def hyperparameters(problem, eta: float, neumann_steps: int = NEUMANN,
                    period: int = PERIOD) -> dict:
    """Thm 1's admissible hyperparameters at step ``η``: ``ρ₂`` at its limit, ``ρ₁`` at its
    limit given ``ρ₂`` (``theorem1_limits``), ``α = β = 1``, ``p = period`` (2), ``θ =
    0.8/L₁``, ``Q = neumann_steps`` (80); ``eta_max``: Thm 1's cap on ``η`` at that ``p``."""
    period = int(period)
    rho2 = theorem1_limits(problem, ALPHA, BETA, period, 1.0)["rho2_max"]
    lim = theorem1_limits(problem, ALPHA, BETA, period, rho2)
    return dict(alpha=ALPHA, beta=BETA, period=period, eta=float(eta), rho1=lim["rho1_max"],
                rho2=rho2, theta=THETA_L1 / gao_constants(problem)["L1"],
                neumann_steps=int(neumann_steps), eta_max=lim["eta_max"])


def _affine(f, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(M, c)`` with ``f(z) = M z + c`` for an affine ``f`` on ``ℝⁿ`` batched over leading
    axes (probed at ``0`` and the unit vectors)."""
    probes = f(np.vstack([np.zeros(n), np.eye(n)]))
    return (probes[1:] - probes[0]).T, probes[0]


def _estimates(h, idx, x, y, hp: dict):
    """Every device's noise-free estimator ``∇̂Φ^{(k)}(x, y)`` (eq. 3.2, at θ, Q of ``hp``)."""
    w = exact_series(h, idx, h.exact_grad_y_f(idx, x, y), hp["theta"], hp["neumann_steps"])
    return h.exact_grad_x_f(idx, x, y) - h.exact_jvp_xy_g(idx, w)


def _local_step(problem, hp: dict):
    """One noise-free local step of LocalBSGM (Alg. 1, after ``t = 0``) on every device:
    ``z = (x, y, u, v)`` of shape ``(R, K, 2(d_x + d_y))`` → the same."""
    h = problem.host
    dx, dy = h.dim_x, h.dim_y
    a, b = hp["alpha"] * hp["eta"], hp["beta"] * hp["eta"]

    def step(z):
        x, y = z[..., :dx], z[..., dx:dx + dy]
        u, v = z[..., dx + dy:2 * dx + dy], z[..., 2 * dx + dy:]
        idx = np.broadcast_to(np.arange(h.clients), z.shape[:-1])
        u = (1 - a) * u + a * _estimates(h, idx, x, y, hp)
        v = (1 - b) * v + b * h.exact_grad_y_g(idx, x, y)
        return np.concatenate([x - hp["rho1"] * hp["eta"] * u,
                               y - hp["rho2"] * hp["eta"] * v, u, v], axis=-1)
    return step


def period_orbit(problem, hp: dict) -> dict:
    """The period map's fixed point ``s* = (x̄, ȳ, ū, v̄)``, its spectral radius and the
    device-averaged states ``(x̄_j, ȳ_j)``, ``j = 0…p−1``, of the periodic orbit from ``s*``."""
    h = problem.host
    K, n = h.clients, 2 * (h.dim_x + h.dim_y)
    step = _local_step(problem, hp)

    def period(s):  # common state → p local steps on every device → average
        z = np.broadcast_to(s[:, None, :], (s.shape[0], K, n))
        for _ in range(hp["period"]):
            z = step(z)
        return z.mean(axis=1)
    M, c = _affine(period, n)
    s_star = np.linalg.solve(np.eye(n) - M, c)
    z = np.broadcast_to(s_star[None, None, :], (1, K, n))
    orbit = []
    for _ in range(hp["period"]):
        orbit.append(z.mean(axis=1)[0])
        z = step(z)
    return {"fixed_point": s_star, "radius": float(np.abs(np.linalg.eigvals(M)).max()),
            "orbit": np.array(orbit)}


def limit_average(problem, hp: dict) -> tuple[float, float]:
    """``(A_∞, spectral radius)``: the Cesàro limit of Thm 1's left-hand side (the mean of
    ``‖∇Φ(x̄)‖² + L̃²‖ȳ − y*(x̄)‖²`` over the periodic orbit from the fixed point)."""
    h = problem.host
    o = period_orbit(problem, hp)
    x, y = o["orbit"][:, :h.dim_x], o["orbit"][:, h.dim_x:h.dim_x + h.dim_y]
    Lt = gao_constants(problem)["L_tilde"]
    a = (np.asarray(h.hypergradient(x)) ** 2).sum(-1) + Lt ** 2 * (
        (y - np.asarray(h.y_star(x))) ** 2).sum(-1)
    return float(a.mean()), o["radius"]


def _device_fields(problem) -> tuple[np.ndarray, np.ndarray, int]:
    """Per device, the affine maps ``z = (x, y) ↦ (∇̂Φ^{(k)}, ∇_x f^{(k)}, ∇_y f^{(k)},
    ∇_x g^{(k)}, ∇_y g^{(k)})`` (at θ, Q of :func:`hyperparameters`): ``(D, d)`` with
    ``D`` of shape ``(K, m, n)`` and ``d`` of ``(K, m)``, and ``n = d_x + d_y``."""
    h = problem.host
    dx, dy, K = h.dim_x, h.dim_y, h.clients
    n = dx + dy
    hp = hyperparameters(problem, 1.0)

    def fields(zs):
        zk = np.broadcast_to(zs[:, None, :], (zs.shape[0], K, n))
        idx = np.broadcast_to(np.arange(K), zk.shape[:-1])
        x, y = zk[..., :dx], zk[..., dx:]
        out = np.concatenate([_estimates(h, idx, x, y, hp), h.exact_grad_x_f(idx, x, y),
                              h.exact_grad_y_f(idx, x, y),
                              h.exact_grad_x_g(idx, x, y), h.exact_grad_y_g(idx, x, y)], -1)
        return out.reshape(zs.shape[0], -1)
    M, c = _affine(fields, n)
    m = c.size // K
    return M.reshape(K, m, n), c.reshape(K, m), n


def _sup_norm(D: np.ndarray, d: np.ndarray, radius: float) -> np.ndarray:
    """Per device, an upper bound of ``‖D z + d‖`` on ``‖x‖, ‖y‖ ≤ radius``:
    ``‖D‖₂√2·radius + ‖d‖``."""
    return np.linalg.norm(D, ord=2, axis=(1, 2)) * math.sqrt(2.0) * radius + np.linalg.norm(
        d, axis=1)


@functools.cache
def delta2_bound(problem) -> float:
    """An upper bound of A4's ``δ²`` over the domain ``‖x‖, ‖y‖ ≤ r`` (GAO-R8): both spreads,
    ``(1/K)Σ_k‖∇̂Φ^{(k)} − mean‖²`` (at θ, Q of :func:`hyperparameters`) and
    ``(1/K)Σ_k‖∇g^{(k)} − ∇g‖²`` (both blocks of ``∇g``), are ``(1/K)Σ_k‖D_k z + d_k‖²`` in
    ``z = (x, y)``, bounded by ``(1/K)Σ_k(‖D_k‖₂√2 r + ‖d_k‖)²``."""
    D, d, n = _device_fields(problem)
    dx = problem.dim_x
    D, d = D - D.mean(axis=0), d - d.mean(axis=0)  # the spreads about the device mean
    parts = (slice(0, dx), slice(dx + n, dx + 2 * n))  # ∇̂Φ^{(k)}; ∇g^{(k)} = (∇_x g, ∇_y g)
    return max(float(np.mean(_sup_norm(D[:, p], d[:, p], problem.radius) ** 2)) for p in parts)


@functools.cache
def gradient_bound(problem) -> float:
    """``G`` of Thm 1, which Gao never defines (GAO-R1 reads ``G = L₀``): here the largest of
    the readings, ``L₀`` and upper bounds over the domain of ``‖∇f^{(k)}‖`` and of the
    surrogate ``‖∇̂Φ^{(k)}‖``, so that ``B_∞`` is as large as any reading makes it."""
    D, d, n = _device_fields(problem)
    dx, r = problem.dim_x, problem.radius
    return max(gao_constants(problem)["G"], float(_sup_norm(D[:, :dx], d[:, :dx], r).max()),
               float(_sup_norm(D[:, dx:dx + n], d[:, dx:dx + n], r).max()))


def limit_bound(problem, hp: dict, sigma: float = 0.0, T: float | None = None) -> float:
    """``B_∞``: Thm 1's right-hand side as ``T → ∞`` (the registered ``gao.thm1_limit``, sympy's
    limit of ``gao.thm1``) with ``σ = sigma`` (0: exact oracles) and the start at ``x*``,
    ``y*(x*)``: ``4Δ_Q²``, the noise terms in ``ησ²/K`` and the four ``p``-terms, with ``δ²`` =
    :func:`delta2_bound` and ``G`` = :func:`gradient_bound`.  ``T``: the whole right-hand side
    ``B(T)`` (``gao.thm1``) from that start instead, whose ``Φ(x₀) − Φ_*`` and
    ``‖ȳ₀ − y*(x̄₀)‖²`` are 0."""
    g = gao_constants(problem)
    bound, start = ("gao.thm1_limit", {}) if T is None else (
        "gao.thm1", dict(T=float(T), Delta=0.0, D_0=0.0))
    return rates.BOUNDS[bound].at(
        **start, sigma=float(sigma), alpha=hp["alpha"], beta=hp["beta"], eta=hp["eta"], p=hp["period"],
        rho_1=hp["rho1"], rho_2=hp["rho2"], L_hat=g["L_hat"], L_tilde=g["L_tilde"],
        L_1=g["L1"], mu=g["mu"], G=gradient_bound(problem),
        delta=math.sqrt(delta2_bound(problem)), K=problem.clients,
        Delta_Q=truncation_bias_bound(problem, hp["theta"], hp["neumann_steps"]))


def _sweep_instance(variable: str, value, mutant, variables: tuple[str, ...]):
    """``(problem, Q)`` at sweep value ``value`` of ``variable`` (one of ``variables``): the
    heterogeneity ``h`` (else 1) picks :func:`heterogeneous` (``mutant="shared_hessians"``:
    :func:`shared_hessians`), the truncation ``Q`` is the value where ``variable == "Q"``
    (else :data:`NEUMANN`).  Both theorems' sweeps start here."""
    if variable not in variables:
        raise ValueError(f"`variable` must be one of {list(variables)}, got {variable!r}")
    P = sweep_instance(mutant, float(value) if variable == "h" else HETEROGENEITY)
    return P, int(value) if variable == "Q" else NEUMANN


def sweep_instance(mutant=None, heterogeneity: float = HETEROGENEITY):
    """:func:`heterogeneous` at ``heterogeneity`` (``mutant="shared_hessians"``:
    :func:`shared_hessians`), the instance every Thm 1/2 sweep starts from."""
    if mutant not in (None, "shared_hessians"):
        raise ValueError(f"`mutant` must be None or 'shared_hessians', got {mutant!r}")
    maker = shared_hessians if mutant == "shared_hessians" else heterogeneous
    return maker(heterogeneity=heterogeneity)


def _point(variable: str, value, mutant=None):
    """``(problem, hyperparameters)`` of Thm 1 at sweep value ``value`` of ``variable``:
    ``"eta"`` (Q = 80, h = 1), ``"Q"`` or ``"h"`` (the other two fixed, η =
    :data:`ETA_FIXED`; :func:`_sweep_instance`)."""
    P, Q = _sweep_instance(variable, value, mutant, ("eta", "Q", "h"))
    return P, hyperparameters(P, float(value) if variable == "eta" else ETA_FIXED, Q)


def localbsgm_limit(value, replicates, seed, backend="numpy", *, variable="eta", mutant=None):
    """``A_∞`` (``value``) against ``B_∞`` (``bound``) at Thm 1's admissible hyperparameters
    at sweep value ``value`` of ``variable`` (:func:`_point`: the step ``η``, the truncation
    ``Q`` or the heterogeneity ``h``) on :func:`heterogeneous` (mutant ``shared_hessians``: on
    :func:`shared_hessians`).  Closed form: every replicate is the same number."""
    P, hp = _point(variable, value, mutant)
    value, radius = limit_average(P, hp)
    _, floor = biased_stationary_point(P, hp["theta"], hp["neumann_steps"])
    return {"value": per_replicate(value, replicates),
            "bound": per_replicate(limit_bound(P, hp), replicates),
            "floor": per_replicate(floor, replicates),
            "spectral_radius": per_replicate(radius, replicates),
            "diverged": per_replicate(float(radius >= 1.0), replicates)}


def _conditions(variable: str = "eta") -> tuple[Condition, ...]:
    """Thm 1's hypotheses at each point of the ``variable``-sweep (:func:`_point`), all
    inside."""
    return conditions_at(functools.partial(_point, variable))


def conditions_at(point) -> tuple[Condition, ...]:
    """Thm 1's hypotheses at each sweep value ``x``, with ``point(x) = (problem,
    hyperparameters)``."""
    def P(x):
        return point(x)[0]

    def hp(x):
        return point(x)[1]

    def L1(x):
        return gao_constants(P(x))["L1"]

    def reach(x):  # the fixed point and the start lie inside the domain of A1–A4
        p = P(x)
        o = period_orbit(p, hp(x))["orbit"]
        pts = [p.x_star, p.y_star(p.x_star), *o[:, :p.dim_x], *o[:, p.dim_x:p.dim_x + p.dim_y]]
        return max(float(np.linalg.norm(np.asarray(v))) for v in pts)
    return (
        *lower_level_conditions(P, "g^{(k)} μ-strongly convex in y, μ > 0 (Assumption 1)",
                                "∇g^{(k)} L₁-Lipschitz, so ‖∇²_{yy}g^{(k)}‖ ≤ L₁ (Assumption 2)",
                                L1),
        Condition("α, β > 0 (Thm 1)", ALPHA, 0.0, relation=">"),
        Condition("θ < 1/L₁ (Thm 1)", lambda x: hp(x)["theta"] * L1(x), 1.0, relation="<"),
        Condition("p > 1 (Alg. 1, Cor 1)", lambda x: hp(x)["period"], 1, relation=">"),
        Condition("Q > 0 (Sec. 3, eq. 3.2)", lambda x: hp(x)["neumann_steps"], 0, relation=">"),
        Condition("ρ₂ ≤ min{(6L̃²/μ)/(4L̂²/α² + 400L₁²L̃²/(3β²μ²)), 1/(6L₁)} (Thm 1)",
                  lambda x: hp(x)["rho2"],
                  lambda x: theorem1_limits(P(x), ALPHA, BETA, hp(x)["period"],
                                            1.0)["rho2_max"]),
        Condition("ρ₁ ≤ min{3ρ₂μ/(50κL̃), (1/4)/√(4L̂²/α² + 500L₁²L̃²/(3β²μ²))} (Thm 1)",
                  lambda x: hp(x)["rho1"], lambda x: theorem1_limits(
                      P(x), ALPHA, BETA, hp(x)["period"], hp(x)["rho2"])["rho1_max"]),
        Condition("η < min{1/α, 1/β, 1/(2ρ₁L_Φ), 1/(3p(α² + β²)^{1/4}(ρ₁² + ρ₂²)^{1/4}"
                  "L̂^{1/2}), 1} (Thm 1)", lambda x: hp(x)["eta"], lambda x: hp(x)["eta_max"],
                  relation="<"),
        Condition("A1–A4 on the domain ‖x‖, ‖y‖ ≤ r of GAO-R8: the start x*, y*(x*) and the "
                  "limit orbit inside it", reach, lambda x: P(x).radius,
                  note="δ² of A4 is bounded over the whole domain (delta2_bound), G = L₀ "
                       "bounds ‖∇f^{(k)}‖ there"),
    )


_STATEMENT = (r"\frac{1}{T}\sum_{t<T} \|\nabla\Phi(\bar x_t)\|^2 + \tilde L^2\|\bar y_t - "
              r"y^*(\bar x_t)\|^2 \leq B(T)\ \forall T;\quad \lim_T B(T) = 4\Delta_Q^2 + "
              r"\mathcal{O}(p^2\eta^2(\rho_1^2+\rho_2^2))")

_REASON = (
    "Inside every condition of Thm 1 (steps at its limits, η below its cap), exact "
    "LocalBSGM converges to the fixed point of its period map, and the limit of A_T "
    "is about ‖∇Φ(x̃)‖² (x̃: the zero of the device-averaged local estimator, GAO-R3), "
    "whatever the steps. Thm 1's right-hand side tends to 4Δ_Q² plus terms in "
    "p²η²(ρ₁² + ρ₂²) and p⁴η⁴(ρ₁² + ρ₂²), which vanish as η → 0: where the "
    "limit of the left-hand side exceeds that of the right-hand side, the bound "
    "fails for every T beyond some T₀. Mathematical reason: the device average of "
    "eq. (3.1) is not ∇Φ when the Hessians differ, and no term of Thm 1 carries that "
    "bias (δ² enters only multiplied by p²η²).")
_SCHEDULE = (f"LocalBSGM (Alg. 1) with exact oracles on the heterogeneous instance of "
             f"gao.localbsgm_heterogeneous_floor (8 devices, dims 2); α = β = 1, "
             f"p = {PERIOD}, θ = {THETA_L1}/L₁, ρ₂ and ρ₁ at Thm 1's "
             "limits (ρ₁ ≈ 3.6·10⁻⁵, ρ₂ ≈ 5.2·10⁻³), η below its cap (1 here); "
             "value: the T → ∞ limit of Thm 1's left-hand side (period map's fixed "
             "point and orbit, closed form); bound: the T → ∞ limit of its right-hand "
             "side from x*, y*(x*) with σ = 0 and δ² bounded over the domain")
_REPAIR = Mutant("shared_hessians", "every device's ∇²_yy g^{(k)}, ∇²_xy g^{(k)} "
                 "replaced by the devices' mean (gradients still heterogeneous): the "
                 "device average of eq. (3.1) is ∇Φ up to the truncation, the limit is "
                 "x* up to the local drift, and the bound holds at every point",
                 {"mutant": "shared_hessians"}, kind="repair")


# ================================================================ Thm 2 (LocalBSGVRM), T → ∞
VR_PERIOD = 2            # p = S = 2, far below Thm 2's cap at its own ρ (GAO-R5)


def _vr_point(variable: str, value, mutant=None):
    """``(problem, θ, Q)`` of Thm 2 at sweep value ``value`` of ``variable`` (``"Q"`` or
    ``"h"``; :func:`_sweep_instance`), ``θ = 0.8/L₁``."""
    P, Q = _sweep_instance(variable, value, mutant, ("Q", "h"))
    return P, THETA_L1 / gao_constants(P)["L1"], Q


def vr_rhos(problem) -> tuple[float, float]:
    """``(ρ₁, ρ₂) = (ρ₂/(20κ²), μ/19720)``: Thm 2's step constants at the limits that bind on
    these instances (the conditions check them against :func:`theorem2_limits`)."""
    g = gao_constants(problem)
    rho2 = g["mu"] / 19720
    return rho2 / (20 * g["kappa"] ** 2), rho2


def limit_ode_rate(problem, theta: float, neumann_steps: int) -> float:
    """The smallest real part of the eigenvalues of the matrix ``M`` of Thm 2's limit ODE
    ``ż = −(Mz + c)``, ``z = (x, y)``, at Thm 2's ``ρ₁, ρ₂`` (:func:`vr_rhos`): positive
    when ``(x̃, y*(x̃))`` attracts every trajectory (module docstring)."""
    h = problem.host
    dx, K, n = h.dim_x, h.clients, h.dim_x + h.dim_y
    rho1, rho2 = vr_rhos(problem)
    hp = dict(theta=theta, neumann_steps=neumann_steps)

    def field(zs):
        zk = np.broadcast_to(zs[:, None, :], (zs.shape[0], K, n))
        idx = np.broadcast_to(np.arange(K), zk.shape[:-1])
        x, y = zk[..., :dx], zk[..., dx:]
        return np.concatenate([rho1 * _estimates(h, idx, x, y, hp).mean(axis=1),
                               rho2 * h.exact_grad_y_g(idx, x, y).mean(axis=1)], -1)
    M, _ = _affine(field, n)
    return float(np.linalg.eigvals(M).real.min())


def localbsgvrm_limit(value, replicates, seed, backend="numpy", *, variable="Q", mutant=None):
    """``A_∞ = ‖∇Φ(x̃)‖²`` (``value``) against ``B_∞ = 4Δ_Q²`` (``bound``, the registered
    ``gao.thm2_limit`` at Gao's ``Δ_Q``) at sweep value ``value`` of ``variable``: ``Q`` on
    :func:`heterogeneous`, or its heterogeneity ``h`` at ``Q = 80`` (mutant
    ``shared_hessians``: the same on :func:`shared_hessians`).  Closed form: every replicate is
    the same number."""
    P, theta, Q = _vr_point(variable, value, mutant)
    _, floor = biased_stationary_point(P, theta, Q)
    bound = rates.BOUNDS["gao.thm2_limit"].at(Delta_Q=truncation_bias_bound(P, theta, Q))
    rate = limit_ode_rate(P, theta, Q)
    return {"value": per_replicate(floor, replicates),
            "bound": per_replicate(bound, replicates),
            "limit_ode_rate": per_replicate(rate, replicates),
            "diverged": per_replicate(float(rate <= 0.0), replicates)}


def _vr_momentum_weight(problem) -> float:
    """``αη_1²`` at Thm 2's ``α`` and ``η_t`` (``ρ₁`` of :func:`vr_rhos`)."""
    g, K = gao_constants(problem), problem.clients
    eta = theorem2_eta(K, VR_PERIOD, g["L_hat"], vr_rhos(problem)[0], g["L_Phi"])
    return theorem2_momentum(K, VR_PERIOD, g["L_hat"]) * eta(1) ** 2


def _vr_conditions(variable: str) -> tuple[Condition, ...]:
    """Thm 2's hypotheses at each sweep value, all inside."""
    def at(x):
        return _vr_point(variable, x)

    def lim(x):
        return theorem2_limits(at(x)[0])

    def reach(x):  # x*, y*(x*) and the limit x̃, y*(x̃) inside the domain of A1–A4
        P, theta, Q = at(x)
        xt, _ = biased_stationary_point(P, theta, Q)
        pts = [P.x_star, P.y_star(P.x_star), xt, P.y_star(xt)]
        return max(float(np.linalg.norm(np.asarray(v))) for v in pts)
    return (
        *lower_level_conditions(lambda x: at(x)[0],
                                "g^{(k)} μ-strongly convex in y, μ > 0 (Assumption 1)",
                                "∇g^{(k)} L₁-Lipschitz, so ‖∇²_{yy}g^{(k)}‖ ≤ L₁ (Assumption 2)",
                                lambda x: gao_constants(at(x)[0])["L1"]),
        Condition("θ < 1/L₁ (Thm 2)", lambda x: at(x)[1] * gao_constants(at(x)[0])["L1"], 1.0,
                  relation="<"),
        Condition("ρ₂ ≤ min{μ/19720, 1/(6L₁), 1} (Thm 2)", lambda x: vr_rhos(at(x)[0])[1],
                  lambda x: lim(x)["rho2_max"], note="ρ₂ = μ/19720"),
        Condition("ρ₁ ≤ min{ρ₂/(20κ²), 1/(1540L̂/μ), 1} (Thm 2)",
                  lambda x: vr_rhos(at(x)[0])[0], lambda x: lim(x)["rho1_max"],
                  note="ρ₁ = ρ₂/(20κ²)"),
        Condition("p ≤ 1/√(288(2 + 4L̂²/K)(ρ₁² + ρ₂²)) (Thm 2), S = p", VR_PERIOD,
                  lambda x: lim(x)["period_max"]),
        Condition("Q > 0 (Sec. 3, eq. 3.2)", lambda x: at(x)[2], 0, relation=">"),
        Condition("αη_t² < 1, eq. (3.8)'s weights in (0, 1), at Thm 2's α = β = L̂²/(3pK²) "
                  "+ L̂²/K and η_t = (K^{2/3}/L̂)/(w_t + t)^{1/3} (largest at t = 1)",
                  lambda x: _vr_momentum_weight(at(x)[0]), 1.0, relation="<",
                  note="the limit uses only η_t → 0, Σ_t η_t = ∞ and Σ_t αη_t² = ∞, which "
                       "η_t ∝ t^{-1/3} gives"),
        Condition("the limit ODE's matrix at Thm 2's ρ has eigenvalues of positive real part",
                  lambda x: limit_ode_rate(*at(x)), 0.0, relation=">"),
        Condition("A1–A4 on the domain ‖x‖, ‖y‖ ≤ r of GAO-R8: the start x*, y*(x*) and the "
                  "limit x̃, y*(x̃) inside it", reach, lambda x: at(x)[0].radius,
                  note="Δ_Q's L₀ bounds ‖∇f^{(k)}‖ there"),
    )


_VR_STATEMENT = (r"\frac{1}{T}\sum_{t\leq T} \|\nabla\Phi(\bar x_t)\|^2 + \tilde L^2\|\bar y_t"
                 r" - y^*(\bar x_t)\|^2 \leq \left(\frac{p}{T} + \frac{1}{K^{2/3}T^{2/3}}\right)"
                 r"\left[\dots + 4\Delta_Q^2K^{2/3}(T+1)^{2/3} + \dots\right]\ \forall T;\quad"
                 r" \lim_T B(T) = 4\Delta_Q^2")
_VR_REASON = (
    "Inside every condition of Thm 2 (ρ₂ = μ/19720 and ρ₁ = ρ₂/(20κ²) at their limits, p = S "
    "= 2 below its cap, Thm 2's α, β and η_t), exact LocalBSGVRM converges to x̃, the zero of "
    "the device-averaged local estimator (GAO-R3), and ȳ to y*(x̃): the tracking errors of "
    "eq. (3.8) and the local drift vanish as η_t → 0, and the averaged iterates follow a "
    "stable linear ODE (its rate is reported). So the left-hand side tends to ‖∇Φ(x̃)‖². The "
    "right-hand side tends to 4Δ_Q² (sympy: every other term carries p/T, (KT)^{-2/3} or "
    "(KT)^{-2/3}ln(T + 1)). Where ‖∇Φ(x̃)‖² > 4Δ_Q² the bound fails for every T beyond some "
    "T₀. Mathematical reason: the device average of eq. (3.1) is not ∇Φ when the Hessians "
    "differ, and in Thm 2 δ² enters only multiplied by ln(T + 1)·(p/T + (KT)^{-2/3}), which "
    "vanishes.")
_VR_SCHEDULE = ("LocalBSGVRM (Alg. 2) with exact oracles on the heterogeneous instance of "
                "gao.localbsgvrm_heterogeneous_floor (8 devices, dims 2), θ = 0.8/L₁, p = S = "
                f"{VR_PERIOD}, ρ₂ and ρ₁ at Thm 2's limits (ρ₂ ≈ 5.1·10⁻⁵, ρ₁ ≈ 2.9·10⁻⁷), "
                "Thm 2's α, β, η_t; value: the T → ∞ limit of Thm 2's left-hand side "
                "(‖∇Φ(x̃)‖², closed form); bound: the T → ∞ limit of its right-hand side, "
                "4Δ_Q² with Gao's Δ_Q")
_VR_REPAIR = Mutant("shared_hessians", "every device's ∇²_yy g^{(k)}, ∇²_xy g^{(k)} replaced by "
                    "the devices' mean (gradients still heterogeneous): the device average of "
                    "eq. (3.1) is the truncated ∇̂Φ, so ‖∇Φ(x̃)‖ ≤ Δ_Q and the bound holds at "
                    "every point", {"mutant": "shared_hessians"}, kind="repair")


# ================================================================ the claims
#: What differs between the two theorems' claims (statement, reason, schedule, repair, measure,
#: registered limit bound, conditions); the sweeps are shared.
_THEOREMS = {
    1: dict(source="Thm 1 (the bound for every T, inside its step conditions; heterogeneous "
                   "devices under A4)",
            statement=_STATEMENT, quantity=r"\lim_T \frac{1}{T}\sum_{t<T} A_t", reason=_REASON,
            schedule=_SCHEDULE, repair=_REPAIR, measure=localbsgm_limit,
            bound="gao.thm1_limit", conditions=_conditions),
    2: dict(source="Thm 2, eq. (3.9) (the bound for every T, inside its step conditions; "
                   "heterogeneous devices under A4)",
            statement=_VR_STATEMENT, quantity=r"\lim_T \frac{1}{T}\sum_{t\leq T} A_t",
            reason=_VR_REASON, schedule=_VR_SCHEDULE, repair=_VR_REPAIR,
            measure=localbsgvrm_limit, bound="gao.thm2_limit", conditions=_vr_conditions),
}


def _limit_claim(name: str, theorem: int, variable: str, symbol: str, grid, what: str):
    """A ``bounded_by`` finding on Thm ``theorem``'s T → ∞ limits, swept in ``variable``."""
    t = _THEOREMS[theorem]
    return P_.claim(
        name, role="finding", source=P_.cite(t["source"]), statement=t["statement"],
        kind="bounded_by", variable=symbol, quantity=t["quantity"],
        measure=functools.partial(t["measure"], variable=variable),
        scale="semilog" if variable == "Q" else "loglog", grid=grid,
        replicates=per_budget(2, 2, 2), law=law(rates.law_for(t["bound"], "bound")),
        tolerance=0.0, expected="violated", reason=t["reason"],
        schedule=f"{t['schedule']}; {what}", mutants=(t["repair"],),
        conditions=t["conditions"](variable), touches=("GAO-R1", "GAO-R3", "GAO-R7", "GAO-R8"))


CLAIMS = [
    _limit_claim("localbsgm_heterogeneous_limit", 1, "eta", r"\eta", ETAS,
                 f"h = 1, Q = {NEUMANN}, η swept"),
    _limit_claim("localbsgm_limit_vs_Q", 1, "Q", "Q", QS,
                 f"h = 1, η = {ETA_FIXED:g} (the η-sweep's smallest point), Q swept"),
    _limit_claim("localbsgm_limit_vs_heterogeneity", 1, "h", "h", HS,
                 f"Q = {NEUMANN}, η = {ETA_FIXED:g}, the devices' heterogeneity h swept (the same "
                 "draws, the deviations scaled): the left-hand limit grows about as h⁴, the "
                 "right-hand one only through δ²'s p²η² factor"),
    _limit_claim("localbsgvrm_limit_vs_Q", 2, "Q", "Q", QS,
                 "h = 1, Q swept (4Δ_Q² from above the limit to far below it)"),
    _limit_claim("localbsgvrm_limit_vs_heterogeneity", 2, "h", "h", HS,
                 f"Q = {NEUMANN}, the devices' heterogeneity h swept (the same draws, the "
                 "deviations scaled)"),
]
