"""Convergence figures: one line per arm (the median over seeds) with a band (min-max over seeds, IQR darker),
in the arm's colour and with its label from the study's arm table."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import MaxNLocator

from ..analysis import arm_order
from ..analysis import convergence as conv
from . import arm_style


def _band(ax, b: pd.DataFrame, x: str, label: str, color: str) -> None:
    b = b.sort_values("epoch")
    ax.fill_between(b[x], b["lo"], b["hi"], color=color, alpha=0.15, linewidth=0)
    ax.fill_between(b[x], b["q1"], b["q3"], color=color, alpha=0.25, linewidth=0)
    ax.plot(b[x], b["median"], color=color, label=label, marker="o" if len(b) < 8 else None, markersize=3)


def _grid(nrows: int, ncols: int, width: float = 4.2, height: float = 2.9):
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False,
                             constrained_layout=True)
    return fig, axes


def imdb_metric_figure(frame: pd.DataFrame, metrics: tuple[str, ...], x: str = "epoch", settings=None):
    """Rows: settings; columns: ``metrics``; a band per arm. ``x``: ``epoch`` or ``wall_s``."""
    settings = settings if settings is not None else conv.curve_settings(frame)[0]
    fig, axes = _grid(max(len(settings), 1), len(metrics))
    if not settings:
        axes[0, 0].text(0.5, 0.5, "no IMDB trials in the store", ha="center", va="center",
                        transform=axes[0, 0].transAxes)
        return fig
    for i, setting in enumerate(settings):
        sub = frame[frame.setting == setting]
        for j, metric in enumerate(metrics):
            ax = axes[i, j]
            b = conv.bands(sub, metric, x=x)
            if b.empty:
                ax.text(0.5, 0.5, f"no {metric} rows", ha="center", va="center", transform=ax.transAxes)
            for arm in arm_order("imdb", sub.arm) if not b.empty else []:
                _band(ax, b[b.arm == arm], x, **arm_style("imdb", arm))
            ax.set_title(f"{metric.replace('_', ' ')}\n{setting}", fontsize=9)
            ax.set_xlabel("epoch (0 = first)" if x == "epoch" else "cumulative training seconds")
            if x == "epoch":
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.grid(alpha=0.3)
    if axes[0, -1].get_legend_handles_labels()[0]:
        axes[0, -1].legend(fontsize=8, title=f"arm (band: seeds, n={int(frame.seed.nunique())})", title_fontsize=8)
    return fig


def imdb_loss_figure(frame: pd.DataFrame, settings=None):
    return imdb_metric_figure(frame, ("train_loss", "test_loss"), settings=settings)


def imdb_accuracy_figure(frame: pd.DataFrame, settings=None):
    return imdb_metric_figure(frame, ("test_acc",), settings=settings)


def imdb_wallclock_figure(frame: pd.DataFrame, settings=None):
    return imdb_metric_figure(frame, ("train_loss",), x="wall_s", settings=settings)


def deepar_loss_figure(frame: pd.DataFrame):
    """One panel per dataset: DeepAR training loss per epoch, a band per arm."""
    datasets = sorted(set(frame.dataset)) if not frame.empty else []
    ncols = min(max(len(datasets), 1), 2)
    nrows = max((len(datasets) + 1) // 2, 1)
    fig, axes = _grid(nrows, ncols)
    if not datasets:
        axes[0, 0].text(0.5, 0.5, "no DeepAR rows in the store", ha="center", va="center",
                        transform=axes[0, 0].transAxes)
        return fig
    for k, ds in enumerate(datasets):
        ax = axes[k // ncols, k % ncols]
        sub = frame[frame.dataset == ds]
        b = conv.bands(sub, "train_loss", by=("arm",))
        for arm in arm_order("deepar", sub.arm):
            _band(ax, b[b.arm == arm], "epoch", **arm_style("deepar", arm))
        ax.set_title(f"DeepAR {ds}", fontsize=9)
        ax.set_xlabel("epoch (0 = first)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel("training loss (NLL)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    for k in range(len(datasets), nrows * ncols):
        axes[k // ncols, k % ncols].set_visible(False)
    return fig


def show(paths) -> None:
    """Display the saved PNG inline: works under any matplotlib backend (``MPLBACKEND=agg`` in headless papermill
    runs shows no figure by itself), and the rendered HTML embeds it as base64."""
    from IPython.display import Image, display

    for path in paths:
        if str(path).endswith(".png"):
            display(Image(filename=str(path)))
