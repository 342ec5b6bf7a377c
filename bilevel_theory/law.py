"""The :class:`Law` a claim is judged against: what a theorem predicts, as plain data.

Derived from a paper's bound by :func:`bilevel_theory.rates.law_for` (cached on disk by
:mod:`bilevel_theory.law_cache`); kept apart from that sympy engine so that reading a law
(``list``, ``show``, reports) does not import sympy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Law:
    """What the theorem predicts for one claim, derived from a :class:`Bound`.

    Attributes:
        value: the predicted slope (``matches``/``at_most``/``contrast``: log–log exponent in
            the swept variable; ``geometric``: the log of the ratio per unit of the variable,
            i.e. the semilog slope; ``exact``: the count; ``bounded_by``: unused, ``nan``).
        latex: LaTeX of the bound (rendered in reports).
        derivation: one sentence on how ``value`` was derived (e.g. "leading exponent in K").
        symbolic: the exact sympy value (or ``None``); not part of equality, hash or repr.
    """

    value: float
    latex: str
    derivation: str
    symbolic: Any = field(default=None, compare=False, hash=False, repr=False)

    def as_tuple(self) -> tuple[float, str, str]:
        """``(value, latex, derivation)``."""
        return (self.value, self.latex, self.derivation)
