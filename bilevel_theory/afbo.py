"""AFBO — Li, Zhu, Gong, Mao & Zhou, "Anarchic Federated Bilevel Optimization", WiOpt 2024;
it makes FedMBO (Huang, Zhang & Ji, ICML 2023) asynchronous.  Readings ``AFBO-R…``/``AFBO-I…``
and lemmas ``AFBO-L…``: ``docs/papers/afbo.md``.

Problem:
    ``min_x Φ(x) = (1/m) Σ_i f_i(x, y*(x))``, ``y*(x) = argmin_y (1/m) Σ_i g_i(x, y)``; clients
    upload whenever they like (outer delays ``τ_i^t``, inner delays ``ρ_i^k``) with their own
    numbers ``E_i`` of local iterations.

Algorithm (Alg. 1 + Alg. 2 APHE), ages ``a = τ − 1`` (0 = fresh, see below):
    inner step ``k < K``: updating clients send ``G_i = (1/E_i) Σ_{e<E_i} ∇_y g_i(x^t, y_{i,e})``;
    the server keeps each client's latest ``G_i`` and steps
    ``y^{t,k+1} = y^{t,k} − β_t (1/m) Σ_i G_i^{latest}``; then ``y^{t+1} = y^{t,K}``.
    Outer: updating clients upload ``∇_y f_i(x^t, y^{t+1})`` (kept in the server's table) and
    ``H_i = APHE(x^t, y^{t+1})``; the server keeps each client's latest ``H_i`` and steps
    ``x^{t+1} = x^t − η_t (1/m) Σ_i H_i^{latest}`` (all ``m`` clients, most recent update).
    APHE (:func:`aphe`): ``H_i = ∇ₓf_i(x^t, y^{t+1}) − W_i p_i`` with
    ``p_i = (U/ℓ) Π_{l=1}^{U} (I − (1/ℓ)(1/m) Σ_j ∇²_{yy} g_j(stale_j; ζ_{i,l})) (1/m) Σ_j ∇_y f_j(stale_j)``
    and ``W_i p = (1/m) Σ_j ∇²_{xy} g_j(stale_j; φ_i) p``; ``stale_j`` is client ``j``'s last
    outer-upload point.

Theoretical guarantee (upper bounds, Thm. 4.1 / Cor. 4.1, Assumptions 4.1–4.6):
    strongly convex ``f``: ``E‖x^T − x*‖² = O(1/T)`` with ``η = 1/√T``; nonconvex:
    ``(1/T) Σ E‖∇Φ(x^t)‖² = O(1/√(mT) + 1/(m√(mT)) + 1/T)`` with ``η = √(m/T)``, both with
    ``K β² ≤ 1/T`` and ``N = O(log T)`` (:func:`theorem_schedule`).  The delay enters only
    through ``(1/m) Σ_i τ_i^t`` in an ``η²`` term (at most linear in the mean delay τ̄); the
    paper claims most-recent-update aggregation removes the asynchronous bias.

Readings taken (``docs/papers/afbo.md``):
    * AFBO-R1: an update made in the current step has age 0, i.e. it is used at once (paper
      ``τ = 1`` ↔ age 0); every delay 1 is exactly the synchronous algorithm (``afbo`` with
      :class:`Synchronous` equals ``afbo_sync`` bitwise).  A client updating at round ``s``
      computes at the then-current point (``x^s, y^{s+1}``); the server reuses that value
      until the client's next upload.
    * AFBO-I3: every client uploads at the very first step (global step 0) so that the
      server's tables are full; inner and outer delays come from two independent processes of
      the same model unless ``inner_delay`` is given; the inner process runs continuously
      across outer rounds, so a stale ``G_i`` may come from an earlier outer round.
    * AFBO-R2: APHE is evaluated at ``y^{t+1} = y^{t,K}``, not ``y^{t,K−1}``.
    * AFBO-R3: APHE's ``1/N`` is ``1/m``, its ``p_{i,N}`` is ``p_{i,U}``, and ``U`` products are
      taken.  ``truncation="fixed"`` is the paper's deterministic ``U`` (``neumann_steps``,
      default ``U = m``) *as written*: ``(U/ℓ)(I − Ĥ/ℓ)^U`` is **not** an approximation of
      ``[∇²_{yy}g]⁻¹`` (lemma AFBO-L1: at most ``1/e`` of it in every eigendirection, and
      ``→ 0`` as ``U`` grows), so AFBO as written converges to a wrong point.  ``"random"`` is
      FedNest/FedMBO's ``U ~ Unif{0..N−1}`` with the ``N/ℓ`` scale; ``"series"`` is its
      expectation, the truncated series ``(1/ℓ) Σ_{n<N} Π_{l≤n}(I − Ĥ_l/ℓ)`` (bias
      ``(1 − μ_g/ℓ)^N/μ_g``).
    * AFBO-R4: APHE's ``p_{i,0}`` averages the server's table of ``∇_y f_j`` (Alg. 2) rather
      than client ``i``'s own ``∇_y f_i``; one stored sample per client, shared by the chains.
      The Hessian/Jacobian averages over ``j`` are products computed by every client ``j`` at
      its stored point with a fresh sample per chain and step.
    * AFBO-I1: the local iterates ``y_{i,e}`` have no update rule in the paper.  Default
      ``local_step = 0``: the ``E_i`` gradients are drawn at ``y^{t,k}`` (a minibatch of
      ``E_i``); ``local_step > 0`` runs local SGD ``y_{i,e+1} = y_{i,e} − local_step·G_{i,e}``.
    * ``K`` is constant (``inner_steps``); step sizes are constants or callables of ``t``.

Communication (``Context.broadcast``/``aggregate``): inner step — the server broadcasts ``y``,
the updating clients send ``G_i`` (one round); APHE — the server broadcasts ``(x, y)``, the
updating clients send ``∇_y f_i`` and ``d_i = ∇ₓf_i`` (one round); each Neumann step and the
final Jacobian step — the server sends every active chain's vector to the member clients, each
returns its product for every chain (one round; ``vectors=`` counts one vector per chain
served); the server forms ``H_i = d_i − W_i p_i`` and steps ``x``, then broadcasts it.

Ledger (per outer round; ``n_k`` clients update at inner step ``k``, ``n`` at the outer step,
averaged over replicates; uplink/downlink are vectors per client averaged over the ``m``
clients): rounds ``K + S + 2`` with ``S`` the Neumann steps (``U`` fixed, ``N − 1`` series,
``max_{i updating} N_i`` random); grad calls ``Σ_k Σ_{i∈n_k} E_i + 2n``; hvp calls
``m · Σ_{i updating} S_i`` (every client multiplies every updating chain); jvp calls
``n·m``; uplink ``Σ_k n_k/m + 2n/m + Σ_i S_i + n``; downlink ``K + 2 + Σ_i S_i + n + 1``.
``afbo_naive`` replaces ``m`` by the arrived count ``n`` in the client averages.
The ledger counts those pairwise products; :func:`aphe` computes their averages factorised,
exact in law, in ``O(m d²)`` per call without Hessian noise (:func:`aphe_pairwise`: literally).

Args (hyperparameters):
    inner_steps (K), outer_step (η, float or callable of t), inner_step (β, float or callable
    of t), delay (a :class:`DelayModel` or ``"sync"``, ``"bounded:τ_M"``, ``"heavy:α[:cap]"``,
    ``"stragglers:fraction[:slowdown]"``), inner_delay (same, default: the ``delay`` model),
    local_iterations (int, ``"uniform:a-b"`` drawn per inner step, client and replicate, or
    an array of ``m`` ints), local_step (≥ 0), aligned (bool, default True: the aligned mean
    ``(1/E_i)Σ_e``; False: the sum ``Σ_e``), stale_weighting (``afbo`` only: ``"none"``, or
    ``"age"``: the server weights each stored update by its age ``τ_i``), truncation (``"fixed" | "random" | "series"``),
    neumann_steps (``U`` for fixed, default ``m``; ``N`` otherwise, default
    ``⌈κ_g log 10³⌉``), neumann_scale (ℓ, default ``ℓ_{g,1}``), x0, y0.

Returns:
    a :class:`~bilevel_theory.trace.Trace`; ``y`` is ``y^{t+1}``; ``extras``: ``tau_mean``,
    ``tau_max`` (paper convention, fresh = 1, after each round's outer step), ``rho_mean``
    (mean inner delay over the round), ``updating`` (fraction of clients updating the outer
    step), each of shape ``(rounds, R)``.

Example:
    >>> from bilevel_theory.problems import QuadraticBilevel
    >>> from bilevel_theory import run
    >>> prob = QuadraticBilevel.random(clients=8, dim_x=3, dim_y=3, kappa=3, seed=0)
    >>> trace = run("afbo", prob, rounds=40, replicates=2, seed=0, delay="bounded:3",
    ...             truncation="series", neumann_steps=30)
    >>> bool(trace.stationarity[:, -1].mean() < 1e-2 * trace.stationarity[:, 0].mean())
    True
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from bilevel_theory.problems.backend import mean_over_clients, single_thread_blas
from bilevel_theory.problems.validation import check_choice, check_int, check_real

from .algorithm import Algorithm, Context, as_schedule
from .fedmbo import default_neumann_steps
from .hyperparameters import MAX_COUNT

TRUNCATIONS = ("fixed", "random", "series")

try:  # the shared hyperparameter declarations, where present: APHE's U may be left to default
    from dataclasses import replace as _replace

    from .hyperparameters import SCHEMA as _SCHEMA

    _AFBO_SCHEMA = {"neumann_steps": _replace(_SCHEMA["neumann_steps"], optional=True)}
    if "local_iterations" in _SCHEMA:  # an int, "uniform:a-b" or an array (LocalIterations)
        _AFBO_SCHEMA["local_iterations"] = _replace(_SCHEMA["local_iterations"], kind="text")
except ImportError:  # pragma: no cover - older layouts without the schema module
    _AFBO_SCHEMA = {}


# ============================================================================ delay models
class DelayModel:
    """When clients upload: a vectorized process giving, per server step, a boolean
    "updates this step" mask of shape ``(R, m)``.

    Renewal models (every subclass here but :class:`Periodic`) draw, after each upload, the
    gap ``≥ 1`` to the next one; every client uploads at step 0.  The paper's delay of a client
    is then ``τ = 1 + (steps since its last upload)``; a model whose gaps are ``≤ τ_M``
    satisfies Assumption 4.6 with ``τ_M``.
    """

    def check(self, clients: int) -> None:
        """Raise ``ValueError`` if the model cannot serve ``clients`` clients."""

    def gaps(self, xp, rng, shape: tuple[int, int], first: bool):
        """Integer gaps ``≥ 1`` for every entry of ``shape`` (only updating entries are used)."""
        raise NotImplementedError

    def start(self, xp, rng, replicates: int, clients: int,
              to_host: Any = np.asarray) -> DelayProcess:
        """A fresh process for ``replicates × clients``; ``to_host`` brings a 0-d array of
        ``xp`` to the host (``backend.to_numpy``)."""
        self.check(clients)
        return DelayProcess(self, xp, rng, replicates, clients, to_host)


class DelayProcess:
    """The running state of a :class:`DelayModel`: ``age`` (R, m) is the number of steps since
    each client's last upload (0 = uploaded this step); calling it advances one step."""

    def __init__(self, model: DelayModel, xp, rng, replicates: int, clients: int,
                 to_host: Any = np.asarray):
        self.model, self.xp, self.rng, self.to_host = model, xp, rng, to_host
        self._shape = (replicates, clients)
        self.step = 0
        self.next_time = xp.zeros(self._shape, dtype=xp.int64)
        self.age = xp.zeros(self._shape, dtype=xp.int64)

    def __call__(self):
        xp = self.xp
        mask = self.next_time == self.step
        if bool(self.to_host(xp.any(mask))):  # explicit transfer: one sync per step on a GPU
            gaps = self.model.gaps(xp, self.rng, self._shape, first=self.step == 0)
            self.next_time = xp.where(mask, self.step + gaps, self.next_time)
        self.age = xp.where(mask, 0, self.age + 1)
        self.step += 1
        return mask

    @property
    def tau(self):
        """The paper's delay ``τ = age + 1`` (fresh = 1)."""
        return self.age + 1


