"""Gao 2022, Thm 1 in the variables that :mod:`.limit`'s sweeps hold fixed: the iterations
``T``, the oracle noise ``σ``, the devices ``K`` and the period ``p`` (Gao, arXiv preprint 2022,
arXiv:2204.13299, Thm 1 for LocalBSGM).

Same instance, steps and conditions as :mod:`.limit` (``ρ₂``, ``ρ₁`` at Thm 1's limits,
``α = β = 1``, ``θ = 0.8/L₁``, ``Q = 80``, ``η = 10⁻⁵``), and everything in closed form, since
LocalBSGM on a quadratic is an affine iteration.  Each device's local step is
``z_k ↦ F_k z_k + f_k + E_k w_k`` on ``z = (x, y, u, v)``, with ``w_k`` the noise of the device's
``∇ₓf``, ``∇_y f`` and ``∇_y g`` samples (the instance's additive noise, ``E‖w‖² = s²``
per oracle, no Hessian noise: ``∇_y f``'s noise reaches the estimator through the device's
exact series, ``n₁ − ∇²_{xy}g^{(k)}Ĥ^{(k)}n₂``); averaging every ``p`` steps makes the common state
follow ``s ↦ Ms + c + (noise)``.

* **T** (:func:`average_at`): ``A_T`` itself, from the start ``x*``, ``y*(x*)`` with exact
  oracles (the library's first step included), against ``B(T)``, Thm 1's whole right-hand side
  (its ``Φ(x₀) − Φ_*`` and ``‖ȳ₀ − y*(x̄₀)‖²`` are 0 there).  After the first period the common
  state is ``s* + M^{i−1}e₁``, each iteration's ``A_t`` a quadratic of it, so the Cesàro sum
  over ``J`` periods needs ``Σ_{i<J}M^i`` and ``Σ_{i<J}(M^i)ᵀQM^i`` (:func:`power_sums`, binary
  powering: ``log₂J`` products), and ``T`` up to ``10¹²`` costs nothing.
* **σ**, **K** (:func:`noisy_limit`): the limit of ``E A_T`` under the noise.  Its mean part is
  the exact limit (the mean follows the exact iteration); the common state's covariance solves
  the period's Lyapunov equation ``P = MPMᵀ + W``, and each phase adds the noise drawn since the
  last averaging, independent across devices.  ``K`` is swept by tiling the eight devices
  (``tiled_to``: the same global problem, ``x̃``, ``δ²``, ``G`` and constants at every ``K``), so
  only the noise's ``1/K`` moves.
* **p**: :mod:`.limit`'s ``T → ∞`` limits at periods up to 128, ``η`` below Thm 1's cap at each
  (it falls as ``1/p``).

The noise is Rademacher (every coordinate ``±s/√d``), so that Assumption 3's almost-sure
``‖∇g^{(k)} − ∇g^{(k)}(·;ζ)‖² ≤ σ²`` holds, and ``σ`` is read as the largest almost-sure bound
of the run's stochastic quantities, the upper-level estimator's (GAO-R11).  ``E A_T`` depends on
the noise only through its covariance (``A`` is quadratic, the iteration affine), which the
closed form uses.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
from scipy.linalg import solve_discrete_lyapunov

from bilevel_theory import rates
from bilevel_theory.gao import biased_stationary_point, exact_series, gao_constants
from bilevel_theory.problems.oracle import with_noise_distribution

from ...claim import per_budget
from ...kit import law, per_replicate
from . import limit as L

P_ = L.P_

#: T of the T-sweep (iterations, multiples of p): from where B(T) is above A_T to 10¹²
TS = per_budget((1e9, 1e10, 1e11, 1e12), (1e9, 3e9, 1e10, 3e10, 1e11, 3e11, 1e12),
                (3e8, 1e9, 3e9, 1e10, 3e10, 1e11, 3e11, 1e12, 3e12))
#: s of the σ-sweep (the oracles' noise std): from exact-looking runs to where the noise terms
#: dominate Thm 1's limit
NOISES = per_budget((0.25, 1.0, 4.0, 16.0), (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0),
                    (0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0))
#: K of the device sweep (tilings of the eight devices), at s = NOISE_K
DEVICE_COUNTS = per_budget((8, 32, 128, 512), (8, 16, 32, 64, 128, 256, 512),
                           (8, 16, 32, 64, 128, 256, 512, 1024))
NOISE_K = 16.0
#: p of the period sweep
PERIODS = per_budget((2, 8, 32, 128), (2, 4, 8, 16, 32, 64, 128),
                     (2, 4, 8, 16, 32, 64, 128, 256))


# ============================================================================ closed forms
def instance(devices: int = 8, noise: float = 0.0, mutant=None):
    """:func:`.limit.sweep_instance` (mutant ``shared_hessians``: the devices' mean Hessians)
    tiled to ``devices`` devices, with the oracles' noise std ``noise``."""
    P = L.sweep_instance(mutant)
    if int(devices) != P.clients:
        P = P.tiled_to(int(devices))
    if not noise:
        return P
    noisy = replace(P, grad_noise=float(noise), spec={**P.spec, "noise": float(noise)})
    return with_noise_distribution(noisy, "rademacher")


def estimator_noise_map(problem, hp: dict) -> np.ndarray:
    """``D_k = ∇²_{xy}g^{(k)}Ĥ^{(k)}`` per device, ``(K, d_x, d_y)``: the estimator of eq. (3.3)
    is ``∇ₓf − D_k∇_y f``, so its noise is ``n₁ − D_k n₂`` (exact Hessians)."""
    h = problem.host
    K, dy = h.clients, h.dim_y
    idx = np.broadcast_to(np.arange(K), (dy, K))
    unit = np.broadcast_to(np.eye(dy)[:, None, :], (dy, K, dy))
    return np.transpose(h.exact_jvp_xy_g(idx, exact_series(h, idx, unit, hp["theta"],
                                                           hp["neumann_steps"])), (1, 2, 0))


def local_maps(problem, hp: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(F, f, E)``: every device's local step (after ``t = 0``) as ``z_k ↦ F_k z_k + f_k +
    E_k w_k``, shapes ``(K, n, n)``, ``(K, n)``, ``(K, n, d_x + 2d_y)``, ``w_k`` the noise of
    ``∇ₓf``, ``∇_y f`` and ``∇_y g`` (module docstring); ``F``, ``f`` probed from
    :func:`.limit._local_step` (:func:`.limit._affine`), ``E`` from the device's exact series."""
    h = problem.host
    K, dx, dy = h.clients, h.dim_x, h.dim_y
    n = 2 * (dx + dy)
    step = L._local_step(problem, hp)
    M, c = L._affine(lambda z: step(np.broadcast_to(z[:, None, :], (z.shape[0], K, n)))
                     .reshape(z.shape[0], K * n), n)
    F, f = M.reshape(K, n, n), c.reshape(K, n)
    D = estimator_noise_map(problem, hp)
    a, b = hp["alpha"] * hp["eta"], hp["beta"] * hp["eta"]
    du = a * np.concatenate([np.broadcast_to(np.eye(dx), (K, dx, dx)), -D,
                             np.zeros((K, dx, dy))], axis=2)
    dv = b * np.concatenate([np.zeros((K, dy, dx + dy)),
                             np.broadcast_to(np.eye(dy), (K, dy, dy))], axis=2)
    E = np.concatenate([-hp["rho1"] * hp["eta"] * du, -hp["rho2"] * hp["eta"] * dv, du, dv],
                       axis=1)
    return F, f, E


def noise_covariance(problem) -> np.ndarray:
    """``Cov(w_k)``: ``∇ₓf``, ``∇_y f``, ``∇_y g`` samples each with ``E‖noise‖² = s²``, spread
    evenly over the coordinates (``problems.oracle``)."""
    s2, dx, dy = problem.grad_noise ** 2, problem.dim_x, problem.dim_y
    return np.diag(np.r_[np.full(dx, s2 / dx), np.full(2 * dy, s2 / dy)])


def stated_sigma(problem, hp: dict) -> float:
    """Thm 1's ``σ`` (GAO-R11): the largest almost-sure bound on the noise of the run's
    stochastic quantities.  With Rademacher noise (coordinates ``±s/√d``) every gradient
    sample's is ``s``, and the upper-level estimator's ``n₁ − D_k n₂`` is largest at one of the
    ``2^{d_x + d_y}`` sign patterns, at the worst device."""
    if problem.spec.get("noise_distribution") != "rademacher":
        raise ValueError("`problem` must draw Rademacher noise (an almost-sure bound, A3)")
    s, dx, dy = problem.grad_noise, problem.dim_x, problem.dim_y
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=dx + dy)))
    n1, n2 = signs[:, :dx] * s / math.sqrt(dx), signs[:, dx:] * s / math.sqrt(dy)
    est = n1[None] - np.einsum("kab,nb->kna", estimator_noise_map(problem, hp), n2)
    return math.sqrt(max(s ** 2, float((est ** 2).sum(-1).max())))


