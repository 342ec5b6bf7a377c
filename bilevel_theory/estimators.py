"""Hypergradient estimators shared by the algorithms (composed, never copied).

All functions take a :class:`~bilevel_theory.algorithm.Context` and points with a leading
replicate axis ``R``: ``x (R, dim_x)``, ``y (R, dim_y)``; loops run over Neumann steps only.

* :func:`ihgp` — FedNest Algorithm 3 (FedIHGP): one global Neumann chain per replicate,
  random truncation ``N' ~ U{0..N−1}``, fresh client sets ``S_n`` per step.
* :func:`released_ihgp` — the official FedNest code's FedIHGP (``global_batch``): every client
  its own Hessian powers, the series weighted by ``1/k`` (FEDNEST-R7).
* :func:`local_ihgp` — LFedNest's local IHGP: each client's own Hessians only.
* :func:`phe` — FedMBO Algorithm 2: ``n`` independent chains per replicate, chain ``i`` with its
  own truncation ``N_i`` and its own sampled client at every step (``truncation="full"``: the
  truncation's expectation, every chain summing its whole series, as ``ihgp``'s).
* :func:`theta_q` — Gao eq. (3.2)–(3.3): deterministic ``Q + 1``-term series with step ``θ``,
  independent samples per factor, each device with its own Hessians.
* :func:`neumann_bias_matrix` — exact ``E[Ĥ] − [∇²_{yy}g]⁻¹`` for the random-truncation series.
"""

from __future__ import annotations

import numpy as np

from .algorithm import Context


def _truncations(ctx: Context, shape: tuple[int, ...], N: int):
    """``N' ~ U{0, …, N−1}`` i.i.d. (FedNest Alg. 3 step 1, FedMBO Alg. 2 step 1)."""
    return ctx.rng.integers(0, N, size=shape)


def ihgp(ctx: Context, x, y, neumann_steps: int, sampled_clients: int, scale: float,
         replace: bool = False, truncation: str = "random"):
    """FedIHGP (FedNest Alg. 3): ``p_{N'} = (N/ℓ) Π_{n=1}^{N'}(I − mean_{S_n}∇²g_i/ℓ) mean_{S_0}∇_y f_i``.

    Returns ``(p, N')`` with ``p (R, dim_y)``.  Communication is counted from the exchanges
    executed (reading FEDNEST-R1): the server broadcasts ``(x, y)`` and aggregates
    ``∇_y f_i`` (one round), then for each Neumann step ``n ≤ N'`` it broadcasts ``p`` and
    aggregates the Hessian-vector products (one round), so a call costs ``1 + N'`` rounds
    (``active=`` per replicate; mean ``1 + (N − 1)/2``).  Hessian-vector calls count the
    ``N'·|S_n|`` products evaluated.  ``truncation="full"`` replaces the random truncation by
    the deterministic series ``(1/ℓ) Σ_{k<N} (I − Ā_S/ℓ)^k ∇_y f`` (the expectation of the
    random one; ``N`` rounds): a comparison estimator, not the paper's.
    """
    R, N, xp = ctx.replicates, neumann_steps, ctx.xp
    if truncation not in ("random", "full"):
        raise ValueError(f"`truncation` must be 'random' or 'full', got {truncation!r}")
    xb, yb = x[:, None, :], y[:, None, :]
    trunc = _truncations(ctx, (R,), N)
    S0 = ctx.oracle.sample_clients(R, sampled_clients, replace)
    ctx.broadcast(x, y)
    v = ctx.aggregate(ctx.oracle.grad_y_f(S0, xb, yb))
    if truncation == "full":
        p = total = v / scale
        for _ in range(1, N):
            Sn = ctx.oracle.sample_clients(R, sampled_clients, replace)
            ctx.broadcast(p)
            p = p - ctx.aggregate(ctx.oracle.hvp_yy_g(Sn, xb, yb, p[:, None, :])) / scale
            total = total + p
        ctx.hold(x.shape[-1], 3 * y.shape[-1])
        return total, xp.full((R,), N - 1)
    p = (N / scale) * v
    for n in range(1, N):
        active = trunc >= n
        Sn = ctx.oracle.sample_clients(R, sampled_clients, replace)
        mask = xp.broadcast_to(active[:, None], Sn.shape)
        ctx.broadcast(p, active=active)
        hv = ctx.aggregate(ctx.oracle.hvp_yy_g(Sn, xb, yb, p[:, None, :], count=mask),
                           active=active)
        p = xp.where(active[:, None], p - hv / scale, p)
    ctx.hold(x.shape[-1], 2 * y.shape[-1])
    return p, trunc


