"""The verify-layer commands: ``list``, ``verify`` and ``compare``.

``reports.cli`` adds them to the ``bilevel-theory`` group through :func:`make_commands`.

Exit codes (every command):

* 0 — as expected: every verdict equals its claim's expected verdict (``verify``), or every
  compared verdict equals the baseline's (``compare``);
* 1 — a verdict differs: from its expected one or a mutant not caught (``verify``), from the
  baseline or a baseline claim without result (``compare``);
* 2 — bad input, one line ``error: …`` on stderr: unknown pattern, ``--paper``, ``--kind``,
  ``--role`` or ``--verdict`` (with close matches), filters that together select no claim,
  budget or backend; an unusable ``--out``/``--report`` (checked before anything runs; empty,
  not a directory, not writable), a results directory in use by another ``verify``, a
  results store that is a symbolic link or not a regular file; a missing, invalid, empty or
  claim-less baseline; a ``--scheduler`` that cannot be reached, or dask not installed;
* 3 — internal error or a run ended early: a claim's ``measure`` raised, worker processes
  kept dying, a point outran ``--point-timeout`` (a stopped or hung worker), the Dask
  scheduler was lost mid-run or its cluster kept no worker (the points finished so far are
  stored, ``run.json`` says ``"status": "interrupted"`` and the ``"reason"``; rerun to
  resume), or a bug (traceback);
* 130 — interrupted (Ctrl-C), 143 — terminated (SIGTERM): the points finished so far are
  stored and ``run.json`` says ``"status": "interrupted"``; rerun to resume.

``verify --repair`` first moves the lines of ``results.jsonl`` that are not valid JSON to
``results.jsonl.corrupt-<timestamp>`` (:meth:`ResultsStore.repair`); their points are
recomputed.  Every JSON printed (``--json``) is strict: a non-finite number is ``null``.

``verify --scheduler tcp://HOST:PORT`` runs the points on an existing Dask cluster instead of
``--workers`` local processes (extra ``distributed``); the connection times out after Dask's
``distributed.comm.timeouts.connect`` (env ``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=5s``).

``verify --point-timeout SECONDS`` ends the run (exit code 3) when a point runs longer than
that on a worker (``--workers N`` or ``--scheduler``): a stopped (``SIGSTOP``) or hung worker
would otherwise be waited on forever (a Dask cluster notices it only after its
``worker-ttl``).  Default: the budget's (``verify.executor.POINT_TIMEOUT``: 30 min at smoke,
2 h at standard, 8 h at full); 0 lifts the limit.

Hidden option ``--catalogue MODULE:ATTRIBUTE`` (environment variable
``BILEVEL_THEORY_CATALOGUE``) on ``list``, ``verify`` and ``compare`` (default there: the one
recorded in the results' ``run.json``) selects another collection of claims,
e.g. the synthetic demo claims: ``--catalogue verify.claims.demo:DEMO_CLAIMS``.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import click

from .claim import BUDGETS, KINDS, MUTANT_SEP, ROLES, VERDICTS, Claim
from .executor import POINT_TIMEOUT
from .store import dumps_strict

CATALOGUE_ENV = "BILEVEL_THEORY_CATALOGUE"


class _Command(click.Command):
    """A command whose bad input (parse errors included) is one line and exit code 2, an
    internal error exit code 3, an interruption exit code 130 (see the module docstring).
    Its output directories (parameters ``out`` and ``report``) are checked before it runs."""

    #: parameters naming directories the command writes, with their option names
    OUTPUT_DIRS = (("out", "--out", "results"), ("report", "--report", "the report"))

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as err:
            _fail(err.format_message())

    def invoke(self, ctx):
        from .runner import MeasureError, WorkersLost  # noqa: PLC0415

        try:
            for name, option, what in self.OUTPUT_DIRS:
                if ctx.params.get(name) is not None:
                    _check_output_dir(ctx.params[name], option, what)
            with warnings.catch_warnings(), _terminate_as_interrupt():
                warnings.showwarning = _show_warning
                return super().invoke(ctx)
        except KeyboardInterrupt as err:
            out = ctx.params.get("out")
            where = f" in {out}" if out else ""
            how = "terminated (SIGTERM)" if isinstance(err, Terminated) else "interrupted"
            click.echo(f"{how}: the points finished so far are stored{where}; rerun the "
                       "same command to resume", err=True)
            sys.exit(143 if isinstance(err, Terminated) else 130)
        except (ValueError, TypeError, OSError) as err:
            _fail(str(err))
        except WorkersLost as err:
            _fail(str(err), code=3)
        except MeasureError as err:
            import traceback  # noqa: PLC0415

            if err.__cause__ is not None:
                traceback.print_exception(err.__cause__, file=sys.stderr)
            _fail(str(err), code=3)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except Exception as err:  # noqa: BLE001 - a bug: its traceback, then exit code 3
            import traceback  # noqa: PLC0415

            traceback.print_exc(file=sys.stderr)
            _fail(f"internal error: {type(err).__name__}: {err}", code=3)


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C: the run stops its workers, keeps the finished points and
    marks ``run.json`` ``"interrupted"``; exit code 143."""


