"""Input validation shared by every public entry point.

Each check raises ``ValueError`` or ``TypeError`` whose message names the parameter and the
allowed values, e.g. ``` `kappa` must be ≥ 1, got 0.5 ```.
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np


def check_int(name: str, value: Any, *, minimum: int | None = None,
              maximum: int | None = None) -> int:
    """An integer (bools refused) within ``[minimum, maximum]``."""
    if type(value) is not int and (  # a plain int skips the slow abstract-class check
            isinstance(value, bool) or not isinstance(value, numbers.Integral)):
        raise TypeError(f"`{name}` must be an integer, got {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"`{name}` must be ≥ {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"`{name}` must be ≤ {maximum}, got {value}")
    return value


def _clip(value: Any, width: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def check_real(name: str, value: Any, *, minimum: float | None = None,
               maximum: float | None = None, strict_minimum: bool = False,
               allowed: str | None = None) -> float:
    """A finite real number within the bounds (``strict_minimum`` makes the lower bound open);
    ``allowed`` describes the range in the error for a value beyond the float range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number, got {_clip(value)}")
    try:
        value = float(value)
    except OverflowError:  # e.g. 10**400 or Fraction(10**400)
        raise ValueError(f"`{name}` must be a finite real number"
                         f"{' in ' + allowed if allowed else ''}, got {_clip(value)} (beyond "
                         "the float range, ±1.8e308)") from None
    if not math.isfinite(value):
        raise ValueError(f"`{name}` must be finite, got {value}")
    if minimum is not None:
        if strict_minimum and value <= minimum:
            raise ValueError(f"`{name}` must be > {minimum}, got {value}")
        if not strict_minimum and value < minimum:
            raise ValueError(f"`{name}` must be ≥ {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"`{name}` must be ≤ {maximum}, got {value}")
    return value


def check_choice(name: str, value: Any, choices: Iterable[str]) -> str:
    """One of ``choices``; the error lists them and the close matches."""
    choices = tuple(choices)
    # only strings are compared: `in` on an array value would compare element-wise and raise
    if not isinstance(value, str) or value not in choices:
        close = difflib.get_close_matches(str(value), choices, n=3)
        hint = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
        raise ValueError(f"`{name}` must be one of {list(choices)}, got {value!r}{hint}")
    return value


#: array kinds that are real numbers (``b`` bool, ``c`` complex, strings, dates are not)
_REAL_KINDS = "iuf"


def as_real_array(name: str, value: Any, xp: Any = np) -> Any:
    """``value`` as a float64 array of ``xp``: integers and floats only; bools, complex
    numbers (whose imaginary part would be dropped), strings and numbers beyond the float
    range are refused naming ``name``."""
    what = f"`{name}` must be an array of floats (real numbers: int or float)"
    if isinstance(value, str | bytes):
        raise TypeError(f"{what}, got a string {_clip(value)}")
    try:
        raw = xp.asarray(value)
    except (TypeError, ValueError, OverflowError) as err:
        raise TypeError(f"{what}, got {type(value).__name__}") from err
    kind = raw.dtype.kind
    if kind == "O":  # Python objects, e.g. ints beyond int64 or a mixed list
        for v in raw.ravel().tolist():
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise TypeError(f"{what}, got an entry {_clip(v)} ({type(v).__name__})")
    elif kind not in _REAL_KINDS:
        names = {"b": "bool", "c": "complex", "U": "string", "S": "bytes"}
        raise TypeError(f"{what}, got an array of {names.get(kind, str(raw.dtype))}")
    try:
        return raw.astype(xp.float64, copy=False)
    except OverflowError:
        raise ValueError(f"`{name}` must be finite (within ±1.8e308), got an entry beyond the "
                         "float range") from None
    except (TypeError, ValueError) as err:
        raise TypeError(f"{what}, got {type(value).__name__}") from err


def check_vector(name: str, value: Any, dim: int, xp: Any = np, to_host: Any = None) -> Any:
    """A finite float array whose last axis has length ``dim`` (leading batch axes allowed;
    entries: :func:`as_real_array`).

    ``to_host`` (e.g. ``backend.to_numpy``) brings the finiteness flag of a device array to
    the host explicitly; without it the flag is converted by ``bool`` (host arrays)."""
    arr = as_real_array(name, value, xp)
    if arr.ndim == 0 or arr.shape[-1] != dim:
        raise ValueError(f"`{name}` must have last dimension {dim}, got shape {tuple(arr.shape)}")
    finite = xp.all(xp.isfinite(arr))
    if not bool(finite if to_host is None else to_host(finite)):
        raise ValueError(f"`{name}` must be finite (no NaN or inf)")
    return arr


def check_batch(*named: tuple[str, Any]) -> tuple[int, ...]:
    """The common batch shape (all axes but the last) of named arrays; an error names them."""
    try:
        return tuple(np.broadcast_shapes(*(tuple(a.shape[:-1]) for _, a in named)))
    except ValueError:
        shapes = " and ".join(f"`{n}` {tuple(a.shape)}" for n, a in named)
        raise ValueError(f"batch axes must broadcast together, got {shapes}") from None


def check_client(name: str, value: Any, clients: int) -> int:
    """A client index in ``[0, clients)``."""
    return check_int(name, value, minimum=0, maximum=clients - 1)


#: how far from 1 the sum of client weights may be (rounding of m weights, not a choice)
WEIGHTS_SUM_TOLERANCE = 1e-9


def check_weights(name: str, value: Any, clients: int) -> np.ndarray:
    """Client weights: a finite float array of shape ``(clients,)``, entries ``≥ 0`` summing
    to 1 (within :data:`WEIGHTS_SUM_TOLERANCE`); returned as a read-only host copy."""
    allowed = (f"an array of shape (m,) = ({clients},) of non-negative reals summing to 1 "
               "(one weight per client)")
    arr = as_real_array(name, value, np)
    if arr.shape != (clients,):
        raise ValueError(f"`{name}` must be {allowed}, got shape {tuple(arr.shape)}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` must be {allowed}, got a non-finite entry")
    if arr.min() < 0:
        raise ValueError(f"`{name}` must be {allowed}, got a negative entry "
                         f"{float(arr.min()):g} at client {int(arr.argmin())}")
    total = float(arr.sum())
    if abs(total - 1.0) > WEIGHTS_SUM_TOLERANCE:
        raise ValueError(f"`{name}` must be {allowed}, got a sum of {total!r}")
    out = np.array(arr, dtype=np.float64)
    out.flags.writeable = False
    return out


def unknown_names(kind: str, given: Iterable[str], accepted: Iterable[str]) -> None:
    """Reject names that are not accepted, listing the accepted ones and close matches."""
    accepted = tuple(accepted)
    for name in given:
        if name not in accepted:
            close = difflib.get_close_matches(name, accepted, n=3)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            raise ValueError(f"unknown {kind} `{name}`; accepted: {sorted(accepted)}{hint}")
