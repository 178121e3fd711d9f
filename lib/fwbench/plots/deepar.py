"""Figures of the DeepAR / Monash study (from ``fwbench.analysis.deepar`` tables); colours and legend labels from
the arm table, "MXNet" and "PyTorch" are the study's reference arms. Each trial is one fresh process (one dataset x
arm x seed), so "over seeds" is over independent trials; the legends give that n."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from ..analysis import arm_order
from ..analysis.deepar import (
    STUDY,
    breakdown_table,
    ratio_table,
    reference_arms,
    runtime_table,
    window_ratio_table,
    window_trend,
)
from ..published.deepar2024 import post_ratio
from . import NothingToDraw, arm_style, ci_method, legend_outside, wrap

_WHAT = {"total_time_s": "training + forecasting", "train_time_s": "training", "predict_time_s": "forecasting"}


def _seeds(trials: pd.DataFrame, arm: str | None = None) -> str:
    """ "n=k seeds": the independent trials behind a bar (per dataset; the fewest when datasets differ)."""
    sub = trials if arm is None else trials[trials.arm == arm]
    counts = sub.groupby(["dataset", "arm"]).seed.nunique()
    low, high = (int(counts.min()), int(counts.max())) if len(counts) else (0, 0)
    return f"n={low} seed{'s' if high > 1 else ''}" if low == high else f"n={low}-{high} seeds"


def _none_finished(trials: pd.DataFrame, column: str) -> bool:
    return trials.empty or column not in trials or trials[column].notna().sum() == 0


def _log_steps(axis) -> None:
    """Log-scale ticks in 1-2-5 steps, labelled plainly: several labels per decade, never one per crowded value."""
    axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axis.set_minor_formatter(NullFormatter())


def _ci_err(table: pd.DataFrame, prefix: str = "") -> tuple[np.ndarray, list[np.ndarray]]:
    """The ratios ``{prefix}ratio`` and their error bars to the CI (none where it is NaN)."""
    r, low, high = (table[f"{prefix}{c}"].to_numpy(float) for c in ("ratio", "ci_low", "ci_high"))
    return r, [np.nan_to_num(r - low, nan=0.0), np.nan_to_num(high - r, nan=0.0)]


def runtime_figure(trials: pd.DataFrame, metric: str = "total_time_s"):
    """Per-dataset runtime of each arm (median over seeds), datasets sorted by the MXNet time, like the post's
    chart; log scale, since datasets differ by orders of magnitude."""
    if _none_finished(trials, metric):
        raise NothingToDraw("no DeepAR trial of this profile has finished, so there is no runtime to show.")
    table = runtime_table(trials)
    wide = table.pivot(index="dataset", columns="arm", values=metric)
    arms = arm_order(STUDY, wide.columns)
    mx = reference_arms()[0]
    key = mx if mx in wide.columns else arms[0]
    wide = wide.sort_values(key)
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(wide) + 1.6))
    y = np.arange(len(wide))
    height = 0.8 / len(arms)
    for i, arm in enumerate(arms):
        look, offset = arm_style(STUDY, arm), (i - (len(arms) - 1) / 2) * height
        label = wrap(f"{look['label']} ({_seeds(trials, arm)})", 34)
        ax.barh(y + offset, wide[arm].to_numpy(float), height=height, color=look["color"], label=label)
    ax.set_yticks(y, labels=list(wide.index))
    ax.set_ylabel("Monash dataset")
    ax.set_xscale("log")
    _log_steps(ax.xaxis)
    ax.set_xlabel(f"{_WHAT[metric]} time per trial (s, log scale; median over seeds)")
    ax.grid(axis="x", alpha=0.3, which="both")
    legend_outside(ax, title="arm (bar: median over n seeds)")
    fig.tight_layout()
    return fig


def ratio_figure(trials: pd.DataFrame, metric: str = "train_time_s"):
    """MXNet / PyTorch time ratio per dataset (training by default, the post's measure) with its 95 % CI over
    seeds, one trial each (no bar with one seed); 1 = parity, the post's ratio of training totals (4.46x) dashed."""
    ratios = ratio_table(trials, metric=metric) if not _none_finished(trials, metric) else pd.DataFrame()
    if ratios.empty or ratios.ratio.notna().sum() == 0:
        raise NothingToDraw("no dataset was finished by both MXNet and PyTorch, so there is no ratio to show.")
    ratios = ratios.sort_values("ratio")
    fig, ax = plt.subplots(figsize=(8.5, 0.4 * len(ratios) + 1.8))
    y = np.arange(len(ratios))
    r, err = _ci_err(ratios)
    color = arm_style(STUDY, reference_arms()[0])["color"]
    label = wrap(f"geometric-mean ratio, 95 % CI ({ci_method(ratios)}) over seeds ({_seeds(trials)} per arm)", 30)
    ax.errorbar(r, y, xerr=err, fmt="o", color=color, capsize=3, label=label)
    ax.axvline(1.0, color="grey", lw=1, label="parity (1)")
    ax.axvline(post_ratio(), color="black", lw=1, ls="--", label=wrap("2024 post (total training time)", 30))
    ax.set_yticks(y, labels=list(ratios.dataset))
    ax.set_ylabel("Monash dataset")
    ax.set_xlabel(f"MXNet / PyTorch {_WHAT[metric]} time (ratio; >1: MXNet slower)")
    legend_outside(ax)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def breakdown_figure(trials: pd.DataFrame):
    """Training time split into data pipeline, network steps and setup, plus forecasting; one bar per
    dataset x arm (medians over seeds)."""
    table = breakdown_table(trials)
    if table.empty:
        raise NothingToDraw(
            "no DeepAR trial of this profile ran with the time breakdown (the `gap` profile "
            "does), so there is no split of the training time to show."
        )
    table = table.assign(order=table.arm.map({a: i for i, a in enumerate(arm_order(STUDY, table.arm))}))
    table = table.sort_values(["dataset", "order"])
    labels = [wrap(f"{d} / {arm_style(STUDY, a)['label']}", 40) for d, a in zip(table.dataset, table.arm)]
    parts = [
        ("data_time_s", "data pipeline", "#2ca02c"),
        ("network_step_s", "network steps", "#9467bd"),
        ("fit_overhead_s", "setup outside epochs", "#8c564b"),
        ("predict_time_s", "forecasting", "#7f7f7f"),
    ]
    fig, ax = plt.subplots(figsize=(7.5, 0.55 * len(table) + 1.6))
    y = np.arange(len(table))
    left = np.zeros(len(table))
    for col, label, color in parts:
        v = table[col].to_numpy(float)
        ax.barh(y, v, left=left, color=color, label=label)
        left += v
    ax.set_yticks(y, labels=labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_ylabel("Monash dataset / arm")
    ax.set_xlabel(f"seconds per trial (median over seeds; {_seeds(trials[trials.data_time_s.notna()])})")
    legend_outside(ax, title="part of the time")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def window_figure(trials: pd.DataFrame):
    """MXNet / PyTorch per dataset against the unrolled window (context + prediction length, log scale):
    training time (filled, the post's measure) and training + forecasting (hollow), 95 % CIs over
    seeds; 1 = parity, the post's ratio of training totals dashed."""
    table = window_ratio_table(trials) if not _none_finished(trials, "train_time_s") else pd.DataFrame()
    if table.empty:
        raise NothingToDraw("no dataset was finished by both MXNet and PyTorch, so there is no ratio to show.")
    fig, ax = plt.subplots(figsize=(9, 4.5))
    color = arm_style(STUDY, reference_arms()[0])["color"]
    x = table.window.to_numpy(float)
    for name, face, shift in (("train", color, 0.97), ("total", "white", 1.03)):
        r, err = _ci_err(table, f"{name}_")
        rho = window_trend(table, f"{name}_ratio")
        label = _WHAT[f"{name}_time_s"] + ("" if np.isnan(rho) else f" (Spearman {rho:.2f})")
        label = wrap(f"{label}, 95 % CI over seeds ({_seeds(trials)} per arm)", 32)
        ax.errorbar(x * shift, r, yerr=err, fmt="o", mfc=face, mec=color, color=color, capsize=3, label=label)
    # neighbouring windows can be close: their names alternate above and below the points
    for k, (dataset, window, ratio) in enumerate(zip(table.dataset, x, table.train_ratio)):
        ax.annotate(
            dataset, (window, ratio), textcoords="offset points", fontsize=7, xytext=(6, 6) if k % 2 == 0 else (6, -12)
        )
    ax.axhline(1.0, color="grey", lw=1, label="parity (1)")
    ax.axhline(post_ratio(), color="black", lw=1, ls="--", label=wrap("2024 post (total training time)", 32))
    ax.set_xscale("log")
    ax.set_xlim(x.min() / 1.5, x.max() * 1.5)  # room for the labels, and a sane axis with one window
    _log_steps(ax.xaxis)
    ax.set_xlabel("unrolled window: context + prediction length (steps, log scale)")
    ax.set_ylabel("MXNet / PyTorch time\n(ratio; >1: MXNet slower)")
    legend_outside(ax, title="MXNet / PyTorch")
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return fig
