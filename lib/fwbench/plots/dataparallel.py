"""Figures of the data-parallel study (claim C2's CPU analogue), from ``fwbench.analysis.dataparallel``'s
per-trial table; colours and labels from the study's arm table."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import NullLocator

from ..analysis import arm_order
from ..analysis.dataparallel import STUDY, SYNC_PREFIX, sync_sizes
from . import NothingToDraw, arm_style, legend_outside, wrap


def dataparallel_figure(frame: pd.DataFrame):
    """Left: samples/s against the world size per arm, every trial a dot, the median of the trials as the line.
    Right: seconds of one sync (all-reduce, or push + pull) against the values synced, per arm (solid: the largest
    world size, dotted: 1 worker), the median over trials, the trials' range as a band."""
    if frame.empty:
        raise NothingToDraw("no data-parallel trial of this profile has finished, so there is no rate to show.")
    fig, (rate, sync) = plt.subplots(1, 2, figsize=(10.5, 3.8))
    worlds = sorted(set(frame.world_size))
    arms = arm_order(STUDY, frame.arm)
    sizes = sync_sizes(frame)
    for k, arm in enumerate(arms):
        look = arm_style(STUDY, arm)
        f = frame[frame.arm == arm]
        offset = (k - (len(arms) - 1) / 2) * 0.06  # the arms' dots side by side at each world size
        rate.scatter(f.world_size + offset, f.samples_per_s, color=look["color"], s=14, alpha=0.6)
        med = f.groupby("world_size").samples_per_s.median()
        rate.plot(med.index, med.values, "-o", color=look["color"], label=wrap(look["label"], 30))
        for world in (worlds[0], worlds[-1]) if len(worlds) > 1 else worlds:
            g = f[f.world_size == world]
            values = [g[f"{SYNC_PREFIX}{n}"] for n in sizes]
            style = "-" if world == worlds[-1] else ":"
            sync.plot(sizes, [1000 * v.median() for v in values], style, marker="o", color=look["color"])
            low, high = [1000 * v.min() for v in values], [1000 * v.max() for v in values]
            sync.fill_between(sizes, low, high, color=look["color"], alpha=0.15)
    rate.set_xticks(worlds)
    rate.set_xlabel("workers (1 thread each)")
    rate.set_ylabel("samples/s (all workers)")
    rate.set_ylim(bottom=0)
    rate.grid(alpha=0.3)
    n_trials = frame.groupby(["arm", "world_size"]).trial_id.count()
    low, high = int(n_trials.min()), int(n_trials.max())
    rate.set_title(f"training rate (dots: trials, n={low if low == high else f'{low}-{high}'} per point)", fontsize=9)
    sync.set_xscale("log", base=2)
    sync.set_yscale("log")
    sync.set_xticks(sizes, labels=[f"2^{int(np.log2(n))}" if n & (n - 1) == 0 else f"{n:,}" for n in sizes])
    sync.xaxis.set_minor_locator(NullLocator())
    sync.set_xlabel("float32 values synced")
    sync.set_ylabel("ms per sync (slowest worker)")
    sync.grid(alpha=0.3)
    label = f"solid: {worlds[-1]} workers, dotted: {worlds[0]}" if len(worlds) > 1 else f"{worlds[0]} worker(s)"
    sync.set_title(f"sync cost ({label}; band: range of trials)", fontsize=9)
    legend_outside(sync, *rate.get_legend_handles_labels(), title="arm")
    fig.tight_layout()
    return fig
