"""The results store: ``<directory>/results.jsonl``, long format, appended atomically per point.

One JSON object per line and per replicate::

    {"claim": id, "budget": "smoke", "point": 3, "value": 64.0, "replicate": 0,
     "replicates": 32, "metrics": {"value": 0.078, ...}, "backend": "numpy",
     "versions": {"bilevel-theory": ..., "numpy": ..., "python": ...},
     "config_hash": "9f0c…", "seed": 123456, "base_seed": 0, "seconds": 0.41,
     "peak_rss_mib": 212.5}

``point`` is the index into the claim's grid for ``budget``, ``value`` the sweep value, ``seed``
the seed passed to ``measure`` for this point (derived from ``base_seed``, the claim id and the
point index), ``seconds`` the wall time of the whole point, ``peak_rss_mib`` the peak resident
memory of the process that ran it, when it finished.

**Strict JSON.**  Every line is strict JSON (no ``NaN``/``Infinity`` tokens): a non-finite
metric is written as ``null`` and named in the row's ``"nonfinite"`` object (metric name ->
``"nan"``, ``"inf"`` or ``"-inf"``), from which reading restores it.  Rows written by older
versions with ``NaN``/``Infinity`` tokens are still read.

**One writer.**  Writing takes an advisory lock on ``<directory>/.writer.lock``
(``fcntl.flock``, holding the owner's PID): a second process writing to the same directory is
refused with :class:`StoreInUse` naming the owner's PID.  The kernel releases the lock of a
process that dies, so the lock of a killed run is stale and simply taken over (where ``flock``
is unavailable, a lock whose PID is not running is taken over).  Within one process the lock is
re-entrant (:meth:`ResultsStore.writer` around a whole run, each append inside it).

**Atomicity.**  All rows of a sweep point are encoded first and appended with a single
``os.write`` on a descriptor opened with ``O_APPEND``, then ``fsync``-ed: a process killed
between points leaves only whole points behind; a write that fails (a full disk) is rolled
back to the previous size and reported naming the file.  A point counts as completed only
when all its replicates ``0 … replicates−1`` are present; when a point is written twice (a
rerun after a partial write) the last row of each replicate wins.

**Files.**  ``results.jsonl`` must be a regular file: a symbolic link, a FIFO, a directory or a
device there is refused (:class:`CorruptStore`), never followed, truncated or waited on.  A
store or lock file with other hard links (a ``cp -al`` snapshot) is never written through:
before the first write the link is broken (the file is copied and the copy renamed over it,
atomically), with a warning, so that the other names keep their content.

**Damage.**  A line that is not valid JSON raises :class:`CorruptStore` (a ``ValueError``)
naming the file and the line number: a damaged file is never read past.
:meth:`ResultsStore.repair` (``bilevel-theory verify --repair``) moves such lines to
``results.jsonl.corrupt-<UTC timestamp>`` and keeps the good rows; the points of the moved
lines are then incomplete and recomputed by the next run.  A line that is
valid JSON but not a row (not an object, a required key missing, a field of the wrong type,
nested too deeply to parse) is skipped with a warning ``path:line``; its point is then not
complete and is recomputed by the next run (:attr:`ResultsStore.skipped` lists them).  A
**last** line without its terminating newline is what a write cut short leaves; it is ignored
with a warning naming the file, its point is recomputed, and the writer truncates the fragment
before appending so that the file stays well formed.  The same fragment anywhere else cannot
happen with whole-point appends and is reported as corruption.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import platform
import stat
import threading
import time
import warnings
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: the PID check alone
    fcntl = None  # type: ignore[assignment]

REQUIRED = ("claim", "budget", "point", "value", "replicate", "metrics", "config_hash")
FILENAME = "results.jsonl"
LOCKNAME = ".writer.lock"


class CorruptStore(ValueError):
    """A results file that cannot be read (names the path and the line)."""


class StoreInUse(OSError):
    """Another process is writing to the results directory (names it and the owner's PID)."""


def versions() -> dict[str, str]:
    """Package, numpy, scipy and Python versions (recorded in every row)."""
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    try:
        pkg = version("bilevel-theory")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        pkg = "unknown"
    try:
        scipy = version("scipy")
    except PackageNotFoundError:  # pragma: no cover - scipy is a dependency
        scipy = "absent"
    return {"bilevel-theory": pkg, "numpy": np.__version__, "scipy": scipy,
            "python": platform.python_version()}


def check_directory(directory: Any, name: str = "directory") -> Path:
    """``directory`` as a :class:`Path`; an empty name (which would mean the current
    directory) is a ``ValueError`` naming ``name``."""
    if not isinstance(directory, str | os.PathLike):
        raise TypeError(f"`{name}` must be a path, got {type(directory).__name__}")
    if not os.fspath(directory).strip():
        raise ValueError(f"`{name}` must name a directory, got {os.fspath(directory)!r}")
    return Path(directory)


def ensure_writable_directory(directory: str | os.PathLike, what: str = "results") -> Path:
    """Create ``directory`` (with its parents) and check it accepts files; ``OSError`` naming
    it otherwise (run before any work, so that a bad directory costs nothing)."""
    directory = check_directory(directory, what)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / f".write-test-{os.getpid()}"
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        os.close(fd)
        probe.unlink()
    except OSError as err:
        raise OSError(f"cannot write {what} to {directory}: {err.strerror or err}") from None
    return directory


_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISDIR, "a directory"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def _kind(mode: int) -> str:
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def open_regular(path: Path, flags: int, what: str = "results store") -> int:
    """``os.open`` that refuses anything but a regular file (a symbolic link is not
    followed, a FIFO not waited on): :class:`CorruptStore` naming the path."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise CorruptStore(f"{what} {path} is {_kind(st.st_mode)}, not a regular file; "
                           "refusing to use it (move it away)")
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise CorruptStore(f"{what} {path} is a symbolic link, not a regular file; "
                               "refusing to follow it (move it away)") from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise CorruptStore(f"{what} {path} is {_kind(mode)}, not a regular file; refusing "
                           "to use it (move it away)")
    return fd


def open_unshared(path: Path, flags: int, what: str = "results store",
                  copy: bool = True) -> int:
    """:func:`open_regular`, and a file with other hard links (``cp -al``) is first replaced
    by a copy of itself (atomic rename; ``copy=False``: by an empty file), so that writing
    never changes the other names."""
    fd = open_regular(path, flags, what)
    st = os.fstat(fd)
    if st.st_nlink <= 1:
        return fd
    tmp = path.with_name(f".{path.name}.{os.getpid()}.unlink")
    try:
        _write_new(tmp, os.pread(fd, st.st_size, 0) if copy else b"",
                   stat.S_IMODE(st.st_mode))
        os.replace(tmp, path)
    except OSError as err:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise OSError(err.errno, f"cannot break the hard link of {what} {path} "
                                 f"({st.st_nlink} names): {err.strerror or err}") from None
    finally:
        os.close(fd)
    warnings.warn(f"{what} {path} had {st.st_nlink} hard links (a `cp -al` snapshot?): "
                  "replaced it by a file of its own so that the other names are left unchanged",
                  stacklevel=3)
    return open_regular(path, flags, what)


_TAGS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _tag(v: float) -> str:
    return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")


def strict_json(obj: Any) -> Any:
    """``obj`` (dicts, lists, tuples) with every non-finite float as ``None``: what
    ``json.dumps(..., allow_nan=False)`` accepts (strict JSON has no NaN/Infinity)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: strict_json(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [strict_json(v) for v in obj]
    return obj


def dumps_strict(obj: Any, **kwargs: Any) -> str:
    """``json.dumps`` of :func:`strict_json` ``(obj)``, refusing any NaN/Infinity left."""
    return json.dumps(strict_json(obj), allow_nan=False, **kwargs)


def encode_row(row: Mapping[str, Any]) -> str:
    """A store row as one line of strict JSON: a non-finite metric is ``null`` and named in
    ``"nonfinite"`` (``"nan"``, ``"inf"`` or ``"-inf"``; :func:`decode_row` restores it)."""
    metrics = row.get("metrics")
    bad = ({k: _tag(v) for k, v in metrics.items()
            if isinstance(v, float) and not math.isfinite(v)}
           if isinstance(metrics, Mapping) else {})
    if bad:
        row = {**row, "metrics": {k: None if k in bad else v for k, v in metrics.items()},
               "nonfinite": bad}
    try:
        return json.dumps(row, separators=(",", ":"), allow_nan=False)
    except ValueError:
        raise ValueError(f"row of claim {row.get('claim')!r} point {row.get('point')!r}: only "
                         "metrics may be non-finite (NaN/inf)") from None


def decode_row(row: Any) -> Any:
    """A parsed line with the metrics named in its ``"nonfinite"`` restored (see
    :func:`encode_row`); anything else unchanged."""
    if type(row) is not dict or "nonfinite" not in row:
        return row
    tags, metrics = row.pop("nonfinite"), row.get("metrics")
    if isinstance(tags, dict) and isinstance(metrics, dict):
        for k, tag in tags.items():
            if metrics.get(k, 0) is None and tag in _TAGS:
                metrics[k] = _TAGS[tag]
    return row


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _Held:
    def __init__(self, fd: int, path: Path) -> None:
        self.fd, self.path, self.depth = fd, path, 1


#: the writer locks this process holds, by directory (device, inode): re-entrant per process
_HELD: dict[tuple[int, int], _Held] = {}
_GUARD = threading.RLock()


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
        return int(text.split()[0]) if text else None
    except (OSError, ValueError, IndexError):
        return None


def acquire_writer(directory: Path) -> tuple[int, int]:
    """Take (or re-enter) the writer lock of ``directory``; returns its key for
    :func:`release_writer`.  :class:`StoreInUse` when another live process holds it."""
    st = os.stat(directory)
    key = (st.st_dev, st.st_ino)
    with _GUARD:
        held = _HELD.get(key)
        if held is not None:
            held.depth += 1
            return key
        path = directory / LOCKNAME
        # a lock shared with another directory holds that directory's owner: not copied
        fd = open_unshared(path, os.O_RDWR | os.O_CREAT, "writer lock", copy=False)
        try:
            owner = _read_pid(fd)
            locked = False
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    locked = True
                except BlockingIOError:
                    raise StoreInUse(
                        f"results directory {directory} is in use by another writer "
                        f"(PID {owner if owner else 'unknown'}, lock {path}): one run per "
                        "results directory; wait for it to finish or choose another --out"
                    ) from None
                except OSError:  # no flock on this file system: the PID check alone
                    locked = False
            if not locked and owner and owner != os.getpid() and _pid_alive(owner):
                raise StoreInUse(f"results directory {directory} is in use by another writer "
                                 f"(PID {owner}, lock {path}): one run per results "
                                 "directory; wait for it to finish or choose another --out")
            # a PID left there is a stale lock (its process died holding it): taken over
            stale = _read_pid(fd)
            if stale and stale != os.getpid():
                warnings.warn(f"{path}: took over the stale writer lock of PID {stale} (a run "
                              "that ended without releasing it, e.g. killed)", stacklevel=4)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except BaseException:
            os.close(fd)
            raise
        _HELD[key] = _Held(fd, path)
        return key


def release_writer(key: tuple[int, int]) -> None:
    """Leave the writer lock taken by :func:`acquire_writer` (released at depth 0)."""
    with _GUARD:
        held = _HELD.get(key)
        if held is None:
            return
        held.depth -= 1
        if held.depth > 0:
            return
        del _HELD[key]
        try:
            os.ftruncate(held.fd, 0)  # no owner: nothing stale left behind
        except OSError:
            pass
        finally:
            os.close(held.fd)  # releases the flock


def _write_new(path: Path, data: bytes, mode: int, exclusive: bool = False) -> None:
    """Write ``data`` to a new file ``path`` and fsync it (removed again on failure)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    flags |= os.O_EXCL if exclusive else os.O_TRUNC
    fd = os.open(path, flags, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            path.unlink()
        raise
    finally:
        os.close(fd)


# a row's optional fields and their types (JSON numbers: int or float, never bool)
_NUMBER = (int, float)


def _is_number(v: Any) -> bool:
    return isinstance(v, _NUMBER) and not isinstance(v, bool)


def _is_index(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


_NUM_TYPES = (int, float)
_OPTIONAL_INDEX = ("seed", "base_seed")


def _plainly_valid(row: Any) -> bool:
    """The common case, checked fast (exact JSON types); ``False`` means "look closer"."""
    try:
        if type(row) is not dict:
            return False
        point, replicate, metrics = row["point"], row["replicate"], row["metrics"]
        if not (type(row["claim"]) is str and type(row["budget"]) is str
                and type(row["config_hash"]) is str and type(point) is int and point >= 0
                and type(replicate) is int and replicate >= 0
                and type(row["value"]) in _NUM_TYPES and type(metrics) is dict):
            return False
        for k, v in metrics.items():
            if type(v) not in _NUM_TYPES or type(k) is not str:
                return False
        total = row.get("replicates")
        if total is not None and not (type(total) is int and replicate < total):
            return False
        for k in _OPTIONAL_INDEX:
            v = row.get(k)
            if v is not None and not (type(v) is int and v >= 0):
                return False
        backend, seconds, vers = row.get("backend"), row.get("seconds"), row.get("versions")
        return ((backend is None or type(backend) is str)
                and (seconds is None or type(seconds) in _NUM_TYPES)
                and (vers is None or type(vers) is dict))
    except KeyError:
        return False


def row_problem(row: Any) -> str | None:
    """Why ``row`` (a parsed line) is not a store row, or ``None`` when it is one."""
    if _plainly_valid(row):
        return None
    if not isinstance(row, dict):
        return f"is not a JSON object (got a JSON {type(row).__name__})"
    missing = [k for k in REQUIRED if k not in row]
    if missing:
        return f"lacks required keys {missing}"
    bad = [k for k in ("claim", "budget", "config_hash") if not isinstance(row[k], str)]
    bad += [k for k in ("point", "replicate") if not _is_index(row[k])]
    if not _is_number(row["value"]):
        bad.append("value")
    metrics = row["metrics"]
    if not isinstance(metrics, dict) or not all(
            isinstance(k, str) and _is_number(v) for k, v in metrics.items()):
        bad.append("metrics")
    if "replicates" in row and not (_is_index(row["replicates"]) and row["replicates"] > 0
                                    and _is_index(row["replicate"])
                                    and row["replicate"] < row["replicates"]):
        bad.append("replicates")
    for k in ("seed", "base_seed"):
        if row.get(k) is not None and not _is_index(row[k]):
            bad.append(k)
    if row.get("backend") is not None and not isinstance(row["backend"], str):
        bad.append("backend")
    for k in ("seconds", "peak_rss_mib"):
        if row.get(k) is not None and not _is_number(row[k]):
            bad.append(k)
    if row.get("versions") is not None and not isinstance(row["versions"], dict):
        bad.append("versions")
    if bad:
        return "has a wrong type or value in " + ", ".join(
            f"{k!r} ({type(row[k]).__name__} {_clip(row[k])})" for k in bad)
    return None


def _clip(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:39] + "…"


class ResultsStore:
    """``results.jsonl`` in ``directory`` (created, with its parents, when missing)."""

    def __init__(self, directory: str | os.PathLike) -> None:
        self.directory = check_directory(directory, "results directory")
        if self.directory.exists() and not self.directory.is_dir():
            raise NotADirectoryError(f"results directory {self.directory} is not a directory")
        self.path = self.directory / FILENAME
        self._cache: tuple[tuple[int, int, int], list[dict]] | None = None
        self._by_claim: tuple[list[dict], dict[str, list[dict]]] | None = None
        #: ``(line, reason)`` of the lines skipped by the latest read (not store rows)
        self.skipped: list[tuple[int, str]] = []

    # ------------------------------------------------------------------------------- writing

    def ensure_writable(self) -> None:
        """Create the directory and check it accepts files (``OSError`` naming it if not)."""
        ensure_writable_directory(self.directory, "results")

    @contextlib.contextmanager
    def writer(self) -> Iterator[ResultsStore]:
        """Hold the directory's writer lock (re-entrant in this process); a second process
        writing there is refused with :class:`StoreInUse`."""
        self.directory.mkdir(parents=True, exist_ok=True)
        key = acquire_writer(self.directory)
        try:
            yield self
        finally:
            release_writer(key)

    def _repair_tail(self, fd: int, size: int) -> int:
        """Truncate a trailing fragment (a last line without newline); the new size."""
        if not size or os.pread(fd, 1, size - 1) == b"\n":
            return size
        data = os.pread(fd, size, 0)
        keep = data.rfind(b"\n") + 1
        line = data.count(b"\n") + 1
        warnings.warn(f"{self.path}: removed a partial last line (line {line}, "
                      f"{size - keep} bytes, a write cut short); its point will be recomputed",
                      stacklevel=4)
        os.ftruncate(fd, keep)
        os.fsync(fd)
        return keep

    def append_point(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Append the rows of one sweep point in one ``os.write`` (O_APPEND), then fsync,
        under the writer lock; a failed write is rolled back and names the file."""
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
        data = "".join(encode_row(r) + "\n" for r in rows).encode()
        with self.writer(), _GUARD:
            fd = open_unshared(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
            try:
                size = self._repair_tail(fd, os.fstat(fd).st_size)
                try:
                    written = os.write(fd, data)
                    if written != len(data):  # a full disk can cut a write short
                        raise OSError(errno.ENOSPC, f"short write ({written} of {len(data)} "
                                                    "bytes)")
                    os.fsync(fd)
                except OSError as err:
                    with contextlib.suppress(OSError):
                        os.ftruncate(fd, size)  # whole points only, even on a full disk
                    raise OSError(err.errno, f"cannot append to {self.path}: "
                                             f"{err.strerror or err}") from None
            finally:
                os.close(fd)

    # ------------------------------------------------------------------------------- reading

    def _read(self) -> list[dict]:
        try:
            fd = open_regular(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return []
        try:
            st = os.fstat(fd)
            key = (st.st_ino, st.st_size, st.st_mtime_ns)
            if self._cache is not None and self._cache[0] == key:
                return self._cache[1]
            with os.fdopen(os.dup(fd), "rb") as fh:
                data = fh.read()
        finally:
            os.close(fd)
        lines = data.split(b"\n")
        tail = lines.pop()  # b"" when the file ends with a newline
        if tail:
            warnings.warn(f"{self.path}: ignoring a partial last line (line {len(lines) + 1}, "
                          f"{len(tail)} bytes without a newline: a write cut short); its point "
                          "will be recomputed", stacklevel=3)
        rows, skipped = [], []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                raise CorruptStore(f"{self.path}: line {number} is empty; `bilevel-theory "
                                   "verify --repair` moves the damaged lines aside")
            try:
                row = decode_row(json.loads(line))
            except (json.JSONDecodeError, UnicodeDecodeError) as err:
                raise CorruptStore(f"{self.path}: line {number} is not valid JSON ({err}); "
                                   "`bilevel-theory verify --repair` moves the damaged lines "
                                   "aside and recomputes their points") from None
            except RecursionError:
                row, problem = None, "is nested too deeply to be a row"
            else:
                problem = row_problem(row)
            if problem is not None:
                skipped.append((number, problem))
                warnings.warn(f"{self.path}:{number}: skipped, the line {problem}; its point "
                              "will be recomputed", stacklevel=3)
                continue
            rows.append(row)
        self.skipped = skipped
        self._cache = (key, rows)
        return rows

    def repair(self) -> tuple[int, Path | None]:
        """Move the lines that are not valid JSON (empty ones and a cut-short last line
        included) to ``results.jsonl.corrupt-<UTC timestamp>`` and keep every other line, in
        order (atomic rename, under the writer lock); their points are then incomplete and
        recomputed by the next run.  Returns ``(lines moved, that file)``; ``(0, None)`` when
        nothing is damaged."""
        with self.writer(), _GUARD:
            try:
                fd = open_regular(self.path, os.O_RDONLY)
            except FileNotFoundError:
                return 0, None
            try:
                with os.fdopen(os.dup(fd), "rb") as fh:
                    data = fh.read()
                mode = stat.S_IMODE(os.fstat(fd).st_mode)
            finally:
                os.close(fd)
            lines = data.split(b"\n")
            tail = lines.pop()
            good, bad = [], []
            for line in lines:
                try:
                    json.loads(line)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    bad.append(line)
                    continue
                except RecursionError:  # valid JSON, not a row: skipped by the reader
                    pass
                good.append(line)
            bad += [tail] if tail else []  # a write cut short
            if not bad:
                return 0, None
            stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
            moved = self.path.with_name(f"{FILENAME}.corrupt-{stamp}")
            n = 1
            while moved.exists() or moved.is_symlink():
                n += 1
                moved = self.path.with_name(f"{FILENAME}.corrupt-{stamp}-{n}")
            _write_new(moved, b"".join(line + b"\n" for line in bad), 0o644, exclusive=True)
            tmp = self.path.with_name(f".{FILENAME}.{os.getpid()}.repair")
            _write_new(tmp, b"".join(line + b"\n" for line in good), mode)
            os.replace(tmp, self.path)
            self._cache = None
            return len(bad), moved

    def rows(self, claim: str | None = None, budget: str | None = None,
             config_hash: str | None = None, base_seed: int | None = None,
             backend: str | None = None) -> list[dict]:
        """Stored rows matching every given filter; for a replicate stored twice, the last."""
        out: dict[tuple, dict] = {}
        for r in self._read() if claim is None else self._claim_rows(claim):
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

    def _claim_rows(self, claim: str) -> list[dict]:
        """The stored rows of ``claim`` in file order, from an index of the latest read (built
        once per read: a summary asks for every claim's rows of a store of ~10⁵ rows)."""
        rows = self._read()
        if self._by_claim is None or self._by_claim[0] is not rows:
            index: dict[str, list[dict]] = {}
            for r in rows:
                index.setdefault(r["claim"], []).append(r)
            self._by_claim = (rows, index)
        return self._by_claim[1].get(claim, [])

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
