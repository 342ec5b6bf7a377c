"""Executable claims: sweeps, slope fits with bootstrap intervals, verdicts, results store.

>>> from verify import CLAIMS, check
>>> result = check("fedmbo.phe_variance_vs_clients", budget="smoke", seed=0)  # doctest: +SKIP
>>> result.verdict, result.measured, result.interval, result.predicted     # doctest: +SKIP

``CLAIMS`` (``id -> Claim``) gathers the ``CLAIMS`` lists of the modules in
``verify/claims/`` on first use; ``select(pattern)`` picks claims by glob or substring.
"""

from .claim import BUDGETS, KINDS, SCALES, VERDICTS, Claim, Law
from .claims import CLAIMS, load, select
from .fit import Fit, fit
from .runner import Result, check, evaluate, run_suite, summarize
from .store import CorruptStore, ResultsStore
from .verdict import Assessment, assess

__all__ = [
    "BUDGETS", "CLAIMS", "KINDS", "SCALES", "VERDICTS", "Assessment", "Claim", "CorruptStore",
    "Fit", "Law", "Result", "ResultsStore", "assess", "check", "evaluate", "fit", "load",
    "run_suite", "select", "summarize",
]
