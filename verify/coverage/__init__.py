"""Coverage map: which of the five papers' stated results the claims catalogue tests.

* :mod:`.model`: :class:`Result` and :class:`Inventory` (one inventory per paper, in
  ``inventory/<paper>.py``; plug-ins add theirs with an entry point in the group
  ``bilevel_theory.inventory``);
* :mod:`.mapping`: each result's claims, swept variables and status, computed, and why an
  open one is open (its ``gap``, checked against the status);
* :mod:`.render`: ``docs/coverage.md``, the ``bilevel-theory coverage`` tables, JSON;
* ``python3 -m bilevel_theory.verify.coverage --write`` regenerates ``docs/coverage.md``,
  ``--check`` exits 1 when it is out of sync.
"""

from __future__ import annotations

from .mapping import (
    ENTRY_POINT_GROUP,
    Assessed,
    assess,
    check_gaps,
    counts,
    coverage,
    inventories,
    package_inventories,
    status_of,
)
from .model import CANONICAL, GAPS, KINDS, Inventory, Result

__all__ = ["CANONICAL", "ENTRY_POINT_GROUP", "GAPS", "KINDS", "Assessed", "Inventory",
           "Result", "assess", "check_gaps", "counts", "coverage", "inventories", "package_inventories", "status_of"]
