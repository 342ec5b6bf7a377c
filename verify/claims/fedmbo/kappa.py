"""FedMBO, the κ-dependence of Cor 1 (Huang, Zhang & Ji, ICML 2023, Cor 1: ``N = Ω(κ_g log K)``
and ``ST = Ω(κ_g⁴)`` give ``(1/K) Σ_k E‖∇f(x^k)‖² = O(κ_g^{5/2}/√(nK) + κ_g³/K +
κ_g^{7/2}√n/K^{3/2})``, so ``K = O(κ_g⁵ε⁻²/n)`` iterations reach ``ε``).

**The statement as a κ-sweep.**  At fixed ``ε`` and ``n`` the corollary's schedule grows with
``κ_g = ℓ_{g,1}/μ_g``: ``K ∝ κ_g⁵``, Cor 1's proof constants ``α̂₃ ∝ κ_g^{−5/2}`` (the
derivation ``fedmbo.thm1_cor1_constants``), ``N`` with ``b² ≤ 10⁻³/√(nK)`` (``N = Ω(κ_g log K)``
with the constant of the Theorem-1 claims, FEDMBO-R9) and ``ST ≥ κ_g⁴``.  "``K(κ_g)`` iterations
suffice for every ``κ_g``" is checked as "the achieved average ``A = (1/K) Σ_k ‖∇Φ(x^k)‖²`` at
that schedule does not grow with ``κ_g``": ``A|_{K ∝ κ_g⁵} = O(κ_g⁰)``, kind ``at_most`` with
law 0 (the κ_g-exponent of ``K(ε)`` spent by the schedule).  The ``O``-constants are fixed
once, at ``κ₀ = 1.4`` with ``K = 200`` (the ε-sweep's ``K(ε = 1)`` at ``n = 8``).

**Inside Thm 1.**  Every step is Thm 1's ``α = min{α̂₁, α̂₂, √(n/K)α̂₃}``, ``β = β̄α/T`` with
the proof's ``α̂₁, α̂₂, β̄, T, S`` computed from each instance's own constants
(``fedmbo.common.proof_constants``); the ``√(n/K)`` branch is active on every point (a condition).

**The start.**  ``x⁰ = x* + 0.3·(1, 1)/√2``: the transient term, which carries the
κ-scaling of ``K`` (``αK = √(nK)α̂₃`` is the same at every ``κ_g`` of the schedule), is then of
the order of the noise term at ``κ₀``.  Over ``κ_g = 1.4 … 2.3`` at 64 replicates the claim's
slope was −2.1, −0.34 and −0.07 at offsets 0.1, 0.3 and 1.0, the mutant's +0.22, +2.1 and +2.4:
the verdict does not depend on the offset, the mutant's margin does.

**Instances.**  ``κ_g`` is the instance's ``ℓ_{g,1}/μ_g``: for each sweep value the ``kappa``
knob of the Theorem-1 instance (``fedmbo.stationarity.thm1_problem``: 100 clients, dims 2, seed 0,
heterogeneity 0.5, coupling 0.2, ``upper_mu = 20``, noise 10, Hessian noise 0.3) is solved for
it (``brentq``).  ``μ_g = 1``, ``ℓ_{f,0}``, ``ℓ_{f,1}`` and ``μ_Φ`` (20.40 → 20.33 over the
full grid) stay put; ``L_f``, ``M_f``, ``L_y`` grow with ``κ_g`` as Lemma 2 says.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from bilevel_theory import rates
from bilevel_theory.algorithm import run_algorithm
from bilevel_theory.fedmbo import FedMBO
from bilevel_theory.law_cache import cached_derivation
from bilevel_theory.problems import QuadraticBilevel

from ...claim import Condition, Law, Mutant, per_budget
from ...kit import PaperClaims, knob_for, ledger_totals, per_replicate
from .common import B2_FACTOR, EPS_N, proof_constants, thm1_family

P = PaperClaims("fedmbo")

CLIENTS = EPS_N        # n, sampled clients per round (the ε-sweep's)
KAPPA_REF = 1.4        # κ₀: the reference point that fixes the O-constants
K_REF = 200            # K at κ₀ (the ε-sweep's K(ε = 1) at n = 8)
X0_OFFSET = 0.3        # ‖x⁰ − x*‖ (module docstring)


@functools.lru_cache(maxsize=64)
def instance(kappa_g: float) -> QuadraticBilevel:
    """The Theorem-1 instance with its knob solved for ``ℓ_{g,1}/μ_g = kappa_g``."""
    return thm1_family(knob_for(lambda k: thm1_family(k).constants["kappa_g"], kappa_g,
                                name="kappa_g", upper=10.0, what="ℓ_{g,1}/μ_g of the family"))


def iterations(kappa_g: float) -> int:
    """Cor 1's ``K = c_K κ_g⁵ε⁻²/n`` at fixed ``ε``, ``n``: ``⌈K_REF(κ_g/κ₀)⁵⌉``."""
    return math.ceil(K_REF * (1 - 1e-9) * (kappa_g / KAPPA_REF) ** 5)


