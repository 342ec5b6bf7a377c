"""Slope fits with a bootstrap interval over replicates.

:func:`fit` takes one array of per-replicate measurements per sweep point and fits a line to
the per-point replicate means:

* ``loglog``: ``log(mean) = a + b·log(x)`` (power laws; ``b`` is the exponent);
* ``semilog``: ``log(mean) = a + b·x`` (geometric laws; ``b`` is the log of the ratio per unit
  of ``x``);
* ``linear``: ``mean = a + b·x``.

The interval is a stratified percentile bootstrap: at every sweep point the replicates are
resampled with replacement, independently of the other points, the means recomputed and the
line refitted; the 95% interval is the 2.5/97.5 percentiles of the refitted slopes.  The same
resamples give a per-point band of the mean (for figures).  Everything is seeded.

A fit is **not** attempted (``Fit.problem`` says why, slope and interval are NaN) when a point
in the window has non-finite replicates, when a mean that must be logged is ``≤ 0`` or sits at
a floating-point floor, when fewer than ``min_points`` points are in the window, or when more
than 2.5% of the bootstrap means are ``≤ 0`` (the mean is not resolved away from zero).

:func:`gather` measures everything a verdict on a claim is decided from, once: the health of
the points in the window (diverged or non-finite replicates), the window fit of ``"value"``
(and of ``"contrast"``), the per-point bootstrap band of the mean against ``"bound"``
(``bounded_by``), the window's raw replicates (``exact``), and the same on the full grid when
the claim has a window.  The result, an :class:`Evidence`, is all that
:mod:`~bilevel_theory.verify.verdict` reads: deciding never refits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .claim import SCALES, Claim

#: per-replicate divergence flags a measure may return: its algorithm's, a contrast algorithm's
DIVERGED = ("diverged", "contrast_diverged")
N_BOOT = 2000
LEVEL = 0.95
REL_FLOOR = 1e-13


@dataclass(frozen=True)
class Fit:
    """A fitted line and its bootstrap interval.

    Attributes:
        scale: ``loglog``, ``semilog`` or ``linear``.
        slope, intercept: least-squares line through the transformed per-point means (NaN
            when not fitted).
        interval: ``(lo, hi)`` percentile bootstrap interval of the slope (NaN when not fitted).
        x: sweep values of the points used (in the window).
        mean: per-point replicate means of those points.
        lo, hi: per-point percentile bootstrap band of the mean.
        n_points: number of points used.
        replicates: replicates per used point.
        problem: why the fit was not made (``None`` when it was).
        excluded: ``{"x", "mean", "lo", "hi"}`` of points outside the window.
    """

    scale: str
    slope: float
    intercept: float
    interval: tuple[float, float]
    x: np.ndarray
    mean: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    n_points: int
    replicates: tuple[int, ...] = ()
    problem: str | None = None
    excluded: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when a slope was fitted."""
        return self.problem is None

    @property
    def width(self) -> float:
        """Width of the slope interval (NaN when not fitted)."""
        return float(self.interval[1] - self.interval[0])

    def to_dict(self) -> dict:
        """JSON-ready: ``x, mean, lo, hi, slope, intercept, interval, scale, n_points, problem,
        excluded`` (non-finite numbers become ``None``)."""
        return {
            "x": _floats(self.x), "mean": _floats(self.mean),
            "lo": _floats(self.lo), "hi": _floats(self.hi),
            "slope": _num(self.slope), "intercept": _num(self.intercept),
            "interval": [_num(self.interval[0]), _num(self.interval[1])],
            "scale": self.scale, "n_points": self.n_points,
            "replicates": list(self.replicates), "problem": self.problem,
            "excluded": {k: _floats(v) for k, v in self.excluded.items()},
        }


def _num(v) -> float | None:
    v = float(v)
    return v if np.isfinite(v) else None


def _floats(a) -> list:
    return [_num(v) for v in np.asarray(a, dtype=float).ravel()]


def in_window(x: np.ndarray, window: tuple[float, float] | None) -> np.ndarray:
    """Boolean mask of sweep values inside the closed window (relative slack 1e-12)."""
    x = np.asarray(x, dtype=float)
    if window is None:
        return np.ones(x.shape, dtype=bool)
    lo, hi = (float(w) for w in window)
    if not lo <= hi:
        raise ValueError(f"`window` must satisfy lo ≤ hi, got {window!r}")
    slack = 1e-12 * np.maximum(1.0, np.abs(x))
    return (x >= lo - slack) & (x <= hi + slack)


