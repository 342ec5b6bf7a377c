"""Closed-form federated quadratic problems: the shared base of every instance family.

Client ``i`` holds

* lower level ``g_i(x, y) = ½ yᵀA_i y − yᵀ(B_i x + c_i) + γ_i(x)`` with ``A_i ≻ 0``, where
  ``γ_i`` collects terms in ``x`` alone (they change neither ``y*`` nor any algorithm);
* upper level ``f_i(x, y) = ½ xᵀP x + xᵀR_i y + ½ yᵀS_i y + p_iᵀx + q_iᵀy``.

With the means ``A, B, c, R, S, p, q`` over clients (weighted means ``Σ_i w_i ·`` on a
:meth:`~FederatedQuadratic.reweighted` instance), ``y*(x) = A⁻¹(Bx + c) = Jx + y₀`` is affine,
``Φ(x) = f(x, y*(x))`` is quadratic with Hessian ``H_Φ = P + RJ + JᵀRᵀ + JᵀSJ`` and
``∇Φ(x) = ∇ₓf + Bᵀ A⁻¹ ∇_y f`` at ``y*(x)`` (``∇²_{xy} g = −Bᵀ``).  Every closed form below is
exact in float64; the batched per-client derivatives (``exact_*``) feed the stochastic oracle.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .backend import Backend, get_backend, mean_over_clients
from .families import CHUNK, Dense, EigenScaled, Family, Shared, mean_of_rows, weighted_mean
from .validation import (
    check_batch,
    check_client,
    check_int,
    check_real,
    check_vector,
    check_weights,
)

KINDS = ("bilevel", "minimax", "compositional")
#: the most clients :meth:`FederatedQuadratic.tiled` builds (the ``clients`` knob's upper end)
MAX_TILED = 10**7


def symmetric_spectrum(family: Family) -> tuple[float, float]:
    """``(min_i λ_min(M_i), max_i λ_max(M_i))`` of a symmetric family (host, chunked)."""
    if isinstance(family, EigenScaled):
        return family.eigenvalue_range()
    lo, hi = np.inf, -np.inf
    for s in range(0, family.clients, CHUNK):
        ev = np.linalg.eigvalsh(family.dense_range(s, min(s + CHUNK, family.clients)))
        lo, hi = min(lo, float(ev.min())), max(hi, float(ev.max()))
    return lo, hi


def block_norm(a: float, b: float, d: float) -> float:
    """Spectral norm of ``[[a, b], [b, d]]``: a bound on ``‖[[M11, M12], [M21, M22]]‖₂`` from the
    blocks' norms ``a = ‖M11‖, b = ‖M12‖, d = ‖M22‖``."""
    return float(np.linalg.norm(np.array([[a, b], [b, d]]), 2))


@dataclass(frozen=True)
class ClosedForm:
    """The global problem in closed form (means over the clients), from which ``y*``, ``Φ`` and
    ``∇Φ`` follow exactly: ``g(x, y) = ½yᵀAy − yᵀ(Bx + c)``, ``f(x, y) = ½xᵀPx + xᵀRy +
    ½yᵀSy + pᵀx + qᵀy``; ``J = A⁻¹B`` and ``y0 = A⁻¹c`` give ``y*(x) = Jx + y0``; ``H`` is
    ``∇²Φ`` and ``g0 = ∇Φ(0)``, so ``∇Φ(x) = Hx + g0``."""

    A: Any
    B: Any
    c: Any
    R: Any
    S: Any
    P: Any
    p: Any
    q: Any
    J: Any
    y0: Any
    H: Any
    g0: Any