class Synchronous(DelayModel):
    """Every client uploads at every step (all delays 1): the synchronous algorithm."""

    def gaps(self, xp, rng, shape, first):
        return xp.ones(shape, dtype=xp.int64)

    def __repr__(self) -> str:
        return "Synchronous()"


class BoundedDelay(DelayModel):
    """Gaps uniform on ``{1, …, max_delay}``: random delays with ``τ ≤ τ_M = max_delay``
    (Assumption 4.6 enforced: every client uploads at least once every ``max_delay`` steps).
    ``BoundedDelay(1)`` is synchronous."""

    def __init__(self, max_delay: int):
        self.max_delay = check_int("max_delay", max_delay, minimum=1, maximum=MAX_COUNT)

    def gaps(self, xp, rng, shape, first):
        return 1 + xp.asarray(rng.integers(0, self.max_delay, size=shape), dtype=xp.int64)

    def __repr__(self) -> str:
        return f"BoundedDelay({self.max_delay})"


class HeavyTailedDelay(DelayModel):
    """Discrete Pareto gaps ``⌈U^{−1/α}⌉`` (``P(gap > n) = n^{−α}``, infinite mean for
    ``α ≤ 1``), optionally capped at ``cap`` (then Assumption 4.6 holds with ``τ_M = cap``)."""

    def __init__(self, alpha: float, cap: int | None = None):
        self.alpha = check_real("alpha", alpha, minimum=0.0, strict_minimum=True)
        self.cap = None if cap is None else check_int("cap", cap, minimum=1,
                                                      maximum=MAX_COUNT)

    def mean_delay(self) -> float:
        """The paper's mean delay ``τ̄ = 1 + E[age]`` once the uploads are stationary: a renewal
        process's age has mean ``E[g(g − 1)]/(2E[g])`` for gaps ``g``, here with
        ``P(g = n) = (n − 1)^{−α} − n^{−α}`` (``g ≥ 2``) and the mass above ``cap`` at ``cap``.
        Uncapped it is infinite for ``α ≤ 2`` (``E[g²] = ∞``)."""
        if self.cap is None:
            if self.alpha <= 2.0:
                return math.inf
            raise ValueError("mean_delay needs a `cap` (the uncapped series is not summed)")
        if self.cap == 1:
            return 1.0  # every gap is 1: synchronous
        n = np.arange(2, self.cap + 1, dtype=float)
        p = (n - 1.0) ** -self.alpha - n ** -self.alpha
        p[-1] = (n[-1] - 1.0) ** -self.alpha  # P(g ≥ cap)
        return 1.0 + float((n * (n - 1.0) * p).sum() / (2.0 * (n * p).sum()))

    def gaps(self, xp, rng, shape, first):
        u = 1.0 - xp.asarray(rng.random(shape))  # (0, 1]
        g = xp.minimum(xp.ceil(u ** (-1.0 / self.alpha)), 1e15)
        if self.cap is not None:
            g = xp.minimum(g, float(self.cap))
        return xp.maximum(g, 1.0).astype(xp.int64)

    def __repr__(self) -> str:
        return f"HeavyTailedDelay({self.alpha}, cap={self.cap})"


class Stragglers(DelayModel):
    """A few slow clients: the last ``⌈fraction·m⌉`` clients (or ``clients``, explicit
    indices) have ``slowdown`` times the gaps of ``base`` (default :class:`Synchronous`);
    their first gap is uniform on ``{1, …, slowdown·gap}`` so that they do not arrive
    together.  Gaps ``≤ slowdown·τ_M(base)``."""

    def __init__(self, fraction: float, slowdown: int = 5, base: DelayModel | None = None,
                 clients: Any = None):
        self.fraction = check_real("fraction", fraction, minimum=0.0, maximum=1.0,
                                   strict_minimum=True)
        self.slowdown = check_int("slowdown", slowdown, minimum=1, maximum=MAX_COUNT)
        if base is not None and not isinstance(base, DelayModel):
            raise TypeError(f"`base` must be a DelayModel, got {type(base).__name__}")
        self.base = Synchronous() if base is None else base
        self.clients = None if clients is None else np.asarray(clients)
        if self.clients is not None and (self.clients.ndim != 1 or self.clients.size == 0
                                         or not np.issubdtype(self.clients.dtype, np.integer)):
            raise ValueError("`clients` must be a non-empty 1-D array of client indices")

    def slow(self, clients: int) -> np.ndarray:
        """Boolean (m,) mask of the stragglers."""
        out = np.zeros(clients, dtype=bool)
        if self.clients is None:
            out[clients - max(1, math.ceil(self.fraction * clients - 1e-9)):] = True
        else:
            if self.clients.min() < 0 or self.clients.max() >= clients:
                raise ValueError(f"`clients` must be indices in [0, {clients}), got "
                                 f"{self.clients.tolist()}")
            out[self.clients] = True
        return out

    def check(self, clients):
        self.slow(clients)
        self.base.check(clients)

    def gaps(self, xp, rng, shape, first):
        g = self.base.gaps(xp, rng, shape, first)
        slow = xp.asarray(self.slow(shape[1]))[None, :]
        long = g * self.slowdown
        if first:
            long = 1 + xp.floor(xp.asarray(rng.random(shape)) * long).astype(xp.int64)
        return xp.where(slow, long, g)

    def __repr__(self) -> str:
        return f"Stragglers({self.fraction}, slowdown={self.slowdown}, base={self.base!r})"


class Periodic(DelayModel):
    """Deterministic: client ``i`` uploads at steps ``0, P_i, 2P_i, …`` (``periods``, one int
    ``≥ 1`` per client; the same in every replicate).  Useful for hand-counted tests."""

    def __init__(self, periods: Any):
        p = np.asarray(periods)
        if p.ndim != 1 or p.size == 0 or not np.issubdtype(p.dtype, np.integer) or p.min() < 1:
            raise ValueError(f"`periods` must be a 1-D array of integers ≥ 1, got {periods!r}")
        self.periods = p.astype(np.int64)

    def check(self, clients):
        if self.periods.size != clients:
            raise ValueError(f"`periods` must have one entry per client ({clients}), got "
                             f"{self.periods.size}")

    def gaps(self, xp, rng, shape, first):
        return xp.broadcast_to(xp.asarray(self.periods)[None, :], shape)

    def __repr__(self) -> str:
        return f"Periodic({self.periods.tolist()})"


