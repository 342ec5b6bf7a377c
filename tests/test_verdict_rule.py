"""The decision rule: ``holds`` only when the whole interval satisfies the claim, ``violated``
only when the whole interval contradicts it, ``inconclusive`` otherwise — never ``holds`` for
an interval that merely is not a violation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_verify_fit import X, make_claim, metrics, noisy

from bilevel_theory.verify import fit
from bilevel_theory.verify import verdict as verdict_module
from bilevel_theory.verify.fit import gather
from bilevel_theory.verify.verdict import assess, decide, judge

# ------------------------------------------------------------------------ decide: at_most

P, TOL = -1.0, 0.1  # at_most bound -0.9; matches band [-1.1, -0.9]


@pytest.mark.parametrize("interval, expected", [
    ((-1.3, -1.0), "holds"),        # wholly below the bound
    ((-1.3, -0.9), "holds"),        # hi on the bound
    ((-0.85, -0.7), "violated"),    # wholly above
    ((-1.0, -0.85), "inconclusive"),  # straddles, midpoint below the bound (right side)
    ((-0.95, -0.8), "inconclusive"),  # straddles, midpoint above the bound (wrong side)
    ((-0.9, -0.8), "inconclusive"),   # lo on the bound: not wholly above
    ((-5.0, 3.0), "inconclusive"),    # wide and straddling
    ((math.nan, -1.0), "inconclusive"),
])
def test_at_most(interval, expected):
    v, reason = decide("at_most", interval, P, TOL)
    assert v == expected, reason
    assert "= -0.9" in reason
    if expected == "inconclusive" and math.isfinite(interval[0]):
        assert "straddles" in reason


def test_at_most_holds_however_wide_when_wholly_below():
    assert decide("at_most", (-9.0, -1.0), P, TOL, max_width=0.4)[0] == "holds"


# ---------------------------------------------------------------- decide: matches, geometric

@pytest.mark.parametrize("kind", ["matches", "geometric"])
@pytest.mark.parametrize("interval, expected", [
    ((-1.05, -0.95), "holds"),        # inside the band
    ((-1.1, -0.9), "holds"),          # the band itself
    ((-0.95, -0.85), "inconclusive"),  # partly above the band
    ((-1.15, -1.05), "inconclusive"),  # partly below the band
    ((-1.2, -0.8), "inconclusive"),    # covers the band, width 0.4 = max width
    ((-0.85, -0.8), "violated"),       # wholly above
    ((-1.3, -1.2), "violated"),        # wholly below
    ((-0.89, 3.0), "violated"),        # wholly above and wider than max width
    ((math.nan, math.nan), "inconclusive"),
    ((-math.inf, -1.0), "inconclusive"),
])
def test_two_sided_band(kind, interval, expected):
    v, reason = decide(kind, interval, P, TOL, max_width=4 * TOL)
    assert v == expected, reason
    assert "predicted -1 ± 0.1" in reason


def test_two_sided_band_too_wide_is_never_holds():
    v, reason = decide("matches", (-1.05, -0.95), P, TOL, max_width=0.05)
    assert v == "inconclusive" and "max width 0.05" in reason


def test_random_intervals_obey_the_rule():
    """On random intervals: holds ⇒ every value satisfies, violated ⇒ none does."""
    rng = np.random.default_rng(0)
    lo = rng.uniform(-1.5, -0.5, 400)
    hi = lo + rng.exponential(0.1, 400)
    for a, b in zip(lo, hi):
        v, _ = decide("at_most", (a, b), P, TOL)
        assert v == ("holds" if b <= -0.9 else "violated" if a > -0.9 else "inconclusive")
        v, _ = decide("matches", (a, b), P, TOL, max_width=0.4)
        assert v == ("holds" if -1.1 <= a and b <= -0.9 else
                     "violated" if b < -1.1 or a > -0.9 else "inconclusive")


@pytest.mark.parametrize("args, name", [
    (("bounded_by", (0, 1), 0.0, 0.1), "`kind`"),
    (("matches", (0, 1), 0.0, -0.1), "`tol`"),
    (("matches", (0, 1), 0.0, 0.1, -1.0), "`max_width`"),
])
def test_bad_input_names_the_parameter(args, name):
    with pytest.raises(ValueError, match=name):
        decide(*args)


# ------------------------------------------------------ the rule on fits of synthetic data

def _straddling_law(kind, where):
    """The law whose limit sits inside the measured interval (``where`` of the way from the
    point estimate to ``hi``; negative: towards ``lo``), or just outside it."""
    data = metrics(noisy(5.0 / X, replicates=8, s=0.5, seed=4))
    f = fit(X, [m["value"] for m in data], seed=0)
    lo, hi = f.interval
    assert lo < f.slope < hi
    limit = {"above": hi + 0.01, "below": lo - 0.01}.get(where)
    if limit is None:
        limit = f.slope + where * ((hi - f.slope) if where > 0 else (f.slope - lo))
    tol = 0.05
    return data, make_claim(kind, law=limit - tol, tol=tol), f


@pytest.mark.parametrize("where, expected", [
    (0.5, "inconclusive"),     # limit between estimate and hi: estimate on the right side
    (-0.5, "inconclusive"),    # limit between lo and estimate: estimate on the wrong side
    ("above", "holds"),        # the whole interval below the limit
    ("below", "violated"),     # the whole interval above the limit
])
def test_at_most_on_a_fit(where, expected):
    data, claim, f = _straddling_law("at_most", where)
    a = assess(claim, X, data)
    assert a.verdict == expected, a.reason
    assert a.interval == f.interval  # the same bootstrap as a direct fit


def test_matches_partly_outside_the_band_on_a_fit():
    data = metrics(noisy(5.0 / X, replicates=8, s=0.5, seed=4))
    lo, hi = fit(X, [m["value"] for m in data], seed=0).interval
    half = (hi - lo) / 2
    inside = assess(make_claim(law=(lo + hi) / 2, tol=1.01 * half), X, data)
    assert inside.verdict == "holds", inside.reason
    for law in ((lo + hi) / 2 + 0.3 * half, (lo + hi) / 2 - 0.3 * half):  # band edge inside
        a = assess(make_claim(law=law, tol=0.99 * half), X, data)
        assert a.verdict == "inconclusive" and "straddles" in a.reason, a.reason
    away = assess(make_claim(law=hi + 0.2, tol=0.1), X, data)
    assert away.verdict == "violated", away.reason


def test_contrast_with_a_straddling_slope_is_inconclusive():
    data, _, f = _straddling_law("matches", 0.5)
    lo, hi = f.interval
    claim = make_claim("contrast", law=f.slope + 0.5 * (hi - f.slope) - 0.05, tol=0.05)
    a = assess(claim, X, [{**m, "contrast": np.ones(8)} for m in data])
    assert a.details["contrast_verdict"] == "violated"
    assert a.verdict == "inconclusive", a.reason


def test_exact_with_an_unknown_prediction_is_inconclusive():
    claim = make_claim("exact", law=float("nan"), tol=0.0, scale="linear")
    a = assess(claim, X[:4], metrics([np.full(3, 4.0)] * 4))
    assert a.verdict == "inconclusive" and "not finite" in a.reason


# ----------------------------------------------------- one seam between measuring and deciding

def test_deciding_never_refits():
    for name in ("fit", "in_window", "bootstrap_means"):
        assert not hasattr(verdict_module, name)


def test_assess_is_judge_of_gathered_evidence():
    claim = make_claim("bounded_by", law=float("nan"), tol=0.1, window=(2, 64),
                       window_reason="a test window")
    data = metrics(noisy(1.0 / X), bound=[np.full(32, 2.0 / x) for x in X])
    ev = gather(claim, X, data, seed=7)
    a, b = assess(claim, X, data, seed=7), judge(claim, ev)
    assert (a.verdict, a.reason, a.interval) == (b.verdict, b.reason, b.interval)
    assert list(ev.x) == [2, 4, 8, 16, 32, 64] and ev.full is not None
    assert ev.full.full is None and list(ev.full.x) == list(X)
    # the per-point band is a seeded bootstrap of the window's replicates
    again = gather(claim, X, data, seed=7).band
    assert np.array_equal(again.lo, ev.band.lo) and np.array_equal(again.hi, ev.band.hi)
    assert np.all(ev.band.lo <= ev.band.mean) and np.all(ev.band.mean <= ev.band.hi)


# --------------------------------------------------------------------------- resolution

def test_resolution_is_the_error_detected_with_80_percent_power():
    """The reported resolution δ is measured, not only derived: data whose true exponent is
    ``p + δ`` are called violated in about 80% of fresh experiments (≥ 65% over 120), data at
    ``p + tol`` (on the bound) in at most about half."""
    x = np.array([1.0, 2, 4, 8, 16, 32])
    rng = np.random.default_rng(7)

    def experiment(slope, seed):
        r = np.random.default_rng(seed)
        return [x_ ** slope * np.exp(0.3 * r.standard_normal(24)) for x_ in x]

    claim = make_claim("at_most", law=P, tol=TOL)
    first = assess(claim, x, [{"value": v} for v in experiment(P, 1)], n_boot=400)
    delta = first.details["resolution"]
    assert TOL < delta < 1.0
    seeds = rng.integers(0, 2**31, size=120)
    far = [assess(claim, x, [{"value": v} for v in experiment(P + delta, int(s))],
                  n_boot=200).verdict for s in seeds]
    edge = [assess(claim, x, [{"value": v} for v in experiment(P + TOL, int(s))],
                   n_boot=200).verdict for s in seeds]
    assert np.mean([v == "violated" for v in far]) >= 0.65
    assert np.mean([v == "violated" for v in edge]) <= 0.55


def test_resolution_is_nan_without_a_fit():
    assert math.isnan(verdict_module.resolution((math.nan, 1.0), 0.1))
    assert verdict_module.resolution((-1.1, -0.9), 0.1) == pytest.approx(
        0.1 + (1.959964 + 0.841621) * 0.2 / (2 * 1.959964))
