"""Tests of ``bilevel_theory.rates``: the derivation functions on synthetic expressions with known
answers, and every paper prediction against the exponent worked out by hand."""

from __future__ import annotations

import math

import pytest
import sympy as sp

from bilevel_theory import rates as r

S = r.SYMBOLS
K, n, N, T, m, P, Q = (S[v] for v in ("K", "n", "N", "T", "m", "P", "Q"))
eps, lam, tau, kg, kf = S["epsilon"], S["lambda"], S["tau"], S["kappa_g"], S["kappa_f"]
kappa, mu, theta, tau_bar = S["kappa"], S["mu"], S["theta"], S["tau_bar"]
c = sp.Symbol("c", positive=True)
B = r.BOUNDS
R = sp.Rational


def same(a, b) -> bool:
    return sp.simplify(sp.sympify(a) - sp.sympify(b)) == 0


# --------------------------------------------------------------------------- synthetic: exponents


def test_leading_exponent_sum_of_powers():
    assert r.leading_exponent(1 / sp.sqrt(K) + 1 / K, K) == R(-1, 2)
    assert r.leading_exponent(3 * K**2 + K, "K") == 2
    assert r.leading_exponent(c, K) == 0
    assert r.leading_exponent(1 / (c + K), K) == -1          # non-monomial factor
    assert r.leading_exponent(1 / sp.sqrt(n * K), K) == R(-1, 2)


def test_leading_exponent_log_factors_are_lower_order():
    assert r.leading_exponent(sp.log(K) / sp.sqrt(K) + 1 / K, K) == R(-1, 2)
    assert r.leading_exponent(sp.log(K) ** 2 / K, K) == -1
    assert r.leading_exponent(sp.log(sp.log(K)) * K, K) == 1
    assert r.leading_exponent(sp.log(1 + 1 / K), K) == -1     # log(1+x) ~ x


def test_leading_exponent_towards_zero():
    assert r.leading_exponent(eps**-2 + eps**-1, eps, at=0) == -2
    assert r.leading_exponent(eps + eps**2, eps, at=0) == 1
    assert r.leading_exponent(eps * sp.log(1 / eps), eps, at=0) == 1


def test_leading_exponent_exponential_terms():
    assert r.leading_exponent(1 / K + R(1, 2) ** K, K) == -1
    assert r.leading_exponent(R(1, 2) ** K, K) == -sp.oo
    assert r.leading_exponent((1 - 1 / sp.sqrt(T)) ** T, T) == -sp.oo
    with pytest.raises(ValueError, match="geometric_ratio"):   # sign of log((κ−1)/κ) unknown
        r.leading_exponent(((kg - 1) / kg) ** N, N)


def test_leading_term_changes_with_range():
    """κ⁴/K + κ^{5/2}/√K: −1/2 asymptotically, but slope −1 below the crossover K = κ³."""
    expr = kg**4 / K + kg ** R(5, 2) / sp.sqrt(K)
    assert r.leading_exponent(expr, K) == R(-1, 2)
    ((point, above, below),) = r.crossovers(expr, K)
    assert same(point, kg**3) and above == R(-1, 2) and below == -1
    assert same(r.local_exponent(expr, K, kg**3), R(-3, 4))
    assert float(r.local_exponent(expr, K, 1, {"kappa_g": 10})) < -0.95
    assert float(r.local_exponent(expr, K, 10**7, {"kappa_g": 10})) > -0.55


def test_term_exponents_and_dominant_part():
    ex = r.term_exponents(1 / K + 1 / sp.sqrt(K) + 1 / K**2, K)
    assert [e for e, _ in ex] == [R(-1, 2), -1, -2]
    assert same(r.dominant_part(n / K + n**2 / K + 1 / K**2, K), (n + n**2) / K)


def test_exponent_at_order():
    expr = kg ** R(5, 2) / sp.sqrt(n * K) + kg**3 / K
    assert r.exponent_at_order(expr, K, n) == R(-1, 2)
    assert r.exponent_at_order(expr, K, kg) == R(5, 2)
    # ties in K: the exponent of their sum in n (n → ∞)
    assert r.exponent_at_order((n + n**2) / K + 1 / K**2, K, n) == 2


