"""The example plug-in's own tests: it is found through its entry points and its claims and
mutants give their verdicts at the smoke budget (a few seconds)."""

from bilevel_theory import ALGORITHMS
from bilevel_theory.verify import CLAIMS, check


def test_the_algorithm_and_claims_are_registered():
    assert "toy_fullgrad" in ALGORITHMS
    assert {"toy.neumann_bias_vs_N", "toy.rounds_per_iteration"} <= set(CLAIMS)


def test_claims_hold_and_catch_their_mutants():
    for cid in ("toy.neumann_bias_vs_N", "toy.rounds_per_iteration"):
        claim = CLAIMS[cid]
        assert claim.role == "confirmation" and claim.mutants
        assert check(claim, budget="smoke").verdict == "holds", cid
        for mutated in claim.mutated():
            assert check(mutated, budget="smoke").verdict == "violated", mutated.id


def test_the_inventory_is_mapped_to_the_claims():
    from bilevel_theory.verify.coverage import coverage

    status = {a.result.id: a.status for a in coverage() if a.inventory.key == "toy"}
    assert status == {"toy.bias": "full", "toy.rounds": "partial"}
