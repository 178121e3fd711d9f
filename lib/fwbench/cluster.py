"""Scale-out on a Dask distributed cluster, and how long the full grid takes.

- ``connect``: a ``distributed.Client`` that fails fast (one line) when the scheduler cannot be reached.
- ``run_trials``: sends trials to the cluster's workers. Each task is ``fwbench.runner.execute``, which runs
  the trial in a fresh child process on the worker and returns a framework-free record; the client writes
  it to the one results store as futures complete (``distributed.as_completed``). The client decides where
  each trial goes: at most ``trials_per_host`` trials run on one machine at a time (default 1, so timings
  never share a host), and every row records how many did in ``provenance.trials_sharing_host``.
  A worker that disappears has its trial resubmitted elsewhere (twice at most, then it is failed).
- ``estimate_full_runtime``: extrapolates the stored per-trial costs to a profile's grid on N workers.

``distributed`` is imported lazily: without ``--scheduler`` nothing here is loaded.
"""
from __future__ import annotations

import heapq
import math
import os
import statistics
import time
import uuid
from collections import defaultdict, deque
from dataclasses import dataclass, field
from pathlib import Path

from .errors import FwbenchError

CONNECT_TIMEOUT_S = float(os.environ.get("FWBENCH_CONNECT_TIMEOUT", "5"))
WORKER_WAIT_S = float(os.environ.get("FWBENCH_WORKER_WAIT", "60"))
MAX_RESUBMITS = 2
TLS_ENV = {"tls_ca_file": "FWBENCH_TLS_CA_FILE", "tls_cert": "FWBENCH_TLS_CERT", "tls_key": "FWBENCH_TLS_KEY"}


# -- connecting -------------------------------------------------------------------------------------------
def check_address(address) -> None:
    """A scheduler address (``tcp://`` or ``tls://``) or an existing scheduler file; one-line error otherwise."""
    if not isinstance(address, str) or not address:
        raise FwbenchError(f"scheduler must be an address like 'tcp://HOST:8786' or a scheduler file, got "
                           f"{address!r}")
    if address.startswith(("tcp://", "tls://")):
        host_port = address.split("://", 1)[1]
        host, _, port = host_port.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise FwbenchError(f"scheduler address {address!r} has no valid host:port; e.g. tcp://10.0.0.5:8786")
        return
    if address.endswith(".json"):
        if not Path(address).is_file():
            raise FwbenchError(f"scheduler file {address} does not exist; start the scheduler with "
                               f"`dask scheduler --scheduler-file {address}` or fix the path")
        return
    raise FwbenchError(f"scheduler {address!r} is neither an address (tcp://HOST:8786, tls://HOST:8786) nor a "
                       "scheduler file (.json); e.g. --scheduler tcp://127.0.0.1:8786")


def make_security(tls_ca_file: str | None = None, tls_cert: str | None = None, tls_key: str | None = None):
    """``distributed.security.Security`` from the CLI flags or ``FWBENCH_TLS_*``; None when neither is set."""
    given = {"tls_ca_file": tls_ca_file, "tls_cert": tls_cert, "tls_key": tls_key}
    given = {k: v or os.environ.get(TLS_ENV[k]) or None for k, v in given.items()}
    if not any(given.values()):
        return None
    missing = [TLS_ENV[k] for k, v in given.items() if not v]
    if missing:
        raise FwbenchError(f"TLS needs a CA file, a certificate and a key; missing {', '.join(missing)} "
                           "(or the matching --tls-* flag)")
    for key, value in given.items():
        if not Path(value).is_file():
            raise FwbenchError(f"{key.replace('_', '-')} file {value} does not exist; fix the path")
    from distributed.security import Security

    return Security(tls_ca_file=given["tls_ca_file"], tls_client_cert=given["tls_cert"],
                    tls_client_key=given["tls_key"], require_encryption=True)


def connect(address: str, security=None, timeout_s: float | None = None):
    """A client of the scheduler at ``address`` that has at least one worker, or a one-line error."""
    timeout_s = CONNECT_TIMEOUT_S if timeout_s is None else timeout_s
    check_address(address)
    if address.startswith("tls://") and security is None:
        raise FwbenchError(f"{address} is a TLS address; pass --tls-ca-file, --tls-cert and --tls-key (or set "
                           "FWBENCH_TLS_CA_FILE, FWBENCH_TLS_CERT, FWBENCH_TLS_KEY)")
    import logging

    from distributed import Client

    # A refused connection is retried by distributed until the timeout: quiet its log lines about that.
    log = logging.getLogger("distributed")
    level = log.level
    log.setLevel(logging.CRITICAL)
    kwargs = {"scheduler_file": address} if address.endswith(".json") else {"address": address}
    try:
        client = Client(**kwargs, security=security, timeout=timeout_s, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise FwbenchError(f"cannot reach the Dask scheduler at {address} within {timeout_s:.0f} s ({reason}); "
                           "start one (`dask scheduler --host 127.0.0.1`) or fix --scheduler") from None
    finally:
        log.setLevel(level)
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT_S)
    except (OSError, TimeoutError):
        client.close()
        raise FwbenchError(f"the Dask scheduler at {address} has no workers after {WORKER_WAIT_S:.0f} s; start "
                           f"some with `dask worker {address} --nthreads 1 --nworkers 1`") from None
    return client