def test_symbolic_exponents_need_assumptions():
    a = sp.Symbol("a", positive=True)
    with pytest.raises(ValueError, match="cannot order"):
        r.leading_exponent(K**-a + 1 / sp.sqrt(K), K)
    assert r.leading_exponent(K**-a + 1 / sp.sqrt(K), K, assume={a: 2}) == R(-1, 2)


# --------------------------------------------------------------------------- synthetic: ratios


def test_geometric_ratio():
    assert r.geometric_ratio(3 * R(2, 5) ** N, N) == R(2, 5)
    assert same(r.geometric_ratio(c * ((kg - 1) / kg) ** (2 * N), N), ((kg - 1) / kg) ** 2)
    assert same(r.log_ratio(R(1, 2) ** (N + 1), N), -sp.log(2))
    with pytest.raises(ValueError, match="not geometric"):
        r.geometric_ratio(R(1, 2) ** N + 1, N)
    with pytest.raises(ValueError, match="not geometric"):
        r.geometric_ratio(1 / N, N)


# --------------------------------------------------------------------------- synthetic: inversion


def test_invert_linear_speedup():
    inv = r.invert(1 / sp.sqrt(n * K), K, eps)
    assert same(inv.solution, 1 / (n * eps**2))
    assert inv.eps_exponent == -2
    assert r.inverse_exponent_in(1 / sp.sqrt(n * K), K, eps, n) == -1


def test_invert_picks_the_largest_solution():
    # 1/K binds (K = 1/ε) although ε²K^{−1/3} has the larger exponent in K (K = ε³)
    inv = r.invert(eps**2 * K ** R(-1, 3) + 1 / K, K, eps)
    assert inv.eps_exponent == -1
    assert r.epsilon_exponent(1 / sp.sqrt(K) + 1 / K, K, eps) == -2


def test_invert_log_factor_gives_soft_o():
    assert r.epsilon_exponent(sp.log(K) / sp.sqrt(K), K, eps) == -2


def test_invert_floors():
    with pytest.raises(ValueError, match="floor"):
        r.invert(1 / sp.sqrt(K) + c, K, eps)
    inv = r.invert(1 / sp.sqrt(K) + c, K, eps, floor="drop")
    assert inv.eps_exponent == -2 and inv.dropped == (c,)
    inv = r.invert(1 / sp.sqrt(K) + c * eps, K, eps)          # O(ε) floor: compatible
    assert inv.eps_exponent == -2 and inv.compatible == (c * eps,)
    with pytest.raises(ValueError, match="growing"):
        r.invert(1 / sp.sqrt(K) + eps * K, K, eps)


def test_balance_and_minimize():
    assert same(r.balance_point(lam / T, lam**-2, lam), T ** R(1, 3))
    point, value = r.minimize_rate(lam / T + lam**-2, lam)
    assert same(point, T ** R(1, 3)) and same(value, T ** R(-2, 3))
    with pytest.raises(ValueError, match="order"):
        r.minimize_rate(B["memfbo.balance_partial"], lam)
    with pytest.raises(ValueError, match="monotone"):
        r.minimize_rate(1 / lam, lam)


# --------------------------------------------------------------------------- FedNest


def test_fednest_lemma22_geometric():
    assert same(r.geometric_ratio(B["fednest.lemma22_bias"], N), (kg - 1) / kg)
    assert same(r.geometric_ratio(B["fednest.lemma22_b"], N), (kg - 1) / kg)
    assert r.leading_exponent(B["fednest.lemma22_second"], N) == 0


def test_fednest_corollaries():
    assert r.leading_exponent(B["fednest.cor31"], K) == R(-1, 2)
    assert r.epsilon_exponent(B["fednest.cor31"], K, eps) == -2
    assert r.inverse_exponent_in(B["fednest.cor31"], K, eps, kg) == 5   # K = κ_g⁵ε⁻²
    assert r.leading_exponent(B["fednest.cor32"], K) == R(-1, 2)
    assert r.inverse_exponent_in(B["fednest.cor32"], K, eps, kf) == 2   # K = κ_f²ε⁻²
    assert r.leading_exponent(B["fednest.cor33"], K) == R(-1, 2)
    assert r.leading_exponent(B["fednest.thm32"], K) == R(-1, 2)


