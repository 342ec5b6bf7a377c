"""The algorithm protocol, the run loop and the communication ledger.

An algorithm is a class with ``init(ctx) -> state`` and ``step(ctx, state, k) -> state`` (one
outer round), in the jaxopt/optax style: the state is a small dict of arrays with a leading
replicate axis ``R``; every oracle call goes through ``ctx.oracle`` (counted there) and every
exchange through ``ctx.communicate`` (counted in the ledger).  :func:`run_algorithm` drives the
loop, detects divergence (NaN/inf or blow-up) per replicate and freezes those replicates, and
returns a :class:`~bilevel_theory.trace.Trace`.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from array_api_compat import is_array_api_obj

from bilevel_theory.problems import ClientMean, FederatedQuadratic, Oracle, get_backend
from bilevel_theory.problems.backend import mean_over_clients, single_thread_blas
from bilevel_theory.problems.validation import (
    as_real_array,
    check_int,
    check_real,
    unknown_names,
)

from .hyperparameters import MAX_COUNT, MAX_WORK, SCHEMA, Hyper, check_budget
from .hyperparameters import validate as validate_hyperparameters
from .trace import LEDGER_FIELDS, Ledger, Trace

Schedule = Callable[[int], float]


def as_schedule(name: str, value: float | Schedule) -> Schedule:
    """A step hyperparameter as a schedule ``k -> step`` of the round index ``k``.

    ``value`` is a callable (each step it gives is checked at its round: a positive finite
    number, else a ``ValueError`` naming ``name`` and the round) or a number, which must be a
    positive real (else a ``ValueError`` naming ``name``) and becomes the constant schedule.
    An algorithm whose step may be given either way reads it through this (``outer_step`` of
    AFBO, FedNest …):

    >>> from bilevel_theory import as_schedule
    >>> as_schedule("outer_step", 0.5)(10)
    0.5
    >>> as_schedule("outer_step", lambda k: 1 / (k + 1))(3)
    0.25
    """
    if callable(value):
        return _checked(name, value)
    v = check_real(name, value, minimum=0.0, strict_minimum=True)
    return lambda k: v


def _checked(name: str, schedule: Schedule) -> Schedule:
    """``schedule`` with each step it gives checked: a positive finite number (or array of
    them) at every round, else a ``ValueError`` naming ``name`` and the round (an ascent or
    non-finite step at a later round must not run silently; a device array is not read)."""
    @functools.wraps(schedule)
    def step(k):
        v = schedule(k)
        if isinstance(v, int | float | np.integer | np.floating):
            ok = math.isfinite(float(v)) and float(v) > 0
        elif isinstance(v, np.ndarray):
            ok = bool(np.all(np.isfinite(v) & (v > 0)))
        else:
            ok = True
        if not ok:
            raise ValueError(f"`{name}` must give a positive finite step at every round; at "
                             f"round {k} it gave {v!r}")
        return v
    return step


@dataclass
class Context:
    """Everything a step needs besides its state: oracle, namespace, sizes, the ledger."""

    oracle: Oracle
    problem: FederatedQuadratic
    replicates: int
    constants: dict[str, float]
    rounds: float = 0.0
    uplink: float = 0.0
    downlink: float = 0.0
    state_bytes: float = 0.0
    extras: dict[str, list] = field(default_factory=dict)
    #: per-run values a step may compute once and reuse (e.g. AFBO's clients' mean Hessian,
    #: which on the quadratic instances does not depend on the point)
    memo: dict[str, Any] = field(default_factory=dict)

    @property
    def xp(self):
        return self.oracle.xp

    @property
    def rng(self):
        return self.oracle.rng

    def communicate(self, rounds: float = 1, up: float = 0, down: float = 0) -> None:
        """Count ``rounds`` communication rounds with ``up``/``down`` vectors per client.

        Deprecated inside algorithms: use :meth:`broadcast` and :meth:`aggregate`, which count
        what is actually sent."""
        self.rounds += rounds
        self.uplink += up
        self.downlink += down

    def broadcast(self, *arrays: Any, active: Any = None, vectors: Any = None) -> None:
        """The server sends ``arrays`` (server-side, shape ``(R, d)``) to the participating
        clients: one downlink vector per array.  ``active`` (``(R,)`` bool): the replicates
        in which this broadcast happens (vectorized runs whose schedules differ per replicate);
        the ledger counts the mean over replicates.  ``vectors`` (``(R, n)``, optional): how
        many vectors each client receives per array when the arrays hold several per client
        (e.g. one per estimator chain it serves); the downlink then adds their mean."""
        if vectors is not None:
            self.downlink += len(arrays) * self.scalar(self.xp.mean(vectors * 1.0))
            return
        self.downlink += len(arrays) * self._fraction(active)

    def aggregate(self, *client_arrays: Any, axis: int = 1, active: Any = None,
                  weights: Any = None, vectors: Any = None) -> Any:
        """Clients send ``client_arrays`` (each ``(R, n, …)``, clients on ``axis``) and the
        server averages them over the clients: **one** communication round (a
        synchronisation) and one uplink vector per array per client, counted here and
        nowhere else.  ``weights``: an ``(R, n)`` array of non-negative client weights (e.g.
        a participation mask; the mean is then ``Σ w v / Σ w`` and the uplink counts the
        mean fraction of clients with ``w > 0``).  ``vectors`` (``(R, m)``, optional): how
        many vectors each of the ``m`` clients sends per array when it sends several (e.g. one
        per estimator chain it serves); the uplink then adds their mean instead of the sending
        fraction.  A :class:`~bilevel_theory.problems.ClientMean` (an averaged oracle call)
        is already the mean over its clients and is counted the same way.  Returns the mean
        (a tuple for several arrays)."""
        xp = self.xp
        frac = self._fraction(active)
        if any(isinstance(a, ClientMean) for a in client_arrays):
            if weights is not None or axis != 1 or vectors is not None:
                raise ValueError("an averaged oracle call (ClientMean) is aggregated without "
                                 "`weights`, `vectors` or another `axis`")
            if not all(isinstance(a, ClientMean) for a in client_arrays):
                raise TypeError("aggregate either averaged oracle calls (ClientMean) or "
                                "per-client arrays, not both")
            client_arrays = tuple(a.value[:, None, :] for a in client_arrays)
        if weights is None:
            means = tuple(_mean(xp, a, axis) for a in client_arrays)
            sending = 1.0
        else:
            means = tuple(_mean(xp, a, axis, weights) for a in client_arrays)
            sending = self._fraction(weights > 0)
        self._count_upload(len(client_arrays), frac, sending, vectors)
        return means[0] if len(means) == 1 else means

    def upload(self, *client_arrays: Any, active: Any = None, weights: Any = None,
               vectors: Any = None) -> None:
        """Clients send ``client_arrays`` to the server, which relays or stores them without
        averaging (e.g. PHE's chains handing their vector on, AFBO's tables): counted as
        :meth:`aggregate` counts (one round, one uplink vector per array per sending client;
        ``active``, ``weights``, ``vectors`` as there), with no arithmetic on the arrays."""
        sending = 1.0 if weights is None else self._fraction(weights > 0)
        self._count_upload(len(client_arrays), self._fraction(active), sending, vectors)

    def _count_upload(self, arrays: int, frac: float, sending: float, vectors: Any) -> None:
        self.rounds += frac
        if vectors is not None:
            self.uplink += arrays * self.scalar(self.xp.mean(vectors * 1.0))
        else:
            self.uplink += arrays * sending * frac

    def _fraction(self, active: Any) -> float:
        if active is None:
            return 1.0
        if isinstance(active, np.ndarray):  # host: the same number as the mean of 0/1 floats
            return np.count_nonzero(active) / active.size
        return self.scalar(self.xp.mean(self.xp.astype(active, self.xp.float64)))

    def scalar(self, value: Any) -> float:
        """A 0-d array of the run's backend as a host float: an explicit device → host
        transfer (one synchronisation on a GPU), never an implicit ``float(array)``."""
        return float(self.oracle.backend.to_numpy(value))

    def hold(self, *dims: int) -> None:
        """Record that a client holds vectors of these dimensions at once (float64 bytes)."""
        self.state_bytes = max(self.state_bytes, 8.0 * sum(dims))

    def keep(self, *client_arrays: Any, axis: int = 1) -> None:
        """Register the arrays each client keeps at once (each ``(R, n, …)``, clients on
        ``axis``): ``state_bytes`` is the running maximum of their per-client size, computed
        from the arrays' actual shapes and dtypes (not declared by hand)."""
        total = 0
        for a in client_arrays:
            per_client = math.prod(a.shape) // max(1, a.shape[0] * a.shape[axis])
            total += per_client * a.dtype.itemsize
        self.state_bytes = max(self.state_bytes, float(total))

    def record(self, name: str, value: Any) -> None:
        """Keep an algorithm-specific per-round array (host copy) in ``trace.extras``."""
        self.extras.setdefault(name, []).append(self.oracle.backend.to_numpy(value))

    def snapshot(self) -> tuple[float, ...]:
        c = self.oracle.counter
        return (self.rounds, self.uplink, self.downlink, c.grad, c.hvp, c.jvp, self.state_bytes)


