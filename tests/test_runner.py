"""The IMDB sweep through the real runner: isolation, provenance, resume."""
from __future__ import annotations

import pytest

from fwbench.runner import plan, run_sweep
from fwbench.store import ResultsStore

OVERRIDES = {"arms": ["torch-eager", "mxnet-imperative"], "extra_arms": [], "scaling": False, "workers": [0], "epochs": 2}


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    store = ResultsStore(tmp_path_factory.mktemp("runner") / "r.sqlite")
    first = run_sweep("imdb", "smoke", OVERRIDES, store=store, progress="none")
    return store, first


@pytest.mark.slow
def test_every_trial_lands_once_with_epochs(swept):
    store, first = swept
    assert first.ok and first.done == 2 and first.skipped == 0
    m = store.measurements("imdb")
    epochs = m[m.step >= 0]
    assert epochs.groupby("trial_id").step.nunique().tolist() == [2, 2]
    assert set(m[m.step == -1].metric) == {"prepare_time_s"}  # whole-trial values sit at step -1
    assert set(m.metric) >= {"train_time_s", "train_loss", "test_loss", "test_acc", "samples_per_s", "lr"}


@pytest.mark.slow
def test_provenance_names_one_framework_threads_and_data(swept):
    store, _ = swept
    t = store.trials("imdb").set_index("config.arm")
    for arm, framework in (("torch-eager", "torch"), ("mxnet-imperative", "mxnet")):
        row = t.loc[arm]
        assert row["provenance.framework"] == framework
        assert row["provenance.frameworks_imported"] == [framework]
        assert row["provenance.thread_env.OMP_NUM_THREADS"] == "2"
        assert row["provenance.dataset_checksum"].startswith("3c7d06d2")
        assert row["provenance.cpu_model"] and row["provenance.git_sha"] is not None
    assert t.loc["torch-eager", "provenance.torch_num_threads"] == 2


@pytest.mark.slow
def test_rerun_skips_finished_trials(swept):
    store, _ = swept
    again = run_sweep("imdb", "smoke", OVERRIDES, store=store, progress="none")
    assert again.done == 0 and again.skipped == 2 and again.ok


def test_profiles_have_the_documented_grid():
    smoke = plan("imdb", "smoke")
    assert [t.config["part"] for t in smoke].count("main") == 6 and len(smoke) == 9
    full = plan("imdb", "full")
    assert {t.config["arm"] for t in full} == {"torch-eager", "torch-sparse", "mxnet-imperative",
                                                "mxnet-hybrid-partial", "torch-compile"}
    settings = {(t.config["batch_size"], t.config["num_workers"]) for t in full if t.config["part"] == "main"}
    assert {b for b, _ in settings} == {64, 128, 256, 512, 1024} and {w for _, w in settings} == {0, 1, 2, 4}
    assert {t.config["n_train"] for t in full} == {25000} and {t.config["epochs"] for t in full} >= {21}
    no_schedule = [t for t in full if t.config["lr_schedule"] is None]
    assert no_schedule and all(t.config["batch_size"] == 256 for t in no_schedule)
    scaling = [t for t in full if t.config["part"] == "scaling"]
    assert {t.config["encoding"]["maxlen"] for t in scaling} == {100, 200, 300, 400, 500}
    assert {t.config["threads"] for t in scaling} == {1, 2}


def test_extra_arms_run_at_one_setting_only():
    extra = [t for t in plan("imdb", "quick") if t.config["part"] == "extra"]
    assert {t.config["arm"] for t in extra} == {"mxnet-hybrid-partial", "torch-compile"}
    assert {(t.config["batch_size"], t.config["num_workers"]) for t in extra} == {(256, 0)}
