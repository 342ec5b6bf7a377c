"""The results store: ``<directory>/results.jsonl``, long format, appended atomically per point.

One JSON object per line and per replicate (DESIGN §9)::

    {"claim": id, "budget": "smoke", "point": 3, "value": 64.0, "replicate": 0,
     "replicates": 32, "metrics": {"value": 0.078, ...}, "backend": "numpy",
     "versions": {"bilevel-theory": ..., "numpy": ..., "python": ...},
     "config_hash": "9f0c…", "seed": 123456, "base_seed": 0, "seconds": 0.41}

``point`` is the index into the claim's grid for ``budget``, ``value`` the sweep value, ``seed``
the seed passed to ``measure`` for this point (derived from ``base_seed``, the claim id and the
point index), ``seconds`` the wall time of the whole point.  Non-finite metrics are stored as
the ``NaN``/``Infinity`` tokens of Python's ``json`` module.

**Atomicity.**  All rows of a sweep point are encoded first and appended with a single
``os.write`` on a descriptor opened with ``O_APPEND``, then ``fsync``-ed: a process killed
between points leaves only whole points behind.  A point counts as completed only when all its
replicates ``0 … replicates−1`` are present; when a point is written twice (a rerun after a
partial write) the last row of each replicate wins.

**Damage.**  A line that is not valid JSON or lacks a required key raises :class:`CorruptStore`
(a ``ValueError``) naming the file and the line number: damaged results are never skipped
silently.  One exception, by design: a **last** line without its terminating newline is what a
write cut short (power loss, full disk) leaves; it is ignored with a warning naming the file,
its point is then not complete and is recomputed by the next run, and the writer truncates the
fragment before appending so that the file stays well formed.  The same fragment anywhere else
cannot happen with whole-point appends and is reported as corruption.
"""

from __future__ import annotations

import json
import os
import platform
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

REQUIRED = ("claim", "budget", "point", "value", "replicate", "metrics", "config_hash")
FILENAME = "results.jsonl"


class CorruptStore(ValueError):
    """A results file that cannot be read (names the path and the line)."""


def versions() -> dict[str, str]:
    """Package, numpy and Python versions (recorded in every row)."""
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    try:
        pkg = version("bilevel-theory")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        pkg = "unknown"
    return {"bilevel-theory": pkg, "numpy": np.__version__, "python": platform.python_version()}


