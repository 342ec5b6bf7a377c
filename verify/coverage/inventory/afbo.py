"""Li, Zhu, Gong, Mao & Zhou, WiOpt 2024: AFBO (Alg. 1) with APHE (Alg. 2).

Notation: ``m`` clients, all asynchronous (canonical ``n``); APHE truncates its series at
``U = m`` terms, so ``m`` is also the Neumann count (``N``) of ``b``; ``T`` outer rounds;
``K^t`` inner steps (``K``); ``E_i^{t,k}`` local iterations (``τ``); ``τ_i^t``, ``ρ_i^k`` the
outer and inner delays (``delay``).
"""

from __future__ import annotations

from ..model import Inventory, Result

_OTHERS = ("compares with SDBO, ADBO and Prometheus on MNIST and Covertype accuracy: those "
           "algorithms are outside the five papers and not implemented")

_MT = ("T at m = 4 (afbo.nonconvex_rate_T, at Cor 4.1's η = √(m/T)); n jointly with T by the "
       "(m, T) experiment (afbo.linear_speedup_m under bounded delays, afbo.linear_speedup_m_sync "
       "synchronous): at every T of its grid it runs m = 4, 8, 12, 16, 24, 32 at η = c√(m/T) and "
       "fits the corollary's own form a/√(mT) + b/(m√(mT)) + c/T over m, the form's lack of fit "
       "carried into the interval (Birge ratio); its finding is that the part more clients do "
       "not reduce, the bound's limit m → ∞, decays slower than O(1/T) (AFBO-R9, AFBO-R11). A "
       "sweep in m at one T alone could not refute the bound (its constant absorbs any bounded "
       "curve in m): the statement's dependence on m is tested as the form it gives, jointly "
       "with T")
