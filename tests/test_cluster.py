"""Scale-out on Dask: a real scheduler and two worker processes on 127.0.0.1 run a self-test sweep.

Checks that every trial lands exactly once, every row names its host and worker, trials never share a host
unless ``trials_per_host`` allows it (measured from the trials' own start/end times), and that the CLI's
``--scheduler`` path and ``fwbench estimate`` work.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fwbench.errors import FwbenchError
from fwbench.estimate import estimate_full_runtime, makespan
from fwbench.planning import plan
from fwbench.runner import run_sweep
from fwbench.store import ResultsStore

REPO = Path(__file__).resolve().parents[1]
EVIDENCE = REPO / "build" / "test-evidence"


def write_evidence(name: str, data: dict) -> None:
    EVIDENCE.mkdir(parents=True, exist_ok=True)
    (EVIDENCE / f"{name}.json").write_text(json.dumps(data, indent=2, sort_keys=True))


def loopback_cluster(n_workers: int, **kwargs):
    """A Dask cluster of worker processes on 127.0.0.1, 1 thread each, ports chosen by the system."""
    distributed = pytest.importorskip("distributed")
    return distributed.LocalCluster(
        host="127.0.0.1",
        processes=True,
        n_workers=n_workers,
        threads_per_worker=1,
        dashboard_address="127.0.0.1:0",
        scheduler_port=0,
        **kwargs,
    )


@pytest.fixture(scope="module")
def cluster():
    with loopback_cluster(2) as lc:
        assert lc.scheduler_address.startswith("tcp://127.0.0.1:")
        yield lc


@pytest.fixture
def store_env(tmp_path, monkeypatch):
    path = tmp_path / "results.sqlite"
    monkeypatch.setenv("FWBENCH_RESULTS", str(path))
    monkeypatch.setenv("FWBENCH_DATA_DIR", os.environ["FWBENCH_DATA_DIR"])
    return path


def _overlaps(rows) -> int:
    """Largest number of trials running at one instant (from the trials' own clocks)."""
    events = sorted(
        [(r["provenance.t_start"], 1) for r in rows] + [(r["provenance.t_end"], -1) for r in rows],
        key=lambda e: (e[0], e[1]),
    )
    now = peak = 0
    for _, step in events:
        now += step
        peak = max(peak, now)
    return peak


def test_sweep_on_two_workers_lands_every_trial_once(cluster, store_env):
    n = 10
    summary = run_sweep(
        "selftest", "smoke", {"n_trials": n, "sleep_s": 0.2}, progress="none", scheduler=cluster.scheduler_address
    )
    assert summary.ok and summary.done == n
    store = ResultsStore(store_env)
    trials = store.trials("selftest")
    planned = {t.trial_id for t in plan("selftest", "smoke", {"n_trials": n, "sleep_s": 0.2})}
    assert sorted(trials.trial_id) == sorted(planned)  # each exactly once
    assert (trials.status == "done").all()
    assert trials.host.notna().all() and (trials.host != "").all()
    assert (trials["provenance.runner"] == "dask").all()
    assert set(trials["provenance.dask_worker"]) <= set(cluster.scheduler_info["workers"])
    # both workers are on 127.0.0.1, one host: with the default trials_per_host=1 they never overlap
    assert (trials["provenance.trials_sharing_host"] == 1).all()
    assert _overlaps(trials.to_dict("records")) == 1
    m = store.measurements("selftest")
    assert len(m) == n * 3 * 3  # epochs x metrics, no duplicates
    # a rerun finds everything done and sends nothing
    again = run_sweep(
        "selftest", "smoke", {"n_trials": n, "sleep_s": 0.2}, progress="none", scheduler=cluster.scheduler_address
    )
    assert again.skipped == n and again.done == 0
    write_evidence(
        "cluster_one_per_host", {"trials": n, "stored": int(len(trials)), "workers": 2, "peak_concurrent": 1}
    )


def test_trials_per_host_allows_sharing_and_records_it(cluster, store_env):
    n = 10
    summary = run_sweep(
        "selftest",
        "smoke",
        {"n_trials": n, "sleep_s": 0.4},
        progress="none",
        scheduler=cluster.scheduler_address,
        trials_per_host=2,
    )
    assert summary.ok and summary.done == n
    trials = ResultsStore(store_env).trials("selftest")
    assert len(trials) == n
    assert trials["provenance.trials_sharing_host"].isin([1, 2]).all()
    assert (trials["provenance.trials_sharing_host"] == 2).any()  # the two workers did run side by side
    assert _overlaps(trials.to_dict("records")) <= 2
    assert set(trials["provenance.dask_worker"]) == set(cluster.scheduler_info["workers"])
    write_evidence(
        "cluster_two_per_host",
        {"trials": n, "stored": int(len(trials)), "peak_concurrent": _overlaps(trials.to_dict("records"))},
    )


def test_cli_scheduler_flag_and_failures_come_back(cluster, store_env):
    env = {**os.environ, "FWBENCH_RESULTS": str(store_env), "FWBENCH_DATA_DIR": os.environ["FWBENCH_DATA_DIR"]}
    cmd = [
        sys.executable,
        "-m",
        "fwbench.cli",
        "run",
        "selftest",
        "--profile",
        "smoke",
        "--set",
        "n_trials=4",
        "--set",
        "modes=['ok','raise']",
        "--scheduler",
        cluster.scheduler_address,
        "--progress",
        "lines",
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr  # two trials failed on the workers: summary + non-zero status
    assert "4 trials, 0 already done, 2 run now, 2 failed" in proc.stdout
    trials = ResultsStore(store_env).trials("selftest")
    failed = trials[trials.status == "failed"]
    assert len(failed) == 2
    assert failed.error.str.contains("raised on purpose").all()
    assert failed.stderr_tail.str.contains("Traceback").all()


def test_estimate_extrapolates_from_stored_trials(tmp_path):
    store = ResultsStore(tmp_path / "r.sqlite")
    # three measured IMDB trials per arm, at three batch sizes: per-sample cost halves as the batch quadruples;
    # oneDNN-off trials cost 10x and must not leak into the oneDNN-on predictions
    from fwbench.runner import store_outcome

    for arm in ("torch-eager", "torch-sparse", "mxnet-imperative"):
        for t in plan(
            "imdb", "smoke", {"arms": [arm], "batch_sizes": [64, 128, 256], "workers": [0], "onednn": [True, False]}
        ):
            if t.config.get("part", "main") != "main" or t.config["arm"] != arm:
                continue
            c_train = (
                1e-3
                * (t.config["batch_size"] / 64) ** -0.5
                * (2 if arm == "mxnet-imperative" else 1)
                * (1 if t.config["onednn"] else 10)
            )
            per_epoch = [(e, "train_time_s", c_train * t.config["n_train"]) for e in range(t.config["epochs"])]
            per_epoch += [(e, "eval_time_s", 1e-4 * t.config["n_test"]) for e in range(t.config["epochs"])]
            wall = 3.0 + sum(v for _, _, v in per_epoch)
            store_outcome(
                store,
                t,
                {
                    "status": "done",
                    "summary": {},
                    "measurements": per_epoch,
                    "provenance": {"host": "h", "trial_wall_s": wall},
                    "started_at": None,
                    "ended_at": None,
                    "error": None,
                    "stderr_tail": None,
                },
                "smoke",
                {},
            )
    est = estimate_full_runtime(store, "imdb", 4, profile="full")
    full = plan("imdb", "full")
    assert est.n_trials == len(full) and est.measured_trials == 18  # 3 arms x 3 batch sizes x oneDNN on/off
    stored_arms = {"torch-eager", "torch-sparse", "mxnet-imperative"}
    assert est.estimated_trials == sum(t.config["arm"] in stored_arms for t in full)
    assert sum(est.not_estimated.values()) == len(full) - est.estimated_trials
    # hand computation for the torch-eager arm at batch 1024 (power law: c = 1e-3 * (b/64)^-0.5)
    c1024 = 1e-3 * (1024 / 64) ** -0.5
    expected = 3.0 + 25000 * c1024 * 21 + 21 * 25000 * 1e-4
    torch_1024 = [
        t
        for t in full
        if t.config["arm"] == "torch-eager"
        and t.config["batch_size"] == 1024
        and t.config["epochs"] == 21
        and t.config["encoding"]["maxlen"] == 500
    ]
    assert est.by_group["torch-eager"] > 0
    from fwbench.estimate import _imdb_predictor

    predict, _, _ = _imdb_predictor(store.measurements("imdb"))
    assert predict(torch_1024[0].config) == pytest.approx(expected, rel=1e-9)
    # a shorter sequence costs proportionally less (seq_len scaling of the LSTM's work)
    short = {**torch_1024[0].config, "encoding": {**torch_1024[0].config["encoding"], "maxlen": 50}}
    assert predict(short) == pytest.approx(3.0 + (expected - 3.0) / 10, rel=1e-9)
    assert est.makespan_s >= est.total_s / 4 and est.makespan_s < est.total_s / 4 * 1.1
    assert est.makespan_s > estimate_full_runtime(store, "imdb", 8).makespan_s
    with pytest.raises(Exception, match="no stored imdb trials for arm 'jax'"):
        predict({**torch_1024[0].config, "arm": "jax"})
    off = {**torch_1024[0].config, "onednn": False}
    assert predict(off) == pytest.approx(3.0 + 25000 * c1024 * 10 * 21 + 21 * 25000 * 1e-4, rel=1e-9)
    # with two stored batch sizes a line through them is not trusted: the nearest stored batch size's cost
    two = _imdb_predictor(store.measurements("imdb").query("`config.batch_size` != 128"))[0]
    assert two(torch_1024[0].config) == pytest.approx(3.0 + 25000 * 1e-3 * 4**-0.5 * 21 + 21 * 25000 * 1e-4)


def test_an_estimate_names_the_stored_trials_it_set_aside():
    """On its CPU model an estimate extrapolates from the profile's fp mode only (where any trial ran in it) and never
    from a trial a rerun of its config replaced; its text names both counts (the committed paper store has each)."""
    store = ResultsStore.open_read(REPO / "results" / "paper" / "paper-run.sqlite")
    intel = estimate_full_runtime(store, "imdb", 1, "paper", cpu="GenuineIntel/6/207")
    flushed = intel.set_aside["fp_mode"]
    assert flushed > 0 and intel.fp_mode == "default"
    line = intel.lines()[0]
    assert f"stored trials (with the libraries' default fp mode: {flushed} with subnormals flushed left out)" in line
    dp = estimate_full_runtime(store, "dataparallel", 1, "paper")
    replaced, line = dp.set_aside["superseded"], dp.lines()[0]
    assert replaced > 0 and dp.measured_trials == len(plan("dataparallel", "paper"))
    assert (
        f"{dp.measured_trials} stored trials (not the {replaced} from an earlier trial-code version that a rerun "
        "replaced)" in line
    )


def test_makespan_schedules_longest_first():
    assert makespan([5, 4, 3, 3, 3], 2) == 10  # LPT: 5 | 4 -> 4+3 -> 5+3 -> 7+3 (optimum 9; LPT <= 4/3 of it)
    assert makespan([1.0] * 8, 4) == 2.0
    assert makespan([], 3) == 0.0


def _sweep_killing_a_worker(cluster, overrides: dict, pick, delay_s: float):
    """Run the self-test sweep on the cluster (2 trials per host) while a thread SIGKILLs the worker process
    ``pick(pids by worker address)`` after ``delay_s``; returns the sweep's summary once the kill has happened."""
    import signal
    import threading

    from distributed import Client

    with Client(cluster.scheduler_address, set_as_default=False) as probe:
        probe.wait_for_workers(2, timeout=60)
        pids = probe.run(os.getpid)
    killed = threading.Event()

    def kill_later():
        time.sleep(delay_s)
        os.kill(pick(pids), signal.SIGKILL)
        killed.set()

    killer = threading.Thread(target=kill_later)
    killer.start()
    try:
        summary = run_sweep(
            "selftest", "smoke", overrides, progress="none", scheduler=cluster.scheduler_address, trials_per_host=2
        )
    finally:
        killer.join()
    assert killed.is_set()
    return summary


def test_lost_worker_trial_is_resubmitted(cluster, store_env):
    """Kill a worker process while it runs a trial: the trial is rerun elsewhere, nothing lost or doubled.
    (Last in the module: the nanny restarts the worker under a new address.)"""
    overrides = {"n_trials": 4, "sleep_s": 4.0}
    victim = []

    def first_worker(pids):  # both workers are inside their first trial after 3 s (4 s sleeps)
        victim.append(sorted(pids.items())[0])
        return victim[0][1]

    summary = _sweep_killing_a_worker(cluster, overrides, first_worker, 3.0)
    assert summary.ok and summary.done == 4
    trials = ResultsStore(store_env).trials("selftest")
    assert sorted(trials.trial_id) == sorted(t.trial_id for t in plan("selftest", "smoke", overrides))
    assert (trials.status == "done").all()
    # the killed worker finished nothing: its trial was rerun on another worker
    assert victim[0][0] not in set(trials["provenance.dask_worker"])
    write_evidence("cluster_lost_worker", {"trials": 4, "stored": int(len(trials)), "workers_killed": 1, "lost": 0})


def _make_certs(folder: Path) -> tuple[Path, Path, Path]:
    """A throwaway CA and one certificate for 127.0.0.1 (used by scheduler, workers and client alike)."""
    ca_key, ca, key, csr, cert = (folder / n for n in ("ca-key.pem", "ca.pem", "key.pem", "req.csr", "cert.pem"))
    ext = folder / "ext.cnf"
    ext.write_text("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n")

    def ssl(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)

    ssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=fwbench-test-ca",
        "-keyout",
        str(ca_key),
        "-out",
        str(ca),
    )
    ssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(csr))
    ssl(
        "x509",
        "-req",
        "-in",
        str(csr),
        "-CA",
        str(ca),
        "-CAkey",
        str(ca_key),
        "-CAcreateserial",
        "-days",
        "1",
        "-extfile",
        str(ext),
        "-out",
        str(cert),
    )
    return ca, cert, key


