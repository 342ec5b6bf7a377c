"""The asymptotic engine: rate statements as sympy expressions, and the derivation of each claim's
:class:`Law` from them.  Paper-independent: the papers' bounds live beside their algorithms.

Every stated bound is a :class:`Bound`: a sympy expression in its own variables, all symbols
positive, with its source ("Authors, venue year, result" and a tag ``[TEXT]`` / ``[INFERRED]``),
assumptions and the readings taken (ids such as ``FEDNEST-R3``, see ``docs/papers.md``).  Each
paper's algorithm module (:data:`PAPER_MODULES`) ends with a ``bounds()`` function returning its
theorems' bounds; :data:`BOUNDS` collects them by name on first use (:func:`register_bounds` adds
another module).  Predictions are **derived** from the expressions, never typed in:

* :func:`leading_exponent` — ``p`` with ``expr ≍ var^p`` as ``var → ∞`` (or ``→ 0``);
* :func:`exponent_at_order` — the exponent in a second variable of the dominant term in ``var``;
* :func:`geometric_ratio` / :func:`log_ratio` — ``r`` of a bias ``c·r^N``, from
  ``expr(N+1)/expr(N)`` simplified;
* :func:`invert`, :func:`epsilon_exponent`, :func:`inverse_exponent_in` — the complexity
  ``K(ε)`` from ``expr(K) = ε`` as ``ε → 0``;
* :func:`balance_point`, :func:`minimize_rate` — a parameter set by balancing terms (used for
  MemFBO's [INFERRED] λ);
* :func:`crossovers`, :func:`local_exponent` — the pre-asymptotic picture: where the dominant
  term changes and the log–log slope at a given point;
* :func:`law_for` — the :class:`Law` ``(value, latex, derivation)`` of a claim.

Conventions of the asymptotic calculus (one place, used by every function):

* ``expr`` is expanded (``expand_power_base`` then ``expand``; all symbols are positive) into
  additive terms.  The exponent of a term in ``var`` is ``lim log|term| / log var`` taken factor by
  factor (sympy ``limit``).  Other symbols are fixed positive constants.
* **Log factors are lower order**: ``log K`` contributes exponent 0, so ``log K/√K`` has exponent
  ``−1/2``; complexities are then "up to polylog factors" (Õ), as the papers state them.
* Exponential dependence ``r^var`` gives ``±∞`` when sympy can decide the sign of ``log r`` and a
  ``ValueError`` (pointing to :func:`geometric_ratio`) otherwise.
* Terms are compared in magnitude; cancellation *between* terms is not resolved
  (``√(K+1) − √K`` reads as ``K^{1/2}``).  The papers' bounds are sums of positive terms (AFBO's
  ``1 − (1−ημ)^{T−1}`` only subtracts an exponentially small term).
* Terms sharing the largest exponent form the *dominant part* (ties are summed).  Symbolic
  exponents are compared with sympy (``assume`` substitutions help); undecidable orderings raise.
* The result is the **asymptotic** answer.  Where the leading term changes with the range (e.g.
  ``κ⁴/K + κ^{2.5}/√K``: slope ``−1`` for ``K ≪ κ³``, ``−1/2`` beyond), :func:`leading_exponent`
  returns the ``var → ∞`` value; :func:`crossovers` gives the switch points and
  :func:`local_exponent` the slope at a point, for choosing a claim's fitting window.

Schedules substituted from corollaries keep the papers' rates; where a corollary only says
``Q = O(log 1/ε)`` or ``N = O(log K)``, the constant is chosen (said in each bound's notes), never
the rate.
"""

from __future__ import annotations

import functools
import importlib
import math
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from .law import Law

__all__ = [
    "BOUNDS", "PAPER_MODULES", "Bound", "Inversion", "Law", "Prediction", "SYMBOLS",
    "balance_point", "crossovers", "dominant_part", "epsilon_exponent", "exponent_at_order",
    "geometric_ratio", "inverse_exponent_in", "invert", "latex", "law_for", "leading_exponent",
    "local_exponent", "log_ratio", "minimize_rate", "neumann_N_for", "register_bounds",
    "term_exponents",
]

# ---------------------------------------------------------------------------------------------
# Symbols (all positive; one table shared by the bounds, LaTeX names for reports)
# ---------------------------------------------------------------------------------------------

SYMBOLS: dict[str, sp.Symbol] = {}
_LATEX: dict[sp.Symbol, str] = {}


def _sym(name: str, tex: str | None = None) -> sp.Symbol:
    s = sp.Symbol(name, positive=True)
    SYMBOLS[name] = s
    if tex is not None:
        _LATEX[s] = tex
    return s


