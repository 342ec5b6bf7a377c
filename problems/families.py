"""Families of per-client matrices ``{M_i}``, stored so that a million clients fit in memory.

Every family answers batched products for a batch of client indices ``idx`` of shape
``(R, n)`` (replicates × sampled clients) without a Python loop over clients:

* ``mv(idx, v)``: ``M_{idx} v`` with ``v`` broadcastable to ``(R, n, d_in)`` → ``(R, n, d_out)``;
* ``rmv(idx, u)``: ``M_{idx}ᵀ u`` → ``(R, n, d_in)``;
* ``mean_mv(idx, v)`` / ``mean_rmv(idx, u)``: the mean over the client axis of the same
  products → ``(R, d_out)`` / ``(R, d_in)``; with one vector per replicate (``(R, 1, d)``) the
  structured families average the gathered client data first and make one product, never an
  ``(R, n, d)`` product array (what an averaged oracle call needs).

On host numpy the products run fused over blocks of client-rows (:func:`_blocked`): the
gather of each client's data, the products and the scaling of one block stay in cache and no
``(R, n, d)`` temporary is made, and BLAS runs on one thread (:data:`single_thread_blas`: the
products are too small to share between threads, and on a busy machine sharing made them up
to 40× slower).  CuPy arrays take the plain vectorized expressions.

Families: :class:`Shared` (one matrix for all), :class:`Dense` (``(m, d_out, d_in)``, for small
``m``), :class:`EigenScaled` (``U diag(a_i) Uᵀ``: shared eigenbasis, per-client spectrum; ``m·d``
numbers) and :class:`RankOne` (``M₀ + u_i w_iᵀ``; ``m·(d_out + d_in)`` numbers), plus
:class:`Scaled` to compose a sign or a factor.  Arrays are host numpy until ``to(backend)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np
from array_api_compat import array_namespace

from .backend import Backend, mean_over_clients, single_thread_blas

CHUNK = 65_536  # clients per chunk when a host-side statistic scans all clients
#: float64 numbers per scratch buffer of one block of the fused host products (320 KiB: in L2);
#: a block holds ``BLOCK_ELEMENTS // (numbers per row of its largest buffer)`` client-rows
BLOCK_ELEMENTS = 40_960


def _host(*arrays) -> bool:
    """Whether every array is host numpy (the fused kernels' path)."""
    for a in arrays:  # a plain loop: this runs on every product
        if not isinstance(a, np.ndarray):
            return False
    return True


def _blocked(idx, v, d_out: int, kernel, scratch=(), rows: int | None = None) -> np.ndarray:
    """``kernel(i, x, o, *buffers)`` over blocks of client-rows: ``i`` the block's client
    indices (1-D), ``x`` its vectors ``(k, d_in)``, ``o`` the output rows ``(k, d_out)`` to
    fill, ``buffers`` preallocated scratch arrays of shapes ``(k, *tail)`` for each ``tail`` in
    ``scratch`` (allocated once per call, reused by every block).  ``idx`` and ``v[..., :-1]``
    broadcast to the batch shape; returns ``batch + (d_out,)``.  ``rows``: the number of
    clients, to check the indices once (the kernels then gather with :func:`_gather`).

    A batch that fits in one block (small ``n``) runs the kernel once, without the blocking
    set-up; the result is the same either way."""
    d_in = v.shape[-1]
    batch = _batch_shape(tuple(idx.shape), tuple(v.shape[:-1]))
    if tuple(idx.shape) != batch:
        idx = np.broadcast_to(idx, batch)
    if tuple(v.shape[:-1]) != batch:  # one copy, as reshaping the broadcast view would make
        full = np.empty(batch + (d_in,), dtype=v.dtype)
        full[...] = v
        v = full
    out = np.empty(batch + (d_out,), dtype=np.result_type(v, np.float64))
    flat_i, flat_v, flat_o = idx.reshape(-1), v.reshape(-1, d_in), out.reshape(-1, d_out)
    size = flat_i.size
    if size == 0:
        return out
    if rows is not None:
        _check_rows(flat_i, rows)
    step = max(16, BLOCK_ELEMENTS // max(d_in, d_out, 1, *(math.prod(t) for t in scratch)))
    with single_thread_blas:
        if size <= step:  # one block: no blocking set-up
            kernel(flat_i, flat_v, flat_o, *(np.empty((size, *t)) for t in scratch))
            return out
        buffers = [np.empty((step, *t)) for t in scratch]
        for s in range(0, size, step):
            e = min(s + step, size)
            k = e - s
            kernel(flat_i[s:e], flat_v[s:e], flat_o[s:e], *(b[:k] for b in buffers))
    return out


def _batch_shape(a: tuple, b: tuple) -> tuple:
    """``np.broadcast_shapes(a, b)``, without its set-up in the common cases (``b`` equal to
    ``a`` or ``a`` with some axes of length 1)."""
    if a == b or (len(a) == len(b) and all(y in (x, 1) for x, y in zip(a, b))):
        return a
    return np.broadcast_shapes(a, b)


def _check_rows(flat_i, rows: int) -> None:
    """Client indices in ``[−rows, rows)`` (numpy's indexing range), else ``IndexError``."""
    lo, hi = int(flat_i.min()), int(flat_i.max())
    if lo < -rows or hi >= rows:
        raise IndexError(f"client index {hi if hi >= rows else lo} is out of bounds for "
                         f"{rows} clients")


def _gather(table, i, out) -> None:
    """``out[:] = table[i]`` along axis 0; ``i`` already checked (:func:`_check_rows`), so
    the gather writes straight into ``out`` (``mode="raise"`` would buffer it)."""
    table.take(i, axis=0, out=out, mode="wrap")


def _shared_rows(idx, v) -> bool:
    """``v`` is one vector per leading batch entry, shared by the ``n`` clients of the last
    batch axis (``v`` of shape ``(R, 1, d)`` against ``idx (R, n)``, ``n > 1``)."""
    return (v.ndim == idx.ndim + 1 and idx.ndim >= 1 and v.shape[-2] == 1
            and idx.shape[-1] > 1
            and np.broadcast_shapes(idx.shape, v.shape[:-1]) == tuple(idx.shape))


def mean_of_rows(table, idx):
    """``mean_j table[idx[..., j]]`` → ``idx.shape[:-1] + table.shape[1:]``: the mean of the
    sampled clients' rows.  On host numpy with at most as many clients as samples
    (``m ≤ n``) it weights the whole table by the sample frequencies (one ``bincount`` and
    one product, ``O(n + m·d)``) instead of gathering ``n`` rows."""
    freq = _frequencies(table, idx)
    if freq is None:
        return mean_over_clients(table.take(idx, axis=0))
    with single_thread_blas:
        return freq @ table


def weighted_mean(table, weights=None) -> np.ndarray:
    """``Σ_i w_i table[i]`` over the client axis (host); ``weights=None``: the plain mean."""
    table = np.asarray(table)
    return table.mean(axis=0) if weights is None else weights @ table


def _frequencies(table, idx):
    """Sample frequencies ``(…, m)`` of the clients in ``idx (…, n)`` (host numpy, ``m ≤ n``),
    else ``None``."""
    m, n = table.shape[0], idx.shape[-1] if idx.ndim else 1
    if not (_host(table, idx) and idx.ndim >= 1 and table.ndim == 2 and m <= n):
        return None
    lead = idx.shape[:-1]
    rows = math.prod(lead)
    flat = idx.reshape(rows, n) + (np.arange(rows) * m)[:, None]
    counts = np.bincount(flat.reshape(-1), minlength=rows * m)
    return (counts * (1.0 / n)).reshape(*lead, m)


def _broadcast(out, idx):
    """``out`` broadcast against the client indices' batch shape (a view, no copy), so a
    shared matrix answers with the same shape as a per-client family."""
    shape = np.broadcast_shapes(tuple(idx.shape), tuple(out.shape[:-1])) + tuple(out.shape[-1:])
    if tuple(out.shape) == shape:
        return out
    return array_namespace(out).broadcast_to(out, shape)


class Family:
    """Common interface; subclasses are frozen dataclasses of arrays.  ``mean(weights=None)``
    is ``Σ_i w_i M_i`` as a dense host matrix (``weights`` of shape ``(m,)`` summing to 1;
    ``None``: the plain mean over the clients)."""

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

    def mean_mv(self, idx, v):
        """``(1/n) Σ_j M_{idx[..., j]} v_j``, the mean over the client axis of :meth:`mv`."""
        return mean_over_clients(self.mv(idx, v))

    def mean_rmv(self, idx, u):
        """``(1/n) Σ_j M_{idx[..., j]}ᵀ u_j``, the mean over the client axis of :meth:`rmv`."""
        return mean_over_clients(self.rmv(idx, u))

    def dense(self, i: int) -> np.ndarray:
        """Client ``i``'s matrix as a dense host array."""
        return self.dense_range(i, i + 1)[0]

    def tiled(self, copies: int) -> Family:
        """``copies`` copies of the clients in order (client ``i + k·m`` is client ``i``), host
        arrays; the per-client arrays are repeated, the shared ones kept."""
        raise NotImplementedError(f"a {type(self).__name__} family cannot be tiled")


@dataclass(frozen=True)
class Shared(Family):
    """The same matrix ``M`` for every client."""

    M: Any
    clients: int

    def tiled(self, copies: int) -> Shared:
        return replace(self, clients=self.clients * copies)

    def mv(self, idx, v):
        if _host(self.M, v):
            with single_thread_blas:
                return _broadcast(np.matmul(v, np.ascontiguousarray(self.M.T)), idx)
        out = v @ self.M.T
        return _broadcast(out, idx)

    def rmv(self, idx, u):
        if _host(self.M, u):
            with single_thread_blas:
                return _broadcast(np.matmul(u, self.M), idx)
        out = u @ self.M
        return _broadcast(out, idx)

    def mean_mv(self, idx, v):
        if v.ndim < 2 or v.shape[-2] != 1:
            return super().mean_mv(idx, v)
        with single_thread_blas:  # the same product for every client
            return v[..., 0, :] @ self.M.T

    def mean_rmv(self, idx, u):
        if u.ndim < 2 or u.shape[-2] != 1:
            return super().mean_rmv(idx, u)
        with single_thread_blas:
            return u[..., 0, :] @ self.M

    def mean(self, weights=None) -> np.ndarray:
        return np.asarray(self.M)  # weights sum to 1

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

    def _small(self, idx) -> bool:
        """The gathered matrices fit in one block: the plain expression (the same numbers as
        the blocked kernel, per client the same product) without the blocking set-up."""
        return idx.size * self.M.shape[1] * self.M.shape[2] <= BLOCK_ELEMENTS

    def _in_order(self, idx, v) -> bool:
        """``idx`` is every client once, in order, in each replicate (a broadcast
        ``arange(m)``: Gao's devices, full participation) and ``v`` one vector per entry: the
        product is then ``m`` matrix products over the replicates' axis, one BLAS call per
        client instead of one tiny product per (replicate, client)."""
        M = self.M
        return (idx.ndim == 2 and idx.strides[0] == 0 and idx.shape[1] == M.shape[0]
                and v.shape[:-1] == idx.shape and bool((idx[0] == np.arange(M.shape[0])).all()))

    def tiled(self, copies: int) -> Dense:
        return replace(self, M=np.tile(np.asarray(self.M), (copies, 1, 1)))

    def mv(self, idx, v):
        M = self.M
        if _host(M, v, idx) and self._in_order(idx, v):
            with single_thread_blas:
                return np.matmul(v.swapaxes(0, 1), M.swapaxes(1, 2)).swapaxes(0, 1)
        if _host(M, v, idx) and not self._small(idx):
            def kernel(i, x, o, Mi):  # gathered (k, d_out, d_in) block stays in cache
                _gather(M, i, Mi)
                np.matmul(Mi, x[:, :, None], out=o[:, :, None])
            return _blocked(idx, v, M.shape[1], kernel, (M.shape[1:],), M.shape[0])
        return (M.take(idx, axis=0) @ v[..., None])[..., 0]

    def rmv(self, idx, u):
        M = self.M
        if _host(M, u, idx) and self._in_order(idx, u):
            with single_thread_blas:
                return np.matmul(u.swapaxes(0, 1), M).swapaxes(0, 1)
        if _host(M, u, idx) and not self._small(idx):
            def kernel(i, x, o, Mi):
                _gather(M, i, Mi)
                np.matmul(x[:, None, :], Mi, out=o[:, None, :])
            return _blocked(idx, u, M.shape[2], kernel, (M.shape[1:],), M.shape[0])
        return (u[..., None, :] @ M.take(idx, axis=0))[..., 0, :]

    def mean(self, weights=None) -> np.ndarray:
        M = np.asarray(self.M)
        return M.mean(axis=0) if weights is None else np.tensordot(weights, M, axes=1)

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

    def tiled(self, copies: int) -> EigenScaled:
        return replace(self, a=np.tile(np.asarray(self.a), (copies, 1)))

    def mv(self, idx, v):
        if _host(self.U, self.a, v, idx):
            return self._host_mv(idx, v)
        # ``take`` is one gather kernel (fancy indexing broadcasts the index first); the
        # gathered spectrum is scaled in place, so one (R, n, d) temporary fewer.
        w, vu = self.a.take(idx, axis=0), v @ self.U
        if np.broadcast_shapes(w.shape, vu.shape) == w.shape:
            w *= vu
        else:
            w = w * vu
        return w @ self.U.T

    def _host_mv(self, idx, v):
        """``U (a_i ∘ (Uᵀ v))`` fused per block of rows; a vector shared by the clients of a
        replicate folds into one ``(d, d)`` matrix per replicate, ``a_i @ (diag(Uᵀv) Uᵀ)``."""
        U, a = self.U, self.a
        UT = np.ascontiguousarray(U.T)
        if _shared_rows(idx, v):
            with single_thread_blas:
                W = np.swapaxes(np.matmul(v, U), -1, -2) * UT  # (..., d, d)
                return np.matmul(a.take(idx, axis=0), W)

        def kernel(i, x, o, w, g):
            np.matmul(x, U, out=w)
            _gather(a, i, g)
            np.multiply(w, g, out=w)
            np.matmul(w, UT, out=o)
        d = U.shape[0]
        return _blocked(idx, v, d, kernel, ((d,), (d,)), a.shape[0])

    rmv = mv  # symmetric

    def mean_mv(self, idx, v):
        """With a vector per replicate: ``U (ā ∘ (Uᵀ v))``, ``ā`` the clients' mean spectrum."""
        if not _shared_rows(idx, v):
            return super().mean_mv(idx, v)
        abar = mean_of_rows(self.a, idx)  # (R, d)
        with single_thread_blas:
            return (abar * (v[..., 0, :] @ self.U)) @ self.U.T

    mean_rmv = mean_mv

    def mean(self, weights=None) -> np.ndarray:
        U = np.asarray(self.U)
        return (U * weighted_mean(self.a, weights)) @ U.T

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

    def tiled(self, copies: int) -> RankOne:
        return replace(self, u=np.tile(np.asarray(self.u), (copies, 1)),
                       w=np.tile(np.asarray(self.w), (copies, 1)))

    def mv(self, idx, v):
        if _host(self.M0, v, idx):
            return _rank_one(np.ascontiguousarray(self.M0.T), self.u, self.w, idx, v)
        return v @ self.M0.T + self.u.take(idx, axis=0) * _dot(self.w.take(idx, axis=0), v)

    def rmv(self, idx, u):
        if _host(self.M0, u, idx):
            return _rank_one(self.M0, self.w, self.u, idx, u)
        return u @ self.M0 + self.w.take(idx, axis=0) * _dot(self.u.take(idx, axis=0), u)

    def mean_mv(self, idx, v):
        """With a vector per replicate: ``M₀v + (1/n) Σ_j u_j (w_j · v)``."""
        if not _shared_rows(idx, v):
            return super().mean_mv(idx, v)
        return _rank_one_mean(self.M0.T, self.u, self.w, idx, v)

    def mean_rmv(self, idx, u):
        if not _shared_rows(idx, u):
            return super().mean_rmv(idx, u)
        return _rank_one_mean(self.M0, self.w, self.u, idx, u)

    def mean(self, weights=None) -> np.ndarray:
        u, w = np.asarray(self.u), np.asarray(self.w)
        if weights is None:
            return np.asarray(self.M0) + u.T @ w / u.shape[0]
        return np.asarray(self.M0) + (u.T * weights) @ w

    def dense_range(self, start, stop):
        u, w = np.asarray(self.u[start:stop]), np.asarray(self.w[start:stop])
        return np.asarray(self.M0) + u[:, :, None] * w[:, None, :]

    def client_norms(self, start, stop):
        u, w = np.asarray(self.u[start:stop]), np.asarray(self.w[start:stop])
        return np.linalg.norm(np.asarray(self.M0), 2) + np.linalg.norm(u, axis=1) * np.linalg.norm(
            w, axis=1)


def _rank_one(M0T, left, right, idx, v):
    """``v M0T + left_i (right_i · v)`` on host, fused per block of rows (``RankOne.mv`` with
    ``M0T = M0ᵀ, left = u, right = w``; ``rmv`` with ``M0, w, u``)."""
    if _shared_rows(idx, v):
        with single_thread_blas:
            base = np.matmul(v, M0T)  # (..., 1, d_out)
            coef = np.matmul(right.take(idx, axis=0), np.swapaxes(v, -1, -2))  # (..., n, 1)
            out = left.take(idx, axis=0)
            out *= coef
            out += base
            return out

    def kernel(i, x, o, gr, gl, coef):
        np.matmul(x, M0T, out=o)
        _gather(right, i, gr)
        np.vecdot(gr, x, out=coef[:, 0])
        _gather(left, i, gl)
        np.multiply(gl, coef, out=gl)
        o += gl
    d_in, d_out = M0T.shape
    return _blocked(idx, v, d_out, kernel, ((d_in,), (d_out,), (1,)), left.shape[0])


def _rank_one_mean(M0T, left, right, idx, v):
    """``v M0T + (1/n) Σ_j left_j (right_j · v)`` for ``v`` of shape ``(R, 1, d_in)``: the
    coefficients ``(R, 1, n)`` weight the gathered ``left`` rows in one batched product."""
    freq = _frequencies(left, idx)
    with single_thread_blas:
        if freq is not None:  # every client's coefficient, weighted by its frequency
            coef = (v @ array_namespace(v).matrix_transpose(right))[..., 0, :] * freq
            return v[..., 0, :] @ M0T + coef @ left
        coef = v @ array_namespace(v).matrix_transpose(right.take(idx, axis=0))  # (R, 1, n)
        return (v @ M0T + (coef @ left.take(idx, axis=0)) / idx.shape[-1])[..., 0, :]


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

    def tiled(self, copies: int) -> Scaled:
        return replace(self, base=self.base.tiled(copies))

    def mv(self, idx, v):
        return self.s * self.base.mv(idx, v)

    def rmv(self, idx, u):
        return self.s * self.base.rmv(idx, u)

    def mean_mv(self, idx, v):
        return self.s * self.base.mean_mv(idx, v)

    def mean_rmv(self, idx, u):
        return self.s * self.base.mean_rmv(idx, u)

    def mean(self, weights=None) -> np.ndarray:
        return self.s * self.base.mean(weights)

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

    def tiled(self, copies: int) -> Transposed:
        return replace(self, base=self.base.tiled(copies))

    def mv(self, idx, v):
        return self.base.rmv(idx, v)

    def rmv(self, idx, u):
        return self.base.mv(idx, u)

    def mean_mv(self, idx, v):
        return self.base.mean_rmv(idx, v)

    def mean_rmv(self, idx, u):
        return self.base.mean_mv(idx, u)

    def mean(self, weights=None) -> np.ndarray:
        return self.base.mean(weights).T

    def dense_range(self, start, stop):
        return np.swapaxes(self.base.dense_range(start, stop), -1, -2)

    def client_norms(self, start, stop):
        return self.base.client_norms(start, stop)

    @property
    def nbytes(self) -> int:
        return 0  # shares the base family's storage