class ResultsStore:
    """``results.jsonl`` in ``directory`` (created, with its parents, when missing)."""

    def __init__(self, directory: str | os.PathLike) -> None:
        self.directory = Path(directory)
        if self.directory.exists() and not self.directory.is_dir():
            raise NotADirectoryError(f"results directory {self.directory} is not a directory")
        self.path = self.directory / FILENAME
        self._cache: tuple[tuple[int, int], list[dict]] | None = None
        self._repaired = False

    # ------------------------------------------------------------------------------- writing

    def ensure_writable(self) -> None:
        """Create the directory and check it accepts files (``OSError`` naming it if not)."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            probe = self.directory / f".write-test-{os.getpid()}"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as err:
            raise OSError(f"cannot write results to {self.directory}: "
                          f"{err.strerror or err}") from None

    def _repair_tail(self) -> None:
        """Truncate a trailing fragment (a last line without newline) before appending."""
        if self._repaired or not self.path.exists():
            self._repaired = True
            return
        size = self.path.stat().st_size
        if size:
            with open(self.path, "rb+") as fh:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    fh.seek(0)
                    data = fh.read()
                    keep = data.rfind(b"\n") + 1
                    line = data.count(b"\n") + 1
                    warnings.warn(f"{self.path}: removed a partial last line "
                                  f"(line {line}, {len(data) - keep} bytes, "
                                  "a write cut short); its point will be recomputed",
                                  stacklevel=3)
                    fh.truncate(keep)
                    fh.flush()
                    os.fsync(fh.fileno())
        self._repaired = True

    def append_point(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Append the rows of one sweep point in one ``os.write`` (O_APPEND), then fsync."""
        rows = list(rows)
        if not rows:
            raise ValueError("`rows` is empty: a sweep point has at least one replicate")
        keys = {(r["claim"], r["budget"], r["point"]) for r in rows}
        if len(keys) != 1:
            raise ValueError(f"`rows` must belong to one sweep point, got {sorted(keys)}")
        for r in rows:
            missing = [k for k in REQUIRED if k not in r]
            if missing:
                raise ValueError(f"row lacks required keys {missing}")
        data = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows).encode()
        self.directory.mkdir(parents=True, exist_ok=True)
        self._repair_tail()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            written = os.write(fd, data)
            if written != len(data):  # pragma: no cover - regular files write fully
                raise OSError(f"{self.path}: short write ({written} of {len(data)} bytes)")
            os.fsync(fd)
        finally:
            os.close(fd)

    # ------------------------------------------------------------------------------- reading

    def _read(self) -> list[dict]:
        if not self.path.exists():
            return []
        st = self.path.stat()
        key = (st.st_size, st.st_mtime_ns)
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        data = self.path.read_bytes()
        lines = data.split(b"\n")
        tail = lines.pop()  # b"" when the file ends with a newline
        if tail:
            warnings.warn(f"{self.path}: ignoring a partial last line (line {len(lines) + 1}, "
                          f"{len(tail)} bytes without a newline: a write cut short); its point "
                          "will be recomputed", stacklevel=3)
        rows = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                raise CorruptStore(f"{self.path}: line {number} is empty")
            try:
                row = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError) as err:
                raise CorruptStore(f"{self.path}: line {number} is not valid JSON ({err})") \
                    from None
            if not isinstance(row, dict):
                raise CorruptStore(f"{self.path}: line {number} is not a JSON object")
            missing = [k for k in REQUIRED if k not in row]
            if missing:
                raise CorruptStore(f"{self.path}: line {number} lacks required keys {missing}")
            if not isinstance(row["metrics"], dict) or not isinstance(row["point"], int) \
                    or not isinstance(row["replicate"], int):
                raise CorruptStore(f"{self.path}: line {number} has a malformed "
                                   "'metrics', 'point' or 'replicate'")
            rows.append(row)
        self._cache = (key, rows)
        return rows

    def rows(self, claim: str | None = None, budget: str | None = None,
             config_hash: str | None = None, base_seed: int | None = None,
             backend: str | None = None) -> list[dict]:
        """Stored rows matching every given filter; for a replicate stored twice, the last."""
        out: dict[tuple, dict] = {}
        for r in self._read():
            if claim is not None and r["claim"] != claim:
                continue
            if budget is not None and r["budget"] != budget:
                continue
            if config_hash is not None and r["config_hash"] != config_hash:
                continue
            if base_seed is not None and r.get("base_seed") != base_seed:
                continue
            if backend is not None and r.get("backend") != backend:
                continue
            key = (r["claim"], r["budget"], r["config_hash"], r.get("base_seed"),
                   r.get("backend"), r["point"], r["replicate"])
            out.pop(key, None)  # keep file order of the last occurrence
            out[key] = r
        return list(out.values())

    def points(self, claim: str, budget: str, config_hash: str, base_seed: int | None = None,
               backend: str | None = None) -> dict[int, list[dict]]:
        """Completed points ``index -> rows sorted by replicate`` (all replicates present)."""
        groups: dict[int, list[dict]] = {}
        for r in self.rows(claim, budget, config_hash, base_seed, backend):
            groups.setdefault(r["point"], []).append(r)
        done = {}
        for index, rows in groups.items():
            rows.sort(key=lambda r: r["replicate"])
            total = rows[0].get("replicates", len(rows))
            if [r["replicate"] for r in rows] == list(range(total)):
                done[index] = rows
        return done

    def completed(self, claim_id: str, budget: str, config_hash: str,
                  base_seed: int | None = None, backend: str | None = None) -> set[int]:
        """Indices of the sweep points whose every replicate is stored."""
        return set(self.points(claim_id, budget, config_hash, base_seed, backend))
