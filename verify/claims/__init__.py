"""The claims catalogue: one module per paper, each defining ``CLAIMS = [Claim, ...]``.

The catalogue (:data:`CLAIMS`, ``id -> Claim``, collected on first use) is the union of

* every module of this package that does not start with ``_`` (and is not ``demo``): their
  ``CLAIMS`` lists (a module without ``CLAIMS`` is skipped; one that fails to import is an
  error, never skipped);
* every installed package's entry points in the group ``bilevel_theory.claims`` (each loads
  to a list or mapping of claims, a module with ``CLAIMS``, or a callable returning claims);
* claims added at run time with :func:`register_claims`.

A lookup by id, or :func:`select` with patterns whose text before the first ``.`` names a
paper (``"afbo.*"``, ``"fednest.bilevel_rate"``), imports only that paper's modules
(:data:`PREFIX_MODULES`), the modules missing from that map, the plug-ins and the registered
claims: ``bilevel-theory list 'afbo.*'`` does not import the other papers' claims.

``ID@MUTANT`` names claim ``ID`` under one of its mutants (:meth:`Claim.under`).  ``demo``
holds synthetic claims (``DEMO_CLAIMS``) with known truths, for the toolkit's own tests and as
examples; they are kept out of the papers' catalogue.

A *catalogue spec* names another collection of claims, ``"module:ATTRIBUTE"`` where the
attribute is a list of claims or a mapping ``id -> Claim``, e.g.
``"bilevel_theory.verify.claims.demo:DEMO_CLAIMS"`` (the CLI's ``--catalogue`` option and the
``BILEVEL_THEORY_CATALOGUE`` environment variable take such a spec).
"""

from __future__ import annotations

import difflib
import fnmatch
import importlib
import pkgutil
import types
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from importlib.metadata import entry_points

from ..claim import KINDS, MUTANT_SEP, ROLES, VERDICTS, Claim

EXCLUDED = ("demo",)
ENTRY_POINT_GROUP = "bilevel_theory.claims"


def resolve(claims: Mapping[str, Claim], key: str) -> Claim:
    """``claims[key]``, where ``ID@MUTANT`` names claim ``ID`` under its mutant (a KeyError
    when either is unknown)."""
    base, sep, mutant = str(key).partition(MUTANT_SEP)
    claim = dict.get(claims, base) if isinstance(claims, dict) else (
        _lookup(claims, base) if isinstance(claims, Catalogue) else None)
    if claim is None:
        raise KeyError(key)
    if not sep:
        return claim
    if mutant not in {m.name for m in claim.mutants}:
        raise KeyError(key)
    return claim.under(mutant)


def _lookup(catalogue: Catalogue, cid: str) -> Claim | None:
    """Claim ``cid`` of ``catalogue``, importing only its prefix's modules where it can."""
    claim = catalogue.narrowed({cid.lower().partition(".")[0]}).get(cid)
    return claim if claim is not None else catalogue._load().get(cid)


class Claims(dict):
    """``id -> Claim``; ``claims["ID@MUTANT"]`` gives claim ``ID`` under that mutant."""

    def __missing__(self, key: str) -> Claim:
        return resolve(self, key)


def _claims_of(obj, origin: str) -> Claims:
    """A :class:`Claims` mapping from a list/mapping of claims, a module with ``CLAIMS``, or a
    callable returning either."""
    if isinstance(obj, types.ModuleType):
        obj = getattr(obj, "CLAIMS", None)
        if obj is None:
            raise ValueError(f"{origin}: module has no CLAIMS")
    if callable(obj) and not isinstance(obj, Mapping | Claim):
        obj = obj()
    if isinstance(obj, Claim):
        obj = [obj]
    if isinstance(obj, Mapping):
        obj = list(obj.values())
    if not isinstance(obj, Iterable):
        raise TypeError(f"{origin}: expected claims, got {type(obj).__name__}")
    out = Claims()
    for c in obj:
        if not isinstance(c, Claim):
            raise TypeError(f"{origin}: expected Claim objects, got {type(c).__name__}")
        if c.id in out:
            raise ValueError(f"{origin}: duplicate claim id {c.id!r}")
        out[c.id] = c
    return out


