"""The claims ledger: each rule gives both outcomes on planted synthetic store rows, absent rows give 'not measured
yet' (and flip once rows exist), and the CSV export works from the CLI."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from fwbench import ledger as L
from fwbench.cli import main as cli_main
from fwbench.runner import plan
from fwbench.store import ResultsStore, trial_id

_counter = itertools.count()


def _noise(i: int) -> float:
    """Deterministic +-0.5 % jitter, so bootstrap CIs are narrow but not degenerate."""
    return 1.0 + 0.005 * math.sin(1.7 * i + 0.3)


def add_imdb(store, arm, batch, workers, epoch_s, *, seed=42, epochs=6, final_loss=0.5, status="done",
             extra=None, profile="synthetic"):
    config = {"arm": arm, "batch_size": batch, "num_workers": workers, "epochs": epochs, "n_train": 512,
              "n_test": 256, "threads": 2, "lr": 1e-3, "lr_schedule": {"factor": 0.9, "every_epochs": 10},
              "seed": seed, "repeat": seed - 42}
    rows = []
    for e in range(epochs):
        k = next(_counter)
        rows += [(e, "train_time_s", epoch_s * _noise(k) * (1.4 if e == 0 else 1.0)),
                 (e, "train_loss", final_loss + 0.05 * (epochs - 1 - e) + 0.001 * seed),
                 (e, "test_acc", 0.8), (e, "proc_cpu_pct", 100.0)]
        for metric, value in (extra or {}).items():
            rows.append((e, metric, value * _noise(k)))
    provenance = {"host": "synthetic", "cpu_model": "Planted CPU", "cpu_count": 2, "python": "3.11",
                  "framework": "mxnet" if arm.startswith("mxnet") else "torch", "framework_version": "0"}
    store.record(trial_id=trial_id("imdb", config), study="imdb", status=status, config=config,
                 provenance=provenance, summary={}, measurements=rows if status == "done" else [], profile=profile,
                 error=None if status == "done" else "planted failure")


def add_other(store, study, config, metrics, status="done", summary=None):
    rows = [(step, m, v * _noise(next(_counter))) for m, values in metrics.items() for step, v in enumerate(values)]
    store.record(trial_id=trial_id(study, config), study=study, status=status, config=config,
                 provenance={"host": "synthetic"}, summary=summary or {}, measurements=rows if status == "done" else [],
                 error=None if status == "done" else "planted failure")


def plant_imdb(store, *, matches: bool):
    """A full synthetic sweep; ``matches`` plants every effect as claimed, otherwise planted against the claims."""
    D = 1.0  # dense epoch time at batch 1024, 0 workers
    slow64 = 4.0 if matches else 0.5  # batch 64 slower (1024 best) or faster (claim A6 contradicted)
    times = {
        # arm: {workers: time at batch 1024}
        "torch-dense": {0: D, 1: D / 1.01, 2: D / 1.01, 4: D / (1.02 if matches else 1.5)},
        "mxnet": ({0: 1.1 * D, 1: 1.516 * 1.1 * D / 2.3, 2: 1.1 * D / 2.3, 4: 1.1 * D / 2.3} if matches else
                  {0: 0.7 * D, 1: 0.7 * D, 2: 0.7 * D / 1.1, 4: 0.7 * D / 1.2 / 1.1}),
        "torch-sparse": ({0: D / 1.4, 1: D / 1.4, 2: D / 1.4, 4: 1.2 * 1.1 * D / 2.3} if matches else
                         {w: D for w in (0, 1, 2, 4)}),
    }
    for arm, by_workers in times.items():
        for batch, scale in ((1024, 1.0), (64, slow64)):
            for w, t in by_workers.items():
                gpu = {"gpu_util_pct": {"torch-dense": 77.0, "mxnet": 65.0}.get(arm, 70.0) if w == 0 else 85.0}
                for seed in (42, 43):
                    add_imdb(store, arm, batch, w, t * scale, seed=seed,
                             extra=gpu if matches else None)
    # the convergence setting for A8: final train loss MXNet above (or below) PyTorch dense
    # (batch 256 is slower than 1024 per epoch; MXNet / PyTorch as at the other batch sizes)
    for arm, loss, t in (("torch-dense", 0.35, 2.0), ("mxnet", 0.40 if matches else 0.30, 2.2 if matches else 1.4)):
        for seed in (42, 43):
            add_imdb(store, arm, 256, 0, t, seed=seed, epochs=30, final_loss=loss)


def plant_other(store, *, matches: bool):
    # A9: the advised hybrid blocks train (or every such trial fails)
    add_imdb(store, L.HYBRID_ARM, 1024, 0, 0.4, status="done" if matches else "failed")
    # C4: torch-compile faster (or slower) than torch-dense
    add_imdb(store, L.JIT_ARM, 1024, 0, 0.8 if matches else 1.2)
    add_imdb(store, L.JIT_ARM, 1024, 0, 0.8 if matches else 1.2, seed=43)
    add_imdb(store, L.JIT_ARM, 64, 0, (0.8 if matches else 1.2) * (4.0 if matches else 0.5) * 1.0)
    add_imdb(store, L.JIT_ARM, 64, 0, (0.8 if matches else 1.2) * (4.0 if matches else 0.5) * 1.0, seed=43)
    # A10: the MXNet import of the ONNX file works with parity (or fails), as the onnx study stores it
    add_other(store, L.ONNX_STUDY, {"step": "export"}, {}, summary={"step_status": "ok"})
    add_other(store, L.ONNX_STUDY, {"step": "mxnet"}, {},
              summary={"step_status": "ok", "max_abs_diff": 2e-6} if matches else
              {"step_status": "step_failed", "error": "planted: import_model failed"})
    # C1 / C3: VGG16 latency (oneDNN on; an oneDNN-off row that must be ignored); C2: 8-GPU training time
    for arm, s, train_s in (("torch", 0.0304, 21.6), ("mxnet", 0.0205 if matches else 0.025, 15.4 if matches else 21.6)):
        config = {"arm": arm, "model": "vgg16", "batch_size": 1, "image_size": 224, "device": "cpu"}
        add_other(store, L.VGG_STUDY, {**config, "onednn": True}, {"latency_s": [s] * 20})
        add_other(store, L.VGG_STUDY, {**config, "onednn": False}, {"latency_s": [s * 7] * 20})
        add_other(store, L.VGG_STUDY, {"arm": arm, "gpus": 8}, {"train_time_s": [train_s] * 5})
    # B: DeepAR total train time MXNet / PyTorch (4.5 claimed)
    factor = 4.5 if matches else 2.0
    for dataset, base in (("m1_yearly", 10.0), ("cif_2016", 20.0), ("nn5_weekly", 40.0)):
        for seed in (42, 43):
            for arm in ("torch", "mxnet"):
                value = base * (factor if arm == "mxnet" else 1.0)
                config = {"dataset": dataset, "arm": arm, "framework": arm, "seed": seed}
                store.record(trial_id=trial_id("deepar", config), study="deepar", status="done", config=config,
                             provenance={"host": "synthetic"}, summary={},
                             measurements=[(-1, "train_time_s", value * _noise(next(_counter))),
                                           (0, "train_loss", 1.0)])


@pytest.fixture
def store_pair(tmp_path):
    good, bad = ResultsStore(tmp_path / "good.sqlite"), ResultsStore(tmp_path / "bad.sqlite")
    plant_imdb(good, matches=True)
    plant_other(good, matches=True)
    plant_imdb(bad, matches=False)
    plant_other(bad, matches=False)
    return good, bad


def _verdicts(store) -> dict:
    table = L.build(store, profile="all")
    assert list(table.columns) == L.COLUMNS
    assert set(table.verdict) <= set(L.VERDICTS)
    return dict(zip(table.claim_id, table.verdict))


def test_every_rule_gives_both_outcomes_on_planted_rows(store_pair):
    good, bad = map(_verdicts, store_pair)
    expected_good = {c.id: L.REPRODUCED for c in L.CLAIMS}
    expected_bad = {c.id: L.CONTRADICTED for c in L.CLAIMS}
    # A1 (PyTorch faster, GPU) and C3 (MXNet's CPU kernels faster) say opposite things: one plant flips both
    # (in the 'bad' plant MXNet is faster on the CPU for the LSTM and for VGG16, though not by C1's 1.48)
    expected_good["C3"], expected_bad["C3"] = L.CONTRADICTED, L.REPRODUCED
    # without GPU utilisation rows the GPU claims cannot be judged at all; C2 needs >= 8 GPUs on both sides
    expected_bad.update({"A2": L.NOT_TESTABLE, "A3": L.NOT_TESTABLE})
    assert good == expected_good
    assert bad == expected_bad


def test_ledger_rows_carry_measurement_ci_and_conditions(store_pair):
    table = L.build(store_pair[0], profile="all").set_index("claim_id")
    a1 = table.loc["A1"]
    assert a1.ci_low <= a1.estimate <= a1.ci_high
    assert 1.10 / 1.05 <= a1.ci_low and a1.ci_high <= 1.10 * 1.05
    assert "Planted CPU" in a1.our_conditions and "V100" in a1.source_conditions
    assert "batch 64" in a1.measurement and "batch 1024" in a1.measurement


def test_empty_store_is_not_measured_or_not_testable(tmp_path):
    table = L.build(ResultsStore(tmp_path / "empty.sqlite"), profile="all").set_index("claim_id")
    assert set(table.verdict) <= {L.NOT_MEASURED, L.NOT_TESTABLE}
    assert table.loc["A2", "verdict"] == L.NOT_TESTABLE and table.loc["C2", "verdict"] == L.NOT_TESTABLE
    assert "mxnet-hybrid" in table.loc["A9", "reason"]
    assert table.loc["A9", "verdict"] == L.NOT_MEASURED


def test_not_measured_flips_once_rows_exist(tmp_path):
    store = ResultsStore(tmp_path / "s.sqlite")
    assert _verdicts(store)["A9"] == L.NOT_MEASURED
    add_imdb(store, L.HYBRID_ARM, 256, 0, 1.0)
    assert _verdicts(store)["A9"] == L.REPRODUCED


def test_one_timed_epoch_per_side_is_insufficient_data(tmp_path):
    store = ResultsStore(tmp_path / "s.sqlite")
    for arm in ("torch-dense", "mxnet"):
        add_imdb(store, arm, 64, 0, 1.0, epochs=2)  # one timed epoch each: a ratio but no CI
    table = L.build(store, profile="all").set_index("claim_id")
    assert table.loc["A1", "verdict"] == L.INSUFFICIENT
    assert not math.isnan(table.loc["A1", "estimate"]) and math.isnan(table.loc["A1", "ci_low"])


def test_profile_selects_only_that_profiles_trials(tmp_path):
    store = ResultsStore(tmp_path / "s.sqlite")
    smoke = plan("imdb", "smoke")
    for t in smoke:
        store.record(trial_id=t.trial_id, study="imdb", status="done", config=t.config, provenance={"host": "x"},
                     summary={}, measurements=[(e, "train_time_s", 1.0 + 0.01 * e) for e in range(t.config["epochs"])])
    judged = [t for t in smoke if t.config.get("part", "main") in L.IMDB_PARTS]  # not the scaling part
    assert 0 < len(judged) and L.load(store, "smoke").imdb.trial_id.nunique() == len(judged)
    assert L.load(store, "quick").imdb.empty
    assert "no finished IMDB trials" in L.build(store, "quick").set_index("claim_id").loc["A1", "reason"]


@pytest.mark.parametrize("ci,band,expected", [
    ((1.06, 1.12), (1.05, 1.15), L.REPRODUCED), ((1.30, 1.40), (1.05, 1.15), L.CONTRADICTED),
    ((0.80, 0.90), (1.05, 1.15), L.CONTRADICTED), ((1.00, 1.10), (1.05, 1.15), L.INCONCLUSIVE),
    ((math.nan, math.nan), (1.05, 1.15), L.INSUFFICIENT)])
def test_band_rule(ci, band, expected):
    assert L.verdict_in_band(*ci, band) == expected


@pytest.mark.parametrize("ci,expected", [((1.1, 1.2), L.REPRODUCED), ((0.8, 0.95), L.CONTRADICTED),
                                         ((0.9, 1.1), L.INCONCLUSIVE), ((math.nan, 1.0), L.INSUFFICIENT)])
def test_above_rule(ci, expected):
    assert L.verdict_above(*ci) == expected


@pytest.mark.parametrize("ci,expected", [((0.9, 1.04), L.REPRODUCED), ((1.2, 1.3), L.CONTRADICTED),
                                         ((1.0, 1.2), L.INCONCLUSIVE)])
def test_at_most_rule(ci, expected):
    assert L.verdict_at_most(*ci) == expected


def test_fastest_is_rule():
    fast, slow = np.array([1.0, 1.01, 0.99]), np.array([2.0, 2.02, 1.98])
    assert L.fastest_is({64: slow, 1024: fast}, 1024).verdict == L.REPRODUCED
    assert L.fastest_is({64: fast, 1024: slow}, 1024).verdict == L.CONTRADICTED
    assert L.fastest_is({64: fast}, 1024).verdict == L.NOT_MEASURED


def test_combine_precedence():
    assert L.combine([L.REPRODUCED, L.CONTRADICTED]) == L.CONTRADICTED
    assert L.combine([L.REPRODUCED, L.INCONCLUSIVE]) == L.INCONCLUSIVE
    assert L.combine([L.REPRODUCED, L.REPRODUCED]) == L.REPRODUCED
    assert L.combine([]) == L.NOT_MEASURED


def test_cli_writes_csv(store_pair, tmp_path, monkeypatch):
    monkeypatch.setenv("FWBENCH_RESULTS", str(store_pair[0].path))
    out = tmp_path / "ledger.csv"
    assert cli_main(["ledger", "--profile", "all", "-o", str(out)]) == 0
    table = pd.read_csv(out)
    assert list(table.claim_id) == [c.id for c in L.CLAIMS]
    assert list(table.verdict) == list(L.build(store_pair[0], profile="all").verdict)
    assert (table.verdict == L.REPRODUCED).sum() == len(L.CLAIMS) - 1  # all but C3 (see above)
