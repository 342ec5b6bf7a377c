"""FedNest's iteration complexities in the condition number (Tarzanagh, Li, Thrampoulidis &
Oymak, ICML 2022, Cor 3.1: ``K = O(κ_g⁵ε⁻²)`` with ``N = O(κ_g log K)``, ``T = O(κ_g⁴)``;
Cor 3.2: ``K = O(κ_f²ε⁻²)`` with ``T = O(κ_f)``).

**The statements as κ-sweeps.**  At fixed ``ε`` each corollary's schedule grows with ``κ``:
``K = ⌈K₀(κ/κ₀)^p⌉`` (``p`` = 5 and 2, the κ-exponents of the registered bounds
``fednest.cor31_iterations`` and ``fednest.cor32_iterations``, derived with sympy), the
corollary's ``T`` (and ``N``), and the step ``α = ᾱ/√K`` with ``ᾱ = Θ(κ^{−p/2})`` (FEDNEST-I5:
the rate's ``κ^{p/2}/√K`` is the ``Δ/(ᾱ√K)`` term of Thm 3.1 at that ``ᾱ``).  "``K(κ)``
iterations suffice for every ``κ``" is checked as "the achieved average ``A = (1/K) Σ_k
‖∇Φ(x^k)‖²`` at that schedule does not grow with ``κ``", kind ``at_most`` with law 0, as
FedMBO's ``fedmbo.kappa_iterations`` does for its Cor 1.  The constants are fixed once at
``κ₀`` with ``K₀ = 100`` and ``ᾱ = 2/L_Φ`` (the rate claims' rule, ``α = 0.5/L_Φ`` at
``K = 16``).  The mutant ``iterations_fixed`` keeps ``K = K₀`` at every ``κ`` (the iteration
count without its κ-power), Thm 3.1's step at that ``K``: ``αK = ᾱ√K`` then falls as
``κ^{−p/2}`` and the transient part of ``A`` grows.

**Instances.**  Only the lower (inner) level's condition number moves: the family's ``kappa``
knob is solved for it (``brentq``), ``μ = 1``, and ``Φ``'s constants stay nearly put.
Cor 3.1: FedMBO's Theorem-1 instance (100 clients, 8 sampled, ``μ_Φ ≈ 20.4``), ``κ_g = 1.4 …
2.0`` at smoke, to 3.0 at full (a run's length grows as ``κ_g⁵ · κ_g⁴``).  Cor 3.2: the minimax
family of ``fednest.minimax_rate`` (10 clients, 5 sampled, coupling 0.5, ``L_Φ`` 1.21 → 1.14,
``μ_Φ`` 1.03 → 1.01), ``κ_f = 2 … 8`` at smoke, to 16 at full.

**The start.**  ``x⁰ = x* + (1, 1)/√2``, ``y⁰ = y*(x⁰)``: the transient, which carries the
κ-scaling of ``K`` (``αK = ᾱ√K`` is the same at every ``κ`` of the schedule), is then larger
than the noise term (``∝ α``, which falls).  At 32 replicates, offsets 0.3, 1 and 3 gave the
claim's slopes −0.9, −0.72, −0.38 (Cor 3.1, ``κ_g = 1.4 … 2``) and −0.53, −0.16, −0.11
(Cor 3.2, ``κ_f = 2 … 8``, coupling 0.2), the mutants' −0.3, +1.9, +2.2 and +0.48, +0.86,
+0.91: the verdict does not depend on the offset, the mutant's margin does.  Cor 3.2's
verdict does not depend on the coupling either (slopes −0.16, −0.18, −0.31 at couplings 0.2,
0.5, 1; the mutant's +0.86, +0.84, +0.71).  Dropping ``κ_g`` from Cor 3.1's ``N``
(``N = ⌈log K⌉``) moves ``A`` by less than its standard error on this design (the bias ``b²``
is far below the transient), so it is not the mutant.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bilevel_theory import rates
from bilevel_theory.algorithm import run_algorithm
from bilevel_theory.fednest import FedNest, corollary_3_1_schedule, corollary_3_2_schedule
from bilevel_theory.problems import QuadraticMinimax

from ...claim import Condition, Law, Mutant, per_budget
from ...kit import knob_for, ledger_totals, per_replicate
from ..fedmbo.kappa import instance as bilevel_instance
from .common import RATE_NOISE, RATE_TAU, P, _alpha_bar

K_REF = 100            # K at κ₀
X0_OFFSET = 1.0        # ‖x⁰ − x*‖ (module docstring)
BETA_BAR = 2.0         # β̄ of eq. (16), as the rate claims


def _minimax_family(knob: float) -> QuadraticMinimax:
    """``fednest.minimax_rate``'s family (10 clients, dims 2, seed 0, heterogeneity 0.2,
    coupling 0.5, noise 0.3) with its ``kappa`` knob free (``μ_f = 1``)."""
    return QuadraticMinimax.random(clients=10, dim_x=2, dim_y=2, kappa=knob, heterogeneity=0.2,
                                   noise=RATE_NOISE, seed=0, coupling=0.5)


@functools.lru_cache(maxsize=64)
def minimax_instance(kappa_f: float) -> QuadraticMinimax:
    """The minimax family with its knob solved for ``κ_f = ℓ_{f,1}/μ_f = kappa_f``."""
    return _minimax_family(knob_for(lambda k: _minimax_family(k).constants["kappa_g"],
                                    kappa_f, name="kappa_f", upper=20.0,
                                    what="ℓ_{f,1}/μ_f of the family"))


@dataclass(frozen=True)
class KappaDesign:
    """One corollary's κ-scaled schedule (module docstring)."""

    corollary: str                                # "Cor 3.1" or "Cor 3.2"
    bound: str                                    # the registered K(ε) bound
    symbol: str                                   # its κ symbol
    instance: Callable[[float], Any]              # κ → instance with exactly that κ
    kappa_ref: float                              # κ₀
    clients: int                                  # |S|
    schedule: Callable[..., dict]                 # (problem, K, ᾱ, β̄) → hyperparameters

    @functools.cached_property
    def power(self) -> float:
        """The κ-exponent ``p`` of the corollary's ``K(ε)``, from sympy."""
        b = rates.BOUNDS[self.bound]
        return float(rates.leading_exponent(b.expr, b.symbol(self.symbol)))

    def iterations(self, kappa: float) -> int:
        """``K = c_K κ^p ε⁻²`` at fixed ``ε``: ``⌈K_REF(κ/κ₀)^p⌉``."""
        return math.ceil(K_REF * (1 - 1e-9) * (kappa / self.kappa_ref) ** self.power)

    @property
    def name(self) -> str:
        """The κ as the texts write it (``κ_g``, ``κ_f``)."""
        return self.symbol.replace("kappa_", "κ_")

    def alpha_bar(self, kappa: float) -> float:
        """``ᾱ = c_α κ^{−p/2}`` (FEDNEST-I5), ``c_α`` the rate claims' ``ᾱ = 2/L_Φ``
        (:func:`~bilevel_theory.verify.claims.fednest.common._alpha_bar`) at ``κ₀``."""
        return (_alpha_bar(self.instance(self.kappa_ref))
                * (kappa / self.kappa_ref) ** -(self.power / 2))

    def hyperparameters(self, kappa: float, K: int | None = None) -> dict:
        """The corollary's schedule at ``κ`` for ``K`` iterations (default
        :meth:`iterations`), with the start ``x⁰``, ``y*(x⁰)`` and ``K`` itself."""
        kappa = float(kappa)
        K = self.iterations(kappa) if K is None else int(K)
        P_ = self.instance(kappa)
        hp = self.schedule(P_, K, self.alpha_bar(kappa), beta_bar=BETA_BAR)
        x0 = np.asarray(P_.x_star) + X0_OFFSET * np.ones(P_.dim_x) / math.sqrt(P_.dim_x)
        return dict(hp, K=K, x0=x0, y0=np.asarray(P_.y_star(x0), float))

    def measure(self, kappa, replicates, seed, backend, iterations_fixed) -> dict:
        """``A = (1/K) Σ_{k<K} ‖∇Φ(x^k)‖²`` of FedNest at the schedule (mutant
        ``iterations_fixed``: ``K = K_REF`` at every ``κ``)."""
        kappa = float(kappa)
        s = self.hyperparameters(kappa, K_REF if iterations_fixed else None)
        K = s.pop("K")
        trace = run_algorithm(FedNest(self.instance(kappa), local_steps=RATE_TAU,
                                      sampled_clients=self.clients, **s),
                              K, replicates, seed, backend)
        R = replicates
        return {"value": trace.stationarity[:, :K].mean(axis=1), "diverged": trace.diverged,
                **ledger_totals(trace), "K": per_replicate(K, R),
                "kappa": per_replicate(self.instance(kappa).constants["kappa_g"], R),
                "inner_steps": per_replicate(s["inner_steps"], R),
                "alpha": per_replicate(s["outer_step"], R)}

    def law(self) -> Law:
        """Law 0 for ``A`` at the corollary's ``K``: its κ-exponent is spent by the schedule."""
        p, k = f"{self.power:g}", self.name
        tex = rf"\kappa_{self.symbol[-1]}"
        return Law(0.0, rf"A|_{{K \propto {tex}^{{{p}}}}} = \mathcal{{O}}({tex}^0)",
                   f"{self.corollary}: K(ε) has {k}-exponent {p} ({self.bound}, "
                   f"leading_exponent); at K ∝ {k}^{p} the corollary gives A ≤ ε for every {k}, "
                   f"so A at the schedule is O({k}⁰)")

    def conditions(self, inner: str, inner_power: float) -> list[Condition]:
        """Thm 3.1's step hypotheses and the corollary's schedule on every grid point;
        ``inner``: the corollary's ``T`` condition, ``T ≥ κ^inner_power``."""
        hp, k0 = self.hyperparameters, self.kappa_ref
        return [
            Condition("α_k = ᾱ/√K ≤ 1/(2L_Φ) (eq. 16's ᾱ/√K branch; the caps ᾱ₁, ᾱ₂, ᾱ₃ are "
                      "not given numerically, the descent cap stands for them)",
                      lambda k: hp(k)["outer_step"],
                      lambda k: 0.5 / self.instance(k).constants["L_phi"]),
            Condition("ᾱ = c_α κ^{−p/2} (FEDNEST-I5), c_α fixed at κ₀",
                      lambda k: hp(k)["outer_step"] * math.sqrt(hp(k)["K"])
                      * k ** (self.power / 2),
                      self.alpha_bar(k0) * k0 ** (self.power / 2), relation="=="),
            Condition("β_k = β̄α_k/T (Thm 3.1, eq. 16)", lambda k: hp(k)["inner_step"],
                      lambda k: BETA_BAR * hp(k)["outer_step"] / hp(k)["inner_steps"],
                      relation="=="),
            Condition(f"K = c_K κ^p ε⁻² ({self.corollary}), c_K fixed at κ₀",
                      lambda k: hp(k)["K"], self.iterations, relation="=="),
            Condition(inner, lambda k: hp(k)["inner_steps"], lambda k: k ** inner_power,
                      relation=">="),
            Condition("μ = 1 at every κ (only the largest eigenvalue of the inner Hessian "
                      "moves)", lambda k: self.instance(k).constants["mu_g"], 1.0,
                      relation="=="),
        ]


