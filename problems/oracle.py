"""Batched stochastic first- and second-order oracles over (replicates, sampled clients).

Every query takes client indices ``idx`` of shape ``(R, n)`` and points broadcastable to
``(R, n, d)``, and returns ``(R, n, d)``: no Python loop over clients or replicates.  Noise is
additive, zero-mean and Gaussian (``E‖ξ‖² = noise²``, minibatches of ``samples`` draws divide
the variance); Hessian/Jacobian samples are ``∇² + hessian_noise·Z`` with ``Z`` a fresh
Gaussian matrix of ``N(0, 1/d_out)`` entries, applied to ``v`` in distribution as
``hessian_noise·‖v‖·ξ/√d_out`` (the same law, at ``O(d)`` cost).  Each evaluation is counted in
an :class:`OracleCounter`, per replicate and summed over clients.

``noise_distribution`` picks the law of the standardized draws ``ξ`` (i.i.d. coordinates, mean
0, variance 1, so every oracle keeps its mean and covariance): ``"gaussian"`` (default; the
stream is the one of earlier versions, draw for draw), ``"rademacher"`` (``±1``, 64 draws per
64-bit output of the generator: the cheapest) or ``"uniform"`` (``U(−√3, √3)``).  The papers'
noise assumptions bound only the mean and the variance (bounded-variance unbiased oracles), so
all three satisfy them; Gaussian draws cost ≈ 10–30 ns each on a CPU core, Rademacher ≈ 1 ns.
Choose it per instance with :func:`with_noise_distribution` (it is part of the instance's
``spec``, hence of its config hash), per oracle with the ``noise_distribution`` keyword, or
for every instance that does not choose with :func:`default_noise_distribution`.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .backend import Backend, get_backend, inplace, mean_over_clients, single_thread_blas
from .quadratic import FederatedQuadratic
from .validation import check_int

NOISE_DISTRIBUTIONS = ("gaussian", "rademacher", "uniform")
_SQRT3 = float(np.sqrt(3.0))


def check_noise_distribution(name: Any) -> str:
    """``name`` if it is one of :data:`NOISE_DISTRIBUTIONS`, else a clear error."""
    if not isinstance(name, str) or name not in NOISE_DISTRIBUTIONS:
        raise ValueError(f"`noise_distribution` must be one of {NOISE_DISTRIBUTIONS}, "
                         f"got {name!r}")
    return name


_DEFAULT_NOISE = contextvars.ContextVar("bilevel_theory_noise_distribution",
                                        default="gaussian")


@contextlib.contextmanager
def default_noise_distribution(name: str):
    """Inside the block, oracles of instances that choose no ``noise_distribution`` draw
    ``name`` noise (``verify --noise-distribution``: the same claims under another law of the
    same mean and covariance).  Per context (thread, task), restored on exit."""
    token = _DEFAULT_NOISE.set(check_noise_distribution(name))
    try:
        yield
    finally:
        _DEFAULT_NOISE.reset(token)


def with_noise_distribution(problem: FederatedQuadratic, name: str) -> FederatedQuadratic:
    """The same instance whose oracles draw ``name`` noise (same mean and covariance); the
    choice is stored in ``problem.spec`` (so it changes the config hash)."""
    name = check_noise_distribution(name)
    if problem.spec.get("noise_distribution", "gaussian") == name:
        return problem
    return replace(problem, spec={**problem.spec, "noise_distribution": name})


#: The first-order oracles (``pair`` and ``client_mean`` take one of these names).
GRADIENTS = ("grad_x_f", "grad_y_f", "grad_y_g", "grad_x_g")


def _check_gradient(kind: Any) -> None:
    if kind not in GRADIENTS:
        raise ValueError(f"`kind` must be a gradient oracle name {GRADIENTS}, got {kind!r}")


def rademacher_signs(raw: bytes, count: int) -> np.ndarray:
    """``count`` fair bits (uint8 0/1) from the generator's raw bytes (8 per byte)."""
    return np.unpackbits(np.frombuffer(raw, dtype=np.uint8), count=count)


