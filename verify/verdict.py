"""Verdicts: the assertion kinds of a claim turned into ``holds | violated | inconclusive``.

Entry point: :func:`assess` ``(claim, x, metrics) -> Assessment``, where ``metrics[i]`` is the
dict of per-replicate arrays measured at sweep value ``x[i]`` (``"value"`` always; ``"contrast"``,
``"bound"``, ``"predicted"``, ``"diverged"`` where relevant).  Only points inside
``claim.window`` are judged.

Before anything is fitted, the points in the window are checked: a replicate flagged by a
``"diverged"`` metric (bool or 0/1), or a non-finite entry of a judged metric, makes the claim
**inconclusive** with the offending points in the reason; such data are never fitted.

Semantics, with ``[lo, hi]`` the 95% bootstrap interval of the measured slope, ``p`` the
predicted value (``claim.law.value``), ``tol`` the tolerance and ``W`` the widest interval
allowed (``claim.max_width``, default ``4·tol``):

* ``matches`` (tight law) and ``geometric`` (the same on the semilog slope, ``p`` = log of the
  predicted ratio): **violated** if ``[lo, hi]`` lies entirely outside ``[p − tol, p + tol]``
  (whatever its width: the data exclude the law); else **inconclusive** if ``hi − lo > W`` or
  the fit failed; else **holds**.
* ``at_most`` (upper bound on an exponent: decay at least as fast, growth no faster):
  **violated** if ``lo > p + tol``; **holds** if ``hi ≤ p + tol`` (the whole interval satisfies
  the bound, however wide); otherwise (the interval straddles ``p + tol``) **inconclusive** if
  wider than ``W``, **holds** if not (consistent).
* ``bounded_by``: at every point, the replicate mean of ``"value"`` with its bootstrap band
  ``[m_lo, m_hi]`` against the replicate mean ``b`` of ``"bound"`` (slack ``b·(1 + tol)``):
  **violated** if some point has ``m_lo > b(1 + tol)``; **inconclusive** if some band straddles
  it; **holds** if every ``m_hi ≤ b(1 + tol)``.  Reported: the largest ratio ``mean/b`` and its
  band; predicted ``1``.
* ``exact`` (counts): every replicate at every point must equal the prediction within ``tol``
  (``0`` for exact counts): the ``"predicted"`` metric when the measure returns one (counts
  that depend on the sweep value, e.g. ``2T + N + 3``), else ``law.value``.  **violated** on any
  mismatch, else **holds**.  Reported: the point with the largest deviation.
* ``contrast``: ``"value"`` (algorithm A) and ``"contrast"`` (algorithm B) are each judged as
  ``matches``.  **holds** if A holds and B is violated (B's interval excludes the law's band);
  **violated** if A is violated, or if B holds too (B shows the property: no contrast);
  **inconclusive** otherwise.

Reasons always show measured against predicted numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .claim import Claim
from .fit import N_BOOT, REL_FLOOR, Fit, bootstrap_means, fit, fmt_x, in_window


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


# ----------------------------------------------------------------------------- slope judgements

def judge_matches(f: Fit, predicted: float, tol: float, width: float,
                  what: str = "slope") -> tuple[str, str]:
    """``matches``/``geometric``: the interval against the band ``predicted ± tol``."""
    band = f"predicted {g(predicted)} ± {g(tol)}"
    if not f.ok:
        return "inconclusive", f"{what} not fitted ({band}): {f.problem}"
    lo, hi = f.interval
    head = f"{what} {g(f.slope)} {interval_str(f.interval)}"
    if hi < predicted - tol or lo > predicted + tol:
        return "violated", f"{head} excludes {band}"
    if hi - lo > width:
        return "inconclusive", (f"{head}: interval width {g(hi - lo)} > max width {g(width)} "
                                f"({band}); more replicates or a wider sweep needed")
    return "holds", f"{head} consistent with {band}"


def judge_at_most(f: Fit, predicted: float, tol: float, width: float,
                  what: str = "slope") -> tuple[str, str]:
    """``at_most``: the interval against the upper bound ``predicted + tol``."""
    bound = predicted + tol
    if not f.ok:
        return "inconclusive", (f"{what} not fitted (bound: ≤ predicted {g(predicted)} + tol "
                                f"{g(tol)}): {f.problem}")
    lo, hi = f.interval
    head = f"{what} {g(f.slope)} {interval_str(f.interval)}"
    rule = f"bound: {what} ≤ predicted {g(predicted)} + tol {g(tol)} = {g(bound)}"
    if lo > bound:
        return "violated", f"{head} exceeds the {rule}"
    if hi <= bound:
        return "holds", f"{head} satisfies the {rule}"
    if hi - lo > width:
        return "inconclusive", (f"{head} straddles the {rule} and is wider than max width "
                                f"{g(width)}")
    return "holds", f"{head} consistent with the {rule}"


# ---------------------------------------------------------------------------------- data health

def _health(claim: Claim, x: np.ndarray, metrics: Sequence[Mapping[str, np.ndarray]],
            use: np.ndarray, names: Sequence[str]) -> str | None:
    """Diverged or non-finite replicates in the window → a reason; ``None`` when healthy."""
    problems = []
    for i in np.flatnonzero(use):
        m = metrics[i]
        if "diverged" in m:
            d = np.asarray(m["diverged"], dtype=float)
            if np.any(d != 0):
                problems.append(f"{claim.variable}={x[i]:.6g}: {int(np.count_nonzero(d))} of {d.size} "
                                "replicates diverged")
                continue
        for name in names:
            a = np.asarray(m[name], dtype=float)
            nf = int((~np.isfinite(a)).sum())
            if nf:
                problems.append(f"{claim.variable}={x[i]:.6g}: {nf} of {a.size} non-finite (NaN/inf) "
                                f"'{name}'")
    if problems:
        return (f"runs diverged or produced NaN/inf, not fitted (predicted "
                f"{g(claim.law.value)} ± {g(claim.tolerance)}): " + "; ".join(problems))
    return None


def _require(claim: Claim, metrics, name: str) -> None:
    for m in metrics:
        if name not in m:
            raise ValueError(f"claim {claim.id}: kind {claim.kind!r} needs a {name!r} metric "
                             f"from `measure`, got {sorted(m)}")


# ------------------------------------------------------------------------------------- assess

def assess(claim: Claim, x, metrics: Sequence[Mapping[str, Any]], seed: int = 0,
           n_boot: int = N_BOOT) -> Assessment:
    """Judge ``claim`` on measured ``metrics`` (one dict of per-replicate arrays per point ``x``).

    ``seed`` seeds the bootstrap.  See the module docstring for the semantics of each kind.
    With a fit ``window``, the full grid is judged too (``details["full_grid"]``); when the
    window is not derived from the law (``claim.window_derived``) and the two verdicts differ,
    the verdict is ``inconclusive``: a window chosen by hand must not decide a verdict.
    """
    a = _assess(claim, x, metrics, seed, n_boot)
    if claim.window is None:
        return a
    full = _assess(replace(claim, window=None), x, metrics, seed, n_boot)
    a.details["full_grid"] = {"verdict": full.verdict, "measured": full.measured,
                              "interval": list(full.interval)}
    if full.verdict != a.verdict and not claim.window_derived:
        a.details["window_verdict"] = a.verdict
        a = replace(a, verdict="inconclusive", reason=(
            f"the window [{fmt_x(claim.window)}] says {a.verdict} but the full grid says "
            f"{full.verdict} ({full.reason}); the window is not derived from the law, so "
            f"neither decides. Window: {a.reason}"))
    return a


def _assess(claim: Claim, x, metrics: Sequence[Mapping[str, Any]], seed: int,
            n_boot: int) -> Assessment:
    x = np.asarray(x, dtype=float).ravel()
    if len(metrics) != x.size:
        raise ValueError(f"`metrics` has {len(metrics)} points but `x` has {x.size}")
    metrics = [{k: np.atleast_1d(np.asarray(v, dtype=float)) for k, v in m.items()}
               for m in metrics]
    _require(claim, metrics, "value")
    use = in_window(x, claim.window)
    kind = claim.kind
    nan_iv = (float("nan"), float("nan"))
    names = {"contrast": ("value", "contrast"), "bounded_by": ("value", "bound"),
             "exact": ("value",)}.get(kind, ("value",))
    for name in names:
        _require(claim, metrics, name)
    extra = dict(claim.extra) if claim.extra else {}
    fit_kw = {"scale": claim.scale, "window": claim.window, "n_boot": n_boot, "seed": seed,
              "floor": extra.get("floor"), "rel_floor": extra.get("rel_floor", REL_FLOOR)}
    if kind in ("bounded_by", "exact"):
        fit_kw["min_points"] = 2
    problem = _health(claim, x, metrics, use, names)
    value_fit = fit(x, [m["value"] for m in metrics], **fit_kw)
    contrast_fit = (fit(x, [m["contrast"] for m in metrics], **fit_kw)
                    if kind == "contrast" else None)
    if problem is not None:  # never fitted: keep the per-point means (figures), drop the line
        nan = float("nan")
        value_fit = replace(value_fit, slope=nan, intercept=nan, interval=nan_iv, problem=problem)
        if contrast_fit is not None:
            contrast_fit = replace(contrast_fit, slope=nan, intercept=nan, interval=nan_iv,
                                   problem=problem)
        return Assessment("inconclusive", problem, float("nan"), nan_iv, float(claim.law.value),
                          value_fit, contrast_fit)
    if not use.any():
        return Assessment("inconclusive", f"no sweep point in the window {claim.window!r}",
                          float("nan"), nan_iv, float(claim.law.value), value_fit, contrast_fit)

    p, tol, width = float(claim.law.value), float(claim.tolerance), max_width(claim)
    if kind in ("matches", "geometric"):
        what = "semilog slope" if claim.scale == "semilog" else "slope"
        verdict, reason = judge_matches(value_fit, p, tol, width, what)
    elif kind == "at_most":
        verdict, reason = judge_at_most(value_fit, p, tol, width)
    elif kind == "contrast":
        return _contrast(claim, value_fit, contrast_fit, p, tol, width)
    elif kind == "bounded_by":
        return _bounded_by(claim, x, metrics, use, value_fit, seed, n_boot, tol)
    elif kind == "exact":
        return _exact(claim, x, metrics, use, value_fit, tol)
    else:  # pragma: no cover - Claim validates kinds
        raise ValueError(f"unknown kind {kind!r}")
    if value_fit.ok:
        reason += f" ({_span(claim, value_fit)})"
    return Assessment(verdict, reason, value_fit.slope, value_fit.interval, p, value_fit)


def _span(claim: Claim, f: Fit) -> str:
    return (f"{f.scale} fit over {f.n_points} points, {claim.variable} ∈ "
            f"[{g(f.x.min())}, {g(f.x.max())}], {min(f.replicates)} replicates")


def _contrast(claim, vf: Fit, cf: Fit, p, tol, width) -> Assessment:
    va, ra = judge_matches(vf, p, tol, width, "slope")
    vb, rb = judge_matches(cf, p, tol, width, "contrast slope")
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


def _bounded_by(claim, x, metrics, use, vf: Fit, seed, n_boot, tol) -> Assessment:
    idx = np.flatnonzero(use)
    vals = [metrics[i]["value"] for i in idx]
    bounds = np.array([metrics[i]["bound"].mean() for i in idx])
    means = np.array([v.mean() for v in vals])
    boot = bootstrap_means(vals, n_boot, np.random.default_rng(seed))
    lo, hi = np.quantile(boot, 0.025, axis=0), np.quantile(boot, 0.975, axis=0)
    limit = bounds * (1 + tol)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio, rlo, rhi = means / bounds, lo / bounds, hi / bounds
    worst = int(np.nanargmax(np.where(bounds > 0, ratio, np.inf)))
    xs = x[idx]
    above = lo > limit
    straddle = (hi > limit) & ~above
    head = (f"max mean/bound {g(ratio[worst])} {interval_str((rlo[worst], rhi[worst]))} at "
            f"{claim.variable}={g(xs[worst])} (mean {g(means[worst])}, bound "
            f"{g(bounds[worst])}; required ≤ 1 + tol {g(tol)})")
    if np.any(above):
        verdict = "violated"
        reason = f"{head}; above the bound at {claim.variable}={fmt_x(xs[above])}"
    elif np.any(straddle):
        verdict = "inconclusive"
        reason = (f"{head}; the band straddles the bound at "
                  f"{claim.variable}={fmt_x(xs[straddle])}")
    else:
        verdict = "holds"
        reason = f"{head}; below the bound at all {idx.size} points"
    return Assessment(verdict, reason, float(ratio[worst]), (float(rlo[worst]), float(rhi[worst])),
                      1.0, vf, None, {"bound": bounds.tolist(), "bound_x": xs.tolist()})


def _exact(claim, x, metrics, use, vf: Fit, tol) -> Assessment:
    idx = np.flatnonzero(use)
    worst, worst_dev, worst_val, worst_pred = idx[0], -1.0, np.nan, np.nan
    preds, mismatches, total = [], [], 0
    for i in idx:
        v = metrics[i]["value"]
        pred = metrics[i].get("predicted", np.full(v.shape, float(claim.law.value)))
        pred = np.broadcast_to(pred, v.shape)
        preds.append(float(pred.mean()))
        dev = np.abs(v - pred)
        total += v.size
        j = int(np.argmax(dev))
        if dev[j] > worst_dev:
            worst, worst_dev, worst_val, worst_pred = i, float(dev[j]), float(v[j]), float(pred[j])
        bad = dev > tol
        if np.any(bad):
            k = int(np.argmax(bad))
            mismatches.append(f"{claim.variable}={x[i]:.6g}: {int(bad.sum())} of {v.size} "
                              f"replicates differ (e.g. measured {g(v[k])}, predicted "
                              f"{g(pred[k])})")
    vals = metrics[worst]["value"]
    interval = (float(vals.min()), float(vals.max()))
    if mismatches:
        verdict = "violated"
        reason = "counts differ from the prediction: " + "; ".join(mismatches)
    else:
        verdict = "holds"
        reason = (f"all {total} replicate counts at {idx.size} points equal the prediction "
                  f"(largest |measured − predicted| {g(worst_dev)} ≤ tol {g(tol)}; e.g. "
                  f"{claim.variable}={g(x[worst])}: measured {g(worst_val)}, predicted "
                  f"{g(worst_pred)})")
    return Assessment(verdict, reason, worst_val, interval, worst_pred, vf, None,
                      {"predicted_per_point": preds, "predicted_x": x[idx].tolist()})
