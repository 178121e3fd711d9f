"""Data-loader workers treated alike: ``worker_lifetime`` driven both ways in both frameworks (worker pids per
epoch, the shared sample order), and CPU accounting that sees every worker, live or reaped (``fwbench.sampling``).

The framework probes run in subprocesses, one framework each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from fwbench.sampling import ProcessTreeSampler
from fwbench.studies import get_study

STUDY = get_study("imdb")
ARMS = (STUDY.reference_arm("torch"), STUDY.reference_arm("mxnet"))
BURN_S = 0.02  # CPU seconds each sample costs a worker in the probe (16 samples per epoch: 0.32 s)
N = 16

# -- framework-free: the sampler itself ------------------------------------------------------------------------
BUSY = """
import sys, time
def burn(s):
    t = time.process_time()
    while time.process_time() - t < s:
        pass
burn(float(sys.argv[1]))
print("half", flush=True)
sys.stdin.readline()
burn(float(sys.argv[2]))
"""


def _child(first: float, second: float) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", BUSY, str(first), str(second)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "half"
    return proc


def _wait_seen(sampler: ProcessTreeSampler, proc: subprocess.Popen) -> None:
    deadline = time.time() + 10
    while not any(pid == proc.pid for pid, _ in sampler.snapshot().procs) and time.time() < deadline:
        time.sleep(0.02)


def test_a_live_worker_is_counted_and_the_reaped_counter_alone_misses_it():
    with ProcessTreeSampler(interval=0.05) as sampler:
        a = sampler.snapshot()
        proc = _child(0.5, 0.0)  # burns 0.5 s and stays alive (not reaped) until told
        b = sampler.snapshot()
        proc.stdin.write("go\n")
        proc.stdin.flush()
        proc.wait()
    assert 0.4 < sampler.worker_cpu_seconds(a, b) < 0.8
    assert b.reaped - a.reaped < 0.05  # what proc_cpu_pct counted before: nothing of a live worker
    assert sampler.cpu_seconds(a, b) >= sampler.worker_cpu_seconds(a, b)
    assert sampler.peak_rss_bytes > 0


def test_a_reaped_worker_is_counted_once_and_only_inside_the_window():
    with ProcessTreeSampler(interval=0.05) as sampler:
        proc = _child(0.5, 0.5)  # 0.5 s before the window ...
        _wait_seen(sampler, proc)
        a = sampler.snapshot()
        proc.stdin.write("go\n")
        proc.stdin.flush()
        time.sleep(0.3)  # ... seen alive by the sampler while it burns the second half ...
        proc.wait()  # ... then reaped inside the window: the reaped counter holds its whole life (1.0 s)
        b = sampler.snapshot()
    assert b.reaped - a.reaped > 0.9
    assert 0.4 < sampler.worker_cpu_seconds(a, b) < 0.7  # the window's half, not 1.0 (life) or 1.5 (twice)


def test_a_window_without_workers_counts_only_the_process():
    with ProcessTreeSampler(interval=0.05) as sampler:
        a = sampler.snapshot()
        t = time.process_time()
        while time.process_time() - t < 0.2:
            pass
        b = sampler.snapshot()
    assert sampler.worker_cpu_seconds(a, b) == pytest.approx(0.0, abs=0.02)
    assert 0.15 < sampler.cpu_seconds(a, b) < 0.5


# -- both frameworks: worker lifetime and CPU of busy workers ----------------------------------------------------
PROBE = """
import json, sys, time
import numpy as np
import psutil
from fwbench.sampling import ProcessTreeSampler
from fwbench.studies import get_study

be = get_study("imdb").arm(sys.argv[1]).load_backend()
burn_s, n = float(sys.argv[2]), int(sys.argv[3])
if be.FRAMEWORK == "torch":
    from torch.utils.data import TensorDataset as Dataset
    to_numpy = lambda t: t.numpy()
else:
    from mxnet.gluon.data import ArrayDataset as Dataset
    to_numpy = lambda t: t.asnumpy()