def fmt_x(values) -> str:
    """Sweep values for messages: ``x=4, 16``."""
    return ", ".join(f"{float(v):.6g}" for v in values)


def _validate(x, values, scale, n_boot, level, min_points):
    if scale not in SCALES:
        raise ValueError(f"`scale` must be one of {SCALES}, got {scale!r}")
    if len(x) != len(values):
        raise ValueError(f"`x` has {len(x)} points but `values` has {len(values)}")
    if not isinstance(n_boot, int | np.integer) or n_boot < 100:
        raise ValueError(f"`n_boot` must be an integer ≥ 100, got {n_boot!r}")
    if not 0.5 < level < 1:
        raise ValueError(f"`level` must be in (0.5, 1), got {level!r}")
    if min_points < 2:
        raise ValueError(f"`min_points` must be ≥ 2, got {min_points!r}")
    arrays = []
    for i, v in enumerate(values):
        a = np.asarray(v, dtype=float).ravel()
        if a.size == 0:
            raise ValueError(f"`values[{i}]` is empty (point x={float(x[i]):.6g})")
        arrays.append(a)
    return arrays


def bootstrap_means(arrays: Sequence[np.ndarray], n_boot: int, rng: np.random.Generator):
    """``(n_boot, points)`` means of independent with-replacement resamples at each point."""
    out = np.empty((n_boot, len(arrays)))
    for j, a in enumerate(arrays):
        idx = rng.integers(0, a.size, size=(n_boot, a.size))
        out[:, j] = a[idx].mean(axis=1)
    return out


def fit(x, values, scale: str = "loglog", window: tuple[float, float] | None = None,
        n_boot: int = N_BOOT, seed: int = 0, *, level: float = LEVEL, min_points: int = 3,
        floor: float | None = None, rel_floor: float = REL_FLOOR) -> Fit:
    """Fit ``scale`` to the per-point means of ``values`` and bootstrap the slope.

    Args:
        x: sweep values, one per point.
        values: one array of per-replicate measurements per point.
        scale: ``loglog``, ``semilog`` or ``linear``.
        window: keep only points with ``lo ≤ x ≤ hi``.
        n_boot: bootstrap resamples.
        seed: seeds the bootstrap (same seed ⇒ same interval).
        level: confidence level of the percentile interval.
        min_points: fewest points in the window that allow a fit.
        floor: absolute floor: means ``≤ floor`` are "at a floating-point floor" (log scales).
        rel_floor: relative floor: means ``≤ rel_floor·max(mean)`` likewise (log scales).

    Returns:
        a :class:`Fit`; ``Fit.problem`` says why no slope was fitted.
    """
    x = np.asarray(x, dtype=float).ravel()
    arrays = _validate(x, values, scale, n_boot, level, min_points)
    rng = np.random.default_rng(seed)
    # bootstrap every point (window or not) so the band of every point is available
    finite = [bool(np.all(np.isfinite(a))) for a in arrays]
    safe = [a if ok else np.zeros(1) for a, ok in zip(arrays, finite)]
    boot = bootstrap_means(safe, n_boot, rng)
    alpha = (1 - level) / 2
    means = np.array([a.mean() if ok else np.nan for a, ok in zip(arrays, finite)])
    band_lo = np.where(finite, np.quantile(boot, alpha, axis=0), np.nan)
    band_hi = np.where(finite, np.quantile(boot, 1 - alpha, axis=0), np.nan)

    use = in_window(x, window)
    excluded = {"x": x[~use], "mean": means[~use], "lo": band_lo[~use], "hi": band_hi[~use]}
    xu, mu, bu = x[use], means[use], boot[:, use]
    reps = tuple(a.size for a, u in zip(arrays, use) if u)

    def result(slope=np.nan, intercept=np.nan, interval=(np.nan, np.nan), problem=None):
        return Fit(scale, float(slope), float(intercept), (float(interval[0]), float(interval[1])),
                   xu, mu, band_lo[use], band_hi[use], int(use.sum()), reps, problem, excluded)

    bad = [i for i, u in enumerate(use) if u and not finite[i]]
    if bad:
        counts = ", ".join(f"x={x[i]:.6g}: {int((~np.isfinite(arrays[i])).sum())} of "
                           f"{arrays[i].size}" for i in bad)
        return result(problem=f"non-finite (NaN/inf) replicates ({counts})")
    if use.sum() < min_points:
        return result(problem=f"only {int(use.sum())} point(s) in the window "
                              f"{window!r} (need ≥ {min_points})")
    if scale == "loglog" and np.any(xu <= 0):
        return result(problem=f"sweep values ≤ 0 (x={fmt_x(xu[xu <= 0])}) cannot be "
                              "log-transformed")
    if scale in ("loglog", "semilog"):
        if np.any(mu <= 0):
            return result(problem=f"mean ≤ 0 at x={fmt_x(xu[mu <= 0])} "
                                  f"(mean {fmt_x(mu[mu <= 0])}): cannot take logs")
        limit = max(rel_floor * float(mu.max()), floor if floor is not None else 0.0,
                    1e3 * np.finfo(float).tiny)
        low = mu <= limit
        if np.any(low):
            return result(problem=f"values at a floating-point floor at x={fmt_x(xu[low])} "
                                  f"(mean {fmt_x(mu[low])} ≤ {limit:.3g}); narrow the window")
    X = np.log(xu) if scale == "loglog" else xu
    if np.ptp(X) == 0:
        return result(problem="all sweep values in the window are equal")
    Y = np.log(mu) if scale != "linear" else mu
    Xc = X - X.mean()
    sxx = float(Xc @ Xc)
    slope = float(Xc @ (Y - Y.mean())) / sxx
    intercept = float(Y.mean() - slope * X.mean())
    if scale != "linear":
        positive = np.all(bu > 0, axis=1)
        if positive.mean() < 1 - alpha:
            return result(problem=f"{100 * (1 - positive.mean()):.1f}% of bootstrap means are "
                                  "≤ 0: the mean is not resolved away from 0")
        Yb = np.log(bu[positive])
    else:
        Yb = bu
    slopes = (Yb - Yb.mean(axis=1, keepdims=True)) @ Xc / sxx
    interval = (float(np.quantile(slopes, alpha)), float(np.quantile(slopes, 1 - alpha)))
    return result(slope, intercept, interval)


