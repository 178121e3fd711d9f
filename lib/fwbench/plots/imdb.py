"""Figures of the IMDB sweep (from ``fwbench.analysis.imdb`` tables); colours and legend labels from the arm table."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..analysis.imdb import SETTING, STUDY, epoch_time_table, ratio_table, scaling_table
from . import arm_style


def epoch_time_figure(frame: pd.DataFrame):
    """Median time per 25k-review epoch (IQR bars) by batch size, one panel per worker count, one line per arm."""
    table = epoch_time_table(frame)
    workers = sorted(table.num_workers.unique())
    fig, axes = plt.subplots(1, len(workers), figsize=(4.2 * len(workers) + 3.2, 3.6), sharey=True, squeeze=False)
    for ax, w in zip(axes[0], workers):
        sub = table[table.num_workers == w]
        for (arm, lifetime, onednn), g in sub.groupby(["arm", "worker_lifetime", "onednn"], observed=True):
            g = g.sort_values("batch_size")
            med, q1, q3 = (g[c].to_numpy(dtype=float) for c in ("median", "q1", "q3"))
            persistent = bool(w) and lifetime == "persistent"
            look = arm_style(STUDY, arm)
            look["label"] += (" [persistent workers]" if persistent else "") + ("" if onednn else " [oneDNN off]")
            style, marker = ("--", "s") if persistent else ((":", "x") if not onednn else ("-", "o"))
            ax.errorbar(
                g.batch_size.to_numpy(), med, yerr=[med - q1, q3 - med], marker=marker, ls=style, capsize=3, **look
            )
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(table.batch_size.unique()), labels=[str(b) for b in sorted(table.batch_size.unique())])
        ax.set_title(f"{w} data-loader workers")
        ax.set_xlabel("batch size")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("training time per 25k-review epoch (s)\nmedian, IQR bars; first epoch excluded")
    fig.suptitle(
        "dashed, squares: persistent data-loader workers; solid, circles: workers started every epoch", fontsize=8
    )
    handles = {}
    for ax in axes[0]:  # extra arms may appear in one panel only: collect every arm once
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    axes[0][-1].legend(
        handles.values(), handles.keys(), title="arm", fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1)
    )
    fig.tight_layout()
    return fig


def ratio_figure(frame: pd.DataFrame):
    """MXNet / PyTorch epoch-time ratio per setting with 95 % CIs over independent trials (each trial the median
    of its timed epochs; ``analysis.imdb.ratio_table``); 1 = parity. The title says over how many trials."""
    ratios = ratio_table(frame)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    if ratios.empty:
        ax.text(0.5, 0.5, "no pairs of arms to compare", ha="center", va="center", transform=ax.transAxes)
        return fig
    keys = SETTING[1:]
    settings = ratios[keys].drop_duplicates().sort_values(["num_workers", "worker_lifetime", "batch_size"])
    labels = [
        f"b{b}/w{w}" + ("p" if w and life == "persistent" else "") + ("" if flag else " no-oneDNN")
        for b, w, life, flag in settings.itertuples(index=False)
    ]
    x = np.arange(len(labels))
    pairs = list(ratios[["numerator", "denominator"]].drop_duplicates().itertuples(index=False))
    width = 0.8 / len(pairs)
    for i, (num, den) in enumerate(pairs):
        sub = settings.merge(ratios[(ratios.numerator == num) & (ratios.denominator == den)], on=keys, how="left")
        low = (sub.ratio - sub.ci_low).fillna(0).clip(lower=0).to_numpy(dtype=float)
        high = (sub.ci_high - sub.ratio).fillna(0).clip(lower=0).to_numpy(dtype=float)
        offset = (i - (len(pairs) - 1) / 2) * width
        label = f"{arm_style(STUDY, num)['label']} / {arm_style(STUDY, den)['label']}"
        look = {"label": label, "color": arm_style(STUDY, den)["color"], "alpha": 0.8}
        ax.bar(x + offset, sub.ratio.to_numpy(dtype=float), width, yerr=[low, high], capsize=3, **look)
    ax.axhline(1.0, color="black", lw=1)
    ax.set_xticks(x, labels=labels)
    ax.set_xlabel("setting (batch size / data-loader workers; p: persistent workers)")
    ax.set_ylabel("epoch-time ratio (>1: MXNet slower)")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    counts = pd.concat([ratios.n_num, ratios.n_den])
    trials = f"{counts.min()}" if counts.min() == counts.max() else f"{counts.min()}-{counts.max()}"
    ax.set_title(f"95 % CI over independent trials (n = {trials} a side)", fontsize=9)
    fig.tight_layout()
    return fig


def scaling_figure(frame: pd.DataFrame, gemm_peak: dict | None = None):
    """Epoch time against sequence length (one line per arm and thread count) and, where a GEMM peak was
    measured, the achieved fraction of it."""
    table = scaling_table(frame, gemm_peak)
    has_peak = "fraction_of_peak" in table and table.fraction_of_peak.notna().any()
    fig, axes = plt.subplots(1, 2 if has_peak else 1, figsize=(10 if has_peak else 5.5, 3.6), squeeze=False)
    for (arm, threads), g in table.groupby(["arm", "threads"]):
        g = g.sort_values("seq_len")
        style = "-" if threads == table.threads.max() else "--"
        look = arm_style(STUDY, arm)
        look["label"] = f"{look['label']}, {threads} thread(s)"
        axes[0][0].plot(g.seq_len, g["median"], style, marker="o", **look)
        if has_peak:
            axes[0][1].plot(g.seq_len, 100 * g.fraction_of_peak, style, marker="o", **look)
    for ax in axes[0]:
        ax.set_xlabel("sequence length (tokens)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("training time per epoch (s), median")
    axes[0][0].legend(fontsize=8)
    if has_peak:
        axes[0][1].set_ylabel("achieved % of the framework's fp32 GEMM peak")
    fig.tight_layout()
    return fig
