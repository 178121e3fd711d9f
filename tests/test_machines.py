"""Blocks of one setting on machines of different speed (a run made in pieces): the machine's speed is taken out
per setting, the arms' ratio is kept, and nothing changes on one machine."""

from __future__ import annotations

import math
import random

import pandas as pd
import pytest

from fwbench.machines import adjust_records, centre_by_machine, cpu_model_of, machine_factors, machine_of, one_cpu_model
from fwbench.stats import half_width, trial_ratio_ci
from fwbench.studies.adaptive import TrialRecord

SETTING = ["batch_size"]


def _epochs(blocks_by_machine: dict, speed: dict, ratio: float = 1.2, noise: float = 0.03) -> pd.DataFrame:
    """Per machine, blocks of two arms (mxnet = ratio x torch), 3 epochs each (the first a slow warm-up)."""
    rng, rows = random.Random(0), []
    for machine, blocks in blocks_by_machine.items():
        for block in range(blocks):
            for arm, base in (("torch", 1.0), ("mxnet", ratio)):
                trial = f"{machine}-{block}-{arm}"
                for epoch in range(3):
                    t = base * speed[machine] * math.exp(rng.gauss(0, noise)) * (5 if epoch == 0 else 1)
                    rows.append(
                        {
                            "trial_id": trial,
                            "arm": arm,
                            "batch_size": 64,
                            "epoch": epoch,
                            "machine": machine,
                            "train_time_s": t,
                            "epoch_25k_s": 10 * t,
                            "samples_per_s": 1 / t,
                        }
                    )
    return pd.DataFrame(rows)


def _trial_ratio(frame: pd.DataFrame) -> dict:
    per_trial = frame[frame.epoch > 0].groupby(["trial_id", "arm"]).train_time_s.median().reset_index()
    return trial_ratio_ci(
        per_trial[per_trial.arm == "mxnet"].train_time_s, per_trial[per_trial.arm == "torch"].train_time_s
    )


def test_two_machines_of_different_speed_keep_the_ratio_and_a_narrow_interval():
    frame = _epochs({"boot-a": 2, "boot-b": 2}, {"boot-a": 1.0, "boot-b": 1.6})
    raw = _trial_ratio(frame)
    adjusted, dropped = centre_by_machine(frame, SETTING)
    ratio = _trial_ratio(adjusted)
    assert dropped == [] and len(adjusted) == len(frame)
    assert ratio["ratio"] == pytest.approx(1.2, rel=0.03) and ratio["ci_low"] < 1.2 < ratio["ci_high"]
    assert half_width(ratio["ci_low"], ratio["ci_high"]) < half_width(raw["ci_low"], raw["ci_high"]) / 4
    # the machines' speed is gone: both now sit between them, and throughput moves the other way
    by_machine = adjusted[adjusted.epoch > 0].groupby("machine").train_time_s.median()
    assert by_machine["boot-b"] / by_machine["boot-a"] == pytest.approx(1.0, abs=0.05)
    assert (adjusted.samples_per_s * adjusted.train_time_s).to_numpy() == pytest.approx(1.0)


def test_one_machine_is_left_exactly_as_it_was():
    frame = _epochs({"boot-a": 3}, {"boot-a": 1.0})
    same, dropped = centre_by_machine(frame, SETTING)
    assert same is frame and dropped == []
    assert machine_factors({"boot-a": {"torch": [1.0, 2.0], "mxnet": [3.0]}}, {"torch", "mxnet"}) == {"boot-a": 1.0}


def test_a_block_split_across_machines_is_dropped_and_counted():
    frame = _epochs({"boot-a": 2, "boot-b": 1}, {"boot-a": 1.0, "boot-b": 1.6})
    split = frame[~((frame.machine == "boot-b") & (frame.arm == "mxnet"))]  # boot-b ran only torch's half
    adjusted, dropped = centre_by_machine(split, SETTING)
    assert len(dropped) == 1 and set(adjusted.machine) == {"boot-a"}
    assert machine_of(None) == machine_of(float("nan")) == "not recorded" and machine_of("b1") == "b1"


def test_the_adaptive_rule_compares_within_machines_too():
    def record(arm, block, machine, value):
        return TrialRecord(f"{arm}{block}{machine}", "s", block, arm, "done", value, 1.0, None, machine)

    records = [
        record("torch", 0, "a", 1.0),
        record("mxnet", 0, "a", 1.2),
        record("torch", 1, "b", 1.6),
        record("mxnet", 1, "b", 1.92),
        record("torch", 2, "c", 5.0),
    ]  # machine c holds half a block
    out = {(r.arm, r.machine): r.value for r in adjust_records(records, {"s": {"torch", "mxnet"}})}
    assert out[("mxnet", "a")] / out[("torch", "a")] == pytest.approx(1.2)
    assert out[("torch", "a")] == pytest.approx(out[("torch", "b")]) and math.isnan(out[("torch", "c")])
    one = [record("torch", 0, "a", 1.0), record("mxnet", 0, "a", 1.2)]
    assert adjust_records(one, {"s": {"torch", "mxnet"}}) == one


def test_one_cpu_model_per_part_and_the_machine_factor_within_it():
    """A timed part whose blocks ran on two CPU models keeps the model that ran most of it (the other counted, never
    pooled or centred into it); an exempt part (an accuracy) keeps both; one model changes nothing."""
    frame = _epochs({"boot-a": 3, "boot-b": 2}, {"boot-a": 1.0, "boot-b": 3.0}).assign(part="main")
    frame["cpu"] = frame.machine.map({"boot-a": "AuthenticAMD/25/17", "boot-b": "GenuineIntel/6/85"})
    kept, dropped = one_cpu_model(frame)
    assert set(kept.cpu) == {"AuthenticAMD/25/17"} and dropped == {("main", "GenuineIntel/6/85"): 4}
    accuracy, none_dropped = one_cpu_model(frame.assign(part="quality"), exempt=("quality",))
    assert none_dropped == {} and len(accuracy) == len(frame)
    same = frame[frame.cpu == "AuthenticAMD/25/17"]
    assert one_cpu_model(same)[0] is same
    assert cpu_model_of("GenuineIntel/6/207/2") == "GenuineIntel/6/207" and cpu_model_of(None) == "not recorded"


def test_the_unnamed_trials_other_cpu_model_is_a_row_of_its_own_read_from_the_beside_part(tmp_path):
    """The IMDB setting per CPU model: the model most unnamed trials ran on from the main part, another model of
    the unnamed trials from the beside part that repeats the setting there, each ratio over its own trials."""
    from test_ledger import MX, PT, add_imdb

    from fwbench.analysis import Results, cpu_models
    from fwbench.store import ResultsStore

    store = ResultsStore(tmp_path / "s.sqlite")
    amd17, amd1 = {"cpu_id": "AuthenticAMD/25/17/1", "boot_id": "a"}, {"cpu_id": "AuthenticAMD/25/1/1", "boot_id": "b"}
    for block in range(3):
        for arm, seconds in ((PT, 10.0), (MX, 15.0)):
            add_imdb(store, arm, 128, 0, seconds, block=block, device="cpu", provenance=amd17)
    for block in range(2):
        for arm, seconds in ((PT, 10.0), (MX, 20.0)):
            add_imdb(
                store, arm, 128, 0, seconds, block=block, device="cpu", part="beside", beside=True, provenance=amd1
            )
    results = Results(store)
    # the planted rows are the smoke profile's, whose IMDB trials run flushed: the CPU models are what is tested
    assert [(c.cpu, c.named) for c in cpu_models.stored_conditions(results, "imdb")] == [("AuthenticAMD/25/17", False)]
    assert [(c.cpu, c.named) for c in cpu_models.minority_conditions(results, "imdb")] == [("AuthenticAMD/25/1", False)]
    table = cpu_models.imdb_table(results).set_index(["cpu", "arm"])
    assert (
        table.loc[("AuthenticAMD/25/17", MX), "part"] == "main"
        and table.loc[("AuthenticAMD/25/17", MX), "n_trials"] == 3
    )
    assert (
        table.loc[("AuthenticAMD/25/1", MX), "part"] == "beside"
        and table.loc[("AuthenticAMD/25/1", MX), "n_trials"] == 2
    )
    assert table.loc[("AuthenticAMD/25/17", MX), "ratio"] == pytest.approx(1.5, rel=0.05)
    assert table.loc[("AuthenticAMD/25/1", MX), "ratio"] == pytest.approx(2.0, rel=0.05)
    names = [c.cpu_name for c, _ in cpu_models.imdb_ratio_quantities(cpu_models.imdb_table(results))]
    assert names == ["AMD EPYC 25/17", "AMD EPYC 25/1"]