# -- running ----------------------------------------------------------------------------------------------
def _slots(client) -> dict[str, dict[str, int]]:
    """{host: {worker address: threads}} of the workers the scheduler knows now."""
    hosts: dict[str, dict[str, int]] = defaultdict(dict)
    for address, info in client.scheduler_info(n_workers=-1)["workers"].items():
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


def run_trials(client, todo: list, store, profile: str, summary, bar, *, timeout_s=None, memory_limit_mb=None,
               trials_per_host: int = 1, poll_s: float = 0.1) -> None:
    """Run ``todo`` on the cluster, recording each outcome in ``store`` as it arrives."""
    from distributed import as_completed

    from .runner import execute, store_outcome

    scheduler = client.scheduler.address
    queue = deque((t, 0) for t in todo)
    inflight: dict = {}  # future -> _InFlight
    ac = as_completed(loop=client.loop)
    last_refresh, hosts, workers_seen = 0.0, {}, time.monotonic()
    try:
        while queue or inflight:
            now = time.monotonic()
            if now - last_refresh > 1.0 or not hosts:
                hosts, last_refresh = _slots(client), now
                if hosts:
                    workers_seen = now
                elif now - workers_seen > WORKER_WAIT_S:
                    raise FwbenchError(f"every Dask worker has been gone for {WORKER_WAIT_S:.0f} s; finished "
                                       "trials are in the store: start workers and rerun to resume")
                for fut, item in list(inflight.items()):  # a worker went away: run its trial elsewhere
                    if item.worker not in hosts.get(item.host, {}):
                        fut.cancel()
                        del inflight[fut]
                        queue.appendleft((item.trial, item.resubmits + 1))
            busy_host, busy_worker = defaultdict(int), defaultdict(int)
            for item in inflight.values():
                busy_host[item.host] += 1
                busy_worker[item.worker] += 1
            while queue:  # fill free slots: a worker with a free thread on a host below its share
                free = next(((h, w) for h, workers in sorted(hosts.items()) for w, n in sorted(workers.items())
                             if busy_host[h] < trials_per_host and busy_worker[w] < n), None)
                if free is None:
                    break
                host, worker = free
                trial, resubmits = queue.popleft()
                if resubmits > MAX_RESUBMITS:
                    _record_failure(store, trial, profile, summary, bar, f"worker lost {resubmits} times",
                                    host, scheduler)
                    continue
                fut = client.submit(execute, trial, timeout_s, memory_limit_mb, pure=False, workers=[worker],
                                    allow_other_workers=False, key=f"fwbench-{trial.trial_id}-{uuid.uuid4().hex[:8]}")
                busy_host[host] += 1
                busy_worker[worker] += 1
                item = _InFlight(trial, worker, host, time.perf_counter(), busy_host[host], resubmits)
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
                    _record_failure(store, item.trial, profile, summary, bar,
                                    f"dask task failed: {type(exc).__name__}: {exc}", item.host, scheduler)
                    continue
                finally:
                    fut.release()
                store_outcome(store, item.trial, outcome, profile, {
                    "runner": "dask", "scheduler": scheduler, "dask_worker": item.worker,
                    "worker_host": item.host, "trials_sharing_host": item.sharing,
                    "trials_per_host": trials_per_host, "memory_limit_mb": memory_limit_mb})
                _count(summary, item.trial, outcome)
                if hasattr(bar, "t_trial"):  # LineProgress times the trial from this attribute
                    bar.t_trial = item.t0
                bar.trial_finished(item.trial.label, outcome["status"], outcome["error"])
            if not ac.has_ready():
                time.sleep(poll_s)
    finally:
        for fut in inflight:
            fut.cancel()


def _count(summary, trial, outcome) -> None:
    if outcome["status"] == "done":
        summary.done += 1
    else:
        summary.failed.append({"trial_id": trial.trial_id, "label": trial.label, "error": outcome["error"]})


