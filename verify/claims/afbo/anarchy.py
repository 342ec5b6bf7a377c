"""AFBO's anarchic participation: the staleness excess against Thm 4.1(b)'s and (a)'s delay
terms, the aggregation of the most recent updates under stragglers (its limit point, and its
floor at a constant step: Remark 1), heterogeneous local iteration numbers — Li, Zhu, Gong, Mao
& Zhou, WiOpt 2024, Thm 4.1, Remark 1, Sec. 3."""

from __future__ import annotations

import functools
import math

import numpy as np

from bilevel_theory import run
from bilevel_theory.afbo import BoundedDelay, HeavyTailedDelay, Stragglers, theorem_schedule
from bilevel_theory.problems import QuadraticBilevel

from ...claim import Condition, Mutant, per_budget
from ...kit import per_replicate
from .common import (
    ETA_SC,
    FLOOR_STEP_DIV,
    K_INNER,
    LAW_FLOOR_ETA,
    LAW_SC_STALE,
    LAW_SC_THM,
    LAW_STALE,
    LOCAL_E,
    M_DEFAULT,
    POPULATION,
    SERIES_T,
    SIGMA,
    SYNC_BASELINE_SEED,
    T_FLOOR,
    P,
    _distance,
    _out,
    _sc_run,
    _schedule,
    problem,
    theorem_a1,
    theorem_a2_min,
    theorem_conditions,
)


# ============================================================================ instance and measures
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


def _floor_run(delay, replicates, seed, backend, stale_weighting="none", case="nonconvex"):
    """AFBO on :func:`floor_problem` at ``η = a_1/4`` from ``(x*, y*(x*))``, outer delays
    ``delay`` (a delay model), synchronous inner loop: ``T = 400`` rounds at Thm 4.1(b)'s
    inner step (``case="nonconvex"``), or the strongly convex step claim's schedule at this
    ``η`` (``case="strongly_convex"``: :func:`floor_eta_schedule`, ``T(η) = 1052`` rounds)."""
    p = floor_problem()
    C = p.constants
    if case == "nonconvex":
        T = T_FLOOR
        sc = theorem_schedule(T, p.clients, K_INNER, case="nonconvex", kappa_g=C["kappa_g"],
                              beta_max=1.0 / (2.0 * C["ell_g1"]))
    else:
        sc = _sc_floor_schedule()
        T = sc.pop("rounds")
    sc["outer_step"] = floor_step()
    return run("afbo", p, rounds=T, replicates=replicates, seed=seed, backend=backend,
               delay=delay, inner_delay="sync", inner_steps=K_INNER,
               truncation="series", x0=p.x_star, y0=p.y_star(p.x_star),
               stale_weighting=stale_weighting, **sc)


def _floor_value(trace, case: str) -> np.ndarray:
    """The staleness claims' quantity per replicate: ``(1/T) Σ_t ‖∇Φ(x^t)‖²``
    (``"nonconvex"``) or ``E‖x − x*‖²`` over ``t ≥ T/2`` (``"strongly_convex"``)."""
    if case == "nonconvex":
        return trace.average_stationarity()
    return _distance(trace, floor_problem())


@functools.lru_cache(maxsize=8)
def _sync_floor(replicates: int, backend: str, case: str = "nonconvex") -> float:
    """The synchronous (every delay 1) value of a staleness claim's quantity: the mean over
    ``2·replicates`` runs, seed ``SYNC_BASELINE_SEED`` (one baseline for every point)."""
    tr = _floor_run(BoundedDelay(1), 2 * replicates, SYNC_BASELINE_SEED, backend, case=case)
    return float(_floor_value(tr, case).mean())


