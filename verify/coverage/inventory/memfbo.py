"""Yang, Xiao, Ma & Ji, AAAI 2025: MemFBO (Alg. 1).

Notation: ``n`` clients in total, ``P`` sampled per round without replacement (canonical
``m``), ``T`` rounds, ``τ`` local steps, ``λ`` the penalty multiplier.  The text lost most
formulas and the appendix is absent: Thm 5.11's rates are read from Cor 5.12 (MEMFBO-I3).
The only condition number a result states is ``1 + 2L_{g,1}²/μ²`` inside ``M_cs`` (Props. 5.8
and 5.10); every rate keeps its constants inside ``O(·)``.  ``_KAPPA_CS`` says why no
κ-sweep could contradict ``M_cs``'s ``κ²``.
"""

from __future__ import annotations

from ..model import Inventory, Result

_SAMPLES = ("ε: the claim sweeps T at Cor 5.12's schedule, whose T(ε) walks ε; the samples PτT "
            "are counted by the ledger (grad_calls metric)")

#: Why a κ-sweep cannot contradict the κ² of M_cs (Props. 5.8, 5.10).  With μ ⪯ ∇²_{yy}g_i ⪯
#: L_{g,1}, at y_λ(x) the clients' ∇_yL_i deviate from their mean by ∇_yf_i − ∇_yF, by
#: λ∇_yg_i(x, y*(x)) (A5.6's σ_gh) and by (A_i − Ā)Ā⁻¹∇_yF (from λĀ(y_λ − y*) = −∇_yF); the
#: last one's mean square is at most ‖∇_yF‖² max_s (s − μ)(L − s)/s² = L_{f,0}²(κ − 1)²/(4κ),
#: since A_i² ⪯ (L + μ)A_i − Lμ.  So the client-sampling spread grows at most like κ, never
#: like the stated κ²: a κ-sweep's exponent is ≤ 1 on every instance that meets A5.3–A5.6.
_KAPPA_CS = ("κ enters only through M_cs = (1/λ²)(L_{f,0}²(1 + 2L_{g,1}²/μ²) + λ²σ_gh²): on "
             "instances that meet A5.3–A5.6 the clients' spread of ∇_yL_i at y_λ(x) is at most "
             "2L_{f,0}² + 2λ²σ_gh² + L_{f,0}²(κ − 1)²/(4κ) in its κ-part (λĀ(y_λ − y*) = "
             "−∇_yF and A_i² ⪯ (L + μ)A_i − Lμ), which grows like κ, not κ², so no κ-sweep "
             "could contradict the stated κ²")

RESULTS = (
    Result("memfbo.sec5.gap", "section", "§5.2, before Prop. 5.7",
           r"\text{the gradient } \nabla L^*(x) \text{ has a gap of } O(1/\lambda) \text{ with "
           r"the gradient } \nabla\Phi(x)", ("λ",),
           claims=("memfbo.penalty_gap", "memfbo.plateau_vs_penalty")),
    Result("memfbo.prop5.7", "proposition", "Prop. 5.7 (proof: Thm C.8)",
           r"\mathbb{E}\|\nabla L^*(x^t)\|^2 \le O(1/\gamma_x)\mathbb{E}[L^*(x^t) - L^*(x^{t+1})]"
           r" - O(1)\mathbb{E}\|\tilde h_x^t\|^2 + O(\gamma_x)\mathbb{E}\|h_x^t\|^2 + "
           r"O(\lambda^2)(\Delta_x^t + \Delta_y^t + \Delta_z^t) + O(\lambda^2)(\dots)",
           ("η", "λ"),
           reason="a descent inequality whose terms are O(·) of unnamed constants (the text lost the "
                  "formulas, MEMFBO-I3): no law to hold a measurement to", gap="unspecified"),
    Result("memfbo.prop5.7.tradeoff", "section", "§5.2, after Prop. 5.7",
           "Theorem 5.7 also indicates an important trade-off in the selection of the Lagrange "
           "multiplier λ", ("λ",), claims=("memfbo.plateau_vs_penalty",),
           reason="'a trade-off in λ' is qualitative; memfbo.plateau_vs_penalty (a control) measures "
                  "the 1/λ² side, and the rate claims pick λ by the balance of MEMFBO-I4",
           gap="unspecified"),
    Result("memfbo.prop5.8", "proposition", "Prop. 5.8 (proof: Thm C.7)",
           r"\Delta_y^t \le O(\eta_y^2\tau\lambda^2)(M_{se} + M_{cs}) + O(\eta_y^2\tau\lambda^2)"
           r"\Delta_x^t + O(\eta_y^2\tau\lambda^2)\mathbb{E}\|y^t - y^*_\lambda(x^t)\|^2",
           ("τ", "η", "λ", "κ"),
           claims=("memfbo.client_drift_fixed_eta", "memfbo.client_drift_gamma_over_tau",
                   "memfbo.drift_stationarity_vs_tau"),
           reason="τ is swept (the finding memfbo.client_drift_gamma_over_tau, which walks η = γ/τ "
                  "with it, and two controls: at a fixed η the local τ² of "
                  "memfbo.client_drift_fixed_eta is absorbed by a τ-free constant on the "
                  "bounded range of its small-step regime, MEMFBO-R4); γ_y (η) and λ apart "
                  "from τ enter as O(η²τλ²): on a quadratic a client's local iterates "
                  "move by (I − (I − ηA)^j)A⁻¹∇_yL_i plus noise of variance O(η²j), so the drift "
                  "grows at most as η² at every stable step, and its λ-dependence is a quadratic "
                  "form in λ (as memfbo.prop5.10's): neither sweep could contradict the statement; "
                  "the drift is driven by the same spread of ∇_yL_i, and " + _KAPPA_CS,
           gap="cannot_fail"),
    Result("memfbo.prop5.9", "proposition", "Prop. 5.9, eq. (10) (proof: Thm C.10)",
           r"\mathbb{E}\|y^{t+1} - y^*_\lambda(x^{t+1})\|^2 - \mathbb{E}\|y^t - y^*_\lambda(x^t)"
           r"\|^2 \le -O(\gamma_y\lambda)\mathbb{E}\|y^t - y^*_\lambda(x^t)\|^2 + O(\gamma_y^2)"
           r"\mathbb{E}\|h_y^t\|^2 + O(\gamma_x^2)\mathbb{E}\|h_x^t\|^2 + \dots", ("η", "λ"),
           reason="a tracking inequality with O(·) constants (MEMFBO-I3): no explicit law",
           gap="unspecified"),
    Result("memfbo.prop5.10", "proposition", "Prop. 5.10, eq. (11) (proof: Thm C.9)",
           r"\mathbb{E}\|h_y^t\|^2 \le O(\lambda^2)\mathbb{E}\|y^t - y^*_\lambda(x^t)\|^2 + "
           r"O(\lambda^2)(\Delta_x^t + \Delta_y^t) + O(\frac{\lambda^2}{P\tau})M_{se} + "
           r"O(\frac{(n-P)\lambda^2}{P(n-1)})M_{cs}", ("m", "τ", "n", "λ", "κ"),
           claims=("memfbo.second_moment_vs_sampled_clients", "memfbo.second_moment_vs_clients",
                   "memfbo.second_moment_vs_local_steps"),
           reason="P, n (through P_eff = P(n − 1)/(n − P)) and τ are swept (MEMFBO-I7); λ is not: "
                  "λ²M_se = σ_f² + λ²σ_g² and λ²M_cs = L_{f,0}²(1 + 2L_{g,1}²/μ²) + λ²σ_gh² are "
                  "both c₁ + c₂λ², which bounds the measured second moment at every λ (∇_yL_i = "
                  "∇_yf_i + λ∇_yg_i), so no λ-sweep could contradict the statement; " + _KAPPA_CS,
           gap="cannot_fail"),
    Result("memfbo.thm5.11.partial", "theorem", "Thm 5.11 (partial participation)",
           r"\min_t\mathbb{E}\|\nabla\Phi(x^t)\|^2 = O((PT)^{-2/7})\ (\tau = O(1);\ "
           r"\text{read from Cor 5.12, MEMFBO-I3})", ("m", "T"), headline=True,
           claims=("memfbo.rounds_partial_participation_limit", "memfbo.linear_speedup_partial",
                   "memfbo.rounds_partial_participation"),
           reason="T is swept at P = 4 of 16 with τ = 2 as T → ∞ on the exact path "
                  "(memfbo.rounds_partial_participation_limit, a finding: the minimum of ‖∇Φ‖² "
                  "levels off at about 0.003, the drift of η = γ/τ, MEMFBO-L1; the noisy runs on "
                  "T ≤ 51200 are a control); P at T = 800 (memfbo.linear_speedup_partial)"),
    Result("memfbo.thm5.11.full", "theorem", "Thm 5.11 (full participation)",
           r"\min_t\mathbb{E}\|\nabla\Phi(x^t)\|^2 = O((P\tau T)^{-2/7} + T^{-2/3})\ "
           r"(\text{read from Cor 5.12, MEMFBO-I3})", ("m", "τ", "T"), headline=True,
           claims=("memfbo.rounds_full_participation_limit", "memfbo.rounds_full_participation",
                   "memfbo.rate_full_vs_local_steps", "memfbo.rate_full_vs_clients"),
           reason="T is swept at P = n with Cor 5.12's τ = ⌈c_τT^{4/3}/P⌉, as T → ∞ on the "
                  "exact path (memfbo.rounds_full_participation_limit, a finding: the minimum "
                  "of ‖∇Φ‖² tends to about 0.003, the drift of η = γ/τ, MEMFBO-L1; the noisy "
                  "runs on T ≤ 1024 are a control); τ and P apart from T at "
                  "T = 400 (MEMFBO-R7: the value less the penalty floor against the bound's "
                  "(PτT)^{−2/7}, memfbo.rate_full_vs_local_steps and memfbo.rate_full_vs_clients)"),
    Result("memfbo.thm5.11.relaxed", "theorem", "Thm 5.11 (relaxed full participation)",
           r"P = n \text{ can be relaxed to } P \ge \min\{(\tau-1)n/\tau + 1, n\} \text{ with "
           r"the same rate}", ("m", "n", "τ"), claims=("memfbo.second_moment_relaxed_participation",),
           sweeps={"memfbo.second_moment_relaxed_participation": "τ"},
           reason="τ is swept with P(τ) at the threshold, at the level of eq. (11)'s last two terms "
                  "(memfbo.second_moment_relaxed_participation, n = 64: the second moment falls "
                  "at least as 1/τ, full participation's rate); P and n apart from τ are not "
                  "swept, and no sweep of them could fail: along n at a fixed τ the threshold is "
                  "P ≈ (τ − 1)n/τ, a fixed fraction of n, and (n − P)/(P(n − 1)) falls as 1/n for "
                  "every fixed fraction (P = n/2 as well, and with replacement S²/P too), as "
                  "full participation's λ²M_se/(Pτ) does; along P at fixed n and τ 'the same "
                  "rate' compares two values at one (n, τ), a ratio bounded by construction; "
                  "the convergence rate itself is not swept: at Cor 5.12's full-participation "
                  "schedule τ = ⌈c_τT^{4/3}/P⌉ (n = 16, c_τ = 1/4) the threshold is 13 at T = 64 "
                  "and n from T = 128 on, and the theorem's rate at a fixed small τ is among the "
                  "lost formulas (MEMFBO-I3)", gap="cannot_fail"),
    Result("memfbo.thm5.11.speedup", "section", "§1 and §5.2, after Thm 5.11",
           "MemFBO achieves a linear speedup (i.e., the communication complexity is improved "
           "linearly with respect to the number of sampled clients) under client sampling "
           "without replacement", ("m",), headline=True,
           claims=("memfbo.linear_speedup_partial",)),
    Result("memfbo.cor5.12.partial", "corollary", "Cor 5.12 (partial participation, rounds)",
           r"T = O(P^{-1}\epsilon^{-3.5}) \text{ global iterations (communication rounds, "
           r"MEMFBO-R3)}", ("ε", "m"), headline=True,
           claims=("memfbo.rounds_partial_participation_limit",
                   "memfbo.rounds_partial_participation", "memfbo.linear_speedup_partial"),
           sweeps={"memfbo.rounds_partial_participation_limit": "ε",
                   "memfbo.rounds_partial_participation": "ε"},
           reason="T = T(ε) swept as T → ∞ on the exact path, a finding (MEMFBO-L1)"),
    Result("memfbo.cor5.12.partial_samples", "corollary",
           "Cor 5.12 (partial participation, samples)",
           r"P\tau T = O(\epsilon^{-3.5}),\ \tau = O(1)", ("ε",), headline=True,
           claims=("memfbo.rounds_partial_participation_limit",
                   "memfbo.rounds_partial_participation"),
           sweeps={"memfbo.rounds_partial_participation_limit": "ε",
                   "memfbo.rounds_partial_participation": "ε"},
           reason=_SAMPLES + " (as T → ∞ a finding, MEMFBO-L1)"),
    Result("memfbo.cor5.12.full", "corollary", "Cor 5.12 (full participation, rounds)",
           r"T = O(\epsilon^{-1.5}) \text{ global iterations (communication rounds)}", ("ε",),
           headline=True,
           claims=("memfbo.rounds_full_participation_limit", "memfbo.rounds_full_participation"),
           sweeps={"memfbo.rounds_full_participation_limit": "ε",
                   "memfbo.rounds_full_participation": "ε"},
           reason="T = T(ε) swept as T → ∞ on the exact path, a finding (MEMFBO-L1)"),
    Result("memfbo.cor5.12.full_samples", "corollary", "Cor 5.12 (full participation, samples)",
           r"P\tau T = O(\epsilon^{-3.5}),\ \tau = O(P^{-1}T^{4/3})", ("ε", "τ"),
           headline=True,
           claims=("memfbo.rounds_full_participation_limit", "memfbo.rounds_full_participation",
                   "memfbo.rate_full_vs_local_steps"),
           sweeps={"memfbo.rounds_full_participation_limit": "ε",
                   "memfbo.rounds_full_participation": "ε"},
           reason=_SAMPLES + " (as T → ∞ a finding, MEMFBO-L1); τ apart from T: memfbo.rate_full_vs_local_steps sweeps τ at "
                             "T = 400, P = n = 16, inside τ ≤ c_τT^{4/3}/P, and the value less "
                             "the penalty floor falls at least as (PτT)^{−2/7} (MEMFBO-R7), so "
                             "along τ the samples PτT that reach an excess ε (counted by the "
                             "ledger, grad_calls metric) grow at most as ε^{−3.5}"),
    Result("memfbo.cor5.12.tau", "section", "§5.2, after Cor 5.12",
           "for partial client participation, we set τ = O(1) because further increasing τ "
           "[does not help: the client-sampling term dominates]; with full participation that "
           "term vanishes", ("τ", "m"),
           claims=("memfbo.second_moment_partial_vs_tau",
                   "memfbo.sampling_floor_vs_sampled_clients"),
           sweeps={"memfbo.second_moment_partial_vs_tau": "τ",
                   "memfbo.sampling_floor_vs_sampled_clients": "m"},
           reason="tested at the level the text argues from, eq. (11)'s last two terms: τ at "
                  "P = n/2 (memfbo.second_moment_partial_vs_tau: flat in τ, falling at P = n, its "
                  "contrast) and P at a τ past which more local steps no longer help "
                  "(memfbo.sampling_floor_vs_sampled_clients: the floor falls as the "
                  "client-sampling error (n − P)/(P(n − 1)) and vanishes at P = n); the "
                  "convergence rate itself in τ at partial participation is not measured "
                  "(Thm 5.11's formulas are lost, MEMFBO-I3)"),
    Result("memfbo.cor5.12.vs_others", "section", "§5.2, after Cor 5.12 (comparison)",
           "an improved communication complexity of O(ε^{-1.5}) over the typical O(ε^{-2}) "
           "result obtained by FedNest, FBO-AggITD and FedMBO", ("ε",), headline=True,
           claims=("memfbo.rounds_full_participation_limit", "memfbo.rounds_full_participation",
                   "fednest.bilevel_rate", "fedmbo.complexity_vs_epsilon"),
           sweeps={"memfbo.rounds_full_participation_limit": "ε",
                   "memfbo.rounds_full_participation": "ε", "fednest.bilevel_rate": "ε",
                   "fedmbo.complexity_vs_epsilon": "ε"},
           reason="each exponent at its own paper's schedule (MEMFBO-R6); MemFBO's O(ε^{-1.5}) "
                  "fails as T → ∞ on heterogeneous clients under η = γ/τ (MEMFBO-L1, a "
                  "finding); AggITD is not implemented"),
    Result("memfbo.alg1.first_order", "section", "Abstract, §3.2",
           "uses only first-order gradient information for all local updates", ("τ",),
           claims=("memfbo.first_order_only",)),
    Result("memfbo.fig4", "figure", "§6.2, Fig. 4",
           "the memory cost of SimFBO increases dramatically with the number of local steps, "
           "whereas our MemFBO consistently maintains low memory usage", ("τ",),
           claims=("memfbo.memory_independent_of_tau",)),
    Result("memfbo.fig3", "figure", "§6.2, Fig. 3",
           "our method can achieve a faster convergence rate and a higher accuracy than "
           "second-order methods with subloops including FedNest, LFedNest, and AggITD", ("T",),
           reason="a figure comparison with FedNest, LFedNest and AggITD on a data hyper-cleaning task;"
                  " AggITD is not implemented, and no claim compares MemFBO with FedNest in rounds",
           gap="baseline"),
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
    claim_sweeps={"memfbo.second_moment_vs_sampled_clients": "m",
                  "memfbo.second_moment_vs_clients": "n",
                  "memfbo.sampling_floor_vs_sampled_clients": "m"},
    results=RESULTS)