def _mean(xp, a, axis: int, weights: Any = None):
    """The (weighted) mean over ``axis``: over the client axis of ``(…, n, d)`` arrays through
    :func:`~bilevel_theory.problems.backend.mean_over_clients` (fast on host numpy)."""
    if a.ndim >= 2 and axis % a.ndim == a.ndim - 2:
        return mean_over_clients(a, weights)
    if weights is None:
        return xp.mean(a, axis=axis)
    w = xp.reshape(weights, weights.shape + (1,) * (a.ndim - weights.ndim))
    total = xp.sum(w, axis=axis)
    return xp.sum(w * a, axis=axis) / xp.where(total > 0, total, 1.0)


class Algorithm:
    """Base class. Subclasses set ``name``, ``kinds`` and ``defaults`` and implement
    ``init`` and ``step``; ``validate`` may add range checks (call ``super().validate``)."""

    name: ClassVar[str] = ""
    kinds: ClassVar[tuple[str, ...]] = ("bilevel",)
    defaults: ClassVar[dict[str, Any]] = {}
    has_y: ClassVar[bool] = True
    #: sampling scheme when the algorithm has no ``replace`` hyperparameter (``None``: none)
    sampling_replace: ClassVar[bool | None] = None
    #: declarations of hyperparameters this algorithm adds to (or overrides in)
    #: :data:`~bilevel_theory.hyperparameters.SCHEMA`
    schema: ClassVar[dict[str, Hyper]] = {}

    def __init__(self, problem: FederatedQuadratic, **hyperparameters: Any):
        if not isinstance(problem, FederatedQuadratic):
            raise TypeError(f"`problem` must be a problem instance, got {type(problem).__name__}")
        if problem.kind not in self.kinds:
            raise ValueError(f"algorithm `{self.name}` accepts problems of kind {list(self.kinds)}, "
                             f"got {problem.kind!r}")
        unknown_names(f"hyperparameter for `{self.name}`", hyperparameters, self.defaults)
        self.problem = problem
        #: the hyperparameters the caller gave (the others are defaults, possibly derived)
        self.given = frozenset(hyperparameters)
        resolved = {**self.resolved_defaults(problem, skip=hyperparameters), **hyperparameters}
        self.hp = self.validate(validate_hyperparameters(self.name, resolved,
                                                         {**SCHEMA, **self.schema},
                                                         clients=problem.clients))

    def resolved_defaults(self, problem: FederatedQuadratic,
                          skip: Any = ()) -> dict[str, Any]:
        """Defaults; a callable default is evaluated on the problem's constants (not for the
        names in ``skip``, which the caller gives: a default that cannot be computed on this
        instance, e.g. ``0.5/L_Φ`` where ``Φ`` is linear, is then never needed)."""
        c = problem.constants
        out = {}
        for k, v in self.defaults.items():
            if k in skip:
                continue
            if not callable(v) or isinstance(v, type):
                out[k] = v
                continue
            try:
                out[k] = v(c, problem)
            except ArithmeticError as e:  # e.g. 0.5/L_Φ on an instance whose Φ is linear
                raise ValueError(f"`{k}` of `{self.name}`: its default cannot be computed on "
                                 f"this instance ({e}); give `{k}` explicitly") from None
        return out

    def validate(self, hp: dict[str, Any]) -> dict[str, Any]:
        """Check common hyperparameters; returns the normalized dict."""
        for key in ("inner_steps", "neumann_steps", "local_steps", "sampled_clients", "period",
                    "samples"):
            if key in hp and hp[key] is not None:
                hp[key] = check_int(key, hp[key], minimum=1)
        if "sampled_clients" in hp and hp.get("replace", self.sampling_replace) is False:
            if hp["sampled_clients"] > self.problem.clients:
                raise ValueError(f"`sampled_clients` must be ≤ clients ({self.problem.clients}) "
                                 f"when sampling without replacement, got {hp['sampled_clients']}")
        for key in ("outer_step", "inner_step"):
            if key in hp:
                as_schedule(key, hp[key])
        return hp

    # ------------------------------------------------------------ to implement
    def init(self, ctx: Context) -> dict[str, Any]:
        raise NotImplementedError

    def step(self, ctx: Context, state: dict[str, Any], k: int) -> dict[str, Any]:
        raise NotImplementedError

    # ------------------------------------------------------------ helpers for subclasses
    def starting_point(self, ctx: Context) -> dict[str, Any]:
        """``x₀`` (hyperparameter ``x0``, default all-ones) and ``y₀`` (default zeros),
        broadcast over replicates."""
        xp, p, R = ctx.xp, self.problem, ctx.replicates
        x0 = self.hp.get("x0")
        y0 = self.hp.get("y0")
        x0 = np.ones(p.dim_x) if x0 is None else start_vector("x0", x0, p.dim_x, p.radius)
        y0 = np.zeros(p.dim_y) if y0 is None else start_vector("y0", y0, p.dim_y, p.radius)
        return dict(x=xp.broadcast_to(xp.asarray(x0), (R, p.dim_x)) * 1.0,
                    y=xp.broadcast_to(xp.asarray(y0), (R, p.dim_y)) * 1.0)