def test_fednest_thm31_floor_and_cor31_N():
    assert r.leading_exponent(B["fednest.thm31"], K) == 0          # b² floor at fixed N
    with pytest.raises(ValueError, match="floor"):
        r.invert(B["fednest.thm31"], K, eps)
    assert r.leading_exponent(B["fednest.thm31_cor31_N"], K) == R(-1, 2)
    assert r.epsilon_exponent(B["fednest.thm31_cor31_N"], K, eps) == -2


def test_fednest_rounds():
    assert r.law_for("fednest.rounds_fednest", "exact", subs={"T": 3, "N": 5}).value == 14
    assert r.law_for("fednest.rounds_lfednest", "exact", subs={"T": 3}).value == 4
    assert r.leading_exponent(B["fednest.rounds_fednest"], T) == 1
    assert r.leading_exponent(B["fednest.rounds_fednest"], N) == 1


# --------------------------------------------------------------------------- FedMBO


def test_fedmbo_bias_both_readings():
    for name in ("fedmbo.prop1_bias", "fedmbo.prop1_bias_proof"):
        assert same(r.geometric_ratio(B[name], N), (kg - 1) / kg)
    assert B["fedmbo.prop1_bias"].expr.has(S["ell_f1"])
    assert B["fedmbo.prop1_bias_proof"].expr.has(S["ell_f0"])


def test_fedmbo_props_2_3():
    assert r.leading_exponent(B["fedmbo.prop2_variance_kappa"], kg) == 2
    assert r.leading_exponent(B["fedmbo.prop2_second_moment_kappa"], kg) == 2
    assert r.leading_exponent(B["fedmbo.prop3_variance"], n) == -1


def test_fedmbo_cor1():
    cor = B["fedmbo.cor1"]
    assert r.leading_exponent(cor, K) == R(-1, 2)
    assert r.exponent_at_order(cor, K, n) == R(-1, 2)
    assert r.epsilon_exponent(cor, K, eps) == -2
    assert r.inverse_exponent_in(cor, K, eps, n) == -1
    assert r.inverse_exponent_in(cor, K, eps, kg) == 5
    it = B["fedmbo.cor1_iterations"]                                # the stated K(ε)
    assert r.leading_exponent(it, eps, at=0) == -2 and r.leading_exponent(it, n) == -1
    assert same(r.invert(cor, K, eps).solution, it.expr)            # rederived = stated
    assert all(same(pt, kg * n) for pt, _, _ in r.crossovers(cor, K))


def test_fedmbo_thm1():
    assert r.leading_exponent(B["fedmbo.thm1"], K) == 0            # b² floor at fixed N
    thm = B["fedmbo.thm1_cor1_constants"]
    assert r.leading_exponent(thm, K) == R(-1, 2)
    assert r.exponent_at_order(thm, K, n) == R(-1, 2)
    assert r.exponent_at_order(thm, K, kg) == R(5, 2)               # Cor 1's κ_g^{5/2}
    assert r.inverse_exponent_in(thm, K, eps, n) == -1


# --------------------------------------------------------------------------- Gao


def test_gao_neumann_bias():
    assert same(r.geometric_ratio(B["gao.neumann_bias"], Q), 1 - theta * mu)


def test_gao_cor1():
    assert r.leading_exponent(B["gao.cor1_iterations"], eps, at=0) == -2
    assert r.leading_exponent(B["gao.cor1_iterations"], K) == -1     # linear speedup
    assert r.leading_exponent(B["gao.cor1_communication"], eps, at=0) == R(-3, 2)
    assert r.leading_exponent(B["gao.cor1_communication"], K) == 0   # no speedup
    assert r.leading_exponent(B["gao.cor1_schedule"], eps, at=0) == 1   # Thm 1 bound = O(ε)


def test_gao_thm1_inversion_gives_cor1_iterations():
    thm = B["gao.thm1_cor1_steps"]
    assert r.epsilon_exponent(thm, T, eps) == -2
    assert r.inverse_exponent_in(thm, T, eps, K) == -1
    assert r.inverse_exponent_in(thm, T, eps, kappa) == 5


