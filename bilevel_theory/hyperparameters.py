"""The hyperparameter schema: one declaration per hyperparameter name, validated in one place.

Every algorithm takes its hyperparameters as keyword arguments whose names come from
:data:`SCHEMA` (the same name means the same thing in every algorithm: ``inner_steps`` is
``T``, ``neumann_steps`` the series length ``N``/``Q``, ``outer_step`` the step ``α``/``η`` …).
:func:`validate` checks a resolved set (user values over the algorithm's defaults) before any
work starts: wrong types, ``None`` where a value is required, non-finite, complex,
out-of-range values are refused with an error naming the hyperparameter, its allowed range and
the algorithm; a schedule (a callable of the round index) is probed once at round 0 and its
return checked.  :func:`check_budget` refuses, with the estimate, a run whose work or memory
would exceed the documented limits (:data:`MAX_WORK`, the available memory), including
values derived from the instance (``κ = 10⁸`` would otherwise mean 7·10⁸ Neumann steps).

``bilevel-theory algorithms NAME`` prints an algorithm's schema.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

#: Largest number of floating-point operations a single ``run`` may be estimated to need
#: (about an hour of one CPU core); ``run(..., max_work=None)`` lifts it.
MAX_WORK = 1e13
#: Operations charged for each sequential (Python-level) step of a run: the overhead of one
#: vectorized step, about 20 µs, so that a long loop of tiny steps is refused like a heavy one.
STEP_OVERHEAD = 2e4
#: Largest value of any integer hyperparameter (a count of steps, clients or samples).
MAX_COUNT = 10**9
#: Range of every positive real hyperparameter (step sizes, scales, penalties).
REAL_RANGE = (1e-12, 1e12)


@dataclass(frozen=True)
class Hyper:
    """A hyperparameter's declaration.

    Attributes:
        kind: ``"count"`` (integer in ``[low, MAX_COUNT]``), ``"positive"`` (real in
            :data:`REAL_RANGE`), ``"nonnegative"`` (0 or in :data:`REAL_RANGE`), ``"flag"``
            (bool), ``"point"`` (a vector, checked by the algorithm's starting point),
            ``"text"`` (a string or spec checked by the algorithm); ``"per_client_count"``,
            ``"per_client_positive"``, ``"per_client_nonnegative"``: the same number for every
            client, or an array of shape ``(m,)``, one per client, each entry in the range of
            the kind without the prefix (returned as a read-only int64/float64 array).
        meaning: one line, in the papers' notation.
        low: smallest count (``count`` only).
        schedule: may be a callable of the round index returning a ``positive`` real.
        optional: ``None`` allowed (the algorithm then derives the value).
    """

    kind: str
    meaning: str
    low: int = 1
    schedule: bool = False
    optional: bool = False

    @property
    def per_client(self) -> bool:
        """Whether the value may be an array of one entry per client."""
        return self.kind.startswith(PER_CLIENT)

    @property
    def base_kind(self) -> str:
        """The kind of one entry (``"count"`` for ``"per_client_count"``)."""
        return self.kind.removeprefix(PER_CLIENT)

    def range_text(self, clients: int | None = None) -> str:
        """The allowed values in words (``clients``: the ``m`` of a per-client array)."""
        lo, hi = REAL_RANGE
        text = {"count": f"integer in [{self.low}, {MAX_COUNT:.0e}]",
                "positive": f"real in [{lo:g}, {hi:g}]",
                "nonnegative": f"0 or a real in [{lo:g}, {hi:g}]",
                "flag": "True or False", "point": "a finite vector of the variable's dimension",
                "text": "see the algorithm's docstring"}[self.base_kind]
        if self.per_client:
            m = "m" if clients is None else f"m = {clients}"
            text += f", or an array of {m} such numbers (one per client)"
        if self.schedule:
            text += ", or a callable of the round index k returning one"
        if self.optional:
            text += ", or None (derived)"
        return text


#: prefix of the kinds whose value may be one number per client
PER_CLIENT = "per_client_"
KINDS = ("count", "positive", "nonnegative", "flag", "point", "text",
         *(PER_CLIENT + k for k in ("count", "positive", "nonnegative")))


def _h(kind, meaning, **kw) -> Hyper:
    return Hyper(kind, meaning, **kw)


SCHEMA: dict[str, Hyper] = {
    # counts
    "inner_steps": _h("count", "T: inner (lower-level) rounds per outer round"),
    "neumann_steps": _h("count", "N (or Q): length of the Neumann series", low=0),
    "local_steps": _h("count", "τ: local steps per client per round"),
    "inner_local_steps": _h("count", "local steps of the inner loop", optional=True),
    "sampled_clients": _h("count", "n (or P): clients sampled per round"),
    "period": _h("count", "p: local iterations between two communications"),
    "samples": _h("count", "S: minibatch size of each stochastic gradient"),
    "minibatch": _h("count", "minibatch size", optional=True),
    "local_iterations": _h("per_client_count", "K_i: local iterations of a client"),
    # step sizes and scales (schedules allowed)
    "outer_step": _h("positive", "α (or η): outer step size", schedule=True, optional=True),
    "inner_step": _h("positive", "β: inner step size", schedule=True, optional=True),
    "local_step": _h("nonnegative", "local step size of a client's local iterations"),
    "neumann_scale": _h("positive", "scale 1/ℓ of the Neumann series terms"),
    "alpha": _h("positive", "α: momentum/step constant", optional=True),
    "beta": _h("positive", "β: momentum/step constant", optional=True),
    "eta": _h("positive", "η: step constant", optional=True),
    "theta": _h("positive", "θ: step of the Neumann recursion"),
    "rho1": _h("positive", "ρ₁: momentum constant"),
    "rho2": _h("positive", "ρ₂: momentum constant"),
    "eta_x": _h("positive", "η_x: step of x", schedule=True, optional=True),
    "eta_y": _h("positive", "η_y: step of y", schedule=True, optional=True),
    "eta_z": _h("positive", "η_z: step of z", schedule=True, optional=True),
    "gamma_x": _h("positive", "γ_x: local step of x", schedule=True, optional=True),
    "gamma_y": _h("positive", "γ_y: local step of y", schedule=True, optional=True),
    "gamma_z": _h("positive", "γ_z: local step of z", schedule=True, optional=True),
    "penalty": _h("positive", "λ: penalty parameter"),
    # flags, points and specs
    "replace": _h("flag", "sample clients with replacement"),
    "x0": _h("point", "starting x", optional=True),
    "y0": _h("point", "starting y", optional=True),
    "z0": _h("point", "starting z", optional=True),
    "delay": _h("text", "outer delay model", optional=True),
    "inner_delay": _h("text", "inner delay model", optional=True),
    "truncation": _h("text", "Neumann truncation rule"),
    "neumann_series": _h("text", "Neumann series variant"),
    "aligned": _h("flag", "aligned mean (1/E_i)Σ_e of a client's local updates (else the sum)"),
    "stale_weighting": _h("text", "weighting of stale updates by their age"),
}


def _real(algorithm: str, name: str, value: Any, spec: Hyper, what: str = "") -> float:
    lo, hi = REAL_RANGE
    where = f"`{name}` of `{algorithm}`{what}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{where} must be a {spec.range_text()}; got {value!r}")
    try:
        v = float(value)
    except OverflowError:  # e.g. 10**400: beyond the float range
        raise ValueError(f"{where} must be a {spec.range_text()}; got a number beyond the "
                         "float range") from None
    if not math.isfinite(v):
        raise ValueError(f"{where} must be finite ({spec.range_text()}); got {v}")
    if spec.kind == "nonnegative" and v == 0.0:
        return 0.0
    if not lo <= v <= hi:
        raise ValueError(f"{where} must be a {spec.range_text()}; got {v:g}")
    return v


def _per_client(algorithm: str, name: str, value: Any, spec: Hyper,
                clients: int | None) -> Any:
    """A per-client value: one number (checked as the base kind) or an array of shape
    ``(clients,)`` whose every entry is in the base kind's range."""
    base = replace(spec, kind=spec.base_kind)
    where = f"`{name}` of `{algorithm}`"
    article = "an" if base.kind == "count" else "a"
    allowed = f"{article} {spec.range_text(clients)}"
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, numbers.Number | str | bytes) or value is None:
        try:
            return _check(algorithm, name, value, base)
        except (TypeError, ValueError) as err:
            raise type(err)(f"{where} must be {allowed}; got {value!r}") from None
    if clients is None:
        raise ValueError(f"{where}: an array value needs the number of clients m "
                         "(validate(..., clients=m))")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        raise TypeError(f"{where} must be {allowed}; got {type(value).__name__}") from None
    if arr.shape != (clients,):
        raise ValueError(f"{where} must be {allowed}; got an array of shape {arr.shape}")
    kinds = "iu" if base.kind == "count" else "iuf"
    if arr.dtype.kind not in kinds:
        what = "integers" if base.kind == "count" else "real numbers"
        raise TypeError(f"{where} must be {allowed}; got an array of {arr.dtype} (not {what})")
    if base.kind == "count":
        bad = (arr < base.low) | (arr > MAX_COUNT)
        out = arr.astype(np.int64)
    else:
        out = arr.astype(np.float64)
        lo, hi = REAL_RANGE
        inside = np.isfinite(out) & (out >= lo) & (out <= hi)
        bad = ~(inside | (out == 0.0)) if base.kind == "nonnegative" else ~inside
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{where} must be {allowed}; got {arr[i].item()!r} for client {i}")
    out.flags.writeable = False
    return out


