"""Scale-out on a Dask distributed cluster: the Dask executor (``fwbench.cluster_connect`` makes its client).

- ``DaskExecutor`` sends trials to the workers. Each task is ``fwbench.execute.execute``; the client hands each
  record to the runner's ``record`` callback as futures complete. The client decides placement: at most
  ``trials_per_host`` trials on one machine at a time (default 1, so timings never share a host), recorded as
  ``trials_sharing_host``. A worker that disappears has its trial resubmitted elsewhere (twice at most, then failed).
- A trial that starts a group of processes (``Study.slots``) gets that many worker threads reserved on one host
  before it is sent; the task runs on the first reserved worker and the trial hands its processes their ranks
  (``fwbench.dataparallel.group``). Dask has no gang scheduling, so the reservation is the client's: the head of
  the queue waits until one host has the slots free (the trials behind it wait too, so a large trial is not
  starved), and fails when no host has offered that many for ``WORKER_WAIT_S``. Losing the task's worker requeues
  the trial; losing another reserved worker does not stop it and is recorded (``reserved_workers_lost``).

``distributed`` is imported lazily: without ``--scheduler`` nothing here is loaded.
"""

from __future__ import annotations

import time
import uuid
from collections import defaultdict, deque
from dataclasses import dataclass, field

from .cluster_connect import WORKER_WAIT_S
from .environments import require_built_where, states_here
from .errors import FwbenchError
from .execute import execute
from .studies import get_study

MAX_RESUBMITS = 2
POLL_S = 0.1  # the client's wait between looks at the queue and the futures


# -- running ----------------------------------------------------------------------------------------------
def _slots(client) -> dict[str, dict[str, int]]:
    """{host: {worker address: threads}} of the workers the scheduler knows now. Asked of the scheduler directly:
    ``client.scheduler_info()`` is a cache its periodic refresh can overwrite with no workers, so under load a
    running trial's worker could look gone and the trial be sent again while the first copy ran on."""
    hosts: dict[str, dict[str, int]] = defaultdict(dict)
    for address, info in client.sync(client.scheduler.identity, n_workers=-1)["workers"].items():
        hosts[info.get("host") or address.split("://")[-1].rsplit(":", 1)[0]][address] = int(info["nthreads"])
    return hosts


@dataclass
class _InFlight:
    trial: object
    worker: str
    host: str
    t0: float
    sharing: int = 1
    resubmits: int = 0
    reserved: dict = field(default_factory=dict)  # worker -> threads held for the trial (the task's worker first)
    lost: list = field(default_factory=list)  # reserved workers that left while it ran


def reserve(hosts: dict, busy_host: dict, busy_worker: dict, slots: int, trials_per_host: int) -> tuple | None:
    """(host, {worker: threads}) holding ``slots`` free worker threads on one host whose trials are below
    ``trials_per_host``, or None when no host has them free now."""
    for host, workers in sorted(hosts.items()):
        if busy_host[host] >= trials_per_host:
            continue
        taken, need = {}, slots
        for worker, n in sorted(workers.items()):
            free = n - busy_worker[worker]
            if free > 0 and need > 0:
                taken[worker] = min(free, need)
                need -= taken[worker]
        if need == 0:
            return host, taken
    return None


def largest_host(hosts: dict) -> int:
    """The most worker threads any one host offers (0 with no workers)."""
    return max((sum(workers.values()) for workers in hosts.values()), default=0)


def _one_line(exc: Exception) -> str:
    """The error's type and the first line of its message."""
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'no message'}"


def preflight_here(study_name: str, module: str, options: dict) -> str | None:
    """Runs on a Dask worker: what the study's own check (``Study.preflight``) found wrong there, or None."""
    try:
        get_study(study_name, module).preflight(options)
    except Exception as exc:  # noqa: BLE001 - every failure is reported to the client, one line per host
        return _one_line(exc)
    return None


class DaskExecutor:
    """Trials on a Dask cluster (``fwbench.executors`` explains the interface); owns the client."""

    def __init__(self, client, timeout_s=None, memory_limit_mb=None, trials_per_host: int = 1):
        self.client, self.timeout_s, self.memory_limit_mb = client, timeout_s, memory_limit_mb
        self.trials_per_host = trials_per_host

    def close(self) -> None:
        self.client.close()

    def _ask_workers(self, what: str, function, *args) -> dict[str, tuple[str, object]]:
        """worker -> (its host, ``function(*args)`` run there), for every worker now (workers joining later are not
        asked; the workers of one machine answer for that machine); one line when that fails."""
        try:
            by_worker = self.client.run(function, *args)
        except Exception as exc:  # noqa: BLE001 - e.g. a worker that cannot import fwbench
            raise FwbenchError(
                f"asking the Dask workers {what} failed ({_one_line(exc)}); can every worker import fwbench?"
            ) from None
        host_of = {worker: host for host, workers in _slots(self.client).items() for worker in workers}
        return {worker: (host_of.get(worker, worker), answer) for worker, answer in by_worker.items()}

    def require_environments(self, trials: list) -> None:
        """Each worker host reports the state of the environments these trials need, resolved in its own
        checkout (``environments.states_here``); any host where one is missing, stale or locked otherwise than
        here stops the sweep before a trial is sent (else the worker would store each trial as failed)."""
        planned = {t.env: t.env_lock for t in trials}
        if not planned:
            return
        answers = dict(self._ask_workers("for their environments", states_here, sorted(planned)).values())
        require_built_where(answers, planned)

    def require_preflight(self, study, options: dict) -> None:
        """Each worker runs the study's own check (``Study.preflight``) in its own environment: a worker started
        without the ``FWBENCH_DATA_DIR`` the client has, or on a host without the data, stops the sweep with one
        line before a trial is sent (else each trial it got would be stored as failed, seconds in)."""
        answers = self._ask_workers(f"to check {study.name}'s data", preflight_here, study.name, study.module, options)
        problems: dict[str, list[str]] = {}
        for _, (host, problem) in sorted(answers.items()):
            if problem is not None:
                problems.setdefault(problem, []).append(host)
        if problems:
            where = "; ".join(f"on {', '.join(sorted(set(hosts)))}: {what}" for what, hosts in problems.items())
            raise FwbenchError(
                f"{study.name}'s check failed where its trials would run ({where}); each worker finds data "
                "through its own environment (start it with the FWBENCH_DATA_DIR this client has), then rerun; "
                "no trial was sent"
            )

    def run(self, todo: list, record, bar) -> None:
        run_trials(self.client, todo, record, bar, self.timeout_s, self.memory_limit_mb, self.trials_per_host)