# swept variables
K, n, N, T, m, P, Q = (_sym(v) for v in ("K", "n", "N", "T", "m", "P", "Q"))
p = _sym("p")
tau = _sym("tau", r"\tau")
tau_bar = _sym("tau_bar", r"\bar{\tau}")
eps = _sym("epsilon", r"\epsilon")
lam = _sym("lambda", r"\lambda")
kappa = _sym("kappa", r"\kappa")
kappa_g = _sym("kappa_g", r"\kappa_g")
kappa_f = _sym("kappa_f", r"\kappa_f")
# problem constants
mu, mu_g, mu_f = _sym("mu", r"\mu"), _sym("mu_g", r"\mu_g"), _sym("mu_f", r"\mu_f")
theta = _sym("theta", r"\theta")
ell_f0, ell_f1 = _sym("ell_f0", r"\ell_{f,0}"), _sym("ell_f1", r"\ell_{f,1}")
ell_g1, ell_g2 = _sym("ell_g1", r"\ell_{g,1}"), _sym("ell_g2", r"\ell_{g,2}")
sigma, delta = _sym("sigma", r"\sigma"), _sym("delta", r"\delta")
sigma_f, sigma_g = _sym("sigma_f", r"\sigma_f"), _sym("sigma_g", r"\sigma_g")
sigma_g1, sigma_g2 = _sym("sigma_g1", r"\sigma_{g,1}"), _sym("sigma_g2", r"\sigma_{g,2}")
sigma_tf = _sym("sigma_tilde_f", r"\tilde{\sigma}_f")
sigma_hat = _sym("sigma_hat_f", r"\hat{\sigma}_f")
D_hat = _sym("D_hat_f", r"\hat{D}_f")
L0, L1 = _sym("L_0"), _sym("L_1")
L_hat, L_tilde = _sym("L_hat", r"\hat{L}"), _sym("L_tilde", r"\tilde{L}")
L_f, M_f, L_y = _sym("L_f"), _sym("M_f"), _sym("L_y")
G = _sym("G")
Delta = _sym("Delta", r"\Delta_\Phi")          # Φ(x_0) − Φ(x_*)
Delta_f = _sym("Delta_f", r"\Delta_f")
Delta_Q = _sym("Delta_Q", r"\Delta_Q")
D0 = _sym("D_0")                               # ‖ȳ_0 − y*(x̄_0)‖²
W0 = _sym("W_0", r"\Delta_W")                  # E W^0 − E W*
V0 = _sym("V_0")                               # E V^0
# step sizes and schedule constants
alpha, beta, eta = _sym("alpha", r"\alpha"), _sym("beta", r"\beta"), _sym("eta", r"\eta")
rho1, rho2 = _sym("rho_1", r"\rho_1"), _sym("rho_2", r"\rho_2")
a_bar, a_bar1 = _sym("alpha_bar", r"\bar{\alpha}"), _sym("alpha_bar1", r"\bar{\alpha}_1")
a_bar2, a_bar3 = _sym("alpha_bar2", r"\bar{\alpha}_2"), _sym("alpha_bar3", r"\bar{\alpha}_3")
a_hat1, a_hat2 = _sym("alpha_hat1", r"\hat{\alpha}_1"), _sym("alpha_hat2", r"\hat{\alpha}_2")
a_hat3 = _sym("alpha_hat3", r"\hat{\alpha}_3")
beta_sq = _sym("B_beta", r"\left(\sum_k \beta_{t,k}^2\right)")
U_1 = _sym("U_1")
u_1 = _sym("u_1")
E_t = _sym("E_t", "E^t")
C_lam = _sym("C_lambda", r"C_\lambda")
c_eta, c_p, c_T = _sym("c_eta", r"c_\eta"), _sym("c_p"), _sym("c_T")
c_rho, c_tau = _sym("c_rho", r"c_\rho"), _sym("c_tau", r"c_\tau")
tau_excess = _sym("tau_excess", r"(\bar{\tau} - 1)")
eta_inv = _sym("eta_inv", r"\eta^{-1}")      # a constant step's inverse, swept upwards
c_beta = _sym("c_beta", r"c_\beta")           # Σ_kβ² = c_βη²: inner steps scaled with η

# ---------------------------------------------------------------------------------------------
# Bound
# ---------------------------------------------------------------------------------------------

_REL = {"O": r"= \mathcal{O}\left(%s\right)", "le": r"\leq %s", "eq": "= %s"}