DELAY_SPECS = ("sync", "bounded:<max_delay>", "heavy:<alpha>[:<cap>]",
               "stragglers:<fraction>[:<slowdown>]")


def make_delay(spec: Any, name: str = "delay") -> DelayModel:
    """A :class:`DelayModel` from a model or a string spec (``"sync"``, ``"bounded:3"``,
    ``"heavy:1.5"``, ``"heavy:1.5:20"``, ``"stragglers:0.1"``, ``"stragglers:0.1:5"``)."""
    if isinstance(spec, DelayModel):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"`{name}` must be a DelayModel or a string spec, got "
                        f"{type(spec).__name__}")
    kind, *args = spec.strip().lower().split(":")
    bad = ValueError(f"`{name}` must be a DelayModel or one of {list(DELAY_SPECS)}, got {spec!r}")
    try:
        if kind in ("sync", "synchronous") and not args:
            return Synchronous()
        if kind == "bounded" and len(args) == 1:
            return BoundedDelay(_int_arg(args[0], name))
        if kind == "heavy" and len(args) in (1, 2):
            cap = _int_arg(args[1], name) if len(args) == 2 else None
            return HeavyTailedDelay(float(args[0]), cap)
        if kind == "stragglers" and len(args) in (1, 2):
            slow = _int_arg(args[1], name) if len(args) == 2 else 5
            return Stragglers(float(args[0]), slow)
    except ValueError as err:
        if str(err).startswith("`"):
            raise ValueError(f"`{name}` = {spec!r}: {err}") from err
        raise bad from err
    raise bad


def _int_arg(text: str, name: str) -> int:
    try:
        return int(text)
    except ValueError as err:
        raise ValueError(f"`{name}`: expected an integer, got {text!r}") from err


# ============================================================================ local iterations
class LocalIterations:
    """Per-client numbers ``E_i`` of local iterations: a constant, ``"uniform:a-b"`` (drawn
    per inner step, client and replicate from ``{a, …, b}``) or an array of ``m`` ints."""

    def __init__(self, spec: Any, clients: int):
        self.spec, self.low, self.high, self.array = spec, None, None, None
        if isinstance(spec, numbers.Integral) and not isinstance(spec, bool):
            self.low = self.high = check_int("local_iterations", spec, minimum=1,
                                             maximum=MAX_COUNT)
        elif isinstance(spec, str):
            kind, _, rng = spec.strip().lower().partition(":")
            lo, _, hi = rng.partition("-")
            try:
                a, b = int(lo), int(hi)
            except ValueError:
                a = b = 0
            if kind != "uniform" or not 1 <= a <= b <= MAX_COUNT:
                raise ValueError("`local_iterations` must be an int ≥ 1, 'uniform:a-b' with "
                                 f"1 ≤ a ≤ b ≤ {MAX_COUNT:.0e}, or an array of {clients} ints "
                                 f"≥ 1, got {spec!r}")
            self.low, self.high = a, b
        else:
            arr = np.asarray(spec)
            if (arr.shape != (clients,) or not np.issubdtype(arr.dtype, np.integer)
                    or arr.min() < 1 or arr.max() > MAX_COUNT):
                raise ValueError("`local_iterations` must be an int ≥ 1, 'uniform:a-b' with "
                                 f"1 ≤ a ≤ b, or an array of {clients} ints in [1, "
                                 f"{MAX_COUNT:.0e}], got {spec!r}")
            self.array = arr.astype(np.int64)
            self.high = int(arr.max())

    def draw(self, xp, rng, shape):
        """``E`` of shape ``(R, m)``."""
        if self.array is not None:
            return xp.broadcast_to(xp.asarray(self.array)[None, :], shape)
        if self.low == self.high:
            return xp.full(shape, self.low, dtype=xp.int64)
        return self.low + xp.asarray(rng.integers(0, self.high - self.low + 1, size=shape),
                                     dtype=xp.int64)


def aligned_gradients(ctx: Context, x, y, E, e_max: int, local_step: float = 0.0, count=None,
                      aligned: bool = True, grad=None):
    """AFBO Alg. 1 lines 5–8 for all ``m`` clients: ``G_i = (1/E_i) Σ_{e<E_i} ∇_y g_i(x, y_{i,e})``
    with ``y_{i,0} = y`` and ``y_{i,e+1} = y_{i,e} − local_step·∇_y g_i(x, y_{i,e})``
    (``aligned=False``: the unaligned sum ``Σ_e``, which weights client ``i`` by ``E_i``).

    ``x (R, dim_x)``, ``y (R, dim_y)``, ``E (R, m)`` with ``1 ≤ E_i ≤ e_max`` (``e_max = 1``:
    every ``E_i = 1``, no local loop); ``count (R, m)`` marks the clients that
    really compute (the rest are computed and discarded, not counted).  ``grad``: the
    :func:`inner_gradient` at ``x``, built once per outer round by a caller that takes several
    inner steps at the same ``x`` (built here when ``None``).  Returns ``(R, m, dim_y)``.
    """
    y_loc = y[:, None, :]
    ctx.hold(x.shape[-1], 2 * y.shape[-1])
    grad = inner_gradient(ctx, x, E.shape[1]) if grad is None else grad
    if e_max == 1:  # every E_i = 1: one live gradient per client, G_i = ∇_y g_i(x, y)
        return grad(y_loc, count=count)
    total = None
    for e in range(e_max):
        live = E > e
        g = grad(y_loc, count=live if count is None else live & count)
        g = ctx.xp.where(live[..., None], g, 0.0)
        total = g if total is None else total + g
        if local_step > 0.0:
            y_loc = y_loc - local_step * g
    return total / E[..., None] if aligned else total


def inner_gradient(ctx: Context, x, m: int):
    """``y ↦ ∇_y g_i(x, y; ξ)`` for every client ``i < m`` at the fixed upper-level point
    ``x (R, dim_x)`` (the oracle's ``grad_y_g_at``): the inner steps of one outer round share
    its ``x``-dependent part."""
    xp = ctx.xp
    idx = xp.broadcast_to(xp.arange(m)[None, :], (x.shape[0], m))
    return ctx.oracle.grad_y_g_at(idx, x[:, None, :])


# ============================================================================ APHE


def _aphe_arguments(ctx: Context, truncation: str, scale: float, neumann_steps, active,
                    members):
    """Validated ``(ℓ, N, active, members)`` of :func:`aphe` (``N = U``, default ``m``, for
    ``"fixed"``); masks default to all ``m`` clients."""
    check_choice("truncation", truncation, TRUNCATIONS)
    scale = check_real("scale", scale, minimum=0.0, strict_minimum=True)
    xp, R, m = ctx.xp, ctx.replicates, ctx.problem.clients
    if neumann_steps is None:
        if truncation != "fixed":
            raise ValueError("`neumann_steps` is required for truncation 'random' or 'series'")
        neumann_steps = m
    N = check_int("neumann_steps", neumann_steps, minimum=0 if truncation == "fixed" else 1)
    act = xp.ones((R, m), dtype=bool) if active is None else active
    mem = xp.ones((R, m), dtype=bool) if members is None else members
    return scale, N, act, mem


