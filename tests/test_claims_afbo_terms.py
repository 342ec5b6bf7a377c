"""Thm 4.1's terms one variable at a time (``verify/claims/afbo/terms.py``) and its inner-loop
variance term in ``m`` and ``E^t`` (``verify/claims/afbo/inner_loop.py``): the laws are derived
from the registered bounds, the runs stay inside the theorem's conditions, the measured
quantities are what the claims say (checked against closed forms), and on short grids the
cheap claims hold while their mutants are caught."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bilevel_theory.verify.claims import CLAIMS as CATALOGUE
from bilevel_theory.verify.claims.afbo import inner_loop as IL
from bilevel_theory.verify.claims.afbo import terms as TM
from bilevel_theory.verify.claims.afbo.common import problem

NEW = ("afbo.inner_noise_vs_clients", "afbo.inner_noise_vs_local_iterations",
       "afbo.bias_floor_vs_N", "afbo.nonconvex_bias_floor_vs_N",
       "afbo.nonconvex_floor_vs_step", "afbo.nonconvex_floor_vs_clients")


@pytest.mark.parametrize("cid", NEW)
def test_claims_are_confirmations_inside_the_theorems_conditions(cid):
    c = CATALOGUE[cid]
    assert c.role == "confirmation" and c.kind == "at_most" and c.mutants
    assert "Thm 4.1" in c.source
    for budget in ("smoke", "standard", "full"):
        for r in c.check_conditions(budget):
            assert r["holds"], r


def test_laws_are_the_registered_terms():
    kg = problem(4, 0.0).constants["kappa_g"]
    for cid in ("afbo.bias_floor_vs_N", "afbo.nonconvex_bias_floor_vs_N"):
        assert CATALOGUE[cid].law.value == pytest.approx(2 * math.log(1 - 1 / kg), rel=1e-12)
    for cid in ("afbo.inner_noise_vs_clients", "afbo.inner_noise_vs_local_iterations",
                "afbo.nonconvex_floor_vs_step", "afbo.nonconvex_floor_vs_clients"):
        assert CATALOGUE[cid].law.value == -1.0


def _inner_noise_closed_form(m: int, E: int, K: int = IL.K_NOISE, scale: float = 1.0) -> float:
    """``E‖y^{t+1} − y*‖²`` of K steps ``y ← y − β(Ā(y − y*) + ξ̄)`` from ``y*``, with ``ξ̄`` the
    mean of ``mE`` isotropic draws of ``E‖ξ‖² = σ²``: ``β²σ²/(d mE) Σ_k tr((I − βĀ)^{2k})``,
    ``β = scale·0.99/(2ℓ_{g,1})``."""
    p = problem(m)
    A = np.asarray(p.host.closed_form.A, float)
    d = A.shape[0]
    beta = scale * IL.STEP_FRACTION / (2 * p.constants["ell_g1"])
    M = np.eye(d) - beta * A
    total = sum(np.trace(np.linalg.matrix_power(M, 2 * k)) for k in range(K))
    return beta**2 * p.grad_noise**2 / (d * m * E) * total


@pytest.mark.parametrize("m, E", [(4, 1), (16, 1), (4, 8)])
def test_inner_noise_is_the_averaged_variance_in_closed_form(m, E):
    out = IL.inner_noise(m, E, 4096, 7, "numpy")
    v = out["value"]
    se = v.std() / math.sqrt(v.size)
    assert abs(v.mean() - _inner_noise_closed_form(m, E)) < 4 * se
    assert np.all(out["term"] > v.mean())  # the theorem's term lies above the measured variance


@pytest.mark.parametrize("cid, grid", [
    ("afbo.inner_noise_vs_clients", (4, 16, 64)),
    ("afbo.inner_noise_vs_local_iterations", (1, 4, 16)),
])
def test_inner_noise_claims_and_mutants_on_a_short_grid(cid, grid, short_grid_verdicts):
    short_grid_verdicts(CATALOGUE[cid], grid, 2048)


def test_inner_steps_claim_reads_remark_2_at_cor_41_coupling():
    """Remark 2 in K (AFBO-R18): β = β₁/√K keeps Kβ² = β₁² inside Lemma 4.2's cap at every
    budget; the law is the registered first term's exponent in K there (0, by sympy), judged
    with no tolerance; the measured variance is the closed form of K coupled steps (falling in
    K), and the mutant's β₁ at every K is the closed form of the constant step (rising)."""
    c = CATALOGUE["afbo.inner_noise_vs_inner_steps"]
    assert c.role == "confirmation" and c.kind == "at_most" and c.tolerance == 0.0
    assert c.law.value == 0.0 and "afbo.thm41a_inner_noise_term" in c.law.derivation
    assert "AFBO-R18" in c.source and [m.name for m in c.mutants] == ["step_not_coupled"]
    for budget in ("smoke", "standard", "full"):
        assert all(r["holds"] for r in c.check_conditions(budget)), budget
    means = {}
    for K in (1, 8, 32):
        for coupled in (True, False):
            v = IL.inner_noise_vs_steps(K, 4096, 5, coupled=coupled)["value"]
            expect = _inner_noise_closed_form(4, 1, K, 1 / math.sqrt(K) if coupled else 1.0)
            assert abs(v.mean() - expect) < 4 * v.std() / math.sqrt(v.size), (K, coupled)
            means[K, coupled] = expect
    assert means[1, True] > means[8, True] > means[32, True]
    assert means[1, False] < means[8, False] < means[32, False]


def test_inner_steps_claim_and_mutant_on_a_short_grid(short_grid_verdicts):
    short_grid_verdicts(CATALOGUE["afbo.inner_noise_vs_inner_steps"], (1, 4, 32), 2048)


def test_bias_floor_is_deterministic_and_decays_at_the_slowest_ratio():
    """Noise-free synchronous runs: the replicates agree bitwise, and four more Neumann terms
    divide the floor by the slowest mode's ``(1 − 1/κ_g)^8`` once the faster modes are gone
    (the law, read off the runs without a fit); without the indirect term nothing decays."""
    kg = problem(4, 0.0).constants["kappa_g"]
    a, b = (TM.bias_floor(N, 2, 0)["value"] for N in (20, 24))
    assert a[0] == a[1] and b[0] == b[1]
    assert b[0] / a[0] == pytest.approx((1 - 1 / kg) ** 8, rel=0.02)
    flat = [TM.bias_floor(N, 1, 0, indirect=False)["value"][0] for N in (20, 24)]
    assert flat[1] == pytest.approx(flat[0], rel=1e-6) and flat[0] > 1e3 * a[0]


def test_clients_sweep_keeps_the_instance():
    base, big = TM.floor_problem(), TM.floor_problem().tiled_to(32)
    np.testing.assert_allclose(big.x_star, base.x_star, rtol=1e-12)
    for key in ("mu_g", "ell_g1", "L_f", "M_f", "L_y", "mu_phi"):
        assert big.constants[key] == pytest.approx(base.constants[key], rel=1e-12), key
