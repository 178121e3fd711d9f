"""Figures of the studies beyond the posts (from ``fwbench.analysis.inference`` tables); colours and legend labels
from each study's arm table."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import NullLocator

from ..analysis import arm_order
from ..analysis.inference import gemm_table, onnx_latency_table
from ..analysis.vgg16 import compiled_table, vgg16_table
from ..published.overview import VGG16_LATENCY_MS
from ..studies import get_framework, get_study
from . import NothingToDraw, arm_style, ci_method, legend_outside, wrap


def _trials_per_setting(frame: pd.DataFrame, keys: list[str]) -> str:
    """ "n=k trials": the independent trials (fresh processes) behind each bar, or its range when bars differ."""
    counts = frame.groupby(keys).trial_id.nunique()
    low, high = int(counts.min()), int(counts.max())
    return f"n={low} trial{'s' if high > 1 else ''}" if low == high else f"n={low}-{high} trials"


def vgg16_latency_figure(frame: pd.DataFrame):
    """Latency per arm, one panel per batch x image size: per arm a bar with oneDNN on (filled) and one with it off
    (hollow); every timed pass as a dot, the median of the passes as the bar, their IQR as whiskers; the
    article's latencies (30.4 / 20.5 ms) as dashed lines at batch 1, 224x224, in the colours of the frameworks'
    reference arms. One legend beside the panels explains fills, dots and lines."""
    if frame.empty:
        raise NothingToDraw("no VGG16 trial of this profile has finished, so there is no latency to show.")
    settings = sorted(frame[["batch_size", "image_size"]].drop_duplicates().itertuples(index=False))
    panel = max(4.2, 1.0 * frame.arm.nunique() + 0.6)  # room for each arm's wrapped label (six with JAX)
    fig, axes = plt.subplots(1, len(settings), figsize=(panel * len(settings) + 2.6, 4.0), squeeze=False)
    table = vgg16_table(frame)
    study = get_study("vgg16")
    width = 0.38
    article = {}
    for ax, (batch, size) in zip(axes[0], settings):
        sub = frame[(frame.batch_size == batch) & (frame.image_size == size)]
        tab = table[(table.batch_size == batch) & (table.image_size == size)]
        arms = arm_order("vgg16", sub.arm)
        for i, arm in enumerate(arms):
            color = arm_style("vgg16", arm)["color"]
            for onednn, shift in ((True, -width / 2), (False, width / 2)):
                med = tab[(tab.arm == arm) & (tab.onednn == onednn)]
                if med.empty:
                    continue
                median, low, high = (float(med[c].iloc[0]) for c in ("median_ms", "q1_ms", "q3_ms"))
                ax.bar(i + shift, median, width, color=color if onednn else "white", edgecolor=color, alpha=0.7)
                ax.errorbar(i + shift, median, yerr=[[median - low], [high - median]], color="black", capsize=3)
                passes = sub[(sub.arm == arm) & (sub.onednn == onednn)].latency_ms.to_numpy(float)
                jitter = np.linspace(-width / 4, width / 4, len(passes)) if len(passes) > 1 else np.zeros(1)
                ax.scatter(i + shift + jitter, passes, s=6, color="black", zorder=3)
        if batch == 1 and size == 224:
            for fw, ms in VGG16_LATENCY_MS.items():
                line = ax.axhline(ms, ls="--", lw=1, color=arm_style("vgg16", study.reference_arm(fw))["color"])
                article[f"article: {get_framework(fw).label} {ms} ms"] = line
        ax.set_xticks(range(len(arms)), labels=[wrap(arm_style("vgg16", a)["label"], 14) for a in arms], fontsize=7)
        ax.set_xlabel("arm")
        ax.set_title(
            f"batch {batch}, {size}x{size} images ({_trials_per_setting(sub, ['arm', 'onednn'])} per bar)", fontsize=9
        )
        ax.grid(axis="y", alpha=0.3)
        ax.set_ylabel("forward-pass latency (ms)")
    handles = [
        Patch(facecolor="grey", edgecolor="grey", alpha=0.7),
        Patch(facecolor="white", edgecolor="grey"),
        Line2D([], [], color="black", marker="|", ls="none", markersize=10),
        Line2D([], [], color="black", marker="o", ls="none", markersize=3),
        *article.values(),
    ]
    labels = ["oneDNN on (bar: median of passes)", "oneDNN off", "IQR of the timed passes", "one timed pass", *article]
    legend_outside(axes[0][-1], handles, labels, title="colour: arm")
    fig.tight_layout()
    return fig


def vgg16_compiled_figure(frame: pd.DataFrame, compile_times: pd.DataFrame | None = None):
    """Compiled vs eager (claim C4 on a model the compilers trace): eager / compiled latency per compiled arm
    against the batch size (95 % CI over trials; above 1: compiling helps), one line per arm x image size x
    oneDNN (dashed: off); and each compiled arm's median compile time (first call included)."""
    table = compiled_table(frame, compile_times) if not frame.empty else pd.DataFrame()
    if table.empty:
        raise NothingToDraw(
            "no compiled VGG16 arm ran beside eager PyTorch in this profile, so there is no speed-up to show."
        )
    comp = table.dropna(subset=["compile_s"]).groupby("arm").compile_s.median()
    panels = 2 if len(comp) else 1
    fig, axes = plt.subplots(
        1, panels, figsize=(11 if panels == 2 else 7, 3.8), squeeze=False, gridspec_kw={"width_ratios": [3, 2][:panels]}
    )
    ax = axes[0][0]
    for (arm, size, onednn), g in table.groupby(["arm", "image_size", "onednn"]):
        g = g.sort_values("batch_size")
        look = arm_style("vgg16", arm)
        err = [np.nan_to_num(g.speedup - g.ci_low), np.nan_to_num(g.ci_high - g.speedup)]
        runs = frame[(frame.arm == arm) & (frame.image_size == size) & (frame.onednn == onednn)]
        label = (
            f"{look['label']}, {size}px, oneDNN {'on' if onednn else 'off'} "
            f"({_trials_per_setting(runs, ['batch_size'])})"
        )
        style = {"color": look["color"], "ls": "-" if onednn else "--"}
        ax.errorbar(g.batch_size, g.speedup, yerr=err, marker="o", capsize=3, label=wrap(label, 36), **style)
    ax.axhline(1.0, color="grey", lw=1)
    ax.set_xscale("log", base=2)
    batches = sorted(table.batch_size.unique())
    ax.set_xticks(batches, labels=[str(b) for b in batches])
    ax.set_xlabel("batch size (images per forward pass)")
    ax.set_ylabel("eager / compiled latency\n(ratio; >1: compiled faster)")
    ax.grid(alpha=0.3)
    legend_outside(ax, title=f"bars: 95 % CI ({ci_method(table)})", fontsize=7)
    if panels == 2:
        bx = axes[0][1]
        arms = arm_order("vgg16", comp.index)
        bx.barh(range(len(arms)), [comp[a] for a in arms], color=[arm_style("vgg16", a)["color"] for a in arms])
        bx.set_yticks(range(len(arms)), labels=[arm_style("vgg16", a)["label"] for a in arms], fontsize=8)
        bx.set_xlabel("compile time (s, median;\nfirst call included)")
        bx.set_ylabel("compiled arm")
        bx.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def gemm_figure(frame: pd.DataFrame):
    """fp32 GEMM GFLOP/s against the matrix size n of the trial's config, per arm (framework) x device x threads:
    median line over the trial's timed repeats, their IQR as a band (one trial, one process, per point)."""
    if frame.empty:
        raise NothingToDraw("no GEMM trial of this profile has finished, so there is no throughput to show.")
    table = gemm_table(frame)
    fig, ax = plt.subplots(figsize=(8.5, 3.6))
    for (arm, device, threads), g in table.groupby(["arm", "device", "threads"]):
        g = g.sort_values("size")
        style = "-" if threads == table.threads.max() else ":"
        look = arm_style("gemm", arm)
        label = f"{look['label']}, {device}, {threads} thread{'s' if threads > 1 else ''} ({int(g['n'].min())} repeats)"
        ax.plot(g["size"], g["median"], style, marker="o", color=look["color"], label=wrap(label, 30))
        ax.fill_between(g["size"], g.q1, g.q3, color=look["color"], alpha=0.2)
    sizes = sorted(table["size"].unique())
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes, labels=[str(int(size)) for size in sizes])
    ax.xaxis.set_minor_locator(NullLocator())
    if len(sizes) == 1:  # a sane axis around a single size
        ax.set_xlim(sizes[0] / 1.5, sizes[0] * 1.5)
    ax.set_xlabel("matrix size n (n x n by n x n, float32)")
    ax.set_ylabel("throughput (GFLOP/s = 2n³ / time)")
    ax.grid(alpha=0.3)
    legend_outside(ax, title="line: median, band: IQR of repeats")
    fig.tight_layout()
    return fig