def test_tls_scheduler_with_certificates_from_env(tmp_path, store_env, monkeypatch):
    distributed = pytest.importorskip("distributed")
    if shutil.which("openssl") is None:
        pytest.skip("openssl not installed")
    from distributed.security import Security

    from fwbench.cluster_connect import make_security

    ca, cert, key = _make_certs(tmp_path)
    server = Security(
        tls_ca_file=str(ca),
        tls_scheduler_cert=str(cert),
        tls_scheduler_key=str(key),
        tls_worker_cert=str(cert),
        tls_worker_key=str(key),
        tls_client_cert=str(cert),
        tls_client_key=str(key),
        require_encryption=True,
    )
    with distributed.LocalCluster(
        host="127.0.0.1",
        protocol="tls://",
        security=server,
        processes=True,
        n_workers=1,
        threads_per_worker=1,
        dashboard_address="127.0.0.1:0",
    ) as lc:
        assert lc.scheduler_address.startswith("tls://127.0.0.1:")
        with pytest.raises(Exception, match="is a TLS address; pass --tls-ca-file"):
            run_sweep("selftest", "smoke", {"n_trials": 2}, progress="none", scheduler=lc.scheduler_address)
        for name, path in (("FWBENCH_TLS_CA_FILE", ca), ("FWBENCH_TLS_CERT", cert), ("FWBENCH_TLS_KEY", key)):
            monkeypatch.setenv(name, str(path))
        summary = run_sweep(
            "selftest",
            "smoke",
            {"n_trials": 2},
            progress="none",
            scheduler=lc.scheduler_address,
            security=make_security(),
        )
    assert summary.ok and summary.done == 2
    trials = ResultsStore(store_env).trials("selftest")
    assert (trials["provenance.scheduler"].str.startswith("tls://")).all()


