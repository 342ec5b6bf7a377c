"""``QuadraticBilevel``: random strongly-convex federated bilevel instances.

Parametrization (why it covers the papers' assumptions):

* ``A_i = U_i diag(a_i) U_iᵀ`` with every ``a_i ∈ [μ, κμ]`` and the extreme eigenvalues pinned
  (``a_i[0] = μ``, ``a_i[-1] = κμ`` when ``dim_y ≥ 2``), so every ``g_i`` is ``μ``-strongly
  convex in ``y`` (FedNest A2 / FedMBO A2 / Gao A1 / MemFBO 5.3) and ``∇²_{yy}g_i ≼ κμ I``.
  ``structured`` storage shares ``U`` (``m·dim_y`` numbers), so the global ``A`` has spectrum
  exactly ``[μ, κμ]``: Neumann biases decay at exactly the papers' ratio.  ``dense`` rotates
  ``U`` per client, so for ``h > 0`` the spectrum of ``A`` lies strictly inside ``[μ, κμ]``
  (``constants["mu_g_global"]``, ``["L_yy_global"]`` give it).
* ``B_i = B₀ + u_i w_iᵀ`` (structured) or ``B₀ + G_i`` (dense) with ``‖B₀‖ = coupling·μ``.
* Upper level: one PSD joint matrix ``[[P, R], [Rᵀ, S]] = GGᵀ/d + upper_mu·I`` shared by all
  clients (so ``Φ`` is ``upper_mu``-strongly convex), heterogeneous linear terms ``p_i, q_i``.
* Heterogeneity ``h`` scales every per-client deviation (spectra ``a_i``, ``u_i``, ``G_i``,
  ``c_i``, ``p_i``, ``q_i``, the dense rotations); ``h = 0`` makes all clients identical.
  All Lipschitz constants are finite on the ball of radius ``radius`` (quadratics), Hessians are
  constant (``ℓ_{g,2} = 0``), and the measured ``σ_g²`` is bounded and grows with ``h``.
* Noise: additive, zero-mean Gaussian on each stochastic gradient with ``E‖noise‖² = noise²``;
  Hessian/Jacobian samples are ``∇² + hessian_noise·Z`` with ``Z`` a Gaussian matrix of
  ``N(0, 1/d)`` entries (so ``E‖Zv‖² = ‖v‖²``), drawn fresh per product (problems.oracle).
"""

from __future__ import annotations

import numpy as np

from .families import Dense, EigenScaled, RankOne
from .knobs import check_knobs, check_memory
from .quadratic import FederatedQuadratic, dense_or_structured, shared
from .validation import check_choice


def validate_spec(clients, dim_x, dim_y, kappa, heterogeneity, noise, hessian_noise, seed,
                  storage, radius, **extra) -> dict:
    """Validate the common knobs of every ``random`` factory against their declared ranges
    (:data:`~bilevel_theory.problems.knobs.KNOBS`); returns them normalized (Python numbers,
    whatever numeric type was passed)."""
    spec = check_knobs(clients=clients, dim_x=dim_x, dim_y=dim_y, kappa=kappa,
                       heterogeneity=heterogeneity, noise=noise, seed=seed, radius=radius,
                       **extra)
    spec["hessian_noise"] = check_knobs(hessian_noise=noise if hessian_noise is None
                                        else hessian_noise)["hessian_noise"]
    spec["storage"] = check_choice("storage", storage, ("auto", "dense", "structured"))
    return spec


def random_rotation(rng: np.random.Generator, d: int) -> np.ndarray:
    """A random orthogonal matrix (QR of a Gaussian, signs fixed so it is unique)."""
    return sign_fixed_qr(rng.standard_normal((d, d)))


def sign_fixed_qr(M: np.ndarray) -> np.ndarray:
    """Orthogonal factor of ``M`` (batched) with ``diag(R) > 0``, so ``Q(Q) = Q``."""
    Q, Rm = np.linalg.qr(M)
    return Q * np.sign(np.diagonal(Rm, axis1=-2, axis2=-1))[..., None, :]


def client_spectra(rng, clients, dim, mu, kappa, h) -> np.ndarray:
    """Per-client eigenvalues in ``[μ, κμ]``, log-spread by ``h``, extremes pinned."""
    base = np.geomspace(mu, kappa * mu, dim) if dim > 1 else np.array([mu * np.sqrt(kappa)])
    a = np.clip(base * np.exp(0.5 * h * rng.standard_normal((clients, dim))), mu, kappa * mu)
    if dim > 1:
        a[:, 0], a[:, -1] = mu, kappa * mu
    return a


