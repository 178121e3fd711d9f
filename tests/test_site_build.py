"""The post built from the committed paper store (``paper_post``: read once, never written) without notebooks or a
browser (the slow browser test is test_site.py): only the arms that ran, links that resolve inside the site, a
glossary linked from the first use of each term, and one confidence level per table, stated in its header."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from fwbench import glossary, ledger, prose, readme, site_files
from fwbench.analysis import Results
from fwbench.store import ResultsStore
from fwbench.studies import all_studies, arm_table

PROFILE = "paper"


@pytest.fixture
def site(paper_results, paper_post):
    """The committed store (read-only), the post's index.html and its text."""
    return paper_results.store, paper_post, paper_post.read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------------- helpers
class Texts(HTMLParser):
    """The page's text chunks in order, each with the open elements around it (tag, attributes)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.chunks = [], []

    def handle_starttag(self, tag, attrs):
        if tag not in ("meta", "img", "br", "link", "hr", "input"):
            self.stack.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        self.chunks.append((data, list(self.stack)))


def texts(page: str) -> list:
    parser = Texts()
    parser.feed(page)
    return parser.chunks


def section(page: str, anchor: str) -> str:
    """The HTML from the ``<h2 id=anchor>`` to the next ``<h2``."""
    start = page.index(f'<h2 id="{anchor}">')
    end = page.find("<h2", start + 1)
    return page[start : end if end > 0 else None]


LEVEL = re.compile(r"(\d+(?:\.\d+)?)\s?% (?:family-wise )?CI")


def mixed_levels(page: str) -> list[str]:
    """Per table: a confidence level printed in a body cell that its header does not state (a header that
    states none allows none in its rows). Empty when every table has one level, stated in its header."""
    problems = []
    for i, table in enumerate(re.findall(r"<table\b.*?</table>", page, re.S)):
        head = " ".join(re.findall(r"<th\b.*?</th>", table, re.S))
        body = re.sub(r"<th\b.*?</th>", "", table, flags=re.S)
        stated = {float(x) for x in LEVEL.findall(head)}
        for level in sorted({float(x) for x in LEVEL.findall(body)} - stated):
            problems.append(f"table {i}: a row prints {level:g} % under a header stating {sorted(stated) or 'none'}")
    return problems


def markdown_tables(text: str) -> str:
    """The Markdown tables of ``text`` as HTML tables (first line: header cells; the rest: body cells)."""
    tables = re.findall(r"(?:^\|.*\|[ \t]*\n?)+", text, re.M)
    out = []
    for table in tables:
        lines = [line for line in table.strip().splitlines() if not re.match(r"^\|[-| :]+\|$", line)]
        head = "".join(f"<th>{cell}</th>" for cell in lines[0].split("|"))
        body = "".join(f"<tr><td>{line}</td></tr>" for line in lines[1:])
        out.append(f"<table><tr>{head}</tr>{body}</table>")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------------- only what ran
def test_arm_tables_list_only_the_arms_that_ran(site):
    store, _, page = site
    trials = store.trials()
    for study in all_studies():
        part = section(page, study.name)
        done = trials[(trials.study == study.name) & (trials.status == "done") & (trials.profile == PROFILE)]
        ran = set(done[f"config.{study.arm_field}"]) if len(done) else set()
        listed = set(re.findall(r"<tr><td><code>([^<]+)</code></td>", part))
        assert listed == ran, f"{study.name}: the arm table lists {sorted(listed)}, the store ran {sorted(ran)}"
        missing = [a["arm"] for a in arm_table(study.name) if a["arm"] not in ran]
        sentence = re.search(r'<p class="arms-not-run">(.*?)</p>', part, re.S)
        if missing:
            assert sentence, f"{study.name}: no sentence names the declared arms that did not run"
            assert all(arm in sentence.group(1) for arm in missing)
        else:
            assert not sentence


def test_notebook_notes_say_yet_only_when_the_profile_plans_the_rows():
    from fwbench.analysis.imdb import ABSENT
    from fwbench.prose import imdb_absent

    def absent_note(kind: str, profile: str) -> str:
        return imdb_absent(kind, Results(None, profile))  # the plan decides: no store is read

    assert "yet" not in absent_note("scaling", "paper") and "runs no cost-growth trials" in absent_note(
        "scaling", "paper"
    )
    assert "yet" in absent_note("scaling", "quick")  # the quick profile plans them: missing means not run yet
    assert "yet" not in absent_note("lifetime", "quick")
    assert set(ABSENT) == {"variants", "hybrid", "onednn", "lifetime", "scaling"}


# ---------------------------------------------------------------------------------------------------- links
def test_every_link_resolves_inside_the_site_and_the_data_are_there(site):
    store, index, page = site
    for href in re.findall(r'href="([^"#][^"]*)"', page):
        if re.match(r"[a-z]+:", href):
            continue
        assert (index.parent / href).is_file(), f"index.html links {href}, which is not in the site"
    data = index.parent / site_files.DATA
    names = {p.name for p in data.iterdir()}
    assert {store.path.name, "measurements.csv", "trials.csv", "environments.csv", "requirements.lock"} <= names
    copy = ResultsStore.open_read(data / store.path.name)
    assert len(copy.trials()) == len(store.trials())
    assert not (data / f"{store.path.name}-wal").exists()  # one self-contained file
    assert "git clone &lt;" not in page and "&lt;this repository&gt;" not in page
    repo = site_files.repository({"git_sha": "abc", "git_dirty": False})
    if repo["url"]:
        assert f'href="{repo["url"]}"' in page
    else:  # no address known: a sentence names the commit, no made-up link
        assert "records no public address" in section(page, "data")


@pytest.mark.parametrize(
    ("url", "clean"),
    [
        ("https://user:secret@example.org/team/fwbench.git", "https://example.org/team/fwbench"),
        ("git@example.org:team/fwbench.git", "https://example.org/team/fwbench"),
        ("ssh://git@example.org/team/fwbench.git", "https://example.org/team/fwbench"),
        ("/srv/git/fwbench.git", None),
        ("", None),
    ],
)
def test_repository_addresses_are_cleaned(url, clean):
    assert site_files.clean_url(url) == clean


# ---------------------------------------------------------------------------------------------------- glossary
def test_the_glossary_has_an_anchor_per_entry_and_the_first_use_links_to_it(site):
    _, _, page = site
    found = glossary.entries()
    assert len(found) >= 10 and '<h2 id="glossary">' in page
    for entry in found:
        assert f'id="{entry.anchor}"' in page, f"no anchor for {entry.heading}"
    arm = next(e for e in found if "arm" in e.terms)
    skip = glossary.SKIP | {"a"}
    for text, around in texts(page):
        tags = [tag for tag, _ in around]
        links = [attrs for tag, attrs in around if tag == "a"]
        if "dl" in tags:  # the glossary itself
            continue
        if re.search(r"(?<![\w-])arms?(?![\w-])", text, re.I) and (links or not skip & set(tags)):
            assert links and links[-1].get("href") == f"#{arm.anchor}", f"the first use of 'arm' ({text!r}) is no link"
            break
    else:
        pytest.fail("the page never uses the word 'arm'")
    assert page.count(f'href="#{arm.anchor}"') == 1, "only the first use links"


def test_link_first_uses_touches_text_only():
    entries = [
        glossary.Entry("arm", "g-arm", ("arm",), "One framework run one way."),
        glossary.Entry("CI (confidence interval)", "g-ci", ("CI", "confidence interval"), "An interval."),
        glossary.Entry("rule notation", "g-rule", ("rule notation", "about("), "`about(r)`: inside the band."),
    ]
    page = (
        '<html><head><title>arm</title></head><body><h2>Arms</h2><p title="arm">per-arm code <code>arm</code> '
        "ci</p><p>Two Arms and a CI, then arm again and a confidence\ninterval; about(1.10) and about(2)</p>"
        "</body></html>"
    )
    out = glossary.link_first_uses(page, entries)
    assert "<title>arm</title>" in out and "<h2>Arms</h2>" in out and 'title="arm"' in out  # untouched
    assert "<code>arm</code>" in out and "per-arm" in out and " ci</p>" in out  # no link inside code or a word
    assert '<a class="term" href="#g-arm" title="One framework run one way.">Arms</a>' in out
    assert out.count('href="#g-arm"') == 1 and out.count('href="#g-ci"') == 2  # "CI" and "confidence interval"
    assert 'href="#g-rule" title="about(r): inside the band.">about(1.10)</a> and about(2)' in out


# ---------------------------------------------------------------------------------------------------- CI levels
def test_one_confidence_level_per_table_stated_in_its_header(site, paper_results):
    _, _, page = site
    ledger_table = re.search(r'<table class="ledger".*?</table>', page, re.S).group(0)
    assert prose.ledger_ci("level") in re.search(r"<thead>.*?</thead>", ledger_table, re.S).group(0)
    table = ledger.build(paper_results)
    assert (table.ci_level > 0.95).any(), "the plant has no multi-part claim: the test would prove nothing"
    assert not mixed_levels(page), mixed_levels(page)
    text = readme.details(paper_results)
    header = next(line for line in text.splitlines() if line.startswith("| claim |"))
    assert prose.ledger_ci("level") in header and not mixed_levels(markdown_tables(text))


def test_the_level_check_catches_a_row_with_another_level(site):
    _, _, page = site
    planted = page.replace("[CI ", "[98.3% CI ", 1)
    assert planted != page and mixed_levels(planted)
    assert mixed_levels(markdown_tables("| x [95 % family-wise CI] |\n|---|\n| 1 [97.5% CI 1-2] |\n"))
    assert mixed_levels("<table><tr><th>x [95 % CI]</th></tr><tr><td>1 [97.5% CI 1-2]</td></tr></table>")
    assert not mixed_levels("<table><tr><th>x [95 % CI]</th></tr><tr><td>1 [95 % CI 1-2]</td></tr></table>")


def test_glossary_entries_come_from_docs():
    text = Path(glossary.GLOSSARY).read_text()
    assert [e.heading for e in glossary.entries()] == re.findall(r"^### (.+)$", text, re.M)
