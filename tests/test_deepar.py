"""The DeepAR / Monash study: plans, option validation, preflight errors, analysis on planted numbers, and (slow)
the smoke profile through the real runner."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fwbench import ledger, prose
from fwbench.analysis import Results
from fwbench.analysis import deepar as analysis
from fwbench.analysis import deepar_conditions as variants
from fwbench.analysis import deepar_coverage as coverage_analysis
from fwbench.errors import FwbenchError
from fwbench.pages import render_markdown
from fwbench.planning import plan
from fwbench.runner import run_sweep
from fwbench.store import ResultsStore
from fwbench.studies import deepar as study

REPO = Path(__file__).resolve().parents[1]
# the staged Monash files, found only through FWBENCH_DATA_DIR (tests/conftest.py sets a default)
STAGED_MONASH = Path(os.environ["FWBENCH_DATA_DIR"]) / "monash" if os.environ.get("FWBENCH_DATA_DIR") else None
needs_staged = pytest.mark.skipif(
    STAGED_MONASH is None or not (STAGED_MONASH / "MANIFEST.csv").exists(),
    reason="FWBENCH_DATA_DIR is unset or has no staged Monash data (monash/MANIFEST.csv)",
)
MX, PT = study.STUDY.reference_arm("mxnet"), study.STUDY.reference_arm("torch")


def test_profiles_plan():
    smoke = plan("deepar", "smoke")
    assert sorted((t.config["dataset"], t.config["arm"], t.config["seed"], t.env) for t in smoke) == [
        ("m1_yearly", "mxnet-hybrid-partial", 42, "gluonts-0.13"),
        ("m1_yearly", "mxnet-hybrid-partial", 42, "main"),
        ("m1_yearly", "torch-eager", 42, "gluonts-0.13"),
        ("m1_yearly", "torch-eager", 42, "main"),
    ]
    # the versions part: the main part's configs in the post's gluonts, its own trials (issue 23)
    main = {t.config["arm"]: t for t in smoke if t.config["part"] == "main"}
    for t in (t for t in smoke if t.config["part"] == "versions"):
        assert {k: v for k, v in t.config.items() if k not in ("part", "env", "env_lock")} == {
            k: v for k, v in main[t.config["arm"]].config.items() if k != "part"
        }
        assert t.config["env"] == "gluonts-0.13" and t.trial_id != main[t.config["arm"]].trial_id
    assert "env" not in main["torch-eager"].config
    quick = plan("deepar", "quick")
    assert {t.config["dataset"] for t in quick} == set(study.QUICK_DATASETS) and len(quick) == 2 * len(
        study.QUICK_DATASETS
    )
    full = plan("deepar", "full")
    assert len(full) == 41 * 2 * 5 and {t.config["seed"] for t in full} == {42, 43, 44, 45, 46}
    assert all(t.config["epochs"] == 100 and t.config["num_batches_per_epoch"] == 50 for t in full)
    assert len({t.trial_id for t in full}) == len(full)
    gap = plan("deepar", "gap")
    assert {t.config["arm"] for t in gap} == set(study.STUDY.arm_names)
    hyb = {t.config["arm"]: (t.config["hybridize_train"], t.config["hybridize_predict"]) for t in gap}
    assert hyb == {
        "torch-eager": (None, None),
        "mxnet-hybrid-partial": (True, False),
        "mxnet-hybrid-full": (True, True),
        "mxnet-imperative": (False, False),
    }
    assert all("hybridize" not in t.config for t in gap)  # one field per network, never an ambiguous one


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


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"datasets": ["m5"]}, "unknown datasets value"),
        ({"datasets": ["kaggle_web_traffic_daily"]}, "no Monash lag"),
        ({"arms": ["jax"]}, "unknown arms value"),
        ({"seeds": [42, 42]}, "lists a value twice"),
        ({"epochs": 0}, "epochs must be >= 1"),
        ({"batch": 3}, "unknown option 'batch'"),
    ],
)
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
def _plant(
    store: ResultsStore,
    overrides: dict,
    slow: float,
    seeds_noise: float = 0.05,
    factors: dict | None = None,
    extra: dict | None = None,
    per_trial: dict | None = None,
    predict_factor: dict | None = None,
    dataset_factor=None,
    cpu_of_seed=None,
) -> None:
    """Planted trials: the MXNet reference arm ``slow`` times the rest (other arms by ``factors``, or by
    ``dataset_factor(dataset, arm)``); forecasting scaled alike unless ``predict_factor`` says otherwise;
    ``extra`` whole-trial values for every trial, ``per_trial`` for one (arm, seed); ``cpu_of_seed(seed)``: the
    ``cpu_id`` each trial's provenance records (default: one AMD EPYC model)."""
    rng = np.random.default_rng(0)
    for t in plan("deepar", "smoke", overrides):
        arm, seed = t.config["arm"], t.config["seed"]
        factor = (factors or {}).get(arm, slow if arm == MX else 1.0)
        if dataset_factor is not None:
            factor = dataset_factor(t.config["dataset"], arm)
        train = 10.0 * factor * (1 + seeds_noise * rng.standard_normal())
        values = {
            "train_time_s": train,
            "predict_time_s": 2.0 * (predict_factor or {}).get(arm, factor),
            "MASE": 1.0 + 0.1 * factor,
            "sMAPE": 0.2,
            "mean_wQL": 0.1,
            "fit_overhead_s": 1.0,
            "data_time_s": 0.5,
            **(extra or {}),
            **(per_trial or {}).get((arm, seed), {}),
        }
        meas = [(-1, k, v) for k, v in values.items()] + [(0, "train_loss", 3.0), (0, "epoch_time_s", train - 1)]
        store.record(
            trial_id=t.trial_id,
            study="deepar",
            status="done",
            config=t.config,
            provenance={
                "host": "h",
                "dataset_kind": "original",
                "cpu_id": cpu_of_seed(seed) if cpu_of_seed else "AuthenticAMD/25/17/1",
            },
            summary={},
            measurements=meas,
            profile="smoke",
        )


AMD, INTEL = "AuthenticAMD/25/17/1", "GenuineIntel/6/85/7"