def _excess_run(delay, replicates, seed, backend, stale_weighting, case):
    """``(out, F)``: a staleness claim's run under the outer delays ``delay``
    (:func:`_floor_run`), ``F`` its quantity per replicate (:func:`_floor_value`), ``out`` the
    measure's dict with ``value = F`` minus its synchronous value (:func:`_sync_floor`) and
    the measured mean delay ``tau_mean``."""
    tr = _floor_run(delay, replicates, seed, backend, stale_weighting, case=case)
    F = _floor_value(tr, case)
    out = _out(F - _sync_floor(replicates, backend, case), tr)
    out["tau_mean"] = tr.extras["tau_mean"].mean(axis=0)
    return out, F


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

    return BOUNDS["afbo.thm41b"].at(
        B_beta=B, D_hat_f=D, sigma_hat_f=D, L_f=C["L_f"], L_y=C["L_y"], M_f=C["M_f"],
        N=sc["neumann_steps"], T=T_FLOOR, W_0=0.0, alpha=alpha, ell_f1=C["ell_f1"], eta=eta,
        kappa_g=C["kappa_g"], m=m, sigma_g=math.sqrt(C["sigma_g2"]),
        sigma_g1=math.sqrt(C["sigma_g12"]), tau_bar=float(tau_bar))


def staleness_excess(excess, replicates, seed, backend="numpy", *, stale_weighting="none"):
    """``(1/T) Σ_{t<T} ‖∇Φ(x^t)‖²`` at mean outer delay ``τ̄ = 1 + excess`` (outer delays
    ``BoundedDelay(3τ̄ − 2)``: uniform gaps, mean paper delay ``τ̄``; synchronous inner loop)
    minus its synchronous value (:func:`_sync_floor`), from ``(x*, y*(x*))`` at ``η = a_1/4``,
    ``T = 400`` (:func:`floor_problem`); ``delay_term``: Thm 4.1(b)'s delay term
    ``3L_fηD̂_f(τ̄ + 4/m)`` at the smallest admissible ``D̂_f = σ_f²`` (AFBO-R10)."""
    tau_bar = 1.0 + float(excess)
    out, F = _excess_run(BoundedDelay(int(round(3 * tau_bar - 2))), replicates, seed, backend,
                         stale_weighting, "nonconvex")
    C = floor_problem().constants
    out["stationarity"] = F
    out["thm41b_bound"] = per_replicate(staleness_theorem_bound(tau_bar), replicates)
    out["delay_term"] = per_replicate(3 * C["L_f"] * floor_step() * C["sigma_f2"]
                                      * (tau_bar + 4.0 / floor_problem().clients), replicates)
    return out


def _sc_excess(delay, tau_excess, replicates, seed, backend, stale_weighting):
    """The strongly convex staleness claims' measure: ``E‖x − x*‖²`` (the mean of
    ``‖x^t − x*‖²`` over ``t ≥ T/2``) under the outer delays ``delay`` (synchronous inner loop)
    minus its synchronous value (:func:`_sync_floor`), at the constant ``η = a_1/4`` after
    ``T(η) = 1052`` rounds from ``(x*, y*(x*))`` (:func:`_floor_run`,
    ``case="strongly_convex"``); ``delay_term``: the bound's delay part
    ``6ηD̂_f(τ̄ − 1)/μ_f`` at the smallest admissible ``D̂_f = σ_f²`` (AFBO-R10, R15), with
    ``τ̄ − 1 = tau_excess`` the model's mean paper delay minus 1."""
    out, F = _excess_run(delay, replicates, seed, backend, stale_weighting, "strongly_convex")
    C = floor_problem().constants
    out["floor"] = F
    out["delay_term"] = per_replicate(6 * floor_step() * C["sigma_f2"] * tau_excess
                                      / C["mu_phi"], replicates)
    return out


def sc_staleness_excess(excess, replicates, seed, backend="numpy", *, stale_weighting="none"):
    """Thm 4.1(a)'s delay sweep (:func:`_sc_excess`) at mean outer delay ``τ̄ = 1 + excess``:
    outer delays ``BoundedDelay(3τ̄ − 2)`` (uniform gaps, mean paper delay ``τ̄``)."""
    tau_bar = 1.0 + float(excess)
    return _sc_excess(BoundedDelay(int(round(3 * tau_bar - 2))), tau_bar - 1.0, replicates,
                      seed, backend, stale_weighting)


#: the straggler claim's stragglers: the last two of :func:`floor_problem`'s four clients (with
#: one, the first point's excess is a quarter of the synchronous floor; with two, half of it)
STRAGGLER_FRACTION = 0.5


