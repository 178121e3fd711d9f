"""The studies beyond the posts: VGG16 (both frameworks, oneDNN on/off), GEMM peak, PyTorch -> ONNX -> runtimes.

The smoke profiles run through the real runner (one fresh process per trial) into a private store; the analysis
is checked on planted rows whose answer is known. GPU variants are marked ``gpu`` and skipped without CUDA."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from conftest import SmokeRun

from fwbench import prose
from fwbench.analysis import Results
from fwbench.errors import FwbenchError
from fwbench.store import ResultsStore
from fwbench.studies import get_study

VGG16_PARAMETERS = 138_357_544


def ref(study: str, framework: str) -> str:
    """The arm standing for ``framework`` in ``study`` (its arm table's reference)."""
    return get_study(study).reference_arm(framework)


def _smoke_sweep(study: str, smoke: SmokeRun):
    """The smoke sweep of ``study`` that notebook 04 ran into the session's shared smoke store (conftest): its
    trials, the store and the run's root (ONNX artifacts land in ``<root>/artifacts``, beside the store). Every
    planned trial must be there and done."""
    store = ResultsStore.open_read(smoke.store)
    trials = store.trials(study)
    assert len(trials) and set(trials.status) == {"done"}, trials[["trial_id", "status", "error"]]
    return trials, store, smoke.root


# -- VGG16 ----------------------------------------------------------------------------------------------------
def test_vgg16_layer_table_has_the_published_parameter_count():
    from fwbench.vision import NUM_CLASSES, POOLED, VGG16_CONFIG, vgg16_flops
    from fwbench.vision import VGG16_PARAMETERS as DECLARED

    params, channels = 0, 3
    for v in VGG16_CONFIG:
        if v != "M":
            params += 9 * channels * v + v
            channels = v
    for a, b in ((512 * POOLED * POOLED, 4096), (4096, 4096), (4096, NUM_CLASSES)):
        params += a * b + b
    assert params == DECLARED == VGG16_PARAMETERS
    assert 30.9e9 < vgg16_flops(224) < 31.0e9  # 15.5 G multiply-adds


@pytest.fixture(scope="module")
def vgg16_smoke(smoke_notebooks):
    return _smoke_sweep("vgg16", smoke_notebooks)


@pytest.mark.slow
def test_vgg16_smoke_records_raw_latencies_and_onednn_state(vgg16_smoke):
    """Each trial is its own process importing one framework: every VGG16 (JAX's in the compiled part too) has
    138,357,544 parameters there; oneDNN is on where the config asks for it, except in JAX (XLA has none)."""
    from fwbench.analysis import inference
    from fwbench.studies import vgg16

    trials, store, _ = vgg16_smoke
    options = vgg16.STUDY.resolve("smoke")
    assert len(trials) == len(vgg16.grid(options)) == 5  # 2 arms x oneDNN on/off, JAX compiled
    assert (trials["summary.n_parameters"] == VGG16_PARAMETERS).all()
    jax = trials["config.arm"] == "jax-jit"
    assert jax.sum() == 1 and not trials.loc[jax, "summary.onednn_active"].any()
    assert (trials.loc[~jax, "summary.onednn_active"] == trials.loc[~jax, "config.onednn"]).all()
    assert all(len(f) == 1 for f in trials["provenance.frameworks_imported"])
    mx_off = trials[(trials["config.arm"] == ref("vgg16", "mxnet")) & ~trials["config.onednn"].astype(bool)]
    assert (mx_off["provenance.mxnet_mkldnn_enabled_env"] == "0").all()
    long = store.measurements("vgg16")
    counts = long.groupby(["trial_id", "metric"]).size().unstack()
    assert (counts["latency_s"] == options["repeats"]).all() and (counts["warmup_latency_s"] == options["warmup"]).all()
    frame = inference.vgg16_latencies(Results(store, "smoke"))
    assert len(frame) == 5 * options["repeats"] and (frame.latency_ms > 0).all()
    ratios = inference.vgg16_ratios(frame)
    assert set(ratios.comparison) == {"torch / mxnet", "oneDNN off / on"}
    text = prose.inference_summary(Results(store, "smoke"))
    assert "claim C1" in text and "oneDNN on" in text  # the ratio itself is the ledger's (fwbench.answer)


def _plant(store, study, config, values, summary=None, metric="latency_s"):
    from fwbench.store import trial_id

    store.record(
        trial_id=trial_id(study, config, get_study(study).code_version()),
        study=study,
        status="done",
        config=config,
        provenance={},
        summary=summary or {},
        measurements=[(i, metric, v) for i, v in enumerate(values)],
    )


def test_vgg16_ratio_and_prose_follow_planted_latencies(tmp_path):
    from fwbench.analysis import inference

    store = ResultsStore(tmp_path / "s.sqlite")
    base = {"model": "vgg16", "batch_size": 1, "image_size": 224, "device": "cpu", "threads": 2}
    rng = np.random.default_rng(0)
    torch_arm, mxnet_arm = ref("vgg16", "torch"), ref("vgg16", "mxnet")
    for block in range(3):  # CIs are over independent trials: three per arm, eight timed calls each
        setting = {**base, "block": block}
        _plant(store, "vgg16", {**setting, "arm": torch_arm, "onednn": True}, 0.040 + 0.001 * rng.random(8))
        _plant(store, "vgg16", {**setting, "arm": "torch-script", "onednn": True}, 0.030 + 0.001 * rng.random(8))
        _plant(store, "vgg16", {**setting, "arm": mxnet_arm, "onednn": True}, 0.020 + 0.001 * rng.random(8))
        _plant(store, "vgg16", {**setting, "arm": mxnet_arm, "onednn": False}, 0.010 + 0.001 * rng.random(8))
    frame = inference.vgg16_latencies(Results(store))
    assert dict(zip(frame.arm, frame.framework)) == {torch_arm: "torch", "torch-script": "torch", mxnet_arm: "mxnet"}
    ratios = inference.vgg16_ratios(frame)
    main = ratios[(ratios.comparison == "torch / mxnet") & (ratios.onednn == True)].iloc[0]  # noqa: E712
    assert (main.numerator, main.denominator) == (torch_arm, mxnet_arm)
    assert 1.8 < main.ratio < 2.2 and main.ci_low > 1
    compiled = ratios[ratios.comparison == "compiled / eager"].iloc[0]  # the compiled arm over its reference arm
    assert (compiled.numerator, compiled.denominator) == ("torch-script", torch_arm) and compiled.ci_high < 1
    off = ratios[ratios.comparison == "oneDNN off / on"].iloc[0]
    assert off.ratio < 1 and off.ci_high < 1
    text = prose.inference_summary(Results(store))
    # the prose states the medians; the ratios with their intervals are the ledger's (C1, C3), quoted by the answer
    assert "ratio of 1.48" in text and "PyTorch / MXNet =" not in text and "off / on =" not in text


# -- GEMM -----------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_gemm_smoke_gflops_match_the_timings(smoke_notebooks):
    from fwbench.analysis import inference

    trials, store, _ = _smoke_sweep("gemm", smoke_notebooks)
    assert len(trials) == 3  # PyTorch, MXNet and JAX
    long = store.measurements("gemm")
    for _, g in long.groupby("trial_id"):
        n = int(g["config.n"].iloc[0])
        secs = g[g.metric == "seconds"].sort_values("step").value.to_numpy()
        gflops = g[g.metric == "gflops"].sort_values("step").value.to_numpy()
        assert len(secs) == 3 and np.allclose(gflops, 2 * n**3 / secs / 1e9)
    peak = inference.gemm_peak(Results(store))
    assert set(peak.framework) == {"torch", "mxnet", "jax"} and (peak.gflops > 0).all() and (peak.threads == 1).all()


def test_gemm_peak_is_the_best_median_over_sizes(tmp_path):
    from fwbench.analysis import inference

    store = ResultsStore(tmp_path / "s.sqlite")
    for fw, threads, n, values in (
        ("torch", 1, 1024, [10, 11, 12]),
        ("torch", 1, 2048, [20, 21, 90]),
        ("torch", 2, 1024, [30, 31, 32]),
        ("mxnet", 1, 1024, [5, 6, 7]),
    ):
        _plant(
            store,
            "gemm",
            {"arm": ref("gemm", fw), "threads": threads, "n": n, "device": "cpu"},
            values,
            metric="gflops",
        )
    peak = inference.gemm_peak(Results(store)).set_index(["framework", "threads"])
    assert peak.loc[("torch", 1), "gflops"] == 21 and peak.loc[("torch", 1), "n"] == 2048
    assert peak.loc[("torch", 1), "max_repeat_gflops"] == 90
    assert peak.loc[("torch", 2), "gflops"] == 31 and peak.loc[("mxnet", 1), "gflops"] == 6
    assert inference.peak_gflops(Results(store)) == {("mxnet", 1): 6.0, ("torch", 1): 21.0, ("torch", 2): 31.0}
    assert inference.gemm_peak(Results(ResultsStore(tmp_path / "empty.sqlite"))).empty


# -- ONNX -----------------------------------------------------------------------------------------------------
def test_onnx_tables_follow_the_arm_table_on_planted_steps(tmp_path):
    from fwbench.analysis import inference

    store = ResultsStore(tmp_path / "s.sqlite")
    ok = {"step_status": "ok", "error": None, "reason": None}
    _plant(store, "onnx", {"step": "torch-export"}, [0.010, 0.011, 0.012], summary=ok, metric="latency_s_b1")
    _plant(
        store,
        "onnx",
        {"step": "onnxruntime"},
        [0.005, 0.0055, 0.006],
        metric="latency_s_b1",
        summary={**ok, "max_abs_diff": 1e-6, "argmax_agreement": 1.0, "n_compared": 64, "test_acc": 0.5},
    )
    _plant(
        store,
        "onnx",
        {"step": "mxnet-import"},
        [],
        summary={
            "step_status": "step_failed",
            "error": "NotImplementedError: LSTM",
            "reason": "no LSTM translation",
            "failed_at": "mx.contrib.onnx.import_model",
        },
    )
    steps = inference.onnx_steps(Results(store))
    assert steps.step.tolist() == list(get_study("onnx").arm_names)
    assert steps.runtime.tolist() == ["torch", "onnxruntime", "mxnet"]
    assert steps.loc[0, "max_abs_diff"] == 0.0  # the export step is the reference itself
    lat = inference.onnx_latency_table(inference.onnx_latencies(Results(store))).set_index("step")
    assert lat.loc["torch-export", "ratio_to_torch"] == 1.0
    assert lat.loc["onnxruntime", "ratio_to_torch"] == pytest.approx(0.5)
    labels = get_study("onnx").labels()
    text = prose.inference_summary(Results(store))
    assert f"**{labels['onnxruntime']}** latency, batch 1" in text
    assert f"**{labels['mxnet-import']}**: step_failed" in text


@pytest.fixture(scope="module")
def onnx_smoke(smoke_notebooks):
    return _smoke_sweep("onnx", smoke_notebooks)


@pytest.mark.slow
def test_onnx_round_trip_parity_and_recorded_errors(onnx_smoke):
    from fwbench.analysis import inference

    trials, store, root = onnx_smoke
    assert len(trials) == 3
    steps = inference.onnx_steps(Results(store, "smoke")).set_index("step")
    assert steps.loc["torch-export", "status"] == "ok"
    if steps.loc["onnxruntime", "status"] == "unavailable":
        pytest.skip(f"onnxruntime not installed: {steps.loc['onnxruntime', 'error']}")
    assert steps.loc["onnxruntime", "status"] == "ok"
    assert steps.loc["onnxruntime", "max_abs_diff"] < 1e-4 and steps.loc["onnxruntime", "argmax_agreement"] == 1.0
    assert steps.loc["onnxruntime", "n_compared"] == 64
    mx = steps.loc["mxnet-import"]
    if mx.status == "ok":
        assert mx.max_abs_diff < 1e-4 and mx.argmax_agreement == 1.0
    else:  # MXNet 1.9.1's importer has no LSTM translation: the exact error and the reason are stored
        assert mx.status == "step_failed" and "not implemented" in mx.error and "LSTM" in mx.reason
        assert "LSTM" in prose.onnx_errors(Results(store, "smoke"))
    artifacts = list((root / "artifacts" / "onnx").iterdir())
    assert len(artifacts) == 1 and (artifacts[0] / "model.onnx").stat().st_size > 1e6
    lat = inference.onnx_latency_table(inference.onnx_latencies(Results(store, "smoke")))
    assert {"torch", "onnxruntime"} <= set(lat.runtime) and set(lat.batch_size) == {1, 16}
    for _, t in trials.iterrows():  # never two runtimes in one process
        assert len(t["provenance.frameworks_imported"]) <= 1


# -- options and devices ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "study, overrides, message",
    [
        ("vgg16", {"device": "gpu"}, "device must be one of"),
        ("vgg16", {"onednn": ["yes"]}, "must be True or False"),
        ("vgg16", {"arms": ["tensorflow"]}, "unknown arms"),
        ("vgg16", {"image_size": 8}, "image_size must be >= 32"),
        ("gemm", {"threads": [0]}, "threads must be >= 1"),
        ("onnx", {"steps": ["tflite"]}, "unknown steps"),
    ],
)
def test_bad_options_are_one_line_errors(study, overrides, message):
    from fwbench.planning import plan

    with pytest.raises(FwbenchError, match=message):
        plan(study, "smoke", overrides)


def test_cuda_grid_drops_the_onednn_switch_and_needs_a_gpu():
    from fwbench.studies import vgg16

    configs = vgg16.grid(vgg16.STUDY.resolve("smoke", {"device": "cuda"}))
    assert configs and all(c["onednn"] is True and c["device"] == "cuda" for c in configs)
    if _has_nvidia_gpu():
        pytest.skip("an NVIDIA GPU is present: the missing-GPU error cannot be shown here")
    with pytest.raises(FwbenchError, match="needs an NVIDIA GPU"):
        vgg16.STUDY.preflight(vgg16.STUDY.resolve("smoke", {"device": "cuda"}))


def _has_nvidia_gpu() -> bool:
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _torch_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def _mxnet_cuda() -> bool:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import mxnet as mx; print(mx.context.num_gpus() if mx.runtime.Features().is_enabled('CUDA') else 0)",
        ],
        capture_output=True,
        text=True,
    )
    return out.returncode == 0 and out.stdout.strip() not in ("", "0")


@pytest.mark.gpu
@pytest.mark.slow
def test_vgg16_and_gemm_on_cuda(tmp_path):
    if not _torch_cuda():
        pytest.skip("torch.cuda.is_available() is False: no CUDA GPU (or a CPU-only torch build) on this host")
    from fwbench.analysis import inference
    from fwbench.runner import run_sweep

    frameworks = ["torch", "mxnet"] if _mxnet_cuda() else ["torch"]  # MXNet needs the mxnet-cu112 wheel
    store = ResultsStore(tmp_path / "gpu.sqlite")
    for study in ("vgg16", "gemm"):
        arms = [ref(study, fw) for fw in frameworks]
        assert run_sweep(study, "smoke", {"device": "cuda", "arms": arms}, store=store, progress="none").ok
    frame = inference.vgg16_latencies(Results(store))
    assert set(frame.device) == {"cuda"} and (frame.latency_ms > 0).all()
    assert not inference.gemm_peak(Results(store), device="cuda").empty


@pytest.mark.slow
def test_onnx_runtime_step_rebuilds_missing_artifacts_in_a_separate_process(tmp_path, monkeypatch):
    """A runtime step on a machine without the export's files (another host, a cleaned folder) rebuilds them by
    running the export step in its own process, and still reaches parity."""
    from fwbench.analysis import inference
    from fwbench.runner import run_sweep

    monkeypatch.setenv("FWBENCH_ARTIFACTS", str(tmp_path / "artifacts"))
    store = ResultsStore(tmp_path / "s.sqlite")
    assert run_sweep("onnx", "smoke", {"steps": ["onnxruntime"]}, store=store, progress="none", timeout_s=600).ok
    trial = store.trials("onnx").iloc[0]
    if trial["summary.step_status"] == "unavailable":
        pytest.skip(f"onnxruntime not installed: {trial['summary.error']}")
    assert trial["summary.artifacts_rebuilt"] is True or trial["summary.artifacts_rebuilt"] == 1
    # torch ran in the rebuild process, not here: this process loaded ONNX Runtime only
    assert trial["provenance.frameworks_imported"] == ["onnxruntime"]
    steps = inference.onnx_steps(Results(store, "smoke", {"onnx": {"steps": ["onnxruntime"]}}))
    assert steps.loc[0, "max_abs_diff"] < 1e-4 and steps.loc[0, "argmax_agreement"] == 1.0


