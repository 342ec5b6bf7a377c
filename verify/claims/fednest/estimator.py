"""FedNest's FedIHGP estimator (Tarzanagh, Li, Thrampoulidis & Oymak, ICML 2022, Lemma
2.2): the bias ratio ``(κ_g − 1)/κ_g`` of Alg. 3's estimator and of the official code's,
the indirect term's bias bound (eq. 15) and the deviation bound ``2/μ_g`` (eq. 14),
exact and with Hessian samples."""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from bilevel_theory import make_context, rates
from bilevel_theory.estimators import ihgp, released_ihgp
from bilevel_theory.problems import QuadraticBilevel
from bilevel_theory.problems.oracle import with_noise_distribution

from ...claim import Condition, Law, Mutant
from ...kit import kappa_log_condition, kappa_log_steps, law, per_budget, per_replicate
from ..fedmbo.bias import TIGHT
from ..fedmbo.common import SCALAR_POINT, scalar_problem
from .common import P, _lemma22_conditions

IHGP_DRAWS = 1024  # IHGP calls averaged inside one replicate
IHGP_CLIENTS = 5   # |S_n| of 20


@functools.cache
def _ihgp_problem():
    """κ = 5, coupling 0.5: κ_g = ℓ_{g,1}/μ_g ≈ 5.13.  ``structured`` storage shares the
    eigenbasis of the ``A_i``, so ``λ_min(mean A_i) = μ_g`` exactly (extremes pinned) and the
    bias matrix ``A⁻¹(I − A/ℓ_{g,1})^N`` has norm exactly ``((κ_g−1)/κ_g)^N/μ_g`` along the
    bottom eigenvector ``w``.  The point ``(x, y) = (0, y_w)`` is chosen so that the global
    ``∇_y f(0, y_w) = w``; then ``E p_{N'} − A⁻¹∇_y f = −A⁻¹(I − A/ℓ)^N w`` (Lemma 2.2)."""
    prob = QuadraticBilevel.random(clients=20, dim_x=2, dim_y=3, kappa=5.0, heterogeneity=0.3,
                                   noise=0.0, seed=0, coupling=0.5, storage="structured")
    mats = [prob.client(i) for i in range(prob.clients)]
    A = np.mean([m["A"] for m in mats], axis=0)
    S = np.mean([m["S"] for m in mats], axis=0)
    q = np.mean([m["q"] for m in mats], axis=0)
    evals, evecs = np.linalg.eigh(A)
    w = evecs[:, 0]
    y_w = np.linalg.solve(S, w - q)  # ∇_y f(0, y) = S̄ y + q̄ = w
    return prob, w, y_w, float(w @ np.linalg.solve(A, w)), float(evals[0])


def ihgp_bias(N, replicates, seed, backend="numpy"):
    """``⟨A⁻¹∇_y f − p_{N'}, w⟩`` averaged over ``IHGP_DRAWS`` independent FedIHGP calls
    (Alg. 3: random ``N'``, ``|S_n| = 5`` of 20 clients, noise-free) per replicate; its mean is
    ``‖A⁻¹ − E[Ĥ_y]‖ = ((κ_g−1)/κ_g)^N/μ_g`` (Lemma 2.2's bound, attained on this instance);
    ``hvp_calls``: Hessian-vector products per call (the oracle counts per call, summed over
    the sampled clients; the mean over the calls)."""
    prob, w, y_w, w_Ainv_w, _ = _ihgp_problem()
    N = int(N)
    n = replicates * IHGP_DRAWS
    ctx = make_context(prob, n, seed, backend)
    xp = ctx.xp
    x = xp.zeros((n, prob.dim_x))
    y = xp.broadcast_to(xp.asarray(y_w), (n, prob.dim_y)) * 1.0
    c = prob.constants
    p, _ = ihgp(ctx, x, y, N, IHGP_CLIENTS, c["ell_g1"])
    p = ctx.oracle.backend.to_numpy(p)
    value = (w_Ainv_w - p @ w).reshape(replicates, IHGP_DRAWS).mean(axis=1)
    rho = (c["kappa_g"] - 1.0) / c["kappa_g"]
    return {"value": value, "lemma_bound": per_replicate(rho ** N / c["mu_g"], replicates),
            "hvp_calls": per_replicate(ctx.oracle.counter.hvp, replicates)}


