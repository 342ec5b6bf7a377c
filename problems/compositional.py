"""``QuadraticCompositional``: FedNest Cor. 3.3, ``g_i = ½‖y − r_i(x)‖²`` with linear ``r_i``.

``r_i(x) = J_i x + e_i``, so ``A_i = I`` (``κ_g = 1``), ``B_i = J_i``, ``c_i = e_i`` and the
x-only part of ``g_i`` is ``½‖J_i x + e_i‖²``.  The upper level depends on ``y`` only:
``f_i(y) = ½ yᵀS y + q_iᵀy`` with ``S ≽ upper_mu·I``, so ``Φ(x) = f(J̄x + ē)``.
Per-client ``J_i = J₀ + u_i w_iᵀ`` (rank-one, scales to 10⁶ clients) or dense ``J_i``.  FedNest eq. (7) writes
``‖y − r_i‖²`` without the ½; §3.2 uses ½; we take ½ (reading FEDNEST-R8).
"""

from __future__ import annotations

import numpy as np

from .bilevel import validate_spec
from .families import Dense, RankOne
from .knobs import check_memory
from .quadratic import FederatedQuadratic, dense_or_structured, shared


class QuadraticCompositional(FederatedQuadratic):
    """Federated compositional problem ``min_x f(mean_i r_i(x))`` in bilevel form."""

    @classmethod
    def random(cls, clients: int = 10, dim_x: int = 5, dim_y: int = 5, kappa: float = 1.0,
               heterogeneity: float = 0.5, noise: float = 0.0, seed: int = 0, *,
               hessian_noise: float | None = None, upper_mu: float = 0.1,
               storage: str = "structured", radius: float = 10.0) -> QuadraticCompositional:
        """A random instance; ``kappa`` is accepted for a uniform signature but must be 1.

        ``storage="structured"`` (default): ``J_i = J₀ + u_i w_iᵀ``; ``"dense"``:
        ``J_i = J₀ + G_i`` with a Gaussian ``G_i`` of Frobenius norm ≈ ``heterogeneity``;
        ``"auto"``: dense for ≤ 1000 clients.
        """
        spec = validate_spec(clients, dim_x, dim_y, kappa, heterogeneity, noise, hessian_noise,
                             seed, storage, radius, upper_mu=upper_mu)
        if spec["kappa"] != 1.0:
            raise ValueError(
                f"`kappa` must be 1 for a compositional problem (A_i = I), got {kappa}")
        m, dx, dy, h = spec["clients"], spec["dim_x"], spec["dim_y"], spec["heterogeneity"]
        rng = np.random.default_rng(spec["seed"])
        storage = dense_or_structured(spec["storage"], m, dy * dx)
        check_memory(m, dy * dx if storage == "dense" else 4 * (dx + dy))
        J0 = rng.standard_normal((dy, dx)) / np.sqrt(dx)
        if storage == "dense":
            J = Dense(J0 + h * rng.standard_normal((m, dy, dx)) / np.sqrt(dx * dy))
        else:
            J = RankOne(J0, h * rng.standard_normal((m, dy)) / np.sqrt(dy),
                        rng.standard_normal((m, dx)) / np.sqrt(dx))
        e = rng.standard_normal(dy) + h * rng.standard_normal((m, dy))
        G = rng.standard_normal((dy, dy))
        S = G @ G.T / dy + spec["upper_mu"] * np.eye(dy)
        q = rng.standard_normal(dy) + h * rng.standard_normal((m, dy))
        return cls(kind="compositional", A=shared(np.eye(dy), m), B=J, c=e,
                   P=np.zeros((dx, dx)), R=shared(np.zeros((dx, dy)), m), S=shared(S, m),
                   p=np.zeros((m, dx)), q=q, Gxx=np.zeros((dx, dx)), e=None,
                   grad_noise=spec["noise"], hessian_noise=spec["hessian_noise"],
                   spec={**spec, "storage": storage}, radius=spec["radius"])

    def _g_x_terms(self, idx, x):
        """``γ_i(x) = ½‖J_i x + e_i‖²`` and its gradient ``J_iᵀ(J_i x + e_i)``."""
        r = self.B.mv(idx, x) + self.c[idx]
        return 0.5 * (r * r).sum(-1), self.B.rmv(idx, r)

    def _gxx_norm(self) -> float:
        return self.host.B.max_norm() ** 2