def test_trial_needing_two_slots_reserves_both_and_survives_a_lost_worker(cluster, store_env):
    """A trial that starts 2 processes holds 2 slots of one host: with trials_per_host=2 two such trials still
    never overlap on the 2-slot cluster. Killing the worker that runs one requeues it; nothing lost or doubled.
    (After the lost-worker test above: the nanny has restarted that worker.)"""
    overrides = {"n_trials": 3, "sleep_s": 3.0, "slots": 2}
    # inside the first trial (3 s sleeps) after 2 s; whichever worker runs it, one of the two dies
    summary = _sweep_killing_a_worker(cluster, overrides, lambda pids: sorted(pids.values())[0], 2.0)
    assert summary.ok and summary.done == 3
    trials = ResultsStore(store_env).trials("selftest")
    assert sorted(trials.trial_id) == sorted(t.trial_id for t in plan("selftest", "smoke", overrides))
    peak = _overlaps(trials.to_dict("records"))
    assert peak == 1  # two 2-slot trials never ran at once on the 2-slot host
    assert set(trials["provenance.reserved_slots"]) == {2}


def test_trial_needing_more_slots_than_any_host_fails_with_the_reason(cluster, store_env, monkeypatch):
    import fwbench.cluster as cluster_mod

    monkeypatch.setattr(cluster_mod, "WORKER_WAIT_S", 1.0)
    summary = run_sweep(
        "selftest",
        "smoke",
        {"n_trials": 1, "sleep_s": 0.0, "slots": 3},
        progress="none",
        scheduler=cluster.scheduler_address,
    )
    assert len(summary.failed) == 1
    trials = ResultsStore(store_env).trials("selftest")
    assert "needs 3 slots on one host" in trials.error.iloc[0]
    assert "largest host has offered 2" in trials.error.iloc[0]


