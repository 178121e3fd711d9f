"""Runs a study's trials, each in a fresh child process, and records every outcome in the results store.

- Finished trials (status ``done``) are skipped; missing and failed ones are run. A trial that raises, crashes
  (signal), times out or goes over ``memory_limit_mb`` (the child's ``RLIMIT_AS``) is stored as ``failed`` with its
  error and stderr tail; the sweep goes on.
- The study's ``preflight(options)`` runs in the parent before the first trial is launched, so missing data is a
  one-line error and not N failed trials. It runs only when a trial is about to run (``Preflight``), so a post is
  rebuilt from a complete store on a machine without the data; with no store file yet it runs before the store
  is created.
- Trials go to an executor (``executors.LocalExecutor``, or with ``scheduler`` ``cluster.DaskExecutor``) that hands
  each outcome back through a callback: the store stays on this machine and only the runner writes to it.
- Adaptive repeats (``studies.adaptive``): the plan holds every block up to ``max_blocks``; the executor gets one
  block at a time (a Dask cluster too), the runner re-decides from the store after each block which settings need
  another one, and stores each trial's ``block_reason`` in its provenance.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import conditions
from .errors import FwbenchError
from .execute import PlannedTrial
from .executors import Executor, LocalExecutor
from .planning import Preflight, check_run_args, planned_trials, resolve
from .progress import NoProgress, Progress, make_progress
from .store import ResultsStore
from .studies import adaptive, get_study


@dataclass
class SweepSummary:
    study: str
    profile: str
    planned: int = 0
    skipped: int = 0
    done: int = 0
    failed: list[dict] = field(default_factory=list)
    wall_s: float = 0.0
    adaptive: bool = False
    not_needed: int = 0  # adaptive: planned trials of blocks the rule skipped (never run)
    stopped: bool = False  # the stop file asked for a stop, taken at a setting's block boundary

    @property
    def ok(self) -> bool:
        return not self.failed

    def line(self) -> str:
        skipped = f", {self.not_needed} not needed (adaptive blocks)" if self.adaptive else ""
        stopped = ", stopped by the stop file at a setting's block boundary (rerun to resume)" if self.stopped else ""
        return (
            f"{self.study}/{self.profile}: {self.planned} trials, {self.skipped} already done, "
            f"{self.done} run now, {len(self.failed)} failed{skipped}{stopped} ({self.wall_s:.0f} s)"
        )


class StopRequested(Exception):
    """Raised after a trial is stored when the stop file exists and that trial completed its group."""


def store_outcome(store: ResultsStore, trial: PlannedTrial, outcome: dict, profile: str, extra: dict) -> None:
    """Write one outcome; the provenance gains where it ran (``extra``) and the study's code version."""
    extra = {**extra, "code_version": trial.code_version, "plan_position": trial.position}
    store.record(
        trial_id=trial.trial_id,
        study=trial.study,
        profile=profile,
        config=trial.config,
        status=outcome["status"],
        summary=outcome["summary"],
        measurements=outcome["measurements"],
        provenance={**outcome["provenance"], **extra},
        error=outcome["error"],
        stderr_tail=outcome["stderr_tail"],
        started_at=outcome["started_at"],
        ended_at=outcome["ended_at"],
    )


def runs_at_once(trials: list, at_once: int) -> tuple[list, dict[int, int]]:
    """(the trials this run takes, {k: trials left}) where ``at_once`` is how many trials the run lets share a host
    (``--trials-per-host`` on Dask, 1 locally). A config that declares ``trials_at_once`` k (the post's
    conditions) is measured only in a run that puts k on a host at once; a config without it runs in any run
    (its provenance records what it shared)."""
    take, left = [], {}
    for t in trials:
        k = t.config.get("trials_at_once")
        if k is None or int(k) == at_once:
            take.append(t)
        else:
            left[int(k)] = left.get(int(k), 0) + 1
    return take, left


def named_cpu_pieces(study, trials: list, condition: dict, parts: list | None) -> tuple[list, int]:
    """(the trials this run takes, how many it leaves): a part the study measures as pieces per CPU model
    (``Study.piece_parts``) runs only in a run that names its CPU (``--set cpu=this``) or asks for the part; a
    run of the whole plan, e.g. ``make reproduce PROFILE=paper`` on a complete store, leaves it alone."""
    if parts or condition.get("cpu") is not None:
        return trials, 0
    take = [t for t in trials if t.config.get("part") not in study.piece_parts]
    return take, len(trials) - len(take)


