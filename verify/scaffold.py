"""``bilevel-theory new-plugin NAME``: write a plug-in package to start from.

The package (``DIR/NAME/``) has the layout of ``examples/toy_plugin``: a ``pyproject.toml``
declaring the entry points ``bilevel_theory.algorithms``, ``bilevel_theory.claims`` and
``bilevel_theory.inventory``; ``src/NAME/`` with one algorithm (stochastic bilevel gradient
descent with the step ``α (1 + k/k₀)^{−a}``), one confirmation claim (its ``O(1/K)`` rate,
Bottou, Curtis & Nocedal, SIAM Review 2018, Thm 4.7) with one mutant (a step-exponent bug)
and the inventory for ``bilevel-theory coverage``; ``tests/test_NAME.py``; a ``README.md``.
The files are rendered from the templates in ``scaffold_templates/`` (package data).
"""

from __future__ import annotations

import importlib.util
import keyword
import re
from importlib.resources import files
from pathlib import Path

import click

#: template file → path in the package (``{name}`` filled in)
TEMPLATES = {
    "pyproject.toml.tmpl": "pyproject.toml",
    "README.md.tmpl": "README.md",
    "init.py.tmpl": "src/{name}/__init__.py",
    "algorithm.py.tmpl": "src/{name}/algorithm.py",
    "claims.py.tmpl": "src/{name}/claims.py",
    "inventory.py.tmpl": "src/{name}/inventory.py",
    "plugin_tests.py.tmpl": "tests/test_{name}.py",
}
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,39}")


def check_name(name: str) -> str:
    """``name`` if it can be the plug-in's import package, claim-id prefix and entry-point
    name: a lower-case Python identifier of at most 40 characters, not a keyword, not a paper
    already known to the toolkit and not an importable module (it would be shadowed)."""
    from .kit import PAPERS  # noqa: PLC0415

    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name) or keyword.iskeyword(name):
        raise ValueError(f"`NAME` must be a lower-case Python identifier (a letter, then up to "
                         f"39 letters, digits or '_'; not a keyword), got {name!r}")
    if name in PAPERS:
        raise ValueError(f"`NAME` {name!r} is already a paper's key; choose another name")
    if importlib.util.find_spec(name) is not None:
        raise ValueError(f"`NAME` {name!r} is already an importable module; choose another name")
    return name


def render(name: str) -> dict[str, str]:
    """The package's files for plug-in ``name``: relative path → text."""
    check_name(name)
    fields = {"{{name}}": name, "{{dist}}": "bilevel-theory-" + name.replace("_", "-")}
    folder = files(__package__) / "scaffold_templates"
    out = {}
    for template, target in TEMPLATES.items():
        text = (folder / template).read_text(encoding="utf-8")
        for key, value in fields.items():
            text = text.replace(key, value)
        out[target.format(name=name)] = text
    return out


def scaffold(name: str, directory: str | Path = ".") -> Path:
    """Write the plug-in package ``directory/name/``; refuses an existing target."""
    texts = render(name)
    root = Path(directory) / name
    if root.exists():
        raise ValueError(f"the target {root} already exists; choose another NAME or --dir")
    for rel, text in texts.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@click.command("new-plugin")
@click.argument("name")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
              default=Path("."), show_default=True, help="folder in which to write NAME/")
def new_plugin(name: str, directory: Path) -> None:
    """Write a plug-in package DIR/NAME/ to start from: one algorithm, one claim with a
    mutant it catches, the inventory, tests and a README (see docs/extending.md)."""
    root = scaffold(name, directory)
    click.echo(f"wrote {root}/ ({len(TEMPLATES)} files). Next steps:\n"
               f"  pip install -e {root}\n"
               f"  bilevel-theory verify '{name}.*' --budget smoke --mutants --out /tmp/{name}\n"
               f"  python -m pytest {root / 'tests'}")