def aphe(ctx: Context, x, y, grad_y_f_table, x_at=None, y_at=None, *, scale: float,
         truncation: str = "fixed", neumann_steps: int | None = None, active=None,
         members=None):
    """AFBO's Anarchic Parallel Hypergradient Estimator (Li, Zhu, Gong, Mao & Zhou, WiOpt 2024,
    Alg. 2) for all ``m`` chains at once, without the ``m × m`` (chain, client) products.

    ``H_i = ∇ₓf_i(x, y) − W_i M_i v`` with ``v = mean_j grad_y_f_table_j`` (the server's
    stored, possibly stale ``∇_y f_j``), ``W_i p = mean_j ∇²_{xy}g_j(at_j; φ_i) p`` and
    ``M_i`` the inverse-Hessian estimate built from ``mean_j ∇²_{yy}g_j(at_j; ζ_{i,l})``:

    * ``"fixed"`` (as written, U = ``neumann_steps``, default ``m``): ``(U/ℓ) Π_{l=1}^U (I − Ĥ_l/ℓ)``;
    * ``"random"`` (FedNest/FedMBO): ``(N/ℓ) Π_{l=1}^{N_i} (I − Ĥ_l/ℓ)``, ``N_i ~ U{0..N−1}``;
    * ``"series"``: ``(1/ℓ) Σ_{n=0}^{N−1} Π_{l=1}^{n} (I − Ĥ_l/ℓ)`` (the expectation of random).

    Exact in law, factorised (:func:`aphe_pairwise` computes the pairs literally).  At hop
    ``l`` chain ``i`` receives, from the ``n`` member clients ``j``, ``∇²_{yy}g_j(ζ_{ijl}) p_i
    = A_j p_i + s‖p_i‖ξ_{ijl}`` (the oracle's Hessian noise, ``s = σ_H/√d``, ``ξ`` i.i.d.
    standardized draws, independent of the past); the Hessians of the quadratic instances do
    not depend on the point, so the stored points ``at_j`` do not enter.  ``p_i`` is common to
    the ``n`` terms, hence their mean is ``Ā p_i + s‖p_i‖ ξ̄_{il}`` with ``Ā = (1/n) Σ_j A_j``
    and ``ξ̄_{il} = (1/n) Σ_j ξ_{ijl}``, again i.i.d. over ``(i, l)`` and independent of the
    past: every chain has the pairwise version's transition law, so the estimates ``(H_i)_i``
    have its joint law (noise-free: its values).  ``ξ̄`` is drawn directly: Gaussian
    ``N(0, I/n)``; Rademacher ``(2B − n)/n``, ``B ~ Binomial(n, ½)``; uniform as the mean of
    ``n`` draws (no cheap exact sampler: ``O(m)`` draws per product, the one quadratic path).
    The same holds for the Jacobian round with ``B̄``.  ``Ā`` and ``B̄`` are formed once per
    call (``d_y`` averaged products over the ``m`` clients).  Without Hessian noise every
    chain starts at the same vector and applies the same exact map, so all chains follow one
    trajectory, computed once (:func:`_shared_trajectory`; a chain stops at its truncation;
    with ``members``, whose operators differ per replicate, one trajectory per truncation
    class, ``O(N d²)`` per hop): the hops cost ``O(d²)`` each, a call ``O(m d² + S d²)`` for
    ``S`` hops.  With Hessian noise every chain draws its own products: ``O(m S d²)``, linear
    in ``m`` for ``"random"``/``"series"`` (``S < N``), ``O(m² d²)`` for ``"fixed"`` with its
    default ``U = m``.  The ledger counts what the pairwise rounds send and compute.

    Args:
        x (R, dim_x), y (R, dim_y): the current point (``x^t, y^{t+1}``).
        grad_y_f_table (R, m, dim_y): the stored ``∇_y f_j``.
        x_at (R, m, dim_x), y_at (R, m, dim_y): each client's stored point (default: current;
            the quadratic instances' second derivatives do not depend on it).
        scale: ``ℓ`` (> 0).
        active (R, m) bool: chains really computed (updating clients), default all.
        members (R, m) bool: clients entering the averages over ``j`` (``afbo_naive``: the
            arrived ones), default all ``m``.
    Returns:
        ``H (R, m, dim_x)`` (inactive chains computed but not counted).
    """
    scale, N, act, mem = _aphe_arguments(ctx, truncation, scale, neumann_steps, active, members)
    xp, oracle, R = ctx.xp, ctx.oracle, ctx.replicates
    problem, m = oracle.problem, ctx.problem.clients
    dx, dy = x.shape[-1], y.shape[-1]
    idx = xp.broadcast_to(xp.arange(m)[None, :], (R, m))
    # round 1: the server sends (x^t, y^{t+1}); the updating clients return ∇_y f_i and d_i
    ctx.broadcast(x, y)
    d = oracle.grad_x_f(idx, x[:, None, :], y[:, None, :], count=act)
    ctx.upload(grad_y_f_table, d, weights=act)  # counted: the fresh entries are sent
    v = mean_over_clients(grad_y_f_table, members)  # (R, dim_y), the server's table
    if members is None:  # the same at every call of a run: the Hessians are constant
        if "aphe_operators" not in ctx.memo:
            ctx.memo["aphe_operators"] = _client_mean_operators(xp, problem, dy, idx[:1], None)
        hess, jac = ctx.memo["aphe_operators"]
    else:
        hess, jac = _client_mean_operators(xp, problem, dy, idx, members)
    S = N if truncation == "fixed" else N - 1  # hops
    if truncation == "random":
        last = xp.where(act, ctx.rng.integers(0, N, size=(R, m)), -1)  # last hop; −1: idle
    else:
        last = xp.where(act, S, -1)
    avg = _AveragedRounds(ctx, problem.hessian_noise, mem)
    if avg.sigma != 0.0:  # every chain draws its own products: one class per chain
        cls, size, hops = None, None, last
    else:  # exact products: the chains with the same last hop share their trajectory
        hops = xp.arange(-1, S + 1)[None, :] if truncation == "random" else xp.asarray([[-1, S]])
        cls = last + 1 if truncation == "random" else xp.astype(act, xp.int64)
        size = xp.sum(cls[..., None] == xp.arange(hops.shape[1]), axis=1)  # chains per class
    p = xp.broadcast_to(((1 if truncation == "series" else N) / scale) * v[:, None, :],
                        (R, hops.shape[1], dy))
    total, on = p, hops >= 1
    counts = avg.ledger(on, size)  # the same at every hop but the random truncation's
    if truncation == "fixed" and cls is not None:  # exact products: p ↦ p (I − Ā/ℓ), S times
        avg.count("hvp", counts, times=S)
        step = xp.linalg.matrix_power(xp.eye(dy) - hess / scale, S)
        p = xp.where(on[..., None], xp.matmul(p, step), p)
        S = 0
    if cls is not None and truncation != "fixed" and hess.shape[0] == 1:  # shared operators
        p = total = _shared_trajectory(avg, hess, p[:, :1], hops, size, S, scale, truncation)
        S = 0
    per_hop = avg.ledgers(hops, size, S) if truncation == "random" else [counts] * S
    for hop, counts in enumerate(per_hop, start=1):
        if truncation == "random":
            on = hops >= hop
        p = p - avg.product("hvp", hess, p, on, counts) / scale
        total = total + p
    if truncation == "series":
        p = total
    # last round: the members return ∇²_{xy}g_j p_i; the server forms H_i = d_i − W_i p_i
    on = hops >= 0
    W = avg.product("jvp", jac, p, on, avg.ledger(on, size))
    if cls is not None:
        W = xp.take_along_axis(W, cls[..., None], axis=1)
    ctx.hold(2 * dx, 2 * dy)
    return d - W


def _shared_trajectory(avg: _AveragedRounds, hess, start, hops, size, S: int, scale: float,
                       truncation: str):
    """The exact products' chain classes ``(R, c, d)`` for the ``"random"`` and ``"series"``
    truncations: every class starts at ``start (R, 1, d)`` and applies the same exact map
    ``p ↦ p − p Ā/ℓ`` until its last hop ``hops[j] ≤ S``, so one trajectory serves them all
    (``S`` hops of ``(R, 1, d)`` instead of ``(R, c, d)``).  ``"random"``: class ``j`` holds
    the trajectory after ``max(hops[j], 0)`` hops; ``"series"``: the running sum of the
    trajectory (its classes are ``[idle, S]``).  Each hop's ledger still counts the classes
    that run, as the pairwise rounds do."""
    xp = avg.ctx.xp
    every = xp.ones((1, 1), dtype=bool)
    points, total = [start], start
    for counts in avg.ledgers(hops, size, S):
        q = points[-1]
        points.append(q - avg.product("hvp", hess, q, every, counts) / scale)
        total = total + points[-1]
    if truncation == "series":
        return xp.concat([start, total], axis=1)  # the idle class keeps its start, unused
    return xp.concat([points[0]] + points, axis=1)  # class 0 is idle: its start, unused


def _client_mean_operators(xp, problem, d_in: int, idx, weights):
    """The clients' mean Hessian and Jacobian operators of :func:`aphe`
    (:func:`_client_mean_operator` of ``exact_hvp_yy_g`` and ``exact_jvp_xy_g``)."""
    return (_client_mean_operator(xp, problem.exact_hvp_yy_g, d_in, idx, weights),
            _client_mean_operator(xp, problem.exact_jvp_xy_g, d_in, idx, weights))


def _client_mean_operator(xp, product, d_in: int, idx, weights):
    """``T (R or 1, d_in, d_out)`` with ``T[r, k] = Σ_j w_rj M_j e_k / Σ_j w_rj`` over the
    clients ``idx (R or 1, m)`` of ``product(idx, v) = M_idx v`` (``weights`` ``None``: the
    plain mean), so that ``p @ T`` is the clients' mean of ``M_j p`` for every row ``p``."""
    eye = xp.eye(d_in)
    return xp.stack([mean_over_clients(product(idx, eye[k][None, None, :]), weights)
                     for k in range(d_in)], axis=-2)


