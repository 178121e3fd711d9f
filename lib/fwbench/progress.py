"""Progress that works in a terminal, in JupyterLab and in a headless papermill run.

- ``lines``: one line per finished trial (papermill, CI, logs): no carriage-return noise in rendered HTML.
- ``bar``: a tqdm bar: the ``tqdm.notebook`` widget inside a Jupyter kernel, a text bar elsewhere.

``auto`` picks: ``FWBENCH_HEADLESS=1`` (set around every papermill call: widgets never update there) -> lines; a
Jupyter kernel -> the widget, or lines without ipywidgets (a text bar would print carriage returns into the cell);
a terminal -> the text bar; anything else -> lines. Decision: the kernel is detected from the running IPython
shell (a ``ZMQInteractiveShell``), not from ``ipykernel`` being imported, and the widget is chosen explicitly
(``tqdm.auto`` falls back to the text bar with a warning when ipywidgets is missing).
"""

from __future__ import annotations

import os
import sys
import time


class Progress:
    def start(self, name: str, total: int, already: int) -> None: ...
    def trial_started(self, label: str) -> None: ...
    def trial_finished(self, label: str, status: str, error: str | None) -> None: ...
    def close(self, line: str) -> None: ...


class LineProgress(Progress):
    def __init__(self, stream=None):
        self.stream = stream or sys.stdout

    def _print(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def start(self, name, total, already):
        self.name, self.total, self.count, self.t0 = name, total, already, time.perf_counter()
        self._print(f"{name}: {total} trials, {already} already in the store, {total - already} to run")

    def trial_started(self, label):
        self.t_trial = time.perf_counter()

    def trial_finished(self, label, status, error):
        self.count += 1
        took = time.perf_counter() - self.t_trial
        suffix = f" ({error})" if error else ""
        self._print(f"[{self.count}/{self.total}] {label} {status} in {took:.1f} s{suffix}")

    def close(self, line):
        self._print(line)


class BarProgress(Progress):
    """A tqdm bar: the notebook widget with ``widget=True``, else a text bar on stderr."""

    def __init__(self, widget: bool = False):
        self.widget = widget

    def start(self, name, total, already):
        if self.widget:
            from tqdm.notebook import tqdm
        else:
            from tqdm import tqdm

        self.bar = tqdm(total=total, initial=already, desc=name, unit="trial")

    def trial_started(self, label):
        self.bar.set_postfix_str(label.strip())

    def trial_finished(self, label, status, error):
        if error:
            self.bar.write(f"FAILED {label}: {error}")
        self.bar.update(1)

    def close(self, line):
        self.bar.close()
        print(line, flush=True)


class NoProgress(Progress):
    pass


def in_jupyter_kernel() -> bool:
    """True inside a Jupyter kernel (the shell of JupyterLab, Notebook, papermill), False in IPython's terminal."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def widgets_available() -> bool:
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return True


def make_progress(kind: str = "auto") -> Progress:
    if kind == "none":
        return NoProgress()
    if kind == "lines":
        return LineProgress()
    kernel = in_jupyter_kernel()
    if kind == "bar":
        return BarProgress(widget=kernel and widgets_available())
    if os.environ.get("FWBENCH_HEADLESS") == "1":
        return LineProgress()
    if kernel:
        return BarProgress(widget=True) if widgets_available() else LineProgress()
    return BarProgress() if sys.stderr.isatty() else LineProgress()