def released_closed_form(prob, v, N: int, scale: float) -> np.ndarray:
    """The official code's FedIHGP output in closed form (FEDNEST-R7), full participation:
    ``(1/ℓ)[v + Σ_{k=1}^N (1/k) mean_j (I − A_j/ℓ)^k v]`` (``A_j = ∇²_{yy}g_j``)."""
    mats = [prob.client(i)["A"] for i in range(prob.clients)]
    out = np.array(v, dtype=float)
    for k in range(1, N + 1):
        out = out + np.mean([np.linalg.matrix_power(np.eye(len(v)) - A / scale, k) @ v
                             for A in mats], axis=0) / k
    return out / scale


def released_bias(N, replicates, seed, backend="numpy", *, estimator="released"):
    """``⟨A⁻¹∇_y f − p, w⟩`` at Lemma 2.2's point for the official code's estimator
    (``released_ihgp``: all 20 clients, deterministic, so every replicate is the same), with
    its closed form (``closed_form``, :func:`released_closed_form`) and the indirect fraction
    it recovers along ``w`` (``fraction``).  ``estimator="paper_series"``: the paper's series
    ``(1/ℓ)Σ_{k<N}(I − Ā/ℓ)^k`` (Alg. 3's expectation; a mutant)."""
    prob, w, y_w, w_Ainv_w, _ = _ihgp_problem()
    N, c = int(N), prob.constants
    ctx = make_context(prob, 1, seed, backend)
    xp = ctx.xp
    x = xp.zeros((1, prob.dim_x))
    y = xp.asarray(y_w)[None, :] * 1.0
    if estimator == "released":
        idx = xp.asarray(np.arange(prob.clients)[None, :])
        p = released_ihgp(ctx, idx, x, y, N, c["ell_g1"])
    elif estimator == "paper_series":
        p, _ = ihgp(ctx, x, y, N + 1, prob.clients, c["ell_g1"], truncation="full")
    else:
        raise ValueError(f"`estimator` must be 'released' or 'paper_series', got {estimator!r}")
    p = ctx.oracle.backend.to_numpy(p)[0]
    closed = released_closed_form(prob, w, N, c["ell_g1"])
    return {"value": per_replicate(w_Ainv_w - p @ w, replicates),
            "closed_form": per_replicate(w_Ainv_w - closed @ w, replicates),
            "fraction": per_replicate((p @ w) / w_Ainv_w, replicates),
            "rounds": per_replicate(ctx.rounds, replicates)}


def indirect_bias(N, replicates, seed, backend="numpy", *, lip: str = "ell_f1"):
    """``‖E_W[h^I] − ∇̄^I f‖`` (Lemma 2.2, eq. 15) on the scalar instance ``g = ½ay² − bxy``,
    ``f = qy`` of FedMBO's Prop. 1 worst case (``a = 1``, ``b = 600/49``, ``q = 1``: ``ℓ_{f,1} =
    0``, ``ℓ_{f,0} = 1``), one client, noise-free: ``E_W`` over Alg. 3's ``N'`` is the series
    ``(1/ℓ)Σ_{k<N}(1 − a/ℓ)^k ∇_y f`` (``ihgp(truncation="full")``, exact), so the value is
    deterministic.  ``bound``: eq. (15)'s ``b = κ_g ℓ_{f,1}((κ_g−1)/κ_g)^N`` (``lip="ell_f0"``:
    with ``ℓ_{f,0}``, the repair, a mutant)."""
    return _indirect_bias(scalar_problem(**TIGHT), N, replicates, seed, backend, lip)


def _indirect_bias(prob, N, replicates, seed, backend, lip):
    """:func:`indirect_bias` on the scalar instance ``prob`` (``scalar_problem(a, b)``)."""
    c, N = prob.constants, int(N)
    ctx = make_context(prob, 1, seed, backend)
    xp = ctx.xp
    x, y = (xp.asarray(v)[None, :] * 1.0 for v in SCALAR_POINT)
    p, _ = ihgp(ctx, x, y, N, 1, c["ell_g1"], truncation="full")
    idx = xp.zeros((1, 1), dtype=int)
    exact = xp.asarray([[prob.q[0, 0] / float(prob.A.dense_range(0, 1)[0, 0, 0])]])
    h = ctx.oracle.jvp_xy_g(idx, x[:, None, :], y[:, None, :], (p - exact)[:, None, :])
    value = float(np.abs(ctx.oracle.backend.to_numpy(h)).sum())
    kg = c["kappa_g"]
    return {"value": per_replicate(value, replicates),
            "bound": per_replicate(kg * c[lip] * ((kg - 1) / kg) ** N, replicates)}


