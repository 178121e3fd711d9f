"""Markdown for a notebook's output that keeps its quantity spans on the rendered page.

``Markdown(text)`` is a drop-in for ``IPython.display.Markdown`` in the notebooks: it offers the text both as
Markdown (JupyterLab) and as HTML converted here. nbconvert, which renders the post's notebook pages, prefers the
HTML; its own rendering of a Markdown output splits an inline ``<span>`` from its text, which would cut every
``fwbench.quantity`` span off the number it carries (``tools/check_pages.py`` would then read empty spans).
"""

from __future__ import annotations

from nbconvert.filters.markdown import markdown2html


class Markdown:
    """Markdown text shown as Markdown and as HTML (see the module docstring)."""

    def __init__(self, text: str):
        self.text = text

    def _repr_markdown_(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        return markdown2html(self.text)
