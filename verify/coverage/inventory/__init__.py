"""The five papers' inventories: one module per paper, each defining ``INVENTORY``.

Plug-in packages add theirs with an entry point in the group ``bilevel_theory.inventory``
(see :func:`bilevel_theory.verify.coverage.inventories`).
"""
