"""From inventories and the claims catalogue to each result's coverage, computed, never stored.

A claim sweeps exactly one variable (``claim.variable``, in its paper's notation), mapped to a
canonical name by the result's ``sweeps``, else the inventory's ``claim_sweeps``, else its
``notation``; a two-way experiment also walks the variable the inventory's ``inner_sweeps``
gives it at every point of its grid.  A result's status: ``full`` when every variable of its
statement is swept by a confirmation or finding that names it, ``partial`` when some are,
``none`` when none are (a control says nothing about the paper and a defect tests the authors'
released code, not the paper's statement: both are listed but never count); ``n/a`` when it is
not checkable on quadratic instances.  A result that is checkable but not full names why in
its ``gap`` (one of :data:`~bilevel_theory.verify.coverage.model.GAPS`); a ``gap`` on a full
result is stale, and both are errors.
"""

from __future__ import annotations

import importlib
import pkgutil
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..claim import Claim
from .model import GAPS, Inventory, Result

ENTRY_POINT_GROUP = "bilevel_theory.inventory"
#: The roles whose claims count as coverage: both test the paper's statement.
COUNTED_ROLES = ("confirmation", "finding")
STATUSES = ("full", "partial", "none")
NOT_CHECKABLE = "n/a"


def _inventories_of(obj, origin: str) -> list[Inventory]:
    """Inventories from an :class:`Inventory`, a module with ``INVENTORY``, a list of them, or
    a callable returning any of these."""
    if isinstance(obj, types.ModuleType):
        if not hasattr(obj, "INVENTORY"):
            raise ValueError(f"{origin}: module has no INVENTORY")
        obj = obj.INVENTORY
    if callable(obj) and not isinstance(obj, Inventory):
        obj = obj()
    items = [obj] if isinstance(obj, Inventory) else obj
    if not isinstance(items, Iterable) or isinstance(items, str | bytes | Mapping):
        raise TypeError(f"{origin}: expected an Inventory, got {type(obj).__name__}")
    items = list(items)
    for item in items:
        if not isinstance(item, Inventory):
            raise TypeError(f"{origin}: expected Inventory objects, got {type(item).__name__}")
    return items


def package_inventories() -> list[Inventory]:
    """The five papers' inventories (``verify/coverage/inventory/<paper>.py``), by module."""
    from . import inventory as package  # noqa: PLC0415

    out: list[Inventory] = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        out += _inventories_of(module, module.__name__)
    return out


def plugin_inventories() -> list[Inventory]:
    """Installed packages' inventories: entry points in the group ``bilevel_theory.inventory``
    (each loads to an :class:`Inventory`, a module with ``INVENTORY``, a list, or a callable)."""
    from ..claims import loaded_entry_points  # noqa: PLC0415

    out: list[Inventory] = []
    for origin, loaded in loaded_entry_points(ENTRY_POINT_GROUP):
        out += _inventories_of(loaded, origin)
    return out


def inventories(plugins: bool = True) -> list[Inventory]:
    """The papers' inventories, then (``plugins``) the installed plug-ins'.  Two inventories
    with one key, or one result id twice, is an error."""
    out = package_inventories() + (plugin_inventories() if plugins else [])
    keys = [inv.key for inv in out]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise ValueError(f"two inventories share the key(s) {dup}")
    ids = [r.id for inv in out for r in inv.results]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ValueError(f"duplicate result ids across inventories: {dup}")
    return out


@dataclass(frozen=True)
class ClaimUse:
    """One claim naming a result: its role and expected verdict, its own swept symbol and the
    canonical variable that symbol is, the variable its measure walks at every grid point
    (``inner``, empty for a one-way sweep); ``counted``: whether it counts as coverage."""

    id: str
    role: str
    expected: str
    symbol: str
    sweeps: str
    inner: str = ""

    @property
    def counted(self) -> bool:
        return self.role in COUNTED_ROLES


def swept_variable(inventory: Inventory, result: Result, claim: Claim) -> str:
    """The canonical variable ``claim`` sweeps, as a test of ``result``."""
    if claim.id in result.sweeps:
        return result.sweeps[claim.id]
    if claim.id in inventory.claim_sweeps:
        return inventory.claim_sweeps[claim.id]
    if claim.variable in inventory.notation:
        return inventory.notation[claim.variable]
    raise ValueError(f"result {result.id}: claim {claim.id} sweeps {claim.variable!r}, which "
                     f"inventory {inventory.key!r} does not map to a canonical variable (add "
                     "it to `notation`)")


def status_of(variables: Iterable[str], swept: Iterable[str]) -> str:
    """``full``, ``partial`` or ``none``: how many of ``variables`` are in ``swept``."""
    variables, swept = list(variables), set(swept)
    covered = sum(v in swept for v in variables)
    return "full" if covered == len(variables) else "partial" if covered else "none"


