"""Tables of the VGG16 inference study (claim C), computed from the results store.

Warm-up calls are stored (``warmup_latency_s``) and excluded here. A compiled arm's compile time
(``compile_time_s``: the compile call plus the first forward pass, once per trial) is its own table, never mixed
into a latency. Arms, frameworks and which arms are compiled come from the arm table (``COMPILED_VARIANTS``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..stats import summarize, trial_medians, trial_ratio_ci
from ..studies import get_study
from ..studies.vgg16_trial import COMPILED_VARIANTS
from . import Results

STUDY = "vgg16"
SETTING = ["batch_size", "image_size", "onednn", "device"]
VGG16_SETTING = ["arm", *SETTING]


def compiled_arms() -> dict:
    """``{framework: [compiled arm, ...]}`` for each framework of the study's comparison (its ``reference``), from
    the arm table."""
    study = get_study(STUDY)
    return {
        fw: [a.name for a in study.arms if a.framework == fw and a.variant in COMPILED_VARIANTS]
        for fw in study.reference
    }


def _settings(long: pd.DataFrame) -> dict:
    return {
        "trial_id": long.trial_id,
        "arm": long["config.arm"],
        "framework": long["config.arm"].map(get_study(STUDY).framework_of),
        "batch_size": long["config.batch_size"].astype(int),
        "image_size": long["config.image_size"].astype(int),
        "onednn": long["config.onednn"].astype(bool),
        "device": long["config.device"],
        "threads": long["config.threads"].astype(int),
    }


def _values(results: Results, beside: bool) -> pd.DataFrame:
    """The study's raw values of the beside part (JAX and the eager arms on one machine's blocks), or of every other
    part: the two are never pooled (the beside trials repeat settings of the main part on another boot of the VM)."""
    long = results.values(STUDY)
    if long.empty:
        return long
    flagged = long["config.beside"].eq(True) if "config.beside" in long else pd.Series(False, index=long.index)
    return long[flagged] if beside else long[~flagged]


def vgg16_latencies(results: Results, beside: bool = False) -> pd.DataFrame:
    """One row per timed forward pass: arm, framework, batch size, image size, oneDNN, device, threads, repeat,
    latency in ms and ms per image; the beside part's trials with ``beside``, else every other part's."""
    long = _values(results, beside)
    if long.empty:
        return pd.DataFrame()
    long = long[long.metric == "latency_s"]
    frame = pd.DataFrame({**_settings(long), "repeat": long.step.astype(int), "latency_ms": 1e3 * long.value})
    frame["ms_per_image"] = frame.latency_ms / frame.batch_size
    return frame.sort_values(VGG16_SETTING + ["repeat"]).reset_index(drop=True)


def vgg16_compile_times(results: Results, beside: bool = False) -> pd.DataFrame:
    """One row per trial of a compiled arm: its setting and ``compile_s`` (seconds to compile, first call
    included); the beside part's trials with ``beside``, else every other part's."""
    long = _values(results, beside)
    if long.empty or not (long.metric == "compile_time_s").any():
        return pd.DataFrame(columns=["trial_id", *VGG16_SETTING, "compile_s"])
    long = long[long.metric == "compile_time_s"]
    return pd.DataFrame({**_settings(long), "compile_s": long.value}).reset_index(drop=True)


def vgg16_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Median, quartiles and IQR of the latency per arm x batch x image size x oneDNN x device, and the median
    time per image."""
    if frame.empty:
        return pd.DataFrame()
    table = summarize(frame, VGG16_SETTING, value="latency_ms")
    per_image = frame.groupby(VGG16_SETTING)["ms_per_image"].median().rename("median_ms_per_image")
    return table.join(per_image, on=VGG16_SETTING).rename(
        columns={"median": "median_ms", "q1": "q1_ms", "q3": "q3_ms", "iqr": "iqr_ms"}
    )


