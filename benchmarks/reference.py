"""A straightforward per-client Python loop of one FedMBO round: the speedup baseline.

This is the only place where clients and replicates are looped over in Python:
the loop computes the same round as ``bilevel_theory.fedmbo.FedMBO.step`` (``T`` minibatch-SGD
inner steps, then PHE and the outer step) client by client, with each client's dense
matrices, and is tested to agree with the vectorized implementation
(``tests/test_benchmarks.py``).

Same random draws: :class:`RecordingGenerator` wraps the vectorized run's generator and keeps
every array it hands out (client indices, truncations, noise) on a :class:`Tape`; the loop
replays the tape in the same order.  Replay makes the loop's timing slightly optimistic (it
draws nothing), so the measured speedup is conservative.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from bilevel_theory import ALGORITHMS, make_context


class Tape:
    """Arrays drawn by a generator, in call order, each tagged with the method that drew it."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, np.ndarray]] = []
        self.position = 0

    def append(self, method: str, value: Any) -> None:
        self.entries.append((method, np.array(value)))

    def take(self, method: str, shape: tuple[int, ...]) -> np.ndarray:
        """The next recorded array, checked to come from ``method`` with ``shape``."""
        if self.position >= len(self.entries):
            raise RuntimeError(f"tape exhausted: the loop wants {method}{shape}")
        got, value = self.entries[self.position]
        if got != method or value.shape != tuple(shape):
            raise RuntimeError(f"tape entry {self.position} is {got}{value.shape}, "
                               f"the loop wants {method}{tuple(shape)}: the draw order changed")
        self.position += 1
        return value

    def done(self) -> bool:
        return self.position == len(self.entries)


class RecordingGenerator:
    """Forwards ``integers``, ``random``, ``standard_normal``, ``binomial`` and ``bytes`` to a
    generator and records each result on ``tape`` (host copies; numpy and CuPy generators)."""

    def __init__(self, rng: Any, tape: Tape, to_numpy=np.asarray):
        self._rng, self.tape, self._to_numpy = rng, tape, to_numpy

    def _record(self, method: str, value: Any) -> Any:
        self.tape.append(method, self._to_numpy(value))
        return value

    def integers(self, *args, **kwargs):
        return self._record("integers", self._rng.integers(*args, **kwargs))

    def random(self, *args, **kwargs):
        return self._record("random", self._rng.random(*args, **kwargs))

    def standard_normal(self, *args, **kwargs):
        return self._record("standard_normal", self._rng.standard_normal(*args, **kwargs))

    def binomial(self, *args, **kwargs):
        return self._record("binomial", self._rng.binomial(*args, **kwargs))

    def bytes(self, length):
        value = self._rng.bytes(length)
        self.tape.append("bytes", np.frombuffer(value, dtype=np.uint8))
        return value


