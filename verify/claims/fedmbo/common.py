"""FedMBO (Huang, Zhang & Ji, ICML 2023): the instances, constants and helpers shared by the
families of claims (the PHE instance and estimator plumbing, the scalar instances, the proof's
constants of Thm 1 and Cor. 1, the hypotheses of Props. 1–3 and Lemma 5); described in the
package docstring."""

from __future__ import annotations

import functools
import math

import numpy as np

from bilevel_theory import make_context
from bilevel_theory.estimators import neumann_bias_matrix, phe
from bilevel_theory.problems import QuadraticBilevel
from bilevel_theory.problems.families import Dense
from bilevel_theory.problems.quadratic import shared

from ...claim import Condition, GpuScale
from ...kit import PaperClaims, lower_level_conditions

P = PaperClaims("fedmbo")
PAPER = P.paper.name
CHUNK = 16  # replicates per estimator call (bounds memory at large chain counts)

#: Client count of the ``full`` budget on a GPU (``m = 10⁶``, ``n`` up to ``10⁵``).
GPU_CLIENTS = 10 ** 6
#: Sampled clients ``n`` swept by the n-claims' ``full`` budget on a GPU: 4 per decade to 10⁵.
GPU_SAMPLED = tuple(sorted({round(10 ** (k / 4)) for k in range(21)}))


def _gpu(replicates: int) -> GpuScale:
    """The n-claims' GPU plan: ``m = 10⁶`` clients, ``n`` over :data:`GPU_SAMPLED`."""
    return GpuScale(GPU_SAMPLED, replicates, {"clients": GPU_CLIENTS})


def _child_seed(seed: int, *keys: int) -> int:
    return int(np.random.SeedSequence([int(seed), *keys]).generate_state(1)[0])


def _host(ctx, a) -> np.ndarray:
    return np.asarray(ctx.oracle.backend.to_numpy(a), dtype=float)


def _batch(ctx, v: np.ndarray):
    """``v`` broadcast over the context's replicates, on its backend."""
    v = np.atleast_1d(np.asarray(v, dtype=float))
    return ctx.xp.asarray(np.broadcast_to(v, (ctx.replicates, v.shape[-1])).copy())


# =============================================================================================
# PHE (Algorithm 2): the instances, the estimator's outputs
# =============================================================================================

PHE_POINT = (np.ones(2), np.zeros(2))
#: Clients are sampled with replacement, in PHE and in the inner loop (FEDMBO-R4, FEDMBO-R12).
REPLACE = True


@functools.cache
def phe_problem(noise: float = 0.0, hessian_noise: float = 0.0, coupling: float = 0.5,
                seed: int = 1, clients: int = 100) -> QuadraticBilevel:
    """The PHE instance (package docstring); ``noise`` / ``hessian_noise`` as in the claims;
    ``clients = 10⁶`` on a GPU (:data:`GPU_CLIENTS`)."""
    return QuadraticBilevel.random(clients=clients, dim_x=2, dim_y=2, kappa=2.0, heterogeneity=0.5,
                                   noise=noise, hessian_noise=hessian_noise, seed=seed,
                                   coupling=coupling, storage="structured")


@functools.lru_cache(maxsize=64)
def thm1_family(knob: float, clients: int = 100) -> QuadraticBilevel:
    """The Theorem-1 instances: 100 clients (or ``clients``), dims 2, seed 0, heterogeneity 0.5,
    coupling 0.2, ``upper_mu = 20``, noise 10, Hessian noise 0.3, the ``kappa`` knob free
    (``μ_g = 1``; the knob moves ``ℓ_{g,1}``)."""
    return QuadraticBilevel.random(clients=clients, dim_x=2, dim_y=2, kappa=knob,
                                   heterogeneity=0.5, noise=10.0, hessian_noise=0.3, seed=0,
                                   coupling=0.2, upper_mu=20.0)


@functools.cache
def scalar_problem(a: float, b: float, q: float = 1.0, f_curvature: float = 0.0
                   ) -> QuadraticBilevel:
    """The scalar instance ``g = ½ay² − bxy``, ``f = qy`` (one client, noise-free): ``μ_g = a``,
    ``ℓ_{g,1} = (a + √(a² + 4b²))/2`` (the norm of the joint Hessian ``[[0, −b], [−b, a]]``),
    ``ℓ_{f,1} = 0``, ``ℓ_{f,0} = |q|`` on the whole space, ``σ_f = σ_{g,2} = σ_g = 0``.
    ``f_curvature = c``: ``f = (c/2)(x² + y²) + qy`` instead (``ℓ_{f,1} = |c|``)."""
    z, f2 = np.zeros((1, 1)), np.full((1, 1), float(f_curvature))
    spec = {"family": "scalar", "a": float(a), "b": float(b), "q": float(q)}
    if f_curvature:
        spec["f_curvature"] = float(f_curvature)
    return QuadraticBilevel(
        kind="bilevel", A=Dense(np.full((1, 1, 1), float(a))), B=Dense(np.full((1, 1, 1), float(b))),
        c=np.zeros((1, 1)), P=f2, R=shared(z, 1), S=shared(f2, 1), p=np.zeros((1, 1)),
        q=np.full((1, 1), float(q)), Gxx=z, e=None, grad_noise=0.0, hessian_noise=0.0,
        spec=spec, radius=10.0)


