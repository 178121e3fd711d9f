"""The IMDB sweep through the real runner: isolation, provenance, resume."""

from __future__ import annotations

from pathlib import Path

import pytest

from fwbench.planning import plan
from fwbench.runner import run_sweep
from fwbench.store import ResultsStore

OVERRIDES = {
    "arms": ["torch-eager", "mxnet-imperative"],
    "extra_arms": [],
    "scaling": False,
    "workers": [0],
    "epochs": 2,
}


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
    assert set(m[m.step == -1].metric) == {"prepare_time_s", "peak_rss_mb"}  # whole-trial values sit at step -1
    assert set(m.metric) >= {
        "train_time_s",
        "train_loss",
        "test_loss",
        "test_acc",
        "samples_per_s",
        "lr",
        "proc_cpu_pct",
        "worker_cpu_pct",
    }
    assert (m[m.metric == "peak_rss_mb"].value > 100).all()  # a framework process is hundreds of MB
    t = store.trials("imdb")
    assert set(t["config.worker_lifetime"]) == {"per-epoch"} and set(t["config.onednn"]) == {True}
    assert t["summary.onednn_active"].astype(bool).all() and (t["summary.peak_rss_mb"] > 100).all()


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
    main = [t.config for t in smoke if t.config["part"] == "main"]
    # 3 arms x (0 workers + 1 worker per-epoch + 1 worker persistent); 3 extra arms (JAX the third); 2 scaling trials
    assert len(main) == 9 and len(smoke) == 14
    assert sorted((c["num_workers"], c["worker_lifetime"]) for c in main if c["arm"] == "torch-eager") == [
        (0, "per-epoch"),
        (1, "per-epoch"),
        (1, "persistent"),
    ]
    assert {t.config["arm"] for t in smoke if t.config["part"] == "extra"} == {
        "mxnet-hybrid-partial",
        "mxnet-hybrid-full",
        "jax-jit",
    }
    full = plan("imdb", "full")
    assert {t.config["arm"] for t in full} == {
        "torch-eager",
        "torch-sparse",
        "mxnet-imperative",
        "mxnet-hybrid-partial",
        "mxnet-hybrid-full",
        "torch-compile",
        "jax-jit",
    }
    settings = {(t.config["batch_size"], t.config["num_workers"]) for t in full if t.config["part"] == "main"}
    assert {b for b, _ in settings} == {64, 128, 256, 512, 1024} and {w for _, w in settings} == {0, 1, 2, 4}
    lifetimes = {(t.config["num_workers"] > 0, t.config["worker_lifetime"]) for t in full if t.config["part"] == "main"}
    assert lifetimes == {(False, "per-epoch"), (True, "per-epoch"), (True, "persistent")}
    assert {t.config["n_train"] for t in full} == {25000} and {t.config["epochs"] for t in full} >= {21}
    no_schedule = [t for t in full if t.config["lr_schedule"] is None]
    assert no_schedule and all(t.config["batch_size"] == 256 for t in no_schedule)
    scaling = [t for t in full if t.config["part"] == "scaling"]
    assert {t.config["encoding"]["maxlen"] for t in scaling} == {100, 200, 300, 400, 500}
    assert {t.config["threads"] for t in scaling} == {1, 2}


def test_every_config_records_worker_lifetime_and_onednn():
    for profile in ("smoke", "quick", "full"):
        for t in plan("imdb", profile):
            assert t.config["worker_lifetime"] in ("per-epoch", "persistent") and t.config["onednn"] in (True, False)
            if t.config["num_workers"] == 0:  # no workers: one trial, recorded with the default
                assert t.config["worker_lifetime"] == "per-epoch"
    both = plan("imdb", "smoke", {"workers": [0, 2], "worker_lifetime": ["persistent", "per-epoch"]})
    one = plan("imdb", "smoke", {"workers": [0, 2], "worker_lifetime": ["per-epoch"]})
    assert len(both) == len(one) + 3  # 3 core arms at 2 workers; 0 workers is one trial either way
    with pytest.raises(Exception, match="worker_lifetime"):
        plan("imdb", "smoke", {"worker_lifetime": ["forever"]})


