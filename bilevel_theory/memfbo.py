"""MemFBO — Yang, Xiao, Ma & Ji, "First-Order Federated Bilevel Learning", AAAI 2025
(readings: ``docs/papers/memfbo.md``, ids ``MEMFBO-R*`` / ``MEMFBO-I*``).

Problem:
    ``min_x Φ(x) = F(x, y*(x))``, ``y*(x) = argmin_y G(x, y)``, ``F = (1/n)Σf_i``,
    ``G = (1/n)Σg_i``, through the penalty (Lagrangian) reformulation
    ``min_{x,y} max_z L(x, y, z) = F(x, y) + λ(G(x, y) − G(x, z))``; its value function
    ``L*_λ(x) = min_y max_z L`` has ``∇L*_λ(x) = ∇ₓf(x, y_λ) + λ(∇ₓg(x, y_λ) − ∇ₓg(x, y*))``
    with ``y_λ(x) = argmin_y F + λG`` (MEMFBO-R2; :func:`penalty_gradient`, exact on a
    quadratic).

Algorithm (Alg. 1, eqs. 6–9), one communication round per iteration ``t``:
    the server broadcasts ``(x^t, y^t, z^t)``; ``C_t`` of ``P`` clients is sampled **without
    replacement**; each ``i ∈ C_t`` runs ``τ`` simultaneous first-order local steps

    * ``z ← z − η_z ∇_y g_i(x, z; ζ)``,
    * ``y ← y − η_y (∇_y f_i(x, y; ψ) + λ∇_y g_i(x, y; ψ))``,
    * ``x ← x − η_x (∇ₓf_i(x, y; ξ) + λ(∇ₓg_i(x, y; ξ) − ∇ₓg_i(x, z; ξ)))`` — the same
      ``ξ`` in both ``g_i`` terms (the stochastic Lagrangian ``L_i(x, y, z; ξ)``, via
      ``oracle.pair``),

    keeps the normalized sums ``h_{·,i} = (1/τ) Σ_k`` of these directions (MEMFBO-I1) and
    uploads the three vectors; the server averages them over ``C_t`` and steps
    ``z⁺ = z − γ_z h_z``, ``y⁺ = y − γ_y h_y``, ``x⁺ = x − γ_x h_x``.  No Hessian- or
    Jacobian-vector product anywhere; 6 gradient evaluations per local step per client.
    The step sizes are named as in MEMFBO-R1.

Theoretical guarantee (upper bounds; the appendix is unavailable):
    ``‖∇L*_λ − ∇Φ‖ = O(1/λ)`` (§3.2 / §4), so any method that finds a stationary point of
    ``L*_λ`` stops at ``‖∇Φ‖² = O(1/λ²)`` (here: the exact fixed point
    :func:`penalty_stationary_point`).  Cor. 5.12: rounds ``T = O(P^{−1}ε^{−3.5})`` under
    partial participation, ``O(ε^{−1.5})`` under full participation (with
    ``τ = O(P^{−1}T^{4/3})``), linear speedup in ``P`` (MEMFBO-R3).  Rates reconstructed in
    MEMFBO-I3 (``O((PT)^{−2/7})`` partial with ``λ = Θ((PT)^{1/7})``,
    ``O((PτT)^{−2/7} + T^{−2/3})`` full with ``λ = Θ(T^{1/3})``: :func:`inferred_penalty`,
    MEMFBO-I4).  Prop. 5.8 bounds the client drift ``Δ_y^t``; every round records
    ``Δ_x^t, Δ_y^t, Δ_z^t`` (``trace.extras["drift_x"|"drift_y"|"drift_z"]``).

Step sizes (eqs. 47/48 are unavailable; MEMFBO-I2):
    ``γ_y = 1/(ℓ_{f,1} + λℓ_{g,1})``, ``γ_z = 1/ℓ_{g,1}``, ``γ_x = min{1/(2L_Φ), λγ_y/2}`` and
    local steps ``η = γ/τ`` (the ``τ`` local steps then add up to one server step).

Args (hyperparameters):
    penalty (λ, default 10), local_steps (τ, default 5), sampled_clients (P, default
    ``min(n, 10)``; sampling is always without replacement), eta_x, eta_y, eta_z (local steps,
    default ``γ/τ``), gamma_x, gamma_y, gamma_z (server steps, defaults above; each a float or
    a callable of the round ``t``), x0, y0, z0 (``z0`` defaults to ``y0``).

Returns:
    a :class:`~bilevel_theory.trace.Trace`; ``y`` is the ``y`` iterate (it tracks
    ``y_λ(x)``, not ``y*(x)``: ``inner_error`` is ``O(1/λ²)`` at best);
    ``trace.extras["z"]``: ``(rounds, R, dim_y)`` the ``z`` iterates (they track ``y*(x)``);
    ``trace.extras["drift_v"]``: ``(rounds, R)`` the drift ``Δ_v^t`` of Prop. 5.8, the mean
    over the participating clients of ``(1/τ)Σ_k ‖v_i^{t,k} − v^t‖²``.
    Per-client memory (``Ledger.state_bytes``): measured from the arrays a client keeps
    across its local steps (:meth:`MemFBO.client_buffers`: ``x, y, z`` and the three sums).

Example:
    >>> from bilevel_theory.problems import QuadraticBilevel
    >>> from bilevel_theory import run
    >>> prob = QuadraticBilevel.random(clients=10, dim_x=3, dim_y=3, kappa=5, seed=0)
    >>> trace = run("memfbo", prob, rounds=300, replicates=2, seed=0, sampled_clients=10)
    >>> bool(trace.stationarity[:, -1].mean() < 1e-2 * trace.stationarity[:, 0].mean())
    True
"""

