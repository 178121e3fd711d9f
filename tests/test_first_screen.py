"""The post's first screen (1280 x 800 in headless Chromium) states the answer, the hardware and the limitations.

Built from the committed paper store (``fwbench.report`` renders index.html without notebook pages); the check
(``tools/first_screen.py``, ``make first-screen``) must also fail on a page whose limitations fall below the fold.
"""

from __future__ import annotations

import pytest
from conftest import REPO, load_tool

first_screen = load_tool("first_screen")


@pytest.fixture(autouse=True)
def chromium():
    first_screen.chromium_binary()  # fails with the install hint when chromium is missing


def test_the_paper_post_states_answer_hardware_and_limits_on_its_first_screen(paper_post, tmp_path):
    found = first_screen.layout(paper_post)
    assert first_screen.problems(found) == [], found
    assert set(found) == set(first_screen.MUST_SHOW)
    png = first_screen.screenshot(paper_post, tmp_path / "first.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000


def test_the_check_fails_when_the_limits_fall_below_the_fold(paper_post, tmp_path):
    page = paper_post.read_text(encoding="utf-8")
    filler = "<p>" + "A long preamble before the answer. " * 400 + "</p>"
    pushed = tmp_path / "index.html"
    pushed.write_text(page.replace('<section id="answer"', filler + '<section id="answer"', 1), encoding="utf-8")
    lines = first_screen.problems(first_screen.layout(pushed))
    assert any(line.startswith("limitations: ends at") for line in lines), lines


def test_the_committed_screenshot_is_the_first_screen_size():
    png = REPO / "docs" / "first-screen.png"
    data = png.read_bytes()
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == first_screen.VIEWPORT