def run_sweep(
    study_name: str,
    profile: str,
    overrides: dict | None = None,
    store: ResultsStore | None = None,
    progress: Progress | str = "auto",
    timeout_s: float | None = None,
    memory_limit_mb: int | None = None,
    scheduler: str | None = None,
    trials_per_host: int = 1,
    security=None,
    rerun_busy: bool = False,
    stop_file: str | Path | None = None,
    parts: list[str] | None = None,
) -> SweepSummary:
    """Run (or resume) every trial of a profile: one at a time on this machine, or on a Dask cluster. Everything is
    validated first, so bad input fails with one line before any trial starts and leaves the store untouched.
    ``scheduler``: a Dask scheduler address (``tcp://HOST:8786``, ``tls://...`` with ``security``) or a
    scheduler file. ``rerun_busy``: also rerun the finished trials flagged ``busy_machine`` (other processes took
    the CPU while they were timed), replacing their rows.
    ``stop_file``: once this file exists, the sweep stops after the trial that completes its group (every arm of
    its setting in its repeat block stored), so a run made in pieces, perhaps on different machines, never splits
    a block whose arms are compared with each other; rerun to resume. Local runs only.
    ``parts``: run only the planned trials of these parts (a config's ``part``; ``main`` where it names none): a
    piece of the profile's plan, with the ids the whole plan gives them, so the analysis of the profile finds it."""
    from .paths import results_path

    check_run_args(progress, timeout_s, memory_limit_mb, trials_per_host, scheduler)
    if stop_file is not None and scheduler is not None:
        raise FwbenchError("a stop file works with the local runner only; on a cluster stop the workers instead")
    study, options = resolve(study_name, profile, overrides)
    spec = adaptive.spec_of(options)
    condition = conditions.of_run(study_name, profile, overrides)
    trials = planned_trials(study, options, condition)
    if parts:
        known = {t.config.get("part", "main") for t in trials}
        unknown = sorted(set(parts) - known)
        if unknown:
            raise FwbenchError(f"no part {', '.join(unknown)} in this plan; its parts: {', '.join(sorted(known))}")
        trials = [t for t in trials if t.config.get("part", "main") in parts]
    trials, pieces = named_cpu_pieces(study, trials, condition, parts)
    if pieces:
        print(f"{pieces} trial(s) of {'/'.join(study.piece_parts)} left for a run with --set cpu=this", file=sys.stderr)
    trials, deferred = runs_at_once(trials, (trials_per_host or 1) if scheduler is not None else 1)
    for k, n in sorted(deferred.items()):
        worker = f" (a local Dask worker: dask worker SCHEDULER --nthreads {k})"
        where = "a run without --scheduler" if k == 1 else f"a Dask run with --trials-per-host {k}{worker}"
        print(f"{n} trial(s) of {k} run(s) at once left for {where}", file=sys.stderr)
    if scheduler is not None:
        from .cluster import DaskExecutor
        from .cluster_connect import connect

        executor = DaskExecutor(
            connect(scheduler, security=security),
            timeout_s=timeout_s,
            memory_limit_mb=memory_limit_mb,
            trials_per_host=trials_per_host or 1,
        )
    else:
        if condition.get("cpu") is not None:  # one line before anything runs (each trial refuses it too)
            conditions.require_cpu(condition)
        executor = LocalExecutor(timeout_s=timeout_s, memory_limit_mb=memory_limit_mb)
    checked = Preflight(study, options, elsewhere=executor.require_preflight)
    try:
        if store is None and not results_path().exists():
            executor.require_environments(trials)  # nothing stored yet, so every trial runs: its environments
            checked()  # and data (where the trials will run: environments first) are checked before the store file
        store = store or ResultsStore(results_path())
        return _run(trials, study_name, profile, store, progress, executor, spec, rerun_busy, stop_file, checked)
    finally:
        executor.close()


def _run(trials, study_name, profile, store, progress, executor: Executor, spec, rerun_busy, stop_file, preflight):
    """Run the trials not done yet (and with ``rerun_busy`` the done ones flagged busy): all at once, or with an
    adaptive ``spec`` block by block. ``preflight`` (a callable) runs before the first trial is handed over."""
    status = store.status_of(t.trial_id for t in trials)
    busy = busy_trials(store, get_study(study_name), trials) if rerun_busy else set()
    todo = [t for t in trials if status.get(t.trial_id) != "done" or t.trial_id in busy]
    executor.require_environments(todo)  # missing or stale where it would run: one line before any trial
    summary = SweepSummary(
        study_name, profile, planned=len(trials), skipped=len(trials) - len(todo), adaptive=spec is not None
    )
    bar = make_progress(progress) if isinstance(progress, str) else progress
    t0 = time.perf_counter()
    bar.start(f"{study_name}/{profile}", total=len(trials), already=summary.skipped)
    if busy:
        _note(
            bar,
            f"rerunning {len(busy)} finished trial(s): those flagged busy_machine and their groups' others "
            "(their rows will be replaced)",
        )
    reasons: dict[str, str] = {}  # trial id -> why its block runs (adaptive only)

    def record(trial: PlannedTrial, outcome: dict, placement: dict) -> None:
        if trial.trial_id in reasons:
            placement = {**placement, "block_reason": reasons[trial.trial_id]}
        store_outcome(store, trial, outcome, profile, placement)
        if outcome["status"] == "done":
            summary.done += 1
        else:
            summary.failed.append({"trial_id": trial.trial_id, "label": trial.label, "error": outcome["error"]})
        if stop_file is not None and Path(stop_file).exists() and group_complete(study, trials, trial, store):
            raise StopRequested

    study = get_study(study_name)
    todo_ids = {t.trial_id for t in todo}
    batches = [todo] if spec is None else _adaptive_blocks(study, trials, todo_ids, spec, store, reasons, bar, summary)
    try:
        for batch in batches:
            if batch:  # a resumed sweep skips blocks already done
                preflight()
                executor.run(batch, record, bar)
    except StopRequested:
        summary.stopped = True
    summary.wall_s = time.perf_counter() - t0
    bar.close(summary.line())
    return summary