@dataclass(frozen=True)
class Bound:
    """One stated bound (or count) as a sympy expression.

    Attributes:
        name: registry key ``"<paper>.<result>"``.
        paper: short paper name.
        source: ``"<Authors, venue year>, <result> [TEXT]"`` (or ``[INFERRED]``).
        expr: the right-hand side; every symbol is positive.
        quantity: LaTeX of the bounded quantity (left-hand side).
        relation: ``"O"`` (up to constants), ``"le"`` (explicit) or ``"eq"`` (exact count).
        variables: the bound's own variables, name → meaning (what a claim sweeps).
        assumptions: conditions the statement needs (in words).
        notes: the readings taken (their ids), schedules substituted.
    """

    name: str
    paper: str
    source: str
    expr: sp.Expr
    quantity: str
    relation: str = "O"
    variables: Mapping[str, str] = field(default_factory=dict)
    assumptions: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.relation not in _REL:
            raise ValueError(f"bound {self.name}: relation must be one of {tuple(_REL)}")
        if "[TEXT]" not in self.source and "[INFERRED]" not in self.source:
            raise ValueError(f"bound {self.name}: source needs a [TEXT] or [INFERRED] tag")
        missing = [v for v in self.variables if v not in self.symbols]
        if missing:
            raise ValueError(f"bound {self.name}: variables {missing} not in the expression")

    @property
    def tag(self) -> str:
        """``"[INFERRED]"`` if the source says so, else ``"[TEXT]"``."""
        return "[INFERRED]" if "[INFERRED]" in self.source else "[TEXT]"

    @property
    def symbols(self) -> dict[str, sp.Symbol]:
        """The expression's symbols by name."""
        return {s.name: s for s in sorted(self.expr.free_symbols, key=lambda s: s.name)}

    def symbol(self, name: str | sp.Symbol) -> sp.Symbol:
        """The symbol called ``name`` (``ValueError`` if the bound does not use it)."""
        if isinstance(name, sp.Symbol):
            return name
        if name not in self.symbols:
            raise ValueError(f"bound {self.name} has no symbol {name!r}; it has "
                             f"{sorted(self.symbols)}")
        return self.symbols[name]

    def at(self, **values: float) -> float:
        """The bound's value with each of its symbols set by name (``values`` may name more);
        ``ValueError`` naming the symbols left without a value."""
        missing = sorted(name for name in self.symbols if name not in values)
        if missing:
            raise ValueError(f"bound {self.name}: no value for {missing}")
        return float(self.expr.subs({s: values[n] for n, s in self.symbols.items()}))

    def latex(self) -> str:
        """``quantity <relation> expr`` in LaTeX (symbol names as in the papers)."""
        return f"{self.quantity} " + _REL[self.relation] % _tex(self.expr)

    def derive(self, name: str, subs: Mapping[Any, Any], note: str, *,
               source: str | None = None, variables: Mapping[str, str] | None = None,
               quantity: str | None = None, relation: str | None = None) -> Bound:
        """A new bound with ``subs`` substituted (e.g. a corollary's schedule), ``note`` added."""
        expr = self.expr
        for k, v in subs.items():  # in order: later values may use earlier symbols
            expr = expr.subs(_sym_of(self.expr, k), v)
        keep = {k: v for k, v in (variables if variables is not None
                                  else self.variables).items()
                if k in {s.name for s in expr.free_symbols}}
        return Bound(name=name, paper=self.paper, source=source or self.source, expr=expr,
                     quantity=quantity or self.quantity, relation=relation or self.relation,
                     variables=keep, assumptions=self.assumptions,
                     notes=(*self.notes, note))


class BoundList(list):
    """A paper's bounds as its ``bounds()`` builds them: ``add(bound)`` appends and returns it,
    ``source(result, tag)`` gives a bound's source, ``"<citation>, <result> <tag>"``."""

    def __init__(self, citation: str):
        super().__init__()
        self.citation = citation

    def add(self, bound: Bound) -> Bound:
        self.append(bound)
        return bound

    def source(self, result: str, tag: str = "[TEXT]") -> str:
        return f"{self.citation}, {result} {tag}"

def _tex(expr: sp.Expr) -> str:
    return sp.latex(expr, symbol_names=_LATEX)


def latex(bound: Bound | str) -> str:
    """LaTeX of a bound (object or registry name)."""
    return _bound(bound).latex()


def _bound(b: Bound | str) -> Bound:
    if isinstance(b, Bound):
        return b
    if b not in BOUNDS:
        raise ValueError(f"unknown bound {b!r}; known: {sorted(BOUNDS)}")
    return BOUNDS[b]


def _expr(obj: Any) -> sp.Expr:
    return obj.expr if isinstance(obj, Bound) else sp.sympify(obj)


def _sym_of(expr: sp.Expr, var: str | sp.Symbol) -> sp.Symbol:
    """``var`` as a symbol: itself, a symbol of ``expr`` with that name, or the shared table."""
    if isinstance(var, sp.Symbol):
        return var
    for s in expr.free_symbols:
        if s.name == var:
            return s
    if var in SYMBOLS:
        return SYMBOLS[var]
    raise ValueError(f"unknown symbol {var!r}")


# ---------------------------------------------------------------------------------------------
# Asymptotic calculus
# ---------------------------------------------------------------------------------------------

_t = sp.Dummy("t", positive=True)


def _terms(expr: sp.Expr) -> list[sp.Expr]:
    e = sp.expand(sp.expand_power_base(sp.sympify(expr), force=True))
    return [t for t in sp.Add.make_args(e) if t != 0]


def _checked(value: sp.Expr, var: sp.Symbol, what: sp.Expr) -> sp.Expr:
    value = sp.simplify(value)
    bad = (value is sp.nan or value.has(var) or value.has(sp.Limit) or value.has(sp.sign)
           or value.has(sp.AccumBounds) or value.has(sp.zoo))
    if bad:
        raise ValueError(f"cannot decide the growth of {what} in {var}: got {value}. For a "
                         "bias c·r^N use geometric_ratio; otherwise substitute assumptions.")
    return value


@functools.lru_cache(maxsize=8192)
def _factor_exponent(f: sp.Expr, var: sp.Symbol) -> sp.Expr:
    """``lim log|f| / log var`` as ``var → ∞`` for one factor of a product."""
    if not f.has(var):
        return sp.Integer(0)
    if f == var:
        return sp.Integer(1)
    if f.is_Pow and f.base == var and not f.exp.has(var):
        return f.exp
    total = sp.Integer(0)
    for part in sp.Add.make_args(sp.expand_log(sp.log(f), force=True)):
        if not part.has(var):
            continue
        coeff = sp.simplify(part / sp.log(var))
        if not coeff.has(var):
            total += coeff
        else:
            total += sp.limit(part / sp.log(var), var, sp.oo)
    return _checked(total, var, f)


