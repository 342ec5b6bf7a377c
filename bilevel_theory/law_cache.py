"""A disk cache of the laws derived from the papers' bounds, so that reading the catalogue
(``list``, ``show``) does not redo the sympy work: :func:`derived` wraps
:func:`bilevel_theory.rates.law_for`, :func:`cached_derivation` a claims module's own
derivation.  A cache file is named by the code it was derived with (:func:`_fingerprint`).
Any I/O error leaves the cache in memory only.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

from .law import Law

#: The prefixes of the toolkit's own bounds (their derivation code is in this package).
OWN_BOUNDS = ("afbo", "fedmbo", "fednest", "gao", "memfbo")
_PLAIN = (str, int, float, bool, type(None))


def _cache_path() -> Path:
    """``$BILEVEL_THEORY_CACHE`` or ``$XDG_CACHE_HOME/bilevel-theory`` (``~/.cache/…``), with
    a file named by :func:`_fingerprint`."""
    root = os.environ.get("BILEVEL_THEORY_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "bilevel-theory")
    return Path(root) / f"laws-{_fingerprint()}.json"


#: The packages whose code a derivation can read: the bounds and the engine, the instances'
#: constants, and the claims modules' own derivations (:func:`cached_derivation`).
CODE = ("bilevel_theory", "bilevel_theory.problems", "bilevel_theory.verify")


@functools.cache
def _fingerprint() -> str:
    """The code a derivation depends on: every module of :data:`CODE` (size and modification
    time) and sympy's version; any change gives another cache file."""
    h = hashlib.sha256(importlib.metadata.version("sympy").encode())
    paths = {p for name in CODE
             for root in importlib.util.find_spec(name).submodule_search_locations or ()
             for p in Path(root).rglob("*.py")}
    for path in sorted(paths):
        st = path.stat()
        h.update(f"{path}:{st.st_size}:{st.st_mtime_ns};".encode())
    return h.hexdigest()[:16]


def _encode(value: Any) -> Any:
    if isinstance(value, Law):
        return {"law": [value.value, value.latex, value.derivation]}
    if isinstance(value, tuple | list):
        return {"seq": [_encode(v) for v in value]}
    if isinstance(value, float | int) and not isinstance(value, bool):
        return {"num": float(value)}
    raise TypeError(f"cannot cache a {type(value).__name__}")


def _decode(value: Any) -> Any:
    if "law" in value:
        return Law(*value["law"])
    if "seq" in value:
        return tuple(_decode(v) for v in value["seq"])
    return value["num"]


class _LawCache:
    """``key -> value`` (a :class:`Law`, a float or a tuple of them, stored as JSON), read from
    disk once and written back whole (atomically) after each new entry; any I/O error leaves
    it in memory only."""

    def __init__(self) -> None:
        self._data: dict[str, Any] | None = None

    def _load(self) -> dict[str, Any]:
        if self._data is None:
            try:
                self._data = json.loads(_cache_path().read_text(encoding="utf-8"))
            except (OSError, ValueError):
                self._data = {}
        return self._data

    def get(self, key: str) -> Any:
        """The value stored under ``key`` (``None``: absent)."""
        hit = self._load().get(key)
        return None if hit is None else _decode(hit)

    def put(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key`` and write the file back (``TypeError``: a value
        that cannot be stored)."""
        data = self._load()
        data[key] = _encode(value)
        path = _cache_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(data, allow_nan=True), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            pass


CACHE = _LawCache()


def cache_key(bound: Any, kind: str, var: Any, kw: dict[str, Any]) -> str | None:
    """The cache key of ``law_for(bound, kind, var, **kw)``, or ``None`` when it is not
    cacheable: a bound given by object or from a plug-in, or arguments that are not plain data."""
    if not isinstance(bound, str) or bound.split(".", 1)[0] not in OWN_BOUNDS:
        return None
    items = sorted(kw.items())
    for _, v in items:
        values = v.items() if isinstance(v, dict) else [(None, v)]
        if not all(isinstance(x, _PLAIN) and isinstance(k, _PLAIN) for k, x in values):
            return None
    return json.dumps([bound, kind, var, [[k, list(v.items()) if isinstance(v, dict) else v]
                                          for k, v in items]])  # a dict keeps its order


def derived(bound: Any, kind: str, var: Any = None, **kw: Any) -> Law:
    """``rates.law_for(bound, kind, var, **kw)``, from the disk cache when the toolkit's own
    bound was derived before by the same code (sympy is imported only on a miss)."""
    key = cache_key(bound, kind, var, kw)
    hit = CACHE.get(key) if key is not None else None
    if hit is not None:
        return hit
    from .rates import law_for  # noqa: PLC0415

    law = law_for(bound, kind, var, **kw)
    if key is not None:
        CACHE.put(key, law)
    return law



def cached_derivation(fn):
    """``fn`` (a derivation of laws or exponents from the bounds, with plain arguments,
    returning a :class:`Law`, a float or a tuple of them) cached on disk beside the laws,
    keyed by its name and its arguments (its module is part of :data:`CODE`): reading a
    claims module then redoes no sympy work."""
    @functools.wraps(fn)
    def wrapper(*args: Any) -> Any:
        key = json.dumps([fn.__module__, fn.__qualname__, [repr(a) for a in args]])
        hit = CACHE.get(key)
        if hit is not None:
            return hit
        value = fn(*args)
        try:
            CACHE.put(key, value)
        except TypeError:
            pass
        return value
    return wrapper
