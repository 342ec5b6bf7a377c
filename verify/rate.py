"""One-call rate assertions on anyone's data: :func:`assess` and :func:`assert_rate`.

The same fit, bootstrap interval and verdict rules as the claims catalogue
(:mod:`bilevel_theory.verify.verdict`), without writing a :class:`~verify.claim.Claim`:

>>> import numpy as np
>>> from bilevel_theory.verify import assess, assert_rate
>>> rng = np.random.default_rng(0)
>>> n = np.array([1, 2, 4, 8, 16, 32, 64])
>>> y = [3.0 / k * rng.lognormal(-0.02, 0.2, size=32) for k in n]   # variance ∝ 1/n
>>> a = assess(n, y, law=-1.0, kind="matches", tolerance=0.1)
>>> a.verdict
'holds'
>>> assess(n, y, law=-0.5, kind="matches", tolerance=0.1).verdict    # a wrong exponent
'violated'
>>> _ = assert_rate(n, y, law=-1.0, tolerance=0.1)                    # passes
>>> assert_rate(n, y, law=-0.5, tolerance=0.1)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
bilevel_theory.verify.rate.RateAssertionError: rate check violated (expected holds): slope -1...

In pytest, the ``assert_rate`` fixture (installed with the package, plug-in
``bilevel_theory.verify.pytest_plugin``) gives the same function.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .claim import KINDS, SCALES, VERDICTS, Claim, Law
from .fit import N_BOOT
from .verdict import Assessment
from .verdict import assess as assess_claim


class RateAssertionError(AssertionError):
    """Raised by :func:`assert_rate` when the verdict is not the expected one."""


def _law(law: Any) -> Law:
    if isinstance(law, Law):
        return law
    if hasattr(law, "as_tuple"):  # a rates.Prediction
        return Law(*law.as_tuple())
    try:
        value = float(law)
    except (TypeError, ValueError):
        raise TypeError(f"`law` must be a number, a Law or a rates.Prediction, got "
                        f"{type(law).__name__}") from None
    return Law(value, "", "given")


def _per_point(name: str, values: Any, points: int) -> list[np.ndarray]:
    if isinstance(values, np.ndarray) and values.ndim <= 2:
        rows = [np.atleast_1d(v) for v in values] if values.ndim == 2 else [
            np.atleast_1d(v) for v in values]
    elif isinstance(values, Sequence):
        rows = [np.atleast_1d(np.asarray(v, dtype=float)) for v in values]
    else:
        raise TypeError(f"`{name}` must be one array of replicates per sweep value, got "
                        f"{type(values).__name__}")
    if len(rows) != points:
        raise ValueError(f"`{name}` has {len(rows)} points but `x` has {points}")
    return [np.asarray(r, dtype=float) for r in rows]


def assess(x: Any, y: Any, *, law: Any, kind: str = "matches", tolerance: float = 0.1,
           scale: str | None = None, window: tuple[float, float] | None = None,
           window_derived: bool = False, bound: Any = None, contrast: Any = None,
           max_width: float | None = None, seed: int = 0, n_boot: int = N_BOOT,
           variable: str = "x") -> Assessment:
    """Judge measured data against a law; returns an :class:`Assessment` (``verdict``,
    ``reason``, ``measured``, ``interval``, ``predicted``, ``fit``).

    Args:
        x: the swept values, one per point.
        y: per point, the replicates of the measured quantity (a list of arrays, or a 2-D
            array ``(points, replicates)``).
        law: the prediction: a slope (``matches``/``at_most``/``contrast``), the log of a
            geometric ratio (``geometric``), a count (``exact``); a ``Law`` or a
            ``rates.Prediction`` also work.  Unused by ``bounded_by``.
        kind: one of ``matches``, ``at_most``, ``geometric``, ``bounded_by``, ``exact``,
            ``contrast`` (see :mod:`bilevel_theory.verify.verdict`).
        tolerance: allowed distance from ``law`` (exponent units; relative slack for
            ``bounded_by``).
        scale: ``loglog`` (default), ``semilog`` (default for ``geometric``) or ``linear``.
        window: judge only ``x`` in ``[lo, hi]``; unless ``window_derived`` (the window comes
            from the law), a window whose verdict differs from the full grid's is
            ``inconclusive``.
        bound: for ``bounded_by``: the bound per point (replicates or one value).
        contrast: for ``contrast``: the second series, shaped like ``y``.
        max_width: widest interval that still allows ``holds`` (default ``4·tolerance``).
    """
    if kind not in KINDS:
        raise ValueError(f"`kind` must be one of {KINDS}, got {kind!r}")
    scale = scale or ("semilog" if kind == "geometric" else "loglog")
    if scale not in SCALES:
        raise ValueError(f"`scale` must be one of {SCALES}, got {scale!r}")
    xs = np.asarray(x, dtype=float).ravel()
    ys = _per_point("y", y, xs.size)
    metrics: list[dict[str, np.ndarray]] = [{"value": v} for v in ys]
    if kind == "bounded_by":
        if bound is None:
            raise ValueError("`bound` is required for kind='bounded_by'")
        for m, b in zip(metrics, _per_point("bound", bound, xs.size)):
            m["bound"] = np.broadcast_to(b, m["value"].shape) if b.size == 1 else b
    if kind == "contrast":
        if contrast is None:
            raise ValueError("`contrast` is required for kind='contrast'")
        for m, c in zip(metrics, _per_point("contrast", contrast, xs.size)):
            m["contrast"] = c
    claim = Claim(id="assess.data", paper="", source="", statement="", kind=kind,
                  variable=variable, quantity="y", measure=_no_measure,
                  grid={"smoke": (0,), "standard": (0,), "full": (0,)},
                  replicates={"smoke": 1, "standard": 1, "full": 1}, law=_law(law),
                  tolerance=float(tolerance), scale=scale, window=window,
                  window_derived=window_derived, window_reason="given" if window else "",
                  max_width=max_width, role="control", expected="holds")
    return assess_claim(claim, xs, metrics, seed=seed, n_boot=n_boot)


def _no_measure(*_: Any, **__: Any) -> dict:  # pragma: no cover - never run
    raise RuntimeError("assess() judges given data; it runs no experiment")


def assert_rate(x: Any, y: Any, *, expect: str = "holds", **kwargs: Any) -> Assessment:
    """:func:`assess`, raising :class:`RateAssertionError` (an ``AssertionError``) with the
    measured slope, interval and reason unless the verdict is ``expect``."""
    __tracebackhide__ = True  # pytest: the failure points at the caller's line, not here
    if expect not in VERDICTS:
        raise ValueError(f"`expect` must be one of {VERDICTS}, got {expect!r}")
    a = assess(x, y, **kwargs)
    if a.verdict != expect:
        raise RateAssertionError(f"rate check {a.verdict} (expected {expect}): {a.reason}")
    return a
