"""FedMBO, Prop. 1 (Huang, Zhang & Ji, ICML 2023): the bias of PHE (Alg. 2), its geometric
decay in ``N`` and its bound, as stated (``ℓ_{f,1}``) and as proved (``ℓ_{f,0}``)."""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.optimize import minimize

from bilevel_theory import make_context, rates
from bilevel_theory.estimators import phe
from bilevel_theory.problems.quadratic import block_norm

from ...claim import Mutant, per_budget
from ...kit import kappa_log_condition, kappa_log_steps, law, per_replicate, slow_direction
from .common import (
    _TOUCH_PHE,
    PHE_POINT,
    REPLACE,
    SCALAR_POINT,
    P,
    _client_terms,
    _grads_f,
    _kg,
    _phe_conditions,
    _phe_outputs,
    kappa_scalar,
    phe_mean,
    phe_problem,
    scalar_problem,
)

BOUND_INSTANCE = dict(coupling=2.0, seed=2)  # Prop. 1 as stated, on a random instance
#: Prop. 1's worst case at κ_g = 625/49: a = 1, b = 600/49, so ℓ_{g,1} = 625/49 and
#: ‖B̄‖/ℓ_{g,1} = 24/25 = √(1 − 1/κ_g) exactly (:func:`bias_bound_search`).
TIGHT = dict(a=1.0, b=600 / 49)
PROP1_SQ = rates.BOUNDS["fedmbo.prop1_bias_squared"]
PROP1_PROOF_SQ = rates.BOUNDS["fedmbo.prop1_bias_proof_squared"]


def _bias_squared(problem, x, y, N, chains, replicates, seed, backend,
                  scale: float | None = None) -> np.ndarray:
    """Unbiased per-replicate estimate of ``‖E[H_i] − ∇̄f‖²``: ``⟨ē₁ − ∇̄f, ē₂ − ∇̄f⟩`` with
    ``ē₁, ē₂`` the means of two independent halves of the chains (a U-statistic: no closed-form
    ingredient besides the surrogate ``∇̄f``)."""
    H = _phe_outputs(problem, x, y, N, chains, replicates, seed, backend, scale)
    sur = np.asarray(problem.surrogate_hypergradient(x, y), float)
    half = chains // 2
    e1, e2 = H[:, :half].mean(axis=1) - sur, H[:, half:2 * half].mean(axis=1) - sur
    return (e1 * e2).sum(axis=-1)


BIAS_CHAINS = 1 << 15


def phe_bias(N, replicates, seed, backend="numpy", *, scale_factor: float = 1.0):
    """Prop. 1: ``‖H̄ − ∇̄f‖²`` at ``(x, y) = (1, 0)``, noise-free, ``2^15`` chains per replicate.
    ``scale_factor``: mutant, the Neumann scale ``ℓ`` multiplied by it."""
    problem = phe_problem()
    x, y = PHE_POINT
    scale = scale_factor * problem.constants["ell_g1"]
    value = _bias_squared(problem, x, y, int(N), BIAS_CHAINS, replicates, seed, backend, scale)
    exact = np.linalg.norm(phe_mean(problem, x, y, int(N), scale)
                           - problem.surrogate_hypergradient(x, y)) ** 2
    return {"value": value, "exact": per_replicate(exact, replicates)}


def phe_moments(problem, x, y, neumann_steps: int, scale: float
                ) -> tuple[np.ndarray, np.ndarray]:
    """Mean ``H̄`` and covariance ``Σ`` of one PHE chain's ``H_i`` (noise-free instance,
    clients with replacement, ``N_i ~ U{0, …, N−1}``), exactly: with ``M_c = I − A_c/ℓ``,
    ``T(X) = E_c[M_c X M_cᵀ]`` and ``v = (N/ℓ)Π M ∇_y f_{c⁰}``,
    ``E[vvᵀ] = (N/ℓ²) Σ_{k<N} T^k(E[∇_y f ∇_y fᵀ])``, ``E[∇ₓf vᵀ] = (1/ℓ) Σ_{k<N}
    E[∇ₓf ∇_y fᵀ] M̄^{kᵀ}`` (the head's two gradients share client ``c⁰``; the hops and the
    final Jacobian's client are independent of it)."""
    d, r, A, J = _client_terms(problem, x, y)
    K, dy = r.shape
    M = np.eye(dy) - A / scale
    m_bar, j_bar = M.mean(0), J.mean(0)
    rr, dr = r.T @ r / K, d.T @ r / K
    v_bar, W, dv = np.zeros(dy), np.zeros((dy, dy)), np.zeros((d.shape[1], dy))
    power, X = np.eye(dy), rr
    for _ in range(int(neumann_steps)):
        v_bar, W, dv = v_bar + power @ r.mean(0), W + X, dv + dr @ power.T
        power, X = m_bar @ power, np.einsum("cij,jk,clk->il", M, X, M) / K
    v_bar, W, dv = v_bar / scale, W * neumann_steps / scale**2, dv / scale
    mean = d.mean(0) - j_bar @ v_bar
    second = (d.T @ d / K - dv @ j_bar.T - j_bar @ dv.T
              + np.einsum("cij,jk,clk->il", J, W, J) / K)
    return mean, second - np.outer(mean, mean)


def bias_relative_error(N: int, replicates: int, chains: int = BIAS_CHAINS) -> float:
    """Standard error of the replicate mean of :func:`phe_bias`'s estimate over the squared
    bias ``‖b‖²`` it estimates, in closed form: the U-statistic ``⟨ē₁ − ∇̄f, ē₂ − ∇̄f⟩`` over
    two halves of ``h`` chains has variance ``2bᵀΣb/h + tr(Σ²)/h²`` (:func:`phe_moments`)."""
    problem = phe_problem()
    x, y = PHE_POINT
    mean, cov = phe_moments(problem, x, y, int(N), problem.constants["ell_g1"])
    b = mean - np.asarray(problem.surrogate_hypergradient(x, y), float)
    h = chains // 2
    var = 2 * b @ cov @ b / h + np.trace(cov @ cov) / h**2
    return float(math.sqrt(var / replicates) / (b @ b))


#: the Monte-Carlo error allowed at the window's upper end, relative to the squared bias
BIAS_MC_REL = 0.25


def bias_window_end(replicates: int, rel: float = BIAS_MC_REL) -> int:
    """The largest ``N`` (up to 40) up to which :func:`bias_relative_error` stays at most
    ``rel`` with ``replicates`` replicates: beyond it the fitted means are mostly noise."""
    for N in range(1, 41):
        if bias_relative_error(N, replicates) > rel:
            return N - 1
    return 40


def bias_window(rel: float = 0.01) -> int:
    """The smallest ``N`` from which the exact local semilog slope of ``‖H̄ − ∇̄f‖²`` (closed
    form, :func:`phe_mean`) stays within ``rel`` of ``2 log((κ_g − 1)/κ_g)``: the faster
    Neumann modes have died out."""
    problem = phe_problem()
    x, y = PHE_POINT
    c = problem.constants
    ell, target = c["ell_g1"], 2 * math.log(1 - 1 / c["kappa_g"])
    sur = problem.surrogate_hypergradient(x, y)
    b2 = [np.sum((phe_mean(problem, x, y, N, ell) - sur) ** 2) for N in range(1, 41)]
    ok = np.abs(np.diff(np.log(b2)) - target) <= rel * abs(target)
    bad = np.flatnonzero(~ok)
    return int(bad[-1] + 2) if bad.size else 1


# --- Prop. 1 as stated (ℓ_{f,1}) and as proved (ℓ_{f,0}) ------------------------------------

@functools.cache
def bias_bound_point() -> tuple[np.ndarray, np.ndarray]:
    """``x = ρv, y = y*(x)`` on the boundary of the domain of the random instance: ``v ∝ Gᵀu₁``
    (``G = Rᵀ + SJ``, ``u₁`` the slowest Neumann mode: ``∇_y f`` grows fastest along it) and
    ``ρ`` the largest with ``‖x‖, ‖y*(x)‖ ≤ radius`` (the ball on which ``ℓ_{f,0}`` holds)."""
    problem = phe_problem(**BOUND_INSTANCE)
    C = problem.host.closed_form
    u1 = slow_direction(problem)
    v = (C.R.T + C.S @ C.J).T @ u1
    v = v / np.linalg.norm(v)
    if u1 @ (_grads_f(problem, v, problem.y_star(v))[1]) < 0:
        v = -v
    lo, hi = 0.0, problem.radius
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if np.linalg.norm(problem.y_star(mid * v)) <= problem.radius else (
            lo, mid)
    x = lo * v
    return x, np.asarray(problem.y_star(x), float)


