"""Check rendered pages for numbers that disagree: every named quantity (``fwbench.quantity`` spans) read back from
site folders and Markdown pages, and each name that carries more than one value, interval or text, or one label
shown under conditions its page does not name. A tool of the repository, not part of the package ``fwbench``
(which never imports it); the tests load it to check the committed pages and planted disagreements.

    .venv/bin/python tools/check_pages.py build/paper-post/index.html README.md docs/

Exit status 1 when a page disagrees (each problem on a line of its own, starting ``DISAGREE``), else 0.

Per name, the stored values (value, interval, level) must agree on every page to ``REL_TOL``, and per name and
form (as stored or inverse, with or without its interval) so must the text shown.

Conditions: mentions are grouped by the label their quantity declares (its name where it declares none). Where
one label's mentions differ in a condition (a CPU model, a thread count, trials at once, a part of the study),
each mention measured under a declared condition must name its words in its block (its table row, list item or
paragraph), so a reader never sees one label with two numbers and no word telling them apart.

Decision (``REL_TOL``): 1e-9. The same store read on another CPU (another BLAS kernel, another order of a
floating-point sum) gives the same intervals to the 15th digit only; a page that computed a number its own way
differs by far more, since the text shown rounds to 3 significant digits.
"""

from __future__ import annotations

import argparse
import html
import json
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

# a quantity span, its attributes in any order (an HTML sanitizer may sort them)
SPAN = re.compile(r'<span ((?:[a-z-]+="[^"]*"\s*)*class="q"(?:\s*[a-z-]+="[^"]*")*)\s*>(.*?)</span>', re.S)
ATTR = re.compile(r'data-([a-z]+)="([^"]*)"')
# where a mention's block (table row, list item, paragraph) ends, in Markdown or in HTML
BLOCK = re.compile(r"\n\s*\n|\n(?=\s*(?:[|#*+-]|\d+\.)\s)|</?(?:p|li|tr|h[1-6]|div|br)\b[^>]*>")
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
    label: str = ""
    conditions: tuple[tuple[str, str], ...] = ()
    block: str = field(default="", compare=False)  # the visible text around it: one mention wherever it sits

    def stored(self) -> tuple:
        return (self.value, self.ci_low, self.ci_high, self.level)

    def agrees(self, other: Mention) -> bool:
        """The same stored values to ``REL_TOL`` (NaN agrees with NaN only)."""
        return all(
            (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=REL_TOL, abs_tol=0.0)
            for a, b in zip(self.stored(), other.stored(), strict=True)
        )


def _visible(text: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", text)).split())


def mentions(text: str, page: str) -> list[Mention]:
    """Every quantity span of one page's text (HTML or Markdown)."""
    found = []
    for block in BLOCK.split(text):  # no block boundary falls inside a span
        for attrs, inner in SPAN.findall(block):
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
                    text=_visible(inner),
                    label=a.get("label", a["q"]),
                    conditions=tuple(sorted(json.loads(a.get("conditions", "{}")).items())),
                    block=_visible(block),
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


def _by(found: list[Mention], key: str) -> list[tuple[str, list[Mention]]]:
    """The mentions grouped by attribute ``key``, the groups sorted."""
    groups: dict[str, list[Mention]] = {}
    for m in found:
        groups.setdefault(getattr(m, key), []).append(m)
    return sorted(groups.items())


def disagreements(found: list[Mention]) -> list[str]:
    """One line per quantity shown with two values (or two texts for the same form); empty when consistent."""
    problems = []
    for name, ms in _by(found, "name"):
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
    return problems + unnamed_conditions(found)


def unnamed_conditions(found: list[Mention]) -> list[str]:
    """One line per label whose mentions differ in a condition that a mention's block does not name."""
    problems = []
    for label, ms in _by(found, "label"):
        keys = sorted({k for m in ms for k, _ in m.conditions})
        differing = [k for k in keys if len({dict(m.conditions).get(k) for m in ms}) > 1]
        unnamed = []
        for m in ms:
            missing = [f"{k} {v}" for k, v in m.conditions if k in differing and str(v).lower() not in m.block.lower()]
            if missing:
                unnamed.append(f"{Path(m.page).name}: {m.text} under {', '.join(missing)}")
        if unnamed:
            on, what = ", ".join(sorted({Path(m.page).name for m in ms})), "; ".join(sorted(set(unnamed)))
            problems.append(f"{label} on {on}: {', '.join(differing)} differ and are not named ({what})")
    return problems


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
