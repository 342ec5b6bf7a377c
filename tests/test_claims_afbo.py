"""The AFBO claims package (``verify/claims/afbo/``): instance, laws, lemmas, measures,
metadata.

Tolerances: ``≈`` checks are exact identities (1e-10 relative, round-off); the verdicts
themselves are checked by the catalogue tests at the smoke budget.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from bilevel_theory.verify.claim import BUDGETS, MUTANT_KINDS
from bilevel_theory.verify.claims import afbo as A
from bilevel_theory.verify.claims.afbo.anarchy import _sync_floor
from bilevel_theory.verify.claims.afbo.bias import _aphe_bias
from bilevel_theory.verify.claims.afbo.common import (
    FLOOR_STEP_DIV,
    _distance,
    _rate_schedule,
    _sc_run,
    _schedule,
)
from bilevel_theory.verify.claims.afbo.rates import _hypergradient_noise
from bilevel_theory.verify.claims.afbo.speedup import speedup_m_independent
from bilevel_theory.verify.fit import in_window


def test_tiled_instances_share_the_problem():
    """m/4 copies of the population: same Φ, x*, constants for every m (only m changes)."""
    base, big = A.problem(4), A.problem(32)
    assert big.clients == 32
    np.testing.assert_allclose(big.x_star, base.x_star, rtol=1e-10)
    x = np.random.default_rng(0).standard_normal((5, 3))
    np.testing.assert_allclose(big.hypergradient(x), base.hypergradient(x), rtol=1e-10)
    for key in ("mu_g", "ell_g1", "kappa_g", "L_phi", "mu_phi", "L_f", "M_f", "sigma_g2"):
        assert big.constants[key] == pytest.approx(base.constants[key], rel=1e-10), key
    assert A.problem(8, noise=0.0).grad_noise == 0.0 and A.problem(8).hessian_noise == 0.0
    with pytest.raises(ValueError, match="clients"):
        A.problem(6)


def test_laws_are_derived_from_rates():
    assert A.LAW_SC_COR.value == -1.0 and A.LAW_SC_LOWER.value == -1.0
    assert A.LAW_SC_THM.value == -0.5 and A.LAW_NC_T.value == -0.5
    assert A.LAW_NC_MIND.value == -1.0  # lim_{m→∞} of Cor. 4.1's form is 1/T
    assert A.LAW_STALE.value == 1.0
    assert A.LAW_FLOOR_ETA.value == -1.0  # Thm 4.1(a)'s C/(ημ_f) = O(η) with β ∝ η (AFBO-R14)
    assert A.THM_B_M == 0.5  # the theorem's own exponent in m at η = √(m/T)
    assert A.FLOOR_EXPONENT == -0.5
    assert math.isnan(A.LAW_APHE_B.value) and math.isnan(A.LAW_FLOOR.value)
    kg = A.problem().constants["kappa_g"]
    assert A.LAW_APHE.value == pytest.approx(math.log(1 - 1 / kg), rel=1e-12)


@pytest.mark.parametrize("U", [1, 2, 3, 8, 64, 1000])
def test_lemma_aphe_as_written_is_at_most_one_over_e(U):
    """AFBO-L1: max_{0<s≤1} U s (1 − s)^U = (U/(U+1))^{U+1} < 1/e, attained at s = 1/(U+1)."""
    s = np.linspace(1e-6, 1.0, 200001)
    vals = U * s * (1 - s) ** U
    closed = A.aphe_fixed_lemma_ratio(U)
    assert vals.max() <= closed * (1 + 1e-12)
    assert U * (1 / (U + 1)) * (U / (U + 1)) ** U == pytest.approx(closed, rel=1e-12)
    assert closed < 1 / math.e


@pytest.mark.parametrize("truncation", ["fixed", "series"])
def test_aphe_bias_measure_matches_closed_form(truncation):
    """The measured bias is ‖vᵀ(M̂ − A⁻¹)B‖ with M̂ the truncation's inverse estimate; for the
    fixed truncation it is above AFBO-L1's lower bound; the bound metric is Thm 4.1's b."""
    m = 8
    out = _aphe_bias(m, 3, 5, "numpy", truncation)
    p = A.problem(m, noise=0.0)
    C, ell = p.closed_form, p.constants["ell_g1"]
    rng = np.random.default_rng(A.BIAS_POINTS_SEED)
    x, y = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    M = np.eye(3) - C.A / ell
    if truncation == "fixed":
        inv = (m / ell) * np.linalg.matrix_power(M, m)
    else:
        inv = sum(np.linalg.matrix_power(M, n) for n in range(m)) / ell
    v = x @ C.R + y @ C.S + C.q  # mean ∇_y f
    bias = v @ (inv - np.linalg.inv(C.A)) @ C.B
    np.testing.assert_allclose(out["value"], np.linalg.norm(bias, axis=1), rtol=1e-10)
    kg = p.constants["kappa_g"]
    np.testing.assert_allclose(out["bound"], kg * p.constants["ell_f1"] * (1 - 1 / kg) ** m)
    if truncation == "fixed":
        assert np.all(out["value"] >= out["lemma"] * (1 - 1e-12))


def test_corollary_form_weights_recover_the_m_independent_part():
    T = 100.0
    m = np.asarray(A.M_SPEEDUP, dtype=float)
    F = 3.0 / np.sqrt(m * T) + 0.7 / (m * np.sqrt(m * T)) + 5.0 / T
    assert A.corollary_form_weights(T) @ F == pytest.approx(5.0 / T, rel=1e-10)


def test_staleness_window_is_derived_from_the_bound():
    C = A.floor_problem().constants
    eta = A.floor_step()
    assert eta <= A.theorem_a1(C)
    lo, hi = A.staleness_window()
    assert lo == 0.0 and 3 * C["L_f"] * eta * (1 + hi) == pytest.approx(1.0, rel=1e-12)


def test_sgd_floor_closed_form():
    C = A.rate_problem().constants
    T = 800
    eta = _rate_schedule(T)["outer_step"]
    L = C["L_phi"]
    s2 = _hypergradient_noise()
    assert A.sgd_floor(T) == pytest.approx(eta * s2 / (L * (2 - eta * L)), rel=1e-12)
    # the ∇ₓf noise alone is σ²/m; the stored ∇_y f noise and the random truncation add to it
    assert s2 > _hypergradient_noise("series") > A.SIGMA**2 / A.M_DEFAULT


@pytest.mark.parametrize("measure", [A.sc_noise_free, A.nc_rate_T, A.hetero_local,
                                     A.unbiased_floor])
def test_measures_return_per_replicate_arrays(measure):
    out = measure(10, 2, 0)
    for key, val in out.items():
        assert np.asarray(val).shape == (2,), key
    assert np.all(np.isfinite(out["value"])) and not np.any(out["diverged"])


def test_lower_level_measure_is_cor41_quantity():
    """``sc_lower_level`` is Cor. 4.1's ‖y*(x^t) − y^t‖² (``y^t`` the output of round t − 1's
    inner loop, compared with ``y*`` at the same ``x^t``) averaged over ``t ≥ T/2``, on the runs
    of ``sc_theorem``; the decaying-steps repair (β_t, η_t ∝ 1/t) lowers it by far at T = 400,
    where the constant β = 1/√(KT) leaves the inner noise floor βσ²/(2m) ≈ 0.003."""
    T, R = 40, 3
    out = A.sc_lower_level(T, R, 7)
    tr = _sc_run(T, R, 7, "numpy", "series")
    p = A.rate_problem()
    err = ((tr.y - p.y_star(tr.x)) ** 2).sum(-1)[:, T // 2:]
    np.testing.assert_allclose(out["value"], err.mean(axis=1), rtol=1e-10)
    np.testing.assert_allclose(A.sc_theorem(T, R, 7)["value"], _distance(tr), rtol=1e-10)
    assert np.all(out["value"] > 0) and not np.any(out["diverged"])
    beta = _rate_schedule(400)["inner_step"]
    np.testing.assert_allclose(np.linalg.eigvalsh(p.closed_form.A), 1.0, rtol=1e-10)
    floor = beta * A.SIGMA**2 / (A.M_DEFAULT * (2 - beta))  # AFBO-L2, synchronous, Ā = I
    const = A.sc_lower_level(400, 8, 0)["value"].mean()
    decay = A.sc_lower_level(400, 8, 0, steps="decaying")["value"].mean()
    assert const > floor and decay < const / 3, (floor, const, decay)


def test_staleness_measure_delay_mapping():
    """BoundedDelay(3τ̄ − 2) has mean paper delay τ̄ = (τ_M + 2)/3; the value is the excess
    over the common synchronous baseline."""
    out = A.staleness_excess(3, 4, 0)
    assert abs(out["tau_mean"].mean() - 4.0) < 0.2
    base = _sync_floor(4, "numpy")
    assert base > 0 and np.all(np.isfinite(out["value"]))


def test_strongly_convex_staleness_measure():
    """Thm 4.1(a)'s delay sweep: the step claim's schedule at η = a_1/4 (T(η) rounds, β ∝ η),
    BoundedDelay(3τ̄ − 2) with mean paper delay τ̄; the value is the stationary E‖x − x*‖²
    minus the common synchronous baseline, and ``delay_term`` the bound's 6ησ_f²(τ̄ − 1)/μ_Φ."""
    C = A.floor_problem().constants
    out = A.sc_staleness_excess(3, 4, 0)
    assert abs(out["tau_mean"].mean() - 4.0) < 0.2
    base = _sync_floor(4, "numpy", "strongly_convex")
    np.testing.assert_allclose(out["value"], out["floor"] - base, rtol=1e-12)
    eta = A.floor_step()
    np.testing.assert_allclose(out["delay_term"], 6 * eta * C["sigma_f2"] * 3 / C["mu_phi"])
    sc = A.floor_eta_schedule(FLOOR_STEP_DIV / A.theorem_a1(C))
    assert sc["outer_step"] == pytest.approx(eta, rel=1e-12)
    assert sc["rounds"] * eta * C["mu_phi"] >= 6
    assert base > 0 and base != _sync_floor(4, "numpy")  # not the nonconvex claim's baseline


