"""Tables of the studies beyond the posts (``gemm``, ``onnx``; the VGG16 tables are ``analysis.vgg16``'s, imported
here for the summary and notebook 04), computed from the results store. Warm-up calls are stored (``warmup_*``
metrics) and excluded here: every statistic is over the timed repeats."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..machines import NOT_RECORDED, cpu_model_of, one_cpu_model
from ..published.overview import VGG16_LATENCY_MS
from ..stats import summarize, trial_medians, trial_ratio_ci
from ..studies import get_study
from ..vision import vgg16_flops
from . import Results
from .vgg16 import compiled_table, vgg16_compile_times, vgg16_latencies, vgg16_ratios, vgg16_table


def failures(study: str, results: Results) -> pd.DataFrame:
    trials = results.trials(study)
    if trials.empty:
        return trials
    cols = [c for c in ("trial_id", "config.arm", "config.step", "error") if c in trials]
    return trials.loc[trials.status == "failed", cols].reset_index(drop=True)


# -- GEMM ----------------------------------------------------------------------------------------------------
def gemm_results(results: Results, cpu: str | None = None) -> pd.DataFrame:
    """One row per timed matmul: arm, framework, device, threads, n, repeat, GFLOP/s and the CPU model, of one CPU
    model: ``cpu``, else the one most of the stored products ran on (a peak is a CPU's; models are never pooled)."""
    long = results.values("gemm")
    if long.empty:
        return pd.DataFrame()
    # a trial a rerun of the same config replaced is not a second measurement of the peak
    long = long[(long.metric == "gflops") & ~long.trial_id.isin(results.stale().query("superseded").trial_id)]
    models = long["provenance.cpu_id"].map(cpu_model_of) if "provenance.cpu_id" in long else NOT_RECORDED
    frame = pd.DataFrame(
        {
            "trial_id": long.trial_id,
            "arm": long["config.arm"],
            "framework": long["config.arm"].map(get_study("gemm").framework_of),
            "device": long["config.device"],
            "threads": long["config.threads"].astype(int),
            "n": long["config.n"].astype(int),
            "repeat": long.step.astype(int),
            "gflops": long.value,
            "cpu": models,
        }
    )
    frame = frame.sort_values(["framework", "device", "threads", "n", "repeat"]).reset_index(drop=True)
    if cpu is not None:
        return frame[frame.cpu == cpu].reset_index(drop=True)
    kept, _ = one_cpu_model(frame.assign(part="gemm"))
    return kept.drop(columns="part").reset_index(drop=True)


def gemm_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Median GFLOP/s (IQR) per arm (framework) x device x threads x matrix ``size`` (the raw rows' ``n``, renamed:
    ``summarize`` writes its count of timed repeats as ``n``)."""
    if frame.empty:
        return pd.DataFrame()
    sized = frame.rename(columns={"n": "size"})
    return summarize(sized, ["arm", "framework", "device", "threads", "size"], value="gflops")


def thread_check(results: Results) -> pd.DataFrame:
    """Whether each framework's thread setting held: per GEMM arm and thread count set, the CPUs its timed matrix
    products kept busy (``cpus_busy``: process CPU time over wall time), median and largest over its trials, per CPU
    model (``cpu``), of every GEMM trial of the profile. A framework busier than its setting wins by extra cores."""
    cols = ["arm", "framework", "threads", "n_trials", "cpus_busy", "cpus_busy_max", "cpu"]
    long = results.every_row().values("gemm")  # every CPU model's, the pieces run for a CPU too, none superseded
    long = long[long.trial_id.isin(results.finished("gemm").trial_id)] if not long.empty else long
    if long.empty or not (long.metric == "cpus_busy").any():
        return pd.DataFrame(columns=cols)
    long = long[long.metric == "cpus_busy"]
    cpu = long["provenance.cpu_id"].map(cpu_model_of) if "provenance.cpu_id" in long else NOT_RECORDED
    frame = pd.DataFrame(
        {"arm": long["config.arm"], "threads": long["config.threads"].astype(int), "cpu": cpu, "value": long.value}
    )
    busy = {"n_trials": ("value", "size"), "cpus_busy": ("value", "median"), "cpus_busy_max": ("value", "max")}
    table = frame.groupby(["arm", "threads", "cpu"]).agg(**busy).reset_index()
    table["framework"] = table.arm.map(get_study("gemm").framework_of)
    return table[cols].sort_values(["framework", "arm", "threads"]).reset_index(drop=True)


def gemm_peak(results: Results, device: str = "cpu", cpu: str | None = None) -> pd.DataFrame:
    """This machine's fp32 GEMM peak per framework and thread count: the best (over matrix sizes) median
    GFLOP/s of the timed repeats, with the size it was reached at and the single fastest repeat. Columns
    ``framework, threads, device, gflops, n, max_repeat_gflops, n_sizes``; empty when nothing is stored."""
    frame = gemm_results(results, cpu)
    cols = ["framework", "threads", "device", "gflops", "n", "max_repeat_gflops", "n_sizes"]
    frame = frame[frame.device == device] if not frame.empty else frame
    if frame.empty:
        return pd.DataFrame(columns=cols)
    keys = ["framework", "threads", "device"]
    med = frame.groupby([*keys, "n"])["gflops"].median().reset_index()
    best = med.loc[med.groupby(keys)["gflops"].idxmax()].reset_index(drop=True)
    agg = frame.groupby(keys).agg(max_repeat_gflops=("gflops", "max"), n_sizes=("n", "nunique")).reset_index()
    return best.merge(agg, on=keys)[cols].sort_values(["framework", "threads"]).reset_index(drop=True)


def peak_gflops(results: Results, device: str = "cpu") -> dict:
    """``{(framework, threads): GFLOP/s}`` from ``gemm_peak`` over every stored GEMM trial (any profile: a peak
    is the machine's, not a profile's)."""
    peak = gemm_peak(results.every_row(), device)
    return {(r.framework, int(r.threads)): float(r.gflops) for r in peak.itertuples()}


# -- ONNX ----------------------------------------------------------------------------------------------------
def onnx_steps(results: Results) -> pd.DataFrame:
    """One row per ONNX step (torch export, onnxruntime, MXNet import): its status (``ok``, ``step_failed``,
    ``unavailable``, or ``failed`` for a crashed trial), the exact error and reason where it did not work,
    parity with PyTorch's logits (max |difference|, argmax agreement, test accuracy), median latencies."""
    trials = results.trials("onnx")
    if trials.empty:
        return pd.DataFrame()
    study = get_study("onnx")
    rows = []
    for _, t in trials.iterrows():

        def get(key, t=t):  # a summary field of this trial; None when absent or NaN
            value = t.get(f"summary.{key}")
            return value if value == value else None

        status = get("step_status") if t.status == "done" else "failed"
        row = {
            "step": t["config.step"],
            "runtime": study.framework_of(t["config.step"]),
            "status": status,
            "error": get("error") if t.status == "done" else t.error,
            **{key: get(key) for key in ("reason", "max_abs_diff", "argmax_agreement", "test_acc", "n_compared")},
        }
        if t["config.step"] == study.reference_arm("torch") and status == "ok":
            row.update(max_abs_diff=0.0, argmax_agreement=1.0, n_compared=None)  # the reference itself
        rows.append(row)
    order = {s: i for i, s in enumerate(study.arm_names)}
    return pd.DataFrame(rows).sort_values("step", key=lambda s: s.map(order)).reset_index(drop=True)


def onnx_latencies(results: Results) -> pd.DataFrame:
    """One row per timed inference call: step (arm), runtime (its framework), batch size, repeat, latency in ms."""
    long = results.values("onnx")
    if long.empty:
        return pd.DataFrame()
    long = long[long.metric.str.startswith("latency_s_b")]
    return pd.DataFrame(
        {
            "trial_id": long.trial_id,
            "step": long["config.step"],
            "runtime": long["config.step"].map(get_study("onnx").framework_of),
            "batch_size": long.metric.str[11:].astype(int),
            "repeat": long.step.astype(int),
            "latency_ms": 1e3 * long.value,
        }
    ).reset_index(drop=True)


def onnx_latency_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Median (IQR) latency per step x batch, and the ratio to PyTorch's (the reference step's) with its CI
    over trials (each the median of its repeats)."""
    if frame.empty:
        return pd.DataFrame()
    key = ["step", "runtime", "batch_size"]
    table = summarize(frame, key, value="latency_ms")
    torch_step = get_study("onnx").reference_arm("torch")
    ratios = []
    for (step, runtime, batch), g in frame.groupby(key):
        ref = trial_medians(frame[(frame.step == torch_step) & (frame.batch_size == batch)], "latency_ms")
        r = trial_ratio_ci(trial_medians(g, "latency_ms"), ref) if len(ref) else {}
        ratios.append([step, runtime, batch, *(r.get(k, np.nan) for k in ("ratio", "ci_low", "ci_high"))])
    return table.merge(pd.DataFrame(ratios, columns=[*key, "ratio_to_torch", "ci_low", "ci_high"]), on=key)


def onnx_error_facts(results: Results) -> dict:
    """Each ONNX step that did not work (template ``onnx_errors``), from the store: ``errors``, one dict per step
    with its ``step`` and ``label``; a crashed trial (``trial_failed``) with its ``error``; else its ``status``,
    where it failed (``failed_at``), why (``reason``) and either each import attempt (``attempts``: file, error,
    the ops without an importer translation) or the step's error (``step_error``)."""
    trials = results.trials("onnx")
    labels = get_study("onnx").labels()
    errors = []
    for _, t in trials.iterrows() if not trials.empty else []:
        step = t["config.step"]
        status = t.get("summary.step_status") if t.status == "done" else "failed"
        if status == "ok":
            continue
        attempts = t.get("summary.attempts")
        errors.append(
            {
                "step": step,
                "label": labels[step],
                "trial_failed": t.status == "failed",
                "error": t.error,
                "status": status,
                "failed_at": t.get("summary.failed_at", step),
                "reason": t.get("summary.reason") or "",
                "attempts": attempts if isinstance(attempts, list) and attempts else None,
                "step_error": t.get("summary.error"),
            }
        )
    return {"errors": errors}


