"""The algorithm registry: the papers' algorithms, installed plug-ins, and run-time additions.

``ALGORITHMS`` (name → :class:`~bilevel_theory.algorithm.Algorithm` subclass) is built on
first use from

* each paper module's ``REGISTERED`` tuple (``fednest``, ``fedmbo``, ``gao``, ``memfbo``,
  ``afbo``);
* the entry points of installed packages in the group ``bilevel_theory.algorithms`` (each loads
  to an ``Algorithm`` subclass, a list of them, or a module with ``REGISTERED``)::

      [project.entry-points."bilevel_theory.algorithms"]
      my_method = "my_package.algorithms:MyMethod"

* :func:`register_algorithm` calls in this process.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator, Mapping
from importlib.metadata import entry_points
from typing import Any

from .algorithm import Algorithm

ENTRY_POINT_GROUP = "bilevel_theory.algorithms"
_RUNTIME: dict[str, type[Algorithm]] = {}


def _classes(obj: Any, origin: str) -> list[type[Algorithm]]:
    if isinstance(obj, types.ModuleType):
        obj = getattr(obj, "REGISTERED", None)
        if obj is None:
            raise ValueError(f"{origin}: module has no REGISTERED")
    items = obj if isinstance(obj, list | tuple) else [obj]
    for cls in items:
        if not (isinstance(cls, type) and issubclass(cls, Algorithm) and cls.name):
            raise TypeError(f"{origin}: expected Algorithm subclasses with a `name`, got {cls!r}")
    return list(items)


def _builtin() -> list[type[Algorithm]]:
    from . import afbo, fedmbo, fednest, gao, memfbo  # noqa: PLC0415

    return [cls for m in (fednest, fedmbo, gao, memfbo, afbo) for cls in m.REGISTERED]


def _plugins() -> Iterator[type[Algorithm]]:
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        origin = f"entry point {ep.name!r} ({ep.value})"
        try:
            loaded = ep.load()
        except Exception as err:  # noqa: BLE001 - name the broken plug-in
            raise ImportError(f"{origin} failed to load: {type(err).__name__}: {err}") from err
        yield from _classes(loaded, origin)


class AlgorithmRegistry(Mapping):
    """``name -> Algorithm subclass``; built-ins, plug-ins and run-time registrations."""

    def __init__(self) -> None:
        self._table: dict[str, type[Algorithm]] | None = None

    def _load(self) -> dict[str, type[Algorithm]]:
        if self._table is None:
            table: dict[str, type[Algorithm]] = {}
            for cls in [*_builtin(), *_plugins()]:
                if cls.name in table and table[cls.name] is not cls:
                    raise ValueError(f"two algorithms are named {cls.name!r}: "
                                     f"{table[cls.name].__module__} and {cls.__module__}")
                table[cls.name] = cls
            table.update(_RUNTIME)
            self._table = table
        return self._table

    def reload(self) -> None:
        self._table = None

    def __getitem__(self, name: str) -> type[Algorithm]:
        return self._load()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def __repr__(self) -> str:
        return f"AlgorithmRegistry({sorted(self._load())})"


ALGORITHMS = AlgorithmRegistry()


def register_algorithm(name: str, algorithm: type[Algorithm] | Callable[..., Any], *,
                       kinds: tuple[str, ...] = ("bilevel",),
                       defaults: Mapping[str, Any] | None = None,
                       replace: bool = False) -> type[Algorithm]:
    """Add an algorithm to :data:`ALGORITHMS` under ``name``; returns its class.

    ``algorithm`` is an :class:`Algorithm` subclass, or a step function
    ``step(ctx, state, k, hp) -> state`` (one outer round; ``state`` holds ``x`` and ``y`` of
    shape ``(R, d)``, ``hp`` the validated hyperparameters), in which case the class is built
    here with ``kinds``, ``defaults`` (hyperparameter → default) and the starting point
    ``x0``/``y0`` of :meth:`Algorithm.starting_point`.  Exchanges go through
    ``ctx.aggregate``/``ctx.broadcast`` and oracle calls through ``ctx.oracle`` so that the
    ledger counts them.  Worker processes see only algorithms that are importable there:
    declare a plug-in's algorithms as entry points (group ``bilevel_theory.algorithms``).
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"`name` must be an identifier, got {name!r}")
    if name in ALGORITHMS and not replace:
        raise ValueError(f"an algorithm named {name!r} exists (pass replace=True)")
    if isinstance(algorithm, type) and issubclass(algorithm, Algorithm):
        cls = type(algorithm.__name__, (algorithm,), {"name": name, "kinds": tuple(kinds)}
                   ) if algorithm.name != name or tuple(algorithm.kinds) != tuple(kinds) else (
            algorithm)
    elif callable(algorithm):
        step_fn = algorithm
        dflt = {"x0": None, "y0": None, **dict(defaults or {})}

        def init(self, ctx):
            return self.starting_point(ctx)

        def step(self, ctx, state, k):
            return step_fn(ctx, state, k, self.hp)

        cls = type(f"Registered_{name}", (Algorithm,), {
            "name": name, "kinds": tuple(kinds), "defaults": dflt, "init": init, "step": step,
            "__doc__": getattr(step_fn, "__doc__", None), "__module__": getattr(
                step_fn, "__module__", __name__)})
    else:
        raise TypeError(f"`algorithm` must be an Algorithm subclass or a step function, got "
                        f"{type(algorithm).__name__}")
    _RUNTIME[name] = cls
    ALGORITHMS.reload()
    return cls
