"""``QuadraticMinimax``: federated strongly-concave minimax instances (FedNest §4.3, Cor. 3.2).

``min_x max_y f(x, y) = mean_i f_i``; in the bilevel form the lower level is ``g_i = −f_i``
(FedNest Cor. 3.2), so ``y*(x) = argmax_y f(x, y)`` and ``Φ(x) = max_y f(x, y)``.  With

``g_i(x, y) = ½ yᵀA_i y − yᵀ(B_i x + c_i) − ½ xᵀP x − p_iᵀx``  and  ``f_i = −g_i``,

the upper-level blocks are ``R_i = B_iᵀ``, ``S_i = −A_i``, ``q_i = c_i`` and ``f`` is
``μ``-strongly concave in ``y`` with ``κ_f = κ``.  ``Φ(x) = ½xᵀPx + p̄ᵀx + ½(B̄x + c̄)ᵀĀ⁻¹(B̄x + c̄)``.
"""

from __future__ import annotations

import numpy as np

from .bilevel import (
    random_lower_level,
    validate_spec,
)
from .families import EigenScaled, Scaled, Transposed
from .knobs import check_knobs, check_memory
from .quadratic import FederatedQuadratic, dense_or_structured, shared


class QuadraticMinimax(FederatedQuadratic):
    """Federated quadratic minimax problem, ``f`` strongly concave in ``y`` (module doc)."""

    @classmethod
    def _assemble(cls, A, B, c, P, p, spec, noise, hessian_noise, radius):
        return cls(kind="minimax", A=A, B=B, c=c, P=P, R=Transposed(B), S=Scaled(A, -1.0),
                   p=p, q=c, Gxx=-P, e=-p, grad_noise=noise, hessian_noise=hessian_noise,
                   spec=spec, radius=radius)

    def saddle(self) -> tuple[np.ndarray, np.ndarray]:
        """The saddle point ``(x*, y*)`` of ``min_x max_y f`` (weighted ``f`` when
        :meth:`reweighted`), host numpy: ``x*`` minimizes ``Φ(x) = max_y f(x, y)`` and
        ``y* = y*(x*)``, so ``∇ₓf(x*, y*) = ∇_y f(x*, y*) = 0``.  It is the point FedNest's
        minimax iterates converge to (Tarzanagh, Li, Thrampoulidis & Oymak, ICML 2022,
        Cor 3.2: ``‖∇Φ(x_k)‖ → 0``, and ``Φ`` is strongly convex here).  A ``ValueError`` when
        ``Φ`` is not strongly convex (``λ_min(∇²Φ) ≤ 0``, e.g. ``reg = 0`` with a rank-deficient
        ``B̄``): the saddle is then not unique."""
        x = self.x_star
        if x is None:
            raise ValueError(f"{self!r} has no unique saddle point: Φ(x) = max_y f(x, y) is not "
                             "strongly convex (λ_min(∇²Φ) ≤ 0); use `reg` > 0")
        return x, np.asarray(self.host.y_star(x))

    @classmethod
    def random(cls, clients: int = 10, dim_x: int = 5, dim_y: int = 5, kappa: float = 10.0,
               heterogeneity: float = 0.5, noise: float = 0.0, seed: int = 0, *,
               hessian_noise: float | None = None, mu: float = 1.0, coupling: float = 1.0,
               reg: float = 1.0, storage: str = "structured",
               radius: float = 10.0) -> QuadraticMinimax:
        """General instance: ``A_i`` spectrum in ``[μ, κμ]`` (``κ_f = κ``), ``P = reg·I``.

        Knobs as in ``QuadraticBilevel.random``; ``reg`` is the strong convexity in ``x``.
        ``storage="structured"`` (default): shared eigenbasis, rank-one ``B_i``;
        ``"dense"``: per-client rotations and dense ``B_i`` (as ``QuadraticBilevel``);
        ``"auto"``: dense for ≤ 1000 clients.
        """
        spec = validate_spec(clients, dim_x, dim_y, kappa, heterogeneity, noise, hessian_noise,
                             seed, storage, radius, mu=mu, coupling=coupling, reg=reg)
        m, dx, dy, h = spec["clients"], spec["dim_x"], spec["dim_y"], spec["heterogeneity"]
        mu = spec["mu"]
        storage = dense_or_structured(spec["storage"], m, dy * (dx + dy))
        check_memory(m, dy * (dx + dy) if storage == "dense" else 4 * (dx + dy))
        rng = np.random.default_rng(spec["seed"])
        A, B, c = random_lower_level(rng, spec, m, dx, dy, storage)
        p = rng.standard_normal(dx) + h * rng.standard_normal((m, dx))
        return cls._assemble(A, B, c, spec["reg"] * np.eye(dx), p,
                             {**spec, "storage": storage}, spec["noise"],
                             spec["hessian_noise"], spec["radius"])

    @classmethod
    def fednest_instance(cls, clients: int = 1000, dim: int = 10, lam: float = 10.0,
                         spread: float = 1.0, noise: float = 0.0, seed: int = 0, *,
                         hessian_noise: float | None = None,
                         radius: float = 10.0) -> QuadraticMinimax:
        """FedNest §4.3: ``f_i(x,y) = −[½‖y‖² − b_iᵀy + yᵀA_i x] + (λ/2)‖x‖²``.

        ``A_i = t_i I`` with ``t_i ~ U(0, 0.1)``; ``b_i = b_i' − mean_j b_j'`` with
        ``b_i' ~ N(0, spread² I)`` (centred across clients, as the paper states; the official
        notebook centres over coordinates instead, FEDNEST-R5), ``λ = 10`` (the
        paper; the notebook uses 0.1).  Then ``x* = 0`` and ``y*(x) = −Āx``.
        """
        spec = check_knobs(clients=clients, dim=dim, lam=lam, spread=spread, noise=noise,
                           hessian_noise=noise if hessian_noise is None else hessian_noise,
                           seed=seed, radius=radius)
        spec["instance"] = "fednest_4.3"
        m, d = spec["clients"], spec["dim"]
        check_memory(m, 4 * d)
        rng = np.random.default_rng(spec["seed"])
        t = rng.uniform(0.0, 0.1, m)
        b = spec["spread"] * rng.standard_normal((m, d))
        b -= b.mean(axis=0)
        A = shared(np.eye(d), m)
        B = Scaled(EigenScaled(np.eye(d), np.repeat(t[:, None], d, axis=1)), -1.0)
        return cls._assemble(A, B, b, spec["lam"] * np.eye(d), np.zeros((m, d)), spec,
                             spec["noise"], spec["hessian_noise"], spec["radius"])