def test_straggler_measure_delay_mapping():
    """Two stragglers of four uploading every s rounds: a straggler's stored update's age
    cycles through 1 … s, so the mean paper delay is 1 + (s − 1)/4; the same synchronous
    baseline as the strongly convex staleness claim."""
    C = A.floor_problem().constants
    for s in (2, 5):
        out = A.straggler_excess(s - 1, 4, 0)
        assert out["tau_mean"].mean() == pytest.approx(1 + (s - 1) / 4, abs=0.01)
        base = _sync_floor(4, "numpy", "strongly_convex")
        np.testing.assert_allclose(out["value"], out["floor"] - base, rtol=1e-12)
        np.testing.assert_allclose(out["delay_term"],
                                   6 * A.floor_step() * C["sigma_f2"] * (s - 1) / 4
                                   / C["mu_phi"])


def test_heavy_tailed_measure_delay_mapping():
    """§V's heavy-tailed delays: each grid point is the stationary mean paper delay of
    HeavyTailedDelay(3/2, cap) for one cap of HEAVY_CAPS (other values refused); the run's
    measured mean delay, taken from step 0, is at most the stationary one and close to it; the
    same synchronous baseline as the bounded-delay claim."""
    from bilevel_theory.verify.claims.afbo import anarchy as AN

    C = A.floor_problem().constants
    grid = next(c for c in A.CLAIMS if c.id == "afbo.heavy_tailed_staleness_vs_delay").grid
    assert all(g == grid["smoke"] for g in grid.values())
    assert [AN.heavy_delay(x).cap for x in grid["smoke"]] == list(AN.HEAVY_CAPS)
    assert grid["smoke"][0] == pytest.approx(0.5) and list(grid["smoke"]) == sorted(grid["smoke"])
    with pytest.raises(ValueError, match="excess"):
        AN.heavy_delay(1.0)
    x = grid["smoke"][2]
    out = A.heavy_staleness_excess(x, 4, 0)
    assert out["cap"][0] == 8
    assert 0.95 * (1 + x) <= out["tau_mean"].mean() <= (1 + x) * 1.01
    base = _sync_floor(4, "numpy", "strongly_convex")
    np.testing.assert_allclose(out["value"], out["floor"] - base, rtol=1e-12)
    np.testing.assert_allclose(out["delay_term"], 6 * A.floor_step() * C["sigma_f2"] * x
                               / C["mu_phi"])