def _check(algorithm: str, name: str, value: Any, spec: Hyper,
           clients: int | None = None) -> Any:
    if spec.per_client:
        return _per_client(algorithm, name, value, spec, clients)
    if value is None:
        if spec.optional:
            return None
        article = "an" if spec.kind == "count" else "a"
        raise TypeError(f"`{name}` of `{algorithm}` must be {article} {spec.range_text()}; "
                        "got None")
    if spec.kind == "count":
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"`{name}` of `{algorithm}` must be an {spec.range_text()}; got "
                            f"{value!r}")
        v = int(value)
        if not spec.low <= v <= MAX_COUNT:
            raise ValueError(f"`{name}` of `{algorithm}` must be an {spec.range_text()}; "
                             f"got {v}")
        return v
    if spec.kind in ("positive", "nonnegative"):
        if spec.schedule and callable(value):
            probe(algorithm, name, value, spec)
            return value
        return _real(algorithm, name, value, spec)
    if spec.kind == "flag":
        if not isinstance(value, bool | np.bool_):
            raise TypeError(f"`{name}` of `{algorithm}` must be True or False; got {value!r}")
        return bool(value)
    return value  # points and specs: checked by the algorithm


def probe(algorithm: str, name: str, schedule: Callable[[int], Any], spec: Hyper) -> float:
    """Call a schedule once at round 0 and check what it returns."""
    try:
        out = schedule(0)
    except TypeError as err:
        raise TypeError(f"`{name}` of `{algorithm}`: a schedule is called with the round index "
                        f"k (one argument); calling it with k=0 failed: {err}") from None
    return _real(algorithm, name, out, spec, what=" (its value at round 0)")