def group_of(study, config: dict) -> tuple:
    """A trial's group: its setting and repeat block (the arms compared with each other). An arm's own environment
    (JAX's ``env``) names the arm, not the setting; a part's (the versions part's) stays in the key."""
    if config.get("env") == study.arm_of(config).env:
        config = {k: v for k, v in config.items() if k not in ("env", "env_lock")}
    return adaptive.setting_key(study, config), adaptive.block_of(study, config)


def group_complete(study, trials, trial: PlannedTrial, store) -> bool:
    """Has every planned trial of ``trial``'s setting and repeat block a stored outcome?"""
    key = group_of(study, trial.config)
    group = [t.trial_id for t in trials if group_of(study, t.config) == key]
    status = store.status_of(group)
    return all(status.get(i) is not None for i in group)


def busy_trials(store, study, trials) -> set[str]:
    """The done trials of ``trials`` whose provenance flags ``busy_machine``, with every other trial of their group
    (setting and repeat block): the arms compared with each other are rerun together, back to back on one machine,
    rather than one arm days later on another boot beside partners that stay."""
    t = store.trials(study.name, {x.trial_id for x in trials})
    if t.empty or "provenance.busy_machine" not in t:
        return set()
    flagged = set(t.loc[(t.status == "done") & t["provenance.busy_machine"].eq(True), "trial_id"])
    key = {x.trial_id: group_of(study, x.config) for x in trials}
    busy_groups = {key[i] for i in flagged}
    return {i for i, k in key.items() if k in busy_groups}


def _adaptive_blocks(study, trials, todo_ids: set, spec, store, reasons: dict, bar, summary: SweepSummary):
    """Adaptive repeats: yields each block's trials still to run, for the settings the rule says still need it,
    decided afresh from the store before each block (so a resumed sweep re-derives the same decisions)."""
    by_block: dict[int, list] = {}
    for t in trials:
        by_block.setdefault(adaptive.block_of(study, t.config), []).append(t)
    announced: set = set()  # settings whose stop was already reported
    for block in sorted(by_block):
        decisions = adaptive.decide(study, trials, adaptive.observe_store(store, study, trials), spec)
        members = by_block[block]
        chosen = [t for t in members if decisions[adaptive.setting_key(study, t.config)][block].run]
        _announce(study, block, members, decisions, spec, announced, bar)
        for t in chosen:
            reasons[t.trial_id] = decisions[adaptive.setting_key(study, t.config)][block].reason
        chosen_ids = {t.trial_id for t in chosen}
        summary.not_needed += sum(1 for t in members if t.trial_id in todo_ids and t.trial_id not in chosen_ids)
        yield [t for t in chosen if t.trial_id in todo_ids]
    if isinstance(bar, NoProgress):
        return
    final = adaptive.decide(study, trials, adaptive.observe_store(store, study, trials), spec)
    for t in trials:  # settings that ran every planned block: why they stop there
        key = adaptive.setting_key(study, t.config)
        if key not in announced:
            announced.add(key)
            last = final[key][max(final[key])]
            _note(bar, f"adaptive: stops for {adaptive.setting_label(study, t.config)}: {last.reason}")


def _announce(study, block: int, members, decisions, spec, announced: set, bar) -> None:
    """One progress line per adaptive decision: the minimum blocks as one line, then per live setting."""
    if block < spec.min_blocks:
        _note(
            bar,
            f"adaptive block {block + 1}/{spec.max_blocks}: every setting runs (block {block + 1} of the "
            f"minimum {spec.min_blocks})",
        )
        return
    first = {}
    for t in members:
        first.setdefault(adaptive.setting_key(study, t.config), t.config)
    for key, config in first.items():
        decision = decisions[key][block]
        if key in announced:
            continue
        if not decision.run:
            announced.add(key)
        verb = "runs" if decision.run else "stops"
        _note(
            bar,
            f"adaptive block {block + 1}/{spec.max_blocks} {verb} for "
            f"{adaptive.setting_label(study, config)}: {decision.reason}",
        )


def _note(bar, text: str) -> None:
    """A line beside the progress display (none with progress 'none')."""
    if isinstance(bar, NoProgress):
        return
    tqdm_bar = getattr(bar, "bar", None)
    if tqdm_bar is not None:
        tqdm_bar.write(text)
    else:
        print(text, file=getattr(bar, "stream", None) or sys.stdout, flush=True)
