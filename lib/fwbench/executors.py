"""Executors: where trials run, each with ``fwbench.execute.execute`` (a fresh child process). The runner hands
them trials and a ``record`` callback; they never call back into the runner.

- ``LocalExecutor``: one trial at a time on this machine (timings never share it).
- ``fwbench.cluster.DaskExecutor``: on a Dask cluster, at most ``trials_per_host`` per machine.

``require_environments(trials)`` and ``require_preflight(study, options)`` stop a sweep, before any trial is sent,
when an environment the trials need is not built and current, or the study's own check (``Study.preflight``)
fails, where they would run. ``run(trials, record, bar)`` calls ``record(trial, outcome, placement)`` as each
trial ends, ``placement`` being what the store keeps about where it ran (runner, host sharing, memory cap).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from .environments import get_environment
from .execute import PlannedTrial, execute

Record = Callable[[PlannedTrial, dict, dict], None]


class Executor(Protocol):
    def require_environments(self, trials: list[PlannedTrial]) -> None: ...

    def require_preflight(self, study, options: dict) -> None: ...

    def run(self, trials: list[PlannedTrial], record: Record, bar) -> None: ...

    def close(self) -> None: ...


class LocalExecutor:
    """Runs trials one after another on this machine."""

    def __init__(self, timeout_s: float | None = None, memory_limit_mb: int | None = None):
        self.timeout_s, self.memory_limit_mb = timeout_s, memory_limit_mb

    def require_environments(self, trials: list[PlannedTrial]) -> None:
        for name in sorted({t.env for t in trials}):
            get_environment(name).require_built()

    def require_preflight(self, study, options: dict) -> None:
        """Nothing more: the trials run on this machine, where the runner has just run ``study.preflight``."""

    def run(self, trials: list[PlannedTrial], record: Record, bar) -> None:
        placement = {"runner": "local", "trials_sharing_host": 1, "memory_limit_mb": self.memory_limit_mb}
        for trial in trials:
            bar.trial_started(trial.label)
            outcome = execute(trial, timeout_s=self.timeout_s, memory_limit_mb=self.memory_limit_mb)
            try:  # record may stop the sweep (runner.StopRequested) once the trial is stored
                record(trial, outcome, placement)
            finally:
                bar.trial_finished(trial.label, outcome["status"], outcome["error"])

    def close(self) -> None:
        pass
