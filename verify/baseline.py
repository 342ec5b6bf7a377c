"""Regenerate ``verify/baseline.json``: the expected verdict of every catalogue claim.

    python -m bilevel_theory.verify.baseline            # rewrite verify/baseline.json from verify.CLAIMS
    python -m bilevel_theory.verify.baseline --check    # exit 1 if the file is out of sync with the catalogue

The baseline is what ``bilevel-theory compare results/ verify/baseline.json`` gates on in CI;
it is derived from each claim's ``expected`` field, never edited by hand.  An empty baseline
would pass any results: writing one (an empty catalogue) is refused, as ``compare`` refuses to
read one.  Exit codes: 0 written / in sync, 1 out of sync, 2 bad input (an empty catalogue, a
baseline path that is not a regular file or cannot be written).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path

from .claim import Claim

PATH = Path(__file__).with_name("baseline.json")


def expected_verdicts(claims: Mapping[str, Claim] | None = None) -> dict[str, str]:
    """``id -> expected verdict`` of the catalogue (sorted by id)."""
    if claims is None:
        from . import CLAIMS as claims  # noqa: PLC0415
    return {cid: claims[cid].expected for cid in sorted(claims)}


def render(claims: Mapping[str, Claim] | None = None) -> str:
    """The baseline file's exact text."""
    return json.dumps(expected_verdicts(claims), indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bilevel_theory.verify.baseline", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only check the file is in sync")
    parser.add_argument("--path", type=Path, default=PATH, help="baseline file (default: %(default)s)")
    args = parser.parse_args(argv)
    expected = expected_verdicts()
    if not expected:
        print("error: the claims catalogue is empty: refusing to write an empty baseline (it "
              "would pass any results)", file=sys.stderr)
        return 2
    text = json.dumps(expected, indent=2) + "\n"
    if args.check:
        return check_in_sync(args.path, text, "the catalogue",
                             "python -m bilevel_theory.verify.baseline",
                             f" ({len(expected)} claims)")
    from .runner import _write_json  # noqa: PLC0415

    try:
        _write_json(args.path, expected)  # atomic; the same text as render()
    except OSError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {args.path} ({len(expected)} claims)")
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


if __name__ == "__main__":
    sys.exit(main())
