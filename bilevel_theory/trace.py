"""What a run returns: iterates, exact stationarity, the communication/oracle ledger."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

LEDGER_FIELDS = ("rounds", "uplink", "downlink", "grad_calls", "hvp_calls", "jvp_calls",
                 "state_bytes")


@dataclass
class Ledger:
    """Cumulative costs after each outer round, arrays of shape ``(rounds + 1,)``.

    Per independent run (replicate), averaged over replicates when a count is random
    (e.g. a random Neumann truncation).  ``rounds``: communication rounds; ``uplink`` /
    ``downlink``: vectors sent per participating client; ``grad_calls``, ``hvp_calls``,
    ``jvp_calls``: client-oracle evaluations summed over clients; ``state_bytes``: the largest
    per-client memory (bytes of vectors a client holds) seen so far.
    """

    rounds: np.ndarray
    uplink: np.ndarray
    downlink: np.ndarray
    grad_calls: np.ndarray
    hvp_calls: np.ndarray
    jvp_calls: np.ndarray
    state_bytes: np.ndarray

    def totals(self) -> dict[str, float]:
        """Final cumulative values, as plain floats."""
        return {f.name: float(getattr(self, f.name)[-1]) for f in fields(self)}

    def per_round(self, name: str) -> np.ndarray:
        """Increments of one counter in each round, shape ``(rounds,)``."""
        return np.diff(getattr(self, name))


@dataclass
class Trace:
    """A run of one algorithm on one problem, ``R`` replicates at once.

    Attributes:
        x: ``(R, rounds + 1, dim_x)`` outer iterates (host numpy).
        y: ``(R, rounds + 1, dim_y)`` lower-level iterates, or ``None``.
        stationarity: ``(R, rounds + 1)``, ``‖∇Φ(x_k)‖²`` from the closed form.
        inner_error: ``(R, rounds + 1)``, ``‖y_k − y*(x_k)‖²``, or ``None``.
        ledger: cumulative costs (:class:`Ledger`).
        diverged: ``(R,)`` replicates frozen after NaN/inf or blow-up.
        diverged_at: ``(R,)`` round at which each froze (−1 if never).
        extras: algorithm-specific arrays (e.g. estimator outputs), documented per algorithm.
    """

    algorithm: str
    hyperparameters: dict[str, Any]
    x: np.ndarray
    y: np.ndarray | None
    stationarity: np.ndarray
    inner_error: np.ndarray | None
    ledger: Ledger
    diverged: np.ndarray
    diverged_at: np.ndarray
    seed: int
    backend: str
    seconds: float
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def replicates(self) -> int:
        return int(self.x.shape[0])

    @property
    def rounds(self) -> int:
        return int(self.x.shape[1] - 1)

    def distance_to(self, x_star: np.ndarray) -> np.ndarray:
        """``‖x_k − x*‖²``, shape ``(R, rounds + 1)``."""
        return ((self.x - np.asarray(x_star)) ** 2).sum(-1)

    def average_stationarity(self) -> np.ndarray:
        """``(1/K) Σ_{k<K} ‖∇Φ(x_k)‖²`` per replicate (the papers' left-hand side)."""
        return self.stationarity[:, :-1].mean(axis=1)
