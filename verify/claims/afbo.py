"""AFBO claims — Li, Zhu, Gong, Mao & Zhou, "Anarchic Federated Bilevel Optimization",
WiOpt 2024 (the algorithm is ``bilevel_theory/afbo.py``; readings ``AFBO-R…``/``AFBO-I…`` in
``docs/papers/afbo.md``).

**Instances.**  The rate claims run on :func:`rate_problem` (4 clients, κ = 1, coupling 1,
``upper_mu = 4``: κ_g ≈ 2.34, strong coupling) inside Thm 4.1's step conditions: ``η ≤ a_1``
with ``a_1 = 1/(2L_f + 4M_fL_y + 2M_f)`` ≈ 0.0027 (AFBO-R6), the ``β`` condition and
``a_2`` read as in AFBO-R12, Cor. 4.1's ``K^tβ² ≤ 1/T`` and ``N = O(log T)``; every claim
declares them as ``conditions`` (:func:`theorem_conditions`).  The estimator and speedup claims
use a population of 4 heterogeneous clients (``QuadraticBilevel.random``: dims 3, κ = 2,
heterogeneity 1, ``upper_mu = 1``, structured storage, seed 1), **tiled**: ``m`` clients are
``m/4`` copies of the population, so Φ, ``x*`` and every constant are the same for every ``m``.
Gradient noise is additive with ``E‖ξ‖² = σ² = 1`` on every stochastic gradient;
Hessian/Jacobian products are exact (``σ_{g,2} = 0``, allowed by Assumption 4.4).  The
staleness claim has its own instance (:func:`floor_problem`).

**Schedules** (Cor. 4.1; rates as stated, constants fixed by the conditions;
:func:`bilevel_theory.afbo.theorem_schedule`): ``η = c/√T`` (strongly convex) or ``η =
c√(m/T)`` (nonconvex) with ``η(T_MIN) = a_1`` (:func:`rate_eta_scale`), ``β = min(1/(2ℓ_{g,1}),
1/√(KT))``, ``K = 5``, delays ``BoundedDelay(3)`` (Assumption 4.6 with ``τ_M = 3``) unless a
claim says otherwise.  The speedup claims and ``no_bias_bounded_delays``,
``heterogeneous_local_iterations`` leave ``η ≤ a_1`` on purpose (their conditions say why).

**Neumann truncation.**  APHE *as written* fixes ``U = m``: ``(U/ℓ)(I − Ĥ/ℓ)^U`` is not an
inverse-Hessian estimate (lemma AFBO-L1 in ``docs/papers/afbo.md``: in every eigendirection it
is at most ``1/e`` of the inverse).  ``afbo.aphe_bias`` checks the lemma's consequence against
Thm 4.1's ``b``; ``afbo.strongly_convex_rate`` shows the resulting wrong limit point.  So that
the rates are tested apart from that bias, the other claims run FedNest/FedMBO's random
truncation (``"random"``) or its expectation, the truncated series (``"series"``), with
``N ≥ ⌈κ_g log T⌉`` (AFBO-R9).

**Noise floors.**  The strongly convex claims start at ``(x*, y*(x*))`` and estimate
``E‖x^T − x*‖²`` by the mean of ``‖x^t − x*‖²`` over ``t ≥ T/2``, where the law of ``x^t`` is
that of ``x^T`` (on :func:`rate_problem`, ``μ_Φη(T/2) ≥ 2.3`` at every ``T ≥ T_MIN``, so the
build-up ``1 − e^{−2μ_Φηt}`` exceeds 0.99 there).

Mutants are keywords of the measures (``truncation``, ``step``, ``steps``, ``indirect``, ``naive``,
``aligned``, ``stale_weighting``…), each with its ``kind``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import replace

import numpy as np

from bilevel_theory import make_context, run
from bilevel_theory.afbo import BoundedDelay, Stragglers, aphe, theorem_schedule
from bilevel_theory.problems import QuadraticBilevel
from bilevel_theory.problems.families import Dense, EigenScaled, RankOne, Shared

from ..claim import Condition, Mutant, per_budget
from ..kit import PaperClaims, law, ledger_totals, lower_level_conditions, per_replicate

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
@functools.lru_cache(maxsize=1)
def _population() -> QuadraticBilevel:
    return QuadraticBilevel.random(clients=POPULATION, dim_x=3, dim_y=3, kappa=2.0,
                                   heterogeneity=1.0, noise=0.0, seed=1, upper_mu=1.0,
                                   storage="structured")


def _tile_family(F, copies: int):
    if isinstance(F, Shared):
        return Shared(F.M, F.clients * copies)
    if isinstance(F, EigenScaled):
        return EigenScaled(F.U, np.tile(np.asarray(F.a), (copies, 1)))
    if isinstance(F, RankOne):
        return RankOne(F.M0, np.tile(np.asarray(F.u), (copies, 1)),
                       np.tile(np.asarray(F.w), (copies, 1)))
    if isinstance(F, Dense):
        return Dense(np.tile(np.asarray(F.M), (copies, 1, 1)))
    raise TypeError(f"cannot tile a {type(F).__name__} family")


@functools.lru_cache(maxsize=32)
def problem(clients: int = M_DEFAULT, noise: float = SIGMA) -> QuadraticBilevel:
    """``clients`` clients, ``clients/4`` copies of the 4-client population, gradient noise std
    ``noise``, exact second-order products: the same Φ, ``x*`` and constants for every
    ``clients``."""
    if clients < POPULATION or clients % POPULATION:
        raise ValueError(f"`clients` must be a positive multiple of {POPULATION}, got {clients}")
    base, copies = _population(), clients // POPULATION
    tile = lambda a: np.tile(np.asarray(a), (copies, 1))  # noqa: E731
    return replace(base, A=_tile_family(base.A, copies), B=_tile_family(base.B, copies),
                   R=_tile_family(base.R, copies), S=_tile_family(base.S, copies),
                   c=tile(base.c), p=tile(base.p), q=tile(base.q), grad_noise=float(noise),
                   hessian_noise=0.0,
                   spec={**base.spec, "clients": clients, "noise": float(noise),
                         "hessian_noise": 0.0, "tiled_from": POPULATION})


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


# ============================================================================ measures
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


def _hypergradient_noise(truncation: str = "random") -> float:
    """The variance ``s²`` of the server's mean hypergradient per round at ``(x*, y*(x*))`` of
    :func:`rate_problem` from three independent zero-mean sources of a synchronous round (a
    lower bound: the held noise of delayed clients and the lower level's noise only add to
    it): the clients' fresh ``∇ₓf`` noise ``σ²/m``; the table's ``∇_y f`` noise through
    ``M̄B̄``, ``σ²‖M̄B̄‖_F²/(m d_y)``; and, for the random truncation, the chains' independent
    draws ``(1/m) E_k‖v̄(M_k − M̄)B̄‖²`` with ``M_k = (N/ℓ)(I − Ā/ℓ)^k``, ``k ~ U{0..N−1}``,
    ``M̄`` their mean (the truncated series) and ``v̄ = ∇_y f̄(x*, y*(x*))``."""
    p = rate_problem()
    C, cl, m = p.constants, p.closed_form, M_DEFAULT
    ell, A, B = C["ell_g1"], cl.A, cl.B
    N = _rate_schedule(T_CAP)["neumann_steps"]
    powers = [np.linalg.matrix_power(np.eye(p.dim_y) - A / ell, k) for k in range(N)]
    Mbar = sum(powers) / ell
    xs = p.x_star
    v = xs @ cl.R + p.y_star(xs) @ cl.S + cl.q
    s2 = SIGMA**2 / m + SIGMA**2 * np.sum((Mbar @ B) ** 2) / (m * p.dim_y)
    if truncation == "random":
        s2 += np.mean([np.sum((v @ ((N / ell) * Pk - Mbar) @ B) ** 2) for Pk in powers]) / m
    return float(s2)


def sgd_floor(T) -> float:
    """AFBO-L2's closed-form lower bound at Cor. 4.1's ``η = c/√T``: the stationary
    ``E‖x − x*‖²`` of constant-step SGD with curvature ``≤ L_Φ`` driven by independent noise of
    variance ``s²`` per step (:func:`_hypergradient_noise`), ``ηs²/(L_Φ(2 − ηL_Φ))``."""
    C = rate_problem().constants
    eta = _rate_schedule(int(T))["outer_step"]
    L = C["L_phi"]
    return eta * _hypergradient_noise() / (L * (2.0 - eta * L))


def sc_noise_free(T, replicates, seed, backend="numpy", *, truncation="fixed"):
    """``E‖x^T − x*‖²`` on noise-free gradients (``σ_f = σ_g = 0``, Assumption 4.4 allows it),
    AFBO as written (``U = m``) unless ``truncation`` says otherwise (``"series"``: FedMBO's
    scaled random truncation in expectation, ``N = ⌈κ_g log T⌉``)."""
    tr = _sc_run(T, replicates, seed, backend, truncation, noise=0.0, neumann_cap=False)
    return _out(_distance(tr), tr)


def sc_random(T, replicates, seed, backend="numpy", *, step="constant", truncation="random",
              indirect=True):
    """``E‖x^T − x*‖²`` at η = c/√T ≤ a_1 (``step``: :func:`_sc_run`), the random truncation
    with ``N = ⌈κ_g log T_cap⌉`` (≥ the schedule's) or ``truncation``; ``floor``:
    :func:`sgd_floor`."""
    tr = _sc_run(T, replicates, seed, backend, truncation, step=step, indirect=indirect)
    out = _out(_distance(tr), tr)
    out["floor"] = per_replicate(sgd_floor(T), replicates)
    return out


def sc_theorem(T, replicates, seed, backend="numpy", *, step="constant", truncation="series",
               indirect=True):
    """:func:`sc_random` with the series truncation (the random one's expectation, whose
    chains add no noise of their own: Thm 4.1(a)'s ``T^{−1/2}`` is resolved with fewer
    replicates)."""
    return sc_random(T, replicates, seed, backend, step=step, truncation=truncation,
                     indirect=indirect)


def sc_floor_check(T, replicates, seed, backend="numpy"):
    """AFBO-L2 as a ``bounded_by`` check: ``value`` = the closed-form floor, ``bound`` = the
    measured ``E‖x^T − x*‖²`` of :func:`sc_random` (the floor must not exceed it)."""
    out = sc_random(T, replicates, seed, backend)
    out["bound"], out["value"] = out["value"], out.pop("floor")
    return out


def sc_lower_level(T, replicates, seed, backend="numpy", *, steps="constant"):
    """``E‖y*(x^T) − y^T‖²`` (Cor. 4.1's lower-level quantity; ``y^T`` is the output of round
    ``T − 1``'s inner loop) at η = c/√T ≤ a_1, β = min(1/(2ℓ_{g,1}), 1/√(KT)), the series
    truncation with ``N = ⌈κ_g log T_cap⌉``: the mean of ``‖y^t − y*(x^t)‖²`` over
    ``t ≥ (1 − TAIL)T`` (the runs of :func:`sc_theorem`).  ``steps="decaying"``: both steps
    ``η_t = min(η, 2/(μ_Φt))`` and ``β_t = min(β, 2/(Kμ_gt))`` (:func:`_decaying`)."""
    step = "decaying" if steps == "decaying" else "constant"
    tr = _sc_run(T, replicates, seed, backend, "series", step=step, inner=steps)
    return _out(tr.inner_error[:, int(math.ceil((1.0 - TAIL) * tr.rounds)):].mean(axis=1), tr)


def nc_rate_T(T, replicates, seed, backend="numpy", *, truncation="series", indirect=True):
    """``(1/T) Σ_{t<T} ‖∇Φ(x^t)‖²`` on :func:`rate_problem` at η = c√(m/T) ≤ a_1
    (:func:`rate_eta_scale`) from the default start, series truncation ``N = ⌈κ_g log T⌉``
    (``truncation="fixed"``: APHE as written; ``indirect=False``: the Neumann estimate scaled
    away), ``m = 4``."""
    T = int(T)
    sc = _rate_schedule(T, "nonconvex")
    if truncation == "fixed":
        sc.pop("neumann_steps")
    if not indirect:
        sc["neumann_scale"] = INDIRECT_OFF_SCALE
    tr = run("afbo", rate_problem(), rounds=T, replicates=replicates, seed=seed,
             backend=backend, delay=BoundedDelay(DELAY), inner_steps=K_INNER,
             truncation=truncation, **sc)
    return _out(tr.average_stationarity(), tr)


def corollary_form_weights(T: float, clients=M_SPEEDUP) -> np.ndarray:
    """Least-squares weights ``w`` (one per ``m``) with ``Σ_m w_m F(m) = c/T``: the
    m-independent part of Cor. 4.1's form ``a/√(mT) + b/(m√(mT)) + c/T`` fitted to ``F(m)``
    at one ``T`` (linear in ``F``, so it applies per replicate and to the means alike)."""
    m = np.asarray(clients, dtype=float)
    X = np.stack([1 / np.sqrt(m * T), 1 / (m * np.sqrt(m * T)), np.full(m.size, 1.0 / T)], 1)
    return np.linalg.pinv(X)[2] / T


def corollary_form_misfit(T: float, F) -> float:
    """Cor. 4.1's form's lack of fit at one ``T``: ``χ² = rᵀ Cov(r)⁺ r`` for the residual
    ``r = (I − X X⁺) F̄`` of the least-squares fit of ``a/√(mT) + b/(m√(mT)) + c/T`` to the
    per-``m`` means ``F̄`` (``F``: one row of replicates per ``m`` of ``M_SPEEDUP``), with
    ``Cov(r) = P diag(se²) P``.  Under the form it is χ² with ``len(M_SPEEDUP) − 3`` degrees of
    freedom (3 here): a value far in that law's tail says the form, not the noise, misfits."""
    F = np.asarray(F, dtype=float)
    m = np.asarray(M_SPEEDUP, dtype=float)
    X = np.stack([1 / np.sqrt(m * T), 1 / (m * np.sqrt(m * T)), np.full(m.size, 1.0 / T)], 1)
    P = np.eye(m.size) - X @ np.linalg.pinv(X)
    se2 = F.var(axis=1, ddof=1) / F.shape[1]
    r = P @ F.mean(axis=1)
    return float(r @ np.linalg.pinv(P @ np.diag(se2) @ P, hermitian=True) @ r)


def birge_scaled(values, chi2: float, dof: int):
    """``(values', r)``: per-replicate ``values`` with their spread about the mean scaled by the
    Birge ratio ``r = √max(1, χ²/dof)`` of a fit's lack of fit, so that a bootstrap interval
    built from them carries the model's uncertainty where the model misfits beyond the noise
    (``r = 1``, values unchanged, otherwise)."""
    r = math.sqrt(max(1.0, chi2 / dof))
    return values.mean() + r * (values - values.mean()), r


def speedup_m_independent(T, replicates, seed, backend="numpy", *, delay="bounded",
                          step="schedule", start="default", inner="schedule"):
    """The (m, T) experiment at one ``T``: ``(1/T) Σ_t ‖∇Φ(x^t)‖²`` for every ``m`` of
    ``M_SPEEDUP`` at η = c√(m/T) (``step="fixed"``: η = c√(m/50), not decaying in ``T``),
    series truncation, default start ``x⁰ = 1, y⁰ = 0`` (``start="lower_optimal"``:
    ``y⁰ = y*(x⁰)``), inner step β = min(1/(2ℓ_{g,1}), 1/√(KT)) (``inner="constant"``:
    ``1/(2ℓ_{g,1})``); ``value`` = the m-independent part ``c/T`` of
    Cor. 4.1's form fitted over ``m`` (:func:`corollary_form_weights`), per replicate, its
    spread about the mean scaled by ``form_misfit_scale = √max(1, χ²/dof)`` (the Birge ratio of
    the form's lack of fit ``form_misfit_chi2``, :func:`corollary_form_misfit`), so that the
    bootstrap interval carries the model's uncertainty as well as the noise; ``F_m<m>``: the
    per-``m`` values."""
    T = int(T)
    out, F = {}, []
    for i, m in enumerate(M_SPEEDUP):
        sc = _schedule(T, m, "nonconvex", ETA_M)
        if step == "fixed":
            sc["outer_step"] = _schedule(50, m, "nonconvex", ETA_M)["outer_step"]
        if start == "lower_optimal":
            sc["y0"] = problem(m).y_star(np.ones(problem(m).dim_x))
        if inner == "constant":
            sc["inner_step"] = 1.0 / (2.0 * problem(m).constants["ell_g1"])
        tr = run("afbo", problem(m), rounds=T, replicates=replicates, seed=seed + i,
                 backend=backend, delay=BoundedDelay(DELAY) if delay == "bounded" else "sync",
                 inner_steps=K_INNER, truncation="series", **sc)
        F.append(tr.average_stationarity())
        out[f"F_m{m}"] = F[-1]
        out["diverged"] = tr.diverged | out.get("diverged", False)
    value = corollary_form_weights(T) @ np.asarray(F)
    if replicates > 1:
        chi2 = corollary_form_misfit(T, F)
        value, scale = birge_scaled(value, chi2, len(M_SPEEDUP) - 3)
        out["form_misfit_chi2"] = per_replicate(chi2, replicates)
        out["form_misfit_scale"] = per_replicate(scale, replicates)
    out["value"] = value
    return out


@functools.lru_cache(maxsize=1)
def floor_problem() -> QuadraticBilevel:
    """The staleness claim's instance: 4 clients, κ = 1, coupling 0.25, ``upper_mu = 2``, σ = 1
    (better conditioned than the population, so that ``T = 400`` rounds at ``η = a_1/4``
    reach the stationary floor)."""
    return QuadraticBilevel.random(clients=4, dim_x=3, dim_y=3, kappa=1.0, heterogeneity=1.0,
                                   noise=SIGMA, hessian_noise=0.0, seed=1, upper_mu=2.0,
                                   coupling=0.25, storage="structured")


def floor_step() -> float:
    """The staleness runs' constant step ``η = a_1/4`` (admissible: ``η ≤ a_1``)."""
    return theorem_a1(floor_problem().constants) / FLOOR_STEP_DIV


def staleness_window() -> tuple[float, float]:
    """Where Thm 4.1(b)'s delay term is non-vacuous: ``3L_fητ̄ < 1`` (beyond, the term alone
    exceeds the descent it is charged against, ``(η/2)‖∇Φ‖²`` per step being outweighed by
    ``3L_fη²D̂_fτ̄``); in the swept variable ``τ̄ − 1``: ``[0, 1/(3L_fη) − 1]``."""
    tau_c = 1.0 / (3.0 * floor_problem().constants["L_f"] * floor_step())
    return (0.0, tau_c - 1.0)


def _floor_run(tau_max, replicates, seed, backend, stale_weighting="none"):
    p = floor_problem()
    C = p.constants
    sc = theorem_schedule(T_FLOOR, p.clients, K_INNER, case="nonconvex", kappa_g=C["kappa_g"],
                          beta_max=1.0 / (2.0 * C["ell_g1"]))
    sc["outer_step"] = floor_step()
    return run("afbo", p, rounds=T_FLOOR, replicates=replicates, seed=seed, backend=backend,
               delay=BoundedDelay(int(tau_max)), inner_delay="sync", inner_steps=K_INNER,
               truncation="series", x0=p.x_star, y0=p.y_star(p.x_star),
               stale_weighting=stale_weighting, **sc)


@functools.lru_cache(maxsize=4)
def _sync_floor(replicates: int, backend: str) -> float:
    """The synchronous (every delay 1) value of the staleness claim's quantity: the mean over
    ``2·replicates`` runs, seed ``SYNC_BASELINE_SEED`` (one baseline for every point)."""
    tr = _floor_run(1, 2 * replicates, SYNC_BASELINE_SEED, backend)
    return float(tr.average_stationarity().mean())


def staleness_theorem_bound(tau_bar: float) -> float:
    """Thm 4.1(b)'s right-hand side (``afbo.thm41b``) for the staleness runs at mean outer
    delay ``τ̄``, at its tightest admissible point: ``W⁰ − W* = 0`` (the runs start at
    ``(x*, y*(x*))``), ``D̂_f = σ̂_f = σ_f²`` (AFBO-R10), the runs' ``η, T, N`` and
    ``Σ_kβ² = Kβ²``, and the free ``α`` at the minimiser ``√(σ̂_f/(4mD̂_f²Σ_kβ²))`` of the
    two terms it enters, capped so that ``a_2(α) ≤ T/(2ℓ_{g,1}η)`` (AFBO-R12)."""
    p = floor_problem()
    C, m, eta = p.constants, p.clients, floor_step()
    sc = theorem_schedule(T_FLOOR, m, K_INNER, case="nonconvex", kappa_g=C["kappa_g"],
                          beta_max=1.0 / (2.0 * C["ell_g1"]))
    B, D = K_INNER * sc["inner_step"] ** 2, C["sigma_f2"]
    a1, a2 = theorem_a1(C), theorem_a2_min(C)
    alpha_max = (T_FLOOR / (2 * C["ell_g1"] * eta) - a2) * 2 * C["mu_g"] / (C["L_y"] * D * a1)
    alpha = min(math.sqrt(D / (4 * m * D**2 * B)), alpha_max)
    from bilevel_theory.rates import BOUNDS  # noqa: PLC0415 (sympy only when evaluated)

    expr = BOUNDS["afbo.thm41b"].expr
    vals = {"B_beta": B, "D_hat_f": D, "sigma_hat_f": D, "L_f": C["L_f"], "L_y": C["L_y"],
            "M_f": C["M_f"], "N": sc["neumann_steps"], "T": T_FLOOR, "W_0": 0.0,
            "alpha": alpha, "ell_f1": C["ell_f1"], "eta": eta, "kappa_g": C["kappa_g"],
            "m": m, "sigma_g": math.sqrt(C["sigma_g2"]), "sigma_g1": math.sqrt(C["sigma_g12"]),
            "tau_bar": float(tau_bar)}
    return float(expr.subs({sym: vals[sym.name] for sym in expr.free_symbols}))


def staleness_excess(excess, replicates, seed, backend="numpy", *, stale_weighting="none"):
    """``(1/T) Σ_{t<T} ‖∇Φ(x^t)‖²`` at mean outer delay ``τ̄ = 1 + excess`` (outer delays
    ``BoundedDelay(3τ̄ − 2)``: uniform gaps, mean paper delay ``τ̄``; synchronous inner loop)
    minus its synchronous value (:func:`_sync_floor`), from ``(x*, y*(x*))`` at ``η = a_1/4``,
    ``T = 400`` (:func:`floor_problem`); ``delay_term``: Thm 4.1(b)'s delay term
    ``3L_fηD̂_f(τ̄ + 4/m)`` at the smallest admissible ``D̂_f = σ_f²`` (AFBO-R10)."""
    tau_bar = 1.0 + float(excess)
    tr = _floor_run(int(round(3 * tau_bar - 2)), replicates, seed, backend, stale_weighting)
    C = floor_problem().constants
    F = tr.average_stationarity()
    out = _out(F - _sync_floor(replicates, backend), tr)
    out["stationarity"] = F
    out["thm41b_bound"] = per_replicate(staleness_theorem_bound(tau_bar), replicates)
    out["tau_mean"] = tr.extras["tau_mean"].mean(axis=0)
    out["delay_term"] = per_replicate(3 * C["L_f"] * floor_step() * C["sigma_f2"]
                                      * (tau_bar + 4.0 / floor_problem().clients), replicates)
    return out


STRAGGLERS = Stragglers(0.25, slowdown=5)


def no_bias_contrast(T, replicates, seed, backend="numpy", *, naive=False):
    """``E‖x^T − x*‖²`` of AFBO (most recent updates of all clients; ``naive=True``: the
    mutant, fresh updates only) and, as ``contrast``, of ``afbo_naive``, both under
    ``Stragglers(0.25, slowdown=5)`` (bounded delays, ``τ_M = 5``), η = c/√T, series
    truncation ``N = ⌈κ_g log T⌉``."""
    a = _sc_run(T, replicates, seed, backend, "series", delay=STRAGGLERS,
                name="afbo_naive" if naive else "afbo", admissible=False)
    b = _sc_run(T, replicates, seed + 1, backend, "series", name="afbo_naive",
                delay=STRAGGLERS, admissible=False)
    out = _out(_distance(a, problem()), a)
    out["contrast"] = _distance(b, problem())
    out["diverged"], out["contrast_diverged"] = a.diverged, b.diverged
    return out


def hetero_local(T, replicates, seed, backend="numpy", *, aligned=True):
    """``E‖x^T − x*‖²`` with per-client local iteration numbers ``E_i`` (``LOCAL_E`` tiled),
    local SGD steps of size β, the aligned update ``(1/E_i)Σ_e`` (``aligned=False``: the sum
    ``Σ_e``), η = c/√T, series truncation ``N = ⌈κ_g log T⌉``."""
    E = np.tile(np.asarray(LOCAL_E), M_DEFAULT // POPULATION)
    tr = _sc_run(T, replicates, seed, backend, "series", local=E, aligned=aligned,
                 admissible=False)
    return _out(_distance(tr, problem()), tr)


def _aphe_bias(m, replicates, seed, backend, truncation):
    """``‖(1/m) Σ_i H_i − ∇̄f(x, y)‖`` of noise-free APHE at random points ``(x, y)`` (one per
    replicate, the same points for every ``m``), ``m`` clients, ``U = m`` (fixed, as written)
    or the series truncated at ``N = m``; ``bound``: Thm 4.1's ``b = κ_gℓ_{f,1}(1 − 1/κ_g)^m``
    (AFBO-R7) with the instance's constants; ``lemma``: AFBO-L1's lower bound of the fixed
    truncation's bias, ``(1 − 1/e)σ_min(B̄)‖Ā⁻¹∇_y f̄‖``."""
    m = int(m)
    p = problem(m, noise=0.0)
    ctx = make_context(p, replicates, seed, backend)
    xp, be = ctx.xp, ctx.oracle.backend
    rng = np.random.default_rng(BIAS_POINTS_SEED)  # the same points at every m
    x = rng.standard_normal((replicates, p.dim_x))
    y = rng.standard_normal((replicates, p.dim_y))
    X, Y = xp.asarray(x), xp.asarray(y)
    idx = xp.broadcast_to(xp.arange(m)[None, :], (replicates, m))
    fy = ctx.oracle.grad_y_f(idx, X[:, None, :], Y[:, None, :])
    H = aphe(ctx, X, Y, fy, scale=p.constants["ell_g1"], truncation=truncation,
             neumann_steps=None if truncation == "fixed" else m)
    H = np.asarray(be.to_numpy(xp.mean(H, axis=1)))
    exact = p.surrogate_hypergradient(x, y)
    C, cl = p.constants, p.closed_form
    kg = C["kappa_g"]
    v = x @ cl.R + y @ cl.S + cl.q  # mean ∇_y f
    lemma = ((1 - 1 / math.e) * np.linalg.svd(cl.B, compute_uv=False).min()
             * np.linalg.norm(np.linalg.solve(cl.A, v.T).T, axis=1))
    return {"value": np.sqrt(((H - exact) ** 2).sum(-1)),
            "bound": per_replicate(kg * C["ell_f1"] * (1 - 1 / kg) ** m, replicates),
            "lemma": lemma, "hvp_calls": per_replicate(ctx.oracle.counter.hvp, replicates)}


def aphe_bias_fixed(m, replicates, seed, backend="numpy", *, truncation="fixed"):
    """APHE as written: ``(U/ℓ) Π_{l≤U}(I − Ĥ/ℓ)`` with ``U = m`` (``truncation="series"``:
    FedMBO's ``N/ℓ``-scaled random truncation in expectation, ``N = m``)."""
    return _aphe_bias(m, replicates, seed, backend, truncation)


def aphe_bias_series(m, replicates, seed, backend="numpy"):
    """The series ``(1/ℓ) Σ_{n<N} (I − Ĥ/ℓ)^n`` with ``N = m`` (the random truncation's mean)."""
    return _aphe_bias(m, replicates, seed, backend, "series")


def aphe_fixed_lemma_ratio(U: int) -> float:
    """AFBO-L1: ``max_{0<s≤1} U s (1 − s)^U = (U/(U+1))^{U+1}`` (``s = λ/ℓ``), ``< 1/e``."""
    return (U / (U + 1.0)) ** (U + 1)


# ============================================================================ laws
LAW_SC_COR = law("afbo.cor41_strongly_convex", "exponent", "T")               # −1
LAW_SC_THM = law("afbo.thm41a_cor41_schedule", "exponent", "T")               # −1/2
LAW_SC_LOWER = law("afbo.cor41_strongly_convex_lower", "exponent", "T")       # −1
LAW_NC_T = law("afbo.cor41_nonconvex", "exponent", "T")                       # −1/2
LAW_NC_MIND = law("afbo.cor41_nonconvex_m_independent", "exponent", "T")      # −1
LAW_STALE = law("afbo.staleness_excess", "exponent", "tau_excess")            # +1
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


_RC = rate_problem().constants
_AS_WRITTEN_N = dict(neumann=lambda x: M_DEFAULT, neumann_inside=False,
                     neumann_note="APHE as written fixes U = m = 4 (AFBO-L1): the finding's "
                                  "subject")
COND_SC = theorem_conditions(
    _RC, lambda T: _rate_schedule(int(T))["outer_step"],
    lambda T: _rate_schedule(int(T))["inner_step"],
    neumann=lambda T: _rate_schedule(T_CAP)["neumann_steps"], strongly_convex=True)
COND_SC_AS_WRITTEN = theorem_conditions(
    _RC, lambda T: _rate_schedule(int(T))["outer_step"],
    lambda T: _rate_schedule(int(T))["inner_step"], strongly_convex=True, **_AS_WRITTEN_N)
COND_NC = theorem_conditions(
    _RC, lambda T: _rate_schedule(int(T), "nonconvex")["outer_step"],
    lambda T: _rate_schedule(int(T), "nonconvex")["inner_step"],
    neumann=lambda T: _rate_schedule(int(T), "nonconvex")["neumann_steps"])
_OUTSIDE_NOTE = ("the claim tests where the aggregation converges (its limit point), not "
                 "Thm 4.1's rate; it runs at c = 0.5 on the population, where η = 0.5/√T "
                 "exceeds a_1 ≈ 0.0036 for every T < 19 000")
COND_OUTSIDE = theorem_conditions(
    problem().constants,
    lambda T: _schedule(int(T), M_DEFAULT, "strongly_convex", ETA_SC)["outer_step"],
    lambda T: _schedule(int(T), M_DEFAULT, "strongly_convex", ETA_SC)["inner_step"],
    neumann=lambda T: _schedule(int(T), M_DEFAULT, "strongly_convex", ETA_SC)["neumann_steps"],
    strongly_convex=True, eta_inside=False, eta_note=_OUTSIDE_NOTE)


def _speedup_eta(T: float, m: int = max(M_SPEEDUP)) -> float:
    return _schedule(int(T), m, "nonconvex", ETA_M)["outer_step"]


_SPEEDUP_OUTSIDE = (
    "outside for every T: Cor. 4.1's m-independent part is the limit m → ∞ of its form at "
    "η = c√(m/T), and η = c√(m/T) ≤ a_1 holds only for m ≤ a_1²T/c², so the limit lies "
    "outside Thm 4.1's hypotheses at every T and every c; the experiment runs at the "
    "paper's own step form (c = 0.25, η up to 0.2 at m = 32, a_1 ≈ 0.0036)")
COND_SPEEDUP = theorem_conditions(
    problem().constants, _speedup_eta,
    lambda T: _schedule(int(T), max(M_SPEEDUP), "nonconvex", ETA_M)["inner_step"],
    neumann=lambda T: _schedule(int(T), max(M_SPEEDUP), "nonconvex", ETA_M)["neumann_steps"],
    eta_inside=False, eta_note=_SPEEDUP_OUTSIDE)


def _floor_conditions() -> tuple[Condition, ...]:
    p = floor_problem()
    sc = theorem_schedule(T_FLOOR, p.clients, K_INNER, case="nonconvex",
                          kappa_g=p.constants["kappa_g"],
                          beta_max=1.0 / (2.0 * p.constants["ell_g1"]))
    return theorem_conditions(p.constants, lambda x: floor_step(),
                              lambda x: sc["inner_step"], rounds=lambda x: T_FLOOR,
                              neumann=lambda x: sc["neumann_steps"])


def _estimator_conditions(p) -> tuple[Condition, ...]:
    """The estimator claims' hypotheses: APHE's scale ``ℓ = ℓ_{g,1}`` bounds the Hessian
    (Assumption 4.1) and ``μ_g > 0`` (Assumption 4.2), so ``0 ≺ Ĥ/ℓ ⪯ I``."""
    return lower_level_conditions(p, "μ_g > 0 (Assumption 4.2)",
                                  "‖∇²_{yy}g_i‖ ≤ ℓ = ℓ_{g,1} (Assumption 4.1)")


# ============================================================================ claims
T_GRID = per_budget([T_MIN, 2 * T_MIN, 4 * T_MIN], [T_MIN, 2 * T_MIN, 4 * T_MIN, 8 * T_MIN],
                    [T_MIN, 2 * T_MIN, 4 * T_MIN, 8 * T_MIN, 16 * T_MIN])
#: Thm 4.1(a)'s confirmation: a factor 8 in T at smoke, so that the slope separates −1/2 from the
#: step-exponent mutant's −1/3 by several interval half-widths (a factor 4 leaves about one).
T_GRID_THM = per_budget([T_MIN, 2 * T_MIN, 4 * T_MIN, 8 * T_MIN],
                        [T_MIN, 2 * T_MIN, 4 * T_MIN, 8 * T_MIN, 16 * T_MIN],
                        [T_MIN, 2 * T_MIN, 4 * T_MIN, 8 * T_MIN, 16 * T_MIN])
#: The grid of the claims that run outside η ≤ a_1 (no_bias_bounded_delays,
#: heterogeneous_local_iterations).
T_GRID_OUTSIDE = per_budget([50, 100, 200, 400], [50, 100, 200, 400, 800, 1600],
                            [50, 100, 200, 400, 800, 1600, 3200])
#: The (m, T) experiment's T grid.  Smoke uses the standard grid: up to T = 200 the verdicts
#: of both speedup findings depended on the seed and on the noise law (exponents −0.66 to
#: −0.91 over three seeds and three laws against the claimed ≤ −0.9, and the synchronous
#: variant's initial-error repair came out caught only there), while up to T = 400 every seed
#: and law gave the same verdict and the same mutant result (docs/papers/afbo.md).
T_GRID_M = per_budget([50, 100, 200, 400], [50, 100, 200, 400],
                      [50, 100, 200, 400, 800])
EXCESS_GRID = per_budget([1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 7, 11, 15],
                         [1, 2, 3, 4, 5, 7, 11, 15, 23, 31])
U_GRID = per_budget(range(4, 41, 4), range(4, 41, 4), range(4, 49, 4))

SC_SCHED = (f"rate_problem() (m = 4, κ = 1, coupling 1, upper_mu 4: κ_g ≈ {_RC['kappa_g']:.2f}); "
            f"η = c/√T with c = a_1√{T_MIN} (η ≤ a_1 = {theorem_a1(_RC):.3g} for T ≥ {T_MIN}), "
            "β = min(1/(2ℓ_{g,1}), 1/√(KT)), K = 5, start (x*, y*(x*)), E‖x^T − x*‖² "
            "averaged over t ≥ T/2")
SC_SCHED_OUTSIDE = ("η = c/√T (c = 0.5, outside η ≤ a_1), β = min(1/(2ℓ_{g,1}), 1/√(KT)), "
                    "K = 5, m = 4, start (x*, y*(x*)), E‖x^T − x*‖² averaged over t ≥ T/2")
RANDOM = (f"random truncation N_i ~ U{{0..N−1}} with N = ⌈κ_g log {T_CAP}⌉ at every T (≥ the "
          "schedule's ⌈κ_g log T⌉, so b² ≲ 1/T throughout; AFBO-R9)")
SERIES_CAP = (f"series truncation (the random one's expectation), N = ⌈κ_g log {T_CAP}⌉ at "
              "every T (AFBO-R9)")
SERIES_T = "series truncation (the random one's expectation), N = ⌈κ_g log T⌉ (AFBO-R9)"
_KG = problem().constants["kappa_g"]
_WIN = staleness_window()

_LEMMA = (
    "Lemma AFBO-L1: APHE as written estimates [∇²_{yy}g]⁻¹ by M̂ = (U/ℓ)(I − Ĥ/ℓ)^U, U = m. In "
    "an eigendirection of Ĥ with eigenvalue λ ≤ ℓ, λ·(U/ℓ)(1 − λ/ℓ)^U = U s(1 − s)^U with "
    "s = λ/ℓ ∈ (0, 1], whose maximum over s is attained at s = 1/(U + 1) and equals "
    "(U/(U + 1))^{U+1} = (1 − 1/(U + 1))^{U+1} < 1/e. So ĤM̂ ⪯ e⁻¹I: M̂ underestimates Ĥ⁻¹ by at "
    "least 1 − 1/e ≈ 63% in every direction, for every m, and the bias "
    "‖∇²_{xy}g (Ĥ⁻¹ − M̂) ∇_y f‖ ≥ (1 − 1/e) σ_min(∇²_{xy}g) ‖Ĥ⁻¹∇_y f‖ does not vanish as m grows "
    "(M̂ → 0), while Thm 4.1's b = κ_gℓ_{f,1}(1 − 1/κ_g)^N decays geometrically.")

CLAIMS = [
    P.claim(
        "aphe_bias", role="finding",
        source=P.cite("Thm 4.1 (b at N = m) / Alg. 2 APHE"),
        statement=r"\|\bar H - \bar\nabla f\| \leq b = \kappa_g\ell_{f,1}(1 - 1/\kappa_g)^m"
                  r"\quad(U = m)",
        kind="bounded_by", variable="m",
        quantity=r"\|\frac{1}{m}\sum_i H_i - \bar\nabla f\|",
        measure=aphe_bias_fixed, grid=U_GRID,
        replicates=per_budget(8, 16, 32), law=LAW_APHE_B, tolerance=0.05,
        expected="violated",
        reason=(_LEMMA + " The measured bias of noise-free APHE at U = m is compared with b at "
                "N = m at every m (bound with the instance's κ_g and ℓ_{f,1}); the lemma's "
                "lower bound of the bias is stored as the 'lemma' metric."),
        schedule="noise-free APHE at random (x, y), one per replicate, the same points for "
                 "every m; m clients (m/4 copies of the population: the same Hessians for "
                 "every m), U = m products, ℓ = ℓ_{g,1}",
        touches=("AFBO-R3", "AFBO-R7"), conditions=_estimator_conditions(problem()),
        mutants=(Mutant("fedmbo_scaling",
                        "FedMBO's PHE scaling: random truncation N_i ~ U{0..N−1} with the N/ℓ "
                        "scale, in expectation (the truncated series, N = m); its bias is the "
                        "Neumann remainder, within b",
                        {"truncation": "series"}, kind="repair"),),
    ),
    P.claim(
        "aphe_bias_series", role="control",
        source=P.cite("Thm 4.1 (b with N = m), implemented series", "[INFERRED]"),
        statement=r"\|\mathbb{E}\bar H - \bar\nabla f\| \propto (1 - 1/\kappa_g)^N"
                  r"\quad(N = m,\ \mathrm{series})",
        kind="geometric", variable="m", quantity=r"\|\frac{1}{m}\sum_i H_i - \bar\nabla f\|",
        measure=aphe_bias_series, grid=U_GRID, replicates=per_budget(8, 16, 32),
        law=LAW_APHE, tolerance=0.05, scale="semilog", window=(12, 48),
        window_reason="the bias is ‖vĀ⁻¹(I − Ā/ℓ)^N B̄‖, a sum of geometric terms whose slowest "
                      "ratio (1 − μ_g/ℓ) dominates once the others have decayed; m ≥ 12 is "
                      "asymptotic for κ_g ≈ 3 (the next ratio is at most (1 − 2/κ_g)/(1 − 1/"
                      "κ_g) of it per step)",
        schedule="noise-free APHE at random (x, y); series truncation (1/ℓ)Σ_{n<N}(I − Ĥ/ℓ)^n "
                 "(the expectation of FedNest/FedMBO's random truncation) with N = m",
        touches=("AFBO-R7",), conditions=_estimator_conditions(problem()),
    ),
    P.claim(
        "strongly_convex_rate", role="finding",
        source=P.cite("Cor. 4.1 (strongly convex)"),
        statement=r"\mathbb{E}\|x^T - x^*\|^2 = \mathcal{O}(1/T)\quad(\eta = 1/\sqrt{T},"
                  r"\ K^t\beta^2 \leq 1/T,\ U = m,\ \sigma = 0)",
        kind="at_most", variable="T", quantity=r"\mathbb{E}\|x^T - x^*\|^2",
        measure=sc_noise_free, grid=T_GRID, replicates=per_budget(4, 8, 16),
        law=LAW_SC_COR, tolerance=0.1, expected="violated",
        reason=("A consequence of afbo.aphe_bias, not a separate finding. " + _LEMMA
                + " On noise-free gradients the iterates therefore converge to x̃, the zero of "
                "APHE's biased hypergradient, at a fixed distance from x* whatever T and the "
                "step schedule: E‖x^T − x*‖² tends to ‖x̃ − x*‖² > 0 (slope 0 in T)."),
        schedule=f"{SC_SCHED}; noise-free gradients (σ = 0); BoundedDelay(3); APHE as "
                 "written: fixed truncation U = m = 4",
        touches=("AFBO-R3", "AFBO-R5"), conditions=COND_SC_AS_WRITTEN,
        mutants=(Mutant("fedmbo_scaling",
                        "FedMBO's scaled random truncation in expectation (series, N = ⌈κ_g "
                        "log T⌉): the bias is (1 − 1/κ_g)^N, so ‖x̃_N − x*‖² decays faster than "
                        "1/T",
                        {"truncation": "series"}, kind="repair"),),
    ),
    P.claim(
        "strongly_convex_floor", role="control",
        source=P.cite("constant-step SGD floor (lemma AFBO-L2)", "[INFERRED]"),
        statement=r"\frac{\eta s^2}{L_\Phi(2 - \eta L_\Phi)} \leq "
                  r"\mathbb{E}\|x^T - x^*\|^2\quad(\eta = c/\sqrt{T})",
        kind="bounded_by", variable="T",
        quantity=r"\eta s^2/(L_\Phi(2 - \eta L_\Phi))",
        measure=sc_floor_check, grid=T_GRID, replicates=per_budget(32, 64, 128),
        law=LAW_FLOOR, tolerance=0.0,
        schedule=f"{SC_SCHED}; BoundedDelay(3); {RANDOM} (the runs of "
                 "afbo.strongly_convex_rate_random_truncation)",
        touches=("AFBO-R5", "AFBO-R9"), conditions=COND_SC,
    ),
    P.claim(
        "strongly_convex_rate_random_truncation", role="finding",
        source=P.cite("Cor. 4.1 (strongly convex)"),
        statement=r"\mathbb{E}\|x^T - x^*\|^2 = \mathcal{O}(1/T)\quad(\eta = 1/\sqrt{T},"
                  r"\ K^t\beta^2 \leq 1/T,\ N = \mathcal{O}(\log T))",
        kind="at_most", variable="T", quantity=r"\mathbb{E}\|x^T - x^*\|^2",
        measure=sc_random, grid=T_GRID, replicates=per_budget(512, 512, 1024),
        law=LAW_SC_COR, tolerance=0.1, expected="violated",
        reason=("Lemma AFBO-L2 (afbo.strongly_convex_floor): constant-step SGD x_{t+1} − x* = "
                "(I − ηH)(x_t − x*) − ηξ_t on a quadratic with curvature H ⪯ L_ΦI and "
                "independent noise of variance s² has stationary E‖x − x*‖² = Σ_j ηs_j²/(λ_j(2 − "
                "ηλ_j)) ≥ ηs²/(L_Φ(2 − ηL_Φ)); with s² the variance of the round's fresh "
                "hypergradient noise (the clients' ∇ₓf noise, the stored ∇_y f noise through "
                "the Neumann estimate and the chains' random truncations, in closed form at "
                "x*) and Cor. 4.1's constant η = c/√T (here ≤ a_1 at every T: inside Thm "
                "4.1's conditions) this is a floor of order "
                f"T^{{{FLOOR_EXPONENT:g}}} (rates afbo.sgd_floor), which the measured error "
                "stays above at every T. Hence E‖x^T − x*‖² cannot be O(1/T) at this schedule; "
                "Thm 4.1(a) itself gives T^{−1/2} there (afbo.strongly_convex_rate_theorem); "
                "O(1/T) needs a decaying step η_t ∝ 1/t."),
        schedule=f"{SC_SCHED}; BoundedDelay(3); {RANDOM}",
        touches=("AFBO-R5", "AFBO-R9"), conditions=COND_SC,
        mutants=(Mutant("decaying_step",
                        "the classical strongly convex schedule η_t = min(η, 2/(μ_Φt)) (η = "
                        "c/√T ≤ a_1) instead of the constant η = c/√T: the noise floor decays "
                        "as 1/t",
                        {"step": "decaying"}, kind="repair"),),
    ),
    P.claim(
        "strongly_convex_rate_theorem", role="confirmation",
        source=P.cite("Thm 4.1(a) at Cor. 4.1's schedule", "[INFERRED]"),
        statement=r"\mathbb{E}[V^T] \leq (1-\eta\mu_f)^T V^0 + \frac{C}{\eta\mu_f} = "
                  r"\mathcal{O}(T^{-1/2})\quad(\eta = 1/\sqrt{T})",
        kind="at_most", variable="T", quantity=r"\mathbb{E}\|x^T - x^*\|^2",
        measure=sc_theorem, grid=T_GRID_THM, replicates=per_budget(256, 256, 512),
        law=LAW_SC_THM, tolerance=0.1,
        schedule=f"{SC_SCHED}; BoundedDelay(3); {SERIES_CAP}",
        touches=("AFBO-I2", "AFBO-R5", "AFBO-R12"), conditions=COND_SC,
        mutants=(Mutant("as_written",
                        "APHE as written (fixed truncation U = m): its bias (lemma AFBO-L1) "
                        "is not the theorem's b, and the error plateaus",
                        {"truncation": "fixed"}, kind="truncation"),
                 Mutant("cube_root_step",
                        "η = c/T^{1/3} in place of c/√T: the noise floor ∝ η decays as "
                        "T^{−1/3}, slower than the theorem's T^{−1/2}",
                        {"step": "cube_root"}, kind="step_exponent"),
                 Mutant("indirect_dropped",
                        "the hypergradient estimate without its indirect term "
                        "−∇²_{xy}g[∇²_{yy}g]⁻¹∇_y f (Neumann scale ℓ → ∞): the iterates "
                        "converge to the zero of ∇ₓf(x, y*(x)), away from x*, and the error "
                        "plateaus",
                        {"indirect": False}, kind="indirect_term")),
    ),
    P.claim(
        "strongly_convex_lower_level_rate", role="finding",
        source=P.cite("Cor. 4.1 (strongly convex, lower level)"),
        statement=r"\mathbb{E}\|y^*(x^T) - y^T\|^2 = \mathcal{O}(1/T)\quad(\eta = 1/\sqrt{T},"
                  r"\ K^t\beta^2 \leq 1/T,\ N = \mathcal{O}(\log T))",
        kind="at_most", variable="T", quantity=r"\mathbb{E}\|y^*(x^T) - y^T\|^2",
        measure=sc_lower_level, grid=T_GRID,
        # power of the repair mutant (slope ≈ −1, margin 0.1 to the bound −0.9): its lower-level
        # error decorrelates over ≈ t/2 rounds, so the tail mean has only ≈ 2 effective samples
        # of a 3-dof ‖·‖² (relative sd per replicate 0.5–0.65 measured at 128 replicates, seed
        # 0); the slope of 3 points a factor 2 apart has se ≈ 0.6·√2/(2 ln 2 √R) ≤ margin/3.6
        # ≈ 0.028 for R ≥ 480 → 512 (the claim itself, slope ≈ −1/2, margin 0.4, needs 16)
        replicates=per_budget(512, 512, 1024), law=LAW_SC_LOWER, tolerance=0.1,
        expected="violated",
        reason=("Lemma AFBO-L3 (docs/papers/afbo.md): each round runs K inner steps y ← y − "
                "β(∇_y ḡ(x^t, y) + ξ) on the μ_g-strongly convex ḡ with gradient noise ξ of "
                "variance s_g² = σ²/m > 0 (Assumption 4.4), so by AFBO-L2 applied to the inner "
                "loop the lower level's stationary error is of order βs_g²/(2μ_g) = "
                "Θ(T^{−1/2}) at Cor. 4.1's β = 1/√(KT) — Lemma 4.2's own fixed point "
                "4(σ_g² + σ_{g,1}²)Kβ²/(1 − (1 − βμ_g)^K) ≈ 4(σ_g² + σ_{g,1}²)β/μ_g is of the "
                "same order. A smaller β (K^tβ² ≤ 1/T allows it) does not help at η = c/√T: "
                "the noisy outer steps move y*(x^t) by ≈ L_yηs_H per round while y contracts "
                "by only ≈ Kβμ_g, adding a lag ≈ L_y²η²s_H²/(2Kβμ_g); the sum of the two terms "
                "is at least twice the root of their product, of order η/√K = Θ(T^{−1/2}), for "
                "every β. Thm 4.1(a) itself bounds (L_f/μ_f)E‖y*(x^T) − y^T‖² ≤ E[V^T] = "
                "O(T^{−1/2}) at this schedule (afbo.thm41a_cor41_schedule). Hence the "
                "lower-level error cannot be O(1/T) at Cor. 4.1's schedule with constant K; "
                "steps decaying as 1/t (both η_t and β_t) restore it. The corollary's "
                "conditions admit a constant K (K = 5, β = 1/√(KT) meets K^tβ² ≤ 1/T with "
                "equality); they also admit K^t growing like T (β ∝ 1/T), under which both "
                "terms are O(1/T): the statement holds for some admissible schedules, not for "
                "all, and the measured quantity is the last-iterate error averaged over "
                "t ≥ T/2 (a rate in T carries over to that average)."),
        schedule=(f"rate_problem() (m = 4, κ = 1, coupling 1, upper_mu 4: κ_g ≈ "
                  f"{_RC['kappa_g']:.2f}); η = c/√T with c = a_1√{T_MIN} (η ≤ a_1 = "
                  f"{theorem_a1(_RC):.3g} for T ≥ {T_MIN}), β = min(1/(2ℓ_{{g,1}}), 1/√(KT)), "
                  "K = 5, σ = 1, start (x*, y*(x*)), E‖y*(x^T) − y^T‖² estimated by the mean "
                  f"of ‖y^t − y*(x^t)‖² over t ≥ T/2; BoundedDelay(3); {SERIES_CAP} (the "
                  "runs of afbo.strongly_convex_rate_theorem, here at 512 replicates)"),
        touches=("AFBO-R2", "AFBO-R5", "AFBO-R12"), conditions=COND_SC,
        mutants=(Mutant("decaying_steps",
                        "both steps decaying as 1/t, η_t = min(η, 2/(μ_Φt)) and β_t = min(β, "
                        "2/(Kμ_gt)) (η = c/√T ≤ a_1, β = 1/√(KT)): the inner noise floor ∝ β_t "
                        "and the lag ∝ η_t²/β_t both decay as 1/t",
                        {"steps": "decaying"}, kind="repair"),),
    ),
    P.claim(
        "nonconvex_rate_T", role="confirmation",
        source=P.cite("Cor. 4.1 (nonconvex)"),
        statement=r"\frac{1}{T}\sum_{t<T}\mathbb{E}\|\nabla\Phi(x^t)\|^2 = "
                  r"\mathcal{O}\left(\frac{1}{\sqrt{mT}} + \frac{1}{m\sqrt{mT}} + \frac{1}{T}"
                  r"\right)\quad(\eta = \sqrt{m/T})",
        kind="at_most", variable="T",
        quantity=r"\frac{1}{T}\sum_{t<T}\|\nabla\Phi(x^t)\|^2",
        measure=nc_rate_T, grid=T_GRID, replicates=per_budget(16, 32, 64),
        law=LAW_NC_T, tolerance=0.1,
        schedule=(f"rate_problem() (κ_g ≈ {_RC['kappa_g']:.2f}, coupling 1); η = c√(m/T) with "
                  f"c = a_1√({T_MIN}/m) (η ≤ a_1 for T ≥ {T_MIN}), β = min(1/(2ℓ_{{g,1}}), "
                  "1/√(KT)), K = 5, m = 4, σ = 1, BoundedDelay(3), default start x⁰ = 1, "
                  f"y⁰ = 0; {SERIES_T}"),
        touches=("AFBO-R9", "AFBO-R12"), conditions=COND_NC,
        mutants=(Mutant("as_written",
                        "APHE as written (fixed truncation U = m): the hypergradient's zero is "
                        "not a stationary point of Φ, so the average stationarity tends to a "
                        "positive constant",
                        {"truncation": "fixed"}, kind="truncation"),
                 Mutant("indirect_dropped",
                        "the hypergradient estimate without its indirect term "
                        "−∇²_{xy}g[∇²_{yy}g]⁻¹∇_y f (Neumann scale ℓ → ∞): its zero is not a "
                        "stationary point of Φ, and the average stationarity tends to "
                        "‖∇Φ(x̃)‖² > 0",
                        {"indirect": False}, kind="indirect_term")),
    ),
]

_SPEEDUP_SCHED = (f"(m, T) experiment: m ∈ {{{', '.join(map(str, M_SPEEDUP))}}} at every T, "
                  f"η = c√(m/T) (c = {ETA_M}), β = min(1/(2ℓ_{{g,1}}), 1/√(KT)), K = 5, σ = 1, "
                  f"default start x⁰ = 1, y⁰ = 0; {SERIES_T}; per T and replicate, Cor. 4.1's "
                  "form a/√(mT) + b/(m√(mT)) + c/T is fitted over m by least squares and its "
                  "m-independent part c/T is the measured value")
_SPEEDUP_WHY = (
    "Cor. 4.1 bounds the m-independent part of (1/T)Σ_t‖∇Φ(x^t)‖² (the limit m → ∞ of "
    "1/√(mT) + 1/(m√(mT)) + 1/T, rates afbo.cor41_nonconvex_m_independent) by O(1/T). But the "
    "descent lemma (Lemma 4.1) charges ηM_f²E‖y^{t+1} − y*(x^t)‖² per round, and at the "
    "corollary's inner step β = 1/√(KT) (which meets Cor. 4.1's Kβ² ≤ 1/T and Thm 4.1's "
    "β < a_2η/T for an admissible a_2, AFBO-R12) Lemma 4.2 "
    "contracts the lower-level error by only (1 − βμ_g)^K ≈ 1 − μ_g√(K/T) per round. The "
    "initial error then costs ≈ M_f²‖y⁰ − y*(x⁰)‖²/(2μ_g√(KT)) once summed and divided by ηT, "
    "and the lag of y behind the moving y*(x^t) builds up under the same slow contraction: "
    "terms of order T^{−1/2} that more clients do not reduce, absent from the corollary's "
    "form. The measured m-independent part decays slower than 1/T accordingly. A constant "
    "inner step β = 1/(2ℓ_{g,1}), with which the lower level tracks y*(x^t), restores the 1/T "
    "decay (mutant constant_inner_step). Starting the lower level at y*(x⁰) alone restores it "
    "under bounded delays but not in the synchronous case, where the lag term remains. "
    "Scope: the runs leave Thm 4.1's η ≤ a_1 (a_1 ≈ 0.0036 here, η = 0.25√(m/T) up to 0.2), "
    "and no admissible run can test the statement: the m-independent part is the limit "
    "m → ∞ at η = c√(m/T), while η ≤ a_1 holds only for m ≤ a_1²T/c², so the limit is outside "
    "the theorem's hypotheses at every T and c. The finding is about Cor. 4.1's stated form at "
    "the paper's step form, not a counterexample to Thm 4.1.")


def _speedup_claim(name, delay, expected, mutant, replicates):
    role = "finding" if expected == "violated" else "confirmation"
    kw = {"reason": _SPEEDUP_WHY} if expected == "violated" else {}
    return P.claim(
        name, role=role, source=P.cite("Cor. 4.1 (nonconvex) / Remark 4"),
        statement=r"\lim_{m\to\infty}\frac{1}{T}\sum_{t<T}\mathbb{E}\|\nabla\Phi(x^t)\|^2 = "
                  r"\mathcal{O}(1/T)\quad(\eta = \sqrt{m/T}"
                  + (r",\ \tau_i^t = 1)" if delay == "sync" else r",\ \tau_M = 3)"),
        kind="at_most", variable="T",
        quantity=r"c/T\ \mathrm{of}\ \frac{a}{\sqrt{mT}} + \frac{b}{m\sqrt{mT}} + \frac{c}{T}",
        measure=functools.partial(speedup_m_independent, delay=delay), grid=T_GRID_M,
        replicates=replicates, law=LAW_NC_MIND, tolerance=0.1, expected=expected,
        schedule=_SPEEDUP_SCHED + ("; synchronous (every delay 1)" if delay == "sync"
                                   else "; BoundedDelay(3) outer and inner"),
        touches=("AFBO-R9", "AFBO-R11"), mutants=(mutant,), conditions=COND_SPEEDUP, **kw)


_TRACKING_INNER = Mutant("constant_inner_step",
                         "inner step β = 1/(2ℓ_{g,1}) at every T instead of Cor. 4.1's "
                         "β = 1/√(KT): the lower level tracks y*(x^t), and the m-independent "
                         "T^{−1/2} cost of its error is gone",
                         {"inner": "constant"}, kind="repair")

CLAIMS += [
    _speedup_claim("linear_speedup_m", "bounded", "violated", _TRACKING_INNER,
                   per_budget(128, 128, 256)),
    _speedup_claim("linear_speedup_m_sync", "sync", "violated", _TRACKING_INNER,
                   per_budget(128, 128, 256)),
    P.claim(
        "staleness_floor_vs_delay", role="confirmation",
        source=P.cite("Thm 4.1(b) last term / Remark 2, the project's reading AFBO-R11",
                      "[INFERRED]"),
        statement=r"F(\bar\tau) - F(1) \leq 3L_f\eta\hat D_f(\bar\tau - 1),\ "
                  r"F = \frac{1}{T}\sum_t\|\nabla\Phi(x^t)\|^2\quad(\eta \leq a_1)",
        kind="at_most", variable=r"\bar\tau - 1",
        quantity=r"\frac{1}{T}\sum_{t<T}\|\nabla\Phi(x^t)\|^2 - (\ldots)_{\tau = 1}",
        measure=staleness_excess, grid=EXCESS_GRID,
        # replicates from the spread over seeds 0–4 and the CuPy stream (slope sd 0.063 at 64,
        # mean 0.975, margin 0.175 to the bound): an interval wholly below it needs
        # se ≤ margin/3.6 ≈ 0.049 → ≈ 1.7× → 128; a resolution ≤ 0.2 (tolerance 0.15 + 2.8·se)
        # needs se ≤ 0.018: se ≈ 0.044 at 128 → ≈ 6× → 768, which gave 0.196–0.2005 over
        # seeds 0–4 (on the mark): 1024
        replicates=per_budget(1024, 1024, 1536), law=LAW_STALE, tolerance=0.15,
        window=_WIN, window_derived=True,
        window_reason=(
            "computed from the bound: Thm 4.1(b)'s delay term 3L_fητ̄D̂_f is non-vacuous only "
            "while 3L_fητ̄ < 1 (beyond, it exceeds the descent (η/2)‖∇Φ‖² it is charged "
            f"against); at η = a_1/{FLOOR_STEP_DIV} this is τ̄ < "
            f"{_WIN[1] + 1:.3g}, i.e. τ̄ − 1 ≤ {_WIN[1]:.3g} (staleness_window)"),
        schedule=f"constant step η = a_1/{FLOOR_STEP_DIV} with a_1 = 1/(2L_f + 4M_fL_y + 2M_f) "
                 "(AFBO-R6; admissible: η ≤ a_1), β = min(1/(2ℓ_{g,1}), 1/√(KT)), K = 5, "
                 f"T = {T_FLOOR}, σ = 1, started at (x*, y*(x*)); outer delays "
                 "BoundedDelay(3τ̄ − 2) (uniform gaps, mean paper delay τ̄ = (τ_M + 2)/3), "
                 "synchronous inner loop (the bound has no inner-delay term); the synchronous "
                 "value is one common baseline run (2× the replicates); series truncation "
                 "N = ⌈κ_g log T⌉; instance floor_problem() (m = 4, κ = 1, coupling 0.25, "
                 "upper_mu 2)",
        touches=("AFBO-R6", "AFBO-R10", "AFBO-R11", "AFBO-R12"),
        conditions=_floor_conditions(),
        mutants=(Mutant("age_weighting",
                        "the server counts each stored update once per round it has been held "
                        "(H̄ = (1/m)Σ_i τ_iH_i, a 'delay-compensating' aggregation): the noise a "
                        "stale entry carries is amplified by its age, so the excess grows "
                        "faster than linearly in τ̄",
                        {"stale_weighting": "age"}, kind="estimator"),),
    ),
    P.claim(
        "no_bias_bounded_delays", role="confirmation",
        source=P.cite("Sec. 3 (most recent updates) and Thm 4.1(a) at Cor. 4.1", "[INFERRED]"),
        statement=r"\mathrm{AFBO}:\ \mathbb{E}\|x^T - x^*\|^2 \propto T^{-1/2};\ "
                  r"\mathrm{naive\ asynchronous}:\ \mathrm{plateau}",
        kind="contrast", variable="T", quantity=r"\mathbb{E}\|x^T - x^*\|^2",
        extra={"series": {"value": "AFBO (most recent updates)", "contrast": "naive asynchronous aggregation"}},
        # replicates for a resolution ≤ 0.2 (tolerance 0.15 + 2.8·se): se ≈ 0.032 at 64 needs
        # ≤ 0.018, ≈ 3.2× → 256
        measure=no_bias_contrast, grid=T_GRID_OUTSIDE, replicates=per_budget(256, 256, 256),
        law=LAW_SC_THM, tolerance=0.15, conditions=COND_OUTSIDE,
        schedule=f"{SC_SCHED_OUTSIDE}; Stragglers(0.25, slowdown 5) outer and inner (bounded, "
                 f"τ_M = 5) for both algorithms; {SERIES_T} for both",
        touches=("AFBO-R1", "AFBO-I3", "AFBO-I2"),
        mutants=(Mutant("naive",
                        "naive aggregation of only the fresh updates (afbo_naive) in place of "
                        "the most recent updates of all clients: under stragglers it minimizes "
                        "a reweighted objective and plateaus",
                        {"naive": True}, kind="communication"),),
    ),
    P.claim(
        "heterogeneous_local_iterations", role="confirmation",
        source=P.cite("Thm 4.1(a) (E^t) / Sec. 3 aligned update", "[INFERRED]"),
        statement=r"\mathbb{E}\|x^T - x^*\|^2 = \mathcal{O}(T^{-1/2})\quad"
                  r"(E_i \in \{1, 2, 3, 5\},\ \eta = 1/\sqrt{T})",
        kind="at_most", variable="T", quantity=r"\mathbb{E}\|x^T - x^*\|^2",
        measure=hetero_local, grid=T_GRID_OUTSIDE, replicates=per_budget(128, 128, 256),
        law=LAW_SC_THM, tolerance=0.1, conditions=COND_OUTSIDE,
        schedule=f"{SC_SCHED_OUTSIDE}; BoundedDelay(3); per-client local iteration numbers E_i = "
                 f"{LOCAL_E} (tiled), local SGD y_{{i,e+1}} = y_{{i,e}} − β∇_y g_i "
                 f"(local_step = β), aligned update (1/E_i)Σ_e; {SERIES_T}",
        touches=("AFBO-I1",),
        mutants=(Mutant("unaligned",
                        "the unweighted sum Σ_e instead of the aligned mean (1/E_i)Σ_e: client i "
                        "counts E_i times, the inner loop solves Σ_iE_ig_i, and x converges to "
                        "a wrong point",
                        {"aligned": False}, kind="estimator"),),
    ),
]
