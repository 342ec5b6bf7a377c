"""A host double of a device backend (tests only): arrays that refuse implicit transfers.

CuPy arrays live on the GPU: ``np.asarray(a)`` raises ``TypeError`` (implicit conversion to a
NumPy array is not allowed), numpy ufuncs and functions dispatch to CuPy through
``__array_ufunc__``/``__array_function__``, a host ``np.ndarray`` mixed with a device array
in an operation is refused, and every ``float(a)``/``bool(a)``/``int(a)``/``a.item()``
copies the value back and synchronises the device.  :class:`StrictArray` behaves the same
way on the CPU, and stricter: each of those scalar conversions raises too, unless it happens
inside the backend's explicit :meth:`StrictBackend.to_numpy` (the one sanctioned
device → host path, counted in :data:`SYNCS`).

It is a wrapper, not an ``np.ndarray`` subclass: numpy would turn a subclass into a base
``ndarray`` in ``np.asarray`` without asking it (a silent host copy), and the library's host
fast paths (``isinstance(a, np.ndarray)``) would take it for a host array.  Its namespace
:data:`xp` is ``array_api_compat.numpy`` with every array argument unwrapped and every array
result wrapped; its generator is numpy's ``PCG64`` seeded exactly like the numpy backend's
(so a run draws the same numbers as on numpy wherever the code path draws the same way),
exposing only the methods a CuPy ``Generator`` has.

Usage: ``import strict_backend`` registers the backend as ``"strict"``
(:func:`bilevel_theory.problems.backend.register_backend`).
"""

from __future__ import annotations

import contextlib
import contextvars
import types
from dataclasses import dataclass
from typing import Any

import array_api_compat.numpy as compat_np
import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from bilevel_theory.problems.backend import Backend, register_backend

NAME = "strict"

_HOST_TRANSFER = contextvars.ContextVar("strict_host_transfer", default=False)

#: explicit device → host transfers made through :meth:`StrictBackend.to_numpy`
SYNCS = {"count": 0}


class ImplicitTransferError(TypeError):
    """An implicit device → host conversion of a :class:`StrictArray`."""


def _refuse(what: str) -> None:
    if not _HOST_TRANSFER.get():
        raise ImplicitTransferError(
            f"implicit device-to-host conversion ({what}) of a device array is not allowed: "
            "bring it to the host with backend.to_numpy(...)")


@contextlib.contextmanager
def host_transfer():
    """Allow conversions of device arrays inside (what ``to_numpy`` does)."""
    token = _HOST_TRANSFER.set(True)
    try:
        yield
    finally:
        _HOST_TRANSFER.reset(token)


def _unwrap(x: Any, host_ok: bool = False) -> Any:
    """The host arrays inside ``x`` (recursing into lists, tuples and dicts); a host
    ``np.ndarray`` mixed into a device operation is refused, as CuPy does."""
    if isinstance(x, StrictArray):
        return x._a
    if isinstance(x, np.ndarray):
        if host_ok:
            return x
        raise TypeError("a host numpy.ndarray was mixed with device arrays (CuPy refuses it: "
                        f"move it with backend.asarray first); shape {x.shape}")
    if isinstance(x, list | tuple):
        return type(x)(_unwrap(v, host_ok) for v in x)
    if isinstance(x, dict):
        return {k: _unwrap(v, host_ok) for k, v in x.items()}
    return x


def _wrap(x: Any) -> Any:
    """Array results back on the device (numpy scalars become 0-d arrays, as CuPy returns)."""
    if isinstance(x, np.ndarray):
        return StrictArray(x)
    if isinstance(x, np.generic):
        return StrictArray(np.asarray(x))
    if isinstance(x, tuple | list):
        return type(x)(_wrap(v) for v in x)
    return x


#: ndarray methods a device array offers (each unwraps its arguments and wraps its results)
_METHODS = frozenset({
    "all", "any", "argmax", "argmin", "argsort", "astype", "clip", "conj", "copy", "cumprod",
    "cumsum", "diagonal", "dot", "fill", "flatten", "max", "mean", "min", "nonzero", "prod",
    "ravel", "repeat", "reshape", "round", "sort", "squeeze", "std", "sum", "swapaxes", "take",
    "trace", "transpose", "var", "view",
})