#: FedIHGP calls averaged inside one replicate of ``fednest.ihgp_deviation_bound*``: at the
#: worst case (κ_g = 1) one call's ``|H⁻¹ − Ĥ|μ_g/2`` has standard deviation ``≈ √N/2`` and the
#: gap to the bound is ``1/N``, so ``M`` calls resolve it at ``2√M/N^{3/2}`` standard errors:
#: 6 at ``N = 32`` with the smoke budget's ``M = 16·2^14``, 4 at ``N = 64`` with ``M = 2^20``.
DEV_DRAWS = 2 ** 14
#: ``σ_{g,2}/ℓ_{g,1}`` of the Rademacher Hessian samples of ``fednest.ihgp_deviation_noisy``:
#: samples ``ℓ_{g,1}/2`` and ``3ℓ_{g,1}/2`` (both positive definite, mean ``ℓ_{g,1}``).
DEV_NOISE = 0.5


def deviation_closed_form(N: int, a: float, ell: float, s: float = 0.0) -> float:
    """``E|1/a − Ĥ|`` for the scalar FedIHGP (Alg. 3, one client) with Hessian samples ``a ±
    sℓ`` (Rademacher; ``s = 0``: exact): the factor ``1 − a_n/ℓ`` is ``ρ ± s`` with ``ρ = 1 −
    a/ℓ``, so with ``j ~ Bin(k, ½)`` plus signs ``Ĥ = (N/ℓ)(ρ + s)^j(ρ − s)^{k−j}`` at
    ``N' = k``, ``k ~ U{0..N−1}``; at ``s = 0``: ``(1/N)Σ_{k<N}|1/a − (N/ℓ)ρ^k|``."""
    rho, total = 1.0 - a / ell, 0.0
    for k in range(N):
        j = np.arange(k + 1)
        w = np.array([math.comb(k, int(i)) for i in j], float) / 2.0 ** k
        h = (N / ell) * (rho + s) ** j * (rho - s) ** (k - j)
        total += float(w @ np.abs(1.0 / a - h))
    return total / N


@functools.cache
def _deviation_problem(hessian_noise: float = 0.0):
    """The scalar instance ``g = ½y²``, ``f = y`` of ``fednest.ihgp_deviation_*`` (``μ_g =
    ℓ_{g,1} = 1``), with Rademacher Hessian samples of standard deviation ``hessian_noise``."""
    prob = scalar_problem(a=1.0, b=0.0)
    if hessian_noise:
        prob = with_noise_distribution(dataclasses.replace(prob, hessian_noise=hessian_noise),
                                       "rademacher")
    return prob


def ihgp_deviation(N, replicates, seed, backend="numpy", *, scale_factor=1.0, constant=2.0,
                   hessian_noise=0.0):
    """``|H⁻¹ − Ĥ_y|`` (Lemma 2.2, eq. 14, second bound) averaged over ``DEV_DRAWS`` calls of
    FedIHGP (``ihgp``: Alg. 3, random ``N'``) per replicate, on the scalar instance ``g = ½y²``,
    ``f = y`` (one client, ``μ_g = ℓ_{g,1} = 1``, κ_g = 1): ``∇_y f = 1``, so ``Ĥ_y = p_{N'}``.
    κ_g = 1 is where the bound is tightest: ``Ĥ = (N/ℓ)[N' = 0]`` and ``E|H⁻¹ − Ĥ|μ_g/2 = 1 −
    1/N``, the largest value over κ_g for every ``N ≥ 2`` (:func:`deviation_closed_form`).
    ``bound``: ``constant/μ_g`` (Lemma: 2).  ``scale_factor`` multiplies the Neumann scale
    ``ℓ_{g,1}`` (a mutant); ``hessian_noise``: ``σ_{g,2}`` of Rademacher Hessian samples."""
    return _deviation(_deviation_problem(hessian_noise), N, replicates, seed, backend,
                      scale_factor, constant, hessian_noise)