def straggler_excess(slowdown_excess, replicates, seed, backend="numpy", *,
                     stale_weighting="none"):
    """Fig. 4's stragglers in Thm 4.1(a)'s delay sweep (:func:`_sc_excess`): two clients of four
    upload every ``s = 1 + slowdown_excess`` rounds (``Stragglers(0.5, slowdown=s)``, the
    others every round), so a straggler's stored update's age cycles through ``1, …, s`` and
    the mean paper delay is ``τ̄ = 1 + (s − 1)/4``."""
    s = 1 + int(round(float(slowdown_excess)))
    delay = Stragglers(STRAGGLER_FRACTION, slowdown=s)
    m = floor_problem().clients
    tau_excess = delay.slow(m).sum() / m * (s - 1) / 2.0
    return _sc_excess(delay, tau_excess, replicates, seed, backend, stale_weighting)


#: §V's heavy-tailed delays as discrete Pareto gaps of tail index 3/2 (``P(g > n) = n^{−3/2}``:
#: a finite mean, an infinite variance uncapped), capped at ``τ_M`` (Assumption 4.6) doubling
#: from 2 to 32: the stationary mean ``E[τ − 1]`` goes from 0.5 to 3.0 (as ``τ_M^{1/2}``) while
#: ``E[(τ − 1)²]`` goes from 0.5 to 36 (as ``τ_M^{3/2}``)
HEAVY_ALPHA = 1.5
HEAVY_CAPS = (2, 4, 8, 16, 32)
#: the grid's models, one per cap, with their stationary ``τ̄ − 1`` (the swept values)
HEAVY_MODELS = tuple((m.mean_delay() - 1.0, m)
                     for m in (HeavyTailedDelay(HEAVY_ALPHA, c) for c in HEAVY_CAPS))


def heavy_delay(excess) -> HeavyTailedDelay:
    """The capped heavy-tailed model of ``HEAVY_CAPS`` whose stationary mean paper delay
    (:meth:`HeavyTailedDelay.mean_delay`) is ``1 + excess``."""
    for tau_excess, model in HEAVY_MODELS:
        if math.isclose(tau_excess, float(excess), rel_tol=1e-9):
            return model
    raise ValueError(f"`excess` must be τ̄ − 1 of HeavyTailedDelay({HEAVY_ALPHA}, cap) for a cap "
                     f"in {HEAVY_CAPS}, got {excess!r}")


def heavy_staleness_excess(excess, replicates, seed, backend="numpy", *,
                           stale_weighting="none"):
    """Thm 4.1(a)'s delay sweep (:func:`_sc_excess`) under heavy-tailed outer delays
    (:func:`heavy_delay`) of stationary mean paper delay ``τ̄ = 1 + excess``; ``cap``: their
    ``τ_M``."""
    model = heavy_delay(excess)
    out = _sc_excess(model, float(excess), replicates, seed, backend, stale_weighting)
    out["cap"] = per_replicate(model.cap, replicates)
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


#: rounds per relaxation time 1/(ημ_Φ) of the step claim's runs: T(η) = ⌈6/(ημ_Φ)⌉, so the
#: averaged half t ≥ T/2 starts 3 relaxation times in (build-up 1 − e^{−6} ≈ 0.9975 at every η)
FLOOR_RELAXATIONS = 6


def relaxation_rounds(eta: float, mu_phi: float) -> int:
    """``T(η) = ⌈FLOOR_RELAXATIONS/(ημ_Φ)⌉``: that many relaxation times ``1/(ημ_Φ)`` of ``x``."""
    return math.ceil(FLOOR_RELAXATIONS / (eta * mu_phi) - 1e-9)


def floor_eta_rounds(eta: float) -> int:
    """:func:`relaxation_rounds` on :func:`floor_problem`."""
    return relaxation_rounds(eta, floor_problem().constants["mu_phi"])


