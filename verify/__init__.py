"""Executable claims: sweeps, slope fits with bootstrap intervals, verdicts, results store.

>>> from bilevel_theory.verify import CLAIMS, check
>>> result = check("fedmbo.phe_variance_vs_clients", budget="smoke", seed=0)  # doctest: +SKIP
>>> result.verdict, result.measured, result.interval, result.predicted     # doctest: +SKIP

``CLAIMS`` (``id -> Claim``) gathers the papers' claims modules, installed plug-ins (entry
points ``bilevel_theory.claims``) and :func:`register_claims` on first use;
``select(patterns, paper=, kind=, role=)`` picks claims.  ``assess``/``assert_rate`` judge
anyone's data against a law with the same fit and verdict rules.
"""

from .claim import BUDGETS, KINDS, ROLES, SCALES, VERDICTS, Claim, Law, Mutant
from .claims import CLAIMS, load, register_claims, select
from .fit import Fit, fit
from .rate import RateAssertionError, assert_rate, assess
from .runner import Result, check, evaluate, run_suite, summarize
from .store import CorruptStore, ResultsStore
from .verdict import Assessment

__all__ = [
    "BUDGETS", "CLAIMS", "KINDS", "ROLES", "SCALES", "VERDICTS", "Assessment", "Claim",
    "CorruptStore", "Fit", "Law", "Mutant", "RateAssertionError", "Result", "ResultsStore",
    "assert_rate", "assess", "check", "evaluate", "fit", "load", "register_claims",
    "run_suite", "select", "summarize",
]