from __future__ import annotations

import numpy as np

from bilevel_theory.problems.validation import check_real

from .algorithm import Algorithm, Context, as_schedule, start_vector

# ---------------------------------------------------------------------------------- closed forms


def _penalty_system(problem, lam: float):
    """``(S + λA)`` and its check: ``F + λG`` must be strongly convex in ``y``."""
    lam = check_real("lam", lam, minimum=0.0, strict_minimum=True)
    C = problem.host.closed_form
    M = C.S + lam * C.A
    M = 0.5 * (M + M.T)
    low = float(np.linalg.eigvalsh(M).min())
    if low <= 0.0:
        raise ValueError(f"`lam` must make f + λg strongly convex in y (λ_min(S + λA) > 0), got "
                         f"λ = {lam} with λ_min = {low:.3g}; increase `lam`")
    return C, M, lam


def penalty_y(problem, x, lam: float) -> np.ndarray:
    """``y_λ(x) = argmin_y F(x, y) + λG(x, y) = (S + λA)⁻¹(λ(Bx + c) − Rᵀx − q)``."""
    C, M, lam = _penalty_system(problem, lam)
    x = np.asarray(x, dtype=float)
    rhs = lam * (x @ C.B.T + C.c) - x @ C.R - C.q
    return np.linalg.solve(M, rhs[..., None])[..., 0]


def penalty_gradient(problem, x, lam: float) -> np.ndarray:
    """Exact ``∇L*_λ(x) = ∇ₓf(x, y_λ) + λ(∇ₓg(x, y_λ) − ∇ₓg(x, y*))`` on a quadratic
    (``∇ₓg(x, y) = Gₓₓx + e − Bᵀy``, so the bracket is ``−Bᵀ(y_λ − y*)``); ``x`` may carry
    batch axes.  ``‖∇L*_λ − ∇Φ‖ = O(1/λ)`` exactly (slope −1 in ``λ``; Yang et al., AAAI 2025, §4)."""
    h = problem.host
    x = np.asarray(x, dtype=float)
    if x.shape[-1:] != (h.dim_x,):
        raise ValueError(f"`x` must have last dimension {h.dim_x}, got shape {x.shape}")
    C, _, lam = _penalty_system(h, lam)
    y_lam = penalty_y(h, x, lam)
    y_star = np.asarray(h.y_star(x))
    grad_x_f = x @ C.P + y_lam @ C.R.T + C.p
    return grad_x_f - lam * (y_lam - y_star) @ C.B


def penalty_stationary_point(problem, lam: float) -> tuple[np.ndarray, float]:
    """The zero ``x_λ`` of ``∇L*_λ`` (affine in ``x``) and the floor ``‖∇Φ(x_λ)‖²``: the fixed
    point of MemFBO with exact gradients, full participation and ``τ = 1``, where ``z = y*``,
    ``y = y_λ`` and ``h_x = ∇L*_λ(x) = 0``."""
    h = problem.host
    pts = np.vstack([np.zeros(h.dim_x), np.eye(h.dim_x)])
    D = penalty_gradient(h, pts, lam)
    x_lam = np.linalg.solve((D[1:] - D[0]).T, -D[0])
    return x_lam, float((np.asarray(h.hypergradient(x_lam)) ** 2).sum())