# ------------------------------------------------------------------- evidence for a verdict

@dataclass(frozen=True)
class Band:
    """``bounded_by``: per window point, the replicate mean of ``"value"``, its percentile
    bootstrap band ``[lo, hi]`` and the replicate mean of ``"bound"``."""

    mean: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    bound: np.ndarray


@dataclass(frozen=True)
class Evidence:
    """Everything a verdict is decided from, measured once by :func:`gather`.

    Attributes:
        value: the window fit of ``"value"`` (slope and interval NaN when ``problem``).
        contrast: the window fit of ``"contrast"`` (kind ``contrast``), else ``None``.
        problem: diverged or non-finite replicates in the window (nothing fitted), else
            ``None``.
        blown_up: the window points at which at least half of the judged algorithm's
            replicates diverged (its ``"diverged"`` metric; a contrast algorithm's is
            ``"contrast_diverged"``), as a sentence, else ``None``.
        x: sweep values of the points in the window.
        points: the metrics of those points (one dict of per-replicate arrays each).
        band: per-point band of the mean against the bound (kind ``bounded_by``), else ``None``.
        full: the same evidence on the full grid when the claim has a window, else ``None``.
    """

    value: Fit
    contrast: Fit | None
    problem: str | None
    x: np.ndarray
    points: tuple[Mapping[str, np.ndarray], ...]
    band: Band | None = None
    full: Evidence | None = None
    blown_up: str | None = None


def _require(claim: Claim, metrics, name: str) -> None:
    for m in metrics:
        if name not in m:
            raise ValueError(f"claim {claim.id}: kind {claim.kind!r} needs a {name!r} metric "
                             f"from `measure`, got {sorted(m)}")


