"""The derived laws' disk cache (``bilevel_theory.law_cache``): a hit is the law the derivation
gives, a miss derives and stores, and anything the key cannot pin down is not cached; the
command line starts without sympy or matplotlib."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bilevel_theory import law_cache as L
from bilevel_theory import rates


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BILEVEL_THEORY_CACHE", str(tmp_path))
    monkeypatch.setattr(L, "CACHE", L._LawCache())
    return tmp_path


def test_a_miss_derives_and_stores_and_a_hit_needs_no_derivation(cache, monkeypatch):
    first = L.derived("fednest.cor31", "exponent", "K")
    assert first == rates.law_for("fednest.cor31", "exponent", "K")
    files = list(cache.glob("laws-*.json"))
    assert len(files) == 1 and len(json.loads(files[0].read_text())) == 1

    def refuse(*a, **k):
        raise AssertionError("derived again")

    monkeypatch.setattr(rates, "law_for", refuse)
    monkeypatch.setattr(L, "CACHE", L._LawCache())  # a fresh process reads the file
    assert L.derived("fednest.cor31", "exponent", "K") == first


def test_what_the_key_cannot_pin_down_is_not_cached(cache):
    bound = rates.BOUNDS["fednest.cor31"]
    assert L.cache_key(bound, "exponent", "K", {}) is None  # an object, not a name
    assert L.cache_key("myplugin.thm1", "exponent", "K", {}) is None  # not the toolkit's
    assert L.cache_key("fednest.cor31", "exponent", "K", {"assume": {"x": object()}}) is None
    assert L.cache_key("fednest.cor31", "exponent", "K", {"at": 0}) is not None
    L.derived(bound, "exponent", "K")
    assert not list(cache.glob("laws-*.json"))


def test_the_cache_file_is_named_by_the_code(cache, monkeypatch):
    before = L._cache_path()
    L._fingerprint.cache_clear()
    monkeypatch.setattr(L.importlib.metadata, "version", lambda name: "0.0-other")
    try:
        assert L._cache_path() != before
    finally:
        L._fingerprint.cache_clear()


def test_a_cached_derivation_runs_once_per_argument(cache):
    calls = []

    def derive(a):
        calls.append(a)
        return (rates.Law(float(a), "a", "derived"), 2.0)

    wrapped = L.cached_derivation(derive)
    assert wrapped(3) == wrapped(3) == (rates.Law(3.0, "a", "derived"), 2.0)
    assert calls == [3]
    assert wrapped(4)[1] == 2.0 and calls == [3, 4]
    L.CACHE._data = None  # a fresh process reads the file
    assert wrapped(4)[0] == rates.Law(4.0, "a", "derived") and calls == [3, 4]


def test_the_catalogues_cached_laws_are_the_derived_ones():
    """Every law in the cache file, once the catalogue is loaded, equals a fresh derivation."""
    from bilevel_theory.verify.claims import CLAIMS  # noqa: PLC0415

    assert len(CLAIMS) > 50
    data = L.CACHE._load()
    checked = 0
    for key, stored in data.items():
        parts = json.loads(key)
        if len(parts) != 4:
            continue  # a cached derivation, checked through its claims
        hit = L._decode(stored).as_tuple()
        bound, kind, var, kw = parts
        kw = {k: dict(v) if isinstance(v, list) else v for k, v in kw}
        fresh = rates.law_for(bound, kind, var, **kw)
        assert fresh.latex == hit[1] and fresh.derivation == hit[2], key
        assert fresh.value == hit[0] or (fresh.value != fresh.value and hit[0] != hit[0]), key
        checked += 1
    assert checked >= 15  # the laws derived from a bound by name (19 at this writing)


def test_the_command_line_starts_without_sympy_or_matplotlib():
    code = ("import sys, bilevel_theory.reports.cli; "
            "print(sorted(m for m in ('sympy', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"