def lhs_form(problem) -> tuple[np.ndarray, np.ndarray]:
    """``(W, w)`` with ``‖∇Φ(x)‖² + L̃²‖y − y*(x)‖² = ‖W(x, y) + w‖²`` (``∇Φ``, ``y*`` affine)."""
    h = problem.host
    dx, dy = h.dim_x, h.dim_y
    pts = np.vstack([np.zeros(dx), np.eye(dx)])
    grad, ys = np.asarray(h.hypergradient(pts)), np.asarray(h.y_star(pts))
    H, Y = (grad[1:] - grad[0]).T, (ys[1:] - ys[0]).T
    Lt = gao_constants(problem)["L_tilde"]
    W = np.block([[H, np.zeros((dx, dy))], [-Lt * Y, Lt * np.eye(dy)]])
    return W, np.r_[grad[0], -Lt * ys[0]]


def _phases(F: np.ndarray, p: int) -> list[np.ndarray]:
    """``[F^j for j = 0…p]``, per device."""
    out = [np.broadcast_to(np.eye(F.shape[-1]), F.shape)]
    for _ in range(p):
        out.append(F @ out[-1])
    return out


def power_sums(M: np.ndarray, Q: np.ndarray, J: int) -> tuple[np.ndarray, np.ndarray]:
    """``(Σ_{i<J} M^i, Σ_{i<J} (M^i)ᵀ Q M^i)`` by binary powering (``log₂J`` products)."""
    n = M.shape[0]
    S_acc, Q_acc, P_acc = np.zeros((n, n)), np.zeros((n, n)), np.eye(n)
    S_b, Q_b, P_b = np.eye(n), Q.copy(), M.copy()  # the block of 2^b terms
    J = int(J)
    while J:
        if J & 1:
            S_acc = S_acc + P_acc @ S_b
            Q_acc = Q_acc + P_acc.T @ Q_b @ P_acc
            P_acc = P_acc @ P_b
        J >>= 1
        if J:
            S_b = S_b + P_b @ S_b
            Q_b = Q_b + P_b.T @ Q_b @ P_b
            P_b = P_b @ P_b
    return S_acc, Q_acc