@functools.lru_cache(maxsize=8192)
def _term_exponent(term: sp.Expr, var: sp.Symbol) -> sp.Expr:
    total = sp.Integer(0)
    for f in sp.Mul.make_args(term):
        e = _factor_exponent(f, var)
        if e is sp.S.NegativeInfinity or e is sp.S.Infinity:
            if total.is_infinite and total != e:
                raise ValueError(f"indeterminate growth of {term} in {var}")
            total = e
        elif not total.is_infinite:
            total += e
    return sp.simplify(total)


def _flip(expr: sp.Expr, var: sp.Symbol, at: Any) -> tuple[sp.Expr, sp.Symbol, int]:
    """Map ``var → 0`` to ``t = 1/var → ∞``; returns (expr, variable, sign of exponents)."""
    if at in (sp.oo, "oo", math.inf):
        return expr, var, 1
    if at in (0, "0"):
        return expr.subs(var, 1 / _t), _t, -1
    raise ValueError(f"`at` must be oo or 0, got {at!r}")


def term_exponents(expr: Any, var: str | sp.Symbol, at: Any = sp.oo) -> list[tuple[Any, Any]]:
    """``[(exponent, term), ...]`` of the expanded additive terms, largest first (``at=∞``) or
    smallest first (``at=0``); ``term ≍ var^exponent`` up to log factors."""
    expr = _expr(expr)
    var = _sym_of(expr, var)
    e, v, sign = _flip(expr, var, at)
    out = []
    for term in _terms(e):
        mag = -term if term.could_extract_minus_sign() else term
        out.append((sign * _term_exponent(mag, v), term.subs(v, 1 / var) if sign < 0 else term))
    return sorted(out, key=lambda x: _sort_key(x[0]), reverse=sign > 0)


def _sort_key(e: sp.Expr) -> float:
    try:
        return float(e)
    except TypeError:
        return 0.0


def _max(values: list[sp.Expr], assume: Mapping | None, what: str) -> sp.Expr:
    best = values[0]
    for v in values[1:]:
        if v == best or v is sp.S.NegativeInfinity or best is sp.S.Infinity:
            continue
        if best is sp.S.NegativeInfinity or v is sp.S.Infinity:
            best = v
            continue
        d = sp.simplify((v - best).subs(assume or {}))
        if d.is_positive:
            best = v
        elif not (d.is_negative or d.is_zero):
            raise ValueError(f"cannot order the exponents {best} and {v} of {what}; pass "
                             "`assume` substitutions that decide it")
    return best


def _groups(expr: sp.Expr, var: sp.Symbol, assume: Mapping | None = None
            ) -> list[tuple[sp.Expr, sp.Expr]]:
    """Terms grouped by exponent in ``var`` (→ ∞): ``[(exponent, sum of terms)]``, finite
    exponents only, in no particular order."""
    groups: dict[sp.Expr, sp.Expr] = {}
    for term in _terms(expr):
        mag = -term if term.could_extract_minus_sign() else term
        a = _term_exponent(mag, var)
        if a.is_infinite:
            if a is sp.S.Infinity:
                raise ValueError(f"term {term} grows faster than any power of {var}")
            continue
        for key in groups:
            if sp.simplify((key - a).subs(assume or {})) == 0:
                a = key
                break
        groups[a] = groups.get(a, 0) + term
    return list(groups.items())


def leading_exponent(expr: Any, var: str | sp.Symbol, at: Any = sp.oo,
                     assume: Mapping | None = None) -> sp.Expr:
    """The exponent ``p`` of the dominant term: ``expr ≍ var^p`` (log factors ignored) as
    ``var → ∞`` (default) or ``var → 0`` (``at=0``), other symbols fixed positive constants.

    ``1/√K + 1/K → −1/2``; ``log K/√K → −1/2``; ``κ⁴/K + κ^{2.5}/√K → −1/2`` (the asymptotic
    answer even though ``1/K`` dominates for ``K < κ³``: see :func:`crossovers`).
    Returns ``−oo`` if every term decays faster than any power.
    """
    expr = _expr(expr)
    var = _sym_of(expr, var)
    e, v, sign = _flip(expr, var, at)
    exps = [_term_exponent(-t if t.could_extract_minus_sign() else t, v) for t in _terms(e)]
    if not exps:
        raise ValueError("expression is zero")
    return sign * _max(exps, assume, str(expr))


def dominant_part(expr: Any, var: str | sp.Symbol, at: Any = sp.oo,
                  assume: Mapping | None = None) -> sp.Expr:
    """The sum of the terms that share the leading exponent in ``var``."""
    expr = _expr(expr)
    var = _sym_of(expr, var)
    e, v, sign = _flip(expr, var, at)
    terms = _terms(e)
    exps = [_term_exponent(-t if t.could_extract_minus_sign() else t, v) for t in terms]
    top = _max(exps, assume, str(expr))
    part = sum(t for t, a in zip(terms, exps) if a == top
               or (not a.is_infinite and not top.is_infinite
                   and sp.simplify((a - top).subs(assume or {})) == 0))
    return part.subs(v, 1 / var) if sign < 0 else part


