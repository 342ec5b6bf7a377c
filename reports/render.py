"""Rate-check reports from a results directory: Markdown, self-contained HTML, figures, JSON.

``render(results_dir, out_dir)`` reads the store only (``results.jsonl``, and ``run.json``
when the run completed), rebuilds the summary with :func:`verify.summarize`, and calls
:func:`render_entries`, which does the work from plain data:

* ``entries``: summary entries (``id, paper, source, statement, kind, verdict, expected,
  measured, interval, predicted, reason, seconds, budget, variable, quantity, scale, window,
  schedule, touches, law_latex, law_derivation, status, fit, contrast_fit``, and from the
  claim framework ``role, mutants, power, window_reason, window_derived, details``); the
  entries of mutants (ids ``CLAIM@MUTANT``) are folded into their claim's ``power``; each
  ``touches`` id is resolved to its reading's title (``readings``, see :mod:`.readings`);
* ``meta``: run metadata (``run.json``: ``date, version, backend, budget, seed, machine,
  python, numpy, runtime``), or what the store rows tell when the run did not finish;
* ``rows``: the store rows (replicate scatter, and the ``costs.*`` rows of the cost table).

Outputs in ``out_dir``: ``index.md``, ``index.html``, ``figures/*.png`` (and ``*.pdf``,
``*.svg`` with ``formats``), ``report.json`` (each entry's replicate data under ``data`` as
``x``, the swept value, and ``y``, the measured quantity). Nothing is rerun; a partial store (interrupted run) renders with missing claims marked.
"""

from __future__ import annotations

import json
import math
import platform
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bilevel_theory.verify.claim import MUTANT_SEP
from bilevel_theory.verify.runner import read_runs, runs_cost

STORE = "results.jsonl"
RUN = "run.json"
SUMMARY = "summary.json"
COST_PREFIX = "costs."
COST_METRICS = ("rounds_to_target", "grad_calls_to_target", "hvp_calls_to_target",
                "jvp_calls_to_target")
ROW_KEYS = ("claim", "metrics")


class StoreError(ValueError):
    """A results store that cannot be reported on: missing, empty or corrupt (names the file)."""


# ----------------------------------------------------------------------------- reading