def average_at(problem, hp: dict, T: int) -> float:
    """``A_T = (1/T)Σ_{t<T} ‖∇Φ(x̄_t)‖² + L̃²‖ȳ_t − y*(x̄_t)‖²`` of exact LocalBSGM from
    ``x*``, ``y*(x*)`` (``T`` a multiple of ``p``), in closed form (module docstring)."""
    h, p = problem.host, hp["period"]
    T = int(T)
    if T <= 0 or T % p:
        raise ValueError(f"`T` must be a positive multiple of p = {p}, got {T}")
    K, dx, dy = h.clients, h.dim_x, h.dim_y
    F, f, _ = local_maps(problem, hp)
    W, w = lhs_form(problem)
    Fj = _phases(F, p)
    # the first period from the true start: u, v at the devices' first samples (t = 0)
    x0 = np.asarray(problem.x_star, float)
    y0 = np.asarray(problem.y_star(x0), float)
    idx = np.arange(K)
    xk, yk = np.broadcast_to(x0, (K, dx)), np.broadcast_to(y0, (K, dy))
    z = np.concatenate([xk, yk, L._estimates(h, idx, xk, yk, hp),
                        h.exact_grad_y_g(idx, xk, yk)], axis=-1)
    total = 0.0
    for _ in range(p):
        total += float((((W @ z.mean(0)[:dx + dy]) + w) ** 2).sum())
        z = np.einsum("kab,kb->ka", F, z) + f
    s1 = z.mean(0)
    J = T // p
    if J > 1:
        orbit = L.period_orbit(problem, hp)
        M = Fj[p].mean(0)
        G = [W @ Fj[j].mean(0)[:dx + dy] for j in range(p)]
        r = [W @ orbit["orbit"][j][:dx + dy] + w for j in range(p)]
        e1 = s1 - orbit["fixed_point"]
        S, Qs = power_sums(M, sum(g.T @ g for g in G), J - 1)
        gvec = sum(g.T @ rj for g, rj in zip(G, r, strict=True))
        total += ((J - 1) * sum(float(rj @ rj) for rj in r) + 2.0 * float(gvec @ S @ e1)
                  + float(e1 @ Qs @ e1))
    return total / T