def onnx_latency_figure(frame: pd.DataFrame):
    """Inference latency of the sentiment model in PyTorch and in the runtimes that ran its ONNX export."""
    table = onnx_latency_table(frame)
    if table.empty:
        raise NothingToDraw("no ONNX step of this profile timed an inference, so there is no latency to show.")
    fig, ax = plt.subplots(figsize=(6, 3.6))
    batches = sorted(table.batch_size.unique())
    steps = arm_order("onnx", table.step)
    width = 0.8 / len(steps)
    for i, step in enumerate(steps):
        sub = pd.DataFrame({"batch_size": batches}).merge(table[table.step == step], how="left")
        x = np.arange(len(batches)) + (i - (len(steps) - 1) / 2) * width
        med = sub["median"].to_numpy(dtype=float)
        err = [np.nan_to_num(med - sub.q1.to_numpy(dtype=float)), np.nan_to_num(sub.q3.to_numpy(dtype=float) - med)]
        look = arm_style("onnx", step)
        repeats = int(sub["n"].min()) if sub["n"].notna().any() else 0
        label = wrap(f"{look['label']} ({repeats} calls)", 30)
        ax.bar(x, med, width, yerr=err, capsize=3, alpha=0.8, color=look["color"], label=label)
    ax.set_yscale("log")
    ax.set_xticks(range(len(batches)), labels=[str(b) for b in batches])
    ax.set_xlabel("batch size (reviews per call)")
    ax.set_ylabel("latency per call (ms, log scale)")
    legend_outside(ax, title="bar: median, whiskers: IQR of calls")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig
