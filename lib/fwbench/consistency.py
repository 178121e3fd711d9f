"""One quantity, one value: read every named number (``fwbench.quantity`` spans) back from the rendered pages and
report each name that carries more than one value, interval or text.

    python -m fwbench.consistency reports/ README.md docs/

The pages are whatever a reader sees: the site's HTML (the post and the notebook pages) and the Markdown pages
(README.md, docs/*.md). A mention is a ``<span class="q" data-q=NAME ...>`` as ``Quantity.markup`` writes it;
the check compares, per name, the stored values (value, interval, level: equal on every page to ``REL_TOL``) and,
per name and form (as stored or inverse, with or without its interval), the text shown.

Decision (``REL_TOL``): stored values agree when they are equal to a relative 1e-9. Pages rendered on one machine
from one computation agree exactly; the same store read on another CPU (another BLAS kernel, another order of a
floating-point sum) gives the same intervals to the 15th digit only (C1's lower bound 1.115047833109518 on an Intel
Xeon, ...519 on the AMD EPYC that wrote the README). A page that computed a number its own way differs by far more
than 1e-9: the shown text rounds to 3 significant digits, so anything a reader could see differ is caught.
"""

from __future__ import annotations

import argparse
import html
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

# a quantity span, its attributes in any order (an HTML sanitizer may sort them)
SPAN = re.compile(r'<span ((?:[a-z-]+="[^"]*"\s*)*class="q"(?:\s*[a-z-]+="[^"]*")*)\s*>(.*?)</span>', re.S)
ATTR = re.compile(r'data-([a-z]+)="([^"]*)"')
PAGE_SUFFIXES = (".html", ".md")
REL_TOL = 1e-9  # far below the 3 significant digits a page shows; far above float round-off across CPUs


@dataclass(frozen=True)
class Mention:
    """One named number as a page shows it."""

    page: str
    name: str
    value: float
    ci_low: float
    ci_high: float
    level: float
    form: str
    text: str

    def stored(self) -> tuple:
        """The stored values (value, interval, level)."""
        return (self.value, self.ci_low, self.ci_high, self.level)

    def agrees(self, other: Mention, rel_tol: float = REL_TOL) -> bool:
        """The same stored values to ``rel_tol`` (NaN agrees with NaN only)."""
        return all(
            (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=rel_tol, abs_tol=0.0)
            for a, b in zip(self.stored(), other.stored(), strict=True)
        )


def mentions(text: str, page: str) -> list[Mention]:
    """Every quantity span of one page's text (HTML or Markdown)."""
    found = []
    for attrs, inner in SPAN.findall(text):
        a = {k: html.unescape(v) for k, v in ATTR.findall(attrs)}
        if "q" not in a:
            continue
        found.append(
            Mention(
                page=page,
                name=a["q"],
                value=float(a.get("v", "nan")),
                ci_low=float(a.get("lo", "nan")),
                ci_high=float(a.get("hi", "nan")),
                level=float(a.get("level", "nan")),
                form=a.get("form", "stored") + ("/value" if a.get("ci") == "hidden" else ""),
                text=" ".join(html.unescape(re.sub(r"<[^>]+>", "", inner)).split()),
            )
        )
    return found


def pages(paths: list[Path]) -> list[Path]:
    """The page files under ``paths`` (files as given, folders searched for .html and .md)."""
    out = []
    for path in paths:
        if path.is_dir():
            out += sorted(p for p in path.rglob("*") if p.suffix in PAGE_SUFFIXES and p.is_file())
        elif path.is_file():
            out.append(path)
    return out


def collect(paths: list[Path]) -> list[Mention]:
    return [m for p in pages(paths) for m in mentions(p.read_text(encoding="utf-8", errors="replace"), str(p))]


def disagreements(found: list[Mention]) -> list[str]:
    """One line per quantity shown with two values (or two texts for the same form); empty when consistent."""
    by_name: dict[str, list[Mention]] = {}
    for m in found:
        by_name.setdefault(m.name, []).append(m)
    problems = []
    for name, ms in sorted(by_name.items()):
        stored = []  # one representative per group of agreeing values
        for m in ms:
            if not any(m.agrees(s) for s in stored):
                stored.append(m)
        if len(stored) > 1:
            where = "; ".join(sorted({f"{Path(m.page).name}: {m.text}" for m in ms}))
            problems.append(f"{name}: {len(stored)} different values ({where})")
            continue
        for form in sorted({m.form for m in ms}):
            texts = {m.text for m in ms if m.form == form}
            if len(texts) > 1:
                problems.append(f"{name} ({form}): shown as {' / '.join(sorted(texts))}")
    return problems


def summary(found: list[Mention]) -> str:
    names = {m.name for m in found}
    return f"{len(found)} mention(s) of {len(names)} quantity(ies) on {len({m.page for m in found})} page(s)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fwbench.consistency", description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", help="site folders and Markdown pages")
    args = parser.parse_args(argv)
    found = collect([Path(p) for p in args.paths])
    problems = disagreements(found)
    print(summary(found))
    for line in problems:
        print(f"DISAGREE {line}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
