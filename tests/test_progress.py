"""Which progress display a sweep gets: widget in a Jupyter kernel, lines headless, a text bar in a terminal."""

from __future__ import annotations

import pytest

from fwbench import progress


@pytest.mark.parametrize(
    "kernel, widgets, headless, tty, expected",
    [
        (True, True, False, False, ("BarProgress", True)),  # JupyterLab: the tqdm widget
        (True, False, False, False, ("LineProgress", None)),  # a kernel without ipywidgets: no carriage returns
        (True, True, True, False, ("LineProgress", None)),  # papermill under FWBENCH_HEADLESS=1
        (False, True, False, True, ("BarProgress", False)),  # a terminal: the text bar
        (False, True, False, False, ("LineProgress", None)),  # a log file, CI
    ],
)
def test_auto_picks_by_context(monkeypatch, kernel, widgets, headless, tty, expected):
    monkeypatch.setattr(progress, "in_jupyter_kernel", lambda: kernel)
    monkeypatch.setattr(progress, "widgets_available", lambda: widgets)
    monkeypatch.setattr(progress.sys.stderr, "isatty", lambda: tty, raising=False)
    if headless:
        monkeypatch.setenv("FWBENCH_HEADLESS", "1")
    else:
        monkeypatch.delenv("FWBENCH_HEADLESS", raising=False)
    chosen = progress.make_progress("auto")
    assert (type(chosen).__name__, getattr(chosen, "widget", None)) == expected


def test_no_kernel_outside_ipython():
    assert progress.in_jupyter_kernel() is False
