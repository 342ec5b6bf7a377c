"""Write or check a baseline: the expected verdict of every claim, as JSON ``id -> verdict``.

    python -m bilevel_theory.verify.baseline             # rewrite verify/baseline.json
    python -m bilevel_theory.verify.baseline check       # exit 1 if it is out of sync
    python -m bilevel_theory.verify.baseline write --out my_baseline.json 'toy.*'
    python -m bilevel_theory.verify.baseline check --out my_baseline.json 'toy.*'

Without PATTERN the baseline holds this package's own claims (``verify/claims/<paper>/``):
claims of installed plug-ins and claims registered at run time are left out, so installing a
plug-in leaves ``verify/baseline.json`` in sync.  With PATTERNs (as in ``bilevel-theory list``)
it holds the matching claims of the whole catalogue, plug-ins included: a plug-in writes and
checks a baseline of its own claims (``--out`` is then required).  ``--check`` and ``--path``
are the older spellings of ``check`` and ``--out``.

The baseline is what ``bilevel-theory compare results/ verify/baseline.json`` gates on in CI;
it is derived from each claim's ``expected`` field, never edited by hand.  An empty baseline
would pass any results: writing one (an empty catalogue) is refused, as ``compare`` refuses to
read one.  Exit codes: 0 written / in sync, 1 out of sync, 2 bad input (an empty catalogue, a
pattern that matches no claim, a baseline path that is not a regular file or cannot be
written).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path

from .claim import Claim
from .generated import check_in_sync

PATH = Path(__file__).with_name("baseline.json")


def expected_verdicts(claims: Mapping[str, Claim] | None = None) -> dict[str, str]:
    """``id -> expected verdict`` of ``claims`` (sorted by id); default: this package's own
    claims (no plug-in's, none registered at run time)."""
    if claims is None:
        from .catalogue_doc import package_claims  # noqa: PLC0415

        claims = package_claims()
    return {cid: claims[cid].expected for cid in sorted(claims)}


def render(claims: Mapping[str, Claim] | None = None) -> str:
    """The baseline file's exact text."""
    return json.dumps(expected_verdicts(claims), indent=2) + "\n"


ACTIONS = ("write", "check")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bilevel_theory.verify.baseline",
                                     usage="%(prog)s [write|check] [PATTERN ...] [--out PATH]",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("args", nargs="*", metavar="write|check PATTERN",
                        help="what to do (default: write), then the claims (default: this "
                             "package's own)")
    parser.add_argument("--check", action="store_true", help="the same as `check`")
    parser.add_argument("--out", "--path", dest="path", type=Path, default=None,
                        help=f"the baseline file (default: {PATH}; required with a PATTERN)")
    args = parser.parse_intermixed_args(argv)
    rest = list(args.args)
    action = rest.pop(0) if rest and rest[0] in ACTIONS else "write"
    check = args.check or action == "check"
    if rest and args.path is None:
        print(f"error: a PATTERN selects claims for a baseline of your own: give --out PATH "
              f"({PATH.name} holds this package's claims)", file=sys.stderr)
        return 2
    path = PATH if args.path is None else args.path
    if rest:
        from .claims import select  # noqa: PLC0415

        try:
            chosen = select(rest)
        except ValueError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        expected = expected_verdicts({c.id: c for c in chosen})
    else:
        expected = expected_verdicts(None)
    if not expected:
        print("error: the claims catalogue is empty: refusing to write an empty baseline (it "
              "would pass any results)", file=sys.stderr)
        return 2
    text = json.dumps(expected, indent=2) + "\n"
    if check:
        import shlex  # noqa: PLC0415

        again = shlex.join(["python", "-m", "bilevel_theory.verify.baseline", "write",
                            *(["--out", str(path)] if args.path is not None else []), *rest])
        return check_in_sync(path, text, "its claims" if rest else "the catalogue", again,
                             f" ({len(expected)} claims)")
    from .runner import _write_json  # noqa: PLC0415

    try:
        _write_json(path, expected)  # atomic; the same text as render()
    except OSError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {path} ({len(expected)} claims)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
