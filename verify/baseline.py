"""Regenerate ``verify/baseline.json``: the expected verdict of every catalogue claim.

    python -m bilevel_theory.verify.baseline            # rewrite verify/baseline.json from verify.CLAIMS
    python -m bilevel_theory.verify.baseline --check    # exit 1 if the file is out of sync with the catalogue

The baseline is what ``bilevel-theory compare results/ verify/baseline.json`` gates on in CI;
it is derived from each claim's ``expected`` field, never edited by hand.
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
    text = render()
    if args.check:
        current = args.path.read_text() if args.path.exists() else ""
        if current != text:
            print(f"{args.path} is out of sync with the catalogue; run python -m "
                  "bilevel_theory.verify.baseline", file=sys.stderr)
            return 1
        print(f"{args.path} is in sync ({len(json.loads(text))} claims)")
        return 0
    args.path.write_text(text)
    print(f"wrote {args.path} ({len(json.loads(text))} claims)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
