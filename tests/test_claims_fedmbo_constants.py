"""FedMBO Lemma 2's Lipschitz constants (``fedmbo.lemma2_constants_vs_kappa``): the exact
constants of an instance, the registered formulas, the claim's family and its verdicts.

Tolerances: closed forms and finite differences of exact quadratics (1e-9 relative, round-off).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from bilevel_theory.problems import QuadraticBilevel
from bilevel_theory.verify.claims import load
from bilevel_theory.verify.claims.fedmbo.constants import (
    exact_lipschitz,
    lemma2_vs_kappa,
    lipschitz_problem,
    stated_lipschitz,
)

REL = 1e-9


@pytest.mark.parametrize("kappa_g", [1.5, 2.0, 8.0, 100.0])
def test_family_closed_forms(kappa_g):
    b = math.sqrt(kappa_g ** 2 - kappa_g)
    p = lipschitz_problem(kappa_g)
    assert p.constants["ell_g1"] == pytest.approx(kappa_g, rel=REL)
    assert p.constants["mu_g"] == pytest.approx(1.0, rel=REL)
    assert p.constants["ell_f1"] == pytest.approx(1.0, rel=REL)
    exact, stated = exact_lipschitz(p), stated_lipschitz(p)
    assert exact == pytest.approx({"L_f": 1 + b * b, "M_f": max(1.0, b), "L_y": b}, rel=REL)
    assert stated == pytest.approx({"L_f": (1 + kappa_g) ** 2, "M_f": 1 + kappa_g,
                                    "L_y": kappa_g}, rel=REL)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("storage", ["dense", "structured"])
def test_registered_formulas_are_the_instance_constants_and_bound_the_exact_ones(seed, storage):
    """The sympy bounds agree with the instance's own Lemma-2 constants, and the lemma holds on
    random instances (it is a theorem on quadratics: ℓ_{g,2} = 0)."""
    p = QuadraticBilevel.random(clients=5, dim_x=3, dim_y=4, kappa=6, heterogeneity=0.7,
                                seed=seed, coupling=2.0, upper_mu=0.5, storage=storage)
    stated, exact = stated_lipschitz(p), exact_lipschitz(p)
    for name in ("L_f", "M_f", "L_y"):
        assert stated[name] == pytest.approx(p.constants[name], rel=REL)
        assert exact[name] <= stated[name] * (1 + REL)


def test_exact_constants_by_finite_differences():
    """On one client, the exact constants are the largest difference quotients of ∇Φ, y* and
    the surrogate ∇̄f (attained along the top singular vectors)."""
    p = QuadraticBilevel.random(clients=1, dim_x=3, dim_y=3, kappa=4, heterogeneity=0.0,
                                seed=5, coupling=1.5, upper_mu=0.3, storage="dense")
    exact = exact_lipschitz(p)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(3), rng.standard_normal(3)

    def top_quotient(fn, dim):
        J = np.column_stack([fn(np.eye(dim)[j]) - fn(np.zeros(dim)) for j in range(dim)])
        return float(np.linalg.norm(J, 2))
    grad = lambda v: np.asarray(p.hypergradient(x + v), float)  # noqa: E731
    ystar = lambda v: np.asarray(p.y_star(x + v), float)  # noqa: E731
    sur_y = lambda v: np.asarray(p.surrogate_hypergradient(x, y + v), float)  # noqa: E731
    sur_x = lambda v: np.asarray(p.surrogate_hypergradient(x + v, y), float)  # noqa: E731
    assert top_quotient(grad, 3) == pytest.approx(exact["L_f"], rel=1e-8)
    assert top_quotient(ystar, 3) == pytest.approx(exact["L_y"], rel=1e-8)
    assert max(top_quotient(sur_y, 3), top_quotient(sur_x, 3)) == pytest.approx(exact["M_f"],
                                                                                rel=1e-8)


def test_ratios_rise_to_one_and_the_mutant_crosses_it():
    values = [float(lemma2_vs_kappa(k, 2, 0)["value"][0]) for k in (1.5, 4, 64, 1024)]
    assert values == sorted(values) and values[-1] < 1 and values[-1] > 0.999
    mutated = {k: float(lemma2_vs_kappa(k, 2, 0, indirect=False)["ratio_L_f"][0])
               for k in (1.5, 4, 64)}
    assert mutated[1.5] < 1 < mutated[4] < mutated[64]


def test_claim_is_catalogued_with_its_mutant():
    claim = load()["fedmbo.lemma2_constants_vs_kappa"]
    assert claim.kind == "bounded_by" and claim.role == "confirmation"
    assert [m.name for m in claim.mutants] == ["indirect_dropped"]
    assert min(claim.grid["smoke"]) < 2 < 64 <= max(claim.grid["smoke"])