def floor_eta_schedule(eta_inv: float) -> dict:
    """The step claim's hyperparameters at ``η = 1/eta_inv``: ``T(η)`` rounds, the inner step
    scaled with ``η`` (``β = (η/a_1)/√(K·T(a_1))``: Cor. 4.1's ``Kβ² ≤ 1/T`` with equality at
    ``η = a_1`` and ``Kβ² = (η/a_1)/T`` below), ``N = ⌈κ_g log T⌉`` (series truncation)."""
    p = floor_problem()
    C = p.constants
    eta, a1 = 1.0 / float(eta_inv), theorem_a1(C)
    T = floor_eta_rounds(eta)
    sc = theorem_schedule(T, p.clients, K_INNER, case="strongly_convex", kappa_g=C["kappa_g"],
                          beta_max=1.0 / (2.0 * C["ell_g1"]))
    beta = (eta / a1) / math.sqrt(K_INNER * floor_eta_rounds(a1))
    return dict(rounds=T, outer_step=eta, inner_step=beta,
                neumann_steps=sc["neumann_steps"])


def _sc_floor_schedule() -> dict:
    """:func:`floor_eta_schedule` at the staleness claims' ``η = a_1/4`` (a fresh dict)."""
    return floor_eta_schedule(FLOOR_STEP_DIV / theorem_a1(floor_problem().constants))


def unbiased_floor(eta_inv, replicates, seed, backend="numpy", *, naive=False):
    """AFBO's non-vanishing term at a constant step: ``E‖x − x*‖²`` (the mean of
    ``‖x^t − x*‖²`` over ``t ≥ T/2``) after ``T(η)`` rounds from ``(x*, y*(x*))`` at
    ``η = 1/eta_inv`` (:func:`floor_eta_schedule`), under ``Stragglers(0.25, slowdown=5)``,
    on :func:`floor_problem`.  Mutant ``naive=True``: ``afbo_naive`` (the fresh updates only)."""
    p = floor_problem()
    sc = floor_eta_schedule(eta_inv)
    T = sc.pop("rounds")
    tr = run("afbo_naive" if naive else "afbo", p, rounds=T, replicates=replicates,
             seed=seed, backend=backend, delay=STRAGGLERS, inner_steps=K_INNER,
             truncation="series", x0=p.x_star, y0=p.y_star(p.x_star), **sc)
    out = _out(_distance(tr, p), tr)
    out["rounds"] = per_replicate(T, replicates)
    out["inner_step"] = per_replicate(sc["inner_step"], replicates)
    return out


