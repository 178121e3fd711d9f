"""The DeepAR / Monash study: plans, option validation, preflight errors, analysis on planted numbers, and (slow)
the smoke profile through the real runner."""
from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fwbench.analysis import deepar as analysis
from fwbench.errors import FwbenchError
from fwbench.runner import plan, run_sweep
from fwbench.store import ResultsStore
from fwbench.studies import deepar as study

REPO = Path(__file__).resolve().parents[1]
# the staged Monash files, found only through FWBENCH_DATA_DIR (tests/conftest.py sets a default)
STAGED_MONASH = Path(os.environ["FWBENCH_DATA_DIR"]) / "monash" if os.environ.get("FWBENCH_DATA_DIR") else None
needs_staged = pytest.mark.skipif(STAGED_MONASH is None or not (STAGED_MONASH / "MANIFEST.csv").exists(),
                                  reason="FWBENCH_DATA_DIR is unset or has no staged Monash data (monash/MANIFEST.csv)")
MX, PT = study.STUDY.reference_arm("mxnet"), study.STUDY.reference_arm("torch")


def test_profiles_plan():
    smoke = plan("deepar", "smoke")
    assert sorted((t.config["dataset"], t.config["arm"], t.config["seed"]) for t in smoke) == [
        ("m1_yearly", "mxnet-hybrid-partial", 42), ("m1_yearly", "torch-eager", 42)]
    quick = plan("deepar", "quick")
    assert {t.config["dataset"] for t in quick} == set(study.QUICK_DATASETS) and len(quick) == 2 * len(study.QUICK_DATASETS)
    full = plan("deepar", "full")
    assert len(full) == 41 * 2 * 5 and {t.config["seed"] for t in full} == {42, 43, 44, 45, 46}
    assert all(t.config["epochs"] == 100 and t.config["num_batches_per_epoch"] == 50 for t in full)
    assert len({t.trial_id for t in full}) == len(full)
    gap = plan("deepar", "gap")
    assert {t.config["arm"] for t in gap} == set(study.STUDY.arm_names)
    hyb = {t.config["arm"]: t.config["hybridize"] for t in gap}
    assert hyb == {"torch-eager": None, "mxnet-hybrid-partial": True, "mxnet-imperative": False}


def test_protocol_values_in_every_config():
    for t in plan("deepar", "full"):
        c = t.config
        hp = c["hyperparameters"]
        assert (hp["num_layers"], hp["hidden_size"], hp["batch_size"], hp["num_parallel_samples"]) == (2, 40, 32, 100)
        assert c["context_length"] > 0 and c["prediction_length"] > 0
    m4h = next(t.config for t in plan("deepar", "full") if t.config["dataset"] == "m4_hourly")
    assert (m4h["context_length"], m4h["prediction_length"], m4h["freq"]) == (210, 48, "h")


def test_overrides_narrow_the_profile():
    trials = plan("deepar", "full", {"datasets": ["tourism_yearly"], "seeds": [43]})
    assert [(t.config["dataset"], t.config["seed"]) for t in trials] == [("tourism_yearly", 43)] * 2
    assert plan("deepar", "quick", {"datasets": "cif_2016"})[0].config["dataset"] == "cif_2016"


@pytest.mark.parametrize("overrides, message", [
    ({"datasets": ["m5"]}, "unknown datasets value"),
    ({"datasets": ["kaggle_web_traffic_daily"]}, "no Monash lag"),
    ({"arms": ["jax"]}, "unknown arms value"),
    ({"seeds": [42, 42]}, "lists a value twice"),
    ({"epochs": 0}, "epochs must be >= 1"),
    ({"batch": 3}, "unknown option 'batch'"),
])
def test_bad_overrides_are_one_line_errors(overrides, message):
    with pytest.raises(FwbenchError, match=message) as exc:
        plan("deepar", "smoke", overrides)
    assert "\n" not in str(exc.value)