def _dot(xp, a, b):
    """``Σ_i a_i b_i`` over the last axis, kept (``(…, 1)``): one pass on host numpy
    (``einsum``; ``(a * b).sum`` makes a temporary and reduces a short axis slowly).  Two
    coordinates are summed column by column, ``a₀b₀ + a₁b₁``: ``einsum``'s own result (its
    lanes past the second are zeros), without its call per entry (83 → 25 µs at
    ``(1536, 8, 2)``)."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.shape[-1] == b.shape[-1] == 2:
            out = a[..., 0:1] * b[..., 0:1]
            out += a[..., 1:2] * b[..., 1:2]
            return out
        return np.einsum("...i,...i->...", a, b)[..., None]
    return (a * b).sum(axis=-1, keepdims=True)


@dataclass(frozen=True)
class ClientMean:
    """The mean over the client axis of what ``clients`` sampled clients would send, computed
    by an averaged oracle call (:meth:`Oracle.client_mean`).  Only
    :meth:`bilevel_theory.algorithm.Context.aggregate` unwraps it, so the upload is counted
    like any other."""

    value: Any  # (R, d)
    clients: int


@dataclass
class OracleCounter:
    """Client-oracle evaluations per replicate, summed over clients (read by the ledger)."""

    grad: float = 0.0
    hvp: float = 0.0
    jvp: float = 0.0

    def snapshot(self) -> tuple[float, float, float]:
        return self.grad, self.hvp, self.jvp


class Oracle:
    """Stochastic oracles of a :class:`FederatedQuadratic` on one backend with one RNG.

    Args:
        problem: the instance (moved to ``backend`` here).
        backend: ``"numpy"`` or ``"cupy"``, or a resolved :class:`Backend`.
        seed: seed of this run's generator (or an existing generator as ``rng``).
    """

    def __init__(self, problem: FederatedQuadratic, backend: str | Backend = "numpy",
                 seed: int | np.random.SeedSequence = 0, *, rng: Any = None,
                 noise_distribution: str | None = None):
        if not isinstance(problem, FederatedQuadratic):
            raise TypeError(f"`problem` must be a problem instance, got {type(problem).__name__}")
        self.backend = backend if isinstance(backend, Backend) else get_backend(backend)
        self.problem = problem.to(self.backend)
        self.xp = self.backend.xp
        self.rng = rng if rng is not None else self.backend.rng(seed)
        self.counter = OracleCounter()
        if noise_distribution is None:
            noise_distribution = problem.spec.get("noise_distribution", _DEFAULT_NOISE.get())
        self.noise_distribution = check_noise_distribution(noise_distribution)

    # ------------------------------------------------------------------ sampling
    def sample_clients(self, replicates: int, n: int, replace: bool = True) -> Any:
        """Client indices ``(replicates, n)``; each row a sample of size ``n`` from ``m`` clients,
        with replacement (i.i.d. uniform) or without (a uniformly random subset in random order).

        Without replacement, ``replicates·m ≤ 2²⁴`` and ``n ≥ m/8`` takes the first ``n`` of a
        random permutation (argsort of uniform keys, ``O(m log m)`` per row); otherwise
        :meth:`_subsets` samples the smaller of the subset and its complement by rejection, in
        time and memory ``O(replicates·n)`` (up to logs).
        """
        m = self.problem.clients
        replicates = check_int("replicates", replicates, minimum=1)
        n = check_int("sampled_clients", n, minimum=1)
        if not isinstance(replace, bool):
            raise TypeError(f"`replace` must be True or False, got {replace!r}")
        xp = self.xp
        if replace:
            return self.rng.integers(0, m, size=(replicates, n))
        if n > m:
            raise ValueError(f"`sampled_clients` must be ≤ clients ({m}) when sampling without "
                             f"replacement, got {n}")
        if n == m:
            return xp.broadcast_to(xp.arange(m), (replicates, m))
        if replicates * m <= 1 << 24 and 8 * n >= m:  # argsort is O(m log m) per row
            keys = self.rng.random((replicates, m))
            return xp.argsort(keys, axis=1)[:, :n]
        rows = xp.arange(replicates)[:, None]
        order = xp.argsort(self.rng.random((replicates, n)), axis=1)
        return self._subsets(replicates, m, n)[rows, order]

    def _subsets(self, replicates: int, m: int, n: int) -> Any:
        """Uniform ``n``-subsets of ``range(m)`` (``0 < n < m``), one per row, sorted."""
        xp = self.xp
        k = min(n, m - n)  # rejection needs few passes only while k ≤ m/2
        idx = xp.sort(self.rng.integers(0, m, size=(replicates, k)), axis=1)
        while True:  # resample duplicates; each pass keeps ≥ half unique (no per-client loop)
            dup = xp.zeros(idx.shape, dtype=bool)
            dup[:, 1:] = idx[:, 1:] == idx[:, :-1]
            count = int(self.backend.to_numpy(dup.sum()))
            if count == 0:
                break
            idx[dup] = self.rng.integers(0, m, size=count)
            idx = xp.sort(idx, axis=1)
        if k == n:
            return idx
        # idx holds the excluded clients e_0 < … < e_{k-1}; the j-th kept client is
        # j + #{t : e_t − t ≤ j}, found for all rows by one searchsorted on disjoint row ranges.
        offset = xp.arange(replicates)[:, None] * (m + 1)
        shifted = (idx - xp.arange(k)[None, :] + offset).reshape(-1)
        j = xp.arange(n)[None, :]
        below = xp.searchsorted(shifted, (j + offset).reshape(-1), side="right")
        return j + below.reshape(replicates, n) - xp.arange(replicates)[:, None] * k

    # ------------------------------------------------------------------ noise & counting
    def _plus_noise(self, exact, scale) -> Any:
        """``exact + scale·ξ`` (``ξ`` i.i.d. standardized draws of ``exact``'s shape, ``scale``
        a float or an array broadcasting against it), in one fresh array: the draws are
        scaled and summed in place.  Gaussian: bitwise the earlier ``exact + scale·ξ``."""
        z = self._scaled_draws(tuple(exact.shape), scale)
        return inplace(np.add, z, exact)

    def _scaled_draws(self, shape: tuple[int, ...], scale) -> Any:
        """``scale·ξ`` in one fresh array of ``shape`` (see :meth:`_plus_noise`)."""
        dist = self.noise_distribution
        if dist == "gaussian":
            return inplace(np.multiply, self.rng.standard_normal(shape), scale)
        if dist == "uniform":
            z = self.rng.random(shape)
            z -= 0.5
            factor = (2.0 * _SQRT3) * scale
        elif self.backend.name == "numpy":  # rademacher: 8 signs per random byte
            count = math.prod(shape)
            bits = rademacher_signs(self.rng.bytes((count + 7) // 8), count).reshape(shape)
            z = np.subtract(0.5, bits, dtype=np.float64)
            factor = 2.0 * scale
        else:  # rademacher on a device generator without raw bytes
            z = self.xp.astype(self.rng.random(shape) < 0.5, self.xp.float64)
            z -= 0.5
            factor = 2.0 * scale
        return inplace(np.multiply, z, factor)

    def _noisy(self, exact, sigma: float, samples: int, count: Any) -> Any:
        if samples != 1:
            samples = check_int("samples", samples, minimum=1)
        self.counter.grad += self._count(exact, samples, count)
        if sigma == 0.0:
            return exact
        return self._plus_noise(exact, sigma / np.sqrt(exact.shape[-1] * samples))

    def _count(self, exact, samples: int, count: Any) -> float:
        reps = exact.shape[0] if exact.ndim >= 3 else 1
        if count is None:
            n = exact.size // exact.shape[-1]
        else:  # an explicit device → host transfer (one synchronisation on a GPU)
            n = float(self.backend.to_numpy(count.sum()))
        return samples * float(n) / reps

    def _second_order(self, exact, v, kind: str, count: Any) -> Any:
        setattr(self.counter, kind, getattr(self.counter, kind) + self._count(exact, 1, count))
        sigma = self.problem.hessian_noise
        if sigma == 0.0:
            return exact
        d = exact.shape[-1]
        norm = self.xp.sqrt(self.xp.vecdot(v, v)[..., None])
        return self._plus_noise(exact, (sigma / np.sqrt(d)) * norm)

    # ------------------------------------------------------------------ first order
    @single_thread_blas
    def grad_x_f(self, idx, x, y, samples: int = 1, count=None):
        """Stochastic ``∇ₓf_i(x, y)``, averaged over ``samples`` draws; ``count`` masks which
        entries were really evaluated (for vectorized code that computes and discards)."""
        return self._noisy(self.problem.exact_grad_x_f(idx, x, y), self.problem.grad_noise,
                           samples, count)

    @single_thread_blas
    def grad_y_f(self, idx, x, y, samples: int = 1, count=None):
        """Stochastic ``∇_y f_i(x, y)``."""
        return self._noisy(self.problem.exact_grad_y_f(idx, x, y), self.problem.grad_noise,
                           samples, count)

    @single_thread_blas
    def grad_y_g(self, idx, x, y, samples: int = 1, count=None):
        """Stochastic ``∇_y g_i(x, y)``."""
        return self._noisy(self.problem.exact_grad_y_g(idx, x, y), self.problem.grad_noise,
                           samples, count)

    @single_thread_blas
    def grad_y_g_at(self, idx, x):
        """:meth:`grad_y_g` at a fixed ``x``, as a function of ``(y, samples=1, count=None)``
        for the steps of an inner loop: the ``x``-dependent part is computed once
        (``exact_grad_y_g_at``); each call counts and draws as :meth:`grad_y_g` does, with
        bitwise the same numbers."""
        exact = self.problem.exact_grad_y_g_at(idx, x)

        @single_thread_blas
        def at(y, samples: int = 1, count=None):
            return self._noisy(exact(y), self.problem.grad_noise, samples, count)
        return at

    @single_thread_blas
    def grad_x_g(self, idx, x, y, samples: int = 1, count=None):
        """Stochastic ``∇ₓg_i(x, y)`` (MemFBO's Lagrangian gradient)."""
        return self._noisy(self.problem.exact_grad_x_g(idx, x, y), self.problem.grad_noise,
                           samples, count)

    @single_thread_blas
    def pair(self, kind: str, idx, x1, y1, x2, y2, count=None):
        """One sample ``ζ`` at two points: ``(∇g_i(x1, y1; ζ), ∇g_i(x2, y2; ζ))`` for ``kind``
        in ``grad_x_f, grad_y_f, grad_y_g, grad_x_g`` (SVRG/STORM corrections, Gao eq. 3.8).
        With additive noise the two draws share the same noise vector; counted as two calls."""
        _check_gradient(kind)
        exact = getattr(self.problem, "exact_" + kind)
        a, b = exact(idx, x1, y1), exact(idx, x2, y2)
        shape = np.broadcast_shapes(a.shape, b.shape)
        a, b = self.xp.broadcast_to(a, shape), self.xp.broadcast_to(b, shape)
        self.counter.grad += 2 * self._count(a, 1, count)
        sigma = self.problem.grad_noise
        if sigma == 0.0:
            return a, b
        noise = self._scaled_draws(shape, sigma / np.sqrt(shape[-1]))
        return inplace(np.add, self.xp.asarray(noise, copy=True), a), inplace(np.add, noise, b)

    def exact(self, kind: str, idx, x, y) -> Any:
        """The noise-free ``kind`` (a gradient oracle name) at ``(x, y)``, **not counted**: only
        to pass as ``reference`` to :meth:`difference` (which counts it)."""
        _check_gradient(kind)
        return getattr(self.problem, "exact_" + kind)(idx, x, y)

    @single_thread_blas
    def difference(self, kind: str, idx, x1, y1, x2, y2, count=None, reference=None) -> Any:
        """``∇g_i(x1, y1; ζ) − ∇g_i(x2, y2; ζ)`` for one sample ``ζ`` (``kind`` a gradient
        oracle name): the noise is additive, so the same sample's noise cancels and the
        difference is exact; nothing is drawn (:meth:`pair` minus its second output, in law).
        ``reference``: the exact ``∇g_i(x2, y2)`` from :meth:`exact` with the same ``idx``,
        reused by SVRG-type local loops.  Counted as two calls per entry."""
        _check_gradient(kind)
        exact = getattr(self.problem, "exact_" + kind)
        ref = exact(idx, x2, y2) if reference is None else reference
        out = exact(idx, x1, y1) - ref
        self.counter.grad += 2 * self._count(out, 1, count)
        return out

    @single_thread_blas
    def client_mean(self, kind: str, idx, x, y, samples: int = 1) -> ClientMean:
        """The clients' mean of ``kind`` (a gradient oracle name) over the last axis of ``idx
        (R, n)``: the same law as averaging ``n`` calls of ``kind``, at ``O(R·d)`` noise draws.

        The ``n`` noise vectors are independent with covariance ``σ²/(dS)·I``, so their mean
        has covariance ``σ²/(dSn)·I``.  It is drawn directly, exact in law, where the law of
        the mean is cheap to sample: Gaussian (a Gaussian of that covariance) and Rademacher
        (``(2B − n)/n`` with ``B ~ Binomial(n, ½)`` per coordinate, the law of a mean of ``n``
        signs); uniform noise averages the ``n`` per-client draws.  With ``x, y`` of shape
        ``(R, 1, d)`` the exact part averages the clients' data before one product
        (``exact_mean_*`` of the instance).  Counted as ``n·samples`` calls per replicate."""
        _check_gradient(kind)
        if samples != 1:
            samples = check_int("samples", samples, minimum=1)
        n = int(idx.shape[-1])
        exact = getattr(self.problem, "exact_mean_" + kind)(idx, x, y)
        self.counter.grad += samples * n
        sigma = self.problem.grad_noise
        if sigma != 0.0:
            scale = sigma / np.sqrt(exact.shape[-1] * samples)
            if self.noise_distribution == "gaussian":
                exact = self._plus_noise(exact, scale / np.sqrt(n))
            elif self.noise_distribution == "rademacher" and hasattr(self.rng, "binomial"):
                signs = self.rng.binomial(n, 0.5, size=tuple(exact.shape))
                exact = exact + (2.0 * scale / n) * (signs - 0.5 * n)
            else:
                shape = tuple(exact.shape[:-1]) + (n, exact.shape[-1])
                exact = exact + mean_over_clients(self._scaled_draws(shape, scale))
        return ClientMean(exact, n)

    # ------------------------------------------------------------------ second order
    @single_thread_blas
    def hvp_yy_g(self, idx, x, y, v, count=None):
        """Stochastic Hessian-vector product ``∇²_{yy}g_i(x, y; ζ) v`` → ``(R, n, dim_y)``."""
        return self._second_order(self.problem.exact_hvp_yy_g(idx, v), v, "hvp", count)

    @single_thread_blas
    def jvp_xy_g(self, idx, x, y, v, count=None):
        """Stochastic Jacobian-vector product ``∇²_{xy}g_i(x, y; ζ) v`` → ``(R, n, dim_x)``."""
        return self._second_order(self.problem.exact_jvp_xy_g(idx, v), v, "jvp", count)

    # ------------------------------------------------------------------ same-sample pairs
    def pair_hvp(self, idx, x1, y1, x2, y2, v1, v2, count=None):
        """One Hessian sample ``∇²_{yy}g_i(·; ζ)`` applied to two vectors at two points (Gao
        eq. 3.8's STORM correction): ``(H(x1, y1; ζ)v₁, H(x2, y2; ζ)v₂)``, the **same** ``Z``
        in both.  Counted as two Hessian-vector products per entry."""
        return self._second_order_pair(self.problem.exact_hvp_yy_g, idx, v1, v2, "hvp", count)

    def pair_jvp(self, idx, x1, y1, x2, y2, v1, v2, count=None):
        """One Jacobian sample ``∇²_{xy}g_i(·; ζ)`` applied at two points: ``(J(ζ)v₁, J(ζ)v₂)``
        with the same ``Z``; counted as two Jacobian-vector products per entry."""
        return self._second_order_pair(self.problem.exact_jvp_xy_g, idx, v1, v2, "jvp", count)

    def _second_order_pair(self, exact_fn, idx, v1, v2, kind: str, count: Any):
        """``(M v₁ + σZv₁, M v₂ + σZv₂)`` with one ``Z`` (``N(0, 1/d_out)`` entries).

        Exact joint law at ``O(d)`` cost: the rows ``w`` of ``√d_out·Z`` are i.i.d. ``N(0, I)``,
        so ``(w·v₁, w·v₂)`` is bivariate normal with the Gram matrix of ``v₁, v₂``; it is
        sampled by its Cholesky factor (``v₂ = (v₁·v₂/‖v₁‖²)v₁ + r``, ``r ⟂ v₁``).  Each
        marginal is the law of :meth:`_second_order` (the standardized draws follow
        ``noise_distribution``; the joint law is exact for the Gaussian default)."""
        xp = self.xp
        a, b = exact_fn(idx, v1), exact_fn(idx, v2)
        shape = np.broadcast_shapes(a.shape, b.shape)
        a, b = xp.broadcast_to(a, shape), xp.broadcast_to(b, shape)
        n = self._count(a, 1, count)
        setattr(self.counter, kind, getattr(self.counter, kind) + 2 * n)
        sigma = self.problem.hessian_noise
        if sigma == 0.0:
            return a, b
        n1 = xp.sqrt(_dot(xp, v1, v1))
        dot = _dot(xp, v1, v2)
        safe = xp.where(n1 > 0, n1, 1.0)
        proj = xp.where(n1 > 0, dot / safe, 0.0)
        resid = v2 - xp.where(n1 > 0, dot / safe ** 2, 0.0) * v1
        rest = xp.sqrt(_dot(xp, resid, resid))
        xi1 = self._scaled_draws(shape, 1.0)  # the oracle's noise_distribution, as the
        xi2 = self._scaled_draws(shape, 1.0)  # marginal of _second_order
        s = sigma / np.sqrt(shape[-1])
        # b + s·(proj·ξ₁ + rest·ξ₂) and a + s·‖v₁‖·ξ₁, in the draws' fresh buffers (``inplace``:
        # the (…, 1) factors and the exact parts, often strided views, broadcast over a short axis)
        second = inplace(np.multiply, xp.asarray(xi1, copy=True), proj)
        inplace(np.multiply, xi2, rest)
        second += xi2
        second *= s
        inplace(np.add, second, b)
        inplace(np.multiply, xi1, s * n1)
        return inplace(np.add, xi1, a), second
