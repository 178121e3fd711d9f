"""Tables of the studies beyond the posts (``vgg16``, ``gemm``, ``onnx``), computed from the results store; the
VGG16 tables live in ``fwbench.analysis.vgg16`` (re-exported here where the prose uses them).

Warm-up calls are stored (``warmup_*`` metrics) and excluded here; every statistic is over the timed repeats.
Frameworks, labels and the compared pairs come from each study's arm table (``get_study``); the overview article's
VGG16 numbers from ``fwbench.published.overview``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..machines import NOT_RECORDED, cpu_model_of, one_cpu_model
from ..published.overview import VGG16_LATENCY_MS
from ..stats import summarize, trial_medians, trial_ratio_ci
from ..store import ResultsStore
from ..studies import get_study
from ..vision import vgg16_flops
from . import profile_measurements, profile_trials
from .vgg16 import compiled_table, vgg16_compile_times, vgg16_latencies, vgg16_ratios, vgg16_table


def _frameworks(study: str, arms: pd.Series) -> pd.Series:
    """The framework of each arm (step) by the study's arm table; an undeclared arm is an error."""
    return arms.map(get_study(study).framework_of)


def _long(study: str, profile: str | None, overrides: dict | None, store: ResultsStore | None) -> pd.DataFrame:
    """Raw values of the done trials of ``study`` (of the profile's plan when a profile is given)."""
    return profile_measurements(study, profile, overrides, store)


def _trials(study: str, profile: str | None, overrides: dict | None, store: ResultsStore | None) -> pd.DataFrame:
    return profile_trials(study, profile, overrides, store)


def failures(
    study: str, profile: str | None = None, overrides: dict | None = None, store: ResultsStore | None = None
) -> pd.DataFrame:
    trials = _trials(study, profile, overrides, store)
    if trials.empty:
        return trials
    cols = [c for c in ("trial_id", "config.arm", "config.step", "error") if c in trials]
    return trials.loc[trials.status == "failed", cols].reset_index(drop=True)


# -- GEMM ----------------------------------------------------------------------------------------------------
def gemm_results(
    profile: str | None = None, overrides: dict | None = None, store: ResultsStore | None = None, cpu: str | None = None
) -> pd.DataFrame:
    """One row per timed matmul: arm, framework, device, threads, n, repeat, GFLOP/s and the CPU model, of one CPU
    model: ``cpu``, else the one most of the stored products ran on (a peak is a CPU's; models are never pooled)."""
    long = _long("gemm", profile, overrides, store)
    if long.empty:
        return pd.DataFrame()
    long = long[long.metric == "gflops"]
    models = long["provenance.cpu_id"].map(cpu_model_of) if "provenance.cpu_id" in long else NOT_RECORDED
    frame = (
        pd.DataFrame(
            {
                "trial_id": long.trial_id,
                "arm": long["config.arm"],
                "framework": _frameworks("gemm", long["config.arm"]),
                "device": long["config.device"],
                "threads": long["config.threads"].astype(int),
                "n": long["config.n"].astype(int),
                "repeat": long.step.astype(int),
                "gflops": long.value,
                "cpu": models,
            }
        )
        .sort_values(["framework", "device", "threads", "n", "repeat"])
        .reset_index(drop=True)
    )
    if cpu is not None:
        return frame[frame.cpu == cpu].reset_index(drop=True)
    kept, _ = one_cpu_model(frame.assign(part="gemm"))
    return kept.drop(columns="part").reset_index(drop=True)