_as_mapping = _claims_of

#: claims added with :func:`register_claims` (this process only)
_REGISTERED = Claims()


def register_claims(claims: Iterable[Claim] | Mapping[str, Claim] | Claim, *,
                    replace: bool = False) -> list[str]:
    """Add claims to the catalogue at run time; returns their ids.

    For claims that worker processes, ``bilevel-theory`` commands and reports must find,
    declare them as an entry point instead (group ``bilevel_theory.claims`` in the
    package's ``pyproject.toml``)::

        [project.entry-points."bilevel_theory.claims"]
        my_paper = "my_package.claims:CLAIMS"
    """
    new = _claims_of(claims, "register_claims")
    clash = [cid for cid in new if cid in CLAIMS._load() and not replace]
    if clash:
        raise ValueError(f"claim ids already in the catalogue: {clash} (pass replace=True)")
    _REGISTERED.update(new)
    CLAIMS.reload()
    return list(new)


def is_registered_at_runtime(claim_id: str) -> bool:
    """Whether ``claim_id`` (or its base, for a mutant) came from :func:`register_claims`:
    such a claim is sent to worker processes by value."""
    return str(claim_id).partition(MUTANT_SEP)[0] in _REGISTERED


def loaded_entry_points(group: str) -> Iterator[tuple[str, object]]:
    """``(origin, object)`` for every installed entry point of ``group``, by name; one that
    fails to load is an ``ImportError`` naming it (a broken plug-in is never skipped)."""
    for ep in sorted(entry_points(group=group), key=lambda e: e.name):
        origin = f"entry point {ep.name!r} ({ep.value})"
        try:
            loaded = ep.load()
        except Exception as err:  # noqa: BLE001 - report which plug-in is broken
            raise ImportError(f"{origin} failed to load: {type(err).__name__}: {err}") from err
        yield origin, loaded


def _plugin_claims() -> Iterator[tuple[str, Claims]]:
    for origin, loaded in loaded_entry_points(ENTRY_POINT_GROUP):
        yield origin, _claims_of(loaded, origin)


#: id prefix → the modules of this package whose claims carry it.  A pattern that names
#: prefixes imports only their modules (and the modules missing from this map, installed
#: plug-ins and registered claims); tests check the map against the modules' claims.
PREFIX_MODULES: dict[str, tuple[str, ...]] = {
    "afbo": ("afbo",),
    "fedmbo": ("fedmbo",),
    "fednest": ("fednest",),
    "lfednest": ("fednest",),
    "gao": ("gao",),
    "memfbo": ("memfbo",),
}

_GLOB = "*?["


def _module_names() -> list[str]:
    """The claims modules of this package, sorted (``_*``, ``test*`` and ``demo`` left out)."""
    return sorted(info.name for info in pkgutil.iter_modules(__path__)
                  if not (info.name.startswith("_") or info.name in EXCLUDED
                          or info.name.startswith("test")))


def _module_claims(name: str) -> Claims | None:
    """The ``CLAIMS`` of module ``name`` of this package (``None``: it has none)."""
    module = importlib.import_module(f"{__name__}.{name}")
    if getattr(module, "CLAIMS", None) is None:
        return None
    return _claims_of(module, module.__name__)


def _merge(parts: Iterable[tuple[str, Mapping[str, Claim] | None]]) -> Claims:
    """One :class:`Claims` from ``(origin, claims)`` parts, in order; a repeated id is an
    error naming where it came from."""
    out = Claims()
    for origin, claims in parts:
        for cid, claim in (claims or {}).items():
            if cid in out:
                raise ValueError(f"duplicate claim id {cid!r} (in {origin})")
            out[cid] = claim
    return out


def _parts(modules: Iterable[str] | None = None,
           get: Callable[[str], Claims | None] = _module_claims,
           plugins: Callable[[], Iterable[tuple[str, Claims]]] = _plugin_claims,
           ) -> Iterator[tuple[str, Claims | None]]:
    """The catalogue's parts in order: the modules (all, or those named), the plug-ins' entry
    points, then :func:`register_claims`."""
    for name in _module_names():
        if modules is None or name in modules:
            yield f"{__name__}.{name}", get(name)
    yield from plugins()
    yield "register_claims", _REGISTERED


