"""Figures of the DeepAR / Monash study (from ``fwbench.analysis.deepar`` tables)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..analysis.deepar import ARM_LABELS, ARM_ORDER, breakdown_table, ratio_table, runtime_table

ARM_COLORS = {"torch": "#1f77b4", "mxnet": "#d62728", "mxnet-imperative": "#ff7f0e"}


def runtime_figure(trials: pd.DataFrame, metric: str = "total_time_s"):
    """Per-dataset runtime of each arm (median over seeds), datasets sorted by the MXNet time, like the post's
    chart; log scale, since datasets differ by orders of magnitude."""
    table = runtime_table(trials)
    wide = table.pivot(index="dataset", columns="arm", values=metric)
    arms = [a for a in ARM_ORDER if a in wide.columns]
    key = "mxnet" if "mxnet" in wide.columns else arms[0]
    wide = wide.sort_values(key)
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(wide) + 1.6))
    y = np.arange(len(wide))
    height = 0.8 / len(arms)
    for i, arm in enumerate(arms):
        ax.barh(y + (i - (len(arms) - 1) / 2) * height, wide[arm].to_numpy(float), height=height,
                color=ARM_COLORS[arm], label=ARM_LABELS[arm])
    ax.set_yticks(y, labels=list(wide.index))
    ax.set_xscale("log")
    what = {"total_time_s": "training + forecasting", "train_time_s": "training",
            "predict_time_s": "forecasting"}[metric]
    ax.set_xlabel(f"{what} time per trial (s, log scale; median over seeds)")
    ax.grid(axis="x", alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def ratio_figure(trials: pd.DataFrame):
    """MXNet / PyTorch total-time ratio per dataset with its bootstrap 95 % CI over seeds (no bar with one
    seed); 1 = parity, the post's 4.46x dashed."""
    ratios = ratio_table(trials).sort_values("ratio")
    fig, ax = plt.subplots(figsize=(6.5, 0.4 * len(ratios) + 1.6))
    y = np.arange(len(ratios))
    r = ratios.ratio.to_numpy(float)
    lo = np.nan_to_num(r - ratios.ci_low.to_numpy(float), nan=0.0)
    hi = np.nan_to_num(ratios.ci_high.to_numpy(float) - r, nan=0.0)
    ax.errorbar(r, y, xerr=[lo, hi], fmt="o", color=ARM_COLORS["mxnet"], capsize=3)
    ax.axvline(1.0, color="grey", lw=1)
    ax.axvline(395_807 / 88_756, color="black", lw=1, ls="--", label="2024 post (totals)")
    ax.set_yticks(y, labels=list(ratios.dataset))
    ax.set_xlabel("MXNet / PyTorch time (training + forecasting)")
    ax.legend(fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def breakdown_figure(trials: pd.DataFrame):
    """Training time split into data pipeline, network steps and setup, plus forecasting; one bar per
    dataset x arm (medians over seeds)."""
    table = breakdown_table(trials)
    if table.empty:
        fig, ax = plt.subplots(figsize=(5, 1.5))
        ax.text(0.5, 0.5, "no trial with a time breakdown", ha="center", va="center")
        ax.axis("off")
        return fig
    table = table.assign(order=table.arm.map({a: i for i, a in enumerate(ARM_ORDER)}))
    table = table.sort_values(["dataset", "order"])
    labels = [f"{d} / {ARM_LABELS[a]}" for d, a in zip(table.dataset, table.arm)]
    parts = [("data_time_s", "data pipeline", "#2ca02c"), ("network_step_s", "network steps", "#9467bd"),
             ("fit_overhead_s", "setup outside epochs", "#8c564b"), ("predict_time_s", "forecasting", "#7f7f7f")]
    fig, ax = plt.subplots(figsize=(7.5, 0.4 * len(table) + 1.6))
    y = np.arange(len(table))
    left = np.zeros(len(table))
    for col, label, color in parts:
        v = table[col].to_numpy(float)
        ax.barh(y, v, left=left, color=color, label=label)
        left += v
    ax.set_yticks(y, labels=labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("seconds per trial (median over seeds)")
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig
