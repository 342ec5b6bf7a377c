"""AFBO claims: Li, Zhu, Gong, Mao, Zhou, "Anarchic Federated Bilevel Optimization" (WiOpt'24),
seed ``004_c02b3253ce8088b2.txt`` (PAPERS.md §5; the algorithm is ``bilevel_theory/afbo.py``).

**Instance** (every claim but ``afbo.staleness_floor_vs_delay``, see :func:`floor_problem`): a
population of 4 heterogeneous clients
(``QuadraticBilevel.random``: dims 3, κ = 2, heterogeneity 1, ``upper_mu = 1`` so Φ is
strongly convex, structured storage, seed 1), **tiled**: ``m`` clients are ``m/4`` copies of the
population.  Φ, ``x*``, every constant (``κ_g = ℓ_{g,1}/μ_g ≈ 3.03``, ``μ_Φ ≈ 1.26``,
``L_Φ ≈ 2.84``) and the heterogeneity ``σ_g² ≈ 45`` are then the same for every ``m``, so a sweep
in ``m`` changes ``m`` only.  Gradient noise is additive with ``E‖ξ‖² = σ² = 1`` on every
stochastic gradient; Hessian/Jacobian products are exact (``σ_{g,2} = 0``, allowed by Assumption
4.4), which keeps APHE's ``m²`` products per Neumann step affordable.

**Schedules** (Cor. 4.1; constants chosen, rates not; built by
:func:`bilevel_theory.afbo.theorem_schedule`): ``η = c/√T`` (strongly convex) or
``η = c√(m/T)`` (nonconvex); ``β = min(1/(2ℓ_{g,1}), 1/√(KT))`` (so ``Kβ² ≤ 1/T`` and Lemma
4.2's ``β ≤ 1/(2ℓ_{g,1})``); ``K = 5`` inner steps; delays ``BoundedDelay(3)`` (Assumption 4.6
with ``τ_M = 3``) in the outer and the inner loop unless a claim says otherwise.  The theorem's
step-size cap ``η ≤ a_1 = 1/(2L_f + 4M_fL_y + 2M_f) ≈ 0.0036`` (the [NOTE] reading of ``a_1``)
would need ``T`` in the 10⁵s at ``η = c√(m/T)``; the constants ``c`` are chosen for a stable,
affordable sweep (``afbo.staleness_floor_vs_delay`` runs at ``η = a_1`` itself).

**Neumann truncation.**  APHE *as written* fixes ``U = m`` (``truncation="fixed"``):
``(U/ℓ)(I − Ĥ/ℓ)^U → 0`` is not an inverse-Hessian estimate (claims ``afbo.aphe_bias`` and
``afbo.strongly_convex_rate``).  So that the rates are tested apart from that bias, the other
claims run FedNest/FedMBO's random truncation (``"random"``) or its expectation, the truncated
series (``"series"``, deterministic, lower variance), with ``N ≥ ⌈κ_g log T⌉`` (Cor. 4.1's
``N = O(log T)``, needed as a lower bound so that ``b² ≲ 1/T``).  Each claim's ``schedule``
says which.

**Noise floors.**  At a constant step the iterates settle to a stationary law whose spread sets
the rate; the strongly convex claims start at ``(x*, y*(x*))`` (the bound's ``V⁰`` term is then 0
and the transient ``e^{−cμ_Φ√T}`` is absent) and estimate ``E‖x^T − x*‖²`` by the mean of
``‖x^t − x*‖²`` over ``t ≥ T/2``, where the law of ``x^t`` is that of ``x^T`` (the build-up
``1 − e^{−2μ_Φηt}`` exceeds 0.98 there for ``T ≥ 50``).
"""

from __future__ import annotations

import functools
import math
from dataclasses import replace

import numpy as np
from bilevel_theory.problems import QuadraticBilevel
from bilevel_theory.problems.families import Dense, EigenScaled, RankOne, Shared

from bilevel_theory import make_context, run
from bilevel_theory import rates as R_
from bilevel_theory.afbo import BoundedDelay, Stragglers, aphe, theorem_schedule

from ..claim import Claim, Law, per_budget

PAPER = R_.PAPERS["afbo"]
SEED_FILE = R_.SEEDS["afbo"]

POPULATION = 4          # distinct clients; m = POPULATION · copies
M_DEFAULT = 8           # clients in the sweeps over T
K_INNER = 5             # inner steps K^t (a constant)
SIGMA = 1.0             # gradient noise std
ETA_SC = 0.5            # c in η = c/√T (strongly convex)
ETA_NC = 0.5            # c in η = c√(m/T) (nonconvex, sweep in T)
ETA_M = 0.25            # c in η = c√(m/T) (sweep in m)
T_M = 200               # T of the sweeps in m
DELAY = 3               # BoundedDelay(τ_M)
T_CAP = 3200            # largest T of any grid: the random truncation uses N(T_CAP) ≥ N(T)
TAIL = 0.5              # E‖x^T − x*‖² is averaged over t ≥ (1 − TAIL)·T
BIAS_POINTS_SEED = 20240
T_FLOOR = 800           # rounds of the staleness-floor runs (η = a_1)


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


def _schedule(T: int, m: int, case: str, c: float, K: int = K_INNER) -> dict:
    C = problem(m).constants
    return theorem_schedule(T, m, K, case=case, eta_scale=c, kappa_g=C["kappa_g"],
                            beta_max=1.0 / (2.0 * C["ell_g1"]))


def _out(value, trace) -> dict:
    """The measure's dict: ``value``, ``diverged`` and ledger totals."""
    led = trace.ledger.totals()
    R = trace.replicates
    return {"value": np.asarray(value, dtype=float), "diverged": trace.diverged.copy(),
            "rounds": np.full(R, led["rounds"]), "hvp_calls": np.full(R, led["hvp_calls"]),
            "grad_calls": np.full(R, led["grad_calls"])}


# ============================================================================ measures
def _sc_run(T, replicates, seed, backend, truncation, *, name="afbo", delay=None, local=None):
    """AFBO (or ``name``) at Cor. 4.1's strongly convex schedule, ``T`` rounds from
    ``(x*, y*(x*))``, ``m = 8``."""
    T, m = int(T), M_DEFAULT
    sc = _schedule(T, m, "strongly_convex", ETA_SC)
    if truncation == "fixed":
        sc.pop("neumann_steps")  # U = m, as written
    elif truncation == "random":
        sc["neumann_steps"] = _schedule(T_CAP, m, "strongly_convex", ETA_SC)["neumann_steps"]
    extra = {}
    if local is not None:
        extra = dict(local_iterations=local, local_step=sc["inner_step"])
    p = problem(m)
    return run(name, p, rounds=T, replicates=replicates, seed=seed, backend=backend,
               delay=BoundedDelay(DELAY) if delay is None else delay, inner_steps=K_INNER,
               truncation=truncation, x0=p.x_star, y0=p.y_star(p.x_star), **sc, **extra)


def _distance(trace) -> np.ndarray:
    """``E‖x^T − x*‖²`` per replicate: the mean of ``‖x^t − x*‖²`` over ``t ≥ (1 − TAIL)T``
    (stationary there at the schedule's constant η; see the module docstring)."""
    d = trace.distance_to(problem().x_star)
    return d[:, int(math.ceil((1.0 - TAIL) * trace.rounds)):].mean(axis=1)


def sc_fixed(T, replicates, seed, backend="numpy"):
    """``E‖x^T − x*‖²``, AFBO as written (APHE with ``U = m``), η = c/√T."""
    tr = _sc_run(T, replicates, seed, backend, "fixed")
    return _out(_distance(tr), tr)


def sc_random(T, replicates, seed, backend="numpy"):
    """``E‖x^T − x*‖²``, random truncation with ``N = ⌈κ_g log T_cap⌉`` (≥ the schedule's)."""
    tr = _sc_run(T, replicates, seed, backend, "random")
    return _out(_distance(tr), tr)


def nc_rate_T(T, replicates, seed, backend="numpy"):
    """``(1/T) Σ_{t<T} ‖∇Φ(x^t)‖²`` at η = c√(m/T) from the default start, series truncation
    ``N = ⌈κ_g log T⌉``, ``m = 8``."""
    T, m = int(T), M_DEFAULT
    tr = run("afbo", problem(m), rounds=T, replicates=replicates, seed=seed, backend=backend,
             delay=BoundedDelay(DELAY), inner_steps=K_INNER, truncation="series",
             **_schedule(T, m, "nonconvex", ETA_NC))
    return _out(tr.average_stationarity(), tr)


def _speedup(m, replicates, seed, backend, delay):
    m = int(m)
    tr = run("afbo", problem(m), rounds=T_M, replicates=replicates, seed=seed, backend=backend,
             delay=delay, inner_steps=K_INNER, truncation="series",
             **_schedule(T_M, m, "nonconvex", ETA_M))
    out = _out(tr.average_stationarity(), tr)
    out["tau_mean"] = tr.extras["tau_mean"].mean(axis=0)
    return out


def speedup_delayed(m, replicates, seed, backend="numpy"):
    """``(1/T) Σ_{t<T} ‖∇Φ(x^t)‖²`` at ``T = 200``, η = c√(m/T), ``BoundedDelay(3)``, default
    start ``x⁰ = 1, y⁰ = 0``."""
    return _speedup(m, replicates, seed, backend, BoundedDelay(DELAY))


def speedup_sync(m, replicates, seed, backend="numpy"):
    """As :func:`speedup_delayed` with every delay 1 (synchronous AFBO)."""
    return _speedup(m, replicates, seed, backend, "sync")


@functools.lru_cache(maxsize=1)
def floor_problem() -> QuadraticBilevel:
    """The staleness claim's instance: 4 clients, κ = 1, coupling 0.25, ``upper_mu = 2``, σ = 1
    (better conditioned than the population: ``a_1 L_Φ ≈ 0.033`` instead of 0.010, so the
    delays where the theorem's step ``η = a_1`` meets ``ηL_Φτ̄ ≈ 1`` are affordable)."""
    return QuadraticBilevel.random(clients=4, dim_x=3, dim_y=3, kappa=1.0, heterogeneity=1.0,
                                   noise=SIGMA, hessian_noise=0.0, seed=1, upper_mu=2.0,
                                   coupling=0.25, storage="structured")


def theorem_a1(constants) -> float:
    """Thm 4.1's step cap ``a_1 = 1/(2L_f + 4M_fL_y + 2M_fL_yα/(L_yα))``, the [NOTE] reading
    ``2M_fL_yα/(L_yα) = 2M_f``."""
    C = constants
    return 1.0 / (2.0 * C["L_f"] + 4.0 * C["M_f"] * C["L_y"] + 2.0 * C["M_f"])


def floor_vs_delay(tau_bar, replicates, seed, backend="numpy"):
    """Stationarity floor: the mean of ``‖∇Φ(x^t)‖²`` over ``t ≥ T/2`` from ``(x*, y*(x*))`` at
    the theorem's step ``η = a_1``, outer delays ``BoundedDelay(3τ̄ − 2)`` (uniform gaps: mean
    paper delay ``τ̄``), synchronous inner loop, ``T = 800`` (:func:`floor_problem`)."""
    tau_max = int(round(3 * float(tau_bar) - 2))
    p = floor_problem()
    C = p.constants
    sc = theorem_schedule(T_FLOOR, p.clients, K_INNER, case="nonconvex", kappa_g=C["kappa_g"],
                          beta_max=1.0 / (2.0 * C["ell_g1"]))
    sc["outer_step"] = theorem_a1(C)
    tr = run("afbo", p, rounds=T_FLOOR, replicates=replicates, seed=seed, backend=backend,
             delay=BoundedDelay(tau_max), inner_delay="sync", inner_steps=K_INNER,
             truncation="series", x0=p.x_star, y0=p.y_star(p.x_star), **sc)
    out = _out(tr.stationarity[:, T_FLOOR // 2:].mean(axis=1), tr)
    out["tau_mean"] = tr.extras["tau_mean"].mean(axis=0)
    out["eta_L_tau"] = np.full(replicates, sc["outer_step"] * C["L_phi"] * float(tau_bar))
    return out


STRAGGLERS = Stragglers(0.25, slowdown=5)


def no_bias_contrast(T, replicates, seed, backend="numpy"):
    """``E‖x^T − x*‖²`` of AFBO (most recent updates of all clients) and, as ``contrast``, of
    ``afbo_naive`` (fresh updates only), both under ``Stragglers(0.25, slowdown=5)`` (bounded
    delays, ``τ_M = 5``), η = c/√T, series truncation ``N = ⌈κ_g log T⌉``."""
    a = _sc_run(T, replicates, seed, backend, "series", delay=STRAGGLERS)
    b = _sc_run(T, replicates, seed + 1, backend, "series", name="afbo_naive",
                delay=STRAGGLERS)
    out = _out(_distance(a), a)
    out["contrast"] = _distance(b)
    out["diverged"] = a.diverged | b.diverged
    return out


def hetero_local(T, replicates, seed, backend="numpy"):
    """``E‖x^T − x*‖²`` with ``E_i^{t,k} ~ U{1..5}`` local SGD steps of size β, η = c/√T,
    series truncation ``N = ⌈κ_g log T⌉``."""
    tr = _sc_run(T, replicates, seed, backend, "series", local="uniform:1-5")
    return _out(_distance(tr), tr)


def _aphe_bias(m, replicates, seed, backend, truncation):
    """``‖(1/m) Σ_i H_i − ∇̄f(x, y)‖`` of noise-free APHE at random points ``(x, y)`` (one per
    replicate, the same points for every ``m``), ``m`` clients, with ``U = m`` (fixed, as written) or the series truncated at
    ``N = m``."""
    m = int(m)
    p = problem(m, noise=0.0)
    ctx = make_context(p, replicates, seed, backend)
    xp, be = ctx.xp, ctx.oracle.backend
    # the same R evaluation points at every m (common random numbers: the bias is deterministic
    # given the point, so the sweep compares like with like; ``seed`` seeds the oracle only)
    rng = np.random.default_rng(BIAS_POINTS_SEED)
    x = rng.standard_normal((replicates, p.dim_x))
    y = rng.standard_normal((replicates, p.dim_y))
    X, Y = xp.asarray(x), xp.asarray(y)
    idx = xp.broadcast_to(xp.arange(m)[None, :], (replicates, m))
    fy = ctx.oracle.grad_y_f(idx, X[:, None, :], Y[:, None, :])
    H = aphe(ctx, X, Y, fy, scale=p.constants["ell_g1"], truncation=truncation,
             neumann_steps=None if truncation == "fixed" else m)
    H = np.asarray(be.to_numpy(xp.mean(H, axis=1)))
    exact = p.surrogate_hypergradient(x, y)
    return {"value": np.sqrt(((H - exact) ** 2).sum(-1)),
            "hvp_calls": np.full(replicates, ctx.oracle.counter.hvp)}


def aphe_bias_fixed(m, replicates, seed, backend="numpy"):
    """APHE as written: ``(U/ℓ) Π_{l≤U}(I − Ĥ/ℓ)`` with ``U = m``."""
    return _aphe_bias(m, replicates, seed, backend, "fixed")


def aphe_bias_series(m, replicates, seed, backend="numpy"):
    """The series ``(1/ℓ) Σ_{n<N} (I − Ĥ/ℓ)^n`` with ``N = m`` (the random truncation's mean)."""
    return _aphe_bias(m, replicates, seed, backend, "series")


# ============================================================================ laws
def _law(bound, kind, var, **kw) -> Law:
    return Law(*R_.law_for(bound, kind, var, **kw).as_tuple())


LAW_SC_COR = _law("afbo.cor41_strongly_convex", "exponent", "T")               # −1
LAW_SC_THM = _law("afbo.thm41a_cor41_schedule", "exponent", "T")               # −1/2
LAW_NC_T = _law("afbo.cor41_nonconvex", "exponent", "T")                       # −1/2
LAW_NC_M = _law("afbo.cor41_nonconvex", "exponent_at_order", "T", second="m")  # −1/2
LAW_STALE = _law("afbo.staleness_term", "exponent", "tau_bar")                 # +1
LAW_APHE = _law("afbo.aphe_bias", "log_ratio", "m",
                subs={"kappa_g": float(problem().constants["kappa_g"])})        # log(1 − 1/κ_g)
# For the reasons: Thm 4.1(b)'s own exponent in m at Cor. 4.1's schedule (staleness term).
THM_B_M = float(R_.exponent_at_order(R_.BOUNDS["afbo.thm41b_cor41_schedule"].expr, "T", "m"))


# ============================================================================ claims
_b = per_budget


def _claim(name, **kw) -> Claim:
    return Claim(id=f"afbo.{name}", paper=PAPER, **kw)


T_GRID = _b([50, 100, 200, 400], [50, 100, 200, 400, 800, 1600],
            [50, 100, 200, 400, 800, 1600, 3200])
M_GRID = _b([4, 8, 16, 32], [4, 8, 16, 32, 64], [4, 8, 16, 32, 64, 128])
TAU_GRID = _b([16, 24, 32, 48, 64], [1, 2, 4, 8, 16, 24, 32, 48, 64],
               [1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64])
U_GRID = _b(range(4, 41, 4), range(4, 41, 4), range(4, 49, 4))

SC_SCHED = ("η = c/√T (c = 0.5), β = min(1/(2ℓ_{g,1}), 1/√(KT)), K = 5, m = 8, σ = 1, "
            "start (x*, y*(x*)), E‖x^T − x*‖² averaged over t ≥ T/2")
RANDOM = ("random truncation N_i ~ U{0..N−1} with N = ⌈κ_g log 3200⌉ = 25 at every T (≥ the "
          "schedule's ⌈κ_g log T⌉, so b² ≲ 1/T throughout; a T-independent N keeps the "
          "truncation's variance, ∝ N, out of the T-fit)")
SERIES_T = "series truncation (the random one's expectation), N = ⌈κ_g log T⌉"

# Evidence for the claims not expected to hold (numbers from `verify.check`, seed 0).
_SPEEDUP = (
    "Cor. 4.1 ties β to K^tβ² ≤ 1/T only, so the inner loop contracts y by ≈ μ_g√(K/T) per round"
    " whatever m while η = c√(m/T) grows: the initial lower-level error costs ≈ M_f²‖y⁰ − "
    "y*(x⁰)‖²/(2μ_g√(KT)), independent of m, and once η ≳ βK the lagging y caps the outer "
    "progress, so the slope flattens toward 0 as m grows. Theory: Thm 4.1(b) at η = √(m/T) keeps"
    " 3L_fD̂_f τ̄√(m/T) (exponent +1/2 in m, rates afbo.thm41b_cor41_schedule; synchronously "
    "3(m+4)L_fηD̂_f/m, still +1/2), so the theorem does not give m^{−1/2} either. Diagnostic "
    "(not a claim): with y⁰ = y*(x⁰) and K = 40 the pairwise slopes are −0.51, −0.46, −0.43, "
    "−0.35 (sync, m = 4→8→16→32→64): the speedup lasts only while m ≲ K."
)
_R = {
    "strongly_convex_rate": (
        "Measured slope +0.024 [0.010, 0.039] (smoke, T = 50..400) and +0.018 [0.014, 0.024] "
        "(standard, T = 50..1600) vs the bound ≤ −0.9: E‖x^T − x*‖² = 1.43, 1.51, 1.53, 1.51 at "
        "T = 50..400, i.e. the squared distance 1.52 (0.70‖x*‖²) from x* to x̃, the zero of "
        "APHE's hypergradient. APHE as written multiplies ∇_y f by (U/ℓ)(I − Ĥ/ℓ)^U with U = m; "
        "for ℓ ≥ λ_max(Ĥ) this tends to 0 as U grows (spectral norm 0.107 at U = 8 against "
        "‖[∇²_{yy}g]^{-1}‖ = 1), it is not an inverse-Hessian estimate, so the bias b of Thm 4.1"
        " does not vanish and AFBO converges to a wrong point whatever the step-size schedule "
        "(afbo.aphe_bias)."),
    "strongly_convex_rate_random_truncation": (
        "Measured slope −0.455 [−0.532, −0.377] (smoke, T = 50..400) and −0.527 [−0.558, −0.494]"
        " (standard, T = 50..1600) vs the bound ≤ −0.9. With η = c/√T constant within a run the "
        "iterates settle at a noise floor ∝ ησ², i.e. ∝ T^{−1/2} (E‖x^T − x*‖² = 0.058, 0.047, "
        "0.030, 0.023 at T = 50..400); Thm 4.1(a) itself gives T^{−1/2} at this schedule (its "
        "C/(ημ_f) term has η/m and ηΣ_iτ_i/m parts: rates afbo.thm41a_cor41_schedule; "
        "afbo.strongly_convex_rate_theorem holds), so the corollary's O(1/T) follows neither "
        "from the theorem nor from the algorithm; O(1/T) needs a decaying step (η_t ∝ 1/t)."),
    "linear_speedup_m": (
        "Measured slope −0.371 [−0.381, −0.361] (smoke, m = 4..32) and −0.364 [−0.370, −0.357] "
        "(standard, m = 4..64) vs the bound ≤ −0.4: (1/T)Σ‖∇Φ‖² = 1.69, 1.29, 1.00, 0.78 at m = "
        "4, 8, 16, 32 (standard, m = 4→8→…→64: pairwise slopes −0.40, −0.35, −0.37, −0.34). "
        + _SPEEDUP),
    "linear_speedup_m_sync": (
        "Measured slope −0.377 [−0.383, −0.371] (smoke, m = 4..32) and −0.371 [−0.376, −0.366] "
        "(standard, m = 4..64) vs the bound ≤ −0.4: (1/T)Σ‖∇Φ‖² = 1.63, 1.26, 0.96, 0.75 at m = "
        "4, 8, 16, 32 (standard pairwise −0.39, −0.37, −0.37, −0.36); delays are not the cause "
        "(afbo.linear_speedup_m: −0.36). "
        + _SPEEDUP),
    "staleness_floor_vs_delay": (
        "Measured slope 2.21 [1.90, 2.47] (smoke) and 2.21 [1.95, 2.45] (standard) on τ̄ ∈ [16, "
        "64] vs the bound ≤ 1.15. Up to τ̄ ≈ 8 the floor is linear, as the bound says: "
        "F(τ̄)/((2τ̄ − 1)F(1)) = 0.99, 1.02, 1.04 at τ̄ = 2, 4, 8 (a client's noise held over a "
        "gap G adds E[G²]/E[G] = 2τ̄ − 1). At the same admissible step η = a_1 it then grows "
        "faster: 1.14, 1.29, 1.61, 3.1, 5.9 at τ̄ = 16, 24, 32, 48, 64 (ηL_Φτ̄ = 0.53 to 2.1), "
        "towards divergence. Thm 4.1's step condition η ≤ min{a_1, T/(2ℓ_{g,1}a_2)} does not "
        "involve τ_M, but steps on τ-round-old information amplify errors once ηL_Φτ̄ ≳ 1, so no"
        " bound linear in τ̄ can hold at a τ-independent η: a condition like η ≲ 1/(L τ_M) is "
        "missing."),
    "aphe_bias": (
        "Measured semilog slope +0.0005 [−0.018, 0.020] (smoke) and +0.0009 [−0.014, 0.016] "
        "(standard) on m ∈ [12, 40] vs log(1 − 1/κ_g) = −0.400 ± 0.05: at the same evaluation "
        "points the bias ‖H̄ − ∇̄f‖ rises from 0.98 (m = 4) to 1.18 and stays there (smoke; 2.15"
        " → 2.95 over the standard budget's points). (U/ℓ)(I − Ĥ/ℓ)^U with U = m tends to 0, as "
        "U(1 − μ_g/ℓ)^U, so the bias tends to ‖∇²_{xy}g[∇²_{yy}g]^{-1}∇_y f‖ instead of 0; the "
        "bound's (1 − 1/κ_g)^m is the bias of the Neumann series, which APHE does not compute "
        "(the same measurement with the series, the random truncation's mean, gives −0.4001: "
        "afbo.aphe_bias_series holds)."),
}

CLAIMS = [
    _claim(
        "strongly_convex_rate",
        source=f"{SEED_FILE}, Cor. 4.1 (strongly convex) [TEXT]",
        statement=r"\mathbb{E}\|x^T - x^*\|^2 = \mathcal{O}(1/T)\quad(\eta = 1/\sqrt{T},"
                  r"\ K^t\beta^2 \leq 1/T,\ U = m)",
        kind="at_most", variable="T", quantity=r"\mathbb{E}\|x^T - x^*\|^2",
        measure=sc_fixed, grid=T_GRID, replicates={"smoke": 16, "standard": 32, "full": 64},
        law=LAW_SC_COR, tolerance=0.1, expected="violated",
        reason=_R["strongly_convex_rate"],
        schedule=f"{SC_SCHED}; BoundedDelay(3); APHE as written: fixed truncation U = m = 8",
        touches=("APHE fixes U = m ([NOTE] 1/N read 1/m, p_{i,N} read p_{i,U})",
                 "[NOTE] Thm 4.1's '=' read as '≤'"),
    ),
]

CLAIMS += [
    _claim(
        "strongly_convex_rate_random_truncation",
        source=f"{SEED_FILE}, Cor. 4.1 (strongly convex) [TEXT]",
        statement=r"\mathbb{E}\|x^T - x^*\|^2 = \mathcal{O}(1/T)\quad(\eta = 1/\sqrt{T},"
                  r"\ K^t\beta^2 \leq 1/T,\ N = \mathcal{O}(\log T))",
        kind="at_most", variable="T", quantity=r"\mathbb{E}\|x^T - x^*\|^2",
        measure=sc_random, grid=T_GRID, replicates={"smoke": 48, "standard": 96, "full": 192},
        law=LAW_SC_COR, tolerance=0.1, expected="violated",
        reason=_R["strongly_convex_rate_random_truncation"],
        schedule=f"{SC_SCHED}; BoundedDelay(3); {RANDOM}",
        touches=("N = O(log T) read as N ≥ κ_g log T ([NOTE] a lower bound)",
                 "random truncation instead of APHE's fixed U = m (see afbo.aphe_bias)"),
    ),
    _claim(
        "strongly_convex_rate_theorem",
        source=f"{SEED_FILE}, Thm 4.1(a) at Cor. 4.1's schedule [INFERRED]",
        statement=r"\mathbb{E}[V^T] \leq (1-\eta\mu_f)^T V^0 + \frac{C}{\eta\mu_f} = "
                  r"\mathcal{O}(T^{-1/2})\quad(\eta = 1/\sqrt{T})",
        kind="at_most", variable="T", quantity=r"\mathbb{E}\|x^T - x^*\|^2",
        measure=sc_random, grid=T_GRID, replicates={"smoke": 48, "standard": 96, "full": 192},
        law=LAW_SC_THM, tolerance=0.1,
        schedule=f"{SC_SCHED}; BoundedDelay(3); {RANDOM} (the same runs as "
                 "afbo.strongly_convex_rate_random_truncation)",
        touches=("[INFERRED] U_1 = u_1η² (undefined in the source)",
                 "[NOTE] '=' read as '≤'; constant η"),
    ),
    _claim(
        "nonconvex_rate_T",
        source=f"{SEED_FILE}, Cor. 4.1 (nonconvex) [TEXT]",
        statement=r"\frac{1}{T}\sum_{t<T}\mathbb{E}\|\nabla\Phi(x^t)\|^2 = "
                  r"\mathcal{O}\left(\frac{1}{\sqrt{mT}} + \frac{1}{m\sqrt{mT}} + \frac{1}{T}"
                  r"\right)\quad(\eta = \sqrt{m/T})",
        kind="at_most", variable="T",
        quantity=r"\frac{1}{T}\sum_{t<T}\|\nabla\Phi(x^t)\|^2",
        measure=nc_rate_T, grid=T_GRID, replicates={"smoke": 16, "standard": 32, "full": 64},
        law=LAW_NC_T, tolerance=0.1,
        schedule="η = c√(m/T) (c = 0.5), β = min(1/(2ℓ_{g,1}), 1/√(KT)), K = 5, m = 8, σ = 1, "
                 f"BoundedDelay(3), default start x⁰ = 1, y⁰ = 0; {SERIES_T}",
        touches=("N = O(log T) read as N ≥ κ_g log T", "series truncation instead of U = m"),
    ),
    _claim(
        "linear_speedup_m",
        source=f"{SEED_FILE}, Cor. 4.1 (nonconvex) / Remark 4 [TEXT]",
        statement=r"\frac{1}{T}\sum_{t<T}\mathbb{E}\|\nabla\Phi(x^t)\|^2 = "
                  r"\mathcal{O}(1/\sqrt{mT})\ \mathrm{in}\ m\quad(\eta = \sqrt{m/T},"
                  r"\ \mathrm{bounded\ delays})",
        kind="at_most", variable="m", quantity=r"\frac{1}{T}\sum_{t<T}\|\nabla\Phi(x^t)\|^2",
        measure=speedup_delayed, grid=M_GRID,
        replicates={"smoke": 8, "standard": 16, "full": 32},
        law=LAW_NC_M, tolerance=0.1, expected="violated",
        reason=_R["linear_speedup_m"],
        schedule=f"T = {T_M} fixed, η = c√(m/T) (c = {ETA_M}), β = min(1/(2ℓ_{{g,1}}), "
                 "1/√(KT)), K = 5, σ = 1, BoundedDelay(3) outer and inner, default start "
                 f"x⁰ = 1, y⁰ = 0; {SERIES_T}",
        touches=(f"Thm 4.1(b) at this schedule keeps 3L_fD̂_f τ̄ √(m/T): exponent {THM_B_M:+g} "
                 "in m (afbo.thm41b_cor41_schedule); the corollary's m^{−1/2} does not follow",
                 "Cor. 4.1 constrains β only by K^tβ² ≤ 1/T, independently of η"),
    ),
    _claim(
        "linear_speedup_m_sync",
        source=f"{SEED_FILE}, Cor. 4.1 (nonconvex) / Remark 4 [TEXT]",
        statement=r"\frac{1}{T}\sum_{t<T}\mathbb{E}\|\nabla\Phi(x^t)\|^2 = "
                  r"\mathcal{O}(1/\sqrt{mT})\ \mathrm{in}\ m\quad(\eta = \sqrt{m/T},"
                  r"\ \tau_i^t = 1)",
        kind="at_most", variable="m", quantity=r"\frac{1}{T}\sum_{t<T}\|\nabla\Phi(x^t)\|^2",
        measure=speedup_sync, grid=M_GRID,
        replicates={"smoke": 8, "standard": 16, "full": 32},
        law=LAW_NC_M, tolerance=0.1, expected="violated",
        reason=_R["linear_speedup_m_sync"],
        schedule="as afbo.linear_speedup_m, synchronous (every delay 1)",
        touches=("synchronously the theorem's last term is 3(m+4)L_fηD̂_f/m, still +1/2 in m "
                 "at η = √(m/T)", "Cor. 4.1 constrains β only by K^tβ² ≤ 1/T"),
    ),
    _claim(
        "staleness_floor_vs_delay",
        source=f"{SEED_FILE}, Thm 4.1(b) last term / Remark 2 [TEXT]",
        statement=r"\frac{1}{\bar\eta T}\sum_t\left(\sum_i\tau_i^t + 4\right)"
                  r"\frac{3L_f\eta_t^2\hat D_f}{m} = \mathcal{O}(\bar\tau)\quad"
                  r"(\eta \leq a_1)",
        kind="at_most", variable=r"\bar\tau",
        quantity=r"\|\nabla\Phi(x^t)\|^2\ \mathrm{floor}\ (t \geq T/2)",
        measure=floor_vs_delay, grid=TAU_GRID,
        replicates={"smoke": 32, "standard": 64, "full": 128},
        law=LAW_STALE, tolerance=0.15, window=(16, 64), expected="violated",
        reason=_R["staleness_floor_vs_delay"],
        schedule=f"the theorem's step η = a_1 = 1/(2L_f + 4M_fL_y + 2M_f) ≈ 0.0102 (constant), "
                 f"β = min(1/(2ℓ_{{g,1}}), 1/√(KT)), K = 5, T = {T_FLOOR}, σ = 1, started at "
                 "(x*, y*(x*)); floor = mean of ‖∇Φ(x^t)‖² over t ≥ T/2; outer delays "
                 "BoundedDelay(3τ̄ − 2) (uniform gaps, mean paper delay τ̄ = (τ_M + 2)/3), "
                 "synchronous inner loop (the bound has no inner-delay term); series truncation "
                 "N = ⌈κ_g log T⌉; instance floor_problem() (m = 4, κ = 1, coupling 0.25, "
                 "upper_mu 2: a_1L_Φ ≈ 0.033); window τ̄ ∈ [16, 64] (asymptotic: the noise-hold "
                 "offset of a floor ∝ 2τ̄ − 1 moves the local slope by < 0.04 there)",
        touches=("Σ_i τ_i^t = m τ̄ (mean outer delay)",
                 "[NOTE] a_1's 2M_fL_yα/(L_yα) read as 2M_f",
                 "ρ (inner delay) absent from the bound: inner loop synchronous"),
    ),
    _claim(
        "no_bias_bounded_delays",
        source=f"{SEED_FILE}, §3 (most recent updates) and Thm 4.1(a) at Cor. 4.1 [INFERRED]",
        statement=r"\mathrm{AFBO}:\ \mathbb{E}\|x^T - x^*\|^2 \propto T^{-1/2};\ "
                  r"\mathrm{naive\ asynchronous}:\ \mathrm{plateau}",
        kind="contrast", variable="T", quantity=r"\mathbb{E}\|x^T - x^*\|^2",
        measure=no_bias_contrast, grid=T_GRID,
        replicates={"smoke": 32, "standard": 64, "full": 128},
        law=LAW_SC_THM, tolerance=0.15,
        schedule=f"{SC_SCHED}; Stragglers(0.25, slowdown 5) outer and inner (bounded, "
                 f"τ_M = 5) for both algorithms; {SERIES_T} for both (removes APHE's U = m "
                 "bias from the comparison)",
        touches=("afbo_naive averages only the arrived updates (reweights non-IID clients)",
                 "series truncation instead of U = m", "[INFERRED] U_1 = u_1η²"),
    ),
    _claim(
        "heterogeneous_local_iterations",
        source=f"{SEED_FILE}, Thm 4.1(a) (E^t) / §3 aligned update [INFERRED]",
        statement=r"\mathbb{E}\|x^T - x^*\|^2 = \mathcal{O}(T^{-1/2})\quad"
                  r"(E_i^{t,k} \sim U\{1..5\},\ \eta = 1/\sqrt{T})",
        kind="at_most", variable="T", quantity=r"\mathbb{E}\|x^T - x^*\|^2",
        measure=hetero_local, grid=T_GRID,
        replicates={"smoke": 32, "standard": 64, "full": 128},
        law=LAW_SC_THM, tolerance=0.1,
        schedule=f"{SC_SCHED}; BoundedDelay(3); E_i^{{t,k}} ~ U{{1..5}} per inner step, client "
                 "and replicate, local SGD y_{i,e+1} = y_{i,e} − β∇_y g_i (local_step = β), "
                 f"aligned update (1/E_i)Σ_e; {SERIES_T}",
        touches=("[NOTE] the local iterates y_{i,e} have no update rule in the paper: local "
                 "SGD with the inner step β",),
    ),
    _claim(
        "aphe_bias",
        source=f"{SEED_FILE}, Thm 4.1 (b with U = m) / Alg. 2 APHE [TEXT]",
        statement=r"\|\bar H - \bar\nabla f\| \leq b = \kappa_g\ell_{f,1}(1 - 1/\kappa_g)^m"
                  r"\quad(U = m)",
        kind="geometric", variable="m", quantity=r"\|\frac{1}{m}\sum_i H_i - \bar\nabla f\|",
        measure=aphe_bias_fixed, grid=U_GRID,
        replicates={"smoke": 8, "standard": 16, "full": 32},
        law=LAW_APHE, tolerance=0.05, scale="semilog", window=(12, 48),
        expected="violated", reason=_R["aphe_bias"],
        schedule="noise-free APHE at random (x, y), one per replicate; m clients (m/4 copies "
                 "of the population: the same Hessians for every m), U = m products, "
                 "ℓ = ℓ_{g,1}; window m ≥ 12 (asymptotic ratio)",
        touches=("APHE fixes U = m: (U/ℓ)Π(I − Ĥ/ℓ) ([NOTE] 1/N read 1/m, p_{i,N} read "
                 "p_{i,U})", "[NOTE] the theorem's b is written with N"),
    ),
    _claim(
        "aphe_bias_series",
        source=f"{SEED_FILE}, Thm 4.1 (b with N = m) [TEXT]",
        statement=r"\|\mathbb{E}\bar H - \bar\nabla f\| \leq \kappa_g\ell_{f,1}"
                  r"(1 - 1/\kappa_g)^N\quad(N = m,\ \mathrm{random\ truncation})",
        kind="geometric", variable="m", quantity=r"\|\frac{1}{m}\sum_i H_i - \bar\nabla f\|",
        measure=aphe_bias_series, grid=U_GRID,
        replicates={"smoke": 8, "standard": 16, "full": 32},
        law=LAW_APHE, tolerance=0.05, scale="semilog", window=(12, 48),
        schedule="noise-free APHE at random (x, y); series truncation (1/ℓ)Σ_{n<N}(I − Ĥ/ℓ)^n "
                 "(the expectation of FedNest/FedMBO's random truncation) with N = m; window "
                 "m ≥ 12",
        touches=("control for afbo.aphe_bias: the random/series truncation has the law's ratio",),
    ),
]