def schedule(kappa_g: float, K: int | None = None) -> dict:
    """Thm 1's steps at ``κ_g`` for ``K`` iterations (default Cor 1's :func:`iterations`):
    ``α = √(n/K)·α̂₃`` with ``α̂₃ = c₃κ_g^{−5/2}`` (Cor 1's proof constant, ``c₃`` fixed at κ₀
    by the Theorem-1 claims' rule ``α̂₃ = 5·min(α̂₁, α̂₂)``), ``β = β̄α/T``, and the instance's
    own ``T``, ``S``, ``N`` (:func:`~bilevel_theory.verify.claims.fedmbo.common.proof_constants` at
    ``nK``)."""
    kappa_g = float(kappa_g)
    K = iterations(kappa_g) if K is None else int(K)
    c = proof_constants(instance(kappa_g), CLIENTS * K)
    c0 = proof_constants(instance(KAPPA_REF), CLIENTS * K_REF)
    a3 = c0["alpha_hat3"] * (kappa_g / KAPPA_REF) ** -2.5
    alpha = math.sqrt(CLIENTS / K) * a3
    P_ = instance(kappa_g)
    x0 = np.asarray(P_.x_star) + X0_OFFSET * np.ones(P_.dim_x) / math.sqrt(P_.dim_x)
    return dict(K=K, alpha=alpha, beta=c["beta_bar"] * alpha / c["T"], alpha_hat3=a3,
                alpha_cap=min(c["alpha_hat1"], c["alpha_hat2"]), beta_bar=c["beta_bar"],
                T=c["T"], S=c["S"], N=c["N"], b2=c["b2"], x0=x0,
                y0=np.asarray(P_.y_star(x0), float))


def stationarity_vs_kappa(kappa_g, replicates, seed, backend="numpy", *,
                          iterations_fixed: bool = False) -> dict:
    """``A = (1/K) Σ_{k<K} ‖∇Φ(x^k)‖²`` of FedMBO at Cor 1's κ_g-scaled schedule.  Mutant
    ``iterations_fixed``: ``K = K_REF`` at every ``κ_g`` (the iteration count computed without
    its κ_g⁵ factor), the steps Thm 1's at that ``K``."""
    kappa_g = float(kappa_g)
    s = schedule(kappa_g, K_REF if iterations_fixed else None)
    K = s["K"]
    trace = run_algorithm(FedMBO(instance(kappa_g), inner_steps=s["T"], samples=s["S"],
                                 sampled_clients=CLIENTS, neumann_steps=s["N"],
                                 outer_step=s["alpha"], inner_step=s["beta"], replace=True,
                                 x0=s["x0"], y0=s["y0"]), K, replicates, seed, backend)
    R = replicates
    return {"value": trace.stationarity[:, :K].mean(axis=1), "diverged": trace.diverged,
            **ledger_totals(trace), "K": per_replicate(K, R),
            "kappa_g": per_replicate(instance(kappa_g).constants["kappa_g"], R),
            "neumann_steps": per_replicate(s["N"], R), "alpha": per_replicate(s["alpha"], R)}


@cached_derivation
def _kappa_power() -> float:
    """The κ_g-exponent of Cor 1's ``K(ε)`` (``fedmbo.cor1_iterations``): 5."""
    b = rates.BOUNDS["fedmbo.cor1_iterations"]
    return float(rates.leading_exponent(b.expr, b.symbol("kappa_g")))


def _law() -> Law:
    """Law 0 for ``A`` at Cor 1's ``K``: its κ_g-exponent is spent by the schedule."""
    p = f"{_kappa_power():g}"
    return Law(0.0, rf"A|_{{K \propto \kappa_g^{{{p}}}}} = \mathcal{{O}}(\kappa_g^0)",
               f"Cor 1: K = O(κ_g⁵ε⁻²/n) has κ_g-exponent {p} (fedmbo.cor1_iterations, "
               f"leading_exponent); at K ∝ κ_g^{p} the corollary gives A ≤ ε for every κ_g, so "
               "A at the schedule is O(κ_g⁰)")


