"""Figures of the studies beyond the posts (from ``fwbench.analysis.inference`` tables); colours and legend labels
from each study's arm table."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..analysis import arm_order
from ..analysis.inference import gemm_table, onnx_latency_table
from ..analysis.vgg16 import compiled_table, vgg16_table
from ..ledger.sources.overview import VGG16_LATENCY_MS
from ..studies import get_framework, get_study
from . import arm_style


def _empty(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()


def vgg16_latency_figure(frame: pd.DataFrame):
    """Latency per arm, oneDNN on (filled) and off (hollow), one panel per batch x image size: every timed
    pass as a dot, the median as a bar; the article's latencies (30.4 / 20.5 ms) as dashed lines at batch 1, 224x224,
    in the colours of the frameworks' reference arms."""
    settings = [] if frame.empty else sorted(frame[["batch_size", "image_size"]].drop_duplicates().itertuples(index=False))
    fig, axes = plt.subplots(1, max(len(settings), 1), figsize=(4.5 * max(len(settings), 1), 3.8), squeeze=False)
    if not settings:
        _empty(axes[0][0], "no VGG16 trials in the store")
        return fig
    table = vgg16_table(frame)
    for ax, (batch, size) in zip(axes[0], settings):
        sub = frame[(frame.batch_size == batch) & (frame.image_size == size)]
        tab = table[(table.batch_size == batch) & (table.image_size == size)]
        labels = []
        for i, ((arm, onednn), g) in enumerate(sub.groupby(["arm", "onednn"], sort=True)):
            color = arm_style("vgg16", arm)["color"]
            med = tab[(tab.arm == arm) & (tab.onednn == onednn)]
            ax.bar(i, med.median_ms.iloc[0], color=color if onednn else "white", edgecolor=color, alpha=0.7)
            ax.errorbar(i, med.median_ms.iloc[0], yerr=[[med.median_ms.iloc[0] - med.q1_ms.iloc[0]],
                                                       [med.q3_ms.iloc[0] - med.median_ms.iloc[0]]],
                        color="black", capsize=3)
            jitter = np.linspace(-0.15, 0.15, len(g)) if len(g) > 1 else [0.0]
            ax.scatter(i + np.asarray(jitter), g.latency_ms, s=10, color="black", zorder=3)
            labels.append(f"{arm_style('vgg16', arm)['label']}\noneDNN {'on' if onednn else 'off'}")
        if batch == 1 and size == 224:
            study = get_study("vgg16")
            for fw, ms in VGG16_LATENCY_MS.items():
                ax.axhline(ms, ls="--", lw=1, color=arm_style("vgg16", study.reference_arm(fw))["color"],
                           label=f"article: {get_framework(fw).label} {ms} ms")
            ax.legend(fontsize=7)
        ax.set_xticks(range(len(labels)), labels=labels, fontsize=7)
        ax.set_title(f"batch {batch}, {size}x{size}")
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("forward-pass latency (ms)\nbar: median, whiskers: IQR, dots: repeats")
    fig.tight_layout()
    return fig


def vgg16_compiled_figure(frame: pd.DataFrame, compile_times: pd.DataFrame | None = None):
    """Compiled vs eager (claim C4 on a model the compilers trace): eager / compiled latency per compiled arm
    against the batch size (bootstrap 95 % CI; above 1: compiling helps), one line per arm x image size x
    oneDNN (dashed: off); and each compiled arm's median compile time (first call included)."""
    table = compiled_table(frame, compile_times)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 3.8), gridspec_kw={"width_ratios": [3, 2]})
    if table.empty:
        _empty(ax, "no compiled-arm VGG16 trials in the store")
        bx.set_axis_off()
        return fig
    for (arm, size, onednn), g in table.groupby(["arm", "image_size", "onednn"]):
        g = g.sort_values("batch_size")
        look = arm_style("vgg16", arm)
        err = [np.nan_to_num(g.speedup - g.ci_low), np.nan_to_num(g.ci_high - g.speedup)]
        ax.errorbar(g.batch_size, g.speedup, yerr=err, marker="o", capsize=3, color=look["color"],
                    ls="-" if onednn else "--", label=f"{look['label']}, {size}px, oneDNN {'on' if onednn else 'off'}")
    ax.axhline(1.0, color="grey", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("batch size")
    ax.set_ylabel("eager / compiled latency (>1: compiled faster)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    comp = table.dropna(subset=["compile_s"]).groupby("arm").compile_s.median()
    arms = arm_order("vgg16", comp.index)
    bx.barh(range(len(arms)), [comp[a] for a in arms], color=[arm_style("vgg16", a)["color"] for a in arms])
    bx.set_yticks(range(len(arms)), labels=[arm_style("vgg16", a)["label"] for a in arms], fontsize=8)
    bx.set_xlabel("compile time (s, median; first call included)")
    bx.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def gemm_figure(frame: pd.DataFrame):
    """fp32 GEMM GFLOP/s against matrix size per arm (framework) x threads: median line, IQR band."""
    fig, ax = plt.subplots(figsize=(6, 3.6))
    if frame.empty:
        _empty(ax, "no GEMM trials in the store")
        return fig
    table = gemm_table(frame)
    for (arm, device, threads), g in table.groupby(["arm", "device", "threads"]):
        g = g.sort_values("n")
        style = "-" if threads == table.threads.max() else ":"
        look = arm_style("gemm", arm)
        ax.plot(g.n, g["median"], style, marker="o", color=look["color"],
                label=f"{look['label']} {device} {threads} thr")
        ax.fill_between(g.n, g.q1, g.q3, color=look["color"], alpha=0.2)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("matrix size n (n x n by n x n, float32)")
    ax.set_ylabel("GFLOP/s (2n³ / time)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def onnx_latency_figure(frame: pd.DataFrame):
    """Inference latency of the sentiment model in PyTorch and in the runtimes that ran its ONNX export."""
    fig, ax = plt.subplots(figsize=(6, 3.6))
    table = onnx_latency_table(frame)
    if table.empty:
        _empty(ax, "no ONNX latencies in the store")
        return fig
    batches = sorted(table.batch_size.unique())
    steps = arm_order("onnx", table.step)
    width = 0.8 / len(steps)
    for i, step in enumerate(steps):
        sub = pd.DataFrame({"batch_size": batches}).merge(table[table.step == step], how="left")
        x = np.arange(len(batches)) + (i - (len(steps) - 1) / 2) * width
        med = sub["median"].to_numpy(dtype=float)
        err = [np.nan_to_num(med - sub.q1.to_numpy(dtype=float)), np.nan_to_num(sub.q3.to_numpy(dtype=float) - med)]
        ax.bar(x, med, width, yerr=err, capsize=3, alpha=0.8, **arm_style("onnx", step))
    ax.set_yscale("log")
    ax.set_xticks(range(len(batches)), labels=[f"batch {b}" for b in batches])
    ax.set_ylabel("latency per call (ms, median, IQR)")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig
