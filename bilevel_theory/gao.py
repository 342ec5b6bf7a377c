"""LocalBSGM and LocalBSGVRM: Gao, arXiv preprint 2022 (arXiv:2204.13299), Alg. 1 and Alg. 2.

Problem:
    ``min_x Φ(x) = (1/K) Σ_k f^{(k)}(x, y*(x))``, ``y*(x) = argmin_y (1/K) Σ_k g^{(k)}(x, y)``,
    ``K`` devices, all of which take part in every iteration (``K = problem.clients``).

Algorithm (Alg. 1, LocalBSGM; eqs. 3.3–3.5):
    every device ``k`` keeps ``x^{(k)}, y^{(k)}, u^{(k)}, v^{(k)}``; with the θ/Q estimator
    ``∇̂Φ^{(k)}(x, y; ξ̂) = ∇ₓf^{(k)}(x,y;ξ) − ∇²_{xy}g^{(k)}(x,y;ζ₀) Ĥ_ξ̂ ∇_y f^{(k)}(x,y;ξ)``,
    ``Ĥ_ξ̂ v = θ Σ_{s=0}^{Q} Π_{j}(I − θ∇²_{yy}g^{(k)}(ζ_j)) v`` (device's own Hessians, a fresh
    sample per factor: :func:`~bilevel_theory.estimators.theta_q`),

    * ``u_0 = ∇̂Φ^{(k)}(x_0, y_0; ξ̂)``, ``v_0 = ∇_y g^{(k)}(x_0, y_0; ζ)``; for ``t ≥ 1``
      ``u_t = (1−αη_t) u_{t−1} + αη_t ∇̂Φ^{(k)}(x_t, y_t; ξ̂_t)``,
      ``v_t = (1−βη_t) v_{t−1} + βη_t ∇_y g^{(k)}(x_t, y_t; ζ_t)``;
    * ``x_{t+1} = x_t − ρ₁η_t u_t``, ``y_{t+1} = y_t − ρ₂η_t v_t``;
    * if ``(t+1) mod p = 0``: one communication round (``Context.aggregate``: each device
      uploads ``u, v, x, y``; ``Context.broadcast``: the four averages go back down).

Algorithm (Alg. 2, LocalBSGVRM; eq. 3.8), ``t = 1, …, T``:
    ``x_1`` given, ``y_1 = y*(x_1)``; at ``t = 1`` a minibatch of ``S`` independent estimates,
    ``u_1 = mean_S ∇̂Φ^{(k)}``, ``v_1 = mean_S ∇_y g^{(k)}``; for ``t > 1`` the STORM recursion
    ``u_t = (1 − αη_{t−1}²)(u_{t−1} − ∇̂Φ^{(k)}(x_{t−1}, y_{t−1}; ξ̂_t)) + ∇̂Φ^{(k)}(x_t, y_t; ξ̂_t)``
    (and the same for ``v`` with ``∇_y g``), the **same** sample ``ξ̂_t`` at both points: the
    gradient parts through ``Oracle.pair``, the ``Q`` Hessian factors and the Jacobian through
    ``Oracle.pair_hvp`` / ``Oracle.pair_jvp`` (GAO-I1); local steps and averaging as in Alg. 1
    (GAO-I4) with ``η_t`` of Thm. 2.

Theoretical guarantee (upper bounds; constants read as in GAO-R1):
    Thm. 1 / Cor. 1 (LocalBSGM): ``(1/T) Σ_t ‖∇Φ(x̄_t)‖² + L̃²‖ȳ_t − y*(x̄_t)‖² ≤ ε`` with
    ``T = O(κ⁵/(Kε²))``, ``p = O(1/(Kε^{1/2}))``, ``η = O(Kε)``, ``Q = O(log 1/ε)``:
    iterations ``∝ 1/K`` (linear speedup), communication ``T/p = O(κ⁵ε^{−3/2})``.
    Thm. 2 / Cor. 2 (LocalBSGVRM): ``T = O(κ³/(Kε^{3/2}))``, communication ``T/p = O(κ³/ε)``.
    Both bounds contain ``4Δ_Q²``, ``Δ_Q = (1−θμ)^{Q+1}L₀L₁/μ`` (truncation bias, GAO-R8).
    :func:`theorem1_schedule` and :func:`theorem2_schedule` return these schedules.

Readings (ids of ``docs/papers/gao.md``):
    * GAO-R1: ``L̂``, ``L̃``, ``G`` are never defined: ``L̂ = L̃ = L₁``, ``G = L₀``
      (:func:`gao_constants`), ``L₁ = max(ℓ_{f,1}, ℓ_{g,1})``, ``L₀ = ℓ_{f,0}``, ``μ = μ_g``,
      ``L₂₁ = L₁₂ = L₂₂ = 0`` (constant Hessians) in ``L_Φ``.
    * GAO-R2: the box's upload of ``u_{t+1}, v_{t+1}`` (not yet formed) is read as the momenta
      carried into the next iteration: after step ``t`` the devices average ``u_t, v_t,
      x_{t+1}, y_{t+1}``.  Communication follows ``(t+1) mod p = 0`` literally: after
      iterations ``p−1, 2p−1, …`` of Alg. 1 (``t`` from 0) and of Alg. 2 (``t`` from 1, so its
      first round comes after ``p − 1`` iterations).
    * GAO-R3: ``∇̂Φ^{(k)}`` uses the device's **own** ``∇²_{yy}g^{(k)}`` and ``∇²_{xy}g^{(k)}``
      (eqs. 3.1–3.3).  Under heterogeneous Hessians the device average of (3.1) is not
      ``∇Φ``, so both methods stop at the zero ``x̃`` of the averaged local estimator
      (:func:`biased_stationary_point`), a floor that no ``η, p, T, Q`` removes (the theorems'
      heterogeneity ``δ²`` only enters multiplied by ``p²η²``); :func:`device_hypergradient`
      gives the exact bias.
    * GAO-I1: LocalBSGVRM's Hessian noise at the two points of eq. (3.8): one matrix sample per
      factor, applied to both vectors (exact joint law, ``Oracle.pair_hvp``).
    * GAO-I2: the t = 1 minibatch of Alg. 2 averages ``S`` independent full estimates (each
      with its own ``Q + 1`` Hessian/Jacobian samples).
    * GAO-I3: ``y_1 = y*(x_1)`` (Alg. 2's input) is taken from the closed form; pass ``y0`` to
      override.
    * GAO-R4 (Thm. 2's ``α = β``) and GAO-R7 (step sizes): Thm. 2's ``η_t`` and ``α = β`` are
      the defaults of LocalBSGVRM (``eta=None``, ``alpha=None``, ``beta=None``); ``eta``
      callables take the paper's ``t`` (0-based in Alg. 1, 1-based in Alg. 2).  Thm. 1/2's
      worst-case ``ρ₁, ρ₂`` (``O(1/κ⁵)``, ``μ/19720``) make 10³ iterations do nothing, so the
      defaults below are practical values; the theorems' limits are
      :func:`theorem1_limits`.

Args (hyperparameters):
    period (p, default 5), neumann_steps (Q; default: ``(1−θμ)^{Q+1} ≤ 10⁻³``), theta (θ,
    default ``1/(2L₁)``, must be ``< 2/ℓ_{g,1}`` for the series to converge; Thm. 1 requires
    ``θ < 1/L₁``), alpha, beta (LocalBSGM default 1; LocalBSGVRM Thm. 2), eta (float or
    callable of ``t``; LocalBSGM default 0.5, LocalBSGVRM Thm. 2's ``η_t``), rho1, rho2
    (LocalBSGM ``ρ₂ = 1/L₁``, ``ρ₁ = 0.2/L₁``; LocalBSGVRM 1, 1 = Thm. 2's cap), minibatch (S,
    LocalBSGVRM, default ``p`` as in Thm. 2), correction (LocalBSGVRM, default ``True``:
    eq. 3.8's STORM correction; ``False`` drops it, ``u_t = (1−a)u_{t−1} + a∇̂Φ(x_t)`` with
    ``a = αη_{t−1}²``: plain momentum, a mutant for the claims), same_sample (LocalBSGVRM,
    default ``True``: eq. 3.8's one sample at both points; ``False`` draws them independently,
    a mutant), x0, y0.

Returns:
    a :class:`~bilevel_theory.trace.Trace` with ``x = x̄_t`` and ``y = ȳ_t`` (device averages,
    the theorems' left-hand side); one trace round = one iteration ``t``; the ledger counts a
    communication round only when the devices average (``Context.aggregate``).
    ``trace.extras["drift"]``: ``(rounds, R)`` mean over devices of ``‖x^{(k)} − x̄‖²`` after
    each iteration.

Example:
    >>> from bilevel_theory.problems import QuadraticBilevel
    >>> from bilevel_theory import run
    >>> prob = QuadraticBilevel.random(clients=8, dim_x=3, dim_y=3, kappa=5, seed=0)
    >>> trace = run("localbsgm", prob, rounds=100, replicates=2, seed=0)
    >>> bool(trace.stationarity[:, -1].mean() < 1e-2 * trace.stationarity[:, 0].mean())
    True
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from bilevel_theory.problems.families import CHUNK
from bilevel_theory.problems.validation import check_int, check_real

from .algorithm import Algorithm, Context, as_schedule
from .estimators import theta_q

try:  # the hyperparameter schema (bilevel_theory.hyperparameters), where present
    from .hyperparameters import Hyper
except ImportError:  # pragma: no cover - older trees validate in ``validate`` alone
    Hyper = None

# ---------------------------------------------------------------------------------- constants


def gao_constants(problem) -> dict[str, float]:
    """Gao's constants for ``problem``, with GAO-R1's readings of the undefined symbols.

    ``L0 = ℓ_{f,0}``, ``L1 = max(ℓ_{f,1}, ℓ_{g,1})``, ``mu = μ_g``, ``kappa = L1/mu``,
    ``L_hat = L_tilde = L1``, ``G = L0``; ``L_Phi``: the exact smoothness constant of ``Φ``
    (``constants["L_phi"]``; each ``Φ^{(k)}`` has the same Hessian on these instances, whose
    upper-level quadratic part is shared), ``L_Phi_bound``: Gao's formula with ``L₂₁ = L₁₂ =
    L₂₂ = 0`` (constant Hessians), ``L₁ + 2L₁²/μ + L₁³/μ²`` (≈ 60× larger at κ = 5; in Thm. 2's
    ``w_t`` it would shrink ``η_t`` by the same factor); ``sigma2``: gradient-noise variance.
    """
    c = problem.constants
    L1 = max(c["ell_f1"], c["ell_g1"])
    mu = c["mu_g"]
    L0 = c["ell_f0"]
    return dict(L0=L0, L1=L1, mu=mu, kappa=L1 / mu, L_hat=L1, L_tilde=L1, G=L0,
                L_Phi=c["L_phi"], L_Phi_bound=L1 + 2 * L1 ** 2 / mu + L1 ** 3 / mu ** 2,
                sigma2=c["sigma_f2"], delta2=c["sigma_g2"])


def default_theta(problem) -> float:
    """``θ = 1/(2L₁)``: satisfies Thm. 1/2's ``θ < 1/L₁`` with a margin."""
    return 0.5 / gao_constants(problem)["L1"]


def neumann_steps_for(problem, theta: float, relative: float = 1e-3) -> int:
    """Smallest ``Q ≥ 1`` with ``(1 − θμ)^{Q+1} ≤ relative`` (Δ_Q at ``relative`` of Δ_{−1})."""
    rate = 1.0 - theta * problem.constants["mu_g"]
    if rate <= 0.0:
        return 1
    return max(1, math.ceil(math.log(relative) / math.log(rate)) - 1)


def truncation_bias_bound(problem, theta: float, neumann_steps: int) -> float:
    """The paper's ``Δ_Q = (1 − θμ)^{Q+1} L₀L₁/μ`` (an upper bound; GAO-R8) with the constants
    of :func:`gao_constants`."""
    g = gao_constants(problem)
    return (1.0 - theta * g["mu"]) ** (neumann_steps + 1) * g["L0"] * g["L1"] / g["mu"]


# ---------------------------------------------------------------------------------- closed forms


def device_hypergradient(problem, x, theta: float | None = None,
                         neumann_steps: int | None = None) -> np.ndarray:
    """Exact device average ``(1/K) Σ_k ∇̂Φ^{(k)}(x, y*(x))`` of Gao's noise-free estimator.

    ``neumann_steps=None`` uses each device's exact ``[∇²_{yy}g^{(k)}]⁻¹`` (eq. 3.1): the
    difference to ``problem.hypergradient(x)`` is then the heterogeneity bias alone; with ``Q``
    (and ``θ``) it adds the truncation bias.  ``x`` may carry batch axes; host numpy; chunked
    over devices (no per-device Python loop).
    """
    h = problem.host
    x = np.asarray(x, dtype=float)
    if x.shape[-1:] != (h.dim_x,):
        raise ValueError(f"`x` must have last dimension {h.dim_x}, got shape {x.shape}")
    if neumann_steps is not None:
        neumann_steps = check_int("neumann_steps", neumann_steps, minimum=0)
        theta = check_real("theta", default_theta(h) if theta is None else theta, minimum=0.0,
                           strict_minimum=True)
    X = x.reshape(-1, h.dim_x)
    Y = np.asarray(h.y_star(X))
    Xb, Yb = X[:, None, :], Y[:, None, :]
    total = np.zeros_like(X)
    for s in range(0, h.clients, CHUNK):
        e = min(s + CHUNK, h.clients)
        idx = np.broadcast_to(np.arange(s, e), (X.shape[0], e - s))
        gx = h.exact_grad_x_f(idx, Xb, Yb)
        gy = np.broadcast_to(h.exact_grad_y_f(idx, Xb, Yb), idx.shape + (h.dim_y,))
        if neumann_steps is None:
            w = np.linalg.solve(h.A.dense_range(s, e)[None], gy[..., None])[..., 0]
        else:
            w = exact_series(h, idx, gy, theta, neumann_steps)
        total += (gx - h.exact_jvp_xy_g(idx, w)).sum(axis=1)
    return (total / h.clients).reshape(x.shape)


