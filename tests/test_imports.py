"""Import structure of the library, read from the source with :mod:`ast` (nothing imported).

Every module under ``bilevel_theory/``, ``problems/``, ``verify/`` and ``reports/`` (mapped to
``bilevel_theory``, ``bilevel_theory.problems``, ``bilevel_theory.verify``,
``bilevel_theory.reports``) is parsed and its module-level imports (those executed on import:
top level, including ``if``/``try`` blocks, excluding function and class bodies and
``if TYPE_CHECKING:`` blocks) are resolved to library modules.  Checked:

* layering: ``problems`` imports nothing of ``bilevel_theory`` but ``bilevel_theory.problems``
  (anywhere, function-local imports included); the core modules (the files in
  ``bilevel_theory/``) never import ``bilevel_theory.verify`` or ``bilevel_theory.reports`` at
  module level; ``verify`` never imports ``reports`` (anywhere);
* no import cycle among the modules through module-level imports (a loop that needs a
  function-local import runs after both modules are loaded, so it is allowed there); a cycle is
  reported as its path;
* and none even through function-local imports: shared pieces live in leaf modules
  (``reports/text.py`` for the report writers, ``verify/executor.py`` for the runner and the
  distributed executors), so that two modules never need each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"bilevel_theory": "bilevel_theory", "problems": "bilevel_theory.problems",
          "verify": "bilevel_theory.verify", "reports": "bilevel_theory.reports"}


def _modules() -> dict[str, Path]:
    out = {}
    for folder, package in LAYERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            out[".".join([package, *parts])] = path
    return out


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _resolve(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if _is_package(module) else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _library(name: str) -> str | None:
    """The library module ``name`` refers to (the longest known prefix), or None."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in MODULES:
            return candidate
        parts.pop()
    return None


def _targets(module: str, node: ast.AST) -> list[str]:
    names = []
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        base = _resolve(module, node)
        # ``from pkg import sub`` imports the submodule ``pkg.sub`` when there is one
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                 for a in node.names]
    return [t for t in (_library(n) for n in names) if t is not None]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _module_level(tree: ast.Module):
    """Import nodes executed when the module is imported."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                stack.extend(node.body)
            stack.extend(node.orelse)
        elif isinstance(node, ast.Try | ast.With):
            stack.extend(node.body)
            for handler in getattr(node, "handlers", []):
                stack.extend(handler.body)
            stack.extend(getattr(node, "orelse", []))
            stack.extend(getattr(node, "finalbody", []))


def _imports(module: str, everywhere: bool) -> set[str]:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"), str(MODULES[module]))
    nodes = ast.walk(tree) if everywhere else _module_level(tree)
    out = set()
    for node in nodes:
        out.update(_targets(module, node))
    out.discard(module)
    return out


def _package_of(target: str) -> str:
    for package in ("bilevel_theory.problems", "bilevel_theory.verify",
                    "bilevel_theory.reports"):
        if target == package or target.startswith(package + "."):
            return package
    return "bilevel_theory"


def _layer_modules(folder: str) -> list[str]:
    package = LAYERS[folder]
    return [m for m in MODULES if _package_of(m) == package]


def test_modules_found():
    for folder in LAYERS:
        assert _layer_modules(folder), f"no modules found under {folder}/"


@pytest.mark.parametrize("module", _layer_modules("problems"))
def test_problems_import_only_problems(module):
    bad = sorted(t for t in _imports(module, everywhere=True)
                 if _package_of(t) != "bilevel_theory.problems")
    assert not bad, f"{module} (problems layer) imports {bad}"


@pytest.mark.parametrize("module", _layer_modules("bilevel_theory"))
def test_core_does_not_import_verify_or_reports(module):
    bad = sorted(t for t in _imports(module, everywhere=False)
                 if _package_of(t) in ("bilevel_theory.verify", "bilevel_theory.reports"))
    assert not bad, f"{module} (core) imports {bad} at module level"


@pytest.mark.parametrize("module", _layer_modules("verify"))
def test_verify_does_not_import_reports(module):
    bad = sorted(t for t in _imports(module, everywhere=True)
                 if _package_of(t) == "bilevel_theory.reports")
    assert not bad, f"{module} (verify layer) imports {bad}"


def _graph(everywhere: bool = False) -> dict[str, set[str]]:
    graph = {}
    for module in MODULES:
        targets = _imports(module, everywhere=everywhere)
        # importing ``a.b.c`` runs the packages ``a`` and ``a.b`` first; a package importing
        # its own submodules is the ordinary layout, not a cycle, so parents are not edges
        graph[module] = {t for t in targets if not module.startswith(t + ".")}
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Elementary cycles' representatives: one per strongly connected component with a loop,
    as a path ``[a, b, …, a]`` through it."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = [0]

    def strongconnect(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                components.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    cycles = []
    for comp in components:
        members = set(comp)
        start = comp[0]
        # breadth-first search for the shortest way back to ``start`` inside the component
        previous, frontier, found = {start: None}, [start], None
        while frontier and found is None:
            nxt = []
            for v in frontier:
                for w in sorted(graph[v] & members):
                    if w == start:
                        found = v
                        break
                    if w not in previous:
                        previous[w] = v
                        nxt.append(w)
                if found is not None:
                    break
            frontier = nxt
        path = [start]
        v = found
        while v is not None and v != start:
            path.append(v)
            v = previous[v]
        cycles.append([start, *reversed(path[1:]), start])
    return cycles


def test_find_cycles_reports_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycles(graph) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle():
    cycles = find_cycles(_graph())
    assert not cycles, "module-level import cycles: " + "; ".join(
        " → ".join(c) for c in cycles)


def test_no_import_cycle_through_local_imports():
    cycles = find_cycles(_graph(everywhere=True))
    assert not cycles, "import cycles (counting function-local imports): " + "; ".join(
        " → ".join(c) for c in cycles) + "; move what both need into a leaf module"