def _deviation(prob, N, replicates, seed, backend, scale_factor, constant, hessian_noise):
    """:func:`ihgp_deviation` on the scalar instance ``prob`` (``g = ½ay² − bxy``, ``f = qy``)."""
    c, N, n = prob.constants, int(N), replicates * DEV_DRAWS
    ctx = make_context(prob, n, seed, backend)
    xp = ctx.xp
    x, y = (xp.broadcast_to(xp.asarray(v), (n, 1)) * 1.0 for v in SCALAR_POINT)
    scale = c["ell_g1"] * scale_factor
    p, _ = ihgp(ctx, x, y, N, 1, scale)
    h = ctx.oracle.backend.to_numpy(p)[:, 0] / float(prob.q[0, 0])
    a = c["mu_g"]
    dev = np.abs(1.0 / a - h).reshape(replicates, DEV_DRAWS).mean(axis=1)
    s = hessian_noise / scale
    return {"value": dev, "bound": per_replicate(constant / a, replicates),
            "closed_form": per_replicate(deviation_closed_form(N, a, scale, s), replicates)}


def _ihgp_law() -> Law:
    c = _ihgp_problem()[0].constants
    return law("fednest.lemma22_bias", "log_ratio", "N", subs={"kappa_g": c["kappa_g"]})


def _f_norms(prob) -> tuple[float, float]:
    """``(‖∇²f‖, ‖∇f‖)`` of a scalar instance's upper level at :data:`SCALAR_POINT`."""
    C = prob.host.closed_form
    hess_f = np.block([[C.P, C.R], [C.R.T, C.S]])
    x, y = SCALAR_POINT
    grad_f = np.concatenate([x @ C.P + y @ C.R.T + C.p, x @ C.R + y @ C.S + C.q])
    return float(np.linalg.norm(hess_f, 2)), float(np.linalg.norm(grad_f))


def _indirect_conditions(prob_of=lambda x: scalar_problem(**TIGHT)) -> tuple[Condition, ...]:
    """Eq. (15)'s hypotheses on the scalar instance ``prob_of(x)`` (default
    ``fednest.indirect_bias_bound``'s): Lemma 2.2's, and A1's Lipschitz constants of ``f``
    (``ℓ_{f,1} = 0``, ``ℓ_{f,0} = |q|``: ``f`` is linear), computed from its closed form."""
    return (*_lemma22_conditions(prob_of),
            Condition("∇f_i is ℓ_{f,1}-Lipschitz (Assumption A1)",
                      lambda x: _f_norms(prob_of(x))[0],
                      lambda x: prob_of(x).constants["ell_f1"],
                      note="‖∇²f‖ of the linear f = qy: 0, so ℓ_{f,1} = 0 satisfies A1"),
            Condition("f_i is ℓ_{f,0}-Lipschitz, ‖∇f_i‖ ≤ ℓ_{f,0} (Assumption A1)",
                      lambda x: _f_norms(prob_of(x))[1],
                      lambda x: prob_of(x).constants["ell_f0"],
                      note="∇f = (0, q) is the same at every point"))


def _deviation_conditions(hessian_noise: float = 0.0) -> tuple[Condition, ...]:
    """Lemma 2.2's hypotheses on ``fednest.ihgp_deviation_*``'s instance; with Hessian
    samples, Assumption B on them (unbiased, variance ``σ_{g,2}²``)."""
    prob = _deviation_problem(hessian_noise)
    out = _lemma22_conditions(lambda x: prob)
    if not hessian_noise:
        return out
    c = prob.constants
    return (*out, Condition(
        "∇²g_i(z; ζ) unbiased with variance ≤ σ_{g,2}² (Assumption B)",
        math.sqrt(c["sigma_g22"]), DEV_NOISE * c["ell_g1"], relation="==",
        note="Rademacher samples ℓ_{g,1}(1 ± 1/2): mean ℓ_{g,1} (B1), standard deviation "
             "σ_{g,2} = ℓ_{g,1}/2 (B2).  B bounds their variance, not their range: the sample "
             "3ℓ_{g,1}/2 > ℓ_{g,1} is the finding's subject (FEDNEST-R6)"))