@contextlib.contextmanager
def _terminate_as_interrupt():
    """While the command runs, the first SIGTERM raises :class:`Terminated` in the main
    thread; later ones are ignored, so that they cannot interrupt the cleanup it starts (GNU
    ``timeout`` signals the command and then its process group: two SIGTERMs, and a second
    exception inside a lock's release breaks the lock)."""
    import signal  # noqa: PLC0415

    def handler(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread: leave SIGTERM alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _check_output_dir(value: Any, option: str, what: str = "results") -> Path:
    """An output directory that exists and is writable, or can be created (nothing is
    created here); ``ValueError``/``OSError`` naming ``option`` otherwise."""
    import os  # noqa: PLC0415

    if not str(value).strip():
        raise ValueError(f"`{option}` must name a directory, got {str(value)!r}")
    path = Path(value)
    cannot = f"`{option}`: cannot write {what} to {path}"
    if path.exists() or path.is_symlink():
        if not path.is_dir():
            raise ValueError(f"{cannot}: it is not a directory")
        probe = path
    else:
        probe = path.absolute().parent
        while not probe.exists():
            probe = probe.parent
        if not probe.is_dir():
            raise ValueError(f"{cannot}: {probe} is not a directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise OSError(f"{cannot}: permission denied ({probe})")
    return path


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings on the command line: one line ``warning: …`` (no source line)."""
    click.echo(f"warning: {' '.join(str(message).split())}", err=True)


def _fail(message: str, code: int = 2) -> None:
    click.echo(f"error: {' '.join(str(message).split())}", err=True)
    sys.exit(code)


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


def _check_papers(papers, claims) -> None:
    """Each ``--paper`` value must match a paper of the catalogue (a substring of its name,
    or a claim id prefix); ``ValueError`` listing the papers and a close match otherwise."""
    import difflib  # noqa: PLC0415

    if not papers:  # nothing to check: the catalogue is not loaded for it
        return
    names = sorted({c.paper for c in claims.values()})
    prefixes = sorted({cid.split(".")[0] for cid in claims})
    for p in papers:
        low = p.lower()
        if any(low in n.lower() for n in names) or low in (x.lower() for x in prefixes):
            continue
        words = {w.lower() for n in names for w in n.split()} | {x.lower() for x in prefixes}
        close = difflib.get_close_matches(low, sorted(words), n=3, cutoff=0.5)
        hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
        known = f"papers: {', '.join(names)}" if names else "the catalogue is empty"
        raise ValueError(f"`--paper` {p!r} matches no paper{hint}; {known}")


def _indexed_catalogue() -> dict[str, Any] | None:
    """The papers' claims as light records from ``verify/catalogue_index.json`` (id, paper,
    source, role, kind, expected, mutants, statement), for listing without importing the
    claims modules; ``None`` when a plug-in is installed or the index is unreadable."""
    from types import SimpleNamespace  # noqa: PLC0415

    from .catalogue_doc import read_index  # noqa: PLC0415
    from .claims import ENTRY_POINT_GROUP, entry_points  # noqa: PLC0415

    if entry_points(group=ENTRY_POINT_GROUP):
        return None
    rows = read_index()
    if rows is None:
        return None
    return {r["id"]: SimpleNamespace(**{**r, "mutants": tuple(r["mutants"])}) for r in rows}


def _select(patterns, paper, kind, role, verdict, catalogue, required: bool = False,
            indexed: Mapping[str, Any] | None = None) -> list[Claim]:
    """The claims selected by the patterns and filters (each checked: an unknown paper, kind,
    role, verdict or a pattern matching nothing is a ``ValueError``); ``required``: an
    empty selection from a non-empty catalogue is one too; ``indexed``: records standing in
    for the papers' claims (:func:`_indexed_catalogue`)."""
    from .claims import load, select  # noqa: PLC0415

    for name, values, allowed in (("--kind", kind, KINDS), ("--role", role, ROLES),
                                  ("--verdict", verdict, VERDICTS)):
        for v in values:
            _check_choice(name, v, allowed)
    claims = indexed if indexed is not None else load(catalogue)
    _check_papers(paper, claims)
    chosen = select(list(patterns), claims, paper=list(paper), kind=list(kind),
                    role=list(role), expected=list(verdict))
    if required and not chosen and claims:
        given = [*patterns, *(f"--{k} {v}" for k, vs in (("paper", paper), ("kind", kind),
                                                         ("role", role), ("verdict", verdict))
                              for v in vs)]
        raise ValueError(f"no claim matches all of {' '.join(given)} together (see "
                         "`bilevel-theory list` with the same filters)")
    return chosen


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
        "mutants": [{"name": m.name, "kind": m.kind, "change": m.change} for m in c.mutants],
        "conditions": {b: c.check_conditions(b) for b in BUDGETS} if c.conditions else {},
        "conditions_note": c.conditions_note,
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


def _cpu_text(cpu) -> str:
    """`` (C CPU-s: main a, workers b)`` from ``run.json``'s ``cpu_seconds`` ('' without)."""
    if not isinstance(cpu, dict) or cpu.get("main") is None:
        return ""
    if cpu.get("workers") is None:  # a Dask cluster's workers are not timed here
        return f" ({cpu['main']:.0f} CPU-s in the main process)"
    return (f" ({cpu['main'] + cpu['workers']:.0f} CPU-s: main process {cpu['main']:.0f}, "
            f"workers {cpu['workers']:.0f})")


def _power(entry: dict) -> str:
    power = entry.get("power")
    if power is None:
        return "—" if entry.get("role") == "control" else "not run"
    return f"{sum(bool(m['caught']) for m in power)}/{len(power)}"


def _dry_run(claims: list[Claim], budget: str, out: str, backend: str, seed: int,
             mutants: bool, noise: str = "gaussian") -> None:
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
        done = (len(store.completed(c.id, budget, config_hash(c, budget, noise), seed, backend))
                if store is not None else 0)
        todo += len(grid) - done
        rows.append([c.id, c.role, str(len(grid)), str(c.replicates[budget]), str(done)])
    click.echo(_table(rows, ["claim", "role", "points", "replicates", "stored"]))
    click.echo(f"dry run: {len(runs)} claims{' and mutants' if mutants else ''}, {todo} points "
               f"to run at the {budget} budget into {out} (nothing was run)")


def read_baseline(path: str | Path) -> dict[str, str]:
    """``id -> expected verdict`` from a baseline JSON file (one-line errors; an empty
    baseline, which would pass any results, is an error)."""
    from .runner import read_json  # noqa: PLC0415

    path = Path(path)
    data = read_json(path, "baseline")
    if not isinstance(data, dict):
        raise ValueError(f"baseline {path}: must be a JSON object mapping claim ids to "
                         f"verdicts, got {type(data).__name__}")
    if not data:
        raise ValueError(f"baseline {path}: has no claims (an empty baseline would pass any "
                         "results); regenerate it with python -m bilevel_theory.verify.baseline")
    blank = [k for k in data if not k.strip()]
    if blank:
        raise ValueError(f"baseline {path}: claim ids must not be empty, got {blank[0]!r}")
    bad = {k: v for k, v in data.items() if not isinstance(v, str) or v not in VERDICTS}
    if bad:
        k = next(iter(bad))
        raise ValueError(f"baseline {path}: verdicts must be one of {VERDICTS}; {k!r} has "
                         f"{str(bad[k])[:60]!r}")
    return data


def read_summary(results: str | Path, seed: int | None = None,
                 catalogue: str | None = None) -> list[dict]:
    """A results directory's summary entries, rebuilt from the rows in its store for the base
    ``seed`` (default: the seed of its ``run.json``, else the only seed stored); never
    ``summary.json``, which an interrupted rerun leaves stale.  A mutant's result (folded into
    its claim's ``power``) is added as an entry of its own, id ``CLAIM@MUTANT``.
    ``catalogue``: the claims' catalogue (default: the one recorded in ``run.json``)."""
    from .runner import RUN, read_run, stored_seeds, summarize  # noqa: PLC0415
    from .store import FILENAME  # noqa: PLC0415

    results = Path(results)
    if not results.is_dir():
        raise FileNotFoundError(f"results directory {results} does not exist")
    if not (results / FILENAME).exists() and not (results / FILENAME).is_symlink():
        raise FileNotFoundError(f"{results}: no {FILENAME} (run `bilevel-theory verify --out "
                                "DIR` first)")
    if seed is None:
        seed = read_run(results).get("seed")
    if seed is None:
        seeds = stored_seeds(results)
        if len(seeds) > 1:
            raise ValueError(f"{results / FILENAME} holds rows of the base seeds "
                             f"{', '.join(map(str, seeds))} and no {RUN} says which was asked "
                             "for: pass --seed")
        seed = seeds[0] if seeds else None
    entries = []
    for e in summarize(results, seed=seed, catalogue=catalogue):
        entries.append(e)
        for p in e.get("power") or ():
            entries.append({"id": f"{e['id']}@{p['mutant']}", "verdict": p["verdict"],
                            "expected": p["required"], "reason": p.get("reason", ""),
                            "status": e.get("status"), "mutant_of": e["id"]})
    return entries


def make_commands(after_verify: Callable[..., Any] | None = None) -> list[click.Command]:
    """The verify-layer commands; ``after_verify(results_dir, report_dir, quiet=...)`` runs
    for ``verify --report DIR`` (the reports layer passes its renderer, keeping layers
    one-way; ``quiet``: no progress)."""

    @click.command("list", cls=_Command)
    @_selection
    @click.option("--json", "as_json", is_flag=True, help="print the claims as JSON")
    @_catalogue_option
    def list_claims(patterns, paper, kind, role, verdict, as_json, catalogue) -> None:
        """List the claims matching PATTERNS (each a case-insensitive glob on the id, or a
        substring of the id, paper or source) and the filters."""
        indexed = None if (as_json or catalogue) else _indexed_catalogue()
        claims = _select(patterns, paper, kind, role, verdict, catalogue, indexed=indexed)
        if as_json:
            click.echo(dumps_strict([claim_info(c) for c in claims], indent=1))
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
        from .kit import READINGS  # noqa: PLC0415
        from .runner import _claim_of  # noqa: PLC0415

        info = claim_info(_claim_of(claim_id, catalogue))
        # the texts of the readings it touches that a plug-in registered (register_paper)
        info["readings"] = {r: READINGS[r] for r in info["touches"] if r in READINGS}
        if as_json:
            click.echo(dumps_strict(info, indent=1))
            return
        for key, value in info.items():
            if key == "mutants":
                click.echo("mutants:" + ("" if value else " none"))
                for m in value:
                    kind = f" [{m['kind']}]" if m["kind"] else ""
                    click.echo(f"  {m['name']}{kind}: {m['change']}")
            elif key == "conditions":
                click.echo("conditions of the theorem:" + ("" if value else (
                    f" none: {info['conditions_note']}" if info["conditions_note"]
                    else " none declared")))
                for budget, rows in value.items():
                    for r in rows:
                        mark = "pass" if r["holds"] else "FAIL"
                        where = "" if r["inside"] else " (left on purpose)"
                        fail = (f"; fails at {r['failing_x']}" if r["failing_x"] else "")
                        click.echo(f"  {budget}: {mark}{where} {r['statement']}: worst "
                                   f"{r['lhs']:.4g} {r['relation']} {r['rhs']:.4g} at "
                                   f"x={r['worst_x']:g}{fail}"
                                   + (f" — {r['note']}" if r["note"] else ""))
            elif key in ("grid", "replicates"):
                click.echo(f"{key}: " + "; ".join(f"{b} {v}" for b, v in value.items()))
            elif key in ("readings", "conditions_note"):  # printed under touches, conditions
                continue
            elif key == "touches" and value:
                click.echo(f"touches: {value}")
                for rid in value:
                    if rid in info["readings"]:
                        click.echo(f"  {rid}: {info['readings'][rid]}")
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
    @click.option("--point-timeout", "point_timeout", default=None, metavar="SECONDS",
                  type=click.FloatRange(min=0),
                  help="end the run (exit 3, finished points kept) when a point runs longer "
                       "than this on a worker, e.g. one stopped or hung [default: "
                       + ", ".join(f"{v:g} at {b}" for b, v in POINT_TIMEOUT.items())
                       + "; 0: no limit]")
    @click.option("--report", "report", default=None, type=click.Path(file_okay=False),
                  help="also render a report into this directory")
    @click.option("--quiet", is_flag=True, help="no progress output")
    @click.option("--mutants", is_flag=True,
                  help="also run every claim under each of its mutants; each must flip the "
                       "verdict (a confirmation to violated, a finding to holds)")
    @click.option("--repair", is_flag=True,
                  help="first move the lines of the results store that are not valid JSON "
                       "to results.jsonl.corrupt-<timestamp> (the good rows are kept, the "
                       "missing points recomputed)")
    @click.option("--dry-run", is_flag=True,
                  help="print what would run (claims, points, what is already stored) and "
                       "exit")
    @click.option("--json", "as_json", is_flag=True,
                  help="print the summary entries as JSON instead of a table")
    @click.option("--noise-distribution", "noise", default="gaussian", show_default=True,
                  help="law of the oracles' standardized noise where an instance chooses "
                       "none: gaussian | rademacher | uniform (the same mean and covariance; "
                       "rademacher draws fastest)")
    @_catalogue_option
    def verify(patterns, paper, kind, role, verdict, budget, out, backend, workers, scheduler,
               seed, point_timeout, report, quiet, mutants, repair, dry_run, as_json, noise,
               catalogue) -> None:
        """Run the claims matching PATTERNS and the filters, and judge them; exit 1 if a
        verdict differs from its expected one (or a mutant is not caught)."""
        from bilevel_theory.problems.oracle import NOISE_DISTRIBUTIONS  # noqa: PLC0415

        from .runner import SUMMARY, attach_power, read_run, run_suite  # noqa: PLC0415

        _check_choice("--budget", budget, BUDGETS)
        _check_choice("--backend", backend, ("numpy", "cupy"))
        _check_choice("--noise-distribution", noise, NOISE_DISTRIBUTIONS)
        if report is not None and after_verify is None:
            raise ValueError("`--report`: no report renderer is installed")
        claims = _select(patterns, paper, kind, role, verdict, catalogue, required=True)
        if repair and dry_run:
            raise ValueError("`--repair` changes the results store: not with `--dry-run`")
        if repair:
            from .store import ResultsStore  # noqa: PLC0415

            store = ResultsStore(out)
            moved, where = store.repair()
            click.echo(f"repair: moved {moved} damaged line(s) of {store.path} to {where}; "
                       "their points are recomputed" if moved
                       else f"repair: {store.path} has no damaged line", err=True)
        if dry_run:
            _dry_run(claims, budget, out, backend, seed, mutants, noise)
            return
        results = run_suite(list(patterns) or None, budget=budget, out=out, backend=backend,
                            workers=workers, seed=seed, progress=not quiet,
                            catalogue=catalogue, scheduler=scheduler, mutants=mutants,
                            claims=claims, noise_distribution=noise,
                            point_timeout=point_timeout)
        differ = [r.to_dict() for r in results if not r.as_expected]
        entries = [r.to_dict() for r in attach_power(results)]
        if as_json:
            click.echo(dumps_strict(entries, indent=1))
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
        run = read_run(out)
        if run.get("points_run"):
            click.echo(f"{run['points_run']} points in {run['runtime_seconds']:.0f} s"
                       f"{_cpu_text(run.get('cpu_seconds'))}; peak "
                       f"memory: {run['worker_peak_rss_mib']:.0f} MiB per worker, "
                       f"{run['main_peak_rss_mib']:.0f} MiB in the main process", err=as_json)
        if report is not None:
            index = after_verify(Path(out), Path(report), quiet=quiet)
            if index is not None and not quiet:
                click.echo(f"report: {index}", err=True)
        sys.exit(1 if differ else 0)

    @click.command("compare", cls=_Command)
    @click.argument("results", type=click.Path(file_okay=False))
    @click.argument("baseline", type=click.Path(dir_okay=False))
    @click.option("--seed", default=None, type=click.IntRange(min=0),
                  help="base seed whose rows are compared (default: the seed of the run "
                       "recorded in RESULTS/run.json, else the only seed stored)")
    @click.option("--only-present", is_flag=True,
                  help="compare only the baseline claims whose points are all in RESULTS (a "
                       "subset or cut-off run; partly run claims are listed, not judged); a "
                       "changed verdict still exits 1")
    @click.option("--json", "as_json", is_flag=True,
                  help="print the comparison as JSON (changed, missing, partial, new, "
                       "unchanged)")
    @_catalogue_option
    def compare(results, baseline, seed, only_present, as_json, catalogue) -> None:
        """Compare the verdicts in RESULTS (rebuilt from its store) with BASELINE (JSON:
        claim id -> verdict); exit 1 listing every changed, missing or partly run verdict (a
        partial run's verdict is not the claim's).  Mutants (``CLAIM@MUTANT``) not in the
        baseline are skipped (``verify`` gates them)."""
        expected = read_baseline(baseline)
        entries = {e["id"]: e for e in read_summary(results, seed, catalogue)}
        status = {cid: e.get("status") for cid, e in entries.items()}
        complete = {cid for cid, s in status.items() if s not in ("missing", "partial")}
        partial = [cid for cid in expected if status.get(cid) == "partial"]
        compared = [cid for cid in expected if not only_present or cid in complete]
        if not compared:
            raise ValueError(f"no claim of baseline {baseline} has all its results in "
                             f"{results} (--only-present): nothing to compare")
        changed = [cid for cid in compared
                   if cid in complete and entries[cid]["verdict"] != expected[cid]]
        missing = [cid for cid in compared if cid not in complete and cid not in partial]
        new = [cid for cid in entries
               if cid in complete and cid not in expected and MUTANT_SEP not in cid]
        unchanged = [c for c in compared if c not in {*changed, *missing, *partial}]
        failed = bool(changed or missing or (partial and not only_present))
        if as_json:
            click.echo(dumps_strict({
                "changed": [{"id": c, "baseline": expected[c], "verdict": entries[c]["verdict"],
                             "reason": entries[c]["reason"]} for c in changed],
                "missing": missing,
                "partial": [{"id": c, "points": entries[c]["points"],
                             "total_points": entries[c]["total_points"]} for c in partial],
                "new": [{"id": c, "verdict": entries[c]["verdict"]} for c in new],
                "unchanged": unchanged,
                "not_compared": [c for c in expected if c not in compared]}, indent=1))
            sys.exit(1 if failed else 0)
        for cid in changed:
            e = entries[cid]
            click.echo(f"CHANGED  {cid}: {expected[cid]} -> {e['verdict']} ({e['reason']})")
        for cid in missing:
            click.echo(f"MISSING  {cid}: {expected[cid]} in the baseline, no result")
        for cid in partial:
            e = entries[cid]
            click.echo(f"PARTIAL  {cid}: {expected[cid]} in the baseline, {e['points']} of "
                       f"{e['total_points']} points run, not judged")
        for cid in new:
            click.echo(f"NEW      {cid}: {entries[cid]['verdict']} (not in the baseline)")
        judged = len(unchanged) + len(changed) + len(missing)
        skipped = len(expected) - len(compared)
        click.echo(f"{len(unchanged)} of {judged} baseline verdicts unchanged"
                   + (f" ({skipped} without all their results not compared: --only-present)"
                      if skipped else ""))
        sys.exit(1 if failed else 0)

    return [list_claims, show, verify, compare]
