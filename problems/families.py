"""Families of per-client matrices ``{M_i}``, stored so that a million clients fit in memory.

Every family answers batched products for a batch of client indices ``idx`` of shape
``(R, n)`` (replicates × sampled clients) without a Python loop over clients:

* ``mv(idx, v)``: ``M_{idx} v`` with ``v`` broadcastable to ``(R, n, d_in)`` → ``(R, n, d_out)``;
* ``rmv(idx, u)``: ``M_{idx}ᵀ u`` → ``(R, n, d_in)``.

Families: :class:`Shared` (one matrix for all), :class:`Dense` (``(m, d_out, d_in)``, for small
``m``), :class:`EigenScaled` (``U diag(a_i) Uᵀ``: shared eigenbasis, per-client spectrum; ``m·d``
numbers) and :class:`RankOne` (``M₀ + u_i w_iᵀ``; ``m·(d_out + d_in)`` numbers), plus
:class:`Scaled` to compose a sign or a factor.  Arrays are host numpy until ``to(backend)``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np
from array_api_compat import array_namespace

from .backend import Backend

CHUNK = 65_536  # clients per chunk when a host-side statistic scans all clients


def _broadcast(out, idx):
    """``out`` broadcast against the client indices' batch shape (a view, no copy), so a
    shared matrix answers with the same shape as a per-client family."""
    shape = np.broadcast_shapes(tuple(idx.shape), tuple(out.shape[:-1])) + tuple(out.shape[-1:])
    if tuple(out.shape) == shape:
        return out
    return array_namespace(out).broadcast_to(out, shape)


class Family:
    """Common interface; subclasses are frozen dataclasses of arrays."""

    clients: int

    def to(self, backend: Backend) -> Family:
        """The same family with every array moved onto ``backend``."""
        moved = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if isinstance(value, Family):
                moved[f.name] = value.to(backend)
            elif isinstance(value, np.ndarray):
                moved[f.name] = backend.asarray(value)
        return replace(self, **moved)  # type: ignore[type-var]

    @property
    def nbytes(self) -> int:
        """Bytes held by this family's arrays."""
        total = 0
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            total += value.nbytes if hasattr(value, "nbytes") else 0
        return int(total)

    def client_norms(self, start: int, stop: int) -> np.ndarray:
        """Spectral norms (or upper bounds) of ``M_i`` for clients ``start..stop-1`` (host)."""
        return np.linalg.norm(self.dense_range(start, stop), ord=2, axis=(-2, -1))

    def max_norm(self) -> float:
        """``max_i ‖M_i‖₂`` (exact for dense families, a bound for structured ones)."""
        return max(float(self.client_norms(s, min(s + CHUNK, self.clients)).max())
                   for s in range(0, self.clients, CHUNK))

    def dense(self, i: int) -> np.ndarray:
        """Client ``i``'s matrix as a dense host array."""
        return self.dense_range(i, i + 1)[0]


@dataclass(frozen=True)
class Shared(Family):
    """The same matrix ``M`` for every client."""

    M: Any
    clients: int

    def mv(self, idx, v):
        out = v @ self.M.T
        return _broadcast(out, idx)

    def rmv(self, idx, u):
        out = u @ self.M
        return _broadcast(out, idx)

    def mean(self) -> np.ndarray:
        return np.asarray(self.M)

    def dense_range(self, start, stop):
        return np.broadcast_to(np.asarray(self.M), (stop - start, *np.shape(self.M)))

    def max_norm(self) -> float:
        return float(np.linalg.norm(np.asarray(self.M), 2))


@dataclass(frozen=True)
class Dense(Family):
    """One dense matrix per client, ``M`` of shape ``(m, d_out, d_in)``."""

    M: Any

    @property
    def clients(self) -> int:  # type: ignore[override]
        return self.M.shape[0]

    def mv(self, idx, v):
        return (self.M.take(idx, axis=0) @ v[..., None])[..., 0]

    def rmv(self, idx, u):
        return (u[..., None, :] @ self.M.take(idx, axis=0))[..., 0, :]

    def mean(self) -> np.ndarray:
        return np.asarray(self.M).mean(axis=0)

    def dense_range(self, start, stop):
        return np.asarray(self.M[start:stop])