BILEVEL = KappaDesign("Cor 3.1", "fednest.cor31_iterations", "kappa_g", bilevel_instance,
                      1.4, 8, corollary_3_1_schedule)
MINIMAX = KappaDesign("Cor 3.2", "fednest.cor32_iterations", "kappa_f", minimax_instance,
                      2.0, 5, corollary_3_2_schedule)


def stationarity_vs_kappa(kappa_g, replicates, seed, backend="numpy", *,
                          iterations_fixed: bool = False) -> dict:
    """``A`` of FedNest at Cor 3.1's κ_g-scaled schedule (:data:`BILEVEL`)."""
    return BILEVEL.measure(kappa_g, replicates, seed, backend, iterations_fixed)


def minimax_stationarity_vs_kappa(kappa_f, replicates, seed, backend="numpy", *,
                                  iterations_fixed: bool = False) -> dict:
    """``A`` of FedNest at Cor 3.2's κ_f-scaled schedule (:data:`MINIMAX`)."""
    return MINIMAX.measure(kappa_f, replicates, seed, backend, iterations_fixed)


def _bilevel_conditions() -> tuple[Condition, ...]:
    hp = BILEVEL.hyperparameters
    return (*BILEVEL.conditions("T ≳ κ_g⁴ (Cor 3.1)", 4),
            Condition("N ≳ κ_g log K (Cor 3.1, so that b² ≲ 1/√K)",
                      lambda k: hp(k)["neumann_steps"], lambda k: k * math.log(hp(k)["K"]),
                      relation=">="))