# -- the notebook's closing summary ---------------------------------------------------------------------------
def _gemm_peak_of(arm: str, frame: pd.DataFrame, results: Results) -> float | None:
    """The fp32 GEMM peak (GFLOP/s) of ``arm``'s framework at the trial's threads, where the gemm study measured
    it (None where it did not)."""
    rows = frame[frame.arm == arm]
    peak = peak_gflops(results).get((rows.framework.iloc[0], int(rows.threads.iloc[0]))) if len(rows) else None
    return peak or None


def summary_facts(results: Results) -> dict:
    """The notebook's closing summary (template ``inference_summary``), every number from the store:

    - ``vgg``: None without VGG16 trials; else ``host`` (per PyTorch / MXNet setting with oneDNN on: the arms'
      medians and timed passes, and at 224x224 batch 1 what the article's latency means in GFLOP/s against what
      this host ran and its framework's GEMM peak), ``compiled`` (``compiled_table``'s rows), the arms' ``labels``
      and the article's latencies and ratio (``article``);
    - ``gemm``: ``gemm_peak`` (empty without GEMM trials);
    - ``onnx_steps`` (``onnx_steps``' rows) and ``onnx_latency`` (``onnx_latency_table``'s rows of the steps other
      than PyTorch's export, ``torch_step``), with the steps' labels (``onnx_labels``)."""
    vgg = vgg16_latencies(results)
    onnx = get_study("onnx")
    torch_step = onnx.reference_arm("torch")
    steps, latency = onnx_steps(results), onnx_latency_table(onnx_latencies(results))
    return {
        "vgg": _vgg_summary(vgg, results) if not vgg.empty else None,
        "gemm": gemm_peak(results),
        "onnx_steps": steps.to_dict("records") if len(steps) else [],
        "onnx_latency": latency[latency.step != torch_step].to_dict("records") if len(latency) else [],
        "onnx_labels": onnx.labels(),
        "torch_step": torch_step,
    }