SCALAR_POINT = (np.ones(1), np.zeros(1))  # ∇f is constant: every point is alike


@functools.lru_cache(maxsize=64)
def kappa_scalar(kappa_g: float, q: float = 1.0, f_curvature: float = 0.0) -> QuadraticBilevel:
    """:func:`scalar_problem` with ``a = μ_g = 1``, ``q = 1`` (default) and ``b = √(κ_g² − κ_g)``, so that
    ``ℓ_{g,1} = κ_g`` exactly: the κ_g-sweeps' family, on which ``‖B̄‖ = √(ℓ_{g,1}(ℓ_{g,1} −
    μ_g))`` is Prop. 1's worst case at every ``κ_g`` (``bias_bound_search``); ``q`` and
    ``f_curvature`` as in :func:`scalar_problem`."""
    if not (isinstance(kappa_g, int | float) and 1.0 <= kappa_g <= 1e6):
        raise ValueError(f"`kappa_g` must be in [1, 1e6], got {kappa_g!r}")
    kappa_g = float(kappa_g)
    return scalar_problem(a=1.0, b=math.sqrt(kappa_g * kappa_g - kappa_g), q=q,
                          f_curvature=f_curvature)


def _grads_f(problem, x, y):
    """``(∇ₓf̄(x, y), ∇_y f̄(x, y))`` of the global upper level (closed form)."""
    C = problem.host.closed_form
    return x @ C.P + y @ C.R.T + C.p, x @ C.R + y @ C.S + C.q


