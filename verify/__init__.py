"""Executable claims: sweeps, slope fits with bootstrap intervals, verdicts, results store."""

from .claim import BUDGETS, KINDS, VERDICTS, Claim, Law

__all__ = ["BUDGETS", "KINDS", "VERDICTS", "Claim", "Law"]
