"""The AFBO claims' shared parts (Li, Zhu, Gong, Mao & Zhou, WiOpt 2024): the constants, the
instances (:func:`problem`, :func:`rate_problem`), Thm 4.1's step caps and Cor. 4.1's schedules,
the strongly convex runs used by several families, the laws and Thm 4.1's conditions
(:func:`theorem_conditions`).  The package's docstring describes the instances and schedules."""

from __future__ import annotations

import functools
import math
from dataclasses import replace

import numpy as np

from bilevel_theory import run
from bilevel_theory.afbo import BoundedDelay, theorem_schedule
from bilevel_theory.problems import QuadraticBilevel

from ...claim import Condition
from ...kit import PaperClaims, law, ledger_totals

P = PaperClaims("afbo")
PAPER = P.paper.name

POPULATION = 4          # distinct clients; m = POPULATION · copies
M_DEFAULT = 4           # clients in the sweeps over T
K_INNER = 5             # inner steps K^t (a constant)
SIGMA = 1.0             # gradient noise std
ETA_SC = 0.5            # c in η = c/√T on the population (the claims that leave η ≤ a_1)
ETA_M = 0.25            # c in η = c√(m/T) (the (m, T) speedup experiment)
#: clients of the (m, T) experiment, at every T: six values for Cor. 4.1's three-term form, so
#: that the fit has three residual degrees of freedom (with four it had one, and the model's
#: misfit could not be told from the noise; :func:`corollary_form_misfit` measures it)
M_SPEEDUP = (4, 8, 12, 16, 24, 32)
DELAY = 3               # BoundedDelay(τ_M)
T_MIN = 400             # smallest T of the rate claims: η(T_MIN) = a_1, so η ≤ a_1 for T ≥ T_MIN
T_CAP = 6400            # largest T of the rate grids: the random truncation uses N(T_CAP) ≥ N(T)
T_CAP_OUTSIDE = 3200    # the same for the claims run at c = ETA_SC on the population
TAIL = 0.5              # E‖x^T − x*‖² is averaged over t ≥ (1 − TAIL)·T
INDIRECT_OFF_SCALE = 1e12  # Neumann scale ℓ with which (1/ℓ)Σ_{n<N}(I − Ĥ/ℓ)^n ≈ N/ℓ ≈ 0
BIAS_POINTS_SEED = 20240
T_FLOOR = 400           # rounds of the staleness runs
FLOOR_STEP_DIV = 4      # the staleness runs use η = a_1 / FLOOR_STEP_DIV (≤ a_1: admissible)
SYNC_BASELINE_SEED = 77  # the synchronous baseline of the staleness claim (common to all points)
LOCAL_E = (1, 2, 3, 5)  # per-client local iteration numbers E_i of the population (tiled)


# ============================================================================ instances
@functools.lru_cache(maxsize=64)
def _population(knob: float = 2.0) -> QuadraticBilevel:
    """The 4-client population; ``knob`` is ``QuadraticBilevel.random``'s ``kappa`` (2: the
    claims' population, κ_g ≈ 3.03; μ_g = 1 and ℓ_{f,1} do not depend on it)."""
    return QuadraticBilevel.random(clients=POPULATION, dim_x=3, dim_y=3, kappa=float(knob),
                                   heterogeneity=1.0, noise=0.0, seed=1, upper_mu=1.0,
                                   storage="structured")


@functools.lru_cache(maxsize=64)
def problem(clients: int = M_DEFAULT, noise: float = SIGMA, knob: float = 2.0
            ) -> QuadraticBilevel:
    """``clients`` clients, ``clients/4`` copies of the 4-client population (``knob``: its
    ``kappa``), gradient noise std ``noise``, exact second-order products: the same Φ, ``x*``
    and constants for every ``clients``."""
    tiled = _population(knob).tiled_to(clients)
    return replace(tiled, grad_noise=float(noise), hessian_noise=0.0,
                   spec={**tiled.spec, "noise": float(noise), "hessian_noise": 0.0})


