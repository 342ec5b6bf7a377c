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

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from .claim import BUDGETS, KINDS, ROLES, VERDICTS, Claim

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


def _selection(f):
    """PATTERNS… and the ``--paper/--kind/--role/--verdict`` filters (repeatable)."""
    f = click.option("--verdict", "verdict", multiple=True, metavar="VERDICT",
                     help=f"expected verdict: {' | '.join(VERDICTS)} (repeatable)")(f)
    f = click.option("--role", multiple=True, metavar="ROLE",
                     help=f"{' | '.join(ROLES)} (repeatable)")(f)
    f = click.option("--kind", multiple=True, metavar="KIND",
                     help=f"{' | '.join(KINDS)} (repeatable)")(f)
    f = click.option("--paper", multiple=True, metavar="PAPER",
                     help="paper name or id prefix, case-insensitive (repeatable)")(f)
    return click.argument("patterns", nargs=-1)(f)


def _select(patterns, paper, kind, role, verdict, catalogue) -> list[Claim]:
    from .claims import load, select  # noqa: PLC0415

    return select(list(patterns), load(catalogue), paper=list(paper), kind=list(kind),
                  role=list(role), expected=list(verdict))


def claim_info(c: Claim) -> dict[str, Any]:
    """A claim's metadata as plain data (``list --json``, ``show``)."""
    return {
        "id": c.id, "paper": c.paper, "source": c.source, "role": c.role, "kind": c.kind,
        "statement": c.statement, "variable": c.variable, "quantity": c.quantity,
        "law": c.law.value, "law_latex": c.law.latex, "derivation": c.law.derivation,
        "tolerance": c.tolerance, "scale": c.scale, "schedule": c.schedule,
        "window": list(c.window) if c.window else None, "window_reason": c.window_reason,
        "window_derived": c.window_derived, "expected": c.expected, "reason": c.reason,
        "touches": list(c.touches),
        "mutants": [{"name": m.name, "change": m.change} for m in c.mutants],
        "grid": {b: [float(v) for v in c.grid[b]] for b in BUDGETS},
        "replicates": {b: int(c.replicates[b]) for b in BUDGETS},
    }


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


def _power(entry: dict) -> str:
    power = entry.get("power")
    if power is None:
        return "—" if entry.get("role") == "control" else "not run"
    return f"{sum(bool(m['caught']) for m in power)}/{len(power)}"


