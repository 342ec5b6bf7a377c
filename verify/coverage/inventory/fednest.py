"""Tarzanagh, Li, Thrampoulidis & Oymak, ICML 2022 (arXiv:2205.02215): FedNest and
LFedNest.

Notation: ``m`` clients, all taking part (canonical ``n``); ``K`` outer epochs and ``k`` the
epoch index (``T``); ``T`` inner FedInn steps (``K``); ``τ_i`` local steps (``τ``); ``N`` the
FedIHGP truncation; ``ᾱ`` the step constant (``η``); ``h`` the heterogeneity of an instance
(``δ``).
"""

from __future__ import annotations

from ..model import Inventory, Result

_KAPPA = ("κ_g is swept by fednest.kappa_iterations (κ_g = 1.4–2.6 at standard, 1.4–3.0 at "
          "full: K ∝ κ_g⁵, T = ⌈κ_g⁴⌉, N = ⌈κ_g log K⌉, ᾱ ∝ κ_g^{−5/2} (FEDNEST-I5: the "
          "corollary's proof is not in the text), inside the descent cap, constants fixed at "
          "κ_g = 1.4) from x* + (1, 1)/√2: a factor 2 in κ_g, since a run's length grows like "
          "κ_g⁵·κ_g⁴ (FEDNEST-R3)")

_KAPPA_F = ("κ_f is swept by fednest.minimax_kappa_iterations (κ_f = 2–12 at standard, 2–16 at "
            "full: K ∝ κ_f², T = ⌈κ_f⌉, ᾱ ∝ κ_f^{−1} (FEDNEST-I5), inside the descent cap, "
            "constants fixed at κ_f = 2) on fednest.minimax_rate's family with only κ_f moving "
            "(L_Φ 1.21 → 1.14)")
_EPS_BY_K = ("; ε: the claim sweeps K at the corollary's schedule, and K = O(ε⁻²) is its rate "
             "O(1/√K) inverted (the grid of K walks ε ∝ K^{−1/2})")
_SAMPLES = ("; the samples per epoch are a constant of the schedule (batch O(1)), counted by "
            "the ledger (grad_calls, hvp_calls, jvp_calls metrics), so the samples walk K")

RESULTS = (
    Result("fednest.lemma2.2.bias", "lemma", "Lemma 2.2, eq. (14)",
           r"\|[\nabla^2_y g]^{-1} - \mathbb{E}_{\mathcal W}[\hat H_y]\| \le \frac{1}{\mu_g}"
           r"\Big(\frac{\kappa_g - 1}{\kappa_g}\Big)^N", ("N", "κ"),
           claims=("fednest.ihgp_bias_vs_N", "fednest.released_bias_vs_N"),
           reason="its claims are a control (fednest.ihgp_bias_vs_N: the bound is an identity of the "
                  "implemented series, attained) and a defect of the released code; a confirmation "
                  "would compare a number with itself", gap="cannot_fail"),
    Result("fednest.lemma2.2.moment", "lemma", "Lemma 2.2, eq. (14)",
           r"\mathbb{E}_{\mathcal W}\|[\nabla^2_y g]^{-1} - \hat H_y\| \le 2/\mu_g", ("N", "κ"),
           claims=("fednest.ihgp_deviation_bound", "fednest.ihgp_deviation_noisy",
                   "fednest.ihgp_deviation_vs_kappa")),
    Result("fednest.lemma2.2.b", "lemma", "Lemma 2.2, eq. (15)",
           r"\|\mathbb{E}_{\mathcal W}[h_i^I(x,y)] - \bar\nabla^I f_i(x,y)\| \le b,\quad "
           r"b = \kappa_g\ell_{f,1}((\kappa_g-1)/\kappa_g)^N", ("N", "κ"),
           claims=("fednest.indirect_bias_bound", "fednest.indirect_bias_vs_kappa")),
    Result("fednest.sec2.5", "section", "§1 (contributions) and §2.5 (FedInn vs FedAvg)",
           "the variance reduction of FedInn enables robustness in the sense that local models "
           "converge to the globally optimal inner model despite client drift/heterogeneity "
           "unlike FedAvg", ("δ",), claims=("fednest.fedinn_vs_fedavg",)),
    Result("fednest.sec2.6.rounds", "section", "§2.6 (rounds per epoch)",
           "each FedNest epoch k requires 2T + N + 3 communication rounds", ("K", "N"),
           claims=("fednest.rounds_per_epoch", "fednest.rounds_per_epoch_vs_T")),
    Result("fednest.sec2.6.lfednest_rounds", "section", "§2.6 (Light-FedNest)",
           "LFedNest ... reduces the number of rounds to T + 1, saving T + N + 2 rounds",
           ("K", "N"),
           claims=("lfednest.rounds_per_epoch", "lfednest.rounds_per_epoch_vs_N")),
    Result("fednest.thm3.1", "theorem", "Thm 3.1",
           r"\frac1K\sum_k\mathbb{E}\|\nabla f(x^k)\|^2 = O\Big(\frac{\bar\alpha\max(\sigma_"
           r"{g,1}^2, \sigma_{g,2}^2, \sigma_f^2)}{\sqrt K} + \frac{1}{\min(\bar\alpha_1, "
           r"\bar\alpha_2, \bar\alpha_3)K} + b^2\Big)", ("T", "η", "N", "σ"), headline=True,
           claims=("fednest.variance_floor", "fednest.variance_floor_vs_N",
                   "fednest.variance_floor_vs_step"),
           reason="T and N are swept; at σ = 0 and a constant step the random truncation's floor "
                  "makes both findings (fednest.variance_floor, fednest.variance_floor_vs_N: the "
                  "floor ∝ αN); the ᾱ-sweep at one K is a control (an O(·) in K cannot be refuted "
                  "at one K) and no σ-sweep is built (σ_f, σ_{g,1}: the gradient noise is additive and the "
                  "iterates are linear in it, so the average is affine in σ² and a σ-sweep cannot "
                  "contradict the ᾱσ²/√K term; σ_{g,2} enters FedIHGP's product of N Hessian "
                  "samples, not swept)", gap="cannot_fail"),
    Result("fednest.cor3.1", "corollary", "Cor 3.1 (bilevel)",
           r"N = O(\kappa_g\log K),\ T = O(\kappa_g^4) \Rightarrow \frac1K\sum_k\mathbb{E}"
           r"\|\nabla f(x^k)\|^2 = O\Big(\frac{\kappa_g^4}{K} + \frac{\kappa_g^{2.5}}{\sqrt K}"
           r"\Big)", ("T", "κ"), headline=True,
           claims=("fednest.bilevel_rate", "fednest.kappa_iterations"), reason=_KAPPA),
    Result("fednest.cor3.1.iterations", "corollary", "Cor 3.1 (iteration complexity)",
           r"K = O(\kappa_g^5\epsilon^{-2})", ("ε", "κ"), headline=True,
           claims=("fednest.bilevel_rate", "fednest.kappa_iterations"),
           sweeps={"fednest.bilevel_rate": "ε"}, reason=_KAPPA + _EPS_BY_K),
    Result("fednest.cor3.1.bias", "section", "§3, after Cor 3.1",
           r"N \propto \kappa_g\log K \text{ guarantees } b^2 \lesssim 1/\sqrt K",
           ("N", "T", "κ"), claims=("fednest.bias_at_cor31_N",),
           sweeps={"fednest.bias_at_cor31_N": "T"},
           reason="K is swept with N = ⌈κ_g log K⌉ (fednest.bias_at_cor31_N: the bias that eq. (15)'s "
                  "b bounds, at N(K) = 36…89 on the smoke grid); N apart from K and κ_g are the "
                  "subjects of fednest.indirect_bias_bound and fednest.indirect_bias_vs_kappa "
                  "(findings on eq. (15)'s formula); a κ_g-sweep at fixed K is not built: "
                  "(1 − 1/κ_g)^{κ_g log K} rises toward 1/K as κ_g grows, a slope that a bound "
                  "O(1/√K) uniform in κ_g does not forbid, so the sweep could not fail",
           gap="cannot_fail"),
    Result("fednest.cor3.1.communication", "section", "§3, after Cor 3.1 (communication)",
           "the communication cost is dominated by SVRG epochs N and O(κ_g⁴) rounds",
           ("K", "N", "κ"), checkable=False,
           why_not="the sentence is garbled (N counts FedIHGP's Neumann terms, not SVRG "
                   "epochs): no statement to test; the rounds per epoch are §2.6's 2T + N + 3"),
    Result("fednest.table1.bilevel", "table", "Table 1 (FedNest, bilevel)",
           r"\text{samples in } \xi: O(\kappa_g^5\epsilon^{-2}),\ \text{in } \zeta: "
           r"O(\kappa_g^9\epsilon^{-2}),\ \text{batch } O(1)", ("ε", "κ"),
           claims=("fednest.bilevel_rate", "fednest.kappa_iterations"),
           sweeps={"fednest.bilevel_rate": "ε"},
           reason="κ: fednest.kappa_iterations runs Cor 3.1's κ_g-scaled schedule (K ∝ κ_g⁵, "
                  "T = ⌈κ_g⁴⌉) and finds the achieved average flat in κ_g (its mutant "
                  "iterations_fixed, K without its κ_g⁵, is caught); the ledger counts that "
                  "schedule's samples as they are drawn (jvp_calls, one ξ-batch per sampled "
                  "client and epoch, ∝ K ∝ κ_g⁵; grad_calls, dominated by the inner loop's "
                  "ζ-samples, ∝ KT ∝ κ_g⁹): samples of the table's orders suffice at every κ_g "
                  "swept" + _EPS_BY_K + _SAMPLES),
    Result("fednest.cor3.2", "corollary", "Cor 3.2 (minimax)",
           r"T = O(\kappa_f) \Rightarrow \frac1K\sum_k\mathbb{E}\|\nabla f(x^k)\|^2 = "
           r"O\Big(\frac{\kappa_f^2}{K} + \frac{\kappa_f}{\sqrt K}\Big)", ("T", "κ"),
           headline=True,
           claims=("fednest.minimax_rate", "fednest.minimax_kappa_iterations"),
           reason=_KAPPA_F),
    Result("fednest.table1.minimax", "table", "Table 1 (FedNest, minimax)",
           r"\text{samples } O(\kappa_f^3\epsilon^{-2}),\ \text{batch } O(1)", ("ε", "κ"),
           claims=("fednest.minimax_rate", "fednest.minimax_kappa_iterations"),
           sweeps={"fednest.minimax_rate": "ε"},
           reason="κ_f: fednest.minimax_kappa_iterations runs Cor 3.2's κ_f-scaled schedule "
                  "(K ∝ κ_f², T = ⌈κ_f⌉) and finds the achieved average flat in κ_f (its mutant "
                  "iterations_fixed, K without its κ_f², is caught); the ledger counts that "
                  "schedule's samples as they are drawn (grad_calls ∝ KT ∝ κ_f³): samples of the "
                  "table's order suffice at every κ_f swept" + _EPS_BY_K + _SAMPLES),
    Result("fednest.cor3.3", "corollary", "Cor 3.3 (compositional)",
           r"T = 1 \Rightarrow \frac1K\sum_k\mathbb{E}\|\nabla f(x^k)\|^2 = O(1/\sqrt K)",
           ("T",), headline=True, claims=("fednest.compositional_rate",)),
    Result("fednest.table1.compositional", "table", "Table 1 (FedNest, compositional)",
           r"\text{samples } O(\epsilon^{-2}),\ \text{batch } O(1)", ("ε",),
           claims=("fednest.compositional_rate",),
           sweeps={"fednest.compositional_rate": "ε"}, reason=_EPS_BY_K[2:] + _SAMPLES),
    Result("fednest.cor3.3.matches", "section", "§3, after Cor 3.3",
           "the rate O(1/√K) matches the convergence rate of non-federated stochastic "
           "algorithms such as SCGD and NASA", ("T",), checkable=False,
           why_not="a comparison with other papers' rates (SCGD, NASA), not a property of a "
                   "run"),
    Result("fednest.thm3.2", "theorem", "Thm 3.2 (single level)",
           r"\frac1K\sum_k\mathbb{E}\|\nabla f(x^k)\|^2 = O\Big(\frac{\Delta_f}{\bar\alpha_1K}"
           r" + \frac{\Delta_f/\bar\alpha + \bar\alpha\sigma_f^2}{\sqrt K}\Big)",
           ("T", "η", "σ"), headline=True, claims=("fednest.fedsvrg_single_level",),
           reason="T is swept (fednest.fedsvrg_single_level); ᾱ and σ at a fixed K are not: "
                  "the gradient noise is additive and the iterates are linear in it, so the "
                  "average is affine in σ_f² and a σ-sweep cannot contradict the ᾱσ_f²/√K term "
                  "(as memfbo.prop5.10's λ); at a fixed K the bound's Δ_f/ᾱ + ᾱσ_f² is U-shaped "
                  "in ᾱ and Δ_f = f(x⁰) − E f(x^K) moves with ᾱ, so an ᾱ-sweep has no law to "
                  "hold the measurement to", gap="cannot_fail"),
    Result("fednest.fig2a", "figure", "§4.1, Fig. 2(a)",
           "on the non-i.i.d. setup, FedNest achieves i.i.d. performance, significantly "
           "outperforming LFedNest; both perform well on the i.i.d. setup", ("δ",),
           claims=("lfednest.bias_under_heterogeneity",)),
    Result("fednest.fig2b", "figure", "§4.1, Fig. 2(b)",
           "the importance of SVRG in FedInn for heterogeneous data", ("δ",),
           claims=("fednest.fedinn_vs_fedavg",)),
    Result("fednest.fig2c", "figure", "§4.1, Fig. 2(c)",
           "larger τ saves on communication and improves test performance by enabling faster "
           "convergence", ("τ",), claims=("fednest.rounds_vs_local_steps",),
           reason="read as Thm 3.1 at the round step α_k = τα_i with the figure's local step α_i "
                  "fixed (FEDNEST-R13): the rounds until the average stationarity falls below a "
                  "target, counted by the ledger, fall as 1/τ (τ = 1 … 8); 'test performance' "
                  "has no counterpart on a quadratic"),
    Result("fednest.fig3a", "figure", "§4.2, Fig. 3(a)",
           "FedNest achieves near non-federated performance", ("T",),
           reason="'near non-federated performance': a comparison with a centralized baseline the "
                  "toolkit does not implement", gap="baseline"),
    Result("fednest.fig3b", "figure", "§4.2, Fig. 3(b)",
           "SVRG offers significant performance gains that are pronounced by client "
           "heterogeneity", ("δ",), claims=("fednest.fedinn_vs_fedavg",)),
    Result("fednest.fig4.linear", "figure", "§4.3, Fig. 4 (caption)",
           "FedNest converges linearly despite heterogeneity", ("T", "δ"),
           claims=("fednest.minimax_linear", "fednest.minimax_linear_vs_heterogeneity")),
    Result("fednest.fig4.vs_fedavg_s", "figure", "§4.3, Fig. 4 (FedNest vs FedAvg-S)",
           "[LFedNest and] FedNest outperform FedAvg-S thanks to their alternating nature",
           ("T",), claims=("fednest.minimax_vs_fedavg_s", "fednest.minimax_vs_fedavg_s_notebook")),
    Result("fednest.fig4.vs_lfednest", "figure", "§4.3, Fig. 4",
           "FedNest significantly improves the convergence of LFedNest due to controlling "
           "client-drift", ("T",), claims=("fednest.minimax_vs_lfednest",)),
    Result("fednest.fig4.lfednest_vs_fedavg_s", "figure", "§4.3, Fig. 4 and its caption",
           "LFedNest and FedNest outperform FedAvg-S ...; LFedNest slightly outperforms "
           "FedAvg-S", ("T",), claims=("fednest.minimax_vs_fedavg_s", "fednest.lfednest_vs_fedavg_s")),
)

#: FedNest's symbols in the claims' ``variable``: ``K`` epochs and ``k`` the epoch index,
#: ``T`` inner steps, ``N`` truncation, ``h`` and ``s`` heterogeneity (``s``: the spread of the
#: §4.3 instance's ``b_i``), ``alpha_bar`` the step constant.
INVENTORY = Inventory(
    key="fednest", paper="FedNest 2022",
    citation="Tarzanagh, Li, Thrampoulidis & Oymak, ICML 2022 (arXiv:2205.02215)",
    notation={"K": "T", "k": "T", "T": "K", "N": "N", "h": "δ", "s": "δ", "alpha_bar": "η",
              r"\tau": "τ", r"\kappa_g": "κ", r"\kappa_f": "κ"},
    results=RESULTS)