def collect() -> Claims:
    """The catalogue, as ``id -> Claim``: the papers' modules (sorted by module, then
    order), then installed plug-ins' entry points, then :func:`register_claims`."""
    return _merge(_parts())


def pattern_prefixes(pattern: str) -> set[str] | None:
    """The id prefixes a claim matching ``pattern`` can have, or ``None`` (any): a glob
    whose text before its first ``.`` is literal (``"afbo.*"`` → ``{"afbo"}``), or a
    substring whose text before its first ``.`` is a paper's key (``"fednest.cor31"`` →
    the keys ending in it: ``{"fednest", "lfednest"}``)."""
    p = str(pattern).lower().partition(MUTANT_SEP)[0]
    head, dot, _ = p.partition(".")
    if not dot or not head or any(ch in head for ch in _GLOB):
        return None
    if any(ch in p for ch in _GLOB):
        return {head}
    return {k for k in PREFIX_MODULES if k.endswith(head)} if head in PREFIX_MODULES else None


class Catalogue(Mapping):
    """The papers' claims, ``id -> Claim``, collected on first use (so ``import verify`` stays
    cheap and a claims module under construction does not break unrelated commands).  A
    lookup by id, or :func:`select` with patterns that name prefixes, imports only the
    modules of those prefixes (:data:`PREFIX_MODULES`); the ids and their order are those of
    the whole catalogue."""

    def __init__(self) -> None:
        self._claims: Claims | None = None
        self._modules: dict[str, Claims | None] = {}
        self._plugins: list[tuple[str, Claims]] | None = None
        self._narrowed: dict[frozenset[str], Claims] = {}

    def _module(self, name: str) -> Claims | None:
        if name not in self._modules:
            self._modules[name] = _module_claims(name)
        return self._modules[name]

    def _plugin_parts(self) -> list[tuple[str, Claims]]:
        if self._plugins is None:
            self._plugins = list(_plugin_claims())
        return self._plugins

    def _load(self) -> Claims:
        if self._claims is None:
            self._claims = _merge(_parts(None, self._module, self._plugin_parts))
        return self._claims

    def narrowed(self, prefixes: Iterable[str] | None) -> Claims:
        """The claims whose id prefix is one of ``prefixes`` can only come from: their
        modules, the modules missing from :data:`PREFIX_MODULES`, the plug-ins and the
        registered claims (in catalogue order; ``None``: the whole catalogue)."""
        if prefixes is None or self._claims is not None:
            return self._load()
        key = frozenset(prefixes)
        if key not in self._narrowed:
            mapped = {m for mods in PREFIX_MODULES.values() for m in mods}
            wanted = {m for p in key for m in PREFIX_MODULES.get(p, ())}
            modules = wanted | (set(_module_names()) - mapped)
            self._narrowed[key] = _merge(_parts(modules, self._module, self._plugin_parts))
        return self._narrowed[key]

    def reload(self) -> None:
        """Forget the collected claims (collected again on next use)."""
        self._claims, self._modules, self._plugins, self._narrowed = None, {}, None, {}

    def __getitem__(self, key: str) -> Claim:
        return resolve(self, key)

    def __contains__(self, key: object) -> bool:
        try:
            resolve(self, str(key))
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def __repr__(self) -> str:
        return f"Catalogue({list(self._load())})"


CLAIMS = Catalogue()


def load(spec: str | None = None) -> Mapping[str, Claim]:
    """The catalogue named by ``spec`` (``"module:ATTRIBUTE"``); ``None``: the papers' claims
    (with plug-ins and registered claims)."""
    if spec is None or spec == "":
        return CLAIMS
    if not isinstance(spec, str) or spec.count(":") != 1:
        raise ValueError(f"`catalogue` must look like 'module:ATTRIBUTE', got {spec!r}")
    module_name, attr = spec.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        raise ValueError(f"`catalogue` {spec!r}: no module {err.name!r}") from None
    if not hasattr(module, attr):
        raise ValueError(f"`catalogue` {spec!r}: module {module_name} has no {attr!r}")
    return _claims_of(getattr(module, attr), spec)


