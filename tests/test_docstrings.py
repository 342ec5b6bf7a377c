"""The library's docstring examples run, imported under their package names
(``bilevel_theory.verify.rate``, …) so that nothing is imported twice."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import bilevel_theory
from bilevel_theory import problems, reports, verify

# the package's own folder and its three layers (in a source checkout, ``__path__`` also holds
# the repository root, which is not walked)
ROOTS = [(str(Path(bilevel_theory.__file__).parent), "bilevel_theory.")] + [
    (str(Path(pkg.__file__).parent), pkg.__name__ + ".") for pkg in (problems, verify, reports)]
LAYERS = ("bilevel_theory.problems", "bilevel_theory.verify", "bilevel_theory.reports")
MODULES = sorted({"bilevel_theory", *LAYERS} | {
    info.name for path, prefix in ROOTS for info in pkgutil.walk_packages([path], prefix)})
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=FLAGS, verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"


def test_the_examples_are_found():
    """At least the documented examples are collected (a walk that finds nothing would pass)."""
    attempted = sum(doctest.testmod(importlib.import_module(n), optionflags=FLAGS).attempted
                    for n in ("bilevel_theory.verify.rate",))
    assert attempted >= 5