def validate(algorithm: str, hp: Mapping[str, Any],
             schema: Mapping[str, Hyper] | None = None,
             clients: int | None = None) -> dict[str, Any]:
    """Check every hyperparameter in ``hp`` against ``schema`` (default :data:`SCHEMA`);
    returns the normalized dict (Python ints and floats; per-client arrays as read-only
    numpy arrays).  ``clients``: the instance's ``m``, the length of a per-client array.
    Names missing from the schema are left to the algorithm's own ``validate``."""
    schema = SCHEMA if schema is None else schema
    return {k: (_check(algorithm, k, v, schema[k], clients) if k in schema else v)
            for k, v in hp.items()}


def describe(names) -> list[tuple[str, str, str]]:
    """``(name, meaning, allowed)`` rows for the given hyperparameter names."""
    return [(n, SCHEMA[n].meaning, SCHEMA[n].range_text()) if n in SCHEMA else (n, "", "")
            for n in names]


# ------------------------------------------------------------------------------ the budget

def _count(hp: Mapping[str, Any], name: str, default: float = 1.0) -> float:
    """The largest count ``hp[name]`` stands for: a number; the largest integer of a string
    spec (``"uniform:1-50"`` -> 50); the largest entry of an array; ``default`` otherwise."""
    v = hp.get(name)
    if v is None or isinstance(v, bool) or callable(v):
        return default
    if isinstance(v, numbers.Real):
        return float(v)
    if isinstance(v, str):
        return max((float(t) for t in re.findall(r"\d+", v)), default=default)
    try:
        arr = np.asarray(v, dtype=float)
    except (TypeError, ValueError, OverflowError):
        return math.inf  # entries beyond the float range: no budget covers them
    return float(arr.max()) if arr.size and arr.dtype.kind == "f" else default