def test_a_planted_two_cpu_store_is_never_pooled(tmp_store):
    """The same grid on an AMD EPYC (MXNet 2x PyTorch) and, as a condition naming its CPU, on an Intel Xeon (4x):
    each condition reads its own trials. Trials that name no CPU but ran on two models (a resumed run that moved)
    keep the model that ran most of the part, and the others are counted, not pooled."""
    store = ResultsStore(tmp_store)
    seeds = {"seeds": [42, 43, 44, 45, 46]}
    _plant(store, seeds, slow=2.0, seeds_noise=0.01)
    _plant(store, {**seeds, "cpu": "GenuineIntel/6/85"}, slow=4.0, seeds_noise=0.01, cpu_of_seed=lambda s: INTEL)
    amd = analysis.load_trials(Results(store, "smoke", {"deepar": seeds}))
    intel = analysis.load_trials(Results(store, "smoke", {"deepar": {**seeds, "cpu": "GenuineIntel/6/85"}}))
    assert (
        len(amd) == len(intel) == 10
        and set(amd.cpu) == {"AuthenticAMD/25/17"}
        and set(intel.cpu) == {"GenuineIntel/6/85"}
    )
    assert 1.9 < analysis.ratio_table(amd).iloc[0].ratio < 2.1 and 3.8 < analysis.ratio_table(intel).iloc[0].ratio < 4.2

    mixed = ResultsStore(tmp_store.with_name("mixed.sqlite"))
    _plant(mixed, seeds, slow=2.0, seeds_noise=0.01, cpu_of_seed=lambda s: AMD if s <= 44 else INTEL)
    kept = analysis.load_trials(Results(mixed, "smoke", {"deepar": seeds}))
    assert sorted(set(kept.seed)) == [42, 43, 44] and set(kept.cpu) == {"AuthenticAMD/25/17"}
    assert kept.attrs["other_cpu_trials"] == {("every part", "GenuineIntel/6/85"): 4}
    assert 1.9 < analysis.ratio_table(kept).iloc[0].ratio < 2.1


def test_analysis_recovers_a_planted_ratio(tmp_store):
    store = ResultsStore(tmp_store)
    overrides = {"seeds": [42, 43, 44, 45, 46]}
    _plant(store, overrides, slow=3.0)
    trials = analysis.load_trials(Results(store, "smoke", {"deepar": overrides}))
    assert len(trials) == 10 and set(trials.dataset_kind) == {"original"}
    ratios = analysis.ratio_table(trials)
    r = ratios.iloc[0]
    assert r.dataset == "m1_yearly" and 2.5 < r.ratio < 3.5 and r.ci_low < 3.0 < r.ci_high
    tot = analysis.totals(trials)
    assert tot.loc[MX, "n_trials"] == 5 and math.isclose(
        tot.loc[MX, "predict_time_s"] / tot.loc[PT, "predict_time_s"], 3.0
    )
    assert tot.loc[MX, "post_train_s"] == 395_807 and tot.loc[PT, "post_train_s"] == 88_756  # the post's totals
    acc = analysis.accuracy_table(trials)
    assert acc.loc["m1_yearly", ("MASE", PT)] < acc.loc["m1_yearly", ("MASE", MX)]
    text = prose.deepar_headline(trials, "smoke")
    assert "MXNet trained slower on 1 of 1 dataset(s)" in text and "95 % CI" in text
    assert "PyTorch had the lower MASE on 1 of 1" in text
    wins = analysis.mase_wins(trials, acc)  # the count the answer quotes too
    assert wins == {"n": 1, "lower": {MX: 0, PT: 1}, "apart": wins["apart"], "seeds": 5}
    mase = trials.groupby("arm").MASE
    assert wins["apart"] == {MX: 0, PT: int(mase.max()[PT] < mase.min()[MX])}
    br = analysis.breakdown_table(trials)
    assert math.isclose(
        br.loc[br.arm == PT, "share_data"].iloc[0], 0.5 / trials[trials.arm == PT].train_time_s.median(), rel_tol=1e-9
    )
    # a different profile's trials are not mixed in
    assert analysis.load_trials(Results(store, "smoke", {"deepar": {"seeds": [42]}})).seed.tolist() == [42, 42]


def test_mase_ratio_pairs_by_dataset():
    """Each arm's median over datasets may come from different datasets; the ratio pairs them. Here MXNet is 2x
    worse on one dataset and 2x better on another (a paired ratio of 1), while its median MASE lies below PyTorch's."""
    rows = [("a", MX, 2.0), ("a", PT, 1.0), ("b", MX, 4.0), ("b", PT, 8.0), ("c", MX, 6.0), ("c", PT, 6.0)]
    trials = pd.DataFrame([{"dataset": d, "arm": a, "seed": 42, "MASE": v, "sMAPE": v, "mean_wQL": v,
                            "n_series_dropped": 0} for d, a, v in rows])  # fmt: skip
    q = analysis.mase_ratio(analysis.accuracy_table(trials))
    assert math.isclose(q.value, 1.0) and q.n == "3 datasets"
    assert trials[trials.arm == MX].MASE.median() < trials[trials.arm == PT].MASE.median()
    assert analysis.mase_ratio(analysis.accuracy_table(trials[trials.arm == MX])) is None


def test_one_seed_gives_a_nan_ci_and_says_so(tmp_store):
    store = ResultsStore(tmp_store)
    _plant(store, {}, slow=2.0)
    trials = analysis.load_trials(Results(store, "smoke"))
    r = analysis.ratio_table(trials).iloc[0]  # training time, the post's measure
    assert math.isclose(
        r.ratio,
        trials.loc[trials.arm == MX, "train_time_s"].iloc[0] / trials.loc[trials.arm == PT, "train_time_s"].iloc[0],
    )
    assert np.isnan(r.ci_low) and np.isnan(r.ci_high)
    assert "no CI: one seed per arm" in prose.deepar_headline(trials, "smoke")


def test_hybridize_effect_compares_each_network_whose_hybridization_differs(tmp_store):
    store = ResultsStore(tmp_store)
    overrides = {"arms": list(study.STUDY.arm_names), "seeds": [42, 43, 44]}
    _plant(store, overrides, slow=2.0, factors={"mxnet-imperative": 6.0, "mxnet-hybrid-full": 1.0})
    trials = analysis.load_trials(Results(store, "smoke", {"deepar": overrides}))
    effect = analysis.hybridize_effect(trials).set_index(["arm", "part"])
    # imperative differs from the reference in training only; hybrid-full in forecasting only
    assert sorted(effect.index) == [("mxnet-hybrid-full", "forecasting"), ("mxnet-imperative", "training")]
    assert set(effect.baseline) == {MX}
    full = effect.loc[("mxnet-hybrid-full", "forecasting")]
    assert (full.numerator, full.denominator, full.metric) == (MX, "mxnet-hybrid-full", "predict_time_s")
    assert math.isclose(full.ratio, 2.0)  # planted: predict 2 s x factor, no noise; imperative / hybridized
    imp = effect.loc[("mxnet-imperative", "training")]
    assert (imp.numerator, imp.denominator, imp.metric) == ("mxnet-imperative", MX, "train_time_s")
    assert 2.5 < imp.ratio < 3.5
    labels = study.STUDY.labels()
    text = prose.deepar_gap(trials)
    assert f"{labels[MX]} / {labels['mxnet-hybrid-full']}, forecasting: 2.00x" in text
    assert f"{labels['mxnet-imperative']} / {labels[MX]}, training:" in text


def test_labels_say_what_each_mxnet_arm_hybridizes():
    labels = study.STUDY.labels()
    assert "forecasting imperative" in labels[MX] and "training hybridized" in labels[MX]
    assert "training and forecasting hybridized" in labels["mxnet-hybrid-full"]
    assert study.hybridization(MX) == {"hybridize_train": True, "hybridize_predict": False}
    assert study.hybridization(PT) == {"hybridize_train": None, "hybridize_predict": None}
    import json

    cells = json.loads((REPO / "notebooks" / "02_deepar_monash.ipynb").read_text())["cells"]
    prose = " ".join(" ".join("".join(c["source"]).split()) for c in cells if c["cell_type"] == "markdown")
    assert (
        "forecasting runs imperatively" in prose
        and "step by step over context + prediction length (hybridized by default)" not in prose
    )  # the old wording called MXNet's forecasting hybridized


def test_unavailable_dataset_is_listed(tmp_store, monkeypatch):
    monkeypatch.setenv("FWBENCH_OFFLINE", "1")
    ResultsStore(tmp_store)  # an empty store: reading a missing one is an error
    missing = analysis.unavailable(
        Results.open("full", {"deepar": {"datasets": ["m4_daily", "m1_yearly"], "seeds": [42]}})
    )
    if STAGED_MONASH is not None and (STAGED_MONASH / "MANIFEST.csv").exists():
        assert missing.dataset.tolist() == ["m4_daily"]
    assert "m4_daily" in missing.dataset.tolist() and missing.reason.str.len().min() > 0


# -- the real thing ---------------------------------------------------------------------------------------------
@pytest.mark.slow
@needs_staged
def test_smoke_sweep_through_the_runner(tmp_store, monkeypatch):
    monkeypatch.setenv("FWBENCH_OFFLINE", "1")
    before = {p.name for p in REPO.iterdir()}
    main_only = {"versions_part": False}  # the versions part (gluonts 0.13.3) is tested on its own
    summary = run_sweep("deepar", "smoke", main_only, progress="none", timeout_s=300)
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
    assert run_sweep("deepar", "smoke", main_only, progress="none").done == 0  # resumable: nothing left to run
    # the variants part: the main trials are already stored; 1 thread and oneDNN off run in both frameworks
    variants = {"variants_part": {"datasets": ["m1_yearly"], "seeds": [42], "threads": 1}, **main_only}
    summary = run_sweep("deepar", "smoke", variants, progress="none", timeout_s=300)
    assert summary.ok and summary.done == 4, summary.failed
    t = store.trials("deepar")
    active = dict(zip(zip(t["config.part"], t["config.arm"]), t["summary.onednn_active"]))
    assert active == {
        ("main", PT): True,
        ("main", MX): True,
        ("threads", PT): True,
        ("threads", MX): True,
        ("onednn", PT): False,
        ("onednn", MX): False,
    }
    assert set(t.loc[t["config.part"] == "threads", "provenance.thread_env.OMP_NUM_THREADS"].astype(int)) == {1}
    # the coverage part: training only (no forecast, no accuracy), its per-batch cost set beside the main part
    coverage = {"coverage_part": {"datasets": ["m1_yearly"], "seeds": [42], "epochs": 3}, **main_only}
    summary = run_sweep("deepar", "smoke", coverage, progress="none", timeout_s=300)
    assert summary.ok and summary.done == 2, summary.failed
    m = store.measurements("deepar")
    covered = m[m["config.part"] == "coverage"]
    assert {"train_time_s", "fit_overhead_s"} <= set(covered.metric)
    assert not {"predict_time_s", "MASE"} & set(covered.metric)
    assert len(covered[covered.metric == "epoch_time_s"]) == 2 * 3
    rows = coverage_analysis.cost_rows(Results(store, "smoke", {"deepar": coverage}))
    assert len(rows) == 2 and (rows.c_batch > 0).all() and set(rows.arm) == {PT, MX}
    check = coverage_analysis.check_against_main(Results(store, "smoke", {"deepar": coverage}))
    assert len(check) == 2 and np.isfinite(check.error).all() and (check.predicted_train_s > 0).all()
    text = render_markdown("deepar_coverage_check", summary_only=False, **coverage_analysis.check_facts(check))
    assert f"{100 * check.error.abs().max():.1f} %" in text and "trials predicted within 10 %" in text


@pytest.mark.slow
def test_unavailable_dataset_fails_fast_with_the_reason(tmp_store, monkeypatch, tmp_path):
    monkeypatch.setenv("FWBENCH_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("FWBENCH_OFFLINE", "1")
    summary = run_sweep("deepar", "smoke", {"datasets": ["m4_daily"]}, progress="none", timeout_s=120)
    assert summary.done == 0 and len(summary.failed) == 4  # both core arms in both environments
    assert all("'m4_daily' is unavailable" in f["error"] for f in summary.failed)
    assert analysis.unavailable(Results.open("smoke", {"deepar": {"datasets": ["m4_daily"]}})).dataset.tolist() == [
        "m4_daily"
    ]


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
    assert "deepar/smoke: 0 of 4 done, 4 missing or failed" in out  # the main and the versions part
    assert main(["status", "--profile", "gap"]) == 0  # a profile only deepar has: imdb is left out, no error
    assert "deepar/gap: 0 of 12 done" in capsys.readouterr().out


# -- accuracy over finite series -------------------------------------------------------------------------------
def _series(target, start="2000-01"):
    import pandas as pd

    return {"target": np.asarray(target, dtype=float), "start": pd.Period(start, freq="M")}


def _forecast(record, h, value):
    from gluonts.model.forecast import SampleForecast

    start = record["start"] + (len(record["target"]) - h)
    samples = value + np.linspace(-1.0, 1.0, 50)[:, None] * np.ones((50, h))
    return SampleForecast(samples=samples, start_date=start, item_id=None)


def test_a_zero_scale_series_is_dropped_from_mase_and_counted():
    from fwbench.forecast import evaluate

    h = 4
    walk = _series(np.cumsum(np.arange(1, 21) % 5 + 1.0))  # seasonal-naive scale > 0
    flat = _series([5.0] * 16 + [6.0, 7.0, 8.0, 9.0])  # training part constant: seasonal-naive scale 0
    other = _series(np.arange(20) * 2.0 + 3.0)
    fc_walk, fc_flat, fc_other = _forecast(walk, h, 40.0), _forecast(flat, h, 5.0), _forecast(other, h, 35.0)
    both = evaluate([fc_walk, fc_flat], [walk, flat], [h, h], seasonality=1)
    alone = evaluate([fc_walk], [walk], [h], seasonality=1)
    assert both["n_series_dropped"] == 1 and both["n_series_scored"] == 2
    assert math.isfinite(both["MASE"]) and math.isclose(both["MASE"], alone["MASE"])  # MASE over the finite one
    assert both["sMAPE"] != alone["sMAPE"]  # sMAPE is finite for the flat series: it stays in
    assert both["n_series_dropped_sMAPE"] == 0 and both["n_series_dropped_wQL"] == 0
    none = evaluate([fc_walk, fc_other], [walk, other], [h, h], seasonality=1)
    assert none["n_series_dropped"] == 0 and math.isfinite(none["MASE"])
    only_flat = evaluate([fc_flat], [flat], [h], seasonality=1)
    assert only_flat["n_series_dropped"] == 1 and math.isnan(only_flat["MASE"])  # NaN, never a masked 0.0


def test_dropped_series_show_in_the_accuracy_table_and_prose(tmp_store):
    store = ResultsStore(tmp_store)
    _plant(store, {}, slow=2.0, extra={"n_series_dropped": 36.0})
    trials = analysis.load_trials(Results(store, "smoke"))
    acc = analysis.accuracy_table(trials)
    assert acc.loc["m1_yearly", ("n_series_dropped", MX)] == 36
    assert "series left out of MASE for a zero seasonal-naive scale: m1_yearly 36" in prose.deepar_headline(
        trials, "smoke"
    )
    store2 = ResultsStore(tmp_store.parent / "none.sqlite")
    _plant(store2, {}, slow=2.0, extra={"n_series_dropped": 0.0})
    text = prose.deepar_headline(analysis.load_trials(Results(store2, "smoke")), "smoke")
    assert "no series was left out of MASE here" in text


# -- stopped early -----------------------------------------------------------------------------------------------
def test_a_deepar_trial_that_stopped_early_is_flagged():
    from fwbench.studies.deepar_trial import epochs_run

    assert epochs_run(37, 100) == {"epochs_run": 37, "epochs_set": 100, "stopped_early": True}
    assert epochs_run(100, 100)["stopped_early"] is False


def test_stopped_early_trials_show_in_the_tables(tmp_store):
    store = ResultsStore(tmp_store)
    overrides = {"seeds": [42, 43], "epochs": 10}
    _plant(store, overrides, slow=2.0, extra={"epochs_run": 10.0}, per_trial={(MX, 43): {"epochs_run": 4.0}})
    trials = analysis.load_trials(Results(store, "smoke", {"deepar": overrides}))
    assert trials.stopped_early.sum() == 1
    table = analysis.runtime_table(trials).set_index("arm")
    assert table.loc[MX, "n_stopped_early"] == 1 and table.loc[PT, "n_stopped_early"] == 0
    early = analysis.stopped_early(trials)
    assert early[["arm", "seed", "epochs_run", "epochs"]].values.tolist() == [[MX, 43, 4, 10]]
    note = prose.deepar_stopped_early(trials)
    assert "1 trial(s) stopped early" in note and f"m1_yearly / {MX} / seed 43: 4 of 10" in note
    assert note in prose.deepar_headline(trials, "smoke")
    store2 = ResultsStore(tmp_store.parent / "full.sqlite")
    _plant(store2, overrides, slow=2.0, extra={"epochs_run": 10.0})
    assert prose.deepar_stopped_early(analysis.load_trials(Results(store2, "smoke", {"deepar": overrides}))).startswith(
        "No trial stopped early"
    )


# -- claim B as the post stated it: training time ----------------------------------------------------------------
def test_headline_compares_training_time_with_the_post(tmp_store):
    store = ResultsStore(tmp_store)
    overrides = {"seeds": [42, 43, 44]}
    _plant(store, overrides, slow=4.0, predict_factor={MX: 1.0})  # MXNet trains 4x slower, forecasts as fast
    trials = analysis.load_trials(Results(store, "smoke", {"deepar": overrides}))
    h = analysis.headline(trials)
    assert 3.5 < h["train_ratio"] < 4.5 and math.isclose(h["predict_ratio"], 1.0)
    assert h["total_ratio"] < h["train_ratio"]  # forecasting dilutes the ratio: not the post's measure
    assert math.isclose(h["post_ratio"], 395_807 / 88_756)
    text = prose.deepar_headline(trials, "smoke")
    # the training totals against the post's; their ratio is B's protocol-scale part, stated once (by the ledger),
    # and B's estimate is named as the coverage part's
    assert f"**{h['train_mxnet_s']:,.0f} s**" in text and "against the post's 395,807 s vs 88,756 s" in text
    assert "claim B's protocol-scale part" in text and "MXNet / PyTorch = **" not in text
    assert "claim B's estimate itself is the coverage part's" in text
    assert f"{h['total_ratio']:.2f}x" in text
    # the totals are sums over every dataset x seed trial of each arm, and say so
    n = h["n_datasets"] * 3
    assert h["n_summed"] == [n, n] and h["n_seeds"] == 3
    assert f"(each a sum over {n} trials, {h['n_datasets']} dataset(s) x 3 seed(s))" in text


def test_ratio_against_the_unrolled_window(tmp_store):
    store = ResultsStore(tmp_store)
    overrides = {"datasets": ["m1_yearly", "m1_quarterly", "tourism_monthly"], "seeds": [42, 43]}
    from fwbench.data import monash

    windows = {d: monash.info(d).context_length + monash.info(d).horizon for d in overrides["datasets"]}
    _plant(store, overrides, slow=1.0, dataset_factor=lambda d, arm: windows[d] / 5 if arm == MX else 1.0)
    trials = analysis.load_trials(Results(store, "smoke", {"deepar": overrides}))
    table = analysis.window_ratio_table(trials)
    assert table.window.tolist() == sorted(windows.values()) and table.dataset.tolist() == sorted(
        windows, key=windows.get
    )
    assert (table.train_ratio.diff().dropna() > 0).all() and analysis.window_trend(table) == 1.0
    assert {"train_ci_low", "train_ci_high", "total_ratio"} <= set(table.columns)
    assert "Spearman rank correlation 1.00" in prose.deepar_headline(trials, "smoke")
    from fwbench.plots import deepar as plots

    fig = plots.window_figure(trials)
    assert len(fig.axes[0].lines) >= 2


@pytest.mark.slow
@needs_staged
def test_hybrid_full_hybridizes_the_predictor_and_forecasts_the_same(tmp_store, monkeypatch):
    """gluonts 0.17's default MXNet predictor runs imperatively; ``mxnet-hybrid-full`` runs it as a cached graph.
    Same seed, same trained weights: the forecasts (and so the scores) are the same."""
    monkeypatch.setenv("FWBENCH_OFFLINE", "1")
    arms = [MX, "mxnet-hybrid-full"]
    summary = run_sweep("deepar", "smoke", {"arms": arms, "versions_part": False}, progress="none", timeout_s=300)
    assert summary.ok and summary.done == 2, summary.failed
    trials = ResultsStore(tmp_store).trials("deepar").set_index("config.arm")
    assert trials.loc[MX, "summary.predictor_hybridized"] in (False, 0)
    assert trials.loc["mxnet-hybrid-full", "summary.predictor_hybridized"] in (True, 1)
    assert trials.loc["mxnet-hybrid-full", "config.hybridize_predict"] in (True, 1)
    assert trials.loc[MX, "summary.MASE"] == pytest.approx(trials.loc["mxnet-hybrid-full", "summary.MASE"], rel=1e-5)
    assert (trials["summary.n_series_dropped"] == 0).all()  # m1_yearly: every seasonal-naive scale > 0


# -- the variants part: 1 thread and oneDNN off, apart from the main part (issue 14) -------------------------------
def test_paper_plans_the_variants_part_apart_from_the_main_part():
    paper = [t.config for t in plan("deepar", "paper")]
    main = [c for c in paper if c["part"] == "main"]
    assert len(main) == 5 * 2 * 2 and {(c["threads"], c["onednn"]) for c in main} == {(2, True)}
    variants = study.PROFILES["paper"]["variants_part"]
    threads = [c for c in paper if c["part"] == "threads"]
    onednn = [c for c in paper if c["part"] == "onednn"]
    for part, (n_threads, flag) in ((threads, (variants["threads"], True)), (onednn, (2, False))):
        assert {(c["threads"], c["onednn"]) for c in part} == {(n_threads, flag)}
        assert sorted({c["dataset"] for c in part}) == sorted(variants["datasets"])
        assert {c["arm"] for c in part} == set(study.CORE_ARMS) and len(part) == 2 * len(variants["datasets"])
    protocol = [c for c in paper if c["part"] not in ("coverage", "contention", "post_conditions")]
    assert all(c["epochs"] == 100 and c["num_batches_per_epoch"] == 50 for c in protocol)
    assert all(t.config["part"] == "main" for t in plan("deepar", "quick"))  # no variants elsewhere
    off = next(c for c in onednn if c["arm"] == MX)
    assert study.describe(off).endswith("seed=42 oneDNN=off")
    assert study.describe(next(c for c in threads)).endswith(f"threads={variants['threads']}")
    with pytest.raises(FwbenchError, match="variants_part must be a dict with keys"):
        plan("deepar", "paper", {"variants_part": {"datasets": ["m1_yearly"]}})


# -- the post's conditions: k runs at once, no thread setting ---------------------------------------------------
def test_post_conditions_run_k_at_once_as_groups_of_one_dataset_and_framework_with_no_thread_setting():
    from fwbench.execute import child_env
    from fwbench.runner import runs_at_once

    trials = [t for t in plan("deepar", "paper") if t.config["part"] == "post_conditions"]
    spec = study.PROFILES["paper"]["post_conditions_part"]
    per_k = [len(spec["datasets"] if k <= 2 else spec["crowded_datasets"]) for k in spec["trials_at_once"]]
    assert len(trials) == sum(per_k) * len(spec["seeds"]) * 2
    assert {t.config["threads"] for t in trials} == {None} and not any(t.config["forecast"] for t in trials)
    for k in spec["trials_at_once"]:
        mine = [t.config for t in trials if t.config["trials_at_once"] == k]
        for i in range(0, len(mine), k):  # each group of k taken at once: one dataset, one framework, k seeds
            group = mine[i : i + k]
            assert len({(c["dataset"], c["arm"]) for c in group}) == 1 and len({c["seed"] for c in group}) == k
    take, left = runs_at_once(trials, 2)
    assert {t.config["trials_at_once"] for t in take} == {2} and left == {1: len(take), 4: len(trials) - 2 * len(take)}
    other = [t for t in plan("deepar", "paper") if t.config["part"] == "main"]
    assert runs_at_once(other, 2) == (other, {})  # a config that declares nothing runs in any run
    env = child_env(None)
    assert not {"OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"} & set(env)
    assert child_env(2)["OMP_NUM_THREADS"] == "2"
    with pytest.raises(FwbenchError, match="do not split into groups of \\[4\\]"):
        plan("deepar", "paper", {"post_conditions_part": {**spec, "seeds": [42, 43]}})


def _plant_variants(store: ResultsStore) -> dict:
    """Main part: MXNet 20 s, PyTorch 10 s (seeds 42, 43: +-5 %); at 1 thread MXNet 30 s, PyTorch 12 s; with
    oneDNN off MXNet 40 s, PyTorch 11 s."""
    overrides = {"seeds": [42, 43], "variants_part": {"datasets": ["m1_yearly"], "seeds": [42], "threads": 1}}
    train = {
        ("main", MX): 20.0,
        ("main", PT): 10.0,
        ("threads", MX): 30.0,
        ("threads", PT): 12.0,
        ("onednn", MX): 40.0,
        ("onednn", PT): 11.0,
        ("versions", MX): 15.0,  # the versions part (gluonts-0.13): MXNet / PyTorch 1.5 there
        ("versions", PT): 10.0,
    }
    gluonts = {False: "0.17.0", True: "0.13.3"}
    for t in plan("deepar", "smoke", overrides):
        c = t.config
        seconds = train[(c["part"], c["arm"])] * (1.05 if c["seed"] == 43 else 1.0)
        values = {"train_time_s": seconds, "predict_time_s": 1.0, "MASE": 1.0, "sMAPE": 0.2, "mean_wQL": 0.1}
        store.record(
            trial_id=t.trial_id,
            study="deepar",
            status="done",
            config=c,
            provenance={"host": "h", "dataset_kind": "original", "gluonts_version": gluonts[c["part"] == "versions"]},
            summary={},
            measurements=[(-1, k, v) for k, v in values.items()],
            profile="smoke",
        )
    return overrides


def test_variants_stay_out_of_b_and_are_read_apart(tmp_store):
    store = ResultsStore(tmp_store)
    overrides = _plant_variants(store)
    main = analysis.load_trials(Results(store, "smoke", {"deepar": overrides}))
    assert set(main.part) == {"main"} and len(main) == 4  # 2 seeds x 2 arms: the variants never reach B
    table = variants.variants_table(
        analysis.load_trials(Results(store, "smoke", {"deepar": overrides}), parts=None)
    ).set_index("part")
    assert list(table.index) == ["main", "threads", "onednn"] and set(table.n_seeds) == {1}
    assert table.loc["main", "train_ratio"] == pytest.approx(2.0)  # seed 42 only, like the variants
    assert table.loc["threads", "train_ratio"] == pytest.approx(2.5)
    assert table.loc["onednn", "train_ratio"] == pytest.approx(40 / 11)
    assert table.loc["threads", "mxnet_vs_main"] == pytest.approx(1.5)
    assert table.loc["onednn", "torch_vs_main"] == pytest.approx(1.1)
    assert table.loc["threads", "setting"] == "1 thread(s), oneDNN on"
    assert table.seed_spread.iloc[0] == pytest.approx(0.05)
    text = prose.deepar_variants(table.reset_index())
    assert "| m1_yearly (8) | 2 threads, oneDNN off | 1 | 40 s | 11 s | 3.64 |" in text and "m1_yearly 5 %" in text
    assert prose.deepar_variants(variants.variants_table(main)).startswith("_No variant trials")


def test_the_versions_part_is_read_apart_one_environment_per_ratio(tmp_store):
    store = ResultsStore(tmp_store)
    overrides = _plant_variants(store)
    assert set(analysis.load_trials(Results(store, "smoke", {"deepar": overrides})).env) == {
        "main"
    }  # B never sees gluonts-0.13
    everything = analysis.load_trials(Results(store, "smoke", {"deepar": overrides}), parts=None)
    table = variants.versions_table(everything).set_index("env")
    assert list(table.index) == ["main", "gluonts-0.13"] and set(table.n_seeds) == {2}
    assert table.loc["main", "train_ratio"] == pytest.approx(20.5 / 10.25)  # medians over the seeds both ran
    assert table.loc["gluonts-0.13", "train_ratio"] == pytest.approx(1.5)
    assert "| m1_yearly (8) | gluonts-0.13 | 2 | 15.4 s | 10.2 s | 1.50 |" in prose.deepar_versions(table.reset_index())
    assert "versions" not in set(variants.variants_table(everything).part)
    main = analysis.load_trials(Results(store, "smoke", {"deepar": overrides}))
    assert prose.deepar_versions(variants.versions_table(main)).startswith("_No trials of the versions part")
    # the ledger: B judged on the main part, the versions part beside it as context (never judged)
    b = next(c for c in ledger.CLAIMS if c.id == "B")
    parts = b.evaluate(ledger.load(Results(store, "smoke", {"deepar": overrides})))
    (versions,) = [p for p in parts if "gluonts-0.13" in p.label]
    assert versions.verdict == "context" and "gluonts 0.13.3" in versions.label and "0.17" not in versions.label
    assert versions.estimate == pytest.approx((15 + 15.75) / (10 + 10.5)) and versions.n == "2 dataset x seed pairs"
    assert parts[0].estimate == pytest.approx((20 + 21) / (10 + 10.5))  # the judged part: main only


def _window_trials(mx_cost, pt_cost, windows=(8, 27, 73), seeds=(42, 43)) -> pd.DataFrame:
    """Planted main-part trials: seconds per batch = cost(window) x (1 +- 1 %), 100 x 50 batches each."""

    rows = []
    for w in windows:
        for i, seed in enumerate(seeds):
            for arm, cost in ((MX, mx_cost), (PT, pt_cost)):
                rows.append(
                    {
                        "dataset": f"d{w}",
                        "arm": arm,
                        "seed": seed,
                        "window": w,
                        "part": "main",
                        "epochs": 100,
                        "num_batches_per_epoch": 50,
                        "train_time_s": 5000 * cost(w) * (1.01 if i else 0.99),
                    }
                )
    return pd.DataFrame(rows)


def test_the_window_model_recovers_planted_lines_and_predicts_nothing_beyond_them():
    # MXNet 10 ms + 2 ms per step, PyTorch 10 ms + 0.5 ms per step
    trials = _window_trials(lambda w: 0.010 + 0.002 * w, lambda w: 0.010 + 0.0005 * w)
    model = variants.window_model(trials)
    assert model[MX] == pytest.approx((0.010, 0.002), rel=0.05)
    assert model[PT] == pytest.approx((0.010, 0.0005), rel=0.05)
    facts = variants.window_facts(trials)
    assert facts["mx_line"] == model[MX] and facts["fitted_windows"] == (8, 73)
    text = render_markdown("deepar_window", **facts)
    assert "MXNet 10.0 ms + 2.00 ms x window" in text and "windows 8-73" in text
    # the post's whole list is the coverage part's prediction, referred to, never computed here
    assert "predicted once, from the coverage part" in text and "**" not in text
    assert "cannot be measured" not in text and "with a CI" in text  # the 1-thread row with a CI is named
    one_window = variants.window_facts(_window_trials(lambda w: 0.01, lambda w: 0.01, windows=(8,)))
    assert render_markdown("deepar_window", **one_window).startswith("_Too few windows")


@needs_staged
def test_the_coverage_datasets_are_the_staged_datasets_of_the_post():
    from fwbench.data import monash

    manifest = pd.read_csv(STAGED_MONASH / "MANIFEST.csv")
    staged = set(manifest.loc[manifest.kind.isin(["original", "rebuilt"]), "dataset_key"])
    assert set(study.COVERAGE_DATASETS) == staged & set(monash.names(in_2024_post=True))
    assert len(study.COVERAGE_DATASETS) == len(set(study.COVERAGE_DATASETS)) == 27


def test_paper_plans_the_coverage_part_as_training_only_trials():
    trials = plan("deepar", "paper")
    coverage = [t.config for t in trials if t.config["part"] == "coverage"]
    assert len(coverage) == len(study.COVERAGE_DATASETS) * 2 * 2  # datasets x seeds x core arms
    assert all(c["forecast"] is False and c["epochs"] == 4 and c["num_batches_per_epoch"] == 50 for c in coverage)
    assert {c["threads"] for c in coverage} == {2}
    training_only = ("coverage", "contention", "post_conditions")
    assert all("forecast" not in t.config for t in trials if t.config["part"] not in training_only)
    with pytest.raises(FwbenchError, match="coverage_part.epochs"):
        plan("deepar", "smoke", {"coverage_part": {"datasets": ["m1_yearly"], "seeds": [42], "epochs": 1}})


def test_coverage_cost_predicts_planted_protocol_trials():
    rows = pd.DataFrame(
        [
            {"trial_id": "a", "dataset": "d", "arm": MX, "seed": 1, "window": 8, "epochs": 4,
             "num_batches_per_epoch": 50, "c_batch": 0.02, "warmup": 1.0, "fit_fixed": 0.5, "train_time_s": 6.0},
            {"trial_id": "b", "dataset": "d", "arm": MX, "seed": 2, "window": 8, "epochs": 4,
             "num_batches_per_epoch": 50, "c_batch": 0.04, "warmup": 3.0, "fit_fixed": 0.5, "train_time_s": 9.0},
        ]
    )  # fmt: skip
    table = coverage_analysis.cost_table(rows)
    (row,) = table.to_dict("records")
    assert row["n_trials"] == 2 and row["c_batch"] == pytest.approx(0.03) and row["c_batch_spread"] == pytest.approx(2)
    assert coverage_analysis.protocol_train_s(row, 100, 50) == pytest.approx(0.5 + 2.0 + 5000 * 0.03)


def test_coverage_costs_come_from_the_later_epochs_and_predict_the_main_part(tmp_store):
    """Planted: MXNet 40 ms per batch with a 2 s first-epoch warm-up and 1 s outside the epochs; the main part's
    100 x 50 trials measured 201 s (the model's 1 + 2 + 5000 x 0.04 = 203 s: +1 %) and 250 s (-18.8 %); the
    seed-43 coverage trial's one slow epoch (2.2 s) does not move the median."""
    store = ResultsStore(tmp_store)
    provenance = {"host": "h", "dataset_kind": "original"}
    overrides = {"versions_part": False, "epochs": 100, "num_batches_per_epoch": 50, "seeds": [42, 43],
                 "coverage_part": {"datasets": ["m1_yearly"], "seeds": [42, 43], "epochs": 4}}  # fmt: skip
    for t in plan("deepar", "smoke", overrides):
        c = t.config
        if c["arm"] != MX:
            continue
        if c["part"] == "coverage":
            epochs = [4.0, 2.0, 2.0 * (1.1 if c["seed"] == 43 else 1.0), 2.0]
            values = [(-1, "train_time_s", sum(epochs) + 1.0)] + [(i, "epoch_time_s", e) for i, e in enumerate(epochs)]
        else:
            values = [(-1, "train_time_s", 201.0 if c["seed"] == 42 else 250.0), (-1, "predict_time_s", 1.0)]
        boot = "b" if c["part"] != "coverage" and c["seed"] == 43 else "a"  # seed 43's protocol trial: another boot
        store.record(trial_id=t.trial_id, study="deepar", status="done", config=c, summary={}, measurements=values,
                     provenance={**provenance, "boot_id": boot}, profile="smoke")  # fmt: skip
    rows = coverage_analysis.cost_rows(Results(store, "smoke", {"deepar": overrides}))
    assert len(rows) == 2 and rows.c_batch.tolist() == pytest.approx([0.04, 0.04])  # the median ignores 2.2 s
    assert rows.warmup.tolist() == pytest.approx([2.0, 2.0]) and rows.fit_fixed.tolist() == pytest.approx([1.0, 1.0])
    check = coverage_analysis.check_against_main(Results(store, "smoke", {"deepar": overrides}))
    assert check.seed.tolist() == [42, 43] and check.predicted_train_s.tolist() == pytest.approx([203.0, 203.0])
    assert check.error.tolist() == pytest.approx([203 / 201 - 1, 203 / 250 - 1])
    text = render_markdown("deepar_coverage_check", summary_only=False, **coverage_analysis.check_facts(check))
    assert check.other_boot.tolist() == [False, True]
    assert "1 of 2 protocol trials predicted within 10 % (largest error 18.8 %); 1 of them ran on another boot" in text
    costs = coverage_analysis.cost_facts(coverage_analysis.cost_table(rows))
    assert "| m1_yearly | 8 | 40.0 | - | - | 2, 0 |" in render_markdown("deepar_costs", **costs)
    assert analysis.load_trials(Results(store, "smoke", {"deepar": overrides})).part.unique().tolist() == [
        "main"
    ]  # B never sees them


def test_paper_plans_the_contention_part_seed_by_seed_with_every_condition():
    trials = plan("deepar", "paper")
    contention = [t.config for t in trials if t.config["part"] == "contention"]
    part = study.CONTENTION_PART
    conditions = {(t, 0) for t in part["threads"]} | {(t, 1) for t in part["loaded_threads"]}
    assert {(4, 0), (8, 0), (2, 1)} <= conditions  # oversubscription and the background load are both there
    assert len(contention) == len(part["datasets"]) * len(part["seeds"]) * len(conditions) * 2
    assert {(c["threads"], c["background_load"]) for c in contention} == conditions
    assert all(c["forecast"] is False and c["epochs"] == part["epochs"] for c in contention)
    # every (seed, dataset) block holds all its conditions before the next block starts
    blocks = [(c["seed"], c["dataset"]) for c in contention]
    assert blocks == sorted(blocks, key=lambda b: (part["seeds"].index(b[0]), part["datasets"].index(b[1])))
    # no other part's config gains the key (their trial ids are unchanged)
    assert all("background_load" not in t.config for t in trials if t.config["part"] != "contention")
    assert "+1 burner" in study.describe(next(c for c in contention if c["background_load"]))


# -- B under the post's own conditions: a prediction per condition, chosen on the given chart datasets only -------
def _plant_post_conditions(store: ResultsStore) -> dict:
    """Coverage (2 threads, 1 run): MXNet 20 ms per batch, PyTorch 10 ms on m1_yearly; 40 and 10 on cif_2016.
    post_conditions on m1_yearly: 1 run with default threads MXNet 30 ms, PyTorch 10 ms (factors 1.5 and 1); 2 at
    once MXNet 60 ms, PyTorch 15 ms. Every epoch alike but the first (twice as long); +-2 % between the seeds."""
    from fwbench.analysis.deepar_coverage import DEFAULT_THREADS

    overrides = {"versions_part": False, "seeds": [42], "arms": [MX, PT],
                 "coverage_part": {"datasets": ["m1_yearly", "cif_2016"], "seeds": [42, 43], "epochs": 3},
                 "post_conditions_part": {"datasets": ["m1_yearly"], "seeds": [42, 43], "epochs": 3,
                                          "trials_at_once": [1, 2], "crowded_datasets": ["m1_yearly"]}}  # fmt: skip
    ms = {("coverage", "m1_yearly", MX): 20, ("coverage", "m1_yearly", PT): 10, ("coverage", "cif_2016", MX): 40,
          ("coverage", "cif_2016", PT): 10, (1, MX): 30, (1, PT): 10, (2, MX): 60, (2, PT): 15}  # fmt: skip
    for t in plan("deepar", "smoke", overrides):
        c = t.config
        if c["part"] == "main":
            continue
        key = (c["part"], c["dataset"], c["arm"]) if c["part"] == "coverage" else (c["trials_at_once"], c["arm"])
        epoch = ms[key] / 1000 * c["num_batches_per_epoch"] * (1.02 if c["seed"] == 43 else 1.0)
        epochs = [2 * epoch, epoch, epoch]
        values = [(-1, "train_time_s", sum(epochs) + 0.5), (-1, "omp_max_threads", 1.0 if c["arm"] == MX else 2.0)]
        store.record(trial_id=t.trial_id, study="deepar", status="done", config=c,
                     provenance={"host": "h", "dataset_kind": "original", "cpu_id": "GenuineIntel/6/207/2",
                                 "trials_sharing_host": c.get("trials_at_once", 1)},
                     summary={}, measurements=values + [(i, "epoch_time_s", e) for i, e in enumerate(epochs)],
                     profile="smoke")  # fmt: skip
    assert DEFAULT_THREADS == 0
    return overrides


def test_each_condition_predicts_from_its_own_trials_and_scales_the_rest_by_its_factor(tmp_store):
    from fwbench.analysis import deepar_prediction

    store = ResultsStore(tmp_store)
    overrides = _plant_post_conditions(store)
    post = deepar_prediction.predictions(Results(store, "smoke", {"deepar": overrides}))
    assert sorted((c.trials_at_once, c.threads_label) for c in post["conditions"].values()) == [
        (1, "2"), (1, "default"), (2, "default")]  # fmt: skip
    table = post["table"]
    n = len(deepar_prediction.monash.names(in_2024_post=True))
    assert len(table) == 3 * n and table.chosen.sum() == n  # one block per condition; the chosen one's rows
    assert set(table.columns) >= {"cpu", "trials_at_once", "threads", "chosen", "basis"}
    one = table[(table.trials_at_once == 1) & (table.threads == "default")].set_index("dataset")
    assert one.loc["m1_yearly", "basis"] == "measured" and one.loc["cif_2016", "basis"] == "scaled"
    assert one.loc["m1_yearly", "ours_mxnet_s_per_batch"] == pytest.approx(0.0303, rel=0.02)
    # cif_2016 ran only in the coverage part: its cost times the condition's factor (MXNet 1.5, PyTorch 1)
    assert one.loc["cif_2016", "ours_mxnet_s_per_batch"] == pytest.approx(0.040 * 1.5, rel=0.02)
    assert one.loc["cif_2016", "ours_pytorch_s_per_batch"] == pytest.approx(0.010, rel=0.02)
    assert (one.basis == "window line").any()  # the post's datasets no part ran: the window line, scaled
    two = table[table.trials_at_once == 2].set_index("dataset")
    assert two.loc["cif_2016", "predicted_post_ratio"] == pytest.approx(
        one.loc["cif_2016", "predicted_post_ratio"] * (60 / 30) / (15 / 10), rel=0.02
    )
    assert post["fits"].mxnet_omp_threads.tolist() == [1.0] * 3  # what MXNet chose, as recorded
    # the factor table measures each condition against its base on the same CPU, then the chosen one's prediction
    result = variants.load(Results(store, "smoke", {"deepar": overrides}))
    factors = result["factors"].set_index("key")
    key = next(k for k in factors.index if k.startswith("default_threads_"))
    assert factors.loc[key, "mxnet_slowdown"] == pytest.approx(1.5, rel=0.03)
    assert factors.loc[key, "effect"] == pytest.approx(1.5, rel=0.03)
    at_once = next(k for k in factors.index if k.startswith("at_once_"))
    assert factors.loc[at_once, "effect"] == pytest.approx((60 / 30) / (15 / 10), rel=0.03)
    assert factors.loc["chosen", "kind"] == "predicted" and factors.loc["residual", "kind"] == "residual"
    assert result["post"]["chosen"] == post["chosen"]  # the answer's paragraph and the table: one computation
    # the chosen row is what the condition adds over the coverage part's whole-list prediction (the unstaged
    # datasets' row is not counted again): B -> unstaged -> chosen -> residual chains to the post's whole gap
    assert factors.loc[["unstaged_datasets", "chosen", "residual"], "gap_share"].sum() == pytest.approx(1.0)
    assert (factors.cpu == "Intel Xeon 6/207").all()  # every row names the CPU its trials ran on
    chosen = deepar_prediction.facts(post)["chosen_ratio"]
    assert chosen.conditions == post["conditions"][post["chosen"]].conditions
    assert chosen.conditions["cpu"] == "Intel Xeon 6/207"
    from fwbench.plots import deepar_prediction as post_plots  # the legend names each condition as the pages do

    labels = post_plots.conditions_figure(post, deepar_prediction.chart()).axes[0].get_legend_handles_labels()[1]
    assert "Intel Xeon 6/207, 2 runs at once, the libraries' default threads" in labels


def test_the_choice_reads_the_given_chart_datasets_only():
    """Two conditions: A predicts 2.0 everywhere, B 4.5. On the given datasets (the post's ratios 3.2-6.3) B fits
    best. Planted chart values of 1.0 on the 20 datasets not given would make A the better fit if they were read:
    the choice is B with them and without them, and A when the given values themselves say 2."""
    from fwbench.analysis import deepar_prediction
    from fwbench.published.deepar2024 import CHART_GIVEN

    names = deepar_prediction.monash.names(in_2024_post=True)

    def table(ratio):
        return pd.DataFrame({"dataset": names, "window": 10, "measured": True, "predicted_post_ratio": ratio,
                             "predicted_post_mxnet_s": 100.0 * ratio, "predicted_post_pytorch_s": 100.0,
                             "ours_mxnet_s_per_batch": 0.01 * ratio, "ours_pytorch_s_per_batch": 0.01})  # fmt: skip

    tables = {"A": table(2.0), "B": table(4.5)}
    given = deepar_prediction.chart()
    assert sorted(given.dataset) == sorted(CHART_GIVEN)  # the constant is the reference file's list
    others = [d for d in names if d not in CHART_GIVEN]
    assert len(others) == 20
    planted = pd.concat([given, pd.DataFrame({"dataset": others, "post_mxnet_s": 100.0, "post_pytorch_s": 100.0})])
    assert deepar_prediction.choose(tables, given)[0] == "B"
    assert deepar_prediction.choose(tables, planted)[0] == "B"  # the other datasets' values change nothing
    all_names = tuple(names)
    assert deepar_prediction.choose(tables, planted, given=all_names)[0] == "A"  # read, they would have chosen A
    says_two = given.assign(post_mxnet_s=2.0 * given.post_pytorch_s)
    assert deepar_prediction.choose(tables, says_two)[0] == "A"