def gemm_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Median GFLOP/s (IQR) per arm (framework) x device x threads x matrix size ``size``; ``n`` is the number of
    timed repeats. The raw rows' ``n`` (the matrix size) is renamed first: ``summarize`` writes its count as ``n``,
    and a shared name let the count overwrite the size."""
    if frame.empty:
        return pd.DataFrame()
    return summarize(
        frame.rename(columns={"n": "size"}), ["arm", "framework", "device", "threads", "size"], value="gflops"
    )


def thread_check(
    profile: str | None = None, overrides: dict | None = None, store: ResultsStore | None = None
) -> pd.DataFrame:
    """Whether each framework's thread setting held: per GEMM arm and thread count set, the CPUs its timed matrix
    products kept busy (``cpus_busy``: the trial process's CPU time over wall time), median and largest over its
    trials (matrix sizes). A framework busier than its setting would win by the extra cores."""
    cols = ["arm", "framework", "threads", "n_trials", "cpus_busy", "cpus_busy_max"]
    long = _long("gemm", profile, overrides, store)
    if long.empty or not (long.metric == "cpus_busy").any():
        return pd.DataFrame(columns=cols)
    long = long[long.metric == "cpus_busy"]
    frame = pd.DataFrame(
        {"arm": long["config.arm"], "threads": long["config.threads"].astype(int), "value": long.value}
    )
    table = (
        frame.groupby(["arm", "threads"])
        .agg(n_trials=("value", "size"), cpus_busy=("value", "median"), cpus_busy_max=("value", "max"))
        .reset_index()
    )
    table["framework"] = _frameworks("gemm", table.arm)
    return table[cols].sort_values(["framework", "arm", "threads"]).reset_index(drop=True)


def thread_check_markdown(table: pd.DataFrame) -> str:
    """``thread_check`` as Markdown, with how each framework's threads are set."""
    if table.empty:
        return "_No GEMM trial with its CPU use stored for this profile._"
    lines = [
        "| arm | threads set | trials | CPUs busy, median | largest |",
        "|---|---:|---:|---:|---:|",
    ]
    lines += [
        f"| `{r.arm}` | {r.threads} | {r.n_trials} | {r.cpus_busy:.2f} | {r.cpus_busy_max:.2f} |"
        for r in table.itertuples()
    ]
    return "\n".join(lines)


def gemm_peak(
    store: ResultsStore | None = None,
    device: str = "cpu",
    profile: str | None = None,
    overrides: dict | None = None,
    cpu: str | None = None,
) -> pd.DataFrame:
    """This machine's fp32 GEMM peak per framework and thread count: the best (over matrix sizes) median
    GFLOP/s of the timed repeats, with the size it was reached at and the single fastest repeat. Columns
    ``framework, threads, device, gflops, n, max_repeat_gflops, n_sizes``; empty when nothing is stored."""
    frame = gemm_results(profile, overrides, store, cpu)
    cols = ["framework", "threads", "device", "gflops", "n", "max_repeat_gflops", "n_sizes"]
    if frame.empty:
        return pd.DataFrame(columns=cols)
    frame = frame[frame.device == device]
    if frame.empty:
        return pd.DataFrame(columns=cols)
    med = frame.groupby(["framework", "threads", "device", "n"])["gflops"].median().reset_index()
    best = med.loc[med.groupby(["framework", "threads", "device"])["gflops"].idxmax()].reset_index(drop=True)
    agg = (
        frame.groupby(["framework", "threads", "device"])
        .agg(max_repeat_gflops=("gflops", "max"), n_sizes=("n", "nunique"))
        .reset_index()
    )
    return (
        best.merge(agg, on=["framework", "threads", "device"])[cols]
        .sort_values(["framework", "threads"])
        .reset_index(drop=True)
    )


def peak_gflops(store: ResultsStore | None = None, device: str = "cpu") -> dict:
    """``{(framework, threads): GFLOP/s}`` from ``gemm_peak``."""
    return {(r.framework, int(r.threads)): float(r.gflops) for r in gemm_peak(store, device).itertuples()}


# -- ONNX ----------------------------------------------------------------------------------------------------
def onnx_steps(
    profile: str | None = None, overrides: dict | None = None, store: ResultsStore | None = None
) -> pd.DataFrame:
    """One row per ONNX step (torch export, onnxruntime, MXNet import): its status (``ok``, ``step_failed``,
    ``unavailable``, or ``failed`` for a crashed trial), the exact error and reason where it did not work,
    parity with PyTorch's logits (max |difference|, argmax agreement, test accuracy), median latencies."""
    trials = _trials("onnx", profile, overrides, store)
    if trials.empty:
        return pd.DataFrame()
    study = get_study("onnx")
    rows = []
    for _, t in trials.iterrows():

        def get(key, t=t):  # a summary field of this trial; None when absent or NaN
            value = t.get(f"summary.{key}") if f"summary.{key}" in t else None
            return value if value == value else None

        status = get("step_status") if t.status == "done" else "failed"
        row = {
            "step": t["config.step"],
            "runtime": study.framework_of(t["config.step"]),
            "status": status,
            "error": get("error") if t.status == "done" else t.error,
            "reason": get("reason"),
            "max_abs_diff": get("max_abs_diff"),
            "argmax_agreement": get("argmax_agreement"),
            "test_acc": get("test_acc"),
            "n_compared": get("n_compared"),
        }
        if t["config.step"] == study.reference_arm("torch") and status == "ok":
            row.update(max_abs_diff=0.0, argmax_agreement=1.0, n_compared=None)  # the reference itself
        rows.append(row)
    order = {s: i for i, s in enumerate(study.arm_names)}
    return pd.DataFrame(rows).sort_values("step", key=lambda s: s.map(order)).reset_index(drop=True)


def onnx_latencies(
    profile: str | None = None, overrides: dict | None = None, store: ResultsStore | None = None
) -> pd.DataFrame:
    """One row per timed inference call: step (arm), runtime (its framework), batch size, repeat, latency in ms."""
    long = _long("onnx", profile, overrides, store)
    if long.empty:
        return pd.DataFrame()
    long = long[long.metric.str.startswith("latency_s_b")]
    return pd.DataFrame(
        {
            "trial_id": long.trial_id,
            "step": long["config.step"],
            "runtime": _frameworks("onnx", long["config.step"]),
            "batch_size": long.metric.str[11:].astype(int),
            "repeat": long.step.astype(int),
            "latency_ms": 1e3 * long.value,
        }
    ).reset_index(drop=True)


def onnx_latency_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Median (IQR) latency per step x batch, and the ratio to PyTorch's (the reference step's) with a 95 % CI
    over trials (each the median of its repeats)."""
    if frame.empty:
        return pd.DataFrame()
    key = ["step", "runtime", "batch_size"]
    table = summarize(frame, key, value="latency_ms")
    torch_step = get_study("onnx").reference_arm("torch")
    ratios = []
    for (step, runtime, batch), g in frame.groupby(key):
        ref = trial_medians(frame[(frame.step == torch_step) & (frame.batch_size == batch)], "latency_ms")
        r = (
            trial_ratio_ci(trial_medians(g, "latency_ms"), ref)
            if len(ref)
            else {"ratio": np.nan, "ci_low": np.nan, "ci_high": np.nan}
        )
        ratios.append(
            {
                "step": step,
                "runtime": runtime,
                "batch_size": batch,
                "ratio_to_torch": r["ratio"],
                "ci_low": r["ci_low"],
                "ci_high": r["ci_high"],
            }
        )
    return table.merge(pd.DataFrame(ratios), on=key)


def onnx_errors_markdown(
    profile: str | None = None, overrides: dict | None = None, store: ResultsStore | None = None
) -> str:
    """Each ONNX step that did not work: the exact error, where it was raised, and why (from the store)."""
    trials = _trials("onnx", profile, overrides, store)
    labels = get_study("onnx").labels()
    out = []
    for _, t in trials.iterrows() if not trials.empty else []:
        step = t["config.step"]
        status = t.get("summary.step_status") if t.status == "done" else "failed"
        if status == "ok":
            continue
        if t.status == "failed":
            out.append(f"**{step}** trial failed: `{t.error}`")
            continue
        out.append(
            f"**{labels[step]}**: `{status}` at `{t.get('summary.failed_at', step)}`. {t.get('summary.reason') or ''}\n"
        )
        attempts = t.get("summary.attempts")
        if isinstance(attempts, list) and attempts:
            for a in attempts:
                out.append(
                    f"- `{a['file']}`: `{a['error']}` (ops without an importer translation: "
                    f"{', '.join(a['unsupported_ops']) or 'none'})"
                )
        else:
            out.append(f"- `{t.get('summary.error')}`")
    return "\n".join(out) if out else "Every ONNX step worked."


# -- prose ---------------------------------------------------------------------------------------------------
def _of_peak(gflops: float, arm: str, frame: pd.DataFrame, store) -> str:
    """' = N % of its fp32 GEMM peak' where the gemm study measured that framework at the trial's threads."""
    rows = frame[frame.arm == arm]
    peak = peak_gflops(store).get((rows.framework.iloc[0], int(rows.threads.iloc[0]))) if len(rows) else None
    return f", {100 * gflops / peak:.0f} % of its measured fp32 GEMM peak ({peak:.1f} GFLOP/s)" if peak else ""