def test_claims_metadata():
    mathtext = pytest.importorskip("matplotlib.mathtext")
    parser = mathtext.MathTextParser("agg")
    ids = [c.id for c in A.CLAIMS]
    assert len(ids) == len(set(ids)) >= 12
    for c in A.CLAIMS:
        assert c.id.startswith("afbo.") and c.paper == A.PAPER
        assert "WiOpt" in c.source or "Li, Zhu" in c.source
        assert "[TEXT]" in c.source or "[INFERRED]" in c.source
        assert ".txt" not in c.source and "PAPERS" not in c.source
        assert c.schedule and c.touches
        assert all(t.startswith(("AFBO-R", "AFBO-I")) for t in c.touches), c.touches
        assert c.role in ("confirmation", "finding", "control")
        if c.role == "control":
            assert not c.mutants
        else:
            assert c.mutants, c.id
        if c.window is not None:
            assert c.window_reason, c.id
        assert "Measured" not in c.reason
        for tex in (c.statement, c.quantity, c.variable):
            parser.parse(f"${tex}$")
        for budget in BUDGETS:
            x = np.asarray(c.grid[budget], dtype=float)
            assert in_window(x, c.window).sum() >= 3, (c.id, budget)


def test_theorem_constants_and_rate_schedule_are_admissible():
    """a_1 (AFBO-R6) and the smallest a_2 (AFBO-R12) from the instance's constants; the rate
    claims' η = c/√T (c√(m/T)) equals a_1 at T_MIN and stays below it beyond."""
    C = A.rate_problem().constants
    a1 = A.theorem_a1(C)
    assert a1 == pytest.approx(1 / (2 * C["L_f"] + 4 * C["M_f"] * C["L_y"] + 2 * C["M_f"]))
    assert A.theorem_a2_min(C) == pytest.approx(5 * C["M_f"] * C["L_y"] / C["mu_g"])
    for case in ("strongly_convex", "nonconvex"):
        assert _rate_schedule(A.T_MIN, case)["outer_step"] == pytest.approx(a1, rel=1e-12)
        assert _rate_schedule(4 * A.T_MIN, case)["outer_step"] == pytest.approx(a1 / 2)
    assert A.theorem_a1(A.problem().constants) == pytest.approx(0.0036, abs=1e-4)