class _AveragedRounds:
    """APHE's averaged pairwise rounds (see :func:`aphe`): counting, exact part, averaged
    Hessian noise."""

    def __init__(self, ctx: Context, sigma: float, members):
        xp = ctx.xp
        self.ctx, self.sigma, self.members = ctx, float(sigma), members
        self.n = xp.sum(xp.astype(members, xp.int64), axis=1)  # (R,) clients per average
        self.share = xp.mean(xp.astype(members, xp.float64), axis=1)  # member fraction
        self.serving = (self.n > 0)[:, None]  # (R, 1): replicates with a member
        self.root_n = xp.sqrt(xp.reshape(xp.maximum(self.n, 1), (-1, 1, 1)) * 1.0)

    def ledger(self, on, size) -> tuple[float, float, float]:
        """What one pairwise round of the chain classes that run (``on (R, c)``; ``size``
        chains per class, ``None``: one) counts: the fraction of replicates communicating, the
        vectors each client receives and returns (mean over the ``m`` clients: each member
        serves every running chain), the products per replicate (chains × members)."""
        ctx, xp = self.ctx, self.ctx.xp
        chains = xp.sum(on * 1.0 if size is None else on * size, axis=1)  # (R,) running
        rounds, vectors, products = self._counts(chains)
        return (ctx.scalar(rounds), ctx.scalar(vectors), ctx.scalar(products) / ctx.replicates)

    def ledgers(self, hops, size, S: int) -> list[tuple[float, float, float]]:
        """:meth:`ledger` of hops ``1 … S`` at once for classes ending at ``hops (1 or R, c)``
        (``on = hops ≥ hop``): the same numbers, three transfers instead of ``3S``."""
        ctx, xp = self.ctx, self.ctx.xp
        on = hops[None, :, :] >= xp.reshape(xp.arange(1, S + 1), (S, 1, 1))  # (S, ·, c)
        chains = xp.sum(on * 1.0 if size is None else on * size, axis=2)  # (S, R) running
        rounds, vectors, products = (ctx.oracle.backend.to_numpy(a) for a in self._counts(chains))
        return [(float(rounds[h]), float(vectors[h]), float(products[h]) / ctx.replicates)
                for h in range(S)]

    def _counts(self, chains):
        """The three counts of :meth:`ledger` from the running chains ``(…, R)`` per replicate,
        reduced over the replicates (the last axis)."""
        xp = self.ctx.xp
        return (xp.mean(xp.astype(chains > 0, xp.float64), axis=-1),
                xp.mean(chains * self.share, axis=-1), xp.sum(chains * self.n, axis=-1))

    def count(self, kind: str, counts: tuple[float, float, float], times: int = 1) -> None:
        """Count ``times`` rounds of :meth:`ledger` ``counts`` (``kind``: ``"hvp"``/``"jvp"``)."""
        rounds, vectors, products = counts
        self.ctx.communicate(times * rounds, up=times * vectors, down=times * vectors)
        counter = self.ctx.oracle.counter
        setattr(counter, kind, getattr(counter, kind) + times * products)

    def product(self, kind: str, op, p, on, counts: tuple[float, float, float]):
        """One round for the chain classes ``p (R, c, d)`` that run (``on``; ``counts`` its
        :meth:`ledger`): the server sends each chain's vector to the members, each returns its
        product per chain, the server's per-chain mean is ``p @ op`` plus the mean of the
        ``n`` members' noise.  Idle classes get 0."""
        xp = self.ctx.xp
        self.count(kind, counts)
        with single_thread_blas:
            if op.shape[0] == 1:  # one operator for every replicate: a single 2-D product
                out = xp.reshape(xp.reshape(p, (-1, p.shape[-1])) @ op[0],
                                 (*p.shape[:-1], op.shape[-1]))
            else:
                out = p @ op
        if self.sigma != 0.0:
            d_out = out.shape[-1]
            norm = xp.sqrt(xp.sum(p * p, axis=-1, keepdims=True))
            out = out + (self.sigma / math.sqrt(d_out)) * norm * self._mean_draws(out.shape)
        return xp.where((on & self.serving)[..., None], out, 0.0)

    def _mean_draws(self, shape):
        """The mean of ``n`` i.i.d. standardized draws of the oracle's noise law for every
        entry of ``shape (R, c, d)`` (``n`` the replicate's members), exact in law."""
        ctx, xp = self.ctx, self.ctx.xp
        rng, law = ctx.oracle.rng, ctx.oracle.noise_distribution
        n = xp.reshape(xp.maximum(self.n, 1), (-1, 1, 1))
        if law == "gaussian":
            return rng.standard_normal(shape) / self.root_n
        if law == "rademacher" and hasattr(rng, "binomial"):
            return (2.0 * rng.binomial(n, 0.5, size=shape) - n) / n
        u = rng.random((shape[0], shape[1], self.members.shape[1], shape[2]))  # (R, c, m, d)
        z = (u - 0.5) * (2.0 * math.sqrt(3.0)) if law == "uniform" else xp.where(u < 0.5, 1.0,
                                                                                   -1.0)
        return mean_over_clients(z, self.members[:, None, :])


def aphe_pairwise(ctx: Context, x, y, grad_y_f_table, x_at=None, y_at=None, *, scale: float,
                  truncation: str = "fixed", neumann_steps: int | None = None, active=None,
                  members=None):
    """:func:`aphe` computed literally: every (chain ``i``, client ``j``) product of every hop,
    ``O(m² d²)`` per hop.  The reference that the factorised :func:`aphe` is tested against
    (equal noise-free, equal in law with noise); same arguments, same ledger."""
    scale, N, act, mem = _aphe_arguments(ctx, truncation, scale, neumann_steps, active, members)
    xp, oracle, R = ctx.xp, ctx.oracle, ctx.replicates
    m = ctx.problem.clients
    dx, dy = x.shape[-1], y.shape[-1]
    idx = xp.broadcast_to(xp.arange(m)[None, :], (R, m))
    # pairwise (chain i, client j) queries, flattened to the oracle's (R, n) layout
    pair_idx = xp.reshape(xp.broadcast_to(xp.arange(m)[None, None, :], (R, m, m)), (R, m * m))
    xa = x[:, None, :] if x_at is None else x_at
    ya = y[:, None, :] if y_at is None else y_at
    xa = xp.reshape(xp.broadcast_to(xa[:, None], (R, m, m, dx)), (R, m * m, dx))
    ya = xp.reshape(xp.broadcast_to(ya[:, None], (R, m, m, dy)), (R, m * m, dy))

    def pairwise(kind, p, chains):
        """One round: the server sends each chain's vector to the member clients, every
        member returns its product for every chain, the server averages per chain."""
        d_out = dy if kind == "hvp_yy_g" else dx
        v = xp.reshape(xp.broadcast_to(p[:, :, None, :], (R, m, m, dy)), (R, m * m, dy))
        pairs = chains[:, :, None] & mem[:, None, :]  # (R, chain i, client j)
        served = mem * xp.sum(chains, axis=1, keepdims=True)  # vectors per client (R, m)
        ctx.broadcast(p, vectors=served)
        out = getattr(oracle, kind)(pair_idx, xa, ya, v, count=xp.reshape(pairs, (R, m * m)))
        return ctx.aggregate(xp.reshape(out, (R, m, m, d_out)), axis=2, weights=pairs,
                             active=xp.any(chains, axis=1), vectors=served)

    # round 1: the server sends (x^t, y^{t+1}); the updating clients return ∇_y f_i and d_i
    ctx.broadcast(x, y)
    d = oracle.grad_x_f(idx, x[:, None, :], y[:, None, :], count=act)
    ctx.upload(grad_y_f_table, d, weights=act)  # counted: the fresh entries are sent
    v = mean_over_clients(grad_y_f_table, members)  # (R, dim_y), the server's table
    if truncation == "random":
        trunc = ctx.rng.integers(0, N, size=(R, m))
        p = xp.broadcast_to((N / scale) * v[:, None, :], (R, m, dy))
        for l in range(1, N):
            on = act & (trunc >= l)
            p = xp.where(on[..., None], p - pairwise("hvp_yy_g", p, on) / scale, p)
    else:
        S = N if truncation == "fixed" else N - 1
        p = xp.broadcast_to(((N if truncation == "fixed" else 1) / scale) * v[:, None, :],
                            (R, m, dy))
        total = p
        for _ in range(S):
            p = p - pairwise("hvp_yy_g", p, act) / scale
            total = total + p
        if truncation == "series":
            p = total
    # last round: the members return ∇²_{xy}g_j p_i; the server forms H_i = d_i − W_i p_i
    H = d - pairwise("jvp_xy_g", p, act)
    ctx.hold(2 * dx, 2 * dy)
    return H


# ============================================================================ algorithms
def theorem_schedule(rounds: int, clients: int, inner_steps: int, *,
                     case: str = "nonconvex", eta_scale: float = 1.0,
                     beta_max: float | None = None, kappa_g: float = 1.0) -> dict[str, Any]:
    """Cor. 4.1's schedule with the constants chosen: ``η = c·√(1/T)`` (strongly convex) or
    ``η = c·√(m/T)`` (nonconvex), ``β = min(β_max, 1/√(K T))`` so that ``K β² ≤ 1/T``, and
    ``N = ⌈κ_g log T⌉`` (``N = O(log T)``, making ``b² = O(T^{−2})``).  ``N`` is only used by
    the ``"random"``/``"series"`` truncations; APHE as written uses ``U = m`` regardless.
    Returns hyperparameters ``outer_step, inner_step, neumann_steps``."""
    T = check_int("rounds", rounds, minimum=1)
    m = check_int("clients", clients, minimum=1)
    K = check_int("inner_steps", inner_steps, minimum=1)
    check_choice("case", case, ("strongly_convex", "nonconvex"))
    c = check_real("eta_scale", eta_scale, minimum=0.0, strict_minimum=True)
    kappa_g = check_real("kappa_g", kappa_g, minimum=1.0)
    eta = c * math.sqrt((1.0 if case == "strongly_convex" else m) / T)
    beta = 1.0 / math.sqrt(K * T)
    if beta_max is not None:
        beta = min(beta, check_real("beta_max", beta_max, minimum=0.0, strict_minimum=True))
    return dict(outer_step=eta, inner_step=beta,
                neumann_steps=max(1, math.ceil(kappa_g * math.log(max(T, 2)))))


