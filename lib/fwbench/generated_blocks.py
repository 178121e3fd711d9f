"""Generated blocks in the README and the docs/ pages: find the one page that holds a block and replace its text.

A block is the text between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``. It may live on the README's front
page or on any ``docs/*.md`` page beside it, wherever a reader looks for it (``fwbench.readme`` renders the text).
Decisions: a block found nowhere, or more than once (on one page or on several), stops with an error naming the
pages, since which copy to write would be a guess; nothing is written then.
"""

from __future__ import annotations

import re
from pathlib import Path


def markers(name: str) -> tuple[str, str]:
    """The start and end comments of block ``name``."""
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def block_pages(readme: Path) -> list[Path]:
    """The pages a block may live on: the README and the ``docs/*.md`` pages beside it."""
    return [readme, *sorted((readme.parent / "docs").glob("*.md"))]


def find_block(name: str, pages: list[Path]) -> Path:
    """The one page of ``pages`` that holds block ``name``'s start marker (``write_block`` then checks that its end
    marker follows)."""
    start, end = markers(name)
    found = [page for page in pages if page.exists() for _ in range(page.read_text().count(start))]  # each copy
    if not found:
        raise SystemExit(f"no page has the {start} ... {end} block; looked in {', '.join(map(str, pages))}")
    if len(found) > 1:
        raise SystemExit(
            f"the {name} block is on more than one page or twice on one: "
            f"{', '.join(map(str, found))}; keep exactly one {start} ... {end} pair"
        )
    return found[0]


def write_block(name: str, text: str, readme: Path) -> Path:
    """Replace block ``name`` with ``text`` on whichever page beside ``readme`` holds it (``find_block``); returns
    the page written."""
    page = find_block(name, block_pages(readme))
    start, end = markers(name)
    content = page.read_text()
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    if not pattern.search(content):
        raise SystemExit(f"{page} has no {start} ... {end} block")
    page.write_text(pattern.sub(lambda _: f"{start}\n{text}\n{end}", content))
    return page