def test_quick_times_the_reference_arms_with_onednn_on_and_off():
    from fwbench.studies.imdb_profiles import PROFILES

    quick = [t.config for t in plan("imdb", "quick")]
    off = [c for c in quick if not c["onednn"]]
    blocks, batch = PROFILES["quick"]["repeats"], PROFILES["quick"]["onednn_part"]["batch_size"]
    assert {c["arm"] for c in off} == {"torch-eager", "mxnet-imperative"} and len(off) == 2 * blocks >= 4
    assert {(c["part"], c["batch_size"], c["num_workers"]) for c in off} == {("onednn", batch, 0)}
    for c in off:  # each "off" trial has its "on" twin in the same block (shared with the main grid)
        twin = {**c, "onednn": True}
        assert any(
            {k: v for k, v in q.items() if k != "part"} == {k: v for k, v in twin.items() if k != "part"} for q in quick
        )
    assert all(c["onednn"] for c in plan_configs("smoke"))  # smoke stays small: no oneDNN-off trials


def plan_configs(profile):
    return [t.config for t in plan("imdb", profile)]


def test_extra_arms_run_at_one_setting_only():
    extra = [t for t in plan("imdb", "quick") if t.config["part"] == "extra"]
    assert {t.config["arm"] for t in extra} == {"mxnet-hybrid-partial", "mxnet-hybrid-full", "torch-compile"}
    largest = max(t.config["batch_size"] for t in plan("imdb", "quick") if t.config["part"] == "main")
    assert {(t.config["batch_size"], t.config["num_workers"]) for t in extra} == {(largest, 0)}


def test_the_beside_part_times_jax_and_the_reference_arms_as_trials_of_their_own():
    """Issue 25: JAX beside the reference arms on the core settings, all three in each of the part's blocks, as
    trials of their own (``beside`` in the config) so that a comparison with JAX stands on one machine's blocks;
    outside it, JAX is only in the quality part (its test accuracy beside the others')."""
    paper = plan_configs("paper")
    beside = [c for c in paper if c["part"] == "beside"]
    assert all(c["beside"] is True for c in beside) and not any("beside" in c for c in paper if c["part"] != "beside")
    arms = {"jax-jit", "torch-eager", "mxnet-imperative"}
    cells = {}
    for c in beside:
        cells.setdefault((c["batch_size"], c["num_workers"], c["seed"]), set()).add(c["arm"])
    assert set(cells) == {(b, w, s) for b in (32, 128) for w in (0,) for s in (42, 43, 44)}
    assert all(found == arms for found in cells.values())
    assert all(c["n_train"] == 20 * c["batch_size"] for c in beside)
    assert {c["part"] for c in paper if c["arm"] == "jax-jit"} == {"beside", "quality"}
    assert not [c for c in plan_configs("quick") if c["part"] == "beside"]
    with pytest.raises(Exception, match="beside_part"):
        plan("imdb", "paper", {"beside_part": {"arms": ["jax-jit"]}})


def test_odd_repeat_blocks_run_their_settings_in_reverse_order():
    """A-B then B-A: e.g. oneDNN off runs after its "on" twin in block 0 and before it in block 1."""
    quick = [t.config for t in plan("imdb", "quick")]

    def settings(repeat):
        seq = []
        for c in quick:
            if c["repeat"] == repeat and c["part"] != "scaling":
                key = (c["batch_size"], c["num_workers"], c["onednn"])
                if key not in seq:
                    seq.append(key)
        return seq

    assert len(settings(0)) >= 3 and settings(1) == settings(0)[::-1]
    three = [t.config for t in plan("imdb", "quick", {"repeats": 3})]
    assert [s for s in settings(0)] == [  # a third block runs them in block 0's order again
        k
        for k in dict.fromkeys(
            (c["batch_size"], c["num_workers"], c["onednn"])
            for c in three
            if c["repeat"] == 2 and c["part"] != "scaling"
        )
    ]