CONDITIONS = (
    Condition("α = min{α̂₁, α̂₂, √(n/K)α̂₃} (Thm 1): the √(n/K) branch, α ≤ min{α̂₁, α̂₂}",
              lambda k: schedule(k)["alpha"], lambda k: schedule(k)["alpha_cap"],
              note="α̂₁, α̂₂, β̄, T from the proof's eqs. (18), (20) at L_yx = 0, per instance"),
    Condition("β = β̄α/T (Thm 1)", lambda k: schedule(k)["beta"],
              lambda k: schedule(k)["beta_bar"] * schedule(k)["alpha"] / schedule(k)["T"],
              relation="=="),
    Condition("α̂₃ = c₃κ_g^{−5/2} (Cor 1's proof constant), c₃ fixed at κ₀",
              lambda k: schedule(k)["alpha_hat3"] * k ** 2.5,
              schedule(KAPPA_REF)["alpha_hat3"] * KAPPA_REF ** 2.5, relation="=="),
    Condition("K = c_K κ_g⁵ε⁻²/n (Cor 1), c_K fixed at κ₀", lambda k: schedule(k)["K"],
              lambda k: math.ceil(K_REF * (1 - 1e-9) * (k / KAPPA_REF) ** 5), relation="=="),
    Condition("ST = Ω(κ_g⁴) (Cor 1; constant 1)", lambda k: schedule(k)["S"] * schedule(k)["T"],
              lambda k: k ** 4, relation=">="),
    Condition("N = Ω(κ_g log K) (Cor 1), read as Prop. 1's b² ≤ 10⁻³/√(nK) (FEDMBO-R9)",
              lambda k: schedule(k)["b2"],
              lambda k: B2_FACTOR / math.sqrt(CLIENTS * schedule(k)["K"])),
    Condition("μ_g = 1 at every κ_g (only ℓ_{g,1} moves)",
              lambda k: instance(k).constants["mu_g"], 1.0, relation="=="),
)

_SCHED = (
    f"Cor 1 at fixed ε and n = {CLIENTS} (constants chosen at κ₀ = {KAPPA_REF:g}, rates not): "
    f"K = c_Kκ_g⁵ε⁻²/n = ⌈{K_REF}(κ_g/κ₀)⁵⌉, α = √(n/K)α̂₃ with Cor 1's α̂₃ = c₃κ_g^{{−5/2}} "
    "(c₃ from the Theorem-1 claims' α̂₃ = 5·min(α̂₁, α̂₂) at κ₀), β = β̄α/T, and per instance "
    "the proof's α̂₁, α̂₂, β̄ (eqs. 18, 20), T (smallest with α̂₂ ≥ α̂₁), S = max(64, ⌈κ_g⁴/T⌉) "
    "(ST ≥ κ_g⁴), N with b² ≤ 10⁻³/√(nK) (N = Ω(κ_g log K)); sampling with replacement; "
    f"x⁰ = x* + {X0_OFFSET:g}·(1,1)/√2, y⁰ = y*(x⁰); κ_g = ℓ_{{g,1}}/μ_g of the Theorem-1 "
    "instance with its knob solved for it (μ_g = 1); tolerance 0.1 in A's κ_g-exponent, "
    "resolution ≤ 0.2 from the replicates")

_ITER_FIXED = ("the iteration count K(ε) computed without its κ_g⁵ factor (K = "
               f"{K_REF} at every κ_g), the steps Thm 1's at that K: αK = √(nK)α̂₃ falls as "
               "κ_g^{−5/2}, so the transient part of A grows with κ_g")

CLAIMS = [
    P.claim(
        "kappa_iterations", role="confirmation",
        source=P.cite("Cor 1 (iteration complexity K = O(κ_g⁵ε⁻²/n), κ_g-dependence)"),
        statement=r"K = \mathcal{O}(\kappa_g^5\epsilon^{-2}/n) \Rightarrow \frac{1}{K}\sum_k "
                  r"\mathbb{E}\|\nabla f(x^k)\|^2 \leq \epsilon\ \mathrm{for\ every}\ \kappa_g:"
                  r"\quad A|_{K \propto \kappa_g^5} = \mathcal{O}(\kappa_g^0)",
        kind="at_most", variable=r"\kappa_g",
        quantity=r"\frac{1}{K}\sum_{k<K} \|\nabla \Phi(x^k)\|^2",
        measure=stationarity_vs_kappa,
        grid=per_budget((1.4, 1.6, 1.8, 2.0), (1.4, 1.6, 1.8, 2.0, 2.3, 2.6),
                        (1.4, 1.6, 1.8, 2.0, 2.3, 2.6, 3.0)),
        # smoke's narrow κ_g range needs more replicates than standard's for resolution ≤ 0.2
        # (96 gave 0.218 at seeds 0–4; 160 give about 0.19)
        replicates=per_budget(160, 128, 256), law=_law(), tolerance=0.1,
        schedule=_SCHED, conditions=CONDITIONS,
        mutants=(Mutant("iterations_fixed", _ITER_FIXED, {"iterations_fixed": True},
                        kind="schedule"),),
        touches=("FEDMBO-R1", "FEDMBO-R8", "FEDMBO-R9", "FEDMBO-R10", "FEDMBO-I1")),
]