def random_lower_level(rng: np.random.Generator, spec: dict, m: int, dx: int, dy: int,
                       storage: str):
    """``(A, B, c)`` of the lower level ``½ yᵀA_i y − yᵀ(B_i x + c_i)`` (module docstring):
    spectra in ``[μ, κμ]`` with pinned extremes, ``‖B₀‖ = coupling·μ``, per-client deviations
    scaled by the heterogeneity; ``dense`` rotates each client's eigenbasis, ``structured``
    shares it and uses rank-one ``B_i``.  Shared by the bilevel and minimax factories."""
    mu, h = spec["mu"], spec["heterogeneity"]
    U0 = random_rotation(rng, dy)
    a = client_spectra(rng, m, dy, mu, spec["kappa"], h)
    B0 = rng.standard_normal((dy, dx))
    B0 *= spec["coupling"] * mu / max(np.linalg.norm(B0, 2), 1e-300)
    if storage == "dense":
        Ui = sign_fixed_qr(U0 + 0.3 * h * rng.standard_normal((m, dy, dy)) / np.sqrt(dy))
        A = Dense(np.einsum("mij,mj,mkj->mik", Ui, a, Ui))
        B = Dense(B0 + h * spec["coupling"] * mu * rng.standard_normal((m, dy, dx))
                  / np.sqrt(dx * dy))
    else:
        A = EigenScaled(U0, a)
        B = RankOne(B0, h * spec["coupling"] * mu * rng.standard_normal((m, dy)) / np.sqrt(dy),
                    rng.standard_normal((m, dx)) / np.sqrt(dx))
    c = rng.standard_normal(dy) + h * rng.standard_normal((m, dy))
    return A, B, c


class QuadraticBilevel(FederatedQuadratic):
    """Federated quadratic bilevel problem with closed-form ``y*``, ``Φ``, ``∇Φ`` (module doc)."""

    @classmethod
    def random(cls, clients: int = 10, dim_x: int = 5, dim_y: int = 5, kappa: float = 10.0,
               heterogeneity: float = 0.5, noise: float = 0.0, seed: int = 0, *,
               hessian_noise: float | None = None, mu: float = 1.0, coupling: float = 1.0,
               upper_mu: float = 0.1, storage: str = "auto",
               radius: float = 10.0) -> QuadraticBilevel:
        """A random instance; see the module docstring for the parametrization.

        Args:
            clients: number of clients ``m`` (≥ 1).
            dim_x, dim_y: dimensions (≥ 1).
            kappa: condition number of every ``∇²_{yy}g_i`` (spectrum in ``[μ, κμ]``), ≥ 1.
            heterogeneity: spread of the clients around their mean (0 ⇒ identical), ≥ 0.
            noise: std of gradient noise, ``E‖ξ‖² = noise²``; ``hessian_noise`` likewise for
                Hessian/Jacobian samples (defaults to ``noise``).
            seed: seed of the instance (the oracle's randomness is seeded separately).
            mu, coupling, upper_mu: ``μ_g``, ``‖B₀‖/μ`` and the strong convexity of ``f``.
            storage: ``"dense"`` per-client matrices, ``"structured"`` (scales to 10⁶
                clients) or ``"auto"`` (dense for ≤ 1000 clients).
            radius: radius of the ball on which the Lipschitz constants are computed.
        """
        spec = validate_spec(clients, dim_x, dim_y, kappa, heterogeneity, noise, hessian_noise,
                             seed, storage, radius, mu=mu, coupling=coupling, upper_mu=upper_mu)
        m, dx, dy, h = spec["clients"], spec["dim_x"], spec["dim_y"], spec["heterogeneity"]
        mu = spec["mu"]
        storage = dense_or_structured(spec["storage"], m, dy * (dx + dy))
        check_memory(m, dy * (dx + dy) if storage == "dense" else 4 * (dx + dy))
        rng = np.random.default_rng(spec["seed"])
        A, B, c = random_lower_level(rng, spec, m, dx, dy, storage)
        G = rng.standard_normal((dx + dy, dx + dy))
        M = G @ G.T / (dx + dy) + spec["upper_mu"] * np.eye(dx + dy)
        p = rng.standard_normal(dx) + h * rng.standard_normal((m, dx))
        q = rng.standard_normal(dy) + h * rng.standard_normal((m, dy))
        return cls(kind="bilevel", A=A, B=B, c=c, P=M[:dx, :dx], R=shared(M[:dx, dx:], m),
                   S=shared(M[dx:, dx:], m), p=p, q=q, Gxx=np.zeros((dx, dx)), e=None,
                   grad_noise=spec["noise"], hessian_noise=spec["hessian_noise"],
                   spec={**spec, "storage": storage}, radius=spec["radius"])