def test_paper_profile_sizes_epochs_by_batches_and_adds_the_quality_part():
    """Issue 14's profile: every main/extra epoch is 20 batches at its own batch size; the quality part trains
    the core arms and JAX on all 25k reviews, scored on all 25k, for its own 5 blocks (seeds), each seed at its
    declared thread count; init is the same in all."""
    paper = plan_configs("paper")
    timed = [c for c in paper if c["part"] in ("main", "extra")]
    assert timed and all(c["n_train"] == 20 * c["batch_size"] for c in timed)
    assert {c["batch_size"] for c in timed} == {32, 128, 512} and {c["num_workers"] for c in timed} == {0, 2}
    quality = [c for c in paper if c["part"] == "quality"]
    assert {(c["n_train"], c["n_test"], c["batch_size"]) for c in quality} == {(25000, 25000, 64)}
    threads = {42: 2, 43: 2, 44: 2, 45: 1, 46: 1}  # seeds per arm as the profile declares them (issue 25)
    seeds = {"torch-eager": 5, "mxnet-imperative": 5, "torch-sparse": 5, "jax-jit": 5}
    assert sorted((c["arm"], c["seed"], c["threads"]) for c in quality) == sorted(
        (a, s, threads[s]) for a, n in seeds.items() for s in range(42, 42 + n)
    )
    assert {c["init"] for c in paper} == {"keras"} and {c["clip_norm"] for c in paper} == {None}
    # without batches_per_epoch, n_train is the profile's whatever the batch size (the other profiles)
    from fwbench.studies.imdb_profiles import PROFILES

    assert {c["n_train"] for c in plan_configs("quick") if c["part"] == "main"} == {PROFILES["quick"]["n_train"]}
    capped = plan("imdb", "paper", {"batches_per_epoch": 1000})
    assert max(t.config["n_train"] for t in capped) == 25000  # never more reviews than there are
    with pytest.raises(Exception, match="quality_part"):
        plan("imdb", "paper", {"quality_part": {"batch_size": 64}})
    five = {"batch_size": 64, "epochs": 4, "blocks": 5, "threads": [2, 2, 2, 1, 1], "arms": ["torch-eager"]}
    assert len(plan("imdb", "paper", {"quality_part": five})) < len(plan("imdb", "paper"))  # a list that repeats
    with pytest.raises(Exception, match=r"no number of seeds for \['torch-sparse'\]"):
        plan("imdb", "paper", {"quality_part": {**five, "arms": ["torch-sparse"], "blocks": {"torch-eager": 5}}})
    with pytest.raises(Exception, match="unknown quality_part.blocks key"):
        plan("imdb", "paper", {"quality_part": {**five, "blocks": {"keras": 5}}})
    with pytest.raises(Exception, match="one thread count per block"):
        short = {"batch_size": 64, "epochs": 4, "blocks": 3, "threads": [1], "arms": ["torch-eager"]}
        plan("imdb", "paper", {"quality_part": short})
    with pytest.raises(Exception, match="init"):
        plan("imdb", "paper", {"init": "he"})


@pytest.mark.skipif(not Path("/proc/sys/kernel/random/boot_id").exists(), reason="Linux /proc only")
def test_provenance_tells_machines_apart():
    """Every VM here is "vm" with an "AMD EPYC": the boot id and the CPU's family/model tell pieces apart."""
    from fwbench.provenance import host_info

    info = host_info()
    assert len(info["boot_id"]) == 36 and info["boot_id"] == host_info()["boot_id"]
    vendor, family, model, stepping = info["cpu_id"].split("/")
    assert vendor and family.isdigit() and model.isdigit()


def test_a_run_that_names_no_cpu_leaves_the_piece_parts_alone():
    """A part measured as pieces per CPU model (DeepAR's post_conditions) runs only where the run names its CPU
    (``--set cpu=this``) or asks for the part: ``make reproduce PROFILE=paper`` on the complete committed store ran
    its unnamed trials, none of which the page reads."""
    from fwbench.runner import named_cpu_pieces
    from fwbench.studies import get_study

    study, trials = get_study("deepar"), plan("deepar", "paper")
    take, left = named_cpu_pieces(study, trials, {"cpu": None}, None)
    assert left == sum(t.config.get("part") == "post_conditions" for t in trials) > 0
    assert len(take) + left == len(trials) and not any(t.config.get("part") == "post_conditions" for t in take)
    assert named_cpu_pieces(study, trials, {"cpu": "AuthenticAMD/25/1"}, None) == (trials, 0)
    assert named_cpu_pieces(study, trials, {"cpu": None}, ["post_conditions"]) == (trials, 0)