def _record_failure(store, trial, profile, summary, bar, error, host, scheduler) -> None:
    from .runner import store_outcome

    stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    outcome = {"status": "failed", "summary": {}, "measurements": [], "provenance": {"host": host},
               "started_at": stamp, "ended_at": stamp, "error": error, "stderr_tail": None}
    store_outcome(store, trial, outcome, profile, {"runner": "dask", "scheduler": scheduler})
    _count(summary, trial, outcome)
    bar.trial_started(trial.label)
    bar.trial_finished(trial.label, "failed", error)


# -- estimating -------------------------------------------------------------------------------------------
@dataclass
class Estimate:
    study: str
    profile: str
    n_workers: int
    n_trials: int  # in the profile's grid
    estimated_trials: int  # of those, the ones the model covers (see not_estimated)
    measured_trials: int
    total_s: float  # sum of predicted trial times (one machine, one trial at a time)
    makespan_s: float  # on n_workers, one trial each at a time, longest trials first
    by_group: dict = field(default_factory=dict)  # seconds per arm (or per study-specific group)
    model: str = ""
    not_estimated: dict = field(default_factory=dict)  # group -> trials left out (nothing stored to go on)

    def lines(self) -> list[str]:
        out = [f"{self.study}/{self.profile}: {self.n_trials} trials ({self.estimated_trials} estimated), "
               f"extrapolated from {self.measured_trials} stored trials",
               f"  one machine, one trial at a time: {_human(self.total_s)} ({self.total_s / 3600:.1f} CPU-host hours)",
               f"  on {self.n_workers} worker(s), one trial each: {_human(self.makespan_s)}"]
        out += [f"    {group}: {_human(s)} in total" for group, s in sorted(self.by_group.items())]
        out += [f"    {group}: {n} trials NOT included (no stored trials of it; run the quick profile with it)"
                for group, n in sorted(self.not_estimated.items())]
        out.append(f"  model: {self.model}")
        return out


def _human(seconds: float) -> str:
    if seconds >= 86400:
        return f"{seconds / 86400:.1f} days"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.1f} min"


def makespan(durations: list[float], n_workers: int) -> float:
    """Longest-processing-time-first greedy schedule on ``n_workers`` identical machines."""
    loads = [0.0] * n_workers
    for d in sorted(durations, reverse=True):
        heapq.heapreplace(loads, loads[0] + d)
    return max(loads) if durations else 0.0


IMDB_MODEL = (
    "trial = overhead[arm] + n_train * c_train * (epochs - 1 + warmup[arm]) + epochs * n_test * c_eval[arm]; "
    "c_train = median seconds per training sample-epoch (epochs >= 2) of the stored trials of the same arm, "
    "at the nearest stored threads, seq_len and DataLoader workers values (cost scaled linearly in seq_len "
    "when that differs: the LSTM's work is linear in it); for a batch size not stored, a power law "
    "c = a * batch^b fitted over the stored batch sizes (constant if only one); warmup = median ratio of "
    "epoch 1 to later epochs; overhead = median trial wall time not spent in epochs (process start, imports, "
    "data load); c_eval = median eval seconds per test sample and time step, times seq_len")


def _nearest(rows: list[dict], key: str, value) -> list[dict]:
    """The rows whose ``key`` is the stored value nearest to ``value`` (ties: the smaller)."""
    best = min({r[key] for r in rows}, key=lambda x: (abs(x - value), x))
    return [r for r in rows if r[key] == best]