def test_every_claim_declares_its_conditions_and_runs_inside_where_it_says():
    for c in A.CLAIMS:
        assert c.conditions, c.id
        for budget in BUDGETS:
            for r in c.check_conditions(budget):
                assert r["holds"] or not r["inside"], (c.id, budget, r["statement"])
    rate_ids = ("strongly_convex_rate_theorem", "strongly_convex_rate_random_truncation",
                "strongly_convex_floor", "nonconvex_rate_T", "staleness_floor_vs_delay",
                "strongly_convex_lower_level_rate", "unbiased_floor_vs_step",
                "strongly_convex_staleness_vs_delay", "straggler_staleness_vs_slowdown",
                "heavy_tailed_staleness_vs_delay")
    for c in A.CLAIMS:
        if c.id.split(".")[1] in rate_ids:
            assert all(r["holds"] and r["inside"] for r in c.check_conditions("full")), c.id


def test_step_claim_schedule_scales_the_inner_step_with_eta():
    """AFBO-R14's schedule: η = 1/x ≤ a_1, β ∝ η with Kβ² = 1/T at η = a_1 and below it beyond,
    T(η) rounds of at least six relaxation times 1/(ημ_Φ), N = ⌈κ_g log T⌉."""
    C = A.floor_problem().constants
    a1 = A.theorem_a1(C)
    c = next(c for c in A.CLAIMS if c.id == "afbo.unbiased_floor_vs_step")
    scheds = [A.floor_eta_schedule(x) for x in c.grid["full"]]
    assert scheds[0]["outer_step"] == pytest.approx(a1, rel=1e-12)
    for s in scheds:
        eta, T = s["outer_step"], s["rounds"]
        assert eta <= a1 * (1 + 1e-12) and eta * C["mu_phi"] * T >= 6
        assert s["inner_step"] / eta == pytest.approx(scheds[0]["inner_step"] / a1, rel=1e-12)
        assert 5 * s["inner_step"] ** 2 <= 1 / T * (1 + 1e-12)
        assert s["neumann_steps"] >= math.ceil(C["kappa_g"] * math.log(T))
    assert 5 * scheds[0]["inner_step"] ** 2 == pytest.approx(1 / scheds[0]["rounds"])


def test_speedup_limit_is_outside_eta_le_a1_at_every_T():
    """η = c√(m/T) ≤ a_1 only for m ≤ a_1²T/c²: the m → ∞ limit leaves the theorem."""
    a1 = A.theorem_a1(A.problem().constants)
    for T in (50, 400, 10**6):
        m_max = a1**2 * T / A.ETA_M**2
        assert _schedule(T, 4 * math.ceil(m_max / 4 + 1), "nonconvex", A.ETA_M)[
            "outer_step"] > a1
    c = next(c for c in A.CLAIMS if c.id == "afbo.linear_speedup_m")
    eta = c.check_conditions("smoke")[0]
    assert not eta["inside"] and not eta["holds"]