def test_gao_cor2():
    assert r.leading_exponent(B["gao.cor2_iterations"], eps, at=0) == R(-3, 2)
    assert r.leading_exponent(B["gao.cor2_iterations"], K) == -1
    assert r.leading_exponent(B["gao.cor2_communication"], eps, at=0) == -1
    assert r.leading_exponent(B["gao.cor2_schedule"], eps, at=0) == 1   # Õ(ε): ε·log(1/ε)
    thm = B["gao.thm2_cor2_steps"]
    assert r.epsilon_exponent(thm, T, eps) == R(-3, 2)
    assert r.inverse_exponent_in(thm, T, eps, K) == -1
    # VRM beats M in the ε-exponent, iterations and communication
    for a, b in (("iterations", "iterations"), ("communication", "communication")):
        vrm = r.leading_exponent(B[f"gao.cor2_{a}"], eps, at=0)
        mom = r.leading_exponent(B[f"gao.cor1_{b}"], eps, at=0)
        assert vrm > mom


# --------------------------------------------------------------------------- MemFBO


def test_memfbo_cor512_text():
    assert r.leading_exponent(B["memfbo.cor512_partial_rounds"], eps, at=0) == R(-7, 2)
    assert r.leading_exponent(B["memfbo.cor512_partial_rounds"], P) == -1
    assert r.leading_exponent(B["memfbo.cor512_full_rounds"], eps, at=0) == R(-3, 2)
    assert r.leading_exponent(B["memfbo.cor512_samples"], eps, at=0) == R(-7, 2)
    assert r.leading_exponent(B["memfbo.penalty_gap"], lam) == -1


def test_memfbo_inferred_rates_reproduce_cor512():
    part = B["memfbo.rate_partial"]
    assert r.epsilon_exponent(part, T, eps) == R(-7, 2)
    assert r.inverse_exponent_in(part, T, eps, P) == -1
    assert same(r.invert(part, T, eps).solution, B["memfbo.cor512_partial_rounds"].expr)
    # full participation: τ_max from balancing the two terms, then T(ε) and PτT
    a, b = sp.Add.make_args(B["memfbo.rate_full"].expr)
    tau_max = r.balance_point(a, b, tau)
    assert same(tau_max, T ** R(4, 3) / P)
    full = B["memfbo.rate_full"].expr.subs(tau, tau_max)
    assert r.epsilon_exponent(full, T, eps) == R(-3, 2)
    assert r.epsilon_exponent(B["memfbo.rate_full_tau_max"], T, eps) == R(-3, 2)
    t_eps = r.invert(full, T, eps).solution
    samples = (P * tau_max * T).subs(T, t_eps)
    assert r.leading_exponent(samples, eps, at=0) == R(-7, 2)


def test_memfbo_balance_derives_lambda_and_rate():
    point, value = r.minimize_rate(B["memfbo.balance_partial"], lam, order=T)
    assert same(point, (P * T) ** R(1, 7))
    assert same(value, B["memfbo.rate_partial"].expr)
    point, value = r.minimize_rate(B["memfbo.balance_full"], lam, order=T)
    assert r.leading_exponent(value, T) == R(-2, 7)
    # λ/T + 1/λ² alone: the deterministic floor T^{-2/3}
    assert same(r.minimize_rate(lam / T + lam**-2, lam)[1], T ** R(-2, 3))


# --------------------------------------------------------------------------- AFBO


def test_afbo_corollary():
    assert r.leading_exponent(B["afbo.cor41_strongly_convex"], T) == -1
    nc = B["afbo.cor41_nonconvex"]
    assert r.leading_exponent(nc, T) == R(-1, 2)
    assert r.exponent_at_order(nc, T, m) == R(-1, 2)


def test_afbo_theorem_at_corollary_schedule():
    """Thm 4.1 at Cor 4.1's step sizes: T^{-1/2} (not 1/T) in the strongly convex case, and the
    staleness term 3L_fD̂τ̄√(m/T) has exponent +1/2 in m."""
    assert r.leading_exponent(B["afbo.thm41a_cor41_schedule"], T) == R(-1, 2)
    b = B["afbo.thm41b_cor41_schedule"]
    assert r.leading_exponent(b, T) == R(-1, 2)
    assert r.exponent_at_order(b, T, m) == R(1, 2)
    assert r.exponent_at_order(b.expr.subs(tau_bar, 0), T, m) == R(-1, 2)


