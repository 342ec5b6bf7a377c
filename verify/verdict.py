"""Verdicts: the assertion kinds of a claim turned into ``holds | violated | inconclusive``.

Entry point: :func:`assess` ``(claim, x, metrics) -> Assessment``, where ``metrics[i]`` is the
dict of per-replicate arrays measured at sweep value ``x[i]`` (``"value"`` always; ``"contrast"``,
``"bound"``, ``"predicted"``, ``"diverged"`` where relevant).  Only points inside
``claim.window`` are judged.  Measuring and deciding are separate: :func:`~.fit.gather`
measures everything once (fits, bootstrap intervals and bands, data health) and the
functions here only read that :class:`~.fit.Evidence`.

Before anything is fitted, the points in the window are checked: a replicate flagged by a
``"diverged"`` (or a contrast algorithm's ``"contrast_diverged"``) metric, or a non-finite entry
of a judged metric, makes the claim **inconclusive** with the offending points in the reason;
such data are never fitted.  One exception: when at least half of the judged algorithm's
replicates diverged at some window point (its iterates left every bounded set,
:func:`bilevel_theory.run`), the claim is **violated** (every kind but ``exact``): each
statement bounds a quantity that is then infinite for the median run, a rate, a bound or a
law of finite values cannot hold there.

The decision rule (:func:`decide`) never calls an undecided interval ``holds``: **holds** only
when the whole 95% bootstrap interval satisfies the claim, **violated** only when the whole
interval contradicts it, **inconclusive** otherwise (the interval straddles the limit, is too
wide, or is not finite).  With ``[lo, hi]`` the interval of the measured slope, ``p`` the
predicted value (``claim.law.value``), ``tol`` the tolerance and ``W`` the widest interval
allowed (``claim.max_width``, default ``4·tol``):

* ``matches`` (tight law) and ``geometric`` (the same on the semilog slope, ``p`` = log of the
  predicted ratio): **violated** if ``[lo, hi]`` lies wholly outside ``[p − tol, p + tol]``
  (``hi < p − tol`` or ``lo > p + tol``, whatever its width); **holds** if it lies wholly
  inside and ``hi − lo ≤ W``; otherwise **inconclusive**.
* ``at_most`` (upper bound on an exponent: decay at least as fast, growth no faster):
  **violated** if ``lo > p + tol``; **holds** if ``hi ≤ p + tol`` (the whole interval
  satisfies the bound, however wide); otherwise (the interval straddles ``p + tol``)
  **inconclusive**, wherever the point estimate lies.
* ``bounded_by``: at every point, the replicate mean of ``"value"`` with its bootstrap band
  ``[m_lo, m_hi]`` is judged as ``at_most`` against the replicate mean ``b`` of ``"bound"``
  with slack (limit ``b·(1 + tol)``): **violated** if some point has ``m_lo > b(1 + tol)``;
  else **inconclusive** if some band straddles the limit (or is not finite); **holds** if every
  ``m_hi ≤ b(1 + tol)``.  Reported: the largest ratio ``mean/b`` and its band; predicted ``1``.
* ``exact`` (counts): every replicate at every point must equal the prediction within ``tol``
  (``0`` for exact counts): the ``"predicted"`` metric when the measure returns one (counts
  that depend on the sweep value, e.g. ``2T + N + 3``), else ``law.value``.  **violated** on any
  mismatch; **holds** if every difference is finite and ``≤ tol``; else **inconclusive**.
  Reported: the point with the largest deviation.
* ``contrast``: ``"value"`` (algorithm A) and ``"contrast"`` (algorithm B) are each judged as
  ``matches``.  **holds** if A holds and B is violated (B's interval excludes the law's band);
  **violated** if A is violated, or if B holds too (B shows the property: no contrast);
  **inconclusive** otherwise.

Reasons always show measured against predicted numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .claim import Claim
from .fit import N_BOOT, Evidence, Fit, fmt_x, gather

#: the kinds :func:`decide` judges from one interval
INTERVAL_KINDS = ("at_most", "matches", "geometric")


@dataclass
class Assessment:
    """What :func:`assess` found: the verdict, its reason and the numbers behind it."""

    verdict: str
    reason: str
    measured: float
    interval: tuple[float, float]
    predicted: float
    fit: Fit | None = None
    contrast_fit: Fit | None = None
    details: dict[str, Any] = field(default_factory=dict)


def g(v: float) -> str:
    """A number for a message (4 significant digits)."""
    v = float(v)
    return f"{v:.4g}" if np.isfinite(v) else str(v)


def interval_str(iv) -> str:
    return f"[{g(iv[0])}, {g(iv[1])}]"


def max_width(claim: Claim) -> float:
    """Widest slope interval that still allows ``holds`` (``claim.max_width`` or ``4·tol``)."""
    return float(claim.max_width) if claim.max_width is not None else 4.0 * claim.tolerance


# ------------------------------------------------------------------------------ decision rule

def decide(kind: str, interval: tuple[float, float], predicted: float, tol: float,
           max_width: float = math.inf, what: str = "slope") -> tuple[str, str]:
    """The decision rule on one 95% interval ``[lo, hi]``; returns ``(verdict, reason)``.

    ``at_most``: holds iff ``hi ≤ predicted + tol``, violated iff ``lo > predicted + tol``.
    ``matches``/``geometric``: holds iff ``[lo, hi] ⊆ [predicted − tol, predicted + tol]`` and
    ``hi − lo ≤ max_width``; violated iff ``hi < predicted − tol`` or ``lo > predicted + tol``.
    Anything else (straddling, too wide, non-finite) is inconclusive.  The reason starts with
    the interval; callers put the point estimate in front.
    """
    if kind not in INTERVAL_KINDS:
        raise ValueError(f"`kind` must be one of {INTERVAL_KINDS}, got {kind!r}")
    if not tol >= 0:
        raise ValueError(f"`tol` must be ≥ 0, got {tol!r}")
    if not max_width >= 0:
        raise ValueError(f"`max_width` must be ≥ 0, got {max_width!r}")
    lo, hi = float(interval[0]), float(interval[1])
    iv = interval_str((lo, hi))
    finite = math.isfinite(lo) and math.isfinite(hi)
    if kind == "at_most":
        bound = predicted + tol
        rule = f"bound: {what} ≤ predicted {g(predicted)} + tol {g(tol)} = {g(bound)}"
        if not finite:
            return "inconclusive", f"{iv} not finite ({rule})"
        if lo > bound:
            return "violated", f"{iv} exceeds the {rule}"
        if hi <= bound:
            return "holds", f"{iv} satisfies the {rule}"
        return "inconclusive", (f"{iv} straddles the {rule}: undecided; more replicates or a "
                                "wider sweep needed")
    low, high = predicted - tol, predicted + tol
    band = f"predicted {g(predicted)} ± {g(tol)}"
    if not finite:
        return "inconclusive", f"{iv} not finite ({band})"
    if hi < low or lo > high:
        return "violated", f"{iv} excludes {band}"
    if hi - lo > max_width:
        return "inconclusive", (f"{iv}: interval width {g(hi - lo)} > max width {g(max_width)} "
                                f"({band}); more replicates or a wider sweep needed")
    if low <= lo and hi <= high:
        return "holds", f"{iv} lies inside {band}"
    return "inconclusive", (f"{iv} straddles an edge of {band} = {interval_str((low, high))}: "
                            "undecided; more replicates or a wider sweep needed")


def judge_fit(kind: str, f: Fit, predicted: float, tol: float, width: float,
              what: str = "slope") -> tuple[str, str]:
    """:func:`decide` on a fit's slope interval (inconclusive when nothing was fitted)."""
    if not f.ok:
        limit = (f"bound: ≤ predicted {g(predicted)} + tol {g(tol)}" if kind == "at_most"
                 else f"predicted {g(predicted)} ± {g(tol)}")
        return "inconclusive", f"{what} not fitted ({limit}): {f.problem}"
    verdict, why = decide(kind, f.interval, predicted, tol, width, what)
    return verdict, f"{what} {g(f.slope)} {why}"


# ------------------------------------------------------------------------------------- assess

def assess(claim: Claim, x, metrics: Sequence[Mapping[str, Any]], seed: int = 0,
           n_boot: int = N_BOOT) -> Assessment:
    """Judge ``claim`` on measured ``metrics`` (one dict of per-replicate arrays per point ``x``).

    ``seed`` seeds the bootstrap.  See the module docstring for the semantics of each kind.
    With a fit ``window``, the full grid is judged too (``details["full_grid"]``); when the
    window is not derived from the law (``claim.window_derived``) and the two verdicts differ,
    the verdict is ``inconclusive``: a window chosen by hand must not decide a verdict.
    """
    return judge(claim, gather(claim, x, metrics, seed, n_boot))


#: The normal quantiles behind :func:`resolution`: a two-sided 95% interval, 80% power.
Z_INTERVAL, Z_POWER = 1.959964, 0.841621
#: The largest exponent error a rate confirmation may fail to detect with 80% power.
RESOLUTION_TARGET = 0.2


def resolution(interval: tuple[float, float], tol: float) -> float:
    """The smallest error δ in the law's value (an exponent, or a log-ratio) that the claim
    calls ``violated`` with ≥ 80% power: a true slope ``p ± δ`` gives an interval wholly past
    ``p ± tol`` when ``δ ≥ tol + (z₀.₉₇₅ + z₀.₈)·se``, with ``se`` the bootstrap standard
    error read off the measured interval's width (normal approximation).  NaN when the slope
    was not fitted."""
    lo, hi = (float(v) for v in interval)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return float("nan")
    se = (hi - lo) / (2 * Z_INTERVAL)
    return float(tol + (Z_INTERVAL + Z_POWER) * se)


def judge(claim: Claim, ev: Evidence) -> Assessment:
    """The verdict on ``claim`` from measured evidence (no fitting here); slope kinds carry
    their :func:`resolution` in ``details["resolution"]``."""
    a = _judge(claim, ev)
    if claim.kind in ("matches", "at_most", "geometric", "contrast"):
        a.details["resolution"] = resolution(a.interval, float(claim.tolerance))
    if ev.full is None:
        return a
    full = _judge(claim, ev.full)
    a.details["full_grid"] = {"verdict": full.verdict, "measured": full.measured,
                              "interval": list(full.interval)}
    if full.verdict != a.verdict and not claim.window_derived:
        a.details["window_verdict"] = a.verdict
        a = replace(a, verdict="inconclusive", reason=(
            f"the window [{fmt_x(claim.window)}] says {a.verdict} but the full grid says "
            f"{full.verdict} ({full.reason}); the window is not derived from the law, so "
            f"neither decides. Window: {a.reason}"))
    return a


def _judge(claim: Claim, ev: Evidence) -> Assessment:
    nan_iv = (float("nan"), float("nan"))
    p, tol, width = float(claim.law.value), float(claim.tolerance), max_width(claim)
    vf, kind = ev.value, claim.kind
    if ev.problem is not None:
        if ev.blown_up is not None and kind != "exact":
            return Assessment("violated", (
                f"at least half of the runs diverged at {ev.blown_up}: the median run left "
                "every bounded set, so the stated law of finite values cannot hold there; "
                + ev.problem), float("nan"), nan_iv, p, vf, ev.contrast)
        return Assessment("inconclusive", ev.problem, float("nan"), nan_iv, p, vf, ev.contrast)
    if not ev.x.size:
        return Assessment("inconclusive", f"no sweep point in the window {claim.window!r}",
                          float("nan"), nan_iv, p, vf, ev.contrast)
    if kind == "contrast":
        return _contrast(claim, vf, ev.contrast, p, tol, width)
    if kind == "bounded_by":
        return _bounded_by(claim, ev, tol)
    if kind == "exact":
        return _exact(claim, ev, tol)
    what = "semilog slope" if kind != "at_most" and claim.scale == "semilog" else "slope"
    verdict, reason = judge_fit(kind, vf, p, tol, width, what)
    if vf.ok:
        reason += f" ({_span(claim, vf)})"
    return Assessment(verdict, reason, vf.slope, vf.interval, p, vf)


def _span(claim: Claim, f: Fit) -> str:
    return (f"{f.scale} fit over {f.n_points} points, {claim.variable} ∈ "
            f"[{g(f.x.min())}, {g(f.x.max())}], {min(f.replicates)} replicates")


def _contrast(claim, vf: Fit, cf: Fit, p, tol, width) -> Assessment:
    va, ra = judge_fit("matches", vf, p, tol, width, "slope")
    vb, rb = judge_fit("matches", cf, p, tol, width, "contrast slope")
    if va == "violated":
        verdict = "violated"
        why = "the algorithm does not show the property"
    elif vb == "holds":
        verdict = "violated"
        why = "the contrast algorithm shows the property too: no contrast"
    elif va == "holds" and vb == "violated":
        verdict = "holds"
        why = "the property holds for the algorithm and is excluded for the contrast"
    else:
        verdict = "inconclusive"
        why = "one of the two slopes is not resolved"
    reason = f"{why}: {ra}; {rb}"
    if vf.ok:
        reason += f" ({_span(claim, vf)})"
    return Assessment(verdict, reason, vf.slope, vf.interval, p, vf, cf,
                      {"contrast_measured": cf.slope, "contrast_interval": cf.interval,
                       "contrast_verdict": vb})


def _bounded_by(claim, ev: Evidence, tol) -> Assessment:
    b = ev.band
    limit = b.bound * (1 + tol)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio, rlo, rhi = b.mean / b.bound, b.lo / b.bound, b.hi / b.bound
    worst = int(np.nanargmax(np.where(b.bound > 0, ratio, np.inf)))
    xs = ev.x
    verdicts = np.array([decide("at_most", (lo, hi), lim, 0.0)[0]
                         for lo, hi, lim in zip(b.lo, b.hi, limit)])
    above, undecided = verdicts == "violated", verdicts == "inconclusive"
    head = (f"max mean/bound {g(ratio[worst])} {interval_str((rlo[worst], rhi[worst]))} at "
            f"{claim.variable}={g(xs[worst])} (mean {g(b.mean[worst])}, bound "
            f"{g(b.bound[worst])}; required ≤ 1 + tol {g(tol)})")
    if np.any(above):
        verdict = "violated"
        reason = f"{head}; above the bound at {claim.variable}={fmt_x(xs[above])}"
    elif np.any(undecided):
        verdict = "inconclusive"
        reason = (f"{head}; the band straddles the bound (or is not finite) at "
                  f"{claim.variable}={fmt_x(xs[undecided])}")
    else:
        verdict = "holds"
        reason = f"{head}; below the bound at all {xs.size} points"
    return Assessment(verdict, reason, float(ratio[worst]), (float(rlo[worst]), float(rhi[worst])),
                      1.0, ev.value, None, {"bound": b.bound.tolist(), "bound_x": xs.tolist()})


def _exact(claim, ev: Evidence, tol) -> Assessment:
    worst, worst_dev, worst_val, worst_pred = 0, -1.0, np.nan, np.nan
    preds, mismatches, unknown, total = [], [], [], 0
    for k, m in enumerate(ev.points):
        v = m["value"]
        pred = m.get("predicted", np.full(v.shape, float(claim.law.value)))
        pred = np.broadcast_to(pred, v.shape)
        preds.append(float(pred.mean()))
        dev = np.abs(v - pred)
        total += v.size
        j = int(np.nanargmax(dev)) if np.any(np.isfinite(dev)) else 0
        if dev[j] > worst_dev:
            worst, worst_dev, worst_val, worst_pred = k, float(dev[j]), float(v[j]), float(pred[j])
        bad = dev > tol
        if np.any(bad):
            i = int(np.argmax(bad))
            mismatches.append(f"{claim.variable}={ev.x[k]:.6g}: {int(bad.sum())} of {v.size} "
                              f"replicates differ (e.g. measured {g(v[i])}, predicted "
                              f"{g(pred[i])})")
        if not np.all(np.isfinite(dev)):
            unknown.append(f"{claim.variable}={ev.x[k]:.6g}")
    vals = ev.points[worst]["value"]
    interval = (float(vals.min()), float(vals.max()))
    if mismatches:
        verdict = "violated"
        reason = "counts differ from the prediction: " + "; ".join(mismatches)
    elif unknown:
        verdict = "inconclusive"
        reason = ("measured or predicted count not finite at " + ", ".join(unknown)
                  + f" (predicted {g(claim.law.value)})")
    else:
        verdict = "holds"
        reason = (f"all {total} replicate counts at {ev.x.size} points equal the prediction "
                  f"(largest |measured − predicted| {g(worst_dev)} ≤ tol {g(tol)}; e.g. "
                  f"{claim.variable}={g(ev.x[worst])}: measured {g(worst_val)}, predicted "
                  f"{g(worst_pred)})")
    return Assessment(verdict, reason, worst_val, interval, worst_pred, ev.value, None,
                      {"predicted_per_point": preds, "predicted_x": ev.x.tolist()})