def inferred_penalty(rounds: int, sampled_clients: int, full_participation: bool,
                     c_lam: float = 1.0) -> float:
    """MEMFBO-I4: the penalty balancing the rate: ``λ = c·(PT)^{1/7}`` (partial) or
    ``λ = c·T^{1/3}`` (full participation)."""
    if full_participation:
        return c_lam * rounds ** (1 / 3)
    return c_lam * (sampled_clients * rounds) ** (1 / 7)


# ---------------------------------------------------------------------------------- algorithm


def _gamma_y(c, lam):
    return 1.0 / (c["ell_f1"] + lam * c["ell_g1"])


class MemFBO(Algorithm):
    """MemFBO (Yang, Xiao, Ma & Ji, AAAI 2025, Alg. 1): single-loop, first-order penalty method
    with τ local steps and partial participation without replacement (module docstring).

    The round is split into small methods (:meth:`local_gradients`, :meth:`client_buffers`,
    :meth:`upload`) so that a variant changes one of them."""

    name = "memfbo"
    sampling_replace = False
    kinds = ("bilevel", "compositional")
    defaults = dict(
        penalty=10.0, local_steps=5,
        sampled_clients=lambda c, p: min(p.clients, 10),
        eta_x=None, eta_y=None, eta_z=None,
        gamma_x=None, gamma_y=None,
        gamma_z=lambda c, p: 1.0 / c["ell_g1"],
        x0=None, y0=None, z0=None,
    )

    def validate(self, hp):
        hp = super().validate(hp)
        lam = check_real("penalty", hp["penalty"], minimum=0.0, strict_minimum=True)
        try:
            _penalty_system(self.problem, lam)
        except ValueError as err:
            raise ValueError(str(err).replace("`lam`", "`penalty`")) from None
        hp["penalty"] = lam
        c = self.problem.constants
        if hp["gamma_y"] is None:
            hp["gamma_y"] = _gamma_y(c, lam)
        if hp["gamma_x"] is None:
            hp["gamma_x"] = min(0.5 / c["L_phi"], 0.5 * lam * _gamma_y(c, lam))
        tau = hp["local_steps"]
        for v in ("x", "y", "z"):
            as_schedule(f"gamma_{v}", hp[f"gamma_{v}"])
            if hp[f"eta_{v}"] is None:
                g = hp[f"gamma_{v}"]
                hp[f"eta_{v}"] = (lambda k, g=g: g(k) / tau) if callable(g) else g / tau
            as_schedule(f"eta_{v}", hp[f"eta_{v}"])
        return hp

    def init(self, ctx: Context):
        s = self.starting_point(ctx)
        z0 = self.hp["z0"]
        if z0 is None:
            s["z"] = s["y"] * 1.0
        else:
            z0 = start_vector("z0", z0, self.problem.dim_y, self.problem.radius)
            s["z"] = ctx.xp.broadcast_to(ctx.xp.asarray(z0), s["y"].shape) * 1.0
        return s

    # ------------------------------------------------------------ the pieces of one round
    def local_gradients(self, ctx: Context, idx, x, y, z):
        """Eq. (6)'s three stochastic first-order directions at ``(x_i^{t,k}, y_i^{t,k},
        z_i^{t,k})``: ``∇_y g_i(x, z; ζ)``, ``∇_y L_i(x, y, z; ψ)`` and ``∇ₓL_i(x, y, z; ξ)``
        (one ``ξ`` for both ``g_i`` terms, :meth:`Oracle.pair`)."""
        o, lam = ctx.oracle, self.hp["penalty"]
        dz = o.grad_y_g(idx, x, z)                                        # ζ
        dy = o.grad_y_f(idx, x, y) + lam * o.grad_y_g(idx, x, y)          # ψ
        gxy, gxz = o.pair("grad_x_g", idx, x, y, x, z)                    # ξ (same sample)
        dx = o.grad_x_f(idx, x, y) + lam * (gxy - gxz)
        return dx, dy, dz

    def client_buffers(self, k: int, iterates: tuple, sums: tuple, directions: tuple) -> tuple:
        """The arrays a client keeps across its local steps (registered with
        :meth:`Context.keep`, which measures them): the local iterates and the running sums of
        eq. (7) (MEMFBO-I1); the directions of step ``k`` are consumed at once."""
        return (*iterates, *sums)

    def upload(self, ctx: Context, hx, hy, hz):
        """Eqs. (7)–(8): the participating clients send ``h_{·,i}``; the server averages them
        (one round, three uplink vectors per client: :meth:`Context.aggregate`)."""
        return ctx.aggregate(hx, hy, hz, axis=1)

    def step(self, ctx: Context, state, k: int):
        hp, xp, o = self.hp, ctx.xp, ctx.oracle
        tau = hp["local_steps"]
        eta = {v: as_schedule(f"eta_{v}", hp[f"eta_{v}"])(k) for v in ("x", "y", "z")}
        gamma = {v: as_schedule(f"gamma_{v}", hp[f"gamma_{v}"])(k) for v in ("x", "y", "z")}
        idx = o.sample_clients(ctx.replicates, hp["sampled_clients"],
                               replace=self.sampling_replace)
        ctx.broadcast(state["x"], state["y"], state["z"])
        shape = idx.shape
        start = {v: xp.broadcast_to(state[v][:, None, :], shape + state[v].shape[-1:])
                 for v in ("x", "y", "z")}
        x, y, z = (start[v] * 1.0 for v in ("x", "y", "z"))
        hx, hy, hz = xp.zeros_like(x), xp.zeros_like(y), xp.zeros_like(z)
        drift = {v: xp.zeros(shape) for v in ("x", "y", "z")}
        for j in range(tau):
            # client drift of Prop. 5.8: Σ_k ‖v_i^{t,k} − v^t‖² (k = 0 adds 0)
            for v, cur in (("x", x), ("y", y), ("z", z)):
                drift[v] = drift[v] + xp.sum((cur - start[v]) ** 2, axis=-1)
            dx, dy, dz = self.local_gradients(ctx, idx, x, y, z)
            hx, hy, hz = hx + dx, hy + dy, hz + dz
            x, y, z = x - eta["x"] * dx, y - eta["y"] * dy, z - eta["z"] * dz
            ctx.keep(*self.client_buffers(j, (x, y, z), (hx, hy, hz), (dx, dy, dz)))
        for v in ("x", "y", "z"):
            # Δ_v^t = (1/|C_t|) Σ_{i∈C_t} (1/τ) Σ_k ‖v_i^{t,k} − v^t‖² (the participants'
            # mean: under full participation the (1/n)Σ_i of Prop. 5.8's definition)
            ctx.record(f"drift_{v}", xp.mean(drift[v], axis=1) / tau)
        mx, my, mz = self.upload(ctx, hx / tau, hy / tau, hz / tau)
        new_z = state["z"] - gamma["z"] * mz
        ctx.record("z", new_z)
        return dict(x=state["x"] - gamma["x"] * mx, y=state["y"] - gamma["y"] * my, z=new_z)


