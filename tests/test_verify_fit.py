"""The checker on synthetic data with known right and wrong laws.

Synthetic measurements are ``law(x) · L`` with ``L`` a mean-one log-normal noise, so each
point's expected mean is exactly the law; "right" data must give ``holds``, "wrong" data must
give ``violated``, unresolvable data ``inconclusive`` — and each test says which.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from bilevel_theory.verify import Claim, Law, check, fit
from bilevel_theory.verify.claims.demo import DEMO_CLAIMS
from bilevel_theory.verify.verdict import assess


def _measure(x, replicates, seed, backend="numpy"):  # never called: data are synthetic
    raise AssertionError


def make_claim(kind="matches", law=-1.0, tol=0.1, scale="loglog", **kw):
    grid = {"smoke": (1,), "standard": (1,), "full": (1,)}
    reps = {"smoke": 1, "standard": 1, "full": 1}
    return Claim(id=f"synthetic.{kind}", paper="synthetic", source="test", statement="",
                 kind=kind, variable="n", quantity="q", measure=_measure, grid=grid,
                 replicates=reps, law=Law(law, "", ""), tolerance=tol, scale=scale, **kw)


def noisy(law_values, replicates=32, s=0.2, seed=0):
    """Per-point arrays with mean exactly ``law_values`` (log-normal, mean-one noise)."""
    rng = np.random.default_rng(seed)
    return [v * np.exp(s * rng.standard_normal(replicates) - s**2 / 2) for v in law_values]


def metrics(values, **more):
    out = [{"value": v} for v in values]
    for name, series in more.items():
        for m, s in zip(out, series):
            m[name] = s
    return out


X = np.array([1, 2, 4, 8, 16, 32, 64, 128], dtype=float)


# ------------------------------------------------------------------------------------ fit

def test_fit_recovers_known_slope_and_is_seeded():
    f = fit(X, noisy(3.0 * X**-1.0), "loglog", seed=1)
    assert f.ok and f.n_points == 8
    assert f.slope == pytest.approx(-1.0, abs=0.05)
    assert f.interval[0] < f.slope < f.interval[1]
    assert np.all(f.lo <= f.mean) and np.all(f.mean <= f.hi)
    again = fit(X, noisy(3.0 * X**-1.0), "loglog", seed=1)
    assert again.interval == f.interval  # same seed ⇒ same interval
    other = fit(X, noisy(3.0 * X**-1.0), "loglog", seed=2)
    assert other.interval != f.interval and other.slope == f.slope


def test_fit_exact_data_has_zero_width_interval():
    f = fit(X, [np.array([2.0 * x**-0.5]) for x in X], "loglog")
    assert f.slope == pytest.approx(-0.5, abs=1e-12)
    assert f.interval == pytest.approx((-0.5, -0.5), abs=1e-12)
    assert f.intercept == pytest.approx(np.log(2.0))


def test_fit_semilog_and_linear():
    N = np.arange(0, 40, 5.0)
    f = fit(N, [np.array([0.7**n]) for n in N], "semilog")
    assert f.slope == pytest.approx(np.log(0.7), rel=1e-10)
    g = fit(N, [np.array([3.0 + 2.0 * n, 3.0 + 2.0 * n]) for n in N], "linear")
    assert (g.slope, g.intercept) == pytest.approx((2.0, 3.0))


def test_fit_window_drops_points():
    # pre-asymptotic points (x < 8) follow another law; the window keeps only x ≥ 8
    law = np.where(X < 8, 1.0, 8.0 / X)
    f = fit(X, noisy(law), "loglog", window=(8, 128))
    assert list(f.x) == [8, 16, 32, 64, 128]
    assert list(f.excluded["x"]) == [1, 2, 4]
    assert f.slope == pytest.approx(-1.0, abs=0.06)


@pytest.mark.parametrize("bad, why", [
    ("nan", "non-finite"), ("inf", "non-finite"), ("zero", "mean ≤ 0"), ("floor", "floor"),
])
def test_fit_refuses_bad_data(bad, why):
    vals = noisy(X**-1.0)
    if bad == "nan":
        vals[3][0] = np.nan
    elif bad == "inf":
        vals[3][:] = np.inf
    elif bad == "zero":
        vals[3][:] = 0.0
    else:
        vals[3][:] = 1e-20
    f = fit(X, vals, "loglog")
    assert not f.ok and why in f.problem
    assert np.isnan(f.slope) and np.isnan(f.interval[0])


def test_fit_too_few_points_and_bad_arguments():
    f = fit(X[:2], noisy(X[:2] ** -1.0), "loglog")
    assert not f.ok and "only 2 point" in f.problem
    with pytest.raises(ValueError, match="scale"):
        fit(X, noisy(X), "cubic")
    with pytest.raises(ValueError, match="8 points"):
        fit(X, noisy(X)[:3])


def test_fit_mean_not_resolved_from_zero():
    rng = np.random.default_rng(0)
    vals = [0.01 + rng.standard_normal(8) for _ in X]  # signed, mean ≈ 0
    vals = [v - v.mean() + 0.01 for v in vals]  # every mean exactly 0.01 > 0
    f = fit(X, vals, "loglog")
    assert not f.ok and "not resolved away from 0" in f.problem


# ------------------------------------------------------------------------------- matches

def test_matches_right_slope_holds():
    a = assess(make_claim(law=-1.0), X, metrics(noisy(5.0 / X)))
    assert a.verdict == "holds", a.reason
    assert a.predicted == -1.0 and a.interval[0] <= a.measured <= a.interval[1]
    assert "predicted -1 ± 0.1" in a.reason and f"{a.measured:.4g}" in a.reason


def test_matches_wrong_slope_is_violated():
    # the data decay as x^-1/2; the claimed law says x^-1
    a = assess(make_claim(law=-1.0), X, metrics(noisy(5.0 / np.sqrt(X))))
    assert a.verdict == "violated", a.reason
    assert a.measured == pytest.approx(-0.5, abs=0.06)
    assert "excludes predicted -1 ± 0.1" in a.reason


def test_matches_noisy_data_is_inconclusive():
    a = assess(make_claim(law=-1.0), X, metrics(noisy(5.0 / X, replicates=4, s=2.5, seed=3)))
    assert a.verdict == "inconclusive", a.reason
    assert "max width" in a.reason and a.interval[1] - a.interval[0] > 0.4


def test_matches_max_width_is_respected():
    data = metrics(noisy(5.0 / X, replicates=16, s=0.4))
    wide_ok = assess(make_claim(law=-1.0, max_width=10.0), X, data)
    narrow = assess(make_claim(law=-1.0, max_width=1e-3), X, data)
    assert wide_ok.verdict == "holds" and narrow.verdict == "inconclusive"


@pytest.mark.parametrize("corrupt", ["nan", "inf", "diverged"])
def test_diverged_or_nan_runs_are_inconclusive_and_never_fitted(corrupt):
    vals = noisy(5.0 / X)
    extra = {}
    if corrupt == "nan":
        vals[5][2] = np.nan
    elif corrupt == "inf":
        vals[5][2] = np.inf
    else:
        extra["diverged"] = [np.zeros(32, bool) for _ in X]
        extra["diverged"][5][2] = True
    a = assess(make_claim(law=-1.0), X, metrics(vals, **extra))
    assert a.verdict == "inconclusive"
    assert "n=32" in a.reason and "1 of 32" in a.reason
    assert np.isnan(a.measured) and not a.fit.ok


def test_divergence_outside_a_derived_window_is_ignored():
    vals = noisy(5.0 / X)
    vals[0][:] = np.nan
    a = assess(make_claim(law=-1.0, window=(2, 128), window_derived=True,
                          window_reason="the law's asymptotic regime"), X, metrics(vals))
    assert a.verdict == "holds", a.reason
    assert a.details["full_grid"]["verdict"] == "inconclusive"


def test_a_hand_chosen_window_cannot_decide_against_the_full_grid():
    """Slope −1 on [8, 128] but −0.5 before: the window says holds, the full grid says
    violated; a window not derived from the law must not pick the verdict."""
    y = np.where(X >= 8, 5.0 / X, 5.0 / (8 * np.sqrt(X / 8)))
    claim = make_claim(law=-1.0, window=(8, 128), window_reason="chosen by hand")
    a = assess(claim, X, metrics(noisy(y)))
    assert a.verdict == "inconclusive", a.reason
    assert a.details["window_verdict"] == "holds"
    assert a.details["full_grid"]["verdict"] == "violated"
    derived = assess(make_claim(law=-1.0, window=(8, 128), window_derived=True,
                                window_reason="crossover of the law's two terms at n = 8"),
                     X, metrics(noisy(y)))
    assert derived.verdict == "holds", derived.reason


# ------------------------------------------------------------------------------ geometric

def test_geometric_right_and_wrong_ratio():
    N = np.arange(0, 41, 5.0)
    claim = make_claim("geometric", law=float(np.log(0.8)), tol=0.02, scale="semilog")
    right = assess(claim, N, metrics(noisy(0.8**N)))
    assert right.verdict == "holds", right.reason
    assert right.measured == pytest.approx(np.log(0.8), abs=0.01)
    wrong = assess(claim, N, metrics(noisy(0.9**N)))  # ratio 0.9, claimed 0.8
    assert wrong.verdict == "violated", wrong.reason
    assert wrong.measured == pytest.approx(np.log(0.9), abs=0.01)
    assert "semilog slope" in wrong.reason


def test_geometric_floor_is_inconclusive():
    N = np.arange(0, 200, 20.0)
    claim = make_claim("geometric", law=float(np.log(0.8)), tol=0.02, scale="semilog")
    a = assess(claim, N, metrics(noisy(0.8**N)))  # 0.8^180 ≈ 3e-18: below the floor
    assert a.verdict == "inconclusive" and "floor" in a.reason


# -------------------------------------------------------------------------------- at_most

def test_at_most_both_ways():
    claim = make_claim("at_most", law=-0.5, tol=0.1)  # bound: decays at least like x^-1/2
    faster = assess(claim, X, metrics(noisy(1.0 / X)))
    assert faster.verdict == "holds", faster.reason
    slower = assess(claim, X, metrics(noisy(X**-0.2)))
    assert slower.verdict == "violated", slower.reason
    assert "exceeds the bound" in slower.reason and "-0.4" in slower.reason
    # growth no faster than x^1: linear growth holds, quadratic growth is violated
    grow = make_claim("at_most", law=1.0, tol=0.1)
    assert assess(grow, X, metrics(noisy(X))).verdict == "holds"
    assert assess(grow, X, metrics(noisy(X**2))).verdict == "violated"


def test_at_most_straddling_wide_interval_is_inconclusive():
    claim = make_claim("at_most", law=-0.5, tol=0.1)
    a = assess(claim, X, metrics(noisy(X**-0.4, replicates=4, s=2.5, seed=5)))
    assert a.interval[0] <= -0.4 <= a.interval[1]
    assert a.verdict == "inconclusive", a.reason


# ------------------------------------------------------------------------------ bounded_by

def test_bounded_by_three_ways():
    claim = make_claim("bounded_by", law=float("nan"), tol=0.0)
    bound = [np.full(32, 2.0 / x) for x in X]
    below = assess(claim, X, metrics(noisy(1.0 / X), bound=bound))
    assert below.verdict == "holds", below.reason
    assert below.measured == pytest.approx(0.5, abs=0.1) and below.predicted == 1.0
    above = assess(claim, X, metrics(noisy(np.where(X >= 32, 3.0 / X, 1.0 / X)), bound=bound))
    assert above.verdict == "violated", above.reason
    assert "n=32, 64, 128" in above.reason
    near = assess(claim, X, metrics(noisy(2.0 / X, replicates=8, s=1.0), bound=bound))
    assert near.verdict == "inconclusive" and "straddles" in near.reason


def test_bounded_by_needs_a_bound_metric():
    with pytest.raises(ValueError, match="'bound'"):
        assess(make_claim("bounded_by", law=float("nan")), X, metrics(noisy(1.0 / X)))


# ---------------------------------------------------------------------------------- exact

def test_exact_counts():
    claim = make_claim("exact", law=float("nan"), tol=0.0, scale="linear")
    N = np.array([1.0, 2.0, 5.0, 10.0])
    right = [np.full(8, 2 * 5 + n + 3) for n in N]
    pred = [np.full(8, 2 * 5 + n + 3) for n in N]
    a = assess(claim, N, metrics(right, predicted=pred))
    assert a.verdict == "holds" and "equal the prediction" in a.reason
    wrong = [r.copy() for r in right]
    wrong[2][3] += 1  # one replicate counts one round too many at N = 5
    b = assess(claim, N, metrics(wrong, predicted=pred))
    assert b.verdict == "violated"
    assert "n=5: 1 of 8" in b.reason and "measured 19, predicted 18" in b.reason
    assert (b.measured, b.predicted) == (19.0, 18.0)
    const = make_claim("exact", law=4.0, tol=0.0, scale="linear")
    assert assess(const, N, metrics([np.full(3, 4.0)] * 4)).verdict == "holds"
    assert assess(const, N, metrics([np.full(3, 4.0)] * 3 + [np.full(3, 5.0)])).verdict \
        == "violated"


# ------------------------------------------------------------------------------- contrast

def test_contrast_both_ways():
    claim = make_claim("contrast", law=-1.0, tol=0.1)
    flat = noisy(np.ones_like(X), seed=9)
    ok = assess(claim, X, metrics(noisy(1.0 / X), contrast=flat))
    assert ok.verdict == "holds", ok.reason
    assert ok.details["contrast_verdict"] == "violated"
    assert ok.contrast_fit.slope == pytest.approx(0.0, abs=0.06)
    both = assess(claim, X, metrics(noisy(1.0 / X), contrast=noisy(1.0 / X, seed=9)))
    assert both.verdict == "violated" and "no contrast" in both.reason
    neither = assess(claim, X, metrics(noisy(X**-0.3), contrast=flat))
    assert neither.verdict == "violated" and "does not show the property" in neither.reason
    unclear = assess(claim, X, metrics(noisy(1.0 / X),
                                       contrast=noisy(1.0 / X, replicates=4, s=2.5, seed=2)))
    assert unclear.verdict == "inconclusive", unclear.reason


# --------------------------------------------------------------------- through check()

@pytest.mark.parametrize("claim", DEMO_CLAIMS[:-1], ids=lambda c: c.id)
def test_demo_claims_reach_their_expected_verdicts(claim):
    r = check(claim, budget="smoke", seed=0)
    assert r.verdict == claim.expected, r.reason
    assert r.status == "complete" and r.points == len(claim.grid["smoke"])
    again = check(claim, budget="smoke", seed=0)
    assert (again.measured, again.interval) == (r.measured, r.interval) or np.isnan(r.measured)


def test_an_unresolved_interval_is_inconclusive_not_holds():
    """With 16 replicates (a quarter of the smoke budget) ``demo.variance_contrast``'s 95%
    interval at seed 0, [-1.014, -0.8566], straddles the band's edge -0.9: inconclusive."""
    claim = next(c for c in DEMO_CLAIMS if c.id == "demo.variance_contrast")
    claim = dataclasses.replace(claim, replicates={**claim.replicates, "smoke": 16})
    r = check(claim, budget="smoke", seed=0)
    assert r.verdict == "inconclusive" and "straddles" in r.reason, r.reason


# ------------------------------------------------- known right and wrong slopes, many seeds

@pytest.mark.parametrize("seed", range(5))
def test_known_wrong_slope_is_violated_and_right_slope_holds(seed):
    """Values ∝ x^-1/2 against the law x^-1 (tol 0.1): violated, as ``matches`` and as
    ``at_most``; values ∝ x^-1: holds, both ways."""
    wrong = metrics(noisy(5.0 / np.sqrt(X), seed=seed))
    right = metrics(noisy(5.0 / X, seed=seed))
    for kind in ("matches", "at_most"):
        claim = make_claim(kind, law=-1.0, tol=0.1)
        w, r = assess(claim, X, wrong, seed=seed), assess(claim, X, right, seed=seed)
        assert w.verdict == "violated" and w.interval[0] > -0.9, w.reason
        assert r.verdict == "holds" and r.interval[1] <= -0.9, r.reason
        if kind == "matches":
            assert r.interval[0] >= -1.1


@pytest.mark.parametrize("kind", ["matches", "at_most", "geometric", "contrast"])
@pytest.mark.parametrize("count, expected", [(15, "inconclusive"), (16, "violated"),
                                              (32, "violated")])
def test_a_majority_of_diverged_runs_violates_and_a_minority_is_undecided(kind, count, expected):
    """At least half of the replicates diverged at one point: the median run's quantity is
    infinite there, so no stated law of finite values holds (violated); fewer: undecided."""
    vals = noisy(5.0 / X)
    div = [np.zeros(32, bool) for _ in X]
    div[6][:count] = True
    vals[6][:count] = np.inf
    extra = {"diverged": div}
    if kind == "contrast":
        extra["contrast"] = noisy(5.0 / X**0.5, seed=1)
    a = assess(make_claim(kind=kind, law=-1.0), X, metrics(vals, **extra))
    assert a.verdict == expected, a.reason
    assert f"{count} of 32 replicates diverged" in a.reason
    if expected == "violated":
        assert "n=64 (" in a.reason and "at least half" in a.reason


def test_a_diverged_contrast_algorithm_never_violates_the_claim():
    """Only the judged algorithm's divergence decides; the contrast's leaves it undecided."""
    div = [np.zeros(32, bool) for _ in X]
    div[6][:] = True
    a = assess(make_claim(kind="contrast", law=-1.0), X,
               metrics(noisy(5.0 / X), contrast=noisy(5.0 / X**0.5, seed=1),
                       contrast_diverged=div))
    assert a.verdict == "inconclusive", a.reason
    assert "(contrast algorithm)" in a.reason


def test_diverged_counts_never_decide_an_exact_claim():
    div = [np.zeros(4, bool) for _ in X]
    div[2][:] = True
    a = assess(make_claim(kind="exact", law=3.0, tol=0.0), X,
               metrics([np.full(4, 3.0) for _ in X], diverged=div))
    assert a.verdict == "inconclusive", a.reason