def _common_validate(alg: Algorithm, hp: dict[str, Any]) -> dict[str, Any]:
    m = alg.problem.clients
    alg._local = LocalIterations(hp["local_iterations"], m)
    hp["local_step"] = check_real("local_step", hp["local_step"], minimum=0.0)
    if not isinstance(hp["aligned"], bool):
        raise TypeError(f"`aligned` must be a bool, got {type(hp['aligned']).__name__}")
    hp["truncation"] = check_choice("truncation", hp["truncation"], TRUNCATIONS)
    if hp["neumann_steps"] is None and hp["truncation"] != "fixed":
        hp["neumann_steps"] = default_neumann_steps(alg.problem.constants, alg.problem)
    hp["neumann_scale"] = check_real("neumann_scale", hp["neumann_scale"], minimum=0.0,
                                     strict_minimum=True)
    return hp


_DEFAULTS = dict(
    inner_steps=10,
    outer_step=lambda c, p: 0.5 / c["L_phi"],
    inner_step=lambda c, p: 1.0 / (2.0 * c["ell_g1"]),
    local_iterations=1, local_step=0.0, aligned=True,
    truncation="fixed", neumann_steps=None,
    neumann_scale=lambda c, p: c["ell_g1"],
    x0=None, y0=None,
)


class AFBOSync(Algorithm):
    """AFBO with every delay 1: the synchronous algorithm, written directly (no tables): the
    baseline that ``afbo`` with :class:`Synchronous` must reproduce bitwise."""

    name = "afbo_sync"
    defaults = dict(_DEFAULTS)
    schema = _AFBO_SCHEMA

    def validate(self, hp):
        return _common_validate(self, super().validate(hp))

    def init(self, ctx: Context):
        return self.starting_point(ctx)

    def step(self, ctx: Context, state, t: int):
        hp, xp, R, m = self.hp, ctx.xp, ctx.replicates, self.problem.clients
        eta, beta = as_schedule("outer_step", hp["outer_step"]), as_schedule(
            "inner_step", hp["inner_step"])
        x, y = state["x"], state["y"]
        grad = inner_gradient(ctx, x, m)
        for _ in range(hp["inner_steps"]):
            E = self._local.draw(xp, ctx.rng, (R, m))
            ctx.broadcast(y)
            G = aligned_gradients(ctx, x, y, E, self._local.high, hp["local_step"],
                                  aligned=hp["aligned"], grad=grad)
            y = y - beta(t) * ctx.aggregate(G)
        idx = xp.broadcast_to(xp.arange(m)[None, :], (R, m))
        fy = ctx.oracle.grad_y_f(idx, x[:, None, :], y[:, None, :])
        H = aphe(ctx, x, y, fy, scale=hp["neumann_scale"], truncation=hp["truncation"],
                 neumann_steps=hp["neumann_steps"])
        x = x - eta(t) * mean_over_clients(H)  # the server's mean of the H_i it has just formed
        ctx.broadcast(x)
        ones = xp.ones(R)
        for key in ("tau_mean", "tau_max", "rho_mean", "updating"):
            ctx.record(key, ones)
        return dict(x=x, y=y)


class AFBO(Algorithm):
    """AFBO (Alg. 1 + APHE): most-recent-update aggregation over all ``m`` clients under a
    delay model (see module docstring)."""

    name = "afbo"
    defaults = dict(_DEFAULTS, delay="bounded:3", inner_delay=None, stale_weighting="none")
    schema = _AFBO_SCHEMA
    aggregation = "recent"

    def validate(self, hp):
        hp = _common_validate(self, super().validate(hp))
        m = self.problem.clients
        self._delay = make_delay(hp["delay"], "delay")
        self._inner_delay = (self._delay if hp["inner_delay"] is None
                             else make_delay(hp["inner_delay"], "inner_delay"))
        self._delay.check(m)
        self._inner_delay.check(m)
        hp["stale_weighting"] = check_choice("stale_weighting", hp["stale_weighting"],
                                             ("none", "age"))
        return hp

    def init(self, ctx: Context):
        xp, R, m, p = ctx.xp, ctx.replicates, self.problem.clients, self.problem
        state = self.starting_point(ctx)
        to_host = ctx.oracle.backend.to_numpy
        state["outer_process"] = self._delay.start(xp, ctx.rng, R, m, to_host)
        state["inner_process"] = self._inner_delay.start(xp, ctx.rng, R, m, to_host)
        if self.aggregation == "recent":
            z = lambda d: xp.zeros((R, m, d))  # noqa: E731  (filled at step 0: all upload)
            state.update(G_tab=z(p.dim_y), H_tab=z(p.dim_x), fy_tab=z(p.dim_y),
                         x_at=z(p.dim_x), y_at=z(p.dim_y))
        return state

    def step(self, ctx: Context, state, t: int):
        hp, xp, R, m = self.hp, ctx.xp, ctx.replicates, self.problem.clients
        recent = self.aggregation == "recent"
        eta, beta = as_schedule("outer_step", hp["outer_step"]), as_schedule(
            "inner_step", hp["inner_step"])
        x, y = state["x"], state["y"]
        new = dict(state)
        inner, outer = state["inner_process"], state["outer_process"]
        rho = xp.zeros(R)
        grad = inner_gradient(ctx, x, m)
        for _ in range(hp["inner_steps"]):
            mask = inner()
            E = self._local.draw(xp, ctx.rng, (R, m))
            ctx.broadcast(y)
            G = aligned_gradients(ctx, x, y, E, self._local.high, hp["local_step"], count=mask,
                                  aligned=hp["aligned"], grad=grad)
            if recent:  # the updating clients send G_i into the server's table
                ctx.upload(G, weights=mask)
                new["G_tab"] = xp.where(mask[..., None], G, new["G_tab"])
                Gbar = mean_over_clients(new["G_tab"])
            else:  # the server averages the arrived G_i
                Gbar = ctx.aggregate(G, weights=mask)
            y = y - beta(t) * Gbar
            rho = rho + xp.mean(inner.tau * 1.0, axis=1)
        mask = outer()
        idx = xp.broadcast_to(xp.arange(m)[None, :], (R, m))
        fy = ctx.oracle.grad_y_f(idx, x[:, None, :], y[:, None, :], count=mask)
        kw = dict(scale=hp["neumann_scale"], truncation=hp["truncation"],
                  neumann_steps=hp["neumann_steps"], active=mask)
        m3 = mask[..., None]
        if recent:
            new["fy_tab"] = xp.where(m3, fy, new["fy_tab"])
            new["x_at"] = xp.where(m3, x[:, None, :], new["x_at"])
            new["y_at"] = xp.where(m3, y[:, None, :], new["y_at"])
            H = aphe(ctx, x, y, new["fy_tab"], new["x_at"], new["y_at"], **kw)
            new["H_tab"] = xp.where(m3, H, new["H_tab"])
            if hp["stale_weighting"] == "age":  # mutant: each entry counted once per round held
                Hbar = mean_over_clients(outer.tau[..., None] * new["H_tab"])
            else:
                Hbar = mean_over_clients(new["H_tab"])
        else:
            H = aphe(ctx, x, y, fy, members=mask, **kw)
            Hbar = mean_over_clients(H, mask)
        ctx.broadcast(x - eta(t) * Hbar)
        tau = outer.tau * 1.0
        ctx.record("tau_mean", xp.mean(tau, axis=1))
        ctx.record("tau_max", xp.max(tau, axis=1))
        ctx.record("rho_mean", rho / hp["inner_steps"])
        ctx.record("updating", xp.mean(mask * 1.0, axis=1))
        new.update(x=x - eta(t) * Hbar, y=y)
        return new


class AFBONaive(AFBO):
    """Naive asynchronous baseline: each step aggregates only the updates that arrived in it,
    averaging over the arrived clients only (APHE's client averages too); no step when none
    arrived.  Under skewed participation on non-IID clients it minimizes a reweighted
    objective (biased)."""

    name = "afbo_naive"
    aggregation = "arrived"


REGISTERED = (AFBO, AFBOSync, AFBONaive)


# =============================================================================================
# Theory: the bounds of Li, Zhu, Gong, Mao & Zhou, WiOpt 2024 (Thm 4.1, Cor 4.1), as sympy
# expressions.
# ``bilevel_theory.rates.BOUNDS`` collects them by name; ``rates.law_for`` derives the claims'
# laws from them.  Built on demand, so that importing the algorithm does not import sympy.
# =============================================================================================

THEORY_PAPER = "AFBO"
THEORY_CITATION = "Li, Zhu, Gong, Mao & Zhou, WiOpt 2024"


