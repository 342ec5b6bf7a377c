"""Yang, Xiao, Ma & Ji, AAAI 2025: MemFBO (Alg. 1).

Notation: ``n`` clients in total, ``P`` sampled per round without replacement (canonical
``m``), ``T`` rounds, ``τ`` local steps, ``λ`` the penalty multiplier.  The text lost most
formulas and the appendix is absent: Thm 5.11's rates are read from Cor 5.12 (MEMFBO-I3).
"""

from __future__ import annotations

from ..model import Inventory, Result

RESULTS = (
    Result("memfbo.sec5.gap", "section", "§5.2, before Prop. 5.7",
           r"\text{the gradient } \nabla L^*(x) \text{ has a gap of } O(1/\lambda) \text{ with "
           r"the gradient } \nabla\Phi(x)", ("λ",),
           claims=("memfbo.penalty_gap", "memfbo.plateau_vs_penalty")),
    Result("memfbo.prop5.7", "proposition", "Prop. 5.7 (proof: Thm C.8)",
           r"\mathbb{E}\|\nabla L^*(x^t)\|^2 \le O(1/\gamma_x)\mathbb{E}[L^*(x^t) - L^*(x^{t+1})]"
           r" - O(1)\mathbb{E}\|\tilde h_x^t\|^2 + O(\gamma_x)\mathbb{E}\|h_x^t\|^2 + "
           r"O(\lambda^2)(\Delta_x^t + \Delta_y^t + \Delta_z^t) + O(\lambda^2)(\dots)",
           ("η", "λ")),
    Result("memfbo.prop5.7.tradeoff", "section", "§5.2, after Prop. 5.7",
           "Theorem 5.7 also indicates an important trade-off in the selection of the Lagrange "
           "multiplier λ", ("λ",), claims=("memfbo.plateau_vs_penalty",)),
    Result("memfbo.prop5.8", "proposition", "Prop. 5.8 (proof: Thm C.7)",
           r"\Delta_y^t \le O(\eta_y^2\tau\lambda^2)(M_{se} + M_{cs}) + O(\eta_y^2\tau\lambda^2)"
           r"\Delta_x^t + O(\eta_y^2\tau\lambda^2)\mathbb{E}\|y^t - y^*_\lambda(x^t)\|^2",
           ("τ", "η", "λ"),
           claims=("memfbo.client_drift_fixed_eta", "memfbo.client_drift_gamma_over_tau",
                   "memfbo.drift_stationarity_vs_tau")),
    Result("memfbo.prop5.9", "proposition", "Prop. 5.9, eq. (10) (proof: Thm C.10)",
           r"\mathbb{E}\|y^{t+1} - y^*_\lambda(x^{t+1})\|^2 - \mathbb{E}\|y^t - y^*_\lambda(x^t)"
           r"\|^2 \le -O(\gamma_y\lambda)\mathbb{E}\|y^t - y^*_\lambda(x^t)\|^2 + O(\gamma_y^2)"
           r"\mathbb{E}\|h_y^t\|^2 + O(\gamma_x^2)\mathbb{E}\|h_x^t\|^2 + \dots", ("η", "λ")),
    Result("memfbo.prop5.10", "proposition", "Prop. 5.10, eq. (11) (proof: Thm C.9)",
           r"\mathbb{E}\|h_y^t\|^2 \le O(\lambda^2)\mathbb{E}\|y^t - y^*_\lambda(x^t)\|^2 + "
           r"O(\lambda^2)(\Delta_x^t + \Delta_y^t) + O(\frac{\lambda^2}{P\tau})M_{se} + "
           r"O(\frac{(n-P)\lambda^2}{P(n-1)})M_{cs}", ("m", "τ", "n", "λ")),
    Result("memfbo.thm5.11.partial", "theorem", "Thm 5.11 (partial participation)",
           r"\min_t\mathbb{E}\|\nabla\Phi(x^t)\|^2 = O((PT)^{-2/7})\ (\tau = O(1);\ "
           r"\text{read from Cor 5.12, MEMFBO-I3})", ("m", "T"), headline=True,
           claims=("memfbo.linear_speedup_partial", "memfbo.rounds_partial_participation")),
    Result("memfbo.thm5.11.full", "theorem", "Thm 5.11 (full participation)",
           r"\min_t\mathbb{E}\|\nabla\Phi(x^t)\|^2 = O((P\tau T)^{-2/7} + T^{-2/3})\ "
           r"(\text{read from Cor 5.12, MEMFBO-I3})", ("m", "τ", "T"), headline=True,
           claims=("memfbo.rounds_full_participation",)),
    Result("memfbo.thm5.11.relaxed", "theorem", "Thm 5.11 (relaxed full participation)",
           r"P = n \text{ can be relaxed to } P \ge \min\{(\tau-1)n/\tau + 1, n\} \text{ with "
           r"the same rate}", ("m", "n", "τ")),
    Result("memfbo.thm5.11.speedup", "section", "§1 and §5.2, after Thm 5.11",
           "MemFBO achieves a linear speedup (i.e., the communication complexity is improved "
           "linearly with respect to the number of sampled clients) under client sampling "
           "without replacement", ("m",), headline=True,
           claims=("memfbo.linear_speedup_partial",)),
    Result("memfbo.cor5.12.partial", "corollary", "Cor 5.12 (partial participation, rounds)",
           r"T = O(P^{-1}\epsilon^{-3.5}) \text{ global iterations (communication rounds, "
           r"MEMFBO-R3)}", ("ε", "m"), headline=True,
           claims=("memfbo.rounds_partial_participation", "memfbo.linear_speedup_partial"),
           sweeps={"memfbo.rounds_partial_participation": "ε"}),
    Result("memfbo.cor5.12.partial_samples", "corollary",
           "Cor 5.12 (partial participation, samples)",
           r"P\tau T = O(\epsilon^{-3.5}),\ \tau = O(1)", ("ε",), headline=True),
    Result("memfbo.cor5.12.full", "corollary", "Cor 5.12 (full participation, rounds)",
           r"T = O(\epsilon^{-1.5}) \text{ global iterations (communication rounds)}", ("ε",),
           headline=True, claims=("memfbo.rounds_full_participation",),
           sweeps={"memfbo.rounds_full_participation": "ε"}),
    Result("memfbo.cor5.12.full_samples", "corollary", "Cor 5.12 (full participation, samples)",
           r"P\tau T = O(\epsilon^{-3.5}),\ \tau = O(P^{-1}T^{4/3})", ("ε", "τ"),
           headline=True),
    Result("memfbo.cor5.12.tau", "section", "§5.2, after Cor 5.12",
           "for partial client participation, we set τ = O(1) because further increasing τ "
           "[does not help: the client-sampling term dominates]; with full participation that "
           "term vanishes", ("τ", "m")),
    Result("memfbo.cor5.12.vs_others", "section", "§5.2, after Cor 5.12 (comparison)",
           "an improved communication complexity of O(ε^{-1.5}) over the typical O(ε^{-2}) "
           "result obtained by FedNest, FBO-AggITD and FedMBO", ("ε",), headline=True),
    Result("memfbo.alg1.first_order", "section", "Abstract, §3.2",
           "uses only first-order gradient information for all local updates", ("τ",),
           claims=("memfbo.first_order_only",)),
    Result("memfbo.fig4", "figure", "§6.2, Fig. 4",
           "the memory cost of SimFBO increases dramatically with the number of local steps, "
           "whereas our MemFBO consistently maintains low memory usage", ("τ",),
           claims=("memfbo.memory_independent_of_tau",)),
    Result("memfbo.fig3", "figure", "§6.2, Fig. 3",
           "our method can achieve a faster convergence rate and a higher accuracy than "
           "second-order methods with subloops including FedNest, LFedNest, and AggITD", ("T",)),
    Result("memfbo.table1", "table", "§6.1, Table 1",
           "average test accuracy on CIFAR10 under noise rates 0–70%: MemFBO 81.33 / 78.21 / "
           "77.94 / 73.60, above SimFBO and the personalized baselines", ("δ",),
           checkable=False,
           why_not="test accuracies of neural networks on CIFAR10 with noisy labels: no "
                   "counterpart on a quadratic instance"),
)

#: MemFBO's symbols in the claims' ``variable``: ``P`` sampled clients, ``T`` rounds, ``τ``
#: local steps, ``λ`` the penalty.
INVENTORY = Inventory(
    key="memfbo", paper="MemFBO 2025", citation="Yang, Xiao, Ma & Ji, AAAI 2025",
    notation={"P": "m", "T": "T", r"\tau": "τ", r"\lambda": "λ"},
    results=RESULTS)