RESULTS = (
    Result("afbo.thm4.1.b", "theorem", "Thm 4.1 (b), Alg. 2 APHE with U = m",
           r"b = \kappa_g l_{f,1}(1 - 1/\kappa_g)^N,\ N = U = m", ("N", "κ"),
           claims=("afbo.aphe_bias", "afbo.aphe_bias_series", "afbo.aphe_bias_vs_kappa")),
    Result("afbo.lemma4.1", "lemma", "Lemma 4.1, §IV.C",
           r"\mathbb{E}f(x^{t+1}) - \mathbb{E}f(x^t) \le (L_f\eta_t^2 - \frac{\eta_t}{2})"
           r"\mathbb{E}\|\bar H\|^2 - \frac{\eta_t}{2}\|\nabla f(x^t)\|^2 + \eta_tM_f^2\mathbb{E}"
           r"\|y^{t+1} - y^*(x^t)\|^2 + \eta_tb^2 + \frac{3L_f\eta_t^2}{m}(\hat D_f\sum_i"
           r"\tau_i^t + \hat\sigma_f + 4\hat D_f)", ("η", "delay", "n"),
           reason="a one-step inequality inside Thm 4.1's proof, in D̂_f and σ̂_f, which the text "
                  "leaves as bounds on unspecified moments (AFBO-R10). With every τ_i^t = 1 it is "
                  "FedMBO's Lemma 4 with σ̂_f in place of σ̃_f², and its b is stated as FedMBO's "
                  "Prop. 1 (κ_gl_{f,1}(1 − 1/κ_g)^N). On a quadratic the first-order part of the "
                  "difference of its sides is η(b² + M_f²E‖y^{t+1} − y*(x^t)‖² − ½E‖H̄ − "
                  "∇f‖²), as for fedmbo.lemma4. So it fails wherever the bias exceeds √2·b: "
                  "for APHE as written at a large m (afbo.aphe_bias, AFBO-L1), and for a linear "
                  "f (b = 0, FEDMBO-R5). "
                  "Under delays, its terms are the unspecified moments. No claim is built; the "
                  "claims test the theorem it feeds (afbo.strongly_convex_rate_theorem, "
                  "afbo.staleness_floor_vs_delay)", gap="reduces"),
    Result("afbo.lemma4.2", "lemma", "Lemma 4.2, §IV.C",
           r"\mathbb{E}\|y^{t+1} - y^*(x^t)\|^2 \le 4(\sigma_g^2 + \sigma_{g,1}^2)\sum_k"
           r"\beta_{t,k}^2 + \prod_k(1 - \beta_{t,k}\mu_g)\mathbb{E}\|y^t - y^*(x^t)\|^2",
           ("K", "η", "delay"),
           claims=("afbo.inner_loop_lemma42_vs_K", "afbo.inner_loop_lemma42_vs_step",
                   "afbo.inner_loop_lemma42_vs_delay"),
           reason="the lemma is stated for AFBO's inner loop, whose clients upload every ρ_M "
                  "inner steps at most (Assumption 4.6), with no ρ_M in the bound: K and β are "
                  "swept under BoundedDelay(3) (it holds), ρ_M under periodic uploads "
                  "(afbo.inner_loop_lemma42_vs_delay, a finding: stale steps overshoot once "
                  "ρβλ_max > 2, AFBO-L4)"),
    Result("afbo.thm4.1a", "theorem", "Thm 4.1(a) (strongly convex), §IV",
           r"\mathbb{E}[V^T] = (1 - \eta_t\mu_f)^T\mathbb{E}[V^0] + C\frac{1 - (1 - \eta_t"
           r"\mu_f)^{T-1}}{\eta_t\mu_f},\ C = \frac{2\eta_t}{\mu_f}b^2 + \frac{6\eta_t^2}{m}"
           r"(\hat D_f\sum_i\tau_i^t + \dots) + \dots + \frac{4L_fU_2(\sigma_g^2 + "
           r"\sigma_{g,1}^2)}{m\mu_fE^t}\sum_k\beta_{t,k}^2 + \dots",
           ("T", "η", "delay", "n", "N", "τ"), headline=True,
           claims=("afbo.strongly_convex_rate_theorem", "afbo.heterogeneous_local_iterations",
                   "afbo.unbiased_floor_vs_step", "afbo.strongly_convex_staleness_vs_delay",
                   "afbo.heavy_tailed_staleness_vs_delay", "afbo.inner_noise_vs_clients", "afbo.inner_noise_vs_local_iterations",
                   "afbo.bias_floor_vs_N"),
           sweeps={"afbo.unbiased_floor_vs_step": "η"},
           reason="tested in T at Cor 4.1's schedule, and through its T → ∞ limit C/(ημ_f) in η "
                  "(exponent 1 with β ∝ η whatever the constants, AFBO-R14; "
                  "afbo.unbiased_floor_vs_step) and in the mean delay (its delay part "
                  "6ηD̂_f(τ̄ − 1)/μ_f, exponent 1 in τ̄ − 1 whatever D̂_f, AFBO-R15; "
                  "afbo.strongly_convex_staleness_vs_delay under bounded delays, "
                  "afbo.heavy_tailed_staleness_vs_delay under §V's heavy-tailed ones, capped, "
                  "whose E[(τ − 1)²] grows 72-fold on the grid while their mean grows 6-fold); m and τ (the local iterations "
                  "E^t, AFBO-R16) through C's first term, the inner loop's variance, whose "
                  "1/(mE^t) is measured on one round from y*(x*) (afbo.inner_noise_vs_clients, "
                  "afbo.inner_noise_vs_local_iterations); N through C's 2b²/μ_f², the one part "
                  "left with exact oracles (afbo.bias_floor_vs_N). C's other terms carry σ̂_f, "
                  "U₁, U₂ and D̂_f, which the text does not pin down: their dependence on m has no "
                  "exponent the theorem fixes"),
    Result("afbo.thm4.1b", "theorem", "Thm 4.1(b) (nonconvex), §IV",
           r"\frac1T\sum_t\mathbb{E}\|\nabla f(x^t)\|^2 \le \frac{2}{\bar\eta T}[\mathbb{E}W^0"
           r" - \mathbb{E}W^*] + b^2 + \dots + \frac{1}{\bar\eta T}\sum_t(\sum_{i=1}^m"
           r"\tau_i^t + 4)\frac{3L_f\eta_t^2\hat D_f}{m}",
           ("T", "η", "delay", "n", "N", "K"), headline=True,
           claims=("afbo.staleness_floor_vs_delay", "afbo.nonconvex_rate_T",
                   "afbo.nonconvex_bias_floor_vs_N", "afbo.nonconvex_floor_vs_step",
                   "afbo.nonconvex_floor_vs_clients", "afbo.inner_noise_vs_inner_steps"),
           sweeps={"afbo.nonconvex_floor_vs_step": "η"},
           reason="tested in the delay (afbo.staleness_floor_vs_delay, with the theorem's whole right-"
                  "hand side stored as its metric thm41b_bound), in T at Cor 4.1's schedule "
                  "(afbo.nonconvex_rate_T), and from a minimiser (W⁰ = W*) one variable at a "
                  "time, the part of the bound that depends on it against the measured part "
                  "(AFBO-R17): N through b² with exact oracles (afbo.nonconvex_bias_floor_vs_N), "
                  "η and m on synchronous runs at a constant step (afbo.nonconvex_floor_vs_step,"
                  " afbo.nonconvex_floor_vs_clients). K at the level the proof argues from: its "
                  "part, 8(M_fU_2/L_y + ηM_f²(σ_g² + σ_{g,1}²))Kβ²/η, carries K only through "
                  "Σ_kβ² = Kβ², the inner loop's error of Lemma 4.2's noise part; at a fixed β "
                  "it grows as K while more inner steps only track y* better (an exponent ≤ 1 "
                  "would hold for any algorithm), so K is swept at Cor 4.1's coupling Kβ² fixed, "
                  "where the part is constant and that error, measured on one round from "
                  "y*(x*), must not grow (afbo.inner_noise_vs_inner_steps, AFBO-R18); the "
                  "theorem's own quantity, (1/T)Σ_t‖∇f(x^t)‖², is not swept in K"),
    Result("afbo.thm4.1b.sync", "remark", "Remark 2 (synchronous case of Thm 4.1(b))",
           r"\tau_i^t = 1: \frac{1}{\bar\eta T}\sum_t\frac{3(m+4)L_f\eta_t^2}{m}\hat D_f,"
           r"\ \text{which matches previous works}", ("n", "η"),
           claims=("afbo.nonconvex_floor_vs_step", "afbo.nonconvex_floor_vs_clients"),
           sweeps={"afbo.nonconvex_floor_vs_step": "η"},
           reason="synchronous runs from a minimiser at a constant step: the bound is O(η) "
                  "(afbo.nonconvex_floor_vs_step) and its part that depends on m falls as 1/m, "
                  "(m + 4)/m − 1 = 4/m with the other 1/m terms (afbo.nonconvex_floor_vs_clients, "
                  "AFBO-R17)"),
    Result("afbo.rem1.vanishing", "remark", "Remark 1 (strongly convex)",
           "a vanishing term that decreases and goes to 0 as the number of rounds T increases, "
           "and the non-vanishing term ... all components are controlled by stepsize (η_t), "
           "which means it is unbiased", ("T", "η"),
           claims=("afbo.no_bias_bounded_delays", "afbo.strongly_convex_floor",
                   "afbo.unbiased_floor_vs_step"),
           sweeps={"afbo.unbiased_floor_vs_step": "η"}),
    Result("afbo.rem1.terms", "remark", "Remark 1 (nonconvex)",
           "the first non-vanishing term depends on the Hessian inverse approximation accuracy "
           "... the third non-vanishing term depends on SGD variances (σ̂_f) and the total "
           "number of clients (m)", ("N", "σ", "n"),
           claims=("afbo.nonconvex_bias_floor_vs_N", "afbo.nonconvex_floor_vs_clients"),
           reason="the N-term is b², whose rate the noise-free floor follows "
                  "(afbo.nonconvex_bias_floor_vs_N); the m-dependence of the σ̂_f-terms is part "
                  "of afbo.nonconvex_floor_vs_clients (AFBO-R17); σ is not swept: the rounds are "
                  "linear in the noise, so the floor is affine in σ² for any algorithm and a "
                  "σ-sweep could not tell a correct implementation from a wrong one",
           gap="cannot_fail"),
    Result("afbo.rem2.delay", "remark", "Remark 2 (delay)",
           "the upper bound of the convergence rate is increasing as the average outer loop "
           "delay for all rounds and all clients increases ... only the last term involves the "
           "asynchronous delay", ("delay",),
           claims=("afbo.staleness_floor_vs_delay", "afbo.heavy_tailed_staleness_vs_delay")),
    Result("afbo.rem2.inner", "remark", "Remark 2 (inner loops)",
           "if we run more inner loops, then the error of the first term will decrease",
           ("K",), claims=("afbo.inner_noise_vs_inner_steps",),
           reason="the first term is C's 4L_fU_2(σ_g² + σ_{g,1}²)Σ_kβ²/(mμ_fE^t), the inner loop's "
                  "variance (AFBO-R16), which grows with K at a fixed β: read at Cor 4.1's "
                  "coupling Kβ² fixed (AFBO-R18), where the term is constant in K and the "
                  "measured error must not grow (afbo.inner_noise_vs_inner_steps, exponent ≤ 0 "
                  "with no tolerance; its mutant step_not_coupled, β fixed, grows)"),
    Result("afbo.rem2.clients", "remark", "Remark 2 (clients)",
           "this error term ... increases as the SGD variance increases and decreases as the "
           "total number of clients increases", ("n", "σ"),
           claims=("afbo.inner_noise_vs_clients", "afbo.nonconvex_floor_vs_clients"),
           reason="the term is Thm 4.1(a)'s inner-loop variance 4L_fU_2(σ_g² + σ_{g,1}²)"
                  "Σ_kβ²/(mμ_fE^t) (AFBO-R16): its decrease in m is measured as the exponent −1 "
                  "(afbo.inner_noise_vs_clients); σ is not swept: the rounds are linear in the "
                  "noise, so the variance is exactly proportional to σ² for any algorithm and "
                  "a σ-sweep could not tell a correct implementation from a wrong one",
           gap="cannot_fail"),
    Result("afbo.rem2.heterogeneity", "remark", "Remark 2 (heterogeneity)",
           "the lower non-IID heterogeneity can decrease the error bound of this term", ("δ",),
           reason="a statement about the bound: C's first term carries σ_g², which falls with "
                  "the heterogeneity by its formula. The error that term bounds, the inner "
                  "loop's variance (afbo.inner_noise_vs_clients), does not depend on the "
                  "clients' gradient offsets at all: they cancel in the server's table of every "
                  "client's latest G_i (AFBO-L5, tested to round-off). The spread of the "
                  "curvature changes the mean Hessian and the contraction, for which the "
                  "statement gives no law. A sweep could not contradict the statement, so none "
                  "is built", gap="cannot_fail"),
    Result("afbo.rem2.step", "remark", "Remark 2 (step size under delay)",
           "when the asynchronous delay (τ_i^t) increases, we need to choose a smaller step size "
           "to keep a similar convergence bound", ("delay", "η"),
           claims=("afbo.strongly_convex_staleness_vs_delay",),
           reason="a design advice resting on the delay term being O(ητ̄): its growth in τ̄ at a "
                  "fixed η is tested (afbo.strongly_convex_staleness_vs_delay: exponent ≤ 1 in "
                  "τ̄ − 1, and afbo.staleness_floor_vs_delay for Thm 4.1(b)); the sweep at "
                  "η = η₀/τ̄ is not built: there the bound's delay part is 6η₀D̂_f(1 − 1/τ̄)/μ_f, "
                  "which rises to a constant with a local exponent in τ̄ that vanishes only as "
                  "1/τ̄, so a finite sweep's slope depends on where its window starts, and no "
                  "window follows from the statement (D̂_f is unspecified)", gap="unspecified"),
    Result("afbo.cor4.1.sc", "corollary", "Cor 4.1 (strongly convex)",
           r"K^t\beta_t^2 \le 1/T,\ N = O(\log T),\ \eta_t = \sqrt{1/T} \Rightarrow "
           r"\mathbb{E}\|x^t - x^*\|^2 = O(1/T)", ("T",), headline=True,
           claims=("afbo.strongly_convex_rate", "afbo.strongly_convex_rate_random_truncation")),
    Result("afbo.cor4.1.sc_y", "corollary", "Cor 4.1 (strongly convex, lower level)",
           r"\mathbb{E}\|y^*(x^t) - y^t\|^2 = O(1/T)", ("T",), headline=True,
           claims=("afbo.strongly_convex_lower_level_rate",)),
    Result("afbo.cor4.1.nc", "corollary", "Cor 4.1 (nonconvex)",
           r"\eta_t = \sqrt{m/T} \Rightarrow \frac1T\sum_t\mathbb{E}\|\nabla f(x^t)\|^2 \le "
           r"O\Big(\frac{1}{\sqrt{mT}} + \frac{1}{m\sqrt{mT}} + \frac1T\Big)", ("T", "n"),
           headline=True,
           claims=("afbo.nonconvex_rate_T", "afbo.linear_speedup_m",
                   "afbo.linear_speedup_m_sync"),
           reason=_MT),
    Result("afbo.rem3", "remark", "Remark 3",
           "to achieve an ε-optimal solution for both the lower-level and upper-level problems "
           "for the convex case, the sample complexity of AFBO is O(ε⁻²)", ("ε",),
           headline=True,
           # AFBO-R13: ε-optimal read on the norms, so that O(ε⁻²) samples is Cor 4.1's O(1/T)
           # at O(1) samples per round; the T-sweeps at Cor 4.1's schedule walk ε
           claims=("afbo.strongly_convex_rate_random_truncation",
                   "afbo.strongly_convex_lower_level_rate"),
           sweeps={"afbo.strongly_convex_rate_random_truncation": "ε",
                   "afbo.strongly_convex_lower_level_rate": "ε"}),
    Result("afbo.rem4.speedup", "remark", "Remark 4 (linear speedup)",
           "the major term in the upper bound O(1/√(mT)), which shows it achieves a linear "
           "speedup", ("n", "T"), headline=True,
           claims=("afbo.linear_speedup_m", "afbo.linear_speedup_m_sync"),
           reason="as afbo.cor4.1.nc (" + _MT + ")"),
    Result("afbo.rem4.vs_fednest", "remark", "Remark 4 (comparison with FedNest)",
           "compared with FedNest, our complexity has the same dependence on ε, but a better "
           "dependence on m due to the linear speedup", ("n", "ε"), headline=True,
           claims=("afbo.nonconvex_rate_T", "fednest.bilevel_rate", "afbo.linear_speedup_m"),
           sweeps={"afbo.nonconvex_rate_T": "ε", "fednest.bilevel_rate": "ε"},
           reason="the same dependence on ε: each exponent at its own paper's schedule "
                  "(afbo.nonconvex_rate_T, T = O(ε⁻²) at m = 4; fednest.bilevel_rate, K = "
                  "O(ε⁻²)), as MemFBO's comparison (MEMFBO-R6); the better dependence on m is "
                  "AFBO's speedup, the (m, T) experiment's subject (afbo.linear_speedup_m, a "
                  "finding: the part that more clients do not reduce decays slower than the "
                  "corollary's 1/T)"),
    Result("afbo.rem4.matches", "remark", "Remark 4 (comparison with asynchronous FL)",
           "asynchronous FL algorithms under the non-convex setting can achieve a convergence "
           "rate of O(1/√T) (e.g., AFA-CD); as our asynchronous algorithm can reach O(1/√(mT)), "
           "it matches that of the existing asynchronous algorithms", ("T",), checkable=False,
           why_not="a comparison with other papers' rates (AFA-CD), not a property of a run"),
    Result("afbo.table1", "table", "Table I",
           r"\text{AFBO: asynchronous outer and inner loops, convergence rate } "
           r"O(\epsilon^{-2}n^{-1}),\ \text{linear speedup}", ("ε", "n"),
           claims=("afbo.nonconvex_rate_T", "afbo.linear_speedup_m"),
           sweeps={"afbo.nonconvex_rate_T": "ε"},
           reason="the table restates Cor 4.1 (O(ε⁻²n⁻¹), linear speedup): ε is walked by "
                  "afbo.nonconvex_rate_T (Cor 4.1's schedule in T at m = 4, T = O(ε⁻²)); n as "
                  "for afbo.cor4.1.nc, by the (m, T) experiment (afbo.linear_speedup_m)"),
    Result("afbo.fig1_3", "figure", "§V.A–B, Figs. 1–3",
           "AFBO achieves the best performance among all the schemes", ("T",),
           checkable=False, why_not=_OTHERS),
    Result("afbo.fig4", "figure", "§V.B, Fig. 4 (stragglers)",
           "at most five stragglers whose mean delay is five times the normal clients' ... "
           "[AFBO keeps its performance]", ("delay",),
           claims=("afbo.straggler_staleness_vs_slowdown",),
           reason="the figure's MNIST accuracy is not reproduced; 'keeps its performance' is read "
                  "through Thm 4.1(a)'s delay term (AFBO-R15): with two stragglers of four "
                  "uploading every s rounds, AFBO's stationary error grows at most linearly in "
                  "s − 1 (afbo.straggler_staleness_vs_slowdown, s up to 17; "
                  "afbo.no_bias_bounded_delays contrasts naive aggregation under stragglers at "
                  "one delay)"),
    Result("afbo.fig5_6.inner_delay", "figure", "§V.C, Figs. 5–6",
           "all algorithms except AFBO suffer an obvious convergence degeneration as there "
           "exists an inner loop asynchronous delay; synchronous algorithms (e.g. FedNest) "
           "degenerate more than AFBO", ("delay",),
           reason="a figure statement about inner-loop delays, in wall-clock time against ADBO, SDBO "
                  "and Prometheus, which are not implemented; the implementation runs AFBO's inner "
                  "delays (AFBO-I3; the Lemma 4.2 claims run under them), but AFBO's own \"no "
                  "obvious degeneration\" has no law to hold a sweep to: Thm 4.1 has no "
                  "inner-delay term (Remark 2: only the outer delay's), and a bound constant in a "
                  "variable is not contradicted by a bounded growth in it; not built",
           gap="baseline"),
    Result("afbo.fig5.non_iid", "figure", "§V.C, Fig. 5",
           "convergence degeneration is much more obvious in the non-IID MNIST dataset than in "
           "the IID MNIST dataset", ("delay", "δ"),
           reason="a figure statement about MNIST. On a quadratic the clients' gradient offsets "
                  "(the non-IID part of the data at a fixed curvature) cancel in AFBO's tables "
                  "whatever the delays (AFBO-L5): the trajectory under delays is the same for "
                  "every spread of the offsets, so the degeneration cannot grow with them. The "
                  "figure's effect needs a non-linear model, where stale gradients of different "
                  "clients are taken at different points of a curved loss. The spread of the "
                  "curvature enters through the clients' stale Jacobians, with no law in the "
                  "statement. The naive aggregation over the arrived clients does depend on the "
                  "offsets, and afbo.no_bias_bounded_delays contrasts it. Not built",
           gap="cannot_fail"),
    Result("afbo.fig7_8", "figure", "§V.D, Figs. 7–8",
           "AFL performs worse in FBO tasks ... the convergence rates and speeds of AFBO and "
           "AFL are similar", ("T",), checkable=False,
           why_not="AFL is outside the five papers and not implemented"),
)

#: AFBO's symbols in the claims' ``variable``: ``T`` rounds, ``m`` clients, ``τ̄ − 1`` the
#: excess mean delay, ``E^t`` the local iterations, ``N`` the Neumann terms.  The APHE claims sweep ``m`` as the series length ``U = m`` (``N``).
INVENTORY = Inventory(
    key="afbo", paper="AFBO", citation="Li, Zhu, Gong, Mao & Zhou, WiOpt 2024",
    notation={"T": "T", "m": "n", r"\bar\tau - 1": "delay", "s - 1": "delay", r"\rho_M": "delay",
              r"\kappa_g": "κ", "K": "K", r"\beta/\beta_{\max}": "η", "E^t": "τ", "N": "N"},
    claim_sweeps={"afbo.aphe_bias": "N", "afbo.aphe_bias_series": "N"},
    # the (m, T) experiment: m ∈ M_SPEEDUP at every T of the grid (afbo/speedup.py)
    inner_sweeps={"afbo.linear_speedup_m": "n", "afbo.linear_speedup_m_sync": "n"},
    results=RESULTS)