@dataclass(frozen=True, eq=False)
class FederatedQuadratic:
    """A federated quadratic instance with closed-form ``y*``, ``Φ`` and ``∇Φ``.

    Build instances with the factories ``QuadraticBilevel.random``,
    ``QuadraticMinimax.random`` / ``.fednest_instance`` and ``QuadraticCompositional.random``.
    ``to(backend)`` gives the same instance with its arrays on that backend (cached);
    ``reweighted(weights)`` the same clients with the global objectives ``Σ_i w_i f_i``,
    ``Σ_i w_i g_i`` (``weights`` holds those ``w``; ``None``: the plain means).
    """

    kind: str
    A: Family  # (dim_y, dim_y), symmetric positive definite per client
    B: Family  # (dim_y, dim_x)
    c: Any  # (m, dim_y)
    P: Any  # (dim_x, dim_x), shared
    R: Family  # (dim_x, dim_y)
    S: Family  # (dim_y, dim_y)
    p: Any  # (m, dim_x)
    q: Any  # (m, dim_y)
    Gxx: Any  # (dim_x, dim_x): x-only quadratic ½ xᵀGxx x of every g_i
    e: Any  # (m, dim_x) or None: x-only linear term eᵢᵀx of g_i
    grad_noise: float
    hessian_noise: float
    spec: dict = field(default_factory=dict)
    radius: float = 10.0
    backend: Backend = field(default_factory=get_backend)
    weights: Any = None  # (m,) host weights of the global objectives, or None: the means

    # ---------------------------------------------------------------- shape & backend
    @property
    def clients(self) -> int:
        """Number of clients ``m``."""
        return int(self.c.shape[0])

    @property
    def dim_x(self) -> int:
        return int(self.P.shape[0])

    @property
    def dim_y(self) -> int:
        return int(self.c.shape[1])

    @property
    def xp(self):
        """The array namespace of this copy's arrays."""
        return self.backend.xp

    def to(self, backend: str | Backend) -> FederatedQuadratic:
        """This instance with every array on ``backend`` (closed forms stay exact)."""
        be = backend if isinstance(backend, Backend) else get_backend(backend)
        if be.name == self.backend.name:
            return self
        return self._moved(be.name)

    @functools.cache  # noqa: B019 (instances are immutable; one copy per backend)
    def _moved(self, name: str) -> FederatedQuadratic:
        be = get_backend(name)
        arr = {k: (None if getattr(self, k) is None else be.asarray(np.asarray(getattr(self, k))))
               for k in ("c", "P", "p", "q", "Gxx", "e")}
        fam = {k: getattr(self, k).to(be) for k in ("A", "B", "R", "S")}
        moved = replace(self, backend=be, **arr, **fam)
        object.__setattr__(moved, "_host", self)
        return moved

    @property
    def host(self) -> FederatedQuadratic:
        """The numpy copy, where the closed-form matrices are computed."""
        return getattr(self, "_host", self)

    @property
    def nbytes(self) -> int:
        """Bytes of per-client data (the part that scales with the number of clients)."""
        arrays = {id(a): a for a in (self.c, self.p, self.q, self.e, self.weights)
                  if a is not None}
        per_client = sum(a.nbytes for a in arrays.values())  # an array shared twice counts once
        return int(per_client + sum(f.nbytes for f in (self.A, self.B, self.R, self.S)))

    def config_hash(self) -> str:
        """A short hash of the construction spec (identifies the instance in results)."""
        blob = json.dumps({"class": type(self).__name__, **self.spec}, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.spec.items())
        return f"{type(self).__name__}({args})"

    def reweighted(self, weights: Any) -> FederatedQuadratic:
        """The same clients with the global objectives ``Σ_i w_i f_i`` and ``Σ_i w_i g_i``.

        ``weights``: shape ``(m,)``, entries ``≥ 0`` summing to 1 (they replace any earlier
        weights).  Every closed form (``y*``, ``Φ``, ``∇Φ``, ``x*``, ``f``, ``g``, ``grad_g``,
        :attr:`closed_form`) and the constants of the global problem (``mu_g_global``,
        ``L_yy_global``, ``L_phi``, ``mu_phi``, ``sigma_g2``) are those of the weighted
        objectives; per-client quantities (the oracle, ``f_i``, ``g_i``, ``mu_g``, ``L_yy``…)
        are unchanged, and so is an algorithm's uniform aggregation.  The weights are part of
        the ``spec`` (as a digest), hence of the config hash.
        """
        h = self.host
        w = check_weights("weights", weights, h.clients)
        digest = hashlib.sha256(w.tobytes()).hexdigest()[:12]
        out = replace(h, weights=w, spec={**h.spec, "weights": f"sha256:{digest}"})
        return out.to(self.backend)

    def tiled(self, copies: int) -> FederatedQuadratic:
        """``copies`` copies of every client, in order (client ``i + k·m`` is client ``i``):
        the same global objectives, ``y*``, ``Φ``, ``x*`` and constants with ``copies·m``
        clients, so that a sweep over the number of clients changes nothing else.  The spec
        records ``clients`` and ``tiled_from``."""
        h = self.host
        copies = check_int("copies", copies, minimum=1, maximum=max(1, MAX_TILED // h.clients))

        def tile(a):
            return None if a is None else np.tile(np.asarray(a), (copies,) + (1,) * (np.ndim(a) - 1))

        w = None if h.weights is None else tile(h.weights) / copies
        out = replace(h, A=h.A.tiled(copies), B=h.B.tiled(copies), R=h.R.tiled(copies),
                      S=h.S.tiled(copies), c=tile(h.c), p=tile(h.p), q=tile(h.q), e=tile(h.e),
                      weights=w, spec={**h.spec, "clients": h.clients * copies,
                                       "tiled_from": h.clients})
        return out.to(self.backend)

    def tiled_to(self, clients: int) -> FederatedQuadratic:
        """:meth:`tiled` to ``clients`` clients in all, a positive multiple of this instance's
        (a sweep over the total number of clients with everything else unchanged)."""
        m = self.host.clients
        clients = check_int("clients", clients, minimum=m, maximum=max(m, MAX_TILED))
        if clients % m:
            raise ValueError(f"`clients` must be a positive multiple of {m}, got {clients}")
        return self.tiled(clients // m)

    # ---------------------------------------------------------------- closed forms (host)
    @functools.cached_property
    def closed_form(self) -> ClosedForm:
        """The global quadratics in closed form (:class:`ClosedForm`), on this backend."""
        h = self.host
        w = h.weights
        A, B, c = h.A.mean(w), h.B.mean(w), weighted_mean(h.c, w)
        R, S = h.R.mean(w), h.S.mean(w)
        P = np.asarray(h.P)
        J = np.linalg.solve(A, B)
        y0 = np.linalg.solve(A, c)
        H = P + R @ J + J.T @ R.T + J.T @ S @ J
        H = 0.5 * (H + H.T)
        p, q = weighted_mean(h.p, w), weighted_mean(h.q, w)
        g0 = R @ y0 + p + J.T @ (S @ y0 + q)
        out = dict(A=A, B=B, c=c, R=R, S=S, P=P, p=p, q=q, J=J, y0=y0, H=H, g0=g0)
        if self.backend.name != "numpy":
            out = {k: self.backend.asarray(v) for k, v in out.items()}
        return ClosedForm(**out)

    def _x(self, x: Any) -> Any:
        return check_vector("x", x, self.dim_x, self.xp, self.backend.to_numpy)

    def _xy(self, x: Any, y: Any, xp: Any = None) -> tuple[Any, Any]:
        """Validated ``x, y`` whose batch axes broadcast together."""
        xp = self.xp if xp is None else xp
        to_host = self.backend.to_numpy if xp is self.xp else None
        x, y = (check_vector("x", x, self.dim_x, xp, to_host),
                check_vector("y", y, self.dim_y, xp, to_host))
        check_batch(("x", x), ("y", y))
        return x, y

    def _host_xy(self, x: Any, y: Any) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
        """``x, y`` validated and brought to host numpy, plus their common batch shape."""
        if self.backend.name != "numpy":
            x, y = self.backend.to_numpy(self.xp.asarray(x)), self.backend.to_numpy(
                self.xp.asarray(y))
        x, y = self._xy(x, y, np)
        return x, y, check_batch(("x", x), ("y", y))

    def _from_host(self, value: np.ndarray, batch: tuple[int, ...]) -> Any:
        """A host result as a float (no batch axes) or an array on this copy's backend."""
        if not batch:
            return float(value)
        return value if self.backend.name == "numpy" else self.backend.asarray(value)

    def y_star(self, x: Any) -> Any:
        """Global lower-level solution ``y*(x) = A⁻¹(Bx + c)``; ``x`` may carry batch axes."""
        C = self.closed_form
        return self._x(x) @ C.J.T + C.y0

    def hypergradient(self, x: Any) -> Any:
        """``∇Φ(x) = H_Φ x + ∇Φ(0)`` (exact); ``x`` may carry batch axes."""
        C = self.closed_form
        return self._x(x) @ C.H + C.g0

    def surrogate_hypergradient(self, x: Any, y: Any) -> Any:
        """``∇̄f(x, y) = ∇ₓf(x, y) − ∇²_{xy}g [∇²_{yy}g]⁻¹ ∇_y f(x, y)`` with ``y`` in place of
        ``y*(x)`` (FedMBO §3, FedNest Lemma 2.1); batch axes broadcast."""
        x, y = self._xy(x, y)
        C = self.closed_form
        gx = x @ C.P + y @ C.R.T + C.p
        gy = x @ C.R + y @ C.S + C.q
        return gx + gy @ C.J

    def f(self, x: Any, y: Any) -> Any:
        """Global upper-level value ``f(x, y) = mean_i f_i(x, y)``."""
        x, y = self._xy(x, y)
        C = self.closed_form
        return self._quad_f(x, y, C.P, C.R, C.S, C.p, C.q)

    def g(self, x: Any, y: Any) -> Any:
        """Global lower-level value ``g(x, y) = mean_i g_i(x, y)`` (``Σ_i w_i g_i`` when
        reweighted; chunked over clients)."""
        h = self.host
        x, y, batch = self._host_xy(x, y)
        total = np.zeros(batch)
        for s in range(0, h.clients, CHUNK):
            idx = np.arange(s, min(s + CHUNK, h.clients))
            values = h._g_values(idx, x, y)
            total += values.sum(-1) if h.weights is None else values @ h.weights[idx]
        return self._from_host(total / h.clients if h.weights is None else total, batch)

    def grad_g(self, x: Any, y: Any) -> tuple[Any, Any]:
        """``(∇ₓg(x, y), ∇_y g(x, y))`` as the mean (weighted when reweighted) of the exact
        client gradients (chunked over clients, no closed form involved: an independent check
        of ``y*``)."""
        h = self.host
        x, y, batch = self._host_xy(x, y)
        xb, yb = x[..., None, :], y[..., None, :]
        gx, gy = np.zeros((*batch, self.dim_x)), np.zeros((*batch, self.dim_y))
        for s in range(0, h.clients, CHUNK):
            idx = np.arange(s, min(s + CHUNK, h.clients))
            if h.weights is None:
                gx += h.exact_grad_x_g(idx, xb, yb).sum(-2)
                gy += h.exact_grad_y_g(idx, xb, yb).sum(-2)
            else:
                w = h.weights[idx]
                gx += (h.exact_grad_x_g(idx, xb, yb) * w[:, None]).sum(-2)
                gy += (h.exact_grad_y_g(idx, xb, yb) * w[:, None]).sum(-2)
        if h.weights is None:
            gx, gy = gx / h.clients, gy / h.clients
        if self.backend.name != "numpy":
            gx, gy = self.backend.asarray(gx), self.backend.asarray(gy)
        return gx, gy

    def phi(self, x: Any) -> Any:
        """Hyper-objective ``Φ(x) = f(x, y*(x))``."""
        return self.f(x, self.y_star(x))

    @functools.cached_property
    def x_star(self) -> np.ndarray | None:
        """Minimizer of ``Φ`` when ``Φ`` is strongly convex (``λ_min(H_Φ) > 0``), else ``None``."""
        H, g0 = self.host.closed_form.H, self.host.closed_form.g0
        ev = np.linalg.eigvalsh(H)
        if ev.min() <= 1e-10 * max(1.0, abs(ev).max()):
            return None
        return -np.linalg.solve(H, g0)

    @staticmethod
    def _quad_f(x, y, P, R, S, p, q):
        return (0.5 * ((x @ P) * x).sum(-1) + ((y @ R.T) * x).sum(-1)
                + 0.5 * ((y @ S) * y).sum(-1) + (x * p).sum(-1) + (y * q).sum(-1))

    # ---------------------------------------------------------------- one client
    def client(self, i: int) -> dict[str, np.ndarray]:
        """Client ``i``'s matrices and vectors (host numpy), to inspect."""
        h = self.host
        i = check_client("i", i, h.clients)
        out = dict(A=h.A.dense(i), B=h.B.dense(i), c=np.asarray(h.c[i]), P=np.asarray(h.P),
                   R=h.R.dense(i), S=h.S.dense(i), p=np.asarray(h.p[i]), q=np.asarray(h.q[i]),
                   Gxx=np.asarray(h.Gxx))
        if h.e is not None:
            out["e"] = np.asarray(h.e[i])
        return out

    def f_i(self, i: int, x: Any, y: Any) -> Any:
        """Client ``i``'s upper-level value (a float for single points)."""
        m = self.client(i)
        x, y, batch = self._host_xy(x, y)
        return self._from_host(self._quad_f(x, y, m["P"], m["R"], m["S"], m["p"], m["q"]), batch)

    def g_i(self, i: int, x: Any, y: Any) -> Any:
        """Client ``i``'s lower-level value (a float for single points)."""
        i = check_client("i", i, self.clients)
        x, y, batch = self._host_xy(x, y)
        return self._from_host(self.host._g_values(np.array([i]), x, y)[..., 0], batch)

    def _g_values(self, idx, x, y):
        """``g_i(x, y)`` for the clients ``idx`` (1-D, host); ``x, y`` of shape (d,) or (k, d)."""
        xb, yb = x[..., None, :], y[..., None, :]
        Ay = self.A.mv(idx, yb)
        Bx = self.B.mv(idx, xb)
        val = 0.5 * (Ay * yb).sum(-1) - ((Bx + self.c.take(idx, axis=0)) * yb).sum(-1)
        return val + self._g_x_terms(idx, xb)[0]

    def _g_x_terms(self, idx, x):
        """Value and gradient of the x-only part ``γ_i(x)`` of ``g_i`` (batched)."""
        Gx = x @ self.Gxx
        val = 0.5 * (Gx * x).sum(-1)
        grad = Gx
        if self.e is not None:
            val = val + (self.e.take(idx, axis=0) * x).sum(-1)
            grad = grad + self.e.take(idx, axis=0)
        return val, grad

    # ---------------------------------------------------------------- exact batched derivatives
    # idx: (R, n) client indices; x, y broadcastable to (R, n, d).  Used by problems.oracle.
    def exact_grad_x_f(self, idx, x, y):
        return x @ self.P + self.R.mv(idx, y) + self.p.take(idx, axis=0)

    def exact_grad_y_f(self, idx, x, y):
        return self.R.rmv(idx, x) + self.S.mv(idx, y) + self.q.take(idx, axis=0)

    def exact_grad_y_g(self, idx, x, y):
        return self.A.mv(idx, y) - self.B.mv(idx, x) - self.c.take(idx, axis=0)

    def exact_grad_y_g_at(self, idx, x):
        """``y ↦ exact_grad_y_g(idx, x, y)`` at a fixed ``x``: ``B_i x`` and ``c_i`` are formed
        once for an inner loop's steps, the same operations in the same order (bitwise)."""
        bx, c = self.B.mv(idx, x), self.c.take(idx, axis=0)
        return lambda y: self.A.mv(idx, y) - bx - c

    def exact_grad_x_g(self, idx, x, y):
        return self._g_x_terms(idx, x)[1] - self.B.rmv(idx, y)

    # The same gradients averaged over the client axis (-2) → (R, d): averaged oracle calls.
    # With one point per replicate ((R, 1, d)) the families average the clients' data first.
    def exact_mean_grad_x_f(self, idx, x, y):
        return (mean_over_clients(x @ self.P) + self.R.mean_mv(idx, y)
                + mean_of_rows(self.p, idx))

    def exact_mean_grad_y_f(self, idx, x, y):
        return (self.R.mean_rmv(idx, x) + self.S.mean_mv(idx, y)
                + mean_of_rows(self.q, idx))

    def exact_mean_grad_y_g(self, idx, x, y):
        return (self.A.mean_mv(idx, y) - self.B.mean_mv(idx, x)
                - mean_of_rows(self.c, idx))

    def exact_mean_grad_x_g(self, idx, x, y):
        return mean_over_clients(self._g_x_terms(idx, x)[1]) - self.B.mean_rmv(idx, y)

    def exact_hvp_yy_g(self, idx, v):
        """``∇²_{yy} g_i · v = A_i v`` (the Hessian does not depend on the point)."""
        return self.A.mv(idx, v)

    def exact_jvp_xy_g(self, idx, v):
        """``∇²_{xy} g_i · v = −B_iᵀ v`` (shape ``dim_x``)."""
        return -self.B.rmv(idx, v)

    # ---------------------------------------------------------------- constants
    @functools.cached_property
    def constants(self) -> dict[str, float]:
        """The papers' constants computed from this instance (host, chunked over clients).

        ``mu_g = min_i λ_min(A_i)``, ``L_yy = max_i λ_max(A_i)``; ``mu_g_global``,
        ``L_yy_global``: the extreme eigenvalues of the global ``A = mean_i A_i`` (the ratio of
        Neumann/IHGP biases of step ``1/L`` is ``1 − mu_g_global/L``); ``ell_g1``, ``ell_f1``
        bound the Lipschitz constants of ``∇g_i`` and ``∇f_i`` (spectral norm of the matrix of block norms, exact when the
        blocks align); ``ell_f0`` bounds ``‖∇f_i‖`` for ``‖x‖, ‖y‖ ≤ radius``;
        ``ell_g2 = 0`` (constant Hessians); ``L_y, M_f, L_f`` follow FedMBO Lemma 2 /
        Ghadimi–Wang Lemma 2.2; ``L_phi, mu_phi`` are the exact extreme eigenvalues of
        ``∇²Φ``; ``sigma_*2`` are the configured oracle variances and ``sigma_g2`` the measured
        heterogeneity, the exact maximum over the ball ``‖(x, y)‖ ≤ √2·radius`` (see
        :meth:`heterogeneity`).
        """
        h = self.host
        mu_g, L_A = symmetric_spectrum(h.A)
        L_B = h.B.max_norm()
        L_R, L_S = h.R.max_norm(), h.S.max_norm()
        G = self._gxx_norm()
        ell_g1 = block_norm(G, L_B, L_A)
        ell_f1 = block_norm(float(np.linalg.norm(np.asarray(h.P), 2)), L_R, L_S)
        lin = max(float(np.sqrt((np.asarray(h.p[s:s + CHUNK]) ** 2).sum(1)
                                + (np.asarray(h.q[s:s + CHUNK]) ** 2).sum(1)).max())
                  for s in range(0, h.clients, CHUNK))
        ell_f0 = ell_f1 * np.sqrt(2.0) * self.radius + lin
        ell_g2 = 0.0
        M_f = ell_f1 + ell_g1 * ell_f1 / mu_g + ell_f0 / mu_g * (ell_g2 + ell_g1 * ell_g2 / mu_g)
        L_f = ell_f1 + ell_g1 * (ell_f1 + M_f) / mu_g + ell_f0 / mu_g * (
            ell_g2 + ell_g1 * ell_g2 / mu_g)
        ev = np.linalg.eigvalsh(h.closed_form.H)
        ev_A = np.linalg.eigvalsh(h.closed_form.A)
        out = dict(
            mu_g=mu_g, L_yy=L_A, kappa=L_A / mu_g, mu_g_global=float(ev_A[0]),
            L_yy_global=float(ev_A[-1]), ell_g1=ell_g1, kappa_g=ell_g1 / mu_g,
            ell_g2=ell_g2, ell_f0=float(ell_f0), ell_f1=ell_f1, L_y=ell_g1 / mu_g, M_f=float(M_f),
            L_f=float(L_f), L_phi=float(abs(ev).max()), mu_phi=float(ev.min()),
            sigma_f2=self.grad_noise ** 2, sigma_g12=self.grad_noise ** 2,
            sigma_g22=self.hessian_noise ** 2, sigma_g2=self.heterogeneity(),
            radius=self.radius,
        )
        bad = {k: v for k, v in out.items() if not np.isfinite(v)}
        if bad:  # the knobs' ranges exclude this: a bug, never a silent inf
            raise FloatingPointError(f"instance {self.spec}: non-finite constants {bad}")
        return out

    def _gxx_norm(self) -> float:
        return float(np.linalg.norm(np.asarray(self.host.Gxx), 2))

    def heterogeneity(self, points: int = 16) -> float:
        """Measured ``σ_g² = max_{‖z‖ ≤ √2·radius} mean_i ‖∇g_i(z) − ∇g(z)‖²`` (``Σ_i w_i``
        in place of ``mean_i`` when reweighted; FedMBO
        Assumption 5; AFBO 4.5; Gao A4 for ``∇g``), with ``z = (x, y)`` and the full gradient in
        ``(x, y)``, as the assumptions state.  The ball contains ``‖x‖, ‖y‖ ≤ radius`` (the
        domain of ``ℓ_{f,0}``); a bounded domain is needed because ``∇g_i − ∇g`` grows linearly
        in ``z`` when the ``A_i, B_i`` differ.

        The maximum is exact: ``∇g_i(z) − ∇g(z) = D_i z + d_i`` is affine, so the objective is
        ``wᵀQw`` with ``w = (z, 1)`` and ``Q = mean_i [D_i d_i]ᵀ[D_i d_i]`` (accumulated in chunks
        of clients, shifted by client 0 so identical clients give exactly 0), and its maximum
        over the ball is the trust-region dual ``min_{λ ≥ λ_max(C)} λρ² + c₀ + bᵀ(λI − C)⁻¹b``
        (:func:`ball_max`).  ``points`` is accepted for compatibility and unused.
        """
        return self.heterogeneity_within(np.sqrt(2.0) * self.radius)

    def heterogeneity_within(self, radius: float) -> float:
        """``max_{‖z‖ ≤ radius} mean_i ‖∇g_i(z) − ∇g(z)‖²``, ``z = (x, y)``: :meth:`heterogeneity`
        over a ball of another radius (the region a run visits), exact."""
        radius = check_real("radius", radius, minimum=0.0)
        Q = self._gradient_spread()
        d = Q.shape[0] - 1
        return ball_max(Q[:d, :d], Q[:d, d], float(Q[d, d]), radius)

    def _gradient_spread(self) -> np.ndarray:
        """``Q = mean_i M̃_iᵀM̃_i`` (weighted when reweighted) with ``M_i = [H_i | o_i]`` the affine map ``z ↦ ∇g_i(z)`` and
        ``M̃_i = M_i − mean_j M_j``, from exact gradients at ``z = 0`` and ``z = e_k``."""
        h = self.host
        d = self.dim_x + self.dim_y
        Z = np.concatenate([np.zeros((1, d)), np.eye(d)])[:, None, :]
        x, y = Z[..., :self.dim_x], Z[..., self.dim_x:]
        rows = max(256, min(CHUNK, (1 << 18) // ((d + 1) * d)))
        ref = None
        s1 = np.zeros((d + 1, d))
        s2 = np.zeros((d + 1, d + 1))
        for s in range(0, h.clients, rows):
            idx = np.arange(s, min(s + rows, h.clients))[None]
            G = np.concatenate([h.exact_grad_x_g(idx, x, y), h.exact_grad_y_g(idx, x, y)], -1)
            M = np.concatenate([G[1:] - G[:1], G[:1]])  # (d+1, n, d): H_i e_k for each k, o_i
            if ref is None:
                ref = M[:, :1].copy()
            M -= ref
            Mw = M if h.weights is None else M * h.weights[idx[0]][None, :, None]
            s1 += Mw.sum(1)
            flat = M.reshape(d + 1, -1)
            # einsum, not BLAS: a threaded gemm with tiny output and long inner axis stalls
            # (10-50x) when the cores are busy, and einsum's sum order is fixed
            s2 += np.einsum("ik,jk->ij", Mw.reshape(d + 1, -1), flat)
        if h.weights is None:
            s1, s2 = s1 / h.clients, s2 / h.clients
        Q = s2 - s1 @ s1.T
        return 0.5 * (Q + Q.T)


def ball_max(C: np.ndarray, b: np.ndarray, c0: float, rho: float) -> float:
    """``max_{‖z‖ ≤ ρ} zᵀCz + 2bᵀz + c₀`` for ``C ⪰ 0`` (a trust-region problem).

    By the S-lemma the maximum equals ``min_{λ > λ_max(C)} λρ² + c₀ + Σ_k β_k²/(λ − γ_k)`` with
    ``C = V diag(γ) Vᵀ``, ``β = Vᵀb``; the dual is convex in ``λ`` and its derivative
    ``ρ² − Σ β_k²/(λ − γ_k)²`` has its root in ``(γ_max, γ_max + ‖β‖/ρ]`` (or the minimum sits at
    ``γ_max``, the hard case), found by bisection.  Every dual value is an upper bound, so the
    result errs, by at most the bisection tolerance, on the safe side.
    """
    gam, V = np.linalg.eigh(C)
    gam = np.maximum(gam, 0.0)
    beta2 = (V.T @ b) ** 2
    top = float(gam[-1])
    if rho == 0 or not beta2.any():
        return float(max(top * rho ** 2 + c0, 0.0))

    def dual(lam: float) -> float:
        return lam * rho ** 2 + c0 + float((beta2 / (lam - gam)).sum())

    lo, hi = top, top + float(np.sqrt(beta2.sum())) / rho
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if rho ** 2 - float((beta2 / (mid - gam) ** 2).sum()) > 0:
            hi = mid
        else:
            lo = mid
    return float(max(dual(hi), 0.0))


def shared(M: np.ndarray, clients: int) -> Shared:
    """A :class:`Shared` family (one matrix for all clients)."""
    return Shared(np.asarray(M, dtype=float), clients)


def dense_or_structured(storage: str, clients: int, dims: int) -> str:
    """Resolve ``storage='auto'``: dense per-client matrices for small ``m``."""
    if storage != "auto":
        return storage
    return "dense" if clients <= 1000 and clients * dims <= 2_000_000 else "structured"


__all__ = ["FederatedQuadratic", "KINDS", "Dense", "EigenScaled", "Shared", "ball_max", "block_norm",
           "dense_or_structured", "shared", "symmetric_spectrum"]
