"""pytest plug-in (entry point ``pytest11``): the ``assert_rate`` fixture.

Installed with the package, so any project's tests can gate on a rate::

    def test_my_method_decays_like_one_over_k(assert_rate):
        K, errors = run_my_sweep()              # errors: one array of replicates per K
        assert_rate(K, errors, law=-1.0, kind="at_most", tolerance=0.1)

The fixture is :func:`bilevel_theory.verify.rate.assert_rate`; a failed check raises an
``AssertionError`` whose message gives the measured slope, its interval and the reason.
"""

from __future__ import annotations

import pytest


@pytest.fixture
def assert_rate():
    """:func:`bilevel_theory.verify.assert_rate` (slope fit, bootstrap interval, verdict)."""
    from bilevel_theory.verify.rate import assert_rate as check  # noqa: PLC0415

    return check