def load_rows(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a results store (``results.jsonl``, or a directory holding one).

    Read with :class:`verify.ResultsStore` (same rules as the runner: a replicate stored twice
    counts once, a cut-short last line is ignored with a warning). Raises :class:`StoreError`
    naming the file when it is missing, empty or corrupt.
    """
    from bilevel_theory.verify import CorruptStore, ResultsStore  # noqa: PLC0415

    path = Path(path)
    directory = path if path.is_dir() else path.parent
    file = directory / STORE
    if path.is_file() and path.name != STORE:
        raise StoreError(f"results store must be named {STORE}, got {path}")
    if not file.is_file():
        raise StoreError(f"results store not found: {file}")
    try:
        rows = ResultsStore(directory).rows()
    except CorruptStore as err:
        raise StoreError(f"corrupt results store: {err}") from None
    except UnicodeDecodeError as err:
        raise StoreError(f"corrupt results store: {file}: not UTF-8 text ({err.reason})") \
            from None
    if not rows:
        raise StoreError(f"empty results store: {file} has no rows")
    return rows


def load_meta(results_dir: str | Path, rows: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """Run metadata: ``run.json`` when present, completed with what the rows tell."""
    results_dir = Path(results_dir)
    run_path = results_dir / RUN
    meta: dict[str, Any] = {}
    if run_path.is_file():
        try:
            meta = json.loads(run_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise StoreError(f"corrupt run metadata {run_path}: {err}") from None
        if not isinstance(meta, dict):
            raise StoreError(f"corrupt run metadata {run_path}: not a JSON object")
        meta["complete"] = True
    else:
        meta["complete"] = False
    meta = normalize_meta(meta)
    cost = budget_cost(results_dir, meta)
    if cost is not None:
        meta["cost"] = cost
    derived = meta_from_rows(rows)
    for key, value in derived.items():
        meta.setdefault(key, value)
    meta["results_dir"] = str(results_dir)
    return meta


def budget_cost(results_dir: Path, meta: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the stored budget cost over every call that ran it (the run log's segments of
    ``run.json``'s budget, seed, backend, noise law and mutants); ``None`` without a ledger
    or a matching segment.  A resumed budget's last call is only its last segment."""
    keys = ("budget", "seed", "backend", "noise_distribution", "mutants")
    match = {k: meta[k] for k in keys if k in meta}
    cost = runs_cost(read_runs(results_dir), **match) if "budget" in match else None
    return cost if cost and cost["segments"] else None


def normalize_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    """``run.json`` as written by ``verify.run_suite`` mapped onto the report's fields
    (``package_version`` → ``version``, ``runtime_seconds`` → ``runtime``, ``machine`` as text)."""
    meta = dict(meta)
    if "version" not in meta and "package_version" in meta:
        meta["version"] = meta["package_version"]
    if "runtime" not in meta and "runtime_seconds" in meta:
        meta["runtime"] = meta["runtime_seconds"]
    cpu = meta.get("cpu_seconds")
    if "cpu" not in meta and isinstance(cpu, Mapping) and cpu.get("main") is not None:
        meta["cpu"] = cpu["main"] + (cpu.get("workers") or 0.0)
    machine = meta.get("machine")
    if isinstance(machine, Mapping):
        parts = [str(machine.get("platform") or "")]
        extra = [str(machine["processor"])] if machine.get("processor") else []
        if machine.get("cpu_count"):
            extra.append(f"{machine['cpu_count']} CPUs")
        meta["machine"] = (parts[0] + (f" ({', '.join(extra)})" if extra else "")).strip()
    return meta


def meta_from_rows(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the store rows say about the run (used when ``run.json`` is absent)."""
    def uniq(key: str) -> list[Any]:
        return sorted({str(r[key]) for r in rows if r.get(key) is not None})

    points: dict[tuple, float] = {}
    for r in rows:
        key = (r.get("claim"), r.get("budget"), r.get("point"), r.get("value"))
        sec = r.get("seconds")
        if isinstance(sec, int | float) and math.isfinite(sec):
            points[key] = max(points.get(key, 0.0), float(sec))
    versions: dict[str, Any] = {}
    for r in rows:
        if isinstance(r.get("versions"), dict):
            versions = r["versions"]
            break
    out: dict[str, Any] = {}
    if uniq("backend"):
        out["backend"] = ", ".join(uniq("backend"))
    if uniq("budget"):
        out["budget"] = ", ".join(uniq("budget"))
    if points:
        out["runtime"] = round(sum(points.values()), 3)
    if versions:
        out["versions"] = versions
    base = uniq("base_seed")
    if base:
        out["seed"] = ", ".join(base)
    elif uniq("seed"):
        out["seeds"] = f"{len(uniq('seed'))} per-point seed(s) in the store"
    return out


def summarize(results_dir: str | Path) -> list[dict[str, Any]]:
    """Summary entries from the store, via :func:`verify.summarize` (``summary.json`` if the
    verify layer cannot rebuild them)."""
    results_dir = Path(results_dir)
    try:
        from bilevel_theory.verify import summarize as _summarize  # noqa: PLC0415
    except ImportError:
        _summarize = None
    if _summarize is not None:
        return list(_summarize(results_dir))
    path = results_dir / SUMMARY
    if not path.is_file():
        raise StoreError(f"cannot summarize {results_dir / STORE}: verify.summarize is "
                         f"unavailable and {path} does not exist")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise StoreError(f"corrupt summary {path}: {err}") from None
    if isinstance(data, dict):
        data = data.get("claims") or data.get("entries") or []
    if not isinstance(data, list):
        raise StoreError(f"corrupt summary {path}: expected a list of entries")
    return data


# ----------------------------------------------------------------------------- shaping


ENTRY_DEFAULTS: dict[str, Any] = {
    "paper": "", "source": "", "statement": "", "kind": "", "verdict": None, "expected": "holds",
    "measured": None, "interval": None, "predicted": None, "reason": "", "seconds": None,
    "budget": None, "variable": "", "quantity": "", "scale": "loglog", "window": None,
    "schedule": "", "touches": [], "law_latex": "", "law_derivation": "", "status": "complete",
    "fit": None, "contrast_fit": None, "role": None, "mutants": [], "power": None,
    "window_reason": "", "window_derived": False, "mutant_of": None,
}
ROLES = ("confirmation", "finding", "defect", "control")
#: ``progress(done, total, name)``: called after each figure is written
Progress = Callable[[int, int, str], None]


def normalize_entries(entries: Iterable[Mapping[str, Any]],
                      rows: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """Entries with every field present; claims seen in the store but absent from the
    summary are added (status ``partial``) so that every stored claim is reported."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or not entry.get("id"):
            raise ValueError(f"summary entry {i} has no `id`: {entry!r:.80}")
        e = {**ENTRY_DEFAULTS, **dict(entry)}
        e["touches"] = [str(t) for t in (e.get("touches") or [])]
        e["mutants"] = list(e.get("mutants") or [])
        if e["role"] not in ROLES:
            e["role"] = "finding" if e.get("expected") == "violated" else "confirmation"
        if e["status"] == "missing":
            e["verdict"] = e["verdict"] if e["verdict"] in ("holds", "violated") else None
        out.append(e)
        seen.add(e["id"])
    for claim in dict.fromkeys(str(r.get("claim")) for r in rows):
        if claim.startswith(COST_PREFIX) or claim in seen:
            continue
        if MUTANT_SEP in claim and claim.partition(MUTANT_SEP)[0] in seen:
            continue  # a mutant's rows: its verdict is in its claim's `power`
        out.append({**ENTRY_DEFAULTS, "id": claim, "status": "partial", "verdict": "inconclusive",
                    "role": "confirmation",
                    "reason": "rows are in the store but the summary has no entry for this "
                              "claim (interrupted run or unknown claim id)"})
        seen.add(claim)
    return out


def is_mutant(entry: Mapping[str, Any]) -> bool:
    """Whether ``entry`` is a mutant's (id ``CLAIM@MUTANT`` or ``mutant_of`` set)."""
    return bool(entry.get("mutant_of")) or MUTANT_SEP in str(entry.get("id", ""))


def fold_mutants(entries: Sequence[dict[str, Any]]
                 ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(claims, mutants)``: the mutants' entries folded into their claim's ``power`` (one
    item per mutant: ``mutant, change, verdict, required, caught, measured, interval,
    reason``) where the summary has not done it already."""
    claims = [e for e in entries if not is_mutant(e)]
    mutants = [e for e in entries if is_mutant(e)]
    by_id = {e["id"]: e for e in claims}
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for m in mutants:
        base = str(m.get("mutant_of") or m["id"].partition(MUTANT_SEP)[0])
        found[base].append(m)
    for base, ms in found.items():
        e = by_id.get(base)
        if e is None or e.get("power"):
            continue
        changes = {str(x.get("name")): x.get("change", "") for x in e.get("mutants") or []
                   if isinstance(x, Mapping)}
        power = []
        for m in ms:
            name = m["id"].partition(MUTANT_SEP)[2] or m["id"]
            required = m.get("expected") or ("violated" if e.get("expected") != "violated"
                                             else "holds")
            power.append({"mutant": name, "change": changes.get(name, ""),
                          "verdict": m.get("verdict"), "required": required,
                          "caught": m.get("verdict") == required, "measured": m.get("measured"),
                          "interval": m.get("interval"), "reason": m.get("reason", "")})
        e["power"] = power
    return claims, mutants


def group_entries(entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Entries grouped by paper (in order of first appearance), then by role (confirmations,
    findings, controls); the order within a group is kept."""
    papers = list(dict.fromkeys(str(e.get("paper") or "") for e in entries))
    if "" in papers:  # claims without a paper (rows the summary does not know) last
        papers.remove("")
        papers.append("")
    rank = {p: i for i, p in enumerate(papers)}
    role_rank = {r: i for i, r in enumerate(ROLES)}
    return sorted(entries, key=lambda e: (rank[str(e.get("paper") or "")],
                                          role_rank.get(e.get("role"), 0)))


def replicate_data(entry: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]
                   ) -> dict[str, Any]:
    """The replicate data behind an entry, named plainly: ``x`` (the swept variable's value,
    ``value`` in the store rows), ``y`` (the measured quantity, ``metrics["value"]``) and, where
    measured, ``contrast``, ``bound``, ``predicted``; plus ``point`` and ``replicate``."""
    keys = [k for k in ("contrast", "bound", "predicted")
            if any(k in (r.get("metrics") or {}) for r in rows)]
    data: dict[str, Any] = {"x_name": entry.get("variable") or "",
                            "y_name": entry.get("quantity") or "", "x": [], "y": [],
                            **{k: [] for k in keys}, "point": [], "replicate": []}
    for r in rows:
        m = r.get("metrics") or {}
        if "value" not in m:
            continue
        data["x"].append(r.get("value"))
        data["y"].append(m.get("value"))
        for k in keys:
            data[k].append(m.get(k))
        data["point"].append(r.get("point"))
        data["replicate"].append(r.get("replicate"))
    return data


def claim_rows(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    by: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in rows:
        by[str(r.get("claim"))].append(r)
    return by


def entry_rows(entry: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]
               ) -> list[Mapping[str, Any]]:
    """The rows behind one summary entry: its budget, base seed and backend when the entry
    names them, and of those the latest claim definition (config hash)."""
    out = list(rows)
    for key, row_key in (("budget", "budget"), ("seed", "base_seed"), ("backend", "backend")):
        want = entry.get(key)
        if want is not None and any(r.get(row_key) is not None for r in out):
            out = [r for r in out if r.get(row_key) in (None, want)]
    hashes = [r.get("config_hash") for r in out if r.get("config_hash") is not None]
    if hashes:
        latest = hashes[-1]
        out = [r for r in out if r.get("config_hash") in (None, latest)]
    return out


def _finite(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _median(values: Sequence[float]) -> float | None:
    vals = sorted(v for v in values if _finite(v))
    if not vals:
        return None
    n = len(vals)
    return vals[n // 2] if n % 2 else 0.5 * (vals[n // 2 - 1] + vals[n // 2])


def cost_table(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per-algorithm cost to the common target from the ``costs.*`` rows: medians over the
    replicates that reached the target, and how many did."""
    groups: dict[tuple[str, str | None], list[Mapping[str, Any]]] = defaultdict(list)
    for r in rows:
        claim = str(r.get("claim"))
        if claim.startswith(COST_PREFIX):
            groups[(claim[len(COST_PREFIX):], r.get("budget"))].append(r)
    table = []
    for (algorithm, budget), grp in groups.items():
        # one run per algorithm: the latest stored (definition, base seed, backend)
        last = grp[-1]
        key = (last.get("config_hash"), last.get("base_seed"), last.get("backend"))
        grp = [r for r in grp
               if (r.get("config_hash"), r.get("base_seed"), r.get("backend")) == key]
        metrics = [r.get("metrics") or {} for r in grp]
        reached_flags = [bool(_finite(m.get("reached")) and m.get("reached") >= 0.5)
                         for m in metrics]
        reached = [m for m, ok in zip(metrics, reached_flags) if ok]
        item: dict[str, Any] = {
            "algorithm": algorithm,
            "budget": budget,
            "replicates": len(grp),
            "reached": sum(reached_flags),
            "target": _median([m.get("target") for m in metrics]),
        }
        for name in COST_METRICS:
            item[name] = _median([m.get(name) for m in reached])
        if any("final_stationarity" in m for m in metrics):
            item["final_stationarity"] = _median([m.get("final_stationarity") for m in metrics])
        table.append(item)
    table.sort(key=lambda t: (str(t["budget"]), t["algorithm"]))
    return table


def mutant_rows(entry: Mapping[str, Any], by_claim: Mapping[str, Sequence[Mapping[str, Any]]]
                ) -> dict[str, list[Mapping[str, Any]]]:
    """``{mutant name: its rows}`` for the mutants of ``entry`` that have rows in the store
    (``CLAIM@MUTANT``; names from the entry's ``power`` and ``mutants``), for its figure."""
    names = [str(p.get("mutant")) for p in entry.get("power") or () if isinstance(p, Mapping)]
    names += [str(m.get("name")) for m in entry.get("mutants") or () if isinstance(m, Mapping)]
    out = {}
    for name in dict.fromkeys(names):
        rows = entry_rows(entry, by_claim.get(f"{entry['id']}{MUTANT_SEP}{name}", []))
        if rows:
            out[name] = rows
    return out


def figure_name(claim_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", claim_id) + ".png"


def _catalogue(meta: Mapping[str, Any]) -> Mapping[str, Any]:
    """The run's claim catalogue (``run.json``'s ``catalogue``, else the papers'), or ``{}``
    when it cannot be loaded (the report then uses the entries alone)."""
    try:
        from bilevel_theory.verify import load  # noqa: PLC0415

        return load(meta.get("catalogue") or None)
    except Exception:  # noqa: BLE001 — a report never fails for want of the catalogue
        return {}


def complete_from_catalogue(entries: Sequence[dict[str, Any]], meta: Mapping[str, Any]
                            ) -> None:
    """Fill what the summary entries lack from the catalogue: ``tolerance`` and the series
    names (``extra["series"]``, see :func:`figures.series_names`)."""
    if all(e.get("tolerance") is not None and (e.get("series") or e.get("kind") != "contrast")
           for e in entries):
        return
    catalogue = _catalogue(meta)
    for e in entries:
        claim = catalogue.get(e["id"]) if hasattr(catalogue, "get") else None
        if claim is None:
            continue
        if e.get("tolerance") is None:
            e["tolerance"] = getattr(claim, "tolerance", None)
        extra = getattr(claim, "extra", None)
        if not e.get("series") and isinstance(extra, Mapping) and \
                isinstance(extra.get("series"), Mapping):
            e["series"] = dict(extra["series"])


def attach_readings(entries: Sequence[dict[str, Any]]) -> None:
    """Set each entry's ``readings``: one ``{id, title, text, source}`` per id of its
    ``touches``, resolved by :func:`readings.reading_titles` (``title`` ``""`` when unknown)."""
    from .readings import reading_titles  # noqa: PLC0415

    found = reading_titles(t for e in entries for t in e.get("touches") or [])
    for e in entries:
        e["readings"] = [{"id": t, **found.get(t, {"title": "", "text": "", "source": ""})}
                         for t in e.get("touches") or []]


def _tolerances(entries: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    return {e["id"]: float(e["tolerance"]) if _finite(e.get("tolerance")) else None
            for e in entries}


def _package_version() -> str:
    try:
        from importlib.metadata import version  # noqa: PLC0415

        return version("bilevel-theory")
    except Exception:  # noqa: BLE001
        return "unknown"


def _check_out_dir(out_dir: Path) -> None:
    """Generated files never go inside a package (a directory with ``__init__.py``)."""
    for d in (out_dir, *out_dir.parents):
        if (d / "__init__.py").is_file():
            raise ValueError(f"`out_dir` must not be inside a Python package, got {out_dir} "
                             f"(package {d})")


def jsonable(obj: Any) -> Any:
    """``obj`` with non-finite floats as ``None`` and paths as strings (strict JSON)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [jsonable(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalars
        return jsonable(obj.item())
    return obj


# ----------------------------------------------------------------------------- rendering


MAX_JOBS = 8


def check_jobs(jobs: Any) -> int:
    """``jobs`` as a number of processes (``0``: one per CPU, at most :data:`MAX_JOBS`)."""
    import os  # noqa: PLC0415

    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 0:
        raise ValueError(f"`jobs` must be an integer ≥ 0 (0: one per CPU), got {jobs!r}")
    if jobs == 0:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
            else (os.cpu_count() or 1)
        jobs = max(1, min(MAX_JOBS, cpus))
    return jobs


def _figure_task(task: tuple[Any, ...]) -> tuple[str, Path, dict[tuple[str, float], Any]]:
    """Draw one figure (a claim's or the overview); also typeset the claim's equations for the
    HTML, so that the parent does not (returned as ``{(latex, fontsize): png}``)."""
    from . import figures  # noqa: PLC0415

    if task[0] == "overview":
        _, entries, path, tolerances, formats, dpi, style = task
        return "overview", figures.overview_figure(entries, path, tolerances, formats,
                                                   dpi, style), {}
    key, entry, rows, path, formats, dpi, style, mutants = task
    path = figures.claim_figure(entry, rows, path, formats, dpi, mutants=mutants,
                                style_name=style)
    equations = {}
    for latex in (entry.get("statement"), entry.get("law_latex")):
        latex = (latex or "").strip()
        if latex:
            equations[(latex, 13.0)] = figures.latex_png(latex, 13.0)
    return key, path, equations


def _run_tasks(tasks: Sequence[tuple[Any, ...]], jobs: int):
    """Yield ``_figure_task`` results, in order with one job, as they finish with several
    (worker processes started by fork where the platform has it and no other thread runs,
    else spawned; serially when there are too few figures to pay for the processes).  The
    workers die with this process, even when it is killed (Linux's death signal and a thread
    watching the parent PID: :func:`verify.runner._die_with_parent`); on an error or Ctrl-C
    the figures not started are cancelled."""
    import multiprocessing  # noqa: PLC0415
    import os  # noqa: PLC0415
    import threading  # noqa: PLC0415
    from concurrent.futures import ProcessPoolExecutor, as_completed  # noqa: PLC0415

    from bilevel_theory.verify.runner import _die_with_parent  # noqa: PLC0415

    jobs = min(jobs, len(tasks))
    if jobs <= 1 or len(tasks) < 2 * jobs:
        for task in tasks:
            yield _figure_task(task)
        return
    methods = multiprocessing.get_all_start_methods()
    method = "fork" if "fork" in methods and threading.active_count() == 1 else "spawn"
    ctx = multiprocessing.get_context(method)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_die_with_parent,
                             initargs=(os.getpid(),)) as pool:
        try:
            futures = [pool.submit(_figure_task, task) for task in tasks]
            for future in as_completed(futures):
                yield future.result()
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def render_entries(entries: Iterable[Mapping[str, Any]], meta: Mapping[str, Any] | None,
                   rows: Sequence[Mapping[str, Any]], out_dir: str | Path, *,
                   formats: str | Sequence[str] = ("png",), dpi: float | None = None,
                   progress: Progress | None = None, jobs: int = 1,
                   style: str = "default") -> Path:
    """Write the report for ``entries`` (+ ``meta``, store ``rows``) into ``out_dir``.

    ``formats``: figure formats besides the PNG that the HTML and Markdown show (``"pdf"``,
    ``"svg"``, or ``"png,pdf,svg"``); ``dpi``: the PNG's resolution (default
    :data:`figures.DPI`); ``progress(done, total, name)`` is called after each figure;
    ``jobs``: processes drawing the figures (``0``: one per CPU, at most 8); ``style``: the
    figures' style, ``"default"`` or ``"paper"`` (:data:`figures.STYLES`: 3.3 in wide, no
    titles, no verdict colours). A claim's figure draws its mutants' series beside its own.
    Returns the path of ``index.html``. See the module docstring for the inputs.
    """
    from . import figures, html, markdown  # noqa: PLC0415

    formats = figures.parse_formats(formats)
    dpi = figures.check_dpi(figures.DPI if dpi is None else dpi)
    jobs = check_jobs(jobs)
    style = figures.check_style(style)
    out_dir = Path(out_dir).resolve()
    _check_out_dir(out_dir)
    rows = list(rows)
    meta = dict(meta or {})
    entries, mutants = fold_mutants(normalize_entries(entries, rows))
    entries = group_entries(entries)
    complete_from_catalogue(entries, meta)
    attach_readings(entries)
    meta.setdefault("report_date", datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"))
    meta.setdefault("report_version", _package_version())
    meta.setdefault("report_machine", platform.node() or "unknown")
    meta["figure_formats"] = ", ".join(formats)
    meta["figure_dpi"] = dpi
    meta["figure_style"] = style

    fig_dir = out_dir / "figures"
    fig_dir.mkdir(parents=True, exist_ok=True)
    by_claim = claim_rows(rows)
    figs: dict[str, str] = {}
    files: dict[str, list[str]] = {}
    todo = [e for e in entries
            if not (e["status"] == "missing" and not by_claim.get(e["id"]))]
    total = len(todo) + 1

    def done(key: str, path: Path) -> None:
        figs[key] = path.relative_to(out_dir).as_posix()
        files[key] = [path.with_suffix(f".{f}").relative_to(out_dir).as_posix()
                      for f in formats]
        if progress is not None:
            progress(len(figs), total, key)

    tasks: list[tuple[Any, ...]] = [("overview", entries, fig_dir / "overview.png",
                                     _tolerances(entries), formats, dpi, style)]
    for e in entries:
        e["figure"] = None
        claim_rows_ = entry_rows(e, by_claim.get(e["id"], []))
        e["data"] = replicate_data(e, claim_rows_)
        if e["status"] == "missing" and not claim_rows_:
            continue
        tasks.append((e["id"], e, claim_rows_, fig_dir / figure_name(e["id"]), formats, dpi,
                      style, mutant_rows(e, by_claim)))
    for key, path, equations in _run_tasks(tasks, jobs):
        figures.PRERENDERED.update(equations)
        done(key, path)
    figs = {t[0]: figs[t[0]] for t in tasks}  # in the report's order, however they finished
    files = {t[0]: files[t[0]] for t in tasks}
    for e in entries:
        if e["id"] in figs:
            e["figure"] = figs[e["id"]]
            e["figure_files"] = files[e["id"]]

    costs = cost_table(rows)
    report = {
        "meta": meta,
        "entries": entries,
        "mutants": mutants,
        "costs": costs,
        "figures": figs,
        "figure_files": files,
        "missing": [e["id"] for e in entries if e["status"] == "missing"],
        "partial": [e["id"] for e in entries if e["status"] == "partial"],
    }
    (out_dir / "report.json").write_text(
        json.dumps(jsonable(report), indent=2, ensure_ascii=False, allow_nan=False) + "\n",
        encoding="utf-8")
    (out_dir / "index.md").write_text(markdown.render_markdown(report), encoding="utf-8")
    index = out_dir / "index.html"
    index.write_text(html.render_html(report, out_dir), encoding="utf-8")
    return index


def render(results_dir: str | Path, out_dir: str | Path, *,
           formats: str | Sequence[str] = ("png",), dpi: float | None = None,
           progress: Progress | None = None, jobs: int = 1, style: str = "default") -> Path:
    """Render the report of the results in ``results_dir`` into ``out_dir``.

    ``formats``, ``dpi``, ``progress``, ``jobs``, ``style``: as for :func:`render_entries`.

    Reads ``results.jsonl`` (rows), ``run.json`` (if the run completed) and the summary
    rebuilt by :func:`verify.summarize`; never reruns an experiment. Returns the path of
    ``index.html``. Raises :class:`StoreError` (a ``ValueError``) naming the file for a
    missing, empty or corrupt store.
    """
    from .figures import check_style  # noqa: PLC0415

    check_style(style)  # before reading the store
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise StoreError(f"results directory not found: {results_dir}")
    rows = load_rows(results_dir)
    meta = load_meta(results_dir, rows)
    entries = summarize(results_dir)
    return render_entries(entries, meta, rows, out_dir, formats=formats, dpi=dpi,
                          progress=progress, jobs=jobs, style=style)
