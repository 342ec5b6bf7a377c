"""Closed-form federated quadratic problems and their batched stochastic oracles.

Lowest layer of bilevel-theory: imports nothing from ``bilevel_theory``, ``verify`` or
``reports``.
"""

from .backend import BACKENDS, Backend, BackendUnavailable, cupy_available, get_backend
from .bilevel import QuadraticBilevel
from .compositional import QuadraticCompositional
from .minimax import QuadraticMinimax
from .oracle import ClientMean, Oracle, OracleCounter
from .quadratic import ClosedForm, FederatedQuadratic

__all__ = ["BACKENDS", "Backend", "BackendUnavailable", "ClientMean", "ClosedForm", "FederatedQuadratic", "Oracle",
           "OracleCounter", "QuadraticBilevel", "QuadraticCompositional", "QuadraticMinimax",
           "cupy_available", "get_backend"]