def _vgg_summary(vgg: pd.DataFrame, results: Results) -> dict:
    table, ratios = vgg16_table(vgg), vgg16_ratios(vgg)
    host = ratios[(ratios.comparison == "torch / mxnet") & (ratios.onednn == True)]  # noqa: E712
    rows = []
    for r in host.to_dict("records"):
        on = table[(table.onednn) & (table.batch_size == r["batch_size"]) & (table.image_size == r["image_size"])]
        num, den = (on.loc[on.arm == a, "median_ms"].iloc[0] for a in (r["numerator"], r["denominator"]))
        row = {**r, "numerator_ms": num, "denominator_ms": den, "absolute": None}
        if r["image_size"] == 224 and r["batch_size"] == 1:
            flop = vgg16_flops(224)
            row["absolute"] = {
                "article_gflops": flop / (VGG16_LATENCY_MS["torch"] / 1e3) / 1e9,
                "image_gflop": flop / 1e9,
                "achieved_gflops": flop / (num / 1e3) / 1e9,
                "peak_gflops": _gemm_peak_of(r["numerator"], vgg, results),
            }
        rows.append(row)
    return {
        "host": rows,
        "compiled": compiled_table(vgg, vgg16_compile_times(results)).to_dict("records"),
        "labels": get_study("vgg16").labels(),
        "article": {**VGG16_LATENCY_MS, "ratio": VGG16_LATENCY_MS["torch"] / VGG16_LATENCY_MS["mxnet"]},
    }