@functools.lru_cache(maxsize=4)
def rate_problem(noise: float = SIGMA) -> QuadraticBilevel:
    """The rate claims' instance: 4 clients, κ = 1, coupling 1, ``upper_mu = 4`` (κ_g ≈ 2.34:
    strong coupling, so the indirect term −∇²_{xy}g[∇²_{yy}g]⁻¹∇_y f is large), gradient noise
    std ``noise``, exact second-order products.  Its ``a_1μ_Φ ≈ 0.012`` (the population's is
    0.0045) lets ``T ≥ T_MIN = 400`` rounds at ``η ≤ a_1`` reach the stationary regime."""
    return QuadraticBilevel.random(clients=M_DEFAULT, dim_x=3, dim_y=3, kappa=1.0,
                                   heterogeneity=1.0, noise=float(noise), hessian_noise=0.0,
                                   seed=1, upper_mu=4.0, coupling=1.0, storage="structured")


def theorem_a1(constants) -> float:
    """Thm 4.1's step cap ``a_1 = 1/(2L_f + 4M_fL_y + 2M_fL_yα/(L_yα))`` read as
    ``1/(2L_f + 4M_fL_y + 2M_f)`` (AFBO-R6)."""
    C = constants
    return 1.0 / (2.0 * C["L_f"] + 4.0 * C["M_f"] * C["L_y"] + 2.0 * C["M_f"])


def theorem_a2_min(constants) -> float:
    """The smallest ``a_2 = 5M_fL_y/μ_g + αL_yD̂_fa_1/(2μ_g)`` of Thm 4.1 over its free
    ``α > 0`` and ``D̂_f ≥ 0``: ``5M_fL_y/μ_g`` (AFBO-R12)."""
    C = constants
    return 5.0 * C["M_f"] * C["L_y"] / C["mu_g"]


def rate_eta_scale(case: str = "strongly_convex", m: int = M_DEFAULT) -> float:
    """The ``c`` of Cor. 4.1's ``η = c/√T`` (``c√(m/T)``, nonconvex) with ``η(T_MIN) = a_1``
    on :func:`rate_problem`: ``η ≤ a_1`` at every ``T ≥ T_MIN``."""
    a1 = theorem_a1(rate_problem().constants)
    return a1 * math.sqrt(T_MIN / (1.0 if case == "strongly_convex" else m))


def _schedule(T: int, m: int, case: str, c: float, K: int = K_INNER, p=None) -> dict:
    C = (problem(m) if p is None else p).constants
    return theorem_schedule(T, m, K, case=case, eta_scale=c, kappa_g=C["kappa_g"],
                            beta_max=1.0 / (2.0 * C["ell_g1"]))


def _rate_schedule(T: int, case: str = "strongly_convex") -> dict:
    """Cor. 4.1's schedule on :func:`rate_problem` inside Thm 4.1's ``η ≤ a_1``
    (:func:`rate_eta_scale`), ``m = 4``, ``K = 5``."""
    return _schedule(T, M_DEFAULT, case, rate_eta_scale(case), p=rate_problem())


def _out(value, trace) -> dict:
    """The measure's dict: ``value``, ``diverged`` and ledger totals."""
    return {"value": np.asarray(value, dtype=float), "diverged": trace.diverged.copy(),
            **ledger_totals(trace)}


# ============================================================================ shared runs
def _decaying(T: int, eta: float, mu: float):
    """``η_t = min(η, 2/(μt))``: the classical O(1/t) schedule for strongly convex SGD, capped
    at ``η`` (≤ a_1 on the rate instance), the repair of Cor. 4.1's constant ``η = 1/√T``."""
    return lambda t: min(eta, 2.0 / (mu * max(t, 1)))


