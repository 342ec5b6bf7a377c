"""Generated files (the baseline, the catalogue page and index, the coverage map, the readings
index): one write-or-check, so that ``--check`` means the same everywhere and a stale file says
how to regenerate it.  A leaf module (standard library only), imported by each generator."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def parser(prog: str, doc: str | None, what: str, path: Path) -> argparse.ArgumentParser:
    """A generator's command line: ``--write`` or ``--check`` (one required) and ``--path``
    (default ``path``); ``what`` names the file in the help."""
    p = argparse.ArgumentParser(prog=prog, description=doc,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help=f"rewrite the {what}")
    mode.add_argument("--check", action="store_true", help=f"only check the {what} is in sync")
    p.add_argument("--path", type=Path, default=path, help=f"the {what} (default: %(default)s)")
    return p


def write_or_check(path: Path, text: str, check: bool, source: str, regenerate: str) -> int:
    """A generated file's ``--write``/``--check``: with ``check``, :func:`check_in_sync`;
    otherwise write ``text`` to ``path`` (0 written, 2 when it cannot be written)."""
    if check:
        return check_in_sync(path, text, source, regenerate)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


def check_in_sync(path: Path, text: str, source: str, regenerate: str, note: str = "") -> int:
    """Whether the generated file at ``path`` reads exactly ``text``: 0 in sync, 1 out of
    sync (saying how to ``regenerate`` it from ``source``), 2 unreadable."""
    try:
        current = _read_text(path)
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if current != text:
        print(f"{path} is out of sync with {source}; run {regenerate}", file=sys.stderr)
        return 1
    print(f"{path} is in sync{note}")
    return 0


def _read_text(path: Path) -> str:
    """The file's text, ``""`` when it does not exist; a FIFO or another non-regular file is
    an error naming it (never waited on)."""
    import os  # noqa: PLC0415
    import stat  # noqa: PLC0415

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"baseline {path}: not a regular file")
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read().decode("utf-8", "replace")
    finally:
        os.close(fd)
