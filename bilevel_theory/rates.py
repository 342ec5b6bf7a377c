"""The papers' rate statements as sympy expressions, and the derivation of each claim's
prediction from them (DESIGN §6).

Every stated bound is a :class:`Bound` (registry :data:`BOUNDS`): a sympy expression in its own
variables, all symbols positive, with its source (seed file, result, tag ``[TEXT]`` /
``[INFERRED]``), assumptions and the ``PAPERS.md`` ``[NOTE]`` readings taken.  Predictions are
**derived** from the expressions, never typed in:

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
* :func:`law_for` — ``(value, latex, derivation)`` for ``verify.claim.Law``.

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
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

__all__ = [
    "BOUNDS", "Bound", "Inversion", "Prediction", "SYMBOLS", "balance_point", "crossovers",
    "dominant_part", "epsilon_exponent", "exponent_at_order", "geometric_ratio",
    "inverse_exponent_in", "invert", "latex", "law_for", "leading_exponent", "local_exponent",
    "log_ratio", "minimize_rate", "term_exponents",
]

SEEDS = {
    "gao": "000_6161989d6a694e0b.txt",
    "fedmbo": "001_2f8be2fcf2864762.txt",
    "memfbo": "002_b6f11017dbb055c6.txt",
    "fednest": "003_fe066b2efcc14b72.txt",
    "afbo": "004_c02b3253ce8088b2.txt",
}
PAPERS = {
    "gao": "Gao 2022", "fedmbo": "FedMBO 2023", "memfbo": "MemFBO 2025",
    "fednest": "FedNest 2022", "afbo": "AFBO",
}

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
        source: ``"<seed file>, <result> [TEXT]"`` (or ``[INFERRED]``).
        expr: the right-hand side; every symbol is positive.
        quantity: LaTeX of the bounded quantity (left-hand side).
        relation: ``"O"`` (up to constants), ``"le"`` (explicit) or ``"eq"`` (exact count).
        variables: the bound's own variables, name → meaning (what a claim sweeps).
        assumptions: conditions the statement needs (in words).
        notes: the ``[NOTE]``/``[INFERRED]`` readings taken, schedules substituted.
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
# Law helper
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prediction:
    """What ``verify.claim.Law`` needs (``value``, ``latex``, ``derivation``), plus the exact
    sympy value.  ``Law(*prediction.as_tuple())`` builds the law."""

    value: float
    latex: str
    derivation: str
    symbolic: Any = None

    def as_tuple(self) -> tuple[float, str, str]:
        return (self.value, self.latex, self.derivation)


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
            assume: Mapping | None = None) -> Prediction:
    """Derive a claim's prediction from a registered bound.

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
        return Prediction(float("nan"), b.latex(), f"explicit bound {b.name}", b.expr)
    value = _num(sym, subs, b)
    if kind == "exact":
        how += f" = {value:g}"
    return Prediction(value, b.latex(), f"{b.source}: {how}", sym)


# ---------------------------------------------------------------------------------------------
# The bounds
# ---------------------------------------------------------------------------------------------

BOUNDS: dict[str, Bound] = {}


def _add(b: Bound) -> Bound:
    if b.name in BOUNDS:
        raise ValueError(f"duplicate bound {b.name}")
    BOUNDS[b.name] = b
    return b


def _src(paper: str, result: str, tag: str = "[TEXT]") -> str:
    return f"{SEEDS[paper]}, {result} {tag}"


_R = sp.Rational
_STAT = r"\frac{1}{K}\sum_{k} \mathbb{E}\|\nabla f(x^k)\|^2"
_STAT_T = r"\frac{1}{T}\sum_{t} \mathbb{E}\|\nabla f(x^t)\|^2"
_GAO_Q = (r"\frac{1}{T}\sum_t \left(\|\nabla\Phi(\bar x_t)\|^2 + \tilde L^2"
          r"\|\bar y_t - y^*(\bar x_t)\|^2\right)")
_RHO = r"(\kappa_g - 1)/\kappa_g"


def _neumann_N_for(var: sp.Symbol, power: sp.Expr, kap: sp.Symbol) -> sp.Expr:
    """``N`` with ``((κ−1)/κ)^{2N} = var^{−power}``: ``N = power·log(var)/(2 log(κ/(κ−1)))
    ≈ (power·κ/2) log var`` — a constant chosen inside the papers' ``N = O(κ log K)``."""
    return power * sp.log(var) / (2 * sp.log(kap / (kap - 1)))


# --- Gao 2022 -------------------------------------------------------------------------------