def _imdb_predictor(measured):
    """Per-arm cost model fitted on the stored IMDB trials (``measured``: store.measurements frame, done)."""
    per_epoch = measured[measured.step >= 0]  # whole-trial values (step -1, e.g. compile time) sit in the overhead
    pivot = per_epoch.pivot_table(index=["trial_id", "step"], columns="metric", values="value").reset_index()
    cfg = measured.drop_duplicates("trial_id").set_index("trial_id")
    rows = []
    for tid, g in pivot.groupby("trial_id"):
        c = cfg.loc[tid]
        g = g.sort_values("step")
        n_train, n_test = float(c["config.n_train"]), float(c["config.n_test"])
        seq_len = int(c.get("config.encoding.maxlen", 500))
        later = g[g.step > 0]["train_time_s"]
        steady = statistics.median(later) if len(later) else float(g["train_time_s"].iloc[0])
        in_epochs = float(g["train_time_s"].sum() + g["eval_time_s"].sum())
        rows.append({"arm": c["config.arm"], "batch": int(c["config.batch_size"]),
                     "workers": int(c["config.num_workers"]), "threads": int(c["config.threads"]),
                     "seq_len": seq_len, "c_train": steady / n_train,
                     "warmup": float(g["train_time_s"].iloc[0]) / steady if len(later) else 1.0,
                     "c_eval_step": float(g["eval_time_s"].median()) / n_test / seq_len,
                     "overhead": max(0.0, float(c["provenance.trial_wall_s"]) - in_epochs)})
    by_arm = defaultdict(list)
    for r in rows:
        by_arm[r["arm"]].append(r)

    def c_train(arm, batch, workers, threads, seq_len):
        pool = _nearest(by_arm[arm], "threads", threads)
        pool = _nearest(pool, "seq_len", seq_len)
        scale = seq_len / pool[0]["seq_len"]
        pool = _nearest(pool, "workers", workers)
        pts = defaultdict(list)
        for r in pool:
            pts[r["batch"]].append(r["c_train"])
        med = {b: statistics.median(v) for b, v in pts.items()}
        if batch in med:
            return scale * med[batch]
        if len(med) == 1:
            return scale * next(iter(med.values()))
        xs = [math.log(b) for b in med]
        ys = [math.log(v) for v in med.values()]
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        return scale * math.exp(my + slope * (math.log(batch) - mx))

    def predict(config):
        arm = config["arm"]
        if arm not in by_arm:
            raise FwbenchError(f"no stored imdb trials for arm {arm!r} to extrapolate from; run "
                               f"`fwbench run imdb --profile quick --set arms=['{arm}']` first")
        rs = by_arm[arm]
        seq_len = config.get("encoding", {}).get("maxlen", 500)
        warm = statistics.median(r["warmup"] for r in rs)
        return (statistics.median(r["overhead"] for r in rs)
                + config["n_train"] * c_train(arm, config["batch_size"], config["num_workers"],
                                              config.get("threads", 1), seq_len)
                * (config["epochs"] - 1 + warm)
                + config["epochs"] * config["n_test"] * seq_len * statistics.median(r["c_eval_step"] for r in rs))

    return predict, (lambda config: config["arm"]), set(by_arm)


GENERIC_MODEL = ("trial = a stored trial's own wall time when the same config is stored, else the median stored "
                 "trial wall time per epoch times the config's epochs (per-trial median if there are no epochs)")


def _generic_predictor(trials):
    walls = {tid: float(w) for tid, w in zip(trials.trial_id, trials["provenance.trial_wall_s"])}
    epochs_col = "config.epochs" if "config.epochs" in trials else None
    per_epoch = (statistics.median(trials["provenance.trial_wall_s"] / trials[epochs_col]) if epochs_col
                 else None)
    per_trial = statistics.median(walls.values())

    def predict(config, tid):
        if tid in walls:
            return walls[tid]
        return per_epoch * config["epochs"] if per_epoch is not None and "epochs" in config else per_trial

    return predict


def estimate_full_runtime(store, study: str, n_workers: int, profile: str = "full") -> Estimate:
    """How long ``profile`` (default ``full``) of ``study`` takes on ``n_workers`` one-trial-at-a-time workers,
    extrapolated from the trials already in ``store`` (e.g. the quick profile's). The model is in
    ``Estimate.model`` (``IMDB_MODEL`` for imdb)."""
    from .runner import plan

    if isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1:
        raise FwbenchError(f"workers must be an integer >= 1, got {n_workers!r}; e.g. --workers 8")
    planned = plan(study, profile)
    n_planned = len(planned)
    trials = store.trials(study)
    if not trials.empty:
        trials = trials[(trials.status == "done") & trials["provenance.trial_wall_s"].notna()]
    if trials.empty:
        raise FwbenchError(f"no finished {study} trials in {store.path} to extrapolate from; run "
                           f"`fwbench run {study} --profile quick` (or smoke) first")
    by_group: dict = defaultdict(float)
    if study == "imdb":
        measured = store.measurements(study)
        measured = measured[measured.trial_id.isin(set(trials.trial_id))]
        predict, group, known = _imdb_predictor(measured)
        left_out = defaultdict(int)
        for t in planned:
            if t.config["arm"] not in known:
                left_out[t.config["arm"]] += 1
        if len(left_out) == len({t.config["arm"] for t in planned}):
            raise FwbenchError(f"no stored imdb trials of arms {sorted(left_out)} to extrapolate from; run "
                               "`fwbench run imdb --profile quick` first")
        planned = [t for t in planned if t.config["arm"] in known]
        durations = [predict(t.config) for t in planned]
        for t, d in zip(planned, durations):
            by_group[group(t.config)] += d
        model = IMDB_MODEL
    else:
        predict = _generic_predictor(trials)
        durations = [predict(t.config, t.trial_id) for t in planned]
        model = GENERIC_MODEL
        left_out = {}
    return Estimate(study, profile, n_workers, n_planned, len(planned), len(trials), float(sum(durations)),
                    makespan(durations, n_workers), dict(by_group), model, dict(left_out))