def exact_series(host, idx, v, theta: float, neumann_steps: int):
    """Eq. (3.2)'s truncated series applied to ``v`` with each device's exact Hessian:
    ``θ Σ_{q=0}^{Q} (I − θ∇²_{yy}g^{(k)})^q v`` (``idx`` the devices of ``v``'s rows; host
    numpy, the host's exact products)."""
    r = w = v
    for _ in range(neumann_steps):
        r = r - theta * host.exact_hvp_yy_g(idx, r)
        w = w + r
    return theta * w


def biased_stationary_point(problem, theta: float | None = None,
                            neumann_steps: int | None = None) -> tuple[np.ndarray, float]:
    """The zero ``x̃`` of :func:`device_hypergradient` (affine in ``x`` for a quadratic) and the
    floor ``‖∇Φ(x̃)‖²``: where LocalBSGM/LocalBSGVRM stop (exactly for ``p = 1`` and exact
    oracles, where ``ȳ = y*(x̄)`` and ``ū = 0`` at the fixed point)."""
    h = problem.host
    pts = np.vstack([np.zeros(h.dim_x), np.eye(h.dim_x)])
    D = device_hypergradient(h, pts, theta, neumann_steps)
    b, M = D[0], (D[1:] - D[0]).T
    x_tilde = np.linalg.solve(M, -b)
    return x_tilde, float((np.asarray(h.hypergradient(x_tilde)) ** 2).sum())


# ---------------------------------------------------------------------------------- schedules


def theorem2_eta(devices: int, period: int, L_hat: float, rho1: float,
                 L_Phi: float) -> Callable[[int], float]:
    """Thm. 2: ``η_t = (K^{2/3}/L̂)/(w_t + t)^{1/3}``, ``w_t = max{2, K²p³ − t,
    8ρ₁³L_Φ³K²/L̂³ − t}`` (so ``w_t + t = max{2 + t, K²p³, 8ρ₁³L_Φ³K²/L̂³}``)."""
    K, p = float(devices), float(period)
    floor = max(K ** 2 * p ** 3, 8 * rho1 ** 3 * L_Phi ** 3 * K ** 2 / L_hat ** 3)

    def eta(t: int) -> float:
        return K ** (2 / 3) / L_hat / max(2.0 + t, floor) ** (1 / 3)

    return eta


def theorem2_momentum(devices: int, period: int, L_hat: float) -> float:
    """Thm. 2: ``α = β = L̂²/(3pK²) + L̂²/K``."""
    return L_hat ** 2 / (3 * period * devices ** 2) + L_hat ** 2 / devices


def _neumann_for_epsilon(problem, theta: float, epsilon: float, c_Q: float) -> int:
    """``Q = O(log 1/ε)`` with the constant made explicit: ``(1 − θμ)^{2(Q+1)} ≤ ε^{c_Q}``, so
    the bound's ``4Δ_Q²`` term is ``4(L₀L₁/μ)² ε^{c_Q}``."""
    rate = 1.0 - theta * problem.constants["mu_g"]
    return max(1, math.ceil(c_Q * math.log(1 / epsilon) / (-2 * math.log(rate))) - 1)