def _sched(d: KappaDesign, rules: str, instance: str) -> str:
    k = d.name
    return (f"{d.corollary} at fixed ε (constants chosen at κ₀ = {d.kappa_ref:g}, rates not): "
            f"K = c_K{k}^{d.power:g}ε⁻² = ⌈{K_REF}({k}/κ₀)^{d.power:g}⌉, α_k = ᾱ/√K with "
            f"ᾱ = c_α{k}^{{−{d.power / 2:g}}} (FEDNEST-I5; c_α = 2/L_Φ at κ₀, the rate claims' "
            f"rule), β_k = β̄α_k/T with β̄ = {BETA_BAR:g}, {rules}; τ = {RATE_TAU}, "
            f"|S| = {d.clients}; x⁰ = x* + {X0_OFFSET:g}·(1,1)/√2, y⁰ = y*(x⁰); {instance}; "
            f"tolerance 0.1 in A's {k}-exponent")


def _iterations_fixed(d: KappaDesign) -> Mutant:
    k = d.name
    return Mutant("iterations_fixed",
                  f"the iteration count K(ε) computed without its {k}^{d.power:g} factor "
                  f"(K = {K_REF} at every {k}), the step Thm 3.1's at that K: αK = ᾱ√K falls "
                  f"as {k}^{{−{d.power / 2:g}}}, so the transient part of A grows with {k}",
                  {"iterations_fixed": True}, kind="schedule")


