"""FedMBO's Remark 4, full participation (``fedmbo.full_participation_vs_K`` and
``fedmbo.full_participation_vs_m`` in ``verify/claims/fedmbo/stationarity.py``): the population
is copies of one 4-client instance with the same constants at every ``m``, every client takes
part in every round, the laws are Thm 1's exponents at ``n = m``, the runs stay inside Thm 1's
conditions, and on a short grid each claim holds while its mutant is caught."""

from __future__ import annotations

import numpy as np
import pytest

from bilevel_theory.verify.claims import CLAIMS as CATALOGUE
from bilevel_theory.verify.claims.fedmbo import stationarity as ST

IDS = ("fedmbo.full_participation_vs_K", "fedmbo.full_participation_vs_m")


def test_population_is_copies_with_the_same_constants():
    base, big = ST.full_problem(), ST.full_problem(32)
    assert base.clients == ST.FULL_BASE and big.clients == 32
    np.testing.assert_allclose(big.x_star, base.x_star, rtol=1e-12)
    for key in ("mu_g", "ell_g1", "L_f", "M_f", "L_y", "kappa_g"):
        assert big.constants[key] == pytest.approx(base.constants[key], rel=1e-12), key


@pytest.mark.parametrize("cid", IDS)
def test_claims_load_with_thm1s_law_and_hold_their_conditions(cid):
    c = CATALOGUE[cid]
    assert c.role == "confirmation" and c.kind == "at_most" and c.law.value == -0.5
    assert "Remark 4" in c.source
    for budget in ("smoke", "standard", "full"):
        for r in c.check_conditions(budget):
            assert r["holds"], r


def test_every_client_takes_part_in_every_round():
    """n = m without replacement: each round's sample is the whole population, so the run is
    the same whatever order the clients are drawn in; the one-client mutant is not."""
    m = ST.full_participation(4, 50, 6, 3, "numpy")
    assert np.all(np.isfinite(m["value"])) and not m["diverged"].any()
    again = ST.full_participation(4, 50, 6, 3, "numpy")
    np.testing.assert_array_equal(m["value"], again["value"])
    one = ST.full_participation(4, 50, 6, 3, "numpy", used_clients=1)
    assert one["grad_calls"][0] < m["grad_calls"][0] / 3


@pytest.mark.parametrize("cid, grid, reps", [
    ("fedmbo.full_participation_vs_K", (200, 400, 800), 32),
    ("fedmbo.full_participation_vs_m", (4, 16, 32), 48),
])
def test_claim_and_mutants_reach_their_verdicts_on_a_short_grid(cid, grid, reps,
                                                                short_grid_verdicts):
    short_grid_verdicts(CATALOGUE[cid], grid, reps)
