"""AFBO's round time against the number of clients ``m`` (``python -m benchmarks.afbo_scale``).

One AFBO round (Li, Zhu, Gong, Mao & Zhou, WiOpt 2024, Alg. 1 + APHE) at the library's
defaults (``K = 10`` inner steps, ``delay="bounded:3"``, APHE as written: ``U = m``; or
``--truncation random``, ``N = ⌈κ_g log 10³⌉``) on the claims' kind of instance (``d = 3``,
``κ = 2``, gradient noise 1, exact second-order products), one replicate.  Each case times
``rounds`` consecutive ``step`` calls after ``init`` (round 0, where every client uploads,
included) and reports their mean.  The exponent is the least-squares slope of
``log(seconds) ~ log(m)`` over all cases and over the two largest ``m``.  ``--pairwise`` times
the literal ``m × m`` APHE (``afbo.aphe_pairwise``) instead of the factorised one.
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any
from unittest import mock

import numpy as np

from bilevel_theory import ALGORITHMS, afbo, make_context
from bilevel_theory.problems import QuadraticBilevel

#: Default grid: clients and timed rounds (fewer at large m).
CASES = ((10, 5), (100, 5), (1000, 3), (10_000, 2), (100_000, 1))


def afbo_round_seconds(clients: int, rounds: int, truncation: str = "fixed",
                       pairwise: bool = False, hessian_noise: float = 0.0,
                       seed: int = 0) -> dict[str, Any]:
    """Mean seconds per AFBO round at ``clients`` clients over ``rounds`` rounds."""
    problem = QuadraticBilevel.random(clients=clients, dim_x=3, dim_y=3, kappa=2.0,
                                      heterogeneity=1.0, noise=1.0, hessian_noise=hessian_noise,
                                      seed=seed, upper_mu=1.0)
    problem.constants  # noqa: B018  (cached; the defaults read it)
    algorithm = ALGORITHMS["afbo"](problem, truncation=truncation)
    ctx = make_context(problem, 1, seed)
    state = algorithm.init(ctx)
    estimator = afbo.aphe_pairwise if pairwise else afbo.aphe
    with mock.patch.object(afbo, "aphe", estimator):
        start = time.perf_counter()
        for t in range(rounds):
            state = algorithm.step(ctx, state, t)
        seconds = (time.perf_counter() - start) / rounds
    return dict(clients=clients, rounds=rounds, truncation=truncation, pairwise=pairwise,
                hessian_noise=hessian_noise, seconds_per_round=seconds)


def exponents(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Slopes of ``log(seconds per round)`` against ``log(m)``: all cases, two largest."""
    m = np.log([r["clients"] for r in rows])
    s = np.log([r["seconds_per_round"] for r in rows])
    out = {"all": float(np.polyfit(m, s, 1)[0]) if len(rows) > 1 else math.nan}
    out["largest_two"] = float((s[-1] - s[-2]) / (m[-1] - m[-2])) if len(rows) > 1 else math.nan
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.afbo_scale", description=__doc__)
    parser.add_argument("--clients", type=int, nargs="+", default=[m for m, _ in CASES])
    parser.add_argument("--rounds", type=int, nargs="+", default=None,
                        help="timed rounds per case (default: 5 up to m = 100, then 3, 2, 1)")
    parser.add_argument("--truncation", default="fixed", choices=afbo.TRUNCATIONS)
    parser.add_argument("--hessian-noise", type=float, default=0.0)
    parser.add_argument("--pairwise", action="store_true",
                        help="the literal m × m APHE (the reference) instead of the factorised")
    args = parser.parse_args(argv)
    default = dict(CASES)
    rounds = args.rounds or [default.get(m, 1) for m in args.clients]
    if len(rounds) != len(args.clients):
        parser.error("--rounds needs one value per --clients value")
    rows = []
    print("| m | rounds | s/round |\n|---|---|---|")
    for m, k in zip(args.clients, rounds, strict=True):
        rows.append(afbo_round_seconds(m, k, args.truncation, args.pairwise, args.hessian_noise))
        print(f"| {m} | {k} | {rows[-1]['seconds_per_round']:.4g} |", flush=True)
    e = exponents(rows)
    print(f"exponent in m: {e['all']:.2f} (all cases), {e['largest_two']:.2f} (two largest m)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
