"""FedMBO's κ_g-sweep claim (``verify/claims/fedmbo/kappa.py``): it loads under the paper's
prefix, the instances have exactly the swept κ_g with μ_g fixed, the runs follow Cor 1's
κ_g-scaled schedule inside Thm 1's step conditions, and on a short grid the claim holds while
the mutant (iterations not grown with κ_g) is caught."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bilevel_theory.verify.claims import CLAIMS as CATALOGUE
from bilevel_theory.verify.claims.fedmbo import kappa as FK
from bilevel_theory.verify.verdict import assess

CID = "fedmbo.kappa_iterations"


def test_claim_loads_from_the_catalogue_with_the_paper_prefix():
    c = CATALOGUE[CID]
    assert c is FK.CLAIMS[0]
    assert c.paper == "FedMBO 2023" and c.role == "confirmation" and c.kind == "at_most"
    assert [m.name for m in c.mutants] == ["iterations_fixed"]
    assert c.mutants[0].kind == "schedule"
    for text in (c.source, c.schedule, *(m.change for m in c.mutants)):
        for banned in ("PAPERS" + ".md", "DESIGN", ".txt", "issue #"):
            assert banned not in text


def test_law_is_cor1s_kappa_exponent_spent_by_the_schedule():
    c = CATALOGUE[CID]
    assert c.law.value == 0.0 and "κ_g-exponent 5" in c.law.derivation


@pytest.mark.parametrize("kappa_g", [1.4, 2.0, 2.6, 3.0])
def test_instance_has_exactly_the_swept_kappa_and_the_same_mu(kappa_g):
    P = FK.instance(kappa_g)
    assert P.constants["kappa_g"] == pytest.approx(kappa_g, rel=1e-9)
    assert P.constants["mu_g"] == pytest.approx(1.0)
    ref = FK.instance(FK.KAPPA_REF).constants
    for name in ("ell_f0", "ell_f1"):
        assert P.constants[name] == pytest.approx(ref[name])


@pytest.mark.parametrize("bad", [1.0, 0.5, 11.0, "2"])
def test_instance_rejects_kappa_outside_the_family(bad):
    with pytest.raises(ValueError, match="`kappa_g` must be in"):
        FK.instance(bad)


def test_schedule_scales_with_kappa_as_cor1_says():
    s0, s = FK.schedule(FK.KAPPA_REF), FK.schedule(2.6)
    r = 2.6 / FK.KAPPA_REF
    assert s0["K"] == FK.K_REF and s["K"] == math.ceil(FK.K_REF * (1 - 1e-9) * r ** 5)
    assert s["alpha_hat3"] == pytest.approx(s0["alpha_hat3"] / r ** 2.5)
    assert s["alpha"] * s["K"] / math.sqrt(s["K"]) == pytest.approx(
        s0["alpha"] * s0["K"] / math.sqrt(s0["K"]) / r ** 2.5)
    assert s["N"] > s0["N"]                                   # N = Ω(κ_g log K)
    assert s["S"] * s["T"] >= 2.6 ** 4
    assert s0["alpha"] == pytest.approx(s0["alpha_cap"])      # the cap binds at κ₀ only
    assert s["alpha"] < s["alpha_cap"]


def test_conditions_hold_at_every_budget():
    c = CATALOGUE[CID]
    for budget in ("smoke", "standard", "full"):
        for r in c.check_conditions(budget):
            assert r["holds"], r


def test_measure_and_mutant_give_the_expected_verdicts_on_a_short_grid():
    """Three points, few replicates: the claim holds (A falls with κ_g), the mutant is caught
    (A grows as the transient's κ_g^{5/2})."""
    c = CATALOGUE[CID]
    x = (1.4, 1.6, 1.8)
    for claim, expected in ((c, "holds"), (c.under("iterations_fixed"), "violated")):
        metrics = [claim.measure(k, 24, 200 + i, "numpy") for i, k in enumerate(x)]
        assert all(np.all(m["diverged"] == 0) for m in metrics)
        assert assess(claim, x, metrics).verdict == expected, claim.id
