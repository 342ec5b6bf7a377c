"""The instance knobs' declared ranges: one table, checked once at the boundary.

Inside these ranges every closed form and constant of an instance is finite and accurate in
float64 (the eigen-decompositions, ``A⁻¹`` and the Lipschitz/heterogeneity constants stay far
from overflow and from singular matrices: ``κ ≤ 10⁶`` keeps ``cond(A) ≤ 10⁶``, noise and
radius below ``10⁶`` keep squared constants below ``10¹²·ℓ²``); outside, a clear error names
the knob and its range.  ``bilevel-theory problem --help`` and the README print this table.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .validation import check_int, check_real


@dataclass(frozen=True)
class Knob:
    """One knob: integer or real, its closed range (``low_open``: ``low`` excluded)."""

    name: str
    integer: bool
    low: float
    high: float
    meaning: str
    low_open: bool = False

    def check(self, value: Any) -> int | float:
        if self.integer:
            return check_int(self.name, value, minimum=int(self.low), maximum=int(self.high))
        v = check_real(self.name, value, minimum=self.low, strict_minimum=self.low_open,
                       allowed=self.range_text())
        if v > self.high:
            raise ValueError(f"`{self.name}` must be ≤ {self.high:g} (the range in which every "
                             f"closed form and constant is finite and accurate in float64), "
                             f"got {v:g}")
        return v

    def range_text(self) -> str:
        lo = "(" if self.low_open else "["
        return f"{lo}{self.low:g}, {self.high:g}]"


KNOBS = {k.name: k for k in (
    Knob("clients", True, 1, 10**7, "number of clients m"),
    Knob("dim_x", True, 1, 1000, "upper-level dimension"),
    Knob("dim_y", True, 1, 1000, "lower-level dimension"),
    Knob("dim", True, 1, 1000, "dimension (FedNest §4.3 instance)"),
    Knob("kappa", False, 1.0, 1e6, "condition number of every ∇²_yy g_i"),
    Knob("heterogeneity", False, 0.0, 10.0, "spread of the clients around their mean"),
    Knob("noise", False, 0.0, 1e6, "std of gradient noise"),
    Knob("hessian_noise", False, 0.0, 1e6, "std of Hessian/Jacobian-vector noise"),
    Knob("seed", True, 0, 2**63 - 1, "seed of the instance"),
    Knob("radius", False, 1e-6, 1e6, "radius of the ball of the Lipschitz constants"),
    Knob("mu", False, 1e-6, 1e6, "μ_g, strong convexity of g in y", low_open=False),
    Knob("coupling", False, 0.0, 1e3, "‖B₀‖/μ, coupling of x and y in g"),
    Knob("upper_mu", False, 0.0, 1e6, "strong convexity added to f"),
    Knob("reg", False, 0.0, 1e6, "minimax regularizer of x"),
    Knob("lam", False, 0.0, 1e6, "λ of the FedNest §4.3 instance"),
    Knob("spread", False, 0.0, 1e6, "std of the b_i of the FedNest §4.3 instance"),
)}


def check_knobs(**values: Any) -> dict[str, Any]:
    """Each value checked against its :data:`KNOBS` range."""
    return {name: KNOBS[name].check(value) for name, value in values.items()}


#: bytes per client and per coordinate that building an instance touches (storage plus the
#: generator's temporaries), measured on the structured and dense factories with margin
BYTES_PER_CLIENT_COORD = 96


def available_memory() -> float:
    """Bytes this process may still allocate: free physical memory, capped by the address-
    space limit (``RLIMIT_AS``) when one is set."""
    try:
        free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return float("inf")
    try:
        import resource  # noqa: PLC0415

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            free = min(free, soft)
    except (ImportError, ValueError, OSError):  # pragma: no cover
        pass
    return float(free)


def check_memory(clients: int, per_client_floats: int, what: str = "this instance") -> None:
    """Refuse, before allocating, an instance whose storage would not fit in memory."""
    need = float(clients) * per_client_floats * BYTES_PER_CLIENT_COORD / 8 * 8
    have = available_memory()
    if need > 0.8 * have:
        raise ValueError(f"`clients`={clients} needs about {need / 2**30:.2f} GiB to build "
                         f"{what} ({per_client_floats} numbers per client), more than the "
                         f"{have / 2**30:.2f} GiB available; use fewer clients or smaller "
                         f"dimensions")
