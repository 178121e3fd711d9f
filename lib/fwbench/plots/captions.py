"""The captions of the figures the post shows (``fwbench.report``), in the post's order: what each figure shows and
what its bars and bands are (their n, and what the interval means). Every figure a notebook publishes has one
(``tests/test_figures.py``); any other PNG of a run is shown under "More figures" with its file name. The words are
the template ``captions``' (one line each: the figure's name, a colon, its caption)."""

from ..pages import render_markdown

CAPTIONS = dict(line.split(": ", 1) for line in render_markdown("captions").splitlines())