def _matches(claim: Claim, pattern: str) -> bool:
    """Case-insensitive: a glob on the id when ``pattern`` has ``*?[``, else a substring of
    the id, the paper's name or the source."""
    p = pattern.lower()
    if any(ch in p for ch in "*?["):
        return fnmatch.fnmatchcase(claim.id.lower(), p)
    return p in claim.id.lower() or p in claim.paper.lower() or p in claim.source.lower()


def _check_filter(name: str, values: Sequence[str] | None, allowed: Sequence[str]) -> set[str]:
    if not values:
        return set()
    values = [values] if isinstance(values, str) else list(values)
    for v in values:
        if v not in allowed:
            close = difflib.get_close_matches(str(v), allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"`{name}` must be one of {', '.join(allowed)}, got {v!r}{hint}")
    return set(values)


def select(pattern: str | Sequence[str] | None = None,
           catalogue: Mapping[str, Claim] | None = None, *,
           paper: str | Sequence[str] | None = None, kind: str | Sequence[str] | None = None,
           role: str | Sequence[str] | None = None,
           expected: str | Sequence[str] | None = None) -> list[Claim]:
    """Claims matching any of ``pattern`` (a string or several; each case-insensitive: a glob
    on the id when it contains ``*?[``, else a substring of the id, paper or source) and every
    filter given (``paper``: a substring of the paper's name or the id prefix, any of several;
    ``kind``, ``role``, ``expected``: one or several values).  ``None``/empty: all.  A pattern
    that matches nothing → ``ValueError`` listing close matches."""
    claims = CLAIMS if catalogue is None else catalogue
    patterns = [pattern] if isinstance(pattern, str) else list(pattern or ())
    for p in patterns:
        if not isinstance(p, str):
            raise TypeError(f"`pattern` must be a string, got {type(p).__name__}")
    patterns = [p for p in patterns if p]
    filters = {"kinds": _check_filter("kind", kind, KINDS),
               "roles": _check_filter("role", role, ROLES),
               "verdicts": _check_filter("expected", expected, VERDICTS),
               "papers": [paper.lower()] if isinstance(paper, str) else
               [p.lower() for p in paper or ()]}
    if isinstance(claims, Catalogue) and patterns and not filters["papers"]:
        prefixes = [pattern_prefixes(p) for p in patterns]
        if all(prefixes):  # only the modules of these prefixes
            try:
                return _select(claims.narrowed(set().union(*prefixes)), patterns, **filters)
            except ValueError:  # no match there: the whole catalogue gives the close matches
                pass
    return _select(claims, patterns, **filters)


def _select(claims: Mapping[str, Claim], patterns: list[str], *, kinds: set[str],
            roles: set[str], verdicts: set[str], papers: list[str]) -> list[Claim]:
    chosen = []
    for cid, c in claims.items():
        if patterns and not any(_matches(c, p) for p in patterns):
            continue
        if papers and not any(p in c.paper.lower() or p == cid.split(".")[0].lower()
                              for p in papers):
            continue
        if (kinds and c.kind not in kinds) or (roles and c.role not in roles) or (
                verdicts and c.expected not in verdicts):
            continue
        chosen.append(c)
    for p in patterns:
        if not any(_matches(c, p) for c in claims.values()):
            ids = list(claims)
            close = difflib.get_close_matches(p, ids, n=5, cutoff=0.5)
            if not close:  # the name part alone: "phe_variance" vs "fedmbo.phe_variance_…"
                names = {cid.split(".", 1)[-1]: cid for cid in ids}
                close = [names[n] for n in difflib.get_close_matches(p, list(names), n=5,
                                                                     cutoff=0.5)]
            hint = f"; close matches: {', '.join(close)}" if close else (
                f"; {len(ids)} claims available (see `bilevel-theory list`)" if ids
                else "; the catalogue is empty")
            raise ValueError(f"no claim matches {p!r}{hint}")
    return chosen