def test_every_mutant_has_a_kind_and_rate_confirmations_catch_plausible_bugs():
    for c in A.CLAIMS:
        for m in c.mutants:
            assert m.kind in MUTANT_KINDS, (c.id, m.name)
    by_id = {c.id: c for c in A.CLAIMS}
    kinds = {m.kind for m in by_id["afbo.strongly_convex_rate_theorem"].mutants}
    assert {"step_exponent", "indirect_term"} <= kinds
    assert "indirect_term" in {m.kind for m in by_id["afbo.nonconvex_rate_T"].mutants}


def test_indirect_dropped_and_cube_root_mutations():
    """``cube_root`` gives η = c/T^{1/3}; ``indirect=False`` (the Neumann estimate ≈ N/ℓ → 0)
    drives the iterates to the zero of ∇ₓf(x, y*(x)), far from x* on the rate instance."""
    T = 20
    c = A.rate_eta_scale()
    eta = _rate_schedule(T)["outer_step"]
    assert eta == pytest.approx(c / math.sqrt(T))
    assert eta * math.sqrt(T) / T ** (1 / 3) == pytest.approx(c / T ** (1 / 3))
    out = A.sc_random(100, 2, 0, indirect=False)
    base = A.sc_random(100, 2, 0)
    assert np.all(out["value"] > 10 * base["value"].mean()), (out["value"], base["value"])


def test_staleness_theorem_bound_is_thm41b_at_its_tightest_point():
    """Thm 4.1(b)'s right-hand side for the staleness runs: linear in τ̄ with slope
    3L_fηD̂_f (its only delay-dependent term), far above the measured stationarity."""
    C = A.floor_problem().constants
    b1, b2 = A.staleness_theorem_bound(1.0), A.staleness_theorem_bound(3.0)
    assert (b2 - b1) / 2 == pytest.approx(3 * C["L_f"] * A.floor_step() * C["sigma_f2"],
                                          rel=1e-9)
    assert b1 > _sync_floor(4, "numpy")


def test_corollary_form_misfit_is_chi2_with_three_degrees_of_freedom():
    """Data of Cor. 4.1's form plus independent noise: the misfit is ≈ 0 without noise and
    χ²(len(M_SPEEDUP) − 3) with it (mean 3, and its 99% quantile exceeded about 1% of the time);
    a term the form lacks (one growing with ``m``) is seen."""
    from scipy import stats

    T, R = 100.0, 64
    m = np.asarray(A.M_SPEEDUP, dtype=float)
    F = 3.0 / np.sqrt(m * T) + 0.7 / (m * np.sqrt(m * T)) + 5.0 / T
    rng = np.random.default_rng(0)
    assert A.corollary_form_misfit(T, F[:, None] + 1e-3 * rng.standard_normal((m.size, R))) < 25
    dof = m.size - 3
    chi = np.array([A.corollary_form_misfit(T, F[:, None] + 0.01 * rng.standard_normal(
        (m.size, R))) for _ in range(400)])
    assert chi.mean() == pytest.approx(dof, rel=0.2)
    assert np.mean(chi > stats.chi2.ppf(0.99, dof)) < 0.04
    bent = F + 0.01 * m / m.max()
    assert A.corollary_form_misfit(T, bent[:, None] + 0.001 * rng.standard_normal(
        (m.size, R))) > stats.chi2.ppf(0.999, dof)


def test_birge_scaling_widens_only_a_misfitting_form():
    v = np.array([1.0, 2.0, 3.0, 6.0])
    same, r = A.birge_scaled(v, 2.0, 3)
    assert r == 1.0 and np.array_equal(same, v)
    wide, r = A.birge_scaled(v, 12.0, 3)
    assert r == pytest.approx(2.0) and wide.mean() == pytest.approx(v.mean())
    assert wide.std() == pytest.approx(2.0 * v.std())


def test_the_speedup_measure_walks_every_m_at_its_T():
    """The (m, T) experiment that the coverage map counts as sweeping ``m`` too
    (``inner_sweeps``): one run per ``m`` of ``M_SPEEDUP`` at the claim's ``T``, and its value
    the corollary form's m-independent part fitted over exactly those runs."""
    out = speedup_m_independent(20, 1, 0)
    F = np.asarray([out[f"F_m{m}"] for m in A.M_SPEEDUP])
    assert F.shape == (len(A.M_SPEEDUP), 1) and np.all(np.isfinite(F))
    assert len(set(F[:, 0])) == len(A.M_SPEEDUP)
    assert out["value"] == pytest.approx(A.corollary_form_weights(20) @ F, rel=1e-12)
