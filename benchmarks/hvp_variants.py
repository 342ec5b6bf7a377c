"""Earlier candidate implementations of the batched product ``M_{idx} v`` (numpy), kept as a
comparison: the library's ``Family.mv`` now runs its own fused blocked kernel
(:func:`bilevel_theory.problems.families._blocked`), which the benchmark reports.

Each takes ``(family, idx, v)`` with ``idx (R, n)`` and ``v (R, n, d)`` and returns
``(R, n, d)``; :func:`benchmarks.bandwidth.hvp_case` checks each against the library's result.
``blocked_*`` run over blocks of client-rows (never one client at a time) so that the gathered
rows and the temporaries stay in cache.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from bilevel_theory.problems.families import Dense, EigenScaled

BLOCK_ROWS = 4096


def eig_take(f, idx, v):
    """``np.take`` instead of fancy indexing (one gather kernel, no index broadcasting)."""
    return ((v @ f.U) * f.a.take(idx, axis=0)) @ f.U.T


def eig_take_inplace(f, idx, v):
    """``take`` + in-place multiply + preallocated output (two temporaries fewer)."""
    w = v @ f.U
    w *= f.a.take(idx, axis=0)
    out = np.empty_like(w)
    return np.matmul(w, f.U.T, out=out)


def eig_einsum(f, idx, v):
    """One einsum for the first product (``optimize=False``), then a matmul."""
    w = np.einsum("rnj,jk->rnk", v, f.U)
    w *= f.a.take(idx, axis=0)
    return w @ f.U.T


def eig_blocked(f, idx, v, block: int = BLOCK_ROWS):
    """Blocks of ``block`` client-rows: gather, both products and the scaling stay in cache."""
    d = v.shape[-1]
    flat_v, flat_i = v.reshape(-1, d), idx.reshape(-1)
    out = np.empty_like(flat_v)
    UT = np.ascontiguousarray(f.U.T)
    w = np.empty((block, d))
    g = np.empty((block, d))
    for s in range(0, flat_i.size, block):
        e = min(s + block, flat_i.size)
        k = e - s
        np.matmul(flat_v[s:e], f.U, out=w[:k])
        np.take(f.a, flat_i[s:e], axis=0, out=g[:k])
        np.multiply(w[:k], g[:k], out=w[:k])
        np.matmul(w[:k], UT, out=out[s:e])
    return out.reshape(v.shape)


def dense_take(f, idx, v):
    return (f.M.take(idx, axis=0) @ v[..., None])[..., 0]


def dense_einsum(f, idx, v):
    return np.einsum("rnij,rnj->rni", f.M.take(idx, axis=0), v)


def dense_blocked(f, idx, v, block: int = BLOCK_ROWS // 4):
    """Blocks of client-rows: the gathered ``(block, d, d)`` matrices stay in cache."""
    d_out, d = f.M.shape[1], v.shape[-1]
    flat_v, flat_i = v.reshape(-1, d), idx.reshape(-1)
    out = np.empty((flat_i.size, d_out))
    Mi = np.empty((block, d_out, d))
    for s in range(0, flat_i.size, block):
        e = min(s + block, flat_i.size)
        k = e - s
        np.take(f.M, flat_i[s:e], axis=0, out=Mi[:k])
        np.matmul(Mi[:k], flat_v[s:e, :, None], out=out[s:e, :, None])
    return out.reshape(v.shape[:-1] + (d_out,))


def for_family(family) -> dict[str, Callable]:
    """The candidates that apply to ``family``."""
    if isinstance(family, EigenScaled):
        return {"take": eig_take, "take + in-place": eig_take_inplace,
                "einsum + take": eig_einsum, f"blocked ({BLOCK_ROWS} rows)": eig_blocked}
    if isinstance(family, Dense):
        return {"take": dense_take, "einsum + take": dense_einsum,
                f"blocked ({BLOCK_ROWS // 4} rows)": dense_blocked}
    return {}