gao_delta_q = _add(Bound(
    "gao.neumann_bias", PAPERS["gao"], _src("gao", "§3 truncation bias Δ_Q"),
    (1 - theta * mu) ** (Q + 1) * L0 * L1 / mu, r"\Delta_Q", "le",
    {"Q": "Neumann terms − 1"}, ("0 < θμ < 1 (θ < 1/L_1)",),
    ("Δ_Q = (1−θμ)^{Q+1} L_0 L_1/μ, consistent with ‖H^{-1} − Ĥ‖ ≤ (1−θμ)^{Q+1}/μ",)))

_gao_common = (2 * G**2 + 3 * delta**2, 2 * sigma**2 + 3 * delta**2)
_gao_thm1 = (
    2 * Delta / (eta * rho1 * T) + 20 * L_tilde**2 * D0 / (eta * T * rho2 * mu)
    + 4 * G**2 / (alpha * eta * T) + 500 * L_tilde**2 * sigma**2 / (3 * eta * T * beta * mu**2)
    + 4 * alpha * eta * sigma**2 / K + 500 * beta * eta * sigma**2 * L_tilde**2 / (3 * K * mu**2)
    + 4 * Delta_Q**2
    + 24 * alpha**2 * eta**4 * p**4 * (rho1**2 + rho2**2)
    * (2 * L_hat**2 + 500 * L1**2 * L_tilde**2 / (3 * mu**2)) * _gao_common[0]
    + 24 * beta**2 * eta**4 * p**4 * (rho1**2 + rho2**2)
    * (2 * L_hat**2 + 500 * L1**2 * L_tilde**2 / (3 * mu**2)) * _gao_common[1]
    + 24 * alpha**2 * p**2 * eta**2 * (rho1**2 + rho2**2)
    * (4 * L_hat**2 / alpha**2 + 500 * L1**2 * L_tilde**2 / (3 * beta**2 * mu**2)) * _gao_common[0]
    + 24 * beta**2 * p**2 * eta**2 * (rho1**2 + rho2**2)
    * (4 * L_hat**2 / alpha**2 + 500 * L1**2 * L_tilde**2 / (3 * beta**2 * mu**2)) * _gao_common[1]
)
gao_thm1 = _add(Bound(
    "gao.thm1", PAPERS["gao"], _src("gao", "Thm 1 (LocalBSGM)"), _gao_thm1, _GAO_Q, "le",
    {"T": "iterations", "K": "devices", "eta": "step η", "p": "communication period"},
    ("A1–A4", "θ < 1/L_1", "ρ_1, ρ_2, η as in Thm 1"),
    ("[NOTE] the last line of the bound, duplicated in the extraction, is kept once",
     "Δ_Q kept as a symbol (see gao.neumann_bias)")))

# Q + 1 = log(1/ε)/log(1/(1−θμ)) makes (1−θμ)^{Q+1} = ε: a constant chosen inside Q = O(log 1/ε)
_gao_Q_eps = sp.log(eps) / sp.log(1 - theta * mu) - 1
_gao_dq_eps = gao_delta_q.expr.subs(Q, _gao_Q_eps)
_GAO_Q_NOTE = ("Q + 1 = log(1/ε)/log(1/(1−θμ)) (so Δ_Q = ε L_0L_1/μ): a constant chosen inside "
               "Cor's Q = O(log(1/ε))")
_gao_eta1, _gao_p = c_eta * K * eps, c_p / (K * sp.sqrt(eps))
_gao_T1 = c_T * kappa**5 / (K * eps**2)
gao_thm1_rates = _add(gao_thm1.derive(
    "gao.thm1_cor1_steps", {"eta": _gao_eta1, "p": _gao_p, "rho_1": c_rho / kappa**5,
                            "Delta_Q": _gao_dq_eps},
    "Cor 1's η = c_η K ε, p = c_p/(K ε^{1/2}), Remark 1's ρ_1 = c_ρ/κ⁵ substituted; T free; "
    + _GAO_Q_NOTE, source=_src("gao", "Thm 1 with Cor 1's η, p, Q")))
gao_cor1 = _add(gao_thm1_rates.derive(
    "gao.cor1_schedule", {"T": _gao_T1}, "Cor 1's T = c_T κ⁵/(K ε²) substituted",
    source=_src("gao", "Thm 1 at Cor 1's schedule")))
gao_cor1_iter = _add(Bound(
    "gao.cor1_iterations", PAPERS["gao"], _src("gao", "Cor 1 / Remark 2 (iterations T)"),
    _gao_T1 / c_T, "T", "O", {"epsilon": "accuracy", "K": "devices", "kappa": "κ = L_1/μ"},
    notes=("iteration complexity = Cor 1's T schedule",)))
gao_cor1_comm = _add(Bound(
    "gao.cor1_communication", PAPERS["gao"], _src("gao", "Cor 1 / Remark 2 (T/p)"),
    (_gao_T1 / _gao_p) * c_p / c_T, "T/p", "O",
    {"epsilon": "accuracy", "kappa": "κ"},
    notes=("T/p computed from Cor 1's T and p schedules (K cancels: no speedup)",
           "[NOTE] p = 1/(Kε^{1/2}) > 1 needs K < ε^{−1/2}")))

_A = p / T + 1 / (K ** _R(2, 3) * T ** _R(2, 3))
_lnT = sp.log(T + 1)
_gao_thm2 = _A * (
    2 * Delta / rho1 + 4 * G**2 + 500 * L_tilde**2 * sigma**2 / (3 * mu**2) + 32 * sigma**2 * _lnT
    + 4000 * sigma**2 * L_tilde**2 * _lnT / (3 * mu**2)
    + 4 * Delta_Q**2 * K ** _R(2, 3) * (T + 1) ** _R(2, 3)
    + 510 * (rho1**2 + rho2**2) * 96 * 8 * sigma**2 * L_tilde**2 * _lnT / mu**2
    + 510 * (rho1**2 + rho2**2) * 144 * 8 * delta**2 * L_tilde**2 * _lnT / mu**2)
gao_thm2 = _add(Bound(
    "gao.thm2", PAPERS["gao"], _src("gao", "Thm 2 (LocalBSGVRM)"), _gao_thm2, _GAO_Q, "le",
    {"T": "iterations", "K": "devices", "p": "communication period"},
    ("A1–A4", "α, β, η_t, ρ, p, S as in Thm 2"),
    ("A = p/T + 1/(K^{2/3}T^{2/3})", "Δ_Q kept as a symbol (see gao.neumann_bias)")))
_gao_T2 = c_T * kappa**3 / (K * eps ** _R(3, 2))
gao_thm2_rates = _add(gao_thm2.derive(
    "gao.thm2_cor2_steps", {"p": _gao_p, "Delta_Q": _gao_dq_eps},
    "Cor 2's p = c_p/(K ε^{1/2}) substituted; T free; " + _GAO_Q_NOTE,
    source=_src("gao", "Thm 2 with Cor 2's p, Q")))
gao_cor2 = _add(gao_thm2_rates.derive(
    "gao.cor2_schedule", {"T": _gao_T2}, "Cor 2's T = c_T κ³/(K ε^{3/2}) substituted",
    source=_src("gao", "Thm 2 at Cor 2's schedule")))
gao_cor2_iter = _add(Bound(
    "gao.cor2_iterations", PAPERS["gao"], _src("gao", "Cor 2 / Remark 4 (iterations T)"),
    _gao_T2 / c_T, "T", "O", {"epsilon": "accuracy", "K": "devices", "kappa": "κ"},
    notes=("iteration complexity = Cor 2's T schedule",
           "[NOTE] Thm 2's α = O(L̂²/K) vs Cor 2's O(L̂²/K²); Thm 2 bounds p by a constant")))
gao_cor2_comm = _add(Bound(
    "gao.cor2_communication", PAPERS["gao"], _src("gao", "Cor 2 / Remark 4 (T/p)"),
    (_gao_T2 / _gao_p) * c_p / c_T, "T/p", "O",
    {"epsilon": "accuracy", "kappa": "κ"},
    notes=("T/p computed from Cor 2's T and p schedules (K cancels)",)))

# --- FedMBO 2023 ----------------------------------------------------------------------------

_b_text = kappa_g * ell_f1 * ((kappa_g - 1) / kappa_g) ** N
fedmbo_prop1 = _add(Bound(
    "fedmbo.prop1_bias", PAPERS["fedmbo"], _src("fedmbo", "Prop 1"), _b_text,
    r"\|\bar H(x^k, y^{k+1}) - \bar\nabla f(x^k, y^{k+1})\|", "le",
    {"N": "Neumann truncation", "kappa_g": "κ_g = ℓ_{g,1}/μ_g"}, ("A1–A4", "κ_g ≥ 1"),
    ("b as stated, with ℓ_{f,1}",)))
fedmbo_prop1_proof = _add(Bound(
    "fedmbo.prop1_bias_proof", PAPERS["fedmbo"], _src("fedmbo", "Prop 1 (appendix proof)"),
    kappa_g * ell_f0 * (1 - 1 / kappa_g) ** N, fedmbo_prop1.quantity, "le",
    {"N": "Neumann truncation", "kappa_g": "κ_g"}, ("A1–A4", "κ_g ≥ 1"),
    ("[NOTE] the proof derives ℓ_{f,0}ℓ_{g,1}/μ_g (1 − μ_g/ℓ_{g,1})^N: ℓ_{f,0}, not the "
     "statement's ℓ_{f,1}; same ratio in N",)))
fedmbo_prop2_var = _add(Bound(
    "fedmbo.prop2_variance", PAPERS["fedmbo"], _src("fedmbo", "Prop 2 (σ̃_f²)"),
    sigma_f**2 + 3 / mu_g**2 * ((sigma_f**2 + ell_f0**2) * (sigma_g2**2 + 2 * ell_g1**2)
                                + sigma_f**2 * ell_g1**2),
    r"\mathbb{E}\|H_i - \bar H\|^2", "le", {"ell_g1": "ℓ_{g,1} = κ_g μ_g"},
    notes=("stated O(κ_g²)",)))
fedmbo_prop2_mom = _add(Bound(
    "fedmbo.prop2_second_moment", PAPERS["fedmbo"], _src("fedmbo", "Prop 2 (D̃_f²)"),
    (ell_f0 + ell_f0 * ell_g1 / mu_g + ell_f1 * ell_g1 / mu_g) ** 2 + sigma_tf**2,
    r"\mathbb{E}[\|H_i\|^2 \mid \mathcal{F}^k]", "le", {"ell_g1": "ℓ_{g,1} = κ_g μ_g"},
    notes=("stated O(κ_g²); σ̃_f² kept as a symbol",)))
_add(fedmbo_prop2_var.derive("fedmbo.prop2_variance_kappa", {"ell_g1": kappa_g * mu_g},
                             "ℓ_{g,1} = κ_g μ_g", variables={"kappa_g": "condition number"}))
_add(fedmbo_prop2_mom.derive("fedmbo.prop2_second_moment_kappa", {"ell_g1": kappa_g * mu_g},
                             "ℓ_{g,1} = κ_g μ_g", variables={"kappa_g": "condition number"}))
fedmbo_prop3 = _add(Bound(
    "fedmbo.prop3_variance", PAPERS["fedmbo"], _src("fedmbo", "Prop 3"), sigma_tf**2 / n,
    r"\mathbb{E}\|\frac{1}{n}\sum_i (H_i - \bar{H})\|^2", "le", {"n": "sampled clients"},
    notes=("[NOTE] the proof samples clients with replacement (pairwise independent H_i)",)))
fedmbo_thm1 = _add(Bound(
    "fedmbo.thm1", PAPERS["fedmbo"], _src("fedmbo", "Thm 1"),
    (a_hat3 + 1 / a_hat3) / sp.sqrt(n * K) + 1 / (sp.Min(a_hat1, a_hat2) * K) + _b_text**2,
    _STAT, "O", {"K": "outer iterations", "n": "sampled clients", "N": "Neumann truncation"},
    ("A1–A5", "α_k = min{α̂_1, α̂_2, √(n/K) α̂_3}, β_{k,t} = β̄ α_k/T"),
    ("b = κ_g ℓ_{f,1}((κ_g−1)/κ_g)^N (Prop 1 as stated)",
     "[NOTE] the proof's extra O(α̂_3/(ST√(nK)) + ...) terms (eq. 22c) are not in the statement",
     "at fixed N the bound has the floor b²: exponent 0 in K")))
fedmbo_thm1_c1 = _add(fedmbo_thm1.derive(
    "fedmbo.thm1_cor1_constants",
    {"alpha_hat1": kappa_g**-3, "alpha_hat2": T * kappa_g**-3, "alpha_hat3": kappa_g ** _R(-5, 2),
     "N": _neumann_N_for(K, 1, kappa_g)},
    "Cor 1's proof constants α̂_1 = κ_g^{−3}, α̂_2 = Tκ_g^{−3}, α̂_3 = κ_g^{−5/2}; N = log K/"
    "(2 log(κ_g/(κ_g−1))) ≈ (κ_g/2) log K so b² = κ_g²ℓ_{f,1}²/K (a constant inside "
    "N = Ω(κ_g log K); [NOTE] b = K^{−1/4} would give b² = K^{−1/2} and cancel the speedup)",
    source=_src("fedmbo", "Thm 1 with Cor 1's constants"),
    variables={"K": "outer iterations", "n": "sampled clients", "kappa_g": "κ_g"}))
fedmbo_cor1 = _add(Bound(
    "fedmbo.cor1", PAPERS["fedmbo"], _src("fedmbo", "Cor 1"),
    kappa_g ** _R(5, 2) / sp.sqrt(n * K) + kappa_g**3 / K
    + kappa_g ** _R(7, 2) * sp.sqrt(n) / K ** _R(3, 2),
    _STAT, "O", {"K": "outer iterations", "n": "sampled clients", "kappa_g": "κ_g"},
    ("N = Ω(κ_g log K)", "ST = Ω(κ_g⁴)"),
    ("[NOTE] 'ST = Ω(κ_q⁴)' read as κ_g",)))
fedmbo_cor1_iter = _add(Bound(
    "fedmbo.cor1_iterations", PAPERS["fedmbo"], _src("fedmbo", "Cor 1 (K(ε))"),
    kappa_g**5 * eps**-2 / n, "K", "O",
    {"epsilon": "accuracy", "n": "sampled clients", "kappa_g": "κ_g"},
    notes=("stated K = O(κ_g⁵ ε^{−2}/n); rederived by inverting fedmbo.cor1",)))

# --- FedNest 2022 ---------------------------------------------------------------------------

_geo = ((kappa_g - 1) / kappa_g) ** N
fednest_l22 = _add(Bound(
    "fednest.lemma22_bias", PAPERS["fednest"], _src("fednest", "Lemma 2.2 (IHGP bias)"),
    _geo / mu_g, r"\|[\nabla^2_y g]^{-1} - \mathbb{E}_W[\hat H_y]\|", "le",
    {"N": "Neumann truncation", "kappa_g": "κ_g"}, ("A1–A2", "κ_g ≥ 1")))
fednest_b = _add(Bound(
    "fednest.lemma22_b", PAPERS["fednest"], _src("fednest", "Lemma 2.2 (b)"),
    kappa_g * ell_f1 * _geo, r"\|\mathbb{E}_W[h_i^I] - \bar\nabla^I f_i\|", "le",
    {"N": "Neumann truncation", "kappa_g": "κ_g"}, ("A1–A2", "κ_g ≥ 1")))
_add(Bound(
    "fednest.lemma22_second", PAPERS["fednest"], _src("fednest", "Lemma 2.2 (second bound)"),
    2 / mu_g, r"\mathbb{E}_W\|[\nabla^2_y g]^{-1} - \hat H_y\|", "le"))
fednest_rounds = _add(Bound(
    "fednest.rounds_fednest", PAPERS["fednest"], _src("fednest", "§3 rounds per epoch"),
    2 * T + N + 3, r"\mathrm{rounds\ per\ epoch\ (FedNest)}", "eq",
    {"T": "inner FedInn calls", "N": "Neumann steps"},
    notes=("[NOTE] N + 3 matches the official code (fixed `neumann` iterations); the random "
           "N' ≤ N−1 would give at most N + 2",)))
lfednest_rounds = _add(Bound(
    "fednest.rounds_lfednest", PAPERS["fednest"], _src("fednest", "§3 rounds per epoch"),
    T + 1, r"\mathrm{rounds\ per\ epoch\ (LFedNest)}", "eq", {"T": "inner FedInn (SGD) calls"}))
fednest_thm31 = _add(Bound(
    "fednest.thm31", PAPERS["fednest"], _src("fednest", "Thm 3.1"),
    a_bar * sp.Max(sigma_g1**2, sigma_g2**2, sigma_f**2) / sp.sqrt(K)
    + 1 / (sp.Min(a_bar1, a_bar2, a_bar3) * K) + (kappa_g * ell_f1 * _geo) ** 2,
    _STAT, "O", {"K": "outer iterations", "N": "Neumann truncation"},
    ("Assumptions A and B", "α_k = min{ᾱ_1, ᾱ_2, ᾱ_3, ᾱ/√K}, β_k = β̄α_k/T"),
    ("literal statement: no Δ/(ᾱ√K) term ([NOTE]: apparently omitted; exponents unchanged)",
     "at fixed N the bound has the floor b²: exponent 0 in K")))
_add(fednest_thm31.derive(
    "fednest.thm31_cor31_N", {"N": _neumann_N_for(K, 1, kappa_g)},
    "N = log K/(2 log(κ_g/(κ_g−1))) ≈ (κ_g/2) log K so b² = κ_g²ℓ_{f,1}²/K: a constant inside "
    "Cor 3.1's N = O(κ_g log K) ([NOTE] a lower bound)",
    source=_src("fednest", "Thm 3.1 with Cor 3.1's N"), variables={"K": "outer iterations"}))
fednest_cor31 = _add(Bound(
    "fednest.cor31", PAPERS["fednest"], _src("fednest", "Cor 3.1 (bilevel)"),
    kappa_g**4 / K + kappa_g ** _R(5, 2) / sp.sqrt(K), _STAT, "O",
    {"K": "outer iterations", "kappa_g": "κ_g"}, ("N = O(κ_g log K)", "T = O(κ_g⁴)"),
    ("[NOTE] N and T are lower bounds (N ∝ κ_g log K, T ≳ κ_g⁴)",
     "the 1/K term dominates for K < κ_g³ (crossovers)")))
fednest_cor32 = _add(Bound(
    "fednest.cor32", PAPERS["fednest"], _src("fednest", "Cor 3.2 (minimax)"),
    kappa_f**2 / K + kappa_f / sp.sqrt(K), _STAT, "O",
    {"K": "outer iterations", "kappa_f": "κ_f = ℓ_{f,1}/μ_f"}, ("g_i = −f_i, b = 0",
                                                                "T = O(κ_f)")))