CLAIMS = [
    P.claim(
        "ihgp_bias_vs_N",
        source=P.cite("Lemma 2.2"),
        statement=r"\|[\nabla^2_y g]^{-1} - \mathbb{E}_W[\hat H_y]\| \leq \frac{1}{\mu_g}"
                  r"\left(\frac{\kappa_g - 1}{\kappa_g}\right)^N",
        kind="geometric", variable="N",
        quantity=r"\langle A^{-1}\nabla_y f - \mathbb{E}\,p_{N'}, w\rangle",
        measure=ihgp_bias, role="control",
        grid=per_budget(range(1, 14, 2), range(1, 14), range(1, 14)),
        replicates=per_budget(16, 64, 256),
        law=_ihgp_law(), tolerance=0.02, scale="semilog", window=(1, 13),
        window_reason="the whole grid: the bias is ≥ 10 Monte-Carlo standard errors for "
                      "N ≤ 13 at 16k calls (((κ_g−1)/κ_g)^13/μ_g against the per-call spread)",
        schedule="FedIHGP (Alg. 3) at a fixed (x, y): N' ~ U{0..N−1}, |S_n| = 5 of m = 20 "
                 "clients without replacement, scale ℓ_{g,1}, noise-free oracles; each "
                 "replicate averages 1024 independent calls.  Instance κ = 5, coupling 0.5 "
                 "(κ_g = 5.13), h = 0.3, structured storage (λ_min(Ā) = μ_g exactly); w the "
                 "bottom eigenvector of Ā and ∇_y f(x, y) = w, so the measured mean is the "
                 "Lemma's left-hand side exactly.",
        conditions=_lemma22_conditions(lambda x: _ihgp_problem()[0]),
        touches=("FEDNEST-R2",),
        reason="Control: E p_{N'} = (1/ℓ)Σ_{k<N}(I − Ā/ℓ)^k ∇_y f is an identity of the "
               "implemented series (E over N' and S_n), so its bias −Ā⁻¹(I − Ā/ℓ)^N∇_y f "
               "attains Lemma 2.2's bound along w; this checks the implementation, not the "
               "paper (the released code's estimator is fednest.released_bias_vs_N, a "
               "defect)."),
    P.claim(
        "released_bias_vs_N",
        source=P.cite("Lemma 2.2, applied to the official code's FedIHGP "
                      "(ClientManage.fedIHGP, global_batch)"),
        statement=r"\|[\nabla^2_y g]^{-1}\nabla_y f - p^{rel}_N\| \leq \frac{1}{\mu_g}"
                  r"\left(\frac{\kappa_g - 1}{\kappa_g}\right)^N\|\nabla_y f\|",
        kind="geometric", variable="N",
        quantity=r"\langle A^{-1}\nabla_y f - p^{rel}_N, w\rangle",
        measure=released_bias, role="defect", expected="violated",
        grid=per_budget(range(1, 14, 2), range(1, 14), range(1, 14)),
        replicates=per_budget(2, 2, 2),
        law=_ihgp_law(), tolerance=0.02, scale="semilog", window=(1, 13),
        window_reason="the same grid as fednest.ihgp_bias_vs_N (Lemma 2.2's point), decided "
                      "before the data; the estimator is deterministic",
        schedule="The official code's FedIHGP (released_ihgp) at Lemma 2.2's point of "
                 "fednest.ihgp_bias_vs_N: all m = 20 clients (the code keeps one client set "
                 "per FedOut), N Neumann steps, step 1/ℓ_{g,1} (the code's hlr), the indirect "
                 "term scaled by 1/ℓ_{g,1} (Client_hr.hyper_grad); deterministic.",
        conditions=_lemma22_conditions(
            lambda x: _ihgp_problem()[0],
            scale_note="the released code's step hlr = 1/ℓ_{g,1} (FEDNEST-R7): the instance "
                       "satisfies the Lemma's hypotheses, the estimator is not Alg. 3's"),
        touches=("FEDNEST-R7", "FEDNEST-R2"),
        mutants=(Mutant("paper_series", "the paper's series (1/ℓ)Σ_{k≤N}(I − Ā/ℓ)^k ∇_y f "
                        "(Alg. 3's expectation: the list cleared at every step and the "
                        "global Hessian in every product): its bias is (I − Ā/ℓ)^{N+1}-"
                        "geometric, so Lemma 2.2 holds", {"estimator": "paper_series"},
                        kind="repair"),),
        reason="A defect of the authors' released code, not a violation of Lemma 2.2 (which "
               "describes Alg. 3's estimator, fednest.ihgp_bias_vs_N).  The released code's "
               "server appends every client's p + c_j to a list that is "
               "never cleared, so p_k = p_{k−1} + (1/k) mean_j (I − A_j/ℓ)^k p₀ (derived in "
               "released_ihgp's docstring, equal to the measure's closed_form metric): the "
               "series weighted by 1/k converges to (1/ℓ)(I − mean_j log(A_j/ℓ)) p₀ along a "
               "shared eigenvector, not to Ā⁻¹p₀ (it recovers the fraction (λ/ℓ)(1 − "
               "log(λ/ℓ)) of an eigen-direction λ, about half at κ_g ≈ 5), so the bias tends "
               "to a non-zero constant and its semilog slope is 0, not log((κ_g−1)/κ_g); "
               "the 'fraction' metric is that recovered share."),
    P.claim(
        "indirect_bias_bound",
        source=P.cite("Lemma 2.2, eq. (15) (b with ℓ_{f,1})"),
        statement=r"\|\mathbb{E}_W[h_i^I(x, y)] - \bar\nabla^I f_i(x, y)\| \leq b := "
                  r"\kappa_g \ell_{f,1}((\kappa_g - 1)/\kappa_g)^N",
        kind="bounded_by", variable="N",
        quantity=r"\|\mathbb{E}_W[h^I] - \bar\nabla^I f\|",
        measure=indirect_bias, role="finding", expected="violated",
        grid=per_budget(range(1, 7), range(1, 11), range(1, 15)),
        replicates=per_budget(2, 2, 2),
        law=law(rates.law_for("fednest.lemma22_b", "bound")), tolerance=0.0, scale="semilog",
        schedule="Alg. 3's E_W[p_{N'}] in closed form (the deterministic series, the "
                 "expectation over N') at the point (1, 0) of the scalar instance g = ½ay² − "
                 "bxy, f = qy with a = 1, b = 600/49, q = 1 (ℓ_{g,1} = 625/49, κ_g = 12.76, "
                 "ℓ_{f,1} = 0, ℓ_{f,0} = 1 on the whole space), one client, noise-free; "
                 "deterministic (replicates identical).",
        conditions=_indirect_conditions(),
        touches=("FEDNEST-R11", "FEDNEST-R2"),
        mutants=(Mutant("proof_constant", "b with ℓ_{f,0} in place of ℓ_{f,1} (the bias "
                        "scales with ‖∇_y f‖ ≤ ℓ_{f,0}): b = κ_g ℓ_{f,0}ρ^N ≥ ‖B‖ρ^N|q|/μ_g, "
                        "and the bound holds (ratio ‖B‖/ℓ_{g,1} = 24/25)", {"lip": "ell_f0"},
                        kind="repair"),),
        reason="The bias of the indirect term is −∇²_{xy}g(E_W[Ĥ_y] − [∇²_y g]⁻¹)∇_y f = "
               "∇²_{xy}g [∇²_y g]⁻¹(I − ∇²_y g/ℓ)^N ∇_y f: it scales with ‖∇_y f‖ ≤ ℓ_{f,0} "
               "(Assumption A1), not with the Lipschitz constant ℓ_{f,1} of ∇f.  With a "
               "linear upper level (ℓ_{f,1} = 0) eq. (15) gives b = 0, yet the bias is "
               "b_{xy}ρ^N q/a > 0 (12.2·(1 − 1/κ_g)^N here).  The same defect as FedMBO's "
               "Prop. 1 (fedmbo.phe_bias_bound_linear, FEDMBO-R5); with ℓ_{f,0} the bound "
               "holds (mutant proof_constant)."),
    P.claim(
        "ihgp_deviation_bound",
        source=P.cite("Lemma 2.2, eq. (14), second bound"),
        statement=r"\mathbb{E}_W\|[\nabla^2_y g]^{-1} - \hat H_y\| \leq \frac{2}{\mu_g}",
        kind="bounded_by", variable="N",
        quantity=r"\mathbb{E}_W|[\nabla^2_y g]^{-1} - \hat H_y|",
        measure=ihgp_deviation, scale="semilog",
        grid=per_budget((2, 4, 8, 16, 32), (2, 4, 8, 16, 32, 64), (2, 4, 8, 16, 32, 64)),
        replicates=per_budget(16, 64, 256),
        law=law(rates.law_for("fednest.lemma22_second", "bound")), tolerance=0.0,
        schedule="FedIHGP (Alg. 3) at the bound's worst case: scalar instance g = ½y², f = y "
                 "(one client, μ_g = ℓ_{g,1} = 1, κ_g = 1), noise-free, N' ~ U{0..N−1}, scale "
                 "ℓ_{g,1}; each replicate averages 2^14 independent calls.",
        conditions=_deviation_conditions(),
        touches=("FEDNEST-R6", "FEDNEST-R2"),
        mutants=(
            Mutant("ell_halved", "the Neumann scale ℓ_{g,1}/2 (the constant of g = ½‖y − r‖² "
                   "used for g = ‖y − r‖², the two conventions of eq. (7) and §3.2): the "
                   "factor 1 − 2λ/ℓ is −1 at κ_g = 1, Ĥ = (2N/ℓ)(−1)^{N'} and E|H⁻¹ − Ĥ| ≈ "
                   "2N/ℓ, above 2/μ_g at every N ≥ 2", {"scale_factor": 0.5},
                   kind="neumann_scaling"),
            Mutant("constant_3_2", "the constant 3/2 in place of 2: E|H⁻¹ − Ĥ|μ_g = 2(1 − "
                   "1/N) exceeds 3/2 for N > 4 (the constant 2 is sharp)", {"constant": 1.5},
                   kind="bound")),
        reason="Holds with a margin that vanishes as N grows: with exact Hessians Ĥ_y ⪰ 0 and "
               "‖Ĥ_y‖ ≤ (N/ℓ)(1 − 1/κ_g)^{N'}, so ‖H⁻¹ − Ĥ_y‖ ≤ max(‖H⁻¹‖, ‖Ĥ_y‖) and "
               "E‖H⁻¹ − Ĥ_y‖ < 1/μ_g + (1/ℓ)Σ_{k<N}(1 − 1/κ_g)^k < 2/μ_g.  Along an "
               "eigenvector (eigenvalue λ, ρ = 1 − λ/ℓ) the left side is (1/N)Σ_{k<N}|1/λ − "
               "(N/ℓ)ρ^k|; its ratio to 2/μ_g is largest at κ_g = 1 for every N ≥ 2, where "
               "it is 1 − 1/N (Ĥ = N/ℓ with probability 1/N, else 0): the constant 2 is "
               "approached as N → ∞ and cannot be lowered (mutant constant_3_2).  The "
               "closed_form metric is that sum."),
    P.claim(
        "ihgp_deviation_noisy",
        source=P.cite("Lemma 2.2, eq. (14), second bound (under Assumption B)"),
        statement=r"\mathbb{E}_W\|[\nabla^2_y g]^{-1} - \hat H_y\| \leq \frac{2}{\mu_g}",
        kind="bounded_by", variable="N",
        quantity=r"\mathbb{E}_W|[\nabla^2_y g]^{-1} - \hat H_y|",
        measure=functools.partial(ihgp_deviation, hessian_noise=DEV_NOISE), scale="semilog",
        role="finding", expected="violated",
        grid=per_budget((2, 4, 8, 16, 32), (2, 4, 8, 16, 32, 64), (2, 4, 8, 16, 32, 64)),
        replicates=per_budget(16, 64, 256),
        law=law(rates.law_for("fednest.lemma22_second", "bound")), tolerance=0.0,
        schedule="FedIHGP (Alg. 3) on the instance of fednest.ihgp_deviation_bound (g = ½y², "
                 "f = y, μ_g = ℓ_{g,1} = 1) with unbiased Hessian samples ℓ_{g,1}(1 ± 1/2) "
                 "(Rademacher, σ_{g,2} = ℓ_{g,1}/2, Assumption B), exact gradients, scale "
                 "ℓ_{g,1}; each replicate averages 2^14 independent calls.",
        conditions=_deviation_conditions(DEV_NOISE),
        touches=("FEDNEST-R6", "FEDNEST-R2"),
        mutants=(Mutant("sample_bound_scale", "the Neumann scale 3ℓ_{g,1}/2, the almost-sure "
                        "bound of the Hessian samples: every factor 1 − a_n/ℓ' ∈ {0, 2/3} is "
                        "in [0, 1), Ĥ ⪰ 0 and E Ĥ < 1/μ_g, so the bound holds (the hypothesis "
                        "the bound needs)", {"scale_factor": 1.5}, kind="repair"),),
        reason="Assumption B bounds only the variance σ_{g,2}² of the Hessian samples, not "
               "their range; a sample above ℓ_{g,1} makes the factor 1 − a_n/ℓ_{g,1} "
               "negative, so Ĥ_y takes both signs and |H⁻¹ − Ĥ_y| = 1/μ_g + |Ĥ_y| when Ĥ_y < "
               "0.  With samples ℓ(1 ± s) at κ_g = 1 the factors are ±s and E|H⁻¹ − Ĥ_y| = "
               "(1/(Nℓ))[N − 1 + Σ_{1≤k<N} max(1, Ns^k)] (deviation_closed_form): at s = 1/2 "
               "its ratio to 2/μ_g is 1.125, 1.28, 1.375 at N = 8, 16, 32 and tends to 1 + "
               "s/(2(1 − s)) for every s > 0.  The bound needs μ_g I ⪯ ∇²g_i(·; ζ) ⪯ "
               "ℓ_{g,1}I for every sample (then Ĥ_y ⪰ 0 and fednest.ihgp_deviation_bound's "
               "argument applies; mutant sample_bound_scale)."),
]


