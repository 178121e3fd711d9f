"""Claim C2's CPU analogue (issue 26): data-parallel groups of real PyTorch and MXNet processes.

What could fail here: a group that does not start or stop (a rank left running, a hung collective), replicas that
drift apart, the two frameworks training different things from the same weights and batches, a killed rank that
hangs the trial or leaves processes behind, a trial that oversubscribes the host, and the ledger's C2 judging a
CPU number as if it were the 8-GPU claim.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import psutil
import pytest

from fwbench.analysis import Results
from fwbench.dataparallel import initial_weights, parameter_count, parameter_shapes, rank_batch
from fwbench.dataparallel.group import GroupFailed, layout, run_group
from fwbench.errors import FwbenchError
from fwbench.store import ResultsStore
from fwbench.studies import get_study
from fwbench.studies.dataparallel_trial import rank_divergence, run_trial

STUDY = get_study("dataparallel")
TINY = {
    "threads": 1,
    "hidden": 64,
    "per_rank_batch": 4,
    "steps": 3,
    "warmup_steps": 1,
    "lr": 0.05,
    "seed": 0,
    "sync_sizes": [256],
    "sync_warmup": 1,
    "sync_repeats": 2,
}


def _spec(arm: str, **changes) -> tuple[str, dict]:
    a = STUDY.arm(arm)
    return a.variant, {**TINY, "backend": a.backend, **changes}


def _ranks_alive() -> list[psutil.Process]:
    out = []
    for child in psutil.Process().children(recursive=True):
        try:
            if "fwbench.dataparallel.rank" in " ".join(child.cmdline()):
                out.append(child)
        except psutil.Error:
            pass
    return out


# -- what both frameworks share ---------------------------------------------------------------------------
def test_model_shapes_and_data_are_shared_and_sharded():
    convs = (3 * 32 * 9 + 32) + (32 * 64 * 9 + 64) + (64 * 128 * 9 + 128)
    assert parameter_count(1024) == convs + (2048 * 1024 + 1024) + (1024 * 10 + 10)  # 2.2M: an 8.8 MB gradient
    weights = initial_weights(64, 0)
    assert [w.shape for w in weights] == [s for _, s in parameter_shapes(64)]
    assert all(np.array_equal(a, b) for a, b in zip(weights, initial_weights(64, 0), strict=True))
    x0, y0 = rank_batch(0, 5, 4, 0, 2)
    x1, _ = rank_batch(0, 5, 4, 1, 2)
    assert x0.shape == (4, 3, 32, 32) and y0.shape == (4,)
    assert not np.array_equal(x0, x1)  # two shards of one global batch


def test_layouts_name_every_process_and_refuse_bad_input():
    assert [m.name for m in layout("ddp", 2, 1234)] == ["worker 0", "worker 1"]
    ps = layout("dist-sync", 2, 1234)
    assert [m.name for m in ps] == ["scheduler", "server", "worker 0", "worker 1"]
    assert {m.env["DMLC_NUM_WORKER"] for m in ps} == {"2"}
    with pytest.raises(FwbenchError, match="no data-parallel layout"):
        layout("ring", 2, 1234)
    with pytest.raises(FwbenchError, match="at least 1"):
        layout("ddp", 0, 1234)


def test_rank_divergence_sees_one_replica_drift():
    same = [{"checksums": [(1.0, 2.0), (1.5, 2.5)]}, {"checksums": [(1.0, 2.0), (1.5, 2.5)]}]
    assert rank_divergence(same) == 0.0
    drifted = [same[0], {"checksums": [(1.0, 2.0), (1.5, 2.5 * (1 + 1e-6))]}]
    assert rank_divergence(drifted) == pytest.approx(1e-6, rel=1e-3)


def test_a_trial_refuses_more_cores_than_the_host_gives(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    config = {**TINY, "arm": "torch-ddp", "world_size": 4, "repeat": 0, "group_timeout_s": 60}
    with pytest.raises(RuntimeError, match="needs 4 cores; this host lets the trial use 2"):
        run_trial(config)


# -- real groups --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def groups():
    """Both mechanisms at world size 2, the same weights and batches."""
    out = {}
    for arm in STUDY.arm_names:
        variant, spec = _spec(arm)
        out[arm] = run_group(variant, spec, 2, 180)
    return out


def test_replicas_stay_equal_on_every_rank(groups):
    for arm, group in groups.items():
        workers = group["workers"]
        assert sorted(w["rank"] for w in workers) == [0, 1], arm
        assert rank_divergence(workers) <= 1e-12, arm
        assert len(workers[0]["checksums"]) == TINY["warmup_steps"] + TINY["steps"]
        assert all(w["frameworks_imported"] == [STUDY.arm(arm).framework] for w in workers)


def test_both_frameworks_take_the_same_steps(groups):
    """The same initial weights and batches, SGD on the mean loss of the global batch: the two mechanisms train
    the same model, so their per-step losses agree (a twin check for the data-parallel backends)."""
    torch_arm, mxnet_arm = STUDY.reference_arm("torch"), STUDY.reference_arm("mxnet")
    for arm in set(STUDY.arm_names) - {torch_arm}:  # MXNet's default and its update-on-workers setting
        assert STUDY.arm(arm).framework == "mxnet"
        for rank in (0, 1):
            pt = next(w for w in groups[torch_arm]["workers"] if w["rank"] == rank)["losses"]
            mx = next(w for w in groups[arm]["workers"] if w["rank"] == rank)["losses"]
            np.testing.assert_allclose(pt, mx, rtol=1e-4)
        pt_sum = groups[torch_arm]["workers"][0]["checksums"][-1][0]
        assert pt_sum == pytest.approx(groups[arm]["workers"][0]["checksums"][-1][0], rel=1e-4)
    assert mxnet_arm in groups


def test_the_parameter_server_group_has_its_helpers(groups):
    cpu = groups[STUDY.reference_arm("mxnet")]["cpu_s"]
    assert set(cpu) == {"scheduler", "server", "worker 0", "worker 1"}
    assert set(groups[STUDY.reference_arm("torch")]["cpu_s"]) == {"worker 0", "worker 1"}
    assert all(v > 0 for v in cpu.values())


@pytest.mark.parametrize("arm", STUDY.arm_names)
def test_killing_a_rank_fails_the_group_cleanly(arm):
    """SIGKILL one worker mid-training: the launcher stops every other process and names what happened; nothing
    of the group is left running (the other rank would otherwise wait in its collective until the timeout)."""
    variant, spec = _spec(arm, steps=100000)
    failure: list[BaseException] = []

    def launch():
        try:
            run_group(variant, spec, 2, 300)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            failure.append(exc)

    thread = threading.Thread(target=launch)
    t0 = time.monotonic()
    thread.start()
    victim = None
    while victim is None and time.monotonic() - t0 < 60:
        workers = [p for p in _ranks_alive() if "worker1" in " ".join(p.cmdline())]
        victim = workers[0] if workers else None
        time.sleep(0.2)
    assert victim is not None, "worker 1 never started"
    time.sleep(8)  # well inside training (imports and the sync sweep take a few seconds)
    victim.send_signal(signal.SIGKILL)
    thread.join(timeout=60)
    assert not thread.is_alive(), "the launcher hung after a rank was killed"
    assert failure and isinstance(failure[0], GroupFailed)
    message = str(failure[0])
    assert "killed by signal SIGKILL" in message and "every other process was stopped" in message
    assert time.monotonic() - t0 < 120
    assert _ranks_alive() == []


def test_a_group_that_outlives_its_timeout_is_stopped():
    variant, spec = _spec("torch-ddp", steps=100000)
    with pytest.raises(GroupFailed, match="timed out after 15 s"):
        run_group(variant, spec, 2, 15)
    assert _ranks_alive() == []


# -- the study through the runner, and C2 in the ledger --------------------------------------------------------
@pytest.fixture(scope="module")
def smoke_store(smoke_notebooks):
    """The smoke sweep notebook 04 ran into the session's shared smoke store (conftest), every trial done."""
    store = ResultsStore.open_read(smoke_notebooks.store)
    trials = store.trials("dataparallel")
    assert len(trials) and set(trials.status) == {"done"}, trials[["trial_id", "status", "error"]]
    return store


def test_smoke_runs_both_arms_at_both_world_sizes(smoke_store):
    from fwbench.analysis import dataparallel

    frame = dataparallel.per_trial(Results(smoke_store, "smoke"))
    assert len(frame) == 2 * 2 * len(STUDY.arm_names)  # both world sizes, 2 repeats
    assert set(zip(frame.arm, frame.world_size, strict=True)) == {(a, w) for a in STUDY.arm_names for w in (1, 2)}
    assert (frame.samples_per_s > 0).all() and (frame.median_step_s > 0).all()
    # the thread setting held: one worker of one thread kept at most about one CPU busy
    assert (frame.cpus_busy_max < 1.3).all()
    trials = smoke_store.trials("dataparallel")
    for rank_frameworks, arm in zip(trials["provenance.rank_frameworks"], trials["config.arm"], strict=True):
        assert all(f == [STUDY.arm(arm).framework] for f in rank_frameworks)
    assert (trials["provenance.frameworks_imported"].map(len) == 0).all()  # the trial process loads none
    torch_steps, mxnet_steps = dataparallel.reference_sides(frame[frame.world_size == 2], "median_step_s")
    assert len(torch_steps) == len(mxnet_steps) == 2  # one value per trial (2 repeats): what C2's CI is over


def test_trials_of_another_cpu_model_are_never_pooled(tmp_path):
    """A comparison stays within one CPU model: the data-parallel rows are the model's that ran most of them."""
    from fwbench.analysis import dataparallel
    from fwbench.planning import plan

    store, planned = ResultsStore(tmp_path / "s.sqlite"), plan("dataparallel", "smoke")
    for i, t in enumerate(planned):
        cpu = "GenuineIntel/6/207/1" if i == 0 else "AuthenticAMD/25/17/1"
        rows = [(s, "step_s", 0.1) for s in range(3)] + [(0, "loss", 1.0), (0, "cpus_busy_max", 1.0)]
        store.record(trial_id=t.trial_id, study="dataparallel", status="done", config=t.config, summary={},
                     provenance={"host": "planted", "cpu_id": cpu}, measurements=rows, profile="smoke")  # fmt: skip
    frame = dataparallel.per_trial(Results(store, "smoke"))
    assert set(frame.cpu) == {"AMD EPYC 25/17"} and len(frame) == len(planned) - 1


def test_c2_is_a_labelled_analogue_with_cis(smoke_store):
    from fwbench.ledger import data as ledger_data
    from fwbench.ledger.judge import judge
    from fwbench.ledger.rules import NOT_TESTABLE
    from fwbench.ledger.sources.overview import CLAIMS

    claim = next(c for c in CLAIMS if c.id == "C2")
    j = judge(claim, ledger_data.load(Results(smoke_store, "smoke")))
    assert j["verdict"] == NOT_TESTABLE and j["analogue"]
    assert "labelled analogue" in j["reason"]
    labels = [p.label for p in j["parts"]]
    assert labels[0] == "1 worker x 1 thread" and "2 workers x 1 thread" in labels
    assert all(not np.isnan(p.ci_low) for p in j["parts"])


def test_the_tables_cells_give_the_ratios_the_pages_quote():
    """The arm table's samples/s and step are geometric means over trials, the estimator of the weak scaling and of
    C2's ratios: a reader's ratio of two cells is the quoted one (medians would not give it)."""
    import pandas as pd

    from fwbench.analysis import dataparallel
    from fwbench.stats import trial_ratio_ci

    torch_arm, mxnet_arm = STUDY.reference_arm("torch"), STUDY.reference_arm("mxnet")
    steps = {(torch_arm, 1): [0.07, 0.07, 0.09], (torch_arm, 2): [0.10, 0.10, 0.16], (mxnet_arm, 1): [0.08, 0.09, 0.1]}
    cpus = {"cpus_busy_max": 1.0, "group_cpu_s": 1.0, "final_loss": 1.0}
    frame = pd.DataFrame(
        [
            {"trial_id": f"{arm}-{world}-{i}", "arm": arm, "world_size": world, "median_step_s": s, **cpus}
            for (arm, world), values in steps.items()
            for i, s in enumerate(values)
        ]
    ).assign(samples_per_s=lambda f: f.world_size * 32 / f.median_step_s)
    table = dataparallel.arm_table(frame).set_index(["arm", "world_size"])
    (scaling,) = dataparallel.scaling_rows(frame[frame.arm == torch_arm]).itertuples()
    cells = table.samples_per_s
    assert scaling.efficiency == pytest.approx(cells[torch_arm, 2] / (2 * cells[torch_arm, 1]))
    medians = frame.groupby(["arm", "world_size"]).samples_per_s.median()
    assert scaling.efficiency != pytest.approx(medians[torch_arm, 2] / (2 * medians[torch_arm, 1]))
    step = trial_ratio_ci(*dataparallel.reference_sides(frame[frame.world_size == 1], "median_step_s"))
    assert step["ratio"] == pytest.approx(table.median_step_s[torch_arm, 1] / table.median_step_s[mxnet_arm, 1])