def hetero_local(T, replicates, seed, backend="numpy", *, aligned=True):
    """``E‖x^T − x*‖²`` with per-client local iteration numbers ``E_i`` (``LOCAL_E`` tiled),
    local SGD steps of size β, the aligned update ``(1/E_i)Σ_e`` (``aligned=False``: the sum
    ``Σ_e``), η = c/√T, series truncation ``N = ⌈κ_g log T⌉``."""
    E = np.tile(np.asarray(LOCAL_E), M_DEFAULT // POPULATION)
    tr = _sc_run(T, replicates, seed, backend, "series", local=E, aligned=aligned,
                 admissible=False)
    return _out(_distance(tr, problem()), tr)


# ============================================================================ conditions
_OUTSIDE_NOTE = ("the claim tests where the aggregation converges (its limit point), not "
                 "Thm 4.1's rate; it runs at c = 0.5 on the population, where η = 0.5/√T "
                 "exceeds a_1 ≈ 0.0036 for every T < 19 000")
COND_OUTSIDE = theorem_conditions(
    problem().constants,
    lambda T: _schedule(int(T), M_DEFAULT, "strongly_convex", ETA_SC)["outer_step"],
    lambda T: _schedule(int(T), M_DEFAULT, "strongly_convex", ETA_SC)["inner_step"],
    neumann=lambda T: _schedule(int(T), M_DEFAULT, "strongly_convex", ETA_SC)["neumann_steps"],
    strongly_convex=True, eta_inside=False, eta_note=_OUTSIDE_NOTE)


def _floor_conditions() -> tuple[Condition, ...]:
    p = floor_problem()
    sc = theorem_schedule(T_FLOOR, p.clients, K_INNER, case="nonconvex",
                          kappa_g=p.constants["kappa_g"],
                          beta_max=1.0 / (2.0 * p.constants["ell_g1"]))
    return theorem_conditions(p.constants, lambda x: floor_step(),
                              lambda x: sc["inner_step"], rounds=lambda x: T_FLOOR,
                              neumann=lambda x: sc["neumann_steps"])


def _sc_floor_conditions() -> tuple[Condition, ...]:
    sc = _sc_floor_schedule()
    return theorem_conditions(floor_problem().constants, lambda x: floor_step(),
                              lambda x: sc["inner_step"], rounds=lambda x: sc["rounds"],
                              neumann=lambda x: sc["neumann_steps"], strongly_convex=True)


def _floor_eta_conditions() -> tuple[Condition, ...]:
    C = floor_problem().constants
    sc = floor_eta_schedule
    return theorem_conditions(C, lambda x: 1.0 / x, lambda x: sc(x)["inner_step"],
                              rounds=lambda x: sc(x)["rounds"],
                              neumann=lambda x: sc(x)["neumann_steps"], strongly_convex=True)


# ============================================================================ claims
#: The grid of the claims that run outside η ≤ a_1 (no_bias_bounded_delays,
#: heterogeneous_local_iterations).
T_GRID_OUTSIDE = per_budget([50, 100, 200, 400], [50, 100, 200, 400, 800, 1600],
                            [50, 100, 200, 400, 800, 1600, 3200])
EXCESS_GRID = per_budget([1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 7, 11, 15],
                         [1, 2, 3, 4, 5, 7, 11, 15, 23, 31])
SC_SCHED_OUTSIDE = ("η = c/√T (c = 0.5, outside η ≤ a_1), β = min(1/(2ℓ_{g,1}), 1/√(KT)), "
                    "K = 5, m = 4, start (x*, y*(x*)), E‖x^T − x*‖² averaged over t ≥ T/2")
_WIN = staleness_window()
#: The strongly convex staleness claims' grids, the same at every budget (the larger budgets
#: add replicates): with the age-weighted mutant's aggregation, runs diverge beyond them (at
#: τ̄ − 1 = 15, 94 of 256 replicates), and a diverged run is not a fit; AFBO's own excess
#: stays linear well beyond (τ̄ − 1 up to 31 measured)
SC_EXCESS_GRID = per_budget(*[[1, 2, 3, 4, 5]] * 3)
STRAGGLER_GRID = per_budget(*[[1, 2, 4, 8, 16]] * 3)
HEAVY_GRID = per_budget(*[[x for x, _ in HEAVY_MODELS]] * 3)
#: the step claim's sweep: 1/η = k/a_1, k doubling (η from a_1 down to a_1/8, /16, /32)
_A1_FLOOR = theorem_a1(floor_problem().constants)
ETA_INV_GRID = per_budget([k / _A1_FLOOR for k in (1, 2, 4, 8)],
                          [k / _A1_FLOOR for k in (1, 2, 4, 8, 16)],
                          [k / _A1_FLOOR for k in (1, 2, 4, 8, 16, 32)])

#: the staleness claims' mutant: a plausible "delay-compensating" aggregation bug
_AGE_WEIGHTING = Mutant("age_weighting",
                        "the server counts each stored update once per round it has been held "
                        "(H̄ = (1/m)Σ_i τ_iH_i, a 'delay-compensating' aggregation): the noise a "
                        "stale entry carries is amplified by its age, so the excess grows "
                        "faster than linearly in τ̄",
                        {"stale_weighting": "age"}, kind="estimator")


def _sc_staleness_claim(name, source, *, statement, variable, measure, grid, replicates,
                        schedule):
    """A strongly convex staleness claim (AFBO-R15): the excess of the stationary
    ``E‖x − x*‖²`` over its synchronous value grows at most linearly in the delay variable."""
    return P.claim(
        name, role="confirmation", source=P.cite(source, "[INFERRED]"), statement=statement,
        kind="at_most", variable=variable,
        quantity=r"\mathbb{E}\|x - x^*\|^2 - (\ldots)_{\mathrm{sync}}\ \mathrm{at\ a\ "
                 r"constant}\ \eta",
        measure=measure, grid=grid, replicates=replicates, law=LAW_SC_STALE, tolerance=0.15,
        schedule=schedule, touches=("AFBO-R6", "AFBO-R10", "AFBO-R11", "AFBO-R12", "AFBO-R15"),
        conditions=_sc_floor_conditions(), mutants=(_AGE_WEIGHTING,))


CLAIMS = [
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
        mutants=(_AGE_WEIGHTING,),
    ),
    _sc_staleness_claim(
        "strongly_convex_staleness_vs_delay",
        "Thm 4.1(a), the delay part of its non-vanishing term C/(ημ_f), the project's reading "
        "AFBO-R15",
        statement=r"V_\infty(\bar\tau) - V_\infty(1) \leq \frac{6\eta\hat D_f}{\mu_f}"
                  r"(\bar\tau - 1),\ V_\infty = \lim_{T\to\infty}\mathbb{E}\|x^T - x^*\|^2"
                  r"\quad(\eta \leq a_1)",
        variable=r"\bar\tau - 1", measure=sc_staleness_excess, grid=SC_EXCESS_GRID,
        # replicates: seeds 0–4 gave slopes 0.951 to 1.010 at 256 (upper ends ≤ 1.062), but a
        # resolution of 0.234 (tolerance 0.15 + 2.8·se, se ≈ 0.030; 0.205 at 512): ≤ 0.2
        # needs se ≤ 0.018, ≈ 2.8× → 1024 (as staleness_floor_vs_delay)
        replicates=per_budget(1024, 1024, 1536),
        schedule=f"constant step η = a_1/{FLOOR_STEP_DIV} (a_1 = {_A1_FLOOR:.4g}, admissible: "
                 f"η ≤ a_1), T(η) = ⌈{FLOOR_RELAXATIONS}/(ημ_Φ)⌉ = "
                 f"{floor_eta_rounds(_A1_FLOOR / FLOOR_STEP_DIV)} rounds from (x*, y*(x*)), "
                 "E‖x − x*‖² averaged over t ≥ T/2; inner step β = (η/a_1)/√(K·T(a_1)) "
                 "(Kβ² ≤ 1/T), K = 5; outer delays BoundedDelay(3τ̄ − 2) (uniform gaps, mean "
                 "paper delay τ̄ = (τ_M + 2)/3), synchronous inner loop (the bound has no "
                 "inner-delay term); the synchronous value is one common baseline run (2× the "
                 "replicates); series truncation N = ⌈κ_g log T⌉; instance floor_problem() "
                 "(m = 4, κ = 1, coupling 0.25, upper_mu 2, σ = 1)"),
    _sc_staleness_claim(
        "straggler_staleness_vs_slowdown",
        "Sec. V.B, Fig. 4 (stragglers: 'AFBO keeps its performance'), read through Thm 4.1(a)'s "
        "delay term (AFBO-R15)",
        statement=r"V_\infty(s) - V_\infty(1) \leq \frac{6\eta\hat D_f}{\mu_f}"
                  r"\frac{s - 1}{4}\quad(\mathrm{two\ stragglers\ of\ four,\ slowdown}\ s,"
                  r"\ \eta \leq a_1)",
        variable="s - 1", measure=straggler_excess, grid=STRAGGLER_GRID,
        # replicates and stragglers: with one straggler (the first point's excess a quarter of
        # the synchronous floor) seeds 0–4 gave intervals 0.11–0.14 wide at 512 replicates,
        # seed 3's upper end 1.14 against the bound's 1.15; two stragglers double the excess:
        # seeds 0–4 then gave 0.993 to 1.019 (upper ends ≤ 1.059), the mutant 1.215 to 1.221,
        # at a resolution of 0.204 (se ≈ 0.019; 0.187 at 1024): ≤ 0.2 needs ≈ 1.2× → 768
        replicates=per_budget(768, 1024, 1536),
        schedule=f"as strongly_convex_staleness_vs_delay (η = a_1/{FLOOR_STEP_DIV}, T(η) "
                 "rounds, β ∝ η, the common synchronous baseline), with the outer delays "
                 "Stragglers(0.5, slowdown s): the last two of the four clients upload every s "
                 "rounds, the others every round (mean paper delay τ̄ = 1 + (s − 1)/4, "
                 "linear in s − 1); synchronous inner loop"),
    _sc_staleness_claim(
        "heavy_tailed_staleness_vs_delay",
        "Thm 4.1(a), the delay part of its non-vanishing term C/(ημ_f) (AFBO-R15), and "
        "Remark 2 ('the average outer loop delay'), under §V's delays ('the communication "
        "delay of each client obeys the heavy-tailed distribution')",
        statement=r"V_\infty(\bar\tau) - V_\infty(1) \leq \frac{6\eta\hat D_f}{\mu_f}"
                  r"(\bar\tau - 1)\quad(P(\mathrm{gap} > n) = n^{-3/2},\ "
                  r"\mathrm{gap} \leq \tau_M,\ \eta \leq a_1)",
        variable=r"\bar\tau - 1", measure=heavy_staleness_excess, grid=HEAVY_GRID,
        replicates=per_budget(1024, 1024, 1536),
        schedule=f"as strongly_convex_staleness_vs_delay (η = a_1/{FLOOR_STEP_DIV}, T(η) "
                 "rounds, β ∝ η, the common synchronous baseline), with heavy-tailed outer "
                 f"delays HeavyTailedDelay({HEAVY_ALPHA:g}, cap τ_M): gaps ⌈U^{{−2/3}}⌉ "
                 "capped at τ_M = 2, 4, 8, 16, 32 (Assumption 4.6 with that τ_M), whose "
                 "stationary mean paper delay τ̄ = 1 + E[g(g − 1)]/(2E[g]) is the swept "
                 "variable (0.5 … 3.0) while E[(τ − 1)²] goes from 0.5 to 36; synchronous "
                 "inner loop"),
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
        "unbiased_floor_vs_step", role="confirmation",
        source=P.cite("Remark 1 (strongly convex: 'for the non-vanishing term, all components "
                      "are controlled by stepsize (η_t), which means it is unbiased'), with "
                      "Thm 4.1(a)'s C/(ημ_f)", "[INFERRED]"),
        statement=r"\lim_{T\to\infty}\mathbb{E}\|x^T - x^*\|^2 = \mathcal{O}(\eta)\quad"
                  r"(\beta \propto \eta,\ \mathrm{stragglers})",
        kind="at_most", variable=r"1/\eta",
        quantity=r"\mathbb{E}\|x^T - x^*\|^2\ \mathrm{at\ a\ constant}\ \eta",
        measure=unbiased_floor, grid=ETA_INV_GRID,
        # replicates: at 256 the per-point standard error is ≈ 3 %, the slope's ≈ 0.02 over
        # three doublings; seeds 0–4 gave −0.985 to −1.013 (resolution 0.152; standard: 0.137)
        replicates=per_budget(256, 256, 512), law=LAW_FLOOR_ETA, tolerance=0.1,
        schedule=f"constant η = a_1/k, k = 1, 2, 4, 8 (16, 32 at the larger budgets; a_1 = "
                 f"{_A1_FLOOR:.4g}, admissible: η ≤ a_1), T(η) = ⌈{FLOOR_RELAXATIONS}/(ημ_Φ)⌉ "
                 "rounds from (x*, y*(x*)), E‖x − x*‖² averaged over t ≥ T/2; inner step "
                 "β = (η/a_1)/√(K·T(a_1)) ∝ η (Kβ² ≤ 1/T), K = 5; Stragglers(0.25, slowdown 5) "
                 "outer and inner; series truncation N = ⌈κ_g log T⌉ (b² negligible); "
                 "instance floor_problem() (m = 4, κ = 1, coupling 0.25, upper_mu 2, σ = 1)",
        touches=("AFBO-R5", "AFBO-R6", "AFBO-R9", "AFBO-R12", "AFBO-R14", "AFBO-I2"),
        conditions=_floor_eta_conditions(),
        mutants=(Mutant("naive",
                        "naive aggregation of only the fresh updates (afbo_naive) in place of "
                        "the most recent updates of all clients: under stragglers it converges "
                        "to the minimizer of a reweighted objective, a floor that no step "
                        "removes",
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