def estimate(algorithm, rounds: int, replicates: int) -> dict[str, float]:
    """Floating-point operations and peak bytes of a run, from its hyperparameters and the
    instance (an upper estimate: every client evaluation costs a dense ``d × d`` product)."""
    hp, p = algorithm.hp, algorithm.problem
    d = p.dim_x + p.dim_y
    clients = _count(hp, "sampled_clients", p.clients)
    local = max(_count(hp, "local_steps"), _count(hp, "inner_local_steps"),
                _count(hp, "local_iterations"), _count(hp, "period"))
    samples = max(_count(hp, "samples"), _count(hp, "minibatch"))
    steps = (_count(hp, "inner_steps") * local + _count(hp, "neumann_steps", 0.0) + local + 2)
    evaluations = float(rounds) * replicates * clients * steps * samples
    flops = evaluations * 2.0 * d * d + float(rounds) * steps * STEP_OVERHEAD
    bytes_ = 8.0 * replicates * max(clients, p.clients if hasattr(p, "clients") else 1) * d * 24
    return {"flops": flops, "bytes": bytes_, "steps_per_round": steps, "clients": clients}


def check_budget(algorithm, rounds: int, replicates: int, max_work: float | None = MAX_WORK,
                 available: float | None = None) -> dict[str, float]:
    """Refuse a run whose estimated work exceeds ``max_work`` or whose memory exceeds what is
    available, naming the hyperparameters that drive it (and whether they were derived)."""
    if max_work is not None and (isinstance(max_work, bool) or not isinstance(
            max_work, numbers.Real)):
        raise TypeError(f"`max_work` must be None (no limit) or a real number > 0 of "
                        f"floating-point operations, got {max_work!r}")
    if max_work is not None and not max_work > 0:  # NaN too: it would compare False forever
        raise ValueError(f"`max_work` must be None (no limit) or a real number > 0 of "
                         f"floating-point operations, got {max_work!r}")
    est = estimate(algorithm, rounds, replicates)
    hp = algorithm.hp
    def origin(k: str) -> str:
        if k in algorithm.given:
            return ""
        default = type(algorithm).defaults.get(k)
        return (" (derived from the instance)" if default is None or callable(default)
                else " (default)")

    drivers = ", ".join(f"{k}={hp[k]}{origin(k)}"
                        for k in ("inner_steps", "neumann_steps", "local_steps",
                                  "sampled_clients", "samples", "minibatch", "period",
                                  "local_iterations")
                        if isinstance(hp.get(k), numbers.Integral))
    if hp.get("local_iterations") is not None and not isinstance(hp["local_iterations"],
                                                                 numbers.Integral):
        drivers += f", local_iterations up to {_count(hp, 'local_iterations'):.0f}"
    if max_work is not None and est["flops"] > max_work:
        raise ValueError(
            f"`{algorithm.name}` would need about {est['flops']:.2g} floating-point operations "
            f"for rounds={rounds}, replicates={replicates} ({drivers}), above the limit "
            f"{max_work:.0e} (about an hour of one core); lower these or pass max_work=None")
    if available is None:
        from bilevel_theory.problems.knobs import available_memory  # noqa: PLC0415

        available = available_memory()
    if est["bytes"] > 0.8 * available:
        raise ValueError(
            f"`{algorithm.name}` would need about {est['bytes'] / 2**30:.2f} GiB for "
            f"replicates={replicates} and {est['clients']:.0f} clients per round, more than "
            f"the {available / 2**30:.2f} GiB available; use fewer replicates or clients")
    return est