# -- compiled vs eager (claim C4 on a model the compilers trace) -----------------------------------------------
def test_vgg16_profiles_sweep_compiled_arms_and_batch_sizes():
    from fwbench.planning import plan
    from fwbench.studies import vgg16

    full = plan("vgg16", "full")
    assert {t.config["arm"] for t in full} == set(vgg16.ARMS) >= {"torch-eager", "torch-script", "torch-compile"}
    assert {t.config["batch_size"] for t in full} == {1, 8, 32}
    quick = [t.config for t in plan("vgg16", "quick")]
    part = vgg16.PROFILES["quick"]["compiled"]
    if part:  # the compiled part: every torch arm at each of its batch sizes, oneDNN on, once per block
        compiled = {(c["arm"], c["batch_size"], c["image_size"]) for c in quick if c["onednn"]}
        assert {(a, b, part["image_size"]) for a in part["arms"] for b in part["batch_sizes"]} <= compiled
    keys = [repr(sorted((k, v) for k, v in c.items() if k != "part")) for c in quick]
    assert len(keys) == len(set(keys))  # a setting in both parts runs once


@pytest.mark.parametrize(
    "value, message",
    [
        ({"arms": ["torch-compile"], "batch_sizes": [1]}, "must be None or a dict with keys"),
        ({"arms": ["torch-jit"], "batch_sizes": [1], "image_size": 64, "blocks": 1}, "unknown compiled.arms"),
        ({"arms": ["torch-compile"], "batch_sizes": [0], "image_size": 64, "blocks": 1}, "compiled.batch_sizes must"),
    ],
)
def test_bad_compiled_part_is_a_one_line_error(value, message):
    from fwbench.planning import plan

    with pytest.raises(FwbenchError, match=message):
        plan("vgg16", "smoke", {"compiled": value})


