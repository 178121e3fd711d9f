"""Figures of the studies beyond the posts (from ``fwbench.analysis.inference`` tables)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..analysis.inference import CLAIM_VGG16_MS, gemm_table, onnx_latency_table, vgg16_table

ARM_COLORS = {"torch": "#1f77b4", "torch-jit": "#9467bd", "mxnet": "#d62728", "mxnet-hybrid": "#ff7f0e",
              "onnxruntime": "#2ca02c"}


def _empty(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()


def vgg16_latency_figure(frame: pd.DataFrame):
    """Latency per arm, oneDNN on (filled) and off (hollow), one panel per batch x image size: every timed
    pass as a dot, the median as a bar; the article's 30.4 / 20.5 ms as dashed lines at batch 1, 224x224."""
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
            color = ARM_COLORS.get(arm, "gray")
            med = tab[(tab.arm == arm) & (tab.onednn == onednn)]
            ax.bar(i, med.median_ms.iloc[0], color=color if onednn else "white", edgecolor=color, alpha=0.7)
            ax.errorbar(i, med.median_ms.iloc[0], yerr=[[med.median_ms.iloc[0] - med.q1_ms.iloc[0]],
                                                       [med.q3_ms.iloc[0] - med.median_ms.iloc[0]]],
                        color="black", capsize=3)
            jitter = np.linspace(-0.15, 0.15, len(g)) if len(g) > 1 else [0.0]
            ax.scatter(i + np.asarray(jitter), g.latency_ms, s=10, color="black", zorder=3)
            labels.append(f"{arm}\noneDNN {'on' if onednn else 'off'}")
        if batch == 1 and size == 224:
            for fw, ms in CLAIM_VGG16_MS.items():
                ax.axhline(ms, ls="--", lw=1, color=ARM_COLORS[fw], label=f"article: {fw} {ms} ms")
            ax.legend(fontsize=7)
        ax.set_xticks(range(len(labels)), labels=labels, fontsize=7)
        ax.set_title(f"batch {batch}, {size}x{size}")
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("forward-pass latency (ms)\nbar: median, whiskers: IQR, dots: repeats")
    fig.tight_layout()
    return fig


def gemm_figure(frame: pd.DataFrame):
    """fp32 GEMM GFLOP/s against matrix size per framework x threads: median line, IQR band."""
    fig, ax = plt.subplots(figsize=(6, 3.6))
    if frame.empty:
        _empty(ax, "no GEMM trials in the store")
        return fig
    table = gemm_table(frame)
    for (fw, device, threads), g in table.groupby(["framework", "device", "threads"]):
        g = g.sort_values("n")
        style = "-" if threads == table.threads.max() else ":"
        ax.plot(g.n, g["median"], style, marker="o", color=ARM_COLORS.get(fw), label=f"{fw} {device} {threads} thr")
        ax.fill_between(g.n, g.q1, g.q3, color=ARM_COLORS.get(fw), alpha=0.2)
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
    runtimes = list(table.runtime.unique())
    width = 0.8 / len(runtimes)
    for i, rt in enumerate(runtimes):
        sub = pd.DataFrame({"batch_size": batches}).merge(table[table.runtime == rt], how="left")
        x = np.arange(len(batches)) + (i - (len(runtimes) - 1) / 2) * width
        med = sub["median"].to_numpy(dtype=float)
        err = [np.nan_to_num(med - sub.q1.to_numpy(dtype=float)), np.nan_to_num(sub.q3.to_numpy(dtype=float) - med)]
        ax.bar(x, med, width, yerr=err, capsize=3, label=rt, color=ARM_COLORS.get(rt, "gray"), alpha=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(batches)), labels=[f"batch {b}" for b in batches])
    ax.set_ylabel("latency per call (ms, median, IQR)")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig
