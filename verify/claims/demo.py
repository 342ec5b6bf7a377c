"""Synthetic demo claims: examples of every assertion kind, with known truths.

These exercise the verification machinery (tests, the false-violation rate, resume after a
kill) and show how a claim is written.  They are **not** part of the papers' catalogue
(``verify.CLAIMS``); run them with ``--catalogue bilevel_theory.verify.claims.demo:DEMO_CLAIMS``
(or ``BILEVEL_THEORY_CATALOGUE=bilevel_theory.verify.claims.demo:DEMO_CLAIMS``)::

    bilevel-theory verify 'demo.*' --mutants --out /tmp/demo \
        --catalogue bilevel_theory.verify.claims.demo:DEMO_CLAIMS

Every measure is exact in distribution, so the truth is known: e.g. the squared norm of the
average of ``n`` i.i.d. standard normal vectors in ``R^d`` has mean ``d/n`` exactly (a variance
∝ 1/n, like the PHE's averaged variance: Huang, Zhang & Ji, ICML 2023, Prop. 3).  The measures
compute on the host with numpy whatever ``backend`` says (they are synthetic).
"""

from __future__ import annotations

import time

import numpy as np

from ..claim import Claim, Law, Mutant, per_budget

DIM = 4
SLOW_SECONDS = 0.25


_budgets = per_budget


POW2 = _budgets([2**k for k in range(8)], [2**k for k in range(11)], [2**k for k in range(14)])
#: 64 replicates at smoke: E‖mean‖² of d = 4 standard normals has a relative standard deviation
#: √(2/d) ≈ 0.71 per replicate, so over the 8 points 2⁰…2⁷ the slope's standard error is
#: ≈ 0.71/√R/(ln 2·√42) ≈ 0.02 at R = 64: a 95% interval of half-width ≈ 0.04 lies inside the
#: ±0.1 band with probability ≈ 0.99 (at 16 replicates it straddles the band's edge about
#: half the time, and a straddle is inconclusive).
REPS = {"smoke": 64, "standard": 256, "full": 1024}


def average_noise(n, replicates, seed, backend="numpy", *, scale_power=0.0):
    """``‖(1/n) Σ_{i≤n} ξ_i‖²`` for i.i.d. ``ξ_i ~ N(0, I_d)``: mean ``d/n`` exactly.
    Mutant ``scale_power=p``: the noises scaled by ``n^p`` (mean ``d·n^{2p−1}``)."""
    rng = np.random.default_rng(seed)
    n = int(n)
    noise = rng.standard_normal((replicates, n, DIM)) * float(n) ** scale_power
    return {"value": np.sum(noise.mean(axis=1) ** 2, axis=1)}


def shared_noise(n, replicates, seed, backend="numpy"):
    """Contrast: ``n`` clients share one noisy estimate (one chain, like a shared IHGP), so the
    average over clients keeps the variance of one sample (mean ``d`` whatever ``n``)."""
    out = average_noise(n, replicates, seed, backend)
    rng = np.random.default_rng([seed, 1])
    shared = rng.standard_normal((replicates, DIM))
    out["contrast"] = np.sum(shared**2, axis=1)
    return out


def geometric_bias(N, replicates, seed, backend="numpy", *, ratio=0.8):
    """A Neumann-like bias ``ρ^N`` times a mean-one log-normal noise (``ρ = 0.8``)."""
    rng = np.random.default_rng(seed)
    s = 0.2
    noise = np.exp(s * rng.standard_normal(replicates) - s**2 / 2)
    return {"value": ratio ** float(N) * noise}


def decaying_stationarity(K, replicates, seed, backend="numpy", *, power=1.0):
    """A stationarity measure ``∝ 1/K`` with multiplicative noise (mean ``K^{-power}``)."""
    rng = np.random.default_rng(seed)
    s = 0.3
    return {"value": np.exp(s * rng.standard_normal(replicates) - s**2 / 2) / float(K) ** power}


def bounded_variance(n, replicates, seed, backend="numpy", *, constant=2.0):
    """``average_noise`` with the explicit bound ``2d/n`` (true mean ``d/n``)."""
    out = average_noise(n, replicates, seed, backend)
    out["bound"] = np.full(replicates, constant * DIM / float(n))
    return out


def count_rounds(N, replicates, seed, backend="numpy", *, extra=0):
    """Rounds of one FedNest-like epoch, counted step by step: ``T`` inner steps of 2 rounds,
    ``N`` Neumann rounds, 3 more; prediction ``2T + N + 3`` (``T = 5``).  Mutant ``extra``:
    that many more rounds per inner step."""
    T, rounds = 5, 0
    for _ in range(T):
        rounds += 2 + extra
    for _ in range(int(N)):
        rounds += 1
    rounds += 3
    return {"value": np.full(replicates, float(rounds)),
            "predicted": np.full(replicates, 2.0 * T + float(N) + 3.0)}


def diverging(n, replicates, seed, backend="numpy"):
    """``average_noise`` whose runs blow up (NaN, flagged diverged) for ``n ≥ 32``."""
    out = average_noise(n, replicates, seed, backend)
    diverged = np.zeros(replicates, dtype=bool)
    if n >= 32:
        diverged[::4] = True
        out["value"] = np.where(diverged, np.nan, out["value"])
    out["diverged"] = diverged
    return out


def slow_average_noise(n, replicates, seed, backend="numpy"):
    """``average_noise`` that also sleeps ``SLOW_SECONDS`` (to kill a run mid-way in tests)."""
    time.sleep(SLOW_SECONDS)
    return average_noise(n, replicates, seed, backend)


def _claim(id, kind, measure, law, tolerance, variable="n", quantity="E‖mean‖²", grid=POW2,
           **kw):
    return Claim(id=id, paper="demo", source="synthetic [DEMO]", kind=kind, variable=variable,
                 quantity=quantity, measure=measure, grid=grid, replicates=REPS, law=law,
                 tolerance=tolerance, **kw)


INV_N = Law(-1.0, r"\mathbb{E}\|\bar\xi_n\|^2 = d/n", "exponent of n in d/n")

DEMO_CLAIMS = [
    _claim("demo.variance_vs_n", "matches", average_noise, INV_N, 0.1,
           statement=r"\mathbb{E}\|\frac1n\sum_{i=1}^n\xi_i\|^2 \propto n^{-1}",
           mutants=(Mutant("noise_scaled_sqrt_n", "each client's noise scaled by √n: the "
                           "mean's variance no longer decays", {"scale_power": 0.5}),)),
    _claim("demo.wrong_exponent", "matches", average_noise,
           Law(-0.5, r"n^{-1/2}", "a deliberately wrong exponent"), 0.1,
           statement=r"\mathbb{E}\|\bar\xi_n\|^2 \propto n^{-1/2}", expected="violated",
           reason="synthetic: the variance of a mean of n i.i.d. vectors is d/n, so the "
                  "exponent is −1, not −1/2",
           mutants=(Mutant("noise_scaled_n_quarter", "noises scaled by n^{1/4}: the variance "
                           "is then d/√n, the stated law", {"scale_power": 0.25}),)),
    _claim("demo.variance_contrast", "contrast", shared_noise, INV_N, 0.1,
           statement=r"averaged independent estimates decay as 1/n, a shared one does not"),
    _claim("demo.geometric_bias", "geometric", geometric_bias,
           Law(float(np.log(0.8)), r"0.8^N", "log of the ratio 0.8"), 0.02, variable="N",
           quantity="bias", scale="semilog",
           grid=_budgets(range(0, 41, 5), range(0, 61, 5), range(0, 81, 5)),
           statement=r"\Delta_N \propto 0.8^N",
           mutants=(Mutant("ratio_09", "the bias contracts by 0.9 per step", {"ratio": 0.9}),)),
    _claim("demo.stationarity_at_most", "at_most", decaying_stationarity,
           Law(-0.5, r"O(K^{-1/2})", "leading exponent in K"), 0.1, variable="K",
           quantity=r"\|\nabla\Phi\|^2", grid=_budgets([10, 30, 100, 300, 1000],
                                                       [10, 30, 100, 300, 1000, 3000],
                                                       [10, 30, 100, 300, 1000, 3000, 10000]),
           statement=r"\min_k \|\nabla\Phi(x_k)\|^2 = O(K^{-1/2})",
           mutants=(Mutant("slower_decay", "the measure decays as K^{-0.3}", {"power": 0.3}),)),
    _claim("demo.variance_bounded", "bounded_by", bounded_variance,
           Law(float("nan"), r"2d/n", "explicit bound"), 0.0,
           statement=r"\mathbb{E}\|\bar\xi_n\|^2 \le 2d/n",
           mutants=(Mutant("half_constant", "the bound's constant halved (d/(2n) < d/n)",
                           {"constant": 0.5}),)),
    _claim("demo.rounds_exact", "exact", count_rounds,
           Law(float("nan"), r"2T + N + 3", "counted per epoch"), 0.0, variable="N",
           quantity="rounds per epoch", grid=_budgets([1, 2, 5, 10], [1, 2, 5, 10, 20],
                                                      [1, 2, 5, 10, 20, 50]),
           scale="linear", statement=r"\text{rounds per epoch} = 2T + N + 3",
           mutants=(Mutant("extra_round", "one extra round per inner step", {"extra": 1}),)),
    _claim("demo.diverging", "matches", diverging, INV_N, 0.1,
           statement=r"\mathbb{E}\|\bar\xi_n\|^2 \propto n^{-1}", expected="inconclusive",
           reason="synthetic: a quarter of the runs diverge (NaN) for n ≥ 32, so no slope may "
                  "be fitted"),
    _claim("demo.slow_variance", "matches", slow_average_noise, INV_N, 0.1,
           statement=r"\mathbb{E}\|\bar\xi_n\|^2 \propto n^{-1} (slow measure)",
           grid=_budgets([2**k for k in range(12)], [2**k for k in range(12)],
                         [2**k for k in range(12)])),
]

CATALOGUE = "bilevel_theory.verify.claims.demo:DEMO_CLAIMS"