def _plant_vgg(store, arm, batch, latency_s, compile_s=None, onednn=True):
    from fwbench.store import trial_id

    for block in range(3):  # CIs are over independent trials: three per arm
        config = {
            "arm": arm,
            "model": "vgg16",
            "batch_size": batch,
            "image_size": 224,
            "device": "cpu",
            "threads": 2,
            "onednn": onednn,
            "block": block,
        }
        rng = np.random.default_rng([batch, block])
        meas = [(i, "latency_s", latency_s * (1 + 0.01 * rng.random())) for i in range(8)]
        meas += [(0, "warmup_latency_s", 10 * latency_s)]  # stored, never in a statistic
        if compile_s is not None:
            meas.append((-1, "compile_time_s", compile_s))
        store.record(
            trial_id=trial_id("vgg16", config, get_study("vgg16").code_version()),
            study="vgg16",
            status="done",
            config=config,
            provenance={},
            summary={},
            measurements=meas,
        )


def test_compiled_vs_eager_covers_both_compiled_torch_arms(tmp_path):
    from fwbench.analysis import vgg16 as vgg_analysis

    store = ResultsStore(tmp_path / "s.sqlite")
    eager = ref("vgg16", "torch")
    for batch, scale in ((1, 1.0), (8, 6.0)):
        _plant_vgg(store, eager, batch, 0.100 * scale)
        _plant_vgg(store, "torch-script", batch, 0.080 * scale, compile_s=2.0)
        _plant_vgg(store, "torch-compile", batch, 0.050 * scale, compile_s=40.0)
    frame = vgg_analysis.vgg16_latencies(Results(store))
    assert frame.latency_ms.max() < 700  # warm-up passes excluded
    times = vgg_analysis.vgg16_compile_times(Results(store))
    assert sorted(times.arm.unique()) == ["torch-compile", "torch-script"] and len(times) == 12  # 2 x 2 x 3 trials
    table = vgg_analysis.compiled_table(frame, times).set_index(["arm", "batch_size"])
    assert set(table.index) == {(a, b) for a in ("torch-script", "torch-compile") for b in (1, 8)}
    assert set(table.reference) == {eager}
    c1 = table.loc[("torch-compile", 1)]
    assert 1.9 < c1.speedup < 2.1 and c1.ci_low > 1 and c1.compile_s == 40.0
    assert 750 < c1.break_even_calls < 850  # 40 s / (100 - 50 ms)
    assert 1.2 < table.loc[("torch-script", 8), "speedup"] < 1.3
    text = prose.inference_summary(Results(store))
    labels = get_study("vgg16").labels()
    assert f"**{labels['torch-compile']}** vs {labels[eager]} (batch 8" in text
    assert "compiling took 40.0 s" in text and "eager / compiled =" not in text
    ratios = vgg_analysis.vgg16_ratios(frame)
    assert set(ratios[ratios.comparison == "compiled / eager"].numerator) == {"torch-script", "torch-compile"}
    from fwbench.plots import inference as plots

    fig = plots.vgg16_compiled_figure(frame, times)
    assert [t.get_text() for t in fig.axes[1].get_yticklabels()] == [labels["torch-script"], labels["torch-compile"]]