def exponent_at_order(expr: Any, var: str | sp.Symbol, second: str | sp.Symbol,
                      at: Any = sp.oo, second_at: Any = sp.oo,
                      assume: Mapping | None = None) -> sp.Expr:
    """The exponent in ``second`` of the dominant part in ``var``.

    For ``κ^{5/2}/√(nK) + κ³/K``: the dominant part in ``K`` is ``κ^{5/2}(nK)^{−1/2}``, whose
    exponent in ``n`` is ``−1/2`` (and in ``κ`` is ``5/2``).  If several terms tie in ``var``,
    the exponent of their sum is taken as ``second → ∞`` (``second_at``).
    """
    expr = _expr(expr)
    part = dominant_part(expr, var, at, assume)
    return leading_exponent(part, _sym_of(expr, second), second_at, assume)


@functools.lru_cache(maxsize=1024)
def _monomial(group: sp.Expr, var: sp.Symbol, a: sp.Expr) -> sp.Expr:
    """The coefficient ``c`` with ``group ≍ c·var^a`` (log factors in ``var`` dropped)."""
    coeff = sp.Integer(0)
    for term in sp.Add.make_args(sp.expand(group)):
        c = sp.Integer(1)
        for f in sp.Mul.make_args(term):
            if not f.has(var):
                c *= f
                continue
            af = _factor_exponent(f, var)
            # log f − a_f log var: a constant (the coefficient) or a log-type remainder
            rest = sp.simplify(sp.expand_log(sp.log(f), force=True) - af * sp.log(var))
            if not rest.has(var):
                c *= sp.exp(rest)
                continue
            try:
                lim = sp.limit(rest, var, sp.oo)
            except NotImplementedError as err:
                raise ValueError(f"cannot take the coefficient of {f} in {var}") from err
            if lim.is_finite and not lim.has(var):
                c *= sp.exp(lim)
            # else a log factor: lower order, dropped (Õ)
        coeff += c
    return sp.factor_terms(coeff)


def balance_point(a: Any, b: Any, var: str | sp.Symbol) -> sp.Expr:
    """The ``var > 0`` at which two power terms are equal (``sympy.solve`` on their leading
    monomials; log factors dropped)."""
    a, b = _expr(a), _expr(b)
    var = _sym_of(a + b, var)
    pa, pb = leading_exponent(a, var), leading_exponent(b, var)
    if sp.simplify(pa - pb) == 0:
        raise ValueError(f"{a} and {b} have the same exponent in {var}: no balance point")
    ca = _monomial(dominant_part(a, var), var, pa)
    cb = _monomial(dominant_part(b, var), var, pb)
    return _solve_monomials(ca, pa, cb, pb)


def _solve_monomials(c1: sp.Expr, a1: sp.Expr, c2: sp.Expr, a2: sp.Expr) -> sp.Expr:
    """The ``v > 0`` with ``c1·v^a1 = c2·v^a2``: ``sympy.solve`` of the log-linear equation
    ``log c1 + a1 L = log c2 + a2 L`` for ``L = log v``, checked against
    ``(c2/c1)^{1/(a1−a2)}``."""
    L = sp.Dummy("L", real=True)
    lhs = sp.expand_log(sp.log(c1), force=True) + a1 * L
    rhs = sp.expand_log(sp.log(c2), force=True) + a2 * L
    sols = sp.solve(sp.Eq(lhs, rhs), L)
    if len(sols) != 1:
        raise ValueError(f"no unique solution of {c1}·v^{a1} = {c2}·v^{a2}")
    sol = sp.powsimp(sp.exp(sp.expand(sols[0])), force=True)
    closed = (c2 / c1) ** (1 / (a1 - a2))
    if not _numerically_equal(sol, closed):
        raise ValueError(f"solve gave {sol}, expected {closed}")
    return sol


def _numerically_equal(a: sp.Expr, b: sp.Expr, trials: int = 3) -> bool:
    """``a == b`` at random positive values of their symbols (cheap check of a derivation)."""
    syms = sorted((a.free_symbols | b.free_symbols), key=lambda s: s.name)
    rng = random.Random(0)
    for _ in range(trials):
        point = {s: sp.Float(rng.uniform(0.05, 0.45)) for s in syms}  # keeps 1 − θμ > 0
        va, vb = complex(a.evalf(subs=point)), complex(b.evalf(subs=point))
        if not math.isclose(abs(va - vb), 0, abs_tol=1e-9 * max(1.0, abs(vb))):
            return False
    return True


@dataclass(frozen=True)
class Inversion:
    """``var(ε)`` from ``expr(var) = ε`` as ``ε → 0`` (see :func:`invert`).

    Attributes:
        solution: ``var(ε)`` up to constant and log factors (the sum of the binding solutions).
        eps_exponent: its exponent in ``ε`` as ``ε → 0``.
        binding: the terms ``c·var^a`` whose solutions bind (largest as ``ε → 0``).
        compatible: terms constant in ``var`` but ``O(ε)`` through their coefficient.
        dropped: non-vanishing floors ignored with ``floor="drop"``.
    """

    solution: sp.Expr
    eps_exponent: sp.Expr
    binding: tuple[sp.Expr, ...]
    compatible: tuple[sp.Expr, ...] = ()
    dropped: tuple[sp.Expr, ...] = ()