def noisy_limit(problem, hp: dict) -> tuple[float, float]:
    """``(lim_T E A_T, its noise part)`` of LocalBSGM under the instance's oracle noise: the
    exact limit (:func:`.limit.limit_average`) plus, at each phase ``j`` of the period, the
    trace of ``WᵀW`` with the covariance of ``(x̄, ȳ)``: ``L_jPL_jᵀ + (1/K²)Σ_k N_{k,j}``, where
    ``P = MPMᵀ + (1/K²)Σ_k N_{k,p}`` is the common state's and ``N_{k,j}`` the noise device
    ``k`` draws in ``j`` local steps."""
    p, K = hp["period"], problem.clients
    F, _, E = local_maps(problem, hp)
    W, _ = lhs_form(problem)
    Fj = _phases(F, p)
    inject = E @ noise_covariance(problem) @ np.transpose(E, (0, 2, 1))
    N = [np.zeros_like(inject)]
    for _ in range(p):
        N.append(F @ N[-1] @ np.transpose(F, (0, 2, 1)) + inject)
    P = solve_discrete_lyapunov(Fj[p].mean(0), N[p].sum(0) / K ** 2)
    WtW, m = W.T @ W, W.shape[0]
    noise = 0.0
    for j in range(p):
        Lj = Fj[j].mean(0)
        C = Lj @ P @ Lj.T + N[j].sum(0) / K ** 2
        noise += float(np.trace(WtW @ C[:m, :m])) / p
    exact, _ = L.limit_average(problem, hp)
    return exact + noise, noise


# ============================================================================ measures
def point(mutant=None, devices: int = 8, noise: float = 0.0, period: int = L.PERIOD):
    """``(problem, hyperparameters)`` of a sweep point: :func:`instance` and Thm 1's
    admissible steps at ``η = 10⁻⁵`` and period ``period`` (:func:`.limit.hyperparameters`)."""
    P = instance(devices, noise, mutant)
    return P, L.hyperparameters(P, L.ETA_FIXED, period=int(period))


def _out(value: float, bound: float, problem, hp, replicates: int, **extra) -> dict:
    _, floor = biased_stationary_point(problem, hp["theta"], hp["neumann_steps"])
    return {"value": per_replicate(value, replicates), "bound": per_replicate(bound, replicates),
            "floor": per_replicate(floor, replicates),
            **{k: per_replicate(v, replicates) for k, v in extra.items()}}


def bound_vs_T(T, replicates, seed, backend="numpy", *, mutant=None) -> dict:
    """``A_T`` against ``B(T)`` at ``η = 10⁻⁵``, exact oracles, eight devices, ``p = 2``."""
    P, hp = point(mutant)
    return _out(average_at(P, hp, int(T)), L.limit_bound(P, hp, T=float(T)), P, hp,
                replicates, limit=L.limit_average(P, hp)[0])


def limit_vs_noise(noise, replicates, seed, backend="numpy", *, devices: int = 8,
                   mutant=None) -> dict:
    """``lim E A_T`` against ``B_∞(σ)`` under the oracles' noise std ``noise``."""
    P, hp = point(mutant, devices, noise)
    value, part = noisy_limit(P, hp)
    sigma = stated_sigma(P, hp)
    return _out(value, L.limit_bound(P, hp, sigma=sigma), P, hp, replicates,
                noise_part=part, sigma=sigma)


