"""The glossary of the post: its one source is ``docs/glossary.md``, read at build time.

Each ``### heading`` of that page is an entry; its body (Markdown) is the definition. The heading names the terms
the post links to it: ``block (repeat block)`` -> "block", "repeat block"; ``MASE, sMAPE, wQL`` -> three terms;
a body's code spans written as a call (``about(r)``, ``fastest_is(v)``) add the notation ``about(``,
``fastest_is(`` (the rule notation). ``section_html`` renders the entries with one anchor each (``g-<first term>``)
for the post's "Glossary" section; ``link_first_uses`` wraps the first use of each term in the post's text in a
link to its entry: text nodes only, never inside a tag or attribute, ``code``/``pre``, a link, a heading, a table
header or the glossary itself. A term in lower case matches any case ("Arms" too); one with capitals matches as
written ("CI", not "ci"); a plural "s" is allowed; a term inside a hyphenated word ("per-trial") is not a use.

Links of a definition to other pages of ``docs/`` become links into the repository at the post's commit when the
post knows the repository's address (``repo_url``), else the link text names the page (the site holds no docs).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

from .paths import REPO_ROOT

GLOSSARY = REPO_ROOT / "docs" / "glossary.md"
START, END = "<!-- glossary:start -->", "<!-- glossary:end -->"  # the section's bounds in the page: never linked
SKIP = {"a", "code", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "th", "title", "head", "script", "style", "summary"}
_TOKEN = re.compile(r"<!--.*?-->|<(script|style)\b.*?</\1\s*>|<[^>]*>", re.S | re.I)
_TAG = re.compile(r"<\s*(/?)\s*([a-zA-Z][a-zA-Z0-9]*)([^>]*?)(/?)\s*>", re.S)
_CALL = re.compile(r"`([a-z_]+)\([^`]*\)`")
_DOC_LINK = re.compile(r"\[([^\]]+)\]\((?!https?:|#)([^)#\s]+\.md)(#[^)\s]*)?\)")


@dataclass(frozen=True)
class Entry:
    heading: str
    anchor: str
    terms: tuple[str, ...]
    body: str  # Markdown, as in docs/glossary.md

    @property
    def summary(self) -> str:
        """The definition's first sentence as plain text (the link's tooltip)."""
        text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", " ".join(self.body.split())).replace("`", "")
        first = re.split(r"(?<=\.)\s+(?=[A-Z\"(])", text, maxsplit=1)[0]
        return first if len(first) <= 240 else first[:239].rsplit(" ", 1)[0] + " ..."


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def terms_of(heading: str, body: str) -> tuple[str, ...]:
    """The terms an entry defines: the heading's comma-separated names, a parenthesised long form, and the body's
    call-like code spans (``about(r)`` -> ``about(``)."""
    names = []
    for part in heading.split(","):
        m = re.match(r"\s*([^()]+?)\s*(?:\(([^)]*)\))?\s*$", part)
        if m:
            names += [m.group(1)] + ([m.group(2).strip()] if m.group(2) else [])
    names += [f"{call}(" for call in _CALL.findall(body)]
    return tuple(dict.fromkeys(n for n in names if n))


def entries(path: Path = GLOSSARY) -> list[Entry]:
    """The entries of the glossary page (none when it is absent, e.g. an installed package without docs/)."""
    if not Path(path).is_file():
        return []
    found = []
    for chunk in re.split(r"^### ", Path(path).read_text(encoding="utf-8"), flags=re.M)[1:]:
        heading, _, body = (part.strip() for part in chunk.partition("\n"))
        if heading:
            terms = terms_of(heading, body)
            found.append(Entry(heading, f"g-{_slug(terms[0])}", terms, body))
    return found


def _doc_links(markdown: str, repo_url: str | None, commit: str | None) -> str:
    """Links to other ``docs/`` pages: into the repository at ``commit`` when its address is known, else the text
    and the page's path (the site does not hold the docs)."""

    def swap(m: re.Match) -> str:
        text, page, anchor = m.group(1), m.group(2), m.group(3) or ""
        path = (Path("docs") / page).as_posix() if not page.startswith("../") else page[3:]
        return f"[{text}]({repo_url}/blob/{commit}/{path}{anchor})" if repo_url and commit else f"{text} (`{path}`)"

    return _DOC_LINK.sub(swap, markdown)


def section_html(found: list[Entry], repo_url: str | None = None, commit: str | None = None) -> str:
    """The entries as a definition list, one anchor per entry, between the ``START``/``END`` markers."""
    from nbconvert.filters.markdown import markdown2html

    items = [
        f'<dt id="{e.anchor}">{html.escape(e.heading)}</dt>\n'
        f"<dd>{markdown2html(_doc_links(e.body, repo_url, commit)).strip()}</dd>"
        for e in found
    ]
    return f'{START}\n<dl class="glossary">\n' + "\n".join(items) + f"\n</dl>\n{END}"


def _pattern(term: str) -> str:
    """A use of ``term`` in text: a notation with its arguments (``about(1.10)``), else the words with any
    whitespace between them (a line break in the source) and an optional plural."""
    if term.endswith("("):
        return rf"(?<![A-Za-z0-9_.-]){re.escape(term)}[^()<>]*\)"
    core = r"\s+".join(re.escape(word) for word in term.split())
    return rf"(?<![A-Za-z0-9-]){core}(?:e?s)?(?![A-Za-z0-9-])"


def link_first_uses(page: str, found: list[Entry]) -> str:
    """``page`` with the first use of each term in its text linked to the term's entry (see the module's doc)."""
    if not found:
        return page
    owner = {}
    for e in found:
        for term in e.terms:
            owner.setdefault(term, e)
    ordered = sorted(owner, key=len, reverse=True)  # "claims ledger" before "claim"
    groups = {f"t{i}": term for i, term in enumerate(ordered)}
    sensitive = re.compile("|".join(f"(?P<{g}>{_pattern(t)})" for g, t in groups.items() if t != t.lower()))
    insensitive = re.compile(
        "|".join(f"(?P<{g}>{_pattern(t)})" for g, t in groups.items() if t == t.lower()), re.IGNORECASE
    )
    done: set[str] = set()

    def link_text(text: str) -> str:
        hits = []
        for regex in (sensitive, insensitive):
            if not regex.pattern:
                continue
            for m in regex.finditer(text):
                term = groups[m.lastgroup]
                hits.append((m.start(), -(m.end() - m.start()), m.end(), term))
        out, pos = [], 0
        for start, _, end, term in sorted(hits):
            if start < pos or term in done:
                continue
            entry = owner[term]
            done.add(term)
            out += [
                text[pos:start],
                f'<a class="term" href="#{entry.anchor}" title="{html.escape(entry.summary, quote=True)}">'
                f"{text[start:end]}</a>",
            ]
            pos = end
        return "".join(out) + text[pos:]

    depth = {name: 0 for name in SKIP}
    out, pos, frozen = [], 0, False
    for m in _TOKEN.finditer(page):
        text = page[pos : m.start()]
        out.append(text if frozen or any(depth.values()) else link_text(text))
        token = m.group(0)
        out.append(token)
        pos = m.end()
        if token in (START, END):
            frozen = token == START
        tag = _TAG.match(token)
        if tag and tag.group(2).lower() in depth and not tag.group(4) and not m.group(1):  # not a whole script
            name = tag.group(2).lower()
            depth[name] = max(depth[name] + (-1 if tag.group(1) else 1), 0)
    tail = page[pos:]
    out.append(tail if frozen or any(depth.values()) else link_text(tail))
    return "".join(out)