@dataclass(frozen=True)
class EigenScaled(Family):
    """Symmetric ``M_i = U diag(a_i) Uᵀ``: shared orthogonal ``U``, per-client spectrum ``a``."""

    U: Any
    a: Any  # (m, d)

    @property
    def clients(self) -> int:  # type: ignore[override]
        return self.a.shape[0]

    def mv(self, idx, v):
        # ``take`` is one gather kernel (fancy indexing broadcasts the index first); the
        # gathered spectrum is scaled in place, so one (R, n, d) temporary fewer.
        w, vu = self.a.take(idx, axis=0), v @ self.U
        if np.broadcast_shapes(w.shape, vu.shape) == w.shape:
            w *= vu
        else:
            w = w * vu
        return w @ self.U.T

    rmv = mv  # symmetric

    def mean(self) -> np.ndarray:
        U = np.asarray(self.U)
        return (U * np.asarray(self.a).mean(axis=0)) @ U.T

    def dense_range(self, start, stop):
        U = np.asarray(self.U)
        return np.einsum("ij,mj,kj->mik", U, np.asarray(self.a[start:stop]), U)

    def client_norms(self, start, stop):
        return np.abs(np.asarray(self.a[start:stop])).max(axis=1)

    def eigenvalue_range(self) -> tuple[float, float]:
        a = np.asarray(self.a)
        return float(a.min()), float(a.max())


@dataclass(frozen=True)
class RankOne(Family):
    """``M_i = M₀ + u_i w_iᵀ`` with ``u`` of shape ``(m, d_out)`` and ``w`` of ``(m, d_in)``."""

    M0: Any
    u: Any
    w: Any

    @property
    def clients(self) -> int:  # type: ignore[override]
        return self.u.shape[0]

    def mv(self, idx, v):
        return v @ self.M0.T + self.u.take(idx, axis=0) * _dot(self.w.take(idx, axis=0), v)

    def rmv(self, idx, u):
        return u @ self.M0 + self.w.take(idx, axis=0) * _dot(self.u.take(idx, axis=0), u)

    def mean(self) -> np.ndarray:
        u, w = np.asarray(self.u), np.asarray(self.w)
        return np.asarray(self.M0) + u.T @ w / u.shape[0]

    def dense_range(self, start, stop):
        u, w = np.asarray(self.u[start:stop]), np.asarray(self.w[start:stop])
        return np.asarray(self.M0) + u[:, :, None] * w[:, None, :]

    def client_norms(self, start, stop):
        u, w = np.asarray(self.u[start:stop]), np.asarray(self.w[start:stop])
        return np.linalg.norm(np.asarray(self.M0), 2) + np.linalg.norm(u, axis=1) * np.linalg.norm(
            w, axis=1)


def _dot(a, b):
    """``Σ_k a_k b_k`` over the last axis, kept as a length-1 axis.  ``vecdot`` is a single
    kernel; ``(a * b).sum(-1)`` reduces a short contiguous axis row by row (≈ 4× slower)."""
    xp = array_namespace(a, b)
    return xp.vecdot(a, b)[..., None]


@dataclass(frozen=True)
class Scaled(Family):
    """``s · base``: composes a sign or factor onto any family (e.g. ``S_i = −A_i``)."""

    base: Family
    s: float

    @property
    def clients(self) -> int:  # type: ignore[override]
        return self.base.clients

    def mv(self, idx, v):
        return self.s * self.base.mv(idx, v)

    def rmv(self, idx, u):
        return self.s * self.base.rmv(idx, u)

    def mean(self) -> np.ndarray:
        return self.s * self.base.mean()

    def dense_range(self, start, stop):
        return self.s * self.base.dense_range(start, stop)

    def client_norms(self, start, stop):
        return abs(self.s) * self.base.client_norms(start, stop)

    @property
    def nbytes(self) -> int:
        return 0  # shares the base family's storage


@dataclass(frozen=True)
class Transposed(Family):
    """``M_iᵀ`` of a base family, without copying (e.g. the minimax ``R_i = B_iᵀ``)."""

    base: Family

    @property
    def clients(self) -> int:  # type: ignore[override]
        return self.base.clients

    def mv(self, idx, v):
        return self.base.rmv(idx, v)

    def rmv(self, idx, u):
        return self.base.mv(idx, u)

    def mean(self) -> np.ndarray:
        return self.base.mean().T

    def dense_range(self, start, stop):
        return np.swapaxes(self.base.dense_range(start, stop), -1, -2)

    def client_norms(self, start, stop):
        return self.base.client_norms(start, stop)

    @property
    def nbytes(self) -> int:
        return 0  # shares the base family's storage
