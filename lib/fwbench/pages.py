"""Words in templates: a page's Markdown rendered from facts (frames, numbers, ``Quantity`` objects) by a Jinja
template in ``templates/`` (``NAME.md.j2``), through one function, ``render_markdown``, with the filters below (``q``
is ``Quantity.markup``: the span ``tools/check_pages.py`` reads back).

Decision: Markdown is not HTML-escaped (``autoescape`` off): the templates write Markdown and the spans are
trusted markup made by ``Quantity``; a value from a frame is a number or a name of this study (an arm, a dataset,
a CPU model), never a reader's input.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import pandas as pd
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from .quantity import Quantity, missing, significant

TEMPLATES = Path(__file__).resolve().parent / "templates"


def num(value, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits, as ``Quantity`` writes its values; ``-`` for NaN or None."""
    if missing(value):
        return "-"
    return significant(value, digits) if isinstance(value, (int, float)) else str(value)


def table(frame: pd.DataFrame, columns: dict[str, str], formats: dict[str, str | Callable] | None = None) -> str:
    """``frame``'s ``columns`` (``{column: header}``, in order) as a Markdown table, numbers right-aligned; a cell
    by its ``formats`` entry (a format spec or a callable), else ``num``; ``-`` for a missing value."""
    formats = formats or {}

    def cell(column: str, value) -> str:
        fmt = formats.get(column)
        if missing(value):
            return "-"
        if callable(fmt):
            return str(fmt(value))
        return format(value, fmt) if fmt else num(value)

    numeric = {c: pd.api.types.is_numeric_dtype(frame[c]) for c in columns}
    lines = [
        "| " + " | ".join(columns.values()) + " |",
        "|" + "|".join("---:" if numeric[c] else "---" for c in columns) + "|",
    ]
    lines += ["| " + " | ".join(cell(c, row[c]) for c in columns) + " |" for _, row in frame.iterrows()]
    return "\n".join(lines)


def fixed(value, digits: int = 2) -> str:
    """``value`` with ``digits`` decimals; ``-`` for NaN or None."""
    return "-" if missing(value) else f"{value:.{digits}f}"


def pct(value) -> str:
    """A share as a whole percentage ('12 %'); ``-`` for NaN or None."""
    return "-" if missing(value) else f"{100 * value:.0f} %"


def span(low, high, digits: int = 2) -> str:
    """An interval 'low-high'; 'no CI' when it has no bounds."""
    return "no CI" if missing(low) else f"{low:.{digits}f}-{high:.{digits}f}"


def yes_no(value) -> str:
    """A flag as a table cell: 'yes', or empty."""
    return "yes" if bool(value) else ""


@functools.cache  # one environment: Jinja keeps each compiled template in it
def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=False,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.filters.update(q=Quantity.markup, table=table, num=num, fixed=fixed, pct=pct, span=span)
    env.globals["yes_no"] = yes_no
    return env


def render_markdown(name: str, **facts) -> str:
    """Template ``name`` (``templates/NAME.md.j2``) rendered with ``facts``."""
    return _environment().get_template(f"{name}.md.j2").render(**facts).strip()