fednest_cor33 = _add(Bound(
    "fednest.cor33", PAPERS["fednest"], _src("fednest", "Cor 3.3 (compositional)"),
    1 / sp.sqrt(K), _STAT, "O", {"K": "outer iterations"}, ("b = 0, κ_g = 1", "T = 1")))
fednest_thm32 = _add(Bound(
    "fednest.thm32", PAPERS["fednest"], _src("fednest", "Thm 3.2 (single level)"),
    Delta_f / (a_bar1 * K) + (Delta_f / a_bar + a_bar * sigma_f**2) / sp.sqrt(K), _STAT, "O",
    {"K": "outer iterations"}, ("Assumptions C, D", "α_k = min{ᾱ_1, ᾱ/√K}")))

# --- MemFBO 2025 ----------------------------------------------------------------------------

_NOTE_MEM = ("[NOTE] the corollary swaps its names: T counts rounds (communication), PτT "
             "samples")
memfbo_gap = _add(Bound(
    "memfbo.penalty_gap", PAPERS["memfbo"], _src("memfbo", "§4 penalty gap"),
    C_lam / lam, r"\|\nabla L^*_\lambda(x) - \nabla\Phi(x)\|", "O", {"lambda": "multiplier λ"},
    notes=("stated O(1/λ) without constants (appendix unavailable); C_λ a constant",)))
memfbo_part_T = _add(Bound(
    "memfbo.cor512_partial_rounds", PAPERS["memfbo"], _src("memfbo", "Cor 5.12 (partial)"),
    P**-1 * eps ** _R(-7, 2), "T", "O", {"epsilon": "accuracy", "P": "sampled clients"},
    ("τ = O(1)",), (_NOTE_MEM,)))
memfbo_full_T = _add(Bound(
    "memfbo.cor512_full_rounds", PAPERS["memfbo"], _src("memfbo", "Cor 5.12 (full)"),
    eps ** _R(-3, 2), "T", "O", {"epsilon": "accuracy"},
    ("P = n (or P ≥ (τ−1)n/τ + 1)", "τ = O(P^{−1}T^{4/3})"), (_NOTE_MEM,)))
memfbo_samples = _add(Bound(
    "memfbo.cor512_samples", PAPERS["memfbo"], _src("memfbo", "Cor 5.12 (PτT)"),
    eps ** _R(-7, 2), r"P\tau T", "O", {"epsilon": "accuracy"}, notes=(_NOTE_MEM,)))
memfbo_rate_part = _add(Bound(
    "memfbo.rate_partial", PAPERS["memfbo"], _src("memfbo", "Thm 5.11 (partial)", "[INFERRED]"),
    (P * T) ** _R(-2, 7), r"\min_t \mathbb{E}\|\nabla\Phi(x^t)\|^2", "O",
    {"T": "rounds", "P": "sampled clients"}, ("τ = O(1)",),
    ("[INFERRED] from the extracted 'O(P 2' and Cor 5.12's T = P^{−1}ε^{−3.5}",)))
memfbo_rate_full = _add(Bound(
    "memfbo.rate_full", PAPERS["memfbo"], _src("memfbo", "Thm 5.11 (full)", "[INFERRED]"),
    (P * tau * T) ** _R(-2, 7) + T ** _R(-2, 3), r"\min_t \mathbb{E}\|\nabla\Phi(x^t)\|^2", "O",
    {"T": "rounds", "P": "clients", "tau": "local steps"}, (),
    ("[INFERRED] stochastic (PτT)^{−2/7} plus the deterministic λ/T + 1/λ² floor T^{−2/3}",)))
_add(memfbo_rate_full.derive(
    "memfbo.rate_full_tau_max", {"tau": c_tau * T ** _R(4, 3) / P},
    "Cor 5.12's τ = c_τ P^{−1}T^{4/3} substituted", variables={"T": "rounds"}))
_add(Bound(
    "memfbo.balance_partial", PAPERS["memfbo"], _src("memfbo", "rate balance", "[INFERRED]"),
    lam / T + lam ** _R(3, 2) * (P * T) ** _R(-1, 2) + lam**-2,
    r"\min_t \mathbb{E}\|\nabla\Phi(x^t)\|^2", "O",
    {"lambda": "multiplier λ", "T": "rounds", "P": "sampled clients"}, (),
    ("[INFERRED] plausible balance λ/T + λ^{3/2}(PT)^{−1/2} + 1/λ² (penalty bias O(1/λ²))",)))
_add(Bound(
    "memfbo.balance_full", PAPERS["memfbo"], _src("memfbo", "rate balance", "[INFERRED]"),
    lam / T + lam ** _R(3, 2) * (P * tau * T) ** _R(-1, 2) + lam**-2,
    r"\min_t \mathbb{E}\|\nabla\Phi(x^t)\|^2", "O",
    {"lambda": "multiplier λ", "T": "rounds", "P": "clients", "tau": "local steps"}, (),
    ("[INFERRED] as memfbo.balance_partial with P → Pτ (full participation)",)))

# --- AFBO -----------------------------------------------------------------------------------

_b_afbo = kappa_g * ell_f1 * (1 - 1 / kappa_g) ** N
afbo_aphe = _add(Bound(
    "afbo.aphe_bias", PAPERS["afbo"], _src("afbo", "Thm 4.1 b with U = m"),
    kappa_g * ell_f1 * (1 - 1 / kappa_g) ** m, r"b", "le",
    {"m": "clients = APHE truncation U", "kappa_g": "κ_g"}, ("κ_g ≥ 1",),
    ("[NOTE] the theorem writes N; APHE fixes U = m (deterministic truncation)",)))
_U2 = 1 + 4 * M_f * L_y * eta + alpha * L_y * D_hat**2 * eta**2 / 2
_U3 = L_y * eta**2 / (2 * alpha * m) + L_y * eta**2 / (2 * alpha * m)
_sig2 = sigma_g**2 + sigma_g1**2
_C = (2 * eta / mu_f * _b_afbo**2 + 6 * eta**2 / m * (D_hat * m * tau_bar + sigma_hat + 4 * D_hat)
      + (2 * eta**2 + L_f * U_1 / mu_f) * D_hat / m
      + 4 * L_f * _U2 * _sig2 / (m * mu_f * E_t) * beta_sq + L_f * _U3 * sigma_hat / mu_f)
_AFBO_NOTES = ("constant η_t = η; Σ_i τ_i^t = m τ̄ (τ̄ the mean outer delay); Σ_k β_{t,k}² = B",
               "U_2 = 1 + 4M_fL_yη + αL_yD̂_f²η²/2; U_3 as written, the repeated term summed "
               "([NOTE])")
afbo_thm41a = _add(Bound(
    "afbo.thm41a", PAPERS["afbo"], _src("afbo", "Thm 4.1(a) (strongly convex)"),
    (1 - eta * mu_f) ** T * V0 + _C * (1 - (1 - eta * mu_f) ** (T - 1)) / (eta * mu_f),
    r"\mathbb{E}[V^T]", "le", {"T": "rounds", "eta": "step η", "m": "clients"},
    ("Assumptions 4.1–4.6", "η μ_f < 1"),
    (*_AFBO_NOTES, "[NOTE] '=' read as '≤'; U_1 and E^t undefined in the source (symbols)")))
afbo_thm41a_s = _add(afbo_thm41a.derive(
    "afbo.thm41a_cor41_schedule",
    {"U_1": u_1 * eta**2, "eta": 1 / sp.sqrt(T), "B_beta": 1 / T, "N": _neumann_N_for(T, 1, kappa_g)},
    "Cor 4.1's η = 1/√T, Σ_kβ² = K^tβ² = 1/T, N = log T/(2 log(κ_g/(κ_g−1))) (b² ∝ 1/T, a "
    "constant inside N = O(log T)); [INFERRED] U_1 = u_1η² (undefined; by analogy with U_3 = "
    "O(η²); a constant U_1 would make the bound grow as √T)",
    source=_src("afbo", "Thm 4.1(a) at Cor 4.1's schedule", "[INFERRED]"),
    variables={"T": "rounds", "m": "clients"}))
afbo_cor41_sc = _add(Bound(
    "afbo.cor41_strongly_convex", PAPERS["afbo"], _src("afbo", "Cor 4.1 (strongly convex)"),
    1 / T, r"\mathbb{E}\|x^T - x^*\|^2", "O", {"T": "rounds"}, ("η_t = 1/√T", "N = O(log T)"),
    ("the theorem at this schedule gives T^{−1/2} (afbo.thm41a_cor41_schedule)",)))
_thm41b = (2 / (eta * T) * W0 + _b_afbo**2
           + 8 / (eta * T) * T * (M_f * _U2 / L_y + eta * M_f**2 * _sig2) * beta_sq
           + 1 / (eta * T) * T * (3 * eta**2 * L_f / m + M_f * _U3 * sigma_hat / L_y) * sigma_hat
           + 1 / (eta * T) * T * (m * tau_bar + 4) * 3 * L_f * eta**2 * D_hat / m)
afbo_thm41b = _add(Bound(
    "afbo.thm41b", PAPERS["afbo"], _src("afbo", "Thm 4.1(b) (nonconvex)"), _thm41b, _STAT_T,
    "le", {"T": "rounds", "eta": "step η", "m": "clients", "tau_bar": "mean outer delay"},
    ("Assumptions 4.1–4.6", "η ≤ min{a_1, T/(2l_{g,1}a_2)}"),
    (*_AFBO_NOTES, "[NOTE] (σ_g² + σ_{g,1}²) read literally on the second bracket term only")))