def bounds() -> list:
    """The stated bounds of Li, Zhu, Gong, Mao & Zhou, WiOpt 2024, Thm 4.1, Cor 4.1, as
    :class:`bilevel_theory.rates.Bound` objects (names ``"afbo.<result>"``)."""
    import sympy as sp  # noqa: PLC0415

    from bilevel_theory.rates import (  # noqa: PLC0415
        U_1,
        V0,
        W0,
        Bound,
        BoundList,
        D_hat,
        E_t,
        L_f,
        L_y,
        M_f,
        N,
        T,
        alpha,
        beta_sq,
        c_beta,
        ell_f1,
        eta,
        eta_inv,
        kappa_g,
        m,
        mu,
        mu_f,
        neumann_N_for,
        sigma,
        sigma_g,
        sigma_g1,
        sigma_hat,
        tau_bar,
        tau_excess,
        u_1,
    )

    out = BoundList(THEORY_CITATION)
    _add, _src = out.add, out.source

    _R = sp.Rational
    _STAT_T = r"\frac{1}{T}\sum_{t} \mathbb{E}\|\nabla f(x^t)\|^2"

    _b_afbo = kappa_g * ell_f1 * (1 - 1 / kappa_g) ** N
    _add(Bound(
        "afbo.aphe_bias", THEORY_PAPER, _src("Thm 4.1 and Lemma 4.1 (b at U = m)", "[INFERRED]"),
        kappa_g * ell_f1 * (1 - 1 / kappa_g) ** m, r"b", "le",
        {"m": "clients = APHE truncation U", "kappa_g": "κ_g"}, ("κ_g ≥ 1",),
        ("AFBO-R7: the theorem writes N; APHE fixes U = m (deterministic truncation); b is "
         "defined and charged as η_tb² (Lemma 4.1, Thm 4.1), the inequality not stated",)))
    K_in, beta, D_y = (sp.Symbol(s, positive=True) for s in ("K", "beta", "D_y"))
    _add(Bound(
        "afbo.lemma42", THEORY_PAPER, _src("Lemma 4.2"),
        4 * (sigma_g**2 + sigma_g1**2) * K_in * beta**2 + (1 - beta * mu) ** K_in * D_y,
        r"\mathbb{E}\|y^{t+1} - y^*(x^t)\|^2", "le",
        {"K": "inner steps", "beta": "inner step β"},
        ("Assumptions 4.1–4.5 (not 4.6: no delay bound)", "β ≤ 1/(2ℓ_{g,1})"),
        ("constant β_{t,k} = β, so Σ_kβ² = Kβ² and Π_k(1 − βμ_g) = (1 − βμ_g)^K; D_y = "
         "E‖y^t − y*(x^t)‖²; μ = μ_g",)))
    _U2 = 1 + 4 * M_f * L_y * eta + alpha * L_y * D_hat**2 * eta**2 / 2
    _U3 = L_y * eta**2 / (2 * alpha * m) + L_y * eta**2 / (2 * alpha * m)
    _sig2 = sigma_g**2 + sigma_g1**2
    _C = (2 * eta / mu_f * _b_afbo**2
          + 6 * eta**2 / m * (D_hat * m * tau_bar + sigma_hat + 4 * D_hat)
          + (2 * eta**2 + L_f * U_1 / mu_f) * D_hat / m
          + 4 * L_f * _U2 * _sig2 / (m * mu_f * E_t) * beta_sq + L_f * _U3 * sigma_hat / mu_f)
    _AFBO_NOTES = ("constant η_t = η; Σ_i τ_i^t = m τ̄ (τ̄ the mean outer delay); Σ_k β_{t,k}² = B",
                   "U_2 = 1 + 4M_fL_yη + αL_yD̂_f²η²/2; U_3 as written, the repeated term summed "
                   "(AFBO-R8)")
    afbo_thm41a = _add(Bound(
        "afbo.thm41a", THEORY_PAPER, _src("Thm 4.1(a) (strongly convex)"),
        (1 - eta * mu_f) ** T * V0 + _C * (1 - (1 - eta * mu_f) ** (T - 1)) / (eta * mu_f),
        r"\mathbb{E}[V^T]", "le", {"T": "rounds", "eta": "step η", "m": "clients"},
        ("Assumptions 4.1–4.6", "η μ_f < 1"),
        (*_AFBO_NOTES, "AFBO-R5: '=' read as '≤'; AFBO-I2: U_1 and E^t undefined in the source "
         "(symbols)")))
    _add(afbo_thm41a.derive(
        "afbo.thm41a_cor41_schedule",
        {"U_1": u_1 * eta**2, "eta": 1 / sp.sqrt(T), "B_beta": 1 / T,
         "N": neumann_N_for(T, 1, kappa_g)},
        "Cor 4.1's η = 1/√T, Σ_kβ² = K^tβ² = 1/T, N = log T/(2 log(κ_g/(κ_g−1))) (b² ∝ 1/T, a "
        "constant inside N = O(log T)); [INFERRED] AFBO-I2: U_1 = u_1η² (undefined; by analogy "
        "with U_3 = "
        "O(η²); a constant U_1 would make the bound grow as √T)",
        source=_src("Thm 4.1(a) at Cor 4.1's schedule", "[INFERRED]"),
        variables={"T": "rounds", "m": "clients"}))
    _add(Bound(
        "afbo.thm41a_floor_eta", THEORY_PAPER,
        _src("Thm 4.1(a), its non-vanishing term C/(ημ_f) (Remark 1)", "[INFERRED]"),
        ((_C - 2 * eta / mu_f * _b_afbo**2) / (eta * mu_f))
        .subs({U_1: u_1 * eta**2, beta_sq: c_beta * eta**2}).subs(eta, 1 / eta_inv),
        r"\lim_{T\to\infty}\mathbb{E}[V^T]", "le", {"eta_inv": "inverse step 1/η"},
        ("Assumptions 4.1–4.6", "η μ_f < 1"),
        (*_AFBO_NOTES, "T → ∞ at a constant η: (1 − ημ_f)^T E[V⁰] → 0 and "
         "1 − (1 − ημ_f)^{T−1} → 1, leaving C/(ημ_f)",
         "b → 0: the series truncation's N makes b² negligible (AFBO-R9); the APHE bias term "
         "2b²/μ_f² is the one part of C/(ημ_f) no step controls",
         "β_{t,k} ∝ η (Remark 2: 'sufficiently small learning rates η_t and β_{t,k}'), so "
         "Σ_kβ² = c_βη²; AFBO-I2: U_1 = u_1η²")))
    _add(Bound(
        "afbo.thm41a_inner_noise_term", THEORY_PAPER,
        _src("Thm 4.1(a), the first term of C (Remark 2: the lower-level variance term)"),
        4 * L_f * _U2 * _sig2 / (m * mu_f * E_t) * beta_sq,
        r"\frac{4L_fU_2(\sigma_g^2 + \sigma_{g,1}^2)}{m\mu_fE^t}\sum_k\beta_{t,k}^2", "le",
        {"m": "clients", "E_t": "local iterations E^t"}, ("Assumptions 4.1–4.6",),
        (*_AFBO_NOTES, "the part of C that the inner loop's noise contributes (Lemma 4.2's "
         "4(σ_g² + σ_{g,1}²)Σ_kβ², with the clients' and local iterations' 1/(mE^t)); "
         "AFBO-R16: E^t the clients' common local iteration number")))
    _add(Bound(
        "afbo.thm41a_bias_floor", THEORY_PAPER,
        _src("Thm 4.1(a), the b² part of its non-vanishing term C/(ημ_f)", "[INFERRED]"),
        2 * _b_afbo**2 / mu_f**2,
        r"\lim_{T\to\infty}\mathbb{E}[V^T] - (\ldots)_{N\to\infty}", "le",
        {"N": "Neumann terms"}, ("Assumptions 4.1–4.6", "η μ_f < 1"),
        ("(2η/μ_f)b²/(ημ_f): the part of C/(ημ_f) that depends on N (AFBO-R17), the one no "
         "step controls (AFBO-R14)",
         "b = κ_gℓ_{f,1}(1 − 1/κ_g)^N, N the Neumann terms of the (series) estimator "
         "(AFBO-R9)")))
    _add(Bound(
        "afbo.cor41_strongly_convex", THEORY_PAPER, _src("Cor 4.1 (strongly convex)"),
        1 / T, r"\mathbb{E}\|x^T - x^*\|^2", "O", {"T": "rounds"}, ("η_t = 1/√T", "N = O(log T)"),
        ("the theorem at this schedule gives T^{−1/2} (afbo.thm41a_cor41_schedule)",)))
    _add(Bound(
        "afbo.cor41_strongly_convex_lower", THEORY_PAPER,
        _src("Cor 4.1 (strongly convex, lower level)"),
        1 / T, r"\mathbb{E}\|y^*(x^T) - y^T\|^2", "O", {"T": "rounds"},
        ("η_t = 1/√T", "K^tβ_t² ≤ 1/T", "N = O(log T)"),
        ("Thm 4.1(a) bounds (L_f/μ_f)E‖y*(x^T) − y^T‖² ≤ E[V^T], which at this schedule is "
         "O(T^{−1/2}) (afbo.thm41a_cor41_schedule)",)))
    _thm41b = (2 / (eta * T) * W0 + _b_afbo**2
               + 8 / (eta * T) * T * (M_f * _U2 / L_y + eta * M_f**2 * _sig2) * beta_sq
               + 1 / (eta * T) * T * (3 * eta**2 * L_f / m + M_f * _U3 * sigma_hat / L_y)
               * sigma_hat
               + 1 / (eta * T) * T * (m * tau_bar + 4) * 3 * L_f * eta**2 * D_hat / m)
    afbo_thm41b = _add(Bound(
        "afbo.thm41b", THEORY_PAPER, _src("Thm 4.1(b) (nonconvex)"), _thm41b, _STAT_T,
        "le", {"T": "rounds", "eta": "step η", "m": "clients", "tau_bar": "mean outer delay"},
        ("Assumptions 4.1–4.6", "η ≤ min{a_1, T/(2l_{g,1}a_2)}"),
        (*_AFBO_NOTES, "AFBO-R8: (σ_g² + σ_{g,1}²) read literally on the second bracket term "
         "only")))
    _add(Bound(
        "afbo.thm41b_bias_floor", THEORY_PAPER,
        _src("Thm 4.1(b), the part of its right-hand side that depends on N", "[INFERRED]"),
        _b_afbo**2, _STAT_T + r" - (\ldots)_{N\to\infty}", "le", {"N": "Neumann terms"},
        ("Assumptions 4.1–4.6", "η ≤ min{a_1, T/(2l_{g,1}a_2)}"),
        ("b² is the one term of Thm 4.1(b) with N in it (AFBO-R17)",
         "b = κ_gℓ_{f,1}(1 − 1/κ_g)^N, N the Neumann terms of the (series) estimator "
         "(AFBO-R9)")))
    _thm41b_floor = (_thm41b.subs(W0, 0) - _b_afbo**2).subs(
        {beta_sq: c_beta * eta**2, tau_bar: 1})
    _add(Bound(
        "afbo.thm41b_floor_eta", THEORY_PAPER,
        _src("Thm 4.1(b) from a minimiser, synchronous (Remark 2's τ_i^t = 1), at a constant "
             "step", "[INFERRED]"),
        _thm41b_floor.subs(eta, 1 / eta_inv), _STAT_T, "le", {"eta_inv": "inverse step 1/η"},
        ("Assumptions 4.1–4.6", "η ≤ min{a_1, T/(2l_{g,1}a_2)}"),
        (*_AFBO_NOTES, "W⁰ − W* = 0: the runs start at (x*, y*(x*)), where W = f + "
         "(M_f/L_y)‖y − y*(x)‖² is least", "b → 0: the series truncation's N = ⌈κ_g log T⌉ "
         "(AFBO-R9)", "β_{t,k} ∝ η (AFBO-R14): Σ_kβ² = c_βη²", "τ_i^t = 1 (synchronous)")))
    _add(Bound(
        "afbo.thm41b_clients_excess", THEORY_PAPER,
        _src("Thm 4.1(b) from a minimiser, synchronous, at a constant step: the part that "
             "depends on m", "[INFERRED]"),
        sp.expand(_thm41b_floor - sp.limit(_thm41b_floor, m, sp.oo)),
        _STAT_T + r" - (\ldots)_{m\to\infty}", "le", {"m": "clients"},
        ("Assumptions 4.1–4.6", "η ≤ min{a_1, T/(2l_{g,1}a_2)}"),
        (*_AFBO_NOTES, "afbo.thm41b_floor_eta minus its m → ∞ limit (AFBO-R17): the terms "
         "3ηL_fσ̂_f/m, M_fU_3σ̂_f²/(L_yη) (U_3 ∝ 1/m) and 12L_fηD̂_f/m, D̂_f and σ̂_f per-client "
         "bounds that do not depend on m")))
    _add(afbo_thm41b.derive(
        "afbo.thm41b_cor41_schedule",
        {"eta": sp.sqrt(m / T), "B_beta": 1 / T, "N": neumann_N_for(T, 1, kappa_g)},
        "Cor 4.1's η = √(m/T), Σ_kβ² = 1/T, N = log T/(2 log(κ_g/(κ_g−1))) (b² ∝ 1/T)",
        source=_src("Thm 4.1(b) at Cor 4.1's schedule"),
        variables={"T": "rounds", "m": "clients", "tau_bar": "mean outer delay"}))
    afbo_cor41_nc = _add(Bound(
        "afbo.cor41_nonconvex", THEORY_PAPER, _src("Cor 4.1 (nonconvex)"),
        1 / sp.sqrt(m * T) + 1 / (m * sp.sqrt(m * T)) + 1 / T, _STAT_T, "O",
        {"T": "rounds", "m": "clients"}, ("η_t = √(m/T)", "N = O(log T)"),
        ("the theorem at this schedule keeps 3L_fD̂_f τ̄ √(m/T) (afbo.thm41b_cor41_schedule)",)))
    afbo_stale = _add(Bound(
        "afbo.staleness_term", THEORY_PAPER, _src("Thm 4.1(b) last term / Remark 2"),
        sp.simplify(1 / (eta * T) * T * (m * tau_bar + 4) * 3 * L_f * eta**2 * D_hat / m),
        r"\frac{1}{\bar{\eta} T}\sum_t \left(\sum_i \tau_i^t + 4\right)"
        r"\frac{3L_f\eta_t^2\hat{D}_f}{m}",
        "le", {"tau_bar": "mean outer delay", "eta": "step η", "m": "clients"},
        notes=("constant η; Σ_i τ_i^t = m τ̄; the only delay-dependent term of the bound",)))

    # derived parts used by the claims
    _stale_excess = sp.expand(afbo_stale.expr - afbo_stale.expr.subs(tau_bar, 1)).subs(
        tau_bar, 1 + tau_excess)
    _add(Bound(
        "afbo.staleness_excess", THEORY_PAPER,
        _src("Thm 4.1(b) last term minus its synchronous value (AFBO-R11)"),
        sp.simplify(_stale_excess),
        r"\frac{1}{T}\sum_t \|\nabla\Phi(x^t)\|^2 - (\ldots)_{\tau_i^t = 1}", "le",
        {"tau_excess": "mean outer delay minus 1", "eta": "step η"},
        notes=("afbo.staleness_term at τ̄ minus at τ̄ = 1: the delay-dependent part of the "
               "bound",)))
    _floor_sc = _C / (eta * mu_f)
    _add(Bound(
        "afbo.thm41a_staleness_excess", THEORY_PAPER,
        _src("Thm 4.1(a), its non-vanishing term C/(ημ_f) minus its synchronous value "
             "(AFBO-R15)", "[INFERRED]"),
        sp.simplify(sp.expand(_floor_sc - _floor_sc.subs(tau_bar, 1)).subs(
            tau_bar, 1 + tau_excess)),
        r"\lim_{T\to\infty}\mathbb{E}[V^T] - (\ldots)_{\tau_i^t = 1}", "le",
        {"tau_excess": "mean outer delay minus 1", "eta": "step η"},
        ("Assumptions 4.1–4.6", "η μ_f < 1"),
        (*_AFBO_NOTES, "T → ∞ at a constant η leaves C/(ημ_f) (as afbo.thm41a_floor_eta); "
         "its part that depends on the delay is 6ηD̂_fτ̄/μ_f, D̂_f a bound independent of the "
         "delay (AFBO-R10)")))
    afbo_cor41_nc_m_indep = _add(Bound(
        "afbo.cor41_nonconvex_m_independent", THEORY_PAPER,
        _src("Cor 4.1 (nonconvex), the m-independent part"),
        sp.limit(afbo_cor41_nc.expr, m, sp.oo), _STAT_T, "O", {"T": "rounds"},
        ("η_t = √(m/T)", "N = O(log T)"),
        ("lim_{m→∞} of afbo.cor41_nonconvex: the part of the bound that more clients do not "
         "reduce",)))
    _add(Bound(
        "afbo.cor41_nonconvex_m_dependent", THEORY_PAPER,
        _src("Cor 4.1 (nonconvex), the m-dependent part"),
        sp.expand(afbo_cor41_nc.expr - afbo_cor41_nc_m_indep.expr), _STAT_T, "O",
        {"T": "rounds", "m": "clients"}, ("η_t = √(m/T)", "N = O(log T)"),
        ("afbo.cor41_nonconvex minus its m → ∞ limit: the linear-speedup terms",)))
    _add(Bound(
        "afbo.sgd_floor", THEORY_PAPER,
        _src("constant-step SGD floor at Cor 4.1's η = 1/√T", "[INFERRED]"),
        (eta * sigma**2 / (mu * (2 - eta * mu))).subs(eta, 1 / sp.sqrt(T)),
        r"\mathbb{E}\|x^T - x^*\|^2\ (\mathrm{lower\ bound})", "le",
        {"T": "rounds", "sigma": "noise std", "mu": "curvature"},
        ("x_{t+1} − x* = (1 − ημ)(x_t − x*) − ηξ_t, ξ_t independent, E‖ξ_t‖² = σ²",),
        ("the stationary E‖x_t − x*‖² = ησ²/(μ(2 − ημ)) of constant-step SGD on a μ-quadratic, "
         "a lower bound of order T^{−1/2} at η = 1/√T (lemma AFBO-L2)",)))
    return out