def limit_vs_devices(devices, replicates, seed, backend="numpy", *, mutant=None) -> dict:
    """:func:`limit_vs_noise` at ``s = NOISE_K`` on ``devices`` tiled devices."""
    return limit_vs_noise(NOISE_K, replicates, seed, backend, devices=int(devices),
                          mutant=mutant)


def limit_vs_period(period, replicates, seed, backend="numpy", *, mutant=None) -> dict:
    """:mod:`.limit`'s ``A_∞`` against ``B_∞`` at period ``p = period``, exact oracles."""
    P, hp = point(mutant, period=period)
    value, radius = L.limit_average(P, hp)
    return _out(value, L.limit_bound(P, hp), P, hp, replicates, spectral_radius=radius,
                diverged=float(radius >= 1.0))


# ============================================================================ claims
_BASE = (f"LocalBSGM (Alg. 1) in closed form on the heterogeneous instance of "
         f"gao.localbsgm_heterogeneous_limit (8 devices, dims 2); α = β = 1, θ = "
         f"{L.THETA_L1}/L₁, Q = {L.NEUMANN}, ρ₂ and ρ₁ at Thm 1's limits (ρ₁ ≈ 3.6·10⁻⁵, "
         f"ρ₂ ≈ 5.2·10⁻³), η = {L.ETA_FIXED:g} below its cap")
_NOISY = ("; additive Rademacher noise (coordinates ±s/√d, so ‖noise‖ = s almost surely: "
          "Assumption 3) on every ∇ₓf, ∇_y f, ∇_y g sample (exact Hessians), σ the largest "
          "almost-sure bound, the upper-level estimator's (GAO-R11); value: lim E A_T (exact limit plus the stationary noise part, "
          "Lyapunov equation of the period map); bound: Thm 1's T → ∞ right-hand side at that "
          "σ from x*, y*(x*)")
_NOISE_WHY = (
    "The noise terms of Thm 1's limit, (4α + 500βL̃²/(3μ²))ησ²/K and σ² inside the p-terms, "
    "bound the noise's share of the left-hand side with room to spare: it enters x̄ and ȳ "
    "through the steps ρ₁η, ρ₂η and the momenta's weights αη, βη, and is a few millionths of "
    "them here (the value's noise_part). So the bound holds where those terms alone exceed the "
    "heterogeneity floor ‖∇Φ(x̃)‖² ≈ 0.060, and fails wherever they do not: the floor, the "
    "device average of eq. (3.1) not being ∇Φ when the Hessians differ (GAO-R3), is in no "
    "term of the bound. ")


_LHS = r"\frac{1}{T}\sum_{t<T} \|\nabla\Phi(\bar x_t)\|^2 + \tilde L^2\|\bar y_t - y^*(\bar x_t)\|^2"
_STATEMENT_T = (_LHS + r" \leq \frac{2(\Phi(x_0)-\Phi_*)}{\eta\rho_1T} + \dots + "
                r"\frac{4G^2}{\alpha\eta T} + \dots + 4\Delta_Q^2 + \dots\ \forall T")
_STATEMENT_NOISE = (_LHS + r" \leq B(T)\ \forall T;\quad \lim_T B(T) = 4\Delta_Q^2 + "
                    r"\frac{4\alpha\eta\sigma^2}{K} + \frac{500\beta\eta\sigma^2\tilde L^2}"
                    r"{3K\mu^2} + \mathcal{O}(p^2\eta^2(\rho_1^2+\rho_2^2))")


def _claim(name, symbol, measure, grid, point, quantity, schedule, reason, bound, touches,
           statement=L._STATEMENT):
    return P_.claim(
        name, role="finding",
        source=P_.cite("Thm 1 (the bound for every T, inside its step conditions; "
                       "heterogeneous devices under A4)"),
        statement=statement, kind="bounded_by", variable=symbol, quantity=quantity,
        measure=measure, scale="loglog", grid=grid, replicates=per_budget(2, 2, 2),
        law=law(rates.law_for(bound, "bound")), tolerance=0.0, expected="violated",
        reason=reason, schedule=schedule, mutants=(L._REPAIR,),
        conditions=L.conditions_at(point), touches=("GAO-R1", "GAO-R3", "GAO-R7", "GAO-R8",
                                                    *touches))