def _sc_run(T, replicates, seed, backend, truncation, *, name="afbo", delay=None, local=None,
            noise=SIGMA, step="constant", aligned=True, indirect=True, admissible=True,
            neumann_cap=True, inner="constant"):
    """AFBO (or ``name``) at Cor. 4.1's strongly convex schedule, ``T`` rounds from
    ``(x*, y*(x*))``, ``m = 4``: on :func:`rate_problem` at ``η = c/√T ≤ a_1``
    (``admissible=False``: on the population at ``c = ETA_SC``, outside ``η ≤ a_1``).
    Mutations: ``step`` (``"decaying"``: :func:`_decaying`; ``"cube_root"``: ``η = c/T^{1/3}``),
    ``inner="decaying"`` (``β_t = min(β, 2/(Kμ_gt))``, :func:`_decaying` per inner step) and
    ``indirect=False`` (the Neumann estimate scaled away, ``ℓ = INDIRECT_OFF_SCALE``: the
    hypergradient estimate is ``∇ₓf`` alone).  ``neumann_cap``: the random and series
    truncations use ``N(T_cap)`` at every ``T`` (else the schedule's ``N(T)``)."""
    T, m = int(T), M_DEFAULT
    if admissible:
        p, cap = rate_problem(noise), T_CAP
        sc, ncap = _rate_schedule(T), _rate_schedule(cap)["neumann_steps"]
    else:
        p, cap = problem(m, noise=noise), T_CAP_OUTSIDE
        sc = _schedule(T, m, "strongly_convex", ETA_SC)
        ncap = _schedule(cap, m, "strongly_convex", ETA_SC)["neumann_steps"]
    if truncation == "fixed":
        sc.pop("neumann_steps")  # U = m, as written
    elif neumann_cap and (truncation == "random" or admissible):
        sc["neumann_steps"] = ncap  # N(T_cap) ≥ N(T): the same estimator at every T
    if step == "decaying":
        sc["outer_step"] = _decaying(T, sc["outer_step"], p.constants["mu_phi"])
    elif step == "cube_root":
        sc["outer_step"] = sc["outer_step"] * math.sqrt(T) / T ** (1.0 / 3.0)
    if inner == "decaying":
        sc["inner_step"] = _decaying(T, sc["inner_step"], K_INNER * p.constants["mu_g"])
    extra = {} if indirect else {"neumann_scale": INDIRECT_OFF_SCALE}
    if local is not None:
        extra.update(local_iterations=local, local_step=sc["inner_step"], aligned=aligned)
    return run(name, p, rounds=T, replicates=replicates, seed=seed, backend=backend,
               delay=BoundedDelay(DELAY) if delay is None else delay, inner_steps=K_INNER,
               truncation=truncation, x0=p.x_star, y0=p.y_star(p.x_star), **sc, **extra)


def _distance(trace, p=None) -> np.ndarray:
    """``E‖x^T − x*‖²`` per replicate: the mean of ``‖x^t − x*‖²`` over ``t ≥ (1 − TAIL)T``."""
    d = trace.distance_to((rate_problem() if p is None else p).x_star)
    return d[:, int(math.ceil((1.0 - TAIL) * trace.rounds)):].mean(axis=1)


# ============================================================================ laws
LAW_SC_COR = law("afbo.cor41_strongly_convex", "exponent", "T")               # −1
LAW_SC_THM = law("afbo.thm41a_cor41_schedule", "exponent", "T")               # −1/2
LAW_SC_LOWER = law("afbo.cor41_strongly_convex_lower", "exponent", "T")       # −1
LAW_NC_T = law("afbo.cor41_nonconvex", "exponent", "T")                       # −1/2
LAW_NC_MIND = law("afbo.cor41_nonconvex_m_independent", "exponent", "T")      # −1
LAW_STALE = law("afbo.staleness_excess", "exponent", "tau_excess")            # +1
LAW_FLOOR_ETA = law("afbo.thm41a_floor_eta", "exponent", "eta_inv")          # −1
LAW_SC_STALE = law("afbo.thm41a_staleness_excess", "exponent", "tau_excess")  # +1
LAW_APHE_B = law("afbo.aphe_bias", "bound")                                   # explicit b
LAW_FLOOR = law("afbo.sgd_floor", "bound")                                    # explicit floor
LAW_APHE = law("afbo.aphe_bias", "log_ratio", "m",
               subs={"kappa_g": float(problem().constants["kappa_g"])})        # log(1 − 1/κ_g)
THM_B_M = law("afbo.thm41b_cor41_schedule", "exponent_at_order", "T", second="m").value
FLOOR_EXPONENT = law("afbo.sgd_floor", "exponent", "T").value  # −1/2