plain = Dataset.__getitem__

def busy(self, idx):  # every sample costs a worker burn_s of CPU (patched before the workers are forked)
    t = time.process_time()
    while time.process_time() - t < burn_s:
        pass
    return plain(self, idx)

Dataset.__getitem__ = busy
me = psutil.Process()
live = lambda: sorted(c.pid for c in me.children() if c.status() != psutil.STATUS_ZOMBIE)
x = np.zeros((n, 5), dtype=np.int64)
x[:, 0] = np.arange(n)  # the first token names the sample
found = {}
for lifetime in ("per-epoch", "persistent"):  # per-epoch first: its workers are gone before the next loader
    sampler = ProcessTreeSampler(interval=0.05).start()
    loader = be.make_loader(x, np.arange(n) % 2, batch_size=4, num_workers=1, shuffle=True, seed=3,
                            persistent=lifetime == "persistent")
    out = found[lifetime] = {"before": live(), "epochs": []}
    for epoch in range(3):
        pids, order = set(), []
        a = sampler.snapshot()
        for xb, yb in loader:
            pids |= set(live())
            order += to_numpy(xb)[:, 0].astype(int).tolist()
        b = sampler.snapshot()
        out["epochs"].append({"during": sorted(pids), "after": live(), "order": order,
                              "worker_cpu_s": sampler.worker_cpu_seconds(a, b), "reaped_cpu_s": b.reaped - a.reaped})
    sampler.stop()
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def probes():
    """One process per framework (its import is most of the cost), driving both lifetimes in turn."""
    out = {}
    for arm in ARMS:
        proc = subprocess.run(
            [sys.executable, "-c", PROBE, arm, str(BURN_S), str(N)],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "OMP_NUM_THREADS": "1"},
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        for lifetime, found in json.loads(proc.stdout.strip().splitlines()[-1]).items():
            out[arm, lifetime] = found
    return out


@pytest.mark.slow
@pytest.mark.parametrize("arm", ARMS)
def test_per_epoch_workers_start_and_stop_inside_every_epoch(probes, arm):
    p = probes[arm, "per-epoch"]
    assert p["before"] == []  # nothing started before the timed epochs
    during = [set(e["during"]) for e in p["epochs"]]
    assert all(len(d) == 1 for d in during)  # one worker per epoch ...
    assert len(set.union(*during)) == 3  # ... a new one every epoch
    assert all(e["after"] == [] for e in p["epochs"])  # joined before the epoch ends


@pytest.mark.slow
@pytest.mark.parametrize("arm", ARMS)
def test_persistent_workers_start_once_before_the_epochs(probes, arm):
    p = probes[arm, "persistent"]
    assert len(p["before"]) == 1  # started by make_loader, outside the timed epochs
    assert all(e["during"] == p["before"] == e["after"] for e in p["epochs"])


@pytest.mark.slow
def test_both_lifetimes_and_both_frameworks_see_one_sample_order(probes):
    orders = {key: [e["order"] for e in p["epochs"]] for key, p in probes.items()}
    first = next(iter(orders.values()))
    assert all(o == first for o in orders.values()), orders
    assert sorted(first[0]) == list(range(N)) and first[0] != first[1]


@pytest.mark.slow
@pytest.mark.parametrize("lifetime", ["per-epoch", "persistent"])
@pytest.mark.parametrize("arm", ARMS)
def test_busy_workers_cpu_is_counted_live_or_reaped(probes, arm, lifetime):
    work = N * BURN_S
    for e in probes[arm, lifetime]["epochs"]:
        assert 0.8 * work < e["worker_cpu_s"] < 1.6 * work + 0.3, e  # seen, and not twice
        if lifetime == "persistent":  # the workers outlive the epoch: the reaped counter alone sees nothing
            assert e["reaped_cpu_s"] < 0.1 * work, e
        else:
            assert e["reaped_cpu_s"] > 0.8 * work, e