CLAIMS = [
    _claim("localbsgm_bound_vs_T", "T", bound_vs_T, TS, lambda T: point(),
           r"\frac{1}{T}\sum_{t<T} A_t",
           _BASE + f", p = {L.PERIOD}, exact oracles, from x*, y*(x*) (the library's first step "
           "included); value: A_T (Cesàro sum of the affine iteration, binary powering); "
           "bound: B(T), Thm 1's whole right-hand side there (Φ(x₀) − Φ_* = 0, ‖ȳ₀ − y*(x̄₀)‖² "
           "= 0, σ = 0); T swept",
           "From x*, y*(x*) the average starts at 0 and rises to the floor ‖∇Φ(x̃)‖² ≈ 0.060 "
           "as x̄ drifts to x̃ (the zero of the device-averaged estimator, GAO-R3; about "
           "3·10⁹ iterations at these steps), while B(T) falls as 4G²/(αηT) to its limit, "
           "about 2.6·10⁻⁵. B(T) is above A_T at T = 10⁹ and 10¹⁰ and below it from "
           "T ≈ 2.5·10¹⁰ on: Thm 1's inequality fails at finite T, not only in the limit. "
           "Mathematical reason: the device average of eq. (3.1) is not ∇Φ when the Hessians "
           "differ, and no term of Thm 1 carries that bias.",
           "gao.thm1", (), _STATEMENT_T),
    _claim("localbsgm_limit_vs_noise", "s", limit_vs_noise, NOISES,
           lambda s: point(noise=s),
           r"\lim_T \mathbb{E}\frac{1}{T}\sum_{t<T} A_t",
           _BASE + f", p = {L.PERIOD}" + _NOISY + "; s swept",
           _NOISE_WHY + "In s (σ ≈ 2.0s), the inequality fails up to s = 2 and holds from s = 4.",
           "gao.thm1_limit", ("GAO-R11",), _STATEMENT_NOISE),
    _claim("localbsgm_limit_vs_devices", "K", limit_vs_devices, DEVICE_COUNTS,
           lambda K: point(devices=K, noise=NOISE_K),
           r"\lim_T \mathbb{E}\frac{1}{T}\sum_{t<T} A_t",
           _BASE + f", p = {L.PERIOD}" + _NOISY + f"; s = {NOISE_K:g}, the eight devices "
           "tiled to K (the same global problem, x̃, δ² and G at every K), K swept",
           _NOISE_WHY + f"In K at s = {NOISE_K:g}, the noise terms fall as 1/K (the linear "
           "speedup the corollaries build on) and the floor does not: the bound holds up to "
           "K = 128 and fails from K = 256.",
           "gao.thm1_limit", ("GAO-R11",), _STATEMENT_NOISE),
    _claim("localbsgm_limit_vs_period", "p", limit_vs_period, PERIODS,
           lambda p: point(period=p),
           r"\lim_T \frac{1}{T}\sum_{t<T} A_t",
           _BASE + "; exact oracles; value and bound as gao.localbsgm_heterogeneous_limit at "
           "period p (η's cap falls as 1/p and stays above η), p swept",
           "The right-hand limit grows with the period through its p²η²(ρ₁² + ρ₂²) and "
           "p⁴η⁴(ρ₁² + ρ₂²) drift terms, while the left-hand one stays at the floor "
           "‖∇Φ(x̃)‖² ≈ 0.060 for every p (the local drift is O(pρη)). The bound fails up to "
           "p = 64 and holds from p = 128, where the drift terms' constants, not the "
           "heterogeneity floor they were not built to bound, cover it. Mathematical reason: "
           "the device average of eq. (3.1) is not ∇Φ when the Hessians differ, and δ² enters "
           "Thm 1 only multiplied by p²η² or p⁴η⁴.",
           "gao.thm1_limit", ()),
]