def start_vector(name: str, value: Any, dim: int, radius: float) -> np.ndarray:
    """A starting point given by the user: a finite float vector of shape ``(dim,)`` whose
    entries are at most ``10⁶·radius`` in magnitude (beyond, the quadratics overflow)."""
    if isinstance(value, str | bytes) or (is_array_api_obj(value) and not isinstance(
            value, np.ndarray)):
        raise TypeError(f"`{name}` must be a vector of {dim} floats, got {value!r}")
    arr = as_real_array(name, value)  # no bools, complex numbers, strings, overflow
    if arr.shape != (dim,):
        raise ValueError(f"`{name}` must have shape ({dim},), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` must be finite (no NaN or inf), got {arr}")
    if np.max(np.abs(arr), initial=0.0) > 1e6 * radius:
        raise ValueError(f"`{name}` entries must be at most {1e6 * radius:g} in magnitude "
                         f"(10⁶ × the instance's radius), got {np.max(np.abs(arr)):g}")
    return arr


def _freeze(xp, state: dict, previous: dict, frozen, R: int) -> dict:
    """Keep the previous state of frozen replicates (leading-axis arrays only)."""
    out = {}
    for key, new in state.items():
        old = previous.get(key)
        if (old is not None and is_array_api_obj(new) and new.ndim >= 1 and new.shape[0] == R
                and getattr(old, "shape", None) == new.shape):
            mask = xp.reshape(frozen, (R,) + (1,) * (new.ndim - 1))
            out[key] = xp.where(mask, old, new)
        else:
            out[key] = new
    return out