afbo_thm41b_s = _add(afbo_thm41b.derive(
    "afbo.thm41b_cor41_schedule",
    {"eta": sp.sqrt(m / T), "B_beta": 1 / T, "N": _neumann_N_for(T, 1, kappa_g)},
    "Cor 4.1's η = √(m/T), Σ_kβ² = 1/T, N = log T/(2 log(κ_g/(κ_g−1))) (b² ∝ 1/T)",
    source=_src("afbo", "Thm 4.1(b) at Cor 4.1's schedule"),
    variables={"T": "rounds", "m": "clients", "tau_bar": "mean outer delay"}))
afbo_cor41_nc = _add(Bound(
    "afbo.cor41_nonconvex", PAPERS["afbo"], _src("afbo", "Cor 4.1 (nonconvex)"),
    1 / sp.sqrt(m * T) + 1 / (m * sp.sqrt(m * T)) + 1 / T, _STAT_T, "O",
    {"T": "rounds", "m": "clients"}, ("η_t = √(m/T)", "N = O(log T)"),
    ("the theorem at this schedule keeps 3L_fD̂_f τ̄ √(m/T) (afbo.thm41b_cor41_schedule)",)))
afbo_stale = _add(Bound(
    "afbo.staleness_term", PAPERS["afbo"], _src("afbo", "Thm 4.1(b) last term / Remark 2"),
    sp.simplify(1 / (eta * T) * T * (m * tau_bar + 4) * 3 * L_f * eta**2 * D_hat / m),
    r"\frac{1}{\bar{\eta} T}\sum_t \left(\sum_i \tau_i^t + 4\right)\frac{3L_f\eta_t^2\hat{D}_f}{m}",
    "le", {"tau_bar": "mean outer delay", "eta": "step η", "m": "clients"},
    notes=("constant η; Σ_i τ_i^t = m τ̄; the only delay-dependent term of the bound",)))

# --- AFBO: derived parts used by the redesigned claims (appended) --------------------------
tau_excess = _sym("tau_excess", r"\bar{\tau} - 1")
_stale_excess = sp.expand(afbo_stale.expr - afbo_stale.expr.subs(tau_bar, 1)).subs(
    tau_bar, 1 + tau_excess)
afbo_stale_excess = _add(Bound(
    "afbo.staleness_excess", PAPERS["afbo"],
    _src("afbo", "Thm 4.1(b) last term minus its synchronous value (AFBO-R11)"),
    sp.simplify(_stale_excess),
    r"\frac{1}{T}\sum_t \|\nabla\Phi(x^t)\|^2 - (\ldots)_{\tau_i^t = 1}", "le",
    {"tau_excess": "mean outer delay minus 1", "eta": "step η"},
    notes=("afbo.staleness_term at τ̄ minus at τ̄ = 1: the delay-dependent part of the bound",)))
afbo_cor41_nc_m_indep = _add(Bound(
    "afbo.cor41_nonconvex_m_independent", PAPERS["afbo"],
    _src("afbo", "Cor 4.1 (nonconvex), the m-independent part"),
    sp.limit(afbo_cor41_nc.expr, m, sp.oo), _STAT_T, "O", {"T": "rounds"},
    ("η_t = √(m/T)", "N = O(log T)"),
    ("lim_{m→∞} of afbo.cor41_nonconvex: the part of the bound that more clients do not "
     "reduce",)))
afbo_cor41_nc_m_dep = _add(Bound(
    "afbo.cor41_nonconvex_m_dependent", PAPERS["afbo"],
    _src("afbo", "Cor 4.1 (nonconvex), the m-dependent part"),
    sp.expand(afbo_cor41_nc.expr - afbo_cor41_nc_m_indep.expr), _STAT_T, "O",
    {"T": "rounds", "m": "clients"}, ("η_t = √(m/T)", "N = O(log T)"),
    ("afbo.cor41_nonconvex minus its m → ∞ limit: the linear-speedup terms",)))
afbo_sgd_floor = _add(Bound(
    "afbo.sgd_floor", PAPERS["afbo"],
    _src("afbo", "constant-step SGD floor at Cor 4.1's η = 1/√T", "[INFERRED]"),
    (eta * sigma**2 / (mu * (2 - eta * mu))).subs(eta, 1 / sp.sqrt(T)),
    r"\mathbb{E}\|x^T - x^*\|^2\ (\mathrm{lower\ bound})", "le",
    {"T": "rounds", "sigma": "noise std", "mu": "curvature"},
    ("x_{t+1} − x* = (1 − ημ)(x_t − x*) − ηξ_t, ξ_t independent, E‖ξ_t‖² = σ²",),
    ("the stationary E‖x_t − x*‖² = ησ²/(μ(2 − ημ)) of constant-step SGD on a μ-quadratic, "
     "a lower bound of order T^{−1/2} at η = 1/√T (lemma AFBO-L2)",)))
