"""The README's front page and the docs/ pages it links to: short, every link resolves, and `make readme` finds
each generated block on exactly one page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import load_tool

from fwbench import generated_blocks, readme
from fwbench.analysis import Results
from fwbench.store import ResultsStore

ROOT = Path(__file__).resolve().parents[1]
FRONT_PAGE = ROOT / "README.md"
PAGES = [FRONT_PAGE, *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")  # [text](target): Markdown links, the only kind these pages use
FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the headings of ``page`` (lower case, punctuation dropped, spaces to hyphens, a
    repeated heading numbered), outside code blocks, whose ``#`` lines are comments; and the explicit
    ``<a id="..."></a>`` anchors (which keep an old link working when a heading is renamed)."""
    text = FENCE.sub("", page.read_text())
    found, times_seen = set(re.findall(r'^<a id="([\w-]+)"></a>$', text, re.M)), {}
    for heading in re.findall(r"^#{1,6} (.+)$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        repeat = times_seen.get(slug, 0)
        found.add(slug if repeat == 0 else f"{slug}-{repeat}")
        times_seen[slug] = repeat + 1
    return found


def local_links(page: Path) -> list[str]:
    """The links of ``page`` that point into this repository (not to a web address), outside code blocks."""
    return [target for target in LINK.findall(FENCE.sub("", page.read_text())) if not re.match(r"[a-z]+:", target)]


def test_the_front_page_is_short_and_links_every_docs_page():
    lines = FRONT_PAGE.read_text().splitlines()
    assert len(lines) <= 220, f"README.md has {len(lines)} lines: move a section to docs/"
    linked = {target.split("#")[0] for target in local_links(FRONT_PAGE)}
    for page in PAGES[1:]:
        assert f"docs/{page.name}" in linked, f"docs/{page.name} is not one click from the front page"
    for target in ("results/paper/", "requirements.lock", "constraints.txt"):
        assert target in linked, f"the front page does not link {target}"
    assert "git clone <" not in FRONT_PAGE.read_text()  # no invented address


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_local_link_and_anchor_resolves(page):
    broken = []
    for target in local_links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no {file.relative_to(ROOT) if file.is_relative_to(ROOT) else file}")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {file.name}")
    assert not broken, f"{page.name}: " + "; ".join(broken)


def test_the_anchor_rule_matches_github(tmp_path):
    page = tmp_path / "probe.md"
    page.write_text(
        "# A title\n```bash\n# a comment, not a heading\n```\n"
        "## How long will it take? `fwbench estimate`\n## The harness's overhead\n## Notes\n## Notes\n"
        '<a id="kept"></a>\n## Renamed\n'
    )
    assert anchors(page) == {
        "kept",
        "renamed",
        "a-title",
        "how-long-will-it-take-fwbench-estimate",
        "the-harnesss-overhead",
        "notes",
        "notes-1",
    }


# the blocks that measure the repository itself: written by its tools from their records or the store's bench rows
# (a measurement, or `make readme` running them with --pages), not by fwbench.readme
TOOLS_WITH_BLOCKS = ("reproduce_timing", "env_build_timing", "harness_bench")


def tool_blocks() -> dict[str, str]:
    """Block name -> the tool that writes it."""
    return {name: tool for tool in TOOLS_WITH_BLOCKS for name in load_tool(tool).BLOCKS}


def test_each_block_has_one_writer():
    assert set(tool_blocks()) == {"timings", "reproduce-time", "env-build-time", "bench"}
    assert not set(tool_blocks()) & set(readme.BLOCKS), "a block written both by fwbench.readme and a tool"


def test_the_block_option_refreshes_only_the_named_block(tmp_path, monkeypatch):
    page = tmp_path / "README.md"
    page.write_text(
        "<!-- headline:start -->\nkept\n<!-- headline:end -->\n<!-- arms:start -->\nold\n<!-- arms:end -->\n"
    )
    monkeypatch.setenv("FWBENCH_RESULTS", str(tmp_path / "none.sqlite"))  # the arms block reads no store
    monkeypatch.setattr("sys.argv", ["readme", "--readme", str(page), "--block", "arms"])
    assert readme.main() == 0
    text = page.read_text()
    assert "kept" in text and "old" not in text and "| imdb | `torch-eager` |" in text


def test_every_generated_block_lives_on_exactly_one_page():
    for name in [*readme.BLOCKS, *tool_blocks()]:
        start, end = generated_blocks.markers(name)
        holders = [page.name for page in PAGES for _ in range(page.read_text().count(start))]
        assert len(holders) == 1, f"block {name}: found on {holders or 'no page'}"
        assert generated_blocks.find_block(name, PAGES).name == holders[0]
        text = next(page for page in PAGES if page.name == holders[0]).read_text()
        assert text.index(start) < text.index(end), f"block {name}: its end marker is missing or comes first"


def test_make_readme_writes_each_block_where_it_lives_and_refuses_a_missing_or_doubled_one(tmp_path):
    front = tmp_path / "README.md"
    front.write_text("# front\n<!-- headline:start -->\nold answer\n<!-- headline:end -->\n")
    (tmp_path / "docs").mkdir()
    bench_page = tmp_path / "docs" / "benchmarks.md"
    bench_page.write_text("# bench\n<!-- bench:start -->\nold\n<!-- bench:end -->\ntail\n")
    assert generated_blocks.write_block("bench", "- new line", front) == bench_page
    assert bench_page.read_text() == "# bench\n<!-- bench:start -->\n- new line\n<!-- bench:end -->\ntail\n"
    assert "old answer" in front.read_text()  # another page's block is left alone
    with pytest.raises(SystemExit, match="no page has the <!-- rules:start -->"):
        generated_blocks.write_block("rules", "x", front)
    (tmp_path / "docs" / "methods.md").write_text("<!-- bench:start -->\ncopy\n<!-- bench:end -->\n")
    with pytest.raises(SystemExit, match="the bench block is on more than one page"):
        generated_blocks.write_block("bench", "y", front)
    assert "- new line" in bench_page.read_text()  # nothing written when the block is ambiguous


def test_the_options_block_names_what_is_missing_on_a_store_without_trials(tmp_store):
    """Before any trial the options block (docs/methods.md) still renders: each claim's missing rows in words, no
    number, no CPU model."""
    text = readme.BLOCKS["options"](Results(ResultsStore(tmp_store), "quick"))
    assert "an unrecorded CPU model" in text and 'class="q"' not in text
    assert text.count("not measured yet") >= 3 and "needs VGG16 latencies with oneDNN on and off" in text