def summary_markdown(
    profile: str | None = None, overrides: dict | None = None, store: ResultsStore | None = None
) -> str:
    """The notebook's closing prose: every number computed from the store."""
    overrides = overrides or {}
    lines = []
    vgg = vgg16_latencies(profile, overrides.get("vgg16"), store)
    if vgg.empty:
        lines.append("- **VGG16**: no finished trials in the store for this profile.")
    else:
        table, ratios = vgg16_table(vgg), vgg16_ratios(vgg)
        labels = get_study("vgg16").labels()
        host = ratios[(ratios.comparison == "torch / mxnet") & (ratios.onednn == True)]  # noqa: E712
        claim = VGG16_LATENCY_MS["torch"] / VGG16_LATENCY_MS["mxnet"]
        for r in host.to_dict("records"):
            on = table[(table.onednn) & (table.batch_size == r["batch_size"]) & (table.image_size == r["image_size"])]
            num, den = (on.loc[on.arm == a, "median_ms"].iloc[0] for a in (r["numerator"], r["denominator"]))
            lines.append(
                f"- **VGG16** ({labels[r['numerator']]} vs {labels[r['denominator']]}), batch {r['batch_size']}, "
                f"{r['image_size']}x{r['image_size']}, oneDNN on, {r['device']}: {num:.1f} ms vs "
                f"{den:.1f} ms (medians of {r['n_num']} and {r['n_den']} timed passes; their ratio with its "
                f"interval is claim C1's, below). The article's "
                f"{VGG16_LATENCY_MS['torch']} / {VGG16_LATENCY_MS['mxnet']} ms is a "
                f"ratio of {claim:.2f}"
                + (
                    ""
                    if r["image_size"] == 224
                    else " (at 224x224; this profile's input is smaller, so only the direction is comparable)"
                )
                + "."
            )
            if r["image_size"] == 224 and r["batch_size"] == 1:
                need = vgg16_flops(224) / (VGG16_LATENCY_MS["torch"] / 1e3) / 1e9
                lines.append(
                    f"  In absolute terms the article's {VGG16_LATENCY_MS['torch']} ms means {need:.0f} "
                    f"GFLOP/s for VGG16's "
                    f"{vgg16_flops(224) / 1e9:.1f} GFLOP per image, while this host ran "
                    f"{vgg16_flops(224) / (num / 1e3) / 1e9:.1f} GFLOP/s ({labels[r['numerator']]})"
                    + _of_peak(vgg16_flops(224) / (num / 1e3) / 1e9, r["numerator"], vgg, store)
                    + ": the article's setting was most likely a GPU, not a CPU."
                )
        times = vgg16_compile_times(profile, overrides.get("vgg16"), store)
        for r in compiled_table(vgg, times).to_dict("records"):
            paid = (
                ""
                if np.isnan(r["break_even_calls"])
                else f"; it pays for itself after {r['break_even_calls']:,.0f} forward passes"
            )
            compile_s = "" if np.isnan(r["compile_s"]) else f", compiling took {r['compile_s']:.1f} s{paid}"
            lines.append(
                f"- **{labels[r['arm']]}** vs {labels[r['reference']]} (batch {r['batch_size']}, "
                f"{r['image_size']}px, oneDNN {'on' if r['onednn'] else 'off'}): {r['compiled_ms']:.1f} vs "
                f"{r['eager_ms']:.1f} ms (median latencies; eager / compiled with its interval is a part of claim "
                f"C4, below){compile_s}."
            )
    peak = gemm_peak(store, profile=profile, overrides=overrides.get("gemm"))
    if len(peak):
        parts = [
            f"{r.framework} {int(r.threads)} thread(s) {r.gflops:.1f} GFLOP/s (n={int(r.n)})" for r in peak.itertuples()
        ]
        lines.append("- **fp32 GEMM peak** (best median over sizes): " + "; ".join(parts) + ".")
    else:
        lines.append("- **fp32 GEMM peak**: no finished trials in the store for this profile.")
    steps = onnx_steps(profile, overrides.get("onnx"), store)
    onnx = get_study("onnx")
    labels, torch_step = onnx.labels(), onnx.reference_arm("torch")
    for r in steps.to_dict("records") if len(steps) else []:
        if r["step"] == torch_step:
            lines.append(
                f"- **ONNX export** from PyTorch: {r['status']}" + (f" -- `{r['error']}`" if r["error"] else "") + "."
            )
        elif r["status"] == "ok":
            lines.append(
                f"- **{labels[r['step']]}** runs the exported model: max |logit difference| to PyTorch "
                f"{r['max_abs_diff']:.2e}, argmax agreement {100 * r['argmax_agreement']:.1f} % on "
                f"{int(r['n_compared'])} test reviews."
            )
        else:
            lines.append(
                f"- **{labels[r['step']]}**: {r['status']} -- `{r['error']}`"
                + (f"; {r['reason']}" if r["reason"] else "")
                + "."
            )
    lat = onnx_latency_table(onnx_latencies(profile, overrides.get("onnx"), store))
    for r in lat[lat.step != torch_step].to_dict("records") if len(lat) else []:
        lines.append(
            f"- **{labels[r['step']]}** latency, batch {r['batch_size']}: {r['median']:.2f} ms median, "
            f"{r['ratio_to_torch']:.2f}x PyTorch's"
            + ("" if np.isnan(r["ci_low"]) else f" (95 % CI {r['ci_low']:.2f}-{r['ci_high']:.2f})")
            + "."
        )
    return "\n".join(lines)