@dataclass(frozen=True)
class Assessed:
    """A result with the claims that test it; its status and missing variables computed."""

    inventory: Inventory
    result: Result
    uses: tuple[ClaimUse, ...]

    @property
    def source(self) -> str:
        return self.inventory.source(self.result)

    @property
    def swept(self) -> tuple[str, ...]:
        """The statement's variables that a counted claim sweeps, in the statement's order."""
        done = {v for u in self.uses if u.counted for v in (u.sweeps, u.inner) if v}
        return tuple(v for v in self.result.variables if v in done)

    @property
    def status(self) -> str:
        if not self.result.checkable:
            return NOT_CHECKABLE
        return status_of(self.result.variables, self.swept)

    @property
    def missing(self) -> tuple[str, ...]:
        if not self.result.checkable:
            return ()
        return tuple(v for v in self.result.variables if v not in self.swept)


def assess(inventory: Inventory, claims: Mapping[str, Claim]) -> list[Assessed]:
    """Every result of ``inventory`` with the catalogue's claims it names; a claim id that is
    not in ``claims`` is an error naming the result."""
    out = []
    for result in inventory.results:
        uses = []
        for cid in result.claims:
            try:
                claim = claims[cid]
            except KeyError:
                raise ValueError(f"result {result.id} names claim {cid!r}, which is not in the "
                                 "catalogue") from None
            uses.append(ClaimUse(cid, claim.role, claim.expected, claim.variable,
                                 swept_variable(inventory, result, claim),
                                 inventory.inner_sweeps.get(cid, "")))
        out.append(Assessed(inventory, result, tuple(uses)))
    return out


def check_gaps(assessed: Iterable[Assessed]) -> list[Assessed]:
    """``assessed``, after checking that every ``partial`` or ``none`` result names its
    ``gap`` and that no full or not checkable one does (a stale gap)."""
    assessed = list(assessed)
    for a in assessed:
        open_ = a.status in ("partial", "none")
        if open_ and not a.result.gap:
            raise ValueError(f"result {a.result.id} is {a.status} (missing "
                             f"{', '.join(a.missing)}): name why in its `gap` "
                             f"({', '.join(GAPS)})")
        if not open_ and a.result.gap:
            raise ValueError(f"result {a.result.id} is {a.status}: its `gap` "
                             f"{a.result.gap!r} is stale")
    return assessed


def coverage(claims: Mapping[str, Claim] | None = None,
             inventory_list: Iterable[Inventory] | None = None) -> list[Assessed]:
    """Every result of every inventory, assessed against ``claims`` (default: the catalogue
    with plug-ins; inventories: the papers' and the plug-ins'), checked by :func:`check_gaps`."""
    if claims is None:
        from ..claims import CLAIMS as claims  # noqa: PLC0415
    invs = inventories() if inventory_list is None else list(inventory_list)
    return check_gaps(a for inv in invs for a in assess(inv, claims))


def _counts(group: list[Assessed]) -> dict:
    checkable = [a for a in group if a.result.checkable]
    return {"results": len(group), "checkable": len(checkable),
            **{s: sum(a.status == s for a in checkable) for s in STATUSES},
            "gaps": {g: sum(a.result.gap == g for a in checkable) for g in GAPS}}


def counts(assessed: Iterable[Assessed]) -> dict:
    """``{"papers": {key: {...}}, "overall": {...}}``: results, checkable, full, partial, none,
    the open ones by ``gap`` under ``"gaps"``, and the same for the headline results under
    ``"headline"``."""
    assessed = list(assessed)

    def block(group: list[Assessed]) -> dict:
        return {**_counts(group), "headline": _counts([a for a in group if a.result.headline])}

    papers: dict[str, list[Assessed]] = {}
    for a in assessed:
        papers.setdefault(a.inventory.key, []).append(a)
    return {"papers": {k: {"paper": g[0].inventory.paper, "citation": g[0].inventory.citation,
                           **block(g)} for k, g in papers.items()},
            "overall": block(assessed)}


def as_dict(a: Assessed) -> dict:
    """One result's row, for JSON and tables."""
    r = a.result
    return {"id": r.id, "paper": a.inventory.key, "kind": r.kind, "source": a.source,
            "statement": r.statement, "headline": r.headline, "checkable": r.checkable,
            "why_not": r.why_not, "variables": list(r.variables),
            "claims": [{"id": u.id, "role": u.role, "expected": u.expected, "symbol": u.symbol,
                        "sweeps": u.sweeps, "inner": u.inner, "counted": u.counted}
                       for u in a.uses],
            "swept": list(a.swept), "status": a.status, "missing": list(a.missing),
            "gap": r.gap, "reason": r.reason}