def released_ihgp(ctx: Context, idx, x, y, neumann_steps: int, scale: float):
    """The official FedNest code's FedIHGP (``hvp_method='global_batch'``,
    ``ClientManage.fedIHGP`` with ``Client.hvp_iter`` in ``core/``; reading FEDNEST-R7).

    ``x (R, dim_x)``, ``y (R, dim_y)``.  Each client ``j`` of ``idx (R, n)`` keeps its own counter ``c_j ← (I − ∇²g_j/ℓ) c_j``
    (``c_j⁰ = p₀ = mean_j ∇_y f_j``, its **own** Hessian) and sends ``p + c_j``; the server
    appends these to a list that is never cleared and sets ``p`` to the mean of the whole
    list.  Hence ``p_k = p_{k−1} + (1/k) mean_j (I − ∇²g_j/ℓ)^k p₀`` and, after ``N`` steps,
    ``p_N = p₀ + Σ_{k=1}^N (1/k) mean_j (I − ∇²g_j/ℓ)^k p₀`` (no random truncation, no
    ``N/ℓ`` scale, the series weighted by ``1/k``).  The code multiplies the indirect term by
    its step ``hlr`` (``Client_hr.hyper_grad``), i.e. by ``1/ℓ`` here: returns
    ``p_N/ℓ (R, dim_y)``.  Rounds: ``1 + N`` (the code's ``comm_round = 1 + neumann``)."""
    xp = ctx.xp
    xb, yb = x[:, None, :], y[:, None, :]
    ctx.broadcast(x, y)
    p0 = ctx.aggregate(ctx.oracle.grad_y_f(idx, xb, yb))
    p, c, listed, count = p0, xp.broadcast_to(p0[:, None, :], idx.shape + p0.shape[-1:]), 0.0, 0
    for _ in range(neumann_steps):
        ctx.broadcast(p)
        c = c - ctx.oracle.hvp_yy_g(idx, xb, yb, c) / scale
        sent = p[:, None, :] + c                      # what each client sends: p + c_j
        listed = listed + ctx.aggregate(sent) * idx.shape[1]
        count += idx.shape[1]
        p = listed / count                            # the mean of the never-cleared list
    ctx.hold(x.shape[-1], 3 * y.shape[-1])
    return p / scale


def local_ihgp(ctx: Context, idx, x, y, neumann_steps: int, scale: float,
               truncation: str = "random"):
    """LFedNest's local IHGP: ``p_i = (N/ℓ) Π_{n=1}^{N_i'}(I − ∇²g_i(ζ_n)/ℓ) ∇_y f_i`` for each
    client in ``idx (R, n)``, with its own truncation ``N_i'`` and only its own Hessians.

    ``x, y`` broadcastable to ``(R, n, d)``; returns ``(R, n, dim_y)``; no communication.
    ``truncation="full"``: the deterministic series ``(1/ℓ) Σ_{k<N}(I − ∇²g_i/ℓ)^k ∇_y f_i``,
    the random one's expectation given ``(x, y)`` (a comparison estimator, as in :func:`ihgp`).
    """
    N = neumann_steps
    if truncation == "full":
        p = total = ctx.oracle.grad_y_f(idx, x, y) / scale
        for _ in range(1, N):
            p = p - ctx.oracle.hvp_yy_g(idx, x, y, p) / scale
            total = total + p
        return total
    if truncation != "random":
        raise ValueError(f"`truncation` must be 'random' or 'full', got {truncation!r}")
    trunc = _truncations(ctx, idx.shape, N)
    p = (N / scale) * ctx.oracle.grad_y_f(idx, x, y)
    host = isinstance(p, np.ndarray)
    step = np.empty_like(p) if host and N > 1 else None
    for n in range(1, N):
        active = trunc >= n
        hv = ctx.oracle.hvp_yy_g(idx, x, y, p, count=active)
        if host:  # two passes, in place: the same numbers as the masked expression below
            np.divide(hv, scale, out=step)
            np.subtract(p, step, out=p, where=active[..., None])
        else:
            p = ctx.xp.where(active[..., None], p - hv / scale, p)
    return p