def _dry_run(claims: list[Claim], budget: str, out: str, backend: str, seed: int,
             mutants: bool) -> None:
    """What ``verify`` would run: per claim, its points and replicates at ``budget``, and how
    many points of its current definition are already stored in ``out``."""
    from .runner import config_hash  # noqa: PLC0415
    from .store import FILENAME, ResultsStore  # noqa: PLC0415

    store = ResultsStore(out) if (Path(out) / FILENAME).is_file() else None
    runs = [c.for_backend(backend) for c in claims]
    if mutants:
        runs += [m for c in runs for m in c.mutated()]
    rows, todo = [], 0
    for c in runs:
        grid = list(c.grid[budget])
        done = (len(store.completed(c.id, budget, config_hash(c, budget), seed, backend))
                if store is not None else 0)
        todo += len(grid) - done
        rows.append([c.id, c.role, str(len(grid)), str(c.replicates[budget]), str(done)])
    click.echo(_table(rows, ["claim", "role", "points", "replicates", "stored"]))
    click.echo(f"dry run: {len(runs)} claims{' and mutants' if mutants else ''}, {todo} points "
               f"to run at the {budget} budget into {out} (nothing was run)")


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
    @_selection
    @click.option("--json", "as_json", is_flag=True, help="print the claims as JSON")
    @_catalogue_option
    def list_claims(patterns, paper, kind, role, verdict, as_json, catalogue) -> None:
        """List the claims matching PATTERNS (each a case-insensitive glob on the id, or a
        substring of the id, paper or source) and the filters."""
        claims = _select(patterns, paper, kind, role, verdict, catalogue)
        if as_json:
            click.echo(json.dumps([claim_info(c) for c in claims], indent=1))
            return
        if not claims:
            click.echo("no claims (the catalogue is empty or the filters exclude all)",
                       err=True)
            return
        rows = [[c.id, c.role, c.kind, c.expected, str(len(c.mutants)), _short(c.source, 44),
                 _short(c.statement, 56)] for c in claims]
        click.echo(_table(rows, ["id", "role", "kind", "expected", "mutants", "source",
                                 "statement"]))
        counts = {r: sum(c.role == r for c in claims) for r in ROLES}
        click.echo(f"{len(claims)} claims: " + ", ".join(f"{n} {r}s" for r, n in counts.items()))

    @click.command("show", cls=_Command)
    @click.argument("claim_id")
    @click.option("--json", "as_json", is_flag=True, help="print as JSON")
    @_catalogue_option
    def show(claim_id, as_json, catalogue) -> None:
        """Everything about one claim: statement, source, law and its derivation, schedule,
        grids, window and its reason, mutants, expected verdict and reason."""
        from .runner import _claim_of  # noqa: PLC0415

        info = claim_info(_claim_of(claim_id, catalogue))
        if as_json:
            click.echo(json.dumps(info, indent=1))
            return
        for key, value in info.items():
            if key == "mutants":
                click.echo("mutants:" + ("" if value else " none"))
                for m in value:
                    click.echo(f"  {m['name']}: {m['change']}")
            elif key in ("grid", "replicates"):
                click.echo(f"{key}: " + "; ".join(f"{b} {v}" for b, v in value.items()))
            elif value not in (None, "", [], ()):
                click.echo(f"{key}: {value}")

    @click.command("verify", cls=_Command)
    @_selection
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
    @click.option("--quiet", is_flag=True, help="no progress output")
    @click.option("--mutants", is_flag=True,
                  help="also run every claim under each of its mutants; each must flip the "
                       "verdict (a confirmation to violated, a finding to holds)")
    @click.option("--dry-run", is_flag=True,
                  help="print what would run (claims, points, what is already stored) and "
                       "exit")
    @click.option("--json", "as_json", is_flag=True,
                  help="print the summary entries as JSON instead of a table")
    @_catalogue_option
    def verify(patterns, paper, kind, role, verdict, budget, out, backend, workers, scheduler,
               seed, report, quiet, mutants, dry_run, as_json, catalogue) -> None:
        """Run the claims matching PATTERNS and the filters, and judge them; exit 1 if a
        verdict differs from its expected one (or a mutant is not caught)."""
        from .runner import SUMMARY, attach_power, run_suite  # noqa: PLC0415

        _check_choice("--budget", budget, BUDGETS)
        _check_choice("--backend", backend, ("numpy", "cupy"))
        if report is not None and after_verify is None:
            raise ValueError("`--report`: no report renderer is installed")
        claims = _select(patterns, paper, kind, role, verdict, catalogue)
        if dry_run:
            _dry_run(claims, budget, out, backend, seed, mutants)
            return
        results = run_suite(list(patterns) or None, budget=budget, out=out, backend=backend,
                            workers=workers, seed=seed, progress=not quiet,
                            catalogue=catalogue, scheduler=scheduler, mutants=mutants,
                            claims=claims)
        differ = [r.to_dict() for r in results if not r.as_expected]
        entries = [r.to_dict() for r in attach_power(results)]
        if as_json:
            click.echo(json.dumps(entries, indent=1))
        elif not entries:
            click.echo("no claims to verify: the catalogue is empty", err=True)
        else:
            rows = [[e["id"], e.get("role", ""), _num(e["predicted"]), _measured(e),
                     e["verdict"], e["expected"], _power(e),
                     "" if e["as_expected"] else "<- differs"] for e in entries]
            click.echo(_table(rows, ["claim", "role", "predicted", "measured [95% interval]",
                                     "verdict", "expected", "power", ""]))
        click.echo(f"{len(results) - len(differ)} of {len(results)} claims"
                   f"{' and mutants' if mutants else ''} at their expected verdict ({budget} "
                   f"budget); summary: {Path(out) / SUMMARY}", err=as_json)
        for e in differ:
            click.echo(f"  {e['id']}: {e['verdict']} (expected {e['expected']}): {e['reason']}",
                       err=as_json)
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

    return [list_claims, show, verify, compare]
