"""The verify-layer commands: ``list``, ``verify`` and ``compare``.

``reports.cli`` adds them to the ``bilevel-theory`` group through :func:`make_commands`.

Exit codes (DESIGN §3): ``verify`` exits 0 when every verdict equals its claim's expected
verdict, 1 otherwise; ``compare`` exits 1 when a verdict differs from the baseline (or a
baseline claim has no result); any bad input (unknown pattern, with close matches; unknown
budget or backend; unwritable ``--out``; a missing or invalid baseline; a ``--scheduler``
that cannot be reached, or dask not installed) prints one line ``error: …`` on stderr and
exits 2.

``verify --scheduler tcp://HOST:PORT`` runs the points on an existing Dask cluster instead of
``--workers`` local processes (extra ``distributed``); the connection times out after Dask's
``distributed.comm.timeouts.connect`` (env ``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=5s``).

Hidden option ``--catalogue MODULE:ATTRIBUTE`` (environment variable
``BILEVEL_THEORY_CATALOGUE``) on ``list`` and ``verify`` selects another collection of claims,
e.g. the synthetic demo claims: ``--catalogue verify.claims.demo:DEMO_CLAIMS``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click

from .claim import BUDGETS, VERDICTS

CATALOGUE_ENV = "BILEVEL_THEORY_CATALOGUE"


class _Command(click.Command):
    """A command whose bad input (parse errors included) is one line and exit code 2."""

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as err:
            _fail(err.format_message())

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (ValueError, TypeError, OSError) as err:
            _fail(str(err))


def _fail(message: str) -> None:
    click.echo(f"error: {' '.join(str(message).split())}", err=True)
    sys.exit(2)


def _catalogue_option(f):
    return click.option("--catalogue", default=None, hidden=True, envvar=CATALOGUE_ENV,
                        help="claims to use, as MODULE:ATTRIBUTE (default: the papers')")(f)


def _short(text: str, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _num(v) -> str:
    return "—" if v is None else f"{v:.4g}"


def _measured(entry: dict) -> str:
    m, iv = entry.get("measured"), entry.get("interval") or [None, None]
    if m is None:
        return "—"
    if iv[0] is None:
        return _num(m)
    return f"{_num(m)} [{_num(iv[0])}, {_num(iv[1])}]"


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths)).rstrip()]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines)


def _check_choice(name: str, value: str, choices) -> str:
    if value not in choices:
        import difflib  # noqa: PLC0415

        close = difflib.get_close_matches(value, choices, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"`{name}` must be one of {', '.join(choices)}, got {value!r}{hint}")
    return value


def read_baseline(path: str | Path) -> dict[str, str]:
    """``id -> expected verdict`` from a baseline JSON file (one-line errors)."""
    from .runner import read_json  # noqa: PLC0415

    path = Path(path)
    data = read_json(path, "baseline")
    if not isinstance(data, dict):
        raise ValueError(f"baseline {path}: must be a JSON object mapping claim ids to "
                         f"verdicts, got {type(data).__name__}")
    bad = {k: v for k, v in data.items() if v not in VERDICTS}
    if bad:
        k = next(iter(bad))
        raise ValueError(f"baseline {path}: verdicts must be one of {VERDICTS}; {k!r} has "
                         f"{bad[k]!r}")
    return data


def read_summary(results: str | Path) -> list[dict]:
    """A results directory's summary: ``summary.json``, else rebuilt from the store."""
    from .runner import SUMMARY, read_json, summarize  # noqa: PLC0415
    from .store import FILENAME  # noqa: PLC0415

    results = Path(results)
    path = results / SUMMARY
    if path.exists():
        data = read_json(path)
        if not isinstance(data, list):
            raise ValueError(f"{path}: must be a JSON list of claim entries")
        return data
    if (results / FILENAME).exists():
        return summarize(results)
    raise FileNotFoundError(f"{results}: no {SUMMARY} or {FILENAME} (run `bilevel-theory "
                            "verify --out DIR` first)")


def make_commands(after_verify: Callable[[Path, Path], None] | None = None) -> list[click.Command]:
    """The verify-layer commands; ``after_verify(results_dir, report_dir)`` runs for
    ``verify --report DIR`` (the reports layer passes its renderer, keeping layers one-way)."""

    @click.command("list", cls=_Command)
    @click.argument("pattern", required=False)
    @_catalogue_option
    def list_claims(pattern: str | None, catalogue: str | None) -> None:
        """List the claims (matching PATTERN: a glob or a substring of the id)."""
        from .claims import load, select  # noqa: PLC0415

        claims = select(pattern, load(catalogue))
        if not claims:
            click.echo("the claims catalogue is empty", err=True)
            return
        rows = [[c.id, c.role, c.kind, c.expected, str(len(c.mutants)), _short(c.source, 48),
                 _short(c.statement, 60)] for c in claims]
        click.echo(_table(rows, ["id", "role", "kind", "expected", "mutants", "source",
                                 "statement"]))

    @click.command("verify", cls=_Command)
    @click.argument("pattern", required=False)
    @click.option("--budget", default="smoke", show_default=True,
                  help=f"sweep size: {' | '.join(BUDGETS)} (full with --backend cupy: the "
                       "n-claims sweep n up to 10^5 on 10^6 clients)")
    @click.option("--out", "out", default="results", show_default=True,
                  type=click.Path(file_okay=False), help="results directory (resumed)")
    @click.option("--backend", default="numpy", show_default=True, help="numpy | cupy")
    @click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1),
                  help="local worker processes")
    @click.option("--scheduler", default=None, metavar="tcp://HOST:PORT",
                  help="run the points on the Dask cluster with this scheduler instead of "
                       "local processes (needs the extra: pip install "
                       "'bilevel-theory[distributed]')")
    @click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0),
                  help="base seed (per-point seeds derive from it)")
    @click.option("--report", "report", default=None, type=click.Path(file_okay=False),
                  help="also render a report into this directory")
    @click.option("--quiet", is_flag=True, help="no progress bar")
    @click.option("--mutants", is_flag=True,
                  help="also run every claim under each of its mutants; each must flip the "
                       "verdict (a confirmation to violated, a finding to holds)")
    @_catalogue_option
    def verify(pattern, budget, out, backend, workers, scheduler, seed, report, quiet,
               mutants, catalogue) -> None:
        """Run the claims matching PATTERN and judge them; exit 1 if a verdict differs from
        its expected one."""
        from .runner import SUMMARY, run_suite  # noqa: PLC0415

        _check_choice("--budget", budget, BUDGETS)
        _check_choice("--backend", backend, ("numpy", "cupy"))
        if report is not None and after_verify is None:
            raise ValueError("`--report`: no report renderer is installed")
        results = run_suite(pattern, budget=budget, out=out, backend=backend, workers=workers,
                            seed=seed, progress=not quiet, catalogue=catalogue,
                            scheduler=scheduler, mutants=mutants)
        entries = [r.to_dict() for r in results]
        if not entries:
            click.echo("no claims to verify: the catalogue is empty", err=True)
        else:
            rows = [[e["id"], _num(e["predicted"]), _measured(e), e["verdict"], e["expected"],
                     "" if e["as_expected"] else "<- differs"] for e in entries]
            click.echo(_table(rows, ["claim", "predicted", "measured [95% interval]",
                                     "verdict", "expected", ""]))
        differ = [e for e in entries if not e["as_expected"]]
        click.echo(f"{len(entries) - len(differ)} of {len(entries)} claims at their expected "
                   f"verdict ({budget} budget); summary: {Path(out) / SUMMARY}")
        for e in differ:
            click.echo(f"  {e['id']}: {e['verdict']} (expected {e['expected']}): {e['reason']}")
        if report is not None:
            after_verify(Path(out), Path(report))
        sys.exit(1 if differ else 0)

    @click.command("compare", cls=_Command)
    @click.argument("results", type=click.Path(file_okay=False))
    @click.argument("baseline", type=click.Path(dir_okay=False))
    def compare(results, baseline) -> None:
        """Compare the verdicts in RESULTS with BASELINE (JSON: claim id -> verdict); exit 1
        listing every changed verdict."""
        expected = read_baseline(baseline)
        entries = {e["id"]: e for e in read_summary(results)}
        changed, missing, new = [], [], []
        for cid, verdict in expected.items():
            if cid not in entries:
                missing.append(cid)
            elif entries[cid]["verdict"] != verdict:
                changed.append(cid)
        new = [cid for cid in entries if cid not in expected]
        for cid in changed:
            e = entries[cid]
            click.echo(f"CHANGED  {cid}: {expected[cid]} -> {e['verdict']} ({e['reason']})")
        for cid in missing:
            click.echo(f"MISSING  {cid}: {expected[cid]} in the baseline, no result")
        for cid in new:
            click.echo(f"NEW      {cid}: {entries[cid]['verdict']} (not in the baseline)")
        same = len(expected) - len(changed) - len(missing)
        click.echo(f"{same} of {len(expected)} baseline verdicts unchanged")
        sys.exit(1 if changed or missing else 0)

    return [list_claims, verify, compare]