def vgg16_ratios(frame: pd.DataFrame) -> pd.DataFrame:
    """Latency ratios with their CI over trials (``trial_ratio_ci``): PyTorch / MXNet per setting (the reference
    arms, and the compiled arms: the claim says 30.4 / 20.5 = 1.48), each compiled arm / its framework's eager arm,
    and oneDNN off / on per arm (> 1: oneDNN's kernels make it faster)."""
    rows = []
    if frame.empty:
        return pd.DataFrame(rows)
    study = get_study(STUDY)
    ref, compiled = study.reference, compiled_arms()
    frameworks = list(ref)  # in declared order: the claim's numerator first (PyTorch / MXNet)
    across = [(num, den) for i, num in enumerate(frameworks) for den in frameworks[i + 1 :]]
    pairs = [(f"{num} / {den}", ref[num], ref[den]) for num, den in across]
    pairs += [(f"{num} / {den}", a, b) for num, den in across for a in compiled[num] for b in compiled[den]]
    pairs += [("compiled / eager", a, ref[fw]) for fw, arms in compiled.items() for a in arms]

    def add(kind, a, b, num, den, setting):  # a / b: the labels of the rows ``num`` over ``den``
        num, den = trial_medians(num, "latency_ms"), trial_medians(den, "latency_ms")
        if len(num) and len(den):
            rows.append({"comparison": kind, "numerator": a, "denominator": b, **setting, **trial_ratio_ci(num, den)})

    for key, g in frame.groupby(SETTING):
        for kind, a, b in pairs:
            add(kind, a, b, g[g.arm == a], g[g.arm == b], dict(zip(SETTING, key)))
    for (arm, batch, size, device), g in frame.groupby(["arm", "batch_size", "image_size", "device"]):
        setting = {"batch_size": batch, "image_size": size, "onednn": None, "device": device}
        add("oneDNN off / on", f"{arm} oneDNN off", f"{arm} oneDNN on", g[~g.onednn], g[g.onednn], setting)
    return pd.DataFrame(rows)


def compiled_table(frame: pd.DataFrame, compile_times: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per compiled arm (TorchScript, torch.compile, hybridized Gluon) and setting: its and its framework's eager
    arm's median latency, ``speedup`` = eager / compiled with its CI over trials (>1: compiling made inference
    faster; the form claim C4 is judged in), the median compile time and ``break_even_calls``, the forward passes
    that pay it back (NaN where the compiled arm is not faster)."""
    cols = ["arm", "reference", *SETTING, "compiled_ms", "eager_ms", "speedup", "ci_low", "ci_high", "n_num", "n_den"]
    cols += ["method", "compile_s", "n_compiles", "break_even_calls"]
    if frame.empty:
        return pd.DataFrame(columns=cols)
    study = get_study(STUDY)
    times = compile_times if compile_times is not None else pd.DataFrame(columns=[*VGG16_SETTING, "compile_s"])
    rows = []
    for fw, arms in compiled_arms().items():
        eager = study.reference_arm(fw)
        for key, g in frame.groupby(SETTING):
            e = trial_medians(g[g.arm == eager], "latency_ms").to_numpy(float)
            for arm in arms:
                c = trial_medians(g[g.arm == arm], "latency_ms").to_numpy(float)
                if not (len(c) and len(e)):
                    continue
                r = trial_ratio_ci(e, c)
                match = times[(times.arm == arm) & np.logical_and.reduce([times[k] == v for k, v in zip(SETTING, key)])]
                comp = float(match.compile_s.median()) if len(match) else np.nan
                gain = np.median(e) - np.median(c)
                rows.append(
                    {
                        "arm": arm,
                        "reference": eager,
                        **dict(zip(SETTING, key)),
                        "compiled_ms": float(np.median(c)),
                        "eager_ms": float(np.median(e)),
                        **r,
                        "speedup": r["ratio"],
                        "compile_s": comp,
                        "n_compiles": len(match),
                        "break_even_calls": 1e3 * comp / gain if gain > 0 else np.nan,
                    }
                )
    return pd.DataFrame(rows, columns=cols)  # drops the ratio's other fields


def onednn_builds(results: Results) -> pd.DataFrame:
    """What each framework's build says about oneDNN (MKLDNN), and whether the trial ran with it."""
    trials = results.trials(STUDY)
    if trials.empty:
        return pd.DataFrame()
    trials = trials[trials.status == "done"]
    cols = {
        "config.arm": "arm",
        "config.onednn": "onednn_requested",
        "summary.onednn_active": "onednn_active",
        "provenance.onednn_available": "onednn_in_build",
        "provenance.framework_version": "version",
        "provenance.mxnet_mkldnn_enabled_env": "MXNET_MKLDNN_ENABLED",
    }
    out = trials[[c for c in cols if c in trials]].rename(columns=cols).drop_duplicates()
    return out.sort_values(["arm", "onednn_requested"]).reset_index(drop=True)