def test_a_worker_without_the_data_stops_the_sweep_before_any_trial(tmp_path, store_env):
    """The client has the IMDB data; the worker was started with a FWBENCH_DATA_DIR that does not exist (as a
    worker started without the client's variable looks elsewhere). The study's own check runs on the worker too:
    one line naming the host and the reason, no trial sent, no store written (before, each trial was stored as
    failed seconds in)."""
    missing = tmp_path / "no-data-here"
    with loopback_cluster(1, env={"FWBENCH_DATA_DIR": str(missing)}) as lc:
        with pytest.raises(FwbenchError) as caught:
            run_sweep("imdb", "smoke", {"arms": ["torch-eager"]}, progress="none", scheduler=lc.scheduler_address)
    message = str(caught.value)
    assert "imdb's check failed where its trials would run (on 127.0.0.1: DataUnavailable:" in message
    assert f"FWBENCH_DATA_DIR={missing} does not exist" in message and "no trial was sent" in message
    assert not store_env.exists()


def test_the_worker_listing_is_asked_of_the_scheduler_not_the_clients_cache(cluster, monkeypatch):
    """The client's cached listing is overwritten by its periodic refresh with no workers (it asks for 0): read
    through ``scheduler_info()``, a running trial's worker could look gone, and the trial was sent again while its
    first copy ran on. ``_slots`` asks the scheduler."""
    distributed = pytest.importorskip("distributed")
    from fwbench.cluster import _slots

    with distributed.Client(cluster.scheduler_address) as client:
        monkeypatch.setattr(client, "scheduler_info", lambda *args, **kwargs: {"workers": {}})  # the refresh's cache
        hosts = _slots(client)
    assert {worker for workers in hosts.values() for worker in workers} == set(cluster.scheduler_info["workers"])