def run_algorithm(algorithm: Algorithm, rounds: int, replicates: int, seed: int,
                  backend: str = "numpy", progress: bool = False,
                  max_work: float | None = MAX_WORK) -> Trace:
    """Drive ``algorithm`` for ``rounds`` outer rounds on ``replicates`` independent runs.

    ``algorithm``: an :class:`Algorithm` instance (its hyperparameters already validated);
    ``seed`` and ``backend`` (``"numpy"`` or ``"cupy"``) as in :func:`bilevel_theory.run`,
    which builds the instance from a registered name and calls this.  Returns the
    :class:`~bilevel_theory.trace.Trace`.  A run whose estimated work exceeds ``max_work``
    floating-point operations, or whose memory exceeds what is available, is refused before
    it starts
    (:func:`~bilevel_theory.hyperparameters.check_budget`)."""
    rounds = check_int("rounds", rounds, minimum=0, maximum=MAX_COUNT)
    replicates = check_int("replicates", replicates, minimum=1, maximum=MAX_COUNT)
    seed = check_int("seed", seed, minimum=0, maximum=2**63 - 1)
    check_budget(algorithm, rounds, replicates, max_work)
    ctx = make_context(algorithm.problem, replicates, seed, backend)
    be, problem = ctx.oracle.backend, algorithm.problem
    xp = be.xp
    start = time.perf_counter()
    with np.errstate(all="ignore"), single_thread_blas:  # BLAS pinned once per run
        state = algorithm.init(ctx)
        has_y = algorithm.has_y and state.get("y") is not None
        xs = _path(xp, state["x"], rounds)
        ys = _path(xp, state["y"], rounds) if has_y else None
        ledger = [ctx.snapshot()]
        frozen = xp.zeros(replicates, dtype=bool)
        frozen_at = np.full(replicates, -1)
        scale = float(np.sum(np.ones(problem.dim_x))) + problem.radius ** 2
        limit = 1e8 * scale
        it = range(rounds)
        if progress:
            from tqdm.auto import tqdm  # noqa: PLC0415
            it = tqdm(it, desc=algorithm.name, leave=False)
        for k in it:
            new = algorithm.step(ctx, state, k)
            bad = ~xp.all(xp.isfinite(new["x"]), axis=-1) | (xp.sum(new["x"] ** 2, axis=-1) > limit)
            if new.get("y") is not None:
                bad |= ~xp.all(xp.isfinite(new["y"]), axis=-1)
            newly = be.to_numpy(bad & ~frozen)
            frozen_at[newly] = k + 1
            frozen = frozen | bad
            # with no replicate frozen the masked selection would return ``new`` itself
            state = _freeze(xp, new, state, frozen, replicates) if (frozen_at >= 0).any() else new
            xs[:, k + 1] = state["x"]
            if has_y:
                ys[:, k + 1] = state["y"]
            ledger.append(ctx.snapshot())
    x = be.to_numpy(xs)
    y = be.to_numpy(ys) if has_y else None
    del xs, ys  # a device path is not held twice
    stationarity, inner_error = _along_paths(problem.host, x, y)
    diverged = be.to_numpy(frozen).astype(bool)
    # a replicate whose measured quantities are not finite is diverged, never a silent NaN
    unfinished = ~np.isfinite(stationarity).all(axis=1)
    if inner_error is not None:
        unfinished |= ~np.isfinite(inner_error).all(axis=1)
    frozen_at[unfinished & ~diverged] = 0
    diverged |= unfinished
    led = np.asarray(ledger, dtype=float)
    extras = {k: np.stack(v) for k, v in ctx.extras.items()}
    return Trace(algorithm=algorithm.name, hyperparameters=dict(algorithm.hp), x=x, y=y,
                 stationarity=stationarity, inner_error=inner_error,
                 ledger=Ledger(**{f: led[:, j] for j, f in enumerate(LEDGER_FIELDS)}),
                 diverged=diverged, diverged_at=frozen_at, seed=seed,
                 backend=be.name, seconds=time.perf_counter() - start, extras=extras)