def phe(ctx: Context, x, y, neumann_steps: int, sampled_clients: int, scale: float,
        replace: bool = True, truncation: str = "random"):
    """FedMBO's Parallel Hypergradient Estimator (Alg. 2, eq. 6): ``n`` chains per replicate,

    ``H_i = ∇ₓf_{c_i⁰} − ∇²_{xy}g_{c_i^{max+1}} (N/ℓ) Π_{l=1}^{N_i}(I − ∇²_{yy}g_{c_i^l}/ℓ) ∇_y f_{c_i⁰}``.

    Chain ``i`` hops to a freshly sampled client at every step (with replacement by default,
    as Prop. 3 assumes: the ``H_i`` are then independent given ``F^k``).  Readings FEDMBO-R2/R3:
    ``d_i = ∇ₓf`` (eq. 6, not the box's ``∇_y f``); the final Jacobian uses client
    ``c_i^{max N_i + 1}``.  Returns ``H (R, n, dim_x)``.  Rounds (FEDMBO-I2): ``1 + max_i N_i + 1`` (each
    Neumann step moves every chain to another client), averaged over replicates, counted from
    the relays executed (``Context.broadcast``/``upload`` with ``active=``).  Only the chains
    still alive are computed at each hop (``tests/test_estimators.py``: the same ``H_i`` as
    computing every chain and masking the finished ones).  ``truncation="full"``: every chain
    runs all ``N − 1`` hops and sums the series ``(1/ℓ) Σ_{k<N} Π_{l≤k}(I − ∇²_{yy}g_{c_i^l}/ℓ)
    ∇_y f_{c_i⁰}``, the random truncation's expectation given the chain's clients (a comparison
    estimator, as :func:`ihgp`'s).
    """
    R, n, N, xp = ctx.replicates, sampled_clients, neumann_steps, ctx.xp
    if truncation not in ("random", "full"):
        raise ValueError(f"`truncation` must be 'random' or 'full', got {truncation!r}")
    xb, yb = x[:, None, :], y[:, None, :]
    if truncation == "full":
        return _phe_series(ctx, xb, yb, N, n, scale, replace)
    trunc = _truncations(ctx, (R, n), N)
    C0 = ctx.oracle.sample_clients(R, n, replace)
    d = ctx.oracle.grad_x_f(C0, xb, yb)
    p = (N / scale) * ctx.oracle.grad_y_f(C0, xb, yb)
    ctx.broadcast(x, y)
    ctx.upload(p)                         # the chain heads hand p to the server (one round)
    longest = xp.max(trunc, axis=1)
    # The hops run on the chains sorted longest first in each replicate, so hop l computes
    # only the first `width` chains (the most still alive in any replicate), not all n; each
    # chain keeps its own truncation and hop clients, and p returns to chain order after.
    order = _longest_first(xp, trunc, N)
    trunc, p = _rows(xp, trunc, order), _rows(xp, p, order)
    for l in range(1, N):
        hop = longest >= l                # a relay round happens while some chain is alive
        Cl = _rows(xp, ctx.oracle.sample_clients(R, n, replace), order)
        ctx.broadcast(p[:, 0, :], active=hop)
        alive = trunc >= l
        width = int(ctx.scalar(xp.max(xp.sum(xp.astype(alive, xp.int64), axis=1))))
        alive, head = alive[:, :width], p[:, :width]    # a view: updated in place
        hv = ctx.oracle.hvp_yy_g(Cl[:, :width], xb, yb, head, count=alive)
        head -= hv * (xp.astype(alive, hv.dtype) / scale)[..., None]
        ctx.upload(p, active=hop)
    p = _rows(xp, p, _inverse(xp, order))
    Cend = ctx.oracle.sample_clients(R, n, replace)
    ctx.broadcast(p[:, 0, :])
    H = d - ctx.oracle.jvp_xy_g(Cend, xb, yb, p)
    ctx.upload(H)                         # the server averages the H_i (the caller's mean)
    ctx.hold(x.shape[-1], 2 * y.shape[-1])
    return H