REGISTERED = (MemFBO,)


# =============================================================================================
# Theory: the bounds of Yang, Xiao, Ma & Ji, AAAI 2025 (Props 5.8 and 5.10, Thm 5.11, Cor 5.12,
# Alg. 1's state), as sympy expressions.
# ``bilevel_theory.rates.BOUNDS`` collects them by name; ``rates.law_for`` derives the claims'
# laws from them.  Built on demand, so that importing the algorithm does not import sympy.
# =============================================================================================

THEORY_PAPER = "MemFBO 2025"
THEORY_CITATION = "Yang, Xiao, Ma & Ji, AAAI 2025"


def bounds() -> list:
    """The stated bounds of Yang, Xiao, Ma & Ji, AAAI 2025, Props 5.8 and 5.10, Thm 5.11, Cor
    5.12, as :class:`bilevel_theory.rates.Bound` objects (names ``"memfbo.<result>"``)."""
    import sympy as sp  # noqa: PLC0415

    from bilevel_theory.rates import Bound, BoundList, C_lam, P, T, c_tau, eps, lam, tau  # noqa: PLC0415

    out = BoundList(THEORY_CITATION)
    _add, _src = out.add, out.source

    _R = sp.Rational

    _NOTE_MEM = ("MEMFBO-R3: the corollary swaps its names: T counts rounds (communication), PτT "
                 "samples")
    gap = _add(Bound(
        "memfbo.penalty_gap", THEORY_PAPER, _src("§5.2 gap of O(1/λ)"),
        C_lam / lam, r"\|\nabla L^*_\lambda(x) - \nabla\Phi(x)\|", "O", {"lambda": "multiplier λ"},
        notes=("stated O(1/λ) without constants (appendix unavailable); C_λ a constant",)))
    _add(Bound(
        "memfbo.cor512_partial_rounds", THEORY_PAPER, _src("Cor 5.12 (partial)"),
        P**-1 * eps ** _R(-7, 2), "T", "O", {"epsilon": "accuracy", "P": "sampled clients"},
        ("τ = O(1)",), (_NOTE_MEM,)))
    _add(Bound(
        "memfbo.cor512_full_rounds", THEORY_PAPER, _src("Cor 5.12 (full)"),
        eps ** _R(-3, 2), "T", "O", {"epsilon": "accuracy"},
        ("P = n (or P ≥ (τ−1)n/τ + 1)", "τ = O(P^{−1}T^{4/3})"), (_NOTE_MEM,)))
    _add(Bound(
        "memfbo.cor512_samples", THEORY_PAPER, _src("Cor 5.12 (PτT)"),
        eps ** _R(-7, 2), r"P\tau T", "O", {"epsilon": "accuracy"}, notes=(_NOTE_MEM,)))
    _add(Bound(
        "memfbo.rate_partial", THEORY_PAPER, _src("Thm 5.11 (partial)", "[INFERRED]"),
        (P * T) ** _R(-2, 7), r"\min_t \mathbb{E}\|\nabla\Phi(x^t)\|^2", "O",
        {"T": "rounds", "P": "sampled clients"}, ("τ = O(1)",),
        ("[INFERRED] MEMFBO-I3: from the extracted 'O(P 2' and Cor 5.12's T = P^{−1}ε^{−3.5}",)))
    memfbo_rate_full = _add(Bound(
        "memfbo.rate_full", THEORY_PAPER, _src("Thm 5.11 (full)", "[INFERRED]"),
        (P * tau * T) ** _R(-2, 7) + T ** _R(-2, 3), r"\min_t \mathbb{E}\|\nabla\Phi(x^t)\|^2", "O",
        {"T": "rounds", "P": "clients", "tau": "local steps"}, (),
        ("[INFERRED] MEMFBO-I3: stochastic (PτT)^{−2/7} plus the deterministic λ/T + 1/λ² "
         "floor T^{−2/3}",)))
    _add(Bound(
        "memfbo.rate_full_excess", THEORY_PAPER, _src("Thm 5.11 (full)", "[INFERRED]"),
        sp.expand(memfbo_rate_full.expr - T ** _R(-2, 3)),
        r"\min_t \mathbb{E}\|\nabla\Phi(x^t)\|^2 - \|\nabla\Phi(x_\lambda)\|^2", "O",
        {"T": "rounds", "P": "clients", "tau": "local steps"}, (),
        ("MEMFBO-R7: memfbo.rate_full less its limit Pτ → ∞ at a fixed T (the T^{−2/3} "
         "floor): the part that depends on P and τ",)))
    _add(memfbo_rate_full.derive(
        "memfbo.rate_full_tau_max", {"tau": c_tau * T ** _R(4, 3) / P},
        "Cor 5.12's τ = c_τ P^{−1}T^{4/3} substituted", variables={"T": "rounds"}))
    _add(Bound(
        "memfbo.balance_partial", THEORY_PAPER, _src("rate balance", "[INFERRED]"),
        lam / T + lam ** _R(3, 2) * (P * T) ** _R(-1, 2) + lam**-2,
        r"\min_t \mathbb{E}\|\nabla\Phi(x^t)\|^2", "O",
        {"lambda": "multiplier λ", "T": "rounds", "P": "sampled clients"}, (),
        ("[INFERRED] MEMFBO-I4: plausible balance λ/T + λ^{3/2}(PT)^{−1/2} + 1/λ² (penalty "
         "bias O(1/λ²))",)))
    _add(Bound(
        "memfbo.balance_full", THEORY_PAPER, _src("rate balance", "[INFERRED]"),
        lam / T + lam ** _R(3, 2) * (P * tau * T) ** _R(-1, 2) + lam**-2,
        r"\min_t \mathbb{E}\|\nabla\Phi(x^t)\|^2", "O",
        {"lambda": "multiplier λ", "T": "rounds", "P": "clients", "tau": "local steps"}, (),
        ("[INFERRED] MEMFBO-I4: as memfbo.balance_partial with P → Pτ (full participation)",)))
    # the plateau: ‖∇Φ(x_λ)‖² = ‖∇L*_λ(x_λ) − ∇Φ(x_λ)‖² (∇L*_λ(x_λ) = 0): the squared gap
    _add(Bound(
        "memfbo.penalty_plateau", THEORY_PAPER, _src("§5.2 gap of O(1/λ), squared at x_λ"),
        gap.expr ** 2, r"\|\nabla\Phi(x_\lambda)\|^2", "O", dict(gap.variables),
        notes=(*gap.notes, "squared at the zero x_λ of ∇L*_λ, where "
               "‖∇Φ(x_λ)‖ = ‖∇L*_λ(x_λ) − ∇Φ(x_λ)‖")))
    # Prop. 5.8 as stated (MEMFBO-R4): Δ_y ≤ O(η_y²τλ²)(M_se + M_cs) + O(η_y²τλ²)Δ_x
    # + O(η_y²τλ²)E‖y^t − y*_λ(x^t)‖², every constant independent of τ.
    eta_y = sp.Symbol("eta_y", positive=True)
    m_se, m_cs, d_x, e_y = (sp.Symbol(s, positive=True)
                            for s in ("M_se", "M_cs", "Delta_x", "E_y"))
    c = eta_y**2 * tau * lam**2
    _add(Bound(
        "memfbo.prop58_drift", THEORY_PAPER, _src("Prop. 5.8"),
        c * (m_se + m_cs) + c * d_x + c * e_y, r"\Delta_y^t", "O",
        {"tau": "local steps", "lambda": "multiplier λ", "eta_y": "local step"},
        notes=("MEMFBO-R4: the power of τ as stated; M_se, M_cs, Δ_x, E‖y − y*_λ‖² independent "
               "of τ at fixed η",)))
    # Prop. 5.10 (MEMFBO-I7): the second moment of the server's h_y; the client-sampling
    # coefficient (n − P)λ²/(P(n − 1)) is confirmed by the text, the λ²/(Pτ) of M_se inferred.
    n_all, d_y_ = (sp.Symbol(s, positive=True) for s in ("n", "Delta_y"))
    _add(Bound(
        "memfbo.prop510_second_moment", THEORY_PAPER,
        _src("Prop. 5.10 (proof: Thm C.9)", "[INFERRED]"),
        lam**2 * e_y + lam**2 * (d_x + d_y_) + lam**2 / (P * tau) * m_se
        + (n_all - P) * lam**2 / (P * (n_all - 1)) * m_cs,
        r"\mathbb{E}\|h_y^t\|^2", "O",
        {"P": "sampled clients", "n": "clients", "tau": "local steps",
         "lambda": "multiplier λ"},
        notes=("MEMFBO-I7: the (n − P)λ²/(P(n − 1)) coefficient of M_cs is confirmed by the "
               "text; the λ²/(Pτ) of M_se is inferred from 'decreases sublinearly w.r.t. τ and "
               "P'",)))
    # Memory: the vectors a client keeps (Alg. 1: local x, y, z and the normalized sums h_x,
    # h_y, h_z of eq. (7)), b bytes each; no τ anywhere.  Hessian/Jacobian products: none (§3.2).
    dim_x, dim_y, nbytes = (sp.Symbol(s, positive=True) for s in ("d_x", "d_y", "b"))
    _add(Bound(
        "memfbo.client_state", THEORY_PAPER, _src("Alg. 1 / eqs. (6)–(7), §3.1"),
        nbytes * (2 * dim_x + 4 * dim_y), r"\mathrm{per\ client\ state\ (bytes)}", "eq",
        {"d_x": "dim x", "d_y": "dim y", "b": "bytes per number"},
        notes=("x, y, z and the running sums h_x, h_y, h_z; independent of τ",)))
    _add(Bound(
        "memfbo.second_order_calls", THEORY_PAPER, _src("abstract / §3.2 / Alg. 1"),
        sp.Integer(0), r"\mathrm{Hessian/Jacobian\ products\ per\ round}", "eq",
        notes=("'uses only first-order gradient information for all local updates'",)))
    return out