def run_trials(client, todo: list, record, bar, timeout_s, memory_limit_mb, trials_per_host: int) -> None:
    """Run ``todo`` on the cluster, handing each outcome to ``record(trial, outcome, placement)`` as it arrives."""
    from distributed import as_completed

    scheduler = client.scheduler.address
    queue = deque((t, 0) for t in todo)
    inflight: dict = {}  # future -> _InFlight
    ac = as_completed(loop=client.loop)
    last_refresh, hosts, workers_seen = 0.0, {}, time.monotonic()
    unplaceable_since = None  # since when the head trial has needed more slots than any host offers
    try:
        while queue or inflight:
            now = time.monotonic()
            if now - last_refresh > 1.0 or not hosts:
                hosts, last_refresh = _slots(client), now
                if hosts:
                    workers_seen = now
                elif now - workers_seen > WORKER_WAIT_S:
                    raise FwbenchError(
                        f"every Dask worker has been gone for {WORKER_WAIT_S:.0f} s; finished "
                        "trials are in the store: start workers and rerun to resume"
                    )
                for fut, item in list(inflight.items()):  # a worker went away: run its trial elsewhere
                    present = hosts.get(item.host, {})
                    if item.worker not in present:
                        fut.cancel()
                        del inflight[fut]
                        queue.appendleft((item.trial, item.resubmits + 1))
                        continue
                    for worker in list(item.reserved):  # a reserved slot's worker left: its processes did not
                        if worker not in present:
                            item.lost.append(worker)
                            del item.reserved[worker]
            busy_host, busy_worker = defaultdict(int), defaultdict(int)
            for item in inflight.values():
                busy_host[item.host] += 1
                for worker, n in item.reserved.items():
                    busy_worker[worker] += n
            while queue:  # fill free slots: a host below its share with the head trial's slots free
                trial, resubmits = queue[0]
                need = getattr(trial, "slots", 1)
                found = reserve(hosts, busy_host, busy_worker, need, trials_per_host)
                if found is None:
                    if largest_host(hosts) >= need:
                        unplaceable_since = None
                    elif unplaceable_since is None:
                        unplaceable_since = now
                    elif now - unplaceable_since > WORKER_WAIT_S:
                        queue.popleft()
                        unplaceable_since = None
                        error = (
                            f"needs {need} slots on one host; for {WORKER_WAIT_S:.0f} s the largest host has offered "
                            f"{largest_host(hosts)}: start workers with more threads (dask worker --nthreads {need})"
                        )
                        _record_failure(record, trial, bar, error, None, scheduler)
                        continue
                    break
                unplaceable_since = None
                host, reserved = found
                worker = next(iter(reserved))
                queue.popleft()
                if resubmits > MAX_RESUBMITS:
                    _record_failure(record, trial, bar, f"worker lost {resubmits} times", host, scheduler)
                    continue
                fut = client.submit(
                    execute,
                    trial,
                    timeout_s,
                    memory_limit_mb,
                    pure=False,
                    workers=[worker],
                    allow_other_workers=False,
                    key=f"fwbench-{trial.trial_id}-{uuid.uuid4().hex[:8]}",
                )
                busy_host[host] += 1
                for w, n in reserved.items():
                    busy_worker[w] += n
                item = _InFlight(trial, worker, host, time.perf_counter(), busy_host[host], resubmits, dict(reserved))
                for other in inflight.values():  # everyone on that host now shares it with one more
                    if other.host == host:
                        other.sharing = max(other.sharing, busy_host[host])
                inflight[fut] = item
                ac.add(fut)
                bar.trial_started(trial.label)
            for fut in ac.next_batch(block=False) if ac.has_ready() else []:
                item = inflight.pop(fut, None)
                if item is None:  # cancelled after its worker left; already requeued
                    continue
                try:
                    outcome = fut.result()
                except Exception as exc:  # noqa: BLE001 - the task itself failed (not the trial's child)
                    _record_failure(
                        record, item.trial, bar, f"dask task failed: {type(exc).__name__}: {exc}", item.host, scheduler
                    )
                    continue
                finally:
                    fut.release()
                record(
                    item.trial,
                    outcome,
                    {
                        "runner": "dask",
                        "scheduler": scheduler,
                        "dask_worker": item.worker,
                        "worker_host": item.host,
                        "trials_sharing_host": item.sharing,
                        "trials_per_host": trials_per_host,
                        "memory_limit_mb": memory_limit_mb,
                        **({"reserved_slots": item.trial.slots} if getattr(item.trial, "slots", 1) > 1 else {}),
                        **({"reserved_workers_lost": item.lost} if item.lost else {}),
                    },
                )
                if hasattr(bar, "t_trial"):  # LineProgress times the trial from this attribute
                    bar.t_trial = item.t0
                bar.trial_finished(item.trial.label, outcome["status"], outcome["error"])
            if not ac.has_ready():
                time.sleep(POLL_S)
    finally:
        for fut in inflight:
            fut.cancel()


def _record_failure(record, trial, bar, error, host, scheduler) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    outcome = {"status": "failed", "summary": {}, "measurements": [], "provenance": {"host": host}, "error": error}
    outcome |= {"started_at": stamp, "ended_at": stamp, "stderr_tail": None}
    bar.trial_started(trial.label)
    record(trial, outcome, {"runner": "dask", "scheduler": scheduler})
    bar.trial_finished(trial.label, "failed", error)
