"""Runs a study's trials, each in a fresh child process, and records every outcome in the results store.

- Finished trials (status ``done``) are skipped; missing and failed ones are run.
- A trial that raises, crashes (signal) or times out is stored as ``failed`` with its error and stderr tail;
  the sweep goes on.
- With ``memory_limit_mb`` the child's address space is capped (``RLIMIT_AS``); going over fails the trial.
- A study may define ``preflight(options)``: it runs here, in the parent, before any trial is launched, so
  missing or broken data is a one-line error and not N failed trials.
- With ``scheduler`` the trials go to a Dask cluster (``fwbench.cluster``); the store stays on this machine.
- The child gets the thread settings in its environment before any framework import and its own scratch
  working directory (Lightning and friends write logs into the cwd).
"""
from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .errors import FwbenchError
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


def _resolve(study_name: str, profile: str, overrides: dict | None):
    if overrides is not None and not isinstance(overrides, dict):
        raise FwbenchError(f"overrides must be a dict of option -> value, got {overrides!r}; "
                           "e.g. {'epochs': 3}")
    study = get_study(study_name)
    return study, study.resolve(profile, overrides)


def plan(study_name: str, profile: str, overrides: dict | None = None) -> list[PlannedTrial]:
    """The trials of a profile (validated before anything runs)."""
    study, options = _resolve(study_name, profile, overrides)
    return [PlannedTrial(trial_id(study_name, c), study_name, c, study.describe(c)) for c in study.grid(options)]


def preflight(study_name: str, profile: str, overrides: dict | None = None) -> list[PlannedTrial]:
    """``plan`` plus the study's optional ``preflight(options)`` check (data present and readable)."""
    study, options = _resolve(study_name, profile, overrides)
    hook = getattr(study, "preflight", None)
    if hook is not None:
        hook(options)
    return [PlannedTrial(trial_id(study_name, c), study_name, c, study.describe(c)) for c in study.grid(options)]


def _check_number(name: str, value, minimum: float, integer: bool = False, flag: str | None = None) -> None:
    kinds = (int,) if integer else (int, float)
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, kinds) or value < minimum:
        what = "an integer" if integer else "a number"
        raise FwbenchError(f"{name} must be {what} >= {minimum} (or None), got {value!r}"
                           + (f"; e.g. {flag}" if flag else ""))


def check_run_args(progress, timeout_s, memory_limit_mb, trials_per_host, scheduler) -> None:
    """Validate the runner's own arguments (notebook parameters arrive here as the user typed them)."""
    if not isinstance(progress, Progress) and progress not in ("auto", "lines", "bar", "none"):
        raise FwbenchError(f"progress must be one of auto, lines, bar, none, got {progress!r}")
    _check_number("timeout_s", timeout_s, 1, flag="timeout_s=3600")
    _check_number("memory_limit_mb", memory_limit_mb, 64, integer=True, flag="memory_limit_mb=8192")
    _check_number("trials_per_host", trials_per_host, 1, integer=True, flag="trials_per_host=1")
    if trials_per_host is not None and trials_per_host > 1 and scheduler is None:
        raise FwbenchError(f"trials_per_host={trials_per_host} only applies to a Dask run; pass a scheduler "
                           "(--scheduler tcp://HOST:8786) or drop it (one machine runs one trial at a time)")
    if scheduler is not None:
        from .cluster import check_address

        check_address(scheduler)


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


def _child_preexec(memory_limit_mb: int | None):
    def preexec() -> None:
        if memory_limit_mb:
            limit = int(memory_limit_mb) << 20
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        _die_with_parent()

    return preexec


def execute(trial: PlannedTrial, timeout_s: float | None = None, memory_limit_mb: int | None = None) -> dict:
    """Run one trial in a fresh process; returns a record for ``ResultsStore.record`` (framework-free).

    ``memory_limit_mb`` caps the child's address space (virtual memory, not RSS: frameworks reserve more than
    they touch, so give them room); a trial going over is recorded as failed."""
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
                                      timeout=timeout_s, preexec_fn=_child_preexec(memory_limit_mb))
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
            if memory_limit_mb and any("MemoryError" in line or "bad_alloc" in line for line in tail):
                error = f"exceeded the memory limit of {memory_limit_mb} MB ({error})"
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
              progress: Progress | str = "auto", timeout_s: float | None = None,
              memory_limit_mb: int | None = None, scheduler: str | None = None, trials_per_host: int = 1,
              security=None) -> SweepSummary:
    """Run (or resume) every trial of a profile: one at a time on this machine, or on a Dask cluster.

    Everything is validated first (options, the study's data via its ``preflight``, the store, the
    scheduler), so bad input fails with one line before any trial starts and leaves the store untouched.
    ``scheduler``: a Dask scheduler address (``tcp://HOST:8786``, ``tls://...`` with ``security``) or a
    scheduler file; ``trials_per_host``: how many trials may share one machine there (default 1)."""
    from .paths import results_path

    check_run_args(progress, timeout_s, memory_limit_mb, trials_per_host, scheduler)
    trials = preflight(study_name, profile, overrides)
    client = None
    if scheduler is not None:
        from .cluster import connect

        client = connect(scheduler, security=security)
    try:
        store = store or ResultsStore(results_path())
        return _run(trials, study_name, profile, store, progress, timeout_s, memory_limit_mb, client,
                    trials_per_host or 1)
    finally:
        if client is not None:
            client.close()


def _run(trials, study_name, profile, store, progress, timeout_s, memory_limit_mb, client, trials_per_host):
    status = store.status_of(t.trial_id for t in trials)
    todo = [t for t in trials if status.get(t.trial_id) != "done"]
    summary = SweepSummary(study_name, profile, planned=len(trials), skipped=len(trials) - len(todo))
    bar = make_progress(progress) if isinstance(progress, str) else progress
    t0 = time.perf_counter()
    bar.start(f"{study_name}/{profile}", total=len(trials), already=summary.skipped)
    if client is not None:
        from .cluster import run_trials

        run_trials(client, todo, store, profile, summary, bar, timeout_s=timeout_s,
                   memory_limit_mb=memory_limit_mb, trials_per_host=trials_per_host)
        todo = []
    for trial in todo:
        bar.trial_started(trial.label)
        outcome = execute(trial, timeout_s=timeout_s, memory_limit_mb=memory_limit_mb)
        store_outcome(store, trial, outcome, profile, {"runner": "local", "trials_sharing_host": 1,
                                                       "memory_limit_mb": memory_limit_mb})
        if outcome["status"] == "done":
            summary.done += 1
        else:
            summary.failed.append({"trial_id": trial.trial_id, "label": trial.label, "error": outcome["error"]})
        bar.trial_finished(trial.label, outcome["status"], outcome["error"])
    summary.wall_s = time.perf_counter() - t0
    bar.close(summary.line())
    return summary