def prop1_bound(constants, N: int, lip: str = "ell_f0", factor: float = 1.0) -> float:
    """Prop. 1's ``b = κ_g·L·((κ_g − 1)/κ_g)^N`` with ``L = ℓ_{f,0}`` (proof) or ``ℓ_{f,1}``
    (statement), times ``factor`` (a mutant's wrong constant), squared."""
    kg = constants["kappa_g"]
    return (factor * kg * constants[lip] * ((kg - 1) / kg) ** int(N)) ** 2


def _bias_bound(N, replicates, seed, backend, problem, point, lip, factor=1.0,
                scale_factor=1.0):
    scale = scale_factor * problem.constants["ell_g1"]
    value = _bias_squared(problem, *point, int(N), 1 << 13, replicates, seed, backend, scale)
    return {"value": value,
            "bound": per_replicate(prop1_bound(problem.constants, N, lip, factor), replicates)}


def phe_bias_bound_stated(N, replicates, seed, backend="numpy", *, lip: str = "ell_f1"):
    """``‖H̄ − ∇̄f‖²`` on the random instance against Prop. 1's ``b² = (κ_g ℓ_{f,1} ρ^N)²``
    (as stated; ``lip="ell_f0"``: the proof's constant, the repairing mutant)."""
    return _bias_bound(N, replicates, seed, backend, phe_problem(**BOUND_INSTANCE),
                       bias_bound_point(), lip)


def phe_bias_bound_linear(N, replicates, seed, backend="numpy", *, lip: str = "ell_f1"):
    """``‖H̄ − ∇̄f‖²`` on the scalar instance with a linear upper level (``ℓ_{f,1} = 0``: the
    stated ``b`` is 0) against the stated ``b²`` (``lip="ell_f0"``: the repairing mutant)."""
    return _bias_bound(N, replicates, seed, backend, scalar_problem(**TIGHT), SCALAR_POINT, lip)


def phe_bias_bound_proof(N, replicates, seed, backend="numpy", *, factor: float = 1.0,
                         scale_factor: float = 1.0):
    """``‖H̄ − ∇̄f‖²`` against the proof's ``(κ_g ℓ_{f,0} ρ^N)²`` at its worst case (the scalar
    :data:`TIGHT` instance); mutants: ``factor`` multiplies the constant, ``scale_factor`` the
    PHE's Neumann scale ``ℓ_{g,1}`` (the estimator changed, the bound not)."""
    return _bias_bound(N, replicates, seed, backend, scalar_problem(**TIGHT), SCALAR_POINT,
                       "ell_f0", factor, scale_factor)


KAPPA_N = 3  # N of the κ_g-sweep (the worst case's ratio does not depend on N)


def phe_bias_bound_vs_kappa(kappa_g, replicates, seed, backend="numpy", *,
                            constant: str = "kappa_g", scale_factor: float = 1.0):
    """:func:`phe_bias_bound_proof` with ``N = 3`` and ``κ_g`` swept on the worst-case family
    :func:`~bilevel_theory.verify.claims.fedmbo.common.kappa_scalar` (``(bias/bound)² = 1 −
    1/κ_g``).  Mutants: ``constant="kappa_g_minus_1"``, the bound's ``κ_g`` written ``κ_g −
    1``; ``scale_factor`` multiplies PHE's Neumann scale."""
    kappa_g = float(kappa_g)
    if constant not in ("kappa_g", "kappa_g_minus_1"):
        raise ValueError(f"`constant` must be 'kappa_g' or 'kappa_g_minus_1', got {constant!r}")
    factor = 1.0 if constant == "kappa_g" else (kappa_g - 1.0) / kappa_g
    return _bias_bound(KAPPA_N, replicates, seed, backend, kappa_scalar(kappa_g), SCALAR_POINT,
                       "ell_f0", factor, scale_factor)