# ============================================================================ conditions
def theorem_conditions(constants, eta, beta, *, rounds=float, K=K_INNER, neumann=None,
                       strongly_convex=False, eta_inside=True, eta_note="",
                       neumann_inside=True, neumann_note="") -> tuple[Condition, ...]:
    """Thm 4.1's and Cor. 4.1's hypotheses on the step sizes, as :class:`Condition` s of the
    sweep value ``x``: ``eta(x)``, ``beta(x)``, ``rounds(x)`` (``T``), ``neumann(x)`` (``N``,
    or ``None`` when the claim's estimator has no ``N``), with the instance's ``constants``.

    * ``η ≤ a_1`` (:func:`theorem_a1`, AFBO-R6);
    * ``η ≤ T/(2ℓ_{g,1}a_2)`` at the smallest ``a_2`` (:func:`theorem_a2_min`, AFBO-R12);
    * ``β < a_2η/T`` for an admissible ``a_2``: with ``α`` free, ``a_2`` ranges up to
      ``T/(2ℓ_{g,1}η)``, so the condition is ``β < 1/(2ℓ_{g,1})`` (Lemma 4.2's, AFBO-R12);
    * ``K^tβ² ≤ 1/T`` (Cor. 4.1); ``N ≥ ⌈κ_g log T⌉`` (Cor. 4.1's ``N = O(log T)``, AFBO-R9);
    * strongly convex: ``ημ_Φ < 1`` (Thm 4.1(a))."""
    C = constants
    a1, a2, ell = theorem_a1(C), theorem_a2_min(C), C["ell_g1"]
    out = [
        Condition("η ≤ a_1 = 1/(2L_f + 4M_fL_y + 2M_f) (Thm 4.1; AFBO-R6)", eta, a1,
                  inside=eta_inside, note=eta_note or f"a_1 = {a1:.4g} on the claim's instance"),
        Condition("η ≤ T/(2ℓ_{g,1}a_2), a_2 ≥ 5M_fL_y/μ_g (Thm 4.1; AFBO-R12)", eta,
                  lambda x: rounds(x) / (2.0 * ell * a2), inside=eta_inside,
                  note=f"smallest a_2 = {a2:.4g}" + ("" if eta_inside else f"; {eta_note}")),
        Condition("β < a_2η/T for an admissible a_2, i.e. β < 1/(2ℓ_{g,1}) (Thm 4.1, "
                  "Lemma 4.2; AFBO-R12)", beta, 1.0 / (2.0 * ell),
                  note="α free: a_2 ranges up to T/(2ℓ_{g,1}η)"),
        Condition("K^tβ² ≤ 1/T (Cor. 4.1)", lambda x: K * beta(x) ** 2,
                  lambda x: 1.0 / rounds(x)),
    ]
    if neumann is not None:
        out.append(Condition("N ≥ ⌈κ_g log T⌉ (Cor. 4.1: N = O(log T); AFBO-R9)", neumann,
                             lambda x: math.ceil(C["kappa_g"] * math.log(rounds(x))),
                             relation=">=", inside=neumann_inside, note=neumann_note))
    if strongly_convex:
        out.append(Condition("ημ_Φ < 1 (Thm 4.1(a))", lambda x: eta(x) * C["mu_phi"], 1.0))
    return tuple(out)


# ============================================================================ shared texts
SERIES_T = "series truncation (the random one's expectation), N = ⌈κ_g log T⌉ (AFBO-R9)"
_KG = problem().constants["kappa_g"]

_LEMMA = (
    "Lemma AFBO-L1: APHE as written estimates [∇²_{yy}g]⁻¹ by M̂ = (U/ℓ)(I − Ĥ/ℓ)^U, U = m. In "
    "an eigendirection of Ĥ with eigenvalue λ ≤ ℓ, λ·(U/ℓ)(1 − λ/ℓ)^U = U s(1 − s)^U with "
    "s = λ/ℓ ∈ (0, 1], whose maximum over s is attained at s = 1/(U + 1) and equals "
    "(U/(U + 1))^{U+1} = (1 − 1/(U + 1))^{U+1} < 1/e. So ĤM̂ ⪯ e⁻¹I: M̂ underestimates Ĥ⁻¹ by at "
    "least 1 − 1/e ≈ 63% in every direction, for every m, and the bias "
    "‖∇²_{xy}g (Ĥ⁻¹ − M̂) ∇_y f‖ ≥ (1 − 1/e) σ_min(∇²_{xy}g) ‖Ĥ⁻¹∇_y f‖ does not vanish as m grows "
    "(M̂ → 0), while Thm 4.1's b = κ_gℓ_{f,1}(1 − 1/κ_g)^N decays geometrically.")