def theorem1_schedule(problem, epsilon: float, c_T: float = 1.0, c_p: float = 1.0,
                      c_eta: float = 1.0, c_Q: float = 1.0, theta: float | None = None) -> dict:
    """Cor. 1's schedule for LocalBSGM at accuracy ``ε`` with ``K = problem.clients``:

    ``rounds T = ⌈c_T κ⁵/(Kε²)⌉``, ``period p = max(1, round(c_p/(Kε^{1/2})))``,
    ``eta η = c_η Kε``, ``neumann_steps Q`` from :func:`_neumann_for_epsilon`.  Returns the
    hyperparameters plus ``rounds``, ``communication = ⌊T/p⌋`` and ``notes`` flagging the
    inconsistencies of GAO-R6 met at this point: ``p > 1`` needs ``K < c_p ε^{−1/2}`` (else p is
    clipped to 1, i.e. no local steps); ``η = O(Kε)`` grows with ``K`` and must stay below
    ``1/α``, ``1/β`` and 1 (flagged when it does not; then the run is outside Thm. 1).
    """
    epsilon = check_real("epsilon", epsilon, minimum=0.0, strict_minimum=True)
    K = problem.clients
    g = gao_constants(problem)
    theta = default_theta(problem) if theta is None else theta
    raw_p = c_p / (K * math.sqrt(epsilon))
    period = max(1, round(raw_p))
    eta = c_eta * K * epsilon
    rounds = math.ceil(c_T * g["kappa"] ** 5 / (K * epsilon ** 2))
    notes = []
    if raw_p < 1.5:
        notes.append(f"p = c_p/(Kε^½) = {raw_p:.3g} ≤ 1: Alg. 1 needs p > 1, which requires "
                     f"K < c_p ε^(-1/2) = {c_p / math.sqrt(epsilon):.3g}")
    if eta >= 1.0:
        notes.append(f"η = c_η Kε = {eta:.3g} ≥ 1 violates Thm. 1's η < 1 (η grows with K)")
    return dict(rounds=rounds, period=period, eta=eta,
                neumann_steps=_neumann_for_epsilon(problem, theta, epsilon, c_Q), theta=theta,
                communication=rounds // period, notes=notes)


def theorem2_schedule(problem, epsilon: float, c_T: float = 1.0, c_p: float = 1.0,
                      c_Q: float = 1.0, rho1: float = 1.0, momentum: str = "theorem",
                      theta: float | None = None) -> dict:
    """Cor. 2 / Thm. 2's schedule for LocalBSGVRM at accuracy ``ε``, ``K = problem.clients``:

    ``rounds T = ⌈c_T κ³/(Kε^{3/2})⌉``, ``period p = max(1, round(c_p/(Kε^{1/2})))``,
    ``minibatch S = p``, ``eta`` = Thm. 2's ``η_t`` (:func:`theorem2_eta`), ``alpha = beta`` =
    Thm. 2's ``L̂²/(3pK²) + L̂²/K`` (``momentum="theorem"``) or Cor. 2's ``L̂²/K²``
    (``momentum="corollary"``; the two disagree, GAO-R4).  Thm. 2's
    ``p ≤ 1/√(288(2 + 4L̂²/K)(ρ₁² + ρ₂²))`` (a constant) contradicts Cor. 2's ``p`` growing as
    ``ε → 0`` (GAO-R5); the corollary's ``p`` is used and the conflict is reported in
    ``notes``.
    """
    epsilon = check_real("epsilon", epsilon, minimum=0.0, strict_minimum=True)
    if momentum not in ("theorem", "corollary"):
        raise ValueError(f"`momentum` must be one of ['theorem', 'corollary'], got {momentum!r}")
    K = problem.clients
    g = gao_constants(problem)
    theta = default_theta(problem) if theta is None else theta
    raw_p = c_p / (K * math.sqrt(epsilon))
    period = max(1, round(raw_p))
    a = (theorem2_momentum(K, period, g["L_hat"]) if momentum == "theorem"
         else g["L_hat"] ** 2 / K ** 2)
    rounds = math.ceil(c_T * g["kappa"] ** 3 / (K * epsilon ** 1.5))
    notes = []
    if raw_p < 1.5:
        notes.append(f"p = c_p/(Kε^½) = {raw_p:.3g} ≤ 1: p > 1 requires K < "
                     f"{c_p / math.sqrt(epsilon):.3g}")
    return dict(rounds=rounds, period=period, minibatch=period, alpha=a, beta=a,
                eta=theorem2_eta(K, period, g["L_hat"], rho1, g["L_Phi"]), rho1=rho1,
                neumann_steps=_neumann_for_epsilon(problem, theta, epsilon, c_Q), theta=theta,
                communication=rounds // period, notes=notes)


def theorem1_limits(problem, alpha: float, beta: float, period: int, rho2: float) -> dict:
    """Thm. 1's upper limits on ``ρ₂``, ``ρ₁`` (given ``ρ₂``) and ``η`` (given both at their
    limits), with ``L̂ = L̃ = L₁`` (:func:`gao_constants`): shows how far practical step sizes
    are from the worst-case constants (``ρ₁ = O(1/κ⁵)``, Remark 1)."""
    g = gao_constants(problem)
    L1, mu, kap, Lh, Lt = g["L1"], g["mu"], g["kappa"], g["L_hat"], g["L_tilde"]
    rho2_max = min((6 * Lt ** 2 / mu) / (4 * Lh ** 2 / alpha ** 2
                                           + 400 * L1 ** 2 * Lt ** 2 / (3 * beta ** 2 * mu ** 2)),
                   1 / (6 * L1))
    rho1_max = min(3 * rho2 * mu / (50 * kap * Lt),
                   0.25 / math.sqrt(4 * Lh ** 2 / alpha ** 2
                                    + 500 * L1 ** 2 * Lt ** 2 / (3 * beta ** 2 * mu ** 2)))
    eta_max = min(1 / alpha, 1 / beta, 1 / (2 * rho1_max * g["L_Phi"]),
                  1 / (3 * period * (alpha ** 2 + beta ** 2) ** 0.25
                       * (rho1_max ** 2 + rho2 ** 2) ** 0.25 * Lh ** 0.5), 1.0)
    return dict(rho1_max=rho1_max, rho2_max=rho2_max, eta_max=eta_max)


def theorem2_limits(problem) -> dict:
    """Thm. 2's upper limits on ``ρ₂``, ``ρ₁`` (given ``ρ₂`` at its limit) and the period ``p``
    (given both), with ``L̂ = L̃ = L₁`` (:func:`gao_constants`): ``ρ₂ ≤ min{μ/19720, 1/(6L₁),
    1}``, ``ρ₁ ≤ min{ρ₂/(20κ²), μ/(1540L̂), 1}``, ``p ≤ 1/√(288(2 + 4L̂²/K)(ρ₁² + ρ₂²))``."""
    g = gao_constants(problem)
    rho2 = min(g["mu"] / 19720, 1 / (6 * g["L1"]), 1.0)
    rho1 = min(rho2 / (20 * g["kappa"] ** 2), g["mu"] / (1540 * g["L_hat"]), 1.0)
    p_max = 1 / math.sqrt(288 * (2 + 4 * g["L_hat"] ** 2 / problem.clients)
                          * (rho1 ** 2 + rho2 ** 2))
    return dict(rho1_max=rho1, rho2_max=rho2, period_max=p_max)


# ---------------------------------------------------------------------------------- estimators


def gao_estimate(ctx: Context, idx, x, y, theta: float, Q: int):
    """Eq. (3.3) for the devices ``idx (R, n)`` at ``x, y`` broadcastable to ``(R, n, d)``:
    ``∇ₓf(ξ) − ∇²_{xy}g(ζ₀) Ĥ_ξ̂ ∇_y f(ξ)``; ``Q`` Hessian-vector products, 1 Jacobian-vector
    product and 2 gradients per device."""
    gx = ctx.oracle.grad_x_f(idx, x, y)
    h = theta_q(ctx, idx, x, y, ctx.oracle.grad_y_f(idx, x, y), theta, Q)
    return gx - ctx.oracle.jvp_xy_g(idx, x, y, h)


def gao_estimate_pair(ctx: Context, idx, x1, y1, x2, y2, theta: float, Q: int):
    """Eq. (3.3) at two points with the same sample ``ξ̂ = {ξ, ζ₀, ζ₁…ζ_Q}`` (eq. 3.8,
    GAO-I1): ``∇ₓf, ∇_y f`` through ``Oracle.pair``, each Hessian factor through
    ``Oracle.pair_hvp`` and the Jacobian through ``Oracle.pair_jvp`` (same-sample pairs,
    counted by the oracle).  Returns ``(∇̂Φ(x1, y1; ξ̂), ∇̂Φ(x2, y2; ξ̂))``."""
    o = ctx.oracle
    gx1, gx2 = o.pair("grad_x_f", idx, x1, y1, x2, y2)
    r1, r2 = o.pair("grad_y_f", idx, x1, y1, x2, y2)
    w1, w2 = r1, r2
    for q in range(Q):
        h1, h2 = o.pair_hvp(idx, x1, y1, x2, y2, r1, r2)
        if q == 0:  # fresh arrays: r and w are updated in place from here on
            r1, r2 = r1 - theta * h1, r2 - theta * h2
            w1, w2 = w1 + r1, w2 + r2
            continue
        r1 -= theta * h1
        r2 -= theta * h2
        w1 += r1
        w2 += r2
    j1, j2 = o.pair_jvp(idx, x1, y1, x2, y2, theta * w1, theta * w2)
    return gx1 - j1, gx2 - j2


# ---------------------------------------------------------------------------------- algorithms


class _GaoBase(Algorithm):
    """Shared validation, initialization and periodic averaging of Alg. 1 and Alg. 2."""

    kinds = ("bilevel", "compositional")
    schema = {} if Hyper is None else {
        "neumann_steps": Hyper("count", "Q: length of the θ/Q series (default: (1−θμ)^{Q+1} ≤ "
                               "10⁻³)", optional=True),
        "eta": Hyper("positive", "η (η_t): step constant, or a schedule of t (Thm 2's η_t)",
                     schedule=True, optional=True),
        "correction": Hyper("flag", "LocalBSGVRM: eq. 3.8's STORM correction (False: a "
                            "mutant without it)"),
        "same_sample": Hyper("flag", "LocalBSGVRM: one sample at both points of eq. 3.8 "
                             "(False: a mutant with independent samples)"),
    }

    def validate(self, hp):
        hp = super().validate(hp)
        c = self.problem.constants
        hp["theta"] = check_real("theta", hp["theta"], minimum=0.0, strict_minimum=True)
        if hp["theta"] >= 2.0 / c["ell_g1"]:
            raise ValueError(f"`theta` must be < 2/ℓ_g1 = {2 / c['ell_g1']:.4g} (the θ/Q series "
                             f"diverges otherwise; Thm. 1/2 require θ < 1/L₁ = "
                             f"{1 / gao_constants(self.problem)['L1']:.4g}), got {hp['theta']}")
        if hp["neumann_steps"] is None:
            hp["neumann_steps"] = neumann_steps_for(self.problem, hp["theta"])
        for key in ("rho1", "rho2"):
            hp[key] = check_real(key, hp[key], minimum=0.0, strict_minimum=True)
        return hp

    def _start(self, ctx: Context, y0_default=None):
        xp, R, K = ctx.xp, ctx.replicates, self.problem.clients
        s = self.starting_point(ctx)
        y = s["y"] if y0_default is None else y0_default(s["x"])
        xs = xp.broadcast_to(s["x"][:, None, :], (R, K, self.problem.dim_x)) * 1.0
        ys = xp.broadcast_to(y[:, None, :], (R, K, self.problem.dim_y)) * 1.0
        return xs, ys

    def _devices(self, ctx: Context):
        """Full participation: every device, ``(R, K)`` indices."""
        return ctx.xp.broadcast_to(ctx.xp.arange(self.problem.clients),
                                   (ctx.replicates, self.problem.clients))

    @staticmethod
    def _average(ctx: Context, *arrays):
        """One communication round (GAO-R2): the devices upload ``arrays`` and the server
        averages them (``Context.aggregate``: the round and the uplink), then sends the
        averages back (``Context.broadcast``: the downlink); every device is reset to them."""
        xp = ctx.xp
        means = ctx.aggregate(*arrays, axis=1)
        means = means if isinstance(means, tuple) else (means,)
        ctx.broadcast(*means)
        return tuple(xp.broadcast_to(m[:, None, :], a.shape) * 1.0
                     for m, a in zip(means, arrays))

    @staticmethod
    def _state(ctx: Context, xs, ys, record: bool = True, **rest):
        xbar = xs.mean(axis=1)
        if record:
            ctx.record("drift", ((xs - xbar[:, None, :]) ** 2).sum(axis=-1).mean(axis=1))
        return dict(x=xbar, y=ys.mean(axis=1), xs=xs, ys=ys, **rest)


class LocalBSGM(_GaoBase):
    """LocalBSGM (Gao 2022, Alg. 1): local momentum SGD on ``x, y`` with the θ/Q estimator,
    periodic averaging of ``u, v, x, y`` (see module docstring)."""

    name = "localbsgm"
    defaults = dict(
        period=5, neumann_steps=None,
        theta=lambda c, p: default_theta(p),
        alpha=1.0, beta=1.0, eta=0.5,
        rho1=lambda c, p: 0.2 / gao_constants(p)["L1"],
        rho2=lambda c, p: 1.0 / gao_constants(p)["L1"],
        x0=None, y0=None,
    )

    def validate(self, hp):
        hp = super().validate(hp)
        for key in ("alpha", "beta"):
            hp[key] = check_real(key, hp[key], minimum=0.0, strict_minimum=True)
        as_schedule("eta", hp["eta"])
        if not callable(hp["eta"]):
            for key in ("alpha", "beta"):
                if hp[key] * hp["eta"] >= 1.0:
                    raise ValueError(f"`{key}`·`eta` must be < 1 (Alg. 1), got "
                                     f"{hp[key]}·{hp['eta']} = {hp[key] * hp['eta']:.4g}")
        return hp

    def init(self, ctx: Context):
        xs, ys = self._start(ctx)
        zeros = ctx.xp.zeros
        R, K = ctx.replicates, self.problem.clients
        u, v = zeros((R, K, self.problem.dim_x)), zeros((R, K, self.problem.dim_y))
        return self._state(ctx, xs, ys, record=False, u=u, v=v)

    def step(self, ctx: Context, state, k: int):
        hp, idx = self.hp, self._devices(ctx)
        eta = as_schedule("eta", hp["eta"])(k)
        a, b = hp["alpha"] * eta, hp["beta"] * eta
        if k > 0 and (a >= 1.0 or b >= 1.0):
            raise ValueError(f"`alpha`·`eta` and `beta`·`eta` must be < 1 (Alg. 1), got "
                             f"{a:.4g}, {b:.4g} at t = {k}")
        xs, ys = state["xs"], state["ys"]
        est = gao_estimate(ctx, idx, xs, ys, hp["theta"], hp["neumann_steps"])
        gy = ctx.oracle.grad_y_g(idx, xs, ys)
        if k == 0:
            u, v = est, gy
        else:
            u = (1.0 - a) * state["u"] + a * est
            v = (1.0 - b) * state["v"] + b * gy
        xs = xs - hp["rho1"] * eta * u
        ys = ys - hp["rho2"] * eta * v
        if (k + 1) % hp["period"] == 0:
            u, v, xs, ys = self._average(ctx, u, v, xs, ys)
        dx, dy = self.problem.dim_x, self.problem.dim_y
        ctx.hold(dx, dy, dx, dy, 2 * dy)  # x, y, u, v + the θ/Q recursion's two vectors
        return self._state(ctx, xs, ys, u=u, v=v)


class LocalBSGVRM(_GaoBase):
    """LocalBSGVRM (Gao 2022, Alg. 2): STORM-type momentum (eq. 3.8) with same-sample pairs,
    ``y_1 = y*(x_1)``, an ``S``-minibatch at ``t = 1``, Thm. 2's ``η_t`` (module docstring)."""

    name = "localbsgvrm"
    defaults = dict(
        period=5, neumann_steps=None,
        theta=lambda c, p: default_theta(p),
        alpha=None, beta=None, eta=None, rho1=1.0, rho2=1.0, minibatch=None,
        correction=True, same_sample=True, x0=None, y0=None,
    )

    def validate(self, hp):
        hp = super().validate(hp)
        g = gao_constants(self.problem)
        K, p = self.problem.clients, hp["period"]
        for key in ("alpha", "beta"):
            if hp[key] is None:
                hp[key] = theorem2_momentum(K, p, g["L_hat"])
            hp[key] = check_real(key, hp[key], minimum=0.0, strict_minimum=True)
        if hp["eta"] is None:
            hp["eta"] = theorem2_eta(K, p, g["L_hat"], hp["rho1"], g["L_Phi"])
        as_schedule("eta", hp["eta"])
        if not callable(hp["eta"]):  # eq. 3.8's momentum weights 1 − αη², 1 − βη² in (0, 1)
            for key in ("alpha", "beta"):
                if hp[key] * hp["eta"] ** 2 >= 1.0:
                    raise ValueError(f"`{key}`·`eta`² must be < 1 (eq. 3.8), got `{key}` = "
                                     f"{hp[key]:.4g}, `eta` = {hp['eta']:.4g}")
        hp["minibatch"] = check_int("minibatch", p if hp["minibatch"] is None
                                    else hp["minibatch"], minimum=1)
        for key in ("correction", "same_sample"):
            if not isinstance(hp[key], bool):
                raise TypeError(f"`{key}` must be True or False, got {hp[key]!r}")
        return hp

    def init(self, ctx: Context):
        y_init = None if self.hp["y0"] is not None else ctx.problem.y_star
        xs, ys = self._start(ctx, y_init)
        zeros = ctx.xp.zeros
        R, K = ctx.replicates, self.problem.clients
        u, v = zeros((R, K, self.problem.dim_x)), zeros((R, K, self.problem.dim_y))
        return self._state(ctx, xs, ys, record=False, u=u, v=v, xs_prev=xs, ys_prev=ys)

    def _minibatch(self, ctx: Context, xs, ys):
        """``S`` independent estimates per device, stacked on the device axis, averaged."""
        xp, S, idx = ctx.xp, self.hp["minibatch"], self._devices(ctx)
        R, K = idx.shape
        idx_s = xp.concatenate([idx] * S, axis=1)
        x_s, y_s = xp.concatenate([xs] * S, axis=1), xp.concatenate([ys] * S, axis=1)
        est = gao_estimate(ctx, idx_s, x_s, y_s, self.hp["theta"], self.hp["neumann_steps"])
        gy = ctx.oracle.grad_y_g(idx_s, x_s, y_s)
        return (est.reshape(R, S, K, -1).mean(axis=1), gy.reshape(R, S, K, -1).mean(axis=1))

    def step(self, ctx: Context, state, k: int):
        hp, idx = self.hp, self._devices(ctx)
        schedule = as_schedule("eta", hp["eta"])
        t = k + 1
        xs, ys = state["xs"], state["ys"]
        if t == 1:
            u, v = self._minibatch(ctx, xs, ys)
        else:
            e_prev = schedule(t - 1)
            a, b = hp["alpha"] * e_prev ** 2, hp["beta"] * e_prev ** 2
            if a >= 1.0 or b >= 1.0:
                raise ValueError(f"`alpha`·`eta`² and `beta`·`eta`² must be < 1 (eq. 3.8), got "
                                 f"{a:.4g}, {b:.4g} at t = {t - 1}")
            if hp["same_sample"]:
                new, old = gao_estimate_pair(ctx, idx, xs, ys, state["xs_prev"],
                                             state["ys_prev"], hp["theta"], hp["neumann_steps"])
                gnew, gold = ctx.oracle.pair("grad_y_g", idx, xs, ys, state["xs_prev"],
                                             state["ys_prev"])
            else:  # mutant: independent samples at the two points of eq. (3.8)
                new = gao_estimate(ctx, idx, xs, ys, hp["theta"], hp["neumann_steps"])
                old = gao_estimate(ctx, idx, state["xs_prev"], state["ys_prev"], hp["theta"],
                                   hp["neumann_steps"])
                gnew = ctx.oracle.grad_y_g(idx, xs, ys)
                gold = ctx.oracle.grad_y_g(idx, state["xs_prev"], state["ys_prev"])
            if hp["correction"]:
                u = (1.0 - a) * (state["u"] - old) + new
                v = (1.0 - b) * (state["v"] - gold) + gnew
            else:  # mutant: STORM correction dropped (plain momentum with weight a, b)
                u = (1.0 - a) * state["u"] + a * new
                v = (1.0 - b) * state["v"] + b * gnew
        eta = schedule(t)
        xs_prev, ys_prev = xs, ys
        xs = xs - hp["rho1"] * eta * u
        ys = ys - hp["rho2"] * eta * v
        if (t + 1) % hp["period"] == 0:
            u, v, xs, ys = self._average(ctx, u, v, xs, ys)
        dx, dy = self.problem.dim_x, self.problem.dim_y
        # x, y, u, v, x_{t-1}, y_{t-1} + two θ/Q recursions (two vectors each)
        ctx.hold(3 * dx, 3 * dy, 4 * dy)
        return self._state(ctx, xs, ys, u=u, v=v, xs_prev=xs_prev, ys_prev=ys_prev)


REGISTERED = (LocalBSGM, LocalBSGVRM)


# =============================================================================================
# Theory: the bounds of Gao, arXiv preprint 2022 (Thms 1–2, Cors 1–2), as sympy expressions.
# ``bilevel_theory.rates.BOUNDS`` collects them by name; ``rates.law_for`` derives the claims'
# laws from them.  Built on demand, so that importing the algorithm does not import sympy.
# =============================================================================================

THEORY_PAPER = "Gao 2022"
THEORY_CITATION = "Gao, arXiv preprint 2022 (arXiv:2204.13299)"


def bounds() -> list:
    """The stated bounds of Gao, arXiv preprint 2022, Thms 1–2, Cors 1–2, as
    :class:`bilevel_theory.rates.Bound` objects (names ``"gao.<result>"``)."""
    import sympy as sp  # noqa: PLC0415

    from bilevel_theory.rates import (  # noqa: PLC0415
        D0,
        L0,
        L1,
        Bound,
        BoundList,
        Delta,
        Delta_Q,
        G,
        K,
        L_hat,
        L_tilde,
        Q,
        T,
        alpha,
        beta,
        c_eta,
        c_p,
        c_rho,
        c_T,
        delta,
        eps,
        eta,
        kappa,
        mu,
        p,
        rho1,
        rho2,
        sigma,
        theta,
    )

    out = BoundList(THEORY_CITATION)
    _add, _src = out.add, out.source

    _R = sp.Rational
    _GAO_Q = (r"\frac{1}{T}\sum_t \left(\|\nabla\Phi(\bar x_t)\|^2 + \tilde L^2"
              r"\|\bar y_t - y^*(\bar x_t)\|^2\right)")

    gao_delta_q = _add(Bound(
        "gao.neumann_bias", THEORY_PAPER, _src("§3 truncation bias Δ_Q"),
        (1 - theta * mu) ** (Q + 1) * L0 * L1 / mu, r"\Delta_Q", "le",
        {"Q": "Neumann terms − 1"}, ("0 < θμ < 1 (θ < 1/L_1)",),
        ("Δ_Q = (1−θμ)^{Q+1} L_0 L_1/μ, consistent with ‖H^{-1} − Ĥ‖ ≤ (1−θμ)^{Q+1}/μ",)))

    _gao_common = (2 * G**2 + 3 * delta**2, 2 * sigma**2 + 3 * delta**2)
    _gao_thm1 = (
        2 * Delta / (eta * rho1 * T) + 20 * L_tilde**2 * D0 / (eta * T * rho2 * mu)
        + 4 * G**2 / (alpha * eta * T) + 500 * L_tilde**2 * sigma**2 / (3 * eta * T * beta * mu**2)
        + 4 * alpha * eta * sigma**2 / K
        + 500 * beta * eta * sigma**2 * L_tilde**2 / (3 * K * mu**2)
        + 4 * Delta_Q**2
        + 24 * alpha**2 * eta**4 * p**4 * (rho1**2 + rho2**2)
        * (2 * L_hat**2 + 500 * L1**2 * L_tilde**2 / (3 * mu**2)) * _gao_common[0]
        + 24 * beta**2 * eta**4 * p**4 * (rho1**2 + rho2**2)
        * (2 * L_hat**2 + 500 * L1**2 * L_tilde**2 / (3 * mu**2)) * _gao_common[1]
        + 24 * alpha**2 * p**2 * eta**2 * (rho1**2 + rho2**2)
        * (4 * L_hat**2 / alpha**2 + 500 * L1**2 * L_tilde**2 / (3 * beta**2 * mu**2))
        * _gao_common[0]
        + 24 * beta**2 * p**2 * eta**2 * (rho1**2 + rho2**2)
        * (4 * L_hat**2 / alpha**2 + 500 * L1**2 * L_tilde**2 / (3 * beta**2 * mu**2))
        * _gao_common[1]
    )
    gao_thm1 = _add(Bound(
        "gao.thm1", THEORY_PAPER, _src("Thm 1 (LocalBSGM)"), _gao_thm1, _GAO_Q, "le",
        {"T": "iterations", "K": "devices", "eta": "step η", "p": "communication period"},
        ("A1–A4", "θ < 1/L_1", "ρ_1, ρ_2, η as in Thm 1"),
        ("reading: the last line of the bound, duplicated in the extraction, is kept once",
         "Δ_Q kept as a symbol (see gao.neumann_bias)")))

    _add(Bound(
        "gao.thm1_limit", THEORY_PAPER, _src("Thm 1 as T → ∞"),
        sp.Add(*(t for t in _gao_thm1.args if not t.has(T))),  # = sp.limit(…, T, ∞) (a test)
        r"\lim_{T\to\infty}" + _GAO_Q, "le",
        {"eta": "step η", "p": "communication period", "Delta_Q": "truncation bias Δ_Q"},
        gao_thm1.assumptions,
        ("the limit T → ∞ of gao.thm1 (sympy): the terms in 1/T vanish; 4Δ_Q², the noise "
         "terms in ησ²/K and the drift terms in p²η² and p⁴η⁴ remain",)))

    # Q + 1 = log(1/ε)/log(1/(1−θμ)) makes (1−θμ)^{Q+1} = ε: a constant chosen inside Q = O(log 1/ε)
    _gao_Q_eps = sp.log(eps) / sp.log(1 - theta * mu) - 1
    _gao_dq_eps = gao_delta_q.expr.subs(Q, _gao_Q_eps)
    _GAO_Q_NOTE = ("GAO-R9: Q + 1 = log(1/ε)/log(1/(1−θμ)) (so Δ_Q = ε L_0L_1/μ): a constant "
                   "chosen inside Cor's Q = O(log(1/ε))")
    _gao_eta1, _gao_p = c_eta * K * eps, c_p / (K * sp.sqrt(eps))
    _gao_T1 = c_T * kappa**5 / (K * eps**2)
    gao_thm1_rates = _add(gao_thm1.derive(
        "gao.thm1_cor1_steps", {"eta": _gao_eta1, "p": _gao_p, "rho_1": c_rho / kappa**5,
                                "Delta_Q": _gao_dq_eps},
        "Cor 1's η = c_η K ε, p = c_p/(K ε^{1/2}), Remark 1's ρ_1 = c_ρ/κ⁵ substituted; T free; "
        + _GAO_Q_NOTE, source=_src("Thm 1 with Cor 1's η, p, Q")))
    _add(gao_thm1_rates.derive(
        "gao.cor1_schedule", {"T": _gao_T1}, "Cor 1's T = c_T κ⁵/(K ε²) substituted",
        source=_src("Thm 1 at Cor 1's schedule")))
    _add(Bound(
        "gao.cor1_iterations", THEORY_PAPER, _src("Cor 1 / Remark 2 (iterations T)"),
        _gao_T1 / c_T, "T", "O", {"epsilon": "accuracy", "K": "devices", "kappa": "κ = L_1/μ"},
        notes=("iteration complexity = Cor 1's T schedule",)))
    _add(Bound(
        "gao.cor1_communication", THEORY_PAPER, _src("Cor 1 / Remark 2 (T/p)"),
        (_gao_T1 / _gao_p) * c_p / c_T, "T/p", "O",
        {"epsilon": "accuracy", "kappa": "κ"},
        notes=("T/p computed from Cor 1's T and p schedules (K cancels: no speedup)",
               "GAO-R6: p = 1/(Kε^{1/2}) > 1 needs K < ε^{−1/2}")))

    _add(Bound(
        "gao.rem2_hvp", THEORY_PAPER, _src("Remark 2 (Hessian-vector complexity)"),
        _gao_T1 / c_T, "HVP calls", "O", {"epsilon": "accuracy", "K": "devices",
                                          "kappa": "κ = L_1/μ"},
        notes=("stated Õ(κ⁵/(Kε²)); footnote 1: Õ drops the log term",)))
    _A = p / T + 1 / (K ** _R(2, 3) * T ** _R(2, 3))
    _lnT = sp.log(T + 1)
    _gao_thm2 = _A * (
        2 * Delta / rho1 + 4 * G**2 + 500 * L_tilde**2 * sigma**2 / (3 * mu**2)
        + 32 * sigma**2 * _lnT
        + 4000 * sigma**2 * L_tilde**2 * _lnT / (3 * mu**2)
        + 4 * Delta_Q**2 * K ** _R(2, 3) * (T + 1) ** _R(2, 3)
        + 510 * (rho1**2 + rho2**2) * 96 * 8 * sigma**2 * L_tilde**2 * _lnT / mu**2
        + 510 * (rho1**2 + rho2**2) * 144 * 8 * delta**2 * L_tilde**2 * _lnT / mu**2)
    gao_thm2 = _add(Bound(
        "gao.thm2", THEORY_PAPER, _src("Thm 2 (LocalBSGVRM)"), _gao_thm2, _GAO_Q, "le",
        {"T": "iterations", "K": "devices", "p": "communication period"},
        ("A1–A4", "α, β, η_t, ρ, p, S as in Thm 2"),
        ("A = p/T + 1/(K^{2/3}T^{2/3})", "Δ_Q kept as a symbol (see gao.neumann_bias)")))
    _add(Bound(
        "gao.thm2_limit", THEORY_PAPER, _src("Thm 2 as T → ∞"), sp.limit(_gao_thm2, T, sp.oo),
        r"\lim_{T\to\infty}" + _GAO_Q, "le", {"Delta_Q": "truncation bias Δ_Q"},
        ("A1–A4", "α, β, η_t, ρ, p, S as in Thm 2"),
        ("the limit T → ∞ of gao.thm2 (sympy): every other term carries p/T, "
         "(KT)^{-2/3} or (KT)^{-2/3}·ln(T + 1), whatever K, p, σ, δ and the steps",)))
    _gao_T2 = c_T * kappa**3 / (K * eps ** _R(3, 2))
    gao_thm2_rates = _add(gao_thm2.derive(
        "gao.thm2_cor2_steps", {"p": _gao_p, "Delta_Q": _gao_dq_eps},
        "Cor 2's p = c_p/(K ε^{1/2}) substituted; T free; " + _GAO_Q_NOTE,
        source=_src("Thm 2 with Cor 2's p, Q")))
    _add(gao_thm2_rates.derive(
        "gao.cor2_schedule", {"T": _gao_T2}, "Cor 2's T = c_T κ³/(K ε^{3/2}) substituted",
        source=_src("Thm 2 at Cor 2's schedule")))
    _add(Bound(
        "gao.cor2_iterations", THEORY_PAPER, _src("Cor 2 / Remark 4 (iterations T)"),
        _gao_T2 / c_T, "T", "O", {"epsilon": "accuracy", "K": "devices", "kappa": "κ"},
        notes=("iteration complexity = Cor 2's T schedule",
               "GAO-R4, GAO-R5: Thm 2's α = O(L̂²/K) vs Cor 2's O(L̂²/K²); Thm 2 bounds p by a "
               "constant")))
    _add(Bound(
        "gao.rem4_hvp", THEORY_PAPER, _src("Remark 4 (Hessian-vector complexity)"),
        _gao_T2 / c_T, "HVP calls", "O", {"epsilon": "accuracy", "K": "devices",
                                          "kappa": "κ"},
        notes=("stated Õ(κ³/(Kε^{3/2})); footnote 1: Õ drops the log term",)))
    _add(Bound(
        "gao.cor2_communication", THEORY_PAPER, _src("Cor 2 / Remark 4 (T/p)"),
        (_gao_T2 / _gao_p) * c_p / c_T, "T/p", "O",
        {"epsilon": "accuracy", "kappa": "κ"},
        notes=("T/p computed from Cor 2's T and p schedules (K cancels)",)))
    return out