def invert(expr: Any, var: str | sp.Symbol, eps: str | sp.Symbol = "epsilon",
           floor: str = "raise", assume: Mapping | None = None) -> Inversion:
    """Asymptotic inversion of ``expr(var) = ε`` as ``ε → 0``.

    Terms are grouped by their exponent ``a`` in ``var``.  Each decaying group ``c·var^a``
    (``a < 0``; ``c`` may depend on ``ε``, e.g. through a schedule) is solved with
    ``sympy.solve`` for ``var_i(ε) = (ε/c)^{1/a}``; the complexity is ``max_i var_i(ε)``, i.e.
    the solutions with the most negative ``ε``-exponent (ties summed).  Example:
    ``1/√(nK) = ε ⇒ K = ε^{−2}/n``.  Groups with ``a ≥ 0`` are accepted when their coefficient is
    ``O(ε)`` (``compatible``); otherwise they are floors: ``floor="raise"`` (default) raises,
    ``floor="drop"`` records them in ``dropped`` (the claim must then say the floor is made
    small by another parameter).  Growing terms (``a > 0`` and not ``O(ε)``) always raise.
    """
    expr = _expr(expr)
    return _invert(expr, _sym_of(expr, var), _sym_of(expr, eps), floor,
                   tuple(sorted((assume or {}).items(), key=str)))


@functools.lru_cache(maxsize=256)
def _invert(expr: sp.Expr, var: sp.Symbol, e_sym: sp.Symbol, floor: str,
            assume_items: tuple) -> Inversion:
    assume = dict(assume_items)
    compatible, dropped, sols = [], [], []
    for a, group in _groups(expr, var, assume):
        c = _monomial(group, var, a)
        if not (a.is_negative or (a.subs(assume or {})).is_negative):
            order = leading_exponent(c, e_sym, 0, assume) if c.has(e_sym) else sp.Integer(0)
            if a == 0 and (order - 1).is_nonnegative:
                compatible.append(group)
            elif floor == "drop" and a == 0:
                dropped.append(group)
            else:
                kind = "a floor" if a == 0 else "growing"
                raise ValueError(f"term {group} of {expr} is {kind} in {var} (exponent {a}) "
                                 "and not O(ε): the bound does not reach ε by increasing "
                                 f"{var} alone" + ("; pass floor='drop' to ignore it"
                                                   if a == 0 else ""))
            continue
        sol = _solve_monomials(c, a, e_sym, sp.Integer(0))
        sols.append((leading_exponent(sol, e_sym, 0, assume), sol, c * var**a))
    if not sols:
        raise ValueError(f"{expr} has no term decaying in {var}")
    top = -_max([-s[0] for s in sols], assume, "the solutions")
    chosen = [s for s in sols if sp.simplify((s[0] - top).subs(assume or {})) == 0]
    return Inversion(solution=sp.Add(*[s[1] for s in chosen]), eps_exponent=top,
                     binding=tuple(s[2] for s in chosen), compatible=tuple(compatible),
                     dropped=tuple(dropped))


def epsilon_exponent(expr: Any, var: str | sp.Symbol, eps: str | sp.Symbol = "epsilon",
                     floor: str = "raise", assume: Mapping | None = None) -> sp.Expr:
    """The ``ε``-exponent of ``var(ε)`` (:func:`invert`): ``1/√(nK) + 1/K → −2``."""
    return invert(expr, var, eps, floor, assume).eps_exponent


def inverse_exponent_in(expr: Any, var: str | sp.Symbol, eps: str | sp.Symbol,
                        other: str | sp.Symbol, floor: str = "raise",
                        assume: Mapping | None = None) -> sp.Expr:
    """The exponent in ``other`` (as ``other → ∞``) of ``var(ε)``: ``κ^{5/2}/√(nK) + κ³/K``
    gives ``K(ε) ≍ κ⁵ε^{−2}/n``: ``−1`` in ``n`` (linear speedup), ``5`` in ``κ``."""
    expr = _expr(expr)
    inv = invert(expr, var, eps, floor, assume)
    return leading_exponent(inv.solution, _sym_of(expr, other), sp.oo, assume)


def geometric_ratio(expr: Any, var: str | sp.Symbol) -> sp.Expr:
    """``r`` of a bias ``c·r^N``: ``expr(N+1)/expr(N)`` simplified; ``ValueError`` if it still
    depends on ``N`` (not geometric)."""
    expr = _expr(expr)
    var = _sym_of(expr, var)
    ratio = sp.simplify(sp.powsimp(sp.expand_power_exp(expr.subs(var, var + 1) / expr),
                                   force=True))
    if ratio.has(var):
        raise ValueError(f"{expr} is not geometric in {var}: ratio {ratio}")
    return sp.factor(ratio)


def log_ratio(expr: Any, var: str | sp.Symbol) -> sp.Expr:
    """``log r`` (natural log): the semilog slope ``d log(bias)/dN`` of a geometric law."""
    return sp.log(geometric_ratio(expr, var))