def phe_mean(problem, x, y, neumann_steps: int, scale: float) -> np.ndarray:
    """``H̄ = E[H_i | F^k] = ∇ₓf̄ + B̄ᵀĀ⁻¹(I − (I − Ā/ℓ)^N)∇_y f̄`` (clients with replacement):
    the surrogate ``∇̄f`` plus the exact Neumann bias ``B̄ᵀ(−Ā⁻¹(I − Ā/ℓ)^N)∇_y f̄``."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    _, gy = _grads_f(problem, x, y)
    bias = (neumann_bias_matrix(problem, neumann_steps, scale) @ gy) @ problem.host.closed_form.B
    return np.asarray(problem.surrogate_hypergradient(x, y), float) + bias


def phe_fixed(ctx, x, y, neumann_steps: int, chains: int, scale: float):
    """Mutant of PHE: the deterministic truncation ``H_i = ∇ₓf − ∇²_{xy}g (1/ℓ) Σ_{j<N}
    Π_{l≤j}(I − ∇²_{yy}g_{c_i^l}/ℓ) ∇_y f`` (every chain runs all ``N − 1`` steps; fresh client
    per step, with replacement).  Same conditional mean as PHE (independent factors), without
    the ``N/ℓ`` weight of the short chains.  Returns ``H (R, n, dim_x)``."""
    o = ctx.oracle
    xb, yb = x[:, None, :], y[:, None, :]
    C0 = o.sample_clients(ctx.replicates, chains, REPLACE)
    d = o.grad_x_f(C0, xb, yb)
    r = o.grad_y_f(C0, xb, yb)
    total = r
    for _ in range(1, neumann_steps):
        r = r - o.hvp_yy_g(o.sample_clients(ctx.replicates, chains, REPLACE), xb, yb, r) / scale
        total = total + r
    return d - o.jvp_xy_g(o.sample_clients(ctx.replicates, chains, REPLACE), xb, yb, total / scale)


def _phe_outputs(problem, x, y, N: int, chains: int, replicates: int, seed: int, backend: str,
                 scale: float | None = None, *, fixed: bool = False,
                 shared_chains: bool = False) -> np.ndarray:
    """``H (replicates, chains, dim_x)`` from :func:`phe` (with replacement), in chunks.
    ``fixed``: :func:`phe_fixed` instead; ``shared_chains``: one chain copied ``chains`` times
    (the chains share their truncation and their clients, as FedNest's single IHGP chain)."""
    scale = problem.constants["ell_g1"] if scale is None else scale
    out = []
    for j, start in enumerate(range(0, replicates, CHUNK)):
        r = min(CHUNK, replicates - start)
        ctx = make_context(problem, r, _child_seed(seed, j), backend)
        X, Y = _batch(ctx, x), _batch(ctx, y)
        if fixed:
            H = phe_fixed(ctx, X, Y, int(N), int(chains), scale)
        else:
            H = phe(ctx, X, Y, int(N), 1 if shared_chains else int(chains), scale, replace=REPLACE)
        H = _host(ctx, H)
        out.append(np.repeat(H, int(chains), axis=1) if shared_chains and not fixed else H)
    return np.concatenate(out)


def _client_terms(problem, x, y):
    """Every client's ``∇ₓf_c, ∇_y f_c`` at ``(x, y)`` (exact) and its ``∇²_{yy}g_c = A_c``,
    ``∇²_{xy}g_c = −B_cᵀ``: ``d (K, dₓ)``, ``r (K, d_y)``, ``A (K, d_y, d_y)``,
    ``J (K, dₓ, d_y)``."""
    h = problem.host
    K = h.clients
    idx = np.arange(K)[None]
    xb = np.broadcast_to(np.asarray(x, float), (1, K, h.dim_x))
    yb = np.broadcast_to(np.asarray(y, float), (1, K, h.dim_y))
    d, r = h.exact_grad_x_f(idx, xb, yb)[0], h.exact_grad_y_f(idx, xb, yb)[0]
    return d, r, h.A.dense_range(0, K), -np.swapaxes(h.B.dense_range(0, K), -1, -2)


# =============================================================================================
# The proof's constants (Thm 1, Cor. 1)
# =============================================================================================

NK_REF = 1 / 25  # the largest n/K of every Theorem-1 grid: α̂₃ puts the cap exactly there
B2_FACTOR = 1e-3  # N chosen so that b² ≤ 10⁻³/√(nK) at the largest nK of every grid
X0_OFFSET = 0.1  # ‖x⁰ − x*‖: balances the optimization and noise terms (α̂₃ vs 1/α̂₃)
S_MIN = 64  # minibatch size: ≥ κ_g⁴/T (Cor. 1) and large enough that the inner-loop noise terms
# (eq. 22c: α̂₃/(ST√(nK)) + α̂₃²/(STK) + …, O(1/K) at fixed n) stay below the 1/√(nK) term
EPS_N = 8  # n of the ε-sweep (and of the κ_g-sweep, fedmbo.kappa_iterations)


def proof_constants(problem: QuadraticBilevel, nk_max: float) -> dict:
    """The proof's constants for ``problem`` (eqs. 18, 20, 21; Cor. 1's ``η``), with ``N`` for
    the largest ``n·K`` of a grid ``nk_max``.

    ``L_yx`` (Lemma 3, Chen et al. 2021a) ``= (ℓ_{g,2} + ℓ_{g,2}L_y)/μ_g + ℓ_{g,1}(ℓ_{g,2} +
    ℓ_{g,2}L_y)/μ_g² = 0`` for constant Hessians, so the η terms vanish; ``β̄`` is the proof's
    eq. (20) (the statement's ``1/(2nμ_g)`` factor multiplies ``L_yx = 0`` anyway).  ``T`` is
    the smallest with ``α̂₂ ≥ α̂₁``; ``S = max(64, ⌈κ_g⁴/T⌉)`` (Cor. 1's ``ST = Ω(κ_g⁴)`` is a
    lower bound; 64 keeps the inner-loop noise terms of eq. (22c) small); ``N`` the
    smallest with ``b² ≤ 10⁻³/√(nK)`` (``b`` of Prop. 1) on every grid point (Cor. 1's
    ``N = Ω(κ_g log K)`` with a constant large enough, FEDMBO-R9: ``b = K^{−1/4}`` is not enough)."""
    c = problem.constants
    mu, ell, Ly, Mf, Lf = c["mu_g"], c["ell_g1"], c["L_y"], c["M_f"], c["L_f"]
    g2 = c["ell_g2"]
    L_yx = (g2 + g2 * Ly) / mu + ell * (g2 + g2 * Ly) / mu ** 2
    eta = Mf / Ly
    sf2, sg22 = c["sigma_f2"], c["sigma_g22"]
    sigma_t2 = sf2 + 3 / mu ** 2 * ((sf2 + c["ell_f0"] ** 2) * (sg22 + 2 * ell ** 2) + sf2 * ell ** 2)
    D2 = (c["ell_f0"] + c["ell_f0"] * ell / mu + c["ell_f1"] * ell / mu) ** 2 + sigma_t2
    a1 = 1 / (2 * Lf + 4 * Mf * Ly + 2 * Mf * L_yx / (Ly * eta))
    beta_bar = 5 * Mf * Ly / mu + eta * L_yx * D2 * a1 / (2 * mu)
    T = max(1, math.ceil(2 * ell * beta_bar * a1))
    a2 = T / (2 * ell * beta_bar)
    S = max(S_MIN, math.ceil(c["kappa_g"] ** 4 / T))
    a3 = min(a1, a2) / math.sqrt(NK_REF)
    kg = c["kappa_g"]
    b0 = kg * c["ell_f1"]
    N = max(1, math.ceil(math.log(b0 ** 2 * math.sqrt(nk_max) / B2_FACTOR)
                         / (2 * math.log(kg / (kg - 1)))))
    x0 = np.asarray(problem.x_star) + X0_OFFSET * np.ones(problem.dim_x) / math.sqrt(problem.dim_x)
    return dict(alpha_hat1=a1, alpha_hat2=a2, alpha_hat3=a3, beta_bar=beta_bar, T=T, S=S, N=N,
                L_yx=L_yx, eta=eta, b2=b0 ** 2 * ((kg - 1) / kg) ** (2 * N), x0=x0,
                y0=np.asarray(problem.y_star(x0), float))


# =============================================================================================
# Conditions
# =============================================================================================

def _kg(problem) -> float:
    return problem.constants["kappa_g"]


_TOUCH_PHE = ("FEDMBO-R2", "FEDMBO-R3", "FEDMBO-R4")


def _curvature_conditions(problem, role: str) -> tuple[Condition, ...]:
    """Assumptions 1–2 on the lower level of ``problem``: ``μ_g > 0`` and ``‖∇²_{yy}g_i‖ ≤
    ℓ_{g,1}`` (``role``: what ``ℓ_{g,1}`` is to the claim's algorithm).  Assumptions 3–4 hold by
    the oracles' construction (unbiased, additive noise of the configured variance)."""
    return lower_level_conditions(
        problem, "g_i μ_g-strongly convex in y, μ_g > 0 (Assumption 2)",
        "‖∇²_{yy}g_i‖ ≤ ℓ_{g,1} (Assumption 1: ∇g_i ℓ_{g,1}-Lipschitz)",
        ell_note=f"max_i λ_max(∇²_{{yy}}g_i); ℓ_{{g,1}} is {role}")


def _phe_conditions(problem, point, N: int | None = None) -> tuple[Condition, ...]:
    """Prop. 1's and Prop. 2's hypotheses (Assumptions 1–4, the input ``N``) for PHE on
    ``problem`` (an instance, or ``problem(v)`` at sweep value ``v``) at ``point``; ``N`` the
    truncation, or ``None`` where ``N`` is swept.  The
    chains are Monte-Carlo samples of one ``H_i`` (whose law does not depend on PHE's ``n``),
    so ``n ≤ m`` is not a condition here."""
    of = problem if callable(problem) else (lambda v: problem)

    def grad(v) -> float:
        d, r, _, _ = _client_terms(of(v), *point)
        return float(np.sqrt((d ** 2).sum(-1) + (r ** 2).sum(-1)).max())

    radius = getattr(problem, "radius", None)
    domain = f"‖x‖, ‖y‖ ≤ {radius:g}" if radius is not None else "each instance's domain"
    return (*_curvature_conditions(of, "PHE's Neumann scale (Alg. 2, eq. (5))"),
            Condition("f_i ℓ_{f,0}-Lipschitz, ‖∇f_i(x, y)‖ ≤ ℓ_{f,0} at the estimator's point "
                      "(Assumption 1)", grad, lambda v: of(v).constants["ell_f0"],
                      note=f"max_i ‖∇f_i‖ at the claim's (x, y); the instance's ℓ_{{f,0}} holds "
                           f"on {domain}"),
            Condition("N ≥ 1, N_i ~ U{0, …, N − 1} (Alg. 2; N the input of Alg. 1)",
                      float if N is None else N, 1, relation=">="))


def _replacement_condition(source: str, n_max_note: str) -> Condition:
    """The proofs' sampling of clients with replacement (FEDMBO-R4), as the measures run it."""
    return Condition(f"clients sampled with replacement ({source})", float(REPLACE), 1.0,
                     relation="==", note=n_max_note)


def _pow2(lo: int, hi: int) -> list[int]:
    return [2 ** k for k in range(lo, hi)]
