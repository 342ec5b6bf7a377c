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