def crossovers(expr: Any, var: str | sp.Symbol) -> list[tuple[sp.Expr, sp.Expr, sp.Expr]]:
    """Where the dominant term changes: ``[(var*, a_above, a_below)]`` for adjacent exponent
    groups (largest exponent first); below ``var*`` the group with the smaller exponent
    (steeper decay) is the larger.  ``κ⁴/K + κ^{5/2}/√K → [(κ³, −1/2, −1)]``.  Only adjacent
    groups are balanced: a middle group that is never dominant still appears."""
    expr = _expr(expr)
    var = _sym_of(expr, var)
    groups = sorted(_groups(expr, var), key=lambda g: _sort_key(g[0]), reverse=True)
    out = []
    for (a1, g1), (a2, g2) in zip(groups, groups[1:]):
        c1, c2 = _monomial(g1, var, a1), _monomial(g2, var, a2)
        point = _solve_monomials(c1, a1, c2, a2)
        out.append((point, a1, a2))
    return out


def local_exponent(expr: Any, var: str | sp.Symbol, at: Any,
                   subs: Mapping | None = None) -> sp.Expr:
    """The log–log slope ``d log expr / d log var`` at ``var = at`` (after ``subs``): what a fit
    over a window around ``at`` measures before the asymptotic regime."""
    expr = _expr(expr)
    var = _sym_of(expr, var)
    slope = var * sp.diff(expr, var) / expr
    mapping = {_sym_of(expr, k): v for k, v in (subs or {}).items()}
    return sp.simplify(slope.subs(var, at).subs(mapping))


def minimize_rate(expr: Any, var: str | sp.Symbol, order: str | sp.Symbol | None = None
                  ) -> tuple[sp.Expr, sp.Expr]:
    """``(var*, value)`` minimizing ``expr`` over ``var`` up to constants: the minimum of a sum
    of powers is attained, up to a constant, where an increasing and a decreasing term balance,
    and its value is the largest such balance value (min–max duality in log space).  When
    several pairs compete, the largest value is chosen as ``order → ∞`` (required then).
    Terms constant in ``var`` join as floors.  MemFBO's [INFERRED] ``λ/T + λ^{3/2}(PT)^{−1/2}
    + 1/λ²`` gives ``λ* = (PT)^{1/7}`` and ``(PT)^{−2/7}`` (``order=T``)."""
    expr = _expr(expr)
    var = _sym_of(expr, var)
    groups = _groups(expr, var)
    up = [(a, _monomial(g, var, a)) for a, g in groups if a.is_positive]
    down = [(a, _monomial(g, var, a)) for a, g in groups if a.is_negative]
    flat = [g for a, g in groups if a == 0]
    if not up or not down:
        raise ValueError(f"{expr} is monotone in {var}: no interior minimum")
    cands = []
    for a1, c1 in up:
        for a2, c2 in down:
            point = _solve_monomials(c1, a1, c2, a2)
            value = sp.powsimp(sp.expand_power_base((c1 * var**a1).subs(var, point),
                                                    force=True), force=True)
            cands.append((point, value))
    cands += [(None, sp.sympify(f)) for f in flat]
    if len(cands) == 1:
        return cands[0]
    if order is None:
        raise ValueError("several balances compete: pass `order` (the variable → ∞)")
    o = _sym_of(expr, order)
    exps = [leading_exponent(v, o) for _, v in cands]
    top = _max(exps, None, "the balance values")
    best = [c for c, e in zip(cands, exps) if sp.simplify(e - top) == 0]
    point = next((b[0] for b in best if b[0] is not None), None)
    return point, sp.Add(*[b[1] for b in best])


# ---------------------------------------------------------------------------------------------
# Law
# ---------------------------------------------------------------------------------------------


# :class:`Law` lives in :mod:`bilevel_theory.law` (sympy-free), imported above.


Prediction = Law  # the former name of a derived law


KINDS = ("exponent", "exponent_at_order", "epsilon_exponent", "inverse_exponent", "log_ratio",
         "exact", "bound")


def _num(value: sp.Expr, subs: Mapping | None, b: Bound) -> float:
    mapping = {_sym_of(b.expr, k): v for k, v in (subs or {}).items()}
    val = sp.sympify(value).subs(mapping)
    if val.free_symbols:
        raise ValueError(f"bound {b.name}: the prediction {value} needs values for "
                         f"{sorted(s.name for s in val.free_symbols)} (pass `subs`)")
    return float(val)


