"""Runs a study's trials, each in a fresh child process, and records every outcome in the results store.

- Finished trials (status ``done``) are skipped; missing and failed ones are run.
- A trial that raises, crashes (signal) or times out is stored as ``failed`` with its error and stderr tail;
  the sweep goes on.
- The child gets the thread settings in its environment before any framework import and its own scratch
  working directory (Lightning and friends write logs into the cwd).
"""
from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .progress import Progress, make_progress
from .provenance import host_info
from .store import ResultsStore, trial_id
from .studies import get_study

STDERR_TAIL_LINES = 40


@dataclass
class PlannedTrial:
    trial_id: str
    study: str
    config: dict
    label: str


@dataclass
class SweepSummary:
    study: str
    profile: str
    planned: int = 0
    skipped: int = 0
    done: int = 0
    failed: list[dict] = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failed

    def line(self) -> str:
        return (f"{self.study}/{self.profile}: {self.planned} trials, {self.skipped} already done, "
                f"{self.done} run now, {len(self.failed)} failed ({self.wall_s:.0f} s)")


def plan(study_name: str, profile: str, overrides: dict | None = None) -> list[PlannedTrial]:
    """The trials of a profile (validated before anything runs)."""
    study = get_study(study_name)
    options = study.resolve(profile, overrides)
    return [PlannedTrial(trial_id(study_name, c), study_name, c, study.describe(c)) for c in study.grid(options)]


def child_env(threads: int) -> dict:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = str(threads)
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("MPLBACKEND", "agg")
    return env


def _die_with_parent() -> None:
    """Linux: the child gets SIGKILL if the sweep process dies, so no orphan keeps loading the CPU."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def execute(trial: PlannedTrial, timeout_s: float | None = None) -> dict:
    """Run one trial in a fresh process; returns a record for ``ResultsStore.record`` (framework-free)."""
    with tempfile.TemporaryDirectory(prefix="fwbench-trial-") as tmp:
        tmp = Path(tmp)
        spec, result, stderr_path = tmp / "spec.json", tmp / "result.json", tmp / "stderr.txt"
        spec.write_text(json.dumps({"study": trial.study, "config": trial.config}))
        threads = int(trial.config.get("threads", os.cpu_count() or 1))
        started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        error = None
        with open(stderr_path, "wb") as err:
            try:
                proc = subprocess.run([sys.executable, "-m", "fwbench.trial", str(spec), str(result)],
                                      cwd=tmp, env=child_env(threads), stdout=err, stderr=err,
                                      timeout=timeout_s, preexec_fn=_die_with_parent)
                rc = proc.returncode
            except subprocess.TimeoutExpired:
                rc, error = None, f"timed out after {timeout_s:.0f} s"
        tail = stderr_path.read_text(errors="replace").splitlines()[-STDERR_TAIL_LINES:]
        if rc == 0 and result.exists():
            out = json.loads(result.read_text())
            return {"status": "done", "summary": out["summary"], "measurements": out["measurements"],
                    "provenance": out["provenance"], "started_at": out["started_at"],
                    "ended_at": out["ended_at"], "error": None, "stderr_tail": None}
        if error is None:
            if rc is not None and rc < 0:
                error = f"killed by signal {signal.Signals(-rc).name}"
            else:
                last = next((line for line in reversed(tail) if line.strip()), "no output")
                error = f"exit status {rc}: {last.strip()}"
        return {"status": "failed", "summary": {}, "measurements": [], "provenance": host_info(),
                "started_at": started, "ended_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "error": error,
                "stderr_tail": "\n".join(tail)}


def store_outcome(store: ResultsStore, trial: PlannedTrial, outcome: dict, profile: str, extra: dict) -> None:
    store.record(trial_id=trial.trial_id, study=trial.study, profile=profile, config=trial.config,
                 status=outcome["status"], summary=outcome["summary"], measurements=outcome["measurements"],
                 provenance={**outcome["provenance"], **extra}, error=outcome["error"],
                 stderr_tail=outcome["stderr_tail"], started_at=outcome["started_at"],
                 ended_at=outcome["ended_at"])


def run_sweep(study_name: str, profile: str, overrides: dict | None = None, store: ResultsStore | None = None,
              progress: Progress | str = "auto", timeout_s: float | None = None) -> SweepSummary:
    """Run (or resume) every trial of a profile, one at a time on this machine."""
    from .paths import results_path

    trials = plan(study_name, profile, overrides)
    store = store or ResultsStore(results_path())
    status = store.status_of(t.trial_id for t in trials)
    todo = [t for t in trials if status.get(t.trial_id) != "done"]
    summary = SweepSummary(study_name, profile, planned=len(trials), skipped=len(trials) - len(todo))
    bar = make_progress(progress) if isinstance(progress, str) else progress
    t0 = time.perf_counter()
    bar.start(f"{study_name}/{profile}", total=len(trials), already=summary.skipped)
    for trial in todo:
        bar.trial_started(trial.label)
        outcome = execute(trial, timeout_s=timeout_s)
        store_outcome(store, trial, outcome, profile, {"runner": "local", "trials_sharing_host": 1})
        if outcome["status"] == "done":
            summary.done += 1
        else:
            summary.failed.append({"trial_id": trial.trial_id, "label": trial.label, "error": outcome["error"]})
        bar.trial_finished(trial.label, outcome["status"], outcome["error"])
    summary.wall_s = time.perf_counter() - t0
    bar.close(summary.line())
    return summary