def test_afbo_staleness_and_aphe():
    assert r.leading_exponent(B["afbo.staleness_term"], tau_bar) == 1
    # Thm 4.1(a)'s floor C/(ημ_f) minus its synchronous value: 6ηD̂_f(τ̄ − 1)/μ_f
    sc = B["afbo.thm41a_staleness_excess"]
    eta, D, mu_f, x = (S[k] for k in ("eta", "D_hat_f", "mu_f", "tau_excess"))
    assert sp.simplify(sc.expr - 6 * eta * D * x / mu_f) == 0
    assert r.leading_exponent(sc, x) == 1
    assert same(r.geometric_ratio(B["afbo.aphe_bias"], m), (kg - 1) / kg)


# --------------------------------------------------------------------------- law_for, registry


def test_law_for_values_and_law():
    from bilevel_theory.verify.claim import Law

    pred = r.law_for("fedmbo.cor1", "exponent_at_order", "K", second="n")
    assert pred.value == -0.5 and "n" in pred.derivation
    law = Law(*pred.as_tuple())
    assert law.latex == r.latex("fedmbo.cor1")
    assert r.law_for("fedmbo.cor1", "inverse_exponent", "K", other="n").value == -1
    assert r.law_for("fedmbo.cor1", "epsilon_exponent", "K").value == -2
    assert r.law_for("gao.cor1_communication", "exponent", "epsilon", at=0).value == -1.5
    geo = r.law_for("fednest.lemma22_bias", "log_ratio", "N", subs={"kappa_g": 5})
    assert math.isclose(geo.value, math.log(0.8))
    assert math.isnan(r.law_for("afbo.thm41b", "bound").value)
    with pytest.raises(ValueError, match="kappa_g"):
        r.law_for("fednest.lemma22_bias", "log_ratio", "N")
    with pytest.raises(ValueError, match="kind"):
        r.law_for("fedmbo.cor1", "slope", "K")
    with pytest.raises(ValueError, match="unknown bound"):
        r.law_for("nope", "exponent", "K")
    with pytest.raises(ValueError, match="floor"):
        r.law_for("fedmbo.thm1", "epsilon_exponent", "K")
    dropped = r.law_for("fedmbo.thm1", "epsilon_exponent", "K", floor="drop")
    assert dropped.value == -2 and "floors ignored" in dropped.derivation


def test_registry_sources_and_variables():
    from bilevel_theory.verify.kit import PAPERS

    assert len(B) >= 40
    for name, bound in B.items():
        paper = name.split(".")[0]
        assert bound.source.startswith(PAPERS[paper].citation), name
        assert bound.tag in ("[TEXT]", "[INFERRED]")
        assert all(s.is_positive for s in bound.expr.free_symbols), name
        for v in bound.variables:
            assert bound.symbol(v) in bound.expr.free_symbols
    assert B["memfbo.rate_partial"].tag == "[INFERRED]"
    assert B["memfbo.cor512_partial_rounds"].tag == "[TEXT]"


def test_bound_validation():
    with pytest.raises(ValueError, match="relation"):
        r.Bound("x.y", "p", "f [TEXT]", 1 / K, "q", relation="lt")
    with pytest.raises(ValueError, match="tag"):
        r.Bound("x.y", "p", "f", 1 / K, "q")
    with pytest.raises(ValueError, match="variables"):
        r.Bound("x.y", "p", "f [TEXT]", 1 / K, "q", variables={"n": "clients"})


def test_bound_at_sets_its_symbols_by_name():
    b = r.Bound("x.y", "p", "f [TEXT]", 2 / K + N, "q")
    assert b.at(K=4.0, N=3.0, unused=1.0) == 3.5
    with pytest.raises(ValueError, match=r"x\.y: no value for \['N'\]"):
        b.at(K=4.0)


def test_latex_renders_for_every_bound():
    mathtext = pytest.importorskip("matplotlib.mathtext")
    parser = mathtext.MathTextParser("agg")
    for name, bound in B.items():
        tex = r.latex(name)
        assert tex == bound.latex()
        assert tex.count("{") == tex.count("}"), name
        assert tex.count(r"\left") == tex.count(r"\right"), name
        assert "**" not in tex and "sqrt(" not in tex, name
        parser.parse(f"${tex}$", dpi=72)