def test_a_slower_compiled_arm_never_pays_back(tmp_path):
    from fwbench.analysis import vgg16 as vgg_analysis

    store = ResultsStore(tmp_path / "s.sqlite")
    _plant_vgg(store, ref("vgg16", "torch"), 1, 0.050)
    _plant_vgg(store, "torch-compile", 1, 0.100, compile_s=30.0)
    frame = vgg_analysis.vgg16_latencies(Results(store))
    row = vgg_analysis.compiled_table(frame, vgg_analysis.vgg16_compile_times(Results(store))).iloc[0]
    assert row.speedup < 1 and row.ci_high < 1 and np.isnan(row.break_even_calls)


@pytest.mark.slow
def test_torch_compile_and_script_trials_time_the_compile_apart(tmp_path):
    """Real trials at 32x32: both compiled arms store their compile time once (step -1), latencies only after
    warm-up, and torch.compile traces VGG16 as one graph with no break."""
    from fwbench.analysis import vgg16 as vgg_analysis
    from fwbench.runner import run_sweep

    store = ResultsStore(tmp_path / "s.sqlite")
    arms = ["torch-eager", "torch-script", "torch-compile"]
    # the smoke profile's compiled part (JAX's) narrowed to a setting the main part already runs: 3 trials
    compiled = {"arms": ["torch-compile"], "batch_sizes": [1], "image_size": 32, "blocks": 1}
    overrides = {"arms": arms, "onednn": [True], "compiled": compiled}
    summary = run_sweep("vgg16", "smoke", overrides, store=store, progress="none", timeout_s=600)
    assert summary.ok and summary.done == 3, summary.failed
    trials = store.trials("vgg16").set_index("config.arm")
    assert trials.loc["torch-compile", "summary.compile_time_s"] > 0
    assert trials.loc["torch-script", "summary.compile_time_s"] > 0
    assert pd_isnull(trials.loc["torch-eager", "summary.compile_time_s"])
    assert trials.loc["torch-compile", "summary.dynamo_graphs"] == 1
    assert trials.loc["torch-compile", "summary.graph_breaks"] == 0
    times = vgg_analysis.vgg16_compile_times(Results(store, "smoke", {"vgg16": overrides}))
    assert sorted(times.arm) == ["torch-compile", "torch-script"]
    frame = vgg_analysis.vgg16_latencies(Results(store, "smoke", {"vgg16": overrides}))
    assert len(vgg_analysis.compiled_table(frame, times)) == 2


def pd_isnull(value) -> bool:
    import pandas as pd

    return value is None or bool(pd.isna(value))
