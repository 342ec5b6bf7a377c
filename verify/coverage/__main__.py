"""Regenerate ``docs/coverage.md`` from the inventories and the claims catalogue.

    python3 -m bilevel_theory.verify.coverage --write    # rewrite docs/coverage.md
    python3 -m bilevel_theory.verify.coverage --check    # exit 1 if it is out of sync

The page uses this package's inventories and claims modules only (installed plug-ins are left
out, so it does not depend on the environment).  Exit codes: 0 written / in sync, 1 out of
sync, 2 bad input (a path that cannot be read or written).
"""

from __future__ import annotations

import sys
from pathlib import Path

#: the page in a source checkout (an installed package has no docs/: pass --path)
PATH = Path(__file__).resolve().parents[2] / "docs" / "coverage.md"


def page() -> str:
    """The page's exact text."""
    from ..catalogue_doc import package_claims  # noqa: PLC0415
    from .mapping import coverage, package_inventories  # noqa: PLC0415
    from .render import markdown  # noqa: PLC0415

    return markdown(coverage(package_claims(), package_inventories()))


def main(argv: list[str] | None = None) -> int:
    from ..generated import parser, write_or_check  # noqa: PLC0415

    args = parser("python3 -m bilevel_theory.verify.coverage", __doc__, "page", PATH).parse_args(argv)

    return write_or_check(args.path, page(), args.check, "the inventories and claims",
                          "python3 -m bilevel_theory.verify.coverage --write")


if __name__ == "__main__":
    sys.exit(main())