def test_the_pages_say_which_times_are_machine_adjusted_and_which_blocks_were_left_out(tmp_path):
    """``imdb.machine_adjustment``: a setting whose complete blocks ran on two machines is adjusted; a block split
    across machines leaves out its trials, named per arm and setting by their block, and the fastest-settings list
    says both; on one machine it says neither."""
    from types import SimpleNamespace

    from test_ledger import MX, PT, add_imdb

    from fwbench.analysis import Results
    from fwbench.analysis import imdb as imdb_analysis
    from fwbench.pages import render_markdown
    from fwbench.quantity import Quantity
    from fwbench.store import ResultsStore

    def on(boot):
        return {"provenance": {"cpu_id": "AuthenticAMD/25/17/1", "boot_id": boot}, "device": "cpu"}

    store = ResultsStore(tmp_path / "s.sqlite")
    for block in range(4):
        for arm, seconds in ((PT, 10.0), (MX, 15.0)):  # batch 32: two whole blocks on each machine, b 1.6x slower
            add_imdb(store, arm, 32, 0, seconds * (1, 1.6)[block // 2], block=block, **on("ab"[block // 2]))
            # batch 128's last block split: its PyTorch trial on machine b, alone there
            add_imdb(store, arm, 128, 0, seconds, block=block, **on("b" if block == 3 and arm == PT else "a"))
    facts = imdb_analysis.machine_adjustment(Results(store))
    assert facts == {"adjusted": True, "dropped": {(PT, 128, 0): [3]}}

    def fastest_list(machines, limits=None) -> str:
        row = dict(arm=PT, batch_size=128, num_workers=0, geomean=10.0, fastest=9.9, slowest=10.1, n=2, how="h")
        row["settings"] = 2
        favour = {"arm": PT, "table": [row], "quantity": Quantity("imdb.fastest_arm_vs_pytorch", 1.0)}
        a = SimpleNamespace(favour=favour, cpus={"imdb_machines": machines}, accuracy=[], limits=limits or {})
        return render_markdown("answer_study", a=a, study="imdb", claims=[]).split("\n\n")[0]

    text = fastest_list(facts)
    assert "machine-adjusted" in text and "(2 trials from 9.9 to 10.1 s; block 3's trial left out" in text
    assert "fastest setting (h)" in text  # no CPU known: none named
    base = SimpleNamespace(cpu_name="AMD EPYC 25/17", fp_mode="flush")  # the speed lines' CPU names the timings'
    named = fastest_list(facts, {"cpu": {"base": base}})
    assert "fastest setting on the AMD EPYC 25/17, subnormals flushed (h)" in named
    one = ResultsStore(tmp_path / "one.sqlite")
    for arm, seconds in ((PT, 10.0), (MX, 15.0)):
        add_imdb(one, arm, 128, 0, seconds, **on("a"))
    facts = imdb_analysis.machine_adjustment(Results(one))
    assert facts == {"adjusted": False, "dropped": {}}
    assert "machine-adjusted" not in fastest_list(facts) and "left out" not in fastest_list(facts)


def test_the_cpu_table_shows_the_ratios_estimator_and_the_spread_behind_its_interval(tmp_path):
    """Each arm's time in the per-CPU table is the geometric mean over its trials, so the ratio beside it is the
    ratio of the times shown; where one slow seed makes the trials two groups, the fastest and slowest trial and
    the slowest one's seed show the spread that makes the interval wide."""
    from test_ledger import MX, N_TRAIN, PT, add_imdb

    from fwbench.analysis import Results, cpu_models
    from fwbench.data.imdb import REVIEWS_PER_SPLIT
    from fwbench.store import ResultsStore

    store = ResultsStore(tmp_path / "s.sqlite")
    intel = {"cpu_id": "GenuineIntel/6/207/1", "boot_id": "a"}
    planted = {}
    for block in range(4):  # seed 42 + block; block 1's seed runs 6x slower in every arm
        for arm, seconds in ((PT, 10.0), (MX, 15.0)):
            t = seconds * (6 if block == 1 else 1) * (1 + 0.01 * block)
            add_imdb(store, arm, 128, 0, t, block=block, device="cpu", provenance=intel, epoch_times=[2 * t, t, t])
            planted.setdefault(arm, []).append(t * REVIEWS_PER_SPLIT / N_TRAIN)
    table = cpu_models.imdb_table(Results(store)).set_index("arm")
    pt, mx = table.loc[PT], table.loc[MX]
    assert mx.ratio == pytest.approx(mx.epoch_25k_s / pt.epoch_25k_s) and mx.ratio == pytest.approx(1.5)
    assert pt.epoch_25k_s == pytest.approx(math.exp(sum(map(math.log, planted[PT])) / 4))
    assert (pt.fastest_s, pt.slowest_s) == pytest.approx((min(planted[PT]), max(planted[PT])))
    assert pt.slowest_seed == mx.slowest_seed == 43 and mx.ci_high / mx.ci_low > 5  # unpaired: a wide interval


def test_the_cpu_table_says_which_rows_are_machine_adjusted(tmp_path):
    """A CPU model whose trials at the setting ran on two machines is read machine-adjusted, as every IMDB table
    reads it: its rows count the machines and the header names it; a model on one machine is not named."""
    from test_ledger import MX, PT, add_imdb

    from fwbench.analysis import Results, cpu_models
    from fwbench.pages import render_markdown
    from fwbench.store import ResultsStore

    def cpu_table(store) -> tuple:
        table = cpu_models.imdb_table(Results(store))
        empty = pd.DataFrame()
        facts = dict(imdb=table, imdb_setting=cpu_models.IMDB_SETTING, imdb_ratios=[], fp_effect=empty)
        return table, render_markdown("cpu_models", **facts, quality=empty, deepar=empty, gemm=empty, probes=empty)

    two, one = ResultsStore(tmp_path / "two.sqlite"), ResultsStore(tmp_path / "one.sqlite")
    for block in range(4):  # blocks 0-1 on boot a, 2-3 on boot b (1.6x slower): complete cells on both
        for arm, seconds in ((PT, 10.0), (MX, 15.0)):
            on = {"cpu_id": "AuthenticAMD/25/17/1", "boot_id": "ab"[block // 2]}
            add_imdb(two, arm, 128, 0, seconds * (1, 1.6)[block // 2], block=block, device="cpu", provenance=on)
            add_imdb(one, arm, 128, 0, seconds, block=block, device="cpu", provenance={**on, "boot_id": "a"})
    table, md = cpu_table(two)
    assert set(table.machines) == {2} and table.set_index("arm").loc[MX].ratio == pytest.approx(1.5, rel=0.02)
    assert "The AuthenticAMD/25/17 rows are machine-adjusted" in md and "| machines |" in md
    table, md = cpu_table(one)
    assert set(table.machines) == {1} and "machine-adjusted" not in md


def test_training_quality_on_another_condition_is_read_apart_and_set_beside_the_own_runs_seeds(tmp_path):
    """The training-quality seeds of a piece run for a CPU and fp mode (flushed on an Intel Xeon) are read on their
    own trials, never pooled into the own run's; the accuracy and train-loss ratios pair the seeds both sides ran
    (a seed only the own run has is left out, as is its accuracy from the own run's spread), and the page shows the
    table."""
    from fwbench.analysis import Results, cpu_models
    from fwbench.pages import render_markdown
    from fwbench.planning import plan
    from fwbench.store import ResultsStore

    part = {"batch_size": 64, "epochs": 2, "blocks": 3, "threads": [2, 2, 2], "arms": ["torch-eager"]}
    intel = {"cpu": "GenuineIntel/6/207", "fp_mode": "flush"}
    store = ResultsStore(tmp_path / "s.sqlite")
    for named, acc, loss, cpu_id, slope in (
        ({}, 0.86, 0.40, "AuthenticAMD/25/17/1", 0.01),
        (intel, 0.80, 0.50, "GenuineIntel/6/207/1", 0.02),
    ):
        for t in plan("imdb", "smoke", {"repeats": 3, "quality_part": part, **named}):
            if t.config["part"] != "quality" or (named and t.config["seed"] == 44):  # the piece ran seeds 42 and 43
                continue
            jitter = 1 + slope * (t.config["seed"] - 42)
            rows = [
                (e, m, v * jitter)
                for e in range(2)
                for m, v in (("test_acc", acc), ("train_loss", loss), ("train_time_s", 9.0))
            ]
            provenance = {"host": "planted", "cpu_id": cpu_id, "boot_id": cpu_id, "framework": "torch"}
            store.record(trial_id=t.trial_id, study="imdb", status="done", config=t.config, provenance=provenance,
                         summary={}, measurements=rows, profile="smoke")  # fmt: skip
    results = Results(store, "smoke", {"imdb": {"repeats": 3, "quality_part": part}})
    table = cpu_models.imdb_quality_table(results)
    assert len(table) == 1, table  # the own run is not a condition beside itself
    row = table.iloc[0]
    assert (row.cpu, row.fp_mode, row.acc_seeds, row.own_seeds) == ("GenuineIntel/6/207", "flush", 2, 2)
    assert (row.own_low, row.own_high) == pytest.approx((0.86, 0.86 * 1.01))  # the own run's same seeds only
    paired = 0.80 / 0.86 * (1.02 / 1.01) ** 0.5  # the geometric mean of the seeds' ratios (seed 43: 1.02 / 1.01)
    assert row.acc_ratio == pytest.approx(paired) and row.acc_ci_low < row.acc_ratio < row.acc_ci_high < 1
    assert row.loss_ratio == pytest.approx(0.50 / 0.40 * (1.02 / 1.01) ** 0.5)
    empty = pd.DataFrame()
    md = render_markdown("cpu_models", imdb=empty, imdb_setting=cpu_models.IMDB_SETTING, imdb_ratios=[],
                         fp_effect=empty, quality=table, deepar=empty, gemm=empty, probes=empty)  # fmt: skip
    assert "Training quality on the other conditions" in md and "| GenuineIntel/6/207 | flush | torch-eager | 2 |" in md


def test_each_part_is_read_against_its_own_reference_and_the_fp_effect_covers_the_beside_parts_jax(tmp_path):
    """The IMDB setting per condition is read from the main part and from the beside part (JAX's arm beside the
    reference arms), each ratio against PyTorch's dense arm of its own part; the subnormal cost pairs the modes per
    part, so JAX's default / flushed is measured too. A condition selects its own fp mode even where the profile's
    own is the other (smoke flushes): a default-mode piece is never read as the flushed run."""
    from fwbench.analysis import Results, cpu_models
    from fwbench.planning import plan
    from fwbench.store import ResultsStore

    beside = {"arms": ["jax-jit", "torch-eager", "mxnet-imperative"], "batch_sizes": [128], "workers": [0], "blocks": 3}
    grid = {"repeats": 3, "batch_sizes": [128], "workers": [0], "extra_arms": [], "beside_part": beside}
    seconds = {"default": {"torch-eager": 20.0, "mxnet-imperative": 30.0, "jax-jit": 15.0},
               "flush": {"torch-eager": 10.0, "mxnet-imperative": 15.0, "jax-jit": 15.0}}  # fmt: skip
    store = ResultsStore(tmp_path / "s.sqlite")
    for mode, arms in seconds.items():
        for t in plan("imdb", "smoke", {**grid, "cpu": "GenuineIntel/6/207", "fp_mode": mode}):
            c = t.config
            if c["arm"] not in arms or c["part"] not in ("main", "beside"):
                continue
            s = arms[c["arm"]] * (1 + 0.01 * c["repeat"])
            rows = [(e, "train_time_s", s) for e in range(c["epochs"])]
            provenance = {"host": "planted", "cpu_id": "GenuineIntel/6/207/1", "boot_id": "a", "framework": "torch"}
            store.record(trial_id=t.trial_id, study="imdb", status="done", config=c, provenance=provenance,
                         summary={}, measurements=rows, profile="smoke")  # fmt: skip
    results = Results(store, "smoke", {"imdb": grid})
    table = cpu_models.imdb_table(results).set_index(["fp_mode", "part", "arm"])
    assert table.loc[("default", "main", "mxnet-imperative"), "ratio"] == pytest.approx(1.5)
    assert table.loc[("default", "beside", "jax-jit"), "ratio"] == pytest.approx(0.75)  # its own part's PyTorch
    assert table.loc[("flush", "beside", "jax-jit"), "ratio"] == pytest.approx(1.5)
    effect = cpu_models.imdb_fp_effect(results).set_index(["part", "arm"]).ratio
    assert effect[("main", "torch-eager")] == pytest.approx(2.0) and effect[("beside", "torch-eager")] == pytest.approx(
        2.0
    )
    assert effect[("beside", "jax-jit")] == pytest.approx(1.0)