def bias_bound_ratio(v: np.ndarray, N: int = 3, radius: float = 10.0) -> float:
    """``‖H̄ − ∇̄f‖/b_proof`` on a one-client scalar instance, from its knobs ``v = (a, b, G,
    P, R, S, p, q, x, y)`` (``g = ½ay² − bxy + ½Gx²``, ``f = ½Px² + Rxy + ½Sy² + px + qy``,
    the point ``(x, y)``), with the constants computed as the instances compute them
    (``ℓ_{g,1}`` the norm of the matrix of block norms, ``ℓ_{f,0} = ℓ_{f,1}√2·radius +
    ‖(p, q)‖``).  The ratio does not depend on ``N``."""
    a, b, G, Pq, R, S, p, q, x, y = (float(t) for t in v)
    ell = block_norm(abs(G), abs(b), a)
    ell_f1 = block_norm(abs(Pq), abs(R), abs(S))
    ell_f0 = ell_f1 * math.sqrt(2.0) * radius + math.hypot(p, q)
    rho = 1 - a / ell
    bias = abs(b) * abs(R * x + S * y + q) * rho ** N / a
    bound = (ell / a) * ell_f0 * rho ** N
    return bias / bound if bound > 0 else math.inf


def bias_bound_search(kappa_max: float, starts: int = 24, seed: int = 0) -> tuple[float, list]:
    """The largest ``(‖H̄ − ∇̄f‖/b_proof)²`` found by ``scipy.optimize.minimize`` (SLSQP, from
    ``starts`` random starts) over scalar instances with ``κ_g ≤ kappa_max`` and points of the
    domain ``‖x‖, ‖y‖ ≤ radius``: returns ``(ratio², knobs)``.  The supremum is
    ``1 − 1/κ_max`` (``docs/papers/fedmbo.md``), reached by a linear upper level and ``‖B̄‖ =
    √(ℓ_{g,1}(ℓ_{g,1} − μ_g))``."""
    rng = np.random.default_rng(seed)
    lo = [1e-3, -10, 0, -10, -10, -10, -10, -10, -10, -10]
    hi = [10, 10, 10, 10, 10, 10, 10, 10, 10, 10]

    def kappa_room(v):
        return kappa_max - block_norm(abs(v[2]), abs(v[1]), v[0]) / v[0]

    best, arg = -1.0, None
    for _ in range(starts):
        v0 = rng.uniform(lo, hi)
        v0[0] = rng.uniform(1, 10)
        v0[1] = rng.uniform(-1, 1) * v0[0]
        res = minimize(lambda v: -bias_bound_ratio(v), v0, method="SLSQP",
                       bounds=list(zip(lo, hi, strict=True)),
                       constraints=[{"type": "ineq", "fun": kappa_room}],
                       options={"maxiter": 500, "ftol": 1e-12})
        if kappa_room(res.x) >= -1e-9 and -res.fun > best:
            best, arg = float(-res.fun), [float(t) for t in res.x]
    return best ** 2, arg


# --- the bias at Cor 1's N(K) ------------------------------------------------------------------

def bias_at_cor1_N(K, replicates, seed, backend="numpy", *, kappa_factor: bool = True):
    """``‖E[H_i] − ∇̄f‖²`` (the squared bias that Prop. 1's ``b`` bounds) at Cor 1's
    ``N(K) = ⌈κ_g log K⌉``, on the :data:`TIGHT` scalar instance (``κ_g = 12.76``): PHE with
    ``truncation="full"``, the random truncation's expectation (one client, noise-free: the
    chain's clients are fixed, so this is ``E[H_i]`` itself, deterministic).  Mutant
    ``kappa_factor=False``: ``N = ⌈log K⌉``, the truncation without its ``κ_g`` factor."""
    prob = scalar_problem(**TIGHT)
    c = prob.constants
    N = kappa_log_steps(K, c["kappa_g"] if kappa_factor else 1.0)
    ctx = make_context(prob, 1, seed, backend)
    x, y = (ctx.xp.asarray(v)[None, :] * 1.0 for v in SCALAR_POINT)
    H = phe(ctx, x, y, N, 1, c["ell_g1"], REPLACE, truncation="full")[:, 0]
    sur = ctx.xp.asarray(prob.surrogate_hypergradient(*SCALAR_POINT))
    value = float(ctx.oracle.backend.to_numpy(((H - sur) ** 2).sum()))
    return {"value": per_replicate(value, replicates),
            "neumann_steps": per_replicate(N, replicates)}


