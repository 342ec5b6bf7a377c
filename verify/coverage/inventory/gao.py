"""Gao, arXiv preprint 2022 (arXiv:2204.13299): LocalBSGM (Alg. 1) and LocalBSGVRM (Alg. 2).

Notation: ``K`` devices (all take part: canonical ``n``), ``p`` the averaging period (``τ``),
``Q`` the truncation of Ĥ (``N``), ``A`` the averaged quantity of eq. (3.7).  The paper has no
experiments.
"""

from __future__ import annotations

from ..model import Inventory, Result

_KAPPA = ("the κ⁵ of T = O(κ⁵/(Kε²)) comes from Thm 1's step constants (ρ₁ = O(1/κ⁵), "
          "Remark 1): at those constants one sweep point needs 10⁵–10⁶ iterations (GAO-R7), "
          "out of reach on this machine")
_KAPPA_SWEPT = ("κ is swept by gao.kappa_localbsgm_iterations (κ = 2.5–6, T ∝ κ⁵, "
                "Q ∝ κ log 1/ε, Remark 1's ρ₁ ∝ κ⁻⁵, ρ₂ ∝ κ⁻² with constants fixed at "
                "κ = 2.5) from the solution, which tests the κ-growth of Thm 1's noise and "
                "truncation terms only: whether κ⁵ iterations suffice from a far start needs "
                "Thm 1's own step constants, 10⁵–10⁶ iterations per sweep point (GAO-R7), out "
                "of reach on this machine")
_KAPPA_VR_SWEPT = ("κ is swept by gao.kappa_localbsgvrm_iterations (κ = 2.5–8, T ∝ κ³, "
                   "Q ∝ κ log 1/ε, Thm 2's α ∝ L̂², η_t ∝ 1/L̂, Remark 3's ρ₁ ∝ κ⁻² with "
                   "constants fixed at κ = 2.5) from the solution, which tests the κ-growth of "
                   "Thm 2's noise and truncation terms only: whether κ³ iterations suffice "
                   "from a far start needs Thm 2's own step constants (ρ₂ ≤ μ/19720), "
                   "10⁵–10⁶ iterations per sweep point (GAO-R7), out of reach on this machine")
_ROUNDS_KAPPA = ("; the period p = O(1/(Kε^{1/2})) of the corollaries has no κ, so the κ-sweep "
                 "runs at one p (2): its T(κ) iterations, with the corollary's κ-power, are "
                 "T(κ)/p communication rounds with the same power, counted by the ledger "
                 "('rounds' metric)")
_HVP = ("κ is swept by gao.hvp_per_estimate_vs_kappa (a finding: the HVPs per estimate that "
        "the bias needs grow like κ, so the HVP count of the corollaries' schedules has one "
        "power of κ more than stated, GAO-R10); ε and n by the iteration and speedup claims, "
        "whose ledgers show the calls per iteration constant in ε (HVPs ∝ Q(ε) = O(log 1/ε), "
        "the log Õ drops) and the total calls the same at every K on the speedup schedule")
_KAPPA_VR = ("the κ³ of T = O(κ³/(Kε^{3/2})) comes from Thm 2's step constants (ρ₁ = O(1/κ²), "
             "ρ₂ ≤ μ/19720, Remark 3): at those constants one sweep point needs 10⁵–10⁶ "
             "iterations (GAO-R7), out of reach on this machine")