def law_for(bound_name: str | Bound, kind: str, var: str | None = None, *,
            second: str | None = None, eps: str = "epsilon", other: str | None = None,
            at: Any = sp.oo, subs: Mapping | None = None, floor: str = "raise",
            assume: Mapping | None = None) -> Law:
    """Derive a claim's :class:`Law` from a registered bound.

    Kinds (→ claim kinds): ``exponent`` (leading exponent in ``var``; ``at=0`` for ``var → 0``)
    and ``exponent_at_order`` (exponent in ``second`` of the dominant term in ``var``) for
    ``matches``/``at_most``/``contrast``; ``epsilon_exponent`` (``ε``-exponent of ``var(ε)``)
    and ``inverse_exponent`` (exponent in ``other`` of ``var(ε)``) for complexities;
    ``log_ratio`` (natural log of the geometric ratio in ``var``: the semilog slope) for
    ``geometric``; ``exact`` (the expression at ``subs``) for counts; ``bound`` (``nan``) for
    ``bounded_by``.  ``subs`` gives numbers to the remaining symbols where a float is needed.
    """
    b = _bound(bound_name)
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    v = b.symbol(var) if var is not None else None
    if kind != "bound" and kind != "exact" and v is None:
        raise ValueError(f"kind {kind!r} needs `var`")
    where = "var → 0" if at in (0, "0") else "var → ∞"
    if kind == "exponent":
        sym = leading_exponent(b.expr, v, at, assume)
        how = (f"leading exponent in {v} of the bound ({where.replace('var', str(v))}, other "
               f"symbols fixed; log factors lower order): {sym}")
    elif kind == "exponent_at_order":
        s2 = b.symbol(second)
        sym = exponent_at_order(b.expr, v, s2, at, assume=assume)
        part = dominant_part(b.expr, v, at, assume)
        how = f"exponent in {s2} of the dominant term in {v} ({sp.sstr(part)}): {sym}"
    elif kind in ("epsilon_exponent", "inverse_exponent"):
        inv = invert(b.expr, v, b.symbol(eps) if eps in b.symbols else eps, floor, assume)
        if kind == "epsilon_exponent":
            sym = inv.eps_exponent
            how = f"ε-exponent of {v}(ε) ≍ {sp.sstr(inv.solution)}"
        else:
            o = b.symbol(other)
            sym = leading_exponent(inv.solution, o, sp.oo, assume)
            how = f"exponent in {o} of {v}(ε) ≍ {sp.sstr(inv.solution)}"
        how += (f", by asymptotic inversion of bound({v}) = ε as ε → 0 (binding term "
                f"{', '.join(sp.sstr(t) for t in inv.binding)}): {sym}")
        if inv.dropped:
            how += f"; floors ignored: {', '.join(sp.sstr(t) for t in inv.dropped)}"
    elif kind == "log_ratio":
        r = geometric_ratio(b.expr, v)
        sym = sp.log(r)
        how = (f"semilog slope: log of bound({v}+1)/bound({v}) = {sp.sstr(r)}"
               + (f" at {dict(subs)}" if subs else ""))
    elif kind == "exact":
        sym = b.expr
        how = f"count {sp.sstr(b.expr)}" + (f" at {dict(subs)}" if subs else "")
    else:
        return Law(float("nan"), b.latex(), f"explicit bound {b.name}", b.expr)
    value = _num(sym, subs, b)
    if kind == "exact":
        how += f" = {value:g}"
    return Law(value, b.latex(), f"{b.source}: {how}", sym)



# ---------------------------------------------------------------------------------------------
# Registry: the papers' bounds, collected from their algorithm modules on first use
# ---------------------------------------------------------------------------------------------

PAPER_MODULES: list[str] = ["bilevel_theory.gao", "bilevel_theory.fedmbo",
                            "bilevel_theory.fednest", "bilevel_theory.memfbo",
                            "bilevel_theory.afbo"]


class _Bounds(Mapping):
    """name → :class:`Bound`, gathered from ``bounds()`` of every module in
    :data:`PAPER_MODULES` the first time it is read (importing sympy-free algorithm modules
    stays cheap)."""

    def __init__(self) -> None:
        self._data: dict[str, Bound] | None = None

    def _load(self) -> dict[str, Bound]:
        if self._data is None:
            data: dict[str, Bound] = {}
            for module in PAPER_MODULES:
                _collect(data, module)
            self._data = data
        return self._data

    def __getitem__(self, name: str) -> Bound:
        return self._load()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def __contains__(self, name: object) -> bool:
        return name in self._load()

    def __repr__(self) -> str:
        return f"BOUNDS({sorted(self._load())})"


def _collect(data: dict[str, Bound], module: str) -> None:
    mod = importlib.import_module(module)
    if not callable(getattr(mod, "bounds", None)):
        raise ValueError(f"module {module} has no `bounds()` function returning its Bounds")
    for b in mod.bounds():
        if not isinstance(b, Bound):
            raise TypeError(f"{module}.bounds() returned {type(b).__name__}, not a Bound")
        if b.name in data:
            raise ValueError(f"duplicate bound {b.name}")
        data[b.name] = b


BOUNDS: Mapping[str, Bound] = _Bounds()


def register_bounds(module: str) -> None:
    """Add the bounds of ``module`` (it defines ``bounds() -> list[Bound]``) to :data:`BOUNDS`;
    e.g. a third-party paper's algorithm module."""
    if module in PAPER_MODULES:
        return
    PAPER_MODULES.append(module)
    if BOUNDS._data is not None:  # already collected: add this module's now
        _collect(BOUNDS._data, module)


def neumann_N_for(var: sp.Symbol, power: sp.Expr, kap: sp.Symbol) -> sp.Expr:
    """``N`` with ``((κ−1)/κ)^{2N} = var^{−power}``: ``N = power·log(var)/(2 log(κ/(κ−1)))
    ≈ (power·κ/2) log var`` — a constant chosen inside the papers' ``N = O(κ log K)``."""
    return power * sp.log(var) / (2 * sp.log(kap / (kap - 1)))
