"""The AFBO claims module (``verify/claims/afbo.py``): instance, laws, measures, metadata.

Tolerances: ``≈`` checks are exact identities (1e-10 relative, round-off); the verdicts
themselves are checked by ``verify/test_claims.py`` at the smoke budget.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from bilevel_theory.verify.claim import BUDGETS
from bilevel_theory.verify.claims import afbo as A
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
    assert A.LAW_SC_COR.value == -1.0
    assert A.LAW_SC_THM.value == -0.5 and A.LAW_NC_T.value == -0.5
    assert A.LAW_NC_M.value == -0.5
    assert A.LAW_STALE.value == 1.0
    assert A.THM_B_M == 0.5  # the theorem's own exponent in m at η = √(m/T)
    kg = A.problem().constants["kappa_g"]
    assert A.LAW_APHE.value == pytest.approx(math.log(1 - 1 / kg), rel=1e-12)


@pytest.mark.parametrize("truncation", ["fixed", "series"])
def test_aphe_bias_measure_matches_closed_form(truncation):
    """The measured bias is ‖vᵀ(M̂ − A⁻¹)B‖ with M̂ the truncation's inverse estimate."""
    m = 8
    out = A._aphe_bias(m, 3, 5, "numpy", truncation)
    p = A.problem(m, noise=0.0)
    C, ell = p._closed, p.constants["ell_g1"]
    rng = np.random.default_rng(A.BIAS_POINTS_SEED)
    x, y = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    M = np.eye(3) - C["A"] / ell
    if truncation == "fixed":
        inv = (m / ell) * np.linalg.matrix_power(M, m)
    else:
        inv = sum(np.linalg.matrix_power(M, n) for n in range(m)) / ell
    v = x @ C["R"] + y @ C["S"] + C["q"]  # mean ∇_y f
    bias = v @ (inv - np.linalg.inv(C["A"])) @ C["B"]
    np.testing.assert_allclose(out["value"], np.linalg.norm(bias, axis=1), rtol=1e-10)


@pytest.mark.parametrize("measure", [A.sc_fixed, A.nc_rate_T, A.hetero_local])
def test_measures_return_per_replicate_arrays(measure):
    out = measure(10, 2, 0)
    for key, val in out.items():
        assert np.asarray(val).shape == (2,), key
    assert np.all(np.isfinite(out["value"])) and not np.any(out["diverged"])


def test_floor_measure_delay_mapping():
    """BoundedDelay(3τ̄ − 2) has mean paper delay τ̄ = (τ_M + 2)/3."""
    out = A.floor_vs_delay(4, 4, 0)
    assert abs(out["tau_mean"].mean() - 4.0) < 0.2


def test_claims_metadata():
    mathtext = pytest.importorskip("matplotlib.mathtext")
    parser = mathtext.MathTextParser("agg")
    ids = [c.id for c in A.CLAIMS]
    assert len(ids) == len(set(ids)) >= 7
    for c in A.CLAIMS:
        assert c.id.startswith("afbo.") and c.paper == "AFBO"
        assert A.SEED_FILE in c.source and ("[TEXT]" in c.source or "[INFERRED]" in c.source)
        assert c.schedule and c.touches
        for tex in (c.statement, c.quantity, c.variable):
            parser.parse(f"${tex}$")
        if c.expected != "holds":
            assert "Measured" in c.reason
        for budget in BUDGETS:
            x = np.asarray(c.grid[budget], dtype=float)
            assert in_window(x, c.window).sum() >= 3, (c.id, budget)
