"""``bilevel-theory algorithms [NAME]``: the registered algorithms and their hyperparameters."""

from __future__ import annotations

import inspect
import json

import click


def _first_line(doc: str | None) -> str:
    return (inspect.cleandoc(doc).splitlines() or [""])[0] if doc else ""


def _first_sentence(doc: str | None) -> str:
    """The docstring's first sentence, whole (never cut at a line break)."""
    text = " ".join(inspect.cleandoc(doc).split()) if doc else ""
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


def _default_text(value) -> str:
    """A default as text: a number or choice as itself; a default computed from the instance's
    constants ``c`` (and the problem ``p``) as its formula (``0.5 / c["L_phi"]``)."""
    if callable(value) and not isinstance(value, type):
        formula = _formula(value)
        if formula:
            return f"from the instance: {formula}"
        doc = _first_sentence(getattr(value, "__doc__", None))
        return f"from the instance{': ' + doc if doc else ''}"
    return repr(value)


def _formula(fn) -> str:
    """The expression a default computes, from its source: a lambda's body, or the returned
    expression of a one-statement function (``""`` when there is none to show)."""
    import ast  # noqa: PLC0415

    try:
        source = inspect.getsource(fn).strip()
    except (OSError, TypeError):
        return ""
    source = source.rstrip(",")
    for text in (source, source.split("=", 1)[-1].strip()):
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Lambda) and node.lineno == 1:
                return ast.get_source_segment(text, node.body) or ""
            if isinstance(node, ast.FunctionDef):
                body = [b for b in node.body if not (isinstance(b, ast.Expr) and isinstance(
                    b.value, ast.Constant))]  # without the docstring
                if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value:
                    return ast.get_source_segment(text, body[0].value) or ""
                return ""
    return ""


def algorithm_info(name: str) -> dict:
    """Name, problem kinds, summary, docstring and hyperparameter defaults of an algorithm."""
    from . import ALGORITHMS  # noqa: PLC0415

    cls = ALGORITHMS[name]
    return {"name": name, "kinds": list(cls.kinds), "module": cls.__module__,
            "summary": _first_line(cls.__doc__), "doc": inspect.cleandoc(cls.__doc__ or ""),
            "hyperparameters": {k: _default_text(v) for k, v in cls.defaults.items()}}


@click.command("algorithms")
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="print as JSON")
def algorithms(name: str | None, as_json: bool) -> None:
    """List the registered algorithms, or show one (docstring and hyperparameters)."""
    from bilevel_theory.problems.validation import check_choice  # noqa: PLC0415

    from . import ALGORITHMS  # noqa: PLC0415

    if name is not None:
        check_choice("name", name, ALGORITHMS)
        info = algorithm_info(name)
        if as_json:
            click.echo(json.dumps(info, indent=1))
            return
        click.echo(f"{name} ({info['module']}; problem kinds: {', '.join(info['kinds'])})\n")
        click.echo(info["doc"])
        click.echo("\nhyperparameters (default):")
        for k, v in info["hyperparameters"].items():
            click.echo(f"  {k} = {v}")
        return
    infos = [algorithm_info(n) for n in ALGORITHMS]
    if as_json:
        click.echo(json.dumps(infos, indent=1))
        return
    width = max(len(i["name"]) for i in infos)
    kinds = max(len(", ".join(i["kinds"])) for i in infos)
    for i in infos:
        click.echo(f"{i['name']:<{width}}  {', '.join(i['kinds']):<{kinds}}  {i['summary']}")
