"""Closed-form self-check of an instance (printed by ``bilevel-theory problem``).

Each check compares a closed form with a quantity computed another way:

* ``fd_hypergradient``: central finite differences of ``phi`` against ``hypergradient``
  (``Φ`` is quadratic, so the only error is rounding: ``≈ ε_mach·|Φ|/h``);
* ``grad_y_g_at_y_star``: ``‖∇_y g(x, y*(x))‖`` with ``∇_y g`` the mean of the exact client
  gradients (no closed form), relative to ``‖∇_y g(x, 0)‖``;
* ``surrogate_at_y_star``: ``surrogate_hypergradient(x, y*(x))`` against ``hypergradient(x)``;
* ``x_star_stationary``: ``‖∇Φ(x*)‖`` relative to ``‖∇Φ(0)‖`` (when ``x*`` exists).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .quadratic import FederatedQuadratic
from .validation import check_int

FD_TOL = 1e-6  # float64 central differences on a quadratic: rounding only
EXACT_TOL = 1e-10  # identities that hold exactly up to a few rounding errors


@dataclass(frozen=True)
class Check:
    """One self-check: what was compared, the relative error, and the threshold."""

    name: str
    description: str
    value: float
    tolerance: float

    @property
    def ok(self) -> bool:
        return bool(np.isfinite(self.value) and self.value <= self.tolerance)


def relative(a: np.ndarray, b: np.ndarray, scale: float | None = None) -> float:
    """``‖a − b‖ / scale`` with ``scale = ‖b‖`` by default (0 when both vanish)."""
    err = float(np.linalg.norm(np.asarray(a) - np.asarray(b)))
    scale = float(np.linalg.norm(np.asarray(b))) if scale is None else scale
    return err / scale if scale > 0 else (0.0 if err == 0 else float("inf"))


def fd_gradient(fun, x: np.ndarray, step: float) -> np.ndarray:
    """Central finite differences of a batched scalar function ``fun`` at ``x``."""
    e = step * np.eye(x.shape[0])
    return (np.asarray(fun(x + e)) - np.asarray(fun(x - e))) / (2 * step)


def self_check(problem: FederatedQuadratic, seed: int = 0) -> list[Check]:
    """Run the checks of the module docstring at a seeded point ``x`` with ``‖x‖ = 1``."""
    if not isinstance(problem, FederatedQuadratic):
        raise TypeError(f"`problem` must be a problem instance, got {type(problem).__name__}")
    seed = check_int("seed", seed, minimum=0)
    p = problem.host
    x = np.random.default_rng(seed).standard_normal(p.dim_x)
    x /= np.linalg.norm(x)
    hg = p.hypergradient(x)
    ys = p.y_star(x)
    checks = [
        Check("fd_hypergradient", "central differences of phi vs hypergradient (rel.)",
              relative(fd_gradient(p.phi, x, 1e-3), hg), FD_TOL),
        Check("grad_y_g_at_y_star", "‖∇_y g(x, y*(x))‖ / ‖∇_y g(x, 0)‖, mean of client grads",
              relative(p.grad_g(x, ys)[1], 0.0, float(np.linalg.norm(
                  p.grad_g(x, np.zeros(p.dim_y))[1]))), EXACT_TOL),
        Check("surrogate_at_y_star", "surrogate_hypergradient(x, y*(x)) vs hypergradient (rel.)",
              relative(p.surrogate_hypergradient(x, ys), hg), EXACT_TOL),
    ]
    if p.x_star is not None:
        checks.append(Check("x_star_stationary", "‖∇Φ(x*)‖ / ‖∇Φ(0)‖",
                            relative(p.hypergradient(p.x_star), 0.0, float(np.linalg.norm(
                                p.hypergradient(np.zeros(p.dim_x))))), EXACT_TOL))
    return checks
