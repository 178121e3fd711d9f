"""Check rendered pages for numbers that disagree: every named quantity (``fwbench.quantity`` spans) read back from
site folders and Markdown pages, and each name that carries more than one value, interval or text, or one label
shown under conditions its page does not name (``fwbench.consistency``). A tool of the repository, not part of
the package ``fwbench``; the tests run the same check on the committed pages.

    .venv/bin/python tools/check_pages.py build/paper-post/index.html README.md docs/

Exit status 1 when a page disagrees (each problem on a line of its own, starting ``DISAGREE``), else 0."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from fwbench.consistency import collect, disagreements  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", help="site folders and Markdown pages")
    args = parser.parse_args(argv)
    found = collect([Path(p) for p in args.paths])
    problems = disagreements(found)
    pages = len({m.page for m in found})
    print(f"{len(found)} mention(s) of {len({m.name for m in found})} quantity(ies) on {pages} page(s)")
    for line in problems:
        print(f"DISAGREE {line}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