def standard_draws(tape: Tape, shape: tuple[int, ...], distribution: str) -> np.ndarray:
    """The next recorded standardized noise draws of ``shape``, converted as the oracle does
    for its ``noise_distribution`` (Gaussian: as drawn; uniform: ``√12 (U − ½)``; Rademacher:
    ``1 − 2·bit`` from raw bytes)."""
    if distribution == "gaussian":
        return tape.take("standard_normal", shape)
    if distribution == "uniform":
        return (tape.take("random", shape) - 0.5) * (2.0 * math.sqrt(3.0))
    count = math.prod(shape)
    raw = tape.take("bytes", ((count + 7) // 8,))
    return 1.0 - 2.0 * np.unpackbits(raw, count=count).reshape(shape)


def dense_clients(family, ids: np.ndarray, d_in: int) -> np.ndarray:
    """Dense matrices ``M_i`` (``(k, d_out, d_in)``) of the clients ``ids`` (1-D), from the
    family's public batched product ``mv`` applied to the identity (setup, not timed)."""
    ids = np.asarray(ids)
    cols = family.mv(ids[:, None], np.eye(d_in))  # [i, j, :] = M_i e_j
    cols = np.broadcast_to(cols, (ids.size, d_in, cols.shape[-1]))
    return np.ascontiguousarray(np.swapaxes(cols, -1, -2))


@dataclass
class ReferenceData:
    """Dense per-client arrays of the clients a round touches; ``slot[i]`` is client ``i``'s
    row (``-1`` for clients not stored)."""

    slot: np.ndarray
    A: np.ndarray  # (k, dy, dy)
    B: np.ndarray  # (k, dy, dx)
    R: np.ndarray  # (k, dx, dy)
    S: np.ndarray  # (k, dy, dy)
    c: np.ndarray  # (k, dy)
    p: np.ndarray  # (k, dx)
    q: np.ndarray  # (k, dy)
    P: np.ndarray  # (dx, dx), shared

    @classmethod
    def build(cls, problem, clients: np.ndarray | None = None) -> ReferenceData:
        """Dense arrays of ``clients`` (all clients when ``None``) of a host ``problem``."""
        h = problem.host
        ids = np.arange(h.clients) if clients is None else np.unique(np.asarray(clients))
        slot = np.full(h.clients, -1, dtype=np.int64)
        slot[ids] = np.arange(ids.size)
        dx, dy = h.dim_x, h.dim_y
        return cls(slot=slot, A=dense_clients(h.A, ids, dy), B=dense_clients(h.B, ids, dx),
                   R=dense_clients(h.R, ids, dy), S=dense_clients(h.S, ids, dy),
                   c=np.asarray(h.c)[ids], p=np.asarray(h.p)[ids], q=np.asarray(h.q)[ids],
                   P=np.asarray(h.P))


def record_fedmbo_round(problem, replicates: int, seed: int, hp: dict) -> dict[str, Any]:
    """One vectorized FedMBO round (building blocks, numpy) with every draw recorded.

    Returns the starting point, the new ``x, y``, the resolved hyperparameters and the tape.
    """
    algorithm = ALGORITHMS["fedmbo"](problem, **hp)
    ctx = make_context(problem, replicates, seed, "numpy")
    tape = Tape()
    ctx.oracle.rng = RecordingGenerator(ctx.oracle.rng, tape)
    state = algorithm.init(ctx)
    new = algorithm.step(ctx, state, 0)
    return dict(x0=np.array(state["x"]), y0=np.array(state["y"]), x=np.array(new["x"]),
                y=np.array(new["y"]), hp=dict(algorithm.hp), tape=tape,
                ledger=ctx.snapshot())


def touched_clients(tape: Tape) -> np.ndarray:
    """Every client index on a FedMBO tape (the ``integers`` entries that are samples)."""
    return np.unique(np.concatenate([v.ravel() for k, v in tape.entries if k == "integers"]))


def fedmbo_round_reference(problem, data: ReferenceData, tape: Tape, x0: np.ndarray,
                           y0: np.ndarray, hp: dict,
                           replicates: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One FedMBO round, looping over replicates, steps and clients in Python.

    ``x0 (R, dx)``, ``y0 (R, dy)``; ``hp`` the resolved hyperparameters of the vectorized run
    (constant step sizes); the tape is replayed in the vectorized draw order.  ``replicates``
    limits the loop to the first replicates (for timing a subset); returns ``(x, y)`` of the
    replicates computed.
    """
    T, N, n = hp["inner_steps"], hp["neumann_steps"], hp["sampled_clients"]
    S_samples, scale = hp["samples"], float(hp["neumann_scale"])
    alpha, beta = _constant(hp["outer_step"]), _constant(hp["inner_step"])
    if not hp["replace"]:
        raise ValueError("the reference replays sampling with replacement only")
    R_all, dx = x0.shape
    dy = y0.shape[1]
    sg, sh = problem.grad_noise, problem.hessian_noise
    m = problem.clients
    dist = problem.spec.get("noise_distribution", "gaussian")

    def draws(shape):
        return standard_draws(tape, shape, dist)

    # Read the tape in the vectorized order: T × (indices, noise), then PHE.  The inner
    # steps draw the clients' mean noise directly when it is Gaussian (one vector per
    # replicate), per client otherwise.  PHE's hops run on the chains sorted longest first
    # and draw noise for the first `width` of them only: position[r, i] is chain i's place.
    inner = []
    for _ in range(T):
        idx = tape.take("integers", (R_all, n))
        noise = None
        if sg > 0 and dist == "rademacher":  # a mean of n signs: (2B − n)/n, B binomial
            noise = (2.0 * tape.take("binomial", (R_all, dy)) - n) * (math.sqrt(n) / n)
        elif sg > 0:
            noise = draws((R_all, dy) if dist == "gaussian" else (R_all, n, dy))
        inner.append((idx, noise))
    trunc = tape.take("integers", (R_all, n))
    position = np.argsort(np.argsort(-trunc, axis=1, kind="stable"), axis=1, kind="stable")
    C0 = tape.take("integers", (R_all, n))
    nx = draws((R_all, n, dx)) if sg > 0 else None
    ny = draws((R_all, n, dy)) if sg > 0 else None
    hops = []
    for level in range(1, N):
        Cl = tape.take("integers", (R_all, n))
        width = int((trunc >= level).sum(axis=1).max())
        hn = draws((R_all, width, dy)) if sh > 0 and width > 0 else None
        hops.append((Cl, hn))
    Cend = tape.take("integers", (R_all, n))
    jn = draws((R_all, n, dx)) if sh > 0 else None
    for entry in (trunc, C0, Cend, *(i for i, _ in inner), *(c for c, _ in hops)):
        if entry.size and (entry.min() < 0 or entry.max() >= max(m, N)):
            raise RuntimeError("tape indices out of range")

    slot, A, B, Rm, Sm = data.slot, data.A, data.B, data.R, data.S
    cv, pv, qv, P = data.c, data.p, data.q, data.P
    grad_scale = sg / math.sqrt(dy * S_samples)
    gx_scale, gy_scale = sg / math.sqrt(dx), sg / math.sqrt(dy)
    hvp_scale, jvp_scale = sh / math.sqrt(dy), sh / math.sqrt(dx)
    count = R_all if replicates is None else min(replicates, R_all)
    xs, ys = np.empty((count, dx)), np.empty((count, dy))
    for r in range(count):
        x, y = x0[r].copy(), y0[r].copy()
        for idx, noise in inner:  # minibatch SGD on y
            G = np.zeros(dy)
            for i in range(n):
                s = slot[idx[r, i]]
                g = A[s] @ y - B[s] @ x - cv[s]
                if noise is not None and noise.ndim == 3:
                    g = g + grad_scale * noise[r, i]
                G += g
            G = G / n
            if noise is not None and noise.ndim == 2:  # the clients' mean noise, drawn once
                G = G + (grad_scale / math.sqrt(n)) * noise[r]
            y = y - beta * G
        Px = P.T @ x  # x @ P in the vectorized code
        H = np.zeros(dx)
        for i in range(n):  # PHE: one chain per sampled client
            s = slot[C0[r, i]]
            d = Px + Rm[s] @ y + pv[s]
            gy = Rm[s].T @ x + Sm[s] @ y + qv[s]
            if nx is not None:
                d = d + gx_scale * nx[r, i]
                gy = gy + gy_scale * ny[r, i]
            v = (N / scale) * gy
            for level, (Cl, hn) in enumerate(hops, start=1):
                if trunc[r, i] >= level:
                    hv = A[slot[Cl[r, i]]] @ v
                    if hn is not None:
                        hv = hv + hvp_scale * math.sqrt(v @ v) * hn[r, position[r, i]]
                    v = v - hv / scale
            jv = -(B[slot[Cend[r, i]]].T @ v)
            if jn is not None:
                jv = jv + jvp_scale * math.sqrt(v @ v) * jn[r, i]
            H += d - jv
        xs[r] = x - alpha * (H / n)
        ys[r] = y
    return xs, ys


def _constant(step) -> float:
    if callable(step):
        return float(step(0))
    return float(step)
