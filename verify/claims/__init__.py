"""The claims catalogue: one module per paper, each defining ``CLAIMS = [Claim, ...]``.

:func:`collect` imports every module of this package that does not start with ``_`` (and is
not ``demo``), and gathers their ``CLAIMS`` lists into one mapping ``id -> Claim``; a module
without ``CLAIMS`` (a helper) is skipped; a module that fails to import is an error, never
skipped.  ``demo`` holds synthetic claims (``DEMO_CLAIMS``) for the toolkit's own tests and as
examples; they are deliberately kept out of the papers' catalogue.

A *catalogue spec* names another collection of claims: ``"module:ATTRIBUTE"`` where the
attribute is a list of claims or a mapping ``id -> Claim``, e.g.
``"bilevel_theory.verify.claims.demo:DEMO_CLAIMS"`` (the CLI's hidden ``--catalogue`` option and the
``BILEVEL_THEORY_CATALOGUE`` environment variable take such a spec).
"""

from __future__ import annotations

import difflib
import fnmatch
import importlib
import pkgutil
from collections.abc import Iterable, Iterator, Mapping

from ..claim import MUTANT_SEP, Claim

EXCLUDED = ("demo",)


def resolve(claims: Mapping[str, Claim], key: str) -> Claim:
    """``claims[key]``, where ``ID@MUTANT`` names claim ``ID`` under its mutant (a KeyError
    when either is unknown)."""
    base, sep, mutant = key.partition(MUTANT_SEP)
    if base not in claims or (sep and mutant not in {m.name for m in claims[base].mutants}):
        raise KeyError(key)
    return claims[base].under(mutant) if sep else dict.__getitem__(claims, base) if isinstance(
        claims, dict) else claims[base]


class Claims(dict):
    """``id -> Claim``; ``claims["ID@MUTANT"]`` gives claim ``ID`` under that mutant."""

    def __missing__(self, key: str) -> Claim:
        base, sep, mutant = str(key).partition(MUTANT_SEP)
        if sep and base in self:
            return resolve(self, key)
        raise KeyError(key)


def _as_mapping(claims: Iterable[Claim] | Mapping[str, Claim], origin: str) -> Claims:
    if isinstance(claims, Mapping):
        claims = list(claims.values())
    out = Claims()
    for c in claims:
        if not isinstance(c, Claim):
            raise TypeError(f"{origin}: expected Claim objects, got {type(c).__name__}")
        if c.id in out:
            raise ValueError(f"{origin}: duplicate claim id {c.id!r}")
        out[c.id] = c
    return out


def collect() -> dict[str, Claim]:
    """Every paper module's ``CLAIMS``, as ``id -> Claim`` (sorted by module, then order)."""
    out: dict[str, Claim] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.name in EXCLUDED or info.name.startswith("test"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        claims = getattr(module, "CLAIMS", None)
        if claims is None:
            continue
        for cid, claim in _as_mapping(claims, module.__name__).items():
            if cid in out:
                raise ValueError(f"duplicate claim id {cid!r} (in {module.__name__})")
            out[cid] = claim
    return out


class Catalogue(Mapping):
    """The papers' claims, ``id -> Claim``, collected on first use (so ``import verify`` stays
    cheap and a claims module under construction does not break unrelated commands)."""

    def __init__(self) -> None:
        self._claims: dict[str, Claim] | None = None

    def _load(self) -> dict[str, Claim]:
        if self._claims is None:
            self._claims = collect()
        return self._claims

    def reload(self) -> None:
        """Forget the collected claims (collected again on next use)."""
        self._claims = None

    def __getitem__(self, key: str) -> Claim:
        return resolve(self._load(), key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def __repr__(self) -> str:
        return f"Catalogue({list(self._load())})"


CLAIMS = Catalogue()


def load(spec: str | None = None) -> Mapping[str, Claim]:
    """The catalogue named by ``spec`` (``"module:ATTRIBUTE"``); ``None``: the papers' claims."""
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
    return _as_mapping(getattr(module, attr), spec)


def select(pattern: str | None = None,
           catalogue: Mapping[str, Claim] | None = None) -> list[Claim]:
    """Claims whose id matches ``pattern``: a glob when it contains ``*?[``, else a substring;
    ``None`` or ``""``: all.  No match → ``ValueError`` listing close matches."""
    claims = CLAIMS if catalogue is None else catalogue
    if pattern is None or pattern == "":
        return list(claims.values())
    if not isinstance(pattern, str):
        raise TypeError(f"`pattern` must be a string, got {type(pattern).__name__}")
    if any(ch in pattern for ch in "*?["):
        chosen = [c for cid, c in claims.items() if fnmatch.fnmatchcase(cid, pattern)]
    else:
        chosen = [c for cid, c in claims.items() if pattern in cid]
    if not chosen:
        ids = list(claims)
        close = difflib.get_close_matches(pattern, ids, n=5, cutoff=0.5)
        if not close:  # try the name part alone: "phe_variance" vs "fedmbo.phe_variance_..."
            names = {cid.split(".", 1)[-1]: cid for cid in ids}
            close = [names[n] for n in difflib.get_close_matches(pattern, list(names), n=5,
                                                                 cutoff=0.5)]
        hint = f"; close matches: {', '.join(close)}" if close else (
            f"; {len(ids)} claims available (see `bilevel-theory list`)" if ids
            else "; the catalogue is empty")
        raise ValueError(f"no claim matches {pattern!r}{hint}")
    return chosen