CLAIMS = [
    P.claim(
        "kappa_iterations", role="confirmation",
        source=P.cite("Cor 3.1 (iteration complexity K = O(κ_g⁵ε⁻²), κ_g-dependence)"),
        statement=r"K = \mathcal{O}(\kappa_g^5\epsilon^{-2}) \Rightarrow \frac{1}{K}\sum_k "
                  r"\mathbb{E}\|\nabla f(x^k)\|^2 \leq \epsilon\ \mathrm{for\ every}\ "
                  r"\kappa_g:\quad A|_{K \propto \kappa_g^5} = \mathcal{O}(\kappa_g^0)",
        kind="at_most", variable=r"\kappa_g",
        quantity=r"\frac{1}{K}\sum_{k<K} \|\nabla \Phi(x^k)\|^2",
        measure=stationarity_vs_kappa,
        grid=per_budget((1.4, 1.6, 1.8, 2.0), (1.4, 1.6, 1.8, 2.0, 2.3, 2.6),
                        (1.4, 1.6, 1.8, 2.0, 2.3, 2.6, 3.0)),
        # 64 at smoke for resolution ≤ 0.2 on its narrow κ_g range (32 gave 0.23, 48 0.206)
        replicates=per_budget(64, 32, 64), law=BILEVEL.law(), tolerance=0.1,
        schedule=_sched(BILEVEL, "T = ⌈κ_g⁴⌉, N = ⌈κ_g log K⌉ (FEDNEST-R3), "
                                 "corollary_3_1_schedule",
                        "κ_g = ℓ_{g,1}/μ_g of FedMBO's Theorem-1 instance (100 clients, noise "
                        "10, Hessian noise 0.3, upper_mu = 20) with its knob solved for it "
                        "(μ_g = 1, μ_Φ ≈ 20.4)"),
        conditions=_bilevel_conditions(), mutants=(_iterations_fixed(BILEVEL),),
        touches=("FEDNEST-R3", "FEDNEST-R4", "FEDNEST-I5")),
    P.claim(
        "minimax_kappa_iterations", role="confirmation",
        source=P.cite("Cor 3.2 (minimax; K = O(κ_f²ε⁻²), κ_f-dependence)"),
        statement=r"K = \mathcal{O}(\kappa_f^2\epsilon^{-2}) \Rightarrow \frac{1}{K}\sum_k "
                  r"\mathbb{E}\|\nabla f(x^k)\|^2 \leq \epsilon\ \mathrm{for\ every}\ "
                  r"\kappa_f:\quad A|_{K \propto \kappa_f^2} = \mathcal{O}(\kappa_f^0)",
        kind="at_most", variable=r"\kappa_f",
        quantity=r"\frac{1}{K}\sum_{k<K} \|\nabla \Phi(x^k)\|^2",
        measure=minimax_stationarity_vs_kappa,
        grid=per_budget((2.0, 3.0, 4.0, 6.0, 8.0), (2.0, 3.0, 4.0, 6.0, 8.0, 12.0),
                        (2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0)),
        replicates=per_budget(32, 32, 64), law=MINIMAX.law(), tolerance=0.1,
        schedule=_sched(MINIMAX, "T = ⌈κ_f⌉, corollary_3_2_schedule",
                        "κ_f = ℓ_{f,1}/μ_f of fednest.minimax_rate's family (10 clients, "
                        "coupling 0.5, noise 0.3) with its knob solved for it (μ_f = 1, "
                        "L_Φ 1.21 → 1.14)"),
        conditions=tuple(MINIMAX.conditions("T ≳ κ_f (Cor 3.2)", 1)),
        mutants=(_iterations_fixed(MINIMAX),),
        touches=("FEDNEST-R3", "FEDNEST-R4", "FEDNEST-I5")),
]