def test_cli_flags_map_to_overrides(tmp_store):
    cmd = [sys.executable, "-m", "fwbench.cli", "run", "deepar", "--profile", "smoke", "--dataset", "m5_weekly"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("fwbench: error: unknown datasets value(s) ['m5_weekly']")
    from fwbench.cli import build_parser

    args = build_parser().parse_args(["run", "deepar", "--dataset", "a", "--dataset", "b", "--seed", "43"])
    assert (args.datasets, args.seeds) == (["a", "b"], [43])


@needs_staged
def test_preflight_rejects_a_corrupt_file_before_any_trial(tmp_path, tmp_store, monkeypatch):
    monkeypatch.setenv("FWBENCH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("FWBENCH_OFFLINE", "1")
    bad = tmp_path / "data" / "monash" / "tsf" / "m1_yearly_dataset.tsf"
    bad.parent.mkdir(parents=True)
    good = (STAGED_MONASH / "tsf" / "m1_yearly_dataset.tsf").read_bytes()
    bad.write_bytes(good[: len(good) // 2].rstrip(b"0123456789\n") + b"\n")  # cut in a series, after a comma
    with pytest.raises(FwbenchError, match="corrupt or truncated .tsf file"):
        run_sweep("deepar", "smoke", progress="none")
    assert not tmp_store.exists() or ResultsStore(tmp_store).trials("deepar").empty


# -- analysis on a store with planted values ------------------------------------------------------------------
def _plant(store: ResultsStore, overrides: dict, slow: float, seeds_noise: float = 0.05,
           factors: dict | None = None) -> None:
    """Planted trials: the MXNet reference arm ``slow`` times the rest (other arms by ``factors``)."""
    rng = np.random.default_rng(0)
    for t in plan("deepar", "smoke", overrides):
        factor = (factors or {}).get(t.config["arm"], slow if t.config["arm"] == MX else 1.0)
        train = 10.0 * factor * (1 + seeds_noise * rng.standard_normal())
        values = {"train_time_s": train, "predict_time_s": 2.0 * factor, "MASE": 1.0 + 0.1 * factor,
                  "sMAPE": 0.2, "mean_wQL": 0.1, "fit_overhead_s": 1.0, "data_time_s": 0.5}
        meas = [(-1, k, v) for k, v in values.items()] + [(0, "train_loss", 3.0), (0, "epoch_time_s", train - 1)]
        store.record(trial_id=t.trial_id, study="deepar", status="done", config=t.config,
                     provenance={"host": "h", "dataset_kind": "original"}, summary={}, measurements=meas,
                     profile="smoke")


def test_analysis_recovers_a_planted_ratio(tmp_store):
    store = ResultsStore(tmp_store)
    overrides = {"seeds": [42, 43, 44, 45, 46]}
    _plant(store, overrides, slow=3.0)
    trials = analysis.load_trials("smoke", overrides, store)
    assert len(trials) == 10 and set(trials.dataset_kind) == {"original"}
    ratios = analysis.ratio_table(trials)
    r = ratios.iloc[0]
    assert r.dataset == "m1_yearly" and 2.5 < r.ratio < 3.5 and r.ci_low < 3.0 < r.ci_high
    tot = analysis.totals(trials)
    assert tot.loc[MX, "n_trials"] == 5 and math.isclose(
        tot.loc[MX, "predict_time_s"] / tot.loc[PT, "predict_time_s"], 3.0)
    assert tot.loc[MX, "post_total_s"] == 395_807 and tot.loc[PT, "post_total_s"] == 88_756  # the post's totals
    acc = analysis.accuracy_table(trials)
    assert acc.loc["m1_yearly", ("MASE", PT)] < acc.loc["m1_yearly", ("MASE", MX)]
    text = analysis.headline_markdown(trials, "smoke")
    assert "MXNet was slower on 1 of 1 dataset(s)" in text and "95 % CI" in text
    assert "PyTorch had the lower MASE on 1 of 1" in text
    br = analysis.breakdown_table(trials)
    assert math.isclose(br.loc[br.arm == PT, "share_data"].iloc[0], 0.5 / trials[trials.arm == PT]
                        .train_time_s.median(), rel_tol=1e-9)
    # a different profile's trials are not mixed in
    assert analysis.load_trials("smoke", {"seeds": [42]}, store).seed.tolist() == [42, 42]


def test_one_seed_gives_a_nan_ci_and_says_so(tmp_store):
    store = ResultsStore(tmp_store)
    _plant(store, {}, slow=2.0)
    trials = analysis.load_trials("smoke", None, store)
    r = analysis.ratio_table(trials).iloc[0]
    assert math.isclose(r.ratio, trials.loc[trials.arm == MX, "total_time_s"].iloc[0]
                        / trials.loc[trials.arm == PT, "total_time_s"].iloc[0])
    assert np.isnan(r.ci_low) and np.isnan(r.ci_high)
    assert "no CI: one seed per arm" in analysis.headline_markdown(trials, "smoke")


def test_hybridize_effect_compares_the_other_mxnet_arms_with_the_reference(tmp_store):
    store = ResultsStore(tmp_store)
    overrides = {"arms": list(study.STUDY.arm_names), "seeds": [42, 43, 44]}
    _plant(store, overrides, slow=2.0, factors={"mxnet-imperative": 6.0})
    trials = analysis.load_trials("smoke", overrides, store)
    effect = analysis.hybridize_effect(trials)
    assert set(effect.arm) == {"mxnet-imperative"} and set(effect.baseline) == {MX}
    predict = effect[effect.metric == "predict_time_s"].iloc[0]
    assert math.isclose(predict.ratio, 3.0)  # planted: predict time 2 s x factor, no noise
    labels = study.STUDY.labels()
    assert f"{labels['mxnet-imperative']} / {labels[MX]}, forecasting: 3.00x" in analysis.gap_markdown(trials)


def test_unavailable_dataset_is_listed(tmp_store, monkeypatch):
    monkeypatch.setenv("FWBENCH_OFFLINE", "1")
    ResultsStore(tmp_store)  # an empty store: reading a missing one is an error
    missing = analysis.unavailable("full", {"datasets": ["m4_daily", "m1_yearly"], "seeds": [42]})
    if STAGED_MONASH is not None and (STAGED_MONASH / "MANIFEST.csv").exists():
        assert missing.dataset.tolist() == ["m4_daily"]
    assert "m4_daily" in missing.dataset.tolist() and missing.reason.str.len().min() > 0


# -- the real thing ---------------------------------------------------------------------------------------------
@pytest.mark.slow
@needs_staged
def test_smoke_sweep_through_the_runner(tmp_store, monkeypatch):
    monkeypatch.setenv("FWBENCH_OFFLINE", "1")
    before = {p.name for p in REPO.iterdir()}
    summary = run_sweep("deepar", "smoke", progress="none", timeout_s=300)
    assert summary.ok and summary.done == 2, summary.failed
    store = ResultsStore(tmp_store)
    trials = store.trials("deepar")
    assert set(trials["provenance.frameworks_imported"].map(tuple)) == {("torch",), ("mxnet",)}
    assert set(trials["provenance.dataset_kind"]) == {"original"}
    m = store.measurements("deepar")
    whole = m[m.step == -1]
    for arm in (PT, MX):
        metrics = set(whole.loc[whole["config.arm"] == arm, "metric"])
        assert {"train_time_s", "predict_time_s", "MASE", "sMAPE", "mean_wQL"} <= metrics
        values = whole[whole["config.arm"] == arm].set_index("metric").value
        assert values.train_time_s > 0 and values.predict_time_s > 0 and values.MASE > 0 and 0 < values.sMAPE <= 2
    epochs = m[(m.step == 0) & (m.metric == "train_loss")]
    assert len(epochs) == 2 and np.isfinite(epochs.value).all()
    assert {p.name for p in REPO.iterdir()} == before  # Lightning wrote nothing into the repo
    assert run_sweep("deepar", "smoke", progress="none").done == 0  # resumable: nothing left to run


@pytest.mark.slow
def test_unavailable_dataset_fails_fast_with_the_reason(tmp_store, monkeypatch, tmp_path):
    monkeypatch.setenv("FWBENCH_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("FWBENCH_OFFLINE", "1")
    summary = run_sweep("deepar", "smoke", {"datasets": ["m4_daily"]}, progress="none", timeout_s=120)
    assert summary.done == 0 and len(summary.failed) == 2
    assert all("'m4_daily' is unavailable" in f["error"] for f in summary.failed)
    assert analysis.unavailable("smoke", {"datasets": ["m4_daily"]}).dataset.tolist() == ["m4_daily"]


def test_profile_call_attributes_time_by_module():
    import pandas as pd

    from fwbench.forecast import profile_call

    def work():
        for _ in range(200):
            pd.period_range("2000-01", periods=50, freq="M").to_timestamp()
        return 7

    result, phases = profile_call(work)
    assert result == 7 and set(phases) == {"data_pipeline", "model_code", "trainer_loop", "framework", "other"}
    assert phases["data_pipeline"] > phases["model_code"] == 0.0  # pandas counts as data pipeline


def test_status_covers_deepar(tmp_store, capsys):
    from fwbench.cli import main

    ResultsStore(tmp_store)  # an empty store: status of a missing one is an error
    assert main(["status", "--profile", "smoke"]) == 0
    out = capsys.readouterr().out
    assert "deepar/smoke: 0 of 2 done, 2 missing or failed" in out
    assert main(["status", "--profile", "gap"]) == 0  # a profile only deepar has: imdb is left out, no error
    assert "deepar/gap: 0 of 9 done" in capsys.readouterr().out