class StrictArray(NDArrayOperatorsMixin):
    """A "device" array: a host ``np.ndarray`` that refuses implicit host conversion."""

    __slots__ = ("_a",)
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, a: np.ndarray):
        self._a = a

    # ---------------------------------------------------------------- refused conversions
    def __array__(self, dtype=None, copy=None):
        _refuse("numpy.asarray / __array__")
        return np.array(self._a, dtype=dtype, copy=True)

    def __float__(self):
        _refuse("float()")
        return float(self._a)

    def __int__(self):
        _refuse("int()")
        return int(self._a)

    def __index__(self):
        _refuse("operator.index()")
        return self._a.__index__()

    def __bool__(self):
        _refuse("bool() / if")
        return bool(self._a)

    def __complex__(self):
        _refuse("complex()")
        return complex(self._a)

    def item(self, *args):
        _refuse(".item()")
        return self._a.item(*args)

    def tolist(self):
        _refuse(".tolist()")
        return self._a.tolist()

    # ---------------------------------------------------------------- dispatch
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.get("out")
        raw = getattr(ufunc, method)(*_unwrap(inputs), **_unwrap(kwargs))
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _wrap(raw)

    def __array_function__(self, func, types, args, kwargs):
        return _wrap(func(*_unwrap(args), **_unwrap(kwargs)))

    def __array_namespace__(self, api_version=None):
        return xp

    def __getattr__(self, name: str):
        if name not in _METHODS:
            raise AttributeError(f"StrictArray has no attribute {name!r}")
        method = getattr(self._a, name)

        def call(*args, **kwargs):
            return _wrap(method(*_unwrap(args), **_unwrap(kwargs)))
        return call

    # ---------------------------------------------------------------- array attributes
    shape = property(lambda self: self._a.shape)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    dtype = property(lambda self: self._a.dtype)
    nbytes = property(lambda self: self._a.nbytes)
    itemsize = property(lambda self: self._a.itemsize)
    T = property(lambda self: StrictArray(self._a.T))
    mT = property(lambda self: StrictArray(np.swapaxes(self._a, -1, -2)))
    device = property(lambda self: NAME)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (_wrap(v) for v in self._a)

    def __getitem__(self, key):
        return _wrap(self._a[_unwrap(key)])

    def __setitem__(self, key, value):
        self._a[_unwrap(key)] = _unwrap(value, host_ok=True)  # host → device is allowed

    def __repr__(self):
        return f"StrictArray(shape={self._a.shape}, dtype={self._a.dtype})"


def _solve_rule(a, b, *args, **kwargs) -> None:
    """CuPy's ``linalg.solve`` does not broadcast batch dimensions (CuPy 14: "a must have
    (..., M, M) shape and b must have (..., M, K) for multidimensional b"); numpy does."""
    a, b = np.asarray(a), np.asarray(b)
    if b.ndim > 1 and a.shape[:-1] != b.shape[:-1]:
        raise ValueError(f"strict backend (as CuPy): linalg.solve needs equal batch shapes, "
                         f"got a {a.shape} and b {b.shape}")


#: numpy behaviours CuPy does not share, checked on the strict backend ("module.function")
_CUPY_RULES = {"linalg.solve": _solve_rule}


class _Namespace(types.ModuleType):
    """``array_api_compat.numpy`` on :class:`StrictArray`: arguments unwrapped, results
    wrapped; only the creation functions accept host data (host → device is allowed)."""

    _HOST_OK = frozenset({"asarray", "from_dlpack"})

    def __init__(self, name: str, inner: types.ModuleType):
        super().__init__(name)
        self._inner = inner

    def __getattr__(self, name: str):
        obj = getattr(self._inner, name)
        if isinstance(obj, types.ModuleType):
            sub = _Namespace(f"{self.__name__}.{name}", obj)
            setattr(self, name, sub)
            return sub
        if isinstance(obj, type) or not callable(obj):
            return obj  # dtypes, constants
        host_ok = name in self._HOST_OK
        rule = _CUPY_RULES.get(f"{self.__name__.rsplit('.', 1)[-1]}.{name}")

        def call(*args, **kwargs):
            args, kwargs = _unwrap(args, host_ok), _unwrap(kwargs, host_ok)
            if rule is not None:
                rule(*args, **kwargs)
            return _wrap(obj(*args, **kwargs))
        call.__name__ = name
        setattr(self, name, call)
        return call


#: the strict array namespace (what ``backend.xp`` is)
xp = _Namespace("strict_backend.xp", compat_np)


class StrictGenerator:
    """numpy's generator whose draws land on the device, with only the methods of a CuPy
    ``Generator`` (no ``bytes``, ``choice``, ``permutation``, ``shuffle``, ``normal``)."""

    def __init__(self, seed):
        self._g = np.random.default_rng(seed)

    def random(self, size=None, dtype=np.float64, out=None):
        return StrictArray(np.asarray(self._g.random(size, dtype=dtype)))

    def uniform(self, low=0.0, high=1.0, size=None, dtype=np.float64):
        low, high = _unwrap(low), _unwrap(high)
        return StrictArray(np.asarray(self._g.uniform(low, high, size), dtype=dtype))

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        return StrictArray(np.asarray(self._g.standard_normal(size, dtype=dtype)))

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        return StrictArray(np.asarray(self._g.integers(low, high, size, dtype=dtype,
                                                       endpoint=endpoint)))


@dataclass(frozen=True)
class StrictBackend(Backend):
    """The ``"strict"`` backend: :class:`StrictArray` arrays, :class:`StrictGenerator`."""

    def rng(self, seed):
        return StrictGenerator(seed)

    def to_numpy(self, a: Any) -> np.ndarray:
        """The one sanctioned device → host path (counted in :data:`SYNCS`)."""
        if isinstance(a, StrictArray):
            SYNCS["count"] += 1
            with host_transfer():
                return np.array(a._a, copy=True)
        return np.asarray(a)  # already on the host: what cupy.asnumpy does


def make() -> StrictBackend:
    return StrictBackend(NAME, xp, xp)


with contextlib.suppress(ValueError):  # already registered by an earlier import
    register_backend(NAME, make)
