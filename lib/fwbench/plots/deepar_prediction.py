"""The 2024 post's per-dataset totals predicted from the coverage part, against the values read off its chart."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..analysis.deepar import STUDY, framework_names, reference_arms, unrolled_window
from ..analysis.deepar_prediction import sides
from ..pages import render_markdown
from ..published.deepar2024 import CHART_GIVEN, post_ratio
from . import NothingToDraw, arm_style, legend_outside


def prediction_figure(merged: pd.DataFrame):
    """Predicted against published total per dataset and framework (log axes), the identity line, and each point's
    predicted / published factor; measured datasets filled, modelled (window line) hollow."""
    if merged.empty:
        raise NothingToDraw(
            "no dataset of the post's chart has a prediction yet (the coverage part has not run), so there is no "
            "point to show."
        )
    fig, ax = plt.subplots(figsize=(8, 6))
    for arm, side, name in zip(reference_arms(), sides(), framework_names()):
        color = arm_style(STUDY, arm)["color"]
        for measured, face in ((True, color), (False, "white")):
            part = merged[merged.measured == measured]
            if part.empty:
                continue
            published, predicted = part[f"post_{side}_s"], part[f"predicted_post_{side}_s"]
            label = f"{name}, {'measured here' if measured else 'modelled (window line)'}"
            ax.scatter(published, predicted, facecolor=face, edgecolor=color, label=label)
            for _, r in part.iterrows():
                xy = (r[f"post_{side}_s"], r[f"predicted_post_{side}_s"])
                text = f"{r.dataset} {r[f'predicted_over_post_{side}']:.2f}x"
                ax.annotate(text, xy, textcoords="offset points", xytext=(4, 3), fontsize=6, color=color)
    columns = ["post_mxnet_s", "post_pytorch_s", "predicted_post_mxnet_s", "predicted_post_pytorch_s"]
    values = merged[columns].to_numpy(float).ravel()
    values = values[np.isfinite(values) & (values > 0)]
    lo, hi = values.min() / 1.5, values.max() * 1.5
    ax.plot([lo, hi], [lo, hi], color="grey", lw=1, label="identity: predicted = published")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("the post's total training seconds per dataset (read off its chart, 5 seeds x 100 x 50)")
    ax.set_ylabel("predicted from this CPU's per-batch cost (s)")
    legend_outside(ax, title="framework")
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return fig


def conditions_figure(post: dict, published: pd.DataFrame):
    """MXNet / PyTorch per dataset against the window (log x): the post's ratios on the chart's given datasets
    (black), each measured condition's prediction over the post's whole list (the chosen one bold); a dataset whose
    chart value this study was given is a filled marker, one it was not (predicted only) a hollow one."""
    tables = post["tables"]
    if not tables:
        raise NothingToDraw("no condition of the post's runs is measured yet (the coverage part has not run).")
    given = set(CHART_GIVEN)
    fig, ax = plt.subplots(figsize=(9, 5.5))
    shown = published[published.dataset.isin(given)]
    window = unrolled_window(shown.context_length, shown.prediction_length)
    ax.scatter(window, shown.post_mxnet_s / shown.post_pytorch_s, color="black", marker="*", s=70, zorder=5,
               label="the post's chart (given datasets)")  # fmt: skip
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (key, table) in enumerate(sorted(tables.items())):
        t = table.sort_values("window", kind="stable")
        chosen = key == post["chosen"]
        color = colors[i % len(colors)]
        label = render_markdown("prediction_condition", c=post["conditions"][key]) + (" (best fit)" if chosen else "")
        ax.plot(t.window, t.predicted_post_ratio, color=color, lw=2.5 if chosen else 0.8, alpha=1 if chosen else 0.6,
                label=label)  # fmt: skip
        on_chart = t.dataset.isin(given)
        ax.scatter(t.window[on_chart], t.predicted_post_ratio[on_chart], color=color, s=18 if chosen else 8)
        ax.scatter(t.window[~on_chart], t.predicted_post_ratio[~on_chart], facecolor="white", edgecolor=color,
                   s=18 if chosen else 8)  # fmt: skip
    ax.axhline(post_ratio(), color="grey", ls="--", lw=1, label=f"the post's totals, {post_ratio():.3g}")
    ax.set_xscale("log")
    ax.set_xlabel("window (context + prediction steps, log scale)")
    ax.set_ylabel("MXNet / PyTorch training time per dataset")
    ax.set_title("filled: datasets whose chart value was given; hollow: predicted only", fontsize=9)
    legend_outside(ax, title="condition")
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return fig
