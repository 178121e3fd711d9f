"""Figures computed from the results store, each saved as PNG and SVG under ``figures/`` (output only). An arm's
colour and legend label come from its study's arm table (``arm_style``).

Decisions every figure function follows (``tests/test_figures.py`` checks them):
- labelled axes with units; legends outside the axes (``legend_outside``), so they never cover data;
- long category labels wrapped (``wrap``), so tick labels never overlap;
- nothing to draw is not a figure: the function raises ``NothingToDraw`` with one sentence saying why, and
  ``publish`` shows that sentence instead of a blank axis (and removes the figure's files of an older run, so
  the post cannot show a stale one).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from ..errors import FwbenchError
from ..paths import figures_dir
from ..studies import get_study

try:  # optional: without IPython, publish prints its sentence
    from IPython import get_ipython
    from IPython.display import Markdown, display
except ImportError:
    get_ipython = None

EXTENSIONS = ("png", "svg")
NOT_DRAWN = ".not-drawn.txt"  # <name>.not-drawn.txt: why figure <name> was not drawn, for the post to say so


class NothingToDraw(FwbenchError):
    """A figure function found no data to plot; the message is one sentence for the page, saying why."""


def arm_style(study: str, arm: str) -> dict:
    """``{"color", "label"}`` of ``arm`` from the study's arm table (an arm it does not declare is an error)."""
    a = get_study(study).arm(arm)
    return {"color": a.colour, "label": a.label}


def wrap(label: str, width: int = 16) -> str:
    """A long category label on several lines, so neighbouring tick labels do not run into each other; a number
    keeps its unit ("95 %" is never split)."""
    return "\n".join(textwrap.wrap(label.replace(" %", "\u00a0%"), width)) or label


def ci_method(table) -> str:
    """The interval methods a table's rows used (``stats``' names), for a legend: a legend names the method
    actually used, never one assumed."""
    methods = sorted(set(table["method"].dropna()) - {"none"}) if "method" in table else []
    return " / ".join(methods) or "no interval"


def legend_outside(target, handles=None, labels=None, **kwargs):
    """A legend to the right of ``target`` (an axes, or a figure: then beside all its axes), outside the data area;
    ``save`` crops to include it."""
    if handles is None:
        handles, labels = target.get_legend_handles_labels()
    options = {"fontsize": 8, "title_fontsize": 8, "frameon": False} | kwargs
    if hasattr(target, "get_axes") and not hasattr(target, "transAxes"):  # a figure
        return target.legend(handles, labels, loc="outside right upper", **options)
    return target.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, **options)


def save(fig, name: str, directory: Path | None = None) -> list[Path]:
    """Save ``fig`` as ``<name>.png`` and ``<name>.svg``; returns the paths."""
    out = Path(directory) if directory is not None else figures_dir()
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{name}.{ext}" for ext in EXTENSIONS]
    for path in paths:  # an SVG without its date: the same figure, the same bytes
        png = path.suffix == ".png"
        fig.savefig(path, dpi=150 if png else None, bbox_inches="tight", metadata=None if png else {"Date": None})
    return paths


def publish(name: str, draw, *args, directory: Path | None = None, **kwargs) -> list[Path]:
    """Draw ``draw(*args, **kwargs)`` and save it as ``name`` (``save``); returns the saved paths. When there is
    nothing to draw, the figure's files of an older run are removed, the reason is shown as one sentence on the
    page (the notebook's output) and written to ``<name>.not-drawn.txt`` for the post; returns ``[]``."""
    out = Path(directory) if directory is not None else figures_dir()
    try:
        fig = draw(*args, **kwargs)
    except NothingToDraw as reason:
        for ext in EXTENSIONS:
            (out / f"{name}.{ext}").unlink(missing_ok=True)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{name}{NOT_DRAWN}").write_text(f"{reason}\n", encoding="utf-8")
        _say(f"No figure `{name}`: {reason}")
        return []
    (out / f"{name}{NOT_DRAWN}").unlink(missing_ok=True)
    return save(fig, name, directory)


def _say(sentence: str) -> None:
    """One sentence into the notebook's output: Markdown in a notebook, plain text elsewhere (a script, a test)."""
    if get_ipython is not None and get_ipython() is not None:
        display(Markdown(sentence))
    else:
        print(sentence)