def _path(xp, first, rounds: int):
    """A ``(R, rounds + 1, d)`` buffer for an iterate's path, starting at ``first (R, d)``."""
    path = xp.empty((first.shape[0], rounds + 1, first.shape[-1]), dtype=first.dtype)
    path[:, 0] = first
    return path


#: numbers per temporary when the measured quantities are computed along the paths
_PATH_CHUNK = 1 << 21


def _along_paths(host, x: np.ndarray, y: np.ndarray | None):
    """``‖∇Φ(x_k)‖²`` and ``‖y_k − y*(x_k)‖²`` (or ``None``) along the paths, a few
    replicates at a time: the temporaries stay small on long runs, and each replicate's
    numbers are those of one whole computation (the products are per replicate anyway)."""
    R, K, d = x.shape
    stationarity = np.empty((R, K))
    inner = None if y is None else np.empty((R, K))
    width = d if y is None else max(d, y.shape[-1])
    step = max(1, _PATH_CHUNK // (K * width))
    for s in range(0, R, step):
        rows = slice(s, s + step)
        stationarity[rows] = (host.hypergradient(x[rows]) ** 2).sum(-1)
        if y is not None:
            inner[rows] = ((y[rows] - host.y_star(x[rows])) ** 2).sum(-1)
    return stationarity, inner


def make_context(problem: FederatedQuadratic, replicates: int, seed: int = 0,
                 backend: str = "numpy") -> Context:
    """A fresh :class:`Context` (oracle, ledger) to call estimators or solvers directly."""
    be = get_backend(backend)
    oracle = Oracle(problem, be, np.random.SeedSequence(check_int("seed", seed, minimum=0)))
    return Context(oracle=oracle, problem=oracle.problem,
                   replicates=check_int("replicates", replicates, minimum=1),
                   constants=problem.constants)