def _health(claim: Claim, x: np.ndarray, metrics: Sequence[Mapping[str, np.ndarray]],
            use: np.ndarray, names: Sequence[str]) -> str | None:
    """Diverged or non-finite replicates in the window → a reason; ``None`` when healthy."""
    problems = []
    for i in np.flatnonzero(use):
        m = metrics[i]
        flagged = [(key, np.asarray(m[key], dtype=float)) for key in DIVERGED if key in m]
        flagged = [(key, d) for key, d in flagged if np.any(d != 0)]
        if flagged:
            problems += [f"{claim.variable}={x[i]:.6g}: {int(np.count_nonzero(d))} of "
                         f"{d.size} replicates diverged"
                         + ("" if key == "diverged" else " (contrast algorithm)")
                         for key, d in flagged]
            continue
        for name in names:
            a = np.asarray(m[name], dtype=float)
            nf = int((~np.isfinite(a)).sum())
            if nf:
                problems.append(f"{claim.variable}={x[i]:.6g}: {nf} of {a.size} non-finite "
                                f"(NaN/inf) '{name}'")
    if problems:
        return (f"runs diverged or produced NaN/inf, not fitted (predicted "
                f"{float(claim.law.value):.4g} ± {float(claim.tolerance):.4g}): "
                + "; ".join(problems))
    return None


def _blown_up(claim: Claim, x: np.ndarray, metrics: Sequence[Mapping[str, np.ndarray]],
              use: np.ndarray) -> str | None:
    """The window points at which at least half of the judged algorithm's replicates diverged
    (``"diverged"``), as a sentence; ``None`` when there is none."""
    hits = []
    for i in np.flatnonzero(use):
        d = np.asarray(metrics[i].get("diverged", ()), dtype=float)
        if d.size and 2 * np.count_nonzero(d) >= d.size:
            hits.append(f"{claim.variable}={x[i]:.6g} ({int(np.count_nonzero(d))} of {d.size})")
    return ", ".join(hits) or None


def gather(claim: Claim, x, metrics: Sequence[Mapping[str, Any]], seed: int = 0,
           n_boot: int = N_BOOT) -> Evidence:
    """Measure what a verdict on ``claim`` needs from ``metrics`` (one dict of per-replicate
    arrays per sweep value ``x``); ``seed`` seeds every bootstrap.  See :class:`Evidence`."""
    x = np.asarray(x, dtype=float).ravel()
    if len(metrics) != x.size:
        raise ValueError(f"`metrics` has {len(metrics)} points but `x` has {x.size}")
    metrics = [{k: np.atleast_1d(np.asarray(v, dtype=float)) for k, v in m.items()}
               for m in metrics]
    kind = claim.kind
    names = {"contrast": ("value", "contrast"), "bounded_by": ("value", "bound")}.get(
        kind, ("value",))
    for name in names:
        _require(claim, metrics, name)
    extra = dict(claim.extra) if claim.extra else {}
    fit_kw = {"scale": claim.scale, "window": claim.window, "n_boot": n_boot, "seed": seed,
              "floor": extra.get("floor"), "rel_floor": extra.get("rel_floor", REL_FLOOR)}
    if kind in ("bounded_by", "exact"):
        fit_kw["min_points"] = 2
    use = in_window(x, claim.window)
    idx = np.flatnonzero(use)
    problem = _health(claim, x, metrics, use, names)
    blown_up = _blown_up(claim, x, metrics, use) if problem is not None else None
    value = fit(x, [m["value"] for m in metrics], **fit_kw)
    contrast = fit(x, [m["contrast"] for m in metrics], **fit_kw) if kind == "contrast" else None
    band = None
    if problem is not None:  # never fitted: keep the per-point means (figures), drop the line
        nan, nan_iv = float("nan"), (float("nan"), float("nan"))
        value = replace(value, slope=nan, intercept=nan, interval=nan_iv, problem=problem)
        if contrast is not None:
            contrast = replace(contrast, slope=nan, intercept=nan, interval=nan_iv,
                               problem=problem)
    elif kind == "bounded_by" and idx.size:
        vals = [metrics[i]["value"] for i in idx]
        boot = bootstrap_means(vals, n_boot, np.random.default_rng(seed))
        band = Band(np.array([v.mean() for v in vals]), np.quantile(boot, 0.025, axis=0),
                    np.quantile(boot, 0.975, axis=0),
                    np.array([metrics[i]["bound"].mean() for i in idx]))
    full = None
    if claim.window is not None:
        full = gather(replace(claim, window=None), x, metrics, seed, n_boot)
    return Evidence(value, contrast, problem, x[idx], tuple(metrics[i] for i in idx), band, full,
                    blown_up)