def _phe_series(ctx: Context, xb, yb, N: int, n: int, scale: float, replace: bool):
    """:func:`phe` with ``truncation="full"``: the same clients and relays, every chain alive
    for all ``N − 1`` hops; ``p`` is the chain's current product term, ``total`` the partial sum
    of the series."""
    R, o = ctx.replicates, ctx.oracle
    C0 = o.sample_clients(R, n, replace)
    d = o.grad_x_f(C0, xb, yb)
    p = o.grad_y_f(C0, xb, yb) / scale
    total = p
    ctx.broadcast(xb[:, 0, :], yb[:, 0, :])
    ctx.upload(p)
    for _ in range(1, N):
        Cl = o.sample_clients(R, n, replace)
        ctx.broadcast(p[:, 0, :])
        p = p - o.hvp_yy_g(Cl, xb, yb, p) / scale
        total = total + p
        ctx.upload(p)
    Cend = o.sample_clients(R, n, replace)
    ctx.broadcast(total[:, 0, :])
    H = d - o.jvp_xy_g(Cend, xb, yb, total)
    ctx.upload(H)
    ctx.hold(xb.shape[-1], 3 * yb.shape[-1])
    return H


def _longest_first(xp, trunc, N: int):
    """Flat indices (into the ``R·n`` chains) ordering each replicate's chains by truncation
    ``< N``, longest first (a stable sort: ties keep their order; 16-bit keys sort in linear
    time on host numpy)."""
    R, n = trunc.shape
    key = xp.astype((N - 1) - trunc, xp.int16 if N <= 2**15 else xp.int64)
    within = xp.argsort(key, axis=1, stable=True)
    return within + xp.arange(R, dtype=within.dtype)[:, None] * n


def _rows(xp, a, flat):
    """``a (R, n, …)`` with its chains gathered at the flat indices ``flat (R, n)``."""
    R, n = flat.shape
    rest = tuple(a.shape[2:])
    out = xp.take(xp.reshape(a, (R * n, *rest)), xp.reshape(flat, (R * n,)), axis=0)
    return xp.reshape(out, (R, n, *rest))


def _inverse(xp, flat):
    """The flat permutation undoing :func:`_rows` with ``flat``."""
    R, n = flat.shape
    inv = xp.empty((R * n,), dtype=flat.dtype)
    inv[xp.reshape(flat, (R * n,))] = xp.arange(R * n, dtype=flat.dtype)
    return xp.reshape(inv, (R, n))


def theta_q(ctx: Context, idx, x, y, v, theta: float, Q: int):
    """Gao eq. (3.3): ``Ĥ v = θ Σ_{q=−1}^{Q−1} Π_{j=Q−q}^{Q}(I − θ∇²_{yy}g(ζ_j)) v``.

    The nested products share their factors, so ``r₀ = v``, ``r_s = (I − θH(ζ_{Q−s+1})) r_{s−1}``
    and ``Ĥv = θ Σ_{s=0}^{Q} r_s`` (``Q`` Hessian-vector products per device, each factor with
    its own sample).  ``idx (R, n)`` are the devices; ``x, y, v`` broadcast to ``(R, n, d)``.
    """
    r = total = v
    for q in range(Q):
        hv = ctx.oracle.hvp_yy_g(idx, x, y, r)
        if q == 0:  # fresh buffers: r and total are updated in place from here on
            step = theta * hv
            r = r - step
            total = total + r
            continue
        if isinstance(step, np.ndarray) and step.shape == hv.shape:
            np.multiply(theta, hv, out=step)
        else:
            step = theta * hv
        r -= step
        total += r
    return theta * total


def neumann_bias_matrix(problem, neumann_steps: int, scale: float) -> np.ndarray:
    """Exact ``E_{N'}[(N/ℓ)(I − A/ℓ)^{N'}] − A⁻¹ = −A⁻¹(I − A/ℓ)^N`` for the global ``A``
    (FedNest Lemma 2.2, FedMBO eq. 5): its norm is ``(1 − λ_min(A)/ℓ)^N / λ_min(A)``."""
    A = problem.host.closed_form.A
    M = np.eye(A.shape[0]) - A / scale
    return -np.linalg.solve(A, np.linalg.matrix_power(M, neumann_steps))
