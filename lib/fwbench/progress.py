"""Progress that works in a terminal, in JupyterLab and in a headless papermill run.

- ``lines``: one line per finished trial (headless papermill runs, CI, logs): no carriage-return noise in
  rendered HTML. Chosen when ``FWBENCH_HEADLESS=1`` (set by the Makefile around papermill) or stderr is no tty.
- ``bar``: a tqdm bar, the notebook widget under JupyterLab (``tqdm.auto``), a text bar in a terminal.
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
    def start(self, name, total, already):
        from tqdm.auto import tqdm

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


def make_progress(kind: str = "auto") -> Progress:
    if kind == "none":
        return NoProgress()
    if kind == "lines":
        return LineProgress()
    if kind == "bar":
        return BarProgress()
    if os.environ.get("FWBENCH_HEADLESS") == "1":
        return LineProgress()
    in_kernel = "ipykernel" in sys.modules
    return BarProgress() if in_kernel or sys.stderr.isatty() else LineProgress()
