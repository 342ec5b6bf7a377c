"""Shared fixtures: backend parametrization with a skip reason when CuPy or a GPU is absent."""

from __future__ import annotations

import pytest

from bilevel_theory.problems import cupy_available, get_backend


@pytest.fixture(params=["numpy", "cupy"])
def backend(request):
    """Each test using it runs on numpy, and on CuPy where a GPU is present."""
    if request.param == "cupy":
        ok, why = cupy_available()
        if not ok:
            pytest.skip(f"CuPy backend unavailable: {why}")
    return get_backend(request.param)


@pytest.fixture
def short_grid_verdicts():
    """``check(claim, grid, reps)``: the claim reaches its expected verdict on a short grid (a
    cheap version of its sweep, point seeds 100, 101, …) and every mutant the other one."""
    from bilevel_theory.verify.verdict import assess

    def verdict(claim, grid, reps):
        rows = [claim.measure(x, reps, 100 + i) for i, x in enumerate(grid)]
        return assess(claim, list(grid), rows).verdict

    def check(claim, grid, reps):
        assert verdict(claim, grid, reps) == claim.expected
        flipped = "holds" if claim.expected == "violated" else "violated"
        for m in claim.mutants:
            assert verdict(claim.under(m.name), grid, reps) == flipped, m.name

    return check
