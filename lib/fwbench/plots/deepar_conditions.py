"""How threads and a busy machine move each framework's DeepAR cost per batch (the contention part)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import matplotlib.ticker as ticker
import numpy as np
import pandas as pd

from ..analysis.deepar import STUDY, framework_names, reference_arms
from ..analysis.deepar_prediction import sides
from . import NothingToDraw, arm_style, legend_outside


def conditions_figure(table: pd.DataFrame):
    """Per dataset (one panel each): each framework's slowdown against its own baseline per condition, with the
    95 % CI over independent trials; the MXNet / PyTorch ratio under each condition written above it."""
    if table.empty:
        raise NothingToDraw("no contention trials stored yet (the paper profile's contention part has not run).")
    datasets = list(dict.fromkeys(table.dataset))
    fig, axes = plt.subplots(1, len(datasets), figsize=(5 * len(datasets), 4.5), sharey=True, squeeze=False)
    for ax, dataset in zip(axes[0], datasets):
        part = table[table.dataset == dataset].reset_index(drop=True)
        x = np.arange(len(part))
        for k, (arm, side, name) in enumerate(zip(reference_arms(), sides(), framework_names())):
            y = part[f"{side}_slowdown"].to_numpy(float)
            low, high = part[f"{side}_slowdown_low"].to_numpy(float), part[f"{side}_slowdown_high"].to_numpy(float)
            err = np.vstack([y - np.where(np.isnan(low), y, low), np.where(np.isnan(high), y, high) - y])
            ax.errorbar(x + (k - 0.5) * 0.2, y, yerr=err, fmt="o", capsize=3, label=name,
                        color=arm_style(STUDY, arm)["color"])  # fmt: skip
        top = ax.get_xaxis_transform()  # x in data, y in axes: the ratios in one row above the points
        for i, r in part.iterrows():
            ax.text(i, 0.97, f"{r.ratio:.2f}", transform=top, ha="center", va="top", fontsize=8)
        ax.text(-0.4, 1.01, "MXNet / PyTorch under each condition:", transform=top, fontsize=7, va="bottom")
        ax.axhline(1, color="grey", lw=1)
        ax.set_yscale("log")
        ax.set_ylim(0.7, 14)
        ax.set_yticks([1, 2, 4, 8])
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}x"))
        ax.yaxis.set_minor_formatter(ticker.NullFormatter())
        ax.set_xticks(x)
        ax.set_xticklabels([c.replace(" (", "\n(") for c in part.condition], fontsize=7, rotation=30, ha="right")
        ax.set_title(f"{dataset} (window {int(part.window.iloc[0])})", pad=14)
        ax.grid(alpha=0.3, which="both", axis="y")
    axes[0][0].set_ylabel("time per batch / the same framework's at the baseline")
    legend_outside(axes[0][-1], title="framework")
    fig.tight_layout()
    return fig