RESULTS = (
    Result("gao.eq3.2", "section", "§3, eq. (3.2) and Thm 1 (Δ_Q)",
           r"\Delta_Q = (1-\theta\mu)^{Q+1} L_0 L_1/\mu",
           ("N",), claims=("gao.neumann_bias_vs_Q", "gao.neumann_bias_bounded")),
    Result("gao.thm1", "theorem", "Thm 1 (LocalBSGM)",
           r"\frac1T\sum_t(\|\nabla\Phi(\bar x_t)\|^2 + \tilde L^2\|\bar y_t - y^*(\bar x_t)\|^2)"
           r" \le \frac{2(\Phi(x_0)-\Phi_*)}{\eta\rho_1T} + \dots + \frac{4\alpha\eta\sigma^2}{K}"
           r" + 4\Delta_Q^2 + 24\alpha^2p^2\eta^2(\rho_1^2+\rho_2^2)(\dots)(2G^2+3\delta^2)"
           r" + \dots",
           ("T", "n", "τ", "η", "N", "σ", "δ"), headline=True,
           claims=("gao.localbsgm_heterogeneous_limit", "gao.localbsgm_limit_vs_Q",
                   "gao.localbsgm_limit_vs_heterogeneity", "gao.localbsgm_bound_vs_T",
                   "gao.localbsgm_limit_vs_noise", "gao.localbsgm_limit_vs_devices",
                   "gao.localbsgm_limit_vs_period"),
           sweeps={"gao.localbsgm_heterogeneous_limit": "η"},
           reason="the bound itself, inside its step conditions and in closed form (LocalBSGM is "
                  "affine on quadratics): in its T → ∞ limit, where it is tightest, in η, Q and "
                  "δ with exact oracles; in T, A_T against the whole right-hand side B(T) from "
                  "x*, y*(x*) for T up to 10¹² (gao.localbsgm_bound_vs_T); in σ and K, the limit "
                  "of E A_T under additive oracle noise (a Lyapunov equation) against the "
                  "limit's noise terms ησ²/K, K by tiling the devices "
                  "(gao.localbsgm_limit_vs_noise, gao.localbsgm_limit_vs_devices); in p, the "
                  "limits at periods up to 128 (gao.localbsgm_limit_vs_period). Each sweep "
                  "runs from where the bound holds to where it fails; the rates in T, n, ε "
                  "of the corollary are tested through Cor 1"),
    Result("gao.rem1", "remark", "Remark 1",
           r"\rho_1 = O(1/\kappa^5),\quad \rho_2 = O(1/\kappa^2)", ("κ",), checkable=False,
           why_not="a property of Thm 1's step-size conditions, which use the undefined L̂, L̃ "
                   "(GAO-R1): nothing a run measures"),
    Result("gao.cor1", "corollary", "Cor 1 and Remark 2 (iteration complexity)",
           r"T = O(\kappa^5/(K\epsilon^2)),\ p = O(1/(K\epsilon^{1/2})),\ \eta = O(K\epsilon),"
           r"\ Q = O(\log(1/\epsilon)) \Rightarrow A \le \epsilon",
           ("ε", "n", "κ"), headline=True,
           claims=("gao.localbsgm_iterations_vs_epsilon", "gao.localbsgm_linear_speedup",
                   "gao.localbsgm_heterogeneous_floor", "gao.kappa_localbsgm_iterations"),
           sweeps={"gao.localbsgm_iterations_vs_epsilon": "ε",
                   "gao.localbsgm_heterogeneous_floor": "ε",
                   "gao.kappa_localbsgm_iterations": "κ"},
           reason=_KAPPA_SWEPT),
    Result("gao.rem2.speedup", "remark", "Remark 2 (linear speedup)",
           "the iteration complexity O(κ⁵/(Kε²)) indicates that LocalBSGM can achieve linear "
           "speedup with respect to the number of devices", ("n",), headline=True,
           claims=("gao.localbsgm_linear_speedup",)),
    Result("gao.rem2.oracle", "remark", "Remark 2 (gradient, Jacobian- and Hessian-vector "
           "complexity)",
           r"\text{gradient, JVP: } O(\kappa^5/(K\epsilon^2));\ \text{HVP: } "
           r"\tilde O(\kappa^5/(K\epsilon^2))", ("ε", "n", "κ"), headline=True,
           claims=("gao.localbsgm_iterations_vs_epsilon", "gao.localbsgm_linear_speedup",
                   "gao.hvp_per_estimate_vs_kappa"),
           sweeps={"gao.localbsgm_iterations_vs_epsilon": "ε"}, reason=_HVP),
    Result("gao.rem2.communication", "remark", "Remark 2 (communication complexity)",
           r"T/p = O(\kappa^5/\epsilon^{3/2})", ("ε", "κ"), headline=True,
           claims=("gao.localbsgm_communication_vs_epsilon", "gao.kappa_localbsgm_iterations"),
           sweeps={"gao.localbsgm_communication_vs_epsilon": "ε",
                   "gao.kappa_localbsgm_iterations": "κ"},
           reason=_KAPPA_SWEPT + _ROUNDS_KAPPA),
    Result("gao.rem2.single_machine", "remark", "Remark 2 (K = 1)",
           "when K = 1, these complexities can match those of the algorithms for the "
           "single-machine setting without variance reduction", ("n",), checkable=False,
           why_not="a comparison with other papers' bounds ([12], [1]), not a property of a "
                   "run"),
    Result("gao.thm2", "theorem", "Thm 2 (LocalBSGVRM), eq. (3.9)",
           r"\frac1T\sum_t(\dots) \le \Big(\frac pT + \frac{1}{K^{2/3}T^{2/3}}\Big)\Big["
           r"\frac{2(\Phi(x_1)-\Phi_*)}{\rho_1} + 4G^2 + \dots + 32\sigma^2\ln(T+1) + "
           r"4\Delta_Q^2K^{2/3}(T+1)^{2/3} + \dots\delta^2\ln(T+1)\Big]",
           ("T", "n", "τ", "N", "σ", "δ"), headline=True,
           claims=("gao.localbsgvrm_limit_vs_Q", "gao.localbsgvrm_limit_vs_heterogeneity"),
           reason="the bound is tested where it is tightest, as T → ∞ inside Thm 2's own steps "
                  "(Q and δ swept): its limit is 4Δ_Q² for every K, p, σ and admissible step "
                  "(every other term carries p/T, (KT)^{-2/3} or (KT)^{-2/3}ln(T + 1)), and the "
                  "mean iterate follows the exact iteration (the noise is additive and the "
                  "iteration linear), so E A_T's limit is at least ‖∇Φ(x̃)‖² at every K, p and "
                  "σ: sweeping them cannot change the verdict. A T-sweep of runs inside Thm 2's "
                  "ρ₂ ≤ μ/19720 (GAO-R7) would need about 10⁹ iterations before x̄ leaves x*; "
                  "the rates in T, n, ε are tested through Cor 2 at practical constants",
           gap="cost"),
    Result("gao.rem3", "remark", "Remark 3",
           r"\rho_1 = O(1/\kappa^2),\quad \tilde L^2/\mu^2 = O(\kappa^3)", ("κ",),
           checkable=False,
           why_not="a property of Thm 2's step-size conditions with the undefined L̃ (GAO-R1)"),
    Result("gao.cor2", "corollary", "Cor 2 and Remark 4 (iteration complexity)",
           r"\alpha = \beta = O(\hat L^2/K^2),\ T = O(\kappa^3/(K\epsilon^{3/2})),\ "
           r"p = O(1/(K\epsilon^{1/2})),\ Q = O(\log(1/\epsilon)) \Rightarrow A \le \epsilon",
           ("ε", "n", "κ"), headline=True,
           claims=("gao.localbsgvrm_iterations_vs_epsilon", "gao.localbsgvrm_linear_speedup",
                   "gao.localbsgvrm_heterogeneous_floor", "gao.kappa_localbsgvrm_iterations"),
           sweeps={"gao.localbsgvrm_iterations_vs_epsilon": "ε",
                   "gao.localbsgvrm_heterogeneous_floor": "ε",
                   "gao.kappa_localbsgvrm_iterations": "κ"},
           reason=_KAPPA_VR_SWEPT),
    Result("gao.rem4.speedup", "remark", "Remark 4 (linear speedup)",
           "this iteration complexity also indicates that LocalBSGVRM can achieve linear "
           "speedup with respect to the number of devices", ("n",), headline=True,
           claims=("gao.localbsgvrm_linear_speedup",)),
    Result("gao.rem4.oracle", "remark", "Remark 4 (gradient, Jacobian- and Hessian-vector "
           "complexity)",
           r"\text{gradient, JVP: } O(\kappa^3/(K\epsilon^{3/2}));\ \text{HVP: } "
           r"\tilde O(\kappa^3/(K\epsilon^{3/2}))", ("ε", "n", "κ"), headline=True,
           claims=("gao.localbsgvrm_iterations_vs_epsilon", "gao.localbsgvrm_linear_speedup",
                   "gao.hvp_per_estimate_vs_kappa"),
           sweeps={"gao.localbsgvrm_iterations_vs_epsilon": "ε"}, reason=_HVP),
    Result("gao.rem4.communication", "remark", "Remark 4 (communication complexity)",
           r"T/p = O(\kappa^3/\epsilon)", ("ε", "κ"), headline=True,
           claims=("gao.localbsgvrm_communication_vs_epsilon",
                   "gao.kappa_localbsgvrm_iterations"),
           sweeps={"gao.localbsgvrm_communication_vs_epsilon": "ε",
                   "gao.kappa_localbsgvrm_iterations": "κ"},
           reason=_KAPPA_VR_SWEPT + _ROUNDS_KAPPA),
    Result("gao.rem4.vs_alg1", "remark", "Remark 4 and Cor 2 (comparison with Alg. 1)",
           r"\text{LocalBSGVRM: } T/p = O(\kappa^3/\epsilon)\ \text{vs LocalBSGM: } "
           r"O(\kappa^5/\epsilon^{3/2})", ("ε", "κ"), headline=True,
           claims=("gao.vrm_beats_m", "gao.kappa_localbsgvrm_iterations",
                   "gao.kappa_localbsgm_iterations"),
           sweeps={"gao.kappa_localbsgvrm_iterations": "κ",
                   "gao.kappa_localbsgm_iterations": "κ"},
           reason=_KAPPA_VR_SWEPT),
    Result("gao.rem4.single_machine", "remark", "Remark 4 (K = 1)",
           "when K = 1, these sample complexities match those of the methods for "
           "single-machine settings", ("n",), checkable=False,
           why_not="a comparison with other papers' bounds ([17], [8], [13]), not a property "
                   "of a run"),
)

#: Gao's symbols in the claims' ``variable``: ``K`` devices, ``Q`` truncation, ``T/p`` rounds
#: along Cor 1/2's schedule (``T(ε)/p(ε)``: the sweep walks ε), ``1/ε`` target accuracy, ``h``
#: the instance's heterogeneity (A4's ``δ`` grows with it).
INVENTORY = Inventory(
    key="gao", paper="Gao 2022", citation="Gao, arXiv preprint 2022 (arXiv:2204.13299)",
    notation={"T": "T", "K": "n", "Q": "N", "T/p": "ε", r"1/\epsilon": "ε", "s": "σ", "p": "τ",
              r"\kappa": "κ", "h": "δ"},
    results=RESULTS)
