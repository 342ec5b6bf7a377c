"""The papers' algorithms, estimators and rate statements (the theory as code).

``run(name, problem, rounds, replicates, seed, backend, **hyperparameters) -> Trace`` runs any
algorithm of the registry ``ALGORITHMS`` (name → class), vectorized over clients and
replicates; ``run_algorithm(algorithm, rounds, replicates, seed, backend)`` runs an
:class:`Algorithm` instance (one built with your own hyperparameters or subclass, e.g. in a
claim's ``measure``); ``as_schedule(name, value)`` turns a step hyperparameter that may be a
number or a schedule ``k -> step`` into a schedule.
"""

from __future__ import annotations

from pathlib import Path as _Path
from typing import Any

__version__ = "0.2.0"

# In a source checkout the layers live in sibling folders (problems/, verify/, reports/); an
# installed wheel has them inside this package.  Let the same names resolve in both.
_here = _Path(__file__).resolve().parent
if not (_here / "problems").is_dir() and (_here.parent / "problems" / "__init__.py").is_file():
    __path__.append(str(_here.parent))  # noqa: F821 (module __path__)

from bilevel_theory.problems import FederatedQuadratic  # noqa: E402
from bilevel_theory.problems.validation import check_choice  # noqa: E402

from .algorithm import (  # noqa: E402
    Algorithm,
    Context,
    as_schedule,
    make_context,
    run_algorithm,
)
from .hyperparameters import MAX_WORK, SCHEMA, Hyper  # noqa: E402
from .registry import ALGORITHMS, register_algorithm  # noqa: E402
from .trace import Ledger, Trace  # noqa: E402


def run(name: str, problem: FederatedQuadratic, rounds: int = 100, replicates: int = 1,
        seed: int = 0, backend: str = "numpy", progress: bool = False, *,
        max_work: float | None = MAX_WORK, **hyperparameters: Any) -> Trace:
    """Run algorithm ``name`` for ``rounds`` outer rounds on ``replicates`` independent runs.

    Same seed and backend ⇒ bitwise identical traces.  Unknown names or hyperparameters raise
    ``ValueError`` listing the accepted ones; every hyperparameter is checked against its
    declaration (:mod:`bilevel_theory.hyperparameters`) before any work starts, and a run
    estimated above ``max_work`` floating-point operations is refused (``None``: no limit).
    """
    check_choice("name", name, ALGORITHMS)
    algorithm = ALGORITHMS[name](problem, **hyperparameters)
    return run_algorithm(algorithm, rounds, replicates, seed, backend, progress, max_work)


__all__ = ["__version__", "ALGORITHMS", "Algorithm", "register_algorithm", "Hyper", "MAX_WORK",
           "SCHEMA", "Context", "Ledger", "Trace", "as_schedule", "make_context", "run",
           "run_algorithm"]