# ------------------------------------------------------------- the bias at Cor 3.1's N(K)
def bias_at_cor31_N(K, replicates, seed, backend="numpy", *, kappa_factor: bool = True):
    """``‖E_W[h^I] − ∇̄^I f‖²`` (the squared bias that eq. (15)'s ``b`` bounds) at Cor 3.1's
    ``N(K) = ⌈κ_g log K⌉``, on :func:`indirect_bias`'s scalar instance (``κ_g = 12.76``,
    deterministic: ``E_W`` is the implemented series).  Mutant ``kappa_factor=False``:
    ``N = ⌈log K⌉``, the truncation computed without its ``κ_g`` factor."""
    prob = scalar_problem(**TIGHT)
    N = kappa_log_steps(K, prob.constants["kappa_g"] if kappa_factor else 1.0)
    out = _indirect_bias(prob, N, replicates, seed, backend, "ell_f0")
    return {"value": out["value"] ** 2, "neumann_steps": per_replicate(N, replicates)}


_TIGHT_KAPPA = scalar_problem(**TIGHT).constants["kappa_g"]

CLAIMS.append(P.claim(
    "bias_at_cor31_N",
    source=P.cite("§3, after Cor 3.1 (\"we choose N ∝ κ_g log K to guarantee b² ≲ 1/√K\"), "
                  "with Lemma 2.2, eq. (15)'s b"),
    statement=r"N \propto \kappa_g\log K\ \Rightarrow\ b^2 \lesssim 1/\sqrt{K}",
    kind="at_most", variable="K",
    quantity=r"\|\mathbb{E}_W[h^I] - \bar\nabla^I f\|^2\ \mathrm{at}\ N = "
             r"\lceil\kappa_g\log K\rceil",
    measure=bias_at_cor31_N,
    grid=per_budget((16, 64, 256, 1024), (16, 64, 256, 1024, 4096),
                    (16, 64, 256, 1024, 4096, 16384)),
    replicates=per_budget(2, 2, 2),
    law=law(rates.law_for("fednest.cor31_bias", "exponent", "K")), tolerance=0.1,
    schedule="Alg. 3's E_W[p_{N'}] as the implemented deterministic series (the expectation "
             "over N') at N = ⌈κ_g log K⌉ (FEDNEST-R3), on fednest.indirect_bias_bound's "
             "scalar instance g = ½ay² − bxy, f = qy (a = 1, b = 600/49, q = 1: κ_g = 12.76) "
             "at the point (1, 0), one client, noise-free; deterministic (replicates "
             "identical).  b is measured as the bias it bounds, not as eq. (15)'s formula, "
             "which is 0 on this linear f (fednest.indirect_bias_bound's finding).",
    conditions=(*_indirect_conditions(),
                kappa_log_condition("N ∝ κ_g log K (§3 after Cor 3.1), a lower bound with "
                                    "constant 1: N ≥ κ_g log K (FEDNEST-R3)", _TIGHT_KAPPA)),
    touches=("FEDNEST-R3", "FEDNEST-R11", "FEDNEST-R2"),
    mutants=(Mutant("kappa_dropped", "the truncation N = ⌈log K⌉, computed without its κ_g "
                    "factor (as AFBO's Cor 4.1 writes N = O(log T)): the squared bias falls "
                    "as K^{2 log(1 − 1/κ_g)} = K^{−0.16} at κ_g = 12.76, slower than 1/√K",
                    {"kappa_factor": False}, kind="neumann_scaling"),),
    reason="With ρ = 1 − 1/κ_g the bias of the indirect term is ∇²_{xy}g[∇²_y g]⁻¹ρ^N∇_y f "
           "(Lemma 2.2's proof), so at N = ⌈κ_g log K⌉ its square is at most "
           "C·ρ^{2κ_g log K} = C·K^{2κ_g log ρ} ≤ C·K^{−2} (κ log(1 − 1/κ) ≤ −1): well inside "
           "1/√K; the slope is about −2.1 on this instance (the ceiling makes a staircase)."))