# =============================================================================================
# Claims
# =============================================================================================

def _claims() -> list:
    prob = phe_problem()
    kg = _kg(prob)
    geo = rates.law_for(PROP1_SQ, "log_ratio", "N", subs={"kappa_g": kg})
    kg3 = _kg(phe_problem(**BOUND_INSTANCE))
    tight = scalar_problem(**TIGHT).constants
    kt = tight["kappa_g"]
    lo_bias = bias_window()
    # The standard grid reaches N = 9, the window's end, where 64 replicates leave a Monte-Carlo
    # error of a quarter of the squared bias: at seed 1 the interval straddled the band
    # (−1.013 [−1.133, −0.962] against −0.970 ± 0.097).  256 replicates halve it; the window,
    # computed from the smallest budget's 64, is unchanged.
    bias_reps = per_budget(64, 256, 256)
    hi_bias = bias_window_end(min(bias_reps.values()))
    bias_law = law(rates.law_for(PROP1_PROOF_SQ, "bound"))
    return [
        P.claim(
            "phe_bias_vs_N", role="confirmation",
            source=P.cite("Prop. 1 (eq. 5): the geometric ratio (κ_g − 1)/κ_g of its bound; "
                          "the bound's constant is tested by fedmbo.phe_bias_bound_stated and "
                          "fedmbo.phe_bias_bound_proof"),
            statement=(r"\|\bar{H} - \bar{\nabla} f\|^2\ \mathrm{decays\ geometrically\ in}"
                       r"\ N\ \mathrm{at\ ratio}\ ((\kappa_g - 1)/\kappa_g)^2\ (\mathrm{the"
                       r"\ ratio\ of\ Prop.\ 1's}\ b^2)"),
            kind="geometric", variable="N",
            quantity=r"\|\mathbb{E}[H_i] - \bar{\nabla} f\|^2",
            measure=phe_bias, scale="semilog",
            grid=per_budget(range(2, 9), range(1, 12), range(1, 15)),
            replicates=bias_reps,
            law=law(geo), tolerance=round(0.1 * abs(geo.value), 4), window=(lo_bias, hi_bias),
            window_derived=True,
            window_reason=(
                f"N ≥ {lo_bias}: computed (bias_window) from the closed-form bias as the first N "
                "from which its local semilog slope stays within 1% of 2 log((κ_g−1)/κ_g) (the "
                f"faster Neumann mode has died out); N ≤ {hi_bias}: computed (bias_window_end) "
                "as the last N at which the closed-form standard error of the replicate mean "
                f"(the chains' covariance in closed form, phe_moments; {min(bias_reps.values())} "
                f"replicates of 2^15 chains, the smallest budget) is at most "
                f"{BIAS_MC_REL:g} of the squared bias; the squared bias shrinks "
                f"{(kg / (kg - 1)) ** 2:.2f}× per step, its Monte-Carlo error does not"),
            mutants=(Mutant("scale_2ell", "PHE's Neumann scale is 2ℓ_{g,1} instead of ℓ_{g,1}: "
                            "the bias then decays as (1 − μ_g/(2ℓ_{g,1}))^N, slower than "
                            "Prop. 1's ((κ_g−1)/κ_g)^N", {"scale_factor": 2.0}, kind="neumann_scaling"),),
            schedule=("PHE (Alg. 2) alone at (x, y) = (1, 0), scale ℓ = ℓ_{g,1}, N swept; "
                      f"2^15 chains per replicate (clients with replacement), noise-free "
                      f"instance with κ_g = {kg:.3f}; ‖H̄ − ∇̄f‖² estimated without bias by "
                      "⟨ē₁ − ∇̄f, ē₂ − ∇̄f⟩ over two halves of the chains"),
            conditions=_phe_conditions(prob, PHE_POINT),
            touches=(*_TOUCH_PHE, "FEDMBO-R5")),
        P.claim(
            "phe_bias_bound_stated", role="finding",
            source=P.cite("Prop. 1 (statement, b with ℓ_{f,1})"),
            statement=(r"\|\bar{H} - \bar{\nabla} f\| \leq b = \kappa_g \ell_{f,1} "
                       r"((\kappa_g - 1)/\kappa_g)^N"),
            kind="bounded_by", variable="N", quantity=r"\|\bar{H} - \bar{\nabla} f\|^2",
            measure=phe_bias_bound_stated, scale="semilog",
            grid=per_budget(range(1, 7), range(1, 11), range(1, 15)),
            replicates=per_budget(16, 64, 128),
            law=law(rates.law_for(PROP1_SQ, "bound")), tolerance=0.0,
            expected="violated",
            reason=(
                "The measured ‖H̄ − ∇̄f‖² exceeds the stated b² at every N, at a point of the "
                f"domain (‖x‖, ‖y*(x)‖ ≤ 10, the ball on which ℓ_{{f,0}} holds; κ_g = {kg3:.2f}, "
                "coupling 2, instance seed 2). The bias is B̄ᵀĀ⁻¹(I − Ā/ℓ)^N∇_y f: it scales "
                "with ‖∇_y f‖ ≤ ℓ_{f,0} (Assumption 1), not with the Lipschitz constant ℓ_{f,1} "
                "of ∇f; adding a linear term to f_i raises it without changing ℓ_{f,1} "
                "(fedmbo.phe_bias_bound_linear: ℓ_{f,1} = 0, b = 0, positive bias). The appendix "
                "proof derives ℓ_{f,0} (FEDMBO-R5): with it the bound holds (mutant "
                "proof_constant; fedmbo.phe_bias_bound_proof at its worst case)."),
            mutants=(Mutant("proof_constant", "the bound with the proof's ℓ_{f,0} in place of "
                            "the statement's ℓ_{f,1} (the repair, FEDMBO-R5)",
                            {"lip": "ell_f0"}, kind="repair"),),
            schedule=("PHE at x = ρv, y = y*(x) on the boundary of the radius-10 domain "
                      "(v ∝ Gᵀu₁, G = Rᵀ + SJ: the direction in which ∇_y f grows fastest along "
                      "the slowest Neumann mode u₁), 2^13 chains per replicate, noise-free, "
                      "coupling 2, instance seed 2"),
            conditions=_phe_conditions(phe_problem(**BOUND_INSTANCE),
                                       bias_bound_point()),
            touches=("FEDMBO-R5", *_TOUCH_PHE)),
        P.claim(
            "phe_bias_bound_linear", role="finding",
            source=P.cite("Prop. 1 (statement, b with ℓ_{f,1})"),
            statement=(r"\ell_{f,1} = 0\ \Rightarrow\ \|\bar{H} - \bar{\nabla} f\| \leq b = 0"),
            kind="bounded_by", variable="N", quantity=r"\|\bar{H} - \bar{\nabla} f\|^2",
            measure=phe_bias_bound_linear, scale="semilog",
            grid=per_budget(range(1, 7), range(1, 11), range(1, 15)),
            replicates=per_budget(16, 64, 128),
            law=law(rates.law_for(PROP1_SQ, "bound")), tolerance=0.0,
            expected="violated",
            reason=(
                "A linear upper level f = qy meets Assumption 1 with ℓ_{f,1} = 0 and ℓ_{f,0} = |q| "
                "on the whole space, so the stated b = κ_gℓ_{f,1}((κ_g−1)/κ_g)^N is 0 for every "
                "N; but PHE's bias is bq((κ_g−1)/κ_g)^N/μ_g > 0 (the Neumann series is truncated "
                "whatever f is): measured ‖H̄ − ∇̄f‖² > 0 = b² at every N. The statement's ℓ_{f,1} "
                "is a typo for the proof's ℓ_{f,0} (FEDMBO-R5); with ℓ_{f,0} the bound holds "
                "(mutant proof_constant)."),
            mutants=(Mutant("proof_constant", "the bound with the proof's ℓ_{f,0} = |q| in place "
                            "of ℓ_{f,1} = 0 (the repair, FEDMBO-R5)", {"lip": "ell_f0"}, kind="repair"),),
            schedule=(f"scalar instance g = ½ay² − bxy, f = qy with a = 1, b = 600/49, q = 1 "
                      f"(ℓ_{{g,1}} = 625/49, κ_g = {kt:.4g}), one client, noise-free, at (1, 0); "
                      "PHE with 2^13 chains per replicate, N swept"),
            conditions=_phe_conditions(scalar_problem(**TIGHT), SCALAR_POINT),
            touches=("FEDMBO-R5", *_TOUCH_PHE)),
        P.claim(
            "phe_bias_bound_proof", role="confirmation",
            source=P.cite("Prop. 1 (appendix proof, ℓ_{f,0})"),
            statement=(r"\|\bar{H} - \bar{\nabla} f\| \leq \kappa_g \ell_{f,0} "
                       r"(1 - 1/\kappa_g)^N"),
            kind="bounded_by", variable="N", quantity=r"\|\bar{H} - \bar{\nabla} f\|^2",
            measure=phe_bias_bound_proof, scale="semilog",
            grid=per_budget(range(1, 7), range(1, 11), range(1, 15)),
            replicates=per_budget(16, 64, 128), law=bias_law, tolerance=0.0,
            mutants=(
                Mutant("kappa_minus_one", "the constant κ_g − 1 in place of κ_g (a bound too "
                       f"small by the factor {(kt - 1) / kt:.3f}): the worst case exceeds it",
                       {"factor": (kt - 1) / kt}, kind="bound"),
                Mutant("halved", "the constant halved: the worst case exceeds it",
                       {"factor": 0.5}, kind="bound"),
                Mutant("scale_2ell", "PHE's Neumann scale is 2ℓ_{g,1} instead of ℓ_{g,1} (the "
                       "estimator changed, the bound not): the bias decays as (1 − μ_g/"
                       "(2ℓ_{g,1}))^N, slower than the bound's (1 − 1/κ_g)^N, and exceeds it at "
                       "the worst case", {"scale_factor": 2.0}, kind="neumann_scaling")),
            schedule=(
                f"at the bound's worst case: scalar instance g = ½ay² − bxy, f = qy, a = 1, "
                f"b = 600/49, q = 1 (ℓ_{{g,1}} = 625/49, κ_g = {kt:.4g}, ‖B̄‖/ℓ_{{g,1}} = 24/25), "
                "one client, noise-free, at (1, 0); PHE with 2^13 chains per replicate. "
                "bias_bound_search (scipy SLSQP over the scalar instances' knobs and the points "
                "of the domain, κ_g capped) finds the largest (bias/bound)² to be 1 − 1/κ_g, "
                f"here {1 - 1 / kt:.4f} for every N: the slack is 1/(1 − 1/κ_g) in the square, "
                "and it tends to 1 as κ_g → ∞ (the proof's bound is tight). A bound too small "
                f"by a factor c (in norm) is detected when c² < {1 - 1 / kt:.4f}·(1 − Monte-"
                "Carlo error): c ≲ 0.95 here"),
            conditions=_phe_conditions(scalar_problem(**TIGHT), SCALAR_POINT),
            touches=("FEDMBO-R5", *_TOUCH_PHE)),
        P.claim(
            "phe_bias_bound_vs_kappa", role="confirmation",
            source=P.cite("Prop. 1 (appendix proof, ℓ_{f,0}), for every κ_g"),
            statement=(r"\|\bar{H} - \bar{\nabla} f\| \leq \kappa_g \ell_{f,0} "
                       r"(1 - 1/\kappa_g)^N\quad(N = 3)"),
            kind="bounded_by", variable=r"\kappa_g", quantity=r"\|\bar{H} - \bar{\nabla} f\|^2",
            measure=phe_bias_bound_vs_kappa,
            grid=per_budget((1.5, 2, 4, 8, 16, 32), (1.5, 2, 4, 8, 16, 32, 64),
                            (1.25, 1.5, 2, 4, 8, 16, 32, 64, 128)),
            replicates=per_budget(16, 64, 128), law=bias_law, tolerance=0.0,
            mutants=(
                Mutant("kappa_minus_one", "the constant κ_g − 1 in place of κ_g: (bias/bound)² "
                       "= κ_g/(κ_g − 1) > 1 at every κ_g of the worst-case family",
                       {"constant": "kappa_g_minus_1"}, kind="bound"),
                Mutant("scale_2ell", "PHE's Neumann scale is 2ℓ_{g,1} instead of ℓ_{g,1} (the "
                       "estimator changed, the bound not): the bias decays as (1 − μ_g/"
                       "(2ℓ_{g,1}))^N and exceeds the bound", {"scale_factor": 2.0},
                       kind="neumann_scaling")),
            schedule=(
                "the bound's worst case at every κ_g: scalar instance g = ½y² − bxy, f = y with "
                "b = √(κ_g² − κ_g) (μ_g = 1, ℓ_{g,1} = κ_g, ‖B̄‖ = √(ℓ_{g,1}(ℓ_{g,1} − μ_g)), "
                "ℓ_{f,0} = 1), one client, noise-free, at (1, 0); PHE with N = 3 and 2^13 "
                "chains per replicate.  There (bias/bound)² = 1 − 1/κ_g (the supremum over "
                "scalar instances found by bias_bound_search): the slack closes as κ_g grows, "
                "so the grid's last points are where the bound is tightest"),
            conditions=(*_phe_conditions(kappa_scalar, SCALAR_POINT, KAPPA_N),),
            touches=("FEDMBO-R5", *_TOUCH_PHE)),
        P.claim(
            "bias_at_cor1_N", role="confirmation",
            source=P.cite("proof of Cor 1 (\"N = Ω(κ_g log K) implies b = 1/K^{1/4}\"), with "
                          "Prop. 1's b"),
            statement=r"N = \Omega(\kappa_g\log K)\ \Rightarrow\ b^2 = \mathcal{O}(K^{-1/2})",
            kind="at_most", variable="K",
            quantity=r"\|\mathbb{E}[H_i] - \bar{\nabla} f\|^2\ \mathrm{at}\ N = "
                     r"\lceil\kappa_g\log K\rceil",
            measure=bias_at_cor1_N,
            grid=per_budget((16, 64, 256, 1024), (16, 64, 256, 1024, 4096),
                            (16, 64, 256, 1024, 4096, 16384)),
            replicates=per_budget(2, 2, 2),
            law=law(rates.law_for("fedmbo.cor1_bias", "exponent", "K")), tolerance=0.1,
            schedule=("PHE (Alg. 2) with its truncation's expectation (truncation=\"full\": "
                      "every chain sums the series (1/ℓ)Σ_{k<N}(1 − a/ℓ)^k∇_y f, which is E[H_i] "
                      "over N_i ~ U{0..N−1} with one client) at N = ⌈κ_g log K⌉ (constant 1), "
                      f"on the scalar instance g = ½ay² − bxy, f = qy (a = 1, b = 600/49, q = 1: "
                      f"κ_g = {kt:.4g}, Prop. 1's worst case) at (1, 0), one client, noise-free; "
                      "deterministic (replicates identical).  b is measured as the bias it "
                      "bounds, not as Prop. 1's formula, which is 0 on this linear f "
                      "(fedmbo.phe_bias_bound_linear's finding)"),
            conditions=(*_phe_conditions(scalar_problem(**TIGHT), SCALAR_POINT),
                        kappa_log_condition("N = Ω(κ_g log K) (Cor 1), a lower bound with "
                                            "constant 1: N ≥ κ_g log K", kt)),
            touches=("FEDMBO-R9", *_TOUCH_PHE),
            mutants=(Mutant("kappa_dropped", "the truncation N = ⌈log K⌉, computed without its "
                            "κ_g factor: the squared bias falls as K^{2 log(1 − 1/κ_g)} = "
                            f"K^{{{2 * math.log(1 - 1 / kt):.2f}}} at κ_g = {kt:.4g}, slower than "
                            "K^{−1/2}", {"kappa_factor": False}, kind="neumann_scaling"),),
            reason=("With ρ = 1 − 1/κ_g the bias of E[H_i] is −B̄ᵀĀ⁻¹ρ^N∇_y f (Prop. 1's "
                    "proof), so at N = ⌈κ_g log K⌉ its square is at most C·ρ^{2κ_g log K} = "
                    "C·K^{2κ_g log ρ} ≤ C·K^{−2} (κ log(1 − 1/κ) ≤ −1): well inside K^{−1/2}.  The "
                    "sentence's b = K^{−1/4} is weaker than what its N gives, and too weak for "
                    "the speedup (FEDMBO-R9), but not false")),
    ]


CLAIMS = _claims()
